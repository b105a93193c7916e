r"""The mutants of a model file's paper (``attnverify selftest --mutants``): generic wrong closed forms, made from the
model's own derivation, that its generated checks must reject.

Each mutant replaces some quantities of the check's theory (``ModelTheory.replace``: a mutant is an argument), so
the check sees a plausible but wrong closed form through its ordinary code path:

* ``<id>.dropped_finite_size``: the O(1/L) terms missing: J_correction = 0, J_finite = J_limit, mass_finite.<c> =
  mass.<c> (caught by the objective check, whose limit-alone test must reject, and by the finite-size check);
* ``<id>.field_without_sphere_factor``: F = grad_rho J in place of (I - rho rho^T) grad_rho J, for J_limit and
  J_finite (caught by the reduced-field check);
* ``<id>.field_sign_flipped``: J and F negated (every equilibrium keeps its place, its stability is reversed;
  caught by the equilibria check);
* ``<id>.wrong_mixture_weight``: the first component count's size parameter n (not L) read as 2 n in every closed
  form, so that component's mixture weight n / L is doubled and the others' reduced accordingly (caught by the
  objective check); only for models whose counts have such a parameter;
* ``<id>.dropped_tilting_term``: the whole derivation redone with every tilted moment read as the untilted law's
  (the tilted mean m + Sigma a read as m, the tilted second moment as Sigma + m m^T; on the sphere mean 0), the
  MGFs and so the masses kept (:class:`~attnverify.theory.engine.derive.Derivation` with ``drop_tilt``; caught by
  the objective check, or by the attention-map check for a token query);
* ``<id>.pushforward_without_token_covariance`` (token query, one Gaussian component): the push-forward's covariance
  B B^T in place of B Sigma B^T, B the derived map's Jacobian (caught by the push-forward check).

The power families (``attnverify selftest --power --model FILE``: :func:`families`, :func:`power_rows`) scale one
derived quantity by (1 + delta), through the same code path: ``<id>.J_finite_scale`` (the objective check),
``<id>.correction_scale`` (the O(1/L) terms of J: the finite-size check), ``<id>.F_scale`` (the reduced field: the
field and ODE checks; a scale cannot move the equilibria or their stability, so that row is not applicable),
``<id>.map_scale`` (the token-query map) and ``<id>.pushforward_scale`` (the push-forward's mean and covariance).
Their minimum detectable perturbations are measured, not targeted, except the map's and the push-forward's: their
checks' own power rules require 1 % and 5 %.
"""
from __future__ import annotations

import dataclasses

import sympy as sp

from attnverify.checks.perturb import Family, Mutant, PowerRow
from attnverify.theory.engine.derive import Derivation
from attnverify.theory.engine.limit import component_tilt, geometry


def _dropped_finite_size(theory):
    q = theory.quantities
    wrong = {"J_correction": sp.Integer(0), "J_finite": q["J_limit"]}
    wrong.update({f"mass_finite.{n[len('mass.'):]}": e for n, e in q.items() if n.startswith("mass.")})
    return theory.replace("dropped O(1/L) terms", **wrong)


def _no_sphere_factor(theory):
    q = theory.quantities
    rho = [theory.symbols[c] for c in theory.coordinates]
    wrong = {F: sp.Matrix([sp.diff(q[J], r) for r in rho]) for F, J in (("F_limit", "J_limit"),
                                                                         ("F_finite", "J_finite"))}
    return theory.replace("F without its sphere factor", **wrong)


def _sign_flipped(theory):
    q = theory.quantities
    return theory.replace("J and F negated", **{n: -q[n] for n in ("J_limit", "J_finite", "F_limit", "F_finite")})


def _wrong_weight(size: str):
    def make(theory):
        s = theory.symbols[size]
        q = theory.quantities
        wrong = {n: e.subs(s, 2 * s) for n, e in q.items() if isinstance(e, (sp.Basic, sp.MatrixBase))}
        return theory.replace(f"mixture weight of {size} doubled", **wrong)
    return make


def _weight_parameter(model) -> str | None:
    """The size parameter (an integer parameter other than L and d) of the first count that has one."""
    sizes = {p.symbol: p.name for p in model.parameters if p.integer and p.name not in ("L", "d")}
    for c in model.components:
        for s in sorted(c.count.free_symbols, key=str):
            if s in sizes:
                return sizes[s]
    return None


def _covariance_dropped(theory):
    q = theory.quantities
    x = [theory.symbols[c] for c in theory.coordinates]
    B = sp.Matrix(q["attention_map"]).jacobian(x)
    return theory.replace("push-forward covariance B B^T", pushforward_cov=sp.ImmutableMatrix(B * B.T))


def _dropped_tilt(theory):
    wrong = Derivation(theory.model, drop_tilt=True).quantities
    return theory.replace("tilted moments read as the untilted law's", **wrong)


def tilt_unread(model) -> bool:
    """Whether the value map reads nothing the tilt changes, so that the dropped-tilting-term mutant is the correct
    derivation (an equivalent mutant): for every component, sign and score factor (a and 2a, the moments the O(1/L)
    terms use), V m(a) = V m, v_rest m_u(a) = 0, V S(a) V^T = V S V^T and v_rest^2 S_u(a) = v_rest^2 S_u, S_w alike
    (m, S the tilted mean and second moment; expanded by SymPy to 0: a proof; anything not shown 0 counts as read)."""
    geo = geometry(model)
    untilted = dataclasses.replace(geo, drop_tilt=True)
    V, v = geo.V, geo.v_rest
    for eps in geo.signs:
        for c in model.components:
            for factor in (1, 2):
                a, b = component_tilt(model, geo, c, eps, factor), component_tilt(model, untilted, c, eps, factor)
                differences = [*(V * sp.Matrix(a.mean_e) - V * sp.Matrix(b.mean_e)), v * a.mean_u - v * b.mean_u,
                               *(V * (sp.Matrix(a.second_e) - sp.Matrix(b.second_e)) * V.T),
                               v**2 * (a.second_u - b.second_u), v**2 * (a.second_w - b.second_w)]
                if any(sp.expand(e) != 0 for e in differences):
                    return False
    return True


def mutants(paper) -> list[Mutant]:
    """The generic mutants that apply to ``paper``'s model (module docstring)."""
    from attnverify.checks.engine import equilibria, field, finite_size, objective, pushforward, token_map

    model = paper.model_object
    ids = set(paper.check_ids())
    first = objective.NAME if objective.applies(model) else token_map.NAME
    same = ("the value map reads nothing the tilt changes (V m(a) = V m and the second moments alike, for every "
            "component: SymPy)") if tilt_unread(model) else ""
    out = [Mutant(f"{model.id}.dropped_tilting_term", _dropped_tilt, (f"{model.id}.{first}",),
                  "every tilted moment read as the untilted law's: the tilted mean m + Sigma a read as m",
                  equivalent=same)]
    if pushforward.applies(model):
        cid = f"{model.id}.{pushforward.NAME}"
        out.append(Mutant(f"{model.id}.pushforward_without_token_covariance", _covariance_dropped, (cid,),
                          "the push-forward's covariance B B^T in place of B Sigma B^T (the tokens' covariance "
                          "dropped)"))
    if not objective.applies(model):
        return out
    obj, fin = f"{model.id}.{objective.NAME}", f"{model.id}.{finite_size.NAME}"
    out += [Mutant(f"{model.id}.dropped_finite_size", _dropped_finite_size, tuple(c for c in (obj, fin) if c in ids),
                   "the O(1/L) terms of J and of the masses dropped (J_finite = J_limit)")]
    if f"{model.id}.{field.NAME}" in ids:
        out.append(Mutant(f"{model.id}.field_without_sphere_factor", _no_sphere_factor, (f"{model.id}.{field.NAME}",),
                          "the reduced field without its sphere factor: grad J in place of (I - rho rho^T) grad J"))
    if f"{model.id}.{equilibria.NAME}" in ids:
        out.append(Mutant(f"{model.id}.field_sign_flipped", _sign_flipped, (f"{model.id}.{equilibria.NAME}",),
                          "J and F negated: the equilibria in place, their stability reversed"))
    size = _weight_parameter(model)
    if size is not None:
        out.append(Mutant(f"{model.id}.wrong_mixture_weight", _wrong_weight(size), (obj,),
                          f"the mixture weight {size}/L read as 2 {size}/L in every closed form"))
    return out


#: the quantities each scale family multiplies by (1 + delta), and what it models
_SCALED = {
    "J_finite_scale": (("J_finite",), "J_finite x (1 + delta) (the objective with its O(1/L) terms)"),
    "correction_scale": (("J_correction",), "J_correction x (1 + delta), J_finite = J_limit + J_correction "
                                            "re-formed (the O(1/L) terms of J)"),
    "F_scale": (("F_limit", "F_finite"), "F_limit and F_finite x (1 + delta) (the reduced field)"),
    "map_scale": (("attention_map",), "the token-query attention map Gamma_mu x (1 + delta)"),
    "pushforward_scale": (("pushforward_mean", "pushforward_cov"), "the push-forward's mean and covariance "
                                                                   "x (1 + delta)"),
}


def _scaled(names: tuple[str, ...], factor: float):
    def make(theory):
        q = theory.quantities
        wrong = {n: factor * q[n] for n in names if n in q}
        if "J_correction" in wrong:
            wrong["J_finite"] = q["J_limit"] + wrong["J_correction"]
        return theory.replace(f"{', '.join(names)} x {factor:g}", **wrong)
    return make


def families(paper) -> list[Family]:
    """The scale families of ``paper``'s model (module docstring), named ``<id>.<family>``."""
    used = {r.family for r in power_rows(paper)}
    out = []
    for name, (names, what) in _SCALED.items():
        if f"{paper.model}.{name}" in used:
            full = f"{paper.model}.{name}"
            out.append(Family(full, "scale", what, lambda dl, names=names, full=full: [
                Mutant(full, _scaled(names, 1 + dl), (), "")]))
    return out


def power_rows(paper) -> list[PowerRow]:
    """The (check, family) rows of ``paper``'s generated checks."""
    from attnverify.checks.engine import (equilibria, field, finite_size, objective, ode_tracking, pushforward,
                                          token_map)

    ids, m = set(paper.check_ids()), paper.model
    rows = [(objective.NAME, "J_finite_scale", None, ""), (finite_size.NAME, "correction_scale", None, ""),
            (field.NAME, "F_scale", None, ""), (ode_tracking.NAME, "F_scale", None, ""),
            (equilibria.NAME, "F_scale", None, "a positive scale of F moves neither its zeros nor the signs of DF's "
             "eigenvalues: the certified equilibria and their stability are unchanged"),
            (token_map.NAME, "map_scale", 0.01, ""), (pushforward.NAME, "pushforward_scale", 0.05, "")]
    return [PowerRow(f"{m}.{c}", f"{m}.{fam}", target, why) for c, fam, target, why in rows if f"{m}.{c}" in ids]
