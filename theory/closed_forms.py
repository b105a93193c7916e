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

A copy made by :meth:`ClosedForms.replace` keeps those results of the original that cannot see a replacement:
each memoised result records the closed forms it called (through ``self``, transitively, in the order of the
computation), and a result that called none of the replaced ones is the same in the copy (the closed forms are
deterministic functions of their arguments, so the copy's computation takes the same path and returns the same
value). A result whose dependencies are unknown (computed while a closed form of another object was being derived,
or from such a result) is derived afresh. Only calls of :func:`derived` and :func:`recorded` closed forms
are recorded: replacing a plain method keeps nothing (a result may have called it unseen). :func:`recorded` is for
a closed form that must not be memoised (its arguments are arrays or dicts, or its value depends on more than them,
such as mpmath's working precision) but that a mutant may replace: its calls are recorded, never its results.

A persistent memo: a theory class that names itself (``persist_key``, a class attribute: its closed forms depend on
the arguments alone) keeps its results across processes in a store the application installs with :func:`persist`
(``store.load(key) -> (hit, entry)``, ``store.save(key, entry)``; the application keys it by the code version). An
entry is the result and its dependencies, so that a result read back is kept by a copy as one derived in this
process would be (the same computation records the same closed forms). A copy made by :meth:`ClosedForms.replace`
and an object without a ``persist_key`` never read or write it, so a mutant's replaced closed forms, and what
they reach, are always derived afresh.
"""
from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["ClosedForms", "derived", "overlay", "persist", "persistent_store", "persisting", "recorded"]

_store: Any = None


def persist(store: Any) -> None:
    """Install (or, with None, remove) the persistent memo of every :func:`derived` closed form whose object has a
    ``persist_key`` (module docstring)."""
    global _store
    _store = store


def persisting() -> bool:
    """Whether a persistent memo is installed in this process."""
    return _store is not None


def persistent_store() -> Any:
    """The persistent memo installed in this process (None: none)."""
    return _store


def _persistent_key(obj: "ClosedForms", method: Callable, args: tuple, kwargs: tuple) -> str | None:
    """The store key of one result, or None when the object must not use the store (no ``persist_key``, or a copy
    made by :meth:`ClosedForms.replace`)."""
    name = getattr(type(obj), "persist_key", None)
    if _store is None or not name or "_replaced_from" in obj.__dict__:
        return None
    return f"{name}.{method.__name__}{args!r}{kwargs!r}"


_frames = threading.local()


def _stack() -> list[list]:
    """This thread's closed forms being derived, innermost last: ``[object, names it called or None]``."""
    stack = getattr(_frames, "stack", None)
    if stack is None:
        stack = _frames.stack = []
    return stack


def _called(obj: "ClosedForms", name: str, deps: frozenset[str] | None) -> None:
    """Record in the closed form being derived (if any) that it called ``obj.name``, which depends on ``deps``
    (None: unknown). A call into another object makes the caller's dependencies unknown."""
    stack = _stack()
    if not stack or stack[-1][1] is None:
        return
    if stack[-1][0] is not obj or deps is None:
        stack[-1][1] = None
    else:
        stack[-1][1] |= deps | {name}


def derived(method: Callable) -> Callable:
    """Memoise a closed form per object and per arguments (which must be hashable). The memo is keyed by the function
    itself, so a replacement and the method it wraps never read each other's results. Each result's dependencies
    (the closed forms it called, module docstring) are kept beside it."""
    @functools.wraps(method)
    def memoised(self: "ClosedForms", *args: Any, **kwargs: Any) -> Any:
        name = memoised.__derived_name__
        key = (memoised, args, tuple(sorted(kwargs.items())))
        memo = self.__dict__.setdefault("_memo", {})
        deps = self.__dict__.setdefault("_deps", {})
        try:
            value = memo[key]
            _called(self, name, deps.get(key))
            return value
        except TypeError:                                # an unhashable argument: computed, not kept
            return _derive(self, name, method, args, kwargs)[0]
        except KeyError:
            pass
        stored = _persistent_key(self, method, args, key[2])
        hit, entry = _store.load(stored) if stored else (False, None)
        if hit:
            value, deps[key] = entry
            _called(self, name, deps[key])
        else:
            value, deps[key] = _derive(self, name, method, args, kwargs)
            if stored:
                _store.save(stored, (value, deps[key]))
        memo[key] = value
        return value
    memoised.__derived__ = True
    memoised.__derived_name__ = method.__name__
    return memoised


def recorded(method: Callable) -> Callable:
    """A closed form computed at every call (never memoised) whose calls are recorded in the dependencies of the
    memoised results that make them, as :func:`derived`'s are (module docstring): a copy that replaces it keeps the
    results that never called it."""
    @functools.wraps(method)
    def wrapper(self: "ClosedForms", *args: Any, **kwargs: Any) -> Any:
        return _derive(self, wrapper.__derived_name__, method, args, kwargs)[0]
    wrapper.__derived__ = True
    wrapper.__derived_name__ = method.__name__
    return wrapper


def _derive(obj: "ClosedForms", name: str, method: Callable, args: tuple, kwargs: dict) -> tuple[Any, Any]:
    """``method(obj, *args, **kwargs)`` and the closed forms it called (None: unknown), recorded in its caller too."""
    stack = _stack()
    stack.append([obj, frozenset()])
    try:
        value = method(obj, *args, **kwargs)
    finally:
        deps = stack.pop()[1]
        _called(obj, name, deps)
    return value, deps


def _replacing_class(cls: type, name: str) -> type | None:
    """The class made by :meth:`ClosedForms.replace`, in ``cls``'s ancestry, that replaced ``name``; None if none."""
    return next((k for k in cls.__mro__ if name in vars(k).get("_replaces", ())), None)


class ClosedForms:
    """The base of a paper's theory object (see the module docstring)."""

    def replace(self, **methods: Callable[..., Any]) -> "ClosedForms":
        """A copy of this object in which each method ``name`` is ``methods[name](self, *args, **kwargs)``, seen by
        every closed form of the copy; it starts from the original's results that called none of them (module
        docstring), and derives everything else afresh."""
        base = type(self)
        unknown = [n for n in methods if not callable(getattr(base, n, None))]
        if unknown:
            raise AttributeError(f"{base.__name__} has no closed form {unknown[0]!r} to replace")
        twice = [n for n in methods if _replacing_class(base, n) is not None]
        if twice:
            raise ValueError(f"the closed form {twice[0]!r} is replaced already in this copy; replace the original")
        replaced = {n: derived(fn) for n, fn in methods.items()}
        for n, fn in replaced.items():
            fn.__derived_name__ = n
        cls = type(f"{base.__name__}Replaced", (base,), {**replaced, "_replaces": frozenset(methods)})
        cls.__module__ = base.__module__
        copy = object.__new__(cls)
        copy.__dict__.update({k: v for k, v in self.__dict__.items() if k not in ("_memo", "_deps")})
        copy.__dict__["_replaced_from"] = base
        copy.__dict__["_memo"], copy.__dict__["_deps"] = self._unaffected_by(set(methods))
        return copy

    def _unaffected_by(self, names: set[str]) -> tuple[dict, dict]:
        """The memoised results (and their dependencies) that called none of the closed forms ``names``, directly or
        not; nothing when one of them is not a memoised closed form (its calls are not recorded). A result of a
        replaced closed form itself is kept under the original's key: the copy reaches it as ``original(name)``."""
        base = type(self)
        if not all(getattr(getattr(base, n), "__derived__", False) for n in names):
            return {}, {}
        memo, deps = self.__dict__.get("_memo", {}), self.__dict__.get("_deps", {})
        kept = [k for k in memo if deps.get(k) is not None and not deps[k] & names]
        return {k: memo[k] for k in kept}, {k: deps[k] for k in kept}

    def original(self, name: str) -> Callable[..., Any]:
        """In a copy made by :meth:`replace`: the method ``name`` as it was before the replacement, bound to the copy
        (so what it calls still sees every replacement)."""
        klass = _replacing_class(type(self), name)
        base = type(self) if klass is None else klass.__bases__[0]
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
