"""``attnverify bench``: performance ratios measured side by side in one process, so that machine noise cancels.

Each registered paper contributes its own benchmarks (``Paper.bench``: the module of its ``run``): a dict with its ``sections``
(details), ``headline`` figures (key -> value), ``targets`` (key -> (comparison, bound)), ``details`` (key -> one
line) and, optionally, ``valid`` (key -> whether the compared computations agreed: a speed-up only counts when
they do). The result holds every paper's sections under the paper's model name, every headline key at the top
level, and ``targets_met``. ``scale`` (0 < scale <= 1) shrinks every problem size for a quick smoke run; the
targets refer to scale = 1.
"""
from __future__ import annotations

import os
import platform
from collections.abc import Callable

import numpy as np
import scipy

from attnverify.checks.timing import timed


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


def _meets(value: float, op: str, bound: float) -> bool:
    return bool(value <= bound) if op == "<=" else bool(value >= bound)


def run_all(scale: float = 1.0, progress: Callable[[str], None] | None = None, budget_s: float | None = None,
            paper_profile: bool = False) -> dict:
    """Every registered paper's benchmarks at ``scale``; ``budget_s`` bounds the time a paper may spend running a
    slow reference implementation; ``paper_profile``: also run the whole paper profile and report
    ``paper_profile_seconds`` (long)."""
    from attnverify.checks.registry import papers

    if not (isinstance(scale, (int, float)) and not isinstance(scale, bool) and 0 < scale <= 1):
        raise ValueError(f"scale must be a number in (0, 1], got {scale!r}")
    result: dict = {"scale": float(scale), "machine": machine_info(), "targets": {}, "details": {},
                    "targets_met": {}}
    for paper in papers():
        if paper.bench is None:
            continue
        t, out = timed(lambda: paper.benchmarks(scale, progress, budget_s))
        result[paper.model] = {**out["sections"], "wall_s": t}
        result.update(out["headline"])
        result["details"].update(out.get("details", {}))
        result["targets"].update(out.get("targets", {}))
        for key, (op, bound) in out.get("targets", {}).items():
            result["targets_met"][key] = _meets(out["headline"][key], op, bound) and out.get("valid", {}).get(key, True)
    if paper_profile:
        from attnverify.selftest.paper_profile import run_paper_profile

        t, section = timed(lambda: run_paper_profile(progress=progress))
        section["wall_s"] = t
        result["paper_profile"] = section
        result["paper_profile_seconds"] = {**section["seconds"], "total": section["total_s"]}
        result["details"]["paper_profile_seconds"] = ", ".join(f"{k}: {v:.0f}s" for k, v in section["seconds"].items())
    return result


def _value(x) -> str:
    return f"{x:.3g}" if abs(x) >= 1e-3 or x == 0 else f"{x:.2e}"


def format_table(result: dict) -> str:
    """The headline figures as a plain-text table."""
    keys = list(result["details"])
    if "paper_profile_seconds" in result:
        keys.remove("paper_profile_seconds")
    rows = [(k, _value(result[k]), result["details"][k]) for k in keys]
    if "paper_profile_seconds" in result:
        rows.append(("paper_profile_seconds", f"{result['paper_profile_seconds']['total']:.0f}",
                     result["details"]["paper_profile_seconds"]))
    width = max((len(r[0]) for r in rows), default=6)
    lines = [f"{'metric':<{width}}  {'value':>9}  {'target':<13}  details"]
    for key, value, detail in rows:
        target = ""
        if key in result["targets"]:
            op, bound = result["targets"][key]
            target = f"{op}{bound:g} " + ("ok" if result["targets_met"][key] else "MISS")
        lines.append(f"{key:<{width}}  {value:>9}  {target:<13}  {detail}")
    m = result["machine"]
    lines.append(f"machine: {m.get('cpus_available', m['cpu_count'])} CPUs, numpy {m['numpy']}, {m['blas']}")
    if result["scale"] < 1:
        lines.append(f"scale {result['scale']:g}: reduced sizes; the targets refer to scale 1")
    return "\n".join(lines)
