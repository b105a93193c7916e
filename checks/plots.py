"""What a check's plot shows, as data (drawn by ``attnverify.render.figures``): the curves and what each one is.

A curve's ``role`` tells the renderer how to draw it and whether it decides the axes:

* ``"data"`` -- a measurement (markers, error bars): the axes cover it;
* ``"bound"`` -- a bound drawn beside the measured curve (dashed, in the colour of the curve it bounds: a label that
  ends with the same ``beta=10``); it enters the axes only over the x-range of the data;
* ``"closed_form"`` -- a closed form, drawn as a smooth line: give it on a dense grid of x (a few points are a
  polyline, and the renderer draws what it is given);
* ``"reference"`` -- a curve for comparison that does not decide the axes (a limit curve that runs on beyond the
  measured range is drawn only where the axes reach).

Titles, axis labels and curve labels are typed, like a verdict's reason: a
:class:`~attnverify.checks.reason.Reason` built with :func:`~attnverify.checks.reason.reason` from words,
:class:`~attnverify.checks.reason.Math` (a symbol, an expression) and :class:`~attnverify.checks.reason.Number`
parts -- ``reason(RHO)``, ``reason("closed form at ", THETA, " = ", Number(2.0))`` -- which the renderer draws as
mathtext (the mathematics typeset, the numbers laid out as every output lays them out). A ``str`` (text of the
typesetting convention: mathematics between dollars, in LaTeX) keeps working, for plugins.

``Plot.floor`` (on a log axis): values at or below it are numerical noise (rounding), not measurements of the
quantity: they are cut from the curves, marked at the lower edge of the axes and named in the legend. Without it,
the renderer takes the rounding floor 1e-13 x the largest |value| of the data on a log axis.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Union

from attnverify.checks.reason import Reason

#: how a series is drawn and whether it decides the axes (module docstring)
SERIES_ROLES = ("data", "bound", "closed_form", "reference")

#: a title or label: a typed Reason (words, Math, Number parts), or a ``str`` of the typesetting convention
Label = Union[Reason, str]


@dataclass
class Series:
    """One curve of a plot: its ``label`` (a :data:`Label`); ``yerr`` draws error bars, ``style`` is a matplotlib
    format string, ``role`` one of :data:`SERIES_ROLES`."""

    label: Label
    x: Any
    y: Any
    yerr: Any = None
    style: str = "-"
    role: str = "data"

    def __post_init__(self) -> None:
        if self.role not in SERIES_ROLES:
            raise ValueError(f"Series {self.label!r}: role {self.role!r} is not one of {', '.join(SERIES_ROLES)}")


@dataclass
class Plot:
    """A figure: its title and axis labels (each a :data:`Label`: a typed Reason, or a ``str`` of the typesetting
    convention), the curves, log axes, and the noise ``floor`` of a log y axis (module docstring)."""

    title: Label
    xlabel: Label
    ylabel: Label
    series: list[Series]
    logx: bool = False
    logy: bool = False
    floor: float | None = None
