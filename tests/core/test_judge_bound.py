"""judges.bound: one rule for every stated upper bound with an unspecified constant, on synthetic left-hand sides
whose truth is known: a valid looser bound is not refuted and says how loose; a violated one is refuted with the
certified lower end; a ratio that rises and levels off (a valid bound before its constant is reached) is not a
violation; the words are computed."""
from __future__ import annotations

import numpy as np
import pytest

from attnverify.checks.judges import BoundPoint, BoundSeries, bound
from attnverify.checks.reason import Number, as_reason
from attnverify.checks.stated import parse_claims

T = np.linspace(0.0, 30.0, 61)


def _stated(expr: str, constants=("K", "c")):
    (s,) = parse_claims({"claim": [{"id": "x.b", "model": "m", "kind": "bound", "stated": expr, "variables": ["t"],
                                    "constants": list(constants)}]}, "test")
    return s


def _series(lhs: np.ndarray, samples=(), rel_halfwidth: float = 1e-6) -> list[BoundSeries]:
    pts = tuple(BoundPoint(float(t), {"t": np.array([t])}, np.array([v * (1 - rel_halfwidth)]),
                           np.array([v * (1 + rel_halfwidth)]), tuple(np.array([s[i]]) for s in samples))
                for i, (t, v) in enumerate(zip(T, lhs)))
    return [BoundSeries("t", "t", pts, 20, scale="linear")]


def _lhs(rate: float, amp: float = 2.0) -> np.ndarray:
    return amp * np.exp(-rate * T)


def test_a_valid_bound_with_the_true_rate_is_not_refuted_and_called_sharp():
    v = bound(_stated("K*exp(-c*t)"), _series(_lhs(0.5)), derived={"c": 0.5})
    assert v.verdict == "not_refuted" and "sharp along $t$" in v.reason


def test_a_looser_bound_is_not_refuted_and_the_text_says_how_loose():
    v = bound(_stated("K*exp(-c*t)"), _series(_lhs(0.5)), derived={"c": 0.25})
    assert v.verdict == "not_refuted"
    assert "loose by a factor $e^{- 0.25 t}$" in v.reason and "below it" in v.reason


@pytest.mark.parametrize("factor", [2.0, 1.01])
def test_a_faster_stated_rate_is_refuted_with_the_lower_end_above_the_bound(factor):
    v = bound(_stated("K*exp(-c*t)"), _series(_lhs(0.5)), derived={"c": 0.5 * factor})
    assert v.verdict == "refuted", v.reason
    numbers = [p for p in as_reason(v.condition).parts() if isinstance(p, Number)]
    lhs = next(p for p in numbers if p.interval is not None)          # the certified bracket, then K g
    lo, kg = lhs.interval[0], numbers[numbers.index(lhs) + 1].value
    assert lo > kg and "(certified)" in v.condition


def test_a_ratio_that_rises_and_levels_off_is_not_a_violation():
    # LHS = 2 e^{-t/2} (2 - e^{-t}): the ratio to e^{-t/2} rises from 2 to 4 and levels off, a valid bound whose
    # constant is reached only late; the held-out points exceed the early fit, but the ratio stops growing
    lhs = 2 * np.exp(-0.5 * T) * (2 - np.exp(-T))
    v = bound(_stated("K*exp(-c*t)"), _series(lhs), derived={"c": 0.5})
    assert v.verdict == "not_refuted", v.reason


def test_an_excess_within_the_samples_spread_is_not_a_violation():
    # the held-out ratio grows by 2 % over the tail, but two repeat samples disagree by 10 % there
    lhs = _lhs(0.5) * np.exp(0.001 * T)
    samples = (lhs * (1 + 0.1 * (T > 10)), lhs * (1 - 0.1 * (T > 10)))
    v = bound(_stated("K*exp(-c*t)"), _series(lhs, samples), derived={"c": 0.5})
    assert v.verdict == "not_refuted", v.reason


def test_two_unspecified_constants_cannot_be_fitted():
    v = bound(_stated("K*exp(-c*t)"), _series(_lhs(0.5)), derived={})
    assert v.verdict == "inconclusive" and "2 unspecified constants" in v.reason


def test_a_missing_derived_constant_is_inconclusive():
    v = bound(_stated("K*exp(-c*t)"), _series(_lhs(0.5)), derived={"c": float("nan")})
    assert v.verdict == "inconclusive" and "derived constant c" in v.reason


def test_the_limit_of_the_bound_is_taken_at_an_infinite_variable():
    (s,) = parse_claims({"claim": [{"id": "x.b", "model": "m", "kind": "bound",
                                    "stated": "K*(sqrt(log(beta + 1)/beta) + exp(-c*t))", "variables": ["beta", "t"],
                                    "constants": ["K", "c"]}]}, "test")
    pts = tuple(BoundPoint(float(t), {"t": np.array([t]), "beta": np.array([np.inf])}, np.array([v]), np.array([v]))
                for t, v in zip(T, _lhs(0.5)))
    v = bound(s, [BoundSeries("t at beta = inf", "t", pts, 20, scale="linear")], derived={"c": 0.5})
    assert v.verdict == "not_refuted" and "sharp" in v.reason
