"""Output paths: validated before any work starts, written atomically.

A run can take minutes (hours with ``--profile paper``); an output path that cannot be written must be
refused before the first check runs, in one line, not found broken at the end. :func:`check_file` and
:func:`check_dir` raise :class:`~attnverify.checks.framework.InputError` when a path is unusable:

- a file is due but the path is a directory (or the other way round);
- the path exists and ``force`` is not given (``--force`` overwrites), unless it is the partial report of a run
  that did not finish (``"complete": false``, written after each check and on Ctrl-C): rerunning the same command
  resumes that run and replaces it without ``--force``;
- the nearest existing ancestor is not a directory, or is not writable (missing parents are created
  when the output is written).
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from attnverify.checks.framework import InputError


def _nearest_existing(path: Path) -> Path:
    p = path
    while not p.exists() and p != p.parent:
        p = p.parent
    return p


def _check_parent(path: Path, flag: str) -> None:
    anc = _nearest_existing(path.parent)
    if not anc.is_dir():
        raise InputError(f"{flag}: cannot create {str(path)!r}: {str(anc)!r} is a file, not a directory")
    if not os.access(anc, os.W_OK | os.X_OK):
        raise InputError(f"{flag}: cannot write into {str(anc)!r} (permission denied)")


def is_partial_report(path: str | os.PathLike) -> bool:
    """True when ``path`` holds the JSON report of an unfinished run (``"complete": false``, with its checks)."""
    import json

    p = Path(path)
    try:
        if not p.is_file() or p.stat().st_size > 256 * 2**20:
            return False
        doc = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(doc, dict) and doc.get("complete") is False and isinstance(doc.get("checks"), list)


def check_file(path: str | os.PathLike, flag: str, *, force: bool = False) -> Path:
    """``path`` as a :class:`Path` if a file can be written there, else :class:`InputError` (one line)."""
    p = Path(path)
    if str(path).strip() == "":
        raise InputError(f"{flag}: empty path")
    if p.is_dir():
        raise InputError(f"{flag}: {str(p)!r} is a directory; give a file name")
    if p.exists() or p.is_symlink():
        if not force and not is_partial_report(p):
            raise InputError(f"{flag}: {str(p)!r} exists (use --force to overwrite it)")
        if not os.access(p, os.W_OK):
            raise InputError(f"{flag}: {str(p)!r} is not writable")
    _check_parent(p, flag)
    return p


def check_dir(path: str | os.PathLike, flag: str, *, force: bool = False,
              contents: tuple[str, ...] = ("report.json", "report.md"), hint: str = "--force") -> Path:
    """``path`` as a :class:`Path` if a directory of outputs (``contents``) can be written there."""
    p = Path(path)
    if str(path).strip() == "":
        raise InputError(f"{flag}: empty path")
    if p.exists() and not p.is_dir():
        raise InputError(f"{flag}: {str(p)!r} is a file, not a directory")
    if p.is_dir():
        if not os.access(p, os.W_OK | os.X_OK):
            raise InputError(f"{flag}: cannot write into {str(p)!r} (permission denied)")
        present = [name for name in contents if (p / name).exists()]
        if present and not force and not is_partial_report(p / "report.json"):
            raise InputError(f"{flag}: {str(p / present[0])!r} exists (use {hint} to overwrite it)")
        return p
    _check_parent(p / "x", flag)
    return p


def write_text(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` to ``path`` atomically (a temporary file in the same directory, then ``os.replace``),
    creating missing parent directories; a reader never sees a half-written file."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, p)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
