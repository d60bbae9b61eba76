"""The schedule generators: the functions that build each paper's timing process.

Every generator computes a timing process as arrays before (and independently of) any gradient
noise, and returns a :class:`~fltheory.schedules.Schedule` (or, for AFL-DGA, a
:class:`~fltheory.schedules.Participation`, whose ``schedule()`` is one).  The engine they fill --
the :class:`~fltheory.schedules.Schedule` arrays, :class:`~fltheory.schedules.ScheduleError`, the
:class:`~fltheory.schedules.EventQueue` and the :class:`~fltheory.schedules.Participation` matrix --
is :mod:`fltheory.schedules`, which also re-exports every name here (``fltheory.schedules.round_robin``
is this module's :func:`round_robin`).

Generators
----------
* :func:`round_robin` -- TDMA groups of ``S`` of ``N`` devices served FIFO; staleness
  ``min(k, G-1)`` when ``S`` divides ``N``.
* :func:`from_delays` -- an oblivious delay oracle: given clients and delays per step.
* :func:`first_n_arrivals` -- the event-driven "aggregate the first ``n`` arrivals" server
  (DeFedAvg-IID, FedBuff-like, AsySG), batched over timing seeds in arrays; its reference
  :func:`first_n_arrivals_events` runs the same rules through the
  :class:`~fltheory.schedules.EventQueue`, one seed at a time, and the tests check the two agree
  event for event; :func:`compute_times` draws the clients' speeds and :func:`pop_full_steps`
  is the step rule the event-driven first-``n`` servers share.
* AFL-DGA's participation matrices: :func:`synchronous_participation` (every client every
  round; with ``D >= 1`` the pipelined DGA schedule), :func:`anarchic_participation` (random
  participation, forced where skipping would break ``t_d``), :func:`fast_k_participation` (the
  ``k`` fastest clients of each round plus the forced ones) and :func:`participation_from_tau`
  (Algorithm 1's staleness matrix).

Example
-------
>>> import numpy as np
>>> from fltheory import schedule_generators as G
>>> s = G.first_n_arrivals(N=3, n=2, T=4, compute=np.array([1.0, 2.0, 4.0]))
>>> s.client[0].tolist()               # the slowest client (2) makes step 2, from w_0: staleness 2
[[0, 1], [0, 1], [0, 2], [0, 1]]
>>> s.staleness[0].tolist()
[[0, 0], [0, 0], [0, 2], [0, 1]]
>>> G.round_robin(N=6, S=2, T=6).max_staleness.tolist()   # three groups of two: lambda = G - 1 = 2
[2]
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from .backend import KeyedStream
from . import validation as V
from .validation import InputError
from .schedules import EventQueue, Participation, Schedule, ScheduleError, _as_int_array, _broadcast_named, _times

__all__ = [
    "round_robin", "from_delays", "compute_times", "first_n_arrivals", "first_n_arrivals_events", "pop_full_steps",
    "synchronous_participation", "anarchic_participation", "fast_k_participation", "participation_from_tau",
]


# ======================================================================================
# TDMA round robin, the delay oracle, first-n arrivals
# ======================================================================================
def round_robin(*, N: int, S: int, T: int) -> Schedule:
    """Asynchronous FL over TDMA with equal computation times: ``S`` of ``N`` devices per round.

    Devices are served first-in first-out by ``(khat, index)``: at round ``k`` the ``S`` devices
    with the oldest anchor transmit an update computed at ``w_{khat}`` (``khat = 0`` before their
    first transmission, else one past the round they last transmitted in), and those ``S``
    restart on ``w_{k+1}``.  When ``S`` divides ``N`` (``G = N/S`` groups) this is a strict round
    robin of the groups and the staleness is ``min(k, G - 1)``; otherwise groups mix and, after
    the first cycles, the staleness is ``floor(N/S) - 1`` or ``ceil(N/S) - 1`` (mean ``N/S - 1``).
    Weights are ``1/S``.  Wall-clock times are the round index + 1 (the slot-level timing of the
    channel is the paper's own event rule).

    >>> round_robin(N=5, S=2, T=5).client[0].tolist()
    [[0, 1], [2, 3], [4, 0], [1, 2], [3, 0]]
    """
    N, S, T = V.integer(N, "N", low=1, high=10**7), V.integer(S, "S", low=1), V.integer(T, "T", low=0)
    V.check_size(T * S, "the round-robin schedule")
    if S > N:
        raise ScheduleError(f"group size S={S} must be <= N={N}")
    queue = [(0, i) for i in range(N)]  # (khat, index), kept sorted
    client = np.empty((T, S), dtype=np.int64)
    start = np.empty((T, S), dtype=np.int64)
    for k in range(T):
        chosen, queue = queue[:S], queue[S:]
        client[k] = [i for _, i in chosen]
        start[k] = [kh for kh, _ in chosen]
        queue.extend(sorted((k + 1, i) for _, i in chosen))  # restart on w_{k+1}, re-enter by index
    return Schedule(client, start, np.full((T, S), 1.0 / S), None, N, name=f"round robin N={N} S={S}")


def from_delays(*, clients, delays, N: int, weights=None, times=None, name: str = "delay oracle") -> Schedule:
    """An oblivious delay oracle: step ``t`` applies the updates of ``clients[..., t, :]``,
    started from ``max(0, t - delays[..., t, :])`` (delays fixed in advance, independent of noise).

    ``clients`` and ``delays`` are (T, U) or (B, T, U) integer arrays (``-1`` clients are empty
    slots); ``weights`` defaults to ``1/U``.

    >>> import numpy as np
    >>> s = from_delays(clients=np.tile([0, 1], (4, 1)), delays=np.full((4, 2), 2), N=2)
    >>> s.start[0].tolist()
    [[0, 0], [0, 0], [0, 0], [1, 1]]
    """
    c = _as_int_array("clients", clients, 2)
    D = _as_int_array("delays", delays, 2)
    try:
        D = np.broadcast_to(D, c.shape)
    except ValueError:
        raise ScheduleError(f"delays must broadcast to the shape of clients {c.shape}; got {D.shape}") from None
    if np.any(D[c >= 0] < 0):
        raise ScheduleError("delays must be >= 0")
    T = c.shape[-2]
    t = np.arange(T)[:, None]
    start = np.where(c >= 0, np.maximum(0, t - D), -1)
    w = np.full(c.shape, 1.0 / c.shape[-1]) if weights is None else weights
    w = w if weights is None else _broadcast_named(V.array(weights, "weights", xp=np, empty=True), c.shape, "weights")
    times = _times(times, finite=True)
    if times is not None:
        _broadcast_named(times, c.shape[:-1], "times")
    return Schedule(c, start, w, times, N, name=name)


def compute_times(*, seeds, N: int, low: float = 1.0, high: float = 5.0, unit: float = 1.0, seed: int = 0):
    """Per-client compute time per local step ``c_i = rho_i * unit``, ``rho_i ~ U[low, high]``,
    drawn once per client and timing seed from the keyed stream (B, N).

    >>> compute_times(seeds=[0, 1], N=3).shape
    (2, 3)
    """
    seeds = V.array(seeds, "seeds", xp=np, kind="integer", ndim=1, low=0)
    N = V.integer(N, "N", low=1, high=10**7)
    low = V.real(low, "low", low=0.0, open_low=True)
    high = V.real(high, "high", low=0.0, open_low=True)
    if high < low:
        raise InputError(f"low must be <= high (compute speeds are drawn from U[low, high]); got low={low:g}, "
                         f"high={high:g}")
    unit = V.real(unit, "unit", low=0.0, open_low=True)
    seed = V.integer(seed, "seed", low=0, high=2**63 - 1)
    V.check_size(seeds.size * N, "the compute times")
    u = KeyedStream(seed, "compute speed").uniform(config=seeds[:, None], round=0, client=np.arange(N)[None, :])
    return (low + (high - low) * u) * float(unit)


def _first_n_inputs(N, n, T, K, compute, t_dl, t_ul):
    N, n, T, K = (V.integer(N, "N", low=1, high=10**9), V.integer(n, "n", low=1, high=10**9),
                  V.integer(T, "T", low=0, high=10**9), V.integer(K, "K", low=1, high=10**9))
    if n > N:
        raise ScheduleError(f"n={n} must be <= N={N} (the server waits for n updates per step)")
    try:
        c = V.array(compute, "compute", xp=np).astype(np.float64)
    except InputError as exc:
        raise ScheduleError(str(exc).replace("compute must be finite", "compute times must be finite and > 0")) from None
    if c.ndim == 1:
        c = c[None]
    if c.ndim != 2 or c.shape[1] != N:
        raise ScheduleError(f"compute must have shape (B, N={N}) (per-step compute time of each client); got {c.shape}")
    if c.size and np.any(c <= 0):
        raise ScheduleError("compute times must be finite and > 0")
    t_dl = V.real(t_dl, "t_dl", low=0.0)
    t_ul = V.real(t_ul, "t_ul", low=0.0)
    V.check_size(c.shape[0] * T * (2 * n + 1) // 2, "the schedule", hint="generate fewer seeds or steps at a time")
    return N, n, T, K, c, t_dl, t_ul


def first_n_arrivals(*, N: int, n: int, T: int, K: int = 1, compute, t_dl: float = 0.0, t_ul: float = 0.0,
                     record_virtual: bool = False) -> Schedule:
    """Event-driven asynchronous aggregation of the first ``n`` updates to arrive, batched over seeds.

    The rules (DeFedAvg-IID; AsySG with ``K = 1``): the server broadcasts ``w_0``, which reaches
    every client after ``t_dl``.  A client that holds an unused model starts ``K`` local steps
    on the newest one, taking ``K * compute[b, i]``, and uploads the result (``t_ul``).  On
    arrival the update joins a FIFO queue and the client starts again at once if a newer model
    was delivered while it worked, else it waits for the next broadcast.  Every ``n``-th
    arrival completes a server step (FIFO over updates: a fast client may contribute twice to a
    step), and ``w_{t+1}`` reaches every client ``t_dl`` later.

    Ties in time: within one instant, deliveries come first, then arrivals by client index
    (which may complete steps and, with ``t_dl = 0``, deliver at the same instant), and a client
    that starts at that instant works on the newest model delivered at it.  The
    :class:`~fltheory.schedules.EventQueue` reference :func:`first_n_arrivals_events` follows the same order.

    All ``B`` seeds advance together, one server step per iteration, with the ``n`` earliest
    arrivals found by a partition over clients; a seed in which a client would arrive twice
    within one step falls back to one arrival at a time for that step.  Weights are ``1/n``.

    Parameters
    ----------
    compute : (B, N) or (N,) compute time per local step of every client (see :func:`compute_times`).
    record_virtual : also record ``virtual_start`` (B, T, N): for every client, the anchor of its next
        update not applied before step ``t``, capped at ``t`` (a waiting client counts as ``t``),
        the virtual anchor of the DeFedAvg analysis (memory ``B*T*N`` integers).

    Example
    -------
    >>> import numpy as np
    >>> s = first_n_arrivals(N=3, n=3, T=4, compute=np.ones(3))
    >>> s.staleness[0].tolist()            # identical speeds, n = N: synchronous FedAvg
    [[0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0]]
    >>> s = first_n_arrivals(N=4, n=1, T=6, compute=np.array([1.0, 2.0, 3.0, 4.0]))
    >>> s.client[0, :, 0].tolist(), s.staleness[0, :, 0].tolist()
    ([0, 0, 1, 0, 2, 0], [0, 0, 2, 0, 4, 0])
    """
    N, n, T, K, c, t_dl, t_ul = _first_n_inputs(N, n, T, K, compute, t_dl, t_ul)
    record_virtual = V.flag(record_virtual, "record_virtual")
    if record_virtual:
        V.check_size(c.shape[0] * T * N, "the virtual anchors (record_virtual)")
    B = c.shape[0]
    period = K * c + t_ul  # start -> arrival
    st = _ArrivalState(arr=t_dl + period, used=np.zeros((B, N), dtype=np.int64), start_at=np.full((B, N), t_dl),
                       waiting=np.zeros((B, N), dtype=bool))
    cdt = np.int16 if N < 2**15 else np.int32          # client indices: half the memory when they fit
    out = _Out(np.empty((B, T, n), dtype=cdt), np.empty((B, T, n), dtype=np.int32), np.empty((B, T)),
               np.empty((B, T, N), dtype=np.int32) if record_virtual else None)
    deliv = np.full((B, T + 2), np.inf)                 # deliv[:, s]: when w_s reaches the clients
    deliv[:, 0] = t_dl
    everyone = np.arange(B)
    m = max(1, min(8, (N - 1) // n))                    # steps per chunk (adapted below)
    t = 0
    while t < T:
        mm = min(m, T - t)
        groups = _chunk(st, t, mm, deliv, period, n, t_dl, out) if mm >= 2 else [(everyone, 0)]
        short = sum(seeds.size for seeds, _ in groups)
        if short > B // 4 and m > 2:
            m -= 1                                      # many seeds stopped early: shorter chunks
        elif short < B // 16 and m < 8 and (m + 1) * n < N:
            m += 1
        for seeds, k in groups:
            _single_steps(st, t + k, t + mm, deliv, period, n, t_dl, out, seeds)
        t += mm
    return Schedule._trusted(out.client, out.start, np.broadcast_to(1.0 / n, out.client.shape), out.time, N, None,
                             out.virt, name=f"first {n} of {N} arrivals")


@dataclass
class _Out:
    client: Any
    start: Any
    time: Any
    virt: Any


def _chunk(st, t0, m, deliv, period, n, t_dl, out):
    """Steps ``t0 .. t0+m-1`` in one pass, for each seed as far as that is exact.

    For a seed, the first ``k`` steps of the chunk are its ``k*n`` earliest arrivals when those
    ``k*n + 1`` times are distinct (and later than the previous step) and every follow-up run of
    those clients arrives after step ``t0+k-1`` ends (no client arrives twice, no tie rule is
    needed).  Such ``k`` form a prefix; each seed takes its longest one here and returns, in
    ``(seeds, k)`` groups, what :func:`_single_steps` must finish.
    """
    B, N = st.arr.shape
    M = m * n
    rows = np.arange(B)[:, None]
    offs = rows * N
    if st.waiting.any():                                # waiting clients start on w_t0 when it arrives
        w = st.waiting
        D = deliv[:, t0, None]
        st.arr[w], st.start_at[w] = np.broadcast_to(D + period, w.shape)[w], np.broadcast_to(D, w.shape)[w]
        st.used[w], st.waiting[w] = t0, False
    order = np.argsort(st.arr, axis=1)[:, :M + 1]
    a = st.arr.take(order + offs)
    prev = out.time[:, t0 - 1] if t0 else np.full(B, -np.inf)
    inc = np.concatenate([(a[:, :1] > prev[:, None]), a[:, 1:] > a[:, :-1]], axis=1)   # (B, M+1)
    first_bad = np.where(inc.all(axis=1), M + 1, np.argmin(inc, axis=1))
    k_tie = np.minimum(np.maximum(first_bad - 1, 0) // n, m)   # a[0..k n] strictly increasing, > prev
    cl = order[:, :M]
    flat = cl + offs
    aa = a[:, :M]
    used = st.used.take(flat)
    E = aa[:, n - 1::n]                                 # (B, m): E_{t0+j}
    saved = deliv[:, t0 + 1:t0 + m + 1].copy()
    deliv[:, t0 + 1:t0 + m + 1] = E + t_dl
    tt = t0 + np.arange(M) // n                         # the step of each arrival
    newest = _newest_in_chunk(aa, used, t0, m, n, deliv)    # counts the delivery of w_{t+1} (t_dl = 0)
    restart = newest > used
    start, model = aa.copy(), newest.copy()
    lat = ~restart
    if lat.any():                                       # start on w_{used+1} when it is delivered
        r_l = np.broadcast_to(rows, aa.shape)[lat]
        d_next = deliv.take(r_l * deliv.shape[1] + used[lat] + 1)
        start[lat] = d_next
        model[lat] = _newest(d_next, used[lat] + 1, tt.take(np.nonzero(lat)[1]) + 1, deliv, rows=r_l)
    new_arr = start + period.take(flat)
    # longest prefix k whose arrivals' follow-ups all come after E_{t0+k-1}: the running minimum of
    # each step's earliest follow-up must exceed the step's end, for every step of the prefix
    na3 = new_arr.reshape(B, m, n)
    step_min = na3[:, :, 0].copy()
    for i in range(1, n):                               # a min over a short axis, as n elementwise ops
        np.minimum(step_min, na3[:, :, i], out=step_min)
    cm = np.minimum.accumulate(step_min, axis=1)
    good = (cm > E) & (np.arange(1, m + 1)[None, :] <= k_tie[:, None])
    k_ok = np.where(good.all(axis=1), m, np.argmin(good, axis=1))
    # outputs of all m steps for every seed (past a seed's prefix, _single_steps overwrites them)
    key = np.sort((cl.astype(np.int64) << 40 | used).reshape(B, m, n), axis=2)   # by client, anchor along
    out.client[:, t0:t0 + m] = (key >> 40).reshape(B, m, n)
    out.start[:, t0:t0 + m] = (key & ((1 << 40) - 1)).reshape(B, m, n)
    out.time[:, t0:t0 + m] = E
    valid = (np.arange(M) // n)[None, :] < k_ok[:, None]
    if out.virt is not None:
        u_now = st.used.copy()
        for j in range(m):
            out.virt[:, t0 + j] = np.minimum(u_now, t0 + j)
            vj = valid[:, j * n:(j + 1) * n]
            u_now.put(flat[:, j * n:(j + 1) * n][vj], model[:, j * n:(j + 1) * n][vj])
    fv = flat[valid]
    st.arr.put(fv, new_arr[valid])
    st.used.put(fv, model[valid])
    st.start_at.put(fv, start[valid])
    short = k_ok < m
    if short.any():                                     # deliveries past each seed's prefix are unknown
        keep = np.arange(m)[None, :] < k_ok[:, None]
        deliv[:, t0 + 1:t0 + m + 1] = np.where(keep, deliv[:, t0 + 1:t0 + m + 1], saved)
    return [(np.flatnonzero(k_ok == k), k) for k in range(m) if np.any(k_ok == k)]


def _single_steps(st, t_from, t_to, deliv, period, n, t_dl, out, seeds):
    """Steps ``t_from .. t_to-1`` for the given seeds, one server step at a time (exact on ties)."""
    sub = _ArrivalState(*(a[seeds] for a in st))
    dl = deliv                                          # full array, rows addressed through `seeds`
    rs = seeds[:, None]
    per = period[seeds]
    B, N = sub.arr.shape
    rows = np.arange(B)[:, None]
    offs = rows * N
    any_waiting = bool(sub.waiting.any())
    for t in range(t_from, t_to):
        if any_waiting:                                 # waiting clients start on w_t when it arrives
            w = sub.waiting
            D_t = dl[seeds, t][:, None]
            sub = _ArrivalState(np.where(w, D_t + per, sub.arr), np.where(w, t, sub.used),
                                np.where(w, D_t, sub.start_at), np.zeros_like(w))
        if out.virt is not None:
            out.virt[seeds, t] = np.minimum(sub.used, t)
        arr = sub.arr
        # the n earliest arrivals by (time, index), with exact tie handling where needed
        if n < N:
            order = np.argsort(arr, axis=1)
            v = arr.take(order[:, n - 1] + offs[:, 0])
            tied = np.flatnonzero(arr.take(order[:, n] + offs[:, 0]) == v)  # a tie across the boundary
            sc = np.sort(order[:, :n], axis=1)          # the step's clients, by index
            if tied.size:
                a_t, v_t = arr[tied], v[tied, None]
                eq = a_t == v_t
                need = n - (a_t < v_t).sum(axis=1)
                pick = (a_t < v_t) | (eq & (np.cumsum(eq, axis=1) <= need[:, None]))
                sc[tied] = np.nonzero(pick)[1].reshape(-1, n)
        else:
            v, sc = arr.max(axis=1), np.broadcast_to(np.arange(N), (B, N))
        flat = (sc + offs).ravel()
        mine = _ArrivalState(*(a.take(flat).reshape(B, n) for a in sub))
        nxt = _after_arrival(mine, t, dl, per.take(flat).reshape(B, n), rows=rs)
        last = np.where(mine.arr == v[:, None], sc, -1).max(axis=1, keepdims=True)  # the step's last arrival
        conflict = (nxt.arr < v[:, None]) | ((nxt.arr == v[:, None]) & (sc < last))
        c_t, s_t, time_t = np.array(sc, dtype=np.int32), mine.used.astype(np.int32), v.copy()
        for a_st, a_nxt in zip(sub, nxt):
            a_st.put(flat, a_nxt)
        bad = np.flatnonzero(conflict.any(axis=1))
        any_waiting = bool(nxt.waiting.any())
        if bad.size:  # redo these seeds one arrival at a time (a client arrives twice in the step)
            before = _ArrivalState(*(a[bad] for a in sub))
            for a_b, a_m in zip(before, mine):          # restore the selected clients' entering state
                a_b[np.arange(bad.size)[:, None], sc[bad]] = a_m[bad]
            redo, c_t[bad], s_t[bad], time_t[bad] = _step_sequential(before, t, dl, per[bad], n, rows=seeds[bad])
            for a_st, a_r in zip(sub, redo):
                a_st[bad] = a_r
            any_waiting = bool(sub.waiting.any())
        out.client[seeds, t], out.start[seeds, t], out.time[seeds, t] = c_t, s_t, time_t
        dl[seeds, t + 1] = time_t + t_dl
        d_new, d_old = dl[seeds, t + 1], dl[seeds, t]
        # a client starting exactly when w_{t+1} is delivered works on it (newest at that instant);
        # only this step's clients can, unless two steps completed at the same instant
        if np.any(d_new == d_old) or bad.size:
            bump = ~sub.waiting & (sub.start_at == d_new[:, None]) & (sub.used < t + 1)
            sub.used[bump] = t + 1
        elif t_dl == 0.0:
            mine2 = _ArrivalState(*(a[rows, sc] for a in sub))
            bump = ~mine2.waiting & (mine2.start_at == d_new[:, None]) & (mine2.used < t + 1)
            sub.used[rows, sc] = np.where(bump, t + 1, mine2.used)
    for a_st, a_sub in zip(st, sub):
        a_st[seeds] = a_sub


class _ArrivalState(NamedTuple):
    """Per (seed, client): next arrival time, anchor of the current run, its start time, waiting flag."""

    arr: Any
    used: Any
    start_at: Any
    waiting: Any


def _newest(x, lo, t, deliv, rows=None):
    """max{s in [lo, t]: deliv[s] <= x} per entry (``deliv[lo] <= x`` is assumed and ``deliv`` is
    non-decreasing along its rows, which follow the leading axis of ``x`` unless ``rows`` gives the
    row of every entry; ``t`` is a scalar or broadcasts against ``x``).

    The answer is usually within a few steps of ``t``: count the late deliveries in a window of
    the last four, and bisect only the entries whose answer lies below the window.
    """
    S_ = deliv.shape[1]
    if rows is None:
        base = np.arange(x.shape[0]).reshape((-1,) + (1,) * (x.ndim - 1)) * S_
    else:
        base = np.broadcast_to(np.asarray(rows) * S_, x.shape)
    t = np.broadcast_to(t, x.shape)
    late = np.zeros(x.shape, dtype=np.int64)
    for k in range(4):
        tk = t - k
        late += (tk >= 0) & (deliv.take(base + np.maximum(tk, 0)) > x)
    s = t - late
    deep = (late == 4) & (t - 4 >= 0)
    if not deep.any():
        return s
    b_d = np.broadcast_to(base, x.shape)[deep]
    lo_d, hi_d, x_d = np.broadcast_to(lo, x.shape)[deep].astype(np.int64), t[deep] - 4, x[deep]
    while True:
        open_ = lo_d < hi_d
        if not open_.any():
            break
        mid = (lo_d + hi_d + 1) // 2
        ok = deliv.take(b_d + mid) <= x_d
        lo_d = np.where(open_ & ok, mid, lo_d)
        hi_d = np.where(open_ & ~ok, mid - 1, hi_d)
    s[deep] = lo_d
    return s


_WINDOW = 6  # deliveries compared directly in a chunk; older answers are bisected


def _newest_in_chunk(aa, used, t0, m, n, deliv):
    """:func:`_newest` over ``[used, t+1]`` for the chunk's arrivals ``aa`` (B, m*n) sorted by step:
    step ``j`` (``t = t0 + j``) compares with the window ``D_{t+2-W} .. D_{t+1}`` of one contiguous
    slice of ``deliv`` (no gathers); only answers below the window are bisected."""
    B, W = aa.shape[0], _WINDOW
    lo_i = t0 + 2 - W
    win = deliv[:, max(lo_i, 0):t0 + m + 2]
    if lo_i < 0:
        win = np.concatenate([np.full((B, -lo_i), -np.inf), win], axis=1)   # no such deliveries
    x = aa.reshape(B, m, n)
    late = np.zeros(x.shape, dtype=np.int8)
    for k in range(W):                                  # D_{t+1-k} is win[:, j + W - 1 - k]
        late += win[:, W - 1 - k:W - 1 - k + m, None] > x
    t = t0 + np.arange(m)[None, :, None]
    s = (t + 1 - late.astype(np.int64)).reshape(B, m * n)
    deep = (late == W).reshape(B, m * n) & np.repeat(((t + 1 - W) >= 0).reshape(1, m), n, axis=1)
    if deep.any():
        rows = np.broadcast_to(np.arange(B)[:, None], deep.shape)[deep]
        tt = np.broadcast_to((t0 + np.arange(m * n) // n)[None, :], deep.shape)[deep]
        s[deep] = _newest(aa[deep], used[deep], tt + 1 - W, deliv, rows=rows)
    return s


def _after_arrival(st, t, deliv, period, rows=None):
    """What a client that arrives at ``st.arr`` during step ``t`` does next.

    If a model newer than the one it used was delivered by then (``w_0 .. w_t`` are the models
    whose delivery times are known), it restarts at once on the newest.  Otherwise it starts on
    ``w_{used+1}`` when that is delivered, or, if it already used ``w_t``, waits for the next
    broadcast (time not known yet).
    """
    arr, used = st.arr, st.used
    r = np.arange(arr.shape[0]).reshape((-1,) + (1,) * (arr.ndim - 1)) if rows is None else rows
    newest = _newest(arr, used, t, deliv, rows=r)
    restart = newest > used
    later = ~restart & (used < t)
    d_next = deliv.take(r * deliv.shape[1] + np.minimum(used + 1, deliv.shape[1] - 1))
    start_at = np.where(restart, arr, np.where(later, d_next, np.inf))
    model = np.where(restart, newest, used)
    if later.any():
        model = np.where(later, _newest(d_next, np.minimum(used + 1, t), t, deliv, rows=r), model)
    return _ArrivalState(start_at + period, model, start_at, ~(restart | later))


def _step_sequential(st, t, deliv, period, n, rows=None):
    """One server step for a few seeds, one arrival at a time (argmin picks the lowest index on ties)."""
    st = _ArrivalState(*(a.copy() for a in st))
    Bc = st.arr.shape[0]
    r = np.arange(Bc)
    cl = np.empty((Bc, n), dtype=np.int32)
    an = np.empty((Bc, n), dtype=np.int32)
    time = np.empty(Bc)
    rr = r if rows is None else np.asarray(rows).reshape(-1)
    for j in range(n):
        i = np.argmin(st.arr, axis=1)
        one = _ArrivalState(*(a[r, i] for a in st))
        cl[:, j], an[:, j], time[:] = i, one.used, one.arr
        for a, b in zip(st, _after_arrival(one, t, deliv, period[r, i], rows=rr)):
            a[r, i] = b
    order = np.argsort(cl, axis=1, kind="stable")  # by client; a client's two updates by arrival
    return st, np.take_along_axis(cl, order, 1), np.take_along_axis(an, order, 1), time


def pop_full_steps(fifo: list, n: int, t: int, T: int) -> list:
    """Pop the updates of every full server step off a FIFO of ``(client, anchor)`` arrivals: while
    ``n`` wait and steps ``t .. T-1`` remain, the first ``n`` make step ``t`` (listed by client).
    Returns ``[(t, clients, anchors), ...]`` (the event-driven first-``n`` servers share it).

    >>> q = [(2, 0), (0, 0), (1, 1)]
    >>> pop_full_steps(q, 2, 0, 5), q
    ([(0, [0, 2], [0, 0])], [(1, 1)])
    """
    V.instance(fifo, "fifo", list)
    n, t, T = V.integer(n, "n", low=1), V.integer(t, "t", low=0), V.integer(T, "T", low=0)
    out = []
    while len(fifo) >= n and t < T:
        batch = sorted(fifo[:n])
        del fifo[:n]
        out.append((t, [i for i, _ in batch], [a for _, a in batch]))
        t += 1
    return out


def first_n_arrivals_events(*, N: int, n: int, T: int, K: int = 1, compute, t_dl: float = 0.0, t_ul: float = 0.0,
                            record_virtual: bool = False, log: list | None = None) -> Schedule:
    """The rules of :func:`first_n_arrivals`, run through the :class:`~fltheory.schedules.EventQueue` seed by seed.

    This is the reference: each client is a small state machine (``recv`` buffer, IDLE /
    TRAINING / UPLOADING) driven by DELIVER, DONE, ARRIVE and START events with priorities
    ``(0, client)``, ``(2, client)``, ``(3, client)`` and ``(9, client)``: a START is the last
    event of its instant, so it takes the newest model delivered at that instant.  Virtual
    anchors are read off the recorded arrivals (after the last step the queue drains without
    new steps, so every run in progress arrives).  Pass a list as ``log`` to receive every
    processed event of every seed.
    """
    N, n, T, K, c, t_dl, t_ul = _first_n_inputs(N, n, T, K, compute, t_dl, t_ul)
    record_virtual = V.flag(record_virtual, "record_virtual")
    B = c.shape[0]
    out_c = np.empty((B, T, n), dtype=np.int32)
    out_s = np.empty((B, T, n), dtype=np.int32)
    out_time = np.empty((B, T))
    virt = np.empty((B, T, N), dtype=np.int32) if record_virtual else None
    for b in range(B):
        q = EventQueue(record=log is not None)
        recv: list[int | None] = [None] * N
        status = ["IDLE"] * N
        pending = [False] * N
        used = [0] * N
        fifo: list[tuple[int, int]] = []
        arrivals: list[list[tuple[int, int]]] = [[] for _ in range(N)]  # (arrival number, anchor)
        state = {"t": 0, "count": 0}

        def request_start(i):
            if not pending[i]:
                pending[i] = True
                q.push(q.now, "START", i, priority=(9, i))

        def start(ev):
            i = ev.payload
            pending[i] = False
            used[i], recv[i], status[i] = recv[i], None, "TRAINING"
            q.push(q.now + K * c[b, i], "DONE", i, priority=(2, i))

        def deliver(ev):
            i, s = ev.payload
            recv[i] = s
            if status[i] == "IDLE":
                request_start(i)

        def done(ev):
            status[ev.payload] = "UPLOADING"
            q.push(q.now + t_ul, "ARRIVE", ev.payload, priority=(3, ev.payload))

        def arrive(ev):
            i = ev.payload
            status[i] = "IDLE"
            fifo.append((i, used[i]))
            arrivals[i].append((state["count"], used[i]))
            state["count"] += 1
            if recv[i] is not None:
                request_start(i)
            for t, clients, anchors in pop_full_steps(fifo, n, state["t"], T):
                out_c[b, t], out_s[b, t], out_time[b, t] = clients, anchors, q.now
                state["t"] = t + 1
                for j in range(N):
                    q.push(q.now + t_dl, "DELIVER", (j, t + 1), priority=(0, j))

        handlers = {"DELIVER": deliver, "DONE": done, "ARRIVE": arrive, "START": start}
        for i in range(N):
            q.push(t_dl, "DELIVER", (i, 0), priority=(0, i))
        if T:
            q.run(handlers, until=lambda: state["t"] >= T, max_events=(T + 1) * (4 * N + 4 * n) + 10)
            q.run(handlers, max_events=(T + 2) * (4 * N + 4 * n) + 10)  # drain: no new steps
        if virt is not None:
            for i in range(N):
                nums = np.array([a for a, _ in arrivals[i]] + [np.iinfo(np.int64).max])
                anchors = np.array([s for _, s in arrivals[i]] + [T])
                nxt = anchors[np.searchsorted(nums, n * np.arange(T))]  # first update not applied before t
                virt[b, :, i] = np.minimum(nxt, np.arange(T))
        if log is not None:
            log.append(q.log)
    return Schedule(out_c, out_s, np.broadcast_to(1.0 / n, out_c.shape), out_time, N, None, virt,
                    name=f"first {n} of {N} arrivals (events)")


# ======================================================================================
# AFL-DGA: participation generators (the matrix itself is fltheory.schedules.Participation)
# ======================================================================================
def _per_round(value, name: str, N: int, T: int, low: int):
    """An int or an (N, T) integer array, checked (``>= low``) and broadcast to (N, T)."""
    if np.ndim(value) == 0:
        return np.full((N, T), V.integer(value, name, low=low, high=10**9), dtype=np.int64)
    arr = V.array(value, name, xp=np, kind="integer", shape=(N, T), low=low).astype(np.int64)
    return arr


def _t_d_max(t_d, td_convention: str) -> int:
    """The largest allowed staleness tau: ``t_d`` (theory, synchronous = 1) or ``t_d + 1``
    (the paper's experiments, where synchronous is labelled ``t_d = 0``)."""
    td_convention = V.choice(td_convention, "td_convention", ("theory", "experiments"))
    low = 1 if td_convention == "theory" else 0
    t_d = V.integer(t_d, "t_d", low=low, high=10**6)
    return t_d if td_convention == "theory" else t_d + 1


def synchronous_participation(*, N: int, T: int, K=1, D=0, weights=None) -> Participation:
    """Every client in every round (``tau = 1``); ``K`` and ``D`` an int or (N, T).

    With ``D >= 1`` this is the pipelined DGA schedule (the next round's computation overlaps the
    communication of the global gradient); with ``D = 0`` there is no overlap.

    >>> synchronous_participation(N=2, T=3, K=2, D=1).A.tolist()
    [[3, 5, 7], [3, 5, 7]]
    """
    N = V.integer(N, "N", low=1, high=10**5)
    T = V.integer(T, "T", low=1, high=10**6)
    V.check_size(N * T, "the participation matrix")
    return Participation(np.ones((N, T), np.int64), _per_round(K, "K", N, T, 1), _per_round(D, "D", N, T, 0), weights)


def anarchic_participation(*, N: int, T: int, t_d: int, p=0.5, K=1, D=0, seed: int = 0, weights=None,
                           td_convention: str = "theory") -> Participation:
    """Random anarchic participation within Assumption 4.

    Client ``i`` participates in round 0 and then in round ``r`` with probability ``p`` (a keyed
    uniform draw of ``(seed, r, i)``), and is *forced* to participate whenever skipping ``r`` would
    make its staleness ``tau_i^r = r - lambda_i(r-1) + 1`` exceed the allowed maximum (``t_d``, or
    ``t_d + 1`` with ``td_convention="experiments"``).  ``p`` is a scalar or one per client.

    >>> part = anarchic_participation(N=3, T=8, t_d=2, p=0.2, seed=1)
    >>> part.t_d <= 2, bool(part.P[:, 0].all())
    (True, True)
    """
    N = V.integer(N, "N", low=1, high=10**5)
    T = V.integer(T, "T", low=1, high=10**6)
    tmax = _t_d_max(t_d, td_convention)
    p = V.array(p, "p", xp=np, low=0.0, high=1.0)
    if p.ndim and p.shape != (N,):
        raise ScheduleError(f"p must be a scalar or have N={N} entries; got shape {p.shape}")
    seed = V.integer(seed, "seed", low=0, high=2**63 - 1)
    V.check_size(N * T, "the participation matrix")
    Kr, Dr = _per_round(K, "K", N, T, 1), _per_round(D, "D", N, T, 0)
    u = KeyedStream(seed, "anarchic participation").uniform(round=np.arange(T)[None, :], client=np.arange(N)[:, None])
    want = u < np.broadcast_to(p, (N,))[:, None]
    P = np.zeros((N, T), bool)
    last = np.zeros(N, np.int64)
    P[:, 0] = True
    for r in range(1, T):
        P[:, r] = want[:, r] | (r - last + 1 > tmax)
        last = np.where(P[:, r], r, last)
    return Participation(P.astype(np.int64), Kr, Dr, weights).check(t_d=tmax)


def fast_k_participation(*, N: int, T: int, k: int, t_d: int, K=1, D=0, spread: float = 0.5, seed: int = 0,
                         weights=None, td_convention: str = "theory") -> Participation:
    """"fast-k": in every round the ``k`` clients that finish their ``K`` local iterations first, plus
    every client forced by Assumption 4.

    Client ``i``'s time per local iteration in round ``r`` is log-normal, ``exp(spread * z)`` with
    ``z`` a keyed standard normal of ``(seed, r, i)``; its completion time is ``K[i, r]`` times it.
    With ``t_d = 1`` (theory convention) every client is forced in every round.

    >>> part = fast_k_participation(N=5, T=6, k=1, t_d=2, seed=0)
    >>> bool((part.P[:, 1:].sum(axis=0) >= 1).all()), part.t_d <= 2
    (True, True)
    """
    N = V.integer(N, "N", low=1, high=10**5)
    T = V.integer(T, "T", low=1, high=10**6)
    k = V.integer(k, "k", low=0, high=N)
    tmax = _t_d_max(t_d, td_convention)
    spread = V.real(spread, "spread", low=0.0, high=50.0)
    seed = V.integer(seed, "seed", low=0, high=2**63 - 1)
    V.check_size(N * T, "the participation matrix")
    Kr, Dr = _per_round(K, "K", N, T, 1), _per_round(D, "D", N, T, 0)
    z = KeyedStream(seed, "fast-k speeds").normal(round=np.arange(T)[None, :], client=np.arange(N)[:, None])
    finish = Kr * np.exp(spread * z)
    rank = np.argsort(np.argsort(finish, axis=0, kind="stable"), axis=0, kind="stable")   # 0 = fastest
    P = np.zeros((N, T), bool)
    last = np.zeros(N, np.int64)
    P[:, 0] = True
    for r in range(1, T):
        P[:, r] = (rank[:, r] < k) | (r - last + 1 > tmax)
        last = np.where(P[:, r], r, last)
    return Participation(P.astype(np.int64), Kr, Dr, weights).check(t_d=tmax)


def participation_from_tau(tau, K=None, D=None, weights=None) -> Participation:
    """The participation matrix of Algorithm 1's staleness matrix: ``P = [tau == 1]``.

    ``tau`` (N, T) must start at 1 and, in each row, either reset to 1 or grow by one
    (``tau_i^t in {1, tau_i^{t-1} + 1}``); the error names the client and round that break it.

    >>> participation_from_tau([[1, 2, 1, 2], [1, 1, 1, 1]]).P.astype(int).tolist()
    [[1, 0, 1, 0], [1, 1, 1, 1]]
    """
    tau = V.array(tau, "tau", xp=np, kind="integer", ndim=2, low=1).astype(np.int64)
    if tau.shape[1] and np.any(tau[:, 0] != 1):
        i = int(np.flatnonzero(tau[:, 0] != 1)[0])
        raise ScheduleError(f"tau[{i}, 0] = {tau[i, 0]}: every client starts with tau = 1 (participates in round 0)")
    ok = (tau[:, 1:] == 1) | (tau[:, 1:] == tau[:, :-1] + 1)
    if not ok.all():
        i, t = np.argwhere(~ok)[0]
        raise ScheduleError(f"tau[{i}, {t + 1}] = {tau[i, t + 1]}: tau must reset to 1 or grow by one "
                            f"(previous {tau[i, t]})")
    return Participation((tau == 1).astype(np.int64), K, D, weights)
