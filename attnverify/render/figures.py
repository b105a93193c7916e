"""A check's plot (:class:`attnverify.checks.plots.Plot`) drawn with matplotlib, outside pyplot.

What the drawing does for every plot:

- mathtext labels: a typed label (a :class:`~attnverify.checks.reason.Reason`) part by part -- each
  :class:`~attnverify.checks.reason.Math` as ``$<its LaTeX>$`` (the few commands mathtext lacks rewritten),
  each :class:`~attnverify.checks.reason.Number` as the LaTeX renderer lays it out (``$1.5\\times10^{-5}$``), words
  as words; a ``str`` label (a plugin's) as text of the typesetting convention
  (:func:`attnverify.render.notation.mathtext`). What reads a label as text (the colour key, one legend entry per
  label, the wrapping of a title) reads its plain Unicode rendering (:func:`label_text`);
- one colour per parameter value (``β = 10`` and ``bound β = 10`` alike); the legend outside the axes when it is
  long;
- each series by its role (:data:`attnverify.checks.plots.SERIES_ROLES`): data with markers and error bars, a bound
  dashed beside the curve it bounds, a closed form as a smooth line under the data, a reference curve that does not
  decide the axes;
- the axes cover the data that matter: the x-range of the data and closed forms, the y-range of what is drawn there;
- on a log y axis, a noise floor (``Plot.floor``, else :data:`ROUNDING_FLOOR` x the largest |value| of the data):
  values at or below it, and non-positive ones, are cut from the curves and marked at the lower edge of the axes,
  with the floor named in the legend -- they never stretch the axis over decades of rounding noise.
"""
from __future__ import annotations

import functools
import io
import re
import textwrap
from pathlib import Path
from typing import Any

import numpy as np

from attnverify.checks.plots import Plot
from attnverify.checks.reason import CheckRef, Math, Number, Reason, Text, digits_for
from attnverify.render import notation, reasons

__all__ = ["draw_plot", "save_plot", "plot_file_name", "png_bytes", "mathtext", "label_text", "figure",
           "ROUNDING_FLOOR"]

#: the default noise floor of a log axis, relative to the largest |value| of the data: a difference of O(1)
#: quantities computed with a few hundred roundings of 2.2e-16 each is not resolved below it
ROUNDING_FLOOR = 1e-13

#: LaTeX that matplotlib's mathtext (3.x) does not parse, rewritten before the notation module's own rewrites
#: (``\le``, ``\lVert``, ``\dfrac``, ``\bigl``): each was found by drawing it with the Agg backend
#: (tests/render/test_plot_labels_typed.py draws them all)
_MATHTEXT_MORE = ((re.compile(r"\\[lr]vert(?![A-Za-z])"), "|"),
                  (re.compile(r"\\middle(?![A-Za-z])\s*"), ""))


def _math_mathtext(tex: str) -> str:
    """LaTeX source as mathtext between dollars (what mathtext cannot parse even rewritten: its Unicode, as text)."""
    for pattern, repl in _MATHTEXT_MORE:
        tex = pattern.sub(repl, tex)
    return notation.mathtext("$" + tex.replace("$", "") + "$")


def _tokens(label: Reason) -> list[tuple[str, str, bool]]:
    """A typed label as (mathtext, plain Unicode text, is_space) tokens: every word and space of its words, and
    each Math and Number whole (a title is wrapped only at the spaces between words)."""
    digits = iter(digits_for(label))
    out: list[tuple[str, str, bool]] = []

    def words(text: str) -> None:
        for piece in re.split(r"( +)", text):
            if piece:
                out.append((piece.replace("$", r"\$"), piece, piece.isspace()))

    def part(p) -> None:
        if isinstance(p, Text):                        # words, perhaps with convention mathematics between dollars
            for is_math, piece in notation.split(p.text):
                if is_math:
                    out.append((_math_mathtext(piece), notation.tex_to_unicode(piece), False))
                else:
                    words(piece)
        elif isinstance(p, Math):
            tex = p.expr if isinstance(p.expr, str) else _sympy_latex(p.expr)
            out.append((_math_mathtext(tex), reasons.math_unicode(p.expr), False))
        elif isinstance(p, Number):
            d = [next(digits) for _ in p.values()]
            # the LaTeX renderer's layout (reasons.latex: 0.746 \pm 0.004, 1.2\times10^{-4}, [a, b])
            out.append((notation.mathtext(reasons.latex_number(p, d)), reasons.number_text(p, d), False))
        elif isinstance(p, CheckRef):
            words(p.check_id)

    for p in label.lead:
        part(p)
    for i, it in enumerate(label.items):
        if i or label.lead:
            words("; " if i else " ")
        for p in it:
            part(p)
    return out


def _sympy_latex(expr) -> str:
    import sympy as sp

    return sp.latex(expr)


def mathtext(label: "str | Reason") -> str:
    """A label or title as matplotlib mathtext: a typed label (:class:`~attnverify.checks.reason.Reason`) part by
    part (module docstring); a ``str`` of the typesetting convention (mathematics between dollars, in LaTeX)
    through :func:`attnverify.render.notation.mathtext`. Words stay words."""
    if isinstance(label, Reason):
        return "".join(mt for mt, _, _ in _tokens(label))
    return notation.mathtext(label)


def label_text(label: "str | Reason | None") -> str:
    """A label as plain text (Unicode: ``β = 10``), what reads a label as text reads: the colour key, the one
    legend entry per label, the wrapping of a title (a ``str``: its convention mathematics as Unicode)."""
    if not label:
        return ""
    return reasons.plain(label) if isinstance(label, Reason) else notation.unicode(label)


def _wrap_label(label: "str | Reason", width: int) -> str:
    """A title as mathtext wrapped to ``width`` columns of its plain text, never inside a Math or Number part (nor
    inside a $...$ span of a ``str``)."""
    if not isinstance(label, Reason):
        return _wrap_keeping_math(mathtext(label), width)
    lines: list[list[str]] = [[]]
    used = 0
    toks = _tokens(label)
    for i, (mt, plain, space) in enumerate(toks):
        if space:
            run = 0                                    # the width of the run of tokens up to the next space
            for _, nxt, sp_ in toks[i + 1:]:
                if sp_:
                    break
                run += len(nxt)
            if used and used + len(plain) + run > width:
                lines.append([])
                used = 0
                continue
        elif not lines[-1] and not mt.strip():
            continue
        lines[-1].append(mt)
        used += len(plain)
    return "\n".join("".join(line).strip() for line in lines if "".join(line).strip())


#: a parameter value at the end of a label's plain text (``β = 10``, ``L = 250``, ``β = 1×10⁵``, ``#3``)
_KEY_RE = re.compile(r"(\S+\s*=\s*[-+0-9.eE×⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺∞]+|#\s*\d+)\s*$")
# a colour in a matplotlib format string: one of the single-letter colours (no marker is one of these letters) or
# a cycle colour C0..C9; given together with color=, matplotlib warns "color is redundantly defined"
_STYLE_COLOUR = re.compile(r"[bgrcmykw]|C\d")


def _colour_key(label: "str | Reason") -> str:
    """Series that differ only in their leading words (``β = 10`` and ``bound β = 10``) share a colour: the key is
    read from the label's plain text (:func:`label_text`)."""
    text = label_text(label)
    m = _KEY_RE.search(text)
    return m.group(1).replace(" ", "") if m else text


def _wrap_keeping_math(text: str, width: int) -> str:
    """``text`` wrapped to ``width`` columns without breaking inside a $...$ mathtext span (a line break there
    leaves unbalanced dollars, and matplotlib prints the TeX source)."""
    parts = text.split("$")
    glued = "$".join(p.replace(" ", "\x00") if i % 2 else p for i, p in enumerate(parts))
    return "\n".join(line.replace("\x00", " ") for line in textwrap.wrap(glued, width))


@functools.lru_cache(maxsize=1)
def _figure_class():
    """matplotlib's Figure with a PNG representation, so that a notebook shows it (once) without pyplot."""
    from matplotlib.figure import Figure

    class ReportFigure(Figure):
        def _repr_png_(self) -> bytes:
            buf = io.BytesIO()
            self.savefig(buf, format="png", dpi=100)
            return buf.getvalue()

    return ReportFigure


def figure(width: float = 6.4, height: float = 4.4):
    """A new Figure outside pyplot (no global figure list to leak into; a notebook shows it once)."""
    return _figure_class()(figsize=(width, height))


def _floor(plot: Plot, arrays: list[tuple[Any, np.ndarray, np.ndarray]]) -> float | None:
    """The noise floor of a log y axis: the plot's own, else ROUNDING_FLOOR x the largest |value| of the data."""
    if not plot.logy:
        return None
    if plot.floor is not None:
        return float(plot.floor)
    top = [np.max(np.abs(y[np.isfinite(y)])) for s, _, y in arrays
           if s.role in ("data", "closed_form") and np.any(np.isfinite(y))]
    return ROUNDING_FLOOR * max(top) if top and max(top) > 0 else None


def _limits(values: list[np.ndarray], log: bool) -> tuple[float, float] | None:
    v = np.concatenate([np.asarray(a, dtype=float).ravel() for a in values]) if values else np.array([])
    v = v[np.isfinite(v) & ((v > 0) if log else True)]
    if not v.size:
        return None
    lo, hi = float(v.min()), float(v.max())
    if log:
        pad = (hi / lo) ** 0.06 if hi > lo else 2.0
        return lo / pad, hi * pad
    pad = 0.05 * (hi - lo) if hi > lo else (0.5 * abs(lo) or 1.0)
    return lo - pad, hi + pad


def draw_plot(plot: Plot):
    """One :class:`~attnverify.checks.plots.Plot` as a matplotlib Figure (not registered with pyplot: save it with
    ``fig.savefig``, or show it as a notebook cell's value), drawn as the module docstring says."""
    import matplotlib
    from matplotlib.transforms import blended_transform_factory

    n = len({label_text(s.label) for s in plot.series})
    keys: dict[str, int] = {}
    for s in plot.series:
        keys.setdefault(_colour_key(s.label), len(keys))
    many = len(keys) > 10
    cmap = matplotlib.colormaps["viridis" if many else "tab10"]
    colour = {k: cmap(i / max(1, len(keys) - 1)) if many else cmap(i % 10) for k, i in keys.items()}
    outside = n > 8
    fig = figure(8.6 if outside else 6.4, 4.4)
    ax = fig.subplots()
    arrays = [(s, np.asarray(s.x, dtype=float), np.asarray(s.y, dtype=float)) for s in plot.series]
    floor = _floor(plot, arrays)
    cut: list[tuple[np.ndarray, Any]] = []
    seen: set[str] = set()
    drawn: list[tuple[Any, np.ndarray, np.ndarray, np.ndarray | None]] = []
    for s, x, y in arrays:
        yerr = None if s.yerr is None else np.asarray(s.yerr, dtype=float)
        if floor is not None:
            below = np.isfinite(x) & ~np.isnan(y) & ~(y > floor)
            if np.any(below) and s.role in ("data", "closed_form"):      # a bound or reference curve is just cut
                cut.append((x[below], colour[_colour_key(s.label)]))
            y = np.where(below, np.nan, y)
        drawn.append((s, x, y, yerr))
        c = colour[_colour_key(s.label)]
        text = label_text(s.label)
        label = mathtext(s.label) if text and text not in seen else None     # one legend entry per label
        seen.add(text)
        kw = {} if _STYLE_COLOUR.search(s.style or "") else {"color": c}       # a colour in the style string wins
        if s.role == "bound":
            ax.plot(x, y, "--", lw=1.3, label=label, **kw)
        elif s.role == "closed_form":
            ax.plot(x, y, "-", lw=1.6, zorder=1.5, label=label, **kw)
        elif yerr is not None:
            ax.errorbar(x, y, yerr=yerr, fmt=s.style, label=label, capsize=2, **kw)
        else:
            ax.plot(x, y, s.style, label=label, alpha=0.8 if s.role == "reference" else 1.0, **kw)
    ax.set_title(_wrap_label(plot.title, 70), fontsize=10)
    ax.set(xlabel=mathtext(plot.xlabel), ylabel=mathtext(plot.ylabel))
    if plot.logx:
        ax.set_xscale("log")
    if plot.logy:
        ax.set_yscale("log")
    if cut or any(s.role in ("bound", "reference") for s in plot.series):
        _set_limits(ax, plot, drawn, [xs for xs, _ in cut])
    if cut:
        edge = blended_transform_factory(ax.transData, ax.transAxes)
        for i, (xs, c) in enumerate(cut):
            ax.plot(xs, np.full(xs.shape, 0.015), "v", mfc="none", color=c, transform=edge, clip_on=False,
                    label=None if i else f"at or below the noise floor {_short(floor)} "
                                         "(marked at the lower edge)")
    ally = np.concatenate([y[np.isfinite(y)] for _, _, y, _ in drawn]) if drawn else np.array([])
    field = label_text(plot.ylabel).strip().split(" ")[0] in ("F", "F(rho)", "F(ρ)", "drift")  # a field's zeros
    if not plot.logy and ally.size and (ally.min() < 0 < ally.max() or (field and ally.min() <= 0 <= ally.max())):
        ax.axhline(0.0, color="0.4", lw=0.8, zorder=0)
    if (any(label_text(s.label) for s in plot.series) or cut) and n <= 24:
        if outside:
            ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), ncol=1 + n // 17, frameon=False)
        else:
            ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def _short(x: float) -> str:
    """The floor as mathtext: ``$1.6\\times10^{-14}$``."""
    from attnverify.checks.reason import decimal

    mant, exp = decimal(x, 2)
    return f"${mant}$" if exp is None else f"${mant}\\times10^{{{exp}}}$"


def _set_limits(ax, plot: Plot, drawn: list, cut_x: list) -> None:
    """The axes over the data and closed forms (x: also where values were cut at the floor; y: within that x-range,
    the bounds too); reference curves and the values cut at the floor do not widen the y axis."""
    decisive = [(s, x, y, e) for s, x, y, e in drawn if s.role in ("data", "closed_form")]
    if not decisive:
        return
    xs = [x[np.isfinite(y)] for _, x, y, _ in decisive] + list(cut_x)
    xlim = _limits(xs, plot.logx)
    if xlim is None:
        return
    lo, hi = min(float(np.min(x)) for x in xs if x.size), max(float(np.max(x)) for x in xs if x.size)
    ys = []
    for s, x, y, e in drawn:
        if s.role == "reference":
            continue
        inside = (x >= lo) & (x <= hi) & np.isfinite(y)
        ys.append(y[inside])
        if e is not None and s.role == "data":
            err = np.broadcast_to(e, y.shape) if e.ndim <= 1 else e
            if err.ndim == 1:
                ys += [(y - err)[inside], (y + err)[inside]]
    ylim = _limits(ys, plot.logy)
    ax.set_xlim(*xlim)
    if ylim is not None:
        ax.set_ylim(*ylim)


def save_plot(plot: Plot, path: Path) -> None:
    """Draw one plot to a PNG (the Figure's own Agg canvas; pyplot and its backend are not involved)."""
    draw_plot(plot).savefig(path, dpi=110)


def png_bytes(fig, dpi: int = 110) -> bytes:
    """A Figure as PNG bytes (for a file, or for embedding in the HTML report)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


def plot_file_name(check_id: str, index: int) -> str:
    return f"{check_id.replace('.', '_')}_{index}.png"
