"""Paper C's simulators as one object, the numeric side its checks receive (``ctx.numerics``).

:class:`Simulators` holds the entry points the checks call (Monte Carlo, quadrature, projected gradient descent, SGD,
the baselines, zeta's quadrature) and the inner pieces a self-test may replace, each passed down by the checks to
the simulator that takes it as a keyword argument:

* ``sample_tasks`` -- the law of the tasks (``sample=`` of risk_samples, risk_mc, bayes_risk_mc, linear_baseline);
* ``empirical_loss_grad`` -- the batch loss of SGD and its gradients (``loss_grad=`` of sgd_reference);
* ``pgd_step`` -- one projected step of every run (``kernel=`` of pgd).

A wrong version is ``dataclasses.replace(NUMERICS, sample_tasks=wrong)``: an argument, nothing patched. A task sent
to a worker process gets the plain functions it needs as its arguments (they pickle by reference); the compiled step
runs in the check's own process.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from attnverify.numerics.slr.bayes import bayes_risk_mc
from attnverify.numerics.slr.linear import linear_baseline
from attnverify.numerics.slr.model import sample_tasks
from attnverify.numerics.slr.pgd import pgd, step_numba
from attnverify.numerics.slr.quadrature import risk_gradient_fd, risk_quadrature
from attnverify.numerics.slr.risk import risk_mc, risk_samples
from attnverify.numerics.slr.sgd import empirical_loss_grad, sgd
from attnverify.numerics.slr.zeta import erf_square_mean, quadrature_error

__all__ = ["NUMERICS", "Simulators"]


@dataclass(frozen=True)
class Simulators:
    """The simulators of Paper C and their replaceable pieces (module docstring); the defaults are the real ones."""

    # replaceable pieces
    sample_tasks: Callable = sample_tasks
    empirical_loss_grad: Callable = empirical_loss_grad
    pgd_step: Callable = step_numba
    # entry points
    risk_samples: Callable = risk_samples
    risk_mc: Callable = risk_mc
    risk_quadrature: Callable = risk_quadrature
    risk_gradient_fd: Callable = risk_gradient_fd
    pgd: Callable = pgd
    sgd: Callable = sgd
    bayes_risk_mc: Callable = bayes_risk_mc
    linear_baseline: Callable = linear_baseline
    erf_square_mean: Callable = erf_square_mean
    quadrature_error: Callable = quadrature_error


#: the simulators every Paper C check receives by default
NUMERICS = Simulators()
