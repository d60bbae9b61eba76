"""AFL-DGA (anarchic FL with delayed gradient averaging) end to end on the core machinery.

What this file demonstrates
---------------------------
The timing of AFL-DGA -- a participation matrix ``P``, per-round local iterations ``K`` and
global-gradient delays ``D`` -- is data (:class:`fltheory.schedules.Participation`: ``lam``,
``tau``, ``C``, ``A``), and the algorithm in its ``analysis`` correction mode is a sequence of
affine assignments on registers, so :class:`fltheory.delayed.RegisterMoments` gives its exact
means and second moments on quadratic clients with additive gradient noise.

Two independent computations of the same method are compared:

* :func:`afl_dga_loop` -- a literal reference implementation (per client, per local step, with
  the ``while`` loop over pending corrections, stored gradients and an optional Gaussian noise
  generator; vectorised over Monte Carlo runs only);
* :func:`afl_dga_exact` -- the same procedure as register assignments in ``y = x - x*``
  coordinates.  It is written differently on purpose: the correction of round ``h`` is applied
  right before the local iteration whose running count equals ``A[i, h]`` (``A`` is
  non-decreasing and ``A >= C``, so this is the loop's rule), ``gbar^h`` is read off the server
  registers as ``(w^h - w^{h+1}) / eta`` and the server step reads the round-``lam_i(t)`` gradient
  sums through ``Participation.lam`` instead of a stored copy.

Checked: exact means == loop trajectory (1e-10) on hand-made and random schedules; the identity
``w_i = w^{a+1} - eta * (local gradients of rounds > a)`` at every local step (1e-12);
reductions to mini-batch gradient descent, to stale-memory SGD and to
:func:`fltheory.delayed.schedule_moments`; exact ``E||w^T - x*||^2`` against Monte Carlo of the
loop; and Assumption 4 (``Participation.check``).
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import fltheory as flt
from fltheory import delayed, schedules
from fltheory.delayed import RegisterMoments
from fltheory.schedules import Participation, ScheduleError


# ======================================================================================
# the two implementations
# ======================================================================================
def _weights(fed, part):
    """The aggregation weights p_i: the federation's (which define x*), required to agree with the
    participation's own ``weights`` so that ``part.schedule()`` describes the same method."""
    p = np.asarray(fed.weights, float)
    if not np.allclose(p, part.weights, rtol=0, atol=1e-12):
        raise ValueError("fed.weights and part.weights differ")
    return p


def _noise_root(fed):
    """A symmetric square root of every client's noise covariance (eigh: PSD is enough)."""
    lam, V = np.linalg.eigh(np.asarray(fed.noise_cov, float))
    return (V * np.sqrt(np.clip(lam, 0.0, None))[..., None, :]) @ np.swapaxes(V, -1, -2)


def afl_dga_loop(fed, part, eta, w0, rng=None, *, runs=None, check_identity=False, log=None):
    """AFL-DGA, analysis mode, exactly as written in the procedure (see the module docstring).

    Returns the server trajectory ``w^0 .. w^T`` (T+1, d), or (runs, T+1, d) with ``runs``
    independent noise realisations.  ``rng`` (np.random.Generator) adds gradient noise with
    covariance ``fed.noise_cov``; ``rng=None`` gives the deterministic method.

    ``check_identity`` asserts, before and after every local step, that
    ``w_i = w^{a+1} - eta * sum(local gradients of rounds > a)`` (``a = applied_i``) and, at the
    end of each round, that the client's iteration count is ``part.C[i, r]``.  ``log`` (a list)
    receives one ``(client, h, round, local step j)`` tuple per applied correction.
    """
    H, xo = np.asarray(fed.H, float), np.asarray(fed.x_opt, float)
    p = _weights(fed, part)
    P, K, A, C = part.P, part.K, part.A, part.C
    N, T = P.shape
    d = fed.d
    R = 1 if runs is None else int(runs)
    root = _noise_root(fed) if (rng is not None and fed.noise_cov is not None) else None

    server = [np.broadcast_to(np.asarray(w0, float), (R, d)).copy()]
    gbar: list[np.ndarray] = []
    w = [server[0].copy() for _ in range(N)]
    count = [0] * N
    applied = [-1] * N
    stored: list[np.ndarray | None] = [None] * N
    S: list[list[np.ndarray | None]] = [[None] * T for _ in range(N)]   # None: did not participate

    def identity(i, r, partial):
        a = applied[i]
        grads = partial.copy()
        for rr in range(a + 1, r):
            if S[i][rr] is not None:
                grads += S[i][rr]
        np.testing.assert_allclose(w[i], server[a + 1] - eta * grads, rtol=0, atol=1e-12,
                                   err_msg=f"identity, client {i}, round {r}, applied {a}")

    for r in range(T):
        for i in range(N):
            if not P[i, r]:
                continue
            s = np.zeros((R, d))
            for j in range(int(K[i, r])):
                while applied[i] + 1 <= r - 1 and A[i, applied[i] + 1] <= count[i]:
                    h = applied[i] + 1
                    w[i] = w[i] - eta * gbar[h]
                    if S[i][h] is not None:
                        w[i] = w[i] + eta * S[i][h]
                    applied[i] = h
                    if log is not None:
                        log.append((i, h, r, j))
                if check_identity:
                    identity(i, r, s)
                g = (w[i] - xo[i]) @ H[i].T
                if root is not None:
                    g = g + rng.standard_normal((R, d)) @ root[i].T
                w[i] = w[i] - eta * g
                count[i] += 1
                s = s + g
                if check_identity:
                    identity(i, r, s)
            S[i][r] = s
            stored[i] = s / K[i, r]
            if check_identity:
                assert count[i] == C[i, r], (i, r, count[i], C[i, r])
        gbar.append(sum(p[i] * stored[i] for i in range(N)))
        server.append(server[-1] - eta * gbar[-1])
    traj = np.stack(server, axis=1)
    return traj[0] if runs is None else traj


def afl_dga_exact(fed, part, eta, w0):
    """The same procedure as affine assignments on :class:`RegisterMoments` (y = x - x*).

    Registers: server models ``w^0 .. w^T``, one model per client, one gradient sum ``S_i^r`` per
    client and round, and a scratch register for the current (noisy) gradient.  Returns the exact
    means of ``w^t`` (T+1, d) and ``E||w^t - x*||^2`` (T+1,).
    """
    H, xo = np.asarray(fed.H, float), np.asarray(fed.x_opt, float)
    xs = np.asarray(fed.x_star, float)
    Sig = None if fed.noise_cov is None else np.asarray(fed.noise_cov, float)
    p = _weights(fed, part)
    P, K, A, lam = part.P, part.K, part.A, part.lam
    N, T = P.shape
    d = fed.d

    def srv(r):
        return r

    def cli(i):
        return T + 1 + i

    def gsum(i, r):
        return T + 1 + N + i * T + r

    scratch = T + 1 + N + N * T
    n = scratch + 1
    y0 = np.asarray(w0, float) - xs
    mean = np.zeros((n, d))
    mean[srv(0)] = y0
    for i in range(N):
        mean[cli(i)] = y0
    rm = RegisterMoments(n, d, mean=mean.reshape(-1))          # deterministic start: second = m m^T
    I = np.eye(d)

    # correction h of client i is due right before its local iteration number A[i, h] (0-based)
    due = [dict() for _ in range(N)]
    for i in range(N):
        for h in range(T):
            due[i].setdefault(int(A[i, h]), []).append(h)
    count = [0] * N

    for r in range(T):
        for i in range(N):
            if not P[i, r]:
                continue
            for _ in range(int(K[i, r])):
                for h in due[i].get(count[i], []):
                    # w_i <- w_i - eta gbar^h + eta S_i^h,  eta gbar^h = w^h - w^{h+1}
                    src, mats = [cli(i), srv(h), srv(h + 1)], [I, -I, I]
                    if P[i, h]:
                        src.append(gsum(i, h))
                        mats.append(eta * I)
                    rm.assign([cli(i)], [src], np.array([mats]))
                # g <- H_i y_i + H_i (x* - x_i*) + nu,  Cov nu = Sigma_i (drawn once, used twice)
                rm.assign([scratch], [[cli(i)]], H[i][None, None], offset=(H[i] @ (xs - xo[i]))[None],
                          noise=None if Sig is None else Sig[i][None])
                # simultaneously: w_i <- w_i - eta g ; S_i^r <- S_i^r + g
                rm.assign([cli(i), gsum(i, r)], [[cli(i), scratch], [gsum(i, r), scratch]],
                          np.array([[I, -eta * I], [I, I]]))
                count[i] += 1
        # w^{r+1} <- w^r - eta sum_i p_i S_i^{lam_i(r)} / K[i, lam_i(r)]
        src = [srv(r)] + [gsum(i, int(lam[i, r])) for i in range(N)]
        mats = [I] + [-eta * p[i] / K[i, lam[i, r]] * I for i in range(N)]
        rm.assign([srv(r + 1)], [src], np.array([mats]))

    means = np.stack([rm.register_mean(srv(t)) for t in range(T + 1)]) + xs
    mse = np.array([np.trace(rm.block(srv(t), srv(t))) for t in range(T + 1)])
    return means, mse


# ======================================================================================
# instances
# ======================================================================================
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
    elif case == "sync-with-delay":
        P = np.ones((4, 6), int)
        K = [[2, 2, 2, 2, 2, 2], [1, 1, 1, 1, 1, 1], [3, 3, 3, 3, 3, 3], [1, 2, 3, 1, 2, 3]]
        D = [[2, 2, 2, 2, 2, 2], [0, 3, 0, 3, 0, 3], [4, 0, 4, 0, 4, 0], [1, 2, 3, 4, 3, 2]]
    else:
        raise KeyError(case)
    return np.array(P), np.array(K), np.array(D)


CASES = ["idle-with-delay", "long-delays", "sync-with-delay"]


def make_fed(N, d, *, seed, sigma2=None, weights="dirichlet"):
    return flt.random_quadratic_federation(M=N, d=d, seed=seed, kappa=5.0, heterogeneity=1.5,
                                           weights=weights, sigma2=sigma2)


def make_part(fed, P, K=None, D=None):
    return Participation(P, K, D, weights=np.asarray(fed.weights))


@st.composite
def random_instances(draw):
    N = draw(st.integers(2, 3))
    T = draw(st.integers(4, 8))
    d = draw(st.integers(1, 3))
    cells = N * T
    P = np.array(draw(st.lists(st.booleans(), min_size=cells, max_size=cells)), int).reshape(N, T)
    P[:, 0] = 1
    K = np.array(draw(st.lists(st.integers(1, 3), min_size=cells, max_size=cells))).reshape(N, T)
    D = np.array(draw(st.lists(st.integers(0, 3), min_size=cells, max_size=cells))).reshape(N, T)
    seed = draw(st.integers(0, 10_000))
    eta = draw(st.sampled_from([0.02, 0.05, 0.1]))
    return N, d, P, K, D, seed, eta


# ======================================================================================
# exact == loop (deterministic)
# ======================================================================================
@pytest.mark.parametrize("case", CASES)
def test_exact_means_equal_loop_handmade(case):
    P, K, D = handmade(case)
    N = P.shape[0]
    fed = make_fed(N, 2, seed=11)
    part = make_part(fed, P, K, D)
    w0 = np.array([1.5, -2.0])
    loop = afl_dga_loop(fed, part, 0.05, w0)
    means, mse = afl_dga_exact(fed, part, 0.05, w0)
    assert means.shape == loop.shape == (P.shape[1] + 1, 2)
    np.testing.assert_allclose(means, loop, rtol=0, atol=1e-10)
    # no noise: the second moment is that of a point mass
    np.testing.assert_allclose(mse, ((loop - np.asarray(fed.x_star)) ** 2).sum(-1), rtol=0, atol=1e-10)
    # the schedule is not trivial: moving it changes the trajectory well beyond the tolerance
    moved = afl_dga_loop(fed, make_part(fed, P, K, np.zeros_like(D)), 0.05, w0)
    assert np.abs(moved - loop).max() > 1e-4


def test_handmade_schedule_exercises_delayed_corrections():
    """The idle-with-delay case applies corrections mid-round and several rounds late, and
    client 2's idle round 3 (D = 4) still delays the corrections that follow it."""
    P, K, D = handmade("idle-with-delay")
    fed = make_fed(3, 2, seed=11)
    part = make_part(fed, P, K, D)
    log = []
    afl_dga_loop(fed, part, 0.05, np.zeros(2), log=log)
    assert any(j > 0 for (_, _, _, j) in log), "some correction lands mid-round"
    assert any(r - h >= 3 for (_, h, r, _) in log), "some correction lands >= 3 rounds late"
    applied_2 = {h: (r, j) for (i, h, r, j) in log if i == 2}
    assert 3 in applied_2                                         # the idle round's correction
    # by hand: C[2, 3] = C[2, 2] = 6 and D[2, 3] = 4, so A[2, 3] = 10: the correction of round 3
    # waits for client 2's iteration with count 10, the second one (j = 1) of round 7 (C[2, 6] = 9)
    np.testing.assert_array_equal(part.C[2], [3, 4, 6, 6, 8, 9, 9, 12])
    np.testing.assert_array_equal(part.A[2], [5, 7, 8, 10, 10, 12, 12, 14])
    assert applied_2[3] == (7, 1) and applied_2[4] == (7, 1) and applied_2[2] == (5, 0)


@given(random_instances())
def test_exact_means_equal_loop_random(inst):
    N, d, P, K, D, seed, eta = inst
    fed = make_fed(N, d, seed=seed)
    part = make_part(fed, P, K, D)
    w0 = np.linspace(-1.0, 2.0, d)
    loop = afl_dga_loop(fed, part, eta, w0, check_identity=True)
    means, mse = afl_dga_exact(fed, part, eta, w0)
    np.testing.assert_allclose(means, loop, rtol=0, atol=1e-10)
    np.testing.assert_allclose(mse, ((loop - np.asarray(fed.x_star)) ** 2).sum(-1), rtol=0, atol=1e-10)


def test_exact_means_equal_loop_seeded_random():
    """The same comparison on seeded numpy draws (larger schedules than the hypothesis ones)."""
    rng = np.random.default_rng(2024)
    for _ in range(6):
        N, T, d = int(rng.integers(2, 5)), int(rng.integers(6, 11)), int(rng.integers(1, 4))
        P = (rng.random((N, T)) < 0.6).astype(int)
        P[:, 0] = 1
        K, D = rng.integers(1, 4, (N, T)), rng.integers(0, 4, (N, T))
        fed = make_fed(N, d, seed=int(rng.integers(1000)))
        part = make_part(fed, P, K, D)
        w0 = rng.normal(size=d)
        loop = afl_dga_loop(fed, part, 0.05, w0, check_identity=True)
        means, _ = afl_dga_exact(fed, part, 0.05, w0)
        np.testing.assert_allclose(means, loop, rtol=0, atol=1e-10)


# ======================================================================================
# the key identity
# ======================================================================================
@pytest.mark.parametrize("case", CASES)
def test_identity_inside_the_loop(case):
    """w_i = w^{a+1} - eta * (gradients of rounds > a) at every local step, to 1e-12, and the
    iteration counters follow Participation.C."""
    P, K, D = handmade(case)
    fed = make_fed(P.shape[0], 3, seed=5)
    part = make_part(fed, P, K, D)
    log = []
    afl_dga_loop(fed, part, 0.08, np.array([2.0, -1.0, 0.5]), check_identity=True, log=log)
    assert log, "the identity is checked across applied corrections"


def test_identity_breaks_when_a_correction_is_wrong():
    """Sanity of the check itself: a loop that forgets the + eta S_i^h term fails the identity."""
    P, K, D = handmade("idle-with-delay")
    fed = make_fed(3, 2, seed=5)
    part = make_part(fed, P, K, D)

    def broken_loop():
        # re-run the reference with a tampered correction: w_i <- w_i - eta gbar^h only
        H, xo = np.asarray(fed.H), np.asarray(fed.x_opt)
        p = np.asarray(fed.weights)
        server, gbar = [np.ones(2)], []
        w, cnt, app, stored, S = [np.ones(2)] * 3, [0] * 3, [-1] * 3, [None] * 3, {}
        for r in range(part.T):
            for i in range(3):
                if not part.P[i, r]:
                    continue
                s = np.zeros(2)
                for _ in range(part.K[i, r]):
                    while app[i] + 1 <= r - 1 and part.A[i, app[i] + 1] <= cnt[i]:
                        app[i] += 1
                        w[i] = w[i] - 0.05 * gbar[app[i]]          # the + eta S_i^h is missing
                    grads = s + sum(S.get((i, rr), 0) for rr in range(app[i] + 1, r))
                    if not np.allclose(w[i], server[app[i] + 1] - 0.05 * grads, rtol=0, atol=1e-12):
                        return True
                    g = H[i] @ (w[i] - xo[i])
                    w[i], s, cnt[i] = w[i] - 0.05 * g, s + g, cnt[i] + 1
                S[(i, r)], stored[i] = s, s / part.K[i, r]
            gbar.append(sum(p[i] * stored[i] for i in range(3)))
            server.append(server[-1] - 0.05 * gbar[-1])
        return False

    assert broken_loop(), "the identity check must detect a wrong correction"


# ======================================================================================
# reductions
# ======================================================================================
def test_full_participation_no_delay_is_minibatch_gd():
    fed = make_fed(3, 2, seed=7)
    T, eta, w0 = 9, 0.07, np.array([2.0, -3.0])
    part = make_part(fed, np.ones((3, T), int))
    traj = afl_dga_loop(fed, part, eta, w0)
    p = np.asarray(fed.weights)
    gd = [w0]
    for _ in range(T):
        gd.append(gd[-1] - eta * p @ np.asarray(fed.grad_clients_at(gd[-1])))
    np.testing.assert_allclose(traj, np.array(gd), rtol=0, atol=1e-12)
    means, _ = afl_dga_exact(fed, part, eta, w0)
    np.testing.assert_allclose(means, np.array(gd), rtol=0, atol=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_k1_d0_is_stale_memory_sgd_and_schedule_moments(seed):
    rng = np.random.default_rng(seed)
    N, T, d, eta = 3, 10, 2, 0.06
    P = (rng.random((N, T)) < 0.5).astype(int)
    P[:, 0] = 1
    fed = make_fed(N, d, seed=seed)
    part = make_part(fed, P)                         # K = 1, D = 0
    w0 = np.array([1.0, -1.0])
    traj = afl_dga_loop(fed, part, eta, w0)
    p, lam = np.asarray(fed.weights), part.lam
    stale = [w0]
    for t in range(T):
        grads = np.array([np.asarray(fed.grad_clients_at(stale[lam[i, t]]))[i] for i in range(N)])
        stale.append(stale[-1] - eta * p @ grads)
    stale = np.array(stale)
    np.testing.assert_allclose(traj, stale, rtol=0, atol=1e-12)
    sm = delayed.schedule_moments(fed, part.schedule(), delayed.LocalSGD(eta_local=1.0, K=1, output="gradient_sum"),
                                  eta=eta, x0=w0)
    assert sm.mean.shape == (T + 1, 1, d)
    np.testing.assert_allclose(sm.mean[:, 0], stale, rtol=0, atol=1e-12)
    means, _ = afl_dga_exact(fed, part, eta, w0)
    np.testing.assert_allclose(means, stale, rtol=0, atol=1e-12)
    assert not np.all(P), "the draw is anarchic"


def _averaged_schedule(part):
    """part.schedule() with weights p_i / K[i, lam_i(t)]: the server step of D = 0 AFL-DGA as a
    delayed local-SGD step whose update is the *average* local gradient."""
    s = part.schedule()
    return schedules.Schedule(s.client, s.start, s.weight / s.local_steps, None, s.N, s.local_steps,
                              name="participation, averaged gradients")


def test_d0_with_local_steps_is_delayed_local_sgd():
    """D = 0, K in 1..3, anarchic P: the client restarts every participating round from the
    newest server model, so the server follows the schedule of Participation with averaged local
    gradients (exact means to 1e-12)."""
    rng = np.random.default_rng(3)
    N, T, d, eta = 3, 8, 2, 0.05
    P = (rng.random((N, T)) < 0.6).astype(int)
    P[:, 0] = 1
    K = rng.integers(1, 4, (N, T))
    fed = make_fed(N, d, seed=3)
    part = make_part(fed, P, K)
    w0 = np.array([0.5, 2.0])
    traj = afl_dga_loop(fed, part, eta, w0)
    sm = delayed.schedule_moments(fed, _averaged_schedule(part), delayed.LocalSGD(eta_local=eta, K=(1, 2, 3),
                                  output="gradient_sum"), eta=eta, x0=w0)
    np.testing.assert_allclose(sm.mean[:, 0], traj, rtol=0, atol=1e-12)
    # the same through the averaged local update and the participation's own schedule
    mean_out = delayed.schedule_moments(fed, part.schedule(), delayed.LocalSGD(eta_local=eta, K=(1, 2, 3),
                                        output="gradient_mean"), eta=eta, x0=w0)
    np.testing.assert_allclose(mean_out.mean[:, 0], traj, rtol=0, atol=1e-12)


def test_noisy_full_participation_d0_matches_schedule_moments_second_moments():
    """With P all ones and D = 0 every stored gradient is used once, so the noise of AFL-DGA is
    fresh at every server step as in schedule_moments: E||w^t - x*||^2 agrees exactly."""
    N, T, d, eta = 3, 7, 2, 0.05
    K = np.random.default_rng(4).integers(1, 4, (N, T))
    fed = make_fed(N, d, seed=4, sigma2=0.1)
    part = make_part(fed, np.ones((N, T), int), K)
    w0 = np.array([1.0, 1.0])
    means, mse = afl_dga_exact(fed, part, eta, w0)
    sm = delayed.schedule_moments(fed, _averaged_schedule(part), delayed.LocalSGD(eta_local=eta, K=(1, 2, 3),
                                  output="gradient_sum"), eta=eta, x0=w0)
    np.testing.assert_allclose(means, sm.mean[:, 0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(mse, sm.mse[:, 0], rtol=1e-10, atol=1e-14)
    assert mse[-1] - ((means[-1] - np.asarray(fed.x_star)) ** 2).sum() > 1e-4   # the noise matters


def test_noisy_anarchic_stored_gradients_are_reused_not_redrawn():
    """With anarchic P a stored gradient (and its noise) is reused at every server step until the
    client participates again; a fresh-run model (a schedule that does not say it reuses updates)
    would draw fresh noise at every step.  The means agree (noise is zero-mean), the second moments
    must not, and schedule_moments refuses part.schedule() on noisy clients for that reason."""
    N, T, d, eta = 3, 8, 2, 0.1
    P = np.array([[1, 0, 0, 1, 0, 0, 1, 0], [1, 1, 0, 0, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1, 1, 1]])
    fed = make_fed(N, d, seed=6, sigma2=0.2)
    part = make_part(fed, P)
    w0 = np.zeros(d)
    means, mse = afl_dga_exact(fed, part, eta, w0)
    loc = delayed.LocalSGD(eta_local=1.0, K=1, output="gradient_sum")
    sched = part.schedule()
    assert sched.reuses_updates
    with pytest.raises(schedules.ScheduleError, match="reuses_updates"):
        delayed.schedule_moments(fed, sched, loc, eta=eta, x0=w0)
    fresh = schedules.Schedule(sched.client, sched.start, sched.weight, None, sched.N, sched.local_steps)
    sm = delayed.schedule_moments(fed, fresh, loc, eta=eta, x0=w0)
    np.testing.assert_allclose(means, sm.mean[:, 0], rtol=0, atol=1e-12)
    assert abs(mse[-1] - sm.mse[-1, 0]) > 1e-4


# ======================================================================================
# noise: exact second moments against Monte Carlo of the loop
# ======================================================================================
def test_exact_mse_matches_monte_carlo():
    P, K, D = handmade("idle-with-delay")                     # T = 8, idle rounds with D > 0
    fed = make_fed(3, 2, seed=9, sigma2=0.2)
    part = make_part(fed, P, K, D)
    xs = np.asarray(fed.x_star)
    eta, w0, runs = 0.1, xs + np.array([0.3, -0.2]), 3000    # start near x*: the noise term is visible
    means, mse = afl_dga_exact(fed, part, eta, w0)
    sims = afl_dga_loop(fed, part, eta, w0, np.random.default_rng(12345), runs=runs)   # (runs, T+1, d)
    err = ((sims - xs) ** 2).sum(-1)                          # (runs, T+1)
    se = err.std(axis=0, ddof=1) / np.sqrt(runs)
    # tolerance: 5 standard errors of the Monte Carlo mean at every round t >= 1 (a Gaussian false
    # alarm has probability ~6e-7 per round; the seed is fixed, so the test is deterministic)
    z = (err.mean(0) - mse)[1:] / se[1:]
    assert np.all(np.abs(z) <= 5), z
    m_se = sims[:, -1].std(axis=0, ddof=1) / np.sqrt(runs)
    assert np.all(np.abs(sims[:, -1].mean(0) - means[-1]) <= 5 * m_se)
    # the test can fail: dropping the noise (mse -> ||mean - x*||^2) moves the value by > 20 SE
    assert mse[-1] - ((means[-1] - xs) ** 2).sum() > 20 * se[-1]
    # noise is zero-mean: the exact means equal the noise-free loop
    np.testing.assert_allclose(means, afl_dga_loop(fed, part, eta, w0), rtol=0, atol=1e-12)


def test_monte_carlo_identity_holds_with_noise():
    """The identity is algebraic: it holds for noisy gradients too (one realisation)."""
    P, K, D = handmade("long-delays")
    fed = make_fed(2, 2, seed=9, sigma2=0.15)
    afl_dga_loop(fed, make_part(fed, P, K, D), 0.1, np.ones(2), np.random.default_rng(0), check_identity=True)


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
    assert part.check(t_d=10) is part
    with pytest.raises(ScheduleError, match=r"client 1 at round 2 has tau = 3 > t_d = 2"):
        part.check(t_d=2)
    # the first failing round over all clients is reported (client 1 round 1 before client 2 round 2)
    with pytest.raises(ScheduleError, match=r"client 1 at round 1 has tau = 2 > t_d = 1 \(last participation in round 0\)"):
        part.check(t_d=1)
    # a synchronous schedule satisfies t_d = 1
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
