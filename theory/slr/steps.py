r"""Paper C (single-location regression, model ``slr``): the derivation, step by step, as a closed form of the theory
object (:class:`DerivationForms`, a part of attnverify.theory.slr.SLRTheory).

Every step's result is computed by SymPy from the model through the theory object: one with a replaced closed form
derives (and displays) the consequences of that replacement.
"""
from __future__ import annotations

import sympy as sp

from attnverify.theory.closed_forms import ClosedForms, derived
from attnverify.theory.derivation import Step
from attnverify.theory.slr.gauss import _m, _s
from attnverify.theory.slr.symbols import OVERLAPS, eta, kappa, nu, rho, theta


def _steps(th) -> tuple[Step, ...]:
    """The steps, every result read from the theory object ``th``."""
    m, s = _m, _s
    stein = th.stein_residuals()
    ob = th.owen_route()
    zp = th.zeta_prime_derived()
    tok = th.token_moments()
    asm = th.assembly_residuals()
    steps = [
        Step(r"Informative token: $Z = \langle G, k\rangle$, $U_1 = \langle G, v\rangle$, "
             r"$U_2 = \langle G, v^*\rangle$ are jointly Gaussian with unit variances; "
             r"$\langle X, k\rangle = \mu\kappa + \gamma Z$, $\langle X, v\rangle = \mu\theta + \gamma U_1$, "
             r"$y = \langle X, v^*\rangle = \gamma U_2$, $\mu = \sqrt{d/2}$",
             sp.Matrix([[1, rho, eta], [rho, 1, nu], [eta, nu, 1]]),
             r"$G \sim N(0, I_d)$ projected on unit vectors; $\langle k^*, v^*\rangle = 0$ so $\mathbb{E}\,y = 0$",
             r"\Sigma_I", "Sigma-I", kind="assumption"),
        Step(r"Noise token: $(a, b) = (\langle X, k\rangle, \langle X, v\rangle)$ is a standard Gaussian pair with "
             r"correlation $\rho$",
             sp.Matrix([[1, rho], [rho, 1]]), r"$X \sim N(0, I_d)$, $|k| = |v| = 1$", r"\Sigma_N", "Sigma-N",
             kind="assumption"),
        Step(r"Stein's lemma, first and second order: $(z f - f')\varphi + (f\varphi)'$ and "
             r"$(z^2 f - f - f'')\varphi + ((z f + f')\varphi)'$ for an arbitrary $f$",
             sp.Matrix([stein["first"], stein["second"]]),
             r"SymPy simplifies both to 0; integrate over $\mathbb{R}$ (boundary terms vanish for polynomial growth)",
             r"\mathrm{Stein}", "stein"),
        Step(r"Gaussian-erf mean: $\mathbb{E}\operatorname{erf}(m + sZ)$", th.erf_mean(m, s),
             r"$\frac{d}{dm}\mathbb{E}\operatorname{erf}(m + sZ) = \frac{2}{\sqrt{\pi}}\,\mathbb{E}\,e^{-(m + sZ)^2}$, "
             r"a Gaussian integral (completed square); integrated in $m$ from 0 where the mean vanishes by symmetry",
             r"E_{\mathrm{erf}}", "erf-mean"),
        Step(r"First and second moments: $\mathbb{E}[Z\operatorname{erf}(m + sZ)] = s\,\frac{d}{dm}\mathbb{E}"
             r"\operatorname{erf}$, $\mathbb{E}[Z^2\operatorname{erf}(m + sZ)] = \mathbb{E}\operatorname{erf} + "
             r"s^2\,\frac{d^2}{dm^2}\mathbb{E}\operatorname{erf}$",
             sp.Matrix([th.erf_moment(1, 1, m, s), th.erf_moment(2, 1, m, s)]), "Stein's lemma", r"E_{Z\mathrm{erf}}",
             "erf-moments"),
        Step(r"Derivative of $\zeta_s(t) = \mathbb{E}\operatorname{erf}(t + sZ)^2$ (route a): "
             r"$\frac{4}{\sqrt{\pi}}\,\mathbb{E}[e^{-W^2}\operatorname{erf} W]$, $W = t + sZ$",
             zp["zeta_prime"], r"$e^{-W^2}\varphi(z)$ is $c\,s_0$ times a Gaussian density in $z$ (completed square; "
             f"the constant checked against the Gaussian integral: difference ${sp.latex(zp['weight_check'])}$); then "
             r"$\mathbb{E}\operatorname{erf}$ of an affine Gaussian", r"\zeta'", "zeta-prime"),
        Step(r"$\zeta$ through Owen's $T$ (route b): $\zeta_s(t) = 1 - 8\,T\bigl(\sqrt{2}\,t/\sqrt{1 + 2s^2},\, "
             r"1/\sqrt{1 + 4s^2}\bigr)$",
             ob["zeta"], r"$\operatorname{erf} x = 2\Phi(\sqrt{2}\,x) - 1$ (residual "
             f"${sp.latex(ob['erf_phi_residual'])}$); " r"$\mathbb{E}\,\Phi(h + kZ)^2$ is a "
             r"bivariate orthant probability; Owen's identity checked by its $h$-derivative (residual "
             f"${sp.latex(ob['owen_identity_residual'])}$); " r"$\frac{d}{dt}$ of route (b) minus $\zeta'$ of "
             f"route (a): ${sp.latex(ob['routes_residual'])}$, " r"and both tend to 1 as $t \to \infty$",
             r"\zeta", "zeta"),
        Step(r"$\zeta$ at $t = 0$", th.zeta_at_zero(), r"$T(0, a) = \arctan(a)/(2\pi)$ (SymPy integral)",
             r"\zeta(0)", "zeta-0"),
        Step(r"$\zeta$ is even and solves the heat equation $\partial_s\zeta = s\,\partial_t^2\zeta$",
             sp.Matrix([th.zeta_evenness_residual(), th.heat_equation_residual()]),
             r"$\zeta'(-t) + \zeta'(t)$ and $\partial_s\zeta' - s\,\partial_t^2\zeta'$ simplify to 0", r"\zeta_{\pm}",
             "zeta-heat"),
        Step(r"Noise token: $\mathbb{E}[\operatorname{erf}(\lambda a)\, b]$ and "
             r"$\mathbb{E}[\operatorname{erf}(\lambda a)^2 b^2]$", sp.Matrix([tok["EN_f"], tok["EN_f2"]]),
             r"$\mathbb{E}[b \mid a] = \rho a$, $\operatorname{Var}(b \mid a) = 1 - \rho^2$; Stein moments with "
             r"$m = 0$, $s = \lambda$", r"E_N", "noise-token"),
        Step(r"Informative token: $\mathbb{E}[\operatorname{erf}(\lambda\langle X, k\rangle)\,\langle X, v\rangle]$",
             tok["EI_f"],
             r"$\mathbb{E}[U_1 \mid Z] = \rho Z$; Stein moments with $m = \lambda\mu\kappa$, $s = \lambda\gamma$",
             r"E_I f", "informative-token"),
        Step(r"Independence of the tokens: $\mathbb{E}(\xi + A - \sum_{l \ge 2} B_l)^2 = \varepsilon^2 + "
             r"\mathbb{E} A^2 - 2(L-1)\,\mathbb{E} A\,\mathbb{E} B + (L-1)\,\mathbb{E} B^2 + (L-1)(L-2)"
             r"(\mathbb{E} B)^2$, $A = y - f_1$, $B_l = f_l$",
             sp.Matrix([asm[k] for k in sorted(asm)]),
             r"expanded for $L = 1, \dots, 5$ with every monomial replaced by the product of the moments of its "
             r"independent factors; the difference with the formula is 0 for each $L$", r"\Delta_L", "independence"),
        Step(r"The population risk $R = \mathbb{E}(Y - T_{k,v}(X))^2$ for unit $k$, $v$", th.risk(),
             r"the token moments assembled (exchangeability: condition on $J_0 = 1$)", "R", "R"),
        Step(r"Invariance under $(k, v) \mapsto (-k, -v)$: $R(-\kappa, -\nu, -\theta, -\eta, \rho) - R$",
             th.flip_residual(),
             r"$\operatorname{erf}$ odd, $\zeta$ even in $t$; SymPy simplifies the difference", r"R_{\pm}",
             "R-flip"),
        Step(r"On $M = \{\theta = \eta = \rho = 0\}$: $\partial R/\partial\theta$, $\partial R/\partial\eta$, "
             r"$\partial R/\partial\rho$",
             sp.Matrix([th.normal_gradient_on_M()[o] for o in (theta, eta, rho)]), r"SymPy, evaluated on $M$",
             r"\nabla_{\perp} R|_M", "grad-normal-M"),
        Step(r"The reduced risk on $M$", th.risk_on_M(), r"$R$ at $\theta = \eta = \rho = 0$", "r_M", "r-M"),
    ]
    om = th.overlap_map_abstract()
    fl = th.overlap_flow_abstract()
    P = th.reduced_partials()
    steps += [
        Step(r"One projected gradient step (step $h$) in the overlaps: $\kappa'$ (the map closes on the five "
             r"overlaps; $R_o$ are the partials of $R$)", om["new"][kappa],
             r"Gram matrix of $(k, v, k^*, v^*)$; $|k - h g_k|^2 - (1 + h^2 |g_k|^2) = "
             + sp.latex(om["norm_residuals"][0]) + "$",
             r"\kappa'", "kappa-step"),
        Step(r"The gradient flow of the overlaps ($\frac{d}{dh}$ of the map at $h = 0$)",
             sp.Matrix([fl[o] for o in OVERLAPS]), "SymPy differentiation", r"\dot o", "overlap-flow"),
        Step(r"$M$ is invariant for every step $h$: $\theta'$, $\eta'$, $\rho'$ on $M$ (where $R_\theta = R_\eta = "
             r"R_\rho = 0$)",
             sp.Matrix([th.invariance_of_M()[o] for o in (theta, eta, rho)]), "SymPy simplification of the map",
             r"o'_\perp|_M", "M-invariant"),
        Step(r"The reduced map on $M$",
             sp.Matrix([th.reduced_map()["abstract"][kappa], th.reduced_map()["abstract"][nu]]),
             r"the map at $\theta = \eta = \rho = 0$, with $R_\kappa = r_\kappa$, $R_\nu = r_\nu$",
             r"(\kappa', \nu')", "reduced-map"),
        Step(r"The reduced flow on $M$", sp.Matrix(th.reduced_flow()), r"$\frac{d}{dh}$ of the reduced map at $h = 0$",
             r"(\dot\kappa, \dot\nu)", "reduced-flow"),
        Step(r"$r$ is affine in $\nu$, and $r_\kappa = r_{\kappa\nu}\,(\nu - \nu^*(\kappa))$ with the nullcline "
             r"$\nu^*$ an $\operatorname{erf}$",
             sp.Matrix([P["r_nu"], P["nu_star"], P["affine_residual"]]),
             r"$r_\nu$ is free of $\nu$; $\nu^*$ solved by SymPy; the affine residual simplifies to 0",
             r"(r_\nu,\ \nu^*,\ r_\kappa - r_{\kappa\nu}(\nu - \nu^*))", "nu-star"),
    ]
    crit = th.reduced_critical_points()
    steps += [
        Step(r"Critical points of the reduced flow on $[-1, 1]^2$: $(0, 0)$ and the corners $(\pm 1, \pm 1)$",
             sp.Matrix([[c["kappa"], c["nu"]] for c in crit]),
             r"$r_\nu = 0$ only at $\kappa = 0$ (then $\nu = \nu^*(0) = 0$); on the edges $(1 - \kappa^2)(1 - \nu^2)$ "
             r"kills the flow only at the corners since $|\nu^*| < 1$", r"\mathrm{crit}_M", "critical-points"),
        Step(r"Jacobian of the reduced flow at the saddle $(0, 0)$", crit[0]["jacobian"], "SymPy", r"J_{(0,0)}",
             "J-saddle"),
        Step(r"Jacobian of the reduced flow at the oracle $(1, 1)$", crit[1]["jacobian"],
             r"SymPy; both eigenvalues negative ($\operatorname{erf} < 1$)", r"J_{(1,1)}", "J-oracle"),
    ]
    blocks = th.oracle_hessian_blocks()
    pr = th.oracle_on_M_proof()
    bl = th.best_linear_predictor()
    steps += [
        Step(r"Riemannian Hessian at the oracle: $-R_\kappa$ on the $d - 2$ directions of $k$ orthogonal to $k^*$, "
             r"$v^*$; $-R_\nu$ on those of $v$; and a $2 \times 2$ block in ($k$ tilted to $v^*$, $v$ tilted to $k^*$)",
             sp.Matrix([blocks["orth_k"], blocks["orth_v"]]),
             "second derivative along normalised curves through the oracle (the gradient vanishes there); the "
             "coupling entries between the three groups simplify to 0", r"\lambda_\perp", "hessian-orth"),
        Step(r"The $2 \times 2$ block of the Riemannian Hessian at the oracle", blocks["block"],
             r"SymPy; the sign of its determinant is scanned in $\lambda$ in ball arithmetic (oracle_local_min_scan)",
             r"H_{ab}", "hessian-block"),
        Step(r"On $M$ the oracle minimises $r$: $r_\kappa(\kappa, 1) = r_{\kappa\nu}\,(1 - \nu^*) < 0$, and "
             r"$r(\kappa, \nu) \ge r(|\kappa|, 1)$ since $r$ is affine in $\nu$ with slope "
             r"$-2\gamma^2\operatorname{erf}(c\kappa)$", pr["r_kappa_at_nu1"],
             f"slope negative: {pr['slope_negative']}; " r"$\nu^*$ is an $\operatorname{erf}$: "
             f"{pr['nu_star_is_erf']}", r"r_\kappa(\kappa,1)", "oracle-on-M"),
        Step(r"Bayes predictor: log-likelihood ratio of a token being the informative one "
             r"($a = \langle x, k^*\rangle$, $n_2 = |x|^2$); posterior weights $\operatorname{softmax}(s_j)$, "
             r"predictor $\sum_j w_j \langle X_j, v^*\rangle$", th.bayes_log_weight(),
             r"sum over coordinates of $\log N(x_i; m_i, \gamma^2) - \log N(x_i; 0, 1)$ (sympy.stats densities)",
             "s(x)", "bayes"),
        Step(r"Best linear predictor: $\beta_l = b\,v^*$ for every token, no $k^*$ part, no intercept", bl["coef_v"],
             r"normal equations in the $k^*$- and $v^*$-coordinates, exchangeable ansatz; residual "
             f"${sp.latex(bl['normal_eq_residual'])}$", "b", "linear-coef"),
        Step(r"Risk of the best linear predictor minus $\varepsilon^2$ (independent of $d$)", bl["excess"],
             r"$\operatorname{Var} Y - \operatorname{Cov}(X, Y)^\top\beta$", r"R_{\mathrm{lin}} - \epsilon^2",
             "linear-risk"),
    ]
    return tuple(steps)


class DerivationForms(ClosedForms):
    """The derivation of Paper C (module docstring)."""

    @derived
    def derivation_steps(self) -> tuple[Step, ...]:
        """The steps (statement, SymPy result, reason, short LaTeX label), derived once per object."""
        return _steps(self)

    def derivation(self) -> list[Step]:
        """The Paper C derivation as steps (statement, SymPy result, reason, short LaTeX label); every result is
        computed by SymPy from the model (first call about 20 s, then kept by this object)."""
        return list(self.derivation_steps())
