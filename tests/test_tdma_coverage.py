"""Issue 22, item 3, for TDMA: every numbered result of Song & Hong is listed in the ledger's RESULTS with the
checks that check it, and the checks added for results that had none or were checked under a hypothesis the paper
does not state -- (9)-(10) and (15)-(16) as printed (G = ceil(N/S), any N), (13)-(14), (18), (25), (26), (34)-(36)
and the algorithm's equations -- give their verdicts, with the counterexamples the docs quote, and can fail."""
import functools
import re
from pathlib import Path

import numpy as np
import pytest

from fltheory import claims, verify
from fltheory.papers.tdma import bounds as B
from fltheory.papers.tdma import checks as C
from fltheory.papers.tdma import exact as X
from fltheory.papers.tdma import timing as tm
from fltheory.papers.tdma.ledger import FINDINGS, RESULTS

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "papers" / "tdma.rst").read_text()


@functools.lru_cache(maxsize=None)
def _checks():
    return {c.name: c for c in verify.registry(["tdma"])}


@functools.lru_cache(maxsize=None)
def _verdict(name):
    return _checks()[f"tdma.{name}"].run(quick=True, seed=0)


def _numbers(label):
    out = set()
    for a, b in re.findall(r"\((\d+)\)(?:-\((\d+)\))?", label):
        out |= set(range(int(a), int(b or a) + 1))
    return out


def test_results_are_well_formed_in_the_papers_order_and_cover_every_numbered_equation():
    labels = [r.label for r in RESULTS]
    assert len(labels) == len(set(labels))
    for r in RESULTS:
        assert r.paper == "tdma" and r.kind in claims.RESULT_KINDS and r.summary
        assert r.checks or r.why, r.label
        if not r.checks:   # only definitions and assumptions go without a check
            assert r.kind in ("definition", "assumption"), r.label
    first = [min(_numbers(r.label)) for r in RESULTS if _numbers(r.label)]
    assert first == sorted(first)
    covered = set().union(*(_numbers(r.label) for r in RESULTS))
    assert set(range(1, 37)) <= covered, sorted(set(range(1, 37)) - covered)   # (1)-(36): the main text
    for name in ("Assumption 1", "Assumption 2", "Assumption 3", "Lemma 1", "Lemma 2", "Lemma 3", "Lemma 4",
                 "Theorem 1", "Proposition 1", "Algorithm 1", "Algorithm 2", "Table I"):
        assert any(r.label.startswith(name) for r in RESULTS), name
    for app in ("A.1", "B.1", "C.1", "D.1", "D.2"):
        assert any(app in r.label for r in RESULTS), app


def test_31_is_an_equation_everywhere():
    """(31) is a numbered equation of Section V ((12) rewritten for Algorithm 2): not a remark, not an algorithm line."""
    (row,) = [r for r in RESULTS if r.label == "(31)"]
    assert row.kind == "equation"
    assert _checks()["tdma.khat_idfl"].falsifies == "equation"
    (finding,) = [f for f in FINDINGS if f.statement.startswith("(31)")]
    assert finding.false.startswith("the equation:") and "remark" not in finding.text()
    assert "numbered\nequation of Section V" in DOC


# ----------------------------------------------------------------------------- (9)-(10), (15)-(16) as printed
def test_10_and_15_as_printed_fail_exactly_when_S_does_not_divide_N():
    v = _verdict("tau_async_printed")
    assert v.ok and v.status == "violated" and v.falsifies == "equation"
    ce = v.counterexample
    assert (ce["params"]["N"], ce["params"]["S"], ce["params"]["tau_comp"]) == (5, 2, 30)
    assert (ce["value"], ce["bound"]) == (16.0, 11.0)
    for s in C._tau_async_printed_samples(True, 0):      # every mismatch has S not dividing N; S | N agrees
        p = s.params
        if p["N"] % p["S"] == 0:
            assert s.value == pytest.approx(s.bound, rel=1e-12)
            assert s.bound == float(B.tau_async(N=p["N"], S=p["S"], tau_comp=p["tau_comp"], r=p["r"]))
    assert any(s.value != s.bound for s in C._tau_async_printed_samples(True, 0)[1:])   # not only the referees' one
    v = _verdict("staleness_printed")
    assert v.ok and v.status == "violated" and v.counterexample["params"]["N"] == 5
    for s in C._staleness15_samples(True, 0, printed=True):
        if s.params["N"] % s.params["S"] == 0:
            assert s.value == 0.0, s.params
    t = tm.tdma_schedule(K=6, **C.PRINTED_TIMING_INSTANCE)
    assert t.staleness[3:].tolist() == [[2, 1]] * 3 and float(B.staleness_printed(N=5, S=2, k=3)) == 2
    assert C.slots_per_round(5, 2, 30, 1) == 16.0 and float(B.tau_async_printed(N=5, S=2, tau_comp=30, r=1)) == 11.0
    assert "a round takes 16 slots on average, (10) says 11" in DOC.replace("\n", " ")


def test_the_forms_with_S_dividing_N_are_the_corrected_ones_and_say_so():
    for name in ("tau_async", "staleness"):
        st = B.BY_NAME[name]
        assert st.status == "corrected" and st.corrects == f"{name}_printed"
        assert any("added" in c.text for c in st.conditions)
        assert not B.BY_NAME[f"{name}_printed"].conditions           # as printed: no divisibility
        assert _verdict(name).status in ("holds", "tight")
    assert B.BY_NAME["staleness_general"].corrects == "staleness_printed"


# ----------------------------------------------------------------------------- (31) at alpha = 0
def test_31_fails_at_alpha_0_k_G_too():
    """Without intentional delay, k = G: (31)'s first branch (k <= G - alpha) gives w_0, (12) and the simulator w_1."""
    for N, S in ((4, 2), (6, 2), (3, 1)):
        G = N // S
        t = tm.tdma_schedule(N=N, S=S, tau_comp=2, r=1, K=G + 1, alpha=0)
        assert int(t.khat[G, 0]) == 1
        assert float(B.khat_idfl(G=G, alpha=0, k=G)) == 0
        assert float(B.khat_idfl_corrected(G=G, alpha=0, k=G)) == 1
    rows = [s for s in C._khat_samples(True, 0, corrected=False) if s.params["alpha"] == 0]
    assert rows and any(s.value > 0 for s in rows)                 # covered by the check, and violated there
    assert all(s.value == 0 for s in C._khat_samples(True, 0, corrected=True) if s.params["alpha"] == 0)
    assert _verdict("khat_idfl").status == "violated" and _verdict("khat_idfl_corrected").status == "holds"


# ----------------------------------------------------------------------------- (25), (26)
def test_25_and_26_fail_on_lemma_1s_instance():
    v = _verdict("round_descent")
    assert v.ok and v.falsifies == "proof step"
    ce = v.counterexample
    assert ce["params"]["family"] == "f = w^2/2" and ce["params"]["k"] == 0
    assert (ce["value"], ce["bound"]) == (pytest.approx(0.405, abs=1e-12), pytest.approx(0.4025, abs=1e-12))
    v = _verdict("summed_descent")
    assert v.ok and v.falsifies == "proof step"
    ce = v.counterexample
    assert ce["params"]["horizon"] == 0
    assert (ce["value"], ce["bound"]) == (pytest.approx(0.195, abs=1e-12), pytest.approx(0.19, abs=1e-12))
    flat = DOC.replace("\n", " ")
    assert "0.405` against 0.4025" in flat and "left side of 0.195 against a right side of 0.19" in flat
    # by hand: w_1 = 0.9, f(w_1) = 0.405; (25) = 0.5 - 0.05 + (0.01 - 0.2)/8 * 2; (26) at K = 0: 0.1 + 0.095 vs 0.19
    assert float(B.round_descent(f_k=0.5, a_k=1, eta=0.1, L=1, Gamma=0, M=1, sigma=0, S=2, B=1, sum_gf=2,
                                 sum_window=0, sum_d=0)) == pytest.approx(0.4025)
    assert float(B.summed_descent(f_drop=0.095, eta=0.1, L=1, Gamma=0, M=1, sigma=0, S=2, B=1, K=0,
                                  sum_d_all=0)) == pytest.approx(0.19)


def test_26_is_25_summed():
    """(26)'s two sides are (25) summed over k = 0..K, times 2/(K+1): where (25) holds with room in every round, so
    does (26); their gaps add up exactly."""
    p, t, z, cs = C.quadratic_instances(0, True)[0]
    lhs, rhs = C._summed_descent_terms(p, z, cs.Gamma)
    gap25 = np.asarray(C._round_descent_rhs(p, z, cs.Gamma), float) - z.f[1:]
    n = len(gap25)
    assert np.allclose((rhs - lhs) * np.arange(1, n + 1) / 2, np.cumsum(gap25), rtol=1e-9, atol=1e-12)


def test_the_new_bound_checks_are_searched():
    for name in ("round_descent", "summed_descent", "smoothness_descent"):
        c = _checks()[f"tdma.{name}"]
        assert c.family is not None and _verdict(name).search is not None, name
    res = _checks()["tdma.summed_descent"].search(quick=True, seed=0)
    assert res.ratio > 1                                       # the search finds violations of its own


# ----------------------------------------------------------------------------- (18), (34)-(36), the algorithm
def test_18_is_tight_and_a_planted_tightening_is_refuted():
    assert _verdict("smoothness_descent").status == "tight"
    assert _checks()["tdma.smoothness_descent"].planted(0.9).run(quick=True, seed=0).status == "violated"
    s = C._smooth_evaluate(dict(m=2, seed=3, h="logcosh", L=2.0, A_spread=0.5, dist=1.0, align=0.3, w_scale=1.0))
    assert 0 < s.value < s.bound                                # log cosh: strictly inside


def test_34_36_the_condition_decides_every_alpha_both_ways():
    v = _verdict("prop1_condition")
    assert v.ok and v.status == "holds"
    samples = C._prop1_condition_samples(True, 0)
    assert {s.value for s in samples} == {0.0, 1.0}               # some alpha add a slot, some do not
    assert all(s.value == s.bound for s in samples)


def test_the_algorithms_equations_against_the_simulator_and_fig_2():
    v = _verdict("update_rule")
    assert v.ok and v.status == "holds" and v.instances >= 5
    # not vacuous: typing (11) with the newest model (synchronous (7)) on an asynchronous timing differs
    fed = X.tdma_quadratic(A=[1.0], c=[[1.0], [-1.0], [0.5]])
    t = tm.tdma_schedule(N=3, S=1, tau_comp=1, r=1, K=6)
    ts = tm.tdma_schedule(N=3, S=1, tau_comp=1, r=1, K=6, scheme="sync")
    assert np.abs(C._by_the_lines(fed, t, 0.3, [2.0]) - C._by_the_lines(fed, ts, 0.3, [2.0])).max() > 1e-3
    fig2 = C._update_rule_samples(True, 0)[0]
    assert fig2.params["example"].startswith("Fig. 2") and fig2.value < 1e-12


def test_the_readme_counts_the_new_checks():
    text = (ROOT / "README.md").read_text()
    assert f"has {len(verify.registry())} checks over the five papers" in text
    assert len(_checks()) == 34
