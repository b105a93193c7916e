"""A paper as a plugin: everything attnverify knows about one paper, in one adapter object.

The application (command line, derivations, LaTeX, reports, self-tests, benchmarks) loops over the registered
papers and names none. A paper is a :class:`Paper` registered under the entry-point group ``attnverify.papers``
of its distribution's ``pyproject.toml``::

    [project.entry-points."attnverify.papers"]
    signal = "attnverify.checks.signal.plugin:PAPER"

The built-in papers register the same way as a separately installed package does (``docs/adding-a-paper.md``
walks through one). Everything in this module is data: the adapter points at the paper's own modules (checks,
claims, derivations, perturbation families, mutants), which it imports only when asked.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from attnverify.checks.params import Param

__all__ = ["Family", "Mutant", "Paper", "PowerRow", "Quantity", "Section", "cached_formula", "lazy"]


# ----------------------------------------------------------------------------------------------
# self-test material: mutants and perturbation families
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Mutant:
    """A named wrong version of ``module.attribute``, and the checks that should catch it.

    ``make(original)`` returns the replacement, built from the original object. ``equivalent`` is empty, or the
    proof that the mutated statement is still true for every admissible input (an equivalent mutant: no correct
    check can reject it, so it is run and reported but not counted against the checks). ``known_gap`` is empty, or
    the measured reason why no check catches this non-equivalent mutant in the quick profile (reported, and the
    self-test's all-caught figure says so).
    """

    name: str
    module: str
    attribute: str
    make: Callable[[Any], Any]
    checks: tuple[str, ...]
    description: str
    equivalent: str = ""
    known_gap: str = ""


@dataclass(frozen=True)
class Family:
    """A way to perturb the analytic side by a size delta: ``build(delta)`` (or ``build(delta, params)`` for the
    ``regime`` kind, which needs the check's parameters) gives the :class:`Mutant` replacements for a signed delta.

    ``kind``: ``"scale"`` / ``"mismatch"`` walk the ladder of deltas with both signs; ``"fixed"`` (one wrong closed
    form) and ``"regime"`` (the theory on the other side of a threshold) ignore delta."""

    name: str
    kind: str
    description: str
    build: Callable[..., list[Mutant]]

    def mutants(self, delta: float, params: dict | None = None) -> list[Mutant]:
        if self.kind == "regime":
            return self.build(delta, params)
        return self.build(delta)

    @property
    def laddered(self) -> bool:
        return self.kind in ("scale", "mismatch")


@dataclass(frozen=True)
class Perturbation:
    """A changed stated form for the claim self-test: ``stated`` (a StatedClaim), its ``name`` and size ``delta``
    (None for a one-off change), and ``wrong``: whether the changed statement is false (a tighter bound, another
    figure) and so should be refuted, or still true (a looser bound: it must not be refuted)."""

    name: str
    delta: float | None
    stated: Any
    wrong: bool = True


@dataclass(frozen=True)
class PowerRow:
    """A (check, family) row of the power table: ``target`` the required MDP (None: measured only), or
    ``not_applicable`` with the reason the family cannot move this check's verdict by design. With ``claim``, a
    run rejects when that claim's verdict (from this check's evidence) is ``refuted``, not when the check fails."""

    check: str
    family: str
    target: float | None = None
    not_applicable: str = ""
    smoke: bool = False
    claim: str = ""


# ----------------------------------------------------------------------------------------------
# what a user may state: quantities
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Quantity:
    """A named quantity of a paper that a claim may state something about (``attnverify list --quantities``).

    ``symbols``: name -> SymPy Symbol, the free symbols a stated formula may use. ``kinds``: the claim kinds it
    supports. ``derive(**options)`` is the derived side: for a ``formula`` quantity the SymPy expression in the
    symbols; for a number (``value``), an exact or certified number; for a ``threshold``, its certified enclosure
    (lo, hi); for a ``rate``, the derived exponent. ``options`` are the model options it depends on (validated as
    a check's parameters are; a stated claim's ``at`` table gives them, and values of symbols to fix).
    ``aliases`` name sub-expressions a stated formula may use (``w`` for an attention mass): name ->
    ``f(**options)`` giving the SymPy expression.

    The measured side: ``measure(values, rng)`` returns an :class:`attnverify.checks.judges.Measured` at one
    point (``values``: every symbol and option), computed without the closed form (Monte Carlo, quadrature, a
    simulation). ``measured_as(**options)``, when the measurement estimates something slightly different from
    ``derive`` (a finite-size version of a limit), is the derived expression of what it estimates; the formula
    judge then allows the gap between the two. ``sample(rng, n, fixed)`` draws ``n`` admissible points (dicts of
    symbol values, ``fixed`` ones kept) where a counterexample to a stated formula is searched."""

    name: str
    description: str
    symbols: Mapping[str, Any]
    derive: Callable[..., Any]
    kinds: tuple[str, ...] = ("formula",)
    options: tuple[Param, ...] = ()
    aliases: Mapping[str, Callable[..., Any]] = field(default_factory=dict)
    sample: Callable[[Any, int, dict], list[dict]] | None = None
    measure: Callable[[dict, Any], Any] | None = None
    measured_as: Callable[..., Any] | None = None


# ----------------------------------------------------------------------------------------------
# derivations as documents
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Section:
    """One section of the derivations document: the paper's derivation at the model ``options``, under ``title``;
    ``key`` prefixes its equation labels (``eq:<key>:<label>``)."""

    key: str
    title: str
    options: Mapping[str, Any] = field(default_factory=dict)


def cached_formula(fn: Callable) -> Callable:
    """Mark a paper's closed-form accessor as worth keeping in the application's persistent derivation cache
    (deriving it takes seconds; the application wraps marked functions of a paper's ``namespace`` module)."""
    fn.__attnverify_cached__ = True
    return fn


# ----------------------------------------------------------------------------------------------
# the adapter
# ----------------------------------------------------------------------------------------------
def _none(*_args: Any, **_kwargs: Any) -> tuple:
    return ()


def lazy(module: str, attribute: str) -> Callable[..., Any]:
    """``module.attribute(...)``, the module imported on the first call (an adapter stays cheap to load)."""
    def call(*args: Any, **kwargs: Any) -> Any:
        import importlib

        return getattr(importlib.import_module(module), attribute)(*args, **kwargs)
    call.__name__ = call.__qualname__ = f"{module}.{attribute}"
    return call


@dataclass(frozen=True)
class Paper:
    """Everything the application needs of one paper.

    Identity: ``key`` prefixes its claim ids (``A`` -> ``A.*``), ``model`` its check ids and names its model
    (``signal`` -> ``signal.*``, ``attnverify derive signal``); ``title``, ``citation``.

    Checks and claims: ``modules`` are imported to register them (:func:`attnverify.checks.registry.check`,
    :func:`attnverify.checks.claims.claim`); ``order`` is the catalogue order of its check ids (others follow,
    sorted); ``stated`` is the stated-claims TOML file as ``(package, file name)``.

    The model: ``params`` are its options (``derive --set``, quantity options), each validated as a check's
    parameter; ``validate(values)`` checks the constraints between the options given (a subset) and raises
    ValueError naming the problem. ``derive(values)`` returns ``(title, steps)``: the derivation at those
    options. ``sections()`` lists the derivation sections of the LaTeX document; ``formulas(check_id, params)``
    gives ``(options, labels)``: the derive options and the labels of the steps whose closed forms a check
    compares (shown in reports). ``quantities()`` lists what a claim may
    state; ``namespace`` is the module of closed-form accessors for notebooks (``attnverify.formulas``).

    Self-tests and benchmarks: ``claim_scenarios()`` (the claim self-test: claim id -> {"null": check overrides
    under which the evidence has nothing to decide, "counterexample": model parameters at which the statement is
    false}), ``families()`` and ``power_rows()`` (the power self-test), ``mutants()`` (the
    mutant self-test), ``benchmarks(scale, progress, budget_s)`` -> dict (``attnverify bench``: see attnverify.bench).
    ``theory`` lists the theory modules whose code the derivations depend on (cache keys).
    """

    key: str
    model: str
    title: str
    citation: str
    modules: tuple[str, ...]
    order: tuple[str, ...] = ()
    stated: tuple[str, str] | None = None
    params: tuple[Param, ...] = ()
    validate: Callable[[dict], None] | None = None
    derive: Callable[[dict], tuple[str, Sequence[Any]]] | None = None
    sections: Callable[[], Sequence[Section]] = _none
    formulas: Callable[[str, dict], tuple[dict, Sequence[str]]] = lambda _id, _params: ({}, ())
    quantities: Callable[[], Sequence[Quantity]] = _none
    namespace: str | None = None
    families: Callable[[], Sequence[Family]] = _none
    power_rows: Callable[[], Sequence[PowerRow]] = _none
    mutants: Callable[[], Sequence[Mutant]] = _none
    claim_scenarios: Callable[[], Mapping[str, Mapping[str, Mapping[str, Any]]]] = lambda: {}
    benchmarks: Callable[..., dict] | None = None
    theory: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.key or not self.key.replace("_", "").isalnum():
            raise TypeError(f"paper key must be a non-empty identifier, got {self.key!r}")
        if not self.model or not self.model.replace("_", "").isalnum() or not self.model[0].isalpha():
            raise TypeError(f"paper model must be an identifier, got {self.model!r}")

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    def options(self, given: Mapping[str, Any]) -> dict:
        """The options ``given`` (command-line text or values) parsed and validated against :attr:`params` and
        :attr:`validate`; unknown names and invalid values raise :class:`~attnverify.checks.params.InputError`
        (one line, naming the option)."""
        from attnverify.checks.params import InputError, did_you_mean, validated

        names = [p.name for p in self.params]
        unknown = [n for n in given if n not in names]
        if unknown:
            raise InputError(f"{self.model}: unknown option {unknown[0]!r}{did_you_mean(unknown[0], names)} "
                             f"(takes {', '.join(names) or 'none'})")
        return validated(self.validate, {name: self.param(name).read(raw) for name, raw in given.items()})
