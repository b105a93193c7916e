"""The uniform law on the sphere (Paper D's sphere experiment): its MGF, the Bessel-ratio tilted mean and its two
limits, against mpmath quadrature.  On the sphere of radius R in R^d the height h = <y, a>/(R|a|) of a uniform
point has density proportional to (1 - h^2)^{(d-3)/2} on [-1, 1] (Archimedes for d = 3: uniform), so
E[e^{<a,y>}] and E[y e^{<a,y>}] (parallel to a) are one-dimensional integrals."""
from pathlib import Path

import mpmath as mp
import pytest
import sympy as sp

from attnverify.theory.engine import derive
from attnverify.theory.engine.laws import sphere_radial

MODELS = Path(__file__).resolve().parents[2] / "examples" / "models"
mp.mp.dps = 30


def by_quadrature(R, r, d):
    """(E e^{<a,y>}, |E_tilted y|) for |a| = r by quadrature over the height."""
    dens = lambda h: (1 - h**2) ** (mp.mpf(d - 3) / 2)                 # noqa: E731
    Z = mp.quad(dens, [-1, 1])
    mgf = mp.quad(lambda h: mp.exp(R * r * h) * dens(h), [-1, 1]) / Z
    first = mp.quad(lambda h: R * h * mp.exp(R * r * h) * dens(h), [-1, 1]) / Z
    return mgf, first / mgf


@pytest.mark.parametrize("d", [3, 5])
def test_mgf_and_tilted_mean_against_quadrature(d):
    rad = sphere_radial()
    Rs, r, dd = sp.Symbol("R_sphere", positive=True), sp.Symbol("r_b", positive=True), sp.Symbol("d", integer=True,
                                                                                                    positive=True)
    phi = sp.lambdify((Rs, r, dd), rad["phi"], "mpmath")
    ratio = sp.lambdify((Rs, r, dd), rad["dpsi"], "mpmath")
    for R, rr in ((1, 0.3), (2, 1.7), (0.5, 6.0)):
        R, rr = mp.mpf(R), mp.mpf(rr)
        mgf, mean = by_quadrature(R, rr, d)
        assert abs(phi(R, rr, d) - mgf) < 1e-20 * mgf
        assert abs(ratio(R, rr, d) - mean) < 1e-20


def test_d3_is_elementary():
    """d = 3: phi(r) = sinh(R r)/(R r) and the tilted mean R (coth(R r) - 1/(R r)) (Langevin), by SymPy."""
    rad = sphere_radial()
    Rs, r = sp.Symbol("R_sphere", positive=True), sp.Symbol("r_b", positive=True)
    d = sp.Symbol("d", integer=True, positive=True)
    phi3 = rad["phi"].subs(d, 3).rewrite(sp.sinh)
    assert sp.simplify(phi3 - sp.sinh(Rs * r) / (Rs * r)) == 0
    elementary = lambda e: e.replace(lambda b: isinstance(b, sp.besseli),                        # noqa: E731
                                     lambda b: sp.simplify(sp.expand_func(b)))   # I_{1/2}, I_{3/2}: sinh, cosh
    mean3 = elementary(elementary(rad["dpsi"].subs(d, 3))).rewrite(sp.exp)
    langevin = (Rs * (sp.cosh(Rs * r) / sp.sinh(Rs * r) - 1 / (Rs * r))).rewrite(sp.exp)
    assert sp.simplify(mean3 - langevin) == 0


def test_limits():
    rad = sphere_radial()
    Rs, d = sp.Symbol("R_sphere", positive=True), sp.Symbol("d", integer=True, positive=True)
    assert sp.simplify(rad["small"] - Rs**2 / d) == 0
    assert rad["large"] == Rs
    ratio = sp.lambdify((Rs, sp.Symbol("r_b", positive=True), d), rad["dpsi"], "mpmath")
    for dd in (3, 50):
        assert abs(ratio(2, mp.mpf("1e-8"), dd) / mp.mpf("1e-8") - mp.mpf(4) / dd) < 1e-12
        assert abs(ratio(2, mp.mpf(1e6), dd) - 2) < 1e-4 * dd


def test_token_sphere_model_attention_map():
    """Gamma_mu(x) of examples/models/token_sphere.toml (A = scale I, value y): R I_{d/2}/I_{d/2-1}(R|a|) a/|a|,
    a = scale x / tau, against quadrature at d = 3, certified evaluation through Arb's Bessel functions."""
    D = derive(MODELS / "token_sphere.toml")
    p = D.model.defaults
    for x, xp in ((0.3, 0.4), (-1.0, 0.2), (0.05, 0.0)):
        a_norm = mp.mpf(float(p["scale"])) * mp.sqrt(x**2 + xp**2) / float(p["tau"])
        _, mean = by_quadrature(mp.mpf(float(p["rad"])), a_norm, 3)
        want = [mean * x / mp.sqrt(x**2 + xp**2), mean * xp / mp.sqrt(x**2 + xp**2)]
        got = D.evaluate("attention_map", x_xi=x, x_perp=xp)
        assert float(got[0]) == pytest.approx(float(want[0]), rel=1e-12, abs=1e-15)
        assert float(got[1]) == pytest.approx(float(want[1]), rel=1e-12, abs=1e-15)
    assert [s.kind for s in D.steps() if s.name in ("sphere-small", "sphere-hardmax")] == ["limit", "limit"]
