"""A persistent store of sweep-task results, so that a killed or crashed run loses no finished work.

Every ``Context.map`` task result is written as soon as it finishes, under a key of (check id, parameters, seed,
task = function and arguments, code version); a rerun with the same store reads the finished tasks back and
computes only the missing ones. The tasks are deterministic functions of their arguments (the framework's rule),
so a resumed run produces exactly the results, and hence the report, of an uninterrupted one.

Format: data only, never pickles (a cache directory is input that someone else may have written). One ``.npz``
file per task (``numpy.savez``, read with ``allow_pickle=False``) holding

* ``tree``: UTF-8 JSON describing the result's structure: tuples, lists, dicts with string keys, None, bool, int,
  str, Python floats (stored as ``float.hex`` strings: exact, NaN and inf included), NumPy scalars and arrays of
  bool/integer/float/complex dtype (stored as arrays, so their dtype and value come back bit for bit), and
  dataclass instances of the numerics package (``attnverify.numerics.*``, e.g. the Monte Carlo ``Estimate``):
  the class's module and name and its init fields, encoded by these same rules. Reading one back imports that
  numerics module (never any other) and calls the class with the stored fields; a name that is not such a
  dataclass, or fields that differ from the class's, make the entry unsound;
* ``a0``, ``a1``, ...: the arrays;
* ``digest``: SHA-256 over the key, the tree and every array's dtype, shape and bytes.

A result of any other type (an object, an object array, a dict with non-string keys) is not stored: the task is
simply computed again next time. A store that cannot be written (a full disk, a directory made read-only) only
costs time: the result is used, counted as not stored, and the run goes on. An entry whose file cannot be read, whose digest does not match or whose key
differs is treated as missing, deleted and recomputed; it is never trusted. Writes go to a temporary file in the
same directory, flushed to disk and renamed into place (atomic on POSIX), so a kill mid-write leaves no partial
entry under the final name.

The code version is a SHA-256 of the source files of the ``numerics`` and ``checks`` packages (what computes the
tasks) and of the numerical libraries' versions, so an edited kernel or check, or an upgraded NumPy, never reuses
stale results. Functions patched at run time (the mutant and power self-tests) are invisible to it: those runs do
not use a store (the power self-test's unperturbed runs may: nothing is patched while they run). The digest detects damage, not forgery: whoever can write the directory can write a valid entry
with wrong numbers, so share a cache directory only with people whose results you would trust.
"""
from __future__ import annotations

import dataclasses
import hashlib
import importlib
import io
import json
import os
import pickle
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from attnverify.checks.context import task_key

_KINDS = "biufc"          # numeric dtype kinds that are stored
_DATACLASS_PACKAGE = "attnverify.numerics."      # dataclass results of these modules are stored field by field


class Unstorable(TypeError):
    """A result that the store cannot represent as data."""


def code_version() -> str:
    """SHA-256 (hex, 16 chars) of the ``numerics`` and ``checks`` source files and their relative paths, and of the
    versions of Python and the numerical libraries (NumPy, SciPy, numba, POT, mpmath) that compute the tasks."""
    import platform
    from importlib.metadata import PackageNotFoundError, version

    from attnverify import checks
    from attnverify import numerics

    h = hashlib.sha256(platform.python_version().encode())
    for lib in ("numpy", "scipy", "numba", "pot", "mpmath"):
        try:
            h.update(f"|{lib} {version(lib)}".encode())
        except PackageNotFoundError:
            h.update(f"|{lib} -".encode())
    for pkg in (numerics, checks):
        root = Path(pkg.__file__).parent
        for path in sorted(root.rglob("*.py")):
            h.update(str(path.relative_to(root.parent)).encode())
            h.update(path.read_bytes())
    return h.hexdigest()[:16]


# ------------------------------------------------------------------------------------------------- encoding
def encode(value: Any) -> tuple[Any, list[np.ndarray]]:
    """(JSON-able tree, arrays) for a result; :class:`Unstorable` when it contains anything but data."""
    arrays: list[np.ndarray] = []

    def enc(v: Any) -> Any:
        if v is None:
            return {"t": "none"}
        if isinstance(v, bool):
            return {"t": "bool", "v": v}
        if isinstance(v, int):
            return {"t": "int", "v": str(v)}
        if isinstance(v, float):
            return {"t": "float", "v": v.hex()}
        if isinstance(v, str):
            return {"t": "str", "v": v}
        if isinstance(v, (np.ndarray, np.generic)):
            a = np.asarray(v)
            if a.dtype.kind not in _KINDS:
                raise Unstorable(f"array of dtype {a.dtype}")
            arrays.append(np.array(a, order="C"))          # (ascontiguousarray would make 0-d arrays 1-d)
            return {"t": "array" if isinstance(v, np.ndarray) else "scalar", "i": len(arrays) - 1}
        if isinstance(v, tuple) and type(v) is tuple:
            return {"t": "tuple", "v": [enc(x) for x in v]}
        if isinstance(v, list) and type(v) is list:
            return {"t": "list", "v": [enc(x) for x in v]}
        if isinstance(v, dict) and type(v) is dict:
            if not all(isinstance(k, str) for k in v):
                raise Unstorable("dict with non-string keys")
            return {"t": "dict", "k": list(v), "v": [enc(x) for x in v.values()]}
        cls = type(v)
        if dataclasses.is_dataclass(cls) and cls.__module__.startswith(_DATACLASS_PACKAGE) and \
                _dataclass(cls.__module__, cls.__qualname__) is cls:
            names = _init_fields(cls)
            return {"t": "dataclass", "m": cls.__module__, "c": cls.__qualname__, "k": names,
                    "v": [enc(getattr(v, n)) for n in names]}
        raise Unstorable(cls.__name__)

    return enc(value), arrays


def decode(tree: Any, arrays: list[np.ndarray]) -> Any:
    """The inverse of :func:`encode`; ValueError on a malformed tree."""
    t = tree["t"]
    if t == "none":
        return None
    if t == "bool":
        return bool(tree["v"])
    if t == "int":
        return int(tree["v"])
    if t == "float":
        return float.fromhex(tree["v"])
    if t == "str":
        return str(tree["v"])
    if t == "array":
        return arrays[tree["i"]]
    if t == "scalar":
        return arrays[tree["i"]][()]
    if t == "tuple":
        return tuple(decode(x, arrays) for x in tree["v"])
    if t == "list":
        return [decode(x, arrays) for x in tree["v"]]
    if t == "dict":
        return {str(k): decode(x, arrays) for k, x in zip(tree["k"], tree["v"], strict=True)}
    if t == "dataclass":
        cls = _dataclass(str(tree["m"]), str(tree["c"]))
        if cls is None or list(tree["k"]) != _init_fields(cls):
            raise ValueError(f"not a numerics dataclass with these fields: {tree['m']}.{tree['c']}")
        return cls(**{str(k): decode(x, arrays) for k, x in zip(tree["k"], tree["v"], strict=True)})
    raise ValueError(f"unknown node type {t!r}")


def _dataclass(module: str, name: str) -> type | None:
    """The dataclass ``module.name`` if ``module`` is a module of the numerics package, else None."""
    if not module.startswith(_DATACLASS_PACKAGE) or not all(p.isidentifier() for p in module.split(".")) \
            or not name.isidentifier():
        return None
    try:
        cls = getattr(importlib.import_module(module), name, None)
    except ImportError:
        return None
    return cls if isinstance(cls, type) and dataclasses.is_dataclass(cls) else None


def _init_fields(cls: type) -> list[str]:
    return [f.name for f in dataclasses.fields(cls) if f.init]


def _digest(key: str, tree_bytes: bytes, arrays: list[np.ndarray]) -> str:
    h = hashlib.sha256(key.encode())
    h.update(tree_bytes)
    for a in arrays:
        h.update(f"|{a.dtype.str}|{a.shape}|".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def default_dir() -> Path:
    """``$ATTNVERIFY_CACHE_DIR``, else ``$XDG_CACHE_HOME/attnverify/tasks``, else ``~/.cache/attnverify/tasks``."""
    if os.environ.get("ATTNVERIFY_CACHE_DIR"):
        return Path(os.environ["ATTNVERIFY_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "attnverify" / "tasks"


# ------------------------------------------------------------------------------------------------- the store
@dataclass
class Stats:
    reused: int = 0
    computed: int = 0
    stored: int = 0
    unstorable: int = 0
    corrupt: int = 0
    unwritable: int = 0
    write_error: str = ""


class TaskStore:
    """Task results on disk under ``root`` (created if missing), one file per task, keyed as in the module docstring.

    ``version`` defaults to :func:`code_version`. Use :meth:`for_check` to get the view a :class:`Context` takes.
    """

    def __init__(self, root: str | os.PathLike, version: str | None = None) -> None:
        """OSError when ``root`` cannot be created or written (a file is created in it and removed again)."""
        self.root = Path(root)
        self.version = code_version() if version is None else version
        self.stats = Stats()
        self.root.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=self.root, prefix=".probe-")
        os.close(fd)
        os.unlink(probe)

    def for_check(self, check_id: str, params: dict, seed: int) -> "CheckStore":
        digest = hashlib.sha256(pickle.dumps(sorted(params.items()), protocol=4)).hexdigest()
        return CheckStore(self, check_id, f"{check_id}|{digest}|{int(seed)}|{self.version}")

    # -- files
    def _path(self, check_id: str, key: str) -> Path:
        return self.root / check_id / (hashlib.sha256(key.encode()).hexdigest() + ".npz")

    def load(self, check_id: str, key: str) -> tuple[bool, Any]:
        """(True, result) for a sound entry, else (False, None); an unsound file is removed."""
        path = self._path(check_id, key)
        if not path.exists():
            return False, None
        try:
            with np.load(path, allow_pickle=False) as z:
                names = set(z.files)
                tree_bytes = z["tree"].tobytes()
                stored_digest = z["digest"].tobytes().decode()
                meta = json.loads(tree_bytes.decode())
                n = int(meta["n"])
                if names != {"tree", "digest"} | {f"a{i}" for i in range(n)}:
                    raise ValueError("unexpected members")
                arrays = [z[f"a{i}"] for i in range(n)]
            if meta["key"] != key or stored_digest != _digest(key, tree_bytes, arrays):
                raise ValueError("digest or key mismatch")
            return True, decode(meta["tree"], arrays)
        except Exception:  # noqa: BLE001 -- any unreadable entry is recomputed, never trusted
            self.stats.corrupt += 1
            try:
                path.unlink()
            except OSError:
                pass
            return False, None

    def save(self, check_id: str, key: str, value: Any) -> bool:
        """Store ``value`` atomically; False (and nothing written) when it is not data or the write fails (counted
        in the stats: a store problem never stops a run)."""
        try:
            tree, arrays = encode(value)
        except Unstorable:
            self.stats.unstorable += 1
            return False
        try:
            self._write(check_id, key, tree, arrays)
        except OSError as exc:
            self.stats.unwritable += 1
            self.stats.write_error = self.stats.write_error or (exc.strerror or type(exc).__name__)
            return False
        self.stats.stored += 1
        return True

    def _write(self, check_id: str, key: str, tree: Any, arrays: list[np.ndarray]) -> None:
        tree_bytes = json.dumps({"key": key, "n": len(arrays), "tree": tree}).encode()
        members = {"tree": np.frombuffer(tree_bytes, np.uint8),
                   "digest": np.frombuffer(_digest(key, tree_bytes, arrays).encode(), np.uint8)}
        members.update({f"a{i}": a for i, a in enumerate(arrays)})
        path = self._path(check_id, key)
        path.parent.mkdir(parents=True, exist_ok=True)
        buf = io.BytesIO()
        np.savez(buf, **members)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".npz")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(buf.getvalue())
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise

    def summary(self) -> str:
        s = self.stats
        extra = f", {s.corrupt} corrupt entries recomputed" if s.corrupt else ""
        extra += f", {s.unstorable} results not storable" if s.unstorable else ""
        extra += f", {s.unwritable} results not stored ({s.write_error})" if s.unwritable else ""
        return f"cache {self.root}: {s.reused} tasks reused, {s.computed} computed{extra}"


@dataclass
class CheckStore:
    """The store seen by one check run: keys carry (check id, parameters, seed, code version)."""

    store: TaskStore
    check_id: str
    prefix: str
    _seen: dict = field(default_factory=dict)

    def key(self, fn: Callable[..., Any], task: tuple) -> str:
        return f"{self.prefix}|{task_key(fn, task)}"

    def get(self, key: str) -> tuple[bool, Any]:
        hit, value = self.store.load(self.check_id, key)
        if hit:
            self.store.stats.reused += 1
        return hit, value

    def put(self, key: str, value: Any) -> None:
        self.store.stats.computed += 1
        self.store.save(self.check_id, key, value)
