"""Reports: the JSON document, the Markdown audit with its plots, and the terminal tables.

``report.md`` is written for a researcher: the verdict tables (checks, then the claims ledger) and the
findings first, then one section per check with its claim, the closed form it tests (MathJax), the
comparison as a small table and its plots. The full details (curves, tables) are left to ``report.json``.
"""
from __future__ import annotations

import json
import math
import os
import re
import textwrap
from pathlib import Path
from typing import Any

import numpy as np

from attnverify.render import notation, reasons
from attnverify.render.figures import (_wrap_keeping_math, draw_plot, mathtext, plot_file_name,  # noqa: F401
                                       save_plot)  # re-exported: the plots moved to attnverify.render.figures
from attnverify.outputs import write_text
from attnverify.checks.evidence import Result
from attnverify.checks.runner import Report

CLAIM_VERDICTS = ("holds", "holds_if", "refuted", "not_refuted", "inconclusive")


def jsonable(value: Any) -> Any:
    """``value`` as plain JSON data: arrays become lists, non-finite floats become strings."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        x = float(value)
        return x if math.isfinite(x) else ("nan" if math.isnan(x) else ("inf" if x > 0 else "-inf"))
    if value is None or isinstance(value, str):
        return value
    return str(value)


def result_dict(r: Result) -> dict:
    """A check's result as JSON: its fields, with its reason as the text of the typesetting convention
    (``reason``), its typed parts (``reason_parts``: :meth:`attnverify.checks.reason.Reason.to_dict`) and its
    one-line Unicode rendering for tools (``reason_text``); the text of an unresolved verdict the same way
    (``unresolved``, ``unresolved_parts``, ``unresolved_text``; None when the verdict is not unresolved), and the
    evidence's metric (``metric``, ``metric_parts``, ``metric_text``; None without evidence)."""
    from attnverify.checks.reason import as_reason

    ev = r.evidence
    unresolved = r.unresolved if r.unresolved is not None else (ev.unresolved or None if ev else None)
    return jsonable({
        "id": r.id, "compares": r.compares, "source": r.source, "verdict": r.verdict,
        "observed": r.observed, "threshold": r.threshold, "reason": str(r.reason),
        "reason_parts": as_reason(r.reason).to_dict(), "reason_text": reasons.plain(r.reason),
        "metric": str(ev.metric) if ev else None, "metric_parts": as_reason(ev.metric).to_dict() if ev else None,
        "metric_text": reasons.plain(ev.metric) if ev else None, "comparison": ev.comparison if ev else None,
        "analytic": ev.analytic if ev else None, "numeric": ev.numeric if ev else None,
        "uncertainty": ev.uncertainty if ev else None,
        "error": error_text(r) if r.error else None, "unresolved": None if unresolved is None else str(unresolved),
        "unresolved_parts": None if unresolved is None else as_reason(unresolved).to_dict(),
        "unresolved_text": None if unresolved is None else reasons.plain(unresolved),
        "params": r.params, "details": r.details,
        "plot_titles": [str(p.title) for p in ev.plots] if ev else [], "seconds": round(r.seconds, 3),
    })


def report_dict(report: Report, *, complete: bool = True, note: str | None = None) -> dict:
    """The JSON report. ``complete`` is False for the partial report of a run that has not finished (written
    after each check, and when a run is interrupted); ``note`` says why it stopped."""
    from attnverify import provenance

    doc = {"version": report.version, "profile": report.profile, "seed": report.seed,
           "options": jsonable(report.options), "complete": bool(complete),
           "checks": [result_dict(r) for r in report.results],
           "claims": [claim_dict(c) for c in getattr(report, "claims", [])],
           "claims_summary": {v: sum(c.verdict == v for c in getattr(report, "claims", [])) for v in CLAIM_VERDICTS},
           "claims_not_evaluated": not_evaluated(report) if getattr(report, "ledger", True) else [],
           "provenance": provenance.collect(profile=report.profile, seed=report.seed, options=report.options)}
    if note:
        doc["note"] = note
    return doc


def claim_dict(c: Any) -> dict:
    """A ledger row as JSON: its fields, the typed parts of its reason and condition, and their one-line Unicode
    renderings for tools (``reason_text``, ``condition_text``)."""

    row = jsonable(c.as_dict())
    row["reason_text"] = reasons.plain(c.reason)
    row["condition_text"] = None if c.condition is None else reasons.plain(c.condition)
    return row


def write_json(report: Report, path: str | os.PathLike, *, complete: bool = True, note: str | None = None) -> None:
    write_text(path, json.dumps(report_dict(report, complete=complete, note=note), indent=2) + "\n")


def fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.4g}"


def _grid(rows: list[tuple[str, ...]], left: int) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) if i < left else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths)))
             .rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return lines


def table(report: Report) -> str:
    """The audit table: id, verdict, observed vs threshold, seconds."""
    rows = [("check", "verdict", "observed", "", "threshold", "seconds")]
    rows += [(r.id, r.verdict.upper(), fmt(r.observed), r.evidence.comparison if r.evidence else "",
              fmt(r.threshold), f"{r.seconds:.1f}") for r in report.results]
    lines = _grid(rows, 2)
    counts = {v: sum(r.verdict == v for r in report.results) for v in ("pass", "fail", "error")}
    lines.append(f"\n{counts['pass']} passed, {counts['fail']} failed, {counts['error']} errors "
                 f"(profile {report.profile}, seed {report.seed})")
    errors = [f"  {r.id}: {error_text(r)}" for r in report.results if r.verdict == "error"]
    return "\n".join(lines + (["errors:"] + errors if errors else []))


def error_text(r: Result) -> str:
    """A result's error on one line for the terminal: an unresolved verdict's typed text in Unicode
    (:func:`attnverify.render.reasons.plain`), else the error as it is."""
    return f"Unresolved: {reasons.plain(r.unresolved)}" if r.unresolved is not None else (r.error or "")


def error_markdown(r: Result, *, inline: bool = False) -> str:
    """A result's error as Markdown: an unresolved verdict's typed text with its mathematics (``$…$``:
    :func:`attnverify.render.reasons.markdown`), else the error as code."""
    if r.unresolved is not None:
        return reasons.markdown("Unresolved: " + r.unresolved, inline=inline)
    return f"`{r.error}`"


def claims_summary(report: Report) -> str:
    """The verdict counts of the ledger, every verdict kept apart (zeros included)."""
    claims = list(getattr(report, "claims", []))
    counts = ", ".join(f"{sum(c.verdict == v for c in claims)} {v}" for v in CLAIM_VERDICTS)
    return f"{len(claims)} claims: {counts}"


def not_evaluated(report: Report) -> list[dict]:
    """The registered claims this run did not evaluate (none of their checks ran), with the reason."""
    from attnverify.checks.claims import not_evaluated as missing

    shown = {c.id for c in getattr(report, "claims", [])}
    return [m for m in missing(report.results) if m["id"] not in shown]


def claims_table(report: Report, width: int | None = None, *, ledger: bool = True) -> str:
    """The claims ledger: id, verdict and the condition / counterexample / reason, wrapped to ``width``; then the
    verdict counts and (``ledger``: the papers' own claims) the claims not evaluated."""
    claims = list(getattr(report, "claims", []))
    if not claims:
        return "claims: none of the registered claims is fed by the checks that ran"
    import shutil

    width = width or max(80, shutil.get_terminal_size((100, 24)).columns)
    idw = max(len("claim"), *(len(c.id) for c in claims))
    vw = max(len("verdict"), *(len(c.verdict) for c in claims))
    room = max(30, width - idw - vw - 4)
    lines = [f"{'claim'.ljust(idw)}  {'verdict'.ljust(vw)}  condition / reason", f"{'-' * idw}  {'-' * vw}  {'-' * 18}"]
    for c in claims:
        wrapped = _wrap_reason(c.condition if c.condition else c.reason or "", room)
        lines.append(f"{c.id.ljust(idw)}  {c.verdict.upper().ljust(vw)}  {wrapped[0]}")
        lines += [f"{'':{idw}}  {'':{vw}}  {more}" for more in wrapped[1:]]
    lines.append(f"\n{claims_summary(report)} (a refuted claim is a finding about the paper, not a failed check)")
    skipped = not_evaluated(report) if ledger else []
    ran = {r.id.split(".")[0] for r in report.results}
    near = [m for m in skipped if any(n.split(".")[0] in ran for n in m["needs"])]
    far = sorted({m["id"].split(".")[0] for m in skipped if m not in near})
    if near:
        lines.append("not evaluated: " + "; ".join(f"{m['id']} ({m['reason']})" for m in near))
    if far:
        lines.append(f"not evaluated: {len(skipped) - len(near)} claims of paper(s) {', '.join(far)}, none of "
                     "whose checks ran (the JSON report lists them)")
    return "\n".join(lines)


def _wrap_reason(value: Any, room: int) -> list[str]:
    """A reason for the terminal, wrapped to ``room`` columns: the lead, then each item as a ``- `` line whose
    continuation lines are indented under its text."""

    out: list[str] = []
    for line in reasons.terminal(value).splitlines():
        if line.startswith("  - "):
            out += textwrap.wrap(line[4:], room, initial_indent="- ", subsequent_indent="  ")
        else:
            out += textwrap.wrap(line, room)
    return out or [""]


def claims_markdown(report: Report, *, ledger: bool = True) -> str:
    """The ledger as Markdown: one row per claim with its verdict, condition or reason, and the command that
    reproduces it; the verdict counts; the claims not evaluated."""

    claims = list(getattr(report, "claims", []))
    md = ["| claim | paper | verdict | condition / reason | reproduce |", "|---|---|---|---|---|"]
    md += [f"| `{c.id}` | {c.paper} | **{c.verdict}** | {_md_cell(reasons.markdown(c.condition or c.reason or '', inline=True))}"
           f" | `{_md_cell(c.command)}` |" for c in claims]
    md += ["", claims_summary(report) + "."]
    skipped = not_evaluated(report) if ledger else []
    if skipped:
        md += ["", "Not evaluated: " + "; ".join(f"`{m['id']}` ({m['reason']})" for m in skipped) + "."]
    return "\n".join(md)


# ----------------------------------------------------------------------------------------------
# the formulas each check tests (named in its decorator, at its paper's derive options)
# ----------------------------------------------------------------------------------------------
def formulas_for(result: Result) -> list[str]:
    """The LaTeX of the closed forms ``result``'s check compares (the steps its decorator names, derived at its
    paper's options for the check's parameters); [] if none."""
    from attnverify.checks.registry import paper_of

    from attnverify.derive import derivation

    p = paper_of(result.id)
    labels = result.formulas
    if p is None or not labels:
        return []
    options = p.formula_options(result.params)
    steps = derivation(p.model, **options)
    if options:                                   # steps of the default options complete a variant's derivation
        steps += [s for s in derivation(p.model) if s.label not in {t.label for t in steps}]
    found = [next((s for s in steps if s.label == label), None) for label in labels]
    return [s.latex() for s in found if s is not None and len(s.latex()) < 1500]


# ----------------------------------------------------------------------------------------------
# Markdown
# ----------------------------------------------------------------------------------------------
def _md_cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def metric_cell(metric: Any) -> str:
    """An evidence's metric (a Reason or a ``str``) in a Markdown table cell: its mathematics as ``$…$``
    (:func:`attnverify.render.reasons.markdown`, on one line), every ``|`` of it (an absolute value's bars
    included) escaped so that the cell does not end there (a GFM table unescapes it before the mathematics)."""
    return _md_cell(reasons.markdown(metric, inline=True))


def findings(report: Report) -> list[str]:
    """Bullet points: what the claims ledger and the checks found that a reader must not miss."""

    out = []
    for c in getattr(report, "claims", []):
        cond, why = (reasons.markdown(x or "", inline=True) for x in (c.condition, c.reason))
        if c.verdict == "refuted":
            out.append(f"**{c.id}** is refuted: {cond}. {why}")
        elif c.verdict == "holds_if":
            out.append(f"**{c.id}** holds only if {cond}. {why}")
        elif c.verdict == "inconclusive":
            out.append(f"**{c.id}** is inconclusive: {why}")
    for r in report.results:
        if r.verdict == "fail":
            metric = reasons.markdown(r.evidence.metric, inline=True)
            out.append(f"check **{r.id}** failed: {metric} = {fmt(r.observed)}, "
                       f"passes when {r.evidence.comparison} {fmt(r.threshold)}")
        elif r.verdict == "error" and (r.evidence is not None or r.unresolved is not None):
            out.append(f"check **{r.id}** could not decide: {error_markdown(r, inline=True)}")
        elif r.verdict == "error":
            out.append(f"check **{r.id}** broke: `{r.error}`")
    return out


def _md_value(value: Any) -> str:
    v = jsonable(value)
    if isinstance(v, (int, float)):
        return fmt(v)
    text = json.dumps(v)
    return f"`{text}`" if len(text) <= 60 else "see report.json"


def to_markdown(report: Report, *, plots: dict[str, list[str]] | None = None, complete: bool = True,
                formulas: bool = True, claim_plots: dict[str, str] | None = None) -> str:
    """report.md: tables and findings first, then one section per check. ``plots`` maps a check id to the
    file names of its saved plots, ``claim_plots`` a claim id to the file name of its figure."""
    plots = plots or {}
    head = f"Profile `{report.profile}`, seed {report.seed}, version {report.version}. Overrides: " + (
        ", ".join(f"`{k}={set_syntax(v)}`" for k, v in report.options.items()) if report.options else "none") + "."
    from attnverify import provenance

    prov = provenance.collect(profile=report.profile, seed=report.seed, options=report.options)
    md = ["# attnverify audit", "", head, "", f"*Provenance:* {_md_cell(provenance.summary(prov))}.", ""]
    if not complete:
        md += ["**This run did not finish: the tables show the checks that completed.**", ""]
    md += ["## Checks", "", "| check | verdict | metric | observed | pass if | seconds |", "|---|---|---|---|---|---|"]
    for r in report.results:
        rule = f"{r.evidence.comparison} {fmt(r.threshold)}" if r.evidence else "-"
        metric = metric_cell(r.evidence.metric) if r.evidence else "-"
        md.append(f"| [`{r.id}`](#{_anchor(r.id)}) | **{r.verdict}** | {metric}"
                  f" | {fmt(r.observed)} | {rule} | {r.seconds:.1f} |")
    claims = list(getattr(report, "claims", []))
    md += ["", "## Claims", ""]
    if claims:
        md += [claims_markdown(report, ledger=getattr(report, "ledger", True))]
        md += ["", "A claim's verdict is computed from the evidence of the checks of this run (listed per claim "
               "in report.json); a refuted claim is a finding about the paper, not a failed check."]
        md += [f"\n![`{c}`: what its verdict rests on]({name})" for c, name in (claim_plots or {}).items()]
    else:
        md.append("None of the registered claims is fed by the checks that ran.")
    found = findings(report)
    md += ["", "## Findings", ""] + ([f"- {f}" for f in found] if found else
                                     ["Every check passed and no claim is refuted, conditional or inconclusive."])
    for r in report.results:
        md += ["", f"## {r.id}", "", f"**{r.verdict}**. *Compares* ({r.source}): {notation.unicode(r.compares)}", ""]
        if formulas:
            try:
                tex = formulas_for(r)
            except Exception:  # noqa: BLE001 -- a formula that cannot be derived is left out, not fatal
                tex = []
            md += [f"$$\n{t}\n$$" for t in tex] + ([""] if tex else [])
        ev = r.evidence
        if r.error:
            md += [f"**Error**: {error_markdown(r)}"] + ([""] if ev is not None else [])
        if ev is not None:
            md += ["| | value |", "|---|---|", f"| metric | {metric_cell(ev.metric)} |",
                   f"| observed | {fmt(ev.observed)} |", f"| passes if | observed {ev.comparison} {fmt(ev.threshold)} |"]
            for name in ("analytic", "numeric", "uncertainty"):
                value = getattr(ev, name)
                if value is not None and _md_value(value) != "see report.json":
                    md.append(f"| {name} | {_md_cell(_md_value(value))} |")
            md += ["", f"*Why this threshold:* {reasons.markdown(ev.reason)}"]
            md += [f"\n![{_md_cell(notation.unicode(ev.plots[i].title))}]({name})"
                   for i, name in enumerate(plots.get(r.id, []))]
        params = ", ".join(f"{k}={set_syntax(v)}" for k, v in r.params.items())
        md += ["", f"<details><summary>parameters</summary>\n\n`{params}`\n\nFull details: `report.json`, "
               f"check `{r.id}`.\n</details>"]
    return "\n".join(md) + "\n"


def _anchor(check_id: str) -> str:
    return re.sub(r"[^a-z0-9_-]", "", check_id.lower().replace(" ", "-"))


def set_syntax(value: Any) -> str:
    """A parameter value written as ``--set`` accepts it: ``1,2,3`` for a tuple, ``1,0;0,1`` for a matrix."""
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, np.ndarray) and value.ndim == 2:
        return ";".join(",".join(f"{x:g}" for x in row) for row in value)
    if isinstance(value, (tuple, list, np.ndarray)):
        return ",".join(set_syntax(v) for v in value)
    if isinstance(value, (float, np.floating)):
        return f"{float(value):g}"
    return str(value)


def write_report(report: Report, directory: str | os.PathLike, *, complete: bool = True,
                 note: str | None = None, derivations: list | None = None) -> Path:
    """Write ``report.json``, ``report.md``, one PNG per plot and per claim figure
    (:mod:`attnverify.render.claim_figures`), and the self-contained ``report.html`` into ``directory``.
    ``derivations``: the (title, steps) sections of the HTML report (default: those of the papers that ran, when
    the run is complete)."""
    from attnverify.render.claim_figures import claim_figure, claim_figure_name
    from attnverify.render.figures import png_bytes
    from attnverify.render.html import report_derivations, write_html

    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    write_json(report, out / "report.json", complete=complete, note=note)
    names: dict[str, list[str]] = {}
    pngs: dict[str, list[bytes]] = {}
    for r in report.results:
        if r.evidence is not None:
            for i, plot in enumerate(r.evidence.plots):
                name = plot_file_name(r.id, i)
                data = png_bytes(draw_plot(plot))
                (out / name).write_bytes(data)
                names.setdefault(r.id, []).append(name)
                pngs.setdefault(r.id, []).append(data)
    claim_names: dict[str, str] = {}
    claim_pngs: dict[str, bytes] = {}
    for c in getattr(report, "claims", []) or []:
        fig = claim_figure(c)
        if fig is not None:
            claim_pngs[c.id] = png_bytes(fig)
            claim_names[c.id] = claim_figure_name(c.id)
            (out / claim_names[c.id]).write_bytes(claim_pngs[c.id])
    write_text(out / "report.md", to_markdown(report, plots=names, complete=complete, claim_plots=claim_names))
    if derivations is None and complete:
        try:
            derivations = report_derivations(report)
        except Exception:  # noqa: BLE001 -- a derivation that cannot be built leaves its section out, not the report
            derivations = []
    write_html(report, out / "report.html", plots=pngs, claim_figures=claim_pngs, derivations=derivations,
               complete=complete)
    return out
