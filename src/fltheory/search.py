r"""Adversarial worst-case search: maximise a ratio over a family of instances.

A sampler draws a handful of instances; a bound that "holds" on them may still be nearly
attained (or broken) elsewhere.  :func:`worst_case` looks for the instance of a **family** that
maximises ``ratio(params)`` (value/bound for an upper bound) in three phases:

1. **random** -- a batch of instances drawn uniformly over the family (log-uniformly for
   ``log=True`` parameters), the family's corners among them, and one in four with every
   integer at its low end (the smallest instances, where bounds are often tight); the best one's continuous
   parameters are then snapped to the ends of their intervals where that helps (as in 3);
2. **local** -- from the best few: neighbourhood moves on the integers (``+-1``, ``+-`` a
   fraction of the range, the ends) and on the choices (every other option), alternated with
   SciPy ``minimize`` (Nelder-Mead) on the continuous parameters in an unconstrained
   reparametrisation (``x = low + (high - low) sin^2 z``, or the same in ``log x``: every ``z``
   is inside the box and the bounds are reached, not approached);
3. **boundary** -- every continuous parameter of the best instance snapped to each end of its
   interval (a supremum on a boundary is then attained, not approached).

A ratio that evaluates many instances at once (``batched=True``) can be given far more of them:
``group`` draws the random phase in groups sharing their integer and choice parameters (one
batched run per group, when the cost is per discrete setting), and ``evolve`` spends part of the
budget, between the random and the local phase, on a batched evolution strategy (rounds of
``group`` Gaussian perturbations of the continuous parameters of each of the best candidates, one
call per round).  :meth:`fltheory.verify.Check.search` does both at the ``"deep"`` level for
the checks that have ``evaluate_many``.

The family's ``constrain`` (optional) maps raw parameters into the statement's hypotheses
(clip ``eta`` inside (13), ``alpha <= G - 1``, ...) or returns ``None`` for a point outside them;
the ratio is only ever evaluated on constrained parameters, and the result's ``params`` are the
constrained ones (what an instance builder, and :func:`fltheory.verify.rebuild`, takes).

The search is deterministic for a seed, and never spends more than ``budget`` evaluations of
the ratio.  A ratio that raises a package error (:class:`~fltheory.validation.FLTheoryError`) or
returns NaN counts as an instance outside the family (ratio ``-inf``).

Example
-------
>>> from fltheory.search import Family, Real, Integer, worst_case
>>> fam = Family([Real("x", 0.0, 1.0), Integer("k", 1, 5)], description="x in [0, 1], k in 1..5")
>>> r = worst_case(lambda p: p["x"] * p["k"] / 5, fam, budget=200, seed=0)
>>> round(r.ratio, 9), r.params["k"], r.evaluations <= 200
(1.0, 5, True)
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from . import validation as V

__all__ = ["Real", "Integer", "Choice", "Family", "SearchResult", "worst_case"]


# ----------------------------------------------------------------------------- parameters
@dataclass(frozen=True)
class Real:
    """A continuous parameter in ``[low, high]`` (``log=True``: searched in ``log x``, needs ``low > 0``)."""

    name: str
    low: float
    high: float
    log: bool = False

    def __post_init__(self):
        _name(self.name)
        low = V.real(self.low, f"{self.name}: low")
        high = V.real(self.high, f"{self.name}: high")
        V.flag(self.log, f"{self.name}: log")
        if not low < high:
            raise V.InputError(f"{self.name}: low must be < high; got [{low:g}, {high:g}] (fix a constant in the "
                               f"instance builder instead)")
        if self.log and low <= 0:
            raise V.InputError(f"{self.name}: a log-scale parameter needs low > 0; got low = {low:g}")
        object.__setattr__(self, "low", low)
        object.__setattr__(self, "high", high)

    def _t(self, x):      # the searched coordinate (log or not)
        return np.log(x) if self.log else x

    def _u(self, t):
        return float(np.exp(t)) if self.log else float(t)

    def decode(self, s: float) -> float:
        """The value at ``s`` in [0, 1] (log-uniform for ``log=True``)."""
        lo, hi = self._t(self.low), self._t(self.high)
        return min(max(self._u(lo + (hi - lo) * s), self.low), self.high)

    def encode(self, x: float) -> float:
        lo, hi = self._t(self.low), self._t(self.high)
        return float(np.clip((self._t(min(max(x, self.low), self.high)) - lo) / (hi - lo), 0.0, 1.0))

    def describe(self) -> str:
        return f"{self.name} in [{self.low:g}, {self.high:g}]" + (" (log scale)" if self.log else "")


@dataclass(frozen=True)
class Integer:
    """An integer parameter in ``low..high`` (both included; ``log=True``: drawn log-uniformly, needs ``low >= 1``)."""

    name: str
    low: int
    high: int
    log: bool = False

    def __post_init__(self):
        _name(self.name)
        low = V.integer(self.low, f"{self.name}: low")
        high = V.integer(self.high, f"{self.name}: high")
        V.flag(self.log, f"{self.name}: log")
        if low > high:
            raise V.InputError(f"{self.name}: low must be <= high; got {low}..{high}")
        if self.log and low < 1:
            raise V.InputError(f"{self.name}: a log-scale integer needs low >= 1; got low = {low}")
        object.__setattr__(self, "low", low)
        object.__setattr__(self, "high", high)

    def draw(self, rng) -> int:
        if self.log:
            return int(min(self.high, max(self.low, round(math.exp(rng.uniform(math.log(self.low),
                                                                              math.log(self.high + 1)) - 0.5)))))
        return int(rng.integers(self.low, self.high + 1))

    def neighbours(self, k: int) -> list[int]:
        span = self.high - self.low
        steps = {1, max(1, span // 8), max(1, span // 2)}
        out = [k + s for s in steps] + [k - s for s in steps] + [self.low, self.high]
        if self.log:
            out += [2 * k, k // 2]
        return sorted({min(self.high, max(self.low, v)) for v in out} - {k})

    def describe(self) -> str:
        return f"{self.name} in {self.low}..{self.high}" + (" (log scale)" if self.log else "")


@dataclass(frozen=True)
class Choice:
    """A parameter that takes one of ``options`` (any JSON-able values)."""

    name: str
    options: tuple

    def __post_init__(self):
        _name(self.name)
        if isinstance(self.options, (str, bytes)) or not isinstance(self.options, Sequence):
            raise V.InputTypeError(f"{self.name}: options must be a list or tuple of values; got "
                                   f"{V.shown(self.options)}")
        if len(self.options) == 0:
            raise V.InputError(f"{self.name}: options must not be empty")
        object.__setattr__(self, "options", tuple(self.options))

    def neighbours(self, v) -> list:
        return [o for o in self.options if o != v]

    def describe(self) -> str:
        return f"{self.name} in {{{', '.join(map(str, self.options))}}}"


def _name(name):
    if not isinstance(name, str) or not name.isidentifier():
        raise V.InputTypeError(f"a parameter's name must be an identifier (a string); got {V.shown(name)}")


class Family:
    """An instance family: its parameters, how raw values are mapped into the hypotheses, and in words.

    Parameters
    ----------
    params : :class:`Real`, :class:`Integer` and :class:`Choice` parameters (distinct names).
    constrain : optional ``constrain(params) -> params or None``: maps raw parameters into the
        statement's hypotheses (it may clip, derive or add entries) or returns ``None`` for a
        point outside them.  It must be deterministic.
    fixed : constant entries added to every instance (e.g. ``{"family": "linear"}``).
    description : which assumptions hold on the family and how (written into the verdict).
    """

    def __init__(self, params, *, constrain: Callable[[dict], dict | None] | None = None, fixed: dict | None = None,
                 description: str = ""):
        if isinstance(params, (Real, Integer, Choice)) or not isinstance(params, (list, tuple)):
            raise V.InputTypeError(f"params must be a list of Real, Integer and Choice parameters; got "
                                   f"{V.shown(params)}")
        if not params:
            raise V.InputError("params must name at least one parameter")
        for p in params:
            V.instance(p, "each parameter", (Real, Integer, Choice), "Real, Integer or Choice")
        names = [p.name for p in params]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise V.InputError(f"parameter names must be distinct; repeated: {dup}")
        if constrain is not None and not callable(constrain):
            raise V.InputTypeError(f"constrain must be a callable params -> params or None; got {V.shown(constrain)}")
        if fixed is not None and not isinstance(fixed, dict):
            raise V.InputTypeError(f"fixed must be a dict; got {V.shown(fixed)}")
        clash = sorted(set(fixed or {}) & set(names))
        if clash:
            raise V.InputError(f"fixed entries may not also be searched parameters: {clash}")
        if not isinstance(description, str):
            raise V.InputTypeError(f"description must be a string; got {V.shown(description)}")
        self.params, self.constrain, self.fixed = tuple(params), constrain, dict(fixed or {})
        self.description = description
        self.reals = [p for p in self.params if isinstance(p, Real)]
        self.discrete = [p for p in self.params if not isinstance(p, Real)]

    @property
    def names(self) -> tuple:
        return tuple(p.name for p in self.params)

    def describe(self) -> str:
        """The description, then every parameter's domain."""
        dom = "; ".join(p.describe() for p in self.params)
        return (self.description + " " if self.description else "") + f"[searched: {dom}]"

    def draw(self, rng, small: bool = False) -> dict:
        """A random instance (``small``: every integer at its low end, the smallest instance of its kind)."""
        out = {}
        for p in self.params:
            if isinstance(p, Real):
                out[p.name] = p.decode(float(rng.uniform()))
            elif isinstance(p, Integer):
                k = p.draw(rng)
                out[p.name] = p.low if small else k
            else:
                out[p.name] = p.options[int(rng.integers(len(p.options)))]
        return out

    def corner(self, which: int) -> dict:
        """Every parameter at its low end (``which = 0``) or high end (``1``); choices at their first/last option."""
        out = {}
        for p in self.params:
            if isinstance(p, Choice):
                out[p.name] = p.options[-which]
            else:
                out[p.name] = p.high if which else p.low
        return out

    def apply(self, raw: dict) -> dict | None:
        """The raw parameters with the fixed entries, through ``constrain``."""
        p = {**self.fixed, **raw}
        if self.constrain is None:
            return p
        q = self.constrain(dict(p))
        if q is not None and not isinstance(q, dict):
            raise V.InputTypeError(f"constrain must return a dict or None; got {V.shown(q)}")
        return q

    def __repr__(self) -> str:
        return f"Family({self.describe()!r})"


@dataclass
class SearchResult:
    """The worst instance found: its (constrained) ``params`` and ``ratio``, the ``evaluations``
    spent, the best ratio after each phase (``history``: ``(phase, best ratio)``), the seed and
    the family's description."""

    params: dict | None
    ratio: float
    evaluations: int
    budget: int
    history: list = field(default_factory=list)
    seed: int = 0
    family: str = ""
    seconds: float = 0.0
    sample: Any = None      # set by fltheory.verify.Check.search: the worst instance's Sample

    def as_dict(self) -> dict:
        return {"params": self.params, "ratio": self.ratio, "evaluations": self.evaluations, "budget": self.budget,
                "history": [list(h) for h in self.history], "seed": self.seed, "family": self.family,
                "seconds": self.seconds}


class _Exhausted(Exception):
    pass


class _Evaluator:
    """Counts evaluations, keeps the best, caches repeated points, stops at the budget."""

    def __init__(self, ratio, family: Family, budget: int, batched: bool):
        self.ratio, self.family, self.budget, self.batched = ratio, family, budget, batched
        self.n, self.best, self.best_params = 0, -math.inf, None
        self.cache: dict = {}

    @staticmethod
    def _key(p):
        return repr(sorted((k, repr(v)) for k, v in p.items()))

    def _score(self, r) -> float:
        try:
            if isinstance(r, (str, bytes, bool, np.bool_)):
                raise TypeError
            r = float(r)
        except (TypeError, ValueError):
            raise V.InputTypeError(f"ratio must return a real number; got {V.shown(r)}") from None
        return -math.inf if math.isnan(r) else r

    def many(self, raws: list[dict]) -> list[float]:
        """Ratios of raw points (constrained first); raises _Exhausted once the budget is spent."""
        out: list[float | None] = [None] * len(raws)
        todo, keys = [], []
        for i, raw in enumerate(raws):
            p = self.family.apply(raw)
            if p is None:
                out[i] = -math.inf
                continue
            k = self._key(p)
            if k in self.cache:
                out[i] = self.cache[k]
                continue
            todo.append((i, p))
            keys.append(k)
        room = self.budget - self.n
        cut = len(todo) > room
        todo, keys = todo[:room], keys[:room]
        if todo:
            if self.batched:
                try:
                    rs = list(np.asarray(self.ratio([p for _, p in todo]), float).reshape(-1))
                except V.FLTheoryError:
                    rs = [self._one(p) for _, p in todo]
                except (TypeError, KeyError, IndexError, AttributeError) as exc:   # a function of one candidate
                    raise V.InputError(f"batched=True: the ratio function failed on a list of {len(todo)} candidates "
                                       f"({type(exc).__name__}: {exc}); with batched=True it takes a list of "
                                       f"parameter dicts and returns one ratio per candidate") from exc
                if len(rs) != len(todo):
                    raise V.InputError(f"a batched ratio must return one value per candidate; got {len(rs)} for "
                                       f"{len(todo)}")
            else:
                rs = [self._one(p) for _, p in todo]
            self.n += len(todo)
            for (i, p), k, r in zip(todo, keys, rs):
                r = self._score(r)
                self.cache[k] = out[i] = r
                if r > self.best:
                    self.best, self.best_params = r, p
        if cut:
            raise _Exhausted
        return [(-math.inf if r is None else r) for r in out]

    def _one(self, p):
        try:
            return self.ratio([p])[0] if self.batched else self.ratio(p)
        except V.FLTheoryError:
            return -math.inf

    def one(self, raw: dict) -> float:
        return self.many([raw])[0]


def worst_case(ratio: Callable, family: Family, *, budget: int = 200, seed: int = 0, batched: bool = False,
               starts: int = 3, random_fraction: float = 0.4, initial: Sequence[dict] = (),
               group: int = 1, evolve: int = 0) -> SearchResult:
    """Maximise ``ratio(params)`` over ``family`` with at most ``budget`` evaluations (module docstring).

    Parameters
    ----------
    ratio : ``ratio(params) -> float`` (value/bound for an upper bound), or with ``batched=True``
        ``ratio(list of params) -> array`` of one ratio per candidate.
    family : the :class:`Family` searched.
    budget : the most evaluations spent (an integer >= 1).
    seed : the search's seed (the same seed, family and budget give the same result).
    starts : how many of the best random candidates the local phase starts from.
    random_fraction : the share of the budget spent on the random phase (in (0, 1]).
    initial : instances to evaluate first, before the random ones (e.g. the worst draws of a
        hypothesis test); each a dict with every parameter of the family, inside its domain.
    group : the random phase draws its candidates in groups of ``group`` that share their integer and
        choice parameters (each group's continuous parameters drawn afresh), so that a batched ratio
        whose cost is per distinct discrete setting (one batched run per setting) evaluates whole
        groups at once; ``1`` (default): every candidate drawn independently.
    evolve : evaluations (of ``budget``) spent, with ``batched=True``, between the random and the local
        phase on a batched evolution strategy: from each of the ``starts`` best candidates, rounds of
        ``group`` perturbations of its continuous parameters (Gaussian in the searched coordinate,
        step 0.2 of the interval, halved after a round without progress), each round one call.
    """
    if not callable(ratio):
        raise V.InputTypeError(f"ratio must be a callable params -> float; got {V.shown(ratio)}")
    V.instance(family, "family", Family)
    budget = V.integer(budget, "budget", low=1, high=10**7)
    seed = V.integer(seed, "seed", low=0, high=2**63 - 1)
    batched = V.flag(batched, "batched")
    starts = V.integer(starts, "starts", low=1, high=1000)
    random_fraction = V.real(random_fraction, "random_fraction", low=0, high=1, open_low=True)
    initial = [_initial_point(family, q, i) for i, q in enumerate(_sequence(initial, "initial"))]
    group = V.integer(group, "group", low=1, high=10**6)
    evolve = V.integer(evolve, "evolve", low=0, high=budget)
    if evolve and not batched:
        raise V.InputError("evolve > 0 needs batched=True (each round of the evolution strategy is one batched call)")
    t0 = time.perf_counter()
    rng = np.random.default_rng(seed)
    ev = _Evaluator(ratio, family, budget, batched)
    history = []
    try:
        n_random = max(1, min(budget - evolve, int(round(budget * random_fraction))))
        raws = initial + [family.corner(0), family.corner(1)] + _random_draws(family, rng, max(0, n_random - 2), group)
        raws = raws[:max(n_random, len(initial))]
        rs = ev.many(raws)
        history.append(("random", ev.best))
        if ev.best_params is not None and budget - ev.n > 4 * len(family.reals):
            _boundary(ev, family, passes=1)
            history.append(("boundary", ev.best))
            raws.append({k: ev.best_params[k] for k in family.names})
            rs.append(ev.best)
        order = np.argsort(-np.asarray(rs), kind="stable")
        seen, picks = set(), []
        for i in order:
            if not math.isfinite(rs[i]) and rs[i] < 0:
                break
            k = _Evaluator._key(raws[i])
            if k not in seen:
                seen.add(k)
                picks.append(dict(raws[i]))
            if len(picks) == starts:
                break
        if evolve and family.reals:
            stop = min(budget, ev.n + evolve)
            picks = [_evolve(ev, family, raw, ev.n + max(1, (stop - ev.n) // (len(picks) - j)), rng, group)
                     for j, raw in enumerate(picks)]
            history.append(("evolve", ev.best))
        reserve = min(4 * len(family.reals), max(0, budget - ev.n) // 4)   # kept for the boundary phase
        end = budget - reserve
        for j, raw in enumerate(picks):
            per = max(1, (end - ev.n) // (len(picks) - j))
            _local(ev, family, raw, min(ev.n + per, end), rng)
        history.append(("local", ev.best))
        if ev.best_params is not None:
            _boundary(ev, family)
        history.append(("boundary", ev.best))
    except _Exhausted:
        history.append(("budget spent", ev.best))
    return SearchResult(params=ev.best_params, ratio=float(ev.best), evaluations=ev.n, budget=budget,
                        history=[(h, float(b)) for h, b in history], seed=seed, family=family.describe(),
                        seconds=time.perf_counter() - t0)


def _random_draws(family: Family, rng, n: int, group: int) -> list[dict]:
    """``n`` random instances; one in four (one group in four) with every integer at its low end, and with
    ``group > 1`` in groups that share their discrete parameters."""
    if group == 1 or not family.discrete:
        return [family.draw(rng, small=(i % 4 == 3)) for i in range(n)]
    out: list[dict] = []
    g = 0
    while len(out) < n:
        base = family.draw(rng, small=(g % 4 == 3))
        shared = {p.name: base[p.name] for p in family.discrete}
        out += [base] + [{**family.draw(rng), **shared} for _ in range(min(group, n - len(out)) - 1)]
        g += 1
    return out


def _sequence(value, name: str) -> list:
    if isinstance(value, (str, bytes, dict)) or not isinstance(value, Sequence):
        raise V.InputTypeError(f"{name} must be a list of instances (dicts of the family's parameters); got "
                               f"{V.shown(value)}")
    return list(value)


def _initial_point(family: Family, q, i: int) -> dict:
    """An initial instance, checked against the family's domains (only its searched parameters are kept)."""
    if not isinstance(q, dict):
        raise V.InputTypeError(f"initial[{i}] must be a dict of the family's parameters; got {V.shown(q)}")
    missing = [n for n in family.names if n not in q]
    if missing:
        raise V.InputError(f"initial[{i}] lacks the family's parameters {missing}")
    out = {}
    for p in family.params:
        v = q[p.name]
        if isinstance(p, Real):
            v = V.real(v, f"initial[{i}]['{p.name}']", low=p.low, high=p.high)
        elif isinstance(p, Integer):
            v = V.integer(v, f"initial[{i}]['{p.name}']", low=p.low, high=p.high)
        elif v not in p.options:
            raise V.InputError(f"initial[{i}]['{p.name}'] must be one of {list(p.options)}; got {V.shown(v)}")
        out[p.name] = v
    return out


def _evolve(ev: _Evaluator, family: Family, raw: dict, stop: int, rng, group: int) -> dict:
    """A (1 + group) evolution strategy on the continuous parameters of ``raw`` (its discrete ones kept), one
    batched call per round, until ``stop`` evaluations; returns the best raw point reached."""
    cur, cur_r = dict(raw), ev.one(raw)
    s0 = np.array([p.encode(cur[p.name]) for p in family.reals])
    sigma = 0.2
    while ev.n < stop and sigma > 1e-9:
        n = min(group, stop - ev.n)
        steps = np.clip(s0 + sigma * rng.standard_normal((n, len(s0))), 0.0, 1.0)
        cands = [{**cur, **{p.name: p.decode(float(v)) for p, v in zip(family.reals, row)}} for row in steps]
        rs = ev.many(cands)
        j = int(np.argmax(rs))
        if rs[j] > cur_r:
            cur, cur_r, s0 = cands[j], rs[j], steps[j]
        else:
            sigma *= 0.5
    return cur


def _local(ev: _Evaluator, family: Family, raw: dict, stop: int, rng) -> None:
    """Alternate neighbourhood moves on the discrete parameters and Nelder-Mead on the continuous ones."""
    from scipy.optimize import minimize  # noqa: PLC0415

    cur, cur_r = dict(raw), ev.one(raw)
    for it in range(20):
        if ev.n >= stop:
            return
        improved = False
        for p in family.discrete:
            moves = p.neighbours(cur[p.name])
            if not moves:
                continue
            room = stop - ev.n
            if room <= 0:
                return
            cands = [{**cur, p.name: m} for m in moves][:room]
            rs = ev.many(cands)
            j = int(np.argmax(rs))
            if rs[j] > cur_r:
                cur, cur_r, improved = cands[j], rs[j], True
        if family.reals:
            z0 = np.array([math.asin(math.sqrt(p.encode(cur[p.name]))) for p in family.reals])

            def point(z):
                q = dict(cur)
                for p, zi in zip(family.reals, z):
                    q[p.name] = p.decode(math.sin(zi) ** 2)
                return q

            seen = {"r": cur_r, "q": None}

            def f(z):
                if ev.n >= stop:
                    raise _Stop
                q = point(z)
                r = ev.one(q)
                if r > seen["r"]:
                    seen["r"], seen["q"] = r, q
                return -r if math.isfinite(r) else (1e300 if r < 0 else -1e300)

            span = max(4, min(stop - ev.n, 12 * (len(family.reals) + 1)))   # then the discrete moves, and again
            simplex = np.vstack([z0] + [z0 + np.eye(len(z0))[i] * 0.25 * 0.3**it for i in range(len(z0))])
            try:
                minimize(f, z0, method="Nelder-Mead",
                         options=dict(maxfev=span, xatol=1e-10, fatol=1e-14, initial_simplex=simplex))
            except _Stop:
                pass
            if seen["q"] is not None:
                cur, cur_r, improved = seen["q"], seen["r"], True
        if not improved:
            return


class _Stop(Exception):
    pass


def _boundary(ev: _Evaluator, family: Family, passes: int = 2) -> None:
    """Snap each continuous parameter of the best instance to each end, greedily, while it helps."""
    for _ in range(passes):
        r0 = ev.best
        for p in family.reals:
            base = {q.name: ev.best_params.get(q.name) for q in family.params}
            if any(v is None for v in base.values()):
                return
            cands = [{**base, p.name: end} for end in (p.low, p.high) if base[p.name] != end]
            if cands:
                ev.many(cands)
        if ev.best <= r0:
            return
