r"""Paper A's derivation, step by step: every result computed by SymPy from the closed forms of a theory object
(:class:`attnverify.theory.signal.SignalTheory`), with the statement it establishes and why it holds."""
from __future__ import annotations

from typing import Any

import sympy as sp

from attnverify.theory.derivation import Step, factored_terms, in_exponentials
from attnverify.theory.signal.model import beta, rho, sigma, theta


def derivation_steps(theory: Any, sign: str) -> tuple[Step, ...]:
    """The derivation of ``theory``'s closed forms in the ``sign`` model (statement, SymPy result, reason, LaTeX
    label); ``sign`` must already be valid."""
    m = theory.gaussian_moments()
    w_sym = sp.Symbol("w", positive=True)
    lim = theory.limit_for_shift(theta)
    w = lim["w"]
    steps = [
        Step(r"Score noise: the moment generating function of $g = \langle q, z\rangle \sim N(0, \sigma^2)$",
             m["mgf"], r"sympy.stats: $\mathbb{E}[e^{\beta g}]$ for $g \sim N(0, \sigma^2)$",
             r"\mathbb{E}\,e^{\beta g}", "mgf"),
        Step(r"Exponential tilting: $\mathbb{E}[e^{\beta\langle q, z\rangle} z] = \mathbb{E}[g e^{\beta g}]\, q$ (the "
             r"part of $z$ orthogonal to $q$ is independent of $g$ and centred)", m["tilt"],
             r"sympy.stats: $\mathbb{E}[g e^{\beta g}]$", r"\mathbb{E}\,g e^{\beta g}", "tilt"),
        Step("Second moment of the weights", m["mgf2"],
             r"sympy.stats: $\mathbb{E}[e^{2\beta g}]$", r"\mathbb{E}\,e^{2\beta g}", "mgf2"),
        Step(r"Informative attention mass in the long-sequence limit: $R\,\mathbb{E}_I[e^s] / (R\,\mathbb{E}_I[e^s] + "
             r"(L-R)\,\mathbb{E}_N[e^s])$",
             w, r"law of large numbers for numerator and denominator; $\mathbb{E}_I[e^s] = e^{\beta\theta\rho}\,"
             r"\mathbb{E}\,e^{\beta g}$", r"w(\rho)", "w", kind="limit"),
        Step("Its derivative is logistic", beta * theta * w_sym * (1 - w_sym),
             r"$dw/d\rho - \beta\theta w (1 - w)$ simplifies to "
             f"${sp.latex(sp.simplify(sp.diff(w, rho) - beta * theta * w * (1 - w)))}$",
             r"w'(\rho)", "w-prime"),
        Step(r"Limit output $f_\infty = a_\xi\,\xi + a_q\,q$: its coordinate on $\xi$", theta * w_sym,
             rf"$a_\xi - \theta w$ simplifies to ${sp.latex(sp.simplify(lim['a_xi'] - theta * w))}$", r"a_\xi",
             "a-xi", kind="limit"),
        Step(r"Coordinate on $q$ (the tilted mean of $g$)", lim["a_q"],
             r"$\mathbb{E}[g e^{\beta g}] / \mathbb{E}[e^{\beta g}]$, simplified", r"a_q", "a-q", kind="limit"),
    ]
    J_w = sp.expand((theta * w_sym) ** 2 + 2 * rho * theta * w_sym * lim["a_q"] + lim["a_q"] ** 2)
    steps.append(Step(r"$J(\rho) = |f_\infty|^2$ with $\langle\xi, q\rangle = \rho$ (fixed sign), in terms of $w$",
                      J_w, r"$|a_\xi\,\xi + a_q\,q|^2$ from the Gram matrix; $J$ minus this with $w = w(\rho)$ "
                      f"simplifies to ${sp.latex(sp.simplify(lim['J'] - J_w.subs(w_sym, w)))}$",
                      r"J_{\mathrm{fixed}}(\rho)", "J-fixed"))
    if sign == "symmetric":
        Jm = theory.limit_for_shift(-theta)["J"]
        steps.append(Step(r"The sequence with $\varepsilon = -1$ is the fixed model with $\xi \to -\xi$: "
                          r"$J_-(\rho) = J_{\mathrm{fixed}}(-\rho)$",
                          sp.simplify(Jm - lim["J"].subs(rho, -rho)),
                          r"limit recomputed with mean shift $-\theta$; the difference simplifies to this",
                          r"J_{-}(\rho)-J_{\mathrm{fixed}}(-\rho)", "J-minus"))
        steps.append(Step(r"Symmetric objective: the average over $\varepsilon$",
                          factored_terms(theory.population_objective("symmetric")),
                          r"the expectation over the Rademacher sign $\varepsilon$ (each term factored)",
                          r"J_{\mathrm{sym}}(\rho)", "J-sym"))
        steps.append(Step("Mean informative mass", theory.informative_mass("symmetric"),
                          r"the average over $\varepsilon$",
                          r"\bar w(\rho)", "w-bar"))
    steps.append(Step(r"Leading finite-$L$ term: $(d-1)\,\sigma^2\,\mathbb{E}\sum_i a_i^2$ ($P^\perp_q z_i$ is "
                      r"independent of the scores, $\operatorname{tr} P^\perp_q = d - 1$)",
                      theory.finite_size_term(sign),
                      r"ratio law of large numbers: $\mathbb{E}\sum_i a_i^2 \sim (R\,\mathbb{E}_I e^{2s} + (L-R)\,"
                      r"\mathbb{E}_N e^{2s}) / (R\,\mathbb{E}_I e^s + (L-R)\,\mathbb{E}_N e^s)^2$",
                      r"\Delta_d(\rho)", "Delta-d", kind="approximation", order="O(1/L^2)"))
    u, m_ = sp.symbols("u m", positive=True)
    steps.append(Step(r"In-plane $O(1/L)$ term: the bias of $(A_\xi^2 + 2\rho A_\xi A_q + A_q^2)/D^2$ (noise along "
                      r"$q$, ratio bias, fluctuation of the informative mass); no factor $d$. Written with "
                      r"$u = e^{\beta\theta\rho}$ and $m = e^{\beta^2\sigma^2}$",
                      in_exponentials(theory.in_plane_term(sign), {u: beta * theta * rho, m_: beta**2 * sigma**2},
                                      (theta, rho)),
                      r"second-order delta method: $\frac{1}{2}\operatorname{tr}(H_h \Sigma)$ with $H_h$ the Hessian "
                      r"of $h$ and the token moments $\mathbb{E}\,e^{2\beta g}$, $\mathbb{E}\,g e^{2\beta g}$, "
                      r"$\mathbb{E}\,g^2 e^{2\beta g}$ (sympy.stats)", r"\Delta_\parallel(\rho)", "Delta-parallel",
                      kind="approximation", order="O(1/L^2)"))
    ident = theory.reduction_identity()
    steps.append(Step(r"Riemannian reduction: $\langle\xi, P^\perp_q \nabla G(\langle q, \xi\rangle, |q|^2)\rangle = "
                      r"(1 - \rho^2)\,\partial_1 G$ on the sphere",
                      sp.simplify(ident),
                      r"chain rule by SymPy in $\mathbb{R}^3$ with $q$, $\xi$ on the unit sphere; the difference "
                      "simplifies to this",
                      r"\langle\xi, P^\perp_q \nabla G\rangle - (1-\rho^2)\,\partial_1 G", "reduction"))
    steps.append(Step(r"Reduced vector field $\rho' = F(\rho)$",
                      (1 - rho**2) * sp.Derivative(sp.Function("J")(rho), rho),
                      r"the reduction applied to $G(u, v) = J_{\mathrm{ext}}$: $J(\rho) = G(\rho, 1)$", r"F(\rho)",
                      "F"))
    if sign == "fixed":
        wf = sp.Function("w")(rho)
        Fw = ((1 - rho**2) * sp.diff(J_w.subs(w_sym, wf), rho)).subs(sp.Derivative(wf, rho),
                                                                      beta * theta * wf * (1 - wf))
        steps.append(Step(r"Reduced field in terms of $w$ (using $w' = \beta\theta w (1 - w)$)",
                          sp.factor(Fw.subs(wf, w_sym)),
                          r"$F$ minus this with $w = w(\rho)$ simplifies to "
                          f"${sp.latex(sp.simplify(theory.reduced_field('fixed') - Fw.subs(wf, w)))}$",
                          r"F_{\mathrm{fixed}}(\rho)", "F-fixed"))
    Fs = theory.reduced_field(sign)
    Jp = sp.diff(theory.population_objective(sign), rho)
    steps.append(Step(r"Linearisation at the poles: $F'(\pm 1) = \mp 2 J'(\pm 1)$",
                      sp.simplify(sp.diff(Fs, rho).subs(rho, 1) + 2 * Jp.subs(rho, 1)),
                      r"differentiate $(1 - \rho^2) J'$ and evaluate at $\rho = 1$ ($\rho = -1$ likewise); the sum "
                      "simplifies to this", r"F'(1) + 2 J'(1)", "poles"))
    return tuple(steps)
