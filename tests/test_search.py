"""The adversarial worst-case search (fltheory.search): synthetic maxima, seeds, constraints, budget, doors."""
import math

import numpy as np
import pytest

from fltheory import validation as V
from fltheory.search import Choice, Family, Integer, Real, SearchResult, worst_case


def _interior(p):
    """sup 1 at x = 10**0.3 (interior, log scale), k = 7 (interior integer), c = "b"."""
    return (1 - (math.log10(p["x"]) - 0.3) ** 2 - (p["k"] - 7) ** 2 / 100) * (1.0 if p["c"] == "b" else 0.8)


INTERIOR = Family([Real("x", 1e-3, 10.0, log=True), Integer("k", 1, 20), Choice("c", ("a", "b", "c"))],
                  description="synthetic interior maximum")


def test_boundary_supremum_is_attained():
    # sup 1 on the boundary x = 1, k = 5 (a corner), and a second one reached only through the boundary phase
    fam = Family([Real("x", 0.0, 1.0), Integer("k", 1, 5)])
    r = worst_case(lambda p: p["x"] * p["k"] / 5, fam, budget=200, seed=0)
    assert r.ratio == 1.0 and r.params == {"x": 1.0, "k": 5}
    fam2 = Family([Real("a", 0.0, 2.0), Real("b", 0.1, 3.0, log=True)])
    r2 = worst_case(lambda p: 1 - (p["a"] - 1.3) ** 2 / 10 - (3.0 - p["b"]) / 10, fam2, budget=300, seed=3)
    assert r2.ratio >= 1 - 1e-7 and r2.params["b"] == 3.0


def test_interior_maximum_with_integers_and_choices():
    r = worst_case(_interior, INTERIOR, budget=300, seed=1)
    assert r.ratio >= 1 - 1e-8
    assert r.params["k"] == 7 and r.params["c"] == "b"
    assert abs(math.log10(r.params["x"]) - 0.3) < 1e-3


def test_reproducible_per_seed_and_history():
    a = worst_case(_interior, INTERIOR, budget=150, seed=5)
    b = worst_case(_interior, INTERIOR, budget=150, seed=5)
    assert (a.params, a.ratio, a.evaluations, a.history) == (b.params, b.ratio, b.evaluations, b.history)
    assert a.seed == 5 and isinstance(a, SearchResult)
    best = [h[1] for h in a.history]
    assert best == sorted(best) and a.history[0][0] == "random"
    assert "synthetic interior maximum" in a.family and "x in [0.001, 10] (log scale)" in a.family


def test_budget_is_never_exceeded_and_batched_matches():
    calls = []

    def f(p):
        calls.append(p)
        return _interior(p)

    for budget in (1, 7, 60):
        calls.clear()
        r = worst_case(f, INTERIOR, budget=budget, seed=2)
        assert r.evaluations == len(calls) <= budget
    batches = []

    def g(ps):
        batches.append(len(ps))
        return np.array([_interior(p) for p in ps])

    rb = worst_case(g, INTERIOR, budget=120, seed=4, batched=True)
    rs = worst_case(_interior, INTERIOR, budget=120, seed=4)
    assert sum(batches) == rb.evaluations <= 120 and max(batches) > 1
    assert rb.ratio == rs.ratio and rb.params == rs.params


def test_constraints_are_respected():
    # the hypothesis eta * L <= 1; the ratio grows with eta * L and would exceed 1 outside it
    def constrain(p):
        if p["L"] * p["eta"] > 1:
            p["eta"] = 1 / p["L"]
        return None if p["N"] % 2 else p      # only even N are inside

    seen = []

    def f(p):
        seen.append(p)
        return p["eta"] * p["L"] * (1 - 1 / p["N"])

    fam = Family([Real("eta", 1e-3, 10.0, log=True), Real("L", 0.1, 10.0), Integer("N", 1, 9)], constrain=constrain,
                 fixed={"family": "toy"})
    r = worst_case(f, fam, budget=200, seed=0)
    assert all(p["eta"] * p["L"] <= 1 + 1e-12 and p["N"] % 2 == 0 and p["family"] == "toy" for p in seen)
    assert r.params["N"] == 8 and r.ratio == pytest.approx(1 - 1 / 8, rel=1e-9)


def test_errors_and_nan_count_as_outside():
    def f(p):
        if p["x"] > 0.5:
            raise V.InputError("x outside the hypotheses")
        return float("nan") if p["x"] < 0.1 else p["x"]

    r = worst_case(f, Family([Real("x", 0.0, 1.0)]), budget=100, seed=0)
    assert 0.45 < r.ratio <= 0.5 and r.params["x"] <= 0.5   # an edge of the hypotheses is approached


@pytest.mark.parametrize("bad, err", [
    (lambda: Real("x", 1.0, 1.0), V.InputError),
    (lambda: Real("x", 0.0, 1.0, log=True), V.InputError),
    (lambda: Real("x", "0", 1.0), V.InputTypeError),
    (lambda: Real("x", 0.0, float("nan")), V.InputError),
    (lambda: Integer("k", 5, 2), V.InputError),
    (lambda: Integer("k", 0.5, 2), V.InputTypeError),
    (lambda: Integer("k", 0, 4, log=True), V.InputError),
    (lambda: Choice("c", ()), V.InputError),
    (lambda: Choice("c", "abc"), V.InputTypeError),
    (lambda: Real("not a name", 0.0, 1.0), V.InputTypeError),
    (lambda: Family([Real("x", 0, 1), Integer("x", 0, 1)]), V.InputError),
    (lambda: Family([]), V.InputError),
    (lambda: Family(Real("x", 0, 1)), V.InputTypeError),
    (lambda: Family([Real("x", 0, 1)], constrain=3), V.InputTypeError),
    (lambda: Family([Real("x", 0, 1)], fixed={"x": 1}), V.InputError),
    (lambda: worst_case(3, Family([Real("x", 0, 1)])), V.InputTypeError),
    (lambda: worst_case(lambda p: 1.0, "family"), V.InputTypeError),
    (lambda: worst_case(lambda p: 1.0, Family([Real("x", 0, 1)]), budget=0), V.InputError),
    (lambda: worst_case(lambda p: 1.0, Family([Real("x", 0, 1)]), budget=True), V.InputTypeError),
    (lambda: worst_case(lambda p: 1.0, Family([Real("x", 0, 1)]), seed=-1), V.InputError),
    (lambda: worst_case(lambda p: "1", Family([Real("x", 0, 1)])), V.InputTypeError),
    (lambda: worst_case(lambda ps: [1.0], Family([Real("x", 0, 1)]), batched=True), V.InputError),
])
def test_bad_inputs_are_refused_by_name(bad, err):
    with pytest.raises(err):
        bad()


# ----------------------------------------------------------------------------- wired into Check
def _toy_check(name, scale=1.0):
    from fltheory.verify import Check, Sample

    fam = Family([Real("x", 0.0, 1.0), Integer("k", 1, 4)], description="toy: x in [0, 1] is the hypothesis")
    return Check(name, paper="demo", relation="<=", sampler=lambda q, s: [Sample(0.3, 1.0, {"x": 0.3, "k": 1})],
                 family=fam, evaluate=lambda p: Sample(p["x"] ** 2 * p["k"] / 4, scale, dict(p)), search_budget=(40, 80))


def test_check_runs_the_search_and_merges_its_worst_instance():
    from fltheory.verify import Report, rebuild

    c = _toy_check("demo.search_tight")
    v = c.run(quick=True, seed=3)
    assert v.sampled_worst_ratio == pytest.approx(0.3) and v.status == "tight" and v.worst_ratio == 1.0
    assert v.instances == 2 and 0 < v.budget <= 40 and v.search["seed"] == 3
    assert "toy: x in [0, 1] is the hypothesis" in v.search["family"]
    assert "adversarial search of budget" in v.wording()
    r = rebuild(c, v.search["params"], None)
    assert r.ratio == 1.0 and not r.violated
    # a planted loosening (the bound times 0.9) is refuted by the search, and its counterexample rebuilds
    bad = _toy_check("demo.search_loosened", scale=0.9)
    w = bad.run(quick=True)
    assert w.status == "violated" and w.counterexample["ratio"] > 1
    assert rebuild(bad, w.counterexample["params"], w.counterexample["seed"]).violated
    rep = Report([v], True, 0, 0.0, {})
    assert "not refuted" in rep.table() and "## Adversarial search" in rep.to_markdown()


def test_check_refuses_a_family_without_evaluate():
    from fltheory.verify import Check

    fam = Family([Real("x", 0.0, 1.0)])
    with pytest.raises(V.InputError):
        Check("demo.nofam", paper="demo", relation="<=", sampler=lambda q, s: [], family=fam)
    with pytest.raises(V.InputTypeError):
        Check("demo.nofam", paper="demo", relation="<=", sampler=lambda q, s: [], family="fam", evaluate=lambda p: p)
    with pytest.raises(V.InputError):
        Check("demo.nofam", paper="demo", relation="<=", sampler=lambda q, s: [], evaluate=lambda p: p)
    with pytest.raises(V.InputTypeError):
        Check("demo.nofam", paper="demo", relation="<=", sampler=lambda q, s: [], family=fam, evaluate=lambda p: p,
              search_budget=5)
