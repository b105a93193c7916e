"""The power self-test: how small an error in a check's closed form the check rejects.

A *perturbation family* changes the analytic side of the checks by a size delta, through the same code path as
the mutants (:func:`attnverify.selftest.mutation.applied`: the checks receive the perturbed closed forms as their
argument, caches cleared), while the simulation runs at the true parameters:

- a *scale* family multiplies a closed form by (1 + delta);
- a *parameter-mismatch* family evaluates every closed form of a paper at a wrong parameter or model (a
  parameter times (1 + delta), matrices rotated by an angle delta);
- a *regime* family evaluates the theory on the other side of a threshold of the model, against the simulation
  at the true parameters;
- a *fixed* family is one wrong closed form: no ladder, rejected or not.

Each registered paper gives its families and rows (``Paper.families``, ``Paper.power_rows``; see
``attnverify.checks.plugin``).

For a (check, family) the *minimum detectable perturbation* (MDP) is the smallest delta of the ladder that is
rejected (verdict ``fail``; an ``error`` is never a rejection, whatever raised it) at every seed tried, for both
signs of a scale or mismatch. The ladder is walked from the check's target (or 0.1): downwards while every run
rejects, upwards while some run passes; the walk down stops a decade below the target (at 1e-3 for a row without
target), and the MDP is then reported as an upper bound ('<='). That assumes the rejection rate does not decrease with delta (the
natural monotonicity of a test's power); the detection rate of every delta tried is reported.

Each seed's unperturbed run must pass (the baseline): a perturbation is only meaningful against a check that
accepts the truth. The numeric side of a check does not depend on the perturbation, so its tasks are memoised
across the runs of one (check, seed) (``Context.map``'s memo); only the analytic side is recomputed.
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any


from attnverify.checks.plugin import Family, PowerRow
from attnverify.selftest.mutation import applied, clear_caches, rejects, result_row

LADDER = (1.0, 0.5, 0.2, 0.1, 0.05, 0.02, 0.01, 5e-3, 2e-3, 1e-3, 1e-4, 1e-5, 1e-6)
DEPTH = 10.0     # the walk down stops at target / DEPTH (at 1e-3 without a target): the MDP is then '<=' that


def families() -> dict[str, Family]:
    """Every registered paper's perturbation families, by name."""
    from attnverify.checks.registry import papers

    out: dict[str, Family] = {}
    for paper in papers():
        for f in paper.families():
            if f.name in out:
                raise ValueError(f"two papers define the perturbation family {f.name!r}")
            out[f.name] = f
    return out


def plan() -> tuple[PowerRow, ...]:
    """Every registered paper's power rows, papers in key order."""
    from attnverify.checks.registry import papers

    return tuple(r for paper in papers() for r in paper.power_rows())


# ---------------------------------------------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------------------------------------------
@contextmanager
def perturbed(family: Family, delta: float, params: dict | None = None) -> Iterator[Callable[[Any], dict]]:
    """Within the block the analytic side is perturbed by ``family`` at the signed ``delta`` (``params``: the
    check's parameters, for the regime family's threshold); yields the runner's ``arguments`` (what a check
    receives: attnverify.selftest.mutation.receives)."""
    with applied(family.mutants(delta, params)) as arguments:
        yield arguments


def _claim_verdict(claim_id: str, result) -> str:
    """The verdict of the claim ``claim_id`` from one check's result (evaluated inside the perturbation, as a
    run of the audit would)."""
    from attnverify.checks.claims import CLAIMS, evaluate_claim

    return evaluate_claim(CLAIMS[claim_id], {result.id: result}).verdict


def _rejected(result) -> bool:
    """The perturbed closed form is rejected (attnverify.selftest.mutation.rejects: the mutant self-test's rule)."""
    return rejects(result_row(result))


class _Runner:
    """Runs one check at fixed seeds, with the numeric side memoised per seed."""

    def __init__(self, check_id: str, seeds: Sequence[int], profile: str, store: Any = None) -> None:
        from attnverify.checks.runner import plan

        (self.check, self.params), = plan([check_id], profile=profile)
        self.seeds = list(seeds)
        self.profile = profile
        self.memo: dict[int, dict] = {s: {} for s in self.seeds}
        self.runs = 0
        self.store = store

    def run(self, seed: int, arguments: Callable[[Any], dict] | None = None, store: Any = None):
        from attnverify.checks.runner import run_one

        self.runs += 1
        return run_one(self.check, self.params, seed=seed, profile=self.profile, memo=self.memo[seed], store=store,
                       arguments=arguments(self.check) if arguments is not None else None)

    def baseline(self) -> dict[int, str]:
        """The unperturbed runs; their tasks fill the memo that the perturbed runs read, and (with a store) are read
        from and written to the store: nothing is patched while they run, so the store sees the code it keys."""
        clear_caches()
        return {s: self.run(s, store=self.store).verdict for s in self.seeds}

    def detection(self, family: Family, delta: float, claim: str = "") -> tuple[float, list[dict]]:
        """Fraction of (sign, seed) runs rejected at ``delta`` (with ``claim``: that claim refuted); the runs."""
        signs = (1.0, -1.0) if family.laddered else (1.0,)
        runs = []
        for sgn in signs:
            with perturbed(family, sgn * delta, self.params) as arguments:
                for s in self.seeds:
                    r = self.run(s, arguments)
                    row = {"delta": sgn * delta, "seed": s, "verdict": r.verdict, "observed": r.observed,
                           "threshold": r.threshold, "error": r.error}
                    if claim:
                        row["claim_verdict"] = _claim_verdict(claim, r)
                        row["rejected"] = row["claim_verdict"] == "refuted"
                    else:
                        row["rejected"] = _rejected(r)
                    runs.append(row)
        return sum(x["rejected"] for x in runs) / len(runs), runs


def measure_row(row: PowerRow, runner: _Runner, ladder: Sequence[float] = LADDER) -> dict:
    """The power of one (check, family): MDP, the detection rate of every delta tried, the runs."""
    family = families()[row.family]
    out: dict[str, Any] = {"check": row.check, "family": row.family, "claim": row.claim or None,
                           "kind": family.kind, "description": family.description, "target": row.target}
    if row.not_applicable:
        return {**out, "applicable": False, "reason": row.not_applicable, "mdp": None, "meets_target": None,
                "rates": {}}
    start = time.perf_counter()
    if not family.laddered:
        rate, runs = runner.detection(family, 0.0, row.claim)
        return {**out, "applicable": True, "mdp": None, "rejected_at_every_seed": rate == 1.0,
                "meets_target": rate == 1.0, "rates": {"fixed": rate}, "runs": runs,
                "seconds": round(time.perf_counter() - start, 1)}
    target = row.target if row.target is not None else 0.1
    floor = target / DEPTH if row.target is not None else 1e-3
    ladder = sorted((x for x in ladder if x >= floor * (1 - 1e-9)), reverse=True)
    i = min(range(len(ladder)), key=lambda k: abs(math.log(ladder[k] / target)))
    rates: dict[float, float] = {}
    all_runs = []

    def tried(k: int) -> float:
        if ladder[k] not in rates:
            rates[ladder[k]], runs = runner.detection(family, ladder[k], row.claim)
            all_runs.extend(runs)
        return rates[ladder[k]]

    if tried(i) == 1.0:                                    # walk down while every run rejects
        while i + 1 < len(ladder) and tried(i + 1) == 1.0:
            i += 1
        mdp = ladder[i]
    else:                                                  # walk up until every run rejects
        while i > 0 and tried(i - 1) < 1.0:
            i -= 1
        mdp = ladder[i - 1] if i > 0 else None
    meets = None if row.target is None else (mdp is not None and mdp <= row.target * (1 + 1e-9))
    at_floor = mdp is not None and i == len(ladder) - 1
    return {**out, "applicable": True, "mdp": mdp, "mdp_is_upper_bound": at_floor, "meets_target": meets,
            "rates": {f"{k:g}": v for k, v in sorted(rates.items(), reverse=True)}, "runs": all_runs,
            "seconds": round(time.perf_counter() - start, 1)}


def power_of_check(check_id: str, rows_plan: Sequence[PowerRow], seeds: Sequence[int], profile: str,
                   ladder: Sequence[float] = LADDER, progress: Callable[[str], None] | None = None
                   ) -> tuple[dict[int, str], list[dict]]:
    """Baseline verdicts per seed and the power rows of one check (one process: the injection is local)."""
    runner = _Runner(check_id, seeds, profile)
    if progress:
        progress(f"power: {check_id}: baseline at seeds {list(runner.seeds)} ...")
    baseline = runner.baseline()
    ok = all(v == "pass" for v in baseline.values())
    rows = []
    for r in rows_plan:
        if progress:
            progress(f"power: {check_id}: {r.family} ...")
        if not ok and not r.not_applicable:
            rows.append({"check": check_id, "family": r.family, "kind": families()[r.family].kind,
                         "description": families()[r.family].description, "target": r.target, "applicable": True,
                         "mdp": None, "meets_target": False if r.target is not None else None, "rates": {},
                         "reason": f"baseline does not pass at every seed: {baseline}"})
            continue
        rows.append(measure_row(r, runner, ladder))
    clear_caches()
    return baseline, rows


def power(check_ids: Sequence[str] | None = None, *, seeds: Sequence[int] = range(5), profile: str = "quick",
          families: Sequence[str] | None = None, progress: Callable[[str], None] | None = None,
          ladder: Sequence[float] = LADDER, jobs: int = 1) -> dict:
    """The power table of the selected checks (all when None): one row per (check, family) of :func:`plan`.

    ``jobs`` > 1 measures that many checks at once in worker processes (each injects its own perturbations)."""
    rows_plan = [r for r in plan() if (not check_ids or r.check in check_ids)
                 and (not families or r.family in families)]
    start = time.perf_counter()
    ids = list(dict.fromkeys(r.check for r in rows_plan))
    work = [(cid, [r for r in rows_plan if r.check == cid], list(seeds), profile, tuple(ladder)) for cid in ids]
    if jobs > 1 and len(work) > 1:
        import multiprocessing

        from attnverify.executors import make_executor

        # fork: a child inherits the perturbations' registry and any model file registered in this process
        with make_executor("local", jobs=jobs, mp_context=multiprocessing.get_context("fork")) as pool:
            futures = [pool.submit(power_of_check, *w) for w in work]
            outs = []
            for cid, f in zip(ids, futures):
                outs.append(f.result())
                if progress:
                    progress(f"power: {cid}: done")
    else:
        outs = [power_of_check(*w, progress=progress) for w in work]
    baselines = {cid: b for cid, (b, _) in zip(ids, outs)}
    rows = [row for _, rs in outs for row in rs]
    return {"profile": profile, "seeds": list(seeds), "ladder": list(ladder), "rows": rows, "baseline": baselines,
            "all_targets_met": all(r["meets_target"] is not False for r in rows),
            "seconds": round(time.perf_counter() - start, 1)}


def smoke(check_ids: Sequence[str] | None = None, *, seed: int = 0, profile: str = "quick",
          store: Any = None) -> list[dict]:
    """One family per check (the ``smoke`` rows of :func:`plan`) at its target delta (both signs) or its fixed
    wrong closed form, at one seed: each must be rejected, and the unperturbed check must pass. ``store``: a task
    store (``attnverify.checks.store.TaskStore``) for the unperturbed runs, as ``attnverify run`` uses one."""
    out = []
    for row in plan():
        if not row.smoke or (check_ids and row.check not in check_ids):
            continue
        runner = _Runner(row.check, [seed], profile, store)
        base = runner.baseline()[seed]
        family = families()[row.family]
        delta = row.target if row.target is not None else (0.1 if family.laddered else 0.0)
        rate, runs = runner.detection(family, delta, row.claim)
        out.append({"check": row.check, "family": row.family, "delta": delta, "baseline": base,
                    "detection_rate": rate, "runs": runs, "ok": base == "pass" and rate == 1.0})
    clear_caches()
    return out


def _mdp_text(r: dict, le: str, missed: str) -> str:
    """A row's MDP as text: caught/missed for a fixed or regime family, else the delta ('le' before a floor)."""
    if r["kind"] in ("fixed", "regime"):
        return "caught" if r.get("rejected_at_every_seed") else missed
    return "none" if r["mdp"] is None else (le if r.get("mdp_is_upper_bound") else "") + f"{r['mdp']:g}"


def table(result: dict) -> str:
    """Plain-text power table."""
    lines = [f"{'check':<34} {'family':<24} {'MDP':>8} {'target':>8}  detection rate by delta", "-" * 110]
    for r in result["rows"]:
        if not r["applicable"]:
            lines.append(f"{r['check']:<34} {r['family']:<24} {'n/a':>8} {'':>8}  not applicable: {r['reason']}")
            continue
        mdp = _mdp_text(r, "<=", "MISSED")
        tgt = "" if r["target"] is None else f"{r['target']:g}"
        flag = "" if r["meets_target"] is not False else "  << target missed"
        rates = ", ".join(f"{k}: {v:.2f}" for k, v in r["rates"].items()) or r.get("reason", "")
        name = r["check"] + (f" -> {r['claim']}" if r.get("claim") else "")
        lines.append(f"{name:<34} {r['family']:<24} {mdp:>8} {tgt:>8}  {rates}{flag}")
    lines.append("-" * 110)
    lines.append(f"profile {result['profile']}, seeds {result['seeds']}, {result['seconds']:.0f} s; MDP: smallest "
                 "delta rejected at every seed and both signs")
    return "\n".join(lines)


def markdown(result: dict) -> str:
    """The power table as Markdown (the README's table): one row per (check, family)."""
    lines = ["| check | family | MDP | target | detection rate by delta |", "|---|---|---|---|---|"]
    for r in result["rows"]:
        name = f"`{r['check']}`" + (f" → claim `{r['claim']}`" if r.get("claim") else "")
        if not r["applicable"]:
            lines.append(f"| {name} | {r['family']} | n/a | | not applicable: {r['reason']} |")
            continue
        mdp = _mdp_text(r, "≤ ", "**missed**")
        tgt = "" if r["target"] is None else f"≤ {r['target']:g}" + (" ✓" if r["meets_target"] else " ✗")
        rates = ", ".join(f"{k}: {v:.2f}" for k, v in r["rates"].items())
        lines.append(f"| {name} | {r['family']} | {mdp} | {tgt} | {rates} |")
    return "\n".join(lines)
