"""The Monte Carlo room of the stale-update dynamics: random schedules and the batched simulators.

Method
------
The method of :mod:`fltheory.delayed`: a server applies, at each step ``t``, updates that clients
computed from older server models (the :class:`fltheory.schedules.Schedule`)::

    x_{t+1} = x_t - eta * sum_u weight[t, u] * Delta_{client[t, u]}(x_{start[t, u]}),

each update ``K`` local SGD steps of its client (:class:`fltheory.delayed.LocalSGD`).  Here it is
run, not solved: actual local steps with keyed gradient noise, batched over timing seeds and
configurations.  The exact engine (:class:`fltheory.delayed_registers.RegisterMoments`,
:func:`fltheory.delayed.schedule_moments`, :func:`fltheory.delayed.random_participation_moments`,
the step and period maps) is :mod:`fltheory.delayed`, which also re-exports every name here
(``fltheory.delayed.simulate_schedule`` is this module's :func:`simulate_schedule`), and the tests
check the two rooms against each other.

Contents
--------
* :func:`client_draws` -- the keyed ``n`` uniform draws with replacement of every step, shared by
  :func:`sampled_schedule` and the event-driven DeFedAvg-nIID server;
* :func:`sampled_schedule` -- random participation with a delay oracle drawn i.i.d. per step: the
  random process whose expectation :func:`fltheory.delayed.random_participation_moments` computes;
* :func:`simulate_schedule` -- the batched Monte Carlo simulator on quadratic clients (keyed
  noise), which the exact moments are tested against;
* :func:`simulate_schedule_general` -- the same simulator for clients with non-linear gradients
  (logistic, pseudo-Huber, any federation with ``grad_clients``), with the same noise keys;
  ``GENERAL_RETURNS`` lists what it can return.

Example
-------
>>> import numpy as np, fltheory as flt
>>> from fltheory import delayed, delayed_simulation as S
>>> fed = flt.random_quadratic_federation(M=4, d=3, seed=1, sigma2=0.05)
>>> local = delayed.LocalSGD(eta_local=0.05, K=2)
>>> s = S.sampled_schedule(N=4, T=30, seeds=range(2000), n=2)       # 2 of 4 clients drawn per step
>>> x = S.simulate_schedule(fed, s, local, eta=1.0, x0=np.ones(3))  # the final model of every seed
>>> x.shape
(2000, 3)
>>> rp = delayed.random_participation_moments(fed, local, eta=1.0, T=30, x0=np.ones(3),
...                                           participation=delayed.RandomParticipation.with_replacement(N=4, n=2))
>>> exact = float(rp.mse[-1]); round(exact, 4)                 # E||x_30 - x*||^2, exact
0.2335
>>> bool(abs(np.mean(np.sum((x - fed.x_star) ** 2, axis=-1)) / exact - 1) < 0.1)   # Monte Carlo agrees
True
"""
from __future__ import annotations

import numpy as np

from .backend import KeyedStream, asarray, copy_of, gather, matvec, to_numpy, weighted_sum
from .problems import noise_sqrt, select_by_picking
from . import validation as V
from .schedules import Schedule, ScheduleError
from .delayed import (
    _OUTPUT_SCALE, LocalSGD, _check_batch, _check_types, _refuse_shared_noise, _ring_size, _step_arrays,
)

__all__ = ["client_draws", "sampled_schedule", "simulate_schedule", "simulate_schedule_general", "GENERAL_RETURNS"]


def client_draws(*, seeds, T: int, N: int, n: int):
    """The ``n`` uniform draws with replacement from ``N`` clients of every step, keyed by (seed, step):
    (B, T, n) client indices.  :func:`sampled_schedule` and the event-driven DeFedAvg-nIID server use
    these same draws, so a timing seed selects the same clients under every delay model.

    >>> client_draws(seeds=[0], T=2, N=5, n=3).shape
    (1, 2, 3)
    """
    seeds = V.array(seeds, "seeds", xp=np, kind="integer", low=0).reshape(-1)
    T, N = V.integer(T, "T", low=0, high=10**9), V.integer(N, "N", low=1, high=10**7)
    n = V.integer(n, "n", low=1, high=10**6)
    V.check_size(seeds.size * T * n, "the client draws")
    sd, rd = seeds[:, None, None], np.arange(T)[None, :, None]
    u = KeyedStream(0, "client draws").uniform(config=sd, round=rd, client=0, size=(n,)).reshape(seeds.size, T, n)
    return np.minimum((u * N).astype(np.int64), N - 1)


def sampled_schedule(*, N: int, T: int, seeds, n: int | None = None, p=None, weights=None,
                     delay_probs=(1.0,)) -> Schedule:
    """Random participation with a delay oracle, drawn i.i.d. per step from keyed streams (batched over ``seeds``).

    * ``n`` given: ``n`` uniform draws from ``N`` clients with replacement, a client drawn ``m`` times
      has weight ``m/n`` (DeFedAvg-nIID, FedAvg with client sampling);
    * ``p`` given: client ``i`` takes part with probability ``p_i`` and weight ``weights_i / p_i``.

    Each client's delay is drawn i.i.d. from ``delay_probs`` ((L,), or (N, L) per client) and its
    update starts from ``max(0, t - D)``.  This is the random process whose expectation
    :func:`~fltheory.delayed.random_participation_moments` computes exactly.
    """
    seeds = V.array(seeds, "seeds", xp=np, kind="integer", low=0).reshape(-1)
    N = V.integer(N, "N", low=1, high=10**7)
    T = V.integer(T, "T", low=0, high=10**9)
    pd = V.array(delay_probs, "delay_probs", xp=np, low=0.0)
    if pd.ndim not in (1, 2) or np.any(pd < 0) or not np.allclose(pd.sum(axis=-1), 1.0):
        raise ScheduleError("delay_probs must be probabilities ((L,) or (N, L)) summing to 1")
    if (n is None) == (p is None):
        raise ScheduleError("give exactly one of n (draws with replacement) or p (Bernoulli participation)")
    if n is not None:
        n = V.integer(n, "n", low=1, high=10**6)
    B = seeds.size
    V.check_size(B * T * max(N, n or 0), "the sampled schedule")
    sd, rd = seeds[:, None, None], np.arange(T)[None, :, None]
    if n is not None:
        draws = client_draws(seeds=seeds, T=T, N=N, n=n)
        counts = np.zeros((B, T, N))
        np.add.at(counts, (np.arange(B)[:, None, None], np.arange(T)[None, :, None], draws), 1.0)
        weight = counts / n
    else:
        pp = np.broadcast_to(V.array(p, "p", xp=np, low=0.0, open_low=True, high=1.0), (N,))
        from .problems import validate_weights  # noqa: PLC0415

        w = np.full(N, 1.0 / N) if weights is None else validate_weights(weights)
        u = KeyedStream(0, "participation").uniform(config=sd, round=rd, client=np.arange(N)[None, None, :])
        counts = (u < pp).astype(float)
        weight = counts * (w / pp)
    ud = KeyedStream(0, "delays").uniform(config=sd, round=rd, client=np.arange(N)[None, None, :])
    cdf = np.cumsum(np.broadcast_to(pd, (N, pd.shape[-1])), axis=-1)[:, :-1]           # (N, L-1)
    D = (ud[..., None] >= cdf).sum(axis=-1)
    client = np.where(counts > 0, np.arange(N), -1)
    start = np.where(counts > 0, np.maximum(0, np.arange(T)[None, :, None] - D), -1)
    # compact: occupied slots first (by client), as few slots as the busiest step needs
    order = np.argsort(counts == 0, axis=-1, kind="stable")
    U = max(int((counts > 0).sum(axis=-1).max(initial=0)), 1)
    take = lambda a: np.take_along_axis(a, order, axis=-1)[..., :U]  # noqa: E731
    return Schedule(take(client), take(start), take(weight), None, N, name="sampled participation")


def simulate_schedule(fed, schedule: Schedule, local: LocalSGD, *, eta: float, x0, seed: int = 0,
                      T: int | None = None, return_trajectory: bool = False):
    """Run the method of this module on a quadratic federation (Monte Carlo, keyed noise).

    Batched over the schedule's seeds and the federation's configurations (broadcast as in
    :func:`~fltheory.delayed.schedule_moments`); the local runs are actual local SGD steps with noise drawn from
    ``KeyedStream(seed, "local noise")`` keyed by (configuration, step, slot).  Returns the final
    models (B, d), or the whole trajectory (T+1, B, d).  Configurations whose models leave the floating-point range
    are named in a ``RuntimeWarning``; when every one does, the call raises an ``InputError`` naming ``eta`` and
    ``eta_local`` (there is nothing finite to return).
    """
    _check_types(fed, schedule, local)
    xp = fed.xp
    eta = V.real(eta, "eta", low=0.0, open_low=True)
    seed = V.integer(seed, "seed", low=0, high=2**63 - 1)
    return_trajectory = V.flag(return_trajectory, "return_trajectory")
    T = schedule.T if T is None else V.integer(T, "T", low=0, high=schedule.T)
    _refuse_shared_noise(fed, schedule)
    B, cfg_batch = _check_batch(fed, schedule)
    d, U = fed.d, schedule.U
    x0 = V.array(x0, "x0", xp=xp, ndim=1, shape=(d,))
    if return_trajectory:
        V.check_size((T + 1) * B * d, "the trajectory", xp=xp)
    R = _ring_size(schedule.steps(T)) if T else 1
    ring = xp.tile(xp.broadcast_to(asarray(x0, xp), (B, d))[:, None, :], (1, R, 1))
    H = xp.broadcast_to(fed.H, (B,) + fed.H.shape[-3:])
    xo = xp.broadcast_to(fed.x_opt, (B,) + fed.x_opt.shape[-2:])
    root = None if fed.noise_cov is None else _noise_root(fed.noise_cov, B, xp)
    noise = KeyedStream(seed, "local noise")
    bidx = np.arange(B)[:, None]
    slots = np.arange(U)[None, :]
    kpos = None if schedule.local_steps is None else schedule.local_steps
    traj = [copy_of(ring[:, 0, :])] if return_trajectory else None
    with np.errstate(over="ignore", invalid="ignore"):   # divergence is reported below, by name
        for t in range(T):
            cc, lag, w, Ks, valid = _step_local_runs(schedule, kpos, local, t, B)
            anchor = gather(ring, bidx, np.where(valid, (t - lag) % R, 0))    # (B, U, d)
            Hc, xc = gather(H, bidx, cc), gather(xo, bidx, cc)
            x = anchor
            for k in range(int(Ks.max(initial=0))):
                g = matvec(Hc, x - xc)
                if root is not None:
                    z = xp.asarray(noise.normal(config=bidx, round=t, client=slots + U * k, size=(d,)))
                    g = g + matvec(gather(root, bidx, cc), z)
                x = xp.where(xp.asarray(k < Ks)[..., None], x - local.eta_local * g, x)
            scale = _OUTPUT_SCALE[local.output](local.eta_local, np.maximum(Ks, 1))
            delta = (anchor - x) * xp.asarray(np.broadcast_to(scale, Ks.shape))[..., None]
            ring[:, (t + 1) % R, :] = ring[:, t % R, :] - eta * weighted_sum(xp.asarray(w), delta)
            if return_trajectory:
                traj.append(copy_of(ring[:, (t + 1) % R, :]))
    out = xp.stack(traj) if return_trajectory else copy_of(ring[:, T % R, :])
    _warn_diverged("simulate_schedule", xp.reshape(out, (-1, B, d)), xp, eta, local.eta_local)
    return out


def _noise_root(cov, B: int, xp):
    """The symmetric square roots (B, M, d, d) of the noise covariances (which may be singular)."""
    return noise_sqrt(xp.broadcast_to(cov, (B,) + cov.shape[-3:]), xp)


def _step_local_runs(schedule: Schedule, kpos, local: LocalSGD, t: int, B: int):
    """:func:`_step_arrays` of step t with the number of local steps of every slot (0 on empty slots)."""
    cc, lag, w, Ks, valid = _step_arrays(schedule, kpos, t, B)
    if kpos is None:
        Ks = np.where(valid, local.Ks[0], 0)
    elif not set(np.unique(Ks[valid])) <= set(local.Ks):
        raise ScheduleError(f"the schedule uses K values {sorted(set(np.unique(Ks[valid])))} outside {local.Ks}")
    return cc, lag, w, Ks, valid


def _warn_diverged(who: str, models, xp, eta: float, eta_local: float):
    """Warn (naming the configurations) when some of the models (..., B, d) are not finite; raise, naming the
    step sizes, when every configuration diverged (nothing finite is left to return)."""
    finite = to_numpy(xp.all(xp.isfinite(models), axis=(0, 2)))
    if not finite.all():
        bad = np.flatnonzero(~finite)
        if bad.size == finite.size:
            raise V.InputError(f"{who}: the models left the floating-point range in every configuration: the step "
                               f"sizes eta={eta:g}, eta_local={eta_local:g} make the method diverge on this "
                               f"federation; use a smaller eta or eta_local")
        import warnings  # noqa: PLC0415

        warnings.warn(f"{who}: configurations {bad[:10].tolist()} diverged (non-finite models); "
                      "eta or eta_local is too large for them, the others are unaffected", RuntimeWarning, stacklevel=3)


GENERAL_RETURNS = ("final", "trajectory", "loss")
_FEDERATION_API = ("grad_clients", "loss", "weights", "M", "d", "xp", "batch_shape")


def _check_general(fed, schedule, local):
    """A federation with one-point-per-client gradients, a schedule over its clients, a LocalSGD."""
    missing = [a for a in _FEDERATION_API if not hasattr(fed, a)]
    if missing:
        raise V.InputTypeError(f"fed must be a federation with grad_clients, loss, weights, M, d (e.g. "
                               f"LogisticFederation, PseudoHuberFederation); got {V.shown(fed)} without {missing}")
    V.instance(schedule, "schedule", Schedule)
    V.instance(local, "local", LocalSGD)
    if schedule.N != fed.M:
        raise ScheduleError(f"the schedule has N={schedule.N} clients but the federation has M={fed.M}")


def simulate_schedule_general(fed, schedule: Schedule, local: LocalSGD, *, eta: float, x0, seed: int = 0,
                              T: int | None = None, sigma2: float | None = None, returns: str = "final"):
    """Run the method of this module on clients with non-linear gradients (Monte Carlo, keyed noise).

    Problem class: any federation with ``grad_clients(X)`` (one point per client, ``X`` of shape
    ``(..., M, d)``), ``loss(x)``, ``weights``, ``M``, ``d`` -- :class:`fltheory.problems_logistic.LogisticFederation`,
    :class:`fltheory.problems_nonquadratic.PseudoHuberFederation`, :class:`fltheory.problems.QuadraticFederation`
    -- with optional additive gradient noise: the federation's own ``noise_cov`` where it has one,
    else ``sigma2`` (noise ``sigma2 * I`` on every client, as ``QuadraticFederation(..., sigma2=)``).

    Method: exactly :func:`simulate_schedule`'s, ``x_{t+1} = x_t - eta sum_u weight[t, u]
    Delta_u`` with ``Delta_u = c (y_0 - y_K)``, ``y_0 = x_{start[t, u]}`` and ``K`` local steps
    ``y_{k+1} = y_k - eta_local (grad F_i(y_k) + nu_k)`` of the update's client ``i``
    (``c`` set by ``local.output``; per-update ``K`` from ``schedule.local_steps``).  The anchors
    come from a ring of the last ``lambda + 1`` server models.  The gradients of every update of
    every configuration are one call of ``grad_selected`` (each update's own client at the
    update's point): a ``LogisticFederation`` computes only those, the other federations every
    client's gradient at every point and pick (``M`` times the work, meant for small ``M``).  The noise ``nu`` is drawn from
    ``KeyedStream(seed, "local noise")`` keyed by (configuration, step, slot + U k), the keys of
    :func:`simulate_schedule`: on a quadratic federation both give the same models to round-off.

    Batched over the schedule's timing seeds and the federation's configurations (at most one
    batch axis; they broadcast as in :func:`~fltheory.delayed.schedule_moments`).  ``returns="final"`` gives the
    final models (B, d), ``"trajectory"`` all models (T+1, B, d), ``"loss"`` the objective
    ``F(x_t)`` (T+1, B) without storing the models.  Divergence is reported as in :func:`simulate_schedule`
    (a warning naming the configurations; an ``InputError`` naming ``eta`` and ``eta_local`` when all diverge).

    Example
    -------
    >>> import numpy as np
    >>> from fltheory import problems, schedules
    >>> fed = problems.PseudoHuberFederation(b=[[0.0], [2.0]], delta=1.0)       # x* = 1
    >>> s = schedules.round_robin(N=2, S=1, T=80)                               # staleness 1
    >>> F = simulate_schedule_general(fed, s, LocalSGD(eta_local=0.3, K=2), eta=1.0, x0=np.array([6.0]),
    ...                               returns="loss")
    >>> F.shape, round(float(F[0, 0]), 3), round(float(F[-1, 0]), 3)    # F(x*) = sqrt(2) - 1 = 0.414
    ((81, 1), 4.103, 0.42)
    """
    _check_general(fed, schedule, local)
    xp = fed.xp
    eta = V.real(eta, "eta", low=0.0, open_low=True)
    seed = V.integer(seed, "seed", low=0, high=2**63 - 1)
    returns = V.choice(returns, "returns", GENERAL_RETURNS)
    T = schedule.T if T is None else V.integer(T, "T", low=0, high=schedule.T)
    cov = getattr(fed, "noise_cov", None)
    if sigma2 is not None:
        sigma2 = V.real(sigma2, "sigma2", low=0.0)
        if cov is not None:
            raise V.InputError("sigma2 is for a federation without gradient noise of its own; this one has "
                               "noise_cov (give sigma2=None)")
    B, _ = _check_batch(fed, schedule)
    d, U, M = fed.d, schedule.U, fed.M
    x0 = V.array(x0, "x0", xp=xp, ndim=1, shape=(d,))
    V.check_size(U * B * M * d, "the per-update gradients (U x B x M x d)", xp=xp, hint="use fewer configurations at a time")
    if returns == "trajectory":
        V.check_size((T + 1) * B * d, "the trajectory", xp=xp)
    root = scalar_root = None
    if cov is not None:
        root = _noise_root(cov, B, xp)
    elif sigma2:
        scalar_root = float(np.sqrt(sigma2))
    noisy = root is not None or scalar_root is not None
    _refuse_shared_noise(fed, schedule, None if cov is not None else noisy)
    R = _ring_size(schedule.steps(T)) if T else 1
    ring = xp.tile(xp.broadcast_to(x0, (B, d))[:, None, :], (1, R, 1))
    noise = KeyedStream(seed, "local noise")
    # a federation of this package picks its clients' gradients its own way; another object with grad_clients
    # gets every client's gradient at every point, then the chosen one's
    select = fed.grad_selected if hasattr(fed, "grad_selected") else (
        lambda x, c: select_by_picking(fed, x, xp.asarray(c)))
    bidx = np.arange(B)[:, None]
    slots = np.arange(U)[None, :]
    kpos = schedule.local_steps
    first = ring[:, 0, :]
    record = [copy_of(first)] if returns == "trajectory" else [fed.loss(first)] if returns == "loss" else None
    with np.errstate(over="ignore", invalid="ignore"):   # divergence is reported below, by name
        for t in range(T):
            cc, lag, w, Ks, valid = _step_local_runs(schedule, kpos, local, t, B)
            anchor = gather(ring, bidx, np.where(valid, (t - lag) % R, 0))    # (B, U, d)
            pick = np.ascontiguousarray(cc.T)                                  # (U, B): each update's client
            x = anchor
            for k in range(int(Ks.max(initial=0))):   # (U, B) order: a federation's batch axis is B
                g = xp.permute_dims(select(xp.permute_dims(x, (1, 0, 2)), pick), (1, 0, 2))
                if noisy:
                    z = xp.asarray(noise.normal(config=bidx, round=t, client=slots + U * k, size=(d,)))
                    g = g + (scalar_root * z if root is None else matvec(gather(root, bidx, cc), z))
                x = xp.where(xp.asarray(k < Ks)[..., None], x - local.eta_local * g, x)
            scale = _OUTPUT_SCALE[local.output](local.eta_local, np.maximum(Ks, 1))
            delta = (anchor - x) * xp.asarray(np.broadcast_to(scale, Ks.shape))[..., None]
            ring[:, (t + 1) % R, :] = ring[:, t % R, :] - eta * weighted_sum(xp.asarray(w), delta)
            if record is not None:
                new = ring[:, (t + 1) % R, :]
                record.append(copy_of(new) if returns == "trajectory" else fed.loss(new))
    final = copy_of(ring[:, T % R, :])
    _warn_diverged("simulate_schedule_general", final[None, ...], xp, eta, local.eta_local)
    return final if record is None else xp.stack(record)
