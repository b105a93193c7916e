"""Paper B's derivation for a user's matrices (``attnverify derive meanfield --set Q=... --set K=... --set V=...``):
A = V B^T, its spectrum, the projector P_E and Pi(x), the Jacobian and Lyapunov rates, and the Theorem-1 bound
with c set to the derived rate. Integer and rational matrices are exact."""
from __future__ import annotations

import sympy as sp

from attnverify.theory import meanfield as M
from attnverify.theory.derivation import Step


def exact_matrix(M) -> sp.Matrix:
    """A matrix with exact entries: SymPy matrices are kept, floats converted to the rationals they denote
    (integers stay integers)."""
    if isinstance(M, sp.MatrixBase):
        return sp.Matrix(M)
    return sp.Matrix([[sp.nsimplify(x, rational=True) for x in row] for row in sp.Matrix(M).tolist()])


def steps_for(B, V) -> list:
    """Steps for concrete matrices B = QᵀK and V: A = V Bᵀ, its spectrum, the projector P_E and Π(x), the
    Jacobian and Lyapunov rates, and the Theorem 1 bound with c set to the derived rate. Exact input (integers,
    rationals such as 1/3) gives exact results: eigenvalues, c = γ/|Bᵀx*| and σ_max(B) as SymPy numbers."""
    s = M.spectrum(B, V)          # validates the assumptions (ValueError names the violated one)
    Bx, Vx = exact_matrix(B), exact_matrix(V)
    A = Vx * Bx.T
    eig = sorted(A.eigenvects(), key=lambda e: float(sp.re(e[0].evalf(30))), reverse=True)
    mu = sp.Matrix([ev for ev, _, _ in eig])      # as SymPy solved them (nsimplify returned a nearby non-root)
    U = sp.Matrix.hstack(*sp.GramSchmidt(eig[0][2], orthonormal=True))
    P = sp.simplify(U * U.T)
    x = sp.Matrix(sp.symbols(f"x1:{s.d + 1}", real=True))
    Pi = sp.simplify(P * x / sp.sqrt((x.T * P * x)[0]))
    gap = sp.simplify(eig[0][0] - eig[1][0])
    steps = [
        Step(r"$A = V B^\top$ for the given matrices (symmetric, as the model assumes)", A, "matrix product", "A",
             "A"),
        Step(r"Distinct eigenvalues of $A$, descending (multiplicities " + ", ".join(str(m) for _, m, _ in eig)
             + ")", mu, "exact characteristic polynomial (sympy eigenvects)", r"\mu", "mu"),
        Step(f"Orthogonal projector onto the dominant eigenspace $E$ ($\\dim E = {s.dim_E}$)", P,
             "orthonormal eigenvectors of the top eigenvalue (Gram-Schmidt)", r"P_E", "P-E"),
        Step(r"Projection map $\Pi(x) = P_E x/|P_E x|$ (the $\tau \to \infty$ limit of the closed-form flow)", Pi,
             r"$|P_E x|^2 = x^\top P_E x$ for an orthogonal projector", r"\Pi(x)", "Pi",
             kind="limit"),
    ]
    rate = None
    if s.dim_E == 1:
        xs = U[:, 0]
        rate = sp.simplify(gap / sp.sqrt((xs.T * Bx * Bx.T * xs)[0]))
        steps.append(Step(r"Convergence rate at the attracting fixed point $x^*$ in $E$: $c = \gamma/|B^\top x^*|$ "
                          "(Jacobian)", rate, r"gap $\gamma = \mu_1 - \mu_2 = " f"{sp.latex(gap)}$; "
                          r"$x^*$ the unit top eigenvector", "c", "c"))
    sigma_max = sp.sqrt(max((B2 for B2 in (Bx.T * Bx).eigenvals()), key=lambda e: float(e.evalf(30))))
    lyap = sp.simplify(gap / sigma_max)
    steps.append(Step(r"Global (Lyapunov) rate bound $\gamma/\sigma_{\max}(B)$", lyap,
                      r"$\sigma_{\max}(B) = " f"{sp.latex(sp.simplify(sigma_max))}$", r"c_{\rm Lyap}", "c-lyapunov"))
    cb = M.concentration_bound()
    cval = rate if rate is not None else lyap
    steps += [
        Step(r"Theorem 1 bound with $c$ set to this rate ($K$ and $C_1$ stay symbols)", cb.b.subs(M.c, cval),
             "the stated bound with the derived rate", r"b(\beta,t)", "b", kind="statement"),
        Step("Its optimal time", sp.expand_log(cb.t_star.subs(M.c, cval), force=True),
             r"sympy.solve of $db/dt = 0$", r"t^*(\beta)", "t-star"),
    ]
    return steps
