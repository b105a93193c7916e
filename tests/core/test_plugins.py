"""Papers are plugins: the generic application names no paper, the built-in papers register through the
``attnverify.papers`` entry points, and a paper from outside (the example plugin) appears in every command with
no edit to the application."""
from __future__ import annotations

import ast
import re
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

import attnverify.checks.registry as registry
from attnverify.checks.plugin import Paper
from attnverify.cli import main

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "attnverify"


def _strings(tree: ast.AST) -> list[str]:
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def _identifiers(tree: ast.AST) -> list[str]:
    names = [n.id for n in ast.walk(tree) if isinstance(n, ast.Name)]
    names += [n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)]
    names += [a.name.split(".")[-1] for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))
              for a in n.names]
    names += [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module]
    return names


def paper_mentions(source: str, papers: list[Paper]) -> list[str]:
    """Where a module's source names a registered paper: its model or key as an id prefix or a quoted name in a
    string ("signal", "signal.x", "A.x", "Paper A"), or its packages (theory/<model>, numerics/<model>,
    checks/<model>: every part of a paper is named by its model) as an identifier."""
    tree = ast.parse(source)
    found = []
    for p in papers:
        text_patterns = [rf"(?<![\w.]){re.escape(p.model)}\.[a-z_]", rf"^{re.escape(p.model)}$",
                         rf"(?<![\w.]){re.escape(p.key)}\.[a-z_]{{3,}}", rf"\bPaper {re.escape(p.key)}\b"]
        for s in _strings(tree):
            for pat in text_patterns:
                if re.search(pat, s):
                    found.append(f"{p.model}: {pat!r} in {s[:60]!r}")
        for name in _identifiers(tree):
            if p.model in name.split("."):
                found.append(f"{p.model}: identifier {name!r}")
    return found


def test_the_checker_finds_a_planted_paper_name():
    papers = registry.papers()
    planted = 'X = "signal.objective_vs_montecarlo"\nfrom attnverify.theory.signal import recovery\n'
    assert len(paper_mentions(planted, papers)) >= 2
    assert paper_mentions('"""Reads every paper\'s checks."""\nimport signal\nsignal.SIGINT\n', papers) == [] or \
        all("identifier 'signal" in m for m in paper_mentions('import signal\n', papers))


@pytest.mark.parametrize("path", sorted(APP.rglob("*.py")), ids=lambda p: str(p.relative_to(APP)))
def test_generic_app_modules_name_no_paper(path):
    import dataclasses

    papers = list(registry.papers())
    source = path.read_text(encoding="utf-8")
    if re.search(r"^import signal$", source, re.M):           # the standard library's signal module (Ctrl-C)
        papers = [p for p in papers if p.model != "signal"] + [
            dataclasses.replace(p, model="signal_model_name_unused") for p in papers if p.model == "signal"]
    assert paper_mentions(source, papers) == []


def test_builtin_papers_register_through_the_entry_points():
    eps = {ep.name: ep.value for ep in entry_points(group=registry.GROUP)}
    for p in registry.papers():
        if p.package.startswith("attnverify.checks."):
            assert p.package == f"attnverify.checks.{p.model}"
            assert eps.get(p.model) == f"attnverify.checks.{p.model}.plugin:PAPER"
    keys = [p.key for p in registry.papers()]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)


@pytest.fixture()
def example(monkeypatch, tmp_path):
    """The example plugin of examples/plugin, registered as an installed package would be. Registered here without
    an entry point, which is what keys the kept ``list`` texts (attnverify.list_cache): so it gets a cache of its
    own, where no listing without it was kept by an earlier test."""
    monkeypatch.setenv("ATTNVERIFY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.syspath_prepend(str(ROOT / "examples" / "plugin"))
    sys.modules.pop("attnverify_partition", None)
    from attnverify_partition import PAPER

    from attnverify.checks.claims import CLAIMS
    from attnverify.checks.registry import REGISTRY

    others = tuple(p for p in registry._discovered() if p.model != PAPER.model)
    monkeypatch.setattr(registry, "_discovered", lambda: tuple(sorted((*others, PAPER), key=lambda p: p.key)))
    yield PAPER
    for cid in [c for c in REGISTRY if c.startswith(f"{PAPER.model}.")]:
        REGISTRY.pop(cid)
    for cid in [c for c in CLAIMS if c.startswith(f"{PAPER.key}.")]:
        CLAIMS.pop(cid)
    registry._loaded.difference_update(PAPER.module(m) for m in PAPER.modules)
    sys.modules.pop("attnverify_partition.check", None)


def test_the_example_plugin_is_small_and_imports_from_one_module():
    files = [p for p in (ROOT / "examples" / "plugin").rglob("*.py") if "egg-info" not in str(p)
             and "__pycache__" not in str(p)]
    assert sum(len(p.read_text().splitlines()) for p in files) < 150
    imported = {n.module if isinstance(n, ast.ImportFrom) else a.name for p in files
                for n in ast.walk(ast.parse(p.read_text())) if isinstance(n, (ast.Import, ast.ImportFrom))
                for a in (n.names if isinstance(n, ast.Import) else [n])}
    assert {m for m in imported if m and m.startswith("attnverify.") or m == "attnverify"} == {"attnverify.checks.plugin"}


def test_a_plugin_written_against_the_old_contract_is_told_what_changed():
    from attnverify.checks.plugin import check

    with pytest.raises(TypeError, match=r"Paper\(order=...\) is not part of the plugin contract since attnverify 0.2: "
                                        "a paper's checks are listed in the order of `modules`"):
        Paper(key="Q", model="q", title="t", citation="c", modules=("x.check",), order=("q.a",))
    with pytest.raises(TypeError, match="Paper\\(stated=...\\).*stated.toml"):
        Paper(key="Q", model="q", title="t", citation="c", package="x", modules=("check",), stated=("x", "s.toml"))
    with pytest.raises(TypeError, match="takes no argument 'claim': it is now compares"):
        check(id="q.a", claim="old", source="s")
    with pytest.raises(TypeError, match="takes no argument 'paper': it is now paper_profile"):
        check(id="q.a", compares="new", source="s", paper={"n": 1})


def test_an_entry_point_that_is_not_a_paper_is_named(monkeypatch):
    class EntryPoint:
        name, value = "old", "old_plugin:PAPER"

        @staticmethod
        def load():
            return {"key": "Q"}
    registry._discovered.cache_clear()
    monkeypatch.setattr(registry, "entry_points", lambda group: [EntryPoint()])
    try:
        with pytest.raises(RuntimeError, match="the paper plugin 'old' .* is a dict, not an attnverify.checks.plugin"):
            registry._discovered()
    finally:
        monkeypatch.undo()
        registry._discovered.cache_clear()


def test_an_outside_paper_appears_in_every_command(example, tmp_path, capsys):
    assert main(["list", "--models"]) == 0
    assert "partition  (Paper Z" in capsys.readouterr().out
    assert main(["list", "partition"]) == 0
    assert "partition.mean" in capsys.readouterr().out
    assert main(["run", "partition", "--quiet", "--executor", "serial", "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert "partition.mean" in out and "PASS" in out and "Z.mean" in out and "HOLDS" in out
    assert main(["derive", "partition"]) == 0
    assert "exp" in capsys.readouterr().out
    tex = tmp_path / "d.tex"
    assert main(["latex", "partition", "--derivations-only", "-o", str(tex)]) == 0
    text = tex.read_text()
    assert "partition function" in text
    assert text.count(r"\section[") == sum(1 for _ in example.sections())       # the papers named, no other
    assert main(["list", "--quantities"]) == 0
    assert "partition.mean_Z" in capsys.readouterr().out


def test_an_outside_claim_can_be_refuted(example):
    from attnverify.checks.claims import CLAIMS, evaluate_claim
    from attnverify.checks.runner import run

    results = {r.id: r for r in run(["partition.mean"], seed=0).results}
    wrong = example and __import__("attnverify.checks.claims", fromlist=["statement_of"]).statement_of("Z.mean")
    row = evaluate_claim(CLAIMS["Z.mean"], results, wrong.restated("L*exp(beta**2*sigma**2)"))
    assert row.verdict == "refuted", row.reason
