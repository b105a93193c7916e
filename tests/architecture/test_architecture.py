"""The architecture, enforced by reading the source with ``ast`` (nothing is imported):

* layers: ``theory`` and ``numerics`` never import each other, nor ``checks``; nothing in ``theory``, ``numerics``
  or ``checks`` imports an app module (``attnverify`` itself or ``attnverify.X`` for X not one of the three);
* checks are leaves: no check module (a module of a paper's package ``checks/<paper>/`` that defines a check with
  the ``@check`` decorator) imports another check module, and neither do the shared helpers (a paper's
  ``_``-modules such as ``_model.py``, and ``checks/stats.py``); shared pieces live there, in
  ``checks/framework.py``, ``checks/claims.py`` or numerics. A paper's other modules (its adapter, formulas,
  claims) may import its checks;
* no import cycle among the project's modules (imports inside functions count: they are dependencies too);
* no module over MAX_LINES lines unless LONG_MODULES names it with the reason.

Imports are resolved against the repository's module map (``setup.py`` installs ``theory/`` as
``attnverify.theory`` and so on). The rules are functions of an import graph, so each is also tested on a small
synthetic graph that breaks it.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ROOTS = {"attnverify": "attnverify", "attnverify.theory": "theory", "attnverify.numerics": "numerics",
         "attnverify.checks": "checks"}
LOWER = ("attnverify.theory", "attnverify.numerics", "attnverify.checks")
MAX_LINES = 500
# Modules allowed over MAX_LINES, each with the reason.
LONG_MODULES: dict[str, str] = {}


@dataclass(frozen=True)
class Module:
    name: str
    source: str
    is_package: bool = False


# --------------------------------------------------------------------------------------------- reading the tree
def module_map(repo: Path = REPO) -> dict[str, Module]:
    """Every project module (dotted name -> Module) under the folders that ROOTS maps; a folder nested in another
    root's folder belongs to the longer name."""
    out: dict[str, Module] = {}
    for prefix, folder in ROOTS.items():
        base = repo / folder
        for path in sorted(base.rglob("*.py")):
            rel = path.relative_to(base).with_suffix("").parts
            if prefix == "attnverify" and rel[0] in ("theory", "numerics", "checks") or "__pycache__" in rel:
                continue
            is_pkg = rel[-1] == "__init__"
            name = ".".join((prefix, *rel[:-1]) if is_pkg else (prefix, *rel))
            out[name] = Module(name, path.read_text(encoding="utf-8"), is_pkg)
    return out


def imports(mod: Module, known: set[str]) -> set[str]:
    """The project modules that ``mod`` imports anywhere in its body: ``import a.b`` gives a.b; ``from a import b``
    gives a.b when that is a module, else a; relative imports are resolved against ``mod``'s package. A name
    under ``attnverify`` that is no known module is cut to its longest known prefix, or kept as written (it still
    names the layer it reaches)."""
    out: set[str] = set()
    package = mod.name if mod.is_package else mod.name.rpartition(".")[0]
    for node in ast.walk(ast.parse(mod.source)):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[:len(parts) - node.level + 1]
                base = ".".join(p for p in (*parts, base) if p)
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        out.update(_resolve(n, known) for n in targets if n == "attnverify" or n.startswith("attnverify."))
    out.discard(mod.name)
    return out


def _resolve(name: str, known: set[str]) -> str:
    """The longest prefix of ``name`` that is a known module (``a.b.f`` for a function f of module a.b), else name."""
    parts = name.split(".")
    return next((".".join(parts[:k]) for k in range(len(parts), 0, -1) if ".".join(parts[:k]) in known), name)


def graph(modules: dict[str, Module]) -> dict[str, set[str]]:
    known = set(modules)
    return {name: imports(mod, known) for name, mod in modules.items()}


# --------------------------------------------------------------------------------------------- the rules
def _layer(name: str) -> str:
    for lower in LOWER:
        if name == lower or name.startswith(lower + "."):
            return lower.rpartition(".")[2]
    return "app"


def layer_violations(edges: dict[str, set[str]]) -> list[str]:
    """theory <-/-> numerics, neither imports checks, and none of the three imports the app."""
    forbidden = {"theory": {"numerics", "checks", "app"}, "numerics": {"theory", "checks", "app"},
                 "checks": {"app"}, "app": set()}
    return [f"{a} ({_layer(a)}) imports {b} ({_layer(b)})" for a in sorted(edges) for b in sorted(edges[a])
            if _layer(b) in forbidden[_layer(a)]]


def _paper_module(name: str) -> tuple[str, str] | None:
    """(paper, module) for attnverify.checks.<paper>.<module>[...], else None."""
    parts = name.split(".")
    if len(parts) >= 4 and parts[:2] == ["attnverify", "checks"]:
        return parts[2], parts[3]
    return None


def defines_a_check(source: str) -> bool:
    """The source decorates a function with ``check(...)`` (attnverify.checks.framework.check, by any import)."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for dec in node.decorator_list:
                fn = dec.func if isinstance(dec, ast.Call) else dec
                if isinstance(fn, ast.Name) and fn.id == "check" or isinstance(fn, ast.Attribute) and fn.attr == "check":
                    return True
    return False


def check_modules(modules: dict[str, Module]) -> set[str]:
    """The modules of the papers' check packages that define a check."""
    return {n for n, m in modules.items() if _paper_module(n) and defines_a_check(m.source)}


def check_import_violations(edges: dict[str, set[str]], checks: set[str]) -> list[str]:
    """A check module, a paper's ``_``-module or checks/stats.py that imports a check module (``checks``)."""
    out = []
    for a in sorted(edges):
        pm = _paper_module(a)
        if a in checks or a == "attnverify.checks.stats" or pm and pm[1].startswith("_"):
            out += [f"{a} imports the check module {b}" for b in sorted(edges[a] & checks)]
    return out


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles: strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(out)


def length_violations(modules: dict[str, Module], allowed: dict[str, str], limit: int = MAX_LINES) -> list[str]:
    """Modules over ``limit`` lines that ``allowed`` does not name, and entries of ``allowed`` that are stale (the
    module is gone or no longer over the limit), or give no reason."""
    lines = {name: len(mod.source.splitlines()) for name, mod in modules.items()}
    out = [f"{n}: {k} lines > {limit}" for n, k in sorted(lines.items()) if k > limit and n not in allowed]
    out += [f"{n}: listed as long, but it has {lines[n]} lines" if n in lines else f"{n}: listed as long, no such module"
            for n in sorted(allowed) if lines.get(n, 0) <= limit]
    out += [f"{n}: listed as long without a reason" for n, why in sorted(allowed.items()) if not why.strip()]
    return out


# --------------------------------------------------------------------------------------------- the real tree
@pytest.fixture(scope="module")
def tree() -> tuple[dict[str, Module], dict[str, set[str]]]:
    modules = module_map()
    return modules, graph(modules)


def test_the_module_map_covers_the_tree(tree):
    modules, edges = tree
    for name in ("attnverify.cli.command_line", "attnverify.theory.certified", "attnverify.theory.meanfield",
                 "attnverify.theory.meanfield.model", "attnverify.numerics.meanfield.particles", "attnverify.checks.stats",
                 "attnverify.checks.signal._model", "attnverify.checks.meanfield.w2"):
        assert name in modules
    assert modules["attnverify.theory.meanfield"].is_package
    assert "attnverify.checks.meanfield._model" in edges["attnverify.checks.meanfield.w2"]
    assert "attnverify.checks.stats" in edges["attnverify.checks.signal.objective"]


def test_layers(tree):
    assert layer_violations(tree[1]) == []


def test_checks_are_leaves(tree):
    checks = check_modules(tree[0])
    assert {"attnverify.checks.signal.objective", "attnverify.checks.meanfield.w2"} <= checks
    assert not {"attnverify.checks.signal._model", "attnverify.checks.meanfield.claims"} & checks
    assert check_import_violations(tree[1], checks) == []


def test_no_import_cycles(tree):
    assert cycles(tree[1]) == []


def test_modules_are_short(tree):
    assert length_violations(tree[0], LONG_MODULES) == []


# --------------------------------------------------------------------------------------------- the checker itself
def _modules(sources: dict[str, str], packages: tuple[str, ...] = ()) -> dict[str, Module]:
    return {n: Module(n, s, n in packages) for n, s in sources.items()}


def _synthetic(sources: dict[str, str], packages: tuple[str, ...] = ()) -> dict[str, set[str]]:
    return graph(_modules(sources, packages))


def _leaf_violations(sources: dict[str, str], packages: tuple[str, ...] = ()) -> list[str]:
    modules = _modules(sources, packages)
    return check_import_violations(graph(modules), check_modules(modules))


CLEAN = {
    "attnverify.cli.command_line": "import attnverify.checks.runner\nfrom attnverify.theory import meanfield\n",
    "attnverify.checks.runner": "from attnverify.checks.framework import Check\n",
    "attnverify.checks.framework": "import numpy as np\n",
    "attnverify.checks.stats": "from scipy.stats import norm\n",
    "attnverify.checks.paper.one": ("import attnverify.theory.meanfield as mf\nfrom attnverify.checks.paper._model import M\n"
                                    "from attnverify.checks.stats import z\nfrom attnverify.numerics.meanfield import particles\n"
                                    "from attnverify.checks.framework import check\n\n@check(id='paper.one')\ndef one(p, ctx):\n"
                                    "    pass\n"),
    "attnverify.checks.paper.two": "from attnverify.checks import framework\n\n@framework.check\ndef two(p, ctx):\n    pass\n",
    "attnverify.checks.paper.formulas": "from attnverify.checks.paper.derive import model\n",
    "attnverify.checks.paper.derive": "model = None\n",
    "attnverify.checks.paper.claims": "from attnverify.checks.paper.one import Findings\n",
    "attnverify.checks.paper._model": "from attnverify.checks.framework import Param\n",
    "attnverify.checks.paper.plugin": "from attnverify.checks.paper import one\n",
    "attnverify.checks.paper": "",
    "attnverify.theory.meanfield": "from .model import spectrum\nfrom attnverify.theory import certified\n",
    "attnverify.theory.meanfield.model": "from attnverify.theory.certified import lower\n",
    "attnverify.theory.certified": "import flint\n",
    "attnverify.numerics.meanfield.particles": "def f():\n    from attnverify.numerics import kernel\n",
    "attnverify.numerics.kernel": "",
    "attnverify.numerics.meanfield": "",
    "attnverify.numerics": "",
    "attnverify.theory": "",
}
PACKAGES = ("attnverify.checks.paper", "attnverify.theory.meanfield", "attnverify.numerics", "attnverify.numerics.meanfield",
            "attnverify.theory")


def test_the_resolver_follows_every_import_form():
    edges = _synthetic(CLEAN, PACKAGES)
    assert edges["attnverify.cli.command_line"] == {"attnverify.checks.runner", "attnverify.theory.meanfield"}
    assert edges["attnverify.theory.meanfield"] == {"attnverify.theory.meanfield.model", "attnverify.theory.certified"}
    assert edges["attnverify.checks.paper.plugin"] == {"attnverify.checks.paper.one"}
    assert edges["attnverify.numerics.meanfield.particles"] == {"attnverify.numerics.kernel"}     # inside a function
    assert "attnverify.numerics.meanfield.particles" in edges["attnverify.checks.paper.one"]


def test_the_checker_passes_a_clean_synthetic_tree():
    edges = _synthetic(CLEAN, PACKAGES)
    assert layer_violations(edges) == [] and cycles(edges) == []
    assert check_modules(_modules(CLEAN, PACKAGES)) == {"attnverify.checks.paper.one", "attnverify.checks.paper.two"}
    assert _leaf_violations(CLEAN, PACKAGES) == []      # the adapter, formulas and claims may import checks


@pytest.mark.parametrize("module, line, expected", [
    ("attnverify.theory.certified", "import attnverify.numerics.kernel",
     "attnverify.theory.certified (theory) imports attnverify.numerics.kernel (numerics)"),
    ("attnverify.numerics.kernel", "from attnverify.theory.meanfield import spectrum",
     "attnverify.numerics.kernel (numerics) imports attnverify.theory.meanfield (theory)"),
    ("attnverify.theory.certified", "from attnverify.checks import stats",
     "attnverify.theory.certified (theory) imports attnverify.checks.stats (checks)"),
    ("attnverify.checks.stats", "def f():\n    from attnverify.cli.command_line import main",
     "attnverify.checks.stats (checks) imports attnverify.cli.command_line (app)"),
    ("attnverify.numerics.kernel", "from attnverify import __version__",
     "attnverify.numerics.kernel (numerics) imports attnverify (app)"),
    ("attnverify.theory.meanfield.model", "from attnverify.render.report import text",
     "attnverify.theory.meanfield.model (theory) imports attnverify.render.report (app)"),
])
def test_the_checker_catches_a_planted_layer_violation(module, line, expected):
    bad = dict(CLEAN)
    bad[module] = bad.get(module, "") + line + "\n"
    assert layer_violations(_synthetic(bad, PACKAGES)) == [expected]


@pytest.mark.parametrize("module, line, expected", [
    ("attnverify.checks.paper.two", "from attnverify.checks.paper import one",
     "attnverify.checks.paper.two imports the check module attnverify.checks.paper.one"),
    ("attnverify.checks.other.three", "from attnverify.checks.paper.one import x\n\n@check(id='x')\ndef f(p, c):\n    pass",
     "attnverify.checks.other.three imports the check module attnverify.checks.paper.one"),
    ("attnverify.checks.paper._model", "def f():\n    from attnverify.checks.paper.one import x",
     "attnverify.checks.paper._model imports the check module attnverify.checks.paper.one"),
    ("attnverify.checks.stats", "import attnverify.checks.paper.one",
     "attnverify.checks.stats imports the check module attnverify.checks.paper.one"),
])
def test_the_checker_catches_a_planted_check_import(module, line, expected):
    bad = dict(CLEAN)
    bad[module] = bad.get(module, "") + line + "\n"
    assert _leaf_violations(bad, PACKAGES) == [expected]


def test_the_checker_catches_a_planted_cycle():
    bad = dict(CLEAN)
    bad["attnverify.theory.certified"] += "def f():\n    import attnverify.theory.meanfield.model\n"
    assert cycles(_synthetic(bad, PACKAGES)) == [["attnverify.theory.certified", "attnverify.theory.meanfield.model"]]
    bad["attnverify.checks.framework"] += "from attnverify.checks import runner\n"
    assert len(cycles(_synthetic(bad, PACKAGES))) == 2


def test_the_checker_catches_a_long_module():
    mods = {"a.short": Module("a.short", "x = 1\n" * 10), "a.long": Module("a.long", "x = 1\n" * 11),
            "a.fine": Module("a.fine", "x = 1\n" * 3)}
    assert length_violations(mods, {}, limit=10) == ["a.long: 11 lines > 10"]
    assert length_violations(mods, {"a.long": "a stated reason"}, limit=10) == []
    assert length_violations(mods, {"a.long": " "}, limit=10) == ["a.long: listed as long without a reason"]
    assert length_violations(mods, {"a.long": "why", "a.fine": "why"}, limit=10) == [
        "a.fine: listed as long, but it has 3 lines"]
    assert length_violations(mods, {"a.long": "why", "a.gone": "why"}, limit=10) == [
        "a.gone: listed as long, no such module"]


def test_the_checker_catches_a_violation_planted_in_a_copy_of_the_tree(tmp_path):
    """A copy of the real tree with one bad import added to a real check module fails the leaf rule."""
    import shutil

    for folder in ROOTS.values():
        shutil.copytree(REPO / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__"))
    target = tmp_path / "checks" / "signal" / "alignment.py"
    target.write_text(target.read_text() + "\nfrom attnverify.checks.signal.objective import mc_task  # planted\n")
    modules = module_map(tmp_path)
    assert check_import_violations(graph(modules), check_modules(modules)) == [
        "attnverify.checks.signal.alignment imports the check module attnverify.checks.signal.objective"]
