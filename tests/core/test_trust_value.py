"""Issue 31, item 3 (compare like with like): a value claim on a long-sequence limit is compared with the derived
limit, and the measurement, which ran at a finite size, with the finite-size value it estimates."""
from __future__ import annotations

import math

import pytest
import sympy as sp

from attnverify.checks.audit import Resolved, evaluate_quantity_claim
from attnverify.checks.judges import Measured, value
from attnverify.checks.plugin import Quantity
from attnverify.checks.stated import StatedClaim

n = sp.Symbol("n", positive=True)


def _limit() -> Quantity:
    """D = 2 (the n -> oo limit); the measurement estimates R = 2 + 3/n (by hand: a mean with a 3/n bias), and
    reads 2.0301 +- 0.001 at n = 100 (R = 2.03 plus 0.1 se of noise)."""
    return Quantity("q", "a limit", {"n": n}, lambda: sp.Integer(2), kinds=("value",),
                    measure=lambda values, rng: Measured(2.0301, 0.001, "mc"), measured_as=lambda: 2 + 3 / n)


def _verdict(stated: float) -> str:
    claim = StatedClaim(id="c", model="test", kind="value", stated=stated, quantity="q", at={"n": 100},
                        extra={"resolution": 0.01})
    return evaluate_quantity_claim(Resolved(claim, None, quantity=_limit(), options={}), seed=0)


def test_the_measurement_is_made_an_estimate_of_the_limit():
    from attnverify.checks.audit import _like_with_like

    m = _like_with_like(Measured(2.0301, 0.001, "mc"), _limit(), {}, {n: 100}, 2.0)
    assert m.value == pytest.approx(2.0301 - 0.03, abs=1e-12) and m.se == 0.001
    assert "2.03" in m.how                                      # the finite-size value is quoted


def test_a_true_limit_value_holds_and_a_wrong_one_is_refuted():
    raw = Measured(2.0301, 0.001, "mc")
    claim = StatedClaim(id="c", model="test", kind="value", stated=2.0, quantity="q", extra={"resolution": 0.01})
    assert value(claim, raw, derived=2.0).verdict == "inconclusive"     # raw M against D: unlike things
    v = _verdict(2.0)
    assert v.verdict == "holds", v.reason
    assert _verdict(2.02).verdict == "refuted"


@pytest.mark.slow
def test_paper_a_objective_value_one_percent_off_is_refuted_and_the_true_one_holds():
    import attnverify

    rho, theta, beta, sigma, R, L = 0.5, 1.0, 1.0, 1.0, 500, 10500
    a = math.exp(beta * rho * theta)
    w = R * a / (L - R + R * a)                                 # the informative attention mass, by hand
    J = theta**2 * w**2 + 2 * beta * sigma**2 * theta * rho * w + beta**2 * sigma**4
    at = {"rho": rho, "theta": theta, "beta": beta, "sigma": sigma, "R": R, "L": L}
    doc = {"claim": [{"id": f"my.v{i}", "model": "signal", "kind": "value", "quantity": "J_limit", "stated": s,
                      "resolution": 0.001, "at": at} for i, s in enumerate((round(J, 4), round(1.01 * J, 4)))]}
    true, wrong = attnverify.audit(doc, seed=0).claims
    assert true.verdict == "holds", true.reason
    assert wrong.verdict == "refuted", wrong.reason


def _third() -> Quantity:
    """D = 1/3, measured by an exact computation (1/3 in floating point, se 1e-15)."""
    return Quantity("q", "a third", {}, lambda: sp.Rational(1, 3), kinds=("value",),
                    measure=lambda values, rng: Measured(1 / 3, 1e-15, "exact"))


@pytest.mark.parametrize("stated, extra, verdict", [
    (0.3333, {"resolution": 0.001}, "holds"),        # within the stated resolution
    (0.3333, {}, "holds"),                           # within half a unit of its last printed digit (5e-5)
    (0.334, {"resolution": 1e-4}, "refuted"),        # 6.7e-4 away, resolution 1e-4: a wrong figure
])
def test_a_figure_is_read_to_its_resolution(stated, extra, verdict):
    claim = StatedClaim(id="c", model="test", kind="value", stated=stated, quantity="q", extra=extra)
    v = evaluate_quantity_claim(Resolved(claim, None, quantity=_third(), options={}), seed=0)
    assert v.verdict == verdict, v.reason
