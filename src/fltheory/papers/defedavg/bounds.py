r"""Every result of Wang, Li, Jin, Zhang, *Achieving Linear Speedup in Asynchronous Federated
Learning with Heterogeneous Clients*, as a :class:`fltheory.symbolic.Statement`.

Problem class: :math:`F=\frac1N\sum_iF_i`, smooth non-convex, every :math:`F_i` :math:`L`-smooth
(Assumption 1), unbiased stochastic gradients of variance at most :math:`\sigma^2` (Assumptions 2-3),
staleness :math:`t-\tau_i(t)\le\lambda` (Assumption 4); for the non-IID method also bounded
heterogeneity :math:`\nu^2` and bounded gradients :math:`G^2` along the iterates (Assumptions 5-6).
Method: DeFedAvg, :math:`w^{t+1}=w^t-\frac{\eta\bar\eta}{n}\sum_{i\in\mathcal I_t}\sum_{k<K}
\nabla f(w_i^{\tau_i(t),k};\xi_i^{t,k})` with :math:`\mathcal I_t` ``n`` uniform draws with
replacement (DeFedAvg-nIID, Algorithm 1) or the first ``n`` updates to arrive (DeFedAvg-IID,
Algorithm 2); simulators in ``algorithm.py``, exact moments in ``exact.py``.
:math:`\Phi_0=F(w^0)-F^*`; ``eta`` is the server and ``eta_bar`` the local learning rate.

=============================  =========  ==================================================
statement                      status     note
=============================  =========  ==================================================
``theorem1``                   printed    (12) at the prescribed rates, conditions (11) as T >= T_min
``theorem1_general``           printed    first line of (41): any (eta, eta_bar) under (11)
``theorem1_corrected``         corrected  (41) evaluated exactly at the prescribed rates: 5 sqrt(.)
``theorem2``                   printed    (14): sqrt(128 Phi0/(nKT)) + 8L/(KT) -- FALSE
``theorem2_appendix``          printed    the appendix's sqrt(128 L Phi0/(nKT)) + 8L/(KT) -- FALSE
``theorem2_general``           printed    the proof's bound for any (eta, eta_bar) under (13)
``theorem2_corrected``         corrected  sqrt(128 L sigma^2 Phi0/(nKT)) + 8L/(KT)
``lemma2``                     printed    (19): E||sum_{I_t} phi||^2 <= 2 n K sigma^2 (n <= N)
``lemma2_exact``               printed    (24)-(26): equality n(N+n-1)/N K sigma^2 (variance = sigma^2)
``lemma4_step``                printed    the drift recursion's step under eta_bar <= 1/(4LK)
``lemma9_step``                printed    the same step of Lemma 9 under eta_bar <= 1/(2 sqrt2 LK) -- FALSE, K >= 5
``lemma9_step_corrected``      corrected  under eta_bar <= 1/(2 sqrt3 LK)
``lemma1``                     printed    the bias of the nIID aggregate
``lemma3``                     printed    E||g_nIID||^2 <= (4K sigma^2 + 2G^2K^2)/n eta_bar^2 + 2 eta_bar^2 Y^t
``lemma4``                     printed    nIID client drift under eta_bar <= 1/(4LK)
``lemma5``                     printed    nIID staleness gap (needs Assumption 6, which it omits)
``descent_niid``               printed    (39), the per-round descent of DeFedAvg-nIID under (11)
``lemma6``                     printed    the bias of the IID aggregate (Lemma 1 over the n arrivals)
``lemma8``                     printed    (45): E||g_IID||^2 <= 2K eta_bar^2 sigma^2/n + 2 eta_bar^2 Y^t
``lemma9`` / ``_corrected``    p / c      client drift under eta_bar <= 1/(2 sqrt2 LK) / 1/(2 sqrt3 LK)
``lemma10``                    printed    E||w^t - w^tau||^2 <= 2K lam eta^2 eta_bar^2 sigma^2/n + 2 lam eta^2 eta_bar^2 sum Y
``descent_iid``                printed    (47), the per-round descent of DeFedAvg-IID under (13)
``T_epsilon``                  corrected  T_eps of the corrected Theorem 2 (root of a/sqrt T + b/T = eps)
``speedup_constant``           corrected  lim_{eps->0} n T_eps eps^2 = 128 Phi0 L sigma^2 / K (free of n)
``n_max_theorem2``             corrected  a^2/eps^2 >= T_min  iff  n <= 4 sigma^2/(K eps lambda)
``n_max_theorem1``             printed    the same for Theorem 1 with its (C3)
``lemma2_as_printed``          printed    (19) with no condition on n -- FALSE for n > N + 1 (N = 1, n = 3)
``lemma2_corrected``           corrected  (19) under n <= N + 1, what (26)(b) needs (tight at n = N + 1)
``lemma2_rounds``              printed    (20): the noise over the stale rounds <= 2 n K lambda sigma^2
``lemma7`` / ``_rounds``       printed    (43)-(44): n K sigma^2 and n K lambda sigma^2 (equalities for variance sigma^2)
``lemma5_step36``              printed    (36)(b): an extra 1/n^2 -- FALSE (a proof step; Lemma 5 stands)
``lemma5_step36_corrected``    corrected  (36)(b) without the 1/n^2
``theorem1_step``              printed    'eta eta_bar <= 1/(2LK) <=> ...' after (38) -- FALSE (needs 1/(4LK))
``theorem1_step_corrected``    corrected  the same step under eta eta_bar <= 1/(4LK), which (11) imposes
``rate_lambda1``               corrected  lambda = 1: O(1/sqrt(nKT) + n/T) with the corrected Theorem 2's constants
``theorem1_rate``              printed    (12) <= 16 sqrt(Phi0(16 sigma^2 L + 8 L G^2)/(nT)) + c/(KT): O(1/sqrt(nT))
=============================  =========  ==================================================

Why Theorem 2 is false as printed (our derivation, ``derivations/derive_defedavg_theorems.py``):
the proof's own bound before the rates are substituted is
:math:`B_2=\frac{4\Phi_0}{KT\eta\bar\eta}+\frac{8L\sigma^2\eta\bar\eta}{n}+8L^2K\sigma^2\bar\eta^2`; at the
prescribed :math:`\eta=\sqrt{nK\Phi_0/2}`, :math:`\bar\eta=1/(K\sqrt{\sigma^2LT})` it equals
:math:`\sqrt{128L\sigma^2\Phi_0/(nKT)}+8L/(KT)` exactly, so the printed (14) lacks the factor
:math:`L\sigma^2` under the root (also needed for the units to agree).  One client with a large
:math:`\sigma^2` breaks (14): the rates slow down like :math:`1/\sigma` while (14) does not move.
Theorem 1's printed constant :math:`\sqrt{256}=16` is valid but loose: the same substitution in
(41) gives 5.

Example
-------
>>> from fltheory.papers.defedavg import bounds as b
>>> r = b.prescribed_rates(n=4, K=5, T=400, L=1.0, sigma2=100.0, Phi0=4.0)
>>> round(r.eta, 4), round(r.eta_bar, 6)
(6.3246, 0.001)
>>> round(float(b.theorem2_corrected(n=4, K=5, T=400, L=1.0, sigma2=100.0, Phi0=4.0, lam=1)), 4)
2.5338
>>> round(float(b.rounds_to_epsilon(n=4, K=5, L=1.0, sigma2=100.0, Phi0=4.0, epsilon=0.5)), 1)
10246.4
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sp

from ... import validation as V
from ...symbolic import Statement, conditions

__all__ = [
    "PAPER", "STATEMENTS", "BY_NAME", "SYMBOLS", "prescribed_rates", "Rates", "T_min", "rounds_to_epsilon", "n_max",
    "theorem1", "theorem1_general", "theorem1_corrected", "theorem2", "theorem2_appendix", "theorem2_general",
    "theorem2_corrected", "lemma2", "lemma2_exact", "lemma4_step", "lemma9_step", "lemma9_step_corrected",
    "lemma6", "lemma8", "lemma9", "lemma9_corrected", "lemma10", "lemma1", "lemma3", "lemma4", "lemma5", "descent_niid",
    "descent_iid", "T_epsilon", "speedup_constant", "n_max_theorem1", "n_max_theorem2",
    "B1_expr", "B2_expr",
]

PAPER = "defedavg"
SOURCE = "Wang, Li, Jin, Zhang, Achieving Linear Speedup in Asynchronous FL with Heterogeneous Clients"


def _p(name: str) -> sp.Symbol:
    return sp.Symbol(name, positive=True)


N, n, K, T, lam = (_p(s) for s in ("N", "n", "K", "T", "lam"))
L, sigma2, Phi0, eta, eta_bar, epsilon = (_p(s) for s in ("L", "sigma2", "Phi0", "eta", "eta_bar", "epsilon"))
nu2, G2 = (sp.Symbol(s, nonnegative=True) for s in ("nu2", "G2"))
grad_sq, Y_t, Y_sum = (sp.Symbol(s, nonnegative=True) for s in ("grad_sq", "Y_t", "Y_sum"))
drift, stale_sq = (sp.Symbol(s, nonnegative=True) for s in ("drift", "stale_sq"))
SYMBOLS = {str(s): s for s in (N, n, K, T, lam, L, sigma2, Phi0, eta, eta_bar, epsilon, nu2, G2, grad_sq, Y_t, Y_sum,
                               drift, stale_sq)}
LATEX = {"sigma2": r"\sigma^2", "Phi0": r"\Phi_0", "eta_bar": r"\bar\eta", "lam": r"\lambda", "nu2": r"\nu^2",
         "G2": "G^2", "grad_sq": r"\mathbb E\|\nabla F(w^t)\|^2", "Y_t": "Y^t",
         "Y_sum": r"\sum_{s=(t-\lambda)_+}^{t-1}Y^s", "epsilon": r"\epsilon",
         "drift": r"\frac1n\sum_{i\in I_t}\sum_k\mathbb E\|w_i^{\tau_i(t),k}-w^{\tau_i(t)}\|^2",
         "stale_sq": r"\frac1n\sum_{i\in I_t}\mathbb E\|w^{\tau_i(t)}-w^t\|^2"}
LATEX_N = {**LATEX, "drift": r"\frac1N\sum_{i=1}^N\sum_k\mathbb E\|w_i^{\tau_i(t),k}-w^{\tau_i(t)}\|^2",
           "stale_sq": r"\frac1N\sum_{i=1}^N\mathbb E\|w^{\tau_i(t)}-w^t\|^2"}   # the nIID lemmas average over all N
AVG = r"\frac1T\sum_{t=0}^{T-1}\mathbb E\|\nabla F(w^t)\|^2"

# ----------------------------------------------------------------------------- Theorem 1 (nIID)
C1 = 4 * sigma2 * L + 2 * L * K * G2              # the paper's 4 sigma^2 L + 2 L K G^2
B1_expr = (4 * Phi0 / (K * T * eta * eta_bar) + (16 * sigma2 * L + 8 * L * G2 * K) * eta * eta_bar / n
           + 8 * L**2 * K * (sigma2 + 8 * K * nu2) * eta_bar**2)
_R1_second = 8 * L**2 * (sigma2 + 8 * K * nu2) / (C1 * K * T)
R1_paper = sp.sqrt(256 * Phi0 * (16 * sigma2 * L + 8 * L * G2 * K) / (n * K * T)) + _R1_second
R1_exact = 5 * sp.sqrt(Phi0 * (16 * sigma2 * L + 8 * L * G2 * K) / (n * K * T)) + _R1_second
_S = 2 * sigma2 + K * G2
T_MIN1 = (32 * L / _S, 32 * n * Phi0 * K * L * lam**2 / _S,
          32 * n * Phi0 * K * L * lam**2 * (2 * sigma2 + G2 * K * lam) ** 2 / _S**3)

_BASE = [(n <= N, "n <= N (n draws from N clients)"), (lam >= 1, "lambda >= 1 (Assumption 4)")]
_COND11 = [
    (eta_bar <= 1 / (8 * L * K), "(11): eta_bar <= 1/(8 L K)"),
    (eta * eta_bar <= 1 / (4 * L * K * lam), "(11): eta eta_bar <= 1/(4 L K lambda)"),
    (eta * eta_bar <= (2 * sigma2 + G2 * K) / (8 * sigma2 * L * K * lam + 4 * L * G2 * K**2 * lam**2),
     "(11): eta eta_bar <= (2 sigma^2 + G^2 K)/(8 sigma^2 L K lambda + 4 L G^2 K^2 lambda^2)"),
]
_COND11_T = [
    (T >= T_MIN1[0], "(11) at the prescribed rates: T >= 32 L/(2 sigma^2 + K G^2)"),
    (T >= T_MIN1[1], "(11) at the prescribed rates: T >= 32 n Phi0 K L lambda^2/(2 sigma^2 + K G^2)"),
    (T >= T_MIN1[2], "(11) at the prescribed rates: T >= 32 n Phi0 K L lambda^2 (2 sigma^2 + G^2 K lambda)^2"
                     "/(2 sigma^2 + K G^2)^3"),
]

theorem1 = Statement(
    "theorem1", lhs=AVG, relation="<=", expr=R1_paper, conditions=conditions(*_BASE, *_COND11_T), paper=PAPER,
    equation="Theorem 1, (12)", tight=False, latex_names=LATEX,
    title="Theorem 1 (DeFedAvg-nIID) at eta = sqrt(4nK Phi0), eta_bar = 1/(K sqrt((4 sigma^2 L + 2LKG^2)T))")
theorem1_general = Statement(
    "theorem1_general", lhs=AVG, relation="<=", expr=B1_expr, conditions=conditions(*_BASE, *_COND11),
    paper=PAPER, equation="(41), first line", tight=False, latex_names=LATEX,
    title="Theorem 1's bound for any learning rates satisfying (11)")
theorem1_corrected = theorem1.with_changes(
    name="theorem1_corrected", expr=R1_exact, status="corrected", corrects="theorem1",
    reason="(41) evaluated exactly at the prescribed rates gives the leading constant 5, not sqrt(256) = 16; "
           "the printed bound is valid but 16/5 times looser in its first term",
    title="Theorem 1 with the exact constant of (41) at the prescribed rates")

# ----------------------------------------------------------------------------- Theorem 2 (IID)
B2_expr = 4 * Phi0 / (K * T * eta * eta_bar) + 8 * L * sigma2 * eta * eta_bar / n + 8 * L**2 * K * sigma2 * eta_bar**2
T_MIN2 = (48 * L / sigma2, 8 * n * Phi0 * K * L * lam**2 / sigma2)
_COND13 = [
    (eta_bar <= 1 / (4 * sp.sqrt(3) * L * K), "(13): eta_bar <= 1/(4 sqrt(3) L K)"),
    (eta * eta_bar <= 1 / (4 * L * K * lam), "(13): eta eta_bar <= 1/(4 L K lambda)"),
]
_COND13_T = [
    (T >= T_MIN2[0], "(13) at the prescribed rates: T >= 48 L/sigma^2"),
    (T >= T_MIN2[1], "(13) at the prescribed rates: T >= 8 n Phi0 K L lambda^2/sigma^2"),
]
_LAM = [(lam >= 1, "lambda >= 1 (Assumption 4)")]
R2_printed = sp.sqrt(128 * Phi0 / (n * K * T)) + 8 * L / (K * T)
R2_appendix = sp.sqrt(128 * L * Phi0 / (n * K * T)) + 8 * L / (K * T)
R2 = sp.sqrt(128 * L * sigma2 * Phi0 / (n * K * T)) + 8 * L / (K * T)

theorem2 = Statement(
    "theorem2", lhs=AVG, relation="<=", expr=R2_printed, conditions=conditions(*_LAM, *_COND13_T), paper=PAPER,
    equation="Theorem 2, (14)", tight=False, latex_names=LATEX,
    title="Theorem 2 (DeFedAvg-IID) as printed, at eta = sqrt(nK Phi0/2), eta_bar = 1/(K sqrt(sigma^2 L T))")
theorem2_appendix = theorem2.with_changes(
    name="theorem2_appendix", expr=R2_appendix, equation="Theorem 2, proof (appendix)",
    title="Theorem 2 as printed at the end of its proof: sqrt(128 L Phi0/(nKT)) + 8L/(KT)")
theorem2_general = Statement(
    "theorem2_general", lhs=AVG, relation="<=", expr=B2_expr, conditions=conditions(*_LAM, *_COND13), paper=PAPER,
    equation="Theorem 2, proof (sum of (47))", tight=False, latex_names=LATEX,
    title="Theorem 2's bound for any learning rates satisfying (13)")
theorem2_corrected = theorem2.with_changes(
    name="theorem2_corrected", expr=R2, status="corrected", corrects="theorem2",
    reason="the proof's bound at the prescribed rates is sqrt(128 L sigma^2 Phi0/(nKT)) + 8L/(KT): "
           "the printed (14) drops L sigma^2 under the square root",
    title="Theorem 2 with L sigma^2 under the square root")

# ----------------------------------------------------------------------------- lemmas
lemma2 = Statement(
    "lemma2", lhs=r"\mathbb E\|\sum_{j\in\mathcal I_t}\sum_k(g_j^{t,k}-G_j^{t,k})\|^2", relation="<=",
    expr=2 * n * K * sigma2, conditions=conditions((n <= N, "n <= N")), paper=PAPER, equation="Lemma 2, (19)",
    tight=False, latex_names=LATEX, title="Lemma 2: the noise of n draws with replacement")
lemma2_exact = Statement(
    "lemma2_exact", lhs=r"\mathbb E\|\sum_{j\in\mathcal I_t}\sum_k(g_j^{t,k}-G_j^{t,k})\|^2", relation="==",
    expr=n * (N + n - 1) / N * K * sigma2, paper=PAPER, equation="Lemma 2, (24)-(26)", tight=True,
    latex_names=LATEX, title="Lemma 2's intermediate equality (every per-step noise variance equal to sigma^2)")

_DRIFT_LHS = r"1+\frac1{2K-1}+%dL^2K\bar\eta^2"    # %d: the constant of the Young split (8 or 6)
lemma4_step = Statement(
    "lemma4_step", lhs=_DRIFT_LHS % 8, relation="<=", expr=1 + 1 / (K - 1),
    conditions=conditions((K >= 2, "K >= 2"), (eta_bar <= 1 / (4 * L * K), "eta_bar <= 1/(4 L K)")), paper=PAPER,
    equation="Lemma 4, recursion (35)", tight=True, latex_names=LATEX,
    title="Lemma 4: the Young split's factor stays below 1 + 1/(K-1)")
lemma9_step = lemma4_step.with_changes(
    name="lemma9_step", lhs=_DRIFT_LHS % 6, equation="Lemma 9, drift recursion",
    conditions=conditions((K >= 2, "K >= 2"), (eta_bar <= 1 / (2 * sp.sqrt(2) * L * K),
                                                "eta_bar <= 1/(2 sqrt(2) L K)")),
    title="Lemma 9 as printed: the factor under eta_bar <= 1/(2 sqrt 2 L K)")
lemma9_step_corrected = lemma9_step.with_changes(
    name="lemma9_step_corrected", status="corrected", corrects="lemma9_step",
    conditions=conditions((K >= 2, "K >= 2"), (eta_bar <= 1 / (2 * sp.sqrt(3) * L * K),
                                                "eta_bar <= 1/(2 sqrt(3) L K)")),
    reason="1 + 1/(2K-1) + 6 L^2 K eta_bar^2 <= 1 + 1/(K-1) for all K >= 2 needs 6 L^2 K^2 eta_bar^2 <= 1/2, "
           "i.e. eta_bar <= 1/(2 sqrt 3 L K); the printed 1/(2 sqrt 2 L K) fails from K = 5 on. Theorem 2 is "
           "unaffected: (13) already imposes eta_bar <= 1/(4 sqrt 3 L K)",
    title="Lemma 9's step under eta_bar <= 1/(2 sqrt 3 L K)")

lemma6 = Statement(
    "lemma6", lhs=r"\mathbb E\langle\nabla F(w^t),\bar\eta K\nabla F(w^t)-g^t_{\rm IID}\rangle", relation="<=",
    expr=K / 2 * eta_bar * grad_sq + L**2 * eta_bar * drift + L**2 * K * eta_bar * stale_sq - eta_bar / (2 * K) * Y_t,
    paper=PAPER, equation="Lemma 6", tight=False, latex_names=LATEX,
    title="Lemma 6: the bias of the IID aggregate (Lemma 1 over the n arrivals)")
lemma8 = Statement(
    "lemma8", lhs=r"\mathbb E\|g^t_{\rm IID}\|^2", relation="<=",
    expr=2 * K * eta_bar**2 * sigma2 / n + 2 * eta_bar**2 * Y_t, paper=PAPER, equation="Lemma 8, (45)", tight=False,
    latex_names=LATEX, title="Lemma 8: the second moment of the IID aggregate")
_LEMMA9 = 2 * K**2 * eta_bar**2 * sigma2 + 12 * K**3 * eta_bar**2 * grad_sq + 12 * L**2 * K**3 * eta_bar**2 * stale_sq
lemma9 = Statement(
    "lemma9", lhs=LATEX["drift"], relation="<=", expr=_LEMMA9,
    conditions=conditions((eta_bar <= 1 / (2 * sp.sqrt(2) * L * K), "eta_bar <= 1/(2 sqrt(2) L K)")), paper=PAPER,
    equation="Lemma 9", tight=False, latex_names=LATEX, title="Lemma 9: client drift, under the printed condition")
lemma9_corrected = lemma9.with_changes(
    name="lemma9_corrected", status="corrected", corrects="lemma9",
    conditions=conditions((eta_bar <= 1 / (2 * sp.sqrt(3) * L * K), "eta_bar <= 1/(2 sqrt(3) L K)")),
    reason="the proof's recursion needs eta_bar <= 1/(2 sqrt 3 L K) (see lemma9_step); under it the proof is complete",
    title="Lemma 9: client drift, under the condition its proof needs")
lemma10 = Statement(
    "lemma10", lhs=r"\mathbb E\|w^t-w^{\tau_i(t)}\|^2", relation="<=",
    expr=2 * K * lam * eta**2 * eta_bar**2 * sigma2 / n + 2 * lam * eta**2 * eta_bar**2 * Y_sum,
    conditions=conditions(*_LAM), paper=PAPER, equation="Lemma 10", tight=False, latex_names=LATEX,
    title="Lemma 10: the distance between the current and a stale model")

_NIID_NOISE = (4 * sigma2 * K + 2 * G2 * K**2) / n
lemma1 = Statement(
    "lemma1", lhs=r"\mathbb E\langle\nabla F(w^t),\bar\eta K\nabla F(w^t)-g^t_{\rm nIID}\rangle", relation="<=",
    expr=K / 2 * eta_bar * grad_sq + L**2 * eta_bar * drift + L**2 * K * eta_bar * stale_sq - eta_bar / (2 * K) * Y_t,
    paper=PAPER, equation="Lemma 1", tight=False, latex_names=LATEX_N,
    title="Lemma 1: the bias of the nIID aggregate (drift and staleness averaged over all N clients)")
lemma3 = Statement(
    "lemma3", lhs=r"\mathbb E\|g^t_{\rm nIID}\|^2", relation="<=", expr=_NIID_NOISE * eta_bar**2 + 2 * eta_bar**2 * Y_t,
    conditions=conditions((n <= N, "n <= N")), paper=PAPER, equation="Lemma 3", tight=False, latex_names=LATEX_N,
    title="Lemma 3: the second moment of the nIID aggregate")
lemma4 = Statement(
    "lemma4", lhs=LATEX_N["drift"], relation="<=",
    expr=(2 * K**2 * eta_bar**2 * (sigma2 + 8 * K * nu2) + 16 * K**3 * eta_bar**2 * grad_sq
          + 16 * L**2 * K**3 * eta_bar**2 * stale_sq),
    conditions=conditions((eta_bar <= 1 / (4 * L * K), "eta_bar <= 1/(4 L K)")), paper=PAPER, equation="Lemma 4",
    tight=False, latex_names=LATEX_N, title="Lemma 4: client drift of DeFedAvg-nIID (averaged over all N clients)")
lemma5 = Statement(
    "lemma5", lhs=r"\mathbb E\|w^t-w^{\tau_i(t)}\|^2", relation="<=",
    expr=(4 * sigma2 * K * lam + 2 * G2 * K**2 * lam**2) / n * eta**2 * eta_bar**2 + 2 * lam * eta**2 * eta_bar**2 * Y_sum,
    conditions=conditions(*_BASE), paper=PAPER, equation="Lemma 5", tight=False, latex_names=LATEX_N,
    title="Lemma 5: the staleness gap of DeFedAvg-nIID (it needs Assumption 6, which its statement omits)")
descent_niid = Statement(
    "descent_niid", lhs=r"\mathbb EF(w^{t+1})-\mathbb EF(w^t)", relation="<=",
    expr=(-K / 4 * eta * eta_bar * grad_sq + _NIID_NOISE * L * eta**2 * eta_bar**2
          + 2 * L**2 * K**2 * (sigma2 + 8 * K * nu2) * eta * eta_bar**3 - eta * eta_bar / (4 * K) * Y_t
          + 4 * L**2 * K * lam * eta**3 * eta_bar**3 * Y_sum),
    conditions=conditions(*_BASE, *_COND11), paper=PAPER, equation="(39)", tight=False, latex_names=LATEX_N,
    title="the per-round descent of DeFedAvg-nIID")

descent_iid = Statement(
    "descent_iid", lhs=r"\mathbb EF(w^{t+1})-\mathbb EF(w^t)", relation="<=",
    expr=(-K / 4 * eta * eta_bar * grad_sq + 2 * L * K * eta**2 * eta_bar**2 * sigma2 / n
          + 2 * L**2 * K**2 * eta * eta_bar**3 * sigma2 - eta * eta_bar / (4 * K) * Y_t
          + 4 * L**2 * K * lam * eta**3 * eta_bar**3 * Y_sum),
    conditions=conditions(*_LAM, *_COND13), paper=PAPER, equation="(47)", tight=False, latex_names=LATEX,
    title="the per-round descent of DeFedAvg-IID")

# ----------------------------------------------------------------------------- corollaries
_a2 = sp.sqrt(128 * L * sigma2 * Phi0 / (n * K))
_b2 = 8 * L / K
T_EPS2 = ((_a2 + sp.sqrt(_a2**2 + 4 * _b2 * epsilon)) / (2 * epsilon)) ** 2
T_epsilon = Statement(
    "T_epsilon", lhs=r"T_\epsilon", relation="==", expr=T_EPS2, paper=PAPER,
    equation="corollary of Theorem 2", status="corrected", tight=True, latex_names=LATEX,
    reason="rounds for the corrected Theorem 2's bound to reach epsilon (the root of a/sqrt(T) + b/T = epsilon)",
    title="rounds to epsilon from the corrected Theorem 2")
speedup_constant = Statement(
    "speedup_constant", lhs=r"\lim_{\epsilon\to0}nT_\epsilon\epsilon^2", relation="==",
    expr=128 * Phi0 * L * sigma2 / K, paper=PAPER, equation="corollary of Theorem 2", status="corrected",
    tight=True, latex_names=LATEX, reason="computed from the corrected Theorem 2; free of n (linear speedup)",
    title="linear speedup: n T_eps eps^2 tends to a constant free of n")
n_max_theorem2 = Statement(
    "n_max_theorem2", lhs=r"n_{\max}", relation="==", expr=4 * sigma2 / (K * epsilon * lam), paper=PAPER,
    equation="corollary of Theorem 2 and (13)", status="corrected", tight=True, latex_names=LATEX,
    reason="T_eps ~ a^2/eps^2 of the corrected Theorem 2 meets the T-condition of (13) iff n <= n_max",
    title="the largest n with linear speedup at accuracy epsilon (Theorem 2)")
n_max_theorem1 = Statement(
    "n_max_theorem1", lhs=r"n_{\max}", relation="==",
    expr=8 * (2 * sigma2 + K * G2) ** 2 / (K * epsilon * lam * (2 * sigma2 + G2 * K * lam)), paper=PAPER,
    equation="corollary of Theorem 1 and (11)", tight=True, latex_names=LATEX,
    title="the largest n with linear speedup at accuracy epsilon (Theorem 1, printed constant)")

STATEMENTS = [
    theorem1, theorem1_general, theorem1_corrected, theorem2, theorem2_appendix, theorem2_general,
    theorem2_corrected, lemma2, lemma2_exact, lemma4_step, lemma9_step, lemma9_step_corrected, lemma6, lemma8,
    lemma9, lemma9_corrected, lemma10, descent_iid, lemma1, lemma3, lemma4, lemma5, descent_niid,
    T_epsilon, speedup_constant, n_max_theorem2, n_max_theorem1]
BY_NAME = {s.name: s for s in STATEMENTS}


# ============================================================================= plain functions
@dataclass(frozen=True)
class Rates:
    """The prescribed learning rates of a theorem: server ``eta``, local ``eta_bar`` and the product."""

    eta: float
    eta_bar: float

    @property
    def product(self) -> float:
        return self.eta * self.eta_bar


def _common(n, K, L, sigma2, Phi0):
    return (V.integer(n, "n", low=1, high=10**9), V.integer(K, "K", low=1, high=10**9),
            V.real(L, "L", low=0.0, open_low=True), V.real(sigma2, "sigma2", low=0.0, open_low=True),
            V.real(Phi0, "Phi0", low=0.0, open_low=True))


def prescribed_rates(*, n: int, K: int, T: int, L: float, sigma2: float, Phi0: float, G2: float | None = None) -> Rates:
    """The learning rates of Theorem 2 (``G2=None``) or Theorem 1 (``G2`` given).

    Theorem 2: ``eta = sqrt(n K Phi0/2)``, ``eta_bar = 1/(K sqrt(sigma^2 L T))``; Theorem 1:
    ``eta = sqrt(4 n K Phi0)``, ``eta_bar = 1/(K sqrt((4 sigma^2 L + 2 L K G^2) T))`` (the factor ``K``
    sits outside the root, as the substitution in (41) shows).

    >>> r = prescribed_rates(n=2, K=1, T=100, L=1.0, sigma2=1.0, Phi0=1.0, G2=1.0)
    >>> round(r.eta, 4), round(r.eta_bar, 4)
    (2.8284, 0.0408)
    """
    n, K, L, sigma2, Phi0 = _common(n, K, L, sigma2, Phi0)
    T = V.integer(T, "T", low=1, high=10**15)
    if G2 is None:
        return Rates(float(np.sqrt(n * K * Phi0 / 2)), float(1 / (K * np.sqrt(sigma2 * L * T))))
    G2 = V.real(G2, "G2", low=0.0)
    return Rates(float(np.sqrt(4 * n * K * Phi0)), float(1 / (K * np.sqrt((4 * sigma2 * L + 2 * L * K * G2) * T))))


def T_min(*, n: int, K: int, lam: int, L: float, sigma2: float, Phi0: float, G2: float | None = None) -> float:
    """The smallest ``T`` for which the prescribed rates satisfy the theorem's conditions ((13), or (11)
    when ``G2`` is given): ``max(48L/sigma^2, 8 n Phi0 K L lambda^2/sigma^2)`` for Theorem 2.

    >>> T_min(n=4, K=5, lam=2, L=1.0, sigma2=100.0, Phi0=4.0)
    25.6
    """
    n, K, L, sigma2, Phi0 = _common(n, K, L, sigma2, Phi0)
    lam = V.integer(lam, "lam", low=1, high=10**9)
    if G2 is None:
        return float(max(48 * L / sigma2, 8 * n * Phi0 * K * L * lam**2 / sigma2))
    G2 = V.real(G2, "G2", low=0.0)
    S = 2 * sigma2 + K * G2
    return float(max(32 * L / S, 32 * n * Phi0 * K * L * lam**2 / S,
                     32 * n * Phi0 * K * L * lam**2 * (2 * sigma2 + G2 * K * lam) ** 2 / S**3))


def rounds_to_epsilon(*, n, K: int, L: float, sigma2: float, Phi0: float, epsilon: float):
    """Rounds for the corrected Theorem 2 bound ``a/sqrt(T) + b/T`` to reach ``epsilon``:
    ``((a + sqrt(a^2 + 4 b eps))/(2 eps))^2`` with ``a = sqrt(128 L sigma^2 Phi0/(nK))``, ``b = 8L/K``
    (``n`` may be an array: array in, array out).

    >>> float(rounds_to_epsilon(n=1, K=1, L=1.0, sigma2=1.0, Phi0=1.0, epsilon=1.0)) > 128
    True
    """
    K, L, sigma2, Phi0 = (V.integer(K, "K", low=1, high=10**9), V.real(L, "L", low=0.0, open_low=True),
                          V.real(sigma2, "sigma2", low=0.0, open_low=True), V.real(Phi0, "Phi0", low=0.0, open_low=True))
    epsilon = V.real(epsilon, "epsilon", low=0.0, open_low=True)
    n_ = V.array(n, "n", xp=np, kind="integer", low=1).astype(float)
    a = np.sqrt(128 * L * sigma2 * Phi0 / (n_ * K))
    b = 8 * L / K
    out = ((a + np.sqrt(a * a + 4 * b * epsilon)) / (2 * epsilon)) ** 2
    return out if np.ndim(n) else float(out)


def n_max(*, K: int, lam: int, sigma2: float, epsilon: float, G2: float | None = None) -> float:
    """The largest ``n`` for which ``T_eps ~ a^2/eps^2`` still meets the theorem's ``T``-condition
    (linear speedup at accuracy ``epsilon``): ``4 sigma^2/(K eps lambda)`` for Theorem 2 and
    ``8 (2 sigma^2 + K G^2)^2/(K eps lambda (2 sigma^2 + G^2 K lambda))`` for Theorem 1 (``G2`` given).

    >>> n_max(K=5, lam=2, sigma2=100.0, epsilon=0.5)
    80.0
    """
    K, lam = V.integer(K, "K", low=1, high=10**9), V.integer(lam, "lam", low=1, high=10**9)
    sigma2 = V.real(sigma2, "sigma2", low=0.0, open_low=True)
    epsilon = V.real(epsilon, "epsilon", low=0.0, open_low=True)
    if G2 is None:
        return float(4 * sigma2 / (K * epsilon * lam))
    G2 = V.real(G2, "G2", low=0.0)
    return float(8 * (2 * sigma2 + K * G2) ** 2 / (K * epsilon * lam * (2 * sigma2 + G2 * K * lam)))


# ============================================================================= coverage of every numbered result
# Statements of results that had no check (issue 22, item 3); their checks are in ``checks_coverage.py``.
_NOISE_LHS = r"\mathbb E\|\sum_{j\in\mathcal I_t}\sum_{k<K}(g_j^{t,k}-G_j^{t,k})\|^2"
_NOISE_ROUNDS_LHS = r"\mathbb E\|\sum_{s=\tau_i(t)}^{t-1}\sum_{j\in\mathcal I_s}\sum_{k<K}(g_j^{s,k}-G_j^{s,k})\|^2"
lemma2_as_printed = lemma2.with_changes(
    name="lemma2_as_printed", conditions=(), equation="Lemma 2, (19), with the lemma's own hypotheses",
    title="Lemma 2 as printed: n draws with replacement from N, no condition on n (the proof's (26)(b) uses n <= N)")
lemma2_corrected = lemma2.with_changes(
    name="lemma2_corrected", status="corrected", corrects="lemma2_as_printed", tight=True,
    conditions=conditions((n <= N + 1, "n <= N + 1")), equation="Lemma 2, (19) and (26)",
    reason="(26) gives n(N+n-1)/N K sigma^2, which is <= 2nK sigma^2 iff n <= N + 1 (equality at n = N + 1); the "
           "lemma states no condition on n although Algorithm 1 allows n > N",
    title="Lemma 2 under the condition its proof needs, n <= N + 1")
lemma2_rounds = Statement(
    "lemma2_rounds", lhs=_NOISE_ROUNDS_LHS, relation="<=", expr=2 * n * K * lam * sigma2,
    conditions=conditions((n <= N, "n <= N"), *_LAM), paper=PAPER, equation="Lemma 2, (20)", tight=False,
    latex_names=LATEX, title="Lemma 2 (20): the noise accumulated over the stale rounds of DeFedAvg-nIID")
lemma7 = Statement(
    "lemma7", lhs=_NOISE_LHS.replace(r"\mathcal I", "{I}"), relation="<=", expr=n * K * sigma2, paper=PAPER,
    equation="Lemma 7, (43)", tight=True, latex_names=LATEX,
    title="Lemma 7 (43): the noise of the n updates of DeFedAvg-IID (equality for noise of variance sigma^2)")
lemma7_rounds = Statement(
    "lemma7_rounds", lhs=_NOISE_ROUNDS_LHS.replace(r"\mathcal I", "{I}"), relation="<=", expr=n * K * lam * sigma2,
    conditions=conditions(*_LAM), paper=PAPER, equation="Lemma 7, (44)", tight=True, latex_names=LATEX,
    title="Lemma 7 (44): the noise accumulated over the stale rounds of DeFedAvg-IID")
_LATEX_36 = {**LATEX, "Y_sum": r"\sum_{s=(t-\lambda)_+}^{t-1}\mathbb E\|\frac1n\sum_{j\in\mathcal I_s}\sum_kG_j^{s,k}\|^2"}
lemma5_step36 = Statement(
    "lemma5_step36", lhs=r"\mathbb E\|w^t-w^{\tau_i(t)}\|^2", relation="<=",
    expr=4 * K * lam * eta**2 * eta_bar**2 * sigma2 / n + 2 * lam * eta**2 * eta_bar**2 / n**2 * Y_sum,
    conditions=conditions(*_LAM), paper=PAPER, equation="Lemma 5, proof, (36)(b)", tight=False,
    latex_names=_LATEX_36, title="(36)(b) as printed: 2 lambda eta^2 eta_bar^2/n^2 in front of the average over I_s")
lemma5_step36_corrected = lemma5_step36.with_changes(
    name="lemma5_step36_corrected", status="corrected", corrects="lemma5_step36",
    expr=4 * K * lam * eta**2 * eta_bar**2 * sigma2 / n + 2 * lam * eta**2 * eta_bar**2 * Y_sum,
    reason="(36)(a) has 2 eta^2 eta_bar^2/n^2 |t - tau| sum_s E||sum_{I_s} sum_k G||^2; writing the sum over I_s as n "
           "times the average cancels the 1/n^2, which (b) keeps: the printed (36) is n^2 times too small. The next "
           "display (and Lemma 5) follows (a), not (b), so Lemma 5 is unaffected",
    title="(36)(b) without the extra 1/n^2")
theorem1_step = Statement(
    "theorem1_step", lhs=r"L\eta^2\bar\eta^2", relation="<=", expr=eta * eta_bar / (4 * K),
    conditions=conditions((eta * eta_bar <= 1 / (2 * L * K), "eta eta_bar <= 1/(2 L K)")), paper=PAPER,
    equation="Theorem 1, proof, after (38)", tight=False, latex_names=LATEX,
    title="the proof's 'eta eta_bar <= 1/(2LK) <=> eta eta_bar/(2K) - L eta^2 eta_bar^2 >= eta eta_bar/(4K)'")
theorem1_step_corrected = theorem1_step.with_changes(
    name="theorem1_step_corrected", status="corrected", corrects="theorem1_step", tight=True,
    conditions=conditions((eta * eta_bar <= 1 / (4 * L * K), "eta eta_bar <= 1/(4 L K)")),
    reason="eta eta_bar/(2K) - L eta^2 eta_bar^2 >= eta eta_bar/(4K) iff eta eta_bar <= 1/(4LK), not 1/(2LK); (11) "
           "imposes eta eta_bar <= 1/(4LK lambda) <= 1/(4LK), so Theorem 1 is unaffected",
    title="the same step under eta eta_bar <= 1/(4LK)")
rate_lambda1 = Statement(
    "rate_lambda1", lhs=AVG, relation="<=", expr=sp.sqrt(128 * L * sigma2 * Phi0 / (n * K * T)) + 8 * L * n / T,
    conditions=conditions((lam <= 1, "lambda = 1"), *_LAM, *_COND13_T), paper=PAPER,
    equation="after Theorem 2: lambda = 1 => O(1/sqrt(nKT) + n/T)", status="corrected", corrects="theorem2",
    tight=False, latex_names=LATEX,
    reason="the text's O(1/sqrt(nKT) + n/T) at lambda = 1, with the constants of the corrected Theorem 2 (the printed "
           "(14) lacks L sigma^2 under the root); it follows from theorem2_corrected because 1/(KT) <= n/T, and its "
           "n/T is looser than the 1/(KT) that Theorem 2 gives",
    title="lambda = 1: O(1/sqrt(nKT) + n/T) (text after Theorem 2), with the corrected Theorem 2's constants")
_R1_first_nT = 16 * sp.sqrt(Phi0 * (16 * sigma2 * L + 8 * L * G2) / (n * T))
theorem1_rate = Statement(
    "theorem1_rate", lhs=r"\text{the right-hand side of (12)}", relation="<=",
    expr=_R1_first_nT + sp.Max(2 * L, 32 * L * nu2 / G2) / (K * T), conditions=conditions((K >= 1, "K >= 1")),
    paper=PAPER, equation="after Theorem 1: (12) is O(1/sqrt(nT) + 1/(KT))", tight=True, latex_names=LATEX,
    title="Theorem 1's rate O(1/sqrt(nT) + 1/(KT)): (12) <= 16 sqrt(Phi0 (16 sigma^2 L + 8 L G^2)/(nT)) + "
          "max(2L, 32 L nu^2/G^2)/(KT); not O(1/sqrt(nKT)): the G^2 K term under the root cancels the K")
COVERAGE_STATEMENTS = [lemma2_as_printed, lemma2_corrected, lemma2_rounds, lemma7, lemma7_rounds, lemma5_step36,
                       lemma5_step36_corrected, theorem1_step, theorem1_step_corrected, rate_lambda1, theorem1_rate]
STATEMENTS += COVERAGE_STATEMENTS
BY_NAME.update({s.name: s for s in COVERAGE_STATEMENTS})
__all__ += [s.name for s in COVERAGE_STATEMENTS] + ["COVERAGE_STATEMENTS"]
