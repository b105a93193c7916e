"""``claims`` and ``audit`` take ``--report DIR`` (as ``run`` does): report.json, report.md, report.html and a figure
per claim. The checks and the claims' evaluation are replaced by the synthetic audit: this tests the wiring, fast."""
from __future__ import annotations

import json

import pytest
from render_synthetic import synthetic_report

from attnverify.cli.command_line import build_parser, main


@pytest.mark.parametrize("command", [["claims"], ["audit", "x.toml"], ["run"]])
def test_the_commands_that_judge_claims_take_report(command):
    args = build_parser().parse_args([*command, "--report", "out"])
    assert args.report_dir == "out"


def _files(out):
    names = {p.name for p in out.iterdir()}
    assert {"report.json", "report.md", "report.html"} <= names
    assert {"claim_X_bound.png", "claim_X_switch.png", "claim_Y_figure.png"} <= names
    return json.loads((out / "report.json").read_text(encoding="utf-8"))


def test_audit_report_writes_the_html_and_the_claim_figures(tmp_path, monkeypatch, capsys):
    import attnverify.checks.audit as audit
    import attnverify.user_claims  # noqa: F401 -- bound to the real evaluate before it is replaced here

    claims = tmp_path / "mine.toml"
    claims.write_text('[[claim]]\nid = "mine.value"\nmodel = "signal"\nkind = "value"\nquantity = "J_limit"\n'
                      'stated = 0.75\nat = { rho = 0.5, theta = 1.0, beta = 1.0, sigma = 1.0, R = 500, L = 10500 }\n')
    monkeypatch.setattr(audit, "evaluate", lambda resolved, results, seed: synthetic_report().claims)
    out = tmp_path / "rep"
    assert main(["audit", str(claims), "--report", str(out), "--quiet", "--no-cache"]) == 0
    doc = _files(out)
    assert [c["id"] for c in doc["claims"]] == ["X.bound", "X.switch", "Y.figure"]
    assert doc["claims_not_evaluated"] == []               # a user's audit lists no papers' claims as missing
    assert "X.bound" in (out / "report.html").read_text(encoding="utf-8")
    assert "- along" in capsys.readouterr().out            # the items of a long reason, one line each


def test_claims_report_writes_the_html_and_the_claim_figures(tmp_path, monkeypatch):
    import attnverify.api as api

    def fake_run(ids, **kw):
        rep = synthetic_report()
        rep.ledger = True
        return rep

    monkeypatch.setattr(api, "run", fake_run)
    out = tmp_path / "rep"
    code = main(["claims", "--report", str(out), "--quiet", "--no-cache", "--executor", "serial"])
    assert code == 0
    _files(out)
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "![`X.switch`: what its verdict rests on](claim_X_switch.png)" in md
