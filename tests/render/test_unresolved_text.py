"""The text of an unresolved verdict is typed (issue 29): ``Evidence.unresolved`` and the message of
:class:`~attnverify.checks.evidence.Unresolved` are Reasons; the runner keeps them on the result (``Result.unresolved``)
beside the plain text of ``error``; the JSON row keeps the parts, the text of the convention and the Unicode line;
the terminal, Markdown, LaTeX and HTML typeset the mathematics (an ``eta`` is ``\\eta`` in LaTeX, never the word).

Toy checks, registered for the test; the expected texts are written out by hand."""
from __future__ import annotations

import json
import pickle

import pytest
import sympy as sp

from attnverify import checks
from attnverify.checks.claims import all_claims, evaluate_claim
from attnverify.checks.evidence import Evidence, Result, Unresolved
from attnverify.checks.reason import Math, Number, Reason, reason
from attnverify.checks.registry import REGISTRY, check
from attnverify.render import latex
from attnverify.render.html import report_html
from attnverify.render.report import error_text, report_dict, table, to_markdown

ETA_0, ETA_K = sp.Symbol("eta_0"), sp.Symbol("eta_k")
#: the unresolved texts of the two toys
OUTSIDE = reason("outside the expansion: ", Math(ETA_0 ** 2), " = ", Number(0.1234, digits=3), " ", Math(">"), " ",
                 Number(0.05))
STEP = reason("the step ", Math(ETA_K), " stays above ", Number(0.0316, digits=3))


@pytest.fixture
def toys():
    def evidence(p, ctx):
        return Evidence(metric="m", observed=0.0, threshold=1.0, reason="r", passed=True, unresolved=OUTSIDE)

    def raises(p, ctx):
        raise Unresolved(STEP)

    check(id="toy.unresolved_evidence", compares="Never decided.", source="toy")(evidence)
    check(id="toy.unresolved_raised", compares="Never decided.", source="toy")(raises)
    yield ["toy.unresolved_evidence", "toy.unresolved_raised"]
    for cid in ("toy.unresolved_evidence", "toy.unresolved_raised"):
        REGISTRY.pop(cid, None)


def test_unresolved_accepts_a_reason_and_its_str_is_the_plain_text():
    exc = Unresolved(STEP)
    assert exc.reason is STEP and str(exc) == r"the step $\eta_{k}$ stays above 0.0316"      # the convention
    assert str(Unresolved("plain words")) == "plain words" and Unresolved("plain words").reason == "plain words"
    assert pickle.loads(pickle.dumps(exc)).reason == STEP           # raised in a worker: the parts cross back


def test_the_result_keeps_the_typed_text_and_the_plain_error(toys):
    by_id = {r.id: r for r in checks.run(toys).results}
    ev, raised = by_id["toy.unresolved_evidence"], by_id["toy.unresolved_raised"]
    assert ev.verdict == raised.verdict == "error"
    assert ev.unresolved == OUTSIDE and raised.unresolved == STEP
    assert ev.error == r"Unresolved: outside the expansion: $\eta_{0}^{2}$ = 0.123 $>$ 0.05"     # the convention
    assert error_text(ev) == "Unresolved: outside the expansion: η₀² = 0.123 > 0.05"           # the terminal's line
    assert error_text(raised) == "Unresolved: the step ηₖ stays above 0.0316"


def test_the_json_row_has_the_parts_and_the_plain_text(toys):
    doc = json.loads(json.dumps(report_dict(checks.run(toys))))           # serialises: no Reason object left
    rows = {row["id"]: row for row in doc["checks"]}
    ev, raised = rows["toy.unresolved_evidence"], rows["toy.unresolved_raised"]
    assert ev["unresolved"] == r"outside the expansion: $\eta_{0}^{2}$ = 0.123 $>$ 0.05"
    assert ev["unresolved_text"] == "outside the expansion: η₀² = 0.123 > 0.05"
    assert ev["error"] == "Unresolved: outside the expansion: η₀² = 0.123 > 0.05"
    lead = ev["unresolved_parts"]["lead"]
    assert [p["type"] for p in lead] == ["text", "math", "text", "number", "text", "math", "text", "number"]
    assert lead[3]["value"] == 0.1234 and lead[3]["digits"] == 3 and lead[7]["value"] == 0.05
    assert Reason.from_dict(ev["unresolved_parts"]) == OUTSIDE
    # raised before any evidence: the same fields, and the reason of the row is the typed "Unresolved: ..."
    assert raised["unresolved_text"] == "the step ηₖ stays above 0.0316"
    assert Reason.from_dict(raised["unresolved_parts"]) == STEP
    assert raised["reason"] == r"Unresolved: the step $\eta_{k}$ stays above 0.0316"
    assert any(p["type"] == "math" for p in raised["reason_parts"]["lead"])


def test_latex_markdown_html_and_terminal_typeset_the_mathematics(toys):
    rep = checks.run(toys)
    doc = json.loads(json.dumps(report_dict(rep)))
    tex = latex.errors_part(doc["checks"])
    assert r"\texttt{toy.unresolved\_evidence}: Unresolved: outside the expansion: $\eta_{0}^{2}$ = $0.123$ $>$ " \
           r"$0.05$" in tex
    assert r"Unresolved: the step $\eta_{k}$ stays above $0.0316$" in tex
    assert "eta_0" not in tex and "eta_k" not in tex
    md = to_markdown(rep, formulas=False)
    assert r"**Error**: Unresolved: outside the expansion: $\eta_{0}^{2}$ = 0.123 $>$ 0.05" in md
    assert r"check **toy.unresolved_raised** could not decide: Unresolved: the step $\eta_{k}$ stays above 0.0316" \
        in md
    assert "`Unresolved" not in md                      # not a code span: the mathematics is typeset
    page = report_html(rep)
    assert "<b>Error</b>: <span class=\"lead\">Unresolved: outside the expansion: <math" in page
    assert "<msub><mi>&#951;</mi><mi>k</mi></msub>" in page
    assert "toy.unresolved_raised: Unresolved: the step ηₖ stays above 0.0316" in table(rep)


def test_a_ledger_row_fed_by_an_unresolved_check_keeps_its_mathematics():
    claim = next(c for c in all_claims() if c.checks)
    results = {cid: Result(cid, "", "", "error", {}, 0.0, None, "Unresolved: the step ηₖ stays above 0.0316",
                           unresolved=STEP) for cid in claim.checks}
    row = evaluate_claim(claim, results)
    assert row.verdict == "inconclusive"
    assert f"{claim.checks[0]} could not decide (Unresolved: the step $\\eta_{{k}}$ stays above 0.0316)" in \
        str(row.reason)
    assert Math(ETA_K) in list(row.reason.parts())
