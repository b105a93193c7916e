r"""The model file (TOML) -> a validated, frozen :class:`Model`, before any derivation.

The file states a softmax-attention model (docs/models.md documents every field):

* ``[model]``: ``id``, ``directions`` (k >= 1 named orthonormal unit vectors e_1..e_k), optional ``title``,
  ``citation``;
* ``[parameters]``: every symbol with its default and domain (:mod:`.parameters`); ``L`` (the sequence length, an
  integer) is required, ``d`` (the ambient dimension) is optional;
* ``[[tokens]]``: the mixture's components: ``count`` tokens per sequence, ``mean`` a linear combination of the
  directions, ``cov`` a covariance diagonal in the directions' basis and isotropic on their orthogonal complement,
  ``law`` Gaussian or uniform on a sphere, an optional Rademacher ``sign`` per sequence;
* ``[attention]``: the query (a trained unit vector ``q`` or a token ``x``), a bilinear ``score`` and a linear
  ``value``, with matrices in the directions' basis plus a scalar on the complement (:mod:`.attention_spec`);
* ``[objective]`` and ``[protocol]`` (optional);
* ``[checks.<name>]`` (optional): a generated check's settings over its defaults (model parameters and the
  check's own options, e.g. the signal strength at which SGA runs); their shape is checked here, their names and
  values by the check (attnverify.checks.engine).

Every check happens here, each failure a ValueError (:class:`ModelError`) of one line naming the file and field.
"""
from __future__ import annotations

import hashlib
import json
import keyword
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sympy as sp

from attnverify.theory.engine.attention_spec import Attention, parse_attention
from attnverify.theory.engine.expressions import ModelError, check_keys, did_you_mean, linear_coefficients, parse
from attnverify.theory.engine.model_guards import (certified_sign, refuse_huge_powers, sign_counterexample,
                                                   value_problem)
from attnverify.theory.engine.parameters import (Parameter, Protocol, dimension_parameter, parse_parameter,
                                                  parse_protocol)

ENGINE_VERSION = "1"          # enters the content hash: a change of the derivation invalidates caches
_TOP_KEYS = ("model", "parameters", "tokens", "attention", "objective", "protocol", "checks")
_MODEL_KEYS = ("id", "directions", "title", "citation")
_TOKEN_KEYS = ("name", "count", "mean", "cov", "sign", "law", "radius")
_LAWS = ("gaussian", "sphere")
_SIGNS = ("fixed", "rademacher")
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")
#: the longest name a model file may give (its id, a direction, a parameter, a component): every step of a
#: derivation prints them
MAX_NAME = 64
_RESERVED = {"q", "x", "y", "exp", "log", "sqrt", "pi", "E", "I", "oo", "rest"}


@dataclass(frozen=True)
class Component:
    """One mixture component: ``count`` tokens per sequence, law N(mean, cov) or uniform on the sphere of radius
    ``radius`` centred at 0.  ``mean``: its coordinates on the directions; ``cov``: its variances along the
    directions; ``cov_rest``: the variance along every direction of the orthogonal complement.  ``sign``:
    "rademacher" multiplies the mean by the sequence's random sign eps (one eps per sequence, shared by every
    such component); "fixed" otherwise."""

    name: str
    count: sp.Expr
    mean: tuple[sp.Expr, ...]
    cov: tuple[sp.Expr, ...]
    cov_rest: sp.Expr
    sign: str = "fixed"
    law: str = "gaussian"
    radius: sp.Expr | None = None


@dataclass(frozen=True)
class Model:
    """A validated model.  ``digest``: a stable SHA-256 of the file's content (and the engine version), the key
    of every cache.  ``parameters`` includes ``d`` and ``L``."""

    id: str
    directions: tuple[str, ...]
    parameters: tuple[Parameter, ...]
    components: tuple[Component, ...]
    attention: Attention
    objective: str | None
    protocol: Protocol | None
    title: str = ""
    citation: str = ""
    source: str = field(default="<model>", compare=False)
    digest: str = ""
    check_settings: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...] = ()

    def settings_for(self, check: str) -> dict[str, Any]:
        """The file's ``[checks.<check>]`` settings (name -> TOML value; arrays as tuples), empty when none."""
        return dict(dict(self.check_settings).get(check, ()))

    @property
    def k(self) -> int:
        return len(self.directions)

    @property
    def params(self) -> dict[str, Parameter]:
        return {p.name: p for p in self.parameters}

    def symbol(self, name: str) -> sp.Symbol:
        return self.params[name].symbol

    @property
    def defaults(self) -> dict[str, sp.Rational]:
        return {p.name: p.default for p in self.parameters}

    @property
    def has_sign(self) -> bool:
        return any(c.sign == "rademacher" for c in self.components)


def load_model(source, *, name: str | None = None) -> Model:
    """A :class:`Model` from a TOML file (a path) or an already parsed mapping (``name`` is the file name used in
    errors; default "<model>").  Every error: ValueError, one line, before any derivation."""
    if isinstance(source, Mapping):
        return _build(source, name or "<model>")
    path = Path(source)
    label = name or path.name
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ModelError(label, "", f"cannot read the file ({type(exc).__name__})") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ModelError(label, "", f"not valid TOML: {str(exc).splitlines()[0]}") from None
    return _build(data, label)


def content_digest(data: Mapping) -> str:
    """SHA-256 of the canonical JSON of the file's content (sorted keys) and the engine version."""
    blob = json.dumps({"engine": ENGINE_VERSION, "model": data}, sort_keys=True, default=repr)
    return hashlib.sha256(blob.encode()).hexdigest()


def _identifier(value, source: str, field_: str, what: str) -> str:
    if isinstance(value, str) and len(value) > MAX_NAME:
        raise ModelError(source, field_, f"{what} name {value[:20]!r}... has {len(value)} characters: a name has at "
                         f"most {MAX_NAME}")
    if not isinstance(value, str) or not _NAME.match(value):
        raise ModelError(source, field_, f"{what} {value!r} must be a name (a letter, then letters, digits, _)")
    if value in _RESERVED or value.startswith(("rho_", "x_")):
        raise ModelError(source, field_, f"{what} {value!r} is reserved (q, x, y, rest, function names, rho_*, x_*)")
    if keyword.iskeyword(value):
        raise ModelError(source, field_, f"{what} {value!r} is a Python keyword, which no expression can name: choose "
                         "another name")
    return value


def _build(data: Mapping, source: str) -> Model:
    check_keys(data, _TOP_KEYS, source, "", required=("model", "parameters", "tokens", "attention"))
    head = data["model"]
    check_keys(head, _MODEL_KEYS, source, "model", required=("id", "directions"))
    mid = head["id"]
    if isinstance(mid, str) and len(mid) > MAX_NAME:
        raise ModelError(source, "model.id", f"{mid[:20]!r}... has {len(mid)} characters: an id has at most "
                         f"{MAX_NAME}")
    if not isinstance(mid, str) or not re.fullmatch(r"[a-z][a-z0-9_]*", mid):
        raise ModelError(source, "model.id", f"{mid!r} must be lower case letters, digits and _ (starting with a "
                         "letter)")
    for key in ("title", "citation"):
        if key in head and not isinstance(head[key], str):
            raise ModelError(source, f"model.{key}", "expected a string")
    dirs = head["directions"]
    if not isinstance(dirs, list) or not dirs:
        raise ModelError(source, "model.directions", "expected a non-empty list of names")
    directions = tuple(_identifier(v, source, f"model.directions[{i}]", "direction") for i, v in enumerate(dirs))
    if len(set(directions)) < len(directions):
        dup = next(v for v in directions if directions.count(v) > 1)
        raise ModelError(source, "model.directions", f"duplicate name {dup!r}")
    if "d" in directions:
        raise ModelError(source, "model.directions", "'d' is the ambient dimension, not a direction name")
    parameters = _parameters(data["parameters"], directions, source)
    names = {p.name: p.symbol for p in parameters}
    refuse_huge_powers(data, {p.name: p.default for p in parameters}, source)
    components = _components(data["tokens"], directions, parameters, source)
    attention = _attention(data["attention"], directions, names, source)
    objective = _objective(data.get("objective"), attention, source)
    protocol = None
    if "protocol" in data:
        if attention.query != "q":
            raise ModelError(source, "protocol", "a training protocol needs a trained query (query = \"q\")")
        protocol = _protocol(data["protocol"], directions, source)
    model = Model(mid, directions, parameters, components, attention, objective, protocol, head.get("title", ""),
                  head.get("citation", ""), source, content_digest(data), _check_settings(data.get("checks", {}),
                                                                                          source))
    _check_laws(model, source)
    _check_real(model, source)
    return model


def _attention(spec, directions, names, source) -> Attention:
    """The parsed ``[attention]`` table (:func:`.parse_attention`); an error about the score quotes the user's own
    text (the parser reads the score with its bracket replaced by a placeholder)."""
    try:
        return parse_attention(spec, directions, names, source)
    except ModelError as exc:
        score = spec.get("score") if isinstance(spec, Mapping) else None
        if exc.field != "attention.score" or not isinstance(score, str) or "__bracket__" not in exc.message:
            raise
        inner = re.sub(r"<([^<>]*)>", " __bracket__ ", score)
        message = exc.message.replace(repr(inner), repr(score)).replace("__bracket__", "<...>")
        raise ModelError(source, exc.field, message) from None


def _protocol(spec, directions, source) -> Protocol:
    """The parsed ``[protocol]`` (:func:`.parse_protocol`); a start on the unit sphere of the directions (sum of
    squared overlaps 1) is refused too: the reduced flow starts strictly inside the ball."""
    protocol = parse_protocol(spec, directions, source)
    if protocol.start is not None and sum(v * v for _, v in protocol.start) >= 1:
        raise ModelError(source, "protocol.start", "the overlaps of the starting query must have sum of squares < 1 "
                         "(strictly inside the unit ball: the query needs a part orthogonal to the directions)")
    return protocol


def _check_settings(table, source: str) -> tuple[tuple[str, tuple[tuple[str, Any], ...]], ...]:
    """The ``[checks.<name>]`` tables in their shape: names, and values that are numbers, booleans, strings or
    (nested) arrays of numbers, arrays kept as tuples.  Which names a model's checks have, and which values they
    admit, is decided when the checks are generated (attnverify.checks.engine.add_model), before any work."""
    if not isinstance(table, Mapping):
        raise ModelError(source, "checks", f"expected a table of [checks.<name>] tables, got {type(table).__name__}")
    out = []
    for name, settings in table.items():
        if not isinstance(settings, Mapping):
            raise ModelError(source, f"checks.{name}", "expected a table of settings ([checks.<name>] with key = "
                             "value lines)")
        out.append((name, tuple((key, _setting(value, source, f"checks.{name}.{key}"))
                                for key, value in settings.items())))
    return tuple(out)


def _setting(value, source: str, field_: str):
    """One setting's TOML value: a number, boolean or string as it is, an array (of arrays) of numbers as a tuple."""
    if isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, list) and value and all(isinstance(v, list) for v in value):
        return tuple(_setting(v, source, field_) for v in value)
    if isinstance(value, list) and value and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                                 for v in value):
        return tuple(value)
    raise ModelError(source, field_, f"expected a number, true or false, a string or an array of numbers, got "
                     f"{value!r}")


def _check_real(model: Model, source: str) -> None:
    """Every expression of ``model`` is a real, finite number at the defaults (:func:`.value_problem`)."""
    problem = value_problem(model, {p.symbol: p.default for p in model.parameters})
    if problem:
        raise ModelError(source, problem[0], f"{problem[1]} at the defaults (every expression of a model must be a "
                         "real, finite number)")


def _parameters(table, directions: tuple[str, ...], source: str) -> tuple[Parameter, ...]:
    if not isinstance(table, Mapping):
        raise ModelError(source, "parameters", "expected a table")
    out = []
    for name, spec in table.items():
        _identifier(name, source, f"parameters.{name if len(name) <= MAX_NAME else name[:20] + '...'}", "parameter")
        if name in directions:
            raise ModelError(source, f"parameters.{name}", f"duplicate name {name!r}: already a direction")
        out.append(parse_parameter(name, spec, source))
    by = {p.name: p for p in out}
    if "L" not in by:
        raise ModelError(source, "parameters.L", "missing: the sequence length L is required")
    if not by["L"].integer:
        raise ModelError(source, "parameters.L", "the sequence length L must be declared integer = true")
    d = dimension_parameter(by.pop("d", None), len(directions), source)
    return tuple([*by.values(), d])


def _components(tokens, directions, parameters, source) -> tuple[Component, ...]:
    if not isinstance(tokens, list) or not tokens:
        raise ModelError(source, "tokens", "expected at least one [[tokens]] table")
    params = {p.name: p.symbol for p in parameters}
    dir_syms = [sp.Dummy(n) for n in directions]
    with_dirs = {**params, **dict(zip(directions, dir_syms))}
    defaults = {p.symbol: p.default for p in parameters}
    out, seen = [], set()
    for i, t in enumerate(tokens):
        f = f"tokens[{i}]"
        check_keys(t, _TOKEN_KEYS, source, f, required=("name", "count"))
        name = _identifier(t["name"], source, f"{f}.name", "component")
        if name in seen:
            raise ModelError(source, f"{f}.name", f"duplicate name {name!r}")
        if name in directions or name in params:
            raise ModelError(source, f"{f}.name", f"duplicate name {name!r}: already a "
                             f"{'direction' if name in directions else 'parameter'} (names must be distinct)")
        seen.add(name)
        count = parse(t["count"], params, (source, f"{f}.count"))
        n0 = count.subs(defaults)
        if not (n0.is_Integer and n0 >= 1):
            raise ModelError(source, f"{f}.count", f"{t['count']!r} = {n0} at the defaults: a count must be an "
                             "integer >= 1")
        law = t.get("law", "gaussian")
        if law not in _LAWS:
            raise ModelError(source, f"{f}.law", f"unknown law {law!r}{did_you_mean(str(law), _LAWS)} (allowed: "
                             f"{', '.join(_LAWS)})")
        sign = t.get("sign", "fixed")
        if sign not in _SIGNS:
            raise ModelError(source, f"{f}.sign", f"unknown sign {sign!r}{did_you_mean(str(sign), _SIGNS)} "
                             f"(allowed: {', '.join(_SIGNS)})")
        mean_text = t.get("mean", "0")
        mean_expr = parse(mean_text, with_dirs, (source, f"{f}.mean"))
        coeffs = linear_coefficients(mean_expr, dir_syms)
        if coeffs is None:
            raise ModelError(source, f"{f}.mean", f"{mean_text!r} is not linear in the directions "
                             f"{', '.join(directions)}")
        mean = tuple(coeffs)
        if law == "sphere":
            out.append(_sphere(t, f, name, count, mean, sign, params, source))
            continue
        if "radius" in t:
            raise ModelError(source, f"{f}.radius", "a radius belongs to law = \"sphere\" only")
        if "cov" not in t:
            raise ModelError(source, f"{f}.cov", "missing (required for a Gaussian component)")
        cov, rest = _covariance(t["cov"], directions, params, parameters, source, f"{f}.cov")
        if sign == "rademacher" and all(m == 0 for m in mean):
            raise ModelError(source, f"{f}.sign", "a random sign needs a nonzero mean")
        out.append(Component(name, count, mean, cov, rest, sign, law))
    L = params["L"]
    total = sp.expand(sum(c.count for c in out) - L)
    if total != 0:
        raise ModelError(source, "tokens", f"the counts add up to {sp.expand(total + L)}, not to L (their sum "
                         f"minus L is {total}, not 0)")
    return tuple(out)


def _sphere(t, f, name, count, mean, sign, params, source) -> Component:
    if any(m != 0 for m in mean):
        raise ModelError(source, f"{f}.mean", "the sphere law is centred at 0: mean must be 0")
    if "cov" in t:
        raise ModelError(source, f"{f}.cov", "the sphere law has covariance (radius^2/d) I: give no cov")
    if sign != "fixed":
        raise ModelError(source, f"{f}.sign", "a random sign needs a nonzero mean (the sphere law is centred)")
    if "radius" not in t:
        raise ModelError(source, f"{f}.radius", "missing (required for law = \"sphere\")")
    radius = parse(t["radius"], params, (source, f"{f}.radius"))
    return Component(name, count, mean, tuple(sp.Integer(0) for _ in mean), sp.Integer(0), sign, "sphere", radius)


def _covariance(spec, directions, params, parameters, source, f) -> tuple[tuple[sp.Expr, ...], sp.Expr]:
    """(variances along the directions, variance on the complement); each proven positive (see
    :func:`_check_positive`)."""
    if isinstance(spec, Mapping):
        check_keys(spec, (*directions, "rest"), source, f, required=("rest",))
        rest = parse(spec["rest"], params, (source, f"{f}.rest"))
        cov = tuple(parse(spec[n], params, (source, f"{f}.{n}")) if n in spec else rest for n in directions)
        fields = [f"{f}.{n}" if n in spec else f"{f}.rest" for n in directions]
    else:
        rest = parse(spec, params, (source, f))
        cov, fields = tuple(rest for _ in directions), [f] * len(directions)
    for expr, fld in zip((*cov, rest), (*fields, f"{f}.rest" if isinstance(spec, Mapping) else f)):
        _check_positive(expr, parameters, source, fld, "covariance not positive definite")
    return cov, rest


def _check_positive(expr: sp.Expr, parameters, source: str, fld: str, what: str) -> None:
    """``expr`` > 0 at the defaults; over the rest of the domain it is proven by SymPy's sign assumptions after the
    shift p = lo + p' (p' >= 0 or > 0) of each bounded parameter or searched for a counterexample once the model is
    built (:func:`_check_laws`)."""
    v0 = expr.subs({p.symbol: p.default for p in parameters})
    positive = v0.is_positive
    if positive is None:                      # SymPy's rules undecided: the value's Arb ball decides
        positive = certified_sign(v0)
    if positive is None:
        raise ModelError(source, fld, f"{what}: {expr} cannot be shown > 0 at the defaults (its sign is decided "
                         "neither by SymPy's rules nor by ball arithmetic at 8192 bits)")
    if not positive:
        raise ModelError(source, fld, f"{what}: {expr} = {v0} at the defaults (must be > 0)")


def _proven_positive(expr: sp.Expr, parameters) -> bool:
    shift = {}
    for p in parameters:
        if p.lo is not None and p.symbol in expr.free_symbols:
            shift[p.symbol] = p.lo + (sp.Dummy(p.name, positive=True) if p.strict else sp.Dummy(p.name, nonnegative=True))
    return bool(sp.sympify(expr.subs(shift)).is_positive)


def _objective(spec, attention: Attention, source: str) -> str | None:
    if spec is None:
        return "energy" if attention.query == "q" else None
    check_keys(spec, ("kind",), source, "objective", required=("kind",))
    kind = spec["kind"]
    allowed = ("energy",) if attention.query == "q" else ("pushforward",)
    if kind not in allowed:
        raise ModelError(source, "objective.kind", f"{kind!r} is not available for query = "
                         f"{attention.query!r}{did_you_mean(str(kind), allowed)} (allowed: {', '.join(allowed)})")
    return kind


def _check_laws(model: Model, source: str) -> None:
    """Every variance and radius positive over the whole domain: at the defaults, then proven by SymPy's sign rules
    after shifting each bounded parameter to its lower end, or else searched for a counterexample at the parameters'
    probe values (attnverify.theory.engine.model_guards.sign_counterexample: ends, just inside open ends, far out on
    unbounded sides, corners; only at admissible models, every count an integer >= 1; ``sigma^2 - 1/4`` with
    0 < sigma is negative at sigma = 10^-6)."""
    for i, c in enumerate(model.components):
        if c.law == "sphere":
            entries = [(c.radius, f"tokens[{i}].radius", "radius not positive")]
        elif len(set((*c.cov, c.cov_rest))) == 1:
            entries = [(c.cov_rest, f"tokens[{i}].cov", "covariance not positive definite")]
        else:
            entries = [(v, f"tokens[{i}].cov.{d}", "covariance not positive definite")
                       for v, d in zip(c.cov, model.directions) if v != c.cov_rest]
            entries.append((c.cov_rest, f"tokens[{i}].cov.rest", "covariance not positive definite"))
        for expr, fld, what in entries:
            _check_positive(expr, model.parameters, source, fld, what)
            if _proven_positive(expr, model.parameters):
                continue
            found = sign_counterexample(model, expr)
            if found:
                at = ", ".join(f"{k} = {x}" for k, x in found[0].items())
                raise ModelError(source, fld, f"{what}: {expr} = {found[1]} at {at} (inside the domain)")
