"""DeFedAvg statements: exact values, conditions, the printed/corrected pairs, and the corollaries."""
from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import assume, given
from hypothesis import strategies as st

from fltheory.papers.defedavg import bounds as B
from fltheory.symbolic import ConditionError

reals = lambda lo, hi: st.floats(lo, hi, allow_nan=False, allow_infinity=False)  # noqa: E731


@st.composite
def theorem2_params(draw):
    return dict(n=draw(st.integers(1, 100)), K=draw(st.integers(1, 100)), L=draw(reals(1e-3, 1e3)),
                sigma2=draw(reals(1e-4, 1e4)), Phi0=draw(reals(1e-6, 1e6)), lam=draw(st.integers(1, 50)))


@given(p=theorem2_params(), scale=reals(1.0, 100.0))
def test_prescribed_rates_meet_13_exactly_from_T_min(p, scale):
    T = math.ceil(B.T_min(**p) * scale)
    assume(T <= 10**15)
    r = B.prescribed_rates(T=T, **{k: p[k] for k in ("n", "K", "L", "sigma2", "Phi0")})
    assert r.eta_bar <= 1 / (4 * math.sqrt(3) * p["L"] * p["K"]) * (1 + 1e-12)
    assert r.product <= 1 / (4 * p["L"] * p["K"] * p["lam"]) * (1 + 1e-12)
    # the general bound at the prescribed rates is the corrected theorem, and its first two terms are minimal there
    gen = float(B.theorem2_general(eta=r.eta, eta_bar=r.eta_bar, T=T, **{k: p[k] for k in p if k != "lam"},
                                   lam=p["lam"]))
    cor = float(B.theorem2_corrected(T=T, **p))
    assert gen == pytest.approx(cor, rel=1e-10)
    for f in (0.5, 2.0):
        first_two = lambda q: 4 * p["Phi0"] / (p["K"] * T * q) + 8 * p["L"] * p["sigma2"] * q / p["n"]  # noqa: E731
        assert first_two(r.product * f) >= first_two(r.product) * (1 - 1e-12)


@given(p=theorem2_params())
def test_below_T_min_a_condition_fails(p):
    T0 = B.T_min(**p)
    if T0 < 2:
        return
    T = max(1, math.floor(T0 * (1 - 1e-6)))
    if T >= T0:
        return
    with pytest.raises(ConditionError):
        B.theorem2_corrected(T=T, **p)


def test_printed_theorem2_lacks_L_sigma2():
    vals = dict(n=1, K=5, T=400, L=1, Phi0=4, lam=1)
    for s2 in (1, 100, 10**4):
        assert B.theorem2.evaluate(sigma2=s2, **vals) == B.theorem2.evaluate(sigma2=1, **vals)  # free of sigma^2
    assert B.theorem2_corrected.evaluate(sigma2=1, **vals) == B.theorem2_appendix.evaluate(sigma2=1, **vals)
    assert B.theorem2_corrected.evaluate(sigma2=10**4, **vals) == sp.sqrt(sp.Rational(2560)) + sp.Rational(1, 250)


@st.composite
def theorem1_params(draw):
    return dict(N=draw(st.integers(1, 50)), n=draw(st.integers(1, 50)), K=draw(st.integers(1, 50)),
                L=draw(reals(1e-3, 1e3)), sigma2=draw(reals(1e-4, 1e4)), Phi0=draw(reals(1e-6, 1e6)),
                lam=draw(st.integers(1, 20)), nu2=draw(reals(0.0, 1e4)), G2=draw(reals(0.0, 1e4)))


@given(p=theorem1_params())
def test_theorem1_exact_constant_and_conditions(p):
    p["n"] = min(p["n"], p["N"])
    T = math.ceil(B.T_min(n=p["n"], K=p["K"], lam=p["lam"], L=p["L"], sigma2=p["sigma2"], Phi0=p["Phi0"], G2=p["G2"]))
    assume(T <= 10**15)
    r = B.prescribed_rates(n=p["n"], K=p["K"], T=T, L=p["L"], sigma2=p["sigma2"], Phi0=p["Phi0"], G2=p["G2"])
    gen = float(B.theorem1_general(eta=r.eta, eta_bar=r.eta_bar, T=T, **p))      # (11) holds at T >= T_min
    cor = float(B.theorem1_corrected(T=T, **p))
    printed = float(B.theorem1(T=T, **p))
    assert gen == pytest.approx(cor, rel=1e-9)
    assert cor <= printed
    # the first term is 16/5 times smaller; the second is the same
    second = 8 * p["L"] ** 2 * (p["sigma2"] + 8 * p["K"] * p["nu2"]) / ((4 * p["sigma2"] * p["L"] + 2 * p["L"] * p["K"] * p["G2"]) * p["K"] * T)
    assert (printed - second) == pytest.approx(16 / 5 * (cor - second), rel=1e-8)


def test_theorem1_needs_n_le_N():
    with pytest.raises(ConditionError, match="n <= N"):
        B.theorem1.evaluate(N=2, n=3, K=1, T=10**9, L=1, sigma2=1, Phi0=1, lam=1, nu2=0, G2=0)


def test_lemma9_printed_step_fails_from_K5():
    for K in range(2, 12):
        eb = 1 / (2 * math.sqrt(2) * K)
        ok = 1 + 1 / (2 * K - 1) + 6 * K * eb * eb <= 1 + 1 / (K - 1)
        assert ok == (K <= 4)


@given(n=st.integers(1, 10**4), K=st.integers(1, 100), L=reals(1e-3, 1e3), s2=reals(1e-4, 1e4), P=reals(1e-6, 1e6),
       eps=reals(1e-6, 10.0))
def test_rounds_to_epsilon_solves_the_bound_and_speeds_up(n, K, L, s2, P, eps):
    Te = B.rounds_to_epsilon(n=n, K=K, L=L, sigma2=s2, Phi0=P, epsilon=eps)
    assert float(B.theorem2_corrected(n=n, K=K, T=Te, L=L, sigma2=s2, Phi0=P, lam=1, check=False)) == pytest.approx(eps, rel=1e-9)
    T2 = B.rounds_to_epsilon(n=2 * n, K=K, L=L, sigma2=s2, Phi0=P, epsilon=eps)
    assert T2 <= Te and T2 >= Te / 2 * (1 - 1e-12)          # at most linear speedup, never a slowdown


def test_rounds_to_epsilon_array_in_array_out():
    out = B.rounds_to_epsilon(n=np.array([1, 2, 4]), K=2, L=1.0, sigma2=1.0, Phi0=1.0, epsilon=1e-3)
    assert isinstance(out, np.ndarray) and out.shape == (3,)
    assert np.allclose(out[:-1] / out[1:], 2.0, rtol=1e-2)


def test_n_max_values():
    assert B.n_max(K=5, lam=2, sigma2=100.0, epsilon=0.5) == 80.0
    assert B.n_max(K=1, lam=1, sigma2=1.0, epsilon=1.0, G2=0.0) == pytest.approx(8 * 4 / 2)


def test_every_statement_renders_and_has_provenance():
    for s in B.STATEMENTS:
        assert s.paper == "defedavg" and s.equation and s.latex()
        if s.status == "corrected":
            assert s.reason


def test_text_is_refused():
    from fltheory.validation import FLTheoryError

    with pytest.raises(FLTheoryError):
        B.theorem2_corrected.evaluate(n="1", K=1, T=10**6, L=1, sigma2=1, Phi0=1, lam=1)
    with pytest.raises(FLTheoryError, match="sigma2"):
        B.prescribed_rates(n=1, K=1, T=1, L=1.0, sigma2="1", Phi0=1.0)
