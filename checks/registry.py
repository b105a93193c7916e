"""The registered papers (entry-point group ``attnverify.papers``), their checks and the catalogue order.

Every paper, the built-in ones included, is found through its entry point: a separately installed package adds
a paper with ``pip install`` and no edit here. Papers are listed in the order of their keys; a paper's checks in
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
from attnverify.checks.params import InputError, Param, did_you_mean, validated
from attnverify.checks.plugin import Paper
from attnverify.checks.values import scale_problem


# ----------------------------------------------------------------------------------------------
# checks
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Check:
    id: str
    claim: str
    source: str
    params: tuple[Param, ...]
    run: Callable[[dict, Context], Evidence]
    paper: dict
    validate: Callable[[dict], None] | None

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    def resolve(self, profile: str, overrides: dict[str, Any]) -> dict:
        """The validated parameters for a profile with overrides (values or command-line strings)."""
        values = {}
        for prm in self.params:
            if prm.name in overrides:
                values[prm.name] = prm.read(overrides[prm.name])
            elif profile == "paper" and prm.name in self.paper:
                values[prm.name] = prm.validate(self.paper[prm.name])
            else:
                values[prm.name] = prm.validate(prm.default)
        for prm in self.params:           # the scale rule (attnverify.checks.values)
            settings = [prm.default] + ([self.paper[prm.name]] if prm.name in self.paper else [])
            if problem := scale_problem(prm, values[prm.name], settings):
                raise InputError(problem)
        validated(self.validate, values)
        return values


REGISTRY: dict[str, Check] = {}


def check(*, id: str, claim: str, source: str, params: Sequence[Param] = (), paper: dict | None = None,
          validate: Callable[[dict], None] | None = None) -> Callable:
    """Register ``run(p, ctx) -> Evidence`` as the check ``id``."""

    def register(run: Callable[[dict, Context], Evidence]) -> Callable[[dict, Context], Evidence]:
        names = [p.name for p in params]
        dupes = {n for n in names if names.count(n) > 1}
        if dupes:  # a check overriding a shared model option keeps only its own (last) definition
            kept: dict[str, Param] = {}
            for prm in params:
                kept[prm.name] = prm
            plist = tuple(kept.values())
        else:
            plist = tuple(params)
        unknown = set(paper or {}) - {p.name for p in plist}
        if unknown:
            raise TypeError(f"check {id}: paper profile sets unknown parameters {sorted(unknown)}")
        REGISTRY[id] = Check(id, claim, source, plist, run, dict(paper or {}), validate)
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
            raise RuntimeError(f"the paper plugin {ep.name!r} ({ep.value}) is a {type(paper).__name__}, not a Paper")
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


def papers() -> tuple[Paper, ...]:
    """Every registered paper, by key."""
    return _discovered()


def paper(name: str) -> Paper:
    """The paper with model name or key ``name`` (``InputError`` naming the known ones otherwise)."""
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
            if module not in _loaded:
                importlib.import_module(module)
                _loaded.add(module)


def all_checks() -> list[Check]:
    """Every registered check: papers by key, each paper's checks in its catalogue order."""
    load()
    rank: dict[str, tuple] = {}
    for i, p in enumerate(papers()):
        for j, cid in enumerate(p.order):
            rank[cid] = (i, j)
    models = {p.model: i for i, p in enumerate(papers())}
    return sorted(REGISTRY.values(), key=lambda c: rank.get(c.id, (models.get(c.id.split(".")[0], len(models)),
                                                                   10**6, c.id)))
