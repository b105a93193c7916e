"""Auditing stated claims: a paper's own, or a user's file of the same format (``attnverify audit FILE.toml``).

A stated claim is judged one of two ways:

* a **restatement** of a built-in claim (its ``id`` is a built-in claim's id, or its ``like`` field names one): the
  built-in claim's evaluation runs on the evidence of its checks, with the user's stated form;
* a **claim on a quantity** (``quantity`` names one of ``attnverify list --quantities``): judged by the rule of its
  kind (:mod:`attnverify.checks.judges`) against the quantity's derived side and its measurement, with no check.

:func:`resolve` validates a whole file against the registered papers before any work: an unknown model, claim,
quantity, option or symbol, a kind the quantity does not support, or an expression that does not parse is one
:class:`~attnverify.checks.params.InputError` naming the claim and the field.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from attnverify.checks.claims import (CLAIMS, Claim, ClaimResult, ClaimVerdict, all_claims, evaluate_claim,
                                      unreadable)
from attnverify.checks.context import stream_key
from attnverify.checks.domain import read_values
from attnverify.checks.params import InputError, did_you_mean
from attnverify.checks.stated import StatedClaim


@dataclass(frozen=True)
class Resolved:
    """A stated claim matched to what judges it: the built-in ``claim`` it restates, or the ``quantity`` (with the
    validated model ``options``) it states something about."""

    stated: StatedClaim
    paper: Any
    claim: Claim | None = None
    quantity: Any = None
    options: dict | None = None
    read_as: Any = None

    def with_reading(self, also: Sequence[str] = ()) -> "Resolved":
        """The same, with ``read_as``: a ``stated_latex`` form as the SymPy expression it was read as (its
        symbols plain, named as a claim names them, and ``also``: the names a restated built-in form uses),
        printed back by the audit so that a misreading shows."""
        from attnverify.checks.latex_reader import LatexText

        s = self.stated
        if not isinstance(s.stated, LatexText):
            return self
        from attnverify.checks.expression_reader import parse_expression

        names = [n for q in self.paper.quantities() for n in (*q.symbols, *q.aliases)]
        names += [s.get("variable")] if s.get("variable") else []
        symbols = _plain_symbols([*names, *s.get("variables", []), *s.get("constants", []), *also])
        where = f"{s.origin}: claim {s.id!r}, field 'stated'"
        return replace(self, read_as=parse_expression(s.stated, symbols, where))

    @property
    def checks(self) -> tuple[str, ...]:
        return self.claim.checks if self.claim is not None else ()


#: the kinds whose stated form is an expression (a value or a threshold states a number, a qualitative claim a word)
EXPRESSION_KINDS = ("formula", "rate", "bound")


def _plain_symbols(names: Sequence[str]) -> dict:
    """Each name (once) as a plain SymPy symbol, except the names the claim parser reads as functions or constants."""
    import sympy as sp

    from attnverify.checks.expression_reader import function_names

    functions = function_names()
    return {n: sp.Symbol(n) for n in dict.fromkeys(names) if n not in functions}


def _names_in(form: Any) -> list[str]:
    """The names a stated form (a string) uses, functions among them (the parser's function names are dropped where
    the names become symbols)."""
    import re

    return re.findall(r"[A-Za-z_]\w*", form) if isinstance(form, str) else []


def _check_restated_form(s: StatedClaim, own_names: Sequence[str], own: StatedClaim, paper: Any,
                         where: str) -> None:
    """A restatement's stated expression and ``at`` read before any work, as the built-in claim's judge will read
    them once its checks have run (``s`` has inherited the built-in statement's quantity and kind fields): its
    variable(s) and scale the built-in's (what the measurement is in); ``at`` in its quantity's domain; a formula
    in its quantity's symbols (and aliases, ``at`` applied); a rate or a bound in its variable(s), constants and
    ``own_names``, the names the built-in statement's own form uses (a judge reads only those). InputError, one line
    naming the claim and the field, on a syntax error, an unknown symbol, another variable or an undefined form."""
    from attnverify.checks.judges import stated_expression
    from attnverify.checks.expression_reader import parse_expression

    for key, default in (("variable", None), ("variables", ()), ("scale", "power")):   # the measurement's own axes
        mine, theirs = s.get(key, default), own.get(key, default)
        if (set(mine) != set(theirs)) if key == "variables" else mine != theirs:
            raise InputError(f"{where}: field {key!r}: {own.id} measures in {theirs!r}, not {mine!r} (a restatement "
                             "keeps the built-in claim's variables and scale)")
    q = _quantity(paper, s.quantity, where) if s.quantity else None
    options: dict = {}
    if q is not None:
        try:
            options, _ = read_values(paper, q, s.at)
        except InputError as exc:
            raise InputError(f"{where}: field 'at': {exc}") from None
    elif unread := [k for k in s.at if k not in own.at]:      # no quantity: the built-in's evaluator reads its own keys
        raise InputError(f"{where}: field 'at': {own.id} reads {', '.join(own.at) or 'no at values'}, not "
                         f"{', '.join(unread)}{did_you_mean(unread[0], list(own.at))}")
    if s.kind not in EXPRESSION_KINDS or not isinstance(s.stated, str):
        return
    if s.kind == "formula" and q is not None:
        stated_expression(s, q, options)
        return
    names = [v for v in (s.get("variable"),) if v] + [*s.get("variables", []), *s.get("constants", []), *own_names]
    parse_expression(s.stated, _plain_symbols(names), f"{where}, field 'stated'")


def _quantity(paper: Any, name: str, where: str) -> Any:
    found = {q.name: q for q in paper.quantities()}
    if name not in found:
        raise InputError(f"{where}: field 'quantity': {name!r} is not a quantity of {paper.model}"
                         f"{did_you_mean(name, list(found))} (attnverify list --quantities)")
    return found[name]


def resolve(claims: Sequence[StatedClaim]) -> list[Resolved]:
    """Match every stated claim to what judges it, validating everything that can be validated without work."""
    from attnverify.checks.judges import stated_expression
    from attnverify.checks.registry import paper as find_paper

    all_claims()                                    # registers the built-in claims
    out = []
    for s in claims:
        where = f"{s.origin}: claim {s.id!r}"
        try:
            paper = find_paper(s.model)
        except InputError as exc:
            raise InputError(f"{where}: field 'model': {exc}") from None
        builtin = s.like or (s.id if s.id in CLAIMS else None)
        if builtin is not None:
            if builtin not in CLAIMS:
                raise InputError(f"{where}: field 'like': no built-in claim {builtin!r}"
                                 f"{did_you_mean(builtin, list(CLAIMS))}")
            c = CLAIMS[builtin]
            if c.paper != paper.key:
                raise InputError(f"{where}: field 'like': {builtin} is a claim of Paper {c.paper}, not of {s.model}")
            from attnverify.checks.claims import statement_of

            own = statement_of(builtin)
            if own.kind != s.kind:
                raise InputError(f"{where}: field 'kind': {builtin} is a {own.kind!r} claim, not {s.kind!r}")
            s = replace(s, quantity=s.quantity or own.quantity, extra={**own.extra, **s.extra})   # like: inherits
            own_names = _names_in(own.stated)
            _check_restated_form(s, own_names, own, paper, where)
            if (unread := unreadable(c, s)) is not None:    # the words its evaluator interprets: a target ...
                raise InputError(f"{where} (restating {builtin}): {unread}")
            out.append(Resolved(s, paper, claim=c).with_reading(own_names))
            continue
        if not s.quantity:
            raise InputError(f"{where}: field 'quantity' is missing (or 'like' naming a built-in claim)")
        q = _quantity(paper, s.quantity, where)
        if s.kind not in q.kinds:
            raise InputError(f"{where}: field 'kind': {s.model}.{q.name} supports {', '.join(q.kinds)}, not {s.kind!r}")
        try:
            options, symbols = read_values(paper, q, s.at)     # every value in its domain, before any work
        except InputError as exc:
            raise InputError(f"{where}: field 'at': {exc}") from None
        if s.kind == "value" and q.symbols:
            free = [k for k in q.symbols if k not in symbols]
            if free:
                raise InputError(f"{where}: field 'at': a value of {s.model}.{q.name} needs every symbol fixed; "
                                 f"give {', '.join(free)}")
        if s.kind == "formula":
            stated_expression(s, q, options)        # parses (InputError on an unknown symbol or bad syntax)
        out.append(Resolved(s, paper, quantity=q, options=options).with_reading())
    return out


def _number(x: Any) -> float:
    import sympy as sp

    value = sp.sympify(x)
    if value.free_symbols:
        raise InputError(f"the derived value still depends on {', '.join(sorted(map(str, value.free_symbols)))}: "
                         "fix them with 'at'")
    return float(value)


def _like_with_like(measured: Any, q: Any, options: dict, fixed: dict, derived: float) -> Any:
    """The measurement of a quantity whose measurement estimates something else than the derived value (``measured_as``:
    the value at the finite size it ran, with its O(1/L) terms) made an estimate of the derived one: M + (D - R), D
    the derived value and R what the measurement estimates, both at the point; its standard error unchanged. A
    value claim on a long-sequence limit is then compared with the limit, and the measurement with the finite-size
    value it estimates (quoted in the text)."""
    import sympy as sp

    from attnverify.checks.judges import Measured
    from attnverify.checks.reason import Number, as_reason, reason

    if q.measured_as is None:
        return measured
    r = _number(sp.sympify(q.measured_as(**options)).subs(fixed))
    if r == derived:
        return measured
    return Measured(measured.value + (derived - r), measured.se,
                    as_reason(measured.how) + reason("; it estimates the finite-size value ", Number(r, digits=6),
                                                     " at this size, so ", Number(derived - r, digits=3),
                                                     " (the derived limit ", Number(derived, digits=6),
                                                     " minus it) is added"),
                    None, {**measured.details, "measured_raw": measured.value, "finite_size_value": r})


def evaluate_quantity_claim(r: Resolved, seed: int) -> ClaimVerdict:
    """The verdict of a claim on a quantity (no check involved), measured with the seed's own random stream."""
    from attnverify.checks import judges
    from attnverify.checks.judges import fixed_symbols

    s, q = r.stated, r.quantity
    rng = np.random.default_rng(np.random.SeedSequence([seed, stream_key("audit", s.id)]))
    if s.kind == "formula":
        return judges.formula(s, q, r.options, rng)
    if q.measure is None:
        return ClaimVerdict("inconclusive", f"{s.model}.{q.name} has no measurement to judge a {s.kind} claim against")
    values = {**r.options, **{k: v for k, v in s.at.items() if k in q.symbols}}
    derived = q.derive(**r.options)
    if s.kind == "value":
        d = _number(derived.subs(fixed_symbols(q, s)) if hasattr(derived, "subs") else derived)
        from attnverify.checks.judges.rounding import within_rounding

        measured = _like_with_like(q.measure(values, rng), q, r.options, fixed_symbols(q, s), d)
        where = ", ".join(f"{k} = {v}" for k, v in s.at.items())
        return within_rounding(s, measured, d, where=where) or judges.value(s, measured, derived=d, where=where)
    measured = q.measure(values, rng)
    where = ", ".join(f"{k} = {v}" for k, v in s.at.items())
    if s.kind == "threshold":
        enclosure = tuple(map(float, derived)) if isinstance(derived, (tuple, list)) else (float(derived),) * 2
        return judges.threshold(s, measured, derived=enclosure, where=where)
    if s.kind == "rate":
        points = measured.details.get("points") or []
        return judges.rate(s, measured, points, derived=float(derived), what=f"{s.model}.{q.name}")
    return ClaimVerdict("inconclusive", f"a {s.kind} claim on a quantity needs a built-in claim to restate ('like')")


def evaluate(resolved: Sequence[Resolved], results: dict, seed: int) -> list[ClaimResult]:
    """The ledger rows of the resolved claims: restatements read the run's ``results`` (check id -> Result)."""
    rows = []
    for r in resolved:
        if r.claim is not None:
            row = evaluate_claim(r.claim, results, r.stated)
        else:
            try:
                verdict = evaluate_quantity_claim(r, seed)
            except InputError:
                raise
            except Exception as exc:  # noqa: BLE001 -- a measurement that breaks is a row, never a crash
                message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                verdict = ClaimVerdict("inconclusive", f"the evaluation failed: {type(exc).__name__}: {message}")
            row = ClaimResult(r.stated.id, r.paper.key, r.stated.statement, r.stated.source, verdict.verdict,
                              verdict.reason, verdict.condition, [], verdict.evidence, r.stated.as_dict(),
                              f"attnverify audit {r.stated.origin}")
        rows.append(row)
    return rows
