"""Jupyter displays of the data a run returns: a check's result and a claim's ledger row, as Markdown and HTML
(the app's :class:`attnverify.api.Result` and :class:`attnverify.checks.claims.ClaimResult` show themselves
through these)."""
from __future__ import annotations

import html
from typing import Any

from attnverify.render import reasons


def _num(x: float | None) -> str:
    return "-" if x is None else f"{x:.4g}"


def result_markdown(r: Any) -> str:
    """A check's result: its verdict, what it compares, the comparison and why its threshold is what it is."""
    rows = [f"**`{r.id}`: {r.verdict}** ({r.source})", "", r.compares, "",
            "| metric | observed | pass if | threshold |", "|---|---|---|---|"]
    ev = r.evidence
    if ev is None:
        error = reasons.markdown("Unresolved: " + r.unresolved) if getattr(r, "unresolved", None) else f"`{r.error}`"
        return "\n".join(rows[:4] + [f"**Error:** {error}"])
    metric = reasons.markdown(ev.metric, inline=True).replace("|", "\\|")       # a table cell: its bars escaped
    rows.append(f"| {metric} | {_num(ev.observed)} | {ev.comparison} | {_num(ev.threshold)} |")
    return "\n".join(rows + ["", f"*Why this threshold:* {reasons.markdown(ev.reason)}"])


def _error_html(r: Any) -> str:
    """The error of a result without evidence: an unresolved verdict's typed text in MathML, else escaped."""
    if getattr(r, "unresolved", None):
        return reasons.html("Unresolved: " + r.unresolved)
    return html.escape(r.error or "")


def result_html(r: Any) -> str:
    ev = r.evidence
    body = (f"<tr><td>{reasons.html(ev.metric)}</td><td>{_num(ev.observed)}</td><td>{html.escape(ev.comparison)}"
            f"</td><td>{_num(ev.threshold)}</td></tr>") if ev else \
        f"<tr><td colspan=4>error: {_error_html(r)}</td></tr>"
    return (f"<div><b><code>{html.escape(r.id)}</code>: {html.escape(r.verdict)}</b> "
            f"({html.escape(r.source)})<br>{html.escape(r.compares)}<table><tr><th>metric</th>"
            f"<th>observed</th><th>pass if</th><th>threshold</th></tr>{body}</table>"
            + (f"<i>why this threshold:</i> {reasons.html(ev.reason)}" if ev else "") + "</div>")


def claim_markdown(c: Any) -> str:
    """A claim's ledger row: verdict, statement, condition or counterexample, reason, checks, reproduce command."""
    lines = [f"**`{c.id}`: {c.verdict}** (Paper {c.paper}, {c.source})", "", c.statement, ""]
    if c.condition:
        lines += [f"*{'Counterexample' if c.verdict == 'refuted' else 'Condition'}:* {reasons.markdown(c.condition)}",
                  ""]
    lines += [f"*Reason:* {reasons.markdown(c.reason)}", "", "*Checks:* " + ", ".join(f"`{x}`" for x in c.checks)]
    if c.command:
        lines += ["", f"*Reproduce:* `{c.command}`"]
    return "\n".join(lines)


def claim_html(c: Any) -> str:
    cond = (f"<br><i>{'counterexample' if c.verdict == 'refuted' else 'condition'}:</i> "
            f"{reasons.html(c.condition)}") if c.condition else ""
    return (f"<div><b><code>{html.escape(c.id)}</code>: {html.escape(c.verdict)}</b> "
            f"(Paper {html.escape(c.paper)}, {html.escape(c.source)})<br>{html.escape(c.statement)}"
            f"{cond}<br><i>reason:</i> {reasons.html(c.reason)}</div>")


def report_html(rep: Any) -> str:
    """A run's audit table and claims ledger as an HTML table pair."""
    rows = "".join(f"<tr><td><code>{html.escape(r.id)}</code></td><td><b>{r.verdict}</b></td>"
                   f"<td>{_num(r.observed)}</td>"
                   f"<td>{html.escape(r.evidence.comparison) if r.evidence else ''} {_num(r.threshold)}</td></tr>"
                   for r in rep.results)
    claims = "".join(f"<tr><td><code>{html.escape(c.id)}</code></td><td><b>{c.verdict}</b></td>"
                     f"<td>{reasons.html(c.condition or c.reason)}</td></tr>" for c in rep.claims)
    out = (f"<div><p>attnverify audit: profile {rep.profile}, seed {rep.seed}</p><table><tr><th>check</th>"
           f"<th>verdict</th><th>observed</th><th>pass if</th></tr>{rows}</table>")
    if claims:
        out += f"<table><tr><th>claim</th><th>verdict</th><th>condition / reason</th></tr>{claims}</table>"
    return out + "</div>"


def step_latex(step: Any) -> str:
    """A derivation step (:class:`attnverify.theory.derivation.Step`): its result as a display equation."""
    return f"$$\\displaystyle {step.latex()}$$"


def step_markdown(step: Any) -> str:
    """A derivation step: the statement, the result as a display equation, and why it holds (the inline mathematics
    of the convention is Markdown's own)."""
    return f"{step.statement}\n\n$$\n{step.latex()}\n$$\n\n*Because:* {step.reason}"
