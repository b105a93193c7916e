"""The catalogue's text, kept: ``attnverify list`` answers from the cache without importing a check.

Listing the checks means importing every check module, and with them SciPy and SymPy (seconds). What ``list``
prints depends only on its arguments, the terminal width and the source of the installed papers, so the text is
kept in the cache (:mod:`attnverify.cache`) under a key that hashes them: the version, the arguments (and the bytes
of any argument that names a file, such as a model file), the width, and every ``.py`` and ``.toml`` file of the
application, the built-in packages and each paper registered through an entry point (found with
``importlib.util.find_spec``, which locates a package without running it). Any edit of a source changes the key,
so a kept text is never stale; a cache that cannot be used only costs the import.
"""
from __future__ import annotations

import hashlib
import importlib.util
from collections.abc import Callable, Iterable
from importlib import metadata
from pathlib import Path

from attnverify import cache

GROUP = "attnverify.papers"
_SUFFIXES = (".py", ".toml")


def _package_roots() -> list[Path]:
    """The directories whose sources decide what is listed: the application's packages and every paper package
    named by an entry point (located, not imported)."""
    import attnverify

    here = Path(attnverify.__file__).parent
    roots = {here}
    roots.update(here.parent / name for name in ("checks", "theory", "numerics"))    # the layout of the source tree
    for ep in metadata.entry_points(group=GROUP):
        top = ep.value.split(":", 1)[0].split(".", 1)[0]
        spec = importlib.util.find_spec(top)
        for location in (spec.submodule_search_locations or []) if spec else []:
            roots.add(Path(location))
    return sorted(r for r in roots if r.is_dir())


def _files(roots: Iterable[Path]) -> list[Path]:
    return sorted({p for r in roots for p in r.rglob("*") if p.suffix in _SUFFIXES and "__pycache__" not in p.parts})


def key(arguments: Iterable[str], width: int) -> str:
    """The cache key of a listing: SHA-256 (hex, 24 characters) of the version, the arguments (with the bytes of
    any that names a file), the width, the entry points and the sources of every package that registers papers."""
    from attnverify.checks.version import VERSION

    h = hashlib.sha256(f"attnverify {VERSION}|width {width}".encode())
    for a in arguments:
        h.update(b"\0arg " + a.encode())
        path = Path(a)
        if a.endswith(".toml") and path.is_file():
            h.update(path.read_bytes())
    for ep in sorted(metadata.entry_points(group=GROUP), key=lambda e: e.name):
        h.update(f"\0ep {ep.name}={ep.value}".encode())
    for path in _files(_package_roots()):
        h.update(b"\0file " + str(path).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:24]


def listing(arguments: Iterable[str], width: int, compute: Callable[[], str]) -> str:
    """The catalogue text for ``arguments`` at ``width``: the kept text when its key matches, else ``compute()``
    (which imports the checks), kept for the next time."""
    arguments = list(arguments)
    name = f"list-{key(arguments, width)}.txt"
    kept = cache.read_text(name)
    if kept is not None:
        return kept
    text = compute()
    cache.write_text(name, text)
    return text
