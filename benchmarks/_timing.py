"""The timer of the benchmark scripts: the best of a few timed calls (they import it as ``_timing``)."""
import time

from fltheory.backend import synchronize


def best(fn, repeats, *, xp=None, warm_up=True):
    """``(seconds, result)``: the shortest of ``repeats`` timed calls of ``fn`` and the last result.

    ``warm_up`` makes one untimed call first (a cold first call spends its time on first-touch
    allocations and compilation); with ``xp`` given, every call waits until its device is done.
    """
    def call():
        out = fn()
        if xp is not None:
            synchronize(xp)
        return out

    if warm_up:
        call()
    seconds, out = float("inf"), None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = call()
        seconds = min(seconds, time.perf_counter() - t0)
    return seconds, out
