"""Reports: the JSON document, the Markdown audit with its plots, and the terminal tables.

``report.md`` is written for a researcher: the verdict tables (checks, then the claims ledger) and the
findings first, then one section per check with its claim, the closed form it tests (MathJax), the
comparison as a small table and its plots. The full details (curves, tables) are left to ``report.json``.
"""
from __future__ import annotations

import functools
import json
import math
import os
import re
import textwrap
from pathlib import Path
from typing import Any

import numpy as np

from attnverify.render import notation
from attnverify.outputs import write_text
from attnverify.checks.framework import Plot, Result
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
    ev = r.evidence
    return jsonable({
        "id": r.id, "claim": r.claim, "source": r.source, "verdict": r.verdict,
        "observed": r.observed, "threshold": r.threshold, "reason": r.reason,
        "metric": ev.metric if ev else None, "comparison": ev.comparison if ev else None,
        "analytic": ev.analytic if ev else None, "numeric": ev.numeric if ev else None,
        "uncertainty": ev.uncertainty if ev else None,
        "error": r.error, "unresolved": ev.unresolved if ev else None, "params": r.params, "details": r.details,
        "plot_titles": [p.title for p in ev.plots] if ev else [], "seconds": round(r.seconds, 3),
    })


def report_dict(report: Report, *, complete: bool = True, note: str | None = None) -> dict:
    """The JSON report. ``complete`` is False for the partial report of a run that has not finished (written
    after each check, and when a run is interrupted); ``note`` says why it stopped."""
    doc = {"version": report.version, "profile": report.profile, "seed": report.seed,
           "options": jsonable(report.options), "complete": bool(complete),
           "checks": [result_dict(r) for r in report.results],
           "claims": [claim_dict(c) for c in getattr(report, "claims", [])],
           "claims_summary": {v: sum(c.verdict == v for c in getattr(report, "claims", [])) for v in CLAIM_VERDICTS},
           "claims_not_evaluated": not_evaluated(report) if getattr(report, "ledger", True) else []}
    if note:
        doc["note"] = note
    return doc


def claim_dict(c: Any) -> dict:
    """A ledger row as JSON: its fields, the typed parts of its reason and condition, and their one-line Unicode
    renderings for tools (``reason_text``, ``condition_text``)."""
    from attnverify.render import reasons

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
    errors = [f"  {r.id}: {r.error}" for r in report.results if r.verdict == "error"]
    return "\n".join(lines + (["errors:"] + errors if errors else []))


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
    if skipped:
        lines.append("not evaluated: " + "; ".join(f"{m['id']} ({m['reason']})" for m in skipped))
    return "\n".join(lines)


def _wrap_reason(value: Any, room: int) -> list[str]:
    """A reason for the terminal, wrapped to ``room`` columns: the lead, then each item as a ``- `` line whose
    continuation lines are indented under its text."""
    from attnverify.render import reasons

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
    from attnverify.render import reasons

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
# plots
# ----------------------------------------------------------------------------------------------
def mathtext(label: str) -> str:
    """A label or title of the typesetting convention (mathematics between dollars, in LaTeX) as matplotlib
    mathtext (:func:`attnverify.render.notation.mathtext`); words outside the dollars stay words."""
    return notation.mathtext(label)


_KEY_RE = re.compile(r"(\S+\s*=\s*[-+0-9.eE]+|#\s*\d+)\s*$")
# a colour in a matplotlib format string: one of the single-letter colours (no marker is one of these letters) or
# a cycle colour C0..C9; given together with color=, matplotlib warns "color is redundantly defined"
_STYLE_COLOUR = re.compile(r"[bgrcmykw]|C\d")


def _colour_key(label: str) -> str:
    """Series that differ only in their leading words (``beta=10`` and ``bound beta=10``) share a colour."""
    m = _KEY_RE.search(label or "")
    return m.group(1).replace(" ", "") if m else label


def _wrap_keeping_math(text: str, width: int) -> str:
    """``text`` wrapped to ``width`` columns without breaking inside a $...$ mathtext span (a line break there
    leaves unbalanced dollars, and matplotlib prints the TeX source)."""
    parts = text.split("$")
    glued = "$".join(p.replace(" ", "\x00") if i % 2 else p for i, p in enumerate(parts))
    return "\n".join(line.replace("\x00", " ") for line in textwrap.wrap(glued, width))


@functools.lru_cache(maxsize=1)
def _figure_class():
    """matplotlib's Figure with a PNG representation, so that a notebook shows it (once) without pyplot."""
    import io

    from matplotlib.figure import Figure

    class ReportFigure(Figure):
        def _repr_png_(self) -> bytes:
            buf = io.BytesIO()
            self.savefig(buf, format="png", dpi=100)
            return buf.getvalue()

    return ReportFigure


def draw_plot(plot: Plot):
    """One :class:`~attnverify.checks.framework.Plot` as a matplotlib Figure (not registered with pyplot: save it
    with ``fig.savefig``, or show it as a notebook cell's value): mathtext labels, one colour
    per parameter value (solid and dotted curves of the same beta alike), the legend outside the axes when it is
    long, a wrapped title, and the zero line when the data change sign."""
    import matplotlib

    Figure = _figure_class()
    n = len({s.label for s in plot.series})
    keys: dict[str, int] = {}
    for s in plot.series:
        keys.setdefault(_colour_key(s.label), len(keys))
    many = len(keys) > 10
    cmap = matplotlib.colormaps["viridis" if many else "tab10"]
    colour = {k: cmap(i / max(1, len(keys) - 1)) if many else cmap(i % 10) for k, i in keys.items()}
    outside = n > 8
    # a Figure outside pyplot: no global figure list to leak into, and a notebook shows it once (as the value of
    # the cell), not a second time when the inline backend flushes pyplot's open figures
    fig = Figure(figsize=(8.6 if outside else 6.4, 4.4))
    ax = fig.subplots()
    ys = []
    seen: set[str] = set()
    for s in plot.series:
        x, y = np.asarray(s.x, dtype=float), np.asarray(s.y, dtype=float)
        ys.append(y[np.isfinite(y)])
        c = colour[_colour_key(s.label)]
        label = mathtext(s.label) if s.label and s.label not in seen else None   # one legend entry per label
        seen.add(s.label)
        kw = {} if _STYLE_COLOUR.search(s.style or "") else {"color": c}   # a colour in the style string wins
        if s.yerr is not None:
            ax.errorbar(x, y, yerr=np.asarray(s.yerr, dtype=float), fmt=s.style, label=label, capsize=2, **kw)
        else:
            ax.plot(x, y, s.style, label=label, **kw)
    ax.set_title(_wrap_keeping_math(mathtext(plot.title), 70), fontsize=10)
    ax.set(xlabel=mathtext(plot.xlabel), ylabel=mathtext(plot.ylabel))
    if plot.logx:
        ax.set_xscale("log")
    if plot.logy:
        ax.set_yscale("log")
    ally = np.concatenate(ys) if ys else np.array([])
    field = plot.ylabel.strip().split(" ")[0] in ("F", "F(rho)", "drift")     # a vector field: its zeros matter
    if not plot.logy and ally.size and (ally.min() < 0 < ally.max() or (field and ally.min() <= 0 <= ally.max())):
        ax.axhline(0.0, color="0.4", lw=0.8, zorder=0)
    if any(s.label for s in plot.series) and n <= 24:
        if outside:
            ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), ncol=1 + n // 17, frameon=False)
        else:
            ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def save_plot(plot: Plot, path: Path) -> None:
    """Draw one plot to a PNG (the Figure's own Agg canvas; pyplot and its backend are not involved)."""
    draw_plot(plot).savefig(path, dpi=110)


def plot_file_name(check_id: str, index: int) -> str:
    return f"{check_id.replace('.', '_')}_{index}.png"


# ----------------------------------------------------------------------------------------------
# the formulas each check tests (its paper's ``Paper.formulas``)
# ----------------------------------------------------------------------------------------------
def formulas_for(result: Result) -> list[str]:
    """The LaTeX of the closed forms ``result``'s check compares (from its paper's adapter); [] if none."""
    from attnverify.checks.registry import paper_of

    from attnverify.derive import derivation

    p = paper_of(result.id)
    if p is None:
        return []
    options, labels = p.formulas(result.id, result.params)
    if not labels:
        return []
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


def findings(report: Report) -> list[str]:
    """Bullet points: what the claims ledger and the checks found that a reader must not miss."""
    from attnverify.render import reasons

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
            out.append(f"check **{r.id}** failed: {r.evidence.metric} = {fmt(r.observed)}, "
                       f"passes when {r.evidence.comparison} {fmt(r.threshold)}")
        elif r.verdict == "error" and r.evidence is not None:
            out.append(f"check **{r.id}** could not decide: `{r.error}`")
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
                formulas: bool = True) -> str:
    """report.md: tables and findings first, then one section per check. ``plots`` maps a check id to the
    file names of its saved plots."""
    plots = plots or {}
    head = f"Profile `{report.profile}`, seed {report.seed}, version {report.version}. Overrides: " + (
        ", ".join(f"`{k}={_set_syntax(v)}`" for k, v in report.options.items()) if report.options else "none") + "."
    md = ["# attnverify audit", "", head, ""]
    if not complete:
        md += ["**This run did not finish: the tables show the checks that completed.**", ""]
    md += ["## Checks", "", "| check | verdict | metric | observed | pass if | seconds |", "|---|---|---|---|---|---|"]
    for r in report.results:
        rule = f"{r.evidence.comparison} {fmt(r.threshold)}" if r.evidence else "-"
        md.append(f"| [`{r.id}`](#{_anchor(r.id)}) | **{r.verdict}** | {_md_cell(r.evidence.metric) if r.evidence else '-'}"
                  f" | {fmt(r.observed)} | {rule} | {r.seconds:.1f} |")
    claims = list(getattr(report, "claims", []))
    md += ["", "## Claims", ""]
    if claims:
        md += [claims_markdown(report)]
        md += ["", "A claim's verdict is computed from the evidence of the checks of this run (listed per claim "
               "in report.json); a refuted claim is a finding about the paper, not a failed check."]
    else:
        md.append("None of the registered claims is fed by the checks that ran.")
    found = findings(report)
    md += ["", "## Findings", ""] + ([f"- {f}" for f in found] if found else
                                     ["Every check passed and no claim is refuted, conditional or inconclusive."])
    for r in report.results:
        md += ["", f"## {r.id}", "", f"**{r.verdict}**. *Claim* ({r.source}): {notation.unicode(r.claim)}", ""]
        if formulas:
            try:
                tex = formulas_for(r)
            except Exception:  # noqa: BLE001 -- a formula that cannot be derived is left out, not fatal
                tex = []
            md += [f"$$\n{t}\n$$" for t in tex] + ([""] if tex else [])
        ev = r.evidence
        if r.error:
            md += [f"**Error**: `{r.error}`"] + ([""] if ev is not None else [])
        if ev is not None:
            md += ["| | value |", "|---|---|", f"| metric | {_md_cell(ev.metric)} |",
                   f"| observed | {fmt(ev.observed)} |", f"| passes if | observed {ev.comparison} {fmt(ev.threshold)} |"]
            for name in ("analytic", "numeric", "uncertainty"):
                value = getattr(ev, name)
                if value is not None and _md_value(value) != "see report.json":
                    md.append(f"| {name} | {_md_cell(_md_value(value))} |")
            md += ["", f"*Why this threshold:* {notation.unicode(ev.reason)}"]
            md += [f"\n![{_md_cell(notation.unicode(ev.plots[i].title))}]({name})"
                   for i, name in enumerate(plots.get(r.id, []))]
        params = ", ".join(f"{k}={_set_syntax(v)}" for k, v in r.params.items())
        md += ["", f"<details><summary>parameters</summary>\n\n`{params}`\n\nFull details: `report.json`, "
               f"check `{r.id}`.\n</details>"]
    return "\n".join(md) + "\n"


def _anchor(check_id: str) -> str:
    return re.sub(r"[^a-z0-9_-]", "", check_id.lower().replace(" ", "-"))


def _set_syntax(value: Any) -> str:
    """A parameter value written as ``--set`` accepts it: ``1,2,3`` for a tuple, ``1,0;0,1`` for a matrix."""
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, np.ndarray) and value.ndim == 2:
        return ";".join(",".join(f"{x:g}" for x in row) for row in value)
    if isinstance(value, (tuple, list, np.ndarray)):
        return ",".join(_set_syntax(v) for v in value)
    if isinstance(value, (float, np.floating)):
        return f"{float(value):g}"
    return str(value)


def write_report(report: Report, directory: str | os.PathLike, *, complete: bool = True,
                 note: str | None = None) -> Path:
    """Write ``report.json``, ``report.md`` and one PNG per plot into ``directory``."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    write_json(report, out / "report.json", complete=complete, note=note)
    names: dict[str, list[str]] = {}
    for r in report.results:
        if r.evidence is not None:
            for i, plot in enumerate(r.evidence.plots):
                name = plot_file_name(r.id, i)
                save_plot(plot, out / name)
                names.setdefault(r.id, []).append(name)
    write_text(out / "report.md", to_markdown(report, plots=names, complete=complete))
    return out
