"""The numeric model spec of the attention-model engine: a mixture of token components and a bilinear attention,
all as plain numbers (no symbols; the checks layer builds it from a model file at given parameter values).

Coordinates. The model's k named directions are orthonormal, so without loss of generality they are the first k
coordinate axes e_1..e_k of R^d; every mean vector is zero outside them. For a trained query the engine uses the
next axis e_{k+1} as the query's orthogonal part: q = sum_j rho_j e_j + sqrt(1 - |rho|^2) e_{k+1} (the overlaps
rho_j = <q, e_j>), which is no loss either, because with the covariances and matrices below the law of the tokens
is invariant under rotations of span(e_1..e_k)^perp.

Tokens. A sequence has L = sum_c n_c tokens; component c contributes n_c of them (tokens 0..n_1-1 are component 1,
and so on, in the order given):
- law "gaussian": x = eps_c m_c + z with z ~ N(0, Sigma_c), Sigma_c = diag(sd_1^2, ..., sd_k^2, sd_perp^2, ...,
  sd_perp^2) (per-axis standard deviations along the directions, one value for the orthogonal rest: isotropic or
  direction-aligned);
- law "sphere": x = eps_c m_c + r_c u with u uniform on the unit sphere S^{d-1} (no sd fields);
- eps_c = 1, or with ``rademacher`` the sequence's one uniform random sign eps (independent across sequences,
  the same for every rademacher component of a sequence) multiplying the component's mean.

Attention. The score of token x for a trained query q is (beta / tau) <q, A x>; for a token query y it is
(beta / tau) <A y, x> (self-attention, tau the temperature; beta / tau is the inverse temperature in both cases,
``Attention.scale``). The value is V x. A and V are given either in block form, a k x k block on span(e_1..e_k)
plus a scalar on the complement (``a_perp``, ``v_perp``: the matrix is diag(A_k, a_perp I_{d-k})), or as full
d x d matrices (``a_perp`` / ``v_perp`` None). The reduced (Rao-Blackwellised) estimators need the block form.
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field, replace

import numpy as np

LAWS = ("gaussian", "sphere")
QUERIES = ("trained", "token")


def _real(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    x = float(value)
    if not math.isfinite(x):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return x


def _positive(value: object, name: str) -> float:
    x = _real(value, name)
    if x <= 0:
        raise ValueError(f"{name} must be > 0, got {value!r}")
    return x


def _array(value: object, name: str, shape: tuple[int, ...]) -> np.ndarray:
    """A finite float array of exactly ``shape``, read-only."""
    if isinstance(value, (str, bytes)) or value is None:
        raise ValueError(f"{name} must be a numeric array of shape {shape}, got {value!r}")
    try:
        arr = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a numeric array of shape {shape}, got {value!r}") from None
    if arr.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, got {arr.tolist()}")
    arr.setflags(write=False)
    return arr


@dataclass(frozen=True, eq=False)
class Component:
    """One token component: ``count`` tokens (n_c >= 0) with mean ``mean`` (length k, its coordinates along the
    directions, or length d with zeros after the first k), law "gaussian" (per-axis standard deviations ``sd``
    along e_1..e_k and ``sd_perp`` on the orthogonal rest) or "sphere" (radius ``radius``), and ``rademacher``: a
    random sign per sequence multiplying the mean. Validated in full by MixtureSpec, which knows d and k."""

    name: str
    count: int
    mean: object = 0
    sd: object = None
    sd_perp: float | None = None
    law: str = "gaussian"
    radius: float | None = None
    rademacher: bool = False


@dataclass(frozen=True, eq=False)
class Attention:
    """The attention: ``beta`` > 0 and ``tau`` > 0 (score scale beta / tau), the key-query matrix ``A`` and the
    value matrix ``V``, each a k x k block with a complement scalar (``a_perp``, ``v_perp``) or a full d x d matrix
    (complement scalar None), and the query kind "trained" (a unit query q) or "token" (self-attention)."""

    beta: float
    A: object
    V: object
    a_perp: float | None = 1.0
    v_perp: float | None = 1.0
    tau: float = 1.0
    query: str = "trained"

    @property
    def scale(self) -> float:
        """The inverse temperature beta / tau multiplying every bilinear score."""
        return self.beta / self.tau


@dataclass(frozen=True, eq=False)
class MixtureSpec:
    """A numeric attention model: ambient dimension ``d``, the names of the k directions (e_1..e_k), the token
    ``components`` (their counts add up to L >= 1) and the ``attention``. Validated on construction: a bad field
    raises ValueError with one line naming it. Arrays are stored read-only, means as length-d vectors."""

    d: int
    directions: tuple[str, ...]
    components: tuple[Component, ...]
    attention: Attention
    L: int = field(init=False)

    def __post_init__(self) -> None:
        if isinstance(self.d, bool) or not isinstance(self.d, numbers.Integral) or self.d < 1:
            raise ValueError(f"d must be an integer >= 1, got {self.d!r}")
        object.__setattr__(self, "d", int(self.d))
        dirs = tuple(self.directions) if isinstance(self.directions, (list, tuple)) else None
        if dirs is None or not all(isinstance(s, str) and s for s in dirs) or len(set(dirs)) != len(dirs):
            raise ValueError(f"directions must be a list of distinct non-empty names, got {self.directions!r}")
        if len(dirs) > self.d:
            raise ValueError(f"directions: {len(dirs)} directions do not fit in d = {self.d} dimensions")
        object.__setattr__(self, "directions", dirs)
        if not isinstance(self.components, (list, tuple)) or not self.components:
            raise ValueError(f"components must be a non-empty list of Component, got {self.components!r}")
        comps = tuple(self._component(i, c) for i, c in enumerate(self.components))
        names = [c.name for c in comps]
        if len(set(names)) != len(names):
            raise ValueError(f"components: names must be distinct, got {names}")
        object.__setattr__(self, "components", comps)
        L = sum(c.count for c in comps)
        if L < 1:
            raise ValueError("components: the counts add up to L = 0; a sequence needs at least one token")
        object.__setattr__(self, "L", L)
        object.__setattr__(self, "attention", self._attention(self.attention))

    @property
    def k(self) -> int:
        """The number of named directions."""
        return len(self.directions)

    @property
    def block(self) -> bool:
        """True when A and V are both in block form (a k x k block and a complement scalar)."""
        return self.attention.a_perp is not None and self.attention.v_perp is not None

    @property
    def weights(self) -> np.ndarray:
        """The mixture weights pi_c = n_c / L."""
        return np.array([c.count for c in self.components], dtype=float) / self.L

    @property
    def slices(self) -> tuple[slice, ...]:
        """The token positions of each component in a sequence (consecutive, in the order of ``components``)."""
        ends = np.cumsum([0] + [c.count for c in self.components])
        return tuple(slice(int(a), int(b)) for a, b in zip(ends[:-1], ends[1:]))

    def matrix(self, which: str) -> np.ndarray:
        """The full d x d matrix "A" or "V" (the block form expanded to diag(block, scalar I))."""
        if which not in ("A", "V"):
            raise ValueError(f"which must be 'A' or 'V', got {which!r}")
        M = getattr(self.attention, which)
        perp = self.attention.a_perp if which == "A" else self.attention.v_perp
        if perp is None:
            return M
        out = np.zeros((self.d, self.d))
        out[:self.k, :self.k] = M
        idx = np.arange(self.k, self.d)
        out[idx, idx] = perp
        return out

    def span_matrix(self, which: str) -> np.ndarray:
        """The (k+1) x (k+1) restriction of the block-form A or V to span(e_1..e_{k+1}) (needs the block form)."""
        if not self.block:
            raise ValueError("the reduced estimators need A and V in block form (a_perp and v_perp given)")
        if self.d < self.k + 1:
            raise ValueError(f"d must be > k = {self.k} for a trained query, got d = {self.d}")
        return self.matrix(which)[:self.k + 1, :self.k + 1]

    # ----------------------------------------------------------------------------------------------- validation
    def _component(self, i: int, c: object) -> Component:
        at = f"components[{i}]"
        if not isinstance(c, Component):
            raise ValueError(f"{at} must be a Component, got {type(c).__name__}")
        if not isinstance(c.name, str) or not c.name:
            raise ValueError(f"{at}.name must be a non-empty string, got {c.name!r}")
        at = f"components[{i}] ({c.name})"
        if isinstance(c.count, bool) or not isinstance(c.count, numbers.Integral) or c.count < 0:
            raise ValueError(f"{at}.count must be an integer >= 0, got {c.count!r}")
        if not isinstance(c.rademacher, bool):
            raise ValueError(f"{at}.rademacher must be True or False, got {c.rademacher!r}")
        k, d = self.k, self.d
        if isinstance(c.mean, (int, float)) and not isinstance(c.mean, bool) and c.mean == 0:
            raw = np.zeros(k)
        else:
            n = np.size(c.mean) if not isinstance(c.mean, (str, bytes)) else -1
            raw = _array(c.mean, f"{at}.mean", (d,) if n == d and d != k else (k,))
        if raw.size == d and d != k and np.any(raw[k:] != 0):
            raise ValueError(f"{at}.mean must be zero outside the first k = {k} coordinates (the directions)")
        mean = np.zeros(d)
        mean[:k] = raw[:k]
        mean.setflags(write=False)
        if c.law not in LAWS:
            raise ValueError(f"{at}.law must be one of {LAWS}, got {c.law!r}")
        if c.law == "gaussian":
            if c.radius is not None:
                raise ValueError(f"{at}.radius applies to law 'sphere' only, got {c.radius!r}")
            sd = _array(c.sd if c.sd is not None else [], f"{at}.sd", (k,))
            if np.any(sd <= 0):
                raise ValueError(f"{at}.sd must be > 0 along every direction, got {sd.tolist()}")
            if c.sd_perp is None and d > k:
                raise ValueError(f"{at}.sd_perp is needed (a Gaussian component in d = {d} > k = {k})")
            sd_perp = _positive(c.sd_perp, f"{at}.sd_perp") if c.sd_perp is not None else None
            return replace(c, count=int(c.count), mean=mean, sd=sd, sd_perp=sd_perp)
        if c.sd is not None or c.sd_perp is not None:
            raise ValueError(f"{at}: law 'sphere' takes radius, not sd or sd_perp")
        return replace(c, count=int(c.count), mean=mean, radius=_positive(c.radius, f"{at}.radius"))

    def _attention(self, a: object) -> Attention:
        if not isinstance(a, Attention):
            raise ValueError(f"attention must be an Attention, got {type(a).__name__}")
        beta = _positive(a.beta, "attention.beta")
        tau = _positive(a.tau, "attention.tau")
        if not math.isfinite(beta / tau):
            raise ValueError(f"attention: beta / tau = {beta} / {tau} overflows float64")
        if a.query not in QUERIES:
            raise ValueError(f"attention.query must be one of {QUERIES}, got {a.query!r}")
        if a.query == "trained" and self.d < self.k + 1:
            raise ValueError(f"d must be > k = {self.k} for a trained query (q needs a direction orthogonal to the "
                             f"named ones), got d = {self.d}")
        mats = {}
        for name, perp_name in (("A", "a_perp"), ("V", "v_perp")):
            perp = getattr(a, perp_name)
            if perp is None:
                mats[name] = _array(getattr(a, name), f"attention.{name}", (self.d, self.d))
                mats[perp_name] = None
            else:
                mats[name] = _array(getattr(a, name), f"attention.{name} (block form, {perp_name} given)",
                                    (self.k, self.k))
                mats[perp_name] = _real(perp, f"attention.{perp_name}")
        return Attention(beta=beta, tau=tau, query=a.query, **mats)


def gaussian(name: str, count: int, mean: object, sd: object, sd_perp: float, *, rademacher: bool = False,
             ) -> Component:
    """A Gaussian component (a shorthand for Component with law "gaussian")."""
    return Component(name=name, count=count, mean=mean, sd=sd, sd_perp=sd_perp, rademacher=rademacher)


def sphere(name: str, count: int, radius: float, mean: object = 0, *, rademacher: bool = False) -> Component:
    """A component uniform on the sphere of radius ``radius`` around its (signed) mean."""
    return Component(name=name, count=count, mean=mean, law="sphere", radius=radius, rademacher=rademacher)
