r"""Paper C (``slr``): the baselines, derived with SymPy: the Bayes predictor and the best linear predictor.

Bayes.  Given X, the posterior of J0 is w_j = exp(s_j) / sum_l exp(s_l) with s_j the log-likelihood ratio of token j
being informative, s(x) = log N(x; mu k*, gamma^2 I_d) - log N(x; 0, I_d) (the uniform prior and the factors of
the other tokens cancel).  Coordinate by coordinate, with a = <x, k*> and n2 = |x|^2,
s = (mu/gamma^2) a - mu^2/(2 gamma^2) - (1/(2 gamma^2) - 1/2) n2 - d log gamma (:func:`bayes_log_weight`).
Given J0 = j and X, Y = <X_j, v*> + xi, so E[Y | X] = sum_j w_j <X_j, v*> and the Bayes risk is
R* = eps^2 + E[sum_j w_j y_j^2 - (sum_j w_j y_j)^2], y_j = <X_j, v*> (an expectation for Monte Carlo).

Best linear predictor f(X) = b0 + sum_l <beta_l, X_l>.  Only second moments matter.  In the directions orthogonal to
k*, v* every cross-moment with Y and with the k*, v* coordinates vanishes, so those coefficients are 0.  With
u_l = <X_l, k*>, w_l = <X_l, v*>: the moments follow by conditioning on J0 (informative with probability 1/L), the
w-block of the covariance is s_w I_L, the u-block s_u I_L - (mu/L)^2 1 1^T, the cross block 0, Cov(w_l, Y) = gamma^2/L,
Cov(u_l, Y) = 0.  By exchangeability the solution of the normal equations is beta_w = b 1,
b = gamma^2/(gamma^2 + L - 1), beta_u = 0 (the u-block is positive definite), and
R_lin = Var Y - Cov(X, Y)^T beta = eps^2 + gamma^2 (L - 1)/(gamma^2 + L - 1) (:func:`best_linear_predictor`).

The closed forms are the methods of :class:`BaselineForms`, a part of Paper C's theory object (attnverify.theory.slr).
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from attnverify.theory.closed_forms import ClosedForms, derived
from attnverify.theory.slr.symbols import L, d, eps, gamma, mu

a_sym = sp.Symbol("a", real=True)                  # <x, k*>
n2_sym = sp.Symbol("n2", nonnegative=True)         # |x|^2
_x, _m = sp.symbols("x m", real=True)


class BaselineForms(ClosedForms):
    """The Bayes predictor and the best linear predictor (module docstring)."""

    @derived
    def coordinate_log_ratio(self) -> sp.Expr:
        """log N(x; m, gamma^2) - log N(x; 0, 1) for one coordinate (SymPy's normal densities)."""
        from sympy.stats import Normal, density
        num = density(Normal("U", _m, gamma))(_x)
        den = density(Normal("V", 0, 1))(_x)
        return sp.expand(sp.expand_log(sp.log(num) - sp.log(den), force=True))

    @derived
    def bayes_log_weight(self) -> sp.Expr:
        """s(a, n2) = log-likelihood ratio of a token x being the informative one (a = <x, k*>, n2 = |x|^2).

        Sum over the d coordinates of the one-coordinate log ratio, with mean mu on the k* coordinate and 0 elsewhere:
        the m-free part is c2 x^2 + c0 per coordinate (summing gives c2 n2 + d c0), the k* coordinate adds
        r(a, mu) - r(a, 0)."""
        r = self.coordinate_log_ratio()
        base = sp.Poly(r.subs(_m, 0), _x)
        c2, c0 = base.coeff_monomial(_x**2), base.coeff_monomial(1)
        if base.coeff_monomial(_x) != 0:
            raise ArithmeticError("the centred log ratio has a linear term")
        shift = sp.expand(r.subs({_m: mu(), _x: a_sym}) - r.subs({_m: 0, _x: a_sym}))
        return sp.expand(c2 * n2_sym + d * c0 + shift)

    def bayes_predictor(self) -> dict[str, sp.Expr]:
        """The Bayes predictor as a formula record: 'log_weight' s(a, n2); 'weights' (the softmax, in words);
        'predictor' and 'excess_risk' as SymPy Eq with indexed symbols (j = 1..L)."""
        j, l = sp.symbols("j l", integer=True, positive=True)
        s, y, w = sp.IndexedBase("s"), sp.IndexedBase("y"), sp.IndexedBase("w")
        weights = sp.Eq(w[j], sp.exp(s[j]) / sp.Sum(sp.exp(s[l]), (l, 1, L)))
        pred = sp.Eq(sp.Symbol("f^*"), sp.Sum(w[j] * y[j], (j, 1, L)))
        excess = sp.Eq(sp.Symbol("R^*") - eps**2,
                       sp.Symbol("E") * (sp.Sum(w[j] * y[j]**2, (j, 1, L)) - sp.Sum(w[j] * y[j], (j, 1, L))**2))
        return {"log_weight": self.bayes_log_weight(), "weights": weights, "predictor": pred, "excess_risk": excess}

    @derived
    def bayes_log_weight_function(self):
        """s(a, n2; gamma, d) lambdified for NumPy."""
        return sp.lambdify((a_sym, n2_sym, gamma, d), self.bayes_log_weight(), modules="numpy")

    def bayes_log_weight_np(self, a, n2, gamma_: float, d_: int) -> np.ndarray:
        """s(a, n2) in float64 (broadcast).  The posterior weights are softmax(s) over the tokens: take it in log-space
        (subtract the max), the s_j reach +-|x|^2 ~ d."""
        f = self.bayes_log_weight_function()
        return np.asarray(f(np.asarray(a, float), np.asarray(n2, float), gamma_, d_), dtype=float)

    # -------------------------------------------------------------------------------------- best linear predictor
    @derived
    def linear_moments(self) -> dict[str, sp.Expr]:
        """Second moments of the k*- and v*-coordinates of a token and of Y, by conditioning on J0 (SymPy's normal
        moments for the informative token N(mu, gamma^2) in u, N(0, gamma^2) in w, and N(0, 1) for a noise token)."""
        from sympy.stats import E, Normal
        uI, wI = Normal("uI", mu(), gamma), Normal("wI", 0, gamma)
        uN, wN = Normal("uN", 0, 1), Normal("wN", 0, 1)
        p = 1 / L
        Eu = sp.simplify(p * E(uI) + (1 - p) * E(uN))
        Euu = sp.simplify(p * E(uI**2) + (1 - p) * E(uN**2))
        Eww = sp.simplify(p * E(wI**2) + (1 - p) * E(wN**2))
        Euw = sp.simplify(p * E(uI) * E(wI) + (1 - p) * E(uN) * E(wN))      # independent coordinates
        EwY = sp.simplify(p * E(wI**2))                                       # Y = w_{J0} + xi
        EuY = sp.simplify(p * E(uI) * E(wI))
        # two different tokens l != m: at most one is informative, and the other is centred
        Eu_lm = sp.simplify(2 * p * E(uI) * E(uN) + (1 - 2 * p) * E(uN)**2)
        Ew = sp.simplify(p * E(wI) + (1 - p) * E(wN))
        return {"E_u": Eu, "E_w": Ew, "E_Y": sp.simplify(E(wI)), "E_uu": Euu, "E_ww": Eww, "E_uw": Euw, "E_wY": EwY,
                "E_uY": EuY, "E_ul_um": Eu_lm,
                "var_Y": sp.simplify(E(wI**2) + eps**2)}

    @derived
    def best_linear_predictor(self) -> dict[str, sp.Expr]:
        """'coef_v' (b: beta_l = b v*), 'coef_k' (0), 'intercept' (0), 'risk' R_lin, 'excess' R_lin - eps^2, and the
        checks 'normal_eq_residual' (Sigma_ww b 1 - Cov(w, Y) per coordinate: 0) and 'u_block_eigenvalues'
        (both positive: beta_u = 0 is the unique solution of Sigma_uu beta_u = 0)."""
        m = self.linear_moments()
        s_w = m["E_ww"]                                          # Var(w_l) (E w = 0), Cov(w_l, w_m) = 0
        s_u = sp.simplify(m["E_uu"] - m["E_u"]**2)              # Var(u_l)
        c_um = sp.simplify(m["E_ul_um"] - m["E_u"]**2)          # Cov(u_l, u_m), l != m
        b = sp.Symbol("b", real=True)
        (b_sol,) = sp.solve(sp.Eq(s_w * b, m["E_wY"]), b)         # exchangeable ansatz beta_w = b 1 (Sigma_ww = s_w I)
        b_sol = sp.simplify(b_sol)
        eig_u = (sp.simplify(s_u - c_um), sp.simplify(s_u + (L - 1) * c_um))   # on 1-perp and on 1
        intercept = sp.simplify(m["E_Y"] - L * (0 * m["E_u"] + b_sol * m["E_w"]))   # E Y - beta . E X (beta_u = 0)
        risk = sp.simplify(m["var_Y"] - L * m["E_wY"] * b_sol)
        return {"coef_v": b_sol, "coef_k": sp.Integer(0), "intercept": intercept, "risk": risk,
                "excess": sp.simplify(risk - eps**2), "normal_eq_residual": sp.simplify(s_w * b_sol - m["E_wY"]),
                "u_block_eigenvalues": eig_u, "cov_w": s_w, "var_u": s_u, "cov_u_lm": c_um}
