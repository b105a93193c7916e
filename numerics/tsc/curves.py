"""Finite-n error curves of the transformed sample's moments, batched over repetitions and scales.

For each size n_k and repetition r: draw n_k tokens from mu (one sample shared by all scales: common random
numbers, so the scales' curves are correlated with each other, each scale's curve being a valid experiment on its
own), compute the outputs Gamma_{mu_n}(y_i) at all rows or at q sampled rows (one kernel call for all scales),
estimate (m_n, C_n) (:mod:`attnverify.numerics.tsc.moments`), and record against each reference

    ||m^ - m||_2,   ||C^ - C||_F,   ||C^ - C||_2,

with the subsampling variances tr Var(m^) and sum_kl Var(C^_kl) of that repetition (zero with all rows).

References:
- "exact": the caller's arrays (m, C) per scale (the closed form; never computed here);
- "empirical": the authors' variant, the moments of one fresh sample of n_reference tokens (one sample for all
  scales, all rows or ``reference_rows`` sampled rows with the same estimator). It carries its own finite-sample
  error, so fitting the same repetitions against both references measures the bias it puts into the slopes
  (:meth:`ErrorCurves.reference_bias`: the slope of log(e_empirical / e_exact), paired over repetitions; its
  standard error is over repetitions given that one reference draw).

Seeds: repetition r at size index k draws from SeedSequence(entropy, spawn_key = seed's key + (0, k, r)), the
reference from key + (1,): results do not depend on the order of work.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from attnverify.numerics.tsc.attention import interactions, self_attention_outputs, self_attention_rows, temperature
from attnverify.numerics.tsc.consistency import Consistency, curve_consistency
from attnverify.numerics.tsc.fit import SlopeFit, fit_slope
from attnverify.numerics.tsc.laws import GaussianLaw, SphereLaw, TokenLaw, finite_matrix, positive_int
from attnverify.numerics.tsc.moments import (ControlValues, control_values, cov_errors, draw_rows, mean_error,
                                             subsample_moments)
from attnverify.numerics.tsc.protocol import Experiment

__all__ = ["ErrorCurves", "LinearControl", "run_error_curves", "run_experiment", "empirical_reference",
           "child_rng", "QUANTITIES", "REFERENCES"]

QUANTITIES = ("mean", "cov_fro", "cov_spectral")
REFERENCES = ("exact", "empirical")


@dataclass(frozen=True, eq=False)
class LinearControl:
    """An affine control g_s(y) = offset[s] + matrix[s] y per scale (offset (S, d), matrix (S, d, d)): its mean and
    covariance over the n rows follow from the tokens' (M ybar + c, M cov_n(Y) M^T), so no (n, d) array is formed
    per scale. For a Gaussian mu, Gamma_mu is affine and the natural choice."""
    offset: np.ndarray
    matrix: np.ndarray


Control = Callable[[int, np.ndarray], np.ndarray] | LinearControl   # callable: (scale index, (n, d)) -> (n, d)


def child_rng(seed, *key: int) -> np.random.Generator:
    """The generator of SeedSequence(seed.entropy, spawn_key = seed.spawn_key + key); an int seed is
    SeedSequence(seed)."""
    ss = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    return np.random.default_rng(np.random.SeedSequence(ss.entropy, spawn_key=(*ss.spawn_key, *key)))


@dataclass(frozen=True, eq=False)
class ErrorCurves:
    """errors["<quantity>/<reference>"]: (S, K, R); sub_var[quantity]: (S, K, R), the subsampling variance of
    each error's estimator (tr Var(m^), sum_kl Var(C^_kl), E ||C^ - C_n||_2^2; zero with all rows); empirical: the reference moments (mean (S, d), cov (S, d, d),
    mean_var (S,), cov_var (S,)) or None."""
    n_values: np.ndarray
    scales: np.ndarray
    reps: int
    query_rows: object               # None, an int, or one int per scale
    errors: dict[str, np.ndarray]
    sub_var: dict[str, np.ndarray]
    empirical: dict[str, np.ndarray] | None
    seconds: float = field(default=0.0)

    def curve(self, quantity: str, reference: str, scale: int) -> tuple[np.ndarray, np.ndarray]:
        """(errors (K, R), subsampling variances (K, R)) of one scale."""
        key = f"{quantity}/{reference}"
        if key not in self.errors:
            raise ValueError(f"no curve {key!r}; available: {sorted(self.errors)}")
        if not (isinstance(scale, (int, np.integer)) and 0 <= scale < self.scales.size):
            raise ValueError(f"scale must be an index in [0, {self.scales.size - 1}], got {scale!r}")
        return self.errors[key][scale], self.sub_var[quantity][scale]

    def fit(self, quantity: str, reference: str, scale: int, level: float = 0.95, window: int | None = None,
            estimand: str = "log") -> SlopeFit:
        """The slope fit (:func:`fit_slope`) of one curve, with its subsampling variances."""
        e, v = self.curve(quantity, reference, scale)
        return fit_slope(self.n_values, e, v if self.query_rows is not None else None, level, window, estimand)

    def consistency(self, quantity: str, reference: str, scale: int, alpha: float = 1e-3) -> Consistency:
        """The internal-consistency test (:func:`curve_consistency`) of one curve."""
        return curve_consistency(self.n_values, self.curve(quantity, reference, scale)[0], alpha)

    def reference_bias(self, quantity: str, scale: int, level: float = 0.95) -> SlopeFit:
        """Slope of log(e_empirical / e_exact) on log n, paired over repetitions: the slope the empirical
        reference adds to the exact-reference slope (positive: it flattens a decreasing curve)."""
        e_emp = self.curve(quantity, "empirical", scale)[0]
        e_ex = self.curve(quantity, "exact", scale)[0]
        return fit_slope(self.n_values, e_emp / e_ex, level=level)


class _Controls:
    """The control's values for one sample Y, per scale (the tokens' moments computed once for a LinearControl)."""

    def __init__(self, control: Control | None, Y: np.ndarray):
        self.control, self.Y = control, Y
        if isinstance(control, LinearControl):
            self.mean = Y.mean(axis=0)
            Yc = Y - self.mean
            self.cov = Yc.T @ Yc / Y.shape[0]

    def at(self, s: int, rows: np.ndarray) -> ControlValues | None:
        c = self.control
        if c is None:
            return None
        if isinstance(c, LinearControl):
            M, off = c.matrix[s], c.offset[s]
            return ControlValues(off + M @ self.mean, M @ self.cov @ M.T, off + self.Y[rows] @ M.T)
        g = np.asarray(c(s, self.Y), dtype=float)
        if g.shape != self.Y.shape or not np.all(np.isfinite(g)):
            raise ValueError(f"control must return finite values of shape {self.Y.shape}, got shape {g.shape}")
        return control_values(g, rows)


def empirical_reference(law: TokenLaw, A, W_v, tau: float, n_reference: int, seed,
                        reference_rows: int | None = None, control: Control | None = None) -> dict[str, np.ndarray]:
    """The authors' reference: moments of the transformed sample of one fresh draw of n_reference tokens, per scale
    (all rows, or ``reference_rows`` sampled rows with the unbiased estimator and its stated variances)."""
    n = positive_int(n_reference, "n_reference", 2)
    A = interactions(A, _law_dimension(law))
    _check_control(law, control, A.shape[0])
    rng = child_rng(seed, 1)
    Y = law.sample(rng, n)
    rows = draw_rows(rng, n, reference_rows)
    out = self_attention_outputs(Y, A, W_v, tau, rows)
    controls = _Controls(control, Y)
    est = [subsample_moments(out[s], rows, n, controls.at(s, rows)) for s in range(out.shape[0])]
    return {"mean": np.array([e.mean for e in est]), "cov": np.array([e.cov for e in est]),
            "mean_var": np.array([e.mean_var for e in est]), "cov_var": np.array([e.cov_var for e in est])}


def _law_dimension(law) -> int:
    if not isinstance(law, (GaussianLaw, SphereLaw)):
        raise ValueError(f"law must be a GaussianLaw or a SphereLaw, got {type(law).__name__}")
    return law.d


def _check_control(law, control, S: int) -> None:
    """The control validated before any work (one-line ValueError)."""
    if isinstance(control, LinearControl):
        finite_matrix(control.offset, "control offset", (S, law.d))
        finite_matrix(control.matrix, "control matrix", (S, law.d, law.d))
    elif control is not None and not callable(control):
        raise ValueError(f"control must be None, a callable (s, Y) -> (n, d) or a LinearControl, got "
                         f"{type(control).__name__}")


def _reference_arrays(exact_mean, exact_cov, S: int, d: int):
    if (exact_mean is None) != (exact_cov is None):
        raise ValueError("exact_mean and exact_cov must be given together (or neither)")
    if exact_mean is None:
        return None
    return finite_matrix(exact_mean, "exact_mean", (S, d)), finite_matrix(exact_cov, "exact_cov", (S, d, d))


def _per_scale_rows(query_rows, S: int) -> list[int | None]:
    if query_rows is None:
        return [None] * S
    q = np.atleast_1d(np.asarray(query_rows))
    if q.ndim != 1 or q.size not in (1, S):
        raise ValueError(f"query_rows must be None, an integer or one integer per scale ({S}), got {query_rows!r}")
    return [positive_int(v, "query_rows", 2) for v in np.broadcast_to(q, (S,)).tolist()]


def _sample_rows(rng: np.random.Generator, n: int, q_s: list[int | None]) -> list[np.ndarray]:
    """Nested simple random samples: the first q_s rows of one random draw of max_s q_s rows (all rows for None)."""
    if any(q is None or q >= n for q in q_s):
        full = np.arange(n)
        rest = draw_rows(rng, n, max((q for q in q_s if q is not None and q < n), default=None))
        return [full if q is None or q >= n else rest[:q] for q in q_s]
    rows = draw_rows(rng, n, max(q_s))
    return [rows[:q] for q in q_s]


SPECTRAL_DRAWS = 8      # bootstrap draws for the spectral norm's subsampling variance


def run_error_curves(law: TokenLaw, A, W_v, tau: float, n_values, reps: int, seed, exact_mean=None,
                     exact_cov=None, n_reference: int | None = None, query_rows=None,
                     reference_rows: int | None = None, control: Control | None = None,
                     scales=None) -> ErrorCurves:
    """Error curves (module docstring) for the interaction matrices A (S, d, d), against the exact reference
    (exact_mean (S, d), exact_cov (S, d, d), given by the caller) and/or the empirical one (n_reference tokens).
    query_rows: None (all rows), an integer, or one integer per scale (nested subsamples of one draw).
    control: an optional control variate for query subsampling, a callable (s, Y) -> (n, d) at scale index s or a
    :class:`LinearControl` (any function of the tokens: the estimates stay unbiased; a control close to
    Gamma_{mu_n} lowers their variance).
    scales: labels of the S matrices kept in the result (default 0..S-1)."""
    started = time.perf_counter()
    d = _law_dimension(law)
    A = interactions(A, d)
    temperature(tau)
    reps = positive_int(reps, "reps", 2)
    n_values = np.asarray(n_values)
    if n_values.ndim != 1 or n_values.size < 1 or not np.issubdtype(n_values.dtype, np.integer) \
            or n_values.min() < 2 or np.any(np.diff(n_values) <= 0):
        raise ValueError(f"n_values must be increasing integers >= 2, got {n_values.tolist()}")
    S, K = A.shape[0], n_values.size
    _check_control(law, control, S)
    q_s = _per_scale_rows(query_rows, S)
    refs = {}
    exact = _reference_arrays(exact_mean, exact_cov, S, d)
    if exact is not None:
        refs["exact"] = exact
    empirical = None
    if n_reference is not None:
        empirical = empirical_reference(law, A, W_v, tau, n_reference, seed, reference_rows, control)
        refs["empirical"] = (empirical["mean"], empirical["cov"])
    if not refs:
        raise ValueError("no reference: give exact_mean and exact_cov, or n_reference, or both")
    errors = {f"{q}/{ref}": np.empty((S, K, reps)) for q in QUANTITIES for ref in refs}
    sub_var = {q: np.zeros((S, K, reps)) for q in QUANTITIES}
    for k, n in enumerate(int(v) for v in n_values):
        for r in range(reps):
            rng = child_rng(seed, 0, k, r)
            Y = law.sample(rng, n)
            rows = _sample_rows(rng, n, q_s)
            outs = self_attention_rows(Y, A, W_v, tau, rows)
            controls = _Controls(control, Y)
            for s in range(S):
                est = subsample_moments(outs[s], rows[s], n, controls.at(s, rows[s]), rng, SPECTRAL_DRAWS)
                for q, v in zip(QUANTITIES, (est.mean_var, est.cov_var, est.cov_var_spectral)):
                    sub_var[q][s, k, r] = v
                for ref, (m, C) in refs.items():
                    errors[f"mean/{ref}"][s, k, r] = mean_error(est.mean, m[s])
                    fro, spec = cov_errors(est.cov, C[s])
                    errors[f"cov_fro/{ref}"][s, k, r], errors[f"cov_spectral/{ref}"][s, k, r] = fro, spec
    labels = np.arange(S, dtype=float) if scales is None else finite_matrix(scales, "scales", (S,))
    return ErrorCurves(n_values, labels, reps, query_rows, errors, sub_var, empirical, time.perf_counter() - started)


def run_experiment(exp: Experiment, seed, exact_mean=None, exact_cov=None, control: Control | None = None,
                   empirical: bool = True) -> ErrorCurves:
    """run_error_curves with the experiment's law, weights, grid, repetitions and subsampling; the empirical
    reference when ``empirical`` and the experiment has one."""
    return run_error_curves(exp.law, exp.A, exp.W_v, exp.tau, exp.n_values, exp.reps, seed, exact_mean, exact_cov,
                            exp.n_reference if empirical else None, exp.query_rows, exp.reference_rows, control,
                            exp.scales)
