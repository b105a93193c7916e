"""A rigorous bound on the remainder of the Laplace expansion of X_beta[mu] - X_inf after its first terms.

With the notation of :mod:`attnverify.theory.meanfield.asymptotics` (kappa = beta |b|, u = b/|b|, alpha = (d - 1)/2,
p = (d - 3)/2 and, for the polynomial g of cos s, phi_g(v) = (1 - v/2)^p g(1 - v)), the field is
m_beta = r_u u + r_a P a + r_C P C u with the ratios

    r_u = J[c f]/J[f],   r_a = J[s2]/((d - 1) J[f]),   r_C = 2 J[c s2]/((d - 1) J[f]),
    J[g] = kappa^alpha / Gamma(alpha) int_0^2 e^{-kappa v} v^{alpha - 1} phi_g(v) dv

(c = 1 - v, s2 = v (2 - v), f = E_w f the density's average).  Splitting the integral at v = 1:

* on [0, 1], phi_g = sum_{k<N} phi_k v^k + R_N with |R_N(v)| <= M_N v^N (Lagrange's remainder; M_N encloses
  phi_g^(N)(xi)/N! for every xi in [0, 1], ball arithmetic over that interval), so

      J[g] = sum_{k<N} phi_k ((alpha)_k - Gamma(alpha + k, kappa)/Gamma(alpha)) kappa^{-k} + rho,
      |rho| <= M_N (alpha)_N kappa^{-N} + kappa^alpha/Gamma(alpha) e^{-kappa} G max(1, 2^{alpha-1}) 2^{-p}/(p + 1),

  the last term the part on [1, 2] (G >= |g(c)| for c in [-1, 0]; int_1^2 (1 - v/2)^p dv = 2^{-p}/(p + 1));
* each J[g] is then a ball, and so is each exact ratio.  The series coefficients r_k of the ratios (kappa^{-k}) follow
  from the Watson coefficients phi_k(0) (alpha)_k by the same recursion as the SymPy derivation, here in ball
  arithmetic and independently of it; the remainder of a ratio after ``terms`` terms is the exact ratio minus
  sum_{k<terms} r_k kappa^{-k}, a ball.

The bound on |X_beta - X_inf - sum_{k<terms} e_k beta^{-k}| at a point x is then
||P_perp_x V||_2 (|R_u| + |R_a| |P a| + |R_C| |P C u|), every |R| the upper end of its ball.  It holds for every
beta, asymptotic or not (at small kappa it is merely large, or infinite where the ball of J[f] holds 0: at kappa ~ 3
with N = 12), and it does not read the SymPy coefficients: a wrong e_k is not absorbed into it.
"""
from __future__ import annotations

import math

import flint
import numpy as np
from flint import arb

from attnverify.theory.certified import upper

PREC = 192            # bits of the ball arithmetic: the remainder after 4 terms is ~ kappa^-4 of terms of size 1
TAYLOR = 12           # N: Taylor terms of phi_g on [0, 1]; M_N (alpha)_N kappa^-N is the Taylor part's bound


def _poly_mul(a: list, b: list) -> list:
    out = [arb(0)] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            out[i + j] = out[i + j] + x * y
    return out


def _poly_add(*ps: list) -> list:
    n = max(len(p) for p in ps)
    return [sum((p[i] for p in ps if i < len(p)), arb(0)) for i in range(n)]


def _taylor_at(poly: list, xi: arb, order: int) -> list:
    """The Taylor coefficients 0..order-1 at xi of the polynomial sum_m poly[m] v^m (xi a ball: enclosures over it)."""
    return [sum((poly[m] * math.comb(m, i) * xi ** (m - i) for m in range(i, len(poly))), arb(0))
            for i in range(order)]


def _weight_taylor(p: arb, xi: arb, order: int) -> list:
    """The Taylor coefficients at xi of (1 - v/2)^p: binom(p, j) (-1/2)^j (1 - xi/2)^(p - j)."""
    out, binom = [], arb(1)
    for j in range(order):
        out.append(binom * arb(-0.5) ** j * (1 - xi / 2) ** (p - j))
        binom = binom * (p - j) / (j + 1)
    return out


def _phi_taylor(poly: list, p: arb, xi: arb, order: int) -> list:
    """Taylor coefficients at xi of phi(v) = (1 - v/2)^p poly(v), orders 0..order-1 (a product of series)."""
    P, W = _taylor_at(poly, xi, order), _weight_taylor(p, xi, order)
    return [sum((P[i] * W[k - i] for i in range(k + 1)), arb(0)) for k in range(order)]


def _J(poly: list, d: int, kappa: arb) -> tuple[arb, list]:
    """(J[g] as a ball, its series coefficients phi_k(0) (alpha)_k for k < TAYLOR) for g(1 - v) = poly(v)."""
    alpha, p = arb(d - 1) / 2, arb(d - 3) / 2
    phi0 = _phi_taylor(poly, p, arb(0), TAYLOR)
    M = _phi_taylor(poly, p, arb(0.5, 0.5), TAYLOR + 1)[TAYLOR]          # over xi in [0, 1]
    series, rising, total = [], arb(1), arb(0)
    g_alpha = alpha.gamma()
    for k in range(TAYLOR):
        series.append(phi0[k] * rising)
        total += phi0[k] * (rising - kappa.gamma_upper(alpha + k) / g_alpha) / kappa ** k
        rising = rising * (alpha + k)
    G = abs(_taylor_at(poly, arb(1.5, 0.5), 1)[0])                        # |g(1 - v)|, v in [1, 2]
    tail = kappa ** alpha / g_alpha * (-kappa).exp() * G * arb(2) ** (arb(max(0, 3 - d)) / 2) / (p + 1)   # 2^max(0,-p)
    rad = abs(M) * rising / kappa ** TAYLOR + tail
    return total + arb(0, upper(rad)), series


def _ratio_coefficients(num: list, den: list, terms: int) -> list:
    out: list = []
    for k in range(terms):
        out.append((num[k] - sum((out[j] * den[k - j] for j in range(k)), arb(0))) / den[0])
    return out


def ratio_remainders(c0: float, a_u: float, uCu: float, t: float, d: int, kappa: float, terms: int) -> tuple:
    """Upper bounds on |r_x - sum_{k<terms} r_x,k kappa^{-k}| for x = u, a, C (module docstring) at one point and
    one kappa = beta |b|; the density's invariants c0, <a, u>, u^T C u, tr(C P)/(d - 1) as floats (read exactly)."""
    with flint.ctx.workprec(PREC):
        K = arb(kappa)
        c, s2 = [arb(1), arb(-1)], [arb(0), arb(2), arb(-1)]
        f = _poly_add([arb(c0)], [arb(a_u) * x for x in c], [arb(uCu) * x for x in _poly_mul(c, c)],
                      [arb(t) * x for x in s2])
        Jf, Sf = _J(f, d, K)
        out = []
        for poly, scale in ((_poly_mul(c, f), arb(1)), (s2, 1 / arb(d - 1)), (_poly_mul(c, s2), 2 / arb(d - 1))):
            Jx, Sx = _J(poly, d, K)
            coef = _ratio_coefficients(Sx, Sf, terms)
            partial = sum((coef[k] / K ** k for k in range(terms)), arb(0))
            R = scale * (Jx / Jf - partial)
            out.append(upper(abs(R)) if R.is_finite() else math.inf)      # J[f]'s ball holds 0: no bound
        return tuple(out)


def reduction_invariants(X: np.ndarray, B: np.ndarray, a: np.ndarray, C: np.ndarray) -> tuple[np.ndarray, ...]:
    """The polar reduction's quantities at the rows x of X (module docstring of
    :mod:`attnverify.theory.meanfield.asymptotics`): |b| with b = B^T x, u = b/|b|, <a, u>, C u, u^T C u,
    t = tr(C P)/(d - 1), P a and P C u (P = I - u u^T), each an array over the rows."""
    d = B.shape[0]
    b = X @ B
    nb = np.linalg.norm(b, axis=1)
    u = b / nb[:, None]
    au = u @ a
    Cu = u @ C.T
    uCu = np.sum(u * Cu, axis=1)
    tt = (np.trace(C) - uCu) / (d - 1)
    return nb, u, au, Cu, uCu, tt, a[None, :] - u * au[:, None], Cu - u * uCu[:, None]


def remainder_bound(X: np.ndarray, B: np.ndarray, V: np.ndarray, c0: float, a: np.ndarray, C: np.ndarray,
                    betas, terms: int) -> np.ndarray:
    """(n_beta, n): an upper bound on |X_beta(x) - X_inf(x) - sum_{k<terms} e_k(x) beta^{-k}| at the rows x of X
    (unit vectors), for the density c0 + <a, y> + y^T C y (module docstring).  The float norms ||P_perp_x V||_2,
    |P a| and |P C u| are taken with a relative margin of 1e-12."""
    X, B, V = (np.asarray(M, dtype=float) for M in (X, B, V))
    a, C = np.asarray(a, dtype=float).ravel(), np.asarray(C, dtype=float)
    d = B.shape[0]
    nb, _, au, _, uCu, tt, Pa, PCu = reduction_invariants(X, B, a, C)
    betas = np.atleast_1d(betas)
    out = np.empty((len(betas), len(X)))
    for i, x in enumerate(X):
        PV = V - np.outer(x, x @ V)
        norms = (1 + 1e-12) * np.array([np.linalg.norm(PV, 2), np.linalg.norm(Pa[i]), np.linalg.norm(PCu[i])])
        for j, beta in enumerate(betas):
            Ru, Ra, RC = ratio_remainders(float(c0), float(au[i]), float(uCu[i]), float(tt[i]), d,
                                          float(beta) * float(nb[i]), terms)
            out[j, i] = norms[0] * (Ru + Ra * norms[1] + RC * norms[2])
    return out
