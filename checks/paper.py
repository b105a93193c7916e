"""The plugin contract: everything the application needs of one paper, in one :class:`Paper`, checked when the
plugin is registered (:func:`attnverify.checks.registry.papers`).

A paper is three same-named packages (``theory/<model>``, ``numerics/<model>``, ``checks/<model>``) and a test
folder; its ``checks`` package holds the adapter (``plugin.py`` defines ``PAPER``), its stated claims
(``stated.toml``) and its reference (``reference.bib``), read from the package by those names. The adapter is
registered under the entry-point group ``attnverify.papers`` of its distribution::

    [project.entry-points."attnverify.papers"]
    signal = "attnverify.checks.signal.plugin:PAPER"

The built-in papers register the same way as a separately installed package does (``docs/adding-a-paper.md``).
A check is registered in one place, its ``@check`` decorator (:mod:`attnverify.checks.registry`); a claim in its
``@claim`` decorator (:mod:`attnverify.checks.claims`). The catalogue lists a paper's checks in the order of
``modules`` and, within a module, in the order they are defined.

Cached derivations are keyed by the source code of ``theory/``, ``checks/`` and every registered paper's package
(attnverify.derive.code_version): a change anywhere in them recomputes them.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from attnverify.checks.params import Param

__all__ = ["Paper", "Quantity", "Section", "REMOVED", "cached_formula", "lazy"]

#: Fields of the contract before 0.2 and what replaces them: an out-of-tree plugin written against the old contract
#: gets this line instead of a bare TypeError.
REMOVED = {
    "order": "a paper's checks are listed in the order of `modules` and, within a module, as they are defined",
    "stated": "the stated claims are read from `stated.toml` in the paper's `package`",
    "formulas": "a check names the derivation steps it compares in its decorator, @check(formulas=(label, ...)); "
                "`formula_options(params)` gives the derivation options of a check's parameters",
    "families": "self-test material is one module, `selftest`, defining families(), power_rows(), mutants() and "
                "claim_scenarios()",
    "power_rows": "see `selftest`", "mutants": "see `selftest`", "claim_scenarios": "see `selftest`",
    "benchmarks": "`bench` names the module whose run(scale, progress, budget_s) gives the paper's benchmarks",
    "theory": "nothing read it: cached derivations are keyed by the source of theory/, checks/ and every paper's "
              "package",
}


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
    ``derive`` (a finite-size version of a limit), is the derived expression of what it estimates; the judges
    then compare the measurement with it, and the stated form shifted by the same finite-size terms.
    ``sample(rng, n, fixed)`` draws ``n`` admissible points (dicts of symbol values, ``fixed`` ones kept) over the
    whole domain (log-uniform over wide ranges, the boundaries included: :mod:`attnverify.checks.domain`), where a
    counterexample to a stated formula is searched.

    The domain: ``domain`` gives the range of a symbol (a Param named by it) where the paper's option of that name
    does not; ``admissible(values)`` raises ValueError when symbol values given together are not admissible (one
    line). ``measurable(point)``: whether the measurement can run at a point at a practical cost (default: every
    point); the judges confirm only at such points. ``repeats``: how many independent calls of ``measure`` at one
    point the judges may pool to grow its sample size (1: a deterministic measurement, never pooled)."""

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
    domain: Mapping[str, Param] = field(default_factory=dict)
    admissible: Callable[[dict], None] | None = None
    measurable: Callable[[dict], bool] | None = None
    repeats: int = 1


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


def lazy(module: str, attribute: str) -> Callable[..., Any]:
    """``module.attribute(...)``, the module imported on the first call (an adapter stays cheap to load)."""
    def call(*args: Any, **kwargs: Any) -> Any:
        import importlib

        return getattr(importlib.import_module(module), attribute)(*args, **kwargs)
    call.__name__ = call.__qualname__ = f"{module}.{attribute}"
    return call


def _none(*_args: Any, **_kwargs: Any) -> tuple:
    return ()


def _no_options(_params: dict) -> dict:
    return {}


class _Contract(type):
    """Refuses the fields the contract no longer has, naming what replaced each (one line)."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        removed = [k for k in kwargs if k in REMOVED]
        if removed:
            raise TypeError(f"Paper({removed[0]}=...) is not part of the plugin contract since attnverify 0.2: "
                            f"{REMOVED[removed[0]]} (docs/adding-a-paper.md)")
        return super().__call__(*args, **kwargs)


@dataclass(frozen=True)
class Paper(metaclass=_Contract):
    """Everything the application needs of one paper.

    Identity: ``key`` prefixes its claim ids (``A`` -> ``A.*``), ``model`` its check ids and names its model and its
    packages (``signal`` -> ``signal.*``, ``attnverify derive signal``); ``title``, ``citation``.

    ``package``: the paper's checks package (``attnverify.checks.signal``); ``stated.toml`` (its stated claims) and
    ``reference.bib`` (its BibTeX entry) are read from it, and ``modules`` (its check and claim modules, names
    relative to it) are imported from it to register the checks and claims, in that order.

    The model: ``params`` are its options (``derive --set``, quantity options), each validated as a check's
    parameter; ``validate(values)`` checks the constraints between the options given (a subset) and raises
    ValueError naming the problem. ``derive(values)`` returns ``(title, steps)``: the derivation at those options;
    ``sections()`` lists the derivation sections of the LaTeX document; ``formula_options(params)`` gives the derive
    options at a check's parameters (the steps a check compares are named in its decorator). ``quantities()``
    lists what a claim may state; ``namespace`` is the module of closed-form accessors for notebooks
    (``attnverify.formulas``).

    ``selftest``: the module (relative to ``package``) of the self-test material, defining any of ``families()`` and
    ``power_rows()`` (the power self-test), ``mutants()`` (the mutant self-test) and ``claim_scenarios()`` (the
    claim self-test). ``bench``: the module whose ``run(scale, progress, budget_s)`` gives the paper's benchmarks
    (``attnverify bench``).
    """

    key: str
    model: str
    title: str
    citation: str
    package: str
    modules: tuple[str, ...]
    params: tuple[Param, ...] = ()
    validate: Callable[[dict], None] | None = None
    derive: Callable[[dict], tuple[str, Sequence[Any]]] | None = None
    sections: Callable[[], Sequence[Section]] = _none
    formula_options: Callable[[dict], dict] = _no_options
    quantities: Callable[[], Sequence[Quantity]] = _none
    namespace: str | None = None
    selftest: str | None = None
    bench: str | None = None

    def __post_init__(self) -> None:
        if not self.key or not self.key.replace("_", "").isalnum():
            raise TypeError(f"paper key must be a non-empty identifier, got {self.key!r}")
        if not self.model or not self.model.replace("_", "").isalnum() or not self.model[0].isalpha():
            raise TypeError(f"paper model must be an identifier, got {self.model!r}")
        if not isinstance(self.modules, tuple) or not all(isinstance(m, str) and m for m in self.modules):
            raise TypeError(f"paper {self.model}: modules must be a tuple of module names (relative to its package)")

    def module(self, name: str) -> str:
        """The full name of the paper's module ``name`` (given relative to its package)."""
        return f"{self.package}.{name}"

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
        read = {name: self.param(name).read(raw) for name, raw in given.items()}
        # the constraints between options are checked with the defaults filling in what is not given: the values a
        # run would use, so derive, run and the API refuse the same options
        defaults = {p.name: p.validate(p.default) for p in self.params if p.name not in read}
        validated(self.validate, {**defaults, **read})
        return read

    # -- the self-test material and the benchmarks, from their modules ------------------------------------------
    def _hook(self, module: str | None, name: str, default: Any) -> Any:
        if module is None:
            return default
        import importlib

        hook = getattr(importlib.import_module(self.module(module)), name, None)
        return default if hook is None else hook()

    def families(self) -> Sequence[Any]:
        return self._hook(self.selftest, "families", ())

    def power_rows(self) -> Sequence[Any]:
        return self._hook(self.selftest, "power_rows", ())

    def mutants(self) -> Sequence[Any]:
        return self._hook(self.selftest, "mutants", ())

    def claim_scenarios(self) -> Mapping[str, Mapping[str, Mapping[str, Any]]]:
        return self._hook(self.selftest, "claim_scenarios", {})

    def benchmarks(self, *args: Any) -> dict | None:
        if self.bench is None:
            return None
        import importlib

        return importlib.import_module(self.module(self.bench)).run(*args)
