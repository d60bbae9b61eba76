"""Exact dynamics of stale updates applied by a schedule: local runs, moment drivers, step maps.

Problem class
-------------
Quadratic clients ``F_i(x) = 1/2 (x - x_i*)^T H_i (x - x_i*)`` with additive gradient noise of
covariance ``Sigma_i`` (:class:`fltheory.problems.QuadraticFederation`).

Method
------
A server applies, at each step ``t``, updates that clients computed from older server models
(the :class:`fltheory.schedules.Schedule`)::

    x_{t+1} = x_t - eta * sum_u weight[t, u] * Delta_{client[t, u]}(x_{start[t, u]}).

``K`` local SGD steps from an anchor ``x`` with step ``eta_local`` are affine in the anchor:
``Delta_i(x) = P_i x + q_i + nu`` with ``P_i = I - (I - eta_local H_i)^K``,
``q_i = -P_i x_i*`` and ``Cov nu = eta_local^2 sum_{j<K} A_i^j Sigma_i A_i^j`` (``A_i = I - eta_local H_i``),
see :class:`LocalSGD`.  The method is therefore a time-varying affine map on the augmented state
``(x_t, x_{t-1}, ..., x_{t-lambda})``, and its mean and second moments are exact numbers.

The engine
----------
The register file :class:`~fltheory.delayed_registers.RegisterMoments` holds the exact means and
second moments ``E[y_a y_b^T]`` of a set of ``d``-dimensional registers (here the server models
of the last ``lambda + 1`` steps, ``y = x - x*``); one affine assignment touches one block row and
column, and random participation drawn i.i.d. each step
(:class:`~fltheory.delayed_registers.RandomParticipation`) is exact too.  It lives in
:mod:`fltheory.delayed_registers`, and both names are importable from here.

On top of it:

* :func:`schedule_moments` -- exact ``E||x_t - x*||^2``, ``E||grad F(x_t)||^2``,
  ``E F(x_t) - F*`` and the mean trajectory for every step of a (batched) schedule;
* :func:`random_participation_moments` -- the same, exact over i.i.d. client draws
  (:class:`~fltheory.delayed_registers.RandomParticipation`) and i.i.d. delays as well as over the gradient noise;
* :func:`step_maps` / :func:`period_map` -- the dense augmented affine map of each step and of
  a period of a periodic schedule (its spectral radius is the exact asymptotic rate, its fixed
  point the exact limit).

The simulated room -- the random schedules :func:`~fltheory.delayed_simulation.client_draws` and
:func:`~fltheory.delayed_simulation.sampled_schedule`, the batched Monte Carlo simulator
:func:`~fltheory.delayed_simulation.simulate_schedule` (keyed noise; the exact moments are tested
against it) and :func:`~fltheory.delayed_simulation.simulate_schedule_general` for clients with
non-linear gradients -- lives in :mod:`fltheory.delayed_simulation`; every one of its names is also
importable from here (``fltheory.delayed.simulate_schedule``), and ``__all__`` lists all three rooms.

Example
-------
>>> import numpy as np, fltheory as flt
>>> from fltheory import schedules, delayed
>>> fed = flt.random_quadratic_federation(M=4, d=3, seed=1, sigma2=0.01)
>>> sched = schedules.round_robin(N=4, S=2, T=200)              # staleness min(k, 1)
>>> local = delayed.LocalSGD(eta_local=0.05, K=2)
>>> m = delayed.schedule_moments(fed, sched, local, eta=1.0, x0=np.zeros(3))
>>> m.mse.shape                                   # E||x_t - x*||^2 for t = 0..T, one configuration
(201, 1)
>>> pm = delayed.period_map(fed, sched, local, eta=1.0, period=2, offset=10)
>>> round(float(pm.spectral_radius()[0]), 4)      # exact contraction per period of two steps
0.5823
>>> x_lim = pm.fixed_point().x[0, :3]             # the exact limit, biased away from x*
>>> bool(np.allclose(m.mean[-1, 0], x_lim)), bool(np.allclose(x_lim, fed.x_star, atol=0.05))
(True, False)
"""
from __future__ import annotations

import dataclasses
import warnings
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .backend import (
    asarray, copy_of, gather, matvec, to_numpy, trace, trace_product, weighted_sum,
)
from .delayed_registers import RandomParticipation, RegisterMoments
from .linear import AffineMap
from . import validation as V
from .schedules import Schedule, ScheduleError

__all__ = [
    "LocalSGD", "LocalRuns", "RegisterMoments", "RandomParticipation", "DelayedMoments", "schedule_moments",
    "random_participation_moments", "step_maps", "period_map", "simulate_schedule", "sampled_schedule",
    "client_draws", "simulate_schedule_general", "GENERAL_RETURNS",
]


# ======================================================================================
# affine local runs
# ======================================================================================
@dataclass(frozen=True)
class LocalRuns:
    """Per-client affine updates ``Delta_i(x) = P_i x + q_i + nu``, ``Cov nu = Q_i``.

    Arrays are ``(S, ..., M, d, d)`` / ``(S, ..., M, d)`` with a leading axis over the numbers
    of local steps ``Ks`` (``Ks[s]`` steps at index ``s``).
    """

    P: Any
    q: Any
    Q: Any
    Ks: tuple

    def index(self, K):
        """Positions along the leading axis of the runs with ``K`` local steps."""
        K = np.asarray(K)
        lookup = np.full(max(self.Ks) + 1, -1)
        lookup[list(self.Ks)] = np.arange(len(self.Ks))
        pos = lookup[np.clip(K, 0, max(self.Ks))]
        if np.any((pos < 0) | (K > max(self.Ks))):
            raise ScheduleError(f"local_steps uses K values {sorted(set(np.unique(K)) - set(self.Ks))} that the "
                                f"local runs do not have (Ks = {self.Ks})")
        return pos


_OUTPUT_SCALE = {  # factor applied to x_0 - x_K, given (eta_local, K)
    "displacement": lambda eta, K: 1.0,
    "gradient_sum": lambda eta, K: 1.0 / eta,
    "gradient_mean": lambda eta, K: 1.0 / (eta * K),
}


@dataclass(frozen=True)
class LocalSGD:
    """``K`` local SGD steps with step size ``eta_local`` from the anchor; the update sent is the
    displacement ``x_0 - x_K`` (``output="displacement"``, DeFedAvg's Delta), the sum of the
    local gradients ``(x_0 - x_K) / eta_local`` (``output="gradient_sum"``, the TDMA pseudo-gradient;
    with ``K = 1`` it is one stochastic gradient) or their average ``(x_0 - x_K) / (K eta_local)``
    (``output="gradient_mean"``, AFL-DGA's stored gradient).

    ``K`` may be a sequence: the runs are then built for each value (for schedules whose updates
    carry their own ``local_steps``).
    """

    eta_local: float
    K: Any = 1
    output: str = "displacement"

    def __post_init__(self):
        V.choice(self.output, "output", sorted(_OUTPUT_SCALE))
        object.__setattr__(self, "eta_local", V.real(self.eta_local, "eta_local", low=0.0, open_low=True))
        if isinstance(self.K, (str, bytes)) or np.ndim(self.K) > 1:
            raise V.InputTypeError(f"K must be an integer or a sequence of integers; got {V.shown(self.K)}")
        Ks = (self.K,) if np.ndim(self.K) == 0 else tuple(self.K)
        if not Ks:
            raise ScheduleError("K must hold at least one number of local steps")
        Ks = tuple(V.integer(k, "K", low=1, high=10**6) for k in Ks)
        object.__setattr__(self, "K", tuple(sorted(set(Ks))) if np.ndim(self.K) else Ks[0])

    @property
    def Ks(self) -> tuple:
        return self.K if isinstance(self.K, tuple) else (self.K,)

    def affine(self, fed) -> LocalRuns:
        """The exact affine runs on a quadratic federation (P, q, Q per client and per K)."""
        from .problems import QuadraticFederation  # noqa: PLC0415

        V.instance(fed, "fed", QuadraticFederation)
        xp = fed.xp
        H, d = fed.H, fed.d
        A = xp.eye(d) - self.eta_local * H
        Sig = fed.noise_cov
        Ak = copy_of(xp.broadcast_to(xp.eye(d), H.shape))
        noise = xp.zeros(H.shape)
        Ps, Qs = [], []
        for k in range(1, max(self.Ks) + 1):
            if Sig is not None:
                noise = noise + Ak @ Sig @ Ak
            Ak = Ak @ A
            if k in self.Ks:
                c = _OUTPUT_SCALE[self.output](self.eta_local, k)
                Ps.append(c * (xp.eye(d) - Ak))
                Qs.append((c * self.eta_local) ** 2 * noise)
        P, Q = xp.stack(Ps), xp.stack(Qs)
        q = -matvec(P, fed.x_opt)
        return LocalRuns(P, q, Q, self.Ks)


# ======================================================================================
# schedule-driven dynamics: exact
# ======================================================================================
@dataclass(frozen=True)
class DelayedMoments:
    """Exact moments along a schedule: ``mean`` ``(T+1, *batch, d)`` of ``x_t``; ``mse``, ``grad_sq``
    and ``gap`` ``(T+1, *batch)`` are ``E||x_t - x*||^2``, ``E||grad F(x_t)||^2`` and ``E F(x_t) - F*``;
    ``cov`` ``(T+1, *batch, d, d)`` when recorded; ``lag_msd`` ``(T+1, *batch, R)`` when recorded is
    ``E||x_t - x_{t-l}||^2`` for the lags ``l = 0..R-1`` of the ring (the drift of a stale model,
    with ``x_j = x_0`` for ``j < 0``).  ``diverged`` ``(*batch)`` marks the configurations whose moments left
    the floating-point range (the step size makes the method diverge there; their numbers are not
    moments); when every configuration diverges the call raises instead."""

    mean: Any
    mse: Any
    grad_sq: Any
    gap: Any
    cov: Any = None
    lag_msd: Any = None
    diverged: Any = None


def _ring_size(schedule: Schedule) -> int:
    return int(schedule.max_staleness.max(initial=0)) + 1 if schedule.T else 1


def _gather_runs(runs: LocalRuns, schedule: Schedule, fed, xp):
    """Positions of each update's K in the runs (or None) and the offsets ``r = P x* + q`` of
    ``Delta = P y + r`` in ``y = x - x*`` coordinates."""
    if schedule.local_steps is None:
        if len(runs.Ks) != 1:
            raise ScheduleError("the local runs hold several K values but the schedule has no local_steps")
        kpos = None
    else:
        kpos = runs.index(schedule.local_steps)
    r = runs.q + matvec(runs.P, fed.x_star[..., None, :])
    return kpos, r


def _step_arrays(schedule: Schedule, kpos, t: int, B: int):
    """Client, lag, weight, K position and validity of step t's slots, broadcast to (B, U)."""
    shape = (B, schedule.U)
    c = np.broadcast_to(schedule.client[:, t], shape)
    valid = c >= 0
    lag = np.broadcast_to(t - schedule.start[:, t], shape)
    w = np.where(valid, np.broadcast_to(schedule.weight[:, t], shape), 0.0)
    kk = np.zeros(shape, dtype=np.int64) if kpos is None else np.where(valid, np.broadcast_to(kpos[:, t], shape), 0)
    return np.where(valid, c, 0), lag, w, kk, valid


def _per_step_terms(runs, r, kpos, schedule, t, eta, xp, B, cfg_batch):
    """Coefficient matrices per distinct lag, offset and noise covariance of step t:
    ``lags`` (L,), (B, L, d, d), (B, d), (B, d, d)."""
    cc, lag, w, kk, valid = _step_arrays(schedule, kpos, t, B)
    if cfg_batch:
        bidx = np.arange(B)[:, None]
        Pg, rg, Qg = gather(runs.P, kk, bidx, cc), gather(r, kk, bidx, cc), gather(runs.Q, kk, bidx, cc)
    else:
        Pg, rg, Qg = gather(runs.P, kk, cc), gather(r, kk, cc), gather(runs.Q, kk, cc)
    lags = np.unique(lag[valid]) if valid.any() else np.zeros(0, dtype=np.int64)
    wl = xp.asarray(((lag[..., None] == lags) & valid[..., None]) * w[..., None])     # (B, U, L)
    wx = xp.asarray(w)
    if xp is np:
        G = np.einsum("bul,buij->blij", wl, Pg)
    else:   # sum over the slots u: (B, L, U) @ (B, U, d*d)
        d = Pg.shape[-1]
        G = xp.reshape(xp.permute_dims(wl, (0, 2, 1)) @ xp.reshape(Pg, Pg.shape[:2] + (d * d,)),
                       (wl.shape[0], wl.shape[2], d, d))
    b = weighted_sum(wx, rg)
    Q = weighted_sum(wx * wx, Qg, 2)
    return lags, -eta * G, -eta * b, eta * eta * Q


def _step_keys(runs: LocalRuns, r, kpos, schedule: Schedule, T: int) -> np.ndarray:
    """A label per step ``t < T`` (0, 1, ...), equal for two steps whose affine maps are equal: the same
    multiset of (client's runs, lag, weight, position of K) in every timing seed, clients whose runs
    ``(P, r, Q)`` are equal counted as one (host work on copies of the small run arrays)."""
    M = runs.P.shape[-3]
    rows = np.concatenate([np.moveaxis(to_numpy(a), axis, 0).reshape(M, -1)
                           for a, axis in ((runs.P, -3), (r, -2), (runs.Q, -3))], axis=1)
    _, cls = np.unique(rows, axis=0, return_inverse=True)
    client = np.asarray(schedule.client[:, :T, :])
    valid = client >= 0
    Bs, U = client.shape[0], client.shape[2]
    fields = [np.where(valid, np.asarray(cls).reshape(-1)[np.maximum(client, 0)], -1),
              np.where(valid, np.arange(T)[None, :, None] - schedule.start[:, :T, :], 0),
              np.where(valid, schedule.weight[:, :T, :], 0.0),
              np.where(valid, 0 if kpos is None else np.asarray(kpos)[:, :T, :], 0)]
    group = np.broadcast_to(np.arange(Bs * T).reshape(Bs, T, 1), client.shape)
    # the slots of each (seed, step) sorted by (client's runs, lag, weight, K): the last key of lexsort leads
    order = np.lexsort([f.reshape(-1) for f in reversed(fields)] + [group.reshape(-1)])
    slots = np.stack([f.reshape(-1)[order].astype(np.float64) for f in fields], axis=-1).reshape(Bs, T, U * 4)
    _, keys = np.unique(np.moveaxis(slots, 1, 0).reshape(T, -1), axis=0, return_inverse=True)
    return np.asarray(keys).reshape(-1)


def _check_types(fed, schedule, local):
    from .problems import QuadraticFederation  # noqa: PLC0415

    V.instance(fed, "fed", QuadraticFederation)
    V.instance(schedule, "schedule", Schedule)
    V.instance(local, "local", LocalSGD)
    if schedule.N != fed.M:
        raise ScheduleError(f"the schedule has N={schedule.N} clients but the federation has M={fed.M}")


def _refuse_shared_noise(fed, schedule, noisy=None):
    """Refuse a schedule that reuses stored updates when the gradients are noisy (``noisy``, or the
    federation's ``noise_cov`` is non-zero)."""
    if noisy is None:
        noisy = fed.noise_cov is not None and bool(fed.xp.any(fed.noise_cov != 0))
    if schedule.reuses_updates and noisy:
        raise ScheduleError(
            "this schedule applies one stored update at several steps (reuses_updates), so its gradient noise is "
            "shared across steps; the fresh-run dynamics here would draw it anew each step. Keep the stored "
            "updates as registers of RegisterMoments, or use a noise-free federation")


def _check_batch(fed, schedule):
    """The common batch size of a federation (at most one batch axis) and a schedule."""
    fb = fed.batch_shape
    if len(fb) > 1:
        raise ScheduleError(f"the federation may have at most one batch axis, got {fb}")
    Bs, Bf = schedule.B, (fb[0] if fb else 1)
    if Bs != Bf and 1 not in (Bs, Bf):
        raise ScheduleError(f"the federation batch ({Bf}) and the schedule batch ({Bs}) must match or one be 1")
    return max(Bs, Bf), bool(fb)


def schedule_moments(fed, schedule: Schedule, local: LocalSGD, *, eta: float, x0, cov0=None, T: int | None = None,
                     record_cov: bool = False, record_lags: bool = False) -> DelayedMoments:
    """Exact moments of ``x_{t+1} = x_t - eta * sum_u weight * Delta_{client}(x_{start})`` on quadratics.

    The schedule's batch (timing seeds) and the federation's batch (configurations) broadcast
    against each other (one of them may be 1).  ``x0`` is the common initial model (history
    before step 0 equals ``x0``); ``cov0`` an optional initial covariance.  The state is the ring
    of the last ``lambda + 1`` server models; each step is one :meth:`~fltheory.delayed_registers.RegisterMoments.assign`
    with the distinct lags of that step as sources (``O(lags * lambda * d^3)``).

    ``record_lags`` also records ``lag_msd[t, ..., l] = E||x_t - x_{t-l}||^2`` for every lag of
    the ring (the model drift that bounds on stale updates control).

    Reductions that the tests check: zero delay is synchronous FedAvg; a constant delay is the
    companion map of :func:`fltheory.linear.companion`; ``K = 1``, one client per step, no delay
    is gradient descent.
    """
    _check_types(fed, schedule, local)
    xp = fed.xp
    eta = V.real(eta, "eta", low=0.0, open_low=True)
    record_cov = V.flag(record_cov, "record_cov")
    record_lags = V.flag(record_lags, "record_lags")
    if schedule.N != fed.M:
        raise ScheduleError(f"the schedule has N={schedule.N} clients but the federation has M={fed.M}")
    T = schedule.T if T is None else V.integer(T, "T", low=0, high=schedule.T)
    _refuse_shared_noise(fed, schedule)
    B, cfg_batch = _check_batch(fed, schedule)
    V.check_size((T + 1) * B * fed.d * fed.d + B * (_ring_size(schedule.steps(T)) * fed.d) ** 2,
                 "the exact moments along the schedule", xp=fed.xp, hint="use fewer steps or configurations at a time")
    # measured: ~3.3e-4 s per step for d = 2 and a short ring (one Python step of small products)
    V.check_time(T * (3e-4 + 2e-9 * B * (_ring_size(schedule) * fed.d) ** 3),
                 f"the exact moments over T={T:,} steps of the schedule",
                 hint="use fewer steps (T=...), or period_map for the asymptotic rate and limit of a periodic "
                      "schedule")
    runs = local.affine(fed)
    kpos, r = _gather_runs(runs, schedule, fed, xp)
    d = fed.d
    R = _ring_size(schedule.steps(T)) if T else 1
    x_star = fed.x_star
    eye = xp.broadcast_to(xp.eye(d), (B, 1, d, d))

    def step(eng, t, cur, new):
        lags, G, b, Q = _per_step_terms(runs, r, kpos, schedule, t, eta, xp, B, cfg_batch)
        srcs = [cur] + [(t - int(l)) % R for l in lags]
        eng.assign([new], [srcs], xp.concat([eye, G], axis=1)[:, None, ...], b[:, None, ...], Q[:, None, ...])

    lag_msd = xp.zeros((T + 1, B, R)) if record_lags else None
    with np.errstate(over="ignore", invalid="ignore"):   # an overflow is reported as divergence below
        got = None
        if _LINEAR_DRIVER and T >= 8 and _maps_fit(R, fed.d, (B,)):
            keys = _step_keys(runs, r, kpos, schedule, T)
            if int(keys.max()) + 1 <= T // 4:            # steps repeat a few maps: one map per label
                got = _linear_ring_moments(fed, x0, cov0, R, (B,), T, step, lag_msd=lag_msd, keys=keys)
        means, blocks = got if got is not None else _ring_moments(fed, x0, cov0, R, (B,), T, step, lag_msd=lag_msd)
    out = _moments_result(fed, means, blocks, x_star, record_cov, eta)
    return out if lag_msd is None else dataclasses.replace(out, lag_msd=lag_msd)


def _ring_moments(fed, x0, cov0, R: int, batch: tuple, T: int, step, lag_msd=None):
    """Run ``step(engine, t, current_slot, new_slot)`` for t < T on a ring of ``R`` server models that
    all start at ``x0`` (y = x - x*, plus ``cov0``); return the means and second moments of x_t.
    A given ``lag_msd`` ``(T+1, *batch, R)`` is filled with ``E||x_t - x_{t-l}||^2``."""
    xp, d = fed.xp, fed.d
    y0 = xp.broadcast_to(V.array(x0, "x0", xp=xp, ndim=1, shape=(d,)) - fed.x_star, batch + (d,))
    second0 = y0[..., :, None] * y0[..., None, :]
    if cov0 is not None:
        second0 = second0 + V.array(cov0, "cov0", xp=xp, shape=(d, d))
    reps = (1,) * len(batch)
    eng = RegisterMoments(R, d, mean=xp.tile(y0, reps + (R,)), second=xp.tile(second0, reps + (R, R)), xp=xp)
    blocks = xp.empty((T + 1,) + batch + (d, d))
    means = xp.empty((T + 1,) + batch + (d,))
    blocks[0, ...], means[0, ...] = eng.block(0, 0), eng.register_mean(0)
    for t in range(T):
        cur, new = t % R, (t + 1) % R
        step(eng, t, cur, new)
        blocks[t + 1, ...], means[t + 1, ...] = eng.block(new, new), eng.register_mean(new)
        if lag_msd is not None:
            row = xp.reshape(eng.second[..., new * d:(new + 1) * d, :], batch + (d, R, d))
            nb = len(batch)
            # tr E[y_new y_a^T] and tr E[y_a y_a^T], a = 0..R-1
            cross = trace(xp.permute_dims(row, tuple(range(nb)) + (nb + 1, nb, nb + 2)))
            own = xp.sum(xp.reshape(xp.linalg.diagonal(eng.second), batch + (R, d)), axis=-1)
            lags = xp.asarray((new - np.arange(R)) % R)                  # register of x_{t+1-l}
            lag_msd[t + 1, ...] = (own[..., new:new + 1] + xp.take(own, lags, axis=-1)
                                   - 2 * xp.take(cross, lags, axis=-1))
    return means, blocks


_LINEAR_DRIVER = True      # the exact moments by step maps where it pays (False: step by step; the tests compare)
_LINEAR_STATE_MAX = 1200     # state coordinates (mean + upper triangle) the map driver builds at most


def _maps_fit(R: int, d: int, batch: tuple) -> bool:
    """Whether the step maps of a ring of ``R`` registers in ``R^d`` are small enough to build: ``D`` state
    coordinates (``n = R d`` means and ``n (n + 1) / 2`` second moments) at most ``_LINEAR_STATE_MAX``, and the
    ``D + 1`` images of a map at most 4e6 numbers per configuration batch."""
    n = R * d
    D = n + n * (n + 1) // 2
    return D <= _LINEAR_STATE_MAX and (D + 1) * (int(np.prod(batch)) if batch else 1) * n * n <= 4_000_000


def _linear_ring_moments(fed, x0, cov0, R: int, batch: tuple, T: int, step, lag_msd=None, keys=None):
    """:func:`_ring_moments` by step maps: for steps that repeat one of a few affine maps (up to the ring's
    rotation), as in :func:`random_participation_moments` (one map) or a schedule whose steps repeat; ``None``
    where the state is too large for it (the caller then goes step by step).

    ``keys`` (``T`` integers, default all 0) labels the steps: two steps with one label have the same map.
    The state ``z`` (the ring's means and the upper triangle of its second moments, in registers
    counted back from the newest: register ``k`` holds ``y_{t-k}``) moves by ``z <- A z + c``.  Each
    label's ``c`` and ``A`` come from ``step`` at its first step, applied to the zero state and to
    ``D`` unit states scaled to the size of the moments (a step is affine in the means and second
    moments jointly; see ``step_map``), so the cost is one step on ``D + 1`` states per label and
    ``T`` products by a ``D x D`` matrix, instead of ``T`` steps of small array calls
    (``benchmarks/bench_moment_maps.py``).  The numbers are those of the same arithmetic in another
    order: equal to the step-by-step driver to rounding (``tests/test_delayed_maps.py``).
    """
    xp, d = fed.xp, fed.d
    if not _maps_fit(R, d, batch) or T < 3:
        return None
    n = R * d
    iu0, iu1 = np.triu_indices(n)
    D = n + iu0.size
    keys = np.zeros(T, dtype=np.int64) if keys is None else np.asarray(keys)
    flat_upper = xp.asarray(iu0 * n + iu1)
    nbat = len(batch)
    # the start: every register y0 (history before step 0 is x0), second moments y0 y0^T + cov0
    y0 = xp.broadcast_to(V.array(x0, "x0", xp=xp, ndim=1, shape=(d,)) - fed.x_star, batch + (d,))
    second0 = y0[..., :, None] * y0[..., None, :]
    if cov0 is not None:
        second0 = second0 + V.array(cov0, "cov0", xp=xp, shape=(d, d))
    reps = (1,) * nbat
    S0 = xp.reshape(xp.tile(second0, reps + (R, R)), batch + (n * n,))
    z = xp.concat([xp.tile(y0, reps + (R,)), xp.take(S0, flat_upper, axis=-1)], axis=-1)

    def registers(t):   # the slots of registers y_{t-j}, j = 0..R-1, at step t, d coordinates each
        return np.concatenate([((t - j) % R) * d + np.arange(d) for j in range(R)])

    def flat_take(A, index):   # A[..., a, b] at the flat positions a n + b of ``index``: one gather, not two
        return xp.take(xp.reshape(A, tuple(A.shape[:-2]) + (n * n,)), xp.asarray(index), axis=-1)

    def image(t, mean, second):
        """The step at t of the states (canonical coordinates; leading axis: states), as z coordinates."""
        into = np.argsort(registers(t))              # slot order of the canonical registers at step t
        eng = RegisterMoments(R, d, mean=xp.take(mean, xp.asarray(into), axis=-1),
                              second=xp.reshape(flat_take(second, (into[:, None] * n + into[None, :]).reshape(-1)),
                                                second.shape), xp=xp)
        step(eng, t, t % R, (t + 1) % R)
        order = registers(t + 1)                     # canonical registers after the step: y_{t+1-j}
        return xp.concat([xp.take(eng.mean, xp.asarray(order), axis=-1),
                          flat_take(eng.second, order[iu0] * n + order[iu1])], axis=-1)   # its upper triangle

    def largest(v, lo, hi):   # max |v[..., lo:hi]| per configuration
        return xp.max(xp.abs(v[..., lo:hi]), axis=-1)

    def step_map(t):
        """``A`` (*batch, D, D) and ``c`` (*batch, D) of the step at ``t``: ``c`` is the image of the zero state,
        column ``j`` of ``A`` that of ``mu_j e_j`` less ``c``, over ``mu_j``.  ``mu_j`` is the scale of the
        moments (the start's and ``c``'s: ``mu`` for a mean, ``mu^2`` for a second moment), so that the
        difference loses no more digits than a step itself (with unit states, ``c`` of 1e18 against columns
        of 1 left none)."""
        c = image(t, xp.zeros((1,) + batch + (n,)), xp.zeros((1,) + batch + (n, n)))[0, ...]
        mu = xp.ones(batch)
        for v in (z, c):
            mu = xp.maximum(mu, xp.maximum(largest(v, 0, n), xp.sqrt(largest(v, n, D))))
        scale = xp.concat([xp.broadcast_to(mu[..., None], batch + (n,)),
                           xp.broadcast_to((mu * mu)[..., None], batch + (D - n,))], axis=-1)   # (*batch, D)
        unit = xp.permute_dims(scale, (nbat,) + tuple(range(nbat)))                            # (D, *batch)
        mean = xp.reshape(asarray(mean0, xp), (D,) + (1,) * nbat + (n,)) * unit[..., None]
        second = xp.reshape(asarray(sec0, xp), (D,) + (1,) * nbat + (n, n)) * unit[..., None, None]
        cols = (image(t, mean, second) - c) / unit[..., None]                                   # (D, *batch, D)
        return xp.permute_dims(cols, tuple(range(1, nbat + 2)) + (0,)), c

    # the unit states: e_j for the means, E_ab + E_ba for the upper triangle (scaled in step_map)
    mean0 = np.zeros((D, n))
    mean0[np.arange(n), np.arange(n)] = 1.0
    sec0 = np.zeros((D, n, n))
    k = n + np.arange(iu0.size)
    sec0[k, iu0, iu1] = 1.0
    sec0[k, iu1, iu0] = 1.0
    Z = xp.empty((T + 1,) + batch + (D,))
    Z[0, ...] = z
    maps: dict = {}
    for t in range(T):
        key = int(keys[t])
        if key not in maps:
            maps[key] = step_map(t)
        A, c = maps[key]
        z = matvec(A, z) + c
        Z[t + 1, ...] = z
    # read the outputs off the upper triangle: position of (a, b) in z
    pos = np.full((n, n), -1)
    pos[iu0, iu1] = n + np.arange(iu0.size)
    pos = np.where(pos >= 0, pos, pos.T)
    means = Z[..., :d]
    blocks = xp.reshape(xp.take(Z, xp.asarray(pos[:d, :d].reshape(-1)), axis=-1), (T + 1,) + batch + (d, d))
    if lag_msd is not None:   # E||y_t - y_{t-l}||^2 = tr S_00 + tr S_ll - 2 tr S_0l, register l = y_{t-l}
        ii = np.arange(d)
        coef = np.zeros((D, R))
        for l in range(R):
            np.add.at(coef[:, l], pos[ii, ii], 1.0)
            np.add.at(coef[:, l], pos[l * d + ii, l * d + ii], 1.0)
            np.add.at(coef[:, l], pos[ii, l * d + ii], -2.0)
        lag_msd[...] = Z @ asarray(coef, xp)
    return means, blocks


def _moments_result(fed, means, blocks, x_star, record_cov, eta) -> DelayedMoments:
    """Metrics from the second moments ``E[y y^T]`` (y = x - x*) and means of y along the steps; the
    configurations whose moments overflowed are marked ``diverged`` (all of them: an error naming eta)."""
    xp = fed.xp
    Hbar = fed.Hbar
    H2 = Hbar @ Hbar
    mse = trace(blocks)
    gsq = trace_product(H2, blocks)
    gap = 0.5 * trace_product(Hbar, blocks)
    cov = blocks - means[..., :, None] * means[..., None, :] if record_cov else None
    with np.errstate(invalid="ignore", over="ignore"):
        diverged = ~xp.all(xp.isfinite(mse), axis=0)
    if bool(xp.any(diverged)):
        bad = np.argwhere(np.asarray(to_numpy(diverged)).reshape(-1))[:, 0]
        first = int(np.argmax(~np.isfinite(to_numpy(mse)).reshape(mse.shape[0], -1)[:, bad[0]]))
        text = (f"the exact moments left the floating-point range (E||x_t - x*||^2 is not finite from step {first}): "
                f"the step size eta={eta:g} makes the method diverge on this federation")
        if bool(xp.all(diverged)):
            raise V.InputError(text + "; use a smaller eta")
        warnings.warn(f"{text} in {bad.size} configuration(s) ({bad[:5].tolist()}{'...' if bad.size > 5 else ''}), "
                      "marked in result.diverged", RuntimeWarning, stacklevel=3)
    return DelayedMoments(means + x_star, mse, gsq, gap, cov, None, diverged)


def random_participation_moments(fed, local: LocalSGD, *, eta: float, T: int, x0, participation: RandomParticipation,
                                 delay_probs=(1.0,), cov0=None, record_cov: bool = False,
                                 record_lags: bool = False) -> DelayedMoments:
    """Exact moments when each step draws its aggregation coefficients ``c`` (``participation``)
    and each client's delay ``D_i`` (``P(D_i = k) = delay_probs[k]``, or ``delay_probs[i, k]``)
    i.i.d. and independently of everything else: ``x_{t+1} = x_t - eta sum_i c_i Delta_i(x_{t - D_i})``
    (history before step 0 equals ``x0``).  Exact over the draws and the gradient noise; the test
    suite checks it against Monte Carlo of :func:`~fltheory.delayed_simulation.simulate_schedule` on
    :func:`~fltheory.delayed_simulation.sampled_schedule`.

    A client drawn several times in a step contributes one update (one delay, one noise) with its
    multiplicity, as in DeFedAvg-nIID.  ``record_cov`` also returns the covariance of every ``x_t``, and
    ``record_lags`` the ``lag_msd`` of :func:`schedule_moments` (``E||x_t - x_{t-l}||^2`` for ``l < L``;
    ``L = 2`` at least, so that ``E||x_{t+1} - x_t||^2`` is always there).
    """
    from .problems import QuadraticFederation  # noqa: PLC0415

    V.instance(fed, "fed", QuadraticFederation)
    V.instance(local, "local", LocalSGD)
    V.instance(participation, "participation", RandomParticipation)
    xp = fed.xp
    eta = V.real(eta, "eta", low=0.0, open_low=True)
    T = V.integer(T, "T", low=0, high=10**8)
    record_cov = V.flag(record_cov, "record_cov")
    record_lags = V.flag(record_lags, "record_lags")
    if len(local.Ks) != 1:
        raise ScheduleError("random participation needs one K")
    p = V.array(delay_probs, "delay_probs", xp=np, low=0.0)
    if p.ndim not in (1, 2) or np.any(p < 0) or not np.allclose(p.sum(axis=-1), 1.0):
        raise ScheduleError("delay_probs must be probabilities over delays 0..L-1 summing to 1 ((L,) or (N, L))")
    if p.ndim == 2 and p.shape[0] != fed.M:
        raise ScheduleError(f"per-client delay_probs need N = {fed.M} rows")
    if len(np.asarray(participation.u)) != fed.M:
        raise ScheduleError("participation must be over the federation's M clients")
    runs = local.affine(fed)
    P, Q = runs.P[0, ...], runs.Q[0, ...]
    L = p.shape[-1]
    R = L
    d = fed.d
    batch = fed.batch_shape
    x_star = fed.x_star
    V.check_size((T + 1) * int(np.prod(batch or (1,))) * d * d + int(np.prod(batch or (1,))) * (R * d) ** 2,
                 "the exact moments", xp=fed.xp)
    r = runs.q[0, ...] + (P @ x_star[..., None, :, None])[..., 0]        # Delta = P y + r, y = x - x*

    def step(eng, t, cur, new):
        eng.assign_random(new, cur, [(t - k) % R for k in range(L)], participation, p, P, r, Q, eta)

    if record_lags and R < 2:                       # keep x_{t-1} in the ring for the step length
        R = 2
    lag_msd = xp.zeros((T + 1,) + batch + (R,)) if record_lags else None
    with np.errstate(over="ignore", invalid="ignore"):   # an overflow is reported as divergence below
        got = _linear_ring_moments(fed, x0, cov0, R, batch, T, step, lag_msd=lag_msd) if _LINEAR_DRIVER else None
        means, blocks = got if got is not None else _ring_moments(fed, x0, cov0, R, batch, T, step, lag_msd=lag_msd)
    out = _moments_result(fed, means, blocks, x_star, record_cov, eta)
    return out if lag_msd is None else dataclasses.replace(out, lag_msd=lag_msd)


def step_maps(fed, schedule: Schedule, local: LocalSGD, *, eta: float, steps: Sequence[int] | None = None,
              lam: int | None = None) -> list[AffineMap]:
    """The dense affine map of each step on ``X_t = (x_t, x_{t-1}, ..., x_{t-lam})`` ((lam+1) d).

    ``x_{t+1} = (I - eta sum_{lag 0} w P) x_t - eta sum_{lag l} w P x_{t-l} - eta sum w q``, and the
    history shifts down.  For small problems and periodic schedules; the batch is the schedule's
    (or the federation's).
    """
    _check_types(fed, schedule, local)
    xp = fed.xp
    eta = V.real(eta, "eta", low=0.0, open_low=True)
    lam = int(schedule.max_staleness.max(initial=0)) if lam is None else V.integer(lam, "lam", low=0, high=10**4)
    if lam < int(schedule.max_staleness.max(initial=0)):
        raise ScheduleError(f"lam={lam} is smaller than the schedule's largest staleness")
    B, cfg_batch = _check_batch(fed, schedule)
    runs = local.affine(fed)
    kpos, r = _gather_runs(runs, schedule, fed, xp)
    d, n = fed.d, (lam + 1) * fed.d
    maps = []
    for t in (range(schedule.T) if steps is None else steps):
        lags, G, b_x, _ = _per_step_terms(runs, runs.q, kpos, schedule, t, eta, xp, B, cfg_batch)  # x coordinates
        A = xp.zeros((B, n, n))
        A[:, :d, :d] = xp.eye(d)
        for j, l in enumerate(lags):
            A[:, :d, int(l) * d:(int(l) + 1) * d] += G[:, j, ...]
        for j in range(lam):
            A[:, (j + 1) * d:(j + 2) * d, j * d:(j + 1) * d] = xp.eye(d)
        bb = xp.zeros((B, n))
        bb[:, :d] = b_x
        maps.append(AffineMap(A, bb))
    return maps


def period_map(fed, schedule: Schedule, local: LocalSGD, *, eta: float, period: int, offset: int = 0) -> AffineMap:
    """The composition of the step maps ``offset, ..., offset + period - 1``.

    For a schedule that repeats with this period from ``offset`` on (checked), its spectral
    radius is the exact asymptotic contraction per period and its fixed point
    ``(x, x, ..., x)``-shaped limit is the exact limit of the method (at that phase).
    """
    _check_types(fed, schedule, local)
    period = V.integer(period, "period", low=1, high=10**7)
    offset = V.integer(offset, "offset", low=0, high=10**9)
    eta = V.real(eta, "eta", low=0.0, open_low=True)
    if offset + 2 * period > schedule.T:
        raise ScheduleError(f"need period >= 1 and offset + 2*period <= T={schedule.T}")
    a = slice(offset, offset + period)
    b = slice(offset + period, offset + 2 * period)
    same = (np.array_equal(schedule.client[:, a], schedule.client[:, b])
            and np.array_equal(schedule.staleness[:, a], schedule.staleness[:, b])
            and np.array_equal(schedule.weight[:, a], schedule.weight[:, b]))
    if not same:
        raise ScheduleError(f"the schedule does not repeat with period={period} from step offset={offset}")
    return AffineMap.periodic(step_maps(fed, schedule, local, eta=eta, steps=range(offset, offset + period)))


# the simulated room, re-exported: ``fltheory.delayed.<name>`` and ``from fltheory.delayed import <name>`` keep
# working.  At the bottom, since it imports the engine above (the package imports this module first).
from .delayed_simulation import (  # noqa: E402
    GENERAL_RETURNS, client_draws, sampled_schedule, simulate_schedule, simulate_schedule_general,
)
