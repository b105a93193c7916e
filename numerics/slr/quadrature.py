r"""Deterministic population risk of Paper C's predictor by quadrature of low-dimensional Gaussian expectations.

The numeric cross-check of the theory's closed form: it uses only Gaussian linear algebra (a factor of a covariance) and
quadrature of the integrands as defined; none of the closed-form Gaussian-erf identities.

Reduction (by hand, from the model; notation of ``slr_model``). Write phi(x) = erf(lam <x, k>) <x, v>, so
T = sum_l phi(X_l). Condition on J0 (the risk does not depend on it: T is symmetric in the tokens). Let S = X_J0
(the signal token) and N_1..N_{L-1} the others, all independent; Y = V + xi with V = <S, v*>. Then
    Y - T = (V - phi(S)) + xi - sum_j phi(N_j),
a sum of independent terms, so with D = V - phi(S), m_S = E phi(S), m_N = E phi(N), and E V = a <k*, v*> = 0,
    R = E (Y - T)^2 = eps^2 + Var D + (L - 1) Var phi(N) + (E D - (L - 1) m_N)^2
      = eps^2 + E D^2 - m_S^2 + (L - 1)(B_N - m_N^2) + (m_S + (L - 1) m_N)^2,         B_N = E phi(N)^2.
Expanding the square instead gives the same R = gamma^2 + eps^2 - 2 E[V phi(S)] + E phi(S)^2 + (L-1) B_N
+ 2 (L-1) m_S m_N + (L-1)(L-2) m_N^2 (using E V^2 = gamma^2); the variance form above has no cancellation.

Each expectation is a Gaussian integral of dimension <= 3:
  * nuisance token: (U, W) = (<N, k>, <N, v>) ~ N(0, C_N), C_N = [[1, rho], [rho, 1]]  (2-D: m_N, B_N);
  * signal token: (U, W, V) = (<S, k>, <S, v>, <S, v*>) ~ N(a (kappa, theta, 0), gamma^2 G),
    G = Gram(k, v, v*) = [[1, rho, eta], [rho, 1, nu], [eta, nu, 1]], a = sqrt(d/2)  (3-D: m_S, E D^2).
With a factor C (C C^T = covariance) whose first row is (c_11, 0, 0) (``_factor_psd``), (U, W, V) = mean + C z,
z ~ N(0, I): U depends on z_1 only (U = a kappa + gamma z_1 for S, U = z_1 for N), and W, V are affine in z.
Every integrand is erf(lam U) or erf(lam U)^2 times a polynomial of degree <= 2 in (z_2, z_3). So a tensor rule
is used: 3 Gauss-Hermite nodes in z_2, z_3 (exact for polynomials of degree <= 5) and a 1-D rule in z_1 that
carries all the error:
  * ``rule="hermite"``: n-node Gauss-Hermite (probabilists' weight e^{-z^2/2}). The integrand in z_1 is an erf of
    slope s = lam * max(1, gamma); its Gauss-Hermite error decays roughly like exp(-c n / s^2) (an entire function of
    Gaussian growth), so the default is n = 60 + 60 s^2 (``default_nodes``); relative errors measured with
    ``convergence`` against the panel rule are <= 1e-13 for s <= 8 at the default.
    Measured (d = 400, L = 10, gamma = sqrt(1/2), eps = 0.1; largest relative difference to the panel rule over the
    oracle, a point near it, a point on M and a random point; s = lam here since gamma < 1):
        n     = 20     40     80     160    320    640    1280
        s=0.1   1e-15  9e-16  1e-15  3e-15  9e-15  2e-14  1e-14    (default n = 61)
        s=0.9   1e-5   4e-10  4e-16  4e-15  9e-15  2e-14  2e-14    (default n = 109)
        s=2.0   2e-2   1e-3   4e-6   2e-10  7e-15  2e-14  2e-14    (default n = 300)
        s=5.0   1e-1   8e-2   2e-2   2e-3   5e-5   4e-8   4e-14    (default n = 1560)
    (the ~1e-14 floor is rounding in the weighted sums).
  * ``rule="panels"``: composite 8-point Gauss-Legendre on [-Z, Z], Z = 12 (Gaussian mass outside 3.6e-33), panel
    width min(0.5, 0.5 / s): resolves the erf transition for slopes up to ~1000 (large-lam Hessian studies).
  * ``rule="auto"`` (the default): Gauss-Hermite while its default node count fits (s up to ~18), panels beyond.
The risk is defined where G is positive semidefinite (a realisable point); a semidefinite G (|rho| = 1, or
v = v*) has a factor with zero columns.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy.special import erf, roots_hermitenorm, roots_legendre

from attnverify.numerics.slr.model import GRAM_TOL, SLRModel, check_overlaps, lam_value

PANEL_HALF_WIDTH = 12.0     # [-Z, Z] for the panel rule: P(|z| > 12) = 3.6e-33
PANEL_ORDER = 8             # Gauss-Legendre nodes per panel
POLY_NODES = 3              # Gauss-Hermite nodes in z_2, z_3: exact for the degree <= 2 polynomials there
MAX_NODES = 20000           # Gauss-Hermite: slope s = lam max(1, gamma) up to ~18
MAX_PANEL_NODES = 400_000   # panel rule: s up to ~1000
_WORK_ELEMENTS = 2_000_000  # quadrature points (x overlap points) per work array


def default_nodes(model: SLRModel, lam: float) -> int:
    """Gauss-Hermite node count for slope s = lam max(1, gamma): 60 + 60 s^2 (measured relative error against the
    panel rule <= 1e-13 for s <= 5 at d in {20, 80, 400}; ``convergence`` repeats the study at any point)."""
    s = lam * max(1.0, model.gamma)
    return int(min(MAX_NODES, 60 + np.ceil(60.0 * s * s)))


@lru_cache(maxsize=64)
def _hermite(n: int) -> tuple[np.ndarray, np.ndarray]:
    z, w = roots_hermitenorm(n)
    return z, w / w.sum()


@lru_cache(maxsize=64)
def _panels(width: float) -> tuple[np.ndarray, np.ndarray]:
    n_panels = int(np.ceil(2 * PANEL_HALF_WIDTH / width))
    edges = np.linspace(-PANEL_HALF_WIDTH, PANEL_HALF_WIDTH, n_panels + 1)
    t, w = roots_legendre(PANEL_ORDER)
    half = 0.5 * np.diff(edges)[:, None]
    z = (0.5 * (edges[1:] + edges[:-1]))[:, None] + half * t
    wz = half * w * np.exp(-0.5 * z * z) / np.sqrt(2 * np.pi)
    return z.ravel(), wz.ravel()


def rule_nodes(model: SLRModel, lam: float, n_nodes: int | None = None, rule: str = "auto"
               ) -> tuple[np.ndarray, np.ndarray]:
    """The 1-D rule in z_1: nodes and weights (summing to 1 up to the truncated tail) for E f(z_1), z_1 ~ N(0, 1).
    ``rule="auto"`` (the default) is Gauss-Hermite where its default node count fits (slope s = lam max(1, gamma)
    up to about 18, or ``n_nodes`` given) and the panel rule beyond, so that every lam the checks admit has a
    rule."""
    s = lam * max(1.0, model.gamma)
    if rule == "auto":
        rule = "hermite" if n_nodes is not None or 60 + 60 * s * s <= MAX_NODES else "panels"
    if rule == "hermite":
        if n_nodes is None:
            if 60 + 60 * s * s > MAX_NODES:
                raise ValueError(f"lam = {lam:g} is too large for rule='hermite' (slope lam max(1, gamma) = {s:.3g} "
                                 f"needs more than {MAX_NODES} nodes): use rule='panels'")
            n = default_nodes(model, lam)
        else:
            n = n_nodes
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 2 <= n <= MAX_NODES:
            raise ValueError(f"n_nodes must be an integer in [2, {MAX_NODES}], got {n!r}")
        return _hermite(int(n))
    if rule == "panels":
        if n_nodes is not None:
            raise ValueError("n_nodes applies to rule='hermite' only (the panel rule sets its width from lam)")
        width = float(min(0.5, 0.5 / s))
        if 2 * PANEL_HALF_WIDTH / width * PANEL_ORDER > MAX_PANEL_NODES:
            raise ValueError(f"lam = {lam:g} is too large for the panel rule (slope {s:.3g}, more than "
                             f"{MAX_PANEL_NODES} nodes)")
        return _panels(width)
    raise ValueError(f"rule must be 'auto', 'hermite' or 'panels', got {rule!r}")


def _factor_psd(G: np.ndarray) -> np.ndarray:
    """A factor C with C C^T = G for a batch (..., m, m) of PSD matrices with G[0, 0] > 0, whose first row is
    (sqrt(G00), 0, ..., 0), so that the first coordinate depends on z_1 only. The first column is the Cholesky
    column; the rest is the symmetric square root Q sqrt(Lambda) of the Schur complement S = G[1:, 1:] - c c^T.

    Unlike a full Cholesky factor this stays accurate where G is nearly singular: each entry of S carries a rounding
    of a few ulps and so does each eigenvalue, while Cholesky pivots after a small pivot p lose ulp / p (1e-16 / 3e-9
    = 4e-8 at stationary points of Paper C with v ~ -k, where they came out below -GRAM_TOL and the point could not
    be tested). Eigenvalues in [-GRAM_TOL, 0] are rounding of a semidefinite G and read as 0 (the boundary of the
    realisable set); a more negative one means G is not PSD. (A Cholesky factor that zeroed pivots <= GRAM_TOL
    also dropped the genuine variance 1 - rho^2 = 2e-11 at another such point: an error of 1.5e-8 R.)"""
    c = G[..., :, 0] / np.sqrt(G[..., :1, 0])
    S = G[..., 1:, 1:] - c[..., 1:, None] * c[..., None, 1:]
    lam, Q = np.linalg.eigh(S)
    if np.any(lam < -GRAM_TOL):
        raise ValueError("overlaps are not realisable: the Gram matrix of (k, v, v*) is not positive semidefinite")
    C = np.zeros_like(G)
    C[..., :, 0] = c
    C[..., 1:, 1:] = Q * np.sqrt(np.maximum(lam, 0.0))[..., None, :]
    return C


@dataclass(frozen=True)
class RiskTerms:
    """The Gaussian expectations that make up the risk, each of shape (...) over the overlap points:
    m_S = E phi(S), DD_S = E (V - phi(S))^2, m_N = E phi(N), B_N = E phi(N)^2, and the model's L, eps."""

    m_S: np.ndarray
    DD_S: np.ndarray
    m_N: np.ndarray
    B_N: np.ndarray
    L: int
    eps: float

    def risk(self) -> np.ndarray:
        """R = eps^2 + (DD_S - m_S^2) + (L-1)(B_N - m_N^2) + (m_S + (L-1) m_N)^2 (module docstring)."""
        L = self.L
        return (self.eps ** 2 + (self.DD_S - self.m_S ** 2) + (L - 1) * (self.B_N - self.m_N ** 2)
                + (self.m_S + (L - 1) * self.m_N) ** 2)


def _terms(model: SLRModel, ov: np.ndarray, lam: float, z1: np.ndarray, w1: np.ndarray) -> RiskTerms:
    """RiskTerms for validated overlaps ov (P, 5) with the z_1 rule (z1, w1), in chunks of points (memory)."""
    per = max(1, _WORK_ELEMENTS // (z1.size * POLY_NODES ** 2))
    parts = [_terms_chunk(model, ov[i:i + per], lam, z1, w1) for i in range(0, ov.shape[0], per)]
    if len(parts) == 1:
        return parts[0]
    return RiskTerms(*(np.concatenate([getattr(p, f) for p in parts]) for f in ("m_S", "DD_S", "m_N", "B_N")),
                     L=model.L, eps=model.eps)


def _terms_chunk(model: SLRModel, ov: np.ndarray, lam: float, z1: np.ndarray, w1: np.ndarray) -> RiskTerms:
    """RiskTerms for overlaps ov (P, 5) with the z_1 rule (z1, w1); no realisability check of k*."""
    kap, nu, th, et, rh = ov.T
    zp, wp = _hermite(POLY_NODES)
    a, g = model.amplitude, model.gamma
    # nuisance token: (U, W) = C_N (z1, z2)
    C_N = _factor_psd(np.stack([np.stack([np.ones_like(rh), rh], -1), np.stack([rh, np.ones_like(rh)], -1)], -2))
    e1 = erf(lam * z1)                                                          # (n,)
    W = C_N[:, 1, 0, None, None] * z1[None, :, None] + C_N[:, 1, 1, None, None] * zp[None, None, :]   # (P, n, m)
    phi = e1[None, :, None] * W
    w12 = w1[:, None] * wp[None, :]
    m_N = np.einsum("pnm,nm->p", phi, w12)
    B_N = np.einsum("pnm,nm->p", phi * phi, w12)
    # signal token: (U, W, V) = a (kappa, theta, 0) + gamma C (z1, z2, z3)
    one = np.ones_like(rh)
    G = np.stack([np.stack([one, rh, et], -1), np.stack([rh, one, nu], -1), np.stack([et, nu, one], -1)], -2)
    C = g * _factor_psd(G)                                                      # (P, 3, 3)
    Z1, Z2, Z3 = z1[None, :, None, None], zp[None, None, :, None], zp[None, None, None, :]
    c = C[:, :, :, None, None, None]
    U = a * kap[:, None, None, None] + c[:, 0, 0] * Z1
    Ws = a * th[:, None, None, None] + c[:, 1, 0] * Z1 + c[:, 1, 1] * Z2 + c[:, 1, 2] * Z3
    V = c[:, 2, 0] * Z1 + c[:, 2, 1] * Z2 + c[:, 2, 2] * Z3
    phi_S = erf(lam * U) * Ws                                                   # (P, n, m, q)
    w123 = w1[:, None, None] * wp[None, :, None] * wp[None, None, :]
    m_S = np.einsum("pnmq,nmq->p", phi_S, w123)
    DD_S = np.einsum("pnmq,nmq->p", (V - phi_S) ** 2, w123)
    return RiskTerms(m_S=m_S, DD_S=DD_S, m_N=m_N, B_N=B_N, L=model.L, eps=model.eps)


def _prepare(model: SLRModel, overlaps, lam) -> tuple[np.ndarray, float, tuple[int, ...]]:
    if not isinstance(model, SLRModel):
        raise ValueError(f"model must be an SLRModel, got {type(model).__name__}")
    ov = check_overlaps(overlaps)
    return ov.reshape(-1, 5), lam_value(lam), ov.shape[:-1]


def risk_terms(model: SLRModel, overlaps, lam: float, n_nodes: int | None = None,
               rule: str = "auto") -> RiskTerms:
    """The expectations m_S, E D^2, m_N, B_N at overlaps (5,) or (P, 5) (OVERLAPS order), each of shape () or (P,)."""
    ov, lam, shape = _prepare(model, overlaps, lam)
    t = _terms(model, ov, lam, *rule_nodes(model, lam, n_nodes, rule))
    return RiskTerms(*(x.reshape(shape) for x in (t.m_S, t.DD_S, t.m_N, t.B_N)), L=t.L, eps=t.eps)


def risk_quadrature(model: SLRModel, overlaps, lam: float, n_nodes: int | None = None,
                    rule: str = "auto") -> np.ndarray:
    """Population risk R = E (Y - T_{k,v}(X))^2 at overlaps (5,) or (P, 5), shape () or (P,), by quadrature."""
    return risk_terms(model, overlaps, lam, n_nodes, rule).risk()


def convergence(model: SLRModel, overlaps, lam: float, nodes: tuple[int, ...] = (20, 40, 80, 160, 320, 640)
                ) -> dict[str, np.ndarray]:
    """Refinement study: the risk with each Gauss-Hermite node count, and with the panel rule as reference.

    Returns {'nodes': (k,), 'risk': (k, P), 'panels': (P,), 'rel_change': (k-1, P) = |R_{n_i} - R_{n_{i-1}}| / R,
    'rel_to_panels': (k, P) = |R_{n_i} - R_panels| / R_panels}."""
    ov, lam, _ = _prepare(model, overlaps, lam)
    risk = np.array([_terms(model, ov, lam, *rule_nodes(model, lam, int(n))).risk() for n in nodes])
    ref = _terms(model, ov, lam, *rule_nodes(model, lam, rule="panels")).risk()
    return {"nodes": np.asarray(nodes), "risk": risk, "panels": ref,
            "rel_change": np.abs(np.diff(risk, axis=0)) / np.abs(risk[1:]),
            "rel_to_panels": np.abs(risk - ref) / np.abs(ref)}


def risk_gradient_fd(model: SLRModel, overlaps, lam: float, h: float = 1e-5, n_nodes: int | None = None,
                     rule: str = "auto") -> np.ndarray:
    """Central differences (R(o + h e_j) - R(o - h e_j)) / 2h of the quadrature risk in each overlap, shape (..., 5).

    The overlaps are treated as independent coordinates (as the closed form's partial derivatives are). Error
    O(h^2 R''') + O(quadrature error / h). kappa and theta enter only the mean, so they may sit at +-1; the other
    three need the perturbed Gram matrix of (k, v, v*) to stay PSD (ValueError otherwise)."""
    ov, lam, shape = _prepare(model, overlaps, lam)
    h = float(h)
    if not (np.isfinite(h) and 0 < h <= 1e-2):
        raise ValueError(f"h must be in (0, 1e-2], got {h}")
    z1, w1 = rule_nodes(model, lam, n_nodes, rule)
    out = np.empty_like(ov)
    for j in range(5):
        step = np.zeros(5)
        step[j] = h
        up, down = _terms(model, ov + step, lam, z1, w1).risk(), _terms(model, ov - step, lam, z1, w1).risk()
        out[:, j] = (up - down) / (2 * h)
    return out.reshape(shape + (5,))
