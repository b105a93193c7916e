"""The Python face of attnverify: ``run`` returns a :class:`Report` that saves itself, renders as Markdown and
displays in Jupyter; its results draw their plots (:meth:`Result.plot`).

The checks themselves run through :mod:`attnverify.checks.runner` (same plan, same seeds, same verdicts); this module adds
display and one thing the command line needs: the report is handed to ``on_result`` after every check, so a
run that dies half-way leaves its finished checks on disk.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Executor
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

from attnverify.checks import evidence as _fw
from attnverify.checks import runner as _runner
from attnverify.checks.claims import ClaimResult
from attnverify.checks.params import InputError, shown


@dataclass(repr=False)
class Result(_fw.Result):
    """A check's result (see :class:`attnverify.checks.evidence.Result`) that can draw its plots."""

    def plot(self, index: int = 0):
        """The check's ``index``-th plot as a matplotlib Figure (IndexError naming the plots it has when there is no
        such plot)."""
        from attnverify.render.report import draw_plot

        plots = self.evidence.plots if self.evidence else []
        if not plots:
            raise IndexError(f"{self.id} has no plot" + (f" ({self.error})" if self.error else ""))
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
            raise TypeError(f"plot index must be an integer, got {index!r}")
        if not -len(plots) <= index < len(plots):
            titles = "; ".join(f"{i}: {p.title}" for i, p in enumerate(plots))
            raise IndexError(f"{self.id} has {len(plots)} plot{'s' if len(plots) > 1 else ''} (plot(0) .. "
                             f"plot({len(plots) - 1})), not plot({index}): {titles}")
        return draw_plot(plots[index])

    def _repr_markdown_(self) -> str:
        from attnverify.render.jupyter import result_markdown

        return result_markdown(self)

    def _repr_html_(self) -> str:
        from attnverify.render.jupyter import result_html

        return result_html(self)

    @classmethod
    def of(cls, r: _fw.Result) -> "Result":
        return r if isinstance(r, cls) else cls(**{f.name: getattr(r, f.name) for f in fields(_fw.Result)})


@dataclass(repr=False)
class Claim(ClaimResult):
    """A claim's ledger row (see :class:`attnverify.checks.claims.ClaimResult`) that displays itself in Jupyter."""

    def _repr_markdown_(self) -> str:
        from attnverify.render.jupyter import claim_markdown

        return claim_markdown(self)

    def _repr_html_(self) -> str:
        from attnverify.render.jupyter import claim_html

        return claim_html(self)

    @classmethod
    def of(cls, c: ClaimResult) -> "Claim":
        return c if isinstance(c, cls) else cls(**{f.name: getattr(c, f.name) for f in fields(ClaimResult)})


@dataclass(repr=False)
class Report(_runner.Report):
    """An audit's results and claims ledger (see :class:`attnverify.checks.runner.Report`), with display and saving."""

    def save(self, directory: str | os.PathLike, *, force: bool = False) -> Path:
        """Write ``report.json``, ``report.md`` and the plots into ``directory``; an existing report there is
        overwritten only with ``force=True``."""
        from attnverify.outputs import check_dir
        from attnverify.render.report import write_report

        check_dir(directory, "save", force=force, hint="force=True")
        return write_report(self, directory)

    def to_markdown(self, formulas: bool = True) -> str:
        """The report as Markdown (report.md without the plot images)."""
        from attnverify.render.report import to_markdown

        return to_markdown(self, formulas=formulas)

    def to_dict(self) -> dict:
        """The JSON report as a dict."""
        from attnverify.render.report import report_dict

        return report_dict(self)

    def wrap(self, result: _fw.Result) -> Result:
        return Result.of(result)

    def result(self, check_id: str) -> Result:
        """The result of check ``check_id`` (KeyError if it did not run)."""
        for r in self.results:
            if r.id == check_id:
                return r
        raise KeyError(f"{check_id} did not run (ran: {', '.join(r.id for r in self.results)})")

    def __repr__(self) -> str:
        counts = {v: sum(r.verdict == v for r in self.results) for v in ("pass", "fail", "error")}
        return (f"<Report profile={self.profile} seed={self.seed}: {len(self.results)} checks "
                f"({counts['pass']} pass, {counts['fail']} fail, {counts['error']} error), {len(self.claims)} claims>")

    def _repr_markdown_(self) -> str:
        from attnverify.render.report import to_markdown

        return _head(to_markdown(self, formulas=False))

    def _repr_html_(self) -> str:
        from attnverify.render.jupyter import report_html

        return report_html(self)

    @classmethod
    def of(cls, r: _runner.Report) -> "Report":
        rep = r if isinstance(r, cls) else cls(**{f.name: getattr(r, f.name) for f in fields(_runner.Report)})
        rep.results = [Result.of(x) for x in rep.results]
        rep.claims = [Claim.of(c) for c in rep.claims]
        return rep


def _head(markdown: str) -> str:
    """The tables and findings of report.md (everything before the first per-check section)."""
    parts = markdown.split("\n## ")
    keep = [parts[0]] + [p for p in parts[1:] if p.split("\n", 1)[0] in ("Checks", "Claims", "Findings")]
    return "\n## ".join(keep)


def run(ids: list[str] | str | None = None, *, profile: str = "quick", seed: int = 0,
        overrides: dict[str, Any] | None = None, executor: Executor | None = None,
        progress: Callable[[str, float], None] | None = None,
        on_result: Callable[[Report], None] | None = None, store: Any = None,
        plans: list | None = None) -> Report:
    """Run the checks ``ids`` (a check id, a paper's model name for all its checks, a model file's path for all of
    its generated checks, a list of them, or None for all) and return the :class:`Report` with its claims ledger.
    Bad input raises :class:`~attnverify.checks.params.InputError` before anything runs; the same seed gives the
    same results. ``on_result(report)`` is called after each check with the report so far (claims not yet
    evaluated). ``store``: a ``attnverify.checks.store.TaskStore``; finished
    sweep tasks are saved there as they finish and reused by a rerun (same report as an uninterrupted run).
    ``plans``: a plan already resolved by :func:`attnverify.checks.runner.plan` (the command line resolves the
    parameters once and hands the plan on)."""
    if isinstance(ids, (str, Path)):
        ids = [ids]
    if ids is not None and (isinstance(ids, (bytes, Mapping)) or not isinstance(ids, Iterable)):
        raise InputError(f"ids: expected a check id, a model name or a model file's path, or a list of them; got "
                         f"{shown(ids)}")
    ids = None if ids is None else list(ids)
    if ids is not None and (bad := [i for i in ids if not isinstance(i, (str, Path))]):
        raise InputError(f"ids: expected a check id, a model name or a model file's path, got {shown(bad[0])}")
    _runner.settings(profile, seed)
    ids = None if ids is None else model_names(ids)
    plans = _runner.plan(ids, profile=profile, overrides=overrides) if plans is None else plans   # before any work
    report = Report(profile=profile, seed=int(seed), options=dict(overrides or {}))
    return Report.of(_runner.run(ids, profile=profile, seed=int(seed), overrides=overrides, executor=executor,
                                 progress=progress, store=store, plans=plans, report=report, on_result=on_result))


class Step:
    """A derivation step (:class:`attnverify.theory.derivation.Step`: statement, SymPy result, reason, label, name,
    kind, order) as a notebook shows it: its result as a display equation (the display is
    :mod:`attnverify.render.jupyter`'s; the step itself stays data). Every attribute is the step's."""

    def __init__(self, step: Any) -> None:
        self.step = step

    def __getattr__(self, name: str) -> Any:
        return getattr(self.step, name)

    def __repr__(self) -> str:
        return repr(self.step)

    def __eq__(self, other: Any) -> bool:
        return self.step == (other.step if isinstance(other, Step) else other)

    __hash__ = None  # type: ignore[assignment]

    def _repr_latex_(self) -> str:
        from attnverify.render.jupyter import step_latex

        return step_latex(self.step)

    def _repr_markdown_(self) -> str:
        from attnverify.render.jupyter import step_markdown

        return step_markdown(self.step)


def _is_model_file(word: Any) -> bool:
    return isinstance(word, Path) or (isinstance(word, str) and word.endswith(".toml"))


def model_name(word: str | Path) -> str:
    """A model file's path (``.toml``, or any Path) registered as a paper (:mod:`attnverify.model_files`) and read
    as its model name; any other word as it is (a model name or a check id)."""
    if _is_model_file(word):
        from attnverify.model_files import register

        return register(word)
    return word


def model_names(words: list) -> list[str]:
    """:func:`model_name` of each word, the model files among them registered as one command
    (attnverify.model_files.register_all): two different files with the same model id are refused (InputError),
    as on the command line, instead of the later silently replacing the earlier."""
    files = [w for w in words if _is_model_file(w)]
    if not files:
        return list(words)
    from attnverify.model_files import register_all

    names = iter(register_all(files))
    return [next(names) if _is_model_file(w) else w for w in words]


def derivation(model: str | Path, **options: Any) -> list[Step]:
    """The derivation steps of the paper whose model is ``model`` (a model name, or a model file's path:
    :func:`model_name`) (:func:`attnverify.derive.derivation`: validated options, cached), each displayed as an
    equation in Jupyter."""
    from attnverify.derive import derivation as steps

    return [Step(s) for s in steps(model_name(model), **options)]
