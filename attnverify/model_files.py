"""A researcher's model file (TOML, docs/models.md) named in the Python API, as ``--model FILE`` names it on the
command line: ``attnverify.formula("two_signals.J_limit", model="two_signals.toml")``.

:func:`register` reads and validates the file before any work (:func:`attnverify.checks.engine.add_model`: one
:class:`~attnverify.checks.params.InputError` naming the file, the field and what is allowed) and makes it a paper
with its generated checks and quantities; registering the same content again returns the same paper.
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from attnverify.checks.params import InputError


def register(source: str | Path | Mapping[str, Any] | None) -> str | None:
    """The model name of the model file ``source`` (a path or a parsed mapping), registered as a paper; None for
    None. A path that is not a file is an InputError, before the engine is imported."""
    if source is None:
        return None
    if not isinstance(source, (str, Path, Mapping)):
        raise InputError(f"model: expected the path of a model file (.toml) or its parsed table, got {source!r}")
    if not isinstance(source, Mapping) and not Path(source).is_file():
        raise InputError(f"model: no model file {str(source)!r}")
    from attnverify.checks.engine import add_model

    return add_model(source).model


def register_all(sources: list[str | Path]) -> list[str]:
    """The model names of the model files ``sources`` that one command names, each registered (:func:`register`):
    two different files (different content) with the same model ``id`` are an InputError naming both and the id,
    whichever comes first (the later would silently replace the earlier). The same file, or the same content, twice
    is fine. (A later call that registers a changed file under the same id, as a notebook reloads its model, is a
    new command and replaces the paper.)"""
    from attnverify.checks.engine import add_model

    seen: dict[str, tuple[str, str]] = {}            # model id -> (file, digest)
    names = []
    for source in sources:
        paper = add_model(source)
        first = seen.setdefault(paper.model, (str(source), paper.digest))
        if first[1] != paper.digest:
            raise InputError(f"{first[0]} and {source}: two different model files with the same id "
                             f"{paper.model!r}: give each its own [model] id")
        names.append(paper.model)
    return names


def qualified(name: str, source: str | Path | Mapping[str, Any] | None) -> str:
    """``name`` (``model.quantity``) checked against the model file ``source``, registered first: the file must
    define the model the name qualifies by."""
    model = register(source)
    if model is not None and name.partition(".")[0] != model:
        raise InputError(f"{name!r}: the model file defines the model {model!r}; name its quantities "
                         f"{model}.<quantity>")
    return name
