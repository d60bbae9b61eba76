r"""Derive the corrected decaying-server-LR result of the local adaptivity paper, Appendix C (the printed beta is too small).

Setting: client SGD, common eta, tau, mu, L, w_i = 1/M, so (67) reads
r_{t+1} <= (1 - alpha_t a) r_t + alpha_t^2 C,  a = 1 - (1 - eta mu)^{2 tau},  C = sigma^2 eta^2 tau / M,
valid for 0 < alpha_t <= 1 (step (56)).  With alpha_t = 2/(a(t + beta)):

* the paper's claim (68) r_T <= 4C/(a^2 (T + beta)) with 0 < beta <= 4 sigma^2 eta^2 tau/(a^2 r_0) is FALSE:
  alpha_0 = 2/(a beta) is then huge (> 1), outside (61) -- exact counterexample below;
* corrected: beta >= 2/a (so alpha_t <= 1 for all t >= 0) and nu = max{4C/a^2, beta r_0} give
  r_t <= nu/(t + beta) for all t >= 0 (induction derived symbolically below, and checked on exact
  second moments of 1-d quadratics for t <= 10^4).

Run as a script or under pytest.
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from fltheory.papers.local_adaptivity import bounds as B
from fltheory.symbolic import ConditionError

R = sp.Rational


def test_induction_step():
    """nu/(s+1) - [(1 - 2/s) nu/s + 4C/(a^2 s^2)] = nu/(s^2 (s+1)) + (nu - 4C/a^2)/s^2 >= 0."""
    s, nu, C, a = sp.symbols("s nu C a", positive=True)
    alpha = 2 / (a * s)                                   # s = t + beta
    rhs_61 = (1 - alpha * a) * nu / s + alpha ** 2 * C     # (61) with the induction hypothesis r_t <= nu/s
    gap = nu / (s + 1) - rhs_61
    assert sp.simplify(gap - (nu / (s ** 2 * (s + 1)) + (nu - 4 * C / a ** 2) / s ** 2)) == 0
    # the hypothesis may be substituted into (61) only if the coefficient 1 - alpha a = 1 - 2/s is >= 0,
    # and (61) itself needs alpha <= 1: both hold for every t >= 0 iff beta >= 2/a (a <= 1 => s >= 2)
    assert sp.simplify((1 - alpha * a) - (1 - 2 / s)) == 0
    beta, t = sp.symbols("beta t", nonnegative=True)
    assert sp.solve(sp.Eq(2 / (a * (0 + beta)), 1), beta) == [2 / a]      # alpha_0 <= 1 <=> beta >= 2/a


def test_base_case_and_incompatibility():
    a, C, r0, beta = sp.symbols("a C r0 beta", positive=True)
    nu = sp.Max(4 * C / a ** 2, beta * r0)
    # base case r_0 <= nu/beta: nu/beta - r_0 = max{4C/(a^2 beta) - r_0, 0}
    rng = np.random.default_rng(0)
    for vals in rng.integers(1, 1000, (50, 4)):
        sub = dict(zip((a, C, r0, beta), (R(int(v), 100) for v in vals)))
        gap = (nu / beta - r0).subs(sub)
        assert gap == sp.Max(4 * C / (a ** 2 * beta) - r0, 0).subs(sub) and gap >= 0
    # paper: beta <= 4 C'/(a^2 r0) (C' = sigma^2 eta^2 tau, no 1/M); with beta >= 2/a both hold iff
    # 2/a <= 4C'/(a^2 r0) iff r0 <= 2C'/a: a small-initial-error special case only
    Cp = sp.Symbol("Cp", positive=True)
    room = 4 * Cp / (a ** 2 * r0) - 2 / a                   # width of the admissible beta interval
    assert sp.simplify(room - 2 * (2 * Cp - a * r0) / (a ** 2 * r0)) == 0   # >= 0 iff r0 <= 2C'/a


def exact_r1_one_dimensional(*, mu, eta, tau, M, sigma2, r0, beta):
    """Exact E||x^(1) - x~||^2 for M identical 1-d quadratic clients (x_i* = x~ = 0), additive gradient
    noise of variance sigma2, x^(0) deterministic with (x^(0))^2 = r0, server LR alpha_0 = 2/(a beta)."""
    a = 1 - (1 - eta * mu) ** (2 * tau)
    alpha0 = 2 / (a * beta)
    K = (1 - eta * mu) ** tau
    var_client = eta ** 2 * sigma2 * sum((1 - eta * mu) ** (2 * j) for j in range(tau))
    return alpha0, (1 - alpha0 * (1 - K)) ** 2 * r0 + alpha0 ** 2 * var_client / M


def test_negative_control_printed_beta():
    mu, eta, tau, M, sigma2, r0 = 1, R(1, 10), 2, 2, R(1, 100), 1
    a = 1 - (1 - eta * mu) ** (2 * tau)
    beta = 4 * sigma2 * eta ** 2 * tau / (a ** 2 * r0)          # the paper's largest admissible beta
    alpha0, r1 = exact_r1_one_dimensional(mu=mu, eta=eta, tau=tau, M=M, sigma2=sigma2, r0=r0, beta=beta)
    claimed = B.sgd_decaying_printed.evaluate(sigma2=sigma2, eta=eta, tau=tau, M=M, mu=mu, L=mu, T=1, beta=beta,
                                              r0=r0)
    assert abs(float(beta) - 0.0067643) < 1e-7
    assert abs(float(alpha0) - 859.75) < 1e-9
    assert abs(float(r1) - 26425.2291469) < 1e-6
    assert abs(float(claimed) - 0.0033594) < 1e-7
    assert r1 > claimed                                          # (68) is violated at T = 1
    # the corrected statement rejects this beta (alpha_0 > 1) ...
    try:
        B.sgd_decaying_corrected.evaluate(sigma2=sigma2, eta=eta, tau=tau, M=M, mu=mu, L=mu, T=1, beta=beta, r0=r0)
    except ConditionError as exc:
        assert "beta >= 2/a" in str(exc)
    else:
        raise AssertionError("the corrected statement must refuse beta < 2/a")
    # ... and holds with beta = 2/a
    beta_ok = 2 / a
    alpha0, r1 = exact_r1_one_dimensional(mu=mu, eta=eta, tau=tau, M=M, sigma2=sigma2, r0=r0, beta=beta_ok)
    assert alpha0 == 1
    bound = B.sgd_decaying_corrected.evaluate(sigma2=sigma2, eta=eta, tau=tau, M=M, mu=mu, L=mu, T=1,
                                              beta=beta_ok, r0=r0)
    assert r1 <= bound


def test_corrected_holds_on_exact_moments():
    """r_t <= nu/(t+beta) for t <= 10^4 on exact moments of heterogeneous 1-d quadratic federations.

    Clients share mu (the worst direction of Prop. B.2, where h_sgd is tight) but have different optima,
    so x~ = mean of x_i*; the deviation m_t - x~ contracts by 1 - alpha_t (1 - K) and the variance obeys
    v_{t+1} = (1 - alpha_t(1-K))^2 v_t + alpha_t^2 sum_i w_i^2 Var_i.
    """
    rng = np.random.default_rng(5)
    n = 64
    mu = rng.uniform(0.1, 2.0, n)
    L = mu * rng.uniform(1.0, 5.0, n)
    eta = rng.uniform(0.05, 1.0, n) * 2 / (mu + L)
    tau = rng.integers(1, 8, n).astype(float)
    M = rng.integers(1, 6, n).astype(float)
    sigma2 = rng.uniform(0, 1, n)
    r0 = rng.uniform(0, 100, n)
    a = 1 - (1 - eta * mu) ** (2 * tau)
    beta = 2 / a * rng.uniform(1.0, 4.0, n)
    K = (1 - eta * mu) ** tau
    var = eta ** 2 * sigma2 * (1 - (1 - eta * mu) ** (2 * tau)) / (1 - (1 - eta * mu) ** 2)
    dev2, v = r0.copy(), np.zeros(n)                   # x^(0) deterministic: ||m_0 - x~||^2 = r0
    T = 10_000
    ts = np.arange(T + 1, dtype=float)
    bound = B.sgd_decaying_corrected(sigma2=sigma2[:, None], eta=eta[:, None], tau=tau[:, None], M=M[:, None],
                                     mu=mu[:, None], L=L[:, None], T=ts[None, :], beta=beta[:, None],
                                     r0=r0[:, None])
    worst = 0.0
    for t in range(T + 1):
        r = dev2 + v
        worst = max(worst, float(np.max(r / bound[:, t])))
        alpha = 2 / (a * (t + beta))
        c = (1 - alpha * (1 - K)) ** 2
        dev2, v = c * dev2, c * v + alpha ** 2 * var / M
    assert worst <= 1 + 1e-12, worst
    assert worst > 0.5                                  # not vacuous


def test_85_and_77_corrections_follow():
    """4C/a^2 = sigma^2 z(eta mu)^2/(mu^2 M tau) <= 9 sigma^2/(mu^2 M tau) when eta mu tau <= 1, and for
    tau = 1, 4C/a^2 = 4 sigma^2/(mu^2 M (2 - eta mu)^2) <= 4 sigma^2/(mu^2 M) when eta mu <= 1."""
    eta, mu, tau, M, s2 = sp.symbols("eta mu tau M sigma2", positive=True)
    a = 1 - (1 - eta * mu) ** (2 * tau)
    C = s2 * eta ** 2 * tau / M
    zz = B.z_expr.subs({sp.Symbol("x", real=True): eta * mu, sp.Symbol("tau", real=True): tau})
    assert sp.simplify(4 * C / a ** 2 - s2 * zz ** 2 / (mu ** 2 * M * tau)) == 0
    assert sp.simplify((4 * C / a ** 2).subs(tau, 1) - 4 * s2 / (mu ** 2 * M * (2 - eta * mu) ** 2)) == 0
    zmax = (2 / (1 - sp.exp(-2))) ** 2
    assert zmax < 9 and abs(float(zmax) - 5.3500) < 1e-3
    # numerically: the corrected (85) and (77) dominate the corrected (68) on a grid inside the conditions
    rng = np.random.default_rng(1)
    n = 500
    tau_v = rng.integers(1, 50, n).astype(float)
    mu_v = rng.uniform(0.1, 3, n)
    eta_v = rng.uniform(0.01, 1, n) / (mu_v * tau_v)
    L_v = mu_v + rng.uniform(0, 1, n) * (2 / eta_v - 2 * mu_v).clip(0)
    args = dict(sigma2=rng.uniform(0, 1, n), eta=eta_v, tau=tau_v, M=rng.integers(1, 9, n).astype(float), mu=mu_v,
                L=L_v, T=rng.integers(0, 100, n).astype(float), r0=rng.uniform(0, 1, n))
    a_v = 1 - (1 - eta_v * mu_v) ** (2 * tau_v)
    args["beta"] = 2 / a_v * rng.uniform(1, 2, n)
    assert np.all(B.sgd_decaying_corrected(**args) <= B.sgd_decaying_85_corrected(**args) * (1 + 1e-12))


if __name__ == "__main__":
    from _runner import run_tests

    run_tests(globals())
