r"""DeFedAvg's timing: event rules on the core's virtual clock, and the delay oracles.

Everything here produces a :class:`fltheory.schedules.Schedule` (which client's update, started
from which server model, with which weight, is applied at each server step, and when), computed
before and independently of any gradient noise, as the paper's proofs require.  The math then
consumes the schedule (``algorithm.py``, ``exact.py``).

Timing model (Section 4.1.3 of the paper): client ``i`` needs ``c_i = rho_i * unit`` per local
step with ``rho_i ~ U[1, 5]`` drawn once per client and timing seed
(:func:`fltheory.schedule_generators.compute_times`); a run of ``K`` steps takes ``K c_i``; downloads take
``t_dl`` and uploads ``t_ul`` for everyone; aggregation takes no time.

* :func:`niid_events` -- DeFedAvg-nIID (Algorithm 1): each round the server draws ``n`` clients
  uniformly with replacement (the same keyed draws as :func:`fltheory.delayed_simulation.client_draws`),
  collects the content of each selected client's send buffer (waiting for a selected client
  whose buffer is empty), applies the ``n`` updates with their multiplicity (weight ``m/n``) and
  broadcasts to every client.  Clients train continuously on the newest model in their receive
  buffer; policy ``"overwrite"`` overwrites the send buffer after every run, policy ``"energy"``
  holds a finished update and idles until it has been uploaded.  The actual and the *virtual*
  anchors (the model every client is working from at the start of each round, which the proof
  of Theorem 1 uses for every client) are recorded;
* DeFedAvg-IID (Algorithm 2, the first ``n`` arrivals) and AsySG (``K = 1``) are the core's
  :func:`fltheory.schedule_generators.first_n_arrivals`;
* :func:`fedbuff_events` -- FedBuff: first ``n`` arrivals, but a client downloads the current model
  and restarts as soon as it has uploaded;
* :func:`fedavg_schedule` -- synchronous FedAvg with client sampling: every round waits for its
  slowest selected client;
* :func:`oracle_delays` / :func:`niid_oracle` / :func:`iid_oracle` -- delay oracles (zero,
  constant, uniform, cyclic, per-client fixed) independent of everything else.

Example
-------
>>> import numpy as np
>>> from fltheory import schedules
>>> c = schedules.compute_times(seeds=[0], N=4)
>>> s = niid_events(N=4, n=2, T=6, K=2, compute=c, t_dl=0.1, t_ul=0.1, seeds=[0])
>>> s.weight[0].sum(axis=1).tolist()               # every round applies n/n of updates
[1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
>>> bool((s.staleness[0][s.mask[0]] >= 0).all()), s.virtual_start.shape
(True, (1, 6, 4))
"""
from __future__ import annotations

import numpy as np

from ... import validation as V
from ...delayed import client_draws
from ...schedules import EventQueue, Schedule, ScheduleError, from_delays, pop_full_steps

__all__ = ["POLICIES", "DELAYS", "niid_events", "fedbuff_events", "fedavg_schedule", "oracle_delays",
           "niid_oracle", "iid_oracle"]

POLICIES = ("overwrite", "energy")
DELAYS = ("zero", "constant", "uniform", "cyclic", "per_client")


def _timing_inputs(N, n, T, K, compute, t_dl, t_ul, seeds):
    N, n = V.integer(N, "N", low=1, high=10**5), V.integer(n, "n", low=1, high=10**5)
    T, K = V.integer(T, "T", low=0, high=10**6), V.integer(K, "K", low=1, high=10**6)
    if n > N:
        raise ScheduleError(f"n={n} must be <= N={N}")
    c = V.array(compute, "compute", xp=np, low=0.0, open_low=True)
    c = c[None] if c.ndim == 1 else c
    if c.ndim != 2 or c.shape[1] != N:
        raise ScheduleError(f"compute must have shape (B, N={N}) or (N,); got {c.shape}")
    seeds = V.array(seeds, "seeds", xp=np, kind="integer", low=0).reshape(-1)
    if c.shape[0] not in (1, seeds.size):
        raise ScheduleError(f"compute has {c.shape[0]} rows but there are {seeds.size} seeds")
    c = np.broadcast_to(c, (seeds.size, N))
    t_dl, t_ul = V.real(t_dl, "t_dl", low=0.0), V.real(t_ul, "t_ul", low=0.0)
    V.check_size(seeds.size * T * (N + n), "the event-driven schedule", limit=2 * 10**7)
    return N, n, T, K, c, t_dl, t_ul, seeds


def niid_events(*, N: int, n: int, T: int, K: int, compute, t_dl: float = 0.0, t_ul: float = 0.0, seeds=(0,),
                policy: str = "overwrite") -> Schedule:
    """DeFedAvg-nIID (Algorithm 1) on the event queue, one timing seed at a time (see the module docstring).

    Events at one instant go deliveries, completed runs, arrivals, starts (a start takes the
    newest model delivered at that instant).  The schedule's slots are the distinct selected
    clients, by index, with weight ``multiplicity / n``; ``virtual_start[b, t, i]`` is the anchor
    of client ``i``'s buffered update, else of its running job, else ``t`` (idle), when round
    ``t`` begins.

    >>> s = niid_events(N=3, n=3, T=3, K=1, compute=np.ones(3), policy="energy")
    >>> s.time[0].tolist()
    [1.0, 2.0, 3.0]
    """
    N, n, T, K, c, t_dl, t_ul, seeds = _timing_inputs(N, n, T, K, compute, t_dl, t_ul, seeds)
    policy = V.choice(policy, "policy", POLICIES)
    energy = policy == "energy"
    B = seeds.size
    draws = client_draws(seeds=seeds, T=T, N=N, n=n)
    out_c = np.full((B, T, n), -1, dtype=np.int64)
    out_s = np.full((B, T, n), -1, dtype=np.int64)
    out_w = np.zeros((B, T, n))
    out_time = np.zeros((B, T))
    virt = np.zeros((B, T, N), dtype=np.int64)
    for b in range(B):
        q = EventQueue()
        recv: list = [None] * N
        training = [False] * N
        running = [0] * N
        sendbuf: list = [None] * N
        pending = [False] * N
        st = {"t": 0, "awaited": set(), "got": {}, "selected": ()}

        def request_start(i):
            if not pending[i] and not training[i] and recv[i] is not None and not (energy and sendbuf[i] is not None):
                pending[i] = True
                q.push(q.now, "START", i, priority=(9, i))

        def begin_round():
            t = st["t"]
            for i in range(N):
                if sendbuf[i] is not None:
                    virt[b, t, i] = sendbuf[i]
                elif training[i]:
                    virt[b, t, i] = running[i]
                else:                               # idle: a start due now takes the newest model delivered now
                    virt[b, t, i] = recv[i] if (pending[i] and recv[i] is not None and t_dl > 0) else t
            sel = tuple(sorted(set(draws[b, t].tolist())))
            st["selected"], st["awaited"], st["got"] = sel, set(), {}
            for i in sel:
                if sendbuf[i] is not None:
                    q.push(q.now + t_ul, "ARRIVE", (i, sendbuf[i]), priority=(3, i))
                    sendbuf[i] = None
                    request_start(i)
                else:
                    st["awaited"].add(i)

        def start(ev):
            i = ev.payload
            pending[i] = False
            if training[i] or recv[i] is None or (energy and sendbuf[i] is not None):
                return
            running[i], recv[i], training[i] = recv[i], None, True
            q.push(q.now + K * c[b, i], "DONE", i, priority=(2, i))

        def deliver(ev):
            i, s = ev.payload
            recv[i] = s
            request_start(i)

        def done(ev):
            i = ev.payload
            training[i] = False
            if i in st["awaited"]:
                st["awaited"].discard(i)
                q.push(q.now + t_ul, "ARRIVE", (i, running[i]), priority=(3, i))
            else:
                sendbuf[i] = running[i]
            request_start(i)

        def arrive(ev):
            i, s = ev.payload
            st["got"][i] = s
            if len(st["got"]) < len(st["selected"]) or st["t"] >= T:
                return
            t = st["t"]
            counts = np.bincount(draws[b, t], minlength=N)
            sel = st["selected"]
            out_c[b, t, :len(sel)] = sel
            out_s[b, t, :len(sel)] = [st["got"][j] for j in sel]
            out_w[b, t, :len(sel)] = counts[list(sel)] / n
            out_time[b, t] = q.now
            st["t"] = t + 1
            for j in range(N):
                q.push(q.now + t_dl, "DELIVER", (j, t + 1), priority=(0, j))
            if t + 1 < T:
                begin_round()

        handlers = {"DELIVER": deliver, "DONE": done, "ARRIVE": arrive, "START": start}
        for i in range(N):
            q.push(t_dl, "DELIVER", (i, 0), priority=(0, i))
        if T:
            begin_round()
            q.run(handlers, until=lambda: st["t"] >= T, max_events=(T + 1) * (6 * N + 4 * n) + 10)
    U = max(1, int((out_c >= 0).sum(axis=2).max(initial=1)))
    return Schedule(out_c[:, :, :U], out_s[:, :, :U], out_w[:, :, :U], out_time, N, None, virt,
                    name=f"DeFedAvg-nIID events ({policy}), n={n} of N={N}")


def fedbuff_events(*, N: int, n: int, T: int, K: int, compute, t_dl: float = 0.0, t_ul: float = 0.0,
                   seeds=(0,)) -> Schedule:
    """FedBuff: the server applies the first ``n`` updates to arrive (FIFO over updates, weight ``1/n``);
    a client that has uploaded at once downloads the server's current model (``t_dl``) and runs
    again, even on a model it has used before (concurrency ``N``, no staleness weighting).

    >>> s = fedbuff_events(N=3, n=1, T=4, K=1, compute=np.array([1.0, 2.0, 3.0]))
    >>> s.client[0, :, 0].tolist(), s.staleness[0, :, 0].tolist()
    ([0, 0, 1, 0], [0, 0, 2, 1])
    """
    N, n, T, K, c, t_dl, t_ul, _seeds = _timing_inputs(N, n, T, K, compute, t_dl, t_ul, seeds)
    B = c.shape[0]
    out_c = np.zeros((B, T, n), dtype=np.int64)
    out_s = np.zeros((B, T, n), dtype=np.int64)
    out_time = np.zeros((B, T))
    for b in range(B):
        q = EventQueue()
        fifo: list = []
        st = {"t": 0}

        def begin(i, s):
            q.push(q.now + t_dl + K * c[b, i] + t_ul, "ARRIVE", (i, s), priority=(3, i))

        def arrive(ev):
            i, s = ev.payload
            fifo.append((i, s))
            for t, clients, anchors in pop_full_steps(fifo, n, st["t"], T):
                out_c[b, t], out_s[b, t], out_time[b, t] = clients, anchors, q.now
                st["t"] = t + 1
            begin(i, st["t"])                     # downloads the current model and starts again

        for i in range(N):
            begin(i, 0)
        if T:
            q.run({"ARRIVE": arrive}, until=lambda: st["t"] >= T, max_events=(T + 1) * (N + n) + 10)
    return Schedule(out_c, out_s, np.broadcast_to(1.0 / n, out_c.shape), out_time, N,
                    name=f"FedBuff, first {n} of N={N}")


def fedavg_schedule(*, N: int, n: int, T: int, K: int, compute, t_dl: float = 0.0, t_ul: float = 0.0,
                    seeds=(0,)) -> Schedule:
    """Synchronous FedAvg with client sampling: round ``t`` draws ``n`` clients with replacement (the
    same keyed draws as DeFedAvg-nIID), every selected client runs from ``w_t`` and the round
    lasts ``t_dl + max_i K c_i + t_ul``.  Weights ``m/n`` (multiplicity), staleness 0.

    >>> s = fedavg_schedule(N=2, n=2, T=3, K=1, compute=np.array([1.0, 3.0]))
    >>> int(s.max_staleness[0]), bool(np.all(np.diff(s.time[0]) >= 1.0))
    (0, True)
    """
    N, n, T, K, c, t_dl, t_ul, seeds = _timing_inputs(N, n, T, K, compute, t_dl, t_ul, seeds)
    s = niid_oracle(N=N, n=n, T=T, seeds=seeds, delay="zero")
    slow = np.where(s.mask, np.take_along_axis(np.broadcast_to(c[:, None, :], (c.shape[0], T, N)),
                                               np.maximum(s.client, 0), axis=2), 0.0).max(axis=2)
    time = np.cumsum(t_dl + K * slow + t_ul, axis=1)
    return Schedule(s.client, s.start, s.weight, time, N, name=f"FedAvg, n={n} of N={N}")


def oracle_delays(*, delay: str, N: int, T: int, lam: int = 1, seeds=(0,), D=None):
    """Delays ``D_i(t)`` (B, T, N) of an oblivious oracle, independent of the noise:

    * ``"zero"`` -- 0 (synchronous); ``"constant"`` -- ``lam``;
    * ``"uniform"`` -- i.i.d. uniform on ``{0, ..., lam}`` (keyed by seed, step, client);
    * ``"cyclic"`` -- ``(t + i) mod (lam + 1)``;
    * ``"per_client"`` -- a fixed ``D[i]`` per client (an (N,) array in ``{0, ..., lam}``).

    >>> oracle_delays(delay="cyclic", N=2, T=3, lam=2)[0].tolist()
    [[0, 1], [1, 2], [2, 0]]
    """
    delay = V.choice(delay, "delay", DELAYS)
    N, T = V.integer(N, "N", low=1, high=10**6), V.integer(T, "T", low=0, high=10**7)
    lam = V.integer(lam, "lam", low=0, high=10**6)
    seeds = V.array(seeds, "seeds", xp=np, kind="integer", low=0).reshape(-1)
    B = seeds.size
    V.check_size(B * T * N, "the oracle delays")
    shape = (B, T, N)
    if delay == "zero":
        return np.zeros(shape, dtype=np.int64)
    if delay == "constant":
        return np.full(shape, lam, dtype=np.int64)
    if delay == "cyclic":
        return np.broadcast_to((np.arange(T)[:, None] + np.arange(N)[None, :]) % (lam + 1), shape).copy()
    if delay == "per_client":
        if D is None:
            raise ScheduleError("delay='per_client' needs D, an (N,) array of delays in {0..lam}")
        d = V.array(D, "D", xp=np, kind="integer", shape=(N,), low=0, high=lam)
        return np.broadcast_to(d, shape).astype(np.int64).copy()
    from ...backend import KeyedStream  # noqa: PLC0415

    u = KeyedStream(0, "defedavg oracle delays").uniform(config=seeds[:, None, None], round=np.arange(T)[None, :, None],
                                                         client=np.arange(N)[None, None, :])
    return np.minimum((u * (lam + 1)).astype(np.int64), lam)


def niid_oracle(*, N: int, n: int, T: int, seeds=(0,), delay: str = "zero", lam: int = 1, D=None) -> Schedule:
    """DeFedAvg-nIID under a delay oracle, the abstract form (8): ``n`` keyed draws with replacement
    per round (weight ``m/n``), and client ``i``'s update started from ``max(0, t - D_i(t))``.
    With ``delay="zero"`` this is FedAvg with client sampling.

    >>> s = niid_oracle(N=4, n=2, T=5, delay="constant", lam=2)
    >>> s.staleness[0, 4][s.mask[0, 4]].tolist(), float(s.weight[0, 4].sum())     # one client drawn twice
    ([2], 1.0)
    """
    N, n = V.integer(N, "N", low=1, high=10**6), V.integer(n, "n", low=1, high=10**6)
    seeds = V.array(seeds, "seeds", xp=np, kind="integer", low=0).reshape(-1)
    T = V.integer(T, "T", low=0, high=10**7)
    draws = client_draws(seeds=seeds, T=T, N=N, n=n)
    Dl = oracle_delays(delay=delay, N=N, T=T, lam=lam, seeds=seeds, D=D)
    counts = np.zeros(draws.shape[:2] + (N,))
    np.add.at(counts, (np.arange(seeds.size)[:, None, None], np.arange(T)[None, :, None], draws), 1.0)
    order = np.argsort(counts == 0, axis=-1, kind="stable")
    U = max(int((counts > 0).sum(axis=-1).max(initial=0)), 1)
    take = lambda a: np.take_along_axis(a, order, axis=-1)[..., :U]  # noqa: E731
    clients = np.where(counts > 0, np.arange(N), -1)
    return from_delays(clients=take(clients), delays=take(Dl), N=N, weights=take(counts / n),
                       name=f"DeFedAvg-nIID oracle ({delay}), n={n} of N={N}")


def iid_oracle(*, N: int, n: int, T: int, seeds=(0,), delay: str = "zero", lam: int = 1, D=None) -> Schedule:
    """DeFedAvg-IID under a delay oracle: round ``t`` applies ``n`` updates of the clients
    ``(t n + u) mod N`` (identities do not matter for IID data), with weight ``1/n`` and delays of
    the oracle.

    >>> iid_oracle(N=3, n=2, T=3, delay="constant", lam=1).start[0].tolist()
    [[0, 0], [0, 0], [1, 1]]
    """
    N, n = V.integer(N, "N", low=1, high=10**6), V.integer(n, "n", low=1, high=10**6)
    T = V.integer(T, "T", low=0, high=10**7)
    if n > N:
        raise ScheduleError(f"n={n} must be <= N={N}")
    Dl = oracle_delays(delay=delay, N=N, T=T, lam=lam, seeds=seeds, D=D)
    clients = (np.arange(T)[:, None] * n + np.arange(n)[None, :]) % N
    cl = np.broadcast_to(clients, (Dl.shape[0], T, n))
    return from_delays(clients=cl, delays=np.take_along_axis(Dl, cl, axis=2), N=N,
                       name=f"DeFedAvg-IID oracle ({delay}), n={n} of N={N}")
