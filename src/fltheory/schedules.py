"""Time is data: event-driven schedules of stale updates, as integer arrays.

Three papers apply *stale* client updates to a server model according to a timing process:
asynchronous FL over a TDMA channel (a round robin of device groups), DeFedAvg (the first
``n`` updates to arrive, from clients of random speeds) and AFL-DGA (an anarchic participation
matrix with per-round local iterations ``K`` and global-gradient delays ``D``).  This module
computes those timing processes *first*, as arrays, independently of any gradient noise (the
proofs need the delays to be independent of the noise); the math then consumes the arrays in
vectorised form (:mod:`fltheory.delayed`).

The one result every paper produces is a :class:`Schedule`:

* ``client[b, t, u]`` -- the client of the ``u``-th update applied at server step ``t`` of timing
  seed (or configuration) ``b``; ``-1`` marks an empty slot;
* ``start[b, t, u]``  -- the server step whose model that update started from (its anchor
  ``tau_i(t)``), so its staleness is ``t - start``;
* ``weight[b, t, u]`` -- its coefficient in the aggregate (``1/n`` for DeFedAvg, ``1/S`` for TDMA,
  ``p_i`` for AFL-DGA; multiplicities of a client sampled twice are folded into the weight);
* ``time[b, t]``      -- the wall-clock time at which step ``t`` completes;
* optionally ``local_steps`` (the number of local iterations of each update) and
  ``virtual_start[b, t, i]`` (the model every client is working from when step ``t`` begins, the
  "virtual" anchor that the DeFedAvg proofs apply to every client).

A server step ``t`` maps ``x_t`` to ``x_{t+1}`` using the listed updates.  Staleness, its maximum
``lambda``, per-client staleness and participation counts are derived properties, and
:meth:`Schedule.check_delay` validates a bounded-delay assumption with an error that names the
configuration, step, slot and client that break it.

This module is the engine: the :class:`Schedule` arrays and their checks, :class:`ScheduleError`,
the deterministic :class:`EventQueue` on a virtual clock (the reference machinery of every
event-driven server), and :class:`Participation`, AFL-DGA's participation matrix with ``K`` and
``D``, its derived quantities, Assumption 4 (``t_d``) and its :class:`Schedule`.  The functions that
build particular schedules live in :mod:`fltheory.schedule_generators` (round robin, the delay
oracle, first-``n`` arrivals, the participation generators); every one of them is also importable
from here (``fltheory.schedules.round_robin``), and ``__all__`` lists both rooms.

Example
-------
>>> from fltheory import schedules
>>> s = schedules.round_robin(N=6, S=2, T=6)
>>> s.client[0].tolist()
[[0, 1], [2, 3], [4, 5], [0, 1], [2, 3], [4, 5]]
>>> s.staleness[0].tolist()
[[0, 0], [1, 1], [2, 2], [2, 2], [2, 2], [2, 2]]
>>> int(s.max_staleness.max())
2
"""
from __future__ import annotations

import heapq
import itertools
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from . import validation as V
from .validation import InputError

__all__ = [
    "ScheduleError", "EventQueue", "Event", "Schedule", "round_robin", "from_delays",
    "first_n_arrivals", "first_n_arrivals_events", "pop_full_steps", "compute_times", "Participation",
    "participation_from_tau", "synchronous_participation", "anarchic_participation", "fast_k_participation",
]


class ScheduleError(InputError):
    """An invalid schedule, or one that breaks the assumption it is checked against."""


# ======================================================================================
# the event engine
# ======================================================================================
@dataclass(order=True, frozen=True)
class Event:
    """An event of the virtual clock; events are ordered by ``(time, priority, seq)``."""

    time: float
    priority: Any
    seq: int
    kind: str = field(compare=False)
    payload: Any = field(compare=False, default=None)


class EventQueue:
    """A deterministic discrete-event queue on a virtual clock (no wall-clock sleeps).

    Events pop in the order ``(time, priority, seq)``: ties in time go to the smaller
    ``priority`` (any comparable value, e.g. ``(2, client)``), then to the earlier insertion.
    ``now`` is the time of the last popped event; scheduling into the past is an error.  Every
    popped event is kept in ``log`` when ``record=True``, so a run can be replayed or compared.

    Example
    -------
    >>> q = EventQueue()
    >>> _ = q.push(2.0, "b"); _ = q.push(1.0, "a"); _ = q.push(2.0, "c", priority=-1)
    >>> [e.kind for e in q.drain()]
    ['a', 'c', 'b']
    """

    def __init__(self, *, record: bool = False):
        self._heap: list[tuple] = []      # (time, priority, seq, event): tuples compare in C
        self._seq = itertools.count()
        self.now = 0.0
        self.record = V.flag(record, "record")
        self.log: list[Event] = []

    def push(self, time: float, kind: str, payload: Any = None, *, priority: Any = 0) -> Event:
        if type(time) is not float:          # the fast path of the simulators; text, bools, None refused by name
            time = float(time) if type(time) is int and abs(time) < 2**1023 else V.real(time, "time", finite=False)
        if math.isnan(time):
            raise ScheduleError(f"event {kind!r}: time is NaN")
        if type(kind) is not str:
            raise V.InputTypeError(f"kind must be a str (the event's name); got {V.shown(kind)}")
        if type(priority) is not int and type(priority) is not tuple:   # a number or a tuple (compared in order)
            priority = V.real(priority, "priority")
        if time < self.now:
            raise ScheduleError(f"event {kind!r} scheduled at time={time} before the clock's now = {self.now}")
        seq = next(self._seq)
        ev = Event(time, priority, seq, kind, payload)
        heapq.heappush(self._heap, (time, priority, seq, ev))
        return ev

    def pop(self) -> Event:
        ev = heapq.heappop(self._heap)[3]
        self.now = ev.time
        if self.record:
            self.log.append(ev)
        return ev

    def __len__(self) -> int:
        return len(self._heap)

    def drain(self) -> Iterable[Event]:
        while self._heap:
            yield self.pop()

    def run(self, handlers: dict[str, Callable[[Event], Any]], *, until: Callable[[], bool] | None = None,
            max_events: int = 10**8) -> int:
        """Dispatch events to ``handlers[kind]`` until the queue is empty or ``until()`` is true.

        Returns the number of events processed; more than ``max_events`` is an error (no hang).
        """
        count = 0
        while self._heap and not (until is not None and until()):
            ev = self.pop()
            handlers[ev.kind](ev)
            count += 1
            if count > max_events:
                raise ScheduleError(f"more than max_events={max_events} events: the rules do not terminate")
        return count


# ======================================================================================
# the Schedule
# ======================================================================================
def _as_int_array(name, a, ndim_min=1):
    arr = np.asarray(a)
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
            raise ScheduleError(f"{name} must hold integers")
        arr = arr.astype(np.int64)
    if arr.dtype.kind not in "iu":
        raise ScheduleError(f"{name} must be an integer array, got dtype {arr.dtype}")
    if arr.ndim < ndim_min:
        raise ScheduleError(f"{name} must have at least {ndim_min} axes, got shape {arr.shape}")
    return arr


def _broadcast_named(a, shape, name):
    """``a`` broadcast to ``shape``, or a named error."""
    try:
        return np.broadcast_to(a, shape)
    except ValueError:
        raise ScheduleError(f"{name} must broadcast to {tuple(shape)}; got shape {tuple(np.shape(a))}") from None


def _times(times, name: str = "times", finite: bool = False):
    """Completion times as a float array (``None`` stays ``None``); text, bools and objects refused by name."""
    return None if times is None else V.array(times, name, xp=np, finite=finite, empty=True)


@dataclass(frozen=True, eq=False)
class Schedule:
    """Which stale updates each server step applies (see the module docstring).

    Parameters
    ----------
    client, start : (B, T, U) integer arrays (``-1`` marks an empty slot in both).
    weight : (B, T, U) coefficients of the updates in the aggregate (broadcastable; 0 where empty).
    time : (B, T) completion time of every step (default ``t + 1``).
    N : number of clients.
    local_steps : optional (B, T, U) local iterations of each update.
    virtual_start : optional (B, T, N) anchor of every client when step ``t`` begins.
    name : a label.
    reuses_updates : True when one computed update is applied at several steps (a server that
        keeps each client's latest update, as AFL-DGA).  Every slot is otherwise a run of its own,
        with its own gradient noise; with reuse the noise is shared across steps, which the
        fresh-run dynamics of :mod:`fltheory.delayed` refuse to model for noisy clients.

    The weights are the aggregation weights of the server step; the objective's weights (which
    define ``x*``) belong to the federation.

    A (T, U) array is read as one configuration (B = 1).
    """

    client: Any
    start: Any
    weight: Any
    time: Any
    N: int
    local_steps: Any = None
    virtual_start: Any = None
    name: str = "schedule"
    reuses_updates: bool = False

    def __post_init__(self):
        if not isinstance(self.name, str):
            raise V.InputTypeError(f"name must be a str; got {V.shown(self.name)} ({type(self.name).__name__})")
        client = _as_int_array("client", self.client, 2)
        start = _as_int_array("start", self.start, 2)
        if client.ndim == 2:
            client, start = client[None], start[None]
        if client.ndim != 3 or start.shape != client.shape:
            raise ScheduleError(f"client and start must both have shape (B, T, U); got {client.shape} and {start.shape}")
        B, T, U = client.shape
        N = V.integer(self.N, "N", low=1, high=10**9)
        empty = client < 0
        if np.any(empty != (start < 0)):
            raise ScheduleError("client and start must mark the same slots empty (-1)")
        if np.any(client >= N):
            b, t, u = np.argwhere(client >= N)[0]
            raise ScheduleError(f"client index {client[b, t, u]} >= N={N} at configuration {b}, step {t}, slot {u}")
        steps = np.arange(T)[None, :, None]
        late = (start > steps) & ~empty
        if np.any(late):
            b, t, u = np.argwhere(late)[0]
            raise ScheduleError(
                f"update at configuration {b}, step {t}, slot {u} starts from step {start[b, t, u]} > {t}: "
                "a schedule never knows a model before it exists")
        w = V.array(self.weight, "weight", xp=np, finite=False, empty=True).astype(float)
        if w.ndim == 2 and w.shape == (T, U):
            w = w[None]
        try:
            w = np.broadcast_to(w, (B, T, U))
        except ValueError:
            raise ScheduleError(f"weight must broadcast to (B, T, U) = {(B, T, U)}; got {w.shape}") from None
        if not np.all(np.isfinite(w)):
            raise ScheduleError("weight must be finite")
        if np.any((w != 0) & empty):
            w = np.where(empty, 0.0, w)
        time = np.arange(1.0, T + 1)[None] if self.time is None else _times(self.time, "time").astype(float)
        if time.ndim == 1:
            time = time[None]
        try:
            time = np.broadcast_to(time, (B, T))
        except ValueError:
            raise ScheduleError(f"time must broadcast to (B, T) = {(B, T)}; got {time.shape}") from None
        if not np.all(np.isfinite(time)):
            raise ScheduleError("time must be finite")
        if T > 1 and np.any(np.diff(time, axis=1) < 0):
            raise ScheduleError("time must be non-decreasing over steps")
        ls = self.local_steps
        if ls is not None:
            ls = _as_int_array("local_steps", ls, 1)
            ls = np.broadcast_to(ls[None] if ls.ndim == 2 else ls, (B, T, U))
            if np.any((ls < 1) & ~empty):
                raise ScheduleError("local_steps must be >= 1 on every update")
        vs = self.virtual_start
        if vs is not None:
            vs = _as_int_array("virtual_start", vs, 2)
            vs = vs[None] if vs.ndim == 2 else vs
            if vs.shape != (B, T, N):
                raise ScheduleError(f"virtual_start must have shape (B, T, N) = {(B, T, N)}; got {vs.shape}")
        for k, v in dict(client=client, start=start, weight=w, time=time, N=N, local_steps=ls, virtual_start=vs).items():
            object.__setattr__(self, k, v)

    @classmethod
    def _trusted(cls, client, start, weight, time, N, local_steps=None, virtual_start=None, name="schedule",
                 reuses_updates=False) -> "Schedule":
        """A schedule that a generator of :mod:`fltheory.schedule_generators` built (already valid): no
        O(B*T*U) re-checks."""
        obj = object.__new__(cls)
        for k, v in dict(client=client, start=start, weight=weight, time=time, N=int(N), local_steps=local_steps,
                         virtual_start=virtual_start, name=name, reuses_updates=reuses_updates).items():
            object.__setattr__(obj, k, v)
        return obj

    # ----------------------------------------------------------------- shape
    @property
    def B(self) -> int:
        return self.client.shape[0]

    @property
    def T(self) -> int:
        return self.client.shape[1]

    @property
    def U(self) -> int:
        return self.client.shape[2]

    @property
    def mask(self):
        """True on the slots that hold an update (B, T, U)."""
        return self.client >= 0

    def __repr__(self) -> str:
        return f"Schedule({self.name!r}, B={self.B}, T={self.T}, U={self.U}, N={self.N}, lambda={int(self.max_staleness.max()) if self.T else 0})"

    def take(self, index) -> "Schedule":
        """A sub-batch of configurations (an integer keeps a batch axis of one)."""
        idx = [index] if isinstance(index, (int, np.integer)) else index
        pick = lambda a: None if a is None else np.asarray(a)[idx]  # noqa: E731
        return Schedule(pick(self.client), pick(self.start), pick(self.weight), pick(self.time), self.N,
                        pick(self.local_steps), pick(self.virtual_start), self.name, self.reuses_updates)

    def steps(self, stop: int) -> "Schedule":
        """The first ``stop`` server steps."""
        cut = lambda a: None if a is None else np.asarray(a)[:, :stop]  # noqa: E731
        return Schedule(cut(self.client), cut(self.start), cut(self.weight), cut(self.time), self.N,
                        cut(self.local_steps), cut(self.virtual_start), self.name, self.reuses_updates)

    # ----------------------------------------------------------------- staleness
    @property
    def staleness(self):
        """``t - start`` of every update (B, T, U); -1 on empty slots."""
        s = np.arange(self.T)[None, :, None] - self.start
        return np.where(self.mask, s, -1)

    @property
    def max_staleness(self):
        """lambda per configuration (B,): the largest staleness of any applied update."""
        st = self.staleness
        return st.reshape(self.B, -1).max(axis=1, initial=0) if st.size else np.zeros(self.B, int)

    @property
    def client_staleness(self):
        """Staleness of client i's update at step t (B, T, N); -1 where it has none (max if several)."""
        out = np.full((self.B, self.T, self.N), -1, dtype=np.int64)
        b, t, u = np.nonzero(self.mask)
        np.maximum.at(out, (b, t, self.client[b, t, u]), self.staleness[b, t, u])
        return out

    @property
    def virtual_staleness(self):
        """``t - virtual_start`` (B, T, N): how stale every client's current work is at step t."""
        if self.virtual_start is None:
            raise ScheduleError("this schedule did not record virtual anchors (virtual_start)")
        return np.arange(self.T)[None, :, None] - self.virtual_start

    @property
    def participation(self):
        """Number of updates applied per client (B, N), counting each slot once."""
        out = np.zeros((self.B, self.N), dtype=np.int64)
        b, t, u = np.nonzero(self.mask)
        np.add.at(out, (b, self.client[b, t, u]), 1)
        return out

    @property
    def lags(self):
        """Sorted distinct staleness values used anywhere (the delays the dynamics must remember)."""
        st = self.staleness
        return np.unique(st[st >= 0])

    def check_delay(self, lam: int, *, kind: str = "staleness") -> "Schedule":
        """Raise unless every update has staleness <= ``lam`` (bounded delay, e.g. DeFedAvg's
        Assumption 4); the error names configuration, step, slot, client and its staleness.

        ``kind="virtual"`` checks the recorded virtual staleness of every client instead.
        """
        lam = V.integer(lam, "lam", low=0)
        V.choice(kind, "kind", ("staleness", "virtual"))
        if kind == "virtual":
            vs = self.virtual_staleness
            bad = np.argwhere(vs > lam)
            if bad.size:
                b, t, i = bad[0]
                raise ScheduleError(f"virtual staleness {vs[b, t, i]} > lambda={lam} for client {i} at step {t} "
                                    f"of configuration {b}")
            return self
        st = self.staleness
        bad = np.argwhere(st > lam)
        if bad.size:
            b, t, u = bad[0]
            raise ScheduleError(f"staleness {st[b, t, u]} > lambda={lam} for client {self.client[b, t, u]} "
                                f"(slot {u}) at step {t} of configuration {b}")
        return self

    # ----------------------------------------------------------------- construction
    @classmethod
    def from_lists(cls, steps: Sequence[Sequence[Sequence]], *, N: int, times: Sequence[float] | None = None,
                   name: str = "from lists") -> "Schedule":
        """One configuration from a list, per step, of ``(client, start)`` or ``(client, start, weight)``.

        Missing weights are ``1/len(step)``.  This is the replay mode: a schedule written by hand
        or recorded elsewhere runs through the same dynamics as a generated one.

        >>> s = Schedule.from_lists([[(0, 0), (1, 0)], [(1, 0)], [(0, 1, 1.0)]], N=2)
        >>> s.staleness[0].tolist(), s.weight[0].tolist()
        ([[0, 0], [1, -1], [1, -1]], [[0.5, 0.5], [1.0, 0.0], [1.0, 0.0]])
        """
        if not isinstance(steps, (list, tuple)) or not all(isinstance(s, (list, tuple)) for s in steps):
            raise V.InputTypeError(f"steps must be a list of steps, each a list of (client, start[, weight]); got "
                                   f"{V.shown(steps)}")
        T = len(steps)
        U = max((len(s) for s in steps), default=0)
        client = np.full((T, U), -1, dtype=np.int64)
        start = np.full((T, U), -1, dtype=np.int64)
        weight = np.zeros((T, U))
        for t, step in enumerate(steps):
            for u, item in enumerate(step):
                if not isinstance(item, (list, tuple)) or len(item) not in (2, 3):
                    raise ScheduleError(f"steps[{t}][{u}]: expected (client, start[, weight]), got {V.shown(item)}")
                client[t, u] = V.integer(item[0], f"steps[{t}][{u}] client", low=-1)
                start[t, u] = V.integer(item[1], f"steps[{t}][{u}] start", low=-1)
                weight[t, u] = V.real(item[2], f"steps[{t}][{u}] weight") if len(item) == 3 else 1.0 / len(step)
        if np.any((client[client != -1] < 0)):
            raise ScheduleError("client indices must be >= 0")
        times = _times(times, finite=True)
        if times is not None:
            _broadcast_named(times, (T,), "times")
        return cls(client, start, weight, times, N, name=name)


# ======================================================================================
# AFL-DGA: participation matrix, local iterations, global-gradient delays
# ======================================================================================
@dataclass(frozen=True, eq=False)
class Participation:
    """Anarchic participation with delayed gradient averaging: ``P``, ``K``, ``D`` (N x T).

    ``P[i, r] = 1`` when client ``i`` computes in round ``r`` (every client must participate in
    round 0, so the server holds a gradient of everyone from the start); ``K[i, r] >= 1`` local
    iterations (read where ``P = 1``); ``D[i, r] >= 0`` local iterations the client performs after
    round ``r`` before the global gradient of round ``r`` reaches it.  Server step ``t`` uses the
    stored gradient of every client from round ``lambda_i(t) = max{r <= t: P[i, r] = 1}``.

    Derived (all N x T): ``lam`` (``lambda_i(t)``), ``tau = t - lam + 1`` (the paper's local
    computation delay), ``lam_prev`` (the participation before ``lam``, -1 if none),
    ``delay_sum = tau + tau' - 1 = t - lam_prev``, cumulative local iterations ``C`` and the
    arrival counts ``A[i, r] = max(A[i, r-1], C[i, r] + D[i, r])`` (in-order delivery).

    :meth:`check` validates Assumption 4 (``tau <= t_d``) naming the client and round, and
    :meth:`schedule` gives the :class:`Schedule` of the server steps (U = N, start = lam).

    >>> import numpy as np
    >>> p = Participation(np.array([[1, 0, 1, 0], [1, 1, 1, 1]]))
    >>> p.lam.tolist(), p.tau.tolist()
    ([[0, 0, 2, 2], [0, 1, 2, 3]], [[1, 2, 1, 2], [1, 1, 1, 1]])
    >>> p.check(t_d=1)
    Traceback (most recent call last):
    ...
    fltheory.schedules.ScheduleError: Assumption 4 fails: client 0 at round 1 has tau = 2 > t_d = 1 (last participation in round 0)
    """

    P: Any
    K: Any = None
    D: Any = None
    weights: Any = None

    def __post_init__(self):
        P = np.asarray(self.P)
        if P.ndim != 2:
            raise ScheduleError(f"P must be an (N, T) 0/1 matrix, got shape {P.shape}")
        if not np.all((P == 0) | (P == 1)):
            raise ScheduleError("P must contain only 0 and 1")
        P = P.astype(bool)
        N, T = P.shape
        if T and not np.all(P[:, 0]):
            i = int(np.flatnonzero(~P[:, 0])[0])
            raise ScheduleError(f"P[{i}, 0] = 0: every client must participate in round 0 (the server needs a gradient "
                                "of every client at step 0)")
        K = np.ones((N, T), dtype=np.int64) if self.K is None else _broadcast_named(_as_int_array("K", self.K, 0), (N, T), "K")
        if np.any(K[P] < 1):
            i, r = np.argwhere(P & (K < 1))[0]
            raise ScheduleError(f"K[{i}, {r}] = {K[i, r]}: a participating client runs >= 1 local iteration")
        D = np.zeros((N, T), dtype=np.int64) if self.D is None else _broadcast_named(_as_int_array("D", self.D, 0), (N, T), "D")
        if np.any(D < 0):
            i, r = np.argwhere(D < 0)[0]
            raise ScheduleError(f"D[{i}, {r}] = {D[i, r]} must be >= 0")
        from .problems import validate_weights  # noqa: PLC0415

        w = np.full(N, 1.0 / N) if self.weights is None else validate_weights(self.weights)
        if w.shape != (N,):
            raise ScheduleError(f"weights must have N={N} entries; got shape {w.shape}")
        for k, v in dict(P=P, K=K, D=D, weights=w).items():
            object.__setattr__(self, k, v)

    @property
    def N(self) -> int:
        return self.P.shape[0]

    @property
    def T(self) -> int:
        return self.P.shape[1]

    @property
    def lam(self):
        r = np.where(self.P, np.arange(self.T)[None, :], -1)
        return np.maximum.accumulate(r, axis=1)

    @property
    def tau(self):
        return np.arange(self.T)[None, :] - self.lam + 1

    @property
    def lam_prev(self):
        lam = self.lam
        before = np.concatenate([np.full((self.N, 1), -1), lam[:, :-1]], axis=1)  # last participation <= r - 1
        return np.take_along_axis(before, lam, axis=1)

    @property
    def delay_sum(self):
        """``tau_i^t + tau_i^{t - tau_i^t} - 1 = t - lam_prev`` (<= 2 t_d - 1 under Assumption 4)."""
        return np.arange(self.T)[None, :] - self.lam_prev

    @property
    def C(self):
        return np.cumsum(np.where(self.P, self.K, 0), axis=1)

    @property
    def A(self):
        return np.maximum.accumulate(self.C + self.D, axis=1)

    @property
    def t_d(self) -> int:
        """The smallest t_d for which Assumption 4 holds."""
        return int(self.tau.max(initial=1))

    def check(self, *, t_d: int) -> "Participation":
        """Assumption 4: ``tau_i^t <= t_d`` for every client and round (error names the first failure)."""
        t_d = V.integer(t_d, "t_d", low=1, high=10**9)
        bad = np.argwhere(self.tau > t_d)
        if bad.size:
            i, t = bad[np.argmin(bad[:, 1])]
            raise ScheduleError(f"Assumption 4 fails: client {i} at round {t} has tau = {self.tau[i, t]} > t_d = {t_d} "
                                f"(last participation in round {self.lam[i, t]})")
        return self

    def schedule(self) -> Schedule:
        """Server step ``t`` applies every client's stored gradient of round ``lam_i(t)`` with weight ``p_i``.

        ``local_steps`` is ``K[i, lam_i(t)]``; AFL-DGA's stored gradient is the *average* of those
        local gradients (``LocalSGD(..., output="gradient_mean")``).  A stored gradient is applied
        again at every step until its client participates anew (``reuses_updates`` unless every
        client participates in every round), so with noisy gradients its noise is shared across
        steps: the exact dynamics of such a server keep the stored gradients as registers of
        :class:`fltheory.delayed_registers.RegisterMoments`.  The means (and everything without noise) follow
        this schedule exactly, and so do client states when ``D = 0`` and every ``K = 1``.
        """
        lam = self.lam.T  # (T, N)
        client = np.broadcast_to(np.arange(self.N), lam.shape)
        ks = np.take_along_axis(self.K, self.lam, axis=1).T
        return Schedule(client, lam, np.broadcast_to(self.weights, lam.shape), None, self.N, ks,
                        name="participation", reuses_updates=not bool(self.P.all()))


# the generators, re-exported: ``fltheory.schedules.<name>`` and ``from fltheory.schedules import <name>`` keep
# working.  At the bottom, since they import the engine above (the package imports this module first).
from .schedule_generators import (  # noqa: E402
    anarchic_participation, compute_times, fast_k_participation, first_n_arrivals, first_n_arrivals_events,
    from_delays, participation_from_tau, pop_full_steps, round_robin, synchronous_participation,
)
