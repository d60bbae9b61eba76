"""Derive DeFedAvg's Theorem 1 and Theorem 2 bounds at the prescribed rates, their T-conditions,
the rounds to epsilon and the largest n with linear speedup, from the proofs' own expressions.

Starting point (typed here independently of the library): the proofs end, after telescoping,
with the bounds for any admissible learning rates

    B1 = 4 Phi0/(K T eta eta_bar) + (16 sigma^2 L + 8 L G^2 K) eta eta_bar / n + 8 L^2 K (sigma^2 + 8 K nu^2) eta_bar^2
    B2 = 4 Phi0/(K T eta eta_bar) + 8 L sigma^2 eta eta_bar / n + 8 L^2 K sigma^2 eta_bar^2

(the first line of (41), and the sum of (47) divided by K eta eta_bar T / 4).  Steps:

1. B2 at eta = sqrt(n K Phi0/2), eta_bar = 1/(K sqrt(sigma^2 L T)) equals sqrt(128 L sigma^2 Phi0/(nKT)) + 8L/(KT)
   exactly (the library's corrected Theorem 2), and differs from the printed (14) and its appendix form;
   the prescribed eta eta_bar is the minimiser of the first two terms;
2. B1 at the prescribed rates of Theorem 1 equals 5 sqrt(Phi0 (16 sigma^2 L + 8 L G^2 K)/(nKT)) + the second term
   (the library's corrected Theorem 1), which is at most the printed (12) with 16;
3. the conditions (11) and (13) at the prescribed rates are equivalent to T >= the library's T_min terms;
4. the rounds to epsilon solve a/sqrt(T) + b/T = epsilon, n T_eps eps^2 -> 128 Phi0 L sigma^2/K, and
   a^2/eps^2 >= T_min iff n <= n_max (both theorems);
5. the drift step of Lemma 9 fails at K = 5 under the printed eta_bar <= 1/(2 sqrt 2 L K) and holds for all
   K >= 2 under 1/(2 sqrt 3 L K);
6. Lemma 2's intermediate equality: sum_j E[m_j^2] = n (N + n - 1)/N for the multiplicities m of n draws
   with replacement from N, by exact enumeration (N, n <= 4).

Run: ``python derivations/derive_defedavg_theorems.py`` (also collected by pytest).
"""
from __future__ import annotations

import itertools
import random

import sympy as sp

from fltheory.papers.defedavg import bounds as B

n, N, K, T, L, s2, P0, lam, eps = sp.symbols("n N K T L sigma2 Phi0 lam epsilon", positive=True)
G2, nu2 = sp.symbols("G2 nu2", nonnegative=True)
e, eb = sp.symbols("eta eta_bar", positive=True)


def lib(expr):
    """A library expression in this script's symbols."""
    return expr.xreplace({B.SYMBOLS[str(s)]: s for s in (n, N, K, T, L, s2, P0, lam, eps, G2, nu2, e, eb)})


B1 = 4 * P0 / (K * T * e * eb) + (16 * s2 * L + 8 * L * G2 * K) * e * eb / n + 8 * L**2 * K * (s2 + 8 * K * nu2) * eb**2
B2 = 4 * P0 / (K * T * e * eb) + 8 * L * s2 * e * eb / n + 8 * L**2 * K * s2 * eb**2
R2 = sp.sqrt(128 * L * s2 * P0 / (n * K * T)) + 8 * L / (K * T)
ETA2, EB2 = sp.sqrt(n * K * P0 / 2), 1 / (K * sp.sqrt(s2 * L * T))
ETA1, EB1 = sp.sqrt(4 * n * K * P0), 1 / (K * sp.sqrt((4 * s2 * L + 2 * L * K * G2) * T))


def _zero(expr, trials=20):
    """Exactly zero: simplify, then confirm at random rational points."""
    if sp.simplify(expr) == 0:
        return True
    rng = random.Random(0)
    syms = sorted(expr.free_symbols, key=str)
    for _ in range(trials):
        val = expr.subs({s: sp.Rational(rng.randint(1, 50), rng.randint(1, 9)) for s in syms})
        if abs(sp.N(val, 40)) > 1e-30:
            return False
    return True


def test_theorem2_at_prescribed_rates():
    at = B2.subs({e: ETA2, eb: EB2})
    assert _zero(at - R2)
    assert _zero(lib(B.B2_expr) - B2) and _zero(lib(B.theorem2_corrected.expr) - R2)
    assert not _zero(lib(B.theorem2.expr) - R2) and not _zero(lib(B.theorem2_appendix.expr) - R2)
    p = sp.Symbol("p", positive=True)       # p = eta eta_bar: the first two terms are minimised at the prescribed p
    two = 4 * P0 / (K * T * p) + 8 * L * s2 * p / n
    crit = sp.solve(sp.diff(two, p), p)
    assert len(crit) == 1 and _zero(crit[0] - ETA2 * EB2)


def test_theorem1_at_prescribed_rates():
    at = B1.subs({e: ETA1, eb: EB1})
    exact = lib(B.theorem1_corrected.expr)
    assert _zero(at - exact) and _zero(lib(B.B1_expr) - B1)
    gap = lib(B.theorem1.expr) - exact      # 11 sqrt(Phi0 (16 sigma^2 L + 8 L G^2 K)/(nKT)) >= 0
    assert _zero(gap - 11 * sp.sqrt(P0 * (16 * s2 * L + 8 * L * G2 * K) / (n * K * T)))


def test_T_conditions():
    # (13): eta_bar <= 1/(4 sqrt3 L K) and eta eta_bar <= 1/(4 L K lam), both monotone in T: squared thresholds
    assert _zero(sp.solve(sp.Eq(EB2, 1 / (4 * sp.sqrt(3) * L * K)), T)[0] - lib(B.T_MIN2[0]))
    assert _zero(sp.solve(sp.Eq(ETA2 * EB2, 1 / (4 * L * K * lam)), T)[0] - lib(B.T_MIN2[1]))
    assert _zero(sp.solve(sp.Eq(EB1, 1 / (8 * L * K)), T)[0] - lib(B.T_MIN1[0]))
    assert _zero(sp.solve(sp.Eq(ETA1 * EB1, 1 / (4 * L * K * lam)), T)[0] - lib(B.T_MIN1[1]))
    c3 = (2 * s2 + G2 * K) / (8 * s2 * L * K * lam + 4 * L * G2 * K**2 * lam**2)
    assert _zero(sp.solve(sp.Eq(ETA1 * EB1, c3), T)[0] - lib(B.T_MIN1[2]))
    assert sp.diff(EB2, T).subs({s2: 1, L: 1, K: 1, T: 1}) < 0   # rates decrease in T: "T >= threshold"


def test_rounds_to_epsilon_and_n_max():
    a, b = sp.sqrt(128 * L * s2 * P0 / (n * K)), 8 * L / K
    Te = lib(B.T_epsilon.expr)
    assert _zero((a / sp.sqrt(Te) + b / Te - eps).subs({L: 2, s2: 3, P0: 5, n: 7, K: 2, eps: sp.Rational(1, 10)}))
    assert _zero(sp.limit(n * Te * eps**2, eps, 0) - lib(B.speedup_constant.expr))
    # Theorem 2: a^2/eps^2 = 8 n Phi0 K L lam^2/sigma^2 at n = n_max
    nm2 = lib(B.n_max_theorem2.expr)
    assert _zero((a**2 / eps**2 - lib(B.T_MIN2[1])).subs(n, nm2))
    # Theorem 1 (printed constant 16): a1^2/eps^2 = the (C3) threshold at n = n_max
    a1sq = 256 * P0 * (16 * s2 * L + 8 * L * G2 * K) / (n * K)
    nm1 = lib(B.n_max_theorem1.expr)
    assert _zero((a1sq / eps**2 - lib(B.T_MIN1[2])).subs(n, nm1))


def test_drift_steps():
    # at eta_bar = 1/(2 sqrt2 L K): 6 L^2 K eta_bar^2 = 3/(4K); K = 5: 1/9 + 3/20 > 1/4
    k5 = sp.Rational(1, 9) + sp.Rational(3, 20)
    assert k5 > sp.Rational(1, 4) and sp.N(k5) > 0.26
    for k in range(2, 60):
        printed = 1 + sp.Rational(1, 2 * k - 1) + sp.Rational(6, 8 * k)
        fixed = 1 + sp.Rational(1, 2 * k - 1) + sp.Rational(6, 12 * k)
        lemma4 = 1 + sp.Rational(1, 2 * k - 1) + sp.Rational(8, 16 * k)
        target = 1 + sp.Rational(1, k - 1)
        assert (printed <= target) == (k <= 4), k
        assert fixed <= target and lemma4 <= target


def test_lemma2_multiplicities():
    for N_ in range(1, 5):
        for n_ in range(1, 5):
            total = sp.Integer(0)
            for draw in itertools.product(range(N_), repeat=n_):
                total += sum(draw.count(j) ** 2 for j in range(N_))
            mean = total / sp.Integer(N_) ** n_
            assert mean == sp.Rational(n_ * (N_ + n_ - 1), N_)
            assert lib(B.lemma2_exact.expr).subs({n: n_, N: N_, K: 1, s2: 1}) == mean


if __name__ == "__main__":
    from _runner import run_tests

    run_tests(globals())
