"""The researcher's surface: statements by name, unambiguous batch axes, NaN at the door,
statement evaluation errors and masks, symbols that say which constant they are, LaTeX."""
import importlib
import inspect

import numpy as np
import pytest
import sympy as sp

import fltheory as flt
from fltheory.papers.feddelavg import bounds as FB
from fltheory.papers.feddelavg import exact as FE
from fltheory.papers.local_adaptivity import algorithm as LAA
from fltheory.papers.local_adaptivity import bounds as LB
from fltheory.papers.local_adaptivity import exact as LE
from fltheory.problems import (LinearFederation, PseudoHuberFederation, QuadraticFederation,
                               SeparableCosineFederation)
from fltheory.verify import PAPERS

H = np.array([[[2, .5], [.5, 1]], [[1, 0], [0, 4]], [[3, -1], [-1, 2]]], float)
XO = np.array([[1.0, 0], [0, 2], [-1, -1]])
FED = QuadraticFederation(H, XO, [.5, .3, .2])


# ----------------------------------------------------------------------------- statements by name
def test_every_statement_is_found_by_its_full_name():
    listing = flt.statements()
    assert len(listing) > 100
    for full, st in listing.items():
        paper, name = full.split(".", 1)
        assert paper in PAPERS and st.name == name
        assert flt.statement(full) is st
    assert set(flt.statements("feddelavg")) == {k for k in listing if k.startswith("feddelavg.")}
    assert flt.statement("feddelavg.theorem1").equation == "(15)"
    assert flt.statement("h_sgd") is LB.h_sgd                       # a bare name that only one paper has


def test_unknown_or_ambiguous_names_are_refused_with_close_matches():
    with pytest.raises(flt.StatementError, match=r"did you mean 'feddelavg\.theorem1'"):
        flt.statement("feddelavg.theorem_1")
    with pytest.raises(flt.StatementError, match=r"did you mean 'local_adaptivity\.h_sgd'"):
        flt.statement("local_adaptivity.hsgd")
    with pytest.raises(flt.StatementError, match="ambiguous.*feddelavg.theorem1"):
        flt.statement("theorem1")
    with pytest.raises(flt.StatementError, match="papers: local_adaptivity"):
        flt.statement("nopaper.zzzzqqq")
    with pytest.raises(flt.InputTypeError, match="name"):
        flt.statement(3)
    with pytest.raises(flt.InputError, match="paper"):
        flt.statements("nopaper")


def _clashes(paper):
    bounds = importlib.import_module(f"fltheory.papers.{paper}.bounds")
    names = set(flt.statements(paper))
    return {f"{paper}.{n}" for n, obj in vars(bounds).items()
            if f"{paper}.{n}" in names and callable(obj) and not isinstance(obj, flt.Statement)
            and not n.startswith("_") and inspect.isfunction(obj)}


@pytest.mark.parametrize("paper", PAPERS)
def test_no_public_function_shadows_a_statement_of_the_same_name(paper):
    assert _clashes(paper) == set()


def test_feddelavg_functions_evaluate_the_renamed_statements():
    kw = dict(eta=0.02, beta=1.0, L=1.0, delta=0.5, tau=10, Delta=9)
    assert float(FB.alpha_star(**kw)) == float(flt.statement("feddelavg.alpha_star_total")(**kw))
    kw.pop("delta")
    assert float(FB.delta_threshold(**kw)) == float(flt.statement("feddelavg.delta_threshold_iff")(**kw))
    assert flt.statement("feddelavg.delta_threshold_iff").corrects == "delta_threshold_printed"
    p = dict(alpha=0.5, eta=0.02, beta=1.0, L=1.0, delta=0.5, tau=10, Delta=9)
    assert float(FB.psi_inf(**p)) == pytest.approx(float(flt.statement("feddelavg.psi_inf_def")(**p)), rel=1e-12)


# ----------------------------------------------------------------------------- batch axes
def test_a_plain_1d_eta_of_length_M_is_refused_as_ambiguous():
    for call in (lambda e: LE.fixed_point(FED, eta=e, tau=4), lambda e: LE.round_map(FED, eta=e, tau=4),
                 lambda e: LAA.fedopt(FED, x0=np.zeros(2), rounds=1, eta=e, tau=2),
                 lambda e: LE.fixed_point(FED, eta=0.1, tau=np.array([2, 3, 4]))):
        with pytest.raises(flt.InputError, match=r"per client or one per configuration\? Write per_client"):
            call(np.array([0.1, 0.2, 0.05]))


def test_per_client_and_per_configuration_mean_what_they_say():
    v = np.array([0.1, 0.2, 0.05])
    one = LE.fixed_point(FED, eta=flt.per_client(v), tau=4).x
    assert one.shape == (2,)
    np.testing.assert_allclose(one, LE.fixed_point(FED, eta=v[None, :], tau=4).x[0], rtol=1e-14, atol=1e-15)
    sweep = LE.fixed_point(FED, eta=flt.per_configuration(v), tau=4).x
    assert sweep.shape == (3, 2)
    for b, e in enumerate(v):
        np.testing.assert_allclose(sweep[b], LE.fixed_point(FED, eta=float(e), tau=4).x, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(sweep, LE.fixed_point(FED, eta=v[:, None], tau=4).x, rtol=1e-14, atol=1e-15)
    run = LAA.fedopt(FED, x0=np.zeros(2), rounds=3, eta=flt.per_client(v), tau=flt.per_client([1, 2, 3]))
    assert run.x.shape == (2,)
    runs = LAA.fedopt(FED, x0=np.zeros(2), rounds=3, eta=flt.per_configuration(v), tau=2)
    assert runs.x.shape == (3, 2)
    with pytest.raises(flt.InputError, match="last axis of M=3"):
        LE.fixed_point(FED, eta=flt.per_client([0.1, 0.2]), tau=4)


def test_feddelavg_parameters_are_per_configuration_only():
    kw = dict(tau=4, Delta=2, alpha=0.5)
    a = FE.spectral_radius(FED, eta=np.array([0.05, 0.1, 0.2]), **kw)
    b = FE.spectral_radius(FED, eta=flt.per_configuration([0.05, 0.1, 0.2]), **kw)
    assert a.shape == (3,)
    np.testing.assert_array_equal(a, b)
    for name in ("eta", "alpha", "Delta"):
        args = dict(eta=0.05, tau=4, Delta=2, alpha=0.5)
        args[name] = flt.per_client([1, 1, 1]) if name == "Delta" else flt.per_client([0.1, 0.2, 0.3])
        with pytest.raises(flt.InputError, match=f"{name} is common to every client"):
            FE.spectral_radius(FED, **args)


def test_wrappers_refuse_wrapping_twice():
    with pytest.raises(flt.InputTypeError, match="per_client takes the values"):
        flt.per_client(flt.per_configuration([1.0]))


# ----------------------------------------------------------------------------- NaN at the door
BAD = np.nan


@pytest.mark.parametrize("name, build", [
    ("H", lambda: QuadraticFederation(np.where(H == 2, BAD, H), XO)),
    ("x_opt", lambda: QuadraticFederation(H, np.where(XO == 2, np.inf, XO))),
    ("weights", lambda: QuadraticFederation(H, XO, [BAD, .5, .5])),
    ("sigma2", lambda: QuadraticFederation(H, XO, sigma2=BAD)),
    ("noise_cov", lambda: QuadraticFederation(H, XO, noise_cov=np.full((3, 2, 2), BAD))),
    ("const", lambda: QuadraticFederation(H, XO, const=[0.0, np.inf, 0.0])),
    ("a", lambda: SeparableCosineFederation(np.array([[1.0], [BAD]]), np.zeros((2, 1)), np.zeros((2, 1)))),
    ("b", lambda: PseudoHuberFederation(np.array([[0.0], [BAD]]))),
    ("c", lambda: LinearFederation(np.array([[0.0], [np.inf]]))),
    ("precond", lambda: LE.fixed_point(FED, eta=0.1, tau=3, precond=np.full((3, 2, 2), BAD))),
    ("precond", lambda: LAA.fedopt(FED, x0=np.zeros(2), rounds=1, eta=0.1, tau=2, client_opt="precond",
                                   precond=np.full((3, 2, 2), BAD))),
])
def test_nan_or_inf_anywhere_is_refused_naming_the_parameter(name, build):
    with pytest.raises(flt.InputError, match=rf"^{name} must be finite"):
        build()


def test_statement_evaluation_with_nan_or_wrong_shapes_is_a_statement_error():
    st = LB.h_sgd
    with pytest.raises(flt.StatementError, match="h_sgd: eta must be finite"):
        st(eta=np.array([0.1, np.nan]), mu=1.0, L=3.0, k=2)
    with pytest.raises(flt.StatementError, match="h_sgd: mu must be a finite"):
        st.evaluate(eta=sp.Rational(1, 10), mu=float("inf"), L=3, k=2)
    with pytest.raises(flt.StatementError, match="do not broadcast"):
        st(eta=np.ones(3), mu=np.ones(2), L=3.0, k=2)
    with pytest.raises(flt.StatementError, match="exact evaluation takes one number"):
        st.evaluate(eta=np.ones(2), mu=1, L=3, k=2)
    with pytest.raises(flt.StatementError, match="grid axis eta must be a scalar or 1-D"):
        st.grid(eta=np.ones((2, 2)), mu=1.0, L=3.0, k=2, outer=True)
    with pytest.raises(flt.StatementError, match="L must be finite"):
        st.grid(eta=np.array([0.1]), mu=1.0, L=np.array([np.nan, 1.0]), k=2, outer=True)


def test_a_grid_can_return_where_the_conditions_hold_instead_of_raising():
    st = LB.h_sgd
    eta, L = np.array([0.1, 0.4, 0.6]), np.array([1.0, 3.0])
    with pytest.raises(flt.ConditionError):
        st.grid(eta=eta, mu=1.0, L=L, k=2, outer=True)
    value, holds = st.grid(eta=eta, mu=1.0, L=L, k=2, outer=True, mask=True)
    np.testing.assert_array_equal(holds, eta[:, None] * (L[None, :] + 1.0) <= 2)
    np.testing.assert_allclose(value, np.broadcast_to((1 - eta[:, None]) ** 4, (3, 2)))
    np.testing.assert_array_equal(st.holds(eta=eta[:, None], mu=1.0, L=L, k=2), holds)
    assert isinstance(st(eta=0.1, mu=1.0, L=3.0, k=2, mask=True), flt.Evaluation)


# ----------------------------------------------------------------------------- symbols
def test_feddelavg_says_which_L_and_which_M():
    assert "Lipschitz" in FB.MEANINGS["L"] and "NOT the smoothness" in FB.MEANINGS["L"]
    assert "smoothness" in FB.MEANINGS["beta"] and "not the number of clients" in FB.MEANINGS["M"]
    assert {p for st in FB.STATEMENTS for p in st.parameters} <= set(FB.MEANINGS)
    fed = flt.random_quadratic_federation(M=3, d=2, kappa=4, seed=2)
    c = FE.quadratic_constants(fed)
    assert float(c.beta_smoothness) == float(fed.L) and float(c.L_lipschitz) > 0
    cmp = FE.alpha_comparison(fed, eta=0.1, tau=4, Deltas=[0, 2])
    assert cmp.L is cmp.L_lipschitz and float(cmp.L_lipschitz) == float(c.L_lipschitz)


# ----------------------------------------------------------------------------- LaTeX
def test_statements_render_in_jupyter_and_read_as_the_paper_writes():
    tex = LB.h_sgd._repr_latex_()
    assert tex.startswith("$\\displaystyle ") and tex.endswith("$")
    assert r"\left(1 - \eta \mu\right)^{2 k}" in LB.h_sgd.latex()              # not (-eta mu + 1)
    t3 = LB.theorem3_printed.latex()
    assert "T^{2/3}" in t3 and r"\left|" not in t3                            # folded powers, no |D| for D > 0
    assert r"\tau \in \mathbb{Z}" in FB.epsilon.latex()                       # not tau = floor(tau)
    assert r"\frac{\tau}{\alpha} - \Delta" in FB.epsilon.latex()


def test_no_tautological_conditions_are_rendered():
    lemma = LB.lemma2_14.latex()
    assert r"\|\mathbb E[x-y]\|^2 \geq 0" not in lemma and r"\mu > 0" in lemma   # a norm is >= 0 anyway
    assert "D \\geq 0" not in LB.theorem3_printed.latex()                       # implied by D > 0 beside it
    eta = sp.Symbol("eta", positive=True)
    st = flt.Statement("t", lhs="y", relation="<=", expr=eta, conditions=flt.symbolic.conditions(
        (eta > 0, "eta > 0"), (eta <= 1, "eta <= 1"), (eta <= 1, "eta <= 1 again")))
    assert st.latex() == r"y \le \eta\quad\text{if } \eta \leq 1"
    for full, s in flt.statements().items():
        text = s.latex()
        assert r"\text{True}" not in text and r"\text{False}" not in text, full


# --- statement grids: paired by default, the outer product said out loud (issue 23, item 2) ----------

def test_calling_a_statement_pairs_arrays_and_grid_outer_takes_every_combination():
    st = LB.h_sgd
    eta, L = np.array([0.1, 0.2, 0.3]), np.array([1.0, 2.0, 3.0])
    paired = st(eta=eta, mu=1.0, L=L, k=2)
    assert paired.shape == (3,)
    outer = st.grid(eta=eta, mu=1.0, L=L, k=2, outer=True)
    assert outer.shape == (3, 3)
    np.testing.assert_array_equal(np.diagonal(outer), paired)
    np.testing.assert_array_equal(st.grid(eta=eta, mu=1.0, L=L, k=2, outer=False), paired)


def test_grid_without_outer_still_works_but_warns():
    st = LB.h_sgd
    eta, L = np.array([0.1, 0.2]), np.array([1.0, 2.0, 3.0])
    with pytest.warns(DeprecationWarning, match="outer=True"):
        old = st.grid(eta=eta, mu=1.0, L=L, k=2)
    np.testing.assert_array_equal(old, st.grid(eta=eta, mu=1.0, L=L, k=2, outer=True))


def test_a_grid_past_its_point_budget_is_refused_up_front_with_its_size():
    import time

    st = flt.statement("feddelavg.theorem1")
    axes = {name: 1.0 for name in st.parameters}
    big = np.linspace(0.1, 0.2, 1000)
    axes.update(eta=big, L=big, delta=big)     # 10^9 points: refused before anything is evaluated
    t0 = time.perf_counter()
    with pytest.raises(flt.GridSizeError, match=r"1,000,000,000 points, over the budget of 10,000,000"):
        st.grid(outer=True, **axes)
    assert time.perf_counter() - t0 < 20.0   # a liveness bound: refused up front (ms), not after the work (minutes)
    st2 = LB.h_sgd
    with pytest.raises(flt.GridSizeError, match="eta \\(3\\) x L \\(3\\) has 9 points"):
        st2.grid(eta=np.ones(3) * 0.1, mu=1.0, L=np.ones(3), k=2, outer=True, max_points=8)
    assert st2.grid(eta=np.ones(3) * 0.1, mu=1.0, L=np.ones(3), k=2, outer=True, max_points=9).shape == (3, 3)
    with pytest.raises(flt.InputTypeError, match="outer"):
        st2.grid(eta=np.ones(3) * 0.1, mu=1.0, L=np.ones(3), k=2, outer="yes")
