r"""Paper C (single-location regression, model ``slr``): the derivation, step by step, and the public API.

Marion, Berthier, Biau, Boyer, "Attention layers provably solve single-location regression", ICLR 2025.
Model: X = (X_1..X_L) in R^d, J0 uniform; X_{J0} ~ N(sqrt(d/2) k*, gamma^2 I), other tokens N(0, I), independent;
Y = <X_{J0}, v*> + xi (Var xi = eps^2); predictor T(X) = sum_l erf(lam <X_l, k>) <X_l, v> with |k| = |v| = 1;
risk R = E (Y - T)^2; projected gradient descent on S^{d-1} x S^{d-1}; overlaps kappa, nu, theta, eta, rho.

The work is split by job:
  slr_symbols    the symbols and their assumptions;
  slr_gauss      Stein's lemma, E erf(m + sZ), zeta_sigma(t) = E erf(t + sigma Z)^2 two ways, its evaluators;
  slr_risk       the population risk R in the overlaps, its symmetry, M and the reduced risk r(kappa, nu);
  slr_dynamics   the exact overlap map of projected gradient descent, the reduced map and flow on M;
  slr_oracle     the oracle's Riemannian Hessian, its certified lam-range as a strict local minimum, r on M;
  slr_stationary the stationary points on and off M (documented search);
  slr_baselines  the Bayes predictor and the best linear predictor;
  slr_eval       NumPy / mpmath evaluators of the closed forms.
Ball arithmetic is the shared attnverify.theory.certified (zeta_erf carries its own ball version).
This module gathers the derivation (:func:`derivation`) and re-exports the public names.
"""
from __future__ import annotations

from functools import lru_cache

import sympy as sp

from attnverify.theory import slr_dynamics as _D
from attnverify.theory import slr_gauss as _G
from attnverify.theory import slr_oracle as _O
from attnverify.theory import slr_risk as _R
from attnverify.theory.derivation import Step
from attnverify.theory.slr_baselines import (bayes_log_weight, bayes_log_weight_np, bayes_predictor,
                                             best_linear_predictor)
from attnverify.theory.slr_dynamics import (overlap_flow_abstract, overlap_map_abstract, reduced_critical_points,
                                            reduced_flow, reduced_map)
from attnverify.theory.slr_gauss import erf_mean, erf_moment, zeta_agreement, zeta_arb, zeta_erf, zeta_mp, zeta_np
from attnverify.theory.slr_eval import (gradient_mp, hessian_mp, overlap_map_np, reduced_map_np, reduced_risk_np,
                                           risk_gradient_np, risk_hessian_np, risk_mp, risk_np)
from attnverify.theory.slr_oracle import oracle_hessian, oracle_local_min_scan, oracle_on_M_proof
from attnverify.theory.slr_risk import gradient, risk, risk_on_M
from attnverify.theory.slr_stationary import stationary_points
from attnverify.theory.slr_symbols import (L, OVERLAPS, PARAMS, d, eps, eta, gamma, kappa, lam, mu, nu, rho,
                                           theta)

__all__ = [
    "kappa", "nu", "theta", "eta", "rho", "lam", "gamma", "d", "L", "eps", "mu", "OVERLAPS", "PARAMS",
    "erf_mean", "erf_moment", "zeta_erf", "zeta_mp", "zeta_np", "zeta_arb", "zeta_agreement",
    "risk", "gradient", "risk_on_M", "overlap_map_abstract", "overlap_flow_abstract", "reduced_map", "reduced_flow",
    "reduced_critical_points", "oracle_hessian", "oracle_local_min_scan", "oracle_on_M_proof", "stationary_points",
    "bayes_log_weight", "bayes_log_weight_np", "bayes_predictor", "best_linear_predictor",
    "risk_np", "risk_gradient_np", "risk_hessian_np", "reduced_risk_np", "reduced_map_np", "overlap_map_np",
    "risk_mp", "gradient_mp", "hessian_mp", "derivation",
]


@lru_cache(maxsize=None)
def _steps() -> tuple[Step, ...]:
    m, s = _G._m, _G._s
    stein = _G.stein_residuals()
    ob = _G.owen_route()
    zp = _G._zeta_prime_derived()
    tok = _R.token_moments()
    asm = _R.assembly_residuals()
    steps = [
        Step("Informative token: Z = <G,k>, U1 = <G,v>, U2 = <G,v*> are jointly Gaussian with unit variances; "
             "<X,k> = mu kappa + gamma Z, <X,v> = mu theta + gamma U1, y = <X,v*> = gamma U2, mu = sqrt(d/2)",
             sp.Matrix([[1, rho, eta], [rho, 1, nu], [eta, nu, 1]]),
             "G ~ N(0, I_d) projected on unit vectors; <k*, v*> = 0 so E y = 0", r"\Sigma_I"),
        Step("Noise token: (a, b) = (<X,k>, <X,v>) is a standard Gaussian pair with correlation rho",
             sp.Matrix([[1, rho], [rho, 1]]), "X ~ N(0, I_d), |k| = |v| = 1", r"\Sigma_N"),
        Step("Stein's lemma, first and second order: (z f - f') phi + (f phi)' and "
             "(z^2 f - f - f'') phi + ((z f + f') phi)' for an arbitrary f",
             sp.Matrix([stein["first"], stein["second"]]),
             "SymPy simplifies both to 0; integrate over R (boundary terms vanish for polynomial growth)",
             r"\mathrm{Stein}"),
        Step("Gaussian-erf mean: E erf(m + sZ)", erf_mean(m, s),
             "d/dm E erf(m+sZ) = (2/sqrt(pi)) E exp(-(m+sZ)^2), a Gaussian integral (completed square); integrated "
             "in m from 0 where the mean vanishes by symmetry", r"E_{\mathrm{erf}}"),
        Step("First and second moments: E[Z erf(m+sZ)] = s d/dm E erf, E[Z^2 erf(m+sZ)] = E erf + s^2 d^2/dm^2 E erf",
             sp.Matrix([erf_moment(1, 1, m, s), erf_moment(2, 1, m, s)]), "Stein's lemma", r"E_{Z\mathrm{erf}}"),
        Step("Derivative of zeta_s(t) = E erf(t + sZ)^2 (route a): (4/sqrt(pi)) E[exp(-W^2) erf W], W = t + sZ",
             zp["zeta_prime"], "exp(-W^2) phi(z) is c s0 times a Gaussian density in z (completed square; the constant "
             f"checked against the Gaussian integral: difference {zp['weight_check']}); then E erf of an affine "
             "Gaussian", r"\zeta'"),
        Step("zeta through Owen's T (route b): zeta_s(t) = 1 - 8 T(sqrt2 t / sqrt(1+2s^2), 1/sqrt(1+4s^2))",
             ob["zeta"], "erf = 2 Phi(sqrt2 x) - 1 (residual " + str(ob["erf_phi_residual"]) + "); E Phi(h+kZ)^2 is a "
             "bivariate orthant probability; Owen's identity checked by its h-derivative (residual "
             f"{ob['owen_identity_residual']}); d/dt of route (b) minus zeta' of route (a): {ob['routes_residual']}, "
             "and both tend to 1 as t -> oo", r"\zeta"),
        Step("zeta at t = 0", _G._zeta_at_zero(), "T(0, a) = atan(a)/(2 pi) (SymPy integral)", r"\zeta(0)"),
        Step("zeta is even and solves the heat equation d zeta/d s = s d^2 zeta/dt^2",
             sp.Matrix([_G.zeta_evenness_residual(), _G.heat_equation_residual()]),
             "zeta'(-t) + zeta'(t) and d/ds zeta' - s d^2/dt^2 zeta' simplify to 0", r"\zeta_{\pm}"),
        Step("Noise token: E[erf(lam a) b] and E[erf(lam a)^2 b^2]", sp.Matrix([tok["EN_f"], tok["EN_f2"]]),
             "E[b | a] = rho a, Var(b | a) = 1 - rho^2; Stein moments with m = 0, s = lam", r"E_N"),
        Step("Informative token: E[erf(lam <X,k>) <X,v>]", tok["EI_f"],
             "E[U1 | Z] = rho Z; Stein moments with m = lam mu kappa, s = lam gamma", r"E_I f"),
        Step("Independence of the tokens: E (xi + A - sum_{l>=2} B_l)^2 = eps^2 + E A^2 - 2(L-1) E A E B "
             "+ (L-1) E B^2 + (L-1)(L-2) (E B)^2, A = y - f_1, B_l = f_l",
             sp.Matrix([asm[k] for k in sorted(asm)]),
             "expanded for L = 1..5 with every monomial replaced by the product of the moments of its independent "
             "factors; the difference with the formula is 0 for each L", r"\Delta_L"),
        Step("The population risk R = E (Y - T_{k,v}(X))^2 for unit k, v", risk(),
             "the token moments assembled (exchangeability: condition on J0 = 1)", "R"),
        Step("Invariance under (k, v) -> (-k, -v): R(-kappa, -nu, -theta, -eta, rho) - R", _R.flip_residual(),
             "erf odd, zeta even in t; SymPy simplifies the difference", r"R_{\pm}"),
        Step("On M = {theta = eta = rho = 0}: dR/dtheta, dR/deta, dR/drho",
             sp.Matrix([_R.normal_gradient_on_M()[o] for o in (theta, eta, rho)]), "SymPy, evaluated on M",
             r"\nabla_{\perp} R|_M"),
        Step("The reduced risk on M", risk_on_M(), "R at theta = eta = rho = 0", "r_M"),
    ]
    om = overlap_map_abstract()
    fl = overlap_flow_abstract()
    P = _D.reduced_partials()
    steps += [
        Step("One projected gradient step (step h) in the overlaps: kappa' (the map closes on the five overlaps; "
             "R_o are the partials of R)", om["new"][kappa],
             "Gram matrix of (k, v, k*, v*); |k - h g_k|^2 - (1 + h^2 |g_k|^2) = " + str(om["norm_residuals"][0]),
             r"\kappa'"),
        Step("The gradient flow of the overlaps (d/dh of the map at h = 0)",
             sp.Matrix([fl[o] for o in OVERLAPS]), "SymPy differentiation", r"\dot o"),
        Step("M is invariant for every step h: theta', eta', rho' on M (where R_theta = R_eta = R_rho = 0)",
             sp.Matrix([_D.invariance_of_M()[o] for o in (theta, eta, rho)]), "SymPy simplification of the map",
             r"o'_\perp|_M"),
        Step("The reduced map on M", sp.Matrix([reduced_map()["abstract"][kappa], reduced_map()["abstract"][nu]]),
             "the map at theta = eta = rho = 0, with R_kappa = r_kappa, R_nu = r_nu", r"(\kappa', \nu')"),
        Step("The reduced flow on M", sp.Matrix(reduced_flow()), "d/dh of the reduced map at h = 0",
             r"(\dot\kappa, \dot\nu)"),
        Step("r is affine in nu, and r_kappa = r_kappa_nu (nu - nu*(kappa)) with the nullcline nu* an erf",
             sp.Matrix([P["r_nu"], P["nu_star"], P["affine_residual"]]),
             "r_nu is free of nu; nu* solved by SymPy; the affine residual simplifies to 0", r"\nu^*"),
    ]
    crit = reduced_critical_points()
    steps += [
        Step("Critical points of the reduced flow on [-1, 1]^2: (0, 0) and the corners (+-1, +-1)",
             sp.Matrix([[c["kappa"], c["nu"]] for c in crit]),
             "r_nu = 0 only at kappa = 0 (then nu = nu*(0) = 0); on the edges (1 - kappa^2)(1 - nu^2) kills the "
             "flow only at the corners since |nu*| < 1", r"\mathrm{crit}_M"),
        Step("Jacobian of the reduced flow at the saddle (0, 0)", crit[0]["jacobian"], "SymPy", r"J_{(0,0)}"),
        Step("Jacobian of the reduced flow at the oracle (1, 1)", crit[1]["jacobian"],
             "SymPy; both eigenvalues negative (erf < 1)", r"J_{(1,1)}"),
    ]
    blocks = _O.oracle_hessian_blocks()
    pr = oracle_on_M_proof()
    bl = best_linear_predictor()
    steps += [
        Step("Riemannian Hessian at the oracle: -R_kappa on the d-2 directions of k orthogonal to k*, v*; -R_nu on "
             "those of v; and a 2 x 2 block in (k tilted to v*, v tilted to k*)",
             sp.Matrix([blocks["orth_k"], blocks["orth_v"]]),
             "second derivative along normalised curves through the oracle (the gradient vanishes there); the "
             "coupling entries between the three groups simplify to 0", r"\lambda_\perp"),
        Step("The 2 x 2 block of the Riemannian Hessian at the oracle", blocks["block"],
             "SymPy; its determinant's sign is scanned in lam in ball arithmetic (oracle_local_min_scan)",
             r"H_{ab}"),
        Step("On M the oracle minimises r: r_kappa(kappa, 1) = r_kappa_nu (1 - nu*) < 0, and r(kappa, nu) >= "
             "r(|kappa|, 1) since r is affine in nu with slope -2 gamma^2 erf(c kappa)", pr["r_kappa_at_nu1"],
             f"slope negative: {pr['slope_negative']}; nu* is an erf: {pr['nu_star_is_erf']}", r"r_\kappa(\kappa,1)"),
        Step("Bayes predictor: log-likelihood ratio of a token being the informative one (a = <x, k*>, n2 = |x|^2); "
             "posterior weights softmax(s_j), predictor sum_j w_j <X_j, v*>", bayes_log_weight(),
             "sum over coordinates of log N(x_i; m_i, gamma^2) - log N(x_i; 0, 1) (sympy.stats densities)", "s(x)"),
        Step("Best linear predictor: beta_l = b v* for every token, no k* part, no intercept", bl["coef_v"],
             "normal equations in the k*- and v*-coordinates, exchangeable ansatz; residual "
             f"{bl['normal_eq_residual']}", "b"),
        Step("Risk of the best linear predictor minus eps^2 (independent of d)", bl["excess"],
             "Var Y - Cov(X, Y)^T beta", r"R_{\mathrm{lin}} - \epsilon^2"),
    ]
    return tuple(steps)


def derivation() -> list[Step]:
    """The Paper C derivation as steps (statement, SymPy result, reason, short LaTeX label); every result is
    computed by SymPy from the model (first call about 20 s, then cached)."""
    return list(_steps())
