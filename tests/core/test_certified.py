"""Certified arithmetic shared by every paper (FLINT/Arb ball arithmetic, python-flint): enclosures, outward printing and
spectral clusters.

The independent values come from mpmath at high precision (a different library and algorithm) or from exact
rational arithmetic; no expected number here was produced by the code under test."""
from __future__ import annotations

from fractions import Fraction

import mpmath as mp
from flint import arb, ctx

from attnverify.theory.certified import interval_text


def _exact(x: arb) -> tuple[Fraction, Fraction]:
    """The ball x as exact rational endpoints [mid - rad, mid + rad]."""
    man, e = x.mid().man_exp()
    mid = Fraction(int(man)) * Fraction(2) ** int(e)
    rman, re_ = arb(x.rad()).man_exp()
    rad = Fraction(int(rman)) * Fraction(2) ** int(re_)
    return mid - rad, mid + rad


# --------------------------------------------------------------------------------------- the iv.exp counterexample
def test_arb_exp_encloses_the_mpmath_iv_counterexample():
    """mpmath.iv.exp at 53 bits returns an interval whose upper end lies below exp(x) for this x (mpmath issue
    1181); Arb's ball at the same precision contains the true value (computed with mpmath at 400 bits)."""
    x = Fraction(3893924827815215, 2**50)
    with mp.workprec(400):
        true = mp.exp(mp.mpf(x.numerator) / x.denominator)
        true_lo, true_hi = true - mp.mpf(2) ** -380, true + mp.mpf(2) ** -380
    old = mp.iv.prec
    try:
        mp.iv.prec = 53
        bad = mp.iv.exp(mp.iv.mpf(mp.mpf(x.numerator) / x.denominator))
        iv_hi = mp.mpf(bad.b)
    finally:
        mp.iv.prec = old
    with mp.workprec(400):
        assert iv_hi < true_lo, "mpmath.iv.exp no longer fails here: the regression case has gone"
    with ctx.workprec(53):
        ball = (arb(x.numerator) / 2**50).exp()
    lo, hi = _exact(ball)
    with mp.workprec(400):
        assert mp.mpf(lo.numerator) / lo.denominator <= true_lo
        assert true_hi <= mp.mpf(hi.numerator) / hi.denominator


def test_certified_code_does_not_use_mpmath_iv():
    """No module of theory/ or numerics/ uses mpmath's interval arithmetic (mpmath.iv), whose exp is not rigorous."""
    import importlib
    import inspect
    import pkgutil

    import attnverify.numerics
    import attnverify.theory

    modules = [importlib.import_module(m.name) for pkg in (attnverify.theory, attnverify.numerics)
               for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + ".")]
    assert len(modules) >= 30
    for mod in modules:
        assert "iv." not in inspect.getsource(mod).replace("deriv.", ""), mod.__name__


def test_interval_text_rounds_outward():
    assert interval_text(-0.542304123, -0.542291, 5) == "[-0.54231, -0.54229]"
    assert interval_text(1.0, 1.0) == "[1, 1]"


def test_an_integer_power_of_a_ball_centred_at_zero_keeps_its_enclosure():
    """python-flint 0.9's arb ** n is NaN for a ball whose midpoint is exactly 0; the certified evaluator takes such a
    power by multiplication: a finite ball that contains every value (x^2 and x^3 on [-1e-6, 1e-6], y^-2 at 2)."""
    import sympy as sp
    from flint import arb

    from attnverify.theory.certified import lambdify_arb, lower, upper

    x, y = sp.symbols("x y")
    ball = arb(0, 1e-6)
    for expr, hull in ((x**2, (0.0, 1e-12)), (x**3, (-1e-18, 1e-18)), (x**2 * y**-2, (0.0, 0.25e-12))):
        value = lambdify_arb(expr, [x, y])(ball, arb(2))
        assert value.is_finite() and lower(value) <= hull[0] and hull[1] <= upper(value), (expr, value)
        assert upper(value) - lower(value) < 1e-11
