r"""The simulated checks of FedDelAvg: the batched runs on every instance family (quadratic, pseudo-Huber, literal
Huber, logistic; :mod:`fltheory.papers.feddelavg.checks` says which assumptions each meets and how) and the per-run
samplers of Lemmas 3-5, Propositions 1-2, Theorem 1, (20) and the steps of their proofs ((63)-(75), (81)-(85), (106)).

The registry (:mod:`fltheory.papers.feddelavg.checks`) pairs each sampler with its statement; every name here is
also importable from there.
"""
from __future__ import annotations

import functools
import zlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...backend import KeyedStream, to_numpy
from ...problems import LogisticFederation, PseudoHuberFederation, random_quadratic_federation
from ...verify import Sample
from . import bounds as B
from .algorithm import feddelavg


def _rng(seed: int, tag: str) -> np.random.Generator:
    return KeyedStream(seed, f"feddelavg-checks-{tag}").generator()


def _random_params(rng, n, *, tau_max=50, eb=(1e-4, 1.99)):
    """the paper's ranges: eta beta log-uniform, beta in [1e-2, 1e2], L in [1e-3, 1e3], delta in [0, 2L],
    tau in 1..tau_max with tau log(1 + eta beta) <= 50, Delta in 0..tau."""
    eb_ = np.exp(rng.uniform(np.log(eb[0]), np.log(eb[1]), n))
    beta = 10 ** rng.uniform(-2, 2, n)
    L = 10 ** rng.uniform(-3, 3, n)
    tau = rng.integers(1, tau_max + 1, n)
    tau = np.minimum(tau, np.maximum(1, np.floor(50 / np.log1p(eb_)))).astype(np.int64)
    Delta = np.floor(rng.uniform(0, 1, n) * (tau + 1)).astype(np.int64)
    delta = rng.uniform(0, 2, n) * L
    return dict(eta=eb_ / beta, beta=beta, L=L, delta=delta, tau=tau, Delta=Delta)


def _pdict(p, i, **extra):
    return {**{n: (int(v[i]) if np.asarray(v).dtype.kind in "iu" else float(v[i])) for n, v in p.items()}, **extra}


# ============================================================================= simulated runs
@dataclass(frozen=True)
class Runs:
    """One batched FedDelAvg run with the constants its statements need (one entry per configuration)."""

    family: str
    seed: int
    res: Any
    tau: int
    K: int
    eta: np.ndarray
    alpha: np.ndarray
    Delta: np.ndarray
    beta: np.ndarray
    L: np.ndarray  # for the distance bounds (effective, at the points the proofs use)
    L_loss: np.ndarray  # for |F(w) - F(c)| <= L ||w - c|| (on segments)
    delta: np.ndarray
    delta_i: np.ndarray  # (B, M)
    rho: np.ndarray  # (B, M)
    phi: np.ndarray
    M: int
    d: int

    @property
    def B(self) -> int:
        return len(self.eta)

    def params(self, b: int, **extra) -> dict:
        return {"family": self.family, "seed": self.seed, "config": int(b), "tau": self.tau, "K": self.K,
                "eta": float(self.eta[b]), "alpha": float(self.alpha[b]), "Delta": int(self.Delta[b]),
                "beta": float(self.beta[b]), "M": self.M, "d": self.d, **extra}

    def size(self, b: int) -> float:
        return float(self.M * self.d + self.K * self.tau)

    def kw(self, *, loss: bool = False) -> dict:
        """Column vectors of the constants, for Statements broadcasting over (B, ...)."""
        c = lambda v: v[:, None]  # noqa: E731
        return dict(alpha=c(self.alpha), eta=c(self.eta), beta=c(self.beta), L=c(self.L_loss if loss else self.L),
                    delta=c(self.delta), tau=self.tau, Delta=c(self.Delta))


def _finish(family, seed, fed, res, *, tau, K, eta, alpha, Delta, beta, logistic=False, L_global=None,
            delta_global=None) -> Runs:
    r = res.record
    B_ = len(eta)
    L_eff = np.asarray(to_numpy(r.L_eff), float)
    L_loss = L_eff
    if L_global is not None:   # Assumptions 1-2 with their global constants, literally (not measured along the run)
        L_eff = L_loss = np.broadcast_to(np.asarray(L_global, float), (B_,)).copy()
        rho = np.broadcast_to(to_numpy(fed.weights), (B_, fed.M))
        dl = np.broadcast_to(np.asarray(delta_global, float), (B_, fed.M))
        return Runs(family, seed, res, tau, K, np.asarray(eta, float), np.asarray(alpha, float), np.asarray(Delta),
                    np.broadcast_to(np.asarray(beta, float), (B_,)), L_eff, L_loss, (rho * dl).sum(-1), dl, rho,
                    np.asarray(to_numpy(r.phi), float), fed.M, fed.d)
    if logistic:  # the ball ||W|| <= r holding every candidate and every c_k point bounds ||grad F|| on segments
        rad = max(float(np.sqrt((to_numpy(res.w_periods) ** 2).sum(-1)).max()),
                  float(np.sqrt((to_numpy(r.c) ** 2).sum(-1)).max()))
        L_loss = np.maximum(L_eff, float(fed.lipschitz_ball(rad)))
    rho = np.broadcast_to(to_numpy(fed.weights), (B_, fed.M))
    return Runs(family, seed, res, tau, K, np.asarray(eta, float), np.asarray(alpha, float), np.asarray(Delta),
                np.broadcast_to(np.asarray(beta, float), (B_,)), L_eff, L_loss, np.asarray(to_numpy(r.delta), float),
                np.asarray(to_numpy(r.delta_eff), float), rho, np.asarray(to_numpy(r.phi), float), fed.M, fed.d)


@functools.lru_cache(maxsize=64)
def quadratic_runs(seed: int, *, tau: int, K: int, B: int, eb_max: float = 1.99, M: int = 4, d: int = 3,
                   kappa: float = 6.0, heterogeneity: float = 1.0, Delta0: bool = False, identical: bool = False,
                   alpha_one: float = 0.25, eb_min: float = 0.01, init_scale: float = 2.0) -> Runs:
    """A batch of ``B`` random quadratic federations, each with its own ``(eta, alpha, Delta)``.

    ``eta beta`` uniform in [0.01, eb_max]; ``Delta`` uniform in 0..tau (or 0); ``alpha`` uniform in
    [0.01, 1] with a share ``alpha_one`` set to 1; ``w_init`` Gaussian.  ``identical``: every client
    the same (common Hessian, common optimum), so delta = 0.
    """
    tag = f"q{tau}-{K}-{B}-{eb_max}-{M}-{d}-{kappa}-{heterogeneity}-{Delta0}-{identical}-{alpha_one}-{eb_min}-{init_scale}"
    rng = _rng(seed, tag)
    fed_seed = int(zlib.crc32(tag.encode())) + seed
    fed = random_quadratic_federation(M=M, d=d, batch=B, kappa=kappa, heterogeneity=0.0 if identical else heterogeneity,
                                      weights="uniform" if identical else "dirichlet",
                                      hessian="common" if identical else "random", seed=fed_seed)
    beta = np.asarray(to_numpy(fed.L), float)
    eta = rng.uniform(eb_min, eb_max, B) / beta
    alpha = np.where(rng.uniform(size=B) < alpha_one, 1.0, rng.uniform(0.01, 1.0, B))
    Delta = np.zeros(B, np.int64) if Delta0 else rng.integers(0, tau + 1, B)
    w_init = init_scale * rng.normal(size=(B, d))
    res = feddelavg(fed, eta=eta, tau=tau, Delta=Delta, alpha=alpha, K=K, w_init=w_init, output_set="proof", record=True)
    return _finish("quadratic" + ("-identical" if identical else "") + ("-Delta0" if Delta0 else ""), seed, fed, res,
                   tau=tau, K=K, eta=eta, alpha=alpha, Delta=Delta, beta=beta)


@functools.lru_cache(maxsize=16)
def huber_runs(seed: int, *, tau: int, K: int, B: int, identical: bool = False) -> Runs:
    """FedDelAvg on pseudo-Huber clients, which meet Assumptions 1 and 2 LITERALLY, with global constants.

    ``F_i(w) = s delta_i^2 (sqrt(1 + ||w - b_i||^2 / delta_i^2) - 1)`` is convex, ``beta = s``-smooth and
    globally ``L = s max_i delta_i``-Lipschitz (Assumption 1 exactly as stated: bounded gradients, which
    quadratic and L2-regularised logistic clients do not have), and ``||grad F_i - grad F|| <= s (delta_i +
    sum_j rho_j delta_j)`` everywhere (Assumption 2 with that global delta_i).  ``identical``: every client
    the same (``b_i = 0``, ``delta_i = 1``), so Assumption 2 holds with delta = 0; FedAvg (alpha = 1,
    Delta = 0) with eta beta in [0.5, 1.99].
    """
    rng = _rng(seed, f"huber{tau}-{K}-{B}-{identical}")
    M, d = 4, 3
    s = float(rng.uniform(0.5, 2.0))
    if identical:
        b, dl, w = np.zeros((B, M, d)), np.ones((B, M)), np.full((B, M), 1.0 / M)
    else:
        b, dl, w = 2.0 * rng.normal(size=(B, M, d)), rng.uniform(0.3, 1.5, (B, M)), rng.dirichlet(np.ones(M), B)
    fed = PseudoHuberFederation(b=b, delta=dl, scale=s, weights=w)
    eta = rng.uniform(0.5 if identical else 0.01, 1.99, B) / s
    alpha = np.ones(B) if identical else np.where(rng.uniform(size=B) < 0.25, 1.0, rng.uniform(0.01, 1.0, B))
    Delta = np.zeros(B, np.int64) if identical else rng.integers(0, tau + 1, B)
    w_init = 3.0 * rng.normal(size=(B, d))
    res = feddelavg(fed, eta=eta, tau=tau, Delta=Delta, alpha=alpha, K=K, w_init=w_init, output_set="proof", record=True)
    L_global = s * dl.max(axis=-1)
    # identical clients: grad F_i = grad F everywhere, so delta_i = 0 exactly; otherwise the triangle-inequality bound
    delta_global = np.zeros((B, M)) if identical else s * (dl + (w * dl).sum(-1, keepdims=True))
    return _finish("huber" + ("-identical" if identical else ""), seed, fed, res, tau=tau, K=K, eta=eta, alpha=alpha,
                   Delta=Delta, beta=np.full(B, s), L_global=L_global, delta_global=delta_global)


@functools.lru_cache(maxsize=8)
def literal_huber_runs(tau: int) -> Runs:
    """Theorem 1's counterexample on literal Huber clients, exactly: K = 1, one client (delta = 0), alpha = 1,
    Delta = 0, eta beta = 1, d = 1.

    ``F(w) = beta/2 w^2`` for ``|w| <= c`` and ``beta c (|w| - c/2)`` beyond is convex, beta-smooth and globally
    ``L = beta c``-Lipschitz (Assumption 1 as stated).  With w_init = c the run never leaves the quadratic zone (the
    first step lands on w* = 0), so it is the run on the quadratic client beta/2 w^2, which the simulator computes;
    L is the Huber client's global constant beta c.  The printed output set (13) at K = 1 is {w_init}: gap
    beta c^2/2, bound 1/(eta phi tau) with phi = (1 - eta beta/2)/c^2, ratio eta beta tau (1 - eta beta/2)/2 = tau/4.
    """
    from ...problems import QuadraticFederation  # noqa: PLC0415

    beta, c = 1.0, 1.0
    fed = QuadraticFederation(np.full((1, 1, 1, 1), beta), np.zeros((1, 1, 1)), np.ones((1, 1)))
    eta, alpha, Delta = np.array([1.0 / beta]), np.ones(1), np.zeros(1, np.int64)
    res = feddelavg(fed, eta=eta, tau=tau, Delta=Delta, alpha=alpha, K=1, w_init=np.full((1, 1), c),
                    output_set="proof", record=True)
    return _finish("literal-huber", 0, fed, res, tau=tau, K=1, eta=eta, alpha=alpha, Delta=Delta, beta=np.ones(1),
                   L_global=beta * c, delta_global=np.zeros((1, 1)))


@functools.lru_cache(maxsize=8)
def mixture_runs(seed: int, *, tau: int, K: int, B: int) -> Runs:
    """Delta = 0 runs where client 0 holds the population: F_0 = the rho-average of the others (so F_0 = F).

    Client 0's local GD is then exactly the auxiliary GD c_k, while the average of the others drifts
    (heterogeneous Hessians): the sync at (k+1) tau moves w_0 off c_k although delta_0 = 0 -- the
    case that separates the printed Lemma 4 (t in T_k minus {k tau}) from the corrected one.
    """
    from ...problems import QuadraticFederation  # noqa: PLC0415

    tag = f"mix{tau}-{K}-{B}"
    rng = _rng(seed, tag)
    base = random_quadratic_federation(M=3, d=2, batch=B, kappa=5.0, heterogeneity=1.0, weights="dirichlet",
                                       seed=int(zlib.crc32(tag.encode())) + seed)
    H, xo, w = (np.array(to_numpy(a)) for a in (base.H, base.x_opt, base.weights))
    r = w[:, 1:] / w[:, 1:].sum(axis=1, keepdims=True)
    H0 = np.einsum("bm,bmij->bij", r, H[:, 1:])
    H[:, 0] = H0
    xo[:, 0] = np.linalg.solve(H0, np.einsum("bm,bmij,bmj->bi", r, H[:, 1:], xo[:, 1:])[..., None])[..., 0]
    fed = QuadraticFederation(H, xo, w)
    beta = np.asarray(to_numpy(fed.L), float)
    eta = rng.uniform(0.05, 1.99, B) / beta
    alpha = np.where(rng.uniform(size=B) < 0.5, 1.0, rng.uniform(0.05, 1.0, B))
    Delta = np.zeros(B, np.int64)
    res = feddelavg(fed, eta=eta, tau=tau, Delta=Delta, alpha=alpha, K=K, w_init=3.0 * rng.normal(size=(B, 2)),
                    output_set="proof", record=True)
    return _finish("quadratic-mixture-Delta0", seed, fed, res, tau=tau, K=K, eta=eta, alpha=alpha, Delta=Delta, beta=beta)


@functools.lru_cache(maxsize=4)
def _digits():
    from ...datasets import digits_federation  # noqa: PLC0415 - loads scikit-learn

    fed = digits_federation(n_clients=5, partition="label", seed=0, reg=1e-2).fed
    fed.x_star  # solve once  # noqa: B018
    return fed


@functools.lru_cache(maxsize=16)
def logistic_runs(seed: int, *, tau: int, K: int, B: int, eb_max: float = 1.9) -> Runs:
    """FedDelAvg on the digits toy (5 non-iid clients), ``B`` configurations ``(eta, alpha, Delta)``."""
    fed = _digits()
    rng = _rng(seed, f"logistic{tau}-{K}-{B}-{eb_max}")
    beta = float(fed.beta)
    eta = rng.uniform(0.05, eb_max, B) / beta
    alpha = np.where(rng.uniform(size=B) < 0.25, 1.0, rng.uniform(0.05, 1.0, B))
    Delta = rng.integers(0, tau + 1, B)
    res = feddelavg(fed, eta=eta, tau=tau, Delta=Delta, alpha=alpha, K=K, output_set="proof", record=True)
    return _finish("logistic-digits", seed, fed, res, tau=tau, K=K, eta=eta, alpha=alpha, Delta=Delta,
                   beta=np.full(B, beta), logistic=True)


def tiny_logistic(reg: float = 0.01) -> LogisticFederation:
    """One client, one constant feature, two samples with labels 0 and 1: w* = 0, curvature beta at w*."""
    return LogisticFederation.from_client_data([np.ones((2, 1))], [np.array([0, 1])], n_classes=2, reg=reg)


@functools.lru_cache(maxsize=8)
def tiny_logistic_runs(seed: int, *, B: int) -> Runs:
    """K = 1, Delta = 0, alpha = 1 on :func:`tiny_logistic` from random starts ``r (1,-1)/sqrt 2``."""
    fed = tiny_logistic()
    rng = _rng(seed, f"tiny{B}")
    beta = float(fed.beta)
    tau = 10
    eta = rng.uniform(0.5, 1.5, B) / beta
    w_init = np.outer(rng.uniform(0.2, 1.0, B), np.array([1.0, -1.0]) / np.sqrt(2))
    res = feddelavg(fed, eta=eta, tau=tau, Delta=0, alpha=1.0, K=1, w_init=w_init, output_set="paper", record=True)
    return _finish("tiny-logistic", seed, fed, res, tau=tau, K=1, eta=eta, alpha=np.ones(B), Delta=np.zeros(B, np.int64),
                   beta=np.full(B, beta), logistic=True)


def _families(quick: bool, seed: int, *, any_eta: bool = False, logistic: bool = True) -> list[Runs]:
    eb = 2.8 if any_eta else 1.99
    if quick:
        out = [quadratic_runs(seed, tau=t, K=4, B=12, eb_max=eb) for t in (1, 3, 6)]
    else:
        out = [quadratic_runs(seed, tau=t, K=6, B=48, eb_max=eb) for t in (1, 2, 3, 5, 8)]
        out.append(quadratic_runs(seed, tau=4, K=5, B=48, eb_max=eb, M=2, d=5, kappa=20.0, heterogeneity=3.0))
    if logistic:
        out += [logistic_runs(seed, tau=4, K=3, B=3)] if quick else [logistic_runs(seed, tau=t, K=4, B=6) for t in (3, 6)]
    return out


def _delta0_families(quick: bool, seed: int) -> list[Runs]:
    """Delta = 0 (the pre-sync convention), heterogeneous Hessians, half the configurations FedAvg (alpha = 1)."""
    B_ = 48 if quick else 192
    return [quadratic_runs(seed, tau=t, K=4, B=B_, M=3, d=2, kappa=5.0, Delta0=True, alpha_one=0.5) for t in (3, 4)]


_ROUNDOFF = 1e-12


def _worst(runs: Runs, value, bound, mask=None, **extra):
    """One Sample per configuration: the entry of largest value/bound over the trailing axes.

    Entries whose value is at round-off level (<= 1e-12, the checks' atol) are skipped, and so is a
    configuration with no other entry (e.g. tau = 1, Delta = 0, alpha = 1, where both sides are 0)."""
    v = np.asarray(value, float).reshape(runs.B, -1)
    bd = np.broadcast_to(np.asarray(bound, float), np.shape(value)).reshape(runs.B, -1)
    m = np.ones_like(v, bool) if mask is None else np.broadcast_to(mask, np.shape(value)).reshape(runs.B, -1)
    m = m & (v > _ROUNDOFF)  # a value at round-off level can break no bound (atol); its ratio means nothing
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(bd > 0, v / (bd + _ROUNDOFF), np.where(v > 0, np.inf, 0.0))   # the check's ratio (atol)
    r = np.where(m, r, -np.inf)
    out = []
    for b in range(runs.B):
        if not m[b].any():
            continue
        j = int(np.argmax(r[b]))
        out.append(Sample(value=float(v[b, j]), bound=float(bd[b, j]), params=runs.params(b, entry=j, **extra),
                          seed=runs.seed, size=runs.size(b)))
    return out


def _k(K, *, start=0, stop=None):
    return np.arange(start, K + 1 if stop is None else stop)[None, :]


# ============================================================================= Lemma 3
def _lemma3_of(R: Runs, *, corrected):
    div = to_numpy(R.res.record.divergence)  # (B, K+1, M)
    kw = R.kw()
    kw.pop("beta"), kw.pop("delta")
    if corrected:
        kk = _k(R.K)
        bound = B.lemma3_corrected(k=kk[..., None], rho_i=R.rho[:, None, :], **{n: v[..., None] if np.ndim(v) else v
                                                                               for n, v in kw.items()})
        return _worst(R, div, bound)
    kk = _k(R.K, start=1)
    bound = B.lemma3(k=kk, beta=R.beta[:, None], **kw)
    return _worst(R, div[:, 1:, :].max(axis=-1), bound)


def _lemma3_samples(quick, seed, *, corrected):
    return [s for R in _families(quick, seed, any_eta=corrected) for s in _lemma3_of(R, corrected=corrected)]


def _lemma3_delta0_of(R: Runs):
    div = to_numpy(R.res.record.divergence)[:, : R.K, :]  # k = 0..K-1
    bound = B.lemma3_delta0(k=_k(R.K, stop=R.K)[..., None], K=R.K, rho_i=R.rho[:, None, :],
                            alpha=R.alpha[:, None, None],
                            eta=R.eta[:, None, None], L=R.L[:, None, None], tau=R.tau)
    return _worst(R, div, bound)


def _lemma3_delta0_samples(quick, seed):
    return [s for R in _delta0_families(quick, seed) for s in _lemma3_delta0_of(R)]


# ============================================================================= Lemma 4
def _lemma4_parts(R: Runs):
    """Values ||w_i(t) - c_k(t)||, the step bound, and the masks (non-sync t; t != k tau) for j = 1..tau."""
    lg = to_numpy(R.res.record.local_gap)  # (B, K, tau+1, M), t = k tau - Delta + j
    j = np.arange(1, R.tau + 1)[None, None, :, None]
    kk = np.arange(R.K)[None, :, None, None]
    D = R.Delta[:, None, None, None]
    t = kk * R.tau - D + j
    sync = (t % R.tau == 0) & (t >= 0) & (t <= (R.K - 1) * R.tau)
    not_ktau = t != kk * R.tau
    return lg, lg[:, :, 1:, :], lg[:, :, :-1, :], ~sync, not_ktau


def _lemma4_of(R: Runs, *, corrected):
    _, val, prev, nonsync, not_ktau = _lemma4_parts(R)
    st = B.lemma4_corrected if corrected else B.lemma4
    bound = st(eta=R.eta[:, None, None, None], beta=R.beta[:, None, None, None], dist_prev=prev,
               delta_i=R.delta_i[:, None, None, :])
    return _worst(R, val, bound, mask=nonsync if corrected else not_ktau)


def _lemma4_samples(quick, seed, *, corrected):
    fams = _families(quick, seed, any_eta=corrected) + _delta0_families(quick, seed)
    fams.append(mixture_runs(seed, tau=3, K=3, B=8 if quick else 32))
    return [s for R in fams for s in _lemma4_of(R, corrected=corrected)]


def _lemma4_no_delay_of(R: Runs, *, corrected):
    lg = to_numpy(R.res.record.local_gap)  # t = k tau + j, j = 0..tau
    s = np.arange(R.tau + 1)[None, None, :, None]
    mask = np.ones(lg.shape, bool)
    if corrected:
        mask = (R.alpha == 1.0)[:, None, None, None] & (s <= R.tau - 1)
        alpha = np.ones_like(R.alpha)
    else:
        alpha = R.alpha
    kw = dict(eta=R.eta[:, None, None, None], beta=R.beta[:, None, None, None], delta_i=R.delta_i[:, None, None, :],
              tau=R.tau, alpha=alpha[:, None, None, None])
    if corrected:
        s_eval = np.minimum(s, R.tau - 1)  # masked entries are outside the statement; evaluate inside it
        bound = (B.lemma4_no_delay_corrected(s=s_eval, **kw))
    else:
        bound = B.lemma4_no_delay(s=s, **kw)
    return _worst(R, lg, bound, mask=mask)


def _lemma4_no_delay_samples(quick, seed, *, corrected):
    return [s for R in _delta0_families(quick, seed) for s in _lemma4_no_delay_of(R, corrected=corrected)]


# ============================================================================= Lemma 5, Proposition 1
def _lemma5_of(R: Runs, *, corrected):
    st = B.lemma5_corrected if corrected else B.lemma5
    return _worst(R, to_numpy(R.res.record.lemma5), st(k=_k(R.K, stop=R.K), **R.kw()))


def _lemma5_samples(quick, seed, *, corrected):
    return [s for R in _families(quick, seed, any_eta=corrected) for s in _lemma5_of(R, corrected=corrected)]


def _lemma5_48_samples(quick, seed):
    rng = _rng(seed, "lemma5-48")
    n = 40 if quick else 400
    p = _random_params(rng, n)
    p["delta"] = np.maximum(p["delta"], 1e-3 * p["L"])
    a = rng.uniform(1e-3, 1, n)
    k = rng.integers(0, 30, n)
    v = B.lemma5_intermediate(k=k, alpha=a, **{**p, "eta": np.minimum(p["eta"], 1.99 / p["beta"])})
    bnd = B.lemma5(k=k, alpha=a, **{**p, "eta": np.minimum(p["eta"], 1.99 / p["beta"])})
    return [Sample(float(v[i]), float(bnd[i]), _pdict(p, i, alpha=a[i], k=int(k[i])), seed, 0.0) for i in range(n)]


def _prop1_of(R: Runs, *, corrected, loss):
    if loss:
        st = B.prop1_loss_corrected if corrected else B.prop1_loss
        value = to_numpy(R.res.record.prop1_loss)
    else:
        st = B.prop1_corrected if corrected else B.prop1
        value = to_numpy(R.res.record.prop1)
    return _worst(R, value, st(k=_k(R.K, stop=R.K), **R.kw(loss=loss)))


def _prop1_samples(quick, seed, *, corrected, loss):
    return [s for R in _families(quick, seed, any_eta=corrected) for s in _prop1_of(R, corrected=corrected, loss=loss)]


# ============================================================================= Proposition 2, Theorem 1, (20)
def _prop2_of(R: Runs, *, corrected):
    """xi = the smallest of the gaps of conditions 3-4 (the largest admissible xi); configurations where
    condition 2 fails are skipped."""
    rec = R.res.record
    Fs = np.broadcast_to(np.asarray(to_numpy(rec.F_star), float), (R.B,))
    final = to_numpy(R.res.losses)[:, R.K] - Fs  # F(w(K tau - Delta)) - F*
    ends = to_numpy(rec.c_loss)[:, :, -1] - Fs[:, None]  # F(c_k((k+1) tau - Delta)) - F*
    xi = np.minimum(final, ends.min(axis=1))
    Psi = (B.Psi_main_value if corrected else B.Psi_value)(R.K, **{n: v[:, 0] if np.ndim(v) == 2 else v
                                                                   for n, v in R.kw(loss=True).items()})
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):   # inf or nan: condition 2 is not met
        ok = (xi > 0) & (R.K * R.tau * R.eta * R.phi - R.L_loss * Psi / np.where(xi > 0, xi, 1.0) ** 2 > 0)
    if not ok.any():
        return []
    st = B.prop2_corrected if corrected else B.prop2
    idx = np.flatnonzero(ok)
    kw = {n: (v[idx, 0] if np.ndim(v) == 2 else v) for n, v in R.kw(loss=True).items()}
    bound = st(K=R.K, phi=R.phi[idx], xi=xi[idx], Gamma_min=xi[idx], **kw)
    return [Sample(float(final[b]), float(bound[j]), R.params(b, xi=float(xi[b])), R.seed, R.size(b))
            for j, b in enumerate(idx)]


def _prop2_samples(quick, seed, *, corrected):
    n = 24 if quick else 96
    kw = dict(heterogeneity=0.05, kappa=3.0, alpha_one=0.5, eb_min=0.001, eb_max=0.05, init_scale=5.0)
    fams = [quadratic_runs(seed, tau=t, K=K, B=n, **kw) for t, K in ((2, 3), (3, 2))]
    fams.append(quadratic_runs(seed, tau=2, K=3, B=n // 2, Delta0=True, **kw))
    if not quick:
        fams.append(quadratic_runs(seed, tau=1, K=6, B=n, **kw))
    out = [s for R in fams for s in _prop2_of(R, corrected=corrected)]
    if not out:
        raise RuntimeError("prop2 sampler: no configuration satisfied condition 2")
    return out


def _theorem1_samples(quick, seed, *, printed):
    # first (the smallest instances, so the reported counterexample): one literal Huber client, ratio tau/4
    fams = [literal_huber_runs(t) for t in (5, 10, 40)]
    fams += _families(quick, seed)
    fams += [quadratic_runs(seed, tau=t, K=1, B=8 if quick else 32, identical=True, Delta0=True, alpha_one=1.0,
                            eb_max=1.99) for t in (5, 10)]
    fams.append(tiny_logistic_runs(seed, B=4 if quick else 16))
    # clients meeting Assumptions 1-2 literally (global Lipschitz constant): heterogeneous, and identical with K = 1
    fams += [huber_runs(seed, tau=t, K=k, B=8 if quick else 32) for t, k in ((2, 6), (5, 4))]
    fams += [huber_runs(seed, tau=t, K=1, B=8 if quick else 32, identical=True) for t in (5, 10)]
    return [s for R in fams for s in _theorem1_of(R, printed=printed)]


def _theorem1_of(R: Runs, *, printed):
    st = B.theorem1 if printed else B.theorem1_corrected
    kw = {n: (v[:, 0] if np.ndim(v) == 2 else v) for n, v in R.kw(loss=True).items()}
    return _worst(R, to_numpy(R.res.gap_for("paper" if printed else "proof")), st(K=R.K, phi=R.phi, **kw))


def _asymptotic_of(R: Runs, *, converged=False):
    """``converged``: only the configurations whose run has reached its limit (the last move of the candidates
    w(k tau - Delta) is below 1e-9 of the first, or both are 0): there the run's min over k = 1..K is the
    K -> infinity value of (20), and L, delta and phi are those of the whole infinite run."""
    gap = to_numpy(R.res.gap_for("proof"))
    mask = None
    if converged:   # per configuration: a batch of searched instances keeps the converged ones
        w = to_numpy(R.res.w_periods)
        step = np.sqrt((np.diff(w, axis=-2) ** 2).sum(-1))       # (B, K)
        mask = np.broadcast_to((step[:, -1] <= 1e-9 * step[:, 0]).reshape((R.B,) + (1,) * (gap.ndim - 1)), gap.shape)
    kw = {n: (v[:, 0] if np.ndim(v) == 2 else v) for n, v in R.kw().items()}
    return _worst(R, gap, B.asymptotic_gap(phi=R.phi, **kw), mask)


def _asymptotic_samples(quick, seed):
    return [s for t in (2, 5) for s in _asymptotic_of(quadratic_runs(seed, tau=t, K=30 if quick else 80,
                                                                     B=12 if quick else 48))]


# ============================================================================= steps of the proofs: (81)-(85), (106), (112)
def _ge_samples(R: Runs, lhs, rhs, mask=None, **extra):
    """``lhs >= rhs`` per configuration: the entry of largest rhs/lhs (``_worst`` on the swapped sides), returned
    with value = lhs and bound = rhs as a '>=' check reads them."""
    shape = np.broadcast_shapes(np.shape(lhs), np.shape(rhs))
    rhs, lhs = np.broadcast_to(rhs, shape), np.broadcast_to(lhs, shape)
    return [Sample(s.bound, s.value, s.params, s.seed, s.size) for s in _worst(R, rhs, lhs, mask, **extra)]


def _gaps(R: Runs):
    """Gamma_[k](t) = F(c_k(t)) - F* on the period's points (B, K, tau + 1), and the run's loss scale
    |F*| + max Gamma (F is computed to about 1e-16 of it)."""
    rec = R.res.record
    Fs = np.broadcast_to(np.asarray(to_numpy(rec.F_star), float), (R.B,))[:, None, None]
    G = np.asarray(to_numpy(rec.c_loss), float) - Fs
    return G, np.abs(Fs) + np.abs(G).max(axis=(1, 2), keepdims=True)


def _inverse_growth(G0, G1, scale):
    """1/G1 - 1/G0 = (G0 - G1)/(G0 G1), and where round-off in F cannot change it by 1e-6: the decrease G0 - G1 above
    1e-8 of the loss scale (each of G0, G1 is known to about 1e-16 of it), G1 > 0."""
    ok = (G1 > 0) & (G0 - G1 > 1e-8 * scale)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(ok, (G0 - G1) / (G0 * G1), 1.0), ok


def _gd_inverse_gap_of(R: Runs):
    G, scale = _gaps(R)
    lhs, ok = _inverse_growth(G[:, :, :-1], G[:, :, 1:], scale)
    dc = np.asarray(to_numpy(R.res.record.c_dist), float)[:, :, :-1]
    rhs = B.gd_inverse_gap(eta=R.eta[:, None, None], beta=R.beta[:, None, None], dist_c=np.where(dc > 0, dc, 1.0))
    return _ge_samples(R, lhs, rhs, ok & (dc > 0))


def _gd_distance_max_of(R: Runs):
    rec = R.res.record
    dc = np.asarray(to_numpy(rec.c_dist), float)
    om = np.asarray(to_numpy(rec.omega), float)
    fin = np.isfinite(om) & (om > 0)
    bound = B.gd_distance_max(omega=np.where(fin, om, 1.0)[:, None, None], eta=R.eta[:, None, None],
                              beta=R.beta[:, None, None])
    return _worst(R, dc ** 2, bound, np.broadcast_to(fin[:, None, None], dc.shape))


def _gd_period_gap_of(R: Runs):
    G, scale = _gaps(R)
    lhs, ok = _inverse_growth(G[:, :, 0], G[:, :, -1], scale[:, :, 0])
    fin = np.isfinite(R.phi) & (R.phi > 0)
    rhs = B.gd_period_gap(eta=R.eta[:, None], beta=R.beta[:, None], tau=R.tau, phi=np.where(fin, R.phi, 1.0)[:, None])
    return _ge_samples(R, lhs, rhs, ok & fin[:, None])


def _xi_star_of(R: Runs):
    rec = R.res.record
    Fs = np.broadcast_to(np.asarray(to_numpy(rec.F_star), float), (R.B,))
    final = to_numpy(R.res.losses)[:, R.K] - Fs
    ends = np.asarray(to_numpy(rec.c_loss), float)[:, :, -1] - Fs[:, None]
    best = np.minimum(final, ends.min(axis=1))
    fin = np.isfinite(R.phi) & (R.phi > 0)
    kw = {n: (v[:, 0] if np.ndim(v) == 2 else v) for n, v in R.kw(loss=True).items()}
    bound = B.xi_star_bound(K=R.K, phi=np.where(fin, R.phi, 1.0), **kw)
    return _worst(R, best, bound, fin)


def _recursion_of(R: Runs, *, pre):
    """(66)-(67) (``pre``: j < Delta) or (68)-(71) (j = Delta..tau) on the run's sum_i rho_i ||w_i - c_k|| at
    l = k tau - Delta + j, with the run's L and delta."""
    lg = np.asarray(to_numpy(R.res.record.local_gap), float)            # (B, K, tau+1, M)
    S = (lg * R.rho[:, None, None, :]).sum(-1)                          # (B, K, tau+1)
    jj = np.arange(R.tau + 1)[None, None, :]
    D = R.Delta[:, None, None]
    mask = (jj < D) if pre else (jj >= D)
    st = B.prop1_pre_sync if pre else B.prop1_post_sync
    kw = {n: (v[:, :, None] if np.ndim(v) == 2 else v) for n, v in R.kw().items()}
    # masked-out entries get a j (and, before a sync that does not exist at Delta = 0, a Delta) inside the statement
    jx = np.where(mask, jj, 0 if pre else D)
    kw["Delta"] = np.where(mask, D, np.maximum(D, 1)) if pre else D
    bound = st(k=np.arange(R.K)[None, :, None], j=np.broadcast_to(jx, S.shape), **kw)
    return _worst(R, S, bound, mask)


def _proof_step_samples(of, quick, seed, *, any_eta=False):
    return [s for R in _families(quick, seed, any_eta=any_eta) for s in of(R)]


# ============================================================================= Proposition 1's recursion: (63)-(65), (72)-(75)
def _mean_gap(R: Runs):
    """G_k(l) = sum_i rho_i ||w_i(l) - c_k(l)|| at l = k tau - Delta + j, j = 0..tau: (B, K, tau + 1)."""
    lg = np.asarray(to_numpy(R.res.record.local_gap), float)
    return (lg * R.rho[:, None, None, :]).sum(-1)


def _next_sync(R: Runs):
    """Where l = k tau - Delta + j (j = 1..tau) is the NEXT period's sync: Delta = 0, j = tau, k + 1 <= K - 1."""
    jj = np.arange(1, R.tau + 1)[None, None, :]
    kk = np.arange(R.K)[None, :, None]
    return (R.Delta[:, None, None] == 0) & (jj == R.tau) & (kk + 1 <= R.K - 1)


def _step_of(R: Runs, *, corrected):
    """(63)-(65) on every step l = k tau - Delta + j, j = 1..tau, with alpha_l of (11): alpha at the sync k tau
    (j = Delta >= 1) and, for Delta = 0, at the next period's sync (k+1) tau (j = tau, k <= K - 2), else 0.
    ``corrected`` leaves that last step out; the run's L and delta."""
    G = _mean_gap(R)
    jj = np.arange(1, R.tau + 1)[None, None, :]
    D = R.Delta[:, None, None]
    nxt = _next_sync(R)
    a_l = np.where(((jj == D) & (D >= 1)) | nxt, R.alpha[:, None, None], 0.0)
    bound = B.prop1_step(G_prev=G[..., :-1], alpha_l=a_l, eta=R.eta[:, None, None], beta=R.beta[:, None, None],
                         L=R.L[:, None, None], delta=R.delta[:, None, None], Delta=D)
    return _worst(R, G[..., 1:], bound, ~nxt if corrected else None)


def _window_of(R: Runs, *, pre):
    """(72)-(75) (sum over l = k tau .. (k+1) tau - Delta - 1, i.e. j = Delta..tau-1) or, ``pre``, the sum over
    l = k tau - Delta .. k tau - 1 (j = 0..Delta-1), per period k = 0..K-1; configurations with an empty window
    (Delta = 0 for ``pre``, Delta = tau otherwise) have no entry."""
    G = _mean_gap(R)[..., :-1]                                          # j = 0..tau-1
    jj = np.arange(R.tau)[None, None, :]
    D = R.Delta[:, None, None]
    S = np.where((jj < D) if pre else (jj >= D), G, 0.0).sum(-1)        # (B, K)
    st = B.prop1_window_pre if pre else B.prop1_window
    kw = R.kw()
    kw["Delta"] = R.Delta[:, None]
    bound = st(k=_k(R.K, stop=R.K), **kw)
    has = (R.Delta > 0) if pre else (R.Delta < R.tau)
    return _worst(R, S, bound, np.broadcast_to(has[:, None], S.shape))


# ============================================================================= the definitions (17)-(19), (21)
# Each against the proof lines it abbreviates, computed term by term in mpmath (60 digits) from the same float
# inputs: h (18) as the sum of (57)-(58), eps^(k) (19) as the recursion (45) unrolled from eps^(0) = 0, psi (17) as
# the combination (76) of the window sums of the closed forms (67) and (69)-(71), psi(alpha, inf) (21) as the limit
# of that combination at k with (1 - alpha)^k < 1e-60.  Every term is >= 0, so a relative tolerance is scale-free.
_DPS = 60


def _def_params(p: dict) -> dict:
    """The typed constants of a definition instance: eta = eb/beta, delta = delta_frac L, Delta = round(Delta_frac
    tau), k = round(k_frac k_max)."""
    q = dict(eb=float(p["eb"]), beta=float(p["beta"]), L=float(p["L"]), delta_frac=float(p["delta_frac"]),
             tau=int(p["tau"]), Delta_frac=float(p["Delta_frac"]), alpha=float(p["alpha"]))
    for n in ("k", "n"):
        if n in p:
            q[n] = int(p[n])
    q["eta"] = q["eb"] / q["beta"]
    q["delta"] = q["delta_frac"] * q["L"]
    q["Delta"] = int(round(q["Delta_frac"] * q["tau"]))
    return q


def _mp_consts(q):
    import mpmath as mp  # noqa: PLC0415

    e, b, l_, dl = (mp.mpf(q[n]) for n in ("eta", "beta", "L", "delta"))
    return e, b, l_, dl, 1 + e * b, mp.mpf(q["alpha"])


def _h_sum(n, e, b, dl):
    """eta delta sum_{r=0}^{n-1} [(1 + eta beta)^r - 1]: the sum (57)-(58) that h(n) abbreviates."""
    import mpmath as mp  # noqa: PLC0415

    x = 1 + e * b
    return e * dl * mp.fsum(x ** r - 1 for r in range(int(n)))


def _eps_recursion(k, a, e, l_, tau, D):
    """(45) unrolled: eps^(0) = 0, eps^(k+1) = (1 - alpha) eps^(k) + 2 eta L (tau - alpha Delta)."""
    out = 0
    for _ in range(int(k)):
        out = (1 - a) * out + 2 * e * l_ * (tau - a * D)
    return out


def _psi_combination(eps, q):
    """(76): (1 - alpha) eta beta S1 + eta beta S2 + alpha eta L Delta, with S1 the sum of (67) over j = 0..Delta-1 and
    S2 the sum of (69)-(71) over j = Delta..tau-1 (j = l - k tau + Delta), given eps^(k)."""
    import mpmath as mp  # noqa: PLC0415

    e, b, l_, dl, x, a = _mp_consts(q)
    t, D = q["tau"], q["Delta"]
    S1 = mp.fsum(x ** j * eps + dl * (x ** j - 1) / b for j in range(D))
    S2 = mp.fsum((1 - a) * x ** j * eps + (1 - a) * dl * x ** (j - D) * (x ** D - 1) / b
                 + dl * (x ** (j - D) - 1) / b + a * e * D * l_ * x ** (j - D) for j in range(D, t))
    return (1 - a) * e * b * S1 + e * b * S2 + a * e * l_ * D


def _def_evaluate(p: dict, *, which: str) -> Sample:
    """One instance of a definition: the library's value against the proof lines it abbreviates (mpmath)."""
    import mpmath as mp  # noqa: PLC0415

    q = _def_params(p)
    kw = dict(eta=q["eta"], beta=q["beta"], L=q["L"], delta=q["delta"], tau=q["tau"], Delta=q["Delta"])
    with mp.workdps(_DPS):
        e, b, l_, dl, x, a = _mp_consts(q)
        if which == "h":
            lib = B.h_value(q["n"], eta=q["eta"], beta=q["beta"], delta=q["delta"])
            ref = _h_sum(q["n"], e, b, dl)
        elif which == "epsilon":
            lib = B.epsilon_value(q["k"], alpha=q["alpha"], eta=q["eta"], L=q["L"], tau=q["tau"], Delta=q["Delta"])
            ref = _eps_recursion(q["k"], a, e, l_, q["tau"], q["Delta"])
        elif which == "psi":
            lib = B.psi_value(q["k"], alpha=q["alpha"], **kw)
            ref = _psi_combination(_eps_recursion(q["k"], a, e, l_, q["tau"], q["Delta"]), q)
        else:   # psi(alpha, inf): the combination at k with (1 - alpha)^k < 1e-60, eps^(k) = sum_{j<k} of (45)'s terms
            k_ = 1 if q["alpha"] == 1 else int(mp.ceil(60 * mp.log(10) / -mp.log1p(-a)))
            share = 1 - (1 - a) ** k_   # sum_{j<k} (1 - alpha)^j = share/alpha (a geometric sum, k too large to loop)
            lib = B.psi_inf(alpha=q["alpha"], **kw)
            ref = _psi_combination(share / a * 2 * e * l_ * (q["tau"] - a * q["Delta"]), q)
            q["k_limit"] = k_
        return Sample(float(lib), float(ref), q, None, 0.0)


def _def_family(which: str):
    from ...search import Family, Integer, Real  # noqa: PLC0415

    ps = [Real("eb", 1e-8, 10.0, log=True), Real("beta", 1e-2, 1e2, log=True), Real("L", 1e-3, 1e3, log=True),
          Real("delta_frac", 0.0, 2.0), Integer("tau", 1, 60), Real("Delta_frac", 0.0, 1.0)]
    ps += [Integer("n", 0, 60)] if which == "h" else [Real("alpha", 1e-12, 1.0, log=True)]
    ps += [Integer("k", 0, 300)] if which in ("epsilon", "psi") else []
    fixed = {"alpha": 1.0} if which == "h" else {}
    what = {"h": "h(n) of (18) against eta delta sum_{r<n} [(1 + eta beta)^r - 1] ((57)-(58))",
            "epsilon": "eps^(k) of (19) against the recursion (45) unrolled from eps^(0) = 0",
            "psi": "psi(alpha, k) of (17) against the combination (76) of the window sums of (67), (69)-(71)",
            "psi_inf": "psi(alpha, inf) of (21) against the combination (76) at k with (1 - alpha)^k < 1e-60 (the "
                       "k -> infinity limit of (17))"}[which]
    return Family(ps, fixed=fixed,
                  description=f"{what}, mpmath at {_DPS} digits from the same float inputs; eta beta in [1e-8, 10] (no "
                              "step condition), beta in [1e-2, 1e2], L in [1e-3, 1e3], delta = delta_frac L in [0, 2L], "
                              "tau <= 60, Delta = round(Delta_frac tau), alpha in [1e-12, 1]; every term is >= 0, so "
                              "the tolerance is relative to the reference alone")


def _def_samples(quick, seed, *, which):
    """Random instances of the definition's family (a fifth with alpha = 1, a fifth with Delta = tau)."""
    rng = _rng(seed, f"definition-{which}")
    n = 12 if quick else 120
    out = []
    for _ in range(n):
        p = dict(eb=float(np.exp(rng.uniform(np.log(1e-8), np.log(10.0)))), beta=float(10 ** rng.uniform(-2, 2)),
                 L=float(10 ** rng.uniform(-3, 3)), delta_frac=float(rng.uniform(0, 2)), tau=int(rng.integers(1, 61)),
                 Delta_frac=float(1.0 if rng.uniform() < 0.2 else rng.uniform()), n=int(rng.integers(0, 61)),
                 alpha=float(1.0 if rng.uniform() < 0.2 else 10 ** rng.uniform(-12, 0)), k=int(rng.integers(0, 301)))
        if which == "h":
            p["alpha"] = 1.0
        out.append(_def_evaluate(p, which=which))
    return [Sample(s.value, s.bound, s.params, seed, s.size) for s in out]
