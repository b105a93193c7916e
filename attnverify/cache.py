"""The derivation cache: where it lives, whether it may be trusted, and reading and writing its entries.

Derivations (SymPy objects: lists of ``Step``, expressions, matrices) are kept as pickles, and unpickling runs
whatever the file says, so an entry is loaded only from a directory that no other user can write -- the rule
ssh applies to ``~/.ssh`` (StrictModes). Trusted means: the cache root (symbolic links resolved), every directory
below it on the way to the entry, and the entry itself are owned by the current user (or root) and are not
writable by group or others; the entry is a regular file opened without following a link, and its owner and mode
are read from the open file. Anything else is not read, not written, and reported once on stderr.

Why not data (``srepr`` text parsed back)? Rebuilding SymPy objects from text means calling SymPy constructors,
and SymPy turns a string argument into an expression with ``eval``: a safe parser must whitelist every class
the derivations use and refuse strings everywhere but a few places, and stay right as the theory grows. The
ownership rule is a few lines, covers the text and JSON entries too (a planted LaTeX entry could inject
``\\input`` into a document), and also keeps out entries that would run no code but hold wrong formulas.

Where: ``$ATTNVERIFY_CACHE_DIR``, else ``$XDG_CACHE_HOME/attnverify``, else ``~/.cache/attnverify``; derivations
go to ``derivations/`` below it (``ATTNVERIFY_NO_CACHE=1``: no cache). Directories are created 0700, entries
0600. A cache that cannot be written only costs time: the value is computed again.
"""
from __future__ import annotations

import os
import pickle
import stat
import sys
import tempfile
from pathlib import Path
from typing import Any

ENV_DIR, ENV_OFF = "ATTNVERIFY_CACHE_DIR", "ATTNVERIFY_NO_CACHE"
SUBDIR = "derivations"
_warned: set[str] = set()


def disabled() -> bool:
    """True when ``ATTNVERIFY_NO_CACHE`` is set (to anything but '' or '0')."""
    return os.environ.get(ENV_OFF, "").strip() not in ("", "0")


def root() -> Path | None:
    """The cache root, or None when caching is switched off. Not checked (see :func:`trusted_root`)."""
    if disabled():
        return None
    if os.environ.get(ENV_DIR):
        return Path(os.environ[ENV_DIR])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "attnverify"


def warn_once(message: str) -> None:
    """One line on stderr, once per message per process."""
    if message not in _warned:
        _warned.add(message)
        print(f"attnverify: warning: {message}", file=sys.stderr)


def make_private_dirs(path: str | os.PathLike) -> None:
    """Create ``path`` and its missing parents, each 0700 (OSError when that fails)."""
    missing = []
    p = Path(path)
    while not p.exists() and p != p.parent:
        missing.append(p)
        p = p.parent
    for d in reversed(missing):
        d.mkdir(mode=0o700, exist_ok=True)
        d.chmod(0o700)                  # mkdir's mode is masked by the umask


def unusable(path: str | os.PathLike) -> str | None:
    """Why the directory ``path`` cannot hold a cache (the OS's reason), or None: it is created if missing (0700)
    and a file is created in it and removed again."""
    try:
        make_private_dirs(path)
        fd, tmp = tempfile.mkstemp(dir=path, prefix=".probe-")
        os.close(fd)
        os.unlink(tmp)
    except OSError as exc:
        return exc.strerror or type(exc).__name__
    return None


def _untrusted(st: os.stat_result) -> str | None:
    """Why a file or directory with this status may not be trusted, or None."""
    if st.st_uid not in (os.getuid(), 0):
        return f"owned by uid {st.st_uid}"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"writable by others (mode {stat.S_IMODE(st.st_mode):04o})"
    return None


def _check_dirs(top: Path, below: Path) -> str | None:
    """Why ``top`` or a directory between it and ``below`` (inclusive; existing ones) may not be trusted."""
    try:
        rel = below.relative_to(top)
    except ValueError:
        return f"{below} is outside {top}"
    path = top
    for part in ("",) + rel.parts:
        path = path / part if part else path
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            return None                 # created by us, 0700, when written
        except OSError as exc:
            return exc.strerror or type(exc).__name__
        if not stat.S_ISDIR(st.st_mode):
            return f"{path} is not a directory"
        why = _untrusted(st)
        if why:
            return f"{path} is {why}"
    return None


def trusted_root() -> Path | None:
    """The cache root with symbolic links resolved, when it and its ``derivations/`` may be trusted; else None
    (caching off, or a warning saying why the cache is not used)."""
    base = root()
    if base is None:
        return None
    real = Path(os.path.realpath(base))
    why = _check_dirs(real, real / SUBDIR)
    if why:
        warn_once(f"not using the derivation cache in {base}: {why} (a cache must be writable only by you: "
                  f"chmod go-w, or set {ENV_DIR})")
        return None
    return real


def _entry(name: str) -> Path | None:
    base = trusted_root()
    return None if base is None else base / SUBDIR / name


def read_bytes(name: str) -> bytes | None:
    """The entry ``name`` of ``derivations/`` if it exists and may be trusted, else None."""
    path = _entry(name)
    if path is None:
        return None
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        why = "not a regular file" if not stat.S_ISREG(st.st_mode) else _untrusted(st)
        if why:
            warn_once(f"ignoring the cache entry {path}: {why}")
            return None
        return fh.read()


def write_bytes(name: str, data: bytes) -> None:
    """Store the entry ``name`` atomically (0600, directories 0700); nothing happens when that fails."""
    path = _entry(name)
    if path is None:
        return
    try:
        make_private_dirs(path.parent)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError:
        pass


def load(name: str) -> tuple[bool, Any]:
    """(True, value) for a trusted, readable pickle entry; (False, None) otherwise (then compute and :func:`save`)."""
    data = read_bytes(name)
    if data is None:
        return False, None
    try:
        return True, pickle.loads(data)
    except Exception:  # noqa: BLE001 -- a stale or broken entry (our own) is recomputed
        return False, None


def save(name: str, value: Any) -> None:
    """Pickle ``value`` into the entry ``name`` (see :func:`write_bytes`)."""
    try:
        data = pickle.dumps(value, protocol=4)
    except Exception:  # noqa: BLE001 -- a value that does not pickle is simply not cached
        return
    write_bytes(name, data)


def read_text(name: str) -> str | None:
    data = read_bytes(name)
    try:
        return None if data is None else data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def write_text(name: str, text: str) -> None:
    write_bytes(name, text.encode("utf-8"))
