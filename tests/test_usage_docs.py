"""The numbers and facts docs/usage.rst and docs/index.rst state, each computed from the package (tests/docsfrag.py):
the grid limit, the thread default and range, the strict-JSON words, the LaTeX preamble, the GPU extras, the
paper count, the worked tuning example, and the three verdict words of the index.  The exit statuses the usage
page states (0 exactly when every verdict is the expected one; 2 with one line on stderr for a bad path) are
tested on the command itself in tests/test_cli.py."""
import math
import tomllib

import pytest

from fltheory import cli, parallel, symbolic, verify
from fltheory.validation import InputError

from docsfrag import ROOT, assert_on_page, page, render_all

USAGE, INDEX = page("usage.rst"), page("index.rst")
FRAGMENTS = (
    r"treat it like the {{papers}} built-in papers.",
    r"refuses, with ``GridSizeError``, more than {{grid_limit}} points unless ``max_points=`` allows more.",
    r"The default is the number of cores the process may use (at most {{max_threads}}); set "
    r"``FLTHEORY_NUM_THREADS=1`` (an integer in [1, {{max_threads_allowed}}] in the digits 0-9;",
)
COMPUTED = {"papers": lambda: len(verify.PAPERS), "grid_limit": lambda: symbolic.GRID_POINTS_LIMIT,
            "max_threads": lambda: parallel.MAX_DEFAULT, "max_threads_allowed": lambda: _largest_thread_count()}


def _largest_thread_count():
    """The largest n that set_num_threads accepts (n + 1 is refused, naming n)."""
    previous = parallel.num_threads()
    try:
        n = 1
        while True:
            try:
                parallel.set_num_threads(n * 2)
            except InputError:
                break
            n *= 2
        lo, hi = n, n * 2            # n accepted, 2n refused
        while hi - lo > 1:
            mid = (lo + hi) // 2
            try:
                parallel.set_num_threads(mid)
                lo = mid
            except InputError:
                hi = mid
        return lo
    finally:
        parallel.set_num_threads(previous)


def test_every_number_of_the_usage_page_is_computed():
    assert_on_page(USAGE, render_all(FRAGMENTS, {}, COMPUTED))


@pytest.mark.parametrize("raw, ok", [("1", True), ("1024", True), ("1025", False), ("0", False), ("x", False),
                                     ("²", False)])
def test_the_thread_variable_reads_as_the_page_says(monkeypatch, raw, ok):
    monkeypatch.setenv("FLTHEORY_NUM_THREADS", raw)
    if ok:
        assert parallel._default() == int(raw)
    else:
        with pytest.raises(InputError, match="FLTHEORY_NUM_THREADS"):
            parallel._default()
    monkeypatch.delenv("FLTHEORY_NUM_THREADS")
    assert 1 <= parallel._default() <= parallel.MAX_DEFAULT


def test_strict_json_writes_the_words_the_page_names():
    assert verify.strict_json([math.inf, -math.inf, math.nan]) == ["inf", "-inf", "nan"]
    for word in ('``"inf"``', '``"-inf"``', '``"nan"``'):
        assert word in USAGE


def test_the_latex_document_is_the_article_class_with_amsmath_and_amssymb():
    assert "(the article class with ``amsmath`` and ``amssymb``)" in USAGE
    preamble = cli._PREAMBLE
    assert "{article}" in preamble and r"\usepackage{amsmath}" in preamble and r"\usepackage{amssymb}" in preamble


def test_the_gpu_extras_are_the_cuda_versions_the_page_names():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert '``".[gpu-cuda12]"`` for CUDA 12' in USAGE and '``pip install -e ".[gpu]"`` for CUDA 13' in USAGE
    assert any(d.startswith("cupy-cuda13x") for d in extras["gpu"])
    assert any(d.startswith("cupy-cuda12x") for d in extras["gpu-cuda12"])


def test_the_tuning_example_runs_as_printed():
    code = ("from fltheory.papers import tdma\n"
            "r = tdma.best_step_size(A=[1.0], c=[[1.0], [-1.0]], x0=[2.0], S=1, tau_comp=1, K=20)\n")
    for line in code.splitlines():
        assert f"    {line}" in USAGE, line
    scope = {}
    exec(code, scope)                       # noqa: S102 - the page's own example
    r = scope["r"]
    assert r.ratio >= 1 - 1e-9              # the best step is at least as good as the prescribed one
    assert "ratio" in str(r)             # print(r): the best and the prescribed eta, their errors and ratio


def test_the_index_names_the_three_verdicts():
    """Every status a check can reach is one the index names, and each is reached."""
    assert "``holds``, ``tight`` or ``violated``" in INDEX
    statuses = set()
    for ratio in (0.5, 1.0, 2.0):
        c = verify.Check("demo.r", paper="demo", relation="<=",
                         sampler=lambda quick, seed, r=ratio: [verify.Sample(r, 1.0, {})])
        statuses.add(c.run().status)
    assert statuses == {"holds", "tight", "violated"}
