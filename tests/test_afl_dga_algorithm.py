"""The batched AFL-DGA simulator: baselines as exact special cases, the key identity, Fig. 1, the lag
counts of the proofs (Lemma 2'), the schedule generators and the timing model."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fltheory as flt
from fltheory.problems import LinearFederation, PseudoHuberFederation, SeparableCosineFederation
from fltheory.schedules import (Participation, ScheduleError, anarchic_participation, fast_k_participation,
                                participation_from_tau, synchronous_participation)
from fltheory.papers.afl_dga import (afl_dga, dga, diagnostics, fedavg, minibatch_sgd, normalized_averaging,
                                     round_durations, stale_sgd)
from fltheory.papers.afl_dga import bounds as B
from conftest import on_backend, to_np


def qfed(N, d, seed, sigma2=None, weights="dirichlet"):
    return flt.random_quadratic_federation(M=N, d=d, seed=seed, kappa=5.0, heterogeneity=1.5, weights=weights,
                                           sigma2=sigma2)


def part_for(fed, P, K=None, D=None):
    return Participation(P, K, D, weights=to_np(fed.weights))


# ======================================================================================
# baselines: exact special cases (same keyed noise samples)
# ======================================================================================
@pytest.mark.parametrize("sigma2", [None, 0.3])
def test_analysis_synchronous_k1_d0_is_minibatch_sgd(sigma2, xp):
    fed = on_backend(qfed(3, 2, 1, sigma2), xp)
    part = part_for(fed, np.ones((3, 12), int))
    a = to_np(afl_dga(fed, part, eta=0.07, w0=xp.ones(2, dtype=xp.float64), runs=4, seed=3).w)
    b = to_np(minibatch_sgd(fed, eta=0.07, T=12, w0=xp.ones(2, dtype=xp.float64), runs=4, seed=3))
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-13)
    if sigma2:
        assert np.abs(a[0] - a[1]).max() > 1e-3          # the runs do differ: the noise is there and shared


@pytest.mark.parametrize("sigma2", [None, 0.3])
def test_analysis_synchronous_d0_is_normalized_averaging(sigma2, xp):
    fed, w0 = on_backend(qfed(3, 2, 2, sigma2), xp), xp.ones(2, dtype=xp.float64)
    K = np.random.default_rng(0).integers(1, 5, (3, 10))
    a = to_np(afl_dga(fed, part_for(fed, np.ones((3, 10), int), K), eta=0.05, w0=w0, runs=3, seed=1).w)
    b = to_np(normalized_averaging(fed, eta=0.05, K=K, T=10, w0=w0, runs=3, seed=1))
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-13)


@pytest.mark.parametrize("sigma2", [None, 0.3])
def test_paper_text_synchronous_d0_is_fedavg(sigma2, xp):
    """Every client's model at the start of round r equals FedAvg's x^r."""
    fed, w0 = on_backend(qfed(4, 3, 3, sigma2), xp), xp.ones(3, dtype=xp.float64)
    T, K = 9, 3
    res = afl_dga(fed, part_for(fed, np.ones((4, T), int), K), eta=0.04, w0=w0, mode="paper_text", runs=2, seed=5)
    x = to_np(fedavg(fed, eta=0.04, K=K, T=T, w0=w0, runs=2, seed=5))
    start = to_np(res.client_start)
    np.testing.assert_allclose(start, np.broadcast_to(x[:, :T, None, :], start.shape), rtol=0, atol=1e-12)
    # the analysis mode is not FedAvg (its correction has coefficient 1 instead of K)
    other = afl_dga(fed, part_for(fed, np.ones((4, T), int), K), eta=0.04, w0=w0, runs=2, seed=5)
    assert np.abs(to_np(other.client_start)[:, 2:] - x[:, 2:T, None, :]).max() > 1e-4


@pytest.mark.parametrize("K, D", [(3, 2), (2, 5), (4, 0), (1, 3)])
@pytest.mark.parametrize("sigma2", [None, 0.2])
def test_paper_text_homogeneous_is_dga_and_its_virtual_sequence(K, D, sigma2, xp):
    fed, w0 = on_backend(qfed(3, 2, 4, sigma2), xp), xp.ones(2, dtype=xp.float64)
    T = 8
    part = part_for(fed, np.ones((3, T), int), K, D)
    res = afl_dga(fed, part, eta=0.05, w0=w0, mode="paper_text", runs=2, seed=9, record=True)
    starts, final = (to_np(a) for a in dga(fed, eta=0.05, K=K, D=D, T=T, w0=w0, runs=2, seed=9))
    np.testing.assert_allclose(to_np(res.client_start), starts, rtol=0, atol=1e-12)
    np.testing.assert_allclose(to_np(res.clients), final, rtol=0, atol=1e-12)
    # DGA's virtual sequence: the weighted mean of the client models moves by -eta sum_i p_i g_i at every
    # local iteration (the corrections cancel across clients)
    p = to_np(fed.weights)
    its, grs = to_np(res.record.iterates), to_np(res.record.grads)   # (runs, T, N, K, d)
    seq = np.concatenate([its.transpose(0, 1, 3, 2, 4).reshape(2, T * K, 3, 2), final[:, None]], axis=1)
    mean = np.einsum("i,rsid->rsd", p, seq)
    step = np.einsum("i,rsid->rsd", p, grs.transpose(0, 1, 3, 2, 4).reshape(2, T * K, 3, 2))
    np.testing.assert_allclose(mean[:, 1:], mean[:, :-1] - 0.05 * step, rtol=0, atol=1e-12)


@pytest.mark.parametrize("seed", [0, 1])
def test_analysis_k1_d0_anarchic_is_stale_sgd(seed, xp):
    fed, w0 = on_backend(qfed(3, 2, seed, sigma2=0.1), xp), xp.ones(2, dtype=xp.float64)
    part = anarchic_participation(N=3, T=15, t_d=3, p=0.4, seed=seed, weights=to_np(fed.weights))
    a = to_np(afl_dga(fed, part, eta=0.06, w0=w0, runs=3, seed=2).w)
    b = to_np(stale_sgd(fed, part, eta=0.06, w0=w0, runs=3, seed=2))
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-13)
    assert not part.P.all()


@pytest.mark.parametrize("mode", ["analysis", "paper_text"])
def test_one_client_k1_is_plain_sgd(mode, xp):
    fed, w0 = on_backend(qfed(1, 2, 5, sigma2=0.2, weights="uniform"), xp), xp.ones(2, dtype=xp.float64)
    res = afl_dga(fed, synchronous_participation(N=1, T=10, K=1, D=2), eta=0.1, w0=w0, mode=mode, runs=2, seed=4)
    np.testing.assert_allclose(to_np(res.w), to_np(minibatch_sgd(fed, eta=0.1, T=10, w0=w0, runs=2, seed=4)), atol=1e-13, rtol=0)


def test_fig1_trajectory_paper_text_and_analysis():
    """Fig. 1: client 3 participates in rounds 1, 2, 4, 5 (0-based 0, 1, 3, 4) with K = 1, 2, -, 5, 2 and D = 2, 2, 4, 2.
    Its final model is w0 - eta(gbar^1 + 2 gbar^2 + gbar^3) - eta sum_j g^4_j - eta(g^5_1 + g^5_2) (paper_text);
    the analysis correction has coefficient 1 on gbar^2."""
    P = np.array([[1, 1, 0, 1, 1], [1, 1, 1, 1, 1]])
    K = np.array([[1, 2, 1, 5, 2], [1, 1, 1, 1, 1]])
    D = np.array([[2, 2, 4, 2, 2], [0, 0, 0, 0, 0]])
    fed = qfed(2, 2, 8)
    part = part_for(fed, P, K, D)
    from fltheory.papers.afl_dga import afl_dga_loop
    for mode, c2 in (("paper_text", 2.0), ("analysis", 1.0)):
        res = afl_dga(fed, part, eta=0.1, w0=np.ones(2), mode=mode, record=True)
        gb, g = res.gbar, res.record.grads[:, 0]                           # g[r, j]
        want = np.ones(2) - 0.1 * (gb[0] + c2 * gb[1] + gb[2]) - 0.1 * g[3, :5].sum(0) - 0.1 * g[4, :2].sum(0)
        np.testing.assert_allclose(res.clients[0], want, rtol=0, atol=1e-13)
        log = []
        afl_dga_loop(fed, part, eta=0.1, w0=np.ones(2), mode=mode, log=log)
        events = [(h, r, j) for (i, h, r, j) in log if i == 0]
        # round 1's correction after 2 iterations of round 2, round 2's after 2 of round 4, round 3's after 4 of round 4
        assert events == [(0, 3, 0), (1, 3, 2), (2, 3, 4)]


# ======================================================================================
# the key identity (analysis mode), from the simulator's record
# ======================================================================================
def _identity_error(res):
    """max |w_ij - (w^{a+1} - eta * sum of the n most recent local gradients)| over every recorded iterate."""
    rec, part = res.record, res.part
    err = 0.0
    N = part.N
    flat = {i: [] for i in range(N)}
    for r in range(part.T):
        for i in range(N):
            for j in range(rec.mask.shape[-1]):
                if not rec.mask[r, i, j]:
                    continue
                a, n = rec.a[r, i, j], rec.n[r, i, j]
                prev = np.sum(flat[i][len(flat[i]) - n:], axis=0) if n else 0.0
                err = max(err, float(np.abs(rec.iterates[r, i, j] - (res.w[a + 1] - res.eta * prev)).max()))
                flat[i].append(rec.grads[r, i, j])
    return err


@st.composite
def schedules_(draw, *, max_K=4, max_D=6):
    N, T = draw(st.integers(1, 4)), draw(st.integers(2, 12))
    t_d = draw(st.integers(1, 4))
    seed = draw(st.integers(0, 10**6))
    rng = np.random.default_rng(seed)
    K = rng.integers(1, draw(st.integers(1, max_K)) + 1, (N, T))
    D = rng.integers(0, draw(st.integers(0, max_D)) + 1, (N, T))
    return anarchic_participation(N=N, T=T, t_d=t_d, p=draw(st.floats(0.05, 1.0)), K=K, D=D, seed=seed), seed


@settings(max_examples=20)
@given(schedules_())
def test_key_identity_holds_at_every_local_iterate(inst):
    part, seed = inst
    rng = np.random.default_rng(seed)
    fed = SeparableCosineFederation(a=rng.uniform(0.2, 1, (part.N, 2)), b=rng.uniform(0, 2, (part.N, 2)),
                                    c=rng.normal(size=(part.N, 2)))
    res = afl_dga(fed, part, eta=0.2, w0=np.ones(2), record=True)
    assert _identity_error(res) <= 1e-12


def test_key_identity_fails_for_the_paper_text_correction():
    """The identity check can fail: with heterogeneous K the text's K-scaled correction moves the anchor."""
    fed = qfed(2, 2, 0)
    part = part_for(fed, np.ones((2, 6), int), [[1, 3, 2, 1, 2, 3], [2, 2, 1, 3, 1, 2]], 1)
    assert _identity_error(afl_dga(fed, part, eta=0.1, w0=np.ones(2), record=True)) <= 1e-12
    assert _identity_error(afl_dga(fed, part, eta=0.1, w0=np.ones(2), mode="paper_text", record=True)) > 1e-4


# ======================================================================================
# Lemma 2' and the lags (schedule-only facts), Lemma 1' and Theorem 1' (sigma = 0), pathwise
# ======================================================================================
@settings(max_examples=30)
@given(schedules_(max_K=5, max_D=12))
def test_lemma2_lag_counts(inst):
    part, seed = inst
    fed = LinearFederation(c=np.random.default_rng(seed).normal(size=(part.N, 1)))
    dg = diagnostics(fed, afl_dga(fed, part, eta=0.1, w0=np.zeros(1), record=True))
    m = dg.mask
    Ks = part.K[part.P]
    K_m, K_min, D_m = int(Ks.max()), int(Ks.min()), int(part.D.max())
    assert np.all(dg.n[m] <= K_m + D_m - 1)
    assert np.all(dg.rho[m] <= dg.S[m] + B.rho_hat_extra(t_d=part.t_d, D_m=D_m, K_min=K_min))
    assert np.all(dg.rho[m] >= dg.tau[m] - 1)
    if D_m <= K_min:
        assert np.all(dg.rho[m] <= dg.S[m])
    if D_m == 0:
        j = np.broadcast_to(np.arange(m.shape[-1]), m.shape)
        assert np.all(dg.rho[m] == dg.tau[m] - 1) and np.all(dg.n[m] == j[m])


def test_printed_lag_count_fails_when_delays_exceed_k_min():
    part = synchronous_participation(N=1, T=8, K=1, D=3)
    fed = LinearFederation(c=np.ones((1, 1)))
    dg = diagnostics(fed, afl_dga(fed, part, eta=0.1, w0=np.zeros(1), record=True))
    assert dg.rho.max() == 3 > dg.S.max() == 1              # synchronous, t_d = 1: rho <= ceil(D_m/K_min) = 3


@settings(max_examples=20)
@given(schedules_(max_K=4, max_D=8), st.floats(0.05, 1.0))
def test_lemma1_corrected_and_theorem1_corrected_det_pathwise(inst, etaL):
    part, seed = inst
    rng = np.random.default_rng(seed)
    fed = SeparableCosineFederation(a=rng.uniform(0.2, 1, (part.N, 2)), b=rng.uniform(0, 2, (part.N, 2)),
                                    c=2 * rng.normal(size=(part.N, 2)))
    L = float(fed.L)
    eta = etaL / L
    dg = diagnostics(fed, afl_dga(fed, part, eta=eta, w0=2 * rng.normal(size=2), record=True))
    rhs = 2 * eta**2 * (dg.rho * dg.since_anchor + dg.n * dg.local2)
    assert np.all(dg.dist2[dg.mask] <= rhs[dg.mask] * (1 + 1e-9) + 1e-14)
    # P4: ||grad f - m||^2 <= L^2 Xi, and Theorem 1' (deterministic)
    assert np.all(dg.bias2 <= L**2 * dg.Xi * (1 + 1e-9) + 1e-14)
    lhs = float(dg.average_grad2())
    Delta = float(dg.f[0] - dg.f[-1])
    assert lhs <= 2 * Delta / (eta * part.T) + L**2 * float(dg.Xi.mean()) + 1e-12


def test_noise_power_identity_monte_carlo():
    """E||e^t||^2 = (sigma^2 / N^2) sum_i 1/K_i^{lambda_i(t)} for isotropic additive noise (uniform weights)."""
    N, d, sigma = 3, 2, 0.8
    fed = PseudoHuberFederation(b=np.random.default_rng(0).normal(size=(N, d)), delta=1.0,
                                noise_cov=np.broadcast_to(sigma**2 / d * np.eye(d), (N, d, d)))
    part = anarchic_participation(N=N, T=10, t_d=3, p=0.5, K=np.random.default_rng(1).integers(1, 4, (N, 10)), D=1,
                                  seed=3)
    runs = 4000
    dg = diagnostics(fed, afl_dga(fed, part, eta=0.1, w0=np.zeros(d), runs=runs, seed=11, record=True))
    want = sigma**2 / N**2 * (1.0 / np.take_along_axis(part.K, part.lam, 1)).sum(0)
    se = dg.e2.std(0, ddof=1) / np.sqrt(runs)
    assert np.all(np.abs(dg.e2.mean(0) - want) <= 5 * se)


# ======================================================================================
# generators and the timing model
# ======================================================================================
@settings(max_examples=25)
@given(st.integers(1, 6), st.integers(1, 20), st.integers(1, 5), st.floats(0.0, 1.0), st.integers(0, 1000))
def test_generators_respect_assumption4(N, T, t_d, p, seed):
    a = anarchic_participation(N=N, T=T, t_d=t_d, p=p, seed=seed)
    assert a.tau.max() <= t_d and a.P[:, 0].all()
    f = fast_k_participation(N=N, T=T, k=min(1, N), t_d=t_d, seed=seed)
    assert f.tau.max() <= t_d
    e = anarchic_participation(N=N, T=T, t_d=t_d - 1, p=p, seed=seed, td_convention="experiments")
    assert e.tau.max() <= t_d
    if t_d == 1:
        assert a.P.all() and f.P.all()
    assert anarchic_participation(N=N, T=T, t_d=t_d, p=1.0, seed=seed).P.all()


def test_fast_k_picks_the_fastest():
    part = fast_k_participation(N=6, T=30, k=2, t_d=30, K=np.tile(np.arange(1, 7)[:, None], (1, 30)), spread=0.0)
    # equal per-iteration times: the two clients with the fewest local iterations finish first
    assert part.P[:2, 1:].all() and not part.P[2:, 1:].any()
    assert fast_k_participation(N=6, T=10, k=6, t_d=3).P.all()


@settings(max_examples=25)
@given(st.integers(1, 5), st.integers(1, 15), st.integers(1, 4), st.integers(0, 999))
def test_tau_round_trip_and_delay_sum(N, T, t_d, seed):
    part = anarchic_participation(N=N, T=T, t_d=t_d, p=0.4, seed=seed)
    # Algorithm 1's recursion: tau = 1 on communication, else tau + 1
    tau = np.zeros((N, T), int)
    for t in range(T):
        tau[:, t] = np.where(part.P[:, t], 1, (tau[:, t - 1] + 1) if t else 1)
    np.testing.assert_array_equal(tau, part.tau)
    back = participation_from_tau(tau)
    np.testing.assert_array_equal(back.P, part.P)
    # tau_i^t + tau_i^{t - tau_i^t} - 1 in Algorithm 1's labels (round t - tau is the one before lambda)
    for i in range(N):
        for t in range(T):
            lam = t - tau[i, t] + 1
            prev = lam - tau[i, lam - 1] if lam >= 1 else -1
            assert part.delay_sum[i, t] == t - prev
    assert part.delay_sum.max() <= 2 * t_d - 1


def test_participation_from_tau_refuses_bad_matrices():
    with pytest.raises(ScheduleError, match=r"tau\[1, 2\]"):
        participation_from_tau([[1, 2, 3], [1, 2, 4]])
    with pytest.raises(ScheduleError, match=r"tau\[0, 0\]"):
        participation_from_tau([[2, 3]])


def test_timing_model():
    sync = synchronous_participation(N=5, T=10, K=10, D=20)
    r = round_durations(sync)
    assert r.speedup == pytest.approx(3.0)                               # Table 1: K = 10, D = 20
    assert round_durations(sync, tail=True).wall_dga[-1] == pytest.approx(120.0)
    assert round_durations(synchronous_participation(N=3, T=4, K=3, D=0)).speedup == 1.0
    rng = np.random.default_rng(0)
    het = anarchic_participation(N=4, T=20, t_d=3, p=0.5, K=rng.integers(1, 8, (4, 20)), D=rng.integers(0, 9, (4, 20)))
    rh = round_durations(het, d=0.5)
    assert rh.speedup >= 1.0
    np.testing.assert_allclose(rh.wall_sync[-1], 0.5 * np.where(het.P, het.K + het.D, 0).max(0).sum())
    # the paper's per-client fold (K+D)/K is not the speedup once K and D vary
    folds = rh.per_client_fold[het.P]
    assert np.abs(folds - rh.speedup).max() > 0.1


def test_batched_eta_equals_single_runs(xp):
    fed, w0 = on_backend(qfed(3, 2, 0), xp), xp.ones(2, dtype=xp.float64)
    part = part_for(fed, *[np.ones((3, 6), int)], 2, 1)
    etas = np.array([0.01, 0.05, 0.1])
    w = to_np(afl_dga(fed, part, eta=xp.asarray(etas), w0=w0, mode="paper_text").w)
    for b, e in enumerate(etas):
        np.testing.assert_allclose(w[b], to_np(afl_dga(fed, part, eta=float(e), w0=w0, mode="paper_text").w), atol=1e-14)


def test_batched_federation_and_backend(xp):
    from conftest import on_backend
    fed = on_backend(flt.random_quadratic_federation(M=3, d=2, batch=4, seed=0, weights="uniform"), xp)
    part = anarchic_participation(N=3, T=8, t_d=2, p=0.5, K=2, D=3, seed=1)
    res = afl_dga(fed, part, eta=0.05, w0=xp.ones(2))
    assert type(res.w) is type(fed.H) and res.w.shape == (4, 9, 2)
    one = flt.QuadraticFederation(fed.H[2, ...], fed.x_opt[2, ...], fed.weights[2, ...])
    from conftest import to_np
    np.testing.assert_allclose(to_np(res.w[2, ...]), to_np(afl_dga(one, part, eta=0.05, w0=xp.ones(2)).w), atol=1e-13)


def test_simulator_refuses_mismatches():
    fed = qfed(3, 2, 0)
    with pytest.raises(flt.InputError, match="N=2"):
        afl_dga(fed, Participation(np.ones((2, 3), int)), eta=0.1, w0=np.ones(2))
    with pytest.raises(flt.InputError, match="weights"):
        afl_dga(fed, Participation(np.ones((3, 3), int)), eta=0.1, w0=np.ones(2))
    with pytest.raises(flt.InputError, match="w0"):
        afl_dga(fed, part_for(fed, np.ones((3, 3), int)), eta=0.1, w0=np.ones(3))
    with pytest.raises(flt.InputError, match="record=True"):
        diagnostics(fed, afl_dga(fed, part_for(fed, np.ones((3, 3), int)), eta=0.1, w0=np.ones(2)))


def test_logistic_clients_and_normalized_averaging():
    """The simulator runs on multinomial logistic clients (the paper's MNIST model on the 8x8 digits) and, with every
    client every round and D = 0, equals normalised local averaging there too."""
    from fltheory.datasets import digits_federation
    fed = digits_federation(n_clients=4, partition="label", seed=0, reg=1e-2).fed
    K = np.random.default_rng(0).integers(1, 4, (4, 6))
    part = Participation(np.ones((4, 6), int), K, 0, weights=np.asarray(fed.weights))
    w0 = np.zeros(fed.d)
    res = afl_dga(fed, part, eta=0.5, w0=w0)
    np.testing.assert_allclose(res.w, normalized_averaging(fed, eta=0.5, K=K, T=6, w0=w0), rtol=0, atol=1e-12)
    assert float(fed.loss(res.w[-1])) < float(fed.loss(res.w[0]))
    with pytest.raises(flt.InputError, match="record=False"):
        afl_dga(fed, part, eta=0.5, w0=w0, runs=10**5, record=True)


@settings(max_examples=20)
@given(schedules_(max_K=4, max_D=8), st.floats(0.02, 0.5), st.floats(0.3, 3.0), st.booleans())
def test_theorem1_corrected_and_corollary_hold_on_bounded_gradient_clients(inst, etaL, scale, at_eta_star):
    """Theorem 1' (worst case over the schedule, eta <= 1/(2L)) and Corollary 1' (at eta*, T >= 4N) on pseudo-Huber
    clients (Assumptions 1, 3 and 4 hold with L = s, G = s max delta), sigma = 0."""
    part, seed = inst
    rng = np.random.default_rng(seed)
    fed = PseudoHuberFederation(b=2 * rng.normal(size=(part.N, 2)), delta=rng.uniform(0.3, 2.0, part.N), scale=scale)
    L, G2 = scale, float(fed.G) ** 2
    corollary = at_eta_star and part.T >= 4 * part.N
    eta = np.sqrt(part.N / part.T) / L if corollary else etaL / L
    dg = diagnostics(fed, afl_dga(fed, part, eta=eta, w0=2 * rng.normal(size=2), record=True))
    Ks = part.K[part.P]
    kw = dict(L=L, N=part.N, T=part.T, Delta=float(dg.f[0] - dg.f[-1]), sigma2=0.0, G2=G2, K_m=int(Ks.max()),
              D_m=int(part.D.max()), K_min=int(Ks.min()), t_d=part.t_d)
    bound = B.corollary1_corrected(**kw) if corollary else B.theorem1_corrected(eta=eta, **kw)
    assert float(dg.average_grad2()) <= float(bound) * (1 + 1e-12)
    assert np.all(dg.gbar2 <= G2 * (1 + 1e-12))                           # eq. (2) corrected, pathwise
