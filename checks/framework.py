"""The check framework: parameters, evidence, the run context and the check registry.

A check is a function ``run(p, ctx) -> Evidence`` registered with :func:`check`. It states a claim
and its source, declares its parameters (each overridable), and returns the evidence of one
comparison: analytic value, numeric value with its uncertainty, the metric, the threshold and the
reason for that threshold. The verdict is ``pass`` or ``fail`` from the evidence, or ``error`` when
the check itself raised.
"""
from __future__ import annotations

import hashlib
import math
import pickle
import sys
from fractions import Fraction
from concurrent.futures import Executor, as_completed
from dataclasses import dataclass, field
from collections.abc import Callable, MutableMapping, Sequence
from typing import Any

import numpy as np

from attnverify.checks.values import matrix_entries, rounded, scale_problem
from attnverify.checks.plots import Plot, Series  # noqa: F401 -- re-exported: checks import them from here


class InputError(ValueError):
    """Bad input from the user: an unknown id, profile or key, or an invalid parameter value."""


def did_you_mean(name: str, known: Sequence[str]) -> str:
    """`` (did you mean X?)`` for the closest of ``known`` to a mistyped ``name`` (difflib), else ``""``."""
    import difflib

    close = difflib.get_close_matches(name, list(known), n=2, cutoff=0.6)
    return f" (did you mean {' or '.join(close)}?)" if close else ""


PROFILES = ("quick", "paper")
KINDS = (float, int, str, bool, "floats", "ints", "matrix")


# ----------------------------------------------------------------------------------------------
# Parameters
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Param:
    """A model option or parameter of a check, with its type, default and admissible range.

    ``kind`` is ``float``, ``int``, ``str``, ``bool``, ``"floats"``/``"ints"`` (tuples) or
    ``"matrix"`` (a 2-D float array, CLI form ``1,0;0,2``; entries may be rationals such as ``1/3``, parsed
    exactly and rounded once; :meth:`exact` gives them unrounded, as a SymPy Matrix). Bounds are inclusive unless
    ``low_open``/``high_open``; floats must be finite.
    """

    name: str
    kind: Any
    default: Any
    help: str
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    choices: tuple | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise TypeError(f"parameter {self.name!r}: unknown kind {self.kind!r}")

    # -- parsing and validation --------------------------------------------------------------
    def parse(self, text: str) -> Any:
        """Parse the command-line text of a value (``--set name=text``) and validate it."""
        try:
            if self.kind is bool:
                low = text.strip().lower()
                if low not in ("true", "false", "1", "0", "yes", "no"):
                    raise ValueError
                value: Any = low in ("true", "1", "yes")
            elif self.kind is int:
                value = int(text)
            elif self.kind is float:
                value = float(text)
            elif self.kind == "floats":
                value = tuple(float(s) for s in text.split(","))
            elif self.kind == "ints":
                value = tuple(int(s) for s in text.split(","))
            elif self.kind == "matrix":
                value = np.array([[rounded(x) for x in row] for row in self._rows(text)], dtype=float)
            else:
                value = text
        except InputError:
            raise
        except ValueError:
            raise InputError(f"{self.name}: expected {self.kind_name()}, got {text!r}") from None
        return self.validate(value)

    def read(self, raw: Any) -> Any:
        """A value given by the user: command-line text is parsed, anything else validated."""
        return self.parse(raw) if isinstance(raw, str) and self.kind is not str else self.validate(raw)

    def _rows(self, text: str) -> list[list]:
        rows = matrix_entries(text)
        if len({len(r) for r in rows}) != 1:
            raise InputError(f"{self.name}: matrix rows have different lengths in {text!r}")
        return rows

    def exact(self, text: str):
        """The value of ``--set name=text`` without rounding, for symbolic work: a matrix as a SymPy Matrix of
        Rationals (``1,0;0,1/3`` keeps 1/3), a number as a SymPy Rational; validated as :meth:`parse` validates
        the float value. InputError for what :meth:`parse` refuses or what has no exact value."""
        import sympy as sp

        self.parse(text)                                 # the same rules (and messages) as the float value
        try:
            if self.kind == "matrix":
                return sp.Matrix([[sp.Rational(x.numerator, x.denominator) for x in row]
                                  for row in self._rows(text)])
            if self.kind in (float, int):
                f = Fraction(text.strip())
                return sp.Rational(f.numerator, f.denominator)
        except (AttributeError, ValueError, TypeError):
            pass
        raise InputError(f"{self.name}: no exact value for {text!r}")

    def kind_name(self) -> str:
        names = {float: "a number", int: "an integer", str: "a string", bool: "true or false",
                 "floats": "comma-separated numbers", "ints": "comma-separated integers",
                 "matrix": "a matrix like 1,0;0,1"}
        return names[self.kind]

    def validate(self, value: Any) -> Any:
        """Return ``value`` converted to this parameter's kind, or raise :class:`InputError`."""
        value = self._coerce(value)
        if self.choices is not None and value not in self.choices:
            raise InputError(f"{self.name}: {value!r} is not one of {', '.join(map(str, self.choices))}")
        for x in self._numbers(value):
            if not math.isfinite(x):
                raise InputError(f"{self.name}: must be finite, got {x}")
            if self.low is not None and (x < self.low or (self.low_open and x == self.low)):
                raise InputError(f"{self.name}: must be {'>' if self.low_open else '>='} {self.low}, got {x}")
            if self.high is not None and (x > self.high or (self.high_open and x == self.high)):
                raise InputError(f"{self.name}: must be {'<' if self.high_open else '<='} {self.high}, got {x}")
        return value

    def _coerce(self, value: Any) -> Any:
        bad = InputError(f"{self.name}: expected {self.kind_name()}, got {value!r}")
        if self.kind is bool:
            if not isinstance(value, (bool, np.bool_)):
                raise bad
            return bool(value)
        if self.kind is int:
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
                raise bad
            return int(value)
        if self.kind is float:
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
                raise bad
            return float(value)
        if self.kind is str:
            if not isinstance(value, str):
                raise bad
            return value
        if self.kind in ("floats", "ints"):
            item = Param(self.name, float if self.kind == "floats" else int, None, self.help)
            if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, np.ndarray)):
                value = (value,)
            out = tuple(item._coerce(v) for v in value)
            if not out:
                raise InputError(f"{self.name}: needs at least one value")
            return out
        try:
            arr = np.array(value, dtype=float)
        except (TypeError, ValueError):
            raise bad from None
        if arr.ndim != 2 or arr.size == 0:
            raise InputError(f"{self.name}: expected a non-empty 2-D matrix, got shape {arr.shape}")
        return arr

    def _numbers(self, value: Any) -> list[float]:
        if self.kind in (float, int):
            return [float(value)]
        if self.kind in ("floats", "ints"):
            return [float(v) for v in value]
        if self.kind == "matrix":
            return [float(v) for v in np.ravel(value)]
        return []


# ----------------------------------------------------------------------------------------------
# Evidence and results
# ----------------------------------------------------------------------------------------------
@dataclass
class Evidence:
    """What a check measured: the comparison ``observed`` vs ``threshold`` and its justification.

    ``comparison`` says which side of the threshold passes (``"<="`` or ``">="``), for display;
    ``passed`` is the check's decision (it may combine the comparison with further conditions).
    ``unresolved``: set (to the reason) when the numerics cannot decide at this size -- e.g. a refinement spread
    above the check's precision rule; the verdict is then ``error``, never ``pass`` or ``fail``, and the evidence
    is kept in the report.
    ``findings``: what the claims read, as a typed record (a frozen dataclass defined beside the check): the
    figures a claim compares with a paper's statement (a measured exponent and its standard error, a bracket, a
    switch time...). Claims read its attributes, never string keys of ``details``, so a renamed field fails
    loudly; the report stores it under ``details["findings"]``.
    """

    metric: str
    observed: float | None
    threshold: float | None
    reason: str
    passed: bool
    comparison: str = "<="
    analytic: Any = None
    numeric: Any = None
    uncertainty: Any = None
    details: dict = field(default_factory=dict)
    plots: list[Plot] = field(default_factory=list)
    unresolved: str | None = None
    findings: Any = None

    def __post_init__(self) -> None:
        if self.comparison not in ("<=", "<", ">=", ">"):
            raise ValueError(f"comparison must be one of <=, <, >=, >; got {self.comparison!r}")


@dataclass
class Result:
    """The outcome of one check: its verdict with the evidence, or the error that broke it."""

    id: str
    claim: str
    source: str
    verdict: str
    params: dict
    seconds: float
    evidence: Evidence | None = None
    error: str | None = None
    seed: int | None = None

    @property
    def observed(self) -> float | None:
        return self.evidence.observed if self.evidence else None

    @property
    def threshold(self) -> float | None:
        return self.evidence.threshold if self.evidence else None

    @property
    def reason(self) -> str:
        return self.evidence.reason if self.evidence else (self.error or "")

    @property
    def details(self) -> dict:
        return self.evidence.details if self.evidence else {}

    @property
    def findings(self) -> Any:
        """The check's typed findings (None when it has none or did not produce evidence)."""
        return self.evidence.findings if self.evidence else None

    # -- display (short repr; rich reprs for Jupyter) -------------------------------------------
    def _comparison(self) -> str:
        ev = self.evidence
        if ev is None:
            return self.error or ""
        def num(x):
            return "-" if x is None else f"{x:.4g}"
        return f"{ev.metric}: {num(ev.observed)} {ev.comparison} {num(ev.threshold)}"

    def __repr__(self) -> str:
        return f"<Result {self.id}: {self.verdict}, {self._comparison()} ({self.seconds:.1f} s)>"

    def _repr_markdown_(self) -> str:
        rows = [f"**`{self.id}`: {self.verdict}** ({self.source})", "", self.claim, "",
                "| metric | observed | pass if | threshold |", "|---|---|---|---|"]
        ev = self.evidence
        if ev is not None:
            num = (lambda x: "-" if x is None else f"{x:.4g}")
            rows.append(f"| {ev.metric} | {num(ev.observed)} | {ev.comparison} | {num(ev.threshold)} |")
            rows += ["", f"*Why this threshold:* {ev.reason}"]
        else:
            rows = rows[:4] + [f"**Error:** `{self.error}`"]
        return "\n".join(rows)

    def _repr_html_(self) -> str:
        import html

        ev = self.evidence
        num = (lambda x: "-" if x is None else f"{x:.4g}")
        body = (f"<tr><td>{html.escape(ev.metric)}</td><td>{num(ev.observed)}</td><td>{html.escape(ev.comparison)}"
                f"</td><td>{num(ev.threshold)}</td></tr>") if ev else \
            f"<tr><td colspan=4>error: {html.escape(self.error or '')}</td></tr>"
        return (f"<div><b><code>{html.escape(self.id)}</code>: {html.escape(self.verdict)}</b> "
                f"({html.escape(self.source)})<br>{html.escape(self.claim)}<table><tr><th>metric</th>"
                f"<th>observed</th><th>pass if</th><th>threshold</th></tr>{body}</table></div>")


# ----------------------------------------------------------------------------------------------
# The run context
# ----------------------------------------------------------------------------------------------
def stream_key(*parts: str) -> int:
    """A stable 64-bit integer from strings (independent of PYTHONHASHSEED)."""
    digest = hashlib.sha256("\x1f".join(parts).encode()).digest()
    return int.from_bytes(digest[:8], "little")


def task_key(fn: Callable[..., Any], task: tuple) -> str:
    """A stable key of a task: the function's qualified name and the pickled arguments (SHA-256)."""
    payload = pickle.dumps((getattr(fn, "__module__", ""), getattr(fn, "__qualname__", repr(fn)), task), protocol=4)
    return hashlib.sha256(payload).hexdigest()


class Context:
    """What a running check may use: seeded random streams, a task map and progress reporting.

    Every random stream derives from ``(seed, check id, stream name)``, so results do not depend
    on which other checks run, in what order, or on which executor.
    """

    def __init__(self, check_id: str, seed: int, profile: str, *, executor: Executor | None = None,
                 progress: Callable[[str, float], None] | None = None,
                 memo: MutableMapping[str, Any] | None = None, store: Any = None) -> None:
        self.check_id = check_id
        self.seed = seed
        self.profile = profile
        self._executor = executor
        self._progress = progress
        self._memo = memo
        self._store = store          # a attnverify.checks.store.CheckStore (persistent task results) or None

    def seed_sequence(self, name: str = "") -> np.random.SeedSequence:
        return np.random.SeedSequence([self.seed, stream_key(self.check_id, name)])

    def rng(self, name: str = "") -> np.random.Generator:
        """An independent generator for the named stream of this check."""
        return np.random.default_rng(self.seed_sequence(name))

    def seeds(self, n: int, name: str = "tasks") -> list[np.random.SeedSequence]:
        """``n`` independent, picklable seed sequences for parallel tasks."""
        return self.seed_sequence(name).spawn(n)

    def map(self, fn: Callable[..., Any], tasks: Sequence[tuple]) -> list[Any]:
        """``[fn(*task) for task in tasks]``, in order, on the executor when one is set.

        With a ``memo`` (a mapping given by the caller, e.g. the power self-test, which reruns a check many times
        with only its analytic side changed), a task whose function and arguments were seen before is not run
        again. Tasks are the numeric side: they never read the theory, so their result depends only on them.
        With a ``store`` (``attnverify.checks.store``), every task result is written to disk as soon as it finishes and tasks
        stored by an earlier run are read back instead of run, so a killed run resumes where it stopped."""
        tasks = list(tasks)
        if self._memo is not None:
            keys = [task_key(fn, task) for task in tasks]
            todo = [(k, t) for k, t in dict(zip(keys, tasks)).items() if k not in self._memo]
            memo, self._memo = self._memo, None
            try:
                for k, value in zip([k for k, _ in todo], self.map(fn, [t for _, t in todo])):
                    memo[k] = value
            finally:
                self._memo = memo
            return [memo[k] for k in keys]
        out: list[Any] = [None] * len(tasks)
        todo = list(range(len(tasks)))
        keys: list[str] = []
        if self._store is not None:                 # finished tasks of an earlier (killed) run are read back
            keys = [self._store.key(fn, task) for task in tasks]
            todo = []
            for i, k in enumerate(keys):
                hit, value = self._store.get(k)
                if hit:
                    out[i] = value
                else:
                    todo.append(i)

        def finished(i: int, value: Any, done: int) -> None:
            out[i] = value
            if self._store is not None:
                self._store.put(keys[i], value)     # stored as soon as it finishes
            self.progress((len(tasks) - len(todo) + done) / len(tasks))

        if self._executor is None or len(todo) < 2:
            for n, i in enumerate(todo):
                finished(i, fn(*tasks[i]), n + 1)
            return out
        futures = {self._executor.submit(fn, *tasks[i]): i for i in todo}
        try:
            for n, fut in enumerate(as_completed(futures)):
                finished(futures[fut], fut.result(), n + 1)
        finally:
            for fut in futures:
                fut.cancel()
        return out

    def progress(self, fraction: float) -> None:
        if self._progress is not None:
            self._progress(self.check_id, float(fraction))


# ----------------------------------------------------------------------------------------------
# The registry
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Check:
    id: str
    claim: str
    source: str
    params: tuple[Param, ...]
    run: Callable[[dict, Context], Evidence]
    paper: dict
    validate: Callable[[dict], None] | None

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    def resolve(self, profile: str, overrides: dict[str, Any]) -> dict:
        """The validated parameters for a profile with overrides (values or command-line strings)."""
        values = {}
        for prm in self.params:
            if prm.name in overrides:
                values[prm.name] = prm.read(overrides[prm.name])
            elif profile == "paper" and prm.name in self.paper:
                values[prm.name] = prm.validate(self.paper[prm.name])
            else:
                values[prm.name] = prm.validate(prm.default)
        for prm in self.params:           # the scale rule (attnverify.checks.values)
            settings = [prm.default] + ([self.paper[prm.name]] if prm.name in self.paper else [])
            if problem := scale_problem(prm, values[prm.name], settings):
                raise InputError(problem)
        validated(self.validate, values)
        return values


def validated(validate: Callable[[dict], None] | None, values: dict) -> dict:
    """``values`` after ``validate(values)`` (cross-parameter constraints) accepted them; its ValueError (or
    TypeError, ArithmeticError) becomes one-line :class:`InputError`."""
    if validate is not None:
        try:
            validate(values)
        except InputError:
            raise
        except (ValueError, TypeError, ArithmeticError) as exc:
            raise InputError(str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from None
    return values


REGISTRY: dict[str, Check] = {}


def check(*, id: str, claim: str, source: str, params: Sequence[Param] = (), paper: dict | None = None,
          validate: Callable[[dict], None] | None = None) -> Callable:
    """Register ``run(p, ctx) -> Evidence`` as the check ``id``."""

    def register(run: Callable[[dict, Context], Evidence]) -> Callable[[dict, Context], Evidence]:
        names = [p.name for p in params]
        dupes = {n for n in names if names.count(n) > 1}
        if dupes:  # a check overriding a shared model option keeps only its own (last) definition
            kept: dict[str, Param] = {}
            for prm in params:
                kept[prm.name] = prm
            plist = tuple(kept.values())
        else:
            plist = tuple(params)
        unknown = set(paper or {}) - {p.name for p in plist}
        if unknown:
            raise TypeError(f"check {id}: paper profile sets unknown parameters {sorted(unknown)}")
        REGISTRY[id] = Check(id, claim, source, plist, run, dict(paper or {}), validate)
        return run

    return register


def progress_printer(stream=sys.stderr) -> Callable[[str, float], None]:
    """A one-line progress display for a terminal."""

    def show(check_id: str, fraction: float) -> None:
        width = 30
        done = int(round(width * min(max(fraction, 0.0), 1.0)))
        stream.write(f"\r{check_id:<40} [{'#' * done}{'.' * (width - done)}] {100 * fraction:5.1f}%")
        stream.flush()

    return show
