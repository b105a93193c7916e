r"""What the generated checks of a model file share: the model's parameters as check parameters, the overlap grids,
the validation of a check's parameters before any work, and the z-test family.

Every generated check takes the model's parameters (the file's defaults and domains, ``--set`` as for any check),
so it runs at the model's point; the sizes it simulates are its own (``Ls``, ``L_sim``): the mixture's fractions
n_c / L at the model's values are kept while the sequence length grows (attnverify.checks.engine._bridge).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np
import sympy as sp

from attnverify.checks.engine._bridge import scaled_values
from attnverify.checks.engine._numerics import run_grid
from attnverify.checks.engine._settings import with_settings
from attnverify.checks.engine._sizes import defined_at, expansion_ratio
from attnverify.checks.stats import MAX_EXPANSION_RATIO, MAX_REMAINDER_OVER_SE, MEASURED_SE
from attnverify.checks.params import Param
from attnverify.checks.reason import Math, Number, Reason, reason
from attnverify.checks.stats import bonferroni_z, normal_equivalent
from attnverify.theory.engine.derive import model_values

LS = Param("Ls", "ints", (250, 500, 1000), "the sequence lengths simulated (the model's mixture fractions kept)",
           low=2)
N_SEQ = Param("n_sequences", int, 4000, "Monte Carlo sequences per length", low=50)
Z_LEVEL = Param("z_level", float, 1e-3, "family-wise false-alarm rate of the check's z-tests", low=0.0, high=1.0,
                low_open=True, high_open=True)


def register(paper, *, name: str, compares: str, params: Sequence[Param], run, validate, formulas: Sequence[str] = (),
             paper_profile: dict | None = None) -> str:
    """Register the template ``run`` as the check ``<model>.<name>`` of the model-file ``paper`` (its theory and
    numerics objects as the check's arguments), with the defaults the file's ``[checks.<name>]`` sets
    (attnverify.checks.engine._settings); returns the id."""
    from attnverify.checks.registry import check

    cid = f"{paper.model}.{name}"
    params, paper_profile = with_settings(paper.model_object, name, params, paper_profile, validate)
    check(id=cid, compares=compares, source=f"model file {paper.file_name}", params=params,
          paper_profile=paper_profile, validate=validate, formulas=formulas, theory=paper.theory_object,
          numerics=paper.numerics_object)(run)
    return cid


def model_params(model) -> list[Param]:
    """The model's parameters as check parameters (defaults and domains of the file)."""
    out = []
    for p in model.parameters:
        kind = int if p.integer else float
        default = int(p.default) if p.integer else float(p.default)
        what = p.description or ("the sequence length; with the counts it fixes the mixture's fractions n_c / L, "
                                 "which the checks keep at the lengths they simulate" if p.name == "L" else
                                 "the ambient dimension" if p.name == "d" else "a parameter of the model")
        out.append(Param(p.name, kind, default, f"{what} (model file; domain {p.domain_text})",
                         low=None if p.lo is None else float(p.lo), high=None if p.hi is None else float(p.hi),
                         low_open=p.strict, high_open=p.strict_max))
    return out


def model_point(model, p: Mapping) -> dict:
    """The model's parameter values among a check's parameters ``p``."""
    names = {q.name for q in model.parameters}
    return {k: v for k, v in p.items() if k in names}


def field_function(theory, values: Mapping, model, scale: float = 1.0, name: str = "F_finite"):
    """scale * the field ``name`` (F_finite, or F_limit) of ``theory`` at the parameter ``values``, as a function of
    overlap points (..., k) -> (..., k) (vectorised: the mean path evaluates its difference stencil in one call)."""
    names = [f"rho_{d}" for d in model.directions]
    f = theory.numeric(name)
    floats = {name: float(x) for name, x in values.items()}

    def F(m):
        m = np.asarray(m, dtype=float)
        return scale * np.reshape(f(floats, **{n: m[..., j] for j, n in enumerate(names)}), m.shape)
    return F


def standard_grid(k: int, boundary: bool = True) -> np.ndarray:
    """Overlap points in the closed unit ball: the origin, +-0.6 e_j, (with ``boundary``) +-e_j, and for k >= 2 the
    diagonal 0.7 (1, ..., 1)/sqrt(k); k = 1 with ``boundary``: -1, -0.6, 0, 0.6, 1; without: 7 points in
    [-0.8, 0.8]."""
    if k == 1:
        return (np.array([-1.0, -0.6, 0.0, 0.6, 1.0]) if boundary else np.linspace(-0.8, 0.8, 7))[:, None]
    eye = np.eye(k)
    pts = [np.zeros(k)] + [s * 0.6 * e for e in eye for s in (1, -1)]
    if boundary:
        pts += [s * e for e in eye for s in (1, -1)]
    pts.append(0.7 * np.ones(k) / np.sqrt(k))
    return np.array(pts)


def check_grid(rhos, k: int) -> np.ndarray:
    """``rhos`` as an (r, k) array in the closed unit ball (ValueError naming the problem otherwise)."""
    arr = np.asarray(rhos, dtype=float)
    if arr.ndim != 2 or arr.shape[1] != k:
        raise ValueError(f"rhos: expected rows of {k} overlap(s), got shape {arr.shape}")
    norm2 = np.einsum("rk,rk->r", arr, arr)
    if np.any(norm2 > 1 + 1e-12):
        raise ValueError(f"rhos: every point needs sum of squares <= 1 (a unit query), got {norm2.max():.6g}")
    return arr


def coordinates(model, rhos: np.ndarray) -> dict[str, np.ndarray]:
    """The theory's coordinate names (rho_<dir>) -> their values on the grid."""
    return {f"rho_{n}": rhos[:, j] for j, n in enumerate(model.directions)}


def family_z(z: Sequence[float] | np.ndarray, level: float) -> tuple[float, float, int]:
    """(max |z|, the Bonferroni threshold for the family at family-wise rate ``level``, family size)."""
    z = np.abs(np.concatenate([np.ravel(x) for x in z])) if len(z) else np.zeros(0)
    m = max(1, z.size)
    return (float(z.max()) if z.size else 0.0), bonferroni_z(level, m), m


#: a (point, L) outside the delta method's range everywhere: the unresolved text of the finite-size checks
NOTHING_IN_RANGE = reason("no (point, ", Math(sp.Symbol("L")), ") is inside the delta method's range at these sizes: "
                          "raise Ls")


def power_rule(passed: bool, z_power: Sequence[np.ndarray], z_star: float, what: str | Reason,
               remedy: str | Reason) -> tuple[float, Reason | None]:
    """The power rule of a check that passed its family: the z-scores ``z_power`` of a wrong alternative (the limit
    alone, the zero field) must exceed the threshold somewhere. Returns (their max |z|, the ``unresolved`` reason
    or None): nothing compared, or ``what`` not rejected (``remedy`` says which size to change)."""
    z = np.concatenate([np.ravel(x) for x in z_power]) if len(z_power) else np.zeros(0)
    top = float(np.max(np.abs(z))) if z.size else 0.0
    if passed and not z.size:
        return top, NOTHING_IN_RANGE
    if passed and top <= z_star:
        return top, reason(what, " is not rejected (max ", Math(sp.Abs(sp.Symbol("z"))), " ", Number(top, digits=3),
                           " ", Math(r"\leq"), " ", Number(z_star, digits=3), "): ", remedy)
    return top, None


#: the floating-point rounding of a Monte Carlo mean or a closed form evaluated in float64, relative to 1 + |value|:
#: a few ulps of each of the sums the estimator and the closed form take, 64 eps = 1.4e-14 (measured: 6 eps on a
#: mass of 1 from tokens of standard deviation 0.001, whose Monte Carlo standard error is 1e-17)
ROUNDING = 64 * float(np.finfo(float).eps)


def with_rounding(se: np.ndarray, value: np.ndarray) -> np.ndarray:
    """The standard error ``se`` of a Monte Carlo mean with the rounding of its value added in quadrature
    (ROUNDING (1 + |value|)): a near-deterministic model's standard error can fall below the float64 rounding of the
    means compared, and a difference at the rounding level is no disagreement. Far below any error a check resolves
    elsewhere (a 1e-14 relative error is not a wrong formula the power self-test sizes)."""
    return np.hypot(se, ROUNDING * (1.0 + np.abs(value)))


def t_to_z(diff: np.ndarray, se: np.ndarray, n: int) -> np.ndarray:
    """Normal-equivalent z-scores of Monte Carlo differences with standard errors from n samples."""
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(se > 0, diff / np.where(se > 0, se, 1.0), np.where(diff == 0, 0.0, np.inf))
    return normal_equivalent(t, max(n - 1, 1))


def weighted_ratio(measured: np.ndarray, derived: np.ndarray, cov: np.ndarray) -> tuple[float, float]:
    """The scale c of ``measured`` ~ c ``derived`` by weighted least squares (weights 1/var) and its standard error
    from the full covariance ``cov`` of ``measured`` (common random numbers): (c, se); (nan, nan) when ``derived``
    vanishes."""
    m, dv = np.ravel(measured), np.ravel(derived)
    var = np.clip(np.diag(cov), 1e-300, None)
    w = dv / var
    den = float(w @ dv)
    if not np.isfinite(den) or den <= 0:
        return float("nan"), float("nan")
    a = w / den
    return float(a @ m), float(np.sqrt(max(float(a @ cov @ a), 0.0)))


def validate_lengths(model, p: Mapping, Ls: Sequence[int], rhos: np.ndarray | None = None) -> None:
    """The model's values among ``p`` (domains, counts) at each simulated length L (fractions kept), and, with
    ``rhos``, the delta method's range: ValueError (one line) when at every L and point the predicted O(1/L^2)
    remainder exceeds MAX_EXPANSION_RATIO of the O(1/L) terms (attnverify.checks.engine._sizes)."""
    base = model_values(model, model_point(model, p))
    worst = []
    for L in Ls:
        vals = scaled_values(model, base, int(L))
        if rhos is not None:
            worst.append(float(np.min(expansion_ratio(model, vals, rhos, int(L)))))
    if rhos is not None and min(worst) > MAX_EXPANSION_RATIO:
        best = f"{min(worst):.3g}" if np.isfinite(min(worst)) else "more than e^700"
        raise ValueError(f"{model.id}: the delta method's O(1/L^2) remainder is predicted above "
                         f"{MAX_EXPANSION_RATIO:g} of the O(1/L) terms at every point and length (at best {best} "
                         f"of them, L = {max(Ls)}): simulate longer sequences (Ls) or points of smaller score variance")


def predicted_remainder(model, vals: dict, rhos: np.ndarray, L: int, corr: np.ndarray,
                        measured: np.ndarray | None = None) -> np.ndarray:
    """The predicted size of the O(1/L^2) remainder at each point (per component when ``corr`` is (r, k)): the
    expansion ratio times the size of the O(1/L) terms (attnverify.checks.engine._sizes), +inf where the ratio
    exceeds MAX_EXPANSION_RATIO (outside the
    expansion). The size is the derived ``corr``, capped by ``measured`` (:func:`measured_correction`) when given: a
    closed form whose O(1/L) terms are inflated is then compared and rejected, not excused as outside the
    expansion."""
    ratio = expansion_ratio(model, vals, rhos, L)
    size = np.abs(corr) if measured is None else np.minimum(np.abs(corr), measured)
    ratio = ratio.reshape(ratio.shape + (1,) * (size.ndim - ratio.ndim))      # corr (r, k): one ratio per point
    inside = ratio <= MAX_EXPANSION_RATIO                       # an infinite ratio (or a NaN size) is outside
    with np.errstate(invalid="ignore", over="ignore"):
        return np.where(inside, ratio * size, np.inf)


#: the central-difference step of :func:`field_remainder` (J's predicted remainder is smooth in the overlaps: the
#: truncation error is O(h^2), the rounding error about 1e-16 ratio |J| / h; the result changes by 1e-4 relative for
#: h from 1e-3 to 1e-7 on the examples)
GRADIENT_STEP = 1e-5


def field_remainder(theory, model, values: Mapping, points: np.ndarray, L: int, corr: np.ndarray,
                    measured: np.ndarray | None = None) -> np.ndarray:
    """The predicted O(1/L^2) remainder of F_finite at the overlap points (r, k), per component (r, k), +inf outside
    the expansion: the larger of the rule of the other quantities (:func:`predicted_remainder` of F's own O(1/L)
    terms ``corr`` (r, k), capped by ``measured``) and the sphere gradient of J's predicted remainder,

        |(I - rho rho^T) grad_rho [ratio(rho) (J_finite - J_limit)(rho)]|,

    since F = (I - rho rho^T) grad_rho J: where the score variance grows with rho, the ratio's own gradient makes F's
    remainder several times its O(1/L) terms times the ratio (attnverify.checks.engine._sizes: measured on
    anisotropic.toml). The gradient is a central difference (one-sided where a neighbour leaves the closed forms'
    domain). The gradient term reads J's O(1/L) terms from the theory under test without the measured cap: a J whose
    O(1/L) terms are inflated widens the field checks' range of left-out points, and the objective and finite-size
    checks, which compare those terms with Monte Carlo, reject it."""
    pts = np.atleast_2d(np.asarray(points, dtype=float))
    k = pts.shape[1]
    own = predicted_remainder(model, values, pts, L, corr, measured)
    names = [f"rho_{d}" for d in model.directions]
    J_fin, J_lim = theory.numeric("J_finite"), theory.numeric("J_limit")
    floats = {name: float(x) for name, x in values.items()}

    def remainder_of_J(m: np.ndarray) -> np.ndarray:
        coords = {n: m[:, j] for j, n in enumerate(names)}
        with np.errstate(all="ignore"):
            return expansion_ratio(model, floats, m, L) * (J_fin(floats, **coords) - J_lim(floats, **coords))
    at = remainder_of_J(pts)
    grad = np.empty_like(pts)
    for j in range(k):
        h = np.zeros(k)
        h[j] = GRADIENT_STEP
        up, down = remainder_of_J(pts + h), remainder_of_J(pts - h)
        with np.errstate(all="ignore"):
            grad[:, j] = np.where(np.isfinite(up) & np.isfinite(down), (up - down) / (2 * GRADIENT_STEP),
                                  np.where(np.isfinite(up), up - at, at - down) / GRADIENT_STEP)
    with np.errstate(all="ignore"):
        tangent = np.abs(grad - pts * np.sum(pts * grad, axis=-1, keepdims=True))
        out = np.maximum(own, tangent)
    return np.where(np.isnan(out), np.inf, out)


def within_se(remainder: np.ndarray, se: np.ndarray, *derived: np.ndarray) -> np.ndarray:
    """remainder <= MAX_REMAINDER_OVER_SE se, where the remainder, the standard error and every ``derived`` value are
    finite: a closed form beyond double precision (inf, or NaN from inf - inf) is never compared (an infinite
    allowance would let inf <= inf pass it, and its z-score is NaN)."""
    ok = np.isfinite(remainder) & np.isfinite(se)
    for value in derived:
        ok &= np.isfinite(value)
    with np.errstate(invalid="ignore"):
        return ok & (np.where(ok, remainder, np.inf) <= MAX_REMAINDER_OVER_SE * np.where(ok, se, 0.0))


def comparable(model, vals: dict, rhos: np.ndarray, L: int, corr: np.ndarray, se: np.ndarray,
               measured: np.ndarray | None = None) -> np.ndarray:
    """The points where the predicted remainder (:func:`predicted_remainder`) is at most MAX_REMAINDER_OVER_SE of
    the measured standard error ``se`` and the O(1/L) terms ``corr`` are finite (:func:`within_se`)."""
    return within_se(predicted_remainder(model, vals, rhos, L, corr, measured), se, corr)


def measured_correction(means: Sequence[np.ndarray], ses: Sequence[np.ndarray], Ls: Sequence[int]):
    """``bound(L)``: an upper bound of the O(1/L) terms at length L measured by the Monte Carlo alone, from the
    smallest and the largest length: c = (MC_{L1} - MC_{L2}) / (1/L1 - 1/L2) (the 1/L coefficient, independent
    runs), bound = (|c| + MEASURED_SE se_c) / L. None with a single length (nothing to difference)."""
    if len(Ls) < 2:
        return None
    i, j = int(np.argmin(Ls)), int(np.argmax(Ls))
    span = 1.0 / Ls[i] - 1.0 / Ls[j]
    c = (np.asarray(means[i]) - np.asarray(means[j])) / span
    c_se = np.sqrt(np.asarray(ses[i]) ** 2 + np.asarray(ses[j]) ** 2) / span
    return lambda L: (np.abs(c) + MEASURED_SE * c_se) / L


def simulate_lengths(p: dict, ctx, estimator: str = "grid_mc") -> tuple:
    """The Monte Carlo at every length: (the model, the grid, the lengths, the values at each length, the estimate
    per length, the grid as the theory's coordinates); ``estimator`` the simulator of ModelNumerics (``grid_mc``:
    J and the masses; ``drift_mc``: the overlaps' drift)."""
    N = ctx.numerics
    rhos = check_grid(p["rhos"], N.model.k)
    base = model_point(N.model, p)
    Ls = sorted(set(int(L) for L in p["Ls"]))
    vals = [N.at_length(base, L) for L in Ls]
    ests = ctx.map(run_grid, [(getattr(N, estimator), N.spec(v), rhos, p["n_sequences"], s)
                              for v, s in zip(vals, ctx.seeds(len(Ls)))])
    return N.model, rhos, Ls, vals, ests, coordinates(N.model, rhos)


def trained_query(model) -> bool:
    """Whether the model's query is a trained unit vector (the objective templates apply)."""
    return model.attention.query == "q"


def register_token_check(paper, *, name: str, compares: str, run, params: Sequence[Param], paper_profile: dict,
                         formulas: Sequence[str], highs: Mapping[str, float] | None = None) -> str:
    """Register a token-query template: the model's parameters (``highs``: the check's own upper ends of some, below
    the file's), then ``params``, then the z-level, validated by reading the model's values at them (one InputError
    line) before any work."""
    model = paper.model_object
    highs = highs or {}

    def capped(q: Param) -> Param:
        if q.name not in highs:
            return q
        return replace(q, high=highs[q.name] if q.high is None else min(q.high, highs[q.name]), high_open=False)

    def validate(p: dict) -> None:
        model_values(model, model_point(model, p))
    return register(paper, name=name, compares=compares, run=run, validate=validate,
                    params=[*map(capped, model_params(model)), *params, Z_LEVEL], paper_profile=paper_profile,
                    formulas=formulas)


def register_grid_check(paper, *, name: str, compares: str, run, formulas: Sequence[str],
                        boundary: bool = True) -> str:
    """Register a Monte Carlo check on the overlap grid at growing L (the objective, finite-size and field
    templates): the model's parameters, the grid (:func:`standard_grid`, with or without the ``boundary``), the
    lengths, the sequences and the z-level as its parameters, validated by :func:`validate_lengths` before any
    work."""
    model = paper.model_object
    grid = standard_grid(model.k, boundary)
    sphere = any(c.law == "sphere" for c in model.components)     # the one law with closed forms undefined at a = 0
    if sphere:                      # (its log-MGFs take a second to compile: only then, not for every model file)
        grid = grid[defined_at(model, model_values(model, model_point(model, {})), grid)]

    def validate(p: dict) -> None:
        rhos = check_grid(p["rhos"], model.k)
        undefined = ~defined_at(model, model_values(model, model_point(model, p)), rhos) if sphere else [False]
        if np.any(undefined):
            where = ", ".join(f"{x:.6g}" for x in rhos[undefined][0])
            raise ValueError(f"rhos: the model's closed forms are undefined at rho = ({where}) "
                             "(a sphere component at a vanishing score vector): leave that point out")
        validate_lengths(model, p, p["Ls"], rhos)
    rhos = Param("rhos", "matrix", grid, f"the query's overlaps with the {model.k} direction(s), one point per row "
                 "(each of sum of squares <= 1)")
    return register(paper, name=name, compares=compares, run=run, validate=validate,
                    params=[*model_params(model), rhos, LS, N_SEQ, Z_LEVEL],
                    paper_profile={"n_sequences": 16000, "Ls": (500, 1000, 2000, 4000)}, formulas=formulas)
