"""Output paths: validated before any work starts, written atomically.

A run can take minutes (hours with ``--profile paper``); an output path that cannot be written must be
refused before the first check runs, in one line, not found broken at the end. :func:`check_file` and
:func:`check_dir` raise :class:`~attnverify.checks.params.InputError` when a path is unusable:

- a file is due but the path is a directory (or the other way round);
- the path exists and ``force`` is not given (``--force`` overwrites), unless it is the partial report of a run
  that did not finish (``"complete": false``, written after each check and on Ctrl-C): rerunning the same command
  resumes that run and replaces it without ``--force``;
- the nearest existing ancestor is not a directory, or is not writable (missing parents are created
  when the output is written);
- writing there fails: each check ends by doing what the write will do -- creating a file in the directory (and
  a directory where parents are missing) and removing it again -- so a file system that refuses writes (``/proc``,
  a read-only mount, a full quota) is found before the run, not after it.

Files are written atomically (:func:`write_text`) with the permissions a plain ``open`` would give: 0666 minus the
user's umask for a new file, the old file's mode when one is replaced.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from attnverify.checks.params import InputError


def _nearest_existing(path: Path) -> Path:
    p = path
    while not p.exists() and p != p.parent:
        p = p.parent
    return p


def _check_parent(path: Path, flag: str, shown: Path | None = None) -> None:
    shown = path if shown is None else shown
    anc = _nearest_existing(path.parent)
    if not anc.is_dir():
        raise InputError(f"{flag}: cannot create {str(shown)!r}: {str(anc)!r} is a file, not a directory")
    if not os.access(anc, os.W_OK | os.X_OK):
        raise InputError(f"{flag}: cannot write into {str(anc)!r} (permission denied)")
    _probe(path, anc, flag, shown)


def _probe(path: Path, anc: Path, flag: str, shown: Path | None = None) -> None:
    """Create and remove what writing ``path`` will create in its nearest existing ancestor ``anc``: a temporary
    file (the atomic write's) when ``anc`` is the parent, else a directory; InputError naming ``shown`` (default
    ``path``) and the OS's reason."""
    try:
        if anc == path.parent or anc.resolve() == path.parent.resolve():
            fd, tmp = tempfile.mkstemp(dir=anc, prefix=f".{path.name}.", suffix=".probe")
            os.close(fd)
            os.unlink(tmp)
        else:
            os.rmdir(tempfile.mkdtemp(dir=anc, prefix=".attnverify-probe-"))
    except OSError as exc:
        shown = path if shown is None else shown
        raise InputError(f"{flag}: cannot write {str(shown)!r} ({exc.strerror or type(exc).__name__})") from None


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
        _probe(p / contents[0] if contents else p / "x", p, flag, p)
        return p
    _check_parent(p / "x", flag, p)
    return p


def umask() -> int:
    """The process's umask (from /proc/self/status where available: reading it there changes nothing)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def file_mode(path: str | os.PathLike) -> int:
    """The mode a file written at ``path`` gets: the existing file's, else 0666 minus the umask (as ``open``)."""
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        return 0o666 & ~umask()


def write_text(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` to ``path`` atomically (a temporary file in the same directory, then ``os.replace``),
    creating missing parent directories; a reader never sees a half-written file. The file gets :func:`file_mode`
    (a temporary file is created 0600; the final file must not be)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    mode = file_mode(p)
    fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            os.fchmod(fh.fileno(), mode)
        os.replace(tmp, p)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
