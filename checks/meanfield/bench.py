"""Paper B's benchmarks (``attnverify bench``): performance ratios measured side by side in one process.

Keys (headline):
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
"""
from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from attnverify.checks.timing import median_time, paired_times, size, timed
from attnverify.numerics.meanfield.naive import euler_naive
from attnverify.numerics.meanfield.particles import attention_field, simulate
from attnverify.numerics.meanfield.truncated import attention_field_truncated, interaction_pairs, pair_count
from attnverify.numerics.meanfield.wasserstein import w2, w2_assignment, w2_two_atoms

TARGETS = {"particles_speedup_vs_naive": (">=", 10.0), "truncated_kernel_speedup": (">=", 10.0),
           "truncated_kernel_max_error": ("<=", 1e-10), "fused_kernel_speedup_vs_numpy": (">=", 10.0),
           "w2_speedup_vs_assignment": (">=", 100.0)}
ACCURACY = 1e-4            # trajectory accuracy the particle integrators must reach
REF_RTOL = 1e-8            # reference: simulate's global error is ~30 x rtol here (3e-6 -> 9.6e-5), so ~3e-7 << 1e-4


def sphere(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    X = rng.standard_normal((n, d))
    return X / np.linalg.norm(X, axis=1)[:, None]


# ----------------------------------------------------------------------------- particles: simulate vs naive Euler
def particle_problem(scale: float = 1.0, seed: int = 0):
    """(X0, Q, K, V, beta, t_end): N = 2000 uniform points on S^2, B = Q^T K = diag(1, 2, 3), V = diag(1.5, 1, 2)."""
    N = size(2000, scale, 60)
    X0 = sphere(np.random.default_rng(seed), N, 3)
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
    t_ref, ref = timed(lambda: simulate(X0, Q, K, V, beta, times, rtol=REF_RTOL, atol=REF_RTOL * 1e-2))

    def project(rtol: float) -> tuple[float, float]:
        t, Y = timed(lambda: simulate(X0, Q, K, V, beta, times, rtol=rtol, atol=rtol * 1e-2))
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
        t, Y = timed(lambda: euler_naive(X0, B, V, beta, t_end, n, n_out))
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
    N, beta = size(10_000, scale, 200), 1e4
    X = sphere(np.random.default_rng(seed), N, 2)
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
    N, d, beta = size(2000, scale, 100), 3, 100.0
    rng = np.random.default_rng(seed)
    X = sphere(rng, N, d)
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
    """Time of ``attnverify.numerics.meanfield.wasserstein.w2`` (assignment problem) between two N-point clouds in R^3, and the least-squares
    exponent p of time ~ N^p over N = 500, 1000, 2000, 5000 (scaled)."""
    rng = np.random.default_rng(seed)
    sizes = sorted({size(n, scale, 20 * (i + 1)) for i, n in enumerate((500, 1000, 2000, 5000))})
    secs = []
    for n in sizes:
        X, Y = rng.standard_normal((n, 3)), rng.standard_normal((n, 3))
        secs.append(timed(lambda: w2(X, Y))[0])
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
    started on an idle machine (``settled``). The ratio
    depends on NumPy's own exp (``numpy_exp_elements_per_s`` of :func:`bench_dense_throughput`): a SIMD exp in
    NumPy, as on AVX-512 machines, narrows the gap to a fused kernel."""
    N, d, beta = size(4096, scale, 128), 3, 100.0
    X = sphere(np.random.default_rng(seed), N, d)
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
    N = size(5000, scale, 100)
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, 2)) + [0.3, 0.0]
    u = np.array([np.cos(0.4), np.sin(0.4)])
    n_plus = int(np.sum(X @ u > 0.2))
    Y = np.vstack([np.tile(u, (n_plus, 1)), np.tile(-u, (N - n_plus, 1))])
    t_assign, exact = timed(lambda: w2_assignment(X, Y))
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
    sizes = sorted({size(n, scale, 100 * (i + 1)) for i, n in enumerate((1_000, 3_000, 10_000, 30_000, 100_000))})
    rng = np.random.default_rng(seed)
    secs, fractions = [], []
    for n in sizes:
        X = sphere(rng, n, 2)
        secs.append(median_time(lambda: attention_field_truncated(X, B, V, beta), repeats))
        fractions.append(pair_count(X, B, beta) / n**2)
    p = float(np.polyfit(np.log(sizes), np.log(secs), 1)[0]) if len(sizes) > 1 else math.nan
    return {"beta": beta, "d": 2, "sizes": sizes, "seconds": secs, "pair_fraction": fractions,
            "truncated_cost_exponent": p}




SECTIONS = (("particles", bench_particles), ("truncated", bench_truncated), ("dense", bench_dense_throughput),
            ("w2", bench_w2), ("fused", bench_fused), ("w2_two_atoms", bench_w2_two_atoms),
            ("truncated_scaling", bench_truncated_scaling))


def run(scale: float = 1.0, progress: Callable[[str], None] | None = None, budget_s: float | None = None) -> dict:
    """Every benchmark at ``scale``: ``{"sections", "headline", "targets", "details"}``. ``budget_s`` (default 75 s x
    scale) bounds the time spent running the naive Euler baseline."""
    sections: dict = {}
    for name, fn in SECTIONS:
        if progress:
            progress(name)
        kwargs = {"naive_budget_s": 75.0 * scale if budget_s is None else budget_s} if name == "particles" else {}
        t, section = timed(lambda: fn(scale, **kwargs))
        section["wall_s"] = t
        sections[name] = section
    p, tr, dn = sections["particles"], sections["truncated"], sections["dense"]
    w, fu, wa, ts = sections["w2"], sections["fused"], sections["w2_two_atoms"], sections["truncated_scaling"]
    headline = {"particles_speedup_vs_naive": p["particles_speedup_vs_naive"],
                "truncated_kernel_speedup": tr["truncated_kernel_speedup"],
                "truncated_kernel_max_error": tr["truncated_kernel_max_error"],
                "dense_kernel_fraction_of_peak": dn["dense_kernel_fraction_of_peak"],
                "w2_exponent": w["w2_exponent"],
                "fused_kernel_speedup_vs_numpy": fu["fused_kernel_speedup_vs_numpy"],
                "w2_speedup_vs_assignment": wa["w2_speedup_vs_assignment"],
                "truncated_cost_exponent": ts["truncated_cost_exponent"]}
    details = {
        "particles_speedup_vs_naive": f"N={p['N']}: simulate rtol={p['project_rtol']:.3g} {p['project_s']:.2f}s vs "
                                      f"Euler {p['naive_steps']} steps {p['naive_s']:.1f}s"
                                      f"{' (extrapolated)' if p['naive_extrapolated'] else ''}",
        "truncated_kernel_speedup": f"N={tr['N']} beta=1e4: dense {tr['dense_s']:.3f}s, truncated "
                                    f"{tr['truncated_s']:.4f}s, pairs {tr['pair_fraction']:.2%}",
        "truncated_kernel_max_error": f"tol={tr['tol']:g}, proven bound {tr['error_bound']:.1e} + rounding",
        "dense_kernel_fraction_of_peak": f"N={dn['N']}: {dn['pairs_per_s']:.3g} pairs/s vs exp+GEMM floor "
                                         f"{dn['floor_pairs_per_s']:.3g}",
        "w2_exponent": ", ".join(f"N={n}: {s:.2f}s" for n, s in zip(w["sizes"], w["seconds"])),
        "fused_kernel_speedup_vs_numpy": f"N={fu['N']} d=3 beta=100: NumPy {fu['numpy_s']:.3f}s, fused "
                                         f"{fu['fused_s']:.4f}s ({fu['fused_pairs_per_s']:.3g} pairs/s, "
                                         f"{fu['threads']} threads), rel. diff {fu['max_relative_difference']:.1e}",
        "w2_speedup_vs_assignment": f"N={wa['N']} two atoms: assignment {wa['assignment_s']:.2f}s, threshold "
                                    f"{wa['two_atoms_s'] * 1e3:.2f}ms, rel. diff {wa['relative_difference']:.1e}",
        "truncated_cost_exponent": "beta=1e4: " + ", ".join(f"N={n}: {s:.3f}s ({f:.2%} pairs)" for n, s, f in
                                                            zip(ts["sizes"], ts["seconds"], ts["pair_fraction"])),
    }
    # a speed-up only counts when the two computations agree
    valid = {"w2_speedup_vs_assignment": bool(wa["equal_to_1e-10"])}
    return {"sections": sections, "headline": headline, "targets": TARGETS, "details": details, "valid": valid}
