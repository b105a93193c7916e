"""Monte Carlo of J and of the attention masses (attnverify.numerics.engine.montecarlo) against references computed
here by other algorithms: quadrature at L = 2 (Gaussian tokens: adaptive quadrature along the score difference,
exact Gauss-Hermite across it; sphere tokens: the trapezoid rule on the torus), the plain full-dimensional estimator
against the Rao-Blackwellised one, exchangeability for the masses, and the grid covariance against the spread of
per-sequence differences. Tolerances: z = 4 standard errors (each test is a small family; false-alarm rate per
comparison 6e-5), the quadratures converged to far below the errors."""
import numpy as np
import pytest
from scipy.integrate import quad
from scipy.linalg import null_space
from scipy.special import expit, roots_hermitenorm

from attnverify.numerics.engine import (Attention, MixtureSpec, gaussian, grid_mc, grid_samples, mass_mc,
                                        objective_mc, sphere)

Z = 4.0
RHOS = np.array([-0.8, 0.0, 0.5, 1.0])

# ------------------------------------------------------------------------------------ L = 2, Gaussian, quadrature
# token a: (eps th + sa1 z0, sa2 z1), eps a random sign; token b: (mb + sb1 z2, sb2 z3); d = 2, k = 1.
TH, SA, MB, SB = 0.9, (0.7, 1.2), -0.4, (1.1, 0.8)
A11, AP, V11, VP, BETA, TAU = 1.3, 0.6, 0.9, 1.4, 1.5, 0.75


def pair_spec():
    return MixtureSpec(d=2, directions=("xi",),
                       components=(gaussian("a", 1, [TH], [SA[0]], SA[1], rademacher=True),
                                   gaussian("b", 1, [MB], [SB[0]], SB[1])),
                       attention=Attention(beta=BETA, tau=TAU, A=[[A11]], a_perp=AP, V=[[V11]], v_perp=VP))


def pair_reference(rho):
    """(J, mass of a) at overlap rho. With z ~ N(0, I_4), x = mu + D z and the score difference t = s_a - s_b =
    t0 + w.z is linear; write z = u y + B v (u = w / |w|, B an orthonormal basis of u's complement): the weight
    a_a = expit(t) depends on y only and ||f||^2 is quadratic in v, so the v-expectation is exact with 2 Gauss-Hermite
    nodes per axis; the y-integral against the normal density is done by adaptive quadrature. Average over eps."""
    kap, s = BETA / TAU, np.sqrt(1 - rho * rho)
    D = np.array([SA[0], SA[1], SB[0], SB[1]])
    c = kap * np.array([rho * A11, s * AP, -rho * A11, -s * AP])
    w = D * c
    u = w / np.linalg.norm(w)
    B = null_space(u[None, :])
    nodes, weights = roots_hermitenorm(2)
    V3 = np.stack(np.meshgrid(nodes, nodes, nodes, indexing="ij"), -1).reshape(-1, 3)
    W3 = np.prod(np.stack(np.meshgrid(weights, weights, weights, indexing="ij"), -1).reshape(-1, 3), 1)
    W3 /= W3.sum()
    J = M = 0.0
    for eps in (1.0, -1.0):
        mu = np.array([eps * TH, 0.0, MB, 0.0])

        def energy(y):
            x = mu + D * (u * y + V3 @ B.T)                     # (8, 4) token pairs
            t = c @ mu + np.linalg.norm(w) * y
            aa = expit(t)
            f1 = V11 * (aa * x[:, 0] + (1 - aa) * x[:, 2])
            f2 = VP * (aa * x[:, 1] + (1 - aa) * x[:, 3])
            return W3 @ (f1 * f1 + f2 * f2)

        phi = lambda y: np.exp(-y * y / 2) / np.sqrt(2 * np.pi)
        J += 0.5 * quad(lambda y: energy(y) * phi(y), -np.inf, np.inf, epsabs=1e-13, epsrel=1e-12, limit=200)[0]
        M += 0.5 * quad(lambda y: expit(c @ mu + np.linalg.norm(w) * y) * phi(y), -np.inf, np.inf, epsabs=1e-13,
                        epsrel=1e-12, limit=200)[0]
    return J, M


def test_pair_reference_is_sane():
    """The quadrature reference against a direct 4-D tensor Gauss-Hermite rule with 24 nodes per axis (a different
    quadrature; it converges to ~1e-12 at 20 nodes here)."""
    rho = 0.5
    n, wts = roots_hermitenorm(24)
    wts = wts / wts.sum()
    kap, s = BETA / TAU, np.sqrt(1 - rho * rho)
    J = 0.0
    for eps in (1.0, -1.0):
        z = np.stack(np.meshgrid(n, n, n, n, indexing="ij"), -1).reshape(-1, 4)
        wt = np.prod(np.stack(np.meshgrid(wts, wts, wts, wts, indexing="ij"), -1).reshape(-1, 4), 1)
        xa1, xa2 = eps * TH + SA[0] * z[:, 0], SA[1] * z[:, 1]
        xb1, xb2 = MB + SB[0] * z[:, 2], SB[1] * z[:, 3]
        aa = expit(kap * (rho * A11 * (xa1 - xb1) + s * AP * (xa2 - xb2)))
        J += 0.5 * wt @ ((V11 * (aa * xa1 + (1 - aa) * xb1)) ** 2 + (VP * (aa * xa2 + (1 - aa) * xb2)) ** 2)
    assert abs(J - pair_reference(rho)[0]) < 1e-10


@pytest.mark.parametrize("method", ["reduced", "full"])
def test_pair_objective_and_mass_match_quadrature(method):
    est = grid_mc(pair_spec(), RHOS, 40_000, np.random.default_rng(11), method=method)
    ref = np.array([pair_reference(r) for r in RHOS])
    zJ = np.abs(est.objective.mean - ref[:, 0]) / est.objective.se
    zM = np.abs(est.mass.mean[:, 0] - ref[:, 1]) / est.mass.se[:, 0]
    assert zJ.max() < Z and zM.max() < Z, (zJ, zM)
    np.testing.assert_allclose(est.mass.mean.sum(axis=1), 1.0, rtol=1e-12)


# ------------------------------------------------------------------------------------ L = 2, circle, trapezoid rule
def test_sphere_pair_matches_the_trapezoid_rule():
    """Two tokens on circles (d = 2): x_a = (0.5 eps, 0) + 1.3 (cos p, sin p), x_b = 0.8 (cos r, sin r). The
    integrand is analytic and periodic in (p, r), so the trapezoid rule on a 256 x 256 grid converges
    geometrically (checked against 128 x 128)."""
    spec = MixtureSpec(d=2, directions=("xi",),
                       components=(sphere("a", 1, 1.3, [0.5], rademacher=True), sphere("b", 1, 0.8)),
                       attention=Attention(beta=2.0, A=[[0.7]], a_perp=1.5, V=[[1.2]], v_perp=0.6))
    rhos = np.array([-0.6, 0.3, 0.9])

    def reference(rho, m):
        p = 2 * np.pi * np.arange(m) / m
        P, R = np.meshgrid(p, p, indexing="ij")
        s = np.sqrt(1 - rho * rho)
        J = M = 0.0
        for eps in (1.0, -1.0):
            xa = (0.5 * eps + 1.3 * np.cos(P), 1.3 * np.sin(P))
            xb = (0.8 * np.cos(R), 0.8 * np.sin(R))
            t = 2.0 * (rho * 0.7 * (xa[0] - xb[0]) + s * 1.5 * (xa[1] - xb[1]))
            aa = expit(t)
            f1 = 1.2 * (aa * xa[0] + (1 - aa) * xb[0])
            f2 = 0.6 * (aa * xa[1] + (1 - aa) * xb[1])
            J += 0.5 * np.mean(f1 * f1 + f2 * f2)
            M += 0.5 * np.mean(aa)
        return J, M

    ref = np.array([reference(r, 256) for r in rhos])
    assert np.max(np.abs(ref - np.array([reference(r, 128) for r in rhos]))) < 1e-12
    for method in ("reduced", "full"):
        est = grid_mc(spec, rhos, 40_000, np.random.default_rng(5), method=method)
        assert np.max(np.abs(est.objective.mean - ref[:, 0]) / est.objective.se) < Z
        assert np.max(np.abs(est.mass.mean[:, 0] - ref[:, 1]) / est.mass.se[:, 0]) < Z


# ------------------------------------------------------------------------------------ Rao-Blackwellised vs plain
def mixed_spec(d=6):
    return MixtureSpec(d=d, directions=("xi", "zeta"),
                       components=(gaussian("sig", 3, [1.0, 0.0], [0.5, 1.5], 0.8, rademacher=True),
                                   sphere("ring", 2, 1.7, [0.0, -0.6]),
                                   gaussian("noise", 5, 0, [1.0, 1.0], 1.3)),
                       attention=Attention(beta=1.2, A=[[1.0, 0.4], [-0.3, 0.9]], a_perp=0.8,
                                           V=[[0.7, 0.0], [0.5, 1.1]], v_perp=1.6))


def spheres_spec(d=8):
    """Sphere tokens only, few of them and a large v_perp: the complement's conditional energy dominates J."""
    return MixtureSpec(d=d, directions=("xi", "zeta"),
                       components=(sphere("a", 1, 1.5, [0.8, 0.0], rademacher=True), sphere("b", 2, 1.0)),
                       attention=Attention(beta=1.0, A=[[1.0, 0.0], [0.2, 1.0]], a_perp=1.4,
                                           V=[[1.0, 0.0], [0.0, 0.5]], v_perp=2.0))


@pytest.mark.parametrize("make", [mixed_spec, spheres_spec])
def test_reduced_and_full_estimators_agree(make):
    rhos = np.array([[0.6, 0.2], [-0.3, 0.7], [0.0, 0.0]])
    red = grid_mc(make(), rhos, 30_000, np.random.default_rng(1), method="reduced", drift=True)
    full = grid_mc(make(), rhos, 30_000, np.random.default_rng(2), method="full", drift=True)
    for name in ("objective", "mass", "drift"):
        a, b = getattr(red, name), getattr(full, name)
        z = np.abs(a.mean - b.mean) / np.sqrt(a.se ** 2 + b.se ** 2)
        assert z.max() < Z, (name, z)
    # the conditional expectation can only lower the variance of the energy (law of total variance)
    assert np.all(red.objective.se < full.objective.se)


# ------------------------------------------------------------------------------------ masses and covariances
def test_masses_of_exchangeable_components_are_their_shares():
    """Two components with the same law: the L tokens are exchangeable, so E a_i is the same for all i and the mass
    of a component is its share n_c / L (one component alone would give exactly 1, a trivial check)."""
    spec = MixtureSpec(d=3, directions=("xi",),
                       components=(gaussian("x", 3, [0.4], [1.0], 1.0), gaussian("y", 9, [0.4], [1.0], 1.0)),
                       attention=Attention(beta=2.0, A=[[1.0]], V=[[1.0]]))
    est = mass_mc(spec, [0.0, 0.9], 20_000, np.random.default_rng(4))
    assert np.max(np.abs(est.mean - np.array([[0.25, 0.75]] * 2)) / est.se) < Z
    one = MixtureSpec(d=3, directions=("xi",), components=(gaussian("x", 5, [0.4], [1.0], 1.0),),
                      attention=Attention(beta=2.0, A=[[1.0]], V=[[1.0]]))
    np.testing.assert_allclose(mass_mc(one, [0.3], 10, np.random.default_rng(0)).mean, 1.0, rtol=1e-14)


def test_grid_covariance_gives_the_error_of_contrasts():
    """The contrast J(rho_2) - J(rho_1) from the returned covariance equals the standard error of the per-sequence
    differences computed directly, and is smaller than either entry's error (common random numbers)."""
    spec = mixed_spec()
    rhos = [[0.3, 0.1], [0.32, 0.1]]
    s = grid_samples(spec, rhos, 5000, np.random.default_rng(9))
    est = objective_mc(spec, rhos, 5000, np.random.default_rng(9))
    diff = s.energy[:, 1] - s.energy[:, 0]
    value, se = est.contrast([-1.0, 1.0])
    assert value == pytest.approx(diff.mean(), rel=1e-12)
    assert se == pytest.approx(diff.std(ddof=1) / np.sqrt(diff.size), rel=1e-10)
    assert se < 0.2 * est.se.min()
