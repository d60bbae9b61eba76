"""Coverage of the local adaptivity paper (issue 22, item 3): every numbered result has a row in the ledger's
RESULTS with the checks that check it, every check exists and every registered check serves some result; the
checks added for results that had none (Lemma 1, (9), (10)) hold and can fail."""
import types

import numpy as np
import pytest

from fltheory import claims, verify
from fltheory.papers.local_adaptivity import checks as C
from fltheory.papers.local_adaptivity import ledger

PAPER = "local_adaptivity"
# the paper's named results (Definition 1, Assumptions 1-5, Theorems 1-3, Lemmas 1-4, Algorithm 1)
NAMED = {"Definition 1", "Assumption 1", "Assumption 2", "Assumption 3", "Assumption 4", "Assumption 5",
         "Theorem 1", "Theorem 2", "Theorem 3", "Lemma 1", "Lemma 2", "Lemma 3", "Lemma 4", "Algorithm 1"}
NO_CLAIM = ("definition", "assumption", "algorithm line")


def _names():
    return {c.name for c in verify.registry([PAPER])}


def _check(what):
    return next(c for c in verify.registry([PAPER]) if c.name == f"{PAPER}.{what}")


def test_every_named_result_of_the_paper_has_a_row():
    labels = [r.label for r in ledger.RESULTS]
    assert all(r.paper == PAPER for r in ledger.RESULTS) and len(set(labels)) == len(labels)
    assert NAMED <= {" ".join(label.split()[:2]) for label in labels}


def test_only_definitions_assumptions_and_algorithm_lines_have_no_check_and_each_says_why():
    for r in ledger.RESULTS:
        if not r.checks:
            assert r.kind in NO_CLAIM and r.why, r.label
        else:
            assert not r.why, r.label


def test_results_follow_the_papers_order():
    """Rows labelled by an equation alone ("(61)") have increasing numbers, and so do the theorems, lemmas and
    assumptions among themselves."""
    eqs = [int(r.label[1:].split(")")[0].split("/")[0]) for r in ledger.RESULTS if r.label.startswith("(")]
    assert eqs == sorted(eqs) and len(eqs) > 20
    for name in ("Theorem", "Lemma", "Assumption"):
        nums = [int(r.label.split()[1]) for r in ledger.RESULTS if r.label.startswith(name)]
        assert nums == sorted(nums) and set(nums) == set(range(1, max(nums) + 1)), name


def test_the_coverage_table_lists_every_row():
    table = claims.coverage_table(PAPER)
    n = sum(1 for r in ledger.RESULTS if r.checks)
    assert f"{n}/{len(ledger.RESULTS)} numbered results have a check" in table
    assert all(r.label in table for r in ledger.RESULTS)


@pytest.mark.parametrize("what", ["lemma1", "eq9_skewed_gradient", "taylor10"])
def test_the_added_checks_hold(what):
    v = _check(what).run(quick=True, seed=0)
    assert v.status in ("holds", "tight") and v.ok and v.instances >= 6


def test_eq9_fails_when_the_simulated_local_changes_are_off(monkeypatch):
    """The identity is sensitive: local changes 1e-6 off (relative) are refuted at tolerance 1e-10."""
    real = C.client_update
    monkeypatch.setattr(C, "client_update", lambda *a, **k: types.SimpleNamespace(delta=real(*a, **k).delta * (1 + 1e-6)))
    v = _check("eq9_skewed_gradient").run(quick=True, seed=0)
    assert v.status == "violated" and v.worst_ratio > 1e3


def test_lemma1_fails_with_a_coarse_integral_of_the_hessian(monkeypatch):
    """Two-point Gauss-Legendre instead of forty: the integral of the Hessian is off beyond the 1e-10 tolerance."""
    nodes, weights = np.polynomial.legendre.leggauss(2)
    monkeypatch.setattr(C, "_GL_NODES", nodes)
    monkeypatch.setattr(C, "_GL_WEIGHTS", weights)
    assert _check("lemma1").run(quick=True, seed=0).status == "violated"


def test_taylor10_bound_tightened_is_refuted():
    """The quick search starts at an instance attaining the bound (TAYLOR10_START), so 0.9 times it is violated."""
    v = _check("taylor10").planted(0.9).run(quick=True, seed=0)
    assert v.status == "violated" and v.search["ratio"] > 1.1


def test_taylor10_value_is_the_exact_remainder_of_10():
    """On one client with tau = 1 the first-order term of (10) is exact (x - A(x) = eta P grad F) and the bound is 0."""
    p = {"M": 2, "d": 2, "seed": 3, "w1": 0.4, "h1": 2.0, "h2": 0.5, "kappa": 4.0, "p1": 1.5, "p2": 0.7,
         "p_aniso": 3.0, "c2": 1.0, "t1": 1, "t2": 1, "u1": 0.5, "u2": 0.9, "cancel": 0, "eps": 1.0}
    fed, P, eta, tau = C._bias_instance(p)
    value, bound = C.taylor10_remainder(fed, P, eta, tau)
    assert value < 1e-14 and bound < 1e-13
    value, bound = C.taylor10_remainder(fed, P, eta, tau + 4)
    assert 0.01 < value < bound


def test_limit8_gap_instance_has_the_limit_x_star_exactly():
    """In rational arithmetic: the preconditioners differ, yet (8) gives x* = (3, 5)/14 exactly, and the two-client
    formula lim - x* = -A0^-1 (N_1 - N_2) g is zero because v = (18, -11) is orthogonal to g."""
    import sympy as sp

    H1, H2 = sp.Matrix([[2, 1], [1, 3]]), sp.Matrix([[1, 0], [0, 2]])
    x1, x2 = sp.Matrix([0, 0]), sp.Matrix([1, 1])
    v = sp.Matrix([18, -11])
    P1, P2 = sp.eye(2) + v * v.T / 445, sp.eye(2)
    half = sp.Rational(1, 2)
    xs = (half * H1 + half * H2).solve(half * H1 * x1 + half * H2 * x2)
    A0 = half * P1 * H1 + half * P2 * H2
    lim = A0.solve(half * P1 * H1 * x1 + half * P2 * H2 * x2)
    assert xs == sp.Matrix([sp.Rational(3, 14), sp.Rational(5, 14)]) and lim == xs and P1 != P2
    g = half * H1 * (xs - x1)
    assert (v.T * g)[0] == 0 and -A0.inv() * (P1 - P2) * g == sp.zeros(2, 1)
    # and with v not orthogonal to g the gap is there
    P1b = sp.eye(2) + sp.Matrix([1, 0]) * sp.Matrix([1, 0]).T
    lim_b = (half * P1b * H1 + half * H2).solve(half * H2 * x2)
    assert lim_b != xs


def test_limit8_gap_is_violated_with_a_vanishing_bias():
    v = _check("limit8_gap").run(quick=True, seed=0)
    assert v.status == "violated" and v.ok and v.counterexample["value"] < 1e-15
    p = v.counterexample["params"]
    assert p["bias_eta_0_1"] > 5 * p["bias_eta_0_01"] > 25 * p["bias_eta_0_0001"] > 0
