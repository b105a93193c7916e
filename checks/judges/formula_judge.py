"""The judge of a stated closed form (``kind = "formula"``): a SymPy proof that it is the derived one, a certified
(Arb) counterexample confirmed by the measurement, or, where neither is found, the Arb evidence of agreement.

Every free symbol of the stated form S, the derived form D and what the measurement estimates (``measured_as``, R)
is bound at every point before any of them is evaluated: a symbol shared by S and D (eps^2 in a risk) cancels in
S - D but not in S or D alone. The points are half the quantity's own ``sample`` (where its measurement runs) and
half those points carried over the whole admissible domain (:func:`attnverify.checks.domain.widened`: every symbol
with a declared range redrawn log-uniformly over it, the ends included), with the claim's ``at`` values fixed
everywhere (in the search and in the measurement alike).
"""
from __future__ import annotations

import math
from typing import Any

from attnverify.checks.claims import ClaimVerdict
from attnverify.checks.judges.common import (Z, disagreement, evidence_of, how_parts, point_parts, sides_disagree,
                                             symbol_math)
from attnverify.checks.domain import widened
from attnverify.checks.judges.pooling import Pool, calls_needed, grow
from attnverify.checks.reason import Number, bracket, pm, reason
from attnverify.checks.stated import StatedClaim

MIN_AGREE = 16          # points of agreement inside tight Arb balls that make the evidence of a true formula


def stated_expression(stated: StatedClaim, quantity: Any, options: dict) -> Any:
    """The stated formula as a SymPy expression in the quantity's symbols, its aliases (``w``) replaced by their
    derived expressions and the symbols fixed by ``at`` substituted (InputError naming the file, the claim and the
    field on a bad expression)."""
    import sympy as sp

    from attnverify.checks.expression_reader import parse_expression

    alias_symbols = {name: sp.Symbol(name) for name in quantity.aliases}
    where = f"{stated.origin + ': ' if stated.origin else ''}claim {stated.id!r}, field 'stated'"
    expr = parse_expression(stated.stated, {**quantity.symbols, **alias_symbols}, where)
    expr = expr.subs({alias_symbols[n]: f(**options) for n, f in quantity.aliases.items()})
    return expr.subs(fixed_symbols(quantity, stated))


def fixed_symbols(quantity: Any, stated: StatedClaim) -> dict:
    """The symbols a claim's ``at`` table fixes (symbol -> its exact value: a decimal is the Rational it spells, so
    no 15-digit Float arithmetic rounds a difference away before the proof or the balls see it)."""
    from attnverify.checks.expression_reader import exact_number

    return {quantity.symbols[k]: exact_number(v) for k, v in stated.at.items() if k in quantity.symbols}


def _paper_of(stated: StatedClaim) -> Any:
    """The registered paper of the claim's model, or None (a stand-in quantity of no paper)."""
    from attnverify.checks.params import InputError
    from attnverify.checks.registry import paper

    try:
        return paper(stated.model)
    except (InputError, KeyError, ValueError):
        return None


def _where(point: dict, quantity: Any) -> tuple:
    """A tested point as parts (the quantity's own symbols, values with 6 significant digits)."""
    return point_parts(point, digits=6, symbols=quantity.symbols)


def _ranges(points: list, symbols: dict) -> list:
    """The range each symbol covers over ``points``, as parts: ``beta in [0.2, 5]``, or ``beta = 1`` when fixed."""
    out: list = []
    for i, k in enumerate(list(points[0]) if points else []):
        vals = [float(p[k]) for p in points]
        lo, hi = min(vals), max(vals)
        name = symbol_math(k, symbols)
        out += [", "] * bool(i) + ([name, " = ", Number(lo, digits=3)] if lo == hi
                                   else [name, " in ", bracket(lo, hi, digits=3)])
    return out


def _certified(lo: float, hi: float) -> Number:
    """A certified enclosure [lo, hi] rounded outward to 6 significant digits: the printed bracket contains it."""
    from attnverify.theory.certified import outward

    a, b = outward(lo, hi, 6)
    return bracket(float(a), float(b), digits=6)


def _pilots(candidates: list, n: int) -> list:
    """Up to ``n`` distinct candidates to measure first: half with the largest |S - D|, the rest with the largest
    |S - D| relative to |S| + |D|; the measurement's own standard error then ranks them."""
    by_gap = sorted(candidates, key=lambda b: -b.gap)
    by_rel = sorted(candidates, key=lambda b: -b.gap / max(abs(b.stated) + abs(b.derived), 1e-300))
    out: list = []
    for b in [*by_gap[:(n + 1) // 2], *by_rel]:
        if len(out) >= n:
            break
        if all(b is not c for c in out):
            out.append(b)
    return out


class _Sides:
    """S, D and R at a point (Arb midpoints), and what the measurement there is compared with."""

    def __init__(self, S: Any, D: Any, R: Any, syms: list) -> None:
        self.S, self.D, self.R, self.syms = S, D, R, syms

    def at(self, point: dict) -> tuple[float, float, float]:
        from attnverify.checks.judges.proof import arb_values

        s, d = arb_values(self.S, self.syms, [point])[0], arb_values(self.D, self.syms, [point])[0]
        r = d if self.R is self.D else arb_values(self.R, self.syms, [point])[0]
        return s, d, r

    def finite_share(self, point: dict) -> float:
        """|R - D| / (|R| + |D|) at the point: the part of the value its finite-size terms make (inf where not
        finite); 0 for a quantity without them."""
        if self.R is self.D:
            return 0.0
        _, d, r = self.at(point)
        value = abs(r - d) / max(abs(r) + abs(d), 1e-300)
        return value if math.isfinite(value) else math.inf


def _against(r: float, d: float, finite: bool) -> tuple:
    """What the measurement is compared with, as parts: the derived value (with its finite-size terms, and then the
    limit too)."""
    if finite:
        return ("the derived value with its finite-size terms at this size, ", Number(r, digits=6), " (the limit is ",
                Number(d, digits=6), ")")
    return ("the derived ", Number(r, digits=6))


def formula(stated: StatedClaim, quantity: Any, options: dict, rng: Any, *, n_points: int = 64,
            n_confirm: int = 4, z: float = Z) -> ClaimVerdict:
    """A stated formula S against the derived D (``quantity.derive(**options)``) and the measurement.

    1. S - D cancels to 0: holds, once the measurement agrees with D (or with R, what it estimates: ``measured_as``)
       at one measurable point; inconclusive if not.
    2. S - D in Arb balls at ``n_points`` points of the whole domain (module docstring). A ball that excludes 0
       certifies a difference. Of the certified points where the measurement can run (``quantity.measurable``;
       without it, the quantity's own sample), ``n_confirm``
       are measured once (pilots), in turn: a pilot whose one call already refutes (below) decides at once;
       otherwise they are ranked by |S - D| in units of their measured standard error, and at
       each in turn the measurement grows (``quantity.repeats`` calls pooled at most, :mod:`.pooling`) until it
       resolves |S - D|: refuted at the first point where the measurement M agrees with R within z se and differs
       from S + (R - D) (the stated form with the same finite-size terms) by more than z se; inconclusive when M
       and R disagree (our own error) or no point resolves the difference within the budget.
    3. No point separates S and D in real balls, but S is certifiably not real (complex Arb balls) at some where D
       is real: a certified difference, refuted once the measurement agrees with D (R) at one of them
       (:func:`_not_real`). Otherwise no point separates S and D: the harder SymPy proof
       (:func:`.proof.prove_equal`: rewrites in exp, log and atan, cancel, simplify) gives holds as in 1. Without a proof, S and D agreeing inside tight Arb balls at
       MIN_AGREE points or more is not_refuted with that evidence (once the measurement agrees with the derivation
       at one point); otherwise inconclusive."""
    import sympy as sp

    from attnverify.checks.judges.proof import balls, cancels, not_real, prove_equal
    S = stated_expression(stated, quantity, options)
    fixed = fixed_symbols(quantity, stated)
    D = sp.sympify(quantity.derive(**options)).subs(fixed)
    R = sp.sympify(quantity.measured_as(**options)).subs(fixed) if quantity.measured_as else D
    ev = evidence_of(stated, quantity=quantity.name, options={k: v for k, v in options.items()},
                     stated_expression=sp.sstr(S), derived_expression=sp.sstr(D))
    fixed_values = {quantity.symbols[k].name: v for k, v in stated.at.items() if k in quantity.symbols}  # floats
    syms = sorted(S.free_symbols | D.free_symbols | R.free_symbols, key=lambda s: s.name)
    core = quantity.sample(rng, n_points // 2, fixed_values) if quantity.sample else []
    points = [*core, *widened(_paper_of(stated), quantity, rng, quantity.sample(rng, n_points - len(core),
                                                                                fixed_values), fixed_values)] \
        if quantity.sample else []
    sides = _Sides(S, D, R, syms)

    finite = R is not D and R != D
    measurable = core if quantity.measurable is None else [p for p in points if quantity.measurable(p)]

    what = "the derived value with its finite-size terms" if finite else "the derived value"

    def confirmed(route: str, head: str) -> ClaimVerdict:
        if quantity.measure is None or not measurable:
            return ClaimVerdict("holds" if route else "not_refuted", reason(*head, " (no measurement is available "
                                                                            "to confirm the derivation)"), evidence=ev)
        # one test, at the steadiest point (not the first of several that agrees: each more try would raise the
        # chance that a wrong derivation passes)
        point = min(measurable, key=sides.finite_share)
        m = quantity.measure({**options, **point}, rng)
        s, d, r = sides.at(point)
        ev["stated"].update(point=point, measured=m.value, measured_se=m.se, derived=d, measured_as=r)
        gap = sides_disagree(r, m, z, rtol=1e-12, what=what)
        if gap:
            return ClaimVerdict("inconclusive", reason(*head, ", but at ", *_where(point, quantity), " ", gap,
                                                       *((" (the point whose finite-size terms are the smallest part "
                                                          "of the value)",) if finite else ())), evidence=ev)
        return ClaimVerdict("holds" if route else "not_refuted",
                            reason(*head, "; the measurement agrees at ", *_where(point, quantity), " (",
                                   pm(m.value, m.se, digits=6), " against ", *_against(r, d, finite),
                                   *((", ", *how_parts(m, brackets=False)) if m.how else ()), ")"),
                            evidence=ev)

    route = "cancel" if cancels(S, D) else None
    if route:
        ev["stated"]["proof"] = route
        return confirmed(route, ("SymPy proves the stated formula identical to the derived one",))
    found = balls(S, D, syms, points) if points else []
    certified = [b for b in found if b.certified]
    ev["stated"]["certified_points"] = len(certified)
    if not certified:
        off = [b for b in found if not math.isfinite(b.stated) and math.isfinite(b.derived)]
        nonreal = not_real(S, syms, [b.point for b in off]) if off and not _odd_root(S) else []
        if nonreal:
            return _not_real(quantity, options, rng, sides, finite, nonreal, len(found), measurable, z, ev)
        route = prove_equal(S, D)
        if route:
            ev["stated"]["proof"] = route
            how = {"rewrite": " (after rewriting in exp, log and atan)", "simplify": "", "cancel": ""}[route]
            return confirmed(route, ("SymPy proves the stated formula identical to the derived one" + how,))
        agree = [b for b in found if b.agrees]
        tiny = [b for b in found if b.tiny and not b.agrees]      # both forms below the precision: no evidence
        if len(agree) >= MIN_AGREE and len(agree) + len(tiny) == len(found):
            radius = max(b.relative if b.relative is not None else
                         b.radius / max(abs(b.stated) + abs(b.derived), 1e-300) for b in agree)
            ev["stated"]["negligible_points"] = len(tiny)
            ev["stated"].update(agreeing_points=len(agree), largest_relative_radius=radius)
            return confirmed("", ("SymPy could not prove the stated formula identical to the derived one, but the two "
                                  "agree inside Arb balls (radius at most ", Number(radius, digits=2), " relative) at "
                                  f"all {len(agree)} points drawn over the domain (",
                                  *_ranges([b.point for b in agree], quantity.symbols), ")",
                                  *((f"; at {len(tiny)} more both are 0 to the working precision",) if tiny else ()),
                                  ": no counterexample, no proof"))
        return ClaimVerdict("inconclusive", reason(
            "SymPy could not prove the stated formula identical to the derived one, and no sampled point separates "
            "them (", *_unseparated(found), ")"), evidence=ev)
    if quantity.measure is None:
        top = certified[0]
        return ClaimVerdict("inconclusive", reason(
            "the stated formula differs from the derived one (certified: stated minus derived lies in ",
            _certified(top.lo, top.hi), " at ", *_where(top.point, quantity),
            f"), but no measurement of {quantity.name} is available to confirm it"), evidence=ev)
    candidates = [b for b in certified if any(b.point == p for p in measurable)]
    if candidates and not any(b.gap > 0 for b in candidates):    # certified in Arb, but below the smallest double
        return ClaimVerdict("inconclusive", reason(
            f"the stated formula differs from the derived one (certified in Arb at {len(certified)} points, e.g. at ",
            *_where(candidates[0].point, quantity), "), but only by less than the smallest double where the "
            "measurement can run, which no measurement can resolve"), evidence=ev)
    comparable = [b for b in candidates if b.gap > 0 and all(math.isfinite(v) for v in sides.at(b.point))]
    if candidates and not comparable:   # beyond double precision there: no measurement can be compared with them
        top = max(candidates, key=lambda b: b.gap)
        return ClaimVerdict("inconclusive", reason(
            f"the stated formula differs from the derived one (certified at {len(certified)} points, e.g. stated minus "
            "derived lies in ", _certified(top.lo, top.hi), " at ", *_where(top.point, quantity), f"), but at the "
            f"{len(candidates)} of them where the measurement can run the stated or derived value (with its "
            "finite-size terms) is not a finite double, so no measurement can be compared with them"), evidence=ev)
    candidates = comparable
    if not candidates:
        top = max(certified, key=lambda b: b.gap)
        return ClaimVerdict("inconclusive", reason(
            f"the stated formula differs from the derived one (certified at {len(certified)} points, e.g. stated minus "
            "derived lies in ", _certified(top.lo, top.hi), " at ", *_where(top.point, quantity),
            "), but none of them lies where the measurement can run"), evidence=ev)
    # the pilots are chosen among the steadier half of the candidates (the smaller share of finite-size terms, where
    # the finite-size value is the closest to what a measurement at that size gives)
    steady = sorted(candidates, key=lambda b: sides.finite_share(b.point))[:max(n_confirm, len(candidates) // 2)]
    return _confirm(stated, quantity, options, rng, sides, finite, _pilots(steady, n_confirm), z, ev,
                    len(certified))


def _odd_root(expr: Any) -> bool:
    """Whether ``expr`` takes a power with a rational exponent of odd denominator (x**(1/3), x**(2/5)): a paper may
    mean the real root of a negative base, where SymPy's principal branch is complex, so being non-real there is no
    certified difference ((rho**3)**(1/3) is rho for every real rho under the real cube root)."""
    import sympy as sp

    return any(isinstance(e, sp.Pow) and e.exp.is_Rational and not e.exp.is_Integer and e.exp.q % 2 == 1
               for e in sp.preorder_traversal(expr))


def _unseparated(found: list) -> tuple:
    """Why no sampled point separates S and D, as parts: how far apart they are at most where both are finite reals
    (never an infinite bound), and at how many points the stated or the derived value is not a finite real."""
    whole = [b for b in found if math.isfinite(b.lo) and math.isfinite(b.hi)]
    parts: list = []
    if whole:
        worst = max(max(abs(b.lo), abs(b.hi)) for b in whole)
        parts += ["the stated and derived values differ by at most ", Number(worst, digits=2),
                  f" at {len(whole)} points, Arb balls"]
    for side, n in (("stated", sum(not math.isfinite(b.stated) for b in found)),
                    ("derived", sum(not math.isfinite(b.derived) for b in found))):
        if n:
            parts += ["; "] * bool(parts) + [f"the {side} form is not a finite real number at {n} of the "
                      f"{len(found)} sampled points (undefined there, or not certifiably real), so they cannot be "
                      "compared there"]
    return tuple(parts) or ("no sampled point could be evaluated",)


def _not_real(quantity: Any, options: dict, rng: Any, sides: _Sides, finite: bool, nonreal: list, n_points: int,
              measurable: list, z: float, ev: dict) -> ClaimVerdict:
    """Step 2 for a stated form certifiably not real (:func:`.proof.not_real`) at sampled points where the derived
    one is a finite real: a certified difference. Refuted when the measurement, at the first such point where it
    can run, agrees with the derived value (R, what it estimates): a real quantity has no non-real value;
    inconclusive when it disagrees (our own error), when none of the points is measurable, or with no
    measurement."""
    at = [b for b in nonreal if any(b.point == p for p in measurable)]
    top = (at or nonreal)[0]
    ev["stated"].update(not_real_points=len(nonreal), not_real_at=top.point, imaginary_part=[top.lo, top.hi])
    head = reason(f"the stated formula is not real-valued at {len(nonreal)} of the {n_points} sampled points, where "
                  "the derived one is real (certified: at ", *_where(top.point, quantity), " the stated value's "
                  "imaginary part lies in ", _certified(top.lo, top.hi), ", Arb)")
    if quantity.measure is None:
        return ClaimVerdict("inconclusive", head.add(f", but no measurement of {quantity.name} is available to "
                                                     "confirm the derived side"), evidence=ev)
    if not at:
        return ClaimVerdict("inconclusive", head.add(", but none of them lies where the measurement can run"),
                            evidence=ev)
    m = quantity.measure({**options, **top.point}, rng)
    _, d, r = sides.at(top.point)
    ev["stated"].update(point=top.point, measured=m.value, measured_se=m.se, derived=d, measured_as=r)
    what = "the derived value with its finite-size terms" if finite else "the derived value"
    gap = sides_disagree(r, m, z, rtol=1e-12, what=what)
    if gap:
        return ClaimVerdict("inconclusive", head.add("; there ", gap, ": ", disagreement(r).removesuffix(": "),
                                                     ", so the stated formula cannot be judged"), evidence=ev)
    return ClaimVerdict("refuted", head.add("; the measurement there, ", pm(m.value, m.se, digits=6), *how_parts(m),
                                            ", agrees with ", *_against(r, d, finite), ", a real number"),
                        condition=reason(*_where(top.point, quantity), ": stated not real (imaginary part in ",
                                         _certified(top.lo, top.hi), "), derived ", Number(d, digits=6),
                                         *((" (", Number(r, digits=6), " with the finite-size terms)") if finite
                                           else ()), ", measured ", pm(m.value, m.se, digits=6)), evidence=ev)


def _gap(row: dict) -> float:
    """|S - D| at a candidate point: the larger of the floats' difference and the certified ball's smallest |S - D|
    (the floats of S and D can round to one double when they differ by less than its last digit)."""
    return max(abs(row["stated"] - row["derived"]), row["ball"].gap)


def _distance(m: Any, value: float) -> float:
    """|M - value| in standard errors of M (:func:`attnverify.checks.stats.scores`: inf for a different value
    measured exactly)."""
    from attnverify.checks.stats import scores        # scipy.stats: not at import time

    return abs(float(scores(m.value - value, m.se)))


def _judged(row: dict, m: Any, need: float, quantity: Any, finite: bool, z: float, ev: dict,
            tried: list) -> ClaimVerdict | None:
    """The verdict at one measured point, or None when it decides nothing: refuted where the measurement M agrees
    with R within z se and lies more than z se from S + (R - D); inconclusive where M and R disagree (our own
    derivation and measurement). The point joins ``tried`` (the evidence)."""
    b, pool, s, d, r = row["ball"], row["pool"], row["stated"], row["derived"], row["measured_as"]
    shifted = s + (r - d)
    dist = _distance(m, shifted)
    tried.append({"point": b.point, "stated": s, "derived": d, "measured_as": r, "measured": m.value,
                  "se": m.se, "runs": pool.k, "runs_needed": need, "distance": dist, "gap": _gap(row),
                  "difference": [b.lo, b.hi]})
    ev["stated"]["tried"] = tried
    what = "the derived value with its finite-size terms" if finite else "the derived value"
    disagree = sides_disagree(r, m, z, rtol=1e-12, what=what)
    if disagree:
        return ClaimVerdict("inconclusive", reason(
            "at ", *_where(b.point, quantity), " ", disagree, ": our derivation and our measurement disagree, so the "
            "stated formula cannot be judged"), evidence=ev)
    if dist <= z:
        return None
    shifted_parts = (" (shifted by the same finite-size terms: ", Number(shifted, digits=6), ")") if finite else ()
    return ClaimVerdict(
        "refuted", reason(
            "the stated formula is not the derived one: at ", *_where(b.point, quantity),
            " stated minus derived lies in ", _certified(b.lo, b.hi), " (Arb, certified, printed outward), and the "
            "measurement ", pm(m.value, m.se, digits=6), *how_parts(m), " agrees with ", *_against(r, d, finite),
            " and is ", Number(dist, digits=3), " standard errors from the stated value", *shifted_parts),
        condition=reason(
            *_where(b.point, quantity), ": stated ", Number(s, digits=6), ", derived ", Number(d, digits=6),
            *((" (", Number(r, digits=6), " with the finite-size terms)") if finite else ()),
            ", measured ", pm(m.value, m.se, digits=6), " (", Number(dist, digits=3),
            *((" standard errors from the stated value with the same finite-size terms, ", Number(shifted, digits=6),
               ")") if finite else (" standard errors from the stated value)",))), evidence=ev)


def _confirm(stated: StatedClaim, quantity: Any, options: dict, rng: Any, sides: _Sides, finite: bool, pilots: list,
             z: float, ev: dict, n_certified: int) -> ClaimVerdict:
    """Step 2 of :func:`formula` from the pilot points on: measure, rank, grow, decide. A pilot whose one call
    already decides (it agrees with R and lies more than z se from the stated value) refutes at once: the pilots
    after it would only rank points for a growth that is not needed. A point where the measurement disagrees with
    R decides nothing and the next is tried; only when none refutes is the first disagreement the verdict."""
    budget = len(pilots) + max(int(quantity.repeats), 1) - 1
    rows, tried = [], []
    for b in pilots:
        pool = Pool({**options, **b.point})
        pool.add(quantity.measure(pool.values, rng))
        s, d, r = sides.at(b.point)
        row = {"ball": b, "pool": pool, "stated": s, "derived": d, "measured_as": r}
        rows.append(row)
        first = pool.measured()
        if not sides_disagree(r, first, z, rtol=1e-12) and _distance(first, s + (r - d)) > z:
            return _judged(row, first, calls_needed(first.se, _gap(row), z), quantity, finite, z, ev, tried)
    used, disagreed = len(pilots), None
    what = "the derived value with its finite-size terms" if finite else "the derived value"
    # points whose first call disagrees with R (an expansion beyond its range there) are grown last
    for row in sorted(rows, key=lambda w: (bool(sides_disagree(w["measured_as"], w["pool"].measured(), z, rtol=1e-12,
                                                                what=what)),
                                           -_gap(w) / max(w["pool"].measured().se, 1e-300))):
        pool, s, d = row["pool"], row["stated"], row["derived"]
        gap = _gap(row)
        first = pool.measured()
        need = calls_needed(first.se, gap, z)
        if need <= pool.k + (budget - used):
            before = pool.k
            m = grow(pool, quantity.measure, rng, gap, pool.k + budget - used, z)
            used += pool.k - before
        else:
            m = first
        verdict = _judged(row, m, need, quantity, finite, z, ev, tried)
        if verdict is not None and verdict.verdict == "refuted":
            return verdict
        disagreed = disagreed or verdict      # our derivation and measurement disagree here: the next point may decide
    if disagreed is not None:
        return disagreed
    best = max(tried, key=lambda t: t["gap"] / max(t["se"], 1e-300))
    short = min(tried, key=lambda t: t["runs_needed"])
    extra = () if short["runs_needed"] <= short["runs"] else (
        "; resolving it would need about ", Number(short["runs_needed"], digits=2), " runs of the measurement at the "
        f"best point, more than the budget of {budget}")
    return ClaimVerdict("inconclusive", reason(
        f"the stated formula differs from the derived one (certified at {n_certified} points; e.g. ",
        *_where(best["point"], quantity), ": stated minus derived lies in ", _certified(*best["difference"]),
        "), but the measurement (standard error ", Number(best["se"], digits=2),
        f") does not resolve the difference at the {len(tried)} points tried", *extra), evidence=ev)
