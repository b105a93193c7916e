"""Paper B claims: each verdict computed from the typed findings of the checks of the same run and the stated form
it is given (the paper's, from stated.toml, or a restatement), judged by the rules of attnverify.checks.judges.

B.zero_temperature_limit  formula: the explicit limit field (quantity X_inf)     meanfield.zero_temperature_limit
B.zero_temperature_rate   rate (upper): sup_x |X_beta - X_inf| = O(sqrt(log(beta+1)/beta))
                                                                           meanfield.zero_temperature_limit
B.stationary_projection   bound: W2(mu^inf_t, Pi#mu_0) <= K e^{-ct}       meanfield.projection_stationary, w2_bound
B.theorem1                bound: W2(mu^beta_t, Pi#mu_0) <= K (s(beta) e^{C1 t} + e^{-ct})   meanfield.w2_bound
B.log_beta_time_scale     qualitative: argmin_t W2 grows like log beta     meanfield.w2_bound (+ terminal_phase)

B.conjecture1 (the terminal phase on the dominant eigenspace of V) is in claims_terminal.
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp

from attnverify.checks import judges
from attnverify.checks.claims import ClaimVerdict, claim, one_of, words
from attnverify.checks.judges import relation
from attnverify.checks.judges import BoundPoint, BoundSeries, bound, read_bound
from attnverify.checks.plugin import Perturbation
from attnverify.checks.reason import CheckRef, Math, Number, as_reason, bracket, item, listing, pm, reason
from attnverify.checks.expression_reader import parse_expression

LIMIT, FLOW, PROJ, W2, TERM = ("meanfield.zero_temperature_limit", "meanfield.zero_temperature_flow",
                               "meanfield.projection_stationary", "meanfield.w2_bound", "meanfield.terminal_phase")
LADDER = (0.5, 0.2, 0.1, 0.05, 0.02, 0.01, 5e-3, 2e-3, 1e-3)


def _f(x, digits: int = 4):
    """``x`` as a Number part with ``digits`` significant digits; the words "n/a" for None or a non-finite value."""
    return "n/a" if x is None or (isinstance(x, float) and not math.isfinite(x)) else Number(x, digits=digits)


def _no_findings(cid: str) -> ClaimVerdict:
    return ClaimVerdict("inconclusive", reason(CheckRef(cid), " produced no findings to read"))


# ------------------------------------------------------------------------------------------- claim 1: the limit
def _stated_field(stated, f, options: dict) -> tuple[np.ndarray, np.ndarray]:
    """The stated field at the check's grid (d = 2): midpoints and radii of Arb balls (n, 2), from the stated
    <e, X(x)> at psi = 0 and pi/2."""
    import sympy as sp

    from attnverify.checks.meanfield.quantities import PHI, PSI, quantities
    from attnverify.theory.compare import ball_function

    q = next(q for q in quantities() if q.name == "X_inf")
    S = judges.stated_expression(stated, q, options)
    fn = ball_function(S, [PHI, PSI])
    phis = np.arctan2(f.points[:, 1], f.points[:, 0])
    mid, rad = np.empty((len(phis), 2)), np.empty((len(phis), 2))
    for i, ph in enumerate(phis):
        for j, ps in enumerate((sp.Integer(0), sp.pi / 2)):
            import flint

            ball = fn(flint.arb(float(ph)), flint.arb.pi() / 2 if j else flint.arb(0))
            ball = flint.arb(ball) if not isinstance(ball, flint.arb) else ball
            mid[i, j], rad[i, j] = float(ball.mid()), float(ball.rad()) + float(np.spacing(abs(float(ball.mid()))))
    return mid, rad


@claim(id="B.zero_temperature_limit", paper="B", needs=(LIMIT,), uses=(FLOW,))
def _zero_temperature_limit(results, stated) -> ClaimVerdict:
    f = results[LIMIT].findings
    if f is None:
        return _no_findings(LIMIT)
    if f.d != 2:
        return ClaimVerdict("inconclusive", reason("the stated field is written on the circle (quantity ", Math(X_INF),
                                                   ", ", Math(DIM), " = ", Number(2), "); this run is at ", Math(DIM),
                                                   " = ", Number(f.d)))
    options = {k: np.asarray(results[LIMIT].params[k], dtype=float) for k in ("Q", "K", "V")}
    S, S_rad = _stated_field(stated, f, options)
    D = f.X_limit
    k_max = len(f.betas) - 1
    M, q = f.X_beta[k_max], f.certified_error[k_max] + f.rounding
    sep = np.abs(S - D) - S_rad - f.rounding                               # > 0: certifiably different
    sup_to_stated = [float(np.max(np.linalg.norm(X - S, axis=1))) for X in f.X_beta]
    ev = {LIMIT: {"beta": list(f.betas), "sup_error": list(f.sup_error), "sup_to_stated": sup_to_stated,
                  "leading_order": f.leading_order}, "stated": {"kind": stated.kind, "stated": stated.stated}}
    at_beta = item(Math(BETA), " = ", Number(f.betas[k_max], digits=6))
    trend = [item("at ", Math(BETA), " = ", Number(b, digits=6), ": ", Number(e, digits=3))
             for b, e in zip(f.betas, sup_to_stated)]
    if np.any(sep > 0):
        i, j = np.unravel_index(int(np.argmax(sep)), sep.shape)
        where = item(Math(sp.Eq(X, sp.Tuple(sp.cos(PHI), sp.sin(PHI)))), ", ", Math(PHI), " = ",
                     Number(math.atan2(f.points[i, 1], f.points[i, 0]), digits=6), ", component ", Number(j + 1))
        dist_S, dist_D = abs(M[i, j] - S[i, j]), abs(M[i, j] - D[i, j])
        if dist_S - dist_D > 2 * q:
            return ClaimVerdict(
                "refuted", reason(Math(X_BETA), " does not converge to the stated field: ", SUP_TO_STATED,
                                  " levels off at the certified gap between the stated field and the derived limit, "
                                  "which the certified quadrature reaches (the check: derived expansion and quadrature "
                                  "agree):", items=trend),
                condition=reason(where, ": stated ", Number(S[i, j], digits=10), " (Arb ball radius ",
                                 Number(S_rad[i, j], digits=2), "), derived limit ", Number(D[i, j], digits=10),
                                 ", measured ", Math(X_BETA), " at ", at_beta, " ", pm(M[i, j], q, digits=10),
                                 " (certified): ", Number(dist_S, digits=3), " from the stated value, ",
                                 Number(dist_D, digits=3), " from the derived limit (difference ",
                                 Number((dist_S - dist_D) / q, digits=3), " certified error bounds)"), evidence=ev)
        return ClaimVerdict("inconclusive", reason(
            "the stated field differs from the derived limit (certified at ", where, ": ", Number(S[i, j], digits=10),
            " against ", Number(D[i, j], digits=10), "), but ", Math(X_BETA), " at ", at_beta, " (", PLUS_MINUS, " ",
            Number(q, digits=2), ") is not farther from the stated value than from the derived one by more than its "
            "error: raise the largest ", Math(BETA)), evidence=ev)
    from attnverify.checks.meanfield.quantities import quantities
    from attnverify.theory.compare import equivalent

    qx = next(x for x in quantities() if x.name == "X_inf")
    proven = equivalent(judges.stated_expression(stated, qx, options), qx.derive(**options))
    gap = float(np.max(np.abs(S - D)))
    falls = item(SUP_ERROR, " falls from ", Number(f.sup_error[0], digits=3), " (", Math(BETA), " = ",
                 Number(f.betas[0], digits=6), ") to ", Number(f.sup_error[-1], digits=3), " (", Math(BETA), " = ",
                 Number(f.betas[-1], digits=6), "; certified bracket ", bracket(*f.sup_error_bracket[-1], digits=3),
                 "), as the derived expansion predicts (",
                 Math(sp.Function("O")(sp.Pow(BETA, -f.leading_order, evaluate=False))), ")")
    if proven:
        return ClaimVerdict("holds", reason("SymPy proves the stated field identical to the derived limit (quantity ",
                                            Math(X_INF), "); it equals the derived values at the ", Number(len(S)),
                                            " grid points within ", Number(gap, digits=2), "; ", falls,
                                            "; the closed-form flow matches the integrated ODE" if FLOW in results
                                            else ""), evidence=ev)
    return ClaimVerdict("inconclusive", reason("SymPy could not prove the stated field identical to the derived one, "
                                               "and no grid point separates them (largest ", STATED_MINUS_DERIVED, " ",
                                               Number(gap, digits=2), ", Arb balls); ", falls), evidence=ev)


def _rate_perturbations(stated, results) -> list:
    """Around the derived sharp rate beta^-k (k the derived leading order, from the check's findings): an exponent
    k (1 + delta) claims a faster decay (wrong), k (1 - delta) a slower one (still true)."""
    f = results.get(LIMIT).findings if results.get(LIMIT) is not None else None
    if f is None or f.leading_order == 0:
        return []
    k = f.leading_order
    out = []
    for dl in LADDER:
        out.append(Perturbation("sharp exponent x (1 + delta)", dl, stated.restated(f"beta**(-{k * (1 + dl)!r})")))
        out.append(Perturbation("sharp exponent x (1 - delta)", dl, stated.restated(f"beta**(-{k * (1 - dl)!r})"),
                                wrong=False))
    return out


@claim(id="B.zero_temperature_rate", paper="B", needs=(LIMIT,), perturbations=_rate_perturbations)
def _zero_temperature_rate(results, stated) -> ClaimVerdict:
    f = results[LIMIT].findings
    if f is None:
        return _no_findings(LIMIT)
    measured = judges.Measured(f.measured_slope, f.slope_se, how="certified quadrature; se: change of the slope "
                              "from the pair of betas before, plus the certified brackets")
    v = judges.rate(stated, measured, f.slope_betas, derived=f.derived_slope, what=SUP_ERROR)
    k = f.leading_order
    if k == 0:
        tail = reason("; the derived expansion has a non-vanishing zeroth-order term (sup ",
                      Number(f.leading_coefficient, digits=3), "): the field does not converge to ",
                      Math(sp.Symbol(r"X_{\infty}")), ", and the quadrature agrees")
    else:
        e_k = sp.Symbol(f"e_{k}")
        tail = reason("; derived: the Laplace expansion's first non-vanishing term is ",
                      Math(e_k * sp.Symbol("beta") ** -k), " (max over the grid ", Math(sp.Abs(e_k)), " = ",
                      Number(f.leading_coefficient), ")")
    v.reason = as_reason(v.reason) + tail
    v.evidence.setdefault(LIMIT, {}).update(leading_order=f.leading_order, leading_coefficient=f.leading_coefficient,
                                            sup_error=list(f.sup_error), beta=list(f.betas))
    return v


# ------------------------------------------------------------------------------------------- claims 2-3: the bounds
def _interp_log(t_from: np.ndarray, y: np.ndarray, t_to: np.ndarray) -> np.ndarray:
    ok = np.isfinite(y) & (y > 0)
    out = np.full(len(t_to), np.nan)
    inside = (t_to >= t_from[ok].min()) & (t_to <= t_from[ok].max()) if ok.any() else np.zeros(len(t_to), bool)
    out[inside] = np.exp(np.interp(t_to[inside], t_from[ok], np.log(y[ok])))
    return out


E_FLOOR = 1e-10          # E(t) below this is the settled flow's rounding, not its decay


def _inf_series(f) -> BoundSeries | None:
    """E(t) = W2(mu^inf_t, Pi#mu_0) along t (beta = inf): the first third fits, the rest is held out."""
    use = np.nonzero(f.E_lower > E_FLOOR)[0]
    if len(use) < 6:
        return None
    reps = [_interp_log(ts, es, f.t_inf[use]) for ts, es in zip(f.t_inf_samples, f.E_samples)]
    reps = [r for r in reps if np.all(np.isfinite(r))]
    pts = tuple(BoundPoint(float(f.t_inf[i]), {"t": np.array([f.t_inf[i]]), "beta": np.array([np.inf])},
                           np.array([f.E_lower[i]]), np.array([f.E_upper[i]]), tuple(np.array([r[m]]) for r in reps))
                for m, i in enumerate(use))
    return BoundSeries(reason(Math(T), " at ", Math(sp.Eq(BETA, sp.oo)), " (", Math(sp.Function("E")(T)), ")"), "t",
                       pts, max(2, len(pts) // 3), scale="linear")


def _beta_series(f) -> list[BoundSeries]:
    """The finite-beta left-hand side. Fit set: the smallest beta at t <= t_max/3. Along beta: each point the
    maximum over t <= t_max/3 (the smallest beta fits); along t at each beta: the times after t_max/3 held out
    (at the smallest beta the earlier ones fit; at the others they are held out too, but the growth is measured
    after t_max/3 as everywhere)."""
    ok = np.isfinite(f.W_lower)
    early = f.t <= f.t[-1] / 3
    pts = []
    for k, b in enumerate(f.betas):
        m = ok[k] & early
        pts.append(BoundPoint(b, {"t": f.t[m], "beta": np.full(m.sum(), b)}, f.W_lower[k][m], f.W_upper[k][m],
                              tuple(s[k][m] for s in f.W_samples)))
    out = [BoundSeries(reason(Math(BETA), " (max over ", Math(T), " ", Math(r"\leq"), " ", Number(f.t[-1] / 3, digits=3),
                              ")"), "beta", tuple(pts), 1, scale="log")]
    for k, b in enumerate(f.betas):
        idx = np.nonzero(ok[k])[0]
        tp = tuple(BoundPoint(float(f.t[i]), {"t": np.array([f.t[i]]), "beta": np.array([b])},
                              np.array([f.W_lower[k][i]]), np.array([f.W_upper[k][i]]),
                              tuple(np.array([s[k][i]]) for s in f.W_samples)) for i in idx)
        n_early = int(np.sum(early[idx]))
        out.append(BoundSeries(reason(Math(T), " at ", Math(BETA), " = ", Number(b, digits=6)), "t", tp,
                               n_early if k == 0 else 0, scale="linear", tail_from=n_early))
    return out


def _names(stated) -> dict:
    """The stated claim's variables and constants as positive symbols."""
    return {n: sp.Symbol(n, positive=True) for n in (*stated.get("variables", []), *stated.get("constants", []))}


def _finite_beta_part(stated, derived: dict) -> str | None:
    """The stated bound minus its beta -> oo limit (the finite-beta term, e.g. K s(beta) e^{C1 t}), as text; None
    when the bound has no beta-dependent part."""
    names = _names(stated)
    if "beta" not in names:
        return None
    expr = parse_expression(stated.stated, names, f"claim {stated.id!r}")
    part = sp.simplify(expr - sp.limit(expr, names["beta"], sp.oo))
    return None if part == 0 or names["beta"] not in part.free_symbols else sp.sstr(part)


def _d_series(f) -> list[BoundSeries]:
    """The proof-internal D(beta, t) in the Groenwall phase (0 < t <= max(t_min(beta), t_groenwall)). Fit set: the
    smallest beta at t <= t_groenwall/2. Along beta at each of those times (the smallest beta fits), and along t at
    each beta (held out after t_groenwall/2)."""
    t_fit = f.t_groenwall / 2
    ok = np.isfinite(f.D)
    out = []
    for j in np.nonzero((f.t > 0) & (f.t <= t_fit) & np.all(ok, axis=0))[0]:
        pts = tuple(BoundPoint(b, {"t": np.array([f.t[j]]), "beta": np.array([b])}, np.array([f.D[k, j]]),
                               np.array([f.D[k, j]]), tuple(np.array([s[k, j]]) for s in f.D_samples))
                    for k, b in enumerate(f.betas))
        out.append(BoundSeries(reason(Math(BETA), " at ", Math(T), " = ", Number(f.t[j], digits=6), " (", Math(D), ")"),
                               "beta", pts, 1, scale="log"))
    for k, b in enumerate(f.betas):
        idx = np.nonzero((f.t > 0) & (f.t <= max(f.t_min[k], f.t_groenwall)) & ok[k])[0]
        n_early = int(np.sum(f.t[idx] <= t_fit))
        pts = tuple(BoundPoint(float(f.t[i]), {"t": np.array([f.t[i]]), "beta": np.array([b])}, np.array([f.D[k, i]]),
                               np.array([f.D[k, i]]), tuple(np.array([s[k, i]]) for s in f.D_samples)) for i in idx)
        if len(pts) - n_early >= 2:
            out.append(BoundSeries(reason(Math(T), " at ", Math(BETA), " = ", Number(b, digits=6), " (", Math(D), ")"),
                                   "t", pts, n_early if k == 0 else 0, scale="linear", tail_from=n_early))
    return out


def _scaled_constant(stated, name: str, factor: float) -> str:
    """The stated expression with the constant ``name`` replaced by name * factor (SymPy)."""
    names = _names(stated)
    expr = parse_expression(stated.stated, names, f"claim {stated.id!r}")
    return sp.sstr(expr.subs(names[name], names[name] * sp.Float(factor, 15)))


def _bound_perturbations(stated, results) -> list:
    """The rate constant c x (1 + delta) (a faster decay: wrong) and x (1 - delta) (a looser bound: still true);
    for Theorem 1 also C1 x (1 + delta) (looser: still true) and the bound without its finite-beta term (wrong)."""
    out = []
    constants = stated.get("constants", [])
    for dl in LADDER:
        if "c" in constants:
            out.append(Perturbation("c x (1 + delta)", dl, stated.restated(_scaled_constant(stated, "c", 1 + dl))))
            out.append(Perturbation("c x (1 - delta)", dl, stated.restated(_scaled_constant(stated, "c", 1 - dl)),
                                    wrong=False))
        if "C1" in constants:
            out.append(Perturbation("C1 x (1 + delta)", dl, stated.restated(_scaled_constant(stated, "C1", 1 + dl)),
                                    wrong=False))
    if "beta" in stated.get("variables", []) and "c" in constants:
        out.append(Perturbation("without the finite-beta term", None, stated.restated("K*exp(-c*t)")))
    return out


#: the sup over the grid of the field's error, and the left-hand sides of the bounds, as mathematics (a name SymPy
#: cannot spell is LaTeX with braces)
SUP_ERROR = Math(r"\sup_x |X_\beta(x) - X_\infty(x)|")
PI_MU0 = sp.Symbol(r"\Pi_{\#}\mu_{0}")
W2_INF = sp.Function("W_2")(sp.Symbol(r"\mu^{\infty}_{t}"), PI_MU0)
W2_BETA = sp.Function("W_2")(sp.Symbol("mu_t^beta"), PI_MU0)
D, C1, C = sp.Symbol("D"), sp.Symbol("C_1"), sp.Symbol("c")
BETA, T, N, X, PHI, DIM = (sp.Symbol(n) for n in ("beta", "t", "N", "x", "phi", "d"))
X_INF, X_BETA, T_MIN, R2 = sp.Symbol(r"X_{\infty}"), sp.Symbol("X_beta"), sp.Symbol("t_min"), sp.Symbol("r") ** 2
LOG_BETA = sp.log(BETA)
SUP_TO_STATED = Math(r"\sup_x |X_\beta(x) - X_{\mathrm{stated}}(x)|")
STATED_MINUS_DERIVED = Math(r"|\mathrm{stated} - \mathrm{derived}|")
PLUS_MINUS = Math(r"\pm")


def _d_definition(coupling: str) -> tuple:
    """The check's definition of D, by its coupling (``w2_notation.D_TYPED``), as parts."""
    from attnverify.checks.meanfield.w2_notation import D_TYPED

    return D_TYPED[coupling].lead


def _d_findings(f) -> tuple:
    """The proof-internal D against the stated s(beta) and C1, as parts (computed words)."""
    ex, u = f.D_beta_exponent, f.D_beta_exponent_uncertainty
    growth = [g for g in f.D_growth if g is not None and math.isfinite(g)]
    out = ["proof-internal ", Math(D), " = ", _d_definition(f.D_coupling), ": "]
    out += (["decays like ", Math(sp.Symbol("beta") ** sp.Float(float(f"{ex:.3g}"), 3)), " (", pm(ex, u, digits=3), ")"]
            if math.isfinite(ex) else ["its beta-exponent is not measured"])
    if growth:
        out += [" and grows at ", bracket(min(growth), max(growth), digits=3), " in ", Math(sp.Symbol("t")), ", ",
                relation(max(growth), f.C1), " the derived ", Math(C1), " = ", Number(f.C1)]
    return item(*out)


@claim(id="B.stationary_projection", paper="B", needs=(PROJ, W2), perturbations=_bound_perturbations,
       reads=lambda stated: read_bound(stated, ("c",)))
def _stationary_projection(results, stated) -> ClaimVerdict:
    f = results[W2].findings
    if f is None:
        return _no_findings(W2)
    series = _inf_series(f)
    if series is None:
        return ClaimVerdict("inconclusive", reason(Math(sp.Eq(sp.Function("E")(T), W2_INF)),
                                                   " has fewer than 6 points above its floor"))
    v = bound(stated, [series], derived={"c": f.c}, what=W2_INF)
    d = results[PROJ].details
    v.reason = as_reason(v.reason).item(
        Math(C), " = ", Number(f.c, digits=6), " is the smallest atom rate (at ", Math(sp.Symbol("x^*")), " = (",
        listing(f.c_atom), ")); the sample's atoms have ", bracket(*f.c_atoms, digits=6), ", dim E = ", f.dim_E,
        "; trajectories reach ", Math(sp.Function("Pi")(sp.Symbol("x_0"))), " at the derived rates (fitted ",
        bracket(min(d["fitted_rates"]), max(d["fitted_rates"]), digits=6), ", derived ",
        bracket(min(d["derived_rates"]), max(d["derived_rates"]), digits=6), ")")
    return v


@claim(id="B.theorem1", paper="B", needs=(W2,), perturbations=_bound_perturbations,
       reads=lambda stated: read_bound(stated, ("c", "C1")))
def _theorem1(results, stated) -> ClaimVerdict:
    f = results[W2].findings
    if f is None:
        return _no_findings(W2)
    series = [s for s in (_inf_series(f), *_beta_series(f)) if s is not None]
    derived = {"c": f.c, "C1": f.C1}
    v = bound(stated, series, derived=derived, what=W2_BETA)
    v.reason = as_reason(v.reason).item(
        Math(sp.Function("W_2")(sp.Symbol("mu"), PI_MU0)), " by ", f.W_method, " (", Math(sp.Symbol("N")), " = ",
        f.resolution.n_particles, ", dim E = ", f.dim_E, "); ", Math(C), " = ", Number(f.c, digits=6),
        " (the smallest atom rate), ", Math(C1), " = ", Number(f.C1, digits=6)).item(*_d_findings(f))
    part = _finite_beta_part(stated, derived)
    d_series = _d_series(f)
    dv = bound(stated.restated(part), d_series, derived=derived, what=D) if part and d_series else None
    if dv is not None and dv.verdict != "inconclusive":     # the proof-internal inequality, a finding only
        word = "fails" if dv.verdict == "refuted" else "is not violated"
        inequality = sp.Le(D, parse_expression(part, _names(stated), "the finite-beta part"), evaluate=False)
        v.reason = v.reason.item("the proof-internal inequality ", Math(inequality), f" {word} on ", Math(D),
                                 " (not the theorem's left-hand side): ") + as_reason(dv.condition or dv.reason)
        v.evidence.setdefault(W2, {})["proof_internal_verdict"] = dv.verdict
    v.evidence.setdefault(W2, {}).update(D_beta_exponent=f.D_beta_exponent, D_growth=list(f.D_growth), c=f.c,
                                         C1=f.C1, resolution=f.resolution.text)
    return v


# over less than a decade of beta, log beta is nearly linear in beta (and in any small power of it): a fit of t_min
# against log beta cannot say that the growth is logarithmic
MIN_BETA_DECADES = 1.0


#: the growth of t_min in beta a statement may assert (``target``), by the sign of a in t_min = a log(beta) + b:
#: the paper's (it grows), and the two statements the evidence refutes when t_min is measured growing
GROWTH_TARGETS = {"t_min = a log(beta) + b with a > 0": "grows", "t_min = b": "constant",
                  "t_min = a log(beta) + b with a < 0": "shrinks"}


def _growth_perturbations(stated, results: dict) -> list[Perturbation]:
    """The wrong statements 't_min does not depend on beta' and 't_min falls with beta' (one-off)."""
    return [Perturbation(f"target {t}", None, stated.restated(stated.stated, target=t))
            for t, kind in GROWTH_TARGETS.items() if kind != "grows" and t != stated.get("target")]


@claim(id="B.log_beta_time_scale", paper="B", needs=(W2,), uses=(TERM,), perturbations=_growth_perturbations,
       reads=words(("log_beta_time_scale",), lambda t: one_of("target", " ".join(t.split()), tuple(GROWTH_TARGETS))))
def _log_beta_time_scale(results, stated) -> ClaimVerdict:
    """The paper's statement (target: a > 0) holds when the slope of t_min in log beta is resolved above 0 over at
    least MIN_BETA_DECADES with a linear fit (r^2 >= 0.9), and is refuted when it is resolved at or below 0; a
    statement that t_min is constant (a = 0) or falls (a < 0) is refuted by a slope resolved above 0."""
    target = " ".join(str(stated.get("target", "t_min = a log(beta) + b with a > 0")).split())   # read (reads=)
    f = results[W2].findings
    if f is None:
        return _no_findings(W2)
    fit, u = f.t_min_fit, f.t_min_slope_uncertainty
    u = 0.0 if not math.isfinite(u) else u
    lo, hi = fit["ci95"][0] - u, fit["ci95"][1] + u
    ev = {W2: {"t_min": list(f.t_min), "slope": fit["slope"], "interval": [lo, hi], "r2": fit["r2"]}}
    extra = ()
    if TERM in results:          # the terminal phase's typed findings, read defensively (attribute names agreed)
        sw = getattr(results[TERM].findings, "t_switch_vs_log_beta", None)
        slope = getattr(sw, "slope", None)
        if slope is not None and math.isfinite(slope):
            interval = getattr(sw, "interval", None)
            ev[TERM] = {"t_switch_slope": slope, "interval": list(interval) if interval is not None else None}
            extra = item("; the terminal switch time grows like ", Number(slope, digits=3), " ", Math(LOG_BETA))
    where = item("over ", Math(BETA), " = ", listing(f.betas, digits=6))
    slope_in = item("slope of ", Math(T_MIN), " in ", Math(LOG_BETA), " in ", bracket(lo, hi, digits=3))
    growth = GROWTH_TARGETS[target]
    if growth != "grows":
        said = "does not depend on " if growth == "constant" else "falls with "
        measured = "growing" if lo > 0 else "falling" if hi < 0 else None
        if measured == "growing" or (measured == "falling" and growth == "constant"):
            end = lo if lo > 0 else hi
            return ClaimVerdict("refuted", reason(
                "the stated ", Math(T_MIN), f" {said}", Math(BETA), f", but it is measured {measured} ", where, " (",
                slope_in, ", ", Math(R2), " ", Number(fit["r2"], digits=4), ")"),
                condition=reason(slope_in, ", ", relation(end, 0.0), " ", Number(0), " (", where, ")"), evidence=ev)
        if measured == "falling":
            return ClaimVerdict("not_refuted", reason(Math(T_MIN), " is measured falling ", where, " (", slope_in,
                                                      ")"), evidence=ev)
        return ClaimVerdict("inconclusive", reason(slope_in, " ", where, ": the slope is not resolved from 0, so "
                                                   "the evidence cannot tell"), evidence=ev)
    if hi <= 0:
        return ClaimVerdict("refuted", reason("the time of closest approach to ", Math(PI_MU0), " does not grow with ",
                                              Math(BETA), " ", where),
                            condition=reason(slope_in, ", ", relation(hi, 0.0), " ", Number(0)), evidence=ev)
    span = math.log10(max(f.betas) / min(f.betas))
    if span < MIN_BETA_DECADES:
        return ClaimVerdict("inconclusive", reason(
            Math(T_MIN), " grows (slope in ", Math(LOG_BETA), " in ", bracket(lo, hi, digits=3), ") ", where,
            ", but these betas span ", Number(span, digits=2), " of a decade, ", relation(span, MIN_BETA_DECADES),
            " the ", Number(MIN_BETA_DECADES, digits=6), " needed to tell growth like ", Math(LOG_BETA),
            " from a power of ", Math(BETA), " or linear growth: widen the betas"), evidence=ev)
    if lo <= 0 or fit["r2"] < 0.9:
        return ClaimVerdict("inconclusive", reason(
            slope_in, " (", Math(R2), " ", Number(fit["r2"], digits=3), ") ", where, ": ",
            "not resolved from zero" if lo <= 0 else item("not linear in ", Math(LOG_BETA))), evidence=ev)
    return ClaimVerdict("holds", reason(
        Math(sp.Eq(T_MIN, sp.Function(r"\operatorname{argmin}_{t}")(W2_BETA))), " = ", Number(fit["slope"], digits=3),
        " ", Math(LOG_BETA), " + ", Number(fit["intercept"], digits=3), " ", where, " (95% interval of the slope "
        "widened by the ", Math(N / 2), " refinement ", bracket(lo, hi, digits=3), ", ", relation(lo, 0.0), " ",
        Number(0), "; ", Math(R2), " ", Number(fit["r2"], digits=4), ")", extra), evidence=ev)

