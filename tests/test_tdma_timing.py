"""The TDMA channel of Song & Hong: closed forms against the slot-level event simulator."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from fltheory import schedules
from fltheory.validation import InputError
from fltheory.papers.tdma import timing as tm

channel = st.tuples(st.integers(1, 12), st.integers(1, 8), st.integers(1, 200), st.integers(1, 5))


@given(channel, st.data())
def test_staleness_end_times_and_rounds_match_the_simulator(cfg, data):
    G, S, tau, r = cfg
    N = G * S
    alpha = data.draw(st.integers(0, G - 1))
    K = data.draw(st.integers(0, 5 * G + 5))
    t = tm.tdma_schedule(N=N, S=S, tau_comp=tau, r=r, K=K, alpha=alpha)
    k = np.arange(K)
    assert np.array_equal(t.end, tm.end_time(N=N, S=S, tau_comp=tau, r=r, k=k, alpha=alpha))
    assert np.array_equal(t.staleness, np.broadcast_to(np.minimum(k, G - 1 - alpha)[:, None], (K, S)))
    g = (k % G)[:, None]
    assert np.array_equal(t.clients, g * S + np.arange(S))             # strict round robin of the groups
    # uplinks are sequential, r slots each, then the downlink
    if K:
        assert np.all(np.diff(t.uplink, axis=1) >= r) and np.all(t.downlink >= t.uplink[:, -1] + r)
        assert np.array_equal(t.end, t.downlink + r)
        T = data.draw(st.integers(0, int(t.end[-1])))
        assert int(tm.rounds_done(N=N, S=S, tau_comp=tau, r=r, T=T, alpha=alpha)) == t.rounds_done(T)


@given(channel)
def test_average_round_length_is_10_and_never_exceeds_synchronous(cfg):
    G, S, tau, r = cfg
    N = G * S
    t = tm.tdma_schedule(N=N, S=S, tau_comp=tau, r=r, K=3 * G + 1)
    avg = (t.end[G:] - t.end[:-G]) / G
    ta = float(tm.tau_async(N=N, S=S, tau_comp=tau, r=r))
    assert np.allclose(avg, ta) and ta <= tm.tau_sync(S=S, tau_comp=tau, r=r)


@settings(max_examples=15)
@given(st.integers(1, 8), st.integers(1, 6), st.integers(1, 60), st.integers(1, 4))
def test_proposition1_iff_by_brute_force(G, S, tau, r):
    N = G * S
    a_star = int(tm.alpha_star(N=N, S=S, tau_comp=tau, r=r))
    base = tm.tdma_schedule(N=N, S=S, tau_comp=tau, r=r, K=4 * G + 2).end
    for a in range(G):
        same = np.array_equal(tm.tdma_schedule(N=N, S=S, tau_comp=tau, r=r, K=4 * G + 2, alpha=a).end, base)
        assert same == (a <= a_star)
        d_afl = np.minimum(np.arange(4 * G), G - 1)
        d_id = tm.staleness(N=N, S=S, k=np.arange(4 * G), alpha=a)
        assert np.all(d_id <= d_afl)
    d = int(tm.d_star(N=N, S=S, tau_comp=tau, r=r))
    if d < G - 1:           # (33): (d* - 1)(S + 1) < tau/r <= d*(S + 1)
        assert (d - 1) * (S + 1) < tau / r <= d * (S + 1)
    assert (a_star >= 1) == (-(-tau // (r * (S + 1))) <= G - 2)


@given(st.integers(2, 6), st.integers(3, 30), st.integers(1, 80), st.integers(1, 3))
def test_general_N_staleness_law(S, N, tau, r):
    N = max(N, S + 1)
    if N % S == 0:
        N += 1
    G = -(-N // S)
    t = tm.tdma_schedule(N=N, S=S, tau_comp=tau, r=r, K=5 * G + 2)
    rr = schedules.round_robin(N=N, S=S, T=t.K)
    assert np.array_equal(rr.client[0], t.clients) and np.array_equal(rr.start[0], t.khat)
    k = np.arange(t.K)[:, None]
    d = tm.staleness(N=N, S=S, k=k, slot=np.arange(S)[None])
    assert np.array_equal(d, t.staleness)
    steady = t.staleness[G:]
    assert set(np.unique(steady)) <= {N // S - 1, G - 1} and t.staleness.max() <= G - 1
    assert np.allclose(steady.mean(axis=1), N / S - 1)                # exactly N/S - 1 in every round


def test_table_I_and_mnist_rounds():
    assert tm.table1() == {1: 49999, 2: 33333, 5: 16667, 10: 9091, 20: 4001}
    assert [tm.tdma_schedule(N=20, S=S, tau_comp=4, r=1, T=10**5).K + 1 for S in (2, 20)] == [33333, 4001]
    assert tm.rounds_done(N=100, S=[1, 5, 10, 25, 50, 100], tau_comp=50, r=1, T=50000).tolist() == \
        [24975, 8325, 4540, 1921, 979, 331]
    # the paper's loop bound floor(T / tau_async) does not reproduce it
    lb = [int(10**5 // float(tm.tau_async(N=20, S=S, tau_comp=4, r=1))) for S in (1, 2, 5, 10, 20)]
    assert lb == [50000, 33333, 16666, 9090, 4000]


def test_proposition1_values_of_the_experiments():
    assert tm.alpha_star(N=100, S=[1, 5, 10, 25, 50, 100], tau_comp=50, r=1).tolist() == [74, 10, 4, 1, 0, 0]
    assert tm.d_star(N=100, S=1, tau_comp=[50, 10, 2], r=1).tolist() == [25, 5, 1]
    assert tm.alpha_star(N=100, S=1, tau_comp=[50, 10, 2], r=1).tolist() == [74, 94, 98]
    assert tm.alpha_star(N=20, S=[1, 2, 5, 10, 20], tau_comp=4, r=1).tolist() == [17, 7, 2, 0, 0]


def test_fig2_and_synchronous_baseline():
    t = tm.tdma_schedule(N=6, S=2, tau_comp=2, r=1, K=4)
    assert t.uplink.tolist() == [[2, 3], [5, 6], [8, 9], [11, 12]] and t.downlink.tolist() == [4, 7, 10, 13]
    for N in (1, 7, 50):                                             # S = N: asynchronous FL is synchronous
        a = tm.tdma_schedule(N=N, S=N, tau_comp=5, r=2, K=6)
        s = tm.tdma_schedule(N=N, S=N, tau_comp=5, r=2, K=6, scheme="sync")
        assert np.array_equal(a.end, s.end) and np.array_equal(a.end, (np.arange(6) + 1) * (5 + 2 * (N + 1)))
        assert not a.staleness.any()
    s = tm.tdma_schedule(N=6, S=2, tau_comp=3, r=1, K=5, scheme="sync")
    assert not s.staleness.any() and s.clients.tolist()[:3] == [[0, 1], [2, 3], [4, 5]]


@given(st.integers(0, 50), st.integers(0, 500))
def test_staleness_sum_identity(dbar, K):
    K = max(K, dbar)
    assert sum(min(k, dbar) for k in range(K + 1)) == pytest.approx(dbar * (K + 1 - (dbar + 1) / 2))


def test_rounds_non_increasing_in_S_over_divisors():
    rng = np.random.default_rng(3)
    for N in (12, 24, 36, 60, 100):
        Ss = [s for s in range(1, N + 1) if N % s == 0]
        for _ in range(10):
            tau, r, T = int(rng.integers(1, 121)), int(rng.integers(1, 5)), int(rng.integers(50, 3000))
            kd = tm.rounds_done(N=N, S=Ss, tau_comp=tau, r=r, T=T)
            ta = tm.tau_async(N=N, S=Ss, tau_comp=tau, r=r)
            assert np.all(np.diff(kd) <= 0) and np.all(np.diff(ta) >= 0)


def test_doors_of_the_channel():
    with pytest.raises(InputError, match="exactly one of K"):
        tm.tdma_schedule(N=4, S=2, tau_comp=1)
    with pytest.raises(InputError, match="alpha"):
        tm.tdma_schedule(N=5, S=2, tau_comp=1, K=3, alpha=1)
    with pytest.raises(InputError, match="S divides N"):
        tm.end_time(N=5, S=2, tau_comp=1, k=1)
    with pytest.raises(InputError, match="S=3 must be <= N=2"):
        tm.tdma_schedule(N=2, S=3, tau_comp=1, K=1)
    with pytest.raises(InputError, match="the TDMA schedule would hold"):
        tm.tdma_schedule(N=10**6, S=10**6, tau_comp=1, K=10**7)
