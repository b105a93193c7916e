"""Paper B's simulators as one object: what a check receives as ``ctx.numerics`` (so that a self-test can hand it a
wrong one, e.g. a particle softmax without max-subtraction, without patching a module).

Each field is the entry point a check calls, or the piece a simulator takes as an argument:

* ``simulate`` -- the interacting-particle dynamics (:func:`attnverify.numerics.meanfield.particles.simulate`);
* ``moments`` -- its softmax average m_i = sum_j softmax_j(beta <B^T x_i, x_j>) V x_j at finite beta, handed to
  ``simulate(..., moments=...)`` (:func:`attnverify.numerics.kernel.dense_moments`, log-space);
* ``attention_field`` -- the particle field, at beta = inf the numerical zero-temperature field;
* ``zero_temperature_path`` and ``observed_log_norm`` -- the zero-temperature flow by DOP853 and its tangent
  log-norm by central differences (:mod:`attnverify.numerics.meanfield.zero_temperature`);
* ``laplace_field_certified`` -- X_beta[mu] by certified quadrature (:mod:`attnverify.numerics.meanfield.laplace`).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from attnverify.numerics.kernel import dense_moments
from attnverify.numerics.meanfield.laplace import laplace_field_certified
from attnverify.numerics.meanfield.particles import attention_field, simulate
from attnverify.numerics.meanfield.zero_temperature import observed_log_norm, zero_temperature_path

__all__ = ["MeanFieldNumerics", "NUMERICS"]


@dataclass(frozen=True)
class MeanFieldNumerics:
    """The simulators of Paper B's checks (see the module docstring); ``dataclasses.replace`` gives a copy with one
    of them changed."""

    simulate: Callable = simulate
    moments: Callable = dense_moments
    attention_field: Callable = attention_field
    zero_temperature_path: Callable = zero_temperature_path
    observed_log_norm: Callable = observed_log_norm
    laplace_field_certified: Callable = laplace_field_certified


#: the simulators as implemented (what the checks receive unless a self-test hands them a wrong one)
NUMERICS = MeanFieldNumerics()
