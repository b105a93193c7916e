"""``attnverify bench``: performance ratios measured side by side in one process, so that machine noise cancels.

Every figure is a ratio of two timings taken in the same run (median of repeats unless stated), except the
W2 timings, which are reported with their fitted scaling exponent. ``scale`` (0 < scale <= 1) shrinks every
problem size for a quick smoke run; the targets refer to scale = 1.

Keys of the result (``run_all``):
  sga_step_over_rng            one batched SGA step (L = 10500, d = 20, 30 runs) / drawing its Gaussians alone
  particles_speedup_vs_naive   time to max trajectory error <= 1e-4 (N = 2000, d = 3, beta = 100, t in [0, 5]):
                               naive explicit Euler / the project's ``simulate``
  truncated_kernel_speedup     dense ``attention_field`` / ``attention_field_truncated`` (beta = 1e4, N = 1e4, d = 2)
  truncated_kernel_max_error   max |dense - truncated| there
  dense_kernel_fraction_of_peak  (np.exp over N x N + the two GEMMs of the kernel's shapes) / attention_field
  w2_exponent                  fitted p in time ~ N^p for exact W2 at N = 500 .. 5000
  fused_kernel_speedup_vs_numpy  stabilised NumPy field (full N x N scores, np.exp, GEMM) / the fused kernel's
                               ``attention_field`` (N = 4096, d = 3, beta = 100), interleaved in one run
  w2_speedup_vs_assignment     exact W2 to a two-atom target (N = 5000): assignment problem / ``w2_two_atoms``
  truncated_cost_exponent      fitted p in time ~ N^p of ``attention_field_truncated`` at beta = 1e4, N = 1e3 .. 1e5
                               (d = 2), with the interacting-pair fraction at each N
  paper_profile_seconds        (only with ``paper_profile=True``) seconds of each check of the paper profile, and the
                               total, measured by running it
"""
from __future__ import annotations

import math
import os
import platform
import time
from typing import Callable

import numpy as np
import scipy

from attnverify.naive import euler_naive
from attnverify.numerics.particles import attention_field, simulate
from attnverify.numerics.sga import projected_sga
from attnverify.numerics.signal_model import SignalModel
from attnverify.numerics.truncated import attention_field_truncated, interaction_pairs, pair_count
from attnverify.numerics.wasserstein import w2, w2_assignment, w2_two_atoms

TARGETS = {"sga_step_over_rng": ("<=", 1.5), "particles_speedup_vs_naive": (">=", 10.0),
           "truncated_kernel_speedup": (">=", 10.0), "truncated_kernel_max_error": ("<=", 1e-10),
           "fused_kernel_speedup_vs_numpy": (">=", 10.0), "w2_speedup_vs_assignment": (">=", 100.0)}
ACCURACY = 1e-4            # trajectory accuracy the particle integrators must reach
REF_RTOL = 1e-8            # reference: simulate's global error is ~30 x rtol here (3e-6 -> 9.6e-5), so ~3e-7 << 1e-4


def _timed(fn: Callable[[], object]) -> tuple[float, object]:
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


SETTLE_S = 0.3    # OpenBLAS's worker threads spin for a while after a GEMM; on a 2-core machine they would take the
                  # next timed call's cores (measured: the fused kernel's time doubled, 0.023 s against 0.012 s alone)


def _settled(fn: Callable[[], object]) -> float:
    """The time of one call of ``fn`` that starts after SETTLE_S of idleness (no spinning threads left)."""
    time.sleep(SETTLE_S)
    return _timed(fn)[0]


def paired_times(slow: Callable[[], object], fast: Callable[[], object], repeats: int) -> tuple[float, float, float]:
    """(median time of ``slow``, median time of ``fast``, median of the per-pair ratios slow / fast) over ``repeats``
    interleaved pairs of calls, each started on an idle machine (``_settled``): drift and noise hit both alike."""
    pairs = [(_settled(slow), _settled(fast)) for _ in range(repeats)]
    t_slow, t_fast = np.median(pairs, axis=0)
    return float(t_slow), float(t_fast), float(np.median([a / b for a, b in pairs]))


def median_time(fn: Callable[[], object], repeats: int) -> float:
    """Median wall time of ``repeats`` calls after one untimed warm-up call."""
    fn()
    return float(np.median([_timed(fn)[0] for _ in range(repeats)]))


def _sphere(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    X = rng.standard_normal((n, d))
    return X / np.linalg.norm(X, axis=1)[:, None]


def _size(n: int, scale: float, low: int) -> int:
    return max(low, int(round(n * scale)))


# ----------------------------------------------------------------------------- SGA step vs RNG
def bench_sga(scale: float = 1.0, repeats: int = 7, seed: int = 0) -> dict:
    """Per-step time of ``projected_sga`` (sample + gradient + update) over the time of its Gaussian draw.

    One step draws rng.standard_normal((30, L, d)); the ratio is the median over interleaved repeats of per-step SGA
    time / that draw, with the same generator and dtype. Also times the RNG variants (float32, out=, SFC64).
    """
    L, d, runs = _size(10500, scale, 60), 20, 30
    model = SignalModel(theta=0.25, beta=1.0, sigma=1.0, R=max(1, L // 21), L=L, d=d)
    rho0 = np.zeros(runs)
    n_steps = 4
    out: dict = {"L": L, "d": d, "runs": runs}
    for dtype in (np.float64, np.float32):
        rng = np.random.default_rng(seed)
        step = lambda: projected_sga(model, rho0, n_steps, 1.0, 10.0, rng, dtype=dtype)  # noqa: E731
        draw = lambda: rng.standard_normal((runs, L, d), dtype=dtype)                      # noqa: E731
        step(), draw()                                                  # warm-up
        pairs = [(_timed(step)[0] / (n_steps + 1), _timed(draw)[0]) for _ in range(repeats)]   # interleaved
        t_step, t_rng = np.median(pairs, axis=0)                        # n_steps + 1 sequences are drawn per call
        out[np.dtype(dtype).name] = {"step_s": float(t_step), "rng_s": float(t_rng),
                                     "ratio": float(np.median([a / b for a, b in pairs]))}
    buf64, buf32 = np.empty((runs, L, d)), np.empty((runs, L, d), np.float32)
    pcg, sfc = np.random.default_rng(seed), np.random.Generator(np.random.SFC64(seed))
    out["rng_variants_s"] = {
        "PCG64 float64": median_time(lambda: pcg.standard_normal((runs, L, d)), repeats),
        "PCG64 float64 out=": median_time(lambda: pcg.standard_normal(out=buf64), repeats),
        "PCG64 float32 out=": median_time(lambda: pcg.standard_normal(out=buf32, dtype=np.float32), repeats),
        "SFC64 float64 out=": median_time(lambda: sfc.standard_normal(out=buf64), repeats),
        "SFC64 float32 out=": median_time(lambda: sfc.standard_normal(out=buf32, dtype=np.float32), repeats),
    }
    out["sga_step_over_rng"] = out["float64"]["ratio"]                 # the project's default dtype
    return out


# ----------------------------------------------------------------------------- particles: simulate vs naive Euler
def particle_problem(scale: float = 1.0, seed: int = 0):
    """(X0, Q, K, V, beta, t_end): N = 2000 uniform points on S^2, B = Q^T K = diag(1, 2, 3), V = diag(1.5, 1, 2)."""
    N = _size(2000, scale, 60)
    X0 = _sphere(np.random.default_rng(seed), N, 3)
    return X0, np.eye(3), np.diag([1.0, 2.0, 3.0]), np.diag([1.5, 1.0, 2.0]), 100.0, 5.0


def bench_particles(scale: float = 1.0, naive_budget_s: float = 75.0, n_out: int = 10, seed: int = 0) -> dict:
    """Time to reach max trajectory error <= 1e-4 at t = 0, 0.5, ..., 5 against ``simulate`` at rtol 1e-8.

    Project: the loosest rtol on the grid 10^(-k/2) (atol = rtol/100) that meets 1e-4, found from 1e-5 up or
    down, timed in that search. Naive: ``euler_naive`` from 200 steps, doubling until the error
    is <= 1e-4. If the next doubling would exceed ``naive_budget_s`` (checked from the second run on, once the
    measured order lies in [0.5, 2]), the needed step count is extrapolated
    from the convergence order p of the last two runs, used as max(p, 1): Euler is first order, and a
    pre-asymptotic p above 1 predicts fewer steps, so it can only understate the speedup (p is reported)
    and the naive time is the measured per-step time times that count (``naive_extrapolated`` is then True).
    """
    X0, Q, K, V, beta, t_end = particle_problem(scale, seed)
    times = np.linspace(0.0, t_end, n_out + 1)
    t_ref, ref = _timed(lambda: simulate(X0, Q, K, V, beta, times, rtol=REF_RTOL, atol=REF_RTOL * 1e-2))

    def project(rtol: float) -> tuple[float, float]:
        t, Y = _timed(lambda: simulate(X0, Q, K, V, beta, times, rtol=rtol, atol=rtol * 1e-2))
        return t, float(np.max(np.abs(Y - ref)))

    tried: dict[float, tuple[float, float]] = {}
    k = 10                                                # rtol = 10^(-k/2)
    while True:
        rtol = 10.0 ** (-k / 2)
        tried[rtol] = project(rtol)
        ok = tried[rtol][1] <= ACCURACY
        up = 10.0 ** (-(k - 1) / 2)
        if ok and up not in tried and k > 2:
            k -= 1                                        # passes: try looser
        elif not ok and not any(e <= ACCURACY for _, e in tried.values()) and k < 24:
            k += 1                                        # fails and nothing passed yet: try tighter
        else:
            break
    passing = [r for r, (_, e) in tried.items() if e <= ACCURACY]
    if not passing:
        raise RuntimeError("simulate did not reach the accuracy on the rtol grid")
    best = max(passing)
    t_proj = tried[best][0]

    B = Q.T @ K
    runs = []                                            # (n_steps, seconds, error)
    n = 200                                              # 100 steps is unstable at this size (error ~2)
    while True:
        t, Y = _timed(lambda: euler_naive(X0, B, V, beta, t_end, n, n_out))
        err = float(np.max(np.abs(Y - ref))) if np.all(np.isfinite(Y)) else math.inf
        runs.append((n, t, err))
        order = math.log2(runs[-2][2] / err) if len(runs) >= 2 and math.isfinite(runs[-2][2]) else math.nan
        if err <= ACCURACY:
            break
        if len(runs) >= 2 and 0.5 <= order <= 2.0 and 2 * t > naive_budget_s - sum(r[1] for r in runs):
            break                                        # over budget and in the asymptotic regime: extrapolate
        if n >= 2**22:
            raise RuntimeError(f"naive Euler did not converge (error {err:.3g} at {n} steps)")
        n *= 2
    n_last, t_last, e_last = runs[-1]
    extrapolated = e_last > ACCURACY
    if extrapolated:
        halvings = math.ceil(math.log2(e_last / ACCURACY) / max(order, 1.0))   # never below Euler's order 1
        n_need = n_last * 2 ** halvings
        t_naive = t_last / n_last * n_need
    else:
        n_need, t_naive = n_last, t_last
    return {"N": X0.shape[0], "d": 3, "beta": beta, "t_end": t_end, "accuracy": ACCURACY,
            "reference_rtol": REF_RTOL, "reference_s": t_ref,
            "project_rtol": best, "project_s": t_proj, "project_error": tried[best][1],
            "project_tried": {f"{r:.3g}": {"s": s, "error": e} for r, (s, e) in sorted(tried.items())},
            "naive_runs": [{"n_steps": a, "s": s, "error": e} for a, s, e in runs],
            "naive_order": order, "naive_steps": n_need, "naive_s": t_naive, "naive_extrapolated": extrapolated,
            "particles_speedup_vs_naive": t_naive / t_proj}


# ----------------------------------------------------------------------------- truncated kernel
def bench_truncated(scale: float = 1.0, tol: float = 1e-12, repeats: int = 7, seed: int = 0) -> dict:
    """Dense ``attention_field`` vs ``attention_field_truncated`` at beta = 1e4, N = 1e4, d = 2.

    B = diag(1, 3), V = diag(2, 1), uniform random points; speedup = the median over interleaved pairs of dense
    time / truncated time, each call started on an idle machine (``paired_times``).
    """
    N, beta = _size(10_000, scale, 200), 1e4
    X = _sphere(np.random.default_rng(seed), N, 2)
    B, V = np.diag([1.0, 3.0]), np.diag([2.0, 1.0])
    dense = attention_field(X, B, V, beta)           # also the warm-up
    trunc = attention_field_truncated(X, B, V, beta, tol=tol)
    t_dense, t_trunc, speedup = paired_times(lambda: attention_field(X, B, V, beta),
                                             lambda: attention_field_truncated(X, B, V, beta, tol=tol), repeats)
    pairs = int(interaction_pairs(X, B, beta, tol=tol)[0][-1])
    return {"N": N, "d": 2, "beta": beta, "tol": tol, "dense_s": t_dense, "truncated_s": t_trunc,
            "pairs": pairs, "pair_fraction": pairs / N**2,
            "error_bound": 2 * tol * float(np.max(np.linalg.norm(X @ V.T, axis=1))),
            "truncated_kernel_speedup": speedup,
            "truncated_kernel_max_error": float(np.max(np.abs(dense - trunc)))}


# ----------------------------------------------------------------------------- dense-kernel throughput
def bench_dense_throughput(scale: float = 1.0, repeats: int = 5, seed: int = 0) -> dict:
    """Pair interactions per second of ``attention_field`` (N = 2000, d = 3, beta = 100) and the same as a fraction
    of this machine's floor for that work: np.exp over an N x N array + the score GEMM (N x d)(d x N) + the
    read-out GEMM (N x N)(N x d), timed on the same shapes."""
    N, d, beta = _size(2000, scale, 100), 3, 100.0
    rng = np.random.default_rng(seed)
    X = _sphere(rng, N, d)
    B, V = np.diag([1.0, 2.0, 3.0]), np.diag([1.5, 1.0, 2.0])
    t_field = median_time(lambda: attention_field(X, B, V, beta), repeats)
    S = beta * ((X @ B) @ X.T)
    S -= S.max(axis=1, keepdims=True)
    buf = np.empty_like(S)
    VX, XB = X @ V.T, X @ B
    t_exp = median_time(lambda: np.exp(S, out=buf), repeats)
    t_scores = median_time(lambda: np.matmul(XB, X.T, out=buf), repeats)
    t_read = median_time(lambda: buf @ VX, repeats)
    floor = t_exp + t_scores + t_read
    return {"N": N, "d": d, "field_s": t_field, "exp_s": t_exp, "score_gemm_s": t_scores, "readout_gemm_s": t_read,
            "numpy_exp_elements_per_s": N**2 / t_exp, "pairs_per_s": N**2 / t_field, "floor_pairs_per_s": N**2 / floor,
            "dense_kernel_fraction_of_peak": floor / t_field}


# ----------------------------------------------------------------------------- exact W2
def bench_w2(scale: float = 1.0, seed: int = 0) -> dict:
    """Time of ``attnverify.numerics.wasserstein.w2`` (assignment problem) between two N-point clouds in R^3, and the least-squares
    exponent p of time ~ N^p over N = 500, 1000, 2000, 5000 (scaled)."""
    rng = np.random.default_rng(seed)
    sizes = sorted({_size(n, scale, 20 * (i + 1)) for i, n in enumerate((500, 1000, 2000, 5000))})
    secs = []
    for n in sizes:
        X, Y = rng.standard_normal((n, 3)), rng.standard_normal((n, 3))
        secs.append(_timed(lambda: w2(X, Y))[0])
    p = float(np.polyfit(np.log(sizes), np.log(secs), 1)[0]) if len(sizes) > 1 else math.nan
    return {"sizes": sizes, "seconds": secs, "w2_exponent": p}


# ----------------------------------------------------------------------------- fused kernel vs NumPy
def numpy_field(X: np.ndarray, B: np.ndarray, V: np.ndarray, beta: float) -> np.ndarray:
    """The stabilised NumPy field (the baseline): S = beta X B X^T minus its row maxima, W = exp(S), m = W V X / sum W,
    then the tangent projection. Full N x N arrays, NumPy's exp, BLAS GEMMs."""
    S = beta * ((X @ B) @ X.T)
    S -= S.max(axis=1, keepdims=True)
    W = np.exp(S, out=S)
    M = (W @ (X @ V.T)) / W.sum(axis=1)[:, None]
    return M - np.einsum("ij,ij->i", M, X)[:, None] * X


def bench_fused(scale: float = 1.0, repeats: int = 7, seed: int = 0) -> dict:
    """``attention_field`` (the fused numba kernel) against ``numpy_field`` at N = 4096, d = 3, beta = 100: the
    median over interleaved repeats of the ratio of the two timings (machine noise hits both alike), each call
    started on an idle machine (``_settled``). The ratio
    depends on NumPy's own exp (``numpy_exp_elements_per_s`` of :func:`bench_dense_throughput`): a SIMD exp in
    NumPy, as on AVX-512 machines, narrows the gap to a fused kernel."""
    N, d, beta = _size(4096, scale, 128), 3, 100.0
    X = _sphere(np.random.default_rng(seed), N, d)
    B, V = np.diag([1.0, 2.0, 3.0]), np.diag([1.5, 1.0, 2.0])
    fused, ref = attention_field(X, B, V, beta), numpy_field(X, B, V, beta)      # also the warm-up (and compile)
    t_np, t_fused, speedup = paired_times(lambda: numpy_field(X, B, V, beta),
                                          lambda: attention_field(X, B, V, beta), repeats)
    return {"N": N, "d": d, "beta": beta, "numpy_s": float(t_np), "fused_s": float(t_fused),
            "fused_pairs_per_s": N**2 / float(t_fused), "numpy_pairs_per_s": N**2 / float(t_np),
            "max_relative_difference": float(np.max(np.abs(fused - ref)) / np.max(np.abs(ref))),
            "threads": _numba_threads(),
            "fused_kernel_speedup_vs_numpy": speedup}


def _numba_threads() -> int:
    import numba

    return int(numba.get_num_threads())


# ----------------------------------------------------------------------------- W2 to two atoms
def bench_w2_two_atoms(scale: float = 1.0, repeats: int = 5, seed: int = 0) -> dict:
    """Exact W2 from N = 5000 points (a Gaussian cloud in R^2) to the two-atom target with atoms +-u and masses
    n_plus/N, 1 - n_plus/N (as N points): ``w2_assignment`` (timed once) / ``w2_two_atoms`` (median)."""
    N = _size(5000, scale, 100)
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, 2)) + [0.3, 0.0]
    u = np.array([np.cos(0.4), np.sin(0.4)])
    n_plus = int(np.sum(X @ u > 0.2))
    Y = np.vstack([np.tile(u, (n_plus, 1)), np.tile(-u, (N - n_plus, 1))])
    t_assign, exact = _timed(lambda: w2_assignment(X, Y))
    fast = w2_two_atoms(X, u, -u, n_plus / N)
    t_fast = median_time(lambda: w2_two_atoms(X, u, -u, n_plus / N), repeats)
    return {"N": N, "n_plus": n_plus, "assignment_s": t_assign, "two_atoms_s": t_fast, "w2": fast,
            "relative_difference": abs(fast - exact) / exact, "equal_to_1e-10": bool(abs(fast - exact) <= 1e-10 * exact),
            "w2_speedup_vs_assignment": t_assign / t_fast}


# ----------------------------------------------------------------------------- truncated kernel: cost in N
def bench_truncated_scaling(scale: float = 1.0, repeats: int = 3, seed: int = 0) -> dict:
    """Time of ``attention_field_truncated`` at beta = 1e4 (d = 2, B = diag(1, 3), V = diag(2, 1), uniform points)
    for N = 1e3, 3e3, 1e4, 3e4, 1e5 (scaled), the least-squares exponent p of time ~ N^p, and the fraction of the
    N^2 pairs that interact (candidate pairs / N^2) at each N."""
    beta, B, V = 1e4, np.diag([1.0, 3.0]), np.diag([2.0, 1.0])
    sizes = sorted({_size(n, scale, 100 * (i + 1)) for i, n in enumerate((1_000, 3_000, 10_000, 30_000, 100_000))})
    rng = np.random.default_rng(seed)
    secs, fractions = [], []
    for n in sizes:
        X = _sphere(rng, n, 2)
        secs.append(median_time(lambda: attention_field_truncated(X, B, V, beta), repeats))
        fractions.append(pair_count(X, B, beta) / n**2)
    p = float(np.polyfit(np.log(sizes), np.log(secs), 1)[0]) if len(sizes) > 1 else math.nan
    return {"beta": beta, "d": 2, "sizes": sizes, "seconds": secs, "pair_fraction": fractions,
            "truncated_cost_exponent": p}


# ----------------------------------------------------------------------------- paper profile (opt-in)
def bench_paper_profile(executor_kind: str = "local", seed: int = 0,
                        progress: Callable[[str], None] | None = None) -> dict:
    """Seconds of each check of the ``paper`` profile, run one after the other on ``executor_kind`` (default: a
    process pool on all cores) without a task store, and the total. Long (tens of minutes on 2 cores)."""
    from attnverify.executors import make_executor
    from attnverify.checks.runner import run
    from attnverify.checks.registry import all_checks

    out: dict = {"executor": executor_kind, "seconds": {}, "verdicts": {}}
    with make_executor(executor_kind) as ex:
        for c in all_checks():
            if progress:
                progress(f"paper profile: {c.id}")
            t, rep = _timed(lambda: run([c.id], profile="paper", seed=seed, executor=ex))
            out["seconds"][c.id], out["verdicts"][c.id] = t, rep.results[0].verdict
    out["total_s"] = float(sum(out["seconds"].values()))
    return out


# ----------------------------------------------------------------------------- all
def machine_info() -> dict:
    """CPU count, NumPy/SciPy versions and the BLAS NumPy was built against."""
    info = {"cpu_count": os.cpu_count(), "python": platform.python_version(), "numpy": np.__version__,
            "scipy": scipy.__version__, "platform": platform.platform()}
    if hasattr(os, "sched_getaffinity"):
        info["cpus_available"] = len(os.sched_getaffinity(0))
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        info["blas"] = f"{blas.get('name', '?')} {blas.get('version', '')}".strip()
    except Exception:  # noqa: BLE001 -- BLAS info is optional
        info["blas"] = "unknown"
    return info


SECTIONS = (("sga", bench_sga), ("particles", bench_particles), ("truncated", bench_truncated),
            ("dense", bench_dense_throughput), ("w2", bench_w2), ("fused", bench_fused),
            ("w2_two_atoms", bench_w2_two_atoms), ("truncated_scaling", bench_truncated_scaling))


def run_all(scale: float = 1.0, progress: Callable[[str], None] | None = None,
            naive_budget_s: float | None = None, paper_profile: bool = False) -> dict:
    """Every benchmark at ``scale``; the headline keys at the top level, the details under each section name.

    ``naive_budget_s`` (default 75 s x scale) bounds the time spent running the naive Euler baseline.
    ``paper_profile``: also run the whole paper profile and report ``paper_profile_seconds`` (long).
    """
    if not (isinstance(scale, (int, float)) and not isinstance(scale, bool) and 0 < scale <= 1):
        raise ValueError(f"scale must be a number in (0, 1], got {scale!r}")
    result: dict = {"scale": float(scale), "machine": machine_info()}
    for name, fn in SECTIONS:
        if progress:
            progress(name)
        kwargs = {"naive_budget_s": 75.0 * scale if naive_budget_s is None else naive_budget_s} \
            if name == "particles" else {}
        t, section = _timed(lambda: fn(scale, **kwargs))
        section["wall_s"] = t
        result[name] = section
    result["sga_step_over_rng"] = result["sga"]["sga_step_over_rng"]
    result["particles_speedup_vs_naive"] = result["particles"]["particles_speedup_vs_naive"]
    result["truncated_kernel_speedup"] = result["truncated"]["truncated_kernel_speedup"]
    result["truncated_kernel_max_error"] = result["truncated"]["truncated_kernel_max_error"]
    result["dense_kernel_fraction_of_peak"] = result["dense"]["dense_kernel_fraction_of_peak"]
    result["dense_pairs_per_s"] = result["dense"]["pairs_per_s"]
    result["w2_exponent"] = result["w2"]["w2_exponent"]
    result["w2_seconds"] = dict(zip(map(str, result["w2"]["sizes"]), result["w2"]["seconds"]))
    result["fused_kernel_speedup_vs_numpy"] = result["fused"]["fused_kernel_speedup_vs_numpy"]
    result["w2_speedup_vs_assignment"] = result["w2_two_atoms"]["w2_speedup_vs_assignment"]
    result["truncated_cost_exponent"] = result["truncated_scaling"]["truncated_cost_exponent"]
    result["truncated_pair_fraction"] = dict(zip(map(str, result["truncated_scaling"]["sizes"]),
                                                 result["truncated_scaling"]["pair_fraction"]))
    if paper_profile:
        t, section = _timed(lambda: bench_paper_profile(progress=progress))
        section["wall_s"] = t
        result["paper_profile"] = section
        result["paper_profile_seconds"] = {**section["seconds"], "total": section["total_s"]}
    result["targets_met"] = {k: _meets(result[k], op, v) for k, (op, v) in TARGETS.items()}
    result["targets_met"]["w2_speedup_vs_assignment"] &= result["w2_two_atoms"]["equal_to_1e-10"]
    return result


def _meets(value: float, op: str, bound: float) -> bool:
    return bool(value <= bound) if op == "<=" else bool(value >= bound)


def format_table(result: dict) -> str:
    """The headline figures as a plain-text table."""
    p, tr, dn = result["particles"], result["truncated"], result["dense"]
    fu, wa, ts = result["fused"], result["w2_two_atoms"], result["truncated_scaling"]
    rows = [
        ("sga_step_over_rng", f"{result['sga_step_over_rng']:.3f}",
         f"L={result['sga']['L']} d={result['sga']['d']} runs=30 float64; float32 "
         f"{result['sga']['float32']['ratio']:.3f}"),
        ("particles_speedup_vs_naive", f"{result['particles_speedup_vs_naive']:.1f}",
         f"N={p['N']}: simulate rtol={p['project_rtol']:.3g} {p['project_s']:.2f}s vs Euler "
         f"{p['naive_steps']} steps {p['naive_s']:.1f}s{' (extrapolated)' if p['naive_extrapolated'] else ''}"),
        ("truncated_kernel_speedup", f"{result['truncated_kernel_speedup']:.1f}",
         f"N={tr['N']} beta=1e4: dense {tr['dense_s']:.3f}s, truncated {tr['truncated_s']:.4f}s, "
         f"pairs {tr['pair_fraction']:.2%}"),
        ("truncated_kernel_max_error", f"{result['truncated_kernel_max_error']:.2e}",
         f"tol={tr['tol']:g}, proven bound {tr['error_bound']:.1e} + rounding"),
        ("dense_kernel_fraction_of_peak", f"{result['dense_kernel_fraction_of_peak']:.2f}",
         f"N={dn['N']}: {dn['pairs_per_s']:.3g} pairs/s vs exp+GEMM floor {dn['floor_pairs_per_s']:.3g}"),
        ("w2_exponent", f"{result['w2_exponent']:.2f}",
         ", ".join(f"N={n}: {s:.2f}s" for n, s in zip(result["w2"]["sizes"], result["w2"]["seconds"]))),
        ("fused_kernel_speedup_vs_numpy", f"{result['fused_kernel_speedup_vs_numpy']:.1f}",
         f"N={fu['N']} d=3 beta=100: NumPy {fu['numpy_s']:.3f}s, fused {fu['fused_s']:.4f}s "
         f"({fu['fused_pairs_per_s']:.3g} pairs/s, {fu['threads']} threads), rel. diff {fu['max_relative_difference']:.1e}"),
        ("w2_speedup_vs_assignment", f"{result['w2_speedup_vs_assignment']:.0f}",
         f"N={wa['N']} two atoms: assignment {wa['assignment_s']:.2f}s, threshold {wa['two_atoms_s'] * 1e3:.2f}ms, "
         f"rel. diff {wa['relative_difference']:.1e}"),
        ("truncated_cost_exponent", f"{result['truncated_cost_exponent']:.2f}",
         "beta=1e4: " + ", ".join(f"N={n}: {s:.3f}s ({f:.2%} pairs)" for n, s, f in
                                  zip(ts["sizes"], ts["seconds"], ts["pair_fraction"]))),
    ]
    if "paper_profile_seconds" in result:
        pp = result["paper_profile_seconds"]
        rows.append(("paper_profile_seconds", f"{pp['total']:.0f}",
                     ", ".join(f"{k}: {v:.0f}s" for k, v in pp.items() if k != "total")))
    width = max(len(r[0]) for r in rows)
    lines = [f"{'metric':<{width}}  {'value':>9}  {'target':<13}  details"]
    for key, value, detail in rows:
        target = ""
        if key in TARGETS:
            op, bound = TARGETS[key]
            target = f"{op}{bound:g} " + ("ok" if result["targets_met"][key] else "MISS")
        lines.append(f"{key:<{width}}  {value:>9}  {target:<13}  {detail}")
    m = result["machine"]
    lines.append(f"machine: {m.get('cpus_available', m['cpu_count'])} CPUs, numpy {m['numpy']}, {m['blas']}")
    if result["scale"] < 1:
        lines.append(f"scale {result['scale']:g}: reduced sizes; the targets refer to scale 1")
    return "\n".join(lines)
