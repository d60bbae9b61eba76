"""Threads for the NumPy paths that work through independent blocks.

Several NumPy paths of the package already work through their batch in cache-sized blocks: the
keyed normal numbers (:class:`fltheory.backend.KeyedStream`), the closed-form fixed points of
FedOpt (:func:`fltheory.papers.local_adaptivity.exact.fixed_point`) and the evaluation of a
statement on a large grid (:meth:`fltheory.symbolic.Statement.evaluate`).  The blocks are
independent and NumPy releases the interpreter lock inside its loops, so the blocks are shared
out among a few threads.  Each thread runs exactly the operations one thread would run on its
blocks, in the same order, so **the results are bit for bit the same for any number of
threads**.  Where the work is small, or when the call is already inside one of these threads,
it runs in the calling thread.

The number of threads is ``os.sched_getaffinity`` (the cores this process may use), at most
8, unless the environment variable ``FLTHEORY_NUM_THREADS`` or :func:`set_num_threads` says
otherwise.  The setting is process-wide, not per thread.  Set it to 1 where an outer layer
already keeps every core busy (one Dask worker per core, say).

Example
-------
>>> import numpy as np
>>> from fltheory import parallel
>>> from fltheory.backend import KeyedStream
>>> s = KeyedStream(seed=1, purpose="noise")
>>> with parallel.threads(1):
...     one = s.normal(config=np.arange(5000)[:, None], round=0, client=np.arange(4)[None, :], size=(8,))
>>> with parallel.threads(2):
...     two = s.normal(config=np.arange(5000)[:, None], round=0, client=np.arange(4)[None, :], size=(8,))
>>> bool(np.array_equal(one, two))
True
"""
from __future__ import annotations

import contextlib
import contextvars
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Iterator

from . import validation as V

__all__ = ["num_threads", "set_num_threads", "threads", "run_parts"]

MAX_DEFAULT = 8          # threads by default at most (the blocked paths are memory-bound beyond)
_ENV = "FLTHEORY_NUM_THREADS"

_lock = threading.Lock()
_state: dict = {"n": None, "pool": None, "pool_n": 0}
_inside = threading.local()   # set in the pool's threads: a nested call runs serially (no deadlock)


def _after_fork_in_child() -> None:
    """A forked child has none of the parent's pool threads: start afresh (a pool whose threads are
    gone would never run a part)."""
    global _lock
    _lock = threading.Lock()
    _state["pool"], _state["pool_n"] = None, 0


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _default() -> int:
    raw = os.environ.get(_ENV)
    if raw is not None and raw.strip():
        text = raw.strip()
        # ASCII digits only: str.isdigit also accepts "²" and other digits int() cannot read
        if not (text.isascii() and text.isdigit()):
            raise V.InputError(f"the environment variable {_ENV} must be an integer in [1, 1024] written in "
                               f"the digits 0-9; got {V.shown(raw)}")
        if len(text) > 6:   # past the bound whatever it says (and int() of thousands of digits is refused)
            raise V.InputError(f"the environment variable {_ENV} must be an integer in [1, 1024]; got "
                               f"{V.shown(raw)}")
        return V.integer(int(text), f"the environment variable {_ENV}", low=1, high=1024)
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - platforms without affinity (macOS, Windows)
        cores = os.cpu_count() or 1
    return max(1, min(cores, MAX_DEFAULT))


def num_threads() -> int:
    """The number of threads the blocked NumPy paths use."""
    if _state["n"] is None:
        _state["n"] = _default()
    return _state["n"]


def set_num_threads(n: int) -> int:
    """Use ``n`` threads (1 <= n <= 1024) for the blocked NumPy paths; returns the previous number."""
    n = V.integer(n, "n", low=1, high=1024)
    with _lock:
        previous = num_threads()
        _state["n"] = n
    return previous


@contextlib.contextmanager
def threads(n: int) -> Iterator[int]:
    """``with threads(n): ...`` runs the block with ``n`` threads, then restores the previous number."""
    previous = set_num_threads(n)
    try:
        yield n
    finally:
        set_num_threads(previous)


def _pool(n: int) -> ThreadPoolExecutor:
    with _lock:
        if _state["pool"] is None or _state["pool_n"] < n:
            # a larger pool replaces the old one, which is not shut down: another thread may be about to
            # submit to it; once unreferenced, its idle threads exit
            _state["pool"] = ThreadPoolExecutor(max_workers=n, thread_name_prefix="fltheory",
                                                initializer=setattr, initargs=(_inside, "active", True))
            _state["pool_n"] = n
        return _state["pool"]


def run_parts(fn: Callable[[int, int], None], total: int, *, align: int = 1, min_part: int = 1) -> None:
    """Call ``fn(lo, hi)`` on contiguous parts ``[lo, hi)`` that cover ``range(total)``, in threads.

    ``fn`` writes its results into preallocated outputs (disjoint slices), so the parts' order
    does not matter.  Part boundaries are multiples of ``align`` (a block size: every part then
    cuts its range into the same blocks as one thread would).  Fewer parts are used where a part
    would be smaller than ``min_part`` items.  Each part runs in a copy of the caller's context
    (NumPy's ``errstate`` and other context variables carry over); the first exception raised by a
    part is raised here.
    """
    n = 1 if getattr(_inside, "active", False) else num_threads()
    blocks = -(-total // align) if total > 0 else 0
    parts = max(1, min(n, blocks, total // max(min_part, 1)))
    if parts <= 1:
        if total > 0:
            fn(0, total)
        return
    per = -(-blocks // parts) * align
    bounds = [(lo, min(lo + per, total)) for lo in range(0, total, per)]
    pool = _pool(len(bounds))
    futures = [pool.submit(contextvars.copy_context().run, fn, lo, hi) for lo, hi in bounds]
    for f in futures:   # wait for all of them, then raise the first error in order
        f.exception()
    for f in futures:
        f.result()
