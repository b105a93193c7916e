"""The numeric side of meanfield.w2_bound (attnverify.checks.meanfield.w2), as tasks a Context maps: the particles
at each beta against Pi(X0) (W2 brackets and the proof-internal D), the zero-temperature flow's pairing cost and
each particle's slow component (E(t) and the atom rates), and the fit of each particle's decay in the linear
regime. They read simulators only, never the theory under test."""
from __future__ import annotations

import numpy as np

from attnverify.checks.meanfield.window_sampling import refine_through_window
from attnverify.checks.stats import decay_rate
from attnverify.numerics.kernel import dense_moments
from attnverify.numerics.meanfield.particles import NonFiniteField, attention_field, simulate
from attnverify.numerics.meanfield.wasserstein import coupling_bound, merge_atoms, w2, w2_bracket_paired, w2_to_target

__all__ = ["beta_curves", "inf_distance", "particle_rates", "remaining_travel", "LINEAR_FRACTION"]


def _bracket(X: np.ndarray, target: np.ndarray) -> tuple[float, float, str]:
    """W2 from the particles X to the uniform measure on the rows of ``target`` (row i the image of particle i's
    initial point): exact transport to the atoms when they are at most 64 (w2_to_target; dim E = 1), otherwise
    w2_bracket_paired (ot.emd2 within its tolerance up to N = 2000, a bracket beyond; 1-D projections; pairing)."""
    b = w2_to_target(X, target) if merge_atoms(target, 1e-9) is not None else w2_bracket_paired(X, target)
    return b.lower, b.upper, b.method


def beta_curves(X0: np.ndarray, Q, K, V, beta: float, times: np.ndarray, target: np.ndarray, rtol: float,
                kernel: str = "dense", coupling: str = "exact", simulate=simulate, moments=dense_moments) -> dict:
    """The particles at beta from X0 (``simulate``, attnverify.numerics.meanfield.particles.simulate, with the softmax
    average ``moments``: the check's ``ctx.numerics``) against ``target`` = Pi(X0):
    W_lo, W_hi the certified bracket of W2(particles, target) (w2_to_target: exact to <= 64 atoms, ot.emd2 up to
    N = 2000, a bracket beyond; with many atoms at every fourth output time, nan between), ``method``, and D the
    distance to the same points under the zero-temperature flow ('exact': W2 by assignment at every second output
    time, nan between; 'synchronous': the pairing cost of each particle with its own image, every time).
    A simulation whose field is not finite (an overflowing softmax) gives ``non_finite_at``, the time it was reached,
    and nan curves. Floating-point exceptions are not raised in it, in this process or a worker's."""
    try:
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            traj = simulate(X0, Q, K, V, beta, times, rtol=rtol, atol=rtol * 1e-2, kernel=kernel, moments=moments)
    except NonFiniteField as exc:                   # judged by the check: a finite closed form cannot agree
        nan = np.full(len(times), np.nan)
        return {"D": nan, "W_lo": nan, "W_hi": nan, "method": "", "non_finite_at": exc.t}
    inf = simulate(X0, Q, K, V, np.inf, times, rtol=min(rtol, 1e-8), atol=min(rtol, 1e-8) * 1e-2)
    D = np.full(len(times), np.nan)
    if coupling == "synchronous":
        D[:] = [coupling_bound(a, b) for a, b in zip(traj, inf)]
    else:
        D[::2] = [w2(a, b) for a, b in zip(traj[::2], inf[::2])]
    step = 1 if merge_atoms(target, 1e-9) is not None else 4
    lo, hi = np.full(len(times), np.nan), np.full(len(times), np.nan)
    method = ""
    for k in range(0, len(times), step):
        lo[k], hi[k], method = _bracket(traj[k], target)
    return {"D": D, "W_lo": lo, "W_hi": hi, "method": method}


def inf_distance(X0: np.ndarray, Q, K, V, t_inf: float, n_times: int, target: np.ndarray, slow: np.ndarray,
                 settle: float = 1e-10, refine: int = 8, simulate=simulate, field=attention_field,
                 window: tuple[float, float] = (1e-8, 1e-3)) -> dict:
    """The zero-temperature flow of X0 (rtol 1e-10) against ``target``, on a time grid ``refine`` times finer than
    ``n_times`` over the horizon (``fine_times``): each particle's distance from its own target point (``dist``,
    (n_fine, N)) and the pairing cost ``pair`` = (mean dist^2)^(1/2) (an upper bound on W2(flow, target)); the
    component |slow x_i| of each particle along the projector ``slow`` (``slow_dist``: the mode that decays at the
    atom's rate, the derived second eigenspace of V B^T), the
    certified bracket E_lo, E_hi of W2(flow, target) (:func:`_bracket`) at ``times``: the coarse grid and up to 24
    more fine times while the pairing cost decays from 1e-2 to 1e-11. The horizon is ``t_inf``, doubled (up to
    64 t_inf, the grids with it) until the flow has settled: max_i |X_inf(x_i)| <= settle |V| (a criterion of the
    numerical field alone). Where the pairing cost or a particle's slow component crosses the fit window ``window``
    in fewer than 12 samples, times are added there (:func:`refine_through_window`, from the simulation alone).
    ``settled``: whether the criterion was met (False: the horizon stopped at 64 t_inf), ``speed`` the final
    max_i |X_inf(x_i)|, and ``travel`` each particle's remaining travel (:func:`remaining_travel`).
    ``simulate`` and ``field``: the check's ``ctx.numerics.simulate`` and ``ctx.numerics.attention_field``."""
    B = np.asarray(Q, float).T @ np.asarray(K, float)
    T, n = float(t_inf), int(n_times)
    while True:
        fine = np.linspace(0.0, T, refine * (n - 1) + 1)
        inf = simulate(X0, Q, K, V, np.inf, fine, rtol=1e-10, atol=1e-14)
        speed = float(np.max(np.linalg.norm(field(inf[-1], B, V, np.inf), axis=1)))
        settled = speed <= settle * np.linalg.norm(V, 2)
        if settled or T >= 64 * t_inf:
            break
        T, n = 2 * T, 2 * n - 1
    slow = np.asarray(slow, float)
    coarse = fine[::refine]
    fine, inf = refine_through_window(
        fine, inf, lambda X: np.column_stack([np.sqrt(np.mean(np.sum((X - target[None]) ** 2, axis=2), axis=1)),
                                              np.linalg.norm(X @ slow.T, axis=2)]),
        lambda x, times: simulate(x, Q, K, V, np.inf, times, rtol=1e-10, atol=1e-14), *sorted(window))
    dist = np.linalg.norm(inf - target[None], axis=2)
    pair = np.sqrt(np.mean(dist**2, axis=1))
    band = np.nonzero((pair >= 1e-11) & (pair <= 1e-2))[0]
    extra = band[np.linspace(0, len(band) - 1, min(24, len(band))).astype(int)] if len(band) else band
    pick = np.union1d(np.nonzero(np.isin(fine, coarse))[0], extra).astype(int)
    E = [_bracket(inf[i], target) for i in pick]
    return {"times": fine[pick], "E_lo": np.array([e[0] for e in E]), "E_hi": np.array([e[1] for e in E]),
            "fine_times": fine, "dist": dist, "slow_dist": np.linalg.norm(inf @ slow.T, axis=2),
            "pair": pair, "method": E[-1][2], "settled": bool(settled), "speed": speed,
            "travel": remaining_travel(fine, inf, lambda X: field(X, B, V, np.inf))}


def remaining_travel(times: np.ndarray, X: np.ndarray, field) -> np.ndarray:
    """Per particle, the distance its speed can still carry it after the last time T: |v_i(T)| / kappa_i, the
    integral of a speed decaying exponentially at kappa_i, the slower of the decay rates of |v_i| = |X_inf(x_i(t))|
    fitted over the first and the second half of 9 times in the last eighth [7T/8, T] (a decay that slows down, as
    near a saddle the particle is about to leave, gets the longer travel); inf where the speed does not decay
    (kappa_i <= 0), 0 where it is 0. From the simulation alone: near a stable atom the flow is linear and
    |v_i| / kappa_i is the particle's distance from its limit, the atom it tends to, whatever the derived Pi says."""
    last = np.nonzero(times >= times[-1] * 7 / 8)[0]
    pick = last[np.linspace(0, len(last) - 1, min(9, len(last))).astype(int)]
    speed = np.array([np.linalg.norm(field(X[k]), axis=1) for k in pick])      # (times, particles)
    halves = (slice(0, len(pick) // 2 + 1), slice(len(pick) // 2, None))
    out = np.full(speed.shape[1], np.inf)
    for i in range(speed.shape[1]):
        v = speed[:, i]
        if v[-1] == 0.0:
            out[i] = 0.0
        elif np.all(v > 0) and len(pick) >= 3:
            kappa = min(-float(np.polyfit(times[pick][h], np.log(v[h]), 1)[0]) for h in halves)
            out[i] = v[-1] / kappa if kappa > 0 else np.inf
    return out


#: a slow component is fitted only where r^2 <= LINEAR_FRACTION x it (r the particle's distance from its atom): the
#: flow's O(r^2) terms feed every mode. Seed-23 sweep model (transversal rates 4.6 % apart), 1000 particles: largest
#: miss of the atom's rate 2.8 % without the rule, 5.4e-4 at 0.1, 2.0e-4 at 0.01 (all fitted), 6e-5 at 0.001
LINEAR_FRACTION = 0.01


def particle_rates(times: np.ndarray, slow: np.ndarray, lo: float, hi: float,
                   dist: np.ndarray | None = None) -> np.ndarray:
    """The decay rate of each particle's slow component (columns of ``slow``) fitted in the window [lo, hi] (stats.
    decay_rate) where its distance ``dist`` from its atom has dist^2 <= LINEAR_FRACTION slow (everywhere when
    ``dist`` is None); nan where fewer than 6 samples remain."""
    out = np.full(slow.shape[1], np.nan)
    for i in range(slow.shape[1]):
        m = np.ones(len(times), bool) if dist is None else dist[:, i] ** 2 <= LINEAR_FRACTION * slow[:, i]
        out[i] = decay_rate(times[m], slow[m, i], lo, hi)[0]
    return out
