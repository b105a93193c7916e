"""The mathematics that the W2 check (attnverify.checks.meanfield.w2) and its claim B.theorem1 name: the symbols
of its reasons and metric, its plots' labels, and the definitions of the proof-internal D(beta, t) (as the check's
details and findings name them, by coupling, ``D_TYPED``)."""
from __future__ import annotations

import sympy as sp

from attnverify.checks.reason import Math, reason

__all__ = ["BETA", "T", "PI", "C", "C1", "X_INF", "PI_MU0", "X_STAR", "H_STEP", "T_INF", "E_T", "W2_TARGET",
           "ATOM_RATE", "LOG_NORM", "C1_ERROR", "E_END", "ATOM_RATE_ERROR", "W2_MATH", "T_MATH",
           "BETA_MATH", "D_MATH", "W2_BETA", "D_BETA_T", "D_TYPED"]

#: the mathematics of the reasons, named as in the claims (attnverify.checks.meanfield.claims)
BETA, T, PI, C, C1, X_INF = sp.symbols(r"beta t Pi c C_1 X_{\infty}")
PI_MU0, X_STAR, _d = sp.Symbol(r"\Pi_{\#}\mu_{0}"), sp.Symbol("x^*"), sp.Symbol("d")
H_STEP, T_INF = sp.Symbol("h"), Math(sp.Symbol(r"t_{\infty}"))       # the finite-difference step, the horizon
_MU_BETA_T, _MU_INF_T = sp.Symbol(r"\mu^{\beta}_{t}"), sp.Symbol(r"\mu^{\infty}_{t}")
E_T = sp.Eq(sp.Function("E")(T), sp.Function("W_2")(_MU_INF_T, PI_MU0))
W2_TARGET = sp.Function("W_2")(sp.Symbol("mu"), PI_MU0)
ATOM_RATE = sp.Symbol("gamma") / sp.Abs(sp.Symbol("B^T") * X_STAR)
LOG_NORM = sp.MatrixSymbol("v", _d, 1).T * sp.MatrixSymbol("J", _d, _d) * sp.MatrixSymbol("v", _d, 1)
#: the metric's three terms, each over its tolerance (LaTeX: words and tolerances in the maths)
C1_ERROR = Math(r"|C_{1}^{\mathrm{numerical}} - C_{1}^{\mathrm{derived}}| / (C_{1,\mathrm{tol}}\, C_{1})")
E_END = Math(r"E(t_{\mathrm{end}}) / \text{window lo}")
ATOM_RATE_ERROR = Math(r"|\text{fitted rate} - \text{derived rate}| / (c_{\mathrm{tol}}\, \text{derived rate})")
#: the plots' labels: W_2(mu^beta_t, Pi#mu_0) and E(t) (Theorem 1); the proof-internal D(beta, t) by its coupling
#: (D_TYPED, by the coupling the check's details and findings name: the plot's title and the claim B.theorem1)
W2_MATH, T_MATH, BETA_MATH, D_MATH = Math(sp.Symbol("W_2")), Math(T), Math(BETA), Math(sp.Symbol("D"))
W2_BETA, D_BETA_T = Math(sp.Function("W_2")(_MU_BETA_T, PI_MU0)), Math(sp.Function("D")(BETA, T))
_i, _N, _x_beta, _x_inf = sp.Symbol("i"), sp.Symbol("N"), sp.Function("x_i^beta")(T), sp.Function(r"x^{\infty}_{i}")(T)
D_TYPED = {"exact": reason(Math(sp.Function("W_2")(_MU_BETA_T, _MU_INF_T)), " (exact, assignment)"),
           "synchronous": reason(Math(sp.sqrt(sp.Sum(sp.Abs(_x_beta - _x_inf) ** 2, (_i, 1, _N)) / _N)),
                                 " (synchronous coupling, ", Math(r"\geq"), " ", W2_MATH, ")")}
