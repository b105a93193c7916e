"""Paper B, the derivation step by step (``attnverify derive meanfield``): every result computed by SymPy."""
from __future__ import annotations

from functools import lru_cache

import sympy as sp

from attnverify.theory.derivation import Step
from attnverify.theory.mean_field.asymptotics import first_order_identity, moment_ratios
from attnverify.theory.mean_field.field import _maximiser_rule, lagrange_maximiser, zero_temperature_field
from attnverify.theory.mean_field.flow import _diag_limit, _diag_stationarity, _oja_residual, diagonal_flow_residual
from attnverify.theory.mean_field.rates import _diag_jacobian, _diag_lyapunov
from attnverify.theory.mean_field.theorem1 import beta, concentration_bound


def derivation() -> list[Step]:
    """The Paper B derivation, every result computed here by SymPy (cached; a fresh list each call)."""
    return list(_derivation())


@lru_cache(maxsize=None)
def _rate_ratio_2d() -> tuple[sp.Expr, sp.Expr, sp.Expr]:
    """B = diag(b1, b2), A = diag(mu_1, mu_1 - gamma), x* = e_1: (Jacobian rate, Lyapunov rate, their ratio)."""
    b1, b2 = sp.symbols("b1 b2", positive=True)
    gam = sp.Symbol("gamma", positive=True)
    mu1 = sp.Symbol("mu1", real=True)
    _, ev = _diag_jacobian(2)
    jac = -ev[0].subs({sp.Symbol("mu2", real=True): mu1 - gam, sp.Symbol("B1", real=True): b1,
                       sp.Symbol("B2", real=True): 0, sp.Symbol("B3", real=True): 0, sp.Symbol("B4", real=True): b2})
    sigma_max = sp.Max(*(sp.sqrt(e) for e in (sp.diag(b1, b2) * sp.diag(b1, b2).T).eigenvals()))
    lyap = gam / sigma_max
    return sp.simplify(jac), lyap, sp.simplify(lyap / jac)


@lru_cache(maxsize=None)
def _derivation() -> tuple[Step, ...]:
    b_i, S, y_star, lam_star = _maximiser_rule()
    bs3, y3, sols3 = lagrange_maximiser(3)
    steps = [
        Step("Laplace principle: the softmax average concentrates at the maximiser of y -> <B^T x, y> on the "
             "sphere. Lagrange stationarity b_i = lambda y_i and |y|^2 = 1 give lambda = +-sqrt(S), S = |b|^2; "
             "the larger objective S/lambda picks the maximiser.",
             y_star, "sympy.solve of the Lagrange system; objective comparison",
             r"y^*_i"),
        Step("Full Lagrange system in d = 3 (both critical points, maximiser kept).",
             y3, f"sympy.solve found {len(sols3)} critical points", r"y^*(b)"),
    ]
    phi = sp.Symbol("phi", real=True)
    b1, b2 = sp.symbols("b1 b2", positive=True)
    v1, v2 = sp.symbols("v1 v2", real=True)
    x_phi = sp.Matrix([sp.cos(phi), sp.sin(phi)])
    field_2d = sp.simplify(zero_temperature_field(x_phi, sp.diag(b1, b2), sp.diag(v1, v2)))
    steps.append(Step("Zero-temperature field (beta -> oo): X_inf(x) = P_perp_x V B^T x/|B^T x| (the maximiser with "
                      "b = B^T x); shown on the circle x = (cos phi, sin phi) for B = diag(b1, b2), V = diag(v1, v2).",
                      field_2d, "substitution of the Lagrange maximiser, sympy.simplify", r"X_\infty(x)"))
    a = sp.Matrix(3, 3, lambda i, j: sp.Symbol(f"a_{i + 1}{j + 1}", real=True))
    steps.append(Step("Oja identity for a generic real 3x3 matrix A: x = y/|y| with y' = A y (y = e^(tau A) x0) "
                      "satisfies dx/dtau = P_perp_x A x; residual", _oja_residual(a),
                      "sympy.simplify after substituting y' = A y", r"r_{\rm Oja}"))
    for d in (2, 3):
        steps.append(Step(f"Closed-form flow x = e^(tau A) x0/|e^(tau A) x0|, A = V B^T, dt/dtau = |B^T x| solves "
                          f"dx/dt = X_inf(x) for symbolic diagonal B, V (d = {d}): residual",
                          diagonal_flow_residual(d), "sympy.simplify of dx/dtau / (dt/dtau) - X_inf(x)",
                          rf"r_{{{d}}}"))
    for d, dim_E in ((3, 1), (3, 2)):
        c0, lim = _diag_limit(d, dim_E)
        steps.append(Step(f"Projection map: tau -> oo limit of the closed form for diagonal A with top eigenvalue "
                          f"of multiplicity {dim_E} (gaps g_k > 0): Pi(x0) = P_E x0/|P_E x0|.",
                          lim, "sympy.limit (u = e^-tau -> 0+)", rf"\Pi_{{\dim E={dim_E}}}(x_0)"))
        steps.append(Step(f"Stationarity: X_inf(Pi x) = 0 (dim E = {dim_E}).", _diag_stationarity(d, dim_E),
                          "sympy.simplify", r"X_\infty(\Pi x)"))
    ru, ra, rc = moment_ratios(2)
    steps.append(Step("Laplace expansion of the field (Watson's lemma, polar angle about u = B^T x/|B^T x|, density "
                      "c0 + <a, y> + y^T C y): m = u + (r_u u + r_a P a + r_C P C u)/kappa + O(kappa^-2), "
                      "kappa = beta |B^T x|; the first-order coefficients (r_u, r_a, r_C):",
                      sp.Matrix([ru[1], ra[1], rc[1]]), "sympy series of ratios of Watson expansions",
                      r"m_1"))
    steps.append(Step("So X_beta - X_inf = P_perp_x V (grad_T log f(u) - (d-1)/2 u)/(beta |B^T x|) + O(beta^-2): "
                      "the sup error is O(1/beta) for a smooth positive density; residual of that identity:",
                      first_order_identity(), "sympy.simplify", r"m_1 - \nabla_T \log f + \frac{d-1}{2}u"))
    Jt, ev = _diag_jacobian(3)
    steps.append(Step("Linearisation at x* = e_1 (A = diag(mu_i), general B): tangent Jacobian eigenvalues "
                      "(mu_j - mu_1)/|B^T x*|; the rate is gamma/|B^T x*|.", ev,
                      "sympy jacobian at e_1, restricted to span(e_2, e_3), eigenvals", r"\lambda_j"))
    L, dL, excess = _diag_lyapunov()
    steps.append(Step("Lyapunov functional L = |P_perp_E z|^2/|P_E z|^2 along dz/dtau = P_perp A z.",
                      sp.Eq(sp.Symbol("dL/dtau"), dL), "sympy derivative along the field", r"\dot L"))
    steps.append(Step("dL/dtau + 2 gamma L <= 0 (delta = mu_2 - mu_3 >= 0), so L decays at rate 2 gamma in tau; "
                      "with dtau/dt = 1/|B^T x| >= 1/sigma_max(B) the distance decays at least at gamma/sigma_max(B), "
                      "a bound that equals the Jacobian rate gamma/|B^T x*| only when |B^T x*| = sigma_max(B).",
                      excess, f"sympy.factor; nonpositive: {bool(excess.is_nonpositive)}",
                      r"\dot L + 2\gamma L"))
    jac, lyap, ratio = _rate_ratio_2d()
    steps.append(Step("Comparison for B = diag(b1, b2), A = diag(mu_1, mu_1 - gamma), x* = e_1: Lyapunov rate / "
                      "Jacobian rate = |B^T x*|/sigma_max(B) <= 1, equal to 1 iff b1 >= b2.",
                      sp.Eq(sp.Symbol("r_L/r_J"), ratio),
                      f"Jacobian rate {sp.sstr(jac)} from the SymPy Jacobian, Lyapunov rate {sp.sstr(lyap)}",
                      r"r_{\rm Lyap}/r_{\rm Jac}"))
    cb = concentration_bound()
    steps += [
        Step("Theorem 1 bound.", cb.b, "model statement", r"b(\beta,t)"),
        Step("Optimal time: db/dt = 0.", cb.t_star, "sympy.solve (second derivative > 0)",
             r"t^*(\beta)"),
        Step("Minimal value of the bound.", cb.b_min, "sympy.simplify of b(beta, t*)", r"b_{\min}(\beta)"),
        Step("Metastability: t* grows like log(beta).", sp.limit(cb.t_star / sp.log(beta), beta, sp.oo),
             "sympy.limit of t*/log(beta) as beta -> oo", r"\lim t^*/\log\beta"),
    ]
    return tuple(steps)
