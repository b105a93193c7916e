"""Issue 31, item 7: no test asserts a wall-clock time (a bound in seconds fails under load and says nothing about
correctness). Flagged: an ``assert`` whose condition holds a difference of clock readings (``time.perf_counter() -
start < 5``), and code handed to a subprocess that reads the clock (``"t = time.time(); ..."``) for the test to
compare. A deadline that only stops a wait from hanging (``time.monotonic() < deadline``) is not a measurement and
is allowed."""
from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
CLOCKS = {"time", "perf_counter", "monotonic", "process_time", "perf_counter_ns", "monotonic_ns", "time_ns"}


def _is_clock(node: ast.AST) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in CLOCKS
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "time")


def _elapsed(node: ast.AST) -> bool:
    """A subtraction with a clock reading on either side, anywhere in ``node``."""
    return any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Sub)
               and any(_is_clock(m) for side in (n.left, n.right) for m in ast.walk(side)) for n in ast.walk(node))


def wall_clock_assertions(source: str) -> list[int]:
    """Line numbers of the wall-clock assertions in a test module's ``source`` (module docstring)."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Assert) and _elapsed(node.test):
            out.append(node.lineno)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and "time.time()" in node.value \
                and "import time" in node.value:
            out.append(node.lineno)
    return out


def test_the_detector_sees_both_forms_and_spares_a_deadline():
    assert wall_clock_assertions("import time\nt = time.perf_counter()\nassert time.perf_counter() - t < 5\n") == [3]
    assert wall_clock_assertions("code = 'import time; t = time.time(); print(time.time() - t)'\n") == [1]
    assert wall_clock_assertions("import time\nd = time.monotonic() + 9\nassert time.monotonic() < d\n") == []


def test_no_test_asserts_a_wall_clock_time():
    found = {str(p.relative_to(TESTS)): lines for p in sorted(TESTS.rglob("test_*.py"))
             if p.name != Path(__file__).name and (lines := wall_clock_assertions(p.read_text()))}
    assert not found, f"wall-clock assertions (file: lines): {found}"
