"""Paper C (slr) theory: the Gaussian-erf identities, zeta two ways, the risk against an independent integration of
its definition, its symmetries, the evaluators and the baselines.  Every comparison helper is also run on a
deliberately wrong closed form, which it must reject."""
from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import sympy as sp
from scipy.special import erf
from scipy.stats import norm

from attnverify.theory.slr import THEORY as T
from attnverify.theory.slr import baselines as B
from attnverify.theory.slr import gauss as G
from attnverify.theory.slr import population as RK
from attnverify.theory.slr.symbols import OVERLAPS, PARAMS, L, d, eps, eta, gamma, kappa, lam, nu, rho, theta

GAM = math.sqrt(0.5)


# ------------------------------------------------------------------------------------------ helpers
def _gauss_quad(fun) -> mpmath.mpf:
    """E fun(Z), Z ~ N(0, 1), by mpmath quadrature at the working precision."""
    return mpmath.quad(lambda z: fun(z) * mpmath.npdf(z), [-mpmath.inf, -2, 0, 2, mpmath.inf])


def _erf_identity_agrees(closed, m: float, s: float, power: int = 1, n: int = 0, tol: float = 1e-25) -> bool:
    """Does the SymPy closed form of E[Z^n erf(m + sZ)^power] agree with quadrature of the definition?"""
    with mpmath.workdps(40):
        q = _gauss_quad(lambda z: z**n * mpmath.erf(m + s * z) ** power)
        c = sp.N(closed.subs({G._m: sp.Float(m, 50), G._s: sp.Float(s, 50)}), 40)
        return abs(mpmath.mpf(str(c)) - q) <= tol * max(1, abs(q))


# ------------------------------------------------------------------------------------------ Gaussian-erf identities
def test_stein_residuals_are_symbolic_zeros():
    r = T.stein_residuals()
    assert r["first"] == 0 and r["second"] == 0


@pytest.mark.parametrize("m,s", [(0.3, 0.7), (-1.2, 2.0), (2.5, 0.1)])
def test_erf_moments_against_quadrature(m, s):
    for n in (0, 1, 2, 3):
        assert _erf_identity_agrees(T.erf_moment(n, 1, G._m, G._s), m, s, 1, n)
    assert T.erf_mean_derived()[1] == sp.erf(G._m / sp.sqrt(1 + 2 * G._s**2))


def test_wrong_erf_mean_is_rejected_by_the_same_test():
    wrong = sp.erf(G._m / sp.sqrt(1 + G._s**2))                 # a wrong factor under the root
    assert not _erf_identity_agrees(wrong, 0.3, 0.7)
    assert not _erf_identity_agrees(T.erf_moment(1, 1, G._m, G._s) * (1 + sp.Rational(1, 10**12)), 0.3, 0.7, 1, 1)


@pytest.mark.parametrize("m,s", [(0.4, 0.9), (-2.0, 0.3)])
def test_squared_erf_moments_against_quadrature(m, s):
    for n in (0, 1, 2):
        assert _erf_identity_agrees(T.erf_moment(n, 2, G._m, G._s), m, s, 2, n, tol=1e-25)


def test_owen_route_residuals_are_zero():
    ob = T.owen_route()
    for key in ("owen_identity_residual", "erf_phi_residual", "E_phi_residual", "routes_residual"):
        assert ob[key] == 0, key
    assert T.zeta_prime_derived()["weight_check"] == 0
    assert T.zeta_evenness_residual() == 0 and T.heat_equation_residual() == 0


@pytest.mark.parametrize("t,sig", [(0.0, 0.5), (0.7, 1.3), (3.0, 0.2), (-1.1, 0.05), (10.0, 3.0)])
def test_zeta_two_routes_agree_to_25_digits_and_match_the_definition(t, sig):
    a = T.zeta_agreement(t, sig, dps=40)
    assert a["digits"] >= 25
    with mpmath.workdps(40):
        direct = _gauss_quad(lambda z: mpmath.erf(t + sig * z) ** 2)
        assert abs(a["owen"] - direct) < mpmath.mpf(10) ** -25


def test_wrong_zeta_is_rejected():
    """Owen's route with the wrong second argument 1/sqrt(1 + 2 sigma^2) is caught by the definition."""
    t, sig = 0.7, 1.3
    with mpmath.workdps(40):
        h = mpmath.sqrt(2) * t / mpmath.sqrt(1 + 2 * sig**2)
        wrong = 1 - 8 * G.owens_t_mp(h, 1 / mpmath.sqrt(1 + 2 * sig**2))
        direct = _gauss_quad(lambda z: mpmath.erf(t + sig * z) ** 2)
        assert abs(wrong - direct) > mpmath.mpf(10) ** -25


def test_zeta_evaluators_float_and_ball():
    ts, ss = np.array([0.0, 0.7, 3.0, -1.1, 25.0]), np.array([0.5, 1.3, 0.2, 0.05, 4.0])
    f = T.zeta_np(ts, ss)
    with mpmath.workdps(30):
        ref = [float(T.zeta_mp(t, s, "integral")) for t, s in zip(ts, ss)]
    np.testing.assert_allclose(f, ref, rtol=5e-15, atol=5e-16)
    from flint import arb
    for t, s, r in zip(ts, ss, ref):
        b = T.zeta_arb(arb(t), arb(s))
        assert b.contains(arb(r)) or abs(float(b.mid()) - r) < 1e-15
        wide = T.zeta_arb(arb(t).union(arb(t + 1e-3)), arb(s).union(arb(s + 1e-3)))
        assert wide.contains(b)


def test_zeta_function_in_sympy():
    z = G.zeta_erf(-G._t, G._s)
    assert z == G.zeta_erf(G._t, G._s)                              # even
    assert sp.diff(G.zeta_erf(G._t, G._s), G._t) == T.zeta_prime(G._t, G._s)
    # the classical arcsine law E erf(sigma Z)^2 = (2/pi) asin(2 sigma^2 / (1 + 2 sigma^2)), at sigma = 1/2
    z0 = G.zeta_erf(sp.Integer(0), sp.Rational(1, 2))
    assert abs(sp.N(z0 - 2 / sp.pi * sp.asin(sp.Rational(1, 3)), 40)) < 1e-35


# ------------------------------------------------------------------------------------------ the risk
def _gh_token_moments(k, v, lam_, gam, dd, informative, n):
    """E f, E f^2, E y, E y^2, E y f of one token by tensor Gauss-Hermite quadrature over R^dd (y = <X, e2>)."""
    nodes, weights = np.polynomial.hermite_e.hermegauss(n)
    w = weights / np.sqrt(2 * np.pi)
    Z = np.stack([g.ravel() for g in np.meshgrid(*([nodes] * dd), indexing="ij")], 1)
    W = np.prod(np.stack(np.meshgrid(*([w] * dd), indexing="ij")).reshape(dd, -1), axis=0)
    mean, sd = np.zeros(dd), 1.0
    if informative:
        mean[0], sd = np.sqrt(dd / 2), gam
    X = mean + sd * Z
    f, y = erf(lam_ * (X @ k)) * (X @ v), X[:, 1]
    return {"f": W @ f, "f2": W @ f**2, "y": W @ y, "y2": W @ y**2, "yf": W @ (y * f)}


def _risk_by_quadrature(k, v, lam_, gam, dd, LL, ep, n):
    """E (Y - T)^2 from its definition: average over J0, expand the square over the tokens, independent tokens."""
    mI = _gh_token_moments(k, v, lam_, gam, dd, True, n)
    mN = _gh_token_moments(k, v, lam_, gam, dd, False, n)
    total = 0.0
    for j in range(LL):
        law = [mI if l == j else mN for l in range(LL)]
        s = ep**2 + law[j]["y2"]
        for l in range(LL):
            s -= 2 * (law[l]["yf"] if l == j else law[j]["y"] * law[l]["f"])
            for m in range(LL):
                s += law[l]["f2"] if l == m else law[l]["f"] * law[m]["f"]
        total += s / LL
    return total


def _risk_cases():
    rng = np.random.default_rng(11)
    cases = []
    for dd, n, LL, lam_ in [(2, 60, 1, 0.8), (2, 60, 3, 1.7), (3, 40, 2, 0.6), (3, 40, 4, 0.3)]:
        k, v = rng.standard_normal(dd), rng.standard_normal(dd)
        cases.append((k / np.linalg.norm(k), v / np.linalg.norm(v), lam_, 0.7, dd, LL, 0.3, n))
    return cases


def _overlaps(k, v):
    e1, e2 = np.eye(len(k))[0], np.eye(len(k))[1]
    return (k @ e1, v @ e2, v @ e1, k @ e2, k @ v)


def _closed_form_agrees(R_expr, case, rtol=1e-10) -> bool:
    k, v, lam_, gam, dd, LL, ep, n = case
    q = _risk_by_quadrature(k, v, lam_, gam, dd, LL, ep, n)
    q2 = _risk_by_quadrature(k, v, lam_, gam, dd, LL, ep, n + 10)
    assert abs(q - q2) < 1e-12 * abs(q)                    # the quadrature has converged
    f = sp.lambdify(OVERLAPS + PARAMS, R_expr, modules=[{"zeta_erf": T.zeta_mp}, "mpmath"])
    with mpmath.workdps(30):
        c = float(f(*_overlaps(k, v), lam_, gam, dd, LL, ep))
    return abs(c - q) <= rtol * abs(q)


@pytest.mark.parametrize("case", _risk_cases())
def test_risk_closed_form_against_quadrature_of_its_definition(case):
    assert _closed_form_agrees(T.risk(), case)


def test_wrong_risks_are_rejected_by_the_same_test():
    case = _risk_cases()[1]                                     # L = 3: every term of the assembly is present
    R = T.risk()
    assert not _closed_form_agrees(R * (1 + sp.Float(1e-7)), case)
    assert not _closed_form_agrees(R.xreplace({lam: lam * (1 + sp.Float(1e-6))}), case)
    t = T.token_moments()
    wrong = R - (L - 1) * (L - 2) * t["EN_f"] ** 2 + (L - 1) ** 2 * t["EN_f"] ** 2   # (L-1)(L-2) -> (L-1)^2
    assert not _closed_form_agrees(wrong, case)


@pytest.mark.slow
def test_risk_against_mpmath_two_dimensional_quadrature():
    """Paper-grade cross-check (minutes): the same definition integrated by mpmath.quad over R^2 at 20 digits."""
    al, be, lam_, gam, LL, ep = 0.5, 1.9, 0.8, 0.7, 3, 0.3
    k, v = (mpmath.cos(al), mpmath.sin(al)), (mpmath.cos(be), mpmath.sin(be))
    with mpmath.workdps(20):
        def E(g, inf):
            mu_, sd = (1, gam) if inf else (0, 1)
            return mpmath.quad(lambda z1, z2: g(mu_ + sd * z1, sd * z2) * mpmath.npdf(z1) * mpmath.npdf(z2),
                               [-mpmath.inf, 0, mpmath.inf], [-mpmath.inf, 0, mpmath.inf])
        fx = lambda a, b: mpmath.erf(lam_ * (k[0] * a + k[1] * b)) * (v[0] * a + v[1] * b)  # noqa: E731
        mom = {inf: dict(f=E(fx, inf), f2=E(lambda a, b: fx(a, b) ** 2, inf), y=E(lambda a, b: b, inf),
                         y2=E(lambda a, b: b * b, inf), yf=E(lambda a, b: b * fx(a, b), inf)) for inf in (True, False)}
        tot = 0
        for j in range(LL):
            law = lambda l: mom[l == j]  # noqa: E731
            s = ep**2 + law(j)["y2"]
            for l in range(LL):
                s -= 2 * (law(l)["yf"] if l == j else law(j)["y"] * law(l)["f"])
                for m in range(LL):
                    s += law(l)["f2"] if l == m else law(l)["f"] * law(m)["f"]
            tot += s / LL
        c = T.risk_mp(mpmath.cos(al), mpmath.sin(be), mpmath.cos(be), mpmath.sin(al), mpmath.cos(al - be),
                      lam_, gam, 2, LL, ep)
        assert abs(c - tot) < 1e-15


def test_assembly_over_tokens_is_exact():
    assert all(r == 0 for r in T.assembly_residuals().values())


def test_flip_invariance_and_a_wrong_symmetry():
    assert T.flip_residual() == 0
    R = T.risk()
    wrong = R.xreplace({kappa: -kappa}) - R                     # flipping k alone is not a symmetry
    vals = {kappa: 0.6, nu: 0.5, theta: 0.2, eta: -0.3, rho: 0.25, lam: 0.9, gamma: GAM, d: 40, L: 5, eps: 0.1}
    assert abs(float(sp.N(wrong.xreplace({s: sp.Float(x, 30) for s, x in vals.items()}), 20))) > 1e-3


def test_normal_gradient_vanishes_on_M_and_not_off_M():
    g = T.normal_gradient_on_M()
    assert all(g[o] == 0 for o in (theta, eta, rho))
    grad = T.risk_gradient_np(0.6, 0.5, 0.05, 0.0, 0.0, 0.9, GAM, 40, 5, 0.1)
    assert abs(grad[2]) > 1e-2                                  # off M (theta != 0) the normal partial is not 0


def test_reduced_risk_is_R_on_M():
    r = T.reduced_risk_np(np.array([0.3, -0.8]), np.array([0.1, 0.9]), 0.9, GAM, 400, 10, 0.1)
    R = T.risk_np(np.array([0.3, -0.8]), np.array([0.1, 0.9]), 0, 0, 0, 0.9, GAM, 400, 10, 0.1)
    np.testing.assert_allclose(r, R, rtol=1e-14)
    assert set(T.risk_on_M().free_symbols) == {kappa, nu, lam, gamma, d, L, eps}


# ------------------------------------------------------------------------------------------ evaluators
def test_gradient_and_hessian_against_finite_differences():
    rng = np.random.default_rng(3)
    o = [rng.uniform(-0.6, 0.6, 6) for _ in range(5)]
    p = (0.7, GAM, 40, 6, 0.1)
    g = T.risk_gradient_np(*o, *p)
    H = T.risk_hessian_np(*o, *p)
    h = 1e-5
    for i in range(5):
        up = [x + (h if j == i else 0) for j, x in enumerate(o)]
        dn = [x - (h if j == i else 0) for j, x in enumerate(o)]
        fd = (T.risk_np(*up, *p) - T.risk_np(*dn, *p)) / (2 * h)
        np.testing.assert_allclose(g[i], fd, rtol=1e-6, atol=1e-7)
        fdg = (T.risk_gradient_np(*up, *p) - T.risk_gradient_np(*dn, *p)) / (2 * h)
        np.testing.assert_allclose(H[:, i], fdg, rtol=1e-5, atol=1e-5)
    wrong = g.copy()
    wrong[4] *= 1.001                                           # the same comparison rejects a 0.1% error
    fd = (T.risk_np(*o[:4], o[4] + h, *p) - T.risk_np(*o[:4], o[4] - h, *p)) / (2 * h)
    assert not np.allclose(wrong[4], fd, rtol=1e-6, atol=1e-7)


def test_float_evaluators_match_mpmath_and_survive_large_lam():
    o = (0.9, 0.8, 0.1, -0.1, 0.2)
    for lam_ in (0.05, 0.9, 30.0, 1e6, 1e12):
        with mpmath.workdps(30):
            ref = float(T.risk_mp(*o, lam_, GAM, 400, 10, 0.1))
            refg = [float(x) for x in T.gradient_mp(*o, lam_, GAM, 400, 10, 0.1)]
        with np.errstate(over="raise", invalid="raise"):
            assert T.risk_np(*o, lam_, GAM, 400, 10, 0.1) == pytest.approx(ref, rel=1e-12)
            g = T.risk_gradient_np(*o, lam_, GAM, 400, 10, 0.1)
        for a, b in zip(g, refg):
            assert a == pytest.approx(b, rel=1e-8, abs=1e-12)


def test_batched_shapes():
    n = 7
    o = [np.linspace(-0.5, 0.5, n)] * 5
    assert T.risk_np(*o, 0.9, GAM, 400, 10, 0.0).shape == (n,)
    assert T.risk_gradient_np(*o, 0.9, GAM, 400, 10, 0.0).shape == (5, n)
    assert T.overlap_map_np(*o, 1e-3, 0.9, GAM, 400, 10, 0.0).shape == (5, n)


# ------------------------------------------------------------------------------------------ baselines
def test_bayes_log_weight_against_scipy_densities():
    rng = np.random.default_rng(5)
    for dd, gam in [(3, 0.6), (7, 1.3)]:
        mu_ = math.sqrt(dd / 2)
        for _ in range(3):
            x = rng.standard_normal(dd) * 1.5
            direct = (norm.logpdf(x, loc=mu_ * np.eye(dd)[0], scale=gam).sum() - norm.logpdf(x).sum())
            s = T.bayes_log_weight_np(x[0], x @ x, gam, dd)
            assert s == pytest.approx(direct, rel=1e-12, abs=1e-12)
    wrong = sp.lambdify((B.a_sym, B.n2_sym, gamma, d), T.bayes_log_weight() + B.a_sym / 1000)
    assert wrong(x[0], x @ x, gam, dd) != pytest.approx(direct, rel=1e-12, abs=1e-12)


def _linear_risk_numeric(gam, dd, LL, ep):
    """Least squares in the k*- and v*-coordinates of all tokens: moments computed by conditioning on J0 (numpy)."""
    mu_ = math.sqrt(dd / 2)
    n = 2 * LL
    S, c = np.zeros((n, n)), np.zeros(n)                    # order: u_1..u_L, w_1..w_L
    mean = np.zeros(n)
    for j in range(LL):                                      # J0 = j, probability 1/L
        m = np.zeros(n)
        m[j] = mu_
        var = np.ones(n)
        var[j] = var[LL + j] = gam**2
        S += (np.diag(var) + np.outer(m, m)) / LL
        c[LL + j] += gam**2 / LL                             # E[w_l Y] = E[w_j^2] 1{l = j}
        mean += m / LL
    cov = S - np.outer(mean, mean)
    beta = np.linalg.solve(cov, c)
    return gam**2 + ep**2 - c @ beta, beta


@pytest.mark.parametrize("gam,dd,LL", [(GAM, 40, 3), (1.3, 7, 5), (0.4, 400, 10)])
def test_best_linear_predictor_against_a_numeric_solve(gam, dd, LL):
    bl = T.best_linear_predictor()
    risk_num, beta = _linear_risk_numeric(gam, dd, LL, 0.1)
    vals = {gamma: gam, d: dd, L: LL, eps: 0.1}
    assert float(bl["risk"].subs(vals)) == pytest.approx(risk_num, rel=1e-12)
    np.testing.assert_allclose(beta[LL:], float(bl["coef_v"].subs(vals)), rtol=1e-12)
    np.testing.assert_allclose(beta[:LL], 0.0, atol=1e-12)
    assert bl["normal_eq_residual"] == 0 and bl["intercept"] == 0
    assert all(float(e.subs(vals)) > 0 for e in bl["u_block_eigenvalues"])
    assert float((bl["risk"] * (1 + sp.Float(1e-9))).subs(vals)) != pytest.approx(risk_num, rel=1e-12)


# ------------------------------------------------------------------------------------------ module and derivation
def test_import_is_lazy_and_layered():
    import ast
    import pathlib
    import subprocess
    import sys
    code = ("import attnverify.theory.slr as S, attnverify.theory.slr.gauss as G; "
            "assert not S.THEORY.__dict__.get('_memo') and not G.GAUSS.__dict__.get('_memo')")
    subprocess.run([sys.executable, "-c", code], check=True)
    root = pathlib.Path(RK.__file__).parent
    for path in sorted(root.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            for name in names:
                assert not name.startswith(("attnverify.numerics", "attnverify.checks", "attnverify.cli.command_line",
                                            "attnverify.api", "theory", "numerics", "checks")), (path.name, name)
                if name.startswith("attnverify"):
                    assert name.startswith("attnverify.theory"), (path.name, name)


def test_derivation_steps_are_the_computed_results():
    from attnverify.theory import slr as SL
    steps = SL.derivation()
    by_label = {s.label: s.result for s in steps}
    assert len(by_label) == len(steps) >= 25 and all(s.statement and s.reason for s in steps)
    assert by_label["R"] == T.risk() and by_label["r_M"] == T.risk_on_M()
    for label in (r"\mathrm{Stein}", r"\zeta_{\pm}", r"\Delta_L", r"\nabla_{\perp} R|_M", r"o'_\perp|_M"):
        assert all(x == 0 for x in by_label[label]), label
    assert by_label[r"R_{\pm}"] == 0
    for s in steps:
        assert s.latex()
