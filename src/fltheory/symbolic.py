"""Statements: one SymPy expression per numbered result, in two modes.

A :class:`Statement` is ``lhs  relation  expr`` where ``expr`` is a SymPy expression in named
symbols, together with its conditions (each a SymPy relation with a human-readable text), its
provenance (paper, equation), its status (``printed`` as in the paper, or ``corrected`` with
the reason) and whether it is tight.  The same object

* renders LaTeX (:meth:`Statement.latex`),
* evaluates exactly on Python/SymPy numbers (:meth:`Statement.evaluate`), and
* evaluates fast on NumPy or CuPy arrays, broadcasting, with a cached ``lambdify`` (on CuPy, one fused
  elementwise kernel whose C source SymPy prints, a paper's named quantities as calls of their C functions:
  :mod:`fltheory._cuda_closed`)
  (:meth:`Statement.__call__`, which pairs equal-length arrays, and :meth:`Statement.grid` with
  ``outer=True``, every combination of its axes): array type in, array type out.

Evaluating where a condition fails raises :class:`ConditionError` naming the condition, never a
silent number; ``mask=True`` (or :meth:`Statement.holds`) returns where the conditions hold
instead.  NaN, inf or shapes that do not broadcast raise :class:`StatementError`.  Every paper's
statements are found by name with :func:`statement` (``"feddelavg.theorem1"``) and listed by
:func:`statements`; in Jupyter a statement renders as its LaTeX.

Example
-------
>>> import sympy as sp
>>> from fltheory.symbolic import Statement, Condition
>>> eta, L = sp.symbols("eta L", positive=True)
>>> st = Statement("demo", lhs=r"\\rho", relation="<=", expr=1 - eta * L / 2,
...                conditions=[Condition(eta * L <= 1, "eta <= 1/L")], paper="demo", equation="(1)")
>>> st.evaluate(eta=sp.Rational(1, 4), L=2)
3/4
>>> st.evaluate(eta=1, L=2)
Traceback (most recent call last):
...
fltheory.symbolic.ConditionError: demo: condition 'eta <= 1/L' fails at L=2, eta=1
"""
from __future__ import annotations

import contextvars
import math
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from typing import Any, Iterable, Mapping, NamedTuple

import numpy as np
import sympy as sp
from sympy.printing.latex import LatexPrinter

from .backend import is_array, namespace, to_numpy
from .parallel import num_threads, run_parts
from .validation import InputError, InputTypeError, integer as _integer, shown

__all__ = ["Statement", "Condition", "ConditionError", "StatementError", "GridSizeError", "GRID_POINTS_LIMIT",
           "Evaluation", "statement", "statements"]

_RELATIONS = {"<=": r"\le", ">=": r"\ge", "==": "=", "<": "<", ">": ">"}


class StatementError(InputError):
    """A statement used wrongly (a missing or unknown parameter)."""


class ConditionError(InputError):
    """A statement evaluated where one of its conditions fails."""


class GridSizeError(StatementError):
    """An outer-product grid (:meth:`Statement.grid`) with more points than its budget."""


GRID_POINTS_LIMIT = 10**7  # Statement.grid refuses outer products of more points than this unless max_points= says so


class Evaluation(NamedTuple):
    """A vectorised evaluation with ``mask=True``: the values and where every condition holds."""

    value: Any
    holds: Any


EXACT_DIGITS_LIMIT = 10**6  # exact evaluation refuses powers that would build numbers longer than this


def _exact(v, name: str, symbol=None):
    """An exact SymPy number for a user value; text and non-numbers are refused, never parsed.

    With ``symbol``, a symbol declared integer takes integral values only (``5`` or ``5.0``, which
    becomes ``Integer(5)``); ``2.5`` for it is an :class:`InputTypeError` naming ``name``.
    """
    out = _exact_number(v, name)
    if symbol is not None and symbol.is_integer:
        if not out.is_integer and not (out.is_Float and float(out).is_integer()):
            raise InputTypeError(f"{name} must be an integer (the symbol {symbol.name} is declared integer); got "
                                 f"{shown(v)}")
        out = sp.Integer(int(out))
    return out


def _exact_number(v, name: str):
    if isinstance(v, np.ndarray) and v.ndim == 0:
        v = v.item()
    if isinstance(v, (bool, np.bool_)) or isinstance(v, (str, bytes, bytearray)) or isinstance(v, (complex, np.complexfloating)):
        raise InputTypeError(f"{name} must be a real number (int, Fraction, Decimal, float or a SymPy number); got "
                             f"{shown(v)} ({type(v).__name__})")
    if isinstance(v, Fraction):
        return sp.Rational(v.numerator, v.denominator)
    if isinstance(v, Decimal):
        if not v.is_finite():
            raise StatementError(f"{name} must be a finite real number; got {v}")
        if abs(v.adjusted()) > EXACT_DIGITS_LIMIT:
            raise StatementError(f"{name}: the Decimal {shown(v)} would build a number of more than "
                                 f"{EXACT_DIGITS_LIMIT:,} digits")
        f = Fraction(v)
        return sp.Rational(f.numerator, f.denominator)
    if isinstance(v, (int, np.integer)):
        return sp.Integer(int(v))
    if isinstance(v, (float, np.floating)):
        if not np.isfinite(v):
            raise StatementError(f"{name} must be a finite real number; got {v}")
        return sp.Float(float(v), 30)
    if isinstance(v, sp.Basic):
        if not v.is_number or v.free_symbols:
            raise InputTypeError(f"{name} must be a number; got the expression {shown(v)}")
        if v.has(sp.nan, sp.zoo, sp.oo, -sp.oo):
            raise StatementError(f"{name} must be a finite real number; got {v}")
        if v.is_real is not True:
            raise InputTypeError(f"{name} must be a real number; got {shown(v)}, which is not real")
        return v
    if isinstance(v, np.ndarray):
        raise StatementError(f"{name}: exact evaluation takes one number, got shape {v.shape}; for arrays call the statement "
                             f"(vectorised mode) instead of .evaluate()")
    raise InputTypeError(f"{name} must be a real number; got {shown(v)} ({type(v).__name__})")


def _sympy_expression(value, name: str):
    """A SymPy expression built in code (or a real number, converted exactly); text is never parsed.

    A string (or bytes) is an :class:`InputTypeError` naming ``name``: ``sympify`` would run it as
    Python code.  Numbers pass through :func:`_exact` (``Fraction`` stays a ``Rational``).
    """
    if isinstance(value, (str, bytes, bytearray)):
        raise InputTypeError(f"{name} must be a SymPy expression built in code (sp.Symbol('eta') * 2, say), not "
                             f"text; got {shown(value)} (text is never parsed)")
    if isinstance(value, sp.Expr):
        return value
    if isinstance(value, sp.Basic):
        raise InputTypeError(f"{name} must be a SymPy expression; got {shown(value)} ({type(value).__name__})")
    return _exact(value, name)


def _sympy_relation(value, name: str):
    """A condition's SymPy relation (``eta * L <= 1``, ``sp.And(...)``, ``sp.true``) built in code; text refused."""
    if isinstance(value, (bool, np.bool_)):
        return sp.true if value else sp.false
    if isinstance(value, (str, bytes, bytearray)):
        raise InputTypeError(f"{name} must be a SymPy relation built in code (eta * L <= 1, say), not text; got "
                             f"{shown(value)} (text is never parsed)")
    if isinstance(value, sp.logic.boolalg.Boolean) and isinstance(value, sp.Basic):
        return value
    raise InputTypeError(f"{name} must be a SymPy relation (eta * L <= 1, sp.And(...), sp.true); got "
                         f"{shown(value)} ({type(value).__name__})")


def _text(value, name: str, *, optional: bool = False):
    """A display text (a name, LaTeX, a reason): kept as text, never sympified."""
    if value is None and optional:
        return value
    if not isinstance(value, str):
        raise InputTypeError(f"{name} must be a string{' or None' if optional else ''}; got {shown(value)} "
                             f"({type(value).__name__})")
    return value


def _check_exact_cost(expr, subs, name: str):
    """Refuse at once a power whose exact value would have more than EXACT_DIGITS_LIMIT digits (the powers of
    named quantities' definitions included: a quantity such as FedDelAvg's h(x) evaluates its formula)."""
    pows, todo, seen = set(expr.atoms(sp.Pow)), list(expr.atoms(sp.Function)), set()
    while todo:
        f = todo.pop()
        if f in seen or not hasattr(f, "explicit"):
            continue
        seen.add(f)
        try:
            body = f.explicit()
        except Exception:  # noqa: BLE001 - not a named quantity after all
            continue
        pows |= body.atoms(sp.Pow)
        todo += list(body.atoms(sp.Function))
    # inner powers first: substituting into a power whose base holds another power evaluates that one (a power
    # inside a base or exponent has fewer nodes than the power around it)
    for p in sorted(pows, key=lambda q: (sum(1 for _ in sp.preorder_traversal(q)), sp.default_sort_key(q))):
        if any(hasattr(f, "explicit") for f in p.atoms(sp.Function)):
            continue   # substituting would evaluate a named quantity: its definition's powers are checked on their own
        base, ex = p.base.xreplace(subs), p.exp.xreplace(subs)
        if not (base.is_Rational and ex.is_Rational):   # b**(p/q) takes b**(p//q) exactly: the integer part counts
            continue
        if base in (0, 1, -1) or abs(int(ex)) < 64:
            continue
        digits = abs(int(ex)) * int(max(abs(base.p).bit_length(), base.q.bit_length()) * 0.30103 + 1)
        if digits > EXACT_DIGITS_LIMIT:
            given = ", ".join(sorted(f"{s.name}={subs[s]}" for s in (p.base.free_symbols | p.exp.free_symbols)
                                     if s in subs))
            raise StatementError(f"{name}: exact evaluation would build a number of about {digits:,} digits "
                                 f"({base}**{ex}{', from ' + given if given else ''}); call the statement (float mode) "
                                 f"or use smaller exponents")


class _PaperLatex(LatexPrinter):
    """SymPy's LaTeX with sums that open on a positive term (``1 - \\eta\\mu``, ``\\tau/\\alpha - \\Delta``)."""

    def _print_Add(self, expr, order=None):
        terms = list(self._as_ordered_terms(expr, order=order))
        if terms and _could_be_negated(terms[0]):
            first = next((t for t in terms if not _could_be_negated(t)), None)
            if first is not None:
                terms.remove(first)
                terms.insert(0, first)
        tex = ""
        for i, term in enumerate(terms):
            if i == 0:
                pass
            elif _could_be_negated(term):
                tex += " - "
                term = -term
            else:
                tex += " + "
            if i == 0 and _could_be_negated(term):
                tex += "- "
                term = -term
            term_tex = self._print(term)
            if self._needs_add_brackets(term):
                term_tex = r"\left(%s\right)" % term_tex
            tex += term_tex
        return tex


def _could_be_negated(term) -> bool:
    return bool(term.could_extract_minus_sign())


def _tex(expr, names) -> str:
    """LaTeX in the order a paper writes: ``1 - \\eta\\mu``, ``T^{2/3}``."""
    return _PaperLatex(dict(symbol_names=names, fold_frac_powers=True)).doprint(expr)


def _drop_abs(expr, nonneg: set):
    """``|x| -> x`` for symbols that a condition makes nonnegative (SymPy keeps ``|x|`` otherwise)."""
    if not nonneg or not expr.has(sp.Abs):
        return expr
    return expr.xreplace({sp.Abs(s): s for s in nonneg})


def _tex_condition(c, names, nonneg) -> str:
    rel = _drop_abs(c.expr, nonneg)
    if isinstance(rel, sp.Equality) and isinstance(rel.rhs, sp.floor) and rel.rhs.args[0] == rel.lhs:
        return f"{_tex(rel.lhs, names)} \\in \\mathbb{{Z}}"
    return _tex(rel, names)


def _truth(parts, args, rtol):
    """Elementwise truth of compiled conditions ``(kinds, sides)``: one call of ``sides`` gives every side of
    every relation; ``kinds`` says how to read them (``None``: a truth value, else ``strict`` and a
    ``(small, big)`` pair), with relative slack on inequalities."""
    kinds, sides = parts
    vals = sides(*args)
    ok, i = True, 0
    for strict in kinds:
        if strict is None:
            ok = ok & vals[i]
            i += 1
            continue
        lo, hi = vals[i], vals[i + 1]
        i += 2
        scale = abs(lo) + abs(hi)
        ok = ok & ((lo < hi) if strict else (lo <= hi + rtol * scale))
    return ok


_BLOCK = 1 << 15  # elements per block of a blocked evaluation (a few arrays of it stay in the CPU cache)
_SCOPE: contextvars.ContextVar = contextvars.ContextVar("fltheory_evaluation_scope", default=None)


def scope_memo() -> dict | None:
    """A dict private to the vectorised evaluation in progress (one block of it), else ``None``.

    A named quantity's NumPy implementation may keep there what another quantity of the same
    statement needs again (a power, a sum shared by psi and Psi), keyed by the identity of its
    array arguments.  It lives for one call of the compiled function only, so a value can never
    outlive the arrays it was computed from (arrays changed in place between two calls included).
    """
    return _SCOPE.get()


def _scoped(f, args):
    token = _SCOPE.set({})
    try:
        return f(*args)
    finally:
        _SCOPE.reset(token)


def _blocked(f, args, shape, dtype=np.float64, pair=False):
    """``f(*args)`` on NumPy arrays, evaluated block by block along the first axis.

    A long chain of elementwise operations on arrays of 10^6 entries runs at memory speed and
    allocates a fresh temporary per operation; on blocks of about ``_BLOCK`` entries every temporary
    stays in the cache, which is about twice as fast.  Arguments that do not vary along the first
    axis are passed whole; small inputs (or a first axis too short to split) are evaluated at once.
    With ``pair``, ``f`` returns ``(value, truth)`` and so does this function.
    """
    size = int(np.prod(shape)) if shape else 1
    if size < 4 * _BLOCK or not args:
        return _scoped(f, args)
    inner = int(np.prod(shape[1:])) if len(shape) > 1 else 1
    # with threads, larger blocks: fewer Python-level calls contend for the interpreter lock
    rows = max(1, (_BLOCK if num_threads() == 1 else 2 * _BLOCK) // max(inner, 1))
    if shape[0] < 4 * rows:
        return _scoped(f, args)
    full = [a.reshape((1,) * (len(shape) - a.ndim) + a.shape) if a.ndim else a for a in args]
    split = [a.ndim > 0 and a.shape[0] == shape[0] and shape[0] > 1 for a in full]
    out = np.empty(shape, dtype=dtype)
    truth = np.empty(shape, dtype=bool) if pair else None   # with pair, f returns (value, truth)

    def part(lo, hi):
        for i in range(lo, hi, rows):
            j = min(i + rows, hi)
            got = _scoped(f, [a[i:j] if cut else a for a, cut in zip(full, split)])
            if pair:
                out[i:j], truth[i:j] = got
            else:
                out[i:j] = got

    run_parts(part, shape[0], align=rows, min_part=2 * rows)   # blocks in threads: the same bits for any number
    return (out, truth) if pair else out


@dataclass(frozen=True)
class Condition:
    """A condition of a statement: a SymPy relation and the text shown when it fails."""

    expr: Any
    text: str

    def __post_init__(self):
        object.__setattr__(self, "expr", _sympy_relation(self.expr, "Condition.expr"))
        _text(self.text, "Condition.text")

    def symbols(self) -> set:
        return set(self.expr.free_symbols)


@dataclass(frozen=True, eq=False)
class Statement:
    """A numbered result as ``lhs relation expr`` under ``conditions``.

    Evaluating
    ----------
    * ``st(**values)`` -- the usual call: arrays broadcast as NumPy's do, so equal-length 1-D
      arrays are PAIRED (``st(eta=etas, L=Ls)`` gives ``len(etas)`` values, one per ``(etas[i], Ls[i])``);
      shape them (``etas[:, None]``, ``Ls[None, :]``) for a table.  ``mask=True`` returns where the
      conditions hold instead of raising.
    * ``st.grid(outer=True, **axes)`` -- every combination of 1-D axes (the outer product: 40 values on
      each of three axes are 64,000 points); refused with :class:`GridSizeError` past
      :data:`GRID_POINTS_LIMIT` points unless ``max_points=`` allows more.
    * ``st.evaluate(**numbers)`` -- one point, exactly, in SymPy.

    Parameters
    ----------
    name : identifier (``"theorem1_recursion"``).
    lhs : LaTeX of the quantity the statement is about (``r"\\mathbb E\\|x^{(t+1)}-\\tilde x\\|^2"``).
    relation : ``"<="`` (upper bound), ``">="`` (lower bound) or ``"=="`` (identity/definition).
    expr : the SymPy right-hand side.
    conditions : the assumptions under which it is claimed (checked on every evaluation).
    paper, equation : provenance (``"local_adaptivity"``, ``"(61)"``).
    status : ``"printed"`` or ``"corrected"``; ``reason`` says why a corrected one differs.
    tight : True when the bound is attained on the stated class, False when not, None if unknown.
    corrects : for a corrected statement, the name of the printed one it stands beside.
    latex_names : LaTeX for symbols whose names SymPy would not render well.
    """

    name: str
    lhs: str
    relation: str
    expr: Any
    conditions: tuple = ()
    paper: str = ""
    equation: str = ""
    status: str = "printed"
    reason: str = ""
    tight: bool | None = None
    corrects: str | None = None
    title: str = ""
    latex_names: Mapping[str, str] = field(default_factory=dict)
    _cache: dict = field(default_factory=dict, repr=False)

    def __post_init__(self):
        _text(self.name, "name")
        for f in ("lhs", "paper", "equation", "status", "reason", "title"):   # LaTeX and display text: never sympified
            _text(getattr(self, f), f)
        _text(self.corrects, "corrects", optional=True)
        if self.tight is not None and not isinstance(self.tight, (bool, np.bool_)):
            raise InputTypeError(f"{self.name}: tight must be True, False or None; got {shown(self.tight)}")
        if not isinstance(self.latex_names, Mapping):
            raise InputTypeError(f"{self.name}: latex_names must be a mapping from symbol names to LaTeX; got "
                                 f"{shown(self.latex_names)}")
        for k, v in self.latex_names.items():
            _text(k, f"{self.name}: a key of latex_names")
            _text(v, f"{self.name}: latex_names[{k!r}]")
        if self.relation not in _RELATIONS:
            raise StatementError(f"{self.name}: relation must be one of {sorted(_RELATIONS)}, got {self.relation!r}")
        if self.status not in ("printed", "corrected"):
            raise StatementError(f"{self.name}: status must be 'printed' or 'corrected', got {self.status!r}")
        if self.status == "corrected" and not self.reason:
            raise StatementError(f"{self.name}: a corrected statement needs a reason")
        object.__setattr__(self, "expr", _sympy_expression(self.expr, f"{self.name}: expr"))
        object.__setattr__(self, "conditions", self._checked_conditions(self.conditions))

    def _checked_conditions(self, conds) -> tuple:
        """Each a :class:`Condition` (an ``(expr, text)`` pair becomes one); text never becomes a relation."""
        if isinstance(conds, (str, bytes, bytearray, Condition)) or not isinstance(conds, Iterable):
            raise InputTypeError(f"{self.name}: conditions must be a sequence of Condition or (relation, text) "
                                 f"pairs; got {shown(conds)}")
        out = []
        for i, c in enumerate(conds):
            if isinstance(c, Condition):
                out.append(c)
            elif isinstance(c, tuple) and len(c) == 2:
                rel = _sympy_relation(c[0], f"{self.name}: conditions[{i}][0]")
                out.append(Condition(rel, _text(c[1], f"{self.name}: conditions[{i}][1]")))
            else:
                raise InputTypeError(f"{self.name}: conditions[{i}] must be a Condition or a (relation, text) pair; "
                                     f"got {shown(c)}")
        return tuple(out)

    # ------------------------------------------------------------------ symbols
    @property
    def symbols(self) -> tuple:
        """Every free symbol of the expression and the conditions, sorted by name (computed once: a
        statement's expression and conditions do not change after it is made)."""
        out = self._cache.get("symbols")
        if out is None:
            syms = set(self.expr.free_symbols)
            for c in self.conditions:
                syms |= c.symbols()
            out = self._cache["symbols"] = tuple(sorted(syms, key=lambda s: s.name))
        return out

    @property
    def parameters(self) -> tuple[str, ...]:
        out = self._cache.get("parameters")
        if out is None:
            out = self._cache["parameters"] = tuple(s.name for s in self.symbols)
        return out

    def _check_names(self, values: Mapping[str, Any]):
        names = set(self.parameters)
        unknown = set(values) - names
        if unknown:
            raise StatementError(f"{self.name}: unknown parameter(s) {sorted(unknown)}; it takes {sorted(names)}")
        missing = names - set(values)
        if missing:
            raise StatementError(f"{self.name}: missing parameter(s) {sorted(missing)}")

    # ------------------------------------------------------------------ rendering
    def latex(self, *, conditions: bool = True) -> str:
        """LaTeX of ``lhs relation expr`` and (by default) its conditions, ready to paste.

        Sums keep the paper's order (``1 - \\eta\\mu``, not ``-\\eta\\mu + 1``), numeric
        fractional powers are folded (``T^{2/3}``), ``|x|`` is written ``x`` where a condition says
        ``x >= 0``, an integrality condition reads ``\\tau \\in \\mathbb Z``, and conditions that
        say nothing (always true, or implied by a stricter one beside them) are left out.
        """
        names = {s: self.latex_names[s.name] for s in self.symbols if s.name in self.latex_names}
        nonneg = self._nonnegative_symbols()
        body = f"{self.lhs} {_RELATIONS[self.relation]} {_tex(_drop_abs(self.expr, nonneg), names)}"
        if conditions:
            conds = self.latex_conditions()
            if conds:
                body += "\\quad\\text{if } " + ",\\ ".join(conds)
        return body

    def latex_conditions(self) -> list[str]:
        """The LaTeX of each condition :meth:`latex` prints after ``if`` (the same ones, in its order)."""
        names = {s: self.latex_names[s.name] for s in self.symbols if s.name in self.latex_names}
        nonneg = self._nonnegative_symbols()
        return [_tex_condition(c, names, nonneg) for c in self._shown_conditions(nonneg)]

    def _repr_latex_(self) -> str:
        """Jupyter renders a statement as its LaTeX."""
        return f"$\\displaystyle {self.latex()}$"

    def _nonnegative_symbols(self) -> set:
        out = set()
        for c in self.conditions:
            rel = c.expr
            for r in (rel.args if isinstance(rel, sp.And) else (rel,)):
                if isinstance(r, (sp.GreaterThan, sp.StrictGreaterThan)) and r.lhs.is_Symbol and r.rhs.is_nonnegative:
                    out.add(r.lhs)
                elif isinstance(r, (sp.LessThan, sp.StrictLessThan)) and r.rhs.is_Symbol and r.lhs.is_nonnegative:
                    out.add(r.rhs)
        return out | {s for s in self.symbols if s.is_nonnegative}

    def _shown_conditions(self, nonneg: set) -> list:
        """The conditions worth printing: not always true, not implied by a stricter one beside them."""
        rels = [c.expr for c in self.conditions]
        shown = []
        for i, (c, rel) in enumerate(zip(self.conditions, rels)):
            if rel is sp.true or rel in rels[:i]:
                continue
            if isinstance(rel, sp.GreaterThan) and rel.rhs == 0 and self._is_norm(rel.lhs):
                continue  # a norm or a sum of norms is >= 0 by definition
            weak = {sp.GreaterThan: sp.StrictGreaterThan, sp.LessThan: sp.StrictLessThan}.get(type(rel))
            if weak is not None and any(isinstance(o, weak) and (o.lhs, o.rhs) == (rel.lhs, rel.rhs) for o in rels):
                continue  # x >= a beside x > a
            if isinstance(rel, (sp.GreaterThan, sp.StrictGreaterThan, sp.LessThan, sp.StrictLessThan)) and any(
                    isinstance(o, sp.Equality) and o.lhs == rel.lhs and o.rhs.is_number and rel.lhs.is_Symbol
                    and rel.subs(rel.lhs, o.rhs) is sp.true for o in rels):
                continue  # 0 < alpha <= 1 beside alpha = 1
            shown.append(c)
        return shown

    def _is_norm(self, e) -> bool:
        if not e.is_Symbol:
            return False
        tex = self.latex_names.get(e.name, "")
        return tex.startswith(("\\|", "|", "\\textstyle\\sum_k\\|")) and tex.rstrip().endswith(("\\|^2", "\\|", "|", "\\|^2"))

    def describe(self) -> str:
        tag = self.status if self.status == "printed" else f"corrected ({self.reason})"
        return f"{self.title or self.name} [{self.paper} {self.equation}; {tag}]"

    def __repr__(self) -> str:
        return f"Statement({self.name!r}, {self.paper} {self.equation}, {self.status})"

    # ------------------------------------------------------------------ exact mode
    def evaluate(self, **values):
        """Exact value on Python/SymPy numbers: ints and Fractions stay rational (never rounded),
        floats become 30-digit SymPy floats; text, complex numbers, NaN and arrays are refused."""
        self._check_names(values)
        try:
            subs = {s: _exact(values[s.name], s.name, s) for s in self.symbols}
        except StatementError as exc:
            raise StatementError(f"{self.name}: {exc}") from None
        _check_exact_cost(self.expr, subs, self.name)
        for c in self.conditions:
            ok = c.expr.xreplace(subs)
            ok = sp.simplify(ok) if ok not in (sp.true, sp.false) else ok
            if ok is not sp.true:
                shown = ", ".join(f"{k}={values[k]}" for k in sorted(values) if sp.Symbol(k) in c.symbols() or k in {s.name for s in c.symbols()})
                raise ConditionError(f"{self.name}: condition '{c.text}' fails at {shown}")
        out = self.expr.xreplace(subs)
        if out.is_Rational or out.is_Float:
            return out
        if out.has(sp.nan, sp.zoo):
            given = ", ".join(f"{k}={values[k]}" for k in sorted(values))
            raise StatementError(f"{self.name}: the value is undefined (0/0 or a complex infinity) at {given}")
        return sp.simplify(out) if sp.count_ops(out) < 200 else out

    # ------------------------------------------------------------------ vectorised mode
    @staticmethod
    def _modules(module: str) -> list:
        if module == "numpy":
            return ["numpy"]
        xp = _KEYED_NAMESPACES[module]
        if "cupy" in module:
            import cupy  # noqa: PLC0415

            # CuPy's own functions, but the piecewise helpers of the standard's form: cupy.select refuses the
            # True condition and the scalar choices that lambdify writes for a Piecewise
            return [_piecewise_names(xp), cupy, "numpy"]
        # another namespace of the array API standard (bound to its device): the NumPy printer's names, read there
        return [_standard_names(xp), "numpy"]

    def _compiled(self, module: str):
        if module not in self._cache:
            f = None
            if "cupy" in module:   # one fused elementwise kernel (None where C cannot print the expression)
                from ._cuda_closed import statement_kernel  # noqa: PLC0415

                f = statement_kernel(self.symbols, self.expr, self.name)
            if f is None:
                # cse: a subexpression (a named quantity of a paper, a power) that occurs twice is computed once
                f = sp.lambdify(self.symbols, self.expr, modules=self._modules(module), cse=True)
            self._cache[module] = f
        return self._cache[module]

    def __call__(self, *, check: bool = True, mask: bool = False, rtol: float = 1e-12, backend: str | None = None,
                 **values):
        """Evaluate on arrays (broadcasting); the output module is that of the inputs.

        Conditions are checked elementwise (with relative slack ``rtol`` for round-off on
        boundary points) and the first failing one raises :class:`ConditionError`.  With
        ``mask=True`` nothing is raised for failing conditions: the result is an
        :class:`Evaluation` ``(value, holds)``, ``holds`` True where every condition holds.
        A parameter holding NaN or inf, or shapes that do not broadcast, raise
        :class:`StatementError` naming the parameter.

        >>> import numpy as np, sympy as sp
        >>> eta, L = sp.symbols("eta L", positive=True)
        >>> st = Statement("demo", lhs=r"\\rho", relation="<=", expr=1 - eta * L / 2,
        ...                conditions=[Condition(eta * L <= 1, "eta <= 1/L")])
        >>> value, holds = st(eta=np.array([0.25, 0.5, 1.0]), L=2.0, mask=True)
        >>> value.tolist(), holds.tolist()
        ([0.75, 0.5, 0.0], [True, True, False])
        """
        self._check_names(values)
        from .validation import array as _array, flag as _flag, real as _real  # noqa: PLC0415

        _flag(check, "check")
        _flag(mask, "mask")
        _real(rtol, "rtol", low=0.0)
        arrays = [v for v in values.values() if is_array(v)]   # CuPy's arrays included (no __array_namespace__)
        try:
            xp = namespace(*arrays, backend=backend)
        except TypeError as exc:
            raise InputTypeError(f"{self.name}: {exc}") from None
        module = _namespace_key(xp)
        args = []
        for sym in self.symbols:
            v = values[sym.name]
            if isinstance(v, (Fraction, Decimal)) or (isinstance(v, sp.Basic) and not isinstance(v, sp.MatrixBase)):
                try:   # an exact number is a real here too (NaN and text refused by name)
                    v = _real(v, sym.name, finite=False)
                except InputTypeError:
                    raise
                except InputError as exc:
                    raise StatementError(f"{self.name}: {exc}") from None
            try:
                kind = "integer" if sym.is_integer else "real"   # a symbol declared integer refuses 2.5 here too
                # a symbol declared positive refuses 0 and below: its domain, not a condition (a nonnegative one is
                # not checked: a measured quantity such as a sum of squares may come out -1e-49 from round-off)
                low = 0 if sym.is_positive else None
                args.append(xp.astype(_array(v, sym.name, xp=xp, kind=kind, low=low, open_low=True), xp.float64,
                                      copy=False))
            except InputTypeError:
                raise
            except InputError as exc:
                raise StatementError(f"{self.name}: {exc}") from None
        try:
            shape = np.broadcast_shapes(*(a.shape for a in args))
        except ValueError:
            raise StatementError(f"{self.name}: the parameter shapes do not broadcast: "
                                 + ", ".join(f"{sym.name} {tuple(a.shape)}" for sym, a in zip(self.symbols, args))) from None
        f = self._compiled(module)
        holds = out = None
        if (check or mask) and module == "numpy" and args:
            # value and conditions in one blocked pass: they share the named quantities they compute
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                out, ok = _blocked(self._joint(f, rtol), args, shape, pair=True)
            ok = np.asarray(ok, dtype=bool)
            if mask:
                holds = ok if ok.shape == shape else np.ones(shape, dtype=bool) & ok
            elif not bool(ok.all()):
                out = None  # the loop below names the first failing condition
        if out is None and (check or mask):
            holds = xp.ones(shape, dtype=xp.bool)
            for c in self.conditions:
                ok = xp.asarray(self._relaxed(c, args, module, rtol))
                if mask:
                    holds = holds & ok
                    continue
                if not bool(xp.all(ok)):
                    bad = np.argwhere(~np.broadcast_to(to_numpy(ok), shape))
                    idx = tuple(bad[0]) if bad.size else ()
                    shown = ", ".join(
                        f"{s.name}={float(np.broadcast_to(to_numpy(a), shape)[idx]):.6g}"
                        for s, a in zip(self.symbols, args)
                        if s in c.symbols()
                    )
                    raise ConditionError(f"{self.name}: condition '{c.text}' fails at {shown}")
        if out is None:
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                out = _blocked(f, args, shape) if module == "numpy" else _scoped(f, args)
        out = xp.asarray(out)
        if out.dtype != xp.float64:       # a constant statement (0, 1) lambdifies to an integer
            out = xp.astype(out, xp.float64)
        if out.shape != shape or any(out is a for a in args):
            out = out + xp.zeros(shape if args else ())  # a fresh float64 array, never an input
        return Evaluation(out, holds) if mask else out

    def holds(self, *, rtol: float = 1e-12, backend: str | None = None, **values):
        """Where every condition holds (a boolean array over the broadcast parameters)."""
        return self(mask=True, rtol=rtol, backend=backend, **values).holds

    def _joint(self, f, rtol: float):
        """A function of the arguments returning (value, truth of every condition) (NumPy)."""
        parts = self._relaxed_parts(self.conditions, "numpy")

        def joint(*args):
            return f(*args), _truth(parts, args, rtol)

        return joint

    def _relaxed(self, c: Condition, args, module: str, rtol: float):
        """Elementwise truth of a condition, with relative slack on inequalities."""
        parts = self._relaxed_parts((c,), module)
        if module == "numpy":  # large grids block by block, as the value
            shape = np.broadcast_shapes(*(np.shape(a) for a in args))
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                return _blocked(lambda *a: _truth(parts, a, rtol), args, shape, bool)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            return _scoped(lambda *a: _truth(parts, a, rtol), args)

    def _relaxed_parts(self, conds: tuple, module: str):
        """The compiled sides of the relations of ``conds``, as ``_truth`` reads them: ``(kinds, sides)``,
        ``sides`` ONE function returning every side (one ``lambdify`` for all of them: SymPy's per-call
        preprocessing, not the printing, was most of the cost of compiling them one by one)."""
        key = ("relaxed", tuple(id(c) for c in conds), module)
        if key not in self._cache:
            kinds, exprs = [], []
            for c in conds:
                rel = c.expr
                for r in (rel.args if isinstance(rel, sp.And) else (rel,)):
                    if isinstance(r, (sp.LessThan, sp.StrictLessThan, sp.GreaterThan, sp.StrictGreaterThan)):
                        small, big = ((r.lhs, r.rhs) if isinstance(r, (sp.LessThan, sp.StrictLessThan))
                                      else (r.rhs, r.lhs))
                        kinds.append(isinstance(r, (sp.StrictLessThan, sp.StrictGreaterThan)))
                        exprs += [small, big]
                    else:
                        kinds.append(None)
                        exprs.append(r)
            sides = sp.lambdify(self.symbols, exprs, modules=self._modules(module)) if exprs else (lambda *a: [])
            self._cache[key] = (tuple(kinds), sides)
        return self._cache[key]

    def grid(self, *, outer: bool | None = None, mask: bool = False, max_points: int | None = None, **axes):
        """Evaluate on the OUTER PRODUCT of 1-D ``axes`` (``indexing='ij'``); scalars stay scalars.

        ``outer=True`` says so explicitly: three axes of 40 values are 40 x 40 x 40 = 64,000 points.
        To evaluate paired values (``eta[i]`` with ``L[i]``), call the statement itself:
        ``st(eta=etas, L=Ls)`` broadcasts.  ``outer=False`` is that paired call.  Omitting ``outer``
        still evaluates the outer product but warns (``DeprecationWarning``): a later release will
        require it.

        A grid of more than ``max_points`` points (default :data:`GRID_POINTS_LIMIT`, ten million)
        is refused before anything is computed with :class:`GridSizeError`, which names the axes
        and the point count; pass ``max_points=`` to allow a larger one (memory is still checked).

        Returns an array of shape ``(len(axis_1), len(axis_2), ...)`` over the array-valued axes,
        in the order they were given; with ``mask=True`` an :class:`Evaluation` whose ``holds``
        marks the grid points where every condition holds (nothing is raised for the others).

        >>> import numpy as np, sympy as sp
        >>> eta, L = sp.symbols("eta L", positive=True)
        >>> st = Statement("demo", lhs=r"\\rho", relation="<=", expr=1 - eta * L / 2,
        ...                conditions=[Condition(eta * L <= 1, "eta <= 1/L")])
        >>> st.grid(eta=np.array([0.25, 1.0]), L=np.array([1.0, 2.0]), outer=True, mask=True).holds.tolist()
        [[True, True], [True, False]]
        >>> st(eta=np.array([0.25, 0.5]), L=np.array([1.0, 2.0])).tolist()       # paired: (0.25, 1), (0.5, 2)
        [0.875, 0.5]
        """
        from .validation import flag as _flag  # noqa: PLC0415

        if outer is None:
            import warnings  # noqa: PLC0415

            warnings.warn(f"{self.name}: grid() evaluates the outer product of its axes; pass outer=True to say so "
                          f"(a later release will require it), or call the statement, {self.name}(...), to "
                          f"evaluate paired values", DeprecationWarning, stacklevel=2)
            outer = True
        _flag(outer, "outer")
        if not outer:
            return self(mask=mask, **axes)
        self._check_names(axes)
        try:
            xp = namespace(*axes.values())
        except TypeError as exc:
            raise InputTypeError(f"{self.name}: {exc}") from None
        arr_names = [k for k, v in axes.items() if np.ndim(v) > 0]
        for name in arr_names:
            if np.ndim(axes[name]) != 1:
                raise StatementError(f"{self.name}: grid axis {name} must be a scalar or 1-D; got shape "
                                     f"{tuple(np.shape(axes[name]))} (call the statement to broadcast arrays)")
        budget = GRID_POINTS_LIMIT if max_points is None else _integer(max_points, "max_points", low=1, high=2**62)
        sizes = {k: int(np.size(axes[k])) for k in arr_names}
        points = math.prod(sizes.values())
        if points > budget:
            raise GridSizeError(f"{self.name}: the outer product of "
                                + " x ".join(f"{k} ({n:,})" for k, n in sizes.items())
                                + f" has {points:,} points, over the budget of {budget:,}; pass max_points= to "
                                f"allow it, or call the statement on paired arrays ({self.name}(...) broadcasts)")
        from .validation import check_size as _check_size  # noqa: PLC0415

        _check_size(points, f"{self.name}: the grid", xp=xp, hint="call the statement on paired arrays instead")
        k = len(arr_names)
        vals = {}
        for name, v in axes.items():
            if name in arr_names:
                from .validation import array as _array  # noqa: PLC0415

                j = arr_names.index(name)
                shape = [1] * k
                shape[j] = -1
                try:
                    vals[name] = xp.reshape(xp.astype(_array(v, name, xp=xp), xp.float64), tuple(shape))
                except InputTypeError:
                    raise
                except InputError as exc:
                    raise StatementError(f"{self.name}: {exc}") from None
            else:
                vals[name] = v
        return self(mask=mask, **vals)

    def with_changes(self, **changes) -> "Statement":
        """A copy with some fields replaced (used to build corrected variants)."""
        fields = {f: getattr(self, f) for f in self.__dataclass_fields__ if f != "_cache"}
        unknown = sorted(set(changes) - set(fields))
        if unknown:
            raise InputTypeError(f"{self.name}: with_changes got unknown field(s) {unknown}; it takes {sorted(fields)}")
        fields.update(changes)
        return Statement(**fields)


_KEYED_NAMESPACES: dict = {}


def _namespace_key(xp) -> str:
    """The cache key of namespace ``xp`` for compiled statements: its name, and its device where it is bound to
    one (numbers that a compiled function makes must land beside its arguments)."""
    if xp is np:
        return "numpy"
    from .backend import device_of  # noqa: PLC0415

    device = device_of(xp)
    key = xp.__name__ if device is None else f"{xp.__name__}@{device}"
    _KEYED_NAMESPACES.setdefault(key, xp)
    return key


_RENAMED = {"power": "pow", "mod": "remainder", "arctan": "atan", "arctan2": "atan2", "arcsin": "asin",
            "arccos": "acos", "arctanh": "atanh", "arcsinh": "asinh", "arccosh": "acosh", "fmin": "minimum",
            "fmax": "maximum"}


def _standard_names(xp) -> dict:
    """The names ``lambdify``'s NumPy printer writes (``sqrt``, ``greater``, ``select``, ...) answered by a
    namespace of the array API standard: the same name where the standard has it, else its standard form.
    A name missing here falls through to NumPy's, which refuses the namespace's arrays (so it shows)."""
    def lifted(f):   # the standard's functions take arrays: a call on numbers alone (sqrt(2)) gets 0-d arrays
        def g(*args, **kw):
            if any(hasattr(a, "shape") for a in args):
                return f(*args, **kw)
            return f(*(xp.asarray(float(a)) if isinstance(a, (int, float)) and not isinstance(a, bool) else a
                       for a in args), **kw)

        return g

    names = {name: getattr(xp, name) for name in dir(xp) if not name.startswith("_")}
    names.update({old: getattr(xp, new) for old, new in _RENAMED.items()})
    names = {k: lifted(f) if callable(f) and not isinstance(f, type) else f for k, f in names.items()}
    names.update(pi=math.pi, e=math.e, inf=math.inf, nan=math.nan)
    names.update(_piecewise_names(xp))
    return names


def _piecewise_names(xp) -> dict:
    """``select`` (what lambdify writes for a Piecewise: conditions that may be Python bools, choices that may be
    numbers) and ``logical_and``/``logical_or`` with NumPy's ``.reduce``, on namespace ``xp``."""
    def select(condlist, choicelist, default=0.0):
        out = default
        for cond, value in zip(reversed(condlist), reversed(choicelist)):
            if isinstance(cond, (bool, np.bool_)):
                out = value if cond else out
                continue
            if not hasattr(value, "shape") and not hasattr(out, "shape"):   # where takes one scalar at most
                value = xp.asarray(float(value))
            out = xp.where(cond, value, out)
        return out

    return {"select": select, "logical_and": _Reducible(xp.logical_and), "logical_or": _Reducible(xp.logical_or)}


class _Reducible:
    """A binary function with NumPy's ``.reduce`` over a sequence (``logical_and.reduce``)."""

    def __init__(self, f):
        self._f = f

    def __call__(self, a, b):
        return self._f(a, b)

    def reduce(self, items):
        items = list(items)
        out = items[0]
        for item in items[1:]:
            out = self._f(out, item)
        return out


def conditions(*pairs: Iterable) -> tuple:
    """Build a tuple of :class:`Condition` from ``(expr, text)`` pairs."""
    return tuple(Condition(e, t) for e, t in pairs)


# --------------------------------------------------------------------------------------
# statements found by name
# --------------------------------------------------------------------------------------
def _paper_statements(paper: str) -> dict:
    import importlib  # noqa: PLC0415

    bounds = importlib.import_module(f"fltheory.papers.{paper}.bounds")
    found = bounds.STATEMENTS
    items = found.values() if isinstance(found, Mapping) else found
    return {st.name: st for st in items}


def statements(paper: str | None = None) -> dict:
    """Every registered paper's statements, ``{"paper.name": Statement}``, in registry order.

    ``paper`` restricts the listing to one paper of ``fltheory.verify.PAPERS``.

    >>> import fltheory as flt
    >>> names = flt.statements("feddelavg")
    >>> "feddelavg.theorem1" in names and "feddelavg.theorem1_corrected" in names
    True
    """
    from .validation import choice  # noqa: PLC0415
    from .verify import PAPERS  # noqa: PLC0415

    papers = PAPERS if paper is None else (choice(paper, "paper", PAPERS),)
    return {f"{p}.{name}": st for p in papers for name, st in _paper_statements(p).items()}


def statement(name: str) -> Statement:
    """One statement by its full name ``"paper.statement"`` (a bare name if only one paper has it).

    An unknown name is refused with the closest known names.

    >>> import fltheory as flt
    >>> flt.statement("feddelavg.theorem1").equation
    '(15)'
    >>> try:
    ...     flt.statement("feddelavg.theorem_1")
    ... except flt.StatementError as exc:
    ...     print(str(exc)[:81])
    name: no statement named 'feddelavg.theorem_1'; did you mean 'feddelavg.theorem1'
    """
    import difflib  # noqa: PLC0415

    from .validation import InputTypeError as _TypeErr, shown as _shown  # noqa: PLC0415
    from .verify import PAPERS  # noqa: PLC0415

    if not isinstance(name, str):
        raise _TypeErr(f"name must be a statement name such as 'feddelavg.theorem1'; got {_shown(name)}")
    paper, _, bare = name.rpartition(".")
    if paper and paper in PAPERS:
        found = _paper_statements(paper)
        if bare in found:
            return found[bare]
    everything = statements()
    if not paper:
        hits = [full for full in everything if full.rpartition(".")[2] == bare]
        if len(hits) == 1:
            return everything[hits[0]]
        if hits:
            raise StatementError(f"the statement name {name!r} is ambiguous; say which paper: {', '.join(hits)}")
    close = difflib.get_close_matches(name, list(everything), n=3, cutoff=0.6)
    if not close:
        close = difflib.get_close_matches(bare, [full.rpartition(".")[2] for full in everything], n=3, cutoff=0.6)
        close = [full for full in everything if full.rpartition(".")[2] in close][:3]
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    known = "" if paper in PAPERS else f" (papers: {', '.join(PAPERS)})"
    raise StatementError(f"name: no statement named {name!r}{hint}{known}; fltheory.statements() lists them all")
