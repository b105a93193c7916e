r"""Stated claims: what a paper (or a user) states, kept as data in TOML, read and validated before any work.

Every paper has one stated-claims file (``Paper.stated``); a user brings files of the same format to
``attnverify audit``. Each ``[[claim]]`` table is one statement::

    [[claim]]
    id = "mine.objective"          # unique; a built-in claim's id restates that claim
    model = "signal"               # the paper's model (optional in a paper's own file)
    kind = "formula"               # formula | value | threshold | rate | bound | qualitative
    quantity = "J_limit"           # a name from `attnverify list --quantities`
    stated = "theta**2*w**2 + 2*beta*sigma**2*theta*rho*w + beta**2*sigma**4"
    at = { R = 500, L = 10500 }    # model options where they matter
    statement = "..."              # the statement in words (optional for a user's claim)
    source = "..."                 # where it is stated

What ``stated`` holds, by kind:

* ``formula``: an expression (SymPy syntax) in the quantity's symbols; or, instead of ``stated``,
  ``stated_latex`` = an expression in LaTeX (``'\frac{\beta \sigma^{2}}{2}'``, read by
  :mod:`attnverify.checks.latex_reader`; also for ``rate`` and ``bound``);
* ``value``: a number (a reported figure), with optional ``uncertainty`` (its standard error as reported),
  ``resolution`` (the smallest difference that matters: below it two values "agree") and ``protocol`` (a table:
  what the paper fixes) and ``unknown`` (a list: the parts of the protocol the paper does not give);
* ``threshold``: a number (where a property switches);
* ``rate``: an expression in ``variable`` (``beta``, ``t``, ...), with ``direction`` = ``"upper"`` (an O(.) bound:
  the quantity decays at least this fast), ``"lower"`` (it decays no faster) or ``"exact"``, and ``scale`` = ``"power"`` (compared as the exponent of
  ``variable``: the slope of log s against log variable) or ``"exponential"`` (the slope of log s against
  ``variable``, e.g. ``exp(-c*t)``);
* ``bound``: an expression with unspecified ``constants`` (a list; ``K``), an upper bound of ``quantity``;
* ``qualitative``: the name of the predicate that measures it (a paper's claim defines it), with ``target`` its
  parameter where it has one.

A file that cannot be read, a claim with a missing or unknown field, an expression that does not parse or uses an
unknown symbol: one :class:`~attnverify.checks.params.InputError` naming the claim and the field.
"""
from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from attnverify.checks.expression_reader import DecimalFloat
from attnverify.checks.latex_reader import LatexText
from attnverify.checks.params import InputError, did_you_mean, number_problem, shown

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover -- Python 3.10
    import tomli as tomllib

KINDS = ("formula", "value", "threshold", "rate", "bound", "qualitative")
DIRECTIONS = ("upper", "exact", "lower")
_COMMON = {"id", "model", "kind", "quantity", "stated", "stated_latex", "at", "statement", "source", "reconstructed",
           "like", "note"}
_KIND_FIELDS = {
    "formula": set(),
    "value": {"uncertainty", "resolution", "protocol", "unknown"},
    "threshold": {"resolution"},
    "rate": {"variable", "direction", "scale"},
    "bound": {"variables", "constants"},
    "qualitative": {"target"},
}
_REQUIRED = {"formula": ("quantity", "stated"), "value": ("stated",), "threshold": ("stated",),
             "rate": ("stated", "variable"), "bound": ("stated", "constants"), "qualitative": ("stated",)}


@dataclass(frozen=True)
class StatedClaim:
    """One statement as data (see the module docstring for the fields of each kind).

    ``origin`` says where it was read (a paper's file or a user's); ``reconstructed`` marks a statement rebuilt
    from an abstract, not read in the paper's full text; ``like`` names the built-in claim whose evaluation a
    user's restatement uses (its evidence and its predicate)."""

    id: str
    model: str
    kind: str
    stated: Any
    statement: str = ""
    source: str = ""
    quantity: str | None = None
    at: Mapping[str, Any] = field(default_factory=dict)
    extra: Mapping[str, Any] = field(default_factory=dict)
    origin: str = ""
    reconstructed: bool = False
    like: str | None = None

    def get(self, name: str, default: Any = None) -> Any:
        """A kind-specific field (``uncertainty``, ``variable``, ``direction`` ...)."""
        return self.extra.get(name, default)

    def restated(self, stated: Any, **extra: Any) -> "StatedClaim":
        """The same claim with another stated form (the claim self-test perturbs it this way)."""
        return replace(self, stated=stated, extra={**self.extra, **extra})

    def as_dict(self) -> dict:
        stated = {"stated_latex": str(self.stated)} if isinstance(self.stated, LatexText) else {"stated": self.stated}
        out = {"id": self.id, "model": self.model, "kind": self.kind, **stated,
               "statement": self.statement, "source": self.source, "origin": self.origin,
               "reconstructed": self.reconstructed}
        if self.quantity:
            out["quantity"] = self.quantity
        if self.at:
            out["at"] = dict(self.at)
        if self.like:
            out["like"] = self.like
        return {**out, **{k: v for k, v in self.extra.items()}}


def _where(origin: str, cid: str | None, index: int) -> str:
    return f"{origin}: claim {cid!r}" if cid else f"{origin}: claim #{index + 1}"


def parse_claims(doc: Mapping[str, Any], origin: str, *, model: str | None = None) -> list[StatedClaim]:
    """The ``[[claim]]`` tables of a parsed TOML document (a dict) as :class:`StatedClaim` s, every field checked
    for presence and type (not yet against the registered papers: :func:`resolve` does that)."""
    if not isinstance(doc, Mapping):
        raise InputError(f"{origin}: expected a TOML table with [[claim]] entries")
    unknown_top = sorted(set(doc) - {"claim", "paper"})
    if unknown_top:
        raise InputError(f"{origin}: unknown top-level key {unknown_top[0]!r} (expected [[claim]] tables)")
    entries = doc.get("claim")
    if not isinstance(entries, list) or not entries:
        raise InputError(f"{origin}: no [[claim]] entries")
    out, seen = [], set()
    for i, entry in enumerate(entries):
        cid = entry.get("id") if isinstance(entry, Mapping) else None
        where = _where(origin, cid if isinstance(cid, str) else None, i)
        if not isinstance(entry, Mapping):
            raise InputError(f"{where}: expected a table")
        if not isinstance(cid, str) or not cid.strip() or "." not in cid:
            raise InputError(f"{where}: field 'id' must be a name like 'prefix.name'")
        if cid in seen:
            raise InputError(f"{where}: field 'id' repeats an earlier claim")
        seen.add(cid)
        kind = entry.get("kind")
        if kind not in KINDS:
            raise InputError(f"{where}: field 'kind' must be one of {', '.join(KINDS)}, got {kind!r}"
                             + (did_you_mean(kind, KINDS) if isinstance(kind, str) else ""))
        allowed = _COMMON | _KIND_FIELDS[kind]
        extra_keys = [k for k in entry if k not in allowed]
        if extra_keys:
            raise InputError(f"{where}: unknown field {extra_keys[0]!r} for kind {kind!r}"
                             f"{did_you_mean(extra_keys[0], sorted(allowed))}")
        m = entry.get("model", model)
        if m is not None and (not isinstance(m, str) or not m):
            raise InputError(f"{where}: field 'model' must be a paper's model name (a string, attnverify list "
                             f"--models), got {shown(m)}")
        if m is None:
            raise InputError(f"{where}: field 'model' is missing (a paper's model name, attnverify list --models)")
        stated = _stated_field(entry, kind, where)
        for name in _REQUIRED[kind]:
            if name not in entry and not (entry.get("like") and name != "stated") and not (
                    name == "stated" and stated is not None):
                raise InputError(f"{where}: field {name!r} is missing (kind {kind!r} needs it)")
        if kind in ("value", "threshold") and not _number(stated):
            raise InputError(f"{where}: field 'stated' must be a finite number for kind {kind!r}, got {stated!r}")
        if kind in ("formula", "rate", "bound", "qualitative") and not isinstance(stated, str):
            raise InputError(f"{where}: field 'stated' must be a string for kind {kind!r}, got {stated!r}")
        at = entry.get("at", {})
        if not isinstance(at, Mapping):
            raise InputError(f"{where}: field 'at' must be a table of model options, e.g. at = {{ R = 500 }}")
        for name in ("statement", "source", "quantity", "like", "note"):
            if name in entry and not isinstance(entry[name], str):
                raise InputError(f"{where}: field {name!r} must be a string")
        extra = {k: entry[k] for k in _KIND_FIELDS[kind] if k in entry}
        _check_extra(where, kind, extra)
        out.append(StatedClaim(id=cid, model=m, kind=kind, stated=stated, statement=entry.get("statement", ""),
                               source=entry.get("source", ""), quantity=entry.get("quantity"), at=dict(at),
                               extra=extra, origin=origin, reconstructed=bool(entry.get("reconstructed", False)),
                               like=entry.get("like")))
    return out


def _stated_field(entry: Mapping[str, Any], kind: str, where: str) -> Any:
    """The stated form: ``stated``, or ``stated_latex`` (an expression in LaTeX, read by
    :mod:`attnverify.checks.latex_reader`) for the kinds whose stated form is an expression."""
    if "stated_latex" not in entry:
        return entry.get("stated")
    if kind not in ("formula", "rate", "bound"):
        raise InputError(f"{where}: field 'stated_latex' is for an expression (kinds formula, rate, bound), "
                         f"not kind {kind!r}: give 'stated'")
    if "stated" in entry:
        raise InputError(f"{where}: give 'stated' or 'stated_latex', not both")
    if not isinstance(entry["stated_latex"], str) or not entry["stated_latex"].strip():
        raise InputError(f"{where}: field 'stated_latex' must be a LaTeX expression in a string, e.g. "
                         "stated_latex = '\\frac{\\beta}{2}'")
    return LatexText(entry["stated_latex"])


def _number(x: Any) -> bool:
    """A finite number within double precision (a 400-digit integer is not: float() of it overflows)."""
    return isinstance(x, (int, float)) and not isinstance(x, bool) and number_problem(x) is None


def _check_extra(where: str, kind: str, extra: dict) -> None:
    for name in ("uncertainty", "resolution"):
        if name in extra and not (_number(extra[name]) and extra[name] >= 0):
            raise InputError(f"{where}: field {name!r} must be a non-negative number, got {extra[name]!r}")
    if "scale" in extra and extra["scale"] not in ("power", "exponential"):
        raise InputError(f"{where}: field 'scale' must be 'power' or 'exponential', got {extra['scale']!r}")
    if "direction" in extra and extra["direction"] not in DIRECTIONS:
        raise InputError(f"{where}: field 'direction' must be one of {', '.join(DIRECTIONS)}, "
                         f"got {extra['direction']!r}")
    for name in ("variable",):
        if name in extra and not (isinstance(extra[name], str) and extra[name].isidentifier()):
            raise InputError(f"{where}: field {name!r} must be a symbol name, got {extra[name]!r}")
    for name in ("constants", "variables", "unknown"):
        if name in extra and not (isinstance(extra[name], list) and all(isinstance(v, str) for v in extra[name])):
            raise InputError(f"{where}: field {name!r} must be a list of names")
    if "protocol" in extra and not isinstance(extra["protocol"], Mapping):
        raise InputError(f"{where}: field 'protocol' must be a table")
    if "target" in extra and not isinstance(extra["target"], str):
        raise InputError(f"{where}: field 'target' must be a string")


def read_toml(source: str | Path | Mapping[str, Any], *, model: str | None = None,
              origin: str | None = None) -> list[StatedClaim]:
    """The stated claims of a TOML file (a path), TOML text is not accepted: a path or an already parsed dict."""
    if isinstance(source, Mapping):
        return parse_claims(source, origin or "claims", model=model)
    path = Path(source)
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"), parse_float=DecimalFloat)   # decimals as written
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or type(exc).__name__})") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: not valid TOML ({str(exc).splitlines()[0]})") from None
    return parse_claims(doc, origin or str(path), model=model)


def paper_statements(paper: Any) -> list[StatedClaim]:
    """A registered paper's stated-claims file (``stated.toml`` in its package), every claim with the paper's model;
    none when the paper has no such file."""
    from importlib import resources

    name = "stated.toml"
    resource = resources.files(paper.package).joinpath(name)
    if not resource.is_file():
        return []
    text = resource.read_text(encoding="utf-8")
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{paper.model} stated claims ({name}): not valid TOML ({exc})") from None
    claims = parse_claims(doc, f"{paper.model}/{name}", model=paper.model)
    wrong = [c.id for c in claims if c.model != paper.model or not c.id.startswith(f"{paper.key}.")]
    if wrong:
        raise InputError(f"{paper.model}/{name}: claim {wrong[0]!r} is not Paper {paper.key}'s "
                         f"(ids start with {paper.key}., model {paper.model})")
    return claims


def builtin_statements() -> dict[str, StatedClaim]:
    """Every registered paper's stated claims by id (read once per set of registered papers)."""
    from attnverify.checks.registry import papers

    found = papers()
    return dict(_statements(tuple(p.model for p in found), found))


def _statements(models: tuple[str, ...], found: tuple, _cache: dict = {}) -> dict[str, StatedClaim]:  # noqa: B006
    if models not in _cache:
        _cache[models] = {c.id: c for p in found for c in paper_statements(p)}
    return _cache[models]


def listing(claims: Sequence[StatedClaim]) -> list[dict]:
    return [c.as_dict() for c in claims]
