"""The report: strict JSON, figures linked (or said to be skipped), readable verdict figures, and
counterexamples rebuilt from their check name, params and seed."""
import json
import math
import sys

import numpy as np
import pytest

from fltheory import plotting, verify
from fltheory.validation import InputError, InputTypeError
from fltheory.verify import Check, Report, Sample


def _strict_loads(text):
    def refuse(token):
        raise AssertionError(f"non-standard JSON constant {token} in the report")

    return json.loads(text, parse_constant=refuse)


def _check(name, values, bounds, relation, **kw):
    def sampler(quick, seed):
        return [Sample(value=v, bound=b, params={"i": i, "arr": np.arange(2), "flag": np.bool_(True)}, seed=seed)
                for i, (v, b) in enumerate(zip(values, bounds))]
    return Check(name, paper="demo", sampler=sampler, relation=relation, **kw)


def _report(*checks):
    return Report([c.run() for c in checks], quick=True, seed=0, seconds=0.1, environment={"numpy": np.__version__})


def _strict_parse_refuses_what_python_writes():
    with pytest.raises(AssertionError):
        _strict_loads(json.dumps({"x": math.inf}))


@pytest.fixture(scope="module")
def two_papers():
    """A quick run of the two finished papers (their violated verdicts are what is rebuilt)."""
    return verify.run(["local_adaptivity", "feddelavg"], quick=True)


# ----------------------------------------------------------------------------- strict JSON
def test_strict_json_encodes_non_finite_numbers_as_strings():
    _strict_parse_refuses_what_python_writes()
    data = {"a": math.inf, "b": [-math.inf, math.nan, 1.5], "c": np.float64("inf"), "d": (np.int64(3), None)}
    assert verify.strict_json(data) == {"a": "inf", "b": ["-inf", "nan", 1.5], "c": "inf", "d": [3, None]}
    json.dumps(verify.strict_json(data), allow_nan=False)  # would raise on a float left non-finite


def test_report_json_is_strict_with_an_infinite_ratio(tmp_path):
    # a lower bound with value 0 and an upper bound with bound <= 0: both ratios are infinite
    upper = _check("demo.zero_bound", [1.0, 0.5], [0.0, 1.0], "<=", expected="violated", falsifies="lemma",
                   still_stands="the corrected form, which this demo does not have")
    nan = _check("demo.nan_value", [float("nan")], [1.0], "<=", expected="violated", falsifies="constant",
                 still_stands="nothing: a value that is not a number is a violation")
    rep = _report(upper, nan)
    text = rep.write(tmp_path / "rep", figures=False).joinpath("report.json").read_text()
    data = _strict_loads(text)
    by = {v["check"]: v for v in data["verdicts"]}
    assert by["demo.zero_bound"]["worst_ratio"] == "inf" and by["demo.zero_bound"]["counterexample"]["ratio"] == "inf"
    assert by["demo.nan_value"]["counterexample"]["value"] == "nan"
    assert by["demo.zero_bound"]["counterexample"]["params"] == {"i": 0, "arr": [0, 1], "flag": True}
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "Infinity" not in md and "NaN" not in md and '"ratio": "inf"' in md




# ----------------------------------------------------------------------------- figures in the report
def test_report_md_links_every_figure_it_wrote(tmp_path):
    pytest.importorskip("matplotlib")
    rep = _report(_check("demo.a", [0.5, 0.2], [1, 1], "<="), _check("demo.b", [1.0, 1.0], [1.0, 1.0], "=="))
    out = rep.write(tmp_path / "rep")
    md = (out / "report.md").read_text()
    assert rep.figures == ("figures/verdicts.png", "figures/verdicts_demo.png")
    for f in rep.figures:
        assert (out / f).stat().st_size > 1000
        assert f"]({f})" in md
    assert _strict_loads((out / "report.json").read_text())["figures"] == list(rep.figures)


def test_without_matplotlib_the_report_says_figures_were_skipped(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` now raises ImportError
    rep = _report(_check("demo.a", [0.5], [1], "<="))
    out = rep.write(tmp_path / "rep")
    assert rep.figures == () and "matplotlib is not installed" in rep.figures_skipped
    assert not (out / "figures").exists()
    assert "No figures: matplotlib is not installed" in (out / "report.md").read_text()
    data = _strict_loads((out / "report.json").read_text())
    assert data["figures"] == [] and "matplotlib" in data["figures_skipped"]


# ----------------------------------------------------------------------------- the verdict figures
def test_ratios_read_the_same_way_round_for_upper_lower_and_identity():
    """A ratio > 1 breaks the statement whatever the relation (the figure's one reading)."""
    up = _check("demo.up", [2.0, 0.5], [1.0, 1.0], "<=").run()
    low = _check("demo.low", [0.5, 2.0], [1.0, 1.0], ">=").run()
    eq = _check("demo.eq", [1.0 + 1e-6, 1.0], [1.0, 1.0], "==").run()
    assert up.ratios == [2.0, 0.5] and low.ratios == [2.0, 0.5]
    assert eq.ratios[0] > 1 and eq.ratios[1] == 0.0
    for v in (up, low, eq):
        np.testing.assert_array_equal(plotting._ratios(v), v.ratios)
        v.ratios = []  # a verdict built without ratios: recomputed from values and bounds, same answer
        assert (plotting._ratios(v) > 1).tolist() == [True, False]


def test_verdict_page_has_sensible_axes_a_legend_and_the_papers_title():
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    exact = _check("demo.identity", [1.0, 2.0, 3.0], [1.0, 2.0, 3.0], "==").run()  # errors exactly 0
    bound = _check("demo.bound", [0.5, 0.9], [1.0, 1.0], "<=").run()
    fig = plotting.verdict_figure([exact, bound], title="A paper, by its authors")
    try:
        (ax,) = fig.axes
        lo, hi = ax.get_xlim()
        assert lo >= plotting.RATIO_FLOOR / 2 and hi >= 10  # no 1e-300 floor; the boundary 1 is inside
        assert ax.get_xlabel() and ax.get_ylabel() and ax.get_xscale() == "log"
        assert fig.legends and "boundary" in " ".join(t.get_text() for t in fig.legends[0].get_texts())
        assert "A paper, by its authors" in fig._suptitle.get_text()
        labels = [t.get_text() for t in ax.get_yticklabels()]
        assert any("[identity, =]" in t for t in labels) and any("\u2264" in t for t in labels)
        # the legend sits below the axes: it hides no point
        fig.canvas.draw()
        assert fig.legends[0].get_window_extent().y1 <= ax.get_window_extent().y0
    finally:
        plt.close(fig)


def test_summary_figure_counts_every_verdict():
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    vs = [_check("demo.a", [0.5], [1], "<=").run(), _check("demo.b", [2.0], [1], "<=", expected="violated",
                                                           falsifies="lemma", still_stands="nothing here").run()]
    fig = plotting.summary_figure(vs)
    try:
        ax = fig.axes[0]
        assert sum(p.get_width() for p in ax.patches) == 2
        assert ax.get_xlabel() and ax.get_ylabel() and ax.get_legend() is not None
    finally:
        plt.close(fig)


def test_paper_titles_speak_the_papers_language():
    for paper in verify.PAPERS:
        title = plotting.paper_title(paper)
        assert title != paper and not title.lower().startswith("paper 0"), title
        assert plotting.paper_title(paper, short=True)


def _legend_hides_no_point(ax):
    fig = ax.figure
    fig.canvas.draw()
    box = ax.get_legend().get_window_extent()
    for line in ax.get_lines():
        pts = ax.transData.transform(np.column_stack(line.get_data()))
        inside = (pts[:, 0] > box.x0) & (pts[:, 0] < box.x1) & (pts[:, 1] > box.y0) & (pts[:, 1] < box.y1)
        assert not inside.any(), line.get_label()


def test_bias_and_alpha_figures_have_labelled_axes_and_a_legend_that_hides_no_data():
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    from fltheory import problems
    from fltheory.papers.feddelavg import exact as fd_exact

    etas = np.logspace(-3, -1, 5)
    fig = plotting.bias_vs_eta_figure(etas, {"a": etas, "b": 2 * etas ** 2, "flat": np.full(5, 0.3)},
                                      title="bias against the learning rate")
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    assert ax.get_xlabel() and ax.get_ylabel()
    _legend_hides_no_point(ax)
    q = problems.random_quadratic_federation(M=3, d=2, kappa=5, seed=0)
    cmp = fd_exact.alpha_comparison(q, eta=0.1 / float(q.L), tau=4, Deltas=np.arange(5))
    fig = plotting.alpha_vs_delta_figure(cmp, title="which weight against the delay")
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    assert ax.get_xlabel() and ax.get_ylabel()
    _legend_hides_no_point(ax)


def test_figures_leave_the_users_backend_and_pyplot_alone(tmp_path):
    """A package helper neither switches matplotlib's backend (an inline notebook stays inline) nor adds figures
    to pyplot's list: it returns a Figure, or writes the file it is given."""
    pytest.importorskip("matplotlib")
    import matplotlib
    import matplotlib.pyplot as plt
    from matplotlib.figure import Figure

    old = matplotlib.get_backend()
    plt.switch_backend("svg")   # a backend that is not Agg, as an inline or GUI session has
    try:
        before = plt.get_fignums()
        etas = np.logspace(-3, -1, 4)
        fig = plotting.bias_vs_eta_figure(etas, {"a": etas})
        path = plotting.bias_vs_eta_figure(etas, {"a": etas}, tmp_path / "b.png")
        v = verify.Verdict(check="p.c", paper="p", statement="c", variant="printed", relation="<=", status="holds",
                           expected="holds", instances=2, worst_ratio=0.5, metric="value/bound", values=[1.0, 2.0],
                           bounds=[4.0, 4.0], ratios=[0.25, 0.5])
        page = plotting.verdict_figure([v])
        assert isinstance(fig, Figure) and isinstance(page, Figure) and path.exists()
        assert matplotlib.get_backend().lower() == "svg"
        assert plt.get_fignums() == before
    finally:
        plt.switch_backend(old)


# ----------------------------------------------------------------------------- rebuilding counterexamples
def test_every_violated_verdict_is_rebuilt_with_its_reported_ratio(two_papers):
    """The real report's JSON is strict, and from what report.json holds (a JSON round trip) one call gives back each
    counterexample's instance (one test on the one run: xdist would make the run once per worker otherwise)."""
    data = _strict_loads(json.dumps(two_papers.to_json(), allow_nan=False))
    assert len(data["verdicts"]) == len(two_papers.verdicts) and data["ok"] == two_papers.ok
    violated = [v for v in two_papers.verdicts if v.status == "violated"]
    assert len(violated) >= 6  # three false statements in each paper
    for v in violated:
        ce = _strict_loads(json.dumps(verify.strict_json(v.counterexample), allow_nan=False))
        r = verify.rebuild(v.check, ce["params"], ce["seed"])
        assert r.violated, v.check
        assert r.ratio == pytest.approx(v.counterexample["ratio"], rel=1e-12), v.check
        assert r.value == pytest.approx(ce["value"], rel=1e-12) and r.bound == pytest.approx(ce["bound"], rel=1e-12)
        assert verify.strict_json(r.params) == ce["params"]


def test_rebuild_with_the_sampler_arguments_and_a_check_object():
    c = _check("demo.rebuild", [0.5, 3.0, 1.0], [1.0, 2.0, 1.0], "<=")
    r = verify.rebuild(c, {"i": 1, "arr": [0, 1], "flag": True}, 7, quick=False, run_seed=7)
    assert (r.value, r.bound, r.ratio, r.violated) == (3.0, 2.0, 1.5, True)
    with pytest.raises(InputError, match="no instance"):
        verify.rebuild(c, {"i": 9, "arr": [0, 1], "flag": True}, 7)


def test_rebuild_refuses_bad_input():
    with pytest.raises(InputError, match="no check named"):
        verify.rebuild("feddelavg.no_such_check", {}, 0)
    with pytest.raises(InputTypeError, match="check"):
        verify.rebuild(3, {}, 0)
    with pytest.raises(InputTypeError, match="params"):
        verify.rebuild("feddelavg.theorem1", "{'K': 1}", 0)
    with pytest.raises((InputError, InputTypeError), match="seed"):
        verify.rebuild("feddelavg.theorem1", {}, -1)
    with pytest.raises((InputError, InputTypeError), match="quick"):
        verify.rebuild("feddelavg.theorem1", {}, 0, quick="yes")


def test_only_matching_no_check_is_an_error():
    with pytest.raises(InputError, match="matches no check"):
        verify.run(["feddelavg"], quick=True, only="no_such_check_name")
