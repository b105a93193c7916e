"""The judge of a stated closed form (``kind = "formula"``): a SymPy proof that it is the derived one, or a
certified (Arb) counterexample confirmed by the measurement."""
from __future__ import annotations

import math
from typing import Any

from attnverify.checks.claims import ClaimVerdict
from attnverify.checks.judges.common import Z, Measured, evidence_of, fmt, sides_disagree
from attnverify.checks.stated import StatedClaim


def stated_expression(stated: StatedClaim, quantity: Any, options: dict) -> Any:
    """The stated formula as a SymPy expression in the quantity's symbols, its aliases (``w``) replaced by their
    derived expressions and the symbols fixed by ``at`` substituted (InputError naming the claim on a bad
    expression)."""
    import sympy as sp

    from attnverify.checks.stated import parse_expression

    alias_symbols = {name: sp.Symbol(name) for name in quantity.aliases}
    where = f"claim {stated.id!r}, field 'stated'"
    expr = parse_expression(stated.stated, {**quantity.symbols, **alias_symbols}, where)
    expr = expr.subs({alias_symbols[n]: f(**options) for n, f in quantity.aliases.items()})
    return expr.subs(fixed_symbols(quantity, stated))


def fixed_symbols(quantity: Any, stated: StatedClaim) -> dict:
    """The symbols a claim's ``at`` table fixes (symbol -> value)."""
    return {quantity.symbols[k]: v for k, v in stated.at.items() if k in quantity.symbols}


def formula(stated: StatedClaim, quantity: Any, options: dict, rng: Any, *, n_points: int = 48,
            n_confirm: int = 3, z: float = Z) -> ClaimVerdict:
    """A stated formula S against the derived D (``quantity.derive(**options)``) and the measurement.

    1. SymPy proves S = D identically: the formula holds if the measurement agrees with D at one sampled point
       (our derivation and our numerics agree); inconclusive if not.
    2. Otherwise S - D is evaluated in Arb ball arithmetic at ``n_points`` sampled points; a ball that excludes 0
       is a certified counterexample. At the (up to ``n_confirm``) points where S and D differ most, relative to
       D, the quantity is measured (M +- se): refuted at the first point where M agrees with what it estimates
       (D, or ``measured_as``) within z se and disagrees with S by more than z se plus the gap between D and
       ``measured_as``; inconclusive when no point resolves the difference, or when D and M disagree there.
    3. SymPy cannot decide and no point separates S from D: inconclusive, with the largest |S - D| bound found."""
    import numpy as np
    import sympy as sp

    from attnverify.theory.certified import interval_text
    from attnverify.theory.compare import equivalent, separate

    S = stated_expression(stated, quantity, options)
    fixed = fixed_symbols(quantity, stated)
    D = sp.sympify(quantity.derive(**options)).subs(fixed)
    ref = sp.sympify(quantity.measured_as(**options)).subs(fixed) if quantity.measured_as else D
    ev = evidence_of(stated, quantity=quantity.name, options={k: v for k, v in options.items()},
             stated_expression=sp.sstr(S), derived_expression=sp.sstr(D))
    fixed_values = {s.name: v for s, v in fixed.items()}
    points = quantity.sample(rng, n_points, fixed_values) if quantity.sample else []

    def measure_at(point: dict) -> tuple[Measured, float, float, float]:
        values = {**options, **point}
        subs = {quantity.symbols[k]: v for k, v in point.items() if k in quantity.symbols}
        m = quantity.measure(values, rng)
        return m, float(S.subs(subs)), float(D.subs(subs)), float(ref.subs(subs))

    def where(point: dict) -> str:
        return ", ".join(f"{k} = {fmt(v, 6)}" for k, v in point.items())

    if equivalent(S, D):
        if quantity.measure is None or not points:
            return ClaimVerdict("holds", "SymPy proves the stated formula identical to the derived one (no "
                                "measurement is available to confirm the derivation)", evidence=ev)
        m, _, d, r = measure_at(points[0])
        ev["stated"].update(point=points[0], measured=m.value, measured_se=m.se, derived=d)
        gap = sides_disagree(r, m, z, rtol=1e-12)
        if gap:
            return ClaimVerdict("inconclusive", f"SymPy proves the stated formula identical to the derived one, but "
                                f"at {where(points[0])} {gap}", evidence=ev)
        return ClaimVerdict("holds", f"SymPy proves the stated formula identical to the derived one; the measurement "
                            f"agrees at {where(points[0])} ({fmt(m.value, 6)} +- {fmt(m.se, 2)} against "
                            f"{fmt(r, 6)}, {m.how})", evidence=ev)
    syms = sorted((S - D).free_symbols | (ref - D).free_symbols, key=lambda s: s.name)
    seps = separate(S, D, [{s: p[s.name] for s in syms} for p in points])
    certified = [x for x in seps if x.certified]
    ev["stated"]["certified_points"] = len(certified)
    if not certified:
        worst = max((max(abs(x.lo), abs(x.hi)) for x in seps), default=0.0)
        return ClaimVerdict("inconclusive", f"SymPy could not prove the stated formula identical to the derived one, "
                            f"and no sampled point separates them (|stated - derived| <= {fmt(worst, 2)} at "
                            f"{len(seps)} points, Arb balls)", evidence=ev)
    if quantity.measure is None:
        top = certified[0]
        return ClaimVerdict("inconclusive", f"the stated formula differs from the derived one (certified: stated - "
                            f"derived in {interval_text(top.lo, top.hi)} at {where(top.point)}), but no "
                            f"measurement of {quantity.name} is available to confirm it", evidence=ev)
    scale = [abs(x.magnitude) / max(abs(x.b), 1e-300) for x in certified]
    order = list(np.argsort(scale)[::-1][:n_confirm])
    tried = []
    for i in order:
        point = {**certified[i].point, **{k: v for k, v in fixed_values.items() if k not in certified[i].point}}
        m, s_val, d_val, r_val = measure_at(point)
        tried.append({"point": point, "stated": s_val, "derived": d_val, "measured": m.value, "se": m.se})
        gap = sides_disagree(r_val, m, z, rtol=1e-12)
        if gap:
            ev["stated"]["tried"] = tried
            return ClaimVerdict("inconclusive", f"at {where(point)} {gap}: the stated formula cannot be judged",
                                evidence=ev)
        allowance = abs(r_val - d_val)
        dist = (abs(s_val - m.value) - allowance) / m.se if m.se > 0 else math.inf
        if dist > z:
            ev["stated"]["tried"] = tried
            c = certified[i]
            return ClaimVerdict(
                "refuted", f"the stated formula is not the derived one: at {where(point)} stated - derived lies in "
                f"{interval_text(c.lo, c.hi)} (Arb, certified, printed outward), and the measurement {fmt(m.value, 6)} +- "
                f"{fmt(m.se, 2)} ({m.how}) agrees with the derivation and is {fmt(dist, 3)} standard errors from "
                f"the stated value",
                condition=f"{where(point)}: stated {fmt(s_val, 6)}, derived {fmt(d_val, 6)}, measured "
                          f"{fmt(m.value, 6)} +- {fmt(m.se, 2)} ({fmt(dist, 3)} standard errors from the stated "
                          "value)", evidence=ev)
    ev["stated"]["tried"] = tried
    best = tried[0]
    return ClaimVerdict("inconclusive", f"the stated formula differs from the derived one (certified at "
                        f"{len(certified)} points; e.g. {where(best['point'])}: stated {fmt(best['stated'], 6)}, "
                        f"derived {fmt(best['derived'], 6)}), but the measurement (+- {fmt(best['se'], 2)}) does not "
                        f"resolve the difference at the {len(tried)} points tried", evidence=ev)
