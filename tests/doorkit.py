"""The kit of the door fuzz suite (tests/test_doors.py): bad values by kind of parameter, the
``Door`` row, and the small instances the rows call.

A paper adds its entry points in its own ``tests/doors_<paper>.py``: a list ``DOORS`` of
``Door`` rows and a set ``CHOICES`` of the valid words of its ``choice`` parameters (so that the
fuzzer never draws a valid word as a bad one).  test_doors.py collects every such module.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable

import numpy as np
from hypothesis import strategies as st

import fltheory as flt
from fltheory import delayed as D
from fltheory import schedules as S
from fltheory.linear import AffineMap

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
N_DRAWS = int(os.environ.get("FUZZ_EXAMPLES", 300 if PROFILE == "fuzz" else 8))
TIME_LIMIT = 20.0  # seconds per refusal: a liveness bound (refusals take ms; the refused work minutes), not a timing claim

# ---------------------------------------------------------------------------------------------
# bad values by kind of parameter
# ---------------------------------------------------------------------------------------------
NOT_NUMBERS = st.sampled_from(["5", "0.1", "__import__('os').getpid()", b"1", None, [], {}, object(), "nan"])
NON_FINITE = st.sampled_from([float("nan"), float("inf"), -float("inf"), np.float64("nan"), np.float32("inf")])
COMPLEX = st.sampled_from([1 + 2j, np.complex128(0.5 + 0.1j), 2j])
BOOLS = st.sampled_from([True, False, np.True_])

# valid words of every `choice` parameter (papers' doors modules add theirs): never drawn as bad values
CHOICES = {"none", "local", "joint", "gap", "rate", "uniform", "dirichlet", "random", "common", "diagonal", "numpy",
           "cupy", "displacement", "gradient_sum", "gradient_mean", "staleness", "virtual", "sgd", "paper", "proof",
           "all"}

BAD = {
    # eta, sigma2 ... : a positive real
    "pos_real": st.one_of(NOT_NUMBERS, NON_FINITE, COMPLEX, BOOLS, st.floats(max_value=0.0, allow_nan=False),
                          st.sampled_from([0, -1, -1e-300, Fraction(-1, 3)])),
    "nonneg_real": st.one_of(NOT_NUMBERS, NON_FINITE, COMPLEX, BOOLS, st.floats(max_value=-1e-12, allow_nan=False)),
    "sigma2": st.one_of(NOT_NUMBERS.filter(lambda v: v is not None), NON_FINITE, COMPLEX, BOOLS,
                        st.floats(max_value=-1e-12, allow_nan=False)),   # None means "no noise"
    "unit_real": st.one_of(NOT_NUMBERS, NON_FINITE, COMPLEX, BOOLS, st.sampled_from([0.0, -0.5, 1 + 1e-12, 2, 1e308])),
    # statements' float mode allows a relative slack of rtol = 1e-12 on boundary points (round-off)
    "unit_real_stmt": st.one_of(NOT_NUMBERS, NON_FINITE, COMPLEX, BOOLS, st.sampled_from([0.0, -0.5, 1 + 1e-9, 2, 1e308])),
    "kappa": st.one_of(NOT_NUMBERS, NON_FINITE, COMPLEX, BOOLS, st.floats(max_value=0.999, allow_nan=False)),
    # tau, K, T ... : an integer >= 1 (or >= 0) with a bound
    "count": st.one_of(NOT_NUMBERS, NON_FINITE, COMPLEX, BOOLS, st.sampled_from([0, -1, -5, 1.5, 2**63, 2**200, 1e300]),
                       st.floats(0.01, 1e6).filter(lambda v: v != int(v))),
    "count0": st.one_of(NOT_NUMBERS, NON_FINITE, COMPLEX, BOOLS, st.sampled_from([-1, -5, 2.5, 2**63, 2**200, 1e300])),
    # an optional count: None is valid (its default), everything else bad for "count" is bad
    "count_or_none": st.one_of(NOT_NUMBERS.filter(lambda v: v is not None), NON_FINITE, COMPLEX, BOOLS,
                               st.sampled_from([0, -1, -5, 1.5, 2**63, 2**200, 1e300]),
                               st.floats(0.01, 1e6).filter(lambda v: v != int(v))),
    "flag": st.sampled_from(["False", "True", 0, 1, None, 0.0, "yes", np.int64(1)]),
    "choice": st.one_of(st.sampled_from(["nope", "", "NONE", b"none", None, 3, 1.5]),
                        st.text(min_size=1).filter(lambda s: s not in CHOICES)),
    "tol": st.one_of(NOT_NUMBERS, NON_FINITE, COMPLEX, BOOLS, st.sampled_from([0.0, -1e-9, -1.0])),
}


# variants: None is the parameter's valid default; or [] is a valid (empty) vector of values
BAD["count0_or_none"] = BAD["count0"].filter(lambda v: v is not None)
BAD["nonneg_real_or_none"] = BAD["nonneg_real"].filter(lambda v: v is not None)
BAD["count0_vector"] = BAD["count0"].filter(lambda v: not (isinstance(v, list) and v == []))
# a key of a keyed random stream: any integer in [0, 2**64) (an array of them may be empty)
BAD["key"] = BAD["count0_vector"].filter(lambda v: not (type(v) is int and 0 <= v < 2**64))
# a time on the event queue's virtual clock: a real (inf is a valid "never"); NaN, text, bools and integers past the
# float range refused
BAD["time"] = st.one_of(NOT_NUMBERS, COMPLEX, BOOLS, st.sampled_from([float("nan"), np.float32("nan"), 10**400, -10**309]))


def bad_arrays(shape, strict=False, free=False):
    """Bad arrays for a parameter whose valid value has ``shape`` (``strict``: no batch axes allowed;
    ``free``: any shape is valid, so only bad values are drawn)."""
    def fill(v, dtype=float):
        return np.full(shape, v, dtype=dtype)
    wrong = [np.ones(tuple(s + 1 for s in shape))]
    if len(shape) >= 1:
        wrong.append(np.ones(shape[:-1] + (shape[-1] + 2,)))
    if strict:
        wrong += [np.ones((2,) + shape), np.ones(shape[:-1]) if len(shape) > 1 else np.float64(1.0)]
    return st.one_of(
        st.sampled_from([fill(np.nan), fill(np.inf), fill(-np.inf), fill("a", dtype=object).astype(str),
                         fill(1 + 1j, dtype=complex), "[[1, 0], [0, 1]]", fill(True, dtype=bool)]),
        st.sampled_from(wrong) if not free else st.nothing(),
        st.integers(0, int(np.prod(shape)) - 1).map(lambda k: _poke(shape, k)),
    )


def _poke(shape, k):
    a = np.ones(shape)
    a.flat[k] = np.nan
    return a


# ---------------------------------------------------------------------------------------------
# the table
# ---------------------------------------------------------------------------------------------
@dataclass
class Door:
    name: str
    call: Callable[..., Any]
    valid: dict
    params: dict                           # parameter -> kind (a key of BAD, or ("array", shape))
    names: dict = field(default_factory=dict)   # parameter -> text its message must contain (default: its name)


H2 = np.array([[[2.0, 0.5], [0.5, 1.0]], [[1.0, 0.0], [0.0, 4.0]], [[3.0, -1.0], [-1.0, 2.0]]])
XO = np.array([[1.0, 0.0], [0.0, 2.0], [-1.0, -1.0]])
W3 = np.array([0.5, 0.3, 0.2])
FED = flt.QuadraticFederation(H2, XO, W3)
NOISY = flt.QuadraticFederation(H2, XO, W3, sigma2=0.1)
RR = S.round_robin(N=3, S=1, T=12)
LOC = D.LocalSGD(eta_local=0.1, K=2)
AMAP = AffineMap(np.array([[0.5, 0.1], [0.0, 0.3]]), np.ones(2))
PART = S.Participation(np.array([[1, 0, 1, 1], [1, 1, 0, 1], [1, 1, 1, 1]]))

