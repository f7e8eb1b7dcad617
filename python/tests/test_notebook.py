"""The example notebook runs from top to bottom (nbclient), so it cannot rot."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbclient import NotebookClient

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_example_notebook_runs_and_plots():
    path = EXAMPLES / "seed000-fig07.ipynb"
    nb = nbformat.read(path, as_version=4)
    NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(EXAMPLES)}}
    ).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"]
    # The plot cell drew a PNG.
    assert any("image/png" in o.get("data", {}) for o in outputs)
    # exp.run showed tqdm's Jupyter widget, and the runner's counter took it
    # to every run of the reduced sweep (1210).
    run_cell = next(c for c in nb.cells if c.cell_type == "code" and "exp.run(" in c.source)
    assert any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in run_cell.outputs)
    state = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    bars = [m["state"] for m in state.values() if m["model_name"] in ("FloatProgressModel", "IntProgressModel")]
    assert any(b.get("value") == b.get("max") == 1210 for b in bars), bars
