r"""The bridge from a model file to the numerics: the numeric model (a MixtureSpec) at given parameter values,
built from the file's statement (its components, score and value), never from the derived side.

Conventions (docs/models.md, attnverify.numerics.engine.spec):

* the directions e_1..e_k are the first k axes of R^d; a Gaussian component's covariance is
  diag(s_1..s_k) + r P_rest (variances), so the numerics' standard deviations are sqrt(s_j) and sqrt(r);
* the theory's score is <a, key> with the score vector a = c B u (u the query, B = ``key_query``, a Block: a k x k
  block on the directions and a scalar on the complement).  The numerics score a trained query as
  (beta / tau) <q, A x> = <(beta / tau) A^T q, x>, so A = B^T, beta = |c|, tau = 1; a token query as
  (beta / tau) <A y, x> (y the query token), so A = B.  A negative c is carried by A (A -> -A, beta = |c|);
* the value V x: V = the value Block;
* counts, means, covariances, radii: the file's expressions evaluated exactly at the values, then as floats.

:func:`scaled_values` gives the model at another sequence length L' with the mixture's fractions kept: every integer
parameter that a count depends on is multiplied by L'/L and rounded (the checks grow L this way).
"""
from __future__ import annotations

import math
from collections.abc import Mapping

import sympy as sp

from attnverify.numerics.engine import Attention, Component, MixtureSpec
from attnverify.theory.engine.attention_spec import Block
from attnverify.theory.engine.derive import model_values
from attnverify.theory.engine.model_file import Model


def _float(expr, sub) -> float:
    return float(sp.sympify(expr).subs(sub))


def _block(B: Block, sub, sign: float = 1.0, transpose: bool = False) -> tuple[list[list[float]], float]:
    M = B.matrix.T if transpose else B.matrix
    return ([[sign * _float(M[i, j], sub) for j in range(M.cols)] for i in range(M.rows)],
            sign * _float(B.rest, sub))


def mixture_spec(model: Model, values: Mapping) -> MixtureSpec:
    """The numeric model of ``model`` at the parameter ``values`` (name -> number; validated, defaults filled in).
    ValueError (one line) for inadmissible values or a score scale of 0 at them."""
    vals = model_values(model, values)
    sub = {p.symbol: vals[p.name] for p in model.parameters}
    comps = []
    for c in model.components:
        n = int(c.count.subs(sub))
        mean = [_float(m, sub) for m in c.mean]
        rad = c.sign == "rademacher"
        if c.law == "sphere":
            comps.append(Component(c.name, n, mean=mean, law="sphere", radius=_float(c.radius, sub), rademacher=rad))
        else:
            comps.append(Component(c.name, n, mean=mean, sd=[math.sqrt(_float(v, sub)) for v in c.cov],
                                   sd_perp=math.sqrt(_float(c.cov_rest, sub)), rademacher=rad))
    att = model.attention
    scale = _float(att.scale, sub)
    if scale == 0:
        raise ValueError(f"{model.id}: the score's scale {att.scale} is 0 at these values: no attention to simulate")
    trained = att.query == "q"
    A, a_perp = _block(att.key_query, sub, math.copysign(1.0, scale), transpose=trained)
    V, v_perp = _block(att.value, sub)
    return MixtureSpec(d=int(vals["d"]), directions=model.directions, components=tuple(comps),
                       attention=Attention(beta=abs(scale), A=A, V=V, a_perp=a_perp, v_perp=v_perp, tau=1.0,
                                           query="trained" if trained else "token"))


def size_parameters(model: Model) -> tuple[str, ...]:
    """The integer parameters a count depends on (``L`` among them): those scaled with the sequence length."""
    used = set().union(*(c.count.free_symbols for c in model.components))
    return tuple(p.name for p in model.parameters if p.integer and p.name != "d" and p.symbol in used)


def scaled_values(model: Model, values: Mapping, L: int) -> dict:
    """``values`` (validated, defaults filled in) with every size parameter multiplied by L / values["L"] and rounded,
    and L itself = ``L``: the same mixture fractions at the sequence length L. ValueError when a count is then not
    an integer >= 1."""
    vals = model_values(model, values)
    factor = sp.Rational(int(L), int(vals["L"]))
    out = dict(vals)
    for name in size_parameters(model):
        scaled = sp.Integer(max(1, int(sp.floor(vals[name] * factor + sp.Rational(1, 2)))))
        out[name] = sp.Integer(int(L)) if name == "L" else scaled
    try:
        return model_values(model, out)
    except ValueError as exc:
        raise ValueError(f"{exc} (at the sequence length L = {L}, every count scaled by {float(factor):.4g})") from None
