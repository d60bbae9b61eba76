"""DeFedAvg's event rules and delay oracles: invariants, reductions and the probabilities they imply."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fltheory import schedules
from fltheory.delayed import client_draws, sampled_schedule
from fltheory.papers.defedavg import events as E


@settings(max_examples=10)
@given(N=st.integers(1, 8), n=st.integers(1, 8), K=st.integers(1, 4), policy=st.sampled_from(E.POLICIES),
       seed=st.integers(0, 1000), t=st.sampled_from([0.0, 0.1, 0.5]))
def test_niid_events_invariants(N, n, K, policy, seed, t):
    n = min(n, N)
    c = schedules.compute_times(seeds=[seed], N=N)
    s = E.niid_events(N=N, n=n, T=30, K=K, compute=c, t_dl=t, t_ul=t, seeds=[seed], policy=policy)
    draws = client_draws(seeds=[seed], T=30, N=N, n=n)[0]
    assert np.allclose(s.weight[0].sum(axis=1), 1.0)
    for r in range(30):                                   # the slots are the distinct draws, weight = multiplicity / n
        counts = np.bincount(draws[r], minlength=N)
        got = np.zeros(N)
        got[s.client[0, r][s.mask[0, r]]] = s.weight[0, r][s.mask[0, r]]
        assert np.allclose(got, counts / n)
    st_ = s.staleness[0][s.mask[0]]
    assert (st_ >= 0).all()
    assert np.all(np.diff(s.time[0]) >= 0)
    # an applied update's anchor is the client's virtual anchor when its round began
    b, r, u = np.nonzero(s.mask)
    assert np.array_equal(s.start[b, r, u], s.virtual_start[b, r, s.client[b, r, u]])
    assert (s.virtual_staleness >= 0).all()


def test_energy_policy_is_staler_than_overwrite():
    c = schedules.compute_times(seeds=np.arange(3), N=20, unit=0.01)
    kw = dict(N=20, n=4, T=200, K=5, compute=c, t_dl=0.044, t_ul=0.044, seeds=np.arange(3))
    ov, en = E.niid_events(policy="overwrite", **kw), E.niid_events(policy="energy", **kw)
    assert en.max_staleness.mean() > ov.max_staleness.mean()
    assert en.time[:, -1].mean() > ov.time[:, -1].mean()           # energy idles: rounds take longer


def test_selection_probability():
    N, n, T = 10, 3, 4000
    d = client_draws(seeds=[7], T=T, N=N, n=n)[0]
    picked = np.array([[i in row for i in range(N)] for row in d])
    p = 1 - (1 - 1 / N) ** n
    assert abs(picked.mean() - p) < 4 * np.sqrt(p * (1 - p) / (T * N))


def test_draws_are_shared_with_the_core_sampled_schedule():
    s1 = sampled_schedule(N=6, T=20, seeds=[3, 4], n=4)
    s2 = E.niid_oracle(N=6, n=4, T=20, seeds=[3, 4], delay="zero")
    assert np.array_equal(s1.client, s2.client) and np.allclose(s1.weight, s2.weight)


@pytest.mark.parametrize("delay", E.DELAYS)
def test_oracles_respect_lambda(delay):
    D = E.oracle_delays(delay=delay, N=5, T=50, lam=3, seeds=[0, 1], D=np.array([0, 1, 2, 3, 0]))
    assert D.shape == (2, 50, 5) and D.min() >= 0 and D.max() <= 3
    s = E.niid_oracle(N=5, n=3, T=50, seeds=[0, 1], delay=delay, lam=3, D=np.array([0, 1, 2, 3, 0]))
    s.check_delay(3)
    s = E.iid_oracle(N=5, n=3, T=50, seeds=[0, 1], delay=delay, lam=3, D=np.array([0, 1, 2, 3, 0]))
    s.check_delay(3)


def test_uniform_oracle_is_uniform():
    D = E.oracle_delays(delay="uniform", N=50, T=400, lam=3, seeds=[5])
    freq = np.bincount(D.ravel(), minlength=4) / D.size
    assert np.allclose(freq, 0.25, atol=0.01)


def test_fedbuff_restarts_on_the_current_model():
    s = E.fedbuff_events(N=3, n=1, T=6, K=1, compute=np.array([1.0, 10.0, 10.0]))
    # client 0 is 10x faster: it fills most steps, each from the model current at its previous upload
    assert (s.client[0, :4, 0] == 0).all() and (s.staleness[0, :4, 0] <= 1).all()


def test_fedavg_round_time_is_the_straggler():
    c = np.array([1.0, 2.0, 5.0])
    s = E.fedavg_schedule(N=3, n=3, T=20, K=2, compute=c, t_dl=0.5, t_ul=0.25, seeds=[0])
    dt = np.diff(np.concatenate([[0.0], s.time[0]]))
    slow = np.array([c[s.client[0, t][s.mask[0, t]]].max() for t in range(20)])
    assert np.allclose(dt, 0.5 + 2 * slow + 0.25)


def test_identical_speeds_all_clients_is_synchronous():
    s = schedules.first_n_arrivals(N=4, n=4, T=10, K=3, compute=np.ones(4), t_dl=0.2, t_ul=0.3)
    assert int(s.max_staleness[0]) == 0
    for policy in E.POLICIES:                             # one client, drawn every round: synchronous
        s2 = E.niid_events(N=1, n=1, T=10, K=3, compute=np.ones(1), t_dl=0.2, t_ul=0.3, policy=policy)
        assert int(s2.max_staleness[0]) == 0 and np.allclose(np.diff(s2.time[0]), 3.5)
