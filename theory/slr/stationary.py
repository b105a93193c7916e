r"""Paper C (``slr``): the stationary points of R on S^{d-1} x S^{d-1} (d >= 3), on M and off M.

Where they can be.  R is affine in nu with dR/dnu = -2 gamma^2 erf(c kappa), c = lam mu / sqrt(1 + 2 lam^2 gamma^2)
(derived: attnverify.theory.slr.population), so dR/dnu != 0 whenever kappa != 0.  The v-part of the Riemannian gradient,
g_v = R_nu v* + R_theta k* + R_rho k - C_v v (C_v = <v, grad_v R>), vanishes only if v lies in span(v*, k*, k) (when
C_v != 0) or v* lies in span(k*, k) (when C_v = 0); either way k*, v*, k, v span at most 3 dimensions.  Hence:
  (i)  every stationary point with kappa != 0 lies, up to a rotation fixing k* and v*, in R^3 = span(k*, v*, e3),
       and is a zero of the Riemannian gradient of R restricted to S^2 x S^2 (the gradient lies in that span);
  (ii) a stationary point with kappa = 0 where the Gram matrix of (k, v, k*, v*) is invertible needs all five
       partials to vanish; R is a quadratic form in (theta, eta, rho) plus c_nu(kappa) nu, and at kappa = 0 the
       coefficients of theta eta and rho^2 are non-zero (checked at the given parameters), which forces theta =
       eta = rho = 0 and then nu = 0: the only such point is the origin of M; kappa = 0 points with a singular
       Gram matrix are in case (i).
Search for (i) (documented, not exhaustive by proof): Riemannian Newton on S^2 x S^2 in float64 from ``n_starts``
starts (uniform pairs of unit vectors, seeded, plus the four corners of M and the points (+-k*, +-v*) perturbed),
vectorised over the starts, with the closed-form gradient and overlap Hessian; converged candidates are
de-duplicated on their overlaps (the reflection e3 -> -e3 leaves the overlaps unchanged) and refined by Newton in
mpmath at ``dps`` digits.  A candidate is accepted when the refined Riemannian gradient is below 10^-(dps-8) times
the Euclidean gradient's norm and the last Newton step below 10^-(dps/2): points on the plateaus where the gradient
is only exponentially small (e.g. kappa in (0.5, 1) on M at large d) do not pass, since Newton keeps moving there.
Each point is classified by the full Riemannian Hessian in dimension d: the 4 eigenvalues inside S^2 x S^2 and the
2 x 2 block [[-C_k, R_rho], [R_rho, -C_v]] for the directions orthogonal to the 3-space (multiplicity d - 3).

The search is the method ``stationary_points`` of :class:`StationaryForms`, a part of Paper C's theory object
(attnverify.theory.slr); its helpers evaluate the risk, its partials and its Hessian through that object (``forms``),
so a replaced closed form is what the search finds the stationary points of.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import mpmath
import numpy as np

from attnverify.theory.closed_forms import ClosedForms, recorded

_E1, _E2 = np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0])


@dataclass(frozen=True)
class StationaryPoint:
    """A stationary point of R: overlaps (kappa, nu, theta, eta, rho), a representative (k, v) in R^3 (R^4 for the
    origin of M), its distance to M (sqrt(theta^2 + eta^2 + rho^2)), the risk, the refined Riemannian gradient norm,
    the Hessian eigenvalues inside S^2 x S^2 and off the 3-space (each of the latter with multiplicity d - 3, the
    zero eigenvalue of the symmetry orbit removed), the dimension of its orbit under the rotations fixing k*, v*
    (0: isolated; d - 3: a (d-3)-sphere of stationary points with the same risk), its Morse index in dimension d
    (orbit directions excluded), its kind ('minimum', 'saddle', 'maximum', 'degenerate': an eigenvalue that is 0
    within the working precision max_dps) and its images under SIGN_SYMMETRIES (the same point up to symmetry)."""

    overlaps: tuple[float, float, float, float, float]
    k: tuple[float, ...]
    v: tuple[float, ...]
    on_M: bool
    distance_to_M: float
    risk: float
    grad_norm: float
    hessian_in_3d: tuple[float, ...]
    orthogonal_block: tuple[float, ...]
    orbit_dim: int
    index: int
    kind: str
    images: tuple[tuple[float, ...], ...] = field(default=(), compare=False)


@dataclass(frozen=True)
class StationarySearch:
    """All stationary points found, with the search's figures and its method text."""

    points: tuple[StationaryPoint, ...]
    n_starts: int
    n_converged: int
    n_rejected: int
    interior_kappa0_coefficients: tuple[float, float]
    method: str

    @property
    def off_M(self) -> tuple[StationaryPoint, ...]:
        return tuple(p for p in self.points if not p.on_M)


# ------------------------------------------------------------------------------------------ float64 Newton
def _overlaps(k: np.ndarray, v: np.ndarray) -> list[np.ndarray]:
    return [k[..., 0], v[..., 1], v[..., 0], k[..., 1], np.sum(k * v, axis=-1)]


def _grad_hess_euclid(forms, k, v, params):
    """Euclidean gradient (n, 6) and Hessian (n, 6, 6) of R in (k, v) in R^3 by the chain rule through the overlaps:
    d kappa/dk = e1, d eta/dk = e2, d rho/dk = v; d nu/dv = e2, d theta/dv = e1, d rho/dv = k; d2 rho/dk dv = I."""
    o = _overlaps(k, v)
    g = forms.risk_gradient_np(*o, *params)                     # (5, n)
    H = forms.risk_hessian_np(*o, *params)                      # (5, 5, n)
    n = k.shape[0]
    z = np.zeros((n, 3))
    e1, e2 = np.broadcast_to(_E1, (n, 3)), np.broadcast_to(_E2, (n, 3))
    # derivative of each overlap w.r.t. (k, v) in R^6, order (kappa, nu, theta, eta, rho)
    D = np.stack([np.concatenate([e1, z], 1), np.concatenate([z, e2], 1), np.concatenate([z, e1], 1),
                  np.concatenate([e2, z], 1), np.concatenate([v, k], 1)], axis=1)        # (n, 5, 6)
    grad = np.einsum("in,nij->nj", g, D)
    hess = np.einsum("nai,abn,nbj->nij", D, H, D)
    hess[:, :3, 3:] += g[4][:, None, None] * np.eye(3)
    hess[:, 3:, :3] += g[4][:, None, None] * np.eye(3)
    return grad, hess, g


def _riemannian(k, v, grad, hess):
    """Riemannian gradient (n, 6) and Hessian (n, 6, 6) on S^2 x S^2 (embedded: P (H - <x, grad> I) P)."""
    n = k.shape[0]
    P = np.zeros((n, 6, 6))
    P[:, :3, :3] = np.eye(3) - k[:, :, None] * k[:, None, :]
    P[:, 3:, 3:] = np.eye(3) - v[:, :, None] * v[:, None, :]
    ck = np.sum(k * grad[:, :3], axis=1)
    cv = np.sum(v * grad[:, 3:], axis=1)
    S = hess.copy()
    S[:, :3, :3] -= ck[:, None, None] * np.eye(3)
    S[:, 3:, 3:] -= cv[:, None, None] * np.eye(3)
    rg = np.einsum("nij,nj->ni", P, grad)
    rh = np.einsum("nij,njk,nkl->nil", P, S, P)
    return rg, rh, ck, cv


def _newton_float(forms, k, v, params, iters: int = 80, max_step: float = 0.5):
    """Vectorised Riemannian Newton (steps capped at max_step in norm, retraction by normalising)."""
    for _ in range(iters):
        grad, hess, _ = _grad_hess_euclid(forms, k, v, params)
        rg, rh, _, _ = _riemannian(k, v, grad, hess)
        n = k.shape[0]
        Nrm = np.zeros((n, 6, 6))
        Nrm[:, :3, :3] = k[:, :, None] * k[:, None, :]
        Nrm[:, 3:, 3:] = v[:, :, None] * v[:, None, :]
        A = rh + Nrm
        ok = np.all(np.isfinite(A), axis=(1, 2)) & np.all(np.isfinite(rg), axis=1)
        step = np.zeros_like(rg)
        if ok.any():
            try:
                step[ok] = -np.linalg.solve(A[ok], rg[ok][..., None])[..., 0]
            except np.linalg.LinAlgError:
                for i in np.flatnonzero(ok):
                    step[i] = -np.linalg.lstsq(A[i], rg[i], rcond=None)[0]
        norm = np.linalg.norm(step, axis=1)
        scale = np.minimum(1.0, max_step / np.maximum(norm, 1e-300))[:, None]
        step *= scale
        k = k + step[:, :3]
        v = v + step[:, 3:]
        k /= np.linalg.norm(k, axis=1, keepdims=True)
        v /= np.linalg.norm(v, axis=1, keepdims=True)
    grad, hess, _ = _grad_hess_euclid(forms, k, v, params)
    rg, _, _, _ = _riemannian(k, v, grad, hess)
    return k, v, np.linalg.norm(rg, axis=1), np.linalg.norm(grad, axis=1)


def _starts(n_starts: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    k = rng.standard_normal((n_starts, 3))
    v = rng.standard_normal((n_starts, 3))
    special = []
    for sk in (1, -1):
        for sn in (1, -1):
            special.append((sk * _E1, sn * _E2))
            special.append((sk * _E1 + 0.05 * rng.standard_normal(3), sn * _E2 + 0.05 * rng.standard_normal(3)))
    k = np.concatenate([k, np.array([s[0] for s in special])])
    v = np.concatenate([v, np.array([s[1] for s in special])])
    return k / np.linalg.norm(k, axis=1, keepdims=True), v / np.linalg.norm(v, axis=1, keepdims=True)


# ------------------------------------------------------------------------------------------ mpmath refinement
def _mp_grad_hess(forms, k, v, params):
    o = [k[0], v[1], v[0], k[1], k[0] * v[0] + k[1] * v[1] + k[2] * v[2]]
    g = forms.gradient_mp(*o, *params)
    H = forms.hessian_mp(*o, *params)
    e1, e2, z = [1, 0, 0], [0, 1, 0], [0, 0, 0]
    D = [e1 + z, z + e2, z + e1, e2 + z, list(v) + list(k)]
    grad = mpmath.matrix([sum(g[a] * D[a][j] for a in range(5)) for j in range(6)])
    hess = mpmath.matrix(6, 6)
    for i in range(6):
        for j in range(6):
            hess[i, j] = sum(D[a][i] * H[a][b] * D[b][j] for a in range(5) for b in range(5))
    for i in range(3):
        hess[i, 3 + i] += g[4]
        hess[3 + i, i] += g[4]
    return grad, hess, g, o


def _mp_riemannian(k, v, grad, hess):
    P = mpmath.zeros(6, 6)
    for i in range(3):
        for j in range(3):
            P[i, j] = (1 if i == j else 0) - k[i] * k[j]
            P[3 + i, 3 + j] = (1 if i == j else 0) - v[i] * v[j]
    ck = sum(k[i] * grad[i] for i in range(3))
    cv = sum(v[i] * grad[3 + i] for i in range(3))
    S = hess.copy()
    for i in range(3):
        S[i, i] -= ck
        S[3 + i, 3 + i] -= cv
    return P * grad, P * S * P, ck, cv


def _refine_mp(forms, k0, v0, params, dps: int, iters: int = 60):
    """Riemannian Newton in mpmath; returns (k, v, |rg|, |grad|, last step, pieces at the final point)."""
    with mpmath.workdps(dps):
        k = [mpmath.mpf(x) for x in k0]
        v = [mpmath.mpf(x) for x in v0]
        last = mpmath.inf
        for _ in range(iters):
            grad, hess, g, o = _mp_grad_hess(forms, k, v, params)
            rg, rh, ck, cv = _mp_riemannian(k, v, grad, hess)
            A = rh.copy()
            for i in range(3):
                for j in range(3):
                    A[i, j] += k[i] * k[j]
                    A[3 + i, 3 + j] += v[i] * v[j]
            try:
                step = -mpmath.lu_solve(A, rg)
            except ZeroDivisionError:                     # singular (degenerate point): Tikhonov-regularised step
                for i in range(6):
                    A[i, i] += mpmath.mpf(10) ** (-dps // 2)
                step = -mpmath.lu_solve(A, rg)
            last = mpmath.norm(step)
            k = [k[i] + step[i] for i in range(3)]
            v = [v[i] + step[3 + i] for i in range(3)]
            nk, nv = mpmath.sqrt(sum(x * x for x in k)), mpmath.sqrt(sum(x * x for x in v))
            k, v = [x / nk for x in k], [x / nv for x in v]
            if last < mpmath.mpf(10) ** (-dps + 5):
                break
        grad, hess, g, o = _mp_grad_hess(forms, k, v, params)
        rg, rh, ck, cv = _mp_riemannian(k, v, grad, hess)
        return k, v, mpmath.norm(rg), mpmath.norm(grad), last, (rh, ck, cv, g, o)


def _classify(rh, ck, cv, g, k, v, d: int, dps: int):
    """Eigenvalues of the Riemannian Hessian: the 4 tangent ones inside S^2 x S^2, and the 2 x 2 block
    B = [[-C_k, R_rho], [R_rho, -C_v]] on the pairs (p w, q w), w orthogonal to the 3-space (multiplicity d - 3).
    When (k3, v3) != 0 the rotations fixing k*, v* move the point along an orbit of dimension d - 3 with tangent
    (k3 w, v3 w): (k3, v3) is an eigenvector of B with eigenvalue 0 (R is constant on the orbit); it is removed and the
    other eigenvalue trace(B) - u^T B u is kept.  Returns (tangent, orthogonal, orbit_dim, index, kind, resolved)."""
    vals, vecs = mpmath.eigsy(rh)
    tangent = []
    for i in range(6):
        u = [vecs[j, i] for j in range(6)]
        normal = abs(sum(u[j] * k[j] for j in range(3))) + abs(sum(u[3 + j] * v[j] for j in range(3)))
        if normal < mpmath.mpf("0.5"):
            tangent.append(vals[i])
    B = mpmath.matrix([[-ck, g[4]], [g[4], -cv]])
    orbit = mpmath.sqrt(k[2] ** 2 + v[2] ** 2)
    if d > 3 and orbit > mpmath.mpf(10) ** (-dps // 2):
        u = [k[2] / orbit, v[2] / orbit]
        q = sum(u[i] * B[i, j] * u[j] for i in range(2) for j in range(2))
        orth, orbit_dim = [B[0, 0] + B[1, 1] - q], d - 3
    else:
        orth, orbit_dim = (list(mpmath.eigsy(B)[0]) if d > 3 else []), 0
    scale = max([mpmath.mpf(1)] + [abs(x) for x in tangent + orth])
    tiny = mpmath.mpf(10) ** (-dps + 8) * scale
    resolved = all(abs(x) > tiny for x in tangent + orth)
    mult_orth = d - 3
    neg = sum(1 for x in tangent if x < 0) + mult_orth * sum(1 for x in orth if x < 0)
    n_all = len(tangent) + mult_orth * len(orth)
    kind = ("degenerate" if not resolved else "minimum" if neg == 0 else "maximum" if neg == n_all else "saddle")
    return (tuple(sorted(float(x) for x in tangent)), tuple(sorted(float(x) for x in orth)), orbit_dim, neg, kind,
            resolved)


def _validate(lam, gamma, d, L, eps):
    for name, x in (("lam", lam), ("gamma", gamma), ("eps", eps)):
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
            raise ValueError(f"{name} must be a finite number, got {x!r}")
    if lam <= 0 or gamma <= 0 or eps < 0:
        raise ValueError(f"need lam > 0, gamma > 0, eps >= 0, got lam={lam}, gamma={gamma}, eps={eps}")
    if int(d) != d or d < 3 or int(L) != L or L < 1:
        raise ValueError(f"need integers d >= 3 and L >= 1, got d={d}, L={L}")


# the sign symmetries of R: (k, v) -> (-k, -v) and (k, v) -> (H k, -H v), H the reflection flipping v*
SIGN_SYMMETRIES: tuple[tuple[int, ...], ...] = ((1, 1, 1, 1, 1), (-1, -1, -1, -1, 1), (1, 1, -1, -1, -1),
                                                (-1, -1, 1, 1, -1))


def symmetry_images(overlaps) -> tuple[tuple[float, ...], ...]:
    """The distinct images of an overlap tuple (kappa, nu, theta, eta, rho) under SIGN_SYMMETRIES: R takes the same
    value and the Hessian the same spectrum at each (both maps are isometries of S^{d-1} x S^{d-1} that preserve R:
    the first flips kappa, nu, theta, eta; the second theta, eta, rho, and R is even in (theta, eta, rho))."""
    out: list[tuple[float, ...]] = []
    for sg in SIGN_SYMMETRIES:
        im = tuple(float(s * x) + 0.0 for s, x in zip(sg, overlaps))
        if not any(max(abs(a - b) for a, b in zip(im, o)) < 1e-9 for o in out):
            out.append(im)
    return tuple(out)


def _canonical(overlaps) -> tuple[float, ...]:
    return max(symmetry_images(overlaps), key=lambda o: tuple(round(x, 8) for x in o))


def _refine_adaptive(forms, k0, v0, params, d: int, dps: int, max_dps: int):
    """Newton in mpmath at dps, doubling the precision (up to max_dps) while a Hessian eigenvalue is below the
    working precision; returns (accepted, k, v, |rg|, overlaps, classification)."""
    work, k, v = dps, k0, v0
    while True:
        k, v, rgm, gm, last, (rh, ck, cv, g, om) = _refine_mp(forms, k, v, params, work)
        cls = _classify(rh, ck, cv, g, k, v, d, work)
        converged = rgm <= mpmath.mpf(10) ** (-work + 8) * max(1, gm) and last <= mpmath.mpf(10) ** (-work // 2)
        if (converged and cls[5]) or work >= max_dps:
            return converged and cls[5], k, v, rgm, om, cls
        work = min(2 * work, max_dps)


def _point(forms, k, v, rgm, om, cls, params, dps, images=None) -> StationaryPoint:
    tang, orth, orbit_dim, idx, kind, _ = cls
    ov = tuple(float(x) + 0.0 for x in om)
    dist = math.sqrt(ov[2] ** 2 + ov[3] ** 2 + ov[4] ** 2)
    with mpmath.workdps(dps):
        risk = float(forms.risk_mp(*om, *params))
    return StationaryPoint(ov, tuple(float(x) for x in k), tuple(float(x) for x in v), dist < 1e-12, dist, risk,
                           float(rgm), tang, orth, orbit_dim, idx, kind, images or symmetry_images(ov))


def _kappa0_coefficients(forms, params) -> tuple[float, float]:
    """The coefficients of theta*eta and rho^2 in R at kappa = 0 (from the overlap Hessian at the origin)."""
    H = forms.risk_hessian_np(0.0, 0.0, 0.0, 0.0, 0.0, *params)
    return float(H[2, 3]), float(H[4, 4]) / 2


def _origin(forms, params, dps: int) -> StationaryPoint:
    """The origin of M (k = e3, v = e4 in R^4): all five partials vanish there.  The gradient is 0, so the Riemannian
    Hessian is the overlap Hessian H pulled back by the first-order map u -> o'(u) of the tangent coordinates
    u = (dk.k*, dk.v*, dk.e4, dv.k*, dv.v*, dv.e3) (kappa' = u1, nu' = u5, theta' = u4, eta' = u2, rho' = u3 + u6):
    the eigenvalues of M^T H M; every other tangent direction leaves the overlaps fixed to second order (eigenvalue
    0)."""
    with mpmath.workdps(dps):
        z = [mpmath.mpf(0)] * 5
        g = forms.gradient_mp(*z, *params)
        H = forms.hessian_mp(*z, *params)
        risk = float(forms.risk_mp(*z, *params))
        M = mpmath.matrix([[1, 0, 0, 0, 0, 0], [0, 0, 0, 0, 1, 0], [0, 0, 0, 1, 0, 0], [0, 1, 0, 0, 0, 0],
                           [0, 0, 1, 0, 0, 1]])
        Hm = mpmath.matrix([[H[i][j] for j in range(5)] for i in range(5)])
        vals = sorted(float(x) for x in mpmath.eigsy(M.T * Hm * M)[0])
    gnorm = float(max(abs(x) for x in g))
    scale = max(1.0, max(abs(x) for x in vals))
    neg = sum(1 for x in vals if x < -1e-20 * scale)
    kind = "saddle" if neg > 0 else "degenerate"
    return StationaryPoint((0.0,) * 5, (0.0, 0.0, 1.0, 0.0), (0.0, 0.0, 0.0, 1.0), True, 0.0, risk, gnorm,
                           tuple(vals), (), 0, neg, kind, ((0.0,) * 5,))


class StationaryForms(ClosedForms):
    """The stationary points of R on S^{d-1} x S^{d-1} (module docstring)."""

    @recorded
    def stationary_points(self, lam: float, gamma: float, d: int, L: int, eps: float = 0.0, *, n_starts: int = 256,
                          seed: int = 0, dps: int = 30, max_dps: int = 160) -> StationarySearch:
        """Stationary points of R on S^{d-1} x S^{d-1}, one per class of SIGN_SYMMETRIES (``images`` lists the
        class).

        On M they are known exactly (the reduced flow's critical points, attnverify.theory.slr.dynamics): the origin
        and the four corners (+-1, +-1); they are classified at their exact coordinates.  Off M: the search of the
        module docstring; float64 candidates within 1e-6 of M are dropped (M's stationary points are already listed;
        on M at large d the gradient is exponentially small over whole intervals of kappa, where float64 Newton
        stalls).  ``n_rejected`` counts off-M candidates that the mpmath refinement did not confirm (no convergence,
        or an eigenvalue still below the working precision at max_dps)."""
        _validate(lam, gamma, d, L, eps)
        params = (float(lam), float(gamma), float(d), float(L), float(eps))
        k0, v0 = _starts(n_starts, seed)
        with np.errstate(all="ignore"):
            k, v, rgn, gn = _newton_float(self, k0, v0, params)
        conv = np.isfinite(rgn) & (rgn <= 1e-9 * np.maximum(1.0, gn))
        cands: dict[tuple, list] = {}
        n_on_M = 0
        for i in np.flatnonzero(conv):
            o = [float(x[0]) for x in _overlaps(k[i:i + 1], v[i:i + 1])]
            if math.sqrt(o[2] ** 2 + o[3] ** 2 + o[4] ** 2) < 1e-6:
                n_on_M += 1
                continue
            key = tuple(round(x, 6) for x in _canonical(o))
            if key not in cands:
                cands[key] = [k[i], v[i]]
        pts: list[StationaryPoint] = [_origin(self, params, dps)]
        for sk, sn in ((1, 1), (1, -1)):              # the corners, up to (k, v) -> (-k, -v)
            with mpmath.workdps(dps):
                kk, vv = [mpmath.mpf(sk), 0, 0], [0, mpmath.mpf(sn), 0]
            work = dps
            while True:
                with mpmath.workdps(work):
                    grad, hess, g, om = _mp_grad_hess(self, kk, vv, params)
                    rg, rh, ck, cv = _mp_riemannian(kk, vv, grad, hess)
                    cls = _classify(rh, ck, cv, g, kk, vv, d, work)
                    rgm = mpmath.norm(rg)
                if cls[5] or work >= max_dps:
                    break
                work = min(2 * work, max_dps)
            pts.append(_point(self, kk, vv, rgm, om, cls, params, dps))
        n_rejected = 0
        for kk, vv in cands.values():
            ok, km, vm, rgm, om, cls = _refine_adaptive(self, kk, vv, params, d, dps, max_dps)
            ov = tuple(float(x) for x in om)
            if not ok or math.sqrt(ov[2] ** 2 + ov[3] ** 2 + ov[4] ** 2) < 1e-12:
                n_rejected += not ok
                continue
            if any(max(abs(a - b) for a, b in zip(im, ov)) < 1e-9 for p in pts for im in p.images):
                continue
            pts.append(_point(self, km, vm, rgm, om, cls, params, dps))
        coeffs = _kappa0_coefficients(self, params)
        method = (f"on M: the origin and the corners (+-1, +-1) (exact); off M: Riemannian Newton on S^2 x S^2 "
                  f"(float64, {len(k0)} starts, seed {seed}; {int(conv.sum())} converged, {n_on_M} of them on M), one "
                  f"candidate per symmetry class refined by Newton in mpmath from {dps} digits (up to {max_dps} while "
                  f"an eigenvalue is unresolved); kappa = 0 with invertible Gram matrix: only the origin (coefficients "
                  f"of theta*eta and rho^2 at kappa = 0: {coeffs[0]:.4g}, {coeffs[1]:.4g}, both non-zero)")
        if not all(abs(c) > 0 for c in coeffs):
            method += "; WARNING: a kappa = 0 coefficient vanishes, case (ii) is not settled"
        pts.sort(key=lambda p: (not p.on_M, p.risk))
        return StationarySearch(tuple(pts), len(k0), int(conv.sum()), n_rejected, coeffs, method)
