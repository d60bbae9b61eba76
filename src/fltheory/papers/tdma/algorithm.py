r"""Asynchronous FL over TDMA (Song & Hong, Algorithms 1 and 2): the batched simulator.

Problem class
-------------
Any federation with per-client gradients: :class:`fltheory.problems.QuadraticFederation` (mini-batch
noise as additive gradient noise of covariance ``noise_cov``) or
:class:`fltheory.problems_logistic.LogisticFederation` (true mini-batches of ``batch_size`` samples drawn
with replacement, or full local gradients).

Method
------
The schedule of :func:`~fltheory.papers.tdma.timing.tdma_schedule` says which ``S`` devices send
in round ``k`` and from which model ``w_{khat_n}`` they computed.  Each device runs ``H`` local
steps ``u_{h+1} = u_h - eta grad f_n(u_h; B_h)`` from ``u_0 = w_{khat_n}`` and sends the
pseudo-gradient ``sum_h grad f_n(u_h; B_h)`` (``H = 1``: one mini-batch gradient, the paper's
(11)); the server applies ``w_{k+1} = w_k - (eta/S) sum_{n in S_k} (pseudo-gradient of n)``, eqs.
(5), (11).  The paper's experiments use ``H > 1`` local steps without saying what is sent; the
pseudo-gradient is our reading (it reduces to (11) at ``H = 1``).

Batching: ``replicates`` independent runs advance together in arrays (the devices of a round too);
randomness is keyed by (seed, replicate, round, slot and local step), so a run does not depend on
the others.  On quadratics the simulator is :func:`fltheory.delayed_simulation.simulate_schedule` of the core,
whose exact moments (:mod:`~fltheory.papers.tdma.exact`) the tests compare with it.

Example
-------
>>> import numpy as np
>>> from fltheory.papers.tdma import algorithm, exact, timing
>>> fed = exact.tdma_quadratic(A=[1.0, 0.5], c=np.eye(2)[[0, 1, 0, 1]], sigma=0.5, B=2)
>>> tm = timing.tdma_schedule(N=4, S=2, tau_comp=3, r=1, K=30)
>>> run = algorithm.afl_tdma(fed, tm, eta=0.2, x0=np.zeros(2), replicates=4)
>>> run.loss.shape, run.slots[:3].tolist()        # f(w_k) - f* for k = 0..K; w_k exists from slot E_{k-1}
((31, 4), [0, 6, 9])
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ... import validation as V
from ...backend import KeyedStream, to_numpy
from ...delayed import LocalSGD, simulate_schedule
from ...problems import LogisticFederation, QuadraticFederation
from .timing import TDMATiming

__all__ = ["TDMARun", "afl_tdma"]


@dataclass(frozen=True)
class TDMARun:
    """A batched run: ``w`` (K+1, replicates, d) the global models; at the recorded rounds ``rounds``
    (every ``record_every``-th, and the last) ``loss`` (R, replicates) ``f(w_k) - f*``, ``grad_sq``
    ``||grad f(w_k)||^2`` and ``slots`` the slot from which ``w_k`` is available (0, then ``E_{k-1}``);
    and the ``timing`` that drove it."""

    w: Any
    loss: Any
    grad_sq: Any
    slots: np.ndarray
    timing: TDMATiming
    rounds: np.ndarray

    @property
    def diverged(self) -> np.ndarray:
        """Replicates whose models left the floating-point range."""
        return ~np.all(np.isfinite(self.w), axis=(0, 2))


def afl_tdma(fed, timing: TDMATiming, *, eta: float, x0, H: int = 1, batch_size: int | None = None,
             replicates: int = 1, seed: int = 0, record_every: int = 1) -> TDMARun:
    """Run asynchronous FL over TDMA along ``timing`` (see the module docstring).

    ``batch_size`` applies to a :class:`~fltheory.problems_logistic.LogisticFederation` (``None``: full local
    gradients); a quadratic federation carries its mini-batch noise in ``noise_cov``.  The loss and
    gradient norm (full-data evaluations) are recorded every ``record_every`` rounds and at the last.
    """
    V.instance(fed, "fed", (QuadraticFederation, LogisticFederation))
    V.instance(timing, "timing", TDMATiming)
    eta = V.real(eta, "eta", low=0.0, open_low=True)
    H = V.integer(H, "H", low=1, high=10**4)
    replicates = V.integer(replicates, "replicates", low=1, high=10**6)
    seed = V.integer(seed, "seed", low=0, high=2**63 - 1)
    record_every = V.integer(record_every, "record_every", low=1, high=10**9)
    if timing.N != fed.M:
        raise V.InputError(f"the timing has N={timing.N} devices but the federation has M={fed.M} clients")
    x0 = V.array(x0, "x0", ndim=1, shape=(fed.d,))
    K = timing.K
    V.check_size((K + 1) * replicates * fed.d, "the trajectory", xp=fed.xp, hint="use fewer replicates or rounds")
    slots = np.concatenate([[0], timing.end]).astype(np.int64)
    if isinstance(fed, QuadraticFederation):
        if batch_size is not None:
            raise V.InputError("batch_size applies to sample-based federations; a quadratic federation carries its "
                               "mini-batch noise in noise_cov (see exact.tdma_quadratic)")
        if fed.batch_shape:
            raise V.InputError("the federation must have no batch axis (replicates are the batch)")
        sched = timing.schedule.take([0] * replicates)
        w = to_numpy(simulate_schedule(fed, sched, LocalSGD(eta_local=eta, K=H, output="gradient_sum"), eta=eta, x0=x0,
                                       seed=seed, return_trajectory=True))
    else:
        if batch_size is not None:
            batch_size = V.integer(batch_size, "batch_size", low=1, high=10**6)
            V.check_size(replicates * fed.M * batch_size * (2 + fed.m + 2 * fed.n_classes),
                         f"the mini-batches of batch_size={batch_size} (replicates x M x batch_size samples, their "
                         "features and class scores, at every local step)",
                         hint="use a smaller batch_size (None: full local gradients) or fewer replicates")
            # measured: ~1e-6 s per drawn sample plus ~2.2e-8 s per sample and weight (m x n_classes)
            V.check_time(K * H * replicates * fed.M * batch_size * (1e-6 + 2.2e-8 * fed.m * fed.n_classes),
                         f"afl_tdma with batch_size={batch_size} over K={K} rounds",
                         hint="use a smaller batch_size (None: full local gradients), fewer rounds or replicates")
        w = _logistic_run(fed, timing, eta, x0, H, batch_size, replicates, seed)
    rounds = np.unique(np.append(np.arange(0, K + 1, record_every), K))
    f_star = fed.loss(fed.x_star)
    with np.errstate(all="ignore"):
        loss = to_numpy(fed.loss(fed.xp.asarray(w[rounds]))) - float(f_star)
        g = to_numpy(fed.grad(fed.xp.asarray(w[rounds])))
    return TDMARun(w, loss, (g**2).sum(-1), slots[rounds], timing, rounds)


def _logistic_run(fed: LogisticFederation, timing: TDMATiming, eta, x0, H, b, R_, seed):
    """The same recursion with true mini-batches: the ``S`` devices of a round and all replicates at once."""
    K, S, d, M = timing.K, timing.S, fed.d, fed.M
    lam = int(timing.staleness.max(initial=0)) + 1
    ring = np.broadcast_to(x0, (R_, lam, d)).copy()
    traj = np.empty((K + 1, R_, d))
    traj[0] = x0
    sizes = np.asarray(fed.sizes)
    draws = KeyedStream(seed, "tdma minibatch")
    reps = np.arange(R_)[:, None]
    for k in range(K):
        cl, lag = timing.clients[k], timing.staleness[k]
        u = ring[:, (k - lag) % lam]                                        # (R, S, d) anchors
        total = np.zeros_like(u)
        for h in range(H):
            W = np.broadcast_to(x0, (R_, M, d)).copy()
            W[:, cl] = u
            idx = None
            if b is not None:
                q = draws.uniform(config=reps[:, :, None], round=k, client=np.arange(M)[None, :, None] + M * h, size=(b,))
                idx = np.minimum((q.reshape(R_, M, b) * sizes[None, :, None]).astype(np.int64), sizes[None, :, None] - 1)
            g = np.asarray(fed.grad_clients(W, idx))[:, cl]                  # (R, S, d)
            total += g
            u = u - eta * g
        ring[:, (k + 1) % lam] = ring[:, k % lam] - eta / S * total.sum(1)
        traj[k + 1] = ring[:, (k + 1) % lam]
    return traj
