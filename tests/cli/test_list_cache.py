"""``attnverify list`` answers from the cache: the second listing prints the same text without importing a check
(no SciPy, SymPy or numba loaded), and any change of a source, an argument or a model file's bytes changes the key,
so a kept listing is never stale."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from attnverify import list_cache

PROBE = ("import json, sys\nfrom attnverify.cli import main\nmain(sys.argv[1:])\n"
         "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('scipy', 'sympy', 'numba'))\n"
         "print(json.dumps(heavy), file=sys.stderr)")


def _list(cache_dir, *argv):
    env = {**os.environ, "ATTNVERIFY_CACHE_DIR": str(cache_dir), "COLUMNS": "100"}
    env.pop("ATTNVERIFY_NO_CACHE", None)
    out = subprocess.run([sys.executable, "-c", PROBE, "list", *argv], capture_output=True, text=True, env=env,
                         check=True)
    return out.stdout, json.loads(out.stderr.strip().splitlines()[-1])


def test_a_repeated_listing_is_the_same_text_and_imports_no_check(tmp_path):
    cache_dir = tmp_path / "cache"
    first, heavy_first = _list(cache_dir)
    second, heavy_second = _list(cache_dir)
    assert first == second and "meanfield.w2_bound" in first
    assert heavy_first                   # the first listing imported the checks (and SciPy/SymPy with them)
    assert heavy_second == []            # the kept one did not
    params, _ = _list(cache_dir, "--params")
    assert params != first and "--set " in params     # other arguments: another entry


def test_the_key_follows_every_source_argument_and_model_file(tmp_path, monkeypatch):
    src = tmp_path / "pkg"
    src.mkdir()
    (src / "a.py").write_text("x = 1\n")
    monkeypatch.setattr(list_cache, "_package_roots", lambda: [src])
    base = list_cache.key(["x"], 100)
    assert list_cache.key(["x"], 100) == base
    (src / "a.py").write_text("x = 2\n")
    edited = list_cache.key(["x"], 100)
    assert edited != base
    (src / "b.toml").write_text("[model]\n")
    assert list_cache.key(["x"], 100) != edited
    assert list_cache.key(["y"], 100) != list_cache.key(["x"], 100)
    assert list_cache.key(["x"], 80) != list_cache.key(["x"], 100)
    model = tmp_path / "m.toml"
    model.write_text("a = 1\n")
    k1 = list_cache.key([str(model)], 100)
    model.write_text("a = 2\n")
    assert list_cache.key([str(model)], 100) != k1


def test_without_a_cache_the_listing_is_computed(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ATTNVERIFY_NO_CACHE", "1")
    calls = []
    text = list_cache.listing(["--params=False"], 100, lambda: calls.append(1) or "listed\n")
    assert text == "listed\n" and calls == [1]
    assert list_cache.listing(["--params=False"], 100, lambda: calls.append(1) or "listed\n") == "listed\n"
    assert calls == [1, 1]
