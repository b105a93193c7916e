"""Paper B model options shared by its checks (THEORY.md, Paper B, "Model").

The defaults (d = 2) give B = QᵀK = diag(1, 3) and V Bᵀ = diag(2, 3), whose dominant eigenspace is
span(e₂), while V = diag(2, 1) has dominant eigenspace span(e₁): the zero-temperature limit and the
finite-β terminal phase (Conjecture 1) then point to different places.
"""
from __future__ import annotations

import numpy as np

from checks.framework import Param

MODEL_PARAMS = (
    Param("d", int, 2, "dimension d (tokens on the sphere S^{d-1})", low=2),
    Param("Q", "matrix", np.eye(2), "query matrix Q (d x d)"),
    Param("K", "matrix", np.diag([1.0, 3.0]), "key matrix K (d x d)"),
    Param("V", "matrix", np.diag([2.0, 1.0]), "value matrix V (d x d)"),
)

# The paper profile's particle checks use the truncated kernel: at beta = 1000 and 5000 it is 2-3x faster,
# and W2 moves by 3e-6, less than halving rtol moves it (5e-6), so no verdict changes.
KERNEL_PARAM = Param("kernel", str, "dense", "attention kernel: 'dense' (all N^2 pairs) or 'truncated' (pairs "
                     "within log(N/1e-12) of the row maximum; field error <= 2e-12 max|Vx|)",
                     choices=("dense", "truncated"))


def model_matrices(p: dict) -> tuple[np.ndarray, np.ndarray]:
    """(B, V) with B = QᵀK, as float arrays."""
    return np.asarray(p["Q"], float).T @ np.asarray(p["K"], float), np.asarray(p["V"], float)


def validate_model(p: dict) -> None:
    """Shapes d x d, then the paper's assumptions on (B, V) (theory.mean_field.check_assumptions)."""
    from theory.mean_field import check_assumptions

    for name in ("Q", "K", "V"):
        if np.shape(p[name]) != (p["d"], p["d"]):
            raise ValueError(f"{name} has shape {np.shape(p[name])}, expected ({p['d']}, {p['d']}) for d = {p['d']}")
    check_assumptions(*model_matrices(p))


def validate_betas(betas, minimum: int) -> np.ndarray:
    """The beta sweep as a float array: at least ``minimum`` strictly increasing values (ValueError otherwise)."""
    b = np.array(betas, dtype=float)
    if len(b) < minimum or np.any(np.diff(b) <= 0):
        words = {2: "two", 3: "three", 4: "four"}
        raise ValueError(f"betas must be at least {words.get(minimum, minimum)} increasing values")
    return b
