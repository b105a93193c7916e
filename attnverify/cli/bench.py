"""``attnverify bench [--json PATH] [--scale S] [--budget SECONDS] [--paper-profile] [--quiet]``.

Runs the performance benchmarks (``attnverify.bench.run_all``), prints a table and writes JSON.

Wiring (in ``attnverify.cli.main``): ``bench_cli.add_parser(sub)`` in ``build_parser`` and ``"bench": lambda:
bench_cli.cmd_bench(args)`` in the handler table. Exit code 0 when the benchmarks ran (missed targets are
marked MISS in the table and false under ``targets_met`` in the JSON, not an error), 2 on bad input.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from attnverify.checks.params import InputError


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Add the ``bench`` subcommand to an argparse subparsers object."""
    bench = subparsers.add_parser("bench", help="measure performance ratios (a few minutes)")
    bench.add_argument("--json", dest="json_path", metavar="PATH", help="write the results as JSON")
    bench.add_argument("--scale", default="1", help="problem-size factor in (0, 1] (default 1: the paper sizes)")
    bench.add_argument("--budget", dest="budget", default=None, metavar="SECONDS",
                       help="time a benchmark may spend running a slow reference implementation before it "
                       "extrapolates (default: each paper's own, e.g. 75 x scale; a large value runs it in full)")
    bench.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    bench.add_argument("--paper-profile", dest="paper_profile", action="store_true",
                       help="also run the whole paper profile and report the seconds of each check (long)")
    return bench


def _scale(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"--scale: expected a number in (0, 1], got {text!r}") from None
    if not (math.isfinite(value) and 0 < value <= 1):
        raise InputError(f"--scale: expected a number in (0, 1], got {text!r}")
    return value


def _seconds(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"--budget: expected a number of seconds > 0, got {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise InputError(f"--budget: expected a number of seconds > 0, got {text!r}")
    return value


def _plain(obj):
    """JSON-safe copy: NumPy scalars to Python numbers, non-finite floats to None."""
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if hasattr(obj, "item") and not isinstance(obj, (str, bytes)):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def cmd_bench(args: argparse.Namespace) -> int:
    """Run ``attnverify.bench.run_all``; print the table; write JSON to ``args.json_path`` if given."""
    scale = _scale(args.scale)
    budget = _seconds(args.budget)
    if args.json_path and not Path(args.json_path).parent.exists():
        raise InputError(f"--json: directory {str(Path(args.json_path).parent)!r} does not exist")
    from attnverify.bench import format_table, run_all

    def progress(name: str) -> None:
        print(f"bench: {name} ...", file=sys.stderr, flush=True)

    result = run_all(scale, progress=None if args.quiet else progress, budget_s=budget,
                     paper_profile=getattr(args, "paper_profile", False))
    print(format_table(result))
    if args.json_path:
        Path(args.json_path).write_text(json.dumps(_plain(result), indent=2) + "\n")
        print(f"wrote {args.json_path}")
    return 0
