"""Derive the structure behind AFL-DGA's corrected Lemma 1', Lemma 2', Theorem 1' and Corollary 1'.

Starting point: the procedure of the paper's Section 3.2 written out here a second time, on SymPy
symbols -- every local stochastic gradient ``g[i, r, j]`` is a free symbol, so every model is an exact
linear combination of them (typed independently of the library).  Steps:

1. the key identity (``analysis`` correction): before and after every local step, client i's model
   is ``w^{a+1} - eta * (its local gradients not yet replaced)``, ``a`` the last applied global
   gradient -- an identity of polynomials in the gradient symbols, on random schedules;
2. Lemma 1' then follows: ``w^t - w_ij = -eta sum_{h=a+1}^{t-1} gbar^h + eta sum_U g_u`` exactly;
   the lag counts of Lemma 2' (1) ``n <= K_m + D_m - 1`` and (2) ``rho <= tau + tau' - 1 +
   t_d max(0, ceil(D_m/K_min) - 1)`` hold on every sampled schedule, and (2) is attained;
3. Fig. 1 (``paper_text`` correction): client 3's final model is
   ``w0 - eta(gbar^1 + 2 gbar^2 + gbar^3) - eta sum_j g^4_j - eta(g^5_1 + g^5_2)``, and the analysis
   correction puts coefficient 1 on ``gbar^2``;
4. the per-step inequality behind Theorem 1' (deterministic): descent lemma plus polarisation give
   ``f(w^{t+1}) <= f(w^t) - eta/2 ||grad f||^2 + eta/2 ||grad f - m||^2 + (L eta^2 - eta)/2 ||m||^2``
   (an identity in the components), and the last coefficient is <= 0 iff ``eta <= 1/L``;
5. Theorem 1 and Corollary 1: the corollary's exact form is the theorem at ``eta* = sqrt(N)/(L sqrt(T))``,
   ``S_bar = N(2 t_d - 1)`` (library statements); its third term is the paper's O(N/T ...) divided by
   N; ``eta* <= 1/T`` iff ``T <= L^2/N``; and Theorem 1 (both sides) scales by ``c^2`` under
   ``(f, eta) -> (c f, eta/c)``, so the printed ``eta <= 1/T`` admits the same counterexamples as
   ``eta <= 1/L``; Corollary 1' is Theorem 1' at ``eta*`` (``eta* <= 1/(2L)`` iff ``T >= 4N``).

Run: ``python derivations/derive_afl_dga_lemmas.py`` (also collected by pytest).
"""
from __future__ import annotations

import random

import sympy as sp

from fltheory.papers.afl_dga import bounds as B

eta = sp.Symbol("eta", positive=True)


def run_symbolic(P, K, D, mode="analysis", p=None):
    """The procedure on symbols (one dimension suffices: every model is a linear form in the g's).

    Returns the server models, the global gradients, every recorded (r, i, j, w, a, n, uncorrected
    gradients) and the log of applied corrections (i, h, r, j)."""
    N, T = len(P), len(P[0])
    p = p or [sp.Rational(1, N)] * N
    C = [[sum(K[i][s] for s in range(r + 1) if P[i][s]) for r in range(T)] for i in range(N)]
    A = [[0] * T for _ in range(N)]
    for i in range(N):
        acc = 0
        for r in range(T):
            acc = max(acc, C[i][r] + D[i][r])
            A[i][r] = acc
    w0 = sp.Symbol("w0")
    server, gbar = [w0], []
    w = [w0] * N
    cnt, applied = [0] * N, [-1] * N
    S = [[0] * T for _ in range(N)]
    stored = [None] * N
    hist = [[] for _ in range(N)]          # every gradient symbol of client i, in order
    rec, log = [], []
    for r in range(T):
        for i in range(N):
            if not P[i][r]:
                continue
            for j in range(K[i][r]):
                while applied[i] + 1 <= r - 1 and A[i][applied[i] + 1] <= cnt[i]:
                    h = applied[i] + 1
                    if mode == "analysis":
                        w[i] = w[i] - eta * gbar[h] + eta * S[i][h]
                    else:  # paper_text
                        w[i] = w[i] - eta * (K[i][h] * gbar[h] - S[i][h] if P[i][h] else gbar[h])
                    applied[i] = h
                    log.append((i, h, r, j))
                a = applied[i]
                n = cnt[i] - (C[i][a] if a >= 0 else 0)
                rec.append((r, i, j, sp.expand(w[i]), a, n, list(hist[i][len(hist[i]) - n:]) if n else []))
                g = sp.Symbol(f"g_{i}_{r}_{j}")
                hist[i].append(g)
                w[i] = w[i] - eta * g
                S[i][r] = S[i][r] + g
                cnt[i] += 1
            stored[i] = S[i][r] / K[i][r]
        gbar.append(sp.expand(sum(p[i] * stored[i] for i in range(N))))
        server.append(sp.expand(server[-1] - eta * gbar[-1]))
    return server, gbar, rec, log, C


def random_schedule(rng, N, T, t_d, K_max, D_max):
    P = [[1] + [0] * (T - 1) for _ in range(N)]
    for i in range(N):
        last = 0
        for r in range(1, T):
            if rng.random() < 0.4 or r - last + 1 > t_d:
                P[i][r], last = 1, r
    K = [[rng.randint(1, K_max) for _ in range(T)] for _ in range(N)]
    D = [[rng.randint(0, D_max) for _ in range(T)] for _ in range(N)]
    return P, K, D


def sampled_runs(seed, count, N_max, T_range, D_max):
    """``count`` random schedules and their symbolic runs: (P, K, D, T, lambda, run_symbolic's output)."""
    rng = random.Random(seed)
    for _ in range(count):
        N, T, t_d = rng.randint(1, N_max), rng.randint(*T_range), rng.randint(1, 3)
        P, K, D = random_schedule(rng, N, T, t_d, 3, D_max)
        lam = [[max(r for r in range(t + 1) if P[i][r]) for t in range(T)] for i in range(N)]
        yield P, K, D, T, lam, run_symbolic(P, K, D)


def test_key_identity_and_lemma1_prime_exactly():
    checked = 0
    for P, K, D, T, lam, (server, gbar, rec, _, _) in sampled_runs(3, 12, 3, (2, 7), 5):
        for (r, i, j, wij, a, n, U) in rec:
            assert sp.expand(wij - (server[a + 1] - eta * sum(U))) == 0          # the key identity
            for t in range(r + 1, T):                                               # Lemma 1' decomposition
                if lam[i][t] != r:
                    continue
                lhs = sp.expand(server[t] - wij)
                rhs = sp.expand(-eta * sum(gbar[a + 1:t]) + eta * sum(U))
                assert lhs - rhs == 0
                checked += 1
    assert checked > 50


def test_lemma2_prime_lag_counts():
    attained = 0
    for P, K, D, T, lam, (_, _, rec, _, _) in sampled_runs(7, 60, 2, (3, 9), 7):
        N = len(P)
        Ks = [K[i][r] for i in range(N) for r in range(T) if P[i][r]]
        K_m, K_min, D_m = max(Ks), min(Ks), max(max(row) for row in D)
        td = max(t - lam[i][t] + 1 for i in range(N) for t in range(T))
        for (r, i, j, _, a, n, _) in rec:
            assert n <= K_m + D_m - 1
            for t in range(r, T):
                if lam[i][t] != r:
                    continue
                prev = max([s for s in range(r) if P[i][s]], default=-1)
                S = t - prev
                rho = t - 1 - a
                bound = S + td * max(0, -(-D_m // K_min) - 1)
                assert rho <= bound
                assert bound == float(B.lemma2_rho(S=S, t_d=td, K_min=K_min, D_m=D_m))
                attained += rho == bound
    assert attained > 0


def test_fig1_reproduction():
    P = [[1, 1, 0, 1, 1], [1, 1, 1, 1, 1]]
    K = [[1, 2, 1, 5, 2], [1, 1, 1, 1, 1]]
    D = [[2, 2, 4, 2, 2], [0, 0, 0, 0, 0]]
    for mode, c2 in (("paper_text", 2), ("analysis", 1)):
        server, gbar, rec, log, _ = run_symbolic(P, K, D, mode)
        g = {(r, j): sp.Symbol(f"g_0_{r}_{j}") for r in range(5) for j in range(5)}
        last = [x for x in rec if x[1] == 0][-1]
        final = sp.expand(last[3] - eta * g[(4, 1)])
        want = sp.Symbol("w0") - eta * (gbar[0] + c2 * gbar[1] + gbar[2]) - eta * sum(g[(3, j)] for j in range(5)) \
            - eta * (g[(4, 0)] + g[(4, 1)])
        assert sp.expand(final - want) == 0
        assert [(h, r, j) for (i, h, r, j) in log if i == 0] == [(0, 3, 0), (1, 3, 2), (2, 3, 4)]


def test_descent_step_of_theorem1_prime():
    L, h = sp.symbols("L eta", positive=True)
    a = sp.symbols("a0:3", real=True)          # grad f(w^t)
    m = sp.symbols("m0:3", real=True)          # the mean part m^t (= gbar^t when sigma = 0)
    dot = lambda x, y: sum(xi * yi for xi, yi in zip(x, y))  # noqa: E731
    descent = -h * dot(a, m) + L * h**2 / 2 * dot(m, m)
    diff = [ai - mi for ai, mi in zip(a, m)]
    claim = -h / 2 * dot(a, a) + h / 2 * dot(diff, diff) + (L * h**2 - h) / 2 * dot(m, m)
    assert sp.expand(descent - claim) == 0
    # (L eta^2 - eta)/2 = eta (L eta - 1)/2 <= 0 for 0 < eta <= 1/L, and > 0 beyond
    assert sp.factor(L * h**2 - h) == h * (L * h - 1)
    assert ((L * h**2 - h) / 2).subs({L: 2, h: sp.Rational(1, 2)}) == 0 and ((L * h**2 - h) / 2).subs({L: 2, h: 1}) > 0


def _positive(expr):
    return expr.xreplace({s: sp.Symbol(s.name, positive=True) for s in expr.free_symbols})


def test_corollaries_and_step_size_readings():
    eta_star = sp.sqrt(B.N) / (B.L * sp.sqrt(B.T))
    th = B.theorem1.expr.subs({B.eta: eta_star, B.S_bar: B.N * (2 * B.t_d - 1)})
    assert sp.simplify(_positive(th - B.corollary1.expr)) == 0
    third = (B.L**2 * eta_star**2 / B.N**2 * (B.sigma2 + B.G2) * B.N * (2 * B.t_d - 1))
    paper = B.N / B.T * (2 * B.t_d - 1) * (B.sigma2 + B.G2)
    assert sp.simplify(_positive(third - paper / B.N)) == 0
    Lp, Np, Tp = (sp.Symbol(s, positive=True) for s in "LNT")
    assert sp.simplify((sp.sqrt(Np) / (Lp * sp.sqrt(Tp)) * Tp) ** 2 - Tp * Np / Lp**2) == 0     # eta* T <= 1 iff T <= L^2/N
    # eta* <= 1/(2L) iff T >= 4N
    assert sp.simplify((2 * Lp * sp.sqrt(Np) / (Lp * sp.sqrt(Tp))) ** 2 - 4 * Np / Tp) == 0
    th_c = B.theorem1_corrected.expr.subs({B.eta: eta_star})
    assert sp.simplify(_positive(th_c - B.corollary1_corrected.expr)) == 0


def test_rescaling_invariance_of_theorem1():
    c = sp.Symbol("c", positive=True)
    e = B.theorem1.expr
    scaled = e.subs({B.L: c * B.L, B.eta: B.eta / c, B.Delta: c * B.Delta, B.sigma2: c**2 * B.sigma2,
                     B.G2: c**2 * B.G2}, simultaneous=True)
    assert sp.simplify(scaled - c**2 * e) == 0
    # the left-hand side: w -= (eta/c) grad(c f)(w) is the same trajectory, and ||grad(c f)||^2 = c^2 ||grad f||^2
    g = sp.Function("g")
    w = sp.Symbol("w")
    assert sp.simplify((w - (B.eta / c) * (c * g(w))) - (w - B.eta * g(w))) == 0


if __name__ == "__main__":
    from _runner import run_tests

    run_tests(globals())
