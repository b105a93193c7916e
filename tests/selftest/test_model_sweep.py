"""The model sweep (attnverify.selftest.model_sweep): admissible, reproducible draws over the documented domains, the
verdict bookkeeping (an error, an unresolved comparison, a non-finite value or an overtime is never a pass), the
Clopper-Pearson bound, the command line, and a tiny real sweep; the paper-scale sweep is marked slow."""
from __future__ import annotations

import argparse
import json
import math
import time

import numpy as np
import pytest

from attnverify.checks.evidence import Evidence
from attnverify.checks.params import InputError, Param
from attnverify.checks.registry import Check, papers
from attnverify.selftest import model_sweep as ms


def _paper(model):
    return next(p for p in papers() if p.model == model)


@pytest.mark.parametrize("model", ["signal", "meanfield", "slr", "tsc"])
def test_draws_are_admissible_and_reproducible(model):
    """Every drawn model is accepted by the paper's own option validation (Paper.options: each option's range and
    the paper's constraints), and the same seed gives the same models while another seed does not."""
    paper = _paper(model)
    a, _ = ms.draw_models(paper, 6, np.random.default_rng(7))
    b, _ = ms.draw_models(paper, 6, np.random.default_rng(7))
    c, _ = ms.draw_models(paper, 6, np.random.default_rng(8))
    assert len(a) == 6
    for point in a:
        paper.options(point)                      # raises InputError on an inadmissible model
    same = all(np.array_equal(np.asarray(x[k]), np.asarray(y[k])) for x, y in zip(a, b) for k in x)
    assert same and [sorted(x) for x in a] == [sorted(y) for y in b]
    assert any(not np.array_equal(np.asarray(x[k]), np.asarray(y.get(k))) for x, y in zip(a, c) for k in x)


def test_real_draws_are_log_uniform_over_the_whole_range():
    """lam in (0, 100] (Paper C) spans four decades: drawn log-uniform, with each end taken with probability 0.1.
    The log-midpoint of the drawn span splits the draws evenly (expected share 1/2, sd 0.025 at n = 400), and both
    ends occur."""
    prm = Param("lam", float, 0.5, "", low=0.0, high=100.0, low_open=True)
    rng = np.random.default_rng(1)
    x = np.array([ms.draw_value(prm, rng) for _ in range(400)])
    lo, hi = 0.5 / 1e3, 100.0                       # an open end at 0: the typical value / 1e3 (domain.span)
    assert np.all((x >= lo) & (x <= hi))
    assert 0.4 < np.mean(x < math.sqrt(lo * hi)) < 0.6
    assert np.any(x == lo) and np.any(x == hi)


def test_counts_are_capped_and_choices_drawn():
    rng = np.random.default_rng(2)
    n = [ms.draw_value(Param("L", int, 1050, "", low=2), rng) for _ in range(200)]
    assert all(isinstance(v, int) and 2 <= v <= 1050 * ms.COUNT_SPAN for v in n)
    assert min(n) < 100 and max(n) > 1050           # log-uniform over [2, 10500]: both decades reached
    s = {ms.draw_value(Param("sign", str, "fixed", "", choices=("fixed", "symmetric")), rng) for _ in range(50)}
    assert s == {"fixed", "symmetric"}


def test_meanfield_models_cover_the_hard_cases():
    """Paper B draws: V Bᵀ symmetric (the model's assumption, checked here by hand), and across draws B with
    complex eigenvalues, V Bᵀ with negative eigenvalues, and near-degenerate gaps (below 1 % of the top)."""
    pts, _ = ms.draw_models(_paper("meanfield"), 40, np.random.default_rng(3))
    complex_b = negative = near = 0
    for p in pts:
        B = p["Q"].T @ p["K"]
        A = p["V"] @ B.T
        assert np.allclose(A, A.T, atol=1e-8 * np.abs(A).max())
        ev = np.sort(np.linalg.eigvalsh((A + A.T) / 2))[::-1]
        complex_b += np.any(np.abs(np.linalg.eigvals(B).imag) > 1e-9)
        negative += ev[-1] < 0
        near += (ev[0] - ev[1]) < 0.01 * ev[0]
    assert complex_b and negative and near


def _fake(run, params=(Param("x", float, 1.0, "", low=0.0, high=2.0),)):
    return Check("fake.check", "a fake", "nowhere", tuple(params), run, {}, None)


def _ev(observed, threshold, passed, unresolved=None):
    return Evidence(metric="m", observed=observed, threshold=threshold, passed=passed, reason="r",
                    unresolved=unresolved)


def test_run_point_verdicts():
    """pass and fail as the check says; a non-finite observed value, an exception and an unresolved comparison are
    never a pass; a value outside the check's own range is refused before any work; a hang is overtime."""
    assert ms.run_point(_fake(lambda p, c: _ev(0.1, 1.0, True)), {"x": 0.5}, seed=0)["verdict"] == "pass"
    assert ms.run_point(_fake(lambda p, c: _ev(2.0, 1.0, False)), {"x": 0.5}, seed=0)["verdict"] == "fail"
    nan = ms.run_point(_fake(lambda p, c: _ev(float("nan"), 1.0, True)), {"x": 0.5}, seed=0)
    assert nan["verdict"] == "error" and "non-finite" in nan["error"]

    def boom(p, c):
        raise ValueError("no")
    assert ms.run_point(_fake(boom), {"x": 0.5}, seed=0)["verdict"] == "error"
    assert ms.run_point(_fake(lambda p, c: _ev(0.1, 1.0, True, unresolved="too few")), {"x": 0.5},
                        seed=0)["verdict"] == "unresolved"
    refused = ms.run_point(_fake(boom), {"x": 5.0}, seed=0)
    assert refused["verdict"] == "refused" and "x" in refused["error"]

    def hang(p, c):
        time.sleep(30)
        return _ev(0.1, 1.0, True)
    assert ms.run_point(_fake(hang), {"x": 0.5}, seed=0, budget_s=0.2)["verdict"] == "overtime"


def test_draws_for_a_check_lie_where_it_runs():
    """slr.risk_vs_quadrature takes lams in [0.001, 100] while Paper C's lam is (0, 100]: the draws for the check
    stay in the intersection, and every one is accepted by the check's own resolution (Check.resolve)."""
    from attnverify.checks.runner import select

    [chk] = select(["slr.risk_vs_quadrature"])
    pts, _ = ms.draw_models(_paper("slr"), 30, np.random.default_rng(4), check=chk)
    assert min(p["lam"] for p in pts) >= 0.001
    for p in pts:
        chk.resolve("quick", ms.overrides_for(chk, p))


def test_paper_d_has_model_options_and_each_check_gets_its_own_within_its_range():
    """Paper D's options (d, tau, scale, R) are drawn per check within the check's own range: tsc.hardmax_curves
    declares scale = ||A||_2 in [1, 1e9], so its draws of the paper's scale (0, 10] lie in [1, 10]; a check
    receives only the options it declares (tsc.error_curves, whose protocol fixes its models, none of them)."""
    from attnverify.checks.runner import select

    assert [p.name for p in _paper("tsc").params] == ["d", "tau", "scale", "R"]
    [hard, curves] = select(["tsc.hardmax_curves", "tsc.error_curves"])
    pts, _ = ms.draw_models(_paper("tsc"), 30, np.random.default_rng(5), check=hard)
    assert all(1.0 <= p["scale"] <= 10.0 for p in pts) and len({p["scale"] for p in pts}) > 20
    assert set(ms.overrides_for(hard, pts[0])) == {"d", "scale"} and ms.overrides_for(curves, pts[0]) == {}


def test_overrides_fill_plural_parameters():
    chk = _fake(None, (Param("lams", "floats", (0.5, 2.0), ""), Param("eps", float, 0.1, "")))
    assert ms.overrides_for(chk, {"lam": 3.0, "eps": 0.2, "d": 9}) == {"lams": (3.0,), "eps": 0.2}


def test_summary_counts_and_bound():
    """3 passes, 1 fail, 1 error, 1 refused draw: n = 5 runs (a refused draw is not a run), rate 1/5; the Clopper-Pearson
    upper bound for 1 in 5 solves P(X <= 1 | p) = 0.05, i.e. (1-p)^5 + 5p(1-p)^4 = 0.05 (checked by bisection
    here); for 0 fails it is 1 - 0.05^(1/n)."""
    rows = [{"paper": "p", "check": "c", "verdict": v, "seconds": 1.0, "draw": i, "seed": i, "point": {},
             "observed": None, "threshold": None, "error": None, "refused_draws": 0}
            for i, v in enumerate(["pass", "pass", "pass", "fail", "error"])]
    rows[0]["refused_draws"] = 1
    e = ms.summarise(rows)["c"]
    assert (e["n"], e["pass"], e["fail"], e["error"], e["refused"]) == (5, 3, 1, 1, 1)
    assert e["false_alarm_rate"] == pytest.approx(0.2)
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if (1 - mid) ** 5 + 5 * mid * (1 - mid) ** 4 > 0.05 else (lo, mid)
    assert e["false_alarm_upper_95"] == pytest.approx(lo, abs=1e-9)
    ok = ms.summarise([{**rows[0], "draw": i, "refused_draws": 0} for i in range(20)])["c"]
    assert ok["false_alarm_upper_95"] == pytest.approx(1 - 0.05 ** (1 / 20))
    text = ms.markdown(ms.summarise(rows), n=5, seed=0)
    assert "| c | 5 | 3 | 1 |" in text and "fail" in text.split("Runs that did not pass:")[1]


def _cli(argv):
    from attnverify.cli.selftest import add_parser, cmd_selftest

    parser = argparse.ArgumentParser()
    add_parser(parser.add_subparsers())
    return cmd_selftest(parser.parse_args(["selftest", *argv]))


def test_cli_bad_input():
    for argv in (["--models", "0"], ["--models", "x"], ["--models", "1", "--papers", "nope"],
                 ["--models", "1", "--budget", "-1"], ["--models", "1", "--seeds", "2"],
                 ["--models", "1", "--only", "no.such.check"]):
        with pytest.raises(InputError):
            _cli([*argv, "--quiet"])


def test_tiny_sweep_on_a_cheap_check(tmp_path):
    """Two drawn Paper C models through slr.risk_vs_quadrature (risk against its quadrature): reproducible, and a
    valid model passes (the calibration claim: a check that fails on an admissible model is our error)."""
    out = tmp_path / "sweep.json"
    code = _cli(["--models", "2", "--papers", "slr", "--only", "slr.risk_vs_quadrature", "--json", str(out),
                 "--quiet"])
    data = json.loads(out.read_text())
    rows = data["rows"]
    assert [r["check"] for r in rows] == ["slr.risk_vs_quadrature"] * 2
    assert all(r["verdict"] == "pass" for r in rows), rows
    assert code == 0
    again = ms.sweep(2, seed=0, papers=["slr"], checks=["slr.risk_vs_quadrature"])
    again = json.loads(json.dumps(again, default=str))
    assert [(r["point"], r["observed"]) for r in again] == [(r["point"], r["observed"]) for r in rows]


def test_resume_runs_only_what_an_interrupted_sweep_left(tmp_path, monkeypatch):
    """An interrupted sweep's JSON (the rows so far, 'complete': false) is continued by --resume: the kept run is not
    repeated, the missing one runs, and the result is the uninterrupted sweep's."""
    out = tmp_path / "sweep.json"
    argv = ["--models", "2", "--papers", "slr", "--only", "slr.risk_vs_quadrature", "--json", str(out), "--quiet"]
    assert _cli(argv) == 0
    full = json.loads(out.read_text())
    out.write_text(json.dumps({**full, "complete": False, "rows": full["rows"][:1]}))
    ran = []
    real = ms.run_point
    monkeypatch.setattr(ms, "run_point", lambda check, point, **kw: ran.append(kw["seed"]) or real(check, point, **kw))
    assert _cli([*argv, "--resume"]) == 0
    assert ran == [1]                                   # model 1 only (model j runs under seed + j)
    again = json.loads(out.read_text())
    def counts(doc):
        return {k: [v[key] for key in ("n", "pass", "fail", "unresolved", "refused")] for k, v in doc["checks"].items()}
    assert again["complete"] is True and counts(again) == counts(full) == {"slr.risk_vs_quadrature": [2, 2, 0, 0, 0]}
    assert [(r["draw"], r["point"], r["observed"]) for r in again["rows"]] == [
        (r["draw"], r["point"], r["observed"]) for r in full["rows"]]


def test_resume_from_the_command_line_reads_the_interrupted_file(tmp_path, capsys):
    """Through the real command line (its output check refused an existing --json file: 'exists, use --force'),
    an interrupted sweep is resumed; --papers given in another order is the same sweep."""
    from attnverify.cli.command_line import main

    out = tmp_path / "sweep.json"
    argv = ["selftest", "--models", "2", "--only", "slr.risk_vs_quadrature", "--json", str(out), "--quiet"]
    assert main([*argv, "--papers", "slr", "meanfield"]) == 0
    doc = json.loads(out.read_text())
    out.write_text(json.dumps({**doc, "complete": False, "rows": doc["rows"][:1]}))
    assert main([*argv, "--papers", "slr"]) == 2 and "exists" in capsys.readouterr().err
    assert main([*argv, "--papers", "meanfield", "slr", "--resume"]) == 0
    rows = json.loads(out.read_text())["rows"]
    assert rows[0] == doc["rows"][0] and [(r["draw"], r["point"], r["observed"]) for r in rows] == [
        (r["draw"], r["point"], r["observed"]) for r in doc["rows"]]


def test_resume_refuses_another_sweep_or_odd_rows_before_any_work(tmp_path):
    row = {"paper": "slr", "check": "slr.risk_vs_quadrature", "draw": 0, "verdict": "pass", "seconds": 0.1}
    ident = {"models": 2, "seed": 0, "papers": ["slr"], "only": None, "model_files": [], "complete": False}
    base = ["--papers", "slr", "--quiet"]
    cases = [(["--models", "3"], ident, [row], "models = 2"),
             (["--models", "2", "--seed", "1"], ident, [row], "seed = 0"),
             (["--models", "2", "--only", "slr.risk"], ident, [row], "only = None"),
             (["--models", "2"], {k: v for k, v in ident.items() if k != "model_files"}, [row], "unrecorded"),
             (["--models", "2"], {"mutants": 3}, [{"mutant": "x"}], "not the JSON of a model sweep"),
             (["--models", "2"], ident, [row, row], "row 2 is not a run"),
             (["--models", "2"], ident, [{**row, "draw": 2}], "row 1 is not a run"),
             (["--models", "2"], ident, [{**row, "draw": True}], "row 1 is not a run"),
             (["--models", "2"], ident, [{**row, "verdict": "weird"}], "row 1 is not a run"),
             (["--models", "2"], ident, [{k: v for k, v in row.items() if k != "paper"}], "row 1 is not a run"),
             (["--models", "2"], ident, [{**row, "seconds": "3"}], "row 1 is not a run")]
    for i, (argv, doc, rows, words) in enumerate(cases):
        path = tmp_path / f"sweep{i}.json"
        path.write_text(json.dumps({**doc, "rows": rows}))
        with pytest.raises(InputError, match=words):
            _cli([*argv, "--json", str(path), "--resume", *base])
    for argv, words in ((["--models", "2", "--resume"], "needs --json"), (["--mutants", "--resume"], "goes with --models")):
        with pytest.raises(InputError, match=words):
            _cli([*argv, *base])


def test_low_temperature_without_power_is_unresolved_not_a_failure():
    """Found by the model sweep (seed 0): at beta sigma = 5.7e-6 the scores hardly move the softmax, the Monte Carlo
    agrees with J (max |z| 1.3 < 3.9) but cannot reject J at 1.1 beta either, and the check used to FAIL this valid
    model. Without power the comparison is unresolved (the default model still passes, with power:
    tests/signal/test_signal_checks_numerics.py)."""
    from attnverify.checks.runner import select

    [chk] = select(["signal.low_temperature"])
    point = {"sign": "symmetric", "theta": 0.01976800867522829, "beta": 0.005670462890299781, "sigma": 0.001,
             "R": 162, "L": 673, "d": 20, "n_sequences": 200}           # d and n smaller than the sweep's: cheaper
    r = ms.run_point(chk, point, seed=0)
    assert r["verdict"] == "unresolved", r
    assert r["observed"] <= r["threshold"] and "no power" in r["error"]


#: checks the model sweep found failing (or erring on) admissible models, with the cause (docs/trust.md, "False
#: alarms on valid models"); issue 31 item 5 stays open for them
KNOWN_FAILING: dict[str, str] = {}


def _slow_cases():
    from attnverify.checks.runner import select

    out = []
    for c in select(["signal", "meanfield", "slr", "tsc"]):
        marks = [pytest.mark.xfail(reason=KNOWN_FAILING[c.id], strict=False)] if c.id in KNOWN_FAILING else []
        out.append(pytest.param(c.id, marks=marks))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("check_id", _slow_cases())
def test_no_check_fails_a_valid_model(check_id):
    """The paper-scale sweep (issue 31.5): 50 admissible models for the check, quick profile: no failure and no
    error (unresolved and overtime are counted, not failures). Hours for all checks."""
    paper = check_id.split(".")[0]
    rows = ms.sweep(50, seed=0, papers=[paper], checks=[check_id], budget_s=600)
    bad = [r for r in rows if r["verdict"] in ("fail", "error")]
    assert not bad, bad


@pytest.mark.slow  # 30 s: d = 3, N = 1000 particles
def test_w2_bound_fits_atom_rates_in_the_linear_regime_on_the_seed_23_model():
    """The seed-23 sweep model of meanfield.w2_bound (transversal rates 4.6 % apart; a particle's slow component 400
    times below its distance): the fitted atom rates missed by 1.1 % (observed 5.57 against 1) before the linear
    rule (tests/meanfield/test_power_meanfield.py); it passes."""
    from attnverify.checks.runner import select

    [chk] = select(["meanfield.w2_bound"])
    point = {"d": 3, "Q": [[1.3182261483383453, -0.078974868036146, -0.4967535483831529],
                           [0.6179073975461195, 1.3238905199185136, 0.5268979300750594],
                           [0.13876476889087075, -0.34055787879035376, 1.2465918613008207]],
             "K": [[0.12985361602444395, 0.0553890113887412, -0.048373151656262096],
                   [0.05782248071327674, 0.2970347678025823, 0.07047732705399948],
                   [-0.11757591271418472, -0.017123287537479284, 0.1700765135849684]],
             "V": [[0.33687604579808406, -0.5896670749438376, 0.14284953339412304],
                   [-1.3042581967689346, 0.23405190050286206, -0.6595433556293083],
                   [-1.5012759924140406, 0.8182053987646752, -2.110094688203727]]}
    r = ms.run_point(chk, point, seed=23)
    assert r["verdict"] == "pass", r


def test_ode_tracking_outside_the_expansion_in_the_step_is_unresolved():
    """Found by the model sweep: at sigma = 213 the gradient energy makes eta_0^2 max E|g|^2 = 2.5e4 (the
    second-order mean path predicts an sd of 98 for rho in [-1, 1]) and the check used to end in a 0/0 error, or,
    with that guarded, to fail at |z| = 96. Outside the expansion the check is unresolved, before any comparison."""
    from attnverify.checks.runner import select

    [chk] = select(["signal.ode_tracks_sga"])
    point = {"sign": "symmetric", "theta": 0.0048, "beta": 0.001, "sigma": 213.0, "R": 4, "L": 153, "d": 20}
    r = ms.run_point(chk, point, seed=0)
    assert r["verdict"] == "unresolved" and "outside the expansion in the step" in r["error"], r


@pytest.mark.parametrize("point", [
    # beta theta ~ 0.07 with sigma = 0.001: every run stays at its start to 1e-6 and used to count as settled there,
    # 15 of 24 runs "resting where the theory lists no equilibrium"
    {"thetas": (9.6e-4,), "beta": 71.9, "sigma": 0.001, "d": 2, "max_steps": 3000},
    # the drift weaker than the SGA noise: a few wandering runs pass the settling test by chance
    {"thetas": (6e-4,), "beta": 4.65, "sigma": 0.317, "R": 1, "L": 21, "d": 49, "max_steps": 4000},
])
def test_sign_ambiguity_with_a_weak_drift_is_unresolved_not_a_failure(point):
    """Found by the model sweep (3 of 5 models failed): a run that never left its start is not settled, and the
    runs of one (sign, theta) are judged only when all of them settled."""
    from attnverify.checks.runner import select

    [chk] = select(["signal.sign_ambiguity"])
    r = ms.run_point(chk, {"sign": "fixed", **point}, seed=0)
    assert r["verdict"] == "unresolved" and "did not settle" in r["error"], r


@pytest.mark.slow  # 24 SGA runs at d = 200, L = 193 to max_steps: ~4 minutes
def test_sign_ambiguity_in_a_noise_cloud_is_unresolved_not_a_failure():
    """Found by the model sweep (seed 4, draw 1): at sigma = 10.1 and beta theta = 0.0026 every fixed-sign run wandered
    about rho = 0.04 with sd 0.05-0.08 and was judged to rest where the theory lists no equilibrium (observed 12
    against 0). Such a run is a noise cloud, not at a limit (settle_state's max_noise): unresolved."""
    from attnverify.checks.runner import select

    [chk] = select(["signal.sign_ambiguity"])
    point = {"thetas": (0.3555898123649186,), "beta": 0.0073858267378796045, "sigma": 10.127933305820475, "R": 2,
             "L": 193, "d": 200}
    r = ms.run_point(chk, point, seed=5)
    assert r["verdict"] == "unresolved" and "noise cloud" in r["error"], r


def test_alignment_without_power_is_unresolved_not_an_error():
    """Found by the model sweep (seed 1): at beta theta = 6e-5 the predicted mean paths do not move with the scale
    of F, and the fitted scale was 0/0 (FloatingPointError: verdict error on a valid model). Without a testable
    scale the comparison is unresolved, and still compared at every recorded time."""
    from attnverify.checks.runner import select

    [chk] = select(["signal.alignment_30_runs"])
    point = {"sign": "symmetric", "theta": 0.0008966, "beta": 0.06457, "sigma": 0.001001, "R": 1, "L": 10, "d": 25}
    r = ms.run_point(chk, point, seed=2)
    assert r["verdict"] == "unresolved", r
    assert "no power" in r["error"] and r["observed"] <= r["threshold"]


def _terminal_sweep_model(**extra):
    """The model sweep's d = 2 model that failed meanfield.terminal_phase (seed 0, draw 1: V B^T's top eigenvalue
    51.6, derived approach rate r = 57.4), resolved at the quick profile."""
    import zlib

    from attnverify.checks.runner import select

    [chk] = select(["meanfield.terminal_phase"])
    [paper] = [p for p in papers() if p.model == "meanfield"]
    rng = np.random.default_rng(np.random.SeedSequence([0, zlib.crc32(chk.id.encode())]))   # as ms.sweep draws
    point = ms.draw_models(paper, 2, rng, check=chk)[0][1]
    assert point["d"] == 2 and abs(float(np.asarray(point["V"])[1, 1]) - 50.197) < 1e-3     # the model meant
    return chk, point, {**ms.overrides_for(chk, point), **extra}


def test_terminal_phase_samples_the_fit_window_of_a_fast_model():
    """At r = 57.4 the distance to S crosses the fit window [1e-9, 1e-5] in 0.16 time units, between two of the
    default 121 output times over t_max = 30, and the approach rate was read from a later stretch (-2.5 against
    57.4: a failure on a valid model). The output grid now has 12 samples across the window; a default model (r = 1)
    keeps its 121."""
    from attnverify.checks.meanfield.terminal import settle

    chk, _, given = _terminal_sweep_model()
    q = chk.resolve("quick", given)
    fast = settle("main", q)[0]                         # sized from the model's own V (r = 57.4)
    slow = settle("main", q, (1.0, 0.0))[0]
    window = np.log(1e-5 / 1e-9) / 57.4
    assert fast["n_times"] >= 12 * fast["t_max"] / window and slow["n_times"] == 121


@pytest.mark.slow
def test_terminal_phase_passes_the_fast_sweep_model():
    """End to end (27 s): the fast model above passes (it failed with 1.04e4 against 1 before)."""
    chk, point, given = _terminal_sweep_model(betas=(10.0, 31.6), cases="")
    r = ms.run_point(chk, {**point, "betas": (10.0, 31.6), "cases": ""}, seed=1)
    assert r["verdict"] == "pass", r


@pytest.mark.slow  # 12 s
def test_reduced_flow_at_the_seed_0_draw_12_model_is_unresolved_not_a_failure():
    """Paper C's 50-model sweep at seed 0 (stop 51), draw 12 (lam = 100, eps = 89): the default step 0.01 is not
    small against the flow's time scale there (PGD 0.96-1.04 from the flow at h and h/2; at h = 0.001 it converges
    with order 1.0004), and the check failed at 2.2 x its tolerance. PGD's own differences shrink by 1.26, not 2,
    when the step halves: unresolved, saying so."""
    from attnverify.checks.runner import select

    [chk] = select(["slr.reduced_flow"])
    point = {"lam": 100.0, "gamma": 0.4459255861230021, "d": 1138, "L": 2, "eps": 89.0216904074038}
    r = ms.run_point(chk, point, seed=12)
    assert r["verdict"] == "unresolved" and "first-order regime" in r["error"], r


@pytest.mark.slow  # 90 s each: d = 3, N = 1000 particles, the flow to t = 3840, continued to 245760
@pytest.mark.parametrize("draw", [17, 35])
def test_w2_bound_passes_the_seed_0_slow_flow_models(draw):
    """Paper B's 50-model sweep at seed 0 (stop 51), draw 17: V of entries ~0.01 makes the flow slow (c = 0.0056) and
    at the longest horizon, 64 t_inf = 3840, E(t) still fell (by 0.07 over the last eighth) and ended at 1.05e-8,
    just above the fit window's lower end: the check failed it as 'Pi is not the limit' (observed 1.049 against 1).
    The horizon was too short to tell. The unsettled flow is now continued to 64 times the horizon, where every
    particle is at its atom (the pairing cost below the window): the derived Pi is the limit, and with C1 and the rates
    agreeing, it passes. Draw 35 (found this stop, on the code between: the pairing cost 1.9e-5 at t = 3840, the flow
    unsettled) likewise."""
    import zlib

    from attnverify.checks.registry import papers
    from attnverify.checks.runner import select

    [chk] = select(["meanfield.w2_bound"])
    paper = next(p for p in papers() if p.model == "meanfield")
    rng = np.random.default_rng(np.random.SeedSequence([0, zlib.crc32(chk.id.encode())]))
    points, _ = ms.draw_models(paper, 50, rng, check=chk)
    r = ms.run_point(chk, points[draw], seed=draw)
    assert r["verdict"] == "pass", r
