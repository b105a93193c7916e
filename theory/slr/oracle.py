r"""Paper C (``slr``): the oracle (k, v) = (k*, v*): its Riemannian Hessian, where it is a strict local minimum,
and the proof that it minimises the reduced risk on M.

Riemannian Hessian.  At a critical point of R on S^{d-1} x S^{d-1} the Hessian quadratic form at a tangent vector u
is d^2/dt^2 R(c(t)) at t = 0 for ANY smooth curve c on the manifold with c(0) the point and c'(0) = u (the curve's
acceleration only meets the Riemannian gradient, which is 0).  Take k(t) = (k* + t dk)/|k* + t dk|,
v(t) = (v* + t dv)/|v* + t dv| with dk = a v* + p e3, dv = b k* + q e3 + r e4 (e3, e4 orthonormal and orthogonal
to k*, v*: every tangent vector has this form up to a rotation fixing k*, v*).  With o(t) the overlaps along the
curve, d^2/dt^2 R = sum_i R_i o_i'' + sum_ij R_ij o_i' o_j' (SymPy; :func:`riemannian_hessian_form`).  At the oracle
R_theta = R_eta = R_rho = 0 (it lies on M), and the form splits into
    -R_kappa |p|^2  (directions of k orthogonal to k*, v*: multiplicity d - 2),
    -R_nu |(q, r)|^2 (directions of v orthogonal to k*, v*: multiplicity d - 2),
    a 2 x 2 block in (a, b) (k tilted towards v*, v tilted towards k*).
The oracle is a strict local minimum iff all are > 0.  -R_nu = 2 gamma^2 erf(.) > 0 and -R_kappa = c erfc(.) > 0
always, so the answer is decided by the 2 x 2 block; its smallest eigenvalue is scanned over lam in FLINT/Arb ball
arithmetic (:func:`oracle_local_min_scan`): every lam-box is either proven positive, proven negative, or left as a
bracket of width <= tol holding every sign change.

On M (:func:`oracle_on_M_proof`): r is affine in nu with slope -2 gamma^2 erf(c kappa) and
r_kappa(kappa, nu) = r_kappa_nu(kappa) (nu - nu*(kappa)) with r_kappa_nu < 0 and |nu*| < 1, hence r(kappa, nu) >=
r(|kappa|, 1) >= r(1, 1): the minimisers of r on [-1, 1]^2 are (1, 1) and (-1, -1), for every parameter value.

The closed forms are the methods of :class:`OracleForms`, a part of Paper C's theory object (attnverify.theory.slr):
the Hessian reads the risk's partials, the Hessian form along curves and zeta's evaluator through ``self``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import flint
import mpmath
import sympy as sp
from flint import arb

from attnverify.theory.certified import certificate, lambdify_arb, lower, root_boxes, upper
from attnverify.theory.closed_forms import ClosedForms, derived
from attnverify.theory.slr import gauss as G
from attnverify.theory.slr.symbols import ORACLE, OVERLAPS, PARAMS, L, d, gamma, kappa, lam, nu

_t = sp.Symbol("t", real=True)
ta, tp, tb, tq, tr = sp.symbols("a p b q r", real=True)        # tangent coordinates (see module docstring)
TANGENT = (ta, tp, tb, tq, tr)
_ARB_PREC = 192


def _at_oracle(expr: sp.Expr, first_order: bool) -> sp.Expr:
    """A partial of R at the oracle; first partials are simplified (R_kappa then shows its factor erf(.) - 1, which
    becomes -erfc(.)), second partials only expanded (simplify would put exp(+x) in denominators)."""
    e = expr.xreplace(ORACLE)
    e = sp.simplify(e) if first_order else sp.expand(e)
    return G.use_erfc(G.combine_exp(e))


def _in_powers_of_L_minus_1(expr: sp.Expr) -> sp.Expr:
    """expr expanded (terms that cancel symbolically do cancel, e.g. +-2 gamma^2 zeta) and collected in powers of
    L - 1 (so the noise-token terms vanish exactly at L = 1 in ball arithmetic, instead of cancelling numerically)."""
    ell = sp.Symbol("ell", nonnegative=True)
    e = sp.expand(expr.xreplace({L: ell + 1}))
    coeffs = sp.Poly(e, ell).all_coeffs()[::-1]
    return sp.Add(*[G.collect_erfc(G.combine_exp(sp.expand(c))) * (L - 1) ** i for i, c in enumerate(coeffs)])


def _positive_product(expr: sp.Expr) -> bool:
    """True when expr is a product of factors each positive for all parameter values: SymPy's is_positive, or erfc of
    a real argument (erfc > 0 on the real line)."""
    def pos(f):
        if isinstance(f, sp.erfc):
            return bool(f.args[0].is_real)
        if isinstance(f, sp.Pow) and f.exp.is_real:
            return pos(f.base)
        return bool(f.is_positive)
    return all(pos(f) for f in sp.Mul.make_args(expr))


@dataclass(frozen=True)
class ZeroBox:
    """[lo, hi] (floats, rounded outward) holding zeros of det; ``unique``: exactly one zero (interval Newton)."""

    lo: float
    hi: float
    unique: bool


@dataclass(frozen=True)
class OracleHessian:
    """The spectrum of the Riemannian Hessian at the oracle (eigenvalue, multiplicity) and its 2 x 2 block; the
    smallest eigenvalue with a ball enclosure (Arb, 192 bits)."""

    eigenvalues: tuple[float, ...]
    multiplicities: tuple[int, ...]
    block: tuple[tuple[float, float], tuple[float, float]]
    smallest: float
    strict_local_min: bool
    enclosure_smallest: tuple[float, float] | None = field(default=None, compare=False)


def _block_min(A, B, C):
    if isinstance(A, arb):
        return (A + C) / 2 - ((A - C) ** 2 / 4 + B * B).sqrt()
    return (A + C) / 2 - mpmath.sqrt((A - C) ** 2 / 4 + B * B)


@dataclass(frozen=True)
class LocalMinScan:
    """Result of :func:`oracle_local_min_scan`.  'minimum' / 'saddle': lam-intervals on which the oracle is proven a
    strict local minimum / proven to have a negative Hessian eigenvalue; 'brackets': the enclosures of every zero of
    det(block) in the range (where the status changes), each with 'unique' (exactly one simple zero, interval
    Newton) in 'unique'."""

    minimum: tuple[tuple[float, float], ...]
    saddle: tuple[tuple[float, float], ...]
    brackets: tuple[tuple[float, float], ...]
    unique: tuple[bool, ...]
    prec_bits: int
    proven: str
    certificates: tuple[dict, ...] = ()


def _merge_boxes(zs) -> list[tuple[float, float, bool]]:
    """Zero boxes that touch (a zero on a grid edge is found from both sides) merged; merged boxes keep 'unique'
    only if they came from a single box."""
    out: list[list] = []
    for z in sorted(zs, key=lambda z: z.lo):
        if out and z.lo <= out[-1][1]:
            out[-1][1] = max(out[-1][1], z.hi)
            out[-1][2] = False
        else:
            out.append([z.lo, z.hi, z.unique])
    return [tuple(x) for x in out]


class OracleForms(ClosedForms):
    """The oracle's Riemannian Hessian, its certified lam-scan and the proof on M (module docstring)."""

    @derived
    def curve_derivatives(self) -> tuple[list[sp.Expr], list[sp.Expr]]:
        """(o'(0), o''(0)) for the overlaps (kappa, nu, theta, eta, rho) along the normalised curve of the docstring."""
        ks, vs, e3, e4 = (sp.Matrix([int(i == j) for j in range(4)]) for i in range(4))
        ku = ks + _t * (ta * vs + tp * e3)
        vu = vs + _t * (tb * ks + tq * e3 + tr * e4)
        k, v = ku / sp.sqrt(ku.dot(ku)), vu / sp.sqrt(vu.dot(vu))
        o = [k.dot(ks), v.dot(vs), v.dot(ks), k.dot(vs), k.dot(v)]
        d1 = [sp.simplify(sp.diff(x, _t).subs(_t, 0)) for x in o]
        d2 = [sp.simplify(sp.diff(x, _t, 2).subs(_t, 0)) for x in o]
        return d1, d2

    @derived
    def riemannian_hessian_form(self) -> sp.Expr:
        """d^2/dt^2 R along the curve at t = 0, with abstract partials R_i and R_ij (symbols 'R_i', 'R_ij')."""
        d1, d2 = self.curve_derivatives()
        n = len(OVERLAPS)
        Ri = sp.symbols("R_0:%d" % n, real=True)
        Rij = sp.Matrix(n, n, lambda i, j: sp.Symbol(f"R_{min(i, j)}{max(i, j)}", real=True))
        return sp.expand(sum(Ri[i] * d2[i] for i in range(n)) + sum(Rij[i, j] * d1[i] * d1[j]
                                                                  for i in range(n) for j in range(n)))

    @derived
    def oracle_hessian_matrix(self) -> sp.Matrix:
        """The Riemannian Hessian at the oracle in the tangent coordinates (a, p, b, q, r), closed form in the
        params."""
        n = len(OVERLAPS)
        g = self.gradient()
        sub = {sp.Symbol(f"R_{i}", real=True): g[OVERLAPS[i]] for i in range(n)}
        for i in range(n):
            for j in range(i, n):
                sub[sp.Symbol(f"R_{i}{j}", real=True)] = sp.diff(g[OVERLAPS[i]], OVERLAPS[j])
        Q = self.riemannian_hessian_form()
        H = sp.hessian(Q, TANGENT) / 2
        used = H.free_symbols & set(sub)
        vals = {s: _at_oracle(sub[s], len(s.name) == 3) for s in used}
        return H.xreplace(vals)

    @derived
    def oracle_hessian_blocks(self) -> dict[str, sp.Expr]:
        """'orth_k' (eigenvalue on the d-2 directions of k orthogonal to k*, v*), 'orth_v' (same for v), 'block' (the
        2 x 2 matrix in (a, b)), 'decoupled' (the entries coupling the blocks: all 0)."""
        H = self.oracle_hessian_matrix()
        ia, ip, ib, iq, ir = range(5)
        cross = [H[i, j] for i in (ia, ib) for j in (ip, iq, ir)] + [H[ip, iq], H[ip, ir], H[iq, ir]]
        return {"orth_k": H[ip, ip], "orth_v": H[iq, iq], "orth_v_r": H[ir, ir],
                "block": sp.Matrix([[H[ia, ia], H[ia, ib]], [H[ib, ia], H[ib, ib]]]).applyfunc(_in_powers_of_L_minus_1),
                "decoupled": [sp.simplify(c) for c in cross]}

    # -------------------------------------------------------------------------------------- evaluation
    @derived
    def oracle_block_invariants(self) -> dict[str, sp.Expr]:
        """'det' = A C - B^2 and 'trace' = A + C of the 2 x 2 block, and 'ddet' = d det / d lam (SymPy)."""
        blk = self.oracle_hessian_blocks()["block"]
        det = blk[0, 0] * blk[1, 1] - blk[0, 1] ** 2
        return {"det": det, "trace": blk[0, 0] + blk[1, 1], "ddet": sp.diff(det, lam)}

    @derived
    def oracle_functions(self) -> dict[str, tuple[Callable, Callable]]:
        """(ball version, mpmath version) of the Hessian pieces, as functions of (lam, gamma, d, L, eps)."""
        b = self.oracle_hessian_blocks()
        inv = self.oracle_block_invariants()
        exprs = {"orth_k": b["orth_k"], "orth_v": b["orth_v"], "A": b["block"][0, 0], "B": b["block"][0, 1],
                 "C": b["block"][1, 1], **inv}
        mp_modules = [{"zeta_erf": self.zeta_mp}, "mpmath"]
        return {k: (lambdify_arb(v, PARAMS), sp.lambdify(PARAMS, v, modules=mp_modules, cse=True))
                for k, v in exprs.items()}

    @derived
    def orthogonal_eigenvalues_positive(self) -> dict[str, bool]:
        """-R_kappa and -R_nu at the oracle are products/quotients of positive factors (exp, erfc, erf of a positive
        argument, positive symbols): SymPy's assumption system decides their sign for every parameter value."""
        b = self.oracle_hessian_blocks()
        return {k: _positive_product(b[k]) for k in ("orth_k", "orth_v")}

    def oracle_hessian(self, lam: float, gamma: float, d: int, L: int, eps: float = 0.0,
                       dps: int = 30) -> OracleHessian:
        """The Riemannian Hessian of R at (k*, v*): eigenvalues -R_kappa (multiplicity d-2), -R_nu (multiplicity d-2)
        and the two of the 2 x 2 block (mpmath at ``dps`` digits, returned as floats), with a ball enclosure of the
        smallest one (Arb).  ``strict_local_min`` is True when that enclosure is > 0 (proven)."""
        f = self.oracle_functions()
        with mpmath.workdps(dps):
            v = {k: fm(lam, gamma, d, L, eps) for k, (fa, fm) in f.items() if k in ("orth_k", "orth_v", "A", "B", "C")}
            disc = mpmath.sqrt((v["A"] - v["C"]) ** 2 / 4 + v["B"] ** 2)
            lo, hi = (v["A"] + v["C"]) / 2 - disc, (v["A"] + v["C"]) / 2 + disc
        eigs = [float(v["orth_k"]), float(v["orth_v"]), float(lo), float(hi)]
        mult = [d - 2, d - 2, 1, 1]
        with flint.ctx.workprec(_ARB_PREC):
            P = [arb(x) for x in (lam, gamma, d, L, eps)]
            e = _block_min(*(f[k][0](*P) for k in "ABC"))
            if d > 2:
                e = e.min(f["orth_k"][0](*P)).min(f["orth_v"][0](*P))
        return OracleHessian(tuple(eigs), tuple(mult), ((float(v["A"]), float(v["B"])), (float(v["B"]), float(v["C"]))),
                             min(eigs[i] for i in range(4) if mult[i] > 0), bool(e > 0), (lower(e), upper(e)))

    def oracle_local_min_scan(self, gamma: float, d: int, L: int, eps: float = 0.0, lam_lo: float = 1e-3,
                              lam_hi: float = 100.0, tol: float = 1e-12, n_grid: int = 400,
                              max_boxes: int = 2000) -> LocalMinScan:
        """Where in lam in [lam_lo, lam_hi] is (k*, v*) a strict local minimum of R on S^{d-1} x S^{d-1}?

        -R_kappa, -R_nu > 0 for every lam (:meth:`orthogonal_eigenvalues_positive`), so the answer is the sign of the
        2 x 2 block: positive definite iff det = A C - B^2 > 0 and trace > 0 (trace cannot vanish where det > 0).
        Every zero of det on [lam_lo, lam_hi] is enclosed by :func:`attnverify.theory.certified.root_boxes` (Arb, 192
        bits, starting from ``n_grid`` geometric boxes; d det/d lam from SymPy).  Between consecutive zeros det has a
        constant sign, read (with the trace's) at one interior point in ball arithmetic."""
        if not (0 < lam_lo < lam_hi and math.isfinite(lam_hi)):
            raise ValueError(f"need 0 < lam_lo < lam_hi < inf, got {lam_lo}, {lam_hi}")
        pos = self.orthogonal_eigenvalues_positive()
        if not all(pos.values()):
            raise ArithmeticError(f"the sign of -R_kappa or -R_nu was not decided symbolically: {pos}")
        f = self.oracle_functions()
        with flint.ctx.workprec(_ARB_PREC):
            P = [arb(x) for x in (gamma, d, L, eps)]
            h = lambda X: f["det"][0](X, *P)       # noqa: E731
            dh = lambda X: f["ddet"][0](X, *P)     # noqa: E731
            grid = [lam_lo * (lam_hi / lam_lo) ** (i / n_grid) for i in range(n_grid + 1)]
            grid[0], grid[-1] = lam_lo, lam_hi
            zeros: list = []
            for a, b in zip(grid[:-1], grid[1:]):
                try:
                    zeros.extend(ZeroBox(lower(r.lo), upper(r.hi), r.unique)
                                 for r in root_boxes(h, dh, a, b, tol, max_boxes))
                except ValueError:           # not resolved at this precision: the whole grid box is kept as a bracket
                    zeros.append(ZeroBox(a, b, False))
            zeros = _merge_boxes(zeros)
            edges = [lam_lo] + [x for z in zeros for x in (z[0], z[1])] + [lam_hi]
            mins, sads = [], []
            for a, b in zip(edges[0::2], edges[1::2]):
                if b <= a:
                    continue
                m = arb(0.5 * (a + b))
                det, tr = h(m), f["trace"][0](m, *P)
                if det > 0 and tr > 0:
                    mins.append((a, b))
                elif det < 0 or (det > 0 and tr < 0):
                    sads.append((a, b))
                else:
                    raise ArithmeticError(f"the sign of det was not decided at lam = {float(m.mid())}")
        proven = (f"gamma={gamma:g}, d={d}, L={L}, eps={eps:g}: every zero of det(2x2 block) in "
                  f"[{lam_lo:g}, {lam_hi:g}] lies in a bracket; in each 'minimum' interval the Riemannian Hessian at "
                  "(k*, v*) is positive definite (strict local minimum); in each 'saddle' interval it has a negative "
                  "eigenvalue")
        certs = []
        for lo_, hi_, uniq in zeros:
            side = [st for (a, b), st in [(iv, "minimum") for iv in mins] + [(iv, "saddle") for iv in sads]
                    if b == lo_ or a == hi_]
            what = (f"det(block) of the oracle's Riemannian Hessian has "
                    f"{'exactly one zero' if uniq else 'every zero'} of [{lo_!r}, {hi_!r}] there (interval Newton"
                    f"{'' if uniq else ', uniqueness not proven'}); the oracle is a strict local minimum just below "
                    f"and not a local minimum just above" if side[:1] == ["minimum"]
                    else "the oracle's status changes in this bracket")
            certs.append(certificate("lam*", what, lo_, hi_, _ARB_PREC,
                                     f"gamma={gamma:g}, d={d}, L={L}, eps={eps:g}" + ("" if uniq else ", not unique")))
        return LocalMinScan(tuple(mins), tuple(sads), tuple((z[0], z[1]) for z in zeros),
                            tuple(z[2] for z in zeros), _ARB_PREC, proven, tuple(certs))

    # -------------------------------------------------------------------------------------- the oracle on M
    @derived
    def oracle_on_M_proof(self) -> dict:
        """The steps proving that (1, 1) and (-1, -1) minimise r(kappa, nu) on [-1, 1]^2:
        'r_nu' (free of nu: r is affine in nu), 'r_kappa_nu' (the slope of r_kappa in nu, negative: a product of
        -gamma^2, a positive root and an exp), 'nu_star' (an erf, so |nu*| < 1), 'affine_residual' (0),
        'r_kappa_at_nu1' (r_kappa(kappa, 1) = r_kappa_nu (1 - nu*) < 0), 'flip_residual' (r(-kappa, -nu) - r: 0)."""
        p = self.reduced_partials()
        r = self.risk_on_M()
        slope_sign = sp.ask(sp.Q.negative(p["r_kappa_nu"]), sp.Q.positive(d) & sp.Q.positive(lam) & sp.Q.positive(gamma)
                            & sp.Q.real(kappa))
        return {"r_nu": p["r_nu"], "r_kappa_nu": p["r_kappa_nu"], "slope_negative": slope_sign,
                "nu_star": p["nu_star"], "nu_star_is_erf": isinstance(p["nu_star"], sp.erf),
                "affine_residual": p["affine_residual"],
                "r_kappa_at_nu1": sp.factor(p["r_kappa_nu"] * (1 - p["nu_star"])),
                "flip_residual": sp.simplify(r.xreplace({kappa: -kappa, nu: -nu}) - r)}
