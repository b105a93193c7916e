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

import sympy as sp

from attnverify.checks.claims import ClaimVerdict, claim, words
from attnverify.checks.plugin import Perturbation
from attnverify.checks.reason import Math, Number, Reason, bracket, item, reason

PREDICATE = "terminal_concentration"
Z = 3.0                     # spreads between the measured mass on T and the concentration level for a refutation
#: the names of the mathematics in the reasons (SymPy's naming convention)
BETA, TIME, T_MAX, Q_E, Q_S = (sp.Symbol(n) for n in ("beta", "t", "t_max", "q_E", "q_S"))
IM_LAMBDA = sp.Abs(sp.Function("Im")(sp.Symbol("lambda")))
PLUS_MINUS = Math(r"\pm")
_TARGET = re.compile(r"^\s*dominant\s+(eigenspace|invariant\s+subspace)\s+of\s+(.+?)\s*$", re.IGNORECASE)


# ----------------------------------------------------------------------------------------------
# the stated target
# ----------------------------------------------------------------------------------------------
#: why a stated target's matrix cannot be read (any parse or evaluation failure), with the syntax it takes
_NOT_A_MATRIX = "not a d x d matrix expression: a product is B^T V, a power V**2, a transpose V^T"


def target_expression(text: str, d: int) -> tuple[str, sp.Basic, dict]:
    """(``"eigenspace"`` or ``"invariant subspace"``, M as a SymPy matrix expression, its d x d matrix symbols
    V, B, Q, K by name) of a stated target "dominant eigenspace of M" (``X^T`` = transpose).  ValueError naming the
    problem otherwise."""
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
    symbols = {n: sp.MatrixSymbol(n, d, d) for n in ("V", "B", "Q", "K")}
    numbers = {"Integer": sp.Integer, "Rational": sp.Rational, "Float": sp.Float}
    unknown = [n for n in re.findall(r"(?<![\w.])[A-Za-z_]\w*", expr) if n not in (*symbols, *numbers, "transpose")]
    if unknown:
        raise ValueError(f"target {text!r}: unknown name {unknown[0]!r} (the matrices are V, B, Q, K; X^T its "
                         "transpose)")
    try:
        tree = parse_expr(expr, local_dict={**symbols, "transpose": sp.transpose},
                          global_dict={"__builtins__": {}, **numbers},
                          transformations=standard_transformations, evaluate=True)
    except Exception:  # noqa: BLE001 -- any parse failure is a bad statement, named in one line
        raise ValueError(f"target {text!r}: cannot read {m.group(2)!r} as a matrix in V, B, Q, K "
                         f"({_NOT_A_MATRIX})") from None
    return kind, tree, symbols


def target_matrix(text: str, B: np.ndarray, V: np.ndarray, Q: np.ndarray | None = None,
                  K: np.ndarray | None = None) -> tuple[str, np.ndarray]:
    """(``"eigenspace"`` or ``"invariant subspace"``, the matrix M) of a stated target "dominant eigenspace of M";
    M is parsed by SymPy in a closed namespace of matrix symbols V, B, Q, K (``X^T`` = transpose).  ValueError naming
    the problem otherwise."""
    d = len(V)
    kind, tree, symbols = target_expression(text, d)
    m = _TARGET.match(text)
    values = {"V": V, "B": B, "Q": np.eye(d) if Q is None else Q, "K": B if K is None else K}
    try:
        M = tree.xreplace({symbols[n]: sp.ImmutableMatrix(values[n].tolist()) for n in values}).doit()
        M = np.array(sp.Matrix(M).evalf(30).tolist(), dtype=float)
    except Exception:  # noqa: BLE001 -- any parse failure is a bad statement, named in one line
        raise ValueError(f"target {text!r}: cannot read {m.group(2)!r} as a matrix in V, B, Q, K "
                         f"({_NOT_A_MATRIX})") from None
    if M.shape != (d, d) or not np.all(np.isfinite(M)):
        raise ValueError(f"target {text!r}: {m.group(2)!r} is not a finite {d} x {d} matrix")
    return kind, M


@dataclass(frozen=True)
class Target:
    text: str
    kind: str
    projector: np.ndarray
    dim: int
    note: tuple                # reason parts (empty: no note)
    shown: tuple = ()          # the target as reason parts: its kind in words, its matrix as SymPy mathematics


def _target(stated, g) -> Target:
    import attnverify.theory.meanfield as mf

    kind, M = target_matrix(stated.get("target", ""), g.B, g.V)
    s = mf.dominant_subspace(M)
    if s.motion == "uncovered" or s.dim == 0:
        raise ValueError(f"target {stated.get('target')!r}: its dominant subspace is not covered ({s.note})")
    note = ()
    if kind == "eigenspace" and s.motion == "rotation":
        note = item("the stated target's matrix has the dominant complex pair ", _pair(s.dominant), ": its eigenspace "
                    "holds no real direction and is read as the pair's real invariant plane")
    _, tree, _ = target_expression(stated.get("target", ""), len(g.V))
    return Target(stated.get("target"), kind, s.projector, s.dim, note, item("dominant ", kind, " of ", Math(tree)))


def _value(x, digits: int = 4):
    """``x`` as a Number part with ``digits`` significant digits; the words "n/a" for None or a non-finite value."""
    return "n/a" if x is None or not math.isfinite(float(x)) else Number(float(x), digits=digits)


def _values(xs, digits: int = 4) -> tuple:
    """The values ``xs`` in their order, each a Number part (``_value``), joined by commas (a value met twice is
    named twice: the values go with the betas named beside them)."""
    out: list = []
    for i, x in enumerate(xs):
        out += [", "] * bool(i) + [_value(x, digits)]
    return item(*out)


def _betas(ks, g) -> tuple:
    """beta = the betas of the indices ``ks`` (as the findings give them)."""
    return item(Math(BETA), " = ", _values([g.betas[k] for k in ks], 6))


def _pair(z) -> tuple:
    """The complex pair a +- b i of the eigenvalue z[0], as parts."""
    return item(_value(z[0].real), " ", PLUS_MINUS, " ", _value(abs(z[0].imag)), Math(sp.I))


# ----------------------------------------------------------------------------------------------
# one model case
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CaseVerdict:
    model: str
    kind: str                  # refuted | disagree | consistent | nothing | unreached
    text: tuple                # reason parts (one item of the claim's reason)
    condition: tuple = ()
    rotation: tuple = ()       # the finding of a rotating case (for holds_if)


def _mass_on(P: np.ndarray, moments: np.ndarray) -> np.ndarray:
    """tr(P M) for moments (samples, times, d, d): (samples, times)."""
    return np.einsum("ij,stji->st", P, moments)


def _phases_text(g, ks: list[int]) -> tuple:
    """The phases found at the betas ks, computed from the findings, as parts (empty: none)."""
    meta = [k for k in ks if g.metastable[k]]
    transit = [k for k in ks if not g.metastable[k]]
    parts = []
    if g.structure == "nested":
        on_E = [k for k in ks if g.on_E_at_t_max[k]]
        parts.append(item("S lies inside E (dim ", Number(g.dim_E), "): there is no switch away from E; the tokens "
                          "concentrate on S inside E",
                          item(" (still on E at ", Math(T_MAX), " at ", _betas(on_E, g), ")") if on_E else ""))
    elif meta:
        sw = [k for k in meta if g.t_switch[k] is not None]
        parts.append(item("a metastable phase on E (", Math(Q_E), " ", Math(r"\geq"), " ",
                          Number(g.meta_level, digits=6), " for ", _values([g.dwell_E[k] for k in meta], 3),
                          " time units at ", _betas(meta, g), ")",
                          item(" is followed by a switch to S at ", Math(TIME), " = ",
                               _values([g.t_switch[k] for k in sw], 3), " (", _betas(sw, g), ")") if sw else
                          item(" without a switch time (", Math(sp.Ge(Q_S, sp.Rational(1, 2))),
                               " already when it starts)")))
    if transit and g.structure != "nested":
        parts.append(item("no metastable phase at ", _betas(transit, g), " (", Math(Q_E), " ", Math(r"\geq"), " ",
                          Number(g.meta_level, digits=6), " for only ", _values([g.dwell_E[k] for k in transit], 3),
                          " < ", Number(g.meta_dwell, digits=6), " time units)"))
    return item(*(p for i, part in enumerate(parts) for p in (("; ",) * bool(i) + part)))


def judge_case(g, T: Target) -> CaseVerdict:
    import attnverify.theory.meanfield as mf

    name = _name(g.model)
    off = [1.0 - q for q in g.q_S_late]
    ks = [k for k, e in enumerate(off) if e <= 1.0 - g.level]
    w0, w1 = g.late_window
    if not ks:
        return CaseVerdict(g.model, "unreached", item(
            name, ": the tokens did not reach the terminal phase by ", Math(T_MAX), " = ", Number(g.t_max, digits=6),
            " (mass off S ", _values(off, 2), " at ", _betas(range(len(g.betas)), g), ")"))
    _, w, _ = np.linalg.svd(T.projector @ np.linalg.eigh(g.P_S)[1][:, -g.dim_S:])
    lo, hi = float(w.min() ** 2), float(w.max() ** 2)
    rows = []
    for k in ks:
        q = _mass_on(T.projector, g.late_moments[k])
        main_lo, main_hi = float(q[0].min()), float(q[0].max())
        u = float(max((max(abs(r.min() - main_lo), abs(r.max() - main_hi)) for r in q[1:]), default=0.0))
        a = 2 * math.sqrt(off[k]) + off[k]
        rows.append((k, main_lo, main_hi, u, a))
    window = item(Math(TIME), " in ", bracket(w0, w1, digits=6))
    for k, qlo, qhi, u, a in rows:
        if qlo < lo - a - Z * u or qhi > hi + a + Z * u:
            return CaseVerdict(g.model, "disagree", item(
                name, ", ", _betas([k], g), ": the measured mass on the target, ", _range(qlo, qhi), " over ", window,
                ", lies outside the derived range ", _range(lo, hi), " for tokens on S (allowance ", _value(a, 2),
                " for the mass off S): our derivation and our measurement disagree"))
    excess = mf.subspace_excess(T.projector, g.P_S)
    nothing = g.structure == "shared"
    if excess > 1e-9:
        # "concentrate on T" means stay on it: the smallest mass on T over the late window (a rotating S passes
        # through T's intersection with it, so the largest can reach 1)
        k, qlo, qhi, u, a = min(rows, key=lambda r: r[1])
        gap = g.level - qlo
        if gap > Z * u:
            dist = ("certified by exact agreement of the samples" if u == 0 else
                    item(_value(gap / u, 3), " spreads"))
            cond = item(name, ", ", _betas([k], g), ", ", window, ": the tokens' mass on the stated target (",
                        T.shown, ") falls to ", _value(qlo, 6), " (", PLUS_MINUS, " ", _value(u, 2), " over the "
                        "refinement samples), where the statement needs ", Math(r"\geq"), " ",
                        Number(g.level, digits=6), "; derived ", _range(lo, hi), " for tokens on V's dominant "
                        "invariant subspace S, off which lies ", _value(1 - g.q_S_late[k], 2), " of the mass; distance ",
                        _value(gap, 4), " = ", dist)
            return CaseVerdict(g.model, "refuted", cond, condition=cond)
        return CaseVerdict(g.model, "nothing", item(
            name, ": S does not lie in the target, but the mass on it, ", _value(qlo, 6), " ", PLUS_MINUS, " ",
            _value(u, 2), ", is not resolved below the level ", Number(g.level, digits=6)))
    held = item(name, ": the tokens' mass off the stated target (", T.shown, ") is at most ",
                _value(max(1.0 - r[1] for r in rows), 2), " over ", window, " at ", _betas([r[0] for r in rows], g))
    if T.dim > g.dim_S:
        held = item(held, " (the target, of dim ", Number(T.dim), ", is larger than the terminal set S, of dim ",
                    Number(g.dim_S), ")")
    phases = _phases_text(g, ks)
    held = item(held, "; " if phases else "", phases)
    if nothing:
        return CaseVerdict(g.model, "nothing", item(
            name, ": E lies in V's dominant eigenspace S, which is at rest: the zero-temperature limit already sits on "
            "the terminal set, so the run cannot tell the conjecture from it (", held, ")"))
    if g.motion == "rotation":
        rates = [item(_value(r, 8), " (", Math(BETA), " = ", Number(b, digits=6), ")")
                 for r, b in zip(g.rotation_rate_measured, g.betas) if r is not None]
        rot = item("in ", name, ", V's dominant eigenvalues are the complex pair ", _pair(g.dominant_eigenvalues),
                   ": the tokens concentrate on its real invariant plane (mass off it ", Math(r"\leq"), " ",
                   _value(max(off[k] for k in ks), 2), ") and keep turning in it at the measured rate ",
                   item(*(p for i, r in enumerate(rates) for p in ((", ",) * bool(i) + r))) or "(not measured)",
                   " against the derived ", Math(IM_LAMBDA), " = ", _value(g.rotation_rate, 8),
                   ", never coming to rest on a direction", item("; ", T.note) if T.note else "")
        return CaseVerdict(g.model, "consistent", held, rotation=rot)
    return CaseVerdict(g.model, "consistent", held)


def _name(model: str) -> str:
    return "the given model" if model == "main" else f"the {model} model"


def _range(lo: float, hi: float) -> tuple:
    """The range lo..hi as a bracket (one number where it is a point, within 1e-12)."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return item(_value(lo, 6), "..", _value(hi, 6))
    return item(_value(lo, 6) if abs(hi - lo) <= 1e-12 else bracket(min(lo, hi), max(lo, hi), digits=6))


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


#: generic 2 x 2 matrices (no symmetry, no shared eigenvector) at which a stated target is read before any work
_TRIAL = np.array([[2.0, 1.0], [-0.5, 3.0]]), np.array([[1.0, 0.3], [0.7, -2.0]])


@claim(id="B.conjecture1", paper="B", needs=("meanfield.terminal_phase",), perturbations=_perturbations,
       reads=words((PREDICATE,), lambda target: target_matrix(target, *_TRIAL)))
def conjecture1(results, stated) -> ClaimVerdict:
    f = results["meanfield.terminal_phase"].findings
    try:
        cases = [judge_case(g, _target(stated, g)) for g in (f,) + tuple(f.extra_cases)]
    except ValueError as exc:                       # a stated target that cannot be read: say so, decide nothing
        return ClaimVerdict("inconclusive", reason(f"the stated form cannot be judged: {exc}"))
    ev = {"meanfield.terminal_phase": {"target": stated.get("target"), "cases": {c.model: c.kind for c in cases},
                                       "t_switch": list(f.t_switch)}}
    texts = [c.text for c in cases]                 # one item per model case
    refuted = [c for c in cases if c.kind == "refuted"]
    if refuted:
        return ClaimVerdict("refuted", reason("the tokens do not concentrate on the stated target:", items=texts),
                            condition=reason(*refuted[0].condition), evidence=ev)
    if any(c.kind == "disagree" for c in cases):
        return ClaimVerdict("inconclusive", Reason((), texts), evidence=ev)
    consistent = [c for c in cases if c.kind == "consistent"]
    if not consistent:
        return ClaimVerdict("inconclusive", reason("nothing to decide:", items=texts), evidence=ev)
    rotating = [c for c in consistent if c.rotation]
    if rotating:
        at_rest = [_name(c.model) for c in consistent if not c.rotation]
        return ClaimVerdict("holds_if", Reason((), (*texts, rotating[0].rotation)),
                            condition=reason("the dominant eigenvalue of V is real (and not defective)"
                                             + (f" (as in {' and '.join(at_rest)}: there the tokens come to rest on "
                                                "its eigenspace)" if at_rest else "") + "; otherwise, as ",
                                             *rotating[0].rotation),
                            evidence=ev)
    return ClaimVerdict("not_refuted", reason("consistent with the evidence:", items=texts), evidence=ev)
