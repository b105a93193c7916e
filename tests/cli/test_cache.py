"""The persistent task store (attnverify.checks.store): exact round trips, corrupt entries recomputed, a killed run resumed to
the same report, and a Dask worker killed mid-sweep changing nothing."""
from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from attnverify import checks
from attnverify.cli import main
from attnverify.render.report import report_dict
from attnverify.checks.context import Context
from attnverify.checks.store import TaskStore, Unstorable, decode, encode

# meanfield.w2_bound at a small size (a few seconds in all; the resolution rule is relaxed: the store, not the
# asymptotics, is under test here)
SMALL = {"n_particles": 60, "min_per_window": 0.5, "n_times": 9, "t_max": 4.0, "betas": (10.0, 14.0, 20.0, 28.0, 40.0, 56.0, 80.0, 112.0),
         "rtol": 1e-7}
W2 = "meanfield.w2_bound"


@dataclasses.dataclass(frozen=True)
class StoredRun:
    """One run of W2 at SMALL with a fresh store: its report (:func:`strip`), the store's counts, the store's
    directory."""
    report: dict
    stats: Any
    root: Path


@pytest.fixture(scope="module")
def w2_stored(tmp_path_factory) -> StoredRun:
    """W2 at SMALL with a fresh store, run once for the module: the first run of test_corrupt_entries_are_recomputed
    (which damages a copy of its store) and the task count the other tests expect (:func:`n_tasks`)."""
    root = tmp_path_factory.mktemp("w2-stored") / "cache"
    store = TaskStore(root)
    report = strip(report_dict(checks.run([W2], seed=0, overrides=SMALL, store=store)))
    return StoredRun(report, store.stats, root)


@pytest.fixture(scope="module")
def n_tasks(w2_stored) -> int:
    """How many storable tasks one run of W2 at SMALL has (counted by a store, not assumed)."""
    return w2_stored.stats.stored


@pytest.fixture(scope="module")
def w2_clean() -> dict:
    """The report of W2 at SMALL without a store (:func:`strip`), run once for the module; tests compare with it,
    never change it."""
    return strip(report_dict(checks.run([W2], seed=0, overrides=SMALL)))


def _sets() -> list[str]:
    """SMALL as the command line's --set options."""
    return [x for k, v in SMALL.items() for x in ("--set", f"{k}={','.join(map(str, v)) if isinstance(v, tuple) else v}")]


@pytest.fixture(scope="module")
def w2_cli_no_cache() -> tuple[int, str]:
    """``attnverify run`` of W2 at SMALL with --no-cache (not --quiet): its exit code and what it wrote on stderr."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(["run", W2, "--executor", "serial", "--no-cache", *_sets()])
    return code, err.getvalue()


def strip(doc: dict) -> dict:
    """The report without its timings and its provenance (the only fields that differ between two runs of the
    same code)."""
    doc.pop("provenance", None)
    for c in doc["checks"]:
        c.pop("seconds")
    return doc


def rounding_close(a, b, rel: float = 1e-12) -> bool:
    """Same structure and non-float values; floats equal to ``rel`` relative (a few ulps of summation order)."""
    if isinstance(a, float) and isinstance(b, float):
        return (np.isnan(a) and np.isnan(b)) or abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)
    if type(a) is not type(b):
        return False
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(rounding_close(x, y, rel) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(rounding_close(a[k], b[k], rel) for k in a)
    return a == b


def same(a, b) -> bool:
    """Equal values and equal types, arrays bit for bit with the same dtype and shape."""
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    if isinstance(a, np.generic):
        return a.dtype == b.dtype and a.tobytes() == b.tobytes()
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, float) and np.isnan(a):
        return np.isnan(b)
    return a == b


def test_round_trip_is_exact(tmp_path):
    value = ({"time": np.linspace(0, 1, 5), "rho": np.arange(6, dtype=np.int32).reshape(2, 3), "x": 0.1 + 0.2},
             [float("nan"), float("inf"), -0.0, 1e-310, 2**70, True, None, "text"],
             np.float32(1.5), np.int64(-3), np.array(2.5), np.array([1 + 2j]), np.zeros((0, 3)),
             np.asfortranarray(np.arange(6.0).reshape(2, 3)), (np.bool_(True),))
    tree, arrays = encode(value)
    json.dumps(tree)                                        # the structure is plain JSON
    assert same(decode(tree, arrays), value)
    store = TaskStore(tmp_path, version="v")                # and through a file on disk
    assert store.save("toy", "key", value)
    hit, back = store.load("toy", "key")
    assert hit and same(back, value)
    assert store.load("toy", "other key") == (False, None)


@pytest.mark.parametrize("bad", [object(), np.array([object()]), {1: 2.0}, {"a": [lambda: 0]}, {3.0}])
def test_non_data_is_not_encoded(bad):
    with pytest.raises(Unstorable):
        encode(bad)


def square(x):
    return x * x


def opaque(x):
    return {"value": x, "obj": object()}


def test_store_and_reuse_in_context(tmp_path):
    store = TaskStore(tmp_path, version="v1")
    ctx = Context("toy", 0, "quick", store=store.for_check("toy", {"n": 1}, 0))
    assert ctx.map(square, [(np.arange(3.0),), (2.0,)])[1] == 4.0
    assert (store.stats.computed, store.stats.reused) == (2, 0)
    again = TaskStore(tmp_path, version="v1")
    got = Context("toy", 0, "quick", store=again.for_check("toy", {"n": 1}, 0)).map(square, [(np.arange(3.0),), (2.0,)])
    assert same(got[0], np.arange(3.0) ** 2) and (again.stats.computed, again.stats.reused) == (0, 2)
    # any change of check id, parameters, seed or code version is a different key
    for cid, params, seed, version in (("toy2", {"n": 1}, 0, "v1"), ("toy", {"n": 2}, 0, "v1"),
                                       ("toy", {"n": 1}, 1, "v1"), ("toy", {"n": 1}, 0, "v2")):
        other = TaskStore(tmp_path, version=version)
        Context(cid, seed, "quick", store=other.for_check(cid, params, seed)).map(square, [(2.0,)])
        assert other.stats.reused == 0, (cid, params, seed, version)
    # a result that is not data is returned but not stored
    odd = TaskStore(tmp_path, version="v1")
    out = Context("toy", 0, "quick", store=odd.for_check("toy", {}, 0)).map(opaque, [(1.0,)])
    assert out[0]["value"] == 1.0 and odd.stats.unstorable == 1 and odd.stats.stored == 0


def _entries(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.npz") if not p.name.startswith(".tmp-"))


def _damage(path: Path, how: str) -> None:
    data = path.read_bytes()
    if how == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif how == "flipped":                                 # one byte of the stored numbers changed
        with np.load(path, allow_pickle=False) as z:
            members = {k: z[k] for k in z.files}
        a = members["a0"].copy()
        a.view(np.uint8)[3] ^= 1
        members["a0"] = a
        np.savez(path, **members)
    elif how == "pickle":                                  # an object array: loading it would need a pickle
        with np.load(path, allow_pickle=False) as z:
            members = {k: z[k] for k in z.files}
        members["a0"] = np.array([object()], dtype=object)
        np.savez(path, **members)
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "not-a-zip":
        path.write_text("hello")


def test_corrupt_entries_are_recomputed(tmp_path, w2_stored, w2_clean, n_tasks):
    clean = w2_clean
    first = w2_stored.report                               # a first run with a store: the same report
    assert first == clean and w2_stored.stats.stored == n_tasks > 1
    cache = tmp_path / "cache"
    shutil.copytree(w2_stored.root, cache)                 # its store, damaged below
    files = _entries(cache)
    hows = ["truncated", "flipped", "pickle", "empty", "not-a-zip"]
    for path, how in zip(files, hows):
        _damage(path, how)
    with pytest.raises((zipfile.BadZipFile, ValueError, OSError, EOFError)):
        with np.load(files[0], allow_pickle=False) as z:   # the damage is real
            z["tree"]
    again = TaskStore(cache)
    rerun = strip(report_dict(checks.run([W2], seed=0, overrides=SMALL, store=again)))
    assert rerun == clean
    assert (again.stats.corrupt, again.stats.computed, again.stats.reused) == (5, 5, n_tasks - 5)
    final = TaskStore(cache)
    checks.run([W2], seed=0, overrides=SMALL, store=final)
    assert (final.stats.corrupt, final.stats.reused) == (0, n_tasks)


SCRIPT = textwrap.dedent('''
    import sys, time
    import numpy as np
    from attnverify.cli import main
    from attnverify.checks.evidence import Evidence
    from attnverify.checks.params import Param
    from attnverify.checks.registry import check

    def slow_task(k, seed):
        time.sleep(0.2)
        rng = np.random.default_rng(seed)
        return {"k": k, "x": rng.standard_normal(3), "pair": (float(rng.uniform()), np.int64(k))}

    def sweep(p, ctx):
        out = ctx.map(slow_task, [(k, s) for k, s in enumerate(ctx.seeds(p["n"]))])
        total = float(sum(o["x"].sum() + o["pair"][0] for o in out))
        return Evidence(metric="sum", observed=total, threshold=1e9, reason="toy", passed=True,
                        details={"x": [o["x"] for o in out], "k": [int(o["pair"][1]) for o in out]})

    check(id="toy.sweep", compares="toy", source="toy", params=[Param("n", int, 12, "tasks")])(sweep)
    sys.exit(main(["run", "toy.sweep", "--executor", "serial"] + sys.argv[1:]))
''')


def test_killed_run_resumes_to_the_same_report(tmp_path):
    script = tmp_path / "sweep.py"
    script.write_text(SCRIPT)
    cache = tmp_path / "cache"
    run = lambda *args: subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True)  # noqa
    ref = run("--no-cache", "--json", str(tmp_path / "ref.json"))
    assert ref.returncode == 0, ref.stderr
    proc = subprocess.Popen([sys.executable, str(script), "--cache-dir", str(cache), "--json", str(tmp_path / "x.json")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while len(_entries(cache)) < 3 and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done = len(_entries(cache))
    assert 3 <= done < 12 and not (tmp_path / "x.json").exists()      # killed mid-sweep, no report written
    resumed = run("--cache-dir", str(cache), "--json", str(tmp_path / "resumed.json"))
    assert resumed.returncode == 0, resumed.stderr
    assert f"{done} tasks reused, {12 - done} computed" in resumed.stderr   # only the missing tasks ran
    a, b = (json.loads((tmp_path / f).read_text()) for f in ("ref.json", "resumed.json"))
    assert strip(a) == strip(b)


def test_cli_cache_options(tmp_path, capsys, n_tasks, w2_cli_no_cache):
    cache = tmp_path / "c"
    sets = _sets()
    code = main(["run", W2, "--executor", "serial", "--cache-dir", str(cache), *sets])
    assert code in (0, 1)                                  # the verdict at this tiny size is not the point here
    assert f"0 tasks reused, {n_tasks} computed" in capsys.readouterr().err
    assert main(["run", W2, "--executor", "serial", "--cache-dir", str(cache), *sets]) == code
    assert f"{n_tasks} tasks reused, 0 computed" in capsys.readouterr().err
    no_cache_code, no_cache_err = w2_cli_no_cache          # the same run with --no-cache
    assert no_cache_code == code
    assert "tasks reused" not in no_cache_err
    assert main(["run", W2, "--no-cache", "--cache-dir", str(cache)]) == 2
    (tmp_path / "file").write_text("x")
    assert main(["run", W2, "--cache-dir", str(tmp_path / "file")]) == 2
    assert "--cache-dir" in capsys.readouterr().err


def test_killed_dask_worker_changes_nothing(tmp_path, w2_clean, n_tasks):
    pytest.importorskip("distributed")
    from attnverify.executors import make_executor

    clean = w2_clean
    store = TaskStore(tmp_path / "cache")
    with make_executor("dask", jobs=2) as executor:
        client = executor._client
        addresses = [client.scheduler.address, *client.scheduler_info()["workers"]]
        assert all(a.startswith("tcp://127.0.0.1:") for a in addresses), addresses   # loopback only
        pids = client.run(os.getpid)
        killed = {}

        def kill_one():
            while store.stats.stored < 1 and time.time() < deadline:
                time.sleep(0.01)
            killed["at"] = store.stats.stored
            os.kill(next(iter(pids.values())), signal.SIGKILL)

        deadline = time.time() + 120
        killer = threading.Thread(target=kill_one)
        killer.start()
        report = checks.run([W2], seed=0, overrides=SMALL, executor=executor, store=store)
        killer.join()
    assert killed["at"] < n_tasks                                   # the worker died mid-sweep
    assert report.results[0].verdict != "error", report.results[0].error
    # Same verdicts, claims and figures; the numbers agree to rounding. Bit-for-bit equality held in most runs but
    # not in every one: after a worker is lost, a recomputed task can differ in the last ulps (seen once in a full
    # CI-like run, 1e-16 relative in W2 values); the cause is not yet found (issue 14).
    assert rounding_close(strip(report_dict(report)), clean)


# ----------------------------------------------------------------------------------------------------------------
# Monte Carlo estimates are stored; a store or cache location that cannot be used never makes a check ERROR
# ----------------------------------------------------------------------------------------------------------------
def test_estimates_round_trip_exactly(tmp_path):
    from attnverify.numerics.signal.mc import Estimate

    rng = np.random.default_rng(3)
    est = Estimate(rng.standard_normal(5), np.cov(rng.standard_normal((5, 40))), 40, np.int64(38))
    store = TaskStore(tmp_path, version="v")
    assert store.save("toy", "key", [est, {"e": est}])
    hit, [back, inner] = store.load("toy", "key")
    for b in (back, inner["e"]):
        assert hit and type(b) is Estimate and (b.n, b.dof) == (40, 38) and type(b.dof) is np.int64
        assert b.mean.tobytes() == est.mean.tobytes() and b.cov.tobytes() == est.cov.tobytes()


@dataclasses.dataclass(frozen=True)
class NotNumerics:
    x: float


@pytest.mark.parametrize("module, name", [("attnverify.cli.command_line", "Interrupted"), ("os", "path"),
                                          ("attnverify.numerics.signal.mc", "estimate"),
                                          ("attnverify.numerics.nonexistent", "Estimate"),
                                          ("attnverify.numerics.signal.mc", "Estimate.__init__")])
def test_only_numerics_dataclasses_are_rebuilt(tmp_path, module, name):
    """A dataclass outside the numerics package is not stored; an entry naming anything but a numerics dataclass
    (even one with a valid digest: whoever can write the store can write one) is unsound and recomputed."""
    from attnverify.checks import store as S
    from attnverify.numerics.signal.mc import Estimate

    with pytest.raises(Unstorable):
        encode(NotNumerics(1.0))
    tree, arrays = encode(Estimate(np.zeros(2), np.eye(2), 3, 2))
    assert decode(tree, arrays).n == 3
    forged = dict(tree, m=module, c=name)
    with pytest.raises(ValueError, match="not a numerics dataclass"):
        decode(forged, arrays)
    st = TaskStore(tmp_path, version="v")
    st._write("toy", "key", forged, arrays)                  # a well-formed entry with a valid digest
    assert st.load("toy", "key") == (False, None) and st.stats.corrupt == 1
    assert S._dataclass(module, name) is None


def test_monte_carlo_checks_store_every_task(tmp_path):
    """signal.low_temperature's tasks return Estimates: all stored, all reused by a rerun, same report."""
    store = TaskStore(tmp_path)
    first = strip(report_dict(checks.run(["signal.low_temperature"], seed=0, store=store)))
    assert store.stats.unstorable == 0 and store.stats.stored == store.stats.computed > 0
    again = TaskStore(tmp_path)
    second = strip(report_dict(checks.run(["signal.low_temperature"], seed=0, store=again)))
    assert again.stats.reused == store.stats.stored and again.stats.computed == 0
    assert second == first


def test_a_store_that_fails_mid_run_is_no_error(tmp_path, monkeypatch, capsys, n_tasks, w2_cli_no_cache):
    """A full disk (every write fails) while a check runs: the results are used, counted as not stored, and the
    verdict is the one of a run without a store."""
    def full(self, *args):
        raise OSError(28, "No space left on device")

    expected = n_tasks
    without, _ = w2_cli_no_cache                           # the exit code of the same run without a store
    monkeypatch.setattr(TaskStore, "_write", full)
    sets = _sets()
    out = tmp_path / "r.json"
    assert main(["run", W2, "--executor", "serial", "--cache-dir", str(tmp_path / "c"), "--json", str(out),
                 *sets]) == without
    assert json.loads(out.read_text())["checks"][0]["verdict"] != "error"
    assert f"{expected} results not stored (No space left on device)" in capsys.readouterr().err


def _unusable(tmp_path) -> str:
    (tmp_path / "a-file").write_text("x")
    return str(tmp_path / "a-file" / "cache")            # below a file: cannot be created, for any user


@pytest.mark.parametrize("argv", [["run", "meanfield.zero_temperature_flow", "--quiet"], ["derive", "meanfield"],
                                  ["latex", "-o", "OUT", "--derivations-only"], ["claims", "--quiet"]])
def test_unusable_cache_dir_from_the_environment_is_refused_up_front(tmp_path, monkeypatch, capsys, argv):
    monkeypatch.setattr(checks.runner, "run_one", lambda *a, **k: pytest.fail("a check ran"))
    monkeypatch.setenv("ATTNVERIFY_CACHE_DIR", _unusable(tmp_path))
    assert main([a.replace("OUT", str(tmp_path / "a.tex")) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("attnverify: error: ATTNVERIFY_CACHE_DIR: cannot use ")
    assert "Not a directory" in err and "ATTNVERIFY_NO_CACHE=1" in err


def test_unusable_default_cache_location_means_no_store_and_one_warning(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("ATTNVERIFY_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", _unusable(tmp_path))
    monkeypatch.setattr("attnverify.cache._warned", set())
    assert main(["run", "meanfield.zero_temperature_flow", "--executor", "serial"]) == 0
    err = capsys.readouterr().err
    assert err.count("attnverify: warning: no task store: cannot use") == 1 and "tasks reused" not in err
