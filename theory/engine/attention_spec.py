r"""The model file's ``[attention]`` table: the query, a bilinear score and a linear value.

* ``query = "q"``: a trained unit query q; the key is a token x.  ``query = "token"``: self-attention, the query is
  a token x and the key a token y (Gamma_mu(x) is the object).
* ``score = "c*<P u, Q v>"``: a scalar expression c in the parameters times one bracket of the query variable and
  the key variable, each optionally preceded by a matrix name (``"beta*<q, A x>"``, ``"<A x, y>/tau"``).
  <P q, Q x> = <Q^T P q, x>, so the score is <a, x> with the **score vector** a = c B q, B = Q^T P.
* ``value = "V x"`` (or ``"x"``; the key variable, ``y`` for a token query).
* ``[attention.matrices]``: each matrix in the directions' basis plus one scalar on their orthogonal complement:
  ``A = { rows = [["1", "0.5"], ["0", "1"]], rest = "alpha" }`` is A = sum_ij A_ij e_i e_j^T + alpha P_rest; a
  plain expression ``A = "lam"`` is lam I.  Such a matrix maps the span of the directions and its complement to
  themselves, so every quantity depends on the query only through its overlaps (docs/models.md).
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

import sympy as sp

from attnverify.theory.engine.expressions import ModelError, check_keys, linear_coefficients, parse

_ATTN_KEYS = ("query", "score", "value", "matrices")
_QUERIES = {"q": ("q", "x"), "token": ("x", "y")}       # query kind -> (query variable, key variable)
_SIDE = re.compile(r"\s*(?:([A-Za-z][A-Za-z0-9_]*)\s*\*?\s+|([A-Za-z][A-Za-z0-9_]*)\s*\*\s*)?([A-Za-z][A-Za-z0-9_]*)\s*")
_BRACKET = re.compile(r"<([^<>]*)>")


@dataclass(frozen=True)
class Block:
    """A d x d matrix that is ``rows`` (k x k) on the span of the directions and ``rest`` times the identity on
    the orthogonal complement."""

    rows: tuple[tuple[sp.Expr, ...], ...]
    rest: sp.Expr

    @property
    def matrix(self) -> sp.ImmutableMatrix:
        return sp.ImmutableMatrix(self.rows)

    @staticmethod
    def identity(k: int, scale: sp.Expr = sp.Integer(1)) -> "Block":
        return Block(tuple(tuple(scale if i == j else sp.Integer(0) for j in range(k)) for i in range(k)), scale)

    def times(self, other: "Block") -> "Block":
        m = self.matrix * other.matrix
        return Block(tuple(tuple(m[i, j] for j in range(m.cols)) for i in range(m.rows)), self.rest * other.rest)

    def transpose(self) -> "Block":
        m = self.matrix.T
        return Block(tuple(tuple(m[i, j] for j in range(m.cols)) for i in range(m.rows)), self.rest)


@dataclass(frozen=True)
class Attention:
    """The parsed attention: ``query`` ("q" or "token"), the score vector a = ``scale`` * ``key_query`` applied
    to the query, the value matrix ``value``, and the texts they came from."""

    query: str
    scale: sp.Expr
    key_query: Block
    value: Block
    score_text: str
    value_text: str
    matrices: tuple[tuple[str, Block], ...] = ()


def _matrix(spec, k: int, names: Mapping[str, sp.Basic], source: str, field: str) -> Block:
    if not isinstance(spec, Mapping):
        return Block.identity(k, parse(spec, names, (source, field)))
    check_keys(spec, ("rows", "rest"), source, field, required=("rows", "rest"))
    rows = spec["rows"]
    if not (isinstance(rows, list) and len(rows) == k and all(isinstance(r, list) and len(r) == k for r in rows)):
        raise ModelError(source, f"{field}.rows", f"expected {k} rows of {k} entries (the directions' basis)")
    parsed = tuple(tuple(parse(v, names, (source, f"{field}.rows[{i}][{j}]")) for j, v in enumerate(r))
                   for i, r in enumerate(rows))
    return Block(parsed, parse(spec["rest"], names, (source, f"{field}.rest")))


def _side(text: str, variables: tuple[str, str], matrices: dict, source: str, field: str, whole: str):
    m = _SIDE.fullmatch(text)
    if not m:
        raise ModelError(source, field, f"{whole!r}: {text.strip()!r} is not a variable or a matrix times one")
    mat, var = m.group(1) or m.group(2), m.group(3)
    if var not in variables:
        raise ModelError(source, field, f"{whole!r}: {var!r} is not one of the variables {', '.join(variables)}")
    if mat is not None and mat not in matrices:
        raise ModelError(source, field, f"{whole!r}: unknown matrix {mat!r} (define it in [attention.matrices])")
    return mat, var


def parse_attention(spec, directions: tuple[str, ...], params: Mapping[str, sp.Basic], source: str) -> Attention:
    check_keys(spec, _ATTN_KEYS, source, "attention", required=("query", "score", "value"))
    k = len(directions)
    query = spec["query"]
    if query not in _QUERIES:
        raise ModelError(source, "attention.query", f"{query!r}: expected \"q\" (a trained unit query) or \"token\" "
                         "(self-attention)")
    qvar, kvar = _QUERIES[query]
    mspec = spec.get("matrices", {})
    if not isinstance(mspec, Mapping):
        raise ModelError(source, "attention.matrices", "expected a table of matrices")
    matrices = {}
    for name, m in mspec.items():
        if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", name) or name in params or name in directions \
                or name in (qvar, kvar):
            raise ModelError(source, f"attention.matrices.{name}", f"{name!r} must be a new name (not a parameter, "
                             "direction or variable)")
        matrices[name] = _matrix(m, k, params, source, f"attention.matrices.{name}")
    score = spec["score"]
    if not isinstance(score, str):
        raise ModelError(source, "attention.score", "expected a string such as \"beta*<q, x>\"")
    brackets = _BRACKET.findall(score)
    if len(brackets) != 1:
        raise ModelError(source, "attention.score", f"{score!r} is not bilinear: it needs exactly one bracket "
                         f"<{qvar}, {kvar}> (found {len(brackets)})")
    br = sp.Dummy("bracket")
    scale_expr = parse(_BRACKET.sub(" __bracket__ ", score), {**params, "__bracket__": br},
                       (source, "attention.score"))
    coeff = linear_coefficients(scale_expr, [br])
    if coeff is None or coeff[0] == 0:
        raise ModelError(source, "attention.score", f"{score!r} is not bilinear (a scalar times one bracket "
                         f"<{qvar}, {kvar}>)")
    parts = brackets[0].split(",")
    if len(parts) != 2:
        raise ModelError(source, "attention.score", f"{score!r}: a bracket has two sides separated by one comma")
    sides = [_side(p, (qvar, kvar), matrices, source, "attention.score", score) for p in parts]
    if {s[1] for s in sides} != {qvar, kvar}:
        raise ModelError(source, "attention.score", f"{score!r} is not bilinear in the query {qvar} and the key "
                         f"{kvar}: the bracket must pair them")
    ident = Block.identity(k)
    P = next(matrices[m] if m else ident for m, v in sides if v == qvar)
    Q = next(matrices[m] if m else ident for m, v in sides if v == kvar)
    value = spec["value"]
    vm = _SIDE.fullmatch(value) if isinstance(value, str) else None
    if vm is None or vm.group(3) != kvar:
        raise ModelError(source, "attention.value", f"{value!r}: expected \"{kvar}\" or \"V {kvar}\" (a matrix times "
                         f"the key {kvar})")
    vname = vm.group(1) or vm.group(2)
    if vname is not None and vname not in matrices:
        raise ModelError(source, "attention.value", f"{value!r}: unknown matrix {vname!r} (define it in "
                         "[attention.matrices])")
    used = {s[0] for s in sides} | {vname}
    for name in matrices:
        if name not in used:
            raise ModelError(source, f"attention.matrices.{name}", "defined but used in neither score nor value")
    return Attention(query, coeff[0], Q.transpose().times(P), matrices[vname] if vname else ident, score, value,
                     tuple(matrices.items()))
