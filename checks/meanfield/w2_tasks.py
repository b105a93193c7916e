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

__all__ = ["beta_curves", "inf_distance", "particle_rates", "remaining_travel", "EXTENSION", "LINEAR_FRACTION"]


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
    max_i |X_inf(x_i)|. ``end_dist`` and ``travel``: each particle's distance from its target and its remaining
    travel (:func:`remaining_travel`) at the end: the horizon's, or, when the flow has not settled there, that of the
    flow continued on a coarse grid to EXTENSION times the horizon (``extended_to``; None when not continued).
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
    out = {"times": fine[pick], "E_lo": np.array([e[0] for e in E]), "E_hi": np.array([e[1] for e in E]),
           "fine_times": fine, "dist": dist, "slow_dist": np.linalg.norm(inf @ slow.T, axis=2),
           "pair": pair, "method": E[-1][2], "settled": bool(settled), "speed": speed, "extended_to": None}
    velocity = lambda X: field(X, B, V, np.inf)             # noqa: E731 -- the flow's own field, per particle
    if settled:
        return {**out, "end_dist": dist[-1], "travel": remaining_travel(fine, inf, velocity)}
    # unsettled at the longest horizon: each particle continued alone (at beta = inf the field of a particle is its
    # own) on a coarse grid to EXTENSION x the horizon; its distance from its target there and the travel left
    more = np.linspace(0.0, (EXTENSION - 1) * fine[-1], 8 * EXTENSION + 1)
    ext = simulate(inf[-1], Q, K, V, np.inf, more, rtol=1e-10, atol=1e-14)
    return {**out, "end_dist": np.linalg.norm(ext[-1] - target, axis=1), "travel": remaining_travel(more, ext, velocity),
            "extended_to": float(fine[-1] * EXTENSION)}


def remaining_travel(times: np.ndarray, X: np.ndarray, field) -> np.ndarray:
    """Per particle, the distance its speed can still carry it after the last time T: |v_i(T)| / kappa_i, the
    integral of a speed decaying exponentially at kappa_i; inf where it does not decay, 0 where it is 0. The rates
    of |v_i| = |X_inf(x_i(t))| are fitted over the first and the second half of 9 times in the last eighth
    [7T/8, T], and kappa_i is the smallest of: particle i's two (a decay that slows down, as near a saddle the
    particle is about to leave, gets the longer travel) and the flow's slowest single-mode rate, the smallest rate
    of the particles whose two halves agree to 10 % (a particle whose speed a faster mode still dominates carries a
    slower mode's displacement that its own speed does not show yet). From the simulation alone: near a stable atom
    the flow is linear and |v_i| / kappa_i bounds the particle's distance from its limit, the atom it tends to,
    whatever the derived Pi says."""
    last = np.nonzero(times >= times[-1] * 7 / 8)[0]
    pick = last[np.linspace(0, len(last) - 1, min(9, len(last))).astype(int)]
    speed = np.array([np.linalg.norm(field(X[k]), axis=1) for k in pick])      # (times, particles)
    out = np.full(speed.shape[1], np.inf)
    if len(pick) < 3:
        return out
    positive = np.all(speed > 0, axis=0)
    logs = np.log(np.where(speed > 0, speed, 1.0))
    h = len(pick) // 2
    rates = np.array([-np.polyfit(times[pick][part], logs[part], 1)[0] for part in (slice(0, h + 1), slice(h, None))])
    single = positive & (rates.min(axis=0) > 0) & (np.abs(rates[0] - rates[1]) <= 0.1 * rates.max(axis=0))
    slowest = float(rates[:, single].min()) if np.any(single) else np.inf
    kappa = np.minimum(rates.min(axis=0), slowest)
    decays = positive & (kappa > 0)
    out[decays] = speed[-1, decays] / kappa[decays]
    out[speed[-1] == 0.0] = 0.0
    return out


#: a flow unsettled at its longest horizon is continued (end state only, coarse grid) to this multiple of it: ~15 s
#: for 1000 particles to 2.5e5 (d = 3)
EXTENSION = 64


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
