"""``report.html``: the whole audit in one self-contained page.

- the audit table (checks), then the claims ledger with filters by verdict and by paper (a few lines of inline
  JavaScript, no framework; ``report.html?verdict=refuted&paper=B`` opens with them set), each claim's statement,
  evidence and figure in a fold-out row;
- one section per check: its claim, its comparison and its plots;
- the derivations: each step's statement, its result as MathML and its kind as a mark (= identity, → limit,
  ≈ approximation with its order, A model assumption, S the paper's statement), and why it holds.

Mathematics is MathML (SymPy's presentation printer, :mod:`attnverify.render.reasons`); figures are embedded as
base64 PNG; there is no external file, font, script or network access: the page opens offline, as it is.
"""
from __future__ import annotations

import base64
import html as _html
import json
import os
from pathlib import Path
from typing import Any

from attnverify.outputs import write_text
from attnverify.render import reasons

__all__ = ["report_html", "write_html", "STEP_MARKS"]

#: the mark of each kind of derivation step (attnverify.theory.derivation.STEP_KINDS) and what it says
STEP_MARKS = {
    "identity": ("=", "identity: an equality SymPy computed or proved"),
    "limit": ("→", "limit: exact only in the limit"),
    "approximation": ("≈", "approximation: a truncated expansion, with the order of what it neglects"),
    "assumption": ("A", "model assumption: taken, not derived"),
    "statement": ("S", "the paper's statement, reproduced for comparison (not derived)"),
}
_VERDICT_CLASS = {"holds": "ok", "pass": "ok", "holds_if": "cond", "not_refuted": "cond", "refuted": "bad",
                  "fail": "bad", "inconclusive": "unk", "error": "unk"}

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:1.5em auto;max-width:75em;padding:0 1em;
color:#1a1a1a;line-height:1.45}
h1{font-size:1.6em}h2{margin-top:2em;border-bottom:1px solid #ccc}h3{margin-bottom:.3em}
table{border-collapse:collapse;width:100%;font-size:.92em}th,td{border-bottom:1px solid #e2e2e2;padding:.3em .5em;
text-align:left;vertical-align:top}th{background:#f4f4f4}td.num{text-align:right;font-variant-numeric:tabular-nums}
code{font-size:.95em}.verdict{font-weight:600;white-space:nowrap}.ok{color:#17663a}.cond{color:#8a5a00}
.bad{color:#b00020}.unk{color:#555}ul.items{margin:.2em 0 .2em 1.2em;padding:0}
tr.detail td{background:#fafafa;border-bottom:2px solid #ddd}details summary{cursor:pointer;color:#225}
figure{margin:.6em 0}figure img{max-width:100%;height:auto;border:1px solid #eee}figcaption{font-size:.85em;color:#444}
pre{background:#f6f6f6;padding:.5em;overflow-x:auto;font-size:.8em;max-height:30em}
.filters{margin:.5em 0}.filters label{margin-right:1em}.mark{display:inline-block;min-width:1.6em;text-align:center;
font-weight:700;border:1px solid #999;border-radius:3px;margin-right:.4em;padding:0 .2em}
.mark-identity{color:#17663a}.mark-limit{color:#1f4e9c}.mark-approximation{color:#8a5a00}.mark-assumption{color:#555}
.mark-statement{color:#6a1b9a}ol.steps li{margin-bottom:1em}.result{overflow-x:auto;padding:.2em 0}.why{font-size:.9em;
color:#333}.tex{font-style:italic}
"""

_JS = """
(function () {
  var verdict = document.getElementById('filter-verdict'), paper = document.getElementById('filter-paper');
  function apply() {
    var shown = 0;
    document.querySelectorAll('#ledger tbody tr').forEach(function (tr) {
      var ok = (!verdict.value || tr.dataset.verdict === verdict.value) &&
               (!paper.value || tr.dataset.paper === paper.value);
      tr.hidden = !ok;
      if (ok && tr.classList.contains('claim')) { shown += 1; }
    });
    document.getElementById('shown').textContent = String(shown);
  }
  var query = new URLSearchParams(window.location.search);   // report.html?verdict=refuted&paper=B
  [['verdict', verdict], ['paper', paper]].forEach(function (pair) {
    var wanted = query.get(pair[0]);
    if (wanted !== null && Array.prototype.some.call(pair[1].options, function (o) { return o.value === wanted; })) {
      pair[1].value = wanted;
    }
  });
  verdict.addEventListener('change', apply);
  paper.addEventListener('change', apply);
  apply();
})();
"""


def _e(text: Any) -> str:
    return _html.escape(str(text))


def _anchor(check_id: str) -> str:
    return "check-" + "".join(ch if ch.isalnum() else "-" for ch in check_id)


def _png(data: bytes, alt: str) -> str:
    return f'<img alt="{_e(alt)}" src="data:image/png;base64,{base64.b64encode(data).decode("ascii")}">'


def _verdict(v: str) -> str:
    return f'<span class="verdict {_VERDICT_CLASS.get(v, "unk")}">{_e(v)}</span>'


def _number(x: Any) -> str:
    from attnverify.checks.reason import Number

    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return "–" if x is None else _e(x)
    return reasons.number_text(Number(x))


# ----------------------------------------------------------------------------------------------------------------
def _audit(report: Any) -> list[str]:
    rows = [f'<tr><td><a href="#{_anchor(r.id)}"><code>{_e(r.id)}</code></a></td><td>{_verdict(r.verdict)}</td>'
            f'<td>{reasons.html(r.evidence.metric) if r.evidence else "–"}</td>'
            f'<td class="num">{_number(r.observed)}</td>'
            f'<td>{_e(r.evidence.comparison) if r.evidence else ""} {_number(r.threshold)}</td>'
            f'<td class="num">{r.seconds:.1f}</td></tr>' for r in report.results]
    counts = {v: sum(r.verdict == v for r in report.results) for v in ("pass", "fail", "error")}
    return ['<section id="checks"><h2>Checks</h2>',
            f"<p>{counts['pass']} passed, {counts['fail']} failed, {counts['error']} errors. A check fails only when "
            "our derivation and our numerics disagree; what a paper says is the ledger's business.</p>",
            '<table id="audit"><thead><tr><th>check</th><th>verdict</th><th>metric</th><th>observed</th>'
            "<th>passes if</th><th>seconds</th></tr></thead><tbody>", *rows, "</tbody></table></section>"]


def _claims(report: Any, claim_figures: dict[str, bytes]) -> list[str]:
    claims = list(getattr(report, "claims", []) or [])
    if not claims:
        return ['<section id="claims"><h2>Claims ledger</h2><p>None of the registered claims is fed by the checks '
                'that ran.</p><table id="ledger"><tbody></tbody></table></section>']
    verdicts = sorted({c.verdict for c in claims})
    papers = sorted({c.paper for c in claims})
    options = lambda values: "".join(f'<option value="{_e(v)}">{_e(v)}</option>' for v in values)  # noqa: E731
    out = ['<section id="claims"><h2>Claims ledger</h2>',
           '<div class="filters"><label>verdict <select id="filter-verdict"><option value="">all</option>'
           f'{options(verdicts)}</select></label><label>paper <select id="filter-paper"><option value="">all</option>'
           f'{options(papers)}</select></label><span id="shown">{len(claims)}</span> of {len(claims)} claims shown'
           "</div>",
           '<table id="ledger"><thead><tr><th>claim</th><th>paper</th><th>verdict</th><th>condition / reason</th>'
           "</tr></thead><tbody>"]
    for c in claims:
        data = f'data-verdict="{_e(c.verdict)}" data-paper="{_e(c.paper)}"'
        main = reasons.html(c.condition) if c.condition else reasons.html(c.reason or "")
        out.append(f'<tr class="claim" id="claim-{_e(c.id)}" {data}><td><code>{_e(c.id)}</code></td>'
                   f"<td>{_e(c.paper)}</td><td>{_verdict(c.verdict)}</td><td>{main}</td></tr>")
        out.append(f'<tr class="detail" {data}><td colspan="4">{_claim_detail(c, claim_figures.get(c.id))}</td></tr>')
    out.append("</tbody></table></section>")
    return out


def _claim_detail(c: Any, png: bytes | None) -> str:
    checks = ", ".join(f'<a href="#{_anchor(cid)}"><code>{_e(cid)}</code></a>' for cid in c.checks) or "–"
    parts = [f"<p><b>Statement</b> ({_e(c.source)}): {reasons.html(c.statement)}</p>"]
    if c.condition:
        parts.append(f"<p><b>Reason</b>: {reasons.html(c.reason)}</p>")
    parts.append(f"<p><b>Checks</b>: {checks}" + (f"; <b>reproduce</b>: <code>{_e(c.command)}</code>" if c.command
                                                   else "") + "</p>")
    if png:
        parts.append(f"<figure>{_png(png, c.id)}<figcaption>What the verdict of <code>{_e(c.id)}</code> rests "
                     "on.</figcaption></figure>")
    if c.evidence:
        parts.append(f"<pre>{_e(json.dumps(c.evidence, indent=1, default=_plain))}</pre>")
    return f"<details><summary>statement, evidence{' and figure' if png else ''}</summary>{''.join(parts)}</details>"


def _plain(value: Any) -> Any:
    """What json cannot write as it is: an array as its list, a NumPy scalar as its number, anything else as text."""
    if hasattr(value, "tolist"):
        return value.tolist()
    return str(value)


def _check_sections(report: Any, plots: dict[str, list[bytes]]) -> list[str]:
    out = ['<section id="check-details"><h2>The checks</h2>']
    for r in report.results:
        ev = r.evidence
        out.append(f'<section id="{_anchor(r.id)}"><h3><code>{_e(r.id)}</code>: {_verdict(r.verdict)}</h3>'
                   f"<p>{reasons.html(r.compares)} <i>({_e(r.source)})</i></p>")
        if r.unresolved is not None:          # the typed text of an unresolved verdict: its mathematics in MathML
            out.append(f"<p><b>Error</b>: {reasons.html('Unresolved: ' + r.unresolved)}</p>")
        elif r.error:
            out.append(f"<p><b>Error</b>: <code>{_e(r.error)}</code></p>")
        if ev is not None:
            out.append(f"<p>{reasons.html(ev.metric)} = {_number(ev.observed)}; passes if {_e(ev.comparison)} "
                       f"{_number(ev.threshold)}. <i>Why this threshold:</i> {reasons.html(ev.reason)}</p>")
            titles = [p.title for p in ev.plots]
            for i, png in enumerate(plots.get(r.id, [])):
                caption = reasons.html(titles[i]) if i < len(titles) else ""
                out.append(f"<figure>{_png(png, f'{r.id} plot {i + 1}')}<figcaption>{caption}</figcaption></figure>")
        out.append("</section>")
    out.append("</section>")
    return out


def _derivations(sections: list[tuple[str, list]]) -> list[str]:
    if not sections:
        return []
    legend = "".join(f'<li><span class="mark mark-{k}">{_e(m)}</span>{_e(text)}</li>'
                     for k, (m, text) in STEP_MARKS.items())
    out = ['<section id="derivations"><h2>Derivations</h2><p>Every result below was produced by SymPy from the '
           f'model. The mark of each step says what it is:</p><ul>{legend}</ul>']
    for title, steps in sections:
        out.append(f"<h3>{reasons.html(title)}</h3><ol class=\"steps\">")
        for step in steps:
            out.append(f"<li>{_step(step)}</li>")
        out.append("</ol>")
    out.append("</section>")
    return out


def _step(step: Any) -> str:
    import sympy as sp

    kind = getattr(step, "kind", "identity")
    mark, meaning = STEP_MARKS.get(kind, ("?", kind))
    order = getattr(step, "order", "")
    badge = f'<span class="mark mark-{_e(kind)}" title="{_e(meaning)}">{_e(mark)}</span>'
    if order:
        badge += f'<span class="order">{reasons.mathml(order)}</span> '
    result = step.result
    inner = reasons.mathml_inner(result)
    if step.label and not isinstance(result, sp.Eq):
        inner = f"<mrow>{reasons.mathml_inner(step.label)}<mo>=</mo>{inner}</mrow>"
    body = f'<math xmlns="http://www.w3.org/1998/Math/MathML" display="block">{inner}</math>'
    return (f"{badge}{reasons.html(step.statement)}<div class=\"result\">{body}</div>"
            f"<div class=\"why\"><i>Why:</i> {reasons.html(step.reason)}</div>")


# ----------------------------------------------------------------------------------------------------------------
def report_html(report: Any, *, plots: dict[str, list[bytes]] | None = None,
                claim_figures: dict[str, bytes] | None = None, derivations: list[tuple[str, list]] | None = None,
                complete: bool = True) -> str:
    """The page: ``plots`` (check id -> PNG bytes of its plots, in order), ``claim_figures`` (claim id -> PNG),
    ``derivations`` ((title, steps) per section)."""
    opts = ", ".join(f"{k}={v}" for k, v in (getattr(report, "options", None) or {}).items()) or "none"
    head = (f"Profile <b>{_e(report.profile)}</b>, seed {_e(report.seed)}, version {_e(report.version)}; "
            f"overrides: {_e(opts)}.")
    prov = getattr(report, "provenance", None)
    if isinstance(prov, dict) and prov:
        head += " " + "; ".join(f"{_e(k)}: {_e(v)}" for k, v in prov.items()) + "."
    nav = '<nav><a href="#checks">checks</a> · <a href="#claims">claims</a> · <a href="#check-details">details</a>'
    nav += ' · <a href="#derivations">derivations</a></nav>' if derivations else "</nav>"
    body = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            "<title>attnverify audit</title>", f"<style>{_CSS}</style></head><body>",
            f"<header><h1>attnverify audit</h1><p>{head}</p>{nav}</header>"]
    if not complete:
        body.append("<p><b>This run did not finish: the tables show the checks that completed.</b></p>")
    body += _audit(report) + _claims(report, claim_figures or {}) + _check_sections(report, plots or {})
    body += _derivations(derivations or [])
    body += [f"<script>{_JS}</script>", "</body></html>"]
    return "\n".join(body) + "\n"


def write_html(report: Any, path: str | os.PathLike, **kw: Any) -> Path:
    """Write :func:`report_html` to ``path``."""
    write_text(path, report_html(report, **kw))
    return Path(path)


def report_derivations(report: Any) -> list[tuple[str, list]]:
    """The derivation sections of the papers whose checks ran in ``report`` (each paper's ``sections()``, from the
    derivation cache when warm)."""
    from attnverify.checks.registry import paper_of
    from attnverify.derive import derivation

    seen, out = set(), []
    for r in report.results:
        p = paper_of(r.id)
        if p is None or p.model in seen:
            continue
        seen.add(p.model)
        for section in p.sections():
            out.append((section.title, derivation(p.model, **section.options)))
    return out

