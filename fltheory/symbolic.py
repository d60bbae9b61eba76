"""Statements: one SymPy expression per numbered result, in two modes.

A :class:`Statement` is ``lhs  relation  expr`` where ``expr`` is a SymPy expression in named
symbols, together with its conditions (each a SymPy relation with a human-readable text), its
provenance (paper, equation), its status (``printed`` as in the paper, or ``corrected`` with
the reason) and whether it is tight.  The same object

* renders LaTeX (:meth:`Statement.latex`),
* evaluates exactly on Python/SymPy numbers (:meth:`Statement.evaluate`), and
* evaluates fast on NumPy or CuPy arrays, broadcasting, with a cached ``lambdify``
  (:meth:`Statement.__call__`, :meth:`Statement.grid`): array type in, array type out.

Evaluating where a condition fails raises :class:`ConditionError` naming the condition, never a
silent number.

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

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Iterable, Mapping

import numpy as np
import sympy as sp

from .backend import namespace, to_numpy
from .validation import InputError, InputTypeError, shown

__all__ = ["Statement", "Condition", "ConditionError", "StatementError"]

_RELATIONS = {"<=": r"\le", ">=": r"\ge", "==": "=", "<": "<", ">": ">"}


class StatementError(InputError):
    """A statement used wrongly (a missing or unknown parameter)."""


class ConditionError(InputError):
    """A statement evaluated where one of its conditions fails."""


EXACT_DIGITS_LIMIT = 10**6  # exact evaluation refuses powers that would build numbers longer than this


def _exact(v, name: str):
    """An exact SymPy number for a user value; text and non-numbers are refused, never parsed."""
    from decimal import Decimal  # noqa: PLC0415

    if isinstance(v, np.ndarray) and v.ndim == 0:
        v = v.item()
    if isinstance(v, (bool, np.bool_)) or isinstance(v, (str, bytes)) or isinstance(v, (complex, np.complexfloating)):
        raise InputTypeError(f"{name} must be a real number (int, Fraction, float or a SymPy number); got "
                             f"{shown(v)} ({type(v).__name__})")
    if isinstance(v, Fraction):
        return sp.Rational(v.numerator, v.denominator)
    if isinstance(v, Decimal):
        if not v.is_finite():
            raise InputError(f"{name} must be finite; got {v}")
        f = Fraction(v)
        return sp.Rational(f.numerator, f.denominator)
    if isinstance(v, (int, np.integer)):
        return sp.Integer(int(v))
    if isinstance(v, (float, np.floating)):
        if not np.isfinite(v):
            raise InputError(f"{name} must be a finite real number; got {v}")
        return sp.Float(float(v), 30)
    if isinstance(v, sp.Basic):
        if not v.is_number or v.free_symbols:
            raise InputTypeError(f"{name} must be a number; got the expression {shown(v)}")
        if v.has(sp.nan, sp.zoo, sp.oo, -sp.oo) or v.is_real is False:
            raise InputError(f"{name} must be a finite real number; got {v}")
        return v
    if isinstance(v, np.ndarray):
        raise InputTypeError(f"{name}: exact evaluation takes one number; for arrays call the statement "
                             f"(vectorised mode) instead of .evaluate()")
    raise InputTypeError(f"{name} must be a real number; got {shown(v)} ({type(v).__name__})")


def _check_exact_cost(expr, subs, name: str):
    """Refuse at once a power whose exact value would have more than EXACT_DIGITS_LIMIT digits."""
    for p in expr.atoms(sp.Pow):
        base, ex = p.base.xreplace(subs), p.exp.xreplace(subs)
        if not (base.is_Rational and ex.is_Integer):
            continue
        if base in (0, 1, -1) or abs(int(ex)) < 64:
            continue
        digits = abs(int(ex)) * int(max(abs(base.p).bit_length(), base.q.bit_length()) * 0.30103 + 1)
        if digits > EXACT_DIGITS_LIMIT:
            raise StatementError(f"{name}: exact evaluation would build a number of about {digits:,} digits "
                                 f"({base}**{ex}); call the statement (float mode) or use smaller exponents")


@dataclass(frozen=True)
class Condition:
    """A condition of a statement: a SymPy relation and the text shown when it fails."""

    expr: Any
    text: str

    def symbols(self) -> set:
        return set(sp.sympify(self.expr).free_symbols)


@dataclass(frozen=True, eq=False)
class Statement:
    """A numbered result as ``lhs relation expr`` under ``conditions``.

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
        if self.relation not in _RELATIONS:
            raise StatementError(f"{self.name}: relation must be one of {sorted(_RELATIONS)}, got {self.relation!r}")
        if self.status not in ("printed", "corrected"):
            raise StatementError(f"{self.name}: status must be 'printed' or 'corrected', got {self.status!r}")
        if self.status == "corrected" and not self.reason:
            raise StatementError(f"{self.name}: a corrected statement needs a reason")
        object.__setattr__(self, "expr", sp.sympify(self.expr))
        object.__setattr__(self, "conditions", tuple(self.conditions))

    # ------------------------------------------------------------------ symbols
    @property
    def symbols(self) -> tuple:
        """Every free symbol of the expression and the conditions, sorted by name."""
        syms = set(self.expr.free_symbols)
        for c in self.conditions:
            syms |= c.symbols()
        return tuple(sorted(syms, key=lambda s: s.name))

    @property
    def parameters(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.symbols)

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
        names = {s: self.latex_names[s.name] for s in self.symbols if s.name in self.latex_names}
        body = f"{self.lhs} {_RELATIONS[self.relation]} {sp.latex(self.expr, symbol_names=names)}"
        if conditions and self.conditions:
            conds = ",\\ ".join(sp.latex(sp.sympify(c.expr), symbol_names=names) for c in self.conditions)
            body += f"\\quad\\text{{if }} {conds}"
        return body

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
        subs = {s: _exact(values[s.name], s.name) for s in self.symbols}
        _check_exact_cost(self.expr, subs, self.name)
        for c in self.conditions:
            ok = sp.sympify(c.expr).xreplace(subs)
            ok = sp.simplify(ok) if ok not in (sp.true, sp.false) else ok
            if ok is not sp.true:
                shown = ", ".join(f"{k}={values[k]}" for k in sorted(values) if sp.Symbol(k) in c.symbols() or k in {s.name for s in c.symbols()})
                raise ConditionError(f"{self.name}: condition '{c.text}' fails at {shown}")
        out = self.expr.xreplace(subs)
        if out.is_Rational or out.is_Float:
            return out
        if out.has(sp.nan, sp.zoo):
            raise StatementError(f"{self.name}: the value is undefined (0/0 or a complex infinity) at these parameters")
        return sp.simplify(out) if sp.count_ops(out) < 200 else out

    # ------------------------------------------------------------------ vectorised mode
    @staticmethod
    def _modules(module: str) -> list:
        if module == "cupy":
            import cupy  # noqa: PLC0415

            return [cupy, "numpy"]
        return ["numpy"]

    def _compiled(self, module: str):
        if module not in self._cache:
            self._cache[module] = sp.lambdify(self.symbols, self.expr, modules=self._modules(module))
        return self._cache[module]

    def __call__(self, *, check: bool = True, rtol: float = 1e-12, backend: str | None = None, **values):
        """Evaluate on arrays (broadcasting); the output module is that of the inputs.

        Conditions are checked elementwise (with relative slack ``rtol`` for round-off on
        boundary points) and the first failing one raises :class:`ConditionError`.
        """
        self._check_names(values)
        from .validation import array as _array, flag as _flag, real as _real  # noqa: PLC0415

        _flag(check, "check")
        _real(rtol, "rtol", low=0.0)
        arrays = [v for v in values.values() if hasattr(v, "__array_namespace__") or isinstance(v, np.ndarray)]
        try:
            xp = namespace(*arrays, backend=backend)
        except TypeError as exc:
            raise InputTypeError(f"{self.name}: {exc}") from None
        module = "cupy" if xp.__name__ == "cupy" else "numpy"
        args = []
        for sym in self.symbols:
            v = values[sym.name]
            if isinstance(v, Fraction):
                v = float(v)
            args.append(_array(v, sym.name, xp=xp).astype(xp.float64))
        try:
            np.broadcast_shapes(*(a.shape for a in args))
        except ValueError:
            raise StatementError(f"{self.name}: the parameter shapes do not broadcast: "
                                 + ", ".join(f"{sym.name} {tuple(a.shape)}" for sym, a in zip(self.symbols, args))) from None
        f = self._compiled(module)
        if check:
            for c in self.conditions:
                ok = self._relaxed(c, args, module, rtol)
                ok = xp.asarray(ok)
                if not bool(xp.all(ok)):
                    shape = np.broadcast_shapes(*(a.shape for a in args))
                    bad = np.argwhere(~np.broadcast_to(to_numpy(ok), shape))
                    idx = tuple(bad[0]) if bad.size else ()
                    shown = ", ".join(
                        f"{s.name}={float(np.broadcast_to(to_numpy(a), shape)[idx]):.6g}"
                        for s, a in zip(self.symbols, args)
                        if s in c.symbols()
                    )
                    raise ConditionError(f"{self.name}: condition '{c.text}' fails at {shown}")
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            out = f(*args)
        out = xp.asarray(out) + xp.zeros(np.broadcast_shapes(*(a.shape for a in args)) if args else ())
        return out

    def _relaxed(self, c: Condition, args, module: str, rtol: float):
        """Elementwise truth of a condition, with relative slack on inequalities."""
        rel = sp.sympify(c.expr)
        key = ("relaxed", id(c), module)
        if key not in self._cache:
            syms = self.symbols
            modules = self._modules(module)
            parts = []
            for r in (rel.args if isinstance(rel, sp.And) else (rel,)):
                if isinstance(r, (sp.LessThan, sp.StrictLessThan, sp.GreaterThan, sp.StrictGreaterThan)):
                    small, big = (r.lhs, r.rhs) if isinstance(r, (sp.LessThan, sp.StrictLessThan)) else (r.rhs, r.lhs)
                    strict = isinstance(r, (sp.StrictLessThan, sp.StrictGreaterThan))
                    parts.append((strict, sp.lambdify(syms, small, modules=modules), sp.lambdify(syms, big, modules=modules)))
                else:
                    parts.append((None, sp.lambdify(syms, r, modules=modules), None))
            self._cache[key] = parts
        ok = True
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            for strict, a, b in self._cache[key]:
                if strict is None:
                    ok = ok & a(*args)
                    continue
                lo, hi = a(*args), b(*args)
                scale = abs(lo) + abs(hi)
                ok = ok & ((lo < hi) if strict else (lo <= hi + rtol * scale))
        return ok

    def grid(self, **axes):
        """Evaluate on the outer product of 1-D ``axes`` (``indexing='ij'``); scalars stay scalars.

        Returns an array of shape ``(len(axis_1), len(axis_2), ...)`` over the array-valued axes,
        in the order they were given.
        """
        self._check_names(axes)
        xp = namespace(*axes.values())
        arr_names = [k for k, v in axes.items() if np.ndim(v) > 0]
        k = len(arr_names)
        vals = {}
        for name, v in axes.items():
            if name in arr_names:
                j = arr_names.index(name)
                shape = [1] * k
                shape[j] = -1
                vals[name] = xp.asarray(v, dtype=xp.float64).reshape(shape)
            else:
                vals[name] = v
        return self(**vals)

    def with_changes(self, **changes) -> "Statement":
        """A copy with some fields replaced (used to build corrected variants)."""
        fields = {f: getattr(self, f) for f in self.__dataclass_fields__ if f != "_cache"}
        fields.update(changes)
        return Statement(**fields)


def conditions(*pairs: Iterable) -> tuple:
    """Build a tuple of :class:`Condition` from ``(expr, text)`` pairs."""
    return tuple(Condition(e, t) for e, t in pairs)
