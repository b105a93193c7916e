"""The registered papers (entry-point group ``attnverify.papers``), their checks and the catalogue order.

Every paper, the built-in ones included, is found through its entry point: a separately installed package adds
a paper with ``pip install`` and no edit here. Papers added at run time (:func:`add_paper`: a model file is a paper,
attnverify.checks.engine.add_model) join them. Papers are listed in the order of their keys; a paper's checks in
the order its adapter gives (the others after them, sorted by id).
"""
from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any

from attnverify.checks.context import Context
from attnverify.checks.evidence import Evidence
from attnverify.checks.params import InputError, Param, did_you_mean, shown, validated
from attnverify.checks.paper import Paper
from attnverify.checks.values import scale_problem


# ----------------------------------------------------------------------------------------------
# checks
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Check:
    """A registered check: what it compares (``compares``, one sentence) and where the paper states it
    (``source``); its parameters, their values in the paper profile (``paper_profile``) and their joint constraints
    (``validate``); the labels of the derivation steps whose closed forms it compares (``formulas``); and the
    arguments it receives: ``theory`` (its closed forms) and ``numerics`` (its simulators), given to ``run`` as
    ``ctx.theory`` and ``ctx.numerics`` so that a self-test can hand it a wrong one (a mutant is an argument)."""

    id: str
    compares: str
    source: str
    params: tuple[Param, ...]
    run: Callable[[dict, Context], Evidence]
    paper_profile: dict
    validate: Callable[[dict], None] | None
    formulas: tuple[str, ...] = ()
    theory: Any = None
    numerics: Any = None

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    def resolve(self, profile: str, overrides: dict[str, Any]) -> dict:
        """The validated parameters for a profile with overrides (values or command-line strings)."""
        values = {}
        for prm in self.params:
            if prm.name in overrides:
                values[prm.name] = prm.read(overrides[prm.name])
            elif profile == "paper" and prm.name in self.paper_profile:
                values[prm.name] = prm.validate(self.paper_profile[prm.name])
            else:
                values[prm.name] = prm.validate(prm.default)
        for prm in self.params:           # the scale rule (attnverify.checks.values)
            settings = list(prm.scale_reference) if prm.scale_reference is not None else \
                [prm.default] + ([self.paper_profile[prm.name]] if prm.name in self.paper_profile else [])
            if problem := scale_problem(prm, values[prm.name], settings):
                raise InputError(problem)
        validated(self.validate, values)
        return values


REGISTRY: dict[str, Check] = {}

#: Keyword arguments of ``@check`` before 0.2, and what replaced them.
_RENAMED = {"claim": "compares (what the check compares: a claim is a ledger entry)",
            "paper": "paper_profile (the parameters' values in the paper profile)"}


def check(*, id: str, compares: str = "", source: str, params: Sequence[Param] = (),
          paper_profile: dict | None = None, validate: Callable[[dict], None] | None = None,
          formulas: Sequence[str] = (), theory: Any = None, numerics: Any = None, **renamed: Any) -> Callable:
    """Register ``run(p, ctx) -> Evidence`` as the check ``id`` (see :class:`Check` for the fields). ``theory``
    and ``numerics`` are the objects ``run`` reads as ``ctx.theory`` and ``ctx.numerics`` (a module, or an
    object whose methods are the closed forms or simulators)."""
    if renamed:
        name = next(iter(renamed))
        hint = f": it is now {_RENAMED[name]}" if name in _RENAMED else ""
        raise TypeError(f"check {id}: @check() takes no argument {name!r}{hint} (docs/adding-a-paper.md)")
    if not compares:
        raise TypeError(f"check {id}: @check() needs compares=, one sentence saying what it compares")

    def register(run: Callable[[dict, Context], Evidence]) -> Callable[[dict, Context], Evidence]:
        kept: dict[str, Param] = {}
        for prm in params:            # a check overriding a shared model option keeps only its own (last) definition
            kept[prm.name] = prm
        plist = tuple(kept.values())
        unknown = set(paper_profile or {}) - set(kept)
        if unknown:
            raise TypeError(f"check {id}: paper profile sets unknown parameters {sorted(unknown)}")
        REGISTRY[id] = Check(id, compares, source, plist, run, dict(paper_profile or {}), validate, tuple(formulas),
                             theory, numerics)
        return run

    return register


# ----------------------------------------------------------------------------------------------
# papers
# ----------------------------------------------------------------------------------------------
GROUP = "attnverify.papers"


@functools.lru_cache(maxsize=1)
def _discovered() -> tuple[Paper, ...]:
    found: dict[str, Paper] = {}
    models: dict[str, str] = {}
    for ep in entry_points(group=GROUP):
        try:
            paper = ep.load()
        except Exception as exc:  # noqa: BLE001 -- a broken plugin is named, not a traceback
            raise RuntimeError(f"the paper plugin {ep.name!r} ({ep.value}) cannot be loaded: "
                               f"{type(exc).__name__}: {exc}") from None
        if not isinstance(paper, Paper):
            raise RuntimeError(f"the paper plugin {ep.name!r} ({ep.value}) is a {type(paper).__name__}, not an "
                               "attnverify.checks.plugin.Paper (the plugin contract: docs/adding-a-paper.md)")
        if paper.key in found and found[paper.key] is not paper:
            raise RuntimeError(f"two paper plugins use the key {paper.key!r}: {found[paper.key].model}, {paper.model}")
        if paper.model in models and models[paper.model] != paper.key:
            raise RuntimeError(f"two paper plugins use the model name {paper.model!r}")
        found[paper.key], models[paper.model] = paper, paper.key
    return tuple(sorted(found.values(), key=lambda p: p.key))


def source_dirs() -> list[str]:
    """The folders of the registered papers' adapter modules (a cache of derived results is keyed by their code)."""
    import importlib.util
    import os

    out = []
    for ep in entry_points(group=GROUP):
        spec = importlib.util.find_spec(ep.value.split(":")[0])
        if spec is not None and spec.origin:
            out.append(os.path.dirname(spec.origin))
    return sorted(set(out))


#: papers added at run time (model files), by model name
_ADDED: dict[str, Paper] = {}


def add_paper(paper: Paper) -> Paper:
    """Register ``paper`` beside the entry points' (a model file's paper: attnverify.checks.engine.add_model); its
    checks are registered by the caller with :func:`check`. A paper with the same model name added before is
    replaced (its checks are removed); a name or key of an installed paper is refused (InputError, one line)."""
    for p in _discovered():
        if paper.model in (p.model, p.key) or paper.key in (p.model, p.key):
            raise InputError(f"{paper.model}: the name is taken by the installed paper {p.model} (Paper {p.key}): "
                             "rename the model's id")
    if paper.model in _ADDED:
        remove_paper(paper.model)
    _ADDED[paper.model] = paper
    return paper


def added(model: str) -> tuple[Paper | None, dict]:
    """The paper added under the name ``model`` (None if none) and its checks: what :func:`restore_paper` puts back."""
    return _ADDED.get(model), {cid: c for cid, c in REGISTRY.items() if cid.startswith(f"{model}.")}


def restore_paper(model: str, saved: tuple[Paper | None, dict]) -> None:
    """Unregister whatever is registered under ``model`` and register ``saved`` (from :func:`added`) again."""
    remove_paper(model)
    paper, checks = saved
    if paper is not None:
        _ADDED[model] = paper
        REGISTRY.update(checks)


def remove_paper(model: str) -> None:
    """Unregister a paper added with :func:`add_paper`, and its checks."""
    _ADDED.pop(model, None)
    for cid in [c for c in REGISTRY if c.startswith(f"{model}.")]:
        del REGISTRY[cid]


def papers() -> tuple[Paper, ...]:
    """Every registered paper, by key."""
    return tuple(sorted((*_discovered(), *_ADDED.values()), key=lambda p: p.key))


def paper(name: str) -> Paper:
    """The paper with model name or key ``name`` (``InputError`` naming the known ones otherwise)."""
    if not isinstance(name, str):
        raise InputError(f"model: expected a model name (a string), got {shown(name)}")
    for p in papers():
        if name in (p.model, p.key):
            return p
    known = [p.model for p in papers()]
    raise InputError(f"unknown model {name!r}{did_you_mean(name, known)} (choose from {', '.join(known)})")


def paper_of(identifier: str) -> Paper | None:
    """The paper a check id (``model.name``) or claim id (``key.name``) belongs to, or None."""
    prefix = identifier.split(".", 1)[0]
    return next((p for p in papers() if prefix in (p.model, p.key)), None)


_loaded: set[str] = set()


def load() -> None:
    """Import every registered paper's check and claim modules (each registers its checks and claims)."""
    for p in papers():
        for module in p.modules:
            name = p.module(module)
            if name not in _loaded:
                importlib.import_module(name)
                _loaded.add(name)


def _rank(c: Check, papers_: tuple[Paper, ...]) -> tuple:
    """The catalogue position of a check: its paper (by key), the position of its module in the paper's
    ``modules``, and its line in that module; a check of no registered paper's module comes last, by id."""
    module, line = c.run.__module__, c.run.__code__.co_firstlineno if hasattr(c.run, "__code__") else 0
    prefix = c.id.split(".", 1)[0]
    # the paper named by the id's prefix first: model-file papers share one package of check templates
    for i, p in sorted(enumerate(papers_), key=lambda ip: ip[1].model != prefix):
        names = [p.module(m) for m in p.modules]
        if module in names:
            return (i, names.index(module), line, c.id)
    return (len(papers_), 0, 0, c.id)


def all_checks() -> list[Check]:
    """Every registered check: papers by key, each paper's checks in the order of its modules and, within a
    module, in the order they are defined (whatever order the modules were imported in)."""
    load()
    found = papers()
    return sorted(REGISTRY.values(), key=lambda c: _rank(c, found))
