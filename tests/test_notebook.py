"""The example notebook runs top to bottom (nbclient, a real kernel): derive J, display, lambdify, run two checks,
show the report and a plot."""
from __future__ import annotations

from pathlib import Path

import pytest

NOTEBOOK = Path(__file__).resolve().parents[1] / "examples" / "workbench.ipynb"


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
