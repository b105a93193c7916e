"""Paper A's benchmark (``attnverify bench``): one batched SGA step over the time of its Gaussian draw."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from attnverify.checks.timing import median_time, size, timed
from attnverify.numerics.signal.sga import projected_sga
from attnverify.numerics.signal.model import SignalModel

TARGETS = {"sga_step_over_rng": ("<=", 1.5)}


def bench_sga(scale: float = 1.0, repeats: int = 7, seed: int = 0) -> dict:
    """Per-step time of ``projected_sga`` (sample + gradient + update) over the time of its Gaussian draw.

    One step draws rng.standard_normal((30, L, d)); the ratio is the median over interleaved repeats of per-step SGA
    time / that draw, with the same generator and dtype. Also times the RNG variants (float32, out=, SFC64).
    """
    L, d, runs = size(10500, scale, 60), 20, 30
    model = SignalModel(theta=0.25, beta=1.0, sigma=1.0, R=max(1, L // 21), L=L, d=d)
    rho0 = np.zeros(runs)
    n_steps = 4
    out: dict = {"L": L, "d": d, "runs": runs}
    for dtype in (np.float64, np.float32):
        rng = np.random.default_rng(seed)
        step = lambda: projected_sga(model, rho0, n_steps, 1.0, 10.0, rng, dtype=dtype)  # noqa: E731
        draw = lambda: rng.standard_normal((runs, L, d), dtype=dtype)                      # noqa: E731
        step(), draw()                                                  # warm-up
        pairs = [(timed(step)[0] / (n_steps + 1), timed(draw)[0]) for _ in range(repeats)]   # interleaved
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




def run(scale: float = 1.0, progress: Callable[[str], None] | None = None, budget_s: float | None = None) -> dict:
    """The benchmark at ``scale``: ``{"sections", "headline", "targets", "details"}``."""
    if progress:
        progress("sga")
    t, sga = timed(lambda: bench_sga(scale))
    sga["wall_s"] = t
    return {"sections": {"sga": sga}, "headline": {"sga_step_over_rng": sga["sga_step_over_rng"]},
            "targets": TARGETS,
            "details": {"sga_step_over_rng": f"L={sga['L']} d={sga['d']} runs=30 float64; float32 "
                                             f"{sga['float32']['ratio']:.3f}"}}
