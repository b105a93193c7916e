"""The ``attnverify`` command line: list, run, derive, latex.

Exit codes: 0 every check passed, 1 a check failed or errored, 2 bad usage or bad input.
Every error is one line on stderr; there is never a traceback.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from attnverify import bench_cli, selftest_cli
from checks.framework import PROFILES, InputError, progress_printer


class UsageError(Exception):
    """Bad command-line usage (reported in one line, exit code 2)."""


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, no usage dump
        raise UsageError(message)


def parse_sets(items: list[str]) -> dict[str, str]:
    """``KEY=VALUE`` strings as a dict; the values stay text until each check's parameter parses them."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InputError(f"--set expects KEY=VALUE, got {item!r}")
        out[key.strip()] = value.strip()
    return out


def build_parser() -> Parser:
    parser = Parser(prog="attnverify", description="Symbolic-numeric verifier for softmax-attention theory.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    lister = sub.add_parser("list", help="the catalogue of checks")
    lister.add_argument("--params", action="store_true", help="also list each check's parameters and defaults")
    run = sub.add_parser("run", help="run checks and print the audit table")
    run.add_argument("ids", nargs="*", help="check ids or families (signal, meanfield); default: all")
    run.add_argument("--profile", default="quick", help="quick (default) or paper")
    run.add_argument("--seed", default="0", help="random seed (non-negative integer)")
    run.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                     help="override a model option or parameter (repeatable)")
    run.add_argument("--json", dest="json_path", metavar="PATH", help="write the JSON report")
    run.add_argument("--report", dest="report_dir", metavar="DIR", help="write report.json, report.md and plots")
    run.add_argument("--executor", default="local", help="where sweeps run: serial, local (process pool, "
                     "default) or dask")
    run.add_argument("--scheduler", default=None, metavar="ADDRESS", help="Dask scheduler address "
                     "(with --executor dask; default: a new LocalCluster)")
    run.add_argument("--jobs", default=None, help="workers for sweeps (default: all cores)")
    run.add_argument("--quiet", action="store_true", help="no progress display")
    run.add_argument("--cache-dir", dest="cache_dir", metavar="DIR", help="where finished sweep tasks are stored "
                     "and reused by a rerun (default: $ATTNVERIFY_CACHE_DIR or ~/.cache/attnverify/tasks)")
    run.add_argument("--no-cache", dest="no_cache", action="store_true", help="do not store or reuse task results")
    derive = sub.add_parser("derive", help="print a derivation step by step")
    derive.add_argument("model", help="signal or meanfield")
    derive.add_argument("--latex", action="store_true", help="print the results as LaTeX")
    latex = sub.add_parser("latex", help="write a standalone LaTeX document")
    latex.add_argument("-o", "--output", required=True, metavar="FILE.tex")
    latex.add_argument("--from-json", metavar="PATH", help="take the audit table from a JSON report "
                       "(default: run the quick audit)")
    latex.add_argument("--seed", default="0", help="seed of the audit run (without --from-json)")
    bench_cli.add_parser(sub)
    selftest_cli.add_parser(sub)
    return parser


def non_negative_int(name: str, text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise InputError(f"{name}: expected a non-negative integer, got {text!r}") from None
    if value < 0:
        raise InputError(f"{name}: expected a non-negative integer, got {value}")
    return value


def cmd_list(with_params: bool = False) -> int:
    from checks.registry import all_checks

    for c in all_checks():
        print(f"{c.id:<36} {c.source:<22} {c.claim}")
        if with_params:
            for prm in c.params:
                default = prm.default.tolist() if hasattr(prm.default, "tolist") else prm.default
                paper = f" (paper: {c.paper[prm.name]})" if prm.name in c.paper else ""
                print(f"    --set {prm.name}=...  default {default}{paper}: {prm.help}")
            print()
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from attnverify.executors import make_executor
    from attnverify.report import table, write_json, write_report
    from checks.runner import plan, run

    seed = non_negative_int("--seed", args.seed)
    overrides = parse_sets(args.sets)
    plan(args.ids, profile=args.profile, overrides=overrides)  # all input errors surface before any work
    jobs = non_negative_int("--jobs", args.jobs) if args.jobs is not None else None
    if jobs == 0:
        raise InputError("--jobs: needs at least one worker")
    for path in filter(None, [args.json_path]):
        if not Path(path).parent.exists():
            raise InputError(f"--json: directory {str(Path(path).parent)!r} does not exist")
    store = _task_store(args)
    progress = None
    if sys.stderr.isatty() and not args.quiet:
        progress = progress_printer(sys.stderr)
    try:
        with make_executor(args.executor, jobs=jobs, scheduler=args.scheduler) as executor:
            report = run(args.ids, profile=args.profile, seed=seed, overrides=overrides, executor=executor,
                         progress=progress, store=store)
    finally:
        if progress is not None:
            sys.stderr.write("\r" + " " * 80 + "\r")
    if store is not None and not args.quiet:
        print(store.summary(), file=sys.stderr)
    print(table(report))
    if args.json_path:
        write_json(report, args.json_path)
    if args.report_dir:
        out = write_report(report, args.report_dir)
        print(f"report written to {out / 'report.md'}")
    return 0 if report.ok else 1


def _task_store(args: argparse.Namespace):
    """The persistent task store of ``run`` (checks.store), or None with --no-cache."""
    from checks.store import TaskStore, default_dir

    if args.no_cache:
        if args.cache_dir:
            raise InputError("--cache-dir and --no-cache exclude each other")
        return None
    path = Path(args.cache_dir) if args.cache_dir else default_dir()
    try:
        return TaskStore(path)
    except OSError as exc:
        raise InputError(f"--cache-dir: cannot use {str(path)!r} ({exc.strerror or type(exc).__name__})") from None


def cmd_derive(args: argparse.Namespace) -> int:
    from attnverify.derive import render

    print(render(args.model, latex=args.latex))
    return 0


def cmd_latex(args: argparse.Namespace) -> int:
    from attnverify.latex import document

    if args.from_json:
        try:
            report = json.loads(Path(args.from_json).read_text())
            report["checks"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise InputError(f"--from-json: cannot read a report from {args.from_json!r} ({type(exc).__name__})")
    else:
        from attnverify.report import report_dict
        from checks.runner import run

        report = report_dict(run(seed=non_negative_int("--seed", args.seed)))
    if not Path(args.output).parent.exists():
        raise InputError(f"-o: directory {str(Path(args.output).parent)!r} does not exist")
    Path(args.output).write_text(document(report))
    print(f"wrote {args.output}")
    return 0


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        if getattr(args, "profile", "quick") not in PROFILES:
            raise InputError(f"unknown profile {args.profile!r} (choose from {', '.join(PROFILES)})")
        handler = {"list": lambda: cmd_list(args.params), "run": lambda: cmd_run(args),
                   "derive": lambda: cmd_derive(args), "latex": lambda: cmd_latex(args),
                   "bench": lambda: bench_cli.cmd_bench(args),
                   "selftest": lambda: selftest_cli.cmd_selftest(args)}[args.command]
        return handler()
    except (UsageError, InputError) as exc:
        print(f"attnverify: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("attnverify: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 -- never a traceback
        print(f"attnverify: internal error: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}",
              file=sys.stderr)
        return 1
