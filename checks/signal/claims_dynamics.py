"""Paper A claims about the learning dynamics, decided from the evidence of signal.ode_tracks_sga and
signal.alignment_30_runs (verdicts computed from Result.details of the same run, never typed in)."""
from __future__ import annotations

from attnverify.checks.claims import ClaimVerdict, claim
from attnverify.checks.framework import Result

SCALE_RESOLUTION = 0.05     # the mean path must resolve the scale of F to 5 % (1 se) to speak for the claim
PAPER_SCALE = {"R": 500, "L": 10500, "theta": 0.25, "n_runs": 30}


@claim(id="A.ode_tracks_sga", paper="A", needs=("signal.ode_tracks_sga",))
def _ode_tracks_sga(results: dict[str, Result], stated) -> ClaimVerdict:
    r = results["signal.ode_tracks_sga"]
    det = r.details
    se = max(det["fitted_scale_se"])
    eta0s = [s["eta0"] for s in det["scales"]]
    lag = det["order_eta_terms_max"]
    figures = {"fitted_scale_of_F": det["fitted_scale_of_F"], "fitted_scale_se": det["fitted_scale_se"],
               "eta0": eta0s, "order_eta_terms_max": lag, "max_abs_z_plain_ode": det["max_abs_z_plain_ode"],
               "n_runs": r.params["n_runs"], "theta": r.params["theta"]}
    if se > SCALE_RESOLUTION:
        return ClaimVerdict("inconclusive",
                            f"the mean SGA path resolves the scale of F only to {se:.2g} (1 se), coarser than "
                            f"{SCALE_RESOLUTION:g}: it could not tell F from a 10 % wrong field",
                            evidence={r.id: figures})
    return ClaimVerdict("holds",
                        f"the mean of {r.params['n_runs']} SGA runs equals the ODE's second-order mean path at every "
                        f"recorded time (eta_0 = {', '.join(f'{e:g}' for e in eta0s)}; fitted scale of F "
                        f"{det['fitted_scale_of_F'][-1]:.3f} +- {det['fitted_scale_se'][-1]:.2g}); the deviation "
                        f"from the plain ODE is the O(eta) terms (at most {max(lag):.2g}), which vanish as eta -> 0",
                        evidence={r.id: figures})


def _paper_scale(params: dict) -> list[str]:
    off = []
    for key, want in PAPER_SCALE.items():
        if params.get(key) != want:
            off.append(f"{'L' if key == 'L' else key} = {params.get(key)} (paper: {want})")
    return off


@claim(id="A.reported_alignment", paper="A", needs=("signal.alignment_30_runs",))
def _reported_alignment(results: dict[str, Result], stated) -> ClaimVerdict:
    r = results["signal.alignment_30_runs"]
    det, prm = r.details, r.params
    off = _paper_scale(prm)
    sched = det.get("predicted_schedule_for_paper_alignment") or {}
    figures = {"mean_abs_alignment": det["mean_abs_alignment"], "se": det["se_abs_alignment"],
               "paper": det["paper_mean_abs_alignment"], "z_vs_paper": det["z_vs_paper"],
               "t_threshold": det["t_threshold_vs_paper"], "test_level": det["paper_test_level"],
               "detectable_difference_at_power": det["detectable_difference_from_paper"],
               "power": det["paper_test_power"], "d": det["d"], "schedule": det["schedule"],
               "eta_final_for_paper_alignment": det["eta_final_for_paper_alignment"],
               "predicted_schedule": sched}
    if off:
        return ClaimVerdict("inconclusive", "not the paper's scale: " + ", ".join(off) + "; run the paper profile",
                            evidence={r.id: figures})
    s = det["schedule"]
    here = (f"mean final |rho| {det['mean_abs_alignment']:.4f} +- {det['se_abs_alignment']:.2g} over "
            f"{det['n_runs']} runs (d = {det['d']}, eta_k = {s['a']:g}/(k + {s['b']:g}), {s['n_steps']} steps, "
            f"final step {s['eta_final']:.3g})")
    test = (f"two-sided t-test at level {det['paper_test_level']:g} (t = {det['z_vs_paper']:.2f}, threshold "
            f"{det['t_threshold_vs_paper']:.2f}; it detects a difference of {det['detectable_difference_from_paper']:.2g} "
            f"with power {det['paper_test_power']:g})")
    why = ""
    if sched:
        why = (f"; the floor formula 1 - eta G(1) / (4 J'(1)) gives 0.9965 at a final step "
               f"{det['eta_final_for_paper_alignment']:.3g}, i.e. {sched['n_steps']} steps of the same schedule")
        if sched.get("ran"):
            why += (f", where {sched['n_runs']} runs measured {sched['mean_abs_alignment']:.4f} +- {sched['se']:.2g} "
                    f"(predicted {sched['predicted_mean_abs_alignment']:.4f}, t = {sched['z_vs_prediction']:.2f}; "
                    f"against 0.9965: t = {sched['z_vs_paper']:.2f})")
    if abs(det["z_vs_paper"]) <= det["t_threshold_vs_paper"]:
        return ClaimVerdict("holds_if", f"{here} agrees with 0.9965 by a {test}",
                            condition=f"d = {det['d']} and eta_k = {s['a']:g}/(k + {s['b']:g}) for {s['n_steps']} "
                                      f"steps (the paper states neither)" + why,
                            evidence={r.id: figures})
    if sched.get("ran") and abs(sched["z_vs_paper"]) <= sched["t_threshold"]:
        return ClaimVerdict("holds_if", f"{here} differs from 0.9965 by a {test}; the gap is the final step size",
                            condition=f"only with a final step <= {det['eta_final_for_paper_alignment']:.3g} "
                                      f"({sched['n_steps']} steps of eta_k = {s['a']:g}/(k + {s['b']:g}))" + why,
                            evidence={r.id: figures})
    return ClaimVerdict("refuted", f"{here} differs from 0.9965 by a {test}",
                        condition=f"R = 500, L - R = 10000, theta = 0.25, 30 runs: {here}" + why,
                        evidence={r.id: figures})
