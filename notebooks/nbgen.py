"""Builder shared by the notebook generators (notebooks/make_*_notebook.py).

Cells are collected with ``md`` and ``code`` and written by ``write`` without outputs; the test
suite executes the notebooks with ``pytest --nbmake``.
"""
from pathlib import Path

import nbformat as nbf


class NotebookBuilder:
    def __init__(self):
        self.cells = []

    def md(self, text):
        self.cells.append(nbf.v4.new_markdown_cell(text.strip()))

    def code(self, text):
        self.cells.append(nbf.v4.new_code_cell(text.strip()))

    def write(self, path):
        nb = nbf.v4.new_notebook()
        nb["cells"] = self.cells
        nb["metadata"]["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        nbf.write(nb, Path(path))
        print(f"wrote {path}")
