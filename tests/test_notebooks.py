"""The stored notebooks (notebooks/*.ipynb) are what their generators write, executed: a reader on GitHub
or on the docs site (which renders them as stored) sees every figure inline, and every number the code printed.

Claimed and checked here:
* each stored notebook's cells are its generator's cells (same kinds, same sources), so the stored
  outputs belong to the code that is shown;
* every code cell that saves ``n`` figures (``.savefig(``) has at least ``n`` image outputs, and no cell
  switches matplotlib's backend (``matplotlib.use``), which would stop the figures from showing inline;
* no stored output is an error or names a folder of the machine that ran it (``/tmp/``, ``/home/``...);
* each notebook runs without error in a fresh kernel (its cells assert the sentences they print), and what each
  cell prints now is what it stores: the same text, every integer the same, every other number within one unit of
  its last printed digit (it may round the other way on another machine), wall-clock times (``12.3 s``) aside.  A stored notebook
  whose printed numbers the code no longer gives fails here (the last one had four stale worst ratios).
"""
import copy
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


TIMING = re.compile(r"\b\d+(?:\.\d+)? s\b")                    # a wall-clock time, "16.9 s"
NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def _printed(cell) -> str:
    """What a code cell printed, and the text of a result it shows that is not a figure."""
    out = []
    for o in cell.get("outputs", []):
        if o.get("output_type") == "stream":
            out.append(o.get("text", ""))
        elif "data" in o and "image/png" not in o["data"]:
            out.append(str(o["data"].get("text/plain", "")) + "\n")
    return "".join(out)


def _unit(token: str) -> float | None:
    """One unit of the last printed digit of a number token; None for an integer (compared exactly)."""
    mantissa, _, exponent = token.lower().partition("e")
    if "." not in mantissa and not exponent:
        return None
    decimals = len(mantissa.partition(".")[2])
    return 10.0 ** (int(exponent or 0) - decimals)


def _same_number(u: str, v: str) -> bool:
    units = [x for x in (_unit(u), _unit(v)) if x is not None]
    if not units:
        return int(u) == int(v)
    return abs(float(u) - float(v)) <= 1.0001 * max(units)


def printed_difference(stored: str, fresh: str) -> str | None:
    """None when ``fresh`` prints what ``stored`` does: the same text around the numbers, every integer the same,
    every other number within one unit of its last printed digit, wall-clock times aside; else the first stored
    line that differs and its fresh line.

    >>> printed_difference("ratio 0.45 in 3.2 s", "ratio 0.449 in 7.0 s") is None    # 0.4495 rounded two ways
    True
    >>> printed_difference("worst ratio 0.249", "worst ratio 0.289")
    'stored: worst ratio 0.249 | now: worst ratio 0.289'
    """
    a, b = (TIMING.sub("<time> s", t).splitlines() for t in (stored, fresh))
    for k in range(max(len(a), len(b))):
        x, y = (a[k] if k < len(a) else "<none>"), (b[k] if k < len(b) else "<none>")
        same = NUMBER.sub("#", x) == NUMBER.sub("#", y) and all(
            _same_number(u, v) for u, v in zip(NUMBER.findall(x), NUMBER.findall(y)))
        if not same:
            return f"stored: {x.strip()} | now: {y.strip()}"
    return None


@pytest.mark.parametrize("gen", GENERATORS, ids=_stem)
def test_the_notebook_runs_and_prints_what_it_stores(gen):
    from nbclient import NotebookClient

    stored = nbformat.read(NOTEBOOKS / f"{_stem(gen)}.ipynb", as_version=4)
    fresh = copy.deepcopy(stored)
    # the kernel starts in notebooks/ and inherits $FLTHEORY_FIGURES, a temporary folder (the root conftest)
    NotebookClient(fresh, timeout=900, kernel_name="python3", record_timing=False,
                   resources={"metadata": {"path": str(NOTEBOOKS)}}).execute()
    for i, (old, new) in enumerate(zip(stored.cells, fresh.cells)):
        if old.cell_type == "code":
            diff = printed_difference(_printed(old), _printed(new))
            assert diff is None, (f"cell {i} of notebooks/{_stem(gen)}.ipynb prints other numbers than it stores "
                                  f"({diff}): run python3 notebooks/{gen.name}")


def test_printed_difference_sees_stale_numbers_and_text_but_not_times_or_a_last_digit():
    assert printed_difference("ratio 0.45 in 3.2 s\nn = 16", "ratio 0.449 in 7.0 s\nn = 16") is None
    assert printed_difference("worst ratio 2.01e-06", "worst ratio 2.02e-06") is None
    assert printed_difference("worst ratio 2.01e-06", "worst ratio 2.03e-06") is not None
    assert printed_difference("ratio    1.48909 (63 evaluations)", "ratio    1.46 (63 evaluations)") is not None
    assert printed_difference("{1: 49999, 2: 33333}", "{1: 49998, 2: 33333}") is not None    # integers exactly
    assert printed_difference("alpha* = [74, 10]", "alpha* = [73, 10]") is not None
    assert printed_difference("notebook compute time: 49.2 s", "notebook compute time: 29.2 s") is None
    assert printed_difference("worst ratio 0.249", "worst ratio 0.289") == "stored: worst ratio 0.249 | now: worst ratio 0.289"
    assert printed_difference("worst ratio 2.01e-06", "worst ratio 1.73e-06") is not None
    assert printed_difference("holds", "violated") is not None
    assert printed_difference("a\nb", "a") == "stored: b | now: <none>"
