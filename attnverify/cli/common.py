"""Pieces shared by the command-line modules: usage errors, the Ctrl-C line, --set and integer options."""
from __future__ import annotations

import signal

from attnverify.checks.params import InputError, abbreviated


class UsageError(Exception):
    """Bad command-line usage (reported in one line, exit code 2; a long value echoed in it abbreviated, as in
    InputError)."""

    def __init__(self, message: str = "") -> None:
        super().__init__(abbreviated(str(message)))


class Interrupted(Exception):
    """Ctrl-C during a run: the one line to print (what was kept, how to resume); exit code 130."""


def _ignore_sigint():
    """Ignore SIGINT (main thread only); returns the previous handler, or None where signals cannot be set."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGINT, signal.SIG_IGN)


def interrupted_message(done: int, total: int, written: str | None, outputs: bool, store) -> str:
    """One line after Ctrl-C: how far the run got, where its partial report is, and how to resume. A rerun of the
    same command replaces its own partial report without --force and reads the finished sweep tasks back from the
    task store; with --no-cache nothing was kept. ``outputs``: the command had --json or --report."""
    if written:
        kept = f"partial report in {written}"
    else:
        kept = "none finished, nothing written" if outputs else "no --json or --report: nothing written"
    if store is None:
        how = "rerun the same command to start again (--no-cache: no sweep task was kept)"
    else:
        how = f"rerun the same command to resume (finished sweep tasks are reused from {store.root})"
    return f"interrupted after {done} of {total} checks ({kept}); {how}"


def parse_sets(items: list[str]) -> dict[str, str]:
    """``KEY=VALUE`` strings as a dict; the values stay text until each check's parameter parses them."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InputError(f"--set expects KEY=VALUE, got {item!r}")
        out[key.strip()] = value.strip()
    return out


def non_negative_int(name: str, text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise InputError(f"{name}: expected a non-negative integer, got {text!r}") from None
    if value < 0:
        raise InputError(f"{name}: expected a non-negative integer, got {value}")
    return value
