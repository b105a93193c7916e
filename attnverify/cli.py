"""The ``attnverify`` command line: list, run, claims, derive, latex (and bench, selftest).

Exit codes: 0 every check passed, 1 a check failed or errored, 2 bad usage or bad input.
Every error is one line on stderr; there is never a traceback. Every output path is validated before any
work starts; a run that dies or is interrupted leaves the checks it finished in its JSON / report.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import sys
import textwrap
from pathlib import Path

from attnverify import __version__, bench_cli, selftest_cli
from attnverify.checks.framework import PROFILES, InputError


class UsageError(Exception):
    """Bad command-line usage (reported in one line, exit code 2)."""


class Interrupted(Exception):
    """Ctrl-C during a run: the one line to print (what was kept, how to resume); exit code 130."""


def _ignore_sigint():
    """Ignore SIGINT (main thread only); returns the previous handler, or None where signals cannot be set."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGINT, signal.SIG_IGN)


def interrupted_message(done: int, total: int, written: str | None, outputs: bool, store) -> str:
    """One line after Ctrl-C: how far the run got, where its partial report is, and how to resume. A rerun of the
    same command replaces its own partial report without --force and reads the finished sweep tasks back from the
    task store; with --no-cache nothing was kept. ``outputs``: the command had --json or --report."""
    if written:
        kept = f"partial report in {written}"
    else:
        kept = "none finished, nothing written" if outputs else "no --json or --report: nothing written"
    if store is None:
        how = "rerun the same command to start again (--no-cache: no sweep task was kept)"
    else:
        how = f"rerun the same command to resume (finished sweep tasks are reused from {store.root})"
    return f"interrupted after {done} of {total} checks ({kept}); {how}"


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


# ----------------------------------------------------------------------------------------------
# the parser
# ----------------------------------------------------------------------------------------------
def _add_force(p: argparse.ArgumentParser) -> None:
    p.add_argument("--force", action="store_true", help="overwrite existing output files")


def build_parser() -> Parser:
    parser = Parser(prog="attnverify", description="Symbolic-numeric verifier for softmax-attention theory.")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    sub = parser.add_subparsers(dest="command", parser_class=Parser)
    lister = sub.add_parser("list", help="the catalogue of checks (or the papers, or the quantities a claim may state)")
    lister.add_argument("ids", nargs="*", help="check ids or a paper's model name (default: all)")
    lister.add_argument("--params", action="store_true", help="also list each check's parameters and defaults")
    lister.add_argument("--models", action="store_true", help="list the registered papers: model name, claim "
                        "prefix, citation and the model options of 'derive --set'")
    lister.add_argument("--quantities", action="store_true", help="list the quantities a claim may state "
                        "(attnverify audit), with their symbols and options")
    run = sub.add_parser("run", help="run checks and print the audit table and the claims ledger")
    run.add_argument("ids", nargs="*", help="check ids or a paper's model name (attnverify list); default: all")
    _add_run_options(run)
    run.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                     help="override a model option or parameter (repeatable)")
    run.add_argument("--json", dest="json_path", metavar="PATH", help="write the JSON report")
    run.add_argument("--report", dest="report_dir", metavar="DIR", help="write report.json, report.md and plots")
    _add_force(run)
    claims = sub.add_parser("claims", help="run the checks that feed the papers' claims; print the claims ledger")
    _add_run_options(claims)
    claims.add_argument("--json", dest="json_path", metavar="PATH", help="write the JSON report")
    claims.add_argument("--markdown", action="store_true", help="print the ledger and the findings as Markdown "
                        "(for the README's findings section), stating the profile and seed")
    _add_force(claims)
    audit = sub.add_parser("audit", help="judge stated claims of your own (a TOML file in the format of the papers' "
                           "stated-claims files); print their ledger")
    audit.add_argument("file", metavar="FILE.toml", help="the stated claims ([[claim]] tables)")
    _add_run_options(audit)
    audit.add_argument("--json", dest="json_path", metavar="PATH", help="write the JSON report (its 'claims' list "
                       "has one row per claim: id, verdict, condition, reason, stated form)")
    audit.add_argument("--markdown", action="store_true", help="print the ledger as Markdown")
    _add_force(audit)
    derive = sub.add_parser("derive", help="print a derivation step by step")
    derive.add_argument("model", help="a paper's model name (attnverify list --models)")
    derive.add_argument("--latex", action="store_true", help="print the results as LaTeX")
    derive.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                        help="a model option of the paper (attnverify list --models): the derivation at that value")
    derive.add_argument("--width", default=None, help="columns of the output (default: the terminal's)")
    latex = sub.add_parser("latex", help="write a LaTeX document: the derivations (and the audit)")
    latex.add_argument("-o", "--output", required=True, metavar="FILE.tex",
                       help="the LaTeX file to write (its figures go to FILE_figures/ beside it)")
    latex.add_argument("--from-json", metavar="PATH", help="take the audit from a JSON report (figures from the "
                       "PNGs beside it, as written by run --report)")
    latex.add_argument("--derivations-only", action="store_true", help="the formulas only; no audit is run")
    latex.add_argument("--fragment", action="store_true", help="no preamble: a body to \\input into a paper "
                       "(needs amsmath, graphicx; T1/UTF-8 in the paper's preamble)")
    latex.add_argument("--seed", default="0", help="seed of the audit run (without --from-json)")
    latex.add_argument("--quiet", action="store_true", help="no progress display")
    _add_force(latex)
    bench_cli.add_parser(sub)
    selftest_cli.add_parser(sub)
    for name in ("bench", "selftest"):
        if name in sub.choices and not any("--force" in a.option_strings for a in sub.choices[name]._actions):
            _add_force(sub.choices[name])
    return parser


def _add_run_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--profile", default="quick", help="quick (default) or paper")
    p.add_argument("--seed", default="0", help="random seed (non-negative integer)")
    p.add_argument("--executor", default="local", help="where sweeps run: serial, local (process pool, "
                   "default) or dask")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS", help="Dask scheduler address "
                   "(with --executor dask; default: a new LocalCluster)")
    p.add_argument("--jobs", default=None, help="workers for sweeps (default: all cores)")
    p.add_argument("--quiet", action="store_true", help="no progress display, no override summary")
    p.add_argument("--cache-dir", dest="cache_dir", metavar="DIR", help="where finished sweep tasks are stored "
                   "and reused by a rerun (default: $ATTNVERIFY_CACHE_DIR or ~/.cache/attnverify/tasks)")
    p.add_argument("--no-cache", dest="no_cache", action="store_true", help="do not store or reuse task results")


def non_negative_int(name: str, text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise InputError(f"{name}: expected a non-negative integer, got {text!r}") from None
    if value < 0:
        raise InputError(f"{name}: expected a non-negative integer, got {value}")
    return value


# ----------------------------------------------------------------------------------------------
# output paths: validated before anything runs
# ----------------------------------------------------------------------------------------------
def validate_outputs(args: argparse.Namespace) -> None:
    """Every output path of the command: a file where a file is due, a directory for --report, creatable and
    writable, not an existing file unless --force. One line, exit 2, before any work."""
    from attnverify.outputs import check_dir, check_file

    force = bool(getattr(args, "force", False))
    for attr, flag in (("json_path", "--json"), ("output", "-o")):
        path = getattr(args, attr, None)
        if path is not None:
            check_file(path, flag, force=force)
    if getattr(args, "report_dir", None) is not None:
        check_dir(args.report_dir, "--report", force=force)
    json_path, report_dir = getattr(args, "json_path", None), getattr(args, "report_dir", None)
    if json_path and report_dir and Path(json_path).resolve() == (Path(report_dir) / "report.json").resolve():
        raise InputError("--json: the same file as --report's report.json")


# ----------------------------------------------------------------------------------------------
# list
# ----------------------------------------------------------------------------------------------
def cmd_list(args: argparse.Namespace, width: int | None = None) -> int:
    from attnverify.report import _set_syntax
    from attnverify.checks.registry import papers
    from attnverify.checks.runner import select

    width = width or max(60, shutil.get_terminal_size((100, 24)).columns)
    if args.models or args.quantities:
        if args.ids:
            raise InputError("list --models / --quantities take no check ids")
        for p in papers():
            if args.models:
                print(f"{p.model}  (Paper {p.key}: checks {p.model}.*, claims {p.key}.*)")
                print(textwrap.fill(f"{p.title}. {p.citation}", width, initial_indent="    ", subsequent_indent="    "))
                for prm in p.params:
                    print(textwrap.fill(f"--set {prm.name}={_set_syntax(prm.default)}: {prm.help}", width,
                                        initial_indent="      ", subsequent_indent="          "))
                print()
                continue
            for q in p.quantities():
                print(f"{p.model}.{q.name}  ({', '.join(q.symbols)})")
                print(textwrap.fill(q.description, width, initial_indent="    ", subsequent_indent="    "))
                for prm in q.options:
                    print(textwrap.fill(f"option {prm.name} = {_set_syntax(prm.default)}: {prm.help}", width,
                                        initial_indent="      ", subsequent_indent="          "))
                print()
        return 0
    for c in select(args.ids or None):
        print(f"{c.id}  ({c.source})")
        print(textwrap.fill(c.claim, width, initial_indent="    ", subsequent_indent="    "))
        if args.params:
            for prm in c.params:
                paper = f" (paper: {_set_syntax(c.paper[prm.name])})" if prm.name in c.paper else ""
                print(textwrap.fill(f"--set {prm.name}={_set_syntax(prm.default)}{paper}: {prm.help}", width,
                                    initial_indent="      ", subsequent_indent="          "))
        print()
    return 0


# ----------------------------------------------------------------------------------------------
# run: overrides explained, then the checks
# ----------------------------------------------------------------------------------------------
def _model_defaults(checks: list) -> dict[str, object]:
    """For each parameter name, the default most checks share (a check's own default differs from it)."""
    from collections import Counter

    from attnverify.report import _set_syntax
    from attnverify.checks.registry import all_checks

    votes: dict[str, Counter] = {}
    for c in all_checks():
        for prm in c.params:
            votes.setdefault(prm.name, Counter())[_set_syntax(prm.default)] += 1
    return {name: counter.most_common(1)[0][0] for name, counter in votes.items()}


def plan_explained(ids: list[str] | None, profile: str, overrides: dict[str, str]) -> tuple[list, list[str]]:
    """The run's plan (as :func:`attnverify.checks.runner.plan`) and lines saying which checks took each ``--set`` key and
    which ignored it, and why. A key no selected check takes is an error; when a check rejects its parameters
    and some of them are that check's own defaults (not set by the user), the message names them."""
    import re

    from attnverify.report import _set_syntax
    from attnverify.checks.runner import select

    if profile not in PROFILES:
        raise InputError(f"unknown profile {profile!r} (choose from {', '.join(PROFILES)})")
    chosen = select(ids)
    notes = []
    for key in overrides:
        took = [c.id for c in chosen if c.param(key) is not None]
        if not took:
            from attnverify.checks.framework import did_you_mean

            hint = did_you_mean(key, sorted({p.name for c in chosen for p in c.params})) or \
                " (see 'attnverify list --params')"
            raise InputError(f"unknown parameter {key!r} for the selected checks: none of them takes it{hint}")
        ignored = []
        for c in chosen:
            if c.param(key) is None:
                alt = [p.name for p in c.params if p.name.rstrip("s") == key.rstrip("s") and p.name != key]
                ignored.append(f"{c.id} ({'takes ' + ', '.join(alt) + ' instead' if alt else 'no such parameter'})")
        line = f"--set {key}: taken by {', '.join(took)}"
        notes.append(line + (f"; ignored by {', '.join(ignored)}" if ignored else ""))
    shared = _model_defaults(chosen)
    from attnverify.checks.registry import all_checks

    counts: dict[str, int] = {}
    for c in all_checks():
        for prm in c.params:
            counts[prm.name] = counts.get(prm.name, 0) + 1
    plans = []
    for c in chosen:
        mine = {k: v for k, v in overrides.items() if c.param(k) is not None}
        try:
            plans.append((c, c.resolve(profile, mine)))
        except InputError as exc:
            own = [p for p in c.params if p.name not in mine and re.search(rf"\b{re.escape(p.name)}\b", str(exc))
                   and (_set_syntax(p.default) != shared.get(p.name) or counts.get(p.name, 0) == 1)]
            extra = ""
            if own and mine:
                extra = (" -- with this check's own default" + ("s " if len(own) > 1 else " ")
                         + ", ".join(f"{p.name}={_set_syntax(p.default)}" for p in own)
                         + " (not set by you; override with --set, or leave this check out)")
            raise InputError(f"{c.id}: {exc}{extra}") from None
    return plans, notes


def _executor_args(args: argparse.Namespace):
    jobs = non_negative_int("--jobs", args.jobs) if args.jobs is not None else None
    if jobs == 0:
        raise InputError("--jobs: needs at least one worker")
    return jobs


def run_with_outputs(args: argparse.Namespace, ids: list[str] | None, overrides: dict[str, str],
                     json_path: str | None, report_dir: str | None):
    """Run the checks, writing ``json_path`` / ``report_dir``'s report.json after each check (``complete``:
    false) and the full outputs at the end; an interruption or a crash writes what finished, then re-raises."""
    from attnverify.api import run
    from attnverify.executors import make_executor
    from attnverify.progress import Progress
    from attnverify.report import write_json, write_report
    from attnverify.checks.claims import evaluate_claims

    seed = non_negative_int("--seed", args.seed)
    plans, notes = plan_explained(ids, args.profile, overrides)
    jobs = _executor_args(args)
    store = _task_store(args)
    if notes and not args.quiet:
        for line in notes:
            print(textwrap.fill(line, max(60, shutil.get_terminal_size((100, 24)).columns),
                                subsequent_indent="    "), file=sys.stderr)
    progress = Progress([c.id for c, _ in plans]) if sys.stderr.isatty() and not args.quiet else None
    partial: list = []

    def save_partial(report, note: str | None = None) -> None:
        if json_path:
            write_json(report, json_path, complete=False, note=note)
        if report_dir:
            if note is None:
                write_json(report, Path(report_dir) / "report.json", complete=False)
            else:
                write_report(report, report_dir, complete=False, note=note)

    def on_result(report) -> None:
        partial[:] = [report]
        if progress is not None:
            progress.done(report.results[-1].id)
        save_partial(report)

    try:
        with make_executor(args.executor, jobs=jobs, scheduler=args.scheduler) as executor:
            report = run(ids, profile=args.profile, seed=seed, overrides=overrides, executor=executor,
                         progress=progress, on_result=on_result, store=store, plans=plans)
    except BaseException as exc:
        interrupted = isinstance(exc, KeyboardInterrupt)
        previous = _ignore_sigint() if interrupted else None      # a second Ctrl-C cannot cut the write short
        try:
            if progress is not None:
                progress.clear()
            written = None
            if partial and (json_path or report_dir):
                rep = partial[0]
                rep.claims = evaluate_claims(rep.results, profile=rep.profile, seed=rep.seed)
                why = "interrupted" if interrupted else f"stopped by {type(exc).__name__}"
                save_partial(rep, note=f"{why} after {len(rep.results)} of {len(plans)} checks")
                written = json_path or str(Path(report_dir) / "report.json")
        finally:
            if previous is not None:
                signal.signal(signal.SIGINT, previous)
        done = len(partial[0].results) if partial else 0
        if interrupted:
            outputs = bool(json_path or report_dir)
            raise Interrupted(interrupted_message(done, len(plans), written, outputs, store)) from None
        if written:
            print(f"attnverify: partial results ({done} of {len(plans)} checks) written to {written}",
                  file=sys.stderr)
        raise
    if progress is not None:
        progress.clear()
    if store is not None and not args.quiet:
        print(store.summary(), file=sys.stderr)
    if json_path:
        write_json(report, json_path)
    if report_dir:
        write_report(report, report_dir)
    return report


def cmd_run(args: argparse.Namespace) -> int:
    from attnverify.report import claims_table, table

    report = run_with_outputs(args, args.ids, parse_sets(args.sets), args.json_path, args.report_dir)
    print(table(report))
    print()
    print(claims_table(report))
    if args.report_dir:
        print(f"report written to {Path(args.report_dir) / 'report.md'}")
    return 0 if report.ok else 1  # claims are findings about the papers: they never set the exit code


def cmd_claims(args: argparse.Namespace) -> int:
    """Run the checks that feed at least one registered claim; print the ledger alone."""
    from attnverify.report import claims_table
    from attnverify.checks.claims import all_claims
    from attnverify.checks.registry import all_checks

    fed = {cid for c in all_claims() for cid in c.checks}
    ids = [c.id for c in all_checks() if c.id in fed]
    if not ids:
        print("no claims are registered")
        return 0
    report = run_with_outputs(args, ids, {}, args.json_path, None)
    if args.markdown:
        from attnverify.report import to_markdown

        md = to_markdown(report, formulas=False)
        sections = md.split("\n## ")
        keep = [sec for sec in sections[1:] if sec.split("\n", 1)[0] in ("Claims", "Findings")]
        print(f"From `attnverify claims --profile {report.profile} --seed {report.seed}` "
              f"(version {report.version}).\n\n### " + "\n### ".join(keep).rstrip())
        return 0 if report.ok else 1
    print(claims_table(report))
    broken = [r.id for r in report.results if r.verdict != "pass"]
    if broken:
        print(f"\nchecks that did not pass (their claims are inconclusive): {', '.join(broken)}")
    return 0 if report.ok else 1


def cmd_audit(args: argparse.Namespace) -> int:
    """Judge the claims of a user's file; the checks its restatements of built-in claims read run first."""
    from attnverify.audit import checks_of, prepare
    from attnverify.checks.audit import evaluate
    from attnverify.report import claims_table, write_json

    resolved = prepare(args.file)               # every problem of the file: exit 2 before any work
    ids = checks_of(resolved)
    report = run_with_outputs(args, ids, {}, None, None) if ids else None
    if report is None:
        from attnverify.api import Report

        report = Report(profile=args.profile, seed=non_negative_int("--seed", args.seed), options={})
    report.claims = evaluate(resolved, {r.id: r for r in report.results}, report.seed)
    report.ledger = False                       # a user's claims, not the papers' ledger
    if args.json_path:
        write_json(report, args.json_path)
    if args.markdown:
        from attnverify.report import claims_markdown

        print(claims_markdown(report, ledger=False))
    else:
        print(claims_table(report, ledger=False))
    return 0 if report.ok else 1


def _task_store(args: argparse.Namespace):
    """The persistent task store of the commands that run checks (attnverify.checks.store), or None with --no-cache.
    A --cache-dir or $ATTNVERIFY_CACHE_DIR that cannot be used is bad input (exit 2, before any work); the default
    location that cannot be used means no store, with one warning."""
    from attnverify import cache
    from attnverify.checks.store import TaskStore, default_dir

    no_cache, cache_dir = getattr(args, "no_cache", False), getattr(args, "cache_dir", None)   # latex has neither
    if no_cache:
        if cache_dir:
            raise InputError("--cache-dir and --no-cache exclude each other")
        return None
    path = Path(cache_dir) if cache_dir else default_dir()
    try:
        return TaskStore(path)
    except OSError as exc:
        why = exc.strerror or type(exc).__name__
        if cache_dir:
            raise InputError(f"--cache-dir: cannot use {str(path)!r} ({why})") from None
        if os.environ.get(cache.ENV_DIR):
            raise InputError(f"{cache.ENV_DIR}: cannot use {str(path)!r} ({why}); point it at a writable "
                             "directory, or pass --no-cache") from None
        cache.warn_once(f"no task store: cannot use {str(path)!r} ({why}); finished tasks are not kept "
                        "(set --cache-dir or $ATTNVERIFY_CACHE_DIR)")
        return None


def validate_cache_env(args: argparse.Namespace) -> None:
    """$ATTNVERIFY_CACHE_DIR, when set for a command that uses a cache, must be a directory that can be created
    and written: else one line and exit 2 before any work, as for --cache-dir."""
    from attnverify import cache

    if args.command in (None, "list") or cache.disabled() or not os.environ.get(cache.ENV_DIR):
        return
    if getattr(args, "no_cache", False) and args.command in ("run", "claims"):
        return
    why = cache.unusable(os.environ[cache.ENV_DIR])
    if why:
        raise InputError(f"{cache.ENV_DIR}: cannot use {os.environ[cache.ENV_DIR]!r} ({why}); point it at a "
                         f"writable directory, or set {cache.ENV_OFF}=1")


# ----------------------------------------------------------------------------------------------
# derive and latex
# ----------------------------------------------------------------------------------------------
def cmd_derive(args: argparse.Namespace) -> int:
    """Print a paper's derivation, at the model options given with --set (validated as ``run`` validates them)."""
    from attnverify.derive import render

    width = non_negative_int("--width", args.width) if args.width is not None else None
    print(render(args.model, latex=args.latex, width=width, options=parse_sets(args.sets)))
    return 0


def cmd_latex(args: argparse.Namespace) -> int:
    from attnverify.latex import document
    from attnverify.outputs import write_text

    out = Path(args.output)
    figures_dir = out.parent / f"{out.stem}_figures"
    report, figures = None, {}
    if args.derivations_only:
        if args.from_json:
            raise InputError("--derivations-only and --from-json exclude each other")
    elif args.from_json:
        try:
            report = json.loads(Path(args.from_json).read_text())
            report["checks"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise InputError(f"--from-json: cannot read a report from {args.from_json!r} ({type(exc).__name__})")
        from attnverify.report import plot_file_name

        base = Path(args.from_json).parent
        for c in report["checks"]:
            found = []
            i = 0
            while (base / plot_file_name(c["id"], i)).is_file():
                found.append(base / plot_file_name(c["id"], i))
                i += 1
            if found:
                figures[c["id"]] = found
    else:
        from attnverify.report import plot_file_name, report_dict, save_plot

        ns = argparse.Namespace(profile="quick", seed=args.seed, executor="local", scheduler=None, jobs=None,
                                quiet=args.quiet)
        rep = run_with_outputs(ns, None, {}, None, None)
        report = report_dict(rep)
        for r in rep.results:
            for i, plot in enumerate(r.evidence.plots if r.evidence else []):
                figures_dir.mkdir(parents=True, exist_ok=True)
                path = figures_dir / plot_file_name(r.id, i)
                save_plot(plot, path)
                figures.setdefault(r.id, []).append(path)
    rel = {cid: [_relative(p, out.parent) for p in paths] for cid, paths in figures.items()}
    write_text(out, document(report, figures=rel, fragment=args.fragment))
    print(f"wrote {args.output}")
    return 0


def _relative(path: Path, base: Path) -> str:
    import os

    return os.path.relpath(path.resolve(), base.resolve()).replace(os.sep, "/")


# ----------------------------------------------------------------------------------------------
# main
# ----------------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        if args.version:
            print(f"attnverify {__version__}")
            return 0
        if args.command is None:            # a bare 'attnverify': the help
            build_parser().print_help()
            return 0
        if getattr(args, "profile", "quick") not in PROFILES:
            raise InputError(f"unknown profile {args.profile!r} (choose from {', '.join(PROFILES)})")
        validate_outputs(args)
        validate_cache_env(args)
        handler = {"list": lambda: cmd_list(args), "run": lambda: cmd_run(args),
                   "claims": lambda: cmd_claims(args), "audit": lambda: cmd_audit(args),
                   "derive": lambda: cmd_derive(args), "latex": lambda: cmd_latex(args),
                   "bench": lambda: bench_cli.cmd_bench(args),
                   "selftest": lambda: selftest_cli.cmd_selftest(args)}[args.command]
        return handler()
    except (UsageError, InputError) as exc:
        print(f"attnverify: error: {exc}", file=sys.stderr)
        return 2
    except Interrupted as exc:
        print(f"attnverify: {exc}", file=sys.stderr)
        return 130
    except KeyboardInterrupt:
        print("attnverify: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:          # output piped into head & co.: not an error
        return 0
    except Exception as exc:  # noqa: BLE001 -- never a traceback
        print(f"attnverify: internal error: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}",
              file=sys.stderr)
        return 1
