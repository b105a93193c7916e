"""Paper C, claim 6: projected gradient descent from uniform starts at fixed large and small lam and with the
decreasing schedule, and SGD with the schedule (the paper's experiments 2-5): the excess risk along the runs is the
population risk, and the end points are recorded (attnverify.checks.slr.experiments: the protocol, the runs, the
comparison with Monte Carlo and the findings).
"""
from __future__ import annotations

from attnverify.checks.context import Context
from attnverify.checks.evidence import Evidence
from attnverify.checks.params import Param
from attnverify.checks.registry import check
from attnverify.checks.slr._model import GAMMA_PAPER, validate_model
from attnverify.checks.slr.experiments import (MC_TASKS, MODEL, Z_LEVEL, Experiment, ExperimentFindings, evidence,
                                               run_experiment)
from attnverify.numerics.slr import NUMERICS
from attnverify.theory.slr import THEORY


@check(
    id="slr.training_from_sphere",
    compares="Projected gradient descent from uniform starts at fixed large and small lam and with the decreasing "
             "schedule, and SGD with the schedule (the paper's experiments 2-5): the excess risk along the runs is the "
             "population risk (closed form against Monte Carlo at the end points); the end points are recorded",
    source="Paper C, claim 6",
    params=[*MODEL, Param("d", int, 400, "token dimension d of the PGD runs", low=5, high=100_000),
            Param("n_runs", int, 4, "runs per experiment (batched)", low=1, high=10_000),
            Param("steps_large", int, 1000, "steps at fixed lam = 0.9 (step 1e-3)", low=1, high=10_000_000),
            Param("steps_small", int, 1000, "steps at fixed lam = 0.1 (step 4e-3)", low=1, high=10_000_000),
            Param("steps_schedule", int, 2000, "steps with the schedule from lam = 1 (step 4e-3)", low=1,
                  high=10_000_000),
            Param("sgd_d", int, 80, "token dimension of the SGD runs", low=5, high=100_000),
            Param("sgd_steps", int, 2000, "SGD steps (lam0 = 2 with the schedule, step 1e-3, batch 5)", low=1,
                  high=100_000_000),
            MC_TASKS, Z_LEVEL],
    paper_profile={"n_runs": 30, "steps_large": 120000, "steps_small": 20000, "steps_schedule": 120000,
           "sgd_steps": 200000, "n_mc": 40000},
    validate=validate_model,
    theory=THEORY, numerics=NUMERICS,
    formulas=('R', 'H_{ab}'),
)
def training_from_sphere(p: dict, ctx: Context) -> Evidence:
    runs = [Experiment("sphere, large lam", "sphere", p["d"], 0.9, False, 1e-3, p["steps_large"]),
            Experiment("sphere, small lam", "sphere", p["d"], 0.1, False, 4e-3, p["steps_small"]),
            Experiment("sphere, schedule", "sphere", p["d"], 1.0, True, 4e-3, p["steps_schedule"]),
            Experiment("SGD, schedule", "sphere", p["sgd_d"], 2.0, True, 1e-3, p["sgd_steps"], sgd=True, batch=5,
                       eps=0.1)]
    papers = [{"d": 400, "n_steps": 120000, "n_runs": 30}, {"d": 400, "n_steps": 20000, "n_runs": 30},
              {"d": 400, "n_steps": 120000, "n_runs": 30}, {"d": 80, "n_steps": 200000, "n_runs": 30}]
    found, zs, plots = [], [], []
    for i, (exp, paper) in enumerate(zip(runs, papers)):
        f, z, pl = run_experiment(exp, p, ctx, p["n_runs"], paper, f"sphere{i}")
        if p["gamma"] != GAMMA_PAPER or p["L"] != 10:
            f = ExperimentFindings(**{**f.__dict__, "paper_protocol": False})
        found.append(f)
        zs.append(z)
        plots += pl
        ctx.progress((i + 1) / len(runs))
    return evidence(found, zs, plots, p)
