"""Issue 22, item 3, for AFL-DGA: every numbered result of the paper is listed in the ledger's RESULTS with the checks
that check it, and the checks added for results that had none (Gamma, App. B (3)-(6), the count of the range in Lemma
1's proof, Corollary 1 as printed, the linear-speedup threshold, Fig. 1) give their verdicts and can fail."""

import numpy as np
import pytest

from fltheory import claims, verify
from fltheory.papers.afl_dga import afl_dga
from fltheory.papers.afl_dga import bounds as B
from fltheory.papers.afl_dga import checks as C
from fltheory.papers.afl_dga.ledger import FINDINGS, RESULTS
from fltheory.problems import PseudoHuberFederation, QuadraticFederation
from fltheory.schedules import Participation
from fltheory.verify import Check, Sample

NEW = {"corollary1_printed": "violated", "speedup_threshold": "tight", "gamma_iid": "violated",
       "gamma_corrected": "tight", "eq3": "violated", "eq4": "violated", "eq4_fresh_noise": "holds", "eq5": "tight",
       "eq6": "violated", "lag_range_terms": "violated", "fig1_trajectory": "holds"}


@pytest.fixture(scope="module")
def report():
    return verify.run(names=[f"afl_dga.{n}" for n in NEW], quick=True)


def test_results_are_well_formed_and_in_the_papers_order():
    labels = [r.label for r in RESULTS]
    assert len(labels) == len(set(labels))
    for r in RESULTS:
        assert r.paper == "afl_dga" and r.kind in claims.RESULT_KINDS and r.summary
        assert r.checks or r.why, r.label
        if not r.checks:   # only definitions and assumptions go without a check
            assert r.kind in ("definition", "assumption"), r.label
    # the paper's order: Section 3.1, 3.2, Fig. 1, Algorithm 1, Assumptions, Theorem 1, Corollary 1, App. A, App. B
    order = ["Sec. 3.1, the problem", "Sec. 3.1, Gamma", "Sec. 3.2, step 1 (correction)", "Fig. 1, client 3's trajectory",
             "Algorithm 1", "Assumption 1", "Assumption 4", "Theorem 1", "Remark, DGA's training time", "Corollary 1",
             "Remark after Corollary 1, linear speedup threshold", "Lemma 1", "App. A (1)", "App. A (2)",
             "App. A, the sum after (2)", "App. B (3)", "App. B (4)", "App. B (5)", "App. B (6)"]
    idx = [labels.index(x) for x in order]
    assert idx == sorted(idx)


def test_the_new_checks_give_their_expected_verdicts_and_every_false_one_has_a_finding(report):
    got = {v.check.split(".", 1)[1]: v for v in report.verdicts}
    for name, status in NEW.items():
        v = got[name]
        assert v.ok and v.status == status, (name, v.status, v.counterexample)
    quoted = set().union(*(claims.checks_quoted(f.text()) for f in FINDINGS))
    assert {f"afl_dga.{n}" for n, s in NEW.items() if s == "violated"} <= quoted
    # the rows quoting only new checks render from this report (placeholders name existing parameters)
    verdicts = {v.check: v for v in report.verdicts}
    for f in FINDINGS:
        if claims.checks_quoted(f.text()) <= set(verdicts):
            assert "{{" not in claims.render(f.text(), verdicts)


# ---------------------------------------------------------------------------------------------- Corollary 1
def test_corollary1_as_printed_fails_for_every_constant_the_ratio_grows_like_sqrt_T():
    """One client, t_d = 10 sqrt(T), eta = 1/(L sqrt(T)): the needed constant C_O grows like sqrt(T)."""
    samples = C._corollary_printed_samples(True, 0)
    T = np.array([s.params["T"] for s in samples], float)
    r = np.array([s.value / s.bound for s in samples])
    slope = np.polyfit(np.log(T[1:]), np.log(r[1:]), 1)[0]
    assert 0.4 < slope < 0.6, slope
    assert r[-1] > 1.2 and r[0] < 1                      # at C_O = 2 the largest T is a counterexample
    for s in samples:                                    # inside every hypothesis of the corollary
        p = s.params
        assert p["N"] == 1 and p["eta"] * p["L"] == pytest.approx(1 / np.sqrt(p["T"]), rel=1e-12)
        assert p["t_d"] <= p["T"] and p["C_O"] == C.C_O_DERIVED


def test_the_corollary1_counterexample_rebuilds_independently_and_is_invariant_under_rescaling():
    T = 400
    t_d = int(10 * np.sqrt(T))
    fed = PseudoHuberFederation(b=np.zeros((1, 1)), delta=1.0, scale=1.0)
    P = np.zeros((1, T), int)
    P[:, ::t_d] = 1
    w = afl_dga(fed, Participation(P).check(t_d=t_d), eta=1 / np.sqrt(T), w0=np.array([0.3])).w
    lhs = float((fed.grad(w) ** 2).sum(-1)[:-1].mean())
    printed = (float(fed.loss(w[0])) + 1) / np.sqrt(T) + 1 / T + (2 * t_d - 1) / T     # N = L = G = 1, K_m = 1, D_m = 0
    a = C._periodic_sample(1, T, float(np.sqrt(1 / T)), t_d, literal=False, statement="corollary1_printed")
    b = C._periodic_sample(1, T, float(np.sqrt(1 / T)), t_d, literal=True, statement="corollary1_printed")
    assert a.value == pytest.approx(lhs, rel=1e-12) and a.bound == pytest.approx(2 * printed, rel=1e-12)
    assert b.params["eta"] == pytest.approx(1 / T) and b.value / b.bound == pytest.approx(a.value / a.bound, rel=1e-9)


def test_theorem1_at_the_corollarys_step_is_at_most_twice_the_printed_terms_and_not_always_once():
    rng = np.random.default_rng(0)
    over_one = 0
    for _ in range(60):
        N = int(rng.integers(1, 50))
        kw = dict(L=float(rng.uniform(0.1, 5)), N=N, T=int(rng.integers(N, 10**5)), Delta=float(rng.uniform(0, 10)),
                  sigma2=float(rng.uniform(0, 2)), G2=float(rng.uniform(0.1, 2)), K_m=int(rng.integers(1, 10)),
                  D_m=int(rng.integers(0, 10)), t_d=int(rng.integers(1, 10)))
        exact = float(B.corollary1(**kw))
        assert exact <= float(B.corollary1_printed(C_O=C.C_O_DERIVED, **kw)) * (1 + 1e-12)
        over_one += exact > float(B.corollary1_printed(C_O=1.0, **kw))
    assert over_one > 0


def test_the_speedup_threshold_is_tight_and_fails_below_it():
    kw = dict(L=1.0, N=4, Delta=1.0, sigma2=0.5, G2=1.0, K_m=1, D_m=1, t_d=6)
    th = B.corollary_thresholds(**kw, printed=True)
    assert th["T2"] > th["T1"]                           # here t_d, not K_m + D_m, sets the threshold
    for factor, above in ((1 + 1e-9, False), (0.9, True)):
        T = th["T_min"] * factor
        second, third = 4 * 4 * 1.0 / T, 4 * 11 * 1.5 / T
        assert (max(second, third) > (1.0 + 0.5 + 1.0) / np.sqrt(4 * T)) == above
    assert float(B.speedup_threshold(T=th["T_min"] * (1 + 1e-9), **kw)) == pytest.approx(2.5 / np.sqrt(4 * th["T_min"]))


# ---------------------------------------------------------------------------------------------- Gamma
def test_gamma_is_F_at_the_minimiser_and_iid_clients_give_zero_and_agree():
    base = C._gamma_fed(3, 2, 5, 4.0, 1.0, "dirichlet")
    gamma, zeta2, g2, L = C._gamma_parts(base, np.ones(2))
    xs, p = np.asarray(base.x_star), np.asarray(base.weights)
    e = xs - np.asarray(base.x_opt)
    assert gamma == pytest.approx(float(0.5 * p @ np.einsum("mi,mij,mj->m", e, np.asarray(base.H), e)), rel=1e-12)
    assert 0 < g2 <= 2 * L * gamma
    iid = QuadraticFederation(np.broadcast_to(base.H[0], (3, 2, 2)).copy(), np.broadcast_to(base.x_opt[0], (3, 2)).copy())
    g0, z0, _, _ = C._gamma_parts(iid, np.ones(2))
    assert g0 < 1e-20 and z0 < 1e-20                      # i.i.d. => Gamma = 0: the direction that is true
    for s in C._gamma_iid_samples(True, 0):               # the converse fails: Gamma = 0 with disagreeing clients
        assert s.params["Gamma"] < 1e-12 and s.value > 1e-3


def test_gamma_corrected_is_an_equality_for_identity_hessians_and_fails_when_tightened():
    s = C._gamma_evaluate(dict(M=3, d=2, seed=1, kappa=1.0, heterogeneity=1.0, weights="dirichlet"))
    assert s.value == pytest.approx(s.bound, rel=1e-10)
    tightened = Check("demo.gamma_tight", paper="demo", relation="<=", sampler=lambda q, sd: [
        Sample(x.value, 0.99 * x.bound, x.params, x.seed, x.size) for x in C._gamma_corrected_samples(q, sd)])
    assert tightened.run(quick=True, seed=0).status == "violated"


# ---------------------------------------------------------------------------------------------- App. B
def test_eq3_ratio_is_N_on_identical_clients():
    for s in C._eq3_samples(True, 0):
        assert s.value / s.bound == pytest.approx(s.params["N"], rel=1e-9)


def test_the_cross_term_of_eq4_is_minus_k_eta_sigma2_after_k_reuses_and_zero_with_fresh_noise():
    stale = [s for s in C._cross_samples(True, 0, fresh=False) if s.params["family"] == "one quadratic client"]
    for s in stale:
        k = s.params["t"] % s.params["t_d"]
        assert k >= 1 and abs(s.params["mean"] + k * 0.5 * 1.0) < 4 * s.params["se"]
        assert s.value > 0
    fresh = C._cross_samples(True, 0, fresh=True)
    assert fresh and all(s.value <= 0 for s in fresh) and all(s.params["t_d"] == 1 for s in fresh)


def test_eq5_is_an_equality_on_one_isotropic_quadratic_client():
    rng = np.random.default_rng(3)
    T, L = 12, 2.0
    part = Participation(np.ones((1, T), int), rng.integers(1, 4, (1, T)), rng.integers(0, 4, (1, T)))
    fed = QuadraticFederation(L * np.eye(2)[None], rng.normal(size=(1, 2)))
    from fltheory.papers.afl_dga import diagnostics
    dg = diagnostics(fed, afl_dga(fed, part, eta=0.3, w0=rng.normal(size=2), record=True))
    bias2, Xi = np.asarray(dg.bias2), np.asarray(dg.Xi)
    sel = Xi > 1e-12
    assert sel.sum() > 3
    # K = 1 rounds: one stored iterate, so Jensen is an equality too; K > 1: strictly below
    ratio = bias2[sel] / (L**2 * Xi[sel])
    assert ratio.max() == pytest.approx(1.0, rel=1e-9) and np.all(ratio <= 1 + 1e-9)


def test_eq6_fails_because_the_stale_distance_grows_like_k_squared():
    s = C._eq6_samples(True, 0)[0]
    assert s.value / s.bound > 5 and s.params["t_d"] * s.params["eta"] * s.params["L"] > 2


def test_the_printed_range_has_tau_plus_tau_prime_terms_and_the_package_count_is_the_printed_one():
    for s in C._lag_range_samples(True, 0):
        tau, tp = s.params["tau"], s.params["tau_prime"]
        assert s.value == tau + tp and s.bound == tau + tp - 1
    fed, part = C.random_runs(0, 6, "huber")[0][:2]
    for i in range(part.N):
        for t in range(part.T):
            if t - part.tau[i, t] >= 0:
                assert part.delay_sum[i, t] == part.tau[i, t] + part.tau[i, t - part.tau[i, t]] - 1


def test_fig1_trajectory_fails_with_the_analysis_correction():
    """The printed trajectory has coefficient 2 on gbar^2 (K = 2 in round 2); the analysis correction gives 1."""
    assert all(s.value < 1e-12 for s in C._fig1_samples(True, 0))
    P = np.array([[1, 1, 0, 1, 1], [1, 1, 1, 1, 1]])
    K = np.array([[1, 2, 1, 5, 2], [1, 1, 1, 1, 1]])
    D = np.array([[2, 2, 4, 2, 2], [0, 0, 0, 0, 0]])
    fed = C._gamma_fed(2, 2, 0, 5.0, 1.5, "dirichlet")
    res = afl_dga(fed, Participation(P, K, D, weights=np.asarray(fed.weights)), eta=0.1, w0=np.ones(2),
                  mode="analysis", record=True)
    gb, g = np.asarray(res.gbar), np.asarray(res.record.grads)[:, 0]
    want = np.ones(2) - 0.1 * (gb[0] + 2 * gb[1] + gb[2]) - 0.1 * g[3, :5].sum(0) - 0.1 * g[4, :2].sum(0)
    assert np.abs(np.asarray(res.clients)[0] - want).max() > 1e-6


def test_theorem1_prime_says_it_assumes_equal_weights_and_unequal_weights_raise_the_noise_power():
    for st in (B.theorem1_corrected, B.corollary1_corrected):
        assert "equal client weights" in st.title and "p_i = 1/N" in st.reason
    p, K = np.array([0.9, 0.1]), np.array([1, 1])
    assert float((p**2 / K).sum()) > 1 / (2 * K.min())         # sigma^2 sum p_i^2/K_i > sigma^2/(N K_min)


def test_the_coverage_table_lists_afl_dga():
    table = claims.coverage_table("afl_dga")
    n = sum(1 for r in RESULTS if r.checks)
    assert f"{n}/{len(RESULTS)} numbered results have a check" in table and "corollary1_printed" in table
