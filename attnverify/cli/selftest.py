"""``attnverify selftest --mutants [--only NAME ...] [--json PATH] [--seed S]``,
``attnverify selftest --power [--only IDS ...] [--seeds N] [--families F ...] [--smoke] [--json PATH]`` and
``attnverify selftest --seeds N`` and ``attnverify selftest --models N [--papers P ...] [--seed S] [--budget SECONDS]
[--json PATH [--resume]]``.

``--power``: the minimum detectable perturbation of every (check, perturbation family) of
:mod:`attnverify.selftest.power` over seeds 0..N-1 (default 5); ``--smoke``: one family per check at its target, one seed.

``--mutants``: inject each mutant of :mod:`attnverify.selftest.mutants` in turn, run the checks it names (quick profile,
serially; the unmutated baseline runs read and write the task cache, as ``attnverify run`` does), and print which
checks catch it; ``--json`` writes
``{"mutants": n, "caught": k, "rows": [{"mutant", "caught_by": [...], ...}], ...}``.
``--seeds N``: the false-alarm sweep of :mod:`attnverify.selftest.seed_sweep` (quick profile under seeds 0..N-1).
``--models N``: the model sweep of :mod:`attnverify.selftest.model_sweep` (N admissible models per paper, drawn from
``--seed``; each paper's checks at the quick profile on each; ``--only`` keeps these check ids or families;
``--resume`` with ``--json PATH`` keeps the runs of the (interrupted) sweep in PATH and runs only the rest).

Wiring (in ``attnverify.cli.command_line``): ``selftest_cli.add_parser(sub)`` in ``build_parser`` and
``"selftest": lambda: selftest_cli.cmd_selftest(args)`` in the handler table. Exit code 0 when every mutant is
caught (or every check passes under every seed), 1 otherwise, 2 on bad input (raised as InputError).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from attnverify.checks.params import InputError


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Add the ``selftest`` subcommand to an argparse subparsers object."""
    p = subparsers.add_parser("selftest", help="self-tests: mutants (--mutants), check power (--power), claim "
                               "power (--claims), false-alarm sweep (--seeds N)")
    p.add_argument("--mutants", action="store_true", help="run the mutant catalogue (about 5 minutes)")
    p.add_argument("--claims", action="store_true", help="measure each claim's power: the smallest error in its "
                   "stated form that the ledger refutes while its checks pass (with --smoke: one seed, targets only)")
    p.add_argument("--power", action="store_true", help="measure each check's minimum detectable perturbation "
                   "(MDP) along its perturbation families (long: tens of minutes for all checks)")
    p.add_argument("--smoke", action="store_true", help="with --power: one family per check at its target "
                   "delta, one seed (every one must be rejected); with --claims: one seed, the perturbations at their "
                   "targets")
    p.add_argument("--families", nargs="+", default=None, metavar="FAMILY", help="with --power: only these "
                   "perturbation families")
    p.add_argument("--markdown", action="store_true", help="with --power or --claims: print the table as Markdown")
    p.add_argument("--jobs", default="1", help="with --power: checks measured at once; with --mutants: mutants run "
                   "at once (worker processes)")
    p.add_argument("--only", nargs="+", default=None, metavar="NAME", help="with --mutants: only these mutants; "
                   "with --power: only these check ids; with --claims: only these claim ids")
    p.add_argument("--list", dest="list_mutants", action="store_true", help="list the mutants and exit")
    p.add_argument("--seeds", default=None, metavar="N", help="alone: run the quick audit under seeds 0..N-1 "
                   "(about 1.5 minutes per seed) and report each check's pass rate; with --power: the seeds of "
                   "the MDP (default 5); with --claims: the seeds of the claims' MDP (default 5)")
    p.add_argument("--models", default=None, metavar="N", help="draw N admissible models per paper and run its "
                   "checks (quick profile) on each: failures, false-alarm rate and its 95%% upper bound per check")
    p.add_argument("--papers", nargs="+", default=None, metavar="MODEL", help="with --models: only these papers")
    p.add_argument("--budget", default="600", metavar="SECONDS", help="with --models: the longest one check may "
                   "run on one model before it counts as overtime (default 600)")
    p.add_argument("--seed", default="0", help="with --mutants: the seed of every run; with --models: the seed "
                   "of the draws (default 0)")
    p.add_argument("--json", dest="json_path", metavar="PATH", help="write the results as JSON")
    p.add_argument("--resume", action="store_true", help="with --models and --json PATH: keep the runs of the sweep "
                   "in PATH (an interrupted one, same --models, --seed, --papers and --only) and run only the rest")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    return p


def _count(name: str, text: str, minimum: int) -> int:
    """An integer option >= ``minimum`` (--jobs also at most MAX_JOBS); InputError naming it otherwise."""
    from attnverify.cli.options import MAX_JOBS

    try:
        value = int(str(text).strip())
    except ValueError:
        raise InputError(f"{name}: expected an integer >= {minimum}, got {text!r}") from None
    if value < minimum:
        raise InputError(f"{name}: expected an integer >= {minimum}, got {value}")
    if name == "--jobs" and value > MAX_JOBS:
        raise InputError(f"--jobs: at most {MAX_JOBS} workers, got {value}")
    return value


def _verdict_text(r: dict) -> str:
    if r["verdict"] == "error":
        tag = "crash, not counted" if r["crash"] else "error"
        return f"{tag} ({r['error']})"
    if r["observed"] is None:
        return r["verdict"]
    return f"{r['verdict']} (observed {r['observed']:.4g}, threshold {r['threshold']:.4g})"


def mutants_table(result: dict) -> str:
    """Plain-text table: one line per (mutant, check)."""
    lines = [f"{'mutant':<38} {'caught':<7} check: verdict", "-" * 100]
    for row in result["rows"]:
        for i, r in enumerate(row["results"]):
            tag = "yes" if row["caught"] else "equiv." if row.get("equivalent") else "NO"
            head = f"{row['mutant']:<38} {tag:<7}" if i == 0 else " " * 46
            lines.append(f"{head} {r['check']}: {_verdict_text(r)}")
    gaps = [f"  {row['mutant']}: not caught: {row['known_gap']}" for row in result["rows"] if row.get("known_gap")]
    gaps += [f"  {row['mutant']}: equivalent mutant (a true statement): {row['equivalent']}"
             for row in result["rows"] if row.get("equivalent") and not row["caught"]]
    lines += ["-" * 100, *gaps] if gaps else []
    bad = [b["check"] for b in result["baseline"] if b["verdict"] != "pass"]
    lines.append("-" * 100)
    n_eq = result.get("equivalent", 0)
    lines.append(f"caught {result['caught']} of {result['mutants']} mutants"
                 + (f" ({n_eq} equivalent, true as stated)" if n_eq else "") + f" in {result['seconds']:.0f} s "
                 f"(seed {result['seed']}, quick profile)" + (f"; baseline NOT passing: {bad}" if bad else ""))
    return "\n".join(lines)


def _check_json_path(path: str | None) -> None:
    if path and not Path(path).parent.exists():
        raise InputError(f"--json: directory {str(Path(path).parent)!r} does not exist")


def mutant_table(mutants, width: int | None = None) -> str:
    """Name, target (the argument it replaces: theory or numerics) and description of each mutant in aligned columns; the description is wrapped to the
    terminal (``width`` columns) under its own column, or set on a line of its own when the terminal is too narrow
    for the first two columns."""
    import shutil
    import textwrap

    width = width or shutil.get_terminal_size((120, 24)).columns
    rows = [(m.name, m.target, m.description) for m in mutants]
    a = max((len(r[0]) for r in rows), default=0)
    b = max((len(r[1]) for r in rows), default=0)
    indent = a + b + 4
    lines = []
    for name, target, text in rows:
        head = f"{name:<{a}}  {target:<{b}}  "
        if width - indent >= 30:
            lines += textwrap.wrap(text, width, initial_indent=head, subsequent_indent=" " * indent)
        else:
            lines += [head.rstrip(), *textwrap.wrap(text, max(20, width - 4), initial_indent="    ",
                                                   subsequent_indent="    ")]
    return "\n".join(lines)


def cmd_selftest(args: argparse.Namespace) -> int:
    """Run the mutation self-test or the seed sweep; print a table; write JSON to ``args.json_path`` if given."""
    from attnverify.selftest.mutants import all_mutants, by_name, known_gaps

    if getattr(args, "list_mutants", False):
        print(mutant_table(all_mutants()))
        return 0
    power_mode = bool(getattr(args, "power", False))
    claims_mode = bool(getattr(args, "claims", False))
    if getattr(args, "resume", False) and getattr(args, "models", None) is None:
        raise InputError("selftest: --resume goes with --models")
    if getattr(args, "models", None) is not None:
        if args.mutants or power_mode or claims_mode or args.seeds is not None:
            raise InputError("selftest: --models goes alone (not with --mutants, --power, --claims or --seeds)")
        _check_json_path(args.json_path)
        return _model_sweep(args, (lambda text: None) if args.quiet
                            else (lambda text: print(text, file=sys.stderr, flush=True)))
    if sum((bool(args.mutants), power_mode, claims_mode,
            args.seeds is not None and not (power_mode or claims_mode))) != 1:
        raise InputError("selftest: give exactly one of --mutants, --power, --claims or --seeds N")
    if args.families and not power_mode:
        raise InputError("selftest: --families goes with --power")
    if args.smoke and not (power_mode or claims_mode):
        raise InputError("selftest: --smoke goes with --power or --claims")
    _check_json_path(args.json_path)
    say = (lambda text: None) if args.quiet else (lambda text: print(text, file=sys.stderr, flush=True))
    if power_mode:
        return _power(args, say)
    if claims_mode:
        return _claims(args, say)
    if args.seeds is not None:
        return _seed_sweep(_count("--seeds", args.seeds, 1), args.json_path, say)
    seed = _count("--seed", args.seed, 0)
    try:
        models = tuple(f"{m}." for m in getattr(args, "added_models", None) or ())
        chosen = ([by_name(n) for n in args.only] if args.only else
                  [m for m in all_mutants() if m.name.startswith(models)] if models else list(all_mutants()))
    except ValueError as exc:
        raise InputError(str(exc)) from None
    from attnverify.cli.run import _task_store
    from attnverify.selftest.mutation import selftest

    say(f"selftest: baseline run of the checks the {len(chosen)} mutants name ...")
    result = selftest(chosen, seed=seed, jobs=_count("--jobs", args.jobs, 1), store=_task_store(args),
                      progress=lambda i, n, name: say(f"selftest: mutant {i + 1}/{n}: {name} ..."))
    for row in result["rows"]:
        row["known_gap"] = None if row["caught"] else known_gaps().get(row["mutant"])
    print(mutants_table(result))
    if args.json_path:
        Path(args.json_path).write_text(json.dumps(result, indent=2) + "\n")
        print(f"wrote {args.json_path}")
    return 0 if result["all_caught"] and result["baseline_all_pass"] else 1


def _seed_sweep(n: int, json_path: str | None, say) -> int:
    import time

    from attnverify.selftest.seed_sweep import markdown, result_dict, sweep

    start = time.perf_counter()
    per_seed = sweep(list(range(n)), on_seed=lambda s, rows: say(
        f"selftest: seed {s}: {sum(r['verdict'] == 'pass' for r in rows)}/{len(rows)} pass"))
    result = result_dict(per_seed, time.perf_counter() - start)
    print(markdown(result["checks"], n))
    if json_path:
        Path(json_path).write_text(json.dumps(result, indent=2) + "\n")
        print(f"wrote {json_path}")
    return 0 if result["all_pass"] else 1


def _model_sweep(args: argparse.Namespace, say) -> int:
    """``selftest --models N``: the model sweep's table; exit 0 iff some check ran and every run passed (refused
    draws aside)."""
    from attnverify.selftest.model_sweep import markdown, summarise, sweep

    n, seed = _count("--models", args.models, 1), _count("--seed", args.seed, 0)
    try:
        budget = float(args.budget)
    except ValueError:
        raise InputError(f"--budget: expected a number of seconds > 0, got {args.budget!r}") from None
    if not budget > 0:
        raise InputError(f"--budget: expected a number of seconds > 0, got {args.budget!r}")
    rows = _resumed(args, n, seed) if args.resume else []
    if args.resume:
        say(f"selftest: resuming {args.json_path}: {len(rows)} runs kept")

    def on_row(r: dict) -> None:
        rows.append(r)
        say(f"selftest: {r['paper']} model {r['draw']}: {r['check']}: {r['verdict']} ({r['seconds']:.1f} s)")

    def write(complete: bool) -> None:
        Path(args.json_path).write_text(json.dumps({**_sweep_identity(args, n, seed), "complete": complete,
                                                    "checks": summarise(rows), "rows": rows},
                                                   indent=2, default=str) + "\n")

    try:
        sweep(n, seed=seed, papers=args.papers, checks=args.only, budget_s=budget, on_row=on_row,
              done={(r["check"], r["draw"]) for r in rows})
    except KeyboardInterrupt:          # hours of runs are not lost: the rows so far, marked incomplete
        from attnverify.cli.common import Interrupted

        if not args.json_path:
            raise
        write(False)
        raise Interrupted(f"interrupted after {len(rows)} runs (the partial sweep in {args.json_path}, "
                          "'complete': false)") from None
    table = summarise(rows)
    print(markdown(table, n=n, seed=seed))
    if args.json_path:
        write(True)
        print(f"wrote {args.json_path}")
    ran = any(e["n"] for e in table.values())
    return 0 if ran and all(e["pass"] == e["n"] for e in table.values()) else 1


def _sweep_identity(args: argparse.Namespace, n: int, seed: int) -> dict:
    """What fixes a model sweep's draws and rows: N, the seed, the papers and checks kept (as sets: each check's
    models are drawn from its own stream) and the bytes of every model file added (SHA-256)."""
    import hashlib

    files = sorted(hashlib.sha256(Path(f).read_bytes()).hexdigest() for f in getattr(args, "model_sources", None) or ())
    return {"models": n, "seed": seed, "papers": sorted(set(args.papers)) if args.papers else None,
            "only": sorted(set(args.only)) if args.only else None, "model_files": files}


def _resumed(args: argparse.Namespace, n: int, seed: int) -> list[dict]:
    """The rows of the sweep in ``--json PATH`` to keep (none when PATH does not exist yet); InputError, before any
    work, when PATH is not a model sweep's JSON (each row a run of one check at one draw in 0..N-1, or -1 for
    refused draws, none twice) or was drawn with another identity (:func:`_sweep_identity`)."""
    from attnverify.selftest.model_sweep import VERDICTS

    if not args.json_path:
        raise InputError("selftest: --resume needs --json PATH (the sweep to continue)")
    path = Path(args.json_path)
    if not path.exists():
        return []
    what = f"--resume: {str(path)!r} is not the JSON of a model sweep (selftest --models --json)"
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        rows = doc["rows"]
        if not isinstance(doc, dict) or not isinstance(rows, list):
            raise TypeError
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError):
        raise InputError(what) from None
    seen: set[tuple[str, int]] = set()
    for r in rows:
        ok = (isinstance(r, dict) and all(isinstance(r.get(k), str) for k in ("paper", "check", "verdict"))
              and r["verdict"] in (*VERDICTS, "refused") and type(r.get("draw")) is int and -1 <= r["draw"] < n
              and type(r.get("seconds")) in (int, float) and (r["check"], r["draw"]) not in seen)
        if not ok:
            raise InputError(f"{what}: row {len(seen) + 1} is not a run of one check at one of its {n} draws, once")
        seen.add((r["check"], r["draw"]))
    for key, value in _sweep_identity(args, n, seed).items():
        if key not in doc or doc[key] != value:
            raise InputError(f"--resume: {str(path)!r} is a sweep with {key} = {doc.get(key, 'unrecorded')!r}, "
                             f"not {value!r}")
    return rows


def _claims(args: argparse.Namespace, say) -> int:
    """``selftest --claims``: the claim power table (``--only`` claim ids); exit 0 iff every target is met and every
    scenario gives its expected verdict."""
    from attnverify.checks.claims import CLAIMS, all_claims
    from attnverify.checks.params import did_you_mean
    from attnverify.selftest.claim_power import claim_power, markdown, table

    all_claims()
    for cid in args.only or []:
        if cid not in CLAIMS:
            raise InputError(f"--only: no claim {cid!r}{did_you_mean(cid, list(CLAIMS))}")
    n_seeds = _count("--seeds", args.seeds, 1) if args.seeds is not None else 5
    result = claim_power(args.only, seeds=range(n_seeds), smoke=args.smoke, progress=say)
    print(markdown(result) if args.markdown else table(result))
    if args.json_path:
        Path(args.json_path).write_text(json.dumps(result, indent=2, default=str) + "\n")
        print(f"wrote {args.json_path}")
    return 0 if result["all_targets_met"] else 1


def _power(args: argparse.Namespace, say) -> int:
    """``selftest --power``: validate the ids and families first, then measure; exit 0 iff every target is met
    (``--smoke``: every smoke row rejected and its baseline passing)."""
    from attnverify.selftest.power import families, markdown, plan, power, smoke, table
    from attnverify.checks.runner import select

    only = args.only or getattr(args, "added_models", None)     # --model FILE alone: that model's rows
    ids = [c.id for c in select(only)] if only else None
    planned = {r.check for r in plan()}
    if ids and not set(ids) & planned:
        raise InputError(f"--only: no power rows for {', '.join(ids)}")
    known = families()
    unknown = [f for f in (args.families or []) if f not in known]
    if unknown:
        from attnverify.checks.params import did_you_mean

        raise InputError(f"--families: unknown family {unknown[0]!r}{did_you_mean(unknown[0], list(known))} "
                         f"(known: {', '.join(known)})")
    n_seeds = _count("--seeds", args.seeds, 1) if args.seeds is not None else 5
    jobs = _count("--jobs", args.jobs, 1)
    if args.smoke:
        rows = smoke(ids, seed=_count("--seed", args.seed, 0))
        for r in rows:
            print(f"{r['check']:<34} {r['family']:<24} delta {r['delta']:<8g} baseline {r['baseline']:<5} "
                  f"rejected {r['detection_rate']:.0%}  {'ok' if r['ok'] else 'MISSED'}")
        result: dict = {"smoke": rows, "all_ok": all(r["ok"] for r in rows)}
        ok = result["all_ok"]
    else:
        result = power(ids, seeds=range(n_seeds), families=args.families, progress=say, jobs=jobs)
        print(markdown(result) if args.markdown else table(result))
        ok = result["all_targets_met"]
    if args.json_path:
        Path(args.json_path).write_text(json.dumps(result, indent=2, default=float) + "\n")
        print(f"wrote {args.json_path}")
    return 0 if ok else 1
