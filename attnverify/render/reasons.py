r"""The renderers of a verdict's reason (:class:`attnverify.checks.reason.Reason`): one object, four outputs.

- :func:`terminal` -- Unicode: the mathematics through SymPy's LaTeX and the notation module
  (:func:`attnverify.render.notation.tex_to_unicode`: the same symbols as the LaTeX), numbers as ``0.7462 ± 0.0039``
  and ``6.33×10⁻⁷``; the items as ``  - `` lines under the lead. :func:`plain` is the same on one line (items joined
  by "; "), the text a tool reads.
- :func:`markdown` -- the mathematics as ``$…$`` (``sympy.latex``), numbers in Unicode; the items as a list, or
  (``inline``: a table cell) after ``<br>`` marks.
- :func:`latex` -- typeset mathematics; numbers as ``$0.746 \pm 0.004$`` and ``$1.23\times10^{-4}$`` (the siunitx
  layout, without the siunitx package); the words escaped (:func:`attnverify.render.notation.latex`); the items as
  an ``itemize``.
- :func:`html` -- MathML (SymPy's presentation printer, inline ``<math>`` elements; mathematics given as LaTeX
  source through latex2mathml) for the mathematics and the numbers; the items as a ``<ul>``.

Every renderer accepts a plain ``str`` (one Text part) and the dict of ``Reason.to_dict``. The digits of each
number are those of :func:`attnverify.checks.reason.digits_for`: two different numbers of one reason never print
alike, and a degenerate bracket is printed as the point it is.
"""
from __future__ import annotations

import re

import html as _html
from typing import Any

from attnverify.checks.reason import (CheckRef, Math, Number, Reason, Text, as_reason, decimal, digits_for,
                                      se_decimal)
from attnverify.render import notation

__all__ = ["terminal", "plain", "markdown", "latex", "html", "mathml", "mathml_inner", "latex_mathml", "math_unicode",
           "number_text", "latex_number"]

_SUP = str.maketrans("0123456789-+", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺")
_MATHML_NS = "http://www.w3.org/1998/Math/MathML"


# ----------------------------------------------------------------------------------------------------------------
# walking a reason: each part with the digits of its numbers
# ----------------------------------------------------------------------------------------------------------------
def _walk(r: Reason):
    """(lead, items) with every part paired with the digits of its printed numbers."""
    digits = iter(digits_for(r))

    def seq(parts):
        return [(p, [next(digits) for _ in (p.values() if isinstance(p, Number) else [])]) for p in parts]

    lead = seq(r.lead)
    return lead, [seq(it) for it in r.items]


def _reason(value: Any) -> Reason:
    return as_reason(value) or Reason()


# ----------------------------------------------------------------------------------------------------------------
# numbers
# ----------------------------------------------------------------------------------------------------------------
def _layout(n: Number, digits: list[int]) -> tuple[Any, Any, Any]:
    """(value, se, bracket) of a number, each a (mantissa, exponent) pair or None; the bracket a pair of them, or a
    single one (a point)."""
    ends = iter(digits[1:] if n.value is not None else digits)
    value = None if n.value is None else decimal(n.value, digits[0])
    se = se_decimal(n.value, n.se) if n.se is not None and n.value is not None else None
    if n.interval is None:
        return value, se, None
    if n.is_point:
        return value, se, decimal(n.interval[0], next(ends))
    return value, se, tuple(decimal(x, next(ends)) for x in n.interval)


#: how each output writes the pieces of a number: plus-minus, space, opening bracket, comma, closing bracket
_UNICODE = (" ± ", " ", "[", ", ", "]")
_LATEX = (r" \pm ", r"\ ", "[", ", ", "]")
_MATHML = ("<mo>±</mo>", '<mspace width="0.3em"></mspace>', "<mo>[</mo>", "<mo>,</mo>", "<mo>]</mo>")


def _assemble(n: Number, digits: list[int], one, style: tuple, unit) -> str:
    """A number from its pieces: ``one`` typesets a (mantissa, exponent) pair, ``style`` the separators."""
    pm, space, lb, comma, rb = style
    value, se, br = _layout(n, digits)
    out = "" if value is None else one(value)
    if se is not None:
        out += pm + one(se)
    if br is not None and isinstance(br[0], str):              # a point: printed once
        point = one(br)
        out = point if not out else (out if n.value == n.interval[0] else f"{out}{space}{lb}{point}{rb}")
    elif br is not None:
        pair = f"{lb}{one(br[0])}{comma}{one(br[1])}{rb}"
        out = f"{out}{space}{pair}" if out else pair
    return out + (unit(n.unit) if n.unit else "")


def _unicode_one(d: tuple[str, int | None]) -> str:
    mant, exp = d
    mant = {"inf": "∞", "-inf": "-∞", "nan": "n/a"}.get(mant, mant)
    return mant if exp is None else f"{mant}×10{str(exp).translate(_SUP)}"


def number_text(n: Number, digits: list[int] | None = None) -> str:
    """A number in Unicode (``0.7462 ± 0.0039``, ``6.33×10⁻⁷``, ``[1.136, 1.538]``) at ``digits`` (default: its
    own, as :func:`attnverify.checks.reason.digits_for` gives them for the number alone)."""
    digits = digits if digits is not None else digits_for(Reason((n,)))
    return _assemble(n, digits, _unicode_one, _UNICODE, lambda u: f" {u}")


def _latex_one(d: tuple[str, int | None]) -> str:
    mant, exp = d
    mant = {"inf": r"\infty", "-inf": r"-\infty", "nan": r"\text{n/a}"}.get(mant, mant)
    return mant if exp is None else rf"{mant}\times10^{{{exp}}}"


def latex_number(n: Number, digits: list[int]) -> str:
    """A Number as inline LaTeX (``$0.746 \\pm 0.004$``, ``$1.23\\times10^{-4}$``) at the digits of
    :func:`attnverify.checks.reason.digits_for`."""
    return "$" + _assemble(n, digits, _latex_one, _LATEX, lambda u: rf"\,\mathrm{{{notation.escape(u)}}}") + "$"


def _mathml_one(d: tuple[str, int | None]) -> str:
    mant, exp = d
    if mant in ("inf", "-inf"):
        return ("<mo>−</mo>" if mant.startswith("-") else "") + "<mi>∞</mi>"
    if mant == "nan":
        return "<mtext>n/a</mtext>"
    sign = "<mo>−</mo>" if mant.startswith("-") else ""
    body = f"{sign}<mn>{mant.lstrip('-')}</mn>"
    if exp is None:
        return body
    power = f"<mrow><mo>−</mo><mn>{-exp}</mn></mrow>" if exp < 0 else f"<mn>{exp}</mn>"
    return f"{body}<mo>×</mo><msup><mn>10</mn>{power}</msup>"


def _html_number(n: Number, digits: list[int]) -> str:
    inner = _assemble(n, digits, _mathml_one, _MATHML,
                      lambda u: f'<mspace width="0.2em"></mspace><mi mathvariant="normal">{_html.escape(u)}</mi>')
    return f'<math xmlns="{_MATHML_NS}"><mrow>{inner}</mrow></math>'


# ----------------------------------------------------------------------------------------------------------------
# mathematics
# ----------------------------------------------------------------------------------------------------------------
def _latex_source(m: Math) -> str:
    if isinstance(m.expr, str):
        return m.expr
    import sympy as sp

    return sp.latex(m.expr)


def math_unicode(expr: Any) -> str:
    """A SymPy expression (or LaTeX source) in Unicode, through its LaTeX and the notation module; a matrix as
    rows of entries (``[1, 2; 3, 4]``), a column vector as ``(1, 2, 3)ᵀ``."""
    if isinstance(expr, str):
        return notation.tex_to_unicode(expr)
    import sympy as sp

    if isinstance(expr, sp.MatrixBase):
        rows = [[math_unicode(x) for x in expr.row(i)] for i in range(expr.rows)]
        if expr.cols == 1:
            return "(" + ", ".join(r[0] for r in rows) + ")ᵀ"
        return "[" + "; ".join(", ".join(r) for r in rows) + "]"
    return _UNARY_MINUS.sub(r"\1-", notation.tex_to_unicode(sp.latex(expr)))


#: a unary minus (at the start, after an opening bracket, a comma or a relation), which SymPy's LaTeX spaces as a
#: binary one ("- \xi"): written against its operand in Unicode ("-ξ")
_UNARY_MINUS = re.compile(r"(^|[(\[{,=<>≤≥]\s?)- (?=\S)")
#: the characters of a sign SymPy cannot spell, given as LaTeX (\leq, \pm, \sim, \to, >): an operator in MathML
_OPERATORS = frozenset("<>=≤≥≠≈∼≃≡∝≪≫≲≳±∓×·∘→←↦⇒⇔∈∉⊂⊆⊥∥|")
#: an operator SymPy's MathML printer writes unescaped (its relations' "<" and ">")
_RAW_OPERATOR = re.compile(r"<mo>(<|>|&(?!#?\w+;))</mo>")


def mathml_inner(expr: Any) -> str:
    """The MathML markup of a SymPy expression, without the ``<math>`` element. LaTeX source given as a ``str``
    (a sign SymPy cannot spell, \\leq, or notation it cannot spell, ``\\max |z|``) is converted by latex2mathml
    (:func:`latex_mathml`); what latex2mathml cannot convert is written as its Unicode through the notation module:
    an ``<mo>`` when it is a sign, else ``<mtext>``."""
    if isinstance(expr, str):
        converted = latex_mathml(expr)
        if converted is not None:
            return converted
        text = notation.tex_to_unicode(expr).strip()
        tag = "mo" if text and all(ch in _OPERATORS for ch in text) else "mtext"
        return f"<{tag}>{_html.escape(text)}</{tag}>"
    return _RAW_OPERATOR.sub(lambda m: f"<mo>{_html.escape(m.group(1))}</mo>", _printer().doprint(expr))


#: a numeric character reference, which latex2mathml writes into its elements' text
_CHAR_REF = re.compile(r"&#x([0-9A-Fa-f]+);")
#: signs that latex2mathml writes as an identifier (\pm, \sim, \perp, \langle...): operators in MathML; its \sim
#: is "~", written as the tilde operator
_MI_OPERATORS = _OPERATORS | frozenset("∼⟂∣⟨⟩")
_MI_AS_MO = {"~": "∼"}


def latex_mathml(source: str) -> str | None:
    """LaTeX source as MathML markup without the ``<math>`` element (latex2mathml), well-formed XML with the
    characters themselves (no character references); None where latex2mathml cannot convert it (an error, or a
    command it does not know and leaves as raw LaTeX)."""
    from xml.etree.ElementTree import tostring

    from latex2mathml.converter import convert_to_element

    try:
        math = convert_to_element(source)
    except Exception:  # noqa: BLE001 -- the library raises its own errors (and IndexError...) on what it cannot read
        return None
    for el in math.iter():
        for name in ("text", "tail"):
            value = getattr(el, name)
            if value and "\\" in value:                  # a command it does not know, left as raw LaTeX
                return None
            if value:
                setattr(el, name, _CHAR_REF.sub(lambda m: chr(int(m.group(1), 16)), value))
        if el.tag == "mi" and el.text is not None and len(el) == 0:
            text = _MI_AS_MO.get(el.text, el.text)
            if len(text) == 1 and text in _MI_OPERATORS:
                el.tag, el.text = "mo", text
    for el in list(math.iter()):
        _merge_upright_letters(el)
    return "".join(tostring(child, encoding="unicode", short_empty_elements=False) for child in math)


def _merge_upright_letters(el) -> None:
    """Adjacent upright identifiers (latex2mathml writes ``\\mathrm{closed}`` letter by letter) as one ``<mi>``."""
    children = list(el)
    for a, b in zip(children, children[1:]):
        if (a.tag == b.tag == "mi" and a.get("mathvariant") == b.get("mathvariant") == "normal"
                and len(a) == len(b) == 0 and not a.tail and a.text and b.text):
            b.text = a.text + b.text
            el.remove(a)


def mathml(expr: Any, *, display: bool = False) -> str:
    """A SymPy expression as a ``<math>`` element (SymPy's presentation MathML; a symbol named in LaTeX with braces
    through the notation module's Unicode), or LaTeX source given as a ``str`` (:func:`mathml_inner`)."""
    attrs = f' xmlns="{_MATHML_NS}"' + (' display="block"' if display else "")
    return f"<math{attrs}>{mathml_inner(expr)}</math>"


def _printer():
    from sympy.printing.mathml import MathMLPresentationPrinter

    global _PRINTER
    if _PRINTER is None:
        class Printer(MathMLPresentationPrinter):
            def _print_Symbol(self, sym, style="plain"):
                if "{" in sym.name or "\\" in sym.name:
                    converted = latex_mathml(sym.name)       # a name in LaTeX (\Pi_{\#}\mu_{0}): its MathML
                    if converted is not None:
                        from xml.dom.minidom import parseString

                        row = parseString(f"<mrow>{converted}</mrow>").documentElement
                        return self.dom.importNode(row, True)
                    mi = self.dom.createElement("mi")
                    mi.appendChild(self.dom.createTextNode(notation.tex_to_unicode(sym.name)))
                    return mi
                return super()._print_Symbol(sym, style)

            def _print_Function(self, e):
                from sympy import Symbol
                from sympy.core.function import AppliedUndef

                if not isinstance(e, AppliedUndef):
                    return super()._print_Function(e)
                mrow = self.dom.createElement("mrow")
                mrow.appendChild(self._print(Symbol(e.func.__name__)))
                args = self.dom.createElement("mrow")
                for i, text in enumerate(["(", *[None] * len(e.args), ")"]):
                    if text is None:
                        if i > 1:
                            sep = self.dom.createElement("mo")
                            sep.appendChild(self.dom.createTextNode(","))
                            args.appendChild(sep)
                        args.appendChild(self._print(e.args[i - 1]))
                    else:
                        mo = self.dom.createElement("mo")
                        mo.appendChild(self.dom.createTextNode(text))
                        args.appendChild(mo)
                mrow.appendChild(args)
                return mrow

        _PRINTER = Printer
    return _PRINTER()


_PRINTER = None


# ----------------------------------------------------------------------------------------------------------------
# the four outputs
# ----------------------------------------------------------------------------------------------------------------
def _unicode_part(p: Any, digits: list[int]) -> str:
    if isinstance(p, Text):
        return notation.unicode(p.text)
    if isinstance(p, Math):
        return math_unicode(p.expr)
    if isinstance(p, CheckRef):
        return p.check_id
    return number_text(p, digits)


def _join(seq, one) -> str:
    return "".join(one(p, d) for p, d in seq)


def plain(value: Any) -> str:
    """The reason on one line, in Unicode (items joined by "; "): the text a tool reads."""
    lead, items = _walk(_reason(value))
    head = _join(lead, _unicode_part)
    if not items:
        return head
    return (head.rstrip() + " " if head.strip() else "") + "; ".join(_join(it, _unicode_part) for it in items)


def terminal(value: Any) -> str:
    """The reason for the terminal: the lead, then one ``  - item`` line per item (lines are not wrapped here)."""
    lead, items = _walk(_reason(value))
    return "\n".join([_join(lead, _unicode_part), *("  - " + _join(it, _unicode_part) for it in items)]).strip("\n")


def _markdown_part(p: Any, digits: list[int]) -> str:
    if isinstance(p, Text):
        return "".join(f"${piece}$" if is_math else piece for is_math, piece in notation.split(p.text))
    if isinstance(p, Math):
        return f"${_latex_source(p)}$"
    if isinstance(p, CheckRef):
        return f"`{p.check_id}`"
    return number_text(p, digits)


def markdown(value: Any, *, inline: bool = False) -> str:
    """The reason as Markdown (mathematics as ``$…$``): the lead and a list of items; ``inline`` (a table cell):
    one line, each item after ``<br>- ``."""
    lead, items = _walk(_reason(value))
    head = _join(lead, _markdown_part)
    rows = [_join(it, _markdown_part) for it in items]
    if inline:
        text = head + "".join(f"<br>- {row}" for row in rows)
        return text.replace("\n", " ")
    return "\n".join([head, *(["", *(f"- {row}" for row in rows)] if rows else [])]).strip("\n")


def _latex_part(p: Any, digits: list[int]) -> str:
    if isinstance(p, Text):
        return notation.latex(p.text)
    if isinstance(p, Math):
        return f"${_latex_source(p)}$"
    if isinstance(p, CheckRef):
        return rf"\texttt{{{notation.escape(p.check_id)}}}"
    return latex_number(p, digits)


def latex(value: Any) -> str:
    """The reason as LaTeX (no package beyond amsmath): the lead, then the items as a compact ``itemize``."""
    lead, items = _walk(_reason(value))
    head = _join(lead, _latex_part)
    if not items:
        return head
    body = "\n".join(r"\item " + _join(it, _latex_part) for it in items)
    return (head + "\n" + r"\begin{itemize}\setlength{\itemsep}{0pt}\setlength{\parskip}{0pt}" + "\n" + body
            + "\n" + r"\end{itemize}")


def _html_text(text: str) -> str:
    """Words of the typesetting convention as HTML: their mathematics (between dollars, LaTeX) as MathML."""
    out = []
    for is_math, piece in notation.split(text):
        if is_math:
            out.append(mathml(piece))
        else:
            out.append(_html.escape(piece))
    return "".join(out)


def _html_part(p: Any, digits: list[int]) -> str:
    if isinstance(p, Text):
        return _html_text(p.text)
    if isinstance(p, Math):
        return mathml(p.expr)
    if isinstance(p, CheckRef):
        anchor = "check-" + "".join(ch if ch.isalnum() else "-" for ch in p.check_id)
        return f'<a class="check" href="#{anchor}"><code>{_html.escape(p.check_id)}</code></a>'
    return _html_number(p, digits)


def html(value: Any) -> str:
    """The reason as HTML: MathML for mathematics and numbers, the items as a ``<ul>``."""
    lead, items = _walk(_reason(value))
    head = f'<span class="lead">{_join(lead, _html_part)}</span>'
    if not items:
        return head
    return head + '<ul class="items">' + "".join(f"<li>{_join(it, _html_part)}</li>" for it in items) + "</ul>"
