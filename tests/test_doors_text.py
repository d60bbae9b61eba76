"""No user text ever reaches SymPy (issue 19, part A).

``sympy.sympify`` runs a string as Python.  Every door of :mod:`fltheory.symbolic` and its callers
takes SymPy objects built in code (or numbers, converted exactly), and refuses text with an
:class:`InputTypeError` naming the parameter.  Each refusal below uses a payload whose execution
would leave a file behind, and asserts that the file was not created; the first test shows that the
payload is live (``sympify`` does create the file), so these tests can fail.
"""
import time
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp

import fltheory as flt
from fltheory.papers.feddelavg import bounds as fd_bounds
from fltheory.papers.local_adaptivity import bounds as la_bounds
from fltheory.symbolic import Condition, Statement, StatementError
from fltheory.validation import InputError, InputTypeError

eta, L = sp.symbols("eta L", positive=True)
T = sp.Symbol("T", integer=True, positive=True)


def _payload(path) -> str:
    """Text that, run as Python, creates ``path``."""
    return f'__import__("pathlib").Path({str(path)!r}).touch()'


def _statement(**changes):
    fields = dict(name="demo", lhs="y", relation="<=", expr=1 - eta * L / 2,
                  conditions=[Condition(eta * L <= 1, "eta <= 1/L")])
    fields.update(changes)
    return Statement(**fields)


def test_the_payload_is_live(tmp_path):
    sp.sympify(_payload(tmp_path / "ran"))   # what the doors below must never do
    assert (tmp_path / "ran").exists()


DOORS = {
    "Statement(expr=...)": (lambda text: _statement(expr=text), r"\bexpr\b"),
    "Statement.with_changes(expr=...)": (lambda text: _statement().with_changes(expr=text), r"\bexpr\b"),
    "Condition(expr=...)": (lambda text: Condition(text, "a condition"), r"Condition\.expr"),
    "Statement(conditions=[(text, ...)])": (lambda text: _statement(conditions=[(text, "a condition")]),
                                            r"conditions\[0\]\[0\]"),
    "Statement.with_changes(conditions=...)": (
        lambda text: _statement().with_changes(conditions=[(eta > 0, "eta > 0"), (text, "x")]), r"conditions\[1\]"),
    "theorem2_fixed_point_symbolic(values=...)": (
        lambda text: la_bounds.theorem2_fixed_point_symbolic(2, 1, tau=2, values={"w_1": text}), r"values\['w_1'\]"),
    "feddelavg.expand_named": (lambda text: fd_bounds.expand_named(text), r"\bexpr\b"),
    "feddelavg.h_fn argument": (lambda text: fd_bounds.h_fn(text, eta, 1, 1), r"h_fn argument 1"),
}


@pytest.mark.parametrize("door", sorted(DOORS))
def test_text_is_refused_and_never_run(door, tmp_path):
    call, name = DOORS[door]
    target = tmp_path / "ran"
    with pytest.raises(InputTypeError, match=name) as err:
        call(_payload(target))
    assert "text" in str(err.value)
    assert not target.exists(), f"{door} ran the text as code"


def test_the_getpid_example_is_refused():
    with pytest.raises(InputTypeError, match=r"\bexpr\b.*not text"):
        Statement(name="x", lhs="y", relation="<=", expr='__import__("os").getpid()')


@pytest.mark.parametrize("bad", [b"eta + 1", bytearray(b"1")])
def test_bytes_are_text_too(bad):
    with pytest.raises(InputTypeError, match=r"\bexpr\b"):
        _statement(expr=bad)
    with pytest.raises(InputTypeError, match="Condition.expr"):
        Condition(bad, "c")


def test_lhs_is_display_text_never_sympified(tmp_path):
    """``lhs`` is LaTeX shown beside the formula: kept as text, never parsed (so any text is harmless)."""
    target = tmp_path / "ran"
    st = _statement(lhs=_payload(target))
    assert st.latex().startswith(_payload(target)) and st.evaluate(eta=Fraction(1, 4), L=2) == sp.Rational(3, 4)
    assert not target.exists()
    with pytest.raises(InputTypeError, match=r"\blhs\b"):
        _statement(lhs=sp.Symbol("y"))
    with pytest.raises(InputTypeError, match=r"Condition\.text"):
        Condition(eta > 0, sp.Symbol("t"))
    with pytest.raises(InputTypeError, match=r"latex_names\['eta'\]"):
        _statement(latex_names={"eta": 1})


def test_a_condition_must_be_a_relation():
    with pytest.raises(InputTypeError, match=r"Condition\.expr"):
        Condition(eta + 1, "not a relation")
    with pytest.raises(InputTypeError, match=r"conditions\[0\]"):
        _statement(conditions=[eta <= 1])          # neither a Condition nor a (relation, text) pair
    with pytest.raises(InputTypeError, match=r"\bconditions\b"):
        _statement(conditions="eta <= 1")
    assert Condition(True, "always").expr is sp.true
    st = _statement(conditions=[(eta * L <= 1, "eta <= 1/L")])   # a pair becomes a Condition
    assert isinstance(st.conditions[0], Condition) and st.conditions[0].text == "eta <= 1/L"


def test_expr_numbers_are_exact_and_other_objects_refused():
    assert _statement(expr=Fraction(1, 3)).expr == sp.Rational(1, 3)
    assert _statement(expr=Decimal("0.25")).expr == sp.Rational(1, 4)
    with pytest.raises(InputTypeError, match=r"\bexpr\b"):
        _statement(expr=eta <= 1)
    with pytest.raises(InputTypeError, match=r"\bexpr\b"):
        _statement(expr=object())
    with pytest.raises(InputTypeError, match="with_changes got unknown field"):
        _statement().with_changes(exrp=eta)


# ------------------------------------------------------------------------- theorem 2's values
def test_theorem2_values_take_numbers_and_sympy_objects():
    e = sp.Symbol("e", positive=True)
    t2 = la_bounds.theorem2_fixed_point_symbolic(2, 1, tau=2, values={
        "w_1": Fraction(1, 2), sp.Symbol("w_2"): sp.Rational(1, 2), "eta_1": e, "eta_2": Decimal("0.5"),
        "P_1_0": 1, "P_2_0": 1, "H_1_00": 1, "H_2_00": 1, "xs_1_0": 0, "xs_2_0": 1})
    assert t2.w == (sp.Rational(1, 2), sp.Rational(1, 2)) and t2.eta == (e, sp.Rational(1, 2))


@pytest.mark.parametrize("values, error, name", [
    ({"w_9": 1}, InputError, "w_9"),                 # not a symbol of this call
    ({3: 1}, InputTypeError, "key"),
    ({"w_1": None}, InputTypeError, r"values\['w_1'\]"),
    ({"w_1": True}, InputTypeError, r"values\['w_1'\]"),
    ({"w_1": float("nan")}, InputError, r"w_1"),
    ([("w_1", 1)], InputTypeError, "values"),
])
def test_theorem2_values_are_checked(values, error, name):
    with pytest.raises(error, match=name):
        la_bounds.theorem2_fixed_point_symbolic(2, 1, tau=2, values=values)


def test_theorem2_refuses_a_symbolic_size_past_its_bound_at_once():
    start = time.perf_counter()
    with pytest.raises(InputError, match=r"M=4.*d=4.*estimated") as err:
        la_bounds.theorem2_fixed_point_symbolic(4, 4, tau=2)
    assert time.perf_counter() - start < 20.0   # a liveness bound: refused up front (ms), not after the work (minutes)
    assert "values" in str(err.value)
    # numbers substituted through values keep the matrices small: the same size passes
    names = {s.name for s in la_bounds.theorem2_fixed_point_symbolic(3, 2, tau=1).symbols}
    vals = {n: sp.Rational(1, 7) if n.startswith("eta") else 1 for n in names}
    la_bounds.theorem2_fixed_point_symbolic(3, 2, tau=5, values=vals)


# ------------------------------------------------------------------------- evaluate's values
def test_an_integer_symbol_refuses_a_fraction_of_a_step():
    st = _statement(expr=(1 - eta * L / 2) ** T)
    with pytest.raises(InputTypeError, match=r"\bT\b.*integer"):
        st.evaluate(eta=Fraction(1, 4), L=2, T=2.5)
    with pytest.raises(InputTypeError, match=r"\bT\b"):
        st.evaluate(eta=Fraction(1, 4), L=2, T=sp.Rational(5, 2))
    assert st.evaluate(eta=Fraction(1, 4), L=2, T=2.0) == sp.Rational(9, 16)    # an integral float is an integer
    assert st.evaluate(eta=Fraction(1, 4), L=2, T=Fraction(4, 2)) == sp.Rational(9, 16)
    with pytest.raises(InputTypeError, match=r"\bT\b.*integer"):     # the vectorised mode too
        st(eta=0.25, L=2.0, T=np.array([2.0, 2.5]))
    assert st(eta=0.25, L=2.0, T=np.array([2.0, 3.0])).tolist() == [0.5625, 0.421875]


def test_fraction_and_decimal_are_reals_in_both_modes():
    st = _statement()
    exact = st.evaluate(eta=Fraction(1, 3), L=Decimal("1.5"))
    assert exact == sp.Rational(3, 4) and isinstance(exact, sp.Rational)
    assert float(st.evaluate(eta=np.float64(0.25), L=2)) == 0.75
    assert float(st(eta=Fraction(1, 3), L=Decimal("1.5"))) == pytest.approx(0.75)
    assert float(st(eta=sp.Rational(1, 3), L=1.5)) == pytest.approx(0.75)


@pytest.mark.parametrize("bad, error", [
    ("0.25", InputTypeError), (b"1", InputTypeError), (True, InputTypeError), (np.bool_(False), InputTypeError),
    (0.25 + 0j, InputTypeError), (sp.I / 4, InputTypeError), (float("nan"), StatementError),
    (Decimal("NaN"), StatementError), (sp.nan, StatementError), (float("inf"), StatementError), (None, InputTypeError),
])
def test_evaluate_names_a_bad_value(bad, error):
    st = _statement()
    with pytest.raises(error, match=r"\beta\b"):
        st.evaluate(eta=bad, L=2)


@pytest.mark.parametrize("bad, error", [
    ("0.25", InputTypeError), (True, InputTypeError), (0.25 + 0j, InputTypeError), (float("nan"), StatementError),
    (Decimal("NaN"), StatementError),
])
def test_calling_names_a_bad_value(bad, error):
    st = _statement()
    with pytest.raises(error, match=r"\beta\b"):
        st(eta=bad, L=2.0)


def test_registered_statements_still_load_and_evaluate():
    st = flt.statement("feddelavg.theorem1")
    assert all(isinstance(c.expr, sp.Basic) for c in st.conditions)
    assert isinstance(st.expr, sp.Expr)


def test_admissible_set_takes_values_as_evaluate_does():
    from fltheory.testing import admissible_set

    st = _statement(expr=(1 - eta * L / 2) ** T, conditions=[(eta * L <= 1, "eta <= 1/L")])
    assert admissible_set(st, "eta", L=Fraction(2), T=2) == sp.Interval.Lopen(0, sp.Rational(1, 2))
    with pytest.raises(InputTypeError, match=r"\bL\b"):
        admissible_set(st, "eta", L="2", T=2)
    with pytest.raises(InputTypeError, match=r"\bT\b"):
        admissible_set(st, "eta", L=2, T=1.5)
    with pytest.raises(InputTypeError, match=r"\bname\b"):
        admissible_set(st, sp.Symbol("eta"), L=2, T=2)
