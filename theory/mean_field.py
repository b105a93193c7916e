"""Paper B (mean-field transformers at low temperature): zero-temperature limit, projection map, rates.

Model: tokens on S^{d-1}, B = Q^T K, value matrix V, A = V B^T (assumed symmetric, spectral gap
gamma = mu_1 - mu_2 > 0 between the largest eigenvalue mu_1 and the next distinct one).

* Laplace principle: the softmax average concentrates at y*(x) = argmax_{|y|=1} <B^T x, y>, found by a
  Lagrange multiplier: y* = B^T x / |B^T x|, so X_inf(x) = P_perp_x V B^T x / |B^T x|.
* Closed-form flow: x(tau) = e^{tau A} x0 / |e^{tau A} x0| with dt/dtau = |B^T x(tau)|.
* Projection map Pi(x) = P_E x / |P_E x| onto the dominant eigenspace E of A (the tau -> oo limit).
* Rates: Jacobian eigenvalues (mu_j - mu_1)/|B^T x*| on the tangent space at x* in E, and the Lyapunov
  functional L = |P_{E^perp} x|^2 / |P_E x|^2 with dL/dt <= -2 gamma L / sigma_max(B) (a bound).
* Theorem-1 bound b(beta, t) = K (sqrt(log(beta+1)/beta) e^{C1 t} + e^{-c t}), its optimal time and value.

Spectral data (:func:`spectrum`): exact input (SymPy/rational matrices) keeps exact arithmetic; floating-point
input (any d) gets eigenvalue clusters, the invariant subspace of the top cluster and the gap certified in
FLINT/Arb ball arithmetic (python-flint), with certificates (attnverify.theory.certificate).  E is the invariant subspace of
the top cluster, so a double top eigenvalue split by rounding gives dim E = 2.

Everything symbolic is derived lazily (``functools.lru_cache``); importing the module does no SymPy work.
Non-symmetric V B^T is rejected (ValueError), it is not handled.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

import flint
import mpmath as mp
import numpy as np
import sympy as sp
from flint import arb, arb_mat

import attnverify.theory.certificate as C

from attnverify.theory.derivation import Step

__all__ = [
    "beta", "t", "K", "C1", "c",
    "check_assumptions", "spectrum", "Spectrum",
    "lagrange_maximiser", "zero_temperature_field",
    "flow_residual", "diagonal_flow_residual", "closed_form_flow",
    "projection_map", "stationarity_residual",
    "jacobian_eigenvalues", "convergence_rate", "lyapunov_rate", "rate_comparison",
    "ConcentrationBound", "concentration_bound", "derivation",
]

beta, t, K, C1, c = sp.symbols("beta t K C_1 c", positive=True)
tau = sp.Symbol("tau", real=True)

_SYM_RTOL = 1e-12     # |A - A^T| <= 1e-12 |A| counts as symmetric for floating-point input
_GAP_RTOL = 1e-12     # a gap below 1e-12 |A| cannot be resolved in double precision
_COND_MIN = 1e-12     # sigma_min(B)/sigma_max(B) below this: B singular to double precision
_ZERO_RTOL = 1e-12    # |P_E x| <= 1e-12 |x|: x lies (numerically) in E^perp, outside the domain of Pi
_DPS = 30             # working precision of the mpmath evaluations


# ----------------------------------------------------------------------------------------------
# input handling and assumptions
# ----------------------------------------------------------------------------------------------
def _exact(M, name: str) -> sp.Matrix:
    """Square matrix with exact rational entries (a float is converted exactly, binary value)."""
    if isinstance(M, sp.MatrixBase):
        rows = M.tolist()
    elif isinstance(M, (np.ndarray, list, tuple)):
        try:
            arr = np.asarray(M, dtype=float)
        except (TypeError, ValueError):
            raise TypeError(f"{name} must be a real numeric matrix") from None
        if arr.ndim != 2:
            raise ValueError(f"{name} must be a 2-D matrix, got shape {arr.shape}")
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{name} has non-finite entries (NaN or inf)")
        rows = arr.tolist()
    else:
        raise TypeError(f"{name} must be a numpy array or a SymPy matrix, got {type(M).__name__}")
    out = []
    for row in rows:
        new = []
        for e in row:
            e = sp.sympify(e)
            if e.free_symbols or not e.is_number:
                raise ValueError(f"{name} must have numeric entries, got {e}")
            if e.has(sp.nan, sp.oo, -sp.oo, sp.zoo):
                raise ValueError(f"{name} has non-finite entries (NaN or inf)")
            if not e.is_real:
                raise ValueError(f"{name} must be real, got entry {e}")
            new.append(e if e.is_Rational else sp.Rational(str(sp.N(e, 40))))
        out.append(new)
    mat = sp.Matrix(out)
    if mat.rows != mat.cols:
        raise ValueError(f"{name} must be square, got shape {mat.shape}")
    return mat


def _key(M: sp.Matrix) -> tuple:
    return (M.rows, tuple(M))


@dataclass(frozen=True)
class Spectrum:
    """Spectral data of A = V B^T (symmetric): eigenvalue clusters mu (descending, mpf: the cluster's value),
    their multiplicities (eigenvalues in the cluster), the orthogonal projectors P_k onto the clusters' invariant
    subspaces, the gap gamma = mu_1 - mu_2 between the top cluster and the next, and the extreme singular
    values of B.

    Exact (rational) input: the clusters are the distinct exact eigenvalues (SymPy real roots of the
    characteristic polynomial), P_k the Sylvester projectors.  Floating-point input: see :func:`spectrum`;
    ``enclosures`` (per cluster), ``gap_enclosure`` and ``P_E_error`` (a rigorous bound on the 2-norm distance
    of ``P_E`` from the true projector) are certified in Arb ball arithmetic; ``certificates`` holds the
    attnverify.theory.certificate dicts; ``cluster_tol`` is the tolerance below which eigenvalues are not distinguished."""

    A: sp.Matrix
    B: sp.Matrix
    mu: tuple
    multiplicity: tuple
    projectors: tuple
    gap: float
    sigma_max: float
    sigma_min: float
    exact: bool = True
    enclosures: tuple = ()
    gap_enclosure: tuple | None = None
    P_E_error: float = 0.0
    cluster_tol: float = 0.0
    certificates: tuple = ()

    @property
    def d(self) -> int:
        return self.A.rows

    @property
    def P_E(self) -> np.ndarray:
        return _to_numpy(self.projectors[0])

    @property
    def dim_E(self) -> int:
        return self.multiplicity[0]


def _to_numpy(M) -> np.ndarray:
    if isinstance(M, np.ndarray):
        return np.array(M, dtype=float)
    return np.array([[float(M[i, j]) for j in range(M.cols)] for i in range(M.rows)])


def _real_roots_desc(M: sp.Matrix) -> list[tuple[sp.Expr, int]]:
    """Distinct real eigenvalues of a symmetric rational matrix (exact), descending, with multiplicity."""
    roots = M.charpoly().real_roots()
    distinct: list[list] = []
    for r in roots:
        if distinct and distinct[-1][0] == r:
            distinct[-1][1] += 1
        else:
            distinct.append([r, 1])
    return [(r, m) for r, m in reversed(distinct)]


@lru_cache(maxsize=64)
def _spectrum_cached(kB: tuple, kV: tuple) -> Spectrum:
    d = kB[0]
    B = sp.Matrix(d, d, list(kB[1]))
    V = sp.Matrix(d, d, list(kV[1]))
    if B.det() == 0:
        raise ValueError("B = Q^T K is singular (assumption: B invertible)")
    sig2 = _real_roots_desc(B * B.T)
    smax = float(sp.sqrt(sig2[0][0]).evalf(_DPS))
    smin = float(sp.sqrt(sig2[-1][0]).evalf(_DPS))
    if smin <= _COND_MIN * smax:
        raise ValueError(f"B = Q^T K is singular to double precision (sigma_min/sigma_max = {smin / smax:.1e})")
    A = V * B.T
    scale = max(abs(e) for e in A) or sp.Integer(1)
    asym = max(abs(e) for e in (A - A.T))
    if asym != 0:
        if asym > _SYM_RTOL * scale:
            raise ValueError(f"V B^T is not symmetric (max |A - A^T| = {float(asym):.2e}); "
                             "the model assumes a symmetric V B^T")
        A = (A + A.T) / 2   # round-off asymmetry of floating-point input
    eig = _real_roots_desc(A)
    if len(eig) < 2:
        raise ValueError("V B^T has no spectral gap: it is a multiple of the identity, no dominant eigenspace")
    with mp.workdps(_DPS + 10):
        mus = [mp.mpf(str(sp.N(r, _DPS + 10))) for r, _ in eig]
        gap = mus[0] - mus[1]
        if gap <= _GAP_RTOL * float(scale):
            raise ValueError(f"V B^T has no resolvable spectral gap (gamma = {float(gap):.1e})")
        Am = mp.matrix([[mp.mpf(str(sp.N(A[i, j], _DPS + 10))) for j in range(d)] for i in range(d)])
        projs = []
        for k, mk in enumerate(mus):   # Sylvester / Riesz projector of the k-th distinct eigenvalue
            P = mp.eye(d)
            for j, mj in enumerate(mus):
                if j != k:
                    P = P * (Am - mj * mp.eye(d)) / (mk - mj)
            projs.append(P)
    encl, gap_encl, certs = _exact_certificates(A, eig)
    return Spectrum(A=A, B=B, mu=tuple(mus), multiplicity=tuple(m for _, m in eig),
                    projectors=tuple(projs), gap=float(gap), sigma_max=smax, sigma_min=smin,
                    enclosures=encl, gap_enclosure=gap_encl, certificates=certs)


def _exact_certificates(A: sp.Matrix, eig: list) -> tuple[tuple, tuple, tuple]:
    """Rational isolating intervals of the distinct eigenvalues of the exact A (SymPy real-root isolation of the
    characteristic polynomial, width <= 1e-20), the gap enclosure and their certificates."""
    x = sp.Symbol("x")
    ivs = sorted(sp.Poly(A.charpoly(x).as_expr(), x).intervals(eps=sp.Rational(1, 10**20)),
                 key=lambda t: -t[0][1])
    encl = tuple((C.lower_q(a), C.upper_q(b)) for (a, b), _ in ivs)
    (a1, b1), (a2, b2) = ivs[0][0], ivs[1][0]
    gap_encl = (C.lower_q(a1 - b2), C.upper_q(b1 - a2))
    lib = f"SymPy {sp.__version__} (exact rational real-root isolation)"
    certs = (dict(C.certificate("mu_1", f"the largest eigenvalue of V B^T (multiplicity {eig[0][1]}, exact) lies in the "
                                "enclosure", *encl[0], 0, f"dim E = {eig[0][1]}, exact"), library=lib),
             dict(C.certificate("gap", "mu_1 - mu_2 lies in the enclosure", *gap_encl, 0, "exact"), library=lib))
    return encl, gap_encl, certs


_ARB_PREC = 128       # bits of the ball arithmetic of the certified spectral data
_CLUSTER_ULPS = 64    # float input: eigenvalues within 64 d eps |V|_F |B|_F are one cluster


def _float_input(M) -> bool:
    """True for floating-point input (a float array, or a list holding floats); SymPy matrices, integer arrays and
    lists of ints/Fractions/SymPy rationals are exact input."""
    if isinstance(M, sp.MatrixBase):
        return False
    arr = np.asarray(M)
    if arr.dtype.kind in "iub":
        return False
    if arr.dtype == object:
        return any(isinstance(e, (float, np.floating)) or (isinstance(e, sp.Float)) for e in arr.ravel())
    return True


def _fro(M: np.ndarray) -> float:
    """Frobenius norm without overflow (scaled by the largest entry)."""
    m = float(np.max(np.abs(M)))
    return m * float(np.linalg.norm(M / m)) if m > 0 else 0.0


def _gram_schmidt(U: np.ndarray) -> list[list]:
    """Columns of the exact Gram-Schmidt orthonormalisation of the float matrix U, enclosed in Arb balls
    (the exact result is an orthonormal matrix; every ball contains its entry)."""
    d, k = U.shape
    cols: list[list] = []
    for j in range(k):
        v = [arb(float(U[i, j])) for i in range(d)]
        for q in cols:
            c = sum((qi * vi for qi, vi in zip(q, v)), arb(0))
            v = [vi - c * qi for vi, qi in zip(v, q)]
        n = sum((vi * vi for vi in v), arb(0)).sqrt()
        cols.append([vi / n for vi in v])
    return cols


def _gershgorin(M: "arb_mat", idx: list[int]) -> list[tuple[arb, arb]]:
    """Gershgorin intervals (as ball pairs lower, upper) of the symmetric ball matrix M restricted to
    rows/columns idx: every eigenvalue of the exact restricted matrix lies in their union."""
    ivs = []
    for i in idx:
        r = sum((abs(M[i, j]) for j in idx if j != i), arb(0))
        ivs.append((M[i, i] - r, M[i, i] + r))
    return ivs


@lru_cache(maxsize=64)
def _spectrum_float(kB: tuple, kV: tuple) -> Spectrum:
    """Clusters, their invariant subspaces and the gap for floating-point input, certified in Arb.

    1. A = V B^T is formed in ball arithmetic (128 bits) and symmetrised; U = NumPy's eigh eigenvectors.
    2. Q = exact Gram-Schmidt of U (enclosed in balls; the exact Q is orthonormal), M = Q^T A Q (balls): M has
       exactly the eigenvalues of A.  Gershgorin: every eigenvalue lies in the union of the intervals
       [M_ii - r_i, M_ii + r_i], r_i = sum_{j != i} |M_ij|, and a connected union of k intervals holds exactly k
       eigenvalues.  Intervals that overlap or lie within ``cluster_tol`` = 64 d eps |V|_F |B|_F (the rounding of
       float input) of each other form one cluster.
    3. Invariant subspace of the top cluster (indices I, k = |I|): P_E ~ Q_I Q_I^T.  Davis-Kahan sin-theta
       theorem: with R = A Q_I - Q_I M_II = Q_J M_JI, the eigenvalues of M_II in [a, b] (Gershgorin of M_II) and
       the rest of the spectrum below a - delta, ||P_E - Q_I Q_I^T||_2 <= ||M_JI||_F / delta.
    """
    d = kB[0]
    B = sp.Matrix(d, d, list(kB[1]))
    V = sp.Matrix(d, d, list(kV[1]))
    Bn, Vn = _to_numpy(B), _to_numpy(V)
    sv = np.linalg.svd(Bn, compute_uv=False)
    smax, smin = float(sv[0]), float(sv[-1])
    if smax == 0:
        raise ValueError("B = Q^T K is singular (B = 0; assumption: B invertible)")
    if smin <= _COND_MIN * smax:
        raise ValueError(f"B = Q^T K is singular to double precision (sigma_min/sigma_max = {smin / smax:.1e})")
    # classical ball Gram-Schmidt loses about 1.3 bits per column (wrapping): 2 d guard bits
    with flint.ctx.workprec(_ARB_PREC + 2 * d):
        Aa = arb_mat(Vn.tolist()) * arb_mat(Bn.tolist()).transpose()
        An = np.array([[float(Aa[i, j].mid()) for j in range(d)] for i in range(d)])
        scale = float(np.max(np.abs(An))) or 1.0
        asym = float(np.max(np.abs(An - An.T)))
        if asym > _SYM_RTOL * scale:
            raise ValueError(f"V B^T is not symmetric (max |A - A^T| = {asym:.2e}); "
                             "the model assumes a symmetric V B^T")
        As = (Aa + Aa.transpose()) * arb(0.5)
        w, U = np.linalg.eigh((An + An.T) / 2)
        order = np.argsort(w)[::-1]
        U = U[:, order]
        cols = _gram_schmidt(U)
        Q = arb_mat([[cols[j][i] for j in range(d)] for i in range(d)])
        M = Q.transpose() * As * Q
        tol = _CLUSTER_ULPS * d * float(np.finfo(float).eps) * _fro(Vn) * _fro(Bn)
        ivs = _gershgorin(M, list(range(d)))
        # clusters: sweep the intervals by lower end, merging overlaps and gaps <= tol
        by_lo = sorted(range(d), key=lambda i: float(ivs[i][0].lower()))
        comps: list[list] = []
        for i in by_lo:
            lo, hi = ivs[i][0].lower(), ivs[i][1].upper()
            if comps and float(lo) <= float(comps[-1][2]) + tol:
                comps[-1][0].append(i)
                comps[-1][2] = max(comps[-1][2], hi)
            else:
                comps.append([[i], lo, hi])
        comps.sort(key=lambda c: -float(c[2]))
        if len(comps) < 2:
            lo, hi = C.lower(comps[0][1]), C.upper(comps[0][2])
            raise ValueError(f"V B^T has no spectral gap that can be resolved: all {d} eigenvalues lie in one cluster "
                             f"{C.interval_text(lo, hi, 17)} (eigenvalues closer than {tol:.1e} = 64 d eps |V|_F |B|_F are "
                             "not distinguished for floating-point input)")
        top, second = comps[0], comps[1]
        gap_lo, gap_hi = top[1] - second[2], top[2] - second[1]
        I = sorted(top[0])
        J = [j for j in range(d) if j not in I]
        # Davis-Kahan: spectrum of M_II vs the rest (all below second's upper end)
        ivs_I = _gershgorin(M, I)
        a = min((iv[0] for iv in ivs_I), key=lambda x: float(x.lower()))
        delta = a - second[2]
        if not delta > 0:
            raise ValueError(f"V B^T: the gap between the top eigenvalue cluster and the rest is not resolvable "
                             f"(gap in [{C.lower(gap_lo):.3g}, {C.upper(gap_hi):.3g}], cluster tolerance {tol:.1e})")
        res = sum((M[j, i] * M[j, i] for j in J for i in I), arb(0)).sqrt()
        sin_theta = res / delta
        mus, projs, encl = [], [], []
        for n, comp in enumerate(comps):
            idx = sorted(comp[0])
            val = sum((M[i, i] for i in idx), arb(0)) / len(idx)
            mus.append(mp.mpf(float(val.mid())))
            encl.append((C.lower(comp[1]), C.upper(comp[2])))
            if n == 0:   # the top cluster's projector in balls (for its certificate)
                projs.append([[sum((cols[k][r] * cols[k][c] for k in idx), arb(0)) for c in range(d)]
                              for r in range(d)])
            else:        # the others as floats (used by the closed-form flow only)
                projs.append(U[:, idx] @ U[:, idx].T)
        P_top = projs[0]
        P_float = [[float(e.mid()) for e in row] for row in P_top]
        round_err = sum((abs(P_top[r][c] - P_float[r][c]) ** 2 for r in range(d) for c in range(d)), arb(0)).sqrt()
        pe_err = C.upper(sin_theta + round_err)
        projectors = (np.array(P_float),) + tuple(projs[1:])
        g_lo, g_hi = C.lower(gap_lo), C.upper(gap_hi)
        delta_lo = C.lower(delta)
    k = len(I)
    certs = (
        C.certificate("mu_1 (top cluster)", f"the {k} largest eigenvalues of V B^T lie in the enclosure and every "
                      "other eigenvalue lies below it (Gershgorin on Q^T A Q, Q exactly orthonormal)",
                      *encl[0], _ARB_PREC, f"{k} eigenvalue(s), dim E = {k}"),
        C.certificate("gap", "the distance between the top cluster and the next eigenvalue lies in the enclosure",
                      g_lo, g_hi, _ARB_PREC, f"cluster tolerance {tol:.1e}"),
        dict(C.certificate("||P_E - P_E(float)||_2", "the orthogonal projector onto the invariant subspace of the "
                           "top cluster is within this 2-norm distance of the returned P_E (Davis-Kahan sin-theta "
                           "bound ||M_JI||_F / delta plus rounding)", 0.0, pe_err, _ARB_PREC),
             text=f"certified: ||P_E - P_E(float)||_2 <= {pe_err:.2e} (dim E = {k}, Davis-Kahan, "
                  f"delta >= {delta_lo:.3g})"),
    )
    A = V * B.T
    return Spectrum(A=(A + A.T) / 2 if A != A.T else A,
                    B=B, mu=tuple(mus), multiplicity=tuple(len(c[0]) for c in comps), projectors=projectors,
                    gap=float(mus[0] - mus[1]), sigma_max=smax, sigma_min=smin, exact=False,
                    enclosures=tuple(encl), gap_enclosure=(g_lo, g_hi), P_E_error=pe_err, cluster_tol=tol,
                    certificates=certs)


def spectrum(B, V) -> Spectrum:
    """Validated spectral data of A = V B^T (see ``check_assumptions``).

    Exact input (SymPy matrices, integer arrays, lists of ints/rationals): exact eigenvalues and Sylvester
    projectors (SymPy), a gap of any size is resolved.  Floating-point input: eigenvalue clusters certified in
    Arb ball arithmetic (:func:`_spectrum_float`): eigenvalues whose enclosures overlap or lie within
    64 d eps |V|_F |B|_F are one cluster, E is the invariant subspace of the top cluster (its dimension the
    cluster size), and only a spectrum that is a single cluster is refused (with the numbers)."""
    Be, Ve = _exact(B, "B"), _exact(V, "V")
    if Be.rows < 2:
        raise ValueError(f"dimension d must be >= 2, got d = {Be.rows}")
    if Ve.shape != Be.shape:
        raise ValueError(f"V has shape {Ve.shape} but B has shape {Be.shape}")
    if _float_input(B) or _float_input(V):
        return _spectrum_float(_key(Be), _key(Ve))
    return _spectrum_cached(_key(Be), _key(Ve))


def check_assumptions(B, V) -> None:
    """Raise ValueError naming the violated assumption: shapes (square, equal, d >= 2), finite real
    entries, B invertible, V B^T symmetric, a spectral gap between the top eigenvalue (cluster, for
    floating-point input) and the rest (TypeError: wrong type)."""
    spectrum(B, V)


# ----------------------------------------------------------------------------------------------
# zero-temperature field (Laplace principle + Lagrange multiplier)
# ----------------------------------------------------------------------------------------------
@lru_cache(maxsize=None)
def _maximiser_rule() -> tuple[sp.Symbol, sp.Symbol, sp.Expr, sp.Expr]:
    """Lagrange: maximise <b, y> s.t. |y|^2 = 1 for a generic vector b in any dimension.

    Stationarity of <b,y> - lam(|y|^2 - 1)/2 in the component y_i gives y_i = b_i/lam (SymPy solve);
    the constraint then reads S/lam^2 = 1 with S = |b|^2, so lam = +-sqrt(S); the objective
    <b, y> = S/lam selects the maximiser.  Returns (b_i, S, y_i*, lam*)."""
    b_i, y_i, lam = sp.symbols("b_i y_i lambda", real=True)
    S = sp.Symbol("S", positive=True)
    (y_sol,) = sp.solve(sp.Eq(b_i - lam * y_i, 0), y_i)
    lams = sp.solve(sp.Eq(S / lam**2, 1), lam)
    best = [l for l in lams if all(sp.simplify(S / l - S / o).is_nonnegative for o in lams)]
    if len(best) != 1:
        raise RuntimeError("Lagrange step did not single out a maximiser")
    return b_i, S, y_sol.subs(lam, best[0]), best[0]


@lru_cache(maxsize=None)
def lagrange_maximiser(d: int) -> tuple[sp.Matrix, sp.Matrix, list[dict]]:
    """Full Lagrange system in dimension d: solve b - lam y = 0, |y|^2 = 1 for (y, lam) with SymPy and
    keep the solution with the largest objective <b, y>.  Returns (b symbols, y*(b), all solutions)."""
    if d < 2:
        raise ValueError(f"dimension d must be >= 2, got {d}")
    bs = sp.Matrix(sp.symbols(f"b1:{d + 1}", real=True))
    ys = sp.Matrix(sp.symbols(f"y1:{d + 1}", real=True))
    lam = sp.Symbol("lambda", real=True)
    eqs = [bs[i] - lam * ys[i] for i in range(d)] + [(ys.T * ys)[0] - 1]
    sols = sp.solve(eqs, list(ys) + [lam], dict=True)
    objs = [sp.simplify((bs.T * ys.subs(s))[0]) for s in sols]
    best = [s for s, o in zip(sols, objs) if all(sp.simplify(o - p).is_nonnegative for p in objs)]
    if len(best) != 1:
        raise RuntimeError("Lagrange step did not single out a maximiser")
    return bs, ys.subs(best[0]), sols


@lru_cache(maxsize=None)
def _maximiser_numpy() -> Callable:
    b_i, S, y_star, _ = _maximiser_rule()
    return sp.lambdify((b_i, S), y_star, "numpy")


def zero_temperature_field(x, B, V):
    """X_inf(x) = P_perp_x V y*(x) with y*(x) = B^T x/|B^T x| (Lagrange maximiser), P_perp_x = I - x x^T/|x|^2.

    numpy x of shape (d,) or (N, d) with numpy B, V -> numpy array of the same shape; SymPy in -> SymPy
    Matrix (column).  B invertible is required (|B^T x| > 0)."""
    if any(isinstance(m, sp.MatrixBase) for m in (x, B, V)):
        xs, Bs, Vs = (sp.Matrix(m) for m in (x, B, V))
        if xs.cols != 1:
            xs = xs.T
        b_i, S, y_star, _ = _maximiser_rule()
        bvec = Bs.T * xs
        Sval = (bvec.T * bvec)[0]
        y = bvec.applyfunc(lambda e: y_star.subs({b_i: e, S: Sval}))
        P = sp.eye(xs.rows) - xs * xs.T / (xs.T * xs)[0]
        return P * Vs * y
    try:
        X = np.asarray(x, dtype=float)
        Bn, Vn = np.asarray(B, dtype=float), np.asarray(V, dtype=float)
    except (TypeError, ValueError):
        raise TypeError("x, B and V must be real numeric arrays") from None
    if X.ndim not in (1, 2) or X.shape[-1] != Bn.shape[0] or Bn.shape != Vn.shape:
        raise ValueError(f"x must have shape (d,) or (N, d) matching B {Bn.shape}, got {X.shape}")
    if not (np.all(np.isfinite(X)) and np.all(np.isfinite(Bn)) and np.all(np.isfinite(Vn))):
        raise ValueError("non-finite entries (NaN or inf) in x, B or V")
    bvec = X @ Bn                                   # rows: B^T x
    S = np.sum(bvec * bvec, axis=-1, keepdims=True)
    if np.any(S == 0):
        raise ValueError("B^T x = 0: B singular or x = 0 (assumption: B invertible, x on the sphere)")
    y = _maximiser_numpy()(bvec, S)
    w = y @ Vn.T                                    # rows: V y*
    xx = np.sum(X * X, axis=-1, keepdims=True)
    return w - X * (np.sum(X * w, axis=-1, keepdims=True) / xx)


# ----------------------------------------------------------------------------------------------
# closed-form flow
# ----------------------------------------------------------------------------------------------
def _oja_residual(A: sp.Matrix) -> sp.Matrix:
    """dx/dtau - P_perp_x A x for x = y/|y| with y' = A y (the defining ODE of y = e^{tau A} x0)."""
    d = A.rows
    Y = sp.Matrix([sp.Function(f"y{i + 1}", real=True)(tau) for i in range(d)])
    x = Y / sp.sqrt((Y.T * Y)[0])
    dx_dtau = x.diff(tau).subs({Y[i].diff(tau): (A * Y)[i] for i in range(d)})
    return sp.simplify(dx_dtau - (sp.eye(d) - x * x.T) * A * x)


def _time_change_residual(Bm: sp.Matrix, V: sp.Matrix) -> sp.Matrix:
    """(P_perp_x A x)/(dt/dtau) - X_inf(x) with dt/dtau = |B^T x|, for a generic point x of the sphere."""
    d = Bm.rows
    xs = sp.Matrix(sp.symbols(f"x1:{d + 1}", real=True))
    bx = Bm.T * xs
    lhs = (sp.eye(d) - xs * xs.T / (xs.T * xs)[0]) * V * Bm.T * xs / sp.sqrt((bx.T * bx)[0])
    return sp.simplify(lhs - zero_temperature_field(xs, Bm, V))


@lru_cache(maxsize=None)
def diagonal_flow_residual(d: int) -> sp.Matrix:
    """Residual dx/dt - X_inf(x) of the explicit closed form x = e^{tau A} x0/|e^{tau A} x0| with
    dt/dtau = |B^T x| for symbolic diagonal B = diag(b_i) > 0, V = diag(v_i), generic x0 (zero iff it solves)."""
    bs = sp.symbols(f"b1:{d + 1}", positive=True)
    vs = sp.symbols(f"v1:{d + 1}", real=True)
    cs = sp.symbols(f"c1:{d + 1}", real=True)
    Bm, V = sp.diag(*bs), sp.diag(*vs)
    y = (tau * V * Bm.T).exp() * sp.Matrix(cs)
    x = y / sp.sqrt((y.T * y)[0])
    speed = sp.sqrt(((Bm.T * x).T * (Bm.T * x))[0])
    return sp.simplify(x.diff(tau) / speed - zero_temperature_field(x, Bm, V))


@lru_cache(maxsize=16)
def _flow_residual_cached(kB: tuple, kV: tuple) -> sp.Matrix:
    d = kB[0]
    Bm, V = sp.Matrix(d, d, list(kB[1])), sp.Matrix(d, d, list(kV[1]))
    return sp.Matrix.vstack(_oja_residual(V * Bm.T), _time_change_residual(Bm, V))


def flow_residual(B, V) -> sp.Matrix:
    """Exact residual of the closed-form flow for the given matrices and a generic initial point.

    Stacks (i) dx/dtau - P_perp_x A x for x = e^{tau A} x0/|e^{tau A} x0|, A = V B^T (e^{tau A} x0 entering
    through its defining ODE y' = A y; an explicit 3x3 exponential with cubic eigenvalues is too costly) and
    (ii) the time change: (dx/dtau)/(dt/dtau) - X_inf(x) with dt/dtau = |B^T x|.  Zero vector: it solves."""
    spectrum(B, V)
    return _flow_residual_cached(_key(_exact(B, "B")), _key(_exact(V, "V")))


@lru_cache(maxsize=None)
def _closed_form_lambdas(d: int, m: int) -> tuple[Callable, Callable]:
    """x(tau) = sum_k e^{tau(mu_k - mu_1)} w_k / |.| (w_k = P_k x0, so e^{tau A} x0 = e^{tau mu_1} sum_k ...)
    and dt/dtau = |B^T x(tau)|, lambdified to NumPy in (tau, mu_1..mu_m, w (m*d), B (d*d)); tau may be an array."""
    mus = sp.symbols(f"mu1:{m + 1}", real=True)
    W = sp.Matrix(m, d, sp.symbols(f"w1:{m * d + 1}", real=True))
    Bm = sp.Matrix(d, d, sp.symbols(f"B1:{d * d + 1}", real=True))
    y = sum((sp.exp(tau * (mus[k] - mus[0])) * W[k, :].T for k in range(m)), sp.zeros(d, 1))
    x = y / sp.sqrt((y.T * y)[0])
    speed = sp.sqrt(((Bm.T * x).T * (Bm.T * x))[0])
    args = (tau, *mus, *W, *Bm)
    return sp.lambdify(args, list(x), "numpy"), sp.lambdify(args, speed, "numpy")


_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(20)


def closed_form_flow(x0, B, V, times) -> np.ndarray:
    """The zero-temperature flow from x0 at times t >= 0: x(tau(t)) with the lambdified closed form and
    tau(t) the inverse of t(tau) = int_0^tau |B^T x(s)| ds (strictly increasing: B invertible), by Newton's
    method with composite 20-point Gauss-Legendre quadrature on panels of length <= 1/(4 max|mu|)
    (analytic integrand: quadrature error at round-off level).  Returns shape (len(times), d)."""
    s = spectrum(B, V)
    x0 = np.asarray(x0, dtype=float)
    ts = np.asarray(times, dtype=float)
    if x0.shape != (s.d,) or not np.all(np.isfinite(x0)) or not np.linalg.norm(x0) > 0:
        raise ValueError(f"x0 must be a finite non-zero vector of shape ({s.d},)")
    if ts.ndim != 1 or not np.all(np.isfinite(ts)) or np.any(ts < 0) or np.any(np.diff(ts) < 0):
        raise ValueError("times must be a finite non-decreasing 1-D array of t >= 0")
    xf, speed = _closed_form_lambdas(s.d, len(s.mu))
    mus = [float(m) for m in s.mu]
    blocks = [_to_numpy(P) @ x0 / np.linalg.norm(x0) for P in s.projectors]
    # reference exponent: the largest mu_k with P_k x0 != 0 (all used exponents <= 0: no overflow, and no
    # 0/0 when P_E x0 = 0); components with P_k x0 = 0 get exponent 0 and contribute exactly nothing
    live = [k for k, w in enumerate(blocks) if np.any(w != 0)]
    order = [live[0]] + [k for k in range(len(mus)) if k != live[0]]
    mus_eff = [mus[k] if k in live else mus[live[0]] for k in order]
    consts = (*mus_eff, *np.concatenate([blocks[k] for k in order]), *_to_numpy(s.B).ravel())
    h = 0.25 / max(abs(m) for m in mus)

    def g(u):
        return speed(u, *consts)

    def integral(a: float, b: float) -> float:
        n = max(1, int(np.ceil(min(abs(b - a) / h, 1e7))))
        if n >= 1e7:
            raise ValueError(f"the time change needs over 1e7 quadrature panels: max|mu| = {1 / (4 * h):.3g} "
                             "is too large for these times (rescale V B^T)")
        edges = np.linspace(a, b, n + 1)
        mid, half = (edges[1:] + edges[:-1]) / 2, (edges[1:] - edges[:-1]) / 2
        nodes = mid[:, None] + half[:, None] * _GL_NODES
        return float(np.sum(half[:, None] * _GL_WEIGHTS * g(nodes)))

    out = np.empty((len(ts), s.d))
    tau_k, t_k = 0.0, 0.0                                  # last converged (tau, t) pair
    for i, target in enumerate(ts):
        u = tau_k + (target - t_k) / g(tau_k)
        for _ in range(100):                              # Newton on t(u) - target; t'(u) = g(u) > 0
            step = (t_k + integral(tau_k, u) - target) / g(u)
            u -= step
            if abs(step) <= 1e-14 * (1 + abs(u)):
                break
        else:
            raise RuntimeError("time change inversion did not converge")
        tau_k, t_k = u, target
        out[i] = np.array(xf(u, *consts), dtype=float)
    return out


# ----------------------------------------------------------------------------------------------
# projection map and its stationarity
# ----------------------------------------------------------------------------------------------
def projection_map(B, V) -> Callable[[np.ndarray], np.ndarray]:
    """Pi(x) = P_E x / |P_E x|, E the dominant eigenspace of V B^T (P_E its orthogonal spectral projector).

    The returned map takes x of shape (d,) or (N, d); a point with P_E x = 0 (|P_E x| <= 1e-12 |x|) is
    outside the domain of Pi and raises ValueError."""
    P = spectrum(B, V).P_E

    def Pi(x: np.ndarray) -> np.ndarray:
        try:
            X = np.asarray(x, dtype=float)
        except (TypeError, ValueError):
            raise TypeError(f"x must be a real numeric array, got {type(x).__name__}") from None
        if X.ndim not in (1, 2) or X.shape[-1] != P.shape[0]:
            raise ValueError(f"x must have shape (d,) or (N, d) with d = {P.shape[0]}, got {X.shape}")
        if not np.all(np.isfinite(X)):
            raise ValueError("x has non-finite entries (NaN or inf)")
        Y = X @ P.T
        ny = np.linalg.norm(Y, axis=-1, keepdims=True)
        if np.any(ny <= _ZERO_RTOL * np.linalg.norm(X, axis=-1, keepdims=True)):
            raise ValueError("P_E x = 0: the point lies in the orthogonal complement of the dominant "
                             "eigenspace, outside the domain of Pi (moment assumption)")
        return Y / ny

    return Pi


@lru_cache(maxsize=None)
def _diag_limit(d: int, dim_E: int) -> tuple[sp.Matrix, sp.Matrix]:
    """tau -> oo limit of the closed form for A = diag(mu_1 (dim_E times), mu_1 - g_k ...), g_k > 0.

    x is invariant under y -> e^{-tau mu_1} y, so x = e^{tau(A - mu_1)} x0/|.|; with u = e^{-tau} -> 0+
    each entry is a power u^{g_k} and SymPy takes the limit.  Returns (generic x0, Pi(x0))."""
    cs = sp.symbols(f"c1:{d + 1}", real=True)
    mu1 = sp.Symbol("mu_1", real=True)
    u = sp.Symbol("u", positive=True)
    gs = sp.symbols(f"g1:{d - dim_E + 1}", positive=True)
    A = sp.diag(*([mu1] * dim_E + [mu1 - g for g in gs]))
    y = (tau * (A - mu1 * sp.eye(d))).exp() * sp.Matrix(cs)
    x = (y / sp.sqrt((y.T * y)[0])).subs(tau, -sp.log(u))
    return sp.Matrix(cs), x.applyfunc(lambda e: sp.limit(sp.powsimp(e), u, 0, "+"))


@lru_cache(maxsize=None)
def _diag_stationarity(d: int, dim_E: int) -> sp.Matrix:
    """X_inf(Pi x) for diagonal symbolic A (top eigenvalue of multiplicity dim_E) and symbolic diagonal B."""
    cs, Pi = _diag_limit(d, dim_E)
    bs = sp.symbols(f"b1:{d + 1}", positive=True)
    mu1 = sp.Symbol("mu_1", real=True)
    gs = sp.symbols(f"g1:{d - dim_E + 1}", positive=True)
    mus = [mu1] * dim_E + [mu1 - g for g in gs]
    V = sp.diag(*[mus[i] / bs[i] for i in range(d)])
    return sp.simplify(zero_temperature_field(Pi, sp.diag(*bs), V))


def stationarity_residual(B, V) -> sp.Matrix:
    """Exact X_inf(Pi x) for a generic symbolic x and the given matrices (zero vector: Pi x is a fixed point).

    Rational mu_1: Pi x = p/|p| with p the orthogonal projection of x on ker(A - mu_1) (SymPy nullspace).
    Irrational mu_1 (simple): p = v (v^T x) with v a column of adj(A - r I), r a root of the minimal
    polynomial m(r) of mu_1; the numerator |p|^2 |B^T p| X_inf(p) is reduced modulo m(r)."""
    s = spectrum(B, V)
    d, A = s.d, s.A
    Vx = A * s.B.T.inv()
    xs = sp.Matrix(sp.symbols(f"x1:{d + 1}", real=True))
    mu1 = _real_roots_desc(A)[0][0]
    if mu1.is_Rational:
        Pe = sp.Matrix.hstack(*(A - mu1 * sp.eye(d)).nullspace())
        p = Pe * (Pe.T * Pe).inv() * Pe.T * xs
        return sp.simplify(zero_temperature_field(p / sp.sqrt((p.T * p)[0]), s.B, Vx))
    if s.dim_E != 1:
        raise ValueError("exact stationarity for an irrational multiple top eigenvalue is not supported")
    r = sp.Symbol("r", real=True)
    m = sp.minimal_polynomial(mu1, r)
    adj = (A - r * sp.eye(d)).adjugate()
    col = next(j for j in range(d) if any(sp.rem(sp.expand(e), m, r) != 0 for e in adj[:, j]))
    v = adj[:, col]
    p = v * (v.T * xs)[0]
    bp = s.B.T * p
    scale = (p.T * p)[0] * sp.sqrt((bp.T * bp)[0])
    num = (zero_temperature_field(p, s.B, Vx) * scale).applyfunc(lambda e: sp.numer(sp.together(sp.expand(e))))
    return num.applyfunc(lambda e: sp.rem(sp.expand(e), m, r))


# ----------------------------------------------------------------------------------------------
# rates: Jacobian at the fixed points and Lyapunov functional
# ----------------------------------------------------------------------------------------------
@lru_cache(maxsize=16)
def _jacobian_lambda(kB: tuple, kA: tuple) -> Callable:
    """SymPy Jacobian of X_inf(x) (as a field on R^d) for B and A = V B^T (V = A B^{-T}), lambdified to mpmath."""
    d = kB[0]
    B, A = sp.Matrix(d, d, list(kB[1])), sp.Matrix(d, d, list(kA[1]))
    xs = sp.Matrix(sp.symbols(f"x1:{d + 1}", real=True))
    f = zero_temperature_field(xs, B, A * B.T.inv())
    return sp.lambdify(list(xs), f.jacobian(xs), "mpmath")


def _fixed_point(s: Spectrum, x_star) -> mp.matrix:
    P = s.projectors[0]
    if isinstance(P, np.ndarray):
        P = mp.matrix(P.tolist())
    if x_star is None:
        if s.dim_E != 1:
            raise ValueError(f"dim E = {s.dim_E} > 1: give the fixed point x_star in E")
        col = max(range(s.d), key=lambda j: mp.norm(P[:, j]))
        v = P[:, col]
        return v / mp.norm(v)
    xs = np.asarray(x_star, dtype=float)
    if xs.shape != (s.d,) or not np.all(np.isfinite(xs)):
        raise ValueError(f"x_star must be a finite vector of shape ({s.d},)")
    v = mp.matrix([mp.mpf(float(e)) for e in xs])
    if abs(mp.norm(v) - 1) > 1e-8:
        raise ValueError("x_star must lie on the unit sphere")
    if mp.norm(v - P * v) > 1e-8:
        raise ValueError("x_star is not in the dominant eigenspace E of V B^T (not an attracting fixed point)")
    return v


def jacobian_eigenvalues(B, V, x_star=None) -> np.ndarray:
    """Eigenvalues of the SymPy Jacobian of X_inf at the fixed point x_star in E, restricted to the
    tangent space T = x_star^perp (sorted descending; dim E - 1 zeros along E, the rest negative).
    Derived form: (mu_j - mu_1)/|B^T x_star| for the eigenvalues mu_j of V B^T on E^perp."""
    s = spectrum(B, V)
    kB, kA = _key(s.B), _key(s.A)
    with mp.workdps(_DPS):
        x = _fixed_point(s, x_star)
        J = _jacobian_lambda(kB, kA)(*x)
        # orthonormal basis of x^perp: eigenvectors of I - x x^T with eigenvalue 1
        w, U = mp.eigsy(mp.eye(s.d) - x * x.T)
        cols = [j for j in range(s.d) if w[j] > 0.5]
        Q = mp.matrix(s.d, len(cols))
        for a, j in enumerate(cols):
            Q[:, a] = U[:, j]
        M = Q.T * J * Q
        ev = [M[0, 0]] if M.rows == 1 else mp.eig(M, left=False, right=False)   # mp.eig mishandles 1x1
        vals = sorted((float(mp.re(e)) for e in ev), reverse=True)
    return np.array(vals)


def convergence_rate(B, V, x_star=None) -> float:
    """Exponential rate of x(t) -> Pi(x0) near the fixed point x_star in E: minus the largest non-zero
    tangent Jacobian eigenvalue, = gamma/|B^T x_star| (x_star may be omitted when dim E = 1)."""
    s = spectrum(B, V)
    ev = jacobian_eigenvalues(B, V, x_star)
    transversal = ev[s.dim_E - 1:]          # drop the dim E - 1 neutral directions along E
    return float(-transversal[0])


def lyapunov_rate(B, V) -> float:
    """Global rate from L(x) = |P_{E^perp} x|^2/|P_E x|^2: dL/dtau <= -2 gamma L and dtau/dt >= 1/sigma_max(B),
    so |x - Pi x| ~ sqrt(L) decays at least like e^{-gamma t/sigma_max(B)}.  Returns gamma/sigma_max(B)."""
    s = spectrum(B, V)
    return s.gap / s.sigma_max


def rate_comparison(B, V, x_star=None) -> dict:
    """Jacobian (local, exact) rate vs Lyapunov (global) bound: jacobian = gamma/|B^T x*| >= lyapunov =
    gamma/sigma_max(B), with equality iff |B^T x*| = sigma_max(B) (x* a top left singular vector of B)."""
    s = spectrum(B, V)
    jac = convergence_rate(B, V, x_star)
    lyap = lyapunov_rate(B, V)
    return {"jacobian": jac, "lyapunov": lyap, "ratio": lyap / jac,
            "agree": bool(abs(jac - lyap) <= 1e-12 * jac), "gap": s.gap, "sigma_max_B": s.sigma_max}


@lru_cache(maxsize=None)
def _diag_jacobian(d: int) -> tuple[sp.Matrix, sp.Matrix]:
    """Tangent Jacobian at x* = e_1 for A = diag(mu_1, ..., mu_d) and a general symbolic B (any V = A B^{-T})."""
    mus = sp.symbols(f"mu1:{d + 1}", real=True)
    Bm = sp.Matrix(d, d, sp.symbols(f"B1:{d * d + 1}", real=True))
    xs = sp.Matrix(sp.symbols(f"x1:{d + 1}", real=True))
    A = sp.diag(*mus)
    # X_inf written with A = V B^T (V = A B^{-T}); avoids inverting the symbolic B
    bvec = Bm.T * xs
    f = (sp.eye(d) - xs * xs.T / (xs.T * xs)[0]) * A * xs / sp.sqrt((bvec.T * bvec)[0])
    J = f.jacobian(xs).subs({xs[0]: 1, **{xs[i]: 0 for i in range(1, d)}})
    Jt = sp.simplify(J[1:, 1:])                     # tangent space at e_1: span(e_2..e_d)
    return Jt, sp.Matrix(list(Jt.eigenvals(multiple=True)))


@lru_cache(maxsize=None)
def _diag_lyapunov() -> tuple[sp.Expr, sp.Expr, sp.Expr]:
    """d = 3, A = diag(mu_1, mu_1 - gamma, mu_1 - gamma - delta): L = (z2^2 + z3^2)/z1^2 along dz/dtau = P_perp A z.
    Returns (L, dL/dtau, dL/dtau + 2 gamma L)."""
    z = sp.Matrix([sp.Symbol("z1", real=True, nonzero=True), *sp.symbols("z2:4", real=True)])
    mu1 = sp.Symbol("mu_1", real=True)
    gam, dlt = sp.symbols("gamma delta", positive=True)
    A = sp.diag(mu1, mu1 - gam, mu1 - gam - dlt)
    L = (z[1]**2 + z[2]**2) / z[0]**2
    field = (sp.eye(3) - z * z.T / (z.T * z)[0]) * A * z
    dL = sp.simplify((sp.Matrix([L]).jacobian(z) * field)[0])
    return L, dL, sp.factor(sp.simplify(dL + 2 * gam * L))


# ----------------------------------------------------------------------------------------------
# Theorem 1 bound
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ConcentrationBound:
    """b(beta, t) = K (sqrt(log(beta+1)/beta) e^{C1 t} + e^{-c t}); t_star solves db/dt = 0 (a minimum,
    positive iff c > C1 sqrt(log(beta+1)/beta); otherwise the minimum over t >= 0 is at t = 0); b_min = b(t_star)."""

    b: sp.Expr
    t_star: sp.Expr
    b_min: sp.Expr


@lru_cache(maxsize=None)
def concentration_bound() -> ConcentrationBound:
    """Derive t*(beta) = argmin_t b(beta, t) (SymPy solve of db/dt = 0) and the minimal value."""
    b = K * (sp.sqrt(sp.log(beta + 1) / beta) * sp.exp(C1 * t) + sp.exp(-c * t))
    sols = sp.solve(sp.diff(b, t), t)
    real = [s for s in sols if s.is_real is not False]
    if len(real) != 1:
        raise RuntimeError(f"expected one real critical point, got {sols}")
    if not sp.simplify(sp.diff(b, t, 2).subs(t, real[0])).is_positive:
        raise RuntimeError("critical point is not a minimum")
    t_star = sp.expand_log(real[0], force=True)
    return ConcentrationBound(b=b, t_star=t_star, b_min=sp.simplify(b.subs(t, real[0])))


# ----------------------------------------------------------------------------------------------
# derivation for `attnverify derive meanfield`
# ----------------------------------------------------------------------------------------------
def derivation() -> list[Step]:
    """The Paper B derivation, every result computed here by SymPy (cached; a fresh list each call)."""
    return list(_derivation())


@lru_cache(maxsize=None)
def _rate_ratio_2d() -> tuple[sp.Expr, sp.Expr, sp.Expr]:
    """B = diag(b1, b2), A = diag(mu_1, mu_1 - gamma), x* = e_1: (Jacobian rate, Lyapunov rate, their ratio)."""
    b1, b2 = sp.symbols("b1 b2", positive=True)
    gam = sp.Symbol("gamma", positive=True)
    mu1 = sp.Symbol("mu1", real=True)
    _, ev = _diag_jacobian(2)
    jac = -ev[0].subs({sp.Symbol("mu2", real=True): mu1 - gam, sp.Symbol("B1", real=True): b1,
                       sp.Symbol("B2", real=True): 0, sp.Symbol("B3", real=True): 0, sp.Symbol("B4", real=True): b2})
    sigma_max = sp.Max(*(sp.sqrt(e) for e in (sp.diag(b1, b2) * sp.diag(b1, b2).T).eigenvals()))
    lyap = gam / sigma_max
    return sp.simplify(jac), lyap, sp.simplify(lyap / jac)


@lru_cache(maxsize=None)
def _derivation() -> tuple[Step, ...]:
    b_i, S, y_star, lam_star = _maximiser_rule()
    bs3, y3, sols3 = lagrange_maximiser(3)
    steps = [
        Step("Laplace principle: the softmax average concentrates at the maximiser of y -> <B^T x, y> on the "
             "sphere. Lagrange stationarity b_i = lambda y_i and |y|^2 = 1 give lambda = +-sqrt(S), S = |b|^2; "
             "the larger objective S/lambda picks the maximiser.",
             y_star, "sympy.solve of the Lagrange system; objective comparison",
             r"y^*_i"),
        Step("Full Lagrange system in d = 3 (both critical points, maximiser kept).",
             y3, f"sympy.solve found {len(sols3)} critical points", r"y^*(b)"),
    ]
    phi = sp.Symbol("phi", real=True)
    b1, b2 = sp.symbols("b1 b2", positive=True)
    v1, v2 = sp.symbols("v1 v2", real=True)
    x_phi = sp.Matrix([sp.cos(phi), sp.sin(phi)])
    field_2d = sp.simplify(zero_temperature_field(x_phi, sp.diag(b1, b2), sp.diag(v1, v2)))
    steps.append(Step("Zero-temperature field (beta -> oo): X_inf(x) = P_perp_x V B^T x/|B^T x| (the maximiser with "
                      "b = B^T x); shown on the circle x = (cos phi, sin phi) for B = diag(b1, b2), V = diag(v1, v2).",
                      field_2d, "substitution of the Lagrange maximiser, sympy.simplify", r"X_\infty(x)"))
    a = sp.Matrix(3, 3, lambda i, j: sp.Symbol(f"a_{i + 1}{j + 1}", real=True))
    steps.append(Step("Oja identity for a generic real 3x3 matrix A: x = y/|y| with y' = A y (y = e^(tau A) x0) "
                      "satisfies dx/dtau = P_perp_x A x; residual", _oja_residual(a),
                      "sympy.simplify after substituting y' = A y", r"r_{\rm Oja}"))
    for d in (2, 3):
        steps.append(Step(f"Closed-form flow x = e^(tau A) x0/|e^(tau A) x0|, A = V B^T, dt/dtau = |B^T x| solves "
                          f"dx/dt = X_inf(x) for symbolic diagonal B, V (d = {d}): residual",
                          diagonal_flow_residual(d), "sympy.simplify of dx/dtau / (dt/dtau) - X_inf(x)",
                          rf"r_{{{d}}}"))
    for d, dim_E in ((3, 1), (3, 2)):
        c0, lim = _diag_limit(d, dim_E)
        steps.append(Step(f"Projection map: tau -> oo limit of the closed form for diagonal A with top eigenvalue "
                          f"of multiplicity {dim_E} (gaps g_k > 0): Pi(x0) = P_E x0/|P_E x0|.",
                          lim, "sympy.limit (u = e^-tau -> 0+)", rf"\Pi_{{\dim E={dim_E}}}(x_0)"))
        steps.append(Step(f"Stationarity: X_inf(Pi x) = 0 (dim E = {dim_E}).", _diag_stationarity(d, dim_E),
                          "sympy.simplify", r"X_\infty(\Pi x)"))
    Jt, ev = _diag_jacobian(3)
    steps.append(Step("Linearisation at x* = e_1 (A = diag(mu_i), general B): tangent Jacobian eigenvalues "
                      "(mu_j - mu_1)/|B^T x*|; the rate is gamma/|B^T x*|.", ev,
                      "sympy jacobian at e_1, restricted to span(e_2, e_3), eigenvals", r"\lambda_j"))
    L, dL, excess = _diag_lyapunov()
    steps.append(Step("Lyapunov functional L = |P_perp_E z|^2/|P_E z|^2 along dz/dtau = P_perp A z.",
                      sp.Eq(sp.Symbol("dL/dtau"), dL), "sympy derivative along the field", r"\dot L"))
    steps.append(Step("dL/dtau + 2 gamma L <= 0 (delta = mu_2 - mu_3 >= 0), so L decays at rate 2 gamma in tau; "
                      "with dtau/dt = 1/|B^T x| >= 1/sigma_max(B) the distance decays at least at gamma/sigma_max(B), "
                      "a bound that equals the Jacobian rate gamma/|B^T x*| only when |B^T x*| = sigma_max(B).",
                      excess, f"sympy.factor; nonpositive: {bool(excess.is_nonpositive)}",
                      r"\dot L + 2\gamma L"))
    jac, lyap, ratio = _rate_ratio_2d()
    steps.append(Step("Comparison for B = diag(b1, b2), A = diag(mu_1, mu_1 - gamma), x* = e_1: Lyapunov rate / "
                      "Jacobian rate = |B^T x*|/sigma_max(B) <= 1, equal to 1 iff b1 >= b2.",
                      sp.Eq(sp.Symbol("r_L/r_J"), ratio),
                      f"Jacobian rate {sp.sstr(jac)} from the SymPy Jacobian, Lyapunov rate {sp.sstr(lyap)}",
                      r"r_{\rm Lyap}/r_{\rm Jac}"))
    cb = concentration_bound()
    steps += [
        Step("Theorem 1 bound.", cb.b, "model statement", r"b(\beta,t)"),
        Step("Optimal time: db/dt = 0.", cb.t_star, "sympy.solve (second derivative > 0)",
             r"t^*(\beta)"),
        Step("Minimal value of the bound.", cb.b_min, "sympy.simplify of b(beta, t*)", r"b_{\min}(\beta)"),
        Step("Metastability: t* grows like log(beta).", sp.limit(cb.t_star / sp.log(beta), beta, sp.oo),
             "sympy.limit of t*/log(beta) as beta -> oo", r"\lim t^*/\log\beta"),
    ]
    return tuple(steps)


# ----------------------------------------------------------------------------------------------
# Theorem 1 constants: the rate s(beta), the growth constant C1; Conjecture 1: the cluster field of V
# ----------------------------------------------------------------------------------------------
@lru_cache(maxsize=None)
def _rate_lambda() -> Callable:
    """s(beta) = b(beta, 0)/K - 1, read off the Theorem-1 bound of ``concentration_bound`` (the coefficient of
    K e^{C1 t}), lambdified to NumPy."""
    s = sp.simplify(concentration_bound().b.subs(t, 0) / K - 1)
    return sp.lambdify(beta, s, "numpy")


def theorem1_rate(beta) -> np.ndarray:
    """The Theorem-1 rate s(beta) = sqrt(log(beta + 1)/beta) at beta > 0 (float or array; float array out)."""
    b = np.asarray(beta, dtype=float)
    if not np.all(np.isfinite(b)) or np.any(b <= 0):
        raise ValueError("beta must be finite and > 0")
    return np.asarray(_rate_lambda()(b), dtype=float)


@lru_cache(maxsize=16)
def _log_norm_jacobian(kB: tuple, kV: tuple) -> Callable:
    """SymPy Jacobian J(x) of X_inf (its 0-homogeneous extension to R^d), lambdified to NumPy."""
    d = kB[0]
    Bm, Vm = sp.Matrix(d, d, list(kB[1])), sp.Matrix(d, d, list(kV[1]))
    xs = sp.Matrix(sp.symbols(f"x1:{d + 1}", real=True))
    return sp.lambdify(list(xs), zero_temperature_field(xs, Bm, Vm).jacobian(xs), "numpy")


def _tangent_log_norm(Jf: Callable, x: np.ndarray) -> float:
    """lambda_max of the symmetric part of J(x) restricted to the tangent space x^perp."""
    x = np.asarray(x, dtype=float)
    x = x / np.linalg.norm(x)
    J = np.array(Jf(*x), dtype=float)
    _, _, Vt = np.linalg.svd(x[None, :])
    T = Vt[1:].T                                   # orthonormal basis of x^perp
    M = T.T @ (J + J.T) @ T / 2
    return float(np.linalg.eigvalsh(M)[-1])


def growth_constant(B, V) -> dict:
    """C1 of Theorem 1 as the Groenwall argument needs it: the one-sided Lipschitz constant (logarithmic norm)
    of the zero-temperature field on the sphere,

        C1 = sup_{x in S^{d-1}} max_{v perp x, |v| = 1} <v, DX_inf(x) v>,

    (the covariant derivative of a tangent field on the embedded sphere is P_perp DX_inf, and <v, P_perp w> =
    <v, w> for tangent v), so that two zero-temperature trajectories separate at most like e^{C1 t} in geodesic
    distance and d/dt W2(mu^beta_t, mu^inf_t) <= eps(beta, t) + C1 W2(...).  DX_inf is the SymPy Jacobian of
    ``zero_temperature_field`` (lambdified).  d = 2: lambda(phi) = v^T J v on x = (cos phi, sin phi),
    v = (-sin phi, cos phi), on a 721-point grid, refined by bounded Brent around the best grid points
    (agreement to ~1e-12).  d >= 3: Nelder-Mead from the best of 400 fixed pseudo-random points and the
    eigenvectors of V B^T: a lower estimate of the sup, not certified.  Returns {"C1", "x_star", "method"}."""
    from scipy.optimize import minimize, minimize_scalar

    s = spectrum(B, V)
    Jf = _log_norm_jacobian(_key(s.B), _key(_exact(V, "V")))
    if s.d == 2:
        grid = np.linspace(0.0, 2 * np.pi, 721)
        h = grid[1] - grid[0]
        vals = np.array([_tangent_log_norm(Jf, np.array([np.cos(p), np.sin(p)])) for p in grid])
        best, arg = float(vals.max()), float(grid[int(np.argmax(vals))])
        for k in np.argsort(vals)[::-1][:6]:
            res = minimize_scalar(lambda p: -_tangent_log_norm(Jf, np.array([np.cos(p), np.sin(p)])),
                                  bounds=(grid[k] - h, grid[k] + h), method="bounded", options={"xatol": 1e-12})
            if -res.fun > best:
                best, arg = -float(res.fun), float(res.x)
        return {"C1": best, "x_star": [float(np.cos(arg)), float(np.sin(arg))],
                "method": "v^T DX_inf v on S^1 (SymPy Jacobian), grid of 721 angles refined by bounded Brent"}
    rng = np.random.default_rng(0)
    starts = list(rng.standard_normal((400, s.d))) + list(np.linalg.eigh(_to_numpy(s.A))[1].T)
    scored = sorted(((_tangent_log_norm(Jf, x), x) for x in starts), key=lambda z: -z[0])[:3]
    best, arg = scored[0]
    for _, x0 in scored:                     # a smooth maximum: x to 1e-8 gives the value to ~1e-15
        res = minimize(lambda z: -_tangent_log_norm(Jf, z), x0, method="Nelder-Mead",
                       options={"xatol": 1e-8, "fatol": 1e-15, "maxiter": 400 * s.d})
        if -res.fun > best:
            best, arg = -float(res.fun), res.x
    arg = np.asarray(arg, dtype=float) / np.linalg.norm(arg)
    return {"C1": float(best), "x_star": arg.tolist(),
            "method": "lambda_max of the tangent symmetric part of the SymPy Jacobian, Nelder-Mead multistart "
                      "(estimate of the sup, not certified for d >= 3)"}


def value_eigenspace(V) -> np.ndarray:
    """Orthogonal projector on the dominant eigenspace E_V of a symmetric V (exact spectral data, as for V B^T;
    ValueError without a gap or for non-symmetric V)."""
    Ve = _exact(V, "V")
    if Ve.rows < 2:
        raise ValueError(f"dimension d must be >= 2, got d = {Ve.rows}")
    return _to_numpy(_spectrum_cached(_key(sp.eye(Ve.rows)), _key(Ve)).projectors[0])


@lru_cache(maxsize=None)
def _cluster_jacobian(d: int) -> tuple[Callable, sp.Matrix]:
    """Cluster field g(u) = P_perp_u V u (a cluster at u whose softmax weights are uniform moves by the value
    average V u, projected): its SymPy Jacobian for a symbolic V, lambdified to NumPy in (u, V)."""
    us = sp.Matrix(sp.symbols(f"u1:{d + 1}", real=True))
    Vs = sp.Matrix(d, d, sp.symbols(f"V1:{d * d + 1}", real=True))
    g = (sp.eye(d) - us * us.T / (us.T * us)[0]) * Vs * us
    J = g.jacobian(us)
    return sp.lambdify((*us, *Vs), J, "numpy"), J


def terminal_rates(V) -> dict:
    """Derived rates of the terminal phase (Conjecture 1) from the cluster field g(u) = P_perp_u V u.

    A tight cluster of tokens at u (width << beta^{-1/2}) sees uniform softmax weights within itself and
    exponentially small weights on the antipodal cluster, so its centre moves by g(u): fixed points are the
    eigenvectors of V, and the tangent Jacobian of g at a unit eigenvector u with eigenvalue v is V - v on u^perp
    (SymPy Jacobian): at the dominant eigenvector u_V the axis of the clusters approaches E_V at the rate
    ``axis_rate`` = v_1 - v_2 (gap of V); at an eigenvector with eigenvalue v < v_1 it escapes at
    ``escape_rate(v)`` = v_1 - v.  Within a cluster at u_V a token x moves by P_perp_x V u_V, whose derivative in x
    at u_V is -<u_V, V u_V> on the tangent space: the cluster contracts at ``collapse_rate`` = v_1."""
    Pv = value_eigenspace(V)
    Vn = np.asarray(V, dtype=float)
    d = Vn.shape[0]
    dim = int(round(np.trace(Pv)))
    u = Pv[:, int(np.argmax(np.linalg.norm(Pv, axis=0)))]          # a unit vector of E_V (largest column of P_V)
    u = u / np.linalg.norm(u)
    Jf, _ = _cluster_jacobian(d)
    J = np.array(Jf(*u, *Vn.ravel()), dtype=float)
    _, _, Vt = np.linalg.svd(u[None, :])
    T = Vt[1:].T
    ev = np.sort(np.linalg.eigvals(T.T @ J @ T).real)[::-1]
    transversal = ev[dim - 1:]
    v1 = float(u @ Vn @ u)
    return {"axis_rate": float(-transversal[0]), "collapse_rate": v1, "dim_E_V": dim,
            "tangent_eigenvalues": ev.tolist(), "top_eigenvalue": v1}


def escape_rate(V, u) -> float:
    """Largest tangent eigenvalue of the cluster-field Jacobian at the unit vector u (an eigenvector of V):
    the rate at which a cluster at u leaves it (<= 0: u attracts)."""
    Vn = np.asarray(V, dtype=float)
    u = np.asarray(u, dtype=float)
    u = u / np.linalg.norm(u)
    Jf, _ = _cluster_jacobian(Vn.shape[0])
    J = np.array(Jf(*u, *Vn.ravel()), dtype=float)
    _, _, Vt = np.linalg.svd(u[None, :])
    T = Vt[1:].T
    return float(np.max(np.linalg.eigvals(T.T @ J @ T).real))
