"""Paper B model options shared by its checks (THEORY.md, Paper B, "Model").

The defaults (d = 2) give B = QᵀK = diag(1, 3) and V Bᵀ = diag(2, 3), whose dominant eigenspace is
span(e₂), while V = diag(2, 1) has dominant eigenspace span(e₁): the zero-temperature limit and the
finite-β terminal phase (Conjecture 1) then point to different places.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, is_dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from attnverify.checks.params import Param
from attnverify.checks.reason import Number, as_reason, listing, reason
from attnverify.checks.reason_values import joined, number_or_na

if TYPE_CHECKING:
    from attnverify.checks.evidence import Evidence

MODEL_PARAMS = (
    Param("d", int, 2, "dimension d (tokens on the sphere S^{d-1})", low=2),
    Param("Q", "matrix", np.eye(2), "query matrix Q (d x d)"),
    Param("K", "matrix", np.diag([1.0, 3.0]), "key matrix K (d x d)"),
    Param("V", "matrix", np.diag([2.0, 1.0]), "value matrix V (d x d)"),
)

# The paper profile's particle checks use the truncated kernel: at beta = 1000 and 5000 it is 2-3x faster,
# and W2 moves by 3e-6, less than halving rtol moves it (5e-6), so no verdict changes.
KERNEL_PARAM = Param("kernel", str, "dense", "attention kernel: 'dense' (all N^2 pairs) or 'truncated' (pairs "
                     "within log(N/1e-12) of the row maximum; field error <= 2e-12 max|Vx|)",
                     choices=("dense", "truncated"))


def model_matrices(p: dict) -> tuple[np.ndarray, np.ndarray]:
    """(B, V) with B = QᵀK, as float arrays."""
    return np.asarray(p["Q"], float).T @ np.asarray(p["K"], float), np.asarray(p["V"], float)


#: largest |entry| of Q, K and V (validate_model)
MAX_ENTRY = 1e3


def validate_model(p: dict) -> None:
    """Shapes d x d; entries at most MAX_ENTRY in size; the numerics' own limits (attnverify.numerics.validation.model:
    |B| |V| within the double range); the paper's assumptions on (B, V)
    (attnverify.theory.meanfield.check_assumptions); and, when the check sweeps ``betas``, increasing values.

    Why MAX_ENTRY: scaling V by s only speeds the clock (t -> s t) and scaling B by s multiplies beta by s, so the
    checks' fixed horizons (t_max up to 45) and beta sweeps (up to 1e8) assume entries of order 1; at 1e300 the
    flow's quadrature, the field and the Theorem-1 rate overflowed (check ERRORs). 1e3 keeps beta |B| below
    1e11 and the rates below 1e6 per unit time."""
    from attnverify.numerics.validation import model as numerics_model
    from attnverify.theory.meanfield import check_assumptions

    for name in ("Q", "K", "V"):
        if np.shape(p[name]) != (p["d"], p["d"]):
            raise ValueError(f"{name} has shape {np.shape(p[name])}, expected ({p['d']}, {p['d']}) for d = {p['d']}")
        big = float(np.max(np.abs(p[name])))
        if big > MAX_ENTRY:
            raise ValueError(f"{name} has an entry of size {big:.3g} > {MAX_ENTRY:g}: rescale the model (a larger V "
                             "only speeds up time, a larger Q or K raises beta)")
    numerics_model(*model_matrices(p))
    check_assumptions(*model_matrices(p))
    if "betas" in p:
        validate_betas(p["betas"], 2)


#: the least ratio of successive betas: the checks fit slopes in log beta between successive betas (log error
#: against log beta), and closer betas (100000 and 100000.00000000001 have the same logarithm in double precision:
#: the fit divided 0 by 0) leave the slope to rounding
MIN_BETA_RATIO = 1.001


def validate_betas(betas, minimum: int) -> np.ndarray:
    """The beta sweep as a float array: at least ``minimum`` strictly increasing values, each at least
    MIN_BETA_RATIO times the one before (ValueError otherwise)."""
    b = np.array(betas, dtype=float)
    if len(b) < minimum or np.any(np.diff(b) <= 0):
        words = {2: "two", 3: "three", 4: "four"}
        raise ValueError(f"betas must be at least {words.get(minimum, minimum)} increasing values")
    close = np.nonzero(b[1:] < b[:-1] * MIN_BETA_RATIO)[0]
    if len(close):
        lo, hi = float(b[close[0]]), float(b[close[0] + 1])
        raise ValueError(f"betas {lo!r} and {hi!r} are too close: each beta must be at least {MIN_BETA_RATIO:g} x "
                         "the one before (the checks fit slopes in log beta between successive betas; closer ones "
                         "leave the slope to rounding)")
    return b


D3_PARAM = Param("also_d3", bool, False, "also run the comparison on a random non-diagonal d = 3 model whose V B^T "
                 "has a dominant eigenspace of dimension 2 (drawn from the seed; the verdict needs both)")


def d3_model(rng: np.random.Generator) -> dict:
    """A random admissible d = 3 model with dim E = 2: Q = I + 0.3 G, K = I + 0.3 G' (G, G' Gaussian; well
    conditioned, non-diagonal), B = QᵀK, V = S B^{-T} with S = R diag(2, 2, 1) Rᵀ for a Haar rotation R, so that
    V Bᵀ = S (up to rounding) has the double top eigenvalue 2 and the gap 1."""
    Q = np.eye(3) + 0.3 * rng.standard_normal((3, 3))
    K = np.eye(3) + 0.3 * rng.standard_normal((3, 3))
    q, r = np.linalg.qr(rng.standard_normal((3, 3)))
    R = q * np.sign(np.diag(r))
    S = R @ np.diag([2.0, 2.0, 1.0]) @ R.T
    return {"d": 3, "Q": Q, "K": K, "V": S @ np.linalg.inv((Q.T @ K).T)}


def with_d3_case(evaluate, p: dict, ctx, d3_params: dict | None = None) -> "Evidence":
    """Run ``evaluate(p, ctx)`` and, when ``p['also_d3']``, again on :func:`d3_model` (with ``d3_params`` replacing
    the check's own: e.g. a particle check's resolution, chosen again for d = 3); the second run's result goes to
    details['d3_case'], its findings to the first one's ``extra_cases`` (when the findings have that field), and the
    verdict passes only if both pass (observed/threshold stay the first run's)."""
    ev = evaluate(p, ctx)
    if not p.get("also_d3"):
        return ev
    model = d3_model(ctx.rng("d3_model"))
    q = {**p, **(d3_params or {}), **model}
    validate_model(q)
    ev3 = evaluate(q, ctx)
    ev.details["d3_case"] = {
        "model": {k: np.asarray(v).tolist() for k, v in model.items() if k != "d"}, "d": 3, "dim_E": 2,
        "metric": ev3.metric, "observed": ev3.observed, "threshold": ev3.threshold, "passed": bool(ev3.passed),
        "reason": ev3.reason, "details": ev3.details}
    import sympy as sp

    main = as_reason(ev.reason)
    ev.reason = (main if main.items else main.add(".")).item(
        sp.Symbol("d"), " = ", Number(3), " case (random non-diagonal ", *joined(sp.symbols("Q K V")), ", dim E = ",
        Number(2), "): observed ", number_or_na(ev3.observed), " vs threshold ", number_or_na(ev3.threshold), ", ",
        "pass" if ev3.passed else "FAIL")
    ev.passed = bool(ev.passed and ev3.passed)
    if ev3.unresolved and not ev.unresolved:       # the d = 3 case's own text, its parts kept
        ev.unresolved = reason(sp.Symbol("d"), " = ", Number(3), " case: ") + as_reason(ev3.unresolved)
    f = ev.findings
    if is_dataclass(f) and ev3.findings is not None and "extra_cases" in {x.name for x in fields(f)}:
        ev.findings = replace(f, extra_cases=(*f.extra_cases, ev3.findings))
    return ev


# ----------------------------------------------------------------------------------------------
# particle resolution: chosen by the rule, or the user's choice checked against it
# ----------------------------------------------------------------------------------------------
AUTO = 0                  # n_particles = 0: chosen by the resolution rule
N_FLOOR = 500             # default smallest sample an automatic choice takes (its N/2 refinement samples have 250)
BETA_FLOOR = 1.0          # an automatic ladder does not go below beta = 1 (a lowered ladder is respaced above it)


def n_particles_param(help_extra: str = "") -> Param:
    return Param("n_particles", int, AUTO, "particles N (sample of mu_0, attnverify.numerics.meanfield.sphere); 0 = chosen by "
                 "the resolution rule: the smallest N with min_per_window particles per softmax window at the largest "
                 "beta, at least min_particles, at most particle_budget (the beta ladder is lowered when the budget "
                 "cannot meet the rule); a value > 0 is checked against the rule" + help_extra, low=0)


def budget_param(default: int = 1000) -> Param:
    return Param("particle_budget", int, default, "largest N an automatic choice (n_particles = 0) may take: the "
                 "profile's time budget (the particle runs cost ~N^2 per step)", low=10)


def floor_param(default: int = N_FLOOR) -> Param:
    return Param("min_particles", int, default, "smallest N an automatic choice (n_particles = 0) takes, when the "
                 "rule needs fewer (capped at particle_budget)", low=2)


@dataclass(frozen=True)
class Resolution:
    """The particle resolution of a run: ``n_particles``, ``betas``, the particles per softmax window at each beta
    (``per_window``), how they were chosen (``rule``: "given" or "chosen") and one sentence saying so (``text``; the
    same as a typed reason, ``typed``: words, mathematics and numbers)."""

    n_particles: int
    betas: tuple[float, ...]
    per_window: tuple[float, ...]
    min_per_window: float
    rule: str
    text: str
    typed: Any = field(default=None, compare=False)


def _per_particle(B: np.ndarray, beta: float) -> float:
    """Expected particles per softmax window per particle of mu_0 at beta (particles_per_window is linear in N)."""
    from attnverify.numerics.meanfield.sphere import particles_per_window

    return particles_per_window(1, B, float(beta))


def _largest_beta(B: np.ndarray, n: int, min_per_window: float, beta_hi: float) -> float:
    """The largest beta <= beta_hi at which n particles give min_per_window per window (bisection in log beta; the
    count per window decreases in beta)."""
    lo, hi = math.log(1e-3), math.log(beta_hi)
    if n * _per_particle(B, beta_hi) >= min_per_window:
        return beta_hi
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if n * _per_particle(B, math.exp(mid)) >= min_per_window else (lo, mid)
    return math.exp(lo)


def choose_resolution(B: np.ndarray, betas, n_particles: int, min_per_window: float, budget: int,
                      floor: int = N_FLOOR) -> Resolution:
    """The resolution rule: at least ``min_per_window`` particles of mu_0 per softmax window (geodesic radius
    (beta |B^T x|)^{-1/2} around the maximiser, attnverify.numerics.meanfield.sphere.particles_per_window) at the largest beta.

    ``n_particles`` > 0 (the user's or a profile's explicit choice): checked, ValueError with the numbers when it
    breaks the rule. ``n_particles`` = 0: N = the smallest count that meets the rule, at least min(floor, budget);
    when that exceeds ``budget`` the ladder is scaled down by a common factor until N = budget meets it at the top
    (respaced geometrically from BETA_FLOOR when the scaled ladder would start below it), ValueError when not even
    three betas above BETA_FLOOR fit."""
    B = np.asarray(B, dtype=float)
    b = np.array(betas, dtype=float)
    sym_n, sym_beta, geq = _maths()
    if n_particles != AUTO:
        ppw = n_particles * _per_particle(B, b[-1])
        if ppw < min_per_window:
            raise ValueError(f"n_particles = {n_particles} gives {ppw:.2f} particles per softmax window at "
                             f"beta = {b[-1]:g} (< min_per_window = {min_per_window:g}): raise n_particles to at least "
                             f"{math.ceil(min_per_window / _per_particle(B, b[-1]))}, lower the largest beta to "
                             f"{_largest_beta(B, n_particles, min_per_window, b[-1]):.3g}, or set n_particles = 0 "
                             "(chosen by the rule)")
        return _resolution(B, n_particles, b, min_per_window, "given",
                           f"N = {n_particles} as given ({ppw:.2f} particles per window at beta = {b[-1]:g})",
                           _said(n_particles, " as given (", fixed(ppw, 2), " particles per window at ", sym_beta, " = ",
                                 Number(b[-1], digits=6), ")"))
    need = math.ceil(min_per_window / _per_particle(B, b[-1]))
    if need <= budget:
        n = max(need, min(floor, budget))
        return _resolution(B, n, b, min_per_window, "chosen",
                           f"N = {n} chosen by the resolution rule (>= {min_per_window:g} particles per softmax window "
                           f"at beta = {b[-1]:g} needs N >= {need}; at least {min(floor, budget)})",
                           _said(n, " chosen by the resolution rule (", geq, " ", Number(min_per_window, digits=6),
                                 " particles per softmax window at ", sym_beta, " = ", Number(b[-1], digits=6), " needs ",
                                 sym_n, " ", geq, " ", Number(need), "; at least ", Number(min(floor, budget)), ")"))
    top = _largest_beta(B, budget, min_per_window, b[-1])
    scaled = b * (top / b[-1])
    if scaled[0] < BETA_FLOOR:
        if top < 3 * BETA_FLOOR:
            raise ValueError(f"particle_budget = {budget} particles resolve the softmax window ({min_per_window:g} per "
                             f"window) only up to beta = {top:.3g} at d = {B.shape[0]}: too low for a ladder of betas "
                             "above 1; raise particle_budget or lower min_per_window")
        scaled = np.geomspace(BETA_FLOOR, top, len(b))
    scaled = np.array([float(f"{x:.4g}") for x in scaled])
    while budget * _per_particle(B, scaled[-1]) < min_per_window:          # rounding to 4 digits went up: step down
        scaled[-1] = float(f"{scaled[-1] * 0.999:.4g}")
    return _resolution(B, budget, scaled, min_per_window, "chosen",
                       f"N = {budget} (the particle budget) and betas lowered from {', '.join(f'{x:g}' for x in b)} "
                       f"to {', '.join(f'{x:g}' for x in scaled)}: at beta = {b[-1]:g} the rule ({min_per_window:g} "
                       f"particles per softmax window) needs N >= {need}, more than the budget",
                       _said(budget, " (the particle budget) and betas lowered from ", listing(b, digits=6), " to ",
                             listing(scaled, digits=6), ": at ", sym_beta, " = ", Number(b[-1], digits=6), " the rule (",
                             Number(min_per_window, digits=6), " particles per softmax window) needs ", sym_n, " ", geq,
                             " ", Number(need), ", more than the budget"))


def fixed_resolution(B: np.ndarray, betas, n: int, min_per_window: float, why: str) -> Resolution:
    """A resolution not held to the rule (``rule`` = "fixed"), stated with its particles per window and ``why``."""
    per = _per_particle(B, float(betas[-1])) * n
    sym_beta = _maths()[1]
    return _resolution(B, n, np.array(betas, dtype=float), min_per_window, "fixed",
                       f"N = {n} ({per:.2g} particles per softmax window at beta = {betas[-1]:g}; {why})",
                       _said(n, " (", Number(per, digits=2), " particles per softmax window at ", sym_beta, " = ",
                             Number(float(betas[-1]), digits=6), "; ", why, ")"))


def _resolution(B: np.ndarray, n: int, betas: np.ndarray, min_per_window: float, rule: str, text: str,
                typed: Any = None) -> Resolution:
    per = tuple(float(n * _per_particle(B, x)) for x in betas)
    return Resolution(int(n), tuple(float(x) for x in betas), per, float(min_per_window), rule, text, typed)


def _maths() -> tuple:
    """The mathematics of the resolution's sentence: N, beta and >= (SymPy is imported here, when a sentence is
    made, not with this module: the listing of checks loads this module without it)."""
    import sympy as sp

    from attnverify.checks.reason import Math

    return Math(sp.Symbol("N")), Math(sp.Symbol("beta")), Math(r"\geq")


def _said(n: int, *parts: Any):
    """The typed sentence "N = n" followed by ``parts``."""
    return reason(_maths()[0], " = ", Number(int(n)), *parts)


def fixed(x: float, decimals: int) -> Any:
    """``x`` as a Number part with the significant digits of ``decimals`` decimal places (the old ``:.{decimals}f``);
    "n/a" when it is not finite."""
    if not math.isfinite(x):
        return "n/a"
    return Number(float(x), digits=max(1, min(17, (math.floor(math.log10(abs(x))) + 1 if x else 1) + decimals)))
