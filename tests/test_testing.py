"""fltheory.testing: strategies inside named assumptions and the bound checker (catches, shrinks, passes)."""
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import fltheory as flt
from fltheory.papers.local_adaptivity import bounds as LA
from fltheory.testing import (BoundViolated, admissible_set, assert_statement, delays, quadratic_federations, recipe,
                              schedules, statement_parameters, step_sizes)

ROOT = Path(__file__).resolve().parents[1]


# ----------------------------------------------------------------------------- strategies
@settings(max_examples=15, deadline=None)
@given(quadratic_federations(M=st.integers(1, 4), d=st.integers(2, 4), kappa=st.floats(1.0, 30.0),
                             heterogeneity=st.floats(0.0, 2.0), sigma2=st.sampled_from([None, 0.5])))
def test_federations_meet_the_named_assumptions(fed):
    """Each client's spectrum spans exactly [mu, kappa mu] (the drawn kappa), and the recipe rebuilds it."""
    text = recipe(fed)
    kappa = float(re.search(r"kappa=([0-9.e+-]+)", text).group(1))
    lam = np.linalg.eigvalsh(fed.H)
    np.testing.assert_allclose(lam[..., -1] / lam[..., 0], kappa, rtol=1e-9)
    assert ("sigma2=None" in text) == (fed.noise_cov is None)
    kw = dict(re.findall(r"(\w+)=([^,()]+)", text))
    again = flt.random_quadratic_federation(M=int(kw["M"]), d=int(kw["d"]), kappa=kappa, seed=int(kw["seed"]),
                                            heterogeneity=float(kw["heterogeneity"]),
                                            sigma2=None if kw["sigma2"] == "None" else float(kw["sigma2"]))
    np.testing.assert_array_equal(again.H, fed.H)
    np.testing.assert_array_equal(again.x_opt, fed.x_opt)


@settings(max_examples=10, deadline=None)
@given(quadratic_federations(M=3, d=2, heterogeneity=0.0))
def test_zero_heterogeneity_gives_identical_client_optima(fed):
    np.testing.assert_array_equal(fed.x_opt, np.zeros((3, 2)))


@settings(max_examples=20, deadline=None)
@given(st.data())
def test_step_sizes_lie_inside_the_statement_conditions(data):
    mu = data.draw(st.floats(0.1, 5.0))
    L = mu * data.draw(st.floats(1.0, 20.0))
    eta = data.draw(step_sizes(LA.h_sgd, mu=mu, L=L, k=3))
    assert 0 < eta <= 2 / (mu + L) * (1 + 1e-12)
    assert bool(LA.h_sgd.holds(eta=eta, mu=mu, L=L, k=3))


def test_admissible_set_is_exact_and_refuses_what_it_cannot_solve():
    assert admissible_set(LA.h_sgd, "eta", mu=1, L=3, k=2) == sp.Interval.Lopen(0, sp.Rational(1, 2))
    assert admissible_set(LA.h_sgd, "eta", mu=3, L=1, k=2) is sp.S.EmptySet     # mu > L breaks a condition
    with pytest.raises(flt.StatementError, match="give values for"):
        admissible_set(LA.h_sgd, "eta", mu=1, k=2)
    with pytest.raises(flt.StatementError, match="no interval"):
        step_sizes(LA.h_sgd, mu=3.0, L=1.0, k=2)
    with pytest.raises(flt.StatementError, match="name must be a parameter of h_sgd.*got 'gamma'"):
        step_sizes(LA.h_sgd, name="gamma", mu=1.0, L=3.0, k=2)


@settings(max_examples=15, deadline=None)
@given(statement_parameters(LA.q_sgd, eta=st.floats(0.01, 3.0), L=st.floats(0.1, 5.0), k=st.integers(0, 6)))
def test_statement_parameters_satisfy_every_condition(p):
    assert p["eta"] * p["L"] <= 2 * (1 + 1e-12)


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 4).flatmap(lambda lam: st.tuples(st.just(lam), delays(lam, T=6, U=2))))
def test_delays_stay_within_lambda(pair):
    lam, D = pair
    assert D.shape == (6, 2) and D.dtype.kind == "i" and 0 <= D.min() and D.max() <= lam


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 3).flatmap(lambda lam: st.tuples(st.just(lam), schedules(lam, N=5, T=8, U=2))))
def test_schedules_stay_within_lambda(pair):
    lam, sched = pair
    sched.check_delay(lam)                       # raises when some staleness exceeds lambda
    assert int(sched.max_staleness.max()) <= lam and sched.N == 5 and sched.T == 8
    assert recipe(sched).startswith(("fltheory.schedules.from_delays(", "fltheory.schedules.round_robin("))


def test_round_robin_schedules_use_group_sizes_within_lambda():
    seen = set()

    @settings(max_examples=30, deadline=None)
    @given(schedules(1, N=6, T=10, kinds=("round_robin",)))
    def check(s):
        seen.add(int(re.search(r"S=(\d+)", recipe(s)).group(1)))
        s.check_delay(1)

    check()
    assert seen and seen <= {3, 4, 5, 6}          # ceil(6/S) - 1 <= 1


# ----------------------------------------------------------------------------- the checker
def test_a_false_bound_is_caught_and_shrunk_to_the_smallest_counterexample():
    claim = flt.Statement("at_most_ten", lhs="n", relation="<=", expr=sp.Integer(10))
    with pytest.raises(BoundViolated) as info:
        assert_statement(claim, lambda n: (n, {}), st.integers(0, 10**6))
    exc = info.value
    assert (exc.value, exc.bound, exc.case) == (11.0, 10.0, "11")      # shrunk to the boundary
    assert "at_most_ten is violated" in str(exc) and "case: 11" in str(exc)


def _gd_statement(rate):
    eta, mu, L, k = sp.symbols("eta mu L k", positive=True)
    return flt.Statement("gd", lhs="r", relation="<=", expr=rate(eta, mu, L) ** (2 * k),
                         conditions=flt.symbolic.conditions((eta * (L + mu) <= 2, "eta <= 2/(mu+L)"),
                                                            (mu <= L, "mu <= L")))


TRUE_GD = _gd_statement(lambda eta, mu, L: 1 - eta * mu)
FALSE_GD = _gd_statement(lambda eta, mu, L: 1 - eta * L)


@st.composite
def _gd_cases(draw):
    fed = draw(quadratic_federations(M=1, d=st.integers(1, 3), kappa=st.floats(1.0, 20.0)))
    return fed, draw(step_sizes(TRUE_GD, mu=float(fed.mu), L=float(fed.L), k=4))


def _gd_ratio(case):
    """Exact worst-case ratio ||x_k - x*||^2 / ||x_0 - x*||^2 after k = 4 GD steps."""
    fed, eta = case
    lam = np.linalg.eigvalsh(fed.H[0])
    return float(np.max((1 - eta * lam) ** 8)), dict(eta=eta, mu=float(fed.mu), L=float(fed.L), k=4)


def test_a_true_bound_passes_on_every_case():
    assert assert_statement(TRUE_GD, _gd_ratio, _gd_cases(), max_examples=30) == 30


def test_a_false_bound_on_federations_gives_a_reproducible_counterexample():
    with pytest.raises(BoundViolated) as info:
        assert_statement(FALSE_GD, _gd_ratio, _gd_cases(), max_examples=30)
    exc = info.value
    assert exc.ratio > 1 and exc.value > exc.bound
    # rebuild the case from the printed call alone: same value, same bound
    fed_call = re.search(r"fltheory\.random_quadratic_federation\(([^)]*)\)", exc.case).group(1)
    kw = {k: v for k, v in re.findall(r"(\w+)=([^,]+)", fed_call)}
    fed = flt.random_quadratic_federation(M=int(kw["M"]), d=int(kw["d"]), kappa=float(kw["kappa"]),
                                          heterogeneity=float(kw["heterogeneity"]), seed=int(kw["seed"]))
    value, params = _gd_ratio((fed, exc.parameters["eta"]))
    assert value == exc.value and params == exc.parameters
    assert float(FALSE_GD(**params)) == exc.bound
    # the same search finds the same counterexample (derandomised by default)
    with pytest.raises(BoundViolated) as again:
        assert_statement(FALSE_GD, _gd_ratio, _gd_cases(), max_examples=30)
    assert str(again.value) == str(exc)


def test_lower_bounds_and_identities_are_checked_the_right_way_round():
    x = sp.Symbol("x", positive=True)
    lower = flt.Statement("lower", lhs="v", relation=">=", expr=x / 2)
    assert assert_statement(lower, lambda v: (v, {"x": v}), st.floats(0.1, 10.0), max_examples=10) == 10
    with pytest.raises(BoundViolated) as info:
        assert_statement(lower, lambda v: (v / 4, {"x": v}), st.floats(0.1, 10.0), max_examples=10)
    assert info.value.ratio == pytest.approx(2.0)       # bound / value for a lower bound
    ident = flt.Statement("ident", lhs="v", relation="==", expr=2 * x)
    assert assert_statement(ident, lambda v: (v + v, {"x": v}), st.floats(0.1, 10.0), max_examples=10) == 10


def test_cases_outside_the_conditions_are_not_counterexamples():
    """A case whose parameters break a condition is discarded; if all are, hypothesis says so."""
    from hypothesis.errors import Unsatisfiable

    with pytest.raises(Unsatisfiable):
        assert_statement(TRUE_GD, lambda e: (10.0, dict(eta=e, mu=1.0, L=1.0, k=1)), st.floats(1.5, 3.0),
                         max_examples=5)


def test_the_checker_refuses_bad_arguments_by_name():
    with pytest.raises(flt.InputTypeError, match="statement"):
        assert_statement("h_sgd", _gd_ratio, _gd_cases())
    with pytest.raises(flt.InputTypeError, match="quantity"):
        assert_statement(TRUE_GD, 3.0, _gd_cases())
    with pytest.raises(flt.InputTypeError, match="cases"):
        assert_statement(TRUE_GD, _gd_ratio, [1, 2])
    with pytest.raises(flt.InputTypeError, match=r"\(value, parameters\)"):
        assert_statement(TRUE_GD, lambda c: 1.0, st.just(1), max_examples=1)
    with pytest.raises(flt.InputError, match="max_examples"):
        assert_statement(TRUE_GD, _gd_ratio, _gd_cases(), max_examples=0)


def test_missing_hypothesis_gives_a_clear_error():
    code = ("import sys; sys.modules['hypothesis'] = None\n"
            "try:\n    import fltheory.testing\nexcept ImportError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert "fltheory.testing needs hypothesis" in out.stdout and 'pip install "fltheory[testing]"' in out.stdout
    plain = subprocess.run([sys.executable, "-c", "import sys; sys.modules['hypothesis'] = None; import fltheory; "
                            "print(fltheory.statement('feddelavg.theorem1').name)"],
                           capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert plain.stdout.strip() == "theorem1", plain.stderr      # the package itself does not need hypothesis


# ----------------------------------------------------------------------------- the README example
def _readme_block(title):
    text = (ROOT / "README.md").read_text()
    section = text.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_readme_example_runs_and_says_what_the_readme_says(capsys):
    exec(compile(_readme_block("Test your own bound in 15 lines"), "README.md", "exec"), {"__name__": "readme"})
    out = capsys.readouterr().out
    assert "50 cases: the bound holds" in out
    assert "too_good is violated: 0.0009765625000000022 <= 0.0 fails (ratio inf)" in out
    assert "L=2.0, eta=0.5" in out and "fltheory.random_quadratic_federation(M=1" in out


def test_assert_statement_targets_the_ratio_and_refutes_a_planted_loosening():
    """One gradient step on f = a w^2/2 with eta a <= 1: ||f'(w0)||^2 <= 2 (f(w0) - f(w1))/eta, tight at
    eta a = 1 (ratio 1/(2 - eta a)).  The bound times 0.999 fails only for eta a > 0.998999: the ratio is a
    hypothesis.target, so the targeted phase climbs to it."""
    import sympy as sp

    g2 = sp.Symbol("g2", nonnegative=True)
    drop, eta = sp.Symbol("drop", nonnegative=True), sp.Symbol("eta", positive=True)
    tight = flt.Statement("one_step", lhs="||f'(w0)||^2", relation="<=", expr=2 * drop / eta)
    loose = flt.Statement("one_step_loosened", lhs="||f'(w0)||^2", relation="<=", expr=sp.Rational(999, 1000) * 2 * drop / eta)

    def quantity(case):
        a, x, w0 = case
        e = x / a
        w1 = (1 - e * a) * w0
        return (a * w0) ** 2, {"drop": a / 2 * (w0**2 - w1**2), "eta": e}

    cases = st.tuples(st.floats(0.1, 10.0), st.floats(0.01, 1.0), st.floats(0.5, 2.0))
    assert assert_statement(tight, quantity, cases, max_examples=200) > 0
    with pytest.raises(BoundViolated) as info:
        assert_statement(loose, quantity, cases, max_examples=200)
    assert info.value.ratio > 1


# ----------------------------------------------------------------------------- issue 21, item 4
def _toy_statement():
    q = sp.Symbol("q", nonnegative=True)
    return flt.Statement("toy_cap", lhs="q", relation="<=", expr=sp.Integer(1), conditions=[
        flt.Condition(q <= 2, "q <= 2")])


def test_check_case_returns_the_ratio_and_raises_on_a_violation():
    from fltheory.symbolic import ConditionError
    from fltheory.testing import check_case

    claim = _toy_statement()
    assert check_case(claim, 0.25, {"q": 0.25}) == 0.25
    with pytest.raises(BoundViolated) as info:
        check_case(claim, 1.5, {"q": 1.5}, case="my case")
    assert info.value.ratio == 1.5 and "my case" in str(info.value)
    with pytest.raises(ConditionError, match="q <= 2"):     # outside a test: refused by name, not assumed away
        check_case(claim, 3.0, {"q": 3.0})


def test_check_case_in_a_users_own_given_test_targets_and_discards():
    from hypothesis import given, settings as hsettings

    from fltheory.testing import check_case

    claim, seen = _toy_statement(), []

    @hsettings(max_examples=30, database=None, derandomize=True)
    @given(st.floats(0.0, 3.0))
    def mine(q):
        seen.append(check_case(claim, q / 3, {"q": q}))      # q > 2 fails the condition: discarded

    mine()
    assert seen and max(seen) <= 2 / 3 + 1e-12


def _toy_family():
    from fltheory.search import Family, Integer, Real

    return Family([Real("x", 0.0, 1.0), Integer("k", 1, 4)], description="x in [0, 1], k in 1..4")


def test_a_family_as_cases_draws_then_searches_from_the_worst_draws():
    claim = _toy_statement()

    def quantity(p):                           # sup 1 at x = 1, k = 4: a bound 0.999 of it is false
        return p["x"] ** 2 * p["k"] / 4 / 0.999, {"q": p["x"] ** 2 * p["k"] / 4}

    with pytest.raises(BoundViolated) as info:
        assert_statement(claim, quantity, _toy_family(), max_examples=5, search_budget=60)
    assert info.value.ratio > 1

    def fine(p):
        return p["x"] ** 2 * p["k"] / 4, {"q": p["x"] ** 2 * p["k"] / 4}

    n = assert_statement(claim, fine, _toy_family(), max_examples=5, search_budget=40)
    assert 5 < n <= 5 + 40                     # the draws, then the search's instances


def test_assert_statement_takes_max_examples_from_the_loaded_profile():
    from hypothesis import settings as hsettings

    claim, calls = _toy_statement(), []

    def quantity(q):
        calls.append(q)
        return q / 3, {"q": q}

    hsettings.register_profile("fltheory-test-small", max_examples=7)
    previous = hsettings.get_current_profile_name()
    hsettings.load_profile("fltheory-test-small")
    try:
        n = assert_statement(claim, quantity, st.floats(0.0, 2.0))
    finally:
        hsettings.load_profile(previous)
    assert n <= 7 and len(calls) <= 7 + 50     # 7 draws (the targeted phase and shrinking may re-run some)


def test_worst_case_starts_from_initial_instances_and_checks_them():
    from fltheory import validation as V
    from fltheory.search import worst_case

    fam = _toy_family()
    r = worst_case(lambda p: p["x"] * p["k"], fam, budget=1, initial=[{"x": 1.0, "k": 4}])
    assert r.ratio == 4.0 and r.evaluations == 1
    with pytest.raises(V.InputError, match=r"initial\[0\]\['x'\]"):
        worst_case(lambda p: 0.0, fam, initial=[{"x": 2.0, "k": 1}])
    with pytest.raises(V.InputError, match="lacks"):
        worst_case(lambda p: 0.0, fam, initial=[{"x": 0.5}])
    with pytest.raises(V.InputTypeError, match="initial"):
        worst_case(lambda p: 0.0, fam, initial={"x": 0.5, "k": 1})
