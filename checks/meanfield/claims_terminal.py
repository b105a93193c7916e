"""Paper B, Conjecture 1 (claim B.conjecture1): at finite beta and large t the tokens concentrate on "the dominant
eigenspace of V".

Stated form (checks/meanfield/stated.toml): ``stated = "terminal_concentration"`` (the predicate: the tokens' mass
on the target subspace T tends to 1) and ``target`` (which subspace: ``"dominant eigenspace of <M>"`` or
``"dominant invariant subspace of <M>"``, M a matrix expression in V, B (= Q^T K), Q, K, with ``^T`` for a
transpose, e.g. ``"V"``, ``"V B^T"``, ``"(V + V^T)/2"``).  The evaluator reads both from the stated form it is given
(the paper's, a user's restatement, or a perturbed one), never from code.

Evidence: the typed findings of meanfield.terminal_phase (:class:`attnverify.checks.meanfield.terminal_findings.
TerminalFindings`), one per model case.  For each case:

* derived: S (V's dominant invariant subspace, the attractor of the cluster field, with its motion), and the mass a
  token on S carries on T, |P_T u|^2 for u in S: its range [s_min^2, s_max^2] over the unit vectors of S (the
  singular values of P_T restricted to S);
* measured: the mass on T over the late window, tr(P_T M(t)) with M the second-moment matrix of the tokens, for the
  main sample and the refinement samples (their spread is the uncertainty), and the mass off S (1 - q_S); a token
  whose mass off S is eps has |P_T x|^2 within 2 sqrt(eps) + eps of its projection's, which is the allowance
  between the two sides;
* ``refuted`` when S does not lie in T (the derived mass on T of some direction of S is below 1) and the measured
  mass on T stays below the statement's concentration level (``level`` of the check) by more than three spreads,
  in agreement with the derived range: the counterexample gives the model, beta, the window, both values and the
  distance;
* when S lies in T the statement is consistent with the evidence: ``holds_if`` the dominant eigenvalue is real
  (the tokens come to rest on the eigenspace) when a case has a complex dominant pair (the tokens concentrate on the
  invariant plane and keep turning in it at the measured rate: the finding), ``not_refuted`` otherwise; a case
  where E lies in a resting S (the zero-temperature limit already sits there) has nothing to decide
  (``inconclusive``), as has a case that did not reach the terminal phase by t_max.

No scenario gives the paper's own statement a counterexample: in the regime the check covers (tight clusters that
do not interact) the cluster field's attractor is V's dominant invariant subspace for every V; a refutation of the
paper's target would need interacting clusters (an indefinite B^T on S), which the check reports as unresolved.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from attnverify.checks.claims import ClaimVerdict, claim
from attnverify.checks.judges import fmt
from attnverify.checks.plugin import Perturbation

PREDICATE = "terminal_concentration"
Z = 3.0                     # spreads between the measured mass on T and the concentration level for a refutation
_TARGET = re.compile(r"^\s*dominant\s+(eigenspace|invariant\s+subspace)\s+of\s+(.+?)\s*$", re.IGNORECASE)


# ----------------------------------------------------------------------------------------------
# the stated target
# ----------------------------------------------------------------------------------------------
def target_matrix(text: str, B: np.ndarray, V: np.ndarray, Q: np.ndarray | None = None,
                  K: np.ndarray | None = None) -> tuple[str, np.ndarray]:
    """(``"eigenspace"`` or ``"invariant subspace"``, the matrix M) of a stated target "dominant eigenspace of M";
    M is parsed by SymPy in a closed namespace of matrix symbols V, B, Q, K (``X^T`` = transpose).  ValueError naming
    the problem otherwise."""
    import sympy as sp
    from sympy.parsing.sympy_parser import parse_expr, standard_transformations

    m = _TARGET.match(text or "")
    if not m:
        raise ValueError(f"target {text!r}: expected 'dominant eigenspace of <matrix>' or 'dominant invariant "
                         "subspace of <matrix>'")
    kind, expr = m.group(1).lower().split()[0], m.group(2)
    kind = "eigenspace" if kind == "eigenspace" else "invariant subspace"
    expr = re.sub(r"([A-Za-z]\w*|\))\s*(\^\s*T|ᵀ|')", r"transpose(\1)", expr)
    expr = re.sub(r"(\w|\))\s+(?=[A-Za-z(])", r"\1*", expr)
    if any(bad in expr for bad in ("__", "lambda", "import", ";")) or re.search(r"\.[A-Za-z_]", expr):
        raise ValueError(f"target {text!r}: not a matrix expression")
    d = len(V)
    values = {"V": V, "B": B, "Q": np.eye(d) if Q is None else Q, "K": B if K is None else K}
    symbols = {n: sp.MatrixSymbol(n, d, d) for n in values}
    try:
        numbers = {"Integer": sp.Integer, "Rational": sp.Rational, "Float": sp.Float}
        tree = parse_expr(expr, local_dict={**symbols, "transpose": sp.transpose},
                          global_dict={"__builtins__": {}, **numbers},
                          transformations=standard_transformations, evaluate=True)
        M = tree.xreplace({symbols[n]: sp.ImmutableMatrix(values[n].tolist()) for n in values}).doit()
        M = np.array(sp.Matrix(M).evalf(30).tolist(), dtype=float)
    except Exception as exc:  # noqa: BLE001 -- any parse failure is a bad statement, named in one line
        raise ValueError(f"target {text!r}: cannot read {m.group(2)!r} as a matrix in V, B, Q, K "
                         f"({type(exc).__name__})") from None
    if M.shape != (d, d) or not np.all(np.isfinite(M)):
        raise ValueError(f"target {text!r}: {m.group(2)!r} is not a finite {d} x {d} matrix")
    return kind, M


@dataclass(frozen=True)
class Target:
    text: str
    kind: str
    projector: np.ndarray
    dim: int
    note: str


def _target(stated, g) -> Target:
    import attnverify.theory.meanfield as mf

    kind, M = target_matrix(stated.get("target", ""), g.B, g.V)
    s = mf.dominant_subspace(M)
    if s.motion == "uncovered" or s.dim == 0:
        raise ValueError(f"target {stated.get('target')!r}: its dominant subspace is not covered ({s.note})")
    note = ""
    if kind == "eigenspace" and s.motion == "rotation":
        note = (f"the stated target's matrix has the dominant complex pair {_pair(s.dominant)}: its eigenspace holds "
                "no real direction and is read as the pair's real invariant plane")
    return Target(stated.get("target"), kind, s.projector, s.dim, note)


def _pair(z) -> str:
    return f"{fmt(z[0].real)} +- {fmt(abs(z[0].imag))}i"


# ----------------------------------------------------------------------------------------------
# one model case
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CaseVerdict:
    model: str
    kind: str                  # refuted | disagree | consistent | nothing | unreached
    text: str
    condition: str = ""
    rotation: str = ""         # the finding of a rotating case (for holds_if)


def _mass_on(P: np.ndarray, moments: np.ndarray) -> np.ndarray:
    """tr(P M) for moments (samples, times, d, d): (samples, times)."""
    return np.einsum("ij,stji->st", P, moments)


def _phases_text(g, ks: list[int]) -> str:
    """The phases found at the betas ks, computed from the findings."""
    b = (lambda k: f"{g.betas[k]:g}")
    meta = [k for k in ks if g.metastable[k]]
    transit = [k for k in ks if not g.metastable[k]]
    parts = []
    if g.structure == "nested":
        on_E = [b(k) for k in ks if g.on_E_at_t_max[k]]
        parts.append(f"S lies inside E (dim {g.dim_E}): there is no switch away from E; the tokens concentrate on S "
                     "inside E" + (f" (still on E at t_max at beta = {', '.join(on_E)})" if on_E else ""))
    elif meta:
        sw = [k for k in meta if g.t_switch[k] is not None]
        parts.append(f"a metastable phase on E (q_E >= {g.meta_level:g} for "
                     + ", ".join(f"{g.dwell_E[k]:.3g}" for k in meta) + " time units at beta = "
                     + ", ".join(b(k) for k in meta) + ")"
                     + (" is followed by a switch to S at t = " + ", ".join(f"{g.t_switch[k]:.3g}" for k in sw)
                        + " (beta = " + ", ".join(b(k) for k in sw) + ")" if sw else " without a switch time "
                        "(q_S >= 1/2 already when it starts)"))
    if transit and g.structure != "nested":
        parts.append("no metastable phase at beta = " + ", ".join(b(k) for k in transit) + " (q_E >= "
                     f"{g.meta_level:g} for only " + ", ".join(f"{g.dwell_E[k]:.3g}" for k in transit)
                     + f" < {g.meta_dwell:g} time units)")
    return "; ".join(parts)


def judge_case(g, T: Target) -> CaseVerdict:
    import attnverify.theory.meanfield as mf

    name = _name(g.model)
    off = [1.0 - q for q in g.q_S_late]
    ks = [k for k, e in enumerate(off) if e <= 1.0 - g.level]
    w0, w1 = g.late_window
    if not ks:
        return CaseVerdict(g.model, "unreached", f"{name}: the tokens did not reach the terminal phase by t_max = "
                           f"{g.t_max:g} (mass off S {', '.join(fmt(e, 2) for e in off)} at beta = "
                           f"{', '.join(f'{b:g}' for b in g.betas)})")
    _, w, _ = np.linalg.svd(T.projector @ np.linalg.eigh(g.P_S)[1][:, -g.dim_S:])
    lo, hi = float(w.min() ** 2), float(w.max() ** 2)
    rows = []
    for k in ks:
        q = _mass_on(T.projector, g.late_moments[k])
        main_lo, main_hi = float(q[0].min()), float(q[0].max())
        u = float(max((max(abs(r.min() - main_lo), abs(r.max() - main_hi)) for r in q[1:]), default=0.0))
        a = 2 * math.sqrt(off[k]) + off[k]
        rows.append((k, main_lo, main_hi, u, a))
    beta = (lambda k: g.betas[k])
    for k, qlo, qhi, u, a in rows:
        if qlo < lo - a - Z * u or qhi > hi + a + Z * u:
            return CaseVerdict(g.model, "disagree", f"{name}, beta = {beta(k):g}: the measured mass on the target, "
                               f"{fmt(qlo, 6)}..{fmt(qhi, 6)} over t in [{w0:g}, {w1:g}], lies outside the derived "
                               f"range {fmt(lo, 6)}..{fmt(hi, 6)} for tokens on S (allowance {fmt(a, 2)} for the mass "
                               "off S): our derivation and our measurement disagree")
    excess = mf.subspace_excess(T.projector, g.P_S)
    nothing = g.structure == "shared"
    if excess > 1e-9:
        # "concentrate on T" means stay on it: the smallest mass on T over the late window (a rotating S passes
        # through T's intersection with it, so the largest can reach 1)
        k, qlo, qhi, u, a = min(rows, key=lambda r: r[1])
        gap = g.level - qlo
        if gap > Z * u:
            dist = "certified by exact agreement of the samples" if u == 0 else f"{fmt(gap / u, 3)} spreads"
            cond = (f"{name}, beta = {beta(k):g}, t in [{w0:g}, {w1:g}]: the tokens' mass on the stated target "
                    f"({T.text}) falls to {fmt(qlo, 6)} (+- {fmt(u, 2)} over the refinement samples), "
                    f"where the statement needs >= {g.level:g}; derived {_range(lo, hi)} for tokens on V's dominant "
                    f"invariant subspace S, off which lies {fmt(1 - g.q_S_late[k], 2)} of the mass; distance "
                    f"{fmt(gap, 4)} = {dist}")
            return CaseVerdict(g.model, "refuted", cond, condition=cond)
        return CaseVerdict(g.model, "nothing", f"{name}: S does not lie in the target, but the mass on it, "
                           f"{fmt(qlo, 6)} +- {fmt(u, 2)}, is not resolved below the level {g.level:g}")
    held = (f"{name}: the tokens' mass off the stated target ({T.text}) is at most "
            f"{fmt(max(1.0 - r[1] for r in rows), 2)} over t in [{w0:g}, {w1:g}] at beta = "
            + ", ".join(f"{beta(r[0]):g}" for r in rows))
    if T.dim > g.dim_S:
        held += f" (the target, of dim {T.dim}, is larger than the terminal set S, of dim {g.dim_S})"
    phases = _phases_text(g, ks)
    held += (f"; {phases}" if phases else "")
    if nothing:
        return CaseVerdict(g.model, "nothing", f"{name}: E lies in V's dominant eigenspace S, which is at rest: the "
                           "zero-temperature limit already sits on the terminal set, so the run cannot tell the "
                           f"conjecture from it ({held})")
    if g.motion == "rotation":
        rates = [f"{fmt(r, 8)} (beta = {b:g})" for r, b in zip(g.rotation_rate_measured, g.betas) if r is not None]
        rot = (f"in {name}, V's dominant eigenvalues are the complex pair {_pair(g.dominant_eigenvalues)}: the tokens "
               f"concentrate on its real invariant plane (mass off it <= {fmt(max(off[k] for k in ks), 2)}) and keep "
               "turning in it at the measured rate " + (", ".join(rates) or "(not measured)")
               + f" against the derived |Im lambda| = {fmt(g.rotation_rate, 8)}, never coming to rest on a direction"
               + (f"; {T.note}" if T.note else ""))
        return CaseVerdict(g.model, "consistent", held, rotation=rot)
    return CaseVerdict(g.model, "consistent", held)


def _name(model: str) -> str:
    return "the given model" if model == "main" else f"the {model} model"


def _range(lo: float, hi: float) -> str:
    return fmt(lo, 6) if abs(hi - lo) <= 1e-12 else f"{fmt(lo, 6)}..{fmt(hi, 6)}"


# ----------------------------------------------------------------------------------------------
# the claim
# ----------------------------------------------------------------------------------------------
def _perturbations(stated, results) -> list[Perturbation]:
    """The target of another matrix: V B^T (the zero-temperature limit's; wrong wherever E and S differ), V^T (left
    eigenvectors; wrong for a non-normal V), the symmetric part of V (wrong for a non-symmetric V); and the same
    target stated as an invariant subspace (still true)."""
    return [Perturbation("target V B^T", None, stated.restated(stated.stated, target="dominant eigenspace of V B^T")),
            Perturbation("target V^T", None, stated.restated(stated.stated, target="dominant eigenspace of V^T")),
            Perturbation("target (V + V^T)/2", None,
                         stated.restated(stated.stated, target="dominant eigenspace of (V + V^T)/2")),
            Perturbation("target as invariant subspace", None,
                         stated.restated(stated.stated, target="dominant invariant subspace of V"), wrong=False)]


@claim(id="B.conjecture1", paper="B", needs=("meanfield.terminal_phase",), perturbations=_perturbations)
def conjecture1(results, stated) -> ClaimVerdict:
    f = results["meanfield.terminal_phase"].findings
    if stated.stated != PREDICATE:
        return ClaimVerdict("inconclusive", f"the predicate {stated.stated!r} is not one this claim measures "
                            f"(it measures {PREDICATE!r}: the mass on a target subspace tends to 1)")
    try:
        cases = [judge_case(g, _target(stated, g)) for g in (f,) + tuple(f.extra_cases)]
    except ValueError as exc:                       # a stated target that cannot be read: say so, decide nothing
        return ClaimVerdict("inconclusive", f"the stated form cannot be judged: {exc}")
    ev = {"meanfield.terminal_phase": {"target": stated.get("target"), "cases": {c.model: c.kind for c in cases},
                                       "t_switch": list(f.t_switch)}}
    text = "; ".join(c.text for c in cases)
    refuted = [c for c in cases if c.kind == "refuted"]
    if refuted:
        return ClaimVerdict("refuted", f"the tokens do not concentrate on the stated target: {text}",
                            condition=refuted[0].condition, evidence=ev)
    if any(c.kind == "disagree" for c in cases):
        return ClaimVerdict("inconclusive", text, evidence=ev)
    consistent = [c for c in cases if c.kind == "consistent"]
    if not consistent:
        return ClaimVerdict("inconclusive", f"nothing to decide: {text}", evidence=ev)
    rotating = [c for c in consistent if c.rotation]
    if rotating:
        at_rest = [_name(c.model) for c in consistent if not c.rotation]
        return ClaimVerdict("holds_if", f"{text}; {rotating[0].rotation}",
                            condition="the dominant eigenvalue of V is real (and not defective)"
                                      + (f" (as in {' and '.join(at_rest)}: there the tokens come to rest on its "
                                         "eigenspace)" if at_rest else "") + f"; otherwise, as {rotating[0].rotation}",
                            evidence=ev)
    return ClaimVerdict("not_refuted", f"consistent with the evidence: {text}", evidence=ev)
