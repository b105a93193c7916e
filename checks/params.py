"""Parameters of checks and models: their kinds, defaults and admissible ranges, parsed and validated before any
work; and :class:`InputError`, the one exception for bad input (one line, naming the problem)."""
from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from attnverify.checks.values import matrix_entries, rounded


#: an echoed value longer than this is shown abbreviated in an error line (:func:`abbreviated`)
LONG_VALUE = 80
_RUN = re.compile(r"[^\s'\"]{%d,}" % (LONG_VALUE + 1))
_PATH_MAX = 4096


def _kept(text: str) -> bool:
    """Whether ``text`` stays whole in an error line: short, or a file's path (shown in full, to be found: any
    value with a path separator up to _PATH_MAX characters, spaces and brackets included)."""
    return len(text) <= LONG_VALUE or (len(text) <= _PATH_MAX and ("/" in text or "\\" in text)
                                       and "\n" not in text)


def _quoted_spans(text: str) -> list[tuple[int, int]]:
    """The (start, end) of each quoted value of ``text``: a quote not after a letter or digit (an apostrophe, as in
    "paper's", opens none) up to the next same quote not before one, on the same line; found in linear time."""
    word = [c.isalnum() or c == "_" for c in text]
    closer: dict[str, list[int]] = {}
    for q in ("'", '"'):                     # the next closing quote q (or a newline, -1) at or after each index
        nxt, out = -1, [-1] * (len(text) + 1)
        for i in range(len(text) - 1, -1, -1):
            if text[i] == "\n":
                nxt = -1
            elif text[i] == q and not (i + 1 < len(text) and word[i + 1]):
                nxt = i
            out[i] = nxt
        closer[q] = out
    spans, i = [], 0
    while i < len(text):
        c = text[i]
        if c in "'\"" and not (i > 0 and word[i - 1]) and (end := closer[c][i + 1]) != -1:
            spans.append((i, end))
            i = end + 1
        else:
            i += 1
    return spans


def abbreviated(message: str) -> str:
    """``message`` with every echoed value longer than LONG_VALUE characters (a quoted string, or a run without
    spaces such as a 400-digit number) shown abbreviated: its start, an ellipsis and its length, so that an error
    stays one readable line; the rest of the line (which names the field) is kept. Paths stay whole."""
    if len(message) <= LONG_VALUE:
        return message
    parts, last = [], 0
    for start, end in _quoted_spans(message):
        inner = message[start + 1:end]
        if not _kept(inner):
            q = message[start]
            parts += [message[last:start], f"{q}{inner[:LONG_VALUE // 2]}...{q} ({len(inner)} characters)"]
            last = end + 1
    message = "".join(parts) + message[last:]
    return _RUN.sub(lambda m: m.group(0) if _kept(m.group(0)) else
                    f"{m.group(0)[:LONG_VALUE // 2]}... ({len(m.group(0))} characters)", message)


class InputError(ValueError):
    """Bad input from the user: an unknown id, profile or key, or an invalid parameter value. Its message is one
    line; a long value echoed in it is abbreviated (:func:`abbreviated`)."""

    def __init__(self, message: Any = "", *args: Any) -> None:
        super().__init__(abbreviated(str(message)), *args)


def did_you_mean(name: str, known: Sequence[str]) -> str:
    """`` (did you mean X?)`` for the closest of ``known`` to a mistyped ``name`` (difflib), else ``""``."""
    import difflib

    close = difflib.get_close_matches(name, list(known), n=2, cutoff=0.6)
    return f" (did you mean {' or '.join(close)}?)" if close else ""


PROFILES = ("quick", "paper")
#: the largest integer a symbol's value may be (attnverify.checks.domain): beyond it a double rounds integers
MAX_EXACT_INT = 2 ** 53
KINDS = (float, int, str, bool, "floats", "ints", "matrix")


@dataclass(frozen=True)
class Param:
    """A model option or parameter of a check, with its type, default and admissible range.

    ``kind`` is ``float``, ``int``, ``str``, ``bool``, ``"floats"``/``"ints"`` (tuples) or
    ``"matrix"`` (a 2-D float array, CLI form ``1,0;0,2``; entries may be rationals such as ``1/3``, parsed
    exactly and rounded once; :meth:`exact` gives them unrounded, as a SymPy Matrix). Bounds are inclusive unless
    ``low_open``/``high_open``; floats must be finite.
    """

    name: str
    kind: Any
    default: Any
    help: str
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    choices: tuple | None = None
    #: the settings the scale rule holds a value to, when not this default and the paper profile's (a model file's
    #: [checks] table moves the default and keeps the template's settings here)
    scale_reference: tuple | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise TypeError(f"parameter {self.name!r}: unknown kind {self.kind!r}")

    # -- parsing and validation --------------------------------------------------------------
    def parse(self, text: str) -> Any:
        """Parse the command-line text of a value (``--set name=text``) and validate it."""
        try:
            if self.kind is bool:
                low = text.strip().lower()
                if low not in ("true", "false", "1", "0", "yes", "no"):
                    raise ValueError
                value: Any = low in ("true", "1", "yes")
            elif self.kind is int:
                value = int(text)
            elif self.kind is float:
                value = float(text)
            elif self.kind == "floats":
                value = tuple(float(s) for s in text.split(","))
            elif self.kind == "ints":
                value = tuple(int(s) for s in text.split(","))
            elif self.kind == "matrix":
                value = np.array([[rounded(x) for x in row] for row in self._rows(text)], dtype=float)
            else:
                value = text
        except InputError:
            raise
        except ValueError:
            raise InputError(f"{self.name}: expected {self.kind_name()}, got {text!r}") from None
        return self.validate(value)

    def read(self, raw: Any) -> Any:
        """A value given by the user: command-line text is parsed, anything else validated."""
        return self.parse(raw) if isinstance(raw, str) and self.kind is not str else self.validate(raw)

    def _rows(self, text: str) -> list[list]:
        rows = matrix_entries(text)
        if len({len(r) for r in rows}) != 1:
            raise InputError(f"{self.name}: matrix rows have different lengths in {text!r}")
        return rows

    def exact(self, text: str):
        """The value of ``--set name=text`` without rounding, for symbolic work: a matrix as a SymPy Matrix of
        Rationals (``1,0;0,1/3`` keeps 1/3), a number as a SymPy Rational; validated as :meth:`parse` validates
        the float value. InputError for what :meth:`parse` refuses or what has no exact value."""
        import sympy as sp

        self.parse(text)                                 # the same rules (and messages) as the float value
        try:
            if self.kind == "matrix":
                return sp.Matrix([[sp.Rational(x.numerator, x.denominator) for x in row]
                                  for row in self._rows(text)])
            if self.kind in (float, int):
                f = Fraction(text.strip())
                return sp.Rational(f.numerator, f.denominator)
        except (AttributeError, ValueError, TypeError):
            pass
        raise InputError(f"{self.name}: no exact value for {text!r}")

    def kind_name(self) -> str:
        names = {float: "a number", int: "an integer", str: "a string", bool: "true or false",
                 "floats": "comma-separated numbers", "ints": "comma-separated integers",
                 "matrix": "a matrix like 1,0;0,1"}
        return names[self.kind]

    def validate(self, value: Any) -> Any:
        """Return ``value`` converted to this parameter's kind, or raise :class:`InputError` (a number beyond double
        precision, such as a 400-digit integer, among the refusals)."""
        try:
            return self._validated(value)
        except OverflowError:
            raise InputError(f"{self.name}: {shown(value)} is beyond double precision") from None

    def _validated(self, value: Any) -> Any:
        value = self._coerce(value)
        if self.choices is not None and value not in self.choices:
            raise InputError(f"{self.name}: {shown(value)} is not one of {', '.join(map(str, self.choices))}")
        for x in self._numbers(value):
            if not math.isfinite(x):
                raise InputError(f"{self.name}: must be finite, got {x}")
            if self.low is not None and (x < self.low or (self.low_open and x == self.low)):
                raise InputError(f"{self.name}: must be {'>' if self.low_open else '>='} {self.low}, got {x}")
            if self.high is not None and (x > self.high or (self.high_open and x == self.high)):
                raise InputError(f"{self.name}: must be {'<' if self.high_open else '<='} {self.high}, got {x}")
        return value

    def _coerce(self, value: Any) -> Any:
        bad = InputError(f"{self.name}: expected {self.kind_name()}, got {shown(value)}")
        if self.kind is bool:
            if not isinstance(value, (bool, np.bool_)):
                raise bad
            return bool(value)
        if self.kind is int:
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
                raise bad
            return int(value)
        if self.kind is float:
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
                raise bad
            return float(value)
        if self.kind is str:
            if not isinstance(value, str):
                raise bad
            return value
        if self.kind in ("floats", "ints"):
            item = Param(self.name, float if self.kind == "floats" else int, None, self.help)
            if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, np.ndarray)):
                value = (value,)
            out = tuple(item._coerce(v) for v in value)
            if not out:
                raise InputError(f"{self.name}: needs at least one value")
            return out
        try:
            arr = np.array(value, dtype=float)
        except (TypeError, ValueError):
            raise bad from None
        if arr.ndim != 2 or arr.size == 0:
            raise InputError(f"{self.name}: expected a non-empty 2-D matrix, got shape {arr.shape}")
        return arr

    def _numbers(self, value: Any) -> list[float]:
        if self.kind in (float, int):
            return [float(value)]
        if self.kind in ("floats", "ints"):
            return [float(v) for v in value]
        if self.kind == "matrix":
            return [float(v) for v in np.ravel(value)]
        return []


def shown(value: Any) -> str:
    """``repr(value)`` for an error line; an integer of more than 40 digits as its first digits and its number of
    digits (Python writes none of over 4300 digits)."""
    n = abs(int(value)) if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)) else 0
    if n >= 10 ** 40:
        digits = max(1, int(n.bit_length() * math.log10(2)))
        while 10 ** digits <= n:
            digits += 1
        return f"{'-' if value < 0 else ''}{n // 10 ** (digits - 20)}... ({digits} digits)"
    try:
        return repr(value)
    except ValueError:
        return f"a {type(value).__name__} too long to show"


def number_problem(value: Any, field: str = "") -> tuple[str, str] | None:
    """The first number in ``value`` (a parsed TOML value: its tables and arrays searched) that is not a finite
    double, as (its dotted field below ``field``, why: beyond double precision, or not finite), or None. A decimal
    that keeps its digits (``text``) and underflows to 0.0 is beyond double precision too."""
    if isinstance(value, Mapping):
        items = [(f"{field}.{k}" if field else str(k), v) for k, v in value.items()]
    elif isinstance(value, (list, tuple)):
        items = [(f"{field}[{i}]", v) for i, v in enumerate(value)]
    elif isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_)):
        try:
            if not math.isfinite(value):
                return field, f"must be finite, got {value}"
        except OverflowError:
            return field, f"{shown(value)} is beyond double precision"
        text = getattr(value, "text", "")        # a decimal as written (a claims file's): 1e-400 reads as 0.0
        if value == 0 and re.search(r"[1-9]", text.lower().split("e")[0]):
            return field, f"{text[:40]} is beyond double precision (the numerics would read it as 0.0)"
        return None
    else:
        return None
    return next((found for name, v in items if (found := number_problem(v, name)) is not None), None)


def validated(validate: Callable[[dict], None] | None, values: dict) -> dict:
    """``values`` after ``validate(values)`` (cross-parameter constraints) accepted them; its ValueError (or
    TypeError, ArithmeticError) becomes one-line :class:`InputError`."""
    if validate is not None:
        try:
            validate(values)
        except InputError:
            raise
        except (ValueError, TypeError, ArithmeticError) as exc:
            raise InputError(str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from None
    return values
