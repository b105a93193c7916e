"""Claims: the second layer of the audit. A check asks "does our closed form agree with our numerics?"; a claim
asks "is the paper's statement true?", and its verdict is computed from the evidence of the checks of the same run,
never typed in.

Every claim has three sides: the *stated* form (what the paper says, as data in the paper's stated-claims file,
:mod:`attnverify.checks.stated`), the *derived* one (SymPy from the model) and the *measured* one (the numerics).
A check compares derived with measured; a claim compares the stated form with both (:mod:`attnverify.checks.judges`
holds the rule of each kind). Verdicts:

- ``holds``: the evidence supports the statement as stated;
- ``holds_if``: it holds only under a condition that the evidence found (``condition`` quotes the measured
  bracket or range, never a theory value the evidence did not test);
- ``refuted``: the stated form disagrees with a derived and a measured side that agree with each other
  (``condition`` names the counterexample: the point, both values, the distance in the evidence's own units);
- ``not_refuted``: an upper bound or a conjecture that all the evidence is consistent with;
- ``inconclusive``: the evidence cannot tell (a feeding check did not run, errored, or found our derivation and
  our numerics in disagreement; or the measurement cannot resolve the statement); ``reason`` says why.

A claim is registered with :func:`claim` by the module of its paper that reads the evidence (listed in
``Paper.modules``); its statement, source and stated form come from the stated-claims file, by id. Its function
receives the results of the feeding checks that ran (check id -> :class:`~attnverify.checks.evidence.Result`,
each with verdict ``pass``) and the :class:`~attnverify.checks.stated.StatedClaim` to judge (the paper's, a
user's restatement, or a perturbed one in the claim self-test), and returns a :class:`ClaimVerdict`. The
framework answers ``inconclusive`` itself when a feeding check is missing, errored or failed, naming it: a
check fails only when our derivation and our numerics disagree, never on what a paper says.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from attnverify.checks.evidence import Result
from attnverify.checks.reason import Reason, as_reason

VERDICTS = ("holds", "holds_if", "refuted", "not_refuted", "inconclusive")


@dataclass
class ClaimVerdict:
    """What an evaluator concludes: the verdict, the condition found (holds_if) or the counterexample (refuted),
    the reason (a lead sentence and, when long, one item per series or point), and the figures it rests on
    (``evidence``: source -> {name: value}). ``reason`` and ``condition`` are a
    :class:`~attnverify.checks.reason.Reason` (typed parts) or a plain ``str`` (one text part)."""

    verdict: str
    reason: str | Reason
    condition: str | Reason | None = None
    evidence: dict[str, dict[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("reason", "condition"):
            if not isinstance(getattr(self, name), (str, Reason, type(None))):
                raise ValueError(f"claim verdict: {name} must be a str or a Reason, got "
                                 f"{type(getattr(self, name)).__name__}")
        if self.verdict not in VERDICTS:
            raise ValueError(f"claim verdict must be one of {', '.join(VERDICTS)}; got {self.verdict!r}")
        if self.verdict in ("holds_if", "refuted") and not self.condition:
            raise ValueError(f"a {self.verdict!r} verdict needs its condition or counterexample")


Evaluator = Callable[[dict[str, Result], Any], ClaimVerdict]


@dataclass(frozen=True)
class Claim:
    """A claim's evaluation: the checks whose evidence decides it and the function that reads it.

    ``needs`` lists the checks that must all have run (and passed) for a verdict; ``uses`` lists further checks
    whose evidence is read when present. ``perturbations(stated, results)`` (optional) lists the changed
    statements (:class:`attnverify.checks.plugin.Perturbation`) the claim self-test tries beyond the generic ones
    of its kind, given the evidence of a run. ``reads(stated)`` (optional) reads the words and values of a
    statement its evaluator interprets (a predicate, a target, an ``at`` option) as the evaluator will, and raises
    ValueError naming the field and the problem: a user's restatement is refused by it before any work."""

    id: str
    paper: str
    needs: tuple[str, ...]
    evaluate: Evaluator
    uses: tuple[str, ...] = ()
    perturbations: Callable[[Any, dict], list] | None = None
    reads: Callable[[Any], None] | None = None

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
    reason: str | Reason
    condition: str | Reason | None
    checks: list[str]
    evidence: dict[str, dict[str, Any]]
    stated: dict = field(default_factory=dict)
    command: str = ""

    def __repr__(self) -> str:
        cond = f" [{self.condition}]" if self.condition else ""
        return f"<ClaimResult {self.id}: {self.verdict}{cond}>"

    def as_dict(self) -> dict:
        """The row as JSON data: ``reason`` and ``condition`` as text of the typesetting convention, and their typed
        parts (``reason_parts``, ``condition_parts``: :meth:`attnverify.checks.reason.Reason.to_dict`)."""
        condition = as_reason(self.condition)
        return {"id": self.id, "paper": self.paper, "statement": self.statement, "source": self.source,
                "verdict": self.verdict, "condition": None if condition is None else str(condition),
                "reason": str(self.reason), "checks": list(self.checks), "evidence": self.evidence,
                "stated": self.stated, "command": self.command,
                "reason_parts": as_reason(self.reason).to_dict(),
                "condition_parts": None if condition is None else condition.to_dict()}


CLAIMS: dict[str, Claim] = {}


def claim(*, id: str, paper: str, needs: Sequence[str], uses: Sequence[str] = (),
          perturbations: Callable[[Any, dict], list] | None = None,
          reads: Callable[[Any], None] | None = None) -> Callable:
    """Register ``evaluate(results, stated) -> ClaimVerdict`` as the claim ``id`` of the paper whose key is
    ``paper`` (the id starts with that key: ``A.name``). Its statement is read from the paper's stated-claims
    file by the same id; ``reads`` validates a restatement's words before any work (:class:`Claim`)."""
    if not id.startswith(f"{paper}."):
        raise TypeError(f"claim {id}: the id must start with its paper's key {paper!r} and a dot")
    if not needs:
        raise TypeError(f"claim {id}: needs at least one check")

    def register(evaluate: Evaluator) -> Evaluator:
        CLAIMS[id] = Claim(id, paper, tuple(needs), evaluate, tuple(uses), perturbations, reads)
        return evaluate

    return register


def one_of(field: str, value: Any, allowed: Sequence[str]) -> None:
    """ValueError naming ``field`` unless ``value`` is one of the words ``allowed`` (a claim's ``reads``)."""
    from attnverify.checks.params import did_you_mean

    if value not in allowed:
        raise ValueError(f"field {field!r}: {value!r} is not one this claim reads ({', '.join(map(repr, allowed))})"
                         f"{did_you_mean(str(value), list(allowed))}")


def words(predicates: Sequence[str], targets: Sequence[str] | Callable[[str], Any] | None = None
          ) -> Callable[[Any], None]:
    """A ``reads`` for a qualitative claim: ``stated`` one of ``predicates``; ``target`` one of ``targets`` (words),
    read by ``targets`` (a function raising ValueError) or, with None, absent (the evaluator reads no target)."""
    def reads(stated: Any) -> None:
        one_of("stated", stated.stated, predicates)
        target = stated.get("target")
        if target is None:
            return
        if targets is None:
            raise ValueError(f"field 'target': {target!r} given, but this claim reads no target")
        if not isinstance(target, str):
            raise ValueError(f"field 'target': {target!r} is not a string")
        if callable(targets):
            try:
                targets(target)
            except ValueError as exc:
                text = str(exc).removeprefix("target ")
                raise ValueError(text if text.startswith("field ") else f"field 'target': {text}") from None
        else:
            one_of("target", target, targets)
    return reads


def unreadable(c: Claim, stated: Any) -> str | None:
    """Why ``c``'s evaluator cannot read ``stated`` (its ``reads`` raised: the message, one line), or None."""
    if c.reads is None:
        return None
    try:
        c.reads(stated)
    except ValueError as exc:
        return str(exc).splitlines()[0] if str(exc).strip() else type(exc).__name__
    except Exception as exc:  # noqa: BLE001 -- a plugin's reads that breaks: the statement is not read, said so
        return f"its words could not be read ({type(exc).__name__})"
    return None


def _command(c: Claim, stated: Any) -> str:
    origin = getattr(stated, "origin", "")
    if origin and not origin.startswith(f"{getattr(stated, 'model', '')}/"):
        return f"attnverify audit {origin}"
    return f"attnverify run {' '.join(c.checks)}"


def _row(c: Claim, stated: Any, verdict: ClaimVerdict, ran: list[str], profile: str | None = None,
         seed: int | None = None) -> ClaimResult:
    command = _command(c, stated)
    if profile is not None:
        command += f" --profile {profile} --seed {seed}"
    return ClaimResult(c.id if getattr(stated, "id", c.id) == c.id else stated.id, c.paper,
                       getattr(stated, "statement", ""), getattr(stated, "source", ""), verdict.verdict,
                       verdict.reason, verdict.condition, ran, verdict.evidence,
                       stated.as_dict() if hasattr(stated, "as_dict") else {}, command)


def claim_rng(results: dict[str, Result], stated: Any):
    """A random generator for a claim's own measurements (a formula claim's confirmation): derived from the seed of
    the run its evidence comes from and the claim's id, so the same seed gives the same verdict."""
    import numpy as np

    from attnverify.checks.context import stream_key

    seed = next((r.seed for r in results.values() if r.seed is not None), 0)
    return np.random.default_rng(np.random.SeedSequence([int(seed), stream_key("claim", getattr(stated, "id", ""))]))


def statement_of(claim_id: str) -> Any:
    """The paper's stated form of a built-in claim (from its stated-claims file)."""
    from attnverify.checks.stated import builtin_statements

    found = builtin_statements().get(claim_id)
    if found is None:
        raise KeyError(f"claim {claim_id} has no entry in its paper's stated-claims file")
    return found


def evaluate_claim(c: Claim, results: dict[str, Result], stated: Any = None, *, profile: str | None = None,
                   seed: int | None = None) -> ClaimResult:
    """The claim's verdict from the results of one run (check id -> Result), for the stated form ``stated`` (the
    paper's own when None)."""
    stated = statement_of(c.id) if stated is None else stated
    ran = [cid for cid in c.checks if cid in results]
    if (unread := unreadable(c, stated)) is not None:   # resolve() refuses it first; a direct call lands here
        return _row(c, stated, ClaimVerdict("inconclusive", f"this claim cannot judge the statement: {unread}"),
                    ran, profile, seed)
    missing = [cid for cid in c.needs if cid not in results]
    if missing:
        return _row(c, stated, ClaimVerdict("inconclusive", f"not run in this audit: {', '.join(missing)}"), ran,
                    profile, seed)
    broken = [results[cid] for cid in ran if results[cid].verdict != "pass"]
    if broken:
        def why(r: Result) -> str | Reason:
            if r.verdict == "fail":
                return f"{r.id} failed (our derivation and our numerics disagree)"
            if r.unresolved is not None:      # the typed text of an unresolved verdict, its mathematics kept
                return f"{r.id} could not decide (Unresolved: " + r.unresolved + ")"
            return f"{r.id} could not decide ({r.error})" if r.evidence is not None else f"{r.id} broke ({r.error})"
        text: str | Reason = "the evidence cannot be read: "
        for i, r in enumerate(broken):
            text = text + ("; " if i else "") + why(r)
        return _row(c, stated, ClaimVerdict("inconclusive", text,
                                            evidence={r.id: {"verdict": r.verdict} for r in broken}),
                    ran, profile, seed)
    try:
        verdict = c.evaluate({cid: results[cid] for cid in ran}, stated)
    except Exception as exc:  # noqa: BLE001 -- an evaluator that breaks gives an inconclusive row, not a crash
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        verdict = ClaimVerdict("inconclusive", f"the claim's evaluation failed: {type(exc).__name__}: {message}",
                               evidence={"evaluation": {"error": f"{type(exc).__name__}: {message}"}})
    return _row(c, stated, verdict, ran, profile, seed)


def all_claims() -> list[Claim]:
    """Every registered claim, papers by key, each paper's claims in the order of its stated-claims file."""
    from attnverify.checks.registry import load
    from attnverify.checks.stated import builtin_statements

    load()
    order = {cid: i for i, cid in enumerate(builtin_statements())}
    return sorted(CLAIMS.values(), key=lambda c: (c.paper, order.get(c.id, len(order)), c.id))


def evaluate_claims(results: Sequence[Result], *, only_touched: bool = True, profile: str | None = None,
                    seed: int | None = None) -> list[ClaimResult]:
    """The claims ledger of a run: every claim that at least one of the run's checks feeds (all claims when
    ``only_touched`` is False, the others then ``inconclusive``: not run)."""
    by_id = {r.id: r for r in results}
    return [evaluate_claim(c, by_id, profile=profile, seed=seed) for c in all_claims()
            if not only_touched or any(cid in by_id for cid in c.checks)]


def not_evaluated(results: Sequence[Result]) -> list[dict]:
    """The registered claims that no check of the run feeds, each with the checks it needs."""
    ran = {r.id for r in results}
    return [{"id": c.id, "needs": list(c.needs), "reason": "none of its checks ran: " + ", ".join(c.needs)}
            for c in all_claims() if not any(cid in ran for cid in c.checks)]


def ledger() -> list[dict]:
    """id, paper, statement, source, kind and feeding checks of every claim (no verdicts: those need a run)."""
    out = []
    for c in all_claims():
        s = statement_of(c.id)
        out.append({"id": c.id, "paper": c.paper, "statement": s.statement, "source": s.source, "kind": s.kind,
                    "stated": s.stated, "checks": list(c.checks)})
    return out
