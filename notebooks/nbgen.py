"""Builder shared by the notebook generators (notebooks/make_*_notebook.py).

Cells are collected with ``md`` and ``code``; ``write`` stores the notebook and, by default, executes
it with a Jupyter kernel (nbclient) and stores the outputs, so that a reader on GitHub and the docs
site (which renders the notebooks as stored, without executing them) see every figure inline. The
kernel saves the figure files into ``$FLTHEORY_FIGURES`` when it is set (``notebooks/figures/``
otherwise). ``tests/test_notebooks.py`` checks that the stored code cells are the generator's and that every
figure a cell saves is also an image output of that cell, and runs each notebook again in a fresh kernel
(into a temporary figure folder) to check that it prints the numbers it stores.

Run a generator from the repository root::

    PYTHONPATH=$PWD FLTHEORY_FIGURES=/tmp/figs python3 notebooks/make_tdma_notebook.py
"""
import re
from pathlib import Path

import nbformat as nbf

SAVEFIG = re.compile(r"\.savefig\(")


def figures_saved(source: str) -> int:
    """How many figures a code cell saves (its ``.savefig(`` calls): each must also be shown inline."""
    return len(SAVEFIG.findall(source))


class NotebookBuilder:
    def __init__(self):
        self.cells = []

    def md(self, text):
        self.cells.append(nbf.v4.new_markdown_cell(text.strip()))

    def code(self, text):
        self.cells.append(nbf.v4.new_code_cell(text.strip()))

    def notebook(self):
        nb = nbf.v4.new_notebook()
        nb["cells"] = self.cells
        nb["metadata"]["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        return nb

    def write(self, path, execute=True, timeout=900):
        """Write the notebook to ``path``; with ``execute`` (the default) run it in its folder first and
        store its outputs (without timing metadata, so that a rerun changes only what the code prints)."""
        path = Path(path)
        nb = self.notebook()
        if execute:
            from nbclient import NotebookClient

            NotebookClient(nb, timeout=timeout, kernel_name="python3", record_timing=False,
                           resources={"metadata": {"path": str(path.parent)}}).execute()
            for cell in nb.cells:
                cell.get("metadata", {}).pop("execution", None)
        nbf.write(nb, path)
        print(f"wrote {path}")
