"""Certified equilibria of the reduced flow: the Krawczyk test and the eigenvalue-sign count on known cases, and
the equilibria of two_signals against a numerical search on a formula written in the test."""
from pathlib import Path

import flint
import numpy as np
import pytest
import sympy as sp
from flint import arb
from scipy.optimize import brentq, root

from attnverify.theory.engine import derive
from attnverify.theory.engine.krawczyk import sign_counts, zero_boxes

MODELS = Path(__file__).resolve().parents[2] / "examples" / "models"


def test_krawczyk_finds_the_two_zeros_of_a_circle_and_a_line():
    G = lambda X: [X[0] ** 2 + X[1] ** 2 - 1, X[0] - X[1]]                            # noqa: E731
    JG = lambda X: [[2 * X[0], 2 * X[1]], [arb(1), arb(-1)]]                          # noqa: E731
    with flint.ctx.workprec(128):
        boxes = zero_boxes(G, JG, ((arb(-2), arb(2)), (arb(-2), arb(2))), 1e-12, 10000)
        assert len(boxes) == 2 and all(b.unique for b in boxes)
        s = arb(2).sqrt() / 2
        centres = sorted(float(b.box[0][0]) for b in boxes)
        for b in boxes:
            sign = 1 if b.box[0][0] > 0 else -1
            for lo, hi in b.box:
                assert lo <= sign * s <= hi and float(hi - lo) < 1e-9
        assert centres[0] < 0 < centres[1]


def test_krawczyk_no_zero():
    G = lambda X: [X[0] ** 2 + X[1] ** 2 + 1, X[0] - X[1]]                            # noqa: E731
    JG = lambda X: [[2 * X[0], 2 * X[1]], [arb(1), arb(-1)]]                          # noqa: E731
    assert zero_boxes(G, JG, ((arb(-2), arb(2)), (arb(-2), arb(2))), 1e-12, 10000) == []


def test_sign_counts():
    m = lambda rows: [[arb(v) for v in r] for r in rows]                              # noqa: E731
    assert sign_counts(m([[2, 1], [1, -3]])) == (1, 1)
    assert sign_counts(m([[-1, 0], [0, -2]])) == (0, 2)
    assert sign_counts(m([[1, 0, 0], [0, 2, 0], [0, 0, 3]])) == (3, 0)
    assert sign_counts(m([[0, 0], [0, 1]])) is None                                   # a zero eigenvalue


def J_by_hand(rho, p):
    """J of two_signals written here: f = sum_c w_c (m_c + sigma^2 beta q), w_c ~ n_c exp(beta <q, m_c>)."""
    r1, r2 = rho
    t2 = 1 - r1**2 - r2**2
    n = np.array([p["R1"], p["R2"], p["L"] - p["R1"] - p["R2"]])
    s = np.array([p["beta"] * p["theta1"] * r1, p["beta"] * p["theta2"] * r2, 0.0])
    w = n * np.exp(s - s.max())
    w /= w.sum()
    k = p["sigma"] ** 2 * p["beta"]
    f1, f2 = w[0] * p["theta1"] + k * r1, w[1] * p["theta2"] + k * r2
    return f1**2 + f2**2 + k**2 * t2


def grad_by_hand(rho, p, h=1e-6):
    rho = np.asarray(rho, float)
    return np.array([(J_by_hand(rho + h * e, p) - J_by_hand(rho - h * e, p)) / (2 * h) for e in np.eye(2)])


@pytest.mark.parametrize("vals", [{}, {"theta1": 2, "theta2": 1.5}])
def test_two_signals_equilibria_against_numerical_search(vals):
    D = derive(MODELS / "two_signals.toml")
    E = D.equilibria(vals)
    assert E.complete and all(e.certified for e in E.points)
    p = {k: float(v) for k, v in D.values(vals).items()}
    # on the circle: zeros of dJ/dphi along rho = (cos phi, sin phi), by sign changes and brentq
    g = lambda ph: grad_by_hand([np.cos(ph), np.sin(ph)], p) @ [-np.sin(ph), np.cos(ph)]   # noqa: E731
    grid = np.linspace(-np.pi + 0.1234, np.pi + 0.1234, 2001)
    vals_g = [g(x) for x in grid]
    zeros = [brentq(g, a, b) for a, b, fa, fb in zip(grid, grid[1:], vals_g, vals_g[1:]) if fa * fb < 0]
    boundary = [e for e in E.points if e.boundary]
    assert len(boundary) == len(zeros)
    for e, ph in zip(sorted(boundary, key=lambda e: np.arctan2(e.overlaps[1], e.overlaps[0])),
                     sorted(np.mod(np.array(zeros) + np.pi, 2 * np.pi) - np.pi)):
        assert e.overlaps == pytest.approx((np.cos(ph), np.sin(ph)), abs=1e-6)
        # stability on the circle: attracting along it iff dg/dphi < 0 there
        dg = (g(ph + 1e-5) - g(ph - 1e-5)) / 2e-5
        if e.stability == "attracting":
            assert dg < 0
    for e in E.points:
        if not e.boundary:                                  # interior: grad J = 0, found from a nearby start
            sol = root(lambda r: grad_by_hand(r, p), np.array(e.overlaps) + 0.02)
            assert sol.success and sol.x == pytest.approx(e.overlaps, abs=1e-6)


def test_equilibria_validate_values():
    D = derive(MODELS / "two_signals.toml")
    with pytest.raises(ValueError, match="beta"):
        D.equilibria({"beta": -1})
    with pytest.raises(ValueError, match="did you mean 'theta1'"):
        D.equilibria({"theta_1": 1})
    with pytest.raises(ValueError, match="trained query"):
        derive(MODELS / "token_gaussian.toml").equilibria()


@pytest.mark.slow
def test_three_directions_search_runs_and_covers_the_sphere():
    """k = 3 (about 20 s): interior zeros by Krawczyk, on the sphere by Krawczyk in the cube charts; every
    equilibrium is enclosed tightly and the result says the search is complete."""
    import tomllib

    data = tomllib.loads((MODELS / "two_signals.toml").read_text())
    data["model"].update(directions=["xi", "zeta", "eta"], id="three")
    data["parameters"].update(theta3={"default": 0.4, "min": 0}, R3={"default": 150, "integer": True, "min": 1})
    data["tokens"].insert(2, {"name": "signal3", "count": "R3", "mean": "theta3*eta", "cov": "sigma**2"})
    data["tokens"][3]["count"] = "L - R1 - R2 - R3"
    E = derive(data).equilibria()
    assert E.complete and any(e.boundary for e in E.points)
    for e in E.points:
        assert max(hi - lo for lo, hi in e.enclosure) < 1e-8


def test_three_directions_sphere_equilibria_against_a_lagrange_search():
    """k = 3 on the sphere (until this version only the axis points were examined): a J with 18 equilibria on S^2,
    16 of them off the axes. Every solution of grad J = lambda rho, |rho| = 1 found by scipy from 300 random starts
    lies in one certified enclosure, and every enclosure holds one of them."""
    from attnverify.theory.engine.equilibria import FieldFunctions, find

    r = sp.symbols("r1 r2 r3", real=True)
    p = sp.Symbol("p", positive=True)
    J = ((p - sp.Rational(1, 10)) * r[0] * r[1] + r[0] ** 2 * r[1] ** 2 + r[1] ** 2 * r[2] ** 2
         + r[2] ** 2 * r[0] ** 2 + r[2] / 3)
    F = sp.Matrix([sp.diff(J, x) - x * sum(y * sp.diff(J, y) for y in r) for x in r])
    E = find(FieldFunctions(J, F, r, (p,)), [sp.Rational(3, 10)])
    on_sphere = [e for e in E.points if e.boundary]
    assert E.complete and len(on_sphere) == 18
    assert sum(1 for e in on_sphere if np.max(np.abs(e.overlaps)) < 1 - 1e-6) == 16
    grad = sp.lambdify(r, [sp.diff(J, x).subs(p, sp.Rational(3, 10)) for x in r])

    def lagrange(z):
        return [*(np.array(grad(*z[:3])) - z[3] * z[:3]), z[:3] @ z[:3] - 1]

    rng = np.random.default_rng(0)
    found = []
    for _ in range(300):
        x0 = rng.standard_normal(3)
        sol = root(lagrange, [*(x0 / np.linalg.norm(x0)), 0.0], tol=1e-13)
        if sol.success and np.max(np.abs(lagrange(sol.x))) < 1e-11:
            found.append(sol.x[:3])
    inside = lambda x, e: all(lo - 1e-9 <= v <= hi + 1e-9 for v, (lo, hi) in zip(x, e.enclosure))  # noqa: E731
    assert found and all(sum(inside(x, e) for e in on_sphere) == 1 for x in found)
    assert all(any(inside(x, e) for x in found) for e in on_sphere)


def test_a_degenerate_field_is_refused_as_uncertifiable_not_an_error():
    """A field that vanishes on a whole region (here identically) cannot have its zeros isolated: both root searches
    give up with OutsideCertifiedRange, which the runner reads as unresolved at that model (the model-file sweep
    met it at theta = 500, sigma = 0.001, where the drift is flat to machine precision), never as a check's error."""
    from attnverify.theory.certified import root_boxes
    from attnverify.theory.refusals import OutsideCertifiedRange

    def zero(X):
        return [arb(0) * x for x in X]

    def jac(X):
        return [[arb(0), arb(0)], [arb(0), arb(0)]]

    with pytest.raises(OutsideCertifiedRange, match="zero search did not terminate"):
        zero_boxes(zero, jac, ((arb(-1), arb(1)), (arb(-1), arb(1))), 1e-12, 200)
    with pytest.raises(OutsideCertifiedRange, match="root isolation did not terminate"):
        root_boxes(lambda x: arb(0) * x, lambda x: arb(0), -1, 1, 1e-12, 200)


def test_equilibria_with_a_zero_coordinate_are_certified_and_tight():
    """J = sum rho_i^4 + |rho|^2/10 at k = 3: 26 equilibria on the sphere (6 axis points, 12 edge midpoints, 8
    corners, most with a coordinate 0) and the origin. A chart's enclosure of a zero coordinate is a ball centred at
    0, where python-flint's arb ** n is NaN: every such point read 'undecided' and its enclosure stopped at 1.7e-7.
    Integer powers now keep the enclosure: all 27 certified, each enclosure below 1e-9."""
    from attnverify.theory.engine.equilibria import FieldFunctions, find

    r = sp.symbols("r1 r2 r3", real=True)
    J = sum(x**4 for x in r) + sum(x**2 for x in r) / 10
    F = sp.Matrix([sp.diff(J, x) - x * sum(y * sp.diff(J, y) for y in r) for x in r])
    E = find(FieldFunctions(J, F, r, ()), [])
    assert E.complete and len(E.points) == 27 and sum(e.boundary for e in E.points) == 26
    assert all(e.certified and e.stability != "undecided" for e in E.points)
    assert max(hi - lo for e in E.points for lo, hi in e.enclosure) < 1e-9
    axes = [e for e in E.points if e.boundary and np.max(np.abs(e.overlaps)) > 1 - 1e-9]
    assert len(axes) == 6 and all(e.stability == "attracting" for e in axes)


def test_a_linearisation_beyond_double_precision_is_refused_naming_the_parameters():
    """The model-file sweep's anisotropic.equilibria_stability error (seed 28: s_xi = 481, beta = 4.2, L = 49): the
    finite-size field's Jacobian at rho = -1 is of order 10^1771103, finite in Arb but inf as a float, and NumPy's
    eigenvalues raised LinAlgError (an error verdict). The equilibria are refused (OutsideCertifiedRange, which
    the runner reads as unresolved), naming the parameters."""
    from attnverify.checks.engine import add_model
    from attnverify.checks.runner import select
    from attnverify.selftest.model_sweep import run_point
    from attnverify.theory.engine.equilibria import FieldFunctions, find
    from attnverify.theory.refusals import OutsideCertifiedRange

    r = sp.Symbol("r", real=True)
    J = sp.exp(sp.Integer(10) ** 7 * r ** 2)          # J' = 2e7 r e^{1e7 r^2}: about 10^4342945 at r = -1
    with pytest.raises(OutsideCertifiedRange, match="certified equilibria at .*overflows double precision"):
        find(FieldFunctions(J, sp.Matrix([(1 - r ** 2) * sp.diff(J, r)]), (r,), ()), [])
    add_model(MODELS / "anisotropic.toml")
    [check] = select(["anisotropic.equilibria_stability"])
    row = run_point(check, {"theta": 152.07088354121606, "beta": 4.19592149181166, "sigma": 49.3779723222446,
                            "s_xi": 481.282791125795, "R": 6, "L": 49, "d": 67}, seed=28)
    assert row["verdict"] == "unresolved" and "s_ξ = 481.282791125795" in row["error"], row
    assert "overflows double precision" in row["error"], row


def test_a_field_that_vanishes_identically_is_refused_not_an_error(tmp_path):
    """A reviewer's model with A = 0 (uniform attention: J does not depend on the query) ended the equilibria check
    in AttributeError: the ball version of the constant gradient 0 returned the Python int 0. Constant entries now
    come back as exact balls, and a gradient that is exactly 0 over the whole ball is refused (every rho is an
    equilibrium), which the runner reads as unresolved."""
    import attnverify.theory.certified as C
    from attnverify.theory.engine.equilibria import FieldFunctions, find
    from attnverify.theory.refusals import OutsideCertifiedRange

    r = sp.Symbol("r", real=True)
    f = C.lambdify_arb(sp.Tuple(sp.Integer(0), r), (r,))
    assert all(isinstance(v, arb) for v in f(arb(0.5)))
    with pytest.raises(OutsideCertifiedRange, match="vanishes identically"):
        find(FieldFunctions(sp.Integer(5), sp.Matrix([0]), (r,), ()), [])
    model = (MODELS / "paper_a.toml").read_text().replace('score = "beta*<q, x>"', 'score = "beta*<q, A x>"')
    assert "<q, A x>" in model
    path = tmp_path / "azero.toml"
    path.write_text(model.replace('id = "paper_a"', 'id = "azero"') + '\n[attention.matrices]\nA = "0"\n')
    from attnverify.checks.engine import add_model
    from attnverify.checks.runner import select
    from attnverify.selftest.model_sweep import run_point

    add_model(path)
    [check] = select(["azero.equilibria_stability"])
    row = run_point(check, {}, seed=0)
    assert row["verdict"] == "unresolved" and "vanishes identically" in row["error"], row


@pytest.mark.slow  # about 8 s: eight 3-dimensional chart searches that give up
def test_four_directions_fall_back_to_the_axis_points_and_say_the_search_is_incomplete():
    """k = 4, J = sum rho_i^4 + |rho|^2/10: each chart's 3-dimensional search exceeds its share of the box budget;
    the chart is reported unresolved and its axis point examined exactly (SymPy), as the search did for every k >= 3
    before the charts: the 8 attracting axis points and the origin, complete False."""
    from attnverify.theory.engine.equilibria import FieldFunctions, find

    r = sp.symbols("r1 r2 r3 r4", real=True)
    J = sum(x**4 for x in r) + sum(x**2 for x in r) / 10
    F = sp.Matrix([sp.diff(J, x) - x * sum(y * sp.diff(J, y) for y in r) for x in r])
    E = find(FieldFunctions(J, F, r, ()), [])
    assert not E.complete and len(E.unresolved) == 8
    axes = [e for e in E.points if e.boundary]
    assert len(axes) == 8 and all(e.stability == "attracting" and e.certified for e in axes)
    [origin] = [e for e in E.points if not e.boundary]
    assert np.max(np.abs(origin.overlaps)) < 1e-12 and origin.stability == "repelling"
