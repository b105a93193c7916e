"""Paper B's certified results: the spectral clusters of A = V B^T and the Laplace bound, against mpmath's values
at high precision or exact rational arithmetic."""
from __future__ import annotations


import mpmath as mp
import numpy as np
import pytest
import sympy as sp

import attnverify.theory.meanfield as mf


# --------------------------------------------------------------------------------------- Laplace
from attnverify.numerics.meanfield.laplace import (laplace_field_certified, laplace_field_info,  # noqa: E402
                              standard_density)


def test_standard_density_on_the_circle_is_the_audit_density():
    from attnverify.checks.meanfield.limit import density
    phi = np.linspace(0, 2 * np.pi, 17)
    assert np.allclose(standard_density(2)(np.c_[np.cos(phi), np.sin(phi)]), density(phi), atol=1e-15)
    y = np.random.default_rng(0).standard_normal((1000, 5))
    assert np.min(standard_density(5)(y / np.linalg.norm(y, axis=1, keepdims=True))) >= 0.3


@pytest.mark.parametrize("beta", [10.0, 1e5, 1e8])
def test_certified_laplace_bound_encloses_mpmath_on_the_circle(beta):
    B, V = np.array([[1.0, 0.4], [-0.3, 2.0]]), np.array([[1.5, 0.2], [0.7, -0.5]])
    x = np.array([np.cos(2.0), np.sin(2.0)])
    r = laplace_field_certified(x, B, V, beta, standard_density(2), dps=20)
    assert r.rigorous and r.error < 1e-15
    # independent: mpmath tanh-sinh quadrature at 40 digits, split at the maximiser
    with mp.workdps(40):
        n = mp.sqrt(mp.mpf(x[0]) ** 2 + mp.mpf(x[1]) ** 2)      # both sides put x exactly on the circle
        x = [mp.mpf(x[0]) / n, mp.mpf(x[1]) / n]
        b = [sum(mp.mpf(B[i, j]) * x[i] for i in range(2)) for j in range(2)]
        nb = mp.sqrt(b[0] ** 2 + b[1] ** 2)
        phi0 = mp.atan2(b[1], b[0])
        w = 1 / mp.sqrt(beta * nb)
        inner = [phi0 + k * w for k in (-64, -8, -1, 0, 1, 8, 64) if abs(k * w) < mp.pi]
        pts = [phi0 - mp.pi, *inner, phi0 + mp.pi]                  # one period, split at the peak

        def integ(g):
            return mp.quad(lambda p: mp.exp(beta * nb * (mp.cos(p - phi0) - 1))
                           * (1 + 0.5 * mp.cos(p - 0.3) + 0.2 * mp.sin(2 * p)) * g(p), pts)
        Z = integ(lambda p: 1)
        m = [integ(mp.cos) / Z, integ(mp.sin) / Z]
        vm = [sum(mp.mpf(V[i, j]) * m[j] for j in range(2)) for i in range(2)]
        xv = sum(x[i] * vm[i] for i in range(2))
        ref = [float(vm[i] - xv * x[i]) for i in range(2)]
    assert np.max(np.abs(r.value - ref)) <= r.error + 1e-30


def test_certified_laplace_bound_encloses_mpmath_on_the_sphere():
    rng = np.random.default_rng(3)
    B, V = rng.standard_normal((3, 3)) + 2 * np.eye(3), rng.standard_normal((3, 3))
    dens = standard_density(3)
    a, C = np.array(dens.a), np.array(dens.C)

    def f(th, ph):                                      # the same density as a function of the polar angles
        y = [mp.sin(th) * mp.cos(ph), mp.sin(th) * mp.sin(ph), mp.cos(th)]
        return dens.c0 + sum(a[i] * y[i] for i in range(3)) + sum(C[i, j] * y[i] * y[j]
                                                                   for i in range(3) for j in range(3))
    x = rng.standard_normal(3)
    x /= np.linalg.norm(x)
    r = laplace_field_certified(x, B, V, 300.0, dens, dps=20)
    ref = laplace_field_info(x, B, V, 300.0, f, dps=25)    # mpmath Gauss-Legendre x trapezoid (S^2 route)
    assert np.max(np.abs(r.value - ref.value)) <= r.error + ref.error + 1e-30


# --------------------------------------------------------------------------------------- spectral clusters


def _rotation(seed: int, d: int = 3) -> np.ndarray:
    q, r = np.linalg.qr(np.random.default_rng(seed).standard_normal((d, d)))
    return q * np.sign(np.diag(r))


def _mp_eigh(A: np.ndarray, dps: int = 50):
    """Eigenvalues (descending) and eigenvectors of the float matrix A (exact binary entries), mpmath at 50 digits."""
    with mp.workdps(dps):
        w, U = mp.eigsy(mp.matrix(A.tolist()))
        order = sorted(range(A.shape[0]), key=lambda i: -w[i])
        return [w[i] for i in order], [[U[r, i] for r in range(A.shape[0])] for i in order]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rotated_double_eigenvalue_gives_two_dim_E_with_certificate(seed):
    R = _rotation(seed)
    A = R @ np.diag([2.0, 2.0, 1.0]) @ R.T
    A = (A + A.T) / 2
    s = mf.spectrum(np.eye(3), A)
    assert s.dim_E == 2 and s.multiplicity == (2, 1) and not s.exact
    w, vecs = _mp_eigh(A)
    with mp.workdps(50):
        P_true = sum((mp.matrix(v) * mp.matrix(v).T for v in vecs[:2]), mp.zeros(3, 3))
        diff = P_true - mp.matrix(s.P_E.tolist())
        dist = max(abs(e) for e in mp.eigsy((diff + diff.T) / 2, eigvals_only=True))   # 2-norm (symmetric)
    assert dist <= s.P_E_error < 1e-13                          # the certified distance holds
    (lo1, hi1), (lo2, hi2) = s.enclosures
    assert lo1 <= w[0] <= hi1 and lo1 <= w[1] <= hi1 and lo2 <= w[2] <= hi2
    glo, ghi = s.gap_enclosure
    assert glo <= w[1] - w[2] and w[0] - w[2] <= ghi and ghi - glo < 1e-12
    texts = [c["text"] for c in s.certificates]
    assert any(t.startswith("certified: mu_1 (top cluster) in [") and "dim E = 2" in t for t in texts)
    assert all(c["library"].startswith("python-flint") and c["width"] >= 0 for c in s.certificates)
    # the projection map onto the 2-dim E
    x = np.array([0.3, -0.4, 0.866])
    x /= np.linalg.norm(x)
    px = np.array([float(e) for e in (P_true * mp.matrix(x.tolist()))])
    assert np.allclose(mf.projection_map(np.eye(3), A)(x), px / np.linalg.norm(px), atol=1e-14)


def test_exact_input_keeps_exact_arithmetic():
    B = sp.Matrix([[1, 0], [1, 2]])
    V = sp.Matrix([[2, 1], [1, 3]]) * B.T.inv()                  # A = [[2, 1], [1, 3]], mu_1 = (5 + sqrt 5)/2
    s = mf.spectrum(B, V)
    assert s.exact and s.mu[0] == pytest.approx(float((5 + sp.sqrt(5)) / 2), rel=1e-15)
    lo, hi = s.enclosures[0]
    assert lo <= float((5 + sp.sqrt(5)) / 2) <= hi and hi - lo < 1e-15
    glo, ghi = s.gap_enclosure
    assert glo <= float(sp.sqrt(5)) <= ghi


def test_unresolvable_gap_is_refused_with_the_numbers():
    R = _rotation(5)
    A = R @ np.diag([1.0 + 1e-15, 1.0, 1.0 - 1e-15]) @ R.T
    with pytest.raises(ValueError, match=r"all 3 eigenvalues lie in one cluster \[0\.99\d*, 1\.0\d*\] \(eigenvalues "
                                         r"closer than \d\.\de-1\d"):
        mf.spectrum(np.eye(3), (A + A.T) / 2)
    # a small but resolvable gap (1e-9, far above the 1e-13 tolerance) is kept: dim E = 1
    A = R @ np.diag([1.0 + 1e-9, 1.0, 0.5]) @ R.T
    s = mf.spectrum(np.eye(3), (A + A.T) / 2)
    assert s.dim_E == 1 and s.gap_enclosure[0] > 0 and s.gap == pytest.approx(1e-9, rel=1e-4)
