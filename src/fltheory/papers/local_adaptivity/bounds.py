r"""Every numbered result of Wang, Xu, Garrett, Charles, Liu, Joshi, *Local Adaptivity in Federated
Learning: Convergence and Consistency* as a :class:`fltheory.symbolic.Statement`.

Problem class: :math:`F=\sum_i w_iF_i`, each :math:`F_i` :math:`\mu_i`-strongly convex and
:math:`L_i`-smooth (Theorems 1-2, Appendix B/C) or only :math:`L`-smooth (Theorem 3).
Method: FedOpt with a GD server, :math:`x^{(t+1)}=x^{(t)}-\alpha\sum_iw_i(x^{(t)}-\mathcal A_i(x^{(t)}))`
(eq. 5), clients running (preconditioned / adaptive) SGD restarted every round; for Theorem 3 with
local correction (eq. 98).

Printed statements keep the paper's form; a ``corrected`` statement sits beside each one that our
own derivation (``derivations/derive_local_adaptivity_*.py``) shows to be wrong or unproven.
``[ours]`` in a note marks a statement that is not in the paper at all: a form we derived (the
paper's argument carried to per-client step sizes, a general alpha, a first-order bias, a stronger
bound), checked exactly like the paper's own:

=============================  ==========  =====================================================
statement                      status      note
=============================  ==========  =====================================================
``h_sgd``, ``q_sgd``           printed     Prop. B.2/B.3; tight (its typos are in the proof only)
``h_sgd_tuned``                corrected   [ours] per-client tuning, eta_i = 2/(mu_i+L_i)
``theorem1_contraction``       printed     (54): E[A] contracts with squared constant hbar
``theorem1_printed``           printed     (7), unspecified c (symbol ``c_T1``), exponent T
``theorem1_proven``            corrected   (64): 32/36, exponent T/2, index T+1
``theorem1_proven_exp``        corrected   (63) in Stich's exp form
``theorem1_recursion``         printed     (60)/(61), needs 0<alpha<=1 (I3)
``theorem1_constant_alpha``    corrected   [ours] (61) unrolled with constant alpha
``gd_special_case``            printed     (66)
``gd_general_alpha``           corrected   [ours] (61) with sigma=0 and any alpha in (0,1]
``sgd_recursion``              corrected   (67) with the LHS index fixed
``sgd_decaying_printed``       printed     (68)/(72)/(73) -- FALSE
``sgd_decaying_corrected``     corrected   beta >= 2/a, nu = max{4C/a^2, beta r0}
``sgd_tau1_printed``           printed     (74)-(77) -- FALSE (inherits the step-size error)
``sgd_tau1_corrected``         corrected   (77) with the step-size fix
``z_derivative``               printed     (83): z'(x) >= ... > 0, z increasing on (0,1]
``z_max``, ``z_uniform``       printed     (84)
``sgd_decaying_85_printed``    printed     (85) -- FALSE (inherits the step-size error)
``sgd_decaying_85_corrected``  corrected   (85) with the step-size fix
``theorem2_*``, ``eq9``        printed     d = 1 instances of matrix identities (see below)
``plain_gd_bias``              corrected   [ours] first-order bias of local GD
``lemma2_14``..``lemma2_16``   printed     (14)-(16), deterministic curvature
``lemma4``, ``lemma4_strong``  printed/c.  (101) and the stronger [ours] form
``theorem3_general``           printed     (126), alpha <= 1/L
``theorem3_128``               printed     (128)
``theorem3_printed``           printed     (129), a proof step -- does not follow from (128)
``theorem3_128_at_130``        corrected   exact value of (128) at eta of (130) (identity)
``theorem3_corrected``         corrected   2DL/T + 3(D^2L^2 Lambda G^2)^{1/3}/T^{2/3}
``theorem3_min``               corrected   (100), the min over t, with the proof's constants
=============================  ==========  =====================================================

Aggregated per-client quantities are scalar symbols: ``hbar`` :math:`=\sum_iw_ih_i`, ``Cq``
:math:`=\sigma^2\sum_iw_i^2q_i` (:func:`theorem1_aggregates`), ``s2`` :math:`=\sum_iw_i\eta_i^2\tau_i^2`
(:func:`theorem3_aggregates`), the norms of Lemma 4 (:func:`lemma4_aggregates`).

Theorem 2 design.  Its fixed point (94), the limit (8) and identity (9) are matrix identities in
:math:`M` clients of dimension :math:`d`.  A :class:`Statement` is scalar-valued, so

* the module-level statements ``theorem2_fixed_point``, ``theorem2_limit``, ``eq9_identity`` and
  ``plain_gd_bias`` are the **d = 1** instances with **M = 3** explicit clients (symbols ``w_1``,
  ``eta_1``, ``tau_1``, ``P_1``, ``H_1``, ``xs_1`` = :math:`x_1^*`, ...); in d = 1 every matrix
  commutes, so these are exactly the paper's formulas, not a simplification of them.  The
  factories :func:`theorem2_fixed_point_scalar` etc. build them for any M;
* :func:`theorem2_fixed_point_symbolic` returns the **matrix** objects (SymPy matrices with
  symbolic entries) for given small M, d and concrete integer tau_i: K_i, x~ (94), the limit (8),
  the locally corrected fixed point and both sides of (9).  The derivation script solves the
  one-round map independently and asserts equality with these;
* numeric closed forms for batched federations are in ``exact.py`` (``fixed_point``).

Example
-------
>>> from fltheory.papers.local_adaptivity import bounds as b
>>> b.h_sgd.evaluate(eta=sp.Rational(1, 10), mu=1, L=3, k=2)
6561/10000
>>> float(b.theorem3_corrected.evaluate(D=1, L=1, Lambda=1, G=1, T=8))
1.0
>>> b.sgd_decaying_corrected.evaluate(sigma2=0, eta=sp.Rational(1, 10), tau=1, M=1, mu=1, L=1,
...                                    T=0, beta=20, r0=1)
1
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import sympy as sp

from ...backend import asarray, matvec, namespace
from ...problems import validate_weights
from ...symbolic import Condition, Statement, _sympy_expression
from ...validation import InputError, InputTypeError, shown

__all__ = [
    "STATEMENTS", "theorem1_aggregates", "Theorem1Aggregates", "theorem3_aggregates", "Theorem3Aggregates",
    "lemma4_aggregates", "Lemma4Quantities", "theorem3_eta", "tuned_client_eta", "TunedClient", "z_function",
    "theorem2_fixed_point_scalar", "theorem2_limit_scalar", "eq9_identity_scalar", "plain_gd_bias_scalar",
    "theorem2_fixed_point_symbolic", "Theorem2Symbolic", "sgd_decaying_schedule",
]

PAPER = "local_adaptivity"


def _s(name: str) -> sp.Symbol:
    return sp.Symbol(name, real=True)


# ----------------------------------------------------------------------------- symbols
eta, mu, L, k, tau, T, M = (_s(n) for n in ("eta", "mu", "L", "k", "tau", "T", "M"))
alpha, beta, sigma2, r0, r_t = (_s(n) for n in ("alpha", "beta", "sigma2", "r0", "r_t"))
hbar, Cq, c_T1 = _s("hbar"), _s("Cq"), _s("c_T1")
x, D, G, Lambda, s2 = _s("x"), _s("D"), _s("G"), _s("Lambda"), _s("s2")
g2, u2, ip = _s("g2"), _s("u2"), _s("ip")
As_norm, As_inv_norm, S_Ab = _s("As_norm"), _s("As_inv_norm"), _s("S_Ab")

LATEX = {
    "hbar": r"\bar h", "Cq": r"C_q", "c_T1": r"c_{\rm T1}", "sigma2": r"\sigma^2", "r0": r"r_0",
    "r_t": r"r_t", "s2": r"\textstyle\sum_i w_i\eta_i^2\tau_i^2",
    "g2": r"\|\mathbb E[\nabla F(x)-\nabla F(y)]\|^2", "u2": r"\|\mathbb E[x-y]\|^2",
    "ip": r"\langle\mathbb E[x-y],\mathbb E[\nabla F(x)-\nabla F(y)]\rangle",
    "As_norm": r"\|A_s\|", "As_inv_norm": r"\|A_s^{-1}\|", "S_Ab": r"\textstyle\sum_k\|A_k\|\|b_k\|^2",
}


def _latex_names(M_: int) -> dict:
    from ...validation import integer as _integer  # noqa: PLC0415

    M_ = _integer(M_, "M", low=1, high=16)
    out = dict(LATEX)
    for i in range(1, M_ + 1):
        out[f"xs_{i}"] = rf"x^*_{{{i}}}"
    return out


def _st(name, lhs, relation, expr, conds, equation, title, *, status="printed", reason="", tight=None,
        corrects=None, latex_names=None):
    return Statement(name, lhs=lhs, relation=relation, expr=expr,
                     conditions=tuple(Condition(e, t) for e, t in conds), paper=PAPER, equation=equation,
                     status=status, reason=reason, tight=tight, corrects=corrects, title=title,
                     latex_names=latex_names or LATEX)


# Condition blocks shared by several statements
_SGD_H = [(eta > 0, "eta > 0"), (mu > 0, "mu > 0"), (mu <= L, "mu <= L"),
          (eta * (mu + L) <= 2, "eta*(mu+L) <= 2, i.e. eta <= 2/(mu+L)")]
_ALPHA = [(alpha > 0, "alpha > 0"), (alpha <= 1, "alpha <= 1 (used in (56))")]
_HBAR = [(hbar >= 0, "hbar >= 0"), (hbar < 1, "hbar < 1 (E[A] contractive)")]
_CLIENTS = [(tau >= 1, "tau >= 1"), (M >= 1, "M >= 1")]
_SIG = (sigma2 >= 0, "sigma2 >= 0")

_R_T1 = r"\mathbb E\|x^{(t+1)}-\tilde x\|^2"
_R_T = r"\mathbb E\|x^{(T)}-\tilde x\|^2"

# ============================================================================ Appendix B
h_sgd = _st(
    "h_sgd", r"\frac{\|\mathbb E\mathcal A_i(x;k)-\mathbb E\mathcal A_i(y;k)\|^2}{\|x-y\|^2}", "<=",
    (1 - eta * mu) ** (2 * k), _SGD_H + [(k >= 0, "k >= 0")], "(36)",
    "Prop. B.2: client SGD satisfies Assumption 1 with h_i(k) = (1-eta_i mu_i)^{2k} "
    "(paper: eta(mu+L) < 2; <= suffices). Tight: equality when mu is an eigenvalue of the Hessian.",
    tight=True)

q_sgd = _st(
    "q_sgd", r"\frac{\mathbb E\|\mathcal A_i(x;k)-\mathbb E\mathcal A_i(x;k)\|^2}{\sigma^2}", "<=",
    k * eta ** 2, [(eta > 0, "eta > 0"), (L > 0, "L > 0"), (eta * L <= 2, "eta*L <= 2"), (k >= 0, "k >= 0")],
    "(37)/(51)",
    "Prop. B.3: client SGD satisfies Assumption 2 with q_i(k) = k eta_i^2 (not k eta^2 sigma^2). "
    "Rigorous for quadratics / additive noise. Tight: equality when the noise lives where eta*lambda in {0, 2}.",
    tight=True)

h_sgd_tuned = _st(
    "h_sgd_tuned", r"\min_{0<\eta\le 2/(\mu+L)}(1-\eta\mu)^{2k}", "==",
    ((L - mu) / (L + mu)) ** (2 * k), [(mu > 0, "mu > 0"), (mu <= L, "mu <= L"), (k >= 0, "k >= 0")],
    "(36)+[ours]",
    "Per-client tuning (the paper's 'tune a learning rate per client' remark): eta_i = 2/(mu_i+L_i) "
    "minimises h_i; it is also the exact min over eta of ||(I - eta H)^k||^2 on the class.",
    status="corrected", reason="[ours] made explicit: the optimum of (36) over its admissible eta", tight=True)

# ============================================================================ Theorem 1
theorem1_contraction = _st(
    "theorem1_contraction", r"\frac{\|\mathbb E\mathcal A(x)-\mathbb E\mathcal A(y)\|^2}{\|x-y\|^2}", "<=",
    hbar, _HBAR, "(54)",
    "Theorem 1 (52)-(54): E[A] = sum_i w_i E[A_i] is a contraction with squared constant hbar = sum w_i h_i "
    "(Jensen; needs sum w_i = 1).", tight=None)

theorem1_printed = _st(
    "theorem1_printed", _R_T, "<=",
    c_T1 * (hbar ** T * r0 / (1 - hbar) + Cq / (T * (1 - hbar) ** 2)),
    [(c_T1 > 0, "c_T1 > 0"), *_HBAR, (Cq >= 0, "Cq >= 0"), (r0 >= 0, "r0 >= 0"), (T >= 1, "T >= 1")], "(7)",
    "Theorem 1 as printed in the main text: some constant c, exponent T on hbar. The proof gives only "
    "(64) (exponent T/2, index T+1, and server step sizes chosen by Stich's lemma). Not proven.")

# Lemma 3 (Stich), with s_t = 0 as the proof of Theorem 1 uses it: r_(t+1) <= (1 - a gamma_t) r_t + c gamma_t^2.  The
# lemma's symbols a, c, d clash with others of the paper: they are lemma3_a, lemma3_c, lemma3_d here.
a3, c3, d3 = _s("lemma3_a"), _s("lemma3_c"), _s("lemma3_d")
LATEX.update({"lemma3_a": "a", "lemma3_c": "c", "lemma3_d": "d"})
_L3 = [(a3 > 0, "a > 0"), (c3 >= 0, "c >= 0"), (d3 >= a3, "d >= a"), (r0 >= 0, "r0 >= 0"), (T >= 1, "T >= 1")]
_L3_BOUND = 32 * d3 * r0 * (1 - a3 / d3) ** (T / 2) + 36 * c3 / (a3 * T)
_L3_TEXT = ("s_t = 0 (the case Theorem 1's proof uses, so b and the weights w_t drop out), r_t >= 0 with "
            "r_(t+1) <= (1 - a gamma_t) r_t + c gamma_t^2 for step sizes 0 <= gamma_t <= 1/d; the worst such sequence is "
            "the recursion with equality (its right side increases with r_t since a gamma_t <= a/d <= 1).")

lemma3_printed = _st(
    "lemma3_printed", r"a\,r_{T+1}\ \big(s_t=0,\ \text{any }0\le\gamma_t\le1/d\big)", "<=", _L3_BOUND, _L3, "(63)",
    "Lemma 3 as worded in the paper: for the GIVEN step sizes gamma_t <= 1/d there exist weights with "
    "a r_(T+1) <= 32 d r0 (1 - a/d)^(T/2) + 36 c/(aT). " + _L3_TEXT + " False for a fixed schedule: gamma_t = 1/d "
    "leaves r_t -> c/(a d) > 0 while the bound tends to 0 (and gamma_t = 0 leaves r_t = r0).")

lemma3 = _st(
    "lemma3", r"a\min_{0\le\gamma_t\le1/d}r_{T+1}\ \big(s_t=0\big)", "<=", _L3_BOUND, _L3, "(63)+fix",
    "Lemma 3 as Stich proves it: there EXIST step sizes gamma_t <= 1/d (they depend on a, c, d, r0, T) with "
    "a r_(T+1) <= 32 d r0 (1 - a/d)^(T/2) + 36 c/(aT). " + _L3_TEXT + " The least r_(T+1) over all schedules is "
    "the greedy gamma_t = min{1/d, a r_t/(2c)} (optimal: the minimised map increases with r_t). Not tight: the "
    "ratio grows as c/r0 -> 0 and T -> infinity, and a scan found 0.2041 at most (its supremum is not established).",
    status="corrected", corrects="lemma3_printed",
    reason="the paper's wording quantifies the step sizes universally; the lemma only asserts that suitable step "
           "sizes exist (they are chosen in its proof)", tight=False)

theorem1_proven = _st(
    "theorem1_proven", r"\mathbb E\|x^{(T+1)}-\tilde x\|^2", "<=",
    32 * r0 * hbar ** (T / 2) / (1 - hbar) + 36 * Cq / (T * (1 - hbar) ** 2),
    [*_HBAR, (Cq >= 0, "Cq >= 0"), (r0 >= 0, "r0 >= 0"), (T >= 1, "T >= 1")], "(64)",
    "Theorem 1 as proven (64): there EXIST server step sizes alpha_t in (0,1] (Stich's lemma, d=1) "
    "achieving this; it is not a statement about an arbitrary (constant) alpha.",
    status="corrected", corrects="theorem1_printed",
    reason="(7) claims exponent T and x^(T); the proof (64) gives hbar^(T/2), x^(T+1), constants 32/36, "
           "and only for the step sizes supplied by Lemma 3", tight=False)

theorem1_proven_exp = _st(
    "theorem1_proven_exp", r"\mathbb E\|x^{(T+1)}-\tilde x\|^2", "<=",
    32 * r0 * sp.exp(-(1 - hbar) * T / 2) / (1 - hbar) + 36 * Cq / (T * (1 - hbar) ** 2),
    [*_HBAR, (Cq >= 0, "Cq >= 0"), (r0 >= 0, "r0 >= 0"), (T >= 1, "T >= 1")], "(63)",
    "Theorem 1 from the exp form of Stich's lemma (63) with a = 1-hbar, d = 1 (weaker than (64), since "
    "hbar^(T/2) <= exp(-(1-hbar)T/2)); existence of step sizes only.",
    status="corrected", corrects="theorem1_printed",
    reason="the (1-a/d)^(T/2) form quoted in (63) is stronger than Stich's original exp form", tight=False)

theorem1_recursion = _st(
    "theorem1_recursion", _R_T1, "<=", (1 - alpha * (1 - hbar)) * r_t + alpha ** 2 * Cq,
    [*_ALPHA, *_HBAR, (Cq >= 0, "Cq >= 0"), (r_t >= 0, "r_t >= 0")], "(60)/(61)",
    "Theorem 1, one-step recursion (61), r_t = E||x^(t) - x~||^2, Cq = sigma^2 sum w_i^2 q_i. Needs "
    "0 < alpha <= 1 (I3), independent clients (I1), sum w_i = 1. Tight: equality at alpha = 1 for one client "
    "with d = tau = 1.", tight=True)

theorem1_constant_alpha = _st(
    "theorem1_constant_alpha", _R_T, "<=",
    (1 - alpha * (1 - hbar)) ** T * r0 + alpha * Cq / (1 - hbar),
    [*_ALPHA, *_HBAR, (Cq >= 0, "Cq >= 0"), (r0 >= 0, "r0 >= 0"), (T >= 0, "T >= 0")], "(61)+[ours]",
    "Theorem 1 with a constant server LR: (61) unrolled, (1 - alpha a)^T r0 + alpha Cq / a, a = 1 - hbar. "
    "Tight: equality for every T at alpha = 1, one noise-free client, x0 - x~ on the mu-eigenvector.",
    status="corrected", corrects="theorem1_printed",
    reason="[ours] the constant-alpha statement that (61) does prove", tight=True)

# ============================================================================ Appendix C
_a = 1 - (1 - eta * mu) ** (2 * tau)          # a = 1 - h for common eta, tau, mu
_C = sigma2 * eta ** 2 * tau / M              # C = sigma^2 sum w_i^2 q_i with w_i = 1/M
_SGD_COMMON = _SGD_H + _CLIENTS

gd_special_case = _st(
    "gd_special_case", _R_T, "<=", (1 - eta * mu) ** (2 * tau * T) * r0,
    _SGD_H + [(tau >= 1, "tau >= 1"), (T >= 0, "T >= 0"), (r0 >= 0, "r0 >= 0")], "(66)",
    "Appendix C, client GD (sigma = 0), common eta, tau, mu, L, alpha = 1. Tight: equality for identical "
    "clients with x0 - x~ on the mu-eigenvector.", tight=True)

gd_general_alpha = _st(
    "gd_general_alpha", _R_T, "<=", (1 - alpha * (1 - hbar)) ** T * r0,
    [*_ALPHA, *_HBAR, (T >= 0, "T >= 0"), (r0 >= 0, "r0 >= 0")], "(61)+[ours]",
    "Client GD with any server LR alpha in (0,1]: (61) with sigma = 0.",
    status="corrected", corrects="gd_special_case", reason="[ours] (66) generalised to alpha in (0,1]")

sgd_recursion = _st(
    "sgd_recursion", _R_T1, "<=", (1 - alpha * _a) * r_t + alpha ** 2 * _C,
    [*_ALPHA, *_SGD_COMMON, _SIG, (r_t >= 0, "r_t >= 0")], "(67)",
    "Appendix C, client SGD: (61) with h_i = (1-eta mu)^{2 tau}, q_i = tau eta^2, w_i = 1/M.",
    status="corrected", reason="the printed LHS reads x^(T); it is x^(t+1) (right side as printed; "
                               "q_i = tau eta^2, sigma^2 appears once)", tight=False)

_LHS_DEC = r"\mathbb E\|x^{(T)}-\tilde x\|^2\ \big(\alpha_t=\tfrac{2}{a(t+\beta)},\ a=1-(1-\eta\mu)^{2\tau}\big)"
_PAPER_BETA = [(beta > 0, "beta > 0"),
               (beta * _a ** 2 * r0 <= 4 * sigma2 * eta ** 2 * tau,
                "paper's base case: beta <= 4 sigma^2 eta^2 tau / (a ||x0 - x~||)^2")]
_CORR_BETA = [(beta * _a >= 2, "beta >= 2/a (so that alpha_t <= 1)")]
_BETA_TOO_SMALL = ("alpha_t = 2/(a(t+beta)) must be <= 1 for (61), i.e. beta >= 2/a, which contradicts the paper's "
        "small beta; with nu = max{4C/a^2, beta r0} the induction r_t <= nu/(t+beta) goes through")

sgd_decaying_printed = _st(
    "sgd_decaying_printed", _LHS_DEC, "<=", 4 * _C / (_a ** 2 * (T + beta)),
    [*_SGD_COMMON, (sigma2 > 0, "sigma2 > 0"), (r0 >= 0, "r0 >= 0"), (T >= 0, "T >= 0"), *_PAPER_BETA],
    "(68)/(72)/(73)",
    "Appendix C, client SGD with decaying server LR, as printed: 4 sigma^2 eta^2 tau / (M a^2 (T+beta)). "
    "FALSE: e.g. mu=1, eta=0.1, tau=2, M=2, sigma^2=0.01, r0=1, beta=0.0067643 gives alpha_0 = 859.75 "
    "and r_1 = 26425.2 > 0.0033594.")

sgd_decaying_corrected = _st(
    "sgd_decaying_corrected", _LHS_DEC, "<=", sp.Max(4 * _C / _a ** 2, beta * r0) / (T + beta),
    [*_SGD_COMMON, _SIG, (r0 >= 0, "r0 >= 0"), (T >= 0, "T >= 0"), *_CORR_BETA], "(68)+fix",
    "Client SGD with alpha_t = 2/(a(t+beta)), beta >= 2/a: r_T <= max{4C/a^2, beta r0}/(T+beta), "
    "C = sigma^2 eta^2 tau / M. Tight: attained at T = 0 (beta r0 >= 4C/a^2); for T >= 1 the ratio "
    "(1 - a)(1 + a/2) at beta = 2/a, T = 1, no noise tends to 1 as a -> 0.",
    status="corrected", corrects="sgd_decaying_printed", reason=_BETA_TOO_SMALL, tight=True)

_LHS_TAU1 = r"\mathbb E\|x^{(T)}-x^*\|^2\ (\tau=1)"
sgd_tau1_printed = _st(
    "sgd_tau1_printed", _LHS_TAU1, "<=", 4 * sigma2 / (mu ** 2 * M * (T + beta)),
    [*_SGD_H, (eta * mu <= 1, "eta*mu <= 1"), (M >= 1, "M >= 1"), (sigma2 > 0, "sigma2 > 0"), (r0 >= 0, "r0 >= 0"),
     (T >= 0, "T >= 0"), (beta > 0, "beta > 0"),
     (beta * (eta * mu * (2 - eta * mu)) ** 2 * r0 <= 4 * sigma2 * eta ** 2,
      "paper's base case: beta <= 4 sigma^2 eta^2 / (a ||x0 - x~||)^2")],
    "(74)-(77)",
    "Appendix C, tau = 1 (x~ = x*): 4 sigma^2/(mu^2 M (T+beta)). Inherits the step-size error (false as stated).")

sgd_tau1_corrected = _st(
    "sgd_tau1_corrected", _LHS_TAU1, "<=", sp.Max(4 * sigma2 / (mu ** 2 * M), beta * r0) / (T + beta),
    [*_SGD_H, (eta * mu <= 1, "eta*mu <= 1"), (M >= 1, "M >= 1"), (sigma2 >= 0, "sigma2 >= 0"),
     (r0 >= 0, "r0 >= 0"), (T >= 0, "T >= 0"),
     (beta * eta * mu * (2 - eta * mu) >= 2, "beta >= 2/a, a = eta mu (2 - eta mu)")],
    "(77)+fix", "tau = 1 with the step-size fix: (2/(2-eta mu))^2 <= 4 when eta mu <= 1. Tight: attained at T = 0; "
    "for T >= 1 the ratio (1 - a)(1 + a/2) at beta = 2/a, T = 1, no noise tends to 1 as a -> 0.",
    status="corrected", corrects="sgd_tau1_printed", reason=_BETA_TOO_SMALL, tight=True)

z_expr = 2 * x * tau / (1 - (1 - x) ** (2 * tau))
"""z(x) = 2 x tau / (1 - (1-x)^(2 tau)) of Appendix C (78), x = eta mu."""

z_derivative = _st(
    "z_derivative", r"z'(x)", ">=",
    2 * tau / (1 - (1 - x) ** (2 * tau)) ** 2 * (1 - (1 - x ** 2) ** (2 * tau - 1)),
    [(x > 0, "x > 0"), (x <= 1, "x <= 1"), (tau >= 1, "tau >= 1")], "(79)-(83)",
    "Appendix C: z'(x) >= 2tau[1-(1-x^2)^(2tau-1)]/[1-(1-x)^(2tau)]^2 > 0 (Bernoulli), so z increases on (0,1].",
    tight=None)

z_max = _st(
    "z_max", r"z(x)", "<=", 2 / (1 - (1 - 1 / tau) ** (2 * tau)),
    [(x > 0, "x > 0"), (x * tau <= 1, "x*tau <= 1 (eta mu tau <= 1)"), (tau >= 1, "tau >= 1")], "(84)",
    "Appendix C (84): max of z over 0 < x <= 1/tau is z(1/tau). Tight (attained at x = 1/tau).", tight=True)

z_uniform = _st(
    "z_uniform", r"z(x)", "<=", 2 / (1 - sp.exp(-2)),
    [(x > 0, "x > 0"), (x * tau <= 1, "x*tau <= 1 (eta mu tau <= 1)"), (tau >= 1, "tau >= 1")], "(84)",
    "Appendix C (84): z(1/tau) <= 2/(1-e^-2) ~ 2.313 < 3; the supremum, approached as tau -> infinity.",
    tight=False)

_LHS_85 = r"\mathbb E\|x^{(T)}-\tilde x\|^2\ (\eta\mu\tau\le1)"
sgd_decaying_85_printed = _st(
    "sgd_decaying_85_printed", _LHS_85, "<=", 9 * sigma2 / (mu ** 2 * M * tau * (T + beta)),
    [*_SGD_COMMON, (eta * mu * tau <= 1, "eta*mu*tau <= 1"), (sigma2 > 0, "sigma2 > 0"), (r0 >= 0, "r0 >= 0"),
     (T >= 0, "T >= 0"), *_PAPER_BETA], "(85)",
    "Appendix C (85): 9 sigma^2/(mu^2 M tau (T+beta)). Inherits the step-size error (false as stated).")

sgd_decaying_85_corrected = _st(
    "sgd_decaying_85_corrected", _LHS_85, "<=", sp.Max(9 * sigma2 / (mu ** 2 * M * tau), beta * r0) / (T + beta),
    [*_SGD_COMMON, _SIG, (eta * mu * tau <= 1, "eta*mu*tau <= 1"), (r0 >= 0, "r0 >= 0"), (T >= 0, "T >= 0"),
     *_CORR_BETA],
    "(85)+fix", "(85) with the step-size fix: 4C/a^2 = sigma^2 z(eta mu)^2/(mu^2 M tau) <= 9 sigma^2/(mu^2 M tau). "
    "Tight through its beta r0 branch: attained at T = 0, and (1 - a)(1 + a/2) -> 1 at beta = 2/a, T = 1, no noise.",
    status="corrected", corrects="sgd_decaying_85_printed", reason=_BETA_TOO_SMALL, tight=True)


# ============================================================================ Theorem 2 (d = 1)
def _clients(M_: int, names: Sequence[str]) -> dict:
    from ...validation import integer as _integer  # noqa: PLC0415

    M_ = _integer(M_, "M", low=1, high=16)   # symbolic statements of up to 16 clients
    return {n: [_s(f"{n}_{i}") for i in range(1, M_ + 1)] for n in names}


def _client_conditions(c: dict) -> list:
    out = []
    for name, syms in c.items():
        for s in syms:
            if name == "w":
                out.append((s >= 0, f"{s.name} >= 0"))
            elif name == "tau":
                out.append((s >= 1, f"{s.name} >= 1"))
            elif name in ("eta", "gamma", "P", "H"):
                out.append((s > 0, f"{s.name} > 0"))
    if "w" in c:
        out.append((sum(c["w"]) > 0, "sum of w_i > 0"))
    return out


def _xstar(c: dict):
    return sum(w * h * xs for w, h, xs in zip(c["w"], c["H"], c["xs"])) / sum(w * h for w, h in zip(c["w"], c["H"]))


def theorem2_fixed_point_scalar(M: int = 3) -> Statement:
    r"""Theorem 2 (94) for d = 1 and M explicit clients: the fixed point of E[A].

    :math:`\tilde x=\sum_iw_i(1-k_i)x_i^*/\sum_iw_i(1-k_i)`, :math:`k_i=(1-\eta_iP_iH_i)^{\tau_i}`.
    Conditions: 0 < eta_i P_i H_i < 2 (each local map contracts, so the denominator is positive).

    >>> st = theorem2_fixed_point_scalar(2)
    >>> st.evaluate(w_1=1, w_2=1, eta_1=sp.Rational(1, 2), eta_2=sp.Rational(1, 2), tau_1=1, tau_2=1,
    ...             P_1=1, P_2=1, H_1=1, H_2=1, xs_1=0, xs_2=1)
    1/2
    """
    c = _clients(M, ("w", "eta", "tau", "P", "H", "xs"))
    one_minus_k = [1 - (1 - e * p * h) ** t for e, t, p, h in zip(c["eta"], c["tau"], c["P"], c["H"])]
    expr = sum(w * o * xs for w, o, xs in zip(c["w"], one_minus_k, c["xs"])) / sum(
        w * o for w, o in zip(c["w"], one_minus_k))
    conds = _client_conditions(c) + [(e * p * h < 2, f"{e.name}*{p.name}*{h.name} < 2")
                                     for e, p, h in zip(c["eta"], c["P"], c["H"])]
    return _st("theorem2_fixed_point", r"\tilde x", "==", expr, conds, "(94)",
               f"Theorem 2, fixed point of E[A] for quadratic clients with preconditioned GD (d = 1, M = {M}).",
               tight=True, latex_names=_latex_names(M))


def theorem2_limit_scalar(M: int = 3) -> Statement:
    r"""Theorem 2 limit (8) for d = 1: with eta_i = gamma_i eta, eta -> 0,
    :math:`\tilde x\to\sum_iw_i\gamma_i\tau_iP_iH_ix_i^*/\sum_iw_i\gamma_i\tau_iP_iH_i` (generically != x*).

    In d dimensions (8) needs :math:`\sum_iw_i\gamma_i\tau_iP_iH_i` invertible, which the paper does not say: a
    sum of products of SPD matrices can be singular, and then the fixed point runs off like :math:`1/\eta` (check
    ``limit8_singular``; ``exact.small_eta_limit`` refuses such a sum).  Here, d = 1 with positive parameters, the
    sum is positive and the condition always holds."""
    c = _clients(M, ("w", "gamma", "tau", "P", "H", "xs"))
    wts = [w * g * t * p * h for w, g, t, p, h in zip(c["w"], c["gamma"], c["tau"], c["P"], c["H"])]
    expr = sum(a * xs for a, xs in zip(wts, c["xs"])) / sum(wts)
    return _st("theorem2_limit", r"\lim_{\eta\to0}\tilde x", "==", expr, _client_conditions(c), "(8)",
               f"Theorem 2 (8): the eta -> 0 limit of the fixed point, eta_i = gamma_i eta (d = 1, M = {M}).",
               tight=True, latex_names=_latex_names(M))


def eq9_identity_scalar(M: int = 3) -> Statement:
    r"""Eq. (9) for d = 1: :math:`x^*-\mathcal A(x^*)=\sum_iw_i[1-(1-\eta_iP_iH_i)^{\tau_i}]H_i^{-1}\nabla F_i(x^*)`,
    with :math:`\nabla F_i(x^*)=H_i(x^*-x_i^*)` and :math:`x^*=\sum w_iH_ix_i^*/\sum w_iH_i`; needs sum w_i = 1."""
    c = _clients(M, ("w", "eta", "tau", "P", "H", "xs"))
    xst = _xstar(c)
    expr = sum(w * (1 - (1 - e * p * h) ** t) / h * (h * (xst - xs))
               for w, e, t, p, h, xs in zip(c["w"], c["eta"], c["tau"], c["P"], c["H"], c["xs"]))
    sw = sum(c["w"])
    conds = _client_conditions(c) + [(sp.And(sw <= 1, sw >= 1), "weights sum to 1")]
    return _st("eq9_identity", r"x^*-\mathcal A(x^*)", "==", expr, conds, "(9)",
               f"Eq. (9): the bias of the operator at x* is sum_i w_i W_i grad F_i(x*) (d = 1, M = {M}); "
               "W_i equal for all i is sufficient (not necessary) for x~ = x*.",
               tight=True, latex_names=_latex_names(M))


def plain_gd_bias_scalar(M: int = 3) -> Statement:
    r"""First-order bias of plain local GD (P_i = 1, common eta, tau), d = 1 (derived here):
    :math:`\lim_{\eta\to0}(\tilde x-x^*)/\eta=\frac{\tau-1}2\bar H^{-1}\sum_iw_iH_i^2(x^*-x_i^*)`."""
    c = _clients(M, ("w", "H", "xs"))
    xst = _xstar(c)
    expr = (tau - 1) / 2 * sum(w * h ** 2 * (xst - xs) for w, h, xs in zip(c["w"], c["H"], c["xs"])) / sum(
        w * h for w, h in zip(c["w"], c["H"]))
    return _st("plain_gd_bias", r"\lim_{\eta\to0}\frac{\tilde x-x^*}{\eta}", "==", expr,
               _client_conditions(c) + [(tau >= 1, "tau >= 1")], "[ours]",
               f"Plain local GD, common eta and tau: ||x~ - x*|| = O(eta(tau-1)), with this exact first-order "
               f"coefficient (d = 1, M = {M}).",
               status="corrected", reason="the paper gives only O(eta(tau-1)); this is the exact first-order term",
               tight=True, latex_names=_latex_names(M))


theorem2_fixed_point = theorem2_fixed_point_scalar(3)
theorem2_limit = theorem2_limit_scalar(3)
eq9_identity = eq9_identity_scalar(3)
plain_gd_bias = plain_gd_bias_scalar(3)


@dataclass(frozen=True)
class Theorem2Symbolic:
    """SymPy objects of Theorem 2 for M clients of dimension d (concrete integer ``tau``).

    ``x_tilde`` (94), ``limit`` (8) (gamma_i taken = eta_i: the limit is homogeneous in gamma),
    ``x_hat`` (fixed point with local correction, N_i = eta_i tau_i P_i), ``x_star``, and the two sides of
    (9) at x*: ``eq9_lhs`` = x* - A(x*), ``eq9_rhs`` = sum_i w_i [I - K_i] H_i^{-1} grad F_i(x*).
    Matrices are left unsimplified (inverses by adjugate); compare with ``sympy.simplify`` or exact
    rational substitution.
    """

    w: tuple
    eta: tuple
    tau: tuple
    H: tuple
    P: tuple
    x_opt: tuple
    K: tuple
    x_tilde: sp.Matrix
    x_star: sp.Matrix
    limit: sp.Matrix
    x_hat: sp.Matrix
    eq9_lhs: sp.Matrix
    eq9_rhs: sp.Matrix

    @property
    def symbols(self) -> tuple:
        """The free symbols of the building blocks (those not fixed by ``values``), sorted by name."""
        syms = set()
        for m in (*self.H, *self.P, *self.x_opt, sp.Matrix(self.w), sp.Matrix(self.eta)):
            syms |= m.free_symbols
        return tuple(sorted(syms, key=lambda s: s.name))


def _theorem2_names(M: int, d: int, precond: str, hessian: str) -> set:
    """The names of the symbols :func:`theorem2_fixed_point_symbolic` builds for these arguments."""
    pairs = [(r, c) for r in range(d) for c in range(r, d)]
    names = set()
    for i in range(1, M + 1):
        names |= {f"w_{i}", f"eta_{i}"} | {f"xs_{i}_{r}" for r in range(d)}
        names |= {f"H_{i}_{r}{c}" for r, c in pairs if r == c or hessian == "symmetric"}
        if precond == "diagonal":
            names |= {f"P_{i}_{r}" for r in range(d)}
        elif precond == "general":
            names |= {f"P_{i}_{r}{c}" for r, c in pairs}
    return names


def _symbolic_values(values, names: set) -> dict:
    """``values`` as {symbol name: SymPy object}: keys are names or symbols of ``names``; each value a
    real number (made an exact SymPy number) or a SymPy expression built in code -- text is refused,
    never parsed (``sympify`` would run it as Python)."""
    if values is None:
        return {}
    if not isinstance(values, Mapping):
        raise InputTypeError(f"values must be a mapping from symbol names to numbers or SymPy expressions; got "
                             f"{shown(values)}")
    out = {}
    for k, v in values.items():
        if isinstance(k, sp.Symbol):
            key = k.name
        elif isinstance(k, str):
            key = k
        else:
            raise InputTypeError(f"values: each key must be a symbol name (a string such as 'w_1') or a SymPy "
                                 f"Symbol; got {shown(k)} ({type(k).__name__})")
        if key not in names:
            raise InputError(f"values: {key!r} is not a symbol of this call (it has {', '.join(sorted(names))})")
        out[key] = _sympy_expression(v, f"values[{key!r}]")
    return out


THEOREM2_SIZE_LIMIT = 10_000   # estimated size (_theorem2_size) past which the symbolic build is refused


def _theorem2_size(M: int, d: int, taus, *, precond: str = "diagonal", hessian: str = "symmetric",
                           values=None) -> int:
    r"""An estimate of the work of :func:`theorem2_fixed_point_symbolic`, before any of it is done.

    A client whose step matrix :math:`I-\eta_iP_iH_i` has a symbolic entry builds
    :math:`K_i=(I-\eta_iP_iH_i)^{\tau_i}` as an unexpanded tree that grows about ``b`` times per power
    (``b = d``, ``d**2`` for a general preconditioner, 1 when every matrix is diagonal), and the
    determinants of the solves multiply ``d`` such entries; a client whose blocks are all numbers
    (given through ``values``) costs 1.  The estimate is ``M**2 * sum_i b**(d * tau_i)`` over the
    symbolic clients (plus ``M**2`` per numeric client).  Measured on two shared cores it takes about
    1/500 s per unit from about 2,000 units on (``M=2, d=2, tau=4``: 2,048 units, 3.7 s; ``M=2, d=2,
    tau=6``: 32,768 units, 52 s; ``M=3, d=4, tau=1``: 6,912 units, 9.6 s).
    """
    values = values or {}
    diagonal = hessian == "diagonal" and precond != "general"
    base = 1 if diagonal else (d * d if precond == "general" else d)
    pairs = [(r, c) for r in range(d) for c in range(r, d)]
    total = 0
    for i, t in zip(range(1, M + 1), taus):
        names = [f"eta_{i}"] + [f"H_{i}_{r}{c}" for r, c in pairs if r == c or hessian == "symmetric"]
        names += ([f"P_{i}_{r}" for r in range(d)] if precond == "diagonal"
                  else [f"P_{i}_{r}{c}" for r, c in pairs] if precond == "general" else [])
        numeric = all(n in values and getattr(values[n], "is_number", False) for n in names)
        total += 1 if numeric else base ** (d * t)
    return M * M * total


def theorem2_fixed_point_symbolic(M: int, d: int, *, tau, precond: str = "diagonal",
                                  hessian: str = "symmetric", values=None) -> Theorem2Symbolic:
    r"""Theorem 2 as SymPy matrices with symbolic entries.

    Problem class: quadratic clients :math:`F_i=\tfrac12(x-x_i^*)^\top H_i(x-x_i^*)`; method: tau_i steps
    of preconditioned GD with fixed P_i, then FedOpt's GD server. ``tau`` is an int or a sequence of M
    ints (matrix powers need concrete exponents). ``precond`` in {"diagonal", "identity", "general"}
    (general: symmetric, symbolic entries), ``hessian`` in {"symmetric", "diagonal"}.
    Symbols (plain, no assumptions): ``w_i``, ``eta_i``, ``H_i_rc`` (r <= c), ``P_i_r`` (diagonal) /
    ``P_i_rc``, ``xs_i_r``.
    ``values`` (a mapping from symbol names or symbols to numbers/expressions) is substituted into the
    building blocks *before* the powers and inverses are formed: exact rational results stay fast.

    >>> t2 = theorem2_fixed_point_symbolic(2, 1, tau=1)
    >>> sp.simplify(t2.x_hat[0] - t2.x_star[0])
    0
    >>> t2 = theorem2_fixed_point_symbolic(2, 1, tau=2, values={"w_1": 1, "w_2": 1, "eta_1": sp.Rational(1, 2),
    ...     "eta_2": sp.Rational(1, 2), "P_1_0": 1, "P_2_0": 1, "H_1_00": 1, "H_2_00": 1, "xs_1_0": 0, "xs_2_0": 1})
    >>> t2.x_tilde[0]
    1/2
    """
    from ...validation import array as _array, integer as _integer  # noqa: PLC0415

    # symbolic matrices grow fast: these bounds keep one call within seconds (use the numeric
    # local_adaptivity.exact.fixed_point for larger instances)
    M, d = _integer(M, "M", low=1, high=8), _integer(d, "d", low=1, high=4)
    tau_arr = _array(tau, "tau", kind="integer", low=1, high=16)
    if tau_arr.ndim > 1:
        raise InputError(f"tau must be an int >= 1 or M={M} ints >= 1, got shape {tuple(tau_arr.shape)}")
    taus = tuple(int(t) for t in np.atleast_1d(tau_arr))
    taus = taus * M if len(taus) == 1 else taus
    if len(taus) != M:
        raise InputError(f"tau must be an int >= 1 or M={M} ints >= 1, got {shown(tau)}")
    from ...validation import choice as _choice  # noqa: PLC0415

    _choice(precond, "precond", ("diagonal", "identity", "general"))
    _choice(hessian, "hessian", ("symmetric", "diagonal"))
    # plain symbols (no assumptions): SymPy's assumption queries make products of large symbolic
    # matrices very slow; keys of ``values`` are matched by name
    sub = _symbolic_values(values, _theorem2_names(M, d, precond, hessian))
    size = _theorem2_size(M, d, taus, precond=precond, hessian=hessian, values=sub)
    if size > THEOREM2_SIZE_LIMIT:
        raise InputError(f"theorem2_fixed_point_symbolic(M={M}, d={d}, tau={tau!r}, precond={precond!r}): the symbolic "
                         f"matrices would be too large (estimated size {size:,}, over the limit of "
                         f"{THEOREM2_SIZE_LIMIT:,}, about 20 s; the time grows about in proportion); substitute "
                         f"numbers for some symbols through values=, use a smaller M, d or tau, or the numeric "
                         f"local_adaptivity.exact.fixed_point")

    def val(name):
        return sub.get(name, sp.Symbol(name))

    def sym_matrix(prefix, diagonal):
        return sp.Matrix(d, d, lambda r, c: (val(f"{prefix}_{min(r, c)}{max(r, c)}") if (r == c or not diagonal)
                                             else sp.Integer(0)))

    def inv(A):
        if A.is_diagonal():
            return sp.diag(*[1 / A[r, r] for r in range(d)])
        return A.adjugate() / A.det(method="berkowitz")

    def power(A, t):
        out = A
        for _ in range(t - 1):
            out = out * A
        return out

    I = sp.eye(d)
    w = tuple(val(f"w_{i}") for i in range(1, M + 1))
    et = tuple(val(f"eta_{i}") for i in range(1, M + 1))
    H = tuple(sym_matrix(f"H_{i}", hessian == "diagonal") for i in range(1, M + 1))
    if precond == "identity":
        P = tuple(I for _ in range(M))
    elif precond == "diagonal":
        P = tuple(sp.diag(*[val(f"P_{i}_{r}") for r in range(d)]) for i in range(1, M + 1))
    else:
        P = tuple(sym_matrix(f"P_{i}", False) for i in range(1, M + 1))
    xs = tuple(sp.Matrix([val(f"xs_{i}_{r}") for r in range(d)]) for i in range(1, M + 1))
    K = tuple(power(I - e * p * h, t) for e, p, h, t in zip(et, P, H, taus))

    def solve(mats):
        A = sum((wi * m for wi, m in zip(w, mats)), sp.zeros(d, d))
        b = sum((wi * m * xi for wi, m, xi in zip(w, mats, xs)), sp.zeros(d, 1))
        return inv(A) * b

    x_tilde = solve([I - Ki for Ki in K])
    x_star = solve(list(H))
    limit = solve([e * t * p * h for e, t, p, h in zip(et, taus, P, H)])
    x_hat = solve([inv(e * t * p) * (I - Ki) for e, t, p, Ki in zip(et, taus, P, K)])
    sw = sum(w)
    # A(x*) in the Mann form (needs sum w = 1): x* - sum_i w_i (K_i(x* - x_i*) + x_i*)
    eq9_lhs = x_star * sw - sum((wi * (Ki * (x_star - xi) + xi) for wi, Ki, xi in zip(w, K, xs)), sp.zeros(d, 1))
    eq9_rhs = sum((wi * (I - Ki) * inv(h) * (h * (x_star - xi)) for wi, Ki, h, xi in zip(w, K, H, xs)),
                  sp.zeros(d, 1))
    return Theorem2Symbolic(w=w, eta=et, tau=taus, H=H, P=P, x_opt=xs, K=K, x_tilde=x_tilde, x_star=x_star,
                            limit=limit, x_hat=x_hat, eq9_lhs=eq9_lhs, eq9_rhs=eq9_rhs)


# ============================================================================ Lemma 2 (B.1)
_MUL = [(mu > 0, "mu > 0"), (mu <= L, "mu <= L")]
_L2 = "Lemma 2: rigorous for deterministic curvature (quadratics) or deterministic x, y."
lemma2_14 = _st("lemma2_14", LATEX["g2"], ">=", mu ** 2 * u2, [*_MUL, (u2 >= 0, "u2 >= 0")], "(14)",
                _L2 + " Tight: equality along the mu-eigenvector.", tight=True)
lemma2_15 = _st("lemma2_15", LATEX["g2"], "<=", L * ip, [*_MUL, (ip >= 0, "ip >= 0")], "(15)",
                _L2 + " Tight: equality along the L-eigenvector.", tight=True)
lemma2_16 = _st("lemma2_16", r"(\mu+L)" + LATEX["ip"], ">=", g2 + mu * L * u2,
                [*_MUL, (u2 >= 0, "u2 >= 0"), (g2 >= 0, "g2 >= 0")], "(16)",
                _L2 + " Tight: equality on eigenvectors for mu or L.", tight=True)

# ============================================================================ Lemma 4 (F.2)
_L4 = [(As_norm > 0, "||A_s|| > 0"), (As_norm * As_inv_norm >= 1, "||A_s|| ||A_s^-1|| >= 1"),
       (S_Ab >= 0, "sum_k ||A_k|| ||b_k||^2 >= 0")]
lemma4 = _st("lemma4", r"\|\textstyle\sum_kA_kb_k\|^2", "<=", As_norm ** 2 * As_inv_norm * S_Ab, _L4, "(101)",
             "Lemma 4 for SPD A_k (true for non-commuting A_k too, though the paper's proof needs them to "
             "commute). Tight: equality for K = 1, A_1 = cI.", tight=True)
lemma4_strong = _st("lemma4_strong", r"\|\textstyle\sum_kA_kb_k\|^2", "<=", As_norm * S_Ab, _L4, "(101)+[ours]",
                    "Stronger Lemma 4: ||sum A_k b_k||^2 <= ||A_s|| sum ||A_k|| ||b_k||^2 (block-row proof, "
                    "any SPD A_k). Tight: equality for K = 1 with b along the top eigenvector.",
                    status="corrected", corrects="lemma4",
                    reason="the paper's proof needs commuting A_k; this [ours] form is proven for all SPD A_k "
                           "and is stronger since ||A_s|| ||A_s^-1|| >= 1", tight=True)

# ============================================================================ Theorem 3 (App. F)
_T3 = [(L > 0, "L > 0"), (D >= 0, "D >= 0"), (G >= 0, "G >= 0"), (T >= 1, "T >= 1"),
       (Lambda >= 1, "Lambda >= 1 (forced by sum_k A_k = I)")]
_T3_TEXT = ("Deterministic gradients, F_inf > -infinity, commuting (diagonal) preconditioners (I6, I7). "
            "LHS is the average over t in [0, T-1] of ||grad F(x^(t))||^2.")
_LHS_T3 = r"\frac1T\sum_{t=0}^{T-1}\|\nabla F(x^{(t)})\|^2"
_X3 = (D ** 2 * L ** 2 * Lambda * G ** 2) ** sp.Rational(1, 3) / T ** sp.Rational(2, 3)

theorem3_general = _st(
    "theorem3_general", _LHS_T3, "<=", 2 * D / (alpha * T) + L ** 2 * Lambda * G ** 2 * s2,
    [*_T3, (alpha > 0, "alpha > 0"), (alpha * L <= 1, "alpha <= 1/L"), (s2 >= 0, "s2 >= 0")], "(126)",
    "Theorem 3 (126), local correction, any alpha <= 1/L and per-client eta_i, tau_i. " + _T3_TEXT)

theorem3_128 = _st(
    "theorem3_128", _LHS_T3, "<=", 2 * D / (eta * tau * T) + L ** 2 * Lambda * G ** 2 * eta ** 2 * tau ** 2,
    [*_T3, (eta > 0, "eta > 0"), (tau >= 1, "tau >= 1"), (eta * tau * L <= 1, "alpha = eta*tau <= 1/L")], "(128)",
    "Theorem 3 (128): common eta, tau, alpha = eta tau <= 1/L. " + _T3_TEXT)

theorem3_printed = _st(
    "theorem3_printed", _LHS_T3 + r"\ \big(\eta\text{ of (130)}\big)", "<=",
    D * L / T + _X3, [*_T3, (D > 0, "D > 0"), (G > 0, "G > 0")], "(129)",
    "(129), the last line of Theorem 3's proof, as printed: a bound on the average over t. It does NOT follow "
    "from (128) at the eta of (130): (128) there exceeds (129) for every admissible parameter. This is a false "
    "proof step; Theorem 3's statement (100), an O(.) claim on the minimum over t, is not refuted by it. "
    + _T3_TEXT)

theorem3_128_at_130 = _st(
    "theorem3_128_at_130", r"(128)\big|_{\eta\text{ of (130)}}", "==",
    sp.Piecewise((2 * D * L / T + Lambda * G ** 2, Lambda * G ** 2 * T < D * L), (3 * _X3, True)),
    [*_T3, (D > 0, "D > 0"), (G > 0, "G > 0")], "(128)+(130)",
    "Exact value of the proof's bound (128) at the prescribed eta (130): 3(D^2L^2 Lambda G^2)^(1/3)/T^(2/3) "
    "at the interior choice, 2DL/T + Lambda G^2 when eta = 1/(tau L).",
    status="corrected", corrects="theorem3_printed",
    reason="what (128) actually gives at (130); compare with (129)", tight=True)

theorem3_corrected = _st(
    "theorem3_corrected", _LHS_T3 + r"\ \big(\eta\text{ of (130)}\big)", "<=",
    2 * D * L / T + 3 * _X3, [*_T3, (D > 0, "D > 0"), (G > 0, "G > 0")], "(129)+corrected",
    "Theorem 3 with corrected constants: 2DL/T + 3(D^2 L^2 Lambda G^2)^(1/3)/T^(2/3). " + _T3_TEXT,
    status="corrected", corrects="theorem3_printed",
    reason="(128) at (130) equals 3(D^2L^2 Lambda G^2)^(1/3)/T^(2/3) (interior) or 2DL/T + Lambda G^2 "
           "<= 2DL/T + (...)^(1/3)/T^(2/3) (boundary); (129)'s constants 1 and 1 do not follow", tight=False)


theorem3_min = _st(
    "theorem3_min", r"\min_{t\in[0,T]}\|\nabla F(x^{(t)})\|^2\ \big(\eta\text{ of (99)}\big)", "<=",
    2 * D * L / T + 3 * _X3, [*_T3, (D > 0, "D > 0"), (G > 0, "G > 0")], "(100)+constants",
    "Theorem 3's statement (100), min over t in [0, T] of ||grad F(x^(t))||^2 = O(1/T + Lambda^(1/3) G^(2/3)/T^(2/3)), "
    "with the explicit constants its proof gives: the minimum is at most the average over t in [0, T-1], which (126) "
    "at the eta of (99) bounds by 2DL/T + 3(D^2L^2 Lambda G^2)^(1/3)/T^(2/3) (theorem3_corrected). " + _T3_TEXT,
    status="corrected",
    reason="(100) states an O(.) with hidden constants (they depend on D and L); this is the bound its proof yields")

STATEMENTS = [
    lemma2_14, lemma2_15, lemma2_16, h_sgd, h_sgd_tuned, q_sgd,
    theorem1_contraction, theorem1_printed, lemma3_printed, lemma3, theorem1_proven, theorem1_proven_exp,
    theorem1_recursion, theorem1_constant_alpha,
    gd_special_case, gd_general_alpha, sgd_recursion, sgd_decaying_printed, sgd_decaying_corrected,
    sgd_tau1_printed, sgd_tau1_corrected, z_derivative, z_max, z_uniform,
    sgd_decaying_85_printed, sgd_decaying_85_corrected,
    theorem2_fixed_point, theorem2_limit, eq9_identity, plain_gd_bias,
    lemma4, lemma4_strong,
    theorem3_general, theorem3_128, theorem3_printed, theorem3_128_at_130, theorem3_corrected, theorem3_min,
]
"""All statements of the local adaptivity paper in paper order (appendix lemmas at the point where they are used)."""


# ============================================================================ helpers
class BoundsError(InputError):
    """Bad input to a helper of this module (the message names the parameter and condition)."""


def _positive(name, v, xp, *, allow_zero=False):
    from ...validation import array as _array  # noqa: PLC0415

    return _array(v, name, xp=xp, low=0.0, open_low=not allow_zero).astype(xp.float64)


@dataclass(frozen=True)
class Theorem1Aggregates:
    """``hbar`` = sum_i w_i h_i and ``Cq`` = sigma^2 sum_i w_i^2 q_i (batch shape of the inputs)."""

    hbar: object
    Cq: object


def theorem1_aggregates(weights, h, q, sigma2) -> Theorem1Aggregates:
    r"""Aggregates of Theorem 1: :math:`\bar h=\sum_iw_ih_i`, :math:`C_q=\sigma^2\sum_iw_i^2q_i`.

    ``weights``, ``h``, ``q``: (..., M), broadcasting; ``sigma2``: (...) or scalar. Weights must be
    >= 0 and sum to 1 (the Jensen step (53) needs it); h in [0, 1), q >= 0.  ``h`` and ``q`` are
    the clients' constants of Assumptions 1-2, so their last axis is always the client axis
    (aligned with ``weights``); configurations go in front.

    >>> a = theorem1_aggregates(np.array([0.5, 0.5]), h=np.array([0.25, 0.75]), q=np.array([1.0, 3.0]), sigma2=2.0)
    >>> float(a.hbar), float(a.Cq)
    (0.5, 2.0)
    """
    from ...validation import array as _array  # noqa: PLC0415

    xp = namespace(weights, h, q, sigma2)
    w = validate_weights(weights, xp)
    h = _array(h, "h", xp=xp).astype(xp.float64)
    for name, v in (("h", h), ("q", q)):
        try:
            np.broadcast_shapes(np.shape(v), tuple(w.shape))
        except ValueError:
            raise BoundsError(f"{name} must broadcast against weights {tuple(w.shape)}; got shape {np.shape(v)}") from None
    if bool(xp.any((h < 0) | (h >= 1))):
        raise BoundsError("h must satisfy 0 <= h_i < 1 (Assumption 1)")
    q = _positive("q", q, xp, allow_zero=True)
    s2_ = _positive("sigma2", sigma2, xp, allow_zero=True)
    return Theorem1Aggregates(hbar=(w * h).sum(axis=-1), Cq=s2_ * (w * w * q).sum(axis=-1))


@dataclass(frozen=True)
class Theorem3Aggregates:
    """``alpha`` = sum_i w_i eta_i tau_i (the server LR of (127)) and ``s2`` = sum_i w_i eta_i^2 tau_i^2."""

    alpha: object
    s2: object


def theorem3_aggregates(weights, *, eta, tau) -> Theorem3Aggregates:
    """Aggregates of Theorem 3 (126)/(127) from the clients' ``eta`` and ``tau``.

    ``weights``: (..., M); ``eta``, ``tau``: client parameters (a scalar common to every client,
    ``fltheory.per_client(v)`` with a last axis of M, or an array ``(..., M)`` / ``(..., 1)`` with
    configuration axes in front; a plain 1-D array of several values is refused as ambiguous).

    >>> from fltheory import per_client
    >>> a = theorem3_aggregates(np.array([0.5, 0.5]), eta=per_client([0.1, 0.2]), tau=2)
    >>> round(float(a.alpha), 12), round(float(a.s2), 12)
    (0.3, 0.1)
    """
    from ...validation import PerClient, PerConfiguration, client_parameter  # noqa: PLC0415

    xp = namespace(*(v.values if isinstance(v, (PerClient, PerConfiguration)) else v for v in (weights, eta, tau)))
    w = validate_weights(weights, xp)
    M = w.shape[-1]
    et = client_parameter(eta, "eta", M=M, xp=xp, low=0.0, open_low=True).astype(xp.float64)
    ta = client_parameter(tau, "tau", M=M, xp=xp, kind="integer", low=1).astype(xp.float64)
    return Theorem3Aggregates(alpha=(w * et * ta).sum(axis=-1), s2=(w * et ** 2 * ta ** 2).sum(axis=-1))


def theorem3_eta(*, T, L, D, Lambda, G, tau):
    r"""Client LR prescribed by Theorem 3 (99)/(130):
    :math:`\eta=\min\{1/(\tau L),\ (D/(L^2\Lambda G^2))^{1/3}/(\tau T^{1/3})\}`; the server LR is
    :math:`\alpha=\eta\tau`. Broadcasting over arrays.

    >>> float(theorem3_eta(T=8, L=1, D=1, Lambda=1, G=1, tau=2))
    0.25
    """
    xp = namespace(T, L, D, Lambda, G, tau)
    T_, L_, D_, G_, tau_ = (_positive(n, v, xp) for n, v in
                            (("T", T), ("L", L), ("D", D), ("G", G), ("tau", tau)))
    from ...validation import array as _array  # noqa: PLC0415

    Lam = _array(Lambda, "Lambda", xp=xp).astype(xp.float64)
    if bool(xp.any(Lam < 1)):
        raise BoundsError("Lambda must be >= 1 (sum_k A_k = I forces it)")
    return xp.minimum(1.0 / (tau_ * L_), (D_ / (L_ ** 2 * Lam * G_ ** 2 * T_)) ** (1.0 / 3.0) / tau_)


@dataclass(frozen=True)
class TunedClient:
    """Per-client tuned SGD: ``eta`` = 2/(mu+L), ``h`` = ((L-mu)/(L+mu))^(2 tau) (the minimal h_i(tau))."""

    eta: object
    h: object


def tuned_client_eta(*, mu, L, tau) -> TunedClient:
    """Per-client LR minimising h_i = (1 - eta_i mu_i)^(2 tau_i) over eta_i <= 2/(mu_i+L_i) (Prop. B.2,
    Theorem 1's 'tune a learning rate per client'). Tight: the value is ||(I - eta H)^tau||^2 exactly
    when mu and L are eigenvalues of H.

    >>> t = tuned_client_eta(mu=1.0, L=3.0, tau=1)
    >>> float(t.eta), float(t.h)
    (0.5, 0.25)
    """
    xp = namespace(mu, L, tau)
    mu_, L_ = _positive("mu", mu, xp), _positive("L", L, xp)
    if bool(xp.any(mu_ > L_)):
        raise BoundsError("mu must satisfy mu <= L")
    tau_ = _positive("tau", tau, xp)
    return TunedClient(eta=2.0 / (mu_ + L_), h=((L_ - mu_) / (L_ + mu_)) ** (2 * tau_))


def z_function(x_, *, tau):
    r"""z(x) = 2 x tau / (1 - (1-x)^(2 tau)) of Appendix C (78), for 0 < x <= 1; z(0+) = 1, z(1) = 2 when tau = 1.

    >>> float(z_function(0.5, tau=2))
    2.1333333333333333
    """
    xp = namespace(x_, tau)
    from ...validation import array as _array  # noqa: PLC0415

    xv = _array(x_, "x_", xp=xp).astype(xp.float64)
    if bool(xp.any((xv <= 0) | (xv > 1))):
        raise BoundsError(f"x_ must satisfy 0 < x_ <= 1; got {shown(x_)}")
    tau_ = _positive("tau", tau, xp)
    # 1 - (1-x)^(2 tau) = -expm1(2 tau log1p(-x)), accurate for small x
    with np.errstate(divide="ignore"):  # x = 1: log1p(-1) = -inf, expm1(-inf) = -1 (exact)
        return 2 * xv * tau_ / (-xp.expm1(2 * tau_ * xp.log1p(-xv)))


def sgd_decaying_schedule(t, *, a, beta):
    """Server LR alpha_t = 2/(a (t + beta)) of Appendix C; needs beta >= 2/a for alpha_t <= 1."""
    xp = namespace(t, a, beta)
    a_ = _positive("a", a, xp)
    b_ = _positive("beta", beta, xp)
    return 2.0 / (a_ * (asarray(t, xp, dtype=xp.float64) + b_))


@dataclass(frozen=True)
class Lemma4Quantities:
    """Both sides of Lemma 4: ``lhs`` = ||sum A_k b_k||^2 and the symbols ``As_norm``, ``As_inv_norm``, ``S_Ab``."""

    lhs: object
    As_norm: object
    As_inv_norm: object
    S_Ab: object


def lemma4_aggregates(A, b) -> Lemma4Quantities:
    """Quantities of Lemma 4 for SPD ``A`` (..., K, d, d) and vectors ``b`` (..., K, d), batched."""
    from ...validation import array as _array  # noqa: PLC0415

    xp = namespace(A, b)
    A = xp.astype(_array(A, "A", xp=xp), xp.float64)
    b = xp.astype(_array(b, "b", xp=xp), xp.float64)
    if A.ndim < 3 or b.ndim < 2 or A.shape[-1] != A.shape[-2] or A.shape[-3:-1] != b.shape[-2:]:
        raise BoundsError(f"A must be (..., K, d, d) and b (..., K, d); got {A.shape} and {b.shape}")
    lam_k = xp.linalg.eigvalsh(A)
    if bool(xp.any(lam_k[..., 0] <= 0)):
        raise BoundsError("A must be symmetric positive definite")
    lam_s = xp.linalg.eigvalsh(xp.sum(A, axis=-3))
    v = np.einsum("...kij,...kj->...i", A, b) if xp is np else xp.sum(matvec(A, b), axis=-2)
    return Lemma4Quantities(lhs=xp.sum(v * v, axis=-1), As_norm=lam_s[..., -1], As_inv_norm=1.0 / lam_s[..., 0],
                            S_Ab=xp.sum(lam_k[..., -1] * xp.sum(b * b, axis=-1), axis=-1))
