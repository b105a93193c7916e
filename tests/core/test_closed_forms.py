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


# ---------------------------------------------------------------------------------------- the persistent memo
class Kept(Toy):
    persist_key = "kept"


class DictStore:
    def __init__(self) -> None:
        self.data: dict = {}
        self.reads = 0

    def load(self, key):
        self.reads += 1
        return (True, self.data[key]) if key in self.data else (False, None)

    def save(self, key, value):
        self.data[key] = value


def test_a_persistent_memo_serves_a_new_object_but_never_a_mutant():
    from attnverify.theory import closed_forms

    store = DictStore()
    closed_forms.persist(store)
    try:
        Toy.calls = 0
        assert Kept().F() == 2 * x * (1 - x ** 2) and Toy.calls == 1
        assert Kept().F() == 2 * x * (1 - x ** 2) and Toy.calls == 1          # a fresh object: read back
        wrong = Kept().replace(J=lambda self: 3 * x ** 2)
        assert wrong.F() == 6 * x * (1 - x ** 2)                               # derived afresh, not the stored F
        reads = store.reads
        Toy().J()                                                               # no persist_key: no store
        assert store.reads == reads and Toy.calls == 2
        assert not any("Replaced" in k for k in store.data) and len(store.data) == 2
    finally:
        closed_forms.persist(None)
    Toy.calls = 0
    Kept().J()
    assert Toy.calls == 1                                                       # removed: derived again


def test_a_cli_run_keeps_papers_closed_forms_in_the_derivation_cache(tmp_path, monkeypatch):
    """attnverify run stores Paper A's derived closed forms (entries theory-*.pickle under the cache root); the
    memo is removed when the command ends."""
    from attnverify.cli import main
    from attnverify.theory import closed_forms

    from attnverify.theory.signal import THEORY

    monkeypatch.setenv("ATTNVERIFY_CACHE_DIR", str(tmp_path))
    monkeypatch.setitem(THEORY.__dict__, "_memo", {})       # derived afresh here, whatever ran before in this process
    assert main(["run", "signal.reduced_field_identity", "--quiet", "--executor", "serial"]) == 0
    assert list((tmp_path / "derivations").glob("theory-*.pickle"))
    assert not closed_forms.persisting()
