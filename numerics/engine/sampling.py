"""Token sampling for the engine: sequences drawn from a MixtureSpec, in full or reduced coordinates.

Full coordinates (``sample_full``): n sequences X of shape (n, L, d); component c fills positions ``spec.slices[c]``
with x = eps_c m_c + z, z ~ N(0, diag(sd^2, sd_perp^2 ...)) (law "gaussian") or z = r u, u uniform on S^{d-1}
(law "sphere", u = g / |g| for g ~ N(0, I_d)); eps_c is 1, or, for a ``rademacher`` component, the sequence's one
uniform random sign eps, shared by every rademacher component of the sequence (the model file's semantics: one
sign per sequence, docs/models.md).

Reduced coordinates (``sample_reduced``, trained queries): the first k + 1 coordinates only (the directions and the
query's orthogonal axis e_{k+1}), plus for each token the conditional energy of its other d - k - 1 coordinates,
W_i = E[|z_i^rest|^2 | first k + 1 coordinates]. Those coordinates have mean zero and are independent across
tokens; for a Gaussian component they are N(0, sd_perp^2 I) independent of the rest, W_i = (d - k - 1) sd_perp^2;
for a sphere component g = (g_S, g_R) with |g_R|^2 ~ chi^2_{d-k-1} independent of g_S, so the first k + 1
coordinates are r g_S / sqrt(|g_S|^2 + |g_R|^2) (sampled exactly from k + 1 normals and one chi-square) and, given
them, z^rest is uniform on the sphere of radius r |g_R| / |g|: W_i = r^2 |g_R|^2 / |g|^2.

I.i.d. tokens (``sample_iid``, token queries): n tokens per repetition with component labels drawn i.i.d. from the
mixture weights pi_c = n_c / L, one sign per repetition shared by its rademacher components.

Random numbers are drawn in a fixed order from the generator passed in (signs, then the normals of all tokens, then
the chi-squares), so the same generator state gives the same tokens.
"""
from __future__ import annotations

import numbers

import numpy as np

from attnverify.numerics.engine.spec import Component, MixtureSpec


def check_rng(rng: object) -> np.random.Generator:
    """``rng`` itself when it is a numpy Generator, else ValueError."""
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return rng


def check_count(value: object, name: str, low: int = 1) -> int:
    """An integer >= ``low``, else ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


def check_spec(spec: object, query: str | None = None) -> MixtureSpec:
    """``spec`` when it is a MixtureSpec (of the given query kind), else ValueError."""
    if not isinstance(spec, MixtureSpec):
        raise ValueError(f"spec must be a MixtureSpec, got {type(spec).__name__}")
    if query is not None and spec.attention.query != query:
        raise ValueError(f"this estimator needs attention.query = {query!r}, got {spec.attention.query!r}")
    return spec


def signs(spec: MixtureSpec, n: int, rng: np.random.Generator) -> np.ndarray:
    """Per-sequence signs, shape (n, C): column c is the sequence's one uniform sign eps = +-1 for every rademacher
    component (the same eps in each of their columns), 1 for the others."""
    eps = np.ones((n, len(spec.components)))
    rad = [c.rademacher for c in spec.components]
    if any(rad):
        eps[:, rad] = 2.0 * rng.integers(0, 2, size=(n, 1)) - 1.0
    return eps


def _noise(comp: Component, Z: np.ndarray, chi: np.ndarray | None, k: int, rest_dim: int
           ) -> tuple[np.ndarray, np.ndarray]:
    """Component ``comp``'s centred tokens from standard normals Z (..., width), in place, and the conditional energy
    of the ``rest_dim`` coordinates left out (module docstring); chi (...) the chi-square draws (None: rest_dim 0)."""
    if comp.law == "gaussian":
        Z[..., :k] *= comp.sd
        Z[..., k:] *= comp.sd_perp if comp.sd_perp is not None else 1.0
        return Z, np.full(Z.shape[:-1], rest_dim * (comp.sd_perp or 0.0) ** 2)
    norm2 = np.einsum("...w,...w->...", Z, Z)
    if chi is not None:
        norm2 += chi
    Z *= (comp.radius / np.sqrt(norm2))[..., None]
    return Z, (comp.radius ** 2 * chi / norm2) if chi is not None else np.zeros(Z.shape[:-1])


def _draw(spec: MixtureSpec, labels: np.ndarray | None, n: int, eps: np.ndarray, rng: np.random.Generator,
          width: int) -> tuple[np.ndarray, np.ndarray]:
    """n rows of tokens in the first ``width`` coordinates, and the conditional energy W (n, m) of the d - width
    coordinates left out. ``labels`` (n, m): each token's component; None: the sequence layout (component c at
    positions spec.slices[c]). eps (n, C): the rows' signs. Draws all normals, then the chi-squares (sphere laws,
    width < d) from ``rng``."""
    k, rest_dim = spec.k, spec.d - width
    m = spec.L if labels is None else labels.shape[1]
    Z = rng.standard_normal((n, m, width))
    chi = None
    if rest_dim > 0 and any(c.law == "sphere" for c in spec.components):
        chi = rng.chisquare(rest_dim, size=(n, m))
    W = np.empty((n, m))
    for c, comp in enumerate(spec.components):
        if labels is None:
            at = (slice(None), spec.slices[c])
            Zc, Wc = _noise(comp, Z[at], None if chi is None else chi[at], k, rest_dim)
            Zc += eps[:, c, None, None] * comp.mean[:width]
        else:
            at = np.nonzero(labels == c)
            Zc, Wc = _noise(comp, Z[at], None if chi is None else chi[at], k, rest_dim)
            Zc += eps[at[0], c, None] * comp.mean[:width]
        Z[at], W[at] = Zc, Wc
    return Z, W


def sample_full(spec: MixtureSpec, n: int, rng: np.random.Generator) -> np.ndarray:
    """n sequences in full coordinates, shape (n, L, d) (module docstring)."""
    return _draw(spec, None, n, signs(spec, n, rng), rng, spec.d)[0]


def sample_reduced(spec: MixtureSpec, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """n sequences in the first k + 1 coordinates, shape (n, L, k + 1), and the conditional energy W (n, L) of each
    token's other d - k - 1 coordinates (module docstring). Needs d > k."""
    if spec.d < spec.k + 1:
        raise ValueError(f"reduced sampling needs d > k = {spec.k}, got d = {spec.d}")
    return _draw(spec, None, n, signs(spec, n, rng), rng, spec.k + 1)


def sample_iid(spec: MixtureSpec, n: int, reps: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``reps`` independent sets of n i.i.d. tokens from the mixture (weights n_c / L), shape (reps, n, d), and their
    component labels (reps, n). Each repetition has its own sign, shared by its rademacher components."""
    eps = signs(spec, reps, rng)
    labels = rng.choice(len(spec.components), size=(reps, n), p=spec.weights)
    return _draw(spec, labels, reps, eps, rng, spec.d)[0], labels
