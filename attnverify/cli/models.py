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
    """Register every model file the command names (``--model``, the ``FILE.toml`` words among its ids or its
    ``derive`` model, and the model file an ``audit`` claims file names in its header), replacing each such word by
    the model's name; returns the names of the models added. Two different files with the same id are one line,
    exit 2 (attnverify.model_files.register_all). The files' paths are kept in ``args.model_sources`` (a cache of
    the command's output must hash their bytes)."""
    files = list(getattr(args, "model_files", None) or [])
    words = [w for w in getattr(args, "ids", None) or [] if is_model_file(w)]
    derived = [args.model] if args.command == "derive" and is_model_file(args.model) else []
    args.model_sources = files + words + derived
    header = _claims_model_file(args) if args.command == "audit" else []
    if not args.model_sources and not header:   # nothing to read: no import of the engine (``list`` answers at once)
        return []
    from attnverify.model_files import register_all

    names = register_all([*files, *words, *derived, *header])
    by_word = dict(zip(words, names[len(files):len(files) + len(words)]))
    if words:
        args.ids = [by_word.get(w, w) if is_model_file(w) else w for w in args.ids]
    if derived:
        args.model = names[len(files) + len(words)]
    return names[:len(names) - len(header)]


def _claims_model_file(args: argparse.Namespace) -> list[str]:
    """The model file named by the header (``model = "FILE.toml"``, relative to the claims file) of the claims file
    an ``audit`` judges, when it names one that exists; the claims reader reports every other case."""
    import tomllib
    from pathlib import Path

    path = Path(getattr(args, "file", "") or "")
    try:
        name = tomllib.loads(path.read_text(encoding="utf-8")).get("model")
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, AttributeError):
        return []
    target = path.parent / name if isinstance(name, str) and is_model_file(name) else None
    return [str(target)] if target is not None and target.is_file() else []
