"""Paper A, claim 5: the 30-run experiment (R = 500, L - R = 10000, theta = 0.25) and what sets its final alignment.

Numeric side: independent projected-SGA runs (numerics.sga.projected_sga, full d-dim tokens, q_0 uniform on the
sphere, eta_k = a/(k + b)), one task per run through ctx.map. d and the schedule are not given by the paper; they are
parameters here and are reported.
Prediction of the final alignment (the noise floor of SGA at the final step size): the mean one-step increment is
eta F(rho) - (eta^2/2) rho E|g|^2 (claim 2 check), so the mean path follows the deterministic recursion
    m_{k+1} = m_k + eta_k F(m_k) - (eta_k^2 / 2) m_k G(m_k),    G(rho) = E|g|^2 (measured on a rho grid),
with F the closed form (finite-size term included). Near rho = 1, u = 1 - rho obeys u' = u (1 - 2 J'(1) eta) + eta^2 G/2,
whose quasi-stationary value is u* = eta G(1) / (4 J'(1)): the final alignment is set by the final step size and
the noise/drift ratio G(1)/J'(1), not by the signal alone. Decision: the observed mean of 1 - |rho_K| agrees with the
recursion's prediction within a two-sided t-quantile (n_runs - 1 dof) at rate ``z_level`` times the combined standard
error (spread of the runs, and the Monte Carlo error of G); the ODE alone (u -> 0) must be rejected.
"""
from __future__ import annotations

import numpy as np
from scipy.stats import t as student_t

from checks.framework import Context, Evidence, Param, Plot, Series, check
from checks.signal._model import MODEL_PARAMS, validate_model
from checks.signal.reduced_field import field_function, model_args, model_of
from numerics.sga import projected_sga, sga_drift, step_sizes
from numerics.signal_model import SignalModel

PAPER_MEAN_ALIGNMENT = 0.9965  # the paper's reported mean final |<q, xi>| over 30 runs (THEORY.md, claim 5)


def run_one(model_kw: dict, n_steps: int, a: float, b: float, seed: np.random.SeedSequence) -> dict:
    """One SGA run from q_0 uniform on the sphere: initial and final signed rho, recorded path, final nuisance mass."""
    rng = np.random.default_rng(seed)
    model = SignalModel(**model_kw)
    v = rng.standard_normal(model.d)
    rho0 = float(v[0] / np.linalg.norm(v))          # <q_0, xi> for q_0 uniform on the sphere
    path = projected_sga(model, np.array([rho0]), n_steps, a, b, rng, record_every=max(1, n_steps // 50))
    return {"rho0": rho0, "rho_final": float(path.rho[0, -1]), "time": path.time, "rho": path.rho[0],
            "nuisance_mass_final": float(path.nuisance_mass[0, -1])}


def predicted_mean(F, G_grid: np.ndarray, G: np.ndarray, rho0: np.ndarray, eta: np.ndarray) -> np.ndarray:
    """Deterministic recursion m_{k+1} = m_k + eta_k F(m_k) - (eta_k^2/2) m_k G(m_k), clipped to [-1, 1]; final m."""
    m = rho0.astype(float).copy()
    for e in eta:
        m = np.clip(m + e * F(m) - 0.5 * e * e * m * np.interp(m, G_grid, G), -1.0, 1.0)
    return m


@check(
    id="signal.alignment_30_runs",
    claim="30 independent SGA runs (R=500, L-R=10000, theta=0.25) reach a mean final |<q, xi>| of 0.9965; the final "
          "alignment is the SGA noise floor at the final step size, predicted from the noise/drift ratio.",
    source="Paper A, claim 5",
    params=[*MODEL_PARAMS,
            Param("R", int, 50, "number of informative tokens R (paper: 500; quick keeps R/(L-R) = 0.05)", low=1),
            Param("L", int, 1050, "sequence length L (paper: 500 + 10000)", low=2),
            Param("theta", float, 0.25, "signal strength (paper: 0.25)", low=0.0),
            Param("n_runs", int, 12, "independent SGA runs (paper: 30)", low=2),
            Param("n_steps", int, 1500, "SGA steps per run", low=1),
            Param("a", float, 40.0, "step-size scale a in eta_k = a/(k+b)", low=0.0, low_open=True),
            Param("b", float, 40.0, "step-size offset b in eta_k = a/(k+b)", low=0.0, low_open=True),
            Param("n_energy", int, 80, "sequences per rho for the measurement of E|g|^2", low=10),
            Param("z_level", float, 1e-3, "false-alarm rate of the two-sided test", low=0.0, high=1.0,
                  low_open=True, high_open=True)],
    paper={"R": 500, "L": 10500, "n_runs": 30, "n_steps": 3000, "n_energy": 200},
    validate=validate_model,
)
def alignment_30_runs(p: dict, ctx: Context) -> Evidence:
    model = model_of(p)
    mkw = {k: getattr(model, k) for k in ("theta", "beta", "sigma", "R", "L", "d", "sign")}
    runs = ctx.map(run_one, [(mkw, p["n_steps"], p["a"], p["b"], s) for s in ctx.seeds(p["n_runs"])])
    rho0 = np.array([r["rho0"] for r in runs])
    final = np.array([r["rho_final"] for r in runs])
    u_obs = 1.0 - np.abs(final)
    n = final.size

    # noise energy G(rho) = E|g|^2 on a grid: mean of 4 independent estimates, relative se from their spread
    grid = np.array([-1.0, -0.9, -0.5, 0.0, 0.5, 0.8, 0.9, 0.95, 0.98, 0.99, 1.0])
    parts = np.array([sga_drift(model, grid, 1e-3, max(2, p["n_energy"] // 4), rng)[2]
                      for rng in (ctx.rng(f"energy-{i}") for i in range(4))])
    G = parts.mean(axis=0)
    G_rel_err = float(np.median(parts.std(axis=0, ddof=1) / np.sqrt(4) / G))

    Fs = field_function(p["sign"], True)
    args = model_args(model)

    def F(r):
        return np.broadcast_to(Fs(r, *args), np.shape(r)).astype(float)

    eta = step_sizes(p["n_steps"], p["a"], p["b"])
    start = rho0 if p["sign"] == "fixed" else np.abs(rho0)       # symmetric model: F odd, mirror to rho0 >= 0
    u_pred_runs = 1.0 - np.abs(predicted_mean(F, grid, G, start, eta))
    u_ode_runs = 1.0 - np.abs(predicted_mean(F, grid, 0.0 * G, start, eta))   # no second-order term
    u_pred, u_ode = float(u_pred_runs.mean()), float(u_ode_runs.mean())
    h = 1e-6
    dJ1 = float((F(np.array([1.0 - h])) / (1 - (1 - h) ** 2))[0])    # J'(1) from F = (1 - rho^2) J'
    u_star = float(eta[-1] * G[-1] / (4 * dJ1))                      # quasi-stationary floor at the final step
    se_obs = float(u_obs.std(ddof=1) / np.sqrt(n))
    se = float(np.hypot(se_obs, u_pred * G_rel_err))
    q = float(student_t.isf(p["z_level"] / 2, n - 1))
    z = (float(u_obs.mean()) - u_pred) / se
    z_ode = (float(u_obs.mean()) - u_ode) / se
    eta_needed = (1 - PAPER_MEAN_ALIGNMENT) * 4 * dJ1 / G[-1]
    k_needed = p["a"] / eta_needed - p["b"]
    abs_final = np.abs(final)
    path_t = runs[0]["time"]
    return Evidence(
        metric="|mean(1 - |rho_K|) - predicted| / se",
        observed=abs(z), threshold=q,
        reason=f"two-sided Student-t quantile ({n - 1} dof) at rate {p['z_level']:g}; se combines the spread of "
               f"{n} runs and the Monte Carlo error of E|g|^2; the ODE alone (no noise floor) must be rejected",
        passed=bool(abs(z) <= q and abs(z_ode) > q),
        analytic=u_pred, numeric=float(u_obs.mean()), uncertainty=se,
        details={"d": model.d, "final_alignment": final, "initial_alignment": rho0,
                 "schedule": {"eta_k": "a/(k+b)", "a": p["a"], "b": p["b"], "n_steps": p["n_steps"],
                              "eta_final": float(eta[-1]), "ode_time": float(eta.sum())},
                 "runs_to_plus_xi": int(np.sum(final > 0)), "runs_to_minus_xi": int(np.sum(final < 0)),
                 "mean_abs_alignment": float(abs_final.mean()), "sd_abs_alignment": float(abs_final.std(ddof=1)),
                 "paper_mean_abs_alignment": PAPER_MEAN_ALIGNMENT,
                 "mean_one_minus_abs_rho": float(u_obs.mean()), "se_one_minus_abs_rho": se_obs,
                 "predicted_one_minus_abs_rho": u_pred, "ode_only_one_minus_abs_rho": u_ode,
                 "z": z, "z_ode_only": z_ode,
                 "runs_concentrated_near_xi": bool(np.all(abs_final > 0.5)),
                 "prediction_scope": "the mean recursion predicts E(1 - |rho|) only when the runs concentrate near "
                                     "+-xi; runs spread around rho = 0 (weak drift vs noise) make the check fail", "ode_only_rejected": bool(abs(z_ode) > q),
                 "quasi_stationary_floor_eta_G_over_4J1": u_star, "J_prime_at_1": dJ1,
                 "grad_energy_grid_rho": grid, "grad_energy_grid": G, "grad_energy_rel_err": float(G_rel_err),
                 "eta_final_for_paper_alignment": float(eta_needed),
                 "steps_for_paper_alignment_with_this_a_b": float(k_needed),
                 "nuisance_mass_final": [r["nuisance_mass_final"] for r in runs]},
        plots=[Plot(title=f"SGA alignment, {n} runs (R={model.R}, L={model.L}, d={model.d})",
                    xlabel="t = sum eta_j", ylabel="rho",
                    series=[Series(f"run {i}", path_t, r["rho"]) for i, r in enumerate(runs)])],
    )
