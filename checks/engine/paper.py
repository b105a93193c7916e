r"""A model file is a paper: :func:`add_model` reads it, builds its :class:`ModelPaper` (key and model name = the
file's id, so checks, claims and quantities are ``<id>.*``), registers it beside the installed papers
(attnverify.checks.registry.add_paper) and registers its generated checks, one per template module of this package
that applies to the model (a trained query: the objective and the finite-size terms, the field, the equilibria and
the ODE against Monte Carlo; a token query: the attention map and, for one Gaussian component, its push-forward's
moments), each with the defaults the file's ``[checks.<name>]`` tables set.

Adding the same file content twice returns the paper registered the first time (nothing is derived again);
another content under the same id replaces it.  A bad file is one :class:`~attnverify.checks.params.InputError`
line (the engine's ModelError), before any work.
"""
from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

from attnverify.checks.engine._numerics import ModelNumerics
from attnverify.checks.engine._settings import unknown_checks
from attnverify.checks.engine._theory import ModelTheory
from attnverify.checks.paper import Paper, Section
from attnverify.checks.params import InputError
from attnverify.checks.values import scale_problem

PACKAGE = "attnverify.checks.engine"
#: the check templates, in catalogue order (each module: applies(model), register_for(paper))
TEMPLATES = ("objective", "finite_size", "field", "equilibria", "ode_tracking", "token_map", "pushforward")


@dataclass(frozen=True)
class ModelPaper(Paper):
    """The paper of a model file: the :class:`Paper` contract plus the file (``file_name``, ``digest``: the
    engine's content hash), its ``model_object`` (attnverify.theory.engine.Model), and what its checks receive:
    ``theory_object`` (a ModelTheory) and ``numerics_object`` (a ModelNumerics).  Its mutants are made
    for the model (attnverify.checks.engine.selftest)."""

    file_name: str = ""
    digest: str = ""
    model_object: Any = None
    theory_object: Any = None
    numerics_object: Any = None

    def mutants(self):
        from attnverify.checks.engine.selftest import mutants

        return mutants(self)

    def families(self):
        from attnverify.checks.engine.selftest import families

        return families(self)

    def power_rows(self):
        from attnverify.checks.engine.selftest import power_rows

        return power_rows(self)

    def claim_scenarios(self):
        return {}

    def options(self, given: Mapping[str, Any]) -> dict:
        """The model options ``given`` (``derive --set``) validated as :meth:`Paper.options` validates them, then held
        to the scale rule of the model's checks (attnverify.checks.values: the file's default of each parameter
        and the values its ``[checks.<name>]`` tables set), so that ``derive`` refuses what ``run`` refuses."""
        read = super().options(given)
        tables = [dict(settings) for _, settings in self.model_object.check_settings]
        for name, value in read.items():
            prm = self.param(name)
            references = [prm.default, *(t[name] for t in tables if name in t)]
            if problem := scale_problem(prm, value, references, whose="the model file's",
                                        why="beyond what its checks run"):
                raise InputError(f"{self.model}: {problem}")
        return read

    def check_ids(self) -> list[str]:
        from attnverify.checks.registry import REGISTRY

        return [c for c in REGISTRY if c.startswith(f"{self.model}.")]


def _derive_steps(model, theory: ModelTheory, file_name: str, values: dict) -> tuple[str, list]:
    """The engine's derivation steps, with the parameter ``values`` given substituted (exactly) into every result."""
    from attnverify.theory.engine.derive import model_values

    D = theory.derivation
    steps = D.steps()
    title = f"{model.title or model.id} (model file {file_name})"
    if values:
        exact = model_values(model, values)
        sub = {D.symbols[k]: exact[k] for k in values}
        steps = [replace(s, result=s.result.subs(sub)) for s in steps]
        title += "; at " + ", ".join(f"{k} = {exact[k]}" for k in values)
    return title, steps


def _validate(model, values: dict) -> None:
    from attnverify.theory.engine.derive import model_values

    model_values(model, values)


def build(model, file_name: str) -> ModelPaper:
    """The paper of a loaded model (nothing registered yet)."""
    from attnverify.checks.engine._common import model_params
    from attnverify.checks.engine.quantities import model_quantities
    from attnverify.theory.engine import derive

    theory = ModelTheory(partial(derive, model))
    numerics = ModelNumerics(model)
    title = model.title or f"the model {model.id}"
    return ModelPaper(
        key=model.id, model=model.id, title=title, citation=model.citation or f"model file {file_name}",
        package=PACKAGE, modules=TEMPLATES, params=tuple(model_params(model)), validate=partial(_validate, model),
        derive=partial(_derive_steps, model, theory, file_name),
        sections=lambda: [Section(model.id, f"{title} (model file {file_name})", {})],
        quantities=partial(model_quantities, model, theory),
        file_name=file_name, digest=model.digest, model_object=model, theory_object=theory,
        numerics_object=numerics)


def add_model(source) -> ModelPaper:
    """Register the model file ``source`` (a path, or a parsed mapping) as a paper with its generated checks; the
    paper registered before for the same content is returned as it is."""
    from attnverify.checks.registry import add_paper, added, papers, restore_paper
    from attnverify.theory.engine import load_model

    try:
        model = load_model(source)
    except ValueError as exc:
        raise InputError(str(exc).splitlines()[0]) from None
    for p in papers():
        if isinstance(p, ModelPaper) and p.model == model.id and p.digest == model.digest:
            return p
    file_name = Path(source).name if not hasattr(source, "keys") else model.source
    modules = [m for m in (importlib.import_module(f"{PACKAGE}.{name}") for name in TEMPLATES) if m.applies(model)]
    if problem := unknown_checks(model, [m.NAME for m in modules]):
        raise InputError(problem)
    before = added(model.id)
    paper = add_paper(build(model, file_name))
    try:
        for module in modules:
            module.register_for(paper)
    except BaseException:   # a [checks.<name>] setting refused (or an interrupt): the paper before it stays
        restore_paper(model.id, before)
        raise
    return paper
