"""Issue 22, item 3, for DeFedAvg: every numbered result of the paper is listed in the ledger's RESULTS with the
checks that check it, and the checks added for the results that had none give their verdicts, rebuild the
documented counterexamples, and can fail."""
import functools
import math
import re
from pathlib import Path

import pytest

from fltheory import claims, verify
from fltheory.papers.defedavg import bounds as B
from fltheory.papers.defedavg import checks as C  # noqa: F401  (registers the checks)
from fltheory.papers.defedavg import checks_coverage as CC
from fltheory.papers.defedavg.ledger import FINDINGS, RESULTS
from fltheory.verify import Check, Sample

ROOT = Path(__file__).resolve().parents[1]
# numbered results without a check that are neither a definition nor an assumption, with the reason
UNCHECKED = {"Fact 1": "the tower property", "Sec. 3, lambda for Algorithm 1": "cited without constants",
             "Sec. 3.1, lambda = 1 against FedAvg [8]": "a comparison with a cited rate"}
NEW = {"fedavg_update": "violated", "fedavg_update_corrected": "holds", "aggregate_weights": "holds",
       "aggregate_7_as_set": "violated", "lemma2_as_printed": "violated", "lemma2_corrected": "tight",
       "lemma2_rounds": "holds", "lemma7": "tight", "lemma7_rounds": "tight", "lemma5_step36": "violated",
       "lemma5_step36_corrected": "holds", "descent_lemma_37": "holds", "fact2": "tight", "theorem1_step": "violated",
       "theorem1_step_corrected": "tight", "theorem1_events": "holds", "theorem1_corrected_events": "holds",
       "linear_speedup_niid": "holds", "rate_lambda1": "holds", "theorem1_rate": "tight"}


@functools.lru_cache(maxsize=None)
def _checks():
    return {c.name: c for c in verify.registry(["defedavg"])}


@functools.lru_cache(maxsize=None)
def _verdict(name):
    return _checks()[f"defedavg.{name}"].run(quick=True, seed=0)


def test_results_are_well_formed():
    labels = [r.label for r in RESULTS]
    assert len(labels) == len(set(labels))
    for r in RESULTS:
        assert r.paper == "defedavg" and r.kind in claims.RESULT_KINDS and r.summary
        assert r.checks or r.why, r.label
        if not r.checks:
            assert r.kind in ("definition", "assumption") or r.label in UNCHECKED, r.label


def _numbers(label):
    out = set()
    for a, b in re.findall(r"\((\d+)\)(?:-\((\d+)\))?", label):
        out |= set(range(int(a), int(b or a) + 1))
    return out


def test_every_numbered_equation_and_result_is_listed_in_the_papers_order():
    """(1)-(47) are the paper's numbered equations (main text (1)-(14), appendix (15)-(47))."""
    covered = set().union(*(_numbers(r.label) for r in RESULTS))
    assert set(range(1, 48)) <= covered, sorted(set(range(1, 48)) - covered)
    names = [f"Lemma {i}" for i in range(1, 11)] + [f"Assumption {i}" for i in range(1, 7)] + [
        "Theorem 1", "Theorem 2", "Algorithm 1", "Algorithm 2", "Fact 1", "Fact 2"]
    for name in names:
        assert any(r.label.startswith(name) for r in RESULTS), name
    first = [min(_numbers(r.label)) for r in RESULTS if _numbers(r.label)]
    assert first == sorted(first)
    lemmas = [int(m.group(1)) for r in RESULTS if (m := re.match(r"Lemma (\d+)", r.label))]
    assert lemmas == sorted(lemmas)


@pytest.mark.parametrize("name", sorted(NEW))
def test_the_new_checks_give_their_expected_verdict(name):
    v = _verdict(name)
    assert v.ok and v.status == NEW[name], (v.status, v.worst_ratio, v.counterexample)
    if v.status == "violated":
        assert v.counterexample is not None and _checks()[f"defedavg.{name}"].falsifies


def test_every_new_violated_check_is_a_finding():
    quoted = set().union(*(claims.checks_quoted(f.text()) for f in FINDINGS))
    assert {f"defedavg.{n}" for n, s in NEW.items() if s == "violated"} <= quoted


# ----------------------------------------------------------------------------- the documented counterexamples
def test_printed_3_is_w_gets_1_5_w_and_diverges():
    ce = _verdict("fedavg_update").counterexample
    p = ce["params"]
    assert (p["N"], p["K"], p["eta"], p["eta_bar"]) == (1, 1, 1.0, 0.5)
    assert p["w1_printed"] == [1.5] and ce["value"] == pytest.approx(1.5 ** p["T"], rel=1e-12)
    assert ce["bound"] == pytest.approx(0.5 ** p["T"], rel=1e-12)


def test_3_with_the_sign_of_8_fails_when_the_sign_is_flipped_back(monkeypatch):
    typed = CC._typed_fedavg
    monkeypatch.setattr(CC, "_typed_fedavg", lambda *a, rule, **kw: typed(*a, rule="printed" if rule == "fixed"
                                                                            else rule, **kw))
    assert _checks()["defedavg.fedavg_update_corrected"].run(quick=True, seed=0).status == "violated"


def test_7_as_a_set_weighs_draws_0_0_1_half_half_and_8_two_thirds_one_third():
    p = _verdict("aggregate_7_as_set").counterexample["params"]
    assert p["draws"] == [0, 0, 1] and p["weights_7_set"] == "(1/2, 1/2)" and p["weights_8"] == "(2/3, 1/3)"


def test_aggregate_weights_fails_when_the_schedules_weigh_distinct_clients_equally(monkeypatch):
    monkeypatch.setattr(CC, "_weights_8", CC._weights_7_set)
    assert _checks()["defedavg.aggregate_weights"].run(quick=False, seed=0).status == "violated"


def test_lemma2_breaks_at_N_1_n_3_and_needs_exactly_n_le_N_plus_1():
    ce = _verdict("lemma2_as_printed").counterexample
    assert (ce["params"]["N"], ce["params"]["n"]) == (1, 3) and ce["ratio"] == pytest.approx(1.5, rel=1e-9)
    for N in range(1, 5):       # (N + n - 1)/(2N) <= 1 iff n <= N + 1
        assert CC.C._lemma2_enumerated(N, N + 1) == pytest.approx(2 * (N + 1))
        assert CC.C._lemma2_enumerated(N, N + 2) > 2 * (N + 2)


def test_lemma2_rounds_exceeds_the_iid_constant_draws_with_replacement_add_noise():
    """(20)'s factor 2 is needed: the exact noise exceeds Lemma 7's n K lambda sigma^2 whenever n >= 2."""
    over = [s for s in CC._lemma2_rounds_samples(False, 0) if s.params["n"] >= 2]
    assert over and any(s.value > s.bound / 2 * (1 + 1e-6) for s in over)


def test_step36_is_n_squared_over_2_on_the_nearly_noise_free_instance():
    for n in (2, 3):
        d = {**CC.COUNTEREXAMPLE_36, "N": n, "n": n}
        stale, y_sum = CC._step36_deterministic(d)
        kw = dict(K=d["K"], lam=d["lam"], eta=d["eta"], eta_bar=d["eta_bar"], sigma2=d["sigma2"], n=n)
        t = 3
        assert stale[t] / float(B.lemma5_step36(Y_sum=float(y_sum[t]), **kw)) == pytest.approx(n * n / 2, rel=1e-6)
        assert stale[t] / float(B.lemma5_step36_corrected(Y_sum=float(y_sum[t]), **kw)) == pytest.approx(0.5)
    ce = _verdict("lemma5_step36").counterexample
    assert ce["params"]["n"] == 2 and ce["ratio"] == pytest.approx(2.0, rel=1e-6)


def test_theorem1_step_ratio_is_2_and_the_corrected_condition_is_exact():
    assert _verdict("theorem1_step").counterexample["ratio"] == pytest.approx(2.0, rel=1e-9)
    planted = _checks()["defedavg.theorem1_step_corrected"].planted(0.99)
    assert planted.run(quick=True, seed=0).status == "violated"


@pytest.mark.parametrize("name", ["lemma2_corrected", "lemma7", "lemma7_rounds", "fact2", "theorem1_rate"])
def test_tight_new_checks_fail_with_a_planted_constant(name):
    assert _checks()[f"defedavg.{name}"].planted(0.99).run(quick=True, seed=0).status == "violated"


def test_descent_lemma_37_fails_without_its_quadratic_term():
    wrong = Check("demo.descent37_no_L", paper="demo", relation="==", rtol=1e-8, atol=1e-12,
                  sampler=lambda q, s: [Sample(x.value, x.bound - (x.value - x.bound) - abs(x.bound) * 1e-3, x.params)
                                        for x in CC._descent37_samples(q, s)])
    assert wrong.run(quick=True, seed=0).status == "violated"
    v = _verdict("descent_lemma_37")
    assert v.instances >= 3 and max(abs(b) for b in v.bounds) > 0


# ----------------------------------------------------------------------------- Theorem 1 on Algorithm 1's events
def test_theorem1_events_runs_both_policies_with_real_staleness_inside_assumption_6():
    samples = CC._theorem1_events_samples(False, 0, statement=B.theorem1)
    assert {s.params["policy"] for s in samples} == {"overwrite", "energy"}
    assert max(s.params["lam"] for s in samples) >= 2
    assert all(s.params["G2_run"] <= s.params["G2"] * (1 + 1e-12) and s.value > 0 for s in samples)


# ----------------------------------------------------------------------------- the rates
def test_linear_speedup_niid_halves_the_rounds():
    s = CC._speedup_niid_samples(True, 0)[0]
    m = s.params["measured"]
    assert m[0] > m[1] > m[2] and 3.0 < m[0] / m[2] < 5.0 and abs(s.value + 1) <= 0.1


def test_theorem1_rate_is_1_over_sqrt_nT_not_1_over_sqrt_nKT():
    """sqrt(nKT) times (12)'s first term grows like sqrt(K); sqrt(nT) times it stays bounded."""
    kw = dict(n=4, T=10**6, L=1.0, sigma2=1.0, Phi0=1.0, G2=1.0, nu2=0.0, N=4, lam=1)
    first = [float(B.theorem1(check=False, K=K, **kw)) - float(B._R1_second.subs(
        {B.L: 1.0, B.sigma2: 1.0, B.nu2: 0.0, B.G2: 1.0, B.K: K, B.T: 10**6})) for K in (1, 100, 10**4)]
    nkt = [f * math.sqrt(4 * K * 10**6) for f, K in zip(first, (1, 100, 10**4))]
    assert nkt[2] / nkt[1] == pytest.approx(10.0, rel=0.01)
    nt = [f * math.sqrt(4 * 10**6) for f in first]
    assert max(nt) <= float(16 * math.sqrt(16 + 8)) * (1 + 1e-12)


def test_rate_lambda1_is_implied_by_the_corrected_theorem2_and_sees_one_round_delays():
    samples = CC._rate_lambda1_samples(False, 0)
    assert all(s.params["lam"] == 1 for s in samples)
    assert {s.params["delay_steps_used"] for s in samples} == {0, 1}
    for s in samples:
        kw = {k: s.params[k] for k in ("n", "K", "T", "sigma2", "Phi0", "lam")}
        kw["L"] = max(s.params["a"])
        assert s.bound >= float(B.theorem2_corrected(**kw)) and s.value <= s.bound


def test_the_docs_say_theorem1_decays_like_1_over_sqrt_nT():
    for path in ("docs/papers/defedavg.rst", "notebooks/make_defedavg_notebook.py"):
        text = (ROOT / path).read_text()
        assert "Theorems 1 and 2 bound" not in text and "(Theorem 1 for nIID, Theorem 2 for IID)" not in text
        assert r"1/\sqrt{nT}+1/(KT)" in text


def test_the_coverage_table_lists_defedavg():
    table = claims.coverage_table("defedavg")
    n = sum(1 for r in RESULTS if r.checks)
    assert f"{n}/{len(RESULTS)} numbered results have a check" in table and "fedavg_update" in table


@pytest.mark.parametrize("name", ["rate_lambda1", "lemma7", "theorem1_step"])
def test_bad_input_is_refused_by_the_new_statements(name):
    from fltheory.validation import FLTheoryError

    st = B.BY_NAME[name]
    kw = {p: 1.0 for p in st.parameters}
    kw[sorted(st.parameters)[0]] = "x"
    with pytest.raises(FLTheoryError, match=sorted(st.parameters)[0]):
        st(**kw)


# ----------------------------------------------------------------------------- the searches (issue 21)
def test_every_new_bound_that_holds_is_searched():
    new_bounds = {n for n, s in NEW.items() if s in ("holds", "tight") and _checks()[f"defedavg.{n}"].relation != "=="}
    assert new_bounds == set(CC.SEARCH)
    for name in CC.SEARCH:
        c = _checks()[f"defedavg.{name}"]
        assert c.family is not None and c.family.description and c.search_budget[:2] == CC.SEARCH[name][2]


@pytest.mark.parametrize("name", ["lemma2_corrected", "lemma7", "lemma7_rounds", "fact2", "theorem1_step_corrected",
                                  "theorem1_rate"])
def test_the_full_search_reaches_the_supremum_1_and_rebuilds(name):
    c = _checks()[f"defedavg.{name}"]
    res = c.search(quick=False, seed=0)
    assert 1 - 1e-6 <= res.ratio <= 1 + 1e-9, (res.ratio, res.params)
    r = verify.rebuild(c, res.sample.params, res.sample.seed)
    assert r.ratio == pytest.approx(res.ratio, rel=1e-12) and not r.violated
