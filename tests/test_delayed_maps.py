"""The exact moments by step maps (``delayed._linear_ring_moments``) against the step-by-step engine.

Random participation repeats one affine map on the moments at every step, and a schedule whose steps
repeat (a round robin; identical clients drawn in any order) repeats a few: the map driver builds
each map once from the images of scaled unit states and multiplies.  It must give the step-by-step
numbers to rounding on every backend, also where the offsets and the noise dwarf the unit states
(the case that broke a first version that differenced unit states: 0.8 % off).
"""
import numpy as np
import pytest

import fltheory as flt
from fltheory import delayed as D
from fltheory import schedules as S
from fltheory.papers.defedavg.events import iid_oracle
from conftest import on_backend, to_np

FIELDS = ("mean", "mse", "grad_sq", "gap", "cov", "lag_msd")


def both(monkeypatch, fn, *args, **kw):
    """``fn`` with the map driver, then step by step (the driver off)."""
    monkeypatch.setattr(D, "_LINEAR_DRIVER", True)
    fast = fn(*args, **kw)
    monkeypatch.setattr(D, "_LINEAR_DRIVER", False)
    slow = fn(*args, **kw)
    return fast, slow


def assert_same(fast, slow, rtol):
    for f in FIELDS:
        a, b = getattr(fast, f), getattr(slow, f)
        assert (a is None) == (b is None), f
        if a is not None:
            a, b = to_np(a), to_np(b)
            # a covariance E[yy^T] - m m^T is as exact as the second moments it comes from
            scale = max(np.max(np.abs(b)), np.max(to_np(slow.mse)) if f == "cov" else 0.0)
            assert np.max(np.abs(a - b)) <= rtol * scale, (f, np.max(np.abs(a - b)), scale)


@pytest.mark.parametrize("seed", range(4))
def test_random_participation_by_one_map_is_the_step_by_step_engine(xp, monkeypatch, seed):
    rng = np.random.default_rng(seed)
    M, d, L = int(rng.integers(1, 6)), int(rng.integers(1, 4)), int(rng.integers(1, 5))
    fed = on_backend(flt.random_quadratic_federation(M=M, d=d, seed=seed, sigma2=0.05, batch=2 if seed % 2 else None),
                     xp)
    p = rng.dirichlet(np.ones(L), size=M) if seed % 2 else rng.dirichlet(np.ones(L))
    part = D.RandomParticipation.with_replacement(N=M, n=int(rng.integers(1, 4))) if seed < 2 else \
        D.RandomParticipation.bernoulli(p=rng.uniform(0.2, 1.0, M), weights=to_np(fed.weights)[0] if seed % 2
                                        else to_np(fed.weights))
    kw = dict(local=D.LocalSGD(eta_local=0.05, K=3), eta=0.7, T=50, x0=xp.asarray(rng.normal(size=d)),
              participation=part, delay_probs=p, cov0=xp.asarray(0.1 * np.eye(d)), record_cov=True, record_lags=True)
    fast, slow = both(monkeypatch, D.random_participation_moments, fed, **kw)
    assert_same(fast, slow, 1e-12)


def test_large_offsets_lose_no_digits(monkeypatch):
    """Client optima 1e9, a start 1e13 away: the map's columns come from unit states scaled to the moments."""
    rng = np.random.default_rng(7)
    N = 50
    H = np.broadcast_to(np.diag([1e-3]), (N, 1, 1)).copy()
    fed = flt.QuadraticFederation(H, 1e9 * rng.normal(size=(N, 1)), np.full(N, 1 / N),
                                  noise_cov=np.full((N, 1, 1), 1e8))
    kw = dict(local=D.LocalSGD(eta_local=125.0, K=8), eta=2.0, T=40, x0=np.array([1.4e13]),
              participation=D.RandomParticipation.with_replacement(N=N, n=N), delay_probs=[0.5, 0.5])
    fast, slow = both(monkeypatch, D.random_participation_moments, fed, **kw)
    assert_same(fast, slow, 1e-10)


def test_repeating_schedules_by_their_maps_are_the_step_by_step_engine(xp, monkeypatch):
    fed = on_backend(flt.random_quadratic_federation(M=4, d=3, seed=1, sigma2=0.01), xp)
    local = D.LocalSGD(eta_local=0.05, K=2)
    fast, slow = both(monkeypatch, D.schedule_moments, fed, S.round_robin(N=4, S=2, T=120), local, eta=1.0,
                      x0=xp.zeros(3), record_cov=True, record_lags=True)
    assert_same(fast, slow, 1e-12)


def test_identical_clients_in_any_order_share_a_map(monkeypatch):
    """DeFedAvg-IID (identical clients, random delays, two timing seeds): the step labels ignore which of the
    identical clients a slot holds and in which order, so few maps serve the T steps."""
    a = np.array([1.0, 0.3])
    N, T = 6, 200
    fed = flt.QuadraticFederation(np.broadcast_to(np.diag(a), (N, 2, 2)).copy(), np.zeros((N, 2)), np.full(N, 1 / N),
                                  noise_cov=np.broadcast_to(0.01 * np.eye(2), (N, 2, 2)).copy())
    sched = iid_oracle(N=N, n=2, T=T, seeds=[3, 4], delay="uniform", lam=1)
    local = D.LocalSGD(eta_local=0.05, K=2)
    runs = local.affine(fed)
    kpos, r = D._gather_runs(runs, sched, fed, np)
    keys = D._step_keys(runs, r, kpos, sched, T)
    assert keys.shape == (T,) and 1 < keys.max() + 1 <= T // 4
    fast, slow = both(monkeypatch, D.schedule_moments, fed, sched, local, eta=0.8, x0=np.ones(2), record_lags=True)
    assert_same(fast, slow, 1e-12)
    # clients that differ are told apart: the labels of a heterogeneous federation on the same schedule are finer
    het = flt.random_quadratic_federation(M=N, d=2, seed=2, sigma2=0.01)
    runs_h = local.affine(het)
    kpos_h, r_h = D._gather_runs(runs_h, sched, het, np)
    assert D._step_keys(runs_h, r_h, kpos_h, sched, T).max() > keys.max()
