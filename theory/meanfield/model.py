"""Paper B model: the assumptions on (B, V) and the spectral data of A = V B^T.

Model: tokens on S^{d-1}, B = Q^T K, value matrix V, A = V B^T (assumed symmetric, spectral gap
gamma = mu_1 - mu_2 > 0 between the largest eigenvalue mu_1 and the next distinct one), B invertible.

Spectral data (:func:`spectrum`): exact input (SymPy/rational matrices) keeps exact arithmetic; floating-point
input (any d) gets eigenvalue clusters, the invariant subspace of the top cluster and the gap certified in
FLINT/Arb ball arithmetic (:mod:`attnverify.theory.certified`), with certificates.  E is the invariant subspace of
the top cluster, so a double top eigenvalue split by rounding gives dim E = 2.  Non-symmetric V B^T is rejected
(ValueError), it is not handled.
"""
from __future__ import annotations

from dataclasses import dataclass

import flint
import mpmath as mp
import numpy as np
import sympy as sp
from flint import arb, arb_mat

import attnverify.theory.certified as C
import attnverify.theory.certified_spectra as CS
from attnverify.theory.closed_forms import derived

_SYM_RTOL = 1e-12     # |A - A^T| <= 1e-12 |A| counts as symmetric for floating-point input
_GAP_RTOL = 1e-12     # a gap below 1e-12 |A| cannot be resolved in double precision
_COND_MIN = 1e-12     # sigma_min(B)/sigma_max(B) below this: B singular to double precision
_DPS = 30             # working precision of the mpmath evaluations


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
    attnverify.theory.certified dicts; ``cluster_tol`` is the tolerance below which eigenvalues are not distinguished."""

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


def _exact_spectrum(kB: tuple, kV: tuple) -> Spectrum:
    """The spectral data of exact (rational) input, keyed by :func:`_key` (see :func:`spectrum`)."""
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
    """Enclosures of the distinct eigenvalues of the exact A and of the gap
    (:func:`attnverify.theory.certified_spectra.exact_eigenvalue_enclosures`), and their certificates."""
    encl, gap_encl = CS.exact_eigenvalue_enclosures(A)
    lib = C.EXACT_LIBRARY
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


def _float_spectrum(kB: tuple, kV: tuple) -> Spectrum:
    """Clusters, their invariant subspaces and the gap for floating-point input, certified in Arb.

    A = V B^T is formed in ball arithmetic (128 bits plus 2 d guard bits) and symmetrised; U = NumPy's eigh
    eigenvectors.  :func:`attnverify.theory.certified_spectra.eigenvalue_clusters` then encloses the clusters (Gershgorin
    on Q^T A Q with Q the exact Gram-Schmidt of U; intervals within ``cluster_tol`` = 64 d eps |V|_F |B|_F, the
    rounding of float input, are one cluster) and bounds the distance of P_E ~ Q_I Q_I^T from the projector onto
    the top cluster's invariant subspace (Davis-Kahan sin-theta theorem).
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
        U = U[:, np.argsort(w)[::-1]]
        tol = _CLUSTER_ULPS * d * float(np.finfo(float).eps) * _fro(Vn) * _fro(Bn)
        cl = CS.eigenvalue_clusters(As, U, tol)
    if len(cl.members) < 2:
        raise ValueError(f"V B^T has no spectral gap that can be resolved: all {d} eigenvalues lie in one cluster "
                         f"{C.interval_text(*cl.enclosures[0], 17)} (eigenvalues closer than {tol:.1e} = 64 d eps "
                         "|V|_F |B|_F are not distinguished for floating-point input)")
    if cl.projector_error is None:
        raise ValueError(f"V B^T: the gap between the top eigenvalue cluster and the rest is not resolvable "
                         f"(gap in [{cl.gap[0]:.3g}, {cl.gap[1]:.3g}], cluster tolerance {tol:.1e})")
    k, pe_err = len(cl.members[0]), cl.projector_error
    certs = (
        C.certificate("mu_1 (top cluster)", f"the {k} largest eigenvalues of V B^T lie in the enclosure and every "
                      "other eigenvalue lies below it (Gershgorin on Q^T A Q, Q exactly orthonormal)",
                      *cl.enclosures[0], _ARB_PREC, f"{k} eigenvalue(s), dim E = {k}"),
        C.certificate("gap", "the distance between the top cluster and the next eigenvalue lies in the enclosure",
                      *cl.gap, _ARB_PREC, f"cluster tolerance {tol:.1e}"),
        dict(C.certificate("||P_E - P_E(float)||_2", "the orthogonal projector onto the invariant subspace of the "
                           "top cluster is within this 2-norm distance of the returned P_E (Davis-Kahan sin-theta "
                           "bound ||M_JI||_F / delta plus rounding)", 0.0, pe_err, _ARB_PREC),
             text=f"certified: ||P_E - P_E(float)||_2 <= {pe_err:.2e} (dim E = {k}, Davis-Kahan, "
                  f"delta >= {cl.separation:.3g})"),
    )
    mus = tuple(mp.mpf(v) for v in cl.values)
    A = V * B.T
    return Spectrum(A=(A + A.T) / 2 if A != A.T else A,
                    B=B, mu=mus, multiplicity=tuple(len(m) for m in cl.members), projectors=cl.projectors,
                    gap=float(mus[0] - mus[1]), sigma_max=smax, sigma_min=smin, exact=False,
                    enclosures=cl.enclosures, gap_enclosure=cl.gap, P_E_error=pe_err, cluster_tol=tol,
                    certificates=certs)


class ModelForms:
    """The model's closed forms, a part of :class:`attnverify.theory.meanfield.MeanFieldTheory`: the spectral data
    of A = V B^T and the assumptions (memoised per theory object, keyed by the exact matrices)."""

    @derived
    def _spectrum_of(self, kB: tuple, kV: tuple, floating: bool) -> Spectrum:
        return _float_spectrum(kB, kV) if floating else _exact_spectrum(kB, kV)

    def spectrum(self, B, V) -> Spectrum:
        """Validated spectral data of A = V B^T (see ``check_assumptions``).

        Exact input (SymPy matrices, integer arrays, lists of ints/rationals): exact eigenvalues and Sylvester
        projectors (SymPy), a gap of any size is resolved.  Floating-point input: eigenvalue clusters certified in
        Arb ball arithmetic (:func:`_float_spectrum`): eigenvalues whose enclosures overlap or lie within
        64 d eps |V|_F |B|_F are one cluster, E is the invariant subspace of the top cluster (its dimension the
        cluster size), and only a spectrum that is a single cluster is refused (with the numbers)."""
        Be, Ve = _exact(B, "B"), _exact(V, "V")
        if Be.rows < 2:
            raise ValueError(f"dimension d must be >= 2, got d = {Be.rows}")
        if Ve.shape != Be.shape:
            raise ValueError(f"V has shape {Ve.shape} but B has shape {Be.shape}")
        return self._spectrum_of(_key(Be), _key(Ve), _float_input(B) or _float_input(V))

    def check_assumptions(self, B, V) -> None:
        """Raise ValueError naming the violated assumption: shapes (square, equal, d >= 2), finite real
        entries, B invertible, V B^T symmetric, a spectral gap between the top eigenvalue (cluster, for
        floating-point input) and the rest (TypeError: wrong type)."""
        self.spectrum(B, V)
