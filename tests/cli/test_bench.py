"""``attnverify bench`` at a tiny scale: the JSON keys, sane values, bad input, and the naive Euler baseline.

Correctness only: no assertion depends on a timing.
"""
import argparse
import json
import math

import numpy as np
import pytest

from attnverify.bench import run_all
from attnverify.numerics.meanfield.naive import euler_naive
from attnverify.cli import bench as bench_cli
from attnverify.checks.params import InputError
from attnverify.numerics.meanfield.particles import simulate


def parse(argv):
    parser = argparse.ArgumentParser(prog="attnverify")
    bench_cli.add_parser(parser.add_subparsers(dest="command"))
    return parser.parse_args(argv)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    path = tmp_path_factory.mktemp("bench") / "bench.json"
    assert bench_cli.cmd_bench(parse(["bench", "--json", str(path), "--scale", "0.02", "--quiet"])) == 0
    return json.loads(path.read_text())


def test_json_has_the_issue_keys(tiny):
    for key in ("sga_step_over_rng", "particles_speedup_vs_naive", "truncated_kernel_speedup",
                "truncated_kernel_max_error", "dense_kernel_fraction_of_peak", "w2_exponent",
                "machine", "targets_met", "fused_kernel_speedup_vs_numpy", "w2_speedup_vs_assignment",
                "truncated_cost_exponent"):
        assert key in tiny, key
    assert set(tiny["targets_met"]) == set(tiny["targets"]) and len(tiny["targets"]) >= 6
    assert set(tiny["details"]) >= set(tiny["targets"])           # every target row explains itself
    assert {"cpu_count", "numpy", "blas"} <= set(tiny["machine"])
    for key in ("sga_step_over_rng", "particles_speedup_vs_naive", "truncated_kernel_speedup",
                "dense_kernel_fraction_of_peak"):
        assert math.isfinite(tiny[key]) and tiny[key] > 0, key


def test_figures_are_consistent(tiny):
    # the truncated kernel's accuracy is a correctness figure: proven bound 2 tol max|Vx| = 4e-12 plus rounding
    assert tiny["truncated_kernel_max_error"] <= 1e-10
    p = tiny["meanfield"]["particles"]
    assert p["project_error"] <= p["accuracy"]                       # the chosen rtol really meets 1e-4
    errors = [r["error"] for r in p["naive_runs"]]
    assert p["naive_steps"] >= p["naive_runs"][-1]["n_steps"]
    assert p["naive_extrapolated"] == (errors[-1] > p["accuracy"])
    sizes = tiny["meanfield"]["w2"]["sizes"]
    assert sizes == sorted(sizes) and len(sizes) == 4
    # the fast paths compute the same numbers as their baselines
    mf = tiny["meanfield"]
    assert mf["fused"]["max_relative_difference"] <= 1e-12
    assert mf["w2_two_atoms"]["equal_to_1e-10"] and mf["w2_two_atoms"]["relative_difference"] <= 1e-10
    ts = mf["truncated_scaling"]
    assert ts["sizes"] == sorted(ts["sizes"]) and len(ts["sizes"]) == 5
    assert all(0 < f <= 1 for f in ts["pair_fraction"]) and math.isfinite(tiny["truncated_cost_exponent"])
    assert "paper_profile_seconds" not in tiny                       # opt-in only


def test_paper_profile_section_runs_every_check(monkeypatch):
    import attnverify.checks.registry
    from attnverify.selftest.paper_profile import run_paper_profile
    from attnverify.checks.evidence import Evidence
    from attnverify.checks.registry import REGISTRY, check

    check(id="toy.bench", claim="toy", source="toy")(
        lambda p, ctx: Evidence(metric="m", observed=0.0, threshold=1.0, reason="r", passed=True))
    try:
        monkeypatch.setattr(attnverify.checks.registry, "all_checks", lambda: [REGISTRY["toy.bench"]])
        out = run_paper_profile(executor_kind="serial")
    finally:
        REGISTRY.pop("toy.bench")
    assert list(out["seconds"]) == ["toy.bench"] and out["verdicts"] == {"toy.bench": "pass"}
    assert out["total_s"] == pytest.approx(out["seconds"]["toy.bench"])


def test_naive_euler_is_first_order():
    # The baseline must be a correct (first-order) integrator, else the speedup is meaningless: against simulate at
    # rtol 1e-10, halving h must halve the error (ratio 2 -> order 1; 1.7..2.3 allows the O(h^2) remainder).
    rng = np.random.default_rng(0)
    X0 = rng.standard_normal((40, 3))
    X0 /= np.linalg.norm(X0, axis=1)[:, None]
    B, V = np.diag([1.0, 2.0, 3.0]), np.diag([1.5, 1.0, 2.0])
    ref = simulate(X0, np.eye(3), B, V, 5.0, [0.0, 0.5, 1.0], rtol=1e-10, atol=1e-12)
    err = [np.max(np.abs(euler_naive(X0, B, V, 5.0, 1.0, n, 2) - ref)) for n in (200, 400, 800)]
    assert 1.7 < err[0] / err[1] < 2.3 and 1.7 < err[1] / err[2] < 2.3


@pytest.mark.parametrize("argv", [["--scale", "0"], ["--scale", "1.5"], ["--scale", "abc"], ["--scale", "nan"],
                                  ["--budget", "0"], ["--budget", "-1"], ["--budget", "x"],
                                  ["--json", "/nonexistent-dir-xyz/b.json"]])
def test_bad_input(argv):
    with pytest.raises(InputError):
        bench_cli.cmd_bench(parse(["bench", "--quiet"] + argv))


def test_run_all_rejects_bad_scale():
    with pytest.raises(ValueError, match="scale"):
        run_all(0.0)
