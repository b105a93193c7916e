"""Paper B's self-test material: the mutants (deliberately wrong closed forms and implementations, for
``attnverify selftest --mutants``) and the perturbation families and rows of the power self-test
(``attnverify selftest --power``).

Families: a *scale* of a closed form (X_inf and its flow, the rate c, C1, the terminal approach and rotation
rates), a *mismatch* of the model (B and V rotated by an angle delta, so the eigenspaces of V B^T and of V turn by
delta while the spectrum is kept; the top eigenvalue of V B^T raised by delta mu_1; the Theorem-1 rate s(beta) at
beta (1 + delta); the terminal subspace S turned by delta), or one *fixed* wrong closed form (Pi onto the dominant
eigenspace of V; S onto V's next invariant subspace, or onto the dominant eigenspace of V's symmetric part).

Every mutant is an argument of the checks (:class:`attnverify.checks.plugin.Mutant`), built from the object they
receive: a copy of the theory (attnverify.theory.meanfield.THEORY) with closed forms replaced, seen by every closed
form that calls them (a wrong derivation propagates: a wrong X_inf changes its Jacobian and the rates); for a model
mismatch a view in which the closed forms the checks read are evaluated at the wrong model (the closed forms they call
themselves get the matrices already changed); or the simulators (attnverify.numerics.meanfield.simulators.NUMERICS)
with the particle field's softmax replaced.
"""
from __future__ import annotations

import dataclasses
import inspect
import math
from collections.abc import Callable, Sequence

import numpy as np
import sympy as sp

from attnverify.checks.plugin import Family, Mutant, Param, PowerRow
from attnverify.theory.closed_forms import overlay


# ------------------------------------------------------------------------------- wrong closed forms
# Each is a replacement method ``fn(self, ...)`` for ``theory.replace(name=fn)``: every closed form of the copy sees
# it (a wrong derivation propagates); ``self.original(name)`` is the method it replaces.
def _pi_onto_v(self, B, V):
    """Pi(x) = P x/|P x| with P the projector on the dominant eigenspace of V instead of V B^T."""
    self.original("projection_map")(B, V)               # same validation (assumptions, shapes)
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


def _pi_unnormalised(self, B, V):
    """Pi(x) = P_E x: the projection onto the dominant eigenspace without the normalisation back to the sphere."""
    Pi, P = self.original("projection_map")(B, V), self.spectrum(B, V).P_E

    def Pi_unnormalised(x: np.ndarray) -> np.ndarray:
        Pi(x)                                           # same validation (shape, finiteness, domain)
        return np.asarray(x, dtype=float) @ P.T
    return Pi_unnormalised


def _rate_x2(self, B, V, x_star=None) -> float:
    """The exponential rate c twice the Jacobian rate gamma/|B^T x*| (e.g. a factor 2 from |x - Pi x|^2)."""
    return 2.0 * self.original("convergence_rate")(B, V, x_star)


def _scale_expansion(k: int, factor: float) -> Callable:
    """field_error_expansion with its coefficient e_k times factor."""
    def field_error_expansion(self, X, B, V, c0, a, C, order=4):
        E = np.array(self.original("field_error_expansion")(X, B, V, c0, a, C, order))
        E[k] = E[k] * factor
        return E
    return field_error_expansion


def _scale_tail(factor: float) -> Callable:
    """field_error_expansion with every coefficient e_k, k >= 1, times factor (e_0 = 0 kept)."""
    def field_error_expansion(self, X, B, V, c0, a, C, order=4):
        E = np.array(self.original("field_error_expansion")(X, B, V, c0, a, C, order))
        E[1:] = E[1:] * factor
        return E
    return field_error_expansion


def _field_without_projection(self, x, B, V):
    """Zero-temperature field V y*(x) without the tangent projection P_perp_x."""
    out = self.original("zero_temperature_field")(x, B, V)   # same validation and return type
    if isinstance(out, sp.MatrixBase):              # SymPy path (used by the Jacobian of the rate)
        xs, Bs, Vs = (sp.Matrix(m) for m in (x, B, V))
        xs = xs.T if xs.cols != 1 else xs
        bvec = Bs.T * xs
        return Vs * bvec / sp.sqrt((bvec.T * bvec)[0])
    X = np.asarray(x, dtype=float)
    Bn, Vn = np.asarray(B, dtype=float), np.asarray(V, dtype=float)
    bvec = X @ Bn
    return (bvec / np.linalg.norm(bvec, axis=-1, keepdims=True)) @ Vn.T


def _projector(vectors: np.ndarray) -> np.ndarray:
    q, _ = np.linalg.qr(vectors)
    return q @ q.T


def _subspace_of_group(V: np.ndarray, group: int) -> np.ndarray:
    """Orthogonal projector onto the real invariant subspace of V's ``group``-th eigenvalue (0: the dominant one) in
    decreasing real part, a complex pair counted once."""
    w, U = np.linalg.eig(np.asarray(V, dtype=float))
    order = np.argsort(-w.real, kind="stable")
    seen, groups = set(), []
    for i in order:
        if i in seen:
            continue
        pair = [j for j in order if j != i and abs(w[j] - np.conj(w[i])) <= 1e-9 * max(1.0, abs(w[i]))]
        seen.update([i, *pair[:1]])
        groups.append(np.c_[U[:, i].real, U[:, i].imag] if abs(w[i].imag) > 1e-12 else U[:, [i]].real)
    return _projector(groups[group])


def _value_subspace_next(self, V):
    """The terminal subspace S onto the invariant subspace of V's next eigenvalue group instead of the dominant one."""
    self.original("value_eigenspace")(V)                # same validation
    return _subspace_of_group(V, 1)


def _value_subspace_symmetric_part(self, V):
    """The terminal subspace S onto the dominant eigenspace (same dimension) of the symmetric part (V + V^T)/2: an
    orthogonal eigenspace, right only for a symmetric V."""
    k = int(round(np.trace(self.original("value_eigenspace")(V))))
    lam, U = np.linalg.eigh((np.asarray(V, float) + np.asarray(V, float).T) / 2)
    return U[:, -k:] @ U[:, -k:].T


def _value_subspace_tilt(angle: float) -> Callable:
    """The terminal subspace S turned by ``angle`` in the plane of its first basis vector and the first direction
    orthogonal to it."""
    def value_eigenspace(self, V):
        P = self.original("value_eigenspace")(V)
        w, U = np.linalg.eigh(P)
        a, b = U[:, w > 0.5][:, 0], U[:, w < 0.5][:, 0]
        R = np.eye(len(P)) + np.sin(angle) * (np.outer(b, a) - np.outer(a, b)) \
            + (np.cos(angle) - 1) * (np.outer(a, a) + np.outer(b, b))
        return R @ P @ R.T
    return value_eigenspace


# ------------------------------------------------------------------------------- a wrong simulator
def naive_moments(XB: np.ndarray, X: np.ndarray, VX: np.ndarray, beta: float) -> np.ndarray:
    """The particle field's softmax average exp(beta S) VX / sum exp(beta S), S = XB X^T, without subtracting the row
    maximum (exp overflows at beta |S| > ~709)."""
    W = np.exp(beta * (XB @ X.T))
    return (W @ VX) / W.sum(axis=1, keepdims=True)


def _replaced(**methods: Callable) -> Callable:
    """make(theory): a copy of the theory with these closed forms replaced (seen by every closed form)."""
    return lambda theory: theory.replace(**methods)


MUTANTS: tuple[Mutant, ...] = (
    Mutant("Pi_onto_V", _replaced(projection_map=_pi_onto_v),
           ("meanfield.projection_stationary", "meanfield.w2_bound"),
           "Pi projects onto the dominant eigenspace of V instead of V B^T"),
    Mutant("Pi_unnormalised", _replaced(projection_map=_pi_unnormalised),
           ("meanfield.projection_stationary", "meanfield.w2_bound"), "Pi(x) = P_E x without normalisation"),
    Mutant("rate_c_x2", _replaced(convergence_rate=_rate_x2), ("meanfield.projection_stationary", "meanfield.w2_bound"),
           "exponential rate c off by a factor 2"),
    Mutant("laplace_first_order_halved", _replaced(field_error_expansion=_scale_expansion(1, 0.5)),
           ("meanfield.zero_temperature_limit",),
           "the Laplace expansion's first-order coefficient e_1 halved (e.g. a lost factor 2 in grad_T log f)"),
    Mutant("X_inf_without_tangent_projection", _replaced(zero_temperature_field=_field_without_projection),
           ("meanfield.zero_temperature_limit", "meanfield.projection_stationary"),
           "zero-temperature field V B^T x/|B^T x| without P_perp_x"),
    Mutant("S_next_invariant_subspace", _replaced(value_eigenspace=_value_subspace_next), ("meanfield.terminal_phase",),
           "the terminal subspace S onto V's next invariant subspace instead of the dominant one"),
    Mutant("S_symmetric_part", _replaced(value_eigenspace=_value_subspace_symmetric_part),
           ("meanfield.terminal_phase",),
           "the terminal subspace S onto the dominant eigenspace of (V + V^T)/2 (right only for a symmetric V)"),
    Mutant("particle_softmax_no_max_subtraction", lambda numerics: dataclasses.replace(numerics, moments=naive_moments),
           ("meanfield.w2_bound", "meanfield.terminal_phase"),
           "particle attention softmax without max-subtraction (exp overflow at beta ||B|| > ~709): meanfield.w2_bound "
           "judges the non-finite particle simulations against its finite closed forms (a fail)", target="numerics"),
)


def mutants() -> tuple[Mutant, ...]:
    return MUTANTS


# ------------------------------------------------------------------------------- power: perturbation families
def _scaled(name: str, factor: float) -> Callable:
    """The closed form ``name`` times ``factor`` (SymPy expressions, matrices, arrays, floats)."""
    def method(self, *args, **kwargs):
        return self.original(name)(*args, **kwargs) * factor
    return method


def _scaled_entry(name: str, key: str, factor: float) -> Callable:
    """The closed form ``name`` (a dict) with its entry ``key`` times ``factor``."""
    def method(self, *args, **kwargs):
        out = dict(self.original(name)(*args, **kwargs))
        out[key] = out[key] * factor
        return out
    return method


def _flow_time_scale(factor: float) -> Callable:
    """closed_form_flow(x0, B, V, times) at times x factor: the flow of the field X_inf x factor."""
    def closed_form_flow(self, x0, B, V, times):
        return self.original("closed_form_flow")(x0, B, V, np.asarray(times, dtype=float) * factor)
    return closed_form_flow


def _theorem1_at(factor: float) -> Callable:
    """theorem1_rate(beta) evaluated at beta x factor."""
    def theorem1_rate(self, beta):
        return self.original("theorem1_rate")(np.asarray(beta, dtype=float) * factor)
    return theorem1_rate


def _rotation(d: int, angle: float) -> np.ndarray:
    """Rotation by ``angle`` in the (e_1, e_2) plane of R^d."""
    R = np.eye(d)
    c, s = math.cos(angle), math.sin(angle)
    R[:2, :2] = [[c, -s], [s, c]]
    return R


def matrix_closed_forms(theory, value_only: bool = False) -> list[str]:
    """The closed forms of ``theory`` that take the matrices B and V (with ``value_only`` also those of V alone, the
    terminal phase), the assumptions aside: what a model mismatch evaluates at the wrong model."""
    names = []
    for name in dir(type(theory)):
        fn = getattr(type(theory), name)
        if name.startswith("_") or name in ("replace", "original", "check_assumptions") or not inspect.isfunction(fn):
            continue
        params = inspect.signature(fn).parameters
        if "V" in params and ("B" in params or value_only):
            names.append(name)
    return names


def _matrix_mismatch(name: str, transform: Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]],
                     value_only: bool = False) -> list[Mutant]:
    """Every Paper B closed form with matrix arguments B, V evaluated at transform(B, V); with ``value_only`` also the
    closed forms of V alone (the terminal phase), at the V of transform(I, V).  Where the check reads them only
    (:func:`attnverify.theory.closed_forms.overlay`): the closed forms they call themselves see the matrices they are
    given (already transformed, so a model is never transformed twice)."""
    def make(theory):
        def at_the_wrong_model(method: str) -> Callable:
            sig = inspect.signature(getattr(theory, method))

            def call(th, *args, **kwargs):
                bound = sig.bind(*args, **kwargs)
                if "B" not in bound.arguments:
                    Vn = np.asarray(bound.arguments["V"], dtype=float)
                    bound.arguments["V"] = transform(np.eye(Vn.shape[0]), Vn)[1]
                    return getattr(th, method)(*bound.args, **bound.kwargs)
                B, V = bound.arguments["B"], bound.arguments["V"]
                symbolic = isinstance(B, sp.MatrixBase) or isinstance(V, sp.MatrixBase)
                Bn = np.array(B.tolist(), dtype=float) if isinstance(B, sp.MatrixBase) else np.asarray(B, dtype=float)
                Vn = np.array(V.tolist(), dtype=float) if isinstance(V, sp.MatrixBase) else np.asarray(V, dtype=float)
                B2, V2 = transform(Bn, Vn)
                bound.arguments["B"], bound.arguments["V"] = ((sp.Matrix(B2), sp.Matrix(V2)) if symbolic else (B2, V2))
                return getattr(th, method)(*bound.args, **bound.kwargs)
            return call
        return overlay(theory, **{m: at_the_wrong_model(m) for m in matrix_closed_forms(theory, value_only)})
    return [Mutant(name, make, (), "")]


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


def _fixed(mutant_name: str) -> Callable[[float], list[Mutant]]:
    return lambda _delta: [next(m for m in MUTANTS if m.name == mutant_name)]


def _family_mutant(name: str, **methods: Callable) -> list[Mutant]:
    return [Mutant(name, _replaced(**methods), (), "")]


def families() -> tuple[Family, ...]:
    return (
        Family("X_inf_scale", "scale", "zero-temperature field X_inf x (1 + delta) (and its flow at times x "
               "(1 + delta))",
               lambda dl: _family_mutant("X_inf_scale",
                                         zero_temperature_field=_scaled("zero_temperature_field", 1 + dl),
                                         closed_form_flow=_flow_time_scale(1 + dl))),
        Family("rate_scale", "scale", "exponential rate c x (1 + delta) (the theory's convergence_rate)",
               lambda dl: _family_mutant("rate_scale", convergence_rate=_scaled("convergence_rate", 1 + dl))),
        Family("model_rotation", "mismatch", "Paper B theory at B, V rotated by the angle delta (the eigenspaces of "
               "V B^T and of V turn by delta)",
               lambda dl: _matrix_mismatch("model_rotation", _rotate_model(dl), value_only=True)),
        Family("C1_scale", "scale", "the growth constant C1 of Theorem 1 x (1 + delta) (the theory's "
               "growth_constant)",
               lambda dl: _family_mutant("C1_scale", growth_constant=_scaled_entry("growth_constant", "C1", 1 + dl))),
        Family("theorem1_beta_mismatch", "mismatch", "the Theorem-1 rate s(beta) evaluated at beta (1 + delta) (the "
               "theory's theorem1_rate)",
               lambda dl: _family_mutant("theorem1_beta", theorem1_rate=_theorem1_at(1 + dl))),
        Family("laplace_coefficient_scale", "scale", "the Laplace expansion's coefficients e_1, e_2, ... of X_beta - "
               "X_inf x (1 + delta) (the theory's field_error_expansion)",
               lambda dl: _family_mutant("laplace_coefficient_scale", field_error_expansion=_scale_tail(1 + dl))),
        Family("axis_rate_scale", "scale", "the terminal-phase axis rate v1 - v2 x (1 + delta) (the theory's "
               "terminal_rates)",
               lambda dl: _family_mutant("axis_rate_scale",
                                         terminal_rates=_scaled_entry("terminal_rates", "axis_rate", 1 + dl))),
        Family("top_eigenvalue", "mismatch", "Paper B theory with the top eigenvalue of V B^T raised by delta mu_1",
               lambda dl: _matrix_mismatch("top_eigenvalue", _raise_top_eigenvalue(dl))),
        Family("Pi_onto_V", "fixed", "Pi onto the dominant eigenspace of V instead of V B^T", _fixed("Pi_onto_V")),
        Family("rotation_rate_scale", "scale", "the terminal-phase rotation rate |Im lambda_1| x (1 + delta) (the "
               "theory's terminal_rates)",
               lambda dl: _family_mutant("rotation_rate_scale",
                                         terminal_rates=_scaled_entry("terminal_rates", "rotation_rate", 1 + dl))),
        Family("S_next_invariant_subspace", "fixed", "the terminal subspace S onto V's next invariant subspace",
               _fixed("S_next_invariant_subspace")),
        Family("S_symmetric_part", "fixed", "the terminal subspace S onto the dominant eigenspace of (V + V^T)/2",
               _fixed("S_symmetric_part")),
        Family("S_tilt", "mismatch", "the terminal subspace S turned by the angle delta (the theory's "
               "value_eigenspace)",
               lambda dl: _family_mutant("S_tilt", value_eigenspace=_value_subspace_tilt(dl))),
    )


def power_rows() -> tuple[PowerRow, ...]:
    return (
        PowerRow("meanfield.zero_temperature_limit", "X_inf_scale", 1e-3, smoke=True),
        PowerRow("meanfield.zero_temperature_limit", "laplace_coefficient_scale", 1e-3),
        PowerRow("meanfield.zero_temperature_limit", "model_rotation"),
        PowerRow("meanfield.zero_temperature_flow", "X_inf_scale", 1e-3, smoke=True),
        PowerRow("meanfield.zero_temperature_flow", "model_rotation"),
        PowerRow("meanfield.projection_stationary", "X_inf_scale", 1e-3),
        PowerRow("meanfield.projection_stationary", "rate_scale", 5e-3, smoke=True),
        PowerRow("meanfield.projection_stationary", "model_rotation"),
        PowerRow("meanfield.projection_stationary", "top_eigenvalue"),
        PowerRow("meanfield.w2_bound", "C1_scale"),
        PowerRow("meanfield.w2_bound", "X_inf_scale"),
        PowerRow("meanfield.w2_bound", "model_rotation"),
        PowerRow("meanfield.w2_bound", "Pi_onto_V"),
        # the smoke family: a scale of a closed form leaves the simulations the unperturbed run's (0.5 s for both
        # signs), where model_rotation moves the check's grid and reruns them (13 s)
        PowerRow("meanfield.w2_bound", "rate_scale", 5e-3, smoke=True),
        PowerRow("meanfield.w2_bound", "theorem1_beta_mismatch", not_applicable="the stated rate s(beta) is data "
                 "(stated.toml), read by the claim B.theorem1, not a closed form of the check; the claim self-test "
                 "perturbs it"),
        PowerRow("meanfield.terminal_phase", "axis_rate_scale", 1e-3),
        PowerRow("meanfield.terminal_phase", "model_rotation", smoke=True),
        PowerRow("meanfield.terminal_phase", "rotation_rate_scale", 1e-3),
        PowerRow("meanfield.terminal_phase", "S_next_invariant_subspace"),
        PowerRow("meanfield.terminal_phase", "S_symmetric_part"),
        PowerRow("meanfield.terminal_phase", "S_tilt", 1e-3),
        PowerRow("meanfield.terminal_phase", "X_inf_scale", not_applicable="Conjecture 1 is about the finite-beta "
                 "terminal phase (the dominant eigenspace of V); the zero-temperature field does not enter its "
                 "prediction"),
    )


# ------------------------------------------------------------------------------- claim self-test scenarios
# ------------------------------------------------------------------------------- claim self-test scenarios
def _conjecture1_scenarios() -> dict:
    """B.conjecture1: null -- V = diag(-2, 1) with the default B = diag(1, 3): V B^T = diag(-2, 3), so E = span(e2)
    is also V's dominant eigenspace (eigenvalue 1) and nothing moves after the zero-temperature phase (no extra model
    cases).  No counterexample: in the regime the check covers (tight clusters that do not interact) the cluster
    field's attractor is V's dominant invariant subspace for every V (attnverify.theory.meanfield.terminal)."""
    return {"null": {"V": np.diag([-2.0, 1.0]), "cases": ""}}


def claim_scenarios() -> dict:
    """Per claim: ``null`` check overrides (quick profile) under which the evidence has nothing to decide (expect
    inconclusive). No ``counterexample``: the five statements are theorems under the paper's assumptions (as
    reconstructed), so no admissible model makes them false; the perturbed statements of the claim self-test are
    the refutable cases."""
    pre_asymptotic = {"betas": (1.0, 1.5, 2.0)}      # the Laplace expansion is not asymptotic: nothing compared
    unresolved_C1 = {"C1_tol": 1e-12}                 # below the finite-difference resolution of C1: undecidable
    return {
        "B.zero_temperature_limit": {"null": pre_asymptotic},
        "B.zero_temperature_rate": {"null": pre_asymptotic},
        "B.stationary_projection": {"null": unresolved_C1},
        "B.theorem1": {"null": unresolved_C1},
        "B.log_beta_time_scale": {"null": {"betas": (10.0, 10.5, 11.0)}},     # t_min cannot move over 10 %
        "B.conjecture1": _conjecture1_scenarios(),
    }


def model_point(params: Sequence[Param], rng: np.random.Generator) -> dict:
    """The model sweep's draw of a Paper B model (attnverify.selftest.model_sweep: V Bᵀ must be symmetric with a
    spectral gap, which a generic draw never meets): d in {2, 3, 4}; Q = s_q (I + a G), K = s_k (I + a G') with G, G'
    Gaussian and a log-uniform in [0.1, 3] (far from the identity: B = QᵀK may have complex and negative
    eigenvalues); V = S B^{-T} with S = R diag(λ) Rᵀ symmetric (R Haar), so that V Bᵀ = S as the model requires. λ:
    the top eigenvalue λ₁ log-uniform in [0.1, 10] with sign +, the others uniform in [-2 λ₁, λ₁ - g] with the gap g
    log-uniform in [1e-3, 1] λ₁ (near-degenerate to well separated; negative eigenvalues included); the scales s_q,
    s_k log-uniform in [0.1, 10] (large norms). Entries beyond the model's limit are refused by ``Paper.validate``
    and drawn again."""
    d = int(rng.integers(2, 5))
    a = float(np.exp(rng.uniform(np.log(0.1), np.log(3.0))))
    sq, sk = np.exp(rng.uniform(np.log(0.1), np.log(10.0), size=2))
    Q = sq * (np.eye(d) + a * rng.standard_normal((d, d)))
    K = sk * (np.eye(d) + a * rng.standard_normal((d, d)))
    top = float(np.exp(rng.uniform(np.log(0.1), np.log(10.0))))
    gap = top * float(np.exp(rng.uniform(np.log(1e-3), 0.0)))
    lam = np.concatenate([[top], rng.uniform(-2 * top, top - gap, size=d - 1)])
    q, r = np.linalg.qr(rng.standard_normal((d, d)))
    R = q * np.sign(np.diag(r))
    B = Q.T @ K
    V = R @ np.diag(lam) @ R.T @ np.linalg.inv(B.T)
    return {"d": d, "Q": Q, "K": K, "V": V}
