r"""The quantities of a model file that a claim may state (``attnverify list --quantities FILE.toml``, ``attnverify
audit``): the engine's derived closed forms, each with a Monte Carlo measurement that never reads them.

For a trained query (``query = "q"``), in the model's parameters and the overlaps rho_<dir>:

``J_limit``, ``J_finite``   the long-sequence objective and the same with its O(1/L) terms. Measured: J_L(q) =
                            E|f_q(X)|^2 at the model's L by the Rao-Blackwellised Monte Carlo
                            (attnverify.numerics.engine.grid_mc), which estimates J_finite up to O(1/L^2): the formula
                            judge allows the derived gap between J_limit and J_finite.
``mass.<c>``                the long-sequence attention mass of component c. Measured: E[sum of the weights of c's
                            tokens] at L, which estimates mass_finite.<c>.
``F_limit.<dir>``           the reduced gradient flow's component along a direction (``F_limit`` when k = 1).
                            Measured: the pathwise Monte Carlo drift E[e_j^T (I - q q^T) grad_q |f_q(X)|^2]
                            (attnverify.numerics.engine.drift_mc), the field of J_L, which estimates F_finite.

A token-query model has no quantity yet (its attention map has no measurement here).

Counterexamples to a stated formula are searched at sampled points: every real parameter uniform in [1/2, 3/2]
times its default (in [0, 1/2] when the default is 0) inside its domain, the integer parameters (counts, L, d) at
their defaults, the overlaps uniform in the ball of radius 0.9; a claim's ``at`` fixes any of them.
"""
from __future__ import annotations

from collections.abc import Mapping
from functools import partial

import numpy as np
import sympy as sp

from attnverify.checks.judges import Measured
from attnverify.checks.paper import Quantity
from attnverify.checks.params import Param
from attnverify.checks.reason import Math, reason

N_SEQUENCES = 4000            # Monte Carlo sequences per measured point
#: independent measurements a formula claim may pool at one point to resolve a certified difference (the 4 pilot
#: calls were the whole budget: a coefficient of paper_a.toml's F 1 % off needed about 20)
REPEATS = 16
RHO_MAX = 0.9                 # the overlaps of sampled points: |rho| <= RHO_MAX
#: what a measurement estimates, for its phrase: the energy E|f_q(X)|^2, a mass, a drift component
MEASURED = {"objective": Math(sp.Mul(sp.Symbol(r"\mathbb{E}"), sp.Abs(sp.Function("f_q")(sp.Symbol("X"))) ** 2,
                                   evaluate=False)),
            "mass": "the attention mass", "drift": "the pathwise drift"}
L_MATH = Math(sp.Symbol("L"))


def _split(model, values: Mapping) -> tuple[dict, np.ndarray]:
    """The parameter values (the model's defaults where not given) and the overlap point (0 where not given)."""
    params = {p.name: values[p.name] for p in model.parameters if p.name in values}
    rho = np.array([[float(values.get(f"rho_{d}", 0.0)) for d in model.directions]])
    return params, rho


def _measure(model, what: str, index: int, n: int = N_SEQUENCES):
    """``measure(values, rng)`` of the energy (``what`` = "objective"), a mass or a drift component."""
    def measure(values: dict, rng: np.random.Generator) -> Measured:
        from attnverify.checks.engine._bridge import mixture_spec
        from attnverify.numerics.engine import grid_mc

        params, rho = _split(model, values)
        est = grid_mc(mixture_spec(model, params), rho, n, rng, drift=what == "drift")
        part = getattr(est, what)
        mean, se = np.reshape(part.mean, (1, -1))[0, index], np.reshape(part.se, (1, -1))[0, index]
        return Measured(float(mean), float(se), reason("Rao-Blackwellised Monte Carlo of ", MEASURED[what], ", ", n,
                                                       " sequences at ", L_MATH, " = ",
                                                       int(float(values.get("L", model.defaults["L"])))))
    return measure


def _sampler(model):
    def sample(rng: np.random.Generator, n: int, fixed: dict) -> list[dict]:
        from attnverify.theory.engine.derive import model_values

        out, tries = [], 0
        while len(out) < n and tries < 50 * n:
            tries += 1
            point = {}
            for p in model.parameters:
                if p.name in fixed:
                    point[p.name] = fixed[p.name]
                elif p.integer:
                    point[p.name] = int(p.default)
                else:
                    base = float(p.default)
                    point[p.name] = base * rng.uniform(0.5, 1.5) if base else rng.uniform(0.0, 0.5)
            try:
                model_values(model, {k: v for k, v in point.items()})
            except ValueError:
                continue
            k = model.k
            u = rng.normal(size=k)
            u *= RHO_MAX * rng.uniform() ** (1.0 / k) / np.linalg.norm(u)
            for j, d in enumerate(model.directions):
                name = f"rho_{d}"
                point[name] = fixed.get(name, float(u[j]))
            out.append(point)
        return out
    return sample


def unit_query(names: tuple[str, ...], values: dict) -> None:
    """ValueError (one line) when the overlaps among ``values`` (``names``: rho_<dir>) have a sum of squares above
    1: no unit query has them."""
    given = [n for n in names if n in values]
    total = sum(float(values[n]) ** 2 for n in given)
    if total > 1:
        listed = ", ".join(f"{n} = {values[n]}" for n in given)
        raise ValueError(f"the overlaps {listed} have a sum of squares {total:.6g} > 1: the query is a unit vector, "
                         "so its overlaps with the orthonormal directions lie in the unit ball")


def model_quantities(model, theory) -> list[Quantity]:
    """The quantities of ``model`` (module docstring); ``theory`` the model's ModelTheory (derived on first use).
    The overlaps rho_<dir> of a unit query have the domain [-1, 1] each and a sum of squares at most 1 (refused in
    one line otherwise, by attnverify.checks.domain.read_values: in a claim's ``at`` and in attnverify.quantity)."""
    if model.attention.query != "q":
        return []
    q = theory.quantities
    symbols = dict(theory.symbols)
    sample = _sampler(model)
    names = tuple(f"rho_{d}" for d in model.directions)
    domain = {n: Param(n, float, 0.0, f"the overlap of the unit query with {n[4:]}", low=-1.0, high=1.0)
              for n in names}
    ball = {"domain": domain, "admissible": partial(unit_query, names)}

    def closed(name: str, index: int | None = None):
        expr = q[name] if index is None else q[name][index]
        return lambda **_options: expr

    out = [
        Quantity("J_limit", "the long-sequence objective J = E_eps |f_oo|^2 in the overlaps and the parameters",
                 symbols, closed("J_limit"), kinds=("formula", "value"), sample=sample,
                 measure=_measure(model, "objective", 0), measured_as=closed("J_finite"), repeats=REPEATS, **ball),
        Quantity("J_finite", "J_limit plus its O(1/L) terms (the second-order delta method)", symbols,
                 closed("J_finite"), kinds=("formula", "value"), sample=sample,
                 measure=_measure(model, "objective", 0), repeats=REPEATS, **ball),
    ]
    for c, comp in enumerate(model.components):
        out.append(Quantity(f"mass.{comp.name}", f"the long-sequence attention mass of the component {comp.name}",
                            symbols, closed(f"mass.{comp.name}"), kinds=("formula", "value"), sample=sample,
                            measure=_measure(model, "mass", c), measured_as=closed(f"mass_finite.{comp.name}"),
                            repeats=REPEATS, **ball))
    for j, d in enumerate(model.directions):
        name = "F_limit" if model.k == 1 else f"F_limit.{d}"
        out.append(Quantity(name, f"the reduced Riemannian gradient flow of J_limit, its component along {d} "
                            "(rho' = (I - rho rho^T) grad J)", symbols, closed("F_limit", j),
                            kinds=("formula", "value"), sample=sample, measure=_measure(model, "drift", j),
                            measured_as=closed("F_finite", j), repeats=REPEATS, **ball))
    return out
