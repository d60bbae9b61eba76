"""Exact dynamics, lemma terms, bounds and the simulator of asynchronous FL over TDMA (Song & Hong)."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from fltheory import datasets, delayed, verify
from fltheory.backend import namespace, to_numpy
from fltheory.papers.tdma import algorithm, bounds as B, checks, exact as X, timing as tm
from conftest import on_backend, to_np


def _instance(seed, *, sigma=0.7, Bb=3, G=3, S=2, alpha=0, K=15, m=2):
    rng = np.random.default_rng(seed)
    c = rng.normal(size=(G * S, m))
    fed = X.tdma_quadratic(A=rng.uniform(0.2, 1, m), c=c, sigma=sigma, B=Bb)
    return fed, tm.tdma_schedule(N=G * S, S=S, tau_comp=2, r=1, K=K, alpha=alpha), rng.normal(size=m)


def test_lag_drifts_match_monte_carlo(xp):
    fed, t, x0 = _instance(0)
    fed = on_backend(fed, xp)
    m = X.exact_moments(fed, t, eta=0.3, x0=xp.asarray(x0), record_lags=True)
    assert namespace(m.lag_msd) is xp
    lag_msd, gap = to_numpy(m.lag_msd), to_numpy(m.gap)
    run = algorithm.afl_tdma(fed, t, eta=0.3, x0=xp.asarray(x0), replicates=6000, seed=2)
    w = run.w
    for lag in (1, 2):
        mc = ((w[lag:] - w[:-lag]) ** 2).sum(-1)                      # (K+1-lag, reps)
        se = mc.std(1) / math.sqrt(mc.shape[1])
        assert np.all(np.abs(mc.mean(1) - lag_msd[lag:, 0, lag]) <= 4 * se + 1e-12)
    se = run.loss.std(1) / math.sqrt(run.loss.shape[1])
    assert np.all(np.abs(run.loss.mean(1) - gap[:, 0]) <= 4 * se + 1e-12)


def test_lemma_terms_deterministic_equal_the_trajectory():
    fed, t, x0 = _instance(1, sigma=0.0)
    z = X.lemma_terms(fed, t, eta=0.2, x0=x0)
    w = algorithm.afl_tdma(fed, t, eta=0.2, x0=x0).w[:, 0]
    gn = np.asarray(fed.grad_clients_at(w))                              # (K+1, N, m)
    k = np.arange(t.K)[:, None]
    assert np.allclose(z.sum_h, (gn[t.khat, t.clients] ** 2).sum(-1).sum(1))
    assert np.allclose(z.drift, ((w[k] - w[t.khat]) ** 2).sum(-1))
    assert np.allclose(z.f, np.asarray(fed.loss(w) - fed.loss(fed.x_star)))


@settings(max_examples=12)
@given(st.integers(0, 10**6), st.integers(1, 5), st.integers(1, 3), st.floats(0.0, 2.0), st.integers(1, 8),
       st.floats(0.05, 1.0), st.sampled_from([0.5, 1.0, 2.0]), st.data())
def test_corrected_statements_hold_on_exact_expectations(seed, G, S, sigma, Bb, u, scale, data):
    """Lemma 1', 2', 3' and Theorem 1' on random quadratics inside their assumptions (exact, not Monte Carlo)."""
    alpha = data.draw(st.integers(0, G - 1))
    K = data.draw(st.integers(1, 30))
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 4))
    A = rng.uniform(0.1, 1, m) * scale
    c = rng.normal(size=(G * S, m))
    c *= np.minimum(1, 3 / np.linalg.norm(c, axis=1, keepdims=True))
    fed = X.tdma_quadratic(A=A, c=c, sigma=sigma, B=Bb)
    L, dbar = float(A.max()), G - 1 - alpha
    eta = u * float(B.x_max(dbar=dbar, S=S, B=Bb)) / L
    x0 = rng.normal(size=m) * 2
    t = tm.tdma_schedule(N=G * S, S=S, tau_comp=int(rng.integers(1, 20)), r=1, K=K, alpha=alpha)
    z = X.lemma_terms(fed, t, eta=eta, x0=x0)
    cs = X.quadratic_constants(fed, x0)
    tol = 1e-9
    kw = dict(eta=eta, M=1.0, L=L, S=S, B=Bb, Gamma=cs.Gamma, sigma=sigma, lam=1.0)
    assert np.all(z.f[1:] <= B.lemma1_corrected(f_k=z.f[:-1], a_k=z.a[:-1], sum_h=z.sum_h, sum_D=z.sum_D, **kw) + tol)
    assert np.all(z.sum_h <= B.lemma2_corrected(Gamma=cs.Gamma, S=S, sum_gf=z.sum_gf, lam=1.0) + tol)
    assert np.all(z.drift <= B.lemma3_corrected(eta=eta, d=z.d.astype(float), window_H=z.window_H, M=1.0, S=S, B=Bb,
                                                sigma=sigma) + tol)
    bound = B.theorem1_corrected(eta=eta, L=L, sigma=sigma, S=S, B=Bb, M=1.0, Delta=cs.Delta, K=K, dbar=dbar,
                                 Gamma=cs.Gamma, lam=1.0)
    assert np.mean(z.a) <= bound * (1 + tol)


def test_printed_lemmas_and_theorem_fail_on_their_counterexamples():
    fed = X.tdma_quadratic(A=[1.0], c=[[0.0], [0.0]])
    z = X.lemma_terms(fed, tm.tdma_schedule(N=2, S=2, tau_comp=1, K=1), eta=0.1, x0=[1.0])
    r = float(B.lemma1(f_k=z.f[0], a_k=z.a[0], sum_h=z.sum_h[0], sum_D=0.0, eta=0.1, M=1, L=1, S=2, B=1, Gamma=0,
                       sigma=0))
    assert z.f[1] == pytest.approx(0.405) and r == pytest.approx(0.4025)
    # Lemma 3: linear-like drift of d = 2 steps, LHS 0.04 vs RHS 0.02 in the limit of a tiny curvature
    assert float(B.lemma3(eta=0.1, sigma=0, M=1, Gamma=0, S=1, B=1, sum_d=2, sum_window=2)) == pytest.approx(0.02)
    # Theorem 1: the table of counterexamples (exact a_k)
    for (N, S, K, emp, bd) in [(50, 50, 100, 0.009929, 0.005779), (50, 1, 200, 0.019962, 0.010693)]:
        c = np.zeros((N, 1)) if S == N else np.where(np.arange(N) < N // 2, 1.0, -1.0)[:, None]
        x0 = [1.0] if S == N else [0.0]
        fed = X.tdma_quadratic(A=[1.0], c=c)
        eta = float(B.beta_value(S=S, B=1, L=1, N=N, M=1)) / math.sqrt(K + 1)
        m = X.exact_moments(fed, tm.tdma_schedule(N=N, S=S, tau_comp=1, K=K), eta=eta, x0=x0)
        cs = X.quadratic_constants(fed, x0)
        b = float(B.theorem1_bound(eta=eta, L=1, M=1, B=1, S=S, N=N, K=K, sigma=0, Gamma=cs.Gamma, Delta=cs.Delta,
                                   g0=cs.g0))
        assert float(np.mean(m.grad_sq[:, 0])) == pytest.approx(emp, abs=1e-6) and b == pytest.approx(bd, abs=1e-6)
        assert np.mean(m.grad_sq[:, 0]) > b


@given(st.integers(1, 50), st.integers(1, 20), st.integers(1, 256), st.floats(0.01, 10), st.floats(0.01, 10))
def test_beta_and_the_root_of_Q1(S, G, Bb, M, L):
    N = S * G
    beta, root = float(B.beta_value(S=S, B=Bb, L=L, N=N, M=M)), float(B.beta_root(S=S, B=Bb, L=L, N=N, M=M))
    q1 = lambda e: 2 - e * M * L / (S * Bb) - e**2 * L**2 * M * N / (S**2 * Bb)  # noqa: E731
    assert abs(q1(root)) < 1e-8 * (1 + M * L * root / (S * Bb)) and beta <= root * (1 + 1e-12)
    assert (abs(beta - root) < 1e-12 * root) == (Bb == 1) and q1(beta) >= -1e-12


def test_rate_per_slot_against_the_exact_trajectory(xp):
    fed = X.tdma_quadratic(A=[1.0, 0.3], c=np.random.default_rng(4).normal(size=(6, 2)))
    rt = X.rate_per_slot(fed, N=6, S=2, tau_comp=3, r=1, eta=0.3)
    t = tm.tdma_schedule(N=6, S=2, tau_comp=3, r=1, K=400)
    m = X.exact_moments(on_backend(fed, xp), t, eta=0.3, x0=xp.asarray([5.0, -5.0]))
    err = np.sqrt(((to_np(m.mean)[::rt.period, 0] - rt.limit) ** 2).sum(-1))
    assert rt.period == 3 and err[-1] < 1e-8
    per_round = (err[100] / err[50]) ** (1 / (50 * rt.period))
    assert per_round == pytest.approx(rt.per_round, rel=2e-2)
    assert rt.slots_per_round == pytest.approx(float(tm.tau_async(N=6, S=2, tau_comp=3, r=1)))
    assert rt.per_slot == pytest.approx(rt.per_round ** (1 / rt.slots_per_round))
    # intentional delay up to alpha* keeps the slots per round; it changes the dynamics
    a = int(tm.alpha_star(N=6, S=2, tau_comp=3, r=1))
    if a:
        assert X.rate_per_slot(fed, N=6, S=2, tau_comp=3, r=1, eta=0.3, alpha=a).slots_per_round == rt.slots_per_round


def test_loss_at_deadline_is_the_exact_gap_of_the_last_model(xp):
    fed, _, x0 = _instance(5)
    gap, K = X.loss_at_deadline(fed, T=200, tau_comp=2, S=2, eta=0.2, x0=x0)
    t = tm.tdma_schedule(N=6, S=2, tau_comp=2, r=1, T=200)
    assert K == t.K == int(tm.rounds_done(N=6, S=2, tau_comp=2, r=1, T=200))
    assert gap == pytest.approx(float(X.exact_moments(on_backend(fed, xp), t, eta=0.2, x0=xp.asarray(x0)).gap[-1, 0]))


def test_logistic_toy_runs_and_decreases():
    ds = datasets.digits_federation(n_clients=4, seed=0, reg=1e-2)
    t = tm.tdma_schedule(N=4, S=2, tau_comp=3, r=1, K=40)
    run = algorithm.afl_tdma(ds.fed, t, eta=0.2, x0=np.zeros(ds.fed.d), H=2, batch_size=8, replicates=2, seed=1)
    assert run.loss.shape == (41, 2) and np.all(run.loss[-1] < 0.5 * run.loss[0]) and not run.diverged.any()
    again = algorithm.afl_tdma(ds.fed, t, eta=0.2, x0=np.zeros(ds.fed.d), H=2, batch_size=8, replicates=3, seed=1)
    assert np.allclose(again.w[:, :2], run.w)                        # keyed: a replicate ignores the others


def test_the_checks_give_their_expected_verdicts():
    rep = verify.run(["tdma"], quick=True)
    bad = [v.check for v in rep.verdicts if not v.ok]
    assert not bad, bad
    names = {v.check: v for v in rep.verdicts}
    assert names["tdma.theorem1"].counterexample["params"]["N"] == 50
    assert names["tdma.lemma1"].counterexample["value"] == pytest.approx(0.405)


def test_period_map_is_the_core_one(xp):
    fed = X.tdma_quadratic(A=[1.0], c=[[1.0], [0.0], [-1.0]])
    t = tm.tdma_schedule(N=3, S=1, tau_comp=1, K=20)
    pm = delayed.period_map(on_backend(fed, xp), t.schedule, delayed.LocalSGD(eta_local=0.1, output="gradient_sum"), eta=0.1,
                            period=3, offset=9)
    assert float(to_np(pm.spectral_radius())[0]) ** (1 / 3) == pytest.approx(
        X.rate_per_slot(fed, N=3, S=1, tau_comp=1, eta=0.1).per_round)
    assert checks.PAPER == "tdma"


@given(st.integers(1, 8), st.integers(1, 6), st.integers(1, 60), st.integers(1, 4), st.integers(0, 10**5),
       st.floats(0.05, 1.0), st.floats(0.0, 2.0), st.floats(0.0, 2.0))
def test_intentional_delay_never_loosens_the_corrected_bound(G, S, tau, r, T, u, sigma, Gamma):
    """At equal (T, S, eta), alpha* keeps K_done(T) and lowers dbar, so Theorem 1' can only shrink."""
    N = G * S
    a = int(tm.alpha_star(N=N, S=S, tau_comp=tau, r=r))
    T = max(T, tau + r * (S + 1))
    K_afl = int(tm.rounds_done(N=N, S=S, tau_comp=tau, r=r, T=T))
    assert K_afl == int(tm.rounds_done(N=N, S=S, tau_comp=tau, r=r, T=T, alpha=a))
    K = max(K_afl - 1, 0)
    eta = u * float(B.x_max(dbar=G - 1, S=S, B=2))                    # allowed for both (L = 1)
    kw = dict(eta=eta, L=1.0, sigma=sigma, S=S, B=2, M=1.0, Delta=1.0, K=K, Gamma=Gamma, lam=1.0)
    assert float(B.theorem1_corrected(dbar=G - 1 - a, **kw)) <= float(B.theorem1_corrected(dbar=G - 1, **kw)) + 1e-12


@settings(max_examples=10)
@given(st.integers(1, 6), st.integers(1, 3), st.integers(1, 30), st.integers(1, 3), st.data())
def test_slots_per_round_of_the_rate_is_the_exact_average(G, S, tau, r, data):
    alpha = data.draw(st.integers(0, G - 1))
    N = G * S
    fed = X.tdma_quadratic(A=[1.0], c=np.linspace(-1, 1, N)[:, None])
    rt = X.rate_per_slot(fed, N=N, S=S, tau_comp=tau, r=r, eta=0.1, alpha=alpha)
    m, c = G - alpha, r * (S + 1)
    assert rt.slots_per_round == pytest.approx(max(c, (tau + c) / m)) and rt.period == G


def test_rate_for_a_rotation_of_mixed_groups():
    fed = X.tdma_quadratic(A=[1.0, 0.4], c=np.random.default_rng(1).normal(size=(5, 2)))
    rt = X.rate_per_slot(fed, N=5, S=2, tau_comp=3, r=1, eta=0.2)
    m = X.exact_moments(fed, tm.tdma_schedule(N=5, S=2, tau_comp=3, r=1, K=1200), eta=0.2, x0=np.zeros(2))
    assert rt.period == 6 and np.allclose(np.asarray(m.mean[-1 - (1200 % 6), 0]), rt.limit, atol=1e-8)
