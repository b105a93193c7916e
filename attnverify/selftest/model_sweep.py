"""Model sweep: a valid model never fails a check (issue 31, item 5).

A check that fails on an admissible model is the verifier's own error, whatever the seed: the seed sweep
(:mod:`attnverify.selftest.seed_sweep`) varies the seed at the default model; this sweep varies the model. For each
check of each paper it draws ``n`` admissible points of the paper's model options (``Paper.params``, validated by
``Paper.validate``), runs the check at the quick profile on each point, and counts the verdicts.

Drawing. A real option is drawn over its whole documented range (:func:`attnverify.checks.domain.span` and
:func:`~attnverify.checks.domain.spread`: log-uniform over ranges wider than 100x, each end taken with probability
0.1, an open end at 0 or infinity replaced by the typical value / or x 1e3). A count (int) is drawn log-uniform
from its lower bound to ``min(high, COUNT_SPAN x largest setting)``: the cost of a check grows with its sizes, and the
checks refuse counts beyond 100x their settings anyway (the scale rule, attnverify.checks.values). A string option
with choices takes one at random. A paper whose options include matrices with a joint constraint supplies its own sampler
(``model_point`` in its self-test module: :func:`sampler_of`). A
point the paper refuses is drawn again (at most ``TRIES`` times).

Per check. The models are drawn for each check where it runs: each option over the paper's range intersected with
the check's own (:func:`narrowed`), and a model the check refuses before any work (its cross-constraints, the scale
rule: an InputError) is drawn again and counted as a ``refused`` draw, not a run. On each model a check receives
the options it declares (by name; an option ``x`` also fills a tuple parameter ``xs`` as ``(x,)``: ``lam`` ->
``lams``); its other parameters keep their quick-profile values. The verdicts of a run: ``pass``; ``fail``;
``unresolved`` (the numerics could not resolve the comparison, ``Evidence.unresolved``); ``error`` (an exception,
or a non-finite observed value or threshold); ``overtime`` (the run exceeded ``budget_s``). Only ``pass`` is a
pass.

With k failures in n runs the false-alarm rate of a check is estimated as k / n with the one-sided 95 %
Clopper-Pearson upper bound (:func:`attnverify.selftest.seed_sweep.upper_bound`; 1 - 0.05**(1/n) when k = 0).
The same seed gives the same models and verdicts: the models of check c are drawn from
``SeedSequence([seed, crc32(c)])`` (the same whichever checks are selected), and model j runs under seed + j.
"""
from __future__ import annotations

import math
import signal
import threading
import zlib
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

import numpy as np

from attnverify.checks.domain import span, spread
from attnverify.checks.params import InputError, Param, validated
from attnverify.selftest.seed_sweep import upper_bound

COUNT_SPAN = 10     # a count is drawn up to COUNT_SPAN x its default (cost; see the module docstring)
TRIES = 200         # draws per admissible point before giving up
VERDICTS = ("pass", "fail", "unresolved", "error", "overtime")


# ---------------------------------------------------------------------------------------------------- drawing
def draw_value(prm: Param, rng: np.random.Generator) -> Any:
    """One value of the option ``prm`` over its documented range (module docstring); None for a kind that has no
    generic draw (a matrix, a string without choices): it keeps its default."""
    if prm.choices:
        return prm.choices[int(rng.integers(len(prm.choices)))]
    if prm.kind is float:
        lo, hi = span(prm)
        return float(spread(rng, 1, lo, hi)[0])
    if prm.kind is int:
        lo = int(prm.low) if prm.low is not None else 1
        cap = max(lo, int(abs(prm.default)) * COUNT_SPAN)
        hi = min(int(prm.high), cap) if prm.high is not None else cap
        return int(spread(rng, 1, lo, hi, log=lo > 0 and hi / lo >= 10, integer=True)[0])
    return None


def generic_point(params: Sequence[Param], rng: np.random.Generator) -> dict:
    """A draw of every option with a generic draw (:func:`draw_value`); the others are left out (defaults)."""
    out = {}
    for prm in params:
        v = draw_value(prm, rng)
        if v is not None:
            out[prm.name] = v
    return out


def sampler_of(paper: Any) -> Callable[[Sequence[Param], np.random.Generator], dict]:
    """The paper's own sampler, ``model_point(params, rng) -> point`` in its self-test module (a paper whose options
    include matrices with a joint constraint supplies one), else :func:`generic_point`."""
    if not paper.selftest:
        return generic_point
    import importlib

    return getattr(importlib.import_module(paper.module(paper.selftest)), "model_point", generic_point)


def narrowed(paper_prm: Param, check: Any) -> Param:
    """The range of a model option where ``check`` runs: the paper's range intersected with the check's own
    parameter of that name (or the items of its tuple parameter ``name + "s"``); the typical value (an open end's
    reference) stays the paper's default, the count cap (:func:`draw_value`) grows to the check's largest setting."""
    own = None if check is None else (check.param(paper_prm.name) or check.param(paper_prm.name + "s"))
    if own is None or paper_prm.kind not in (float, int):
        return paper_prm
    low, low_open, high, high_open = paper_prm.low, paper_prm.low_open, paper_prm.high, paper_prm.high_open
    if own.low is not None and (low is None or own.low > low or (own.low == low and own.low_open)):
        low, low_open = own.low, own.low_open
    if own.high is not None and (high is None or own.high < high or (own.high == high and own.high_open)):
        high, high_open = own.high, own.high_open
    settings = own.default if isinstance(own.default, tuple) else (own.default,)
    default = max([abs(paper_prm.default), *[abs(x) for x in settings]]) if paper_prm.kind is int else paper_prm.default
    return Param(paper_prm.name, paper_prm.kind, default, paper_prm.help, low, high, low_open, high_open,
                 paper_prm.choices)


def draw_models(paper: Any, n: int, rng: np.random.Generator, *, check: Any = None, tries: int = TRIES
                ) -> tuple[list[dict], int]:
    """``n`` points of ``paper``'s model options, each option drawn over its range where ``check`` runs
    (:func:`narrowed`), that ``Paper.validate`` admits (the defaults filling in what a point leaves out) and, given
    ``check``, that the check accepts before any work (its own constraints and the scale rule); and the count of
    draws refused on the way. ValueError when ``tries`` draws in a row give no admissible point."""
    sampler = sampler_of(paper)
    params = tuple(narrowed(p, check) for p in paper.params)
    out: list[dict] = []
    refused = 0
    for _ in range(n):
        for _ in range(tries):
            point = sampler(params, rng)
            try:
                values = {**{p.name: p.validate(p.default) for p in paper.params},
                          **{k: paper.param(k).validate(v) for k, v in point.items()}}
                validated(paper.validate, values)
                if check is not None:
                    check.resolve("quick", overrides_for(check, point))
            except InputError:
                refused += 1
                continue
            out.append(point)
            break
        else:
            raise ValueError(f"{paper.model}: no admissible model{f' for {check.id}' if check else ''} in {tries} "
                             "draws")
    return out, refused


def overrides_for(check: Any, point: Mapping[str, Any]) -> dict:
    """The options of ``point`` that ``check`` declares: by name, and ``x`` as ``xs = (x,)`` for a tuple
    parameter ``xs`` the check has and ``x`` it has not."""
    out = {}
    for name, value in point.items():
        if check.param(name) is not None:
            out[name] = value
        elif (plural := check.param(name + "s")) is not None and plural.kind in ("floats", "ints"):
            out[plural.name] = (value,)
    return out


# ---------------------------------------------------------------------------------------------------- running
class Overtime(BaseException):
    """A check ran past its budget (a BaseException, so that the runner's catch-all does not make it an error)."""


def _with_budget(fn: Callable[[], Any], budget_s: float | None) -> Any:
    """``fn()``, interrupted by :class:`Overtime` after ``budget_s`` seconds (SIGALRM; main thread only, else no
    limit). The limit is a guard against a hang, not a verdict on speed."""
    if not budget_s or threading.current_thread() is not threading.main_thread():
        return fn()

    def ring(_signum, _frame):
        raise Overtime()

    old = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, budget_s)
    try:
        return fn()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _number(x: Any) -> float | None:
    try:
        return float(x) if x is not None else None
    except (TypeError, ValueError):
        return None


def run_point(check: Any, point: Mapping[str, Any], *, seed: int, budget_s: float | None = None) -> dict:
    """One check at one model point (quick profile): a row with the verdict (``refused`` or one of VERDICTS), the
    observed value and threshold, the error or refusal line and the seconds."""
    from attnverify.checks.runner import run_one

    given = overrides_for(check, point)
    row = {"check": check.id, "point": _jsonable(given), "seed": seed, "observed": None, "threshold": None,
           "error": None, "seconds": 0.0}
    try:
        params = check.resolve("quick", given)
    except InputError as exc:
        return {**row, "verdict": "refused", "error": str(exc)}
    start = time.perf_counter()
    try:
        result = _with_budget(lambda: run_one(check, params, seed=seed, profile="quick"), budget_s)
    except Overtime:
        return {**row, "verdict": "overtime", "error": f"over the budget of {budget_s:g} s",
                "seconds": time.perf_counter() - start}
    ev = result.evidence
    obs, thr = (_number(ev.observed), _number(ev.threshold)) if ev is not None else (None, None)
    verdict, error = result.verdict, result.error
    if result.unresolved is not None:                   # the typed text, on one line of Unicode
        from attnverify.render.reasons import plain

        error = f"Unresolved: {plain(result.unresolved)}"
    if verdict == "error" and (error or "").startswith("Unresolved:"):
        verdict = "unresolved"
    if any(v is not None and not math.isfinite(v) for v in (obs, thr)):     # never a pass (the runner refuses too)
        verdict, error = "error", f"non-finite observed {obs} / threshold {thr}"
    return {**row, "verdict": verdict, "error": error, "observed": obs, "threshold": thr,
            "seconds": result.seconds}


def _jsonable(point: Mapping[str, Any]) -> dict:
    return {k: (np.asarray(v).tolist() if isinstance(v, np.ndarray) else v) for k, v in point.items()}


def sweep(n: int, *, seed: int = 0, papers: Sequence[str] | None = None, checks: Sequence[str] | None = None,
          budget_s: float | None = None, on_row: Callable[[dict], None] | None = None,
          done: Collection[tuple[str, int]] = ()) -> list[dict]:
    """Rows of :func:`run_point` for ``n`` drawn models of each paper (``papers``: model names, default every
    registered paper with model options) and each of its checks (``checks``: ids or families to keep, default all).
    ``on_row(row)`` is called after each run. ``done``: (check id, draw) pairs of an earlier sweep with the same
    ``n`` and ``seed`` (its models are these), not run again (draw -1: the check's draws were refused). Unknown
    names raise InputError before any work."""
    from attnverify.checks.registry import papers as registered
    from attnverify.checks.runner import select

    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise InputError(f"models: expected an integer >= 1, got {n!r}")
    known = [p for p in registered() if p.params]
    names = [p.model for p in known]
    for name in papers or ():
        if name not in names:
            raise InputError(f"papers: no paper {name!r} with model options (known: {', '.join(names)})")
    chosen_checks = {c.id for c in select(list(checks))} if checks else None
    rows: list[dict] = []
    for paper in known:
        if papers and paper.model not in papers:
            continue
        mine = [c for c in select([paper.model]) if chosen_checks is None or c.id in chosen_checks]
        if not mine:
            continue
        drawn = []
        for c in mine:
            rng = np.random.default_rng(np.random.SeedSequence([seed, zlib.crc32(c.id.encode())]))
            try:
                points, refused = draw_models(paper, n, rng, check=c)
            except ValueError as exc:
                if (c.id, -1) in done:
                    continue
                row = {"paper": paper.model, "check": c.id, "draw": -1, "point": {}, "seed": seed,
                       "verdict": "refused", "error": str(exc), "observed": None, "threshold": None,
                       "seconds": 0.0, "refused_draws": TRIES}
                rows.append(row)
                if on_row is not None:
                    on_row(row)
                continue
            drawn.append((c, points, refused))
        for j in range(n):                  # model-major: an interrupted sweep has as many models for every check
            for c, points, refused in drawn:
                if (c.id, j) in done:
                    continue
                row = {"paper": paper.model, "draw": j, "refused_draws": refused if j == 0 else 0,
                       **run_point(c, points[j], seed=seed + j, budget_s=budget_s)}
                rows.append(row)
                if on_row is not None:
                    on_row(row)
    return rows


def summarise(rows: Sequence[dict]) -> dict[str, dict]:
    """Per check: the count of each verdict, n (the runs: every verdict but ``refused``), the false-alarm rate
    k/n (k = fails) with its 95 % Clopper-Pearson upper bound, the rate of every non-pass with its bound, the mean
    seconds per run, and every non-passing row."""
    table: dict[str, dict] = {}
    for r in rows:
        e = table.setdefault(r["check"], {"paper": r["paper"], **{v: 0 for v in (*VERDICTS, "refused")},
                                          "seconds": 0.0, "not_passing": []})
        e[r["verdict"]] += 1 if r["verdict"] != "refused" else 0
        e["refused"] += r.get("refused_draws", 0)
        e["seconds"] += r["seconds"]
        if r["verdict"] not in ("pass", "refused"):
            e["not_passing"].append(r)
    for e in table.values():
        n = sum(e[v] for v in VERDICTS)
        e["n"] = n
        e["false_alarm_rate"] = e["fail"] / n if n else None
        e["false_alarm_upper_95"] = upper_bound(e["fail"], n) if n else None
        e["not_pass_upper_95"] = upper_bound(n - e["pass"], n) if n else None
        e["mean_seconds"] = e["seconds"] / n if n else None
    return table


def _rate(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def markdown(table: Mapping[str, dict], *, n: int, seed: int) -> str:
    """The per-check table and the list of non-passing runs, as Markdown."""
    lines = [f"Model sweep: quick profile, {n} drawn model(s) per check, seed {seed}.", "",
             "| check | runs n | pass | fail | unresolved | error | overtime | refused draws | false-alarm rate | "
             "95% upper bound | non-pass 95% upper bound | mean s |", "|---|" + "---|" * 11]
    for cid, e in table.items():
        lines.append(f"| {cid} | {e['n']} | {e['pass']} | {e['fail']} | {e['unresolved']} | {e['error']} | "
                     f"{e['overtime']} | {e['refused']} | {_rate(e['false_alarm_rate'])} | "
                     f"{_rate(e['false_alarm_upper_95'])} | {_rate(e['not_pass_upper_95'])} | "
                     f"{'-' if e['mean_seconds'] is None else format(e['mean_seconds'], '.1f')} |")
    bad = [r for e in table.values() for r in e["not_passing"]]
    if bad:
        lines += ["", "Runs that did not pass:", ""]
        for r in bad:
            lines.append(f"- {r['check']} (draw {r['draw']}, seed {r['seed']}): {r['verdict']}"
                         + (f", observed {r['observed']:.4g} vs threshold {r['threshold']:.4g}"
                            if r["observed"] is not None and r["threshold"] is not None else "")
                         + (f"; {r['error']}" if r["error"] else "") + f"; at {_short(r['point'])}")
    return "\n".join(lines) + "\n"


def _short(point: Mapping[str, Any]) -> str:
    def fmt(v: Any) -> str:
        if isinstance(v, list):
            return "[" + ", ".join(fmt(x) for x in v) + "]"
        return f"{v:.4g}" if isinstance(v, float) else str(v)
    return ", ".join(f"{k} = {fmt(v)}" for k, v in point.items()) or "the defaults"
