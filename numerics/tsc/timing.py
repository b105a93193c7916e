"""Run-time of an experiment, measured on a reduced subset and extrapolated.

The work of one repetition at size n is one kernel call over P(n) = n sum_s min(q_s, n) row-key pairs (q_s the
query rows of scale s; q_s = n with all rows), plus O(n d^2) for sampling, values, controls and moments, plus a
constant. The subset runs ``reps`` repetitions at three sizes of the grid (smallest, middle, largest) and fits
t(n) = alpha + beta n + gamma P(n) by least squares (minimum-norm when columns are collinear, e.g. P proportional
to n for a fixed q; predictions stay determined on the grid); the estimate is R * sum_k t(n_k) plus the
empirical reference, which is timed in full (it is a single computation). Wall time depends on the machine's
load (other processes on the same cores); the process's CPU time (all its threads) does much less, so both are
extrapolated: on an otherwise idle machine with c cores the wall time lies between cpu_seconds / c (perfectly
parallel) and cpu_seconds (serial).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from attnverify.numerics.tsc.curves import empirical_reference, run_error_curves
from attnverify.numerics.tsc.laws import positive_int
from attnverify.numerics.tsc.protocol import Experiment

__all__ = ["TimeEstimate", "extrapolate_seconds"]


@dataclass(frozen=True, eq=False)
class TimeEstimate:
    seconds: float                   # extrapolated wall time of the whole experiment
    cpu_seconds: float               # extrapolated CPU time of the process (all threads)
    measured_seconds: float          # wall time spent measuring
    per_repetition: np.ndarray       # (K,) predicted seconds of one repetition at each n (all scales)
    reference_seconds: float         # the empirical reference, timed in full (0 without one)
    measured_sizes: np.ndarray
    measured_per_repetition: np.ndarray
    reps_measured: int


def _pairs(exp: Experiment, n: np.ndarray) -> np.ndarray:
    return np.array([exp.with_(n_values=np.array([v]), reps=1, n_reference=None).pairs() for v in n])


def extrapolate_seconds(exp: Experiment, seed, reps: int = 2,
                        control: Callable[[int, np.ndarray], np.ndarray] | None = None) -> TimeEstimate:
    """Measure ``reps`` repetitions at three sizes of exp's grid and extrapolate to the whole experiment."""
    reps = positive_int(reps, "reps", 2)
    started = time.perf_counter()
    S, d = exp.scales.size, exp.d
    zeros_m, zeros_c = np.zeros((S, d)), np.zeros((S, d, d))
    K = exp.n_values.size
    picks = np.unique([0, K // 2, K - 1])
    sizes = exp.n_values[picks]
    run_error_curves(exp.law, exp.A[:1], exp.W_v, exp.tau, sizes[:1], 2, seed, zeros_m[:1], zeros_c[:1])  # compile
    measured = []
    for n in sizes:
        t, c = time.perf_counter(), time.process_time()
        run_error_curves(exp.law, exp.A, exp.W_v, exp.tau, np.array([n]), reps, seed, zeros_m, zeros_c,
                         query_rows=exp.query_rows, control=control)
        measured.append(((time.perf_counter() - t) / reps, (time.process_time() - c) / reps))
    measured = np.array(measured)                                                # (3, 2): wall, cpu
    n_all = exp.n_values.astype(float)
    design = lambda n: np.column_stack([np.ones_like(n), n, _pairs(exp, n)])     # noqa: E731
    coef = np.linalg.lstsq(design(sizes.astype(float)), measured, rcond=None)[0]
    per_rep = np.maximum(design(n_all) @ coef, 0.0)                              # (K, 2)
    ref = np.zeros(2)
    if exp.n_reference:
        t, c = time.perf_counter(), time.process_time()
        empirical_reference(exp.law, exp.A, exp.W_v, exp.tau, exp.n_reference, seed, exp.reference_rows, control)
        ref = np.array([time.perf_counter() - t, time.process_time() - c])
    total = exp.reps * per_rep.sum(axis=0) + ref
    return TimeEstimate(float(total[0]), float(total[1]), time.perf_counter() - started, per_rep[:, 0],
                        float(ref[0]), sizes, measured[:, 0], reps)
