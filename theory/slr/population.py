r"""Paper C (``slr``): the population risk R = E (Y - T_{k,v}(X))^2 in the overlaps, derived with SymPy.

Model.  X = (X_1, ..., X_L) in R^d, J0 uniform on {1..L}; X_{J0} = mu k* + gamma G (mu = sqrt(d/2), G ~ N(0, I_d)),
the other tokens N(0, I_d), all independent; Y = <X_{J0}, v*> + xi, E xi = 0, Var xi = eps^2; k*, v* orthonormal.
Predictor T(X) = sum_l f_l with f_l = erf(lam <X_l, k>) <X_l, v>, |k| = |v| = 1.

Derivation.  By exchangeability condition on J0 = 1.  Token 1: with Z = <G, k>, U1 = <G, v>, U2 = <G, v*> (jointly
Gaussian, unit variances, correlations rho, eta, nu), <X_1, k> = mu kappa + gamma Z, <X_1, v> = mu theta + gamma U1,
y := <X_1, v*> = gamma U2.  A noise token: a = <X, k> ~ N(0,1), b = <X, v>, corr(a, b) = rho.  Given Z, (U1, U2)
is Gaussian (Schur complement), so E[P(U) | Z] of a polynomial P of degree <= 2 is P(mean) + (1/2) tr(Hess P Cov);
what remains is E[Z^n erf(m + sZ)^p] (:func:`attnverify.theory.slr.gauss.erf_moment`).  With the tokens
independent and A = y - f_1, B_l = f_l (l >= 2) i.i.d.,

    R = eps^2 + E A^2 - 2 (L-1) E A E B + (L-1) E B^2 + (L-1)(L-2) (E B)^2            (E y = 0 so E A = -E f_1).

Proven symbolically: R is invariant under (k, v) -> (-k, -v) (kappa, nu, theta, eta -> minus themselves, rho
unchanged); dR/dtheta, dR/deta, dR/drho vanish on M = {theta = eta = rho = 0}; the reduced risk r(kappa, nu) = R|_M.

The closed forms are the methods of :class:`RiskForms`, a part of Paper C's theory object (attnverify.theory.slr):
they call each other (and the Gaussian identities of attnverify.theory.slr.gauss) through ``self``, so a replaced
token moment or assembly reaches the risk and everything derived from it.
"""
from __future__ import annotations

import sympy as sp

from attnverify.theory.closed_forms import ClosedForms, derived, recorded
from attnverify.theory.slr.symbols import ON_M, OVERLAPS, L, eps, eta, gamma, kappa, lam, mu, nu, rho, theta

_Z = sp.Symbol("Z", real=True)
_U1, _U2 = sp.symbols("U1 U2", real=True)
FLIP = {kappa: -kappa, nu: -nu, theta: -theta, eta: -eta}   # (k, v) -> (-k, -v); rho = <k, v> is unchanged
#: the formal moments of the assembly: E A, E A^2 (A = y - f_1) and E B, E B^2 (B = f_l, l >= 2)
mA1, mA2, mB1, mB2 = sp.symbols("m_A1 m_A2 m_B1 m_B2", real=True)


def conditional_expectation(P: sp.Expr, U: tuple, cov: sp.Matrix) -> sp.Expr:
    """E[P(U) | Z] for (Z, U_1..U_k) centred Gaussian with covariance ``cov`` (Z first, unit variance) and P a
    polynomial of degree <= 2 in U (coefficients may involve Z): P(mean) + (1/2) sum_ij d2P/dUi dUj Cov_ij, with
    mean = cov[1:, 0] Z and Cov = cov[1:, 1:] - cov[1:, 0] cov[0, 1:] (exact for degree <= 2)."""
    if sp.Poly(P, *U).total_degree() > 2:
        raise ValueError("conditional_expectation handles polynomials of degree <= 2 in U")
    c = cov[1:, 0]
    C = cov[1:, 1:] - c * c.T
    mean = {u: c[i] * _Z for i, u in enumerate(U)}
    hess = sp.hessian(P, U)
    return sp.expand(P.xreplace(mean) + sum(hess[i, j] * C[i, j] for i in range(len(U)) for j in range(len(U))) / 2)


class RiskForms(ClosedForms):
    """The population risk and its structure (module docstring)."""

    def gaussian_erf_expectation(self, P: sp.Expr, p: int, m: sp.Expr, s: sp.Expr) -> sp.Expr:
        """E[erf(m + sZ)^p Q(Z)] for a polynomial Q in Z: sum over its monomials c_n E[Z^n erf^p] (Stein
        moments)."""
        poly = sp.Poly(sp.expand(P), _Z)
        return sp.Add(*[c * self.erf_moment(n, p, m, s) for (n,), c in poly.terms()])

    def token_expectation(self, P: sp.Expr, p: int, token: str) -> sp.Expr:
        """E[erf(lam <X, k>)^p P] for one token; P is a polynomial in (Z, U1[, U2]) of degree <= 2 in the U's."""
        if token == "informative":
            cov = sp.Matrix([[1, rho, eta], [rho, 1, nu], [eta, nu, 1]])      # (Z, U1, U2) = <G,k>, <G,v>, <G,v*>
            Q = conditional_expectation(P, (_U1, _U2), cov)
            return self.gaussian_erf_expectation(Q, p, lam * mu() * kappa, lam * gamma)
        cov = sp.Matrix([[1, rho], [rho, 1]])                                  # (a, b) = <X,k>, <X,v>
        Q = conditional_expectation(P, (_U1,), cov)
        return self.gaussian_erf_expectation(Q, p, sp.Integer(0), lam)

    @derived
    def token_moments(self) -> dict[str, sp.Expr]:
        """The per-token expectations: informative token (I) with y = <X_1, v*> and f = erf(lam <X_1,k>) <X_1,v>;
        noise token (N) with f = erf(lam a) b.  Keys: 'EI_y2', 'EI_yf', 'EI_f', 'EI_f2', 'EN_f', 'EN_f2'."""
        b1, y = mu() * theta + gamma * _U1, gamma * _U2
        b = _U1
        return {
            "EI_y2": sp.simplify(self.token_expectation(y**2, 0, "informative")),
            "EI_yf": self.token_expectation(y * b1, 1, "informative"),
            "EI_f": self.token_expectation(b1, 1, "informative"),
            "EI_f2": self.token_expectation(b1**2, 2, "informative"),
            "EN_f": sp.simplify(self.token_expectation(b, 1, "noise")),
            "EN_f2": self.token_expectation(b**2, 2, "noise"),
        }

    # -------------------------------------------------------------------------------------- assembly
    @recorded
    def assembly_formula(self, Lv) -> sp.Expr:
        """eps^2 + E A^2 - 2 (L-1) E A E B + (L-1) E B^2 + (L-1)(L-2) (E B)^2 in the formal moments mA1, mA2, mB1,
        mB2."""
        return eps**2 + mA2 - 2 * (Lv - 1) * mA1 * mB1 + (Lv - 1) * mB2 + (Lv - 1) * (Lv - 2) * mB1**2

    def assembly_residuals(self, lengths: tuple[int, ...] = (1, 2, 3, 4, 5)) -> dict[int, sp.Expr]:
        """For each L: E (xi + A - sum_{l=2..L} B_l)^2 expanded as a polynomial, every monomial replaced by the
        product of the moments of its independent factors (E xi = 0, E xi^2 = eps^2, moments of A and of the i.i.d.
        B_l), minus the general formula: 0 for every L checked."""
        out = {}
        for Lv in lengths:
            xi, A = sp.symbols("xi A", real=True)
            Bs = sp.symbols(f"B2:{Lv + 1}", real=True) if Lv > 1 else ()
            expr = sp.expand((xi + A - sp.Add(*Bs))**2)
            mom = {xi: (0, eps**2), A: (mA1, mA2), **{B: (mB1, mB2) for B in Bs}}
            total = sp.Integer(0)
            for monom, coeff in sp.Poly(expr, xi, A, *Bs).terms():
                term = coeff
                for var, power in zip((xi, A, *Bs), monom):
                    term *= 1 if power == 0 else mom[var][power - 1]
                total += term
            out[Lv] = sp.expand(total - self.assembly_formula(Lv))
        return out

    @derived
    def risk(self) -> sp.Expr:
        """R(kappa, nu, theta, eta, rho; lam, gamma, d, L, eps) = E (Y - T_{k,v}(X))^2 for unit k, v (zeta_erf where
        the square of erf appears)."""
        t = self.token_moments()
        EA2 = t["EI_y2"] - 2 * t["EI_yf"] + t["EI_f2"]
        EA1 = -t["EI_f"]
        subs = {mA1: EA1, mA2: EA2, mB1: t["EN_f"], mB2: t["EN_f2"]}
        return self.assembly_formula(L).xreplace(subs)

    # -------------------------------------------------------------------------------------- symmetry and M
    @derived
    def flip_residual(self) -> sp.Expr:
        """R(-kappa, -nu, -theta, -eta, rho) - R: 0 (the predictor T_{-k,-v} = T_{k,v})."""
        R = self.risk()
        return sp.simplify(sp.expand(R.xreplace(FLIP) - R))

    @derived
    def gradient(self) -> dict[sp.Symbol, sp.Expr]:
        """The partial derivatives dR/d(overlap) for the five overlaps."""
        R = self.risk()
        return {o: sp.diff(R, o) for o in OVERLAPS}

    @derived
    def normal_gradient_on_M(self) -> dict[sp.Symbol, sp.Expr]:
        """dR/dtheta, dR/deta, dR/drho at theta = eta = rho = 0: each simplifies to 0."""
        g = self.gradient()
        return {o: sp.simplify(g[o].xreplace(ON_M)) for o in (theta, eta, rho)}

    @derived
    def risk_on_M(self) -> sp.Expr:
        """r(kappa, nu) = R at theta = eta = rho = 0."""
        return sp.simplify(self.risk().xreplace(ON_M))
