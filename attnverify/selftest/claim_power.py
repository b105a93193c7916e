"""The claim self-test (``attnverify selftest --claims``): how small an error in a claim's *stated* form the ledger
refutes, while every check that feeds the claim passes.

A check's power is measured against errors in our closed forms (:mod:`attnverify.selftest.power`); a claim's power against
errors in the statement it judges. For each built-in claim the stated form (from its paper's stated-claims file)
is perturbed -- a constant times (1 + delta), a dropped or doubled term, a wrong exponent, a shifted threshold,
another reported figure, or a change the claim itself defines (``Claim.perturbations``) -- and judged on the
evidence of the same run: the checks run once per seed, the claims are re-evaluated for every perturbation (the
stated form does not enter the checks). The claim's minimum detectable perturbation (MDP) along a family is the
smallest delta refuted at every seed while every feeding check passes. A perturbation marked ``wrong = False`` is
a statement that is still true (a looser bound): it must never be refuted, and the table says so.

Scenarios (``Paper.claim_scenarios``): a *null* scenario (check overrides under which the evidence has nothing to
decide) must give ``inconclusive``; a *counterexample* (model parameters at which the statement is false) must give
``refuted``. An exception is never a detection: an evaluation that raises gives an ``inconclusive`` row, which
counts as not refuted.

Targets: formula claims refute any wrong term; reported figures a difference of 3 standard errors of the protocol;
thresholds a 5 % shift; rate constants 1 %.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from attnverify.checks.plugin import Perturbation

LADDER = (0.5, 0.2, 0.1, 0.05, 0.02, 0.01, 5e-3, 2e-3, 1e-3)
# formula claims: every dropped or doubled term is refuted (one-off), and the whole expression scaled by 1 + 0.05
# (the measurement that confirms a certified counterexample resolves a few per cent: measured MDPs 0.001 to 0.05)
TARGETS = {"formula": 0.05, "value": 3.0, "threshold": 0.05, "rate": 0.01}
Z_SHIFTS = (12.0, 8.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0)       # a reported figure shifted by k standard errors


# ----------------------------------------------------------------------------------------------
# the generic perturbations of a stated form, by kind
# ----------------------------------------------------------------------------------------------
def _terms(expr: Any) -> list:
    import sympy as sp

    return list(sp.Add.make_args(sp.expand(expr))) if isinstance(expr, sp.Add) else [expr]


def formula_perturbations(stated: Any, symbols: dict) -> list[Perturbation]:
    """Each term dropped, each term doubled, and the whole expression times (1 + delta) for delta on the ladder."""
    import sympy as sp

    from attnverify.checks.expression_reader import parse_expression

    expr = parse_expression(stated.stated, symbols, f"claim {stated.id}")
    out = []
    terms = list(sp.Add.make_args(expr))
    if len(terms) > 1:
        for i, t in enumerate(terms):
            rest = sp.Add(*(u for j, u in enumerate(terms) if j != i))
            out.append(Perturbation(f"drop term {i + 1}", None, stated.restated(sp.sstr(rest))))
            out.append(Perturbation(f"double term {i + 1}", None, stated.restated(sp.sstr(expr + t))))
    for d in LADDER:
        out.append(Perturbation("scale", d, stated.restated(sp.sstr(expr * (1 + sp.Rational(str(d)))))))
    return out


def generic_perturbations(stated: Any, context: dict | None = None) -> list[Perturbation]:
    """The perturbations of a stated form that every claim of its kind gets. ``context`` gives what a kind needs
    from the evidence (the standard error of a reported figure's protocol: ``protocol_se``)."""
    import sympy as sp

    context = context or {}
    kind = stated.kind
    if kind == "threshold":
        return [Perturbation(f"shift {'+' if s > 0 else '-'}", d, stated.restated(float(stated.stated) * (1 + s * d)))
                for d in LADDER for s in (1, -1)]
    if kind == "value":
        se = context.get("protocol_se")
        if not se:
            return [Perturbation(f"shift {'+' if s > 0 else '-'}", d, stated.restated(float(stated.stated) * (1 + s * d)))
                    for d in LADDER for s in (1, -1)]
        return [Perturbation(f"shift {'+' if s > 0 else '-'} k se", k, stated.restated(float(stated.stated) + s * k * se))
                for k in Z_SHIFTS for s in (1, -1)]
    if kind == "rate":
        # exact: a rate off by var^delta either way is wrong. upper (the quantity is O(rate)): a slower decay is a
        # looser bound and still true (must not be refuted); whether a faster one is wrong depends on the sharp
        # rate, which the claim's own perturbations (around the derived rate) probe. lower: the mirror image.
        var = sp.Symbol(stated.get("variable"), positive=True)
        direction = stated.get("direction", "exact")
        out = []
        for d in LADDER:
            factor = (var ** sp.Rational(str(d))) if stated.get("scale", "power") == "power" else sp.exp(sp.Rational(str(d)) * var)
            slower = Perturbation("slower rate", d, stated.restated(f"({stated.stated})*({sp.sstr(factor)})"),
                                  wrong=direction != "upper")
            faster = Perturbation("faster rate", d, stated.restated(f"({stated.stated})/({sp.sstr(factor)})"),
                                  wrong=direction != "lower")
            out += {"upper": [slower], "lower": [faster]}.get(direction, [faster, slower])
        return out
    return []


# ----------------------------------------------------------------------------------------------
# running
# ----------------------------------------------------------------------------------------------
def _evaluate(claim: Any, results: dict, stated: Any) -> str:
    from attnverify.checks.claims import evaluate_claim

    return evaluate_claim(claim, results, stated).verdict


def perturbations_of(claim: Any, stated: Any, results: dict) -> list[Perturbation]:
    """The claim's own perturbations (``Claim.perturbations``) then the generic ones of its kind (a formula claim's
    symbols come from its quantity)."""
    own = list(claim.perturbations(stated, results)) if claim.perturbations else []
    if stated.kind == "formula":
        from attnverify.checks.registry import paper

        q = next(q for q in paper(stated.model).quantities() if q.name == stated.quantity)
        import sympy as sp

        return own + formula_perturbations(stated, {**q.symbols, **{n: sp.Symbol(n) for n in q.aliases}})
    return own + generic_perturbations(stated)


def claim_power(claim_ids: Sequence[str] | None = None, *, seeds: Sequence[int] = range(5), profile: str = "quick",
                progress: Callable[[str], None] | None = None, smoke: bool = False,
                scenarios: bool = True, executor: Any = None, results: dict[int, dict] | None = None) -> dict:
    """The claim power table: per (claim, perturbation family) the detection rate of every delta tried and the
    MDP; per claim its baseline verdicts and the scenarios' verdicts. ``smoke``: one seed, and per claim only the
    families at the target (or the one-off perturbations). ``results``: check results already computed, by seed
    (seed -> {check id: Result}); the checks of the other seeds are run here."""
    from attnverify.checks.claims import all_claims, statement_of
    from attnverify.checks.runner import run

    say = progress or (lambda _text: None)
    chosen = [c for c in all_claims() if not claim_ids or c.id in claim_ids]
    ids = list(dict.fromkeys(cid for c in chosen for cid in c.checks))
    seeds = [0] if smoke else list(seeds)
    start = time.perf_counter()
    rows: dict[tuple[str, str], dict] = {}
    baseline: dict[str, dict[int, str]] = {c.id: {} for c in chosen}
    checks_pass: dict[str, dict[int, bool]] = {c.id: {} for c in chosen}
    for seed in seeds:
        given = (results or {}).get(seed, {})
        todo = [cid for cid in ids if cid not in given]
        if todo:
            say(f"claims: the checks at seed {seed} ...")
        ran = {r.id: r for r in run(todo, profile=profile, seed=seed, executor=executor).results} if todo else {}
        by_id = {**given, **ran}
        for c in chosen:
            stated = statement_of(c.id)
            fed = [by_id[cid] for cid in c.needs if cid in by_id]
            checks_pass[c.id][seed] = all(r.verdict == "pass" for r in fed) and len(fed) == len(c.needs)
            baseline[c.id][seed] = _evaluate(c, by_id, stated)
            for p in perturbations_of(c, stated, by_id):
                if smoke and not _smoke_pick(p, stated):
                    continue
                row = rows.setdefault((c.id, p.name), {"claim": c.id, "kind": stated.kind, "family": p.name,
                                                      "wrong": p.wrong, "target": _target(stated, p), "runs": {}})
                key = "one-off" if p.delta is None else f"{p.delta:g}"
                row["runs"].setdefault(key, {})[seed] = _evaluate(c, by_id, p.stated)
    table = [_summarise(r, checks_pass[r["claim"]], baseline[r["claim"]]) for r in rows.values()]
    scen = run_scenarios([c.id for c in chosen], profile=profile, progress=say) if scenarios else []
    return {"profile": profile, "seeds": seeds, "rows": table, "baseline": baseline, "checks_pass": checks_pass,
            "scenarios": scen, "all_targets_met": all(r["meets_target"] is not False for r in table)
            and all(s["ok"] for s in scen), "seconds": round(time.perf_counter() - start, 1)}


def _target(stated: Any, p: Perturbation) -> float | None:
    if not p.wrong:
        return None
    if stated.kind == "value":              # the target is in standard errors: relative shifts have none
        return TARGETS["value"] if "se" in p.name else None
    if p.name.split(",")[-1].strip().startswith("range "):    # a stated range ending at a shifted threshold
        return TARGETS["threshold"]
    return TARGETS.get(stated.kind)


def _smoke_pick(p: Perturbation, stated: Any) -> bool:
    target = _target(stated, p)
    return p.delta is None or (target is not None and abs(p.delta - target) < 1e-12)


def _summarise(row: dict, passing: dict[int, bool], baseline: dict[int, str] | None = None) -> dict:
    """Detection rate per delta (refuted at a seed whose feeding checks all pass) and the MDP: the smallest delta
    detected at every seed, with every larger delta also detected at every seed. A wrong statement of a claim that
    is ``inconclusive`` as stated at every seed (this profile's evidence cannot decide it, e.g. a reported figure
    whose protocol runs only at the paper profile) has no MDP here: the row says so and counts neither way."""
    rates = {}
    for key, by_seed in row["runs"].items():
        ok = [passing.get(s, False) and v == "refuted" for s, v in by_seed.items()]
        rates[key] = sum(ok) / len(ok)
    out = {k: v for k, v in row.items() if k != "runs"}
    out["verdicts"] = row["runs"]
    out["rates"] = rates
    undecided = bool(baseline) and all(v == "inconclusive" for v in baseline.values())
    if row["wrong"] and undecided and not any(rates.values()):
        out.update(mdp=None, meets_target=None, note="undecided: the claim as stated is inconclusive on this "
                   "evidence (its protocol or regime is not run at this profile)")
        return out
    if not row["wrong"]:
        never = all(v != "refuted" for by_seed in row["runs"].values() for v in by_seed.values())
        out.update(mdp=None, meets_target=never, note="still true: must not be refuted" + ("" if never else
                                                                                          " -- REFUTED"))
        return out
    if "one-off" in rates:
        out.update(mdp=None, meets_target=rates["one-off"] == 1.0, caught=rates["one-off"] == 1.0)
        return out
    deltas = sorted((float(k) for k in rates), reverse=True)
    mdp = None
    for d in deltas:
        if rates[f"{d:g}"] == 1.0:
            mdp = d
        else:
            break
    target = row["target"]
    out.update(mdp=mdp, meets_target=None if target is None else (mdp is not None and mdp <= target * (1 + 1e-9)))
    return out


def run_scenarios(claim_ids: Sequence[str], *, profile: str = "quick", seed: int = 0,
                  progress: Callable[[str], None] | None = None) -> list[dict]:
    """Each claim's null scenario (expect inconclusive) and counterexample (expect refuted), from its paper's
    ``claim_scenarios``: the claim's checks run with the scenario's overrides."""
    from attnverify.checks.claims import CLAIMS, evaluate_claim
    from attnverify.checks.registry import papers
    from attnverify.checks.runner import run

    out = []
    for paper in papers():
        for cid, scen in (paper.claim_scenarios() or {}).items():
            if cid not in claim_ids:
                continue
            c = CLAIMS[cid]
            for name, expect in (("null", "inconclusive"), ("counterexample", "refuted")):
                if name not in scen:
                    continue
                if progress:
                    progress(f"claims: {cid}: {name} scenario ...")
                overrides = scen[name]
                rep = run(list(c.checks), profile=profile, seed=seed, overrides=overrides)
                row = evaluate_claim(c, {r.id: r for r in rep.results})
                out.append({"claim": cid, "scenario": name, "overrides": {k: str(v) for k, v in overrides.items()},
                            "expected": expect, "verdict": row.verdict, "reason": row.condition or row.reason,
                            "checks": {r.id: r.verdict for r in rep.results}, "ok": row.verdict == expect})
    return out


def _mdp_text(r: dict, still_true: str, missed: str) -> str:
    """A row's MDP as text: ``still_true`` for a statement that is not wrong, caught/``missed`` for a one-off one,
    else the smallest delta refuted at every seed (none)."""
    if not r["wrong"]:
        return still_true
    if r.get("caught") is not None:
        return "caught" if r["caught"] else missed
    return "none" if r["mdp"] is None else f"{r['mdp']:g}"


def table(result: dict) -> str:
    """Plain-text claim power table."""
    lines = [f"{'claim':<28} {'family':<22} {'MDP':>8} {'target':>7}  detection rate by delta", "-" * 100]
    for r in result["rows"]:
        mdp = _mdp_text(r, "n/a", "MISSED")
        tgt = "" if r["target"] is None else f"{r['target']:g}"
        flag = "" if r["meets_target"] is not False else "  << target missed"
        rates = ", ".join(f"{k}: {v:.2f}" for k, v in r["rates"].items())
        note = f"  ({r['note']})" if r.get("note") else ""
        lines.append(f"{r['claim']:<28} {r['family']:<22} {mdp:>8} {tgt:>7}  {rates}{note}{flag}")
    for s in result["scenarios"]:
        lines.append(f"{s['claim']:<28} scenario {s['scenario']:<13} {s['verdict']:>8} (expected {s['expected']})"
                     + ("" if s["ok"] else "  << unexpected"))
    lines.append("-" * 100)
    lines.append(f"profile {result['profile']}, seeds {result['seeds']}, {result['seconds']:.0f} s; MDP: smallest "
                 "delta refuted at every seed while every feeding check passes")
    return "\n".join(lines)


def markdown(result: dict) -> str:
    """The claim power table as Markdown (the README's table)."""
    lines = ["| claim | perturbation | MDP | target | detection rate by delta |", "|---|---|---|---|---|"]
    for r in result["rows"]:
        mdp = _mdp_text(r, "not refuted ✓" if r["meets_target"] else "**refuted ✗**", "**missed**")
        mark = {True: " ✓", False: " ✗", None: " (undecided)"}[r["meets_target"]]
        tgt = "" if r["target"] is None else f"≤ {r['target']:g}" + mark
        rates = ", ".join(f"{k}: {v:.2f}" for k, v in r["rates"].items())
        rates += f" ({r['note']})" if r.get("note") and r["wrong"] else ""
        lines.append(f"| `{r['claim']}` | {r['family']} | {mdp} | {tgt} | {rates} |")
    for s in result["scenarios"]:
        lines.append(f"| `{s['claim']}` | scenario: {s['scenario']} | {s['verdict']} | {s['expected']} "
                     f"{'✓' if s['ok'] else '✗'} | |")
    return "\n".join(lines)
