"""Paper B's derivation for a user's matrices (``attnverify derive meanfield --set Q=... --set K=... --set V=...``):
A = V B^T, its spectrum, the projector P_E and Pi(x), the Jacobian and Lyapunov rates, and the Theorem-1 bound
with c set to the derived rate. Integer and rational matrices are exact."""
from __future__ import annotations

import sympy as sp

from attnverify.theory import mean_field as M
from attnverify.theory.derivation import Step


def steps_for(B, V) -> list:
    """Steps for concrete matrices B = QᵀK and V: A = V Bᵀ, its spectrum, the projector P_E and Π(x), the
    Jacobian and Lyapunov rates, and the Theorem 1 bound with c set to the derived rate."""
    s = M.spectrum(B, V)          # validates the assumptions (ValueError names the violated one)
    A = s.A
    top = max((ev for ev, _, _ in A.eigenvects()), key=lambda e: float(e))
    vecs = next(vs for ev, _, vs in A.eigenvects() if sp.simplify(ev - top) == 0)
    U = sp.Matrix.hstack(*sp.GramSchmidt(vecs, orthonormal=True))
    P = sp.simplify(U * U.T)
    x = sp.Matrix(sp.symbols(f"x1:{s.d + 1}", real=True))
    Pi = sp.simplify(P * x / sp.sqrt((x.T * P * x)[0]))
    steps = [
        Step("A = V Bᵀ for the given matrices (symmetric, as the model assumes)", A, "matrix product", "A"),
        Step("Distinct eigenvalues of A, descending (multiplicities " + ", ".join(map(str, s.multiplicity)) + ")",
             sp.Matrix([sp.Float(float(m), 12) for m in s.mu]), "exact characteristic polynomial, real roots",
             r"\mu"),
        Step(f"Orthogonal projector onto the dominant eigenspace E (dim E = {s.dim_E})", P,
             "orthonormal eigenvectors of the top eigenvalue (Gram-Schmidt)", r"P_E"),
        Step("Projection map Π(x) = P_E x/|P_E x| (the τ → ∞ limit of the closed-form flow)", Pi,
             "|P_E x|² = xᵀ P_E x for an orthogonal projector", r"\Pi(x)"),
    ]
    rate = None
    if s.dim_E == 1:
        rate = M.convergence_rate(B, V)
        steps.append(Step("Convergence rate at the attracting fixed point x* in E: c = γ/|Bᵀx*| (Jacobian)",
                          sp.Float(rate, 12), f"gap γ = {s.gap:.6g}; tangent Jacobian eigenvalues of X_∞ at x*",
                          "c"))
    lyap = M.lyapunov_rate(B, V)
    steps.append(Step("Global (Lyapunov) rate bound γ/σ_max(B)", sp.Float(lyap, 12),
                      f"σ_max(B) = {s.sigma_max:.6g}", r"c_{\rm Lyap}"))
    cb = M.concentration_bound()
    cval = sp.Float(rate if rate is not None else lyap, 12)
    steps += [
        Step("Theorem 1 bound with c set to this rate (K and C₁ stay symbols)", cb.b.subs(M.c, cval),
             "model statement", r"b(\beta,t)"),
        Step("Its optimal time", cb.t_star.subs(M.c, cval), "sympy.solve of db/dt = 0", r"t^*(\beta)"),
    ]
    return steps
