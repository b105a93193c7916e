"""The mutant catalogue: deliberately wrong closed forms and implementations, for ``attnverify selftest --mutants``.

Each mutant wraps the original object (same signature, same return type) and changes one piece of
mathematics, so a check that runs with the mutant injected sees a plausible but wrong result through its
ordinary code path. ``checks`` lists the checks expected to notice it (quick profile).
"""
from __future__ import annotations

import functools

import numpy as np
import sympy as sp

from attnverify.mutation import Mutant

SR = "attnverify.theory.signal_recovery"
MF = "attnverify.theory.mean_field"


# ----------------------------------------------------------------------------- Paper A, closed forms
def _sign_flip(original):
    """J(rho) -> J(-rho): the informative tokens pull towards -xi."""
    from attnverify.theory.signal_recovery import rho

    @functools.wraps(original)
    def population_objective(sign: str = "fixed", finite_size: bool = False) -> sp.Expr:
        return original(sign, finite_size).subs(rho, -rho)
    return population_objective


def _cross_term_x2(original):
    """|a_xi xi + a_q q|^2 = a_xi^2 + 2 rho a_xi a_q + a_q^2 with the cross term counted twice (4 rho a_xi a_q)."""
    from attnverify.theory.signal_recovery import rho

    @functools.wraps(original)
    def _limit_for_shift(c: sp.Expr) -> dict:
        out = dict(original(c))
        out["J"] = sp.expand(out["J"] + 2 * rho * out["a_xi"] * out["a_q"])
        return out
    return _limit_for_shift


def _finite_size_dropped(original):
    """The (d - 1) sigma^2 E sum a_i^2 term replaced by 0."""
    @functools.wraps(original)
    def finite_size_term(sign: str = "fixed") -> sp.Expr:
        original(sign)                      # same validation of ``sign``
        return sp.Integer(0)
    return finite_size_term


def _finite_size_wrong_power(original):
    """The finite-size term with (d/L)^2 in place of d/L: multiplied by an extra factor d/L."""
    from attnverify.theory.signal_recovery import L, d

    @functools.wraps(original)
    def finite_size_term(sign: str = "fixed") -> sp.Expr:
        return original(sign) * d / L
    return finite_size_term


def _w_wrong_exponent(original):
    """w(rho) with the exponent 2 beta theta rho instead of beta theta rho."""
    from attnverify.theory.signal_recovery import rho

    @functools.wraps(original)
    def informative_mass(sign: str = "fixed") -> sp.Expr:
        return original(sign).subs(rho, 2 * rho)
    return informative_mass


def _field_without_sphere_factor(original):
    """F(rho) = J'(rho): the (1 - rho^2) factor of the Riemannian gradient on the sphere dropped."""
    import attnverify.theory.signal_recovery as S

    @functools.wraps(original)
    def reduced_field(sign: str = "fixed", finite_size: bool = False) -> sp.Expr:
        return sp.diff(S.population_objective(sign, finite_size), S.rho)
    return reduced_field


def _stability_flipped(original):
    """Every equilibrium reported with the opposite stability (F'(rho) > 0 read as attracting)."""
    from attnverify.theory.signal_recovery import Equilibrium

    @functools.wraps(original)
    def equilibria(params: dict, sign: str = "fixed", finite_size: bool = False) -> list:
        eqs = original(params, sign, finite_size)
        return [Equilibrium(e.rho, e.eigenvalue, not e.stable, e.certified) for e in eqs]
    return equilibria


# ----------------------------------------------------------------------------- Paper A, numerics
def _naive_softmax(original):
    """softmax as exp(s) / sum exp(s), without subtracting the maximum (overflows for scores > ~709)."""
    @functools.wraps(original)
    def softmax_weights(scores: np.ndarray, axis: int = -1) -> np.ndarray:
        e = np.exp(scores)
        return e / e.sum(axis=axis, keepdims=True)
    return softmax_weights


def _no_tangent_projection(original):
    """The SGA step uses the full Euclidean gradient instead of its tangent part (I - q q^T) grad."""
    @functools.wraps(original)
    def tangent(grad: np.ndarray, q: np.ndarray) -> np.ndarray:
        return np.array(grad, dtype=float, copy=True)
    return tangent


# ----------------------------------------------------------------------------- Paper B
def _pi_onto_v(original):
    """Pi(x) = P x/|P x| with P the projector on the dominant eigenspace of V instead of V B^T."""
    @functools.wraps(original)
    def projection_map(B, V):
        original(B, V)                                  # same validation (assumptions, shapes)
        Vn = np.asarray(V, dtype=float)
        lam, U = np.linalg.eigh((Vn + Vn.T) / 2)
        top = U[:, np.isclose(lam, lam[-1], rtol=1e-12, atol=0.0)]
        P = top @ top.T

        def Pi(x: np.ndarray) -> np.ndarray:
            Y = np.asarray(x, dtype=float) @ P.T
            ny = np.linalg.norm(Y, axis=-1, keepdims=True)
            if np.any(ny == 0):
                raise ValueError("P x = 0: outside the domain of Pi")
            return Y / ny
        return Pi
    return projection_map


def _pi_unnormalised(original):
    """Pi(x) = P_E x: the projection onto the dominant eigenspace without the normalisation back to the sphere."""
    import attnverify.theory.mean_field as M

    @functools.wraps(original)
    def projection_map(B, V):
        Pi, P = original(B, V), M.spectrum(B, V).P_E

        def Pi_unnormalised(x: np.ndarray) -> np.ndarray:
            Pi(x)                                       # same validation (shape, finiteness, domain)
            return np.asarray(x, dtype=float) @ P.T
        return Pi_unnormalised
    return projection_map


def _rate_x2(original):
    """The exponential rate c twice the Jacobian rate gamma/|B^T x*| (e.g. a factor 2 from |x - Pi x|^2)."""
    @functools.wraps(original)
    def convergence_rate(B, V, x_star=None) -> float:
        return 2.0 * original(B, V, x_star)
    return convergence_rate


def _bound_without_sqrt(original):
    """The Theorem-1 rate log(beta + 1)/beta without the square root."""
    @functools.wraps(original)
    def rate(beta):
        return original(beta) ** 2
    return rate


def _field_without_projection(original):
    """Zero-temperature field V y*(x) without the tangent projection P_perp_x."""
    @functools.wraps(original)
    def zero_temperature_field(x, B, V):
        out = original(x, B, V)                         # same validation and return type
        if isinstance(out, sp.MatrixBase):              # SymPy path (used by the Jacobian of the rate)
            xs, Bs, Vs = (sp.Matrix(m) for m in (x, B, V))
            xs = xs.T if xs.cols != 1 else xs
            bvec = Bs.T * xs
            return Vs * bvec / sp.sqrt((bvec.T * bvec)[0])
        X = np.asarray(x, dtype=float)
        Bn, Vn = np.asarray(B, dtype=float), np.asarray(V, dtype=float)
        bvec = X @ Bn
        return (bvec / np.linalg.norm(bvec, axis=-1, keepdims=True)) @ Vn.T
    return zero_temperature_field


def _naive_particle_softmax(original):
    """The particle field's softmax exp(beta S) / sum exp(beta S) without subtracting the row maximum."""
    class NaiveField(original):
        def __call__(self, X: np.ndarray) -> np.ndarray:
            if np.isinf(self.beta):
                return super().__call__(X)
            XB = X @ self.B
            W = np.exp(self.beta * (XB @ X.T))
            M = (W @ (X @ self.V.T)) / W.sum(axis=1, keepdims=True)
            return M - np.einsum("ij,ij->i", M, X)[:, None] * X

    NaiveField.__name__ = NaiveField.__qualname__ = original.__name__
    NaiveField.__module__ = original.__module__
    return NaiveField


MUTANTS: tuple[Mutant, ...] = (
    Mutant("J_sign_flip", SR, "population_objective", _sign_flip, ("signal.objective_vs_montecarlo",),
           "J(rho) replaced by J(-rho) (sign flip of the alignment)"),
    Mutant("J_cross_term_x2", SR, "_limit_for_shift", _cross_term_x2, ("signal.objective_vs_montecarlo",),
           "J = a_xi^2 + 4 rho a_xi a_q + a_q^2: factor 2 in the cross term of |f_inf|^2"),
    Mutant("finite_size_dropped", SR, "finite_size_term", _finite_size_dropped, ("signal.objective_vs_montecarlo",),
           "the (d-1) sigma^2 E sum a_i^2 finite-size term dropped"),
    Mutant("finite_size_wrong_power", SR, "finite_size_term", _finite_size_wrong_power,
           ("signal.objective_vs_montecarlo",), "finite-size term with (d/L)^2 instead of d/L"),
    Mutant("w_wrong_exponent", SR, "informative_mass", _w_wrong_exponent, ("signal.attention_on_noise",),
           "informative mass w(rho) with exponent 2 beta theta rho"),
    Mutant("F_missing_sphere_factor", SR, "reduced_field", _field_without_sphere_factor,
           ("signal.reduced_field_identity", "signal.equilibria_stability"),
           "reduced field F = J' without the (1 - rho^2) factor"),
    Mutant("stability_flipped", SR, "equilibria", _stability_flipped, ("signal.equilibria_stability",),
           "wrong stability classification: every equilibrium's attracting/repelling label flipped"),
    Mutant("softmax_no_max_subtraction", "attnverify.numerics.signal_model", "softmax_weights", _naive_softmax,
           ("signal.low_temperature",),
           "Paper A softmax without max-subtraction (exp overflow at large beta)"),
    Mutant("sga_no_tangent_projection", "attnverify.numerics.sga", "tangent", _no_tangent_projection,
           ("signal.reduced_field_identity", "signal.ode_tracks_sga", "signal.alignment_30_runs"),
           "SGA step with the Euclidean gradient, no tangent projection (I - q q^T)"),
    Mutant("Pi_onto_V", MF, "projection_map", _pi_onto_v, ("meanfield.projection_stationary", "meanfield.w2_bound"),
           "Pi projects onto the dominant eigenspace of V instead of V B^T"),
    Mutant("Pi_unnormalised", MF, "projection_map", _pi_unnormalised,
           ("meanfield.projection_stationary", "meanfield.w2_bound"), "Pi(x) = P_E x without normalisation"),
    Mutant("rate_c_x2", MF, "convergence_rate", _rate_x2, ("meanfield.projection_stationary",),
           "exponential rate c off by a factor 2"),
    Mutant("bound_without_sqrt", "attnverify.checks.meanfield.limit", "rate", _bound_without_sqrt,
           ("meanfield.zero_temperature_limit", "meanfield.w2_bound"),
           "Theorem-1 rate log(beta+1)/beta without the square root",
           equivalent="s(beta)^2 = log(beta+1)/beta is a stronger rate than s(beta) and still true under the paper's "
                      "assumptions: for a positive Lipschitz density the Laplace error of the field is O(1/beta) "
                      "(measured exponent -1.000 in meanfield.zero_temperature_limit). For the W2 bound with fitted "
                      "constants no finite data can separate the two: on [beta_1, beta_n], since s <= 1 decreases, "
                      "K (s e^{C1 t} + e^{-ct}) <= (K / s(beta_n)) (s^2 e^{C1 t} + e^{-ct})"),
    Mutant("X_inf_without_tangent_projection", MF, "zero_temperature_field", _field_without_projection,
           ("meanfield.zero_temperature_limit", "meanfield.projection_stationary"),
           "zero-temperature field V B^T x/|B^T x| without P_perp_x"),
    Mutant("particle_softmax_no_max_subtraction", "attnverify.numerics.particles", "_Field", _naive_particle_softmax,
           ("meanfield.w2_bound", "meanfield.terminal_phase"),
           "particle attention softmax without max-subtraction (exp overflow at beta ||B|| > ~709)"),
)


def by_name(name: str) -> Mutant:
    """The mutant called ``name`` (ValueError if there is none)."""
    for m in MUTANTS:
        if m.name == name:
            return m
    raise ValueError(f"unknown mutant {name!r} (known: {', '.join(m.name for m in MUTANTS)})")


# Mutants that no check catches in the quick profile although they are not equivalent, and why (measured; see the
# selftest report). None at present: the last two were closed by signal.low_temperature (scores beyond exp's range)
# and by sharing one SGA step between the SGA runs and the drift estimator.
KNOWN_GAPS: dict[str, str] = {}
