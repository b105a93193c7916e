"""Paper B, Conjecture 1: the terminal phase at finite beta, read from the cluster field g(u) = P_perp_u V u.

A tight cluster of tokens at u (width << beta^{-1/2}) sees uniform softmax weights within itself, so its centre
moves by g(u): its fixed points are the eigenvectors of V, and the dominant eigenspace E_V of V attracts.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Callable

import numpy as np
import sympy as sp

from attnverify.theory.mean_field.model import _exact, _key, _spectrum_cached, _to_numpy


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
