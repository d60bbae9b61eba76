"""Statements of the local adaptivity paper: rendering, exact values, conditions, vectorised mode,
and the bounds against exact quantities on quadratics (h_sgd, q_sgd, recursion (61), the decaying-rate condition beta >= 2/a)."""
import itertools
import re

import numpy as np
import pytest
import sympy as sp
from hypothesis import assume, given
from hypothesis import strategies as st

from fltheory.backend import to_numpy
from fltheory.papers.local_adaptivity import bounds as B
from fltheory.symbolic import ConditionError

R = sp.Rational


# ------------------------------------------------------------------------------------------ rendering
@pytest.mark.parametrize("stmt", B.STATEMENTS, ids=lambda s: s.name)
def test_latex_renders_and_metadata(stmt):
    tex = stmt.latex()
    assert stmt.lhs in tex and ("\\le" in tex or "\\ge" in tex or "=" in tex)
    assert "hbar" not in tex and "sigma2" not in tex          # symbol names mapped to LaTeX
    assert stmt.paper == "local_adaptivity" and stmt.equation and stmt.title
    if stmt.status == "corrected":
        assert stmt.reason
    if stmt.corrects:
        assert stmt.corrects in {s.name for s in B.STATEMENTS}


def test_statement_names_unique_and_in_order():
    names = [s.name for s in B.STATEMENTS]
    assert len(names) == len(set(names))
    assert names.index("theorem1_printed") < names.index("theorem2_fixed_point") < names.index("theorem3_general")


# ------------------------------------------------------------------------------------------ exact values
def test_z_values():
    assert B.z_max.evaluate(x=1, tau=1) == 2                            # z(1) = 2 for tau = 1
    assert B.z_max.evaluate(x=R(1, 2), tau=2) == R(32, 15)              # z(1/2) with tau = 2
    assert B.z_max.evaluate(x=R(1, 3), tau=3) == R(1458, 665)
    for tau in (1, 2, 3, 10, 1000):
        z_at = float(B.z_function(1.0 / tau, tau=tau))
        assert z_at == pytest.approx(float(B.z_max.evaluate(x=R(1, tau), tau=tau)), rel=1e-12)
        assert z_at <= float(B.z_uniform.evaluate(x=R(1, tau), tau=tau)) < 3
    assert float(B.z_function(1e-9, tau=7)) == pytest.approx(1.0, abs=1e-7)     # z(0+) = 1
    xs = np.linspace(1e-3, 1, 400)
    assert np.all(np.diff(B.z_function(xs, tau=5)) > 0)                          # (79)-(83): increasing


def test_theorem3_constants_of_129():
    D, L, Lam, G, T = 2, 3, 2, R(1, 2), 1000                          # interior: Lambda G^2 T >= D L
    X = (R(D) ** 2 * L ** 2 * Lam * G ** 2) ** R(1, 3) / R(T) ** R(2, 3)
    assert sp.simplify(B.theorem3_corrected.evaluate(D=D, L=L, Lambda=Lam, G=G, T=T) - (2 * R(D * L, T) + 3 * X)) == 0
    at130 = B.theorem3_128_at_130.evaluate(D=D, L=L, Lambda=Lam, G=G, T=T)
    assert sp.simplify(at130 - 3 * X) == 0                              # (128) at (130) is 3 X exactly
    eta = B.theorem3_eta(T=T, L=L, D=D, Lambda=Lam, G=float(G), tau=4)
    v128 = B.theorem3_128(D=D, L=L, Lambda=Lam, G=float(G), T=T, eta=eta, tau=4)
    assert float(v128) == pytest.approx(float(at130), rel=1e-12)
    printed = B.theorem3_printed.evaluate(D=D, L=L, Lambda=Lam, G=G, T=T)
    assert float(at130) > float(printed)                                # (129) does not follow
    # boundary regime eta = 1/(tau L)
    assert float(B.theorem3_eta(T=1, L=1, D=10, Lambda=1, G=1, tau=2)) == pytest.approx(0.5)
    assert B.theorem3_128_at_130.evaluate(D=10, L=1, Lambda=1, G=1, T=1) == 21


def test_theorem1_and_sgd_values():
    assert B.theorem1_recursion.evaluate(alpha=R(1, 2), hbar=R(1, 2), r_t=1, Cq=1) == 1
    assert B.theorem1_constant_alpha.evaluate(alpha=1, hbar=R(1, 2), T=2, r0=4, Cq=0) == 1
    assert B.gd_special_case.evaluate(eta=R(1, 10), mu=1, L=1, tau=2, T=3, r0=1) == R(9, 10) ** 12
    assert B.h_sgd_tuned.evaluate(mu=1, L=3, k=1) == R(1, 4)
    t = B.tuned_client_eta(mu=np.array([1.0, 2.0]), L=np.array([3.0, 2.0]), tau=2)
    np.testing.assert_allclose(t.eta, [0.5, 0.5])
    np.testing.assert_allclose(t.h, [1 / 16, 0.0])
    np.testing.assert_allclose(B.h_sgd(eta=t.eta, mu=np.array([1.0, 2.0]), L=np.array([3.0, 2.0]), k=2), t.h)


def test_theorem1_aggregates_broadcast():
    rng = np.random.default_rng(0)
    w = rng.dirichlet(np.ones(4), size=(3, 2))
    h, q = rng.uniform(0, 0.99, (3, 2, 4)), rng.uniform(0, 2, (3, 2, 4))
    ag = B.theorem1_aggregates(w, h, q, sigma2=np.full((3, 2), 0.5))
    np.testing.assert_allclose(ag.hbar, np.einsum("...i,...i", w, h))
    np.testing.assert_allclose(ag.Cq, 0.5 * np.einsum("...i,...i", w ** 2, q))
    with pytest.raises(ValueError, match="h must satisfy"):
        B.theorem1_aggregates(w, h + 1, q, 0.5)
    with pytest.raises(ValueError, match="sum to 1"):
        B.theorem1_aggregates(w * 2, h, q, 0.5)


# ------------------------------------------------------------------------------------------ conditions
@pytest.mark.parametrize("stmt, values, text", [
    (B.h_sgd, dict(eta=1, mu=1, L=3, k=2), "eta*(mu+L) <= 2"),
    (B.q_sgd, dict(eta=1, L=3, k=2), "eta*L <= 2"),
    (B.theorem1_recursion, dict(alpha=R(3, 2), hbar=R(1, 2), r_t=1, Cq=1), "alpha <= 1"),
    (B.theorem1_recursion, dict(alpha=R(1, 2), hbar=1, r_t=1, Cq=1), "hbar < 1"),
    (B.theorem3_general, dict(D=1, L=2, Lambda=1, G=1, T=10, alpha=1, s2=1), "alpha <= 1/L"),
    (B.theorem3_corrected, dict(D=1, L=2, Lambda=R(1, 2), G=1, T=10), "Lambda >= 1"),
    (B.sgd_decaying_corrected, dict(sigma2=1, eta=R(1, 10), tau=1, M=1, mu=1, L=1, T=0, beta=1, r0=1),
     "beta >= 2/a"),
])
def test_condition_errors_name_the_condition(stmt, values, text):
    with pytest.raises(ConditionError, match=re.escape(text)):
        stmt.evaluate(**values)
    with pytest.raises(ConditionError, match=stmt.name):
        stmt(**{k: np.array([float(v), float(v)]) for k, v in values.items()})


# ------------------------------------------------------------------------------------------ grid == exact
@pytest.mark.parametrize("stmt, axes", [
    (B.h_sgd, dict(eta=[R(1, 10), R(1, 4)], mu=[1], L=[1, 3], k=[1, 2, 5])),
    (B.sgd_decaying_corrected, dict(sigma2=[R(1, 2)], eta=[R(1, 10), R(1, 5)], tau=[1, 3], M=[2], mu=[1], L=[2],
                                    T=[0, 7], beta=[60], r0=[1, 3])),
    (B.theorem3_corrected, dict(D=[1, 2], L=[1], Lambda=[1, 3], G=[R(1, 2)], T=[1, 8, 100])),
    (B.theorem3_128_at_130, dict(D=[1, 50], L=[1], Lambda=[1, 3], G=[R(1, 2)], T=[1, 8, 100])),
    (B.theorem1_proven, dict(hbar=[0, R(1, 2)], Cq=[1], r0=[2], T=[1, 4])),
])
def test_grid_matches_exact(stmt, axes):
    grid = stmt.grid(outer=True, **{k: np.array([float(v) for v in vs]) for k, vs in axes.items()})
    keys = list(axes)
    for idx in itertools.product(*(range(len(axes[k])) for k in keys)):
        exact = stmt.evaluate(**{k: axes[k][i] for k, i in zip(keys, idx)})
        assert float(grid[idx]) == pytest.approx(float(exact), rel=1e-12)


def test_theorem2_scalar_against_numeric_fixed_point():
    rng = np.random.default_rng(2)
    vals = dict(w_1=0.2, w_2=0.5, w_3=0.3, tau_1=1.0, tau_2=3.0, tau_3=5.0, P_1=1.0, P_2=0.5, P_3=2.0,
                H_1=1.0, H_2=3.0, H_3=0.2, xs_1=-1.0, xs_2=0.5, xs_3=2.0)
    vals.update(eta_1=0.3, eta_2=0.4, eta_3=1.2)
    x = B.theorem2_fixed_point(**vals)
    ks = [(1 - vals[f"eta_{i}"] * vals[f"P_{i}"] * vals[f"H_{i}"]) ** vals[f"tau_{i}"] for i in (1, 2, 3)]
    y = rng.normal()
    for _ in range(400):                                     # run FedOpt (alpha = 1) to its fixed point
        y = sum(vals[f"w_{i}"] * (ks[i - 1] * (y - vals[f"xs_{i}"]) + vals[f"xs_{i}"]) for i in (1, 2, 3))
    assert float(x) == pytest.approx(y, abs=1e-12)
    lim = B.theorem2_limit(**{k.replace("eta", "gamma"): v for k, v in vals.items()})
    small = B.theorem2_fixed_point(**{**vals, **{f"eta_{i}": vals[f"eta_{i}"] * 1e-7 for i in (1, 2, 3)}})
    assert float(small) == pytest.approx(float(lim), abs=1e-5)


# ------------------------------------------------------------------------------------------ h, q, (61)
def test_h_sgd_tight_on_diagonal_quadratic():
    mu, L = 0.5, 4.0
    H = np.diag([mu, 1.0, 2.5, L])
    for eta in (0.05, 0.2, 2 / (mu + L)):
        for k in (1, 3, 10):
            S = np.linalg.matrix_power(np.eye(4) - eta * H, k)
            exact = np.linalg.norm(S, 2) ** 2
            assert exact == pytest.approx(float(B.h_sgd(eta=eta, mu=mu, L=L, k=k)), rel=1e-12)   # tight
    eta = 1.05 * 2 / (mu + L)                                # negative control just outside the condition
    exact = np.linalg.norm(np.linalg.matrix_power(np.eye(4) - eta * H, 3), 2) ** 2
    assert exact > (1 - eta * mu) ** 6
    with pytest.raises(ConditionError):
        B.h_sgd(eta=eta, mu=mu, L=L, k=3)


def _spd(rng, d, lo, hi):
    Q, _ = np.linalg.qr(rng.normal(size=(d, d)))
    lam = rng.uniform(lo, hi, d)
    return (Q * lam) @ Q.T, lam


@given(seed=st.integers(0, 2 ** 31), d=st.integers(1, 4), u=st.floats(0.01, 1.0), k=st.integers(1, 20))
def test_h_sgd_and_q_sgd_hypothesis(seed, d, u, k):
    rng = np.random.default_rng(seed)
    H, lam = _spd(rng, d, 0.1, 10)
    mu, L = lam.min(), lam.max()
    S = np.eye(d) - u * 2 / (mu + L) * H
    eta = u * 2 / (mu + L)
    h_exact = np.linalg.norm(np.linalg.matrix_power(S, k), 2) ** 2
    assert h_exact <= float(B.h_sgd(eta=eta, mu=mu, L=L, k=k)) * (1 + 1e-10)
    # q: eta L <= 2, noise covariance Sigma; exact variance of A_i(x; k) = eta^2 sum_j S^j Sigma S^j
    eta_q = u * 2 / L
    Sq = np.eye(d) - eta_q * H
    V = rng.normal(size=(d, d))
    Sigma = V @ V.T
    sig2 = np.trace(Sigma)
    cov, Sj = np.zeros((d, d)), np.eye(d)
    for _ in range(k):
        cov += Sj @ Sigma @ Sj.T
        Sj = Sj @ Sq
    var = eta_q ** 2 * np.trace(cov)
    assert var / sig2 <= float(B.q_sgd(eta=eta_q, L=L, k=k)) * (1 + 1e-10)


@given(seed=st.integers(0, 2 ** 31), M=st.integers(2, 4), d=st.integers(1, 3), tau=st.integers(1, 6),
       u=st.floats(0.05, 1.0), alpha_u=st.floats(0.05, 1.0))
def test_recursion_61_against_exact_moments(seed, M, d, tau, u, alpha_u):
    """One round of FedOpt with client SGD (additive noise) on quadratics: the exact
    E||x^(t+1) - x~||^2 is below (61) with h_i = (1 - eta_i mu_i)^{2 tau}, q_i = tau eta_i^2."""
    rng = np.random.default_rng(seed)
    w = rng.dirichlet(np.ones(M))
    w = np.maximum(w, 0.05)
    w /= w.sum()
    Hs, etas, hs, Ks, covs, sig2 = [], [], [], [], [], []
    for _ in range(M):
        H, lam = _spd(rng, d, 0.1, 10)
        eta = u * 2 / (lam.min() + lam.max()) * rng.uniform(0.5, 1.0)
        S = np.eye(d) - eta * H
        V = rng.normal(size=(d, d))
        Sigma = V @ V.T * rng.uniform(0, 1)
        cov, Sj = np.zeros((d, d)), np.eye(d)
        for _ in range(tau):
            cov += Sj @ Sigma @ Sj.T
            Sj = Sj @ S
        Hs.append(H), etas.append(eta), Ks.append(np.linalg.matrix_power(S, tau)), covs.append(eta ** 2 * cov)
        sig2.append(np.trace(Sigma)), hs.append(float(B.h_sgd(eta=eta, mu=lam.min(), L=lam.max(), k=tau)))
    xo = rng.uniform(-3, 3, (M, d))
    C0 = sum(wi * (np.eye(d) - K) for wi, K in zip(w, Ks))
    x_tilde = np.linalg.solve(C0, sum(wi * (np.eye(d) - K) @ x for wi, K, x in zip(w, Ks, xo)))
    alpha = alpha_u
    Rm = (1 - alpha) * np.eye(d) + alpha * sum(wi * K for wi, K in zip(w, Ks))
    m = x_tilde + rng.normal(size=d) * 2
    V = rng.normal(size=(d, d))
    C = V @ V.T * rng.uniform(0, 1)
    r_t = np.sum((m - x_tilde) ** 2) + np.trace(C)
    m1 = x_tilde + Rm @ (m - x_tilde)                       # mean map (x~ is its fixed point)
    C1 = Rm @ C @ Rm.T + alpha ** 2 * sum(wi ** 2 * c for wi, c in zip(w, covs))
    r_next = np.sum((m1 - x_tilde) ** 2) + np.trace(C1)
    ag = B.theorem1_aggregates(w, np.array(hs), tau * np.array(etas) ** 2, sigma2=max(sig2))
    assume(float(ag.hbar) < 1)
    bound = B.theorem1_recursion(alpha=alpha, hbar=ag.hbar, r_t=r_t, Cq=ag.Cq)
    assert r_next <= float(bound) * (1 + 1e-10) + 1e-12


# ------------------------------------------------------------------------------------------ step-size error
def test_E11_negative_control_numbers():
    """mu=1, eta=0.1, tau=2, M=2, sigma^2=0.01, r0=1 and the paper's largest beta."""
    mu, eta, tau, M, sigma2, r0 = 1, R(1, 10), 2, 2, R(1, 100), 1
    a = 1 - (1 - eta * mu) ** (2 * tau)
    beta = 4 * sigma2 * eta ** 2 * tau / (a ** 2 * r0)
    alpha0 = 2 / (a * beta)
    # closed-form moments: identical 1-d clients, x_i* = x~ = 0, x^(0) = 1, additive gradient noise
    K = (1 - eta * mu) ** tau
    var_client = eta ** 2 * sigma2 * sum((1 - eta * mu) ** (2 * j) for j in range(tau))
    r1 = (1 - alpha0 * (1 - K)) ** 2 * r0 + alpha0 ** 2 * sum((R(1, M)) ** 2 * var_client for _ in range(M))
    claimed = B.sgd_decaying_printed.evaluate(sigma2=sigma2, eta=eta, tau=tau, M=M, mu=mu, L=mu, T=1, beta=beta,
                                              r0=r0)
    assert float(alpha0) == pytest.approx(859.75, abs=1e-9)
    assert float(r1) == pytest.approx(26425.2, abs=0.05)
    assert float(claimed) == pytest.approx(0.0033594, abs=1e-7)
    assert r1 > claimed                                               # sgd_decaying_printed is violated
    # (85) inherits it (eta mu tau = 0.2 <= 1): 9 sigma^2/(mu^2 M tau (1+beta)) = 0.0223 << r1
    c85 = B.sgd_decaying_85_printed.evaluate(sigma2=sigma2, eta=eta, tau=tau, M=M, mu=mu, L=mu, T=1, beta=beta,
                                             r0=r0)
    assert r1 > c85 and float(c85) == pytest.approx(0.022349, abs=1e-6)
    # tau = 1, (77): alpha_0 = 950 with the paper's largest beta
    a1 = 1 - (1 - eta * mu) ** 2
    beta1 = 4 * sigma2 * eta ** 2 / (a1 ** 2 * r0)
    al1 = 2 / (a1 * beta1)
    r1_tau1 = (1 - al1 * eta * mu) ** 2 * r0 + al1 ** 2 * eta ** 2 * sigma2 / M
    c77 = B.sgd_tau1_printed.evaluate(sigma2=sigma2, eta=eta, M=M, mu=mu, L=mu, T=1, beta=beta1, r0=r0)
    assert float(al1) == pytest.approx(950, abs=1e-9) and r1_tau1 > 8000 > c77
    with pytest.raises(ConditionError, match="beta >= 2/a"):
        B.sgd_decaying_corrected.evaluate(sigma2=sigma2, eta=eta, tau=tau, M=M, mu=mu, L=mu, T=1, beta=beta, r0=r0)


# ------------------------------------------------------------------------------------------ lemmas
def test_lemma4_both_forms_random_noncommuting(xp):
    rng = np.random.default_rng(3)
    G = rng.normal(size=(200, 5, 3, 3))
    A = G @ G.swapaxes(-1, -2) + 0.05 * np.eye(3)
    b = rng.normal(size=(200, 5, 3))
    q = B.lemma4_aggregates(xp.asarray(A), xp.asarray(b))          # on the backend, statements included
    strong = to_numpy(B.lemma4_strong(As_norm=q.As_norm, As_inv_norm=q.As_inv_norm, S_Ab=q.S_Ab))
    printed = to_numpy(B.lemma4(As_norm=q.As_norm, As_inv_norm=q.As_inv_norm, S_Ab=q.S_Ab))
    lhs = to_numpy(q.lhs)
    assert np.all(lhs <= strong * (1 + 1e-12)) and np.all(strong <= printed * (1 + 1e-12))
    # tightness of the strong form: K = 1, b along the top eigenvector
    lam, V = np.linalg.eigh(A[0, 0])
    q1 = B.lemma4_aggregates(A[:1, :1], V[:, -1][None, None, :])
    assert float(q1.lhs[0]) == pytest.approx(float(B.lemma4_strong(As_norm=q1.As_norm, As_inv_norm=q1.As_inv_norm,
                                                                   S_Ab=q1.S_Ab)[0]), rel=1e-12)


def test_lemma2_on_quadratics():
    rng = np.random.default_rng(4)
    for _ in range(20):
        H, lam = _spd(rng, 3, 0.1, 10)
        u = rng.normal(size=3)
        g = H @ u
        mu, L = lam.min(), lam.max()
        assert g @ g >= float(B.lemma2_14(mu=mu, L=L, u2=u @ u)) * (1 - 1e-12)
        assert g @ g <= float(B.lemma2_15(mu=mu, L=L, ip=u @ g)) * (1 + 1e-12)
        assert (mu + L) * (u @ g) >= float(B.lemma2_16(mu=mu, L=L, g2=g @ g, u2=u @ u)) * (1 - 1e-12)
