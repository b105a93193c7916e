"""Every Math part given as LaTeX source in checks/ (``Math(r"\\max |z|")``, ``Math(r"\\leq")``, a LaTeX string
built in a module and passed through a name) becomes real MathML in the HTML report (latex2mathml through
:func:`attnverify.render.reasons.latex_mathml`): it converts, leaves no raw LaTeX (no backslash) and no
character references, and is well-formed inside a ``<math>`` element -- never the text fallback."""
from __future__ import annotations

import ast
import importlib
import pkgutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import attnverify.checks as checks_pkg
from attnverify.checks.reason import Math, Reason
from attnverify.render import reasons as R

CHECKS = Path(checks_pkg.__path__[0])


def _source_literals() -> dict[str, str]:
    """LaTeX source -> where, for every ``Math("...")`` whose argument is a string literal, or a name bound at the
    module's top level to a string literal (``ORACLE = r"(k^{*}, v^{*})"``)."""
    out: dict[str, str] = {}
    for path in sorted(CHECKS.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = {t.id: node.value.value for node in tree.body if isinstance(node, ast.Assign)
                 and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
                 for t in node.targets if isinstance(t, ast.Name)}
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and node.args
                    and getattr(node.func, "id", getattr(node.func, "attr", None)) == "Math"):
                continue
            arg = node.args[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                out.setdefault(arg.value, f"{path.relative_to(CHECKS)}:{node.lineno}")
            elif isinstance(arg, ast.Name) and arg.id in names:
                out.setdefault(names[arg.id], f"{path.relative_to(CHECKS)}:{node.lineno}")
    return out


def _module_constants() -> dict[str, str]:
    """LaTeX source -> module, for every Math part with LaTeX source held at a module's top level (alone, in a
    tuple or list, or in a Reason): those built by code (``Math(sp.latex(floor) + " > 0")``,
    ``Math(sign + ORACLE)``)."""
    out: dict[str, str] = {}

    def walk(value, where, depth=0):
        if isinstance(value, Math):
            if isinstance(value.expr, str):
                out.setdefault(value.expr, where)
        elif isinstance(value, Reason):
            for p in value.parts():
                walk(p, where)
        elif isinstance(value, (tuple, list)) and depth < 3:
            for v in value:
                walk(v, where, depth + 1)
        elif isinstance(value, dict) and depth < 3:
            for v in value.values():
                walk(v, where, depth + 1)

    for info in pkgutil.walk_packages(checks_pkg.__path__, "attnverify.checks."):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            walk(value, info.name)
    return out


SOURCES = {**_module_constants(), **_source_literals()}


def test_the_collection_finds_the_latex_math_of_checks():
    """The sweep below is not vacuous: it sees the literals (\\leq, \\max |z|...) and those built by code."""
    assert len(SOURCES) >= 40, sorted(SOURCES)
    assert {r"\leq", r"\max |z|", r"|\mathrm{closed} - \mathrm{FD}|", r"\pm(k^{*}, v^{*})"} <= set(SOURCES)
    assert any(s.endswith(" > 0") and s.startswith("u^{*}") for s in SOURCES)      # Math(sp.latex(...) + " > 0")


@pytest.mark.parametrize("source", sorted(SOURCES))
def test_every_latex_math_of_checks_converts_to_mathml(source):
    where = SOURCES[source]
    inner = R.latex_mathml(source)
    assert inner is not None, f"latex2mathml cannot convert {source!r} ({where}): it would fall back to text"
    assert "\\" not in inner, f"raw LaTeX left in the MathML of {source!r} ({where}): {inner}"
    assert "&#x" not in inner, inner
    math = ET.fromstring(R.mathml(source))                    # well-formed, one <math> element
    assert math.tag == "{http://www.w3.org/1998/Math/MathML}math" and len(math) >= 1
    assert R.mathml_inner(source) == inner                    # what the report writes: the converted markup
