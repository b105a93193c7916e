"""Benchmark of the derivation cache: wall time of ``attnverify derive`` and ``latex --derivations-only``,
cold (an empty cache directory) and warm (median of three calls), each in a fresh process as a user runs it.

    python -m attnverify.derive_bench [--json PATH]

The target (issue 12): a warm ``derive`` or ``--derivations-only`` in at most 2 s.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

TARGET_WARM_S = 2.0


def commands() -> dict[str, list[str]]:
    """``derive`` for every section of every registered paper's derivations, and ``latex --derivations-only``."""
    from attnverify.checks.registry import papers

    out = {}
    for p in papers():
        for section in p.sections():
            argv = ["derive", p.model, *(f"--set={k}={v}" for k, v in section.options.items())]
            out[" ".join(argv)] = argv
    out["latex --derivations-only"] = ["latex", "--derivations-only", "--force", "-o", "{tmp}/formulas.tex"]
    return out


def _time(argv: list[str], env: dict) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "attnverify", *argv], env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def run() -> dict:
    """Cold and warm seconds per command, with a fresh cache directory."""
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "ATTNVERIFY_CACHE_DIR": tmp, "COLUMNS": "100"}
        env.pop("ATTNVERIFY_NO_CACHE", None)
        for name, argv in commands().items():
            argv = [a.replace("{tmp}", tmp) for a in argv]
            cold = _time(argv, env)
            warm = statistics.median(_time(argv, env) for _ in range(3))
            out[name] = {"cold_s": round(cold, 2), "warm_s": round(warm, 2), "target_warm_s": TARGET_WARM_S,
                         "ok": warm <= TARGET_WARM_S}
    return out


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m attnverify.derive_bench")
    parser.add_argument("--json", metavar="PATH")
    args = parser.parse_args()
    result = run()
    for name, r in result.items():
        print(f"{name:<34} cold {r['cold_s']:6.2f} s   warm {r['warm_s']:5.2f} s   "
              f"({'ok' if r['ok'] else 'over'} the {r['target_warm_s']} s target)")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(result, fh, indent=2)
    return 0 if all(r["ok"] for r in result.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
