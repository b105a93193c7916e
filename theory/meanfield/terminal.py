"""Paper B, Conjecture 1: the terminal phase at finite beta, read from the cluster field g(u) = P_perp_u V u.

A tight cluster of tokens at u (width << beta^{-1/2}, the other clusters' softmax weights exponentially small)
sees uniform weights within itself, so its centre moves by the cluster field

    u' = g(u) = V u - <u, V u> u,

which is the linear flow y' = V y seen on the sphere: u(t) = e^{tV} u_0 / |e^{tV} u_0| solves it (d/dt of y/|y| is
V y/|y| - y <y, V y>/|y|^3 = g(y/|y|)).  Its long-time behaviour is read from V's real Schur form
Q^T V Q = [[T_11, T_12], [0, T_22]], with T_11 holding the *dominant group* of eigenvalues (the largest real
part) and S = range(Q_1) the dominant invariant subspace:

* in these coordinates y = Q (z_1, z_2) with z_2' = T_22 z_2, so the distance of u from S, |z_2|/|y|, decays like
  e^{-r t} with the *approach rate* r = Re lambda_1 - max Re(spectrum of T_22) (the gap in real part);
* inside S, z_1' = T_11 z_1: for a real dominant eigenvalue (semisimple) every direction of S is at rest (S is
  the dominant eigenspace); for a complex pair a +- i omega, e^{t T_11} = e^{a t} X rot(omega t) X^{-1}, so the
  direction turns once around the plane S every 2 pi / omega: the tokens rotate in S at the *rotation rate*
  omega = |Im lambda_1| and never come to rest (the paper's "dominant eigenspace of V" has no real direction).

For a real dominant eigenvector u the approach rate is also the cluster field's linearisation: the SymPy Jacobian
of g at u restricted to u^perp has the eigenvalues lambda_j - lambda_1 (j >= 2; u^perp is not V-invariant for a
non-symmetric V, but the quotient by span(u) is), so r = lambda_1 - max Re lambda_j; ``terminal_rates`` derives
it that way and checks it against the spectrum.  A cluster sitting on a V-invariant subspace E leaves it at the
*escape rate* Re lambda_1 - max Re spectrum(V|_E) (``escape_rate_from``).

The spectrum is certified: eigenvalue and eigenvector enclosures of V in FLINT/Arb ball arithmetic
(``acb_mat.eig``, 128 bits), the basis of S orthonormalised in balls, so the returned projector comes with a
rigorous error bound.  A multiple dominant eigenvalue (no isolating balls) is handled exactly in SymPy (rational
input).  Not covered (``motion = "uncovered"``): a defective dominant eigenvalue (algebraic approach ~ 1/t), a real
eigenvalue and a complex pair, or two pairs, sharing the largest real part.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import flint
import numpy as np
import sympy as sp
from flint import acb, acb_mat, arb

import attnverify.theory.certified as C
from attnverify.theory.certified_spectra import gram_schmidt_balls
from attnverify.theory.closed_forms import derived, recorded
from attnverify.theory.meanfield.model import _exact, _key

__all__ = ["DominantSubspace", "TerminalForms", "subspace_excess"]

_PREC = (128, 512)          # bits: a tie in real part that 128 bits cannot split is retried at 512


@dataclass(frozen=True)
class DominantSubspace:
    """The dominant invariant subspace S of a real square matrix M and the motion of the linear flow inside it.

    ``eigenvalues``: M's eigenvalues (midpoints of certified balls), by decreasing real part; ``dominant``: the
    group with the largest real part; ``motion``: ``"fixed"`` (real, semisimple: S is the dominant eigenspace),
    ``"rotation"`` (one complex pair: S is its real invariant plane) or ``"uncovered"`` (``note`` says why);
    ``basis``: an orthonormal basis of S (d x k); ``approach_rate`` r = Re lambda_1 - Re lambda_next (None without
    a next eigenvalue) and ``rotation_rate`` omega = |Im lambda_1|, each with its certified enclosure;
    ``projector_error``: a rigorous bound on the 2-norm distance of :attr:`projector` from the exact orthogonal
    projector onto S (0 for exact SymPy arithmetic)."""

    eigenvalues: tuple[complex, ...]
    dominant: tuple[complex, ...]
    motion: str
    basis: np.ndarray
    approach_rate: float | None
    rotation_rate: float
    approach_enclosure: tuple[float, float] | None
    rotation_enclosure: tuple[float, float]
    projector_error: float
    method: str
    note: str = ""

    @property
    def dim(self) -> int:
        return int(self.basis.shape[1])

    @property
    def projector(self) -> np.ndarray:
        return self.basis @ self.basis.T

    @property
    def real_simple(self) -> bool:
        """The dominant eigenvalue is real and simple (S is one direction, at rest)."""
        return self.motion == "fixed" and self.dim == 1


def _ball(e: sp.Rational) -> arb:
    return arb(flint.fmpq(int(e.p), int(e.q)))


def _interval(x: arb) -> tuple[float, float]:
    return C.lower(x), C.upper(x)


def _real_parts(E: list[acb]) -> list[tuple[float, float]]:
    return [_interval(z.real) for z in E]


def _group(E: list[acb]) -> tuple[list[int], list[int]]:
    """Indices of the dominant group (real-part enclosures overlapping the top one) and of the rest."""
    re = _real_parts(E)
    top = max(range(len(E)), key=lambda i: re[i][1])
    lo = re[top][0]
    grp = [i for i in range(len(E)) if re[i][1] >= lo]
    return grp, [i for i in range(len(E)) if i not in grp]


def _certified(Me: sp.Matrix, prec: int) -> DominantSubspace | None:
    """The dominant subspace from isolated eigenvalue and eigenvector balls; None when the eigenvalues cannot be
    isolated at this precision (a multiple eigenvalue) or the dominant group is a tie to be retried."""
    d = Me.rows
    with flint.ctx.workprec(prec):
        A = acb_mat([[acb(_ball(e)) for e in Me.row(i)] for i in range(d)])
        try:
            E, R = A.eig(right=True, algorithm="rump")
        except ValueError:
            return None
        grp, rest = _group(list(E))
        real = [i for i in grp if E[i].imag.contains(0)]
        upper_half = [i for i in grp if not E[i].imag.contains(0) and E[i].imag > 0]
        if len(grp) == 1 and real:
            motion, pick = "fixed", real
        elif len(grp) == 2 and len(upper_half) == 1 and not real:
            motion, pick = "rotation", upper_half
        else:
            return None if prec < _PREC[-1] else _uncovered_from_balls(E, grp, rest, "a real eigenvalue and a "
                                                                          "complex pair, or several pairs, share "
                                                                          "the largest real part")
        vectors: list[list[arb]] = []
        for i in pick:
            v = [R[r, i] for r in range(d)]
            j = max(range(d), key=lambda r: float(abs(v[r]).mid()))
            phase = v[j].conjugate() / abs(v[j])
            w = [x * phase for x in v]
            vectors.append([x.real for x in w])
            if motion == "rotation":
                vectors.append([x.imag for x in w])
        Qb = gram_schmidt_balls(vectors)
        k = len(Qb)
        basis = np.array([[float(Qb[c][r].mid()) for c in range(k)] for r in range(d)])
        Pf = basis @ basis.T
        err = arb(0)
        for r in range(d):
            for c in range(d):
                exact = sum((Qb[m][r] * Qb[m][c] for m in range(k)), arb(0))
                err += arb(C.upper(abs(exact - arb(float(Pf[r, c]))))) ** 2
        top = grp[0] if motion == "fixed" else pick[0]
        approach = ((E[top].real - max((E[i].real for i in rest), key=lambda x: float(x.mid())))
                    if rest else None)
        omega = abs(E[top].imag) if motion == "rotation" else arb(0)
        eig = sorted((complex(float(z.real.mid()), float(z.imag.mid())) for z in E), key=lambda z: (-z.real, -z.imag))
        dom = tuple(complex(float(E[i].real.mid()), float(E[i].imag.mid())) for i in grp)
        return DominantSubspace(
            eigenvalues=tuple(eig), dominant=dom, motion=motion, basis=basis,
            approach_rate=None if approach is None else float(approach.mid()), rotation_rate=float(omega.mid()),
            approach_enclosure=None if approach is None else _interval(approach),
            rotation_enclosure=_interval(omega) if motion == "rotation" else (0.0, 0.0),
            projector_error=C.upper(err.sqrt()), method=f"{C.LIBRARY}, acb_mat.eig (Rump), {prec} bits")


def _uncovered_from_balls(E, grp, rest, why: str) -> DominantSubspace:
    eig = tuple(sorted((complex(float(z.real.mid()), float(z.imag.mid())) for z in E),
                       key=lambda z: (-z.real, -z.imag)))
    dom = tuple(complex(float(E[i].real.mid()), float(E[i].imag.mid())) for i in grp)
    return DominantSubspace(eig, dom, "uncovered", np.zeros((len(E), 0)), None, 0.0, None, (0.0, 0.0), 0.0,
                            C.LIBRARY, note=why)


def _exact_multiple(Me: sp.Matrix) -> DominantSubspace:
    """A multiple dominant eigenvalue, exactly (SymPy eigenvects of the rational matrix): semisimple real -> S is
    its eigenspace; defective or complex multiple -> uncovered."""
    d = Me.rows
    groups = Me.eigenvects()
    def re(ev): return float(sp.re(ev).evalf(40))
    top = max(re(ev) for ev, _, _ in groups)
    near = [abs(re(ev) - top) <= 1e-30 * max(1.0, abs(top)) for ev, _, _ in groups]
    dom = [g for g, n in zip(groups, near) if n]
    others = [re(ev) for (ev, _, _), n in zip(groups, near) if not n]
    eig = tuple(sorted((complex(sp.N(ev, 30)) for ev, m, _ in groups for _ in range(m)),
                       key=lambda z: (-z.real, -z.imag)))
    approach = top - max(others) if others else None
    dominant = tuple(complex(sp.N(ev, 30)) for ev, m, _ in dom for _ in range(m))
    if len(dom) != 1 or not dom[0][0].is_real:
        return DominantSubspace(eig, dominant, "uncovered", np.zeros((d, 0)), approach, 0.0, None, (0.0, 0.0), 0.0,
                                "SymPy (exact)", note="a multiple complex or tied dominant eigenvalue")
    ev, m, vs = dom[0]
    if len(vs) < m:
        return DominantSubspace(eig, dominant, "uncovered", np.zeros((d, 0)), approach, 0.0, None, (0.0, 0.0), 0.0,
                                "SymPy (exact)", note=f"the dominant eigenvalue {sp.nsimplify(ev)} is defective "
                                f"(algebraic multiplicity {m}, geometric {len(vs)}): the approach is algebraic")
    Q = sp.GramSchmidt(list(vs), orthonormal=True)
    basis = np.array([[float(sp.N(q[r], 30)) for q in Q] for r in range(d)])
    return DominantSubspace(eig, dominant, "fixed", basis, approach, 0.0,
                            None if approach is None else (approach, approach), (0.0, 0.0), 0.0, "SymPy (exact)")


def _dominant_of(Me: sp.Matrix) -> DominantSubspace:
    for prec in _PREC:
        found = _certified(Me, prec)
        if found is not None:
            return found
    return _exact_multiple(Me)


def subspace_excess(P_outer: np.ndarray, P_inner: np.ndarray) -> float:
    """||(I - P_outer) P_inner||_2: the sine of the largest principal angle between range(P_inner) and
    range(P_outer) seen from the inner one (0 when range(P_inner) lies in range(P_outer))."""
    P_outer, P_inner = np.asarray(P_outer, float), np.asarray(P_inner, float)
    return float(np.linalg.norm((np.eye(len(P_outer)) - P_outer) @ P_inner, 2))


class TerminalForms:
    """Conjecture 1's terminal phase, a part of :class:`attnverify.theory.meanfield.MeanFieldTheory`: the dominant
    invariant subspace of V, the cluster field and its rates."""

    @derived
    def _dominant_cached(self, kM: tuple) -> DominantSubspace:
        return _dominant_of(sp.Matrix(kM[0], kM[0], list(kM[1])))

    def dominant_subspace(self, M) -> DominantSubspace:
        """The dominant invariant subspace of the real square matrix M (numpy or SymPy; floats are read as the exact
        binary rationals they are) and the motion of the linear flow inside it (see the module docstring)."""
        Me = _exact(M, "matrix")
        if Me.rows < 2:
            raise ValueError(f"dimension d must be >= 2, got d = {Me.rows}")
        return self._dominant_cached(_key(Me))

    @recorded
    def value_eigenspace(self, V) -> np.ndarray:
        """Orthogonal projector onto the dominant invariant subspace S of V: its dominant eigenspace when the
        dominant eigenvalue is real (for any V, symmetric or not: an oblique eigenspace is projected orthogonally),
        the real invariant plane of a dominant complex pair.  ValueError when V has no proper dominant subspace (a
        multiple of the identity) or the case is not covered (see :meth:`dominant_subspace`)."""
        s = self.dominant_subspace(V)
        if s.motion == "uncovered":
            raise ValueError(f"V's dominant invariant subspace is not covered: {s.note}")
        if s.dim == s.basis.shape[0] or s.approach_rate is None:
            raise ValueError("V has no spectral gap in real part: its dominant invariant subspace is the whole space")
        return s.projector

    @derived
    def cluster_field_jacobian(self, d: int) -> tuple[sp.Matrix, sp.Matrix, sp.Matrix]:
        """Cluster field g(u) = P_perp_u V u (a cluster at u whose softmax weights are uniform moves by the value
        average V u, projected): (u, V, Jacobian dg/du) in SymPy, for symbolic u in R^d and V in R^{d x d}."""
        us = sp.Matrix(sp.symbols(f"u1:{d + 1}", real=True))
        Vs = sp.Matrix(d, d, sp.symbols(f"V1:{d * d + 1}", real=True))
        g = (sp.eye(d) - us * us.T / (us.T * us)[0]) * Vs * us
        return us, Vs, g.jacobian(us)

    @derived
    def _cluster_jacobian(self, d: int) -> tuple[Callable, sp.Matrix]:
        """The cluster field's Jacobian (:meth:`cluster_field_jacobian`), lambdified to NumPy in (u, V)."""
        us, Vs, J = self.cluster_field_jacobian(d)
        return sp.lambdify((*us, *Vs), J, "numpy"), J

    def _tangent_eigenvalues(self, V: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Eigenvalues of the cluster field's SymPy Jacobian at the unit vector u, restricted to the tangent
        space."""
        Jf, _ = self._cluster_jacobian(V.shape[0])
        J = np.array(Jf(*u, *V.ravel()), dtype=float)
        _, _, Vt = np.linalg.svd(u[None, :])
        T = Vt[1:].T
        return np.linalg.eigvals(T.T @ J @ T)

    def cluster_flow(self, V, u0, t: float) -> np.ndarray:
        """The cluster field's flow after time t: e^{tV} u0 / |e^{tV} u0| (the position of a tight cluster that
        started at u0), for one point u0 (d,) or for the rows of an array (n, d)."""
        from scipy.linalg import expm

        U = np.asarray(u0, dtype=float)
        Y = U @ expm(float(t) * np.asarray(V, dtype=float)).T
        return Y / np.linalg.norm(Y, axis=-1, keepdims=True)

    @recorded
    def terminal_rates(self, V) -> dict:
        """Derived rates of the terminal phase (Conjecture 1) from the cluster field g(u) = P_perp_u V u.

        ``axis_rate``: the rate r at which a tight cluster approaches V's dominant invariant subspace S.  For a real
        dominant eigenvalue it is read from the SymPy Jacobian of g at the dominant eigenvector u (tangent eigenvalues
        lambda_j - lambda_1; the largest, negated, is r; the certified gap in real part, ``axis_rate_enclosure``, must
        hold it: a test checks that the two derivations agree); for a complex pair from the real Schur form (the module
        docstring): r = Re lambda_1 - Re lambda_3.  ``rotation_rate``: omega = |Im lambda_1| (0 for a real dominant
        eigenvalue).  ``collapse_rate``: the contraction rate of a cluster at u in S, <u, V u>: lambda_1 for a real
        dominant eigenvector, its minimum over the unit circle of S for a rotation.  ``motion``, ``dim_S``,
        ``dominant_eigenvalues`` ((re, im) pairs) and the certified ``axis_rate_enclosure`` and
        ``rotation_rate_enclosure`` describe the case."""
        s = self.dominant_subspace(V)
        if s.motion == "uncovered" or s.approach_rate is None:
            self.value_eigenspace(V)                 # raises with the reason
        Vn = np.asarray(V, dtype=float)
        out = {"motion": s.motion, "dim_S": s.dim, "dominant_eigenvalues": [(z.real, z.imag) for z in s.dominant],
               "rotation_rate": s.rotation_rate, "axis_rate_enclosure": s.approach_enclosure,
               "rotation_rate_enclosure": s.rotation_enclosure, "spectrum_method": s.method}
        if s.motion == "fixed":
            u = s.basis[:, 0]
            ev = np.sort(self._tangent_eigenvalues(Vn, u).real)[::-1]
            transversal = ev[s.dim - 1:]
            r = float(-transversal[0])
            v1 = float(u @ Vn @ u)
            return {**out, "axis_rate": r, "collapse_rate": v1, "top_eigenvalue": v1,
                    "tangent_eigenvalues": ev.tolist()}
        B = s.basis
        rayleigh = np.linalg.eigvalsh((B.T @ Vn @ B + (B.T @ Vn @ B).T) / 2)
        return {**out, "axis_rate": float(s.approach_rate), "collapse_rate": float(rayleigh[0]),
                "top_eigenvalue": float(s.dominant[0].real)}

    def escape_rate(self, V, u) -> float:
        """Largest tangent eigenvalue of the cluster-field Jacobian at the unit vector u (an eigenvector of V):
        the rate at which a cluster at u leaves it (<= 0: u attracts)."""
        Vn = np.asarray(V, dtype=float)
        u = np.asarray(u, dtype=float)
        return float(np.max(self._tangent_eigenvalues(Vn, u / np.linalg.norm(u)).real))

    def escape_rate_from(self, V, P_E: np.ndarray, tol: float = 1e-9) -> float | None:
        """The rate at which a tight cluster on the subspace E = range(P_E) leaves it, when E is V-invariant:
        Re lambda_1(V) - max Re spectrum(V|_E) (in a basis adapted to E, V = [[V_E, *], [0, V_quotient]], the
        transverse coordinates grow by e^{t V_quotient}, the ones in E by e^{t V_E}).  None when E is not V-invariant
        (||(I - P_E) V P_E|| > tol ||V||: a cluster on E moves off it at once, no escape time) and 0 or less when a
        dominant eigenvalue lies in E."""
        Vn = np.asarray(V, dtype=float)
        P = np.asarray(P_E, dtype=float)
        if np.linalg.norm((np.eye(len(P)) - P) @ Vn @ P, 2) > tol * max(1.0, np.linalg.norm(Vn, 2)):
            return None
        w, U = np.linalg.eigh(P)
        Ub = U[:, w > 0.5]
        inside = np.linalg.eigvals(Ub.T @ Vn @ Ub).real.max()
        return float(max(z.real for z in self.dominant_subspace(V).eigenvalues) - inside)
