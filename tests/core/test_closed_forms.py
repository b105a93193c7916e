"""A theory object's wrong versions: replace() reaches every closed form that calls the replaced one, overlay()
only its caller; neither touches the original, and memoised results never leak between them."""
from __future__ import annotations

import sympy as sp

from attnverify.theory.closed_forms import ClosedForms, derived, overlay

x = sp.Symbol("x")


class Toy(ClosedForms):
    calls = 0

    @derived
    def J(self) -> sp.Expr:
        Toy.calls += 1
        return x ** 2

    @derived
    def F(self) -> sp.Expr:
        return sp.diff(self.J(), x) * (1 - x ** 2)


def test_results_are_memoised_per_object():
    Toy.calls = 0
    a, b = Toy(), Toy()
    assert a.J() is a.J() and Toy.calls == 1
    b.J()
    assert Toy.calls == 2


def test_replace_reaches_every_closed_form_and_leaves_the_original():
    t = Toy()
    assert t.F() == 2 * x * (1 - x ** 2)
    wrong = t.replace(J=lambda self: self.original("J")() * 3)
    assert wrong.J() == 3 * x ** 2
    assert wrong.F() == 6 * x * (1 - x ** 2)                     # F differentiates the wrong J
    assert t.J() == x ** 2 and t.F() == 2 * x * (1 - x ** 2)     # the original is untouched
    assert isinstance(wrong, Toy)


def test_overlay_changes_only_what_its_caller_reads():
    t = Toy()
    view = overlay(t, J=lambda theory: theory.J() * 3)
    assert view.J() == 3 * x ** 2
    assert view.F() == 2 * x * (1 - x ** 2)                      # F still calls the original J
    assert t.J() == x ** 2


def test_an_unknown_closed_form_is_named():
    import pytest

    with pytest.raises(AttributeError, match="no closed form 'K'"):
        Toy().replace(K=lambda self: 0)
    with pytest.raises(AttributeError, match="no closed form 'K'"):
        overlay(Toy(), K=lambda t: 0)
