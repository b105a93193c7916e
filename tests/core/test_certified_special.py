"""Special functions that carry their own ball version (``_arb_``) are evaluated rigorously by every ball evaluator:
the shared ``lambdify_arb`` and the formula judge's ``separate``. The reference values come from mpmath quadrature
of the defining integral (a different library and algorithm)."""
from __future__ import annotations

import mpmath as mp
import sympy as sp
from flint import arb, ctx

from attnverify.theory.certified import lambdify_arb, special_ball_functions
from attnverify.theory.compare import separate
from attnverify.theory.slr.gauss import zeta_erf

t, s = sp.symbols("t s", positive=True)


def _zeta_by_definition(tv: float, sv: float) -> mp.mpf:
    """E erf(t + s Z)^2 by mpmath quadrature of the Gaussian integral."""
    with mp.workdps(30):
        return mp.quad(lambda z: mp.erf(tv + sv * z) ** 2 * mp.npdf(z), [-mp.inf, 0, mp.inf])


def test_the_special_function_is_found_in_an_expression():
    found = special_ball_functions(2 * zeta_erf(t, s) + sp.erf(t))
    assert set(found) == {"zeta_erf"}
    assert special_ball_functions(sp.erf(t) + sp.exp(s)) == {}


def test_lambdify_arb_encloses_an_expression_with_the_special_function():
    f = lambdify_arb(3 * zeta_erf(t, s) - sp.erfc(t) + sp.atan(s), (t, s))
    with ctx.workprec(128):
        ball = f(arb("0.7"), arb("0.3"))
    with mp.workdps(30):
        ref = 3 * _zeta_by_definition(0.7, 0.3) - mp.erfc(mp.mpf("0.7")) + mp.atan(mp.mpf("0.3"))
    assert ball.rad() < 1e-20
    assert abs(float(ball.mid()) - float(ref)) < 1e-15


def test_separate_certifies_a_dropped_special_term_and_proves_nothing_for_equal_forms():
    a = zeta_erf(t, s) + t ** 2
    wrong = separate(a, t ** 2, [{t: 0.4, s: 0.5}])[0]
    with mp.workdps(30):
        z = float(_zeta_by_definition(0.4, 0.5))
    assert wrong.certified and wrong.lo <= z <= wrong.hi
    same = separate(a, t ** 2 + zeta_erf(t, s), [{t: 0.4, s: 0.5}])[0]
    assert not same.certified
