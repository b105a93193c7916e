r"""The derivation of a model: every quantity the engine derives, its symbols, its steps and its equilibria.

``derive(model)`` runs :mod:`.limit` (masses, f_oo, Gamma_mu, J), :mod:`.finite` (the O(1/L) terms), :mod:`.flow`
(the reduced field) and :mod:`.token_map` (the push-forward), and returns a :class:`Derivation`.  It is cached by
the model's content hash, so deriving the same file twice costs a dictionary look-up.  Nothing here evaluates
numbers except :meth:`Derivation.evaluate` and :meth:`Derivation.equilibria`, which certify in Arb balls.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from functools import lru_cache
from types import MappingProxyType

import flint
import numpy as np
import sympy as sp

import attnverify.theory.certified as C
from attnverify.theory.engine.equilibria import Equilibria, FieldFunctions, find
from attnverify.theory.engine.expressions import did_you_mean
from attnverify.theory.engine.finite import finite_quantities
from attnverify.theory.engine.flow import reduced_field
from attnverify.theory.engine.identity import normalize_exponents
from attnverify.theory.engine.limit import geometry, limit_quantities
from attnverify.theory.engine.model_file import Model, load_model
from attnverify.theory.engine.model_guards import value_problem
from attnverify.theory.engine.parameters import Parameter
from attnverify.theory.engine.token_map import pushforward_quantities


def _exact(v) -> sp.Rational:
    """A number as the exact rational it denotes (a float through its shortest decimal repr)."""
    if isinstance(v, (bool, np.bool_)):
        raise ValueError(f"{v!r} is not a number")
    if isinstance(v, (float, np.floating)):
        return sp.Rational(repr(float(v)))
    if isinstance(v, (int, np.integer)):
        return sp.Integer(int(v))
    return sp.nsimplify(v, rational=True)


def model_values(model: Model, values: Mapping | None = None) -> dict[str, sp.Rational]:
    """Validated exact parameter values of ``model`` (no derivation needed): ``values`` (name -> number) over the
    defaults.  An unknown name, a value outside its domain, a count that is not an integer >= 1, a variance or radius
    that is not > 0: ValueError, one line."""
    values = dict(values or {})
    out = dict(model.defaults)
    params = model.params
    for name, v in values.items():
        if name not in params:
            raise ValueError(f"{model.id}: unknown parameter {name!r}{did_you_mean(name, params)}")
        why = params[name].problem(v)
        if why:
            raise ValueError(f"{model.id}: {why} (domain {params[name].domain_text})")
        out[name] = _exact(v)
    sub = {params[n].symbol: v for n, v in out.items()}
    for c in model.components:
        n = c.count.subs(sub)
        if not (n.is_Integer and n >= 1):
            raise ValueError(f"{model.id}: component {c.name!r} has count {c.count} = {n}: needs an integer >= 1")
        for v in (*c.cov, c.cov_rest) if c.law == "gaussian" else (c.radius,):
            if not v.subs(sub).is_positive:
                raise ValueError(f"{model.id}: component {c.name!r}: {v} = {v.subs(sub)} is not > 0")
    problem = value_problem(model, sub) if values else None      # at the defaults: checked when the file was read
    if problem:
        at = ", ".join(f"{k} = {out[k]}" for k in values)
        raise ValueError(f"{model.id}: {problem[0]}: {problem[1]} at {at} (a model's expressions must be real)")
    return out


class Derivation:
    """A derived model.

    ``quantities``: name -> SymPy expression (scalars) or ImmutableMatrix (``f_limit``, ``attention_map``,
    ``F_limit``, ``F_finite``, ``pushforward_mean``, ``pushforward_cov``); docs/models.md lists them.
    ``symbols``: name -> Symbol, the parameters (with ``d`` and ``L``) and the query's coordinates (``rho_<dir>``,
    or ``x_<dir>`` and ``x_perp`` for a token query).  ``parameters``: name -> Parameter (default and domain).
    ``drop_tilt``: a wrong derivation on purpose, every tilted moment read as the untilted law's (the self-test's
    dropped-tilting-term mutant; :func:`derive` never sets it)."""

    def __init__(self, model: Model, drop_tilt: bool = False):
        self.model = model
        self.geometry = geo = dataclasses.replace(geometry(model), drop_tilt=drop_tilt)
        d = model.symbol("d")
        q = limit_quantities(model, geo)
        q.update(finite_quantities(model, geo, d))
        q = {k: normalize_exponents(v) for k, v in q.items()}
        q.update(pushforward_quantities(model, geo, q["attention_map"]))
        if model.attention.query == "q":
            for name, J in (("F_limit", q["J_limit"]), ("F_finite", q["J_finite"])):
                F = reduced_field(J, geo.query)
                q[name] = F
                for dname, f in zip(model.directions, F):
                    q[f"{name}.{dname}"] = f
        self.quantities = MappingProxyType(q)
        coords = {s.name: s for s in geo.query}
        if model.attention.query == "token":
            coords["x_perp"] = geo.t
        self.symbols = MappingProxyType({**{p.name: p.symbol for p in model.parameters}, **coords})
        self.parameters: Mapping[str, Parameter] = MappingProxyType(model.params)
        self._fields: dict[bool, FieldFunctions] = {}

    @property
    def id(self) -> str:
        return self.model.id

    @property
    def coordinates(self) -> tuple[str, ...]:
        """The names of the query's coordinates (the quantities' variables besides the parameters)."""
        return tuple(n for n in self.symbols if n not in self.parameters)

    def values(self, values: Mapping | None = None) -> dict[str, sp.Rational]:
        """Validated exact parameter values: ``values`` (name -> number) over the defaults (:func:`model_values`)."""
        return model_values(self.model, values)

    def evaluate(self, name: str, values: Mapping | None = None, **point) -> float | sp.Matrix:
        """The quantity ``name`` at the parameter ``values`` and the coordinates ``point`` (e.g. rho_xi=0.3), in
        Arb ball arithmetic (128 bits), as the float midpoint (a Matrix of floats for matrix quantities).  Missing
        coordinates or a non-finite result: ValueError."""
        if name not in self.quantities:
            raise ValueError(f"{self.id}: unknown quantity {name!r}{did_you_mean(name, self.quantities)}")
        vals = self.values(values)
        for c in self.coordinates:
            if c not in point and self.quantities[name].has(self.symbols[c]):
                raise ValueError(f"{self.id}: {name} needs the coordinate {c}")
        for c in point:
            if c not in self.coordinates:
                raise ValueError(f"{self.id}: unknown coordinate {c!r}{did_you_mean(c, self.coordinates)}")
        expr = self.quantities[name]
        syms = [self.symbols[n] for n in (*vals, *point)]
        args = [*vals.values(), *point.values()]
        with flint.ctx.workprec(128):
            f = C.lambdify_arb(sp.Tuple(*[sp.Tuple(*r) for r in expr.tolist()]) if isinstance(expr, sp.MatrixBase)
                               else expr, syms)
            out = f(*[C.exact_ball(_exact(a)) for a in args])
        def mid(b):
            b = flint.arb(b)
            if not b.is_finite():
                raise ValueError(f"{self.id}: {name} is not finite at {dict(vals)} {point}")
            return float(b.mid())
        return sp.Matrix([[mid(v) for v in row] for row in out]) if isinstance(expr, sp.MatrixBase) else mid(out)

    def steps(self):
        """The derivation as attnverify.theory.derivation.Step objects (statement, result, reason, kind)."""
        from attnverify.theory.engine.steps import derivation_steps

        return derivation_steps(self)

    def equilibria(self, values: Mapping | None = None, finite_size: bool = False) -> Equilibria:
        """The equilibria of rho' = F(rho) (``F_finite`` when ``finite_size``), certified (see
        attnverify.theory.engine.equilibria).  Only for a trained query."""
        if self.model.attention.query != "q":
            raise ValueError(f"{self.id}: equilibria need a trained query (query = \"q\")")
        vals = self.values(values)
        key = bool(finite_size)
        if key not in self._fields:
            J = self.quantities["J_finite" if key else "J_limit"]
            F = self.quantities["F_finite" if key else "F_limit"]
            params = tuple(p.symbol for p in self.model.parameters)
            self._fields[key] = FieldFunctions(J, F, self.geometry.query, params)
        return find(self._fields[key], [vals[p.name] for p in self.model.parameters])


@lru_cache(maxsize=64)
def _derive(model: Model) -> Derivation:
    return Derivation(model)


def derive(model) -> Derivation:
    """The :class:`Derivation` of ``model`` (a Model, a path to a TOML file or a parsed mapping), cached by the
    model's content (two loads of one file share one derivation)."""
    if not isinstance(model, Model):
        model = load_model(model)
    return _derive(model)
