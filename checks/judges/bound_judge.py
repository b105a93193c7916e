"""The judge of stated upper bounds with an unspecified constant (``kind = "bound"``), for every paper: a bound
LHS <= K g(variables; derived constants) is fitted where the data begin and extrapolated where they end
(:func:`bound`); every comparison word in its text is computed."""
from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy as sp

from attnverify.checks.claims import ClaimVerdict
from attnverify.checks.judges.common import Z, evidence_of, fmt, point_parts, relation
from attnverify.checks.reason import Math, Number, bracket, pm, reason
from attnverify.checks.stated import StatedClaim


# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class BoundPoint:
    """One point of a :class:`BoundSeries`: the value ``along`` of the series' variable, and the sub-points it
    stands for (the maximum of LHS/bound over them is the point's ratio): ``at`` (variable name -> array of values,
    one per sub-point; +inf allowed, the bound is then taken in the limit), the left-hand side's certified bracket
    ``lower`` <= LHS <= ``upper`` there, and optionally the LHS of independent repeat measurements (``samples``: a
    tuple of arrays, e.g. smaller particle samples) from which the judge takes its uncertainties."""

    along: float
    at: dict
    lower: np.ndarray
    upper: np.ndarray
    samples: tuple = ()


@dataclass(frozen=True)
class BoundSeries:
    """The points along which a bound is extrapolated, in increasing order of ``variable``: the first ``n_fit``
    points fit the unspecified constant (a point must not be a fit point of one series and a held-out point of
    another), the rest are held out; the growth is measured from point ``tail_from`` on (default: the held-out
    points). ``scale``: "log" (the ratio is compared as a power of the variable) or "linear" (as an exponential)."""

    name: Any                       # a Reason (str: words in the typesetting convention)
    variable: str
    points: tuple
    n_fit: int
    scale: str = "log"
    tail_from: int | None = None


def _bound_shape(stated: StatedClaim, derived: dict) -> tuple[Any, Any, list]:
    """(K, g, variables): the stated expression parsed with its variables, constants and the ``derived`` constant
    names; it must be K g with one unspecified constant K entering as a factor (ValueError otherwise)."""

    from attnverify.checks.expression_reader import parse_expression

    variables = list(stated.get("variables", []))
    constants = list(stated.get("constants", []))
    names = {n: sp.Symbol(n, positive=True) for n in (*variables, *constants, *derived)}
    expr = parse_expression(stated.stated, names, f"claim {stated.id!r}, field 'stated'")
    unknown = [c for c in constants if c not in derived]
    if len(unknown) != 1:
        raise ValueError(f"the bound has {len(unknown)} unspecified constants ({', '.join(unknown) or 'none'}); "
                         "one multiplicative constant can be fitted")
    K = names[unknown[0]]
    g = sp.simplify(expr / K)
    if K in g.free_symbols:
        raise ValueError(f"the unspecified constant {K} does not enter the bound as a factor")
    g = g.subs({names[n]: sp.Float(v, 17) for n, v in derived.items()})
    return K, g, [names[v] for v in variables]


def read_bound(stated: StatedClaim, derived: Sequence[str]) -> None:
    """A claim's ``reads`` for a bound (attnverify.checks.claims.claim): the stated form read as :func:`bound` will
    read it, with the constants ``derived`` taken from the derivation: ValueError unless it is K g with one
    unspecified constant K as a factor."""
    _bound_shape(stated, dict.fromkeys(derived, 1.0))


@functools.lru_cache(maxsize=256)
def _limit_at_infinity(h: Any, v: Any) -> Any:
    """lim h as v -> +inf (SymPy; a pure function of the two expressions, memoised: a bound is evaluated at many
    points, each taking the same limits)."""
    return sp.limit(h, v, sp.oo)


@functools.lru_cache(maxsize=256)
def _lambdified(free: tuple, h: Any) -> Any:
    """h as a NumPy function of the symbols ``free`` (memoised, as :func:`_limit_at_infinity`)."""
    return sp.lambdify(list(free), h, "numpy")


def _evaluate_shape(g: Any, variables: list, at: dict) -> np.ndarray:
    """g at the sub-points ``at`` (name -> array), with a variable at +inf taken as the limit."""
    n = len(next(iter(at.values())))
    out = np.empty(n)
    keys = [v for v in variables if v.name in at]
    vals = {v.name: np.broadcast_to(np.asarray(at[v.name], dtype=float), (n,)) for v in keys}
    infinite = {v.name for v in keys if np.any(np.isinf(vals[v.name]))}
    groups: dict = {}
    for i in range(n):
        groups.setdefault(tuple(np.isinf(vals[name][i]) for name in sorted(infinite)), []).append(i)
    for pattern, idx in groups.items():
        h = g
        for name, is_inf in zip(sorted(infinite), pattern):
            if is_inf:
                h = _limit_at_infinity(h, next(v for v in keys if v.name == name))
        free = tuple(v for v in keys if v in h.free_symbols)
        f = _lambdified(free, h)
        out[idx] = np.asarray(f(*[vals[v.name][idx] for v in free]), dtype=float) * np.ones(len(idx))
    return out


def _series_ratios(series: BoundSeries, g: Any, variables: list) -> dict:
    """Per point: the largest LHS/g over its sub-points from the upper ends (``hi``), from the lower ends at the same
    sub-point (``lo``), the sub-point (``where``), and the same ratio for each repeat sample (``rep``)."""
    hi, lo, where, rep, shape = [], [], [], [], []
    for pt in series.points:
        gv = _evaluate_shape(g, variables, pt.at)
        if not np.all(np.isfinite(gv)) or np.any(gv <= 0):
            raise ValueError(f"the bound is not finite and positive at every point of {series.name}")
        r = np.asarray(pt.upper, dtype=float) / gv
        j = int(np.argmax(r))
        hi.append(float(r[j]))
        lo.append(float(np.asarray(pt.lower, dtype=float)[j] / gv[j]))
        where.append({k: float(np.broadcast_to(np.asarray(v, dtype=float), gv.shape)[j]) for k, v in pt.at.items()})
        shape.append(float(gv[j]))
        rep.append([float(np.max(np.asarray(s, dtype=float) / gv)) for s in pt.samples])
    return {"hi": np.array(hi), "lo": np.array(lo), "where": where, "rep": rep, "g": np.array(shape)}


def _growth(x: np.ndarray, r: np.ndarray) -> float:
    """Least-squares slope of log r against x."""
    return float(np.polyfit(x, np.log(np.maximum(r, 1e-300)), 1)[0]) if len(x) >= 2 else float("nan")


def _where_text(point: dict) -> str:
    return ", ".join(f"{k} = {'inf' if math.isinf(v) else fmt(v, 4)}" for k, v in point.items())


def _lhs(what: Any) -> Any:
    """The left-hand side as a part: a SymPy object or Math as mathematics, words as they are."""
    return what if isinstance(what, (str, Math)) else Math(what)


def _unit(row: dict) -> Math:
    """The scale a series' growth is measured on: ``log beta`` (a power) or ``t`` (an exponential rate)."""
    x = sp.Symbol(s_var(row))
    return Math(sp.log(x) if row["growth_unit"].startswith("log") else x)


def _power(row: dict, exponent: float) -> Math:
    """The series variable to a measured power (``beta^-0.54``), or e^(rate * variable), as mathematics."""
    x = sp.Symbol(s_var(row))
    e = sp.Float(float(f"{exponent:.3g}"), 3)
    return Math(x ** e if row["growth_unit"].startswith("log") else sp.exp(e * x, evaluate=False))


def bound(stated: StatedClaim, series: Sequence[BoundSeries], *, derived: dict | None = None, z: float = Z,
          what: str = "the left-hand side") -> ClaimVerdict:
    """A stated upper bound LHS <= K g(variables; derived constants), K unspecified ("<~"), judged one way for every
    bound: fitted where the data begin, extrapolated where they end.

    * K = the largest LHS/g over the fit points of every series (certified upper ends): the smallest constant the
      bound needs where it is fitted.
    * Along each series the held-out points (after its first ``n_fit``) give the excess LHS/(K g) from the
      certified *lower* ends, and the growth: the least-squares slope of log(LHS/g) against the variable (``log``
      scale: a power; ``linear``: an exponential rate) over the held-out points.
    * Uncertainties from the repeat samples of each point (their own K, excess and slope): u_excess, se_slope (0
      without samples).
    * ``refuted`` when a series has a held-out excess > 1 + z u_excess *and* a growth > z se_slope over the tail and
      over its last half: the ratio exceeds every constant fitted before and keeps growing to the end (a ratio that
      rises and levels off, as a valid bound's does before its constant is reached, stops growing); the
      counterexample is that point, with the bracket. se_slope is at least what the brackets' widths allow.
    * otherwise ``not_refuted``: the text says how loose the bound is (the largest held-out excess, and a negative
      growth as the factor by which it loosens).
    ``derived``: name -> value of the constants the stated form takes from our derivation (not fitted)."""
    derived = dict(derived or {})
    ev = evidence_of(stated, derived_constants=derived)
    bad = [n for n, v in derived.items() if v is None or not math.isfinite(float(v))]
    if bad:
        return ClaimVerdict("inconclusive", f"the derived constant {bad[0]} is not available", evidence=ev)
    try:
        K, g, variables = _bound_shape(stated, derived)
        ratios = [_series_ratios(s, g, variables) for s in series]
    except ValueError as exc:
        return ClaimVerdict("inconclusive", f"the stated bound cannot be evaluated: {exc}", evidence=ev)
    fits = [(float(np.max(r["hi"][:s.n_fit])), s, r) for s, r in zip(series, ratios) if s.n_fit > 0]
    if not fits:
        return ClaimVerdict("inconclusive", "no fit points for the unspecified constant", evidence=ev)
    K_fit, fit_series, fit_r = max(fits, key=lambda x: x[0])
    j_fit = int(np.argmax(fit_r["hi"][:fit_series.n_fit]))
    n_rep = min((len(rr) for r in ratios for rr in r["rep"]), default=0)
    K_rep = [max(float(np.max([rr[k] for rr in r["rep"][:s.n_fit]])) for s, r in zip(series, ratios) if s.n_fit > 0)
             for k in range(n_rep)]
    summary, names, refutations = [], [], []      # names: each summary row's series, typed
    for s, r in zip(series, ratios):
        held = np.arange(s.n_fit, len(s.points))
        if held.size == 0:
            continue
        x = np.array([p.along for p in s.points], dtype=float)
        xs = np.log(x) if s.scale == "log" else x
        mid = np.sqrt(r["hi"] * np.maximum(r["lo"], 1e-300))
        start = s.n_fit if s.tail_from is None else s.tail_from
        tail = np.arange(start, len(x)) if len(x) - start >= 2 else np.arange(max(len(x) - 2, 0), len(x))
        late = tail[len(tail) // 2:] if len(tail) >= 4 else tail
        slope, slope_late = _growth(xs[tail], mid[tail]), _growth(xs[late], mid[late])
        rep_slopes = [_growth(xs[tail], np.array([rr[k] for rr in r["rep"]])[tail]) for k in range(n_rep)]
        # the slope's resolution: the repeat samples' spread, at least what the brackets allow over the tail
        halfwidth = np.max((r["hi"][tail] - r["lo"][tail]) / np.maximum(r["hi"][tail] + r["lo"][tail], 1e-300))
        floor = 2 * (halfwidth + 64 * np.finfo(float).eps) / max(float(np.ptp(xs[tail])), 1e-300)
        se = max(max((abs(v - slope) for v in rep_slopes if math.isfinite(v)), default=0.0), floor)
        exc = r["lo"][held] / K_fit
        rep_exc = [np.array([r["rep"][i][k] for i in held]) / K_rep[k] for k in range(n_rep)]
        u = np.array([max(max((abs(e[m] - exc[m]) for e in rep_exc), default=0.0), 64 * np.finfo(float).eps)
                      for m in range(held.size)])
        m = int(np.argmax(exc - 1 - z * u))
        unit = s.variable if s.scale == "linear" else f"log {s.variable}"
        row = {"series": str(s.name), "K": K_fit, "max_excess": float(np.max(exc)), "excess_uncertainty": float(u[m]),
               "growth": slope, "growth_late": slope_late, "growth_se": se, "growth_unit": unit, "worst": r["where"][held[m]],
               "lhs_bracket": [float(r["lo"][held[m]] * r["g"][held[m]]), float(r["hi"][held[m]] * r["g"][held[m]])],
               "bound_at_worst": float(K_fit * r["g"][held[m]])}
        summary.append(row)
        names.append(s.name)
        if exc[m] > 1 + z * u[m] and min(slope, slope_late) > z * se:
            refutations.append(len(summary) - 1)
    ev["stated"].update(K_fitted=K_fit, K_fitted_at=_where_text(fit_r["where"][j_fit]), series=summary)
    what = _lhs(what)
    fitted = reason("K = ", Number(K_fit), " (the smallest constant valid at the fit points, largest at ",
                    point_parts(fit_r["where"][j_fit]), ")")
    if refutations:
        worst = max(refutations, key=lambda i: summary[i]["max_excess"])
        w = summary[worst]
        growth = reason("LHS/bound grows like ", _power(w, w["growth"]), " (", pm(w["growth"], w["growth_se"], digits=3),
                        ")")
        return ClaimVerdict(
            "refuted", reason(what, " exceeds the stated bound with ", fitted, ": along ", names[worst], " the "
                              "certified lower end is ", Number(w["max_excess"], digits=3), " times the bound at ",
                              point_parts(w["worst"]), ", and ", growth, ": no constant fitted before the held-out points "
                              "keeps it below"),
            condition=reason(point_parts(w["worst"]), ": ", what, " in ", bracket(*w["lhs_bracket"]), " (certified), above ",
                             Math(sp.Symbol("K") * sp.Symbol("g")), " = ", Number(w["bound_at_worst"]), " by a factor ",
                             pm(w["max_excess"], w["excess_uncertainty"]), "; ", growth),
            evidence=ev)
    items = []
    for row, name in zip(summary, names):
        rel = relation(row["max_excess"], 1.0, z * row["excess_uncertainty"])
        trend = row["growth"]
        if trend < -z * row["growth_se"]:
            loose = ("loose by a factor ", _power(row, trend))
        elif trend > z * row["growth_se"]:
            loose = ("the ratio grows (", Number(trend, digits=3), " per ", _unit(row), "; ",
                     Number(row["growth_late"], digits=3), " over the last half) but ",
                     "stays " + rel + " the fitted bound" if row["max_excess"] <= 1 + z * row["excess_uncertainty"]
                     else "levels off")
        else:
            loose = ("sharp along ", _unit(row), " (growth ", pm(trend, row["growth_se"], digits=3), ")")
        items.append(("along ", name, ": ", what, " reaches at most ",
                      pm(row["max_excess"], row["excess_uncertainty"]), " times the bound (", rel, " it), ", *loose))
    return ClaimVerdict("not_refuted", reason("an upper bound consistent with the evidence, with ", fitted, ":",
                                              items=items), evidence=ev)


def s_var(row: dict) -> str:
    """The variable of a series summary row whose growth is a power (``log beta`` -> ``beta``)."""
    return row["growth_unit"].removeprefix("log ")
