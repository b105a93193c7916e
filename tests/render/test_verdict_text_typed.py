"""A verdict's text is typed (issue: structured verdict text): every claim evaluator builds its reason and its
condition, and every check the reason of its evidence and the text of an unresolved verdict, from parts (words,
:class:`~attnverify.checks.reason.Math`, :class:`~attnverify.checks.reason.Number`), never as an f-string that prints
numbers into words or mathematics as ASCII.

Read from the source (every branch, not only those a run reaches): in each ``ClaimVerdict(...)`` and ``Evidence(...)``
of the checks package (the evidence's ``metric`` and ``reason``), in the phrase of each ``Measured(...)`` (``how``: how a
value was measured), in every ``unresolved=`` argument, ``x.unresolved = ...`` or ``unresolved = ...`` assignment and
in the arguments of ``Unresolved(...)``, no number is formatted into the words of the reason or the condition (an
f-string field with a format specification, or a call of a number formatter: a number is a Number part), and no
string in them holds ASCII mathematics (:func:`attnverify.render.ascii_math.spans`, the same reader that typesets plain strings in the
LaTeX). An f-string that joins words (``f" ({where})"``) is words."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from attnverify.render.ascii_math import spans

CHECKS = Path(__file__).resolve().parents[2] / "checks"
NUMBER_FORMATTERS = {"fmt", "num", "decimal", "format", "round", "float", "int"}
TEXT_BUILDERS = {"reason", "item", "add", "Text", "Reason", "join", "str"}
#: names of methods that are words although they hold a Greek letter's name (the reader would typeset "delta")
TERMS = ("delta method",)


def _verdict_texts(tree: ast.AST):
    """(line, node) of every reason and condition argument of a ClaimVerdict call, of every metric and reason of a
    check's Evidence (what it compares and why its threshold is what it is), of the phrase of every Measured (``how``,
    the third positional argument), and of every unresolved text: an
    ``unresolved=`` argument, an assignment to ``x.unresolved`` or to a variable ``unresolved``, and the arguments
    of ``Unresolved(...)`` (the message of an undecided check)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
            if name == "ClaimVerdict":
                for arg in node.args[1:3] + [k.value for k in node.keywords if k.arg in ("reason", "condition")]:
                    yield node.lineno, arg
            elif name == "Evidence":
                for arg in node.args[0:1] + node.args[3:4] + [k.value for k in node.keywords
                                                              if k.arg in ("metric", "reason")]:
                    yield node.lineno, arg
            elif name == "Measured":
                for arg in node.args[2:3] + [k.value for k in node.keywords if k.arg == "how"]:
                    yield node.lineno, arg
            elif name == "Unresolved":
                for arg in [*node.args, *(k.value for k in node.keywords)]:
                    yield node.lineno, arg
            for k in node.keywords:
                if k.arg == "unresolved":
                    yield node.lineno, k.value
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(_names_unresolved(t) for t in targets):
                yield node.lineno, node.value


def _names_unresolved(target: ast.AST) -> bool:
    """A target that is the variable ``unresolved`` or an attribute ``x.unresolved`` (not a tuple: a call's
    results are read where the call builds them)."""
    return (isinstance(target, ast.Name) and target.id == "unresolved") or \
        (isinstance(target, ast.Attribute) and target.attr == "unresolved")


def _prints_a_number(field: ast.FormattedValue) -> bool:
    """An f-string field that prints a number: a format specification (``{x:.3g}``) or a formatter's call."""
    if field.format_spec is not None:
        return True
    fn = field.value.func if isinstance(field.value, ast.Call) else None
    return (getattr(fn, "id", None) or getattr(fn, "attr", None)) in NUMBER_FORMATTERS


def _text_nodes(node: ast.AST):
    """The nodes of a reason's expression that are its text: through the reason builders' arguments, f-strings,
    concatenations, conditionals and sequences; not into a subscript's key or another call's arguments (a
    ``Math(sp.Symbol("beta"))`` or ``p["beta"]`` is no text)."""
    yield node
    if isinstance(node, ast.Subscript):
        children = [node.value]
    elif isinstance(node, ast.Call):
        name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
        children = ([*node.args, *(k.value for k in node.keywords)] if name in TEXT_BUILDERS else []) + \
            ([node.func.value] if isinstance(node.func, ast.Attribute) else [])
    else:
        children = list(ast.iter_child_nodes(node))
    for child in children:
        yield from _text_nodes(child)


def _words(text: str) -> str:
    """``text`` without the named methods (TERMS) that are words, not mathematics."""
    for term in TERMS:
        text = text.replace(term, "")
    return text


def _sources() -> list[Path]:
    return sorted(p for p in CHECKS.rglob("*.py")
                  if any(True for _ in _verdict_texts(ast.parse(p.read_text(encoding="utf-8")))))


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(CHECKS)))
def test_claim_verdict_text_is_built_from_parts(path):
    """Every reason, condition and unresolved text of the checks package is built from parts."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    bad = []
    for line, arg in _verdict_texts(tree):
        for node in _text_nodes(arg):
            if isinstance(node, ast.FormattedValue) and _prints_a_number(node):
                bad.append(f"line {line}: a number formatted into words ({ast.unparse(node.value)}): "
                           "a Number part")
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and spans(_words(node.value)):
                bad.append(f"line {line}: ASCII mathematics {spans(_words(node.value))} in {node.value!r}")
    assert not bad, "\n".join(bad)


def test_the_reader_finds_ascii_mathematics_and_leaves_words():
    """The reader this test relies on: Greek names, scripts and products are mathematics; words and check ids
    are not; mathematics between dollars is already typed."""
    assert spans("rests at rho = 0.7") == [r"\rho"]
    assert spans("W2(mu^beta_t, Pi#mu_0)") and spans("eta_k = 2/(k + 100)")
    assert spans("the check did not run the stated protocol") == []
    assert spans("outside the delta method's range") and not spans(_words("outside the delta method's range"))
    assert spans("signal.objective_vs_montecarlo confirms") == []
    assert spans(r"at $\beta = 2$") == []
