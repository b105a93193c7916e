"""What a check returns and what a run keeps: the evidence of one comparison (:class:`Evidence`, with its plots as
data: :class:`Plot`, :class:`Series`) and the outcome of one check (:class:`Result`). Data only: the terminal,
Markdown, LaTeX, HTML and plots draw them (attnverify.render)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from attnverify.checks.plots import Plot, Series
from attnverify.checks.reason import MAX_DIGITS, Math, Number, Reason, Text, as_reason
from attnverify.checks.reason import reason as reason_of          # the builder; Evidence has a field "reason"

__all__ = ["Evidence", "Plot", "Result", "Series", "Unresolved", "refusal_reason"]


class Unresolved(Exception):
    """Raised inside a check when its numerics cannot decide at this model (the quantity it compares is below what
    the computation resolves, or the model is outside an expansion the check relies on), found before any
    comparison: the verdict is ``error`` with the reason "Unresolved: ...", as for ``Evidence.unresolved``, never
    a pass or a fail. The message says what was measured and what would resolve it: a
    :class:`~attnverify.checks.reason.Reason` (kept typed as ``reason``, rendered by each output) or a ``str``;
    ``str(exc)`` is its text in the typesetting convention (``str`` of the Reason: mathematics as ``$LaTeX$``); the
    outputs render the typed ``reason`` (the terminal's Unicode: attnverify.render.report.error_text)."""

    def __init__(self, message: str | Reason) -> None:
        self.reason: Reason = as_reason(message)
        super().__init__(message if isinstance(message, str) else str(self.reason))

    def __reduce__(self) -> tuple:          # raised in a worker process: the typed text crosses back, not its str
        return type(self), (self.reason,)


def refusal_reason(exc: BaseException) -> Reason:
    """The typed text of a refusal (:class:`attnverify.theory.refusals.OutsideCertifiedRange`, which theory builds
    without importing the checks): its parts as Text (a ``str``), Math (a SymPy expression) and Number (an ``int``
    or ``float``, at the digits that write it exactly, at least 4); an exception without parts, as its text."""
    parts = getattr(exc, "parts", None)
    if not parts:
        return as_reason(str(exc))
    out = []
    for p in parts:
        if isinstance(p, str):
            out.append(Text(re.sub(r"\s*\n\s*", " ", p)))              # one line
        elif isinstance(p, (int, float)) and not isinstance(p, bool):
            out.append(Number(p, digits=_exact_digits(p)))
        elif any((c.__module__ or "").startswith("sympy.") for c in type(p).__mro__):
            out.append(Math(p))
        else:
            out.append(Text(str(p)))
    return reason_of(*out)


def _exact_digits(x: int | float) -> int:
    """The significant digits of the shortest text that reads back as ``x`` (at least 4)."""
    if isinstance(x, int):
        return 4
    mantissa = repr(float(x)).lstrip("-").split("e")[0].replace(".", "").strip("0")
    return max(4, min(MAX_DIGITS, len(mantissa)))


@dataclass
class Evidence:
    """What a check measured: the comparison ``observed`` vs ``threshold`` and its justification.

    ``metric`` names the number compared (``observed``): a :class:`~attnverify.checks.reason.Reason` (its
    mathematics typed, e.g. ``reason("max ", Math(sp.Abs(sp.Symbol("z"))), " over the family")``) or a plain ``str``
    of words.
    ``reason`` states what is compared and why the threshold is what it is: a
    :class:`~attnverify.checks.reason.Reason` (words, mathematics and numbers as typed parts, typeset by each
    output) or a plain ``str``.
    ``comparison`` says which side of the threshold passes (``"<="`` or ``">="``), for display;
    ``passed`` is the check's decision (it may combine the comparison with further conditions).
    ``unresolved``: set (to the reason, a Reason or a ``str``) when the numerics cannot decide at this size -- e.g.
    a refinement spread above the check's precision rule; the verdict is then ``error``, never ``pass`` or
    ``fail``, and the evidence is kept in the report.
    ``findings``: what the claims read, as a typed record (a frozen dataclass defined beside the check): the
    figures a claim compares with a paper's statement (a measured exponent and its standard error, a bracket, a
    switch time...). Claims read its attributes, never string keys of ``details``, so a renamed field fails
    loudly; the report stores it under ``details["findings"]``.
    """

    metric: str | Reason
    observed: float | None
    threshold: float | None
    reason: str | Reason
    passed: bool
    comparison: str = "<="
    analytic: Any = None
    numeric: Any = None
    uncertainty: Any = None
    details: dict = field(default_factory=dict)
    plots: list[Plot] = field(default_factory=list)
    unresolved: str | Reason | None = None
    findings: Any = None

    def __post_init__(self) -> None:
        if self.comparison not in ("<=", "<", ">=", ">"):
            raise ValueError(f"comparison must be one of <=, <, >=, >; got {self.comparison!r}")


@dataclass
class Result:
    """The outcome of one check: its verdict with the evidence, or the error that broke it. ``unresolved``: the
    typed text of an unresolved verdict (``Evidence.unresolved`` or the :class:`Unresolved` raised), which
    ``error`` holds after "Unresolved: " in the typesetting convention (the outputs render ``unresolved``)."""

    id: str
    compares: str
    source: str
    verdict: str
    params: dict
    seconds: float
    evidence: Evidence | None = None
    error: str | None = None
    seed: int | None = None
    formulas: tuple[str, ...] = ()          # the labels of the derivation steps its check compares
    unresolved: Reason | None = None

    @property
    def observed(self) -> float | None:
        return self.evidence.observed if self.evidence else None

    @property
    def threshold(self) -> float | None:
        return self.evidence.threshold if self.evidence else None

    @property
    def reason(self) -> str | Reason:
        if self.evidence:
            return self.evidence.reason
        return "Unresolved: " + self.unresolved if self.unresolved else (self.error or "")

    @property
    def details(self) -> dict:
        return self.evidence.details if self.evidence else {}

    @property
    def findings(self) -> Any:
        """The check's typed findings (None when it has none or did not produce evidence)."""
        return self.evidence.findings if self.evidence else None

    def __repr__(self) -> str:
        ev = self.evidence
        what = self.error or "" if ev is None else \
            f"{ev.metric}: {'-' if ev.observed is None else f'{ev.observed:.4g}'} {ev.comparison} " \
            f"{'-' if ev.threshold is None else f'{ev.threshold:.4g}'}"
        return f"<Result {self.id}: {self.verdict}, {what} ({self.seconds:.1f} s)>"
