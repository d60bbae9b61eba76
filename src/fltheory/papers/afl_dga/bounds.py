r"""Every result of Li, Gong, *Anarchic Federated Learning with Delayed Gradient Averaging* as a
:class:`fltheory.symbolic.Statement`, printed and (where the printed one is false) corrected.

Problem class: :math:`f=\frac1N\sum_if_i` with every :math:`f_i` :math:`L`-smooth (Assumption 1),
unbiased stochastic gradients of variance :math:`\le\sigma^2` drawn independently (Assumption 2),
second moment :math:`\mathbb E\|g_i(w)\|^2\le G^2` (Assumption 3) and staleness
:math:`\tau_i^t\le t_d` (Assumption 4).  The paper's global gradient is the plain mean
:math:`\bar g=\frac1N\sum_i\bar g_i` (equal weights :math:`p_i=1/N`), and Theorem 1' and Corollary 1'
assume these equal weights: their noise term :math:`\sigma^2/(NK_{\min})` is
:math:`\sigma^2\sum_ip_i^2/K_i` with weights :math:`p_i`, larger when they differ (every check of them runs
on equal weights).  Method: AFL-DGA in the ``analysis`` correction mode
(:mod:`.algorithm`).  Indexing: server steps :math:`t=0..T-1`; the server uses client ``i``'s
gradient of round :math:`\lambda_i(t)`, :math:`\tau_i^t=t-\lambda_i(t)+1`, and the paper's delay
sum :math:`\tau_i^t+\tau_i^{t-\tau_i^t}-1` equals :math:`S_i^t=t-\lambda^{\rm prev}_i(t)\le 2t_d-1`
(``Participation.delay_sum``); :math:`\bar S=\frac1T\sum_t\sum_iS_i^t`.

Step size.  Theorem 1 is printed with ":math:`\eta\le 1/T`", a condition the proof never uses
and that Corollary 1's :math:`\eta=\sqrt N/(L\sqrt T)` meets only when :math:`T\le L^2/N`; we read
it as :math:`\eta\le1/L` (``theorem1``) and keep the literal reading beside it
(``theorem1_literal_step``).  Both are false: the inequality is invariant under
:math:`(f,\eta)\to(cf,\eta/c)` (every term scales by :math:`c^2`, the trajectory is unchanged), so a
counterexample at :math:`\eta L\le1` is rescaled to one at :math:`\eta=1/T`.

=================================  =========  ===================================================
statement                          status     note
=================================  =========  ===================================================
``eq2``                            printed    App. A eq. (2): E||gbar||^2 <= (sigma^2+G^2)/N -- FALSE
``eq2_corrected``                  corrected  E||gbar||^2 <= G^2 (Jensen; the 1/N is not there)
``lemma1``                         printed    Lemma 1 (statement's index range) -- FALSE
``lemma1_used``                    printed    Lemma 1 with (2), the form Theorem 1 uses -- FALSE
``lag_count_printed``              printed    proof of Lemma 1: rho <= tau + tau' - 1 -- FALSE if D_m > K_min
``lemma1_corrected``               corrected  Lemma 1': pathwise, factor 2 and Cauchy-Schwarz counts
``lemma1_corrected_expectation``   corrected  Lemma 1': 2 eta^2 G^2 (rho^2 + n^2)
``lemma2_n``, ``lemma2_rho``       corrected  Lemma 2': n <= K_m+D_m-1, rho <= rho_hat (tight)
``theorem1``                       printed    Theorem 1 with eta <= 1/L -- FALSE
``theorem1_literal_step``          printed    Theorem 1 with eta <= 1/T as printed -- FALSE
``theorem1_corrected_det``         corrected  Theorem 1' (sigma = 0, pathwise, measured lags)
``theorem1_corrected``             corrected  Theorem 1' (stochastic, worst case), eta <= 1/(2L)
``corollary1``                     printed    Corollary 1, exact substituted form -- FALSE
``corollary1_corrected``           corrected  Corollary 1', T >= 4N
``timing_fold``                    printed    T_sync / T_DGA = (K+D)/K (homogeneous K and D)
``gamma_iid``                      printed    Sec. 3.1: Gamma = 0 means i.i.d. -- FALSE
``gamma_corrected``                corrected  sum_i p_i ||grad F_i(w*)||^2 <= 2 L Gamma (tight)
``eq3``                            printed    App. B eq. (3): (L/2)E||w^{t+1}-w^t||^2 with 1/N^2 -- FALSE
``eq4``                            printed    App. B eq. (4): the noise cross-term dropped -- FALSE if t_d > 1
``eq4_fresh_noise``                corrected  the cross-term vanishes when t_d = 1 (fresh noise)
``eq5``                            printed    App. B eq. (5): ||grad f - m||^2 <= L^2 Xi (Jensen, smoothness)
``eq6``                            printed    App. B eq. (6): (5) with Lemma 1 -- FALSE
``lag_range_terms``                printed    App. A: sum over [t-tau-tau', t-1] has tau+tau'-1 terms -- FALSE
``corollary1_printed``             printed    Corollary 1's O-form as printed, constant C_O -- FALSE
``speedup_threshold``              printed    remark: beyond T_min the first term of Corollary 1 dominates
=================================  =========  ===================================================

Example
-------
>>> from fltheory.papers.afl_dga import bounds as b
>>> round(float(b.theorem1(L=1, N=10, T=10**4, eta=10**-1.5, Delta=1, sigma2=1, G2=2, K_m=10, D_m=20, S_bar=30)), 10)
1.8167113883
>>> float(b.rho_hat_max(t_d=2, D_m=20, K_min=10))
5.0
>>> round(float(b.theorem1_corrected(L=1, N=10, T=10**4, eta=10**-1.5, Delta=1, sigma2=1, G2=2, K_m=10, D_m=20,
...                                  K_min=10, t_d=2)), 8)
3.49924128
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from ... import validation as V
from ...symbolic import Statement, conditions

__all__ = ["STATEMENTS", "PAPER", "SYMBOLS", "rho_hat_max", "rho_hat_extra", "corollary_thresholds",
           "theorem1_parts", "theorem1_corrected_parts"]

PAPER = "afl_dga"


def _r(name):
    return sp.Symbol(name, real=True)


eta, L, N, T, Delta = _r("eta"), _r("L"), _r("N"), _r("T"), _r("Delta")
sigma2, G2, K_m, D_m, K_min, t_d = _r("sigma2"), _r("G2"), _r("K_m"), _r("D_m"), _r("K_min"), _r("t_d")
S_bar, S, rho, n, sum_gbar2 = _r("S_bar"), _r("S"), _r("rho"), _r("n"), _r("sum_gbar2")
since_anchor, local2, lag_mean, Xi_mean = _r("since_anchor"), _r("local2"), _r("lag_mean"), _r("Xi_mean")
rho_hat = _r("rho_hat")
Gamma, zeta2, grad_sum, S_sum, Xi, C_O, cross = _r("Gamma"), _r("zeta2"), _r("grad_sum"), _r("S_sum"), _r("Xi"), \
    _r("C_O"), _r("cross")
SYMBOLS = {str(s): s for s in (eta, L, N, T, Delta, sigma2, G2, K_m, D_m, K_min, t_d, S_bar, S, rho, n, sum_gbar2,
                               since_anchor, local2, lag_mean, Xi_mean, rho_hat, Gamma, zeta2, grad_sum, S_sum, Xi, C_O,
                               cross)}
LATEX = {"sigma2": r"\sigma^2", "G2": "G^2", "K_m": "K_m", "D_m": "D_m", "K_min": r"K_{\min}", "t_d": "t_d",
         "S_bar": r"\bar S", "S": r"(\tau_i^t+\tau_i^{t-\tau_i^t}-1)", "sum_gbar2": r"\sum_{h=t-2\tau}^{t-\tau}\|\bar g^h\|^2",
         "since_anchor": r"\sum_{h=a+1}^{t-1}\|\bar g^h\|^2", "local2": r"\sum_{u\in U}\|g_u\|^2",
         "lag_mean": r"\overline{\mathrm{lag}}", "Xi_mean": r"\bar\Xi", "rho_hat": r"\hat\rho_i^t",
         "Gamma": r"\Gamma", "zeta2": r"\zeta^2", "grad_sum": r"\sum_i\frac1{K_i}\sum_j\mathbb E\|\nabla f_i(w_{i,j})\|^2",
         "S_sum": r"\sum_i(\tau_i^t+\tau_i^{t-\tau_i^t}-1)", "Xi": r"\Xi^t", "C_O": "C_O",
         "cross": r"\mathbb E\langle\nabla f(w^t),\bar g^t-m^t\rangle"}

#: :math:`t_d\max(0,\lceil D_m/K_{\min}\rceil-1)`: extra server steps a late correction adds to the lag
EXTRA = sp.Piecewise((0, D_m <= K_min), (t_d * (sp.ceiling(D_m / K_min) - 1), True))
RHO_MAX = 2 * t_d - 1 + EXTRA
SIGMA, G = sp.sqrt(sigma2), sp.sqrt(G2)

_BASE = [(eta > 0, "eta > 0"), (L > 0, "L > 0"), (N >= 1, "N >= 1"), (T >= 1, "T >= 1"), (sigma2 >= 0, "sigma^2 >= 0"),
         (G2 > 0, "G^2 > 0"), (K_m >= 1, "K_m >= 1"), (D_m >= 0, "D_m >= 0"), (Delta >= 0, "Delta = f(w^0) - f* >= 0")]
_CITE = dict(paper=PAPER, latex_names=LATEX)

# ============================================================================= App. A eq. (2)
eq2 = Statement(
    "eq2", lhs=r"\mathbb E\|\bar g^t\|^2", relation="<=", expr=(sigma2 + G2) / N,
    conditions=conditions((N >= 1, "N >= 1"), (sigma2 >= 0, "sigma^2 >= 0"), (G2 > 0, "G^2 > 0")),
    equation="App. A, eq. (2)", title="the global gradient's second moment", tight=False, **_CITE)
eq2_corrected = eq2.with_changes(
    name="eq2_corrected", expr=G2, status="corrected", corrects="eq2", tight=True,
    conditions=conditions((G2 > 0, "G^2 > 0")),
    reason="Jensen gives (1/N) sum_i, not (1/N^2) sum_i: E||gbar||^2 <= G^2; the 1/N is valid for the noise part only")

# ============================================================================= Lemma 1
_lem_cond = conditions((eta > 0, "eta > 0"), (G2 > 0, "G^2 > 0"), (K_m >= 1, "K_m >= 1"), (D_m >= 0, "D_m >= 0"))
lemma1 = Statement(
    "lemma1", lhs=r"\|\bar w^t-w^{t-\tau_i^t}_{i,j}\|^2", relation="<=",
    expr=eta**2 * sum_gbar2 + eta**2 * (K_m + D_m) ** 2 * G2, conditions=_lem_cond,
    equation="Lemma 1 (App. A)", title="Lemma 1: model discrepancy, as stated", **_CITE)
lemma1_used = Statement(
    "lemma1_used", lhs=r"\mathbb E\|\bar w^t-w^{t-\tau_i^t}_{i,j}\|^2", relation="<=",
    expr=eta**2 / N * S * (sigma2 + G2) + eta**2 * (K_m + D_m) ** 2 * G2,
    conditions=_lem_cond + conditions((N >= 1, "N >= 1"), (sigma2 >= 0, "sigma^2 >= 0"), (S >= 1, "S >= 1")),
    equation="Lemma 1 with (2) (proof of Theorem 1)", title="Lemma 1 in the form Theorem 1 uses", **_CITE)
lag_count_printed = Statement(
    "lag_count_printed", lhs=r"\rho_{i,j}(t)", relation="<=", expr=S,
    conditions=conditions((S >= 1, "S >= 1")), equation="proof of Lemma 1 (rounds t-tau-tau'..t-1)",
    title="the printed lag count", **_CITE)
lemma1_corrected = Statement(
    "lemma1_corrected", lhs=r"\|w^t-w^{\lambda}_{i,j}\|^2", relation="<=",
    expr=2 * eta**2 * (rho * since_anchor + n * local2),
    conditions=conditions((eta > 0, "eta > 0"), (rho >= 0, "rho >= 0"), (n >= 0, "n >= 0")),
    equation="Lemma 1' (pathwise)", status="corrected", corrects="lemma1",
    reason="w^t - w_ij = -eta sum_{h=a+1}^{t-1} gbar^h + eta sum_U g_u exactly; ||x+y||^2 <= 2||x||^2 + 2||y||^2 and "
           "Cauchy-Schwarz over the rho and n terms (the printed lemma drops the 2 and the counts)",
    title="Lemma 1': model discrepancy, pathwise", **_CITE)
lemma1_corrected_expectation = Statement(
    "lemma1_corrected_expectation", lhs=r"\mathbb E\|w^t-w^{\lambda}_{i,j}\|^2", relation="<=",
    expr=2 * eta**2 * G2 * (rho**2 + n**2),
    conditions=conditions((eta > 0, "eta > 0"), (G2 > 0, "G^2 > 0"), (rho >= 0, "rho >= 0"), (n >= 0, "n >= 0")),
    equation="Lemma 1' (in expectation)", status="corrected", corrects="lemma1",
    reason="Lemma 1' pathwise with E||gbar^h||^2 <= G^2 and E||g_u||^2 <= G^2 (Assumption 3)",
    title="Lemma 1' in expectation", **_CITE)

# ============================================================================= Lemma 2'
_lag_cond = conditions((K_m >= 1, "K_m >= 1"), (D_m >= 0, "D_m >= 0"))
lemma2_n = Statement(
    "lemma2_n", lhs="n_{i,j}", relation="<=", expr=K_m + D_m - 1, conditions=_lag_cond,
    equation="Lemma 2' (1)", status="corrected", corrects="lemma1", tight=True,
    reason="the proof of Lemma 1 counts j <= D_m + K_m local gradients; the count is at most K_m + D_m - 1 (attained)",
    title="Lemma 2': uncorrected local gradients", **_CITE)
lemma2_rho = Statement(
    "lemma2_rho", lhs=r"\rho_{i,j}(t)", relation="<=", expr=S + EXTRA,
    conditions=conditions((S >= 1, "S >= 1"), (t_d >= 1, "t_d >= 1"), (K_min >= 1, "K_min >= 1"), (D_m >= 0, "D_m >= 0")),
    equation="Lemma 2' (2)", status="corrected", corrects="lag_count_printed", tight=True,
    reason="a global gradient that arrives after more than K_min further local iterations delays the client's anchor by "
           "up to t_d (ceil(D_m/K_min) - 1) extra server steps; the printed count tau + tau' - 1 holds when D_m <= K_min",
    title="Lemma 2': server steps since the anchor", **_CITE)

# ============================================================================= Theorem 1
_B1 = 2 * Delta / (eta * T)
_B2 = eta * L * (sigma2 + G2) / N
_B3 = L**2 * eta**2 * (K_m + D_m) ** 2 * G2
_B4 = L**2 * eta**2 / N**2 * (sigma2 + G2) * S_bar
_LHS = r"\frac1T\sum_{t=0}^{T-1}\mathbb E\|\nabla f(w^t)\|^2"
theorem1 = Statement(
    "theorem1", lhs=_LHS, relation="<=", expr=_B1 + _B2 + _B3 + _B4,
    conditions=conditions(*_BASE, (eta * L <= 1, "eta <= 1/L (the printed 'eta <= 1/T' read as 1/L)"),
                          (S_bar >= N, "S_bar >= N")),
    equation="Theorem 1", title="Theorem 1 (step size read as eta <= 1/L)", **_CITE)
theorem1_literal_step = theorem1.with_changes(
    name="theorem1_literal_step",
    conditions=conditions(*_BASE, (eta * T <= 1, "eta <= 1/T (as printed)"), (S_bar >= N, "S_bar >= N")),
    title="Theorem 1 with the printed step size eta <= 1/T")
theorem1_corrected_det = Statement(
    "theorem1_corrected_det", lhs=r"\frac1T\sum_{t=0}^{T-1}\|\nabla f(w^t)\|^2", relation="<=",
    expr=_B1 + 2 * L**2 * eta**2 * lag_mean,
    conditions=conditions((Delta >= 0, "Delta = f(w^0) - f* >= 0"), (eta > 0, "eta > 0"), (L > 0, "L > 0"), (T >= 1, "T >= 1"), (eta * L <= 1, "eta <= 1/L"),
                          (lag_mean >= 0, "lag_mean >= 0")),
    equation="Theorem 1' (deterministic)", status="corrected", corrects="theorem1",
    reason="sigma = 0: descent lemma, polarisation with ||grad f - m||^2 <= L^2 Xi (Jensen, smoothness) and Lemma 1'; "
           "lag_mean = (1/T) sum_t sum_i p_i (1/K_i) sum_j [rho since_anchor + n local2] measured on the run",
    title="Theorem 1' (sigma = 0, measured lags)", **_CITE)
_C2 = 2 * L * eta * sigma2 / (N * K_min)
_C3 = 2 * L**2 * eta**2 * G2 * ((K_m + D_m - 1) ** 2 + RHO_MAX**2)
_C4 = 2 * eta * L * G * SIGMA * (t_d - 1) / sp.sqrt(K_min)
theorem1_corrected = Statement(
    "theorem1_corrected", lhs=_LHS, relation="<=", expr=_B1 + _C2 + _C3 + _C4,
    conditions=conditions(*_BASE, (eta * L * 2 <= 1, "eta <= 1/(2L)"), (K_min >= 1, "K_min >= 1"),
                          (K_min <= K_m, "K_min <= K_m"), (t_d >= 1, "t_d >= 1"), (sigma2 <= G2, "sigma^2 <= G^2")),
    equation="Theorem 1' (stochastic)", status="corrected", corrects="theorem1",
    reason="E||gbar||^2 <= 2||m||^2 + 2||e||^2 with the noise power sigma^2/(N K) (not (sigma^2+G^2)/N), Lemma 1' and "
           "Lemma 2' for the lags, and the correlation of reused stale noise with grad f(w^t) (zero when t_d = 1); "
           "equal client weights p_i = 1/N, as the paper's gbar = (1/N) sum_i (with weights p the noise power is "
           "sigma^2 sum_i p_i^2/K_i, which exceeds sigma^2/(N K_min) when the p_i differ)",
    title="Theorem 1' (worst case over the schedule; equal client weights p_i = 1/N)", **_CITE)

# ============================================================================= Corollary 1
_ETA_STAR = sp.sqrt(N) / (L * sp.sqrt(T))
corollary1 = Statement(
    "corollary1", lhs=_LHS, relation="<=",
    expr=(2 * L * Delta + sigma2 + G2) / sp.sqrt(N * T) + N * (K_m + D_m) ** 2 * G2 / T + (2 * t_d - 1) * (sigma2 + G2) / T,
    conditions=conditions((Delta >= 0, "Delta = f(w^0) - f* >= 0"), (L > 0, "L > 0"), (N >= 1, "N >= 1"), (T >= N, "T >= N (eta* <= 1/L)"),
                          (sigma2 >= 0, "sigma^2 >= 0"), (G2 > 0, "G^2 > 0"), (K_m >= 1, "K_m >= 1"),
                          (D_m >= 0, "D_m >= 0"), (t_d >= 1, "t_d >= 1")),
    equation="Corollary 1", title="Corollary 1 (eta = sqrt(N)/(L sqrt(T)), S_bar = N(2t_d-1), exact terms)",
    reason="", **_CITE)
corollary1_corrected = Statement(
    "corollary1_corrected", lhs=_LHS, relation="<=",
    expr=(2 * L * Delta + 2 * sigma2 / K_min) / sp.sqrt(N * T)
    + 2 * N * G2 * ((K_m + D_m - 1) ** 2 + RHO_MAX**2) / T
    + 2 * sp.sqrt(N) * G * SIGMA * (t_d - 1) / (sp.sqrt(K_min) * sp.sqrt(T)),
    conditions=conditions((Delta >= 0, "Delta = f(w^0) - f* >= 0"), (L > 0, "L > 0"), (N >= 1, "N >= 1"), (T >= 4 * N, "T >= 4N (eta* <= 1/(2L))"),
                          (sigma2 >= 0, "sigma^2 >= 0"), (G2 > 0, "G^2 > 0"), (K_m >= 1, "K_m >= 1"),
                          (D_m >= 0, "D_m >= 0"), (t_d >= 1, "t_d >= 1"), (K_min >= 1, "K_min >= 1"),
                          (K_min <= K_m, "K_min <= K_m"), (sigma2 <= G2, "sigma^2 <= G^2")),
    equation="Corollary 1'", status="corrected", corrects="corollary1",
    reason="Theorem 1' at eta = sqrt(N)/(L sqrt(T)); linear speedup O(1/sqrt(NT)) is proved when t_d = 1 or sigma = 0 "
           "(the stale-noise term is O(sqrt(N/T)) otherwise); equal client weights p_i = 1/N, as Theorem 1'",
    title="Corollary 1' (equal client weights p_i = 1/N)", **_CITE)

# ============================================================================= timing
K_sym, D_sym = _r("K"), _r("D")
timing_fold = Statement(
    "timing_fold", lhs=r"\mathcal T^{\rm sync}/\mathcal T^{\rm DGA}", relation="==", expr=(K_sym + D_sym) / K_sym,
    conditions=conditions((K_sym >= 1, "K >= 1"), (D_sym >= 0, "D >= 0")),
    equation="Section 4.1, remark on DGA's training time", tight=True,
    title="DGA's speedup (K+D)/K (homogeneous K and D; the printed per-client fold is no speedup otherwise)", **_CITE)

# ============================================================================= Section 3.1: Gamma
_ZETA = r"\zeta^2(w)=\sum_ip_i\|\nabla F_i(w)-\nabla F(w)\|^2"
gamma_iid = Statement(
    "gamma_iid", lhs=_ZETA, relation="<=", expr=2 * L * Gamma,
    conditions=conditions((L > 0, "L > 0"), (Gamma >= 0, "Gamma = F* - sum_k p_k F_k* >= 0")),
    equation="Section 3.1 (Gamma = 0 means i.i.d.)",
    title="Gamma = 0 means i.i.d.: Gamma controls the clients' disagreement at every w (evaluated where Gamma = 0, "
          "where it reads zeta^2(w) = 0 for every w)", **_CITE)
gamma_corrected = gamma_iid.with_changes(
    name="gamma_corrected", lhs=r"\sum_ip_i\|\nabla F_i(w^*)\|^2", status="corrected", corrects="gamma_iid",
    tight=True, title="what Gamma controls: the clients' gradients at the minimiser w* only",
    reason="Gamma = sum_k p_k (F_k(w*) - F_k*) and F_k(w) - F_k* >= ||grad F_k(w)||^2/(2L) for L-smooth F_k: Gamma = 0 "
           "means every client is stationary at w* (a common minimiser), not identical data; equality for "
           "F_k = (L/2)||w - x_k||^2")

# ============================================================================= App. B (3)-(6)
_B_COND = ((eta > 0, "eta > 0"), (L > 0, "L > 0"), (N >= 1, "N >= 1"), (sigma2 >= 0, "sigma^2 >= 0"))
eq3 = Statement(
    "eq3", lhs=r"\frac L2\mathbb E\|w^{t+1}-w^t\|^2", relation="<=",
    expr=eta**2 * L / 2 * sigma2 / N + eta**2 * L / (2 * N**2) * grad_sum,
    conditions=conditions(*_B_COND, (grad_sum >= 0, "grad_sum >= 0")), equation="App. B, eq. (3)", tight=False,
    title="the second-order term of the descent lemma (its 1/N^2 from the Jensen step b_1)", **_CITE)
_CROSS = r"\left|\mathbb E\langle\nabla f(w^t),\bar g^t-m^t\rangle\right|"
eq4 = Statement(
    "eq4", lhs=_CROSS, relation="<=", expr=0 * t_d, conditions=conditions((t_d >= 1, "t_d >= 1")),
    equation="App. B, eq. (4), first line", tight=True,
    title="the first-order term of the descent lemma: E<grad f(w^t), gbar^t> = E<grad f(w^t), m^t> (the noise "
          "cross-term dropped)", **_CITE)
eq4_fresh_noise = eq4.with_changes(
    name="eq4_fresh_noise", status="corrected", corrects="eq4",
    conditions=conditions((t_d >= 1, "t_d >= 1"), (t_d <= 1, "t_d = 1 (every client every round)")),
    reason="with t_d = 1 the noise in gbar^t was drawn in round t, after w^t was fixed, so it is independent of "
           "grad f(w^t); a stale stored gradient's noise was already applied to w^t (E<grad f(w^t), e^t> = "
           "-k eta lambda sigma^2 after k reuses on f = lambda w^2/2), which Theorem 1' bounds by its stale-noise term",
    title="the noise cross-term vanishes when every client sends every round (t_d = 1)")
eq5 = Statement(
    "eq5", lhs=r"\|\nabla f(w^t)-m^t\|^2", relation="<=", expr=L**2 * Xi,
    conditions=conditions((L > 0, "L > 0"), (Xi >= 0, "Xi >= 0")), equation="App. B, eq. (5)", tight=True,
    title="the bias of the stale average: Jensen (c_1, c_2) and smoothness (c_3); Xi^t = sum_i p_i (1/K_i) sum_j "
          "||w^t - w_ij||^2", **_CITE)
eq6 = Statement(
    "eq6", lhs=r"\frac\eta2\mathbb E\|\nabla f(w^t)-m^t\|^2", relation="<=",
    expr=L**2 * eta**3 / (2 * N**2) * (sigma2 + G2) * S_sum + L**2 * eta**3 / 2 * (K_m + D_m) ** 2 * G2,
    conditions=conditions(*_B_COND, (G2 > 0, "G^2 > 0"), (K_m >= 1, "K_m >= 1"), (D_m >= 0, "D_m >= 0"),
                          (S_sum >= N, "S_sum >= N")),
    equation="App. B, eq. (6)", title="(5) with Lemma 1 substituted (per server step t)", **_CITE)

# ============================================================================= App. A: the number of terms
lag_range_terms = Statement(
    "lag_range_terms", lhs=r"\#\{t-\tau_i^t-\tau_i^{t-\tau_i^t},\dots,t-1\}", relation="<=", expr=S,
    conditions=conditions((S >= 1, "S >= 1")), equation="proof of Lemma 1 (the sum before eq. (6))",
    title="the printed count of the range summed in Lemma 1's proof: tau + tau' - 1 (the sum is bounded by the count "
          "times the largest term, so the count must not be too small)", **_CITE)

# ============================================================================= Corollary 1 as printed, and its remark
_O1 = (L * Delta + sigma2 + G2) / sp.sqrt(N * T)
_O2 = N * (K_m + D_m) ** 2 * G2 / T
_O3 = N * (2 * t_d - 1) * (sigma2 + G2) / T
corollary1_printed = corollary1.with_changes(
    name="corollary1_printed", expr=C_O * (_O1 + _O2 + _O3),
    conditions=corollary1.conditions + conditions((C_O > 0, "C_O > 0")), equation="Corollary 1",
    title="Corollary 1 as printed: its three O-terms with one constant C_O (Theorem 1 at eta = sqrt(N)/(L sqrt(T)) "
          "is at most C_O = 2 times them); the O-claim fails when no C_O works, i.e. when the ratio grows without "
          "bound along a sequence inside the hypotheses")
_A_O = L * Delta + sigma2 + G2
speedup_threshold = Statement(
    "speedup_threshold", lhs=r"\max\left(\frac NT(K_m+D_m)^2G^2,\ \frac NT(2t_d-1)(\sigma^2+G^2)\right)",
    relation="<=", expr=_O1,
    conditions=conditions((Delta >= 0, "Delta >= 0"), (L > 0, "L > 0"), (N >= 1, "N >= 1"),
                          (sigma2 >= 0, "sigma^2 >= 0"), (G2 > 0, "G^2 > 0"), (K_m >= 1, "K_m >= 1"),
                          (D_m >= 0, "D_m >= 0"), (t_d >= 1, "t_d >= 1"), (T >= N, "T >= N"),
                          (T * _A_O**2 >= N**3 * (K_m + D_m) ** 4 * G2**2, "T >= T1 = N^3 (K_m+D_m)^4 G^4 / a^2"),
                          (T * _A_O**2 >= N**3 * (2 * t_d - 1) ** 2 * (sigma2 + G2) ** 2,
                           "T >= T2 = N^3 (2t_d-1)^2 (sigma^2+G^2)^2 / a^2")),
    equation="remark after Corollary 1 (linear speedup threshold)", tight=True,
    title="beyond T_min = max(N, T1, T2) the first term of Corollary 1 dominates (the bound is then at most 3 "
          "(L Delta + sigma^2 + G^2)/sqrt(NT)); T1 grows like (K_m+D_m)^4, and T2 adds a t_d-dependence the remark "
          "does not mention", **_CITE)

STATEMENTS = [eq2, eq2_corrected, lemma1, lemma1_used, lag_count_printed, lemma1_corrected, lemma1_corrected_expectation,
              lemma2_n, lemma2_rho, theorem1, theorem1_literal_step, theorem1_corrected_det, theorem1_corrected,
              corollary1, corollary1_corrected, timing_fold, gamma_iid, gamma_corrected, eq3, eq4, eq4_fresh_noise, eq5,
              eq6, lag_range_terms, corollary1_printed, speedup_threshold]


# ============================================================================= helpers
def _lag_args(t_d, D_m, K_min):
    t_d = V.integer(t_d, "t_d", low=1, high=10**9)
    D_m = V.integer(D_m, "D_m", low=0, high=10**9)
    K_min = V.integer(K_min, "K_min", low=1, high=10**9)
    return t_d, D_m, K_min


def rho_hat_extra(*, t_d: int, D_m: int, K_min: int) -> int:
    """:math:`t_d\\max(0,\\lceil D_m/K_{\\min}\\rceil-1)`, the extra lag of Lemma 2' (2).

    >>> rho_hat_extra(t_d=3, D_m=7, K_min=2)
    9
    """
    t_d, D_m, K_min = _lag_args(t_d, D_m, K_min)
    return t_d * max(0, -(-D_m // K_min) - 1)


def rho_hat_max(*, t_d: int, D_m: int, K_min: int) -> int:
    """:math:`\\hat\\rho_{\\max}=2t_d-1+t_d\\max(0,\\lceil D_m/K_{\\min}\\rceil-1)` (Lemma 2' (2), worst case).

    >>> rho_hat_max(t_d=1, D_m=0, K_min=1)
    1
    """
    t_d, D_m, K_min = _lag_args(t_d, D_m, K_min)
    return 2 * t_d - 1 + rho_hat_extra(t_d=t_d, D_m=D_m, K_min=K_min)


_PARTS: dict = {}


def _parts(st: Statement, exprs, values) -> tuple:
    """The terms ``exprs`` of ``st`` at ``values`` (names, kinds and conditions checked by ``st`` first)."""
    total = st(**values)
    if st.name not in _PARTS:
        _PARTS[st.name] = [sp.lambdify(st.symbols, e, modules=["numpy"]) for e in exprs]
    args = [np.asarray(values[s.name], dtype=float) for s in st.symbols]
    return tuple(np.asarray(f(*args), dtype=float) + np.zeros(np.shape(total)) for f in _PARTS[st.name])


def theorem1_parts(**values) -> tuple:
    """The four terms of Theorem 1's right-hand side (vectorised; same parameters as ``theorem1``).

    >>> [round(float(x), 10) for x in theorem1_parts(L=1, N=10, T=10**4, eta=10**-1.5, Delta=1, sigma2=1, G2=2,
    ...                                                 K_m=10, D_m=20, S_bar=30)]
    [0.0063245553, 0.009486833, 1.8, 0.0009]
    """
    return _parts(theorem1, (_B1, _B2, _B3, _B4), values)


def theorem1_corrected_parts(**values) -> tuple:
    """The four terms of Theorem 1' (stochastic, worst case): descent, noise, lags, stale noise.

    >>> [round(float(x), 8) for x in theorem1_corrected_parts(L=1, N=10, T=10**4, eta=10**-1.5, Delta=1, sigma2=1,
    ...                                                          G2=2, K_m=10, D_m=20, K_min=10, t_d=2)]
    [0.00632456, 0.00063246, 3.464, 0.02828427]
    """
    return _parts(theorem1_corrected, (_B1, _C2, _C3, _C4), values)


def corollary_thresholds(*, L, N, Delta, sigma2, G2, K_m, D_m, t_d, printed: bool = False) -> dict:
    """The horizons beyond which Corollary 1's leading term dominates: ``T1`` (drift term),
    ``T2`` (delay term) and ``T_min = max(N, T1, T2)`` with :math:`a=2L\\Delta+\\sigma^2+G^2`
    (Theorem 1's constants, ``corollary1``); ``printed=True``: the printed O-terms with constant 1
    (``corollary1_printed``, ``speedup_threshold``): :math:`a=L\\Delta+\\sigma^2+G^2` and the third
    term's factor ``N``, so ``T2`` gains :math:`N^2`.

    >>> th = corollary_thresholds(L=1, N=10, Delta=1, sigma2=1, G2=2, K_m=10, D_m=20, t_d=2)
    >>> round(th["T1"]), round(th["T2"], 6)
    (129600000, 32.4)
    >>> th = corollary_thresholds(L=1, N=10, Delta=1, sigma2=1, G2=2, K_m=10, D_m=20, t_d=2, printed=True)
    >>> round(th["T1"]), round(th["T2"], 6)
    (202500000, 5062.5)
    """
    L = V.real(L, "L", low=0.0, open_low=True)
    N = V.integer(N, "N", low=1, high=10**9)
    Delta = V.real(Delta, "Delta", low=0.0)
    sigma2 = V.real(sigma2, "sigma2", low=0.0)
    G2 = V.real(G2, "G2", low=0.0, open_low=True)
    K_m = V.integer(K_m, "K_m", low=1, high=10**9)
    D_m = V.integer(D_m, "D_m", low=0, high=10**9)
    t_d = V.integer(t_d, "t_d", low=1, high=10**9)
    printed = V.flag(printed, "printed")
    a = (1 if printed else 2) * L * Delta + sigma2 + G2
    T1 = N**3 * (K_m + D_m) ** 4 * G2**2 / a**2
    T2 = (N**3 if printed else N) * (2 * t_d - 1) ** 2 * (sigma2 + G2) ** 2 / a**2
    return {"a": a, "T1": T1, "T2": T2, "T_min": max(N, T1, T2)}
