"""A progress line for the terminal that only moves forward, with an estimate of the time left."""
from __future__ import annotations

import sys
import time
from typing import TextIO


def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m" if seconds >= 3600 else f"{seconds // 60}m{seconds % 60:02d}s"


class Progress:
    """Callable as a check's progress hook ``(check_id, fraction)``. The overall fraction counts each check as
    an equal share; the displayed value is the running maximum, so a check whose inner sweeps restart at 0 never
    moves the bar back. The ETA (elapsed x remaining / done) appears once 2 % is done."""

    def __init__(self, ids: list[str], stream: TextIO = sys.stderr, width: int = 24) -> None:
        self.ids = list(ids)
        self.stream = stream
        self.width = width
        self.start = time.monotonic()
        self.best = 0.0
        self.current = self.ids[0] if self.ids else ""

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
        eta = f"  ETA {_clock(elapsed * (1 - self.best) / self.best)}" if self.best >= 0.02 and self.best < 1 else ""
        filled = int(self.width * self.best)
        n = len(self.ids)
        k = min(n, (self.ids.index(self.current) + 1) if self.current in self.ids else 1)
        line = (f"[{k}/{n}] {self.current[:36]:<36} [{'#' * filled}{'.' * (self.width - filled)}] "
                f"{100 * self.best:5.1f}%  {_clock(elapsed)}{eta}")
        self.stream.write("\r" + line)
        self.stream.flush()

    def clear(self) -> None:
        self.stream.write("\r" + " " * 100 + "\r")
        self.stream.flush()
