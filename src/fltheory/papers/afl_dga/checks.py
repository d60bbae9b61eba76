r"""Checks of every AFL-DGA statement against the simulator's exact diagnostics and Monte Carlo.

Instance families (each inside the assumptions of the statements it serves; say which and how):

* **linear** -- ``LinearFederation`` in one dimension, client 0 with :math:`f_0=w`, the others
  :math:`f_i=-w`; every client every round (:math:`t_d=1`), ``K = 1``, ``D`` in {2, 3, 4}, no noise.
  Assumption 1 holds for every ``L`` (we take ``L = 1``), Assumption 3 with ``G = 1``, Assumption 4
  with ``t_d = 1``; :math:`\eta=0.1\le1/L` and :math:`\eta\le1/T` (``T = 9``).  The counterexample
  to the printed Lemma 1 (both forms).  Identical clients (all :math:`f_i=w`) refute eq. (2).
* **periodic** -- ``PseudoHuberFederation`` with identical clients (:math:`b_i=0,\delta=1`, scale
  ``s``), every client participating once every ``t_d`` rounds (:math:`P_i^r=[r\bmod t_d=0]`),
  ``K = 1``, ``D = 0``, no noise, :math:`w^0=0.3`.  Assumption 1 with ``L = s``, 3 with
  ``G = s`` (pseudo-Huber gradients are bounded by ``s delta``), 4 with the given ``t_d``;
  :math:`\eta L\le1`.  The stale gradient reused for ``t_d`` steps with :math:`\eta t_dL>2` makes a
  limit cycle.  Rescaled with :math:`s=\sqrt{NT}` it runs at :math:`\eta=1/T`: the counterexample to
  Theorem 1 and Corollary 1 under either reading of the step size.
* **random** -- seeded random anarchic schedules (``anarchic_participation``: ``N`` 1-4, ``T``
  2-24, ``t_d`` 1-4, ``K`` 1-5 and ``D`` 0-12 per client and round, participation probability
  0.05-1) on random non-convex ``SeparableCosineFederation`` clients (Assumption 1 with its ``L``;
  only the pathwise statements, which use measured norms, not ``G``) and random
  ``PseudoHuberFederation`` clients (Assumptions 1 and 3 with ``L = s``, ``G = s max delta``);
  :math:`\eta L\in(0,1]` (deterministic) or :math:`(0,1/2]` (Theorem 1').
* **noisy** -- pseudo-Huber clients with isotropic additive noise, :math:`\mathbb E\|\varepsilon\|^2=\sigma^2`
  and :math:`G^2=(s\delta)^2+\sigma^2` (Assumptions 1-4, independent samples); the expectation is
  estimated from 200 keyed runs and compared through the upper end of its 99% confidence interval
  (``Delta`` through the lower end, clipped at 0: still at most the paper's :math:`f(w^0)-f^*`).
* **quadratic** -- random quadratic federations (exact moments against the simulator).

* **searched** (issue 21) -- the adversarial search (:mod:`fltheory.search`) of
  ``theorem1_corrected_det`` (pseudo-Huber and cosine clients, :math:`\eta L\in(0,1]`, ``T >= 1``:
  tight at ``T = 1``, :math:`\eta L=1`), ``lemma1_corrected_expectation`` (linear clients with ``N``
  up to 1500, sup 1 as ``N`` grows) and ``corollary1_corrected`` (noise-free pseudo-Huber at its own
  step, ``T >= 4N``) over seeded anarchic schedules (``DET_FAMILY``, ``LEMMA1_FAMILY``,
  ``COROLLARY_FAMILY``).  Also searched: ``lemma1_corrected`` (``LEMMA1_PATH_FAMILY``: pseudo-Huber,
  cosine and heterogeneous linear clients :math:`c_0=e_1`, :math:`c_i=-c_1e_1`; tight where
  :math:`c_1=(Nn/\rho+1)/(N-1)` at an entry of client 0, since then :math:`\bar g^h=-(n/\rho)c_0`
  and both :math:`\|x+y\|^2\le2\|x\|^2+2\|y\|^2` and Cauchy-Schwarz are equalities),
  ``eq2_corrected`` (``EQ2_FAMILY``: tight on one linear client), ``lemma2_n``/``lemma2_rho``
  (``LAG_FAMILY``: the schedules alone; tight) and ``theorem1_corrected`` (``THEOREM1_FAMILY``:
  noise-free and noisy pseudo-Huber clients, additive noise, Monte Carlo; linear clients with additive
  and multiplicative noise, exact; :math:`\eta L\le1/2`).  Theorem 1''s supremum is 1/2, approached as
  :math:`\eta L\to0` without noise (:math:`2\Delta/(\eta T)` tends to twice the average squared
  gradient); noise only adds to the bound.

* **coverage** (issue 22) -- ``gamma_iid`` / ``gamma_corrected``: random quadratic federations
  (``F_i* = 0``, :math:`\Gamma=F(w^*)` exactly; a common minimiser with different Hessians gives
  :math:`\Gamma=0`; ``GAMMA_FAMILY`` searched, tight for :math:`H_i=I`); ``eq3``: identical linear
  clients; ``eq4`` / ``eq4_fresh_noise``: noisy quadratic clients (one client :math:`f=w^2/2` sending every
  ``t_d`` rounds, where :math:`\mathbb E\langle\nabla f(w^t),e^t\rangle=-k\eta\sigma^2` after ``k`` reuses,
  and random schedules, anarchic with :math:`t_d\ge2` or synchronous), 2000 keyed runs, the lower end of
  a 4-standard-error interval of the cross-term against 0 (these identities need only Assumption 2);
  ``eq5``: the random runs, isotropic quadratics (equality) and ``EQ5_FAMILY`` searched; ``eq6``:
  recorded periodic runs (``EQ6_PERIODIC``); ``lag_range_terms``: the random schedules; ``corollary1_printed``:
  one pseudo-Huber client (``L = G = 1``, :math:`w^0=0.3`, ``K = 1``, ``D = 0``, no noise) sending once every
  :math:`t_d=10\sqrt T` rounds at :math:`\eta=1/\sqrt T` (Corollary 1's step with ``N = 1``), ``T`` from 100
  to 25600 (``COROLLARY_LADDER``), compared with the O-terms times ``C_O_DERIVED = 2``; no search family
  (each instance is a run of thousands of steps, and the ratio grows with ``T`` alone); ``speedup_threshold``:
  random parameters at :math:`T\ge T_{\min}`; ``fig1_trajectory``: Fig. 1's schedule on random quadratics.

Printed statements expected ``violated``: ``eq2`` (identical clients), ``lemma1``, ``lemma1_used``
(linear family), ``lag_count_printed`` (random schedules with ``D_m > K_min``), ``theorem1``,
``theorem1_literal_step`` and ``corollary1`` (periodic family), ``corollary1_printed`` (one client,
:math:`t_d=10\sqrt T`), ``gamma_iid``, ``eq3``, ``eq4``, ``eq6`` and ``lag_range_terms``.  Everything else holds.
"""
from __future__ import annotations

import functools

import numpy as np

from ...backend import KeyedStream
from ...problems import LinearFederation, PseudoHuberFederation, QuadraticFederation, SeparableCosineFederation, \
    random_quadratic_federation
from ...schedules import Participation, anarchic_participation, synchronous_participation
from ...search import Choice, Family, Integer, Real
from ...verify import Check, Sample, register
from . import bounds as B
from .algorithm import MODES, afl_dga, diagnostics, round_durations
from .exact import afl_dga_exact

PAPER = "afl_dga"
_TOL = 1e-13          # entries at round-off level can break no bound


def _rng(seed: int, tag: str) -> np.random.Generator:
    return KeyedStream(seed, f"afl-dga-checks-{tag}").generator()


# ============================================================================= families
@functools.lru_cache(maxsize=16)
def linear_run(N: int, D: int, T: int = 9, eta: float = 0.1):
    """The linear family (module docstring): (fed, part, result, diagnostics)."""
    c = -np.ones((N, 1))
    c[0] = 1.0
    fed = LinearFederation(c=c)
    part = synchronous_participation(N=N, T=T, K=1, D=D)
    res = afl_dga(fed, part, eta=eta, w0=np.zeros(1), record=True)
    return fed, part, res, diagnostics(fed, res)


@functools.lru_cache(maxsize=16)
def periodic_run(N: int, T: int, eta: float, t_d: int, scale: float = 1.0):
    """The periodic family (module docstring): (fed, part, result, f(w^t), ||grad f(w^t)||^2)."""
    fed = PseudoHuberFederation(b=np.zeros((N, 1)), delta=1.0, scale=scale)
    P = np.zeros((N, T), np.int64)
    P[:, ::t_d] = 1
    part = Participation(P).check(t_d=t_d)
    res = afl_dga(fed, part, eta=eta, w0=np.array([0.3]))
    g = fed.grad(res.w)
    return fed, part, res, np.asarray(fed.loss(res.w)), (g * g).sum(-1)


# (N, T, eta L, t_d): the first is the reference instance at Corollary 1's step size sqrt(N/T)/L
PERIODIC = [(100, 2000, float(np.sqrt(100 / 2000)), 12), (100, 2000, 0.25, 12), (64, 4096, 0.125, 20),
            (1000, 4000, 0.1, 30)]


@functools.lru_cache(maxsize=32)
def random_runs(seed: int, count: int, problem: str, eta_max: float = 1.0, sigma: float = 0.0):
    """``count`` random anarchic runs (module docstring) with their diagnostics and constants."""
    rng = _rng(seed, f"random-{count}-{problem}-{eta_max}-{sigma}")
    out = []
    for k in range(count):
        N, T, t_d = int(rng.integers(1, 5)), int(rng.integers(2, 25)), int(rng.integers(1, 5))
        Kx, Dx = int(rng.integers(1, 6)), int(rng.integers(0, 13))
        K = rng.integers(1, Kx + 1, (N, T))
        D = rng.integers(0, Dx + 1, (N, T))
        part = anarchic_participation(N=N, T=T, t_d=t_d, p=float(rng.uniform(0.05, 1.0)), K=K, D=D,
                                      seed=int(rng.integers(2**31)))
        d = int(rng.integers(1, 4))
        if problem == "cosine":
            fed = SeparableCosineFederation(a=rng.uniform(0.2, 1.0, (N, d)), b=rng.uniform(0.0, 2.0, (N, d)),
                                            c=2.0 * rng.normal(size=(N, d)))
            L, G2 = float(fed.L), None
        else:
            scale = float(rng.uniform(0.5, 3.0))
            cov = None if sigma == 0 else np.broadcast_to(sigma**2 / d * np.eye(d), (N, d, d))
            fed = PseudoHuberFederation(b=2.0 * rng.normal(size=(N, d)), delta=rng.uniform(0.3, 2.0, N), scale=scale,
                                        noise_cov=cov)
            L, G2 = scale, float(fed.G) ** 2 + sigma**2
        eta = float(rng.uniform(0.02, 1.0)) * eta_max / L
        w0 = 2.0 * rng.normal(size=d)
        params = dict(family=problem, seed=seed, instance=k, N=N, T=T, t_d=t_d, d=d, eta=eta, L=L,
                      K=K.tolist(), D=D.tolist(), P=part.P.astype(int).tolist())
        if sigma == 0:
            res = afl_dga(fed, part, eta=eta, w0=w0, record=True)
            out.append((fed, part, res, diagnostics(fed, res), L, G2, eta, params))
        else:
            res = afl_dga(fed, part, eta=eta, w0=w0, runs=200, seed=seed + k)
            out.append((fed, part, res, None, L, G2, eta, params))
    return out


def _schedule_constants(part: Participation) -> dict:
    Ks = part.K[part.P]
    return dict(K_m=int(Ks.max()), K_min=int(Ks.min()), D_m=int(part.D.max()), t_d=part.t_d)


def _random(quick: bool, seed: int, *, eta_max: float = 1.0, problems=("cosine", "huber")):
    count = 6 if quick else 24
    return [r for p in problems for r in random_runs(seed, count, p, eta_max)]


def _worst_entry(value, bound, mask, params, size, **extra):
    v, b = np.asarray(value, float), np.broadcast_to(np.asarray(bound, float), np.shape(value))
    m = np.asarray(mask, bool) & (v > _TOL)
    if not m.any():
        return []
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(m, np.where(b > 0, v / b, np.inf), -np.inf)
    k = np.unravel_index(int(np.argmax(r)), r.shape)
    return [Sample(value=float(v[k]), bound=float(b[k]), params={**params, "entry": [int(x) for x in k], **extra},
                   seed=params.get("seed"), size=size)]


# ============================================================================= eq. (2)
def _eq2_samples(quick, seed, *, corrected):
    out = []
    for N in (2, 5, 10, 50):                        # identical clients f_i = w: ||gbar||^2 = G^2 = 1
        fed = LinearFederation(c=np.ones((N, 1)))
        res = afl_dga(fed, synchronous_participation(N=N, T=3), eta=0.1, w0=np.zeros(1))
        g2 = float((np.asarray(res.gbar) ** 2).sum(-1).max())
        st = B.eq2_corrected if corrected else B.eq2
        bound = st(**({"G2": 1.0} if corrected else {"N": N, "sigma2": 0.0, "G2": 1.0}))
        out.append(Sample(g2, float(bound), dict(family="identical-linear", N=N, eta=0.1, T=3), seed=None, size=N))
    if corrected:
        for fed, part, res, dg, L, G2, eta, prm in _random(quick, seed, problems=("huber",)):
            out += _worst_entry(dg.gbar2, G2, np.ones(dg.gbar2.shape, bool), prm, part.N * part.T)
    return out


# ============================================================================= Lemma 1 (printed)
def _lemma1_samples(quick, seed, *, used):
    out = []
    for N in (2, 10, 50):
        for D in (2, 3, 4):
            fed, part, res, dg = linear_run(N, D)
            c = _schedule_constants(part)
            kw = dict(eta=0.1, G2=1.0, K_m=c["K_m"], D_m=c["D_m"])
            if used:
                bound = B.lemma1_used(N=N, S=dg.S, sigma2=0.0, **kw)
            else:
                bound = B.lemma1(sum_gbar2=dg.printed_sum, **kw)
            out += _worst_entry(dg.dist2, bound, dg.mask, dict(family="linear", N=N, D=D, T=part.T, eta=0.1, L=1.0),
                                N * part.T + D)
    return out


def _lag_samples(quick, seed, *, which):
    out = []
    for fed, part, res, dg, L, G2, eta, prm in _random(quick, seed):
        c = _schedule_constants(part)
        m = dg.mask
        if which == "n":
            out += _worst_entry(dg.n, B.lemma2_n(K_m=c["K_m"], D_m=c["D_m"]), m, prm, part.N * part.T)
        elif which == "rho":
            out += _worst_entry(dg.rho, B.lemma2_rho(S=dg.S, t_d=c["t_d"], K_min=c["K_min"], D_m=c["D_m"]), m, prm,
                                part.N * part.T)
        else:
            out += _worst_entry(dg.rho, B.lag_count_printed(S=dg.S), m, prm, part.N * part.T)
    return out


def _lemma1_corrected_samples(quick, seed, *, expectation):
    out = []
    fams = _random(quick, seed, problems=("huber",) if expectation else ("cosine", "huber"))
    for fed, part, res, dg, L, G2, eta, prm in fams:
        if expectation:
            bound = B.lemma1_corrected_expectation(eta=eta, G2=G2, rho=dg.rho, n=dg.n)
        else:
            bound = B.lemma1_corrected(eta=eta, rho=dg.rho, n=dg.n, since_anchor=dg.since_anchor, local2=dg.local2)
        out += _worst_entry(dg.dist2, bound, dg.mask, prm, part.N * part.T)
    for D in (2, 3):                                 # the linear family: nearly tight
        fed, part, res, dg = linear_run(10, D)
        if expectation:
            bound = B.lemma1_corrected_expectation(eta=0.1, G2=1.0, rho=dg.rho, n=dg.n)
        else:
            bound = B.lemma1_corrected(eta=0.1, rho=dg.rho, n=dg.n, since_anchor=dg.since_anchor, local2=dg.local2)
        out += _worst_entry(dg.dist2, bound, dg.mask, dict(family="linear", N=10, D=D, eta=0.1), 10 * part.T)
    return out


# ============================================================================= Theorem 1 and Corollary 1
def _periodic_sample(N, T, etaL, t_d, *, literal, statement):
    scale = etaL * T if literal else 1.0     # eta = etaL / L = 1/T when literal (sqrt(NT) at eta* L)
    eta = etaL / scale
    fed, part, res, f, g2 = periodic_run(N, T, eta, t_d, scale)
    lhs = float(g2[:-1].mean())
    Delta = float(f[0])      # the paper's Delta = f(w^0) - f*, and f* = 0 here (identical clients, b_i = 0)
    G2 = scale**2
    if statement in ("corollary1", "corollary1_printed"):
        etaL_star = float(np.sqrt(N / T))
        if abs(etaL - etaL_star) > 1e-15:
            return None
        st, extra = (B.corollary1, {}) if statement == "corollary1" else (B.corollary1_printed, {"C_O": C_O_DERIVED})
        bound = st(L=scale, N=N, T=T, Delta=Delta, sigma2=0.0, G2=G2, K_m=1, D_m=0, t_d=t_d, **extra)
    else:
        st = B.theorem1_literal_step if literal else B.theorem1
        bound = st(L=scale, N=N, T=T, eta=eta, Delta=Delta, sigma2=0.0, G2=G2, K_m=1, D_m=0,
                   S_bar=float(part.delay_sum.sum()) / T)
    prm = dict(family="periodic", N=N, T=T, eta=eta, L=scale, t_d=t_d, w0=0.3, delta=1.0, scale=scale, K=1, D=0)
    if statement == "corollary1_printed":
        prm["C_O"] = C_O_DERIVED
    return Sample(lhs, float(bound), prm, seed=None, size=N * T)


def _theorem1_samples(quick, seed, *, literal, statement="theorem1"):
    insts = PERIODIC[:1] if quick else PERIODIC
    out = [_periodic_sample(*x, literal=literal, statement=statement) for x in insts]
    if statement == "corollary1" and not quick:
        out.append(_periodic_sample(*PERIODIC[0], literal=True, statement=statement))
    return [s for s in out if s is not None]


#: the constant of Corollary 1's O-terms that Theorem 1 at eta = sqrt(N)/(L sqrt(T)) gives (2 L Delta/sqrt(NT) is
#: twice the first O-term's L Delta part; the other terms are at most once theirs)
C_O_DERIVED = 2.0
#: one client, t_d = 10 sqrt(T) (a stale gradient reused for t_d steps, eta t_d L = 10 > 2): the ratio to the printed
#: O-terms grows like sqrt(T), so no constant C_O makes Corollary 1 hold
COROLLARY_LADDER = (100, 400, 1600, 6400, 25600)


def _corollary_printed_samples(quick, seed):
    out = []
    for T in COROLLARY_LADDER[:4] if quick else COROLLARY_LADDER:
        out.append(_periodic_sample(1, T, float(np.sqrt(1 / T)), int(round(10 * np.sqrt(T))), literal=False,
                                    statement="corollary1_printed"))
    if not quick:                  # the same instance rescaled to the printed eta <= 1/T (same ratio)
        T = COROLLARY_LADDER[-2]
        out.append(_periodic_sample(1, T, float(np.sqrt(1 / T)), int(round(10 * np.sqrt(T))), literal=True,
                                    statement="corollary1_printed"))
    return out


def _Delta_lower(f) -> float:
    """``f(w^0) - min_t f(w^t)``: at least 0 and at most the paper's ``Delta = f(w^0) - f*`` (``f* <= f(w^t)``).

    The bounds grow with ``Delta``, so a corrected bound that holds with this value holds with the
    paper's; the printed statements expected to fail are evaluated at the paper's ``Delta`` itself."""
    f = np.asarray(f, float)
    return float(f[0] - f.min())


def _lag_mean(dg, fed):
    p = np.asarray(fed.weights)
    per = np.where(dg.mask, dg.rho * dg.since_anchor + dg.n * dg.local2, 0.0).sum(-1) / dg.K_lam[..., 0]
    return float((per @ p).mean())


def _theorem1_det_samples(quick, seed):
    out = []
    for fed, part, res, dg, L, G2, eta, prm in _random(quick, seed):
        bound = B.theorem1_corrected_det(eta=eta, L=L, T=part.T, Delta=_Delta_lower(dg.f),
                                         lag_mean=_lag_mean(dg, fed))
        out.append(Sample(float(dg.average_grad2()), float(bound), prm, seed=seed, size=part.N * part.T))
    return out


def _corrected_bound(part, *, L, eta, Delta, sigma2, G2, corollary=False):
    c = _schedule_constants(part)
    kw = dict(L=L, N=part.N, T=part.T, Delta=Delta, sigma2=sigma2, G2=G2, K_m=c["K_m"], D_m=c["D_m"],
              K_min=c["K_min"], t_d=c["t_d"])
    if corollary:
        return float(B.corollary1_corrected(**kw))
    return float(B.theorem1_corrected(eta=eta, **kw))


def _theorem1_corrected_samples(quick, seed, *, corollary=False):
    out = []
    if not corollary:
        for fed, part, res, dg, L, G2, eta, prm in _random(quick, seed, eta_max=0.5, problems=("huber",)):
            bound = _corrected_bound(part, L=L, eta=eta, Delta=_Delta_lower(dg.f), sigma2=0.0, G2=G2)
            out.append(Sample(float(dg.average_grad2()), bound, prm, seed=seed, size=part.N * part.T))
        for x in PERIODIC[:1] if quick else PERIODIC:
            N, T, etaL, t_d = x
            fed, part, res, f, g2 = periodic_run(N, T, etaL, t_d)
            if etaL > 0.5:
                continue
            bound = _corrected_bound(part, L=1.0, eta=etaL, Delta=_Delta_lower(f), sigma2=0.0, G2=1.0)
            out.append(Sample(float(g2[:-1].mean()), bound, dict(family="periodic", N=N, T=T, eta=etaL, t_d=t_d),
                              size=N * T))
    # noisy pseudo-Huber, Monte Carlo: the 99% upper confidence end of the LHS against the bound
    rng = _rng(seed, f"noisy-{corollary}")
    for k in range(2 if quick else 6):
        N, t_d, d = int(rng.integers(1, 4)), int(rng.integers(1, 4)), int(rng.integers(1, 3))
        T = 4 * N * int(rng.integers(2, 6)) if corollary else int(rng.integers(5, 30))
        sigma, scale = float(rng.uniform(0.1, 1.5)), float(rng.uniform(0.5, 2.0))
        K = rng.integers(1, 4, (N, T))
        D = rng.integers(0, 6, (N, T))
        part = anarchic_participation(N=N, T=T, t_d=t_d, p=float(rng.uniform(0.1, 1.0)), K=K, D=D,
                                      seed=int(rng.integers(2**31)))
        fed = PseudoHuberFederation(b=rng.normal(size=(N, d)), delta=rng.uniform(0.3, 1.5, N), scale=scale,
                                    noise_cov=np.broadcast_to(sigma**2 / d * np.eye(d), (N, d, d)))
        L, G2 = scale, float(fed.G) ** 2 + sigma**2
        eta = float(np.sqrt(N / T)) / L if corollary else float(rng.uniform(0.05, 0.5)) / L
        runs = 200
        lhs, Delta = _mc_ends(fed, part, eta, rng.normal(size=d), runs, seed + k, last_only=True)
        bound = _corrected_bound(part, L=L, eta=eta, Delta=Delta, sigma2=sigma**2, G2=G2, corollary=corollary)
        prm = dict(family="noisy", seed=seed, instance=k, N=N, T=T, t_d=part.t_d, d=d, eta=eta, L=L, sigma=sigma,
                   runs=runs, K=K.tolist(), D=D.tolist(), P=part.P.astype(int).tolist())
        out.append(Sample(lhs, bound, prm, seed=seed + k, size=N * T))
    return out


_MC_RUNS = 64      # keyed runs of a searched noisy instance (the sampler's noisy instances use 200)


def _mc_ends(fed, part, eta, w0, runs, seed, *, last_only=False):
    """The 99% upper confidence end of (1/T) sum_t E||grad f(w^t)||^2 over ``runs`` keyed runs, and
    ``Delta`` = f(w^0) minus the upper end of E f(w^T) (``last_only``) or of min_t E f(w^t), clipped at 0."""
    res = afl_dga(fed, part, eta=eta, w0=w0, runs=runs, seed=seed)
    g = np.asarray(fed.grad(res.w))
    per_run = (g * g).sum(-1)[:, :-1].mean(-1)
    z = 2.576
    lhs = float(per_run.mean() + z * per_run.std(ddof=1) / np.sqrt(runs))
    f = np.asarray(fed.loss(res.w[:, -1:] if last_only else res.w[:, 1:]))          # (runs, t)
    upper = f.mean(0) + z * f.std(0, ddof=1) / np.sqrt(runs)
    Delta = max(0.0, float(np.asarray(fed.loss(res.w[0, 0])) - float(upper.min())))
    return lhs, Delta


def _substitution_samples(quick, seed, *, corrected):
    """Corollary = Theorem at eta* = sqrt(N)/(L sqrt(T)) (and S_bar = N (2 t_d - 1)), random parameters."""
    rng = _rng(seed, f"subst-{corrected}")
    out = []
    for k in range(20 if quick else 200):
        N = int(rng.integers(1, 200))
        T = int(rng.integers(4 * N, 10**6))
        L = float(rng.uniform(0.1, 10))
        G2 = float(rng.uniform(0.1, 5))
        kw = dict(L=L, N=N, T=T, Delta=float(rng.uniform(0, 10)), sigma2=float(rng.uniform(0, G2)), G2=G2,
                  K_m=int(rng.integers(1, 20)), D_m=int(rng.integers(0, 40)))
        t_d = int(rng.integers(1, 10))
        eta = float(np.sqrt(N / T)) / L
        if corrected:
            K_min = int(rng.integers(1, kw["K_m"] + 1))
            th = B.theorem1_corrected(eta=eta, K_min=K_min, t_d=t_d, **kw)
            co = B.corollary1_corrected(K_min=K_min, t_d=t_d, **kw)
        else:
            th = B.theorem1(eta=eta, S_bar=N * (2 * t_d - 1), **kw)
            co = B.corollary1(t_d=t_d, **kw)
        out.append(Sample(float(co), float(th), dict(kw, t_d=t_d, instance=k), seed=seed, size=N))
    return out


# ============================================================================= adversarial search families
def _search_constrain(p):
    """Raw searched parameters into the hypotheses: the step and T of each statement, clients per problem."""
    if p["problem"] != "linear":
        p["N"] = min(p["N"], 6)
    if p.get("corollary"):
        p["T"] = max(p["T"], 4 * p["N"])               # T >= 4N: eta* = sqrt(N/T)/L <= 1/(2L)
    p["K_max"] = max(p["K_max"], 1)
    return p


def _search_family(problems, *, N_high=6, T_low=1, corollary=False, what=""):
    params = [Choice("problem", tuple(problems)), Integer("N", 1, N_high, log=N_high > 50), Integer("T", T_low, 24),
              Integer("t_d", 1, 4), Integer("K_max", 1, 5), Integer("D_max", 0, 12), Integer("d", 1, 3),
              Integer("seed", 0, 10**6), Real("p", 0.05, 1.0), Real("scale", 0.5, 3.0), Real("b_scale", 0.0, 3.0),
              Real("w0_scale", 1e-6, 10.0, log=True)]
    if not corollary:
        params.append(Real("eta_L", 1e-3, 1.0, log=True))
    return Family(params, constrain=_search_constrain, fixed={"family": "searched", "corollary": corollary},
                  description=what)


_FAMILY_WORDS = ("seeded anarchic schedules (anarchic_participation: N clients, T server steps, staleness <= t_d "
                 "(Assumption 4), K_i^r in 1..K_max and D_i^r in 0..D_max per client and round, participation "
                 "probability p) on ")
_PROBLEM_WORDS = {
    "huber": "pseudo-Huber clients (b_i ~ b_scale N(0, I), delta_i in [0.3, 2], scale s: Assumption 1 with L = s, "
             "Assumption 3 with G = s max delta, f* >= 0)",
    "cosine": "separable cosine clients (non-convex; Assumption 1 with their L)",
    "linear": "linear clients f_0 = w_1, f_i = -w_1 (i >= 1) (Assumption 1 for every L, Assumption 3 with G = 1)",
}


def _family_words(problems, extra):
    return _FAMILY_WORDS + "; ".join(_PROBLEM_WORDS[q] for q in problems) + "; " + extra + \
        "; no noise (sigma = 0); w_0 = the mean of the client centres plus w0_scale times a seeded unit direction"


@functools.lru_cache(maxsize=256)
def _searched_run(key):
    fed, part, w0, L, G2, eta = _searched_instance(dict(key))
    res = afl_dga(fed, part, eta=eta, w0=w0, record=True)
    return fed, part, res, diagnostics(fed, res), L, G2, eta


def _searched_instance(p, noise_cov=None):
    """The searched instance of ``p``: (fed, part, w0, L, G2, eta); ``noise_cov`` (N, d, d) adds noise to pseudo-Huber
    clients (``G2`` then without the noise)."""
    rng = _rng(p["seed"], "search")
    N, T, d = p["N"], p["T"], p["d"]
    K = rng.integers(1, p["K_max"] + 1, (N, T))
    D = rng.integers(0, p["D_max"] + 1, (N, T))
    part = anarchic_participation(N=N, T=T, t_d=p["t_d"], p=p["p"], K=K, D=D, seed=int(rng.integers(2**31)))
    if p["problem"] == "linear":
        c = np.zeros((N, d))
        c[:, 0] = -1.0
        c[0, 0] = 1.0
        fed, L, G2 = LinearFederation(c=c), float(p["scale"]), 1.0
    elif p["problem"] == "linear_het":      # c_0 = e_1, c_i = -c1 e_1 (i >= 1)
        c = np.zeros((N, d))
        c[:, 0] = -(p["c1"] if p["c1"] is not None else _balanced_c1(part))
        c[0] = np.eye(d)[0]
        fed, L = LinearFederation(c=c), float(p["scale"])
        G2 = float((c * c).sum(-1).max())
    elif p["problem"] == "cosine":
        fed = SeparableCosineFederation(a=rng.uniform(0.2, 1.0, (N, d)), b=rng.uniform(0.0, 2.0, (N, d)),
                                        c=p["b_scale"] * rng.normal(size=(N, d)))
        L, G2 = float(fed.L), None
    else:
        fed = PseudoHuberFederation(b=p["b_scale"] * rng.normal(size=(N, d)), delta=rng.uniform(0.3, 2.0, N),
                                    scale=p["scale"], noise_cov=noise_cov)
        L, G2 = float(p["scale"]), float(fed.G) ** 2
    eta = float(np.sqrt(N / T)) / L if p["corollary"] else p["eta_L"] / L
    w0 = rng.normal(size=d)
    w0 *= p["w0_scale"] / max(float(np.linalg.norm(w0)), 1e-300)
    if p["problem"] in ("huber", "cosine"):   # at distance w0_scale from the mean of the client optima (centres)
        w0 = w0 + np.asarray(fed.b if p["problem"] == "huber" else fed.c).mean(axis=0)
    return fed, part, w0, L, G2, eta


_NOISE_KEYS = ("entry", "sigma_add", "zeta")


def _searched(p):
    """The noise-free recorded run of ``p`` (cached; the noise parameters do not change it)."""
    return _searched_run(tuple(sorted((k, v) for k, v in p.items() if k not in _NOISE_KEYS)))


def _det_evaluate(p):
    fed, part, res, dg, L, G2, eta = _searched(p)
    bound = B.theorem1_corrected_det(eta=eta, L=L, T=part.T, Delta=_Delta_lower(dg.f), lag_mean=_lag_mean(dg, fed))
    return Sample(float(dg.average_grad2()), float(bound), dict(p), None, part.N * part.T)


def _lemma1_expectation_evaluate(p):
    fed, part, res, dg, L, G2, eta = _searched(p)
    q = {k: v for k, v in p.items() if k != "entry"}
    bound = B.lemma1_corrected_expectation(eta=eta, G2=G2, rho=dg.rho, n=dg.n)
    out = _worst_entry(dg.dist2, bound, dg.mask, q, part.N * part.T)
    return out[0] if out else Sample(0.0, 1.0, {**q, "entry": None}, None, part.N * part.T)


def _corollary_evaluate(p):
    fed, part, res, dg, L, G2, eta = _searched(p)
    bound = _corrected_bound(part, L=L, eta=eta, Delta=_Delta_lower(dg.f), sigma2=0.0, G2=G2, corollary=True)
    return Sample(float(dg.average_grad2()), bound, dict(p), None, part.N * part.T)


@functools.lru_cache(maxsize=64)
def _schedule_lags(part_key):
    """The lags ``(n, rho, mask)`` of a schedule (they do not depend on the clients: a linear run)."""
    P, K, D = (np.asarray(a) for a in part_key)
    part = Participation(P, K, D)
    fed = LinearFederation(c=np.ones((part.N, 1)))
    dg = diagnostics(fed, afl_dga(fed, part, eta=1.0, w0=np.zeros(1), record=True))
    return np.asarray(dg.n), np.asarray(dg.rho), np.asarray(dg.mask, bool)


def _balanced_c1(part) -> float:
    """``c1 = (N n/rho + 1)/(N - 1)`` at client 0's entry with the largest ``n rho``: there
    ``gbar = -(n/rho) c_0`` (every ``gbar^h`` is the mean of the constant ``c_i``), so
    ``-eta sum gbar^h = eta sum g_u`` and Lemma 1' pathwise holds with equality."""
    N = part.N
    if N == 1:
        return 1.0
    n, rho, mask = _schedule_lags(tuple(tuple(map(tuple, a)) for a in (part.P, part.K, part.D)))
    score = np.where(mask[:, 0], n[:, 0] * rho[:, 0], 0)
    if score.max() <= 0:
        return _c_star(N)
    k = np.unravel_index(int(np.argmax(score)), score.shape)
    return (N * float(n[:, 0][k]) / float(rho[:, 0][k]) + 1) / (N - 1)


def _c_star(N: int) -> float:
    """``(N + 1)/(N - 1)``: with ``c_i = -c1 e_1`` (i >= 1) and ``c_0 = e_1``, ``gbar = -(n/rho) c_0`` at
    ``rho = n`` exactly when ``c1`` is this (Lemma 1' pathwise is then an equality); 1 for ``N = 1``."""
    return (N + 1) / (N - 1) if N > 1 else 1.0


def _wide_constrain(p):
    """``_search_constrain`` plus ``c1`` of the heterogeneous linear clients (free: two pieces meeting at ``c*``;
    balanced: from the schedule), and no multiplicative noise on pseudo-Huber clients (the simulator's noise is
    additive); the parameters that do not act on an instance are normalised (no duplicate instances)."""
    p = _search_constrain(p)
    if "c_rel" in p:
        if p["c1_mode"] == "balanced" or p["problem"] != "linear_het":   # (normalised: no duplicate instances)
            p["c_rel"], p["c_side"] = 1.0, "below"
        cs = _c_star(p["N"])
        p["c1"] = cs * (p["c_rel"] if p["c_side"] == "below" else 1.0 / p["c_rel"])
        if p["c1_mode"] == "balanced" and p["problem"] == "linear_het":
            p["c1"] = None                          # set from the schedule's lags (_balanced_c1)
    if p["problem"] == "linear_het":
        p["b_scale"] = 0.0
    if "zeta" in p and p["problem"] != "linear_het":
        p["zeta"] = 0.0
    return p


_PROBLEM_WORDS["linear_het"] = _LINEAR_HET_WORDS = (
    "heterogeneous linear clients c_0 = e_1, c_i = -c1 e_1 (i >= 1), w_0 = w0_scale times a seeded unit "
    "direction (Assumption 1 for every L = scale, Assumption 3 with G = max_i ||c_i||), c1 either free (c* c_rel "
    "or c* / c_rel, c_rel in [0.05, 1]: every c1 in [0.05 c*, 20 c*], c* = (N+1)/(N-1)) or 'balanced': c1 = "
    "(N n/rho + 1)/(N - 1) at client 0's entry of the schedule with the largest n rho, where gbar = -(n/rho) c_0")


def _wide_params(*, eta_high=1.0, lags_only=False, noise=False):
    params = [Integer("N", 1, 6), Integer("T", 1, 24), Integer("t_d", 1, 4), Integer("K_max", 1, 5),
              Integer("D_max", 0, 12), Integer("seed", 0, 10**6), Real("p", 0.05, 1.0)]
    if lags_only:
        return params
    params = [Choice("problem", ("huber", "cosine", "linear_het")), Integer("d", 1, 3)] + params + [
        Real("scale", 0.5, 3.0), Real("b_scale", 0.0, 3.0), Real("w0_scale", 1e-6, 10.0, log=True),
        Real("eta_L", 1e-3, eta_high, log=True), Choice("c1_mode", ("free", "balanced")),
        Choice("c_side", ("above", "below")), Real("c_rel", 0.05, 1.0)]
    if noise:
        params[0] = Choice("problem", ("huber", "linear_het"))
        params += [Real("sigma_add", 0.0, 2.0), Real("zeta", 0.0, 1.0)]
    return params


LEMMA1_PATH_FAMILY = Family(
    _wide_params(), constrain=_wide_constrain, fixed={"family": "searched", "corollary": False},
    description=_family_words(("huber", "cosine", "linear_het"), "eta = eta_L/L, eta L in (0, 1] (Lemma 1' needs "
                              "only eta > 0); the worst (t, i, j) of the run (Lemma 1' is pathwise)"))
EQ2_FAMILY = Family(
    [Choice("problem", ("linear_het", "huber"))] + _wide_params()[1:],
    constrain=_wide_constrain, fixed={"family": "searched", "corollary": False},
    description=_family_words(("linear_het", "huber"), "the worst round t of the run (the pathwise ||gbar^t||^2 <= "
                              "G^2); equality at N = 1 on a linear client (gbar^t = c_0, ||c_0|| = G)"))
LAG_FAMILY = Family(
    _wide_params(lags_only=True), constrain=_search_constrain,
    fixed={"family": "searched lags", "corollary": False, "problem": "linear", "d": 1, "scale": 1.0, "b_scale": 0.0,
           "w0_scale": 1.0, "eta_L": 0.5},
    description=_FAMILY_WORDS + "one-dimensional linear clients (the lags n, rho depend on the schedule only); the "
                "worst (t, i, j) of the run; K_m, D_m, K_min, t_d of the schedule itself")
THEOREM1_FAMILY = Family(
    _wide_params(eta_high=0.5, noise=True), constrain=_wide_constrain, fixed={"family": "searched", "corollary": False},
    description=_FAMILY_WORDS + _PROBLEM_WORDS["huber"] + " with additive isotropic noise E||eps||^2 = sigma_add^2 "
    "(Assumption 2 with sigma = sigma_add, Assumption 3 with G^2 = (s max delta)^2 + sigma^2; the expectation from "
    f"{_MC_RUNS} keyed runs, compared through the upper end of its 99% confidence interval, and the paper's Delta = "
    "f(w^0) - min f (BFGS on the convex f); noise-free runs exact, with Delta = f(w^0) - min_t f(w^t)); " + _LINEAR_HET_WORDS + " with additive noise sigma_add^2 and "
    "multiplicative noise zeta ||c_i||^2 = zeta ||grad f_i||^2 (Assumption 2 with sigma^2 = sigma_add^2 + zeta "
    "max ||c_i||^2, Assumption 3 with G^2 = max_i (1 + zeta) ||c_i||^2 + sigma_add^2; exact: E w^t is the noise-free "
    "path and grad f is constant; f* = -inf makes the printed Delta infinite, so the check uses the proof's "
    "telescoped f(w^0) - E f(w^T) <= f(w^0) - min_t E f(w^t)); eta = eta_L/L with eta L in (0, 1/2] (Theorem 1''s step); K_m, D_m, K_min, t_d of "
    "the schedule; the simulator's pseudo-Huber noise is additive "
    "only (no multiplicative noise there)")


def _lemma1_path_evaluate(p):
    fed, part, res, dg, L, G2, eta = _searched(p)
    q = {k: v for k, v in p.items() if k != "entry"}
    bound = B.lemma1_corrected(eta=eta, rho=dg.rho, n=dg.n, since_anchor=dg.since_anchor, local2=dg.local2)
    out = _worst_entry(dg.dist2, bound, dg.mask, q, part.N * part.T)
    return out[0] if out else Sample(0.0, 1.0, {**q, "entry": None}, None, part.N * part.T)


def _eq2_evaluate(p):
    fed, part, res, dg, L, G2, eta = _searched(p)
    q = {k: v for k, v in p.items() if k != "entry"}
    out = _worst_entry(dg.gbar2, G2, np.ones(dg.gbar2.shape, bool), q, part.N * part.T)
    return out[0] if out else Sample(0.0, 1.0, {**q, "entry": None}, None, part.N * part.T)


def _lag_evaluate(p, *, which):
    fed, part, res, dg, L, G2, eta = _searched(p)
    q = {k: v for k, v in p.items() if k != "entry"}
    c = _schedule_constants(part)
    if which == "n":
        out = _worst_entry(dg.n, B.lemma2_n(K_m=c["K_m"], D_m=c["D_m"]), dg.mask, q, part.N * part.T)
    else:
        out = _worst_entry(dg.rho, B.lemma2_rho(S=dg.S, t_d=c["t_d"], K_min=c["K_min"], D_m=c["D_m"]), dg.mask, q,
                           part.N * part.T)
    return out[0] if out else Sample(0.0, 1.0, {**q, "entry": None}, None, part.N * part.T)


def _theorem1_stochastic_evaluate(p):
    """Theorem 1' (stochastic) on one searched instance (``THEOREM1_FAMILY``): exact or 99% Monte Carlo."""
    s_add, zeta = p["sigma_add"], p["zeta"]
    size = p["N"] * p["T"]
    if p["problem"] == "linear_het" or s_add == 0:
        fed, part, res, dg, L, G2, eta = _searched(p)
        c2 = (np.asarray(fed.c) ** 2).sum(-1).max() if p["problem"] == "linear_het" else 0.0
        sigma2 = float(s_add**2 + zeta * c2)
        G2n = float(G2 * (1 + zeta) + s_add**2)
        bound = _corrected_bound(part, L=L, eta=eta, Delta=_Delta_lower(dg.f), sigma2=sigma2, G2=G2n)
        return Sample(float(dg.average_grad2()), bound, dict(p), None, size)
    d = int(p["d"])
    cov = np.broadcast_to(s_add**2 / d * np.eye(d), (p["N"], d, d))
    fedn, part, w0, L, G2, eta = _searched_instance(p, noise_cov=cov)
    lhs, _ = _mc_ends(fedn, part, eta, w0, _MC_RUNS, p["seed"])
    Delta = float(np.asarray(fedn.loss(w0))) - _f_star(fedn)     # the paper's Delta itself (no Monte Carlo in it)
    bound = _corrected_bound(part, L=L, eta=eta, Delta=max(Delta, 0.0), sigma2=s_add**2, G2=G2 + s_add**2)
    return Sample(lhs, bound, dict(p), p["seed"], size)


def _f_star(fed) -> float:
    """``min f`` of a pseudo-Huber federation (convex and smooth: BFGS from the mean centre, gradient-norm 1e-12)."""
    from scipy.optimize import minimize  # noqa: PLC0415

    b = np.asarray(fed.b)
    r = minimize(lambda w: float(np.asarray(fed.loss(w))), b.mean(axis=0), jac=lambda w: np.asarray(fed.grad(w)),
                 method="BFGS", options=dict(gtol=1e-12))
    return min(float(r.fun), float(np.asarray(fed.loss(b.mean(axis=0)))))


DET_FAMILY = _search_family(("huber", "cosine"), what=_family_words(
    ("huber", "cosine"), "eta = eta_L/L with eta L in (0, 1] (Theorem 1' needs eta <= 1/L), T >= 1; the lags measured on "
    "the run and Delta = f(w^0) - min_t f(w^t) <= f(w^0) - f*"))
LEMMA1_FAMILY = _search_family(("linear", "huber"), N_high=1500, what=_family_words(
    ("linear", "huber"), "N up to 1500 for the linear clients (6 for pseudo-Huber), eta = eta_L/L, G^2 = 1 (linear) or "
    "(s max delta)^2; rho and n measured at every (t, i, j)"))
COROLLARY_FAMILY = _search_family(("huber",), T_low=4, corollary=True, what=_family_words(
    ("huber",), "eta = sqrt(N/T)/L with T >= 4N (Corollary 1''s step, eta L <= 1/2), K_m, D_m, K_min, t_d of the "
    "schedule, Delta = f(w^0) - min_t f(w^t) <= f(w^0) - f*"))


# ============================================================================= timing, exact
def _timing_samples(quick, seed):
    rng = _rng(seed, "timing")
    out = []
    for k in range(10 if quick else 40):
        K, D = int(rng.integers(1, 30)), int(rng.integers(0, 40))
        part = synchronous_participation(N=int(rng.integers(1, 8)), T=int(rng.integers(1, 30)), K=K, D=D)
        out.append(Sample(round_durations(part).speedup, float(B.timing_fold(K=K, D=D)),
                          dict(K=K, D=D, N=part.N, T=part.T), seed=seed, size=part.N))
    return out


def _exact_samples(quick, seed):
    rng = _rng(seed, "exact")
    out = []
    for k in range(2 if quick else 6):
        N, T, d = int(rng.integers(2, 4)), int(rng.integers(4, 9)), int(rng.integers(1, 3))
        part0 = anarchic_participation(N=N, T=T, t_d=3, p=0.5, K=rng.integers(1, 4, (N, T)), D=rng.integers(0, 4, (N, T)),
                                       seed=int(rng.integers(2**31)))
        fed = random_quadratic_federation(M=N, d=d, seed=int(rng.integers(2**31)), kappa=5.0, weights="dirichlet")
        part = Participation(part0.P, part0.K, part0.D, weights=fed.weights)
        w0 = rng.normal(size=d)
        for mode in MODES:
            sim = np.asarray(afl_dga(fed, part, eta=0.05, w0=w0, mode=mode).w)
            ex = afl_dga_exact(fed, part, eta=0.05, w0=w0, mode=mode).mean
            out.append(Sample(float(np.abs(sim - ex).max()), 0.0, dict(N=N, T=T, d=d, mode=mode, instance=k),
                              seed=seed, size=N * T))
    return out


# ============================================================================= Section 3.1: Gamma
def _gamma_parts(fed, w):
    """``(Gamma, zeta^2(w), sum_i p_i ||grad F_i(w*)||^2, L)`` of an unbatched quadratic federation (F_i* = c_i)."""
    xs = np.asarray(fed.x_star, float)
    p = np.asarray(fed.weights, float)
    c = np.zeros(fed.M) if fed.const is None else np.asarray(fed.const, float)
    gamma = max(float(np.asarray(fed.loss(xs))) - float(p @ c), 0.0)      # F* - sum_k p_k F_k* (>= 0; round-off)
    W = np.broadcast_to(np.asarray(w, float), (fed.M, fed.d))
    gi = np.asarray(fed.grad_clients(W))
    zeta2 = float(p @ ((gi - p @ gi) ** 2).sum(-1))
    gs = np.asarray(fed.grad_clients(np.broadcast_to(xs, (fed.M, fed.d))))
    return gamma, zeta2, float(p @ (gs * gs).sum(-1)), float(fed.L)


def _gamma_fed(M, d, seed, kappa, heterogeneity, weights):
    return random_quadratic_federation(M=M, d=d, seed=seed, kappa=kappa, heterogeneity=heterogeneity, weights=weights)


def _gamma_iid_samples(quick, seed):
    """Quadratic clients with one common minimiser and different Hessians: Gamma = 0, zeta^2(w) > 0 away from it."""
    rng = _rng(seed, "gamma-iid")
    out = []
    for k in range(3 if quick else 10):
        M, d = int(rng.integers(2, 6)), int(rng.integers(2, 4))    # d >= 2: the Hessians differ (d = 1: all mu = 1)
        base = _gamma_fed(M, d, int(rng.integers(2**31)), float(rng.uniform(2.0, 20.0)), 1.0, "dirichlet")
        x = rng.normal(size=d)
        fed = QuadraticFederation(base.H, np.broadcast_to(x, (M, d)).copy(), base.weights)
        w = x + rng.normal(size=d)
        gamma, zeta2, _, L = _gamma_parts(fed, w)
        out.append(Sample(zeta2, float(B.gamma_iid(L=L, Gamma=gamma)),
                          dict(family="common-minimiser quadratics", M=M, d=d, instance=k, Gamma=gamma, L=L),
                          seed=seed, size=M))
    return out


def _gamma_corrected_samples(quick, seed):
    rng = _rng(seed, "gamma")
    out = []
    for k in range(6 if quick else 24):
        p = dict(M=int(rng.integers(1, 7)), d=int(rng.integers(1, 4)), seed=int(rng.integers(2**31)),
                 kappa=float(np.exp(rng.uniform(0.0, np.log(50.0)))) if k % 3 else 1.0,      # kappa = 1: H_i = I, tight
                 heterogeneity=float(np.exp(rng.uniform(np.log(0.01), np.log(10.0)))),
                 weights=("uniform", "dirichlet")[k % 2])
        out.append(_gamma_evaluate(p))
    return out


def _gamma_evaluate(p):
    fed = _gamma_fed(p["M"], p["d"], p["seed"], p["kappa"], p["heterogeneity"], p["weights"])
    gamma, _, g2, L = _gamma_parts(fed, np.asarray(fed.x_star, float))
    return Sample(g2, float(B.gamma_corrected(L=L, Gamma=gamma)), {**p, "Gamma": gamma, "L": L}, None, p["M"])


GAMMA_FAMILY = Family(
    [Integer("M", 1, 6), Integer("d", 1, 3), Integer("seed", 0, 10**6), Real("kappa", 1.0, 100.0, log=True),
     Real("heterogeneity", 0.01, 10.0, log=True), Choice("weights", ("uniform", "dirichlet"))],
    description="random quadratic clients F_i = (1/2)(w - x_i*)^T H_i (w - x_i*) (random_quadratic_federation: H_i of "
                "condition number kappa with eigenvalues in [1, kappa], x_i* ~ heterogeneity N(0, I), uniform or "
                "Dirichlet weights p_i): Assumption 1 with L = max_i lambda_max(H_i), F_i* = 0; Gamma = F(w*) exactly")


# ============================================================================= App. B (3)-(6)
def _eq3_samples(quick, seed):
    """Identical linear clients f_i = w (no noise): (L/2)||w^{t+1} - w^t||^2 = eta^2 L/2 against eta^2 L/(2N)."""
    out = []
    for N in (2, 5, 10, 50):
        fed = LinearFederation(c=np.ones((N, 1)))
        res = afl_dga(fed, synchronous_participation(N=N, T=3), eta=0.1, w0=np.zeros(1))
        step2 = float((np.diff(np.asarray(res.w), axis=0) ** 2).sum(-1).max())
        grad_sum = float(N * 1.0)               # sum_i (1/K) sum_j ||grad f_i||^2 with ||grad f_i|| = 1, K = 1
        bound = B.eq3(eta=0.1, L=1.0, N=N, sigma2=0.0, grad_sum=grad_sum)
        out.append(Sample(0.5 * step2, float(bound), dict(family="identical-linear", N=N, eta=0.1, L=1.0, T=3),
                          seed=None, size=N))
    return out


_Z_CROSS = 4.0      # the cross-term is compared through the lower end of a 4-standard-error interval


def _cross_sample(fed, part, eta, w0, runs, seed, prm, *, statement):
    """The worst step t of |E<grad f(w^t), gbar^t - m^t>| by Monte Carlo: its lower 4-standard-error end against 0."""
    res = afl_dga(fed, part, eta=eta, w0=w0, runs=runs, seed=seed, record=True)
    dg = diagnostics(fed, res)
    g = np.asarray(fed.grad(res.w))[:, :part.T]
    cross = (g * (np.asarray(res.gbar) - np.asarray(dg.m))).sum(-1)             # (runs, T)
    mean, se = cross.mean(0), cross.std(0, ddof=1) / np.sqrt(runs)
    low = np.abs(mean) - _Z_CROSS * se
    t = int(np.argmax(low))
    bound = float(statement(t_d=part.t_d))
    return Sample(float(low[t]), bound, {**prm, "t": t, "mean": float(mean[t]), "se": float(se[t]), "runs": runs},
                  seed=seed, size=part.N * part.T)


def _cross_samples(quick, seed, *, fresh):
    """Noisy quadratic clients: one client f = lambda w^2/2 sending every t_d rounds (E<grad f(w^t), e^t> =
    -k eta lambda sigma^2 after k reuses), and random schedules (t_d = 1 and synchronous when ``fresh``)."""
    rng = _rng(seed, f"cross-{fresh}")
    out = []
    runs = 2000
    if not fresh:
        for t_d in (2, 3):
            fed = QuadraticFederation(np.ones((1, 1, 1)), np.zeros((1, 1)), noise_cov=np.ones((1, 1, 1)))
            P = np.zeros((1, 3 * t_d), np.int64)
            P[:, ::t_d] = 1
            part = Participation(P).check(t_d=t_d)
            out.append(_cross_sample(fed, part, 0.5, np.ones(1), runs, seed, dict(family="one quadratic client",
                       lam=1.0, sigma2=1.0, eta=0.5, t_d=t_d, T=3 * t_d), statement=B.eq4))
    for k in range(2 if quick else 6):
        N, d, T = int(rng.integers(1, 4)), int(rng.integers(1, 3)), int(rng.integers(3, 8))
        K, D = rng.integers(1, 4, (N, T)), rng.integers(0, 4, (N, T))
        if fresh:
            part = Participation(np.ones((N, T), np.int64), K, D).check(t_d=1)
        else:
            part = anarchic_participation(N=N, T=T, t_d=int(rng.integers(2, 4)), p=float(rng.uniform(0.2, 0.7)), K=K,
                                          D=D, seed=int(rng.integers(2**31)))
        base = random_quadratic_federation(M=N, d=d, seed=int(rng.integers(2**31)), kappa=4.0)
        sigma2 = float(rng.uniform(0.5, 2.0))
        fed = QuadraticFederation(base.H, base.x_opt, base.weights,
                                  noise_cov=np.broadcast_to(sigma2 / d * np.eye(d), (N, d, d)).copy())
        eta = float(rng.uniform(0.1, 0.5)) / float(fed.L)
        prm = dict(family="noisy quadratics", instance=k, N=N, d=d, T=T, t_d=part.t_d, eta=eta, sigma2=sigma2,
                   K=K.tolist(), D=D.tolist(), P=part.P.astype(int).tolist())
        out.append(_cross_sample(fed, part, eta, rng.normal(size=d), runs, seed + k, prm,
                                 statement=B.eq4_fresh_noise if fresh else B.eq4))
    return out


def _eq5_entry(dg, L, prm, size):
    return _worst_entry(dg.bias2, L**2 * np.asarray(dg.Xi), np.ones(np.shape(dg.bias2), bool), prm, size)


def _eq5_samples(quick, seed):
    out = []
    for fed, part, res, dg, L, G2, eta, prm in _random(quick, seed):
        out += _eq5_entry(dg, L, prm, part.N * part.T)
    rng = _rng(seed, "eq5-iso")
    for k in range(2 if quick else 6):             # isotropic quadratics H_i = L I: (5) is an equality at N = 1
        N, d, T = int(rng.integers(1, 4)), int(rng.integers(1, 3)), int(rng.integers(4, 16))
        part = anarchic_participation(N=N, T=T, t_d=int(rng.integers(1, 4)), p=float(rng.uniform(0.2, 1.0)),
                                      K=rng.integers(1, 4, (N, T)), D=rng.integers(0, 5, (N, T)),
                                      seed=int(rng.integers(2**31)))
        L = float(rng.uniform(0.5, 3.0))
        fed = QuadraticFederation(np.broadcast_to(L * np.eye(d), (N, d, d)).copy(), rng.normal(size=(N, d)))
        eta = float(rng.uniform(0.1, 1.0)) / L
        dg = diagnostics(fed, afl_dga(fed, part, eta=eta, w0=rng.normal(size=d), record=True))
        out += _eq5_entry(dg, L, dict(family="isotropic quadratics", instance=k, N=N, d=d, T=T, eta=eta, L=L),
                          N * T)
    return out


def _eq5_evaluate(p):
    fed, part, res, dg, L, G2, eta = _searched(p)
    out = _eq5_entry(dg, L, {k: v for k, v in p.items() if k != "entry"}, part.N * part.T)
    return out[0] if out else Sample(0.0, 1.0, {**p, "entry": None}, None, part.N * part.T)


EQ5_FAMILY = _search_family(("huber", "cosine"), what=_family_words(
    ("huber", "cosine"), "eta = eta_L/L with eta L in (0, 1] ((5) is pathwise: Jensen and smoothness only); the worst "
    "server step t of the run"))

#: the derivation's equality instance of (5): one pseudo-Huber client near its centre (Hessian s I = L I), a stale
#: stored iterate (t_d = 2, D up to 2), one local iteration per round (Jensen over j is then an equality too)
EQ5_START = dict(problem="huber", N=1, T=8, t_d=2, K_max=1, D_max=2, d=1, seed=0, p=0.5, scale=1.0, b_scale=0.0,
                 w0_scale=1e-4, eta_L=0.5)

#: (N, T, eta L, t_d) of the recorded periodic runs that refute (6): identical pseudo-Huber clients (L = G = 1)
EQ6_PERIODIC = ((10, 200, 0.2, 20), (4, 120, 0.25, 12))


def _eq6_samples(quick, seed):
    out = []
    for N, T, eta, t_d in EQ6_PERIODIC[:1] if quick else EQ6_PERIODIC:
        fed = PseudoHuberFederation(b=np.zeros((N, 1)), delta=1.0, scale=1.0)
        P = np.zeros((N, T), np.int64)
        P[:, ::t_d] = 1
        part = Participation(P).check(t_d=t_d)
        dg = diagnostics(fed, afl_dga(fed, part, eta=eta, w0=np.array([0.3]), record=True))
        bound = B.eq6(eta=eta, L=1.0, N=N, sigma2=0.0, G2=1.0, K_m=1, D_m=0, S_sum=dg.S[:, :, 0].sum(-1))
        out += _worst_entry(0.5 * eta * np.asarray(dg.bias2), bound, np.ones(T, bool),
                            dict(family="periodic", N=N, T=T, eta=eta, L=1.0, t_d=t_d, w0=0.3, delta=1.0, K=1, D=0),
                            N * T)
    return out


# ============================================================================= App. A: the count of the range
def _lag_range_samples(quick, seed):
    """The printed range {t - tau - tau', ..., t - 1} counted index by index, against tau + tau' - 1."""
    out = []
    for fed, part, res, dg, L, G2, eta, prm in _random(quick, seed, problems=("huber",)):
        tau = part.tau
        best = None
        for i in range(part.N):
            for t in range(part.T):
                if t - tau[i, t] < 0:
                    continue
                tp = int(tau[i, t - tau[i, t]])
                terms = len(range(t - int(tau[i, t]) - tp, t))
                s = Sample(float(terms), float(B.lag_range_terms(S=int(tau[i, t]) + tp - 1)),
                           {**prm, "i": i, "t": t, "tau": int(tau[i, t]), "tau_prime": tp}, seed=seed, size=part.N)
                if best is None or s.value / s.bound > best.value / best.bound:
                    best = s
        if best is not None:
            out.append(best)
    return out


# ============================================================================= the linear speedup threshold
def _speedup_samples(quick, seed):
    rng = _rng(seed, "speedup")
    out = []
    for k in range(20 if quick else 200):
        kw = dict(L=float(rng.uniform(0.1, 10)), N=int(rng.integers(1, 50)), Delta=float(rng.uniform(0, 10)),
                  G2=float(rng.uniform(0.1, 5)), K_m=int(rng.integers(1, 20)), D_m=int(rng.integers(0, 40)),
                  t_d=int(rng.integers(1, 30)))
        kw["sigma2"] = float(rng.uniform(0, kw["G2"]))
        T = B.corollary_thresholds(**kw, printed=True)["T_min"] * (1 + 1e-12 if k % 2 else float(rng.uniform(1, 100)))
        N, G2, s2 = kw["N"], kw["G2"], kw["sigma2"]
        value = max(N * (kw["K_m"] + kw["D_m"]) ** 2 * G2 / T, N * (2 * kw["t_d"] - 1) * (s2 + G2) / T)
        out.append(Sample(value, float(B.speedup_threshold(T=T, **kw)), dict(kw, T=T, instance=k), seed=seed, size=N))
    return out


# ============================================================================= Fig. 1
def _fig1_samples(quick, seed):
    """Fig. 1's client 3 (participates in rounds 1, 2, 4, 5 with K = 1, 2, 5, 2 and D = 2, 2, 4, 2): the printed
    trajectory w0 - eta(gbar^1 + 2 gbar^2 + gbar^3) - eta sum_j g^4_j - eta(g^5_1 + g^5_2) (Section 3.2's
    correction, ``paper_text``) against the simulator's final client model, on random quadratic clients."""
    P = np.array([[1, 1, 0, 1, 1], [1, 1, 1, 1, 1]])
    K = np.array([[1, 2, 1, 5, 2], [1, 1, 1, 1, 1]])
    D = np.array([[2, 2, 4, 2, 2], [0, 0, 0, 0, 0]])
    out = []
    for k in range(2 if quick else 6):
        fed = random_quadratic_federation(M=2, d=2, seed=seed + k, kappa=5.0, heterogeneity=1.5, weights="dirichlet")
        part = Participation(P, K, D, weights=np.asarray(fed.weights))
        eta, w0 = 0.1, np.ones(2)
        res = afl_dga(fed, part, eta=eta, w0=w0, mode="paper_text", record=True)
        gb, g = np.asarray(res.gbar), np.asarray(res.record.grads)[:, 0]
        want = w0 - eta * (gb[0] + 2 * gb[1] + gb[2]) - eta * g[3, :5].sum(0) - eta * g[4, :2].sum(0)
        out.append(Sample(float(np.abs(np.asarray(res.clients)[0] - want).max()), 0.0, dict(instance=k, seed=seed + k),
                          seed=seed, size=2))
    return out


# ============================================================================= registry
def _reg(name, st, sampler, **kw):
    return register(Check(f"{PAPER}.{name}", paper=PAPER, statement=st, sampler=sampler, **kw))


_reg("eq2", B.eq2, lambda q, s: _eq2_samples(q, s, corrected=False), expected="violated", falsifies="proof step",
     still_stands="eq2_corrected: E||gbar||^2 <= G^2 (tight), and the noise part alone is <= sigma^2/(N K_min)",
     description="App. A eq. (2) (the '1/N' in E||gbar||^2 <= (sigma^2+G^2)/N) is false: N identical clients with "
                 "||grad f_i|| = G give ||gbar||^2 = G^2; only the noise part shrinks like 1/N")
_reg("eq2_corrected", B.eq2_corrected, lambda q, s: _eq2_samples(q, s, corrected=True), family=EQ2_FAMILY,
     evaluate=_eq2_evaluate, search_budget=(12, 100),
     description="||gbar^t||^2 <= G^2 on identical-linear (equality) and random pseudo-Huber runs")
_reg("lemma1", B.lemma1, lambda q, s: _lemma1_samples(q, s, used=False), expected="violated", falsifies="lemma",
     still_stands="Lemma 1' (lemma1_corrected, pathwise and nearly tight; lemma1_corrected_expectation with G^2) with the "
                  "lag counts of Lemma 2'",
     description="Lemma 1 as stated is false (linear family, eta = 0.1 <= 1/L and <= 1/T): it misses the factor 2 of "
                 "||x+y||^2, the Cauchy-Schwarz counts and rounds of the lag; Lemma 1' stands")
_reg("lemma1_used", B.lemma1_used, lambda q, s: _lemma1_samples(q, s, used=True), expected="violated", falsifies="lemma",
     still_stands="Lemma 1' in expectation: 2 eta^2 G^2 (rho^2 + n^2)",
     description="Lemma 1 combined with eq. (2), the form Theorem 1's proof uses, is false on the linear family")
_reg("lag_count_printed", B.lag_count_printed, lambda q, s: _lag_samples(q, s, which="printed"), expected="violated",
     falsifies="proof step",
     still_stands="Lemma 2' (2): rho <= tau + tau' - 1 + t_d max(0, ceil(D_m/K_min) - 1) (tight); the printed count holds "
                  "when D_m <= K_min",
     description="the proof of Lemma 1 counts the server steps since the anchor as tau + tau' - 1; a correction that "
                 "arrives later than K_min local iterations adds more (random anarchic schedules); Lemma 2' stands")
_reg("lemma1_corrected", B.lemma1_corrected, lambda q, s: _lemma1_corrected_samples(q, s, expectation=False),
     family=LEMMA1_PATH_FAMILY, evaluate=_lemma1_path_evaluate, search_budget=(12, 100),
     description="Lemma 1' pathwise at every (t, i, j) of random anarchic runs and the linear family")
_reg("lemma1_corrected_expectation", B.lemma1_corrected_expectation,
     lambda q, s: _lemma1_corrected_samples(q, s, expectation=True), family=LEMMA1_FAMILY,
     evaluate=_lemma1_expectation_evaluate, search_budget=(40, 200),
     description="Lemma 1' with G^2 (pseudo-Huber random anarchic runs and the linear family)")
_reg("lemma2_n", B.lemma2_n, lambda q, s: _lag_samples(q, s, which="n"), family=LAG_FAMILY,
     evaluate=functools.partial(_lag_evaluate, which="n"), search_budget=(12, 100),
     description="Lemma 2' (1): n <= K_m + D_m - 1 on random anarchic schedules (attained)")
_reg("lemma2_rho", B.lemma2_rho, lambda q, s: _lag_samples(q, s, which="rho"), family=LAG_FAMILY,
     evaluate=functools.partial(_lag_evaluate, which="rho"), search_budget=(12, 100),
     description="Lemma 2' (2): rho <= tau + tau' - 1 + t_d max(0, ceil(D_m/K_min) - 1) on random anarchic schedules")
_reg("theorem1", B.theorem1, lambda q, s: _theorem1_samples(q, s, literal=False), expected="violated", falsifies="theorem",
     still_stands="Theorem 1' (theorem1_corrected_det with the measured lags; theorem1_corrected, worst case, "
                  "eta <= 1/(2L)), which the same instances satisfy",
     description="Theorem 1 (eta <= 1/L) is false on the periodic family (a stale gradient reused for t_d steps); the "
                 "failure follows from eq. (2) and Lemma 1; Theorem 1' stands")
_reg("theorem1_literal_step", B.theorem1_literal_step, lambda q, s: _theorem1_samples(q, s, literal=True),
     expected="violated", falsifies="theorem",
     still_stands="Theorem 1' (scale-invariant like Theorem 1, so it holds at eta = 1/T on the same instances)",
     description="Theorem 1 with the printed eta <= 1/T is false too: the periodic family rescaled by s = sqrt(NT)/(eta L) "
                 "runs at eta = 1/T with the same ratio (the inequality is invariant under (f, eta) -> (c f, eta/c))")
_reg("theorem1_corrected_det", B.theorem1_corrected_det, _theorem1_det_samples, family=DET_FAMILY,
     evaluate=_det_evaluate, search_budget=(40, 200),
     description="Theorem 1' (sigma = 0) with the measured lags on random anarchic runs (non-convex cosine, pseudo-Huber)")
_reg("theorem1_corrected", B.theorem1_corrected, lambda q, s: _theorem1_corrected_samples(q, s),
     family=THEOREM1_FAMILY, evaluate=_theorem1_stochastic_evaluate, search_budget=(12, 100),
     description="Theorem 1' worst case, eta <= 1/(2L): deterministic pseudo-Huber and periodic runs, and noisy "
                 "pseudo-Huber runs (99% upper confidence end of 200 keyed runs)")
_reg("corollary1", B.corollary1, lambda q, s: _theorem1_samples(q, s, literal=False, statement="corollary1"),
     expected="violated", falsifies="corollary",
     still_stands="Corollary 1' (T >= 4N), with linear speedup O(1/sqrt(NT)) proved for t_d = 1 or sigma = 0 and open "
                  "otherwise; Corollary 1 is exactly Theorem 1 at its step size (corollary1_substitution)",
     description="Corollary 1 (its O-terms taken with Theorem 1's constants) is false at its own step size "
                 "eta = sqrt(N)/(L sqrt(T)) on the periodic family (N = 100, T = 2000, t_d = 12), also rescaled to "
                 "eta = 1/T; its third term is exactly (2t_d-1)(sigma^2+G^2)/T (the printed N/T is loose by N)")
_reg("corollary1_substitution", B.corollary1, lambda q, s: _substitution_samples(q, s, corrected=False),
     relation="==", rtol=1e-9, description="Corollary 1 equals Theorem 1 at eta = sqrt(N)/(L sqrt(T)), S_bar = N(2t_d-1)")
_reg("corollary1_corrected", B.corollary1_corrected, lambda q, s: _theorem1_corrected_samples(q, s, corollary=True),
     family=COROLLARY_FAMILY, evaluate=_corollary_evaluate, search_budget=(40, 200),
     description="Corollary 1' at eta = sqrt(N)/(L sqrt(T)), T >= 4N, on noisy pseudo-Huber runs (Monte Carlo, 99%)")
_reg("corollary1_corrected_substitution", B.corollary1_corrected,
     lambda q, s: _substitution_samples(q, s, corrected=True), relation="==", rtol=1e-9,
     description="Corollary 1' equals Theorem 1' at eta = sqrt(N)/(L sqrt(T))")
_reg("timing_fold", B.timing_fold, _timing_samples, relation="==", rtol=1e-12,
     description="wall-clock speedup of overlapping communication = (K+D)/K for homogeneous synchronous schedules")
_reg("exact_vs_simulation", None, _exact_samples, relation="==", rtol=0.0, atol=1e-11,
     description="exact register moments == batched simulator (all three correction modes, random quadratics)")
_reg("corollary1_printed", B.corollary1_printed, _corollary_printed_samples, expected="violated", falsifies="corollary",
     still_stands="Corollary 1' (T >= 4N; its t_d-terms are (2t_d - 1 + extra)^2 N G^2/T and the stale-noise term, so "
                  "it grows with t_d as this instance needs); no adversarial family: each instance is a run of up to "
                  "25600 steps",
     description="Corollary 1 as printed (its three O-terms with the constant C_O = 2 that Theorem 1 gives) is false at "
                 "its own step eta = sqrt(N)/(L sqrt(T)): one pseudo-Huber client (L = G = 1, w0 = 0.3) sending once "
                 "every t_d = 10 sqrt(T) rounds, T = 100..25600; the ratio grows like sqrt(T), so no constant works; "
                 "also rescaled to the printed eta <= 1/T (same ratio)")
_reg("speedup_threshold", B.speedup_threshold, _speedup_samples,
     description="the remark after Corollary 1: for T >= T_min = max(N, T1, T2) (corollary_thresholds(printed=True)) "
                 "neither O(N/T) term exceeds the O(1/sqrt(NT)) term; tight at T = T_min")
_reg("gamma_iid", B.gamma_iid, _gamma_iid_samples, expected="violated", falsifies="remark",
     still_stands="gamma_corrected: Gamma >= sum_i p_i ||grad F_i(w*)||^2/(2L) (tight), so Gamma = 0 means a common "
                  "minimiser; i.i.d. clients do give Gamma = 0",
     description="'If Gamma = 0 the local data are i.i.d.' is false: quadratic clients with one common minimiser and "
                 "different Hessians have Gamma = 0 and clients that disagree (zeta^2(w) > 0) away from it")
_reg("gamma_corrected", B.gamma_corrected, _gamma_corrected_samples, family=GAMMA_FAMILY, evaluate=_gamma_evaluate,
     search_budget=(12, 100),
     description="sum_i p_i ||grad F_i(w*)||^2 <= 2 L Gamma on random quadratic federations (tight for H_i = I)")
_reg("eq3", B.eq3, _eq3_samples, expected="violated", falsifies="proof step",
     still_stands="(L/2) E||w^{t+1} - w^t||^2 <= eta^2 (L/2) G^2: eq2_corrected times eta^2 L/2 (tight)",
     description="App. B eq. (3) (its 1/N^2 from the Jensen step b_1) is false: N identical linear clients give "
                 "(L/2)||w^{t+1} - w^t||^2 = eta^2 L/2 against eta^2 L/(2N)")
_reg("eq4", B.eq4, lambda q, s: _cross_samples(q, s, fresh=False), expected="violated", falsifies="proof step",
     still_stands="eq4_fresh_noise: the cross-term vanishes when t_d = 1; otherwise Theorem 1' bounds it by its "
                  "stale-noise term 2 eta L G sigma (t_d - 1)/sqrt(K_min) (theorem1_corrected)",
     description="App. B eq. (4)'s first line replaces gbar^t by its noise-free part m^t inside E<grad f(w^t), .>: "
                 "false once a stale gradient is reused (its noise already moved w^t); noisy quadratic clients, "
                 "2000 keyed runs, the lower end of a 4-standard-error interval of |E<grad f(w^t), gbar^t - m^t>| "
                 "against 0")
_reg("eq4_fresh_noise", B.eq4_fresh_noise, lambda q, s: _cross_samples(q, s, fresh=True),
     description="the noise cross-term of App. B (4) is 0 when every client sends every round (t_d = 1): noisy "
                 "quadratic clients, 2000 keyed runs, no step's 4-standard-error interval excludes 0")
_reg("eq5", B.eq5, _eq5_samples, family=EQ5_FAMILY, evaluate=_eq5_evaluate, search_budget=(40, 200),
     search_start=(EQ5_START,),
     description="App. B eq. (5) pathwise: ||grad f(w^t) - m^t||^2 <= L^2 sum_i p_i (1/K_i) sum_j ||w^t - w_ij||^2 on "
                 "random anarchic runs (cosine, pseudo-Huber) and isotropic quadratics (equality at N = 1)")
_reg("eq6", B.eq6, _eq6_samples, expected="violated", falsifies="proof step",
     still_stands="(5) with Lemma 1' instead: (eta/2) L^2 sum_i p_i (1/K_i) sum_j 2 eta^2 G^2 (rho^2 + n^2) (eq5 and "
                   "lemma1_corrected_expectation)",
     description="App. B eq. (6) ((5) with the printed Lemma 1) is false on the periodic family (identical "
                 "pseudo-Huber clients sending every t_d rounds, eta t_d L > 2): a gradient stale by k steps is off by "
                 "k eta G, and Lemma 1's count misses the k^2")
_reg("lag_range_terms", B.lag_range_terms, _lag_range_samples, expected="violated",
     falsifies="proof step",
     still_stands="the range has tau + tau' terms (the bound gains at most a factor 2); what the proof needs is the "
                  "number of server steps since the anchor, rho <= tau + tau' - 1 + t_d max(0, ceil(D_m/K_min) - 1) "
                  "(lemma2_rho, tight)",
     description="the proof of Lemma 1 sums E||eta gbar^j||^2 over j = t - tau - tau', ..., t - 1 and counts "
                 "tau + tau' - 1 terms: the range has tau + tau' (random anarchic schedules, counted index by index)")
_reg("fig1_trajectory", None, _fig1_samples, relation="==", rtol=0.0, atol=1e-12,
     description="Fig. 1: the printed trajectory of client 3 equals the simulator's (Section 3.2's correction, "
                 "random quadratic clients)")
