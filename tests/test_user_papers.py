"""A user's own checks in ``fltheory verify`` (issue 23, item 3): a paper registered with
``verify.register_paper`` (or an ``fltheory.papers`` entry point) runs in ``verify.run``, the CLI,
the report and its figures, and ``rebuild`` reproduces its counterexample, like the five papers'."""
import json
import sys

import pytest
import sympy as sp

import fltheory as flt
from fltheory import cli, plotting, verify
from fltheory.validation import InputError, InputTypeError
from fltheory.verify import Check, Sample

eta, mu, L, k = sp.symbols("eta mu L k", positive=True)
GD = flt.Statement("gd_contraction", lhs=r"\|x_k-x^*\|^2/\|x_0-x^*\|^2", relation="<=", expr=(1 - eta * mu) ** (2 * k),
                   conditions=[flt.Condition(eta * (L + mu) <= 2, "eta <= 2/(mu+L)")], paper="mine", equation="(1)")


def _sampler(statement):
    """GD on f(x) = (mu x_1^2 + L x_2^2)/2 from (1, 1): the worst direction's contraction, exactly."""
    def sampler(quick, seed):
        out = []
        for i, (m, l, e) in enumerate([(1.0, 4.0, 0.3), (1.0, 2.0, 0.5), (0.5, 1.0, 0.9)][: 2 if quick else 3]):
            value = max((1 - e * m) ** 10, (1 - e * l) ** 10)
            out.append(Sample(value=value, bound=float(statement(eta=e, mu=m, L=l, k=5)),
                              params={"mu": m, "L": l, "eta": e}, seed=seed, size=float(i)))
        return out
    return sampler


def _checks(slug):
    wrong = GD.with_changes(name="too_good", expr=(1 - eta * L) ** (2 * k))
    return [Check(f"{slug}.gd", paper=slug, statement=GD, sampler=_sampler(GD)),
            Check(f"{slug}.too_good", paper=slug, statement=wrong, sampler=_sampler(wrong), expected="violated",
                  falsifies="theorem", still_stands="the contraction with mu")]


@pytest.fixture
def mine():
    """The paper "mine" with two checks, removed afterwards (nothing leaks into other tests)."""
    verify.register_paper("mine", title='Me, "My own bound for gradient descent"')
    for c in _checks("mine"):
        verify.register(c)
    try:
        yield "mine"
    finally:
        verify.unregister_paper("mine")
    assert "mine" not in verify.all_papers() and not [c for c in verify._REGISTRY.values() if c.paper == "mine"]


def test_a_users_checks_run_appear_in_the_report_and_their_counterexample_is_rebuilt(mine, tmp_path):
    assert "mine" in verify.all_papers()
    report = verify.run(papers=["mine"], quick=True)
    by_name = {v.check: v for v in report.verdicts}
    assert set(by_name) == {"mine.gd", "mine.too_good"} and report.ok
    assert by_name["mine.gd"].status in ("holds", "tight") and by_name["mine.too_good"].status == "violated"
    report.write(tmp_path)
    md = (tmp_path / "report.md").read_text()
    assert "mine.too_good" in md and "mine.gd" in md and "Counterexamples" in md
    data = json.loads((tmp_path / "report.json").read_text())
    ce = next(v for v in data["verdicts"] if v["check"] == "mine.too_good")["counterexample"]
    r = verify.rebuild("mine.too_good", ce["params"], ce["seed"], quick=ce["quick"], run_seed=ce["run_seed"])
    assert r.violated and r.ratio == pytest.approx(ce["ratio"], rel=1e-12) and r.params == ce["params"]
    if report.figures:   # with matplotlib: the paper's own page, headed by its title
        assert "figures/verdicts_mine.png" in report.figures and (tmp_path / "figures" / "verdicts_mine.png").exists()
    assert plotting.paper_title("mine", short=True) == "My own bound for gradient descent"


def test_fltheory_verify_runs_a_registered_paper(mine, tmp_path, capsys):
    out = tmp_path / "report"
    assert cli.main(["verify", "--paper", "mine", "--quick", "--no-progress", "--no-figures", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    # the console table names the checks (mine.gd, mine.too_good) in the paper's block; report.md their statements
    assert "[mine]\ngd " in printed and "\ntoo_good " in printed and "2/2 verdicts as expected" in printed
    assert "gd_contraction" in (out / "report.md").read_text()
    assert "mine.too_good" in (out / "report.md").read_text()


def test_a_paper_whose_checks_live_in_a_module_is_imported_when_wanted(tmp_path, monkeypatch):
    (tmp_path / "my_fl_checks.py").write_text(
        "from fltheory import verify\n"
        "from test_user_papers import _checks\n"
        "for c in _checks('mine2'):\n"
        "    verify.register(c)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.syspath_prepend(str(__import__("pathlib").Path(__file__).parent))
    verify.register_paper("mine2", checks="my_fl_checks")
    try:
        assert "my_fl_checks" not in sys.modules
        names = [v.check for v in verify.run(papers=["mine2"], quick=True).verdicts]
        assert names == ["mine2.gd", "mine2.too_good"]
    finally:
        verify.unregister_paper("mine2")
        sys.modules.pop("my_fl_checks", None)


def test_an_installed_entry_point_is_a_paper(monkeypatch):
    class EntryPoint:
        name, value = "epmine", "my_package.checks:register_all"

        def load(self):
            def register_all():
                """Someone, "An entry-point paper"."""
                for c in _checks("epmine"):
                    verify.register(c)
            return register_all

    monkeypatch.setattr(verify, "_entry_points", lambda: {"epmine": EntryPoint()})
    try:
        assert "epmine" in verify.all_papers()
        report = verify.run(papers=["epmine"], quick=True)
        assert [v.check for v in report.verdicts] == ["epmine.gd", "epmine.too_good"] and report.ok
        ce = report.verdicts[1].counterexample
        assert verify.rebuild("epmine.too_good", ce["params"], ce["seed"], quick=True).violated
        assert plotting.paper_title("epmine", short=True) == "An entry-point paper"
    finally:
        verify.unregister_paper("epmine")


def test_bad_registrations_are_refused_by_name():
    with pytest.raises(InputError, match="built-in"):
        verify.register_paper("feddelavg")
    with pytest.raises(InputTypeError, match="slug"):
        verify.register_paper("my paper")
    with pytest.raises(InputTypeError, match="checks"):
        verify.register_paper("mine3", checks=3)
    with pytest.raises(InputError, match="register_paper"):
        verify.run(papers=["nobody"])
    with pytest.raises(InputError, match="no registered paper"):
        verify.unregister_paper("nobody")


def test_a_users_checks_run_in_worker_processes_too(mine, monkeypatch):
    one, two = verify.run(papers=["mine"], quick=True), verify.run(papers=["mine"], quick=True, jobs=2)
    assert [(v.check, v.status, v.worst_ratio) for v in one.verdicts] == \
        [(v.check, v.status, v.worst_ratio) for v in two.verdicts] and two.ok
    # as many papers as workers: whole papers go to workers forked before the registry import (verify._Pool)
    verify.register_paper("mine2", title="Me again")
    try:
        for c in _checks("mine2"):
            verify.register(c)
        made = []
        real = verify._Pool
        monkeypatch.setattr(verify, "_Pool", lambda papers, **kw: made.append(papers) or real(papers, **kw))
        both, apart = verify.run(papers=["mine", "mine2"], quick=True, jobs=2), verify.run(papers=["mine", "mine2"],
                                                                                          quick=True)
        assert [(v.check, v.status, v.worst_ratio) for v in both.verdicts] == \
            [(v.check, v.status, v.worst_ratio) for v in apart.verdicts] and len(both.verdicts) == 4 and both.ok
        assert made == [["mine", "mine2"]]       # the forked pool ran the two papers (the serial run made none)
    finally:
        verify.unregister_paper("mine2")
