"""Provenance in every output (attnverify.provenance): the JSON report, report.md and the LaTeX report record the
versions of Python and the numerical stack, the commit, the time (UTC) and platform, the profile, the seed and every
option that differs from its default; the same seed gives the same report apart from timings and this block."""
from __future__ import annotations

import json
import re
import subprocess
from datetime import datetime, timezone
from importlib import metadata

from attnverify import provenance
from attnverify.cli import main

CHECK = "meanfield.zero_temperature_flow"          # a check of about a second


def test_collect_records_what_produced_a_report():
    prov = provenance.collect(profile="quick", seed=3, options={"d": 3},
                              now=datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc))
    assert set(prov["packages"]) == {"sympy", "mpmath", "numpy", "scipy", "python-flint", "numba"}
    assert prov["packages"]["sympy"] == metadata.version("sympy")
    assert prov["packages"]["python-flint"] == metadata.version("python-flint")
    assert prov["time_utc"] == "2026-01-02T03:04:05Z" and prov["profile"] == "quick" and prov["seed"] == 3
    assert prov["options"]["d"] == 3 and prov["python"].count(".") == 2 and prov["platform"]
    line = provenance.summary(prov)
    assert "sympy " + metadata.version("sympy") in line and "seed 3" in line


def test_git_state_is_the_checkout_s():
    state = provenance.git_state()
    top = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                         cwd=__import__("pathlib").Path(provenance.__file__).parent.parent)
    if top.returncode != 0:
        assert state is None
    else:
        assert state is not None and state["commit"] == top.stdout.strip() and isinstance(state["dirty"], bool)


def test_every_output_records_it_and_two_runs_differ_only_there(tmp_path, capsys):
    outs = []
    for i in range(2):
        d = tmp_path / f"r{i}"
        assert main(["run", CHECK, "--quiet", "--executor", "serial", "--no-cache", "--seed", "5", "--report",
                     str(d)]) == 0
        outs.append(d)
    docs = [json.loads((d / "report.json").read_text()) for d in outs]
    for doc in docs:
        prov = doc["provenance"]
        assert prov["seed"] == 5 and prov["profile"] == "quick"
        assert prov["options"] == {"--executor": "serial", "ids": [CHECK], "--no-cache": True}
        for c in doc["checks"]:
            c.pop("seconds")
    assert provenance.without(docs[0]) == provenance.without(docs[1])
    md = (outs[0] / "report.md").read_text()
    assert re.search(r"\*Provenance:\* attnverify .*sympy .*seed 5", md)
    tex = tmp_path / "r.tex"
    assert main(["latex", "-o", str(tex), "--from-json", str(outs[0] / "report.json")]) == 0
    text = tex.read_text()
    assert "Provenance:" in text and docs[0]["provenance"]["time_utc"] in text
    assert f"numpy {metadata.version('numpy')}" in text
