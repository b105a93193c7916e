"""Random Paper B models at d = 3 shared by the meanfield tests (tests/meanfield is on the test path)."""
from __future__ import annotations

import numpy as np


def rotation(seed: int, d: int = 3) -> np.ndarray:
    """A random rotation of R^d (QR of a Gaussian matrix, signs fixed so that it is Haar-distributed)."""
    q, r = np.linalg.qr(np.random.default_rng(seed).standard_normal((d, d)))
    return q * np.sign(np.diag(r))


def model_d3(seed: int, dim_E: int) -> dict:
    """Random non-diagonal Q, K and V = S B^{-T} with S = R diag(...) R^T symmetric (V B^T = S)."""
    rng = np.random.default_rng(seed)
    Q = rng.standard_normal((3, 3)) + 2 * np.eye(3)
    K = rng.standard_normal((3, 3)) + 2 * np.eye(3)
    B = Q.T @ K
    R = rotation(100 + seed)
    S = R @ np.diag([2.0, 2.0, 1.0] if dim_E == 2 else [2.0, 1.3, 0.7]) @ R.T
    return {"d": 3, "Q": Q, "K": K, "V": S @ np.linalg.inv(B.T)}
