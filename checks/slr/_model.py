"""Paper C (single-location regression, model ``slr``): the model options shared by its checks, their validation,
and the numeric helpers the checks share (sampling realisable overlaps and grids of points, starts on M and projected
gradient descent driven by a theory object's closed-form gradient).

Model (Paper C; docs/theory.md): tokens X_1..X_L in R^d, J0 uniform, X_{J0} ~ N(sqrt(d/2) k*,
gamma^2 I), the others N(0, I); Y = <X_{J0}, v*> + xi, Var xi = eps^2; T_{k,v}(X) = sum_l erf(lam <X_l, k>) <X_l, v>
with unit k, v; R(k, v) = E (Y - T)^2. The overlaps o = (kappa, nu, theta, eta, rho) = (<k,k*>, <v,v*>, <v,k*>,
<k,v*>, <k,v>) are the coordinates; M = {theta = eta = rho = 0}.

Degenerate input is refused before any work (one line naming the option): lam, gamma > 0 and finite, eps >= 0,
d >= 4 (a point with all five overlaps free needs four dimensions), L >= 1, and sizes that fit in memory.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from attnverify.checks.params import Param

GAMMA_PAPER = math.sqrt(0.5)

MODEL_PARAMS = (
    Param("lam", float, 0.5, "temperature lam of erf(lam <X, k>)", low=0.0, low_open=True, high=100.0),
    Param("gamma", float, GAMMA_PAPER, "noise sd gamma of the informative token", low=0.0, low_open=True, high=10.0),
    Param("d", int, 400, "token dimension d", low=4, high=100_000),
    Param("L", int, 10, "sequence length L", low=1, high=10_000),
    Param("eps", float, 0.1, "output noise sd eps", low=0.0, high=100.0),
)
MODEL_KEYS = ("lam", "gamma", "d", "L", "eps")


#: ulps of the closed form's scale allowed for its float64 evaluation (see closed_form_rounding)
CLOSED_FORM_ULPS = 16


def closed_form_rounding(eps: float, d: int = 0, theta: np.ndarray | float = 0.0) -> np.ndarray | float:
    """A bound on the float64 rounding of the closed-form risk R at overlaps with theta = <v, k*>:
    CLOSED_FORM_ULPS ulps of 1 + eps^2 + (d/2) theta^2. R = E Y^2 - 2 E Y T + E T^2 combines second moments of the
    target Y = <v*, x_J> + noise (at most 1 + eps^2) and of the prediction T (a softmax average of <v, x_l>, whose
    planted token has mean sqrt(d/2) theta: at most 1 + (d/2) theta^2), and the cross term is bounded by their
    geometric mean, so the rounding is a few ulps of that scale whatever the cancellation between them (at L = 1
    the oracle's exact eps^2 comes out as eps^2 - 7e-17)."""
    return CLOSED_FORM_ULPS * float(np.finfo(float).eps) * (1.0 + eps ** 2 + 0.5 * d * np.square(theta))


def validate_model(p: dict) -> None:
    """Constraints between the options given (``p`` may hold a subset, as for ``derive --set``): the informative
    token's mean sqrt(d/2) and the noise must keep the squared targets finite in float64."""
    if "d" in p and "gamma" in p and p["gamma"] ** 2 * p["d"] > 1e12:
        raise ValueError(f"gamma^2 d = {p['gamma'] ** 2 * p['d']:.3g} is too large for float64 targets (> 1e12)")


def params_of(p: dict, **override) -> tuple[float, float, int, int, float]:
    """(lam, gamma, d, L, eps) of a check's parameters, with overrides."""
    v = {k: override.get(k, p[k]) for k in MODEL_KEYS}
    return float(v["lam"]), float(v["gamma"]), int(v["d"]), int(v["L"]), float(v["eps"])


def model_options(*, only: tuple[str, ...] = (), without: tuple[str, ...] = ()) -> list[Param]:
    """The model options named in ``only`` (all when empty) and not in ``without``, in MODEL_PARAMS order."""
    return [q for q in MODEL_PARAMS if (not only or q.name in only) and q.name not in without]


def with_defaults(**defaults) -> list[Param]:
    """The model options with other defaults (a check's own regime)."""
    return [q if q.name not in defaults else Param(q.name, q.kind, defaults[q.name], q.help, q.low, q.high,
                                                   q.low_open, q.high_open) for q in MODEL_PARAMS]


def slr_model(gamma: float, d: int, L: int, eps: float):
    """The numerics' model object (attnverify.numerics.slr.model.SLRModel)."""
    from attnverify.numerics.slr.model import SLRModel

    return SLRModel(d=int(d), L=int(L), gamma=float(gamma), eps=float(eps))


# ------------------------------------------------------------------------------------------- points
def random_overlaps(rng: np.random.Generator, n: int, large: bool = True, margin: float = 0.0) -> np.ndarray:
    """n realisable overlap vectors (kappa, nu, theta, eta, rho): the overlaps of unit k, v with an orthonormal pair
    (k*, v*) in R^4 (Gram matrix PSD by construction). ``large``: k, v drawn as mixtures that put most of their weight
    in span(k*, v*) and on each other, so that every overlap is of order one (|o| up to ~0.9), not O(1/sqrt(d)).
    ``margin``: only points whose Gram matrix of (k, v, k*, v*) has its smallest eigenvalue >= margin (interior
    points, where every overlap can be moved by a small step)."""
    out = np.empty((n, 5))
    i = 0
    while i < n:
        a = rng.standard_normal(4)
        b = rng.standard_normal(4)
        if large:
            b = b + rng.uniform(-1.5, 1.5) * a          # correlate k and v (rho of order one)
            a[2:] *= rng.uniform(0.1, 0.6)               # most of the weight on (k*, v*) = (e1, e2)
            b[2:] *= rng.uniform(0.1, 0.6)
        k, v = a / np.linalg.norm(a), b / np.linalg.norm(b)
        o = np.array([k[0], v[1], v[0], k[1], k @ v])
        if margin > 0 and np.linalg.eigvalsh(gram(o))[0] < margin:
            continue
        out[i] = o
        i += 1
    return out


def gram(o: np.ndarray) -> np.ndarray:
    """The Gram matrix of (k, v, k*, v*) from the overlaps (k*, v* orthonormal, k, v unit)."""
    kap, nu, th, et, rh = o
    return np.array([[1.0, rh, kap, et], [rh, 1.0, th, nu], [kap, th, 1.0, 0.0], [et, nu, 0.0, 1.0]])


def coordinates(ov: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Coordinates in R^4 of unit k, v with the overlaps ``ov`` (n, 5) against k* = e1, v* = e2:
    k = (kappa, eta, a, 0), v = (theta, nu, c, b) with a = sqrt(1 - kappa^2 - eta^2), c a = rho - kappa theta - eta nu
    and b = sqrt(1 - theta^2 - nu^2 - c^2) (ValueError where no such vectors exist: the overlaps are not realisable)."""
    ov = np.atleast_2d(np.asarray(ov, dtype=float))
    kap, nu, th, et, rh = ov.T
    a2 = 1.0 - kap ** 2 - et ** 2
    a = np.sqrt(np.clip(a2, 0.0, None))
    cross = rh - kap * th - et * nu
    c = np.divide(cross, a, out=np.zeros_like(a), where=a > 1e-12)
    b2 = 1.0 - th ** 2 - nu ** 2 - c ** 2
    if np.any(a2 < -1e-12) or np.any(b2 < -1e-9) or np.any((a <= 1e-12) & (np.abs(cross) > 1e-9)):
        raise ValueError("overlaps are not realisable by unit k, v and orthonormal k*, v*")
    b = np.sqrt(np.clip(b2, 0.0, None))
    z = np.zeros_like(a)
    return np.stack([kap, et, a, z], 1), np.stack([th, nu, c, b], 1)


def realise(ov: np.ndarray, d: int, rng: np.random.Generator):
    """(k (n, d), v (n, d), k* (d,), v* (d,)): unit vectors with the overlaps ``ov`` (n, 5), every point in the same
    Haar-random 4-frame of R^d, so that all points share the targets k*, v* (numerics only, O(n d))."""
    k4, v4 = coordinates(ov)
    q, r = np.linalg.qr(rng.standard_normal((int(d), 4)))
    frame = (q * np.sign(np.diagonal(r))).T                 # (4, d), Haar-distributed orthonormal rows
    k, v = k4 @ frame, v4 @ frame
    k /= np.linalg.norm(k, axis=1, keepdims=True)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    return k, v, frame[0].copy(), frame[1].copy()


def oracle_overlaps() -> np.ndarray:
    return np.array([1.0, 1.0, 0.0, 0.0, 0.0])


def points_with_oracle(rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` random overlap vectors with large overlaps, then the oracle and a random point of M: shape (n + 2, 5)."""
    on_m = np.array([[rng.uniform(-0.9, 0.9), rng.uniform(-0.9, 0.9), 0.0, 0.0, 0.0]])
    return np.vstack([random_overlaps(rng, n), oracle_overlaps()[None], on_m])


def grid_cells(p: dict) -> list[tuple[int, int, float, float]]:
    """The grid (d, L, lam, gamma) of a check's parameters ``ds``, ``Ls``, ``lams``, ``gammas``."""
    return [(d, L, lam, g) for d in p["ds"] for L in p["Ls"] for lam in p["lams"] for g in p["gammas"]]


# ------------------------------------------------------------------------------------------- dynamics on M
def start_on_M(p: dict, n: int, rng: np.random.Generator):
    """Targets (k*, v*) in R^d (d = p["d"]) and ``n`` starts on M drawn as in the paper: (k0, v0, k*, v*)."""
    from attnverify.numerics.slr.model import draw_targets, start_manifold

    ks, vs = draw_targets(p["d"], rng)
    k0, v0 = start_manifold(ks, vs, rng, n)
    return k0, v0, ks, vs


def descend(numerics, ev, k0, v0, ks, vs, lam: float, h: float, n_steps: int, every: int, kernel=None):
    """Projected gradient descent (``numerics.pgd``) driven by the closed-form gradient of the risk evaluator ``ev``
    (a theory object's RiskEvaluator), with the step ``kernel`` (default: the numerics' own ``pgd_step``)."""
    return numerics.pgd(k0, v0, ks, vs, lambda o, l: ev.gradient(o, l), lam0=lam, step=h, n_steps=n_steps,
                        record_every=every, kernel=numerics.pgd_step if kernel is None else kernel)


# ------------------------------------------------------------------------------------------- text helpers
def fmt(x: float, digits: int = 4) -> str:
    if x is None or not math.isfinite(float(x)):
        return "n/a"
    return f"{float(x):.{digits}g}"


def vec(x: Sequence[float], digits: int = 3) -> str:
    return "(" + ", ".join(fmt(v, digits) for v in x) + ")"


def compare_text(a: float, b: float, tol: float = 0.0) -> str:
    """The word that relates a to b: "below", "above", or "within tol of"."""
    if abs(a - b) <= tol:
        return "equal to" if tol == 0 else "within the tolerance of"
    return "below" if a < b else "above"
