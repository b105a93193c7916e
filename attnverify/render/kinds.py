r"""The mark of a derivation step's kind (:data:`attnverify.theory.derivation.STEP_KINDS`), one per rendering, so
that an approximation never reads like an identity.

==============  =====  ==========================================================================================
kind            mark   meaning
==============  =====  ==========================================================================================
identity        ``=``  exact: SymPy computed or proved it from the model or the steps before
limit           ``→``  exact only in the limit the step takes (a law of large numbers, L → ∞, β → ∞, τ → ∞)
approximation   ``≈``  a truncated expansion (the delta method, a Laplace expansion); the mark names what it
                       neglects, its ``order`` (``O(1/L²)``)
assumption      ``⊨``  part of the model's statement, written down, not derived
statement       ``§``  a paper's statement reproduced as stated, not derived (what the checks compare against)
==============  =====  ==========================================================================================
"""
from __future__ import annotations

from attnverify.render import notation

__all__ = ["MARKS", "WORDS", "kind_of", "text", "latex", "plain"]

#: kind -> (Unicode mark, its LaTeX)
MARKS = {"identity": ("=", "="), "limit": ("→", r"\to"), "approximation": ("≈", r"\approx"),
         "assumption": ("⊨", r"\models"), "statement": ("§", r"\S{}")}
#: kind -> the word shown with the mark
WORDS = {"identity": "identity", "limit": "limit", "approximation": "approximation", "assumption": "assumption",
         "statement": "the paper's statement"}


def kind_of(step) -> tuple[str, str]:
    """``(kind, order)`` of a step (steps pickled before the field existed count as identities)."""
    return getattr(step, "kind", "identity") or "identity", getattr(step, "order", "") or ""


def plain(step) -> str:
    """The kind in words, for tools (JSON): ``approximation, neglects O(1/L^2)``."""
    kind, order = kind_of(step)
    return f"{WORDS[kind]}, neglects {order}" if order else WORDS[kind]


def text(step) -> str:
    """The terminal's mark: ``[≈ approximation, neglects O(1/L²)]``."""
    kind, order = kind_of(step)
    tail = f", neglects {notation.tex_to_unicode(order)}" if order else ""
    return f"[{MARKS[kind][0]} {WORDS[kind]}{tail}]"


def latex(step) -> str:
    r"""The LaTeX mark, in a small sans-serif bracket: ``[$\approx$ approximation, neglects $O(1/L^2)$]``."""
    kind, order = kind_of(step)
    mark = MARKS[kind][1]
    mark = mark if kind == "statement" else f"${mark}$"
    tail = f", neglects ${order}$" if order else ""
    return rf"{{\small\textsf{{[{mark} {notation.escape(WORDS[kind])}{tail}]}}}}"
