"""False-alarm sweep: run the quick audit under seeds 0..N-1 and report each check's pass rate.

Every check's tolerance is a statistical test at a stated family-wise false-alarm rate (or an exact /
refinement criterion), so on correct code a failure under some seed is a false alarm. With k failures
in n seeds the false-alarm rate of a check has the exact (Clopper-Pearson) one-sided 95% upper bound
``1 - 0.05**(1/n)`` when k = 0 (0.139 for n = 20), and the beta quantile in general; the sweep reports it.

Usage::

    python -m attnverify.selftest.seed_sweep [--seeds N] [--first S] [--checks ID ...] [--json PATH] [--md PATH]

Results are written after every seed, so an interrupted sweep still leaves a partial table.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import Callable

from scipy.stats import beta as beta_dist


def upper_bound(failures: int, n: int, confidence: float = 0.95) -> float:
    """One-sided Clopper-Pearson upper confidence bound on a failure probability from k failures in n trials."""
    if n <= 0:
        raise ValueError(f"need at least one trial, got n = {n}")
    if not 0 <= failures <= n:
        raise ValueError(f"failures must lie in [0, n], got {failures} of {n}")
    if failures == n:
        return 1.0
    return float(beta_dist.ppf(confidence, failures + 1, n - failures))


def _number(x) -> float | None:
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def summarise(per_seed: dict[int, list[dict]]) -> dict:
    """Pass rate, failures and the false-alarm upper bound per check, from {seed: [row, ...]}."""
    table: dict[str, dict] = {}
    for seed, rows in sorted(per_seed.items()):
        for row in rows:
            entry = table.setdefault(row["id"], {"runs": 0, "passes": 0, "non_passing_seeds": [], "seconds": 0.0})
            entry["runs"] += 1
            entry["seconds"] += row["seconds"]
            if row["verdict"] == "pass":
                entry["passes"] += 1
            else:
                entry["non_passing_seeds"].append({"seed": seed, "verdict": row["verdict"],
                                                   "observed": row["observed"], "threshold": row["threshold"],
                                                   "error": row["error"]})
    for entry in table.values():
        n, k = entry["runs"], entry["runs"] - entry["passes"]
        entry["pass_rate"] = entry["passes"] / n
        entry["false_alarm_rate_upper_95"] = upper_bound(k, n)
        entry["mean_seconds"] = entry["seconds"] / n
    return table


def sweep(seeds: list[int], ids: list[str] | None = None, *, on_seed: Callable[[int, list[dict]], None] | None = None
          ) -> dict[int, list[dict]]:
    """Run ``checks.run(ids, profile="quick", seed=s)`` serially for each seed; rows of (id, verdict, observed,
    threshold, error, seconds) per seed. ``on_seed(seed, rows)`` is called after each seed."""
    from attnverify.checks.runner import run

    out: dict[int, list[dict]] = {}
    for s in seeds:
        report = run(ids, profile="quick", seed=s)
        rows = [{"id": r.id, "verdict": r.verdict, "seconds": r.seconds, "error": r.error,
                 "observed": _number(r.evidence.observed) if r.evidence else None,
                 "threshold": _number(r.evidence.threshold) if r.evidence else None} for r in report.results]
        out[s] = rows
        if on_seed is not None:
            on_seed(s, rows)
    return out


def markdown(table: dict, n_seeds: int) -> str:
    """The pass-rate table as Markdown."""
    lines = [f"# False-alarm sweep: quick profile, {n_seeds} seed(s)", "",
             "| check | passes | pass rate | 95% upper bound on the false-alarm rate | non-passing seeds | mean s |",
             "|---|---|---|---|---|---|"]
    for cid, e in table.items():
        bad = ", ".join(f"{x['seed']} ({x['verdict']})" for x in e["non_passing_seeds"]) or "none"
        lines.append(f"| {cid} | {e['passes']}/{e['runs']} | {e['pass_rate']:.2f} | "
                     f"{e['false_alarm_rate_upper_95']:.3f} | {bad} | {e['mean_seconds']:.1f} |")
    return "\n".join(lines) + "\n"


def result_dict(per_seed: dict[int, list[dict]], wall: float) -> dict:
    table = summarise(per_seed)
    return {"profile": "quick", "seeds": sorted(per_seed), "n_seeds": len(per_seed), "wall_seconds": wall,
            "all_pass": all(e["passes"] == e["runs"] for e in table.values()), "checks": table,
            "per_seed": {str(s): rows for s, rows in sorted(per_seed.items())}}


def _count(text: str, name: str, minimum: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"{name}: expected an integer, got {text!r}") from None
    if value < minimum:
        raise ValueError(f"{name}: expected an integer >= {minimum}, got {value}")
    return value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m attnverify.selftest.seed_sweep", description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="20", help="number of seeds (default 20)")
    parser.add_argument("--first", default="0", help="first seed (default 0)")
    parser.add_argument("--checks", nargs="*", default=None, help="check ids or families (default: all)")
    parser.add_argument("--json", dest="json_path", default="seed_sweep.json", help="JSON output path")
    parser.add_argument("--md", dest="md_path", default="seed_sweep.md", help="Markdown output path")
    args = parser.parse_args(argv)
    try:
        n, first = _count(args.seeds, "--seeds", 1), _count(args.first, "--first", 0)
    except ValueError as exc:
        print(f"seed_sweep: error: {exc}", file=sys.stderr)
        return 2
    start = time.perf_counter()
    done: dict[int, list[dict]] = {}

    def save(seed: int, rows: list[dict]) -> None:
        done[seed] = rows
        res = result_dict(done, time.perf_counter() - start)
        Path(args.json_path).write_text(json.dumps(res, indent=2) + "\n")
        Path(args.md_path).write_text(markdown(res["checks"], len(done)))
        bad = [r["id"] for r in rows if r["verdict"] != "pass"]
        print(f"seed {seed}: {len(rows) - len(bad)}/{len(rows)} pass {bad if bad else ''}", file=sys.stderr, flush=True)

    sweep(list(range(first, first + n)), args.checks, on_seed=save)
    print(markdown(summarise(done), len(done)))
    return 0 if result_dict(done, 0.0)["all_pass"] else 1


if __name__ == "__main__":
    sys.exit(main())
