"""The metric of a check's evidence and the phrase of a measurement are typed (issue 29: "Mathematics in it is an
expression object, rendered per medium, never ASCII in LaTeX"): ``Evidence.metric`` and ``Measured.how`` take a
Reason; report.md typesets the metric as ``$…$`` in its tables (each ``|`` of it escaped, so that an absolute value
does not split the cell), report.html and the Jupyter display as MathML, the JSON row keeps the parts
(``metric_parts``) beside the text of the convention (``metric``) and the Unicode line (``metric_text``); the
judges put the typed phrase of a measurement into their reason.

Toy checks, registered for the test; the expected texts are written out by hand."""
from __future__ import annotations

import json
import re

import pytest
import sympy as sp

from attnverify import checks
from attnverify.checks.evidence import Evidence
from attnverify.checks.judges import Measured, value
from attnverify.checks.judges.common import sides_disagree
from attnverify.checks.judges.pooling import Pool
from attnverify.checks.reason import Math, Number, Reason, reason
from attnverify.checks.registry import REGISTRY, check
from attnverify.checks.stated import StatedClaim
from attnverify.render import jupyter
from attnverify.render.html import report_html
from attnverify.render.report import findings, report_dict, to_markdown

Z = sp.Symbol("z")
#: the metric of the toys: words around |z| (a SymPy absolute value) and a number the outputs lay out each their way
METRIC = reason("max ", Math(sp.Abs(Z)), " over the family (floor ", Number(1e-9), ")")
#: its Markdown (SymPy's LaTeX of Abs(z); the number as the renderer writes it), its Unicode line and the text of the
#: convention (str of the Reason: the number as a plain float)
MARKDOWN = r"max $\left|{z}\right|$ over the family (floor 1×10⁻⁹)"
UNICODE = "max |z| over the family (floor 1×10⁻⁹)"
CONVENTION = r"max $\left|{z}\right|$ over the family (floor 1e-09)"
#: the MathML of |z| (SymPy's presentation printer)
ABS_Z_MATHML = "<mrow><mo>|</mo><mi>z</mi><mo>|</mo></mrow>"
TOYS = ("toy.metric_pass", "toy.metric_fail", "toy.metric_words")


@pytest.fixture
def toys():
    def passing(p, ctx):
        return Evidence(metric=METRIC, observed=0.5, threshold=1.0, reason="r", passed=True)

    def failing(p, ctx):
        return Evidence(metric=METRIC, observed=2.0, threshold=1.0, reason="r", passed=False)

    def words(p, ctx):
        return Evidence(metric="grid points that disagree", observed=0.0, threshold=0.0, reason="r", passed=True)

    for cid, fn in zip(TOYS, (passing, failing, words)):
        check(id=cid, compares="A toy comparison.", source="toy")(fn)
    yield list(TOYS)
    for cid in TOYS:
        REGISTRY.pop(cid, None)


def _cells(row: str) -> list[str]:
    """The cells of a Markdown table row as a GFM table reads them: split at the pipes no backslash escapes, each
    escaped pipe then unescaped (before the cell's inline content, mathematics included, is read)."""
    inner = row.strip()
    assert inner.startswith("|") and inner.endswith("|") and not inner.endswith("\\|"), row
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", inner[1:-1])]


def test_the_markdown_tables_typeset_the_metric_and_keep_their_cells(toys):
    md = to_markdown(checks.run(toys), formulas=False)
    head = next(line for line in md.splitlines() if line.startswith("| check | verdict | metric |"))
    rows = {cid: next(line for line in md.splitlines() if line.startswith(f"| [`{cid}`]")) for cid in TOYS}
    assert len(_cells(head)) == 6
    for cid in ("toy.metric_pass", "toy.metric_fail"):
        cells = _cells(rows[cid])
        assert len(cells) == 6, rows[cid]                          # the bars of |z| do not split the cell
        assert cells[2] == MARKDOWN and cells[3] in ("0.5", "2")
    assert r"$\left\|{z}\right\|$" in rows["toy.metric_pass"]       # escaped in the source of the table
    assert _cells(rows["toy.metric_words"])[2] == "grid points that disagree"     # a plain str: its words
    detail = [line for line in md.splitlines() if line.startswith("| metric |")]
    assert len(detail) == 3 and all(len(_cells(line)) == 2 for line in detail)
    assert _cells(detail[0])[1] == MARKDOWN
    assert "max |z|" not in md and "Abs(z)" not in md and "1e-09" not in md      # never ASCII, never SymPy's str


def test_the_findings_line_of_a_failed_check_has_the_mathematics(toys):
    found = findings(checks.run(toys))
    assert f"check **toy.metric_fail** failed: {MARKDOWN} = 2, passes when <= 1" in found


def test_the_html_report_has_mathml_for_the_metric(toys):
    page = report_html(checks.run(toys))
    audit = page[page.index('<table id="audit">'):page.index("</table>", page.index('<table id="audit">'))]
    row = next(r for r in audit.split("<tr>") if "toy.metric_fail" in r)
    assert f"<td><span class=\"lead\">max <math xmlns=\"http://www.w3.org/1998/Math/MathML\">{ABS_Z_MATHML}</math> " \
           "over the family (floor <math" in row
    section = page[page.index("<code>toy.metric_fail</code>: "):]
    section = section[:section.index("</section>")]
    assert f"<p><span class=\"lead\">max <math xmlns=\"http://www.w3.org/1998/Math/MathML\">{ABS_Z_MATHML}</math> " \
           "over the family (floor <math" in section                 # the check's own section too
    assert "<msup><mn>10</mn><mrow><mo>−</mo><mn>9</mn></mrow></msup>" in section and ")</span> = 2; passes if" in section
    assert "max |z|" not in page and r"\left|" not in page and "1e-09" not in page


def test_the_json_row_has_the_parts_the_convention_and_the_unicode(toys):
    doc = json.loads(json.dumps(report_dict(checks.run(toys))))     # serialises: no Reason object left
    rows = {row["id"]: row for row in doc["checks"]}
    row = rows["toy.metric_fail"]
    assert row["metric"] == CONVENTION                              # the text of the convention, as before a str
    assert row["metric_text"] == UNICODE
    assert [p["type"] for p in row["metric_parts"]["lead"]] == ["text", "math", "text", "number", "text"]
    assert row["metric_parts"]["lead"][1]["expr"] == {"node": "Abs", "args": [{"symbol": "z", "assumptions": {}}]}
    assert Reason.from_dict(row["metric_parts"]) == METRIC
    words = rows["toy.metric_words"]                               # a plain str metric has its parts too
    assert words["metric"] == words["metric_text"] == "grid points that disagree"
    assert words["metric_parts"] == {"lead": [{"type": "text", "text": "grid points that disagree"}], "items": []}


def test_the_jupyter_display_typesets_the_metric(toys):
    r = next(x for x in checks.run(toys).results if x.id == "toy.metric_pass")
    md = jupyter.result_markdown(r)
    row = next(line for line in md.splitlines() if line.startswith("| max"))
    assert _cells(row) == [MARKDOWN, "0.5", "<=", "1"]
    assert f"<td><span class=\"lead\">max <math xmlns=\"http://www.w3.org/1998/Math/MathML\">{ABS_Z_MATHML}" \
           in jupyter.result_html(r)


# ----------------------------------------------------------------------------------------------------------------
# the phrase of a measurement (Measured.how) in the judges' reasons
# ----------------------------------------------------------------------------------------------------------------
#: a measurement's phrase with mathematics and a number
HOW = reason("Monte Carlo at ", Math(sp.Symbol("L")), " = ", Number(1050))


def test_the_value_judge_keeps_the_phrase_of_the_measurement_typed():
    claim = StatedClaim(id="c", model="test", kind="value", stated=2.0, quantity="q", extra={"resolution": 0.01})
    v = value(claim, Measured(2.0001, 0.001, HOW))
    assert Math(sp.Symbol("L")) in list(v.reason.parts()) and Number(1050) in list(v.reason.parts())
    assert r"(Monte Carlo at $L$ = 1050)" in str(v.reason)
    gap = value(claim, Measured(2.5, 0.001, HOW), derived=2.0)      # derivation and measurement disagree
    assert gap.verdict == "inconclusive" and Math(sp.Symbol("L")) in list(gap.reason.parts())
    assert r"(Monte Carlo at $L$ = 1050) differ by" in str(gap.reason)


def test_sides_disagree_is_a_reason_with_the_phrase_and_pooling_keeps_it():
    said = sides_disagree(2.0, Measured(2.5, 0.001, HOW), what="the derived value with its finite-size terms")
    assert isinstance(said, Reason) and Math(sp.Symbol("L")) in list(said.parts())
    assert str(said).startswith("the derived value with its finite-size terms 2 and the measured 2.5")
    bracket = sides_disagree(3.0, Measured(1.5, 0.0, HOW, interval=(1.0, 2.0)))
    assert "lies outside the measured bracket [1, 2] (Monte Carlo at $L$ = 1050)" in str(bracket)
    assert sides_disagree(2.0, Measured(2.0005, 0.001, HOW)) is None
    pool = Pool({})
    for x in (2.0, 2.002):
        pool.add(Measured(x, 0.001, HOW))
    pooled = pool.measured()
    assert isinstance(pooled.how, Reason) and Math(sp.Symbol("L")) in list(pooled.how.parts())
    assert str(pooled.how) == "Monte Carlo at $L$ = 1050, pooled over 2 independent runs"
