"""The Euclidean gradient in q of the sampled energy ||f_q(X)||^2, derived by hand, and its tangent projection.

Derivation. With b_i = A x_i, the scores are s_i = kappa <q, b_i> (kappa = beta / tau), the weights
a_i = exp(s_i) / sum_l exp(s_l) (the log-space shift by max_j s_j cancels in the ratio, so it does not enter the
derivative), and f = sum_i a_i V x_i. Differentiating the softmax,

    d a_i / d q = kappa a_i (b_i - sum_j a_j b_j),

so, with c_i = <f, V x_i> - ||f||^2 (= <V^T f, x_i> - ||f||^2, no V x_i needed),

    grad_q ||f||^2 = 2 sum_i <f, V x_i> d a_i / d q = 2 kappa sum_i a_i (<f, V x_i> - ||f||^2) b_i
                   = 2 kappa A G,   G = sum_i a_i c_i x_i

(the b-bar term: sum_i a_i <f, V x_i> sum_j a_j b_j = ||f||^2 sum_j a_j b_j). This holds for any q in R^d.

Rao-Blackwellised form (the reduced estimators). In the reduced coordinates (first k + 1 axes, A and V in block
form) write x_i = (x_i^S, z_i^R) and f = (f^S, v_perp F^R), F^R = sum_j a_j z_j^R. The weights depend on x^S only;
z^R has mean zero, is independent across tokens, and E[|z_i^R|^2 | x^S] = W_i. Then
E[<F^R, z_i^R> | x^S] = a_i W_i and E[|F^R|^2 | x^S] = sum_j a_j^2 W_j, so

    E[c_i | x^S] = <f^S, V_S x_i^S> - |f^S|^2 + v_perp^2 (a_i W_i - sum_j a_j^2 W_j),

and, c_i entering G linearly with S-measurable coefficients, E[grad_S | x^S] = 2 kappa A_S sum_i a_i E[c_i | x^S]
x_i^S: the exact conditional expectation of the gradient's first k + 1 coordinates (all that the overlaps' drift
needs, since q lies in span(e_1..e_{k+1})).

Tangent part: (I - q q^T) grad for a unit q; its components along e_1..e_k are the drift of the overlaps.
"""
from __future__ import annotations

import numpy as np

from attnverify.numerics.engine.attention import attention_output, require_finite
from attnverify.numerics.engine.spec import MixtureSpec


def gradient_from_weights(X: np.ndarray, a: np.ndarray, f: np.ndarray, A: np.ndarray, V: np.ndarray, kappa: float,
                          rest: np.ndarray | None = None, v_perp: float = 0.0) -> np.ndarray:
    """grad_q ||f_q(X)||^2 (module docstring) for a grid of r queries at once, shape (n, r, w).

    X (n, L, w) tokens; a (n, r, L) their weights; f (n, r, w) the outputs V F in the same coordinates; A, V (w, w);
    kappa = beta / tau. With ``rest`` (n, L) the conditional energies W_i, the Rao-Blackwellised gradient
    (its conditional expectation given X) with the complement scalar ``v_perp``."""
    ff = np.einsum("nrw,nrw->nr", f, f)
    c = np.einsum("nlw,nrw->nrl", X, f @ V)                 # <V^T f_r, x_i> = <f_r, V x_i>, (n, r, L)
    c -= ff[:, :, None]
    if rest is not None:
        aw = a * rest[:, None, :]                            # a_i W_i
        c += (v_perp * v_perp) * (aw - np.einsum("nrl,nrl->nr", a, aw)[:, :, None])
    c *= a
    G = c @ X                                                # sum_i a_i c_i x_i, (n, r, w)
    return require_finite((2.0 * kappa) * (G @ A.T), "the gradient of ||f_q(X)||^2")


def energy_gradient(X: np.ndarray, q: np.ndarray, spec: MixtureSpec) -> tuple[np.ndarray, np.ndarray]:
    """For sequences X (n, L, d) and queries q (d,) or (n, d) (any q in R^d): the sampled energy ||f_q(X)||^2 (n,)
    and its Euclidean gradient in q (n, d), in full coordinates with the full matrices A and V."""
    a, f = attention_output(X, q, spec)
    grad = gradient_from_weights(np.asarray(X, dtype=float), a[:, None, :], f[:, None, :], spec.matrix("A"),
                                 spec.matrix("V"), spec.attention.scale)
    return np.einsum("nd,nd->n", f, f), grad[:, 0, :]


def tangent(grad: np.ndarray, q: np.ndarray) -> np.ndarray:
    """(I - q q^T) grad along the last axis, for unit q broadcasting against grad."""
    return grad - q * np.sum(q * grad, axis=-1, keepdims=True)
