"""Claims: the second layer of the audit. A check asks "does our closed form agree with our numerics?";
a claim asks "is the paper's statement true?", and its verdict is computed from the evidence of one or more
checks of the same run, never typed in.

Verdicts:

- ``holds``: the evidence supports the statement as the paper makes it;
- ``holds_if``: it holds only under a condition that the evidence found (``condition``, e.g. "theta > theta*
  = 1.0045");
- ``refuted``: the evidence contradicts it (``condition`` names the counterexample's parameters and figure);
- ``not_refuted``: an upper bound or a conjecture that all the evidence is consistent with;
- ``inconclusive``: the evidence cannot tell (a feeding check did not run, errored, or disagrees with our own
  derivation, or the run is not at the paper's scale); ``reason`` says why.

A claim is registered with :func:`claim` next to the checks whose evidence it reads (any public module of
``attnverify.checks.signal`` / ``attnverify.checks.meanfield``). Its function receives the results of the feeding checks that ran
(check id -> :class:`~attnverify.checks.framework.Result`, each with verdict ``pass``) and returns a :class:`ClaimVerdict`.
The framework answers ``inconclusive`` itself when a feeding check is missing, errored or failed, so an evaluator
only ever reads evidence that our derivation and our numerics agree on.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from attnverify.checks.framework import Result

VERDICTS = ("holds", "holds_if", "refuted", "not_refuted", "inconclusive")


@dataclass
class ClaimVerdict:
    """What an evaluator concludes: the verdict, the condition found (holds_if) or the counterexample (refuted),
    the reason in one or two sentences, and the figures it rests on (``evidence``: check id -> {name: value})."""

    verdict: str
    reason: str
    condition: str | None = None
    evidence: dict[str, dict[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"claim verdict must be one of {', '.join(VERDICTS)}; got {self.verdict!r}")
        if self.verdict in ("holds_if", "refuted") and not self.condition:
            raise ValueError(f"a {self.verdict!r} verdict needs its condition or counterexample")


@dataclass(frozen=True)
class Claim:
    """A paper's statement in the project's words, where it comes from, and the checks whose evidence decides it.

    ``needs`` lists the checks that must all have run (and passed) for a verdict; ``uses`` lists further checks
    whose evidence is read when present."""

    id: str
    paper: str
    statement: str
    source: str
    needs: tuple[str, ...]
    evaluate: Callable[[dict[str, Result]], ClaimVerdict]
    uses: tuple[str, ...] = ()

    @property
    def checks(self) -> tuple[str, ...]:
        return self.needs + tuple(c for c in self.uses if c not in self.needs)


@dataclass
class ClaimResult:
    """One row of the claims ledger."""

    id: str
    paper: str
    statement: str
    source: str
    verdict: str
    reason: str
    condition: str | None
    checks: list[str]
    evidence: dict[str, dict[str, Any]]

    def __repr__(self) -> str:
        cond = f" [{self.condition}]" if self.condition else ""
        return f"<ClaimResult {self.id}: {self.verdict}{cond}>"

    def _repr_markdown_(self) -> str:
        lines = [f"**`{self.id}`: {self.verdict}** (Paper {self.paper}, {self.source})", "", self.statement, ""]
        if self.condition:
            lines += [f"*{'Counterexample' if self.verdict == 'refuted' else 'Condition'}:* {self.condition}", ""]
        lines += [f"*Reason:* {self.reason}", "", "*Checks:* " + ", ".join(f"`{c}`" for c in self.checks)]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        import html

        cond = (f"<br><i>{'counterexample' if self.verdict == 'refuted' else 'condition'}:</i> "
                f"{html.escape(self.condition)}") if self.condition else ""
        return (f"<div><b><code>{html.escape(self.id)}</code>: {html.escape(self.verdict)}</b> "
                f"(Paper {html.escape(self.paper)}, {html.escape(self.source)})<br>{html.escape(self.statement)}"
                f"{cond}<br><i>reason:</i> {html.escape(self.reason)}</div>")

    def as_dict(self) -> dict:
        return {"id": self.id, "paper": self.paper, "statement": self.statement, "source": self.source,
                "verdict": self.verdict, "condition": self.condition, "reason": self.reason,
                "checks": list(self.checks), "evidence": self.evidence}


CLAIMS: dict[str, Claim] = {}


def claim(*, id: str, paper: str, statement: str, source: str, needs: Sequence[str],
          uses: Sequence[str] = ()) -> Callable:
    """Register ``evaluate(results) -> ClaimVerdict`` as the claim ``id`` of the paper whose key is ``paper`` (the
    id starts with that key: ``A.name``)."""
    if not id.startswith(f"{paper}."):
        raise TypeError(f"claim {id}: the id must start with its paper's key {paper!r} and a dot")
    if not needs:
        raise TypeError(f"claim {id}: needs at least one check")

    def register(evaluate: Callable[[dict[str, Result]], ClaimVerdict]) -> Callable:
        CLAIMS[id] = Claim(id, paper, statement, source, tuple(needs), evaluate, tuple(uses))
        return evaluate

    return register


def _row(c: Claim, verdict: ClaimVerdict, ran: list[str]) -> ClaimResult:
    return ClaimResult(c.id, c.paper, c.statement, c.source, verdict.verdict, verdict.reason, verdict.condition,
                       ran, verdict.evidence)


def evaluate_claim(c: Claim, results: dict[str, Result]) -> ClaimResult:
    """The claim's verdict from the results of one run (check id -> Result)."""
    ran = [cid for cid in c.checks if cid in results]
    missing = [cid for cid in c.needs if cid not in results]
    if missing:
        return _row(c, ClaimVerdict("inconclusive", f"not run in this audit: {', '.join(missing)}"), ran)
    broken = [results[cid] for cid in ran if results[cid].verdict != "pass"]
    if broken:
        why = "; ".join(f"{r.id} {r.verdict}" + (f" ({r.error})" if r.error else "") for r in broken)
        return _row(c, ClaimVerdict(
            "inconclusive", f"our derivation and our numerics disagree, so the evidence cannot be read: {why}",
            evidence={r.id: {"verdict": r.verdict} for r in broken}), ran)
    try:
        verdict = c.evaluate({cid: results[cid] for cid in ran})
    except Exception as exc:  # noqa: BLE001 -- an evaluator that breaks gives an inconclusive row, not a crash
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        verdict = ClaimVerdict("inconclusive", f"the claim's evaluation failed: {type(exc).__name__}: {message}")
    return _row(c, verdict, ran)


def all_claims() -> list[Claim]:
    """Every registered claim, papers by key, in registration order within a paper."""
    from attnverify.checks.registry import load

    load()
    return sorted(CLAIMS.values(), key=lambda c: c.paper)


def evaluate_claims(results: Sequence[Result], *, only_touched: bool = True) -> list[ClaimResult]:
    """The claims ledger of a run: every claim that at least one of the run's checks feeds (all claims when
    ``only_touched`` is False, the others then ``inconclusive``: not run)."""
    by_id = {r.id: r for r in results}
    return [evaluate_claim(c, by_id) for c in all_claims()
            if not only_touched or any(cid in by_id for cid in c.checks)]


def ledger() -> list[dict]:
    """id, paper, statement, source and feeding checks of every claim (no verdicts: those need a run)."""
    return [{"id": c.id, "paper": c.paper, "statement": c.statement, "source": c.source, "checks": list(c.checks)}
            for c in all_claims()]
