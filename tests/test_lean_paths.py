"""Memory-lean exact paths give the same numbers as the dense ones: the structured FedDelAvg period
map, the client-chunked Theorem 2 fixed point, the chunked alpha search, and the pencil built from
O(log tau) products."""
import numpy as np
import pytest

import fltheory as flt
from fltheory.linear import matrix_power
from fltheory.papers.feddelavg import exact as FE
from fltheory.papers.local_adaptivity import exact as LE


@pytest.mark.parametrize("M, d", [(5, 3), (40, 15)])          # 40*15 = 600 > 400 uses ARPACK
@pytest.mark.parametrize("Delta", [0, 1, 4])
@pytest.mark.parametrize("alpha", [1.0, 0.35])
def test_structured_period_equals_dense(M, d, Delta, alpha):
    fed = flt.random_quadratic_federation(M=M, d=d, seed=M + Delta, weights="dirichlet")
    sp = FE.StructuredPeriod(fed, eta=0.02, tau=5, Delta=Delta, alpha=alpha)
    dense = FE.period_map(fed, eta=0.02, tau=5, Delta=Delta, alpha=alpha)
    clients, wbar = sp.fixed_point()
    np.testing.assert_allclose(clients.reshape(-1), dense.fixed_point().x, atol=1e-12, rtol=1e-10)
    assert abs(sp.spectral_radius() - float(dense.spectral_radius())) < 1e-10


def test_fixed_point_switches_to_the_structured_form(monkeypatch):
    fed = flt.random_quadratic_federation(M=6, d=3, seed=2)
    eta = np.array([0.02, 0.05])
    dense_fp = FE.fixed_point(fed, eta=eta, tau=4, Delta=2, alpha=0.5)
    dense_gap = FE.asymptotic_gap(fed, eta=eta, tau=4, Delta=2, alpha=0.5)
    monkeypatch.setattr(FE, "DENSE_LIMIT", 10)
    assert FE._use_structured(fed, eta, 2, 0.5)
    fp = FE.fixed_point(fed, eta=eta, tau=4, Delta=2, alpha=0.5)
    np.testing.assert_allclose(fp.w_bar, dense_fp.w_bar, atol=1e-12)
    np.testing.assert_allclose(fp.spectral_radius, dense_fp.spectral_radius, atol=1e-10)
    np.testing.assert_allclose(FE.asymptotic_gap(fed, eta=eta, tau=4, Delta=2, alpha=0.5), dense_gap, rtol=1e-9)
    assert fp.converges.tolist() == [True, True]


def test_dense_period_map_refuses_at_once_with_the_alternative():
    import time

    H = np.tile(np.eye(200), (1000, 1, 1))
    fed = flt.QuadraticFederation(H, np.zeros((1000, 200)))
    t0 = time.perf_counter()
    with pytest.raises(flt.InputError, match="structured form"):
        FE.period_map(fed, eta=0.01, tau=10, Delta=5, alpha=0.5)
    assert time.perf_counter() - t0 < 20.0   # a liveness bound: refused up front (ms), not after the work (minutes)


@pytest.mark.parametrize("correction", ["none", "local", "joint"])
def test_chunked_theorem2_fixed_point_is_bitwise_the_same(monkeypatch, correction):
    fed = flt.random_quadratic_federation(M=9, d=3, seed=5, batch=2)
    P = np.stack([np.stack([np.diag(1 / np.diag(h)) for h in hb]) for hb in fed.H])
    eta, tau = np.array([[0.05], [0.1]]), flt.per_client(np.arange(1, 10) % 4 + 1)
    whole = LE.fixed_point(fed, eta=eta, tau=tau, precond=P, correction=correction)
    monkeypatch.setattr(LE, "CHUNK_LIMIT", 1)
    chunked = LE.fixed_point(fed, eta=eta, tau=tau, precond=P, correction=correction)
    assert np.array_equal(whole.x, chunked.x)
    assert np.array_equal(whole.converges, chunked.converges)


def test_chunked_optimal_alpha_is_the_same():
    fed = flt.random_quadratic_federation(M=3, d=2, seed=1, batch=30)
    eta, Delta = np.linspace(0.01, 0.2, 30), np.arange(30) % 6
    a = FE.exact_optimal_alpha(fed, eta=eta, tau=5, Delta=Delta, tol=1e-8)
    b = FE.exact_optimal_alpha(fed, eta=eta, tau=5, Delta=Delta, tol=1e-8, chunk_budget=10**5)
    assert np.array_equal(a.alpha, b.alpha) and np.array_equal(a.grid_values, b.grid_values)


def test_pencil_powers_do_not_list_every_step():
    """tau = 10^6 local steps: the pencil needs about 20 products, not 10^6 stored powers."""
    fed = flt.random_quadratic_federation(M=2, d=2, seed=3)
    eta, tau, Delta = 1e-6, 10**6, 3
    pen = FE.period_pencil(fed, eta=eta, tau=tau, Delta=Delta)
    step = np.eye(2) - eta * fed.H
    P_tau = np.stack([matrix_power(step[i], tau) for i in range(2)])
    np.testing.assert_allclose(pen.A0.reshape(2, 2, 2, 2)[[0, 1], :, [0, 1], :], P_tau, rtol=1e-10)
