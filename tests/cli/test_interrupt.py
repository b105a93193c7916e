"""Ctrl-C during ``attnverify run``: one line on stderr (no worker traceback), the partial JSON kept, and a rerun of
the same command resumes without --force. The test sends SIGINT to the command's whole process group, as a
terminal does, so the pool's or the cluster's workers receive it too."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

FAST, SLOW = "meanfield.zero_temperature_flow", "signal.equilibria_stability"   # ~2 s, then ~20 s of sweeps
#: SLOW with 8x its initial samples: minutes of sweeps, so that it is surely still running 3 s after FAST finished,
#: on a loaded machine and with every derivation already cached (a run where SLOW had finished before the Ctrl-C
#: exited 0); an interrupted run never pays for them
SLOWER = ("--set", "n_samples=8000", "--quiet")        # quiet: no note on stderr about the override


def finished_checks(path) -> int:
    try:
        return len(json.loads(path.read_text())["checks"])
    except (OSError, ValueError, KeyError):
        return 0


@pytest.mark.parametrize("executor", ["local", "dask"])
def test_ctrl_c_prints_one_line_keeps_the_partial_json_and_resumes(tmp_path, executor):
    if executor == "dask":
        pytest.importorskip("distributed")
    out, tasks = tmp_path / "r.json", tmp_path / "tasks"
    argv = [sys.executable, "-m", "attnverify", "run", FAST, SLOW, "--json", str(out), "--cache-dir", str(tasks),
            "--executor", executor, "--jobs", "2", *SLOWER]
    # a terminal's Ctrl-C reaches a command whose SIGINT is at its default; a child inherits an ignored SIGINT, and
    # in the full suite the worker's SIGINT was found ignored by the time this test ran (the command then ran to
    # the end and exited 0), so the child starts from the default, as from a shell
    inherited = signal.getsignal(signal.SIGINT)
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 120
        while finished_checks(out) < 1:
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read()
            time.sleep(0.2)
        time.sleep(3.0)                              # the second check's sweep is running on the workers
        assert proc.poll() is None
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, (err, f"SIGINT in the test process: {inherited}")
    assert "Traceback" not in err and err.count("\n") == 1, err
    assert err.startswith("attnverify: interrupted after 1 of 2 checks (partial report in ")
    assert f"rerun the same command to resume (finished sweep tasks are reused from {tasks})" in err
    doc = json.loads(out.read_text())
    assert doc["complete"] is False and [c["id"] for c in doc["checks"]] == [FAST]
    # the rerun replaces its own partial report without --force (here with the fast check only, to stay cheap)
    rerun = subprocess.run([*argv[:5], "--json", str(out), "--cache-dir", str(tasks), "--executor", "serial"],
                           capture_output=True, text=True, timeout=120)
    assert rerun.returncode == 0, rerun.stderr
    assert json.loads(out.read_text())["complete"] is True
    assert "tasks reused" in rerun.stderr and " 0 tasks reused" not in rerun.stderr



def _workers(pid: int) -> dict[int, bool]:
    """The child processes of ``pid`` (Linux /proc), each with whether it ignores SIGINT (its SigIgn mask)."""
    out = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status") as f:
                status = dict(line.split(":", 1) for line in f if ":" in line)
        except OSError:
            continue
        if int(status.get("PPid", "0").strip()) == pid:
            out[int(entry)] = bool(int(status["SigIgn"].strip(), 16) & (1 << (signal.SIGINT - 1)))
    return out


def _interrupted(args: list[str], ready) -> tuple[int, str]:
    """``attnverify ARGS`` started as from a shell (SIGINT at its default, its own process group), sent SIGINT as a
    terminal does once ``ready(proc)`` returns: (its exit status, its stderr)."""
    proc = subprocess.Popen([sys.executable, "-m", "attnverify", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        ready(proc)
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    return proc.returncode, err


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads the worker processes' signal masks through /proc")
@pytest.mark.parametrize("argv", [
    ["--power", "--only", "signal.objective_vs_montecarlo", "meanfield.zero_temperature_flow", "--seeds", "1"],
    ["--mutants", "--only", "J_sign_flip", "finite_size_dropped"],
], ids=["power", "mutants"])
def test_ctrl_c_during_a_parallel_selftest_prints_one_line(argv):
    """The self-test's own worker pools (--jobs 2) ignore SIGINT as the run's pool does, and the parent stops them:
    an idle worker printed a KeyboardInterrupt traceback before. Every worker must come to ignore SIGINT (read from
    /proc, so the test does not depend on which worker is idle when the signal comes); then SIGINT goes to the
    whole process group, as a terminal sends it, and the command ends with its one line."""
    def workers_ignore_sigint(proc) -> None:
        deadline = time.monotonic() + 120
        while not ((w := _workers(proc.pid)) and len(w) >= 2 and all(w.values())):
            assert proc.poll() is None and time.monotonic() < deadline, (w, proc.stderr.read())
            time.sleep(0.1)

    returncode, err = _interrupted(["selftest", *argv, "--jobs", "2"], workers_ignore_sigint)
    assert returncode == 130, err
    assert "Traceback" not in err and err.strip().splitlines()[-1] == "attnverify: interrupted", err


def test_ctrl_c_during_a_model_sweep_keeps_the_rows_so_far(tmp_path):
    """A model sweep runs for hours and wrote its JSON only at the end: Ctrl-C lost every row. Now the rows so far
    are written, marked incomplete, with the one line."""
    out = tmp_path / "sweep.json"
    def two_runs_done(proc) -> None:                 # their progress lines
        seen = 0
        while seen < 2:
            line = proc.stderr.readline()
            assert line or proc.poll() is None, "the sweep ended before two runs"
            seen += line.startswith("selftest: tsc model ")

    returncode, err = _interrupted(["selftest", "--models", "50", "--papers", "tsc", "--only", "tsc.horizons",
                                    "--json", str(out)], two_runs_done)
    assert returncode == 130, err
    assert "Traceback" not in err and err.strip().splitlines()[-1].startswith("attnverify: interrupted after "), err
    doc = json.loads(out.read_text())
    assert doc["complete"] is False and 2 <= len(doc["rows"]) < 50
    assert all(r["check"] == "tsc.horizons" for r in doc["rows"]) and "tsc.horizons" in doc["checks"]
