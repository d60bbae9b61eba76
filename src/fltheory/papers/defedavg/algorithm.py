r"""Batched simulators of DeFedAvg and its baselines, driven by schedules.

Problem class: quadratic clients :math:`F_i(w)=\frac12(w-w_i^*)^\top H_i(w-w_i^*)` with additive
Gaussian gradient noise (:class:`fltheory.QuadraticFederation`; the paper's :math:`\sigma^2` is the
trace of the noise covariance), and the non-linear clients of the paper's experiments in miniature:
multinomial logistic regression (:class:`fltheory.problems_logistic.LogisticFederation`, e.g. the digits toy of
:func:`fltheory.datasets.digits_federation`) and pseudo-Huber clients
(:class:`fltheory.problems_nonquadratic.PseudoHuberFederation`), with optional additive noise ``sigma2 * I``.
Method (Wang, Li, Jin, Zhang, eq. (8)): every update is ``K`` local SGD steps with the local rate ``eta_bar`` from the server model it started from,
:math:`\Delta=w^{\tau}-w^{\tau,K}`, and the server applies
:math:`w^{t+1}=w^t-\eta\sum_u\text{weight}_u\Delta_u` (weights ``m/n`` for draws with replacement,
``1/n`` for the first ``n`` arrivals).  Which updates, from which models, is the schedule's business
(``events.py``): one simulator runs DeFedAvg-nIID, DeFedAvg-IID, FedBuff and synchronous FedAvg;
AsySG sends one stochastic gradient instead of a displacement (:func:`asysg`).

The simulation is the core's :func:`fltheory.delayed_simulation.simulate_schedule` on quadratics and
:func:`fltheory.delayed_simulation.simulate_schedule_general` on the other clients (configurations x seeds in
arrays, the same keyed noise).  :func:`fedavg_loop` is an independent per-round implementation of FedAvg
with client sampling (its sign fixed: :math:`w^{t+1}=w^t-\frac\eta n\sum(w^t-w_i^{t,K})`; the paper's (3)
prints the opposite sign, which steps away from the local models and diverges: check
``defedavg.fedavg_update``), which
the tests use for the reduction "DeFedAvg-nIID with zero delay is FedAvg".

Example
-------
>>> import numpy as np, fltheory as flt
>>> from fltheory.papers.defedavg import algorithm as A, events as E
>>> fed = flt.QuadraticFederation(np.tile(np.eye(2), (4, 1, 1)), np.zeros((4, 2)), sigma2=0.05)
>>> s = E.niid_oracle(N=4, n=2, T=50, delay="uniform", lam=2, seeds=[0, 1])
>>> r = A.defedavg(fed, s, K=2, eta=1.0, eta_bar=0.1, x0=np.ones(2))
>>> r.grad_sq.shape, bool(r.grad_sq[-1].max() < r.grad_sq[0].min())
((51, 2), True)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ... import validation as V
from ...backend import KeyedStream, to_numpy
from ...delayed import LocalSGD, client_draws, simulate_schedule, simulate_schedule_general
from ...problems import LogisticFederation, PseudoHuberFederation, QuadraticFederation
from ...schedules import Schedule

__all__ = ["DeFedAvgResult", "defedavg", "asysg", "fedavg_loop"]


@dataclass(frozen=True)
class DeFedAvgResult:
    """A simulated run: models ``w`` (T+1, B, d), ``grad_sq`` = ||grad F(w_t)||^2 (T+1, B), the
    running average ``avg_grad_sq[T'-1] = (1/T') sum_{t<T'} ||grad F(w_t)||^2`` (T, B), the
    wall-clock ``time`` (B, T) at which each step completes and the objective ``loss`` = F(w_t) (T+1, B)."""

    w: Any
    grad_sq: Any
    avg_grad_sq: Any
    time: Any
    schedule: Schedule | None = None
    loss: Any = None

    @property
    def diverged(self) -> np.ndarray:
        """(B,) the configurations whose models left the floating-point range."""
        with np.errstate(invalid="ignore"):
            return ~np.all(np.isfinite(np.asarray(self.w)), axis=(0, 2))


def _grad_sq(fed, w):
    g = np.einsum("ij,...j->...i", to_numpy(fed.Hbar), w - to_numpy(fed.x_star))
    return (g * g).sum(axis=-1)


_GENERAL = (LogisticFederation, PseudoHuberFederation)


def _result(fed, w, time, schedule=None) -> DeFedAvgResult:
    if isinstance(fed, QuadraticFederation):
        gs = _grad_sq(fed, w)
    else:
        g = to_numpy(fed.grad(fed.xp.asarray(w)))
        gs = (g * g).sum(axis=-1)
    avg = np.cumsum(gs[:-1], axis=0) / np.arange(1, gs.shape[0])[:, None] if gs.shape[0] > 1 else gs[:0]
    return DeFedAvgResult(w, gs, avg, time, schedule, to_numpy(fed.loss(fed.xp.asarray(w))))


def _simulate(fed, schedule, local, *, eta, x0, seed, sigma2) -> DeFedAvgResult:
    """The core's simulator for the federation's kind of clients, as a result with gradient norms."""
    if isinstance(fed, QuadraticFederation):
        if sigma2 is not None:
            raise V.InputError("sigma2 is for logistic and pseudo-Huber clients; a QuadraticFederation carries its "
                               "own noise (QuadraticFederation(..., sigma2=)), give sigma2=None")
        w = simulate_schedule(fed, schedule, local, eta=eta, x0=x0, seed=seed, return_trajectory=True)
    else:
        w = simulate_schedule_general(fed, schedule, local, eta=eta, x0=x0, seed=seed, sigma2=sigma2,
                                      returns="trajectory")
    return _result(fed, to_numpy(w), schedule.time, schedule)


def _check(fed, x0, general: bool = False):
    V.instance(fed, "fed", (QuadraticFederation,) + _GENERAL if general else QuadraticFederation)
    if fed.batch_shape:
        raise V.InputError(f"fed must be one federation (no batch axes); got batch {fed.batch_shape}")
    return V.array(x0, "x0", xp=np, ndim=1, shape=(fed.d,))


def defedavg(fed, schedule: Schedule, *, K: int, eta: float, eta_bar: float, x0, seed: int = 0,
             sigma2: float | None = None) -> DeFedAvgResult:
    """DeFedAvg (either variant; FedBuff and FedAvg with their schedules) on quadratic, logistic or
    pseudo-Huber clients.

    ``K`` local steps with rate ``eta_bar`` per update, server rate ``eta``; the noise is keyed by
    ``seed`` and (timing seed, step, slot, local step), the timing by the schedule.  A
    ``QuadraticFederation`` runs through the core's :func:`fltheory.delayed_simulation.simulate_schedule` and
    carries its own noise; a ``LogisticFederation`` or ``PseudoHuberFederation`` runs through
    :func:`fltheory.delayed_simulation.simulate_schedule_general`, with additive noise ``sigma2 * I`` if given.

    >>> from fltheory import problems, schedules
    >>> fed = problems.PseudoHuberFederation(b=[[0.0], [2.0], [4.0]], delta=1.0)        # x* = 2
    >>> s = schedules.first_n_arrivals(N=3, n=2, T=40, K=2, compute=np.array([1.0, 2.0, 3.0]))
    >>> r = defedavg(fed, s, K=2, eta=1.0, eta_bar=0.2, x0=np.array([8.0]))
    >>> r.loss.shape, bool(r.loss[-1, 0] < r.loss[0, 0])
    ((41, 1), True)
    >>> round(float(r.w[-1, 0, 0]), 1)        # first arrivals favour the fast client (b = 0): not x* = 2
    1.2
    """
    x0 = _check(fed, x0, general=True)
    V.instance(schedule, "schedule", Schedule)
    local = LocalSGD(eta_local=V.real(eta_bar, "eta_bar", low=0.0, open_low=True),
                     K=V.integer(K, "K", low=1, high=10**6))
    return _simulate(fed, schedule, local, eta=eta, x0=x0, seed=seed, sigma2=sigma2)


def asysg(fed, schedule: Schedule, *, eta: float, x0, seed: int = 0, sigma2: float | None = None) -> DeFedAvgResult:
    """AsySG: every update is one stochastic gradient at the model it started from (``K = 1``, no
    local rate), and the server applies ``w <- w - eta/n sum g`` (``schedule`` from
    :func:`fltheory.schedule_generators.first_n_arrivals` with ``K = 1``).  Clients and ``sigma2`` as in
    :func:`defedavg`."""
    x0 = _check(fed, x0, general=True)
    V.instance(schedule, "schedule", Schedule)
    local = LocalSGD(eta_local=1.0, K=1, output="gradient_sum")
    return _simulate(fed, schedule, local, eta=eta, x0=x0, seed=seed, sigma2=sigma2)


def fedavg_loop(fed, *, n: int, T: int, K: int, eta: float, eta_bar: float, x0, seeds=(0,), seed: int = 0):
    """Synchronous FedAvg with client sampling, written round by round (the reference).

    Each round draws ``n`` clients with replacement (:func:`fltheory.delayed_simulation.client_draws`), every
    distinct selected client runs ``K`` local SGD steps from ``w_t`` once, and
    ``w_{t+1} = w_t - (eta/n) sum_u (w_t - w_{j_u}^{t,K})`` with multiplicity.  The local noise uses
    the same keys as :func:`fltheory.delayed_simulation.simulate_schedule` on the schedule
    :func:`events.niid_oracle` builds (slots = the distinct clients in index order), so the two
    agree to round-off.  Returns the models (T+1, B, d).

    >>> import numpy as np, fltheory as flt
    >>> fed = flt.QuadraticFederation(np.tile(np.eye(1), (3, 1, 1)), np.zeros((3, 1)))
    >>> float(fedavg_loop(fed, n=2, T=2, K=1, eta=1.0, eta_bar=0.5, x0=np.ones(1))[-1, 0, 0])
    0.25
    """
    x0 = _check(fed, x0)
    n, T, K = V.integer(n, "n", low=1, high=10**5), V.integer(T, "T", low=0, high=10**6), V.integer(K, "K", low=1, high=10**6)
    eta, eta_bar = V.real(eta, "eta", low=0.0, open_low=True), V.real(eta_bar, "eta_bar", low=0.0, open_low=True)
    seed = V.integer(seed, "seed", low=0, high=2**63 - 1)
    seeds = V.array(seeds, "seeds", xp=np, kind="integer", low=0).reshape(-1)
    N, d, B = fed.M, fed.d, seeds.size
    draws = client_draws(seeds=seeds, T=T, N=N, n=n)
    U = max(1, max((len(set(draws[b, t].tolist())) for b in range(B) for t in range(T)), default=1))
    H, xo = np.asarray(fed.H), np.asarray(fed.x_opt)
    root = None
    if fed.noise_cov is not None:
        lam_, vec = np.linalg.eigh(np.asarray(fed.noise_cov))
        root = (vec * np.sqrt(np.clip(lam_, 0, None))[..., None, :]) @ vec.swapaxes(-1, -2)
    noise = KeyedStream(seed, "local noise")
    w = np.empty((T + 1, B, d))
    w[0] = x0
    for b in range(B):
        x = x0.copy()
        for t in range(T):
            chosen = sorted(set(draws[b, t].tolist()))
            step = np.zeros(d)
            for slot, i in enumerate(chosen):
                y = x.copy()
                for k in range(K):
                    g = H[i] @ (y - xo[i])
                    if root is not None:
                        z = noise.normal(config=np.array([[b]]), round=t, client=np.array([[slot + U * k]]), size=(d,))
                        g = g + root[i] @ z[0, 0]
                    y = y - eta_bar * g
                step += np.count_nonzero(draws[b, t] == i) * (x - y)
            x = x - eta / n * step
            w[t + 1, b] = x
    return w
