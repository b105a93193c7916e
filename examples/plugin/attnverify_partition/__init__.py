"""An example paper plugin for attnverify: the expected softmax partition function.

The "paper" states: for L scores g_i ~ N(0, sigma^2) at inverse temperature beta, the softmax normaliser
Z = sum_i exp(beta g_i) has E Z = L exp(beta^2 sigma^2 / 2). The plugin derives E Z with SymPy (a Gaussian
integral), measures it by Monte Carlo, checks the two against each other (``partition.mean``), and judges the
paper's stated formula (``Z.mean``) from its stated-claims file. Everything it uses is attnverify's public plugin
API: ``check`` / ``Param`` / ``Evidence``, ``claim`` / ``ClaimVerdict``, ``judge``, ``Paper`` / ``Quantity``.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import sympy as sp

from attnverify.checks.plugin import Paper, Quantity, Section
from attnverify.checks.params import Param

beta, sigma = sp.symbols("beta sigma", positive=True)
L = sp.Symbol("L", positive=True, integer=True)
SYMBOLS = {"beta": beta, "sigma": sigma, "L": L}


@lru_cache(maxsize=None)
def mean_partition() -> sp.Expr:
    """E Z = L E[exp(beta g)], g ~ N(0, sigma^2): the Gaussian integral, done by SymPy."""
    g = sp.Symbol("g", real=True)
    density = sp.exp(-g**2 / (2 * sigma**2)) / (sigma * sp.sqrt(2 * sp.pi))
    return sp.simplify(L * sp.integrate(sp.exp(beta * g) * density, (g, -sp.oo, sp.oo)))


def derivation(_values: dict) -> tuple[str, list]:
    from attnverify.theory.derivation import Step

    return "Example: the softmax partition function", [
        Step("The expected partition function of $L$ Gaussian scores", mean_partition(),
             r"sympy.integrate of $e^{\beta g}$ against the $N(0, \sigma^2)$ density, times $L$", r"\mathbb{E} Z",
             "mean-Z")]


def monte_carlo(beta_: float, sigma_: float, L_: int, n: int, rng: np.random.Generator) -> tuple[float, float]:
    """(mean, standard error) of Z = sum_i exp(beta g_i) over n draws of L scores."""
    z = np.exp(beta_ * sigma_ * rng.standard_normal((n, L_))).sum(axis=1)
    return float(z.mean()), float(z.std(ddof=1) / np.sqrt(n))


def _measure(values: dict, rng: np.random.Generator):
    from attnverify.checks.judges import Measured

    m, se = monte_carlo(float(values["beta"]), float(values["sigma"]), int(values["L"]), 20000, rng)
    return Measured(m, se, "Monte Carlo, 20000 draws")


def _sample(rng: np.random.Generator, n: int, fixed: dict) -> list[dict]:
    return [{"beta": rng.uniform(0.2, 1.0), "sigma": rng.uniform(0.5, 1.0), "L": int(rng.integers(2, 50)), **fixed}
            for _ in range(n)]


def quantities() -> list:
    return [Quantity("mean_Z", "the expected softmax partition function E Z", SYMBOLS, lambda: mean_partition(),
                     kinds=("formula",), sample=_sample, measure=_measure)]


PAPER = Paper(
    key="Z", model="partition", title="The expected softmax partition function (an example plugin)",
    citation="attnverify example, not a paper", modules=("attnverify_partition.check",),
    order=("partition.mean",), stated=("attnverify_partition", "stated.toml"),
    params=(Param("L", int, 10, "number of scores", low=1),), derive=derivation,
    sections=lambda: [Section("Z", "Example: the softmax partition function")], quantities=quantities,
)
