"""AFL-DGA statements: golden values, the Corollary's substitution, thresholds, monotonicity, the rescaling
invariance behind the eta <= 1/T reading, and the counterexamples' numbers."""
from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from fltheory.symbolic import ConditionError
from fltheory.papers.afl_dga import bounds as B
from fltheory.papers.afl_dga import checks as C

G1 = dict(L=1, N=10, T=10**4, Delta=1, sigma2=1, G2=2, K_m=10, D_m=20)
ETA1 = math.sqrt(10) / math.sqrt(10**4)


def test_golden_theorem1_and_corollary1():
    total = float(B.theorem1(eta=ETA1, S_bar=30, **G1))
    assert total == pytest.approx(1.8167113883008423, rel=1e-13)
    parts = [float(x) for x in B.theorem1_parts(eta=ETA1, S_bar=30, **G1)]
    np.testing.assert_allclose(parts, [0.0063245553203368, 0.0094868329805051, 1.8, 0.0009], rtol=1e-12)
    assert sum(parts) == pytest.approx(total, rel=1e-14)
    assert float(B.corollary1(t_d=2, **G1)) == pytest.approx(1.816711388300842, rel=1e-13)
    assert float(B.theorem1(L=1, N=5, T=1000, eta=0.01, Delta=1, sigma2=1, G2=2, K_m=10, D_m=20, S_bar=5)) == \
        pytest.approx(0.38606, rel=1e-12)


def test_golden_corrected():
    assert B.rho_hat_max(t_d=2, D_m=20, K_min=10) == 5
    parts = [float(x) for x in B.theorem1_corrected_parts(eta=ETA1, K_min=10, t_d=2, **G1)]
    np.testing.assert_allclose(parts, [0.0063245553, 0.0006324555, 3.464, 0.0282842712], rtol=1e-7)
    assert float(B.theorem1_corrected(eta=ETA1, K_min=10, t_d=2, **G1)) == pytest.approx(3.4992412821, rel=1e-10)
    # exact mode agrees with float mode and stays rational where it can
    ex = B.theorem1_corrected.evaluate(eta=sp.Rational(1, 100), K_min=10, t_d=2, sigma2=0, **{k: v for k, v in G1.items()
                                                                                           if k != "sigma2"})
    assert ex.is_Rational


def test_thresholds():
    th = B.corollary_thresholds(L=1, N=10, Delta=1, sigma2=1, G2=2, K_m=10, D_m=20, t_d=2)
    assert th["a"] == 5 and th["T1"] == pytest.approx(1.296e8) and th["T2"] == pytest.approx(32.4)
    # beyond T_min the corollary is at most 3 a / sqrt(NT)
    T = 2 * th["T_min"]
    assert float(B.corollary1(T=T, t_d=2, **{k: v for k, v in G1.items() if k != "T"})) <= 3 * 5 / math.sqrt(10 * T)


def test_corollary1_is_theorem1_at_its_step_size_symbolically():
    eta_star = sp.sqrt(B.N) / (B.L * sp.sqrt(B.T))
    th = B.theorem1.expr.subs({B.eta: eta_star, B.S_bar: B.N * (2 * B.t_d - 1)})
    pos = {s: sp.Symbol(s.name, positive=True) for s in th.free_symbols | B.corollary1.expr.free_symbols}
    assert sp.simplify((th - B.corollary1.expr).xreplace(pos)) == 0
    th_c = B.theorem1_corrected.expr.subs({B.eta: eta_star})
    pos = {s: sp.Symbol(s.name, positive=True) for s in th_c.free_symbols | B.corollary1_corrected.expr.free_symbols}
    diff = (th_c - B.corollary1_corrected.expr).xreplace(pos)
    assert sp.simplify(diff) == 0


def test_step_size_readings_are_inconsistent_and_the_third_term_is_exact():
    L, N, T = sp.symbols("L N T", positive=True)
    eta_star = sp.sqrt(N) / (L * sp.sqrt(T))
    # eta* <= 1/T  <=>  T <= L^2/N: the printed condition and the corollary meet only for short horizons
    assert sp.simplify((eta_star * T) ** 2 - T * N / L**2) == 0
    # the third term: L^2 eta*^2 (sigma^2+G^2) N (2 t_d - 1) / N^2 = (2 t_d - 1)(sigma^2+G^2)/T, the paper's O(N/T ...) / N
    s2, g2, td = sp.symbols("s2 g2 td", positive=True)
    third = L**2 * eta_star**2 * (s2 + g2) * N * (2 * td - 1) / N**2
    assert sp.simplify(third - (2 * td - 1) * (s2 + g2) / T) == 0


@settings(max_examples=40)
@given(st.floats(0.1, 10), st.integers(1, 50), st.integers(1, 10**5), st.floats(1e-4, 1.0), st.floats(0, 10),
       st.floats(0, 3), st.floats(0.1, 3), st.integers(1, 20), st.integers(0, 30), st.integers(1, 6),
       st.floats(1.5, 100))
def test_rescaling_invariance(L, N, T, etaL, Delta, sigma2, G2, K_m, D_m, t_d, c):
    """(f, eta) -> (c f, eta / c) multiplies both sides of Theorem 1 by c^2 (so eta <= 1/T is no safer)."""
    S_bar = N * (2 * t_d - 1)
    eta = etaL / L
    base = float(B.theorem1(L=L, N=N, T=T, eta=eta, Delta=Delta, sigma2=sigma2, G2=G2, K_m=K_m, D_m=D_m, S_bar=S_bar))
    scaled = float(B.theorem1(L=c * L, N=N, T=T, eta=eta / c, Delta=c * Delta, sigma2=c**2 * sigma2, G2=c**2 * G2,
                              K_m=K_m, D_m=D_m, S_bar=S_bar))
    assert scaled == pytest.approx(c**2 * base, rel=1e-10)


@settings(max_examples=40)
@given(st.integers(1, 30), st.integers(1, 30), st.integers(0, 30), st.integers(1, 8), st.floats(0.0, 2.0),
       st.floats(0.1, 3.0), st.floats(0.0, 5.0))
def test_monotonicity(N, K_m, D_m, t_d, sigma2, G2, Delta):
    kw = dict(L=1.0, T=1000, eta=0.01, Delta=Delta, sigma2=sigma2, G2=max(G2, sigma2 + 0.01), K_m=K_m, D_m=D_m)
    base = float(B.theorem1(N=N, S_bar=N * (2 * t_d - 1), **kw))
    assert float(B.theorem1(N=N, S_bar=N * (2 * t_d - 1), **{**kw, "K_m": K_m + 1})) >= base
    assert float(B.theorem1(N=N, S_bar=N * (2 * t_d - 1), **{**kw, "D_m": D_m + 1})) >= base
    assert float(B.theorem1(N=N, S_bar=N * (2 * t_d + 1), **kw)) >= base
    assert float(B.theorem1(N=N + 1, S_bar=(N + 1) * (2 * t_d - 1), **kw)) <= base + 1e-15
    ckw = dict(kw, K_min=1)
    cb = float(B.theorem1_corrected(N=N, t_d=t_d, **ckw))
    assert float(B.theorem1_corrected(N=N, t_d=t_d + 1, **ckw)) >= cb
    assert float(B.theorem1_corrected(N=N, t_d=t_d, **{**ckw, "D_m": D_m + 1})) >= cb
    if K_m >= 2:
        assert float(B.theorem1_corrected(N=N, t_d=t_d, **{**ckw, "K_min": 2})) <= cb + 1e-15


def test_conditions_are_enforced():
    with pytest.raises(ConditionError, match="eta <= 1/L"):
        B.theorem1(eta=2.0, S_bar=30, **G1)
    with pytest.raises(ConditionError, match="eta <= 1/T"):
        B.theorem1_literal_step(eta=0.01, S_bar=30, **G1)
    with pytest.raises(ConditionError, match="1/\\(2L\\)"):
        B.theorem1_corrected(eta=0.6, K_min=1, t_d=1, **G1)
    with pytest.raises(ConditionError, match="T >= 4N"):
        B.corollary1_corrected(K_min=1, t_d=1, **{**G1, "T": 20})
    with pytest.raises(ConditionError, match="sigma\\^2 <= G\\^2"):
        B.theorem1_corrected(eta=0.01, K_min=1, t_d=1, **{**G1, "sigma2": 5})


def test_lag_extra_piecewise():
    assert float(B.lemma2_rho(S=3, t_d=2, K_min=5, D_m=5)) == 3            # D_m <= K_min: the printed count
    assert float(B.lemma2_rho(S=3, t_d=2, K_min=2, D_m=5)) == 3 + 2 * 2      # ceil(5/2) - 1 = 2
    assert float(B.lemma2_rho(S=1, t_d=1, K_min=1, D_m=0)) == 1
    assert B.rho_hat_extra(t_d=3, D_m=0, K_min=4) == 0
    arr = B.lemma2_rho(S=np.array([1, 1, 1]), t_d=1, K_min=np.array([1, 2, 4]), D_m=4)
    np.testing.assert_array_equal(arr, [4, 2, 1])


def test_lemma1_counterexample_numbers():
    """The linear instance (N = 50, D = 3, eta = 0.1, t = 8, client 0): rho = n = 3, ||w^t - w_ij||^2 = 0.345744
    against 0.178432 (statement) and 0.1602 (used form); Lemma 1' gives 0.345888."""
    fed, part, res, dg = C.linear_run(50, 3)
    t, i, j = 8, 0, 0
    assert (dg.rho[t, i, j], dg.n[t, i, j]) == (3, 3)
    assert float(dg.dist2[t, i, j]) == pytest.approx(0.345744, rel=1e-12)
    assert float(B.lemma1(eta=0.1, sum_gbar2=dg.printed_sum[t, i, j], G2=1, K_m=1, D_m=3)) == pytest.approx(0.178432)
    assert float(B.lemma1_used(eta=0.1, N=50, S=dg.S[t, i, j], sigma2=0, G2=1, K_m=1, D_m=3)) == pytest.approx(0.1602)
    rhs = B.lemma1_corrected(eta=0.1, rho=3, n=3, since_anchor=dg.since_anchor[t, i, j], local2=dg.local2[t, i, j])
    assert float(rhs) == pytest.approx(0.345888, rel=1e-12)


def test_theorem1_counterexample_numbers():
    """Identical pseudo-Huber clients, N = 100, T = 2000, eta = sqrt(N/T), t_d = 12: LHS 0.18348 against 0.06115
    (the paper's Delta = f(w^0) - f*, f* = 0);
    the same instance rescaled to eta = 1/T has the same ratio; Theorem 1' holds there."""
    s = C._periodic_sample(100, 2000, math.sqrt(0.05), 12, literal=False, statement="theorem1")
    assert s.value == pytest.approx(0.18348, abs=5e-6) and s.bound == pytest.approx(0.061146, abs=5e-6)
    r = C._periodic_sample(100, 2000, math.sqrt(0.05), 12, literal=True, statement="theorem1")
    assert r.params["eta"] == pytest.approx(1 / 2000, rel=1e-12)
    assert r.value / r.bound == pytest.approx(s.value / s.bound, rel=1e-9)
    fed, part, res, f, g2 = C.periodic_run(100, 2000, math.sqrt(0.05), 12)
    assert part.delay_sum.sum() / 2000 / 100 == pytest.approx(17.426, abs=1e-3)
    corr = C._corrected_bound(part, L=1.0, eta=math.sqrt(0.05), Delta=C._Delta_lower(f), sigma2=0.0, G2=1.0)
    assert s.value < corr
