"""The commands that run checks: ``run`` (the audit table and the claims ledger), ``claims`` (the ledger alone) and
``audit`` (a user's stated claims). Parameters are resolved once (:func:`plan_explained`); every output is written
after each check, so an interrupted or crashed run leaves what finished; Ctrl-C prints one line."""
from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

from attnverify.checks.params import InputError
from attnverify.cli.common import Interrupted, _ignore_sigint, interrupted_message
from attnverify.cli.options import RunOptions


def _model_defaults(checks: list) -> dict[str, object]:
    """For each parameter name, the default most checks share (a check's own default differs from it)."""
    from collections import Counter

    from attnverify.render.report import set_syntax
    from attnverify.checks.registry import all_checks

    votes: dict[str, Counter] = {}
    for c in all_checks():
        for prm in c.params:
            votes.setdefault(prm.name, Counter())[set_syntax(prm.default)] += 1
    return {name: counter.most_common(1)[0][0] for name, counter in votes.items()}


def plan_explained(ids: list[str] | None, profile: str, overrides: dict[str, str]) -> tuple[list, list[str]]:
    """The run's plan (as :func:`attnverify.checks.runner.plan`) and lines saying which checks took each ``--set`` key and
    which ignored it, and why. A key no selected check takes is an error; when a check rejects its parameters
    and some of them are that check's own defaults (not set by the user), the message names them."""
    import re

    from attnverify.render.report import set_syntax
    from attnverify.checks.runner import select

    chosen = select(ids)
    notes = []
    for key in overrides:
        took = [c.id for c in chosen if c.param(key) is not None]
        if not took:
            from attnverify.checks.params import did_you_mean

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
    from attnverify.checks.engine import file_settings

    for c in chosen:                        # the values a model file's [checks.<name>] table sets, not --set
        file_name, given = file_settings(c.id)
        shown = [f"{k}={set_syntax(c.param(k).default)}" for k in given if k not in overrides]
        if shown:
            notes.append(f"{c.id} runs at {', '.join(shown)} (set by {file_name}'s [checks.{c.id.partition('.')[2]}]; "
                         "--set overrides it)")
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
                   and (set_syntax(p.default) != shared.get(p.name) or counts.get(p.name, 0) == 1)]
            extra = ""
            if own and mine:
                extra = (" -- with this check's own default" + ("s " if len(own) > 1 else " ")
                         + ", ".join(f"{p.name}={set_syntax(p.default)}" for p in own)
                         + " (not set by you; override with --set, or leave this check out)")
            raise InputError(f"{c.id}: {exc}{extra}") from None
    return plans, notes


def run_with_outputs(opts: RunOptions, ids: list[str] | None):
    """Run the checks ``ids`` with the options ``opts``, writing ``opts.json_path`` / ``opts.report_dir``'s
    report.json after each check (``complete``: false) and the full outputs at the end; an interruption or a crash
    writes what finished, then re-raises."""
    from attnverify.api import run
    from attnverify.executors import make_executor
    from attnverify.render.progress import Progress
    from attnverify.render.report import write_json, write_report
    from attnverify.checks.claims import evaluate_claims

    overrides, json_path, report_dir = opts.overrides, opts.json_path, opts.report_dir
    plans, notes = plan_explained(ids, opts.profile, overrides)
    store = _task_store(opts)
    if notes and not opts.quiet:
        for line in notes:
            print(textwrap.fill(line, max(60, shutil.get_terminal_size((100, 24)).columns),
                                subsequent_indent="    "), file=sys.stderr)
    progress = Progress([c.id for c, _ in plans]) if sys.stderr.isatty() and not opts.quiet else None
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
        with make_executor(opts.executor, jobs=opts.jobs, scheduler=opts.scheduler) as executor:
            report = run(ids, profile=opts.profile, seed=opts.seed, overrides=overrides, executor=executor,
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
    if store is not None and not opts.quiet:
        print(store.summary(), file=sys.stderr)
    if json_path:
        write_json(report, json_path)
    if report_dir:
        write_report(report, report_dir)
    return report


def _options(args: argparse.Namespace) -> RunOptions:
    """The command's options as the command line read them (attnverify.cli.options), once."""
    return getattr(args, "options", None) or RunOptions.from_args(args)


def cmd_run(args: argparse.Namespace) -> int:
    from attnverify.render.report import claims_table, table

    report = run_with_outputs(_options(args), args.ids)
    print(table(report))
    print()
    print(claims_table(report))
    if args.report_dir:
        print(f"report written to {Path(args.report_dir) / 'report.md'} and report.html")
    return 0 if report.ok else 1  # claims are findings about the papers: they never set the exit code


def cmd_claims(args: argparse.Namespace) -> int:
    """Run the checks that feed at least one registered claim (of the papers named, by model name or key, or of
    every paper); print the ledger alone."""
    from attnverify.render.report import claims_table
    from attnverify.checks.claims import all_claims
    from attnverify.checks.registry import all_checks, paper

    keys = {paper(name).key for name in getattr(args, "models", None) or []} or None   # exit 2 before any work
    fed = {cid for c in all_claims() if keys is None or c.paper in keys for cid in c.checks}
    ids = [c.id for c in all_checks() if c.id in fed]
    if not ids:
        print("no claims are registered")
        return 0
    report = run_with_outputs(_options(args), ids)
    if keys is not None:                       # one paper's ledger: the other papers' claims are not missing
        report.claims = [c for c in report.claims if c.paper in keys]
        report.ledger = False
        if args.json_path:
            from attnverify.render.report import write_json

            write_json(report, args.json_path)
        if args.report_dir:
            from attnverify.render.report import write_report

            write_report(report, args.report_dir)
    if args.report_dir:
        print(f"report written to {Path(args.report_dir) / 'report.html'}", file=sys.stderr)
    if args.markdown:
        from attnverify.render.report import to_markdown

        md = to_markdown(report, formulas=False)
        sections = md.split("\n## ")
        keep = [sec for sec in sections[1:] if sec.split("\n", 1)[0] in ("Claims", "Findings")]
        print(f"From `attnverify claims --profile {report.profile} --seed {report.seed}` "
              f"(version {report.version}).\n\n### " + "\n### ".join(keep).rstrip())
        return 0 if report.ok else 1
    print(claims_table(report, ledger=keys is None))
    broken = [r.id for r in report.results if r.verdict != "pass"]
    if broken:
        print(f"\nchecks that did not pass (their claims are inconclusive): {', '.join(broken)}")
    return 0 if report.ok else 1


def cmd_audit(args: argparse.Namespace) -> int:
    """Judge the claims of a user's file; the checks its restatements of built-in claims read run first."""
    from attnverify.user_claims import checks_of, prepare
    from attnverify.checks.audit import evaluate
    from attnverify.render.report import claims_table, write_json

    resolved = prepare(args.file)               # every problem of the file: exit 2 before any work
    _print_readings(resolved)
    ids = checks_of(resolved)
    opts = replace(_options(args), json_path=None, report_dir=None)   # written below, with the claims
    report = run_with_outputs(opts, ids) if ids else None
    if report is None:
        from attnverify.api import Report

        report = Report(profile=opts.profile, seed=opts.seed, options={})
    report.claims = evaluate(resolved, {r.id: r for r in report.results}, report.seed)
    report.ledger = False                       # a user's claims, not the papers' ledger
    if args.json_path:
        write_json(report, args.json_path)
    if args.report_dir:
        from attnverify.render.report import write_report

        write_report(report, args.report_dir)
        print(f"report written to {Path(args.report_dir) / 'report.html'}", file=sys.stderr)
    if args.markdown:
        from attnverify.render.report import claims_markdown

        print(claims_markdown(report, ledger=False))
    else:
        print(claims_table(report, ledger=False))
    return 0 if report.ok else 1


def _print_readings(resolved: list) -> None:
    """Each ``stated_latex`` form as it was read, in SymPy syntax and back in LaTeX, so that a misreading shows."""
    from attnverify.render.exprs import latex

    for r in resolved:
        if r.read_as is not None:
            print(f"{r.stated.id}: stated_latex read as {r.read_as}   (in LaTeX: {latex(r.read_as)})")


def _task_store(args: argparse.Namespace | RunOptions):
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


