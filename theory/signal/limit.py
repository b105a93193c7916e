r"""Paper A's long-sequence limit and its O(1/L) terms, for informative tokens with a given mean shift c.

Long-sequence limit (R, L - R -> oo, R/L fixed): numerator and denominator of the softmax average obey a law of
large numbers, so f_q -> f_oo = (R E_I[e^s x] + (L-R) E_N[e^s x]) / (R E_I[e^s] + (L-R) E_N[e^s]).  With
g = <q, z> ~ N(0, sigma^2) the Gaussian expectations E e^{beta g}, E g e^{beta g}, E e^{2 beta g} are computed by
SymPy (sympy.stats); P_perp_q z is independent of the scores and has mean zero.

Leading finite-L term: (d - 1) sigma^2 E sum_i a_i^2 (the orthogonal noise energy), with sum_i a_i^2 replaced by its
ratio-LLN limit.  It is the only O(1/L) term carrying a factor d; the other O(1/L) terms (q-direction noise, ratio
bias, informative-mass fluctuation) come from the second-order delta method in the (xi, q) plane
(:func:`in_plane_bias`).  The expected nuisance mass gets its O(1/L) ratio bias the same way.

These are derivations in the shift c (``theta`` for the fixed sign, ``+-theta`` for the symmetric one); the closed
forms of the model (:class:`attnverify.theory.signal.SignalTheory`) average them over the sign.
"""
from __future__ import annotations

import sympy as sp

from attnverify.theory.signal.model import L, R, beta, d, rho, sigma


def gaussian_moments() -> dict[str, sp.Expr]:
    """E e^{beta g}, E g e^{beta g} (exponential tilting), E e^{2 beta g}, E g e^{2 beta g}, E g^2 e^{2 beta g} for
    g ~ N(0, sigma^2), by sympy.stats."""
    from sympy.stats import E, Normal

    g = Normal("g", 0, sigma)
    return {
        "mgf": sp.simplify(E(sp.exp(beta * g))),
        "tilt": sp.simplify(E(g * sp.exp(beta * g))),
        "mgf2": sp.simplify(E(sp.exp(2 * beta * g))),
        "tilt2": sp.simplify(E(g * sp.exp(2 * beta * g))),
        "sq2": sp.simplify(E(g**2 * sp.exp(2 * beta * g))),
    }


def limit_for_shift(c: sp.Expr, moments: dict[str, sp.Expr]) -> dict[str, sp.Expr]:
    """Long-sequence limit when informative tokens are x = c xi + z (c a SymPy expression); ``moments`` are the
    Gaussian moments (:func:`gaussian_moments`).

    A token with mean shift m has score s = beta m rho + beta g and
    e^s x = e^{beta m rho} e^{beta g} (m xi + g q + P_perp z);
    taking expectations gives E e^s = e^{beta m rho} mgf and E e^s x = e^{beta m rho} (m mgf xi + tilt q).
    Returns the informative mass w, the (xi, q)-coordinates of f_oo, J_oo = |f_oo|^2, the limit of
    L-scaled sum_i a_i^2 times (d-1) sigma^2 (the finite-size term), the O(1/L) ratio bias of the nuisance mass and the
    in-plane O(1/L) term (:func:`in_plane_bias`).
    """
    m = moments
    e_inf, e_nui = sp.exp(beta * c * rho) * m["mgf"], m["mgf"]           # E e^s, informative / nuisance
    denom = R * e_inf + (L - R) * e_nui
    num_xi = R * sp.exp(beta * c * rho) * c * m["mgf"]                    # xi-coordinate of the numerator
    num_q = R * sp.exp(beta * c * rho) * m["tilt"] + (L - R) * m["tilt"]  # q-coordinate of the numerator
    a_xi, a_q = sp.simplify(num_xi / denom), sp.simplify(num_q / denom)
    gram = sp.Matrix([[1, rho], [rho, 1]])                                # <xi,xi>, <xi,q>, <q,q>
    coef = sp.Matrix([a_xi, a_q])
    J = sp.expand((coef.T * gram * coef)[0, 0])
    w = sp.simplify(R * e_inf / denom)
    e2_inf, e2_nui = sp.exp(2 * beta * c * rho) * m["mgf2"], m["mgf2"]    # E e^{2s}
    sum_a2 = sp.factor(sp.powsimp(sp.expand((R * e2_inf + (L - R) * e2_nui) / denom**2)))
    # second-order delta method for the nuisance mass M = A/(A+B): A, B = sums of e^s over nuisance / informative
    # tokens (independent), E M ~ f(mu) + (1/2) tr(Hess f(mu) diag(Var A, Var B))
    A, B = sp.symbols("A B", positive=True)
    f = A / (A + B)
    hess = sp.hessian(f, (A, B))
    mu = {A: (L - R) * e_nui, B: R * e_inf}
    var_a = (L - R) * (m["mgf2"] - m["mgf"] ** 2)
    var_b = R * sp.exp(2 * beta * c * rho) * (m["mgf2"] - m["mgf"] ** 2)
    mass_bias = sp.factor(sp.powsimp(sp.expand(((hess[0, 0] * var_a + hess[1, 1] * var_b) / 2).subs(mu))))
    return {"w": w, "a_xi": a_xi, "a_q": a_q, "J": J, "sum_a2": sum_a2,
            "finite": (d - 1) * sigma**2 * sum_a2, "mass_bias": mass_bias, "in_plane": in_plane_bias(c, moments)}


def in_plane_bias(c: sp.Expr, moments: dict[str, sp.Expr]) -> sp.Expr:
    """O(1/L) bias of the in-plane part of E|f|^2 (second-order delta method).

    In the plane of (xi, q) the numerator is A_xi xi + A_q q with A_xi = sum_i m_i e^{s_i}, A_q = sum_i g_i e^{s_i}
    (m_i = c on informative tokens, 0 on nuisance ones), the denominator D = sum_i e^{s_i}, and the in-plane
    |f|^2 = h(A_xi, A_q, D) = (A_xi^2 + 2 rho A_xi A_q + A_q^2) / D^2. Its bias is (1/2) tr(Hess h(mu) Sigma) with
    mu, Sigma the mean and covariance of (A_xi, A_q, D): sums over the tokens of E[v] and Cov[v], v = e^s (m, g, 1),
    E[v v^T] = e^{2 beta m rho} [[m^2 M2, m T2, m M2], [m T2, S2, T2], [m M2, T2, M2]] from the Gaussian moments.
    (The orthogonal noise sum_i e^{s_i} P_perp_q z_i is independent of (A_xi, A_q, D), centred: it only gives the
    (d - 1) term.)
    """
    mo = moments
    M1, T1, M2, T2, S2 = mo["mgf"], mo["tilt"], mo["mgf2"], mo["tilt2"], mo["sq2"]

    def mean_cov(m: sp.Expr):
        e = sp.exp(beta * m * rho)
        mean = e * sp.Matrix([m * M1, T1, M1])
        second = e**2 * sp.Matrix([[m**2 * M2, m * T2, m * M2], [m * T2, S2, T2], [m * M2, T2, M2]])
        return mean, second - mean * mean.T

    (mean_i, cov_i), (mean_n, cov_n) = mean_cov(c), mean_cov(sp.Integer(0))
    mu, Sigma = R * mean_i + (L - R) * mean_n, R * cov_i + (L - R) * cov_n
    Ax, Aq, D = sp.symbols("A_xi A_q D", real=True)
    h = (Ax**2 + 2 * rho * Ax * Aq + Aq**2) / D**2
    H = sp.hessian(h, (Ax, Aq, D)).subs(dict(zip((Ax, Aq, D), mu)))
    return sp.simplify(sum(H[j, k] * Sigma[j, k] for j in range(3) for k in range(3)) / 2)
