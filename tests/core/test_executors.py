"""Sweeps give identical results on every executor: serial, a local process pool, a Dask cluster."""
from __future__ import annotations

import pytest

from attnverify import checks
from attnverify.cli import main
from attnverify.executors import make_executor
from attnverify.render.report import report_dict

CHECK = "meanfield.zero_temperature_flow"  # a fast check whose tasks go through ctx.map


def audit(kind: str) -> list[dict]:
    with make_executor(kind, jobs=2) as executor:
        doc = report_dict(checks.run([CHECK], seed=11, executor=executor))
    for entry in doc["checks"]:
        entry.pop("seconds")
    return doc["checks"]


def test_local_pool_and_dask_cluster_match_serial():
    pytest.importorskip("distributed")
    serial = audit("serial")
    assert serial[0]["verdict"] == "pass"
    assert audit("local") == serial
    assert audit("dask") == serial  # a real LocalCluster on loopback, two worker processes


@pytest.mark.parametrize("argv, words", [
    (["run", CHECK, "--executor", "spark"], "unknown executor 'spark'"),
    (["run", CHECK, "--scheduler", "tcp://127.0.0.1:8786"], "--scheduler needs --executor dask"),
    (["run", CHECK, "--jobs", "0"], "--jobs: needs at least one worker"),
])
def test_executor_options_are_validated(capsys, argv, words):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err


def test_unreachable_scheduler_is_a_clear_error(capsys):
    pytest.importorskip("distributed")
    assert main(["run", CHECK, "--executor", "dask", "--scheduler", "tcp://127.0.0.1:9"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot reach a Dask scheduler" in err
