"""The admissible domain of a quantity: the range of each of its symbols, the constraints between them, the values a
user gives (a claim's ``at`` table, ``attnverify.quantity(...)``) validated against it before any work, and draws
over the whole of it (log-uniform over wide ranges, the boundaries included) where a counterexample is searched.

The range of a symbol is a :class:`~attnverify.checks.params.Param` named by the symbol: the quantity's own
(``Quantity.domain``), else the paper's model option of that name (``Paper.params``: theta, beta, R, L, lam, ...),
else any finite real. The constraints between values given together are the paper's (``Paper.validate``: R < L,
...) and the quantity's (``Quantity.admissible``: realisable overlaps, ...). :func:`read_values` is the one
validation of the papers' values: ``attnverify audit`` (``at``), ``attnverify.quantity`` and ``attnverify.formula``
call it, so the same value is refused everywhere with the same line.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from attnverify.checks.params import MAX_EXACT_INT, InputError, Param, did_you_mean, shown, validated

ENDS = 0.1          # share of draws put on each end of a range (the boundaries are part of the domain)
WIDE = 1e3          # a range open to 0 or to infinity is drawn from its typical value / WIDE to its typical x WIDE


def symbol_params(paper: Any, quantity: Any) -> dict[str, Param]:
    """The range of each symbol of ``quantity`` (module docstring), by name."""
    own = dict(getattr(quantity, "domain", None) or {})
    out = {}
    for name in quantity.symbols:
        prm = own.get(name) or (paper.param(name) if paper is not None else None)
        out[name] = prm if prm is not None else Param(name, float, 0.0, f"the symbol {name}")
    return out


def read_values(paper: Any, quantity: Any, given: Mapping[str, Any]) -> tuple[dict, dict]:
    """(options, symbol values) of the ``given`` values of ``quantity``: each option parsed and validated as its
    Param (command-line text such as a matrix ``"1,0;0,2"`` is read as ``--set`` reads it), the others taking their
    defaults; each symbol value a finite number within its range (:func:`symbol_params`), an integer where the
    range is one; then the paper's and the quantity's constraints on the values given together. One
    :class:`InputError` line naming the value, before any work."""
    options = {o.name: o for o in quantity.options}
    ranges = symbol_params(paper, quantity)
    unknown = [k for k in given if k not in options and k not in ranges]
    if unknown:
        raise InputError(f"{unknown[0]!r} is neither an option nor a symbol of {quantity.name}"
                         f"{did_you_mean(unknown[0], sorted({*options, *ranges}))}")
    opts = {name: o.read(given[name]) if name in given else o.validate(o.default) for name, o in options.items()}
    symbols = {}
    for name, value in given.items():
        if name in options:
            continue
        symbols[name] = symbol_value(ranges[name], value)
    model = {k: v for k, v in {**opts, **symbols}.items() if paper is not None and paper.param(k) is not None}
    model = {k: v for k, v in model.items() if k in given or k in symbols}
    if paper is not None:
        validated(paper.validate, model)
    admissible = getattr(quantity, "admissible", None)
    if admissible is not None:
        validated(admissible, dict(symbols))
    return opts, symbols


def symbol_value(prm: Param, value: Any) -> int | float:
    """A symbol's value given by the user, validated by its range ``prm``: a number (an integer of any kind, NumPy's
    unsigned ones included, where the range is one of integers; a float with an integral value is read as that
    integer), finite and within double precision (an integer at most 2^53, which a double holds exactly).
    InputError naming the symbol and the problem otherwise."""
    name = prm.name
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise InputError(f"{name}: expected a finite number, got {value!r}")
    if isinstance(value, (float, np.floating)):
        if not math.isfinite(value):
            raise InputError(f"{name}: must be finite, got {value}")
        if prm.kind is int:
            if not float(value).is_integer():
                raise InputError(f"{name}: expected an integer, got {value!r}")
            value = int(value)
    out = prm.validate(int(value) if prm.kind is int or isinstance(value, np.integer) else value)
    if prm.kind is int and abs(out) > MAX_EXACT_INT:
        raise InputError(f"{name}: {shown(out)} is beyond the range of integers a double holds exactly "
                         f"(|{name}| <= 2^53)")
    return out


def check_point(paper: Any, quantity: Any, point: Mapping[str, Any]) -> bool:
    """Whether a sampled ``point`` (symbol values) lies in the admissible domain (ranges and constraints)."""
    try:
        read_values(paper, quantity, point)
    except InputError:
        return False
    return True


# ---------------------------------------------------------------------------------------------------- draws
def spread(rng: np.random.Generator, n: int, low: float, high: float, *, log: bool | None = None,
           integer: bool = False, ends: float = ENDS) -> np.ndarray:
    """``n`` values over [low, high]: log-uniform when 0 < low and high/low >= 100 (or ``log``), else uniform; each
    end taken exactly with probability ``ends`` (the boundaries belong to the domain); integers rounded."""
    if not (math.isfinite(low) and math.isfinite(high) and low <= high):
        raise ValueError(f"spread: need finite low <= high, got [{low}, {high}]")
    use_log = (low > 0 and high / low >= 100) if log is None else log
    u = rng.uniform(size=n)
    if use_log:
        x = np.exp(np.log(low) + u * (np.log(high) - np.log(low)))
    else:
        x = low + u * (high - low)
    pick = rng.uniform(size=n)
    x = np.where(pick < ends, low, np.where(pick > 1 - ends, high, x))
    return np.clip(np.rint(x), math.ceil(low), math.floor(high)) if integer else x


def span(prm: Param, *, wide: float = WIDE) -> tuple[float, float]:
    """The finite range a draw covers for ``prm``: its bounds, an open or missing end replaced by the typical value
    (the default, else 1) divided or multiplied by ``wide`` (an open end at 0 is approached, never reached)."""
    typical = abs(float(prm.default)) if isinstance(prm.default, (int, float)) and prm.default else 1.0
    low = prm.low if prm.low is not None else -typical * wide
    high = prm.high if prm.high is not None else typical * wide
    if prm.low is not None and prm.low_open:
        low = prm.low + (typical / wide if prm.low == 0 else abs(prm.low) * 1e-9)
    if prm.high is not None and prm.high_open:
        high = prm.high - abs(prm.high) * 1e-9
    if prm.kind is int:
        low, high = math.ceil(low), math.floor(high)
    return float(low), float(max(high, low))


def draw_points(rng: np.random.Generator, n: int, draw: Callable[[np.random.Generator], dict], fixed: Mapping,
                accept: Callable[[dict], bool], *, tries: int = 50) -> list[dict]:
    """``n`` points ``draw(rng)`` with the ``fixed`` values put in, keeping those ``accept`` admits; at most
    ``tries`` n draws (fewer points when the fixed values leave little room)."""
    out: list[dict] = []
    for _ in range(tries * max(n, 1)):
        if len(out) >= n:
            break
        p = {**draw(rng), **fixed}
        if accept(p):
            out.append(p)
    return out


def mix(rng: np.random.Generator, n: int, parts: Sequence[tuple[float, Callable[[np.random.Generator, int], list]]]
        ) -> list[dict]:
    """``n`` points from several samplers ``(share, sample(rng, k))``, in proportion to their shares."""
    total = sum(s for s, _ in parts)
    out: list[dict] = []
    for i, (share, sample) in enumerate(parts):
        k = n - len(out) if i == len(parts) - 1 else int(round(n * share / total))
        out += sample(rng, k)
    return out[:n]


def widened(paper: Any, quantity: Any, rng: np.random.Generator, points: Sequence[Mapping], fixed: Mapping
            ) -> list[dict]:
    """The quantity's own points (``Quantity.sample``, where its measurement runs) carried over the whole domain:
    in a copy of each, every symbol with a declared range (:func:`symbol_params`: the quantity's ``domain`` or the
    paper's option of that name; a symbol with no declared range, such as an overlap bound to others by
    realisability, keeps its value) and not ``fixed`` is redrawn over its whole span (:func:`spread`: log-uniform
    over wide ranges, each end with probability ENDS); a copy outside the admissible set (:func:`check_point`)
    is drawn again, at most ``tries`` times, then dropped."""
    ranges = {k: prm for k, prm in symbol_params(paper, quantity).items()
              if k not in fixed and (k in (getattr(quantity, "domain", None) or {})
                                     or (paper is not None and paper.param(k) is not None))}
    if not ranges:
        return []
    spans = {k: span(prm) for k, prm in ranges.items()}
    out = []
    for p in points:
        for _ in range(20):
            q = dict(p)
            for k, (lo, hi) in spans.items():
                v = spread(rng, 1, lo, hi, integer=ranges[k].kind is int)[0]
                q[k] = int(v) if ranges[k].kind is int else float(v)
            if check_point(paper, quantity, q):
                out.append(q)
                break
    return out
