"""Certified results in FLINT/Arb ball arithmetic (python-flint): enclosures, certificates, spectral clusters,
Paper B in d = 3, and the rigorous Laplace bound.

The independent values come from mpmath at high precision (a different library and algorithm) or from exact
rational arithmetic; no expected number here was produced by the code under test."""
from __future__ import annotations

from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest
import sympy as sp
from flint import arb, ctx

import theory.signal_recovery as S
from theory.certificate import interval_text

PA = dict(theta=2.0, beta=1.0, sigma=1.0, R=50, L=1050, d=20)


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
    import inspect

    import numerics.laplace
    import theory.mean_field
    for mod in (S, theory.mean_field, numerics.laplace):
        assert "iv." not in inspect.getsource(mod).replace("deriv.", "")


# --------------------------------------------------------------------------------------- Paper A certificates
def _jp_mpmath(sign: str, finite_size: bool):
    args = (S.rho, S.theta, S.beta, S.sigma, S.R, S.L, S.d)
    return sp.lambdify(args, sp.diff(S.population_objective(sign, finite_size), S.rho), "mpmath")


def test_interior_equilibrium_certificate_against_mpmath():
    eqs = S.equilibria(PA, "fixed", False)
    interior = [e for e in eqs if abs(e.rho) < 1]
    assert len(interior) == 1
    e = interior[0]
    cert = e.certificate
    lo, hi = cert["enclosure"]
    assert cert["library"].startswith("python-flint") and cert["prec_bits"] >= 100
    assert cert["width"] == hi - lo and 0 < cert["width"] < 1e-12
    assert cert["text"].startswith("certified: rho* in [") and "unique in" in cert["text"]
    jp = _jp_mpmath("fixed", False)
    vals = [PA[k] for k in ("theta", "beta", "sigma", "R", "L", "d")]
    with mp.workdps(50):
        root = mp.findroot(lambda r: jp(r, *vals), (lo + hi) / 2)
        assert lo <= root <= hi
        assert jp(mp.mpf(lo), *vals) * jp(mp.mpf(hi), *vals) <= 0       # a sign change across the enclosure
        ev = mp.diff(lambda r: (1 - r**2) * jp(r, *vals), root)        # F'(rho*) by numerical differentiation
    elo, ehi = cert["eigenvalue_enclosure"]
    assert elo - 1e-20 <= ev <= ehi + 1e-20 and ehi - elo < 1e-12
    assert e.stable is False and e.eigenvalue > 0                     # an interior repeller
    # the printed interval contains the enclosure
    a, b = (float(t) for t in cert["text"].split("[", 1)[1].split("]", 1)[0].split(","))
    assert a <= lo and hi <= b


def test_pole_certificates_enclose_2_jprime():
    jp = _jp_mpmath("fixed", True)
    vals = [PA[k] for k in ("theta", "beta", "sigma", "R", "L", "d")]
    for e in S.equilibria(PA, "fixed", True):
        if abs(e.rho) != 1:
            continue
        lo, hi = e.certificate["enclosure"]
        with mp.workdps(40):
            true = -2 * e.rho * jp(mp.mpf(e.rho), *vals)                 # F'(+-1) = -+2 J'(+-1)
        assert lo <= true <= hi and e.stable == (true < 0)


@pytest.mark.parametrize("finite_size", [False, True])
def test_theta_star_certificate_against_mpmath(finite_size):
    p = dict(PA, theta=0.25)
    cert = S.minus_xi_certificate(p, "fixed", finite_size)
    lo, hi = cert["enclosure"]
    assert lo <= S.minus_xi_threshold(p, "fixed", finite_size) <= hi and cert["width"] < 1e-12
    jp = _jp_mpmath("fixed", finite_size)
    rest = [p[k] for k in ("beta", "sigma", "R", "L", "d")]
    with mp.workdps(50):
        root = mp.findroot(lambda t: jp(-1, t, *rest), (lo + hi) / 2)
        assert lo <= root <= hi
        # -xi repels just below theta*, attracts just above (F'(-1) = 2 J'(-1))
        assert jp(-1, root * 0.99, *rest) > 0 > jp(-1, root * 1.01, *rest)
    assert cert["text"].startswith("certified: theta* in [")


def test_interval_text_rounds_outward():
    assert interval_text(-0.542304123, -0.542291, 5) == "[-0.54231, -0.54229]"
    assert interval_text(1.0, 1.0) == "[1, 1]"
