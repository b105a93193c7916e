"""Issue 31, item 2: the formula judge binds every free symbol, searches the whole domain, proves harder (rewrites)
and reads Arb agreement without a proof as not_refuted.

The quantities here are small stand-ins built in the test: a derived SymPy form and a "measurement" that is the
same function computed independently in floating point (math.atan, math.tanh), with a stated standard error. The
judge is the one the audit uses (attnverify.checks.judges.formula)."""
from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp

from attnverify.checks.judges import Measured, formula
from attnverify.checks.plugin import Quantity
from attnverify.checks.stated import StatedClaim

x, eps, t = sp.Symbol("x", real=True), sp.Symbol("eps", real=True), sp.Symbol("t", positive=True)


def _claim(stated: str, at: dict | None = None) -> StatedClaim:
    return StatedClaim(id="c", model="test", kind="formula", stated=stated, quantity="q", at=at or {})


def _rng() -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence(31))


def _risk_like() -> Quantity:
    """D = x^2 + eps^2 (eps^2 a term every stated form shares, as in Paper C's risk); measured exactly (se 1e-6)."""
    def sample(rng, n, fixed):
        return [{"x": float(rng.uniform(0.5, 2.0)), "eps": float(rng.uniform(0.1, 1.0)), **fixed} for _ in range(n)]

    def measure(values, rng):
        return Measured(float(values["x"]) ** 2 + float(values["eps"]) ** 2, 1e-6, "exact, in floating point")

    return Quantity("q", "x^2 + eps^2", {"x": x, "eps": eps}, lambda: x**2 + eps**2, sample=sample, measure=measure)


def test_a_symbol_shared_by_both_forms_is_bound_and_a_wrong_coefficient_refuted():
    # S - D = x^2/10 has no eps, but S and D alone do: eps must get a value before either is evaluated
    v = formula(_claim("11/10*x**2 + eps**2"), _risk_like(), {}, _rng())
    assert v.verdict == "refuted", v.reason


def test_the_true_form_with_the_shared_symbol_holds():
    v = formula(_claim("eps**2 + x*x"), _risk_like(), {}, _rng())
    assert v.verdict == "holds", v.reason


def _double_angle() -> Quantity:
    """D = 2 atan(x) on |x| < 1 (where atan(2x/(1 - x^2)) is the same function; SymPy, not told |x| < 1, cannot
    prove it); measured as 2 math.atan(x)."""
    def sample(rng, n, fixed):
        return [{"x": float(rng.uniform(-0.95, 0.95)), **fixed} for _ in range(n)]

    def measure(values, rng):
        return Measured(2 * math.atan(float(values["x"])), 1e-9, "math.atan")

    return Quantity("q", "2 atan(x)", {"x": x}, lambda: 2 * sp.atan(x), sample=sample, measure=measure)


def test_a_true_form_sympy_cannot_prove_is_not_refuted_on_arb_agreement():
    v = formula(_claim("atan(2*x/(1 - x**2))"), _double_angle(), {}, _rng())
    assert v.verdict == "not_refuted", v.reason
    assert v.evidence["stated"]["agreeing_points"] >= 16


def test_a_wrong_form_near_the_true_one_is_still_refuted():
    v = formula(_claim("atan(2*x/(1 - x**2)) + x**3/1000"), _double_angle(), {}, _rng())
    assert v.verdict == "refuted", v.reason


def _logistic() -> Quantity:
    """D = t/(t + u) in the form of an attention mass, u > 0; the stated forms are tanh and atan rewrites of it."""
    u = sp.Symbol("u", positive=True)

    def sample(rng, n, fixed):
        return [{"t": float(rng.uniform(0.1, 5.0)), "u": float(rng.uniform(0.1, 5.0)), **fixed} for _ in range(n)]

    def measure(values, rng):
        a, b = float(values["t"]), float(values["u"])
        return Measured((1 + math.tanh((math.log(a) - math.log(b)) / 2)) / 2, 1e-9, "math.tanh")

    return Quantity("q", "t/(t + u)", {"t": t, "u": u}, lambda: t / (t + u), sample=sample, measure=measure)


def test_a_tanh_rewrite_is_proven():
    v = formula(_claim("(1 + tanh((log(t) - log(u))/2))/2"), _logistic(), {}, _rng())
    assert v.verdict == "holds", v.reason
    assert v.evidence["stated"]["proof"] == "rewrite"


def test_an_atan_reciprocal_rewrite_is_proven():
    from attnverify.checks.judges.proof import prove_equal

    lam = sp.Symbol("lam", positive=True)
    derived = 4 * sp.atan(1 / sp.sqrt(4 * lam**2 + 1)) - sp.pi
    assert prove_equal(sp.pi - 4 * sp.atan(sp.sqrt(4 * lam**2 + 1)), derived) == "rewrite"
    assert prove_equal(sp.pi - 4 * sp.atan(sp.sqrt(4 * lam**2 + 2)), derived) is None


def _wrong_far_out() -> Quantity:
    """D = x^2 on x > 0 (declared: ``domain``), whose own sample covers only [0.5, 2] and whose measurement runs for
    x <= 10 (``measurable``): a stated form wrong only for x > 2 must be found over the whole domain."""
    from attnverify.checks.params import Param

    def sample(rng, n, fixed):
        return [{"x": float(rng.uniform(0.5, 2.0)), **fixed} for _ in range(n)]

    def measure(values, rng):
        return Measured(float(values["x"]) ** 2, 1e-6, "exact, in floating point")

    dom = {"x": Param("x", float, 1.0, "x", low=0.0, low_open=True, high=1e3)}
    return Quantity("q", "x^2", {"x": x}, lambda: x**2, sample=sample, measure=measure, domain=dom,
                    measurable=lambda p: p["x"] <= 10)


def test_a_form_wrong_only_outside_the_sampled_box_is_refuted():
    v = formula(_claim("x**2 + Max(0, x - 2)"), _wrong_far_out(), {}, _rng())
    assert v.verdict == "refuted", v.reason
    assert float(v.evidence["stated"]["tried"][-1]["point"]["x"]) > 2


def test_the_whole_domain_draws_reach_both_ends_and_keep_the_fixed_values():
    from attnverify.checks.domain import widened
    from attnverify.checks.registry import paper

    signal = paper("signal")
    (j,) = [q for q in signal.quantities() if q.name == "J_limit"]
    rng = _rng()
    fixed = {"sigma": 0.75}
    pts = widened(signal, j, rng, j.sample(rng, 400, fixed), fixed)
    assert len(pts) >= 300
    thetas = np.array([p["theta"] for p in pts])
    assert thetas.min() < 0.01 and thetas.max() > 100          # theta > 0 drawn log-uniformly over decades
    assert all(p["sigma"] == 0.75 for p in pts)                 # an 'at' value fixes its parameter everywhere
    assert all(p["R"] < p["L"] for p in pts)                    # the paper's constraint between values holds


@pytest.mark.slow
def test_paper_a_objective_wrong_only_for_theta_above_2_is_refuted():
    import attnverify

    right = "theta**2*w**2 + 2*beta*sigma**2*theta*rho*w + beta**2*sigma**4"
    doc = {"claim": [{"id": "my.objective", "model": "signal", "kind": "formula", "quantity": "J_limit",
                      "stated": right + " + Max(0, theta - 2)*theta**2*w**2/2"}]}
    (row,) = attnverify.audit(doc, seed=0).claims
    assert row.verdict == "refuted", row.reason


def _stated(model: str, name: str, text: str) -> tuple:
    from attnverify.checks.judges import stated_expression
    from attnverify.checks.registry import paper

    (q,) = [q for q in paper(model).quantities() if q.name == name]
    options = {o.name: o.default for o in q.options}
    claim = StatedClaim(id="my.form", model=model, kind="formula", stated=text, quantity=name)
    return stated_expression(claim, q, options), q.derive(**options)


def test_the_tanh_form_of_paper_a_objective_and_the_atan_form_of_paper_c_risk_are_proven():
    from attnverify.checks.judges.proof import prove_equal

    # w = R e^a / (L - R + R e^a) = (1 + tanh((a - log((L - R)/R))/2))/2, a = beta rho theta
    w = "((1 + tanh((beta*rho*theta - log((L - R)/R))/2))/2)"
    S, D = _stated("signal", "J_limit", f"theta**2*{w}**2 + 2*beta*sigma**2*theta*rho*{w} + beta**2*sigma**4")
    assert prove_equal(S, D) == "rewrite"
    # atan(1/u) = pi/2 - atan(u) for u = sqrt(1 + 4 lam^2) > 0
    S, D = _stated("slr", "risk_on_M", "eps**2 + gamma**2 - 2*gamma**2*nu*erf(lam*sqrt(d/2)*kappa/sqrt(1 + "
                   "2*lam**2*gamma**2)) + gamma**2*zeta_I + (L - 1)*(1 - 4*(pi/2 - atan(sqrt(1 + 4*lam**2)))/pi)")
    assert prove_equal(S, D) == "rewrite"


def test_a_difference_certainly_nonzero_at_one_point_skips_cancel_and_an_identity_never_does():
    """cancels() hands S - D to sympy.cancel only when an exact Arb evaluation at one point cannot exclude 0: never
    for an identity (rational, or one cancel cannot see), always for a wrong term."""
    import sympy as sp

    from attnverify.checks.judges.proof import cancels, nonzero_somewhere

    b, t, r = sp.Symbol("beta", positive=True), sp.Symbol("theta", positive=True), sp.Symbol("rho")
    identities = [(b + t) ** 2 - b**2 - 2 * b * t - t**2, sp.tanh(b) - (sp.exp(2 * b) - 1) / (sp.exp(2 * b) + 1),
                  sp.atan(1 / b) + sp.atan(b) - sp.pi / 2, (1 - r**2) * t / (1 - r) - (1 + r) * t]
    assert not any(nonzero_somewhere(e) for e in identities)
    assert cancels((b + t) ** 2, b**2 + 2 * b * t + t**2)
    wrong = [(b + t) ** 2 - b**2 - t**2, sp.tanh(b) - b, (1 - r**2) * t * sp.Rational(101, 100) - (1 - r**2) * t]
    assert all(nonzero_somewhere(e) for e in wrong)


def _overflowing_finite_size() -> Quantity:
    """D = x^2 on [0.5, 2], measured as R = x^2 - e^{2000 x}/10^1000 (a finite-size form far outside its range, as
    the anisotropic model's J_finite at s_xi = 481, L = 49): R is about -10^-132 at x = 0.5 but beyond double
    precision (-inf as a float) once x > 1.5; the measurement (x^2, se 1e-6) is finite everywhere."""
    def sample(rng, n, fixed):
        return [{"x": float(rng.uniform(1.6, 2.0)), **fixed} for _ in range(n)]

    def measure(values, rng):
        return Measured(float(values["x"]) ** 2, 1e-6, "exact, in floating point")

    return Quantity("q", "x^2", {"x": x}, lambda: x**2, sample=sample, measure=measure,
                    measured_as=lambda: x**2 - sp.exp(2000 * x) / sp.Integer(10) ** 1000)


def test_a_finite_size_form_beyond_double_precision_never_confirms_a_refutation():
    """The audit refuted a wrong J_limit claim by a measurement 'in agreement' with a finite-size value of -inf
    (|inf - M| <= z se + rtol inf read as agreement) and quoted '(inf standard errors from the stated value)'. Such a
    point cannot be compared with a measurement: inconclusive, saying so; sides_disagree never calls it agreement."""
    from attnverify.checks.judges import sides_disagree

    v = formula(_claim("x**2/2"), _overflowing_finite_size(), {}, _rng())
    assert v.verdict == "inconclusive" and "not a finite double" in str(v.reason), v.reason
    said = sides_disagree(float("-inf"), Measured(4.0, 1e-6, "exact"), rtol=1e-12)
    assert said is not None and "cannot be compared" in str(said)
    assert sides_disagree(float("nan"), Measured(4.0, 1.0, "exact")) is not None
    from attnverify.checks.judges import value

    claim = StatedClaim(id="c", model="test", kind="value", stated=1.0, quantity="q", at={})
    v = value(claim, Measured(1.38968e6, 8612.0, "Monte Carlo"), derived=float("-inf"), where="L = 49")
    assert v.verdict == "inconclusive" and str(v.reason).startswith("our derivation cannot be compared"), v.reason
