"""The derivations the CLI prints and the LaTeX document typesets, by model name (each registered paper's
``Paper.derive``), with a persistent cache.

The SymPy derivations take 5-20 s. They depend only on the code of the theory and checks packages and on the
SymPy version, so their results are kept in the derivation cache (:mod:`attnverify.cache`: where it is, and the
ownership rule under which its pickles are loaded), keyed by a SHA-256 of the theory sources, the SymPy and Python
versions. Set ``ATTNVERIFY_NO_CACHE=1`` to bypass it. A cache that cannot be read or written is ignored (it only
costs time); the derivation is then recomputed.
"""
from __future__ import annotations

import functools
import hashlib
import shutil
import sys
from importlib import metadata
from pathlib import Path

from attnverify.render import notation
from attnverify.checks.params import InputError

# ----------------------------------------------------------------------------------------------
# the persistent cache
# ----------------------------------------------------------------------------------------------
def cache_root() -> Path | None:
    """The cache directory when caching is on and the directory may be trusted (:mod:`attnverify.cache`), or None."""
    from attnverify import cache

    return cache.trusted_root()


def code_version() -> str:
    """SHA-256 (16 hex digits) of the sources of the theory and checks packages and of every registered paper's
    own package (the derivations and the papers' adapters), of this module and :mod:`attnverify.render.notation` (which
    render the text), and of the SymPy and Python versions."""
    from attnverify.checks.registry import papers

    return _code_version(tuple(p.model for p in papers()))


@functools.lru_cache(maxsize=8)
def _code_version(models: tuple[str, ...]) -> str:
    from attnverify import checks, theory
    from attnverify.checks.registry import source_dirs

    h = hashlib.sha256(f"sympy {metadata.version('sympy')} python {sys.version_info[:2]}".encode())
    roots = [Path(theory.__file__).parent, Path(checks.__file__).parent]
    roots += [Path(d) for d in source_dirs() if not any(Path(d).is_relative_to(r) for r in roots)]
    h.update("|".join(models).encode())
    for path in [*sorted(p for r in roots for p in r.rglob("*.py")), Path(__file__), Path(notation.__file__)]:
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:16]


def _options_key(values: dict) -> str:
    """A stable text key of derivation options (matrices as nested lists)."""
    import numpy as np

    def plain(v):
        return np.asarray(v).tolist() if isinstance(v, np.ndarray) else v
    return hashlib.sha256(repr(sorted((k, plain(v)) for k, v in values.items())).encode()).hexdigest()[:12]


def _cache_name(model: str, values: dict) -> str:
    """The derivation cache's name (attnverify.cache) of ``model`` at ``values``, without its suffix; a model
    file's paper adds its content digest (its derivation depends on the file, not only on the code)."""
    from attnverify.checks.registry import paper

    digest = getattr(paper(model), "digest", "")
    return f"{model}-{_options_key(values)}{'-' + digest[:16] if digest else ''}-{code_version()}"


def derivation(model: str, **options) -> list:
    """The list of :class:`~attnverify.theory.derivation.Step` of the paper whose model is ``model``, at the given
    model options (validated as ``attnverify derive --set`` validates them). Served from the persistent cache
    when warm."""
    return list(_derive(model, options)[1])


def _compute(model: str, values: dict) -> tuple[str, list]:
    """The paper's own derivation at validated options (no cache)."""
    from attnverify.checks.registry import paper

    return paper(model).derive(values)


def _exact_values(p, options: dict) -> dict:
    """The options given as text, read without rounding where they have an exact value (``K=1,0;0,1/3`` gives a
    SymPy matrix with 1/3, ``theta=0.3`` the Rational 3/10), so the derivation prints exact results."""
    out = {}
    for name, raw in options.items():
        prm = p.param(name)
        if isinstance(raw, str) and prm is not None and prm.kind in ("matrix", float, int):
            try:
                out[name] = prm.exact(raw)
            except InputError:
                pass
    return out


def _derive(model: str, options: dict) -> tuple[str, list]:
    from attnverify import cache
    from attnverify.checks.registry import paper

    p = paper(model)
    if p.derive is None:
        raise InputError(f"{model}: the paper gives no derivation")
    values = {**p.options(options), **_exact_values(p, options)}
    name = _cache_name(p.model, values) + ".pickle"
    hit, entry = cache.load(name)
    if hit:
        title, steps = entry
        return title, list(steps)
    try:
        title, steps = _compute(p.model, values)
    except ValueError as exc:            # the paper refuses these options (e.g. an assumption of the model)
        raise InputError(str(exc).splitlines()[0]) from None
    cache.save(name, (title, tuple(steps)))
    return title, list(steps)


# ----------------------------------------------------------------------------------------------
# text rendering
# ----------------------------------------------------------------------------------------------
def terminal_width() -> int:
    return max(60, shutil.get_terminal_size((100, 24)).columns)


def _wrap(text: str, width: int, indent: str) -> list[str]:
    import textwrap

    return textwrap.wrap(text, width=width, initial_indent=indent, subsequent_indent=indent + "  ") or [indent]


def _render_version() -> str:
    """SHA-256 (12 hex digits) of the modules that typeset a derivation as text (the text cache's key)."""
    from attnverify.render import breaking, exprs, kinds, text_math

    h = hashlib.sha256()
    for mod in (breaking, exprs, kinds, text_math):
        h.update(Path(mod.__file__).read_bytes())
    return h.hexdigest()[:12]


def _render_steps(title: str, steps: list, *, latex: bool, width: int) -> str:
    """Each step: its number, the mark of its kind (:mod:`attnverify.render.kinds`) and its statement; the result
    (Unicode through the notation module, broken to ``width`` with named sub-expressions as in the LaTeX
    document, or LaTeX); why it holds."""
    import sympy as sp

    from attnverify.render import exprs, kinds
    from attnverify.render.text_math import display_lines

    lines = [*_wrap(title, width, ""), ""]
    for i, step in enumerate(steps, 1):
        lines += _wrap(f"{i}. {kinds.text(step)} {notation.unicode(step.statement)}", width, "")
        if latex:
            lines.append("   " + step.latex())
        elif isinstance(step.result, sp.Eq):
            lines += ["   " + row for row in display_lines(exprs.latex(step.result.lhs), step.result.rhs, width - 3)]
        else:
            lines += ["   " + row for row in display_lines(step.label, step.result, width - 3)]
        lines += _wrap(f"because: {notation.unicode(step.reason)}", width, "   ")
        lines.append("")
    return "\n".join(lines)


def render(model: str, latex: bool = False, *, width: int | None = None, options: dict | None = None) -> str:
    """The derivation of ``model`` at ``options`` as text: each step's statement, its SymPy result (Unicode pretty
    print wrapped to ``width`` columns, or LaTeX), and why it holds. The text itself is cached too (keyed by the
    options), so a warm call imports no SymPy."""
    width = width or terminal_width()
    options = dict(options or {})
    from attnverify import cache
    from attnverify.checks.registry import paper

    p = paper(model)
    values = {**p.options(options), **_exact_values(p, options)}
    key = _options_key({**values, "__width__": width, "__latex__": bool(latex)})
    text_name = f"{_cache_name(p.model, values)}-{key}-{_render_version()}.txt"
    cached = cache.read_text(text_name)
    if cached is not None:
        return cached
    title, steps = _derive(p.model, options)
    text = _render_steps(title, steps, latex=latex, width=width)
    cache.write_text(text_name, text)
    return text
