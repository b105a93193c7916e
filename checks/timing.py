"""Timing helpers for the benchmarks: ratios of two timings taken side by side in one run, so that machine noise
cancels (a benchmark reports ratios, never a timed assertion)."""
from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

def timed(fn: Callable[[], object]) -> tuple[float, object]:
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


SETTLE_S = 0.3    # OpenBLAS's worker threads spin for a while after a GEMM; on a 2-core machine they would take the
                  # next timed call's cores (measured: the fused kernel's time doubled, 0.023 s against 0.012 s alone)


def settled(fn: Callable[[], object]) -> float:
    """The time of one call of ``fn`` that starts after SETTLE_S of idleness (no spinning threads left)."""
    time.sleep(SETTLE_S)
    return timed(fn)[0]


def paired_times(slow: Callable[[], object], fast: Callable[[], object], repeats: int) -> tuple[float, float, float]:
    """(median time of ``slow``, median time of ``fast``, median of the per-pair ratios slow / fast) over ``repeats``
    interleaved pairs of calls, each started on an idle machine (``_settled``): drift and noise hit both alike."""
    pairs = [(settled(slow), settled(fast)) for _ in range(repeats)]
    t_slow, t_fast = np.median(pairs, axis=0)
    return float(t_slow), float(t_fast), float(np.median([a / b for a, b in pairs]))


def median_time(fn: Callable[[], object], repeats: int) -> float:
    """Median wall time of ``repeats`` calls after one untimed warm-up call."""
    fn()
    return float(np.median([timed(fn)[0] for _ in range(repeats)]))




def size(n: int, scale: float, low: int) -> int:
    """``n`` scaled by ``scale`` (0 < scale <= 1, a smoke run's shrink factor), at least ``low``."""
    return max(low, int(round(n * scale)))
