"""The ``attnverify`` command line: the parser, ``list`` and the dispatch to the commands (``run``, ``claims`` and
``audit`` in :mod:`attnverify.cli.run`; ``derive``, ``latex`` and ``cite`` in :mod:`attnverify.cli.documents`;
``bench`` and ``selftest`` in their own modules).

Exit codes: 0 every check passed, 1 a check failed or errored, 2 bad usage or bad input.
Every error is one line on stderr; there is never a traceback. Every output path is validated before any
work starts; a run that dies or is interrupted leaves the checks it finished in its JSON / report.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import shutil
import sys
import textwrap
from pathlib import Path

from attnverify import __version__
from attnverify.cli.models import add_model_option, load_models
from attnverify.cli import bench as bench_cli
from attnverify.cli import selftest as selftest_cli
from attnverify.checks.params import InputError
from attnverify.cli.common import Interrupted, UsageError
from attnverify.cli.documents import cmd_cite, cmd_derive, cmd_latex
from attnverify.cli.options import RunOptions
from attnverify.cli.run import cmd_audit, cmd_claims, cmd_run, validate_cache_env


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, no usage dump
        raise UsageError(message)


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
    run.add_argument("--report", dest="report_dir", metavar="DIR", help="write report.json, report.md, report.html, "
                     "plots and a figure per claim")
    _add_force(run)
    claims = sub.add_parser("claims", help="run the checks that feed the papers' claims; print the claims ledger")
    claims.add_argument("models", nargs="*", metavar="MODEL", help="papers by model name or key (attnverify list "
                        "--models): their ledger only (default: every paper)")
    _add_run_options(claims)
    claims.add_argument("--json", dest="json_path", metavar="PATH", help="write the JSON report")
    claims.add_argument("--report", dest="report_dir", metavar="DIR", help="write report.json, report.md, "
                        "report.html, plots and a figure per claim")
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
    audit.add_argument("--report", dest="report_dir", metavar="DIR", help="write report.json, report.md, "
                       "report.html and a figure per claim")
    _add_force(audit)
    derive = sub.add_parser("derive", help="print a derivation step by step")
    derive.add_argument("model", help="a paper's model name (attnverify list --models) or a model file FILE.toml")
    derive.add_argument("--latex", action="store_true", help="print the results as LaTeX")
    derive.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                        help="a model option of the paper (attnverify list --models): the derivation at that value")
    derive.add_argument("--width", default=None, help="columns of the output (default: the terminal's)")
    latex = sub.add_parser("latex", help="write a LaTeX document: the derivations (and the audit)")
    latex.add_argument("models", nargs="*", metavar="MODEL", help="papers by model name or key: their derivations "
                       "and checks only (default: all)")
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
    cite = sub.add_parser("cite", help="print the papers' BibTeX entries")
    cite.add_argument("models", nargs="*", metavar="MODEL", help="papers by model name or key (default: all)")
    bench_cli.add_parser(sub)
    selftest_cli.add_parser(sub)
    for name in ("bench", "selftest"):
        if name in sub.choices and not any("--force" in a.option_strings for a in sub.choices[name]._actions):
            _add_force(sub.choices[name])
    for name in ("list", "run", "claims", "audit", "derive", "latex", "selftest"):
        if name in sub.choices:
            add_model_option(sub.choices[name])
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


# ----------------------------------------------------------------------------------------------
# output paths: validated before anything runs
# ----------------------------------------------------------------------------------------------
def validate_outputs(args: argparse.Namespace) -> None:
    """Every output path of the command: a file where a file is due, a directory for --report, creatable and
    writable, not an existing file unless --force. One line, exit 2, before any work."""
    from attnverify.outputs import check_dir, check_file

    force = bool(getattr(args, "force", False))
    resume = bool(getattr(args, "resume", False))        # selftest --models: PATH is the sweep to continue
    for attr, flag in (("json_path", "--json"), ("output", "-o")):
        path = getattr(args, attr, None)
        if path is not None:
            check_file(path, flag, force=force or (resume and attr == "json_path"))
    if getattr(args, "report_dir", None) is not None:
        check_dir(args.report_dir, "--report", force=force)
    json_path, report_dir = getattr(args, "json_path", None), getattr(args, "report_dir", None)
    if json_path and report_dir and Path(json_path).resolve() == (Path(report_dir) / "report.json").resolve():
        raise InputError("--json: the same file as --report's report.json")


# ----------------------------------------------------------------------------------------------
# list
# ----------------------------------------------------------------------------------------------
def cmd_list(args: argparse.Namespace, width: int | None = None) -> int:
    """Print the catalogue: kept in the cache after the first listing (attnverify.list_cache), so that a repeated
    ``list`` imports no check."""
    from attnverify import list_cache

    width = width or max(60, shutil.get_terminal_size((100, 24)).columns)
    # the model files named (attnverify.cli.models) are hashed by their bytes: an edited file is listed afresh
    arguments = [*args.ids, *getattr(args, "model_sources", []), f"--params={args.params}", f"--models={args.models}",
                 f"--quantities={args.quantities}"]

    def compute() -> str:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            _print_catalogue(args, width)
        return out.getvalue()
    sys.stdout.write(list_cache.listing(arguments, width, compute))
    return 0


def _print_catalogue(args: argparse.Namespace, width: int) -> None:
    from attnverify.render.report import set_syntax
    from attnverify.checks.registry import papers
    from attnverify.checks.runner import select

    if args.models or args.quantities:
        if any(i not in {p.model for p in papers()} for i in args.ids):
            raise InputError("list --models / --quantities take no check ids (a model name or FILE.toml selects)")
        for p in [p for p in papers() if not args.ids or p.model in args.ids]:
            if args.models:
                print(f"{p.model}  (Paper {p.key}: checks {p.model}.*, claims {p.key}.*)")
                print(textwrap.fill(f"{p.title}. {p.citation}", width, initial_indent="    ", subsequent_indent="    "))
                for prm in p.params:
                    print(textwrap.fill(f"--set {prm.name}={set_syntax(prm.default)}: {prm.help}", width,
                                        initial_indent="      ", subsequent_indent="          "))
                print()
                continue
            for q in p.quantities():
                print(f"{p.model}.{q.name}  ({', '.join(q.symbols)})")
                print(textwrap.fill(q.description, width, initial_indent="    ", subsequent_indent="    "))
                for prm in q.options:
                    print(textwrap.fill(f"option {prm.name} = {set_syntax(prm.default)}: {prm.help}", width,
                                        initial_indent="      ", subsequent_indent="          "))
                print()
        return
    for c in select(args.ids or None):
        print(f"{c.id}  ({c.source})")
        print(textwrap.fill(c.compares, width, initial_indent="    ", subsequent_indent="    "))
        if args.params:
            for prm in c.params:
                paper = f" (paper: {set_syntax(c.paper_profile[prm.name])})" if prm.name in c.paper_profile else ""
                print(textwrap.fill(f"--set {prm.name}={set_syntax(prm.default)}{paper}: {prm.help}", width,
                                    initial_indent="      ", subsequent_indent="          "))
        print()


# ----------------------------------------------------------------------------------------------
# main
# ----------------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if args.version:
            print(f"attnverify {__version__}")
            return 0
        if args.command is None:            # a bare 'attnverify': the help
            build_parser().print_help()
            return 0
        args.added_models = load_models(args)     # a model file named by the command: one line, exit 2, if bad
        if args.command in ("run", "claims", "audit"):   # read and validated once: every later step reads it
            args.options = RunOptions.from_args(args)
        validate_outputs(args)
        validate_cache_env(args)
        from attnverify import provenance

        provenance.record_invocation(args, parser)
        handler = {"list": lambda: cmd_list(args), "run": lambda: cmd_run(args),
                   "claims": lambda: cmd_claims(args), "audit": lambda: cmd_audit(args),
                   "derive": lambda: cmd_derive(args), "latex": lambda: cmd_latex(args),
                   "cite": lambda: cmd_cite(args),
                   "bench": lambda: bench_cli.cmd_bench(args),
                   "selftest": lambda: selftest_cli.cmd_selftest(args)}[args.command]
        try:
            if args.command in ("run", "claims", "audit", "derive", "latex"):
                from attnverify import theory_memo

                with theory_memo.installed():
                    return handler()
            return handler()
        finally:
            provenance.clear_invocation()
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
