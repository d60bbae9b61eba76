r"""Every result of Song & Hong, *Asynchronous Federated Learning Using Outdated Local Updates Over
TDMA Channel*, as a :class:`fltheory.symbolic.Statement` (printed, and corrected where the printed
one is false).

Problem class: ``f = (1/N) sum_n f_n`` with ``f`` ``L``-smooth (Assumption 1, (17)-(18)), per-sample
stochastic gradients with ``E||grad l(w, zeta)||^2 <= sigma^2 + M ||grad f_n(w)||^2`` (Assumption 2,
(19)), heterogeneity ``||grad f - grad f_n||^2 <= Gamma^2`` (Assumption 3, (21)); ``f >= f_inf`` and
``Delta = f(w_0) - f_inf``; mini-batches of ``B`` samples drawn independently of everything else.
Method: asynchronous FL over TDMA, ``w_{k+1} = w_k - (eta/S) sum_{n in S_k} grad f_n(w_{khat_n}; B)``
(Algorithm 1; Algorithm 2 with intentional delay ``alpha``), ``N = G S`` devices, staleness
``d_{n,k} = k - khat_n = min(k, dbar)`` with ``dbar = G - 1`` (or ``G - 1 - alpha``).

Per-round symbols (supplied from an exact computation, see ``exact.lemma_terms``): ``f_k``,
``f_next`` (``E f(w_k)``, ``E f(w_{k+1})``), ``a_k = E||grad f(w_k)||^2``, ``sum_h`` =
``sum_{n in S_k} E||grad f_n(w_khat)||^2``, ``sum_gf`` = ``sum_{n in S_k} E||grad f(w_khat)||^2``,
``sum_D`` = ``sum_{n in S_k} E||w_k - w_khat||^2``, ``sum_d`` = ``sum_{n in S_k} d_{n,k}``,
``sum_window`` = ``sum_n sum_{j=khat}^{k-1} sum_{n' in S_j} E||grad f(w_{jhat_n'})||^2``, and per device
``drift = E||w_k - w_khat||^2``, ``window_H = sum_{j=k-d}^{k-1} H_j`` with ``H_j = sum_h(j)/S``.

==============================  =========  =============================================================================
statement                       status     note
==============================  =========  =============================================================================
``tau_async_printed``           printed    (9)-(10) with G = ceil(N/S), any N -- FALSE when S does not divide N
``tau_async``                   corrected  (9)-(10) with S | N added: exact as (E_{k+G}-E_k)/G
``staleness_printed``           printed    (15)-(16) min(k, G-1), G = ceil(N/S), any N -- FALSE when S does not divide N
``staleness``                   corrected  (15)-(16) with S | N added: exact
``staleness_general``           corrected  any N: ceil((N-u)/S) - 1 once k S + u >= N
``khat_idfl``                   printed    (31): one round off for G - alpha - 1 <= k <= G -- FALSE
``khat_idfl_corrected``         corrected  0 for k <= G-alpha-1, else k - G + alpha + 1
``prop1_alpha``                 printed    (32)-(33): the largest alpha adding no slot: exact
``prop1_condition``             printed    (34)-(36): alpha adds no slot iff r (G-alpha-1)(S+1) >= tau_comp
``rounds_loop_bound``           printed    Algorithm 1's floor(T / tau_async) rounds -- FALSE
``rounds_done``                 corrected  #{k : E_k <= T} in closed form (Table I = this + 1)
``smoothness_descent``          printed    (18): the descent inequality implied by (17)
``assumption2_minibatch``       printed    (20) -- FALSE for B > 1
``assumption2_minibatch_corr``  corrected  sigma^2/B + (1 + (M-1)/B) ||grad f_n||^2
``lemma1``                      printed    (22) -- FALSE (0.405 > 0.4025 on f = w^2/2)
``lemma1_corrected``            corrected  Lemma 1': per-device polarisation, Young (lambda)
``lemma2``                      printed    (23) -- FALSE (drops the cross term)
``lemma2_corrected``            corrected  (1 + 1/lambda) Gamma^2 S + (1 + lambda) sum ||grad f||^2
``lemma3``                      printed    (24) -- FALSE (Cauchy-Schwarz factor lost)
``lemma3_corrected``            corrected  Lemma 3': 2 eta^2 (d + rho) window_H + 2 eta^2 d sigma^2/(SB)
``round_descent``               printed    (25): Lemmas 1-3 combined -- FALSE (0.405 > 0.4025 on f = w^2/2)
``summed_descent``              printed    (26): (25) summed over k = 0..K -- FALSE (0.195 > 0.19 at K = 0)
``lemma4_27``, ``lemma4_28``    printed    (27), (28): hold (valid re-indexing bounds)
``lemma4_exact``                corrected  (C.1) exactly: N a_0 + S sum_{k=1}^{K-G+1} a_k
``staleness_sum``               printed    sum_k sum_n d = S (G-1)(K - G/2 + 1), K >= G - 1
``theorem1``                    printed    App. D: (Q2 + Q3 + Q4)/Q1 -- FALSE
``theorem1_order``              printed    (30): sqrt(K+1) (Q2+Q3+Q4)/Q1 -> Delta/beta + beta L(...)/(2SB)
``theorem1_rate``               printed    (30) as a rate for every eta of (29), with that constant -- FALSE
``theorem1_corrected``          corrected  Theorem 1' (keeps the (1 + 1/lambda) Gamma^2 floor)
==============================  =========  =============================================================================

Example
-------
>>> from fltheory.papers.tdma import bounds as b
>>> float(b.lemma1.evaluate(f_k=sp.Rational(1, 2), a_k=1, eta=sp.Rational(1, 10), M=1, L=1, S=2, B=1,
...       sum_h=2, Gamma=0, sum_D=0, sigma=0))       # the printed Lemma 1 at f = w^2/2; truth 0.405
0.4025
>>> float(b.lemma1_corrected.evaluate(f_k=sp.Rational(1, 2), a_k=1, eta=sp.Rational(1, 10), M=1, L=1, S=2,
...       B=1, sum_h=2, Gamma=0, sum_D=0, sigma=0, lam=1))
0.405
>>> round(float(b.theorem1_bound(eta=b.beta_value(S=50, B=1, L=1, N=50, M=1) / 3 ** 0.5, L=1, M=1, B=1, S=50,
...       N=50, K=2, sigma=0, Gamma=0, Delta=0.5, g0=1)), 4)       # negative: the bound cannot hold
-0.8039
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from ... import validation as V
from ...symbolic import Statement, conditions

__all__ = ["STATEMENTS", "BY_NAME", "PAPER", "SYMBOLS", "beta_value", "beta_root", "theorem1_bound", "theorem1_corrected_bound",
           "x_max", "staleness_average"]

PAPER = "tdma"


def _p(name):
    return sp.Symbol(name, positive=True)


def _n(name):
    return sp.Symbol(name, nonnegative=True)


eta, L, M, B, S, N, G, r, tau, lam = (_p(n) for n in ("eta", "L", "M", "B", "S", "N", "G", "r", "tau_comp", "lam"))
K, k, T = (_n(n) for n in ("K", "k", "T"))
sigma, Gamma, Delta, g0, alpha, u, dbar, d = (_n(n) for n in ("sigma", "Gamma", "Delta", "g0", "alpha", "u", "dbar", "d"))
f_k, a_k, sum_h, sum_gf, sum_D, sum_d, sum_window, drift, window_H, grad_n = (
    _n(n) for n in ("f_k", "a_k", "sum_h", "sum_gf", "sum_D", "sum_d", "sum_window", "drift", "window_H", "grad_n"))
sum_stale, sum_a, sum_a_head, sum_triple = (_n(n) for n in ("sum_stale", "sum_a", "sum_a_head", "sum_triple"))
sum_d_all, sq_dist = _n("sum_d_all"), _n("sq_dist")
f_drop = sp.Symbol("f_drop", real=True)
SYMBOLS = {s.name: s for s in (eta, L, M, B, S, N, K, G, k, r, tau, T, lam, sigma, Gamma, Delta, g0, alpha, u, dbar, d,
                               f_k, a_k, sum_h, sum_gf, sum_D, sum_d, sum_window, drift, window_H, grad_n, sum_stale,
                               sum_a, sum_a_head, sum_triple, sum_d_all, sq_dist, f_drop)}
LATEX = {"tau_comp": r"\tau^{\rm comp}", "f_k": r"\mathbb E f(\mathbf w_k)", "a_k": r"\mathbb E\|\nabla f(\mathbf w_k)\|^2",
         "sum_h": r"\textstyle\sum_{n\in\mathcal S_k}\mathbb E\|\nabla f_n(\mathbf w_{\hat k_n})\|^2",
         "sum_gf": r"\textstyle\sum_{n\in\mathcal S_k}\mathbb E\|\nabla f(\mathbf w_{\hat k_n})\|^2",
         "sum_D": r"\textstyle\sum_{n\in\mathcal S_k}\mathbb E\|\mathbf w_k-\mathbf w_{\hat k_n}\|^2",
         "sum_d": r"\textstyle\sum_{n\in\mathcal S_k}d_{n,k}", "sum_window": r"W_k", "window_H": r"\sum_{j=k-d}^{k-1}H_j",
         "drift": r"\mathbb E\|\mathbf w_k-\mathbf w_{\hat k_n}\|^2", "g0": r"\|\nabla f(\mathbf w_0)\|^2",
         "dbar": r"\bar d", "lam": r"\lambda", "grad_n": r"\|\nabla f_n(\mathbf w)\|^2",
         "sum_stale": r"\sum_k\sum_{n\in\mathcal S_k}a_{\hat k_n}", "sum_a": r"\sum_{k=0}^K a_k",
         "sum_a_head": r"\sum_{k=1}^{K-G+1}a_k", "sum_triple": r"\sum_k\sum_n\sum_j\sum_{n'}a_{\hat j_{n'}}",
         "sum_d_all": r"\sum_{k=0}^K\sum_{n\in\mathcal S_k}d_{n,k}", "sq_dist": r"\|\mathbf w'-\mathbf w\|^2",
         "f_drop": r"\mathbb E[f(\mathbf w_0)-f(\mathbf w_{K+1})]"}
PAPER_TITLE = "Song & Hong, Asynchronous FL Using Outdated Local Updates Over TDMA Channel"


def _st(name, lhs, relation, expr, conds=(), equation="", status="printed", reason="", tight=None, corrects=None,
        title=""):
    return Statement(name, lhs=lhs, relation=relation, expr=expr, conditions=conditions(*conds), paper=PAPER,
                     equation=equation, status=status, reason=reason, tight=tight, corrects=corrects, title=title,
                     latex_names=LATEX)


_DIV = (sp.Eq(sp.Mod(N, S), 0), "S divides N")
# (9), (10), (15) and (16) are printed with G = ceil(N/S) and no divisibility (Sec. III); the paper assumes S | N
# only in Proposition 1 and Theorem 1.  ``tau_async`` and ``staleness`` add it (corrected), the ``_printed`` forms not.
_DIV_ADDED = (sp.Eq(sp.Mod(N, S), 0), "S divides N (added: the paper prints this for any N, G = ceil(N/S))")
c_comm = r * (S + 1)
G_NS = N / S
G_CEIL = sp.ceiling(N / S)
rho = sp.Max(M - 1, 0) / (S * B)

# ============================================================================= timing
tau_async_printed = _st("tau_async_printed", r"\lim_{K\to\infty}(E_K-E_0)/K", "==",
                        sp.Piecewise(((tau + c_comm) / G_CEIL, tau >= r * (G_CEIL - 1) * (S + 1)), (c_comm, True)),
                        [], "(9)-(10)", title="(10) as printed: average slots per round, G = ceil(N/S), any N")
tau_async = _st("tau_async", r"(E_{k+G}-E_k)/G", "==",
                sp.Piecewise(((tau + c_comm) / G_NS, tau >= r * (G_NS - 1) * (S + 1)), (c_comm, True)),
                [_DIV_ADDED], "(9)-(10)", status="corrected", tight=True,
                reason="(10) holds as printed only when S divides N: for N = 5, S = 2, tau_comp = 30 a round takes "
                       "16 slots on average, not (tau_comp + 3)/3 = 11 (the rotation of 5 devices through 2 uplinks "
                       "idles once every 2 rounds, not every G = 3)",
                corrects="tau_async_printed", title="(10) with S | N: average slots per asynchronous round")
staleness_printed = _st("staleness_printed", r"d_{n,k}", "==", sp.Min(k, G_CEIL - 1), [], "(15)-(16)",
                        title="(15) as printed: staleness min(k, G-1), G = ceil(N/S), any N")
staleness = _st("staleness", r"d_{n,k}", "==", sp.Min(k, G_NS - 1), [_DIV_ADDED], "(15)-(16)", tight=True,
                status="corrected", reason="(15) holds as printed only when S divides N: otherwise the uplinks of "
                                           "one round carry updates of different staleness (staleness_general)",
                corrects="staleness_printed", title="(15) with S | N: staleness min(k, G-1)")
staleness_general = _st("staleness_general", r"d_{n,k}\ (k S + u \ge N)", "==", sp.ceiling((N - u) / S) - 1,
                        [(u <= S - 1, "u is an uplink of the round (0 .. S-1)")], "(15), any N", status="corrected",
                        reason="(15) assumes S divides N; for any N the FIFO rotation gives this value for the u-th "
                               "uplink once k S + u >= N (mean over a round exactly N/S - 1)",
                        corrects="staleness_printed", tight=True,
                        title="(15) for any N: the staleness of the u-th uplink of a round, ceil((N - u)/S) - 1")
khat_idfl = _st("khat_idfl", r"\hat k_n", "==",
                sp.Piecewise((0, k <= G - alpha), (k - G + alpha, k <= G), (k - G + alpha + 1, True)),
                [(alpha <= G - 1, "0 <= alpha <= G - 1")], "(31)", title="(31): khat under intentional delay")
khat_idfl_corrected = _st("khat_idfl_corrected", r"\hat k_n", "==",
                          sp.Piecewise((0, k <= G - alpha - 1), (k - G + alpha + 1, True)),
                          [(alpha <= G - 1, "0 <= alpha <= G - 1")], "(31)", status="corrected",
                          reason="the printed branches are one round off: group G - alpha + j (1-based) starts after "
                                 "round j - 1 on w_j, so khat = k - G + alpha + 1 from k = G - alpha on",
                          corrects="khat_idfl", tight=True,
                          title="(31) corrected: khat under intentional delay, one round later than printed")
d_star_expr = sp.ceiling(tau / (r * (S + 1)))
prop1_alpha = _st("prop1_alpha", r"\alpha^*", "==",
                  sp.Piecewise((0, tau / r >= (G_NS - 1) * (S + 1)), (G_NS - d_star_expr - 1, True)),
                  [_DIV], "(32)-(33)", tight=True,
                  title="Proposition 1: the largest intentional delay that adds no slot to any round")
prop1_condition = _st("prop1_condition", r"[E_k(\alpha)=E_k(0)\ \forall k]", "==",
                      sp.Piecewise((1, r * (G_NS - alpha - 1) * (S + 1) >= tau), (0, True)),
                      [_DIV, (alpha <= G_NS - 1, "0 <= alpha <= G - 1"),
                       (tau < r * (G_NS - 1) * (S + 1), "tau_comp < r (G-1)(S+1) (the case of (34)-(36))")],
                      "(34)-(36)", tight=True,
                      title="Proposition 1's proof: alpha adds no slot to any round iff r (G-alpha-1)(S+1) >= tau_comp")
rounds_loop_bound = _st("rounds_loop_bound", r"K_{\rm done}(T)", "==",
                        sp.floor(T / sp.Max(c_comm, (tau + c_comm) / G_NS)), [_DIV], "Alg. 1 line 2",
                        title="Algorithm 1's loop bound floor(T / tau_async) as the rounds that fit in T")
rounds_done_expr = sp.Piecewise(
    (0, T < tau),
    (sp.floor((T - tau) / c_comm), tau <= (G_NS - 1) * c_comm),
    (G_NS * sp.floor((T - tau) / (tau + c_comm))
     + sp.Min(G_NS, sp.floor(((T - tau) - (tau + c_comm) * sp.floor((T - tau) / (tau + c_comm))) / c_comm)), True))
rounds_done = _st("rounds_done", r"K_{\rm done}(T)=\#\{k:E_k\le T\}", "==", rounds_done_expr, [_DIV],
                  "Table I", status="corrected",
                  reason="the loop bound ignores the first tau_comp slots and the idle gap of every cycle; the rounds "
                         "completed by T follow from the exact end times (Table I lists this number plus one)",
                  corrects="rounds_loop_bound", tight=True,
                  title="Table I: the rounds completed by time T, from the exact end times")

# ============================================================================= assumption 1
smoothness_descent = _st("smoothness_descent", r"f(\mathbf w')-f(\mathbf w)-\nabla f(\mathbf w)^\top(\mathbf w'-\mathbf w)",
                         "<=", L / 2 * sq_dist, [], "(18)", tight=True,
                         title="(18): the descent inequality that (17) implies")

# ============================================================================= assumption 2
assumption2_minibatch = _st("assumption2_minibatch", r"\mathbb E\|\nabla f_n(\mathbf w;\mathcal B)\|^2", "<=",
                            sigma**2 / B + M / B * grad_n, [], "(20)",
                            title="(20): second moment of a mini-batch gradient")
assumption2_minibatch_corrected = _st(
    "assumption2_minibatch_corrected", r"\mathbb E\|\nabla f_n(\mathbf w;\mathcal B)\|^2", "<=",
    sigma**2 / B + (1 + (M - 1) / B) * grad_n, [(M >= 1, "M >= 1 (as (19) forces)")], "(20)",
    status="corrected", reason="averaging B independent samples divides the variance, not the squared mean, by B",
    corrects="assumption2_minibatch", tight=True,
    title="(20) corrected: second moment of a mini-batch gradient (B divides the variance only)")

# ============================================================================= lemmas
lemma1 = _st("lemma1", r"\mathbb E f(\mathbf w_{k+1})", "<=",
             f_k - eta / 2 * a_k + (eta**2 * M * L / (2 * S**2 * B) - eta / (2 * S)) * sum_h + eta * Gamma**2 / 2
             + eta * L**2 / (2 * S) * sum_D + eta**2 * sigma**2 * L / (2 * S * B), [], "(22)",
             title="Lemma 1: one-round descent")
lemma1_corrected = _st("lemma1_corrected", r"\mathbb E f(\mathbf w_{k+1})", "<=",
                       f_k - eta / 2 * a_k - eta / 2 * (1 - eta * L * (1 + rho)) * sum_h / S
                       + eta / 2 * (1 + lam) * L**2 * sum_D / S + eta / 2 * (1 + 1 / lam) * Gamma**2
                       + eta**2 * L * sigma**2 / (2 * S * B), [], "(22)", status="corrected",
                       reason="(A.5)-(A.6) drop the factor of ||a + b||^2 <= 2||a||^2 + 2||b||^2 (here Young with "
                              "lambda) and (A.9) bounds ||(1/S) sum g_n||^2 by (1/S^2) sum ||g_n||^2, true only for "
                              "zero-mean terms; polarising per device gives H_k = sum_h / S instead",
                       corrects="lemma1", tight=True,
                       title="Lemma 1': one-round descent, with the Young factor and per-device polarisation")
lemma2 = _st("lemma2", r"\sum_{n\in\mathcal S_k}\mathbb E\|\nabla f_n(\mathbf w_{\hat k_n})\|^2", "<=",
             Gamma**2 * S + sum_gf, [], "(23)", title="Lemma 2: local against global gradients")
lemma2_corrected = _st("lemma2_corrected", r"\sum_{n\in\mathcal S_k}\mathbb E\|\nabla f_n(\mathbf w_{\hat k_n})\|^2",
                       "<=", (1 + 1 / lam) * Gamma**2 * S + (1 + lam) * sum_gf, [], "(23)", status="corrected",
                       reason="the proof drops the cross term 2<grad f, grad f_n - grad f>; Young's inequality with "
                              "lambda > 0 restores it", corrects="lemma2",
                       title="Lemma 2': local against global gradients, with the cross term (Young, lambda > 0)")
lemma3 = _st("lemma3", r"\sum_{n\in\mathcal S_k}\mathbb E\|\mathbf w_k-\mathbf w_{\hat k_n}\|^2", "<=",
             eta**2 * (sigma**2 + M * Gamma**2) / (S * B) * sum_d + eta**2 * M / (S**2 * B) * sum_window, [], "(24)",
             title="Lemma 3: model drift over the staleness window")
lemma3_corrected = _st("lemma3_corrected", r"\mathbb E\|\mathbf w_k-\mathbf w_{\hat k_n}\|^2", "<=",
                       2 * eta**2 * (d + rho) * window_H + 2 * eta**2 * d * sigma**2 / (S * B), [], "(24)",
                       status="corrected",
                       reason="(B.1) uses ||sum_{i<=m} x_i||^2 <= sum ||x_i||^2 without the factor m = d S; splitting "
                              "mean and (orthogonal) noise gives this per-device bound",
                       corrects="lemma3",
                       title="Lemma 3': model drift over the staleness window, per device")
round_descent = _st("round_descent", r"\mathbb E f(\mathbf w_{k+1})", "<=",
                    f_k - eta / 2 * a_k + eta**2 * L * (Gamma**2 * M + sigma**2) / (2 * S * B)
                    + (eta**2 * M * L - eta * S * B) / (2 * S**2 * B) * sum_gf
                    + eta**3 * L**2 * M / (2 * S**3 * B) * sum_window
                    + eta**3 * L**2 * (sigma**2 + M * Gamma**2) / (2 * S**2 * B) * sum_d, [], "(25)",
                    title="(25): Lemma 1 with Lemmas 2 and 3 substituted, one round")
summed_descent = _st("summed_descent",
                     r"\frac{\eta}{K+1}\sum_k a_k-\frac{\eta^2ML-\eta SB}{S^2B(K+1)}\sum_k\sum_{n\in\mathcal S_k}"
                     r"\mathbb E\|\nabla f(\mathbf w_{\hat k_n})\|^2-\frac{\eta^3L^2M}{S^3B(K+1)}\sum_k W_k", "<=",
                     2 / (K + 1) * f_drop + eta**2 * L * (Gamma**2 * M + sigma**2) / (S * B)
                     + eta**3 * L**2 * (sigma**2 + M * Gamma**2) / (S**2 * B * (K + 1)) * sum_d_all, [], "(26)",
                     title="(26): (25) summed over k = 0..K (the printed f(w_{k+1}) read as f(w_{K+1}))")
lemma4_27 = _st("lemma4_27", r"\sum_{k=0}^K\sum_{n\in\mathcal S_k}a_{\hat k_n}", "<=",
                (N - S) * g0 + S * sum_a, [(K >= 2 * N / S, "K >= 2G"), _DIV], "(27)",
                title="Lemma 4 (27)")
lemma4_28 = _st("lemma4_28", r"\sum_k\sum_{n\in\mathcal S_k}\sum_{j=\hat k_n}^{k-1}\sum_{n'\in\mathcal S_j}a_{\hat j_{n'}}",
                "<=", 2 * G_NS * S**2 * (G_NS * g0 + sum_a), [(K >= 2 * N / S, "K >= 2G"), _DIV], "(28)",
                title="Lemma 4 (28)")
lemma4_exact = _st("lemma4_exact", r"\sum_{k=0}^K\sum_{n\in\mathcal S_k}a_{\hat k_n}", "==", N * g0 + S * sum_a_head,
                   [(K >= 2 * N / S, "K >= 2G"), _DIV], "(C.1)", status="corrected",
                   reason="Appendix C's indices are loose (d for G, an empty sum); the exact re-indexing is this, so "
                          "(27) holds with room (N a_0 + S sum_{k=1}^{K-G+1} a_k <= (N - S) a_0 + S sum_k a_k)",
                   corrects="lemma4_27", tight=True,
                   title="Lemma 4, exact: the stale-gradient sum of (27) re-indexed (Appendix C)")
staleness_sum = _st("staleness_sum", r"\sum_{k=0}^K\sum_{n\in\mathcal S_k}d_{n,k}", "==",
                    S * (G_NS - 1) * (K - G_NS / 2 + 1), [(K >= N / S - 1, "K >= G - 1"), _DIV], "(D.1)", tight=True,
                    title="the staleness sum in Q4")

# ============================================================================= theorem 1
beta_expr = S * B / (2 * L * N) * (sp.sqrt(1 + 8 * N / (B * M)) - 1)
beta_root_expr = S / (2 * L * N) * (sp.sqrt(1 + 8 * N * B / M) - 1)
Q1 = eta * (2 - eta * M * L / (S * B) - eta**2 * L**2 * M * N / (S**2 * B))
Q2 = (eta**2 * M * L * G_NS * (G_NS + 2 * G_NS**2 * eta * L - 1) - eta * N * (eta * G_NS * B - 1)) / (N * B * (K + 1)) * g0
Q3 = 2 * Delta / (K + 1)
Q4 = (eta**3 * L**2 * (sigma**2 + M * Gamma**2) / (S**2 * B * (K + 1)) * S * (G_NS - 1) * (K - G_NS / 2 + 1)
      + eta**2 * L * (Gamma**2 * M + sigma**2) / (S * B))
_T1_CONDS = [(eta <= beta_expr / sp.sqrt(K + 1), "eta <= beta / sqrt(K+1) (29)"), (K >= 2 * N / S, "K >= 2G"), _DIV]
theorem1 = _st("theorem1", r"\frac1{K+1}\sum_{k=0}^K\mathbb E\|\nabla f(\mathbf w_k)\|^2", "<=", (Q2 + Q3 + Q4) / Q1,
               _T1_CONDS, "Thm. 1, (D.2)", title="Theorem 1, explicit bound of Appendix D")
theorem1_order = _st("theorem1_order", r"\lim_{K\to\infty}\sqrt{K+1}\,\frac{Q_2+Q_3+Q_4}{Q_1}\Big|_{\eta=\beta/\sqrt{K+1}}",
                     "==", Delta / beta_expr + beta_expr * L * (sigma**2 + M * Gamma**2) / (2 * S * B), [_DIV], "(30)",
                     title="(30): the O(1/sqrt K) rate of the explicit bound, with its constant")
theorem1_rate = _st(
    "theorem1_rate", r"\frac1{K+1}\sum_{k=0}^K\mathbb E\|\nabla f(\mathbf w_k)\|^2", "<=",
    (Delta / beta_expr + beta_expr * L * (sigma**2 + M * Gamma**2) / (2 * S * B)) / sp.sqrt(K + 1), _T1_CONDS, "(30)",
    title="(30): the O(1/sqrt K) rate of Theorem 1 for every step of (29), with the constant of its derivation",
    reason="(30) is stated for every eta <= beta/sqrt(K+1); its constant is the limit of sqrt(K+1) (Q2+Q3+Q4)/Q1 at "
           "the largest step (theorem1_order)")
d_avg = sp.Piecewise((K / 2, K < dbar), (dbar - dbar * (dbar + 1) / (2 * (K + 1)), True))
x_cond = eta * L * (1 + rho) + 2 * (1 + lam) * dbar * (dbar + rho) * (eta * L) ** 2
theorem1_corrected = _st(
    "theorem1_corrected", r"\frac1{K+1}\sum_{k=0}^K\mathbb E\|\nabla f(\mathbf w_k)\|^2", "<=",
    2 * Delta / (eta * (K + 1)) + eta * L * sigma**2 / (S * B) + 2 * (1 + lam) * eta**2 * L**2 * sigma**2 / (S * B) * d_avg
    + (1 + 1 / lam) * Gamma**2,
    [(x_cond <= 1, "eta L (1 + rho) + 2 (1 + lambda) dbar (dbar + rho) (eta L)^2 <= 1")], "Thm. 1", status="corrected",
    reason="summing Lemma 1' and Lemma 3' (each H_j lies in at most dbar windows); the heterogeneity term cannot be "
           "cancelled as in (25)/(D.1), whose coefficients have the wrong sign whenever eta < SB/(ML)",
    corrects="theorem1",
    title="Theorem 1': the average squared gradient norm, from Lemmas 1' and 3'")

STATEMENTS = [s for s in (
    tau_async_printed, tau_async, staleness_printed, staleness, staleness_general, khat_idfl, khat_idfl_corrected,
    prop1_alpha, prop1_condition, rounds_loop_bound, rounds_done, smoothness_descent, assumption2_minibatch,
    assumption2_minibatch_corrected, lemma1, lemma1_corrected, lemma2, lemma2_corrected, lemma3, lemma3_corrected,
    round_descent, summed_descent, lemma4_27, lemma4_28, lemma4_exact, staleness_sum, theorem1,
    theorem1_order, theorem1_rate, theorem1_corrected)]
BY_NAME = {st.name: st for st in STATEMENTS}


# ============================================================================= numeric helpers
def _positive(**values):
    for name, v in values.items():
        V.array(v, name, low=0.0, open_low=True)


def _nonnegative(**values):
    for name, v in values.items():
        V.array(v, name, low=0.0)


def _beta_inputs(S, B, L, N, M):
    S, B, N = (V.array(v, n, kind="integer", low=1) for v, n in ((S, "S"), (B, "B"), (N, "N")))
    return S, B, V.array(L, "L", low=0.0, open_low=True), N, V.array(M, "M", low=0.0, open_low=True)


def beta_value(*, S, B, L, N, M):
    """Theorem 1's step-size constant ``beta = SB/(2LN) (sqrt(1 + 8N/(BM)) - 1)`` (elementwise).

    >>> round(float(beta_value(S=5, B=64, L=1, N=100, M=2)), 4)
    2.7081
    """
    S, B, L, N, M = _beta_inputs(S, B, L, N, M)
    return S * B / (2 * L * N) * (np.sqrt(1 + 8 * N / (B * M)) - 1)


def beta_root(*, S, B, L, N, M):
    """The positive root of ``Q1 / eta = 0``: ``S/(2LN) (sqrt(1 + 8NB/M) - 1)`` (>= ``beta``, equal iff ``B = 1``).

    >>> round(float(beta_root(S=5, B=64, L=1, N=100, M=2)), 4)
    3.9751
    """
    S, B, L, N, M = _beta_inputs(S, B, L, N, M)
    return S / (2 * L * N) * (np.sqrt(1 + 8 * N * B / M) - 1)


def theorem1_bound(*, eta, L, M, B, S, N, K, sigma, Gamma, Delta, g0):
    """The printed explicit bound ``(Q2 + Q3 + Q4)/Q1`` of Appendix D, as printed (no clipping: it can be
    negative for admissible inputs); conditions (29), ``K >= 2G`` and ``S | N`` are checked."""
    _positive(eta=eta, L=L, M=M)
    _nonnegative(sigma=sigma, Gamma=Gamma, Delta=Delta, g0=g0)
    return theorem1(eta=eta, L=L, M=M, B=B, S=S, N=N, K=K, sigma=sigma, Gamma=Gamma, Delta=Delta, g0=g0)


def x_max(*, dbar, M=1.0, S=1, B=1, lam=1.0):
    """The largest ``x = eta L`` allowed by Theorem 1': the positive root of
    ``x (1 + rho) + 2 (1 + lambda) dbar (dbar + rho) x^2 = 1`` (``1/(1 + rho)`` when ``dbar = 0``).

    >>> round(float(x_max(dbar=0)), 6), round(float(x_max(dbar=1)), 6)
    (1.0, 0.390388)
    """
    db = V.array(dbar, "dbar", kind="integer", low=0)
    M = V.array(M, "M", low=0.0, open_low=True)
    S, B = V.array(S, "S", kind="integer", low=1), V.array(B, "B", kind="integer", low=1)
    lam_ = V.array(lam, "lam", low=0.0, open_low=True)
    rh = np.maximum(M - 1, 0) / (S * B)
    a = 2 * (1 + lam_) * db * (db + rh)
    with np.errstate(divide="ignore", invalid="ignore"):
        root = (-(1 + rh) + np.sqrt((1 + rh) ** 2 + 4 * a)) / (2 * np.where(a > 0, a, 1.0))
    return np.where(a > 0, root, 1 / (1 + rh))


def staleness_average(*, dbar, K):
    """``(1/(K+1)) sum_{k=0}^K min(k, dbar)`` (elementwise).

    >>> float(staleness_average(dbar=3, K=9))
    2.4
    """
    db = V.array(dbar, "dbar", kind="integer", low=0)
    K = V.array(K, "K", kind="integer", low=0)
    return np.where(K < db, K / 2, db - db * (db + 1) / (2 * (K + 1)))


def theorem1_corrected_bound(*, eta, L, sigma, S, B, M, Delta, K, dbar, Gamma, lam=1.0):
    """Theorem 1' (corrected) evaluated on arrays; its step condition is checked."""
    _positive(eta=eta, L=L, M=M, lam=lam)
    _nonnegative(sigma=sigma, Gamma=Gamma, Delta=Delta)
    return theorem1_corrected(eta=eta, L=L, sigma=sigma, S=S, B=B, M=M, Delta=Delta, K=K, dbar=dbar, Gamma=Gamma,
                              lam=lam)
