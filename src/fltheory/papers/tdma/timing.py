r"""The slot-level TDMA channel of Song & Hong, *Asynchronous Federated Learning Using Outdated
Local Updates Over TDMA Channel*: who transmits in each round, the staleness of every update and
the slot at which every round ends -- as an event simulator on the core engine and in closed form.

The channel (Sec. II-III of the paper, made exact)
--------------------------------------------------
Time is slotted from slot 0.  ``N`` devices compute a local update in ``tau_comp`` slots (the same
for all) and cannot compute and transmit at once.  A round ``k`` is ``S`` uplinks of ``r`` slots
each, one device at a time (TDMA), then one downlink broadcast of ``r`` slots; the round ends when
the downlink ends, at slot ``E_k``.  At every uplink opportunity the channel takes the ready device
(finished computing, update not yet sent) with the earliest finish time, ties to the smaller
``khat`` (the round whose model it computed on), then the lower index; when none is ready the
channel idles until the first one is.

* **asynchronous FL** (Algorithm 1): every device starts at slot 0 on ``w_0``; the ``S`` devices
  of round ``k`` receive ``w_{k+1}`` by its downlink and restart at once (``khat = k + 1``);
* **intentional delay** (Algorithm 2, ``alpha``): the devices of round ``k`` receive ``w_{k+alpha+1}``
  by the downlink of round ``k + alpha``; at start-up the groups ``G - alpha .. G - 1`` (0-based)
  start at the end of rounds ``0 .. alpha - 1`` (``S`` must divide ``N``);
* **synchronous FL** over the same channel: only the ``S`` devices of the round compute, on the
  newest model, starting when the previous round ends (devices taken in cyclic index order).

The event simulator (:func:`tdma_schedule`) keeps the devices' finish times in a binary heap of
``(time, khat, index)`` tuples -- the order of the core :class:`fltheory.schedules.EventQueue` with
priority ``(khat, index)``, which *is* the channel's choice rule, so the heap is the FIFO of ready
devices (plain tuples: a T = 10^5 run pops about 10^5 devices).  It returns a
:class:`TDMATiming` whose ``schedule`` is a core :class:`~fltheory.schedules.Schedule`
(``client``, ``start = khat``, weight ``1/S``, ``time = E_k``) that the exact dynamics of
:mod:`fltheory.delayed` consume.

Closed forms (vectorised, beside the simulator; the tests check them against it)
---------------------------------------------------------------------------------
With ``c = r (S + 1)`` slots of communication per round and ``G = ceil(N/S)`` groups:

* staleness (15): ``d_{n,k} = min(k, G - 1)`` when ``S`` divides ``N``; for any ``N`` the update in
  uplink ``u`` of round ``k`` has staleness ``k`` while ``k S + u < N`` and ``ceil((N - u)/S) - 1``
  afterwards (so it is ``floor(N/S) - 1`` or ``ceil(N/S) - 1`` from round ``G`` on, and the mean over
  the ``S`` uplinks of every such round is exactly ``N/S - 1``); with intentional delay
  ``min(k, G - 1 - alpha)`` (:func:`staleness`);
* end times: the restart of the devices of round ``k`` is seen ``m`` rounds later, with the *lag*
  ``m = G - alpha`` (asynchronous) or ``m = 1`` (synchronous), and
  ``E_k = max(E_{k-1}, E_{k-m} + tau_comp) + c``.  If ``tau_comp <= (m - 1) c`` (communication-limited)
  ``E_k = tau_comp + (k + 1) c``; otherwise, with ``k = q m + g``,
  ``E_k = tau_comp + q (tau_comp + c) + (g + 1) c`` -- one idle gap per cycle (:func:`end_time`);
* rounds completed by the deadline ``T``: ``#{k : E_k <= T}`` (:func:`rounds_done`); the paper's
  Table I lists this number plus one (the models ``w_0 .. w_K``);
* the average round length (10): ``(E_{k+G} - E_k)/G = max(c, (tau_comp + c)/G)`` (:func:`tau_async`);
* Proposition 1: ``d* = ceil(tau_comp / (r (S+1)))`` and ``alpha* = max(0, G - 1 - d*)``; intentional
  delay keeps every ``E_k`` of asynchronous FL **iff** ``alpha <= alpha*`` (:func:`alpha_star`).

Example
-------
The paper's Fig. 2 (``N = 6``, ``S = 2``, ``r = 1``, ``tau_comp = 2``):

>>> tm = tdma_schedule(N=6, S=2, tau_comp=2, r=1, K=4)
>>> tm.clients.tolist(), tm.uplink.tolist(), tm.downlink.tolist()
([[0, 1], [2, 3], [4, 5], [0, 1]], [[2, 3], [5, 6], [8, 9], [11, 12]], [4, 7, 10, 13])
>>> tm.staleness.tolist(), end_time(N=6, S=2, tau_comp=2, r=1, k=[0, 1, 2, 3]).tolist()
([[0, 0], [1, 1], [2, 2], [2, 2]], [5, 8, 11, 14])
>>> [int(rounds_done(N=20, S=S, tau_comp=4, r=1, T=10**5)) + 1 for S in (1, 2, 5, 10, 20)]  # Table I
[49999, 33333, 16667, 9091, 4001]
"""
from __future__ import annotations

import heapq
from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from ... import validation as V
from ...schedules import Schedule

__all__ = [
    "TDMATiming", "tdma_schedule", "groups", "staleness", "khat", "end_time", "rounds_done", "tau_async",
    "tau_sync", "alpha_star", "d_star", "lag", "table1", "SCHEMES",
]

SCHEMES = ("async", "sync")
_MAX_N, _MAX_R, _MAX_TAU, _MAX_K, _MAX_T = 10**6, 10**4, 10**9, 10**7, 10**15


# ======================================================================================
# the event simulator
# ======================================================================================
@dataclass(frozen=True, eq=False)
class TDMATiming:
    """The slot-level run of the channel: the core ``schedule`` and the slots of every round.

    ``uplink[k, u]`` is the first slot of the ``u``-th uplink of round ``k`` (in transmission
    order), ``downlink[k]`` the first slot of its downlink and ``end[k] = E_k`` the slot at which
    it ends (the downlink occupies ``downlink[k] .. end[k] - 1``).  ``clients``, ``khat`` and
    ``staleness`` (``k - khat``) are ``(K, S)`` views of the schedule.
    """

    schedule: Schedule
    uplink: np.ndarray
    downlink: np.ndarray
    end: np.ndarray
    N: int
    S: int
    tau_comp: int
    r: int
    alpha: int
    scheme: str

    @property
    def G(self) -> int:
        return -(-self.N // self.S)

    @property
    def K(self) -> int:
        return int(self.end.shape[0])

    @property
    def clients(self) -> np.ndarray:
        return self.schedule.client[0]

    @property
    def khat(self) -> np.ndarray:
        return self.schedule.start[0]

    @property
    def staleness(self) -> np.ndarray:
        return self.schedule.staleness[0]

    def rounds_done(self, T: int) -> int:
        """``#{k : E_k <= T}`` among the simulated rounds."""
        T = V.integer(T, "T", low=0, high=_MAX_T)
        return int(np.searchsorted(self.end, T, side="right"))


def _channel_inputs(N, S, tau_comp, r, alpha, scheme):
    N = V.integer(N, "N", low=1, high=_MAX_N)
    S = V.integer(S, "S", low=1, high=_MAX_N)
    if S > N:
        raise V.InputError(f"the group size S={S} must be <= N={N}")
    tau_comp = V.integer(tau_comp, "tau_comp", low=1, high=_MAX_TAU)
    r = V.integer(r, "r", low=1, high=_MAX_R)
    V.choice(scheme, "scheme", SCHEMES)
    G = -(-N // S)
    alpha = V.integer(alpha, "alpha", low=0, high=max(G - 1, 0))
    if alpha and (N % S or scheme != "async"):
        raise V.InputError(f"intentional delay alpha={alpha} needs asynchronous FL with S dividing N "
                           f"(got scheme={scheme!r}, N={N}, S={S})")
    return N, S, tau_comp, r, alpha, G


def tdma_schedule(*, N: int, S: int, tau_comp: int, r: int = 1, K: int | None = None, T: int | None = None,
                  alpha: int = 0, scheme: str = "async") -> TDMATiming:
    """Run the TDMA channel slot by slot (see the module docstring) for ``K`` rounds, or for every
    round that ends by the deadline ``T`` (``E_k <= T``); give exactly one of ``K`` and ``T``.

    Problem class: ``N`` devices with equal computation time ``tau_comp`` slots, ``r`` slots per
    transmission, groups of ``S`` per round.  Method: Algorithm 1 (``alpha = 0``), Algorithm 2
    (``alpha`` in ``0 .. G-1``, ``S`` dividing ``N``) or synchronous FL (``scheme="sync"``).

    >>> tm = tdma_schedule(N=6, S=2, tau_comp=2, r=1, K=6, alpha=1)    # intentional delay
    >>> tm.khat.tolist()                                # corrected (31): khat = k - G + alpha + 1 at k = 2
    [[0, 0], [0, 0], [1, 1], [2, 2], [3, 3], [4, 4]]
    >>> tm.end.tolist() == tdma_schedule(N=6, S=2, tau_comp=2, r=1, K=6).end.tolist()  # alpha <= alpha* = 1
    True
    """
    N, S, tau_comp, r, alpha, G = _channel_inputs(N, S, tau_comp, r, alpha, scheme)
    if (K is None) == (T is None):
        raise V.InputError("give exactly one of K (number of rounds) and T (deadline in slots)")
    if K is not None:
        K = V.integer(K, "K", low=0, high=_MAX_K)
        cap = K
    else:
        T = V.integer(T, "T", low=0, high=_MAX_T)
        cap = T // (r * (S + 1)) + 1                    # every round takes at least r (S + 1) slots
    V.check_size(cap * S * 3, "the TDMA schedule", hint="use a smaller deadline T or fewer rounds K")
    q: list[tuple[int, int, int]] = []                  # (finish time, khat, device)
    pending = defaultdict(list)                         # round j -> devices that restart when it ends
    if scheme == "sync":
        first = range(S)
    elif alpha:
        first = range((G - alpha) * S)
        for j in range(1, alpha + 1):                   # group G - alpha - 1 + j starts after round j - 1
            pending[j - 1].extend(range((G - alpha - 1 + j) * S, (G - alpha + j) * S))
    else:
        first = range(N)
    for n in first:
        heapq.heappush(q, (tau_comp, 0, n))
    client, khat, up, down, end = [], [], [], [], []
    t, k = 0, 0
    while k < cap:
        row_c, row_h, row_u = [], [], []
        for _ in range(S):
            ready, k_hat, n = heapq.heappop(q)          # earliest finish, then smaller khat, then index
            start = max(t, ready)
            row_c.append(n)
            row_h.append(k_hat)
            row_u.append(start)
            t = start + r
        E = t + r
        if T is not None and E > T:
            break
        client.append(row_c)
        khat.append(row_h)
        up.append(row_u)
        down.append(t)
        end.append(E)
        t = E
        if scheme == "sync":
            nxt = [((k + 1) * S + u) % N for u in range(S)]
        else:
            pending[k + alpha].extend(row_c)
            nxt = sorted(pending.pop(k, []))
        for n in nxt:
            heapq.heappush(q, (E + tau_comp, k + 1, n))
        k += 1
    K_run = len(end)
    shape = (K_run, S)
    c = np.asarray(client, dtype=np.int64).reshape(shape)
    h = np.asarray(khat, dtype=np.int64).reshape(shape)
    e = np.asarray(end, dtype=np.int64)
    sched = Schedule(c[None], h[None], np.full((1,) + shape, 1.0 / S), e[None].astype(float), N,
                     name=f"TDMA {scheme} N={N} S={S} tau_comp={tau_comp} r={r} alpha={alpha}")
    return TDMATiming(sched, np.asarray(up, dtype=np.int64).reshape(shape), np.asarray(down, dtype=np.int64), e,
                      N, S, tau_comp, r, alpha, scheme)


# ======================================================================================
# closed forms
# ======================================================================================
def _ints(name, value, low, high, empty=False):
    return V.array(value, name, kind="integer", low=low, high=high, empty=empty)


def _joint(**values):
    """Refuse, by name, array arguments whose shapes do not broadcast together (checked on the raw inputs,
    before any arithmetic between them)."""
    shapes = {}
    for name, v in values.items():
        try:
            shapes[name] = np.shape(v)
        except (ValueError, TypeError):   # ragged: the argument's own check refuses it
            return
    try:
        np.broadcast_shapes(*shapes.values())
    except ValueError:
        raise V.InputError("the array arguments must broadcast together; got shapes "
                           + ", ".join(f"{n}={s}" for n, s in shapes.items() if s)) from None


def _divisible(N, S, what):
    N_, S_ = np.broadcast_arrays(N, S)
    bad = np.flatnonzero((N_ % S_).reshape(-1) != 0)
    if bad.size:
        i = int(bad[0])
        raise V.InputError(f"{what} assumes S divides N (the paper's setting); got N={N_.reshape(-1)[i]}, "
                           f"S={S_.reshape(-1)[i]}")


def _NS(N, S):
    N, S = _ints("N", N, 1, _MAX_N), _ints("S", S, 1, _MAX_N)
    if np.any(S > N):
        raise V.InputError("the group size S must be <= N")
    return N, S


def groups(*, N, S):
    """``G = ceil(N / S)``, the number of TDMA groups (elementwise).

    >>> int(groups(N=20, S=3))
    7
    """
    N, S = _NS(N, S)
    return -(-N // S)


def _alpha(alpha, G):
    a = _ints("alpha", alpha, 0, _MAX_N)
    if np.any(a > G - 1):
        raise V.InputError("the intentional delay alpha must be <= G - 1 (G = N // S groups; N and S set G)")
    return a


def staleness(*, N, S, k, slot=0, alpha=0):
    """Staleness ``d_{n,k} = k - khat_n`` of the update sent in uplink ``slot`` of round ``k`` (elementwise).

    The paper's (15) for ``S`` dividing ``N``, with intentional delay: ``min(k, G - 1 - alpha)``.
    For ``S`` not dividing ``N`` (``alpha = 0``) the FIFO rotation gives ``k`` while
    ``k S + slot < N`` and ``ceil((N - slot)/S) - 1`` afterwards.  Exact (equal to the event
    simulator for every round; the tests check it).

    >>> staleness(N=6, S=2, k=[0, 1, 2, 3, 9]).tolist(), staleness(N=6, S=2, k=9, alpha=1).tolist()
    ([0, 1, 2, 2, 2], 1)
    >>> staleness(N=5, S=2, k=7, slot=[0, 1]).tolist()        # floor(5/2) - 1 and ceil(5/2) - 1
    [2, 1]
    """
    _joint(N=N, S=S, k=k, slot=slot, alpha=alpha)
    N, S = _NS(N, S)
    k = _ints("k", k, 0, _MAX_K, empty=True)
    slot = _ints("slot", slot, 0, _MAX_N)
    if np.any(slot >= S):
        raise V.InputError("slot must be < S (uplinks of a round are numbered 0 .. S-1)")
    G = -(-N // S)
    alpha = _alpha(alpha, G)
    if np.any(alpha > 0):
        _divisible(N, S, "intentional delay")
    steady = -(-(N - slot) // S) - 1 - alpha
    return np.where(k * S + slot < N - alpha * S, np.minimum(k, steady), steady)


def khat(*, N, S, k, alpha=0):
    """The model index ``khat_n`` used by the devices of round ``k`` (``S`` dividing ``N``), the
    corrected form of the paper's (31): ``0`` for ``k <= G - alpha - 1``, ``k - G + alpha + 1`` for
    ``G - alpha <= k`` (the printed (31) is one round off).

    >>> khat(N=6, S=2, k=[0, 1, 2, 3, 4], alpha=1).tolist()
    [0, 0, 1, 2, 3]
    """
    _joint(N=N, S=S, k=k, alpha=alpha)
    N, S = _NS(N, S)
    _divisible(N, S, "khat")
    k = _ints("k", k, 0, _MAX_K)
    G = N // S
    alpha = _alpha(alpha, G)
    return k - np.minimum(k, G - 1 - alpha)


def _timing_inputs(N, S, tau_comp, r, alpha, scheme, what):
    _joint(N=N, S=S, tau_comp=tau_comp, r=r, alpha=alpha)
    N, S = _NS(N, S)
    _divisible(N, S, what)
    tau = _ints("tau_comp", tau_comp, 1, _MAX_TAU)
    r = _ints("r", r, 1, _MAX_R)
    V.choice(scheme, "scheme", SCHEMES)
    G = N // S
    alpha = _alpha(alpha, G)
    if scheme == "sync" and np.any(alpha > 0):
        raise V.InputError("intentional delay alpha applies to asynchronous FL only")
    m = 1 if scheme == "sync" else G - alpha
    return tau, r * (S + 1), np.asarray(m), G


def lag(*, N, S, alpha=0, scheme="async"):
    """``m``: the number of rounds after which the devices of a round compute again (``G - alpha``
    asynchronous, ``1`` synchronous); the end times depend on ``(tau_comp, c, m)`` only.

    >>> int(lag(N=100, S=1, alpha=74))
    26
    """
    _joint(N=N, S=S, alpha=alpha)
    N, S = _NS(N, S)
    _divisible(N, S, "lag")
    V.choice(scheme, "scheme", SCHEMES)
    alpha = _alpha(alpha, N // S)
    return np.asarray(1) + 0 * alpha if scheme == "sync" else N // S - alpha


def end_time(*, N, S, tau_comp, r=1, k, alpha=0, scheme="async"):
    """Exact end slot ``E_k`` of round ``k`` (``S`` dividing ``N``; elementwise).

    Communication-limited (``tau_comp <= (m-1) r (S+1)``): ``tau_comp + (k+1) r (S+1)``; else, with
    ``k = q m + g``, ``tau_comp + q (tau_comp + r(S+1)) + (g+1) r (S+1)`` (``m`` = :func:`lag`).
    Synchronous FL: ``(k+1)(tau_comp + r(S+1))``.  Exact (tests: against :func:`tdma_schedule`).

    >>> end_time(N=20, S=20, tau_comp=4, r=1, k=[0, 1, 2]).tolist()    # G = 1: synchronous
    [25, 50, 75]
    >>> end_time(N=4, S=1, tau_comp=9, r=1, k=[0, 1, 2, 3, 4]).tolist()   # compute-limited, one gap
    [11, 13, 15, 17, 22]
    """
    _joint(N=N, S=S, tau_comp=tau_comp, r=r, k=k, alpha=alpha)
    tau, c, m, _ = _timing_inputs(N, S, tau_comp, r, alpha, scheme, "end_time")
    k = _ints("k", k, 0, _MAX_K, empty=True)
    q, g = k // m, k % m
    comm = tau <= (m - 1) * c
    return np.where(comm, tau + (k + 1) * c, tau + q * (tau + c) + (g + 1) * c)


def rounds_done(*, N, S, tau_comp, r=1, T, alpha=0, scheme="async"):
    """``K_done(T) = #{k : E_k <= T}``, the rounds completed by the deadline ``T`` (elementwise).

    Communication-limited: ``max(0, floor((T - tau_comp) / c))``; compute-limited:
    ``Q m + min(m, floor(rem / c))`` with ``T - tau_comp = Q (tau_comp + c) + rem``.  The paper's
    Table I (CIFAR-10, ``N = 20``, ``tau_comp = 4``, ``r = 1``, ``T = 10^5``) lists ``K_done + 1``
    = 49999, 33333, 16667, 9091, 4001 for ``S`` = 1, 2, 5, 10, 20, which its loop bound
    ``floor(T / tau_async)`` of Algorithm 1 does not give (50000, 33333, 16666, 9090, 4000): that
    bound ignores the first ``tau_comp`` slots and the idle gaps.

    >>> rounds_done(N=100, S=[1, 5, 10, 25, 50, 100], tau_comp=50, r=1, T=50000).tolist()
    [24975, 8325, 4540, 1921, 979, 331]
    """
    _joint(N=N, S=S, tau_comp=tau_comp, r=r, T=T, alpha=alpha)
    tau, c, m, _ = _timing_inputs(N, S, tau_comp, r, alpha, scheme, "rounds_done")
    T = _ints("T", T, 0, _MAX_T)
    Tp = T - tau
    comm = tau <= (m - 1) * c
    Q = np.maximum(Tp, 0) // (tau + c)
    rem = np.maximum(Tp, 0) - Q * (tau + c)
    compute = Q * m + np.minimum(m, rem // c)
    return np.where(Tp < 0, 0, np.where(comm, np.maximum(0, Tp // c), compute))


def tau_async(*, N, S, tau_comp, r=1):
    """The paper's (10): average slots per asynchronous round, ``max(r(S+1), (tau_comp + r(S+1))/G)``
    (a float; exactly ``(E_{k+G} - E_k)/G`` for every ``k``).

    >>> float(tau_async(N=20, S=20, tau_comp=4, r=1)), float(tau_async(N=20, S=2, tau_comp=4, r=1))
    (25.0, 3.0)
    """
    tau, c, _, G = _timing_inputs(N, S, tau_comp, r, 0, "async", "tau_async")
    return np.maximum(c, (tau + c) / G).astype(float)


def tau_sync(*, S, tau_comp, r=1):
    """The paper's (8): ``tau_comp + r (S + 1)`` slots per synchronous round.

    >>> int(tau_sync(S=100, tau_comp=50, r=1))
    151
    """
    _joint(S=S, tau_comp=tau_comp, r=r)
    S = _ints("S", S, 1, _MAX_N)
    return _ints("tau_comp", tau_comp, 1, _MAX_TAU) + _ints("r", r, 1, _MAX_R) * (S + 1)


def d_star(*, N, S, tau_comp, r=1):
    """Proposition 1's effective staleness ``d* = ceil(tau_comp / (r (S+1)))``, the integer of (33),
    capped at ``G - 1`` (no delay helps when it reaches ``G - 1``).

    >>> d_star(N=100, S=1, tau_comp=[50, 10, 2], r=1).tolist()
    [25, 5, 1]
    """
    tau, c, _, G = _timing_inputs(N, S, tau_comp, r, 0, "async", "d_star")
    return np.minimum(G - 1, -(-tau // c))


def alpha_star(*, N, S, tau_comp, r=1):
    """Proposition 1, (32): the largest intentional delay that adds no slot to any round,
    ``alpha* = max(0, G - 1 - ceil(tau_comp / (r (S+1))))``.  Exact: the tests find it by
    brute force over every ``alpha`` with the event simulator (end times equal **iff** ``alpha <= alpha*``).

    >>> alpha_star(N=100, S=[1, 5, 10, 25, 50, 100], tau_comp=50, r=1).tolist()
    [74, 10, 4, 1, 0, 0]
    """
    tau, c, _, G = _timing_inputs(N, S, tau_comp, r, 0, "async", "alpha_star")
    return np.maximum(0, G - 1 - -(-tau // c))


def table1():
    """The paper's Table I (CIFAR-10: ``N = 20``, ``tau_comp = 4``, ``r = 1``, ``T = 10^5``): ``{S: K_done + 1}``.

    >>> table1()
    {1: 49999, 2: 33333, 5: 16667, 10: 9091, 20: 4001}
    """
    S = np.array([1, 2, 5, 10, 20])
    return {int(s): int(v) + 1 for s, v in zip(S, rounds_done(N=20, S=S, tau_comp=4, r=1, T=10**5))}
