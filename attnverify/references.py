r"""The papers' bibliographic entries: BibTeX for ``attnverify cite`` and the bibliography of the LaTeX report.

Each paper keeps its entry as a BibTeX file beside its plugin: ``reference.bib`` in the package of its adapter
module (``checks/<model>/reference.bib``; a paper whose :class:`~attnverify.checks.plugin.Paper` names a file in a
``bibliography`` field uses that one). A paper without one (the example plugin) is cited by its ``citation``
text. The LaTeX report needs no BibTeX run: :func:`thebibliography` writes the ``thebibliography`` environment
from the entries, and the ledger's rows ``\cite`` them by key.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Entry", "parse", "bib_path", "entries", "bibtex", "cite_key", "bibitem", "thebibliography"]

BIB_NAME = "reference.bib"


@dataclass(frozen=True)
class Entry:
    """One BibTeX entry: ``@type{key, name = {value}, ...}``; ``fields`` keep their BibTeX (LaTeX) text."""

    type: str
    key: str
    fields: dict = field(default_factory=dict)
    source: str = ""


def _braced(text: str, i: int) -> tuple[str, int]:
    """The content of the brace group opening at ``text[i]`` and the index after it."""
    depth, j = 0, i
    while j < len(text):
        depth += text[j] == "{"
        depth -= text[j] == "}"
        if depth == 0:
            return text[i + 1:j], j + 1
        j += 1
    raise ValueError("unbalanced braces in a BibTeX entry")


def parse(text: str) -> list[Entry]:
    """The entries of a BibTeX text (``%`` comments and ``@comment`` ignored; values in braces, quotes or bare
    numbers). A malformed entry raises ValueError naming it."""
    out = []
    body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("%"))
    for m in re.finditer(r"@(\w+)\s*\{", body):
        kind = m.group(1).lower()
        if kind in ("comment", "preamble", "string"):
            continue
        inner, _ = _braced(body, m.end() - 1)
        key, _, rest = inner.partition(",")
        if not key.strip() or not re.fullmatch(r"[\w:.\-/]+", key.strip()):
            raise ValueError(f"BibTeX entry @{kind}: bad key {key.strip()!r}")
        fields, i = {}, 0
        while True:
            fm = re.compile(r"\s*,?\s*(\w+)\s*=\s*").match(rest, i)
            if fm is None:
                break
            name, i = fm.group(1).lower(), fm.end()
            if rest[i:i + 1] == "{":
                value, i = _braced(rest, i)
            elif rest[i:i + 1] == '"':
                end = rest.index('"', i + 1)
                value, i = rest[i + 1:end], end + 1
            else:
                vm = re.compile(r"[\w.\-]+").match(rest, i)
                if vm is None:
                    raise ValueError(f"BibTeX entry {key.strip()}: cannot read the value of {name}")
                value, i = vm.group(0), vm.end()
            fields[name] = " ".join(value.split())
        out.append(Entry(kind, key.strip(), fields, body[m.start():m.end() + len(inner) + 1]))
    return out


def bib_path(paper) -> Path | None:
    """The BibTeX file of ``paper``: ``reference.bib`` in its package (the plugin contract,
    attnverify.checks.paper); None when there is none."""
    from importlib import resources

    try:
        resource = resources.files(paper.package).joinpath(BIB_NAME)
    except ModuleNotFoundError:
        return None
    return Path(str(resource)) if resource.is_file() else None


def entries(paper) -> list[Entry]:
    """The BibTeX entries of ``paper`` ([] when it has no file)."""
    path = bib_path(paper)
    if path is None:
        return []
    try:
        return parse(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ValueError(f"{path.name} of {paper.model}: {exc}") from None


def cite_key(paper) -> str | None:
    """The key the LaTeX report cites ``paper`` by: its first entry's, or ``paper:<model>`` for a paper cited by
    its ``citation`` text alone."""
    found = entries(paper)
    return found[0].key if found else f"paper:{paper.model}"


def bibtex(paper) -> str:
    """``paper``'s BibTeX as written in its file (without comments), or a ``@misc`` built from its title and
    citation text when it has no file."""
    found = entries(paper)
    if found:
        return "\n\n".join(e.source.strip() for e in found) + "\n"
    title, note = paper.title.replace("{", "").replace("}", ""), paper.citation.replace("{", "").replace("}", "")
    return f"@misc{{{cite_key(paper)},\n  title = {{{title}}},\n  note  = {{{note}}}\n}}\n"


def _authors(text: str) -> str:
    """BibTeX authors (``Last, First and ...``) as ``First Last, First Last and First Last``."""
    names = [a.strip() for a in re.split(r"\s+and\s+", text) if a.strip()]
    shown = []
    for n in names:
        last, comma, first = n.partition(",")
        shown.append(f"{first.strip()} {last.strip()}" if comma else n)
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]


def bibitem(entry: Entry) -> str:
    r"""A ``\bibitem`` for ``entry``: authors, title (emphasised), venue, year, arXiv identifier."""
    f = entry.fields
    parts = [_authors(f["author"])] if f.get("author") else []
    if f.get("title"):
        parts.append(rf"\emph{{{f['title']}}}")
    venue = f.get("booktitle") or f.get("journal")
    if venue:
        parts.append(venue)
    if f.get("year"):
        parts.append(f["year"])
    if f.get("eprint") and f.get("archiveprefix", "").lower() == "arxiv":
        parts.append(rf"arXiv:{f['eprint']}")
    elif f.get("note"):
        parts.append(f["note"])
    return rf"\bibitem{{{entry.key}}} " + ", ".join(parts) + "."


def thebibliography(papers) -> str:
    r"""The ``thebibliography`` environment of ``papers`` (each paper's entries, or its citation text)."""
    from attnverify.render import notation

    items = []
    for p in papers:
        found = entries(p)
        if found:
            items += [bibitem(e) for e in found]
        else:
            items.append(rf"\bibitem{{{cite_key(p)}}} \emph{{{notation.escape(p.title)}}}, "
                         f"{notation.escape(p.citation)}.")
    return "\n".join([r"\begin{thebibliography}{9}", *items, r"\end{thebibliography}"])
