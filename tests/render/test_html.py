"""report.html: self-contained (no network, no external file), MathML from SymPy, every claim with its figure, and
a page that headless Chromium renders: not blank, the ledger table present, filters that work, no console error.

Chromium is Debian's ``chromium`` (CI installs it in .ci/run); without it the browser tests skip, saying so."""
from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from render_synthetic import synthetic_derivations, synthetic_report

from attnverify.render.report import write_report

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser") if shutil.which(n)), None)
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed (Debian: apt-get "
                                    "install chromium; .ci/run installs it)")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
         "--enable-logging=stderr", "--v=0"]


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("report")
    write_report(synthetic_report(), out, derivations=synthetic_derivations())
    return out / "report.html"


def chromium(tmp: Path, url: str, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={tmp / 'profile'}", *extra, url],
                          capture_output=True, text=True, timeout=120)


def console_messages(stderr: str) -> list[str]:
    """The page's console output (Chromium logs it as ``...:CONSOLE(...)`` lines; an uncaught error reads
    ``Uncaught ...``)."""
    return [line for line in stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line]


class DOM(HTMLParser):
    """The elements of a dumped DOM: tag counts, the ledger's rows with their attributes, text by id."""

    def __init__(self):
        super().__init__()
        self.count: dict[str, int] = {}
        self.rows: list[dict] = []
        self.in_ledger = False
        self.by_id: dict[str, str] = {}
        self._capture: str | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.count[tag] = self.count.get(tag, 0) + 1
        if tag == "table" and a.get("id") == "ledger":
            self.in_ledger = True
        if tag == "tr" and self.in_ledger and "claim" in (a.get("class") or "").split():
            self.rows.append(a)
        if a.get("id") == "shown":
            self._capture = "shown"

    def handle_endtag(self, tag):
        if tag == "table":
            self.in_ledger = False
        if tag == "span":
            self._capture = None

    def handle_data(self, data):
        if self._capture:
            self.by_id[self._capture] = self.by_id.get(self._capture, "") + data


def parse(text: str) -> DOM:
    dom = DOM()
    dom.feed(text)
    return dom


# ----------------------------------------------------------------------------------------------------------------
def test_the_page_is_self_contained_with_mathml_and_every_figure(page):
    text = page.read_text(encoding="utf-8")
    # no network: the only URL is the MathML namespace; images are data URIs; no linked file, script or font
    urls = set(re.findall(r"https?://[^\s\"'<>)]+", text))
    assert urls == {"http://www.w3.org/1998/Math/MathML"}
    assert not re.search(r"<link\b|<script[^>]*\bsrc=|@import|url\(", text)
    imgs = re.findall(r'<img [^>]*src="([^"]+)"', text)
    assert imgs and all(src.startswith("data:image/png;base64,") for src in imgs)
    assert len(imgs) == 2 + 3                         # two check plots, one figure per claim
    dom = parse(text)
    assert dom.count.get("math", 0) > 10 and dom.count.get("msubsup", 0) >= 1
    assert [r["data-verdict"] for r in dom.rows] == ["not_refuted", "refuted", "holds"]
    # each kind of derivation step carries its mark; the approximation its order
    for kind in ("identity", "limit", "approximation", "assumption", "statement"):
        assert f'class="mark mark-{kind}"' in text
    # the order, LaTeX source, is MathML (latex2mathml): L squared a superscript, not the text "O(1/L²)"
    assert ('<span class="order"><math xmlns="http://www.w3.org/1998/Math/MathML"><mrow><mi>O</mi>'
            '<mo stretchy="false">(</mo><mn>1</mn><mo>/</mo><msup><mi>L</mi><mn>2</mn></msup>') in text


def test_the_json_beside_it_keeps_the_typed_reason(page):
    doc = json.loads((page.parent / "report.json").read_text(encoding="utf-8"))
    row = doc["claims"][0]
    assert len(row["reason_parts"]["items"]) == 3 and "β" in row["reason_text"]


@needs_chromium
def test_headless_chromium_renders_the_page(page, tmp_path):
    import numpy as np
    from PIL import Image

    shot = tmp_path / "shot.png"
    run = chromium(tmp_path, page.as_uri(), "--window-size=1200,1600", f"--screenshot={shot}")
    assert run.returncode == 0 and shot.is_file(), run.stderr[-2000:]
    assert console_messages(run.stderr) == []
    pixels = np.asarray(Image.open(io.BytesIO(shot.read_bytes())).convert("L"), dtype=float)
    dark, spread = float(np.mean(pixels < 200)), float(np.std(pixels))
    assert dark > 0.01 and spread > 10, (dark, spread)          # text, tables and figures, not a blank page
    dom = chromium(tmp_path, page.as_uri(), "--dump-dom")
    assert console_messages(dom.stderr) == []
    parsed = parse(dom.stdout)
    assert len(parsed.rows) == 3 and parsed.by_id.get("shown") == "3"
    assert parsed.count.get("math", 0) > 10


@needs_chromium
def test_the_ledger_filters_by_verdict_and_paper(page, tmp_path):
    dom = parse(chromium(tmp_path, page.as_uri() + "?verdict=refuted", "--dump-dom").stdout)
    assert [("hidden" in r) for r in dom.rows] == [True, False, True] and dom.by_id["shown"] == "1"
    dom = parse(chromium(tmp_path, page.as_uri() + "?paper=X", "--dump-dom").stdout)
    assert [("hidden" in r) for r in dom.rows] == [False, False, True] and dom.by_id["shown"] == "2"


@needs_chromium
def test_a_console_error_would_be_seen(tmp_path):
    """The control: the test above would fail on a page whose script breaks."""
    bad = tmp_path / "bad.html"
    bad.write_text("<!DOCTYPE html><html><body><p>x</p><script>undefinedFunction();</script></body></html>")
    run = chromium(tmp_path, bad.as_uri(), "--dump-dom")
    assert any("Uncaught" in m for m in console_messages(run.stderr))
