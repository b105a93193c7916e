"""Output times added where a decay crosses its fit window too quickly (checks.meanfield.window_sampling)."""
import numpy as np

from attnverify.checks.meanfield.window_sampling import MIN_IN_WINDOW, crossings, refine_through_window
from attnverify.checks.stats import decay_rate

LO, HI = 1e-8, 1e-3


def _flow(rates):
    """An exact autonomous flow: coordinate j of the state decays as e^{-rates_j t} (run_from integrates it)."""
    rates = np.asarray(rates, float)

    def run_from(x, times):
        return x[None] * np.exp(-np.outer(times, rates))[:, :, None]
    return run_from


def test_a_decay_faster_than_the_grid_is_sampled_through_its_window_and_fitted():
    """Rate 43 on a grid 0.25 apart (the sweep model's case): one sample in the window, no fit; refined, at least
    MIN_IN_WINDOW samples and the fitted rate is the true one to 1e-9."""
    run_from = _flow([43.0, 1.0])
    t = np.linspace(0.0, 60.0, 241)
    X = run_from(np.ones((2, 1)), t)
    series = lambda X: np.abs(X[:, :, 0])
    assert np.isnan(decay_rate(t, series(X)[:, 0], LO, HI)[0])
    assert [c[2] for c in crossings(t, series(X), LO, HI)] == [1]      # the slow column has enough samples
    t2, X2 = refine_through_window(t, X, series, run_from, LO, HI)
    assert not crossings(t2, series(X2), LO, HI)
    assert np.all(np.diff(t2) > 0) and t2[-1] == t[-1]
    for j, c in enumerate((43.0, 1.0)):
        assert abs(decay_rate(t2, series(X2)[:, j], LO, HI)[0] - c) < 1e-9 * c


def test_a_grid_that_already_resolves_every_crossing_is_left_alone():
    run_from = _flow([1.0, 2.0])
    t = np.linspace(0.0, 60.0, 241)
    X = run_from(np.ones((2, 1)), t)
    t2, X2 = refine_through_window(t, X, lambda X: np.abs(X[:, :, 0]), run_from, LO, HI)
    assert np.array_equal(t2, t) and np.array_equal(X2, X)


def test_a_series_that_never_falls_below_the_window_asks_for_nothing():
    """A plateau inside the window (the flow has not converged) is not a crossing: refining cannot help it, and the
    check reads it from the fit itself."""
    t = np.linspace(0.0, 10.0, 41)
    S = np.column_stack([np.full(t.size, 1e-5), np.exp(-t)])
    assert crossings(t, S, LO, HI) == []
    assert MIN_IN_WINDOW >= 12
