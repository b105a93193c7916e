"""A paper's closed forms as one object, so that a check receives them as an argument and a self-test can hand it a
wrong one (a mutant is an argument, not a patched module attribute).

A paper's theory is a subclass of :class:`ClosedForms` whose methods are its closed forms. They call each other
through ``self``, and :func:`derived` memoises them per object (no global cache: two objects never share a
result). Two ways to make a wrong version, neither touching the original:

* :meth:`ClosedForms.replace` -- a copy in which the named methods are replaced *everywhere*: every other closed form
  that calls one of them (through ``self``) sees the replacement, as a wrong derivation would propagate (``F``
  differentiates a wrong ``J``). The replacement is ``fn(self, *args, **kwargs)``; ``self.original(name)`` gives the
  method it replaced, bound to the copy.
* :func:`overlay` -- a view in which the named methods are replaced *for its caller only*: the closed forms keep
  calling the originals, so a scaled ``J`` is seen where a check reads ``J`` and nowhere else (a perturbation of one
  compared quantity, for the power self-test).

A persistent memo: a theory class that names itself (``persist_key``, a class attribute: its closed forms depend on
the arguments alone) keeps its results across processes in a store the application installs with :func:`persist`
(``store.load(key) -> (hit, value)``, ``store.save(key, value)``; the application keys it by the code version). A
copy made by :meth:`ClosedForms.replace` and an object without a ``persist_key`` never read or write it, so a
mutant's closed forms are always derived afresh.
"""
from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

__all__ = ["ClosedForms", "derived", "overlay", "persist", "persisting"]

_store: Any = None


def persist(store: Any) -> None:
    """Install (or, with None, remove) the persistent memo of every :func:`derived` closed form whose object has a
    ``persist_key`` (module docstring)."""
    global _store
    _store = store


def persisting() -> bool:
    """Whether a persistent memo is installed in this process."""
    return _store is not None


def _persistent_key(obj: "ClosedForms", method: Callable, args: tuple, kwargs: tuple) -> str | None:
    """The store key of one result, or None when the object must not use the store (no ``persist_key``, or a copy
    made by :meth:`ClosedForms.replace`)."""
    name = getattr(type(obj), "persist_key", None)
    if _store is None or not name or "_replaced_from" in obj.__dict__:
        return None
    return f"{name}.{method.__name__}{args!r}{kwargs!r}"


def derived(method: Callable) -> Callable:
    """Memoise a closed form per object and per arguments (which must be hashable). The memo is keyed by the function
    itself, so a replacement and the method it wraps never read each other's results."""
    @functools.wraps(method)
    def memoised(self: "ClosedForms", *args: Any, **kwargs: Any) -> Any:
        key = (memoised, args, tuple(sorted(kwargs.items())))
        memo = self.__dict__.setdefault("_memo", {})
        try:
            return memo[key]
        except KeyError:
            stored = _persistent_key(self, method, args, key[2])
            hit, value = _store.load(stored) if stored else (False, None)
            if not hit:
                value = method(self, *args, **kwargs)
                if stored:
                    _store.save(stored, value)
            memo[key] = value
            return value
        except TypeError:                                # an unhashable argument: computed, not kept
            return method(self, *args, **kwargs)
    memoised.__derived__ = True
    return memoised


class ClosedForms:
    """The base of a paper's theory object (see the module docstring)."""

    def replace(self, **methods: Callable[..., Any]) -> "ClosedForms":
        """A copy of this object in which each method ``name`` is ``methods[name](self, *args, **kwargs)``, seen by
        every closed form of the copy; its results are memoised afresh (nothing derived by the original is kept)."""
        base = type(self)
        unknown = [n for n in methods if not callable(getattr(base, n, None))]
        if unknown:
            raise AttributeError(f"{base.__name__} has no closed form {unknown[0]!r} to replace")
        cls = type(f"{base.__name__}Replaced", (base,), {n: derived(fn) for n, fn in methods.items()})
        cls.__module__ = base.__module__
        copy = object.__new__(cls)
        copy.__dict__.update({k: v for k, v in self.__dict__.items() if k != "_memo"})
        copy.__dict__["_replaced_from"] = base
        return copy

    def original(self, name: str) -> Callable[..., Any]:
        """In a copy made by :meth:`replace`: the method ``name`` as it was before the replacement, bound to the copy
        (so what it calls still sees every replacement)."""
        base = self.__dict__.get("_replaced_from", type(self))
        return getattr(base, name).__get__(self, type(self))


class _Overlay:
    """A view of a theory object with some methods replaced for the caller only (:func:`overlay`)."""

    def __init__(self, theory: Any, methods: dict[str, Callable[..., Any]]) -> None:
        self._theory = theory
        self._methods = methods

    def __getattr__(self, name: str) -> Any:
        if name in self._methods:
            return functools.partial(self._methods[name], self._theory)
        return getattr(self._theory, name)


def overlay(theory: Any, **methods: Callable[..., Any]) -> Any:
    """A view of ``theory`` in which each method ``name`` is ``methods[name](theory, *args, **kwargs)`` for whoever
    calls it through the view; every closed form of ``theory`` itself keeps calling the originals."""
    unknown = [n for n in methods if not callable(getattr(theory, n, None))]
    if unknown:
        raise AttributeError(f"{type(theory).__name__} has no closed form {unknown[0]!r} to replace")
    return _Overlay(theory, dict(methods))
