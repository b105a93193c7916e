"""Building blocks of perturbation families (the power self-test) and mutants: wrappers that change a theory
function's result or arguments at its outermost call.

A wrapped function is perturbed only at the outermost level: the calls it makes itself see the originals
(otherwise a field that differentiates a wrapped objective would see the perturbation twice).
"""
from __future__ import annotations

import functools
import importlib
import inspect
from collections.abc import Callable
from typing import Any

_depth = [0]


def outermost(original: Callable, perturb_call: Callable[[Callable, tuple, dict], Any]) -> Callable:
    """A wrapper of ``original`` that applies ``perturb_call(original, args, kwargs)`` at the outermost level."""

    @functools.wraps(original)
    def wrapped(*args, **kwargs):
        if _depth[0] > 0:
            return original(*args, **kwargs)
        _depth[0] += 1
        try:
            return perturb_call(original, args, kwargs)
        finally:
            _depth[0] -= 1
    return wrapped


def scale_result(factor: float) -> Callable[[Callable], Callable]:
    """make(original): the original's result times ``factor`` (SymPy expressions, matrices, arrays, floats)."""
    def make(original: Callable) -> Callable:
        return outermost(original, lambda fn, args, kwargs: fn(*args, **kwargs) * factor)
    return make


def scale_entry(key: str, factor: float) -> Callable[[Callable], Callable]:
    """make(original): the original's dict result with entry ``key`` times ``factor``."""
    def make(original: Callable) -> Callable:
        def call(fn, args, kwargs):
            out = dict(fn(*args, **kwargs))
            out[key] = out[key] * factor
            return out
        return outermost(original, call)
    return make


def scale_argument(name: str, factor: float) -> Callable[[Callable], Callable]:
    """make(original): the original evaluated with its argument ``name`` times ``factor`` (arrays elementwise)."""
    import numpy as np

    def make(original: Callable) -> Callable:
        sig = inspect.signature(original)

        def call(fn, args, kwargs):
            bound = sig.bind(*args, **kwargs)
            bound.arguments[name] = np.asarray(bound.arguments[name], dtype=float) * factor
            return fn(*bound.args, **bound.kwargs)
        return outermost(original, call)
    return make


def module_functions(module_name: str, accept: Callable[[str, inspect.Signature], bool]) -> list[str]:
    """Public functions defined in ``module_name`` whose name and signature ``accept``."""
    module = importlib.import_module(module_name)
    names = []
    for name, value in vars(module).items():
        if name.startswith("_") or not inspect.isfunction(inspect.unwrap(value)) and not hasattr(value, "cache_clear"):
            continue
        if getattr(value, "__module__", None) != module_name or not callable(value):
            continue
        try:
            sig = inspect.signature(value)
        except (TypeError, ValueError):
            continue
        if accept(name, sig):
            names.append(name)
    return names
