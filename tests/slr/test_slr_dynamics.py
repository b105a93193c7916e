"""Paper C (slr) theory: the overlap map against projected gradient descent on actual vectors (finite-difference
gradients, not the chain rule), M's invariance, the reduced flow's critical points, the oracle's Riemannian Hessian
against second differences of the risk along curves, the certified lam-scan, and the stationary-point search."""
from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import sympy as sp

from attnverify.theory.slr import THEORY as T
from attnverify.theory.slr.symbols import PARAMS, kappa, nu

GAM = math.sqrt(0.5)
P400 = (0.9, GAM, 400, 10, 0.0)


def _ov(k, v):
    return (k[0], v[1], v[0], k[1], k @ v)


def _fd_grad(k, v, p, h=1e-6):
    """Euclidean gradient of R(k, v) = risk(overlaps(k, v)) by central differences in every coordinate."""
    x = np.concatenate([k, v])
    n = len(k)
    g = np.zeros_like(x)
    for i in range(len(x)):
        e = np.zeros_like(x)
        e[i] = h
        g[i] = (T.risk_np(*_ov((x + e)[:n], (x + e)[n:]), *p) - T.risk_np(*_ov((x - e)[:n], (x - e)[n:]), *p)) / (2 * h)
    return g[:n], g[n:]


def _pgd_step(k, v, h, p):
    gk, gv = _fd_grad(k, v, p)
    gk, gv = gk - (k @ gk) * k, gv - (v @ gv) * v
    k2, v2 = k - h * gk, v - h * gv
    return k2 / np.linalg.norm(k2), v2 / np.linalg.norm(v2)


def _random_pair(rng, n=5):
    k, v = rng.standard_normal(n), rng.standard_normal(n)
    return k / np.linalg.norm(k), v / np.linalg.norm(v)


# ------------------------------------------------------------------------------------------ the overlap map
def test_overlap_map_matches_vector_pgd_with_finite_difference_gradients():
    rng = np.random.default_rng(7)
    p = (0.8, GAM, 40, 6, 0.1)
    for _ in range(3):
        k, v = _random_pair(rng)
        h = 0.05
        k2, v2 = _pgd_step(k, v, h, p)
        mapped = T.overlap_map_np(*_ov(k, v), h, *p)
        np.testing.assert_allclose(mapped, _ov(k2, v2), atol=1e-8)
        wrong = T.overlap_map_np(*_ov(k, v), 1.01 * h, *p)       # the comparison rejects a 1% wrong step
        assert not np.allclose(wrong, _ov(k2, v2), atol=1e-8)


def test_map_identities_are_symbolic_zeros():
    om = T.overlap_map_abstract()
    assert om["norm_residuals"] == (0, 0)
    assert all(x == 0 for x in T.invariance_of_M().values())
    assert T.reduced_partials()["affine_residual"] == 0


def test_M_is_invariant_for_vector_pgd_and_matches_the_reduced_map():
    rng = np.random.default_rng(2)
    p = (0.1, GAM, 400, 10, 0.0)
    k = np.array([0.3, 0.0, 0.9, 0.1, 0.0])
    v = np.array([0.0, -0.2, 0.0, 0.0, 0.7]) + np.array([0, 0, 0, 0, 0.0])
    k, v = k / np.linalg.norm(k), v / np.linalg.norm(v)
    assert abs(k @ v) < 1e-15 and abs(k[1]) < 1e-15 and abs(v[0]) < 1e-15
    kk, nn = np.array(k[0]), np.array(v[1])
    for _ in range(5):
        k, v = _pgd_step(k, v, 0.05, p)
        kk, nn = T.reduced_map_np(kk, nn, 0.05, *p)
    o = _ov(k, v)
    assert max(abs(o[2]), abs(o[3]), abs(o[4])) < 1e-9
    assert o[0] == pytest.approx(float(kk), abs=1e-8) and o[1] == pytest.approx(float(nn), abs=1e-8)
    del rng


def test_reduced_critical_points_and_their_jacobians():
    crit = T.reduced_critical_points()
    assert {(int(c["kappa"]), int(c["nu"])) for c in crit} == {(0, 0), (1, 1), (1, -1), (-1, 1), (-1, -1)}
    kdot, ndot = T.reduced_flow()
    vals = dict(zip(PARAMS, (0.9, GAM, 400, 10, 0.0)))
    F = sp.lambdify((kappa, nu), sp.Matrix([kdot, ndot]).subs(vals), "mpmath")
    with mpmath.workdps(30):
        for c in crit:
            x = (mpmath.mpf(int(c["kappa"])), mpmath.mpf(int(c["nu"])))
            assert max(abs(y) for y in F(*x)) < 1e-25
            J = c["jacobian"].subs(vals)
            for j, var in enumerate((kappa, nu)):
                h = mpmath.mpf(10) ** -12
                xp, xm = list(x), list(x)
                xp[j] += h
                xm[j] -= h
                fd = (F(*xp) - F(*xm)) / (2 * h)
                for i in range(2):
                    assert abs(fd[i] - sp.N(J[i, j], 30)) < 1e-8 * max(1, abs(fd[i]))
        assert max(abs(y) for y in F(mpmath.mpf("0.3"), mpmath.mpf("0.2"))) > 1e-3   # not a critical point
    # the oracle is attracting on M: both Jacobian eigenvalues are negative
    J11 = [c for c in crit if (c["kappa"], c["nu"]) == (1, 1)][0]["jacobian"].subs(vals)
    assert all(sp.N(J11[i, i]) < 0 for i in range(2)) and J11[0, 1] == 0 and J11[1, 0] == 0


def test_oracle_minimises_r_on_M():
    pr = T.oracle_on_M_proof()
    assert pr["slope_negative"] is True and pr["nu_star_is_erf"] and pr["affine_residual"] == 0
    assert pr["flip_residual"] == 0
    kk, nn = np.meshgrid(np.linspace(-1, 1, 41), np.linspace(-1, 1, 41))
    for p in [(0.1, GAM, 400, 10, 0.0), (2.0, GAM, 40, 3, 0.1)]:
        r = T.reduced_risk_np(kk, nn, *p)
        r11 = T.reduced_risk_np(1.0, 1.0, *p)
        assert r.min() >= r11 - 1e-12
        assert T.reduced_risk_np(-1.0, -1.0, *p) == pytest.approx(r11, abs=1e-14)


# ------------------------------------------------------------------------------------------ the oracle's Hessian
def _curve_hessian(p, dps=30):
    """The Riemannian Hessian at the oracle in the tangent coordinates (a, p, b, q, r) from second derivatives of
    the risk along normalised curves k = (k* + t(a v* + p e3))/|.|, v = (v* + t(b k* + q e3 + r e4))/|.|."""
    def Q(u):
        a, pp, b, q, r = (mpmath.mpf(x) for x in u)

        def R(t):
            k = [1, t * a, t * pp, 0]
            v = [t * b, 1, t * q, t * r]
            nk = mpmath.sqrt(sum(x * x for x in k))
            nv = mpmath.sqrt(sum(x * x for x in v))
            k, v = [x / nk for x in k], [x / nv for x in v]
            return T.risk_mp(k[0], v[1], v[0], k[1], sum(x * y for x, y in zip(k, v)), *p)
        return mpmath.diff(R, 0, 2)
    with mpmath.workdps(dps):
        E = np.eye(5)
        diag = [Q(E[i]) for i in range(5)]
        H = np.zeros((5, 5))
        for i in range(5):
            H[i, i] = float(diag[i])
            for j in range(i + 1, 5):
                H[i, j] = H[j, i] = float((Q(E[i] + E[j]) - diag[i] - diag[j]) / 2)
    return H


@pytest.mark.parametrize("lam_", [0.5, 1.0])
def test_oracle_hessian_against_second_differences_along_curves(lam_):
    p = (lam_, GAM, 400, 10, 0.0)
    H_fd = _curve_hessian(p)
    Hs = T.oracle_hessian_matrix().subs(dict(zip(PARAMS, p)))
    H = np.array([[float(sp.N(Hs[i, j], 20)) for j in range(5)] for i in range(5)])
    np.testing.assert_allclose(H, H_fd, rtol=1e-9, atol=1e-12)
    wrong = H.copy()
    wrong[0, 2] *= 1.001
    wrong[2, 0] *= 1.001                                          # a 0.1% error in the coupling is rejected
    assert not np.allclose(wrong, H_fd, rtol=1e-9, atol=1e-12)
    oh = T.oracle_hessian(*p)
    ev = np.linalg.eigvalsh(H_fd[np.ix_([0, 2], [0, 2])])
    assert oh.eigenvalues[2] == pytest.approx(ev[0], rel=1e-8) and oh.eigenvalues[3] == pytest.approx(ev[1], rel=1e-8)
    assert oh.strict_local_min == (lam_ == 0.5)


def test_certified_scan_brackets_the_loss_of_local_minimality():
    scan = T.oracle_local_min_scan(GAM, 400, 10, 0.0)
    assert len(scan.brackets) == 1 and scan.unique == (True,)
    lo, hi = scan.brackets[0]
    assert hi - lo < 1e-10 and 0.85 < lo < 0.95
    assert scan.minimum == ((1e-3, lo),) and scan.saddle == ((hi, 100.0),)
    # independent side: second differences of the risk along curves on both sides of the bracket
    for lam_, is_min in ((lo - 0.02, True), (hi + 0.02, False)):
        H = _curve_hessian((lam_, GAM, 400, 10, 0.0), dps=25)
        block = H[np.ix_([0, 2], [0, 2])]
        assert (np.linalg.eigvalsh(block)[0] > 0) == is_min
    # eps enters R only as eps^2 added: the scan does not move
    assert T.oracle_local_min_scan(GAM, 400, 10, 0.1).brackets == scan.brackets
    assert T.orthogonal_eigenvalues_positive() == {"orth_k": True, "orth_v": True}


def test_scan_with_one_token_has_no_sign_change():
    scan = T.oracle_local_min_scan(GAM, 40, 1, 0.0)
    assert scan.brackets == () and scan.minimum == ((1e-3, 100.0),)


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError, match="lam_lo"):
        T.oracle_local_min_scan(GAM, 400, 10, 0.0, lam_lo=2.0, lam_hi=1.0)
    with pytest.raises(ValueError, match="d >= 3"):
        T.stationary_points(0.9, GAM, 2, 10)
    with pytest.raises(ValueError, match="lam"):
        T.stationary_points(float("nan"), GAM, 400, 10)


# ------------------------------------------------------------------------------------------ stationary points
def _riemannian_grad_fd(k, v, p):
    gk, gv = _fd_grad(np.asarray(k, float), np.asarray(v, float), p, h=1e-7)
    k, v = np.asarray(k, float), np.asarray(v, float)
    return np.concatenate([gk - (k @ gk) * k, gv - (v @ gv) * v]), np.concatenate([gk, gv])


def test_stationary_points_at_lam_09():
    res = T.stationary_points(*P400, n_starts=128, seed=1)
    assert res.n_rejected == 0
    for pt in res.points:
        rg, g = _riemannian_grad_fd(pt.k, pt.v, P400)
        assert np.linalg.norm(rg) < 1e-6 * max(1.0, np.linalg.norm(g)), pt
        for im in pt.images:
            assert T.risk_np(*im, *P400) == pytest.approx(pt.risk, rel=1e-12)
    oracle = [pt for pt in res.points if pt.overlaps[:2] == (1.0, 1.0) and pt.on_M][0]
    assert oracle.kind == "saddle" and oracle.index == 1
    minima = [pt for pt in res.points if pt.kind == "minimum"]
    assert minima and all(not pt.on_M for pt in minima)
    best = min(minima, key=lambda pt: pt.risk)
    assert best.risk < oracle.risk
    # independent: the risk increases along random tangent directions around the off-M minimum
    rng = np.random.default_rng(0)
    k0, v0 = np.asarray(best.k), np.asarray(best.v)
    for _ in range(5):
        dk, dv = rng.standard_normal(3), rng.standard_normal(3)
        dk, dv = dk - (dk @ k0) * k0, dv - (dv @ v0) * v0
        for t in (1e-2, -1e-2):
            k, v = k0 + t * dk, v0 + t * dv
            k, v = k / np.linalg.norm(k), v / np.linalg.norm(v)
            assert T.risk_np(*_ov(k, v), *P400) > best.risk
