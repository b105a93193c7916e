"""The engine's public API: quantities and symbols by name, the cache, certified evaluation of every closed form,
the derivation steps and their kinds, and the one-line refusals of bad values."""
from pathlib import Path

import flint
import pytest
import sympy as sp

import attnverify.theory.certified as C
from attnverify.theory.derivation import Step
from attnverify.theory.engine import Derivation, derive, load_model

MODELS = Path(__file__).resolve().parents[2] / "examples" / "models"
EXAMPLES = sorted(p.stem for p in MODELS.glob("*.toml"))


def test_required_quantities_and_symbols():
    D = derive(MODELS / "two_signals.toml")
    for name in ("J_limit", "J_finite", "J_correction", "F_limit", "F_finite", "attention_map", "f_limit",
                 "f_limit.xi", "f_limit.zeta", "f_limit.perp", "F_limit.xi", "F_limit.zeta", "mass.signal1",
                 "mass.signal2", "mass.noise", "mass_finite.noise"):
        assert name in D.quantities
    assert isinstance(D.quantities["F_limit"], sp.MatrixBase) and D.quantities["F_limit"].shape == (2, 1)
    assert D.coordinates == ("rho_xi", "rho_zeta")
    assert set(D.symbols) == {"theta1", "theta2", "beta", "sigma", "R1", "R2", "L", "d", "rho_xi", "rho_zeta"}
    for name, expr in D.quantities.items():
        assert expr.free_symbols <= set(D.symbols.values()), name
    T = derive(MODELS / "token_gaussian.toml")
    assert {"attention_map", "pushforward_mean", "pushforward_cov", "mass.tokens"} <= set(T.quantities)
    assert "J_limit" not in T.quantities and T.coordinates == ("x_xi", "x_zeta", "x_perp")


def test_derive_is_cached_by_content():
    D = derive(MODELS / "two_signals.toml")
    assert derive(MODELS / "two_signals.toml") is D
    assert derive(load_model(MODELS / "two_signals.toml")) is D
    assert isinstance(D, Derivation) and D.id == "two_signals"


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_closed_form_is_certifiable(name):
    """Each quantity of each example becomes an Arb ball function (no uncertifiable function) with a finite,
    narrow enclosure at the defaults and an interior point."""
    D = derive(MODELS / f"{name}.toml")
    point = {c: sp.Rational(1, 5) for c in D.coordinates}
    vals = D.values()
    syms = [D.symbols[n] for n in (*vals, *point)]
    with flint.ctx.workprec(128):
        args = [C.exact_ball(v) for v in (*vals.values(), *point.values())]
        for qname, expr in D.quantities.items():
            entries = list(expr) if isinstance(expr, sp.MatrixBase) else [expr]
            for e in entries:
                ball = flint.arb(C.lambdify_arb(sp.sympify(e), syms)(*args))
                assert ball.is_finite() and float(ball.rad()) < 1e-20 * max(1.0, abs(float(ball.mid()))), qname


def test_steps_say_what_they_are():
    D = derive(MODELS / "paper_a_symmetric.toml")
    steps = D.steps()
    assert all(isinstance(s, Step) for s in steps)
    assert len({s.name for s in steps}) == len(steps)
    kind = {s.name: s for s in steps}
    assert kind["counts"].kind == "assumption"
    assert kind["mass-signal"].kind == "limit" and kind["J-limit"].kind == "limit"
    assert kind["J-correction"].kind == "approximation" and kind["J-correction"].order == "O(1/L^2)"
    assert kind["reduction"].kind == "identity"
    assert kind["J-correction"].result == D.quantities["J_correction"]
    assert all(s.latex() for s in steps if len(str(s.result)) < 3000)
    T = derive(MODELS / "token_gaussian.toml")
    assert {"token-map", "pushforward-mean", "pushforward-cov"} <= {s.name for s in T.steps()}


def test_reduction_is_derived():
    from attnverify.theory.engine.flow import reduction

    r1, r2 = sp.symbols("r1 r2", real=True)
    assert sp.Matrix(reduction(2)) == sp.Matrix([[1 - r1**2, -r1 * r2], [-r1 * r2, 1 - r2**2]])
    assert sp.Matrix(reduction(1)) == sp.Matrix([[1 - r1**2]])


def test_values_and_evaluate_refuse_bad_input():
    D = derive(MODELS / "two_signals.toml")
    for vals, needle in (({"beta": 0}, "beta = 0 is not > 0"), ({"R1": 2.5}, "not an integer"),
                         ({"thetta1": 1}, "did you mean 'theta1'"), ({"R1": 2990}, "count"),
                         ({"sigma": True}, "not a number")):
        with pytest.raises(ValueError, match=needle) as info:
            D.values(vals)
        assert "\n" not in str(info.value)
    with pytest.raises(ValueError, match="needs the coordinate rho_zeta"):
        D.evaluate("J_limit", rho_xi=0.1)
    with pytest.raises(ValueError, match="unknown quantity"):
        D.evaluate("J_limt", rho_xi=0.1, rho_zeta=0.1)
    with pytest.raises(ValueError, match="unknown coordinate"):
        D.evaluate("J_limit", rho_xi=0.1, rho_zeta=0.1, rho_eta=0)
    assert D.evaluate("J_limit", {"theta1": 0.7}, rho_xi=0.1, rho_zeta=0.2) != D.evaluate("J_limit", rho_xi=0.1,
                                                                                             rho_zeta=0.2)


def test_python_api_refuses_a_value_beyond_double_precision():
    """attnverify.quantity returned -inf for anisotropic.J_finite at s_xi = 481, beta = 4.2, L = 49 (its O(1/L) term
    carries e^{beta^2 s_xi^2}): a silent non-finite number. It refuses now with the exact value's order."""
    import numpy as np

    import attnverify
    from attnverify.theory.refusals import OutsideCertifiedRange

    path = MODELS / "anisotropic.toml"
    kw = dict(theta=152.07, beta=4.1959, sigma=49.378, s_xi=481.28, R=6, L=49, d=67, rho_xi=0.5)
    with pytest.raises(OutsideCertifiedRange, match=r"J_finite = -1\.78\d*E\+456754 at these values: beyond "
                                                    "double precision"):
        attnverify.quantity("anisotropic.J_finite", model=path, **kw)
    assert np.isfinite(attnverify.quantity("anisotropic.J_limit", model=path, **kw))    # representable: no refusal


def test_python_api_names_a_model_file_as_the_command_line_does():
    """attnverify.formula / quantity (model=FILE), derivation(FILE) and run(FILE) take a model file as --model FILE
    does. The formula's value at a point is the Gaussian-tilting limit computed by hand (five dimensions,
    explicit coordinates), so a wrong file, model or derivation reached through model= fails it."""
    import numpy as np

    import attnverify

    path = MODELS / "two_signals.toml"
    values = dict(theta1=0.5, theta2=0.3, beta=1.2, sigma=0.8, R1=200, R2=100, L=3000, rho_xi=0.3, rho_zeta=-0.4)
    got = attnverify.quantity("two_signals.J_limit", model=str(path), **values)
    # by hand: q = (0.3, -0.4, sqrt(0.75), 0, 0), a = beta q; component c tilted by M_c = n_c e^{<a, m_c> + |a|^2
    # sigma^2 / 2} to mean m_c + sigma^2 a; f = sum_c M_c (m_c + sigma^2 a) / sum_c M_c, J = |f|^2
    e = np.eye(5)
    q = np.array([0.3, -0.4, np.sqrt(0.75), 0.0, 0.0])
    a = 1.2 * q
    means, counts = [0.5 * e[0], 0.3 * e[1], 0.0 * e[0]], [200, 100, 2700]
    logw = np.array([np.log(n) + a @ m for n, m in zip(counts, means)])
    w = np.exp(logw - logw.max()) / np.exp(logw - logw.max()).sum()
    f = sum(wc * (m + 0.64 * a) for wc, m in zip(w, means))
    assert got == pytest.approx(f @ f, rel=1e-12)
    J = attnverify.formula("two_signals.J_limit", model=path)
    assert {s.name for s in J.free_symbols} <= set(values) | {"d"}
    assert [s.name for s in attnverify.derivation(path)] == [s.name for s in attnverify.derivation("two_signals")]
    from attnverify.api import model_name

    assert model_name(str(path)) == model_name(path) == "two_signals" and model_name("signal") == "signal"
    with pytest.raises(attnverify.InputError, match="defines the model 'two_signals'"):
        attnverify.formula("signal.J_limit", model=path)
    with pytest.raises(attnverify.InputError, match="no model file"):
        attnverify.quantity("two_signals.J_limit", model="missing.toml", **values)
