"""Issue 21, item 5: the batched deep search.

A check with ``evaluate_many`` (FedDelAvg's 25 simulated families) searches ``"deep"`` in batches: random
candidates in groups that share their discrete parameters (one batched run per group) and a batched evolution
strategy, on the backend of the run (NumPy, CuPy; ``array_api_strict`` on ``device1`` stands in for a GPU here).
"""
import math

import numpy as np
import pytest

from fltheory import cli, verify
from fltheory.search import Choice, Family, Integer, Real, worst_case
from fltheory.validation import InputError, InputTypeError
from fltheory.verify import Check, Sample



def _needs_strict():
    """The tests that name the ``array_api_strict`` backend (the others run on every backend of the ``xp`` fixture,
    CuPy's too, also where array_api_strict is not installed)."""
    pytest.importorskip("array_api_strict")


# ----------------------------------------------------------------------------- the search's batched phases
def _peak(ps):
    """A narrow peak (width 1e-2) at x = 0.637, y = 0.291, scaled by k/4: random draws alone rarely come near it."""
    return [p["k"] / 4 * math.exp(-((p["x"] - 0.637) ** 2 + (p["y"] - 0.291) ** 2) / 1e-4) for p in ps]


_FAM = Family([Real("x", 0.0, 1.0), Real("y", 0.0, 1.0), Integer("k", 1, 4), Choice("c", ("a", "b"))])


def test_random_groups_share_their_discrete_parameters_and_calls_are_whole_groups():
    calls = []

    def ratio(ps):
        calls.append(len(ps))
        return _peak(ps)

    r = worst_case(ratio, _FAM, budget=600, seed=2, batched=True, group=50, random_fraction=0.9)
    assert r.evaluations <= 600 and calls[0] == 540     # the random phase: one call
    from fltheory.search import _random_draws

    draws = _random_draws(_FAM, np.random.default_rng(0), 120, 50)
    assert len(draws) == 120
    for g in range(3):
        block = draws[50 * g:50 * (g + 1)]
        assert len({(d["k"], d["c"]) for d in block}) == 1          # one discrete setting per group
        assert len({d["x"] for d in block}) == len(block)           # continuous ones drawn afresh
    assert len({(d["k"], d["c"]) for d in draws[100:]}) == 1     # the last, partial group (20 draws) too


def test_the_evolution_strategy_climbs_a_peak_random_draws_miss():
    random_only = worst_case(_peak, _FAM, budget=1500, seed=1, batched=True, group=64, random_fraction=1.0)
    evolved = worst_case(_peak, _FAM, budget=1500, seed=1, batched=True, group=64, random_fraction=0.5, evolve=700)
    assert random_only.ratio < 0.5 < evolved.ratio
    assert evolved.history[2][0] == "evolve" and evolved.history[2][1] > 0.5    # the strategy itself climbed it
    assert evolved.evaluations <= 1500
    again = worst_case(_peak, _FAM, budget=1500, seed=1, batched=True, group=64, random_fraction=0.5, evolve=700)
    assert again.ratio == evolved.ratio and again.params == evolved.params        # reproducible for a seed


def test_group_and_evolve_are_checked_at_the_door():
    with pytest.raises(InputError, match="evolve > 0 needs batched=True"):
        worst_case(lambda p: 0.0, _FAM, budget=10, evolve=5)
    with pytest.raises(InputError, match="group"):
        worst_case(lambda p: 0.0, _FAM, budget=10, group=0)
    with pytest.raises(InputError, match="evolve"):
        worst_case(lambda p: [0.0] * len(p), _FAM, budget=10, batched=True, evolve=11)


# ----------------------------------------------------------------------------- Check.evaluate_many
def _toy(calls=None, name="demo.batched"):
    fam = Family([Real("x", 0.0, 1.0), Integer("k", 1, 4)], description="toy")

    def ev(p):
        return Sample(p["x"] ** 2 * p["k"] / 4, 1.0, dict(p))

    def many(ps, xp):
        if calls is not None:
            calls.append((len(ps), xp))
        x = xp.asarray([p["x"] for p in ps])
        k = xp.asarray([float(p["k"]) for p in ps])
        v = np.asarray(verify_to_host(x ** 2 * k / 4))
        return [Sample(float(v[i]), 1.0, {**p, "backend": xp.__name__}) if p["x"] > 0.01 else None
                for i, p in enumerate(ps)]

    return Check(name, paper="demobatch", relation="<=", family=fam, evaluate=ev, evaluate_many=many,
                 sampler=lambda quick, seed: [ev({"x": 0.5, "k": 1})], search_budget=(5, 10, 20))


def verify_to_host(a):
    from fltheory.backend import to_numpy

    return to_numpy(a)


def test_a_deep_search_with_evaluate_many_is_batched_on_the_backend_and_tight():
    _needs_strict()
    calls = []
    c = _toy(calls)
    v = c.run(search="deep", backend="array_api_strict")
    assert v.status == "tight" and v.search["evaluations"] > 20 * verify.DEEP_WIDE   # the wide phases were spent
    assert calls and all(xp.__name__ == "array_api_strict" for _, xp in calls)
    assert max(n for n, _ in calls) == 20 * verify.DEEP_WIDE // 2                   # the random phase: one call
    calls.clear()
    assert c.run(search="full").search["evaluations"] <= 10 and not calls           # only deep is batched
    bad = c.planted(0.9)      # the plant reaches the batched evaluations too
    assert bad.run(search="deep", backend="numpy").status == "violated"


def test_evaluate_many_and_backend_are_checked_at_the_door():
    fam = Family([Real("x", 0.0, 1.0)])
    with pytest.raises(InputError, match="evaluate_many"):
        Check("demo.x", paper="demo", sampler=lambda q, s: [], family=fam, evaluate=lambda p: None,
              evaluate_many="fast")
    with pytest.raises(InputError, match="evaluate_many.*without a family"):
        Check("demo.x", paper="demo", sampler=lambda q, s: [], evaluate_many=lambda ps, xp: [])
    with pytest.raises(InputTypeError, match="backend"):
        _toy().search(level="deep", backend=3)
    with pytest.raises(InputError, match="backend"):
        _toy().search(level="deep", backend="torch")
    with pytest.raises(InputTypeError, match="backend must be the name"):
        verify.run(["tdma"], backend=np)
    with pytest.raises(InputError, match="backend"):
        verify.run(["tdma"], backend="jax")


def test_the_backend_reaches_the_workers_and_the_report(tmp_path):
    _needs_strict()
    verify.register_paper("demobatch", title="batched demo")
    for name in ("demobatch.one", "demobatch.two"):
        verify.register(_toy(name=name))
    try:
        one = verify.run(["demobatch"], search="deep", backend="array_api_strict", jobs=1)
        two = verify.run(["demobatch"], names=["demobatch.one", "demobatch.two"], search="deep",
                         backend="array_api_strict", jobs=2)     # forked workers, one check each
    finally:
        verify.unregister_paper("demobatch")
    assert one.environment["backend"] == "array_api_strict" == two.environment["backend"]
    assert [v.worst_ratio for v in one.verdicts] == [v.worst_ratio for v in two.verdicts]
    assert all(v.search["params"]["backend"] == "array_api_strict" for v in one.verdicts + two.verdicts)
    with pytest.raises(SystemExit):
        cli.main(["verify", "--backend", "nope", "--out", str(tmp_path / "r")])


def test_a_backend_this_machine_lacks_is_one_line_at_the_door(monkeypatch, capsys, tmp_path):
    import builtins

    real = builtins.__import__

    def no_cupy(name, *args, **kwargs):
        if name == "cupy" or name.startswith("cupy."):
            raise ImportError("No module named 'cupy'")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_cupy)
    with pytest.raises(InputError, match="backend='cupy' cannot be used here: .*fltheory\\[gpu\\]"):
        verify.run(["tdma"], backend="cupy")
    assert cli.main(["verify", "--backend", "cupy", "--paper", "tdma", "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert "backend='cupy' cannot be used here" in err and "Traceback" not in err and not (tmp_path / "r").exists()


# ----------------------------------------------------------------------------- FedDelAvg's batched families
def _feddelavg(name):
    return next(c for c in verify.registry(["feddelavg"]) if c.name == name)


_CHECKS = ["feddelavg.lemma3_corrected", "feddelavg.prop1_loss", "feddelavg.prop2", "feddelavg.xi_star_bound",
           "feddelavg.gd_period_gap", "feddelavg.prop1_window_pre"]


def _draws(c, n, seed):
    """``n`` instances of the check's family: half drawn freely, half in one group sharing the discrete ones."""
    rng = np.random.default_rng(seed)
    base = c.family.draw(rng)
    raws = [c.family.draw(rng) for _ in range(n // 2)]
    raws += [{**c.family.draw(rng), **{p.name: base[p.name] for p in c.family.discrete}} for _ in range(n - n // 2)]
    return [q for q in (c.family.apply(r) for r in raws) if q is not None]


def _one(c, p):
    try:
        return c.evaluate(p)
    except InputError:
        return None


@pytest.mark.parametrize("name", _CHECKS)
def test_feddelavg_batched_evaluation_equals_one_instance_at_a_time(name, xp, monkeypatch):
    from fltheory.papers.feddelavg import checks as C

    c = _feddelavg(name)
    ps = _draws(c, 24, seed=len(name))
    alone = [_one(c, p) for p in ps]
    assert sum(s is not None for s in alone) >= 4
    # no fallback to the one-instance path may hide a failure of the batched one
    monkeypatch.setattr(C, "_search_evaluate", lambda *a, **k: pytest.fail("fell back to one instance at a time"))
    many = c.evaluate_many(ps, xp)
    assert [s is None for s in many] == [s is None for s in alone]
    for a, b in zip(alone, many):
        if a is not None:   # losses of size up to 1e4 differ in their last bits: 1e-11 absolute
            assert b.value == pytest.approx(a.value, rel=1e-12, abs=1e-11)
            assert b.bound == pytest.approx(a.bound, rel=1e-12, abs=1e-11)
            ra, rb = c._ratio(a)[0], c._ratio(b)[0]
            assert abs(rb - ra) <= 1e-11 / max(abs(a.value), 1e-300) * abs(ra) + 1e-12
            assert {k: v for k, v in b.params.items() if not isinstance(v, float)} == \
                   {k: v for k, v in a.params.items() if not isinstance(v, float)}


def test_feddelavg_batched_iterates_are_bit_for_bit_the_one_instance_runs():
    from fltheory.papers.feddelavg import checks as C

    c = _feddelavg("feddelavg.lemma3")
    qs = [C._search_params(p) for p in _draws(c, 16, seed=5)[8:]]     # the group sharing M, tau, K, clients
    R = C._search_batch(qs)
    for b, q in enumerate(qs):
        one = C._search_batch([q])
        assert np.array_equal(R.res.record.local_gap[b], one.res.record.local_gap[0])
        assert np.array_equal(R.res.w_periods[b], one.res.w_periods[0])


def test_a_deep_feddelavg_search_on_a_backend_equals_numpy(xp):
    c = _feddelavg("feddelavg.asymptotic_gap")
    a = c.search(level="deep", budget=4, seed=3)
    b = c.search(level="deep", budget=4, seed=3, backend=xp)
    assert a.evaluations == b.evaluations > 4 * verify.DEEP_WIDE // 2
    assert a.ratio == pytest.approx(b.ratio, rel=1e-12) and a.params == b.params


def test_the_readme_says_what_the_batched_deep_search_spends():
    import re
    from pathlib import Path

    text = " ".join((Path(__file__).resolve().parents[1] / "README.md").read_text().split())
    m = re.search(r"`--search deep` gives each check that has an instance family (\d+) times the full run's search "
                  r"budget .*? The (\d+) checks that evaluate many instances in one batched run \(FedDelAvg's "
                  r"simulated families\) spend (\d+) times that budget more in batches: random groups of (\d+) ", text)
    assert m, "the README's sentence on the deep search changed: update this test with it"
    batched = [c for c in verify.registry() if c.evaluate_many is not None]
    assert {c.paper for c in batched} == {"feddelavg"}
    assert tuple(map(int, m.groups())) == (verify.DEEP_FACTOR, len(batched), verify.DEEP_WIDE, verify.DEEP_GROUP)
