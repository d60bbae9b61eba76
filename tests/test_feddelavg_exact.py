"""FedDelAvg on quadratics as an exact affine period map."""
import numpy as np

from fltheory.validation import InputTypeError
import pytest
from hypothesis import given
from hypothesis import strategies as st

import fltheory as flt
from fltheory.backend import namespace, to_numpy
from fltheory.papers.feddelavg import exact, feddelavg
from fltheory.problems import ProblemError
from conftest import on_backend, to_np


@pytest.fixture(scope="module")
def quad():
    return flt.random_quadratic_federation(M=4, d=3, kappa=6, heterogeneity=2.0, weights="dirichlet", seed=3)


def one_period_by_hand(fed, z, *, eta, tau, Delta, alpha):
    """An independent period from an arbitrary (non-consensus) client state z (M, d)."""
    rho = np.asarray(fed.weights)
    g_held = rho @ z
    w = z.copy()
    for j in range(1, tau + 1):
        u = w - eta * np.einsum("mij,mj->mi", fed.H, w - fed.x_opt)
        if Delta >= 1 and j == Delta:
            w = alpha * g_held + (1 - alpha) * u
        elif Delta == 0 and j == tau:
            w = alpha * (rho @ u) + (1 - alpha) * u
        else:
            w = u
    return w


@pytest.mark.parametrize("Delta,alpha", [(0, 1.0), (0, 0.3), (2, 0.5), (5, 0.8), (5, 1.0)])
def test_period_map_from_arbitrary_state(quad, Delta, alpha, xp):
    z = np.random.default_rng(0).normal(size=(quad.M, quad.d))
    P = exact.period_map(on_backend(quad, xp), eta=0.07, tau=5, Delta=Delta, alpha=alpha)
    want = one_period_by_hand(quad, z, eta=0.07, tau=5, Delta=Delta, alpha=alpha)
    np.testing.assert_allclose(to_np(P(xp.asarray(z.reshape(-1)))).reshape(quad.M, quad.d), want, atol=1e-13)


def test_exact_trajectory_equals_simulation_batched(quad, xp):
    Deltas, alphas = xp.asarray([0, 1, 3, 5]), xp.asarray([[1.0], [0.45], [0.1]])
    kw = dict(eta=0.06, tau=5, Delta=Deltas, alpha=alphas, K=12, w_init=xp.asarray([1.0, -2.0, 0.5]))
    fed = on_backend(quad, xp)
    sim = feddelavg(fed, trajectory=True, output_set="all", **kw)
    ex = exact.exact_trajectory(fed, **kw)
    assert namespace(ex.clients) is xp and namespace(sim.w_periods) is xp
    np.testing.assert_allclose(to_numpy(ex.clients), to_numpy(sim.trajectory.w_clients)[..., ::5, :, :], rtol=0,
                               atol=1e-10)
    np.testing.assert_allclose(to_numpy(ex.w_bar), to_numpy(sim.w_periods), rtol=0, atol=1e-10)
    np.testing.assert_allclose(to_numpy(ex.losses), to_numpy(sim.losses), rtol=1e-10)


def test_fixed_point_and_rate_match_long_run(quad, xp):
    kw = dict(eta=0.06, tau=5, Delta=3, alpha=0.4)
    fed = on_backend(quad, xp)
    fp = exact.fixed_point(fed, **kw)
    assert float(fp.residual) < 1e-12
    clients = to_np(fp.clients)
    m = exact.period_map(fed, **kw)
    it = m.iterate_to_fixed_point(xp.zeros(m.n, dtype=xp.float64), tol=1e-13)
    np.testing.assert_allclose(to_np(it.x).reshape(quad.M, quad.d), clients, atol=1e-10)
    sim = feddelavg(fed, K=400, output_set="all", **kw)
    np.testing.assert_allclose(to_np(sim.w_periods)[-1], to_np(fp.w_bar), atol=1e-10)
    np.testing.assert_allclose(to_np(exact.asymptotic_gap(fed, **kw)), to_np(sim.losses)[-1] - to_np(sim.F_star), rtol=1e-7,
                               atol=1e-14)
    # the spectral radius is the observed geometric rate of the error
    ex = exact.exact_trajectory(fed, K=40, **kw)
    err = np.linalg.norm((to_np(ex.clients) - clients).reshape(41, -1), axis=-1)
    rate = (err[40] / err[20]) ** (1 / 20)
    assert abs(rate - float(fp.spectral_radius)) < 2e-3


def test_fedavg_tau1_has_no_bias(quad, xp):
    assert float(exact.asymptotic_gap(on_backend(quad, xp), eta=0.05, tau=1, Delta=0, alpha=1.0)) < 1e-20


def test_alpha1_delta_tau_minus_1_is_gd_per_period(quad, xp):
    """alpha = 1, Delta = tau - 1: each period is one centralized GD step from w(k tau - Delta): no bias."""
    assert float(exact.asymptotic_gap(on_backend(quad, xp), eta=0.05, tau=6, Delta=5, alpha=1.0)) < 1e-20


def test_identical_clients_no_bias(xp):
    one = flt.random_quadratic_federation(M=1, d=2, seed=4)
    fed = flt.QuadraticFederation(np.repeat(one.H, 3, axis=0), np.repeat(one.x_opt, 3, axis=0), np.array([0.2, 0.3, 0.5]))
    g = exact.asymptotic_gap(on_backend(fed, xp), eta=0.1, tau=4, Delta=xp.reshape(xp.arange(4), (4, 1)),
                             alpha=xp.asarray([0.1, 0.5, 0.9]))
    assert g.shape == (4, 3) and float(xp.max(g)) < 1e-24


def test_unstable_raises(quad, xp):
    with pytest.raises(ProblemError, match="spectral radius .* >= 1"):
        exact.fixed_point(on_backend(quad, xp), eta=5.0, tau=3, Delta=1, alpha=0.5)
    with pytest.raises(ProblemError, match="spectral radius"):
        exact.fixed_point(on_backend(quad, xp), eta=0.05, tau=3, Delta=3, alpha=1.0)  # the model never moves
    with pytest.raises(InputTypeError, match="fed must be a QuadraticFederation"):
        exact.period_map(object(), eta=0.1, tau=2, Delta=1, alpha=0.5)
    with pytest.raises(ProblemError, match="Delta <= tau"):
        exact.period_map(quad, eta=0.1, tau=2, Delta=3, alpha=0.5)


@pytest.mark.parametrize("objective", ["gap", "rate"])
def test_exact_optimal_alpha_minimises_on_fine_grid(quad, objective, xp):
    Deltas = xp.asarray([0, 2, 4, 5, 6])
    fed = on_backend(quad, xp)
    opt = exact.exact_optimal_alpha(fed, eta=0.05, tau=6, Delta=Deltas, objective=objective)
    value, alpha = to_np(opt.value), to_np(opt.alpha)
    fine = np.linspace(1e-3, 1.0, 4001)
    pen = exact.period_pencil(fed, eta=0.05, tau=6, Delta=Deltas)
    vals = to_np(exact._objective(pen, fed, xp.asarray(fine[:, None]), objective, xp))  # (G, nDelta)
    assert np.all(value <= vals.min(axis=0) * (1 + 1e-9) + 1e-15)
    assert np.all((alpha > 0) & (alpha <= 1))
    # the reported value is the objective at the reported alpha
    again = exact._objective(pen, fed, opt.alpha, objective, xp)
    np.testing.assert_allclose(to_np(again), value, rtol=1e-9, atol=1e-15)


def test_gap_optimal_alpha_can_be_interior(xp):
    """An instance (found by search) where the exact gap-optimal alpha lies strictly inside (0, 1)."""
    fed = on_backend(flt.random_quadratic_federation(M=4, d=3, kappa=20, heterogeneity=3.0, weights="dirichlet", seed=4), xp)
    opt = exact.exact_optimal_alpha(fed, eta=0.3 / float(fed.L), tau=10, Delta=7, objective="gap")
    assert 0.5 < float(opt.alpha) < 0.999
    assert float(opt.value) < 0.97 * float(opt.value_at_1)


def test_alpha_comparison(quad, xp):
    cmp = exact.alpha_comparison(on_backend(quad, xp), eta=0.05, tau=6, Deltas=[0, 3, 6], alpha_bound=[1.0, 0.7, 0.5])
    assert cmp.alpha_gap.shape == (3,) and cmp.alpha_bound.shape == (3,)
    gap = to_np(cmp.gap_at_alpha_gap)
    assert np.all(gap <= to_np(cmp.gap_at_alpha_bound) * (1 + 1e-12))
    assert np.all(gap <= to_np(cmp.gap_at_1) * (1 + 1e-12))
    assert np.all(to_np(cmp.rate_at_alpha_rate) <= to_np(cmp.rate_at_alpha_bound) + 1e-12)


@given(seed=st.integers(0, 10_000), M=st.integers(1, 4), d=st.integers(1, 3), tau=st.integers(1, 5), data=st.data())
def test_hypothesis_exact_equals_simulation(seed, M, d, tau, data):
    Delta = data.draw(st.integers(0, tau))
    alpha = data.draw(st.floats(0.01, 1.0))
    fed = flt.random_quadratic_federation(M=M, d=d, kappa=5, weights="dirichlet", heterogeneity=2.0, seed=seed)
    eta = data.draw(st.floats(0.05, 1.0)) / float(fed.L)
    kw = dict(eta=eta, tau=tau, Delta=Delta, alpha=alpha, K=4, w_init=np.ones(d))
    sim = feddelavg(fed, trajectory=True, **kw)
    ex = exact.exact_trajectory(fed, **kw)
    np.testing.assert_allclose(ex.clients, sim.trajectory.w_clients[::tau], rtol=0, atol=1e-10)


@pytest.mark.parametrize("seed, M, d, tau, Delta, alpha, u", [(0, 1, 1, 1, 0, 1.0, 0.5), (7, 3, 2, 4, 2, 0.3, 0.9),
                                                              (21, 4, 3, 5, 5, 0.05, 0.2)])
def test_exact_equals_simulation_on_fixed_instances(xp, seed, M, d, tau, Delta, alpha, u):
    """The hypothesis test above on three fixed instances, on every namespace."""
    fed = on_backend(flt.random_quadratic_federation(M=M, d=d, kappa=5, weights="dirichlet", heterogeneity=2.0, seed=seed), xp)
    kw = dict(eta=u / float(fed.L), tau=tau, Delta=Delta, alpha=alpha, K=4, w_init=xp.ones(d, dtype=xp.float64))
    sim = feddelavg(fed, trajectory=True, **kw)
    ex = exact.exact_trajectory(fed, **kw)
    np.testing.assert_allclose(to_np(ex.clients), to_np(sim.trajectory.w_clients)[::tau], rtol=0, atol=1e-10)


def test_alpha_comparison_uses_bound_alpha_star_when_present(quad, xp):
    bounds = pytest.importorskip("fltheory.papers.feddelavg.bounds")
    cmp = exact.alpha_comparison(on_backend(quad, xp), eta=0.02 / float(quad.L), tau=10, Deltas=[0, 5, 9])
    assert namespace(cmp.alpha_gap) is xp
    want = bounds.alpha_star(eta=0.02 / float(quad.L), beta=float(quad.L), L=to_numpy(cmp.L), delta=to_numpy(cmp.delta),
                             tau=10, Delta=np.array([0, 5, 9]))
    np.testing.assert_allclose(to_numpy(cmp.alpha_bound), want)
    assert float(cmp.alpha_bound[0]) == 1.0  # Delta = 0 -> alpha* = 1
    # exactly optimal alphas: at least as good as alpha* and as alpha = 1 (golden-section search on the backend)
    gap = to_numpy(cmp.gap_at_alpha_gap)
    assert np.all(gap <= to_numpy(cmp.gap_at_alpha_bound) * (1 + 1e-12)) and np.all(gap <= to_numpy(cmp.gap_at_1) * (1 + 1e-12))
    assert np.all(to_numpy(cmp.rate_at_alpha_rate) <= to_numpy(cmp.rate_at_alpha_bound) + 1e-12)
    assert np.all(to_numpy(cmp.gap_at_alpha_gap <= cmp.gap_at_alpha_bound * (1 + 1e-12)))


def test_exact_optimal_alpha_says_when_the_infimum_is_not_attained():
    """The rate can keep falling as alpha -> 0 (the search stops at its floor), and with Delta = tau the gap's
    infimum is approached as alpha -> 1 while alpha = 1 itself is worse: both are marked not attained."""
    import fltheory as flt
    from fltheory.papers.feddelavg import exact as E

    q = flt.random_quadratic_federation(M=3, d=2, kappa=5, seed=0)
    rate = E.exact_optimal_alpha(q, eta=1.0 / float(q.L), tau=4, Delta=np.array([0, 2]), objective="rate")
    assert to_numpy(rate.attained).tolist() == [True, False]
    a = float(to_numpy(rate.alpha)[1])
    assert a <= 5.1e-4 and float(E.spectral_radius(q, eta=1.0 / float(q.L), tau=4, Delta=2, alpha=1e-4)) < \
        float(to_numpy(rate.value)[1])   # the objective is still falling below the floor
    gap = E.exact_optimal_alpha(q, eta=0.1 / float(q.L), tau=4, Delta=np.array([2, 4]), objective="gap")
    assert to_numpy(gap.attained).tolist() == [True, False]
    assert float(to_numpy(gap.alpha)[1]) > 1 - 1e-6 and float(to_numpy(gap.value_at_1)[1]) > float(to_numpy(gap.value)[1])
