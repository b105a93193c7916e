r"""A verdict's reason as data: words, mathematics, numbers with their uncertainty and references to checks, kept
apart so that each output typesets them (the renderers are in ``attnverify.render.reasons``; nothing here
typesets).

A :class:`Reason` is a lead sentence and a list of ``items`` (one per series, per beta, per tested point...), each
a sequence of parts. A long reason is split into items, and nothing is ever cut. The parts:

* :class:`Text` -- words, in the project's typesetting convention: plain words, with any mathematics inline
  between dollar signs in LaTeX (``"the drift at $\theta = 2$"``); ``\$`` is a literal dollar sign.
* :class:`Math` -- a SymPy expression (or, where SymPy cannot spell the notation, its LaTeX source as a ``str``).
  Symbols are named in **SymPy's convention**, which its LaTeX, MathML and Unicode printers all read: a Greek
  letter by its name, ``_`` before a subscript and ``^`` before a superscript (``Symbol("mu_t^beta")`` prints as
  :math:`\mu^{\beta}_{t}`, ``Symbol("C_1")`` as :math:`C_{1}`, ``Symbol("lambda_best")`` as
  :math:`\lambda_{best}`). A name SymPy cannot spell is written as LaTeX *with braces* (``Symbol(r"\Pi_{\#}\mu_{0}")``):
  SymPy's LaTeX printer passes a name with braces through unchanged, and the renderers translate it for the
  terminal and MathML through the notation module. Functions are ``Function("W_2")(mu, nu)``.
* :class:`Number` -- a value with its standard error (``se``) or the bracket ``interval`` = (lo, hi) that contains
  it, its significant ``digits`` and a ``unit``. The renderer decides the layout (``0.7462 ± 0.0039``,
  :math:`6.33\times10^{-7}`, ``[1.136, 1.538]``) and the digits: at least ``digits`` significant, as many as the
  standard error resolves, and more wherever two different numbers of the same reason would otherwise print alike
  (:func:`digits_for`) -- two printed numbers that read the same are never different numbers. A degenerate
  bracket (lo = hi) is a point, printed as one number, never as ``[a, a]``.
* :class:`CheckRef` -- a check id (a link in HTML).

Builders: :func:`reason` (parts from plain values: a ``str`` is Text, a float or int a Number, a SymPy object Math),
:func:`item`, :func:`listing` (values named once each), :func:`bracket` and :func:`pm`. A ``str`` is accepted
everywhere a Reason is (:func:`as_reason`: one Text part), so that evaluators not yet converted keep working;
``reason + "more words"`` gives a Reason, and ``str(reason)`` the text of the convention (the mathematics as
``$LaTeX$``), which every text renderer of the project reads.

JSON: :meth:`Reason.to_dict` keeps the parts, typed (an expression as its tree:
:mod:`attnverify.checks.reason_expr`), and :meth:`Reason.from_dict` restores them.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Union

__all__ = ["Text", "Math", "Number", "CheckRef", "Part", "Reason", "reason", "item", "as_reason", "listing",
           "bracket", "pm", "decimal", "se_decimal", "digits_for", "MAX_DIGITS"]

#: the most significant digits a float has (17 tell any two doubles apart)
MAX_DIGITS = 17


@dataclass(frozen=True)
class Text:
    """Words, in the typesetting convention (mathematics between dollars, in LaTeX)."""

    text: str

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise ValueError(f"Text: the text must be a str, got {type(self.text).__name__}")


@dataclass(frozen=True)
class Math:
    """A mathematical expression: a SymPy object (symbols in SymPy's naming convention, module docstring), or
    its LaTeX source as a ``str`` where SymPy cannot spell it."""

    expr: Any

    def __post_init__(self) -> None:
        if isinstance(self.expr, str):
            if not self.expr.strip():
                raise ValueError("Math: the LaTeX source is empty")
            return
        import sympy as sp

        if not isinstance(self.expr, sp.Basic):
            raise ValueError(f"Math: expr must be a SymPy object or LaTeX source, got {type(self.expr).__name__}")


@dataclass(frozen=True)
class Number:
    """A number with its standard error ``se`` or its bracket ``interval`` = (lo, hi), printed with at least
    ``digits`` significant digits, followed by ``unit``. ``value`` may be None for a bare bracket."""

    value: float | None
    se: float | None = None
    interval: tuple[float, float] | None = None
    digits: int = 4
    unit: str = ""

    def __post_init__(self) -> None:
        if self.value is None and self.interval is None:
            raise ValueError("Number: give a value, an interval, or both")
        if self.value is not None:
            object.__setattr__(self, "value", _real(self.value, "value"))
        if self.se is not None:
            se = _real(self.se, "se")
            if not se >= 0:
                raise ValueError(f"Number: se must be non-negative, got {se!r}")
            object.__setattr__(self, "se", se)
        if self.interval is not None:
            try:
                lo, hi = (_real(x, "interval") for x in self.interval)
            except TypeError:
                raise ValueError(f"Number: interval must be a pair (lo, hi), got {self.interval!r}") from None
            if lo > hi:
                raise ValueError(f"Number: interval ({lo!r}, {hi!r}) has lo > hi")
            object.__setattr__(self, "interval", (lo, hi))
        if not isinstance(self.digits, int) or not 1 <= self.digits <= MAX_DIGITS:
            raise ValueError(f"Number: digits must be an integer in 1..{MAX_DIGITS}, got {self.digits!r}")

    @property
    def is_point(self) -> bool:
        """A bracket that is a single point (lo = hi): printed as one number."""
        return self.interval is not None and self.interval[0] == self.interval[1]

    def values(self) -> list[float]:
        """The numbers that are printed at the number's own digits: the value and the bracket's ends."""
        out = [] if self.value is None else [self.value]
        if self.interval is not None:
            out += [self.interval[0]] if self.is_point else list(self.interval)
        return out


@dataclass(frozen=True)
class CheckRef:
    """A reference to a check by its id (``meanfield.w2_bound``)."""

    check_id: str


Part = Union[Text, Math, Number, CheckRef]
_PART_TYPES = (Text, Math, Number, CheckRef)


def _real(x: Any, name: str) -> float:
    if isinstance(x, bool):
        raise ValueError(f"Number: {name} must be a number, got a bool")
    try:
        return int(x) if isinstance(x, int) else float(x)
    except (TypeError, ValueError):
        raise ValueError(f"Number: {name} must be a number, got {x!r}") from None


# ----------------------------------------------------------------------------------------------------------------
# building parts from plain values
# ----------------------------------------------------------------------------------------------------------------
def _parts(values: Iterable[Any]) -> tuple:
    """Parts from plain values (str: Text, int/float: Number, SymPy: Math, a Part as it is, a sequence or a Reason's
    lead spliced in), adjacent Texts merged."""
    out: list = []
    for v in values:
        for p in _one(v):
            if isinstance(p, Text) and out and isinstance(out[-1], Text):
                out[-1] = Text(out[-1].text + p.text)
            elif not (isinstance(p, Text) and not p.text):
                out.append(p)
    return tuple(out)


def _one(v: Any) -> list:
    if isinstance(v, _PART_TYPES):
        return [v]
    if isinstance(v, str):
        return [Text(v)]
    if isinstance(v, Reason):
        return list(v.lead)
    if isinstance(v, bool) or v is None:
        return [Text(str(v))]
    if isinstance(v, (int, float)) or type(v).__module__ == "numpy" and hasattr(v, "item") and getattr(v, "ndim", 1) == 0:
        return [Number(v.item() if hasattr(v, "item") else v)]
    if isinstance(v, (list, tuple)):
        return [p for x in v for p in _one(x)]
    if type(v).__module__.startswith("sympy"):
        return [Math(v)]
    raise ValueError(f"a reason's part must be text, a number, a SymPy expression or a Part; got {type(v).__name__}")


def item(*parts: Any) -> tuple:
    """One item of a reason (a sequence of parts), from plain values as :func:`reason` takes them."""
    return _parts(parts)


def reason(*parts: Any, items: Iterable[Sequence[Any]] = ()) -> "Reason":
    """A Reason from plain values: ``reason("the measured ", Number(m, se), " is below the stated ", Number(s))``
    (a ``str`` is Text, an int or float a Number with 4 digits, a SymPy object Math); ``items`` each a sequence of
    such values."""
    return Reason(_parts(parts), tuple(item(*(it if isinstance(it, (list, tuple)) else (it,))) for it in items))


def listing(values: Iterable[float], *, digits: int = 4, sep: str = ", ", last: str | None = None) -> tuple:
    """The parts naming ``values`` once each, in their first order (``0.5, 0.88``): a value met twice is named
    once. ``last`` (e.g. ``" and "``) joins the final pair."""
    seen: list[float] = []
    for v in values:
        x = _real(v, "value")
        if not any(x == s or (math.isnan(x) and math.isnan(s)) for s in seen):
            seen.append(x)
    out: list = []
    for i, x in enumerate(seen):
        if i:
            out.append(Text(last if last is not None and i == len(seen) - 1 else sep))
        out.append(Number(x, digits=digits))
    return tuple(out)


def bracket(lo: float, hi: float, *, digits: int = 4, unit: str = "") -> Number:
    """The bracket [lo, hi] as a Number (a point when lo = hi: printed as one number)."""
    return Number(None, interval=(lo, hi), digits=digits, unit=unit)


def pm(value: float, se: float, *, digits: int = 4, unit: str = "") -> Number:
    """value ± se as a Number."""
    return Number(value, se=se, digits=digits, unit=unit)


# ----------------------------------------------------------------------------------------------------------------
# the reason
# ----------------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Reason:
    """A lead sentence (parts) and its ``items`` (each a tuple of parts), laid out as a list by the renderers."""

    lead: tuple = ()
    items: tuple = field(default_factory=tuple)

    def __post_init__(self) -> None:
        object.__setattr__(self, "lead", _parts(self.lead) if not _typed(self.lead) else tuple(self.lead))
        object.__setattr__(self, "items", tuple(tuple(it) if _typed(it) else _parts(it) for it in self.items))

    # -- building ------------------------------------------------------------------------------------------------
    def add(self, *parts: Any) -> "Reason":
        """This reason with ``parts`` appended to its lead."""
        return Reason(_parts((*self.lead, *parts)), self.items)

    def item(self, *parts: Any) -> "Reason":
        """This reason with one more item."""
        return Reason(self.lead, (*self.items, item(*parts)))

    def __add__(self, other: Any) -> "Reason":
        """``reason + "words"`` appends to the lead (to the last item when there are items: the words continue
        the text where it stops); ``reason + reason`` appends the other's lead and items."""
        if isinstance(other, Reason):
            return Reason(_parts((*self.lead, *other.lead)), (*self.items, *other.items)) if not self.items else \
                Reason(self.lead, (*self.items[:-1], _parts((*self.items[-1], *other.lead)), *other.items))
        if self.items:
            return Reason(self.lead, (*self.items[:-1], _parts((*self.items[-1], other))))
        return self.add(other)

    def __radd__(self, other: Any) -> "Reason":
        return Reason(_parts((other, *self.lead)), self.items)

    # -- reading -------------------------------------------------------------------------------------------------
    def parts(self) -> Iterator:
        """Every part, the lead's first, then each item's."""
        yield from self.lead
        for it in self.items:
            yield from it

    def __bool__(self) -> bool:
        return bool(self.lead or self.items)

    def __str__(self) -> str:
        """The text of the typesetting convention (words; mathematics as ``$LaTeX$``; numbers at the digits that
        tell them apart; items joined by "; "), for tools and for evaluators that still build strings."""
        digits = digits_for(self)
        it = iter(digits)

        def join(parts: Sequence) -> str:
            return "".join(_convention(p, [next(it) for _ in _slots(p)]) for p in parts)

        lead = join(self.lead)
        items = [join(i) for i in self.items]
        if not items:
            return lead
        return (lead + (" " if lead and not lead.endswith(" ") else "") if lead else "") + "; ".join(items)

    def __contains__(self, text: str) -> bool:
        return text in str(self)

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, str):
            return str(self) == other
        return isinstance(other, Reason) and (self.lead, self.items) == (other.lead, other.items)


    # -- JSON ----------------------------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        """The reason as JSON data: ``{"lead": [part...], "items": [[part...]...]}``, each part typed."""
        return {"lead": [_part_to_dict(p) for p in self.lead],
                "items": [[_part_to_dict(p) for p in it] for it in self.items]}

    @classmethod
    def from_dict(cls, data: dict) -> "Reason":
        """The Reason that :meth:`to_dict` wrote (ValueError, naming the part, for anything else)."""
        if not isinstance(data, dict) or "lead" not in data:
            raise ValueError("a stored reason must be an object with a 'lead' list of parts")
        return cls(tuple(_part_from_dict(p) for p in data["lead"]),
                   tuple(tuple(_part_from_dict(p) for p in it) for it in data.get("items", [])))


def _typed(parts: Any) -> bool:
    return isinstance(parts, tuple) and all(isinstance(p, _PART_TYPES) for p in parts)


def as_reason(value: Any) -> Reason | None:
    """``value`` as a Reason: a Reason as it is, a ``str`` as one Text part, the dict of :meth:`Reason.to_dict`
    restored; None stays None."""
    if value is None or isinstance(value, Reason):
        return value
    if isinstance(value, str):
        return Reason((Text(value),) if value else ())
    if isinstance(value, dict):
        return Reason.from_dict(value)
    raise ValueError(f"a reason must be a str or a Reason, got {type(value).__name__}")


# ----------------------------------------------------------------------------------------------------------------
# numbers: the decimal digits every renderer typesets
# ----------------------------------------------------------------------------------------------------------------
def decimal(x: float, digits: int) -> tuple[str, int | None]:
    """``x`` rounded to ``digits`` significant digits as (mantissa, exponent): ``("0.7462", None)`` in fixed
    notation (for 10^-3 <= |x| < 10^max(digits, 5)), else the mantissa of the exponent form and the exponent
    (``6.33e-07`` -> ``("6.33", -7)``); trailing zeros dropped. An int, and a float that is an integer below
    10^max(digits, 6), are printed whole. Non-finite: ``("inf", None)``, ``("-inf", None)``, ``("nan", None)``."""
    if isinstance(x, int) and abs(x) < 10 ** 15:
        return str(x), None
    x = float(x)
    if not math.isfinite(x):
        return ("nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")), None
    if x.is_integer() and abs(x) < 10 ** min(15, max(digits, 6)):
        return str(int(x)), None
    mant, exp = f"{x:.{digits - 1}e}".split("e")
    exp = int(exp)
    if -3 <= exp < max(digits, 5):
        text = f"{x:.{max(0, digits - 1 - exp)}f}"
        return (text.rstrip("0").rstrip(".") if "." in text else text), None
    return (mant.rstrip("0").rstrip(".") if "." in mant else mant), exp


def se_decimal(value: float | None, se: float) -> tuple[str, int | None]:
    """A standard error to 2 significant digits, in the layout of its value: fixed beside a value printed in fixed
    notation (``0.746194 ± 0.000039``), else as :func:`decimal` chooses."""
    d = decimal(se, 2)
    if d[1] is None or value is None or not (math.isfinite(se) and se > 0) or decimal(value, 4)[1] is not None:
        return d
    places = max(0, 1 - math.floor(math.log10(se)))
    return f"{se:.{places}f}".rstrip("0").rstrip("."), None


def _se_digits(value: float, se: float, digits: int) -> int:
    """Significant digits of ``value`` that reach the second significant digit of its standard error ``se``
    (at least ``digits``)."""
    if not (se and math.isfinite(se) and value and math.isfinite(value)):
        return digits
    need = math.floor(math.log10(abs(value))) - math.floor(math.log10(se)) + 2
    return max(digits, min(MAX_DIGITS, need))


def _slots(p: Any) -> list[float]:
    return p.values() if isinstance(p, Number) else []


def digits_for(r: Reason) -> list[int]:
    """The digits at which each printed number of ``r`` is typeset, in the order of :meth:`Reason.parts` and of
    :meth:`Number.values` within a number: each number's own ``digits`` (raised to what its standard error
    resolves), then raised wherever two *different* numbers of the reason would print alike, until they differ
    (at most 17 significant digits, which tell any two doubles apart)."""
    slots: list[tuple[float, int]] = []
    for p in r.parts():
        if isinstance(p, Number):
            for x in p.values():
                d = _se_digits(x, p.se, p.digits) if p.se is not None and x == p.value else p.digits
                slots.append((x, d))
    digits = [d for _, d in slots]
    for _ in range(MAX_DIGITS):
        printed: dict[tuple, list[int]] = {}
        for i, (x, _) in enumerate(slots):
            printed.setdefault(decimal(x, digits[i]), []).append(i)
        clash = {i for idx in printed.values() if len({slots[j][0] for j in idx}) > 1 for i in idx}
        if not clash:
            break
        for i in clash:
            digits[i] = min(MAX_DIGITS, digits[i] + 1)
    return digits


def _plain_number(x: float, digits: int) -> str:
    mant, exp = decimal(x, digits)
    return mant if exp is None else f"{mant}e{exp:+03d}"


def _convention(p: Any, digits: list[int]) -> str:
    """One part as text of the convention (:meth:`Reason.__str__`)."""
    if isinstance(p, Text):
        return p.text
    if isinstance(p, CheckRef):
        return p.check_id
    if isinstance(p, Math):
        if isinstance(p.expr, str):
            return f"${p.expr}$"
        import sympy as sp

        return f"${sp.latex(p.expr)}$"
    unit = f" {p.unit}" if p.unit else ""
    ends = iter(digits[1:] if p.value is not None else digits)
    out = "" if p.value is None else _plain_number(p.value, digits[0])
    if p.se is not None and p.value is not None:
        mant, exp = se_decimal(p.value, p.se)
        out += f" ± {mant if exp is None else f'{mant}e{exp:+03d}'}"
    if p.interval is not None:
        if p.is_point:
            text = _plain_number(p.interval[0], next(ends))
            out = text if not out else f"{out} [{text}]"
        else:
            lo, hi = (_plain_number(x, next(ends)) for x in p.interval)
            out = f"{out} [{lo}, {hi}]" if out else f"[{lo}, {hi}]"
    return out + unit


# ----------------------------------------------------------------------------------------------------------------
# JSON of the parts
# ----------------------------------------------------------------------------------------------------------------
def _json_number(x: float | None) -> Any:
    if x is None or isinstance(x, int):
        return x
    return x if math.isfinite(x) else ("nan" if math.isnan(x) else ("inf" if x > 0 else "-inf"))


def _part_to_dict(p: Any) -> dict:
    if isinstance(p, Text):
        return {"type": "text", "text": p.text}
    if isinstance(p, CheckRef):
        return {"type": "check", "id": p.check_id}
    if isinstance(p, Math):
        if isinstance(p.expr, str):
            return {"type": "math", "latex": p.expr}
        from attnverify.checks.reason_expr import expr_to_data

        return {"type": "math", "expr": expr_to_data(p.expr)}
    out = {"type": "number", "value": _json_number(p.value), "digits": p.digits}
    if p.se is not None:
        out["se"] = _json_number(p.se)
    if p.interval is not None:
        out["interval"] = [_json_number(x) for x in p.interval]
    if p.unit:
        out["unit"] = p.unit
    return out


def _part_from_dict(d: Any) -> Any:
    kind = d.get("type") if isinstance(d, dict) else None
    if kind == "text":
        return Text(str(d["text"]))
    if kind == "check":
        return CheckRef(str(d["id"]))
    if kind == "math":
        if "latex" in d:
            return Math(str(d["latex"]))
        from attnverify.checks.reason_expr import expr_from_data

        return Math(expr_from_data(d["expr"]))
    if kind == "number":
        def num(x: Any) -> Any:
            return None if x is None else (x if isinstance(x, int) else float(x))
        interval = d.get("interval")
        return Number(num(d.get("value")), se=num(d.get("se")),
                      interval=None if interval is None else tuple(num(x) for x in interval),
                      digits=int(d.get("digits", 4)), unit=str(d.get("unit", "")))
    raise ValueError(f"unknown reason part {d!r}: a part is an object with type text, math, number or check")
