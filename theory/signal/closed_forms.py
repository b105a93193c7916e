r"""Paper A (signal-subspace recovery by a softmax query): its closed forms, derived with SymPy, as one object.

Model (:mod:`attnverify.theory.signal.model`): R informative tokens x_i = c xi + z_i and L - R nuisance tokens
x_i = z_i in R^d, z_i ~ N(0, sigma^2 I_d), |xi| = |q| = 1, rho = <q, xi>; scores s_i = beta <q, x_i>, attention
a = softmax(s), output f_q(X) = sum_i a_i x_i, objective J = E |f_q(X)|^2.  ``sign="fixed"``: c = theta;
``sign="symmetric"``: c = eps theta with one Rademacher eps per sequence (the closed forms average over eps).

:class:`SignalTheory` holds them: the long-sequence limit and its O(1/L) terms (:mod:`.limit`), the informative
and nuisance attention masses, J, the reduced field F = (1 - rho^2) J' and the identity that reduces the dynamics to
it (:mod:`.reduction`), the equilibria of rho' = F(rho) and the threshold theta* for -xi, certified in ball
arithmetic (:mod:`.equilibria`, :mod:`.threshold`), and the derivation step by step (:mod:`.steps`).  The methods
call each other through ``self``, so a copy with one closed form replaced (:meth:`ClosedForms.replace`, a wrong
derivation) propagates it to everything derived from it.  Nothing is derived at construction; every derivation is
memoised per object (:func:`attnverify.theory.closed_forms.derived`).  :data:`THEORY` is the default instance.
"""
from __future__ import annotations

import math
from collections.abc import Callable

import sympy as sp

from attnverify.theory.closed_forms import ClosedForms, derived, recorded
from attnverify.theory.derivation import Step
from attnverify.theory.refusals import OutsideCertifiedRange, named_values
from attnverify.theory.signal import limit, reduction, steps, threshold
from attnverify.theory.signal.equilibria import Equilibrium, certified_equilibria, field_functions
from attnverify.theory.signal.model import (check_finite_size_validity, check_sign, rho, theta,
                                            validate_params)


class SignalTheory(ClosedForms):
    """Paper A's closed forms (module docstring). ``sign`` is ``"fixed"`` or ``"symmetric"``; ``finite_size`` adds
    the O(1/L) terms; ``params`` is a dict of theta, beta, sigma, R, L, d (extra keys ignored). Its closed forms
    depend on their arguments alone, so they may be kept across processes (``persist_key``)."""

    persist_key = "signal"

    # -- the long-sequence limit ------------------------------------------------------------------------------
    @derived
    def gaussian_moments(self) -> dict[str, sp.Expr]:
        """E e^{beta g}, E g e^{beta g}, E e^{2 beta g}, E g e^{2 beta g}, E g^2 e^{2 beta g} for g ~ N(0, sigma^2)
        (:func:`attnverify.theory.signal.limit.gaussian_moments`)."""
        return limit.gaussian_moments()

    @derived
    def limit_for_shift(self, c: sp.Expr) -> dict[str, sp.Expr]:
        """The long-sequence limit and its O(1/L) terms for informative tokens with mean shift ``c``: w, a_xi, a_q, J,
        sum_a2, finite, mass_bias, in_plane (:func:`attnverify.theory.signal.limit.limit_for_shift`)."""
        return limit.limit_for_shift(c, self.gaussian_moments())

    def _average(self, sign: str, key: str) -> sp.Expr:
        if check_sign(sign) == "fixed":
            return self.limit_for_shift(theta)[key]
        return (self.limit_for_shift(theta)[key] + self.limit_for_shift(-theta)[key]) / 2

    # -- the closed forms of the model ------------------------------------------------------------------------
    @derived
    def informative_mass(self, sign: str = "fixed") -> sp.Expr:
        """Limit attention mass w(rho) on the R informative tokens; symmetric: (w(rho) + w(-rho)) / 2."""
        return self._average(sign, "w")

    @derived
    def nuisance_mass(self, sign: str = "fixed", finite_size: bool = False) -> sp.Expr:
        """Expected attention mass on the L - R nuisance tokens at alignment rho: 1 - w(rho) in the long-sequence
        limit; ``finite_size`` adds the O(1/L) ratio bias of E[A/(A+B)] (second-order delta method, A and B the
        nuisance and informative sums of e^s, with Var e^{beta g} = E e^{2 beta g} - (E e^{beta g})^2)."""
        M = 1 - self.informative_mass(sign)
        return M + self._average(sign, "mass_bias") if finite_size else M

    @derived
    def population_objective(self, sign: str = "fixed", finite_size: bool = False) -> sp.Expr:
        """J(rho) = |f_oo|^2 (fixed: theta^2 w^2 + 2 beta sigma^2 theta rho w + beta^2 sigma^4, derived);
        symmetric: the average over eps = +-1.  ``finite_size`` adds the O(1/L) terms: :meth:`finite_size_term`
        (the orthogonal noise, factor d - 1) and :meth:`in_plane_term`."""
        J = self._average(sign, "J")
        return J + self.finite_size_term(sign) + self.in_plane_term(sign) if finite_size else J

    @derived
    def finite_size_term(self, sign: str = "fixed") -> sp.Expr:
        """(d - 1) sigma^2 E sum a_i^2
        ~ (d - 1) sigma^2 e^{beta^2 sigma^2} (R e^{2 beta theta rho} + L - R) / (R e^{beta theta rho} + L - R)^2."""
        return self._average(sign, "finite")

    @derived
    def in_plane_term(self, sign: str = "fixed") -> sp.Expr:
        """The O(1/L) bias of the (xi, q)-plane part of E|f|^2 (no factor d): the q-direction noise
        sigma^2 E sum a_i^2, the ratio bias of the tilted mean and the fluctuation of the informative mass
        (second-order delta method)."""
        return self._average(sign, "in_plane")

    @derived
    def reduced_field(self, sign: str = "fixed", finite_size: bool = False) -> sp.Expr:
        """F(rho) = (1 - rho^2) dJ/drho: the xi-component of the Riemannian gradient flow of J on the sphere."""
        return (1 - rho**2) * sp.diff(self.population_objective(sign, finite_size), rho)

    @derived
    def reduction_identity(self, n: int = 3) -> sp.Expr:
        """<xi, P_perp_q grad_q G(<q,xi>, |q|^2)> - (1 - <q,xi>^2) d1G(<q,xi>, 1) on S^{n-1} x S^{n-1}, for an
        arbitrary smooth G: it simplifies to 0 (:func:`attnverify.theory.signal.reduction.reduction_identity`)."""
        return reduction.reduction_identity(n)

    # -- certified equilibria ---------------------------------------------------------------------------------
    @derived
    def _field_functions(self, sign: str, finite_size: bool) -> dict[str, Callable]:
        return field_functions(self.population_objective(sign, finite_size), self.reduced_field(sign, finite_size))

    @derived
    def _equilibria_at(self, vals: tuple, sign: str, finite_size: bool) -> tuple[Equilibrium, ...]:
        return certified_equilibria(self._field_functions(sign, finite_size), vals)

    @recorded
    def equilibria(self, params: dict, sign: str = "fixed", finite_size: bool = False) -> list[Equilibrium]:
        """Every equilibrium of rho' = F(rho) on [-1, 1], sorted by rho, with eigenvalue F'(rho) and stability.

        rho = +-1 are always equilibria (F = (1 - rho^2) J'), with F'(+-1) = -+2 J'(+-1).  Interior equilibria are
        the zeros of J' in (-1, 1).  Guarantee: J' and J'' are evaluated in Arb ball arithmetic (python-flint, 128
        bits; every operation returns a ball containing the exact result); [-1, 1] is covered by boxes that are
        either discarded because 0 is not in J'(box), or shown by the interval Newton test to contain exactly one
        zero (then refined to width ~1e-13), or left unresolved at width 1e-13 (a degenerate zero, returned with
        ``certified=False``).  Hence no interior equilibrium is missed.  Stability is F'(rho) < 0, with F' enclosed
        on the box (``certified`` False if the enclosure holds 0).  Each Equilibrium carries ``enclosure`` (of
        rho), ``eigenvalue_enclosure`` and a ``certificate`` dict (attnverify.theory.certified).
        theta = 0 makes F identically 0: ValueError; finite_size=True with beta^2 sigma^2 > log L (fewer than one
        effective token): ValueError; parameters at which the root isolation gives up (J' too flat or too steep
        for the boxes, e.g. theta = 50 with R = 5, L = 50): ValueError naming them (nothing is guessed).
        """
        vals = validate_params(params)
        check_sign(sign)
        if vals[0] == 0:
            raise ValueError("theta = 0: F vanishes identically, every rho is an equilibrium")
        check_finite_size_validity(vals, finite_size)
        try:
            eqs = list(self._equilibria_at(vals, sign, bool(finite_size)))
        except ValueError as exc:                  # the root isolation gave up: say at which parameters
            why = exc.parts if isinstance(exc, OutsideCertifiedRange) else (str(exc),)
            raise OutsideCertifiedRange("parameters too extreme for certified equilibria at ", *named_values(params),
                                        ": ", *why) from None
        if not all(math.isfinite(e.eigenvalue) for e in eqs):
            raise OutsideCertifiedRange("parameters too extreme: the linearisation ", sp.Function(r"F^{\prime}")(rho),
                                        " overflows double precision at ", *named_values(params))
        return eqs

    # -- the threshold theta* for -xi -------------------------------------------------------------------------
    @derived
    def _minus_xi_functions(self, sign: str, finite_size: bool) -> tuple[sp.Expr, Callable, Callable]:
        """phi(theta) = J'(-1)/theta as an expression and as ball functions (its value and derivative):
        :func:`attnverify.theory.signal.threshold.phi_functions`."""
        return threshold.phi_functions(sp.diff(self.population_objective(sign, finite_size), rho).subs(rho, -1))

    @derived
    def _minus_xi_at(self, vals: tuple, sign: str, finite_size: bool, theta_max: float) -> tuple:
        """(theta*, all sign-change points, status, certificate)."""
        _, phi, dphi = self._minus_xi_functions(sign, finite_size)
        return threshold.certify_threshold(phi, dphi, vals, theta_max)

    def _minus_xi(self, params: dict, sign: str, finite_size: bool, theta_max: float | None) -> tuple:
        vals = validate_params(params)
        check_sign(sign)
        check_finite_size_validity(vals, finite_size)
        tm = threshold.default_theta_max(params) if theta_max is None else float(theta_max)
        if not (math.isfinite(tm) and tm > 0):
            raise ValueError(f"theta_max must be finite and > 0, got {theta_max}")
        return self._minus_xi_at(vals, sign, bool(finite_size), tm)

    def minus_xi_threshold(self, params: dict, sign: str = "fixed", finite_size: bool = False,
                           theta_max: float | None = None) -> float | None:
        """theta* such that rho = -1 is attracting (F'(-1) = 2 J'(-1) < 0) for every theta in (theta*, theta_max].

        The other params (beta, sigma, R, L, d) are taken from ``params`` (its theta is ignored).  All zeros of
        phi(theta) = J'(-1)/theta in [0, theta_max] are enclosed by interval Newton in Arb ball arithmetic (see
        :func:`attnverify.theory.certified.isolate_roots`), theta* is the largest one (0.0 if phi < 0 on the whole
        range), None if -xi is not attracting at theta_max.  Fixed sign: theta* ~ 1/beta when R << L.  Symmetric
        sign: J is even, so F'(-1) = F'(+1) and the threshold is the one of +xi as well (both attract or neither
        does).  Default theta_max: :func:`attnverify.theory.signal.threshold.default_theta_max`.  The certificate:
        :meth:`minus_xi_certificate`.
        """
        return self._minus_xi(params, sign, finite_size, theta_max)[0]

    def minus_xi_certificate(self, params: dict, sign: str = "fixed", finite_size: bool = False,
                             theta_max: float | None = None) -> dict | None:
        """The certificate of :meth:`minus_xi_threshold` (attnverify.theory.certified): the enclosure of theta*,
        whether it is a proven-unique zero, and the range on which -xi is proven attracting; None when -xi is not
        attracting at theta_max (nothing to certify)."""
        cert = self._minus_xi(params, sign, finite_size, theta_max)[3]
        return None if cert is None else dict(cert)

    def minus_xi_sign_changes(self, params: dict, sign: str = "fixed", finite_size: bool = False,
                              theta_max: float | None = None) -> list[float]:
        """All theta in [0, theta_max] where F'(-1) changes sign (enclosed zeros of J'(-1)/theta)."""
        vals = validate_params(params)
        check_sign(sign)
        tm = threshold.default_theta_max(params) if theta_max is None else float(theta_max)
        return list(self._minus_xi_at(vals, sign, bool(finite_size), tm)[1])

    # -- the derivation ---------------------------------------------------------------------------------------
    @derived
    def _derivation(self, sign: str) -> tuple[Step, ...]:
        return steps.derivation_steps(self, sign)

    def derivation(self, sign: str = "fixed") -> list[Step]:
        """The Paper A derivation as steps (statement, SymPy result, reason, LaTeX label); every result is
        computed (:func:`attnverify.theory.signal.steps.derivation_steps`)."""
        return list(self._derivation(check_sign(sign)))


#: the default instance: what every check of Paper A receives as its theory unless a self-test hands it another
THEORY = SignalTheory()
