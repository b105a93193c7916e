"""``attnverify cite [MODEL]`` prints the papers' BibTeX (each paper's ``reference.bib`` beside its plugin), and
``attnverify claims MODEL`` gives one paper's ledger; an unknown name is one line and exit 2."""
from __future__ import annotations

import json

import pytest

import attnverify.checks.runner as runner
from attnverify.cli import main
from attnverify.references import parse

ARXIV = {"truong2026signal": "2606.22406", "alcalde2026meanfield": "2605.10931", "marion2025attention": "2410.01537",
         "bohbot2026tokensample": "2512.10656"}


def test_cite_prints_every_paper(capsys):
    assert main(["cite"]) == 0
    entries = parse(capsys.readouterr().out)
    assert {e.key: e.fields["eprint"] for e in entries} == ARXIV
    assert all(e.fields["title"] and e.fields["author"] and e.fields["year"] for e in entries)


@pytest.mark.parametrize("name", ["slr", "C"])
def test_cite_one_paper_by_model_or_key(capsys, name):
    assert main(["cite", name]) == 0
    [entry] = parse(capsys.readouterr().out)
    assert entry.type == "inproceedings" and entry.key == "marion2025attention" and "ICLR" in entry.fields["booktitle"]
    assert "Boyer" in entry.fields["author"]


@pytest.mark.parametrize("argv", [["cite", "sgnal"], ["claims", "sgnal", "--quiet"]])
def test_unknown_paper_is_one_line(capsys, argv, monkeypatch):
    monkeypatch.setattr(runner, "run_one", lambda *a, **k: pytest.fail("a check ran"))
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown model 'sgnal' (did you mean signal?)" in err


def test_parse_reads_braces_quotes_and_numbers():
    [e] = parse('% a comment\n@Article{k1, title = {A {B} c}, year = 2020, note = "x, y"}\n@comment{ignored}')
    assert (e.type, e.key, e.fields) == ("article", "k1", {"title": "A {B} c", "year": "2020", "note": "x, y"})
    with pytest.raises(ValueError, match="unbalanced"):
        parse("@misc{k, title = {open}")


@pytest.mark.parametrize("name", ["signal", "A"])
def test_claims_of_one_paper(tmp_path, capsys, monkeypatch, name):
    """``claims signal`` runs Paper A's checks only and prints Paper A's ledger (a stub stands in for the checks:
    the claims read no evidence from it and come out inconclusive)."""
    ran = []
    monkeypatch.setattr(runner, "run_one", lambda c, p, **kw: ran.append(c.id) or runner.Result(
        c.id, c.compares, c.source, "pass", p, 0.0, runner.Evidence("m", 0.0, 1.0, "r", True)))
    out = tmp_path / "a.json"
    assert main(["claims", name, "--quiet", "--executor", "serial", "--no-cache", "--json", str(out)]) == 0
    assert ran and all(cid.startswith("signal.") for cid in ran)
    doc = json.loads(out.read_text())
    assert doc["claims"] and all(c["id"].startswith("A.") for c in doc["claims"])
    assert doc["claims_not_evaluated"] == []
    text = capsys.readouterr().out
    assert "A.closed_form_objective" in text and "B." not in text and "not evaluated" not in text


def test_one_check_lists_its_papers_unevaluated_claims_and_counts_the_rest(capsys, monkeypatch):
    """``run slr.oracle_vs_bayes``: Paper C's claims that did not run are named, the other papers' claims are only
    counted (a list of every registered claim would bury the one check's result)."""
    monkeypatch.setattr(runner, "run_one", lambda c, p, **kw: runner.Result(
        c.id, c.compares, c.source, "pass", p, 0.0, runner.Evidence("m", 0.0, 1.0, "r", True)))
    main(["run", "slr.oracle_vs_bayes", "--quiet", "--executor", "serial", "--no-cache"])
    text = capsys.readouterr().out
    assert "C.closed_form_risk (none of its checks ran: slr.risk_vs_montecarlo)" in text
    assert "A.closed_form_objective" not in text and "B.theorem1" not in text
    assert "claims of paper(s) A, B, D, none of whose checks ran" in text
