"""FedDelAvg simulator: reductions, conventions, batching, invariants, errors."""
import numpy as np

from fltheory.validation import FLTheoryError, InputError
import pytest
from hypothesis import given
from hypothesis import strategies as st

import fltheory as flt
from fltheory.papers.feddelavg import feddelavg, feddelavg_loop
from fltheory.papers.feddelavg.algorithm import sync_times
from fltheory.problems import LogisticFederation, ProblemError
from conftest import on_backend, to_np


def fedavg_reference(fed, *, eta, tau, K, w0):
    """Independent FedAvg: tau local GD steps from the global model, then the rho-weighted average."""
    rho = np.asarray(fed.weights)
    w = np.array(w0, float)
    out = [w.copy()]
    for _ in range(K):
        local = np.repeat(w[None, :], fed.M, axis=0)
        for _ in range(tau):
            local = local - eta * np.asarray(fed.grad_clients(local))
        w = rho @ local
        out.append(w.copy())
    return np.array(out)


def small_logistic(seed=0, M=3, m=3, s=3, reg=0.05):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(4, 12, size=M)
    Xs = [rng.normal(size=(n, m)) + i for i, n in enumerate(sizes)]
    ys = [rng.integers(0, s, size=n) for n in sizes]
    return LogisticFederation.from_client_data(Xs, ys, n_classes=s, reg=reg)


@pytest.fixture(scope="module")
def quad():
    return flt.random_quadratic_federation(M=4, d=3, kappa=6, heterogeneity=2.0, weights="dirichlet", seed=3)


@pytest.mark.parametrize("kind", ["quadratic", "logistic"])
def test_alpha1_delta0_is_fedavg(quad, kind):
    fed = quad if kind == "quadratic" else small_logistic()
    w0 = np.linspace(-1, 1, fed.d)
    res = feddelavg(fed, eta=0.07, tau=4, Delta=0, alpha=1.0, K=7, w_init=w0, trajectory=True)
    ref = fedavg_reference(fed, eta=0.07, tau=4, K=7, w0=w0)
    np.testing.assert_allclose(res.w_periods, ref, rtol=0, atol=1e-13)
    # after every aggregation all clients hold the global model
    wc = res.trajectory.w_clients[4::4][:-1]
    np.testing.assert_allclose(wc, np.repeat(ref[1:-1, None, :], fed.M, axis=1), atol=1e-13)


def test_tau1_fedavg_is_centralized_gd(quad, xp):
    res = feddelavg(on_backend(quad, xp), eta=0.05, tau=1, Delta=0, alpha=1.0, K=20, w_init=xp.ones(3, dtype=xp.float64))
    w = np.ones(3)
    for k in range(20):
        w = w - 0.05 * quad.grad(w)
    np.testing.assert_allclose(to_np(res.w_periods)[-1], w, atol=1e-13)


@pytest.mark.parametrize("alpha", [0.2, 0.7])
def test_delta0_convention(quad, alpha, xp):
    """at Delta = 0 the sync uses the pre-sync average; it leaves the average unchanged and
    shrinks the client spread by (1 - alpha)."""
    eta, tau = 0.05, 3
    res = feddelavg(on_backend(quad, xp), eta=eta, tau=tau, Delta=0, alpha=alpha, K=5, trajectory=True)
    W, wb = to_np(res.trajectory.w_clients), to_np(res.trajectory.w_bar)
    rho = np.asarray(quad.weights)
    assert sync_times(tau=tau, Delta=0, K=5) == [3, 6, 9, 12]
    for t in range(1, 16):
        U = W[t - 1] - eta * quad.grad_clients(W[t - 1])
        ubar = rho @ U
        if t in (3, 6, 9, 12):
            np.testing.assert_allclose(wb[t], ubar, atol=1e-14)
            np.testing.assert_allclose(W[t] - wb[t], (1 - alpha) * (U - ubar), atol=1e-14)
        else:
            np.testing.assert_allclose(W[t], U, atol=1e-14)


def test_alpha1_delayed_resets_to_stale_model(quad, xp):
    """alpha = 1, Delta >= 1: w_i(k tau) = w(k tau - Delta) for every client."""
    tau, Delta = 5, 2
    res = feddelavg(on_backend(quad, xp), eta=0.05, tau=tau, Delta=Delta, alpha=1.0, K=4, w_init=xp.ones(3, dtype=xp.float64),
                    trajectory=True)
    W, wb = to_np(res.trajectory.w_clients), to_np(res.trajectory.w_bar)
    for k in range(4):
        s = k * tau + Delta  # t = k tau
        np.testing.assert_array_equal(W[s], np.repeat(wb[k * tau][None], quad.M, axis=0))


def test_alpha1_delta_tau_never_moves(quad, xp):
    w0 = np.array([0.3, -1.0, 2.0])
    res = feddelavg(on_backend(quad, xp), eta=0.1, tau=4, Delta=4, alpha=1.0, K=5, w_init=xp.asarray(w0), output_set="all")
    np.testing.assert_allclose(to_np(res.w_periods), np.broadcast_to(w0, (6, 3)), rtol=1e-15)  # (sum rho = 1 to rounding)


def test_average_recursion(quad, xp):
    """the paper: at a sync with Delta >= 1, w(k tau) = alpha w(k tau - Delta) + (1 - alpha) ubar."""
    eta, tau, Delta, alpha = 0.05, 4, 3, 0.4
    res = feddelavg(on_backend(quad, xp), eta=eta, tau=tau, Delta=Delta, alpha=alpha, K=3, trajectory=True)
    W, wb = to_np(res.trajectory.w_clients), to_np(res.trajectory.w_bar)
    for k in range(3):
        s = k * tau + Delta
        ubar = np.asarray(quad.weights) @ (W[s - 1] - eta * quad.grad_clients(W[s - 1]))
        np.testing.assert_allclose(wb[s], alpha * wb[k * tau] + (1 - alpha) * ubar, atol=1e-14)


def test_batched_equals_unbatched(quad, xp):
    Deltas, alphas, etas = np.array([0, 2, 5]), np.array([[1.0], [0.5], [0.1]]), np.array([[[0.02]], [[0.08]]])
    fed = on_backend(quad, xp)
    res = feddelavg(fed, eta=xp.asarray(etas), tau=5, Delta=xp.asarray(Deltas), alpha=xp.asarray(alphas), K=6, record=True)
    assert res.gap.shape == (2, 3, 3)
    wp, lg, ko = to_np(res.w_periods), to_np(res.record.local_gap), to_np(res.k_out)
    for e in range(2):
        for a in range(3):
            for D in range(3):
                one = feddelavg(fed, eta=float(etas[e, 0, 0]), tau=5, Delta=int(Deltas[D]),
                                alpha=float(alphas[a, 0]), K=6, record=True)
                np.testing.assert_allclose(wp[e, a, D], to_np(one.w_periods), rtol=0, atol=1e-15)
                np.testing.assert_allclose(lg[e, a, D], to_np(one.record.local_gap), atol=1e-15)
                assert ko[e, a, D] == int(one.k_out)


def test_batched_federation(quad, xp):
    feds = on_backend(flt.random_quadratic_federation(M=3, d=2, batch=4, seed=5), xp)
    res = feddelavg(feds, eta=0.05, tau=3, Delta=2, alpha=0.5, K=4)
    for b in range(4):
        one = feddelavg(feds.take(b), eta=0.05, tau=3, Delta=2, alpha=0.5, K=4)
        np.testing.assert_allclose(to_np(res.w_periods)[b], to_np(one.w_periods), atol=1e-15)


@pytest.mark.parametrize("Delta,alpha", [(0, 1.0), (0, 0.3), (1, 0.6), (3, 0.25), (4, 1.0), (4, 0.5)])
def test_simulator_equals_loop_reference(quad, Delta, alpha, xp):
    """The batched simulator (every namespace) against the plain NumPy loop."""
    res = feddelavg(on_backend(quad, xp), eta=0.06, tau=4, Delta=Delta, alpha=alpha, K=5, trajectory=True, output_set="all")
    ref = feddelavg_loop(quad, eta=0.06, tau=4, Delta=Delta, alpha=alpha, K=5, output_set="all")
    np.testing.assert_allclose(to_np(res.trajectory.w_clients), ref.w_clients, rtol=0, atol=1e-14)
    np.testing.assert_allclose(to_np(res.losses), ref.losses, rtol=1e-13)
    assert int(res.k_out) == ref.k_out


def test_stochastic_equals_loop_reference(quad):
    noisy = flt.QuadraticFederation(quad.H, quad.x_opt, quad.weights, sigma2=0.3)
    res = feddelavg(noisy, eta=0.05, tau=3, Delta=2, alpha=0.4, K=4, gradient="sgd", n_seeds=2, seed=11,
                    trajectory=True)
    for r in range(2):
        ref = feddelavg_loop(noisy, eta=0.05, tau=3, Delta=2, alpha=0.4, K=4, gradient="sgd", seed=11, replicate=r)
        np.testing.assert_allclose(res.trajectory.w_clients[r], ref.w_clients, atol=1e-13)
    assert not np.allclose(res.w_periods[0], res.w_periods[1])
    lfed = small_logistic()
    res = feddelavg(lfed, eta=0.1, tau=3, Delta=1, alpha=0.5, K=3, gradient="sgd", batch_size=2, n_seeds=2,
                    seed=4, trajectory=True)
    for r in range(2):
        ref = feddelavg_loop(lfed, eta=0.1, tau=3, Delta=1, alpha=0.5, K=3, gradient="sgd", batch_size=2, seed=4,
                             replicate=r)
        np.testing.assert_allclose(res.trajectory.w_clients[r], ref.w_clients, atol=1e-13)


def test_stochastic_batch_composition_invariant(xp):
    fed = on_backend(flt.random_quadratic_federation(M=3, d=2, sigma2=0.5, seed=1), xp)
    both = feddelavg(fed, eta=0.05, tau=3, Delta=xp.asarray([1, 3]), alpha=0.5, K=3, gradient="sgd", n_seeds=3)
    one = feddelavg(fed, eta=0.05, tau=3, Delta=3, alpha=0.5, K=3, gradient="sgd", n_seeds=3)
    np.testing.assert_array_equal(to_np(both.w_periods)[:, 1], to_np(one.w_periods))


@pytest.mark.parametrize("kind", ["quadratic", "logistic"])
def test_client_permutation_invariance(quad, kind):
    fed = quad if kind == "quadratic" else small_logistic(M=4)
    perm = np.array([2, 0, 3, 1])
    kw = dict(eta=0.05, tau=4, Delta=np.array([0, 3]), alpha=np.array([[1.0], [0.3]]), K=5, record=True)
    a, b = feddelavg(fed, **kw), feddelavg(fed.permuted(perm), **kw)
    np.testing.assert_allclose(a.w_periods, b.w_periods, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(a.record.divergence[..., perm], b.record.divergence, atol=1e-12)
    np.testing.assert_allclose(a.record.prop1, b.record.prop1, atol=1e-12)


def test_identical_clients_reach_w_star_without_bias(xp):
    """(Delta, alpha) = (0, 1), (0, 0.4), (3, 0.4), (5, 0.5), one batch of four configurations."""
    one = flt.random_quadratic_federation(M=1, d=3, kappa=4, seed=7)
    H, xo = np.repeat(one.H, 4, axis=0), np.repeat(one.x_opt, 4, axis=0)
    fed = flt.QuadraticFederation(H, xo, np.array([0.1, 0.2, 0.3, 0.4]))
    res = feddelavg(on_backend(fed, xp), eta=0.2, tau=5, Delta=xp.asarray([0, 0, 3, 5]), alpha=xp.asarray([1.0, 0.4, 0.4, 0.5]),
                    K=200, record=True, trajectory=True)
    W = to_np(res.trajectory.w_clients)
    assert W.shape[0] == 4
    np.testing.assert_allclose(W, np.repeat(to_np(res.trajectory.w_bar)[..., None, :], 4, axis=-2), atol=1e-14)
    assert float(xp.max(res.gap)) < 1e-24
    np.testing.assert_allclose(to_np(res.w_out), np.broadcast_to(fed.x_star, (4, 3)), atol=1e-12)
    assert float(xp.max(res.record.delta_eff)) < 1e-12


def test_output_sets(quad, xp):
    fed, w0 = on_backend(quad, xp), 5 * xp.ones(3, dtype=xp.float64)
    res = feddelavg(fed, eta=0.05, tau=3, Delta=2, alpha=0.5, K=6, w_init=w0)
    L, Fs = to_np(res.losses), float(res.F_star)
    assert np.isclose(float(res.gap), L[:6].min() - Fs)
    assert np.isclose(float(res.gap_for("proof")), L[1:].min() - Fs)
    assert np.isclose(float(res.gap_for("all")), L.min() - Fs)
    pr = feddelavg(fed, eta=0.05, tau=3, Delta=2, alpha=0.5, K=6, w_init=w0, output_set="proof")
    assert 1 <= int(pr.k_out) <= 6
    np.testing.assert_allclose(to_np(pr.w_out), to_np(pr.w_periods)[int(pr.k_out)])


def test_record_consistency(quad, xp):
    tau, K = 4, 5
    r = feddelavg(on_backend(quad, xp), eta=0.08, tau=tau, Delta=xp.asarray([0, 2, 4]), alpha=0.6, K=K, record=True,
                  trajectory=True, w_init=xp.ones(3, dtype=xp.float64))
    W, wb = to_np(r.trajectory.w_clients), to_np(r.trajectory.w_bar)
    rec = type("Rec", (), {k: to_np(getattr(r.record, k)) for k in ("divergence", "lemma5", "c", "prop1", "L_eff", "phi")})
    res = type("Res", (), {"w_periods": to_np(r.w_periods), "G": r.G})
    np.testing.assert_allclose(rec.divergence[..., 0, :], 0.0, atol=1e-15)  # common start (rounding of sum rho)
    np.testing.assert_array_equal(rec.lemma5[0], 0.0)  # Delta = 0: c_k(k tau) = w(k tau)
    np.testing.assert_allclose(rec.c[..., 0, :], res.w_periods[..., :K, :], atol=0)
    for b, D in enumerate([0, 2, 4]):
        for k in range(K):
            c = rec.c[b, k, 0]
            for j in range(1, tau + 1):
                c = c - 0.08 * quad.grad(c)
                np.testing.assert_allclose(rec.c[b, k, j], c, atol=1e-14)
            np.testing.assert_allclose(rec.prop1[b, k], np.linalg.norm(wb[b, (k + 1) * tau] - rec.c[b, k, tau]))
            np.testing.assert_allclose(rec.lemma5[b, k], np.linalg.norm(wb[b, k * tau + D] - rec.c[b, k, D]))
        gnorm = np.linalg.norm(quad.grad_clients(W[b]), axis=-1)
        assert rec.L_eff[b] >= gnorm.max() - 1e-12
    assert res.G.shape == (3, K, tau + 1)
    beta = float(quad.L)
    omega = 1 / np.max(np.sum((res.w_periods[..., :K, :] - quad.x_star) ** 2, axis=-1), axis=-1)
    np.testing.assert_allclose(rec.phi, omega * (1 - beta * 0.08 / 2))


def test_errors(quad, xp):
    kw = dict(eta=0.1, tau=4, K=2)
    quad = on_backend(quad, xp)
    with pytest.raises(InputError, match=r"Delta.*tau.*Delta=5.*tau=4"):
        feddelavg(quad, Delta=5, alpha=0.5, **kw)
    with pytest.raises(InputError, match="Delta must satisfy Delta >= 0"):
        feddelavg(quad, Delta=-1, alpha=0.5, **kw)
    for bad in (0.0, -0.2, 1.5, np.nan):
        with pytest.raises(InputError, match="alpha must (satisfy 0 < alpha <= 1|be finite)"):
            feddelavg(quad, Delta=1, alpha=bad, **kw)
    with pytest.raises(InputError, match="eta must satisfy eta > 0"):
        feddelavg(quad, Delta=1, alpha=0.5, eta=0.0, tau=4, K=2)
    with pytest.raises(InputError, match="tau must be an integer"):
        feddelavg(quad, Delta=1, alpha=0.5, eta=0.1, tau=0, K=2)
    with pytest.raises(FLTheoryError, match="Delta must be an integer"):
        feddelavg(quad, Delta=1.5, alpha=0.5, **kw)
    with pytest.raises(InputError, match="output_set"):
        feddelavg(quad, Delta=1, alpha=0.5, output_set="last", **kw)
    with pytest.raises(InputError, match="noise_cov"):
        feddelavg(quad, Delta=1, alpha=0.5, gradient="sgd", **kw)
    with pytest.raises(InputError, match="not finite.*eta"):
        feddelavg(quad, Delta=1, alpha=0.5, eta=50.0, tau=4, K=40)


@given(
    seed=st.integers(0, 10_000), M=st.integers(1, 4), d=st.integers(1, 3), tau=st.integers(1, 5),
    data=st.data(),
)
def test_hypothesis_random_quadratics(seed, M, d, tau, data):
    """Simulator = loop reference on random instances; alpha = 1, Delta = 0 is FedAvg."""
    Delta = data.draw(st.integers(0, tau))
    alpha = data.draw(st.floats(0.01, 1.0))
    fed = flt.random_quadratic_federation(M=M, d=d, kappa=5, weights="dirichlet", seed=seed)
    eta = 0.5 / float(fed.L)
    res = feddelavg(fed, eta=eta, tau=tau, Delta=np.array([Delta, 0]), alpha=np.array([alpha, 1.0]), K=3,
                    trajectory=True, w_init=np.ones(d))
    ref = feddelavg_loop(fed, eta=eta, tau=tau, Delta=Delta, alpha=alpha, K=3, w_init=np.ones(d))
    np.testing.assert_allclose(res.trajectory.w_clients[0], ref.w_clients, atol=1e-12)
    fa = fedavg_reference(fed, eta=eta, tau=tau, K=3, w0=np.ones(d))
    np.testing.assert_allclose(res.w_periods[1], fa, atol=1e-12)


@pytest.mark.parametrize("seed, M, d, tau, Delta, alpha", [(0, 1, 1, 1, 0, 1.0), (7, 3, 2, 4, 2, 0.3), (21, 4, 3, 5, 5, 0.05)])
def test_random_quadratics_on_fixed_instances(xp, seed, M, d, tau, Delta, alpha):
    """The hypothesis test above on three fixed instances, on every namespace."""
    fed = flt.random_quadratic_federation(M=M, d=d, kappa=5, weights="dirichlet", seed=seed)
    eta = 0.5 / float(fed.L)
    res = feddelavg(on_backend(fed, xp), eta=eta, tau=tau, Delta=xp.asarray([Delta, 0]), alpha=xp.asarray([alpha, 1.0]), K=3,
                    trajectory=True, w_init=xp.ones(d, dtype=xp.float64))
    ref = feddelavg_loop(fed, eta=eta, tau=tau, Delta=Delta, alpha=alpha, K=3, w_init=np.ones(d))
    np.testing.assert_allclose(to_np(res.trajectory.w_clients)[0], ref.w_clients, atol=1e-12)
    fa = fedavg_reference(fed, eta=eta, tau=tau, K=3, w0=np.ones(d))
    np.testing.assert_allclose(to_np(res.w_periods)[1], fa, atol=1e-12)


def test_a_diverging_configuration_is_marked_and_the_others_kept():
    """One configuration with eta beyond 2/beta diverges; it is flagged in its own batch entry with the
    cause, and the stable configuration's result is unchanged."""
    import warnings

    import fltheory as flt
    from fltheory.papers.feddelavg import exact as fd_exact

    fed = flt.random_quadratic_federation(M=3, d=2, seed=4)
    eta = np.array([0.05, 50.0])
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = feddelavg(fed, eta=eta, tau=4, Delta=1, alpha=0.5, K=30)
    assert r.diverged.tolist() == [False, True]
    assert any("eta >= 2/beta" in str(x.message) for x in w)
    alone = feddelavg(fed, eta=0.05, tau=4, Delta=1, alpha=0.5, K=30)
    np.testing.assert_allclose(r.gap[0], alone.gap, rtol=1e-13)
    fp = fd_exact.fixed_point(fed, eta=eta, tau=4, Delta=1, alpha=0.5)
    assert fp.converges.tolist() == [True, False]
    gaps = fd_exact.asymptotic_gap(fed, eta=eta, tau=4, Delta=1, alpha=0.5)
    assert np.isfinite(gaps[0]) and gaps[1] == np.inf
