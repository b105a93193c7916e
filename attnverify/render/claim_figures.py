r"""A figure for each claim whose verdict a picture explains, drawn from the figures the judge recorded in the
claim's evidence (``evidence["stated"]``, written by the shared judges for every kind; a claim whose evaluator
records other fields gets no figure):

- ``value``: the measured value with its z-standard-error band against the stated figure (with its own
  uncertainty and its resolution) and the derived value;
- ``threshold``: the measured bracket of the switch, the derived enclosure, and the stated threshold;
- ``rate``: the fitted rate against the stated one over the measured range (the power laws, or exponentials, through
  a common start), with the band of z standard errors of the fitted exponent;
- ``formula``: each point where the stated and the derived formula were compared with the measurement, as distances
  from the derived value in standard errors of the measurement (the counterexample is the point where the stated
  value lies outside the band and the measurement inside);
- ``bound``: per series, the largest held-out LHS / (K g) with its uncertainty, against the line 1 (the bound with
  the fitted constant K).

Labels with mathematics or numbers are built as typed reasons (:mod:`attnverify.checks.reason`) and drawn as
matplotlib mathtext by :func:`attnverify.render.figures.mathtext`: the numbers laid out as every output lays them out.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from attnverify.checks.reason import Math, Number, reason
from attnverify.render.figures import figure, label_text, mathtext

__all__ = ["claim_figure", "claim_figure_name", "FIGURE_KINDS"]

FIGURE_KINDS = ("value", "threshold", "rate", "formula", "bound")
_Z = 3.0          # the judges' agreement band (standard errors) when the evidence does not record its own
_PM = Math(r"\pm")
#: a bound's held-out ratio LHS / (K g) and the figure's axis LHS / bound (LaTeX: words in the maths)
_RATIO, _OVER_BOUND = Math(r"\mathrm{LHS} / (K g)"), Math(r"\mathrm{LHS} / \mathrm{bound}")
#: a formula's distance from the derived value in standard errors of the measurement (LaTeX: words in the maths)
_DISTANCE = Math(r"(\mathrm{value} - \mathrm{derived}) / \mathrm{se}")


def _label(*parts: Any) -> str:
    """A label from typed parts (words, Math, numbers: :func:`attnverify.checks.reason.reason`) as mathtext."""
    return mathtext(reason(*parts))


def claim_figure_name(claim_id: str) -> str:
    """The file name of a claim's figure: ``claim_B_theorem1.png``."""
    return "claim_" + "".join(ch if ch.isalnum() else "_" for ch in claim_id) + ".png"


def _get(row: Any, name: str) -> Any:
    return row.get(name) if isinstance(row, dict) else getattr(row, name, None)


def claim_figure(row: Any):
    """The figure that explains ``row``'s verdict (a ClaimResult or its JSON dict), or None when its evidence
    holds no figures of a kind drawn here (module docstring)."""
    ev = (_get(row, "evidence") or {}).get("stated")
    if not isinstance(ev, dict):
        return None
    draw = {"value": _value, "threshold": _threshold, "rate": _rate, "formula": _formula, "bound": _bound}.get(
        ev.get("kind"))
    if draw is None:
        return None
    try:
        fig = draw(ev)
    except (KeyError, TypeError, ValueError, IndexError):
        return None                                # the evidence lacks a figure the picture needs: no picture
    if fig is not None:
        fig.axes[0].set_title(f"{_get(row, 'id')}: {_get(row, 'verdict')}", fontsize=10, loc="left")
        fig.tight_layout()
    return fig


def _num(x: Any) -> float:
    v = float(x)
    if not math.isfinite(v):
        raise ValueError("not finite")
    return v


def _line_axes(height: float = 2.6):
    fig = figure(6.4, height)
    ax = fig.subplots()
    ax.grid(alpha=0.3, axis="x")
    return fig, ax


def _value(ev: dict):
    S, M, se = _num(ev["stated_value"]), _num(ev["measured"]), _num(ev.get("measured_se") or 0.0)
    z, u = float(ev.get("z", _Z)), float(ev.get("stated_uncertainty") or 0.0)
    fig, ax = _line_axes()
    res = ev.get("resolution")
    if res:
        ax.axvspan(S - float(res), S + float(res), color="C1", alpha=0.15,
                   label=_label("stated ", _PM, " its resolution"))
    ax.errorbar([M], [1], xerr=[[z * se], [z * se]], fmt="o", color="C0", capsize=4,
                label=_label("measured ", _PM, " ", Number(z, digits=6), " se"))
    ax.errorbar([S], [0], xerr=[[z * u], [z * u]] if u else None, fmt="s", color="C1", capsize=4, label="stated")
    if ev.get("derived") is not None:
        ax.plot([_num(ev["derived"])], [1], "D", mfc="none", color="C2", ms=9, label="derived")
    ax.set_yticks([0, 1], ["stated", "measured"])
    ax.set_ylim(-0.8, 1.8)
    ax.legend(fontsize=8, loc="upper right", ncol=2)
    return fig


def _threshold(ev: dict):
    T = _num(ev["stated_value"])
    lo, hi = (_num(x) for x in ev["measured_bracket"])
    fig, ax = _line_axes()
    ax.axvspan(lo, hi, color="C0", alpha=0.25, label="measured bracket of the switch")
    enc = ev.get("derived_enclosure")
    if enc:
        a, b = (_num(x) for x in enc)
        if b > a:
            ax.axvspan(a, b, fill=False, hatch="///", edgecolor="C2", label="derived enclosure")
        else:
            ax.axvline(a, color="C2", ls=":", label="derived threshold")
    ax.axvline(T, color="C1", lw=2, label="stated threshold")
    span = max(hi, T, lo) - min(lo, T, hi) or abs(T) or 1.0
    ax.set_xlim(min(lo, T) - 0.3 * span, max(hi, T) + 0.3 * span)
    ax.set_yticks([])
    ax.legend(fontsize=8, loc="upper right")
    return fig


def _variable_label(name: str) -> str:
    import sympy as sp

    return f"${sp.latex(sp.Symbol(name))}$" if name else "variable"


def _rate(ev: dict):
    lo, hi = (_num(x) for x in ev["range"])
    p, m = _num(ev["stated_slope"]), _num(ev["measured_slope"])
    se, z = float(ev.get("measured_se") or 0.0), float(ev.get("z", _Z))
    power = ev.get("scale", "power") == "power"
    if power and not 0 < lo < hi:
        raise ValueError("a power law needs 0 < lo < hi")
    v = np.geomspace(lo, hi, 120) if power else np.linspace(lo, hi, 120)
    s = np.log(v / lo) if power else v - lo

    def curve(slope: float) -> np.ndarray:
        return np.exp(slope * s)

    fig = figure(6.4, 4.0)
    ax = fig.subplots()
    var = _variable_label(str(ev.get("variable", "")))
    if se:
        ax.fill_between(v, curve(m - z * se), curve(m + z * se), color="C0", alpha=0.2,
                        label=_label("fitted exponent ", _PM, " ", Number(z, digits=6), " se"))
    ax.plot(v, curve(m), "-", color="C0", lw=2, label=_label("fitted: slope ", Number(m, digits=4)))
    ax.plot(v, curve(p), "--", color="C1", lw=2, label=_label("stated: slope ", Number(p, digits=4),
                                                              " (an upper bound)" if ev.get("direction") == "upper"
                                                              else ""))
    if ev.get("derived_slope") is not None:
        ax.plot(v, curve(_num(ev["derived_slope"])), ":", color="C2", lw=2, label="derived")
    ax.set_yscale("log")
    if power:
        ax.set_xscale("log")
    ax.set(xlabel=mathtext(var), ylabel="relative to the first point")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return fig


def _formula(ev: dict):
    tried = ev.get("tried")
    if tried:
        points = [(t["point"], _num(t["stated"]), _num(t["derived"]), _num(t["measured"]), _num(t["se"]))
                  for t in tried]
    elif ev.get("point") is not None and ev.get("measured") is not None:
        d = _num(ev["derived"])
        points = [(ev["point"], d, d, _num(ev["measured"]), _num(ev["measured_se"]))]
    else:
        return None
    if not all(se > 0 for *_, se in points):
        return None
    z = float(ev.get("z", _Z))
    fig = figure(6.4, 3.8)
    ax = fig.subplots()
    idx = np.arange(len(points))
    ax.axhspan(-z, z, color="C0", alpha=0.12, label=_label("within ", Number(z, digits=6), " se of the derived value"))
    ax.axhline(0.0, color="C2", lw=1, label="derived")
    measured = [(m - d) / se for _, _, d, m, se in points]
    stated = [(s - d) / se for _, s, d, _, se in points]
    ax.plot(idx, measured, "o", color="C0", label="measured")
    ax.plot(idx, stated, "x", color="C1", ms=9, mew=2, label="stated")
    ax.set_xticks(idx, [_point_label(p) for p, *_ in points], fontsize=7)
    ax.set_xlim(-0.6, len(points) - 0.4)
    ax.set_ylabel(_label(_DISTANCE, " of the measurement"))
    top = max(abs(v) for v in [*measured, *stated, z])
    if top > 30 * z:                                         # a counterexample far out: log scale beyond the band
        ax.set_yscale("symlog", linthresh=2 * z)
    ax.set_ylim(-1.3 * top, 1.3 * top)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return fig


def _point_label(point: Any) -> str:
    """A compared point (``{"beta": 10, "theta": 0.5}``) as mathtext lines of ``β = 10, θ = 0.5``, at most about 24
    columns of plain text a line, never broken inside an item."""
    if not isinstance(point, dict):
        return str(point)
    items = [reason(_name(k), " = ", Number(float(v), digits=3) if isinstance(v, (int, float))
                    and not isinstance(v, bool) else str(v)) for k, v in point.items()]
    lines: list[list] = []
    used = 0
    for it in items:
        width = len(label_text(it))
        if lines and used + 2 + width <= 24:
            lines[-1].append(it)
            used += 2 + width
        else:
            lines.append([it])
            used = width
    return "\n".join(", ".join(mathtext(it) for it in line) for line in lines)


def _name(name: Any) -> Any:
    """A point's variable as mathematics when it is a name (``beta`` -> beta), else as words."""
    import sympy as sp

    text = str(name)
    return Math(sp.Symbol(text)) if text.isidentifier() else text


def _bound(ev: dict):
    rows = ev["series"]
    if not rows:
        return None
    z = float(ev.get("z", _Z))
    fig = figure(6.4, 3.8)
    ax = fig.subplots()
    idx = np.arange(len(rows))
    exc = np.array([_num(r["max_excess"]) for r in rows])
    err = np.array([z * float(r.get("excess_uncertainty") or 0.0) for r in rows])
    ax.errorbar(idx, exc, yerr=err, fmt="o", capsize=4, color="C0",
                label=_label("largest held-out ", _RATIO, " ", _PM, " ", Number(z, digits=6), " uncertainties"))
    K = ev.get("K_fitted")
    ax.axhline(1.0, color="C1", lw=2, label=_label("the bound", *((" (", Math(r"K"), " = ", Number(float(K), digits=4),
                                                                   ", fitted)") if K else ())))
    ax.set_xticks(idx, [mathtext(str(r["series"])) for r in rows], fontsize=7, rotation=20, ha="right")
    if exc.min() > 0 and max(exc.max(), 1.0) / exc.min() > 30:
        ax.set_yscale("log")
    ax.set_ylabel(_label(_OVER_BOUND))
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return fig
