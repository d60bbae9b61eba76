"""Exact analysis of the local adaptivity paper on quadratics: the paper worked example and metamorphic laws."""
import numpy as np

from fltheory.validation import InputError
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import fltheory as flt
from fltheory.backend import to_numpy
from fltheory.validation import per_client
from fltheory.papers.local_adaptivity import exact
from fltheory.problems import ProblemError

from conftest import on_backend, to_np

JACOBI = np.array([np.diag([0.5, 1.0]), np.diag([1.0, 0.25]), np.diag([1 / 3, 0.5])])


def _direct_K(H, P, eta, tau):
    return np.linalg.matrix_power(np.eye(len(H)) - eta * P @ H, tau)


def _simulate_rounds(fed, eta, tau, P, alpha, correction, rounds, x0=None):
    """Plain per-client loop of preconditioned local GD (an independent reference)."""
    M, d = fed.M, fed.d
    taus = np.broadcast_to(tau, (M,))
    etas = np.broadcast_to(eta, (M,))
    x = np.zeros(d) if x0 is None else x0.copy()
    for _ in range(rounds):
        deltas, Ninvs = [], []
        for i in range(M):
            y = x.copy()
            for _ in range(taus[i]):
                y = y - etas[i] * P[i] @ fed.H[i] @ (y - fed.x_opt[i])
            Ni = etas[i] * taus[i] * P[i]
            di = x - y
            if correction != "none":
                di = np.linalg.solve(Ni, di)
            deltas.append(di)
            Ninvs.append(np.linalg.inv(Ni))
        D = sum(fed.weights[i] * deltas[i] for i in range(M))
        if correction == "joint":
            D = np.linalg.solve(sum(fed.weights[i] * Ninvs[i] for i in range(M)), D)
        x = x - alpha * D
    return x


def test_worked_example_a_jacobi(example_fed, xp):
    """the paper: every printed digit."""
    fed, P = on_backend(example_fed, xp), xp.asarray(JACOBI)
    ops = exact.local_operators(fed, eta=0.1, tau=5, precond=P)
    K, NinvImK = to_np(ops.K), to_np(ops.NinvImK)
    for i in range(3):
        np.testing.assert_allclose(K[i], _direct_K(example_fed.H[i], JACOBI[i], 0.1, 5), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(K[0], [[0.5996095313, -0.0822656641], [-0.1645313281, 0.5996095313]], atol=5e-11)
    xt = to_np(exact.fixed_point(fed, eta=0.1, tau=5, precond=P).x)
    np.testing.assert_allclose(xt, [0.3230642062, 0.6596152707], atol=5e-11)
    xh = to_np(exact.fixed_point(fed, eta=0.1, tau=5, precond=P, correction="local").x)
    np.testing.assert_allclose(xh, [0.2746960047, 1.1375391711], atol=5e-11)
    xj = to_np(exact.fixed_point(fed, eta=0.1, tau=5, precond=P, correction="joint").x)
    np.testing.assert_allclose(xj, xh, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(xh - example_fed.x_star), 0.02471, atol=5e-6)
    am = [float(exact.alpha_max(fed, eta=0.1, tau=5, precond=P, correction=c)) for c in exact.CORRECTIONS]
    np.testing.assert_allclose(am, [4.616, 1.1717, 4.861], atol=5e-4)
    CL = np.einsum("m,mij->ij", example_fed.weights, NinvImK)
    np.testing.assert_allclose(CL, [[1.5233039375, 0.0327712170], [0.0327712170, 1.7010924687]], atol=5e-11)
    np.testing.assert_allclose(to_np(exact.small_eta_limit(fed, tau=5, precond=P)), [775 / 2379, 1668 / 2379], rtol=1e-13)
    # eq. (9) at x*: both sides equal (-0.0056228851, 0.1994988571)
    pg = to_np(exact.pseudo_gradient(fed, fed.x_star, eta=0.1, tau=5, precond=P))
    W = np.stack([(np.eye(2) - K[i]) @ np.linalg.inv(example_fed.H[i]) for i in range(3)])
    rhs9 = np.einsum("m,mij,mj->i", example_fed.weights, W, example_fed.grad_at_star)
    np.testing.assert_allclose(pg, [-0.0056228851, 0.1994988571], atol=5e-11)
    np.testing.assert_allclose(rhs9, pg, atol=1e-14)
    pg0 = to_np(exact.pseudo_gradient(fed, xp.zeros(2, dtype=xp.float64), eta=0.1, tau=5, precond=P))
    assert np.linalg.norm(pg0) == pytest.approx(0.31555, abs=5e-6)
    c = exact.assumption_constants(example_fed, eta=0.1, tau=5, precond=JACOBI)  # a host computation
    np.testing.assert_allclose(c.h, [0.52478, 0.34868, 0.54838], atol=5e-6)


@pytest.mark.parametrize("correction, alpha", [("none", 1.0), ("local", 0.5), ("joint", 0.5)])
def test_closed_form_equals_simulated_local_steps(example_fed, correction, alpha, xp):
    """Worked example (a): 300 simulated rounds from 0 reach the closed form to round-off."""
    fed, P = on_backend(example_fed, xp), xp.asarray(JACOBI)
    xs = _simulate_rounds(example_fed, 0.1, 5, JACOBI, alpha, correction, 300)
    xf = exact.fixed_point(fed, eta=0.1, tau=5, precond=P, correction=correction).x
    np.testing.assert_allclose(xs, to_np(xf), atol=1e-14)
    rmap = exact.round_map(fed, eta=0.1, tau=5, alpha=alpha, precond=P, correction=correction)
    np.testing.assert_allclose(to_np(rmap.after(xp.zeros(2, dtype=xp.float64), 7)),
                               _simulate_rounds(example_fed, 0.1, 5, JACOBI, alpha, correction, 7), atol=1e-14)


def test_bias_table_and_slopes(example_fed, xp):
    """Worked example, bias against eta: the uncorrected bias tends to 0.46052; the corrected one ≈ 0.2306 eta."""
    fed, P, xs = on_backend(example_fed, xp), xp.asarray(JACOBI), example_fed.x_star
    table = {0.2: (0.5454, 5.235e-2), 0.1: (0.5017, 2.471e-2), 0.01: (0.4645, 2.323e-3), 0.001: (0.4609, 2.307e-4), 1e-4: (0.4606, 2.306e-5)}
    for eta, (b0, b1) in table.items():
        x0 = to_np(exact.fixed_point(fed, eta=per_client(eta), tau=5, precond=P).x)
        x1 = to_np(exact.fixed_point(fed, eta=per_client(eta), tau=5, precond=P, correction="local").x)
        assert np.linalg.norm(x0 - xs) == pytest.approx(b0, abs=5e-5)
        assert np.linalg.norm(x1 - xs) == pytest.approx(b1, rel=5e-4)
    lim = to_np(exact.small_eta_limit(fed, tau=5, precond=P))
    assert np.linalg.norm(lim - xs) == pytest.approx(0.4605240451, abs=1e-10)
    # the first-order formula predicts x^ - x* at eta = 1e-3 to within 1.8e-7 (spec) -- O(eta^2)
    fo = to_np(exact.first_order_bias(fed, eta=1e-3, tau=5, precond=P))
    x1 = to_np(exact.fixed_point(fed, eta=1e-3, tau=5, precond=P, correction="local").x)
    assert np.linalg.norm(x1 - xs - fo) < 2e-7


def test_plain_gd_bias_is_first_order_and_correction_changes_nothing(example_fed, xp):
    """Worked example (b): P_i = I, tau = 5: ||x~ - x*|| ≈ 2.827 eta; local correction is a common scalar."""
    fed = on_backend(example_fed, xp)
    for eta, b in [(0.1, 0.2950), (0.01, 0.02856), (0.001, 0.002830)]:
        xt = to_np(exact.fixed_point(fed, eta=per_client(eta), tau=5).x)
        assert np.linalg.norm(xt - example_fed.x_star) == pytest.approx(b, abs=5e-5)
        np.testing.assert_allclose(to_np(exact.fixed_point(fed, eta=per_client(eta), tau=5, correction="local").x), xt, atol=1e-13)
    fo = to_np(exact.first_order_bias(fed, eta=1.0, tau=5, correction="none"))
    np.testing.assert_allclose(fo, [-0.08634, -2.82568], atol=5e-6)


def test_tau_one_and_ideal_preconditioners(example_fed, xp):
    """Worked example (c), (d): tau_i = 1 makes x^ = x* exactly; P_i = H_i^{-1} gives x~ = sum w_i x_i* and x^ = x*."""
    fed, P, xs = on_backend(example_fed, xp), xp.asarray(JACOBI), example_fed.x_star
    fp = lambda **kw: to_np(exact.fixed_point(fed, **kw).x)
    np.testing.assert_allclose(fp(eta=0.1, tau=1, precond=P, correction="local"), xs, atol=1e-15)
    np.testing.assert_allclose(fp(eta=0.1, tau=1, precond=P), to_np(exact.small_eta_limit(fed, tau=1, precond=P)), atol=1e-14)
    Pid = xp.asarray(np.linalg.inv(example_fed.H))
    for eta, tau in [(0.5, 3), (1.0, 1), (0.3, 7)]:
        np.testing.assert_allclose(fp(eta=per_client(eta), tau=per_client(tau), precond=Pid), [0.3, 0.4], atol=1e-14)
        np.testing.assert_allclose(fp(eta=per_client(eta), tau=per_client(tau), precond=Pid, correction="local"), xs, atol=5e-16 * 4)
        kappa = (1 - eta) ** tau
        if kappa < 1:
            one = exact.round_map(fed, eta=per_client(eta), tau=per_client(tau), alpha=1 / (1 - kappa), precond=Pid, correction="joint")
            np.testing.assert_allclose(to_np(one(xp.asarray([5.0, -3.0]))), xs, atol=1e-12)


def test_heterogeneous_tau_non_vanishing_bias(example_fed, xp):
    """Worked example (e): tau = (1, 5, 10), P_i = I."""
    fed, xs = on_backend(example_fed, xp), example_fed.x_star
    tau = xp.asarray([1, 5, 10])
    for eta, b0, b1 in [(0.05, 0.5394, 0.1367), (0.01, 0.5040, 0.02392), (0.001, 0.4914, 0.002295)]:
        x0 = to_np(exact.fixed_point(fed, eta=per_client(eta), tau=per_client(tau)).x)
        x1 = to_np(exact.fixed_point(fed, eta=per_client(eta), tau=per_client(tau), correction="local").x)
        assert np.linalg.norm(x0 - xs) == pytest.approx(b0, abs=5e-5)
        assert np.linalg.norm(x1 - xs) == pytest.approx(b1, rel=5e-4)
    lim = to_np(exact.small_eta_limit(fed, tau=per_client(tau)))
    np.testing.assert_allclose(lim, [-0.1573604061, 0.9499637418], atol=5e-11)
    assert np.linalg.norm(lim - xs) == pytest.approx(0.48988, abs=5e-6)
    with pytest.raises(ProblemError, match="common N_i"):
        exact.first_order_bias(fed, eta=0.01, tau=per_client(tau), correction="none")


def test_spectral_radius_criterion(example_fed, xp):
    """rho(R) < 1 iff alpha < alpha_max, for each correction."""
    fed, P = on_backend(example_fed, xp), xp.asarray(JACOBI)
    for c in exact.CORRECTIONS:
        am = float(exact.alpha_max(fed, eta=0.1, tau=5, precond=P, correction=c))
        rho = lambda a: float(exact.round_map(fed, eta=0.1, tau=5, alpha=a, precond=P, correction=c).spectral_radius())
        assert rho(0.9 * am) < 1 < rho(1.1 * am)
        assert rho(am) == pytest.approx(1.0, abs=1e-12)


def test_invalid_inputs_are_named(example_fed):
    with pytest.raises(InputError, match="eta must be > 0"):
        exact.fixed_point(example_fed, eta=0.0, tau=5)
    with pytest.raises(InputError, match="tau must be >= 1"):
        exact.fixed_point(example_fed, eta=0.1, tau=0)
    with pytest.raises(InputError, match="precond must be positive definite"):
        exact.fixed_point(example_fed, eta=0.1, tau=5, precond=-JACOBI)
    with pytest.raises(InputError, match="precond must be symmetric"):
        exact.fixed_point(example_fed, eta=0.1, tau=5, precond=JACOBI + np.array([[0, 1], [0, 0]]))
    with pytest.raises(ValueError, match="correction must be one of"):
        exact.fixed_point(example_fed, eta=0.1, tau=5, correction="global")
    with pytest.raises(InputError, match="alpha"):
        exact.round_map(example_fed, eta=0.1, tau=5, alpha=-1.0)


# ------------------------------------------------------------------ metamorphic, hypothesis
@st.composite
def instances(draw):
    M = draw(st.integers(2, 5))
    d = draw(st.integers(1, 4))
    seed = draw(st.integers(0, 10_000))
    fed = flt.random_quadratic_federation(M=M, d=d, kappa=draw(st.floats(1.0, 50.0)), weights="dirichlet", seed=seed)
    rng = np.random.default_rng(seed)
    kind = draw(st.sampled_from(["identity", "diag", "inverse"]))
    P = {"identity": np.broadcast_to(np.eye(d), (M, d, d)).copy(),
         "diag": np.stack([np.diag(rng.uniform(0.1, 10, d)) for _ in range(M)]),
         "inverse": np.linalg.inv(fed.H)}[kind]
    lam_max = np.abs(np.linalg.eigvals(P @ fed.H)).max(-1)
    eta = rng.uniform(0.01, 0.99, M) / lam_max
    tau = rng.integers(1, 21, M)
    return fed, P, eta, tau


@given(instances(), st.sampled_from(exact.CORRECTIONS))
def test_fixed_point_is_the_limit_of_the_round_map(inst, correction):
    fed, P, eta, tau = inst
    am = exact.alpha_max(fed, eta=per_client(eta), tau=per_client(tau), precond=P, correction=correction)
    alpha = 0.9 * min(am, 1.0) if correction == "none" else 0.9 * am
    rmap = exact.round_map(fed, eta=per_client(eta), tau=per_client(tau), alpha=alpha, precond=P, correction=correction)
    rho = float(rmap.spectral_radius())
    assume(rho < 0.99)
    fp = exact.fixed_point(fed, eta=per_client(eta), tau=per_client(tau), precond=P, correction=correction)
    T = int(np.ceil(np.log(1e-13) / np.log(max(rho, 1e-3)))) + 50
    xT = rmap.after(np.zeros(fed.d), T)
    scale = 1 + np.linalg.norm(fp.x)
    assert np.linalg.norm(xT - fp.x) <= 1e-9 * scale
    assert float(fp.residual) <= 1e-10 * scale


@given(instances())
def test_permuting_or_splitting_clients_changes_nothing(inst):
    fed, P, eta, tau = inst
    base = exact.fixed_point(fed, eta=per_client(eta), tau=per_client(tau), precond=P).x
    perm = np.random.default_rng(0).permutation(fed.M)
    permuted = flt.QuadraticFederation(fed.H[perm], fed.x_opt[perm], fed.weights[perm])
    np.testing.assert_allclose(exact.fixed_point(permuted, eta=per_client(eta[perm]), tau=per_client(tau[perm]), precond=P[perm]).x, base, rtol=1e-9, atol=1e-9)
    # splitting client 0 into two copies with half the weight each is the same federation
    idx = np.r_[0, np.arange(fed.M)]
    w = fed.weights[idx].copy()
    w[:2] = fed.weights[0] / 2
    split = flt.QuadraticFederation(fed.H[idx], fed.x_opt[idx], w)
    np.testing.assert_allclose(exact.fixed_point(split, eta=per_client(eta[idx]), tau=per_client(tau[idx]), precond=P[idx]).x, base, rtol=1e-9, atol=1e-9)


@given(instances(), st.sampled_from(exact.CORRECTIONS))
def test_identical_client_optima_have_no_bias(inst, correction):
    fed, P, eta, tau = inst
    same = flt.QuadraticFederation(fed.H, np.broadcast_to(fed.x_opt[0], fed.x_opt.shape), fed.weights)
    x = exact.fixed_point(same, eta=per_client(eta), tau=per_client(tau), precond=P, correction=correction).x
    np.testing.assert_allclose(x, fed.x_opt[0], atol=1e-9 * (1 + np.abs(fed.x_opt[0]).max()))


@given(instances())
def test_corrected_operator_is_symmetric_positive_definite_and_both_routes_agree(inst):
    """N_i^{-1}(I - K_i) is SPD when eta_i lambda_max(P_i H_i) < 2."""
    fed, P, eta, tau = inst
    ops = exact.round_operators(fed, eta=per_client(eta), tau=per_client(tau), precond=P)  # K by powering: symmetry is not built in
    A = ops.Ninv @ (np.eye(fed.d) - ops.K)
    np.testing.assert_allclose(A, A.swapaxes(-1, -2), atol=1e-10 * np.abs(A).max())
    assert np.linalg.eigvalsh(0.5 * (A + A.swapaxes(-1, -2))).min() > 0
    eig = exact.local_operators(fed, eta=per_client(eta), tau=per_client(tau), precond=P)  # the eigenbasis route agrees
    np.testing.assert_allclose(eig.K, ops.K, atol=1e-10)
    np.testing.assert_allclose(eig.NinvImK, A, rtol=1e-8, atol=1e-10 * np.abs(A).max())


def _fixed_instance(M, d, seed, kind):
    """One instance of the kind `instances` draws, fixed (for the tests on every namespace)."""
    fed = flt.random_quadratic_federation(M=M, d=d, kappa=10.0, weights="dirichlet", seed=seed)
    rng = np.random.default_rng(seed)
    P = np.stack([np.diag(rng.uniform(0.1, 10, d)) for _ in range(M)]) if kind == "diag" else np.linalg.inv(fed.H)
    eta = rng.uniform(0.01, 0.99, M) / np.abs(np.linalg.eigvals(P @ fed.H)).max(-1)
    return fed, P, eta, rng.integers(1, 21, M)


@pytest.mark.parametrize("M, d, seed, kind", [(3, 2, 11, "diag"), (4, 3, 12, "inverse")])
def test_metamorphic_laws_on_fixed_instances(xp, M, d, seed, kind):
    """The hypothesis laws above on fixed instances, in every namespace: the fixed point is the round map's limit,
    permuting clients changes nothing, identical client optima have no bias."""
    fed, P, eta, tau = _fixed_instance(M, d, seed, kind)
    fx, Px, ex, tx = on_backend(fed, xp), xp.asarray(P), per_client(xp.asarray(eta)), per_client(xp.asarray(tau))
    for correction in exact.CORRECTIONS:
        am = float(exact.alpha_max(fx, eta=ex, tau=tx, precond=Px, correction=correction))
        alpha = 0.9 * min(am, 1.0) if correction == "none" else 0.9 * am
        rmap = exact.round_map(fx, eta=ex, tau=tx, alpha=alpha, precond=Px, correction=correction)
        rho = float(rmap.spectral_radius())
        assert rho < 0.995
        x = to_np(exact.fixed_point(fx, eta=ex, tau=tx, precond=Px, correction=correction).x)
        T = int(np.ceil(np.log(1e-13) / np.log(max(rho, 1e-3)))) + 50
        np.testing.assert_allclose(to_np(rmap.after(xp.zeros(d, dtype=xp.float64), T)), x, atol=1e-9 * (1 + np.linalg.norm(x)))
        same = on_backend(flt.QuadraticFederation(fed.H, np.broadcast_to(fed.x_opt[0], fed.x_opt.shape).copy(), fed.weights), xp)
        xs = to_np(exact.fixed_point(same, eta=ex, tau=tx, precond=Px, correction=correction).x)
        np.testing.assert_allclose(xs, fed.x_opt[0], atol=1e-9 * (1 + np.abs(fed.x_opt[0]).max()))
    perm = np.random.default_rng(0).permutation(M)
    permuted = on_backend(flt.QuadraticFederation(fed.H[perm], fed.x_opt[perm], fed.weights[perm]), xp)
    xp_ = exact.fixed_point(permuted, eta=per_client(xp.asarray(eta[perm])), tau=per_client(xp.asarray(tau[perm])),
                            precond=xp.asarray(P[perm])).x
    base = exact.fixed_point(fx, eta=ex, tau=tx, precond=Px).x
    np.testing.assert_allclose(to_np(xp_), to_np(base), rtol=1e-9, atol=1e-9)


def test_batched_equals_unbatched(xp):
    fed = on_backend(flt.random_quadratic_federation(M=3, d=2, batch=4, seed=4), xp)
    P = xp.asarray(np.broadcast_to(np.diag([0.5, 2.0]), (4, 3, 2, 2)).copy())
    eta = np.array([[0.05], [0.1], [0.02], [0.07]])
    xb = to_np(exact.fixed_point(fed, eta=per_client(xp.asarray(eta)), tau=per_client(xp.asarray([2, 4, 6])), precond=P).x)
    for b in range(4):
        xi = exact.fixed_point(fed.take(b), eta=float(eta[b, 0]), tau=per_client(xp.asarray([2, 4, 6])), precond=P[b, ...]).x
        np.testing.assert_allclose(xb[b], to_np(xi), rtol=1e-12)


def test_noise_moments_are_exact_against_monte_carlo(example_fed, xp):
    """E||x_t - x~||^2 from the moment recursion matches a Monte-Carlo estimate of local SGD."""
    fed = flt.QuadraticFederation(example_fed.H, example_fed.x_opt, example_fed.weights, sigma2=0.3)
    eta, tau, alpha, T = 0.1, 3, 0.7, 4
    fx = on_backend(fed, xp)
    xt = to_np(exact.fixed_point(fx, eta=per_client(eta), tau=per_client(tau)).x)
    mom = exact.noise_moments(fx, eta=per_client(eta), tau=per_client(tau), alpha=alpha, x0=xp.zeros(2, dtype=xp.float64), T=T)
    rng = np.random.default_rng(7)
    R = 40000
    x = np.zeros((R, 2))
    for _ in range(T):
        ys = np.repeat(x[:, None, :], 3, axis=1)
        for _ in range(tau):
            g = np.einsum("mij,rmj->rmi", fed.H, ys - fed.x_opt) + np.sqrt(0.3) * rng.normal(size=ys.shape)
            ys = ys - eta * g
        x = x - alpha * np.einsum("m,rmi->ri", fed.weights, x[:, None, :] - ys)
    err = ((x - xt) ** 2).sum(1)
    assert abs(err.mean() - float(to_np(mom.mse(xp.asarray(xt)))[-1])) < 4 * err.std() / np.sqrt(R)
    cov = to_np(exact.client_covariances(fx, eta=per_client(eta), tau=per_client(tau)))
    S = np.eye(2) - eta * fed.H
    direct = sum(eta**2 * np.linalg.matrix_power(S, j) @ (0.3 * np.eye(2)) @ np.linalg.matrix_power(S, j).swapaxes(-1, -2) for j in range(tau))
    np.testing.assert_allclose(cov, direct, atol=1e-15)


def test_cupy_backend_matches_numpy(xp, example_fed):
    fed = flt.QuadraticFederation(xp.asarray(example_fed.H), xp.asarray(example_fed.x_opt), xp.asarray(example_fed.weights))
    x = exact.fixed_point(fed, eta=0.1, tau=5, precond=xp.asarray(JACOBI), correction="joint").x
    np.testing.assert_allclose(to_numpy(x), [0.2746960047, 1.1375391711], atol=5e-11)


@given(instances(), st.floats(0.05, 1.0))
def test_tau_one_fedavg_is_gradient_descent_on_F(inst, alpha):
    """tau_i = 1, P_i = I, common eta: one FedAvg round is x - alpha eta grad F(x), for any server alpha."""
    fed, _, eta, _ = inst
    e = float(eta.min())
    x = np.random.default_rng(0).normal(size=(3, fed.d))
    rmap = exact.round_map(fed, eta=e, tau=1, alpha=alpha)
    np.testing.assert_allclose(rmap(x), x - alpha * e * fed.grad(x), atol=1e-12 * (1 + np.abs(x).max()))


@given(instances(), st.floats(1e-3, 1e3))
def test_rescaling_data_sizes_changes_nothing(inst, c):
    fed, P, eta, tau = inst
    sizes = np.arange(1.0, fed.M + 1)
    a = flt.QuadraticFederation(fed.H, fed.x_opt, flt.problems.weights_from_sizes(sizes))
    b = flt.QuadraticFederation(fed.H, fed.x_opt, flt.problems.weights_from_sizes(c * sizes))
    for corr in exact.CORRECTIONS:
        np.testing.assert_allclose(exact.fixed_point(b, eta=per_client(eta), tau=per_client(tau), precond=P, correction=corr).x,
                                   exact.fixed_point(a, eta=per_client(eta), tau=per_client(tau), precond=P, correction=corr).x, rtol=1e-12, atol=1e-12)


def test_small_eta_limit_refuses_a_singular_weighted_sum():
    """(8) needs sum_i w_i gamma_i tau_i P_i H_i invertible: a singular sum is a named ProblemError, and the fixed
    point runs off like 1/eta there (eta ||x~|| stays at 0.3534)."""
    from fltheory.problems import ProblemError

    H = np.array([[[5.0, -2.0], [-2.0, 1.0]], [[1.0, -2.0], [-2.0, 5.0]]])
    P = np.array([np.diag([1 / 3, 3.0]), np.eye(2)])
    fed = flt.QuadraticFederation(H, np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([0.5, 0.5]))
    with pytest.raises(ProblemError, match="needs it invertible"):
        exact.small_eta_limit(fed, tau=3, precond=P)
    for eta in (1e-4, 1e-5, 1e-6):   # eta ||x~|| -> sqrt(2) / 4 (x~ ~ -0.25 / eta (1, 1)), not 0
        fp = exact.fixed_point(fed, eta=eta, tau=3, precond=P)
        assert bool(fp.converges) and eta * np.linalg.norm(fp.x) == pytest.approx(2**0.5 / 4, rel=2e-3)
