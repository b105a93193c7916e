"""What a command that runs checks was asked for, read and validated once (:class:`RunOptions`): the plan, the
runner, the claims and the outputs all read this one object, and bad input is one line and exit 2 before any
work."""
from __future__ import annotations

import argparse
from dataclasses import dataclass, field

from attnverify.checks.params import PROFILES, InputError, shown
from attnverify.cli.common import non_negative_int, parse_sets

#: the most workers --jobs may ask for (a process each; beyond it a pool cannot even be sized)
MAX_JOBS = 1024


@dataclass(frozen=True)
class RunOptions:
    """A run's options: ``profile`` (one of PROFILES), ``seed`` (a non-negative integer), ``overrides`` (``--set``
    name -> text), how tasks are executed (``executor``, ``jobs`` >= 1 or None, ``scheduler``), ``quiet``, the task
    store (``no_cache``, ``cache_dir``) and the outputs written as the run goes (``json_path``, ``report_dir``)."""

    profile: str = "quick"
    seed: int = 0
    overrides: dict = field(default_factory=dict)
    executor: str = "local"
    jobs: int | None = None
    scheduler: str | None = None
    quiet: bool = False
    no_cache: bool = False
    cache_dir: str | None = None
    json_path: str | None = None
    report_dir: str | None = None

    def __post_init__(self) -> None:
        if self.profile not in PROFILES:
            raise InputError(f"unknown profile {self.profile!r} (choose from {', '.join(PROFILES)})")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise InputError(f"--seed: expected a non-negative integer, got {self.seed!r}")
        if self.jobs is not None and (isinstance(self.jobs, bool) or not isinstance(self.jobs, int) or self.jobs < 1):
            raise InputError("--jobs: needs at least one worker")
        if self.jobs is not None and self.jobs > MAX_JOBS:
            raise InputError(f"--jobs: at most {MAX_JOBS} workers, got {shown(self.jobs)}")

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> "RunOptions":
        """The options of a parsed command line (the fields a command does not have keep their defaults)."""
        get = lambda name, default=None: getattr(args, name, default)   # noqa: E731 -- one lookup rule
        jobs = get("jobs")
        return cls(profile=get("profile", "quick"), seed=non_negative_int("--seed", get("seed", 0)),
                   overrides=parse_sets(get("sets") or []),
                   executor=get("executor", "local") or "local",
                   jobs=non_negative_int("--jobs", jobs) if jobs is not None else None,
                   scheduler=get("scheduler"), quiet=bool(get("quiet", False)),
                   no_cache=bool(get("no_cache", False)), cache_dir=get("cache_dir"),
                   json_path=get("json_path"), report_dir=get("report_dir"))
