"""The power self-test: how small an error in a check's closed form the check rejects.

A *perturbation family* changes the analytic side of the checks by a size delta, through the same code path as
the mutants (:func:`attnverify.mutation.injected`: the theory functions are replaced in every module that
references them, caches cleared), while the simulation runs at the true parameters:

- a *scale* family multiplies a closed form by (1 + delta) (J, F, the nuisance mass, X_inf, the rate c);
- a *parameter-mismatch* family evaluates every closed form of a paper at a wrong parameter: Paper A at
  theta (1 + delta), beta (1 + delta) or sigma (1 + delta) (every SymPy closed form of attnverify.theory.signal_recovery has
  the symbol substituted, every function of numeric ``params`` gets the changed value); Paper B at a rotated
  model (B and V rotated by the angle delta, so the eigenspaces of V B^T turn by delta while its spectrum is
  kept) or with the top eigenvalue of V B^T raised by delta mu_1;
- a *regime* family evaluates the theory at a theta on the other side of the threshold theta* (theta ->
  theta*^2/theta) against the simulation at the true theta;
- a *fixed* family is one wrong closed form (e.g. F without its (1 - rho^2) factor): no ladder, rejected or not.

For a (check, family) the *minimum detectable perturbation* (MDP) is the smallest delta of the ladder that is
rejected (verdict ``fail``, or ``error`` that is not a crash of the plumbing) at every seed tried, for both
signs of a scale or mismatch. The ladder is walked from the check's target (or 0.1): downwards while every run
rejects, upwards while some run passes; the walk down stops a decade below the target (at 1e-3 for a row without
target), and the MDP is then reported as an upper bound ('<='). That assumes the rejection rate does not decrease with delta (the
natural monotonicity of a test's power); the detection rate of every delta tried is reported.

Each seed's unperturbed run must pass (the baseline): a perturbation is only meaningful against a check that
accepts the truth. The numeric side of a check does not depend on the perturbation, so its tasks are memoised
across the runs of one (check, seed) (``Context.map``'s memo); only the analytic side is recomputed.
"""
from __future__ import annotations

import functools
import inspect
import math
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from attnverify.mutation import Mutant, clear_caches, injected, rejects, result_row

LADDER = (1.0, 0.5, 0.2, 0.1, 0.05, 0.02, 0.01, 5e-3, 2e-3, 1e-3, 1e-4, 1e-5, 1e-6)
DEPTH = 10.0     # the walk down stops at target / DEPTH (at 1e-3 without a target): the MDP is then '<=' that
SR = "attnverify.theory.signal_recovery"
MF = "attnverify.theory.mean_field"

# Functions of attnverify.theory.signal_recovery that are not closed forms of the model (derivation records, the symbolic
# reduction identity for an arbitrary G, the Gaussian moments, the generic root isolator, the search range).
_NOT_CLOSED_FORMS = {"derivation", "reduction_identity", "gaussian_moments", "isolate_roots", "default_theta_max"}


# ---------------------------------------------------------------------------------------------------------------
# Wrapping: the outermost call of a wrapped theory function is perturbed; the calls it makes itself are not
# (otherwise reduced_field, which differentiates population_objective, would see theta(1 + delta)^2).
# ---------------------------------------------------------------------------------------------------------------
_depth = [0]


def _outermost(original: Callable, perturb_call: Callable[[Callable, tuple, dict], Any]) -> Callable:
    """A wrapper of ``original`` that applies ``perturb_call(original, args, kwargs)`` at the outermost level."""

    @functools.wraps(original)
    def wrapped(*args, **kwargs):
        if _depth[0] > 0:
            return original(*args, **kwargs)
        _depth[0] += 1
        try:
            return perturb_call(original, args, kwargs)
        finally:
            _depth[0] -= 1
    return wrapped


def _scale_result(factor: float) -> Callable[[Callable], Callable]:
    """make(original): the original's result times ``factor`` (SymPy expressions, matrices, arrays, floats)."""
    def make(original: Callable) -> Callable:
        def call(fn, args, kwargs):
            out = fn(*args, **kwargs)
            return out * factor
        return _outermost(original, call)
    return make


def _flow_time_scale(factor: float) -> Callable[[Callable], Callable]:
    """closed_form_flow(x0, B, V, times) at times x factor: the flow of the field X_inf x factor."""
    def make(original: Callable) -> Callable:
        def call(fn, args, kwargs):
            bound = inspect.signature(fn).bind(*args, **kwargs)
            bound.arguments["times"] = np.asarray(bound.arguments["times"], dtype=float) * factor
            return fn(*bound.args, **bound.kwargs)
        return _outermost(original, call)
    return make


def _module_functions(module_name: str, accept: Callable[[str, inspect.Signature], bool]) -> list[str]:
    """Public functions defined in ``module_name`` whose name and signature ``accept``."""
    import importlib

    module = importlib.import_module(module_name)
    names = []
    for name, value in vars(module).items():
        if name.startswith("_") or not inspect.isfunction(inspect.unwrap(value)) and not hasattr(value, "cache_clear"):
            continue
        if getattr(value, "__module__", None) != module_name or not callable(value):
            continue
        try:
            sig = inspect.signature(value)
        except (TypeError, ValueError):
            continue
        if accept(name, sig):
            names.append(name)
    return names


def _signal_param_mismatch(name: str, to_value: Callable[[float], float], to_expr: Callable[[Any], Any]) -> list[Mutant]:
    """Every closed form of Paper A evaluated with parameter ``name`` replaced: symbol -> to_expr(symbol) in the
    SymPy results, params[name] -> to_value(params[name]) for the functions of numeric parameters."""
    import sympy as sp

    import attnverify.theory.signal_recovery as S

    sym = getattr(S, name)

    def make(original: Callable) -> Callable:
        sig = inspect.signature(original)

        def call(fn, args, kwargs):
            bound = sig.bind(*args, **kwargs)
            if "params" in bound.arguments:
                params = dict(bound.arguments["params"])
                params[name] = to_value(float(params[name]))
                bound.arguments["params"] = params
                return fn(*bound.args, **bound.kwargs)
            out = fn(*args, **kwargs)
            return out.subs(sym, to_expr(sym)) if isinstance(out, sp.Basic) else out
        return _outermost(original, call)

    names = _module_functions(SR, lambda n, s: n not in _NOT_CLOSED_FORMS)
    return [Mutant(f"{name}_mismatch:{fn}", SR, fn, make, (), "") for fn in names]


def _rotation(d: int, angle: float) -> np.ndarray:
    """Rotation by ``angle`` in the (e_1, e_2) plane of R^d."""
    R = np.eye(d)
    c, s = math.cos(angle), math.sin(angle)
    R[:2, :2] = [[c, -s], [s, c]]
    return R


def _matrix_mismatch(transform: Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]],
                     value_only: bool = False) -> list[Mutant]:
    """Every Paper B theory function with matrix arguments B, V evaluated at transform(B, V); with
    ``value_only`` also the functions of V alone (the terminal phase), at the V of transform(I, V)."""
    import sympy as sp

    def make(original: Callable) -> Callable:
        sig = inspect.signature(original)

        def call(fn, args, kwargs):
            bound = sig.bind(*args, **kwargs)
            if "B" not in bound.arguments:
                Vn = np.asarray(bound.arguments["V"], dtype=float)
                bound.arguments["V"] = transform(np.eye(Vn.shape[0]), Vn)[1]
                return fn(*bound.args, **bound.kwargs)
            B, V = bound.arguments["B"], bound.arguments["V"]
            symbolic = isinstance(B, sp.MatrixBase) or isinstance(V, sp.MatrixBase)
            Bn = np.array(B.tolist(), dtype=float) if isinstance(B, sp.MatrixBase) else np.asarray(B, dtype=float)
            Vn = np.array(V.tolist(), dtype=float) if isinstance(V, sp.MatrixBase) else np.asarray(V, dtype=float)
            B2, V2 = transform(Bn, Vn)
            bound.arguments["B"], bound.arguments["V"] = ((sp.Matrix(B2), sp.Matrix(V2)) if symbolic else (B2, V2))
            return fn(*bound.args, **bound.kwargs)
        return _outermost(original, call)

    names = _module_functions(MF, lambda n, s: "V" in s.parameters and ("B" in s.parameters or value_only)
                              and n != "check_assumptions")
    return [Mutant(f"matrix_mismatch:{fn}", MF, fn, make, (), "") for fn in names]


def _scale_entry(key: str, factor: float) -> Callable[[Callable], Callable]:
    """make(original): the original's dict result with entry ``key`` times ``factor``."""
    def make(original: Callable) -> Callable:
        def call(fn, args, kwargs):
            out = dict(fn(*args, **kwargs))
            out[key] = out[key] * factor
            return out
        return _outermost(original, call)
    return make


def _beta_scale(factor: float) -> Callable[[Callable], Callable]:
    """make(original): the original evaluated at beta x factor."""
    def make(original: Callable) -> Callable:
        sig = inspect.signature(original)

        def call(fn, args, kwargs):
            bound = sig.bind(*args, **kwargs)
            bound.arguments["beta"] = np.asarray(bound.arguments["beta"], dtype=float) * factor
            return fn(*bound.args, **bound.kwargs)
        return _outermost(original, call)
    return make


def _rotate_model(delta: float) -> Callable:
    def transform(B: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        Rm = _rotation(B.shape[0], delta)
        return Rm @ B @ Rm.T, Rm @ V @ Rm.T
    return transform


def _raise_top_eigenvalue(delta: float) -> Callable:
    """V B^T -> V B^T + delta mu_1 P_E (P_E the orthogonal projector on the top eigenspace), i.e.
    V -> V + delta mu_1 P_E B^{-T}: the gap and the rate change, E does not."""
    def transform(B: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        A = V @ B.T
        lam, U = np.linalg.eigh((A + A.T) / 2)
        top = U[:, np.isclose(lam, lam[-1], rtol=1e-9, atol=0.0)]
        P = top @ top.T
        return B, V + delta * lam[-1] * P @ np.linalg.inv(B.T)
    return transform


def _theta_star(check_params: dict | None = None) -> float:
    """theta* (fixed sign, finite-size terms) at the check's model point (beta, sigma, R, L, d; the shared
    defaults for those it does not set): below it -xi repels, above it attracts."""
    import attnverify.theory.signal_recovery as S

    from attnverify.checks.signal._model import MODEL_PARAMS

    keys = ("theta", "beta", "sigma", "R", "L", "d")
    params = {p.name: p.default for p in MODEL_PARAMS if p.name in keys}
    params.update({k: v for k, v in (check_params or {}).items() if k in keys})
    value = S.minus_xi_threshold(params, "fixed", True)
    if value is None:
        raise RuntimeError("no theta* at the default parameters: the regime family has no other side")
    return float(value)


# ---------------------------------------------------------------------------------------------------------------
# The families
# ---------------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Family:
    """A way to perturb the analytic side; ``build(delta, params)`` gives the replacements for a signed delta
    and the check's parameters (``kind`` "scale"/"mismatch" walk the ladder with both signs; "fixed"/"regime"
    ignore delta)."""

    name: str
    kind: str
    description: str
    build: Callable[..., list[Mutant]]

    def mutants(self, delta: float, params: dict | None = None) -> list[Mutant]:
        if self.kind == "regime":
            return self.build(delta, params)
        return self.build(delta)

    @property
    def laddered(self) -> bool:
        return self.kind in ("scale", "mismatch")


def _fixed(mutant_name: str) -> Callable[[float], list[Mutant]]:
    def build(_delta: float) -> list[Mutant]:
        from attnverify.mutants import by_name

        return [by_name(mutant_name)]
    return build


def _regime(_delta: float, params: dict | None = None) -> list[Mutant]:
    ts = _theta_star(params)
    return _signal_param_mismatch("theta", lambda th: ts * ts / th, lambda sym: ts * ts / sym)


FAMILIES: dict[str, Family] = {f.name: f for f in (
    Family("J_scale", "scale", "J(rho) x (1 + delta) (attnverify.theory.signal_recovery.population_objective)",
           lambda dl: [Mutant("J_scale", SR, "population_objective", _scale_result(1 + dl), (), "")]),
    Family("F_scale", "scale", "F(rho) x (1 + delta) (attnverify.theory.signal_recovery.reduced_field)",
           lambda dl: [Mutant("F_scale", SR, "reduced_field", _scale_result(1 + dl), (), "")]),
    Family("mass_scale", "scale", "nuisance mass 1 - w(rho) x (1 + delta) (attnverify.theory.signal_recovery.nuisance_mass)",
           lambda dl: [Mutant("mass_scale", SR, "nuisance_mass", _scale_result(1 + dl), (), "")]),
    Family("theta_mismatch", "mismatch", "every Paper A closed form at theta (1 + delta)",
           lambda dl: _signal_param_mismatch("theta", lambda v: v * (1 + dl), lambda s: s * (1 + dl))),
    Family("beta_mismatch", "mismatch", "every Paper A closed form at beta (1 + delta)",
           lambda dl: _signal_param_mismatch("beta", lambda v: v * (1 + dl), lambda s: s * (1 + dl))),
    Family("sigma_mismatch", "mismatch", "every Paper A closed form at sigma (1 + delta)",
           lambda dl: _signal_param_mismatch("sigma", lambda v: v * (1 + dl), lambda s: s * (1 + dl))),
    Family("theta_other_side", "regime", "Paper A theory at theta*^2/theta, the other side of theta* "
           "(-xi attracting <-> repelling)", _regime),
    Family("F_without_sphere_factor", "fixed", "F = J'(rho) without its (1 - rho^2) factor",
           _fixed("F_missing_sphere_factor")),
    Family("X_inf_scale", "scale", "zero-temperature field X_inf x (1 + delta) (and its flow at times x (1 + "
           "delta))", lambda dl: [Mutant("X_inf_scale", MF, "zero_temperature_field", _scale_result(1 + dl), (), ""),
                                  Mutant("flow_time_scale", MF, "closed_form_flow", _flow_time_scale(1 + dl), (), "")]),
    Family("rate_scale", "scale", "exponential rate c x (1 + delta) (attnverify.theory.mean_field.convergence_rate)",
           lambda dl: [Mutant("rate_scale", MF, "convergence_rate", _scale_result(1 + dl), (), "")]),
    Family("model_rotation", "mismatch", "Paper B theory at B, V rotated by the angle delta (the eigenspaces of "
           "V B^T and of V turn by delta)", lambda dl: _matrix_mismatch(_rotate_model(dl), value_only=True)),
    Family("C1_scale", "scale", "the growth constant C1 of Theorem 1 x (1 + delta) "
           "(attnverify.theory.mean_field.growth_constant)",
           lambda dl: [Mutant("C1_scale", MF, "growth_constant", _scale_entry("C1", 1 + dl), (), "")]),
    Family("theorem1_beta_mismatch", "mismatch", "the Theorem-1 rate s(beta) evaluated at beta (1 + delta) "
           "(attnverify.theory.mean_field.theorem1_rate)",
           lambda dl: [Mutant("theorem1_beta", MF, "theorem1_rate", _beta_scale(1 + dl), (), "")]),
    Family("axis_rate_scale", "scale", "the terminal-phase axis rate v1 - v2 x (1 + delta) "
           "(attnverify.theory.mean_field.terminal_rates)",
           lambda dl: [Mutant("axis_rate_scale", MF, "terminal_rates", _scale_entry("axis_rate", 1 + dl), (), "")]),
    Family("top_eigenvalue", "mismatch", "Paper B theory with the top eigenvalue of V B^T raised by delta mu_1",
           lambda dl: _matrix_mismatch(_raise_top_eigenvalue(dl))),
    Family("Pi_onto_V", "fixed", "Pi onto the dominant eigenspace of V instead of V B^T", _fixed("Pi_onto_V")),
)}


@dataclass(frozen=True)
class Row:
    """A (check, family) row of the power table: ``target`` the required MDP (None: measured only), or
    ``not_applicable`` with the reason the family cannot move this check's verdict by design. With ``claim``, a
    run rejects when that claim's verdict (from this check's evidence) is ``refuted``, not when the check fails:
    the power of a claim of a paper (an upper bound judged on its constants) rather than of our derivation."""

    check: str
    family: str
    target: float | None = None
    not_applicable: str = ""
    smoke: bool = False
    claim: str = ""


_SCALE_ZEROS = "a scale of F cannot move its zeros or the sign of F' at them: the classification is unchanged"
PLAN: tuple[Row, ...] = (
    Row("signal.objective_vs_montecarlo", "J_scale", 0.01, smoke=True),
    Row("signal.objective_vs_montecarlo", "theta_mismatch", 0.05),
    Row("signal.objective_vs_montecarlo", "beta_mismatch"),
    Row("signal.objective_vs_montecarlo", "sigma_mismatch"),
    Row("signal.reduced_field_identity", "F_scale", 0.10, smoke=True),
    Row("signal.reduced_field_identity", "F_without_sphere_factor"),
    Row("signal.reduced_field_identity", "theta_mismatch"),
    Row("signal.equilibria_stability", "theta_other_side", smoke=True),
    Row("signal.equilibria_stability", "theta_mismatch"),
    Row("signal.equilibria_stability", "F_scale", not_applicable=_SCALE_ZEROS),
    Row("signal.ode_tracks_sga", "F_scale", 0.10, smoke=True),
    Row("signal.ode_tracks_sga", "F_without_sphere_factor"),
    Row("signal.ode_tracks_sga", "theta_mismatch"),
    Row("signal.attention_on_noise", "theta_mismatch", 0.02, smoke=True),
    Row("signal.attention_on_noise", "mass_scale"),
    Row("signal.attention_on_noise", "beta_mismatch"),
    Row("signal.low_temperature", "beta_mismatch", 0.01, smoke=True),
    Row("signal.low_temperature", "J_scale"),
    Row("signal.low_temperature", "theta_mismatch"),
    Row("signal.alignment_30_runs", "F_scale", 0.10, smoke=True),
    Row("signal.alignment_30_runs", "F_without_sphere_factor"),
    Row("signal.alignment_30_runs", "theta_mismatch"),
    Row("signal.sign_ambiguity", "theta_other_side", smoke=True),
    Row("signal.sign_ambiguity", "theta_mismatch"),
    Row("signal.sign_ambiguity", "F_scale", not_applicable=_SCALE_ZEROS),
    Row("meanfield.zero_temperature_limit", "X_inf_scale", 1e-3, smoke=True),
    Row("meanfield.zero_temperature_limit", "model_rotation"),
    Row("meanfield.zero_temperature_flow", "X_inf_scale", 1e-3, smoke=True),
    Row("meanfield.zero_temperature_flow", "model_rotation"),
    Row("meanfield.projection_stationary", "X_inf_scale", 1e-3),
    Row("meanfield.projection_stationary", "rate_scale", 5e-3, smoke=True),
    Row("meanfield.projection_stationary", "model_rotation"),
    Row("meanfield.projection_stationary", "top_eigenvalue"),
    Row("meanfield.w2_bound", "C1_scale"),
    Row("meanfield.w2_bound", "X_inf_scale"),
    Row("meanfield.w2_bound", "model_rotation", smoke=True),
    Row("meanfield.w2_bound", "Pi_onto_V"),
    Row("meanfield.w2_bound", "rate_scale", not_applicable="the check measures the two parts of the triangle "
        "inequality and does not read c; the claim B.theorem1 judges c (its own row)"),
    Row("meanfield.w2_bound", "rate_scale", claim="B.theorem1"),
    Row("meanfield.w2_bound", "theorem1_beta_mismatch", claim="B.theorem1"),
    Row("meanfield.terminal_phase", "axis_rate_scale"),
    Row("meanfield.terminal_phase", "model_rotation", smoke=True),
    Row("meanfield.terminal_phase", "X_inf_scale", not_applicable="Conjecture 1 is about the finite-beta terminal "
        "phase (the dominant eigenspace of V); the zero-temperature field does not enter its prediction"),
)


# ---------------------------------------------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------------------------------------------
@contextmanager
def perturbed(family: Family, delta: float, params: dict | None = None) -> Iterator[None]:
    """Within the block the analytic side is perturbed by ``family`` at the signed ``delta`` (``params``: the
    check's parameters, for the regime family's threshold)."""
    with ExitStack() as stack:
        for m in family.mutants(delta, params):
            stack.enter_context(injected(m))
        yield


def _claim_verdict(claim_id: str, result) -> str:
    """The verdict of the claim ``claim_id`` from one check's result (evaluated inside the perturbation, as a
    run of the audit would)."""
    from attnverify.checks.claims import CLAIMS, evaluate_claim

    return evaluate_claim(CLAIMS[claim_id], {result.id: result}).verdict


def _rejected(result) -> bool:
    """The perturbed closed form is rejected (attnverify.mutation.rejects: the mutant self-test's rule)."""
    return rejects(result_row(result))


class _Runner:
    """Runs one check at fixed seeds, with the numeric side memoised per seed."""

    def __init__(self, check_id: str, seeds: Sequence[int], profile: str) -> None:
        from attnverify.checks.runner import plan

        (self.check, self.params), = plan([check_id], profile=profile)
        self.seeds = list(seeds)
        self.profile = profile
        self.memo: dict[int, dict] = {s: {} for s in self.seeds}
        self.runs = 0

    def run(self, seed: int):
        from attnverify.checks.runner import run_one

        self.runs += 1
        return run_one(self.check, self.params, seed=seed, profile=self.profile, memo=self.memo[seed])

    def baseline(self) -> dict[int, str]:
        clear_caches()
        return {s: self.run(s).verdict for s in self.seeds}

    def detection(self, family: Family, delta: float, claim: str = "") -> tuple[float, list[dict]]:
        """Fraction of (sign, seed) runs rejected at ``delta`` (with ``claim``: that claim refuted); the runs."""
        signs = (1.0, -1.0) if family.laddered else (1.0,)
        runs = []
        for sgn in signs:
            with perturbed(family, sgn * delta, self.params):
                for s in self.seeds:
                    r = self.run(s)
                    row = {"delta": sgn * delta, "seed": s, "verdict": r.verdict, "observed": r.observed,
                           "threshold": r.threshold, "error": r.error}
                    if claim:
                        row["claim_verdict"] = _claim_verdict(claim, r)
                        row["rejected"] = row["claim_verdict"] == "refuted"
                    else:
                        row["rejected"] = _rejected(r)
                    runs.append(row)
        return sum(x["rejected"] for x in runs) / len(runs), runs


def measure_row(row: Row, runner: _Runner, ladder: Sequence[float] = LADDER) -> dict:
    """The power of one (check, family): MDP, the detection rate of every delta tried, the runs."""
    family = FAMILIES[row.family]
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


def power_of_check(check_id: str, rows_plan: Sequence[Row], seeds: Sequence[int], profile: str,
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
            rows.append({"check": check_id, "family": r.family, "kind": FAMILIES[r.family].kind,
                         "description": FAMILIES[r.family].description, "target": r.target, "applicable": True,
                         "mdp": None, "meets_target": False if r.target is not None else None, "rates": {},
                         "reason": f"baseline does not pass at every seed: {baseline}"})
            continue
        rows.append(measure_row(r, runner, ladder))
    clear_caches()
    return baseline, rows


def power(check_ids: Sequence[str] | None = None, *, seeds: Sequence[int] = range(5), profile: str = "quick",
          families: Sequence[str] | None = None, progress: Callable[[str], None] | None = None,
          ladder: Sequence[float] = LADDER, jobs: int = 1) -> dict:
    """The power table of the selected checks (all when None): one row per (check, family) of :data:`PLAN`.

    ``jobs`` > 1 measures that many checks at once in worker processes (each injects its own perturbations)."""
    rows_plan = [r for r in PLAN if (not check_ids or r.check in check_ids)
                 and (not families or r.family in families)]
    start = time.perf_counter()
    ids = list(dict.fromkeys(r.check for r in rows_plan))
    work = [(cid, [r for r in rows_plan if r.check == cid], list(seeds), profile, tuple(ladder)) for cid in ids]
    if jobs > 1 and len(work) > 1:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("fork")) as pool:
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


def smoke(check_ids: Sequence[str] | None = None, *, seed: int = 0, profile: str = "quick") -> list[dict]:
    """One family per check (the ``smoke`` rows of :data:`PLAN`) at its target delta (both signs) or its fixed
    wrong closed form, at one seed: each must be rejected, and the unperturbed check must pass."""
    out = []
    for row in PLAN:
        if not row.smoke or (check_ids and row.check not in check_ids):
            continue
        runner = _Runner(row.check, [seed], profile)
        base = runner.baseline()[seed]
        family = FAMILIES[row.family]
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
