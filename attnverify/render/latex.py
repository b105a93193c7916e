r"""A LaTeX document for papers: every derived formula as a numbered, labelled equation, the prose of the derivation
steps with the mark of each step's kind, and (optionally) the audit: provenance, checks table, claims ledger (each
row citing its paper), figures, and a bibliography.

- Every symbol is typeset by SymPy's printer with the notation's names (:mod:`attnverify.render.exprs`) or by the
  notation module (:mod:`attnverify.render.notation`): a text's mathematics is written between dollars in LaTeX
  and passes through; its words are escaped. The ledger's reasons are typeset from their typed parts; a reason
  still one plain string has its ASCII mathematics typeset (:mod:`attnverify.render.ascii_math`). Numbers in exponent form are set as
  ``$6.33\times10^{-7}$`` (:func:`attnverify.render.notation.num`).
- UTF-8 input and T1 fonts (Latin Modern when installed); amsmath, amssymb, graphicx, longtable and array, all in
  Debian's ``texlive-latex-base``. The audit and ledger tables are ``longtable``s: they break across pages.
- Equations fit the text width (:mod:`attnverify.render.latex_math`): long expressions are broken at sums and
  products inside ``split``, wide matrices are shown entry by entry and very long expressions get named
  sub-expressions, defined below the equation in an ``align*``; never shrunk.
- Each equation is ``\label{eq:<section>:<name>}``: the section key of its paper's adapter and the step's short
  semantic name (``eq:A:J-fixed``); the labels are listed at the end of the document. The bibliography is a
  ``thebibliography`` built from the papers' BibTeX (:mod:`attnverify.references`): no BibTeX run is needed.
  ``fragment=True`` leaves out the preamble, the citations and the bibliography, so the body can be ``\input``
  into a paper (which loads the packages above).
"""
from __future__ import annotations

import sys

from attnverify.render import ascii_math, kinds, notation, reasons
from attnverify.derive import derivation

# ----------------------------------------------------------------------------------------------
# equations: numbered, labelled, broken over lines (attnverify.render.latex_math)
# ----------------------------------------------------------------------------------------------
def equation_label(section: str, step, index: int) -> str:
    """The label of a step's equation: ``eq:<section>:<name>`` (``eq:A:J-fixed``); a step without a name is
    numbered (``eq:A:3``)."""
    return f"eq:{section}:{step.name or index}"


def equation(step, label: str | None) -> str:
    """One step's result as a numbered equation (``split`` when it needs several lines, then the entries and
    named sub-expressions it refers to: :func:`attnverify.render.latex_math.display`); its left side is the
    step's label (LaTeX), or the left side of an ``Eq``."""
    import sympy as sp

    from attnverify.render import exprs
    from attnverify.render.latex_math import display

    if isinstance(step.result, sp.Eq):
        return display(exprs.latex(step.result.lhs), step.result.rhs, label)
    return display(step.label, step.result, label)


def derivation_section(title: str, steps: list, key: str) -> tuple[list[str], list[tuple[str, str]]]:
    """A section: per step its statement, the labelled equation and why it holds; and the (label, left side)
    pairs. A name used twice in one derivation gets a suffix (the tests keep the papers' names unique)."""
    heading = notation.latex(title)
    parts = [rf"\section[{heading}]{{\raggedright {heading}}}"]       # long titles break between words, not out
    labels: list[tuple[str, str]] = []
    seen: set[str] = set()
    for i, step in enumerate(steps, 1):
        name = equation_label(key, step, i)
        k = 2
        while name in seen:
            name = f"{equation_label(key, step, i)}-{k}"
            k += 1
        seen.add(name)
        labels.append((name, step.label))
        parts += [r"\noindent " + kinds.latex(step) + " " + notation.latex(step.statement), equation(step, name),
                  r"\noindent{\small\emph{Why:} " + notation.latex(step.reason) + "}", r"\par\medskip", ""]
    return parts, labels


# ----------------------------------------------------------------------------------------------
# the audit: tables and figures
# ----------------------------------------------------------------------------------------------
def _longtable(columns: str, head: str, rows: list[str]) -> str:
    """A table that breaks across pages, its header repeated on each page."""
    return "\n".join([r"\begingroup\small\renewcommand{\arraystretch}{1.25}", rf"\begin{{longtable}}{{{columns}}}",
                      r"\hline", head + r" \\", r"\hline", r"\endfirsthead", r"\hline", head + r" \\", r"\hline",
                      r"\endhead", r"\hline", r"\endfoot", *rows, r"\end{longtable}", r"\endgroup"])


def _number(x) -> str:
    """A table cell's number (:func:`attnverify.render.notation.num`, 4 significant digits), ``--`` when there is none."""
    return notation.num(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else "--"


def audit_table(checks: list[dict]) -> str:
    """The audit table of a report's ``checks`` list (as in the JSON report)."""
    rules = {"<=": r"$\le$", "<": "$<$", ">=": r"$\ge$", ">": "$>$"}
    rows = [rf"\texttt{{{notation.escape(c['id'])}}} & {notation.escape(c['verdict'])} & "
            rf"{_number(c.get('observed'))} & {rules.get(c.get('comparison'), '')} & {_number(c.get('threshold'))} \\"
            for c in checks]
    return _longtable("@{}llrcr@{}", "check & verdict & observed & pass if & threshold", rows)


def errors_part(checks: list[dict]) -> str | None:
    """The checks of a report's ``checks`` list whose verdict is ``error``, each with its error: an unresolved
    verdict's text typeset from its typed parts (``unresolved_parts``: :func:`attnverify.render.reasons.latex`), an
    untyped one with its ASCII mathematics typeset, any other error escaped; None when every check decided."""
    from attnverify.checks.reason import as_reason

    rows = []
    for c in checks:
        if c.get("verdict") != "error":
            continue
        parts = c.get("unresolved_parts")
        if parts and (parts.get("items") or any(p.get("type") != "text" for p in parts.get("lead", []))):
            text = reasons.latex("Unresolved: " + as_reason(parts))
        elif c.get("unresolved"):
            text = "Unresolved: " + ascii_math.latex(c["unresolved"])
        else:
            text = notation.escape(c.get("error") or "")
        rows.append(rf"\item \texttt{{{notation.escape(c['id'])}}}: {text}")
    if not rows:
        return None
    return "\n".join([r"\noindent\emph{Checks that could not decide, or broke:}", r"\begin{itemize}", *rows,
                      r"\end{itemize}"])


def claims_table(claims: list[dict], cites: dict[str, str] | None = None) -> str:
    """The claims ledger (a report's ``claims`` list): id (with ``\\cite`` of its paper when ``cites`` maps the
    paper's key to a citation key), verdict, and the condition (for ``holds_if`` and ``refuted``) or the reason:
    text of the typesetting convention, its ASCII mathematics typeset (:mod:`attnverify.render.ascii_math`)."""
    cites = cites or {}

    def cite(c: dict) -> str:
        key = cites.get(c.get("paper") or c["id"].split(".", 1)[0])
        return rf"~\cite{{{key}}}" if key else ""

    rows = [rf"\texttt{{{notation.escape(c['id'])}}}{cite(c)} & {notation.escape(c['verdict'])} & "
            rf"{_ledger_text(c)} \\" for c in claims]
    return _longtable(r"@{}ll>{\raggedright\arraybackslash}p{0.5\linewidth}@{}",
                      "claim & verdict & condition / reason", rows)


def _ledger_text(c: dict) -> str:
    """A ledger row's condition (when there is one) or reason: typeset from its typed parts
    (:func:`attnverify.render.reasons.latex`: mathematics, numbers and items); a reason that is still one plain
    text has its ASCII mathematics typeset (:mod:`attnverify.render.ascii_math`)."""
    key = "condition" if c.get("condition") else "reason"
    parts = c.get(f"{key}_parts")
    if parts and (parts.get("items") or any(p.get("type") != "text" for p in parts.get("lead", []))):
        return reasons.latex(parts)
    return ascii_math.latex(c.get(key) or "")


def provenance_part(prov: dict | None) -> str:
    """What produced the report (:mod:`attnverify.provenance`), as a compact list."""
    if not prov:
        return r"\noindent\emph{Provenance:} not recorded in this report."
    packages = ", ".join(f"{name} {ver}" for name, ver in (prov.get("packages") or {}).items() if ver)
    git = prov.get("git")
    commit = (f"commit {git['commit']}" + (" with local changes" if git.get("dirty") else "")) if git else \
        "not run from a git checkout"
    options = ", ".join(f"{k} = {v}" for k, v in (prov.get("options") or {}).items()) or "none"
    rows = [f"attnverify {prov.get('attnverify')}, Python {prov.get('python')}; {packages}", commit,
            f"{prov.get('time_utc')}, {prov.get('platform')}",
            f"profile {prov.get('profile')}, seed {prov.get('seed')}; options differing from the defaults: {options}"]
    return "\n".join([r"\noindent\emph{Provenance:}", r"\begin{itemize}\small",
                      *(r"\item " + notation.escape(r) for r in rows), r"\end{itemize}"])


def _citation_keys() -> dict[str, str]:
    """Paper key -> citation key of every registered paper."""
    from attnverify.checks.registry import papers
    from attnverify.references import cite_key

    return {p.key: cite_key(p) for p in papers()}


def figure_caption(check_id: str, index: int, count: int, title: str | None) -> str:
    """A figure's caption: the check, the plot's place among the check's plots, and the plot's title (distinct
    for every figure of a document)."""
    where = rf"\texttt{{{notation.escape(check_id)}}}" + (f", plot {index} of {count}" if count > 1 else "")
    return where + (f": {ascii_math.latex(title)}" if title else "")


def figures_part(report: dict, figures: dict[str, list[str]]) -> list[str]:
    """The figures of each check (``figures``: check id -> image paths), captioned with the check id and the plot
    titles of the report (``plot_titles``); the float queue is flushed every nine figures (the caller flushes it
    after the last)."""
    parts: list[str] = []
    shown = 0
    for c in report["checks"]:
        paths = figures.get(c["id"], [])
        titles = list(c.get("plot_titles") or [])
        for i, path in enumerate(paths):
            caption = figure_caption(c["id"], i + 1, len(paths), titles[i] if i < len(titles) else None)
            parts += [r"\begin{figure}[htbp]", r"\centering", rf"\includegraphics[width=0.8\linewidth]{{{path}}}",
                      rf"\caption{{{caption}}}", r"\end{figure}"]
            shown += 1
            if shown % 9 == 0:
                parts.append(r"\clearpage")
    return parts


def _compute_sections(models: tuple[str, ...] | None = None) -> tuple[list[str], list[tuple[str, str]]]:
    from attnverify.checks.registry import papers

    parts, all_labels = [], []
    for paper in papers():
        if models is not None and paper.model not in models:
            continue
        for section in paper.sections():
            sec, labels = derivation_section(section.title, derivation(paper.model, **section.options), section.key)
            parts += sec
            all_labels += labels
    return parts, all_labels


def derivation_sections(models: tuple[str, ...] | None = None) -> tuple[list[str], list[tuple[str, str]]]:
    """The derivation sections of every registered paper (of those whose model names are ``models``), and their
    equation labels, cached beside the derivations (keyed by the code version, the sources of this module and the
    notation module, and the selection): typesetting the long expressions takes seconds, reading them back none."""
    import hashlib
    import json
    import os
    from pathlib import Path

    from attnverify.derive import cache_root, code_version

    root = cache_root()
    from attnverify.render import breaking, exprs, latex_math

    sources = "".join(Path(m.__file__).read_text() for m in (sys.modules[__name__], notation, exprs, breaking,
                                                              latex_math, kinds))
    key = hashlib.sha256((code_version() + sources + repr(models)).encode()).hexdigest()[:16]
    path = None if root is None else root / "derivations" / f"latex-{key}.json"
    if path is not None and path.is_file():
        try:
            parts, labels = json.loads(path.read_text(encoding="utf-8"))
            return parts, [tuple(x) for x in labels]
        except (OSError, ValueError):
            pass
    parts, labels = _compute_sections(models)
    if path is not None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps([parts, labels]), encoding="utf-8")
            os.replace(tmp, path)
        except OSError:
            pass
    return parts, labels


PREAMBLE = [
    r"\documentclass[10pt]{article}", r"\usepackage[utf8]{inputenc}",
    r"\IfFileExists{lmodern.sty}{\usepackage[T1]{fontenc}\usepackage{lmodern}}{}",
    r"\usepackage[margin=2cm]{geometry}", r"\usepackage{amsmath}", r"\usepackage{amssymb}",
    r"\usepackage{graphicx}", r"\usepackage{longtable}", r"\usepackage{array}", r"\allowdisplaybreaks",
    r"\title{attnverify: derivations and audit}", r"\date{}",
]


def document(report: dict | None, *, figures: dict[str, list[str]] | None = None, fragment: bool = False,
             models: tuple[str, ...] | None = None) -> str:
    """The document: the derivations of every registered paper (its sections; of the papers whose model names are
    ``models``), then, when ``report`` (a JSON
    report dict) is given, the audit table, the claims ledger and the figures (``figures``: check id -> paths
    relative to the document; their captions take the report's ``plot_titles``). ``fragment``: the body only, to
    ``\\input`` into a paper that loads amsmath, amssymb, graphicx, longtable and array."""
    parts = [r"% attnverify fragment: needs \usepackage{amsmath,amssymb,graphicx,longtable,array}"] if fragment \
        else [*PREAMBLE, r"\begin{document}", r"\maketitle"]
    parts += ["Every formula below was produced by SymPy from the model, except the model's assumptions and the "
              "papers' statements, which are marked. Each step says what it is: "
              r"[$=$ identity] SymPy computed or proved it; [$\to$ limit] exact in the limit the step takes; "
              r"[$\approx$ approximation] a truncated expansion, with what it neglects; [$\models$ assumption] part "
              r"of the model, not derived; [\S{} the paper's statement] reproduced as stated. Each equation is "
              r"labelled \texttt{eq:}\emph{section}\texttt{:}\emph{name}; the labels are listed at the end.", ""]
    sections, all_labels = derivation_sections(models)
    parts += sections
    if report is not None:
        parts += [r"\section{Audit}",
                  notation.escape(f"Profile {report['profile']}, seed {report['seed']}, version {report['version']}."),
                  "", provenance_part(report.get("provenance")), "", audit_table(report["checks"]),
                  errors_part(report["checks"])]
        if report.get("claims"):
            parts += [r"\subsection{Claims ledger}",
                      "Each claim's verdict is computed from the evidence of the checks of this run; each claim "
                      "cites its paper.", "", claims_table(report["claims"], None if fragment else _citation_keys())]
        if figures:
            parts += [r"\clearpage", r"\subsection{Figures}", *figures_part(report, figures), r"\clearpage"]
    parts += [r"\section*{Equation labels}",
              _longtable(r"@{}llp{0.6\linewidth}@{}", "label & equation & left side",
                         [rf"\texttt{{{name}}} & (\ref{{{name}}}) & " + (f"${lab}$" if lab else "") + r" \\"
                          for name, lab in all_labels])]
    if not fragment:
        from attnverify.checks.registry import papers
        from attnverify.references import thebibliography

        parts += [thebibliography(papers()), r"\end{document}"]
    return "\n".join(p for p in parts if p is not None) + "\n"
