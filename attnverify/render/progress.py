"""A progress line for the terminal that only moves forward, with an estimate of the time left.

Drawn by tqdm: the line is as wide as the terminal (re-read on every refresh, so a resized window is followed),
the bar shrinks to make room and a line that still does not fit is cut, never wrapped.
"""
from __future__ import annotations

import os
import shutil
import sys
import time
from typing import TextIO

from tqdm import tqdm

STEPS = 1000          # the bar counts thousandths of the whole run
STATUS = 38           # columns kept for the bar (at least 10) and the status text after it


class _Bar(tqdm):
    """tqdm with a free status text after the bar (``{status}`` in the format; tqdm's postfix adds a comma)."""

    status = ""

    @property
    def format_dict(self):
        return {**super().format_dict, "status": self.status}


def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m" if seconds >= 3600 else f"{seconds // 60}m{seconds % 60:02d}s"


class Progress:
    """Callable as a check's progress hook ``(check_id, fraction)``. The overall fraction counts each check as
    an equal share; the displayed value is the running maximum, so a check whose inner sweeps restart at 0 never
    moves the bar back. The ETA (elapsed x remaining / done) appears once 2 % is done."""

    def __init__(self, ids: list[str], stream: TextIO = sys.stderr, width: int | None = None) -> None:
        self.ids = list(ids)
        self.stream = stream
        self.start = time.monotonic()
        self.best = 0.0
        self.current = self.ids[0] if self.ids else ""
        tty = bool(getattr(stream, "isatty", lambda: False)())
        self._fixed = width or (None if tty else shutil.get_terminal_size((100, 24)).columns)
        self._bar = _Bar(total=STEPS, file=stream, leave=False, dynamic_ncols=self._fixed is None,
                         ncols=self._fixed, bar_format="{desc} |{bar}| {status}", mininterval=0.2,
                         ascii=not _unicode(stream), delay=0.1)

    def __call__(self, check_id: str, fraction: float) -> None:
        i = self.ids.index(check_id) if check_id in self.ids else 0
        f = min(max(float(fraction), 0.0), 1.0)
        self.current = check_id
        self._show((i + f) / max(1, len(self.ids)))

    def done(self, check_id: str) -> None:
        """A check finished: its whole share is done."""
        i = self.ids.index(check_id) if check_id in self.ids else 0
        if i + 1 < len(self.ids):
            self.current = self.ids[i + 1]
        self._show((i + 1) / max(1, len(self.ids)))

    def _show(self, overall: float) -> None:
        self.best = max(self.best, overall)
        elapsed = time.monotonic() - self.start
        eta = f"  ETA {_clock(elapsed * (1 - self.best) / self.best)}" if 0.02 <= self.best < 1 else ""
        n = len(self.ids)
        k = min(n, (self.ids.index(self.current) + 1) if self.current in self.ids else 1)
        room = max(8, self._columns() - STATUS - len(f"[{k}/{n}] "))
        name = self.current if len(self.current) <= room else self.current[:room - 1] + "…"
        self._bar.set_description_str(f"[{k}/{n}] {name}", refresh=False)
        self._bar.status = f"{100 * self.best:5.1f}%  {_clock(elapsed)}{eta}"
        self._bar.update(int(STEPS * self.best) - self._bar.n)
        self._bar.refresh()

    def _columns(self) -> int:
        if self._fixed:
            return self._fixed
        try:
            return os.get_terminal_size(self.stream.fileno()).columns
        except (OSError, ValueError, AttributeError):
            return shutil.get_terminal_size((100, 24)).columns

    def clear(self) -> None:
        """Remove the line (the terminal is left as it was before the run)."""
        self._bar.close()


def _unicode(stream: TextIO) -> bool:
    encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "")
    return encoding in ("utf8", "utf16", "utf32")
