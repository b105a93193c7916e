"""Paper D as an attnverify plugin: L. Bohbot, C. Letrouit, G. Peyre, F.-X. Vialard, *Token Sample Complexity of
Attention* (ICML 2026, arXiv:2512.10656). Model ``tsc``, checks ``tsc.*``, claims ``D.*``. Its closed forms come
from the model engine on the paper's model files (``gaussian.toml``, ``sphere.toml`` in this package)."""
from __future__ import annotations

from attnverify.checks.plugin import Paper, Param, Section, lazy

_PKG = "attnverify.checks.tsc"
TITLE = "Paper D: token sample complexity of attention"
#: the model's options (what ``selftest --models`` draws; each check receives those it declares, within its own range)
MODEL_PARAMS = (
    Param("d", int, 4, "token dimension", low=2, high=64),
    Param("tau", float, 1.0, "temperature", low=0.0, low_open=True),
    Param("scale", float, 1.0, "size of the key-query matrix A (a check's own parameter says how: entries "
          "N(0, scale^2/d), or ||A||_2)", low=0.0, low_open=True, high=10.0),
    Param("R", float, 2.0, "radius of the sphere the tokens are uniform on", low=0.0, low_open=True, high=100.0),
)


def derive(values: dict) -> tuple[str, list]:
    """The engine's derivation of Paper D's Gaussian and sphere models: Gamma_mu, the push-forward's moments, and
    the sphere map's small- and large-argument limits (SymPy limits of the engine's Bessel ratio)."""
    import sympy as sp

    from attnverify.checks.tsc._model import derivation, sphere_limits
    from attnverify.theory.engine.sphere_covariance import symbolic_form as cov_form
    from attnverify.theory.derivation import Step

    G, S = derivation("gaussian"), derivation("sphere")
    lim = sphere_limits()
    return TITLE, [
        Step("The attention map of a Gaussian token law, by exponential tilting (affine in the query)",
             G.quantities["attention_map"],
             r"the engine: $\nabla \log M(b)$ of sympy.stats' Gaussian MGF at $b = A x/\tau$, times $V$",
             r"\Gamma_\mu(x)", "gaussian-map"),
        Step("The mean of the push-forward $(\\Gamma_\\mu)_\\#\\mu$", G.quantities["pushforward_mean"],
             "an affine map commutes with the expectation", r"\mathbb{E}\,\Gamma_\mu(X)", "pushforward-mean"),
        Step("The covariance of the push-forward: $B \\Sigma B^T$", G.quantities["pushforward_cov"],
             r"the push-forward of a Gaussian by an affine map $x \mapsto c + B x$", r"\operatorname{Cov}\Gamma_\mu(X)",
             "pushforward-cov"),
        Step("The attention map of the uniform law on a sphere: a Bessel ratio times the direction of $A x$",
             S.quantities["attention_map"], r"the engine: the derivative of the log of the sphere's MGF "
             r"$\Gamma(d/2) \left(\frac{2}{R r}\right)^{d/2-1} I_{d/2-1}(R r)$, in the normal form $I_{d/2}$, "
             r"$I_{d/2-1}$",
             r"\Gamma_\mu^{\mathrm{sphere}}(x)", "sphere-map"),
        Step("Small $\\|A\\|$: the gain over $r = |b|$ tends to $R^2/d$ (the linearisation $\\Sigma A x$, "
             "$\\Sigma = (R^2/d) I$)", sp.Eq(sp.Symbol("g_0"), lim["small"]),
             r"sympy.limit of $g(r)/r$ as $r \to 0$",
             r"\lim_{r\to 0} g(r)/r", "sphere-small", kind="limit"),
        Step("Large $\\|A\\|$: the gain tends to $R$ (the hardmax $R\\, A x/\\|A x\\|$)",
             sp.Eq(sp.Symbol("g_oo"), lim["large"]), r"sympy.limit of $g(r)$ as $r \to \infty$",
             r"\lim_{r\to\infty} g(r)", "sphere-large", kind="limit"),
        Step("The hardmax push-forward's covariance on the sphere: "
             "$R^2 V U \\operatorname{diag}(\\lambda_i c_i) U^T V^T$ ($A = U S W^T$, $\\lambda = S^2$), "
             "$c_i = E[z_i^2/\\sum_j \\lambda_j z_j^2]$ a Dirichlet$(1/2, \\dots, 1/2)$ average as one integral",
             cov_form(), r"the engine: $1/q = \int_0^\infty e^{-t q}\, dt$ over Gaussian coordinates, "
             "whose factors sympy.stats integrates", r"c_i", "sphere-hardmax-cov"),
    ]


def sections() -> list[Section]:
    return [Section("D", TITLE)]


PAPER = Paper(
    key="D", model="tsc", title="Token Sample Complexity of Attention",
    citation="L. Bohbot, C. Letrouit, G. Peyre, F.-X. Vialard, ICML 2026 (arXiv:2512.10656)",
    package=_PKG, modules=("maps", "sphere_covariance", "sphere_curves", "curves", "uniform", "claims"), derive=derive,
    sections=sections, params=MODEL_PARAMS,
    quantities=lazy(f"{_PKG}.quantities", "quantities"), selftest="selftest",
)
