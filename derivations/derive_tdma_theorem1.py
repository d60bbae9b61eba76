"""Derive the corrections to Song & Hong's Lemmas 1 and 3 and Theorem 1 (asynchronous FL over TDMA),
and the facts about the step-size constant and the timing that the library uses.

Starting point: the one-round recursion ``w_{k+1} = w_k - (eta/S) sum_n (h_n + xi_n)`` with
``h_n = grad f_n(w_khat)`` and mini-batch noises ``xi_n`` (conditionally zero-mean, pairwise
orthogonal, independent of ``w_k``), typed here independently of the library.  Steps:

1. Lemma 1 on ``f_n = f = w^2/2``, ``N = S = 2``, ``eta = 1/10``, ``w_0 = 1``: exact rationals
   ``f(w_1) = 81/200 > 161/400`` (the printed (22)), and the corrected Lemma 1' equals ``81/200``
   (tight): the per-device polarisation ``<a, hbar> = |a|^2/2 + H/2 - mean |a - h_n|^2 / 2`` is an
   identity (checked symbolically) whereas (A.9) replaces ``|hbar|^2`` by ``(1/S^2) sum |h_n|^2``;
2. Lemma 3 on a linear-gradient window: ``||sum_{j<d} eta g||^2 = eta^2 d^2 |g|^2`` against the printed
   ``eta^2 d |g|^2`` (factor ``d`` lost) and Lemma 3' ``2 eta^2 d^2 |g|^2`` (holds);
3. Theorem 1': summing Lemma 1' with Lemma 3' (each H_j in at most dbar windows) the coefficient of
   ``sum H_j`` is ``(eta/2) (-(1 - x(1+rho)) + 2(1+lambda) dbar (dbar+rho) x^2)``; its root in ``x = eta L``
   is the library's ``x_max``;
4. the positive root of ``Q1/eta`` is ``beta* = S/(2LN)(sqrt(1 + 8NB/M) - 1)``, and ``beta <= beta*``
   with equality iff ``B = 1``;
5. the O-rate (30): ``sqrt(K+1) (Q2+Q3+Q4)/Q1`` at ``eta = beta/sqrt(K+1)`` tends to
   ``Delta/beta + beta L (sigma^2 + M Gamma^2)/(2SB)`` (the library's ``theorem1_order``);
6. the staleness sum ``sum_{k=0}^K min(k, dbar) = dbar (K + 1 - (dbar+1)/2)`` for ``K >= dbar``;
7. the end times ``E_k`` of the library solve the channel's recursion
   ``E_k = max(E_{k-1}, E_{k-m} + tau) + c`` (``E_{-1} = 0``, ``E_{k-m} + tau := tau`` for ``k < m``)
   for random integer parameters, in both regimes.

Run: ``python derivations/derive_tdma_theorem1.py`` (also collected by pytest).
"""
from __future__ import annotations

import random

import numpy as np
import sympy as sp

from fltheory.papers.tdma import bounds as B
from fltheory.papers.tdma import timing as tm

eta, L, M, Bb, S, N, K, lam, x = sp.symbols("eta L M B S N K lambda x", positive=True)
sigma, Gamma, Delta, g0, dbar, rho = sp.symbols("sigma Gamma Delta g0 dbar rho", nonnegative=True)


def _lib(expr):
    """The library's symbols replaced by the ones used here."""
    names = {"eta": eta, "L": L, "M": M, "B": Bb, "S": S, "N": N, "K": K, "lam": lam, "sigma": sigma,
             "Gamma": Gamma, "Delta": Delta, "g0": g0, "dbar": dbar}
    return sp.sympify(expr).xreplace({B.SYMBOLS[k]: v for k, v in names.items() if k in B.SYMBOLS})


def test_lemma1_counterexample_and_polarisation():
    e = sp.Rational(1, 10)
    w0 = sp.Integer(1)
    w1 = w0 - e * (w0 + w0) / 2                                  # two devices, both grad = w0
    f1 = w1**2 / 2
    printed = B.lemma1.evaluate(f_k=w0**2 / 2, a_k=w0**2, eta=e, M=1, L=1, S=2, B=1, sum_h=2 * w0**2, Gamma=0,
                                sum_D=0, sigma=0)
    corrected = B.lemma1_corrected.evaluate(f_k=w0**2 / 2, a_k=w0**2, eta=e, M=1, L=1, S=2, B=1, sum_h=2 * w0**2,
                                            Gamma=0, sum_D=0, sigma=0, lam=1)
    assert f1 == sp.Rational(81, 200) and printed == sp.Rational(161, 400) and f1 > printed and corrected == f1
    # the per-device polarisation identity behind Lemma 1' (vectors as symbols in R^2, S = 3)
    a = sp.Matrix(sp.symbols("a0 a1"))
    hs = [sp.Matrix(sp.symbols(f"h{n}0 h{n}1")) for n in range(3)]
    hbar = (hs[0] + hs[1] + hs[2]) / 3
    lhs = a.dot(hbar)
    rhs = a.dot(a) / 2 + sum(h.dot(h) for h in hs) / 6 - sum((a - h).dot(a - h) for h in hs) / 6
    assert sp.expand(lhs - rhs) == 0


def test_lemma3_factor():
    d, g = sp.symbols("d g", positive=True)
    drift = (eta * d * g) ** 2                                   # d equal steps of eta g
    printed = _lib(B.lemma3.expr).subs({sigma: 0, Gamma: 0, M: 1, S: 1, Bb: 1, B.SYMBOLS["sum_d"]: d,
                                        B.SYMBOLS["sum_window"]: d * g**2})
    corrected = _lib(B.lemma3_corrected.expr).subs({sigma: 0, M: 1, S: 1, Bb: 1, B.SYMBOLS["d"]: d,
                                                    B.SYMBOLS["window_H"]: d * g**2})
    assert sp.simplify(drift / printed - d) == 0                 # the lost factor: exceeds it for d >= 2
    assert sp.simplify(corrected - 2 * drift) == 0               # Lemma 3' holds with room 2


def test_theorem1_corrected_step_condition():
    coeff = -(1 - x * (1 + rho)) + 2 * (1 + lam) * dbar * (dbar + rho) * x**2
    roots = sp.solve(sp.Eq(coeff, 0), x)
    pos = [r for r in roots if r.subs({rho: 0, lam: 1, dbar: 1}) > 0][0]
    for db in (1, 2, 7):
        for Mv, Sv, Bv in ((1, 1, 1), (3, 2, 4)):
            rv = sp.Max(Mv - 1, 0) / (Sv * Bv)
            want = float(pos.subs({rho: rv, lam: 1, dbar: db}))
            assert abs(float(B.x_max(dbar=db, M=Mv, S=Sv, B=Bv)) - want) < 1e-12


def test_beta_root_of_Q1():
    q1 = sp.expand(_lib(B.Q1) / eta)
    roots = sp.solve(sp.Eq(q1, 0), eta)
    pos = [r for r in roots if r.subs({S: 1, Bb: 1, L: 1, N: 2, M: 1}) > 0][0]
    assert sp.simplify(pos - _lib(B.beta_root_expr)) == 0
    # beta <= beta*, equal iff B = 1: sqrt(x^2 + u B) - x decreases in x
    ratio = sp.simplify(_lib(B.beta_expr) / _lib(B.beta_root_expr))
    assert sp.simplify(ratio.subs(Bb, 1) - 1) == 0
    for Bv in (2, 5, 64):
        for Nv, Mv in ((10, 1), (100, 2), (3, sp.Rational(1, 2))):
            assert ratio.subs({Bb: Bv, N: Nv, M: Mv}) < 1


def test_order_of_the_printed_bound():
    eps = sp.Symbol("epsilon", positive=True)                   # eps = 1/sqrt(K+1)
    G = sp.Symbol("G", positive=True)
    beta = _lib(B.beta_expr)
    bound = _lib((B.Q2 + B.Q3 + B.Q4) / B.Q1).subs(N, G * S)
    scaled = (bound / eps).subs(eta, beta.subs(N, G * S) * eps).subs(K, 1 / eps**2 - 1)
    lim = sp.limit(scaled.subs({S: 2, G: 3, Bb: 4, L: 2, M: 3, sigma: 1, Gamma: 2, Delta: 5, g0: 1}), eps, 0)
    want = _lib(B.theorem1_order.expr).subs(N, G * S).subs({S: 2, G: 3, Bb: 4, L: 2, M: 3, sigma: 1, Gamma: 2,
                                                             Delta: 5})
    assert sp.simplify(lim - want) == 0


def test_staleness_sum():
    k = sp.Symbol("k", integer=True, nonnegative=True)
    for db in range(0, 6):
        for Kv in range(db, db + 8):
            assert sum(min(i, db) for i in range(Kv + 1)) == sp.Rational(db) * (Kv + 1 - sp.Rational(db + 1, 2))
    s = sp.summation(k, (k, 0, dbar)) + dbar * (K - dbar)       # K >= dbar: the ramp, then dbar per round
    assert sp.simplify(s - dbar * (K + 1 - (dbar + 1) / 2)) == 0


def test_end_times_solve_the_recursion():
    rng = random.Random(3)
    for _ in range(300):
        G, Sv = rng.randint(1, 10), rng.randint(1, 6)
        tau, r = rng.randint(1, 150), rng.randint(1, 5)
        a = rng.randint(0, G - 1)
        m, c = G - a, r * (Sv + 1)
        E = tm.end_time(N=G * Sv, S=Sv, tau_comp=tau, r=r, k=np.arange(5 * G + 3), alpha=a)
        prev = 0
        for k_ in range(len(E)):
            ready = tau if k_ < m else E[k_ - m] + tau
            assert E[k_] == max(prev, ready) + c
            prev = E[k_]


def main():
    for name, f in list(globals().items()):
        if name.startswith("test_") and callable(f):
            f()
            print(f"ok  {name}")
    print("x_max = positive root of x(1+rho) + 2(1+lambda) dbar (dbar+rho) x^2 = 1; beta* =", B.beta_root_expr)


if __name__ == "__main__":
    main()
