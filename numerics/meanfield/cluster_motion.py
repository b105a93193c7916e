"""The terminal phase of the particle dynamics (Paper B, Conjecture 1) measured from a trajectory: the masses on two
subspaces E and S, the phases (a metastable stay on E, a switch to S), and for each cluster of tokens the rates
at which its centre approaches S, turns inside S and leaves E at the times it is tight and isolated.

No closed form enters: the subspaces (orthogonal projectors P_E, P_S and an orthonormal basis of S), the model
matrices B and V and the size of each rate (where the outside tokens' pull must stay below its tolerance) are
inputs.  Settings read from ``p``: ``axis_window`` (lo, hi), ``tightness``, ``meta_level``, ``meta_dwell``,
``level``, ``cluster_angle``, ``rate_tol``, ``rotation_tol``, ``escape_tol``.

* :func:`phases` -- the longest stay with q_E >= meta_level before the terminal phase, and the switch after it.
* :func:`measure_run` -- everything measured in one trajectory (the centres, widths, outside weights and
  compared-time masks of the clusters with at least MIN_MASS of the tokens, and their fitted rates).
* :func:`rate_coupling` -- a bound on how much the tokens outside a cluster move its rates.
* :func:`spectral_time_scales` -- the time scales of x' = V x from V's floating-point eigenvalues (to size a run).
* :func:`mode_rate` (linear map of transverse coordinates), :func:`lagged_rate` (slope of log distance over one
  turn), :func:`rotation_rate` (2 pi over the time of one full turn): the estimators, each with the difference
  between the two halves of its data as a precision measure.
"""
from __future__ import annotations

import numpy as np

from attnverify.numerics.meanfield.clusters import (cluster_labels, cluster_tracks, dominant_mode_rates, lagged_log_slope,
                                          outside_influence, winding_periods)

__all__ = ["phases", "runs", "rotation_rate", "lagged_rate", "mode_rate", "complement", "measure_run", "rate_coupling",
           "spectral_time_scales", "MIN_MASS", "PLATEAU", "LATE", "WIDTH_ERROR", "departure_factor"]

PLATEAU = 0.9         # a distance that keeps > 90 % of its value over 6 tight samples has stopped decaying
MIN_MASS = 0.05       # clusters with fewer tokens are reported, not compared (too few tokens for a clean centre)
LATE = 0.25           # the late window: the last quarter of [0, t_max]
WIDTH_FLOOR = 1e-14   # widths 2 (1 - |mean|) below this are rounding (measured up to 13 eps on collapsed clusters)
WIDTH_ERROR = 50.0    # a cluster of width w: its centre departs from the cluster field by <= ~14 w |V| dt over a step


def departure_factor(beta: float, B: np.ndarray) -> float:
    """F in 'a tight cluster of width w (2 (1 - |mean|), its tokens' mean squared distance from the centre) departs
    from the cluster field by about F w |V| per unit time': WIDTH_ERROR for the centre's own second-order terms, plus
    beta ||B||_2 for the attention's non-uniformity inside the cluster. The weights e^{beta <B^T x_i, x_j>} vary by
    beta <B^T x_i, x_j - c> across it, which moves the point a token attends to by beta Cov B^T x_i (Cov the
    tokens' covariance, ||Cov|| <= w): first order in w, and growing with beta (a d = 2 model at beta = 100,
    ||B|| = 51, w = 2.8e-9: a step of 0.0025 missed the flow by 1.2e-4 of its length; 2.6e-5 at beta = 31.6)."""
    return WIDTH_ERROR + float(beta) * float(np.linalg.norm(np.asarray(B, dtype=float), 2))
                      # (measured, |V| dt < 1), so 50 w bounds the error of its position


def phases(t: np.ndarray, qE: np.ndarray, qS: np.ndarray, meta_level: float, meta_dwell: float,
           level: float) -> tuple[float, float, float]:
    """(dwell, t_meta, t_switch): the longest stretch with qE >= meta_level that starts before the terminal phase
    (before qS first reaches ``level``; a later visit, such as a cluster turning past E inside S, is not a phase on
    E), its length and start; when it lasts at least ``meta_dwell`` (a metastable phase, not a transit) and qS < 1/2
    at its start, the first later time at which qS crosses 1/2 upwards (linear interpolation).  nan where there is
    none."""
    on = np.r_[False, qE >= meta_level, False]
    edges = np.nonzero(np.diff(on.astype(int)))[0]
    reached = np.nonzero(qS >= level)[0]
    end = int(reached[0]) if reached.size else len(t)
    runs = [(a, b) for a, b in zip(edges[::2], edges[1::2]) if a < end]     # [start, end) sample ranges
    if not runs:
        return 0.0, float("nan"), float("nan")
    dt = t[1] - t[0]
    k0, k1 = max(runs, key=lambda r: r[1] - r[0])
    dwell = float((k1 - k0) * dt)
    if dwell < meta_dwell or qS[k0] >= 0.5:
        return dwell, float(t[k0]), float("nan")
    up = np.nonzero(qS[k0:] >= 0.5)[0]
    if up.size == 0:
        return dwell, float(t[k0]), float("nan")
    j = k0 + int(up[0])
    return dwell, float(t[k0]), float(t[j - 1] + (0.5 - qS[j - 1]) * dt / (qS[j] - qS[j - 1]))


def runs(mask: np.ndarray) -> list[np.ndarray]:
    idx = np.nonzero(mask)[0]
    return [r for r in np.split(idx, np.nonzero(np.diff(idx) > 1)[0] + 1) if r.size]


def rotation_rate(t: np.ndarray, angle: np.ndarray, near: np.ndarray) -> tuple[float, float, int]:
    """(rate, halves difference, turns measured): 2 pi over the mean time of one full turn of the angle, over the
    contiguous runs of ``near`` samples."""
    starts, periods = [], []
    for r in runs(near):
        s, T = winding_periods(t[r], angle[r])
        starts += list(s)
        periods += list(T)
    if len(periods) < 4:
        return float("nan"), float("nan"), len(periods)
    periods = np.array(periods)[np.argsort(starts)]
    k = len(periods) // 2
    halves = [2 * np.pi / periods[:k].mean(), 2 * np.pi / periods[k:].mean()]
    return float(2 * np.pi / periods.mean()), abs(halves[0] - halves[1]), len(periods)


def lagged_rate(t: np.ndarray, dist: np.ndarray, ok: np.ndarray, lag: float,
                support: np.ndarray | None = None) -> tuple[float, float, int]:
    """(rate, halves difference, samples): minus the mean slope of log dist over one lag (a turn), from the cubic
    spline of log dist over each contiguous run of ``support`` samples (default ``ok``), at the starts t_i with
    ``ok`` at t_i and at both samples around t_i + lag.  Only the two ends of a slope need the fit window's
    conditions; the samples between only carry the spline (a cluster tight throughout)."""
    support = ok if support is None else support & (dist > 0)
    starts, slopes = [], []
    for r in runs(support):
        s, v = lagged_log_slope(t[r], dist[r], lag)
        if not s.size:
            continue
        end = np.searchsorted(t, s + lag)                      # the first sample at or after t_i + lag
        i0 = np.searchsorted(t, s)
        keep = ok[i0] & ok[end] & ok[np.maximum(end - 1, 0)]
        starts += list(s[keep])
        slopes += list(v[keep])
    if len(slopes) < 6:
        return float("nan"), float("nan"), len(slopes)
    slopes = -np.array(slopes)[np.argsort(starts)]
    k = len(slopes) // 2
    return float(slopes.mean()), abs(float(slopes[:k].mean() - slopes[k:].mean())), len(slopes)


def mode_rate(t: np.ndarray, Z: np.ndarray, ok: np.ndarray, sign: float) -> tuple[float, float, int]:
    """(rate, halves difference, pairs): sign times the rate of the dominant mode of the linear map fitted to the
    coordinates Z over consecutive ``ok`` samples (attnverify.numerics.meanfield.clusters.dominant_mode_rates), and the
    difference between the mean per-pair rates of that mode over the first and the second half of the pairs."""
    rate, per_pair, i = dominant_mode_rates(Z, ok, float(t[1] - t[0]))
    if per_pair.size < 6:
        return float("nan"), float("nan"), int(per_pair.size)
    k = per_pair.size // 2
    return float(sign * rate), float(abs(per_pair[:k].mean() - per_pair[k:].mean())), int(per_pair.size)


def complement(P: np.ndarray) -> np.ndarray:
    """An orthonormal basis of the orthogonal complement of range(P) (P an orthogonal projector)."""
    w, U = np.linalg.eigh(P)
    return U[:, w < 0.5]


def rate_coupling(log_outside: np.ndarray, B: np.ndarray, V: np.ndarray, beta: float) -> np.ndarray:
    """A bound on how much the tokens outside a cluster move the rates of its centre's linearised motion:

        3 eps |V| (2 beta |B| + 1),    eps = the outside tokens' relative softmax weight (log_outside, log-space).

    A token at c moves by P_perp_c [V c + sum_m eps_m V (x_m - c)] / (1 + eps); the perturbation's Jacobian in c
    has the terms eps_m |V| (|x_m - c| + 1) <= 3 eps_m |V| and, from d eps_m / dc = eps_m beta (B (x_m - c) - B^T c),
    eps_m beta 3 |B| 2 |V|.  The weight's gradient carries beta |B|: at beta = 12.7 (|B| = 5, |V| = 11, two
    antipodal clusters with eps = 2.3e-8) the bound is 1e-4 and the fitted approach rate 1.52 was off by 7.2e-5
    relative, while eps itself was far below the tightness 1e-6 (measured, d = 3). Formed in log-space, a bound
    beyond e^700 (a cluster that is not isolated at all) counts as e^700: far above any tolerance it is compared
    with, and nothing overflows (an outside weight of e^700 times 3 |V| 2 beta |B| did, at |B| = 16, beta = 316)."""
    log_factor = np.log(3.0 * np.linalg.norm(V, 2) * (2.0 * float(beta) * np.linalg.norm(B, 2) + 1.0))
    return np.exp(np.minimum(np.asarray(log_outside, dtype=float) + log_factor, 700.0))


def spectral_time_scales(V: np.ndarray) -> tuple[float, float]:
    """(r, omega): the time scales of the linear flow x' = V x, from V's eigenvalues lambda in floating point (LAPACK),
    never from a derived form: r = Re lambda_1 - Re lambda_next, the gap from the largest real part to the next
    distinct one (0 without one), and omega = |Im lambda_1|, the largest imaginary part among the eigenvalues of
    largest real part (0 for a real dominant eigenvalue). Real parts within 1e-9 max(1, |Re lambda|) are one."""
    lam = np.linalg.eigvals(np.asarray(V, dtype=float))
    re = lam.real
    lead = float(re.max())
    tol = 1e-9 * max(1.0, float(np.abs(re).max()))
    below = re[re < lead - tol]
    r = lead - float(below.max()) if below.size else 0.0
    omega = float(np.abs(lam[re >= lead - tol].imag).max())
    return r, (omega if omega > tol else 0.0)


def measure_run(X: np.ndarray, t: np.ndarray, beta: float, B: np.ndarray, V: np.ndarray, P_E: np.ndarray,
                P_S: np.ndarray, basis_S: np.ndarray, p: dict, rotating: bool, scales: dict[str, float]) -> dict:
    """Everything measured in one trajectory X (T, N, d): the masses on E and S, the phases, and per cluster
    (mass >= MIN_MASS) the fitted approach, rotation and escape rates at its tight, isolated times.

    ``scales`` (``approach``, ``rotation``, ``escape``: the size of each rate, inf where none is compared) sets
    where a rate is read: only where :func:`rate_coupling` stays below a tenth of its tolerance (``rate_tol``,
    ``rotation_tol``, ``escape_tol``) times that size."""
    lo, hi = sorted(p["axis_window"])
    M = np.einsum("tni,tnj->tij", X, X) / X.shape[1]
    qE = np.einsum("ij,tji->t", P_E, M)
    qS = np.einsum("ij,tji->t", P_S, M)
    dwell, t_meta, t_sw = phases(t, qE, qS, p["meta_level"], p["meta_dwell"], p["level"])
    labels = cluster_labels(X[-1], p["cluster_angle"])
    C, W, mass = cluster_tracks(X, labels)
    logx, pull = outside_influence(X, labels, C, B, V, beta)   # outside weight; their velocity at each centre
    coupling = rate_coupling(logx, B, V, beta)
    depart = departure_factor(beta, B)
    late = t >= t[-1] * (1 - LATE)
    out = {"t": t, "qE": qE, "qS": qS, "dwell": dwell, "t_meta": t_meta, "t_switch": t_sw, "M_late": M[late],
           "n_clusters": int(len(mass)), "clusters": []}
    for k in np.nonzero(mass >= MIN_MASS)[0]:
        c = C[:, k]
        tight = (beta * W[:, k] <= p["tightness"]) & (logx[:, k] <= np.log(p["tightness"]))
        tight &= np.all(np.isfinite(c), axis=1)
        dS = np.linalg.norm(c - c @ P_S, axis=1)
        dE = np.linalg.norm(c - c @ P_E, axis=1)
        row = {"mass": float(mass[k]), "dist_S": dS, "tight": tight, "centre": c, "pairs": tight[:-1] & tight[1:],
               "width": W[:, k], "log_outside": logx[:, k], "pull": pull[:, k]}
        settled = {what: coupling[:, k] <= p[tol] / 10 * scales[what]
                   for what, tol in (("approach", "rate_tol"), ("rotation", "rotation_tol"), ("escape", "escape_tol"))}
        # the centre of a cluster of width w departs from the cluster field by about WIDTH_ERROR w: its distance to
        # S is read only where that is below a tenth of the rate tolerance times the distance
        w = np.maximum(W[:, k] - WIDTH_FLOOR, 0.0)          # a width at the rounding floor of |mean| is no width
        # ... and where the outside tokens' pull (numerics.clusters.outside_influence) cannot move the cluster by
        # that share of its approach speed r dS: it holds a cluster off S by about pull / r (seen at d = 3: a constant
        # offset 1e-4 of the window's bottom that the fitted map took for the slowest mode, a 'rate' of 3e-5 against
        # 0.30)
        window = (tight & settled["approach"] & (dS >= lo) & (dS <= hi) & (depart * w <= p["rate_tol"] / 10 * dS)
                  & (pull[:, k] <= p["rate_tol"] / 10 * scales["approach"] * dS))
        if rotating:
            y = c @ basis_S
            angle = np.unwrap(np.arctan2(y[:, 1], y[:, 0]))
            row["rotation"] = rotation_rate(t, angle, tight & settled["rotation"] & (dS <= hi))
            # |P_S c| varies with the period of a half turn (a quadratic form in cos, sin of omega t); a lag of a full
            # turn 2 pi / omega cancels it too, with half the error per slope (measured: halves 2e-6 against 1.5e-5)
            lag = 2 * np.pi / row["rotation"][0] if np.isfinite(row["rotation"][0]) else float("nan")
            row["approach"] = (lagged_rate(t, dS, window, lag, tight) if np.isfinite(lag)
                               else (float("nan"), float("nan"), 0))
        else:
            row["approach"] = mode_rate(t, c @ complement(P_S), window, -1.0)
        # no rate, and near S (within the window's top, where the derived rate says it decays) the tight cluster's
        # distance has stopped decaying above the window's bottom
        idx = np.nonzero(tight & (dS <= hi))[0]
        row["plateau"] = bool(not np.isfinite(row["approach"][0]) and idx.size >= 6 and dS[idx[-1]] > lo
                              and dS[idx[-1]] > PLATEAU * dS[idx[-6]])
        row["plateau_at"] = float(dS[idx[-1]]) if idx.size else float("nan")
        # on E: the growth rate of the coordinates transverse to E inside the window, and the longest stay of a
        # tight cluster below the window's bottom
        row["escape"] = mode_rate(t, c @ complement(P_E), tight & settled["escape"] & (dE >= lo) & (dE <= hi)
                                  & (depart * w <= p["escape_tol"] / 10 * dE)
                                  & ((pull[:, k] <= p["escape_tol"] / 10 * scales["escape"] * dE)
                                     if np.isfinite(scales["escape"]) else True), 1.0)
        below = [r for r in runs(tight & (dE < lo))]
        row["below_E"] = max(((float(t[r[-1]] - t[r[0]]), float(t[r[0]])) for r in below), default=(0.0, float("nan")))
        row["first_tight_on_E"] = float(t[np.argmax(tight & (dE <= hi))]) if np.any(tight & (dE <= hi)) else None
        out["clusters"].append(row)
    return out
