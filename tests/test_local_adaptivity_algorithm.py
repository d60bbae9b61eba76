"""Tests of the batched FedOpt simulator of the local adaptivity paper (fltheory.papers.local_adaptivity.algorithm).

Closed forms (fixed-P clients), metamorphic invariants (permutation, batching,
restart), the exact B/N identity, the worked example (f), (g), the
plain-loop reference, Monte-Carlo noise and participation, and input validation.
"""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import fltheory as flt
from fltheory.backend import namespace, to_numpy
from fltheory.validation import per_client
from fltheory.papers.local_adaptivity.algorithm import client_update, fedopt, fedopt_loop
from fltheory.problems import ProblemError, SeparableCosineFederation
from conftest import on_backend, to_np

X_STAR = np.array([91 / 319, 370 / 319])


def _spd(rng, shape, d, lo=0.3, hi=3.0):
    G = rng.normal(size=shape + (d, d))
    Q, _ = np.linalg.qr(G)
    lam = rng.uniform(lo, hi, size=shape + (d,))
    return np.einsum("...ij,...j,...kj->...ik", Q, lam, Q)


def _one_round_closed_form(fed, x, eta, tau, P, alpha, correction):
    """x^+ of the paper, with K_i = (I - eta_i P_i H_i)^tau_i computed directly (per client)."""
    H, xo, w = fed.H, fed.x_opt, fed.weights
    M, d = fed.M, fed.d
    eta = np.broadcast_to(eta, (M,))
    tau = np.broadcast_to(tau, (M,))
    terms, Ninv = [], []
    for i in range(M):
        K = np.linalg.matrix_power(np.eye(d) - eta[i] * P[i] @ H[i], int(tau[i]))
        Ni_inv = np.linalg.inv(eta[i] * tau[i] * P[i])
        step = (np.eye(d) - K) @ (x - xo[i])
        terms.append(step if correction == "none" else Ni_inv @ step)
        Ninv.append(Ni_inv)
    Delta = sum(w[i] * terms[i] for i in range(M))
    if correction == "joint":
        Delta = np.linalg.solve(sum(w[i] * Ninv[i] for i in range(M)), Delta)
    return x - alpha * Delta


# --------------------------------------------------------------------------------------
# closed forms
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("correction", ["none", "local", "joint"])
def test_one_round_matches_K_closed_form(correction, xp):
    rng = np.random.default_rng(3)
    fed = flt.random_quadratic_federation(M=4, d=3, kappa=5, weights="dirichlet", seed=11)
    P = _spd(rng, (4,), 3)
    lmax = np.array([np.abs(np.linalg.eigvals(P[i] @ fed.H[i])).max() for i in range(4)])
    eta = rng.uniform(0.1, 0.9, 4) / lmax
    tau = np.array([1, 3, 7, 4])
    x = rng.normal(size=3)
    r = fedopt(on_backend(fed, xp), x0=xp.asarray(x), rounds=1, eta=per_client(xp.asarray(eta)),
               tau=per_client(xp.asarray(tau)), client_opt="precond", precond=xp.asarray(P), alpha=0.7,
               correction=correction)
    assert namespace(r.x) is xp
    expect = _one_round_closed_form(fed, x, eta, tau, P, 0.7, correction)
    np.testing.assert_allclose(to_numpy(r.x), expect, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(to_numpy(r.trajectory)[0], x, rtol=0, atol=0)
    np.testing.assert_allclose(to_numpy(r.N), (eta * tau)[:, None, None] * P, rtol=1e-13)


@given(M=st.integers(2, 5), d=st.integers(1, 4), seed=st.integers(0, 10**6), tau=st.integers(1, 20),
       u=st.floats(0.01, 0.99), alpha=st.floats(0.1, 1.5), correction=st.sampled_from(["none", "local", "joint"]),
       diag_p=st.booleans())
def test_hypothesis_one_round_closed_form(M, d, seed, tau, u, alpha, correction, diag_p):
    """the paper strategies: any quad-instance, any SPD (or diagonal) P_i, eta_i = u / lambda_max(P_i H_i)."""
    rng = np.random.default_rng(seed)
    fed = flt.random_quadratic_federation(M=M, d=d, kappa=10, weights="dirichlet", seed=seed)
    P = np.eye(d) * rng.uniform(0.1, 10, (M, 1, d)) if diag_p else _spd(rng, (M,), d, 0.1, 10)
    lmax = np.array([np.abs(np.linalg.eigvals(P[i] @ fed.H[i])).max() for i in range(M)])
    eta = u / lmax
    x = rng.uniform(-3, 3, d)
    r = fedopt(fed, x0=x, rounds=1, eta=per_client(eta), tau=per_client(tau), client_opt="precond", precond=P, alpha=alpha,
               correction=correction)
    expect = _one_round_closed_form(fed, x, eta, np.full(M, tau), P, alpha, correction)
    np.testing.assert_allclose(r.x, expect, rtol=1e-10, atol=1e-10)


def test_tau1_fedavg_is_one_gd_step(example_fed, xp):
    x = np.array([0.4, -1.3])
    r = fedopt(on_backend(example_fed, xp), x0=xp.asarray(x), rounds=1, eta=0.07, tau=1, alpha=1.0)
    np.testing.assert_allclose(to_np(r.x), x - 0.07 * example_fed.grad(x), rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("client_opt", ["sgd", "adagrad", "adam", "yogi", "momentum"])
def test_identical_clients_converge_to_x_star(client_opt):
    """All x_i* and H_i equal: x* is a fixed point of every client operator (no bias)."""
    Hc = np.array([[2.0, 0.4], [0.4, 1.0]])
    fed = flt.QuadraticFederation(np.stack([Hc] * 3), np.tile([1.5, -0.5], (3, 1)), [0.2, 0.5, 0.3])
    r = fedopt(fed, x0=np.zeros(2), rounds=1500, eta=0.05, tau=per_client([2, 5, 3]), client_opt=client_opt, v0=0.1,
               eps=1e-7)
    np.testing.assert_allclose(r.x, fed.x_star, atol=1e-9)


@pytest.mark.parametrize("client_opt, server_opt", [("sgd", "momentum"), ("adagrad", "adagrad"), ("adam", "adam"),
                                                    ("yogi", "yogi"), ("momentum", "sgd")])
def test_every_optimizer_on_every_namespace(example_fed, xp, client_opt, server_opt):
    """The long NumPy runs of this file (1000-4000 rounds) in short on every namespace: 20 noisy rounds of each client
    and server optimizer give NumPy's numbers, and x* stays a fixed point when the clients are identical."""
    kw = dict(rounds=20, eta=0.05, tau=per_client(np.array([2, 5, 3])), client_opt=client_opt, server_opt=server_opt,
              alpha=0.1, server_beta1=0.5, v0=0.1, eps=1e-7, correction="local", seed=5)
    fed = flt.QuadraticFederation(example_fed.H, example_fed.x_opt, example_fed.weights, sigma2=0.2)
    ref = fedopt(fed, x0=np.zeros(2), **kw)
    got = fedopt(on_backend(fed, xp), x0=xp.zeros(2, dtype=xp.float64), **{**kw, "tau": per_client(xp.asarray([2, 5, 3]))})
    np.testing.assert_allclose(to_np(got.trajectory), ref.trajectory, rtol=1e-12, atol=1e-14)
    Hc = np.array([[2.0, 0.4], [0.4, 1.0]])
    same = flt.QuadraticFederation(np.stack([Hc] * 3), np.tile([1.5, -0.5], (3, 1)), np.array([0.2, 0.5, 0.3]))
    star = xp.asarray(same.x_star)
    r = fedopt(on_backend(same, xp), x0=star, **{**kw, "tau": per_client(xp.asarray([2, 5, 3]))})
    np.testing.assert_allclose(to_np(r.x), same.x_star, atol=1e-12)


# --------------------------------------------------------------------------------------
# metamorphic invariants
# --------------------------------------------------------------------------------------
def _noisy_fed(batch=None, sigma2=0.3, seed=5):
    return flt.random_quadratic_federation(M=4, d=3, batch=batch, kappa=4, weights="dirichlet", sigma2=sigma2,
                                           seed=seed)


def test_permuting_clients_changes_nothing(xp):
    fed = on_backend(_noisy_fed(), xp)
    perm = xp.asarray([2, 0, 3, 1])
    eta = xp.asarray([0.05, 0.1, 0.08, 0.02])
    tau = xp.asarray([3, 1, 4, 2])
    e_p, t_p = per_client(xp.take(eta, perm)), per_client(xp.take(tau, perm))
    kw = dict(x0=xp.ones(3, dtype=xp.float64), rounds=6, client_opt="adagrad", correction="joint", alpha=0.4, seed=3)
    base = fedopt(fed, eta=per_client(eta), tau=per_client(tau), noise=False, **kw)
    perm_ = fedopt(fed.permuted(perm), eta=e_p, tau=t_p, noise=False, **kw)
    np.testing.assert_allclose(to_np(perm_.x), to_np(base.x), rtol=1e-13, atol=1e-14)
    # noise keyed by client identity: permuted ids reproduce the noisy run exactly ...
    noisy = to_np(fedopt(fed, eta=per_client(eta), tau=per_client(tau), sampling=2, **kw).x)
    same = fedopt(fed.permuted(perm), eta=e_p, tau=t_p, client_ids=perm, sampling=2, **kw)
    np.testing.assert_allclose(to_np(same.x), noisy, rtol=1e-13, atol=1e-14)
    # ... while default ids key noise by position: a different (equally distributed) realisation
    other = fedopt(fed.permuted(perm), eta=e_p, tau=t_p, sampling=2, **kw)
    assert np.abs(to_np(other.x) - noisy).max() > 1e-6


def test_batched_equals_unbatched_per_configuration(xp):
    fed = on_backend(_noisy_fed(batch=3), xp)
    eta = xp.asarray([[0.05], [0.1], [0.02]])  # one eta per configuration
    kw = dict(rounds=4, tau=per_client(xp.asarray([2, 3, 1, 4])), client_opt="adam", correction="local", alpha=0.3, seed=9,
              sampling=3, sampling_scheme="weighted", aggregation="uniform")
    x0 = xp.reshape(xp.arange(9.0, dtype=xp.float64), (3, 3)) / 9
    full = fedopt(fed, x0=x0, eta=eta, **kw)
    assert full.x.shape == (3, 3) and full.trajectory.shape == (5, 3, 3)
    for b in range(3):
        one = fedopt(fed.take(b), x0=x0[b, ...], eta=per_client(eta[b, ...]), config=b, **kw)
        np.testing.assert_allclose(to_np(one.x), to_np(full.x)[b], rtol=1e-14, atol=1e-15)


def test_restart_semantics(example_fed, xp):
    """No state leaks between rounds: rounds from the same x repeat the same local run, and
    x^(2) depends on x^(1) only."""
    fed, x = on_backend(example_fed, xp), xp.asarray([0.3, -0.2])
    kw = dict(eta=0.05, tau=5, client_opt="adam", beta1=0.9, v0=0.0, eps=1e-7, record=True)
    a = client_update(fed, x=x, round=0, **kw)
    b = client_update(fed, x=x, round=7, **kw)
    np.testing.assert_array_equal(to_np(a.y), to_np(b.y))
    np.testing.assert_array_equal(to_np(a.N), to_np(b.N))
    fkw = dict(eta=0.05, tau=5, client_opt="adagrad", correction="local", alpha=0.5, noise=False)
    two = fedopt(fed, x0=x, rounds=2, **fkw)
    one = fedopt(fed, x0=x, rounds=1, **fkw)
    again = fedopt(fed, x0=one.x, rounds=1, **fkw)
    np.testing.assert_array_equal(to_np(two.x), to_np(again.x))


@pytest.mark.parametrize("client_opt,beta1,bias", [("adagrad", 0.0, False), ("adagrad", 0.9, False),
                                                   ("adam", 0.5, False), ("adam", 0.9, True), ("yogi", 0.9, False),
                                                   ("momentum", 0.7, False)])
def test_exact_N_identity(client_opt, beta1, bias, xp):
    """x - A_i(x) = eta_i sum_j B^(j) g_j, B^(j) = (1-b1) sum_{k>=j} b1^(k-j) P^(k), sum_j B^(j) = N_i/eta_i;
    Alg. 1's N = sum_j (1 - b1^(tau-j)) P^(j), with heterogeneous tau_i."""
    fed = _noisy_fed(sigma2=0.5)
    eta = np.array([0.05, 0.1, 0.03, 0.2])
    tau = np.array([6, 1, 4, 3])
    x = np.array([0.5, -1.0, 2.0])
    kw = dict(x=xp.asarray(x), eta=per_client(xp.asarray(eta)), tau=per_client(xp.asarray(tau)), client_opt=client_opt,
              beta1=beta1, bias_correction=bias, v0=0.1, seed=2, round=3, record=True)
    cu = client_update(on_backend(fed, xp), **kw)
    alg1 = client_update(on_backend(fed, xp), n_mode="alg1", **kw)
    np.testing.assert_array_equal(to_np(alg1.delta), to_np(cu.delta))  # n_mode only changes N
    cu, alg1 = (type("U", (), {k: to_np(getattr(u, k)) for k in ("P", "g", "delta", "N")}) for u in (cu, alg1))
    for i in range(fed.M):
        T = tau[i]
        P, g = cu.P[:T, i], cu.g[:T, i]
        B = [(1 - beta1) * sum(beta1 ** (k - j) * P[k] for k in range(j, T)) for j in range(T)]
        np.testing.assert_allclose(cu.delta[i], eta[i] * sum(B[j] * g[j] for j in range(T)), rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(cu.N[i], eta[i] * sum(B), rtol=1e-12)
        np.testing.assert_allclose(cu.N[i], eta[i] * sum((1 - beta1 ** (k + 1)) * P[k] for k in range(T)), rtol=1e-12)
        np.testing.assert_allclose(alg1.N[i], sum((1 - beta1 ** (T - j)) * P[j] for j in range(T)), rtol=1e-12)
    ratio = alg1.N * eta[:, None] / cu.N
    if beta1 == 0 or client_opt == "momentum":  # equal iff beta1 = 0 or P constant
        np.testing.assert_allclose(ratio, 1.0, rtol=1e-12)
    else:
        assert np.abs(ratio[0] - 1).max() > 1e-6


# --------------------------------------------------------------------------------------
# the paper worked example
# --------------------------------------------------------------------------------------
ADA = dict(eta=0.01, tau=5, client_opt="adagrad", v0=0.1, eps=0.0)


def test_local_adagrad_bias_example_5_5f(example_fed):
    """the paper: uncorrected local AdaGrad converges to x~ = (0.5438417820, 0.2676181614), 0.929 from x*."""
    r = fedopt(example_fed, x0=np.zeros(2), rounds=4000, alpha=1.0, record_every=4000, **ADA)
    np.testing.assert_allclose(r.x, [0.5438417820, 0.2676181614], atol=1e-8)
    assert abs(np.linalg.norm(r.x - X_STAR) - 0.92897) < 1e-5


def test_local_and_joint_correction_example_5_5f(example_fed, xp):
    """the paper: local correction (alpha=0.05) and joint correction (alpha=1) reach the same x^."""
    x_hat = [0.2847634351, 1.1553339039]
    fed = on_backend(example_fed, xp)
    loc = fedopt(fed, x0=xp.zeros(2, dtype=xp.float64), rounds=300, alpha=0.05, correction="local", **ADA)
    np.testing.assert_allclose(to_np(loc.x), x_hat, atol=1e-9)
    joint = fedopt(fed, x0=loc.x, rounds=100, alpha=1.0, correction="joint", **ADA)
    np.testing.assert_allclose(to_np(joint.x), x_hat, atol=1e-9)


@pytest.mark.parametrize("n_mode,alpha,bias", [("exact", 0.5, 5.462e-4), ("alg1", 50.0, 3.741e-3)])
def test_adagrad_momentum_alg1_residual_example_5_5g(example_fed, n_mode, alpha, bias, xp):
    """with beta1 = 0.9 Alg. 1's N leaves a residual bias; the exact N does not."""
    r = fedopt(on_backend(example_fed, xp), x0=xp.asarray(X_STAR), rounds=300, eta=0.01, tau=5, client_opt="adagrad",
               beta1=0.9, v0=0.1, eps=0.0, correction="local", n_mode=n_mode, alpha=alpha)
    traj = to_np(r.trajectory)
    assert np.linalg.norm(traj[-1] - traj[-2]) < 1e-13
    assert abs(np.linalg.norm(to_np(r.x) - X_STAR) - bias) < 5e-7


def test_server_optimizers_keep_the_fixed_point(example_fed):
    """Jacobi preconditioners, the paper: every server optimizer converges to x~."""
    P = np.einsum("mi,ij->mij", 1 / np.einsum("mii->mi", example_fed.H), np.eye(2))
    x_tilde = [0.3230642062, 0.6596152707]
    for server_opt, alpha in (("momentum", 0.5), ("adagrad", 0.1), ("adam", 0.01), ("yogi", 0.01)):
        r = fedopt(example_fed, x0=np.zeros(2), rounds=1000, eta=0.1, tau=5, client_opt="precond", precond=P,
                   server_opt=server_opt, alpha=alpha, server_beta1=0.5)
        np.testing.assert_allclose(r.x, x_tilde, atol=1e-9, err_msg=server_opt)


# --------------------------------------------------------------------------------------
# the plain loop reference
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("client_opt", ["sgd", "precond", "adagrad"])
@pytest.mark.parametrize("correction", ["none", "local", "joint"])
def test_vectorized_equals_loop(client_opt, correction, xp):
    """The batched simulator (every namespace) against the plain NumPy loop."""
    fed = _noisy_fed(batch=2)
    rng = np.random.default_rng(0)
    P = _spd(rng, (2, 4), 3) if client_opt == "precond" else None
    x0, eta, tau = np.array([0.2, -0.4, 1.0]), np.array([0.05, 0.1, 0.02, 0.07]), np.array([2, 1, 4, 3])
    kw = dict(x0=x0, rounds=3, eta=per_client(eta), tau=per_client(tau), client_opt=client_opt, precond=P,
              correction=correction, alpha=0.6, seed=4, eps=1e-7)
    kx = {**kw, "x0": xp.asarray(x0), "eta": per_client(xp.asarray(eta)), "tau": per_client(xp.asarray(tau)),
          "precond": None if P is None else xp.asarray(P)}
    fast, slow = fedopt(on_backend(fed, xp), **kx), fedopt_loop(fed, **kw)
    np.testing.assert_allclose(to_np(fast.trajectory), slow.trajectory, rtol=1e-12, atol=1e-12)


# --------------------------------------------------------------------------------------
# randomness: noise and participation
# --------------------------------------------------------------------------------------
def _within_4_se(samples, target):
    se = samples.std(axis=0, ddof=1) / np.sqrt(samples.shape[0])
    assert np.all(np.abs(samples.mean(axis=0) - target) <= 4 * se), (samples.mean(axis=0), target, se)


def test_noise_monte_carlo_mean_matches_deterministic_round(xp):
    fed = on_backend(flt.random_quadratic_federation(M=3, d=2, kappa=5, weights="dirichlet", sigma2=1.0, seed=21), xp)
    n = 4000
    kw = dict(rounds=1, eta=0.1, tau=4, alpha=0.8, correction="joint", client_opt="sgd", seed=1)
    mc = to_np(fedopt(fed, x0=xp.zeros((n, 2), dtype=xp.float64), **kw).x)
    det = to_np(fedopt(fed, x0=xp.zeros(2, dtype=xp.float64), noise=False, **kw).x)
    assert mc.std(axis=0).min() > 1e-3  # the noise is there
    _within_4_se(mc, det)


def test_weighted_sampling_with_uniform_aggregation_is_unbiased(example_fed, xp):
    """|S| i.i.d. draws proportional to w_i with 1/|S| aggregation is unbiased for eq. (5)."""
    n = 4000
    kw = dict(rounds=1, eta=0.1, tau=3, alpha=1.0)
    fed, x0 = on_backend(example_fed, xp), xp.asarray([0.5, -0.5])
    mc = fedopt(fed, x0=xp.broadcast_to(x0, (n, 2)), sampling=2, sampling_scheme="weighted", aggregation="uniform", **kw)
    omega = to_np(mc.omega)
    assert np.allclose(omega.sum(axis=-1), 1.0) and set(np.unique(omega * 2)) <= {0.0, 1.0, 2.0}
    det = to_np(fedopt(fed, x0=x0, **kw).x)
    _within_4_se(to_np(mc.x), det)
    full = fedopt(fed, x0=x0, sampling=3, **kw)  # all M sampled without replacement = full
    np.testing.assert_allclose(to_np(full.x), det, rtol=1e-15)
    omega = to_np(fedopt(fed, x0=xp.broadcast_to(x0, (50, 2)), sampling=1, **kw).omega)
    assert np.all((omega == 0) | (omega == 1)) and np.all(omega.sum(axis=-1) == 1)


# --------------------------------------------------------------------------------------
# validation
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs,match", [
    (dict(eta=0.0), "eta"), (dict(eta=[0.1, -1, 0.1]), "eta"), (dict(tau=0), "tau"), (dict(tau=2.5), "tau"),
    (dict(alpha=-1.0), "alpha"), (dict(client_opt="lbfgs"), "client_opt"), (dict(correction="global"), "correction"),
    (dict(client_opt="precond"), "precond"), (dict(precond=np.stack([np.eye(2)] * 3)), "precond"),
    (dict(client_opt="precond", precond=np.stack([-np.eye(2)] * 3)), "precond"),
    (dict(client_opt="precond", precond=np.stack([[[1.0, 2.0], [0.0, 1.0]]] * 3)), "precond"),
    (dict(client_opt="adam", beta1=1.0), "beta1"), (dict(client_opt="adam", beta2=-0.1), "beta2"),
    (dict(sampling=0), "sampling"), (dict(sampling=4), "sampling"), (dict(n_mode="paper"), "n_mode"),
    (dict(server_opt="lamb"), "server_opt"), (dict(client_opt="adagrad", v0=0.0, eps=0.0), "v0"),
    (dict(x0=np.zeros(3)), "x0"), (dict(rounds=-1), "rounds"), (dict(record_every=0), "record_every"),
    (dict(aggregation="mean"), "aggregation"), (dict(sampling_scheme="poisson"), "sampling_scheme"),
])
def test_bad_input_raises(example_fed, kwargs, match):
    base = dict(x0=np.zeros(2), rounds=1, eta=0.1, tau=2)
    with pytest.raises(flt.FLTheoryError, match=match):   # InputError (ValueError) or InputTypeError (TypeError)
        fedopt(example_fed, **{**base, **kwargs})


def test_weights_must_sum_to_one(example_fed):
    class Bad:
        M, d, weights = 3, 2, np.array([0.5, 0.3, 0.3])
        grad_clients = example_fed.grad_clients

    with pytest.raises(ProblemError, match="weights"):
        fedopt(Bad(), x0=np.zeros(2), rounds=1, eta=0.1, tau=1)


# --------------------------------------------------------------------------------------
# SeparableCosineFederation (Theorem 3 test problem)
# --------------------------------------------------------------------------------------
def _cos_fed(seed=0, batch=()):
    rng = np.random.default_rng(seed)
    shape = batch + (3, 2)
    return SeparableCosineFederation(rng.uniform(0.2, 2, shape), rng.uniform(0, 2, shape), rng.uniform(-3, 3, shape),
                                     weights=[0.2, 0.3, 0.5])


def test_separable_cosine_gradient_smoothness_and_lower_bound():
    fed = _cos_fed()
    rng = np.random.default_rng(1)
    X = rng.uniform(-6, 6, (200, 2))
    h = 1e-6
    fd = np.stack([(fed.loss(X + h * e) - fed.loss(X - h * e)) / (2 * h) for e in np.eye(2)], axis=-1)
    np.testing.assert_allclose(fed.grad(X), fd, atol=1e-6)
    Y = X + rng.normal(size=X.shape)
    gi, gj = fed.grad_clients_at(X), fed.grad_clients_at(Y)
    lip = np.linalg.norm(gi - gj, axis=-1) / np.linalg.norm(X - Y, axis=-1)[:, None]
    assert lip.max() <= fed.L + 1e-12
    assert np.all(fed.loss(X) >= fed.F_inf)
    # local AdaGrad + local correction (Theorem 3 setting, alpha = 1/L): the limit point's gradient is O(eta)
    gnorm = []
    for eta in (5e-3, 5e-4):
        r = fedopt(fed, x0=np.zeros(2), rounds=300, eta=per_client(eta), tau=4, client_opt="adagrad", correction="local",
                   alpha=1 / float(fed.L))
        assert np.linalg.norm(r.trajectory[-1] - r.trajectory[-2]) < 1e-12 and fed.loss(r.x) >= fed.F_inf
        gnorm.append(np.linalg.norm(fed.grad(r.x)))
    assert gnorm[0] < 1e-2 and 8 < gnorm[0] / gnorm[1] < 12
    fine = fed.F_inf_bound(grid=200001)
    assert fed.F_inf <= fine <= fed.F_inf + 1e-5


def test_separable_cosine_batched_and_errors(xp):
    fed = _cos_fed(batch=(4,))
    assert fed.batch_shape == (4,) and fed.F_inf.shape == (4,)
    np.testing.assert_allclose(fed.F_inf[2], _cos_fed(batch=(4,)).F_inf[2])
    # the backend: the same bound, gradients and a FedOpt run
    on_xp = SeparableCosineFederation(*(xp.asarray(v) for v in (fed.a, fed.b, fed.c)), weights=xp.asarray(fed.weights))
    assert namespace(on_xp.F_inf) is xp
    np.testing.assert_allclose(to_numpy(on_xp.F_inf), fed.F_inf, rtol=1e-13)
    kw = dict(rounds=3, eta=0.01, tau=2, client_opt="adagrad", correction="local")
    np.testing.assert_allclose(to_numpy(fedopt(on_xp, x0=xp.zeros(2), **kw).x), fedopt(fed, x0=np.zeros(2), **kw).x,
                               rtol=1e-13)
    ones = np.ones((2, 2))
    with pytest.raises(ProblemError, match="a must satisfy a > 0"):
        SeparableCosineFederation(-ones, ones, ones)
    with pytest.raises(ProblemError, match="b must satisfy b >= 0"):
        SeparableCosineFederation(ones, -ones, ones)
    with pytest.raises(ProblemError, match="c must have shape"):
        SeparableCosineFederation(ones, ones, np.ones((2, 3)))
    with pytest.raises(ProblemError, match="weights"):
        SeparableCosineFederation(ones, ones, ones, weights=[0.9, 0.2])


def test_fixed_preconditioners_are_inverted_only_for_a_correction(monkeypatch):
    """P_i^{-1} serves the local and joint corrections alone: a run without correction never inverts P_i (on a
    GPU the inverse of 10^6 matrices of 16 x 16 is a good part of the set-up), a corrected run does, once."""
    from fltheory.papers.local_adaptivity import algorithm as la

    fed = flt.random_quadratic_federation(M=3, d=4, batch=2, kappa=5.0, seed=1)
    A = np.random.default_rng(2).normal(size=(2, 3, 4, 4))
    P = A @ np.swapaxes(A, -1, -2) / 4 + 0.5 * np.eye(4)
    calls = []
    real = np.linalg.inv
    monkeypatch.setattr(np.linalg, "inv", lambda a: calls.append(a.shape) or real(a))
    kw = dict(x0=np.zeros(4), rounds=3, eta=0.05, tau=2, client_opt="precond", precond=P)
    la.fedopt(fed, correction="none", **kw)
    assert calls == []
    corrected = la.fedopt(fed, correction="local", **kw)
    assert calls == [(2, 3, 4, 4)]
    Ninv = np.linalg.inv(corrected.N)      # N_i = c_i P_i: its inverse through P_i^{-1} / c_i, as the run used it
    np.testing.assert_allclose(la._apply_Ninv(la._setup(fed, np.zeros(4), eta=0.05, tau=2, client_opt="precond",
                                                        precond=P, beta1=None, beta2=None, v0=None, eps=None,
                                                        bias_correction=False, n_mode="exact", noise=False, seed=0,
                                                        config=None, client_ids=None)[0], corrected.N,
                                              np.ones((2, 3, 4))), (Ninv @ np.ones((2, 3, 4, 1)))[..., 0], rtol=1e-12)


def test_check_spd_agrees_with_the_eigenvalues_and_refuses_non_finite_p():
    """``check_spd`` (FedOpt's fixed preconditioners, Theorem 2's exact paths) gives the eigenvalues' verdict on
    symmetric matrices away from singular (a batch mixing diagonal and dense P_i, singular PSD, indefinite, scales
    1e-300 to 1e300, and SPD entries up to 1.4e308 without an overflow warning), and refuses a NaN or an infinite
    diagonal entry (NumPy counts them as nonzero diagonal entries)."""
    import warnings

    from fltheory.problems import ProblemError, check_spd

    rng = np.random.default_rng(4)
    Q, _ = np.linalg.qr(rng.normal(size=(3, 3)))

    def sym(lam, scale=1.0):
        P = scale * (Q @ np.diag(lam) @ Q.T)
        return np.triu(P) + np.triu(P, 1).T

    cases = [np.stack([np.diag([1.0, 2.0, 3.0]), sym([1.0, 2.0, 3.0])]), np.outer([1.0, 2, 3], [1.0, 2, 3])[None],
             np.diag([1.0, 0.0, 2.0])[None], sym([1.0, -1e-12, 2.0])[None], np.diag([1.0, -0.0, 2.0])[None],
             sym([1.0, 1e-9, 2.0])[None]]
    cases += [sym([1.0, 2.0, 3.0], s)[None] for s in (1e-300, 1e300, 5e307)]
    for P in cases:
        pd = bool(np.all(np.linalg.eigvalsh(P)[..., 0] > 0))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            try:
                check_spd(P, np, "precond", symmetric_rtol=1e-12)
                accepted = True
            except ProblemError:
                accepted = False
        assert accepted == pd, (P, pd)
    for bad in (np.nan, np.inf, -np.inf):
        with pytest.raises(ProblemError, match="precond must be positive definite"):
            check_spd(np.diag([1.0, bad, 2.0])[None], np, "precond")
