"""Reproducible to the bit: the same input gives the same bits however the numba kernel was compiled and whether
the sweep tasks were computed or read back from the task store.

The particle kernel (attnverify.numerics.kernel) used to let LLVM reassociate its sums; a freshly compiled kernel
and the same kernel loaded from numba's on-disk cache then summed in different orders, and
meanfield.terminal_phase's observed rate differed in its 10th digit between a first run (compiling, filling the
task store) and a later one. Each test runs fresh interpreters with their own numba cache directory: the first
compiles, the second loads the compiled kernel from that cache.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

PROBE = """
import hashlib, sys
import numpy as np
from attnverify.numerics import kernel as k
rng = np.random.default_rng(0)
out = []
for n, d in ((37, 2), (400, 2), (301, 3)):
    X = rng.standard_normal((n, d)); X /= np.linalg.norm(X, axis=1)[:, None]
    B, V = np.diag(np.arange(1.0, d + 1)), np.diag(np.arange(d, 0.0, -1))
    out.append(k.dense_moments(X @ B, X, X @ V.T, 31.6))
    starts = np.arange(n) % (n // 2); counts = np.full(n, n // 2)
    out.append(k.window_moments(X @ B, X, X @ V.T, 7.0, starts, counts))
    cols = np.concatenate([np.arange(i % 5, n, 3) for i in range(n)])
    indptr = np.concatenate([[0], np.cumsum([len(range(i % 5, n, 3)) for i in range(n)])])
    out.append(k.csr_moments(X @ B, X, X @ V.T, 7.0, indptr, cols))
hits = sum(sum(f.stats.cache_hits.values()) for f in (k._windows, k._csr))
print(hashlib.sha256(b"".join(m.tobytes() for m in out)).hexdigest(), hits)
"""


def _env(numba_cache) -> dict:
    return {**os.environ, "NUMBA_CACHE_DIR": str(numba_cache)}


def test_kernel_bits_do_not_depend_on_how_it_was_compiled(tmp_path):
    runs = [subprocess.run([sys.executable, "-c", PROBE], env=_env(tmp_path / "numba"), capture_output=True,
                           text=True, check=True).stdout.split() for _ in range(2)]
    (fresh, fresh_hits), (cached, cached_hits) = runs
    assert int(fresh_hits) == 0 and int(cached_hits) > 0, "the second interpreter did not load the cached kernel"
    assert fresh == cached


def test_terminal_phase_same_bits_with_and_without_the_task_store(tmp_path):
    """First run: a fresh numba cache and an empty task store (everything computed and stored); second: the same
    store (every task read back); third: no store (computed again, by the cached kernel)."""
    env = _env(tmp_path / "numba")
    observed = []
    for i, store in enumerate((["--cache-dir", str(tmp_path / "tasks")], ["--cache-dir", str(tmp_path / "tasks")],
                               ["--no-cache"])):
        out = tmp_path / f"r{i}.json"
        proc = subprocess.run([sys.executable, "-m", "attnverify", "run", "meanfield.terminal_phase", "--executor",
                               "serial", "--set", "cases=", "--json", str(out), *store], env=env, capture_output=True, text=True)
        assert proc.returncode in (0, 1), proc.stderr
        if i == 1:
            assert "0 computed" in proc.stderr, proc.stderr        # the second run reused every task
        [check] = json.loads(out.read_text())["checks"]
        observed.append((check["observed"], check["details"]))
    assert observed[0] == observed[1] == observed[2]
