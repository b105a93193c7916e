r"""The long-sequence limit of softmax attention over a Gaussian (or spherical) mixture.

Geometry.  The query is q = sum_j rho_j e_j + t u (trained: |q| = 1, so t^2 = 1 - sum_j rho_j^2; token query x:
x = sum_j x_j e_j + x_perp u, t = x_perp).  The score of a key token x is <a, x> with the **score vector**
a = c B q (:mod:`.attention_spec`): in coordinates a = (c B_kk rho, t c B_rest, 0).

Limit.  With n_c tokens of component c (pi_c = n_c / L), numerator and denominator of the softmax average
f = sum_i e^{s_i} V x_i / sum_i e^{s_i} obey a law of large numbers (L -> oo at fixed pi_c):

    f_oo = sum_c pi_c M_c(a) V m_c(a) / sum_c pi_c M_c(a),     mass_c = pi_c M_c(a) / sum_c' pi_c' M_c'(a),

with M_c the component's MGF and m_c(a) its tilted mean (:mod:`.laws`); E[e^{<a,x>} x] = M(a) m(a).  With a random
sign eps per sequence, the limit is taken at fixed eps and then averaged over eps = +-1.  The objective
J = E|f|^2 -> E_eps |f_oo(eps)|^2.  The u-coordinate of f_oo is odd in t: f_u = t f~_u, so
J = |f_e|^2 + t^2 |f~_u|^2 depends on q only through the overlaps (t^2 = 1 - sum rho^2).
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from attnverify.theory.engine.laws import Tilted, tilt, untilted
from attnverify.theory.engine.model_file import Model


@dataclass(frozen=True)
class Geometry:
    """Coordinates of a model's query and score vector.  ``query``: the query's coordinates on the directions
    (rho_<dir> or x_<dir>); ``t``: the length of its orthogonal part (a symbol; ``t_value`` its value
    sqrt(1 - sum rho^2) for a trained query, None for a token query, whose x_perp stays free); ``b_e``, ``gamma``:
    the score vector a = (b_e, t gamma, 0); ``V``, ``v_rest``: the value matrix; ``signs``: the values of eps;
    ``drop_tilt``: read every tilted moment as the untilted law's (:func:`.laws.untilted`; only the self-test's
    dropped-tilting-term mutant sets it)."""

    query: tuple[sp.Symbol, ...]
    t: sp.Symbol
    t_value: sp.Expr | None
    b_e: tuple[sp.Expr, ...]
    gamma: sp.Expr
    V: sp.ImmutableMatrix
    v_rest: sp.Expr
    signs: tuple[int, ...]
    drop_tilt: bool = False

    @property
    def t2(self) -> sp.Expr:
        """t^2 as the final expressions carry it: 1 - sum rho^2 (trained query) or x_perp^2 (token query)."""
        return self.t**2 if self.t_value is None else self.t_value**2

    def reduce(self, expr):
        """Substitute t by its value (trained query); t enters only as t^2, so no square root is left."""
        return expr if self.t_value is None else expr.subs(self.t, self.t_value)


def geometry(model: Model) -> Geometry:
    att = model.attention
    if att.query == "q":
        query = tuple(sp.Symbol(f"rho_{n}", real=True) for n in model.directions)
        t = sp.Symbol("t_perp", positive=True)
        t_value = sp.sqrt(1 - sum(r**2 for r in query))
    else:
        query = tuple(sp.Symbol(f"x_{n}", real=True) for n in model.directions)
        t, t_value = sp.Symbol("x_perp", nonnegative=True), None
    B = att.key_query
    b_e = tuple(att.scale * (B.matrix * sp.Matrix(query))[i, 0] for i in range(model.k))
    return Geometry(query, t, t_value, b_e, att.scale * B.rest, att.value.matrix, att.value.rest,
                    (1, -1) if model.has_sign else (1,))


def component_tilt(model: Model, geo: Geometry, c, eps: int, factor: int = 1) -> Tilted:
    """Tilting moments of component c (its mean times eps when it carries the random sign) at ``factor`` * a."""
    mean = tuple(eps * m for m in c.mean) if c.sign == "rademacher" else c.mean
    T = tilt(c.law, mean, c.cov, c.cov_rest, c.radius, tuple(factor * b for b in geo.b_e), factor * geo.gamma, geo.t)
    return untilted(c.law, T, mean, c.cov, c.cov_rest, c.radius) if geo.drop_tilt else T


@dataclass(frozen=True)
class Limit:
    """The limit at one sign eps: masses (by component), the output's coordinates f_e (k) and f~_u (f_u / t), and
    J = |f_e|^2 + t^2 f~_u^2 (t not yet substituted)."""

    masses: tuple[sp.Expr, ...]
    f_e: tuple[sp.Expr, ...]
    f_u: sp.Expr
    J: sp.Expr


def limit_at(model: Model, geo: Geometry, eps: int) -> Limit:
    tilts = [component_tilt(model, geo, c, eps) for c in model.components]
    weights = [c.count * sp.exp(T.log_mgf) for c, T in zip(model.components, tilts)]
    total = sp.Add(*weights)
    masses = (sp.Integer(1),) if len(weights) == 1 else tuple(w / total for w in weights)
    mean_e = [sp.Add(*[m * T.mean_e[i] for m, T in zip(masses, tilts)]) for i in range(model.k)]
    f_e = tuple((geo.V * sp.Matrix(mean_e))[i, 0] for i in range(model.k))
    f_u = geo.v_rest * sp.Add(*[m * T.mean_u for m, T in zip(masses, tilts)])
    J = sp.Add(*[x**2 for x in f_e]) + geo.t**2 * f_u**2
    return Limit(masses, f_e, f_u, J)


def sign_average(values) -> sp.Expr:
    """The average over the sign configurations (a plain value without a random sign)."""
    values = list(values)
    return values[0] if len(values) == 1 else sp.Add(*values) / len(values)


def limit_quantities(model: Model, geo: Geometry) -> dict[str, sp.Basic]:
    """mass.<c>, f_limit (Matrix: the directions' coordinates, then the coordinate on u), f_limit.<dir>,
    f_limit.perp, attention_map and (trained query) J_limit, all averaged over the sign, t substituted."""
    lims = [limit_at(model, geo, eps) for eps in geo.signs]
    out: dict[str, sp.Basic] = {}
    for i, c in enumerate(model.components):
        out[f"mass.{c.name}"] = geo.reduce(sign_average(lim.masses[i] for lim in lims))
    f = [geo.reduce(sign_average(lim.f_e[i] for lim in lims)) for i in range(model.k)]
    f_perp = geo.reduce(geo.t * sign_average(lim.f_u for lim in lims))
    for name, v in zip(model.directions, f):
        out[f"f_limit.{name}"] = v
    out["f_limit.perp"] = f_perp
    out["f_limit"] = sp.ImmutableMatrix([*f, f_perp])
    out["attention_map"] = out["f_limit"]
    if model.attention.query == "q":
        out["J_limit"] = geo.reduce(sign_average(lim.J for lim in lims))
    return out
