"""The self-test material of a paper, as data, and its building blocks.

* :class:`Mutant`: a deliberately wrong closed form or simulator, given to the checks that should catch it as the
  argument they receive (``Context.theory`` / ``Context.numerics``): no module is patched. (:class:`PatchMutant` is
  the older form that named its target by a string path; it goes once every paper passes its objects.)
* :class:`Family`: a way to perturb the analytic side by a size delta (the power self-test); :class:`PowerRow`:
  one (check, family) row of the power table; :class:`Perturbation`: a changed stated form (the claim self-test).
* Wrappers that change a theory function's result or arguments at its outermost call: a wrapped function is
  perturbed only at the outermost level, and the calls it makes itself see the originals (otherwise a field that
  differentiates a wrapped objective would see the perturbation twice).
"""
from __future__ import annotations

import functools
import importlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# ----------------------------------------------------------------------------------------------
# the material
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Mutant:
    """A named wrong version of what some checks receive, and the checks that should catch it.

    ``target`` is the argument it replaces: ``"theory"`` (the closed forms a check receives as ``ctx.theory``) or
    ``"numerics"`` (its simulators, ``ctx.numerics``); ``make(original)`` returns the replacement, built from the
    original object (e.g. ``original.replace(reduced_field=wrong)``). ``equivalent`` is empty, or the proof that the
    mutated statement is still true for every admissible input (an equivalent mutant: no correct check can reject
    it, so it is run and reported but not counted against the checks). ``known_gap`` is empty, or the measured reason
    why no check catches this non-equivalent mutant in the quick profile (reported, and the self-test's all-caught
    figure says so)."""

    name: str
    make: Callable[[Any], Any]
    checks: tuple[str, ...]
    description: str
    target: str = "theory"
    equivalent: str = ""
    known_gap: str = ""

    def __post_init__(self) -> None:
        if self.target not in ("theory", "numerics"):
            raise TypeError(f"mutant {self.name}: target must be 'theory' or 'numerics', got {self.target!r}")


@dataclass(frozen=True)
class PatchMutant:
    """(The older form, being retired.) A named wrong version of ``module.attribute``, and the checks that should
    catch it.

    ``make(original)`` returns the replacement, built from the original object. ``equivalent`` is empty, or the
    proof that the mutated statement is still true for every admissible input (an equivalent mutant: no correct
    check can reject it, so it is run and reported but not counted against the checks). ``known_gap`` is empty, or
    the measured reason why no check catches this non-equivalent mutant in the quick profile (reported, and the
    self-test's all-caught figure says so).
    """

    name: str
    module: str
    attribute: str
    make: Callable[[Any], Any]
    checks: tuple[str, ...]
    description: str
    equivalent: str = ""
    known_gap: str = ""


@dataclass(frozen=True)
class Family:
    """A way to perturb the analytic side by a size delta: ``build(delta)`` (or ``build(delta, params)`` for the
    ``regime`` kind, which needs the check's parameters) gives the :class:`Mutant` replacements for a signed delta.

    ``kind``: ``"scale"`` / ``"mismatch"`` walk the ladder of deltas with both signs; ``"fixed"`` (one wrong closed
    form) and ``"regime"`` (the theory on the other side of a threshold) ignore delta. The mutants it builds are
    :class:`Mutant` s (or, in papers not yet converted, :class:`PatchMutant` s)."""

    name: str
    kind: str
    description: str
    build: Callable[..., list[Mutant]]

    def mutants(self, delta: float, params: dict | None = None) -> list[Mutant]:
        if self.kind == "regime":
            return self.build(delta, params)
        return self.build(delta)

    @property
    def laddered(self) -> bool:
        return self.kind in ("scale", "mismatch")


@dataclass(frozen=True)
class Perturbation:
    """A changed stated form for the claim self-test: ``stated`` (a StatedClaim), its ``name`` and size ``delta``
    (None for a one-off change), and ``wrong``: whether the changed statement is false (a tighter bound, another
    figure) and so should be refuted, or still true (a looser bound: it must not be refuted)."""

    name: str
    delta: float | None
    stated: Any
    wrong: bool = True


@dataclass(frozen=True)
class PowerRow:
    """A (check, family) row of the power table: ``target`` the required MDP (None: measured only), or
    ``not_applicable`` with the reason the family cannot move this check's verdict by design. With ``claim``, a
    run rejects when that claim's verdict (from this check's evidence) is ``refuted``, not when the check fails."""

    check: str
    family: str
    target: float | None = None
    not_applicable: str = ""
    smoke: bool = False
    claim: str = ""


# ----------------------------------------------------------------------------------------------
# wrappers
# ----------------------------------------------------------------------------------------------
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
