r"""What a generated check receives as ``ctx.numerics``: :class:`ModelNumerics`, the simulators of
attnverify.numerics.engine with the bridge that builds their numeric model from the model file
(attnverify.checks.engine._bridge).  It holds the :class:`~attnverify.theory.engine.Model` (the file's statement),
never the derivation: the numerics never read the derived side.
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from attnverify.checks.engine._bridge import mixture_spec, scaled_values
from attnverify.numerics import engine as _engine


class ModelNumerics:
    """The model's simulators: ``spec(values)`` (the numeric model at parameter values), ``at_length(values, L)``
    (the values at the sequence length L, fractions kept) and the estimators ``grid_mc``, ``drift_mc``,
    ``projected_sga``, ``step_moments``, ``sample_iid``, ``attention_map``, ``pushforward_batches`` of
    attnverify.numerics.engine."""

    grid_mc = staticmethod(_engine.grid_mc)
    drift_mc = staticmethod(_engine.drift_mc)
    projected_sga = staticmethod(_engine.projected_sga)
    sample_iid = staticmethod(_engine.sample_iid)
    attention_map = staticmethod(_engine.attention_map)
    steps_at_times = staticmethod(_engine.steps_at_times)
    step_moments = staticmethod(_engine.step_moments)
    attention_map_pooled = staticmethod(_engine.attention_map_pooled)
    attention_map_sign_averaged = staticmethod(_engine.attention_map_sign_averaged)
    pushforward_batches = staticmethod(_engine.pushforward_batches)

    def __init__(self, model) -> None:
        self.model = model

    def spec(self, values: Mapping) -> _engine.MixtureSpec:
        return mixture_spec(self.model, values)

    def at_length(self, values: Mapping, L: int) -> dict:
        return scaled_values(self.model, values, L)


def run_grid(simulate, spec, rhos: np.ndarray, n: int, seed: np.random.SeedSequence):
    """One Monte Carlo task (picklable: the simulator is a module function): ``simulate(spec, rhos, n, rng)``
    (grid_mc, drift_mc)."""
    return simulate(spec, rhos, n, np.random.default_rng(seed))
