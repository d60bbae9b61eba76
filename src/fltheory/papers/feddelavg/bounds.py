r"""Every result of Lin, Brinton, Michelusi, *Federated Learning with Communication Delay in Edge
Networks* as a :class:`fltheory.symbolic.Statement`.

Problem class: :math:`F=\sum_i\rho_iF_i`, every :math:`F_i` convex, :math:`L`-Lipschitz and
:math:`\beta`-smooth (Assumption 1) with gradient dissimilarity
:math:`\sup_w\|\nabla F_i(w)-\nabla F(w)\|\le\delta_i`, :math:`\delta=\sum_i\rho_i\delta_i` (Assumption 2).
Method: FedDelAvg -- local GD with step :math:`\eta`, and every :math:`\tau` steps a mix
:math:`w_i(k\tau)=\alpha\,w(k\tau-\Delta)+(1-\alpha)[w_i(k\tau-1)-\eta\nabla F_i(w_i(k\tau-1))]` with
the global model :math:`\Delta` steps old (eqs. (10)-(12); simulator in ``algorithm.py``).

Named quantities.  The paper's functions are SymPy functions that print as the paper writes them,
evaluate exactly on numbers, expand with :func:`expand_named`, and evaluate on arrays in an
overflow-safe form (powers :math:`(1+\eta\beta)^n` in log space, ``0 * inf = 0`` for the
factors :math:`1-\alpha`, :math:`\delta`, ...; :math:`\alpha^*`, :math:`\delta_{th}` and the
monotonicity condition in a form scaled by :math:`(1+\eta\beta)^{-\tau}`).  So nothing overflows to
NaN for :math:`\tau` up to :math:`10^4` and beyond: a value whose true size exceeds the float64
range comes back as ``+inf`` (a vacuous bound), every value that fits comes back finite.

The two coefficients of Section III-A, used by the rows below before their own statements: with
:math:`x=1+\eta\beta`, :math:`\psi(\alpha,\infty)=D\alpha+M/\alpha+\text{const}`, where
:math:`M=2\eta L\tau(x^{\tau}-1)` and
:math:`D=\eta\Delta L(2x^{\tau}+x^{\tau-\Delta}-2)-\frac{\delta}{\beta}x^{\tau-\Delta}(x^{\Delta}-1)+\eta\delta\Delta`
(``M_fn`` and ``D_fn``; :math:`D` is affine and decreasing in :math:`\delta`, :math:`M>0`).

=================================  =========  ================================================
statement                          status     note
=================================  =========  ================================================
``h``, ``epsilon``, ``psi``,       printed    definitions (18), (19)/(24), (17), (21), (16)
``psi_inf_def``, ``Psi``
``theorem1``                       printed    (15) for the output (13), k = 0..K-1: FALSE at K=1
``theorem1_corrected``             corrected  min over k = 1..K (what the proof bounds)
``asymptotic_gap``                 printed    (20), with phi_inf = lim phi_K > 0
``psi_inf_delta0``                 printed    (22) identity at Delta = 0
``delta0_alpha1_optimal``          printed    (22) inequality psi(alpha,inf) >= psi(1,inf)
``monotonicity_condition``         printed    alpha^2 D >= M (holds pointwise)
``psi_inf_derivative``             corrected  d psi/d alpha = D - M/alpha^2 (strictly convex)
``delta_threshold_printed``        printed    delta >= delta_th => alpha* = 1 (denominator > 0)
``delta_threshold_iff``            corrected  iff, total (-inf at Delta=0, +inf at tau=Delta=1)
``alpha_star_printed``             printed    sqrt(M/D), valid for delta < delta_th
``alpha_star_total``               corrected  total: 1 if D <= M else sqrt(M/D)
``psi_fedavg``                     printed    psi(1, k) at Delta = 0 (remark after Prop. 1)
``lemma1``, ``lemma2``             printed    Appendix A-A (GD step expansion), (34) (||grad F_i|| <= L)
``lemma3`` / ``_corrected``        p / c      (23); c: eta > 0 only, factor (1 - rho_i), k = 0..K
``lemma3_delta0``                  corrected  Delta = 0: extra (1-alpha), only for k <= K-1
``lemma4`` / ``_corrected``        p / c      step bound; c: non-sync t only, any eta > 0
``lemma4_no_delay``                printed    (25) for Delta = 0 -- FALSE for alpha < 1
``lemma4_no_delay_corrected``      corrected  (25) needs alpha = 1 and t < (k+1) tau
``lemma5`` / ``_corrected``        p / c      (26)/(49); c: any eta > 0
``lemma5_intermediate``            printed    (47)-(48), equal to (49) for delta > 0
``prop1``, ``prop1_loss``          printed    (27), eta < 2/beta
``prop1_corrected``, ``..._loss``  corrected  (27) for any eta > 0
``prop2``                          printed    (77) (periods 1..K, time (K+1)tau - Delta)
``prop2_corrected``                corrected  main-text indexing: w(K tau - Delta), Psi' = sum_0^{K-1}
``gd_inverse_gap``                 printed    (81): one GD step grows 1/(F - F*) by eta(1-beta eta/2)/r^2
``gd_distance_max``                printed    (82): ||c_k(t) - w*||^2 <= 1/omega
``gd_period_gap``                  printed    (85): one period grows 1/(F - F*) by tau eta phi
``xi_star_bound``                  corrected  (106) with main-text indexing: the best point is within xi*
``psi_monotone_k``                 printed    (112): psi(alpha, k) <= psi(alpha, K) for k <= K
``prop1_pre_sync``                 printed    (66)-(67): Prop. 1's recursion before the sync
``prop1_post_sync``                printed    (68)-(71): Prop. 1's recursion from the sync on
``prop1_step`` / ``_corrected``    p / c      (63)-(65): one step; c: not at the next sync if Delta = 0
``prop1_window``, ``..._pre``      printed    (72)-(75) and the sum before it: Prop. 1's window sums
=================================  =========  ================================================

The Theorem 1 counterexample (our derivation, confirmed in ``checks.py``): with ``K = 1`` the
printed output set (13) is ``{w(-Delta)} = {w_init}``; for one client (``delta = 0``), ``Delta = 0``,
``alpha = 1`` every psi vanishes and (15) reads :math:`F(w_{init})-F^*\le\|w_{init}-w^*\|^2/(\eta\tau(1-\eta\beta/2))`,
false whenever :math:`F(w_{init})-F^*\approx\frac\beta2\|w_{init}-w^*\|^2` and
:math:`\eta\beta\tau(1-\eta\beta/2)>2` (e.g. :math:`\eta\beta=1,\tau=10`: ratio 2.5).

Symbols.  ``L`` is the paper's Lipschitz constant of every :math:`F_i` (a bound on
:math:`\|\nabla F_i\|`), not the smoothness: the smoothness is :math:`\beta` (the core's
``QuadraticFederation.L``).  ``M`` and ``D`` are the two constants of :math:`\alpha^*` (Section
III-A), not the client count.  :data:`MEANINGS` says what every symbol is.  The functions
``psi_inf``, ``delta_threshold`` and ``alpha_star`` evaluate the statements ``psi_inf_def``,
``delta_threshold_iff`` and ``alpha_star_total`` (statement and function names never coincide).

Trajectory-dependent symbols: ``phi`` :math:`=\omega(1-\beta\eta/2)`,
:math:`\omega=1/\max_{k<K}\|w(k\tau-\Delta)-w^*\|^2` (App. A-G (82)) is supplied from a run
(``FedDelAvgRecord.phi``; :func:`phi_value` computes it from ``omega`` for each ``eta``, as a sweep over
``eta`` needs -- never hold ``phi`` fixed across step sizes), as are ``dist_prev``, ``delta_i``, ``rho_i``, ``xi`` and ``Gamma_min``.

Example
-------
>>> from fltheory.papers.feddelavg import bounds as b
>>> round(float(b.alpha_star(eta=0.02, beta=1, L=1, delta=0.5, tau=10, Delta=9)), 12)
0.58848729671
>>> float(b.alpha_star(eta=0.1, beta=2, L=1.5, delta=0.3, tau=5, Delta=2))
1.0
>>> round(float(b.delta_threshold(eta=0.02, beta=1, L=1, tau=10, Delta=9)), 10)
9.2048203235
>>> float(b.psi_inf(alpha=1, eta=1.0, beta=1, L=1, delta=0, tau=10**4, Delta=10**4))  # no overflow
10000.0
>>> b.h.evaluate(x=2, eta=sp.Rational(1, 10), beta=2, delta=1)
1/50
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import sympy as sp

from ...backend import is_array, namespace, to_numpy
from ...symbolic import Condition, Statement, _sympy_expression, scope_memo
from . import bounds_kernels as _kernels

__all__ = [
    "STATEMENTS", "PAPER", "MEANINGS", "expand_named", "alpha_star", "delta_threshold", "h_value", "epsilon_value",
    "psi_value", "psi_inf", "Psi_value", "Psi_main_value", "theorem1_rhs", "phi_value", "AlphaStar", "alpha_star_details",
    "D_expr", "M_expr", "psi_inf_expr", "alpha_star_expr", "delta_th_expr", "SYMBOLS",
]

PAPER = "feddelavg"


def _s(name: str) -> sp.Symbol:
    return sp.Symbol(name, real=True)


# ----------------------------------------------------------------------------- symbols
eta, beta, L, delta, tau, Delta, alpha = (_s(n) for n in ("eta", "beta", "L", "delta", "tau", "Delta", "alpha"))
k, K, x, phi, xi, s = (_s(n) for n in ("k", "K", "x", "phi", "xi", "s"))
rho_i, delta_i, dist_prev, Gamma_min, dist = (_s(n) for n in ("rho_i", "delta_i", "dist_prev", "Gamma_min", "dist"))
dist_c, omega, j = _s("dist_c"), _s("omega"), _s("j")
G_prev, alpha_l = _s("G_prev"), _s("alpha_l")
SYMBOLS = {str(v): v for v in (eta, beta, L, delta, tau, Delta, alpha, k, K, x, phi, xi, s, rho_i, delta_i,
                               dist_prev, Gamma_min, dist, dist_c, omega, j, G_prev, alpha_l)}

LATEX = {"rho_i": r"\rho_i", "delta_i": r"\delta_i", "Gamma_min": r"\Gamma_{\min}", "s": r"(t-k\tau)",
         "dist_prev": r"\|\mathbf w_i(t-1)-\mathbf c_k(t-1)\|", "dist": r"\|\mathbf w_1-\mathbf w_2\|",
         "dist_c": r"\|\mathbf c_k(t)-\mathbf w^*\|",
         "G_prev": r"\sum_i\rho_i\|\mathbf w_i(\ell-1)-\mathbf c_k(\ell-1)\|", "alpha_l": r"\alpha_\ell"}
X1 = 1 + eta * beta  # the paper writes (1 + eta beta) out everywhere
A_ = X1 ** tau - 1


# ============================================================================= stable numerics
def _np_quiet(f):
    """Run ``f`` with NumPy's floating-point warnings off (overflow -> inf is intended)."""

    def g(*args):
        with np.errstate(all="ignore"):
            return f(*args)

    g.__name__ = f.__name__
    g.__doc__ = f.__doc__
    return g


def _prod(xp, *factors):
    """Product in which a zero factor wins over an infinite one (``0 * inf = 0``).

    Only the entries where the plain product is NaN are looked at again (a NaN from finite inputs
    can only be ``0 * inf``, ``inf - inf`` or ``inf / inf``), so the common case costs one pass."""
    out = factors[0]
    for f in factors[1:]:
        out = out * f
    nan = xp.isnan(out)
    if _ndim(out) > 0 and not bool(xp.any(nan)):
        if len(factors) == 1:
            return out + 0.0
        out += 0.0  # turns a -0.0 into 0.0, as the zero branch gives
        return out
    zero = nan & False
    for f in factors:
        zero = zero | (f == 0)
    return xp.where(zero, 0.0, out) + 0.0


def _patch(xp, out, cond, fn, *ins):
    """``out`` with ``fn(*ins)`` at the entries where ``cond`` holds (``fn`` is applied to those only).

    On large arrays the entries are gathered by index: ``where`` on a scattered mask is several
    times slower than a gather and a scatter, and ``fn`` then costs in proportion to the entries."""
    out = xp.asarray(out)
    if (xp is not np or out.ndim == 0 or out.size < 4096 or getattr(cond, "shape", ()) != out.shape
            or any(getattr(v, "shape", ()) not in ((), out.shape) for v in ins)):
        return xp.where(cond, fn(*ins), out)
    idx = xp.flatnonzero(cond)
    if idx.size:
        out = xp.ascontiguousarray(out)
        flat = out.reshape(-1)
        flat[idx] = fn(*(xp.reshape(v, (-1,))[idx] if getattr(v, "shape", ()) else v for v in ins))
    return out


def _ndim(v) -> int:
    """The number of axes of an array of any namespace (0 for a Python number)."""
    return getattr(v, "ndim", 0)


# P(z) = sum_j z^j/(2j+3), so that atanh(t) = t + t^3 P(t^2)
_ATANH = [1.0 / (2 * j + 3) for j in range(16)]


def _atanh_tail(z, terms):
    """P(z) = (atanh(sqrt z)/sqrt z - 1)/z by Horner on ``terms`` coefficients (in place)."""
    acc = _ATANH[terms - 1] * z + _ATANH[terms - 2]
    for j in range(terms - 3, -1, -1):
        acc *= z
        acc += _ATANH[j]
    return acc


def _odd_series(t, base, terms):
    """t (base - 2 t^2 P(t^2)), in place on arrays: the cancellation-free form of both series below."""
    z = t * t
    out = _atanh_tail(z, terms)
    out *= z
    out *= -2.0
    out += base
    out *= t
    return out


def _blend(xp, small, series, direct):
    """``series`` where ``small`` holds, ``direct`` elsewhere, without ``where``.

    ``series`` must be finite and exactly 0 outside ``small``; ``direct`` must be finite inside it
    (it may be inf outside).  Then ``series + (1 - small) * direct`` picks each value exactly, and
    costs a few passes instead of the slow ``where`` on a scattered mask."""
    direct *= 1.0 - small
    series += direct
    return series


def _expm1mx(xp, y, E=None):
    """e^y - 1 - y, accurate for small |y| and large y (inf past 709); ``E`` = expm1(y) if known.

    For |y| < 0.5, with t = tanh(y/2) = E/(E+2) (so y = 2 atanh t):
    e^y - 1 - y = t E - 2 t^3 P(t^2), a sum without cancellation (t^2 < 0.061, 14 terms).
    Elsewhere E - y, whose relative error is below 1e-15 there."""
    E = xp.expm1(y) if E is None else E
    if _ndim(y) == 0 and _ndim(E) == 0:
        small = abs(float(y)) < 0.5
        if not small:
            return E - y
        return _odd_series(E / (E + 2.0), E, 14)
    small = xp.astype(xp.abs(y) < 0.5, xp.float64)
    Ec = xp.minimum(E, 1.0)  # finite; equal to E where |y| < 0.5
    t = Ec + 2.0
    if xp is np:
        np.divide(Ec, t, out=t)
    else:
        t = Ec / t
    t *= small  # 0 outside: the series is then exactly 0 there
    return _blend(xp, small, _odd_series(t, Ec, 14), E - y)


def _log1pmx(xp, u, lx=None):
    """log(1+u) - u, accurate for small |u|; ``lx`` = log1p(u) if known.

    For |u| < 0.1, with s = u/(2+u) (so log(1+u) = 2 atanh s): u - log(1+u) = s (u - 2 s^2 P(s^2))
    (s^2 < 0.003, 8 terms).  Elsewhere u - log1p(u)."""
    lx = xp.log1p(u) if lx is None else lx
    if _ndim(u) == 0 and _ndim(lx) == 0:
        if abs(float(u)) >= 0.1:
            return lx - u
        return -_odd_series(u / (2.0 + u), u, 8)
    small = xp.astype(xp.abs(u) < 0.1, xp.float64)
    uc = u * small  # 0 outside: the series is then exactly 0 there
    s_ = uc + 2.0
    if xp is np:
        np.divide(uc, s_, out=s_)
    else:
        s_ = uc / s_
    out = _blend(xp, small, _odd_series(s_, uc, 8), u - lx)
    out *= -1.0
    return out


def _logs(xp, u):
    """(log1p(u), log1p(u) - u): the logarithms every power (1+u)^n of one call shares."""
    lx = xp.log1p(u)
    return lx, _log1pmx(xp, u, lx)


def _memo(tag, key_args, compute):
    """``compute()``, kept for the rest of the evaluation in progress under the identity of ``key_args``.

    Outside a statement's evaluation nothing is kept.  The entry holds ``key_args`` themselves, so
    an identity can not be reused by another array while the entry lives.  Callers must not change
    the value in place."""
    memo = scope_memo()
    if memo is None:
        return compute()
    key = (tag,) + tuple(id(v) for v in key_args)
    hit = memo.get(key)
    if hit is not None and all(a is b for a, b in zip(hit[0], key_args)):
        return hit[1]
    value = compute()
    memo[key] = (tuple(key_args), value)
    return value


def _logs_of(xp, eta_, beta_):
    """(eta beta, log1p(eta beta), log1p(eta beta) - eta beta), computed once per evaluation."""
    def compute():
        u = eta_ * beta_
        return (u,) + _logs(xp, u)

    return _memo("logs", (eta_, beta_), compute)


def _gE(xp, n, u, logs=None):
    """(g, E): g = (1+u)^n - 1 - n u (exactly 0 at n = 0 and n = 1) and E = (1+u)^n - 1.

    g = (e^y - 1 - y) - n (u - log(1+u)) with y = n log(1+u).  Bernoulli's inequality fixes its sign
    (u > -1): g >= 0 for n <= 0 and n >= 1, g <= 0 for 0 <= n <= 1; round-off of the wrong sign is
    cut to 0, and the factor sign(n (n-1)) makes g exactly 0 at n = 0 and n = 1."""
    lx, lm = _logs(xp, u) if logs is None else logs
    y = n * lx
    E = xp.expm1(y)
    val = _expm1mx(xp, y, E) + n * lm
    sign = xp.sign(n * (n - 1.0))
    return sign * xp.maximum(sign * val, 0.0), E


def _g(xp, n, u, logs=None):
    """(1+u)^n - 1 - n u, stable, exactly 0 at n = 0 and n = 1 (so h(0) = h(1) = 0 exactly); >= 0 on integers."""
    return _gE(xp, n, u, logs)[0]


def _pw(xp, n, u):
    """(1+u)^n through exp(n log1p(u)) (inf past the float range, never NaN)."""
    return xp.exp(n * xp.log1p(u))


def _h(xp, n, eta_, beta_, delta_, logs=None):
    return _prod(xp, delta_ / beta_, _g(xp, n, eta_ * beta_, logs))


def _S(xp, k_, a):
    """sum_{j<k} (1-a)^j = (1-(1-a)^k)/a, stable as a -> 0, exact at a = 1 and k = 0
    (once per evaluation: Theorem 1 needs it for psi(alpha, K) and for Psi)."""
    return _memo("S", (k_, a), lambda: _S_now(xp, k_, a))


def _S_now(xp, k_, a):
    geo = -xp.expm1(k_ * xp.log1p(-a)) / a  # 0/0 at a = 0, replaced next (the two cases are rare)
    geo = _patch(xp, geo, a == 0, lambda k_at: k_at, k_)
    return _patch(xp, geo, k_ == 0, lambda *_: 0.0)


def _SS(xp, K_, a):
    """sum_{k=1}^{K} S_k(a) = (K - (1-a) S_K)/a (a > 0), accurate for every a in (0, 1].

    The printed form cancels as a -> 0 (K - (1-a) S_K -> 0: at a = 2.8e-17, K = 1 it gives 0, not 1).
    With u = -a it equals S_K + [(1+u)^K - 1 - K u]/a^2, a sum of two nonnegative terms whose second
    is the stable ``_g``; that form is used for a < 1/2 and the printed one (no cancellation there:
    (1-a) S_K <= 1) elsewhere, so a = 1 (where log1p(-a) = -inf) stays exact.  Where K a < 1e-8 (g and
    a^2 would underflow for a < 1e-154) the series K(K+1)/2 - (K-1)K(K+1) a/6, whose next term is
    (K a)^2 smaller, is used instead."""
    S = _S(xp, K_, a)
    small = a < 0.5
    a_s = xp.where(small, a, 0.25)  # keeps log1p(-a) finite in the branch not taken
    stable = S + _g(xp, K_, -a_s) / a_s / a_s
    series = K_ * (K_ + 1) / 2 * (1 - (K_ - 1) * a / 3)
    stable = xp.where(K_ * a < 1e-8, series, stable)
    return xp.where(K_ == 0, 0.0, xp.where(small, stable, (K_ - (1 - a) * S) / a))


def _eps(xp, k_, a, eta_, L_, tau_, D_):
    return _prod(xp, 2 * eta_ * L_ * (tau_ - a * D_), _S(xp, k_, a))


def _psi_rest(xp, a, eta_, beta_, L_, delta_, tau_, D_):
    """(psi(alpha, 0), (1+eta beta)^tau - 1): the part of psi without epsilon, and the power it shares
    (once per evaluation: Theorem 1 needs it for psi and for Psi)."""
    return _memo("psi_rest", (a, eta_, beta_, L_, delta_, tau_, D_),
                 lambda: _psi_rest_now(xp, a, eta_, beta_, L_, delta_, tau_, D_))


def _psi_rest_now(xp, a, eta_, beta_, L_, delta_, tau_, D_):
    u, *logs = _logs_of(xp, eta_, beta_)
    g_tau, A = _gE(xp, tau_, u, logs)
    g_rest, E_rest = _gE(xp, tau_ - D_, u, logs)
    E_rest += 1.0  # (1+eta beta)^(tau - Delta)
    db = delta_ / beta_
    return (_prod(xp, 1 - a, db, g_tau) + _prod(xp, a, db, g_rest) + _prod(xp, a, eta_ * D_ * L_, E_rest)), A


def _scaled(xp, eta_, beta_, L_, delta_, tau_, D_):
    """(D, M, numerator, denominator of delta_th), all divided by (1+eta beta)^tau: never overflow."""
    u, lx, lm = _logs_of(xp, eta_, beta_)
    e_tau = -xp.expm1(-tau_ * lx)  # 1 - x^-tau
    x_mD = xp.exp(-D_ * lx)  # x^-Delta
    x_mt = xp.exp(-tau_ * lx)  # x^-tau
    # x^-tau [x^(tau-D)(x^D - 1) - u D] = (1 - x^-(tau-D))(1 - x^-D) + x^-tau g(D), no cancellation
    gD = _g(xp, D_, u, (lx, lm))
    big = D_ * lx > 600.0  # there x^-tau g(D) would overflow on the way; rare, so computed only there
    g_scaled = _patch(xp, gD * x_mt, big, lambda t_, d_, l_, u_, xd: xp.exp(-(t_ - d_) * l_) * (1 - (1 + d_ * u_) * xd),
                      tau_, D_, lx, u, x_mD)
    den = xp.expm1(-(tau_ - D_) * lx) * xp.expm1(-D_ * lx) + g_scaled
    num = D_ * x_mD - 2 * e_tau * (tau_ - D_)
    Mh = 2 * eta_ * L_ * tau_ * e_tau
    Dh = eta_ * L_ * D_ * (2 * e_tau + x_mD) - _prod(xp, delta_ / beta_, den)
    return Dh, Mh, num, den


# numeric implementations, one per named quantity (argument order = the function's)
@_np_quiet
def _num_h(x_, eta_, beta_, delta_):
    return _h(namespace(x_, eta_, beta_, delta_), x_, eta_, beta_, delta_)


@_np_quiet
def _num_eps(k_, a, eta_, L_, tau_, D_):
    return _eps(namespace(k_, a, eta_, L_), k_, a, eta_, L_, tau_, D_)


@_np_quiet
def _num_psi(k_, a, eta_, beta_, L_, delta_, tau_, D_):
    xp = namespace(k_, a, eta_, beta_, L_, delta_, tau_, D_)
    rest, A = _psi_rest(xp, a, eta_, beta_, L_, delta_, tau_, D_)
    return _prod(xp, 1 - a, _eps(xp, k_, a, eta_, L_, tau_, D_), A) + rest


@_np_quiet
def _num_psi_inf(a, eta_, beta_, L_, delta_, tau_, D_):
    xp = namespace(a, eta_, beta_, L_, delta_, tau_, D_)
    rest, A = _psi_rest(xp, a, eta_, beta_, L_, delta_, tau_, D_)
    return _prod(xp, 1 - a, 2 * eta_ * L_ * (tau_ - a * D_) / a, A) + rest


def _num_Psi_from(first):
    @_np_quiet
    def f(K_, a, eta_, beta_, L_, delta_, tau_, D_):
        xp = namespace(K_, a, eta_, beta_, L_, delta_, tau_, D_)
        rest, A = _psi_rest(xp, a, eta_, beta_, L_, delta_, tau_, D_)
        ss = _SS(xp, K_, a) if first == 1 else _SS(xp, K_ - 1, a)  # sum_k S_k over k = first..first+K-1
        return _prod(xp, 1 - a, A, 2 * eta_ * L_ * (tau_ - a * D_), ss) + K_ * rest

    return f


@_np_quiet
def _num_D(eta_, beta_, L_, delta_, tau_, D_):
    xp = namespace(eta_, beta_, L_, delta_, tau_, D_)
    Dh = _scaled(xp, eta_, beta_, L_, delta_, tau_, D_)[0]
    return _prod(xp, Dh, _pw(xp, tau_, eta_ * beta_))


@_np_quiet
def _num_M(eta_, beta_, L_, tau_):
    xp = namespace(eta_, beta_, L_, tau_)
    return 2 * eta_ * L_ * tau_ * xp.expm1(tau_ * xp.log1p(eta_ * beta_))


@_np_quiet
def _num_dpsi(a, eta_, beta_, L_, delta_, tau_, D_):
    xp = namespace(a, eta_, beta_, L_, delta_, tau_, D_)
    Dh, Mh, _, _ = _scaled(xp, eta_, beta_, L_, delta_, tau_, D_)
    return _prod(xp, Dh - Mh / (a * a), _pw(xp, tau_, eta_ * beta_))


@_np_quiet
def _num_alpha_star(eta_, beta_, L_, delta_, tau_, D_):
    xp = namespace(eta_, beta_, L_, delta_, tau_, D_)
    Dh, Mh, _, _ = _scaled(xp, eta_, beta_, L_, delta_, tau_, D_)
    return xp.where(Dh <= Mh, 1.0, xp.sqrt(Mh / xp.where(Dh <= Mh, 1.0, Dh)))


@_np_quiet
def _num_alpha_closed(eta_, beta_, L_, delta_, tau_, D_):
    xp = namespace(eta_, beta_, L_, delta_, tau_, D_)
    Dh, Mh, _, _ = _scaled(xp, eta_, beta_, L_, delta_, tau_, D_)
    return xp.sqrt(Mh / Dh)


@_np_quiet
def _num_delta_th(eta_, beta_, L_, tau_, D_):
    xp = namespace(eta_, beta_, L_, tau_, D_)
    _, _, num, den = _scaled(xp, eta_, beta_, L_, 0.0 * eta_, tau_, D_)
    inf = xp.where(num < 0, xp.asarray(-math.inf), math.inf)   # the standard's where takes one scalar at most
    return xp.where(den > 0, eta_ * beta_ * L_ * num / xp.where(den > 0, den, 1.0), inf)


@_np_quiet
def _num_psi_inf_delta0(a, eta_, beta_, L_, delta_, tau_):
    xp = namespace(a, eta_, beta_, L_, delta_, tau_)
    A = xp.expm1(tau_ * xp.log1p(eta_ * beta_))
    return _h(xp, tau_, eta_, beta_, delta_) + _prod(xp, 1 / a - 1, 2 * eta_ * L_ * tau_, A)


@_np_quiet
def _num_growth(s_, eta_, beta_, d_):
    xp = namespace(s_, eta_, beta_, d_)
    return _prod(xp, d_ / beta_, xp.expm1(s_ * xp.log1p(eta_ * beta_)))


@_np_quiet
def _num_lemma5(k_, a, eta_, beta_, L_, delta_, tau_, D_):
    xp = namespace(k_, a, eta_, beta_, L_, delta_, tau_, D_)
    xD1 = xp.expm1(D_ * xp.log1p(eta_ * beta_))
    local = _prod(xp, xD1, _eps(xp, k_, a, eta_, L_, tau_, D_)) + _h(xp, D_, eta_, beta_, delta_)
    return a * D_ * L_ * eta_ + _prod(xp, 1 - a, local)


@_np_quiet
def _num_lemma5_48(k_, a, eta_, beta_, L_, delta_, tau_, D_):
    xp = namespace(k_, a, eta_, beta_, L_, delta_, tau_, D_)
    e = _eps(xp, k_, a, eta_, L_, tau_, D_)
    hD = _h(xp, D_, eta_, beta_, delta_)
    return eta_ * D_ * (a * L_ + _prod(xp, 1 - a, beta_ * e)) + _prod(xp, 1 - a, beta_ * e / delta_ + 1, hD)


# ============================================================================= named quantities
class _Quantity(sp.Function):
    """A named quantity of the paper: prints as the paper, exact on numbers, overflow-safe on arrays.

    Subclasses set ``definition`` (a function of the SymPy arguments returning the paper's
    formula, possibly in terms of other named quantities), ``notation`` (LaTeX from the printed
    arguments) and ``_imp_`` (the stable NumPy/CuPy implementation ``lambdify`` uses).
    """

    show_definition = False

    def __new__(cls, *args, **options):
        # SymPy's Function would sympify a string argument (run it as Python): numbers and SymPy objects only
        args = tuple(_sympy_expression(a, f"{cls.__name__.removesuffix('_def')} argument {i + 1}")
                     for i, a in enumerate(args))
        return super().__new__(cls, *args, **options)

    @classmethod
    def eval(cls, *args):
        if all(a.is_number for a in args):
            return cls.definition(*args)
        return None

    def explicit(self):
        """The paper's formula for this quantity (one level)."""
        return type(self).definition(*self.args)

    def _latex(self, printer):
        if self.show_definition:
            return printer._print(self.explicit())
        return self.notation(*(printer._print(a) for a in self.args))


def _quantity(name, nargs, definition, numeric, notation) -> type:
    """A :class:`_Quantity` subclass printing its notation, and its twin printing its definition."""
    body = {"nargs": nargs, "definition": staticmethod(definition), "_imp_": staticmethod(numeric),
            "notation": staticmethod(notation),
            # its C function, for a statement's CuPy kernel (the same stable form as ``numeric``)
            "c_name": _kernels.C_NAMES[name.removesuffix("_fn")], "c_source": _kernels.C_SOURCE}
    cls = type(name, (_Quantity,), body)
    twin = type(name + "_def", (cls,), {"show_definition": True})
    return cls, twin


def expand_named(expr):
    """Replace every named quantity by its formula, recursively: a plain SymPy expression."""
    expr = _sympy_expression(expr, "expr")   # a SymPy expression or a number; text is refused, never parsed
    for _ in range(10):
        new = expr.replace(lambda e: isinstance(e, _Quantity), lambda e: e.explicit())
        if new == expr:
            return new
        expr = new
    return expr


def _h_def(x_, eta_, beta_, delta_):
    return delta_ / beta_ * ((1 + eta_ * beta_) ** x_ - 1) - eta_ * delta_ * x_


def _eps_def(k_, a, eta_, L_, tau_, D_):
    return (1 - (1 - a) ** k_) * 2 * eta_ * L_ * (tau_ / a - D_)


h_fn, h_def_fn = _quantity("h_fn", 4, _h_def, _num_h, lambda x_, *r: rf"h\left({x_}\right)")
eps_fn, eps_def_fn = _quantity("eps_fn", 6, _eps_def, _num_eps, lambda k_, *r: rf"\epsilon^{{({k_})}}")


def _psi_tail(a, eta_, beta_, L_, delta_, tau_, D_):
    return (1 - a) * h_fn(tau_, eta_, beta_, delta_) + a * h_fn(tau_ - D_, eta_, beta_, delta_) \
        + a * eta_ * D_ * L_ * (1 + eta_ * beta_) ** (tau_ - D_)


def _psi_def(k_, a, eta_, beta_, L_, delta_, tau_, D_):
    A = (1 + eta_ * beta_) ** tau_ - 1
    return (1 - a) * eps_fn(k_, a, eta_, L_, tau_, D_) * A + _psi_tail(a, eta_, beta_, L_, delta_, tau_, D_)


def _psi_inf_def(a, eta_, beta_, L_, delta_, tau_, D_):
    A = (1 + eta_ * beta_) ** tau_ - 1
    return (1 - a) * 2 * eta_ * L_ * (tau_ / a - D_) * A + _psi_tail(a, eta_, beta_, L_, delta_, tau_, D_)


psi_fn, psi_def_fn = _quantity("psi_fn", 8, _psi_def, _num_psi, lambda k_, a, *r: rf"\psi\left({a}, {k_}\right)")
psi_inf_fn, psi_inf_def_fn = _quantity("psi_inf_fn", 7, _psi_inf_def, _num_psi_inf,
                                       lambda a, *r: rf"\psi\left({a}, \infty\right)")


def _Psi_def(K_, a, eta_, beta_, L_, delta_, tau_, D_):
    """(16): K psi(alpha, inf) - [(1+eta beta)^tau - 1] (1-alpha)^2/alpha eps^(K)."""
    A = (1 + eta_ * beta_) ** tau_ - 1
    return K_ * psi_inf_fn(a, eta_, beta_, L_, delta_, tau_, D_) - A * (1 - a) ** 2 / a * eps_fn(K_, a, eta_, L_, tau_, D_)


def _Psi0_def(K_, a, eta_, beta_, L_, delta_, tau_, D_):
    """sum_{k=0}^{K-1} psi(alpha, k) = Psi(alpha) - psi(alpha, K) + psi(alpha, 0)."""
    args = (a, eta_, beta_, L_, delta_, tau_, D_)
    return Psi_fn(K_, *args) - psi_fn(K_, *args) + psi_fn(0, *args)


Psi_fn, Psi_def_fn = _quantity("Psi_fn", 8, _Psi_def, _num_Psi_from(1), lambda K_, a, *r: rf"\Psi\left({a}\right)")
Psi0_fn, Psi0_def_fn = _quantity("Psi0_fn", 8, _Psi0_def, _num_Psi_from(0), lambda K_, a, *r: rf"\Psi'\left({a}\right)")


def _D_def(eta_, beta_, L_, delta_, tau_, D_):
    x1 = 1 + eta_ * beta_
    return (eta_ * D_ * L_ * (2 * x1 ** tau_ + x1 ** (tau_ - D_) - 2)
            - delta_ / beta_ * x1 ** (tau_ - D_) * (x1 ** D_ - 1) + eta_ * delta_ * D_)


def _M_def(eta_, beta_, L_, tau_):
    return 2 * eta_ * L_ * tau_ * ((1 + eta_ * beta_) ** tau_ - 1)


D_fn, D_def_fn = _quantity("D_fn", 6, _D_def, _num_D, lambda *r: "D")
M_fn, M_def_fn = _quantity("M_fn", 4, _M_def, _num_M, lambda *r: "M")
_DM = lambda eta_, beta_, L_, delta_, tau_, D_: (D_fn(eta_, beta_, L_, delta_, tau_, D_), M_fn(eta_, beta_, L_, tau_))  # noqa: E731


def _dpsi_def(a, eta_, beta_, L_, delta_, tau_, D_):
    Dq, Mq = _DM(eta_, beta_, L_, delta_, tau_, D_)
    return Dq - Mq / a ** 2


def _alpha_star_def(eta_, beta_, L_, delta_, tau_, D_):
    Dq, Mq = _DM(eta_, beta_, L_, delta_, tau_, D_)
    return sp.Piecewise((1, Dq <= Mq), (sp.sqrt(Mq / Dq), True))


def _alpha_closed_def(eta_, beta_, L_, delta_, tau_, D_):
    """The printed closed form, written out as in the paper."""
    return sp.sqrt(_M_def(eta_, beta_, L_, tau_) / _D_def(eta_, beta_, L_, delta_, tau_, D_))


def _delta_th_def(eta_, beta_, L_, tau_, D_):
    x1 = 1 + eta_ * beta_
    num = D_ * x1 ** (tau_ - D_) - 2 * (x1 ** tau_ - 1) * (tau_ - D_)
    den = x1 ** tau_ - x1 ** (tau_ - D_) - eta_ * beta_ * D_
    if all(v.is_number for v in (eta_, beta_, L_, tau_, D_)) and sp.simplify(den) == 0:
        return sp.oo if sp.simplify(num) > 0 else -sp.oo  # the total reading
    return eta_ * beta_ * L_ * num / den


dpsi_fn, dpsi_def_fn = _quantity("dpsi_fn", 7, _dpsi_def, _num_dpsi,
                                 lambda a, *r: rf"\frac{{\partial\psi({a},\infty)}}{{\partial\alpha}}")
alpha_star_fn, alpha_star_def_fn = _quantity("alpha_star_fn", 6, _alpha_star_def, _num_alpha_star, lambda *r: r"\alpha^*")
alpha_closed_fn, alpha_closed_def_fn = _quantity("alpha_closed_fn", 6, _alpha_closed_def, _num_alpha_closed,
                                                 lambda *r: r"\alpha^*")
delta_th_fn, delta_th_def_fn = _quantity("delta_th_fn", 5, _delta_th_def, _num_delta_th, lambda *r: r"\delta_{th}")


def _psi_inf_delta0_def(a, eta_, beta_, L_, delta_, tau_):
    return h_fn(tau_, eta_, beta_, delta_) + (1 / a - 1) * 2 * eta_ * L_ * tau_ * ((1 + eta_ * beta_) ** tau_ - 1)


psi_inf_delta0_fn, psi_inf_delta0_def_fn = _quantity("psi_inf_delta0_fn", 6, _psi_inf_delta0_def, _num_psi_inf_delta0,
                                                     lambda a, *r: rf"\psi\left({a},\infty\right)\big|_{{\Delta=0}}")
growth_fn, growth_def_fn = _quantity("growth_fn", 4,
                                     lambda s_, eta_, beta_, d_: d_ / beta_ * ((beta_ * eta_ + 1) ** s_ - 1),
                                     _num_growth, lambda *r: r"\frac{\delta_i}{\beta}((\beta\eta+1)^{t-k\tau}-1)")


def _lemma5_def(k_, a, eta_, beta_, L_, delta_, tau_, D_):
    x1 = 1 + eta_ * beta_
    return a * D_ * L_ * eta_ + (1 - a) * ((x1 ** D_ - 1) * eps_fn(k_, a, eta_, L_, tau_, D_) + h_fn(D_, eta_, beta_, delta_))


def _lemma5_48_def(k_, a, eta_, beta_, L_, delta_, tau_, D_):
    e = eps_fn(k_, a, eta_, L_, tau_, D_)
    return eta_ * D_ * (a * L_ + (1 - a) * beta_ * e) + (1 - a) * (beta_ / delta_ * e + 1) * h_fn(D_, eta_, beta_, delta_)


lemma5_fn, lemma5_def_fn = _quantity("lemma5_fn", 8, _lemma5_def, _num_lemma5, lambda *r: r"(26)")
lemma5_48_fn, lemma5_48_def_fn = _quantity("lemma5_48_fn", 8, _lemma5_48_def, _num_lemma5_48, lambda *r: r"(48)")

# plain SymPy forms (for derivations): everything written out
_P7 = (alpha, eta, beta, L, delta, tau, Delta)
psi_inf_expr = expand_named(psi_inf_fn(*_P7))
D_expr = _D_def(eta, beta, L, delta, tau, Delta)
M_expr = _M_def(eta, beta, L, tau)
alpha_star_expr = expand_named(alpha_star_fn(eta, beta, L, delta, tau, Delta))
delta_th_expr = _delta_th_def(eta, beta, L, tau, Delta)


# ============================================================================= statements
def _st(name, lhs, relation, expr, conds, equation, title, *, status="printed", reason="", tight=None, corrects=None):
    return Statement(name, lhs=lhs, relation=relation, expr=expr,
                     conditions=tuple(Condition(e, t) for e, t in conds), paper=PAPER, equation=equation,
                     status=status, reason=reason, tight=tight, corrects=corrects, title=title, latex_names=LATEX)


def _integer(v, text):
    return (sp.Eq(v, sp.floor(v)), f"{text} must be an integer")


_ETA = [(eta > 0, "eta > 0")]
_BETA = [(beta > 0, "beta > 0 (the formulas divide by beta)")]
_ETA2 = [(eta * beta < 2, "eta < 2/beta")]
_DELTA = [(delta >= 0, "delta >= 0")]
_TAU = [(tau >= 1, "tau >= 1"), _integer(tau, "tau"), (Delta >= 0, "Delta >= 0"),
        (Delta <= tau, "Delta <= tau (the delay cannot exceed the period)"), _integer(Delta, "Delta")]
_BASE = _ETA + _BETA + [(L > 0, "L > 0")] + _DELTA + _TAU
_ALPHA = [(alpha > 0, "alpha > 0 (the bounds divide by alpha)"), (alpha <= 1, "alpha <= 1")]
_KPER = [(K >= 1, "K >= 1"), _integer(K, "K")]
_k0 = [(k >= 0, "k >= 0"), _integer(k, "k")]
_PHI = [(phi > 0, "phi > 0 (phi = omega (1 - beta eta/2), App. A-G (82))")]
_P8k = (k, alpha, eta, beta, L, delta, tau, Delta)
_P8K = (K, alpha, eta, beta, L, delta, tau, Delta)
_P6 = (eta, beta, L, delta, tau, Delta)
T_ = K * tau

# ----------------------------------------------------------------------------- definitions
h = _st("h", r"h(x)", "==", h_def_fn(x, eta, beta, delta),
        _ETA + _BETA + _DELTA + [(x >= 0, "x >= 0")], "(18)",
        "h(x) = delta/beta[(1+eta beta)^x - 1] - eta delta x; h(0) = h(1) = 0, h >= 0 on integers.")
epsilon = _st("epsilon", r"\epsilon^{(k)}", "==", eps_def_fn(k, alpha, eta, L, tau, Delta),
              _ETA + [(L > 0, "L > 0")] + _TAU + _ALPHA + _k0, "(19)/(24)",
              "Lemma 3's divergence bound eps^(k) = [1-(1-alpha)^k] 2 eta L (tau/alpha - Delta).")
psi = _st("psi", r"\psi(\alpha,k)", "==", psi_def_fn(*_P8k), _BASE + _ALPHA + _k0, "(17)",
          "Proposition 1's per-period bound psi(alpha, k).")
psi_inf_st = _st("psi_inf_def", r"\psi(\alpha,\infty)", "==", psi_inf_def_fn(*_P7), _BASE + _ALPHA, "(21)",
                 "psi(alpha, inf) = lim_k psi(alpha, k).")
Psi = _st("Psi", r"\Psi(\alpha)=\sum_{k=1}^{K}\psi(\alpha,k)", "==", Psi_def_fn(*_P8K), _BASE + _ALPHA + _KPER, "(16)",
          "Psi(alpha) = K psi(alpha, inf) - [(1+eta beta)^tau - 1](1-alpha)^2/alpha eps^(K).")

# ----------------------------------------------------------------------------- Theorem 1 and (20)
_THM1 = 1 / (2 * eta * phi * T_) + sp.sqrt(1 / (4 * eta ** 2 * phi ** 2 * T_ ** 2) + L * Psi_fn(*_P8K) / (eta * phi * T_)) \
    + L * psi_fn(*_P8K)
_THM1_CONDS = _BASE + _ALPHA + _KPER + _ETA2 + _PHI
theorem1 = _st(
    "theorem1", r"F(\mathbf w^K)-F(\mathbf w^*),\ \mathbf w^K=\arg\min_{k\in\{0..K-1\}}F(\mathbf w(k\tau-\Delta))",
    "<=", _THM1, _THM1_CONDS, "(15)",
    "Theorem 1 with the printed output (13) (candidates k = 0..K-1). FALSE at K = 1: the only "
    "candidate is w_init (see the module docstring).", tight=False)
theorem1_corrected = _st(
    "theorem1_corrected", r"\min_{k\in\{1..K\}}F(\mathbf w(k\tau-\Delta))-F(\mathbf w^*)", "<=", _THM1, _THM1_CONDS,
    "(15)/(113)",
    "Theorem 1 as the proof (A-H (106)-(113)) establishes it: the minimum over k = 1..K (the output sets "
    "'proof' and 'all'). eta < 2/beta suffices: the proof's 'eta <= 1/beta' is used only for condition 1 of Prop. 2. "
    "Tight: supremum 1, approached only as K -> infinity (alpha = 1, Delta = tau freezes w at w_init; one "
    "pseudo-Huber client far outside its width, eta beta -> 0); at K = 8, tau = 6 that instance gives 0.528.",
    status="corrected", corrects="theorem1", tight=True,
    reason="the printed output set {w(k tau - Delta)}_{k=0}^{K-1} contains w_init and not w(T - Delta); "
           "the proof bounds k = 1..K")
asymptotic_gap = _st(
    "asymptotic_gap", r"\lim_{K\to\infty}F(\mathbf w^K)-F(\mathbf w^*)", "<=",
    sp.sqrt(L / (eta * phi * tau)) * sp.sqrt(psi_inf_fn(*_P7)) + L * psi_inf_fn(*_P7),
    _BASE + _ALPHA + _ETA2 + [(phi > 0, "phi > 0: phi_inf = lim_K phi_K > 0 needs bounded iterates")], "(20)",
    "The K -> infinity limit of Theorem 1 (T = K tau). Tight: supremum 1 (alpha = 1, Delta = tau, one "
    "pseudo-Huber client far outside its width, eta beta -> 0).", tight=True)
psi_inf_delta0 = _st(
    "psi_inf_delta0", r"\psi(\alpha,\infty)\big|_{\Delta=0}", "==",
    psi_inf_delta0_def_fn(alpha, eta, beta, L, delta, tau),
    _ETA + _BETA + [(L > 0, "L > 0")] + _DELTA + [(tau >= 1, "tau >= 1"), _integer(tau, "tau")] + _ALPHA, "(22)",
    "With no delay, psi(alpha, inf) = h(tau) + (1/alpha - 1) 2 eta L tau [(1+eta beta)^tau - 1].", tight=True)
delta0_alpha1_optimal = _st(
    "delta0_alpha1_optimal", r"\psi(\alpha,\infty)\big|_{\Delta=0}", ">=", h_fn(tau, eta, beta, delta),
    [(c.expr, c.text) for c in psi_inf_delta0.conditions], "(22)",
    "With no delay alpha = 1 (FedAvg) minimises psi(., inf): psi(alpha, inf) >= psi(1, inf) = h(tau).", tight=True)

# ----------------------------------------------------------------------------- optimal alpha
monotonicity_condition = _st(
    "monotonicity_condition", r"\alpha^2D", ">=", M_fn(eta, beta, L, tau), _BASE + _ALPHA, "Sec. III-A",
    "'psi(alpha, inf) is increasing in alpha in (0,1] iff alpha^2 D >= M' -- correct read pointwise "
    "(d psi/d alpha >= 0 at that alpha); read on the whole interval it can never hold.")
psi_inf_derivative = _st(
    "psi_inf_derivative", r"\frac{\partial\psi(\alpha,\infty)}{\partial\alpha}", "==", dpsi_def_fn(*_P7),
    _BASE + _ALPHA, "Sec. III-A",
    "d psi(alpha,inf)/d alpha = D - M/alpha^2 and d^2 psi/d alpha^2 = 2M/alpha^3 > 0: psi(., inf) is strictly convex, "
    "decreasing on (0, sqrt(M/D)] and increasing after (decreasing everywhere when D <= 0).",
    status="corrected", corrects="monotonicity_condition", tight=True,
    reason="the condition is pointwise; psi(., inf) -> inf as alpha -> 0+ so it is never increasing on all of (0,1]")
delta_threshold_printed = _st(
    "delta_threshold_printed", r"\delta_{th}", "==", delta_th_def_fn(eta, beta, L, tau, Delta),
    _ETA + _BETA + [(L > 0, "L > 0")] + _TAU + [(Delta >= 1, "Delta >= 1 (denominator > 0)"),
                                                 (tau >= 2, "tau >= 2 (denominator > 0; tau = Delta = 1 gives 0)")],
    "Sec. III-A", "If delta >= delta_th then psi(., inf) is decreasing on (0,1], minimised at alpha = 1.")
delta_threshold_iff = _st(
    "delta_threshold_iff", r"\delta_{th}", "==", delta_th_def_fn(eta, beta, L, tau, Delta),
    _ETA + _BETA + [(L > 0, "L > 0")] + _TAU, "Sec. III-A",
    "alpha* = 1 iff delta >= delta_th (iff D <= M); delta_th = -inf at Delta = 0, +inf at tau = Delta = 1.",
    status="corrected", corrects="delta_threshold_printed", tight=True,
    reason="the implication is an equivalence (D - M is affine and decreasing in delta); total at the two "
           "zero denominators")
alpha_star_printed = _st(
    "alpha_star_printed", r"\alpha^*", "==", alpha_closed_def_fn(*_P6),
    _BASE + [(delta < delta_th_fn(eta, beta, L, tau, Delta), "delta < delta_th (the paper's 'otherwise', D > M)")],
    "Sec. III-A", "The printed minimiser sqrt(M/D) of psi(., inf) over (0,1], for delta < delta_th.", tight=True)
alpha_star_total = _st(
    "alpha_star_total", r"\alpha^*=\arg\min_{\alpha\in(0,1]}\psi(\alpha,\infty)", "==", alpha_star_def_fn(*_P6), _BASE,
    "Sec. III-A", "The minimiser of psi(., inf) over (0,1] as a total function: 1 if D <= M, else sqrt(M/D) in (0,1).",
    status="corrected", corrects="alpha_star_printed", tight=True,
    reason="the closed form is right but only for delta < delta_th; alpha* = 1 otherwise (and always at Delta = 0)")

# ----------------------------------------------------------------------------- Lemmas 1-2 (Appendix A-A, A-B)
lemma1 = _st(
    "lemma1", r"\|[\mathbf w_1-\eta\nabla F(\mathbf w_1)]-[\mathbf w_2-\eta\nabla F(\mathbf w_2)]\|", "<=",
    sp.sqrt(1 + beta ** 2 * eta ** 2) * dist, _ETA + _BETA + [(dist >= 0, "dist >= 0")], "Lemma 1 (A-A)",
    "Lemma 1: a GD step on a convex beta-smooth F moves two points apart by at most sqrt(1 + beta^2 eta^2) "
    "(<= 1 + beta eta) times their distance, for any eta > 0. Tight: supremum 1 as eta beta -> 0 (not attained).",
    tight=True)
lemma2 = _st("lemma2", r"\|\nabla F_i(\mathbf w)\|", "<=", L, [(L > 0, "L > 0")], "(34)",
             "Lemma 2: a convex L-Lipschitz F_i has gradients of norm at most L. Tight: supremum 1 far from a "
             "pseudo-Huber client's centre (attained by a literal Huber client).", tight=True)
psi_fedavg = _st(
    "psi_fedavg", r"\psi(1,k)\big|_{\Delta=0}", "==",
    delta / beta * ((beta * eta + 1) ** tau - 1) - eta * delta * tau,
    _ETA + _BETA + _DELTA + [(tau >= 1, "tau >= 1"), _integer(tau, "tau")], "Sec. III-B, after Prop. 1",
    "With no delay and alpha = 1, psi(alpha, k) is delta/beta((beta eta + 1)^tau - 1) - eta delta tau for every k "
    "(FedAvg's bound, [13, Theorem 1]).", tight=True)

# ----------------------------------------------------------------------------- Lemmas 3-5
_LHS3 = r"\|\mathbf w_i(k\tau-\Delta)-\mathbf w(k\tau-\Delta)\|"
_L3BASE = _ETA + [(L > 0, "L > 0")] + _TAU + _ALPHA
lemma3 = _st("lemma3", _LHS3, "<=", eps_fn(k, alpha, eta, L, tau, Delta),
             _L3BASE + _BETA + _ETA2 + [(k >= 1, "k >= 1 (k in {1..K})"), _integer(k, "k")], "(23)-(24)",
             "Lemma 3: the local models stay within eps^(k) of their average at the send times. Tight: supremum 1 as "
             "rho_i -> 0 (the corrected form's equality instance, where the ratio is 1 - rho_i).", tight=True)
_RHO = [(rho_i > 0, "rho_i > 0"), (rho_i <= 1, "rho_i <= 1")]
lemma3_corrected = _st(
    "lemma3_corrected", _LHS3, "<=", (1 - rho_i) * eps_fn(k, alpha, eta, L, tau, Delta), _L3BASE + _RHO + _k0,
    "(45)-(46)", "Lemma 3 as proven: per-device factor (1 - rho_i), any eta > 0, k = 0..K. Tight: equality for two "
    "clients with opposite constant gradients one local step before the send time.",
    status="corrected", corrects="lemma3", tight=True,
    reason="only Lemma 2 is used (no eta < 2/beta); (45) carries (1 - rho_i), dropped afterwards")
lemma3_delta0 = _st(
    "lemma3_delta0", _LHS3 + r"\big|_{\Delta=0}", "<=", (1 - alpha) * (1 - rho_i) * eps_fn(k, alpha, eta, L, tau, 0),
    _ETA + [(L > 0, "L > 0")] + [(tau >= 1, "tau >= 1"), _integer(tau, "tau")] + _ALPHA + _RHO + _k0
    + [(k <= K - 1, "k <= K-1 (w(T) follows no sync: at k = K only (1 - rho_i) eps^(K) holds)")],
    "(46), Delta = 0", "With Delta = 0 (the pre-sync convention) the post-sync local models carry an extra factor "
    "(1 - alpha). Tight: equality for two clients with opposite constant gradients (tau = 1, k = 1).",
    status="corrected", corrects="lemma3", tight=True,
    reason="the sync contracts w_i - w by (1 - alpha); our derivation: not at k = K (no sync at t = T)")

_LHS4 = r"\|\mathbf w_i(t)-\mathbf c_k(t)\|"
_L4 = (1 + eta * beta) * dist_prev + eta * delta_i
_L4C = _ETA + _BETA + [(delta_i >= 0, "delta_i >= 0"), (dist_prev >= 0, "dist_prev >= 0")]
lemma4 = _st("lemma4", _LHS4, "<=", _L4, _L4C + _ETA2, "Lemma 4",
             "Lemma 4 for t in T_k minus {k tau}. For Delta = 0 that set contains the sync (k+1) tau, "
             "where the proof's local-GD step is false.", tight=True)
lemma4_corrected = _st(
    "lemma4_corrected", _LHS4, "<=", _L4, _L4C, "Lemma 4",
    "Lemma 4 at every non-sync t of T_k, for any eta > 0 (beta-smoothness of F_i and (6) at c_k(t-1) only).",
    status="corrected", corrects="lemma4", tight=True,
    reason="the step is local GD only at non-sync times; eta < 2/beta is not used")
_L25C = _ETA + _BETA + [(delta_i >= 0, "delta_i >= 0"), (s >= 0, "t - k tau >= 0"), _integer(s, "t - k tau"),
                        (s <= tau, "t <= (k+1) tau"), (tau >= 1, "tau >= 1")] + _ALPHA
lemma4_no_delay = _st(
    "lemma4_no_delay", _LHS4 + r"\big|_{\Delta=0}", "<=", growth_fn(s, eta, beta, delta_i), _L25C, "(25)",
    "Lemma 4's no-delay form (25), claimed for Delta = 0 ('same as [13, Lemma 3]'), t in [k tau, (k+1) tau]. "
    "False for alpha < 1 (w_i(k tau) != c_k(k tau)).", tight=False)
lemma4_no_delay_corrected = _st(
    "lemma4_no_delay_corrected", _LHS4 + r"\big|_{\Delta=0,\alpha=1}", "<=", growth_fn(s, eta, beta, delta_i),
    _L25C + [(sp.Eq(alpha, 1), "alpha = 1 (so that w_i(k tau) = c_k(k tau))"),
             (s <= tau - 1, "t < (k+1) tau (at the sync the average replaces w_i)")], "(25)",
    "(25) holds for FedAvg (alpha = 1, Delta = 0) before the next sync. Tight: equality at t = k tau + 1 when "
    "grad F_i - grad F is constant.",
    status="corrected", corrects="lemma4_no_delay", tight=True,
    reason="needs alpha = 1 as well as Delta = 0, and the pre-sync local model at t = (k+1) tau")

_LHS5 = r"\|\mathbf w(k\tau)-\mathbf c_k(k\tau)\|"
lemma5 = _st("lemma5", _LHS5, "<=", lemma5_def_fn(*_P8k), _BASE + _ALPHA + _k0 + _ETA2, "(26)/(49)",
             "Lemma 5: the synced average vs Delta GD steps from w(k tau - Delta). Tight: equality for one client at "
             "k = 0, tau = Delta = 1 (both sides alpha eta ||grad F(w_init)||).", tight=True)
lemma5_corrected = _st("lemma5_corrected", _LHS5, "<=", lemma5_def_fn(*_P8k), _BASE + _ALPHA + _k0, "(26)/(49)",
                       "Lemma 5 for any eta > 0 (uses Lemma 2, smoothness and (6) only). Tight as lemma5.",
                       status="corrected", corrects="lemma5", tight=True,
                       reason="needs Assumption 2, not eta < 2/beta")
lemma5_intermediate = _st(
    "lemma5_intermediate", _LHS5, "<=", lemma5_48_def_fn(*_P8k),
    _BASE + _ALPHA + _k0 + _ETA2 + [(delta > 0, "delta > 0 ((48) divides by delta)")], "(47)-(48)",
    "Lemma 5's intermediate form (48); algebraically equal to (49) when delta > 0.", tight=False)

# ----------------------------------------------------------------------------- Propositions 1-2
_LHSP1 = r"\|\mathbf w((k+1)\tau-\Delta)-\mathbf c_k((k+1)\tau-\Delta)\|"
_LHSP1F = r"|F(\mathbf w((k+1)\tau-\Delta))-F(\mathbf c_k((k+1)\tau-\Delta))|"
_P1C = _BASE + _ALPHA + _k0
prop1 = _st("prop1", _LHSP1, "<=", psi_fn(*_P8k), _P1C + _ETA2, "(27)",
            "Proposition 1: the average at the next send time vs centralized GD over the period. Tight: equality "
            "for one client at k = 0, tau = Delta = 1.", tight=True)
prop1_loss = _st("prop1_loss", _LHSP1F, "<=", L * psi_fn(*_P8k), _P1C + _ETA2, "(27)",
                 "Proposition 1, loss form (F is L-Lipschitz). Tight: supremum 1 in the limit of linear clients.",
                 tight=True)
_P1R = "only Lemma 2, smoothness and (6) are used: no condition on eta"
prop1_corrected = _st("prop1_corrected", _LHSP1, "<=", psi_fn(*_P8k), _P1C, "(27)",
                      "Proposition 1 for any eta > 0. Tight as prop1.", status="corrected", corrects="prop1",
                      reason=_P1R, tight=True)
prop1_loss_corrected = _st("prop1_loss_corrected", _LHSP1F, "<=", L * psi_fn(*_P8k), _P1C, "(27)",
                           "Proposition 1 (loss form) for any eta > 0. Tight as prop1_loss.", status="corrected",
                           corrects="prop1_loss", reason=_P1R, tight=True)


def _prop2_conds(Psi_q):
    return _BASE + _ALPHA + _KPER + _ETA2 + _PHI + [
        (xi > 0, "xi > 0"),
        (T_ * eta * phi - L * Psi_q / xi ** 2 > 0, "condition 2: T eta phi - L Psi(alpha)/xi^2 > 0"),
        (Gamma_min >= xi, "conditions 3-4: every F(c_k((k+1)tau-Delta)) - F* and the final gap are >= xi"),
    ]


prop2 = _st("prop2", r"F(\mathbf w((K+1)\tau-\Delta))-F(\mathbf w^*)", "<=",
            1 / (T_ * eta * phi - L * Psi_fn(*_P8K) / xi ** 2), _prop2_conds(Psi_fn(*_P8K)), "(77)",
            "Proposition 2 as printed: periods indexed 1..K, the final model at (K+1) tau - Delta. The worst "
            "instance we derived, plain GD (alpha = 1, Delta = 0) on one Huber client, has ratio "
            "N h (2 - h)/(8 N h + 4) -> 1/4 (N = T steps, h = eta beta): not known to be tight.", tight=False)
prop2_corrected = _st(
    "prop2_corrected", r"F(\mathbf w(K\tau-\Delta))-F(\mathbf w^*)", "<=",
    1 / (T_ * eta * phi - L * Psi0_fn(*_P8K) / xi ** 2), _prop2_conds(Psi0_fn(*_P8K)), "(77)",
    "Proposition 2 with main-text indexing: periods k = 0..K-1, Psi'(alpha) = sum_{k=0}^{K-1} psi(alpha, k).",
    status="corrected", corrects="prop2", tight=False,
    reason="the appendix mixes 1-based periods with the main text's 0..K-1 and refers to times beyond "
           "the horizon; Psi' <= Psi")

# ----------------------------------------------------------------------------- steps of the proofs (App. A-G, A-H)
_GAMMA = r"\Gamma_{[k]}"
gd_inverse_gap = _st(
    "gd_inverse_gap", _GAMMA + r"(t+1)^{-1}-" + _GAMMA + r"(t)^{-1}", ">=", eta * (1 - beta * eta / 2) / dist_c ** 2,
    _ETA + _BETA + _ETA2 + [(dist_c > 0, "c_k(t) != w*")], "(81)",
    "(81) ([13, Lemma 6]): one step of the auxiliary GD c_k on convex beta-smooth F, Gamma = F(c_k) - F*, grows the "
    "inverse gap by at least eta (1 - beta eta/2)/||c_k(t) - w*||^2. Tight: supremum 1 in the limit of linear F "
    "(one pseudo-Huber client, ||c - w*||/width -> infinity, eta beta -> 0; 1 - 2e-7 at 1e7 and 1e-9), not attained.",
    tight=True)
gd_distance_max = _st(
    "gd_distance_max", r"\|\mathbf c_k(t)-\mathbf w^*\|^2", "<=", 1 / omega,
    [(omega > 0, "omega > 0 (omega = 1/max_k ||c_k(k tau - Delta) - w*||^2)")] + _ETA + _BETA + _ETA2, "(82)",
    "(82): every point of period k is within the largest start distance, ||c_k(t) - w*||^2 <= 1/omega (GD with "
    "eta < 2/beta does not move away from w*). Tight: equality at the start of the period attaining the max.",
    tight=True)
gd_period_gap = _st(
    "gd_period_gap", _GAMMA + r"((k+1)\tau-\Delta)^{-1}-" + _GAMMA + r"(k\tau-\Delta)^{-1}", ">=", tau * eta * phi,
    _ETA + _BETA + _ETA2 + [(tau >= 1, "tau >= 1")] + _PHI, "(83)-(85)",
    "(85): over a period of tau steps the auxiliary GD's inverse gap grows by at least tau eta phi. Tight: "
    "supremum 1 in the same limit as (81) (tau = 1, the period that starts farthest), not attained.", tight=True)
_XI_STAR = 1 / (2 * eta * phi * T_) + sp.sqrt(1 / (4 * eta ** 2 * phi ** 2 * T_ ** 2) + L * Psi0_fn(*_P8K) / (eta * phi * T_))
xi_star_bound = _st(
    "xi_star_bound", r"\min\{F(\mathbf w(K\tau-\Delta)),\min_{k<K}F(\mathbf c_k((k+1)\tau-\Delta))\}-F(\mathbf w^*)",
    "<=", _XI_STAR, _THM1_CONDS, "(103)-(106)",
    "(106) with the main text's indexing (periods k = 0..K-1, final model w(K tau - Delta), Psi' = sum_{k=0}^{K-1} "
    "psi(alpha, k)): Proposition 2 cannot hold with any xi > xi* (104), so the best of those points is within xi*.",
    status="corrected", corrects="theorem1",
    reason="the step of Theorem 1's proof (A-H) that the corrected bound rests on; the appendix's (106) indexes "
           "periods 1..K and ends at (K+1) tau - Delta, beyond the horizon (as Proposition 2 does)")
_LHS_SUM = r"\sum_i\rho_i\|\mathbf w_i(\ell)-\mathbf c_k(\ell)\|,\ \ell=k\tau-\Delta+j"
_J = [(j >= 0, "j >= 0"), _integer(j, "j")]
prop1_pre_sync = _st(
    "prop1_pre_sync", _LHS_SUM, "<=", X1 ** j * eps_fn(k, alpha, eta, L, tau, Delta) + delta * (X1 ** j - 1) / beta,
    _BASE + _ALPHA + _k0 + _J + [(j <= Delta - 1, "j <= Delta - 1 (before the sync k tau)")], "(66)-(67)",
    "(66)-(67), Proposition 1's recursion before the sync: from the send time k tau - Delta the devices' mean distance "
    "to the auxiliary GD grows by (1 + eta beta) and eta delta a step, starting within eps^(k) (Lemma 3). Tight "
    "(the checks' instances reach 1).", tight=True)
prop1_post_sync = _st(
    "prop1_post_sync", _LHS_SUM, "<=",
    (1 - alpha) * X1 ** j * eps_fn(k, alpha, eta, L, tau, Delta)
    + (1 - alpha) * delta * X1 ** (j - Delta) * (X1 ** Delta - 1) / beta + delta * (X1 ** (j - Delta) - 1) / beta
    + alpha * eta * Delta * L * X1 ** (j - Delta),
    _BASE + _ALPHA + _k0 + _J + [(j >= Delta, "j >= Delta (from the sync k tau on)"), (j <= tau, "j <= tau")],
    "(68)-(71)",
    "(68)-(71), Proposition 1's recursion from the sync k tau to the next send time (k+1) tau - Delta: the sync "
    "contracts the pre-sync distance by (1 - alpha) and adds alpha eta Delta L (the delayed model). Tight (the "
    "checks' instances reach 1).", tight=True)
_STEP_C = _ETA + _BETA + [(L > 0, "L > 0")] + _DELTA + [(Delta >= 0, "Delta >= 0"), _integer(Delta, "Delta"),
                                                       (G_prev >= 0, "G_prev >= 0"), (alpha_l >= 0, "alpha_l >= 0"),
                                                       (alpha_l <= 1, "alpha_l <= 1 (alpha at a sync time, else 0)")]
_STEP = (1 - alpha_l) * X1 * G_prev + (1 - alpha_l) * eta * delta + alpha_l * eta * Delta * L
prop1_step = _st(
    "prop1_step", r"\sum_i\rho_i\|\mathbf w_i(\ell)-\mathbf c_k(\ell)\|", "<=", _STEP, _STEP_C, "(63)-(65)",
    "(63)-(65), Proposition 1's one-step recursion for l in (k tau - Delta, (k+1) tau - Delta], alpha_l of (11). "
    "For Delta = 0 that range ends at the next period's sync (k+1) tau, where the average of the devices replaces "
    "w_i and the bound (1 - alpha)[...] fails (the step for the pre-sync model holds there).", tight=True)
prop1_step_corrected = _st(
    "prop1_step_corrected", r"\sum_i\rho_i\|\mathbf w_i(\ell)-\mathbf c_k(\ell)\|", "<=", _STEP, _STEP_C,
    "(63)-(65)",
    "(63)-(65) at every l of (k tau - Delta, (k+1) tau - Delta] except, for Delta = 0, the next period's sync "
    "(k+1) tau (Proposition 1's sums (72) stop at (k+1) tau - Delta - 1, so the proof never uses it). Tight: equality "
    "at the first step after the send time when the dissimilarity is constant (common Hessians).",
    status="corrected", corrects="prop1_step", tight=True,
    reason="the paper's (11) makes alpha_l = alpha at (k+1) tau when Delta = 0, a sync the recursion does not cover")
_S2 = ((1 - alpha) * X1 ** Delta * eps_fn(k, alpha, eta, L, tau, Delta) * (X1 ** (tau - Delta) - 1) / (eta * beta)
       + (1 - alpha) * (h_fn(tau, eta, beta, delta) - h_fn(Delta, eta, beta, delta)) / (eta * beta)
       + alpha * h_fn(tau - Delta, eta, beta, delta) / (eta * beta)
       + alpha * Delta * L * (X1 ** (tau - Delta) - 1) / beta)
prop1_window = _st(
    "prop1_window", r"\sum_{\ell=k\tau}^{(k+1)\tau-\Delta-1}\sum_i\rho_i\|\mathbf w_i(\ell)-\mathbf c_k(\ell)\|",
    "<=", _S2, _BASE + _ALPHA + _k0, "(72)-(75)",
    "(72)-(75), Proposition 1's sum of the distances from the sync k tau to the step before the send time "
    "(k+1) tau - Delta (the closed forms (68)-(71) summed, with h(tau) - h(Delta) - h(tau - Delta) = "
    "delta/beta (x^Delta - 1)(x^(tau - Delta) - 1)). Tight: equality at k = 0, tau = 2, Delta = 0 on two clients "
    "with a common Hessian (both sides eta delta).", tight=True)
_S1 = eps_fn(k, alpha, eta, L, tau, Delta) * (X1 ** Delta - 1) / (eta * beta) + h_fn(Delta, eta, beta, delta) / (eta * beta)
prop1_window_pre = _st(
    "prop1_window_pre", r"\sum_{\ell=k\tau-\Delta}^{k\tau-1}\sum_i\rho_i\|\mathbf w_i(\ell)-\mathbf c_k(\ell)\|",
    "<=", _S1, _BASE + _ALPHA + _k0, "(71)-(72)",
    "the unnumbered sum between (71) and (72): the distances from the send time k tau - Delta to the step before "
    "the sync, within eps^(k) (x^Delta - 1)/(eta beta) + h(Delta)/(eta beta) ((66)-(67) summed). Tight: equality at "
    "k = 0, tau = Delta = 2 on two clients with a common Hessian (both sides eta delta).", tight=True)
psi_monotone_k = _st(
    "psi_monotone_k", r"\psi(\alpha,k)", "<=", psi_fn(*_P8K), _BASE + _ALPHA + _k0 + _KPER + [(k <= K, "k <= K")],
    "(112)", "(112): psi(alpha, k) is nondecreasing in k, so psi(alpha, k) <= psi(alpha, K) for k <= K. Tight: "
             "equality at k = K and at alpha = 1 (psi constant in k).", tight=True)

STATEMENTS = [
    h, epsilon, psi, psi_inf_st, Psi,
    theorem1, theorem1_corrected, asymptotic_gap, psi_inf_delta0, delta0_alpha1_optimal,
    monotonicity_condition, psi_inf_derivative, delta_threshold_printed, delta_threshold_iff,
    alpha_star_printed, alpha_star_total,
    lemma1, lemma2, psi_fedavg,
    lemma3, lemma3_corrected, lemma3_delta0, lemma4, lemma4_corrected, lemma4_no_delay, lemma4_no_delay_corrected,
    lemma5, lemma5_corrected, lemma5_intermediate,
    prop1, prop1_loss, prop1_corrected, prop1_loss_corrected, prop2, prop2_corrected,
    gd_inverse_gap, gd_distance_max, gd_period_gap, xi_star_bound, psi_monotone_k, prop1_pre_sync, prop1_post_sync,
    prop1_step, prop1_step_corrected, prop1_window, prop1_window_pre,
]
BY_NAME = {st.name: st for st in STATEMENTS}

MEANINGS = {
    "eta": "local learning rate (step size of every client's GD step)",
    "beta": "smoothness constant of every F_i (Assumption 1); the core's QuadraticFederation.L",
    "L": "Lipschitz constant of every F_i (Assumption 1), a bound on ||grad F_i||; NOT the smoothness (that is beta)",
    "delta": "gradient dissimilarity sum_i rho_i delta_i (Assumption 2)",
    "delta_i": "client i's gradient dissimilarity sup_w ||grad F_i(w) - grad F(w)|| (Assumption 2)",
    "rho_i": "client i's weight in F = sum_i rho_i F_i",
    "tau": "period: local steps between two syncs",
    "Delta": "delay of the global model used at a sync, 0 <= Delta <= tau",
    "alpha": "weight of the (delayed) global model in the sync mix, 0 < alpha <= 1",
    "k": "period index",
    "K": "number of periods (T = K tau local steps)",
    "M": "the constant M of alpha* = sqrt(M/D) (Section III-A), not the number of clients",
    "D": "the constant D of alpha* = sqrt(M/D) (Section III-A)",
    "phi": "omega (1 - beta eta / 2), omega = 1 / max_k ||w(k tau - Delta) - w*||^2 (from a run)",
    "xi": "the constant of Proposition 2's condition (from a run)",
    "x": "the argument of h(x): a number of local steps",
    "s": "local steps since the last sync (t - k tau)",
    "dist_prev": "||w_i(t-1) - c_k(t-1)||, the previous step's distance (from a run)",
    "dist": "||w_1 - w_2||, the distance of two points before a GD step (Lemma 1)",
    "dist_c": "||c_k(t) - w*||, the auxiliary GD's distance to the optimum (from a run)",
    "omega": "1 / max_k ||c_k(k tau - Delta) - w*||^2 (App. A-G; from a run)",
    "G_prev": "sum_i rho_i ||w_i(l-1) - c_k(l-1)||, the previous step's mean distance (from a run)",
    "alpha_l": "alpha_t of (11) at t = l: alpha at a sync time, 0 otherwise",
    "j": "steps since the send time k tau - Delta (the point l = k tau - Delta + j of Proposition 1's recursion)",
    "Gamma_min": "the smallest loss gap of Proposition 2's condition (from a run)",
}


# ============================================================================= the functions
def _arr(v):
    """Lists and tuples become NumPy arrays (arrays and scalars pass through)."""
    return np.asarray(v, dtype=float) if isinstance(v, (list, tuple)) else v


def alpha_star(*, eta, beta, L, delta, tau, Delta, backend=None):
    r"""The weight minimising :math:`\psi(\alpha,\infty)` over :math:`(0,1]`, vectorised.

    Problem class / method: FedDelAvg under Assumptions 1-2 (module docstring).  Statement:
    Sec. III-A, corrected to a total function:
    :math:`\alpha^*=1` when :math:`D\le M` (:math:`\Leftrightarrow\delta\ge\delta_{th}`, always when
    :math:`\Delta=0`), else :math:`\sqrt{M/D}\in(0,1)`.  It minimises the *bound* (20) with
    :math:`\phi` held fixed; it is exact for that bound (tight), not for the algorithm (compare
    ``exact.exact_optimal_alpha``).  Computed in a form scaled by :math:`(1+\eta\beta)^{-\tau}`, so it is
    finite for any :math:`\tau`.  Arrays broadcast; NumPy in, NumPy out (CuPy likewise).

    Raises :class:`~fltheory.symbolic.ConditionError` naming the violated condition
    (``eta > 0``, ``beta > 0``, ``L > 0``, ``delta >= 0``, ``tau >= 1``, ``Delta <= tau``, integers).

    >>> round(float(alpha_star(eta=0.05, beta=4, L=2, delta=1, tau=8, Delta=8)), 12)
    0.966269120157
    >>> alpha_star(eta=0.02, beta=1, L=1, delta=[0.0, 2.0], tau=10, Delta=9).round(6).tolist()
    [0.577741, 0.624723]
    """
    kw = {n: _arr(v) for n, v in dict(eta=eta, beta=beta, L=L, delta=delta, tau=tau, Delta=Delta).items()}
    return alpha_star_total(**kw, backend=backend)


def _finite(value, what: str, allowed=None, **params):
    """``value``, checked for overflow (entries where ``allowed`` is False and the value is not finite: the
    true value is past float64's range).  Every entry overflowed (a single configuration always): an error
    naming the statement and the parameters.  Some entries of a batch: they stay inf (the true value is
    past 1.8e308, as the module's tests of the float mode state) and a RuntimeWarning says how many.  The
    exact mode (the statement's ``.evaluate`` with Fractions) has no overflow."""
    import warnings  # noqa: PLC0415

    from ... import validation as V  # noqa: PLC0415

    xp = namespace(value)
    with np.errstate(invalid="ignore"):
        bad = ~xp.isfinite(value)
        if allowed is not None:
            bad = bad & ~xp.asarray(allowed)
    if bool(xp.any(bad)):
        bad_host = to_numpy(bad)
        first = tuple(int(i) for i in np.argwhere(bad_host)[0]) if bad_host.ndim else ()

        def at_first(v):   # the parameter at the first entry that overflowed (its largest if it does not broadcast)
            a = np.asarray(to_numpy(v) if is_array(v) else v, dtype=float)
            try:
                return float(np.broadcast_to(a, bad_host.shape)[first])
            except ValueError:
                return float(np.max(a))

        shown = ", ".join(f"{k}={at_first(v):g}" for k, v in params.items())
        power = "(1 + eta beta)^tau" if "tau" in params else "(1 + eta beta)^x"
        text = f"{what} overflows the floating-point range at {shown} (a factor such as {power} is past 1e308)"
        if bool(xp.all(bad)):
            smaller = "eta or tau" if "tau" in params else " or ".join(params)
            raise V.InputError(text + f"; use smaller {smaller}, or the exact mode (the statement's .evaluate "
                               "with Fractions)")
        warnings.warn(f"{text}: {int(xp.sum(bad))} of {bad.size} entries are inf", RuntimeWarning, stacklevel=3)
    return value


def delta_threshold(*, eta, beta, L, tau, Delta, backend=None):
    r"""The dissimilarity threshold :math:`\delta_{th}`: :math:`\alpha^*=1\iff\delta\ge\delta_{th}` (Sec. III-A).

    Total: :math:`-\infty` at :math:`\Delta=0` (FedAvg is always optimal), :math:`+\infty` at
    :math:`\tau=\Delta=1` (never); finite otherwise and possibly negative or above :math:`2L`.

    >>> float(delta_threshold(eta=0.1, beta=2, L=1.5, tau=5, Delta=0))
    -inf
    """
    kw = {n: _arr(v) for n, v in dict(eta=eta, beta=beta, L=L, tau=tau, Delta=Delta).items()}
    out = delta_threshold_iff(**kw, backend=backend)
    total = (np.asarray(kw["Delta"]) == 0) | ((np.asarray(kw["tau"]) == 1) & (np.asarray(kw["Delta"]) == 1))
    return _finite(out, "delta_threshold", np.broadcast_to(total, np.shape(out)) if np.ndim(out) else bool(np.all(total)),
                   eta=eta, tau=tau, Delta=Delta)


def h_value(x, *, eta, beta, delta):
    """h(x) of (18), overflow-safe and exactly 0 at x = 0, 1.  ``h_value(2, eta=.1, beta=2, delta=1)`` = 0.02."""
    return _finite(h(x=x, eta=eta, beta=beta, delta=delta), "h_value", eta=eta, x=x)


def epsilon_value(k, *, alpha, eta, L, tau, Delta):
    """eps^(k) of (19), stable as alpha -> 0."""
    return _finite(epsilon(k=k, alpha=alpha, eta=eta, L=L, tau=tau, Delta=Delta), "epsilon_value", eta=eta, tau=tau)


def psi_value(k, *, alpha, eta, beta, L, delta, tau, Delta):
    """psi(alpha, k) of (17)."""
    return _finite(psi(k=k, alpha=alpha, eta=eta, beta=beta, L=L, delta=delta, tau=tau, Delta=Delta), "psi_value", eta=eta, tau=tau)


def psi_inf(*, alpha, eta, beta, L, delta, tau, Delta):
    """psi(alpha, inf) of (21)."""
    return _finite(psi_inf_st(alpha=alpha, eta=eta, beta=beta, L=L, delta=delta, tau=tau, Delta=Delta), "psi_inf", eta=eta, tau=tau, Delta=Delta)


def Psi_value(K, *, alpha, eta, beta, L, delta, tau, Delta):
    """Psi(alpha) = sum_{k=1}^K psi(alpha, k) of (16), summed in closed form without cancellation."""
    return _finite(Psi(K=K, alpha=alpha, eta=eta, beta=beta, L=L, delta=delta, tau=tau, Delta=Delta), "Psi_value", eta=eta, tau=tau, Delta=Delta)


_psi_main_st = _st("Psi_main", r"\Psi'(\alpha)=\sum_{k=0}^{K-1}\psi(\alpha,k)", "==", Psi0_def_fn(*_P8K),
                   _BASE + _ALPHA + _KPER, "(86)-(90)", "The main-text-indexed sum that Prop. 2's proof needs.")


def Psi_main_value(K, *, alpha, eta, beta, L, delta, tau, Delta):
    """Psi'(alpha) = sum_{k=0}^{K-1} psi(alpha, k) (main-text indexing)."""
    return _finite(_psi_main_st(K=K, alpha=alpha, eta=eta, beta=beta, L=L, delta=delta, tau=tau, Delta=Delta), "Psi_main_value", eta=eta, tau=tau, Delta=Delta)


omega = _s("omega")   # 1 / max_{k<K} ||w(k tau - Delta) - w*||^2 of a run (App. A-G (82)); only phi_value takes it
_phi_st = _st("phi_def", r"\phi", "==", omega * (1 - beta * eta / 2),
              [(omega > 0, "omega > 0")] + _ETA + _BETA + _ETA2, "(82)",
              "phi = omega (1 - beta eta / 2): Theorem 1's and (20)'s phi as a function of eta.")


def phi_value(*, omega, eta, beta):
    r"""Theorem 1's :math:`\phi=\omega(1-\beta\eta/2)` (App. A-G (82)) for each ``eta``, vectorised.

    ``theorem1``, ``theorem1_corrected``, ``prop2`` and ``asymptotic_gap`` take :math:`\phi` as a free
    symbol, but :math:`\phi` depends on :math:`\eta`: a sweep over ``eta`` that holds ``phi`` fixed
    evaluates the bound at a :math:`\phi` that belongs to one step size only.  Pass each configuration's
    own: ``phi=phi_value(omega=omega, eta=eta, beta=beta)``, or ``theorem1_rhs(..., omega=omega)``.
    :math:`\omega=1/\max_{k<K}\|w(k\tau-\Delta)-w^*\|^2` comes from the run at that same ``eta``
    (``FedDelAvgRecord.omega``; the run's ``FedDelAvgRecord.phi`` is this function of it).
    Conditions: ``omega > 0``, ``eta > 0``, ``beta > 0``, ``eta < 2/beta`` (so that :math:`\phi>0`).

    >>> phi_value(omega=2.0, eta=[0.1, 0.5, 1.0], beta=1.0).tolist()
    [1.9, 1.5, 1.0]
    """
    return _phi_st(omega=_arr(omega), eta=_arr(eta), beta=_arr(beta))


def theorem1_rhs(*, K, alpha, eta, beta, L, delta, tau, Delta, phi=None, omega=None):
    """The right-hand side of Theorem 1 (15) (conditions checked, eta < 2/beta included).

    Give ``phi``, or ``omega`` (then ``phi = phi_value(omega=omega, eta=eta, beta=beta)``, the phi of each
    ``eta``: what a sweep over ``eta`` needs), not both.
    """
    from ... import validation as V  # noqa: PLC0415

    if (phi is None) == (omega is None):
        raise V.InputError("theorem1_rhs takes phi or omega (phi = omega (1 - beta eta / 2)), exactly one of them")
    if omega is not None:
        phi = phi_value(omega=omega, eta=eta, beta=beta)
    return _finite(theorem1(K=K, alpha=alpha, eta=eta, beta=beta, L=L, delta=delta, tau=tau, Delta=Delta, phi=phi), "theorem1_rhs", eta=eta, tau=tau, Delta=Delta)


@dataclass(frozen=True)
class AlphaStar:
    """alpha* with its ingredients, all scaled by (1+eta beta)^-tau: ``D_scaled``, ``M_scaled``;
    ``delta_th`` the threshold; ``interior`` where alpha* < 1."""

    alpha: Any
    D_scaled: Any
    M_scaled: Any
    delta_th: Any
    interior: Any


def alpha_star_details(*, eta, beta, L, delta, tau, Delta) -> AlphaStar:
    """:func:`alpha_star` together with D, M (scaled by (1+eta beta)^-tau) and delta_th.

    >>> d = alpha_star_details(eta=0.02, beta=1, L=1, delta=0.5, tau=10, Delta=9)
    >>> bool(d.interior), round(float(d.M_scaled / d.D_scaled), 9) == round(float(d.alpha) ** 2, 9)
    (True, True)
    """
    a = alpha_star(eta=eta, beta=beta, L=L, delta=delta, tau=tau, Delta=Delta)
    xp = namespace(a)
    args = [xp.asarray(v, dtype=xp.float64) for v in (eta, beta, L, delta, tau, Delta)]
    with np.errstate(all="ignore"):
        Dh, Mh, _, _ = _scaled(xp, *args)
    dth = delta_threshold(eta=eta, beta=beta, L=L, tau=tau, Delta=Delta)
    return AlphaStar(a, Dh + 0 * a, Mh + 0 * a, dth, a < 1)


NUMERIC: dict[str, Callable] = {
    "h": _num_h, "eps": _num_eps, "psi": _num_psi, "psi_inf": _num_psi_inf, "Psi": _num_Psi_from(1),
    "Psi0": _num_Psi_from(0), "D": _num_D, "M": _num_M, "alpha_star": _num_alpha_star, "delta_th": _num_delta_th,
}
