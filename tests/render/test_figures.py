"""Plots that show the claim: a noise floor cut and named, the axes over the data that matter, bounds beside the
curve they bound, closed forms as smooth lines; and one figure per claim read from the judge's evidence."""
from __future__ import annotations

import numpy as np
import pytest
from render_synthetic import synthetic_report

from attnverify.checks import judges as judge
from attnverify.checks.claims import ClaimResult
from attnverify.checks.plots import Plot, Series
from attnverify.checks.stated import parse_claims
from attnverify.render.claim_figures import claim_figure, claim_figure_name
from attnverify.render.figures import draw_plot


def _lines(fig):
    return fig.axes[0].get_lines()


def test_noise_below_the_floor_is_cut_marked_and_named_not_spread_over_decades():
    # slr_oracle_vs_bayes: the oracle's excess 0.16 -> 0.025 and a Bayes excess of 1e-17 and 0 (rounding); by hand
    # the default floor is 1e-13 x 0.1606 = 1.6e-14, so the Bayes points are cut and the axis spans about a decade
    d = np.array([100.0, 400.0, 1600.0])
    plot = Plot("excess", "d", "excess", logx=True, logy=True, series=[
        Series("oracle", d, [0.1606, 0.0662, 0.02454], style="o"),
        Series("Bayes", d, [1.21e-17, 0.0, 1e-30], style="s")])
    fig = draw_plot(plot)
    lo, hi = fig.axes[0].get_ylim()
    assert 0.01 < lo < 0.02454 and 0.1606 < hi < 0.3          # the decay fills the axis
    marks = [ln for ln in _lines(fig) if ln.get_marker() == "v"]
    assert len(marks) == 1 and len(marks[0].get_xdata()) == 3
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert any("noise floor" in t and "10^{-14}" in t for t in labels)


def test_an_explicit_floor_keeps_what_lies_above_it():
    t = np.arange(1.0, 6.0)
    fig = draw_plot(Plot("w", "t", "W", logy=True, floor=1e-9,
                         series=[Series("a", t, [1, 1e-3, 1e-6, 1e-8, 1e-10], style="o")]))
    (data,) = [ln for ln in _lines(fig) if ln.get_marker() == "o"]
    assert np.isnan(data.get_ydata()[-1]) and np.isfinite(data.get_ydata()[:4]).all()
    assert fig.axes[0].get_ylim()[0] < 1e-8


def test_a_reference_curve_does_not_stretch_the_axes_and_a_bound_is_drawn_beside_its_curve():
    # meanfield_w2_bound: curves up to t = 16 beside a limit curve to t = 120
    t = np.linspace(0, 16, 30)
    plot = Plot("W2", "t", "W2", logy=True, series=[
        Series("beta=10", t, np.exp(-t), style="o"),
        Series("bound beta=10", t, 2 * np.exp(-0.9 * t), role="bound"),
        Series("beta = inf", np.linspace(0, 120, 50), np.exp(-np.linspace(0, 120, 50) / 3), role="reference")])
    fig = draw_plot(plot)
    assert fig.axes[0].get_xlim()[1] < 20
    data, bound = _lines(fig)[0], _lines(fig)[1]
    assert bound.get_linestyle() == "--" and bound.get_color() == data.get_color()


def test_a_closed_form_is_a_line_under_the_data():
    lam = np.linspace(0.5, 1.5, 101)
    fig = draw_plot(Plot("h", "lam", "h", series=[Series("closed form", lam, 1 - lam, role="closed_form", style="o"),
                                                   Series("measured", lam[::25], 1 - lam[::25], style="o")]))
    closed = _lines(fig)[0]
    assert closed.get_marker() in ("None", None, "") and closed.get_linestyle() == "-"
    assert len(closed.get_xdata()) == 101


def test_a_series_role_is_checked():
    with pytest.raises(ValueError, match="role"):
        Series("x", [1], [1], role="limit")


# ----------------------------------------------------------------------------------------------------------------
def _claim(kind: str, stated, **extra):
    (s,) = parse_claims({"claim": [{"id": "x.c", "model": "signal", "kind": kind, "stated": stated, **extra}]}, "t")
    return s


def _row(verdict) -> ClaimResult:
    return ClaimResult("x.c", "x", "", "", verdict.verdict, verdict.reason, verdict.condition, [], verdict.evidence)


def test_the_threshold_figure_shows_the_bracket_and_the_stated_value():
    v = judge.threshold(_claim("threshold", 1.0), judge.Measured(1.34, interval=(1.33, 1.35), how="drift sign"))
    fig = claim_figure(_row(v))
    ax = fig.axes[0]
    assert ax.get_title(loc="left") == "x.c: refuted"
    stated = [ln for ln in ax.get_lines() if list(ln.get_xdata()) == [1.0, 1.0]]
    assert stated and ax.get_xlim()[0] < 1.0 and ax.get_xlim()[1] > 1.35


def test_the_rate_figure_draws_the_fitted_and_the_stated_rate():
    s = _claim("rate", "beta**(-1/2)", variable="beta", direction="upper")
    v = judge.rate(s, judge.Measured(-1.0, 0.01, "fit"), [10, 100, 1000])
    ax = claim_figure(_row(v)).axes[0]
    fitted, stated = ax.get_lines()[0], ax.get_lines()[1]
    # by hand: over beta = 10..1000 (two decades) a slope of -1 falls by 1e-2, the stated -1/2 by 1e-1
    assert fitted.get_ydata()[-1] == pytest.approx(1e-2, rel=1e-9)
    assert stated.get_ydata()[-1] == pytest.approx(1e-1, rel=1e-9)


def test_the_value_figure_and_a_claim_without_figures():
    v = judge.value(_claim("value", 0.9965), judge.Measured(0.9873, 0.0006, "30 runs"))
    assert claim_figure(_row(v)) is not None
    own = ClaimResult("B.x", "B", "", "", "holds", "r", None, [], {"meanfield.w2_bound": {"slope": 1.47}})
    assert claim_figure(own) is None and claim_figure_name("B.theorem1") == "claim_B_theorem1.png"


def test_every_synthetic_claim_has_its_figure():
    for c in synthetic_report().claims:
        assert claim_figure(c) is not None, c.id
