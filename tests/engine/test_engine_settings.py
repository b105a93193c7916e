"""A model file's ``[checks.<name>]`` tables (attnverify.checks.engine._settings): the point at which one generated
check runs, over the file's defaults and the check's own, at every profile; ``--set`` still overrides it. Every bad
table is one line naming the file and the field, exit 2, before any work, and leaves nothing of the file
registered."""
from __future__ import annotations

import copy
import tomllib
from pathlib import Path

import pytest

from attnverify.checks.engine import add_model
from attnverify.checks.params import InputError
from attnverify.checks.registry import REGISTRY, papers, remove_paper
from attnverify.theory.engine import load_model

MODELS = Path(__file__).resolve().parents[2] / "examples" / "models"
BASE = tomllib.loads((MODELS / "paper_a.toml").read_text())
BASE.pop("checks", None)
BASE["model"]["id"] = "settings_case"


@pytest.fixture(autouse=True)
def _unregistered():
    """Each test starts with no paper of the id registered."""
    remove_paper("settings_case")


def model_with(checks) -> dict:
    data = copy.deepcopy(BASE)
    data["checks"] = checks
    return data


def test_a_setting_moves_one_checks_default_at_every_profile_and_set_overrides_it():
    add_model(model_with({"ode_tracks_sga": {"theta": 2, "runs": 64}}))
    ode, objective = REGISTRY["settings_case.ode_tracks_sga"], REGISTRY["settings_case.objective_vs_montecarlo"]
    assert ode.param("theta").default == 2.0 and objective.param("theta").default == 0.25
    assert "[checks.ode_tracks_sga]" in ode.param("theta").help
    quick, paper = ode.resolve("quick", {}), ode.resolve("paper", {})
    assert quick["theta"] == paper["theta"] == 2.0
    assert quick["runs"] == paper["runs"] == 64                  # the paper profile's max(runs, 100) gives way
    assert paper["steps"] == BASE.get("protocol", {}).get("steps", 300)
    assert ode.resolve("quick", {"theta": "0.5"})["theta"] == 0.5


def test_settings_enter_the_models_digest():
    """The digest keys every cache: a run at other settings never reads a stored result of the first."""
    a = load_model(model_with({"ode_tracks_sga": {"theta": 2}}))
    b = load_model(model_with({"ode_tracks_sga": {"theta": 3}}))
    assert a.digest != b.digest and a.settings_for("ode_tracks_sga") == {"theta": 2}
    assert a.settings_for("objective_vs_montecarlo") == {}


@pytest.mark.parametrize("checks, needles", [
    ({"ode_track_sga": {"theta": 2}}, ("checks.ode_track_sga:", "did you mean 'ode_tracks_sga'")),
    ({"attention_map_vs_montecarlo": {"n_sequences": 10}}, ("checks.attention_map_vs_montecarlo:",
                                                            "no generated check")),
    ({"ode_tracks_sga": {"thetta": 2}}, ("checks.ode_tracks_sga.thetta:", "did you mean 'theta'")),
    ({"ode_tracks_sga": {"theta": -1}}, ("checks.ode_tracks_sga.theta:", ">= 0", "-1")),
    ({"ode_tracks_sga": {"runs": 2.5}}, ("checks.ode_tracks_sga.runs:", "an integer")),
    ({"ode_tracks_sga": {"rho0": [0.1, 0.2]}}, ("checks.ode_tracks_sga (rho0):", "one per direction")),
    ({"ode_tracks_sga": {"rho0": [1.0]}}, ("checks.ode_tracks_sga (rho0):", "sum of squares")),
    ({"objective_vs_montecarlo": {"R": 1050}}, ("checks.objective_vs_montecarlo (R):", "count")),
    # the scale rule holds a setting as it holds --set: no false-alarm rate at the level of rounding, no size too
    # large to run, nothing beyond double precision (a reviewer's [checks] z_level = 1e-300 let F x 1.3 pass)
    ({"ode_tracks_sga": {"z_level": 1e-300}}, ("checks.ode_tracks_sga.z_level:", "rounding")),
    ({"ode_tracks_sga": {"theta": 1e300}}, ("checks.ode_tracks_sga.theta:", "too large to run")),
    ({"ode_tracks_sga": {"runs": 10 ** 20}}, ("checks.ode_tracks_sga.runs:", "too large to run")),
    ({"ode_tracks_sga": {"runs": 10 ** 400}}, ("checks.ode_tracks_sga.runs:", "beyond double precision")),
])
def test_a_bad_setting_is_one_line_and_registers_nothing(checks, needles):
    with pytest.raises(InputError) as info:
        add_model(model_with(checks))
    msg = str(info.value)
    assert "\n" not in msg and msg.startswith("<model>: checks."), msg
    for needle in needles:
        assert needle in msg, msg
    assert "settings_case" not in {p.model for p in papers()}
    assert not [cid for cid in REGISTRY if cid.startswith("settings_case.")]


@pytest.mark.parametrize("checks, field", [
    (3, "checks"),
    ({"ode_tracks_sga": 2}, "checks.ode_tracks_sga"),
    ({"ode_tracks_sga": {"theta": {"x": 1}}}, "checks.ode_tracks_sga.theta"),
    ({"ode_tracks_sga": {"rho0": []}}, "checks.ode_tracks_sga.rho0"),
    ({"ode_tracks_sga": {"rho0": [0.1, "a"]}}, "checks.ode_tracks_sga.rho0"),
])
def test_a_table_of_the_wrong_shape_is_refused_when_the_file_is_read(checks, field):
    with pytest.raises(ValueError) as info:
        load_model(model_with(checks), name="case.toml")
    assert str(info.value).startswith(f"case.toml: {field}: ") and "\n" not in str(info.value)


def test_cli_exit_2_before_any_work(tmp_path, capsys):
    from attnverify.cli import main

    text = (MODELS / "paper_a.toml").read_text().replace('ode_tracks_sga = { theta = 2 }',
                                                          'ode_tracks_sga = { theta = 2, runz = 3 }')
    path = tmp_path / "bad.toml"
    path.write_text(text)
    assert main(["run", "--model", str(path), "paper_a.ode_tracks_sga", "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "checks.ode_tracks_sga.runz" in err and "did you mean 'runs'" in err, err


def test_a_number_beyond_double_precision_is_one_line_on_the_command_line_too(capsys):
    from attnverify.cli import main

    assert main(["run", "signal.objective_vs_montecarlo", "--set", "L=" + "9" * 400, "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "beyond double precision" in err and "Overflow" not in err, err


def test_the_command_line_says_which_values_a_run_takes_from_the_file():
    """A reader of a passing verdict sees that the check ran at the file's theta = 2, not at the model's default
    (nothing runs: the plan is all this needs)."""
    from attnverify.cli.run import plan_explained

    add_model(MODELS / "paper_a.toml")
    _, notes = plan_explained(["paper_a.ode_tracks_sga", "paper_a.objective_vs_montecarlo"], "quick", {})
    assert notes == ["paper_a.ode_tracks_sga runs at theta=2 (set by paper_a.toml's [checks.ode_tracks_sga]; --set "
                     "overrides it)"]
    _, notes = plan_explained(["paper_a.ode_tracks_sga"], "quick", {"theta": "1"})
    assert not any("runs at" in line for line in notes)


def test_set_over_a_setting_is_held_to_the_templates_own_settings():
    """A reviewer's compounding: [checks] runs = 3000 (within 100 x the template's 40 and 100) made 3000 the scale
    rule's reference, so --set runs=300000 (3000 x the template's) was accepted."""
    add_model(model_with({"ode_tracks_sga": {"runs": 3000}}))
    check = REGISTRY["settings_case.ode_tracks_sga"]
    assert check.resolve("quick", {})["runs"] == 3000
    with pytest.raises(InputError) as info:
        check.resolve("quick", {"runs": "300000"})
    assert "too large to run" in str(info.value)


def test_a_refused_file_leaves_the_paper_of_the_same_id_registered_before_it():
    """A good file, then an edit of it with a bad setting: the edit is refused, and the good file's paper and checks
    stay registered as they were (the refusal removed them)."""
    good = add_model(model_with({"ode_tracks_sga": {"theta": 2}}))
    before = {cid: c for cid, c in REGISTRY.items() if cid.startswith("settings_case.")}
    with pytest.raises(InputError):
        add_model(model_with({"ode_tracks_sga": {"theta": -1}}))
    assert [p for p in papers() if p.model == "settings_case"] == [good]
    assert {cid: c for cid, c in REGISTRY.items() if cid.startswith("settings_case.")} == before
    assert REGISTRY["settings_case.ode_tracks_sga"].param("theta").default == 2.0


def test_an_interrupted_re_add_keeps_the_paper_registered_before_it(monkeypatch):
    """(A reviewer's case.) Ctrl-C while an edited file's checks register: the good paper stays, not the half-built
    one."""
    import attnverify.checks.engine.field as field

    good = add_model(model_with({"ode_tracks_sga": {"theta": 2}}))
    before = {cid: c for cid, c in REGISTRY.items() if cid.startswith("settings_case.")}

    def interrupted(paper):
        raise KeyboardInterrupt
    monkeypatch.setattr(field, "register_for", interrupted)
    with pytest.raises(KeyboardInterrupt):
        add_model(model_with({"ode_tracks_sga": {"theta": 3}}))
    assert [p for p in papers() if p.model == "settings_case"] == [good]
    assert {cid: c for cid, c in REGISTRY.items() if cid.startswith("settings_case.")} == before
