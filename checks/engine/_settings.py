r"""A model file's ``[checks.<name>]`` settings, applied to the generated check ``<model>.<name>``.

A setting replaces the default of one of the check's parameters (a model parameter such as the signal strength, or
the check's own option such as ``runs``) at every profile: the file states the point at which that check resolves
the model (Paper A's own SGA checks run at a stronger signal than the paper's default for the same reason: a weak
field is drowned by the gradient noise of a few dozen runs).  Each name and value is validated as ``--set`` would
validate it, then the check's own validation runs on the new defaults: a bad setting is one InputError line
naming the file and the field, before any work, and the scale rule holds a setting to the check's own settings
as it holds ``--set`` (attnverify.checks.values); ``--set`` still overrides a setting.  A setting holds at every
profile: a size set here is the paper profile's size too.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from attnverify.checks.params import InputError, Param, validated
from attnverify.checks.values import scale_problem
from attnverify.theory.engine.expressions import did_you_mean


def unknown_checks(model, names: Sequence[str]) -> str | None:
    """The first ``[checks.<name>]`` table of ``model`` naming none of its generated checks ``names``: the error
    line, or None."""
    for name, _ in model.check_settings:
        if name not in names:
            return (f"{model.source}: checks.{name}: no generated check of the model {model.id} is named "
                    f"{name!r}{did_you_mean(name, names)} (its checks: {', '.join(names)})")
    return None


def with_settings(model, name: str, params: Sequence[Param], paper_profile: dict | None,
                  validate: Callable[[dict], None] | None) -> tuple[list[Param], dict]:
    """``params`` with the defaults of ``[checks.<name>]`` of the model file, and the paper profile without the
    parameters the file sets (the file's value holds at every profile).  InputError, one line, for an unknown name,
    a value the parameter refuses, or defaults the check's validation refuses."""
    given = model.settings_for(name)
    profile = dict(paper_profile or {})
    by = {q.name: q for q in params}
    for key, raw in given.items():
        field = f"{model.source}: checks.{name}.{key}"
        if key not in by:
            raise InputError(f"{field}: not a parameter of {model.id}.{name}{did_you_mean(key, by)} (its parameters: "
                             f"{', '.join(by)})")
        try:
            value = by[key].read(raw)
        except InputError as exc:
            raise InputError(f"{field}: {str(exc).removeprefix(key + ': ')}") from None
        # the scale rule against the template's own settings, as --set is held to them (a setting may not make a
        # check too large to run, or its false-alarm rate 1e-300)
        if problem := scale_problem(by[key], value, [by[key].default, profile.get(key)]):
            raise InputError(f"{field}: {problem.removeprefix(key + ': ')}")
        by[key] = replace(by[key], default=value, help=f"{by[key].help}; set by the file's [checks.{name}]",
                          scale_reference=(by[key].default, profile.get(key)))    # --set is held to these too
    out = [by[q.name] for q in params]
    if given:
        try:
            validated(validate, {q.name: q.default for q in out})
        except InputError as exc:
            raise InputError(f"{model.source}: checks.{name} ({', '.join(given)}): {exc}") from None
    return out, {k: v for k, v in profile.items() if k not in given}


def file_settings(check_id: str) -> tuple[str, dict]:
    """(the model file's name, its ``[checks.<name>]`` settings) for a generated check ``<model>.<name>``; ("", {})
    for any other check or a check the file sets nothing of (the command line says which values a run takes from
    the file)."""
    from attnverify.checks.registry import paper_of

    paper = paper_of(check_id)
    model = getattr(paper, "model_object", None)          # a model file's paper (checks.engine.paper.ModelPaper)
    if model is None:
        return "", {}
    return paper.file_name, model.settings_for(check_id.partition(".")[2])
