"""A theory object's wrong versions: replace() reaches every closed form that calls the replaced one, overlay()
only its caller; neither touches the original, and memoised results never leak between them."""
from __future__ import annotations

import sympy as sp

from attnverify.theory.closed_forms import ClosedForms, derived, overlay, recorded

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
    with pytest.raises(ValueError, match="'J' is replaced already"):
        Toy().replace(J=lambda self: 0).replace(J=lambda self: 1)
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
    """attnverify run stores a paper's derived closed forms (entries theory-*.pickle under the cache root; Paper B's
    zero-temperature flow, the cheapest to derive); when the command ends, the memo installed before it (none, or
    the test session's) is back."""
    from attnverify.cli import main
    from attnverify.theory import closed_forms

    from attnverify.theory.meanfield import THEORY

    before = closed_forms.persistent_store()
    monkeypatch.setenv("ATTNVERIFY_CACHE_DIR", str(tmp_path))
    monkeypatch.setitem(THEORY.__dict__, "_memo", {})       # derived afresh here, whatever ran before in this process
    monkeypatch.setitem(THEORY.__dict__, "_deps", {})
    closed_forms.persist(None)
    try:
        assert main(["run", "meanfield.zero_temperature_flow", "--quiet", "--executor", "serial"]) == 0
        assert list((tmp_path / "derivations").glob("theory-*.pickle"))
        assert not closed_forms.persisting()
    finally:
        closed_forms.persist(before)


# ------------------------------------------------------------------------ what a copy keeps of the original's memo
class Graph(ClosedForms):
    """J; K independent of J; F = J' (1 - x^2); G = K + a helper that reads J without being memoised itself."""
    calls: dict = {}

    def _count(self, name: str) -> None:
        Graph.calls[name] = Graph.calls.get(name, 0) + 1

    @derived
    def J(self) -> sp.Expr:
        self._count("J")
        return x ** 2

    @derived
    def K(self) -> sp.Expr:
        self._count("K")
        return sp.exp(x)

    @derived
    def F(self) -> sp.Expr:
        self._count("F")
        return sp.diff(self.J(), x) * (1 - x ** 2)

    def helper(self) -> sp.Expr:
        return self.J() + 1

    @derived
    def G(self) -> sp.Expr:
        self._count("G")
        return self.K() + self.helper()


def test_a_copy_keeps_only_the_results_that_cannot_see_the_replacement():
    Graph.calls = {}
    t = Graph()
    t.F(), t.G()
    assert Graph.calls == {"J": 1, "K": 1, "F": 1, "G": 1}
    wrong = t.replace(J=lambda self: self.original("J")() * 3)
    assert wrong.K() == sp.exp(x) and Graph.calls["K"] == 1              # K never called J: kept
    assert wrong.J() == 3 * x ** 2 and Graph.calls["J"] == 1             # the original J, kept under its own key
    assert wrong.F() == 6 * x * (1 - x ** 2) and Graph.calls["F"] == 2   # F called J: derived again
    assert wrong.G() == sp.exp(x) + 3 * x ** 2 + 1 and Graph.calls["G"] == 2   # through a plain helper, too
    other = t.replace(K=lambda self: 2 * self.original("K")())
    assert other.F() == 2 * x * (1 - x ** 2) and Graph.calls["F"] == 2   # F never called K: kept
    assert other.G() == 2 * sp.exp(x) + x ** 2 + 1 and Graph.calls["G"] == 3


def test_results_read_from_the_persistent_memo_keep_their_dependencies():
    """A result read back from the persistent memo carries the closed forms it called, as one derived in this process
    does: a copy keeps it when it cannot see the replacement, and derives it again when it can."""
    from attnverify.theory import closed_forms

    class Stored(Graph):
        persist_key = "graph"

    store = DictStore()
    closed_forms.persist(store)
    try:
        Stored().F(), Stored().K()
        Graph.calls = {}
        t = Stored()
        t.F(), t.G()                            # F, J and K read back from the store, G computed from them
        assert Graph.calls == {"G": 1}
    finally:
        closed_forms.persist(None)
    wrong = t.replace(J=lambda self: 5 * x)
    assert wrong.K() == sp.exp(x) and "K" not in Graph.calls               # K never called J: kept
    assert wrong.F() == 5 * (1 - x ** 2) and Graph.calls.get("F") == 1      # F called J (recorded in the store)
    assert wrong.G() == sp.exp(x) + 5 * x + 1 and Graph.calls["G"] == 2


def test_results_of_unknown_dependencies_are_derived_again():
    """A result computed while a closed form of another object was being derived has unknown dependencies, and a
    replaced method that is not memoised itself keeps nothing."""
    class Other(Graph):
        pass

    def through_other(self):
        self._count("outer")
        return other.K() + t.J()

    Graph.calls = {}
    t, other = Graph(), Other()
    outer = type("Outer", (Graph,), {"K": derived(through_other)})()
    outer.K()
    wrong = outer.replace(G=lambda self: 0)
    assert Graph.calls == {"outer": 1, "K": 1, "J": 1}
    assert wrong.K() == sp.exp(x) + x ** 2 and Graph.calls["outer"] == 2    # unknown: derived again
    Graph.calls = {}
    plain = Graph()
    plain.K()
    assert plain.replace(helper=lambda self: 0).K() == sp.exp(x) and Graph.calls["K"] == 2


def test_a_copy_with_a_kept_memo_equals_one_derived_from_scratch():
    """Property: for random dependency graphs of closed forms, what was derived before, and what is replaced (also in
    a copy of a copy), every closed form of the copy equals the same copy of a fresh object."""
    from hypothesis import given, settings, strategies as st

    @st.composite
    def cases(draw):
        n = draw(st.integers(2, 6))
        calls = [draw(st.lists(st.integers(0, i - 1), max_size=3)) if i else [] for i in range(n)]
        warm = draw(st.lists(st.integers(0, n - 1), max_size=n))
        first = draw(st.sets(st.integers(0, n - 1), min_size=1, max_size=2))
        second = draw(st.sets(st.integers(0, n - 1), max_size=2)) - first    # each name is replaced once
        return n, calls, warm, first, second

    def build(n, calls):
        def form(i):
            def m(self):
                return sum((getattr(self, f"m{j}")() * (j + 2) for j in calls[i]), sp.Integer(i + 1)) * x
            m.__name__ = f"m{i}"
            return derived(m)
        return type("Random", (ClosedForms,), {f"m{i}": form(i) for i in range(n)})

    def wrong(names, factor):
        return {f"m{i}": (lambda k: lambda self: self.original(k)() * factor + 1)(f"m{i}") for i in names}

    @settings(max_examples=300, deadline=None)
    @given(cases())
    def check(case):
        n, calls, warm, first, second = case
        cls = build(n, calls)
        warmed = cls()
        for i in warm:
            getattr(warmed, f"m{i}")()
        copy, fresh = warmed.replace(**wrong(first, 3)), cls().replace(**wrong(first, 3))
        for i in warm:
            getattr(copy, f"m{i}")()
        copy2, fresh2 = copy.replace(**wrong(second, 5)), fresh.replace(**wrong(second, 5))
        for i in range(n):
            assert getattr(copy, f"m{i}")() == getattr(fresh, f"m{i}")()
            assert getattr(copy2, f"m{i}")() == getattr(fresh2, f"m{i}")()

    check()


# ---------------------------------------------------------------------------------------- recorded closed forms
class Numeric(ClosedForms):
    """``scale`` is a numeric closed form (arguments that are not memoisable in general): recorded, not memoised;
    ``plain`` is an undecorated method."""
    counts: dict = {}

    def _count(self, name: str) -> None:
        Numeric.counts[name] = Numeric.counts.get(name, 0) + 1

    @recorded
    def scale(self, v: float) -> float:
        self._count("scale")
        return 2.0 * v

    def plain(self) -> float:
        return 5.0

    @derived
    def uses_scale(self) -> float:
        self._count("uses_scale")
        return self.scale(3.0)

    @derived
    def uses_plain(self) -> float:
        self._count("uses_plain")
        return self.plain()

    @derived
    def alone(self) -> float:
        self._count("alone")
        return 7.0


def test_a_recorded_closed_form_is_never_memoised_but_its_callers_see_a_replacement():
    Numeric.counts = {}
    t = Numeric()
    assert t.scale(1.0) == t.scale(1.0) == 2.0 and Numeric.counts["scale"] == 2      # computed at every call
    assert (t.uses_scale(), t.uses_plain(), t.alone()) == (6.0, 5.0, 7.0)
    Numeric.counts = {}
    wrong = t.replace(scale=lambda self, v: 3.0 * v)
    assert wrong.uses_scale() == 9.0 and Numeric.counts == {"uses_scale": 1}       # derived again: it called scale
    assert (wrong.uses_plain(), wrong.alone()) == (5.0, 7.0)
    assert Numeric.counts == {"uses_scale": 1}                                     # kept: they never called it
    assert t.uses_scale() == 6.0                                                   # the original is untouched


def test_replacing_a_plain_method_keeps_nothing():
    """A plain method's calls are not recorded, so any memoised result may have called it unseen."""
    Numeric.counts = {}
    t = Numeric()
    t.uses_plain(), t.alone()
    wrong = t.replace(plain=lambda self: -1.0)
    assert (wrong.uses_plain(), wrong.alone()) == (-1.0, 7.0)
    assert Numeric.counts == {"uses_plain": 2, "alone": 2}
