"""The decay rates of the linear modes present in a trajectory that converges to a fixed point (dynamic mode
decomposition), read from the trajectory alone.

Near a hyperbolic fixed point x* the tangent displacement delta(t) = P_T (x(t) - x*) (P_T the projection onto the
tangent space at x*; the normal part is O(|delta|^2) on the sphere) obeys delta' = J delta + O(|delta|^2).  On a
uniform time grid t_k = k dt, so,

    delta(t_{k+1}) = M delta(t_k) + O(|delta|^2),        M = exp(J dt),

and the rates of the modes the trajectory carries are -log|mu_j| / dt, mu_j the eigenvalues of M on their span.  The
map is fitted by least squares to the snapshot pairs (delta(t_k), delta(t_{k+1})) whose distances lie in the window
[lo, hi], each pair divided by |delta(t_k)| (every decade of the window weighs the same), in the span of the scaled
snapshots' leading singular vectors: those above ``MODE_FLOOR`` of the largest are the modes present.  A direction
the trajectory does not carry holds far less: the neutral directions along E of Paper B's field (dim E = 2, the
trajectory converging to a point of E) held 2e-8 to 2.4e-7 of the scaled snapshots at rtol 1e-7 to 1e-13 (measured;
the field's rounding, not the integrator's tolerance), while a mode 25x below the leading one holds 4e-3.  Where an
estimate of the trajectory's own error is given (``noise``: the distance between two integrations at different
tolerances), the floor is raised to NOISE_MARGIN times its share of the scaled snapshots (its root mean square
relative to |delta|): a direction the trajectory carries less than that is the integrator's error, whose 'rate' is
anything (a d = 3 model at rtol 1e-11: a direction holding 2.8e-5 against an error share of 8.7e-5 read -0.39).  A
constant offset between the trajectory's limit and the target is such an error too (a linear fit reads it as a mode
of rate 0): the caller adds it to ``noise``.  The floor is also at least NONLINEAR_MARGIN times the largest distance
fitted: the flow's quadratic terms hold a share of about |delta| of the displacement, and fitted as a mode they read
anything too (the upper half of the window [1e-9, 1e-5], distances to 1e-5, gave -0.66 on a d = 4 model).

Why not the slope of log |delta(t)|: where the Jacobian's two slowest rates are close (0.539 and 0.583, say), a
trajectory whose fast component is 25 times its slow one at the window's top is still dominated by it at the bottom
(the ratio falls by e^{-0.044 t} only), so the slope reads 0.58 on every part of the window; the decomposition
separates the two modes and returns both rates.
"""
from __future__ import annotations

import numpy as np

#: a mode is present when its singular value is at least this fraction of the largest (scaled snapshots)
MODE_FLOOR = 1e-5
#: the fewest snapshot pairs a fit uses; with fewer in the window, the pairs of the horizon's second half
MIN_PAIRS = 8
#: the floor is at least this many times the share of the trajectory's estimated error
NOISE_MARGIN = 10.0
#: and at least this many times the largest distance fitted: the flow's quadratic terms, a share of about |delta|
NONLINEAR_MARGIN = 10.0


def tangent_displacement(path: np.ndarray, target: np.ndarray) -> np.ndarray:
    """P_T (x(t) - x*) for the rows of ``path`` (n, d), x* = ``target`` a unit vector: the displacement with its
    component along x* (normal to the sphere there) removed."""
    D = np.asarray(path, dtype=float) - target
    return D - np.outer(D @ target, target)


def mode_rates(times: np.ndarray, displacement: np.ndarray, lo: float, hi: float,
               noise: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """(rates, pairs): the decay rates -log|mu_j|/dt of the modes present in ``displacement`` (n, d), sorted
    increasingly (module docstring), fitted on the ``pairs`` consecutive snapshots with lo <= |delta| <= hi (when
    fewer than MIN_PAIRS, the pairs of the horizon's second half: no convergence to the target).  ``times`` must be
    uniformly spaced; ``noise`` (n,), where given, estimates the error of each snapshot (module docstring)."""
    t = np.asarray(times, dtype=float)
    D = np.asarray(displacement, dtype=float)
    dt = float(t[1] - t[0])
    if not np.allclose(np.diff(t), dt, rtol=1e-9, atol=0.0):
        raise ValueError("mode_rates needs uniformly spaced times")
    dist = np.linalg.norm(D, axis=1)
    inside = (dist >= lo) & (dist <= hi)
    k = np.nonzero(inside[:-1] & inside[1:])[0]
    if len(k) < MIN_PAIRS:
        k = np.nonzero(t[:-1] >= t[-1] / 2)[0]
    scale = 1.0 / np.maximum(dist[k], 1e-300)
    D0, D1 = (D[k] * scale[:, None]).T, (D[k + 1] * scale[:, None]).T
    U, s, Wt = np.linalg.svd(D0, full_matrices=False)
    floor = max(MODE_FLOOR, NONLINEAR_MARGIN * float(dist[k].max()))
    if noise is not None:
        share = np.asarray(noise, dtype=float)[k] * scale
        floor = max(floor, NOISE_MARGIN * float(np.sqrt(np.mean(share**2))))
    r = max(1, int(np.sum(s > floor * s[0])))
    U, s, Wt = U[:, :r], s[:r], Wt[:r]
    mu = np.linalg.eigvals(U.T @ D1 @ Wt.T / s)
    return np.sort(-np.log(np.maximum(np.abs(mu), 1e-300)) / dt), int(len(k))


def slowest_rate(times: np.ndarray, displacement: np.ndarray, lo: float, hi: float,
                 noise: np.ndarray | None = None) -> tuple[float, int]:
    """(rate, pairs): the smallest decay rate among the modes present (:func:`mode_rates`), the trajectory's
    asymptotic rate whenever its slowest mode is excited at all."""
    rates, pairs = mode_rates(times, displacement, lo, hi, noise)
    return float(rates[0]), pairs
