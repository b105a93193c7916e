"""Paper B, the derivation step by step (``attnverify derive meanfield``): every result computed by SymPy."""
from __future__ import annotations

import sympy as sp

from attnverify.theory.closed_forms import derived
from attnverify.theory.derivation import Step
from attnverify.theory.meanfield.theorem1 import beta


class DerivationSteps:
    """The derivation step by step, a part of :class:`attnverify.theory.meanfield.MeanFieldTheory`: every step
    reads the closed forms of ``self``."""

    def derivation(self) -> list[Step]:
        """The Paper B derivation, every result computed here by SymPy (memoised; a fresh list each call)."""
        return list(self._derivation())

    @derived
    def _rate_ratio_2d(self) -> tuple[sp.Expr, sp.Expr, sp.Expr]:
        """B = diag(b1, b2), A = diag(mu_1, mu_1 - gamma), x* = e_1: (Jacobian rate, Lyapunov rate, their ratio)."""
        b1, b2 = sp.symbols("b1 b2", positive=True)
        gam = sp.Symbol("gamma", positive=True)
        mu1 = sp.Symbol("mu1", real=True)
        _, ev = self.diagonal_jacobian(2)
        jac = -ev[0].subs({sp.Symbol("mu2", real=True): mu1 - gam, sp.Symbol("B1", real=True): b1,
                           sp.Symbol("B2", real=True): 0, sp.Symbol("B3", real=True): 0, sp.Symbol("B4", real=True): b2})
        sigma_max = sp.Max(*(sp.sqrt(e) for e in (sp.diag(b1, b2) * sp.diag(b1, b2).T).eigenvals()))
        lyap = gam / sigma_max
        return sp.simplify(jac), lyap, sp.simplify(lyap / jac)

    @derived
    def _derivation(self) -> tuple[Step, ...]:
        b_i, S, y_star, lam_star = self.maximiser_rule()
        bs3, y3, sols3 = self.lagrange_maximiser(3)
        steps = [
            Step(r"Laplace principle: the softmax average concentrates at the maximiser of $y \mapsto \langle B^\top x, "
                 r"y\rangle$ on the sphere. Lagrange stationarity $b_i = \lambda y_i$ and $|y|^2 = 1$ give "
                 r"$\lambda = \pm\sqrt{S}$, $S = |b|^2$; the larger objective $S/\lambda$ picks the maximiser.",
                 y_star, "sympy.solve of the Lagrange system; objective comparison",
                 r"y^*_i", "y-star-i"),
            Step(r"Full Lagrange system in $d = 3$ (both critical points, maximiser kept).",
                 y3, f"sympy.solve found {len(sols3)} critical points", r"y^*(b)", "y-star-d3"),
        ]
        phi = sp.Symbol("phi", real=True)
        b1, b2 = sp.symbols("b1 b2", positive=True)
        v1, v2 = sp.symbols("v1 v2", real=True)
        x_phi = sp.Matrix([sp.cos(phi), sp.sin(phi)])
        field_2d = sp.simplify(self.zero_temperature_field(x_phi, sp.diag(b1, b2), sp.diag(v1, v2)))
        steps.append(Step(r"Zero-temperature field ($\beta \to \infty$): $X_\infty(x) = P^\perp_x V B^\top x/|B^\top x|$ "
                          r"(the maximiser with $b = B^\top x$); shown on the circle $x = (\cos\phi, \sin\phi)$ for "
                          r"$B = \operatorname{diag}(b_1, b_2)$, $V = \operatorname{diag}(v_1, v_2)$.",
                          field_2d, "substitution of the Lagrange maximiser, sympy.simplify", r"X_\infty(x)", "X-inf", kind="limit"))
        a = sp.Matrix(3, 3, lambda i, j: sp.Symbol(f"a_{i + 1}{j + 1}", real=True))
        steps.append(Step(r"Oja identity for a generic real $3 \times 3$ matrix $A$: $x = y/|y|$ with $y' = A y$ "
                          r"($y = e^{\tau A} x_0$) satisfies $dx/d\tau = P^\perp_x A x$; residual", self.oja_residual(a),
                          r"sympy.simplify after substituting $y' = A y$", r"r_{\rm Oja}", "oja"))
        for d in (2, 3):
            steps.append(Step(r"Closed-form flow $x = e^{\tau A} x_0/|e^{\tau A} x_0|$, $A = V B^\top$, "
                              r"$dt/d\tau = |B^\top x|$ solves $dx/dt = X_\infty(x)$ for symbolic diagonal "
                              f"$B$, $V$ ($d = {d}$): residual",
                              self.diagonal_flow_residual(d),
                              r"sympy.simplify of $(dx/d\tau) / (dt/d\tau) - X_\infty(x)$",
                              rf"r_{{{d}}}", f"flow-d{d}"))
        for d, dim_E in ((3, 1), (3, 2)):
            c0, lim = self.diagonal_limit(d, dim_E)
            steps.append(Step(r"Projection map: the $\tau \to \infty$ limit of the closed form for diagonal $A$ with top "
                              f"eigenvalue of multiplicity {dim_E} (gaps " r"$g_k > 0$): $\Pi(x_0) = P_E x_0/|P_E x_0|$.",
                              lim, r"sympy.limit ($u = e^{-\tau} \to 0^+$)", rf"\Pi_{{\dim E={dim_E}}}(x_0)",
                              f"Pi-E{dim_E}", kind="limit"))
            steps.append(Step(rf"Stationarity: $X_\infty(\Pi x) = 0$ ($\dim E = {dim_E}$).",
                              self.diagonal_stationarity(d, dim_E), "sympy.simplify", r"X_\infty(\Pi x)", f"stationary-E{dim_E}"))
        ru, ra, rc = self.moment_ratios(2)
        steps.append(Step(r"Laplace expansion of the field (Watson's lemma, polar angle about $u = B^\top x/|B^\top x|$, "
                          r"density $c_0 + \langle a, y\rangle + y^\top C y$): $m_\beta = u + (r_u u + r_a P a + r_C P C u)"
                          r"/\kappa + O(\kappa^{-2})$, $\kappa = \beta |B^\top x|$; the first-order coefficients "
                          r"$(r_u, r_a, r_C)$:",
                          sp.Matrix([ru[1], ra[1], rc[1]]), "sympy series of ratios of Watson expansions",
                          r"m_1", "laplace-m1", kind="approximation", order=r"O(\kappa^{-2})"))
        steps.append(Step(r"So $X_\beta - X_\infty = P^\perp_x V (\nabla_T \log f(u) - \frac{d-1}{2} u)/(\beta |B^\top x|)"
                          r" + O(\beta^{-2})$: the sup error is $O(1/\beta)$ for a smooth positive density; residual of "
                          r"that identity:",
                          self.first_order_identity(), "sympy.simplify", r"m_1 - \nabla_T \log f + \frac{d-1}{2}u",
                          "laplace-first-order", kind="approximation", order=r"O(\beta^{-2})"))
        Jt, ev = self.diagonal_jacobian(3)
        steps.append(Step(r"Linearisation at $x^* = e_1$ ($A = \operatorname{diag}(\mu_i)$, general $B$): tangent Jacobian "
                          r"eigenvalues $(\mu_j - \mu_1)/|B^\top x^*|$; the rate is $\gamma/|B^\top x^*|$.", ev,
                          r"sympy jacobian at $e_1$, restricted to $\operatorname{span}(e_2, e_3)$, eigenvals",
                          r"\lambda_j", "lambda-j"))
        L, dL, excess = self.diagonal_lyapunov()
        steps.append(Step(r"Lyapunov functional $L = |P^\perp_E z|^2/|P_E z|^2$ along $dz/d\tau = P^\perp A z$.",
                          dL, "sympy derivative along the field", r"\frac{dL}{d\tau}", "dL-dtau"))
        steps.append(Step(r"$dL/d\tau + 2\gamma L \le 0$ ($\delta = \mu_2 - \mu_3 \ge 0$), so $L$ decays at rate "
                          r"$2\gamma$ in $\tau$; with $d\tau/dt = 1/|B^\top x| \ge 1/\sigma_{\max}(B)$ the distance "
                          r"decays at least at $\gamma/\sigma_{\max}(B)$, a bound that equals the Jacobian rate "
                          r"$\gamma/|B^\top x^*|$ only when $|B^\top x^*| = \sigma_{\max}(B)$.",
                          excess, f"sympy.factor; nonpositive: {bool(excess.is_nonpositive)}",
                          r"\frac{dL}{d\tau} + 2\gamma L", "lyapunov-excess"))
        jac, lyap, ratio = self._rate_ratio_2d()
        steps.append(Step(r"Comparison for $B = \operatorname{diag}(b_1, b_2)$, $A = \operatorname{diag}(\mu_1, \mu_1 - "
                          r"\gamma)$, $x^* = e_1$: Lyapunov rate / Jacobian rate $= |B^\top x^*|/\sigma_{\max}(B) \le 1$, "
                          r"equal to 1 if and only if $b_1 \ge b_2$.",
                          ratio,
                          f"Jacobian rate ${sp.latex(jac)}$ from the SymPy Jacobian, Lyapunov rate ${sp.latex(lyap)}$",
                          r"r_{\rm Lyap}/r_{\rm Jac}", "rate-ratio"))
        cb = self.concentration_bound()
        steps += [
            Step("Theorem 1 bound.", cb.b, "the paper's Theorem 1, as stated (not derived)", r"b(\beta,t)", "b",
                 kind="statement"),
            Step(r"Optimal time: $db/dt = 0$.", cb.t_star, "sympy.solve (second derivative > 0)",
                 r"t^*(\beta)", "t-star"),
            Step("Minimal value of the bound.", cb.b_min, r"sympy.simplify of $b(\beta, t^*)$", r"b_{\min}(\beta)",
                 "b-min"),
            Step(r"Metastability: $t^*$ grows like $\log\beta$.", sp.limit(cb.t_star / sp.log(beta), beta, sp.oo),
                 r"sympy.limit of $t^*/\log\beta$ as $\beta \to \infty$", r"\lim t^*/\log\beta", "t-star-limit",
             kind="limit"),
        ]
        steps += list(self._terminal_steps())
        return tuple(steps)


    def _terminal_steps(self) -> tuple[Step, ...]:
        """Conjecture 1's terminal phase: a tight cluster at u (uniform softmax weights inside it) moves by the cluster
        field g(u) = P_perp_u V u; at V's dominant eigenvector its tangent Jacobian has the eigenvalues v_j - v_1, so the
        cluster axis approaches it at the rate v_1 - v_2 (d = 3, V = diag(v_1, v_2, v_3), v_1 > v_2 >= v_3)."""
        v = sp.symbols("v1:4", real=True)
        u, Vs, J = self.cluster_field_jacobian(3)
        diag_V = {Vs[i, j]: (v[i] if i == j else 0) for i in range(3) for j in range(3)}
        J = J.subs(diag_V).subs({u[0]: 1, u[1]: 0, u[2]: 0})
        tangent = sp.simplify(J[1:, 1:])                      # the tangent space at e_1 is span(e_2, e_3)
        ev = sp.Matrix(sorted(tangent.eigenvals(), key=sp.default_sort_key))
        # v_2 >= v_3: the tangent eigenvalue along e_2 is the largest; minus it is the approach rate
        rate = sp.simplify(-next(e for e in ev if e.has(v[1])))
        return (
            Step(r"Terminal phase (Conjecture 1): a tight cluster at $u$ moves by the cluster field "
                 r"$g(u) = P^\perp_u V u$; tangent Jacobian at $u = e_1$ for $V = \operatorname{diag}(v_1, v_2, v_3)$.",
                 ev, r"sympy jacobian of $g$ at $e_1$, restricted to $\operatorname{span}(e_2, e_3)$, eigenvals",
                 r"\lambda^{\rm cl}_j", "cluster-jacobian", kind="limit"),
            Step(r"The cluster axis approaches the dominant eigenvector of $V$ at the rate $v_1 - v_2$ "
                 r"($v_1 > v_2 \ge v_3$: minus the largest tangent eigenvalue).", rate,
                 r"minus the tangent eigenvalue along $e_2$ (the largest, as $v_2 \ge v_3$)", r"r_{\rm axis}", "axis-rate"),
        )
