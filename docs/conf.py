"""Sphinx configuration of the fltheory documentation.

Build (the test suite does it with warnings as errors, into a temporary folder)::

    python -m sphinx -W -b html docs <out>

The notebooks under ``notebooks/`` are rendered as they are stored, without executing them: their
generators (``notebooks/make_*_notebook.py``) store them executed, with every figure as an image output,
so the pages show the figures (tests/test_notebooks.py checks that the stored cells are the generators',
tests/test_docs.py that each figure is on its page); the test suite runs them again and compares what they print.
``docs/notebooks`` is a link to that folder.
"""
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))
sys.path.insert(0, str(HERE.parent / "src"))

project = "fltheory"
author = "the fltheory authors"
copyright = "the fltheory authors"  # noqa: A001 - Sphinx's name

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "myst_nb",
    "fltheory_docs",
]

source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
root_doc = "index"
exclude_patterns = ["_build", "notebooks/figures", "notebooks/*.py", "notebooks/.ipynb_checkpoints"]

nb_execution_mode = "off"  # stored with their outputs by their generators; the test suite executes them
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_heading_anchors = 3

autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": False}
autodoc_member_order = "bysource"
autodoc_typehints = "none"
napoleon_numpy_docstring = True
napoleon_google_docstring = False

html_theme = "alabaster"
html_static_path = []
html_copy_source = False
html_show_sourcelink = False

# a field type such as ``d`` or ``x`` names an attribute of several classes: not a broken link
suppress_warnings = ["ref.python"]

# the pages link to nothing outside the repository (MathJax, which renders the formulas, is the one script
# loaded from outside)
html_show_sphinx = False
html_theme_options = {"show_powered_by": False}
