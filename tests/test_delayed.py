"""Exact delayed dynamics: closed forms against iteration, exact moments against Monte Carlo (with a
stated statistical tolerance), and the reductions (zero delay is FedAvg, a constant delay is the
companion map, permuting clients changes nothing)."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fltheory as flt
from fltheory import delayed as D
from fltheory import schedules as S
from fltheory.backend import namespace, to_numpy
from fltheory.linear import companion
from fltheory.schedules import ScheduleError
from conftest import on_backend, to_np

Z_TOL = 5.0  # Monte Carlo tolerance: |mean - exact| <= 5 standard errors (two-sided p ~ 6e-7 per check)


def noiseless(fed):
    return flt.QuadraticFederation(fed.H, fed.x_opt, fed.weights)


def test_local_sgd_is_affine_in_the_anchor(xp):
    fed = flt.random_quadratic_federation(M=3, d=4, seed=2, sigma2=0.3)
    loc = D.LocalSGD(eta_local=0.07, K=(1, 4))
    r = loc.affine(on_backend(fed, xp))
    runs = type("Runs", (), {k: to_np(getattr(r, k)) for k in ("P", "q", "Q")})
    x0 = np.linspace(-1, 2, 4)
    for s, K in enumerate((1, 4)):
        x = np.tile(x0, (3, 1))
        for _ in range(K):
            x = x - 0.07 * fed.grad_clients(x)
        assert np.allclose(x0 - x, (runs.P[s] @ x0) + runs.q[s], atol=1e-14)
        # noise covariance: eta^2 sum_j A^j Sigma A^j
        A = np.eye(4) - 0.07 * fed.H
        ref = sum(np.linalg.matrix_power(A, j) @ fed.noise_cov @ np.linalg.matrix_power(A, j) for j in range(K)) * 0.07**2
        assert np.allclose(runs.Q[s], ref, atol=1e-15)
    g = D.LocalSGD(eta_local=0.07, K=1, output="gradient_sum").affine(on_backend(fed, xp))
    assert np.allclose(to_np(g.P)[0], fed.H) and np.allclose(to_np(g.Q)[0], fed.noise_cov)


def test_register_assign_matches_dense_moment_propagation(xp):
    rng = np.random.default_rng(4)
    n, d = 4, 2
    m0 = rng.normal(size=n * d)
    L = rng.normal(size=(n * d, n * d))
    S0 = L @ L.T + np.outer(m0, m0)
    rm = D.RegisterMoments(n, d, mean=xp.asarray(m0), second=xp.asarray(S0))
    dst, src = [1, 3], [[0, 1, 3], [2, 2, 1]]
    A = rng.normal(size=(2, 3, d, d))
    b = rng.normal(size=(2, d))
    Q = np.stack([np.eye(d) * 0.3, np.diag([0.1, 0.5])])
    # dense: z' = M z + c + nu
    M = np.eye(n * d)
    c = np.zeros(n * d)
    Qd = np.zeros((n * d, n * d))
    for w, reg in enumerate(dst):
        M[reg * d:(reg + 1) * d] = 0
        for j, s_ in enumerate(src[w]):
            M[reg * d:(reg + 1) * d, s_ * d:(s_ + 1) * d] += A[w, j]
        c[reg * d:(reg + 1) * d] = b[w]
        Qd[reg * d:(reg + 1) * d, reg * d:(reg + 1) * d] = Q[w]
    mean_ref = M @ m0 + c
    second_ref = M @ S0 @ M.T + np.outer(M @ m0, c) + np.outer(c, M @ m0) + np.outer(c, c) + Qd
    rm.assign(dst, src, xp.asarray(A), xp.asarray(b), xp.asarray(Q))
    assert np.allclose(to_np(rm.mean), mean_ref, atol=1e-12)
    assert np.allclose(to_np(rm.second), second_ref, atol=1e-12)


small_schedule = st.tuples(st.integers(2, 5), st.integers(0, 10_000)).map(
    lambda a: (a[0], S.first_n_arrivals(N=a[0], n=1 + a[1] % a[0], T=25, K=1 + a[1] % 3,
                                        compute=S.compute_times(seeds=[a[1]], N=a[0]), t_dl=0.3, t_ul=0.1)))


@given(small_schedule, st.integers(0, 100), st.sampled_from(["displacement", "gradient_sum", "gradient_mean"]))
def test_exact_mean_is_the_noiseless_simulation(case, seed, output):
    N, sched = case
    fed = flt.random_quadratic_federation(M=N, d=3, seed=seed)
    loc = D.LocalSGD(eta_local=0.05, K=(1, 2, 3), output=output)
    sched = S.Schedule(sched.client, sched.start, sched.weight, sched.time, N,
                       local_steps=1 + (np.arange(sched.T)[None, :, None] + sched.client) % 3)
    x0 = np.arange(3.0)
    eta = 0.8 if output == "displacement" else 0.04
    m = D.schedule_moments(fed, sched, loc, eta=eta, x0=x0)
    tr = D.simulate_schedule(fed, sched, loc, eta=eta, x0=x0, return_trajectory=True)
    assert np.allclose(m.mean, tr, atol=1e-12, rtol=1e-12)
    e = tr - fed.x_star
    assert np.allclose(m.mse, (e * e).sum(-1), atol=1e-12, rtol=1e-10)
    g = e @ fed.Hbar
    assert np.allclose(m.grad_sq, (g * g).sum(-1), atol=1e-12, rtol=1e-10)
    gap = fed.loss(tr) - fed.loss(fed.x_star)
    assert np.allclose(m.gap, gap, atol=1e-12, rtol=1e-10)


def test_zero_delay_is_synchronous_fedavg_and_tau_1_gradient_descent(xp):
    fed = flt.random_quadratic_federation(M=4, d=3, seed=7)
    fx, one = on_backend(fed, xp), xp.ones(3, dtype=xp.float64)
    T = 12
    sched = S.from_delays(clients=np.tile(np.arange(4), (T, 1)), delays=np.zeros((T, 4), int), N=4,
                          weights=np.tile(fed.weights, (T, 1)))
    loc = D.LocalSGD(eta_local=0.1, K=3)
    mean = to_np(D.schedule_moments(fx, sched, loc, eta=1.0, x0=one).mean)
    x = np.ones(3)
    for t in range(T):  # FedAvg: every client runs 3 local steps from x, the server averages
        xi = np.tile(x, (4, 1))
        for _ in range(3):
            xi = xi - 0.1 * fed.grad_clients(xi)
        x = fed.weights @ xi
        assert np.allclose(mean[t + 1, 0], x, atol=1e-14)
    g = D.schedule_moments(fx, sched, D.LocalSGD(eta_local=0.2, K=1, output="gradient_sum"), eta=0.2, x0=one)
    x = np.ones(3)
    for t in range(T):  # one local step: gradient descent on F
        x = x - 0.2 * fed.grad(x)
    assert np.allclose(to_np(g.mean)[-1, 0], x, atol=1e-14)


def test_constant_delay_reduces_to_companion(xp):
    fed = flt.random_quadratic_federation(M=3, d=2, seed=5)
    Dl, T = 3, 10
    sched = S.from_delays(clients=np.tile(np.arange(3), (T, 1)), delays=np.full((T, 3), Dl), N=3)
    loc = D.LocalSGD(eta_local=0.1, K=2)
    runs = loc.affine(fed)
    Pbar = np.einsum("m,mij->ij", np.full(3, 1 / 3), runs.P[0])
    qbar = np.full(3, 1 / 3) @ runs.q[0]
    comp = companion([np.eye(2)] + [np.zeros((2, 2))] * (Dl - 1) + [-0.5 * Pbar], b=-0.5 * qbar)
    maps = D.step_maps(on_backend(fed, xp), sched, loc, eta=0.5, steps=range(Dl, T))
    for mp in maps:   # once t >= Delta every step is the same companion map
        assert np.allclose(to_np(mp.A)[0], comp.A) and np.allclose(to_np(mp.b)[0], comp.b)


def test_permuting_clients_changes_nothing(xp):
    fed = flt.random_quadratic_federation(M=5, d=3, seed=11, sigma2=0.05)
    c = S.compute_times(seeds=[2], N=5)
    sched = S.first_n_arrivals(N=5, n=2, T=40, K=2, compute=c, t_dl=0.2)
    loc = D.LocalSGD(eta_local=0.05, K=2)
    perm = np.array([3, 0, 4, 1, 2])              # client i of the permuted federation is perm[i]
    inv = np.argsort(perm)
    sched_p = S.Schedule(np.where(sched.client >= 0, inv[sched.client], -1), sched.start, sched.weight,
                         sched.time, 5)
    fx, one = on_backend(fed, xp), xp.ones(3, dtype=xp.float64)
    a = D.schedule_moments(fx, sched, loc, eta=0.7, x0=one)
    b = D.schedule_moments(fx.permuted(xp.asarray(perm)), sched_p, loc, eta=0.7, x0=one)
    assert np.allclose(to_np(a.mse), to_np(b.mse), rtol=1e-12) and np.allclose(to_np(a.mean), to_np(b.mean), atol=1e-13)


def test_identical_clients_have_no_bias(xp):
    H = np.tile(np.array([[2.0, 0.3], [0.3, 1.0]]), (4, 1, 1))
    fed = flt.QuadraticFederation(xp.asarray(H), xp.asarray(np.tile([1.0, -1.0], (4, 1))))
    sched = S.round_robin(N=4, S=1, T=400)
    m = D.schedule_moments(fed, sched, D.LocalSGD(eta_local=0.1, K=3), eta=0.5, x0=xp.zeros(2, dtype=xp.float64))
    assert float(m.mse[-1, 0]) < 1e-20


def _mc_check(exact_mse, traj, x_star):
    e = ((traj - x_star) ** 2).sum(-1)
    mean, se = e.mean(1), e.std(1) / np.sqrt(e.shape[1])
    z = np.abs(mean[1:] - exact_mse[1:]) / np.maximum(se[1:], 1e-300)
    assert z.max() <= Z_TOL, (z.max(), mean, exact_mse)


def test_exact_moments_match_monte_carlo_on_event_driven_schedules():
    """The second consumer pattern: first-n arrivals from clients of random speeds, noisy gradients."""
    fed = flt.random_quadratic_federation(M=6, d=3, seed=3, sigma2=0.1)
    c = S.compute_times(seeds=[5], N=6)
    sched = S.first_n_arrivals(N=6, n=2, T=30, K=2, compute=c, t_dl=0.2, t_ul=0.1)
    loc = D.LocalSGD(eta_local=0.05, K=2)
    ex = D.schedule_moments(fed, sched, loc, eta=1.0, x0=np.full(3, 2.0))
    many = sched.take([0] * 3000)
    tr = D.simulate_schedule(fed, many, loc, eta=1.0, x0=np.full(3, 2.0), seed=1, return_trajectory=True)
    _mc_check(ex.mse[:, 0], tr, fed.x_star)


def test_tdma_round_robin_pattern_through_the_core():
    """The first consumer pattern: G groups served in turn, staleness min(k, G-1), one stochastic
    gradient per update (the pseudo-gradient form), exact moments against Monte Carlo."""
    fed = flt.random_quadratic_federation(M=6, d=2, seed=8, sigma2=0.2)
    sched = S.round_robin(N=6, S=2, T=40)
    assert np.array_equal(sched.staleness[0].max(axis=1), np.minimum(np.arange(40), 2))
    loc = D.LocalSGD(eta_local=0.1, K=1, output="gradient_sum")
    ex = D.schedule_moments(fed, sched, loc, eta=0.1, x0=np.ones(2))
    tr = D.simulate_schedule(fed, sched.take([0] * 3000), loc, eta=0.1, x0=np.ones(2), seed=2, return_trajectory=True)
    _mc_check(ex.mse[:, 0], tr, fed.x_star)
    # periodic from step G-1 on: the period map gives the exact rate and limit
    pm = D.period_map(fed, sched, loc, eta=0.1, period=3, offset=3)
    rho = float(pm.spectral_radius()[0])
    assert rho < 1
    det = D.schedule_moments(noiseless(fed), S.round_robin(N=6, S=2, T=3 + 3 * 400), loc, eta=0.1, x0=np.ones(2))
    assert np.allclose(det.mean[-1, 0], pm.fixed_point().x[0, :2], atol=1e-10)
    with pytest.raises(ScheduleError, match="does not repeat"):
        D.period_map(fed, sched, loc, eta=0.1, period=2, offset=3)


@pytest.mark.parametrize("kind", ["with_replacement", "bernoulli"])
def test_random_participation_exact_over_draws(kind):
    fed = flt.random_quadratic_federation(M=5, d=2, seed=3, sigma2=0.05)
    loc = D.LocalSGD(eta_local=0.05, K=3)
    T, seeds = 20, np.arange(8000)
    if kind == "with_replacement":
        pdel = np.array([0.5, 0.3, 0.2])
        part = D.RandomParticipation.with_replacement(N=5, n=3)
        sched = D.sampled_schedule(N=5, n=3, T=T, seeds=seeds, delay_probs=pdel)
    else:
        p = np.array([0.9, 0.5, 0.3, 0.7, 1.0])
        pdel = np.array([[1, 0, 0, 0], [0.2, 0.8, 0, 0], [0.1, 0.1, 0.4, 0.4], [0.25] * 4, [0, 0, 0, 1.0]])
        part = D.RandomParticipation.bernoulli(p=p, weights=fed.weights)
        sched = D.sampled_schedule(N=5, p=p, weights=fed.weights, T=T, seeds=seeds, delay_probs=pdel)
    ex = D.random_participation_moments(fed, loc, eta=1.0, T=T, x0=np.ones(2), participation=part, delay_probs=pdel)
    tr = D.simulate_schedule(fed, sched, loc, eta=1.0, x0=np.ones(2), seed=5, return_trajectory=True)
    _mc_check(ex.mse, tr, fed.x_star)
    z = np.abs(tr.mean(1) - ex.mean)[1:] / (tr.std(1)[1:] / np.sqrt(len(seeds)))
    assert z.max() <= Z_TOL


def test_random_participation_reduces_to_the_deterministic_schedule(xp):
    ref = flt.random_quadratic_federation(M=4, d=3, seed=9, sigma2=0.1)
    fed = on_backend(ref, xp)
    loc = D.LocalSGD(eta_local=0.05, K=2)
    T, lag = 15, 2
    pdel = np.eye(3)[lag]                       # every client always delay 2
    rnd = D.random_participation_moments(fed, loc, eta=0.9, T=T, x0=xp.ones(3),
                                         participation=D.RandomParticipation.full(weights=ref.weights), delay_probs=pdel)
    sched = S.from_delays(clients=np.tile(np.arange(4), (T, 1)), delays=np.full((T, 4), lag), N=4,
                          weights=np.tile(ref.weights, (T, 1)))
    det = D.schedule_moments(fed, sched, loc, eta=0.9, x0=xp.ones(3))
    assert namespace(rnd.mse) is xp
    rnd_mse, rnd_mean, det_mse, det_mean = (to_numpy(a) for a in (rnd.mse, rnd.mean, det.mse, det.mean))
    assert np.allclose(rnd_mse, det_mse[:, 0], rtol=1e-12) and np.allclose(rnd_mean, det_mean[:, 0], atol=1e-13)
    # draws with replacement and random delays: the backend's sums are NumPy's
    kw = dict(eta=0.9, T=6, participation=D.RandomParticipation.with_replacement(N=4, n=2),
              delay_probs=[0.5, 0.3, 0.2], record_lags=True)
    got = D.random_participation_moments(fed, loc, x0=xp.ones(3), **kw)
    want = D.random_participation_moments(ref, loc, x0=np.ones(3), **kw)
    for name in ("mean", "mse", "grad_sq", "lag_msd"):
        np.testing.assert_allclose(to_numpy(getattr(got, name)), getattr(want, name), rtol=1e-12, atol=1e-14)


def test_batched_seeds_and_configurations_broadcast(xp):
    fed = on_backend(flt.random_quadratic_federation(M=4, d=2, seed=1, batch=3, sigma2=0.1), xp)
    c = S.compute_times(seeds=np.arange(3), N=4)
    sched = S.first_n_arrivals(N=4, n=2, T=20, K=1, compute=c)
    loc = D.LocalSGD(eta_local=0.1, K=1)
    both = D.schedule_moments(fed, sched, loc, eta=1.0, x0=xp.ones(2))
    assert namespace(both.mse) is xp
    for b in range(3):
        one = D.schedule_moments(fed.take(b), sched.take(b), loc, eta=1.0, x0=xp.ones(2))
        assert np.allclose(to_numpy(both.mse)[:, b], to_numpy(one.mse)[:, 0], rtol=1e-13)
    shared = D.schedule_moments(fed, sched.take(1), loc, eta=1.0, x0=xp.ones(2))     # one schedule, 3 configs
    assert shared.mse.shape == (21, 3)
    assert np.allclose(to_numpy(shared.mse)[:, 1], to_numpy(both.mse)[:, 1], rtol=1e-13)


def test_exact_moments_are_the_noiseless_simulation_on_the_xp_backend(xp):
    """schedule_moments (the register engine, per-update K) against simulate_schedule, both on the backend, with
    configurations and timing seeds batched, and the lag drift E||x_t - x_{t-l}||^2 of record_lags."""
    fed = flt.random_quadratic_federation(M=3, d=2, seed=5, batch=2)
    sched = S.first_n_arrivals(N=3, n=2, T=12, K=1, compute=S.compute_times(seeds=[0, 1], N=3), t_dl=0.3)
    sched = S.Schedule(sched.client, sched.start, sched.weight, sched.time, 3,
                       local_steps=1 + (np.arange(sched.T)[None, :, None] + sched.client) % 2)
    loc = D.LocalSGD(eta_local=0.1, K=(1, 2))
    kw = dict(eta=0.8, x0=xp.asarray([1.0, -1.0]))
    m = D.schedule_moments(on_backend(fed, xp), sched, loc, record_lags=True, **kw)
    tr = D.simulate_schedule(on_backend(fed, xp), sched, loc, return_trajectory=True, **kw)
    assert namespace(m.mean) is xp and namespace(tr) is xp
    ref = D.schedule_moments(fed, sched, loc, eta=0.8, x0=np.array([1.0, -1.0]), record_lags=True)
    np.testing.assert_allclose(to_numpy(m.mean), to_numpy(tr), atol=1e-12)
    for name in ("mean", "mse", "grad_sq", "gap", "lag_msd"):
        np.testing.assert_allclose(to_numpy(getattr(m, name)), getattr(ref, name), rtol=1e-12, atol=1e-14)
    trn = to_numpy(tr)
    np.testing.assert_allclose(to_numpy(m.lag_msd)[5, :, 1], ((trn[5] - trn[4]) ** 2).sum(-1), atol=1e-12)


def test_doors_name_the_problem():
    fed = flt.random_quadratic_federation(M=3, d=2, seed=0)
    sched = S.round_robin(N=4, S=2, T=3)
    with pytest.raises(ScheduleError, match="N=4 clients but the federation has M=3"):
        D.schedule_moments(fed, sched, D.LocalSGD(eta_local=0.1), eta=1.0, x0=np.zeros(2))
    with pytest.raises(flt.InputError, match="eta_local must be > 0"):
        D.LocalSGD(eta_local=-1.0)
    with pytest.raises(flt.InputError, match=r"K must be an integer in \[1, "):
        D.LocalSGD(eta_local=0.1, K=0)
    with pytest.raises(flt.InputError, match="eta must be a finite real number"):
        D.schedule_moments(fed, S.round_robin(N=3, S=1, T=3), D.LocalSGD(eta_local=0.1), eta=float("nan"), x0=np.zeros(2))
    with pytest.raises(ScheduleError, match="exactly one of n"):
        D.sampled_schedule(N=3, T=2, seeds=[0])


@st.composite
def schedules_within(draw, *, max_N=4, max_T=15):
    """Arbitrary delay-oracle schedules with staleness <= lam: random clients (or empty slots),
    weights and delays, batched over two configurations."""
    N = draw(st.integers(1, max_N))
    T = draw(st.integers(1, max_T))
    U = draw(st.integers(1, 3))
    lam = draw(st.integers(0, 5))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    clients = rng.integers(-1, N, size=(2, T, U))
    clients[..., 0] = np.maximum(clients[..., 0], 0)
    delays = rng.integers(0, lam + 1, size=(2, T, U))
    weights = rng.uniform(0.1, 1.0, size=(2, T, U)) / U
    return N, lam, S.from_delays(clients=clients, delays=delays, N=N, weights=weights)


@given(schedules_within(), st.integers(0, 50))
def test_hypothesis_schedules_within_lambda(case, seed):
    N, lam, sched = case
    sched.check_delay(lam)
    assert sched.max_staleness.max() <= lam
    if sched.max_staleness.max() > 0:
        with pytest.raises(ScheduleError, match=r"staleness \d+ > lambda="):
            sched.check_delay(int(sched.max_staleness.max()) - 1)
    fed = flt.random_quadratic_federation(M=N, d=2, seed=seed, sigma2=0.05)
    loc = D.LocalSGD(eta_local=0.1, K=2)
    ex = D.schedule_moments(noiseless(fed), sched, loc, eta=0.7, x0=np.ones(2))
    tr = D.simulate_schedule(noiseless(fed), sched, loc, eta=0.7, x0=np.ones(2), return_trajectory=True)
    assert np.allclose(ex.mean, tr, atol=1e-12, rtol=1e-12)
    noisy = D.schedule_moments(fed, sched, loc, eta=0.7, x0=np.ones(2))
    assert np.all(noisy.mse >= ex.mse - 1e-12)          # noise only adds to the error
    assert np.allclose(noisy.mean, ex.mean, atol=1e-12)  # and leaves the mean alone


# ------------------------------------------------------------------------------------------------
# the simulator for non-linear clients
# ------------------------------------------------------------------------------------------------
def small_logistic(M=3, m=3, classes=3, seed=0, reg=0.1):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(4, 9, size=M)
    Xs = [rng.normal(size=(n, m)) + i for i, n in enumerate(sizes)]
    ys = [rng.integers(0, classes, size=n) for n in sizes]
    return flt.problems.LogisticFederation.from_client_data(Xs, ys, n_classes=classes, reg=reg)


@settings(max_examples=12)
@given(M=st.integers(1, 4), d=st.integers(1, 3), lam=st.integers(0, 3), K=st.integers(1, 3),
       output=st.sampled_from(["displacement", "gradient_sum", "gradient_mean"]), batched=st.booleans(),
       seed=st.integers(0, 99))
def test_general_simulator_is_the_quadratic_simulator_on_quadratics(M, d, lam, K, output, batched, seed):
    fed = flt.random_quadratic_federation(M=M, d=d, seed=seed, sigma2=0.1, batch=3 if batched else None)
    shape = (1 if batched else 3, 20, 2)               # the batch comes from the federation or the schedule
    rng = np.random.default_rng(seed)
    sched = S.from_delays(clients=rng.integers(-1, M, size=shape), delays=rng.integers(0, lam + 1, size=shape), N=M,
                          weights=0.5)
    loc = D.LocalSGD(eta_local=0.05, K=K, output=output)
    eta = {"displacement": 0.5, "gradient_sum": 0.025 / K, "gradient_mean": 0.025}[output]   # one scale of step
    kw = dict(eta=eta, x0=np.linspace(-1, 1, d), seed=seed)
    ref = D.simulate_schedule(fed, sched, loc, return_trajectory=True, **kw)
    tr = D.simulate_schedule_general(fed, sched, loc, returns="trajectory", **kw)
    assert tr.shape == ref.shape and np.allclose(tr, ref, rtol=0, atol=1e-12)
    assert np.array_equal(D.simulate_schedule_general(fed, sched, loc, **kw), tr[-1])
    assert np.allclose(D.simulate_schedule_general(fed, sched, loc, returns="loss", **kw), fed.loss(tr), atol=1e-12)
    # sigma2 on a noise-free federation is QuadraticFederation(..., sigma2=): the same keyed draws
    bare = flt.QuadraticFederation(fed.H, fed.x_opt, fed.weights)
    assert np.allclose(D.simulate_schedule_general(bare, sched, loc, returns="trajectory", sigma2=0.1, **kw), ref,
                       rtol=0, atol=1e-12)


def test_general_simulator_on_the_xp_backend(xp):
    fed = flt.random_quadratic_federation(M=3, d=2, seed=4, sigma2=0.2)
    fx = on_backend(fed, xp)
    sched = S.first_n_arrivals(N=3, n=2, T=15, K=2, compute=S.compute_times(seeds=[0, 1], N=3))
    loc = D.LocalSGD(eta_local=0.1, K=2)
    ref = D.simulate_schedule(fed, sched, loc, eta=0.7, x0=np.ones(2), seed=1, return_trajectory=True)
    tr = D.simulate_schedule_general(fx, sched, loc, eta=0.7, x0=xp.ones(2), seed=1, returns="trajectory")
    assert np.allclose(to_numpy(tr), ref, rtol=0, atol=1e-12)


def test_general_simulator_K_steps_by_a_plain_loop_on_pseudo_huber(xp):
    # per-update local steps (schedule.local_steps), stale anchors, additive noise: written out slot by slot
    b, delta = [[0.0, 1.0], [2.0, -1.0], [1.0, 3.0]], [1.0, 0.5, 2.0]
    fed = flt.problems.PseudoHuberFederation(b=b, delta=delta)
    sched = S.first_n_arrivals(N=3, n=2, T=12, K=1, compute=np.array([1.0, 1.7, 2.9]))
    steps = np.where(sched.mask, 1 + (sched.client + np.arange(12)[None, :, None]) % 3, 1)
    sched = S.Schedule(sched.client, sched.start, sched.weight, sched.time, 3, local_steps=steps)
    loc = D.LocalSGD(eta_local=0.2, K=(1, 2, 3))
    on_xp = flt.problems.PseudoHuberFederation(b=xp.asarray(b), delta=xp.asarray(delta))
    tr = D.simulate_schedule_general(on_xp, sched, loc, eta=0.9, x0=xp.asarray([3.0, 3.0]), seed=7, sigma2=0.04,
                                     returns="trajectory")
    assert namespace(tr) is xp
    tr = to_numpy(tr)
    noise = flt.backend.KeyedStream(7, "local noise")
    x = [np.array([3.0, 3.0])]
    for t in range(12):
        step = np.zeros(2)
        for u in range(sched.U):
            i, s, K = sched.client[0, t, u], sched.start[0, t, u], sched.local_steps[0, t, u]
            y = x[s].copy()
            for k in range(K):
                z = noise.normal(config=np.array([[0]]), round=t, client=np.array([[u + sched.U * k]]), size=(2,))
                y = y - 0.2 * (fed.grad_clients_at(y)[i] + 0.2 * z[0, 0])
            step += sched.weight[0, t, u] * (x[s] - y)
        x.append(x[t] - 0.9 * step)
    assert np.allclose(tr[:, 0], np.array(x), rtol=0, atol=1e-12)


def test_general_simulator_permuting_clients_changes_nothing(xp):
    ref = small_logistic()
    fed = flt.problems.LogisticFederation(xp.asarray(ref.X), xp.asarray(ref.y), xp.asarray(ref.mask), ref.n_classes,
                                          ref.reg, xp.asarray(ref.weights))
    perm = np.array([2, 0, 1])
    inv = np.argsort(perm)                       # old client i is client inv[i] of the permuted federation
    sched = S.first_n_arrivals(N=3, n=2, T=25, K=3, compute=S.compute_times(seeds=[0, 1, 2], N=3))
    relabelled = S.Schedule(np.where(sched.mask, inv[np.maximum(sched.client, 0)], -1), sched.start, sched.weight,
                            sched.time, 3)
    loc = D.LocalSGD(eta_local=0.1, K=3)
    kw = dict(eta=1.0, seed=2, sigma2=0.01, returns="trajectory")
    a = D.simulate_schedule_general(fed, sched, loc, x0=xp.full(fed.d, 0.3), **kw)
    b = D.simulate_schedule_general(fed.permuted(perm), relabelled, loc, x0=xp.full(fed.d, 0.3), **kw)
    assert namespace(a) is xp
    a, b = to_numpy(a), to_numpy(b)
    assert np.allclose(a, b, rtol=0, atol=1e-12)
    assert not np.allclose(a[-1, 0], a[-1, 1])        # the timing seeds differ, and so do the runs
    np.testing.assert_allclose(a, D.simulate_schedule_general(ref, sched, loc, x0=np.full(ref.d, 0.3), **kw),
                               rtol=0, atol=1e-12)


def test_general_simulator_noise_is_keyed_by_configuration_and_seed():
    fed = small_logistic(seed=3)
    sched = S.first_n_arrivals(N=3, n=2, T=15, K=2, compute=S.compute_times(seeds=[0, 1, 2], N=3))
    loc = D.LocalSGD(eta_local=0.1, K=2)
    run = lambda s, **k: D.simulate_schedule_general(fed, s, loc, eta=1.0, x0=np.zeros(fed.d),  # noqa: E731
                                                     returns="trajectory", **{"seed": 1, "sigma2": 0.05, **k})
    full = run(sched)
    assert np.array_equal(run(sched.take([0, 1])), full[:, :2])         # a row does not depend on later rows
    swapped = run(sched.take([2, 1, 0]))
    assert np.array_equal(swapped[:, 1], full[:, 1])                     # nor on the other rows
    assert not np.allclose(swapped[:, 0], full[:, 2])                    # the key is the row, not the timing
    assert np.array_equal(run(sched), full)                              # reproducible
    assert not np.allclose(run(sched, seed=2), full)                     # another seed, other noise
    assert np.array_equal(run(sched, sigma2=0.0), run(sched, sigma2=None))
    noiseless_mean = run(sched.take([0] * 200), sigma2=None)[-1, 0]
    noisy = run(sched.take([0] * 200))[-1]
    assert not np.allclose(noisy[0], noisy[1])
    se = noisy.std(axis=0) / np.sqrt(200)       # zero-mean noise: the curvature's bias is far below 5 se here
    assert np.all(np.abs(noisy.mean(axis=0) - noiseless_mean) <= Z_TOL * se)


def test_general_simulator_doors():
    fed = small_logistic()
    sched = S.round_robin(N=3, S=1, T=4)
    loc = D.LocalSGD(eta_local=0.1, K=1)
    with pytest.raises(flt.InputTypeError, match="fed"):
        D.simulate_schedule_general(object(), sched, loc, eta=1.0, x0=np.zeros(fed.d))
    with pytest.raises(ScheduleError, match="N=4"):
        D.simulate_schedule_general(fed, S.round_robin(N=4, S=1, T=4), loc, eta=1.0, x0=np.zeros(fed.d))
    with pytest.raises(flt.InputError, match="sigma2"):
        D.simulate_schedule_general(flt.random_quadratic_federation(M=3, d=2, seed=0, sigma2=0.1), sched, loc, eta=1.0,
                                    x0=np.zeros(2), sigma2=0.1)
    with pytest.raises(flt.InputError, match="returns"):
        D.simulate_schedule_general(fed, sched, loc, eta=1.0, x0=np.zeros(fed.d), returns="models")
    reuse = S.Schedule(sched.client, sched.start, sched.weight, sched.time, 3, reuses_updates=True)
    with pytest.raises(ScheduleError, match="reuses_updates"):
        D.simulate_schedule_general(fed, reuse, loc, eta=1.0, x0=np.zeros(fed.d), sigma2=0.1)
    assert D.simulate_schedule_general(fed, reuse, loc, eta=1.0, x0=np.zeros(fed.d)).shape == (1, fed.d)


@pytest.mark.parametrize("which", ["simulate_schedule", "simulate_schedule_general"])
def test_the_simulators_name_the_step_sizes_when_every_configuration_diverges(which):
    """No silent inf: every configuration diverging is an error naming eta and eta_local (no numpy warning before
    it); some diverging is a warning naming them, and the others are the runs of those configurations alone."""
    import warnings

    from fltheory.validation import InputError

    fed = flt.random_quadratic_federation(M=3, d=2, seed=0)
    sch, loc = S.round_robin(N=3, S=1, T=200), D.LocalSGD(K=2, eta_local=0.1)
    run = getattr(D, which)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(InputError, match=r"every configuration.*eta=1e\+30, eta_local=0\.1"):
            run(fed, sch, loc, eta=1e30, x0=np.ones(2))
    two = flt.QuadraticFederation(np.stack([fed.H, 1e6 * fed.H]), np.stack([fed.x_opt] * 2),
                                  np.stack([fed.weights] * 2))
    with pytest.warns(RuntimeWarning, match=r"configurations \[1\] diverged"):
        out = run(two, sch, loc, eta=1.0, x0=np.ones(2))
    assert np.isfinite(out[0]).all() and not np.isfinite(out[1]).all()
    alone = run(fed, sch, loc, eta=1.0, x0=np.ones(2))
    np.testing.assert_allclose(out[0], alone.reshape(-1, 2)[0], rtol=1e-12, atol=1e-14)
