"""Schedules: the event queue, the Schedule arrays, and each generator against its closed form or
its event-engine reference."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import fltheory as flt
from fltheory import schedules as S
from fltheory.schedules import ScheduleError


# ---------------------------------------------------------------------------- event queue
def test_event_queue_orders_by_time_priority_then_insertion():
    q = S.EventQueue(record=True)
    q.push(1.0, "late-low", priority=(1, 0))
    q.push(1.0, "early-high", priority=(0, 5))
    q.push(0.5, "first", priority=(9, 9))
    q.push(1.0, "late-low-2", priority=(1, 0))
    assert [e.kind for e in q.drain()] == ["first", "early-high", "late-low", "late-low-2"]
    assert [e.kind for e in q.log] == ["first", "early-high", "late-low", "late-low-2"]
    assert q.now == 1.0


def test_event_queue_refuses_the_past_nan_and_runaway_rules():
    q = S.EventQueue()
    q.push(2.0, "a")
    q.pop()
    with pytest.raises(ScheduleError, match="before the clock"):
        q.push(1.0, "b")
    with pytest.raises(ScheduleError, match="NaN"):
        q.push(float("nan"), "c")
    q.push(3.0, "tick")

    def tick(ev):  # a rule that never stops
        q.push(ev.time + 1, "tick")

    with pytest.raises(ScheduleError, match="max_events"):
        q.run({"tick": tick}, max_events=50)


# ---------------------------------------------------------------------------- Schedule
def test_schedule_validates_and_derives():
    with pytest.raises(ScheduleError, match="starts from step 2 > 1"):
        S.Schedule.from_lists([[(0, 0)], [(0, 2)]], N=1)
    with pytest.raises(ScheduleError, match="client index 3 >= N=2"):
        S.Schedule.from_lists([[(3, 0)]], N=2)
    with pytest.raises(ScheduleError, match="same slots empty"):
        S.Schedule(np.array([[0, -1]]), np.array([[0, 0]]), 0.5, None, 2)
    s = S.Schedule.from_lists([[(0, 0), (1, 0)], [(1, 0)], [(0, 1), (0, 2)]], N=3)
    assert s.staleness[0].tolist() == [[0, 0], [1, -1], [1, 0]]
    assert s.max_staleness.tolist() == [1]
    assert s.participation[0].tolist() == [3, 2, 0]
    cs = s.client_staleness[0]
    assert cs[2].tolist() == [1, -1, -1] and cs[1].tolist() == [-1, 1, -1]
    assert s.check_delay(1) is s
    with pytest.raises(ScheduleError, match=r"staleness 1 > lambda=0 for client 1 \(slot 0\) at step 1"):
        s.check_delay(0)


@given(st.integers(1, 6), st.integers(1, 4), st.integers(0, 40))
def test_round_robin_staleness_is_min_k_G_minus_1(G, Sg, T):
    s = S.round_robin(N=G * Sg, S=Sg, T=T)
    k = np.arange(T)[:, None]
    assert np.array_equal(s.staleness[0], np.broadcast_to(np.minimum(k, G - 1), (T, Sg)))
    # groups are served strictly in turn
    assert np.array_equal(s.client[0], (k % G) * Sg + np.arange(Sg))


@given(st.integers(2, 13), st.integers(1, 12))
def test_round_robin_general_N(N, Sg):
    Sg = min(Sg, N)
    G = -(-N // Sg)
    T = 3 * G + 2 * N + 5
    s = S.round_robin(N=N, S=Sg, T=T)
    stale = s.staleness[0]
    assert stale.max() <= G - 1
    steady = stale[3 * G:]
    assert set(np.unique(steady)) <= {N // Sg - 1, G - 1}
    # over N consecutive steady rounds the mean staleness is exactly N/S - 1
    assert np.isclose(steady[:N].mean(), N / Sg - 1)
    assert all(len(set(row)) == Sg for row in s.client[0].tolist())  # S distinct devices a round


def test_from_delays_clamps_at_zero_and_checks_shapes():
    s = S.from_delays(clients=[[0, 1], [1, -1], [0, 1]], delays=[[3, 0], [1, 0], [1, 2]], N=2)
    assert s.start[0].tolist() == [[0, 0], [0, -1], [1, 0]]
    with pytest.raises(ScheduleError, match="broadcast"):
        S.from_delays(clients=np.zeros((3, 2), int), delays=np.zeros((2, 2), int), N=1)


# ---------------------------------------------------------------------------- first n arrivals
speeds = st.one_of(
    st.lists(st.integers(1, 3), min_size=1, max_size=6).map(lambda v: np.array(v, float)),   # many ties
    st.lists(st.floats(1, 5), min_size=1, max_size=6).map(np.array),
)


@given(c=speeds, data=st.data())
def test_first_n_arrivals_matches_the_event_engine(c, data):
    N = c.size
    n = data.draw(st.integers(1, N))
    T = data.draw(st.integers(1, 12))
    K = data.draw(st.integers(1, 3))
    t_dl = data.draw(st.sampled_from([0.0, 0.5, 1.0, 4.0]))
    t_ul = data.draw(st.sampled_from([0.0, 0.25, 2.0]))
    comp = np.stack([c, c[::-1], np.roll(c, 1)])
    kw = dict(N=N, n=n, T=T, K=K, compute=comp, t_dl=t_dl, t_ul=t_ul, record_virtual=True)
    a, b = S.first_n_arrivals(**kw), S.first_n_arrivals_events(**kw)
    for f in ("client", "start", "time", "virtual_start"):
        assert np.array_equal(getattr(a, f), getattr(b, f)), f


def test_first_n_arrivals_identical_speeds_full_participation_is_fedavg():
    s = S.first_n_arrivals(N=5, n=5, T=7, K=3, compute=np.full(5, 2.0), t_dl=0.5, t_ul=0.5)
    assert np.all(s.staleness == 0)
    assert np.allclose(np.diff(s.time[0]), 3 * 2.0 + 0.5 + 0.5)
    assert np.array_equal(s.client[0], np.tile(np.arange(5), (7, 1)))


def test_first_n_arrivals_virtual_staleness_covers_the_actual():
    c = S.compute_times(seeds=np.arange(4), N=8)
    s = S.first_n_arrivals(N=8, n=3, T=60, K=2, compute=c, t_dl=0.3, t_ul=0.2, record_virtual=True)
    vs, st_ = s.virtual_staleness, s.staleness
    b, t, u = np.nonzero(s.mask)
    # a client's first update in a step is its next unapplied update: its virtual anchor is that update's
    first = np.ones_like(b, bool)
    first[1:] = ~((b[1:] == b[:-1]) & (t[1:] == t[:-1]) & (s.client[b[1:], t[1:], u[1:]] == s.client[b[:-1], t[:-1], u[:-1]]))
    assert np.array_equal(vs[b, t, s.client[b, t, u]][first], st_[b, t, u][first])
    assert np.all(vs >= 0)
    assert s.max_staleness.max() <= vs.max()
    s.check_delay(int(vs.max()), kind="virtual")
    with pytest.raises(ScheduleError, match="virtual staleness"):
        s.check_delay(int(vs.max()) - 1, kind="virtual")


def test_first_n_arrivals_batch_is_per_seed_independent():
    c = S.compute_times(seeds=np.arange(6), N=7)
    whole = S.first_n_arrivals(N=7, n=2, T=30, K=1, compute=c, t_dl=0.1)
    part = S.first_n_arrivals(N=7, n=2, T=30, K=1, compute=c[[4, 1]], t_dl=0.1)
    assert np.array_equal(whole.client[[4, 1]], part.client)
    assert np.array_equal(whole.start[[4, 1]], part.start)


def test_replay_from_lists_reproduces_the_event_engine():
    c = S.compute_times(seeds=[3], N=5)
    s = S.first_n_arrivals_events(N=5, n=2, T=15, K=2, compute=c, t_dl=0.2, t_ul=0.1)
    steps = [[(int(i), int(st_)) for i, st_ in zip(s.client[0, t], s.start[0, t])] for t in range(s.T)]
    r = S.Schedule.from_lists(steps, N=5, times=s.time[0])
    assert np.array_equal(r.client, s.client) and np.array_equal(r.start, s.start)
    assert np.array_equal(r.weight, np.broadcast_to(0.5, r.weight.shape)) and np.array_equal(r.time, s.time)


def test_first_n_arrivals_refuses_bad_input():
    with pytest.raises(ScheduleError, match="n=4 must be <= N=3"):
        S.first_n_arrivals(N=3, n=4, T=2, compute=np.ones(3))
    with pytest.raises(ScheduleError, match="compute times must be finite and > 0"):
        S.first_n_arrivals(N=2, n=1, T=2, compute=np.array([1.0, np.nan]))
    with pytest.raises(ScheduleError, match="shape"):
        S.first_n_arrivals(N=2, n=1, T=2, compute=np.ones(3))
    with pytest.raises(flt.InputTypeError, match="K must be an integer"):
        S.first_n_arrivals(N=2, n=1, T=2, K=1.5, compute=np.ones(2))


# ---------------------------------------------------------------------------- participation (AFL-DGA)
participation = st.integers(1, 5).flatmap(lambda N: st.integers(1, 12).flatmap(
    lambda T: st.lists(st.lists(st.booleans(), min_size=T, max_size=T), min_size=N, max_size=N)))


@given(participation)
def test_participation_derived_quantities(P):
    P = np.array(P, dtype=int)
    P[:, 0] = 1
    p = S.Participation(P, K=1 + (np.arange(P.size).reshape(P.shape) % 3), D=np.arange(P.size).reshape(P.shape) % 4)
    N, T = P.shape
    for i in range(N):
        for t in range(T):
            lam = max(r for r in range(t + 1) if P[i, r])
            prev = max((r for r in range(lam) if P[i, r]), default=-1)
            assert p.lam[i, t] == lam and p.tau[i, t] == t - lam + 1
            assert p.lam_prev[i, t] == prev and p.delay_sum[i, t] == t - prev
    t_d = p.t_d
    p.check(t_d=t_d)
    assert np.all(p.delay_sum <= 2 * t_d - 1)
    assert np.all(np.diff(p.A, axis=1) >= 0) and np.all(p.A >= p.C)
    sch = p.schedule()
    assert np.array_equal(sch.start[0].T, p.lam)
    assert np.array_equal(sch.staleness[0].T, p.tau - 1)
    if t_d > 1:
        with pytest.raises(ScheduleError, match=f"tau = {t_d} > t_d = {t_d - 1}"):
            p.check(t_d=t_d - 1)


def test_participation_refuses_missing_round_zero_and_bad_K():
    with pytest.raises(ScheduleError, match=r"P\[1, 0\] = 0"):
        S.Participation(np.array([[1, 1], [0, 1]]))
    with pytest.raises(ScheduleError, match="local iteration"):
        S.Participation(np.ones((2, 2), int), K=np.array([[1, 0], [1, 1]]))
