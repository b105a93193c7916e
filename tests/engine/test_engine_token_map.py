"""The generated check <model>.attention_map_vs_montecarlo (token query): the derived infinite-token map against the
pooled ratio of expectations. Valid models pass; a map off by 1 %, or with tau read as 2 tau, is rejected; weights
too heavy-tailed for the pooled ratio leave it unresolved."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from attnverify.checks import runner
from attnverify.checks.engine import add_model
from attnverify.checks.registry import REGISTRY
from check_runs import run_check

MODELS = Path(__file__).resolve().parents[2] / "examples" / "models"


def _run(cid: str, overrides: dict | None = None, theory=None):
    return run_check(cid, overrides=overrides, theory=theory), REGISTRY[cid]


@pytest.mark.parametrize("name", ["token_gaussian", "token_sphere"])
def test_derived_map_matches_the_pooled_ratio_and_wrong_maps_are_rejected(name):
    paper = add_model(MODELS / f"{name}.toml")
    cid = f"{paper.model}.attention_map_vs_montecarlo"
    assert paper.check_ids()[0] == cid
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
    assert [f.name for f in paper.families()] == ["token_gaussian.map_scale", "token_gaussian.pushforward_scale"]
    row = paper.power_rows()[0]
    baseline, [measured] = power_of_check(row.check, [row], seeds=[0], profile="quick")
    assert baseline == {0: "pass"} and measured["meets_target"] is True and measured["mdp"] <= 0.01, measured


def test_selftest_power_with_a_model_file_measures_that_model_only(capsys):
    """`attnverify selftest --power --model FILE` (no --only): the model file's rows, not every paper's."""
    from attnverify.cli import main

    assert main(["selftest", "--power", "--model", str(MODELS / "token_gaussian.toml"), "--seeds", "1",
                 "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "token_gaussian.attention_map_vs_montecarlo" in out and "signal." not in out and "slr." not in out, out


def _token_model_with_sign(tmp_path) -> Path:
    """token_gaussian with a random sign per sequence on its one component (tokens ~ N(eps m, Sigma))."""
    text = (MODELS / "token_gaussian.toml").read_text()
    text = text.replace('id = "token_gaussian"', 'id = "token_sign"').replace(
        'mean = "mu*xi"', 'mean = "mu*xi"\nsign = "rademacher"')
    assert 'sign = "rademacher"' in text
    path = tmp_path / "token_sign.toml"
    path.write_text(text)
    return path


def test_a_random_sign_gets_the_map_averaged_over_the_sign(tmp_path):
    """Before, a token query with sign = "rademacher" got no check (`attnverify run FILE` answered 'unknown check
    id') and its derivation claimed the push-forward of N(m, Sigma) although the token law N(eps m, Sigma) is random.
    Now its map (each sequence's limit, averaged over its sign) is compared with the average of the two
    sign-conditional pooled maps, passes, and a map off by 1 % is rejected; no push-forward is claimed."""
    paper = add_model(_token_model_with_sign(tmp_path))
    cid = f"{paper.model}.attention_map_vs_montecarlo"
    assert paper.check_ids()[0] == cid
    ok, c = _run(cid)
    assert ok.verdict == "pass", (ok.verdict, ok.error)
    wrong = c.theory.replace("map x 1.01", attention_map=1.01 * c.theory.quantities["attention_map"])
    bad, _ = _run(cid, theory=wrong)
    assert bad.verdict == "fail", (bad.verdict, bad.error)
    assert not {"pushforward_mean", "pushforward_cov"} & set(c.theory.quantities)


def test_the_sign_average_is_not_the_map_of_the_sign_mixture(tmp_path):
    """The derived map averages the map over the sign; pooling tokens of both signs estimates the map of the mixture
    law (1/2) N(m, Sigma) + (1/2) N(-m, Sigma), another function of x: the derived map agrees with the first and
    is resolved away from the second at the check's query points."""
    from attnverify.checks.engine._common import model_point
    from attnverify.numerics.engine import attention_map_pooled, attention_map_sign_averaged
    from attnverify.theory.engine.derive import model_values

    paper = add_model(_token_model_with_sign(tmp_path))
    [(c, params)] = runner.plan([f"{paper.model}.attention_map_vs_montecarlo"])
    model = paper.model_object
    vals = {k: float(v) for k, v in model_values(model, model_point(model, params)).items()}
    spec = c.numerics.spec(vals)
    grid = np.array([[1.0, 0.0, 0.0], [-1.0, 0.0, 0.0], [0.5, 0.5, 0.5]])
    X = np.zeros((len(grid), spec.d))
    X[:, :3] = grid
    derived = np.reshape(c.theory.evaluate("attention_map", vals, **dict(zip(c.theory.coordinates, grid.T))),
                         (len(grid), 3))
    rng = np.random.default_rng(1)
    averaged = attention_map_sign_averaged(spec, X, 2000, 200, rng)
    mixed = attention_map_pooled(spec, X, 2000, 1600, rng)
    z_avg = np.abs(averaged.mean[:, :3] - derived) / averaged.se[:, :3]
    z_mix = np.abs(mixed.mean[:, :3] - derived) / mixed.se[:, :3]
    # the check's threshold at its defaults is 4.19 (Bonferroni over 36 z-scores); at 1600 batches the mixture's map
    # is about 11 standard errors off at x = e_xi
    assert z_avg.max() < 4.19 and z_mix.max() > 6, (z_avg.max(), z_mix.max())
