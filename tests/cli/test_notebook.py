"""The example notebook runs top to bottom (nbclient, a real kernel): derive J, display, lambdify, run two checks,
show the report and a plot. It is stored with its outputs (a reader on GitHub sees them), and its plot cell shows
the figure once."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

NOTEBOOK = Path(__file__).resolve().parents[2] / "examples" / "workbench.ipynb"


def _images_of_plot_cell(cells) -> int:
    [cell] = [c for c in cells if c["cell_type"] == "code" and ".plot(" in "".join(c["source"])]
    return sum("image/png" in o.get("data", {}) for o in cell["outputs"])


def test_example_notebook_is_stored_with_its_outputs():
    cells = json.loads(NOTEBOOK.read_text())["cells"]
    code = [c for c in cells if c["cell_type"] == "code"]
    assert all(c["execution_count"] for c in code)                          # every cell was run, in order
    assert [c["execution_count"] for c in code] == list(range(1, len(code) + 1))
    assert all(c["outputs"] for c in code)
    assert not [o for c in code for o in c["outputs"] if o["output_type"] == "error"]
    assert _images_of_plot_cell(cells) == 1


def test_example_notebook_runs(tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    kinds = {k for o in outputs for k in o.get("data", {})}
    assert {"text/latex", "text/html", "text/markdown", "image/png"} <= kinds, kinds
    texts = " ".join(o.get("data", {}).get("text/plain", "") for o in outputs)
    assert "<Report profile=quick seed=0: 2 checks (2 pass" in texts
    assert _images_of_plot_cell(nb.cells) == 1                               # shown once, not twice
