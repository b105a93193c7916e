"""The check framework and the CLI, exercised with toy checks that must pass, fail or break."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from attnverify import checks
from attnverify.cli.main import main
from attnverify.checks.evidence import Evidence, Plot, Series
from attnverify.checks.params import InputError, Param
from attnverify.checks.registry import REGISTRY, check
from attnverify.render.report import report_dict, write_report

TOY = ("toy.passes", "toy.fails", "toy.raises", "toy.nan")


@pytest.fixture
def toys():
    """Register four toy checks for the duration of a test."""
    params = [Param("n", int, 200, "sample size", low=2), Param("mu", float, 0.0, "true mean"),
              Param("mode", str, "a", "a mode", choices=("a", "b")),
              Param("M", "matrix", np.eye(2), "a matrix")]

    def mean_test(p, ctx):
        x = ctx.rng().normal(p["mu"], 1.0, p["n"])
        z = abs(x.mean()) * np.sqrt(p["n"])
        return Evidence(metric="|z| of the sample mean against 0", observed=float(z), threshold=4.0,
                        reason="two-sided normal quantile at false-alarm rate 6e-5", passed=z <= 4.0,
                        details={"x": x[:5]}, plots=[Plot("toy", "i", "x", [Series("x", np.arange(5), x[:5])])])

    check(id="toy.passes", claim="The mean of N(0,1) samples is 0.", source="toy", params=params)(mean_test)
    check(id="toy.fails", claim="The mean of N(1,1) samples is 0.", source="toy",
          params=[*params, Param("mu", float, 1.0, "true mean")])(mean_test)

    def raises(p, ctx):
        raise RuntimeError("the toy broke\nsecond line")

    def nan(p, ctx):
        return Evidence(metric="m", observed=float("nan"), threshold=1.0, reason="r", passed=True)

    check(id="toy.raises", claim="Never evaluated.", source="toy")(raises)
    check(id="toy.nan", claim="A silent NaN.", source="toy")(nan)
    yield
    for cid in TOY:
        REGISTRY.pop(cid, None)


def test_verdicts(toys):
    rep = checks.run(list(TOY), seed=3)
    verdicts = {r.id: r.verdict for r in rep.results}
    assert verdicts == {"toy.passes": "pass", "toy.fails": "fail", "toy.raises": "error", "toy.nan": "error"}
    broke = next(r for r in rep.results if r.id == "toy.raises")
    assert broke.error == "RuntimeError: the toy broke"
    assert not rep.ok


def test_same_seed_same_json_apart_from_timings(toys, tmp_path):
    def strip(doc):
        for c in doc["checks"]:
            c.pop("seconds")
        return doc

    a = strip(report_dict(checks.run(["toy.passes", "toy.fails"], seed=7)))
    b = strip(report_dict(checks.run(["toy.fails", "toy.passes"], seed=7)))
    assert a["checks"] == b["checks"][::-1]  # order of execution does not change a check's streams
    c = strip(report_dict(checks.run(["toy.passes", "toy.fails"], seed=8)))
    assert a != c


def test_json_schema(toys, tmp_path):
    path = tmp_path / "r.json"
    assert main(["run", "toy.passes", "toy.fails", "--json", str(path), "--quiet"]) == 1
    doc = json.loads(path.read_text())
    assert set(doc) == {"version", "profile", "seed", "options", "complete", "checks", "claims", "claims_summary",
                        "claims_not_evaluated"}
    assert doc["complete"] is True and doc["claims"] == []
    keys = {"id", "claim", "source", "verdict", "observed", "threshold", "reason", "params", "details", "seconds"}
    for entry in doc["checks"]:
        assert keys <= set(entry)
        assert entry["verdict"] in ("pass", "fail", "error")
        assert isinstance(entry["params"]["M"], list)


def test_report_directory(toys, tmp_path):
    write_report(checks.run(["toy.passes", "toy.raises"]), tmp_path)
    md = (tmp_path / "report.md").read_text()
    assert "toy_passes_0.png" in md and (tmp_path / "toy_passes_0.png").stat().st_size > 1000
    assert "RuntimeError: the toy broke" in md
    assert json.loads((tmp_path / "report.json").read_text())["checks"][1]["verdict"] == "error"


def test_exit_codes(toys, capsys):
    assert main(["run", "toy.passes", "--quiet"]) == 0
    assert main(["run", "toy.fails", "--quiet"]) == 1
    assert main(["run", "toy.raises", "--quiet"]) == 1
    out = capsys.readouterr().out
    assert "toy.fails" in out and "FAIL" in out


def test_overrides_reach_the_check(toys):
    rep = checks.run(["toy.passes"], overrides={"mu": "1.0"})
    assert rep.results[0].verdict == "fail" and rep.results[0].params["mu"] == 1.0
    rep = checks.run(["toy.fails"], overrides={"mu": 0.0, "M": "1,2;3,4"})
    assert rep.results[0].verdict == "pass"
    assert np.array_equal(rep.results[0].params["M"], [[1, 2], [3, 4]])


@pytest.mark.parametrize("argv, words", [
    (["run", "toy.nope"], "unknown check id"),
    (["run", "toy.passes", "--profile", "huge"], "unknown profile"),
    (["run", "toy.passes", "--set", "zzz=1"], "unknown parameter 'zzz'"),
    (["run", "toy.passes", "--set", "n=abc"], "n: expected an integer"),
    (["run", "toy.passes", "--set", "n=2.5"], "n: expected an integer"),
    (["run", "toy.passes", "--set", "mu=nan"], "mu: must be finite"),
    (["run", "toy.passes", "--set", "mu=inf"], "mu: must be finite"),
    (["run", "toy.passes", "--set", "n=1"], "n: must be >= 2"),
    (["run", "toy.passes", "--set", "mode=c"], "mode: 'c' is not one of"),
    (["run", "toy.passes", "--set", "M=1,2;3"], "rows have different lengths"),
    (["run", "toy.passes", "--set", "novalue"], "--set expects KEY=VALUE"),
    (["run", "toy.passes", "--seed", "-1"], "--seed: expected a non-negative integer"),
    (["run", "toy.passes", "--seed", "x"], "--seed: expected a non-negative integer"),
    (["derive", "nosuchmodel"], "unknown model"),
    (["frobnicate"], "invalid choice"),
    (["run", "toy.passes", "--set", "n=1000000000"], "n: 1e+09 is more than 100 x"),
])
def test_bad_input_is_one_line_exit_2(toys, capsys, argv, words):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and words in err, err


def test_api_rejects_bad_input_before_running(toys):
    with pytest.raises(InputError, match="unknown check id"):
        checks.run(["toy.passes", "toy.unknown"])
    with pytest.raises(InputError, match="n: expected an integer"):
        checks.run(["toy.passes"], overrides={"n": 2.5})
    with pytest.raises(InputError, match="seed"):
        checks.run(["toy.passes"], seed=-3)


def test_catalogue_lists_claims_and_sources():
    from attnverify.checks.registry import papers

    entries = checks.catalogue()
    assert entries, "no checks registered"
    for e in entries:
        assert e["id"].split(".")[0] in {p.model for p in papers()}
        assert e["claim"].strip() and e["source"].strip()


def test_console_entry_points_agree():
    """``python -m attnverify`` is the CLI: a bad id gives exit 2 and one line, no traceback."""
    proc = subprocess.run([sys.executable, "-m", "attnverify", "run", "no.such.check"], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "Traceback" not in proc.stderr
