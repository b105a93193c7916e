"""Scalable W2 (attnverify.numerics.meanfield.wasserstein): the exact two-atom threshold, k atoms, merged targets and the certified
bracket, each against an exact solver of another kind (SciPy's assignment problem on the expanded N x N problem,
or POT's network simplex for fractional masses)."""
import numpy as np
import ot
import pytest
from scipy.optimize import linear_sum_assignment

from attnverify.numerics.meanfield.wasserstein import (Bracket, merge_atoms, w2, w2_atoms, w2_bracket, w2_to_target, w2_two_atoms)


def assignment_w2(X, Y):
    C = ((X[:, None, :] - Y[None, :, :]) ** 2).sum(axis=2)
    r, c = linear_sum_assignment(C)
    return float(np.sqrt(C[r, c].mean()))


def two_atom_target(n_plus, n, u):
    return np.vstack([np.tile(u, (n_plus, 1)), np.tile(-u, (n - n_plus, 1))])


@pytest.mark.parametrize("n,n_plus,d", [(1, 1, 2), (2, 1, 2), (7, 3, 2), (50, 25, 2), (51, 0, 3), (64, 64, 3),
                                        (101, 37, 4)])
def test_two_atoms_equals_assignment(n, n_plus, d):
    rng = np.random.default_rng(n + d)
    X = rng.standard_normal((n, d))
    u = rng.standard_normal(d)
    u /= np.linalg.norm(u)
    want = assignment_w2(X, two_atom_target(n_plus, n, u))
    assert w2_two_atoms(X, u, -u, n_plus / n) == pytest.approx(want, rel=1e-12, abs=1e-14)
    atoms, weights = np.array([u, -u]), np.array([n_plus, n - n_plus]) / n
    assert w2_atoms(X, atoms, weights) == pytest.approx(want, rel=1e-12, abs=1e-14)


def test_ties_and_equal_masses():
    # points on the bisector <x, u> = 0 (equal cost to both atoms), duplicates, and mass 1/2 exactly
    u = np.array([1.0, 0.0])
    X = np.array([[0.0, 1.0], [0.0, 1.0], [0.0, -2.0], [0.0, 0.5], [1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    want = assignment_w2(X, two_atom_target(4, 8, u))
    assert w2_two_atoms(X, u, -u, 0.5) == pytest.approx(want, rel=1e-13)
    for order in (np.arange(8)[::-1], np.random.default_rng(0).permutation(8)):   # tie order cannot matter
        assert w2_two_atoms(X[order], u, -u, 0.5) == pytest.approx(want, rel=1e-13)


def test_fractional_masses_and_weights_match_network_simplex():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((40, 3))
    p = rng.uniform(size=40)
    p /= p.sum()
    a, b = rng.standard_normal(3), rng.standard_normal(3)
    for m in (0.0, 0.123456, 0.5, 0.999, 1.0):
        C = np.stack([((X - a) ** 2).sum(1), ((X - b) ** 2).sum(1)], axis=1)
        want = np.sqrt(ot.emd2(p, np.array([m, 1 - m]), C))
        assert w2_two_atoms(X, a, b, m, weights=p) == pytest.approx(want, rel=1e-10, abs=1e-12)


def test_w2_on_an_atom_target_takes_the_exact_shortcut():
    rng = np.random.default_rng(9)
    u = np.array([0.0, 1.0])
    X, Y = rng.standard_normal((90, 2)), two_atom_target(33, 90, u)
    assert w2(X, Y) == pytest.approx(assignment_w2(X, Y), rel=1e-12)
    Y3 = np.repeat(rng.standard_normal((3, 2)), [30, 30, 30], axis=0)
    assert w2(X, Y3) == pytest.approx(assignment_w2(X, Y3), rel=1e-10)


def test_k_atoms_equals_assignment():
    rng = np.random.default_rng(4)
    atoms = rng.standard_normal((5, 3))
    counts = np.array([10, 3, 7, 0, 20])
    Y = np.repeat(atoms, counts, axis=0)
    X = rng.standard_normal((Y.shape[0], 3))
    assert w2_atoms(X, atoms, counts / counts.sum()) == pytest.approx(assignment_w2(X, Y), rel=1e-10)


def test_merged_target_brackets_the_exact_value():
    rng = np.random.default_rng(5)
    n, u = 300, np.array([0.6, 0.8])
    Y = two_atom_target(120, n, u)
    X = rng.standard_normal((n, 2))
    exact = Y.copy()
    assert w2_to_target(X, Y).exact and w2_to_target(X, Y).value == pytest.approx(assignment_w2(X, exact), rel=1e-12)
    Yr = Y + 1e-12 * rng.standard_normal(Y.shape)         # rounding noise: no two rows equal any more
    br = w2_to_target(X, Yr)
    truth = w2(X, Yr)
    assert br.lower <= truth * (1 + 1e-14) and truth <= br.upper * (1 + 1e-14)
    assert br.upper - br.lower <= 1e-11
    merged = merge_atoms(Yr, 1e-9)
    assert merged is not None and len(merged[0]) == 2 and merged[2] <= 1e-11


def test_target_of_many_points_falls_back_to_the_bracket():
    rng = np.random.default_rng(6)
    X, Y = rng.standard_normal((200, 3)), rng.standard_normal((200, 3))
    assert merge_atoms(Y, 1e-9) is None
    br = w2_to_target(X, Y)
    assert br.exact and br.value == pytest.approx(w2(X, Y), rel=1e-10)


@pytest.mark.parametrize("shape", ["gaussian", "circle"])
def test_bracket_contains_the_exact_value(shape):
    rng = np.random.default_rng(7)
    n = 1000
    if shape == "gaussian":
        X, Y = rng.standard_normal((n, 3)), rng.standard_normal((n, 3)) + [0.3, 0.0, 0.0]
    else:
        phi, psi = rng.uniform(0, 2 * np.pi, n), rng.vonmises(0.0, 2.0, n)
        X, Y = np.c_[np.cos(phi), np.sin(phi)], np.c_[np.cos(psi), np.sin(psi)]
    truth = w2(X, Y)
    br = w2_bracket(X, Y, exact_limit=0, block=300)
    assert not br.exact
    assert br.lower <= truth * (1 + 1e-12) and truth <= br.upper * (1 + 1e-12)
    assert br.upper <= 1.5 * truth and br.lower >= 0.3 * truth   # informative, not just valid
    assert w2_bracket(X[:300], Y[:300]).value == pytest.approx(w2(X[:300], Y[:300]), rel=1e-10)


def test_large_two_atom_problem_is_fast_enough_to_run():
    rng = np.random.default_rng(8)
    X = rng.standard_normal((200_000, 2))
    w = w2_two_atoms(X, np.array([1.0, 0.0]), np.array([-1.0, 0.0]), 0.5)
    # symmetric standard Gaussian cloud, half to each atom along x: W2^2 ~ E|x|^2 - 2E|x_1| + 1 = 3 - 2 sqrt(2/pi)
    assert w == pytest.approx(np.sqrt(3 - 2 * np.sqrt(2 / np.pi)), rel=1e-2)


@pytest.mark.parametrize("call", [
    lambda: w2_two_atoms(np.ones((3, 2)), [1, 0], [0, 1], 1.5),
    lambda: w2_two_atoms(np.ones((3, 2)), [1, 0, 0], [0, 1], 0.5),
    lambda: w2_two_atoms(np.ones((3, 2)), [1, 0], [0, 1], 0.5, weights=[0.5, 0.5, 0.5]),
    lambda: w2_two_atoms([[np.nan, 0.0]], [1, 0], [0, 1], 0.5),
    lambda: w2_atoms(np.ones((3, 2)), np.ones((2, 3)), [0.5, 0.5]),
    lambda: w2_bracket(np.ones((3, 2)), np.ones((4, 2))),
    lambda: merge_atoms(np.ones((3, 2)), -1.0),
    lambda: w2_two_atoms(np.array([[1e300, 0.0], [0.0, 0.0]]), [0, 0], [1e300, 0], 0.5),   # |x - a|^2 overflows
    lambda: w2(np.array([[1e300, 0.0], [0.0, 0.0]]), np.array([[1e300, 0.0], [0.0, 0.0]])),
    lambda: w2_bracket(np.array([[1e300, 0.0], [0.0, 0.0]]), np.zeros((2, 2)), exact_limit=0),
])
def test_bad_input_is_one_clear_error(call):
    with pytest.raises((ValueError, TypeError)):
        call()


def test_bracket_type():
    assert Bracket(1.0, 1.0, "x").exact and not Bracket(1.0, 2.0, "x").exact


def test_two_atoms_no_rounding_floor():
    """Points sitting on the atoms, with masses k/N that binary floats do not represent: W2 is the exact
    distance of the points to their atoms (here 1e-12), not a rounding floor ~ sqrt(eps) |a - b| ~ 2e-8."""
    n, k = 997, 513
    a, b = np.array([0.0, 1.0]), np.array([0.0, -1.0])
    X = np.vstack([np.tile(a + [1e-12, 0.0], (k, 1)), np.tile(b, (n - k, 1))])
    Y = np.vstack([np.tile(a, (k, 1)), np.tile(b, (n - k, 1))])
    assert w2(X, Y) == pytest.approx(1e-12 * np.sqrt(k / n), rel=1e-6)
    assert w2_two_atoms(X, a, b, k / n) == pytest.approx(1e-12 * np.sqrt(k / n), rel=1e-6)
