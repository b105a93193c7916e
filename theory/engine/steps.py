r"""The engine's derivation as steps (attnverify.theory.derivation.Step), each saying what it is: the model's
statement (``assumption``), an ``identity`` SymPy computed, the long-sequence ``limit``, or the delta method's
``approximation`` with the order it neglects.  Every result is taken from the derivation, none is typed."""
from __future__ import annotations

import sympy as sp

from attnverify.theory.derivation import Step
from attnverify.theory.engine.flow import reduction
from attnverify.theory.engine.laws import gaussian_log_mgf_1d, sphere_radial
from attnverify.theory.engine.limit import component_tilt
from attnverify.theory.engine.token_map import gaussian_token_map


def _counts_sum(components, L) -> sp.Eq:
    """The equation sum_c n_c = L as the file states it: each count kept as written (an unevaluated term), so that
    the sum does not collapse to L and the equation to True, even after values are substituted or it is pickled."""
    return sp.Eq(sp.Add(*[sp.UnevaluatedExpr(c.count) for c in components]), L)


def _model_steps(D) -> list[Step]:
    m, geo = D.model, D.geometry
    L = m.symbol("L")
    laws = ", ".join(f"{c.name}: {c.count} tokens, " + ("Gaussian" if c.law == "gaussian" else "uniform on a sphere")
                     + (", random sign" if c.sign == "rademacher" else "") for c in m.components)
    steps = [Step(rf"The sequence: $L$ independent tokens, a mixture of components ({laws}); the counts add up "
                  r"to $L$", _counts_sum(m.components, L),
                  "the model file; SymPy proved the sum of the counts minus L to be 0",
                  r"\sum_c n_c", "counts", kind="assumption")]
    if m.attention.query == "q":
        steps.append(Step(r"The score vector: $s = \langle a, x\rangle$ with $a = c\,B q$, in the coordinates "
                          r"$(e_1, \dots, e_k, u)$, $q = \sum_j \rho_j e_j + t u$, $t^2 = 1 - \sum_j \rho_j^2$",
                          sp.ImmutableMatrix([*geo.b_e, geo.t * geo.gamma]),
                          "the score's bracket and matrices (block-diagonal: a k x k block and a scalar on the "
                          "complement)", "a", "score-vector", kind="assumption"))
    else:
        steps.append(Step(r"The score vector of a token query $x = \sum_j x_j e_j + x_\perp u$: $a = c\,B x$",
                          sp.ImmutableMatrix([*geo.b_e, geo.t * geo.gamma]), "the score's bracket and matrices",
                          "a", "score-vector", kind="assumption"))
    return steps


def _law_steps(D) -> list[Step]:
    m, geo = D.model, D.geometry
    steps = []
    if any(c.law == "gaussian" for c in m.components):
        f, (b, mu, s) = gaussian_log_mgf_1d()
        steps.append(Step(r"One-dimensional Gaussian log-MGF: $\log \mathbb{E}\,e^{bX}$ for $X \sim N(m, s)$", f,
                          r"sympy.stats; a Gaussian with covariance diagonal in an orthonormal basis has independent "
                          r"coordinates, so $\log M$ is the sum over the coordinates",
                          r"\log \mathbb{E}\,e^{bX}", "gaussian-mgf"))
    if any(c.law == "sphere" for c in m.components):
        rad = sphere_radial()
        steps += [
            Step(r"The uniform law on the sphere of radius $R$ in $\mathbb{R}^d$: $M(b) = \varphi(|b|)$",
                 rad["phi"], "the classical spherical average of $e^{<b, x>}$ (checked by quadrature in the tests)",
                 r"\varphi(r)", "sphere-mgf", kind="assumption"),
            Step(r"Its tilted mean is $\psi'(|b|)\, b/|b|$, $\psi = \log\varphi$", rad["dpsi"],
                 r"SymPy differentiates $\log\varphi$ and applies $I_{\nu-1} - I_{\nu+1} = (2\nu/z) I_\nu$",
                 r"\psi'(r)", "sphere-tilt"),
            Step(r"Small scores: $\psi'(r)/r \to R^2/d$, so $\Gamma(x) \to (R^2/d)\, V A x$ (the Gaussian-like "
                 "linearisation)", rad["small"], "sympy.limit as r -> 0", r"\lim_{r\to 0}\psi'(r)/r",
                 "sphere-small", kind="limit"),
            Step(r"Hardmax: $\psi'(r) \to R$, so $\Gamma(x) \to R\, V A x / |A x|$", rad["large"],
                 "sympy.limit as r -> oo", r"\lim_{r\to\infty}\psi'(r)", "sphere-hardmax", kind="limit"),
        ]
    for c in m.components:
        T = component_tilt(m, geo, c, 1)
        steps.append(Step(rf"Tilted mean of component {c.name} at the score vector (coordinates on the directions, "
                          r"then on $u$)", sp.ImmutableMatrix([*T.mean_e, geo.t * T.mean_u]),
                          r"the gradient of $\log M$ (SymPy)", rf"m_{{\mathrm{{{c.name}}}}}(a)",
                          f"tilted-mean-{c.name.replace('_', '-')}"))
    return steps


def _limit_steps(D) -> list[Step]:
    m, q = D.model, D.quantities
    sign = " (averaged over the sign after the limit)" if m.has_sign else ""
    steps = [Step(rf"Attention mass of component {c.name} as $L \to \infty$" + sign, q[f"mass.{c.name}"],
                  r"law of large numbers for the softmax's numerator and denominator: "
                  r"$\pi_c M_c(a) / \sum_{c'} \pi_{c'} M_{c'}(a)$", rf"w_{{\mathrm{{{c.name}}}}}",
                  f"mass-{c.name.replace('_', '-')}", kind="limit") for c in m.components]
    steps.append(Step(r"The infinite-token output (coordinates on the directions, then on $u$)" + sign,
                      q["f_limit"], r"$\sum_c \pi_c M_c(a) V m_c(a) / \sum_c \pi_c M_c(a)$", r"f_\infty",
                      "f-limit", kind="limit"))
    if m.attention.query == "q":
        steps.append(Step(r"The objective $J = \mathbb{E}|f|^2 \to \mathbb{E}_\varepsilon |f_\infty|^2$, with "
                          r"$t^2 = 1 - \sum_j \rho_j^2$: a function of the overlaps", q["J_limit"],
                          r"the orthogonal part of $q$ enters only through $t^2$", r"J_\infty(\rho)", "J-limit",
                          kind="limit"))
        steps.append(Step(r"Leading finite-$L$ terms of $J$", q["J_correction"],
                          r"second-order delta method for $|VY|^2/D^2$ with the tilted second moments at $2a$; each "
                          r"of the $d - k - 1$ further complement directions adds the same term",
                          r"\Delta_L(\rho)", "J-correction", kind="approximation", order="O(1/L^2)"))
    for c in m.components:
        steps.append(Step(rf"Expected mass of component {c.name} at finite $L$", q[f"mass_finite.{c.name}"],
                          r"second-order delta method for $N_c/D$", rf"\bar w_{{\mathrm{{{c.name}}}}}",
                          f"mass-finite-{c.name.replace('_', '-')}", kind="approximation", order="O(1/L^2)"))
    return steps


def _flow_steps(D) -> list[Step]:
    m, q = D.model, D.quantities
    C = sp.ImmutableMatrix(reduction(m.k))
    return [
        Step(r"Riemannian reduction: $\rho' = C(\rho)\,\nabla_\rho J$ (here in $r_1, \dots, r_k$)", C,
             r"SymPy differentiates the extension $G(\langle q, e_1\rangle, \dots)$ with $G$ arbitrary and projects "
             r"on the tangent space $I - q q^T$", r"C(\rho)", "reduction"),
        Step(r"The reduced field of the limit objective", q["F_limit"], r"$C(\rho)\,\nabla_\rho J_\infty$",
             r"F_\infty(\rho)", "F-limit"),
    ]


def _token_steps(D) -> list[Step]:
    out = []
    if "pushforward_mean" in D.quantities:
        g = gaussian_token_map()
        out += [
            Step(r"For $\mu = N(m, \Sigma)$: $\Gamma_\mu(x) = V(m + \Sigma A x/\tau)$, affine in $x$", g["attention_map"],
                 r"tilted mean $\nabla \log M(a) = m + \Sigma a$ at $a = A x/\tau$ (SymPy matrix calculus)",
                 r"\Gamma_\mu(x)", "token-map"),
            Step(r"The push-forward $(\Gamma_\mu)_\# \mu$ is Gaussian; its mean", g["pushforward_mean"],
                 r"an affine map commutes with the expectation", r"\mathbb{E}\,\Gamma_\mu(X)", "pushforward-mean"),
            Step(r"Its covariance $B \Sigma B^T$, $B = \partial\Gamma_\mu/\partial x$", g["pushforward_cov"],
                 r"SymPy's derivative of $\Gamma_\mu$ in $x$ (free of $x$: affine)", r"\operatorname{Cov}",
                 "pushforward-cov"),
            Step("In the directions' coordinates (the last entry: the complement, each of its d - k directions)",
                 D.quantities["pushforward_cov"], "the block-diagonal matrices of the model file",
                 r"\operatorname{Cov}_{\mathrm{model}}", "pushforward-cov-model"),
        ]
    return out


def derivation_steps(D) -> list[Step]:
    """Every step of the derivation of ``D`` (a :class:`attnverify.theory.engine.derive.Derivation`)."""
    steps = _model_steps(D) + _law_steps(D) + _limit_steps(D)
    if D.model.attention.query == "q":
        steps += _flow_steps(D)
    return steps + _token_steps(D)
