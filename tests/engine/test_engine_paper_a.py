"""Two independent derivations of Paper A: the engine, from examples/models/paper_a*.toml, and the signal plugin
(attnverify.theory.signal), written by hand for that one model.  Their closed forms must be the same
functions, proved by SymPy (attnverify.theory.engine.identity.proves_zero: the exponentials become indeterminates
and the difference cancels to 0 in the field of rational functions), for both sign options."""
from pathlib import Path

import pytest
import sympy as sp

import attnverify.theory.signal as S
from attnverify.theory.engine import derive
from attnverify.theory.engine.identity import proves_zero

MODELS = Path(__file__).resolve().parents[2] / "examples" / "models"
FILES = {"fixed": "paper_a.toml", "symmetric": "paper_a_symmetric.toml"}
PLUGIN = {s.name: s for s in (S.theta, S.beta, S.sigma, S.R, S.L, S.d)}


def plugin_symbols(expr: sp.Expr) -> sp.Expr:
    """The engine's expression in the plugin's symbols (same names; rho_xi is the plugin's rho)."""
    rep = {s: (S.rho if s.name == "rho_xi" else PLUGIN[s.name]) for s in expr.free_symbols}
    return expr.xreplace(rep)


@pytest.fixture(scope="module", params=["fixed", "symmetric"])
def pair(request):
    sign = request.param
    return sign, derive(MODELS / FILES[sign])


def test_file_is_short():
    for name in FILES.values():
        assert len((MODELS / name).read_text().splitlines()) < 40


def test_limit_objective_identical(pair):
    sign, D = pair
    assert proves_zero(plugin_symbols(D.quantities["J_limit"]) - S.population_objective(sign))


def test_reduced_field_identical(pair):
    sign, D = pair
    assert proves_zero(plugin_symbols(D.quantities["F_limit.xi"]) - S.reduced_field(sign))


def test_finite_size_terms_identical(pair):
    """The engine's O(1/L) terms (delta method for |V Y|^2 / D^2) equal the plugin's two terms together: the
    orthogonal-noise term (factor d - 1) plus the in-plane term; the parts proportional to d agree as well."""
    sign, D = pair
    corr = plugin_symbols(D.quantities["J_correction"])
    assert proves_zero(corr - S.finite_size_term(sign) - S.in_plane_term(sign))
    assert proves_zero(sp.diff(corr, S.d) - sp.diff(S.finite_size_term(sign), S.d))
    assert proves_zero(plugin_symbols(D.quantities["J_finite"]) - S.population_objective(sign, finite_size=True))


def test_masses_identical(pair):
    sign, D = pair
    assert proves_zero(plugin_symbols(D.quantities["mass.noise"]) - S.nuisance_mass(sign))
    assert proves_zero(plugin_symbols(D.quantities["mass_finite.noise"]) - S.nuisance_mass(sign, finite_size=True))


def test_the_proof_can_fail(pair):
    """The identity test is not vacuous: the other sign's objective, a dropped tilting term, a wrong mixture weight
    and a field without its sphere factor are all told apart."""
    sign, D = pair
    J = plugin_symbols(D.quantities["J_limit"])
    other = "symmetric" if sign == "fixed" else "fixed"
    assert not proves_zero(J - S.population_objective(other))
    assert not proves_zero(J - S.population_objective(sign).subs(S.sigma, 0) - 0)
    assert not proves_zero(J - S.population_objective(sign).subs(S.R, 2 * S.R))
    F = plugin_symbols(D.quantities["F_limit.xi"])
    assert not proves_zero(F - sp.diff(S.population_objective(sign), S.rho))


@pytest.mark.parametrize("sign", ["fixed", "symmetric"])
def test_equilibria_agree_with_the_plugin(sign):
    D = derive(MODELS / FILES[sign])
    for theta, finite in ((0.25, False), (2.0, False), (2.0, True)):
        p = dict(theta=theta, beta=1, sigma=1, R=50, L=1050, d=20)
        ours = D.equilibria({"theta": theta}, finite_size=finite).points
        theirs = S.equilibria(p, sign, finite_size=finite)
        assert len(ours) == len(theirs)
        for e, f in zip(ours, theirs):
            assert e.certified and f.certified
            assert e.enclosure[0][0] <= f.enclosure[1] and f.enclosure[0] <= e.enclosure[0][1]
            assert e.stable == f.stable
