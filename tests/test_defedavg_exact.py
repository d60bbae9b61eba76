"""Exact DeFedAvg moments, the assumption constants along a run, and the measured linear speedup;
Theorems 1 and 2 on hypothesis-generated instances inside their assumptions, against exact expectations."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fltheory.papers.defedavg import bounds as B
from fltheory.papers.defedavg import checks as C
from fltheory.papers.defedavg import events as E
from fltheory.papers.defedavg import exact as X
from conftest import on_backend, to_np

reals = lambda lo, hi: st.floats(lo, hi, allow_nan=False, allow_infinity=False)  # noqa: E731


@st.composite
def iid_params(draw, rates="prescribed", delay=None):
    d = draw(st.integers(1, 3))
    L = draw(reals(0.1, 10.0))
    N = draw(st.integers(1, 6))
    return dict(a=[L] + [L * draw(reals(0.05, 1.0)) for _ in range(d - 1)], N=N, n=draw(st.integers(1, N)),
                K=draw(st.integers(1, 5)), lam=draw(st.integers(1, 3)),
                delay=delay or draw(st.sampled_from(C.IID_DELAYS)), T=draw(st.integers(10, 120)),
                sigma2_factor=draw(reals(1.0, 1e3)), phi_frac=draw(reals(1e-3, 1.0)),
                direction=[draw(reals(-1, 1)) for _ in range(d - 1)] + [1.0], rates=rates,
                u_bar=draw(reals(0.05, 1.0)), u_prod=draw(reals(0.05, 1.0)), seed=draw(st.integers(0, 2**20)))


@settings(max_examples=15)
@given(p=iid_params())
def test_corrected_theorem2_holds_exactly(p):
    s = C.theorem2_sample(p, B.theorem2_corrected)
    assert s.value <= s.bound


@settings(max_examples=15)
@given(p=iid_params(rates="any"))
def test_theorem2_general_holds_for_any_rates_in_13(p):
    s = C.theorem2_sample(p, B.theorem2_general)
    assert s.value <= s.bound


@settings(max_examples=10)
@given(p=iid_params(rates="any", delay="constant"))
def test_descent_47_holds_every_round(p):
    value, bound = C._round_sides("descent_iid", C._lemma_terms(p))
    assert np.all(bound >= 0) and np.all(value <= bound * (1 + 1e-12) + 1e-15)


def test_printed_theorem2_counterexample_reproduces():
    p = C.counterexample_params()
    s = C.theorem2_sample(p, B.theorem2)
    assert s.params["Phi0"] == pytest.approx(4.0) and s.params["sigma2"] == pytest.approx(1e4)
    assert s.params["lam"] == 1 and B.T_min(n=1, K=5, lam=1, L=1.0, sigma2=1e4, Phi0=4.0) < 400
    assert s.value == pytest.approx(5.2284, abs=1e-4) and s.bound == pytest.approx(0.50996, abs=1e-5)
    assert C.theorem2_sample(p, B.theorem2_corrected).bound == pytest.approx(50.600, abs=1e-3)


@st.composite
def niid_params(draw, rates="prescribed"):
    d = draw(st.integers(1, 2))
    L = draw(reals(0.2, 5.0))
    N = draw(st.integers(1, 4))
    scale = draw(reals(0.05, 2.0))
    return dict(a=[L] + [L * draw(reals(0.05, 1.0)) for _ in range(d - 1)],
                b=[[scale * draw(reals(-2, 2)) for _ in range(d)] for _ in range(N)], N=N,
                n=draw(st.integers(1, N)), K=draw(st.integers(1, 4)), lam=draw(st.integers(1, 3)),
                lam_used=None, T=draw(st.integers(10, 60)), sigma2=draw(reals(0.1, 100.0)),
                phi_frac=draw(reals(1e-2, 1.0)), direction=[draw(reals(-1, 1)) for _ in range(d - 1)] + [1.0],
                rates=rates, u1=draw(reals(0.05, 1.0)), u2=draw(reals(0.05, 1.0)), seed=0)


@settings(max_examples=10)
@given(p=niid_params())
def test_theorem1_and_its_exact_constant_hold(p):
    for st_ in (B.theorem1, B.theorem1_corrected):
        s = C._theorem1_sample(p, st_)
        assert s.value <= s.bound
        assert s.params["G2_run"] <= s.params["G2"]           # the instance is inside Assumption 6


@settings(max_examples=8)
@given(p=niid_params(rates="any"))
def test_theorem1_general_holds_for_any_rates_in_11(p):
    s = C._theorem1_sample(p, B.theorem1_general)
    assert s.value <= s.bound


def test_assumption_constants_against_monte_carlo_local_runs():
    fed = X.niid_federation(a=[1.0, 0.4], b=[[1.0, 0.0], [-1.0, 1.0]], sigma2=0.5)
    m = X.niid_moments(fed, n=1, T=3, K=3, eta=1.0, eta_bar=0.2, x0=np.array([2.0, 1.0]), lam=1, record_cov=True)
    c = X.assumption_constants(fed, m, K=3, eta_bar=0.2)
    # Monte Carlo of the local runs from w^0 (deterministic): E||grad F_i(w_i^{0,k})||^2, k < 3
    rng = np.random.default_rng(0)
    R = 200000
    H = np.diag([1.0, 0.4])
    best = 0.0
    for i, b in enumerate(np.asarray(fed.x_opt)):
        w = np.tile([2.0, 1.0], (R, 1))
        for k in range(3):
            g = (w - b) @ H
            best = max(best, float((g * g).sum(axis=1).mean()))
            w = w - 0.2 * (g + rng.normal(scale=np.sqrt(0.25), size=(R, 2)))
    assert best <= c.G2 * (1 + 1e-2)
    assert c.nu2 == pytest.approx(max(np.sum((H @ (b - np.asarray(fed.x_opt).mean(0))) ** 2) for b in np.asarray(fed.x_opt)))
    assert c.sigma2 == pytest.approx(0.5) and c.L == pytest.approx(1.0)


def test_linear_speedup_measured():
    r = X.linear_speedup(a=[1.0, 0.7], sigma2=100.0, ns=[2, 4, 8], K=2, lam=2, epsilon=1.0, x0=[1.0, 1.0])
    assert -1.1 <= r.slope_measured <= -0.9 and -1.0 <= r.slope_theory <= -0.95
    assert np.all(r.measured <= r.theory)                    # the corrected bound is an upper bound


def test_constant_delay_exact_matches_companion_recursion(xp):
    # one client, K = 1, constant delay D: x_{t+1} = x_t - eta eta_bar a x_{t-D} (+ noise) per coordinate
    a, D, T, g = 0.8, 2, 30, 0.3
    fed = on_backend(X.iid_federation(a=[a], N=1, sigma2=0.0), xp)
    m = X.moments(fed, E.iid_oracle(N=1, n=1, T=T, delay="constant", lam=D), K=1, eta=1.0, eta_bar=g,
                  x0=xp.ones(1, dtype=xp.float64))
    x = [1.0]
    for t in range(T):
        x.append(x[-1] - g * a * x[max(0, t - D)])
    assert np.allclose(to_np(m.grad_sq)[:, 0], (a * np.array(x)) ** 2, rtol=1e-12, atol=1e-15)


def test_lemma_quantities_against_monte_carlo():
    p = dict(a=[1.0, 0.4], N=3, n=2, K=3, lam=2, delay="constant", T=12, sigma2_factor=20.0, phi_frac=0.5,
             direction=[1.0, -0.5], rates="any", u_bar=0.9, u_prod=0.9, seed=2)        # delay D = 2 % 3 = 2
    lt = C._lemma_terms(p)
    fed, sched, c, x0 = C._iid_instance(p)
    R = 20000
    from fltheory.papers.defedavg import algorithm as A

    w = A.defedavg(fed, sched.take([0] * R), K=c["K"], eta=c["eta"], eta_bar=c["eta_bar"], x0=x0, seed=9).w
    a = np.asarray(p["a"])
    T, D = p["T"], 2
    tau = np.maximum(0, np.arange(T) - D)
    g = (w[:-1] - w[1:]) / c["eta"]                                   # the aggregate g^t of every round
    se = lambda v: 5 * v.std(axis=1) / np.sqrt(R) + 1e-12  # noqa: E731
    gsq = (g * g).sum(-1)
    assert np.all(np.abs(gsq.mean(1) - lt["g_sq"]) <= se(gsq))
    stale = ((w[:-1] - w[tau]) ** 2).sum(-1)
    assert np.all(np.abs(stale.mean(1) - lt["stale_sq"]) <= se(stale))
    # drift: K local steps from the simulated anchors, fresh noise
    rng = np.random.default_rng(1)
    for t in (0, 5, 11):
        y, acc = w[tau[t]].copy(), np.zeros(R)
        for k in range(p["K"]):
            acc += ((y - w[tau[t]]) ** 2).sum(-1)
            y = y - c["eta_bar"] * (a * y + rng.normal(scale=np.sqrt(c["sigma2"] / 2), size=y.shape))
        assert abs(acc.mean() - lt["drift"][t]) <= 5 * acc.std() / np.sqrt(R) + 1e-12


def test_lemma6_inner_product_against_monte_carlo():
    p = dict(a=[0.8, 0.8], N=2, n=1, K=2, lam=1, delay="constant", T=10, sigma2_factor=30.0, phi_frac=0.7,
             direction=[1.0, 0.3], rates="any", u_bar=0.8, u_prod=0.8, seed=1)        # delay D = 1
    lt = C._lemma_terms(p)
    fed, sched, c, x0 = C._iid_instance(p)
    from fltheory.papers.defedavg import algorithm as A

    R = 20000
    w = A.defedavg(fed, sched.take([0] * R), K=c["K"], eta=c["eta"], eta_bar=c["eta_bar"], x0=x0, seed=3).w
    g = (w[:-1] - w[1:]) / c["eta"]
    grad = 0.8 * w[:-1]
    inner = (grad * (c["eta_bar"] * c["K"] * grad - g)).sum(-1)
    assert np.all(np.abs(inner.mean(1) - lt["inner"]) <= 5 * inner.std(1) / np.sqrt(R) + 1e-12)


@settings(max_examples=10)
@given(p=iid_params(rates="any", delay="constant"), name=st.sampled_from(["lemma6", "lemma8", "lemma10"]))
def test_iid_lemmas_hold_every_round(p, name):
    if name == "lemma6":
        p["a"] = [p["a"][0]] * len(p["a"])
    lt = C._lemma_terms(p)
    value, bound = C._round_sides(name, lt)
    scale = 1.0 + lt["c"]["eta_bar"] * lt["c"]["K"] * lt["grad_sq"] + np.abs(bound)   # round-off where tight (K = 1)
    assert np.all(value <= bound + 1e-12 * scale)


@settings(max_examples=10)
@given(p=iid_params(rates="lemma9", delay="constant"))
def test_lemma9_holds_near_its_printed_boundary(p):
    lt = C._lemma_terms(p)
    c = lt["c"]
    bound = np.asarray(B.lemma9(K=c["K"], L=c["L"], sigma2=c["sigma2"], eta_bar=c["eta_bar"], grad_sq=lt["grad_sq"],
                                stale_sq=lt["stale_sq"]))
    assert np.all(lt["drift"] <= bound * (1 + 1e-12))


def test_niid_lemma_quantities_against_monte_carlo():
    p = dict(a=[0.9, 0.9], b=[[1.0, 0.0], [-1.0, 0.5], [0.2, -1.5]], N=3, n=2, K=2, lam=2, lam_used=None, T=8,
             sigma2=0.5, phi_frac=0.5, direction=[1.0, 0.4], rates="any", u1=0.8, u2=0.8, seed=0)
    lt = C._niid_lemma_terms(p)
    c = lt["c"]
    from fltheory.papers.defedavg import algorithm as A

    fed = X.niid_federation(a=p["a"], b=p["b"], sigma2=p["sigma2"])
    _, _, m = C._niid_instance(p)
    x0 = np.asarray(m.mean)[0]
    R = 40000
    s = E.niid_oracle(N=3, n=2, T=p["T"], seeds=np.arange(R), delay="uniform", lam=p["lam"])
    w = A.defedavg(fed, s, K=c["K"], eta=c["eta"], eta_bar=c["eta_bar"], x0=x0, seed=4).w      # (T+1, R, d)
    xs = np.asarray(fed.x_star)
    y = w - xs
    g = (w[:-1] - w[1:]) / c["eta"]
    close = lambda v, ref: np.all(np.abs(v.mean(1) - ref) <= 5 * v.std(1) / np.sqrt(R) + 1e-12)  # noqa: E731
    assert close((g * g).sum(-1), lt["g_sq"])
    T, lam = p["T"], p["lam"]
    stale = np.stack([np.mean([((w[t] - w[max(0, t - l)]) ** 2).sum(-1) for l in range(lam + 1)], axis=0)
                      for t in range(T)])
    assert close(stale, lt["stale_sq"])
    grad = 0.9 * y[:-1]
    inner = (grad * (c["eta_bar"] * c["K"] * grad - g)).sum(-1)
    assert close(inner, lt["inner"])
    # Y^t: every client's (virtual) run from an i.i.d. uniformly stale anchor, fresh noise
    rng = np.random.default_rng(5)
    b = np.asarray(p["b"])
    for t in (0, 4, 7):
        acc, drift = np.zeros((R, 2)), np.zeros(R)
        for i in range(3):
            anchor = w[np.maximum(0, t - rng.integers(0, lam + 1, size=R)), np.arange(R)]
            z = anchor.copy()
            for k in range(c["K"]):
                G = 0.9 * (z - b[i])
                acc += G / 3
                drift += ((z - anchor) ** 2).sum(-1) / 3
                z = z - c["eta_bar"] * (G + rng.normal(scale=np.sqrt(p["sigma2"] / 2), size=z.shape))
        Ymc = (acc * acc).sum(-1)
        assert abs(Ymc.mean() - lt["Y_t"][t]) <= 5 * Ymc.std() / np.sqrt(R)
        assert abs(drift.mean() - lt["drift"][t]) <= 5 * drift.std() / np.sqrt(R) + 1e-12


@settings(max_examples=8)
@given(p=niid_params(rates="any"), name=st.sampled_from(["lemma1", "lemma3", "lemma4", "lemma5", "descent_niid"]))
def test_niid_lemmas_hold_every_round(p, name):
    p["a"] = [p["a"][0]] * len(p["a"])
    lt = C._niid_lemma_terms(p)
    value, bound = C._round_sides(name, lt)
    scale = 1.0 + lt["c"]["eta_bar"] * lt["c"]["K"] * lt["grad_sq"] + np.abs(bound)
    assert np.all(value <= bound + 1e-12 * scale)
