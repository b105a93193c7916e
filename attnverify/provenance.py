"""Provenance: what produced a report, so that a reader can tell what to install and run to get it again.

:func:`collect` returns one dict, written into every output (the JSON report's ``provenance``, a line of
report.md, a paragraph of the LaTeX report; the HTML report reads the same dict):

- ``attnverify``: the version; ``python`` and ``packages``: the versions of Python, SymPy, mpmath, NumPy, SciPy,
  python-flint and numba (``None`` for one that is not installed);
- ``git``: when attnverify runs from a git checkout, the commit and whether tracked files differ from it
  (``dirty``; untracked files do not count); ``None`` otherwise (an installed package, or no git);
- ``time_utc`` (ISO 8601, seconds) and ``platform`` (``platform.platform()``, the machine);
- ``profile``, ``seed`` and ``options``: the model options and parameters set (``--set``), and every
  command-line option of the invocation that differs from its default (:func:`record_invocation`).

Reproducibility rule: the same seed gives the same report apart from timings and this block; tools that compare
reports drop it (:func:`without`).
"""
from __future__ import annotations

import functools
import platform
import subprocess
import sys
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any, Mapping

__all__ = ["PACKAGES", "collect", "git_state", "record_invocation", "clear_invocation", "without", "summary"]

#: distribution names whose versions are recorded, in this order
PACKAGES = ("sympy", "mpmath", "numpy", "scipy", "python-flint", "numba")
#: the options of the command line that produced this process's reports, when they differ from the defaults
_INVOCATION: dict[str, Any] = {}


def record_invocation(args: Any, parser: Any) -> None:
    """Remember the command line's options that differ from their defaults (``args`` the argparse Namespace of
    ``parser``, the main parser): e.g. ``--executor``, ``--jobs``, ``--no-cache``, and the check ids given.
    Options that name outputs (``--json``, ``-o``) or only change the display (``--quiet``) are left out, and
    the profile, seed and ``--set`` values are recorded on their own."""
    import argparse

    _INVOCATION.clear()
    actions = list(getattr(parser, "_actions", []))
    for action in actions:
        if isinstance(action, argparse._SubParsersAction) and getattr(args, "command", None) in action.choices:
            actions += action.choices[args.command]._actions
    skip = {"help", "command", "profile", "seed", "sets", "version", "quiet", "force", "json_path", "report_dir",
            "output", "markdown"}
    for action in actions:
        key = action.dest
        if key in skip or not hasattr(args, key):
            continue
        value = getattr(args, key)
        if value == action.default or value in (None, False, [], ""):
            continue
        _INVOCATION[action.option_strings[-1] if action.option_strings else key] = value


def clear_invocation() -> None:
    """Forget the recorded command line (a command has finished; reports made later in the process, through the
    Python API, were not made by it)."""
    _INVOCATION.clear()


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


@functools.lru_cache(maxsize=1)
def _versions() -> dict[str, str | None]:
    return {name: _version(name) for name in PACKAGES}


@functools.lru_cache(maxsize=1)
def git_state() -> dict | None:
    """``{"commit": sha, "dirty": bool}`` when the attnverify package sits in the top folder of a git checkout,
    else None (git missing, not a checkout, or a checkout of something else)."""
    root = Path(__file__).resolve().parent.parent

    def git(*argv: str) -> str | None:
        try:
            proc = subprocess.run(["git", "-C", str(root), *argv], capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.SubprocessError):
            return None
        return proc.stdout.strip() if proc.returncode == 0 else None

    top = git("rev-parse", "--show-toplevel")
    if top is None or Path(top).resolve() != root:
        return None
    commit = git("rev-parse", "HEAD")
    status = git("status", "--porcelain", "--untracked-files=no")
    if commit is None or status is None:
        return None
    return {"commit": commit, "dirty": bool(status)}


def collect(*, profile: str | None = None, seed: int | None = None, options: Mapping[str, Any] | None = None,
            now: datetime | None = None) -> dict:
    """The provenance of a report made now (``now``: a fixed time, for tests) under ``profile`` and ``seed`` with
    the model options and parameters ``options`` (as given with ``--set``)."""
    from attnverify import __version__

    when = (now or datetime.now(timezone.utc)).astimezone(timezone.utc)
    given = {str(k): _plain(v) for k, v in (options or {}).items()}
    given.update({k: _plain(v) for k, v in _INVOCATION.items()})
    return {"attnverify": __version__, "python": platform.python_version(), "packages": dict(_versions()),
            "git": git_state(), "time_utc": when.strftime("%Y-%m-%dT%H:%M:%SZ"), "platform": platform.platform(),
            "profile": profile, "seed": seed, "options": given}


def _plain(value: Any) -> Any:
    """An option value as JSON data (arrays as lists, anything else unknown as text)."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def without(report: dict) -> dict:
    """A JSON report without its provenance block (what two runs of the same seed have in common, timings
    aside)."""
    return {k: v for k, v in report.items() if k != "provenance"}


def summary(prov: Mapping[str, Any]) -> str:
    """One line: attnverify and Python versions, the packages, the commit, time and platform, the run's settings."""
    pk = ", ".join(f"{name} {ver}" for name, ver in (prov.get("packages") or {}).items() if ver)
    git = prov.get("git")
    where = (f"commit {git['commit'][:12]}{' (modified)' if git.get('dirty') else ''}" if git else "not a checkout")
    opts = prov.get("options") or {}
    settings = ", ".join(f"{k}={v}" for k, v in opts.items()) or "none"
    return (f"attnverify {prov.get('attnverify')}, Python {prov.get('python')}; {pk}; {where}; "
            f"{prov.get('time_utc')} on {prov.get('platform')}; profile {prov.get('profile')}, seed "
            f"{prov.get('seed')}; options differing from the defaults: {settings}")


if __name__ == "__main__":          # pragma: no cover -- a quick look: python -m attnverify.provenance
    print(summary(collect()), file=sys.stdout)
