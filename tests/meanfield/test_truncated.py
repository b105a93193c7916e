"""Truncated-interaction kernel: agreement with the dense kernel, the proven error bound, the candidate set, bad input.

The reference is ``attnverify.numerics.meanfield.particles.attention_field`` (dense O(N^2), another module) and, for the candidate
set, brute-force dense logits computed here.
"""
import numpy as np
import pytest

from attnverify.numerics.meanfield.particles import attention_field
from attnverify.numerics.meanfield.truncated import attention_field_truncated, interaction_pairs


def sphere(rng, n, d):
    X = rng.standard_normal((n, d))
    return X / np.linalg.norm(X, axis=1)[:, None]


def random_model(rng, d):
    """A random well-conditioned B and a random V (no symmetry needed by the kernel)."""
    B = np.eye(d) + 0.3 * rng.standard_normal((d, d))
    return B, rng.standard_normal((d, d))


def test_matches_dense_kernel_at_paper_size_circle():
    # beta = 1e4, N = 1e4, d = 2 (the size). Proven truncation error <= 2 tol max|Vx| = 6e-12 (tol 1e-12,
    # |V| <= 3); rounding of logits ~ beta |b| eps ~ 1e4 * 3 * 2e-16 = 6e-12 relative in the weights.
    # 1e-10 is the target.
    rng = np.random.default_rng(1)
    X = sphere(rng, 10_000, 2)
    B, V = np.diag([1.0, 3.0]), np.diag([2.0, 1.0])
    F = attention_field(X, B, V, 1e4)
    G = attention_field_truncated(X, B, V, 1e4)
    assert np.max(np.abs(F - G)) <= 1e-10
    indptr, _ = interaction_pairs(X, B, 1e4)
    assert indptr[-1] < 0.05 * X.shape[0] ** 2          # it really truncates (cap fraction ~2%, module docstring)


@pytest.mark.parametrize("beta", [3e2, 3e3])
def test_matches_dense_kernel_sphere_d3(beta):
    # d = 3 through the k-d tree path; same error budget as above, at a smaller N.
    rng = np.random.default_rng(2)
    X = sphere(rng, 2000, 3)
    B, V = random_model(rng, 3)
    assert np.max(np.abs(attention_field(X, B, V, beta) - attention_field_truncated(X, B, V, beta))) <= 1e-10


@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize("tol", [0.3, 1e-2, 1e-4, 1e-7])
def test_error_bound_holds(d, tol):
    # Proven: max_i |X_i - X'_i| <= 2 tol max_j |V x_j|. Rounding slack 1e-13 (beta = 50: logit rounding ~1e-14).
    rng = np.random.default_rng(3 + d)
    X = sphere(rng, 1500, d)
    B, V = random_model(rng, d)
    beta = 50.0
    err = np.max(np.linalg.norm(attention_field(X, B, V, beta) - attention_field_truncated(X, B, V, beta, tol=tol),
                                axis=1))
    bound = 2 * tol * np.max(np.linalg.norm(X @ V.T, axis=1))
    assert err <= bound + 1e-13
    if tol >= 1e-2:                                     # a large tol must drop pairs and change the field
        indptr, _ = interaction_pairs(X, B, beta, tol=tol)
        assert indptr[-1] < X.shape[0] ** 2
        assert err > 0


@pytest.mark.parametrize("d,beta", [(2, 1e3), (2, 1e6), (3, 1e2), (3, 1e5)])
def test_candidates_contain_every_needed_pair(d, beta):
    # Brute force: every (i, j) with l_ij >= m_i - log(N/tol) and every row argmax must be a candidate, including
    # for points whose norms deviate from 1 within the accepted 1e-8.
    rng = np.random.default_rng(4)
    N, tol = 600, 1e-9
    X = sphere(rng, N, d)
    X *= 1 + rng.uniform(-9e-9, 9e-9, size=(N, 1))
    B, _ = random_model(rng, d)
    indptr, cols = interaction_pairs(X, B, beta, tol=tol)
    logits = beta * (X @ B) @ X.T
    m = logits.max(axis=1, keepdims=True)
    need = logits >= m - np.log(N / tol)
    have = np.zeros((N, N), dtype=bool)
    have[np.repeat(np.arange(N), np.diff(indptr)), cols] = True
    assert not np.any(need & ~have)
    assert np.all(have[np.arange(N), np.argmax(logits, axis=1)])
    assert np.all(np.diff(indptr) <= N)


def test_pair_count_is_the_cap_count():
    # Evenly spaced points, B = I: the maximiser of row i is i itself (m_i = beta) and the cap is
    # cos(angle) >= 1 - c/beta, c = log(N/tol), so row i has exactly 2 floor(alpha N / 2 pi) + 1 points in it,
    # alpha = arccos(1 - c/beta); the safety margin may add at most one point on each side.
    N, beta, tol = 4000, 1e4, 1e-12
    t = 2 * np.pi * np.arange(N) / N
    X = np.column_stack((np.cos(t), np.sin(t)))
    indptr, _ = interaction_pairs(X, np.eye(2), beta, tol=tol)
    alpha = np.arccos(1 - np.log(N / tol) / beta)
    exact = 2 * np.floor(alpha * N / (2 * np.pi)) + 1
    counts = np.diff(indptr)
    assert np.all((counts >= exact) & (counts <= exact + 2))


def test_falls_back_to_all_pairs_at_small_beta():
    rng = np.random.default_rng(5)
    X = sphere(rng, 300, 2)
    B, V = random_model(rng, 2)
    indptr, _ = interaction_pairs(X, B, 1e-3)
    assert indptr[-1] == 300 * 300
    assert np.max(np.abs(attention_field(X, B, V, 1e-3) - attention_field_truncated(X, B, V, 1e-3))) <= 1e-14


@pytest.mark.parametrize("kwargs,exc,match", [
    ({"tol": 0.0}, ValueError, "tol"), ({"tol": 1.0}, ValueError, "tol"), ({"tol": float("nan")}, ValueError, "tol"),
    ({"tol": True}, TypeError, "tol"), ({"tol": "1e-3"}, TypeError, "tol"),
    ({"beta": np.inf}, ValueError, "finite"), ({"beta": 0.0}, ValueError, "beta"), ({"beta": -1.0}, ValueError, "beta"),
    ({"B": np.zeros((2, 2))}, ValueError, "singular"), ({"X": np.ones((3, 2))}, ValueError, "unit sphere"),
    ({"X": "abc"}, TypeError, "X"), ({"X": np.full((3, 2), np.nan)}, ValueError, "non-finite"),
])
def test_bad_input(kwargs, exc, match):
    args = {"X": np.array([[1.0, 0.0], [0.0, 1.0]]), "B": np.eye(2), "V": np.eye(2), "beta": 10.0}
    tol = kwargs.pop("tol", 1e-12)
    args.update(kwargs)
    with pytest.raises(exc, match=match):
        attention_field_truncated(args["X"], args["B"], args["V"], args["beta"], tol=tol)


@pytest.mark.parametrize("d", [2, 3])
def test_margin_covers_points_just_off_the_unit_sphere(d):
    # Evenly spaced points on a great circle, B = I, so row 0 has m_0 = beta. Point k is stretched by 1 + 9e-9
    # (accepted by the sphere check) and beta is chosen so that the cap of the *normalised* points ends just
    # before it (cos theta_k (1 + 5e-9) = 1 - c / beta) while its true logit beta (1 + 9e-9) cos theta_k is above
    # m_0 - c: the candidate search must still include it (the safety margin of the module docstring).
    N, tol, k = 1000, 1e-12, 7
    t = 2 * np.pi * np.arange(N) / N
    X = np.zeros((N, d))
    X[:, 0], X[:, 1] = np.cos(t), np.sin(t)
    X[k] *= 1 + 9e-9
    c = np.log(N / tol)
    beta = c / (1 - np.cos(t[k]) * (1 + 5e-9))
    assert beta * X[k, 0] >= beta - c                   # point k is needed in row 0
    indptr, cols = interaction_pairs(X, np.eye(d), beta, tol=tol)
    assert k in cols[indptr[0]:indptr[1]]


@pytest.mark.parametrize("d", [2, 3])
def test_row_blocks_give_the_same_field(d, monkeypatch):
    # Memory is bounded by processing rows in blocks of <= _CHUNK candidate pairs; tiny blocks (many of them, some a
    # single row) must give the field of one block up to summation-order rounding (1e-15 relative on O(1) values).
    import attnverify.numerics.meanfield.truncated as tr

    rng = np.random.default_rng(6)
    X = sphere(rng, 800, d)
    B, V = random_model(rng, d)
    one = attention_field_truncated(X, B, V, 200.0)
    monkeypatch.setattr(tr, "_CHUNK", 50)
    many = attention_field_truncated(X, B, V, 200.0)
    assert np.max(np.abs(one - many)) <= 1e-14
    assert np.max(np.abs(attention_field(X, B, V, 200.0) - many)) <= 1e-10


@pytest.mark.parametrize("d", [2, 3])
def test_clustered_points_and_duplicates(d):
    # The late-time state of the dynamics: tight clusters (width 1e-3) and exact duplicates; same budget as above.
    rng = np.random.default_rng(7)
    centres = sphere(rng, 3, d)
    X = centres[rng.integers(0, 3, 1500)] + 1e-3 * rng.standard_normal((1500, d))
    X[:100] = X[100]                                    # 101 identical particles
    X /= np.linalg.norm(X, axis=1)[:, None]
    B, V = random_model(rng, d)
    for beta in (1e2, 1e4, 1e6):
        assert np.max(np.abs(attention_field(X, B, V, beta) - attention_field_truncated(X, B, V, beta))) <= 1e-10
