"""Test your own bound: hypothesis strategies for instances inside named assumptions, and a checker.

This module needs hypothesis (``pip install "fltheory[testing]"``).  It gives

* :func:`quadratic_federations`: quadratic federations with a chosen number of clients ``M``,
  dimension ``d``, condition number ``kappa``, heterogeneity of the client optima and gradient
  noise ``sigma2`` (each a value or a strategy), built by
  :func:`fltheory.random_quadratic_federation`;
* :func:`step_sizes`: step sizes inside a :class:`~fltheory.symbolic.Statement`'s conditions,
  given the other parameters (the admissible set is solved exactly with SymPy);
* :func:`statement_parameters`: every parameter of a statement, drawn from given strategies,
  kept only where the statement's conditions hold;
* :func:`delays` and :func:`schedules`: delay arrays and schedules of stale updates whose
  staleness never exceeds a bound ``lam`` (:func:`fltheory.schedule_generators.from_delays`,
  :func:`fltheory.schedule_generators.round_robin`);
* :func:`assert_statement`: asserts a statement against a quantity you compute (exactly or by
  simulation) on drawn cases; on failure hypothesis shrinks the case and the error
  (:class:`BoundViolated`) prints the smallest counterexample it found, with the call that
  rebuilds every drawn federation and schedule.

Every drawn federation and schedule carries the call that rebuilds it (:func:`recipe`); a
failing case is reported with those calls, so it can be rebuilt without hypothesis.

Example
-------
>>> import sympy as sp
>>> from hypothesis import strategies as st
>>> import fltheory as flt
>>> from fltheory.testing import assert_statement
>>> k = sp.Symbol("k", integer=True, nonnegative=True)
>>> claim = flt.Statement("small", lhs="k", relation="<=", expr=sp.Integer(10))
>>> try:
...     assert_statement(claim, lambda case: (case, {}), st.integers(0, 1000))
... except flt.testing.BoundViolated as exc:
...     print(exc.value, exc.bound)
11.0 10.0
"""
from __future__ import annotations

try:
    import hypothesis
    from hypothesis import HealthCheck, Phase, note, settings
    from hypothesis import strategies as st
except ImportError as exc:  # pragma: no cover - exercised by the packaging test
    raise ImportError(
        "fltheory.testing needs hypothesis: install it with  pip install \"fltheory[testing]\"  "
        "(or  pip install \"hypothesis>=6\")"
    ) from exc

import functools
import math
from typing import Any, Callable, Mapping

import numpy as np
import sympy as sp

from . import schedules as _schedules
from . import validation as V
from .problems import QuadraticFederation, random_quadratic_federation
from .symbolic import ConditionError, Statement, StatementError, _exact

__all__ = [
    "BoundViolated", "assert_statement", "check_case", "family_cases", "quadratic_federations", "step_sizes", "statement_parameters", "delays",
    "schedules", "recipe",
]

_RECIPE = "_fltheory_recipe"


class BoundViolated(AssertionError):
    """A statement that fails on a drawn case; the message is a reproducible counterexample.

    Attributes: ``statement`` (its name), ``value`` (the quantity), ``bound`` (the statement's
    right-hand side), ``ratio`` (value/bound for an upper bound, bound/value for a lower bound),
    ``parameters`` (the statement's arguments) and ``case`` (the drawn case, as rebuild calls).
    """

    def __init__(self, message, *, statement, value, bound, ratio, parameters, case):
        super().__init__(message)
        self.statement, self.value, self.bound, self.ratio = statement, value, bound, ratio
        self.parameters, self.case = parameters, case


# ------------------------------------------------------------------------------ helpers
def _strategy(value, name: str, check=None):
    """A strategy for ``value``: strategies pass through, plain values become ``st.just`` -- checked here by
    ``check(value, name)`` (a door of :mod:`fltheory.validation`), not first when an example is drawn."""
    if isinstance(value, st.SearchStrategy):
        return value
    return st.just(value if check is None else check(value, name))


def _tag(obj, text: str):
    object.__setattr__(obj, _RECIPE, text)
    return obj


def recipe(obj) -> str | None:
    """The call that rebuilds a federation or schedule drawn by this module (``None`` otherwise).

    >>> fed = quadratic_federations(M=2, d=2, kappa=3.0).example()  # doctest: +SKIP
    >>> recipe(fed)                                                 # doctest: +SKIP
    'fltheory.random_quadratic_federation(M=2, d=2, kappa=3.0, ...)'
    """
    return getattr(obj, _RECIPE, None)


def _shown(case) -> str:
    """A case as text, with drawn federations and schedules replaced by their rebuild calls."""
    r = recipe(case)
    if r is not None:
        return r
    if isinstance(case, Mapping):
        return "{" + ", ".join(f"{k!r}: {_shown(v)}" for k, v in case.items()) + "}"
    if isinstance(case, list):
        return "[" + ", ".join(_shown(v) for v in case) + "]"
    if isinstance(case, tuple):
        return "(" + ", ".join(_shown(v) for v in case) + ("," if len(case) == 1 else "") + ")"
    if isinstance(case, np.ndarray):
        return f"np.array({case.tolist()!r})"
    return repr(case)


# ------------------------------------------------------------------------------ federations
def quadratic_federations(*, M=st.integers(1, 5), d=st.integers(1, 4), kappa=st.floats(1.0, 100.0), mu=1.0,
                          heterogeneity=st.floats(0.0, 3.0), sigma2=None, weights="uniform", hessian="random"):
    """Quadratic federations with ``M`` clients in dimension ``d``, each client's Hessian of
    condition number exactly ``kappa`` with spectrum in ``[mu, kappa mu]`` (so the federation is
    ``mu``-strongly convex and ``kappa mu``-smooth), client optima spread by ``heterogeneity``
    (0: identical clients) and additive gradient noise of variance ``sigma2`` per coordinate
    (``None``: deterministic gradients).

    Each argument is a value or a hypothesis strategy; ``weights`` is ``"uniform"`` or
    ``"dirichlet"``, ``hessian`` ``"random"``, ``"common"`` or ``"diagonal"`` (see
    :func:`fltheory.random_quadratic_federation`).  Every federation carries its rebuild call
    (:func:`recipe`), which a failing case prints.

    >>> from hypothesis import given
    >>> @given(quadratic_federations(M=3, d=2, kappa=st.floats(1, 10)))
    ... def test(fed):
    ...     assert fed.M == 3 and float(fed.L) <= 10 * float(fed.mu) * (1 + 1e-9)
    >>> test()
    """
    V.choice(weights, "weights", ("uniform", "dirichlet"))
    V.choice(hessian, "hessian", ("random", "common", "diagonal"))
    # plain values are checked at once, with random_quadratic_federation's bounds
    parts = {"M": _strategy(M, "M", functools.partial(V.integer, low=1, high=10**6)),
             "d": _strategy(d, "d", functools.partial(V.integer, low=1, high=10**5)),
             "kappa": _strategy(kappa, "kappa", functools.partial(V.real, low=1.0, high=1e15)),
             "mu": _strategy(mu, "mu", functools.partial(V.real, low=0.0, open_low=True, high=1e150)),
             "heterogeneity": _strategy(heterogeneity, "heterogeneity", functools.partial(V.real, low=0.0, high=1e150)),
             "sigma2": _strategy(sigma2, "sigma2", lambda v, n: None if v is None else V.real(v, n, low=0.0)),
             "seed": st.integers(0, 2**32 - 1)}

    def build(kw):
        args = dict(kw, weights=weights, hessian=hessian)
        fed = random_quadratic_federation(**args)
        text = "fltheory.random_quadratic_federation(" + ", ".join(f"{k}={v!r}" for k, v in args.items()) + ")"
        note(f"federation: {text}")
        return _tag(fed, text)

    return st.fixed_dictionaries(parts).map(build)


# ------------------------------------------------------------------------------ statements
def _symbol(statement: Statement, name: str):
    V.instance(statement, "statement", Statement)
    V.instance(name, "name", str, "parameter name (a string)")
    for s in statement.symbols:
        if s.name == name:
            return s
    raise StatementError(f"name must be a parameter of {statement.name}, which takes {list(statement.parameters)}; "
                         f"got {name!r}")


def admissible_set(statement: Statement, name: str, **values) -> sp.Set:
    """The set of values of parameter ``name`` where every condition of ``statement`` holds,
    the other parameters fixed at ``values`` (exact, by SymPy's ``solveset``).

    >>> import sympy as sp
    >>> from fltheory.papers.local_adaptivity import bounds
    >>> admissible_set(bounds.h_sgd, "eta", mu=1, L=3, k=2)
    Interval.Lopen(0, 1/2)
    """
    sym = _symbol(statement, name)
    others = {s for s in statement.symbols if s is not sym}
    missing = sorted(s.name for s in others if s.name not in values)
    if missing:
        raise StatementError(f"{statement.name}: give values for {missing} to solve the conditions for {name}")
    extra = sorted(set(values) - {s.name for s in others})
    if extra:
        raise StatementError(f"{statement.name}: unknown parameter(s) {extra}")
    subs = {s: _exact(values[s.name], s.name, s) for s in others}
    x = sp.Dummy(name, real=True)
    subs[sym] = x
    # the symbol's own assumptions count as conditions (SymPy folds ``eta > 0`` to True)
    lo, hi, lopen, ropen = (sp.S.Zero if sym.is_nonnegative else -sp.oo), sp.oo, bool(sym.is_positive), False
    rest = []
    for c in statement.conditions:
        rel = c.expr.xreplace(subs)   # a SymPy relation built in code (Condition refuses text)
        if rel is sp.true:
            continue
        if rel is sp.false:
            return sp.S.EmptySet
        edge = _affine_edge(rel, x)
        if edge is None:
            rest.append(rel)
        elif edge == "all":
            continue
        elif edge == "none":
            return sp.S.EmptySet
        else:
            side, value, strict = edge
            if side == "upper" and (float(value) < float(hi) or (float(value) == float(hi) and strict)):
                hi, ropen = value, strict
            elif side == "lower" and (float(value) > float(lo) or (float(value) == float(lo) and strict)):
                lo, lopen = value, strict
    if float(lo) > float(hi) or (float(lo) == float(hi) and (lopen or ropen)):
        return sp.S.EmptySet
    out = sp.Interval(lo, hi, lopen, ropen)
    for rel in rest:
        out = out.intersect(sp.solveset(rel, x, domain=sp.S.Reals))
    return out


def _affine_edge(rel, x):
    """``("upper" | "lower", edge, strict)`` for a relation affine in ``x`` (``"all"``/``"none"``
    when it does not involve ``x``); ``None`` for anything else."""
    kinds = {sp.LessThan: (False, False), sp.StrictLessThan: (True, False),
             sp.GreaterThan: (False, True), sp.StrictGreaterThan: (True, True)}
    if type(rel) not in kinds:
        return None
    strict, flip = kinds[type(rel)]
    e = sp.expand(rel.lhs - rel.rhs)  # the relation is e <= 0 (e >= 0 when flipped)
    if not e.is_polynomial(x) or sp.degree(e, x) > 1:
        return None
    a, b = e.coeff(x, 1), e.coeff(x, 0)
    if not (a.is_number and b.is_number):
        return None
    if flip:
        a, b = -a, -b
    if a == 0:
        return "all" if ((b < 0) if strict else (b <= 0)) else "none"
    return ("upper" if a > 0 else "lower", -b / a, strict)


def step_sizes(statement: Statement, *, name: str = "eta", high: float = 1e3, **values):
    """Floats for parameter ``name`` (a step size by default) inside ``statement``'s conditions,
    the other parameters fixed at ``values``; an unbounded admissible set is cut at ``high``.

    >>> from fltheory.papers.local_adaptivity import bounds
    >>> from hypothesis import given
    >>> @given(step_sizes(bounds.h_sgd, mu=1.0, L=3.0, k=2))
    ... def test(eta):
    ...     assert 0 < eta <= 0.5
    >>> test()
    """
    high = V.real(high, "high", low=0.0, open_low=True)
    S = admissible_set(statement, name, **values)
    if isinstance(S, sp.Union):
        S = max(S.args, key=lambda a: float(a.measure) if a.is_Interval else 0.0)
    if not isinstance(S, sp.Interval) or S.is_empty or S.measure == 0:
        raise StatementError(f"{statement.name}: no interval of {name} satisfies every condition at {values} "
                             f"(admissible set: {S})")
    lo, hi = float(S.inf), min(float(S.sup), high)
    if not lo < hi:
        raise StatementError(f"{statement.name}: the admissible {name} in {S} lies above high={high}")
    return st.floats(lo, hi, exclude_min=bool(S.left_open), exclude_max=bool(S.right_open and hi == float(S.sup)),
                     allow_nan=False, allow_infinity=False)


def statement_parameters(statement: Statement, **strategies):
    """Dictionaries of every parameter of ``statement``, each drawn from ``strategies[name]`` (a
    strategy or a value), kept only where every condition holds.

    >>> from fltheory.papers.local_adaptivity import bounds
    >>> from hypothesis import given
    >>> @given(statement_parameters(bounds.h_sgd, eta=st.floats(0.01, 2), mu=1.0, L=st.floats(1, 4), k=3))
    ... def test(p):
    ...     assert p["eta"] * (p["L"] + p["mu"]) <= 2 * (1 + 1e-12)
    >>> test()
    """
    V.instance(statement, "statement", Statement)
    missing = sorted(set(statement.parameters) - set(strategies))
    if missing:
        raise StatementError(f"{statement.name}: give a strategy or a value for {missing}")
    extra = sorted(set(strategies) - set(statement.parameters))
    if extra:
        raise StatementError(f"{statement.name}: unknown parameter(s) {extra}; it takes {list(statement.parameters)}")
    integral = {x.name for x in statement.symbols if x.is_integer}
    parts = {k: _strategy(v, k, _scalar_or_array(k in integral)) for k, v in strategies.items()}
    return st.fixed_dictionaries(parts).filter(lambda p: bool(np.all(statement.holds(**p))))


def _scalar_or_array(integral: bool):
    """The door of a plain value of a statement's parameter: a real (an integer for an integer symbol) or an
    array of them."""
    def check(value, name):
        if isinstance(value, (list, tuple, np.ndarray)):
            return V.array(value, name, kind="integer" if integral else "real")
        return V.integer(value, name) if integral else V.real(value, name)
    return check


# ------------------------------------------------------------------------------ delays
def delays(lam, *, T, U=1):
    """Integer delay arrays ``(T, U)`` with every entry in ``[0, lam]`` (bounded delay ``lam``).

    >>> from hypothesis import given
    >>> @given(delays(3, T=5, U=2))
    ... def test(D):
    ...     assert D.shape == (5, 2) and D.min() >= 0 and D.max() <= 3
    >>> test()
    """
    lam = V.integer(lam, "lam", low=0, high=10**6)
    T = V.integer(T, "T", low=1, high=10**5)
    U = V.integer(U, "U", low=1, high=10**4)
    return st.lists(st.integers(0, lam), min_size=T * U, max_size=T * U).map(
        lambda v: np.array(v, dtype=np.int64).reshape(T, U))


def schedules(lam, *, N, T, U=1, kinds=("delays", "round_robin")):
    """Schedules of ``T`` server steps over ``N`` clients whose staleness never exceeds ``lam``.

    ``kinds`` picks the generators: ``"delays"`` (:func:`fltheory.schedule_generators.from_delays`: ``U``
    clients per step, drawn with their delays in ``[0, lam]``) and ``"round_robin"``
    (:func:`fltheory.schedule_generators.round_robin` with a group size ``S`` such that
    ``ceil(N/S) - 1 <= lam``).  Every schedule carries its rebuild call (:func:`recipe`).

    >>> from hypothesis import given
    >>> @given(schedules(2, N=4, T=6))
    ... def test(s):
    ...     assert int(s.max_staleness.max()) <= 2
    >>> test()
    """
    lam = V.integer(lam, "lam", low=0, high=10**6)
    N = V.integer(N, "N", low=1, high=10**5)
    T = V.integer(T, "T", low=1, high=10**5)
    U = V.integer(U, "U", low=1, high=N)
    if not isinstance(kinds, (list, tuple)) or not kinds:
        raise V.InputTypeError(f"kinds must be a non-empty tuple of 'delays' / 'round_robin'; got {kinds!r}")
    for k in kinds:
        V.choice(k, "kinds", ("delays", "round_robin"))
    options = []
    if "delays" in kinds:
        clients = st.lists(st.integers(0, N - 1), min_size=T * U, max_size=T * U)

        def from_delays(pair):
            c, D = np.array(pair[0], dtype=np.int64).reshape(T, U), pair[1]
            s = _schedules.from_delays(clients=c, delays=D, N=N)
            text = (f"fltheory.schedules.from_delays(clients=np.array({c.tolist()}), "
                    f"delays=np.array({D.tolist()}), N={N})")
            note(f"schedule: {text}")
            return _tag(s, text)

        options.append(st.tuples(clients, delays(lam, T=T, U=U)).map(from_delays))
    if "round_robin" in kinds:
        sizes = [S for S in range(1, N + 1) if math.ceil(N / S) - 1 <= lam]

        def rr(S):
            text = f"fltheory.schedules.round_robin(N={N}, S={S}, T={T})"
            note(f"schedule: {text}")
            return _tag(_schedules.round_robin(N=N, S=S, T=T), text)

        options.append(st.sampled_from(sizes).map(rr))
    return st.one_of(*options)


# ------------------------------------------------------------------------------ the checker
def _holds(relation: str, value: float, bound: float, rtol: float, atol: float) -> bool:
    slack = atol + rtol * max(abs(value), abs(bound))
    if relation in ("<=", "<"):
        return value <= bound + slack
    if relation in (">=", ">"):
        return value >= bound - slack
    return abs(value - bound) <= slack


def _ratio(relation: str, value: float, bound: float) -> float:
    if relation in ("<=", "<"):
        num, den = value, bound
    elif relation in (">=", ">"):
        num, den = bound, value
    else:
        return abs(value - bound)
    if den == 0:
        return math.inf if num > 0 else 1.0
    return num / den


def _in_test() -> bool:
    return bool(hypothesis.currently_in_test_context())


def check_case(statement: Statement, value, params: Mapping, *, rtol: float = 1e-9, atol: float = 1e-12,
               case: Any = None, target: bool = True) -> float:
    """Check ``statement`` on ONE case of your own test; return its ratio, raise on a violation.

    For your own ``@given`` tests (any strategies, any set-up): compute the quantity ``value`` and
    the statement's ``params`` on the drawn case and call this.  Inside a hypothesis test it

    * discards the case (``hypothesis.assume``) when ``params`` fail one of the statement's
      conditions (outside a test that is a :class:`~fltheory.symbolic.ConditionError`);
    * reports the ratio (value/bound for ``<=``, bound/value for ``>=``, the error for ``==``) as a
      ``hypothesis.target``, so the targeted phase climbs towards the worst case (``target=False``:
      not);
    * raises :class:`BoundViolated` (value, bound, ratio, parameters and ``case``, shown with the
      calls that rebuild it) when the relation fails beyond ``rtol``/``atol``.

    Example
    -------
    >>> import sympy as sp
    >>> import fltheory as flt
    >>> from fltheory.testing import check_case
    >>> k = sp.Symbol("k", integer=True, nonnegative=True)
    >>> claim = flt.Statement("small", lhs="k", relation="<=", expr=sp.Integer(10))
    >>> check_case(claim, 5, {})          # the measured k = 5 against the bound 10
    0.5
    """
    V.instance(statement, "statement", Statement)
    if not isinstance(params, Mapping):
        raise V.InputTypeError(f"params must be a dict of the statement's arguments; got {V.shown(params)}")
    rtol, atol = V.real(rtol, "rtol", low=0.0), V.real(atol, "atol", low=0.0)
    target = V.flag(target, "target")
    value = V.real(value, "value (the measured quantity)", finite=False)
    try:
        holds = bool(np.all(statement.holds(**params)))
    except StatementError as exc:
        raise StatementError(f"params are not the statement's: {exc}") from None
    inside = _in_test()
    if not holds:
        if inside:
            hypothesis.assume(False)
        raise ConditionError(f"{statement.name}: the parameters fail its conditions ({'; '.join(c.text for c in statement.conditions)}); "
                             f"got {dict(params)}")
    try:
        bound = float(statement(**params))
    except ConditionError:  # pragma: no cover - holds() said yes; a boundary case in round-off
        if inside:
            hypothesis.assume(False)
        raise
    ratio = _ratio(statement.relation, value, bound)
    if target and inside and math.isfinite(ratio):  # the targeted phase climbs towards the worst ratio (issue 21)
        hypothesis.target(float(ratio), label="ratio (value/bound for <=, bound/value for >=, |error| for ==)")
    if _holds(statement.relation, value, bound, rtol, atol):
        return float(ratio)
    shown_params = ", ".join(f"{k}={v!r}" for k, v in sorted(params.items()))
    message = (f"{statement.name} is violated: {value!r} {statement.relation} {bound!r} fails "
               f"(ratio {ratio:.6g})\n  parameters: {shown_params}\n  case: {_shown(case)}")
    raise BoundViolated(message, statement=statement.name, value=value, bound=bound, ratio=ratio,
                        parameters=dict(params), case=_shown(case))


def family_cases(family) -> st.SearchStrategy:
    """A hypothesis strategy of a :class:`fltheory.search.Family`'s instances (its constrained
    parameters, as :func:`fltheory.search.worst_case` sees them); points outside the family are
    discarded."""
    from .search import Choice, Family, Integer  # noqa: PLC0415

    V.instance(family, "family", Family)
    parts = {}
    for p in family.params:
        if isinstance(p, Choice):
            parts[p.name] = st.sampled_from(p.options)
        elif isinstance(p, Integer):
            parts[p.name] = st.integers(p.low, p.high)
        elif p.log:
            parts[p.name] = st.floats(math.log(p.low), math.log(p.high)).map(
                lambda t, p=p: min(max(math.exp(t), p.low), p.high))
        else:
            parts[p.name] = st.floats(p.low, p.high)
    return st.fixed_dictionaries(parts).map(family.apply).filter(lambda q: q is not None)


def assert_statement(statement: Statement, quantity: Callable[[Any], tuple], cases, *,
                     max_examples: int | None = None, rtol: float = 1e-9, atol: float = 1e-12, seed: int | None = None,
                     search_budget: int = 100) -> int:
    """Assert ``statement`` on every case drawn from ``cases``; push towards the worst; shrink and report a failure.

    The ratio of every case (value/bound for an upper bound) is a ``hypothesis.target``: after
    the random cases, hypothesis's targeted phase mutates the worst ones towards a larger ratio.
    When ``cases`` is a family, the worst draws then start the package's search (random
    instances, Nelder-Mead on the reals, neighbourhood moves on the integers, the ends of every
    interval), so a nearly tight or slightly loosened bound is found far more often than by
    random cases alone.

    A case whose parameters fail one of the statement's conditions is not a counterexample; it
    is discarded (hypothesis reports an error if nearly every case is).  On failure, after
    shrinking, :class:`BoundViolated` is raised with the smallest case found: the value, the
    bound, their ratio, the parameters and the calls that rebuild the case.  Returns the number
    of cases checked (draws plus searched instances) when the statement held on all of them.

    Parameters
    ----------
    statement : the bound or identity (``relation`` ``<=``, ``>=`` or ``==``).
    quantity : ``quantity(case) -> (value, parameters)``: the measured left-hand side (exact or
        simulated, a real number) and the statement's parameters on that case (a dict).
    cases : a hypothesis strategy (e.g. :func:`quadratic_federations` combined with
        :func:`step_sizes` in an ``st.composite``), or a :class:`fltheory.search.Family` (then the
        cases are its instances, a dict of its parameters, and the adversarial search runs too).
    max_examples : cases to try; ``None`` (default): what your loaded hypothesis profile says
        (``settings.load_profile``; hypothesis's own default is 100).  The other settings of the
        profile (verbosity, health checks, phases) are kept; the targeted phase is always on, the
        explain phase off, and no example database is written.
    rtol, atol : slack of the comparison (for round-off, or Monte Carlo error of a simulation).
    seed : ``None`` (default) draws the same cases on every run (derandomised, reproducible);
        an integer draws from that seed.
    search_budget : with a family as ``cases``: the evaluations of the adversarial search
        (:func:`fltheory.search.worst_case`) that starts from the best hypothesis draws.
    """
    from .search import Family, worst_case  # noqa: PLC0415

    V.instance(statement, "statement", Statement)
    if not callable(quantity):
        raise V.InputTypeError(f"quantity must be a function case -> (value, parameters); got {V.shown(quantity)}")
    family = cases if isinstance(cases, Family) else None
    if family is not None:
        cases = family_cases(family)
    V.instance(cases, "cases", st.SearchStrategy, "hypothesis strategy or fltheory.search.Family")
    if max_examples is not None:
        max_examples = V.integer(max_examples, "max_examples", low=1, high=10**6)
    rtol, atol = V.real(rtol, "rtol", low=0.0), V.real(atol, "atol", low=0.0)
    if seed is not None:
        seed = V.integer(seed, "seed", low=0, high=2**63 - 1)
    search_budget = V.integer(search_budget, "search_budget", low=1, high=10**7)
    checked = [0]
    best: list = []          # (ratio, case) of the draws, for the search's starts

    def measured(case):
        out = quantity(case)
        if not (isinstance(out, tuple) and len(out) == 2 and isinstance(out[1], Mapping)):
            raise V.InputTypeError("quantity(case) must return (value, parameters), parameters a dict of the "
                                   f"statement's arguments; got {V.shown(out)}")
        return out

    def run(case):
        value, params = measured(case)
        try:
            r = check_case(statement, value, params, rtol=rtol, atol=atol, case=case)
        except StatementError as exc:
            raise StatementError(f"quantity(case) returned parameters the statement cannot take: {exc}") from None
        checked[0] += 1
        if family is not None:
            best.append((r, case))

    profile = settings.default
    # the profile's phases with the targeted one always on; the explain phase (re-running a failure to annotate
    # it) is left out: the counterexample's own parameters and rebuild calls say what failed
    phases = tuple(p for p in profile.phases if p.name != "explain") + (
        (Phase.target,) if Phase.target not in profile.phases else ())
    cfg = settings(profile, max_examples=profile.max_examples if max_examples is None else max_examples,
                   deadline=None, database=None, derandomize=seed is None, phases=phases,
                   report_multiple_bugs=False, print_blob=False,
                   suppress_health_check=tuple(profile.suppress_health_check) + (
                       HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large))
    test = cfg(hypothesis.given(cases)(run))
    if seed is not None:
        test = hypothesis.seed(seed)(test)
    test()
    if family is not None:
        starts = [c for _, c in sorted(best, key=lambda rc: -rc[0] if math.isfinite(rc[0]) else -math.inf)[:3]]

        def ratio(params):
            value, sp_params = measured(params)
            try:
                r = check_case(statement, value, sp_params, rtol=rtol, atol=atol, case=params, target=False)
            except ConditionError:
                return -math.inf
            checked[0] += 1
            return r

        worst_case(ratio, family, budget=search_budget, seed=0 if seed is None else seed, initial=starts)
    return checked[0]
