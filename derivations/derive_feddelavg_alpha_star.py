"""Derive FedDelAvg's optimal weight alpha* and the dissimilarity threshold delta_th.

Starting point: psi(alpha, inf) written out from the paper's definitions (18), (21) -- typed here
independently of the library.  Steps:

1. the library's psi(alpha, inf) equals it;
2. alpha * psi is a quadratic in alpha, so psi = D alpha + c + M / alpha with D, M read off the
   coefficients; d psi/d alpha = D - M/alpha^2 and d^2 psi/d alpha^2 = 2M/alpha^3 > 0 (strictly convex,
   psi -> +inf as alpha -> 0+); ``solve`` returns alpha = +-sqrt(M/D);
3. boundary analysis: on (0, 1] the minimiser is 1 iff d psi/d alpha(1) = D - M <= 0, else sqrt(M/D) < 1;
   D and M equal the paper's brackets (library ``D_expr``, ``M_expr``) and the library's total alpha*;
4. D - M is affine in delta with slope -(x^tau - x^(tau-Delta) - eta beta Delta)/beta <= 0 (Bernoulli;
   zero only at Delta = 0 or tau = Delta = 1); its root is the paper's delta_th (library ``delta_th_expr``),
   so alpha* = 1 iff delta >= delta_th;
5. the special cases: Delta = 0 gives D = 0 and alpha* = 1; tau = Delta = 1 gives
   alpha* = sqrt(2 eta beta/(1 + 2 eta beta));
6. the library's overflow-safe numerics equal the derived closed form at random points (mpmath).

Run: ``python derivations/derive_feddelavg_alpha_star.py`` (also collected by pytest).
"""
from __future__ import annotations

import random

import mpmath as mp
import sympy as sp

from fltheory.papers.feddelavg import bounds as B

eta, beta, L, delta, tau, Delta = sp.symbols("eta beta L delta tau Delta", positive=True)
alpha = sp.Symbol("alpha", positive=True)
x = 1 + eta * beta


def _to_positive(expr):
    """Swap the library's real symbols for the positive ones used here."""
    return sp.sympify(expr).xreplace({B.SYMBOLS[str(v)]: v for v in (eta, beta, L, delta, tau, Delta, alpha)})


def h(z):
    return delta / beta * (x ** z - 1) - eta * delta * z  # (18)


PSI_INF = ((1 - alpha) * 2 * eta * L * (tau / alpha - Delta) * (x ** tau - 1)  # (21)
           + (1 - alpha) * h(tau) + alpha * h(tau - Delta) + alpha * eta * Delta * L * x ** (tau - Delta))


def _zero(expr) -> bool:
    e = sp.expand(sp.powsimp(sp.expand(expr), force=True))
    return sp.simplify(e) == 0


def coefficients():
    """alpha psi(alpha, inf) = D alpha^2 + c alpha + M: return (D, c, M)."""
    poly = sp.Poly(sp.expand(alpha * PSI_INF), alpha)
    assert poly.degree() == 2
    D, c, M = poly.all_coeffs()
    return D, c, M


def test_library_psi_inf_matches_definition():
    assert _zero(_to_positive(B.psi_inf_expr) - PSI_INF)


def test_derivative_and_convexity():
    D, c, M = coefficients()
    d1 = sp.diff(PSI_INF, alpha)
    assert _zero(d1 - (D - M / alpha ** 2))
    d2 = sp.diff(PSI_INF, alpha, 2)
    assert _zero(d2 - 2 * M / alpha ** 3)
    # M = 2 eta L tau [(1+eta beta)^tau - 1] > 0, so psi is strictly convex and blows up at 0+
    assert _zero(M - 2 * eta * L * tau * (x ** tau - 1))
    assert sp.limit(PSI_INF.subs({tau: 3, Delta: 1, eta: sp.Rational(1, 10), beta: 1, L: 1, delta: 1}), alpha, 0, "+") == sp.oo


def test_stationary_points_and_library_alpha_star():
    D, c, M = coefficients()
    Ds, Ms = sp.Symbol("D", positive=True), sp.Symbol("M", positive=True)
    roots = sp.solve(sp.Eq(Ds - Ms / alpha ** 2, 0), alpha)  # alpha declared positive: the + root only
    assert roots == [sp.sqrt(Ms / Ds)] or roots == [sp.sqrt(Ms) / sp.sqrt(Ds)]
    a = sp.Symbol("a")
    both = sp.solve(sp.Eq(Ds - Ms / a ** 2, 0), a)
    assert len(both) == 2 and all(_zero(r ** 2 - Ms / Ds) for r in both)
    # the paper's brackets are the coefficients
    assert _zero(_to_positive(B.D_expr) - D)
    assert _zero(_to_positive(B.M_expr) - M)
    # library alpha*: Piecewise((1, D <= M), (sqrt(M/D), True))
    lib = _to_positive(B.alpha_star_expr)
    assert isinstance(lib, sp.Piecewise)
    (one, cond1), (inner, _) = lib.args
    assert one == 1
    assert _zero(inner ** 2 - M / D)
    # boundary analysis: minimiser of a convex function on (0,1] is 1 iff the slope at 1 is <= 0
    assert _zero(sp.diff(PSI_INF, alpha).subs(alpha, 1) - (D - M))
    assert isinstance(cond1, (sp.GreaterThan, sp.LessThan))
    nonneg = cond1.lhs - cond1.rhs if isinstance(cond1, sp.GreaterThan) else cond1.rhs - cond1.lhs
    ratio = sp.simplify(sp.expand(nonneg) / sp.expand(M - D))  # SymPy may rescale the relation
    assert ratio.is_number and ratio > 0  # the branch alpha* = 1 is exactly 'M - D >= 0'


def test_delta_threshold():
    D, c, M = coefficients()
    slope = sp.diff(D - M, delta)
    assert _zero(sp.diff(D - M, delta, 2))  # affine in delta
    den = x ** tau - x ** (tau - Delta) - eta * beta * Delta
    assert _zero(slope + den / beta)
    root = sp.solve(sp.Eq(D - M, 0), delta)
    assert len(root) == 1
    assert _zero(sp.together(root[0] - _to_positive(B.delta_th_expr)))
    # Bernoulli: the denominator is a polynomial in u = eta beta with nonnegative coefficients, for
    # every 1 <= Delta <= tau <= 7; zero iff tau = Delta = 1
    u = sp.Symbol("u", positive=True)
    for t in range(1, 8):
        for d in range(1, t + 1):
            p = sp.Poly(sp.expand((1 + u) ** t - (1 + u) ** (t - d) - u * d), u)
            assert all(co >= 0 for co in p.all_coeffs())
            assert (p.is_zero) == (t == d == 1)


def test_special_cases():
    D, c, M = coefficients()
    assert _zero(D.subs(Delta, 0))  # alpha* = 1 at Delta = 0
    a11 = sp.sqrt(M / D).subs({tau: 1, Delta: 1})
    assert _zero(sp.simplify(a11 ** 2 - 2 * eta * beta / (1 + 2 * eta * beta)))
    assert sp.simplify((D - M).subs({tau: 1, Delta: 1}) - eta * L) == 0  # D - M = eta L > 0 for every delta


def _mp_alpha_star(e, b, l_, dl, t, d):
    mp.mp.dps = 40
    e, b, l_, dl = (mp.mpf(v) for v in (e, b, l_, dl))
    xx = 1 + e * b
    Dq = e * d * l_ * (2 * xx ** t + xx ** (t - d) - 2) - dl / b * xx ** (t - d) * (xx ** d - 1) + e * dl * d
    Mq = 2 * e * l_ * t * (xx ** t - 1)
    return mp.mpf(1) if Dq <= Mq else mp.sqrt(Mq / Dq)


def test_library_numerics_equal_closed_form():
    rng = random.Random(1)
    for _ in range(300):
        t = rng.randint(1, 60)
        d = rng.randint(0, t)
        eb = 10 ** rng.uniform(-4, 0.3)
        b = 10 ** rng.uniform(-2, 2)
        l_ = 10 ** rng.uniform(-3, 3)
        dl = rng.uniform(0, 2) * l_
        got = float(B.alpha_star(eta=eb / b, beta=b, L=l_, delta=dl, tau=t, Delta=d))
        want = float(_mp_alpha_star(eb / b, b, l_, dl, t, d))
        assert abs(got - want) <= 1e-11 * max(1.0, want), (t, d, eb, b, l_, dl, got, want)


def main():
    for name, f in list(globals().items()):
        if name.startswith("test_") and callable(f):
            f()
            print(f"ok  {name}")
    D, c, M = coefficients()
    print("d psi(alpha,inf)/d alpha = D - M/alpha^2 with")
    print("  D =", sp.simplify(D))
    print("  M =", sp.factor(M))
    print("alpha* = 1 if D <= M else sqrt(M/D);  delta_th =", B.delta_th_expr)


if __name__ == "__main__":
    main()
