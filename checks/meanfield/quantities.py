"""Paper B's quantities that a claim may state (``attnverify list --quantities``; ``attnverify audit``).

``X_inf``                 the zero-temperature field on the circle (d = 2) as a scalar: <e, X_inf(x)> at
                          x = (cos phi, sin phi), e = (cos psi, sin psi) (every direction e gives the whole vector
                          field). A stated formula may use the aliases x1, x2 (= cos phi, sin phi), e1, e2 (= cos psi,
                          sin psi), Bx1, Bx2 (the entries of B^T x), Ax1, Ax2 (of V B^T x) and nb = |B^T x|.
                          Derived: the Laplace (Lagrange) limit of attnverify.theory.meanfield. Measured: X_beta by
                          certified quadrature at beta = 1e8, which estimates X_inf + e_1/beta + e_2/beta^2 +
                          e_3/beta^3 (``measured_as``, the derived expansion).
``c``                     the rate of the zero-temperature flow that e^{-ct} can use: the smallest atom rate
                          gamma/|B^T x*| over x* in E (derived: convergence_rate). Measured: zero-temperature
                          trajectories integrated by DOP853 (numerics only), the distance of each from its own end
                          point fitted by an exponential; the smallest fitted rate (for dim E >= 2 an upper estimate
                          of the minimum over E).
``C1``                    the growth constant of Theorem 1, sup of the tangent log-norm of X_inf (derived: SymPy
                          Jacobian). Measured: central differences of the numerical field, Richardson (h, 2h).
``field_error_exponent``  the exponent of sup_x |X_beta - X_inf| in beta (derived: minus the order of the first
                          non-vanishing term of the Laplace expansion). Measured: certified quadrature on 12 points at
                          beta = 1e2 .. 1e6, the slope of log sup|X_beta - X_inf| in log beta (se: its drift between the
                          whole range and the last pair, plus the certified brackets' share).
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from attnverify.checks.params import Param
from attnverify.checks.judges import Measured
from attnverify.checks.meanfield._model import MODEL_PARAMS
from attnverify.checks.plugin import Quantity
from attnverify.checks.reason import Math, Number, reason

PHI, PSI = sp.symbols("phi psi", real=True)
BETA = sp.Symbol("beta", positive=True)
BETA_MEASURE = 1e8                       # the measurement of X_inf: X_beta at this beta
EXPONENT_BETAS = (1e2, 1e3, 1e4, 1e5, 1e6)
#: the mathematics of the measurements' phrases
X_BETA, BETA_MATH, _H = Math(sp.Symbol("X_beta")), Math(sp.Symbol("beta")), sp.Symbol("h")
#: the range of EXPONENT_BETAS as powers of ten: 10^2..10^6
EXPONENT_RANGE = (Math(sp.Pow(10, round(np.log10(EXPONENT_BETAS[0])), evaluate=False)), "..",
                  Math(sp.Pow(10, round(np.log10(EXPONENT_BETAS[-1])), evaluate=False)))
_MATRICES = tuple(p for p in MODEL_PARAMS if p.name in ("Q", "K", "V"))
_D2 = tuple(Param(p.name, p.kind, p.default, p.help + " (2 x 2: the quantity lives on the circle)")
            for p in _MATRICES)


def _exact(M) -> sp.Matrix:
    return sp.Matrix([[sp.Rational(float(v)) for v in row] for row in np.asarray(M, dtype=float)])


def _matrices(Q, K, V) -> tuple[sp.Matrix, sp.Matrix]:
    for name, M in (("Q", Q), ("K", K), ("V", V)):
        if np.shape(M) != (2, 2):
            raise ValueError(f"{name} has shape {np.shape(M)}: X_inf is stated on the circle (2 x 2 matrices)")
    return _exact(Q).T * _exact(K), _exact(V)


def _x() -> sp.Matrix:
    return sp.Matrix([sp.cos(PHI), sp.sin(PHI)])


def _e() -> sp.Matrix:
    return sp.Matrix([sp.cos(PSI), sp.sin(PSI)])


def _X_inf(Q=None, K=None, V=None) -> sp.Expr:
    """<e, X_inf(x)> with X_inf the derived zero-temperature field (Lagrange maximiser), exact matrices."""
    import attnverify.theory.meanfield as mf

    B, Vm = _matrices(*_defaults(Q, K, V))
    return (_e().T * mf.zero_temperature_field(_x(), B, Vm))[0]


def _defaults(Q, K, V) -> tuple:
    d = {p.name: p.default for p in _MATRICES}
    return (d["Q"] if Q is None else Q, d["K"] if K is None else K, d["V"] if V is None else V)


def _X_inf_measured_as(Q=None, K=None, V=None) -> sp.Expr:
    """<e, X_inf + sum_{k=1..3} e_k beta^-k> at beta = BETA_MEASURE: what the quadrature at that beta estimates
    (the derived Laplace expansion of attnverify.theory.meanfield.asymptotics, d = 2, the audit's density)."""
    from attnverify.numerics.meanfield.laplace import standard_density
    from attnverify.theory.meanfield import AU, C0, TT, UCU, d_sym, moment_ratios

    B, Vm = _matrices(*_defaults(Q, K, V))
    dens = standard_density(2)
    a = sp.Matrix([sp.Float(v, 17) for v in dens.a])
    C = sp.Matrix([[sp.Float(v, 17) for v in row] for row in dens.C])
    x = _x()
    b = B.T * x
    nb = sp.sqrt((b.T * b)[0])
    u = b / nb
    au, Cu = (a.T * u)[0], C * u
    uCu = (u.T * Cu)[0]
    tt = (C.trace() - uCu)
    subs = {C0: sp.Float(dens.c0, 17), AU: au, UCU: uCu, TT: tt, d_sym: 2}
    ru, ra, rc = moment_ratios(3)
    m = sp.zeros(2, 1)
    for k in range(1, 4):
        m += (ru[k].subs(subs) * u + ra[k].subs(subs) * (a - u * au) + rc[k].subs(subs) * (Cu - u * uCu)) \
            / nb**k * sp.Float(BETA_MEASURE, 17) ** -k
    P = sp.eye(2) - x * x.T
    return _X_inf(Q, K, V) + (_e().T * P * Vm * m)[0]


def _alias(component) -> callable:
    def make(Q=None, K=None, V=None) -> sp.Expr:
        B, Vm = _matrices(*_defaults(Q, K, V))
        return component(B, Vm)
    return make


ALIASES = {
    "x1": _alias(lambda B, V: sp.cos(PHI)), "x2": _alias(lambda B, V: sp.sin(PHI)),
    "e1": _alias(lambda B, V: sp.cos(PSI)), "e2": _alias(lambda B, V: sp.sin(PSI)),
    "Bx1": _alias(lambda B, V: (B.T * _x())[0]), "Bx2": _alias(lambda B, V: (B.T * _x())[1]),
    "Ax1": _alias(lambda B, V: (V * B.T * _x())[0]), "Ax2": _alias(lambda B, V: (V * B.T * _x())[1]),
    "nb": _alias(lambda B, V: sp.sqrt((B.T * _x()).dot(B.T * _x()))),
}


def _sample_angles(rng: np.random.Generator, n: int, fixed: dict) -> list[dict]:
    return [{"phi": float(fixed.get("phi", rng.uniform(0, 2 * np.pi))),
             "psi": float(fixed.get("psi", rng.uniform(0, 2 * np.pi)))} for _ in range(n)]


def _measure_X_inf(values: dict, rng: np.random.Generator) -> Measured:
    from attnverify.numerics.meanfield.laplace import laplace_field_certified, standard_density

    Q, K, V = (np.asarray(values[n], dtype=float) for n in ("Q", "K", "V"))
    phi, psi = float(values["phi"]), float(values["psi"])
    x = np.array([np.cos(phi), np.sin(phi)])
    info = laplace_field_certified(x, Q.T @ K, V, BETA_MEASURE, standard_density(2), dps=30)
    e = np.array([np.cos(psi), np.sin(psi)])
    return Measured(float(e @ info.value), float(2 * info.error),
                    reason("certified quadrature (Arb) of ", X_BETA, " at ", BETA_MATH, " = ", Number(BETA_MEASURE)))


def _model(values: dict) -> tuple[np.ndarray, np.ndarray, int]:
    from attnverify.checks.meanfield._model import model_matrices, validate_model

    p = {"d": int(values.get("d", len(np.asarray(values["Q"])))), **{n: values[n] for n in ("Q", "K", "V")}}
    validate_model(p)
    B, V = model_matrices(p)
    return B, V, p["d"]


def _c(**options) -> float:
    import attnverify.theory.meanfield as mf

    B, V, _ = _model(options)
    return float(mf.convergence_rate(B, V))


def _measure_c(values: dict, rng: np.random.Generator, n_traj: int = 8) -> Measured:
    """The smallest decay rate of |x(t) - x(T)| over n_traj zero-temperature trajectories (x(T): the settled end
    point, max |X_inf(x(T))| <= 1e-13 |V|), each fitted in [1e-9, 1e-5] (numerics only); se: the largest difference
    between the fits of the two halves of the window, and of rtol 1e-11 against 1e-13."""
    from attnverify.checks.stats import decay_rate
    from attnverify.numerics.meanfield.particles import attention_field
    from attnverify.numerics.meanfield.zero_temperature import zero_temperature_path

    B, V, d = _model(values)
    X0 = rng.standard_normal((n_traj, d))
    X0 /= np.linalg.norm(X0, axis=1, keepdims=True)
    rates, spread = [], []
    for x0 in X0:
        T = 40.0 / max(float(np.linalg.norm(V, 2)), 1e-12)
        while True:
            times = np.linspace(0.0, T, 1201)
            paths = [zero_temperature_path(x0, B, V, times, r) for r in (1e-11, 1e-13)]
            end = paths[-1][-1]
            if np.linalg.norm(attention_field(end[None], B, V, np.inf)) <= 1e-13 * np.linalg.norm(V, 2) or T > 1e4:
                break
            T *= 2
        fits = [decay_rate(times, np.linalg.norm(path - path[-1], axis=1), 1e-9, 1e-5) for path in paths]
        rates.append(fits[-1][0])
        spread.append(max(fits[-1][1], abs(fits[0][0] - fits[-1][0])))
    rates = np.array(rates)
    k = int(np.nanargmin(rates))
    return Measured(float(rates[k]), float(np.nanmax(spread)),
                    f"smallest fitted decay rate of {n_traj} zero-temperature trajectories (DOP853)")


def _C1(**options) -> float:
    import attnverify.theory.meanfield as mf

    B, V, _ = _model(options)
    return float(mf.growth_constant(B, V)["C1"])


def _measure_C1(values: dict, rng: np.random.Generator) -> Measured:
    from attnverify.numerics.meanfield.zero_temperature import observed_log_norm

    B, V, _ = _model(values)
    obs = observed_log_norm(B, V)
    return Measured(float(obs["C1"]), float(obs["C1_error"]),
                    reason("sup of the tangent log-norm of the numerical field, central differences, Richardson (",
                           Math(_H), ", ", Math(2 * _H), "); se: its change against Richardson (", Math(2 * _H), ", ",
                           Math(4 * _H), ")"))


def _exponent(**options) -> float:
    from attnverify.numerics.meanfield.laplace import standard_density
    from attnverify.theory.meanfield import field_error_expansion, leading_order

    B, V, d = _model(options)
    dens = standard_density(d)
    X = np.random.default_rng(0).standard_normal((64, d))
    E = field_error_expansion(X / np.linalg.norm(X, axis=1, keepdims=True), B, V, dens.c0, dens.a, dens.C, 2)
    return -float(leading_order(E, 64 * np.finfo(float).eps * np.linalg.norm(V, 2)))


def _measure_exponent(values: dict, rng: np.random.Generator) -> Measured:
    """The slope of log sup_x |X_beta - X_inf| in log beta at EXPONENT_BETAS (certified quadrature, 12 points of
    S^{d-1}); X_inf from the numerical field at beta = inf (attnverify.numerics.meanfield.particles)."""
    from attnverify.checks.meanfield.limit import field_on_grid, grid, slope_fit
    from attnverify.numerics.meanfield.particles import attention_field

    B, V, d = _model(values)
    X = grid(d, 12, rng)
    X_inf = attention_field(X, B, V, np.inf)
    sups, halves = [], []
    for b in EXPONENT_BETAS:
        value, err, _ = field_on_grid(X, B, V, b, 20)
        sups.append(float(np.max(np.linalg.norm(value - X_inf, axis=1))))
        halves.append(err * np.sqrt(d) + 64 * np.finfo(float).eps * np.linalg.norm(V, 2))
    sups, halves = np.array(sups), np.array(halves)
    slope, se = slope_fit(np.array(EXPONENT_BETAS), sups, halves / sups)
    return Measured(slope, se, reason("certified quadrature at ", BETA_MATH, " = ", *EXPONENT_RANGE, ", 12 points"),
                    details={"points": list(EXPONENT_BETAS), "sup_error": sups.tolist()})


def quantities() -> list[Quantity]:
    return [
        Quantity("X_inf", "the zero-temperature field on the circle: <e, X_inf(x)> at x = (cos phi, sin phi), e = "
                 "(cos psi, sin psi); aliases x1, x2, e1, e2, Bx1, Bx2 (B^T x), Ax1, Ax2 (V B^T x), nb = |B^T x|",
                 {"phi": PHI, "psi": PSI}, _X_inf, kinds=("formula",), options=_D2, aliases=ALIASES,
                 sample=_sample_angles, measure=_measure_X_inf, measured_as=_X_inf_measured_as),
        Quantity("c", "the rate of the zero-temperature flow that e^{-ct} can use: the smallest atom rate "
                 "gamma/|B^T x*| over x* in E", {}, _c, kinds=("value",), options=MODEL_PARAMS, measure=_measure_c),
        Quantity("C1", "the growth constant of Theorem 1: sup over the sphere of the tangent log-norm of X_inf", {},
                 _C1, kinds=("value",), options=MODEL_PARAMS, measure=_measure_C1),
        Quantity("field_error_exponent", "the exponent of sup_x |X_beta - X_inf| in beta (a rate in beta)",
                 {"beta": BETA}, _exponent, kinds=("rate",), options=MODEL_PARAMS, measure=_measure_exponent),
    ]
