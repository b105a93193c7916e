r"""What a generated check receives as ``ctx.theory``: :class:`ModelTheory`, a thin object over the engine's
:class:`~attnverify.theory.engine.Derivation` of one model file.

It gives the derived quantities (``quantities``, SymPy), their NumPy evaluation at parameter values and query
coordinates (:meth:`ModelTheory.numeric`, :meth:`ModelTheory.evaluate`) and the certified equilibria of the reduced
flow of its own J and F (:meth:`ModelTheory.equilibria`).  :meth:`ModelTheory.replace` gives the same object with
some quantities replaced: that is how a self-test hands a check a wrong closed form (a mutant is an argument).  The
derivation itself is made lazily, on first use (listing a model's checks derives nothing).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

import numpy as np
import sympy as sp

_MODULES = ["scipy", "numpy"]           # besseli -> scipy.special.iv (sphere laws)


class ModelTheory:
    """The derived side of a model (see the module docstring).  ``load()`` returns the Derivation (called once);
    ``overrides`` replace some of its quantities; ``label`` names a replacement (a mutant) in messages."""

    def __init__(self, load: Callable[[], Any], overrides: Mapping[str, Any] | None = None, label: str = "") -> None:
        self._load = load
        self._derivation = None
        self._overrides = dict(overrides or {})
        self.label = label
        self._numeric: dict[str, Callable] = {}
        self._fields: dict[bool, Any] = {}
        self._balls: dict[str, Callable] = {}

    # ------------------------------------------------------------------------------------------------- the derivation
    @property
    def derivation(self):
        if self._derivation is None:
            self._derivation = self._load()
        return self._derivation

    @property
    def model(self):
        return self.derivation.model

    @property
    def quantities(self) -> Mapping[str, Any]:
        return MappingProxyType({**self.derivation.quantities, **self._overrides})

    @property
    def symbols(self) -> Mapping[str, sp.Symbol]:
        return self.derivation.symbols

    @property
    def coordinates(self) -> tuple[str, ...]:
        return self.derivation.coordinates

    def replace(self, label: str = "", **quantities: Any) -> "ModelTheory":
        """The same theory with the given quantities replaced (names with dots: pass a dict as ``**{...}``)."""
        new = ModelTheory(self._load, {**self._overrides, **quantities}, label or self.label)
        new._derivation = self._derivation
        return new

    # ------------------------------------------------------------------------------------------------- evaluation
    def numeric(self, name: str) -> Callable[..., np.ndarray]:
        """``f(values, **coords)``: the quantity ``name`` (a scalar, or a Matrix as an array of its entries) at the
        parameter ``values`` (name -> number, every parameter) and the coordinates (arrays broadcasting together),
        in float64 (NumPy and SciPy through sympy.lambdify)."""
        if name not in self._numeric:
            if name not in self.quantities:
                raise KeyError(f"{self.derivation.id}: no quantity {name!r}")
            expr = self.quantities[name]
            params = [p.symbol for p in self.model.parameters]
            coords = [self.symbols[c] for c in self.coordinates]
            target = [expr[i] for i in range(len(expr))] if isinstance(expr, sp.MatrixBase) else expr
            # cse: a derived field repeats its subexpressions (two_signals' F_finite: 17860 operations); printed
            # once each, one evaluation costs 0.5 ms instead of 8 ms (the mean path calls it 1200 times per run)
            # and compiling is faster too. The same operations on the same inputs: the values agree to rounding.
            fn = sp.lambdify([*params, *coords], target, modules=_MODULES, cse=True)
            names = [p.name for p in self.model.parameters]
            cnames = list(self.coordinates)
            matrix = isinstance(expr, sp.MatrixBase)

            def f(values: Mapping, **point: Any) -> np.ndarray:
                args = [float(values[n]) for n in names] + [np.asarray(point.get(c, 0.0), dtype=float) for c in cnames]
                with np.errstate(all="ignore"):
                    out = fn(*args)
                if matrix:
                    shape = np.broadcast(*[np.asarray(a) for a in args[len(names):]]).shape if cnames else ()
                    return np.stack([np.broadcast_to(np.asarray(v, dtype=float), shape) for v in out], axis=-1)
                shape = np.broadcast(*[np.asarray(a) for a in args[len(names):]]).shape if cnames else ()
                return np.broadcast_to(np.asarray(out, dtype=float), shape).copy()
            self._numeric[name] = f
        return self._numeric[name]

    def evaluate(self, name: str, values: Mapping, **point: Any) -> np.ndarray:
        return self.numeric(name)(values, **point)

    def rounding(self, name: str, values: Mapping, **point: Any) -> np.ndarray:
        """The float64 rounding of :meth:`evaluate` (same shape): its distance from an Arb ball enclosure of the same
        closed form at the same inputs (their binary values), plus the ball's radius. Where the closed form cancels
        large terms this is far above a few ulps of its value (a field entry of 0 read as 6.7e-9 at theta = 300,
        beta theta rho = 105)."""
        from flint import arb

        from attnverify.theory.certified import lambdify_arb, upper

        if name not in self._balls:
            expr = self.quantities[name]
            target = sp.Tuple(*[expr[i] for i in range(len(expr))]) if isinstance(expr, sp.MatrixBase) else expr
            args = [p.symbol for p in self.model.parameters] + [self.symbols[c] for c in self.coordinates]
            self._balls[name] = lambdify_arb(target, args)
        fn = self._balls[name]
        floats = self.evaluate(name, values, **point)
        pars = [arb(float(values[p.name])) for p in self.model.parameters]
        coords = np.broadcast_arrays(*[np.asarray(point.get(c, 0.0), dtype=float) for c in self.coordinates])
        flat = floats.reshape(-1, floats.shape[-1]) if floats.ndim > len(coords[0].shape) else floats.reshape(-1, 1)
        out = np.empty_like(flat)
        for i, at in enumerate(zip(*[c.ravel() for c in coords])):
            balls = fn(*pars, *[arb(float(x)) for x in at])
            balls = balls if isinstance(balls, (list, tuple)) else [balls]
            for j, ball in enumerate(balls):
                ball = arb(ball)
                out[i, j] = (abs(flat[i, j] - float(ball.mid())) + upper(ball.rad())
                             if ball.is_finite() else np.inf)
        return out.reshape(floats.shape)

    # ------------------------------------------------------------------------------------------------- equilibria
    def equilibria(self, values: Mapping, finite_size: bool = True):
        """The certified equilibria (attnverify.theory.engine.equilibria) of rho' = F(rho) for this theory's own J
        and F (``J_finite``/``F_finite`` when ``finite_size``, else the limits), at exact parameter ``values``."""
        from attnverify.theory.engine.equilibria import FieldFunctions, find

        key = bool(finite_size)
        if key not in self._fields:
            q = self.quantities
            J, F = (q["J_finite"], q["F_finite"]) if key else (q["J_limit"], q["F_limit"])
            self._fields[key] = FieldFunctions(J, F, self.derivation.geometry.query,
                                               tuple(p.symbol for p in self.model.parameters))
        return find(self._fields[key], [values[p.name] for p in self.model.parameters])
