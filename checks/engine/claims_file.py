r"""A claims file that names a model file: ``model = "two_signals.toml"`` at the top of a stated-claims file
(``attnverify audit claims.toml``), the path relative to the claims file. The model file's paper is registered
(:func:`attnverify.checks.engine.add_model`) and its id is the default ``model`` of every claim.
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from attnverify.checks.expression_reader import DecimalFloat
from attnverify.checks.params import InputError


def with_model_file(source: str | Path | Mapping[str, Any]) -> tuple[Any, str | None]:
    """(the claims document without its ``model`` key, the model file's id), or (the document, None) when it names
    no model file, or (``source``, None) when it cannot be read (the claims reader then says why,
    attnverify.checks.stated.read_toml); a ``model`` that is not a string ending in .toml: InputError naming the
    field."""
    try:
        import tomllib
    except ImportError:                 # Python 3.10
        import tomli as tomllib

    if isinstance(source, Mapping):
        doc, base, origin = source, Path.cwd(), "claims"
    else:
        try:
            # decimals as written, as the claims reader keeps them (attnverify.checks.stated.read_toml)
            doc = tomllib.loads(Path(source).read_text(encoding="utf-8"), parse_float=DecimalFloat)
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            return source, None
        base, origin = Path(source).parent, str(source)
    if not isinstance(doc, Mapping) or "model" not in doc:
        return doc, None
    name = doc["model"]
    if not isinstance(name, str) or not name.lower().endswith(".toml"):
        raise InputError(f"{origin}: field 'model': a model file (FILE.toml, relative to the claims file), got "
                         f"{name!r}")
    from attnverify.checks.engine import add_model

    paper = add_model(base / name)
    return {k: v for k, v in doc.items() if k != "model"}, paper.model
