"""Paper A's certificates (equilibria, poles, theta*) enclose mpmath's values at high precision."""
from __future__ import annotations


import mpmath as mp
import pytest
import sympy as sp

import attnverify.theory.signal as S

PA = dict(theta=2.0, beta=1.0, sigma=1.0, R=50, L=1050, d=20)


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
