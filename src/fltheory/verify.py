"""Checks, verdicts, the registry of every paper's checks, and the report.

A :class:`Check` pairs a statement with the quantity it is about, computed exactly or by
simulation on an instance family that satisfies the statement's assumptions.  Its sampler
yields :class:`Sample` rows ``(value, bound, params, seed, size)`` and the check turns them
into a :class:`Verdict`:

* ``holds``    -- not refuted: every sample satisfies the relation, and so does the worst
                  instance an adversarial search (:mod:`fltheory.search`) found over the
                  check's ``family``, when it has one; the worst ratio is reported
                  (value/bound for an upper bound, bound/value for a lower bound,
                  error/tolerance for an identity).  It is evidence, not a proof;
* ``tight``    -- it holds and the worst ratio (of the samples or of the search) reaches 1
                  (within ``tight_tol``);
* ``violated`` -- some sample breaks it; the *smallest* counterexample (by ``size``, then by
                  ratio) is kept with the parameters and seed that reproduce it.

Each check states the verdict it ``expected``: a printed statement known to be false is
expected to be ``violated``.  :func:`run` runs the registry (what ``fltheory verify`` runs) and
returns a :class:`Report` that renders a table and writes Markdown, strict JSON (non-finite
numbers written as the strings ``"inf"``, ``"-inf"``, ``"nan"``) and figures.  A counterexample
of the report is rebuilt by :func:`rebuild` from its check name, parameters and seed.

Besides the five papers of ``PAPERS``, a user's own checks run the same way: name a paper with
:func:`register_paper` (or an installed ``fltheory.papers`` entry point), register its
``Check(..., paper=slug)`` objects, and ``run``, ``fltheory verify``, the report, its figures and
``rebuild`` serve it like the others (:func:`all_papers` lists them all).

Example
-------
>>> from fltheory.verify import Check, Sample
>>> c = Check("demo", paper="demo", statement=None, relation="<=",
...           sampler=lambda quick, seed: [Sample(value=0.5, bound=1.0, params={}, seed=seed)])
>>> v = c.run()
>>> v.status, v.worst_ratio
('holds', 0.5)
"""
from __future__ import annotations

import contextlib
import copy
import importlib
import json
import os
import math
import platform
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np

from .validation import InputError, InputTypeError
from .validation import shown as _shown

__all__ = ["Sample", "Verdict", "Check", "register", "registry", "run", "Report", "PAPERS", "rebuild", "Rebuilt",
           "strict_json"]

PAPERS = ("local_adaptivity", "feddelavg", "tdma", "afl_dga", "defedavg")
STATUSES = ("holds", "tight", "violated")
SEARCH_LEVELS = ("quick", "full", "deep")   # the adversarial search's budgets: Check.search_budget, in this order
DEEP_FACTOR = 20                            # a deep search spends this many times the full budget (unless given)
DEEP_WIDE = 20        # a batched deep search (Check.evaluate_many) draws this many times its budget at random, more
DEEP_GROUP = 256      # ... in groups of this many candidates sharing their discrete parameters (one batched run each)
# what a counterexample can refute: the numbered result itself, or only a line of its proof, or a printed constant
MARKER = ".fltheory"   # written into a report folder (first line "fltheory verify"): the command may rewrite it
FALSE_OBJECTS = ("theorem", "lemma", "proposition", "corollary", "remark", "proof step", "constant", "algorithm line",
                 "our claim", "equation", "experiment")


@dataclass
class Sample:
    """One instance: the computed quantity ``value``, the statement's ``bound``, how to rebuild it."""

    value: float
    bound: float
    params: dict
    seed: int | None = None
    size: float = 0.0


@dataclass
class Verdict:
    check: str
    paper: str
    statement: str
    variant: str
    relation: str
    status: str
    expected: str
    instances: int
    worst_ratio: float
    metric: str
    counterexample: dict | None = None
    seconds: float = 0.0
    description: str = ""
    latex: str = ""
    values: list = field(default_factory=list, repr=False)
    bounds: list = field(default_factory=list, repr=False)
    falsifies: str | None = None
    still_stands: str = ""
    equation: str = ""
    ratios: list = field(default_factory=list, repr=False)
    search: dict | None = None          # the adversarial search: family (words), evaluations, worst ratio, history
    sampled_worst_ratio: float | None = None   # the sampler's own worst ratio (before the search's instance)

    @property
    def budget(self) -> int:
        """The evaluations the adversarial search spent (0 without a search)."""
        return int(self.search["evaluations"]) if self.search else 0

    def wording(self) -> str:
        """The verdict in words: ``holds`` reads "not refuted: worst ratio r over n instances and an
        adversarial search of budget b" (it is no proof)."""
        if self.status == "violated":
            return f"violated: ratio {self.counterexample['ratio']:.4g} ({self.metric})" if self.counterexample \
                else "violated"
        what = f"worst ratio {self.worst_ratio:.4g} over {self.instances} instances"
        what += f" and an adversarial search of budget {self.budget}" if self.search else " (no adversarial search)"
        return ("not refuted: " if self.status == "holds" else "tight (not refuted, ratio reaches 1): ") + what

    @property
    def ok(self) -> bool:
        """Whether the verdict is the one the registry expects (``holds`` accepts ``tight``)."""
        if self.expected == "holds":
            return self.status in ("holds", "tight")
        return self.status == self.expected

    def as_dict(self) -> dict:
        d = asdict(self)
        d["ok"] = self.ok
        for k in ("values", "bounds", "ratios"):
            d.pop(k)
        return d


class Check:
    """A statement paired with what it bounds (see the module docstring).

    Parameters
    ----------
    name : unique identifier, ``"<paper>.<what>"``.
    paper : paper slug.
    statement : the :class:`~fltheory.symbolic.Statement` checked (or ``None`` for a pure
        identity between two computations, e.g. closed form against simulation).
    relation : ``"<="``, ``">="`` or ``"=="`` (defaults to the statement's relation).
    sampler : ``sampler(quick, seed) -> iterable of Sample``; must draw only instances inside
        the statement's assumptions.
    expected : the verdict the registry expects.
    rtol, atol : slack for round-off (a bound is violated when value > bound (1 + rtol) + atol;
        an identity when ``|value - bound| > atol + rtol |bound|``).
    tight_tol : a bound that holds is ``tight`` when its worst ratio is >= 1 - tight_tol.
    falsifies : for a check expected ``violated``, WHICH printed object its counterexample
        refutes: one of ``FALSE_OBJECTS`` (a ``"proof step"`` is a line inside a proof, not the
        result it serves; a ``"constant"`` is a printed constant while the form stands; ``"our claim"`` is a claim
        this package made, not the paper; an ``"equation"`` is a numbered equation of the text that states a fact
        about the method, e.g. a staleness or a round length, neither a theorem nor a remark nor a line of the
        algorithm; an ``"experiment"`` is a claim about the paper's experiments that a rerun of its protocol on the
        package's own data does not reproduce -- not a refutation of what the paper measured on its data).
    still_stands : what the counterexample leaves standing (the theorem's own statement, the
        corrected form, the range where it holds).
    family : optional :class:`fltheory.search.Family`: the instances inside the statement's
        hypotheses that an adversarial search explores (its description says which assumptions
        hold and how).  Needs ``evaluate``.
    evaluate : ``evaluate(params) -> Sample`` for one instance of ``family`` (its ``params`` are the
        family's constrained parameters); the search maximises the ratio of these samples, and
        :func:`rebuild` calls it to rebuild a searched instance.
    search_budget : ``(quick, full)`` or ``(quick, full, deep)`` evaluations of the search (default
        ``(30, 150)``; the deep budget defaults to ``DEEP_FACTOR`` times the full one).
    search_start : instances of ``family`` (dicts of its parameters) the search evaluates first:
        the worst instances a derivation found, so that the search starts from them and can only
        do better (each is checked against the family's domains when the check is made).
    evaluate_many : optional ``evaluate_many(list of params, xp) -> list of Sample or None`` (``None``:
        that instance is outside the family): ``evaluate`` of many instances at once, on array
        namespace ``xp`` (NumPy, CuPy, ...; the statements may read host copies), equal to
        ``evaluate`` up to round-off.  With it, the ``"deep"`` search is batched: it spends
        ``DEEP_WIDE`` times its budget more, half on random candidates in groups of ``DEEP_GROUP``
        sharing their integer and choice parameters, half on a batched evolution strategy from the
        best of them (:func:`fltheory.search.worst_case`'s ``group`` and ``evolve``), each group one
        call, on the backend of :meth:`run`; then the unbatched local phase of its budget.
    """

    def __init__(
        self,
        name: str,
        *,
        paper: str,
        statement=None,
        sampler: Callable[[bool, int], Iterable[Sample]],
        relation: str | None = None,
        variant: str | None = None,
        expected: str = "holds",
        rtol: float = 1e-9,
        atol: float = 0.0,
        tight_tol: float = 1e-6,
        description: str = "",
        falsifies: str | None = None,
        still_stands: str = "",
        family=None,
        evaluate: Callable[[dict], Sample] | None = None,
        search_budget: tuple = (30, 150),
        search_start: tuple = (),
        evaluate_many: Callable[[list, Any], list] | None = None,
    ):
        if expected not in STATUSES:
            raise InputError(f"expected must be one of {STATUSES}, got {expected!r}")
        if falsifies is not None and falsifies not in FALSE_OBJECTS:
            raise InputError(f"falsifies must be one of {FALSE_OBJECTS}, got {falsifies!r}")
        self.falsifies, self.still_stands = falsifies, still_stands
        self.name, self.paper, self.statement, self.sampler = name, paper, statement, sampler
        self.relation = relation or (statement.relation if statement is not None else "==")
        if self.relation not in ("<=", ">=", "=="):
            raise InputError(f"relation must be '<=', '>=' or '==', got {self.relation!r}")
        self.variant = variant or (statement.status if statement is not None else "identity")
        self.expected, self.rtol, self.atol, self.tight_tol = expected, rtol, atol, tight_tol
        self.description = description or (statement.describe() if statement is not None else name)
        from . import validation as V  # noqa: PLC0415
        from .search import Family  # noqa: PLC0415

        if family is not None:
            V.instance(family, "family", Family)
            if evaluate is None or not callable(evaluate):
                raise InputError(f"check {name}: a family needs evaluate(params) -> Sample (the instance builder that "
                                 f"the search and rebuild() call); got {V.shown(evaluate)}")
        elif evaluate is not None:
            raise InputError(f"check {name}: evaluate is given without a family to search")
        if evaluate_many is not None and (family is None or not callable(evaluate_many)):
            raise InputError(f"check {name}: evaluate_many must be a callable (list of params, xp) -> list of Sample "
                             f"or None, beside a family and its evaluate; got {V.shown(evaluate_many)}"
                             + ("" if family is not None else " without a family"))
        self.evaluate_many = evaluate_many
        if not (isinstance(search_budget, tuple) and len(search_budget) in (2, 3)):
            raise V.InputTypeError(f"search_budget must be a pair (quick, full) or a triple (quick, full, deep); got "
                                   f"{V.shown(search_budget)}")
        budgets = [V.integer(b, "search_budget", low=1, high=10**7) for b in search_budget]
        if len(budgets) == 2:
            budgets.append(min(10**7, DEEP_FACTOR * budgets[1]))
        self.search_budget = tuple(budgets)
        self.family, self.evaluate = family, evaluate
        from .search import _initial_point, _sequence  # noqa: PLC0415

        starts = _sequence(search_start, "search_start")
        if starts and family is None:
            raise InputError(f"check {name}: search_start is given without a family to search")
        self.search_start = tuple(_initial_point(family, q, i) for i, q in enumerate(starts))

    def __repr__(self) -> str:
        return f"Check({self.name!r}, expected={self.expected!r})"

    def _ratio(self, s: Sample) -> tuple[float, bool]:
        v, b = float(s.value), float(s.bound)
        if not (math.isfinite(v) and math.isfinite(b)):
            return math.inf, True
        if self.relation == "==":
            tol = self.atol + self.rtol * abs(b)
            err = abs(v - b)
            return (err / tol if tol > 0 else (0.0 if err == 0 else math.inf)), err > tol
        small, big = (v, b) if self.relation == "<=" else (b, v)
        bad = small > big + self.rtol * abs(big) + self.atol
        if big + self.atol > 0:  # atol absorbs round-off: values inside it do not inflate the ratio
            return small / (big + self.atol), bad
        return (0.0 if small <= 0 else math.inf), bad

    def run(self, *, quick: bool = False, seed: int = 0, search: str | None = None, backend=None) -> Verdict:
        """The verdict: the sampler's instances (``quick``: fewer) and, with a ``family``, the worst
        instance of the adversarial search at level ``search`` (``"quick"``, ``"full"`` or ``"deep"``;
        default ``"quick"`` with ``quick`` and ``"full"`` without).  ``backend`` (a name:
        ``"numpy"``, ``"cupy"``, ``"array_api_strict"``, or an array namespace) is where a batched deep
        search runs (see ``evaluate_many``); the sampler and every other search run on the host."""
        from . import validation as V  # noqa: PLC0415

        quick, seed = V.flag(quick, "quick"), V.integer(seed, "seed", low=0, high=2**63 - 1)
        search = _search_level(search, quick)
        t0 = time.perf_counter()
        samples = list(self.sampler(quick, seed))
        if not samples:
            raise RuntimeError(f"check {self.name}: the sampler produced no instance")
        sampled_worst = max(self._ratio(s)[0] for s in samples)
        level, search = search, None
        if self.family is not None:
            found = self.search(level=level, seed=seed, backend=backend)
            search = found.as_dict()
            search["level"] = level
            if found.sample is not None:        # the worst instance's own parameters (what rebuild() takes)
                search["params"] = _jsonable(found.sample.params)
                samples.append(found.sample)
        ratios, bads = zip(*(self._ratio(s) for s in samples))
        worst = max(ratios)
        violating = [(s, r) for s, r, b in zip(samples, ratios, bads) if b]
        counter = None
        if violating:
            status = "violated"
            s, r = min(violating, key=lambda sr: (sr[0].size, -sr[1]))
            # quick and run_seed: how the sampler was called (what rebuild() needs besides params and seed)
            counter = {"params": _jsonable(s.params), "seed": s.seed, "value": float(s.value), "bound": float(s.bound),
                       "ratio": float(r), "quick": quick, "run_seed": seed}
        elif self.relation != "==" and worst >= 1 - self.tight_tol:
            status = "tight"
        else:
            status = "holds"
        return Verdict(
            check=self.name,
            paper=self.paper,
            statement=self.statement.name if self.statement is not None else self.name,
            variant=self.variant,
            relation=self.relation,
            status=status,
            expected=self.expected,
            instances=len(samples),
            worst_ratio=float(worst),
            metric="error/tol" if self.relation == "==" else ("value/bound" if self.relation == "<=" else "bound/value"),
            counterexample=counter,
            seconds=time.perf_counter() - t0,
            description=self.description,
            latex=self.statement.latex() if self.statement is not None else "",
            values=[float(s.value) for s in samples],
            bounds=[float(s.bound) for s in samples],
            falsifies=self.falsifies if status == "violated" else None,
            still_stands=self.still_stands if status == "violated" else "",
            equation=getattr(self.statement, "equation", "") or "",
            ratios=[float(r) for r in ratios],
            search=search,
            sampled_worst_ratio=float(sampled_worst),
        )

    def search(self, *, quick: bool = False, seed: int = 0, budget: int | None = None, level: str | None = None,
               backend=None):
        """The adversarial search over the check's ``family`` (:func:`fltheory.search.worst_case`).

        Returns the :class:`~fltheory.search.SearchResult` with ``sample``: the worst instance's
        :class:`Sample` (``None`` when no instance was inside the family).  ``budget`` defaults to
        the ``search_budget`` of ``level`` (``"quick"``, ``"full"`` or ``"deep"``; default ``"quick"``
        with ``quick``, else ``"full"``).  A check with ``evaluate_many`` searches ``"deep"`` batched,
        on ``backend`` (a name or an array namespace; default NumPy): the local share of ``budget``
        (0.6 of it) as unbatched, plus ``DEEP_WIDE * budget`` batched evaluations (random groups of
        ``DEEP_GROUP`` and an evolution strategy).
        """
        from .search import worst_case  # noqa: PLC0415

        if self.family is None:
            raise InputError(f"check {self.name} has no family to search")
        xp = _backend_namespace(backend)
        best: dict = {}

        def keep(s):
            r = self._ratio(s)[0]
            if not best or r > best["r"]:
                best.update(r=r, sample=s)
            return r

        def ratio(params):
            return keep(self.evaluate(params))

        def ratios(many):
            return [-math.inf if s is None else keep(s) for s in self.evaluate_many(many, xp)]

        level = _search_level(level, quick)
        b = budget if budget is not None else self.search_budget[SEARCH_LEVELS.index(level)]
        if level == "deep" and self.evaluate_many is not None:
            wide, local = DEEP_WIDE * b, max(1, round(0.6 * b))     # an unbatched search's local share: 0.6 b
            res = worst_case(ratios, self.family, budget=wide + local, seed=seed, initial=list(self.search_start),
                             batched=True, group=DEEP_GROUP, random_fraction=wide / 2 / (wide + local),
                             evolve=wide // 2)
        else:
            res = worst_case(ratio, self.family, budget=b, seed=seed, initial=list(self.search_start))
        res.sample = best.get("sample") if res.params is not None else None
        return res

    def planted(self, factor: float = 0.9) -> "Check":
        """A copy of the check with a planted error: its bound claims more by ``factor`` in (0, 1).

        An upper bound is multiplied by ``factor``, a lower bound divided by it (a printed constant
        made too good).  The copy expects ``violated``: a search that reaches a ratio above
        ``factor`` refutes it, so every ``tight`` statement (supremum 1) must be refuted, for any
        factor below 1, by a search that deserves the word.  Identities (``==``) have no direction
        to plant and are refused.

        >>> from fltheory.verify import Check, Sample
        >>> c = Check("demo", paper="demo", relation="<=",
        ...           sampler=lambda quick, seed: [Sample(value=0.95, bound=1.0, params={})])
        >>> c.planted(0.9).run().status
        'violated'
        """
        from . import validation as V  # noqa: PLC0415

        factor = V.real(factor, "factor", low=0.0, high=1.0, open_low=True, open_high=True)
        if self.relation == "==":
            raise InputError(f"check {self.name} is an identity (==): a planted factor needs a bound (<= or >=)")
        scale = factor if self.relation == "<=" else 1.0 / factor

        def plant(sample: Sample) -> Sample:
            return Sample(sample.value, sample.bound * scale, sample.params, sample.seed, sample.size)

        c = copy.copy(self)
        c.name, c.expected, c.falsifies = f"{self.name}[planted x{factor:g}]", "violated", None
        c.sampler = lambda quick, seed: [plant(s) for s in self.sampler(quick, seed)]
        if self.evaluate is not None:
            c.evaluate = lambda params: plant(self.evaluate(params))
        if self.evaluate_many is not None:
            c.evaluate_many = lambda many, xp: [None if s is None else plant(s) for s in self.evaluate_many(many, xp)]
        return c


def _backend_namespace(backend):
    """The array namespace of ``backend``: ``None`` (NumPy), a name (``"numpy"``, ``"cupy"``,
    ``"array_api_strict"``) or an array namespace (e.g. :func:`fltheory.backend.on_device`'s)."""
    from types import ModuleType  # noqa: PLC0415

    from .backend import get_backend  # noqa: PLC0415

    if backend is None:
        return np
    if isinstance(backend, ModuleType):
        if not hasattr(backend, "asarray"):
            raise InputTypeError(f"backend must be 'numpy', 'cupy', 'array_api_strict' or an array namespace; got "
                                 f"the module {backend.__name__}, which has no asarray")
        return backend
    if not isinstance(backend, str):
        raise InputTypeError(f"backend must be 'numpy', 'cupy', 'array_api_strict' or an array namespace; got "
                             f"{_shown(backend)}")
    try:
        return get_backend(backend)
    except ImportError as exc:      # a named backend that this machine lacks: said at the door, in one line
        raise InputError(f"backend={backend!r} cannot be used here: {exc}") from None


def _search_level(level, quick: bool) -> str:
    if level is None:
        return "quick" if quick else "full"
    if not isinstance(level, str) or level not in SEARCH_LEVELS:
        raise InputError(f"search must be one of {', '.join(SEARCH_LEVELS)} (the adversarial search's budget); got "
                         f"{level!r}")
    return level


def _jsonable(obj: Any):
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, (np.floating, np.integer, np.bool_)):
        return obj.item()
    if hasattr(obj, "get") and type(obj).__module__.startswith("cupy"):
        return obj.get().tolist()
    return obj


def strict_json(obj: Any):
    """``obj`` with every non-finite float replaced by the string ``"inf"``, ``"-inf"`` or ``"nan"``.

    ``json.dumps(strict_json(x), allow_nan=False)`` then never writes the non-standard
    ``Infinity``/``NaN`` tokens that strict JSON parsers reject.

    >>> strict_json({"ratio": float("inf"), "v": [1.0, float("nan")]})
    {'ratio': 'inf', 'v': [1.0, 'nan']}
    """
    if not isinstance(obj, (dict, list, tuple)):
        raise InputTypeError(f"obj must be a JSON document (a dict or a list); got {_shown(obj)}")
    return _strict_json(obj)


def _strict_json(obj: Any):
    obj = _jsonable(obj)
    if isinstance(obj, dict):
        return {k: _strict_json(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_strict_json(v) for v in obj]
    if not isinstance(obj, (str, int, float, type(None))):   # bool is an int
        raise InputTypeError(f"obj must hold only JSON values (strings, numbers, True/False/None); got {_shown(obj)}")
    if isinstance(obj, float) and not math.isfinite(obj):
        return "nan" if math.isnan(obj) else ("inf" if obj > 0 else "-inf")
    return obj


# ----------------------------------------------------------------------------- registry
_REGISTRY: dict[str, Check] = {}


def register(check: Check) -> Check:
    """Add a check to the registry (its name must be unique).  A built-in check whose deep search found a worse
    instance than its full run (:mod:`fltheory.papers.deep_starts`) gets that instance as a ``search_start``."""
    if check.name in _REGISTRY and _REGISTRY[check.name] is not check:
        raise InputError(f"a check named {check.name!r} is already registered")
    if check.family is not None and check.paper in PAPERS:
        from .papers.deep_starts import DEEP_STARTS  # noqa: PLC0415
        from .search import _initial_point  # noqa: PLC0415

        if check.name in DEEP_STARTS:
            start = _initial_point(check.family, DEEP_STARTS[check.name][0], len(check.search_start))
            if start not in check.search_start:
                check.search_start = tuple(check.search_start) + (start,)
    _REGISTRY[check.name] = check
    return check


@dataclass
class Paper:
    """A paper of a user's own, registered with :func:`register_paper` (or the ``fltheory.papers`` entry points)."""

    slug: str
    title: str = ""
    checks: Any = None   # None, a module name imported to register its checks, or a callable called once
    loaded: bool = False


_USER_PAPERS: dict[str, Paper] = {}
__all__ += ["Paper", "register_paper", "unregister_paper", "all_papers"]
ENTRY_POINT_GROUP = "fltheory.papers"


def _entry_points() -> dict:
    """The installed ``fltheory.papers`` entry points, name -> entry point (listed, not loaded)."""
    from importlib.metadata import entry_points  # noqa: PLC0415

    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def register_paper(slug: str, *, title: str = "", checks: Any = None) -> Paper:
    """Make ``slug`` a paper of ``fltheory verify``, the report, its figures and :func:`rebuild`.

    Its checks are ``Check(..., paper=slug)`` objects passed to :func:`register` (their names
    ``"<slug>.<what>"``, so that :func:`rebuild` finds them by name).  ``checks`` says where they
    come from when they are not registered yet: a module name (imported the first time the paper's
    checks are wanted) or a callable (called once then).  ``title`` heads the paper's figure.
    The five built-in papers (``PAPERS``) cannot be replaced; registering a slug again replaces it.

    Installed packages can do the same without code in the user's session: an entry point in
    the group ``fltheory.papers`` whose name is the slug and whose value is the module (or the
    callable) that registers the checks, e.g. in ``pyproject.toml``::

        [project.entry-points."fltheory.papers"]
        mine = "mypackage.fl_checks"

    :func:`unregister_paper` removes a paper and its checks.
    """
    from . import validation as V  # noqa: PLC0415

    if not isinstance(slug, str) or not slug.isidentifier():
        raise V.InputTypeError(f"slug must be a paper name (a Python identifier, 'mine' say); got {V.shown(slug)}")
    if slug in PAPERS:
        raise InputError(f"{slug!r} is a built-in paper; choose another slug")
    if not isinstance(title, str):
        raise V.InputTypeError(f"title must be text; got {V.shown(title)}")
    if checks is not None and not (isinstance(checks, str) or callable(checks)):
        raise V.InputTypeError(f"checks must be None, a module name or a callable; got {V.shown(checks)}")
    paper = Paper(slug, title, checks, loaded=checks is None)
    _USER_PAPERS[slug] = paper
    return paper


def unregister_paper(slug: str) -> None:
    """Forget a paper registered with :func:`register_paper` and every check registered for it."""
    if slug in PAPERS:
        raise InputError(f"{slug!r} is a built-in paper; it cannot be unregistered")
    if slug not in _USER_PAPERS:
        raise InputError(f"no registered paper {slug!r}; registered: {sorted(_USER_PAPERS)}")
    del _USER_PAPERS[slug]
    for name in [n for n, c in _REGISTRY.items() if c.paper == slug]:
        del _REGISTRY[name]


def all_papers() -> tuple:
    """Every paper ``fltheory verify`` knows: the five built-in ones (``PAPERS``), then those registered
    with :func:`register_paper`, then the installed ``fltheory.papers`` entry points."""
    out = list(PAPERS) + list(_USER_PAPERS)
    try:
        out += [name for name in _entry_points() if name not in out]
    except Exception:  # noqa: BLE001 - broken package metadata must not stop the built-in papers
        pass
    return tuple(out)


def paper_title(slug: str) -> str:
    """The title given to :func:`register_paper` ("" for the built-in papers and unknown slugs)."""
    p = _USER_PAPERS.get(slug)
    return p.title if p is not None else ""


def _load_paper(slug: str) -> None:
    """Import (or call) what registers a user paper's checks, once; an entry point is registered first."""
    if slug not in _USER_PAPERS:
        ep = _entry_points().get(slug)
        if ep is None:
            return
        try:
            obj = ep.load()
        except Exception as exc:  # noqa: BLE001
            raise InputError(f"the {ENTRY_POINT_GROUP} entry point {slug!r} ({ep.value}) failed to load: {exc}") from exc
        doc = (getattr(obj, "__doc__", None) or "").strip().split("\n\n", 1)[0]
        register_paper(slug, title=getattr(obj, "TITLE", "") or " ".join(doc.split()),
                       checks=obj if callable(obj) else None)
    p = _USER_PAPERS[slug]
    if not p.loaded:
        if isinstance(p.checks, str):
            importlib.import_module(p.checks)
        else:
            p.checks()
        p.loaded = True


def registry(papers: Iterable[str] | None = None) -> list[Check]:
    """Every registered check of ``papers`` (all papers by default, see :func:`all_papers`), importing their modules."""
    known = all_papers()
    wanted = tuple(known if papers is None else papers)
    for p in wanted:
        if p not in known:
            raise InputError(f"unknown paper {p!r}; known: {known} (register your own with verify.register_paper)")
        if p in PAPERS:
            importlib.import_module(f"fltheory.papers.{p}.checks")
        else:
            _load_paper(p)
    return [c for c in _REGISTRY.values() if c.paper in wanted]


# ----------------------------------------------------------------------------- report
@dataclass
class Report:
    verdicts: list
    quick: bool
    seed: int
    seconds: float
    environment: dict
    figures: tuple = ()  # the figure files written by write(), relative to its folder
    search: str = "full"  # the adversarial search's level (SEARCH_LEVELS)
    jobs: int = 1         # worker processes that ran the checks (the verdicts do not depend on it)
    figures_skipped: str = ""  # why write() drew no figure

    @property
    def ok(self) -> bool:
        return all(v.ok for v in self.verdicts)

    def table(self) -> str:
        """The console table: a block of rows per paper, one row per check, at most about 100 characters wide.

        Columns: the check (its name less the paper's prefix), the variant (printed, corrected, identity), the
        instances drawn, the adversarial search's evaluations, the worst ratio, the verdict (for a violated
        check, which printed object its counterexample refutes) and ``ok``, whether the verdict is the
        expected one (``holds`` expects holds or tight); the lines below the table name each unexpected
        verdict and say what each column means.
        """
        head = ("check", "variant", "n", "search", "ratio", "verdict", "ok")
        rows, papers = [], []
        for v in self.verdicts:
            if v.paper not in papers:
                papers.append(v.paper)
            name = v.check[len(v.paper) + 1:] if v.check.startswith(v.paper + ".") else v.check
            verdict = v.status + (f" ({v.falsifies})" if v.falsifies and v.status == "violated" else "")
            rows.append((v.paper, (name, v.variant, str(v.instances), str(v.budget) if v.search else "-",
                                   f"{v.worst_ratio:.4g}", verdict,
                                   "yes" if v.ok else "NO")))
        cells = [r for _, r in rows]
        widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(head)]
        fmt = "  ".join(f"{{:<{w}}}" for w in widths[:-1]) + "  {}"
        lines = [fmt.format(*head), fmt.format(*("-" * w for w in widths))]
        for paper in papers:
            lines.append(f"[{paper}]")
            lines += [fmt.format(*r) for p, r in rows if p == paper]
        n_ok = sum(v.ok for v in self.verdicts)
        lines.append(f"\n{n_ok}/{len(self.verdicts)} verdicts as expected ({self.seconds:.1f} s)")
        lines += [f"NO: {v.check} is {v.status}, {_expected_words(v.expected)}" for v in self.verdicts if not v.ok]
        lines += TABLE_LEGEND
        return "\n".join(lines)

    def to_markdown(self) -> str:
        out = ["# fltheory verification report", "",
               f"mode: {'quick' if self.quick else 'full'}; adversarial search: {self.search}; seed: {self.seed}; "
               f"{sum(v.ok for v in self.verdicts)}/{len(self.verdicts)} verdicts as expected; {self.seconds:.1f} s", "",
               HOLDS_MEANS, "",
               "| paper | check | statement | variant | instances | search budget | worst ratio | verdict | expected |",
               "|---|---|---|---|---|---|---|---|---|"]
        for v in self.verdicts:
            out.append(f"| {v.paper} | {v.check} | {v.statement} | {v.variant} | {v.instances} | "
                       f"{v.budget if v.search else '-'} | {v.worst_ratio:.4g} ({v.metric}) | **{v.status}**"
                       f"{' (not refuted)' if v.status == 'holds' else ''}"
                       f"{f' (false {v.falsifies})' if v.falsifies else ''} | {v.expected}{'' if v.ok else ' ✗'} |")
        searched = [v for v in self.verdicts if v.search]
        if searched:
            out += ["", "## Adversarial search", "",
                    "Each family below lies inside its statement's hypotheses; the worst instance found is merged "
                    "into the samples (it is rebuilt by `fltheory.verify.rebuild(check, params, seed)`).", ""]
            for v in searched:
                sr = v.search
                out.append(f"- **{v.check}**: {v.wording()}; sampler alone {v.sampled_worst_ratio:.4g}, search "
                           f"{sr['ratio']:.4g} (seed {sr['seed']}). Family: {sr['family']}")
        viol = [v for v in self.verdicts if v.counterexample]
        if viol:
            out += ["", "## Counterexamples (smallest found)", "",
                    "Each one is rebuilt by `fltheory.verify.rebuild(check, params, seed)`.", ""]
            for v in viol:
                what = f"false {v.falsifies}: " if v.falsifies else ""
                stands = f" Still stands: {v.still_stands}." if v.still_stands else ""
                ce = json.dumps(strict_json(v.counterexample), allow_nan=False)
                out.append(f"- **{v.check}** ({what}{v.description}).{stands} `{ce}`")
        out += ["", "## Figures", ""]
        if self.figures:
            out += [f"![{Path(f).stem}]({f})" + "\n" for f in self.figures]
        else:
            out.append(f"No figures: {self.figures_skipped or 'not drawn'}.")
        out += ["", "## Statements checked", ""]
        for v in self.verdicts:
            line = f"- **{v.check}** ({v.variant}, {v.wording()}): {v.description}"
            out.append(line + (f"\n\n  $${v.latex}$$\n" if v.latex else ""))
        out += ["", "## Environment", "", "```", json.dumps(self.environment, indent=2), "```", ""]
        return "\n".join(out)

    def to_json(self) -> dict:
        """The report as strict JSON data: non-finite numbers are the strings ``"inf"``, ``"-inf"``, ``"nan"``."""
        return strict_json({"ok": self.ok, "quick": self.quick, "search": self.search, "jobs": self.jobs,
                            "seed": self.seed, "seconds": self.seconds,
                            "environment": self.environment, "figures": list(self.figures),
                            "figures_skipped": self.figures_skipped,
                            "verdicts": [v.as_dict() for v in self.verdicts]})

    def write(self, folder: str | Path, *, figures: bool = True) -> Path:
        """Write ``report.md``, ``report.json`` and (with matplotlib) ``figures/`` into ``folder``.

        The figures are a summary (``figures/verdicts.png``) and one page per paper
        (``figures/verdicts_<paper>.png``); ``report.md`` links them.  Without matplotlib (or with
        ``figures=False``) none is drawn, ``self.figures`` stays empty and both reports say so.
        A file ``.fltheory`` marks the folder as a report, so that ``fltheory verify --out`` may
        rewrite it later (it refuses other existing folders without ``--force``).
        """
        folder = Path(folder)
        self.figures = ()
        self.figures_skipped = ""
        if figures:
            try:
                import matplotlib  # noqa: F401, PLC0415 - a dependency, but an environment may lack it
            except ImportError:
                self.figures_skipped = "matplotlib is not installed (pip install matplotlib)"
            else:
                from .plotting import verdict_figures  # noqa: PLC0415

                (folder / "figures").mkdir(parents=True, exist_ok=True)
                paths = verdict_figures(self.verdicts, folder / "figures")
                self.figures = tuple(str(Path(p).relative_to(folder).as_posix()) for p in paths)
        else:
            self.figures_skipped = "figures were not requested"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / MARKER).write_text("fltheory verify\n")   # how the command knows an earlier report
        (folder / "report.md").write_text(self.to_markdown())
        (folder / "report.json").write_text(json.dumps(self.to_json(), indent=2, allow_nan=False))
        return folder


HOLDS_MEANS = ("holds = not refuted: the worst ratio over the instances drawn and an adversarial search of the "
               "given budget stays below 1; it is evidence, not a proof.")


# the console table's legend (lines of at most 100 characters)
TABLE_LEGEND = (
    "n: instances drawn; search: evaluations of the adversarial search (- : none); ratio: the worst",
    "  value/bound (upper bound), bound/value (lower bound) or error/tolerance (identity); above 1 the",
    "  statement fails.",
    "verdict: holds = not refuted (the worst ratio stays below 1; evidence, not a proof); tight = not",
    "  refuted and the ratio reaches 1; violated (lemma) = a counterexample refutes the printed lemma.",
    "ok: the verdict is the expected one: a check expected to hold is ok with holds or tight; a check of",
    "  a printed statement known to be false is ok only when violated. report.md gives the details.",
)


def _expected_words(expected: str) -> str:
    """What a verdict had to be, in the table's words (``holds`` accepts ``tight``)."""
    return "expected holds or tight" if expected == "holds" else f"expected {expected}"


def _environment(seed: int, backend: str = "numpy") -> dict:
    import scipy  # noqa: PLC0415
    import sympy  # noqa: PLC0415

    from . import __version__  # noqa: PLC0415

    return {"fltheory": __version__, "python": platform.python_version(), "numpy": np.__version__,
            "scipy": scipy.__version__, "sympy": sympy.__version__, "machine": platform.machine(),
            "backend": backend, "seed": seed}


def _list_of_names(value, name: str, what: str):
    """``value`` as a list of strings, or None; text, a number, a 0-d array or anything not iterable is refused
    by name (a bare string would be read letter by letter)."""
    from . import validation as V  # noqa: PLC0415

    if value is None:
        return None
    if isinstance(value, (str, bytes)) or getattr(value, "ndim", 1) == 0 or not hasattr(value, "__iter__"):
        raise V.InputTypeError(f"{name} must be a list of {what} or None; got {V.shown(value)}")
    out = list(value)
    if not all(isinstance(v, str) for v in out):
        raise V.InputTypeError(f"{name} must be a list of {what} or None; got {V.shown(value)}")
    return out


def run(papers: Iterable[str] | None = None, *, quick: bool = False, seed: int = 0, progress: bool = False,
        only: str | None = None, search: str | None = None, jobs: int = 1,
        names: Iterable[str] | None = None, backend: str = "numpy") -> Report:
    """Run every registered check of ``papers`` (default: :func:`all_papers`) and return the :class:`Report`.

    ``only`` keeps the checks whose name contains that substring; ``names`` keeps exactly the
    checks of those names (each must exist).  ``search`` is the adversarial
    search's level for the checks with a family (``"quick"``, ``"full"`` or ``"deep"``; default
    ``"quick"`` with ``quick``, else ``"full"``).  ``jobs`` runs the checks in that many worker
    processes (``0``: one per usable CPU); the verdicts do not depend on it (each check draws from
    its own seeded streams), only the wall time does.  Workers are forked where the platform
    allows it, so checks registered at run time (:func:`register_paper`) run there too; elsewhere
    (spawned workers) a check a worker does not know runs in this process.  ``backend`` (``"numpy"``,
    ``"cupy"`` or ``"array_api_strict"``) is where the batched deep searches run (checks with
    ``evaluate_many``); with ``"cupy"`` the workers are spawned, not forked (CUDA does not survive a fork).
    """
    from . import validation as V  # noqa: PLC0415

    quick, progress = V.flag(quick, "quick"), V.flag(progress, "progress")
    seed = V.integer(seed, "seed", low=0, high=2**63 - 1)
    search = _search_level(search, quick)
    if not isinstance(backend, str):
        raise V.InputTypeError(f"backend must be the name 'numpy', 'cupy' or 'array_api_strict' (the workers take a "
                               f"name); got {V.shown(backend)}")
    _backend_namespace(backend)     # an unknown name, or CuPy missing, is said now
    jobs = V.integer(jobs, "jobs", low=0, high=1024)
    if jobs == 0:
        jobs = usable_cpus()
    if only is not None and not isinstance(only, str):
        raise V.InputTypeError(f"only must be a string or None; got {V.shown(only)}")
    papers = _list_of_names(papers, "papers", "paper names")
    names = _list_of_names(names, "names", "check names")
    t0 = time.perf_counter()
    early = None
    fork = "fork" in _start_methods() and backend not in ("cupy", "cp")
    if jobs > 1 and only is None and names is None and fork:
        wanted = _known_papers(papers)
        if len(wanted) >= jobs:   # (fewer papers than workers: the papers are split, after the import)
            # the workers start now and import their own papers' checks while this process imports them all
            early = _Pool(wanted, quick=quick, seed=seed, search=search, jobs=jobs, backend=backend)
    try:
        checks = registry(papers)
    except BaseException:
        if early is not None:
            early.pool.shutdown(wait=False, cancel_futures=True)
        raise
    if only is not None and not only.strip():
        raise InputError(f"only must name part of a check name ('feddelavg.theorem1', say); got {only!r}, which "
                         f"would keep every check")
    if only is not None:
        checks = [c for c in checks if only in c.name]
        if not checks:
            where = "any paper" if papers is None else "the papers " + ", ".join(papers)
            raise InputError(f"only={only!r} matches no check name of {where} (names look like "
                             f"'feddelavg.theorem1'; only keeps the checks whose name contains it)")
    if names is not None:
        wanted, have = list(dict.fromkeys(names)), {c.name for c in checks}
        unknown = [n for n in wanted if n not in have]
        if unknown:
            exist = {c.name for c in registry()}
            if all(n in exist for n in unknown):   # registered, but papers= or only= left them out
                kept = [f"papers={V.shown(papers)}" if papers is not None else "",
                        f"only={only!r}" if only is not None else ""]
                raise InputError(f"names {unknown} are registered checks, but {' and '.join(k for k in kept if k)} "
                                 f"leave{'s' if sum(map(bool, kept)) == 1 else ''} them out: names keeps checks "
                                 "among those papers and only select")
            raise InputError(f"names: no registered check is called {[n for n in unknown if n not in exist]} "
                             "(names look like 'feddelavg.theorem1')")
        checks = [c for c in checks if c.name in set(wanted)]
    bar = None
    if progress:
        bar = _progress(len(checks))
    verdicts: list = [None] * len(checks)
    with _one_blas_thread():
        if early is not None:
            early.collect(checks, verdicts, bar)
        elif jobs > 1 and len(checks) > 1:
            _run_pool(checks, verdicts, quick=quick, seed=seed, search=search, jobs=jobs, bar=bar, backend=backend,
                      fork=fork)
        for i, c in enumerate(checks):
            if verdicts[i] is None:
                if bar is not None:
                    bar.set_postfix_str(c.name[-40:])
                verdicts[i] = c.run(quick=quick, seed=seed, search=search, backend=backend)
                if bar is not None:
                    bar.update()
    if bar is not None:
        bar.close()
    return Report(verdicts, quick, seed, time.perf_counter() - t0, _environment(seed, backend), search=search,
                  jobs=jobs)


class _Lines:
    """Progress for a stream that is not a terminal (a log, a pipe): a plain line at every tenth of the work,
    never the carriage-return frames of a bar."""

    def __init__(self, total: int, stream):
        self.total, self.done, self.shown, self.stream = total, 0, 0, stream

    def set_postfix_str(self, text: str) -> None:
        pass

    def update(self, n: int = 1) -> None:
        self.done += n
        tenth = self.done * 10 // max(self.total, 1)
        if self.stream is not None and (tenth > self.shown or self.done == self.total):
            self.shown = tenth
            print(f"verify: {self.done}/{self.total} checks done", file=self.stream, flush=True)

    def close(self) -> None:
        pass


def _progress(total: int):
    """A tqdm bar on stderr when stderr is a terminal, else plain lines (:class:`_Lines`)."""
    stream = sys.stderr
    if stream is not None and getattr(stream, "isatty", lambda: False)():
        from tqdm import tqdm  # noqa: PLC0415

        return tqdm(total=total, desc="verify", unit="check", file=stream)
    return _Lines(total, stream)


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity where the platform says, else ``os.cpu_count()``)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:   # pragma: no cover - macOS, Windows
        return max(1, os.cpu_count() or 1)


def _one_blas_thread():
    """A context in which the BLAS library runs one thread per process (``threadpoolctl``, which
    scikit-learn brings; a no-op without it).  The checks' matrices are small: BLAS threads gain
    nothing on them and, beside the worker processes (one per CPU) or other work on the machine,
    they spin against each other -- a 650-dimensional Hessian-vector product of the digits
    federation took 0.18 s with the default threads on a busy 2-core machine and 0.003 s with one."""
    try:
        from threadpoolctl import threadpool_limits  # noqa: PLC0415
    except ImportError:  # pragma: no cover - scikit-learn, a dependency, brings it
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


# the built-in papers in the order the pool starts them: the longest first, so that none of them starts last (the
# seconds of their checks, 2-core guest, 2026-11-26: quick run local_adaptivity 8.0, defedavg 5.4, feddelavg 4.2,
# afl_dga 3.8, tdma 2.5; full run 34.6, 17.5, 27.9, 27.9, 20.6).  Only the wall time depends on it.
_LONGEST_FIRST = ("local_adaptivity", "defedavg", "feddelavg", "afl_dga", "tdma")


def _start_methods() -> list:
    import multiprocessing  # noqa: PLC0415

    return multiprocessing.get_all_start_methods()


def _known_papers(papers) -> list:
    """The papers :func:`registry` would import for ``papers`` (each one known), longest first."""
    known = all_papers()
    wanted = list(known if papers is None else papers)
    for p in wanted:
        if p not in known:
            raise InputError(f"unknown paper {p!r}; known: {known} (register your own with verify.register_paper)")
    rank = {p: i for i, p in enumerate(_LONGEST_FIRST)}
    return sorted(dict.fromkeys(wanted), key=lambda p: rank.get(p, len(rank)))


def _run_paper(paper: str, quick: bool, seed: int, search: str, backend: str) -> list:
    """A worker's task: ``(name, verdict)`` for every registered check of ``paper`` (imported here)."""
    with _one_blas_thread():
        return [(c.name, c.run(quick=quick, seed=seed, search=search, backend=backend)) for c in registry([paper])]


def _run_named(names: list, quick: bool, seed: int, search: str, backend: str) -> list:
    """A worker's task: the verdicts of the registered checks ``names`` (``None`` where this process lacks one)."""
    known: dict = {}
    for paper in dict.fromkeys(name.split(".", 1)[0] for name in names):   # one lookup per paper, not per check
        try:
            known.update((c.name, c) for c in registry([paper]))
        except InputError:
            pass
    out = []
    with _one_blas_thread():
        for name in names:
            c = known.get(name)
            out.append(None if c is None else c.run(quick=quick, seed=seed, search=search, backend=backend))
    return out


def _chunks(checks, jobs: int) -> list:
    """The pool's tasks: each paper's checks in ``ceil(jobs / papers)`` interleaved chunks, largest first.

    A paper's checks share cached instances (a data set, its reference optimum), so one worker
    runs a whole chunk of one paper and builds them once; with more workers than papers, each
    paper is split so that every worker has work.
    """
    by_paper: dict = {}
    for c in checks:
        by_paper.setdefault(c.paper, []).append(c.name)
    per = -(-jobs // max(1, len(by_paper)))
    chunks = [names[k::per] for names in by_paper.values() for k in range(min(per, len(names)))]
    return sorted(chunks, key=len, reverse=True)


def _forking_pool(jobs: int):
    """A process pool of ``jobs`` forked workers (they inherit every check registered so far)."""
    import multiprocessing  # noqa: PLC0415
    import warnings  # noqa: PLC0415
    from concurrent.futures import ProcessPoolExecutor  # noqa: PLC0415

    import scipy.optimize  # noqa: F401, PLC0415 - what every searched check imports: once here, not per worker
    with warnings.catch_warnings():
        # Python >= 3.12 warns that forking a process with threads may deadlock; the threads here are
        # the BLAS pool's, idle between calls, and its library re-initialises them in the child.
        warnings.filterwarnings("ignore", message=r".*fork\(\) may lead to deadlocks", category=DeprecationWarning)
        return ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("fork"))


class _Pool:
    """Whole papers run by forked workers from the start of :func:`run`, before this process has imported their
    checks: each worker imports the papers it runs while this process imports them all (the registry), so the
    imports of a run overlap instead of preceding the work (the default run: every check, ``jobs > 1``)."""

    def __init__(self, papers: list, *, quick, seed, search, jobs, backend):
        self.pool = _forking_pool(jobs)
        self.futures = {self.pool.submit(_run_paper, p, quick, seed, search, backend): p for p in papers}

    def collect(self, checks, verdicts, bar) -> None:
        from concurrent.futures import as_completed  # noqa: PLC0415

        where = {c.name: i for i, c in enumerate(checks)}
        with self.pool:
            for fut in as_completed(self.futures):
                for name, v in fut.result():
                    i = where.get(name)
                    if i is not None and verdicts[i] is None:
                        verdicts[i] = v
                        if bar is not None:
                            bar.set_postfix_str(name[-40:])
                            bar.update()


def _run_pool(checks, verdicts, *, quick, seed, search, jobs, bar, backend, fork) -> None:
    """Fill ``verdicts`` from a process pool of ``jobs`` workers (see :func:`_chunks`); workers are forked where
    the platform allows it and ``fork``, else spawned (a check a spawned worker does not know stays ``None``)."""
    import multiprocessing  # noqa: PLC0415
    from concurrent.futures import ProcessPoolExecutor, as_completed  # noqa: PLC0415

    names = {c.name: i for i, c in enumerate(checks)}
    if len(names) < len(checks):        # two checks of one name: a worker could not tell them apart
        return
    chunks = _chunks(checks, jobs)
    workers = min(jobs, len(chunks))
    pool = _forking_pool(workers) if fork else \
        ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"))
    with pool:
        futures = {pool.submit(_run_named, chunk, quick, seed, search, backend): chunk for chunk in chunks}
        for fut in as_completed(futures):
            for name, v in zip(futures[fut], fut.result()):
                verdicts[names[name]] = v
                if bar is not None and v is not None:
                    bar.set_postfix_str(name[-40:])
                    bar.update()


# ----------------------------------------------------------------------------- rebuilding a counterexample
@dataclass
class Rebuilt:
    """A counterexample rebuilt by :func:`rebuild`: the check's own :class:`Sample` and its ratio."""

    check: str
    sample: Sample
    ratio: float
    violated: bool

    @property
    def value(self) -> float:
        return float(self.sample.value)

    @property
    def bound(self) -> float:
        return float(self.sample.bound)

    @property
    def params(self) -> dict:
        return self.sample.params


def rebuild(check: str | Check, params: dict, seed: int | None = None, *, quick: bool | None = None,
            run_seed: int | None = None) -> Rebuilt:
    """Rebuild the instance of a report's counterexample from its check name, ``params`` and ``seed``.

    The check's sampler is run again and the instance with these parameters and seed is
    returned with its value, bound and ratio (the ratio of the report's ``worst ratio`` column).
    ``quick`` and ``run_seed`` are how the sampler was called (both are stored in the report's
    counterexample); by default the quick sampler is searched first, then the full one, with the
    run seed 0 and the instance's own seed.

    Parameters
    ----------
    check : the check's name, ``"<paper>.<what>"`` (as in the report's ``check`` column), or the
        :class:`Check` itself.
    params : the counterexample's ``params`` (as written in ``report.json``).
    seed : the counterexample's ``seed`` (``None`` for a deterministic instance).
    quick, run_seed : the sampler's arguments (the counterexample's ``quick`` and ``run_seed``).

    Raises
    ------
    InputError : unknown check, or no instance of its sampler has these params and seed.

    Example
    -------
    >>> import fltheory.verify as V
    >>> def sampler(quick, seed):
    ...     return [V.Sample(value=i, bound=2, params={"i": i}, seed=seed) for i in range(4)]
    >>> c = V.Check("demo.rebuild", paper="demo", relation="<=", sampler=sampler)
    >>> r = V.rebuild(c, {"i": 3}, 0)
    >>> r.value, r.bound, r.ratio, r.violated
    (3.0, 2.0, 1.5, True)
    """
    from . import validation as V  # noqa: PLC0415

    if not isinstance(check, (str, Check)):
        raise V.InputTypeError(f"check must be a check name (a string) or a Check; got {V.shown(check)}")
    if not isinstance(params, dict):
        raise V.InputTypeError(f"params must be a dict (the counterexample's params); got {V.shown(params)}")
    if seed is not None:
        seed = V.integer(seed, "seed", low=0, high=2**63 - 1)
    if run_seed is not None:
        run_seed = V.integer(run_seed, "run_seed", low=0, high=2**63 - 1)
    if quick is not None:
        quick = V.flag(quick, "quick")
    if isinstance(check, Check):
        c = check
    else:
        paper = check.split(".", 1)[0]
        if check not in _REGISTRY and paper in all_papers():
            registry([paper])
        if check not in _REGISTRY:
            raise InputError(f"no check named {check!r}; checks are named '<paper>.<what>' "
                             f"(papers: {', '.join(all_papers())})")
        c = _REGISTRY[check]
    want = strict_json(params)
    if c.family is not None and set(c.family.names) <= set(params):
        try:
            s = c.evaluate(dict(params))
        except (InputError, KeyError, TypeError, ValueError):
            s = None
        got = strict_json(s.params) if s is not None else {}
        # the instance's params may add derived entries (the worst entry or round) to the family's parameters
        if s is not None and all(k in got and got[k] == v for k, v in want.items()) and s.seed == seed:
            ratio, bad = c._ratio(s)
            return Rebuilt(c.name, s, float(ratio), bool(bad))
    run_seeds = [run_seed] if run_seed is not None else list(dict.fromkeys([0] + ([seed] if seed is not None else [])))
    for q in ([quick] if quick is not None else [True, False]):
        for rs in run_seeds:
            for s in c.sampler(q, rs):
                if s.seed == seed and strict_json(s.params) == want:
                    ratio, bad = c._ratio(s)
                    return Rebuilt(c.name, s, float(ratio), bool(bad))
    raise InputError(f"{c.name}: no instance of its sampler has params {V.shown(params, 200)} and seed {seed} "
                     f"(quick={quick}, run_seed={run_seed}); pass the counterexample's quick and run_seed")
