"""Issue 22, item 3, for FedDelAvg: every numbered result of the paper is listed in the ledger's RESULTS with
the checks that check it, and the checks added for results that had none (Lemmas 1-2, (21), the remark after
Proposition 1, the algorithm's equations) give their verdicts and can fail."""
import functools
import re

import numpy as np
import pytest

from fltheory import claims, verify
from fltheory.papers.feddelavg import bounds as B
from fltheory.papers.feddelavg import checks as C
from fltheory.papers.feddelavg.ledger import RESULTS
from fltheory.verify import Check

NEW = ("update_rule", "lemma1", "lemma2", "psi_inf_limit", "psi_fedavg")


@functools.lru_cache(maxsize=None)
def _checks():
    return {c.name: c for c in verify.registry(["feddelavg"])}


def test_results_are_well_formed_and_in_the_papers_order():
    labels = [r.label for r in RESULTS]
    assert len(labels) == len(set(labels))
    for r in RESULTS:
        assert r.paper == "feddelavg" and r.kind in claims.RESULT_KINDS and r.summary
        assert r.checks or r.why, r.label
        if not r.checks:   # only definitions and assumptions go without a check
            assert r.kind in ("definition", "assumption"), r.label
    # main-text equations first, in increasing order, then the appendix
    first = [int(m.group(1)) for r in RESULTS if (m := re.search(r"\((\d+)\)", r.label))]
    main = first[:first.index(34)]
    assert main == sorted(main)


def _numbers(label):
    out = set()
    for a, b in re.findall(r"\((\d+)\)(?:-\((\d+)\))?", label):
        out |= set(range(int(a), int(b or a) + 1))
    return out


def test_every_numbered_equation_of_the_main_text_is_listed():
    """(1)-(27) are the main text's numbered equations; (34) is Lemma 2, (77) Proposition 2."""
    covered = set().union(*(_numbers(r.label) for r in RESULTS))
    assert set(range(1, 28)) | {34, 77} <= covered, sorted(set(range(1, 28)) - covered)
    for name in ("Lemma 1", "Lemma 2", "Lemma 3", "Lemma 4", "Lemma 5", "Proposition 1", "Proposition 2",
                 "Theorem 1", "Assumption 1", "Assumption 2", "Definition 1", "Algorithm 1"):
        assert any(r.label.startswith(name) for r in RESULTS), name


@pytest.mark.parametrize("name", NEW)
def test_the_new_checks_give_their_expected_verdict(name):
    v = _checks()[f"feddelavg.{name}"].run(quick=True, seed=0)
    assert v.ok and v.status == ("tight" if name in ("lemma1", "lemma2") else "holds"), (v.status, v.counterexample)


def test_lemma1_is_not_vacuous_a_step_can_expand_and_a_nonexpansive_bound_fails():
    """Beyond eta beta = 2 a GD step expands distances (by up to eta beta - 1), so the bound ||w1 - w2|| would be
    violated; sqrt(1 + eta^2 beta^2) ||w1 - w2|| is not."""
    samples = C._lemma1_samples(True, 0)
    dist = np.array([s.params["dist"] for s in samples])
    value = np.array([s.value for s in samples])
    assert (value > dist * (1 + 1e-3)).any()
    assert np.all(value <= np.array([s.bound for s in samples]) * (1 + 1e-12))


def test_lemma2_fails_for_any_smaller_constant():
    wrong = Check("demo.lemma2_small_L", paper="demo", relation="<=",
                  sampler=lambda q, s: [type(x)(x.value, 0.999 * x.bound, x.params, x.seed, x.size)
                                        for x in C._lemma2_samples(q, s)])
    assert wrong.run(quick=True, seed=0).status == "violated"


def test_update_rule_fails_when_the_simulator_departs_from_the_equations(monkeypatch):
    """The same check against a loop that syncs with a slightly different alpha: violated."""
    from fltheory.papers.feddelavg import algorithm

    loop = algorithm.feddelavg_loop
    monkeypatch.setattr(algorithm, "feddelavg_loop", lambda fed, **kw: loop(fed, **{**kw, "alpha": 0.9 * kw["alpha"]}))
    v = _checks()["feddelavg.update_rule"].run(quick=True, seed=0)
    assert v.status == "violated"


def test_identities_fail_when_the_formula_is_changed():
    """(21) without its first term, and the remark's formula without -eta delta tau, disagree with the library."""
    p = dict(eta=0.1, beta=2.0, L=1.5, delta=0.3, tau=5, Delta=2)
    k_big = 10 ** 4
    lib = float(B.psi_value(k_big, alpha=0.5, **p))
    assert lib == pytest.approx(float(B.psi_inf(alpha=0.5, **p)), rel=1e-12)
    assert lib != pytest.approx(lib - float(B.epsilon_value(k_big, alpha=0.5, eta=0.1, L=1.5, tau=5, Delta=2))
                                * 0.5 * (1.2 ** 5 - 1), rel=1e-6)
    h5 = float(B.psi_value(3, alpha=1.0, **{**p, "Delta": 0}))
    assert h5 == pytest.approx(0.3 / 2 * (1.2 ** 5 - 1) - 0.1 * 0.3 * 5, rel=1e-12)
    assert h5 != pytest.approx(0.3 / 2 * (1.2 ** 5 - 1), rel=1e-3)


def test_the_remark_after_lemma5_holds_on_the_runs_lemma5_checks():
    """alpha = 1, Delta = 0: ||w(k tau) - c_k(k tau)|| <= 0 (round-off); lemma5 sees such configurations."""
    n = 0
    for R in C._families(True, 0, logistic=False):
        sel = (R.alpha == 1.0) & (R.Delta == 0)
        n += int(sel.sum())
        assert np.all(np.asarray(R.res.record.lemma5)[sel] <= 1e-12)
    assert n > 0


def test_the_coverage_table_lists_feddelavg():
    table = claims.coverage_table("feddelavg")
    n = sum(1 for r in RESULTS if r.checks)
    assert f"{n}/{len(RESULTS)} numbered results have a check" in table and "update_rule" in table
