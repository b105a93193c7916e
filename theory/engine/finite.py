r"""Leading finite-L terms: the delta method for a ratio of means, with second tilted moments.

At fixed sign eps the L tokens are independent, n_c of component c.  Each token contributes the vector
v = e^{<a,x>} (x, 1); its moments are tilted moments (:mod:`.laws`):

    E v = M(a) (m(a), 1),       E v v^T = M(2a) [[S(2a), m(2a)], [m(2a)^T, 1]],

S the tilted second moment.  The sums Y = sum_i e^{s_i} x_i and D = sum_i e^{s_i} have mean mu = sum_c n_c E v and
covariance Sigma = sum_c n_c Cov v, both O(L).  For a smooth h, E h(Y, D) = h(mu) + (1/2) tr(Hess h(mu) Sigma)
+ O(1/L^2) (second-order delta method; h(mu) is the limit, the trace term is O(1/L)).

* Objective: h = |V Y|^2 / D^2.  In the coordinates (e, u scaled by t, w) h = (|V_kk Y_e|^2 + v^2 t^2 Y~_u^2
  + v^2 Y_w^2) / D^2; SymPy computes its Hessian.  Each of the d - k - 1 complement directions w contributes the
  same term (the laws are isotropic there), which carries the factor d (Paper A's (d - 1) sigma^2 E sum a_i^2 is
  that term plus the u-direction's share).
* Mass of component c: h = N_c / D with N_c = sum_{i in c} e^{s_i} (Var N_c = Cov(N_c, D) = n_c Var e^{<a,x>}).
With a random sign the term is computed at fixed eps and averaged over eps.
"""
from __future__ import annotations

import sympy as sp

from attnverify.theory.engine.limit import Geometry, component_tilt, limit_at, sign_average
from attnverify.theory.engine.model_file import Model


def delta_bias(h: sp.Expr, variables: list[sp.Symbol], mean: dict, cov: dict) -> sp.Expr:
    """(1/2) sum_jl d^2h/dy_j dy_l (mean) Cov(y_j, y_l): the O(1/L) bias of E h(y).  ``cov`` maps (j, l) index
    pairs (j <= l) to covariances; a nonzero Hessian entry without a covariance is an error (nothing is dropped
    silently)."""
    total = []
    for j, yj in enumerate(variables):
        dj = sp.diff(h, yj)
        for l in range(j, len(variables)):
            H = sp.diff(dj, variables[l])
            if H == 0:
                continue
            if (j, l) not in cov:
                raise ArithmeticError(f"delta method: no covariance for ({variables[j]}, {variables[l]})")
            total.append((1 if j == l else 2) * H.subs(mean) * cov[(j, l)])
    return sp.Add(*total) / 2


def _moments(model: Model, geo: Geometry, eps: int):
    """Per component: (n, M(a), M(2a), tilt at a, tilt at 2a)."""
    out = []
    for c in model.components:
        t1, t2 = component_tilt(model, geo, c, eps, 1), component_tilt(model, geo, c, eps, 2)
        out.append((c.count, sp.exp(t1.log_mgf), sp.exp(t2.log_mgf), t1, t2))
    return out


def objective_correction_at(model: Model, geo: Geometry, eps: int, d: sp.Symbol) -> sp.Expr:
    """The O(1/L) term of E|f|^2 at sign eps (t not substituted)."""
    k = model.k
    mom = _moments(model, geo, eps)
    Ye = sp.symbols(f"Y1:{k + 1}", real=True)
    Yu, Yw, D = sp.symbols("Y_u Y_w D", real=True)
    VY = geo.V * sp.Matrix(Ye)
    h = (sum(VY[i, 0] ** 2 for i in range(k)) + geo.v_rest**2 * (geo.t**2 * Yu**2 + Yw**2)) / D**2
    S = lambda f: sp.Add(*[f(*m) for m in mom])    # noqa: E731  sum over components
    mean = {D: S(lambda n, M1, M2, a, b: n * M1), Yu: S(lambda n, M1, M2, a, b: n * M1 * a.mean_u), Yw: 0}
    mean.update({Ye[i]: S(lambda n, M1, M2, a, b, i=i: n * M1 * a.mean_e[i]) for i in range(k)})
    variables = [*Ye, Yu, Yw, D]
    cov = {}
    for i in range(k):
        for j in range(i, k):
            cov[(i, j)] = S(lambda n, M1, M2, a, b, i=i, j=j: n * (M2 * b.second_e[i][j]
                                                                  - M1**2 * a.mean_e[i] * a.mean_e[j]))
        cov[(i, k + 2)] = S(lambda n, M1, M2, a, b, i=i: n * (M2 * b.mean_e[i] - M1**2 * a.mean_e[i]))
    cov[(k, k)] = S(lambda n, M1, M2, a, b: n * (M2 * b.second_u - M1**2 * geo.t**2 * a.mean_u**2)) / geo.t**2
    cov[(k, k + 2)] = S(lambda n, M1, M2, a, b: n * (M2 * b.mean_u - M1**2 * a.mean_u))
    # each of the d - k - 1 complement directions w: the same variance; mean and Cov(Y_w, .) vanish (the laws are
    # symmetric under x_w -> -x_w, and neither the score vector nor a mean has a w-component)
    cov[(k + 1, k + 1)] = (d - k - 1) * S(lambda n, M1, M2, a, b: n * M2 * b.second_w)
    cov[(k + 1, k + 2)] = 0
    cov[(k + 2, k + 2)] = S(lambda n, M1, M2, a, b: n * (M2 - M1**2))
    return delta_bias(h, variables, mean, cov)


def mass_correction_at(model: Model, geo: Geometry, eps: int, index: int) -> sp.Expr:
    """The O(1/L) term of E[N_c / D] at sign eps (component ``index``)."""
    mom = _moments(model, geo, eps)
    Nc, D = sp.symbols("N_c D", positive=True)
    n, M1, M2, _, _ = mom[index]
    var_c = n * (M2 - M1**2)
    var_d = sp.Add(*[m[0] * (m[2] - m[1] ** 2) for m in mom])
    mean = {Nc: n * M1, D: sp.Add(*[m[0] * m[1] for m in mom])}
    return delta_bias(Nc / D, [Nc, D], mean, {(0, 0): var_c, (0, 1): var_c, (1, 1): var_d})


def finite_quantities(model: Model, geo: Geometry, d: sp.Symbol) -> dict[str, sp.Expr]:
    """J_correction (the O(1/L) terms), J_finite = J_limit + J_correction, and mass_finite.<c>, averaged over the
    sign, t substituted."""
    out: dict[str, sp.Expr] = {}
    if model.attention.query == "q":
        corr = sign_average(objective_correction_at(model, geo, eps, d) for eps in geo.signs)
        lim = sign_average(limit_at(model, geo, eps).J for eps in geo.signs)
        out["J_correction"] = geo.reduce(corr)
        out["J_finite"] = geo.reduce(lim + corr)
    for i, c in enumerate(model.components):
        corr = sign_average(mass_correction_at(model, geo, eps, i) for eps in geo.signs)
        lim = sign_average(limit_at(model, geo, eps).masses[i] for eps in geo.signs)
        out[f"mass_finite.{c.name}"] = geo.reduce(lim + corr)
    return out
