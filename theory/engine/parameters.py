r"""The model file's ``[parameters]`` and ``[protocol]`` tables: every symbol with its default and its domain, and the
training protocol of the SGA checks.

A parameter ``p = { default = v, min = a, max = b, strict = true, strict_max = true, integer = true }`` has the
domain {p : a <= p <= b} (``strict``: a < p; ``strict_max``: p < b; ``integer``: p an integer).  Its SymPy symbol
carries what the domain implies (real; integer; positive when a > 0 or a = 0 strict; nonnegative when a = 0), so
that SymPy can decide signs over the whole domain.  Defaults are exact rationals (a decimal 0.1 is 1/10).
"""
from __future__ import annotations

import math
import sys
from collections.abc import Mapping
from dataclasses import dataclass

import sympy as sp

from attnverify.theory.engine.expressions import ModelError, check_keys

_PARAM_KEYS = ("default", "min", "max", "strict", "strict_max", "integer", "description")
_PROTOCOL_KEYS = ("a", "b", "steps", "runs", "start")


#: the largest integer a double holds exactly: an integer parameter's default, a protocol's count, at most this
MAX_EXACT_INT = 2 ** 53


def _digits(n: int) -> int:
    n, d = abs(n), max(1, int(abs(n).bit_length() * math.log10(2)))
    while 10 ** d <= n:
        d += 1
    return d


def exact_number(value, source: str, field: str) -> sp.Rational:
    """A TOML number as the exact rational it denotes (a float through its shortest decimal repr): finite, and within
    double precision (the checks compute with doubles: an integer of 400 digits is refused here, naming the field,
    not as 'inf' when a check runs)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ModelError(source, field, f"expected a number, got {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ModelError(source, field, f"expected a finite number, got {value!r}")
    if isinstance(value, int) and abs(value) > sys.float_info.max:
        raise ModelError(source, field, f"an integer of {_digits(value)} digits is beyond double precision")
    return sp.Integer(value) if isinstance(value, int) else sp.Rational(repr(value))


@dataclass(frozen=True)
class Parameter:
    """One parameter: its symbol, exact default and domain (``lo``/``hi`` None when unbounded)."""

    name: str
    symbol: sp.Symbol
    default: sp.Rational
    lo: sp.Rational | None = None
    hi: sp.Rational | None = None
    strict: bool = False
    strict_max: bool = False
    integer: bool = False
    description: str = ""

    def problem(self, value) -> str | None:
        """Why ``value`` is outside the domain (one phrase), or None when it is inside."""
        if isinstance(value, bool):
            return f"{self.name} = {value!r} is not a number"
        try:
            v = sp.Rational(repr(float(value))) if isinstance(value, float) else sp.nsimplify(value, rational=True)
        except (TypeError, ValueError, SyntaxError, sp.SympifyError):
            return f"{self.name} = {value!r} is not a number"
        if not v.is_Rational:
            return f"{self.name} = {value!r} is not a finite number"
        if self.integer and not v.is_Integer:
            return f"{self.name} = {value} is not an integer"
        if self.lo is not None and (v < self.lo or (self.strict and v == self.lo)):
            return f"{self.name} = {value} is not {'>' if self.strict else '>='} {self.lo}"
        if self.hi is not None and (v > self.hi or (self.strict_max and v == self.hi)):
            return f"{self.name} = {value} is not {'<' if self.strict_max else '<='} {self.hi}"
        return None

    @property
    def domain_text(self) -> str:
        lo = "" if self.lo is None else f"{self.lo} {'<' if self.strict else '<='} "
        hi = "" if self.hi is None else f" {'<' if self.strict_max else '<='} {self.hi}"
        return f"{lo}{self.name}{hi}" + (" (integer)" if self.integer else "")


def make_symbol(name: str, lo, strict: bool, integer: bool) -> sp.Symbol:
    """The parameter's symbol with the assumptions its domain implies."""
    kw: dict = {"real": True}
    if integer:
        kw["integer"] = True
    if lo is not None and (lo > 0 or (lo == 0 and strict)):
        kw["positive"] = True
    elif lo is not None and lo == 0:
        kw["nonnegative"] = True
    return sp.Symbol(name, **kw)


def parse_parameter(name: str, spec, source: str) -> Parameter:
    """One entry of ``[parameters]`` (validated: keys, types, default inside the domain)."""
    field = f"parameters.{name}"
    if isinstance(spec, (int, float)) and not isinstance(spec, bool):
        spec = {"default": spec}
    check_keys(spec, _PARAM_KEYS, source, field, required=("default",))
    for flag in ("strict", "strict_max", "integer"):
        if flag in spec and not isinstance(spec[flag], bool):
            raise ModelError(source, f"{field}.{flag}", f"expected true or false, got {spec[flag]!r}")
    if "description" in spec and not isinstance(spec["description"], str):
        raise ModelError(source, f"{field}.description", "expected a string")
    lo = exact_number(spec["min"], source, f"{field}.min") if "min" in spec else None
    hi = exact_number(spec["max"], source, f"{field}.max") if "max" in spec else None
    if lo is not None and hi is not None and lo > hi:
        raise ModelError(source, field, f"empty domain: min = {lo} > max = {hi}")
    strict, strict_max = bool(spec.get("strict", False)), bool(spec.get("strict_max", False))
    if strict and lo is None:
        raise ModelError(source, f"{field}.strict", "strict needs a min")
    if strict_max and hi is None:
        raise ModelError(source, f"{field}.strict_max", "strict_max needs a max")
    integer = bool(spec.get("integer", False))
    default = exact_number(spec["default"], source, f"{field}.default")
    if integer and abs(default) > MAX_EXACT_INT:
        raise ModelError(source, f"{field}.default", f"an integer of {_digits(int(default))} digits is beyond the "
                         "range of integers a double holds exactly (at most 2^53)")
    p = Parameter(name, make_symbol(name, lo, strict, integer), default, lo, hi, strict, strict_max, integer,
                  spec.get("description", ""))
    why = p.problem(default)
    if why:
        raise ModelError(source, f"{field}.default", f"outside the domain {p.domain_text}: {why}")
    return p


def dimension_parameter(given: Parameter | None, k: int, source: str) -> Parameter:
    """The ambient dimension ``d``: an integer >= k + 1 (room for the directions and the query's orthogonal part).
    Absent from the file: default k + 1.  Given: it must be declared an integer, with a default >= k + 1; its
    domain's lower end is raised to k + 1."""
    lo = sp.Integer(k + 1)
    if given is None:
        return Parameter("d", sp.Symbol("d", integer=True, positive=True), lo, lo, None, False, False, True,
                         "ambient dimension")
    if not given.integer:
        raise ModelError(source, "parameters.d", "the ambient dimension d must be declared integer = true")
    if given.default < lo:
        raise ModelError(source, "parameters.d.default", f"d = {given.default} leaves no room: d must be >= "
                         f"{lo} (the {k} direction(s) plus the orthogonal complement)")
    new_lo = lo if given.lo is None or given.lo < lo else given.lo
    return Parameter("d", sp.Symbol("d", integer=True, positive=True), given.default, new_lo, given.hi, False,
                     given.strict_max, True, given.description or "ambient dimension")


@dataclass(frozen=True)
class Protocol:
    """The SGA training protocol: step sizes eta_k = a / (k + b) for k = 0 .. steps - 1, ``runs`` independent runs,
    started at the overlaps ``start`` (direction -> overlap, the rest of the unit query orthogonal to every
    direction) or uniformly on the sphere (``start`` = None)."""

    a: float
    b: float
    steps: int
    runs: int
    start: tuple[tuple[str, float], ...] | None


def parse_protocol(spec, directions: tuple[str, ...], source: str) -> Protocol:
    check_keys(spec, _PROTOCOL_KEYS, source, "protocol", required=("a", "b", "steps", "runs"))
    a = float(exact_number(spec["a"], source, "protocol.a"))
    b = float(exact_number(spec["b"], source, "protocol.b"))
    if a <= 0 or b <= 0:
        raise ModelError(source, "protocol.a" if a <= 0 else "protocol.b", "must be > 0 (eta_k = a / (k + b))")
    ints = {}
    for key in ("steps", "runs"):
        v = spec[key]
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ModelError(source, f"protocol.{key}", f"expected an integer >= 1, got {v!r}")
        if v > MAX_EXACT_INT:
            raise ModelError(source, f"protocol.{key}", f"an integer of {_digits(v)} digits is beyond the range of "
                             "integers a double holds exactly (at most 2^53)")
        ints[key] = v
    start = spec.get("start", "random")
    if start == "random":
        return Protocol(a, b, ints["steps"], ints["runs"], None)
    if not isinstance(start, Mapping):
        raise ModelError(source, "protocol.start", f"expected \"random\" or a table of overlaps, got {start!r}")
    check_keys(start, directions, source, "protocol.start")
    over = tuple((k, float(exact_number(v, source, f"protocol.start.{k}"))) for k, v in start.items())
    if sum(v * v for _, v in over) > 1:
        raise ModelError(source, "protocol.start", "the overlaps of a unit query have sum of squares <= 1")
    return Protocol(a, b, ints["steps"], ints["runs"], over)
