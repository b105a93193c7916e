"""The derivation cache as the persistent memo of the papers' closed forms.

A theory object that names itself (``persist_key``: its closed forms depend on their arguments alone) keeps each
derived result in the derivation cache (:mod:`attnverify.cache`: loaded only from a directory no other user can
write), under a SHA-256 of the closed form's key and the code version (:func:`attnverify.derive.code_version`: the
theory and checks sources, SymPy and Python). A later process reads it back instead of deriving it again: a cached
rerun of the quick audit no longer repeats that SymPy work. A mutant's closed forms (a copy made by
``ClosedForms.replace``) never touch it (:mod:`attnverify.theory.closed_forms`).
"""
from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from attnverify import cache
from attnverify.theory import closed_forms


class DerivationCacheMemo:
    """``load(key) -> (hit, value)`` and ``save(key, value)`` on the derivation cache, an entry per closed form."""

    def _name(self, key: str) -> str:
        from attnverify.derive import code_version

        return "theory-" + hashlib.sha256(f"{key}|{code_version()}".encode()).hexdigest()[:40] + ".pickle"

    def load(self, key: str) -> tuple[bool, Any]:
        return cache.load(self._name(key))

    def save(self, key: str, value: Any) -> None:
        cache.save(self._name(key), value)


def install() -> None:
    """Use the derivation cache as the closed forms' persistent memo in this process (nothing when caching is off)."""
    closed_forms.persist(None if cache.disabled() else DerivationCacheMemo())


@contextmanager
def installed() -> Iterator[None]:
    """The persistent memo for the block (a command); afterwards, the one installed before (if any) again."""
    before = closed_forms.persistent_store()
    install()
    try:
        yield
    finally:
        closed_forms.persist(before)
