r"""How large the simulated sizes must be for the finite-L closed forms to be compared: the predicted remainder of
the delta method.

The O(1/L) terms of the engine (``J_correction``, ``mass_finite``, ``F_finite``) are the second-order delta method
for ratios of sums of L independent terms e^{<a, x_i>} (x_i, 1).  Its neglected remainder is O(1/L^2) with a
constant that grows with the spread of the weights e^{<a, x>}: successive orders involve the relative moments

    m_j(q) = sum_c pi_c M_c(j a) / (sum_c pi_c M_c(a))^j          (M_c the component's MGF, a = a(q))

(one Gaussian component with score variance v: m_j = e^{j (j - 1) v / 2}; L / m_2 is the effective number of
tokens).  The ratio of the next order to the O(1/L) terms is predicted as

    remainder / |O(1/L) terms| ~ C_R m_3(q) / (m_2(q) L),

measured on the example models with 8000 - 40000 sequences: the ratio of
the measured remainder to m_3 / (m_2 L) times the O(1/L) terms is 1.0 - 1.3 where the remainder is resolved
(anisotropic.toml at rho = 0 and 0.5, L = 250; paper_a.toml at rho = +-1, L = 250) and 0.1 - 0.6 in the
pre-asymptotic regime of anisotropic.toml at rho = +-1 (scores of variance 4, L = 250 - 2000); C_R = 2 bounds it.
That calibration is J's.  The field F = (I - rho rho^T) grad J has for its remainder the gradient of J's, which the
ratio's own growth with rho makes several times the ratio x F's O(1/L) terms: on anisotropic.toml at L = 1050
(400000 sequences) F_finite's remainder is 0.0154, 0.041, 0.138 at rho = 0.4, 0.5, 0.65, against 0.0045, 0.010,
0.040 by the ratio rule and 0.0168, 0.039, 0.157 by the gradient of J's predicted remainder, the rule of the field
checks (attnverify.checks.engine._common.field_remainder); on two_signals.toml (k = 2, beta = 1.5, L = 1200, 600000
sequences) the resolved remainders are 0.74 - 0.84 of that rule and 2.9 - 3.4 times the ratio rule's.
Two rules follow, both in the checks that compare finite-L closed forms:

* before any work (:func:`expansion_ratio`): a (point, L) whose predicted remainder exceeds MAX_EXPANSION_RATIO of
  the O(1/L) terms lies outside the expansion's range and is left out; when every one is, the setting is refused;
* after the simulation: a (point, L) whose predicted remainder exceeds MAX_REMAINDER_OVER_SE of its measured
  standard error is left out of the test (the remainder, not the closed form, would decide it); which ones were
  left out is reported.  The rule reads the standard errors, never the residuals.

m_j is computed from the engine's log-MGFs of the components (attnverify.theory.engine.laws, through
:func:`attnverify.theory.engine.limit.component_tilt`) at j a(q), with the random sign's worse value: the model's
statement, not a derived quantity under test.
"""
from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

import numpy as np
import sympy as sp

from attnverify.checks.stats import expansion_ratio_of_logs


@lru_cache(maxsize=32)
def _moment_functions(model) -> tuple:
    """NumPy functions (params..., coords...) -> log M_c(j a) for j = 1, 2, 3, every component and sign."""
    from attnverify.theory.engine.limit import component_tilt, geometry

    geo = geometry(model)
    params = [p.symbol for p in model.parameters]
    coords = [*geo.query] + ([geo.t] if model.attention.query == "token" else [])
    out = []
    for eps in geo.signs:
        rows = []
        for c in model.components:
            logs = [geo.reduce(component_tilt(model, geo, c, eps, j).log_mgf) for j in (1, 2, 3)]
            rows.append(sp.lambdify([*params, *coords], logs, modules=["scipy", "numpy"]))
        out.append(rows)
    return tuple(tuple(r) for r in out), len(coords)


def log_relative_moments(model, values: Mapping, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(log m_2, log m_3) at the query coordinates ``points`` ((r, n_coords)), the larger over the random sign: in
    log-space throughout, so that scores of any size give finite logs (m_j itself overflows float64 beyond
    scores of about 700)."""
    fns, ncoord = _moment_functions(model)
    args = [float(values[p.name]) for p in model.parameters]
    sub = {p.symbol: values[p.name] for p in model.parameters}
    pis = np.array([float(c.count.subs(sub)) for c in model.components])
    pis /= pis.sum()
    pts = np.atleast_2d(np.asarray(points, dtype=float))
    cols = [pts[:, i] for i in range(ncoord)] + [np.zeros(len(pts))] * (ncoord - pts.shape[1])
    l2 = np.full(len(pts), -np.inf)
    l3 = np.full(len(pts), -np.inf)
    for rows in fns:
        with np.errstate(all="ignore"):    # a closed form undefined at a point (:func:`defined_at`) gives NaN there
            logs = np.array([[np.broadcast_to(np.asarray(v, float), (len(pts),)) for v in f(*args, *cols)]
                             for f in rows])
        # logs: (C, 3, r); log sum_c pi_c M_c(j a) by log-sum-exp
        with np.errstate(divide="ignore"):
            lp = np.log(pis)[:, None, None] + logs
        top = lp.max(axis=0)
        lsum = top + np.log(np.exp(lp - top).sum(axis=0))             # (3, r)
        l2 = np.maximum(l2, lsum[1] - 2 * lsum[0])
        l3 = np.maximum(l3, lsum[2] - 3 * lsum[0])
    return l2, l3


def expansion_ratio(model, values: Mapping, points: np.ndarray, L: int) -> np.ndarray:
    """The predicted remainder as a fraction of the O(1/L) terms, C_R m_3 / (m_2 L), at each point (module
    docstring); ``values`` at the sequence length L. Computed from the logs of the moments: +inf (far outside the
    expansion's range) where it exceeds e^700, never an overflow or a NaN."""
    l2, l3 = log_relative_moments(model, values, points)
    return expansion_ratio_of_logs(l2, l3, L)


def defined_at(model, values: Mapping, points: np.ndarray) -> np.ndarray:
    """Whether the components' log-MGFs at a(q) are finite at each query point: False where a closed form of the
    model is undefined (the sphere law's, written with |a| in a denominator, at a vanishing score vector a = 0,
    where its limit is M = 1; docs/models.md, Limits)."""
    l2, l3 = log_relative_moments(model, values, points)
    return ~(np.isnan(l2) | np.isnan(l3))
