"""Reports: the JSON document, the Markdown audit with its plots, and the terminal table."""
from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from checks.framework import Plot, Result
from checks.runner import Report


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
        "error": r.error, "params": r.params, "details": r.details, "seconds": round(r.seconds, 3),
    })


def report_dict(report: Report) -> dict:
    return {"version": report.version, "profile": report.profile, "seed": report.seed,
            "options": jsonable(report.options), "checks": [result_dict(r) for r in report.results]}


def write_json(report: Report, path: str | os.PathLike) -> None:
    Path(path).write_text(json.dumps(report_dict(report), indent=2) + "\n")


def fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.4g}"


def table(report: Report) -> str:
    """The audit table: id, verdict, observed vs threshold, seconds."""
    rows = [("check", "verdict", "observed", "", "threshold", "seconds")]
    rows += [(r.id, r.verdict.upper(), fmt(r.observed), r.evidence.comparison if r.evidence else "",
              fmt(r.threshold), f"{r.seconds:.1f}") for r in report.results]
    widths = [max(len(row[i]) for row in rows) for i in range(6)]
    lines = ["  ".join(cell.ljust(w) if i < 2 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths)))
             for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    counts = {v: sum(r.verdict == v for r in report.results) for v in ("pass", "fail", "error")}
    lines.append(f"\n{counts['pass']} passed, {counts['fail']} failed, {counts['error']} errors "
                 f"(profile {report.profile}, seed {report.seed})")
    errors = [f"  {r.id}: {r.error}" for r in report.results if r.verdict == "error"]
    return "\n".join(lines + (["errors:"] + errors if errors else []))


def plot_file_name(check_id: str, index: int) -> str:
    return f"{check_id.replace('.', '_')}_{index}.png"


def save_plot(plot: Plot, path: Path) -> None:
    """Draw one plot to a PNG with matplotlib's Agg backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for s in plot.series:
        x, y = np.asarray(s.x, dtype=float), np.asarray(s.y, dtype=float)
        if s.yerr is not None:
            ax.errorbar(x, y, yerr=np.asarray(s.yerr, dtype=float), fmt=s.style, label=s.label, capsize=2)
        else:
            ax.plot(x, y, s.style, label=s.label)
    ax.set(title=plot.title, xlabel=plot.xlabel, ylabel=plot.ylabel)
    if plot.logx:
        ax.set_xscale("log")
    if plot.logy:
        ax.set_yscale("log")
    if any(s.label for s in plot.series):
        ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_report(report: Report, directory: str | os.PathLike) -> Path:
    """Write ``report.json``, ``report.md`` and one PNG per plot into ``directory``."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    write_json(report, out / "report.json")
    md = ["# attnverify audit", "",
          f"Profile `{report.profile}`, seed {report.seed}, version {report.version}. "
          f"Overrides: {json.dumps(jsonable(report.options)) if report.options else 'none'}.", "",
          "| check | verdict | observed | threshold | seconds |", "|---|---|---|---|---|"]
    md += [f"| `{r.id}` | **{r.verdict}** | {fmt(r.observed)} | "
           f"{(r.evidence.comparison + ' ') if r.evidence else ''}{fmt(r.threshold)} | {r.seconds:.1f} |"
           for r in report.results]
    for r in report.results:
        md += ["", f"## `{r.id}`: {r.verdict}", "", f"**Claim** ({r.source}): {r.claim}", ""]
        if r.evidence is None:
            md += [f"**Error**: `{r.error}`"]
        else:
            ev = r.evidence
            md += [f"**Metric**: {ev.metric}", "",
                   f"**Observed** {fmt(ev.observed)}; passes when observed {ev.comparison} "
                   f"**threshold** {fmt(ev.threshold)}.", "",
                   f"**Why this threshold**: {ev.reason}", ""]
            for name in ("analytic", "numeric", "uncertainty"):
                value = getattr(ev, name)
                if value is not None:
                    md.append(f"- {name}: `{json.dumps(jsonable(value))[:400]}`")
            for i, plot in enumerate(ev.plots):
                name = plot_file_name(r.id, i)
                save_plot(plot, out / name)
                md += ["", f"![{plot.title}]({name})"]
        params = ", ".join(f"{k}={json.dumps(jsonable(v))}" for k, v in r.params.items())
        md += ["", f"Parameters: {params}"]
        if r.details:
            md += ["", "<details><summary>details</summary>", "", "```json",
                   json.dumps(jsonable(r.details), indent=1)[:20000], "```", "</details>"]
    (out / "report.md").write_text("\n".join(md) + "\n")
    return out
