"""The terminal phase of Paper B (Conjecture 1) as the claims read it: the typed findings of the check
meanfield.terminal_phase (terminal.py), one :class:`TerminalFindings` per model case, with the comparisons of the
derived cluster field with the measured clusters (:class:`RateComparison`) and the fit of the switch times
(:class:`SwitchTimeFit`)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["RateComparison", "SwitchTimeFit", "TerminalFindings"]


@dataclass(frozen=True)
class RateComparison:
    """One comparison of derived with measured at one beta.  ``what``: ``approach``, ``rotation`` or ``escape`` (a
    rate: ``measured`` the worst cluster's value, ``relative_error`` |measured - derived| / derived, ``uncertainty``
    its relative uncertainty from window halves and refinement samples), ``transport`` (``measured`` the worst
    one-step error relative to the step, derived 0) or ``position`` (``measured`` the largest distance of a tight
    cluster from S at t_max, ``tolerance`` the window's top).  ``status``: ``agrees``, ``disagrees``, ``undecided``
    (within its uncertainty of the tolerance) or ``imprecise`` (uncertainty above a tenth of the tolerance)."""

    what: str
    beta: float
    derived: float
    measured: float
    relative_error: float
    uncertainty: float
    tolerance: float
    samples: int
    status: str


@dataclass(frozen=True)
class SwitchTimeFit:
    """t_switch = slope log(beta) + intercept over the betas that switched: 95 % t-interval of the slope
    (``ci95``), widened by the refinement samples' spread (``interval``)."""

    slope: float
    intercept: float
    ci95: tuple[float, float]
    interval: tuple[float, float]
    r2: float
    refinement_spread: float
    n: int


@dataclass(frozen=True)
class TerminalFindings:
    """The terminal phase of one model, as the claims read it (per beta, in the order of ``betas``).

    Structure (derived): ``structure`` is ``switch`` (the tokens must leave E for S), ``nested`` (S lies in E: they
    stay in E) or ``shared`` (E lies in S and S is at rest: nothing moves after the zero-temperature phase);
    ``motion`` ``fixed`` or ``rotation``; ``P_E``, ``P_S`` the orthogonal projectors, ``B``, ``V`` the model.
    Phases (measured): ``dwell_E`` (longest time with q_E >= meta_level), ``metastable`` (dwell_E >= meta_dwell),
    ``t_meta`` (its start), ``t_switch`` (q_S crossing 1/2 after it; None without), ``t_switch_vs_log_beta``,
    ``on_E_at_t_max`` (q_E(t_max) >= level), ``escape_horizon`` (when a tight cluster on E must have left it).
    Terminal state: ``q_S_late`` (min of q_S over the late window ``late_window``), ``late_moments`` (per beta an
    array (samples, times, d, d) of the second-moment matrices (1/N) sum x x^T over the late window, main sample
    first) from which a claim reads the mass on any subspace; ``rotation_rate_measured`` (per beta, None when not
    measured); ``comparisons`` (every rate compared); ``extra_cases`` (the other models' findings)."""

    model: str
    betas: tuple[float, ...]
    B: np.ndarray
    V: np.ndarray
    structure: str
    motion: str
    dominant_eigenvalues: tuple[complex, ...]
    dim_E: int
    dim_S: int
    P_E: np.ndarray
    P_S: np.ndarray
    approach_rate: float
    rotation_rate: float
    escape_rate: float | None
    comparisons: tuple[RateComparison, ...]
    rotation_rate_measured: tuple[float | None, ...]
    t_max: float
    level: float
    meta_level: float
    meta_dwell: float
    dwell_E: tuple[float, ...]
    metastable: tuple[bool, ...]
    t_meta: tuple[float | None, ...]
    t_switch: tuple[float | None, ...]
    t_switch_vs_log_beta: SwitchTimeFit | None
    on_E_at_t_max: tuple[bool, ...]
    escape_horizon: tuple[float | None, ...]
    late_window: tuple[float, float]
    q_S_late: tuple[float, ...]
    late_moments: tuple[np.ndarray, ...]
    n_clusters: tuple[int, ...]
    particles_per_window: tuple[float, ...]
    extra_cases: tuple["TerminalFindings", ...] = field(default=())

    @property
    def switched(self) -> tuple[bool, ...]:
        return tuple(s is not None for s in self.t_switch)
