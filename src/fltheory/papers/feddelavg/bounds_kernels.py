"""The named quantities of :mod:`.bounds` in C: the stable forms of their NumPy implementations, one function each,
so that a statement using them is one elementwise kernel on CuPy (:func:`fltheory._cuda_closed.statement_kernel`).

Each function is the scalar form of the array code of ``bounds.py`` (``_num_h`` is ``fdl_h``, ``_num_psi``
``fdl_psi``, ...): the same series, the same branches (a branch where the array code blends or patches), the same
order of operations, and ``0 * inf = 0`` where the array code's ``_prod`` gives it.  The text compiles for CUDA
(``FL_FN`` is ``__device__ __forceinline__``) and, with ``FL_FN`` defined as ``inline``, with the host's C++
compiler: ``tests/test_statement_kernels.py`` compares every function with its NumPy implementation there, at
ordinary and at extreme points (overflow to inf, ``eta beta`` down to 1e-300, ``alpha`` at 0+ and 1, ``K = 0``).
"""
from __future__ import annotations

from string import Template

# P(z) = sum_j z^j / (2j + 3), Horner from the highest coefficient (bounds._atanh_tail)
_ATANH = [1.0 / (2 * j + 3) for j in range(16)]


def _atanh_tail(terms: int) -> str:
    acc = f"({_ATANH[terms - 1]!r} * z + {_ATANH[terms - 2]!r})"
    for j in range(terms - 3, -1, -1):
        acc = f"({acc} * z + {_ATANH[j]!r})"
    return acc


_TEMPLATE = r"""
// t (base - 2 t^2 P(t^2)): the cancellation-free series of e^y - 1 - y (14 terms) and of log(1+u) - u (8 terms)
FL_FN double fdl_odd14(double t, double base) { const double z = t * t; return t * (base + -2.0 * (z * $P14)); }
FL_FN double fdl_odd8(double t, double base) { const double z = t * t; return t * (base + -2.0 * (z * $P8)); }
// e^y - 1 - y given E = expm1(y)
FL_FN double fdl_expm1mx(double y, double E) { return fabs(y) < 0.5 ? fdl_odd14(E / (E + 2.0), E) : E - y; }
// log(1+u) - u given lx = log1p(u)
FL_FN double fdl_log1pmx(double u, double lx) { return fabs(u) < 0.1 ? -fdl_odd8(u / (u + 2.0), u) : -(u - lx); }
// products in which a zero factor wins over an infinite one (0 * inf = 0), -0 turned into 0
FL_FN double fdl_prod2(double a, double b) {
    const double o = a * b;
    return (o != o && (a == 0.0 || b == 0.0)) ? 0.0 : o + 0.0;
}
FL_FN double fdl_prod3(double a, double b, double c) {
    const double o = a * b * c;
    return (o != o && (a == 0.0 || b == 0.0 || c == 0.0)) ? 0.0 : o + 0.0;
}
FL_FN double fdl_prod4(double a, double b, double c, double d) {
    const double o = a * b * c * d;
    return (o != o && (a == 0.0 || b == 0.0 || c == 0.0 || d == 0.0)) ? 0.0 : o + 0.0;
}
FL_FN double fdl_sign(double v) { return v != v ? v : (double)((v > 0.0) - (v < 0.0)); }
FL_FN double fdl_nanmax0(double v) { return v != v ? v : fmax(v, 0.0); }
// g = (1+u)^n - 1 - n u (exactly 0 at n = 0 and 1, sign fixed by Bernoulli) and E = (1+u)^n - 1, from
// lx = log1p(u) and lm = log1p(u) - u
FL_FN double fdl_gE(double n, double lx, double lm, double* E) {
    const double y = n * lx;
    *E = expm1(y);
    const double val = fdl_expm1mx(y, *E) + n * lm;
    const double s = fdl_sign(n * (n - 1.0));
    return s * fdl_nanmax0(s * val);
}
FL_FN double fdl_g(double n, double u) {
    const double lx = log1p(u);
    double E;
    return fdl_gE(n, lx, fdl_log1pmx(u, lx), &E);
}
FL_FN double fdl_h(double x, double eta, double beta, double delta) { return fdl_prod2(delta / beta, fdl_g(x, eta * beta)); }
// S_k(a) = sum_{j<k} (1-a)^j
FL_FN double fdl_S(double k, double a) {
    if (k == 0.0) return 0.0;
    if (a == 0.0) return k;
    return -expm1(k * log1p(-a)) / a;
}
// sum_{k=1}^{K} S_k(a)
FL_FN double fdl_SS(double K, double a) {
    if (K == 0.0) return 0.0;
    const double S = fdl_S(K, a);
    if (!(a < 0.5)) return (K - (1.0 - a) * S) / a;
    if (K * a < 1e-8) return K * (K + 1.0) / 2.0 * (1.0 - (K - 1.0) * a / 3.0);
    return S + fdl_g(K, -a) / a / a;
}
FL_FN double fdl_eps(double k, double a, double eta, double L, double tau, double D) {
    return fdl_prod2(2.0 * eta * L * (tau - a * D), fdl_S(k, a));
}
// psi(alpha, 0) (the part of psi without epsilon); A = (1 + eta beta)^tau - 1
FL_FN double fdl_psi_rest(double a, double eta, double beta, double L, double delta, double tau, double D, double* A) {
    const double u = eta * beta, lx = log1p(u), lm = fdl_log1pmx(u, lx);
    double E_rest;
    const double g_tau = fdl_gE(tau, lx, lm, A);
    const double g_rest = fdl_gE(tau - D, lx, lm, &E_rest);
    E_rest += 1.0;
    const double db = delta / beta;
    return fdl_prod3(1.0 - a, db, g_tau) + fdl_prod3(a, db, g_rest) + fdl_prod3(a, eta * D * L, E_rest);
}
FL_FN double fdl_psi(double k, double a, double eta, double beta, double L, double delta, double tau, double D) {
    double A;
    const double rest = fdl_psi_rest(a, eta, beta, L, delta, tau, D, &A);
    return fdl_prod3(1.0 - a, fdl_eps(k, a, eta, L, tau, D), A) + rest;
}
FL_FN double fdl_psi_inf(double a, double eta, double beta, double L, double delta, double tau, double D) {
    double A;
    const double rest = fdl_psi_rest(a, eta, beta, L, delta, tau, D, &A);
    return fdl_prod3(1.0 - a, 2.0 * eta * L * (tau - a * D) / a, A) + rest;
}
// Psi (first = 1: sum_{k=1}^{K} psi(alpha, k)) and Psi' (first = 0: k = 0 .. K-1)
FL_FN double fdl_Psi_from(double first, double K, double a, double eta, double beta, double L, double delta,
                          double tau, double D) {
    double A;
    const double rest = fdl_psi_rest(a, eta, beta, L, delta, tau, D, &A);
    const double ss = first == 1.0 ? fdl_SS(K, a) : fdl_SS(K - 1.0, a);
    return fdl_prod4(1.0 - a, A, 2.0 * eta * L * (tau - a * D), ss) + K * rest;
}
FL_FN double fdl_Psi(double K, double a, double eta, double beta, double L, double delta, double tau, double D) {
    return fdl_Psi_from(1.0, K, a, eta, beta, L, delta, tau, D);
}
FL_FN double fdl_Psi0(double K, double a, double eta, double beta, double L, double delta, double tau, double D) {
    return fdl_Psi_from(0.0, K, a, eta, beta, L, delta, tau, D);
}
// D, M and the numerator and denominator of delta_th, all divided by (1 + eta beta)^tau
FL_FN void fdl_scaled(double eta, double beta, double L, double delta, double tau, double D, double* Dh, double* Mh,
                      double* num, double* den) {
    const double u = eta * beta, lx = log1p(u), lm = fdl_log1pmx(u, lx);
    const double e_tau = -expm1(-tau * lx);
    const double x_mD = exp(-D * lx);
    const double x_mt = exp(-tau * lx);
    double E;
    const double gD = fdl_gE(D, lx, lm, &E);
    const double g_scaled = D * lx > 600.0 ? exp(-(tau - D) * lx) * (1.0 - (1.0 + D * u) * x_mD) : gD * x_mt;
    *den = expm1(-(tau - D) * lx) * expm1(-D * lx) + g_scaled;
    *num = D * x_mD - 2.0 * e_tau * (tau - D);
    *Mh = 2.0 * eta * L * tau * e_tau;
    *Dh = eta * L * D * (2.0 * e_tau + x_mD) - fdl_prod2(delta / beta, *den);
}
FL_FN double fdl_pw(double n, double u) { return exp(n * log1p(u)); }
FL_FN double fdl_D(double eta, double beta, double L, double delta, double tau, double D) {
    double Dh, Mh, num, den;
    fdl_scaled(eta, beta, L, delta, tau, D, &Dh, &Mh, &num, &den);
    return fdl_prod2(Dh, fdl_pw(tau, eta * beta));
}
FL_FN double fdl_M(double eta, double beta, double L, double tau) {
    return 2.0 * eta * L * tau * expm1(tau * log1p(eta * beta));
}
FL_FN double fdl_dpsi(double a, double eta, double beta, double L, double delta, double tau, double D) {
    double Dh, Mh, num, den;
    fdl_scaled(eta, beta, L, delta, tau, D, &Dh, &Mh, &num, &den);
    return fdl_prod2(Dh - Mh / (a * a), fdl_pw(tau, eta * beta));
}
FL_FN double fdl_alpha_star(double eta, double beta, double L, double delta, double tau, double D) {
    double Dh, Mh, num, den;
    fdl_scaled(eta, beta, L, delta, tau, D, &Dh, &Mh, &num, &den);
    return Dh <= Mh ? 1.0 : sqrt(Mh / Dh);
}
FL_FN double fdl_alpha_closed(double eta, double beta, double L, double delta, double tau, double D) {
    double Dh, Mh, num, den;
    fdl_scaled(eta, beta, L, delta, tau, D, &Dh, &Mh, &num, &den);
    return sqrt(Mh / Dh);
}
FL_FN double fdl_delta_th(double eta, double beta, double L, double tau, double D) {
    double Dh, Mh, num, den;
    fdl_scaled(eta, beta, L, 0.0 * eta, tau, D, &Dh, &Mh, &num, &den);
    return den > 0.0 ? eta * beta * L * num / den : (num < 0.0 ? -FL_INF : FL_INF);
}
FL_FN double fdl_psi_inf_delta0(double a, double eta, double beta, double L, double delta, double tau) {
    const double A = expm1(tau * log1p(eta * beta));
    return fdl_h(tau, eta, beta, delta) + fdl_prod3(1.0 / a - 1.0, 2.0 * eta * L * tau, A);
}
FL_FN double fdl_growth(double s, double eta, double beta, double d) {
    return fdl_prod2(d / beta, expm1(s * log1p(eta * beta)));
}
FL_FN double fdl_lemma5(double k, double a, double eta, double beta, double L, double delta, double tau, double D) {
    const double xD1 = expm1(D * log1p(eta * beta));
    const double local = fdl_prod2(xD1, fdl_eps(k, a, eta, L, tau, D)) + fdl_h(D, eta, beta, delta);
    return a * D * L * eta + fdl_prod2(1.0 - a, local);
}
FL_FN double fdl_lemma5_48(double k, double a, double eta, double beta, double L, double delta, double tau, double D) {
    const double e = fdl_eps(k, a, eta, L, tau, D);
    const double hD = fdl_h(D, eta, beta, delta);
    return eta * D * (a * L + fdl_prod2(1.0 - a, beta * e)) + fdl_prod3(1.0 - a, beta * e / delta + 1.0, hD);
}
"""

C_SOURCE = Template(_TEMPLATE).substitute(P14=_atanh_tail(14), P8=_atanh_tail(8))
"""The C functions (``FL_FN``, ``FL_INF`` from :func:`fltheory._cuda_closed.statement_preamble`)."""

# the C function of each named quantity of bounds.py (class name without ``_fn``)
C_NAMES = {name: f"fdl_{name}" for name in ("h", "eps", "psi", "psi_inf", "Psi", "Psi0", "D", "M", "dpsi",
                                             "alpha_star", "alpha_closed", "delta_th", "psi_inf_delta0", "growth",
                                             "lemma5", "lemma5_48")}
