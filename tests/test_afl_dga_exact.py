"""AFL-DGA exact moments on quadratics (``fltheory.papers.afl_dga.exact``) against independent computations.

Three computations of the same method are compared: the literal per-client reference loop
(``afl_dga_loop``: the ``while`` loop over pending corrections and a stored copy of each gradient),
the batched simulator (``afl_dga``: prefix sums of corrections, one update per local iteration over
all clients) and the exact register program (``afl_dga_exact``: the correction of round ``h`` right
before the local iteration whose running count equals ``A[i, h]``, ``eta gbar^h`` read off the server
registers as ``w^h - w^{h+1}``).  Also: reductions to ``delayed.schedule_moments``, exact
``E||w^T - x*||^2`` against Monte Carlo (loop and simulator), stored gradients whose noise is reused,
the exact ``E||grad F||^2`` and ``E F`` formulas, and the schedule quantities of ``Participation``.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fltheory as flt
from fltheory import delayed, schedules
from fltheory.backend import namespace, to_numpy
from fltheory.papers.afl_dga import MODES, afl_dga, afl_dga_exact, afl_dga_loop
from fltheory.schedules import Participation, ScheduleError
from conftest import on_backend


def handmade(case):
    """Hand-made (P, K, D): idle rounds with positive D, mid-round and late corrections."""
    if case == "idle-with-delay":
        P = [[1, 1, 1, 1, 1, 1, 1, 1],
             [1, 0, 1, 0, 0, 1, 1, 0],
             [1, 1, 1, 0, 1, 1, 0, 1]]
        K = [[1, 2, 3, 1, 2, 3, 1, 2],
             [2, 1, 3, 1, 1, 2, 2, 1],
             [3, 1, 2, 1, 2, 1, 1, 3]]
        D = [[0, 2, 1, 3, 0, 2, 4, 1],
             [3, 2, 4, 2, 3, 0, 2, 2],
             [2, 3, 2, 4, 2, 3, 2, 2]]
    elif case == "long-delays":
        P = [[1, 0, 0, 1, 0, 1, 1],
             [1, 1, 1, 1, 1, 1, 1]]
        K = [[3, 1, 1, 3, 1, 2, 3],
             [1, 1, 1, 1, 1, 1, 1]]
        D = [[4, 4, 3, 2, 4, 3, 4],
             [3, 4, 2, 4, 3, 2, 3]]
    else:
        P = np.ones((4, 6), int)
        K = [[2, 2, 2, 2, 2, 2], [1, 1, 1, 1, 1, 1], [3, 3, 3, 3, 3, 3], [1, 2, 3, 1, 2, 3]]
        D = [[2, 2, 2, 2, 2, 2], [0, 3, 0, 3, 0, 3], [4, 0, 4, 0, 4, 0], [1, 2, 3, 4, 3, 2]]
    return np.array(P), np.array(K), np.array(D)


CASES = ["idle-with-delay", "long-delays", "sync-with-delay"]


def make_fed(N, d, *, seed, sigma2=None, weights="dirichlet"):
    return flt.random_quadratic_federation(M=N, d=d, seed=seed, kappa=5.0, heterogeneity=1.5, weights=weights,
                                           sigma2=sigma2)


def make_part(fed, P, K=None, D=None):
    return Participation(P, K, D, weights=np.asarray(fed.weights))


@st.composite
def random_instances(draw):
    N, T, d = draw(st.integers(2, 3)), draw(st.integers(4, 8)), draw(st.integers(1, 3))
    cells = N * T
    P = np.array(draw(st.lists(st.booleans(), min_size=cells, max_size=cells)), int).reshape(N, T)
    P[:, 0] = 1
    K = np.array(draw(st.lists(st.integers(1, 3), min_size=cells, max_size=cells))).reshape(N, T)
    D = np.array(draw(st.lists(st.integers(0, 3), min_size=cells, max_size=cells))).reshape(N, T)
    return N, d, P, K, D, draw(st.integers(0, 10_000)), draw(st.sampled_from([0.02, 0.05, 0.1]))


# ======================================================================================
# three implementations agree (deterministic)
# ======================================================================================
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", CASES)
def test_exact_simulator_and_loop_agree_handmade(case, mode, xp):
    P, K, D = handmade(case)
    fed = make_fed(P.shape[0], 2, seed=11)
    part = make_part(fed, P, K, D)
    w0 = np.array([1.5, -2.0])
    loop = afl_dga_loop(fed, part, eta=0.05, w0=w0, mode=mode)
    sim = afl_dga(on_backend(fed, xp), part, eta=0.05, w0=xp.asarray(w0), mode=mode).w     # the batched simulator
    assert namespace(sim) is xp
    sim = to_numpy(sim)
    mom = afl_dga_exact(fed, part, eta=0.05, w0=w0, mode=mode)
    assert mom.mean.shape == loop.shape == sim.shape == (P.shape[1] + 1, 2)
    np.testing.assert_allclose(mom.mean, loop, rtol=0, atol=1e-10)
    np.testing.assert_allclose(sim, loop, rtol=0, atol=1e-12)
    np.testing.assert_allclose(mom.mse, ((loop - np.asarray(fed.x_star)) ** 2).sum(-1), rtol=0, atol=1e-10)
    # the schedule matters: moving the delays changes the trajectory well beyond the tolerance
    moved = afl_dga_loop(fed, make_part(fed, P, K, np.zeros_like(D)), eta=0.05, w0=w0, mode=mode)
    assert np.abs(moved - loop).max() > 1e-4


def test_the_three_modes_differ():
    P, K, D = handmade("idle-with-delay")
    fed = make_fed(3, 2, seed=11)
    part = make_part(fed, P, K, D)
    runs = [afl_dga_exact(fed, part, eta=0.05, w0=np.ones(2), mode=m).mean for m in MODES]
    assert min(np.abs(runs[0] - runs[1]).max(), np.abs(runs[0] - runs[2]).max(), np.abs(runs[1] - runs[2]).max()) > 1e-5


def test_handmade_schedule_exercises_delayed_corrections():
    """Corrections land mid-round and several rounds late; client 2's idle round 3 (D = 4) delays those after it."""
    P, K, D = handmade("idle-with-delay")
    fed = make_fed(3, 2, seed=11)
    part = make_part(fed, P, K, D)
    log = []
    afl_dga_loop(fed, part, eta=0.05, w0=np.zeros(2), log=log)
    assert any(j > 0 for (_, _, _, j) in log)
    assert any(r - h >= 3 for (_, h, r, _) in log)
    applied_2 = {h: (r, j) for (i, h, r, j) in log if i == 2}
    # by hand: C[2, 3] = C[2, 2] = 6 and D[2, 3] = 4, so A[2, 3] = 10: the correction of round 3 waits for the
    # iteration with count 10, the second one (j = 1) of round 7 (C[2, 6] = 9)
    np.testing.assert_array_equal(part.C[2], [3, 4, 6, 6, 8, 9, 9, 12])
    np.testing.assert_array_equal(part.A[2], [5, 7, 8, 10, 10, 12, 12, 14])
    assert applied_2[3] == (7, 1) and applied_2[4] == (7, 1) and applied_2[2] == (5, 0)


@settings(max_examples=15)
@given(random_instances(), st.sampled_from(MODES))
def test_exact_equals_simulator_random(inst, mode):
    N, d, P, K, D, seed, eta = inst
    fed = make_fed(N, d, seed=seed)
    part = make_part(fed, P, K, D)
    w0 = np.linspace(-1.0, 2.0, d)
    sim = afl_dga(fed, part, eta=eta, w0=w0, mode=mode).w
    mom = afl_dga_exact(fed, part, eta=eta, w0=w0, mode=mode)
    np.testing.assert_allclose(mom.mean, sim, rtol=0, atol=1e-10)
    np.testing.assert_allclose(mom.mse, ((sim - np.asarray(fed.x_star)) ** 2).sum(-1), rtol=0, atol=1e-10)


@settings(max_examples=10)
@given(random_instances())
def test_loop_identity_holds_on_random_schedules(inst):
    """The loop's own identity check (w_i = w^{a+1} - eta * uncorrected local gradients) passes in analysis mode."""
    N, d, P, K, D, seed, eta = inst
    fed = make_fed(N, d, seed=seed)
    traj = afl_dga_loop(fed, make_part(fed, P, K, D), eta=eta, w0=np.ones(d), check_identity=True)
    assert np.all(np.isfinite(traj))


# ======================================================================================
# exact quantities
# ======================================================================================
def test_exact_grad2_and_loss_formulas():
    P, K, D = handmade("long-delays")
    fed = make_fed(2, 3, seed=4)
    part = make_part(fed, P, K, D)
    w0 = np.array([1.0, -2.0, 0.5])
    mom = afl_dga_exact(fed, part, eta=0.05, w0=w0)
    traj = afl_dga(fed, part, eta=0.05, w0=w0).w
    g = np.asarray(fed.grad(traj))
    np.testing.assert_allclose(mom.grad2, (g * g).sum(-1), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(mom.loss, np.asarray(fed.loss(traj)), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(mom.cov, 0.0, atol=1e-10)
    assert mom.average_grad2() == pytest.approx(float((g * g).sum(-1)[:-1].mean()), rel=1e-10)
    res = afl_dga(fed, part, eta=0.05, w0=w0)
    np.testing.assert_allclose(mom.client_mean, res.clients, rtol=0, atol=1e-10)


def test_exact_mse_matches_monte_carlo_of_loop_and_simulator():
    P, K, D = handmade("idle-with-delay")                     # T = 8, idle rounds with D > 0
    fed = make_fed(3, 2, seed=9, sigma2=0.2)
    part = make_part(fed, P, K, D)
    xs = np.asarray(fed.x_star)
    eta, w0, runs = 0.1, xs + np.array([0.3, -0.2]), 3000
    mom = afl_dga_exact(fed, part, eta=eta, w0=w0)
    for sims in (afl_dga_loop(fed, part, eta=eta, w0=w0, rng=np.random.default_rng(12345), runs=runs),
                 afl_dga(fed, part, eta=eta, w0=w0, runs=runs, seed=7).w):
        err = ((sims - xs) ** 2).sum(-1)
        se = err.std(axis=0, ddof=1) / np.sqrt(runs)
        # 5 standard errors per round (false alarm ~6e-7 per round; seeds fixed, so deterministic)
        z = (err.mean(0) - mom.mse)[1:] / se[1:]
        assert np.all(np.abs(z) <= 5), z
        # the test can fail: dropping the noise moves the value by > 20 SE
        assert mom.mse[-1] - ((mom.mean[-1] - xs) ** 2).sum() > 20 * se[-1]
        # the final client states persist across rounds and carry their own noise
    sim_final = afl_dga(fed, part, eta=eta, w0=w0, runs=runs, seed=7).clients
    cerr = ((sim_final - xs) ** 2).sum(-1)
    zc = (cerr.mean(0) - mom.client_mse) / (cerr.std(0, ddof=1) / np.sqrt(runs))
    assert np.all(np.abs(zc) <= 5), zc
    noiseless = flt.QuadraticFederation(fed.H, fed.x_opt, fed.weights)
    np.testing.assert_allclose(mom.mean, afl_dga_loop(noiseless, part, eta=eta, w0=w0), rtol=0, atol=1e-12)


# ======================================================================================
# reductions through the core
# ======================================================================================
def test_full_participation_no_delay_is_minibatch_gd():
    fed = make_fed(3, 2, seed=7)
    T, eta, w0 = 9, 0.07, np.array([2.0, -3.0])
    part = make_part(fed, np.ones((3, T), int))
    p = np.asarray(fed.weights)
    gd = [w0]
    for _ in range(T):
        gd.append(gd[-1] - eta * p @ np.asarray(fed.grad_clients_at(gd[-1])))
    np.testing.assert_allclose(afl_dga_exact(fed, part, eta=eta, w0=w0).mean, np.array(gd), rtol=0, atol=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_k1_d0_is_stale_memory_sgd_and_schedule_moments(seed):
    rng = np.random.default_rng(seed)
    N, T, d, eta = 3, 10, 2, 0.06
    P = (rng.random((N, T)) < 0.5).astype(int)
    P[:, 0] = 1
    fed = make_fed(N, d, seed=seed)
    part = make_part(fed, P)
    w0 = np.array([1.0, -1.0])
    p, lam = np.asarray(fed.weights), part.lam
    stale = [w0]
    for t in range(T):
        grads = np.array([np.asarray(fed.grad_clients_at(stale[lam[i, t]]))[i] for i in range(N)])
        stale.append(stale[-1] - eta * p @ grads)
    stale = np.array(stale)
    sm = delayed.schedule_moments(fed, part.schedule(), delayed.LocalSGD(eta_local=1.0, K=1, output="gradient_sum"),
                                  eta=eta, x0=w0)
    np.testing.assert_allclose(sm.mean[:, 0], stale, rtol=0, atol=1e-12)
    np.testing.assert_allclose(afl_dga_exact(fed, part, eta=eta, w0=w0).mean, stale, rtol=0, atol=1e-12)
    assert not np.all(P)


def test_d0_with_local_steps_is_delayed_local_sgd():
    """D = 0, K in 1..3, anarchic P: the server follows the participation schedule with averaged local gradients."""
    rng = np.random.default_rng(3)
    N, T, d, eta = 3, 8, 2, 0.05
    P = (rng.random((N, T)) < 0.6).astype(int)
    P[:, 0] = 1
    fed = make_fed(N, d, seed=3)
    part = make_part(fed, P, rng.integers(1, 4, (N, T)))
    w0 = np.array([0.5, 2.0])
    sm = delayed.schedule_moments(fed, part.schedule(), delayed.LocalSGD(eta_local=eta, K=(1, 2, 3), output="gradient_mean"),
                                  eta=eta, x0=w0)
    np.testing.assert_allclose(afl_dga(fed, part, eta=eta, w0=w0).w, sm.mean[:, 0], rtol=0, atol=1e-12)


def test_noisy_full_participation_d0_matches_schedule_moments_second_moments():
    N, T, d, eta = 3, 7, 2, 0.05
    K = np.random.default_rng(4).integers(1, 4, (N, T))
    fed = make_fed(N, d, seed=4, sigma2=0.1)
    part = make_part(fed, np.ones((N, T), int), K)
    w0 = np.array([1.0, 1.0])
    mom = afl_dga_exact(fed, part, eta=eta, w0=w0)
    sm = delayed.schedule_moments(fed, part.schedule(), delayed.LocalSGD(eta_local=eta, K=(1, 2, 3), output="gradient_mean"),
                                  eta=eta, x0=w0)
    np.testing.assert_allclose(mom.mean, sm.mean[:, 0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(mom.mse, sm.mse[:, 0], rtol=1e-10, atol=1e-14)
    assert mom.mse[-1] - ((mom.mean[-1] - np.asarray(fed.x_star)) ** 2).sum() > 1e-4


def test_noisy_anarchic_stored_gradients_are_reused_not_redrawn():
    """A stored gradient (and its noise) is reused until its client participates again: means agree with a
    fresh-noise model, second moments must not, and schedule_moments refuses the reusing schedule."""
    N, T, d, eta = 3, 8, 2, 0.1
    P = np.array([[1, 0, 0, 1, 0, 0, 1, 0], [1, 1, 0, 0, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1, 1, 1]])
    fed = make_fed(N, d, seed=6, sigma2=0.2)
    part = make_part(fed, P)
    w0 = np.zeros(d)
    mom = afl_dga_exact(fed, part, eta=eta, w0=w0)
    loc = delayed.LocalSGD(eta_local=1.0, K=1, output="gradient_sum")
    sched = part.schedule()
    assert sched.reuses_updates
    with pytest.raises(schedules.ScheduleError, match="reuses_updates"):
        delayed.schedule_moments(fed, sched, loc, eta=eta, x0=w0)
    fresh = schedules.Schedule(sched.client, sched.start, sched.weight, None, sched.N, sched.local_steps)
    sm = delayed.schedule_moments(fed, fresh, loc, eta=eta, x0=w0)
    np.testing.assert_allclose(mom.mean, sm.mean[:, 0], rtol=0, atol=1e-12)
    assert abs(mom.mse[-1] - sm.mse[-1, 0]) > 1e-4


# ======================================================================================
# Participation: derived quantities and Assumption 4
# ======================================================================================
@given(random_instances())
def test_participation_quantities_from_definitions(inst):
    N, _, P, K, D, _, _ = inst
    part = Participation(P, K, D)
    T = P.shape[1]
    lam, C, A = np.zeros((N, T), int), np.zeros((N, T), int), np.zeros((N, T), int)
    for i in range(N):
        last, c, a = -1, 0, 0
        for t in range(T):
            if P[i, t]:
                last, c = t, c + K[i, t]
            lam[i, t], C[i, t] = last, c
            a = max(a, c + D[i, t])
            A[i, t] = a
    np.testing.assert_array_equal(part.lam, lam)
    np.testing.assert_array_equal(part.tau, np.arange(T) - lam + 1)
    np.testing.assert_array_equal(part.C, C)
    np.testing.assert_array_equal(part.A, A)
    assert part.t_d == int((np.arange(T) - lam + 1).max())


def test_assumption4_check():
    part = Participation(np.array([[1, 1, 1, 1, 1], [1, 0, 0, 1, 0], [1, 1, 0, 1, 1]]))
    np.testing.assert_array_equal(part.tau[1], [1, 2, 3, 1, 2])
    assert part.t_d == 3
    assert part.check(t_d=3) is part
    with pytest.raises(ScheduleError, match=r"client 1 at round 2 has tau = 3 > t_d = 2"):
        part.check(t_d=2)
    with pytest.raises(ScheduleError, match=r"client 1 at round 1 has tau = 2 > t_d = 1 \(last participation in round 0\)"):
        part.check(t_d=1)
    Participation(np.ones((3, 5), int)).check(t_d=1)
    with pytest.raises(flt.InputError, match=r"t_d must be an integer in \[1, "):
        part.check(t_d=0)


def test_participation_rejects_invalid_input():
    with pytest.raises(ScheduleError, match=r"P\[1, 0\] = 0"):
        Participation(np.array([[1, 1], [0, 1]]))
    with pytest.raises(ScheduleError, match=r"K\[0, 1\]"):
        Participation(np.ones((2, 3), int), K=np.array([[1, 0, 1], [1, 1, 1]]))
    with pytest.raises(ScheduleError, match=r"D\[1, 2\]"):
        Participation(np.ones((2, 3), int), D=np.array([[0, 0, 0], [0, 0, -1]]))


def test_exact_refuses_what_it_cannot_do():
    fed = make_fed(2, 2, seed=0)
    part = make_part(fed, np.ones((2, 3), int))
    with pytest.raises(flt.InputTypeError, match="fed"):
        afl_dga_exact(flt.problems.LinearFederation(c=np.ones((2, 2))), part, eta=0.1, w0=np.zeros(2))
    with pytest.raises(flt.InputError, match="weights"):
        afl_dga_exact(fed, Participation(np.ones((2, 3), int)), eta=0.1, w0=np.zeros(2))
    with pytest.raises(flt.InputError, match="mode"):
        afl_dga_exact(fed, part, eta=0.1, w0=np.zeros(2), mode="text")
    big = make_fed(8, 4, seed=0)
    with pytest.raises(flt.InputError, match="exact second moments"):
        afl_dga_exact(big, make_part(big, np.ones((8, 400), int)), eta=0.1, w0=np.zeros(4))
