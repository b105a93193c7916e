"""The fused numba kernel (attnverify.numerics.kernel) against a plain NumPy reference written here, and the module layout.

The reference is the textbook stabilised softmax on the full N x N score matrix: S = XB X^T, W = exp(beta (S - max_j S)),
m = W VX / sum_j W. The kernel sums in another order (SIMD reductions) and uses its own exp, so agreement is to
rounding: 1e-12 relative to max |m| (the issue's requirement), at N up to 300.
"""
import subprocess
import sys
import threading
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest

from attnverify.numerics.kernel import csr_moments, dense_moments, exp_nonpositive, window_moments
from attnverify.numerics.meanfield.particles import attention_field, simulate
from attnverify.numerics.meanfield.truncated import attention_field_truncated


def reference_moments(XB, X, VX, beta):
    S = XB @ X.T
    W = np.exp(beta * (S - S.max(axis=1, keepdims=True)))
    return (W @ VX) / W.sum(axis=1, keepdims=True)


def reference_field(X, B, V, beta):
    M = reference_moments(X @ B, X, X @ V.T, beta)
    return M - np.einsum("ij,ij->i", M, X)[:, None] * X


def sphere(rng, n, d):
    X = rng.standard_normal((n, d))
    return X / np.linalg.norm(X, axis=1)[:, None]


def rel(a, b):
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


@pytest.mark.parametrize("d", [2, 3, 5])
@pytest.mark.parametrize("beta", [1e-3, 1.0, 100.0, 3e3])
def test_dense_matches_numpy_reference(d, beta):
    rng = np.random.default_rng(d)
    X = sphere(rng, 300, d)
    B, V = rng.standard_normal((d, d)), rng.standard_normal((d, d))
    assert rel(dense_moments(X @ B, X, X @ V.T, beta), reference_moments(X @ B, X, X @ V.T, beta)) <= 1e-12
    assert rel(attention_field(X, B, V, beta), reference_field(X, B, V, beta)) <= 1e-12


def test_single_point_and_rectangular_blocks():
    rng = np.random.default_rng(1)
    X = sphere(rng, 40, 3)
    VX = rng.standard_normal((40, 3))
    XB = rng.standard_normal((7, 3))                   # 7 query rows against 40 points
    assert rel(dense_moments(XB, X, VX, 5.0), reference_moments(XB, X, VX, 5.0)) <= 1e-12
    one = dense_moments(XB[:1], X[:1], VX[:1], 5.0)    # a single point: its weight is 1
    np.testing.assert_array_equal(one, VX[:1])


@pytest.mark.parametrize("beta", [1e6, 1e12])
def test_huge_beta_is_finite_and_selects_the_maximiser(beta):
    rng = np.random.default_rng(2)
    X = sphere(rng, 200, 3)
    B, V = np.diag([1.0, 2.0, 3.0]), rng.standard_normal((3, 3))
    M = dense_moments(X @ B, X, X @ V.T, beta)
    assert np.all(np.isfinite(M))
    # random points: the top two scores of a row differ by >> 1/beta, so all weight is on the argmax
    top = np.argmax((X @ B) @ X.T, axis=1)
    np.testing.assert_allclose(M, (X @ V.T)[top], rtol=0, atol=1e-12)
    assert rel(M, reference_moments(X @ B, X, X @ V.T, beta)) <= 1e-12


def test_csr_rows_are_softmax_over_their_columns():
    rng = np.random.default_rng(3)
    N, d = 120, 3
    X, VX = sphere(rng, N, d), rng.standard_normal((N, d))
    XB = rng.standard_normal((N, d)) * 4
    lists = [np.sort(rng.choice(N, size=rng.integers(1, N + 1), replace=False)) for _ in range(N)]
    indptr = np.concatenate(([0], np.cumsum([len(c) for c in lists])))
    got = csr_moments(XB, X, VX, 7.0, indptr, np.concatenate(lists))
    want = np.array([reference_moments(XB[i:i + 1], X[c], VX[c], 7.0)[0] for i, c in enumerate(lists)])
    assert rel(got, want) <= 1e-12


def test_window_rows_are_softmax_over_their_window():
    rng = np.random.default_rng(8)
    N, d = 50, 2
    X, VX, XB = sphere(rng, N, d), rng.standard_normal((N, d)), rng.standard_normal((N, d)) * 3
    starts, counts = rng.integers(0, N, N), rng.integers(1, N + 1, N)
    X2, V2 = np.vstack((X, X)), np.vstack((VX, VX))          # windows may run past the end: seen twice over
    got = window_moments(XB, X2, V2, 9.0, starts, counts)
    want = np.array([reference_moments(XB[i:i + 1], X2[a:a + c], V2[a:a + c], 9.0)[0]
                     for i, (a, c) in enumerate(zip(starts, counts))])
    assert rel(got, want) <= 1e-12
    with pytest.raises(ValueError, match="window_moments"):
        window_moments(XB[:1], X, VX, 1.0, np.array([N - 1]), np.array([2]))
    with pytest.raises(ValueError, match="window_moments"):
        window_moments(XB[:1], X, VX, 1.0, np.array([0]), np.array([0]))


@pytest.mark.parametrize("bad", [dict(indptr=[0, 2, 2]), dict(indptr=[0, 1]), dict(cols=[0, 99])])
def test_csr_rejects_malformed_lists(bad):
    X = sphere(np.random.default_rng(0), 5, 2)
    args = dict(indptr=[0, 1, 2], cols=[0, 1]) | bad
    with pytest.raises(ValueError, match="csr_moments"):
        csr_moments(X[:2], X, X, 1.0, np.array(args["indptr"]), np.array(args["cols"]))


def test_exp_against_numpy():
    # x = n ln2 + r: the Cody-Waite reduction may be reassociated (SIMD flags), which costs at most
    # |n| ulp(ln 2) <= 1022 * 0.694 * 2^-53 = 7.9e-14 relative; the polynomial adds ~2e-16.
    x = -np.concatenate((np.linspace(0, 707.999, 400_001), np.geomspace(1e-300, 1, 1000)))
    got, want = exp_nonpositive(x), np.exp(x)
    assert np.max(np.abs(got - want) / want) <= 1e-13
    small = x >= -40                                    # the weights that matter: error <= 58 ulp(ln 2) ~ 5e-15
    assert np.max(np.abs(got - want)[small] / want[small]) <= 1e-14
    assert exp_nonpositive(np.array([0.0]))[0] == 1.0   # the row maximum gets weight exactly 1
    assert np.all(exp_nonpositive(-np.array([708.0, 708.5, 745.2, 1e300])) == 0.0)   # below -708: 0 (true value < 3e-308)
    with pytest.raises(ValueError):
        exp_nonpositive(np.array([0.5]))


def test_truncated_kernel_matches_reference():
    rng = np.random.default_rng(4)
    X = sphere(rng, 500, 3)
    B, V = np.diag([1.0, 2.0, 3.0]), rng.standard_normal((3, 3))
    # truncation error <= 2 tol max|Vx| (tol 1e-12) plus rounding
    assert np.max(np.abs(attention_field_truncated(X, B, V, 1e3) - reference_field(X, B, V, 1e3))) <= 1e-10


def test_concurrent_threads_are_serialised():
    rng = np.random.default_rng(5)
    X = sphere(rng, 200, 3)
    B, V = np.diag([1.0, 2.0, 3.0]), np.eye(3)
    want = reference_field(X, B, V, 10.0)
    out = [None] * 4

    def work(k):
        out[k] = attention_field(X, B, V, 10.0)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(o is not None and rel(o, want) <= 1e-12 for o in out)


def _field_in_child(seed):
    rng = np.random.default_rng(seed)
    X = sphere(rng, 100, 3)
    return attention_field(X, np.diag([1.0, 2.0, 3.0]), np.eye(3), 10.0)


def test_forked_workers_after_a_parallel_call():
    _field_in_child(0)                                    # the parent has started the kernel's threads
    with ProcessPoolExecutor(max_workers=2) as pool:
        got = list(pool.map(_field_in_child, [0, 1]))
    assert rel(got[0], _field_in_child(0)) == 0.0 and rel(got[1], _field_in_child(1)) == 0.0


def test_simulate_uses_the_kernel_and_stays_accurate():
    rng = np.random.default_rng(6)
    X0 = sphere(rng, 30, 3)
    Q, K, V = np.eye(3), np.diag([1.0, 2.0, 3.0]), np.diag([1.5, 1.0, 2.0])
    a = simulate(X0, Q, K, V, 20.0, [0.0, 1.0], rtol=1e-10, atol=1e-12)
    b = simulate(X0, Q, K, V, 20.0, [0.0, 1.0], rtol=1e-10, atol=1e-12, kernel="truncated")
    assert np.max(np.abs(a - b)) <= 1e-8


def test_no_import_cycle_between_particles_and_truncated():
    code = ("import sys, attnverify.numerics.meanfield.truncated; "
            "assert 'attnverify.numerics.meanfield.particles' not in sys.modules, 'truncated imports particles'")
    subprocess.run([sys.executable, "-c", code], check=True)
