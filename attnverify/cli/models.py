"""Model files on the command line (docs/models.md): a ``FILE.toml`` is accepted wherever a paper's model name is
(``run FILE.toml``, ``list FILE.toml``, ``list --quantities FILE.toml``, ``derive FILE.toml``), and ``--model FILE``
adds a model file's paper to the registered ones for any command (``audit``, ``latex``, ``selftest``).

Each file is read and validated before any work (attnverify.checks.engine.add_model): a bad file is one line, exit
code 2. Its paper then stands beside the built-in ones for the rest of the command, under the file's ``id``.
"""
from __future__ import annotations

import argparse


def add_model_option(p: argparse.ArgumentParser) -> None:
    """``--model FILE.toml`` (repeatable) on the sub-command ``p``."""
    p.add_argument("--model", dest="model_files", action="append", default=[], metavar="FILE.toml",
                   help="a model file (docs/models.md): its paper, checks and quantities join the built-in ones")


def is_model_file(text: str) -> bool:
    """Whether a command-line word names a model file rather than a check id or a model name."""
    return isinstance(text, str) and text.lower().endswith(".toml")


def load_models(args: argparse.Namespace) -> list[str]:
    """Register every model file the command names (``--model`` and the ``FILE.toml`` words among its ids or its
    ``derive`` model), replacing each such word by the model's name; returns the names of the models added. The
    files' paths are kept in ``args.model_sources`` (a cache of the command's output must hash their bytes)."""
    sources = list(getattr(args, "model_files", None) or [])
    sources += [w for w in getattr(args, "ids", None) or [] if is_model_file(w)]
    if args.command == "derive" and is_model_file(args.model):
        sources.append(args.model)
    args.model_sources = sources
    if not sources:                     # nothing to read: no import of the engine (``list`` answers at once)
        return []
    from attnverify.checks.engine import add_model

    added = [add_model(f).model for f in getattr(args, "model_files", None) or []]
    if isinstance(getattr(args, "ids", None), list):
        ids = []
        for word in args.ids:
            if is_model_file(word):
                word = add_model(word).model
                added.append(word)
            ids.append(word)
        args.ids = ids
    if args.command == "derive" and is_model_file(args.model):
        args.model = add_model(args.model).model
        added.append(args.model)
    return added
