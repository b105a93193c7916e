r"""The reduction of Paper A's learning dynamics to one dimension: on the sphere the xi-component of the Riemannian
gradient of any G(<q, xi>, |q|^2) is (1 - rho^2) d1G, so the gradient flow of J gives rho' = F(rho) = (1 - rho^2) J'(rho).
"""
from __future__ import annotations

import sympy as sp


class _G1(sp.Function):
    """d G / d u of the arbitrary function G(u, v)."""


class _G2(sp.Function):
    """d G / d v of the arbitrary function G(u, v)."""


class _G(sp.Function):
    """An arbitrary smooth G(u, v); SymPy's chain rule uses its partial derivatives _G1, _G2."""

    def fdiff(self, argindex: int = 1):
        return (_G1, _G2)[argindex - 1](*self.args)


def reduction_identity(n: int = 3) -> sp.Expr:
    """<xi, P_perp_q grad_q G(<q,xi>, |q|^2)> - (1 - <q,xi>^2) d1G(<q,xi>, 1) on S^{n-1} x S^{n-1}.

    G is an arbitrary smooth function (partial derivatives d1G, d2G left abstract), q and xi general vectors of
    R^n put on the unit sphere by eliminating their last coordinate; SymPy does the chain rule.  The
    expression simplifies to 0, so rho' = <xi, q'> = (1 - rho^2) J'(rho) for the Riemannian gradient flow of J.
    """
    qs = sp.symbols(f"q1:{n + 1}", real=True)
    xs = sp.symbols(f"x1:{n + 1}", real=True)
    q, xi = sp.Matrix(qs), sp.Matrix(xs)
    u, v = (q.T * xi)[0, 0], (q.T * q)[0, 0]
    grad = sp.Matrix([sp.diff(_G(u, v), qi) for qi in qs])
    riem = (sp.eye(n) - q * q.T) * grad
    expr = (xi.T * riem)[0, 0] - (1 - u**2) * _G1(u, 1)
    on_sphere = {qs[-1]: sp.sqrt(1 - sum(t**2 for t in qs[:-1])), xs[-1]: sp.sqrt(1 - sum(t**2 for t in xs[:-1]))}
    return expr.subs(on_sphere)
