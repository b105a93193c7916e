"""Issue 31, item 6: a reason never contradicts its numbers: two numbers said to differ print differently, a
comparison against a finite-size value quotes that value, and a list of tested values names each value once."""
from __future__ import annotations

import re

import numpy as np
import sympy as sp

from attnverify.checks.judges import Measured, formula
from attnverify.checks.plugin import Quantity
from attnverify.checks.stated import StatedClaim
from attnverify.render.reasons import plain

x = sp.Symbol("x", positive=True)


def _claim(stated: str) -> StatedClaim:
    return StatedClaim(id="c", model="test", kind="formula", stated=stated, quantity="q")


def _exact(measured_as=None, offset=0.0) -> Quantity:
    """D = x on [1, 2], measured exactly (se 1e-13) at what it estimates: x, or x + ``offset``."""
    def sample(rng, n, fixed):
        return [{"x": float(rng.uniform(1.0, 2.0)), **fixed} for _ in range(n)]

    def measure(values, rng):
        return Measured(float(values["x"]) + offset, 1e-13, "exact")

    return Quantity("q", "x", {"x": x}, lambda: x, sample=sample, measure=measure, measured_as=measured_as)


def test_a_refuted_difference_in_the_ninth_digit_prints_two_different_numbers():
    v = formula(_claim("x*1000000001/1000000000"), _exact(), {}, np.random.default_rng(0))
    assert v.verdict == "refuted", v.reason
    stated, derived = re.search(r"stated ([-0-9.e+]+), derived ([-0-9.e+]+)", plain(v.condition)).groups()
    assert stated != derived and float(stated) > float(derived)


def test_a_comparison_with_the_finite_size_value_quotes_it():
    # the measurement estimates x + 1/1000 (the finite-size value), not the limit x
    v = formula(_claim("2*x"), _exact(lambda: x + sp.Rational(1, 1000), offset=1e-3), {}, np.random.default_rng(0))
    assert v.verdict == "refuted", v.reason
    assert "finite-size" in v.reason
    point = v.evidence["stated"]["tried"][-1]
    assert f"{point['measured_as']:.6g}" in v.reason


def test_fmt_apart_and_values_text():
    from attnverify.checks.judges.common import fmt_apart, values_text

    assert fmt_apart(1.0000001, 1.0000002) == ("1.0000001", "1.0000002")
    assert fmt_apart(2.5, 2.5) == ("2.5", "2.5")
    assert values_text([10.0, 10.0, 20.0, 10]) == "10, 20"
