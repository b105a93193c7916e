"""Output times that sample a decay through its fit window.

A decay e(t) ~ e^{-c t} is fitted in a window lo <= e <= hi (attnverify.checks.stats.decay_rate, at least 6
samples). It crosses the window in ln(hi/lo)/c: at c = 43 and the default window (1e-8, 1e-3) that is 0.27, while the
zero-temperature flow's output grid is 0.25 apart (t_inf = 60 on 241 times), so a fast model's decay left one sample
in the window and read as "E never reaches the window" (found by the model sweep, seed 4). :func:`refine_through_window`
adds output times where a series crosses its window too quickly, from the simulation alone (the numerical series,
never a derived rate), by integrating again from the state before the crossing.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

#: samples each crossing series must have in its window (twice decay_rate's minimum of 6, so that the two halves
#: of the window it compares have 6 each)
MIN_IN_WINDOW = 12
#: rounds of refinement (each shortens the crossing interval to the samples that bracket it)
ROUNDS = 4


def crossings(t: np.ndarray, S: np.ndarray, lo: float, hi: float) -> list[tuple[float, float, int]]:
    """For each column of S (n_times, m) that enters [lo, hi] from above and later falls below lo: (t before it
    enters, t when it falls below lo, samples inside the window in between), for the columns with fewer than
    MIN_IN_WINDOW samples."""
    out = []
    for s in S.T:
        below_hi = np.nonzero(s <= hi)[0]
        if not below_hi.size:
            continue
        i_hi = int(below_hi[0])
        below_lo = np.nonzero(s[i_hi:] < lo)[0]
        if not below_lo.size:
            continue
        i_lo = i_hi + int(below_lo[0])
        inside = int(np.sum((s[i_hi:i_lo] >= lo) & (s[i_hi:i_lo] <= hi)))
        if inside < MIN_IN_WINDOW:
            out.append((float(t[max(i_hi - 1, 0)]), float(t[i_lo]), inside))
    return out


def refine_through_window(t: np.ndarray, X: np.ndarray, series: Callable[[np.ndarray], np.ndarray],
                          run_from: Callable[[np.ndarray, np.ndarray], np.ndarray], lo: float, hi: float
                          ) -> tuple[np.ndarray, np.ndarray]:
    """(times, states) with every series of ``series(X)`` (n_times, m) that crosses [lo, hi] sampled at least
    MIN_IN_WINDOW times inside it, where ROUNDS refinements can. Each round takes the interval [a, b] that holds
    the under-sampled crossings, puts 2 MIN_IN_WINDOW equal steps on the shortest of them, and integrates again
    from the state at a (``run_from(x_a, times - a)``: an autonomous flow) to the end of the horizon, on the new
    times in [a, b] and the old ones after b, so the trajectory stays one integration."""
    t, X = np.asarray(t, float), np.asarray(X)
    for _ in range(ROUNDS):
        short = crossings(t, series(X), lo, hi)
        if not short:
            break
        a, b = min(c[0] for c in short), max(c[1] for c in short)
        h = min(c[1] - c[0] for c in short) / (2 * MIN_IN_WINDOW)
        ia = int(np.searchsorted(t, a))
        new = np.union1d(np.linspace(a, b, int(np.ceil((b - a) / h)) + 1), t[t > b])
        X = np.concatenate([X[:ia], run_from(X[ia], new - a)])
        t = np.concatenate([t[:ia], new])
    return t, X
