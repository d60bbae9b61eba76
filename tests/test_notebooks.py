"""The stored notebooks (notebooks/*.ipynb) are what their generators write, executed: a reader on GitHub
or on the docs site (which renders them as stored) sees every figure inline.

Claimed and checked here, without running a kernel (``pytest --nbmake`` executes the notebooks):
* each stored notebook's cells are its generator's cells (same kinds, same sources), so the stored
  outputs belong to the code that is shown;
* every code cell that saves ``n`` figures (``.savefig(``) has at least ``n`` image outputs, and no cell
  switches matplotlib's backend (``matplotlib.use``), which would stop the figures from showing inline;
* no stored output is an error or names a folder of the machine that ran it (``/tmp/``, ``/home/``...).
"""
import re
import runpy
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
sys.path.insert(0, str(NOTEBOOKS))
from nbgen import figures_saved  # noqa: E402

GENERATORS = sorted(NOTEBOOKS.glob("make_*_notebook.py"))


def _stem(gen: Path) -> str:
    return gen.name[len("make_"):-len("_notebook.py")]


def _images(cell) -> int:
    return sum(1 for o in cell.get("outputs", []) if "image/png" in o.get("data", {}))


def test_every_notebook_has_a_generator():
    assert {_stem(g) for g in GENERATORS} == {p.stem for p in NOTEBOOKS.glob("*.ipynb")}


@pytest.mark.parametrize("gen", GENERATORS, ids=_stem)
def test_stored_notebook_is_its_generators_output_with_every_figure_inline(gen):
    built = runpy.run_path(str(gen), run_name="fltheory_nbgen_check")["nb"].cells   # builds, writes nothing
    stored = nbformat.read(NOTEBOOKS / f"{_stem(gen)}.ipynb", as_version=4).cells
    assert [(c.cell_type, c.source) for c in stored] == [(c.cell_type, c.source) for c in built], \
        f"notebooks/{_stem(gen)}.ipynb is stale: run python3 notebooks/{gen.name}"
    n_figures = 0
    for i, cell in enumerate(stored):
        if cell.cell_type != "code":
            continue
        assert "matplotlib.use(" not in cell.source, (gen.name, i)
        assert not [o for o in cell.outputs if o.output_type == "error"], (gen.name, i)
        text = "".join(o.get("text", "") + str(o.get("data", {}).get("text/plain", "")) for o in cell.outputs)
        assert not re.search(r"(?<![\w.])/(tmp|home|work|Users|root)/", text), (gen.name, i, "an absolute path")
        n = figures_saved(cell.source)
        assert _images(cell) >= n, f"cell {i} of {_stem(gen)} saves {n} figure(s) and shows {_images(cell)}"
        n_figures += n
    assert n_figures >= 3, gen.name   # each notebook draws its figures
