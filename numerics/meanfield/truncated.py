"""Truncated-interaction attention kernel: at large beta only pairs inside a spherical cap interact.

Same field as ``attnverify.numerics.meanfield.particles.attention_field``: X_i = P_perp_{x_i} sum_j w_ij V x_j with
w_ij = softmax_j(l_ij), l_ij = beta <b_i, x_j>, b_i = B^T x_i.

Cutoff. Let m_i = max_j l_ij and c = log(N / tol). Every j with l_ij < m_i - c has weight
w_ij = e^{l_ij - m_i} / Z_i < e^{-c} = tol / N (Z_i >= 1 because the maximiser contributes e^0), so the
dropped softmax mass is delta_i < tol. With K_i the kept set and M_i, M'_i the full and renormalised truncated
averages, sum_{K_i} w_ij V x_j = (1 - delta_i) M'_i, hence

    M_i - M'_i = sum_{j not in K_i} w_ij V x_j - delta_i M'_i,   |M_i - M'_i| <= 2 delta_i max_j |V x_j|,

and P_perp has norm <= 1, so  |X_i - X'_i| <= 2 tol max_j |V x_j|  (plus rounding).

Neighbour search. For unit x_j, l_ij = beta r_i <y*_i, x_j> with r_i = |b_i|, y*_i = b_i / r_i. Any particle j0
gives l_i0 := l_{i j0} <= m_i, so {l_ij >= m_i - c} is contained in the cap {<y*_i, x_j> >= kappa_i},
kappa_i = (l_i0 - c) / (beta r_i), which also contains the maximiser (l = m_i >= l_i0). We take j0 among the
particles nearest y*_i, but nothing assumes it is the maximiser: any j0 gives a valid cap (a near-maximal one a
small cap). The cap is widened by a margin that covers rounding and the allowed 1e-8 deviation of |x_j| from 1;
the exact logits are computed on the candidates, m_i is their maximum (exact: the maximiser is a candidate) and
every candidate is kept (the dropped set only shrinks, so the bound above still holds). Candidates: d = 2,
sorted angles and a binary search of the arc; d >= 3, ``scipy.spatial.cKDTree.query_ball_point`` with chord
radius sqrt(2 - 2 kappa). Cost O(P d + N log N) for P
candidate pairs: CSR index arrays, then the fused row kernel ``attnverify.numerics.kernel.csr_moments`` (scores, maximum,
exp and sums in one pass per row, all cores), in row blocks of at most a few million candidate pairs (bounded
memory even when the cap is the whole sphere).
"""
from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree

from attnverify.numerics import validation as _v
from attnverify.numerics.kernel import csr_moments, window_moments

_NORM_SLACK = 3e-8     # > 2 x the 1e-8 deviation of |x_j| from 1 that the particle module accepts
_COS_SLACK = 1e-12     # absolute slack on the cap's cosine, covers rounding of kappa and of the dot products
_CHUNK = 4_000_000     # candidate pairs per row block


def _csr(starts: np.ndarray, counts: np.ndarray, n_ring: int) -> np.ndarray:
    """The flat positions starts[i] + 0..counts[i]-1 (mod n_ring), row after row, without a loop."""
    ends = np.cumsum(counts)
    offset = np.arange(ends[-1] if ends.size else 0, dtype=np.int64) - np.repeat(ends - counts - starts, counts)
    return offset % n_ring


def _search(sorted_values: np.ndarray, keys: np.ndarray, order: np.ndarray, side: str = "left") -> np.ndarray:
    """np.searchsorted(sorted_values, keys, side), with the keys taken in ``order`` (the angle order of the points):
    the keys of the circle kernel are then cyclically monotone, and NumPy's search reuses its previous bound
    (measured at N = 1e4: 0.15 ms against 0.79 ms for keys in row order). Same result."""
    out = np.empty(keys.shape, np.int64)
    out[order] = np.searchsorted(sorted_values, keys[order], side=side)
    return out


class _Caps:
    """Candidate caps {x : <y*_i, x / |x|> >= kappa_i} for every row i, their sizes, and their members by row block.

    kappa_i = (l_i0 - c) / (beta r_i) with l_i0 the logit of a particle near y*_i (so l_i0 <= m_i), widened by the
    safety margins; c = log(N / tol). d = 2: arcs of the sorted angles; d >= 3: k-d tree balls of chord
    radius sqrt(2 - 2 kappa_i).
    """

    def __init__(self, X: np.ndarray, B: np.ndarray, beta: float, tol: float):
        N, d = X.shape
        self.N, self.XB = N, X @ B
        r = np.linalg.norm(self.XB, axis=1)
        Y = self.XB / r[:, None]
        c = np.log(N / tol)
        if d == 2:
            ang = np.arctan2(X[:, 1], X[:, 0])
            self.order = np.argsort(ang, kind="stable")
            sa = ang[self.order]
            phi = np.arctan2(Y[:, 1], Y[:, 0])
            k = _search(sa, phi, self.order)                  # j0: the better of the two sorted neighbours of phi_i
            ja, jb = self.order[k % N], self.order[(k - 1) % N]
            near = np.maximum(np.einsum("ij,ij->i", Y, X[ja]), np.einsum("ij,ij->i", Y, X[jb]))
        else:
            self.tree = cKDTree(X / np.linalg.norm(X, axis=1)[:, None])
            near = np.einsum("ij,ij->i", Y, X[self.tree.query(Y, k=1)[1]])
        kappa = near - c / (beta * r)                         # = (l_i0 - c) / (beta r_i)
        kappa = kappa - _NORM_SLACK * np.abs(kappa) - _COS_SLACK   # |x_j| within 1e-8 of 1, rounding
        kappa = np.clip(kappa, -1.0, 1.0)
        if d == 2:
            half = np.arccos(kappa) + 1e-9                    # angular margin for arctan2 rounding
            ext = np.concatenate((sa - 2 * np.pi, sa, sa + 2 * np.pi))
            a = _search(ext, phi - half, self.order, "left")
            counts = _search(ext, phi + half, self.order, "right") - a
            full = (counts >= N) | (half >= np.pi)
            self.start, counts = np.where(full, 0, a), np.where(full, N, counts)
        else:
            self.Y, self.chord = Y, np.sqrt(2.0 - 2.0 * kappa) * (1 + 1e-12) + 1e-12
            counts = self.tree.query_ball_point(Y, self.chord, return_length=True)
        if np.any(counts == 0):                               # impossible in exact arithmetic: the argmax is in
            raise RuntimeError("truncated kernel: empty candidate set (rounding beyond the safety margin)")
        self.indptr = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)

    def cols(self, a: int, b: int) -> np.ndarray:
        """Candidate columns of rows a..b-1, row after row."""
        if hasattr(self, "order"):
            return self.order[_csr(self.start[a:b], np.diff(self.indptr[a:b + 1]), self.N)]
        hits = self.tree.query_ball_point(self.Y[a:b], self.chord[a:b], return_sorted=False)
        return np.concatenate(hits).astype(np.int64)

    def blocks(self, max_pairs: int):
        """Row blocks [a, b) with at most max_pairs candidate pairs each (or a single row)."""
        a = 0
        while a < self.N:
            b = int(np.searchsorted(self.indptr, self.indptr[a] + max_pairs, side="right")) - 1
            b = min(self.N, max(b, a + 1))
            yield a, b
            a = b


def interaction_pairs(X: np.ndarray, B: np.ndarray, beta: float, *,
                      tol: float = 1e-12) -> tuple[np.ndarray, np.ndarray]:
    """Candidate pairs of the truncated kernel as CSR arrays (indptr (N+1,), cols (P,)); row i lists the j it sums over.

    Guaranteed: the set contains every j with beta <B^T x_i, x_j> >= m_i - log(N / tol) and the row maximiser.
    Memory O(P); the kernel itself works in row blocks.
    """
    B = _v.matrix(B, "B")
    _v.check_invertible(B)
    b = _v.finite_beta(beta)
    X = _v.points(X, B.shape[0])
    caps = _Caps(X, B, b, _v.tol(tol))
    return caps.indptr, caps.cols(0, X.shape[0])


def pair_count(X: np.ndarray, B: np.ndarray, beta: float, *, tol: float = 1e-12) -> int:
    """The number of candidate pairs of the truncated kernel (the length of ``interaction_pairs``'s cols), without
    building the list: memory O(N)."""
    B = _v.matrix(B, "B")
    _v.check_invertible(B)
    X = _v.points(X, B.shape[0])
    return int(_Caps(X, B, _v.finite_beta(beta), _v.tol(tol)).indptr[-1])


def attention_field_truncated(X: np.ndarray, B: np.ndarray, V: np.ndarray, beta: float, *,
                              tol: float = 1e-12) -> np.ndarray:
    """Attention field with the softmax truncated to l_ij >= m_i - log(N / tol), (N, d) -> (N, d).

    Error bound (module docstring): max_i |X_i - X'_i| <= 2 tol max_j |V x_j| against
    ``attention_field``, up to rounding. Cost proportional to the number of candidate pairs (see
    ``interaction_pairs``), about N^2 * (cap area fraction) ~ N^2 sqrt(log(N/tol) / beta) on the circle.
    Needs finite beta > 0, 0 < tol < 1, B invertible and unit rows in X.
    """
    B, V = _v.model(B, V)
    b = _v.finite_beta(beta)
    t = _v.tol(tol)
    X = _v.points(X, B.shape[0])
    caps = _Caps(X, B, b, t)
    VX = X @ V.T
    if hasattr(caps, "order"):                           # d = 2: arcs of the angle-sorted points, seen twice over
        twice = np.concatenate((caps.order, caps.order))   # so that an arc across angle pi is one window
        M = window_moments(caps.XB, X[twice], VX[twice], b, caps.start % X.shape[0], np.diff(caps.indptr))
    else:
        M = np.empty_like(X)
        for a, e in caps.blocks(_CHUNK):                 # row blocks bound the memory of the candidate lists
            M[a:e] = csr_moments(caps.XB[a:e], X, VX, b, caps.indptr[a:e + 1] - caps.indptr[a], caps.cols(a, e))
    return M - np.einsum("ij,ij->i", M, X)[:, None] * X     # P_perp_{x_i} m_i
