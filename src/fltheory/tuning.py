r"""The best step size: minimise an exact error over step sizes, beside a theorem's prescribed rate.

A convergence theorem prescribes a step size (``eta = sqrt(N)/(L sqrt(T))``, ``eta = beta/sqrt(K+1)``,
...) that minimises its *bound*.  On an instance where the error the theorem bounds is computable
exactly (quadratic clients, ``exact.py`` of each paper) the researcher's other question has an exact
answer: which step size minimises the error itself, and how much worse the prescribed one is.

:func:`minimise` finds ``argmin error(params)`` over positive parameters (searched in ``log``):

1. a log-spaced **grid** of the first parameter (the others at their prescribed values) -- the
   ``curve`` that is plotted;
2. the package's adversarial engine :func:`fltheory.search.worst_case` maximising ``-error`` over
   the box (random phase, Nelder-Mead in the ``sin^2`` reparametrisation, boundary snapping);
3. with several parameters, a Nelder-Mead polish in ``log x`` from the best point (coupled step
   sizes lie on a ridge that coordinate moves climb slowly);
4. a **1-D refinement** of each coordinate in turn from the best point found: bracketing in
   ``log x`` (steps of a factor that grows while the error falls), then golden-section search to a
   relative width ``rtol`` in ``x``.  Every evaluation counts; the best point ever evaluated is
   returned, so the reported optimum is never worse than any grid point or any point of the search.

An error that is not finite, or that the engine refuses (a package error: the step size makes the
method diverge), counts as ``+inf``.  Everything is deterministic for a seed.

:class:`StepSizeComparison` holds the answer; each paper's ``best_step_size`` fills one.

Example
-------
>>> from fltheory.tuning import LogRange, minimise
>>> r = minimise(lambda p: (p["eta"] - 1.0) ** 2 + 1.0, [LogRange("eta", 1e-3, 10.0)], start={"eta": 0.1},
...              budget=40, seed=0)
>>> round(r.best["eta"], 6), round(r.value, 12)
(1.0, 1.0)
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from . import validation as V
from .search import Family, Real, worst_case

__all__ = ["LogRange", "Minimum", "minimise", "StepSizeComparison", "compare", "tuned_names"]

_INVPHI = (math.sqrt(5.0) - 1.0) / 2.0


@dataclass(frozen=True)
class LogRange:
    """A positive parameter ``name`` searched in ``[low, high]`` on a log scale."""

    name: str
    low: float
    high: float

    def __post_init__(self):
        Real(self.name, self.low, self.high, log=True)        # the search's own checks (name, 0 < low < high)
        object.__setattr__(self, "low", float(self.low))
        object.__setattr__(self, "high", float(self.high))


@dataclass(frozen=True)
class Minimum:
    """What :func:`minimise` found: ``best`` (parameters), ``value`` (the error there), ``evaluations``
    and ``curve`` (``(grid of the first parameter, error on it)``, the others at ``start``)."""

    best: dict
    value: float
    evaluations: int
    curve: tuple


class _Counted:
    """The error as a float (``+inf`` for a refusal or a non-finite value), counted and cached."""

    def __init__(self, error: Callable[[dict], float]):
        self.error, self.n, self.cache = error, 0, {}
        self.best, self.best_value = None, math.inf

    def __call__(self, p: dict) -> float:
        key = tuple(sorted(p.items()))
        if key in self.cache:
            return self.cache[key]
        try:
            with np.errstate(all="ignore"):
                v = float(self.error(dict(p)))
        except (V.FLTheoryError, OverflowError, np.linalg.LinAlgError):
            v = math.inf
        if not math.isfinite(v):
            v = math.inf
        self.n += 1
        self.cache[key] = v
        if v < self.best_value:
            self.best, self.best_value = dict(p), v
        return v


def _refine(f: _Counted, rng: LogRange, point: dict, rtol: float, max_evals: int) -> None:
    """Bracket the minimum of ``t -> f(point with rng.name = e^t)`` and golden-section it (in log x)."""
    lo, hi = math.log(rng.low), math.log(rng.high)
    x0 = min(max(math.log(point[rng.name]), lo), hi)
    stop = f.n + max_evals

    def g(t):
        return f({**point, rng.name: float(math.exp(min(max(t, lo), hi)))})

    s = min(0.05, hi - lo)
    f0, fl, fr = g(x0), g(x0 - s), g(x0 + s)
    if min(f0, fl, fr) == math.inf:
        return
    if fl >= f0 and fr >= f0:
        a, b = x0 - s, x0 + s
    else:                                        # walk downhill, the step growing by 1.618, until it rises
        d = 1.0 if fr < fl else -1.0
        prev, cur, fcur = x0, x0 + d * s, min(fl, fr)
        while f.n < stop:
            s /= _INVPHI
            nxt = min(max(cur + d * s, lo), hi)
            if nxt == cur:
                break
            fn = g(nxt)
            if fn >= fcur:
                cur = nxt
                break
            prev, cur, fcur = cur, nxt, fn
        a, b = min(prev, cur), max(prev, cur)
    a, b = max(a, lo), min(b, hi)
    if not b > a:
        return
    c, d = b - _INVPHI * (b - a), a + _INVPHI * (b - a)
    fc, fd = g(c), g(d)
    tol = math.log1p(rtol)
    while b - a > tol and f.n < stop:
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - _INVPHI * (b - a)
            fc = g(c)
        else:
            a, c, fc = c, d, fd
            d = a + _INVPHI * (b - a)
            fd = g(d)


def _polish(f: _Counted, ranges, point: dict, max_evals: int) -> None:
    """Nelder-Mead in ``log x`` (clipped into the box) from ``point``, at most ``max_evals`` evaluations."""
    from scipy.optimize import minimize  # noqa: PLC0415

    lo = np.log([r.low for r in ranges])
    hi = np.log([r.high for r in ranges])

    def g(t):
        t = np.clip(t, lo, hi)
        return f({**point, **{r.name: float(math.exp(v)) for r, v in zip(ranges, t)}})

    t0 = np.log([point[r.name] for r in ranges])
    minimize(g, t0, method="Nelder-Mead", options=dict(maxfev=max_evals, xatol=1e-9, fatol=0.0,
                                                        initial_simplex=np.vstack([t0, t0 + 0.1 * np.eye(len(t0))])))


def minimise(error: Callable[[dict], float], ranges: Sequence[LogRange], *, start: dict, budget: int = 60,
             seed: int = 0, grid: int = 41, rtol: float = 1e-6, passes: int = 2) -> Minimum:
    """The parameters in the box ``ranges`` minimising ``error(params)`` (module docstring, steps 1-4).

    Parameters
    ----------
    error : ``error(params) -> float`` (lower is better); a package error or a non-finite value is ``+inf``.
    ranges : the :class:`LogRange` of each tuned parameter (distinct names; the first is the curve's axis).
    start : a value for every tuned parameter (e.g. the prescribed one; clipped into its range): the
        grid's other coordinates and a starting point of the refinement.
    budget : the evaluations given to :func:`fltheory.search.worst_case` (step 2).
    seed : the search's seed (the result is a deterministic function of it).
    grid : the points of the curve (step 1, at least 3).
    rtol : the relative width in each parameter at which the golden-section search stops.
    passes : rounds of coordinate-wise refinement (step 4).
    """
    if not callable(error):
        raise V.InputTypeError(f"error must be a callable params -> float; got {V.shown(error)}")
    if isinstance(ranges, LogRange) or not isinstance(ranges, (list, tuple)) or not ranges:
        raise V.InputTypeError(f"ranges must be a non-empty list of LogRange; got {V.shown(ranges)}")
    for r in ranges:
        V.instance(r, "each range", LogRange)
    fam = Family([Real(r.name, r.low, r.high, log=True) for r in ranges])   # refuses repeated names
    if not isinstance(start, dict) or set(start) != set(fam.names):
        raise V.InputError(f"start must be a dict with a value for each of {list(fam.names)}; got {V.shown(start)}")
    start = {r.name: min(max(V.real(start[r.name], f"start[{r.name!r}]", low=0, open_low=True), r.low), r.high)
             for r in ranges}
    budget = V.integer(budget, "budget", low=1, high=10**6)
    seed = V.integer(seed, "seed", low=0, high=2**63 - 1)
    grid = V.integer(grid, "grid", low=3, high=10**5)
    rtol = V.real(rtol, "rtol", low=1e-12, high=0.5)
    passes = V.integer(passes, "passes", low=1, high=100)
    f = _Counted(error)
    r0 = ranges[0]
    xs = np.geomspace(r0.low, r0.high, grid)
    ys = np.array([f({**start, r0.name: float(x)}) for x in xs])
    f(start)
    worst_case(lambda p: -f({k: p[k] for k in fam.names}), fam, budget=budget, seed=seed)
    if len(ranges) > 1:                                   # a joint polish first: coupled parameters (a ridge)
        _polish(f, ranges, dict(f.best if f.best is not None else start), max_evals=60 * len(ranges))
    for _ in range(passes if len(ranges) > 1 else 1):     # one parameter: one pass is the whole refinement
        for r in ranges:
            _refine(f, r, dict(f.best if f.best is not None else start), rtol, max_evals=80)
    best = f.best if f.best is not None else start
    return Minimum(dict(best), float(f.best_value), f.n, (tuple(float(x) for x in xs), tuple(float(y) for y in ys)))


@dataclass(frozen=True)
class StepSizeComparison:
    """The exactly best step size(s) at a horizon beside a theorem's prescription.

    ``names`` the tuned parameters; ``best`` / ``prescribed`` their values (dicts); ``best_error`` /
    ``prescribed_error`` the exact error there (``error`` says which quantity); ``ratio`` =
    ``prescribed_error / best_error`` (>= 1: the prescription is never better than the optimum; ``inf``
    when the prescribed rate diverges, ``nan`` when both errors are 0); ``horizon`` the ``T`` (or ``K``)
    the rates are set for; ``engine`` the exact function used; ``evaluations`` of the error spent;
    ``curve`` ``{"parameter", "values", "errors"}``: the error on a log grid of the first tuned
    parameter, the others at their prescribed values; ``prescription`` the rule in words; ``extra``
    paper-specific numbers (e.g. a stability limit).
    """

    names: tuple
    best: dict
    best_error: float
    prescribed: dict
    prescribed_error: float
    ratio: float
    horizon: int
    engine: str
    evaluations: int
    curve: dict
    error: str
    prescription: str
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        """Every field as plain Python (JSON-able) values."""
        return {"names": list(self.names), "best": dict(self.best), "best_error": self.best_error,
                "prescribed": dict(self.prescribed), "prescribed_error": self.prescribed_error, "ratio": self.ratio,
                "horizon": self.horizon, "engine": self.engine, "evaluations": self.evaluations,
                "curve": {"parameter": self.curve["parameter"], "values": list(self.curve["values"]),
                          "errors": list(self.curve["errors"])},
                "error": self.error, "prescription": self.prescription, "extra": dict(self.extra)}

    def __str__(self) -> str:
        b = ", ".join(f"{k} = {v:.6g}" for k, v in self.best.items())
        p = ", ".join(f"{k} = {v:.6g}" for k, v in self.prescribed.items())
        return (f"best     {b}: {self.error} = {self.best_error:.6g}\n"
                f"theorem  {p} ({self.prescription}): {self.prescribed_error:.6g}\n"
                f"ratio    {self.ratio:.6g} (horizon {self.horizon}, {self.engine}, {self.evaluations} evaluations)")


def tuned_names(tune, allowed: Sequence[str]) -> tuple:
    """``tune`` (one name or a sequence of distinct names among ``allowed``) as a tuple, else a named error.

    >>> tuned_names("eta", ("eta", "alpha")), tuned_names(["alpha", "eta"], ("eta", "alpha"))
    (('eta',), ('alpha', 'eta'))
    """
    if isinstance(allowed, str) or not isinstance(allowed, (tuple, list)) or \
            not all(isinstance(a, str) for a in allowed):
        raise V.InputTypeError(f"allowed must be a tuple of parameter names; got {V.shown(allowed)}")
    names = (tune,) if isinstance(tune, str) else tune
    if not isinstance(names, (tuple, list)) or not names or any(t not in allowed for t in names) \
            or len(set(names)) != len(names):
        raise V.InputError(f"tune must name distinct parameters among allowed={list(allowed)}; got {V.shown(tune)}")
    return tuple(names)


def compare(error: Callable[[dict], float], ranges: Sequence[LogRange], *, prescribed: dict, horizon: int,
            engine: str, error_name: str, prescription: str, budget: int = 24, seed: int = 0, grid: int = 21,
            extra: dict | None = None, fixed: dict | None = None) -> StepSizeComparison:
    """:func:`minimise` from the ``prescribed`` values, and the :class:`StepSizeComparison` of the two
    (the shared body of every paper's ``best_step_size``).  ``fixed``: the given step sizes that are not
    tuned, named in the error raised when the error is infinite at every point tried."""
    m = minimise(error, ranges, start=prescribed, budget=budget, seed=seed, grid=grid)
    f = _Counted(error)
    pe = f(prescribed)
    best, be = m.best, m.value
    if math.isinf(be) and math.isinf(pe):
        held = "".join(f", {k}={v:g}" for k, v in (fixed or {}).items())
        raise V.InputError(f"the error is infinite (or refused) at every {', '.join(r.name for r in ranges)} tried "
                           f"(the prescribed one included{held}): the method diverges on this instance"
                           + (f"; try a smaller {' or '.join(fixed)}" if fixed else ""))
    if pe < be:                          # the prescription may lie outside the searched box: it is a candidate
        best, be = dict(prescribed), pe
    ratio = pe / be if be > 0 else (math.nan if pe == 0 else math.inf)
    return StepSizeComparison(tuple(r.name for r in ranges), {k: float(v) for k, v in best.items()}, float(be),
                              {k: float(v) for k, v in prescribed.items()}, float(pe), float(ratio), int(horizon),
                              engine, m.evaluations + f.n,
                              {"parameter": ranges[0].name, "values": m.curve[0], "errors": m.curve[1]},
                              error_name, prescription, dict(extra or {}))
