r"""Paper D's quantities that a formula claim may state (``attnverify list --quantities``), derived by the engine
from the paper's model files (``gaussian.toml``, ``sphere.toml``: one direction xi, the query
x = x_xi e_xi + x_perp u), and measured by self-normalised Monte Carlo over N_MC tokens in R^d.

``gaussian_map``  Gamma_mu(x)_xi for mu = N(m xi, s P_xi + r P_rest), A = a on xi and b on the rest, V = v on xi
                  and w on the rest; symbols m, s, r, a, b, v, w, tau, x_xi, x_perp (d = 3 when measured).
``sphere_map``    Gamma_mu(x)_xi for mu uniform on the sphere of radius R in R^d, A = a I; symbols R, a, tau, d,
                  x_xi, x_perp.
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from attnverify.checks.plugin import Measured, Quantity
from attnverify.checks.reason import Math, reason
from attnverify.checks.tsc._model import derivation
from attnverify.numerics.tsc.laws import GaussianLaw, SphereLaw
from attnverify.numerics.tsc.selfnormalised import tilted_average

N_MC = 400_000
REALS = sp.Symbol(r"\mathbb{R}")           # the space of the tokens: R^d
_G = ("m", "s", "r", "a", "b", "v", "w", "tau", "x_xi", "x_perp")
_S = ("R", "a", "tau", "d", "x_xi", "x_perp")


def _symbols(model: str, names: tuple[str, ...]) -> dict:
    D = derivation(model)
    return {k: D.symbols[k] for k in names}


def sample_gaussian(rng: np.random.Generator, n: int, fixed: dict) -> list[dict]:
    """n points: m, a, b, x in [-1, 1], s, r in [0.1, 0.5], v, w in [0.5, 2], tau in [0.5, 2]."""
    u = lambda lo, hi: float(rng.uniform(lo, hi))           # noqa: E731
    return [{"m": u(-1, 1), "s": u(0.1, 0.5), "r": u(0.1, 0.5), "a": u(-1, 1), "b": u(-1, 1), "v": u(0.5, 2),
             "w": u(0.5, 2), "tau": u(0.5, 2), "x_xi": u(-1, 1), "x_perp": u(-1, 1), **fixed} for _ in range(n)]


def _complete(model: str, values: dict, names: tuple[str, ...]) -> dict:
    """``values`` with the symbols a judge left out (those its two sides do not depend on) at the model file's
    defaults, the query's coordinates at 0.5."""
    defaults = derivation(model).model.defaults
    return {k: float(values[k]) if k in values else float(defaults.get(k, 0.5)) for k in names}


def measure_gaussian(values: dict, rng: np.random.Generator) -> Measured:
    d = 3
    f = _complete("gaussian", values, _G)
    Sigma = np.diag([f["s"]] + [f["r"]] * (d - 1))
    m = np.zeros(d)
    m[0] = f["m"]
    A, V = np.diag([f["a"]] + [f["b"]] * (d - 1)), np.diag([f["v"]] + [f["w"]] * (d - 1))
    x = np.zeros(d)
    x[0], x[1] = f["x_xi"], f["x_perp"]
    Y = GaussianLaw(m, Sigma).sample(rng, N_MC)
    mc = tilted_average(Y, Y @ V.T, (A @ x)[None], 1.0 / f["tau"])
    return Measured(float(mc.estimate[0, 0]), float(mc.se[0, 0]),
                    reason(f"self-normalised Monte Carlo, {N_MC} tokens in ", Math(REALS ** d)))


def sample_sphere(rng: np.random.Generator, n: int, fixed: dict) -> list[dict]:
    """n points: R in [0.5, 2], a in [0.2, 5], tau in [0.5, 2], d in 2..8, x in [-1, 1]^2."""
    u = lambda lo, hi: float(rng.uniform(lo, hi))           # noqa: E731
    return [{"R": u(0.5, 2), "a": u(0.2, 5), "tau": u(0.5, 2), "d": int(rng.integers(2, 9)), "x_xi": u(-1, 1),
             "x_perp": u(-1, 1), **fixed} for _ in range(n)]


def measure_sphere(values: dict, rng: np.random.Generator) -> Measured:
    values = _complete("sphere", values, _S)
    d = int(values["d"])
    x = np.zeros(d)
    x[0], x[1] = float(values["x_xi"]), float(values["x_perp"])
    Y = SphereLaw(d, float(values["R"])).sample(rng, N_MC)
    mc = tilted_average(Y, Y, (float(values["a"]) * x)[None], 1.0 / float(values["tau"]))
    return Measured(float(mc.estimate[0, 0]), float(mc.se[0, 0]),
                    reason(f"self-normalised Monte Carlo, {N_MC} tokens on the sphere in ", Math(REALS ** d)))


def quantities() -> list[Quantity]:
    return [
        Quantity("gaussian_map", "Gamma_mu(x) along xi for a Gaussian token law (the engine: exponential tilting)",
                 _symbols("gaussian", _G), lambda: derivation("gaussian").quantities["attention_map"][0],
                 kinds=("formula",), sample=sample_gaussian, measure=measure_gaussian),
        Quantity("sphere_map", "Gamma_mu(x) along xi for the uniform law on a sphere (the engine: a Bessel ratio)",
                 _symbols("sphere", _S), lambda: derivation("sphere").quantities["attention_map"][0],
                 kinds=("formula",), sample=sample_sphere, measure=measure_sphere),
    ]
