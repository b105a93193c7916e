r"""Paper C (``slr``): the Gaussian-erf identities, derived with SymPy, and zeta_sigma(t) = E erf(t + sigma Z)^2.

Z ~ N(0, 1) throughout, phi(z) = exp(-z^2/2)/sqrt(2 pi) its density.

* Stein's lemma. E[Z f(Z)] = E f'(Z) and E[Z^2 f(Z)] = E f(Z) + E f''(Z) for f of polynomial growth: the
  integrands (z f - f') phi and (z^2 f - f - f'') phi are the exact derivatives -(f phi)' and -((z f + f') phi)'
  (checked by SymPy for an arbitrary f).  Applied to z^(n-1) G(m + s z) it gives the recursion
  E[Z^n G(m + sZ)] = (n - 1) E[Z^(n-2) G(m + sZ)] + s d/dm E[Z^(n-1) G(m + sZ)]   (:func:`erf_moment`).
* E erf(m + sZ) = erf(m / sqrt(1 + 2 s^2)): d/dm of the left side is (2/sqrt(pi)) E exp(-(m + sZ)^2), a Gaussian
  integral (completed square, SymPy); integrate in m from 0, where the left side vanishes (erf odd, Z symmetric).
* zeta_sigma(t) = E erf(t + sigma Z)^2, two independent routes:
  (a) zeta'(t) = (4/sqrt(pi)) E[exp(-W^2) erf(W)], W = t + sigma Z: exp(-W^2) phi(z) is a multiple of a Gaussian
      density in z (completed square), so zeta' is elementary; zeta(+-oo) = 1 gives zeta(t) = 1 - int_|t|^oo zeta'.
  (b) erf(x) = 2 Phi(sqrt2 x) - 1, E Phi(h + kZ)^2 is the orthant probability Phi2(h', h'; r) of a bivariate
      normal (h' = h/sqrt(1+k^2), r = k^2/(1+k^2)), and Owen's identity Phi2(h, h; r) = Phi(h) - 2 T(h, a),
      a = sqrt((1-r)/(1+r)), T(h, a) = (1/2pi) int_0^a exp(-h^2 (1+x^2)/2)/(1+x^2) dx (Owen's T), checked by
      differentiating both sides in h.  Hence zeta = 1 - 8 T(sqrt2 t / sqrt(1+2 sigma^2), 1/sqrt(1+4 sigma^2)).
  The routes agree symbolically (d/dt of (b) equals zeta' of (a), same limit 1 at t -> oo) and numerically
  (:func:`zeta_agreement`, mpmath quadrature of different integrands).
* d zeta / d sigma = sigma d^2 zeta / dt^2 (heat equation; Stein's lemma on E[2 erf(W) erf'(W) Z]).

Evaluators of zeta: mpmath by route (a) or (b) (``zeta_mp``), NumPy through scipy's Owen's T (``zeta_np``,
vectorised), and a rigorous ball enclosure in FLINT/Arb (``zeta_arb``, Owen's integral by ``acb.integral``).

The derivations and the evaluators are the closed forms of :class:`GaussForms`, the part of Paper C's theory object
(attnverify.theory.slr.SLRTheory) that these identities make up: they call each other through ``self`` and are
memoised per object.  ``zeta_erf`` is a SymPy function, global like ``sympy.erf``: its derivative, its value at 0,
its numerical value and its ball enclosure come from :data:`GAUSS`, a GaussForms of its own (a theory object handed
to a check cannot reach inside a SymPy function).  Nothing is derived at import time.
"""
from __future__ import annotations

import mpmath
import numpy as np
import sympy as sp
from flint import acb, arb

from attnverify.theory.closed_forms import ClosedForms, derived, recorded

_z = sp.Symbol("z", real=True)
_t = sp.Symbol("t", real=True)
_m = sp.Symbol("m", real=True)
_u = sp.Symbol("u", real=True)
_s = sp.Symbol("s", positive=True)
_k = sp.Symbol("k", positive=True)
_h = sp.Symbol("h", positive=True)
_a = sp.Symbol("a", positive=True)
_x = sp.Symbol("x", real=True)
_alpha = sp.Symbol("alpha", positive=True)
OwenT = sp.Function("T")


def std_normal_pdf(z: sp.Expr) -> sp.Expr:
    """phi(z) = exp(-z^2/2) / sqrt(2 pi)."""
    return sp.exp(-z**2 / 2) / sp.sqrt(2 * sp.pi)


def normal_cdf(x: sp.Expr) -> sp.Expr:
    """Phi(x) = (1 + erf(x / sqrt 2)) / 2."""
    return (1 + sp.erf(x / sp.sqrt(2))) / 2


def _tidy_exp(expr: sp.Expr) -> sp.Expr:
    """Factor the argument of every exp (a completed square leaves it as a sum of fractions)."""
    return expr.replace(sp.exp, lambda arg: sp.exp(sp.factor(sp.together(arg))))


def combine_exp(expr: sp.Expr) -> sp.Expr:
    """Products of exponentials merged into one exp with a factored argument (exp(a) exp(-b) -> exp(a - b)), so that
    no factor exp(+large) multiplies an exp(-large) in a numerical evaluation."""
    return _tidy_exp(sp.powsimp(expr, combine="exp"))


def collect_erfc(expr: sp.Expr) -> sp.Expr:
    """An expanded sum a erf(x) + b where b contains -a (term by term) rewritten as -a erfc(x) + (a + b): the part
    a (1 - erf(x)) that cancels numerically when erf(x) is close to 1 is evaluated as erfc instead."""
    e = sp.expand(expr)
    for f in sorted(e.atoms(sp.erf), key=sp.default_sort_key):
        parts = sp.collect(e, f, evaluate=False)
        a, b = parts.get(f, 0), parts.get(sp.Integer(1), 0)
        if a == 0 or set(parts) - {f, sp.Integer(1)}:
            continue
        rest = sp.expand(a + b)
        if len(sp.Add.make_args(rest)) < len(sp.Add.make_args(sp.expand(b))):
            e = -a * sp.erfc(f.args[0]) + rest
    return e


def use_erfc(expr: sp.Expr) -> sp.Expr:
    """Every sum holding c erf(x) and -c with c = +-1 rewritten as -c erfc(x) (1 - erf(x) = erfc(x) keeps its relative
    precision when erf(x) is close to 1)."""
    def fix(e):
        terms = list(e.args)
        for t in terms:
            coeff, rest = t.as_coeff_Mul()
            if isinstance(rest, sp.erf) and coeff in (1, -1) and -coeff in terms:
                terms.remove(t)
                terms.remove(-coeff)
                return sp.Add(*terms, -coeff * sp.erfc(rest.args[0]))
        return e
    return expr.replace(lambda e: isinstance(e, sp.Add), fix)


def complete_square(exponent: sp.Expr, z: sp.Symbol) -> tuple[sp.Expr, sp.Expr, sp.Expr]:
    """exponent = A z^2 + B z + D (a quadratic in z with A < 0) as (center z0, variance s0^2, constant c), where
    exponent = -(z - z0)^2 / (2 s0^2) + c."""
    A, B, D = sp.Poly(sp.expand(exponent), z).all_coeffs()
    return sp.simplify(-B / (2 * A)), sp.simplify(-1 / (2 * A)), sp.simplify(D - B**2 / (4 * A))


def owens_t_mp(h, a) -> mpmath.mpf:
    """Owen's T(h, a) = (1/2pi) int_0^a exp(-h^2 (1+x^2)/2)/(1+x^2) dx (mpmath quadrature, working precision)."""
    h, a = mpmath.mpf(h), mpmath.mpf(a)
    return mpmath.quad(lambda x: mpmath.exp(-h * h * (1 + x * x) / 2) / (1 + x * x), [0, a]) / (2 * mpmath.pi)


def owens_t_arb(h: arb, a: arb) -> arb:
    """A ball containing Owen's T(h, a) for every h, a in the balls (a > 0): FLINT/Arb rigorous integration of
    T = (a/2pi) int_0^1 exp(-h^2 (1 + a^2 u^2)/2)/(1 + a^2 u^2) du (x = a u, so the endpoints are exact)."""
    h2, a = acb(h) * acb(h), acb(a)
    a2 = a * a

    def f(u, analytic):
        w = 1 + a2 * u * u
        return (-(h2 * w) / 2).exp() / w
    return (a * acb.integral(f, 0, 1)).real / (2 * arb.pi())


def _zeta_arb_point(t: arb, sigma: arb) -> arb:
    h = arb(2).sqrt() * t / (1 + 2 * sigma * sigma).sqrt()
    return 1 - 8 * owens_t_arb(h, 1 / (1 + 4 * sigma * sigma).sqrt())


class GaussForms(ClosedForms):
    """The Gaussian-erf identities and zeta (module docstring), as closed forms of one object."""

    @derived
    def gauss_base(self) -> sp.Expr:
        """int_R exp(-alpha y^2) dy = sqrt(pi / alpha), by SymPy."""
        return sp.integrate(sp.exp(-_alpha * _z**2), (_z, -sp.oo, sp.oo))

    def gaussian_exp_integral(self, exponent: sp.Expr, z: sp.Symbol) -> sp.Expr:
        """int_R exp(exponent) dz for a quadratic exponent with negative leading coefficient: the completed square
        and the base integral sqrt(pi/alpha) (SymPy), shifted by z0 (translation invariance)."""
        z0, v0, c = complete_square(exponent, z)
        return sp.simplify(self.gauss_base().subs(_alpha, 1 / (2 * v0)) * sp.exp(c))

    # -------------------------------------------------------------------------------------- Stein's lemma
    @derived
    def stein_residuals(self) -> dict[str, sp.Expr]:
        """The integrands of E[Z f] - E f' and E[Z^2 f] - E f - E f'' plus the exact derivatives (f phi)' and
        ((z f + f') phi)', for an arbitrary smooth f: both simplify to 0 (Stein's lemma, first and second order)."""
        f = sp.Function("f")
        phi = std_normal_pdf(_z)
        first = (_z * f(_z) - f(_z).diff(_z)) * phi + sp.diff(f(_z) * phi, _z)
        second = (_z**2 * f(_z) - f(_z) - f(_z).diff(_z, 2)) * phi + sp.diff((_z * f(_z) + f(_z).diff(_z)) * phi, _z)
        return {"first": sp.simplify(first), "second": sp.simplify(second)}

    # -------------------------------------------------------------------------------------- E erf(m + sZ)
    @derived
    def erf_mean_derived(self) -> tuple[sp.Expr, sp.Expr]:
        """(d/dm E erf(m + sZ), E erf(m + sZ)) in the dummies (_m, _s)."""
        dmean = (2 / sp.sqrt(sp.pi) * self.gaussian_exp_integral(-(_m + _s * _z)**2 - _z**2 / 2, _z)
                 / sp.sqrt(2 * sp.pi))
        dmean = _tidy_exp(sp.simplify(dmean))
        q = sp.Symbol("q", positive=True)     # q = 1 + 2 s^2, positive: a clean Gaussian primitive
        dq = dmean.subs(1 + 2 * _s**2, q).subs(2 * _s**2 + 1, q)
        mean = sp.integrate(dq.subs(_m, _u), (_u, 0, _m)).subs(q, 1 + 2 * _s**2)
        return dmean, sp.simplify(mean)

    def erf_mean(self, m: sp.Expr, s: sp.Expr) -> sp.Expr:
        """E erf(m + sZ) = erf(m / sqrt(1 + 2 s^2)) (derived: :meth:`erf_mean_derived`)."""
        return self.erf_mean_derived()[1].xreplace({_m: m, _s: s})

    # -------------------------------------------------------------------------------------- zeta, route (a)
    @derived
    def zeta_prime_derived(self) -> dict[str, sp.Expr]:
        """zeta'(t) = (4/sqrt(pi)) E[exp(-W^2) erf(W)], W = t + sZ (in the dummies _t, _s).

        exp(-W^2) phi(z) = c s0 N(z; z0, s0^2) (completed square), so E[exp(-W^2) erf W] = c s0 E erf(t + s z0 +
        s s0 Z'). ``weight_check`` is c s0 minus the Gaussian integral E exp(-W^2) done separately: it simplifies
        to 0."""
        expo = -(_t + _s * _z)**2 - _z**2 / 2
        z0, v0, c = complete_square(expo, _z)
        weight = sp.exp(c) * sp.sqrt(v0)
        inner = self.erf_mean(_t + _s * z0, _s * sp.sqrt(v0))
        zp = _tidy_exp(sp.simplify(4 / sp.sqrt(sp.pi) * weight * inner))
        check = sp.simplify(weight - self.gaussian_exp_integral(expo, _z) / sp.sqrt(2 * sp.pi))
        return {"zeta_prime": zp, "weight_check": check}

    def zeta_prime(self, t: sp.Expr, sigma: sp.Expr) -> sp.Expr:
        """d/dt zeta_sigma(t) = (4 / sqrt(pi (1 + 2 sigma^2))) exp(-t^2/(1+2 sigma^2)) erf(t / sqrt((1+2s^2)(1+4s^2)))
        (derived: :meth:`zeta_prime_derived`)."""
        return self.zeta_prime_derived()["zeta_prime"].xreplace({_t: t, _s: sigma})

    # -------------------------------------------------------------------------------------- zeta, route (b)
    @derived
    def owen_route(self) -> dict[str, sp.Expr]:
        """Route (b): zeta through Owen's T, with the SymPy checks of each step.

        Returns ``zeta`` (1 - 8 T(h', a) in the dummies _t, _s, T an undefined function), ``dT_dh`` (d/dh T(h, a)
        from differentiating Owen's integral under the integral sign, h > 0), ``owen_identity_residual`` (the h-
        derivative of Phi2(h,h;r) minus that of Phi(h) - 2 T(h, sqrt((1-r)/(1+r))), r = k^2/(1+k^2): 0),
        ``T_at_0`` (T(0, a) = atan(a)/(2 pi)), ``erf_phi_residual`` (erf(x) - 2 Phi(sqrt2 x) + 1: 0) and
        ``routes_residual`` (d/dt of route (b) minus zeta' of route (a), t > 0: 0)."""
        x = sp.Symbol("xx", real=True)
        erf_phi = sp.simplify(sp.erf(x) - (2 * normal_cdf(sp.sqrt(2) * x) - 1))
        # Owen's T and its h-derivative (differentiation under the integral sign; SymPy does the integral)
        integrand = sp.exp(-_h**2 * (1 + _x**2) / 2) / (1 + _x**2) / (2 * sp.pi)
        dT = sp.simplify(sp.integrate(sp.diff(integrand, _h), (_x, 0, _a)))
        T0 = sp.integrate(integrand.subs(_h, 0), (_x, 0, _a))
        # E Phi(h + kZ)^2 = P(U1 - kZ <= h, U2 - kZ <= h): covariance [[1+k^2, k^2], [k^2, 1+k^2]]
        cov = sp.Matrix([[1 + _k**2, _k**2], [_k**2, 1 + _k**2]])
        r = sp.simplify(cov[0, 1] / cov[0, 0])
        # Owen's identity, derivative in h: d/dh Phi2(h, h; r) = 2 phi(h) P(U2 <= h | U1 = h), U2 | U1 = h ~
        # N(r h, 1 - r^2)
        cond_mean, cond_var = r * _h, 1 - r**2
        lhs = 2 * std_normal_pdf(_h) * normal_cdf((_h - cond_mean) / sp.sqrt(cond_var))
        a_r = sp.sqrt((1 - r) / (1 + r))
        rhs = std_normal_pdf(_h) - 2 * dT.subs(_a, a_r)
        owen_res = sp.simplify(lhs - rhs)
        # zeta = E (2 Phi(sqrt2 W) - 1)^2 with sqrt2 W = h + k Z, h = sqrt2 t, k = sqrt2 sigma
        hk, kk = sp.sqrt(2) * _t, sp.sqrt(2) * _s
        hp = sp.simplify(hk / sp.sqrt(1 + kk**2))
        a_z = sp.simplify(a_r.subs(_k, kk))
        E_phi = normal_cdf(hp)                                   # E Phi(h + kZ) = Phi(h / sqrt(1+k^2)) (erf_mean)
        E_phi_check = sp.simplify(E_phi - (1 + self.erf_mean(hk / sp.sqrt(2), kk / sp.sqrt(2))) / 2)
        E_phi2 = normal_cdf(hp) - 2 * OwenT(hp, a_z)
        zeta_b = sp.simplify(sp.expand(4 * E_phi2 - 4 * E_phi + 1))
        # the two routes: d/dt (1 - 8 T(h'(t), a)) = -8 dT/dh h'(t), for t > 0 (h' > 0)
        tp = sp.Symbol("tp", positive=True)
        d_b = (-8 * dT.subs({_h: hp, _a: a_z}) * sp.diff(hp, _t)).subs(_t, tp)
        routes = sp.simplify(d_b - self.zeta_prime_derived()["zeta_prime"].subs(_t, tp))
        return {"zeta": zeta_b, "dT_dh": dT, "T_at_0": T0, "owen_identity_residual": owen_res,
                "erf_phi_residual": erf_phi, "E_phi_residual": E_phi_check, "routes_residual": routes,
                "h_prime": hp, "a": a_z}

    @derived
    def zeta_at_zero(self) -> sp.Expr:
        """zeta_s(0) = 1 - 8 T(0, a) = 1 - (4/pi) atan(1/sqrt(1 + 4 s^2)) (route (b) at t = 0), in the dummy _s."""
        ob = self.owen_route()
        return sp.simplify(ob["zeta"].subs(_t, 0).replace(OwenT, lambda h, a: ob["T_at_0"].subs(_a, a)))

    @derived
    def zeta_evenness_residual(self) -> sp.Expr:
        """zeta'(-t) + zeta'(t): 0, so zeta is even (with zeta(-oo) = zeta(oo) = 1)."""
        return sp.simplify(self.zeta_prime(-_t, _s) + self.zeta_prime(_t, _s))

    @derived
    def heat_equation_residual(self) -> sp.Expr:
        """d/dsigma zeta' - sigma d^2/dt^2 zeta' with zeta' of route (a): 0.  It is the t-derivative of the heat
        equation d zeta/d sigma = sigma d^2 zeta/dt^2, whose two sides both vanish as t -> oo (zeta -> 1), so the
        heat equation itself holds (it is also Stein's lemma applied to E[2 erf(W) erf'(W) Z])."""
        zp = self.zeta_prime(_t, _s)
        return sp.simplify(sp.diff(zp, _s) - _s * sp.diff(zp, _t, 2))

    # -------------------------------------------------------------------------------------- moments
    @derived
    def moment(self, n: int, p: int) -> sp.Expr:
        """E[Z^n erf(m + sZ)^p] in the dummies (_m, _s), p in {0, 1, 2}: Stein recursion from the base E erf^p."""
        if n < 0:
            return sp.Integer(0)
        if p == 0:
            return sp.Integer(0) if n % 2 else sp.factorial2(n - 1) if n else sp.Integer(1)
        if n == 0:
            return self.erf_mean(_m, _s) if p == 1 else zeta_erf(_m, _s)
        return _tidy_exp(sp.expand((n - 1) * self.moment(n - 2, p) + _s * sp.diff(self.moment(n - 1, p), _m)))

    def erf_moment(self, n: int, p: int, m: sp.Expr, s: sp.Expr) -> sp.Expr:
        """E[Z^n erf(m + sZ)^p], Z ~ N(0, 1), for n >= 0 and p in {0, 1, 2} (Stein recursion; p = 2 through
        zeta)."""
        if p not in (0, 1, 2) or n < 0:
            raise ValueError(f"erf_moment needs n >= 0 and p in (0, 1, 2), got n={n}, p={p}")
        return self.moment(int(n), int(p)).xreplace({_m: m, _s: s})

    # -------------------------------------------------------------------------------------- evaluators of zeta
    @derived
    def zeta_prime_function_mp(self):
        """zeta'(t, sigma) lambdified for mpmath (route (a)'s integrand)."""
        return sp.lambdify((_t, _s), self.zeta_prime(_t, _s), modules="mpmath")

    @recorded
    def zeta_mp(self, t, sigma, route: str = "owen") -> mpmath.mpf:
        """zeta_sigma(t) at the working mpmath precision: ``route="integral"``: 1 - int_|t|^oo zeta'(u) du (route
        (a)); ``route="owen"``: 1 - 8 T(sqrt2 t/sqrt(1+2 sigma^2), 1/sqrt(1+4 sigma^2)) (route (b))."""
        t, sigma = mpmath.mpf(t), mpmath.mpf(sigma)
        if route == "integral":
            f = self.zeta_prime_function_mp()
            scale = mpmath.sqrt(1 + 2 * sigma**2)
            at = abs(t)
            return 1 - mpmath.quad(lambda u: f(u, sigma), [at, at + scale, at + 4 * scale, mpmath.inf])
        if route == "owen":
            h = mpmath.sqrt(2) * t / mpmath.sqrt(1 + 2 * sigma**2)
            return 1 - 8 * owens_t_mp(h, 1 / mpmath.sqrt(1 + 4 * sigma**2))
        raise ValueError(f"route must be 'integral' or 'owen', got {route!r}")

    def zeta_agreement(self, t: float, sigma: float, dps: int = 40) -> dict:
        """Both routes at ``dps`` digits: {'integral', 'owen', 'abs_diff', 'digits'} (digits = -log10 |difference|,
        capped at dps)."""
        with mpmath.workdps(dps):
            a, b = self.zeta_mp(t, sigma, "integral"), self.zeta_mp(t, sigma, "owen")
            diff = abs(a - b)
            digits = float(dps) if diff == 0 else float(min(dps, -mpmath.log10(diff)))
            return {"integral": a, "owen": b, "abs_diff": diff, "digits": digits}

    @recorded
    def zeta_np(self, t, sigma) -> np.ndarray:
        """zeta_sigma(t) in float64, vectorised: 1 - 8 T(h, a) with scipy's Owen's T (route (b))."""
        from scipy.special import owens_t

        t, sigma = np.asarray(t, dtype=float), np.asarray(sigma, dtype=float)
        h = np.sqrt(2.0) * t / np.sqrt(1.0 + 2.0 * sigma**2)
        return 1.0 - 8.0 * owens_t(h, 1.0 / np.sqrt(1.0 + 4.0 * sigma**2))

    @derived
    def zeta_derivatives_arb(self):
        """Ball versions of d zeta/dt (route (a)) and d zeta/dsigma = sigma d^2 zeta/dt^2 (elementary)."""
        from attnverify.theory.certified import lambdify_arb
        zp = self.zeta_prime(_t, _s)
        return lambdify_arb(zp, (_t, _s)), lambdify_arb(_s * sp.diff(zp, _t), (_t, _s))

    def zeta_arb(self, t: arb, sigma: arb) -> arb:
        """A ball containing zeta_sigma(t) for every t, sigma in the balls (sigma > 0).

        Route (b) in Arb at the centre (t_m, sigma_m); for balls of positive radius the mean-value form
        zeta(t_m, sigma_m) + zeta_t(X) (t - t_m) + zeta_sigma(X) (sigma - sigma_m), with the elementary derivatives
        enclosed on the whole box (a direct Owen integral with wide parameter balls gives useless enclosures)."""
        t, sigma = arb(t), arb(sigma)
        if t.rad() == 0 and sigma.rad() == 0:
            return _zeta_arb_point(t, sigma)
        tm, sm = t.mid(), sigma.mid()
        dt, ds = self.zeta_derivatives_arb()
        return _zeta_arb_point(tm, sm) + dt(t, sigma) * (t - tm) + ds(t, sigma) * (sigma - sm)


#: the Gaussian identities that define the SymPy function zeta_erf (its derivative, value at 0, evaluators)
GAUSS = GaussForms()


class zeta_erf(sp.Function):
    r"""zeta_sigma(t) = E erf(t + sigma Z)^2, Z ~ N(0, 1); arguments (t, sigma).

    Even in t (erf odd, Z symmetric): a negative-looking t is replaced by -t.  At t = 0 it evaluates to
    1 - (4/pi) atan(1/sqrt(1+4 sigma^2)).  d/dt is the elementary zeta' of route (a); d/dsigma = sigma d^2/dt^2
    (heat equation).  ``evalf`` uses route (b) (mpmath quadrature of Owen's integral).  All of them are read from
    :data:`GAUSS` (a SymPy function is global)."""

    nargs = 2

    @classmethod
    def eval(cls, t, sigma):
        if t.is_zero:
            return GAUSS.zeta_at_zero().xreplace({_s: sigma})
        if t.could_extract_minus_sign():
            return cls(-t, sigma)
        return None

    def fdiff(self, argindex: int = 1):
        t, sigma = self.args
        if argindex == 1:
            return GAUSS.zeta_prime(t, sigma)
        if argindex == 2:
            return (_s * sp.diff(GAUSS.zeta_prime(_t, _s), _t)).xreplace({_t: t, _s: sigma})
        raise sp.ArgumentIndexError(self, argindex)

    def _eval_is_real(self):
        return True

    @staticmethod
    def _arb_(t, sigma):
        """Ball enclosure for the shared certified evaluators (attnverify.theory.certified.special_ball_functions)."""
        return GAUSS.zeta_arb(t, sigma)

    def _eval_evalf(self, prec):
        t, sigma = (a.evalf(prec) for a in self.args)
        if not (t.is_number and sigma.is_number):
            return None
        with mpmath.workprec(prec + 10):
            return sp.Float(GAUSS.zeta_mp(mpmath.mpf(str(t)), mpmath.mpf(str(sigma)), route="owen"), precision=prec)

    def _latex(self, printer, exp=None):
        t, sigma = self.args
        body = rf"\zeta_{{{printer._print(sigma)}}}\left({printer._print(t)}\right)"
        return body if exp is None else rf"{body}^{{{exp}}}"
