"""What a built-in claim's evaluator interprets in a statement (a predicate, a target, an ``at`` option) is read
before any work (``reads`` of attnverify.checks.claims.claim): a restatement with a misspelt word used to reach the
evaluator after its checks ran and end as an inconclusive row with exit 0 ('horizon = "two_sidd"'), or was silently
read as something else. Now it is exit 2 and one line naming the claim and the field; and no built-in statement, nor
any statement the claim self-test makes from one, is refused."""
from __future__ import annotations

from pathlib import Path

import pytest

from attnverify.checks.claims import CLAIMS, all_claims, evaluate_claim, statement_of
from attnverify.checks.params import InputError
from attnverify.checks.registry import paper_of
from attnverify.cli import main
from attnverify.user_claims import prepare


def _toml(value) -> str:
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + " }"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return f'"{value}"' if isinstance(value, str) else repr(value)


def _restatement(tmp_path: Path, cid: str, **changes) -> Path:
    """A claims file restating the built-in claim ``cid`` in its own words, with ``changes``."""
    own = statement_of(cid)
    fields = {"id": "mine.x", "model": paper_of(cid).model, "like": cid, "kind": own.kind, "stated": own.stated,
              **({"quantity": own.quantity} if own.quantity else {}), **own.extra, **changes}
    path = tmp_path / "restated.toml"
    path.write_text("[[claim]]\n" + "".join(f"{k} = {_toml(v)}\n" for k, v in fields.items()), encoding="utf-8")
    return path


def test_every_qualitative_claim_reads_its_words_and_accepts_its_own():
    """Each built-in claim with a qualitative statement (whose words only its evaluator can interpret) declares what
    it reads, and reads its paper's own statement without complaint."""
    claims = all_claims()
    qualitative = [c for c in claims if statement_of(c.id).kind == "qualitative"]
    assert len(qualitative) >= 14
    assert [c.id for c in qualitative if c.reads is None] == []
    for c in claims:
        if c.reads is not None:
            c.reads(statement_of(c.id))


def test_every_claim_with_reads_resolves_restated_in_its_own_words(tmp_path):
    for c in all_claims():
        if c.reads is not None:
            prepare(_restatement(tmp_path, c.id))


BAD = [
    ("A.noise_attention_vanishes", {"target": "R/(L-R) growin"}, "field 'target'", "did you mean R/(L-R) growing"),
    ("A.noise_attention_vanishes", {"stated": "nuisance_mass_vanish"}, "field 'stated'", "nuisance_mass_vanishes"),
    ("A.no_spurious_traps", {"target": "thta > 1"}, "field 'target'", "'thta > 1'"),
    ("A.up_to_sign", {"target": "fixd"}, "field 'target'", "did you mean fixed"),
    ("A.up_to_sign", {"target": "fixed, theta > 1.2.3"}, "field 'target'", "'1.2.3' is not a number"),
    ("A.any_initialisation", {"target": "+xii"}, "field 'target'", "did you mean +xi"),
    ("A.any_initialisation", {"stated": "limits_are_pole"}, "field 'stated'", "limits_are_poles"),
    ("B.log_beta_time_scale", {"target": "t_min = a log(beta) + b with a >0"}, "field 'target'", "did you mean"),
    ("B.conjecture1", {"target": "dominant eigenspace of W"}, "field 'target'", "unknown name 'W'"),
    ("B.conjecture1", {"stated": "terminal_concentraton"}, "field 'stated'", "terminal_concentration"),
    ("C.bayes_optimal", {"target": "every d"}, "field 'target'", "reads no target"),
    ("C.manifold_invariant", {"stated": "manifold_invarant"}, "field 'stated'", "manifold_invariant"),
    ("C.manifold_convergence", {"target": "every start in the ball"}, "field 'target'", "'every start'"),
    ("C.sphere_schedule", {"stated": "schedule_reaches_orcle"}, "field 'stated'", "schedule_reaches_oracle"),
    ("C.oracle_minimiser", {"target": "globl, lam < 0.9"}, "field 'target'", "did you mean global"),
    ("C.oracle_minimiser", {"target": "global, lambda < 0.9"}, "field 'target'", "'lam > X'"),
    ("D.moment_rate", {"at": {"horizon": "two_sidd"}}, "field 'at.horizon'", "did you mean two_sided"),
    ("D.beta_below_half", {"target": "half"}, "field 'target'", "'half' is not a number"),
    ("D.beta_below_half", {"target": "inf"}, "field 'target'", "not finite"),
    ("D.horizon_convention", {"stated": "two_sided_invariat"}, "field 'stated'", "two_sided_invariant"),
    ("D.polynomial_constant", {"stated": "polynomial"}, "field 'stated'", "separated by a comma"),
    ("D.polynomial_constant", {"stated": "polynomial, exponental"}, "field 'stated'", "did you mean exponential"),
    ("D.polynomial_constant", {"target": "1/(2*(1 + h**2))"}, "field 'target'", "unknown symbol 'h'"),
    ("D.polynomial_constant", {"target": "1/(2*(1 + H**2)"}, "field 'target'", "1 bracket(s) left open"),
    ("D.polynomial_constant", {"target": "1/(2*(1 + H**2)))"}, "field 'target'", "a ')' closes no bracket"),
    # (a reviewer's) the measurement's own axes: a rate in another variable or scale, a bound in other variables
    ("D.moment_rate", {"variable": "m", "stated": "m**(-1/(2*(1 + H**2)))"}, "field 'variable'", "measures in 'n'"),
    ("B.zero_temperature_rate", {"variable": "bta"}, "field 'variable'", "measures in 'beta'"),
    ("D.moment_rate", {"scale": "exponential"}, "field 'scale'", "measures in 'power'"),
    ("B.stationary_projection", {"variables": ["time"], "stated": "K*exp(-c*time)"}, "field 'variables'", "'t'"),
    # a direction the evaluator does not implement was read as another one
    ("D.moment_rate", {"direction": "lower"}, "field 'direction'", "'exact', 'upper'"),
    ("D.uniform_rate", {"direction": "exact"}, "field 'direction'", "'upper'"),
    # a bound with two constants to fit, where one can be
    ("B.stationary_projection", {"constants": ["K", "C"], "stated": "K*exp(-C*t)"}, "2 unspecified constants",
     "one multiplicative constant"),
    # a protocol key misspelt was dropped: the figure was judged against the protocol as run
    ("A.reported_alignment", {"protocol": {"thetta": 0.25}}, "field 'protocol'", "did you mean theta"),
    ("A.reported_alignment", {"protocol": {"run": 30}}, "field 'protocol'", "did you mean runs"),
    ("A.reported_alignment", {"protocol": {"sign": "symetric"}}, "field 'protocol.sign'", "did you mean symmetric"),
    ("A.reported_alignment", {"protocol": {"runs": "thirty"}}, "field 'protocol.runs'", "not a finite number"),
    ("A.reported_alignment", {"protocol": {"runs": 2.5}}, "field 'protocol.runs'", "not a positive integer"),
    # a target that names no matrix, an empty range
    ("B.conjecture1", {"target": "dominant eigenspace of 2"}, "field 'target'", "not a d x d matrix expression"),
    ("A.no_spurious_traps", {"target": "theta < -1"}, "field 'target'", "the range is empty"),
    ("C.oracle_minimiser", {"target": "global, lam > 0.9, lam < 0.1"}, "field 'target'", "the range is empty"),
]


@pytest.mark.parametrize("cid, change, field, named", BAD, ids=[f"{c}-{next(iter(ch))}" for c, ch, _, _ in BAD])
def test_a_misread_word_is_refused_before_any_work(tmp_path, cid, change, field, named):
    with pytest.raises(InputError) as info:
        prepare(_restatement(tmp_path, cid, **change))
    text = str(info.value)
    assert "mine.x" in text and field in text and named in text and "\n" not in text, text
    assert not any(raw in text for raw in ("Error", "Traceback")), text


@pytest.mark.parametrize("cid, change", [
    ("B.conjecture1", {"target": "dominant eigenspace of Rational(1,2)*(V + V^T)"}),   # read before: a reviewer's
    ("B.conjecture1", {"target": "dominant invariant subspace of 0.5*(B^T V + 1e-3*V)"}),
    ("A.no_spurious_traps", {"target": "theta < 3, theta > 1"}),                     # two clauses, as the others
    ("A.up_to_sign", {"target": "symmetric, theta > 1.2"}),
    ("C.oracle_minimiser", {"target": "local, lam < 0.9, lam > 0.1"}),
    ("B.theorem1", {"variables": ["t", "beta"]}),                                   # the same axes, in any order
    ("A.reported_alignment", {"protocol": {"theta": 0.25, "sign": "symmetric", "runs": 30, "steps": 2000}}),
])
def test_a_valid_restatement_is_not_refused(tmp_path, cid, change):
    prepare(_restatement(tmp_path, cid, **change))


def test_a_misspelt_horizon_is_exit_2_on_the_command_line(tmp_path, capsys, monkeypatch):
    """The note's case: D.moment_rate restated with at.horizon = "two_sidd" ran its checks and ended inconclusive,
    exit 0."""
    import attnverify.checks.runner as runner

    monkeypatch.setattr(runner, "run", lambda *args, **kwargs: pytest.fail("the checks ran"))
    path = _restatement(tmp_path, "D.moment_rate", at={"horizon": "two_sidd"})
    assert main(["audit", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "two_sidd" in err and "two_sided" in err, err


def test_a_direct_evaluation_of_a_misread_word_is_inconclusive_and_says_why():
    """Past the audit's resolve (a statement handed to evaluate_claim in Python): an inconclusive row naming the
    field, before the evaluator runs, whatever the results."""
    own = statement_of("A.any_initialisation")
    row = evaluate_claim(CLAIMS["A.any_initialisation"], {}, own.restated(own.stated, target="+xii"))
    assert row.verdict == "inconclusive" and "field 'target'" in str(row.reason), row.reason
    own = statement_of("A.up_to_sign")                  # a target that is no string (only Python can give one)
    row = evaluate_claim(CLAIMS["A.up_to_sign"], {}, own.restated(own.stated, target=1))
    assert row.verdict == "inconclusive" and "not a string" in str(row.reason), row.reason
