"""The shape of the tree, enforced by reading the source with ``ast`` (nothing is imported):

* one shape per paper: every paper package ``checks/<P>/`` (each subpackage of ``checks`` but the ``judges``) has
  its numerics ``numerics/<P>/``, its tests ``tests/<P>/``, and its theory ``theory/<P>/`` -- or, for a paper
  built on the model engine, closed forms from ``attnverify.theory.engine`` (imported by its package);
* no private name crosses a package boundary: ``from X import _name``, ``X._name`` on an imported project module,
  and any import of a ``_``-module, are allowed only inside the package that owns the name (a package is the
  folder: ``attnverify.checks.signal`` owns ``attnverify.checks.signal._model``). Shared pieces have public names;
* rendering lives in ``attnverify/render/``: no module of ``theory``, ``numerics`` or ``checks`` imports
  matplotlib or IPython, defines a notebook display method (``_repr_html_``, ``_repr_markdown_``,
  ``_repr_latex_``, ``_repr_pretty_``) or prints; in the application only ``render/`` imports matplotlib, and a
  display method elsewhere only hands its object to ``render/``.

Each rule is a function of the module map, and each is also tested on a small synthetic tree that breaks it.
"""
from __future__ import annotations

import ast

import pytest

from test_architecture import REPO, Module, _resolve, module_map

DISPLAY = {"_repr_html_", "_repr_markdown_", "_repr_latex_", "_repr_pretty_"}
LOWER = ("attnverify.theory.", "attnverify.numerics.", "attnverify.checks.")
NOT_PAPERS = {"judges"}


@pytest.fixture(scope="module")
def modules() -> dict[str, Module]:
    return module_map()


# --------------------------------------------------------------------------------------------- one shape per paper
def papers(modules: dict[str, Module]) -> set[str]:
    """The paper packages: the subpackages of attnverify.checks (but the judges)."""
    return {n.split(".")[2] for n, m in modules.items()
            if m.is_package and n.count(".") == 2 and n.startswith("attnverify.checks.")} - NOT_PAPERS


def shape_violations(modules: dict[str, Module], test_folders: set[str]) -> list[str]:
    """A paper without its numerics package, its test folder, or its theory (own package or the engine's)."""
    out = []
    for p in sorted(papers(modules)):
        if f"attnverify.numerics.{p}" not in modules:
            out.append(f"{p}: no numerics/{p}/ package")
        if p not in test_folders:
            out.append(f"{p}: no tests/{p}/ folder")
        own = f"attnverify.theory.{p}" in modules
        engine = any("attnverify.theory.engine" in m.source for n, m in modules.items()
                     if n.startswith(f"attnverify.checks.{p}."))
        if not (own or engine):
            out.append(f"{p}: no theory/{p}/ package and no closed forms from attnverify.theory.engine")
    return out


def test_every_paper_has_the_same_shape(modules):
    found = papers(modules)
    assert {"signal", "meanfield", "slr"} <= found
    folders = {p.name for p in (REPO / "tests").iterdir() if p.is_dir()}
    assert shape_violations(modules, folders) == []


def test_the_shape_rule_catches_a_missing_package():
    tree = {"attnverify.checks.x": Module("attnverify.checks.x", "", True),
            "attnverify.checks.x.a": Module("attnverify.checks.x.a", "")}
    assert shape_violations(tree, set()) == ["x: no numerics/x/ package", "x: no tests/x/ folder",
                                             "x: no theory/x/ package and no closed forms from attnverify.theory.engine"]
    tree["attnverify.numerics.x"] = Module("attnverify.numerics.x", "", True)
    tree["attnverify.checks.x.a"] = Module("attnverify.checks.x.a", "from attnverify.theory.engine import derive")
    assert shape_violations(tree, {"x"}) == []


# --------------------------------------------------------------------------------------------- private names
def _package(name: str, modules: dict[str, Module]) -> str:
    """The package that owns module ``name``: itself when it is a package, else its parent."""
    return name if modules.get(name, Module(name, "")).is_package else name.rpartition(".")[0]


def _is_private(part: str) -> bool:
    return part.startswith("_") and not (part.startswith("__") and part.endswith("__"))


def _absolute(node: ast.ImportFrom, name: str, modules: dict[str, Module]) -> str:
    if not node.level:
        return node.module or ""
    base = _package(name, modules).split(".")
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def private_violations(modules: dict[str, Module]) -> list[str]:
    """Every use of a private name (or module) of a package from outside that package."""
    known = set(modules)
    out = []
    for name, mod in modules.items():
        here = _package(name, modules)
        bound: dict[str, str] = {}               # local name -> the project module it is bound to
        tree = ast.parse(mod.source)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    target = _resolve(a.name, known)
                    if target in known:
                        bound[a.asname or a.name.split(".")[0]] = target if a.asname else a.name.split(".")[0]
                        out += _private_module(name, here, target, modules)
            elif isinstance(node, ast.ImportFrom):
                source = _absolute(node, name, modules)
                if _resolve(source, known) not in known:
                    continue
                out += _private_module(name, here, _resolve(source, known), modules)
                for a in node.names:
                    full = f"{source}.{a.name}"
                    if full in known:            # a module imported by name
                        bound[a.asname or a.name] = full
                        out += _private_module(name, here, full, modules)
                    elif _is_private(a.name) and _package(_resolve(source, known), modules) != here:
                        out.append(f"{name}: imports {a.name} from {source}")
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and _is_private(node.attr) and isinstance(node.value, ast.Name)
                    and node.value.id in bound and bound[node.value.id] in known
                    and _package(bound[node.value.id], modules) != here):
                out.append(f"{name}: uses {bound[node.value.id]}.{node.attr}")
    return sorted(set(out))


def _private_module(importer: str, here: str, target: str, modules: dict[str, Module]) -> list[str]:
    """A ``_``-module imported from outside its package."""
    last = target.rpartition(".")[2]
    if _is_private(last) and _package(target, modules) != here:
        return [f"{importer}: imports the private module {target}"]
    return []


def test_no_private_name_crosses_a_package_boundary(modules):
    assert private_violations(modules) == []


@pytest.mark.parametrize("source, expected", [
    ("from attnverify.p.q import _f", "attnverify.r.m: imports _f from attnverify.p.q"),
    ("from attnverify.p import _h", "attnverify.r.m: imports the private module attnverify.p._h"),
    ("from attnverify.p import q\nq._f(1)", "attnverify.r.m: uses attnverify.p.q._f"),
    ("import attnverify.p.q as q\nq._f(1)", "attnverify.r.m: uses attnverify.p.q._f"),
])
def test_the_private_rule_catches_a_planted_use(source, expected):
    tree = {"attnverify": Module("attnverify", "", True), "attnverify.p": Module("attnverify.p", "", True),
            "attnverify.p.q": Module("attnverify.p.q", "def _f(): pass"),
            "attnverify.p._h": Module("attnverify.p._h", ""),
            "attnverify.r": Module("attnverify.r", "", True), "attnverify.r.m": Module("attnverify.r.m", source)}
    assert expected in private_violations(tree)
    # inside the owning package the same use is allowed
    tree["attnverify.p.m"] = Module("attnverify.p.m", source)
    assert not [v for v in private_violations(tree) if v.startswith("attnverify.p.m")]


# --------------------------------------------------------------------------------------------- rendering
def render_violations(modules: dict[str, Module]) -> list[str]:
    """Display outside attnverify/render/: matplotlib or IPython imported, a display method or a print in the data
    layers; matplotlib imported in the application outside render/."""
    out = []
    for name, mod in modules.items():
        if name.startswith("attnverify.render"):
            continue
        lower = name.startswith(LOWER) or name in {p.rstrip(".") for p in LOWER}
        for node in ast.walk(ast.parse(mod.source)):
            imported = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                        [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            for target in imported:
                top = target.split(".")[0]
                if top == "matplotlib" or (lower and top == "IPython"):
                    out.append(f"{name}: imports {target}")
            if lower and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in DISPLAY:
                out.append(f"{name}: defines {node.name}")
            if lower and isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
                out.append(f"{name}: prints (line {node.lineno})")
    return sorted(set(out))


def test_only_render_renders(modules):
    assert render_violations(modules) == []


@pytest.mark.parametrize("name, source, expected", [
    ("attnverify.checks.x", "import matplotlib.pyplot as plt", "attnverify.checks.x: imports matplotlib.pyplot"),
    ("attnverify.checks.x", "class R:\n    def _repr_html_(self):\n        return ''",
     "attnverify.checks.x: defines _repr_html_"),
    ("attnverify.theory.x", "print('hello')", "attnverify.theory.x: prints (line 1)"),
    ("attnverify.cli.x", "from matplotlib import pyplot", "attnverify.cli.x: imports matplotlib"),
])
def test_the_render_rule_catches_a_planted_display(name, source, expected):
    assert render_violations({name: Module(name, source)}) == [expected]
    assert render_violations({"attnverify.render.x": Module("attnverify.render.x", source)}) == []


def test_the_suite_order_names_existing_files():
    """tests/conftest.py hands out its longest files first: a renamed or removed file there would silently drop out
    of the order (and the two workers would no longer finish together)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("suite_conftest", REPO / "tests" / "conftest.py")
    conftest = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conftest)
    LONGEST_FIRST = conftest.LONGEST_FIRST
    assert [f for f in LONGEST_FIRST if not (REPO / "tests" / f).is_file()] == []
    assert len(set(LONGEST_FIRST)) == len(LONGEST_FIRST)
