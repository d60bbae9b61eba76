"""Checks of the local adaptivity paper (Wang et al.): each statement against exact computation or simulation.

Every sampler draws instances inside the statement's assumptions, with the instance strategy of
the paper, and every instance can be rebuilt: ``instance(seed, ...)`` is a pure function of
its arguments.  Quick mode draws a handful of instances; full mode a few dozen.

Instance families, and which assumptions each meets and how:

* ``instance(seed)`` -- random quadratic federations (``random_quadratic_federation``, M 2-5,
  d 1-4, condition number up to 50, Dirichlet weights) with SPD preconditioners (identity,
  random diagonal in [0.1, 10], or ``H_i^{-1}``), client rates ``eta_i = u_i / lambda_max(P_i H_i)``
  with ``u_i < 1`` and ``tau_i`` in 1..20: Theorem 2's setting exactly (quadratic clients, fixed SPD
  ``P_i``, convergent local runs); with ``noise=True`` additive Gaussian gradient noise, so
  Assumptions 1-2 hold with the exact ``h_i = ||K_i||^2`` and ``q_i sigma^2 = tr Cov`` (computed, not bounded);
* 1-D SGD clients (``mu = 1``, additive noise) -- Theorem 1 and the decaying-rate results: strongly
  convex quadratics, for which every constant of Assumptions 1-2 is exact;
* ``SeparableCosineFederation`` -- non-convex, ``L``-smooth, bounded below (``F_inf`` exact), for
  Theorem 3; its Assumptions 4-5 (``Lambda`` and ``G``) are taken from the run itself, and the
  prescribed step size (130) is re-tuned until the run stays within the constants it was tuned
  with, so they hold for that run;
* ``adagrad-129`` -- a two-client quadratic instance (a special case of the cosine family's
  assumptions: smooth, bounded below) on which local AdaGrad beats the proof step (129).

Registered checks (name: what is compared, expected verdict)

* ``closed_form_vs_simulation``: Theorem 2's x~ and the corrected x^ against the batched
  simulator run to convergence (<= 1e-10); holds.
* ``worked_example``: the paper's golden values; holds.
* ``theorem2_scalar``: the SymPy statement (94) against the numeric closed form (d = 1); holds.
* ``limit8``: the limit (8), ``||x~(eta) - lim|| <= B(eta)`` with the O(eta) remainder of
  :func:`uncorrected_limit_remainder` (scale-free: both sides grow with ||A0^-1|| near a singular sum);
  tight (d = 1, tau_i <= 2).
* ``plain_gd_bias``: the classical O(eta (tau - 1)) bias with its exact first-order coefficient,
  ``|x~ - x* - eta c| <= B = O(eta^2)`` (:func:`corrected_first_order_remainder`); tight (tau = 2, in a limit).
* ``limit8_singular``: (8) without its unstated hypothesis (the sum invertible); violated.
* ``limit8_gap``: the "!= x*" of (8): two clients whose P_i differ by a rank-one term orthogonal to
  w_1 H_1 (x* - x_1*) have the limit x* itself; violated (the gap is nonzero only generically).
* ``nonvanishing_bias``: the bias does not vanish as eta -> 0: ``||x~(eta) - x*|| >= ||lim - x*|| - B(eta)``
  with ``lim`` of (8) (exact) and a remainder ``B = O(eta)`` derived here (:func:`uncorrected_limit_remainder`);
  tight (ratio -> 1 as eta -> 0 on every instance with ``lim != x*``).
* ``corrected_bias_first_order``: local correction makes the bias ``fo + O(eta^2)`` with the [ours]
  first-order coefficient ``fo``: ``||x^ - x* - fo|| <= B = O(eta^2)`` with ``B`` derived here
  (:func:`corrected_first_order_remainder`); holds (supremum 1, approached only as eta -> 0 with the
  two clients' first-order terms cancelling).
* ``eq9_skewed_gradient``: (9), x* - A(x*) of simulated local runs against the printed formula; holds.
* ``eq9_identity``: (9) as the SymPy statement (d = 1, M = 3) against simulated local runs, searched over a family
  whose local runs may diverge; holds.
* ``taylor10``: (10), the first-order expansion of x* - A(x*), with its O(eta tau) remainder bounded by a
  constant derived here (:func:`taylor10_remainder`); tight (attained in d = 1 by one client with tau = 2, the
  others with tau = 1: there 1 - f(u) = u/2 exactly).
* ``lemma1``: Lemma 1 (12) on rotated non-convex cosine clients (the Hessian integrated by quadrature); holds.
* ``h_sgd`` (tight), ``q_sgd``, ``lemma2_14/15/16``, ``lemma4*``, ``z_*``: Appendix B/C/F ingredients, on
  quadratics with deterministic x, y.
* ``lemma2_14_random``, ``lemma2_15_random``, ``lemma2_16_random``, ``h_sgd_stochastic``: Lemma 2 with random
  x, y and Prop. B.2 for stochastic SGD, as printed, on a C^2 non-quadratic F (``smoothstep_grad``): violated.
* ``theorem1_recursion``, ``theorem1_constant_alpha``, ``gd_special_case``: Theorem 1 against
  exact noise moments; hold.
* ``theorem1_printed`` (7) with c = 36 against the best achievable server schedule: violated; ``theorem1_proven`` (64) on the same instances: holds.
* ``lemma3_printed``: Lemma 3 (63) as worded (the step sizes given) with s_t = 0: violated (gamma_t = 1/d leaves
  r_t -> c/(ad)); ``lemma3``: with the best schedule (the lemma as proven): holds; ``theorem1_proven_exp``: (63)'s
  exp form applied to Theorem 1: holds.
* ``sgd_decaying_printed``: violated; ``sgd_decaying_corrected``: holds; likewise (77) (``sgd_tau1_*``, tau = 1) and
  (85) (``sgd_decaying_85_*``, eta mu tau <= 1).
* ``theorem3_general`` (126), ``theorem3_corrected``: tight along local-AdaGrad runs with local
  correction; ``theorem3_printed`` (129): violated (ratio -> 2 on one 1-D quadratic client, tau = T = 1);
  ``theorem3_128`` (128): tight; ``theorem3_128_at_130``: (128) at the eta of (130) equals its closed form (identity);
  ``theorem3_min``: Theorem 3's statement (100) with the proof's constants, on the minimum over t: holds.

The checks of Theorem 1, Lemma 3, Appendix C and Theorem 3 are defined in :mod:`.checks_proofs` (registered from
here, in the paper's order; every public name is importable from this module).

Searched (issue 21): the bound checks ``h_sgd``, ``q_sgd``, ``lemma2_*``, ``lemma4*``, ``z_*``,
``theorem1_recursion``, ``theorem1_constant_alpha``, ``theorem1_proven``, ``gd_special_case``,
``sgd_decaying_corrected``, ``theorem3_general``, ``theorem3_corrected``, ``theorem3_printed``, ``nonvanishing_bias``,
``corrected_bias_first_order``, ``taylor10``, ``limit8`` and ``plain_gd_bias`` also run an adversarial search over a family as wide as the
statement's hypotheses (each family's description says which instances attain the supremum).  All are
tight except ``theorem1_proven``, whose supremum is about 0.22 (its constants 32 and 36 are loose), and
``corrected_bias_first_order``, whose supremum 1 is only approached as eta -> 0 (the search reaches 0.99999).  Not searched: the identities (``closed_form_vs_simulation``,
``theorem2_scalar``, ``eq9_skewed_gradient``, ``lemma1``: error/tolerance)
and ``worked_example`` (the paper's printed digits on one fixed instance).  The two bias checks had thresholds of this package's own (half the limit gap at eps = 1e-2,
1e-4, 1e-6; a remainder of 1e3 eps times the first-order term), which a continuous two-client search
broke (ratios 671 and ~1900): the paper claims a LIMIT as eta -> 0, and at a finite eta x~(eta) may
cross x*, and the first-order terms of two clients may cancel.  They now compare with the exact limit
(8) and the exact first-order coefficient, with remainders bounded by derivation (the two
counterexamples stay in tests/test_worst_case_local_adaptivity.py, inside the families).

* ``adaptive_bias_shrinks``: our claim that local correction brings the limit of AdaGrad clients
  closer to x*, at the exact limits: violated (a two-client federation whose uncorrected limit is x*).
"""
from __future__ import annotations

import functools

import numpy as np

import fltheory as flt

from ...problems import QuadraticFederation, SeparableCosineFederation
from ...search import Family, Integer, Real
from ...validation import InputError, per_client, per_configuration
from ...verify import Check, Sample, register
from . import bounds as B
from . import exact
from .algorithm import client_update, fedopt

PAPER = "local_adaptivity"


def _n(quick: bool, q: int, full: int) -> int:
    return q if quick else full


# ----------------------------------------------------------------------------- instances
def instance(seed: int, *, M=None, d=None, precond=None, noise=False, hetero_tau=True):
    """A random quadratic federation with preconditioners, client rates and local steps.

    Returns ``(fed, P, eta, tau)``: ``P`` SPD ``(M, d, d)`` (identity, random diagonal in
    [0.1, 10], or ``H_i^{-1}``), ``eta_i = u_i / lambda_max(P_i H_i)`` with ``u_i`` in
    [0.01, 0.99], ``tau_i`` in [1, 20] (common when ``hetero_tau=False``).
    """
    rng = np.random.default_rng(seed)
    M = int(rng.integers(2, 6)) if M is None else M
    d = int(rng.integers(1, 5)) if d is None else d
    fed = flt.random_quadratic_federation(M=M, d=d, kappa=float(rng.uniform(1, 50)), weights="dirichlet",
                                          seed=seed, heterogeneity=float(rng.uniform(0.5, 3)))
    kind = precond or rng.choice(["identity", "diag", "inverse"])
    if kind == "identity":
        P = np.broadcast_to(np.eye(d), (M, d, d)).copy()
    elif kind == "diag":
        P = np.stack([np.diag(rng.uniform(0.1, 10, d)) for _ in range(M)])
    else:
        P = np.linalg.inv(fed.H)
    lam = np.abs(np.linalg.eigvals(P @ fed.H)).max(-1)
    eta = rng.uniform(0.01, 0.99, M) / lam
    tau = rng.integers(1, 21, M) if hetero_tau else np.full(M, int(rng.integers(1, 21)))
    if noise:
        V = rng.normal(size=(M, d, d))
        V = V @ V.swapaxes(-1, -2) + 0.1 * np.eye(d)
        s2 = rng.uniform(0, 1, M)
        cov = s2[:, None, None] * V / np.trace(V, axis1=-2, axis2=-1)[:, None, None]
        fed = QuadraticFederation(fed.H, fed.x_opt, fed.weights, noise_cov=cov)
    return fed, P, eta, tau


def _norm(v):
    return float(np.linalg.norm(v))


# ----------------------------------------------------------------------------- Theorem 2
def _closed_form_vs_simulation(quick, seed):
    for j in range(_n(quick, 6, 24)):
        s = seed * 1000 + j
        fed, P, eta, tau = instance(s)
        for correction in exact.CORRECTIONS:
            am = float(exact.alpha_max(fed, eta=per_client(eta), tau=per_client(tau), precond=P, correction=correction))
            alpha = 0.9 * min(am, 1.0) if correction == "none" else 0.5 * am
            rho = float(exact.round_map(fed, eta=per_client(eta), tau=per_client(tau), alpha=alpha, precond=P,
                                        correction=correction).spectral_radius())
            if rho > 0.95:
                continue
            T = int(np.ceil(np.log(1e-14) / np.log(max(rho, 1e-3)))) + 20
            sim = fedopt(fed, x0=np.zeros(fed.d), rounds=T, eta=per_client(eta), tau=per_client(tau), client_opt="precond", precond=P,
                         correction=correction, alpha=alpha, record_every=T).x
            cf = exact.fixed_point(fed, eta=per_client(eta), tau=per_client(tau), precond=P, correction=correction).x
            err = _norm(sim - cf) / (1 + _norm(cf))
            yield Sample(err, 0.0, {"instance_seed": s, "correction": correction, "alpha": alpha, "rounds": T},
                         seed=s, size=fed.M * fed.d)


register(Check(f"{PAPER}.closed_form_vs_simulation", paper=PAPER, statement=B.theorem2_fixed_point,
               relation="==", atol=1e-10, rtol=0.0, variant="identity", sampler=_closed_form_vs_simulation,
               description="Theorem 2 (94) and the corrected fixed points vs the simulated FedOpt limit (relative, 1e-10)"))


def _example_fed():
    H = np.array([[[2, 0.5], [0.5, 1]], [[1, 0], [0, 4]], [[3, -1], [-1, 2]]], float)
    return QuadraticFederation(H, np.array([[1.0, 0], [0, 2], [-1, -1]]), np.array([0.5, 0.3, 0.2]))


_JACOBI = np.array([np.diag([0.5, 1.0]), np.diag([1.0, 0.25]), np.diag([1 / 3, 0.5])])


def _worked_example(quick, seed):
    """the paper: value = |library - printed| / (printed precision), bound = 1."""
    fed = _example_fed()
    xt = exact.fixed_point(fed, eta=0.1, tau=5, precond=_JACOBI).x
    xh = exact.fixed_point(fed, eta=0.1, tau=5, precond=_JACOBI, correction="local").x
    lim = exact.small_eta_limit(fed, tau=5, precond=_JACOBI)
    rows = [("x*_1", fed.x_star[0], 91 / 319, 1e-15), ("x*_2", fed.x_star[1], 370 / 319, 1e-15),
            ("x~_1", xt[0], 0.3230642062, 5e-11), ("x~_2", xt[1], 0.6596152707, 5e-11),
            ("x^_1", xh[0], 0.2746960047, 5e-11), ("x^_2", xh[1], 1.1375391711, 5e-11),
            ("lim_1", lim[0], 775 / 2379, 1e-14), ("lim_2", lim[1], 1668 / 2379, 1e-14)]
    for c, v in zip(exact.CORRECTIONS, (4.616, 1.1717, 4.861)):
        rows.append((f"alpha_max[{c}]", exact.alpha_max(fed, eta=0.1, tau=5, precond=_JACOBI, correction=c), v, 5e-4))
    for eta, b0, b1 in [(0.2, 0.5454, 5.235e-2), (0.01, 0.4645, 2.323e-3), (1e-4, 0.4606, 2.306e-5)]:
        x0 = exact.fixed_point(fed, eta=per_client(eta), tau=5, precond=_JACOBI).x
        x1 = exact.fixed_point(fed, eta=per_client(eta), tau=5, precond=_JACOBI, correction="local").x
        rows.append((f"bias_none(eta={eta})", _norm(x0 - fed.x_star), b0, 5e-5))
        rows.append((f"bias_local(eta={eta})", _norm(x1 - fed.x_star), b1, 5e-4 * b1))
    for name, value, printed, tol in rows:
        yield Sample(abs(float(value) - printed) / tol, 1.0, {"quantity": name, "printed": printed, "tol": tol})


register(Check(f"{PAPER}.worked_example", paper=PAPER, statement=None, relation="<=", sampler=_worked_example,
               variant="identity",
               description="the paper's golden values (x*, x~, x^, limit (8), alpha_max, bias table) to the printed digits"))


def _theorem2_scalar(quick, seed):
    st = B.theorem2_fixed_point
    for j in range(_n(quick, 10, 60)):
        s = seed * 1000 + j
        fed, P, eta, tau = instance(s, M=3, d=1, precond="diag")
        vals = {}
        for i in range(3):
            vals.update({f"w_{i+1}": fed.weights[i], f"eta_{i+1}": eta[i], f"tau_{i+1}": float(tau[i]),
                         f"P_{i+1}": P[i, 0, 0], f"H_{i+1}": fed.H[i, 0, 0], f"xs_{i+1}": fed.x_opt[i, 0]})
        sym = float(st(**vals))
        num = float(exact.fixed_point(fed, eta=per_client(eta), tau=per_client(tau), precond=P).x[0])
        yield Sample(sym, num, {"instance_seed": s}, seed=s, size=3)


register(Check(f"{PAPER}.theorem2_scalar", paper=PAPER, statement=B.theorem2_fixed_point, relation="==",
               rtol=1e-9, atol=1e-12, sampler=_theorem2_scalar,
               description="Theorem 2 (94) as a SymPy statement (d = 1) vs the numeric closed form"))


def _hetero_instances(seed, count):
    """Instances with random diagonal P_i and tau_i, so that eta_i tau_i P_i differ across clients."""
    for j in range(count):
        s = seed * 1000 + j
        yield (s, *instance(s, precond="diag"))


def _limit8_singular(quick, seed):
    """(8) without its unstated hypothesis: two clients with sum_i w_i gamma_i tau_i P_i H_i singular, FedOpt still
    converges for each small eta, and eta ||x~(eta)|| tends to a constant (the fixed point runs off like 1/eta)
    instead of 0: value eta ||x~(eta)|| at eta = 1e-4 (1e-5 too in the full run), identity with 0."""
    H = np.array([[[5.0, -2.0], [-2.0, 1.0]], [[1.0, -2.0], [-2.0, 5.0]]])
    P = np.array([np.diag([1 / 3, 3.0]), np.eye(2)])
    fed = QuadraticFederation(H, np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([0.5, 0.5]))
    for eta in ((1e-4,) if quick else (1e-4, 1e-5)):
        fp = exact.fixed_point(fed, eta=eta, tau=3, precond=P)
        yield Sample(eta * _norm(fp.x), 0.0, {"instance": "singular sum", "eta": eta, "tau": 3,
                                               "converges": bool(fp.converges)}, seed=None, size=eta)


register(Check(f"{PAPER}.limit8_singular", paper=PAPER, statement=B.theorem2_limit, relation="==", atol=1e-3,
               rtol=0.0, sampler=_limit8_singular, expected="violated", falsifies="theorem",
               description="Theorem 2 (8) silently needs sum_i w_i gamma_i tau_i P_i H_i invertible: H_1 = [[5, -2], "
                           "[-2, 1]], H_2 = [[1, -2], [-2, 5]], P_1 = diag(1/3, 3), P_2 = I, w = (1/2, 1/2), tau = 3, "
                           "x_1* = (1, 0), x_2* = (0, 1): FedOpt converges for every small eta but x~ ~ -0.25/eta (1, 1)",
               still_stands="(8) holds when the sum is invertible (limit8); small_eta_limit refuses a singular sum"))


# Theorem 2's "!= x*" in (8) with heterogeneous P_i, yet lim = x*: P_1 = I + v v^T / ||v||^2 with v orthogonal to
# g = H_1 (x* - x_1*) = (11, 18)/14 (x* = (3, 5)/14), P_2 = I, common eta and tau
_GAP_H = np.array([[[2.0, 1.0], [1.0, 3.0]], [[1.0, 0.0], [0.0, 2.0]]])
_GAP_XOPT = np.array([[0.0, 0.0], [1.0, 1.0]])
_GAP_V = np.array([18.0, -11.0])
_GAP_P = np.array([np.eye(2) + np.outer(_GAP_V, _GAP_V) / 445.0, np.eye(2)])


def _limit8_gap(quick, seed):
    """||lim - x*|| / ||x*|| (value) against 1e-10 (a gap above round-off, bound) on the instance above; the params
    carry the finite-eta biases, which are O(eta) and vanish."""
    fed = QuadraticFederation(_GAP_H, _GAP_XOPT, np.array([0.5, 0.5]))
    lim = exact.small_eta_limit(fed, tau=5, precond=_GAP_P)
    biases = {f"bias_eta_{name}": _norm(exact.fixed_point(fed, eta=e, tau=5, precond=_GAP_P).x - fed.x_star)
              for name, e in (("0_1", 0.1), ("0_01", 1e-2), ("0_0001", 1e-4))}
    yield Sample(_norm(lim - fed.x_star) / _norm(fed.x_star), 1e-10, {"instance": "P_1 = I + vv^T/|v|^2", "tau": 5,
                                                                    **biases}, seed=None, size=4)


register(Check(f"{PAPER}.limit8_gap", paper=PAPER, statement=B.theorem2_limit, relation=">=", sampler=_limit8_gap,
               variant="printed", expected="violated", falsifies="theorem",
               description="Theorem 2's '!= x*' in (8) (a non-vanishing gap whenever a factor differs across "
                           "clients): H_1 = [[2, 1], [1, 3]], H_2 = diag(1, 2), x_1* = 0, x_2* = (1, 1), w = (1/2, "
                           "1/2), P_1 = I + v v^T/445 with v = (18, -11) orthogonal to H_1 (x* - x_1*), P_2 = I, "
                           "common eta, tau = 5: the P_i differ, yet lim = x* (x~ - x* is O(eta) and vanishes)",
               still_stands="for two clients lim - x* = -A0^-1 (N_1 - N_2) g with g = w_1 H_1 (x* - x_1*), "
                            "N_i = gamma_i tau_i P_i: the gap is nonzero unless (N_1 - N_2) g = 0, so generically; "
                            "the bias tends to it as eta -> 0 (nonvanishing_bias)"))


def _sqrt_spd(P):
    lam, V = np.linalg.eigh(P)
    return (V * np.sqrt(lam)) @ V.T


def _f_local(u, tau):
    """``f(u) = (1 - (1 - u)^tau) / (tau u) = int_0^1 (1 - u t)^(tau - 1) dt`` (``f(0) = 1``), without cancellation."""
    if u == 0:
        return 1.0
    return float(-np.expm1(tau * np.log1p(-u)) / (tau * u)) if u < 0.5 else float((1 - (1 - min(u, 1.0)) ** tau) / (tau * u))


def _u(fed, P, eta):
    """``u_i = eta_i lambda_max(P_i H_i)`` per client."""
    return np.array([eta[i] * float(np.abs(np.linalg.eigvals(P[i] @ fed.H[i])).max()) for i in range(fed.M)])


def uncorrected_limit_remainder(fed, P, eta, tau):
    """``(lim, B)`` with ``lim`` the limit (8) (``gamma_i = eta_i``) and ``||x~(eta) - lim|| <= B``, for every
    ``u_i = eta_i lambda_max(P_i H_i) <= 1`` (``B = inf`` where the perturbation argument does not apply).

    Derivation (ours): with ``S_i = P_i^(1/2) H_i P_i^(1/2)`` and ``f`` of :func:`_f_local`,
    ``I - K_i = eta_i tau_i P_i^(1/2) f(eta_i S_i) P_i^(1/2) H_i``, so ``x~`` solves
    ``(A0 - D) x = sum_i w_i (C_i - D_i) x_i*`` with ``C_i = eta_i tau_i P_i H_i``, ``A0 = sum_i w_i C_i`` (whose
    solution is ``lim``) and ``D_i = eta_i tau_i P_i^(1/2) (I - f(eta_i S_i)) P_i^(1/2) H_i``.  Hence
    ``x~ - lim = -(A0 - D)^(-1) sum_i w_i D_i (x_i* - lim)``; ``f`` is convex and decreasing on [0, 1] with
    ``f'(0) = -(tau - 1)/2``, so ``0 <= I - f(eta_i S_i) <= (tau_i - 1) u_i / 2``, and
    ``B = ||A0^-1|| sum_i w_i k_i ||P_i^(1/2) H_i (x_i* - lim)|| / (1 - ||A0^-1|| sum_i w_i k_i ||P_i^(1/2) H_i||)``
    with ``k_i = eta_i tau_i ||P_i^(1/2)|| (tau_i - 1) u_i / 2``: ``B = O(eta)``.
    """
    u = _u(fed, P, eta)
    lim = exact.small_eta_limit(fed, tau=per_client(tau), gamma=per_client(eta), precond=P)
    A0 = np.einsum("m,mij->ij", fed.weights * eta * tau, P @ fed.H)
    iA = float(np.linalg.norm(np.linalg.inv(A0), 2))
    Dn = num = 0.0
    for i in range(fed.M):
        Ph = _sqrt_spd(P[i])
        k = fed.weights[i] * eta[i] * tau[i] * float(np.linalg.norm(Ph, 2)) * (tau[i] - 1) * u[i] / 2
        Dn += k * float(np.linalg.norm(Ph @ fed.H[i], 2))
        num += k * _norm(Ph @ fed.H[i] @ (fed.x_opt[i] - lim))
    return lim, (iA * num / (1 - iA * Dn) if iA * Dn < 1 else np.inf)


def corrected_first_order_remainder(fed, P, eta, tau):
    """``(fo, B)``: the first-order term ``fo`` of ``x^ - x*`` (:func:`exact.first_order_bias`) and a bound
    ``||x^ - x* - fo|| <= B = O(eta^2)`` valid for every ``u_i = eta_i lambda_max(P_i H_i) <= 1``.

    Derivation (ours): ``Q_i = N_i^-1 (I - K_i) = P_i^(-1/2) S_i^(1/2) f(eta_i S_i) S_i^(1/2) P_i^(-1/2)`` (symmetric),
    ``f(x) = 1 - (tau - 1) x / 2 + r(x)`` with ``0 <= r(x) <= c x^2``, ``c = (tau - 1)(tau - 2)/6`` on [0, 1]
    (``f'' = (tau-1)(tau-2) int t^2 (1 - x t)^(tau-3) dt``), so ``Q_i = H_i - (tau_i - 1) eta_i / 2 H_i P_i H_i + R_i``
    with ``0 <= R_i``, ``||R_i|| <= ||H_i|| c_i u_i^2``.  With ``A = sum_i w_i Q_i``, ``E = sum_i w_i (tau_i - 1)
    eta_i / 2 H_i P_i H_i``, ``R = sum_i w_i R_i`` and ``Delta_i = x_i* - x*`` (``sum_i w_i H_i Delta_i = 0``):
    ``x^ - x* - fo = A^-1 ((E - R) fo + sum_i w_i R_i Delta_i)``, ``A >= min_i f(u_i) Hbar``, ``||E - R|| <=
    max(||E||, ||R||)`` (both PSD), so ``B = (max(||E||, sum_i w_i ||H_i|| c_i u_i^2) ||fo|| + sum_i w_i ||H_i||
    c_i u_i^2 ||Delta_i||) / (lambda_min(Hbar) min_i f(u_i))``.
    """
    u = _u(fed, P, eta)
    w = fed.weights
    fo = exact.first_order_bias(fed, eta=per_client(eta), tau=per_client(tau), precond=P)
    E = np.einsum("m,mij->ij", w * (tau - 1) * eta / 2, fed.H @ P @ fed.H)
    Rn = w * np.linalg.norm(fed.H, 2, axis=(-2, -1)) * (tau - 1) * (tau - 2) / 6 * u ** 2
    num = max(float(np.linalg.norm(E, 2)), float(Rn.sum())) * _norm(fo) + \
        float(Rn @ np.linalg.norm(fed.x_opt - fed.x_star, axis=1))
    den = float(np.linalg.eigvalsh(fed.Hbar).min()) * min(_f_local(u[i], int(tau[i])) for i in range(fed.M))
    return fo, num / den


_EPS = float(np.finfo(float).eps)


def _roundoff(fp, fed):
    """About the float64 error of ``||fp.x - x*||``: eight unit round-offs times each solve's condition and the size of
    its solution or of its data (the right-hand sides are sums over the x_i*, rounded at their own scale)."""
    data = float(np.linalg.norm(fed.x_opt, axis=1).max())
    return 8 * _EPS * (float(fp.condition) * max(_norm(fp.x), data) + float(np.linalg.cond(fed.Hbar))
                       * max(_norm(fed.x_star), data))


def _nonvanishing_sample(fed, P, eta, tau, p, size):
    """||x~(eta) - x*|| (value) >= ||lim - x*|| - B(eta) (bound; 0 where B is not finite), less the round-off of
    the three solves (x~, x*, lim)."""
    lim, Bu = uncorrected_limit_remainder(fed, P, eta, tau)
    gap = _norm(lim - fed.x_star)
    fp = exact.fixed_point(fed, eta=per_client(eta), tau=per_client(tau), precond=P)
    A0 = np.einsum("m,mij->ij", fed.weights * eta * tau, P @ fed.H)
    roundoff = _roundoff(fp, fed) + 8 * _EPS * float(np.linalg.cond(A0)) * _norm(lim)
    bound = gap - Bu - roundoff if np.isfinite(Bu) else 0.0
    return Sample(_norm(fp.x - fed.x_star), bound, {**p, "limit_bias": gap, "remainder": float(Bu)}, None, size)


def _nonvanishing_bias(quick, seed):
    """At eps eta for eps -> 0 (1e-2 ... 1e-9): the bias against the limit gap minus the O(eta) remainder."""
    for s, fed, P, eta, tau in _hetero_instances(seed, _n(quick, 6, 30)):
        for e in (1e-2, 1e-4, 1e-6, 1e-9):
            yield _nonvanishing_sample(fed, P, e * eta, tau, {"instance_seed": s, "eps": e}, fed.M * fed.d)


def _corrected_sample(fed, P, eta, tau, p, size):
    """||x^ - x* - fo|| (value) <= B (bound) plus the round-off of the two float64 solves (their condition numbers)."""
    fo, Bc = corrected_first_order_remainder(fed, P, eta, tau)
    fp = exact.fixed_point(fed, eta=per_client(eta), tau=per_client(tau), precond=P, correction="local")
    return Sample(_norm(fp.x - fed.x_star - fo), Bc + _roundoff(fp, fed), {**p, "first_order": _norm(fo)}, None, size)


def _corrected_first_order(quick, seed):
    for s, fed, P, eta, tau in _hetero_instances(seed, _n(quick, 6, 30)):
        for e in (1.0, 1e-2, 1e-4):
            yield _corrected_sample(fed, P, e * eta, tau, {"instance_seed": s, "eps": e}, fed.M * fed.d)


def _bias_instance(p):
    """The federation of BIAS_FAMILY (see its description): ``(fed, P, eta, tau)``."""
    M, d, rng = p["M"], p["d"], np.random.default_rng([p["seed"], 29])
    h = np.concatenate([[p["h1"], p["h2"]], np.exp(rng.uniform(np.log(0.1), np.log(10), M - 2))])
    ps = np.concatenate([[p["p1"], p["p2"]], np.exp(rng.uniform(np.log(0.1), np.log(10), M - 2))])
    H, P = np.empty((M, d, d)), np.empty((M, d, d))
    for i in range(M):
        Q, R = _rotation(p["seed"] + 7919 * i, d), _rotation(p["seed"] + 104729 * (i + 1), d)
        H[i] = Q @ np.diag(_spectrum(h[i], p["kappa"], d, rng)) @ Q.T
        spread = np.exp(np.linspace(-0.5, 0.5, d) * np.log(p["p_aniso"])) if d > 1 else np.ones(1)
        P[i] = R @ np.diag(ps[i] * spread) @ R.T
    xo = np.zeros((M, d))
    xo[0], xo[1] = -_unit(np.ones(d) if d == 1 else rng.normal(size=d)), p["c2"] * _unit(
        np.ones(d) if d == 1 else rng.normal(size=d))
    xo[2:] = rng.uniform(-3, 3, (M - 2, d))
    w = np.concatenate([[p["w1"]], (1 - p["w1"]) * (np.ones(1) if M == 2 else rng.dirichlet(np.ones(M - 1)))])
    tau = np.concatenate([[p["t1"], p["t2"]], rng.integers(1, 21, M - 2)]).astype(int)
    u = np.concatenate([[p["u1"], p["u2"]], rng.uniform(1e-3, 1, M - 2)])
    lam = np.array([float(np.abs(np.linalg.eigvals(P[i] @ H[i])).max()) for i in range(M)])
    return QuadraticFederation(H, xo, w), P, p["eps"] * u / lam, tau


def _bias_constrain(eps_low):
    def constrain(p):
        p = dict(p)
        p["eps"] = max(p["eps"], eps_low)
        if p["cancel"] and p["t2"] > 1:    # (tau_1 - 1) u_1 = (tau_2 - 1) u_2: first-order terms cancel (d = 1, M = 2)
            p["u2"] = (p["t1"] - 1) * p["u1"] / (p["t2"] - 1)
            if not 0 < p["u2"] <= 1:
                return None
        return p
    return constrain


_BIAS_PARAMS = [Integer("M", 2, 4), Integer("d", 1, 3), Integer("seed", 0, 10**6), Real("w1", 0.02, 0.98),
                Real("h1", 0.1, 10.0, log=True), Real("h2", 0.1, 10.0, log=True), Real("kappa", 1.0, 100.0, log=True),
                Real("p1", 0.1, 10.0, log=True), Real("p2", 0.1, 10.0, log=True),
                Real("p_aniso", 1.0, 100.0, log=True), Real("c2", -3.0, 3.0), Integer("t1", 1, 20),
                Integer("t2", 1, 20), Real("u1", 1e-3, 1.0, log=True), Real("u2", 1e-3, 1.0, log=True),
                Integer("cancel", 0, 1), Real("eps", 1e-9, 1.0, log=True)]
_BIAS_WORDS = ("M = 2..4 quadratic clients in d = 1..3: H_i = Q_i diag(spectrum) Q_i^T (top eigenvalue h_i, condition "
               "kappa, random rotations), general SPD P_i = R_i diag(p_i x anisotropy) R_i^T (not diagonal), "
               "x_1* = -e, x_2* = c2 e' (unit vectors; d = 1: -1 and c2), weights w_1 and the rest, tau_i = 1..20, "
               "client rates eta_i = eps u_i / lambda_max(P_i H_i) with u_i in [1e-3, 1] (local GD converges, and "
               "u_i <= 1 is the derivation's hypothesis); clients 3-4 and the rotations come from the seed; d = 1, "
               "M = 2 is the continuous two-client family (weights, curvatures, P_i, tau_i, eta_i). ")

NONVANISHING_FAMILY = Family(
    _BIAS_PARAMS, constrain=_bias_constrain(1e-9),
    description=_BIAS_WORDS + "Value ||x~ - x*||, bound ||lim - x*|| - B(eta) with lim = (8) exactly "
                "(small_eta_limit) and B the O(eta) remainder derived in uncorrected_limit_remainder. Supremum 1, "
                "reached as eps -> 0 on every instance with lim != x* (within 1e-6 at eps = 1e-9); at a finite eta the "
                "bias may pass through 0 (x~(eta) crosses x*), where the bound is <= 0")
CORRECTED_FAMILY = Family(
    _BIAS_PARAMS, constrain=_bias_constrain(1e-4),
    description=_BIAS_WORDS + "cancel = 1 sets u_2 = (tau_1 - 1) u_1/(tau_2 - 1), where the two clients' first-order "
                "terms cancel exactly when d = 1, M = 2. Value ||x^ - x* - fo|| (fo = first_order_bias), bound the "
                "O(eta^2) B of corrected_first_order_remainder plus the round-off of the two solves (eps >= 1e-4). "
                "Supremum 1 only in a limit: d = 1, M = 2, tau_2 = 2, cancellation, u -> 0 (then value -> "
                "r(u_1) and B -> c_1 u_1^2 times the same factor)")


def _bias_evaluate(sample):
    def evaluate(p):
        fed, P, eta, tau = _bias_instance(p)
        return sample(fed, P, eta, tau, p, p["M"] * p["d"])
    return evaluate


def _limit8_sample(fed, P, eta, tau, p, size):
    """||x~(eta) - lim|| (value) <= B(eta) (bound): ``lim`` of (8) (exact) and ``B = O(eta)`` the remainder derived in
    :func:`uncorrected_limit_remainder`, plus the round-off of the two solves; ``None`` where the perturbation
    argument does not apply (``B = inf``: eta not yet small against ||A0^-1||; (8) is a claim about the limit).
    Scale-free: a wrong limit leaves an O(1) error against a bound that vanishes with eta, and near a singular sum
    both sides grow like ||A0^-1||."""
    lim, Bu = uncorrected_limit_remainder(fed, P, eta, tau)
    if not np.isfinite(Bu):
        return None
    fp = exact.fixed_point(fed, eta=per_client(eta), tau=per_client(tau), precond=P)
    A0 = np.einsum("m,mij->ij", fed.weights * eta * tau, P @ fed.H)
    scale = max(_norm(fp.x), _norm(lim), float(np.linalg.norm(fed.x_opt, axis=1).max()))
    roundoff = 8 * _EPS * (float(fp.condition) + float(np.linalg.cond(A0))) * scale
    return Sample(_norm(fp.x - lim), float(Bu) + roundoff, {**p, "remainder": float(Bu)}, None, size)


def _limit8(quick, seed):
    """x~(eps eta) -> lim as eps -> 0 (1e-2 ... 1e-9): the distance against the derived O(eta) remainder."""
    for s, fed, P, eta, tau in _hetero_instances(seed, _n(quick, 6, 30)):
        for e in (1e-2, 1e-4, 1e-6, 1e-9):
            smp = _limit8_sample(fed, P, e * eta, tau, {"instance_seed": s, "eps": e}, fed.M * fed.d)
            if smp is not None:
                yield smp


def _limit8_constrain(p):
    """The bias family's points (eps >= 1e-9) where the derived remainder B(eta) is finite (eta small enough)."""
    p = _bias_constrain(1e-9)(p)
    if p is None:
        return None
    fed, P, eta, tau = _bias_instance(p)
    return p if np.isfinite(uncorrected_limit_remainder(fed, P, eta, tau)[1]) else None


LIMIT8_FAMILY = Family(
    _BIAS_PARAMS, constrain=_limit8_constrain,
    description=_BIAS_WORDS + "Value ||x~(eta) - lim|| with lim = (8) exactly (small_eta_limit), bound the O(eta) "
                "remainder B(eta) of uncorrected_limit_remainder plus the round-off of the two solves, at the points "
                "where B is finite (eta small against ||A0^-1||: (8) is a limit); both sides scale like ||A0^-1|| near a singular "
                "sum, so the ratio stays below 1 by derivation. Supremum 1, attained in d = 1 when every client has "
                "tau_i <= 2 (then f is linear and each step of the derivation is an equality), e.g. LIMIT8_START")

LIMIT8_START = {"M": 2, "d": 1, "seed": 0, "w1": 0.5, "h1": 1.0, "h2": 2.0, "kappa": 1.0, "p1": 1.0, "p2": 1.0,
                "p_aniso": 1.0, "c2": 1.0, "t1": 2, "t2": 1, "u1": 1.0, "u2": 0.5, "cancel": 0, "eps": 1.0}

register(Check(f"{PAPER}.limit8", paper=PAPER, statement=B.theorem2_limit, relation="<=", sampler=_limit8,
               variant="printed", family=LIMIT8_FAMILY, evaluate=_bias_evaluate(_limit8_sample), search_budget=(20, 80),
               search_start=(LIMIT8_START,), expected="tight",
               description="Theorem 2 (8): x~(eta) -> lim as eta -> 0 with the sum invertible: ||x~(eta) - lim|| <= "
                           "B(eta) = O(eta), a remainder derived here (scale-free: no fixed tolerance)"))


register(Check(f"{PAPER}.nonvanishing_bias", paper=PAPER, statement=B.theorem2_limit, relation=">=",
               sampler=_nonvanishing_bias, variant="printed", expected="tight", family=NONVANISHING_FAMILY,
               evaluate=_bias_evaluate(_nonvanishing_sample), search_budget=(20, 80),
               description="Theorem 2: the bias does not vanish as eta -> 0: ||x~(eta) - x*|| >= ||lim - x*|| - B(eta) "
                           "with lim of (8) (exact) and B = O(eta) derived here; attained as eta -> 0"))


# the worst instance an independent search found (DE + Nelder-Mead, ~4200 evaluations): d = 1, M = 2, tau = (2, 14),
# eps = 1e-8 (u -> 0): 0.99999 (random starts alone stop at 0.9858)
CORRECTED_START = {"M": 2, "d": 1, "seed": 659668, "w1": 0.2598, "h1": 9.853, "h2": 0.6698, "kappa": 2.9206,
                   "p1": 0.11045, "p2": 0.43114, "p_aniso": 29.461, "c2": 1.0136, "t1": 2, "t2": 14, "u1": 0.9998,
                   "u2": 0.017738, "cancel": 0, "eps": 1.0099e-8}
register(Check(f"{PAPER}.corrected_bias_first_order", paper=PAPER, statement=None, relation="<=",
               sampler=_corrected_first_order, variant="corrected", family=CORRECTED_FAMILY,
               evaluate=_bias_evaluate(_corrected_sample), search_budget=(20, 80),
               search_start=(CORRECTED_START,),
               description="local correction: x^ - x* = fo + O(eta^2) with fo = H^-1 sum w_i (tau_i-1) eta_i/2 "
                           "H_i P_i H_i (x*-x_i*); ||x^ - x* - fo|| <= B = O(eta^2) (derived here, u_i <= 1)"))


def _plain_gd_sample(fed, tau, eta, p, size):
    """|x~ - x* - eta c| (value) <= B (bound) for plain local GD (P_i = 1, common eta and tau, d = 1), with ``c`` the
    statement's first-order coefficient and ``B = O(eta^2)`` the remainder of :func:`corrected_first_order_remainder`
    (with P_i = 1 and common eta, tau the local correction is a common scalar, so x~ is the corrected fixed point),
    plus the round-off of the solves.  Scale-free: a wrong coefficient leaves an O(eta) error against an O(eta^2)
    bound, whatever the size of c."""
    vals = {"tau": float(tau)}
    for i in range(fed.M):
        vals.update({f"w_{i+1}": fed.weights[i], f"H_{i+1}": fed.H[i, 0, 0], f"xs_{i+1}": fed.x_opt[i, 0]})
    coef = float(B.plain_gd_bias(**vals))
    P = np.ones((fed.M, 1, 1))
    taus, etas = np.full(fed.M, int(tau)), np.full(fed.M, float(eta))
    _, Bc = corrected_first_order_remainder(fed, P, etas, taus)
    fp = exact.fixed_point(fed, eta=float(eta), tau=int(tau))
    return Sample(abs(float(fp.x[0] - fed.x_star[0]) - eta * coef), Bc + _roundoff(fp, fed),
                  {**p, "coefficient": coef}, None, size)


def _plain_gd_bias(quick, seed):
    for j in range(_n(quick, 6, 30)):
        s = seed * 1000 + j
        fed, _, _, tau = instance(s, M=3, d=1, precond="identity", hetero_tau=False)
        for e in (0.5, 1e-2, 1e-4):
            yield _plain_gd_sample(fed, tau[0], e / fed.L, {"instance_seed": s, "eps": e}, 3)


def _plain_gd_evaluate(p):
    H = np.array([p["H1"], p["H2"], p["H3"]])[:, None, None]
    w = np.array([p["w1"], (1 - p["w1"]) * p["w2"], (1 - p["w1"]) * (1 - p["w2"])])
    fed = QuadraticFederation(H, np.array([[p["xs1"]], [p["xs2"]], [p["xs3"]]]), w)
    return _plain_gd_sample(fed, p["tau"], p["eps"] / float(H.max()), p, 3)


PLAIN_GD_FAMILY = Family(
    [Real("w1", 0.01, 0.98), Real("w2", 0.01, 0.99), Real("H1", 0.01, 100.0, log=True),
     Real("H2", 0.01, 100.0, log=True), Real("H3", 0.01, 100.0, log=True), Real("xs1", -3.0, 3.0),
     Real("xs2", -3.0, 3.0), Real("xs3", -3.0, 3.0), Integer("tau", 1, 50), Real("eps", 1e-8, 1.0, log=True)],
    description="three 1-D quadratic clients (weights w_1, (1 - w_1) w_2, (1 - w_1)(1 - w_2); curvatures H_i in "
                "[0.01, 100], condition up to 1e4; optima in [-3, 3]), P_i = 1, common tau = 1..50 and eta = eps/max H_i "
                "(eps <= 1: local GD converges, the derivation's hypothesis). Value |x~ - x* - eta c|, bound the "
                "O(eta^2) remainder B (below 1 by derivation). Supremum 1, approached at tau = 2 (f linear) with "
                "one client of large w_i H_i (then A = Hbar - E and min_i f(u_i) Hbar nearly agree), e.g. PLAIN_GD_START "
                "(1 - 5e-7)")

PLAIN_GD_START = {"w1": 0.01, "w2": 0.99, "H1": 0.01, "H2": 100.0, "H3": 0.01, "xs1": -3.0, "xs2": 3.0, "xs3": -3.0,
                  "tau": 2, "eps": 0.1}

register(Check(f"{PAPER}.plain_gd_bias", paper=PAPER, statement=B.plain_gd_bias, relation="<=",
               sampler=_plain_gd_bias, variant="corrected", family=PLAIN_GD_FAMILY, evaluate=_plain_gd_evaluate,
               search_budget=(20, 80), search_start=(PLAIN_GD_START,), expected="tight",
               description="plain local GD: x~ - x* = eta c + O(eta^2) with c = (tau-1)/2 Hbar^-1 sum w_i H_i^2 (x* - "
                           "x_i*), d = 1: |x~ - x* - eta c| <= B = O(eta^2), a remainder derived here"))


def _eq9(quick, seed):
    """(9): x* - A(x*) from simulated local runs (client_update: tau_i steps of preconditioned GD) against
    sum_i w_i [I - (I - eta_i P_i H_i)^tau_i] H_i^-1 grad F_i(x*) with matrix powers; relative error."""
    for s, fed, P, eta, tau in _hetero_instances(seed, _n(quick, 6, 30)):
        xs = fed.x_star
        cu = client_update(fed, x=xs, eta=per_client(eta), tau=per_client(tau), client_opt="precond", precond=P,
                           noise=False)
        sim = fed.weights @ cu.delta
        grads = np.einsum("mij,mj->mi", fed.H, xs - fed.x_opt)
        terms = [(np.eye(fed.d) - np.linalg.matrix_power(np.eye(fed.d) - eta[i] * P[i] @ fed.H[i], int(tau[i])))
                 @ np.linalg.solve(fed.H[i], grads[i]) for i in range(fed.M)]
        formula = fed.weights @ np.array(terms)
        scale = float(np.max(np.abs(fed.weights[:, None] * np.array(terms))))
        yield Sample(_norm(sim - formula) / max(scale, 1e-300), 0.0, {"instance_seed": s, "skew": _norm(formula)},
                     seed=s, size=fed.M * fed.d)


register(Check(f"{PAPER}.eq9_skewed_gradient", paper=PAPER, statement=None, relation="==", atol=1e-10, rtol=0.0,
               sampler=_eq9, variant="identity",
               description="(9): x* - A(x*) of simulated local preconditioned GD equals sum_i w_i [I - (I - eta_i P_i "
                           "H_i)^tau_i] H_i^-1 grad F_i(x*) (relative to the largest term, 1e-10), nonzero when the "
                           "clients' eta_i tau_i P_i differ"))


def _eq9_identity_evaluate(p):
    """The statement eq9_identity (d = 1, M = 3; looked up when called) against x* - A(x*) of simulated local runs
    (client_update: tau_i steps of preconditioned GD, A = sum_i w_i A_i).  The tolerance is 1e-10 of the largest
    term w_i (1 - k_i)(x* - x_i*), k_i = (1 - eta_i P_i H_i)^tau_i, plus 8 eps R, R the float64 round-off scale of
    both computations: sum_i w_i [tau_i max(1, |k_i|) (|x_i*| + max(1, |k_i|) |x* - x_i*|) + (1 + |k_i|)(|x*| +
    |x_i*|)] (each local step rounds at the size of its iterate, and an error grows by at most max(1, |k_i|) over
    the run; the formula rounds at the size of its terms).  Where the terms cancel far below |x*| (w_1 -> 1 makes
    x* -> x_1*) neither side resolves them in float64 and the round-off term is the tolerance; the value returned
    is the error as a fraction of that tolerance, times the check's atol 1e-10."""
    xs = np.random.default_rng(p["seed"]).normal(size=3) * 3
    w = np.array([p["w1"], (1 - p["w1"]) * p["w2"], (1 - p["w1"]) * (1 - p["w2"])])
    h, P, u = (np.array([p[f"{n}{i}"] for i in (1, 2, 3)]) for n in ("h", "p", "u"))
    tau = np.array([p[f"t{i}"] for i in (1, 2, 3)])
    eta = u / (P * h)
    fed = QuadraticFederation(h[:, None, None], xs[:, None], w)
    x_star = float((w * h * xs).sum() / (w * h).sum())
    cu = client_update(fed, x=np.array([x_star]), eta=per_client(eta), tau=per_client(tau), client_opt="precond",
                       precond=P[:, None, None], noise=False)
    sim = float(w @ cu.delta[:, 0])
    vals = {f"{n}_{i + 1}": float(v[i]) for n, v in (("w", w), ("eta", eta), ("tau", tau), ("P", P), ("H", h),
                                                     ("xs", xs)) for i in range(3)}
    formula = float(B.eq9_identity(**vals))
    k = (1 - u) ** tau
    scale = float(np.max(np.abs(w * (1 - k) * (x_star - xs))))
    big = np.maximum(1.0, np.abs(k))
    roundoff = float(np.sum(w * (tau * big * (np.abs(xs) + big * np.abs(x_star - xs))
                                 + (1 + np.abs(k)) * (abs(x_star) + np.abs(xs)))))
    tol = 1e-10 * scale + 8 * _EPS * roundoff
    return Sample(1e-10 * abs(sim - formula) / max(tol, 1e-300), 0.0,
                  {**p, "value": sim, "formula": formula, "largest_term": scale, "tolerance": tol}, None, 3)


EQ9_FAMILY = Family(
    [Integer("seed", 0, 10**6), Real("w1", 0.0, 1.0), Real("w2", 0.0, 1.0)]
    + [Real(f"{n}{i}", 0.1, 10.0, log=True) for n in ("h", "p") for i in (1, 2, 3)]
    + [Real(f"u{i}", 1e-3, 3.0, log=True) for i in (1, 2, 3)] + [Integer(f"t{i}", 1, 20) for i in (1, 2, 3)],
    description="d = 1, M = 3 quadratic clients F_i = h_i (x - x_i*)^2/2 (h_i > 0, x_i* = 3 N(0, 1) from the seed), "
                "weights (w1, (1 - w1) w2, (1 - w1)(1 - w2)) summing to 1, preconditioners P_i > 0, client rates "
                "eta_i = u_i/(P_i h_i) with u_i up to 3 (the statement does not need eta_i P_i H_i < 2: local runs may "
                "diverge, |k_i| up to 2^20), tau_i in 1..20; value |simulated x* - A(x*) - (9)| over the largest term")


def _eq9_identity(quick, seed):
    rng = np.random.default_rng([seed, 9])
    for _ in range(_n(quick, 6, 40)):
        p = {"seed": int(rng.integers(0, 10**6)), "w1": float(rng.uniform()), "w2": float(rng.uniform())}
        p.update({f"{n}{i}": float(np.exp(rng.uniform(np.log(0.1), np.log(10)))) for n in ("h", "p") for i in (1, 2, 3)})
        p.update({f"u{i}": float(np.exp(rng.uniform(np.log(1e-3), np.log(3)))) for i in (1, 2, 3)})
        p.update({f"t{i}": int(rng.integers(1, 21)) for i in (1, 2, 3)})
        yield _eq9_identity_evaluate(p)


register(Check(f"{PAPER}.eq9_identity", paper=PAPER, statement=B.eq9_identity, relation="==", atol=1e-10, rtol=0.0,
               sampler=_eq9_identity, family=EQ9_FAMILY, evaluate=_eq9_identity_evaluate, search_budget=(8, 40),
               description="(9) as the SymPy statement (d = 1, M = 3): x* - A(x*) of simulated local preconditioned GD "
                           "equals sum_i w_i [1 - (1 - eta_i P_i H_i)^tau_i] H_i^-1 grad F_i(x*) (relative to the "
                           "largest term, 1e-10, plus the float64 round-off of both sides)"))


def taylor10_remainder(fed, P, eta, tau):
    """``(value, B)`` for (10): ``value = ||x* - A(x*) - sum_i w_i eta_i tau_i P_i grad F_i(x*)|| / max_i eta_i tau_i``
    and its bound ``B = sum_i w_i eta_i tau_i ||P_i^(1/2)|| (tau_i - 1) u_i / 2 ||P_i^(1/2) grad F_i(x*)|| / max_i
    eta_i tau_i`` (``u_i = eta_i lambda_max(P_i H_i) <= 1``) plus the float64 round-off of ``x* - A(x*)``, the
    paper's O(eta_i tau_i) with a constant derived here:
    ``[I - K_i] H_i^-1 = eta_i tau_i P_i^(1/2) f(eta_i S_i) P_i^(1/2)`` and ``0 <= I - f <= (tau_i - 1) u_i / 2``
    (:func:`uncorrected_limit_remainder`)."""
    u = _u(fed, P, eta)
    xs = fed.x_star
    pg = exact.pseudo_gradient(fed, xs, eta=per_client(eta), tau=per_client(tau), precond=P)
    g = np.einsum("mij,mj->mi", fed.H, xs - fed.x_opt)
    first = np.einsum("m,mij,mj->i", fed.weights * eta * tau, P, g)
    bound = roundoff = 0.0
    for i in range(fed.M):
        Ph = _sqrt_spd(P[i])
        k = fed.weights[i] * eta[i] * tau[i] * float(np.linalg.norm(Ph, 2))
        bound += k * (tau[i] - 1) * u[i] / 2 * _norm(Ph @ g[i])
        # ||I - K_i|| <= k_i ||P_i^(1/2) H_i||: tau_i round-offs of it on x* - x_i* (binary powering, then C x* - c)
        roundoff += 8 * _EPS * tau[i] * k * float(np.linalg.norm(Ph @ fed.H[i], 2)) * (_norm(xs) + _norm(fed.x_opt[i]))
    m = float(np.max(eta * tau))
    return _norm(pg - first) / m, (bound + roundoff) / m


def _taylor10_sample(fed, P, eta, tau, p, size):
    value, bound = taylor10_remainder(fed, P, eta, tau)
    return Sample(value, bound, dict(p), None, size)


def _taylor10(quick, seed):
    for s, fed, P, eta, tau in _hetero_instances(seed, _n(quick, 6, 30)):
        for e in (1.0, 1e-2, 1e-4):
            yield _taylor10_sample(fed, P, e * eta, tau, {"instance_seed": s, "eps": e}, fed.M * fed.d)


TAYLOR10_FAMILY = Family(
    _BIAS_PARAMS, constrain=_bias_constrain(1e-6),
    description=_BIAS_WORDS + "Value ||x* - A(x*) - sum_i w_i eta_i tau_i P_i grad F_i(x*)|| / max eta_i tau_i, bound "
                "the O(eta tau) remainder of taylor10_remainder (eps >= 1e-6). Supremum 1, attained: d = 1, one "
                "client with tau = 2 and the others with tau = 1, where f(u) = [1 - (1 - u)^2]/(2u) = 1 - u/2 makes "
                "1 - f(u) = (tau - 1) u / 2 an equality at every u (for tau >= 3 only as u -> 0)")
# the attaining instance (ratio 1 - 2e-14: the bound's round-off allowance)
TAYLOR10_START = {"M": 2, "d": 1, "seed": 0, "w1": 0.5, "h1": 1.0, "h2": 1.0, "kappa": 1.0, "p1": 1.0, "p2": 1.0,
                  "p_aniso": 1.0, "c2": 1.0, "t1": 1, "t2": 2, "u1": 0.5, "u2": 0.5, "cancel": 0, "eps": 1.0}

register(Check(f"{PAPER}.taylor10", paper=PAPER, statement=None, relation="<=", sampler=_taylor10, variant="corrected",
               family=TAYLOR10_FAMILY, evaluate=_bias_evaluate(_taylor10_sample), search_budget=(20, 80),
               search_start=(TAYLOR10_START,),
               description="(10): [x* - A(x*)]/max eta_i tau_i = sum_i w_i eta_i tau_i P_i/max eta_i tau_i grad "
                           "F_i(x*) + O(eta tau), with the O(eta tau) term bounded by a constant derived here"))


# ----------------------------------------------------------------------------- searched families (issue 21)
@functools.lru_cache(maxsize=4096)
def _rotation(seed: int, d: int):
    """A random orthogonal d x d matrix from ``seed`` (QR of a Gaussian matrix; cached, read-only)."""
    q, r = np.linalg.qr(np.random.default_rng([seed, d, 17]).normal(size=(d, d)))
    q = q * np.sign(np.diag(r))
    q.flags.writeable = False
    return q


def _spectrum(L: float, kappa: float, d: int, rng):
    """Eigenvalues mu = L/kappa <= ... <= L (both ends present when d >= 2; d = 1: the single eigenvalue L, mu = L)."""
    if d == 1:
        return np.array([L])
    mu = L / kappa
    return np.sort(np.concatenate([[mu, L], rng.uniform(mu, L, d - 2)]))


def _unit(v):
    return v / max(float(np.linalg.norm(v)), 1e-300)


def _ratios(value, bound):
    """value / bound entrywise, 0 where the bound is 0 (the worst entry of a per-round statement is the argmax)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(bound > 0, value / np.where(bound > 0, bound, 1.0), 0.0)


def _sample(value, bound, p, size):
    return Sample(float(value), float(bound), dict(p), None, float(size))


# ----------------------------------------------------------------------------- Appendix B
def _h_sgd(quick, seed):
    st = B.h_sgd
    for j in range(_n(quick, 10, 60)):
        s = seed * 1000 + j
        rng = np.random.default_rng(s)
        fed = flt.random_quadratic_federation(M=1, d=int(rng.integers(1, 5)), kappa=float(rng.uniform(1, 50)), seed=s)
        mu, L = float(fed.mu), float(fed.L)
        eta = float(rng.uniform(0.01, 1.0)) * 2 / (mu + L)
        k = int(rng.integers(1, 20))
        K = np.linalg.matrix_power(np.eye(fed.d) - eta * fed.H[0], k)
        value = np.linalg.norm(K, 2) ** 2
        yield Sample(value, float(st(eta=eta, mu=mu, L=L, k=k)), {"instance_seed": s, "eta": eta, "k": k}, seed=s, size=fed.d)


_ONE_CLIENT = [Integer("d", 1, 4), Integer("seed", 0, 10**6), Real("L", 0.1, 10.0, log=True),
               Real("kappa", 1.0, 100.0, log=True)]

H_SGD_FAMILY = Family(
    _ONE_CLIENT + [Integer("k", 0, 30), Real("eta_frac", 1e-3, 1.0, log=True)],
    description="one quadratic client H = Q diag(mu, ..., L) Q^T (random rotation Q and inner eigenvalues from the "
                "seed, mu = L/kappa; d = 1: H = L), any L, client GD/SGD rate eta = eta_frac 2/(mu + L) (the whole "
                "range of Prop. B.2), k = 0..30 local steps; value ||(I - eta H)^k||^2 exactly. Equality on every "
                "instance: mu is an eigenvalue of H and |1 - eta L| <= 1 - eta mu when eta <= 2/(mu + L)")


def _h_sgd_evaluate(p):
    rng = np.random.default_rng(p["seed"])
    lam = _spectrum(p["L"], p["kappa"], p["d"], rng)
    mu, L = float(lam[0]), float(lam[-1])
    eta = p["eta_frac"] * 2 / (mu + L)
    value = float(np.max(np.abs(1 - eta * lam)) ** (2 * p["k"]))     # ||(I - eta H)^k|| for symmetric H
    return _sample(value, B.h_sgd(eta=eta, mu=mu, L=L, k=p["k"]), {**p, "eta": eta}, p["d"])


register(Check(f"{PAPER}.h_sgd", paper=PAPER, statement=B.h_sgd, sampler=_h_sgd, expected="tight",
               family=H_SGD_FAMILY, evaluate=_h_sgd_evaluate, search_budget=(20, 80),
               description="Prop. B.2: ||(I - eta H)^k||^2 <= (1 - eta mu)^(2k) for eta <= 2/(mu+L); attained on "
                           "every instance (mu is an eigenvalue of H)"))


def _q_sgd(quick, seed):
    st = B.q_sgd
    for j in range(_n(quick, 10, 60)):
        s = seed * 1000 + j
        fed, P, eta, tau = instance(s, precond="identity", noise=True)
        eta = np.random.default_rng(s).uniform(0.01, 1.0, fed.M) * 2 / np.asarray(fed.L_i)
        cov = exact.client_covariances(fed, eta=per_client(eta), tau=per_client(tau))
        tr = np.trace(cov, axis1=-2, axis2=-1)
        for i in range(fed.M):
            s2 = float(np.trace(fed.noise_cov[i]))
            if s2 <= 1e-12:
                continue
            yield Sample(tr[i] / s2, float(st(eta=eta[i], L=float(fed.L_i[i]), k=float(tau[i]))),
                         {"instance_seed": s, "client": i}, seed=s, size=fed.d)


Q_SGD_FAMILY = Family(
    _ONE_CLIENT + [Integer("k", 1, 20), Real("etaL", 1e-3, 2.0, log=True), Real("noise_top", 0.0, 1.0)],
    description="one quadratic client H = Q diag(mu, ..., L) Q^T (as for h_sgd, any L), additive gradient noise "
                "Sigma = (1 - noise_top) R / tr R + noise_top v_L v_L^T (R a random SPD matrix from the seed, v_L the "
                "top eigenvector; tr Sigma = 1), eta L = etaL anywhere in (0, 2], k = 1..20 local SGD steps; value "
                "tr Cov[A(x; k)] / tr Sigma exactly (client_covariances). Equality at k = 1 (Cov = eta^2 Sigma), and "
                "for every k at eta L = 2 with the noise on the top eigenvector (|1 - eta L| = 1)")


def _q_sgd_evaluate(p):
    rng = np.random.default_rng(p["seed"])
    d, lam = p["d"], _spectrum(p["L"], p["kappa"], p["d"], rng)
    Q = _rotation(p["seed"], d)
    H = Q @ np.diag(lam) @ Q.T
    R = rng.normal(size=(d, d))
    R = R @ R.T + 1e-3 * np.eye(d)
    Sigma = (1 - p["noise_top"]) * R / np.trace(R) + p["noise_top"] * np.outer(Q[:, -1], Q[:, -1])
    eta = p["etaL"] / float(lam[-1])
    fed = QuadraticFederation(H[None], np.zeros((1, d)), np.ones(1), noise_cov=Sigma[None])
    tr = float(np.trace(exact.client_covariances(fed, eta=per_client([eta]), tau=per_client([p["k"]]))[0]))
    return _sample(tr / float(np.trace(Sigma)), B.q_sgd(eta=eta, L=float(lam[-1]), k=p["k"]), {**p, "eta": eta}, d)


register(Check(f"{PAPER}.q_sgd", paper=PAPER, statement=B.q_sgd, sampler=_q_sgd,
               family=Q_SGD_FAMILY, evaluate=_q_sgd_evaluate, search_budget=(20, 80),
               description="Prop. B.3: tr Cov[A_i(x)] / tr Sigma_i <= tau eta^2 when eta L <= 2 (exact covariance); "
                           "attained at tau = 1, and at eta L = 2 with the noise on the top eigenvector"))


_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(40)


def _cosine_instance(s):
    rng = np.random.default_rng(s)
    M, d = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    a = rng.uniform(0.2, 2.0, (M, d))
    b = rng.uniform(0.0, 2.0, (M, d))
    c = rng.uniform(-2, 2, (M, d))
    w = rng.dirichlet(np.ones(M))
    w = np.maximum(w, 0.05)
    return SeparableCosineFederation(a, b, c, w / w.sum()), rng


def _lemma1(quick, seed):
    """Lemma 1 (12) on rotated non-convex cosine clients G(x) = F_i(Q x) (non-diagonal Hessian Q^T diag(a - b cos Qx) Q):
    grad G(x) - grad G(y) against H (x - y), H the 40-point Gauss-Legendre integral of the Hessian on [y, x];
    error relative to ||grad G(x) - grad G(y)||."""
    for j in range(_n(quick, 10, 60)):
        s = seed * 1000 + j
        fed, rng = _cosine_instance(s)
        d = fed.d
        Q = _rotation(s, d)
        a, b, c = fed.a[0], fed.b[0], fed.c[0]
        x, y = rng.normal(0, 2, d), rng.normal(0, 2, d)

        def grad(z):
            v = Q @ z
            return Q.T @ (a * (v - c) - b * np.sin(v))
        t = (_GL_NODES + 1) / 2
        Hs = [Q.T @ np.diag(a - b * np.cos(Q @ (y + ti * (x - y)))) @ Q for ti in t]
        H = sum(wi / 2 * Hi for wi, Hi in zip(_GL_WEIGHTS, Hs))
        dg = grad(x) - grad(y)
        yield Sample(_norm(dg - H @ (x - y)) / max(_norm(dg), 1e-300), 0.0, {"instance_seed": s, "d": d}, seed=s,
                     size=d)


register(Check(f"{PAPER}.lemma1", paper=PAPER, statement=None, relation="==", atol=1e-10, rtol=0.0,
               sampler=_lemma1, variant="identity",
               description="Lemma 1 (12): grad F(x) - grad F(y) = H (x - y), H the integral of the Hessian on the "
                           "segment, on rotated non-convex cosine clients (quadrature, relative 1e-10)"))


def _lemma2(quick, seed):
    for j in range(_n(quick, 10, 60)):
        s = seed * 1000 + j
        rng = np.random.default_rng(s)
        fed = flt.random_quadratic_federation(M=1, d=int(rng.integers(1, 5)), kappa=float(rng.uniform(1, 50)), seed=s)
        H, mu, L = fed.H[0], float(fed.mu), float(fed.L)
        u = rng.normal(size=fed.d)  # x - y, deterministic
        g = H @ u                   # grad F(x) - grad F(y)
        yield s, fed.d, mu, L, float(u @ u), float(g @ g), float(u @ g)


def _lemma2_sampler(which):
    def sampler(quick, seed):
        for s, d, mu, L, u2, g2, ip in _lemma2(quick, seed):
            if which == "14":
                yield Sample(g2, float(B.lemma2_14(mu=mu, L=L, u2=u2)), {"instance_seed": s}, seed=s, size=d)
            elif which == "15":
                yield Sample(g2, float(B.lemma2_15(mu=mu, L=L, ip=ip)), {"instance_seed": s}, seed=s, size=d)
            else:
                yield Sample((mu + L) * ip, float(B.lemma2_16(mu=mu, L=L, g2=g2, u2=u2)), {"instance_seed": s}, seed=s, size=d)
    return sampler


LEMMA2_FAMILY = Family(
    [Integer("d", 1, 5), Integer("seed", 0, 10**6), Real("L", 0.1, 10.0, log=True), Real("kappa", 1.0, 100.0, log=True),
     Real("u_mu", 0.0, 1.0), Real("u_L", 0.0, 1.0), Real("u_rest", 0.0, 1.0)],
    constrain=lambda p: None if p["u_mu"] == p["u_L"] == p["u_rest"] == 0 else p,
    description="a quadratic F with Hessian H = Q diag(mu, ..., L) Q^T (random rotation and inner eigenvalues from "
                "the seed, mu = L/kappa, any L; d = 1: H = L = mu), deterministic x - y = u_mu v_mu + u_L v_L + "
                "u_rest r (v_mu, v_L the extreme eigenvectors, r a random unit vector), mu and L the exact "
                "extreme eigenvalues (looser constants only loosen the bounds). Equality: (14) along v_mu, (15) along "
                "v_L, (16) along either")
_LEMMA2_WHICH = {"14": (B.lemma2_14, "x - y along the mu-eigenvector"),
                 "15": (B.lemma2_15, "x - y along the L-eigenvector"),
                 "16": (B.lemma2_16, "x - y along the mu- or the L-eigenvector")}


def _lemma2_evaluate(which):
    def evaluate(p):
        rng = np.random.default_rng(p["seed"])
        d, lam = p["d"], _spectrum(p["L"], p["kappa"], p["d"], rng)
        mu, L = float(lam[0]), float(lam[-1])
        Q = _rotation(p["seed"], d)
        u = p["u_mu"] * Q[:, 0] + p["u_L"] * Q[:, -1] + p["u_rest"] * _unit(rng.normal(size=d))
        g = Q @ (lam * (Q.T @ u))
        u2, g2, ip = float(u @ u), float(g @ g), float(u @ g)
        if which == "14":
            return _sample(g2, B.lemma2_14(mu=mu, L=L, u2=u2), p, d)
        if which == "15":
            return _sample(g2, B.lemma2_15(mu=mu, L=L, ip=ip), p, d)
        return _sample((mu + L) * ip, B.lemma2_16(mu=mu, L=L, g2=g2, u2=u2), p, d)
    return evaluate


for _w, (_st, _where) in _LEMMA2_WHICH.items():
    register(Check(f"{PAPER}.lemma2_{_w}", paper=PAPER, statement=_st, sampler=_lemma2_sampler(_w),
                   family=LEMMA2_FAMILY, evaluate=_lemma2_evaluate(_w), search_budget=(20, 80),
                   description=f"Lemma 2 ({_w}) on random SPD quadratics, deterministic x, y; attained with {_where}"))


# ---- Lemma 2 and Prop. B.2 as printed: random x, y (one shared random source) on a NON-quadratic F.  The proof of
# Lemma 2 writes E[grad F(x) - grad F(y)] = E[H (x - y)] with H of Lemma 1 and then bounds H by mu and L as if it were
# not random; H depends on (x, y), so E[H (x - y)] is not "between mu E[x - y] and L E[x - y]".  On quadratics H is
# constant and the lemma holds (lemma2_14/15/16).
SMOOTH_MU, SMOOTH_L, SMOOTH_A = 1.0, 2.0, 100.0


def smoothstep_grad(z, mu=SMOOTH_MU, L=SMOOTH_L, a=SMOOTH_A):
    """F' of the 1-D C^2 function with F'' = mu + (L - mu) S(z - a), S the cubic smoothstep 3t^2 - 2t^3 on [0, 1]
    (0 below, 1 above): F is mu-strongly convex and L-smooth, quadratic with curvature mu for z <= a and L for
    z >= a + 1.  F'(z) = mu z + (L - mu) I(z - a) with I(t) = 0 (t <= 0), t^3 - t^4/2 (0 < t < 1), t - 1/2 (t >= 1)."""
    t = np.asarray(z, float) - a
    c = np.clip(t, 0.0, 1.0)
    I = np.where(t >= 1, t - 0.5, c ** 3 - c ** 4 / 2)
    return mu * np.asarray(z, float) + (L - mu) * I


# two equally likely outcomes of the shared source: (x, y) = pair 1 (curvature mu) or pair 2 (curvature L)
LEMMA2_RANDOM = {"14": ((-3.0, -5.0), (SMOOTH_A + 11.0, SMOOTH_A + 11.9)),
                 "15": ((-5.0, -4.0), (SMOOTH_A + 12.0, SMOOTH_A + 10.0)),
                 "16": ((-3.0, -5.0), (SMOOTH_A + 11.0, SMOOTH_A + 11.9))}


def _lemma2_random(which):
    """Exact expectations over the two outcomes of LEMMA2_RANDOM[which] (value and bound as in lemma2_*)."""
    def sampler(quick, seed):
        xy = np.array(LEMMA2_RANDOM[which])
        Eu = float(np.mean(xy[:, 0] - xy[:, 1]))
        Eg = float(np.mean(smoothstep_grad(xy[:, 0]) - smoothstep_grad(xy[:, 1])))
        mu, L, u2, g2, ip = SMOOTH_MU, SMOOTH_L, Eu ** 2, Eg ** 2, Eu * Eg
        params = {"mu": mu, "L": L, "a": SMOOTH_A, "outcomes": xy.tolist(), "E[x-y]": Eu, "E[grad diff]": Eg}
        if which == "14":
            yield Sample(g2, float(B.lemma2_14(mu=mu, L=L, u2=u2)), params, None, 1)
        elif which == "15":
            yield Sample(g2, float(B.lemma2_15(mu=mu, L=L, ip=ip)), params, None, 1)
        else:
            yield Sample((mu + L) * ip, float(B.lemma2_16(mu=mu, L=L, g2=g2, u2=u2)), params, None, 1)
    return sampler


_L2_STANDS = ("Lemma 2 with deterministic x, y, or on quadratics for any random x, y (H constant), holds and is tight "
              "(lemma2_14/15/16); the paper uses it in Prop. B.2, whose printed (36) thereby fails for stochastic SGD "
              "on non-quadratic F (h_sgd_stochastic)")
for _w in _LEMMA2_WHICH:
    _o = LEMMA2_RANDOM[_w]
    register(Check(f"{PAPER}.lemma2_{_w}_random", paper=PAPER, statement=_LEMMA2_WHICH[_w][0],
                   sampler=_lemma2_random(_w), expected="violated", falsifies="lemma", variant="printed",
                   description=f"Lemma 2 ({_w}) as printed, x and y random with the same source, on a C^2 non-quadratic "
                               f"F (F'' = 1 + smoothstep(z - 100): mu = 1, L = 2): (x, y) = {_o[0]} or {_o[1]} with "
                               f"probability 1/2 each", still_stands=_L2_STANDS))


def h_sgd_stochastic(eps, eta=0.4, mu=SMOOTH_MU, L=SMOOTH_L, a=SMOOTH_A):
    """Prop. B.2 as printed for k = 2 steps of SGD on the smoothstep F (:func:`smoothstep_grad`) with unbiased,
    state-dependent noise g(z) = F'(z) + s(z) xi, xi = +-1 with probability 1/2, shared by the runs from x and y (the
    second step's noise does not move the means, so the expectations are exact over the two outcomes).  x and y lie
    in the mu-region with x - eta F'(x) = (a + 8)/2, y - eta F'(y) = (a + 8)/2 - eps, and eta s(x) = (a + 14)/2,
    eta s(y) = (a + 18)/2 - eps, so that after one step (x1, y1) = (-3, -5) or (a + 11, a + 13 - 2 eps): E[x1 - y1]
    = eps but E[F'(x1) - F'(y1)] = (2 mu - L (2 - 2 eps))/2, which is not ~ eps.  Returns ``(value, bound, x, y)``:
    ``||E[x2 - y2]||^2`` and ``(1 - eta mu)^4 ||x - y||^2``; the ratio grows like 1/eps^2."""
    mx, my = (a + 8) / 2, (a + 8) / 2 - eps
    x0, y0 = mx / (1 - eta * mu), my / (1 - eta * mu)        # z - eta mu z on the mu-region z <= a
    if not (max(x0, y0) <= a and 0 < eps < 1 and eta * (mu + L) < 2):
        raise InputError(f"h_sgd_stochastic: eps must be in (0, 1) and eta (mu + L) < 2 with x, y <= a; got eps={eps}, "
                         f"eta={eta}")
    sx, sy = (a + 14) / 2 / eta, ((a + 18) / 2 - eps) / eta
    d1 = []
    for xi in (1.0, -1.0):
        x1 = x0 - eta * (float(smoothstep_grad(x0, mu, L, a)) + sx * xi)
        y1 = y0 - eta * (float(smoothstep_grad(y0, mu, L, a)) + sy * xi)
        d1.append((x1 - y1) - eta * float(smoothstep_grad(x1, mu, L, a) - smoothstep_grad(y1, mu, L, a)))
    return float(np.mean(d1)) ** 2, float(B.h_sgd(eta=eta, mu=mu, L=L, k=2)) * (x0 - y0) ** 2, x0, y0


def _h_sgd_stochastic(quick, seed):
    for eps in (0.5, 1e-3):
        value, bound, x0, y0 = h_sgd_stochastic(eps)
        yield Sample(value, bound, {"eps": eps, "eta": 0.4, "k": 2, "x": x0, "y": y0, "mu": SMOOTH_MU, "L": SMOOTH_L,
                                    "a": SMOOTH_A}, None, 1)


register(Check(f"{PAPER}.h_sgd_stochastic", paper=PAPER, statement=B.h_sgd, sampler=_h_sgd_stochastic,
               expected="violated", falsifies="proposition", variant="printed",
               description="Prop. B.2 (36) as printed for stochastic SGD (unbiased noise whose size depends on the "
                           "state, one shared source) on the C^2 non-quadratic smoothstep F (mu = 1, L = 2, eta = 0.4, "
                           "k = 2): after one step (x1, y1) = (-3, -5) or (111, 113 - 2 eps), E[x1 - y1] = eps, and "
                           "||E[x2 - y2]||^2 / ((1 - eta mu)^4 ||x - y||^2) grows like 1/eps^2 (eps = 0.5, 1e-3)",
               still_stands="for quadratic F or noise-free GD (36) holds and is tight (h_sgd); it is the step through "
                            "Lemma 2 with random x, y that fails (lemma2_14_random, lemma2_16_random)"))


def _lemma4_sampler(st):
    def sampler(quick, seed):
        for j in range(_n(quick, 20, 200)):
            s = seed * 1000 + j
            rng = np.random.default_rng(s)
            d, K = int(rng.integers(1, 5)), int(rng.integers(1, 6))
            G = rng.normal(size=(K, d, d))
            A = G @ G.swapaxes(-1, -2) + 0.05 * np.eye(d)   # SPD, non-commuting
            b = rng.normal(size=(K, d))
            q = B.lemma4_aggregates(A, b)
            yield Sample(float(q.lhs), float(st(As_norm=q.As_norm, As_inv_norm=q.As_inv_norm, S_Ab=q.S_Ab)),
                         {"instance_seed": s, "d": d, "K": K}, seed=s, size=d * K)
    return sampler


LEMMA4_FAMILY = Family(
    [Integer("K", 1, 5), Integer("d", 1, 4), Integer("seed", 0, 10**6), Real("spread", 0.0, 3.0),
     Real("c_spread", 0.0, 2.0), Real("b_dev", 0.0, 2.0), Real("b_spread", 0.0, 2.0)],
    description="K SPD, non-commuting A_k = c_k (I + spread R_k) (R_k random PSD of norm 1 from the seed, "
                "c_k = exp(c_spread z_k)), b_k = m_k (v + b_dev r_k) with v the top eigenvector of A_s = sum A_k, "
                "r_k random, m_k = exp(b_spread z'_k). Equality: every A_k a multiple of I and every b_k equal "
                "(spread = b_dev = b_spread = 0), any K, d, c_k; the strong form also at K = 1 with b along the "
                "top eigenvector (b_dev = 0, any spread)")


def _lemma4_evaluate(st):
    def evaluate(p):
        rng = np.random.default_rng(p["seed"])
        K, d = p["K"], p["d"]
        G = rng.normal(size=(K, d, d))
        R = G @ G.swapaxes(-1, -2)
        R /= np.linalg.norm(R, 2, axis=(-2, -1))[:, None, None]
        c = np.exp(p["c_spread"] * rng.normal(size=K))
        A = c[:, None, None] * (np.eye(d) + p["spread"] * R)
        v = np.linalg.eigh(A.sum(0))[1][:, -1]
        r = rng.normal(size=(K, d))
        b = np.exp(p["b_spread"] * rng.normal(size=K))[:, None] * (v + p["b_dev"] * r)
        q = B.lemma4_aggregates(A, b)
        bound = st(As_norm=q.As_norm, As_inv_norm=q.As_inv_norm, S_Ab=q.S_Ab)
        return _sample(q.lhs, bound, p, d * K)
    return evaluate


register(Check(f"{PAPER}.lemma4", paper=PAPER, statement=B.lemma4, sampler=_lemma4_sampler(B.lemma4),
               family=LEMMA4_FAMILY, evaluate=_lemma4_evaluate(B.lemma4), search_budget=(20, 80),
               description="Lemma 4 (101) for random (non-commuting) SPD A_k; attained with A_k = c_k I, b_k equal"))
register(Check(f"{PAPER}.lemma4_strong", paper=PAPER, statement=B.lemma4_strong, sampler=_lemma4_sampler(B.lemma4_strong),
               family=LEMMA4_FAMILY, evaluate=_lemma4_evaluate(B.lemma4_strong), search_budget=(20, 80),
               description="Lemma 4, stronger constant ||A_s|| ([ours] proof); attained with A_k = c_k I, b_k equal, "
                           "or K = 1 and b along the top eigenvector"))


def _z_sampler(st):
    def sampler(quick, seed):
        rng = np.random.default_rng(seed)
        for tau in (1, 2, 3, 5, 10, 100, 1000, 10_000):
            xs = np.concatenate([[1.0 / tau], rng.uniform(0, 1.0 / tau, _n(quick, 5, 50))])
            for x in xs:
                yield Sample(float(B.z_function(x, tau=tau)), float(st(x=x, tau=tau)), {"tau": tau, "x": float(x)},
                             seed=seed, size=tau)
    return sampler


Z_FAMILY = Family(
    [Integer("tau", 1, 10**7, log=True), Real("x_tau", 1e-9, 1.0, log=True)],
    description="z(x) = 2 x tau / (1 - (1 - x)^(2 tau)) at x = x_tau / tau, 0 < x tau <= 1, tau = 1..1e7 (all of "
                "(84)'s range up to 1e7). z_max: equality at x = 1/tau for every tau. z_uniform: z(1/tau) increases "
                "to 2/(1 - e^-2) as tau -> infinity (ratio about 1 - 0.157/tau): the supremum 1 is approached, "
                "never attained, and is within 1e-6 from tau = 1.6e5 on")


def _z_evaluate(st):
    def evaluate(p):
        x = p["x_tau"] / p["tau"]
        return _sample(B.z_function(x, tau=p["tau"]), st(x=x, tau=p["tau"]), {**p, "x": x}, p["tau"])
    return evaluate


register(Check(f"{PAPER}.z_max", paper=PAPER, statement=B.z_max, sampler=_z_sampler(B.z_max), expected="tight",
               family=Z_FAMILY, evaluate=_z_evaluate(B.z_max), search_budget=(12, 40),
               description="(84): z(x) <= z(1/tau) on 0 < x <= 1/tau (attained at x = 1/tau)"))
register(Check(f"{PAPER}.z_uniform", paper=PAPER, expected="tight", statement=B.z_uniform, sampler=_z_sampler(B.z_uniform),
               family=Z_FAMILY, evaluate=_z_evaluate(B.z_uniform), search_budget=(12, 40),
               description="(84): z(x) <= 2/(1 - e^-2) < 3 for x tau <= 1; the constant is the supremum (x = 1/tau, "
                           "tau -> infinity), within 1e-6 from tau = 1.6e5 on, never attained"))


# ----------------------------------------------------------------------------- proofs of Theorems 1 and 3
# Theorem 1, Lemma 3, Appendix C and Theorem 3 live in their own module, registered here (the registry keeps the
# paper's order); every public name stays importable from this module.
from .checks_proofs import *  # noqa: E402,F401,F403



def _alpha_max(quick, seed):
    """The convergence condition on the server rate, on the worked example (Jacobi P_i, eta = 0.1, tau = 5), each
    correction: simulated runs from x~ + (1, 1) for 600 rounds at 0.99 alpha_max contract (value ||x_T - x~|| /
    ||x_0 - x~||, bound 1) and at 1.01 alpha_max grow (value 1, bound that growth): both ratios below 1."""
    fed = _example_fed()
    for c in exact.CORRECTIONS:
        am = float(exact.alpha_max(fed, eta=0.1, tau=5, precond=_JACOBI, correction=c))
        xf = exact.fixed_point(fed, eta=0.1, tau=5, precond=_JACOBI, correction=c).x
        x0 = xf + np.ones(2)
        factors = (0.99, 1.01)
        xTs = fedopt(fed, x0=x0, rounds=600, eta=0.1, tau=5, client_opt="precond", precond=_JACOBI, correction=c,
                     alpha=per_configuration([f * am for f in factors]), noise=False, record_every=600).x
        for f, xT in zip(factors, xTs):    # both server rates in one batched run
            g = _norm(xT - xf) / _norm(x0 - xf)
            rho = float(exact.round_map(fed, eta=0.1, tau=5, alpha=f * am, precond=_JACOBI,
                                        correction=c).spectral_radius())
            p = {"correction": c, "alpha_max": am, "alpha": f * am, "rounds": 600, "growth": g, "rho": rho}
            yield Sample(g, 1.0, p, None, 600) if f < 1 else Sample(1.0, g, p, None, 600)


register(Check(f"{PAPER}.alpha_max", paper=PAPER, statement=None, relation="<=", sampler=_alpha_max,
               description="the server-rate condition alpha < alpha_max = min 2 Re(lambda)/|lambda|^2 is sharp: on the "
                           "worked example simulated FedOpt converges at 0.99 alpha_max and diverges at 1.01 alpha_max "
                           "(600 rounds, each correction)"))


def _global_correction(quick, seed):
    """FedOpt with local and global correction ('joint') simulated to convergence lands on the fixed point of local
    correction alone: the server-side rescaling N_s^-1 changes the path, not the fixed point (relative error)."""
    for s, fed, P, eta, tau in _hetero_instances(seed, _n(quick, 4, 16)):
        am = float(exact.alpha_max(fed, eta=per_client(eta), tau=per_client(tau), precond=P, correction="joint"))
        rmap = exact.round_map(fed, eta=per_client(eta), tau=per_client(tau), alpha=0.5 * am, precond=P,
                               correction="joint")
        rho = float(rmap.spectral_radius())
        if rho > 0.95:
            continue
        T = int(np.ceil(np.log(1e-14) / np.log(max(rho, 1e-3)))) + 20
        sim = fedopt(fed, x0=np.zeros(fed.d), rounds=T, eta=per_client(eta), tau=per_client(tau), client_opt="precond",
                     precond=P, correction="joint", alpha=0.5 * am, record_every=T, noise=False).x
        xl = exact.fixed_point(fed, eta=per_client(eta), tau=per_client(tau), precond=P, correction="local").x
        yield Sample(_norm(sim - xl) / (1 + _norm(xl)), 0.0, {"instance_seed": s, "rounds": T}, seed=s,
                     size=fed.M * fed.d)


register(Check(f"{PAPER}.global_correction_fixed_point", paper=PAPER, statement=None, relation="==", atol=1e-10,
               rtol=0.0, sampler=_global_correction, variant="identity",
               description="global correction leaves the fixed point unchanged: simulated FedOpt with local + global "
                           "correction converges to the fixed point of local correction alone (relative, 1e-10)"))


def _one_round(quick, seed):
    """P_i = H_i^-1, eta_i = 1, alpha = 1: one simulated round from a random x^(0) lands on x~ = sum_i w_i x_i*
    (every K_i = (I - P_i H_i)^tau_i = 0), whatever tau_i; relative error."""
    for j in range(_n(quick, 6, 30)):
        s = seed * 1000 + j
        fed, P, _, tau = instance(s, precond="inverse")
        x0 = np.random.default_rng(s).normal(size=fed.d) * 5
        x1 = fedopt(fed, x0=x0, rounds=1, eta=1.0, tau=per_client(tau), client_opt="precond", precond=P, alpha=1.0,
                    noise=False, record_every=1).x
        xf = exact.fixed_point(fed, eta=1.0, tau=per_client(tau), precond=P).x
        yield Sample(_norm(x1 - xf) / (1 + _norm(xf)), 0.0, {"instance_seed": s}, seed=s, size=fed.M * fed.d)


register(Check(f"{PAPER}.one_round_inverse_hessian", paper=PAPER, statement=None, relation="==", atol=1e-10,
               rtol=0.0, sampler=_one_round, variant="identity",
               description="Section 4: with ideal preconditioners P_i = H_i^-1 (eta_i = 1, alpha = 1) FedOpt reaches its "
                           "fixed point x~ in one round, from any start (relative, 1e-10)"))


# ----------------------------------------------------------------------------- adaptive clients
def _adaptive_limit(fed, corrected: bool, **kw):
    """The limit of deterministic FedOpt with adaptive clients (restarted each round): the root of
    sum_i w_i Delta_i(x) (no correction) or of sum_i w_i N_i^{-1} Delta_i(x) (local or joint correction: N_s^{-1}
    rescales and leaves the root alone), found from x* by SciPy's root (hybr) to round-off."""
    from scipy.optimize import root  # noqa: PLC0415

    def terms(x):
        cu = client_update(fed, x=np.asarray(x, dtype=float), noise=False, **kw)
        return fed.weights[:, None] * (cu.delta / cu.N if corrected else cu.delta)

    best, starts = None, [fed.x_star]
    for method, start in (("hybr", 0), ("lm", 0), ("hybr", 1), ("lm", 1)):
        if start == len(starts):   # from x* the solver stalled: start from where 3000 rounds of the method end
            starts.append(fedopt(fed, x0=fed.x_star, rounds=3000, alpha=1.0, record_every=3000, noise=False,
                                 correction="local" if corrected else "none", **kw).x)
        x = root(lambda z: terms(z).sum(axis=0), starts[start], method=method, tol=1e-15).x
        t = terms(x)   # the residual against the size of its terms: round-off is ~1e-16 of them
        rel = float(np.abs(t.sum(axis=0)).max() / max(np.abs(t).max(), 1e-300))
        best = (rel, x) if best is None or rel < best[0] else best
        if rel <= 1e-12:
            return x
    raise RuntimeError(f"adaptive limit not found to round-off (relative residual {best[0]:.1e})")


def _adaptive_bias(quick, seed):
    """||x^ - x*|| (local correction) against ||x~ - x*|| (none) at the exact limits of deterministic local AdaGrad
    (v0 = 0.1): random federations, and the two-client federation whose weight w_1 puts the uncorrected limit on
    x*.  Adam is left out: its nearly sign-like first steps leave some instances without a fixed point of the
    uncorrected round map (the run oscillates), so "its limit" is not defined there."""
    w1 = 0.4995344616676178
    tuned = QuadraticFederation(np.array([[[1.0]], [[4.0]]]), np.array([[-1.0], [2.0]]), np.array([w1, 1 - w1]))
    cases = [("tuned", tuned, "adagrad", 0.0025, 5)]
    for j in range(_n(quick, 2, 8)):
        s = seed * 1000 + j
        fed, _, _, _ = instance(s, precond="identity")
        rng = np.random.default_rng(s)
        cases.append((s, fed, "adagrad", float(rng.uniform(0.005, 0.02)) / float(fed.L), int(rng.integers(2, 8))))
    for label, fed, opt, eta, tau in cases:
        kw = dict(client_opt=opt, v0=0.1, eps=0.0, tau=tau, eta=eta)
        b0 = _norm(_adaptive_limit(fed, False, **kw) - fed.x_star)
        b1 = _norm(_adaptive_limit(fed, True, **kw) - fed.x_star)
        yield Sample(b1, b0, {"instance": label, "client_opt": opt, "eta": eta, "tau": tau},
                     seed=label if isinstance(label, int) else None, size=fed.M * fed.d)


register(Check(f"{PAPER}.adaptive_bias_shrinks", paper=PAPER, statement=None, relation="<=",
               sampler=_adaptive_bias, variant="corrected", expected="violated", atol=1e-13, falsifies="our claim",
               description="our claim that with AdaGrad clients the corrected limit is closer to x* than the "
                           "uncorrected one, at the exact limits (roots of the round maps): false -- two clients "
                           "(H = 1, 4; x* = -1, 2) with w_1 tuned so the uncorrected limit is x* itself",
               still_stands="with the exact N the corrected bias is O(eta) while the uncorrected one does not vanish "
                            "as eta -> 0 (corrected_bias_first_order, nonvanishing_bias); at a fixed eta either limit "
                            "can be the closer one"))
