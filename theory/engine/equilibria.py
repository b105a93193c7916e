r"""Equilibria of the reduced flow rho' = F(rho) = (I - rho rho^T) grad J(rho) on the closed unit ball, certified.

Where they are.  Inside the ball (|rho| < 1), F = 0 iff grad J = 0 (dot F = 0 with rho: (1 - |rho|^2) <rho, grad J>
= 0, so <rho, grad J> = 0 and then grad J = 0).  On the sphere |rho| = 1 (the query in the span of the
directions), F = 0 iff grad J is parallel to rho.

How they are certified (Arb ball arithmetic, python-flint, 128 bits; :mod:`.krawczyk`):

* k = 1: rho = +-1 are always equilibria; the interior ones are the zeros of J' in (-1, 1), every one enclosed by
  interval bisection and the interval Newton test (attnverify.theory.certified.root_boxes), as for Paper A.
* k = 2: interior zeros of grad J in the open disc by Krawczyk's test over [-1, 1]^2 (boxes outside the disc
  discarded); on the circle rho = (cos p, sin p) the zeros of the tangential component
  -sin p d1J + cos p d2J by interval Newton in p.  No equilibrium is missed: unresolved boxes are reported.
* k >= 3: interior zeros by Krawczyk's test; on the sphere S^{k-1} the zeros of the tangential component
  T(rho) = grad J - rho <rho, grad J> by Krawczyk's test in the 2k cube charts rho = w/|w|, w_j = +-1 and the other
  k - 1 coordinates free in [-CHART, CHART] (CHART = 17/16 > 1: the charts overlap, so a zero on a chart's edge lies
  inside a neighbour's; on a chart, T = 0 iff its k - 1 free components vanish, since <rho, T> = 0 and rho_j != 0).
  The chart's Jacobian follows from Hess J by the chain rule (dT/drho = Hess J - <rho, grad J> I - rho (grad J +
  Hess J rho)^T, drho/dw = (I - rho rho^T)/|w|), in ball arithmetic; an equilibrium found in two charts (their
  enclosures in rho intersect) is reported once.  No equilibrium is missed: unresolved boxes are reported.

Stability.  The Jacobian DF of the flow at an equilibrium has real eigenvalues (inside: DF = (I - rho rho^T) Hess J,
similar to a symmetric matrix; on the sphere: block triangular in (rho, tangent) with eigenvalue -2 <rho, grad J>
and the symmetric tangential block).  DF is enclosed on the equilibrium's box and its eigenvalue signs are counted
by Descartes' rule on its characteristic polynomial (:func:`.krawczyk.sign_counts`): attracting (all < 0),
repelling (all > 0), saddle, or undecided when a coefficient's ball holds 0.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import flint
import numpy as np
import sympy as sp
from flint import arb

import attnverify.theory.certified as C
from attnverify.theory.engine.krawczyk import sign_counts, zero_boxes
from attnverify.theory.refusals import OutsideCertifiedRange, named_values

PREC = 128
_OFFSET = sp.Rational(1234, 10000)        # the circle is searched on [-pi + offset, pi + offset]: no axis on an edge
CHART = sp.Rational(17, 16)               # k >= 3: the free coordinates of a cube chart of the sphere (overlapping)
#: each chart's search may examine max_boxes / CHART_SHARE boxes (k = 3: the 6 charts of the examples need under 2000
#: each; k = 4, a quartic: 8 charts failing at the full budget took 29 s before falling back to the axis points)
CHART_SHARE = 4


@dataclass(frozen=True)
class Equilibrium:
    """One equilibrium: ``overlaps`` (midpoint of the enclosure), ``enclosure`` ([lo, hi] per overlap, outward),
    ``eigenvalues`` (of DF at the midpoint, floats, ascending), ``stability`` ("attracting", "repelling", "saddle"
    or "undecided"), ``certified`` (a unique zero proven in the enclosure and the eigenvalue signs proven),
    ``boundary`` (|rho| = 1: the query lies in the span of the directions), ``certificate``
    (attnverify.theory.certified dict)."""

    overlaps: tuple[float, ...]
    enclosure: tuple[tuple[float, float], ...]
    eigenvalues: tuple[float, ...]
    stability: str
    certified: bool
    boundary: bool
    certificate: dict | None = field(default=None, compare=False, hash=False)

    @property
    def stable(self) -> bool:
        return self.stability == "attracting"


@dataclass(frozen=True)
class Equilibria:
    """The equilibria, sorted, and ``complete``: True when the search provably covers the whole closed ball."""

    points: tuple[Equilibrium, ...]
    complete: bool
    unresolved: tuple[tuple[tuple[float, float], ...], ...] = ()


class FieldFunctions:
    """Ball versions of grad J, Hess J, F, DF (and, for k = 2, the tangential component on the circle), functions
    of (rho..., params...)."""

    def __init__(self, J: sp.Expr, F: sp.Matrix, rho: tuple[sp.Symbol, ...], params: tuple[sp.Symbol, ...]):
        self.k, self.rho, self.params = len(rho), rho, params
        args = (*rho, *params)
        grad = [sp.diff(J, r) for r in rho]
        T = sp.Tuple
        self.grad = C.lambdify_arb(T(*grad), args)
        self.hess = C.lambdify_arb(T(*[T(*[sp.diff(g, r) for r in rho]) for g in grad]), args)
        self.F = C.lambdify_arb(T(*F), args)
        self.DF = C.lambdify_arb(T(*[T(*[sp.diff(f, r) for r in rho]) for f in F]), args)
        self.F_exact = F
        if self.k == 2:
            p = sp.Symbol("p_angle", real=True)
            on = {rho[0]: sp.cos(p), rho[1]: sp.sin(p)}
            tang = -sp.sin(p) * grad[0].subs(on) + sp.cos(p) * grad[1].subs(on)
            self.tangential = C.lambdify_arb(tang, (p, *params))
            self.dtangential = C.lambdify_arb(sp.diff(tang, p), (p, *params))


def _float_box(box) -> tuple[tuple[float, float], ...]:
    return tuple((C.lower(lo), C.upper(hi)) for lo, hi in box)


def _classify(fn: FieldFunctions, box_balls: list[arb], P: list[arb], mid: list[float]):
    DF = fn.DF(*box_balls, *P)
    DF = [[arb(v) for v in row] for row in (DF if isinstance(DF[0], (list, tuple)) else [DF])]
    counts = sign_counts(DF)
    Dm = fn.DF(*[arb(v) for v in mid], *P)
    Dm = np.array([[float(arb(v).mid()) for v in row] for row in Dm])
    if not np.all(np.isfinite(Dm)):                   # Arb has no overflow; the reported eigenvalues are floats
        raise OutsideCertifiedRange("the linearisation ", sp.Function("DF")(sp.Symbol("rho")), " at ",
                                    sp.Symbol("rho"), " = (", ", ".join(f"{m:.6g}" for m in mid),
                                    ") overflows double precision")
    eig = tuple(sorted(float(e) for e in np.real(np.linalg.eigvals(Dm))))
    if counts is None:
        return "undecided", eig, False
    pos, neg = counts
    kind = "attracting" if pos == 0 else "repelling" if neg == 0 else "saddle"
    return kind, eig, True


def _point(fn, box, P, unique: bool, boundary: bool, how: str) -> Equilibrium:
    fbox = _float_box(box)
    mid = [0.5 * (lo + hi) for lo, hi in fbox]
    balls = [lo.union(hi) for lo, hi in box]
    stability, eig, decided = _classify(fn, balls, P, mid)
    proven = (f"{how}; the Jacobian of the flow on the enclosure has {stability} eigenvalue signs"
              if decided else f"{how}; eigenvalue signs undecided")
    encl = ", ".join(C.interval_text(lo, hi, 6) for lo, hi in fbox)
    cert = C.certificate("rho*", proven, fbox[0][0], fbox[0][1], PREC, f"{stability}, enclosure {encl}")
    cert["enclosures"] = [list(b) for b in fbox]
    return Equilibrium(tuple(mid), fbox, eig, stability, bool(unique and decided), boundary, cert)


def find(fn: FieldFunctions, values: list, tol: float = 1e-12, max_boxes: int = 20000) -> Equilibria:
    """The equilibria at the parameter values (exact numbers, in the order of ``fn.params``); a search that gives
    up, or a linearisation beyond double precision, raises OutsideCertifiedRange naming the parameters; so does a
    gradient of J that is exactly 0 over the whole ball (in Arb: a proof), where every rho is an equilibrium."""
    with flint.ctx.workprec(PREC):
        whole = [arb(0, 1) for _ in range(fn.k)]
        if all(arb(g).is_zero() for g in fn.grad(*whole, *[C.exact_ball(v) for v in values])):
            raise OutsideCertifiedRange("the gradient of ", sp.Symbol("J"), " vanishes identically at ",
                                        *named_values({str(s): v for s, v in zip(fn.params, values)}), ": every ",
                                        sp.Symbol("rho"), " is an equilibrium, none is isolated")
    try:
        return _find(fn, values, tol, max_boxes)
    except OutsideCertifiedRange as exc:
        raise OutsideCertifiedRange("parameters too extreme for certified equilibria at ",
                                    *named_values({str(s): v for s, v in zip(fn.params, values)}), ": ",
                                    *exc.parts) from None


def _find(fn: FieldFunctions, values: list, tol: float, max_boxes: int) -> Equilibria:
    with flint.ctx.workprec(PREC):
        P = [C.exact_ball(v) for v in values]
        if fn.k == 1:
            return _one(fn, P, tol, max_boxes)
        pts, unresolved = _interior(fn, P, tol, max_boxes)
        if fn.k == 2:
            bpts, bun = _circle(fn, P, tol, max_boxes)
            return Equilibria(tuple(sorted(pts + bpts, key=lambda e: e.overlaps)), not (unresolved or bun),
                              tuple(unresolved + bun))
        spts, sun = _sphere(fn, values, P, tol, max_boxes)
        return Equilibria(tuple(sorted(pts + spts, key=lambda e: e.overlaps)), not (unresolved or sun),
                          tuple(unresolved + sun))


def _one(fn, P, tol, max_boxes) -> Equilibria:
    h = lambda X: fn.grad(X, *P)[0]                    # noqa: E731
    dh = lambda X: fn.hess(X, *P)[0][0]                # noqa: E731
    pts, unresolved = [], []
    for r0 in (-1, 1):
        pts.append(_point(fn, ((arb(r0), arb(r0)),), P, True, True, f"rho = {r0} is an equilibrium (F = (1 - rho^2) J')"))
    for r in C.root_boxes(h, dh, -1, 1, tol, max_boxes):
        if r.hi >= 1 or r.lo <= -1:
            continue                                    # a zero of J' at +-1 coincides with the pole
        how = ("J' has exactly one zero in the enclosure (interval Newton)" if r.unique
               else "every zero of J' near here lies in the enclosure (uniqueness not proven)")
        pts.append(_point(fn, ((r.lo, r.hi),), P, r.unique, False, how))
        if not r.unique:
            unresolved.append(_float_box(((r.lo, r.hi),)))
    return Equilibria(tuple(sorted(pts, key=lambda e: e.overlaps)), True, tuple(unresolved))


def _interior(fn, P, tol, max_boxes):
    k = fn.k

    def G(X):
        return [arb(v) for v in fn.grad(*X, *P)]

    def JG(X):
        return [[arb(v) for v in row] for row in fn.hess(*X, *P)]

    def keep(X):
        low = sum((arb(0) if lo <= 0 <= hi else min(lo * lo, hi * hi)) for lo, hi in X)
        return low < 1
    box = tuple((arb(-1), arb(1)) for _ in range(k))
    pts, unresolved = [], []
    for z in zero_boxes(G, JG, box, max(tol, 1e-10), max_boxes, keep):
        fb = _float_box(z.box)
        outer = sum(max(lo * lo, hi * hi) for lo, hi in fb)
        if outer >= 1:
            if not z.unique or any(lo * hi > 0 for lo, hi in fb):
                unresolved.append(fb)                   # touches the sphere: the boundary search decides there
            continue
        how = ("grad J has exactly one zero in the enclosure (Krawczyk), inside the unit ball" if z.unique
               else "every zero of grad J near here lies in the enclosure (uniqueness not proven)")
        pts.append(_point(fn, z.box, P, z.unique, False, how))
        if not z.unique:
            unresolved.append(fb)
    return pts, unresolved


def _circle(fn, P, tol, max_boxes):
    off = C.exact_ball(_OFFSET)
    h = lambda X: fn.tangential(X, *P)                 # noqa: E731
    dh = lambda X: fn.dtangential(X, *P)               # noqa: E731
    pts, unresolved = [], []
    for r in C.root_boxes(h, dh, -arb.pi() + off, arb.pi() + off, tol, max_boxes):
        ph = r.lo.union(r.hi)
        box = tuple((arb(b.lower()), arb(b.upper())) for b in (ph.cos(), ph.sin()))
        how = (f"rho = (cos p, sin p) with p in {C.interval_text(C.lower(r.lo), C.upper(r.hi))}: the tangential "
               "component of grad J has exactly one zero there (interval Newton)" if r.unique
               else "a box of the circle that may hold zeros of the tangential component (neither proven)")
        pts.append(_point(fn, box, P, r.unique, True, how))
        if not r.unique:
            unresolved.append(_float_box(box))
    return pts, unresolved


def _axis_is_zero(fn, values, j: int, sign: int) -> bool:
    """True when SymPy proves F = 0 at the axis point rho_j = sign, at the exact values the balls hold (a float at
    its binary value, never sympy.nsimplify's nearby guess)."""
    sub_p = dict(zip(fn.params, [sp.Rational(float(v)) if isinstance(v, (float, np.floating)) else sp.sympify(v)
                                 for v in values]))
    at = {r: (sign if i == j else 0) for i, r in enumerate(fn.rho)}
    return all(sp.simplify(f.subs({**at, **sub_p})) == 0 for f in fn.F_exact)


def _chart(fn, P, j: int, sign: int):
    """The cube chart w_j = sign of the sphere (k >= 3, module docstring): (rho of the free coordinates, T's free
    components G, their Jacobian JG), ball functions of the k - 1 free coordinates."""
    k = fn.k
    free = [i for i in range(k) if i != j]

    def rho_of(Y):
        w = [arb(0)] * k
        w[j] = arb(sign)
        for i, y in zip(free, Y):
            w[i] = y
        norm = sum((x * x for x in w), arb(0)).sqrt()
        return [x / norm for x in w], norm

    def G(Y):
        rho, _ = rho_of(Y)
        g = [arb(v) for v in fn.grad(*rho, *P)]
        dot = sum((r * v for r, v in zip(rho, g)), arb(0))
        return [g[i] - rho[i] * dot for i in free]

    def JG(Y):
        rho, norm = rho_of(Y)
        g = [arb(v) for v in fn.grad(*rho, *P)]
        H = [[arb(v) for v in row] for row in fn.hess(*rho, *P)]
        dot = sum((r * v for r, v in zip(rho, g)), arb(0))
        u = [g[m] + sum((rho[l] * H[l][m] for l in range(k)), arb(0)) for m in range(k)]      # grad J + Hess rho
        dT = [[H[i][m] - (dot if i == m else 0) - rho[i] * u[m] for m in range(k)] for i in free]
        return [[sum((row[m] * ((1 if m == c else 0) - rho[m] * rho[c]) for m in range(k)), arb(0)) / norm
                 for c in free] for row in dT]

    return rho_of, G, JG


def _sphere(fn, values, P, tol, max_boxes):
    """k >= 3: the equilibria on the sphere |rho| = 1, chart by chart (module docstring); a zero proven unique in
    one chart is preferred to an unresolved box of another that holds it. A chart whose search exceeds
    max_boxes / CHART_SHARE boxes (k >= 4: a (k - 1)-dimensional search) is reported unresolved as a whole, and only its centre, the
    axis point, is examined there (an equilibrium when SymPy proves F = 0 at it)."""
    ext = C.exact_ball(CHART)
    found, failed = [], []
    for j in range(fn.k):
        for sign in (-1, 1):
            rho_of, G, JG = _chart(fn, P, j, sign)
            whole = tuple((-ext, ext) for _ in range(fn.k - 1))
            try:
                zeros = zero_boxes(G, JG, whole, max(tol, 1e-10), max_boxes // CHART_SHARE)
            except OutsideCertifiedRange:
                rho = rho_of([lo.union(hi) for lo, hi in whole])[0]
                failed.append(_float_box(tuple((arb(r.lower()), arb(r.upper())) for r in rho)))
                found += [(True, j, sign, None)] if _axis_is_zero(fn, values, j, sign) else []
                continue
            for z in zeros:
                rho = rho_of([lo.union(hi) for lo, hi in z.box])[0]
                found.append((z.unique, j, sign, tuple((arb(r.lower()), arb(r.upper())) for r in rho)))
    pts: list[Equilibrium] = []
    unresolved: list = list(failed)
    for unique, j, sign, box in sorted(found, key=lambda f: not f[0]):
        axis = box is None
        if axis:
            box = tuple((arb(float(i == j) * sign), arb(float(i == j) * sign)) for i in range(fn.k))
        fb = _float_box(box)
        if any(all(lo <= q_hi and q_lo <= hi for (lo, hi), (q_lo, q_hi) in zip(fb, e.enclosure)) for e in pts):
            continue                                      # the same zero, found in a neighbouring chart
        how = (f"F(rho) = 0 at the axis point rho_{j + 1} = {sign} (SymPy, exact)" if axis else
               f"rho = w/|w| with w_{j + 1} = {sign}: the tangential component of grad J has exactly one zero in "
               "the enclosure (Krawczyk)" if unique
               else "a box of the sphere that may hold zeros of the tangential component (neither proven)")
        pts.append(_point(fn, box, P, unique, True, how))
        if not unique:
            unresolved.append(fb)
    return pts, unresolved
