"""The generic mutants of a model file (attnverify.checks.engine.selftest) are the wrong derivations they say they
are, and the generated checks reject them."""
from __future__ import annotations

from pathlib import Path

import pytest
import sympy as sp

from attnverify.checks.engine import add_model
from attnverify.checks.registry import REGISTRY
from attnverify.theory.engine import derive
from attnverify.theory.engine.derive import Derivation
from attnverify.theory.engine.identity import proves_zero
from check_runs import run_check

MODELS = Path(__file__).resolve().parents[2] / "examples" / "models"


def test_dropped_tilt_reads_the_tilted_mean_as_the_untilted_one():
    """Paper A's model: the tilted mean of a signal token is theta xi + sigma^2 beta q, of a noise token
    sigma^2 beta q.  Read as theta xi and 0, the limit output is the signal's mass times theta xi, the mass
    R e^{beta theta rho} / (R e^{beta theta rho} + L - R) (the MGFs are kept, so the masses are the derived ones):
    J = (mass theta)^2, written here by hand from the model.  The correct J adds the tilt's beta sigma^2 q."""
    model = derive(MODELS / "paper_a.toml").model
    wrong = Derivation(model, drop_tilt=True).quantities
    right = derive(MODELS / "paper_a.toml").quantities
    theta, beta, sigma, R, L, rho = sp.symbols("theta beta sigma R L rho_xi")
    sym = {s.name: s for s in right["J_limit"].free_symbols}
    mass = R * sp.exp(beta * theta * rho) / (R * sp.exp(beta * theta * rho) + L - R)
    by_hand = (mass * theta) ** 2
    named = by_hand.subs({s: sym[s.name] for s in by_hand.free_symbols}, simultaneous=True)
    assert proves_zero(wrong["J_limit"] - named)
    tilted = ((mass * theta + beta * sigma**2 * rho) ** 2 + beta**2 * sigma**4 * (1 - rho**2))
    assert proves_zero(right["J_limit"] - tilted.subs({s: sym[s.name] for s in tilted.free_symbols},
                                                      simultaneous=True))
    assert proves_zero(wrong["mass.signal"] - right["mass.signal"])
    assert wrong["J_correction"] != right["J_correction"]


def test_dropped_tilt_on_the_sphere_leaves_no_mean():
    """Uniform tokens on a sphere have mean 0: with the tilt dropped the attention map is 0."""
    wrong = Derivation(derive(MODELS / "token_sphere.toml").model, drop_tilt=True).quantities
    assert all(e == 0 for e in wrong["attention_map"])


@pytest.mark.parametrize("name", ["paper_a", "paper_a_symmetric", "token_gaussian", "token_sphere"])
def test_dropped_tilting_term_is_rejected(name):
    """The mutant on the examples whose derivation takes seconds (the others: the slow examples test): the objective
    check (a trained query) or the attention-map check (a token query) fails it at the file's own values."""
    paper = add_model(MODELS / f"{name}.toml")
    [mutant] = [m for m in paper.mutants() if m.name == f"{name}.dropped_tilting_term"]
    [cid] = mutant.checks
    assert cid.split(".", 1)[1] in ("objective_vs_montecarlo", "attention_map_vs_montecarlo")
    correct = run_check(cid)
    wrong = run_check(cid, theory=mutant.make(REGISTRY[cid].theory))
    assert (correct.verdict, wrong.verdict) == ("pass", "fail"), (correct.error, wrong.error)


EQUIVALENT = '''[model]
id = "tilt_unread"
directions = ["xi"]
[parameters]
theta = { default = 1, min = 0 }
beta = { default = 1, min = 0, strict = true }
s1 = { default = 1, min = 0, strict = true }
s2 = { default = 2, min = 0, strict = true }
R = { default = 50, integer = true, min = 1 }
L = { default = 1050, integer = true, min = 2 }
d = { default = 20, integer = true, min = 2 }
[[tokens]]
name = "signal"
count = "R"
mean = "theta*xi"
cov = { xi = "1", rest = "s2^2" }
[[tokens]]
name = "noise"
count = "L - R"
cov = { xi = "1", rest = "s1^2" }
[attention]
query = "q"
score = "beta*<q, A x>"
value = "V x"
[attention.matrices]
A = { rows = [["0"]], rest = "1" }
V = { rows = [["1"]], rest = "0" }
'''


def test_a_tilt_the_value_never_reads_makes_the_mutant_equivalent(tmp_path):
    """(A reviewer's model.) The score reads only the query's orthogonal part and the value only xi: the tilt moves
    the tokens along u, which V does not read, so the mutant is the correct derivation; it is marked equivalent
    (reported, not counted as missed), and SymPy agrees that every quantity is unchanged.  The examples' is not."""
    path = tmp_path / "tilt_unread.toml"
    path.write_text(EQUIVALENT, encoding="utf-8")
    paper = add_model(path)
    [mutant] = [m for m in paper.mutants() if m.name == "tilt_unread.dropped_tilting_term"]
    assert mutant.equivalent
    right, wrong = derive(path).quantities, Derivation(derive(path).model, drop_tilt=True).quantities
    for name in ("J_limit", "J_finite", "mass.signal"):
        assert proves_zero(wrong[name] - right[name]), name
    for name in ("paper_a", "token_sphere", "two_signals"):
        example = add_model(MODELS / f"{name}.toml")
        [m] = [m for m in example.mutants() if m.name.endswith("dropped_tilting_term")]
        assert not m.equivalent, name
