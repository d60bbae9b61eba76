"""DeFedAvg simulators: the reductions of the paper as exact equalities, and Monte Carlo against exact moments."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fltheory as flt
from fltheory import schedules
from fltheory.backend import namespace, to_numpy
from fltheory.papers.defedavg import algorithm as A
from fltheory.papers.defedavg import events as E
from fltheory.papers.defedavg import exact as X
from conftest import on_backend, to_np


@settings(max_examples=8)
@given(N=st.integers(1, 5), n=st.integers(1, 5), K=st.integers(1, 3), d=st.integers(1, 3), seed=st.integers(0, 99))
def test_zero_delay_niid_is_fedavg_under_the_same_stream(N, n, K, d, seed):
    fed = flt.random_quadratic_federation(M=N, d=d, seed=seed, sigma2=0.05)
    x0 = np.linspace(-1, 1, d)
    s = E.niid_oracle(N=N, n=n, T=12, seeds=[seed, seed + 1], delay="zero")
    w = A.defedavg(fed, s, K=K, eta=0.7, eta_bar=0.05, x0=x0, seed=3).w
    ref = A.fedavg_loop(fed, n=n, T=12, K=K, eta=0.7, eta_bar=0.05, x0=x0, seeds=[seed, seed + 1], seed=3)
    assert np.allclose(w, ref, rtol=0, atol=1e-13)


@pytest.mark.parametrize("N, n, K, d, seed", [(1, 1, 1, 1, 0), (3, 2, 2, 2, 5), (5, 4, 3, 3, 42)])
def test_zero_delay_niid_is_fedavg_on_fixed_instances(xp, N, n, K, d, seed):
    """The hypothesis test above on three fixed instances, the simulator on every namespace."""
    fed = flt.random_quadratic_federation(M=N, d=d, seed=seed, sigma2=0.05)
    x0 = np.linspace(-1, 1, d)
    s = E.niid_oracle(N=N, n=n, T=12, seeds=[seed, seed + 1], delay="zero")
    w = A.defedavg(on_backend(fed, xp), s, K=K, eta=0.7, eta_bar=0.05, x0=xp.asarray(x0), seed=3).w
    ref = A.fedavg_loop(fed, n=n, T=12, K=K, eta=0.7, eta_bar=0.05, x0=x0, seeds=[seed, seed + 1], seed=3)
    assert np.allclose(to_np(w), ref, rtol=0, atol=1e-13)


def test_fedavg_sign_is_model_averaging():
    # eta = 1, full participation, K large on exact quadratics: w^{t+1} is the average of the local models
    fed = flt.QuadraticFederation(np.tile(np.eye(2), (2, 1, 1)), np.array([[1.0, 0.0], [-1.0, 2.0]]))
    w = A.fedavg_loop(fed, n=2, T=1, K=200, eta=1.0, eta_bar=0.5, x0=np.zeros(2), seeds=[0])
    # each local run converges to its own optimum; the average of the draws' optima follows (multiplicity)
    draws = flt.delayed.client_draws(seeds=[0], T=1, N=2, n=2)[0, 0]
    assert np.allclose(w[1, 0], fed.x_opt[draws].mean(axis=0), atol=1e-12)


def test_identical_speeds_n_equals_N_is_full_fedavg(xp):
    fed = on_backend(X.iid_federation(a=[1.0, 0.4], N=4, sigma2=0.3), xp)
    ev = schedules.first_n_arrivals(N=4, n=4, T=30, K=2, compute=np.full(4, 0.7), t_dl=0.1, t_ul=0.2)
    zero = E.iid_oracle(N=4, n=4, T=30, delay="zero")
    assert np.array_equal(ev.staleness, zero.staleness)
    kw = dict(K=2, eta=0.8, eta_bar=0.1, x0=xp.asarray([1.0, -1.0]), seed=5)
    assert np.allclose(to_np(A.defedavg(fed, ev, **kw).w), to_np(A.defedavg(fed, zero, **kw).w), atol=1e-14)


def test_asysg_is_one_local_step_with_unit_rate(xp):
    fed, x0 = on_backend(X.iid_federation(a=[1.0, 0.3], N=5, sigma2=0.2), xp), xp.ones(2, dtype=xp.float64)
    s = schedules.first_n_arrivals(N=5, n=2, T=25, K=1, compute=schedules.compute_times(seeds=[1], N=5))
    g = A.asysg(fed, s, eta=0.2, x0=x0, seed=2).w
    d = A.defedavg(fed, s, K=1, eta=0.2, eta_bar=1.0, x0=x0, seed=2).w
    assert np.allclose(to_np(g), to_np(d), atol=1e-14)


def test_simulation_matches_exact_moments_over_the_noise(xp):
    fed = on_backend(X.iid_federation(a=[1.0, 0.5], N=6, sigma2=0.5), xp)
    s = schedules.first_n_arrivals(N=6, n=2, T=40, K=3, compute=schedules.compute_times(seeds=[4], N=6),
                                   t_dl=0.1, t_ul=0.1)
    R = 400
    rep = s.take([0] * R)                                   # one schedule, R noise streams
    kw = dict(K=3, eta=0.6, eta_bar=0.1, x0=xp.asarray([2.0, -1.0]))
    sim = A.defedavg(fed, rep, **kw).grad_sq                # (T+1, R)
    exact = X.moments(fed, s, **kw)
    assert namespace(exact.grad_sq) is xp
    ex = to_numpy(exact.grad_sq)[:, 0]
    se = sim.std(axis=1) / np.sqrt(R) + 1e-12
    assert np.all(np.abs(sim.mean(axis=1) - ex) <= 5 * se)


def test_niid_simulation_matches_exact_over_draws_and_delays():
    fed = X.niid_federation(a=[1.0, 0.5], b=[[1.0, 0.0], [-1.0, 1.0], [0.0, -2.0]], sigma2=0.1)
    R, T = 2000, 15
    s = E.niid_oracle(N=3, n=2, T=T, seeds=np.arange(R), delay="uniform", lam=2)
    kw = dict(K=2, eta=0.8, eta_bar=0.1, x0=np.array([2.0, 2.0]))
    sim = A.defedavg(fed, s, **kw).grad_sq
    ex = np.asarray(X.niid_moments(fed, n=2, T=T, lam=2, **kw).grad_sq)
    se = sim.std(axis=1) / np.sqrt(R)
    assert np.all(np.abs(sim.mean(axis=1) - ex) <= 5 * se + 1e-12)


def test_event_driven_niid_runs_and_baselines_order(xp):
    fed = on_backend(X.iid_federation(a=[1.0, 0.5], N=12, sigma2=1.0), xp)
    c = schedules.compute_times(seeds=[0], N=12, unit=0.01)
    kw = dict(N=12, n=3, T=60, K=5, compute=c, t_dl=0.04, t_ul=0.04)
    de = E.niid_events(seeds=[0], **kw)
    fa = E.fedavg_schedule(seeds=[0], **kw)
    fb = E.fedbuff_events(seeds=[0], **kw)
    for s in (de, fa, fb):
        r = A.defedavg(fed, s, K=5, eta=1.0, eta_bar=0.05, x0=xp.ones(2, dtype=xp.float64))
        assert r.grad_sq.shape == (61, 1) and np.all(np.isfinite(to_np(r.grad_sq)))
        assert r.avg_grad_sq.shape == (60, 1)
    assert de.time[0, -1] < fa.time[0, -1]                  # no waiting for stragglers


@pytest.fixture(scope="module")
def digits_toy():
    from fltheory.datasets import digits_federation

    return digits_federation(n_clients=5, partition="label", seed=0).fed


def test_zero_delay_on_the_logistic_toy_is_fedavg_by_a_plain_loop(digits_toy):
    # synchronous FedAvg with client sampling, round by round, one client at a time (LogisticFederation.grad_client),
    # additive noise drawn with the simulators' keys: DeFedAvg-nIID with zero delay must give the same models
    fed, n, T, K, seeds = digits_toy, 3, 6, 2, [4, 9]
    eta, eta_bar, s2 = 0.8, 0.05, 0.01
    x0 = np.linspace(-0.1, 0.1, fed.d)
    sched = E.niid_oracle(N=fed.M, n=n, T=T, seeds=seeds, delay="zero")
    r = A.defedavg(fed, sched, K=K, eta=eta, eta_bar=eta_bar, x0=x0, seed=3, sigma2=s2)
    draws = flt.delayed.client_draws(seeds=seeds, T=T, N=fed.M, n=n)
    noise = flt.backend.KeyedStream(3, "local noise")
    for b in range(len(seeds)):
        x = x0.copy()
        for t in range(T):
            step = np.zeros(fed.d)
            for slot, i in enumerate(sorted(set(draws[b, t].tolist()))):
                y = x.copy()
                for k in range(K):
                    z = noise.normal(config=np.array([[b]]), round=t, client=np.array([[slot + sched.U * k]]),
                                     size=(fed.d,))[0, 0]
                    y = y - eta_bar * (fed.grad_client(i, y) + np.sqrt(s2) * z)
                step += np.count_nonzero(draws[b, t] == i) / n * (x - y)
            x = x - eta * step
            assert np.allclose(r.w[t + 1, b], x, rtol=0, atol=1e-12)
    assert np.allclose(r.loss, fed.loss(r.w), atol=1e-13)
    g = fed.grad(r.w)
    assert np.allclose(r.grad_sq, (g * g).sum(axis=-1), atol=1e-13)


def test_defedavg_on_pseudo_huber_and_asysg_on_the_toy(digits_toy):
    fed = flt.problems.PseudoHuberFederation(b=[[0.0, 1.0], [2.0, 0.0], [1.0, -2.0]], delta=1.0)
    s = schedules.first_n_arrivals(N=3, n=2, T=30, K=2, compute=schedules.compute_times(seeds=[0, 1], N=3))
    r = A.defedavg(fed, s, K=2, eta=1.0, eta_bar=0.2, x0=np.array([4.0, 4.0]), sigma2=0.01, seed=1)
    ref = flt.delayed.simulate_schedule_general(fed, s, flt.delayed.LocalSGD(eta_local=0.2, K=2), eta=1.0,
                                                x0=np.array([4.0, 4.0]), sigma2=0.01, seed=1, returns="trajectory")
    assert np.array_equal(r.w, ref) and r.loss.shape == (31, 2) and np.all(r.loss[-1] < r.loss[0])
    s1 = schedules.first_n_arrivals(N=5, n=2, T=10, K=1, compute=schedules.compute_times(seeds=[2], N=5))
    x0 = np.zeros(digits_toy.d)
    g = A.asysg(digits_toy, s1, eta=0.1, x0=x0, seed=2, sigma2=0.01).w
    d = A.defedavg(digits_toy, s1, K=1, eta=0.1, eta_bar=1.0, x0=x0, seed=2, sigma2=0.01).w
    assert np.allclose(g, d, rtol=0, atol=1e-14)


def test_sigma2_is_refused_for_quadratic_clients(xp):
    fed = on_backend(X.iid_federation(a=[1.0, 0.5], N=3, sigma2=0.1), xp)
    with pytest.raises(flt.InputError, match="sigma2"):
        A.defedavg(fed, E.iid_oracle(N=3, n=1, T=3), K=1, eta=1.0, eta_bar=0.1, x0=xp.zeros(2, dtype=xp.float64), sigma2=0.1)


def test_doors_refuse_a_batched_federation():
    fed = flt.random_quadratic_federation(M=2, d=2, batch=3, seed=0)
    with pytest.raises(flt.FLTheoryError, match="fed"):
        A.defedavg(fed, E.iid_oracle(N=2, n=1, T=3), K=1, eta=1.0, eta_bar=0.1, x0=np.zeros(2))
