r"""Paper C (``slr``): projected gradient descent on S^{d-1} x S^{d-1} in overlap coordinates, derived with SymPy.

One step with step size h (both factors updated from the same (k, v)):
    g_k = P_k^perp grad_k R,  grad_k R = R_kappa k* + R_eta v* + R_rho v,   k <- (k - h g_k) / |k - h g_k|,
    g_v = P_v^perp grad_v R,  grad_v R = R_nu v* + R_theta k* + R_rho k,    v <- (v - h g_v) / |v - h g_v|,
with P_x^perp = I - x x^T and R_o the partials of R in the overlaps (chain rule: R depends on k, v only through
kappa = <k,k*>, eta = <k,v*>, rho = <k,v>, nu = <v,v*>, theta = <v,k*>).  Every vector involved is a combination
of (k, v, k*, v*), whose Gram matrix is made of the overlaps, so the new overlaps are functions of the old ones
and of the partials: the map closes on the five overlaps (:func:`overlap_map_abstract`).  The flow is the
h-derivative at h = 0.  On M = {theta = eta = rho = 0} the partials R_theta, R_eta, R_rho vanish
(attnverify.theory.slr.population), so theta' = eta' = rho' = 0 for every h (M is invariant) and the map reduces to
(kappa, nu) with the reduced risk r(kappa, nu).  Critical points of the reduced flow and their linearisations:
``reduced_critical_points``.

The closed forms are the methods of :class:`DynamicsForms`, a part of Paper C's theory object (attnverify.theory.slr):
the reduced map and flow read the reduced risk through ``self`` (a replaced risk reaches them).
"""
from __future__ import annotations

import sympy as sp

from attnverify.theory.closed_forms import ClosedForms, derived
from attnverify.theory.slr.symbols import ON_M, OVERLAPS, eta, kappa, nu, rho, theta

R_kappa, R_nu, R_theta, R_eta, R_rho = sp.symbols("R_kappa R_nu R_theta R_eta R_rho", real=True)
PARTIALS: tuple[sp.Symbol, ...] = (R_kappa, R_nu, R_theta, R_eta, R_rho)   # same order as OVERLAPS
step = sp.Symbol("h", positive=True)


def gram() -> sp.Matrix:
    """Gram matrix of the basis (k, v, k*, v*) in the overlaps (<k*, v*> = 0, all unit)."""
    return sp.Matrix([[1, rho, kappa, eta], [rho, 1, theta, nu], [kappa, theta, 1, 0], [eta, nu, 0, 1]])


class DynamicsForms(ClosedForms):
    """Projected gradient descent in the overlaps, its flow, and both on M (module docstring)."""

    @derived
    def overlap_map_abstract(self) -> dict:
        """The exact one-step map of the overlaps in terms of the overlaps, the abstract partials PARTIALS and h.

        Returns 'new' (dict overlap -> new value), 'riem_k', 'riem_v' (coefficient vectors of the Riemannian
        gradients in the basis (k, v, k*, v*)), 'norm_k2', 'norm_v2' (|k - h g_k|^2, |v - h g_v|^2) and
        'norm_residuals' (|k - h g_k|^2 - (1 + h^2 |g_k|^2) and the same for v: 0, since g_k is orthogonal to k)."""
        Gm = gram()
        e = sp.eye(4)
        ek, ev, eks, evs = (e[:, i] for i in range(4))
        grad_k = R_kappa * eks + R_eta * evs + R_rho * ev
        grad_v = R_nu * evs + R_theta * eks + R_rho * ek
        ip = lambda a, b: sp.expand((a.T * Gm * b)[0, 0])      # noqa: E731  inner product through the Gram matrix
        gk = grad_k - ip(ek, grad_k) * ek
        gv = grad_v - ip(ev, grad_v) * ev
        uk, uv = ek - step * gk, ev - step * gv
        nk2, nv2 = ip(uk, uk), ip(uv, uv)
        res = (sp.simplify(nk2 - (1 + step**2 * ip(gk, gk))), sp.simplify(nv2 - (1 + step**2 * ip(gv, gv))))
        nk, nv = sp.sqrt(nk2), sp.sqrt(nv2)
        new = {kappa: ip(uk, eks) / nk, eta: ip(uk, evs) / nk, nu: ip(uv, evs) / nv, theta: ip(uv, eks) / nv,
               rho: ip(uk, uv) / (nk * nv)}
        return {"new": new, "riem_k": gk, "riem_v": gv, "norm_k2": nk2, "norm_v2": nv2, "norm_residuals": res}


    @derived
    def overlap_flow_abstract(self) -> dict:
        """The gradient flow of the overlaps: d/dh of the map at h = 0 (dict overlap -> velocity, in the partials)."""
        new = self.overlap_map_abstract()["new"]
        return {o: sp.simplify(sp.diff(new[o], step).subs(step, 0)) for o in OVERLAPS}


    @derived
    def invariance_of_M(self) -> dict:
        """theta', eta', rho' of the map at a point of M where R_theta = R_eta = R_rho = 0, for any h: each is 0."""
        new = self.overlap_map_abstract()["new"]
        sub = {**ON_M, R_theta: 0, R_eta: 0, R_rho: 0}
        return {o: sp.simplify(new[o].xreplace(sub)) for o in (theta, eta, rho)}


    @derived
    def reduced_map(self) -> dict:
        """The map restricted to M: 'kappa', 'nu' (new values, with r_kappa, r_nu the partials of r(kappa, nu)),
        and 'abstract' (the same with the partials R_kappa, R_nu left as symbols)."""
        new = self.overlap_map_abstract()["new"]
        sub = {**ON_M, R_theta: 0, R_eta: 0, R_rho: 0}
        ab = {o: sp.simplify(new[o].xreplace(sub)) for o in (kappa, nu)}
        r = self.risk_on_M()
        conc = {R_kappa: sp.diff(r, kappa), R_nu: sp.diff(r, nu)}
        return {"kappa": ab[kappa].xreplace(conc), "nu": ab[nu].xreplace(conc), "abstract": ab}


    @derived
    def reduced_flow(self) -> tuple[sp.Expr, sp.Expr]:
        """(kappa_dot, nu_dot) on M: the h-derivative of the reduced map at h = 0."""
        rm = self.reduced_map()
        return tuple(sp.simplify(sp.diff(rm[o], step).subs(step, 0)) for o in ("kappa", "nu"))


    @derived
    def reduced_partials(self) -> dict:
        """The partials of r and their structure: r is affine in nu with slope 'r_nu' (free of nu), r_kappa is affine
        in nu, so r_kappa = 'r_kappa_nu' (nu - 'nu_star'(kappa)) with nu_star solved by SymPy; 'affine_residual' is
        r_kappa - r_kappa_nu (nu - nu_star): 0."""
        r = self.risk_on_M()
        rk, rn = sp.diff(r, kappa), sp.diff(r, nu)
        slope = sp.simplify(sp.diff(rk, nu))
        (nu_star,) = sp.solve(rk, nu)
        nu_star = sp.simplify(nu_star)
        return {"r_kappa": rk, "r_nu": sp.simplify(rn), "r_kappa_nu": slope, "nu_star": nu_star,
                "r_nu_depends_on_nu": sp.diff(rn, nu) != 0,
                "affine_residual": sp.simplify(rk - slope * (nu - nu_star))}


    @derived
    def reduced_critical_points(self) -> list[dict]:
        """Critical points of the reduced flow kappa_dot = -(1-kappa^2) r_kappa, nu_dot = -(1-nu^2) r_nu on [-1,1]^2.

        r_nu is free of nu and vanishes only at kappa = 0 (SymPy solve); r_kappa = 0 on the nullcline
        nu = nu_star(kappa).  Interior points need r_nu = r_kappa = 0: kappa = 0, nu = nu_star(0).  With kappa = +-1,
        r_nu != 0 forces nu = +-1; with nu = +-1 and |kappa| < 1, r_kappa = 0 needs nu_star(kappa) = +-1, which
        SymPy's solve does not find for an erf (|erf| < 1).  Each point comes with the Jacobian of the flow and the
        Hessian of r there."""
        p = self.reduced_partials()
        zeros = sp.solve(p["r_nu"], kappa)
        kdot, ndot = self.reduced_flow()
        J = sp.Matrix([kdot, ndot]).jacobian([kappa, nu])
        H = sp.hessian(self.risk_on_M(), (kappa, nu))
        pts = [(z, p["nu_star"].subs(kappa, z)) for z in zeros]
        pts += [(sk, sn) for sk in (1, -1) for sn in (1, -1)]
        unsolvable = [sp.solve(sp.Eq(p["nu_star"], sn), kappa) for sn in (1, -1)]
        out = []
        for k0, n0 in pts:
            sub = {kappa: k0, nu: n0}
            out.append({"kappa": sp.simplify(k0), "nu": sp.simplify(n0), "jacobian": sp.simplify(J.subs(sub)),
                        "hessian_r": sp.simplify(H.subs(sub)), "edge_solutions": unsolvable})
        return out


    @derived
    def reduced_map_jacobian_at(self, k0: int, n0: int) -> sp.Matrix:
        """The Jacobian of the reduced map (kappa, nu) -> (kappa', nu') at the fixed point (k0, n0) (h symbolic)."""
        rm = self.reduced_map()
        J = sp.Matrix([rm["kappa"], rm["nu"]]).jacobian([kappa, nu])
        return sp.simplify(J.subs({kappa: k0, nu: n0}))
