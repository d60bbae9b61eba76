"""Doors, third pass (issue 19): findings of the full-profile harvest, each refused by name at the door.

* a statement evaluated where a symbol declared positive (K, n, L ...) is 0 or negative: refused naming that symbol
  (its domain), where it returned NaN or inf;
* the AFL-DGA simulator with a step size that makes every run leave the floating-point range: refused naming eta
  (partly diverging sweeps are flagged in ``result.diverged``), where it returned NaN silently;
* ``first_crossing`` with arrays of other shapes: a result per column or a refusal naming ``avg``;
* the markers ``per_client`` / ``per_configuration`` refuse never-valid values when they are made.
"""
import warnings

import numpy as np
import pytest

import fltheory as flt
from fltheory.papers.afl_dga import afl_dga
from fltheory.papers.afl_dga.algorithm import afl_dga_loop
from fltheory.papers.defedavg.exact import first_crossing
from fltheory.schedules import anarchic_participation


def _positive_cases():
    sts = flt.statements()
    sts = sts.values() if isinstance(sts, dict) else sts
    for st in sts:
        for sym in st.symbols:
            if sym.name in ("K", "n", "L") and sym.is_positive:
                yield st, sym.name


CASES = list(_positive_cases())


def test_the_positive_symbols_are_found():
    assert len(CASES) >= 10


@pytest.mark.parametrize("bad", [0, -1])
def test_statement_refuses_a_positive_symbol_at_or_below_zero(bad):
    for st, name in CASES:
        kw = {q: (0.01 if q.startswith("eta") else 2) for q in st.parameters}
        kw[name] = bad
        with pytest.raises(flt.FLTheoryError, match=rf"\b{name} must be > 0"):
            st(**kw)


def test_afl_dga_refuses_a_diverging_step_size_by_name():
    fed = flt.random_quadratic_federation(M=3, d=2, kappa=4, seed=0)
    part = anarchic_participation(N=3, T=30, t_d=2, p=0.5, K=2, D=1, seed=0)
    for run in (afl_dga, afl_dga_loop):
        with np.errstate(all="ignore"), pytest.raises(flt.FLTheoryError, match=r"eta=1e\+30 makes it diverge"):
            run(fed, part, eta=1e30, w0=np.ones(2))
    with np.errstate(all="ignore"), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = afl_dga(fed, part, eta=np.array([0.05, 1e30]), w0=np.ones(2))
    assert res.diverged.tolist() == [False, True]
    assert any("left the floating-point range" in str(w.message) for w in caught)
    assert not bool(afl_dga(fed, part, eta=0.05, w0=np.ones(2)).diverged)


@pytest.mark.parametrize("avg", [np.ones((5,)), np.ones((2, 3)), np.ones((3, 2, 2)), [[1.0, 2.0], [3.0]],
                                 np.ones((0,)), np.ones((2, 0)), np.array(1.0), np.array([1.0, np.inf])])
def test_first_crossing_any_shape(avg):
    try:
        out = first_crossing(avg, 1.0)
    except flt.FLTheoryError as exc:
        assert "avg" in str(exc)
        return
    assert np.shape(out) == np.shape(avg)[1:] and np.all(np.asarray(out) == 1.0)


@pytest.mark.parametrize("mark", [flt.per_client, flt.per_configuration])
@pytest.mark.parametrize("bad", ["5", 1j, [1.0, np.nan], []])
def test_markers_refuse_never_valid_values(mark, bad):
    with pytest.raises(flt.FLTheoryError, match=r"\(values\)"):
        mark(bad)


def test_exact_mode_refuses_huge_powers_before_building_them():
    """Every statement, each parameter in turn at 10**30 and 10**30/7 (the others 3 or 1/3): the exact value, or a
    named refusal, never a number of 10**30 digits in the making.  The missed cases were a power inside another
    power's base (substituting the outer one evaluated the inner), a fractional exponent (b**(p/q) takes
    b**(p//q) exactly) and a power around one of FedDelAvg's named quantities (substituting evaluated it)."""
    import signal
    from fractions import Fraction

    from fltheory.symbolic import ConditionError, StatementError

    def stuck(*_):
        raise AssertionError("exact evaluation did not finish within 60 s (a huge power was built)")

    old = signal.signal(signal.SIGALRM, stuck)
    signal.alarm(60)   # a liveness guard for the whole loop (about 7 s), not a timing claim
    outcomes = {"value": 0, "refused": 0}
    try:
        for big in (10**30, Fraction(10**30, 7)):
            for st in flt.statements().values():
                for sym in st.symbols:
                    vals = {s.name: big if s is sym else (3 if s.is_integer else Fraction(1, 3)) for s in st.symbols}
                    try:
                        st.evaluate(**vals)
                        outcomes["value"] += 1
                    except (StatementError, ConditionError):
                        outcomes["refused"] += 1
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    assert outcomes["value"] > 100 and outcomes["refused"] > 100


def test_full_harvest_findings_of_stop_27_are_refused_by_name():
    """What the full harvest found in the entry points added since its last run: crashes and a silent overflow."""
    from fltheory import search, verify
    from fltheory.papers.local_adaptivity import algorithm as LA
    from fltheory.papers.local_adaptivity import exact as LX

    for bad in (np.nan, 0, 2.5, object(), np.array(np.nan), "tdma", [1]):
        for name in ("papers", "names"):
            with pytest.raises(flt.InputTypeError, match=f"{name} must be a list"):
                verify.run(**{name: bad})
    fed = flt.random_quadratic_federation(M=3, d=2, batch=4, seed=0, sigma2=0.1)
    with pytest.raises(flt.InputError, match=r"do not broadcast: problem \(4,\), eta \(2,\)"):
        LA.client_update(fed, x=np.zeros(2), eta=flt.per_configuration([0.1, 0.2]), tau=2)
    with pytest.raises(flt.InputError, match=r"do not broadcast: problem \(4,\), alpha \(3,\)"):
        LA.fedopt_loop(fed, x0=np.zeros(2), rounds=2, eta=0.1, tau=2, alpha=flt.per_configuration([0.1, 0.2, 0.3]))
    swept = LA.fedopt_loop(fed, x0=np.zeros(2), rounds=2, eta=0.1, tau=2, alpha=flt.per_configuration([.1, .2, .3, .4]))
    assert swept.x.shape == (4, 2)
    one = flt.random_quadratic_federation(M=3, d=2, seed=0, sigma2=0.1)
    for eta in (2.5, 1e30):   # the moments leave the float range: flagged, not NaN in silence nor 'x' refused
        m = LX.noise_moments(one, eta=eta, tau=2, alpha=1.0, x0=np.zeros(2), T=400)
        assert bool(m.diverged)
    assert not bool(LX.noise_moments(one, eta=0.01, tau=2, alpha=1.0, x0=np.zeros(2), T=4).diverged)
    family = search.Family(params=[search.Real("a", 0.0, 1.0)], description="one parameter")
    with pytest.raises(flt.InputError, match="batched=True"):
        search.worst_case(lambda p: p["a"], family, budget=8, batched=True)


def test_full_harvest_class_b_of_stop_28_names_the_mutated_parameter():
    """The full harvest's last class-b outcomes (a package error naming a related parameter, not the one at fault):
    each message now names the parameter that was given."""
    from fltheory import claims, testing, tuning, verify
    from fltheory.papers.defedavg.exact import niid_federation
    from fltheory.papers.defedavg.tuning import best_step_size
    from fltheory.papers.feddelavg.exact import alpha_comparison
    from fltheory.papers.local_adaptivity import bounds as LB
    from fltheory.papers.local_adaptivity.exact import fixed_point

    def says(call, *words):
        with pytest.raises(flt.FLTheoryError) as err:
            call()
        assert all(w in str(err.value) for w in words), (words, str(err.value))

    says(lambda: verify.run(papers=[], names=["afl_dga.theorem1"]), "papers=[]", "afl_dga.theorem1")
    says(lambda: verify.run(only="lemma5", names=["afl_dga.theorem1"]), "only='lemma5'")
    says(lambda: verify.run(names=["afl_dga.no_such_check"]), "names", "no_such_check")
    says(lambda: claims.render("{{verdict:demo.half}}", {}), "verdicts")
    says(lambda: testing.step_sizes(LB.h_sgd, name="5", mu=1.0, L=3.0, k=2), "name must be", "'5'")
    says(lambda: flt.statement("5"), "name:")
    says(lambda: tuning.tuned_names("eta", []), "allowed=[]")
    says(lambda: niid_federation(a=[1.0], b=np.ones((2, 2)), sigma2=1.0), "a.size", "a of shape (1,)")
    says(lambda: best_step_size(a=[1.0, 0.5, 0.2], sigma2=1.0, N=2, n=1, K=1, T=5, lam=1, x0=[2.0, 2.0]),
         "x0", "eigenvalue in a")
    fed = flt.random_quadratic_federation(M=3, d=2, kappa=4, seed=2)
    says(lambda: alpha_comparison(fed, eta=0.1, tau=4, Deltas=0, alpha_bound=[1.0, 0.8, 0.6]), "Deltas", "(3,)")
    says(lambda: fixed_point(fed, eta=1e30, tau=20), "eta", "overflow")
