"""Wasserstein-2 distances between discrete measures on R^d, exact where affordable, certified brackets beyond.

    W2(mu, nu)^2 = min over couplings pi of sum_ij pi_ij ||x_i - y_j||^2.

* ``w2(X, Y)``: exact, equal-size clouds with uniform weights 1/N. Birkhoff-von Neumann: an optimal coupling
  is a permutation; solved as an assignment problem (SciPy ``linear_sum_assignment``, O(N^3)).
* ``w2_two_atoms(X, a, b, mass_a)``: exact transport from sum_i w_i delta_{x_i} to mass_a delta_a +
  (1 - mass_a) delta_b in O(N log N). With c_i = ||x_i - a||^2 - ||x_i - b||^2 the cost of a coupling that
  sends mass p_i of x_i to a is sum_i w_i ||x_i - b||^2 + sum_i p_i c_i, a fractional knapsack under
  sum_i p_i = mass_a, 0 <= p_i <= w_i: it is minimised by filling a with the points of smallest c_i (one point
  split at the threshold). For a, b = +-u this is a threshold on <x, u> (c_i = -4 <x_i, u>). Ties in c change
  which points go where, never the cost; equal masses are the case mass_a = 1/2.
* ``w2_atoms(X, atoms, weights)``: exact transport to a target with k atoms: the two-atom threshold for k <= 2,
  POT's network simplex (``ot.emd2``) on the N x k cost matrix otherwise (memory O(N k)).
* ``w2_to_target(X, Y, tol)``: the Theorem-1 use: Y = Pi(x_i(0)) has few distinct points (two, +-u, when the
  dominant eigenspace has dimension 1) up to rounding. Rows of Y within ``tol`` of a representative are merged into
  one atom (atoms = representatives, weights = counts / N); by the triangle inequality the true W2 lies within
  r = (1/N sum_i ||Y_i - rep(Y_i)||^2)^(1/2) of the W2 to the merged target, which is computed exactly: the result
  is a certified bracket [W - r, W + r] (r = 0 when the rows coincide exactly).
* ``w2_bracket(X, Y)``: any two equal-size uniform clouds: exact (``ot.emd2``) up to ``exact_limit`` cost entries;
  beyond, a certified bracket: lower = the largest W2 of 1-D projections (x -> <x, theta> is 1-Lipschitz, so
  W2(theta#mu, theta#nu) <= W2(mu, nu), and in 1-D the sorted matching is optimal), upper = the cost of a
  permutation (a feasible coupling): both clouds sorted along their principal axis, cut into blocks of equal
  size, exact assignment inside each block.
* ``w2_bracket_paired(X, Y)``: as ``w2_bracket``, for rows that correspond (x_i moved from the point that y_i
  is the image of): the pairing i <-> i is one more feasible coupling (upper end), and the exact solver's value is
  widened by its optimality tolerance (W_e is the cost of a feasible plan, so W <= W_e; W^2 >= W_e^2 - 64 eps
  max C), so that the bracket stays honest where W is near the solver's floor sqrt(eps max C) ~ 1e-8; the lower end
  is the larger of that and the 1-D projection bound.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import ot
from scipy.optimize import linear_sum_assignment

from attnverify.numerics.validation import cloud, float_array


@dataclass(frozen=True)
class Bracket:
    """lower <= W2 <= upper (certified); ``exact`` when lower == upper came from an exact solver."""

    lower: float
    upper: float
    method: str

    @property
    def exact(self) -> bool:
        return self.lower == self.upper

    @property
    def value(self) -> float:
        """The midpoint (the exact value when ``exact``)."""
        return 0.5 * (self.lower + self.upper)


def _pair(X, Y) -> tuple[np.ndarray, np.ndarray]:
    A, B = cloud(X, "X"), cloud(Y, "Y")
    if A.shape != B.shape:
        raise ValueError(f"X and Y must have the same shape (equal-size measures), got {A.shape} and {B.shape}")
    return A, B


def _finite_costs(*costs: np.ndarray) -> None:
    for C in costs:
        if not np.all(np.isfinite(C)):
            raise ValueError("X and Y: squared distances overflow float64, the points are too far apart "
                             "(|x - y|^2 > 1.8e308)")


def _sq_cost(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """C_ij = ||X_i - Y_j||^2 by broadcasting per coordinate (no cancellation); ValueError when it overflows."""
    C = np.zeros((X.shape[0], Y.shape[0]))
    with np.errstate(over="ignore"):
        for k in range(X.shape[1]):
            C += np.subtract.outer(X[:, k], Y[:, k]) ** 2
    _finite_costs(C)
    return C


def _weights(w, n: int, name: str) -> np.ndarray:
    if w is None:
        return np.full(n, 1.0 / n)
    W = float_array(w, name)
    if W.shape != (n,) or not np.all(np.isfinite(W)) or np.any(W < 0):
        raise ValueError(f"{name} must be {n} finite non-negative weights")
    if abs(W.sum() - 1.0) > 1e-9:
        raise ValueError(f"{name} must sum to 1, got {W.sum():.12g}")
    return W / W.sum()


def w2(X: np.ndarray, Y: np.ndarray) -> float:
    """Exact W2 between (1/N) sum_i delta_{X_i} and (1/N) sum_i delta_{Y_i}, Euclidean ground cost.

    When the rows of Y take at most 64 distinct values (exactly equal rows, e.g. the two-atom target Pi#mu_0),
    the transport to those atoms is solved exactly by ``w2_atoms`` (O(N log N) for two atoms). Otherwise: cost
    C_ij = ||X_i - Y_j||^2 (computed by broadcasting, no cancellation), optimal permutation by
    scipy.optimize.linear_sum_assignment (Jonker-Volgenant, O(N^3)).
    """
    X, Y = _pair(X, Y)
    merged = merge_atoms(Y, 0.0)
    if merged is not None:
        return w2_atoms(X, merged[0], merged[1])
    return w2_assignment(X, Y)


def w2_assignment(X: np.ndarray, Y: np.ndarray) -> float:
    """Exact W2 of two equal-size uniform clouds by the assignment problem only (O(N^3), N x N memory): the
    general method, kept as the baseline the faster special cases are measured and tested against."""
    X, Y = _pair(X, Y)
    C = _sq_cost(X, Y)
    rows, cols = linear_sum_assignment(C)
    return float(np.sqrt(C[rows, cols].mean()))


def coupling_bound(X: np.ndarray, Y: np.ndarray) -> float:
    """sqrt((1/N) sum_i ||X_i - Y_i||^2): the cost of the pairing i <-> i, an upper bound on W2."""
    X, Y = _pair(X, Y)
    return float(np.sqrt(np.mean(np.sum((X - Y) ** 2, axis=1))))


def w2_two_atoms(X: np.ndarray, a: np.ndarray, b: np.ndarray, mass_a: float, weights=None) -> float:
    """Exact W2 from sum_i w_i delta_{X_i} (w = ``weights``, default 1/N) to mass_a delta_a + (1 - mass_a) delta_b.

    O(N log N): the points with the smallest c_i = ||x_i - a||^2 - ||x_i - b||^2 fill a (module docstring). Each
    point's cost is computed as ||x_i - a||^2 or ||x_i - b||^2 directly (no cancellation).
    """
    X = cloud(X, "X")
    n, d = X.shape
    a, b = (float_array(v, name).ravel() for v, name in ((a, "a"), (b, "b")))
    if a.shape != (d,) or b.shape != (d,) or not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ValueError(f"a and b must be finite points of R^{d}")
    m = float(mass_a)
    if not 0.0 <= m <= 1.0:
        raise ValueError(f"mass_a must lie in [0, 1], got {mass_a}")
    w = _weights(weights, n, "weights")
    with np.errstate(over="ignore", invalid="ignore"):
        ca = np.sum((X - a) ** 2, axis=1)
        cb = np.sum((X - b) ** 2, axis=1)
    _finite_costs(ca, cb)
    order = np.argsort(ca - cb, kind="stable")
    k = m * n
    if weights is None and abs(k - round(k)) <= 1e-9 * n:
        # uniform source and a mass of a that is a whole number of points (the empirical case): the first k sorted
        # points go to a, exactly. The fractional bookkeeping below would leave rounding residues of ~1e-16 mass
        # on the far atom, a floor of sqrt(1e-16 |a - b|^2) ~ 2e-8 on W2.
        k = int(round(k))
        cost = (np.sum(ca[order[:k]]) + np.sum(cb[order[k:]])) / n
        return float(np.sqrt(max(cost, 0.0)))
    before = np.concatenate(([0.0], np.cumsum(w[order])[:-1]))     # mass of a filled before each point
    to_a = np.clip(m - before, 0.0, w[order])                      # full, split or none
    tiny = 8 * np.finfo(float).eps * max(1.0, float(np.sum(w)))      # rounding residues of the cumulative sums
    to_a = np.where(to_a <= tiny, 0.0, np.where(w[order] - to_a <= tiny, w[order], to_a))
    cost = np.sum(to_a * ca[order] + (w[order] - to_a) * cb[order])
    return float(np.sqrt(max(cost, 0.0)))


def w2_atoms(X: np.ndarray, atoms: np.ndarray, weights: np.ndarray, source_weights=None) -> float:
    """Exact W2 from sum_i w_i delta_{X_i} to sum_k weights_k delta_{atoms_k}.

    k <= 2 atoms: ``w2_two_atoms`` (O(N log N)); more: POT's exact network simplex ``ot.emd2`` on the N x k
    squared-distance matrix (memory O(N k)).
    """
    X = cloud(X, "X")
    A = cloud(atoms, "atoms")
    if A.shape[1] != X.shape[1]:
        raise ValueError(f"atoms must have {X.shape[1]} columns, got {A.shape[1]}")
    q = _weights(weights, A.shape[0], "weights")
    if A.shape[0] == 1:
        return w2_two_atoms(X, A[0], A[0], 1.0, source_weights)
    if A.shape[0] == 2:
        return w2_two_atoms(X, A[0], A[1], q[0], source_weights)
    p = _weights(source_weights, X.shape[0], "source_weights")
    cost = ot.emd2(p, q, _sq_cost(X, A), numItermax=10_000_000)
    return float(np.sqrt(max(float(cost), 0.0)))


def merge_atoms(Y: np.ndarray, tol: float, max_atoms: int = 64) -> tuple[np.ndarray, np.ndarray, float] | None:
    """Group the rows of Y into atoms: a row within ``tol`` of an earlier representative joins it.

    Returns (atoms, weights = counts / N, r) with r = (1/N sum_i ||Y_i - rep(Y_i)||^2)^(1/2) <= tol, the W2 between
    the uniform measure on Y and the merged one (the coupling row -> representative); None when there are more than
    ``max_atoms`` groups (the target is not a few atoms). Cost O(N k).
    """
    Y = cloud(Y, "Y")
    if not (np.isfinite(tol) and tol >= 0):
        raise ValueError(f"tol must be a finite number >= 0, got {tol}")
    label = np.full(Y.shape[0], -1)
    dist2 = np.zeros(Y.shape[0])
    reps = []
    while np.any(label < 0):
        if len(reps) == max_atoms:
            return None
        i = int(np.argmax(label < 0))
        dd = np.sum((Y - Y[i]) ** 2, axis=1)
        join = (label < 0) & (dd <= tol * tol)
        label[join], dist2[join] = len(reps), dd[join]
        reps.append(Y[i])
    counts = np.bincount(label, minlength=len(reps))
    return np.array(reps), counts / Y.shape[0], float(np.sqrt(np.mean(dist2)))


def w2_to_target(X: np.ndarray, Y: np.ndarray, tol: float = 1e-9, **bracket_options) -> Bracket:
    """Certified W2 between the uniform measures on X and on Y (equal sizes) for a target of few distinct points.

    When the rows of Y form at most 64 groups of radius ``tol`` (``merge_atoms``), the W2 to the merged target is
    exact (``w2_atoms``) and the true W2 is within r of it (r: the RMS merge displacement, 0 when the rows of a group
    coincide exactly). Otherwise falls back to ``w2_bracket(X, Y, **bracket_options)``.
    """
    X, Y = _pair(X, Y)
    merged = merge_atoms(Y, tol)
    if merged is None:
        return w2_bracket(X, Y, **bracket_options)
    atoms, weights, r = merged
    W = w2_atoms(X, atoms, weights)
    method = f"exact to {len(atoms)} atom(s)" + (f", merge radius {r:.2g}" if r > 0 else "")
    return Bracket(max(W - r, 0.0), W + r, method)


def _sorted_projection_w2(X: np.ndarray, Y: np.ndarray, theta: np.ndarray) -> float:
    with np.errstate(over="ignore", invalid="ignore"):
        D = (np.sort(X @ theta) - np.sort(Y @ theta)) ** 2
    _finite_costs(D)
    return float(np.sqrt(np.mean(D)))


def w2_bracket(X: np.ndarray, Y: np.ndarray, *, exact_limit: int = 4_000_000, n_directions: int = 64,
               block: int = 1000, seed: int = 0) -> Bracket:
    """lower <= W2 <= upper for the uniform measures on two equal-size clouds (module docstring).

    N^2 <= ``exact_limit``: exact (``ot.emd2``, lower = upper). Else: lower = max over ``n_directions`` unit
    directions (the coordinate axes, the principal axes of X and Y, then random ones from ``seed``) of the exact
    1-D W2 of the projections; upper = the RMS cost of the permutation built from exact assignments inside blocks
    of ``block`` points of both clouds sorted along the principal axis of X u Y. Cost O(n_directions N log N +
    N block^2).
    """
    X, Y = _pair(X, Y)
    n, d = X.shape
    if n * n <= exact_limit:
        w = np.full(n, 1.0 / n)
        W = float(np.sqrt(max(float(ot.emd2(w, w, _sq_cost(X, Y), numItermax=10_000_000)), 0.0)))
        return Bracket(W, W, "exact (network simplex)")
    Z = np.vstack((X, Y))
    axes = np.linalg.svd(Z - Z.mean(axis=0), full_matrices=False)[2]
    dirs = [np.eye(d), axes, np.linalg.svd(X - X.mean(axis=0), full_matrices=False)[2],
            np.linalg.svd(Y - Y.mean(axis=0), full_matrices=False)[2]]
    extra = max(0, n_directions - sum(len(D) for D in dirs))
    R = np.random.default_rng(seed).standard_normal((extra, d))
    dirs.append(R / np.linalg.norm(R, axis=1)[:, None])
    lower = max(_sorted_projection_w2(X, Y, t) for t in np.vstack(dirs))
    ox, oy = np.argsort(X @ axes[0], kind="stable"), np.argsort(Y @ axes[0], kind="stable")
    total = 0.0
    for s in range(0, n, block):
        xi, yi = ox[s:s + block], oy[s:s + block]
        C = _sq_cost(X[xi], Y[yi])
        r, c = linear_sum_assignment(C)
        total += float(C[r, c].sum())
    upper = float(np.sqrt(total / n))
    return Bracket(lower, upper, f"bracket (max of {n_directions} 1-D projections; block assignment)")


def _projection_lower(X: np.ndarray, Y: np.ndarray, n_directions: int, seed: int) -> float:
    """max over the coordinate axes, the principal axes of X, Y and X u Y and random directions of the exact 1-D W2
    of the projections: a lower bound on W2 (x -> <x, theta> is 1-Lipschitz)."""
    n, d = X.shape
    Z = np.vstack((X, Y))
    dirs = [np.eye(d)] + [np.linalg.svd(M - M.mean(axis=0), full_matrices=False)[2] for M in (Z, X, Y)]
    extra = max(0, n_directions - sum(len(D) for D in dirs))
    R = np.random.default_rng(seed).standard_normal((extra, d))
    dirs.append(R / np.linalg.norm(R, axis=1)[:, None])
    return max(_sorted_projection_w2(X, Y, t) for t in np.vstack(dirs))


def w2_bracket_paired(X: np.ndarray, Y: np.ndarray, *, exact_limit: int = 4_000_000, n_directions: int = 64,
                      block: int = 1000, seed: int = 0) -> Bracket:
    """lower <= W2 <= upper for the uniform measures on two equal-size clouds whose rows correspond (module
    docstring): N^2 <= ``exact_limit``: POT's ot.emd2 (network simplex) widened by its optimality tolerance;
    beyond, ``w2_bracket``'s block assignment; the upper end is also at most the pairing cost (coupling_bound),
    the lower end at least the 1-D projection bound. Rigorous apart from the solver's tolerance 64 eps max C."""
    X, Y = _pair(X, Y)
    n = X.shape[0]
    pair = coupling_bound(X, Y)
    lower = _projection_lower(X, Y, n_directions, seed)
    if n * n <= exact_limit:
        C = _sq_cost(X, Y)
        w = np.full(n, 1.0 / n)
        We2 = max(float(ot.emd2(w, w, C, numItermax=10_000_000)), 0.0)
        tol2 = 64 * float(np.finfo(float).eps) * float(C.max())
        lower = max(lower, float(np.sqrt(max(We2 - tol2, 0.0))))
        upper = min(pair, float(np.sqrt(We2)))
        method = "ot.emd2 (network simplex) within its tolerance, 1-D projections, pairing"
    else:
        upper = min(pair, w2_bracket(X, Y, exact_limit=0, n_directions=n_directions, block=block, seed=seed).upper)
        method = f"bracket (max of {n_directions} 1-D projections; block assignment, pairing)"
    return Bracket(min(lower, upper), upper, method)
