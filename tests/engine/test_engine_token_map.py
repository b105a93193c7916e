"""The generated check <model>.attention_map_vs_montecarlo (token query): the derived infinite-token map against the
pooled ratio of expectations. Valid models pass; a map off by 1 %, or with tau read as 2 tau, is rejected; weights
too heavy-tailed for the pooled ratio leave it unresolved."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from attnverify.checks import runner
from attnverify.checks.engine import add_model

MODELS = Path(__file__).resolve().parents[2] / "examples" / "models"


def _run(cid: str, overrides: dict | None = None, theory=None):
    [(c, params)] = runner.plan([cid], overrides=overrides or {})
    return runner.run_one(c, params, seed=0, profile="quick",
                          arguments={"theory": theory} if theory is not None else None), c


@pytest.mark.parametrize("name", ["token_gaussian", "token_sphere"])
def test_derived_map_matches_the_pooled_ratio_and_wrong_maps_are_rejected(name):
    paper = add_model(MODELS / f"{name}.toml")
    cid = f"{paper.model}.attention_map_vs_montecarlo"
    assert paper.check_ids() == [cid]
    ok, c = _run(cid)
    assert ok.verdict == "pass", (ok.verdict, ok.error)
    assert all(row["compared"] for row in ok.evidence.details["points"])
    theory = c.theory
    tau = theory.symbols["tau"]
    for wrong in (theory.replace("map x 1.01", attention_map=1.01 * theory.quantities["attention_map"]),
                  theory.replace("tau read as 2 tau", attention_map=theory.quantities["attention_map"].subs(
                      tau, 2 * tau))):
        bad, _ = _run(cid, theory=wrong)
        assert bad.verdict == "fail", (wrong.label, bad.verdict, bad.error)


def test_heavy_tailed_weights_leave_the_map_unresolved():
    """token_sphere with the score scale 400 (weights e^{400 <x, y>} on the unit sphere): a handful of tokens carry
    the sums (ESS far below 1000), so the pooled ratio's O(1/N) bias is not negligible and nothing is compared."""
    paper = add_model(MODELS / "token_sphere.toml")
    r, _ = _run(f"{paper.model}.attention_map_vs_montecarlo", {"scale": 400, "batches": 20})
    assert r.verdict == "error" and r.error.startswith("Unresolved:") and "ESS" in r.error, r.error
    ess = np.array([row["ess"] for row in r.evidence.details["points"]])
    assert np.all(np.isfinite(ess)) and ess.max() < 1000, ess


def test_power_row_of_the_map_meets_its_target():
    """selftest --power for a model file: the map's scale family is rejected at 1 % (the check's own power rule) at
    seed 0, and the row says so; the trained-query families are not offered for a token-query model."""
    from attnverify.selftest.power import power_of_check

    paper = add_model(MODELS / "token_gaussian.toml")
    assert [f.name for f in paper.families()] == ["token_gaussian.map_scale"]
    [row] = paper.power_rows()
    baseline, [measured] = power_of_check(row.check, [row], seeds=[0], profile="quick")
    assert baseline == {0: "pass"} and measured["meets_target"] is True and measured["mdp"] <= 0.01, measured


def test_selftest_power_with_a_model_file_measures_that_model_only(capsys):
    """`attnverify selftest --power --model FILE` (no --only): the model file's rows, not every paper's."""
    from attnverify.cli import main

    assert main(["selftest", "--power", "--model", str(MODELS / "token_gaussian.toml"), "--seeds", "1",
                 "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "token_gaussian.attention_map_vs_montecarlo" in out and "signal." not in out and "slr." not in out, out
