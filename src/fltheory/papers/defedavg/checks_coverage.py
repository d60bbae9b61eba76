r"""Checks of the DeFedAvg results that had none (issue 22, item 3), registered beside those of ``checks.py``.

What each check claims, and how it is checked (every value exact unless said otherwise):

* ``fedavg_update`` / ``fedavg_update_corrected`` -- (3), FedAvg's server step as printed,
  :math:`w^{t+1}=w^t-\frac\eta n\sum_{i\in\mathcal I_t}(w_i^{t,K}-w^t)`, is said to be vanilla FedAvg at
  :math:`\eta=1`.  Typed line by line on noise-free quadratics (draws with replacement) against the average
  of the local models: the printed sign moves away from the local models (one client, :math:`F=w^2/2`,
  ``K = 1``, :math:`\bar\eta=0.5`, :math:`\eta=1`: :math:`w\leftarrow1.5w`, it diverges); with the sign of
  (8) it is vanilla FedAvg at :math:`\eta=1` and the package's :func:`.algorithm.fedavg_loop` for any
  :math:`\eta`;
* ``aggregate_weights`` / ``aggregate_7_as_set`` -- (7) normalises by :math:`|\mathcal I_t|`, (8) and
  Algorithm 1 by ``n``.  The weights every client gets in the schedules (delay oracle and event-driven
  Algorithm 1) equal (7) with :math:`\mathcal I_t` the multiset of ``n`` draws (multiplicity counted, so
  :math:`|\mathcal I_t|=n`); read with :math:`\mathcal I_t` the *set* of Algorithm 1's line 4 (each
  distinct client once, :math:`|\mathcal I_t|` distinct clients) (7) is not (8) as soon as a client is
  drawn twice while another is drawn once;
* ``lemma2_as_printed`` / ``lemma2_corrected`` -- Lemma 2 (19) states no condition on ``n`` but its proof's
  (26)(b) needs :math:`n(N+n-1)/N\le2n`, i.e. :math:`n\le N+1`; all :math:`N^n` draws enumerated;
* ``lemma2_rounds`` -- (20), the noise summed over the stale rounds of DeFedAvg-nIID, from the core's
  exact moments over the draws, the delays and the noise on clients whose gradients carry only the noise
  (Hessian :math:`10^{-12}I`, :math:`w^0=w^*`, so :math:`w^t-w^{t-l}` is
  :math:`-\frac{\eta\bar\eta}n\sum_s\sum_{j\in\mathcal I_s}\sum_k(g-G)` up to a relative :math:`10^{-11}`);
* ``lemma7`` / ``lemma7_rounds`` -- Lemma 7 (43)-(44) the same way on DeFedAvg-IID schedules: the
  event-driven first ``n`` arrivals with client speeds :math:`\rho_i\sim U[1,5]` (a fast client may send
  two updates in one round) and the delay oracles, for every update applied, with :math:`\lambda` the
  schedule's largest staleness (at least 1); equality is expected (noise of variance exactly
  :math:`\sigma^2`);
* ``lemma5_step36`` / ``lemma5_step36_corrected`` -- the proof of Lemma 5, (36)(b), keeps a factor
  :math:`1/n^2` that (a) cancels when the sum over :math:`\mathcal I_s` becomes ``n`` times an average.
  Checked at every round of constant-delay IID instances (``checks._lemma_terms``) and on a nearly noise-free
  instance that is both algorithms at once (``N = n = 2`` identical clients, :math:`\sigma^2=10^{-12}`, every
  update one round stale), where the truth is :math:`n^2/2` times the printed right-hand side;
* ``descent_lemma_37`` -- (37) on the non-IID family with an isotropic Hessian, where the descent lemma is an
  equality and every term is exact (``checks._niid_lemma_terms``); ``fact2`` -- Fact 2 on random vectors;
* ``theorem1_step`` / ``theorem1_step_corrected`` -- the proof of Theorem 1 after (38) says
  :math:`\eta\bar\eta\le1/(2LK)\iff\frac1{2K}\eta\bar\eta-L\eta^2\bar\eta^2\ge\frac1{4K}\eta\bar\eta`; the right
  side means :math:`\eta\bar\eta\le1/(4LK)`.  Both sides at the boundary, ``K = 1..60``;
* ``theorem1_events`` / ``theorem1_corrected_events`` -- Theorem 1 (12) (and its exact constant 5) on the
  event-driven schedules of Algorithm 1 (:func:`.events.niid_events`, both send-buffer policies): exact over
  the noise for each timing seed (speeds and draws), averaged over ``B`` timing seeds (a Monte Carlo
  average over the draws, which the bound's expectation includes); :math:`\lambda` is the largest
  staleness of any applied update or virtual anchor, :math:`G^2` the exact supremum over every seed,
  round and local step (raised until the run stays inside Assumption 6, as ``checks._niid_instance``
  does), :math:`\nu^2` exact;
* ``linear_speedup_niid`` -- measured: DeFedAvg-nIID at Theorem 1's rates (set for the horizon of the
  exact-constant bound), exact rounds to :math:`\epsilon` for ``n = 2, 4, 8`` of ``N = 8``, fitted log-log
  slope against ``-1`` within 0.1;
* ``rate_lambda1`` -- the text after Theorem 2, ":math:`\lambda=1` gives :math:`O(1/\sqrt{nKT}+n/T)`",
  with the corrected Theorem 2's constants, on IID instances with delays at most one round;
* ``theorem1_rate`` -- the text after Theorem 1: (12) is :math:`O(1/\sqrt{nT}+1/(KT))` (not
  :math:`1/\sqrt{nKT}`: the :math:`G^2K` under the root cancels the ``K``), as the explicit inequality
  :math:`(12)\le16\sqrt{\Phi_0(16\sigma^2L+8LG^2)/(nT)}+\max(2L,32L\nu^2/G^2)/(KT)` (tight at ``K = 1``,
  :math:`\nu=0`).
"""
from __future__ import annotations

import functools
import itertools
import math
from fractions import Fraction

import numpy as np

from ...delayed import RandomParticipation, client_draws
from ...problems import random_quadratic_federation
from ...schedules import compute_times, first_n_arrivals
from ...search import Choice, Family, Integer, Real
from ...verify import Check, Sample, register
from . import bounds as B
from . import checks as C
from . import exact as X
from .algorithm import fedavg_loop
from .events import POLICIES, iid_oracle, niid_events, niid_oracle

PAPER = "defedavg"
_rng, _logu = C._rng, C._logu
TINY = 1e-12         # the Hessian of the noise-only clients of the Lemma 2 and 7 checks


def _reg(name, statement, sampler, **kw):
    kw.setdefault("atol", 1e-12)
    if name in SEARCH:
        fam, ev, budget = SEARCH[name]
        kw.update(family=fam, evaluate=ev, search_budget=budget)
    return register(Check(f"{PAPER}.{name}", paper=PAPER, statement=statement, sampler=sampler, **kw))


# ============================================================================= (3): FedAvg's server step
def _local(H, xo, x, i, K, eta_bar):
    y = x.copy()
    for _ in range(K):
        y = y - eta_bar * H[i] @ (y - xo[i])                 # (2), noise-free
    return y


def _typed_fedavg(H, xo, draws, x0, *, K, eta, eta_bar, rule):
    """(2)-(3) typed line by line on noise-free quadratics, ``draws`` (T, n) with multiplicity: ``rule`` is
    ``"printed"`` (3) as printed, ``"fixed"`` (3) with the sign of (8), or ``"vanilla"`` (the average of the
    local models). Returns w^T."""
    x = np.asarray(x0, float).copy()
    n = draws.shape[1]
    for row in draws:
        local = [_local(H, xo, x, int(i), K, eta_bar) for i in row]
        diff = sum(y - x for y in local)                       # sum_{i in I_t} (w_i^{t,K} - w^t)
        x = {"printed": x - eta / n * diff, "fixed": x + eta / n * diff, "vanilla": sum(local) / n}[rule]
    return x


COUNTEREXAMPLE_3 = dict(N=1, n=1, d=1, K=1, eta=1.0, eta_bar=0.5, T=10, H=[[[1.0]]], x_opt=[[0.0]], w0=[1.0])


def _fedavg_instances(quick, seed):
    rng = _rng(seed, "fedavg-3")
    for _ in range(3 if quick else 10):
        N, d = int(rng.integers(1, 5)), int(rng.integers(1, 4))
        fed = random_quadratic_federation(M=N, d=d, seed=int(rng.integers(0, 2**31)), sigma2=0.0)
        H, xo = np.asarray(fed.H), np.asarray(fed.x_opt)
        L = float(np.linalg.eigvalsh(H).max())
        p = dict(N=N, n=int(rng.integers(1, 5)), d=d, K=int(rng.integers(1, 4)), eta=float(rng.uniform(0.3, 1.5)),
                 eta_bar=float(rng.uniform(0.05, 0.9)) / L, T=int(rng.integers(3, 12)), H=H.tolist(),
                 x_opt=xo.tolist(), w0=rng.normal(size=d).tolist(), draw_seed=int(rng.integers(0, 1000)))
        yield p, fed


def _fedavg_printed_sample(p, size):
    H, xo = np.asarray(p["H"], float), np.asarray(p["x_opt"], float)
    draws = (client_draws(seeds=[p["draw_seed"]], T=p["T"], N=p["N"], n=p["n"])[0] if "draw_seed" in p
             else np.zeros((p["T"], p["n"]), dtype=int))
    kw = dict(K=p["K"], eta=1.0, eta_bar=p["eta_bar"])
    printed = _typed_fedavg(H, xo, draws, p["w0"], rule="printed", **kw)
    vanilla = _typed_fedavg(H, xo, draws, p["w0"], rule="vanilla", **kw)
    one = _typed_fedavg(H, xo, draws[:1], p["w0"], rule="printed", **kw)
    return Sample(float(np.linalg.norm(printed)), float(np.linalg.norm(vanilla)),
                  {**p, "eta": 1.0, "w1_printed": one.tolist(), "wT_printed": printed.tolist(),
                   "wT_vanilla": vanilla.tolist()}, seed=p.get("draw_seed"), size=size)


def _fedavg_printed_samples(quick, seed):
    """||w^T|| of (3) as printed at eta = 1 against ||w^T|| of vanilla FedAvg (the average of the local models)."""
    out = [_fedavg_printed_sample(p, float(p["N"] * p["d"] * p["T"])) for p, _ in _fedavg_instances(quick, seed)]
    out.append(_fedavg_printed_sample(dict(COUNTEREXAMPLE_3), 0.0))
    return out


def _fedavg_fixed_samples(quick, seed):
    """(3) with the sign of (8): at eta = 1 vanilla FedAvg, at any eta the package's fedavg_loop (noise-free)."""
    out = []
    for p, fed in _fedavg_instances(quick, seed):
        H, xo = np.asarray(p["H"]), np.asarray(p["x_opt"])
        draws = client_draws(seeds=[p["draw_seed"]], T=p["T"], N=p["N"], n=p["n"])[0]
        kw = dict(K=p["K"], eta_bar=p["eta_bar"])
        err1 = np.abs(_typed_fedavg(H, xo, draws, p["w0"], eta=1.0, rule="fixed", **kw)
                      - _typed_fedavg(H, xo, draws, p["w0"], eta=1.0, rule="vanilla", **kw)).max()
        ref = fedavg_loop(fed, n=p["n"], T=p["T"], x0=np.asarray(p["w0"]), seeds=[p["draw_seed"]], eta=p["eta"], **kw)
        err2 = np.abs(_typed_fedavg(H, xo, draws, p["w0"], eta=p["eta"], rule="fixed", **kw) - ref[-1, 0]).max()
        out.append(Sample(float(max(err1, err2)), 0.0, p, seed=p["draw_seed"]))
    return out


# ============================================================================= (7) against (8): the weights
def _weights_8(draws, N):
    """(8) and (7) with I_t the multiset of the n draws: client i gets m_i / n (T, N)."""
    n = draws.shape[-1]
    return np.stack([np.bincount(row, minlength=N) for row in draws]) / n


def _weights_7_set(draws, N):
    """(7) with I_t the set of distinct drawn clients: 1/|I_t| to each (T, N)."""
    out = np.zeros((draws.shape[0], N))
    for t, row in enumerate(draws):
        s = sorted(set(row.tolist()))
        out[t, s] = 1.0 / len(s)
    return out


def _fractions(w) -> str:
    """Weights as exact small fractions, for the findings table: ``(2/3, 1/3)``."""
    return "(" + ", ".join(str(Fraction(float(x)).limit_denominator(1000)) for x in w) + ")"


def _schedule_weights(s, b):
    """The weight every client gets at every step of timing seed ``b`` of a schedule (T, N)."""
    out = np.zeros((s.T, s.N))
    t, u = np.nonzero(s.mask[b])
    np.add.at(out, (t, s.client[b][t, u]), s.weight[b][t, u])
    return out


COUNTEREXAMPLE_7 = dict(N=2, n=3, draws=[0, 0, 1])      # client 0 drawn twice, client 1 once


def _aggregate_samples(quick, seed, *, as_set):
    rng = _rng(seed, f"aggregate-{as_set}")
    out = []
    if as_set:
        c = COUNTEREXAMPLE_7
        draws = np.array([c["draws"]])
        w7, w8 = _weights_7_set(draws, c["N"])[0], _weights_8(draws, c["N"])[0]
        out.append(Sample(float(np.abs(w7 - w8).sum()), 0.0, {**c, "weights_7_set": _fractions(w7),
                                                              "weights_8": _fractions(w8)}, seed=None, size=0.0))
    for _ in range(4 if quick else 12):
        N, T = int(rng.integers(2, 6)), int(rng.integers(5, 30))
        n = int(rng.integers(3 if as_set else 1, 6))
        if not as_set:
            n = min(n, N)                                       # the event-driven server draws n <= N
        seeds = [int(rng.integers(0, 2**31))]
        draws = client_draws(seeds=seeds, T=T, N=N, n=n)[0]
        w8 = _weights_8(draws, N)
        p = dict(N=N, n=n, T=T, seeds=seeds)
        if as_set:
            w7 = _weights_7_set(draws, N)
            gap = np.abs(w7 - w8).sum(axis=1)
            t = int(np.argmax(gap))
            out.append(Sample(float(gap[t]), 0.0, {**p, "round": t, "draws": sorted(draws[t].tolist()),
                                                   "weights_7_set": w7[t].tolist(), "weights_8": w8[t].tolist()},
                              seed=seeds[0], size=float(N * n)))
            continue
        policy = str(rng.choice(POLICIES))
        ev = niid_events(N=N, n=n, T=T, K=int(rng.integers(1, 3)), compute=compute_times(seeds=seeds, N=N),
                         t_dl=0.1, t_ul=0.1, seeds=seeds, policy=policy)
        orc = niid_oracle(N=N, n=n, T=T, seeds=seeds, delay="uniform", lam=2)
        err = max(np.abs(_schedule_weights(s, 0) - w8).max() for s in (ev, orc))
        out.append(Sample(float(err), 0.0, {**p, "policy": policy}, seed=seeds[0]))
    return out


# ============================================================================= Lemma 2 without n <= N, and (20)
def _lemma2_any_n_samples(quick, seed, *, statement):
    rng = _rng(seed, f"lemma2-{statement.name}")
    out = []
    for N, n in itertools.product(range(1, 5), repeat=2):
        kw = {k: v for k, v in dict(n=n, N=N, K=1, sigma2=1.0).items() if k in statement.parameters}
        if not statement(mask=True, **kw).holds:
            continue                                            # outside the statement's condition (n <= N + 1)
        K, s2 = int(rng.integers(1, 20)), _logu(rng, 1e-3, 1e3)
        value = C._lemma2_enumerated(N, n) * K * s2
        kw = {k: v for k, v in dict(n=n, N=N, K=K, sigma2=s2).items() if k in statement.parameters}
        out.append(Sample(value, float(statement(**kw)), dict(N=N, n=n, K=K, sigma2=s2),
                          seed=seed, size=float(N * n)))
    return out


def _noise_scale(m_lag, eta, eta_bar, n):
    return np.asarray(m_lag) * (n / (eta * eta_bar)) ** 2


def _lemma2_rounds_samples(quick, seed):
    """(20): (n / (eta eta_bar))^2 E||w^t - w^{t-l}||^2 on noise-only clients, exact over draws, delays, noise,
    for every round t and every l <= lam; the bound 2 n K lam sigma^2."""
    rng = _rng(seed, "lemma2-rounds")
    out = []
    for _ in range(4 if quick else 12):
        N = int(rng.integers(1, 6))
        n, d, K, lam = int(rng.integers(1, N + 1)), int(rng.integers(1, 3)), int(rng.integers(1, 4)), int(rng.integers(1, 4))
        s2, T = _logu(rng, 1e-2, 1e2), int(rng.integers(lam + 2, 12))
        eta, eta_bar = float(rng.uniform(0.2, 2.0)), float(rng.uniform(0.01, 0.5))
        fed = X.niid_federation(a=[TINY] * d, b=np.zeros((N, d)), sigma2=s2)
        m = X.niid_moments(fed, n=n, T=T, K=K, eta=eta, eta_bar=eta_bar, x0=np.zeros(d), lam=lam, record_lags=True)
        lag = _noise_scale(m.lag_msd, eta, eta_bar, n)         # (T+1, R)
        ls = np.arange(1, lam + 1)
        vals = np.array([[lag[t, l] if t >= l else 0.0 for l in ls] for t in range(T + 1)])
        t, j = np.unravel_index(int(np.argmax(vals)), vals.shape)
        bound = float(B.lemma2_rounds(n=n, N=N, K=K, lam=lam, sigma2=s2))
        out.append(Sample(float(vals[t, j]), bound, dict(N=N, n=n, d=d, K=K, lam=lam, sigma2=s2, T=T, eta=eta,
                                                         eta_bar=eta_bar, round=int(t), l=int(ls[j])),
                          seed=seed, size=float(N * n)))
    return out


# ============================================================================= Lemma 7 on DeFedAvg-IID schedules
def _lemma7_params(rng) -> dict:
    N = int(rng.integers(1, 6))
    return dict(N=N, n=int(rng.integers(1, N + 1)), d=int(rng.integers(1, 3)), K=int(rng.integers(1, 4)),
                T=int(rng.integers(6, 30)), sigma2=_logu(rng, 1e-2, 1e2), eta=float(rng.uniform(0.2, 2.0)),
                eta_bar=float(rng.uniform(0.01, 0.5)), schedule=str(rng.choice(["events", "constant", "uniform", "cyclic"])),
                lam_oracle=int(rng.integers(1, 4)), t_dl=float(rng.uniform(0, 0.5)), t_ul=float(rng.uniform(0, 0.5)),
                seed=int(rng.integers(0, 2**31)))


def _lemma7_sample(p, *, rounds):
    """(43): (n/(eta eta_bar))^2 E||w^{t+1} - w^t||^2 against n K sigma^2 at every round; (44): the same with
    E||w^t - w^{tau}||^2 for every update applied at t (lag t - tau), against n K lam sigma^2, lam the schedule's
    largest staleness (at least 1).  Noise-only clients (Hessian 1e-12 I, w0 = w*); the worst round or update."""
    N, n, d, K, T, s2, eta, eta_bar = (p[k] for k in ("N", "n", "d", "K", "T", "sigma2", "eta", "eta_bar"))
    if p["schedule"] == "events":
        sched = first_n_arrivals(N=N, n=n, T=T, K=K, compute=compute_times(seeds=[p["seed"]], N=N), t_dl=p["t_dl"],
                                 t_ul=p["t_ul"])
    else:
        sched = iid_oracle(N=N, n=n, T=T, seeds=[p["seed"]], delay=p["schedule"], lam=p["lam_oracle"])
    lam = max(1, int(sched.max_staleness[0]))
    fed = X.iid_federation(a=[TINY] * d, N=N, sigma2=s2)
    m = X.moments(fed, sched, K=K, eta=eta, eta_bar=eta_bar, x0=np.zeros(d), record_lags=True)
    lag = _noise_scale(m.lag_msd, eta, eta_bar, n)[:, 0]     # (T+1, R)
    if rounds:
        st = sched.staleness[0]
        t, u = np.nonzero(sched.mask[0] & (st > 0))
        vals = lag[t, st[t, u]] if t.size else np.zeros(1)
        k = int(np.argmax(vals))
        bound = float(B.lemma7_rounds(n=n, K=K, lam=lam, sigma2=s2))
        where = dict(round=int(t[k]), l=int(st[t[k], u[k]])) if t.size else {}
    else:       # w^{t+1} - w^t is fresh noise, independent of w^t: without a lag-1 record, the second moments
        vals = lag[1:, 1] if lag.shape[1] > 1 else _noise_scale(np.diff(np.asarray(m.mse)[:, 0]), eta, eta_bar, n)
        k = int(np.argmax(vals))
        bound, where = float(B.lemma7(n=n, K=K, sigma2=s2)), dict(round=k)
    return Sample(float(vals[k]), bound, {**p, "lam": lam, **where}, seed=p["seed"], size=float(N * n))


def _lemma7_samples(quick, seed, *, rounds):
    rng = _rng(seed, f"lemma7-{rounds}")
    return [_lemma7_sample(_lemma7_params(rng), rounds=rounds) for _ in range(4 if quick else 12)]


# ============================================================================= (36)(b) of Lemma 5's proof
COUNTEREXAMPLE_36 = dict(a=[1.0], N=2, n=2, K=1, lam=1, T=8, eta=1.0, eta_bar=0.05, w0=[1.0], sigma2=1e-12)


def _step36_deterministic(p):
    """Both sides of (36) at every round of a nearly noise-free instance (sigma^2 = 1e-12) with N = n identical
    clients and every update ``lam`` rounds stale (IID oracle; without noise and with identical clients it is also
    Algorithm 1: every drawn client's update is the same): stale_sq and Y_sum with
    Y^s = E||(1/n) sum_{I_s} sum_k G^{s,k}||^2 (its noise part is below 1e-12 relative, and left out)."""
    a = np.asarray(p["a"], float)
    fed = X.iid_federation(a=a, N=p["N"], sigma2=p["sigma2"])
    sched = iid_oracle(N=p["N"], n=p["n"], T=p["T"], delay="constant", lam=p["lam"])
    m = X.moments(fed, sched, K=p["K"], eta=p["eta"], eta_bar=p["eta_bar"], x0=np.asarray(p["w0"]), record_cov=True,
                  record_lags=True)
    T, lam = p["T"], p["lam"]
    mean, cov = np.asarray(m.mean)[:, 0], np.asarray(m.cov)[:, 0]
    ew2 = np.einsum("tii->ti", cov) + mean**2
    q = 1 - p["eta_bar"] * a
    S_K = (1 - q ** p["K"]) / (p["eta_bar"] * a)
    tau = np.maximum(0, np.arange(T) - lam)
    Y = (a * a * S_K**2 * ew2[tau]).sum(axis=1)
    lag = np.asarray(m.lag_msd)[:, 0]
    stale = lag[np.arange(T), np.arange(T) - tau]
    Y_sum = np.array([Y[max(0, t - lam):t].sum() for t in range(T)])
    return stale, Y_sum


def _step36_samples(quick, seed, *, statement):
    rng = _rng(seed, f"step36-{statement.name}")
    out = []
    for _ in range(3 if quick else 10):
        p = C._iid_params(rng, delay="constant", rates="any")
        terms = C._lemma_terms(p)
        c = terms["c"]
        value, y_sum, size = terms["stale_sq"], terms["Y_sum"], float(p["N"] * len(p["a"]) + p["T"])
        kw = dict(K=c["K"], lam=c["lam"], eta=c["eta"], eta_bar=c["eta_bar"], sigma2=c["sigma2"], n=c["n"])
        out.append(_worst_round(statement, value, y_sum, kw, p, size))
    d = dict(COUNTEREXAMPLE_36)
    stale, y_sum = _step36_deterministic(d)
    kw = dict(K=d["K"], lam=d["lam"], eta=d["eta"], eta_bar=d["eta_bar"], sigma2=d["sigma2"], n=d["n"])
    out.append(_worst_round(statement, stale, y_sum, kw, d, 0.0))
    return out


def _worst_round(statement, value, y_sum, kw, p, size):
    bound = np.array([float(statement(Y_sum=float(y), **kw)) for y in y_sum])
    ratio = np.where(bound > 0, value / np.where(bound > 0, bound, 1), np.where(value > 1e-300, np.inf, 0))
    t = int(np.argmax(ratio))
    return Sample(float(value[t]), float(bound[t]), {**p, "round": t}, seed=p.get("seed"), size=size)


# ============================================================================= (37) and Fact 2
def _descent37_samples(quick, seed):
    """(37), the descent lemma rewritten with g_nIID: E F(w^{t+1}) - E F(w^t) against
    -K eta eta_bar E||grad F||^2 + eta E<grad F, eta_bar K grad F - g> + L eta^2/2 E||g||^2 at every round of the
    non-IID family with an isotropic Hessian L I, where the descent lemma is an equality (largest error)."""
    rng = _rng(seed, "descent37")
    out = []
    for _ in range(3 if quick else 8):
        p = C._niid_params(rng, rates="prescribed" if rng.random() < 0.3 else "any")
        p["a"] = [p["a"][0]] * len(p["a"])
        terms = C._niid_lemma_terms(p)
        c = terms["c"]
        rhs = (-c["K"] * c["eta"] * c["eta_bar"] * terms["grad_sq"] + c["eta"] * terms["inner"]
               + c["L"] * c["eta"] ** 2 / 2 * terms["g_sq"])
        err = np.abs(terms["dF"] - rhs)
        t = int(np.argmax(err / (1e-300 + np.abs(rhs))))
        out.append(Sample(float(terms["dF"][t]), float(rhs[t]), {**p, "round": t}, seed=p["seed"],
                          size=float(p["N"] * len(p["a"]) + p["T"])))
    return out


def _fact2_samples(quick, seed):
    """Fact 2, ||sum_{i<m} x_i||^2 <= m sum ||x_i||^2, on random vectors and on m equal ones (equality)."""
    rng = _rng(seed, "fact2")
    out = []
    for j in range(10 if quick else 40):
        m, d = int(rng.integers(2, 12)), int(rng.integers(1, 6))
        x = np.tile(rng.normal(size=d), (m, 1)) if j % 5 == 0 else rng.normal(size=(m, d)) * _logu(rng, 1e-3, 1e3)
        out.append(Sample(float((x.sum(axis=0) ** 2).sum()), float(m * (x * x).sum()), dict(m=m, d=d, x=x.tolist()),
                          seed=seed, size=float(m * d)))
    return out


# ============================================================================= the step after (38)
def _theorem1_step_samples(quick, seed, *, statement, root):
    """L (eta eta_bar)^2 against eta eta_bar/(4K) at the boundary eta eta_bar = 1/(root L K), K = 1..60."""
    rng = _rng(seed, f"theorem1-step-{root}")
    out = []
    for K in range(1, 61, 5 if quick else 1):
        L = _logu(rng, 1e-3, 1e3)
        x = 1 / (root * L * K) * (1 - 1e-12)
        eta_bar = float(rng.uniform(0.01, 1.0)) / (8 * L * K)
        eta = x / eta_bar
        out.append(Sample(L * x * x, float(statement(eta=eta, eta_bar=eta_bar, L=L, K=K)),
                          dict(K=K, L=L, eta=eta, eta_bar=eta_bar, product=x), seed=seed, size=float(K)))
    return out


# ============================================================================= Theorem 1 on Algorithm 1's event schedules
def _events_params(rng) -> dict:
    d = int(rng.integers(1, 3))
    L = _logu(rng, 0.2, 5.0)
    a = np.concatenate([[L], rng.uniform(0.05, 1.0, d - 1) * L])
    N = int(rng.integers(2, 6))
    return dict(a=a.tolist(), b=(rng.normal(size=(N, d)) * _logu(rng, 0.05, 2.0)).tolist(), N=N,
                n=int(rng.integers(1, N + 1)), K=int(rng.integers(1, 4)), T=int(rng.integers(20, 60)),
                sigma2=_logu(rng, 0.1, 100.0), phi_frac=_logu(rng, 1e-2, 1.0), direction=rng.normal(size=d).tolist(),
                policy=str(rng.choice(POLICIES)), t_dl=float(rng.uniform(0.0, 0.5)), t_ul=float(rng.uniform(0.0, 0.5)),
                seed=int(rng.integers(0, 2**31)), B=12)


@functools.lru_cache(maxsize=64)
def _events_instance(key):
    """Theorem 1's quantities on an event-driven Algorithm 1 instance (see the module docstring)."""
    p = dict(key)
    a, b = np.asarray(p["a"], float), np.asarray(p["b"], float)
    L, N, n, K, T, s2 = float(a.max()), p["N"], p["n"], p["K"], p["T"], p["sigma2"]
    seeds = p["seed"] + np.arange(p["B"])
    sched = niid_events(N=N, n=n, T=T, K=K, compute=compute_times(seeds=seeds, N=N), t_dl=p["t_dl"], t_ul=p["t_ul"],
                        seeds=seeds, policy=p["policy"])
    lam = max(1, int(sched.max_staleness.max()), int(sched.virtual_staleness.max()))
    fed = X.niid_federation(a=a, b=b, sigma2=s2)
    x_star = np.asarray(fed.x_star)
    v = np.asarray(p["direction"], float)
    v = v / math.sqrt(max(0.5 * float((a * v * v).sum()), 1e-300))
    G2 = 2.0 * float(((a * (b - b.mean(axis=0))) ** 2).sum(axis=1).max()) + s2
    frac = p["phi_frac"]
    for _ in range(40):
        G2 = max(G2, (32 * L / T - 2 * s2) / K * (1 + 1e-9))      # (11) at the prescribed rates: T >= 32L/(2s2 + KG2)
        S = 2 * s2 + K * G2
        phi_max = min(T * S / (32 * n * K * L * lam**2),
                      T * S**3 / (32 * n * K * L * lam**2 * (2 * s2 + G2 * K * lam) ** 2))
        Phi0 = frac * phi_max
        x0 = x_star + math.sqrt(Phi0) * v
        r = B.prescribed_rates(n=n, K=K, T=T, L=L, sigma2=s2, Phi0=Phi0, G2=G2)
        m = X.moments(fed, sched, K=K, eta=r.eta, eta_bar=r.eta_bar, x0=x0, record_cov=True)
        const = X.assumption_constants(fed, m, K=K, eta_bar=r.eta_bar)
        if const.G2 <= G2:
            break
        G2, frac = 1.5 * const.G2, frac / 2
    else:  # pragma: no cover - shrinking w0 towards x* keeps the run inside
        raise RuntimeError("could not place the event-driven instance inside Assumption 6")
    value = float(np.asarray(m.grad_sq)[:-1].mean())          # mean over rounds t < T and timing seeds
    return value, dict(N=N, n=n, K=K, T=T, L=L, sigma2=s2, Phi0=const.Phi0, lam=lam, nu2=const.nu2, G2=G2,
                       eta=r.eta, eta_bar=r.eta_bar, G2_run=const.G2)


def _theorem1_events_samples(quick, seed, *, statement):
    rng = _rng(seed, "theorem1-events")
    out = []
    for _ in range(2 if quick else 6):
        p = _events_params(rng)
        value, c = _events_instance(tuple((k, tuple(map(tuple, v)) if k == "b" else tuple(v) if isinstance(v, list)
                                           else v) for k, v in sorted(p.items())))
        bound = float(statement(**{k: v for k, v in c.items() if k in statement.parameters}))
        out.append(Sample(value, bound, {**p, **c}, seed=p["seed"], size=float(p["N"] * len(p["a"]) + p["T"])))
    return out


# ============================================================================= non-IID linear speedup, measured
def _theorem1_horizon(*, n, K, L, sigma2, Phi0, G2, nu2, epsilon):
    """T with the exact-constant bound 5 sqrt(Phi0 (16 s2 L + 8 L G2 K)/(nKT)) + b/(KT) equal to epsilon."""
    a = 5 * math.sqrt(Phi0 * (16 * sigma2 * L + 8 * L * G2 * K) / (n * K))
    b = 8 * L**2 * (sigma2 + 8 * K * nu2) / ((4 * sigma2 * L + 2 * L * K * G2) * K)
    return ((a + math.sqrt(a * a + 4 * b * epsilon)) / (2 * epsilon)) ** 2


def _niid_rounds(fed, x0, *, n, K, lam, epsilon, G2, L, sigma2, Phi0, nu2):
    """Exact first T at which (1/T) sum_{t<T} E||grad F(w^t)||^2 <= epsilon for DeFedAvg-nIID (draws with
    replacement, i.i.d. uniform delays on 0..lam) at Theorem 1's rates set for the horizon of the exact-constant
    bound; computed on a growing prefix of the horizon (the rates do not depend on it).  Returns (T_eps,
    horizon, G2 of the computed prefix)."""
    horizon = int(math.ceil(_theorem1_horizon(n=n, K=K, L=L, sigma2=sigma2, Phi0=Phi0, G2=G2, nu2=nu2,
                                              epsilon=epsilon)))
    r = B.prescribed_rates(n=n, K=K, T=horizon, L=L, sigma2=sigma2, Phi0=Phi0, G2=G2)
    T = min(horizon, max(40, horizon // 16))
    while True:
        m = X.niid_moments(fed, n=n, T=T, K=K, eta=r.eta, eta_bar=r.eta_bar, x0=x0, lam=lam, record_cov=True)
        hit = X.first_crossing(X.running_average(np.asarray(m.grad_sq)[:-1]), epsilon)
        if math.isfinite(hit) or T >= horizon:
            return hit, horizon, X.assumption_constants(fed, m, K=K, eta_bar=r.eta_bar).G2
        T = min(horizon, 2 * T)


def _speedup_niid_samples(quick, seed):
    """The fitted slope of log T_eps against log n (n = 2, 4, 8 of N = 8) against -1."""
    rng = _rng(seed, "slope-niid")
    out = []
    for _ in range(1 if quick else 2):
        N, ns = 8, [2, 4, 8]
        K, lam = int(rng.integers(1, 3)), int(rng.integers(1, 3))
        s2 = _logu(rng, 10.0, 30.0)
        a = np.array([1.0, float(rng.uniform(0.3, 1.0))])
        b = rng.normal(size=(N, 2)) * _logu(rng, 0.1, 0.4)
        fed = X.niid_federation(a=a, b=b, sigma2=s2)
        x_star = np.asarray(fed.x_star)
        x0 = x_star + 1.0 / a                                  # ||grad F(w0)||^2 = 2 = 2 eps: the noise decides
        eps, L, Phi0 = 1.0, float(a.max()), float(0.5 * (a / a).sum())
        nu2 = float(((a * (b - b.mean(axis=0))) ** 2).sum(axis=1).max())
        G2 = 2 * nu2 + s2                                       # first guess, then the run's exact supremum
        for _ in range(2):
            _, _, G2_run = _niid_rounds(fed, x0, n=ns[0], K=K, lam=lam, epsilon=eps, G2=G2, L=L, sigma2=s2,
                                        Phi0=Phi0, nu2=nu2)
            G2 = G2_run
        res = [_niid_rounds(fed, x0, n=k, K=K, lam=lam, epsilon=eps, G2=G2, L=L, sigma2=s2, Phi0=Phi0, nu2=nu2)
               for k in ns]
        measured = np.array([r[0] for r in res])
        slope = X.loglog_slope(np.array(ns), measured)
        out.append(Sample(slope, -1.0, dict(N=N, ns=ns, K=K, lam=lam, sigma2=s2, a=a.tolist(), epsilon=eps, G2=G2,
                                            nu2=nu2, measured=measured.tolist(), horizon=[r[1] for r in res],
                                            G2_runs=[r[2] for r in res]), seed=seed))
    return out


# ============================================================================= the rates in the text
def _rate_lambda1_samples(quick, seed):
    rng = _rng(seed, "rate-lambda1")
    out = []
    for _ in range(4 if quick else 16):
        p = C._iid_params(rng, delay=str(rng.choice(["constant", "uniform", "cyclic", "per_client"])))
        p["lam"] = 1
        out.append(C.theorem2_sample(C._with_delay_used(p), B.rate_lambda1))
    return out


def _theorem1_rate_samples(quick, seed):
    """(12) itself against 16 sqrt(Phi0 (16 s2 L + 8 L G2)/(nT)) + max(2L, 32 L nu2/G2)/(KT), random constants."""
    rng = _rng(seed, "theorem1-rate")
    out = []
    st = B.theorem1
    for i in range(20 if quick else 80):
        p = dict(n=int(rng.integers(1, 100)), K=1 if i % 4 == 0 else int(rng.integers(1, 200)),
                 T=int(rng.integers(10, 10**6)), L=_logu(rng, 1e-2, 1e2), sigma2=_logu(rng, 1e-3, 1e3),
                 Phi0=_logu(rng, 1e-3, 1e3), G2=_logu(rng, 1e-3, 1e3), nu2=0.0 if i % 8 == 0 else _logu(rng, 1e-3, 1e3))
        value = float(st(check=False, N=p["n"], lam=1, **p))
        bound = float(B.theorem1_rate(**{k: v for k, v in p.items() if k in B.theorem1_rate.parameters}))
        out.append(Sample(value, bound, p, seed=seed))
    return out


# ============================================================================= search families (issue 21)
# Every new bound that holds is also searched over a family as wide as its hypotheses (``SEARCH``: family,
# evaluate(params) -> Sample, budgets (quick, full)).
def _lemma2_n_constrain(p):
    return {**p, "n": min(p["n"], p["N"] + 1)}


def _lemma2_corrected_evaluate(p):
    N, n, K, s2 = p["N"], p["n"], p["K"], p["sigma2"]
    part = RandomParticipation.with_replacement(N=N, n=n)     # the core's E[c c^T] = kappa u u^T + diag(v)
    value = n * n * float(part.kappa * (np.asarray(part.u) ** 2).sum() + np.asarray(part.v).sum()) * K * s2
    return Sample(value, float(B.lemma2_corrected(n=n, N=N, K=K, sigma2=s2)), dict(p), seed=None, size=float(N * n))


LEMMA2_CORRECTED_FAMILY = Family(
    [Integer("N", 1, 10**6, log=True), Integer("n", 1, 10**6, log=True), Integer("K", 1, 100, log=True),
     Real("sigma2", 1e-3, 1e3, log=True)], constrain=_lemma2_n_constrain,
    description="n <= N + 1 draws with replacement from N, K steps of noise of variance exactly sigma^2 (Assumptions "
                "2-3), from the core's participation moments: the ratio (N + n - 1)/(2N) is 1 at n = N + 1")


def _lemma2_rounds_constrain(p):
    return {**p, "n": min(p["n"], p["N"]), "T": max(p["T"], p["lam"] + 1)}


def _lemma2_rounds_evaluate(p):
    N, n, K, lam, s2, T, eta, eta_bar = (p[k] for k in ("N", "n", "K", "lam", "sigma2", "T", "eta", "eta_bar"))
    fed = X.niid_federation(a=[TINY], b=np.zeros((N, 1)), sigma2=s2)
    m = X.niid_moments(fed, n=n, T=T, K=K, eta=eta, eta_bar=eta_bar, x0=np.zeros(1), lam=lam, record_lags=True)
    lag = _noise_scale(m.lag_msd, eta, eta_bar, n)
    vals = np.array([[lag[t, l] if t >= l else 0.0 for l in range(1, lam + 1)] for t in range(T + 1)])
    t, j = np.unravel_index(int(np.argmax(vals)), vals.shape)
    return Sample(float(vals[t, j]), float(B.lemma2_rounds(n=n, N=N, K=K, lam=lam, sigma2=s2)),
                  {**p, "round": int(t), "l": int(j + 1)}, seed=None, size=float(N * n))


LEMMA2_ROUNDS_FAMILY = Family(
    [Integer("N", 1, 200, log=True), Integer("n", 1, 200, log=True), Integer("K", 1, 20, log=True),
     Integer("lam", 1, 4), Integer("T", 2, 12), Real("sigma2", 1e-3, 1e3, log=True), Real("eta", 0.05, 5.0, log=True),
     Real("eta_bar", 1e-3, 1.0, log=True)], constrain=_lemma2_rounds_constrain,
    description="DeFedAvg-nIID on noise-only clients (Hessian 1e-12 I, w0 = w*): n <= N draws with replacement, "
                "i.i.d. uniform delays on 0..lam (Assumption 4), noise of variance exactly sigma^2 (2-3); exact over "
                "draws, delays and noise; the ratio l (N + n - 1)/(2 N lam) tends to 1 at l = lam, n = N -> infinity")


def _lemma7_constrain(p):
    return {**p, "n": min(p["n"], p["N"])}


def _lemma7_family(what):
    return Family(
        [Integer("N", 1, 12), Integer("n", 1, 12), Integer("d", 1, 2), Integer("K", 1, 6), Integer("T", 4, 30),
         Real("sigma2", 1e-3, 1e3, log=True), Real("eta", 0.05, 5.0, log=True), Real("eta_bar", 1e-3, 1.0, log=True),
         Choice("schedule", ("events", "constant", "uniform", "cyclic")), Integer("lam_oracle", 1, 4),
         Real("t_dl", 0.0, 1.0), Real("t_ul", 0.0, 1.0), Integer("seed", 0, 10**6)], constrain=_lemma7_constrain,
        description=f"DeFedAvg-IID schedules (event-driven first n arrivals with speeds U[1,5], or delay oracles; "
                    f"lambda = the largest staleness, at least 1: Assumption 4) on noise-only clients (Hessian 1e-12 "
                    f"I), noise of variance exactly sigma^2 (2-3): {what} is an equality, the ratio 1")


def _step36_constrain(p):
    return {**p, "n": min(p["n"], p["N"])}


def _iid_family_params(p, *, delay, rates):
    """An IID instance of ``checks._iid_params``'s form from a search point (a and the direction from dir_seed)."""
    rng = _rng(p["dir_seed"], "search-iid-coverage")
    d, L = p["d"], p["L"]
    a = np.concatenate([[L], rng.uniform(0.05, 1.0, d - 1) * L])
    q = dict(a=a.tolist(), N=p["N"], n=p["n"], K=p["K"], lam=p["lam"], delay=delay, T=p["T"],
             sigma2_factor=p["sigma2_factor"], phi_frac=p["phi_frac"], direction=rng.normal(size=d).tolist(),
             rates=rates, u_bar=p["u_bar"], u_prod=p["u_prod"], seed=p["seed"])
    return C._with_delay_used(q)


_IID_SEARCH_PARAMS = [
    Integer("d", 1, 3), Real("L", 0.1, 10.0, log=True), Integer("N", 1, 6), Integer("n", 1, 6), Integer("K", 1, 5),
    Integer("lam", 1, 3), Integer("T", 20, 160), Real("sigma2_factor", 1.0, 1e3, log=True),
    Real("phi_frac", 1e-3, 1.0, log=True), Real("u_bar", 0.05, 1.0, log=True), Real("u_prod", 0.05, 1.0, log=True),
    Integer("seed", 0, 10**6), Integer("dir_seed", 0, 10**6)]
STEP36_FAMILY = Family(
    _IID_SEARCH_PARAMS, constrain=_step36_constrain,
    description="IID quadratics of checks.py's IID family (Assumptions 1-4), every update lam rounds stale (constant "
                "delay), any rates inside (13); both sides of (36) at the worst round, every term exact")
RATE_LAMBDA1_FAMILY = Family(
    _IID_SEARCH_PARAMS + [Choice("delay", ("constant", "uniform", "cyclic", "per_client"))],
    constrain=_step36_constrain,
    description="IID quadratics of checks.py's IID family (Assumptions 1-4) with lambda = 1 (oracle delays of at "
                "most one round), the prescribed rates inside (13); exact average over the noise")


def _step36_evaluate(p):
    q = _iid_family_params(p, delay="constant", rates="any")
    terms = C._lemma_terms(q)
    c = terms["c"]
    kw = dict(K=c["K"], lam=c["lam"], eta=c["eta"], eta_bar=c["eta_bar"], sigma2=c["sigma2"], n=c["n"])
    s = _worst_round(B.lemma5_step36_corrected, terms["stale_sq"], terms["Y_sum"], kw, q, float(p["N"] * p["d"]))
    return Sample(s.value, s.bound, {**p, "round": s.params["round"]}, seed=None, size=s.size)


def _rate_lambda1_evaluate(p):
    s = C.theorem2_sample(_iid_family_params({**p, "lam": 1}, delay=p["delay"], rates="prescribed"), B.rate_lambda1)
    return Sample(s.value, s.bound, dict(p), seed=None, size=s.size)


def _fact2_evaluate(p):
    rng = _rng(p["seed"], "fact2-search")
    m, d = p["m"], p["d"]
    x = rng.normal(size=d) + p["spread"] * rng.normal(size=(m, d))
    return Sample(float((x.sum(axis=0) ** 2).sum()), float(m * (x * x).sum()), dict(p), seed=None, size=float(m * d))


def _theorem1_step_evaluate(p):
    K, L = p["K"], p["L"]
    x = p["u"] / (4 * L * K) * (1 - 1e-12)
    eta_bar = 1 / (8 * L * K)
    return Sample(L * x * x, float(B.theorem1_step_corrected(eta=x / eta_bar, eta_bar=eta_bar, L=L, K=K)), dict(p),
                  seed=None, size=float(K))


def _events_evaluate(p, *, statement):
    rng = _rng(p["dir_seed"], "search-events")
    d, L, N = p["d"], p["L"], p["N"]
    a = np.concatenate([[L], rng.uniform(0.05, 1.0, d - 1) * L])
    q = dict(a=tuple(a.tolist()), b=tuple(map(tuple, (rng.normal(size=(N, d)) * p["b_scale"]).tolist())), N=N,
             n=min(p["n"], N), K=p["K"], T=p["T"], sigma2=p["sigma2"], phi_frac=p["phi_frac"],
             direction=tuple(rng.normal(size=d).tolist()), policy=p["policy"], t_dl=p["t_dl"], t_ul=p["t_ul"],
             seed=p["seed"], B=p["B"])
    value, c = _events_instance(tuple(sorted(q.items())))
    bound = float(statement(**{k: v for k, v in c.items() if k in statement.parameters}))
    return Sample(value, bound, {**p, **c}, seed=None, size=float(N * d + p["T"]))


EVENTS_FAMILY = Family(
    [Integer("d", 1, 2), Real("L", 0.2, 5.0, log=True), Integer("N", 1, 8), Integer("n", 1, 8), Integer("K", 1, 4),
     Integer("T", 10, 60), Real("sigma2", 1e-2, 1e3, log=True), Real("phi_frac", 1e-3, 1.0, log=True),
     Real("b_scale", 1e-3, 2.0, log=True), Choice("policy", POLICIES), Real("t_dl", 0.0, 1.0), Real("t_ul", 0.0, 1.0),
     Integer("seed", 0, 10**6), Integer("dir_seed", 0, 10**6)], fixed={"B": 6},
    description="the event-driven Algorithm 1 (niid_events: send buffers, n <= N draws with replacement, speeds "
                "U[1,5], both policies; lambda the largest staleness of any update or virtual anchor: Assumption 4) "
                "on non-IID quadratics sharing a diagonal Hessian (1, 5 with the exact nu^2), noise of trace sigma^2 "
                "(2-3), G^2 raised until the run stays inside Assumption 6, Phi0 = phi_frac of its largest value "
                "under (11); exact over the noise, averaged over 6 timing seeds")


def _theorem1_rate_evaluate(p):
    kw = {k: p[k] for k in ("n", "K", "T", "L", "sigma2", "Phi0", "G2", "nu2")}
    value = float(B.theorem1(check=False, N=p["n"], lam=1, **kw))
    return Sample(value, float(B.theorem1_rate(**{k: v for k, v in kw.items() if k in B.theorem1_rate.parameters})),
                  dict(p), seed=None)


SEARCH = {
    "lemma2_corrected": (LEMMA2_CORRECTED_FAMILY, _lemma2_corrected_evaluate, (8, 30)),
    "lemma2_rounds": (LEMMA2_ROUNDS_FAMILY, _lemma2_rounds_evaluate, (8, 30)),
    "lemma7": (_lemma7_family("(43)"), functools.partial(_lemma7_sample, rounds=False), (6, 20)),
    "lemma7_rounds": (_lemma7_family("(44) at the stalest update"), functools.partial(_lemma7_sample, rounds=True),
                      (6, 20)),
    "lemma5_step36_corrected": (STEP36_FAMILY, _step36_evaluate, (4, 16)),
    "rate_lambda1": (RATE_LAMBDA1_FAMILY, _rate_lambda1_evaluate, (4, 16)),
    "fact2": (Family([Integer("m", 2, 1000, log=True), Integer("d", 1, 5), Real("spread", 1e-9, 10.0, log=True),
                      Integer("seed", 0, 10**6)],
                     description="m vectors x_i = v + spread z_i (Gaussian v, z_i): the ratio tends to 1 as spread -> 0"),
              _fact2_evaluate, (10, 40)),
    "theorem1_step_corrected": (
        Family([Integer("K", 1, 10**6, log=True), Real("L", 1e-3, 1e3, log=True), Real("u", 1e-3, 1.0)],
               description="eta eta_bar = u/(4LK), u in (0, 1] (inside the condition), eta_bar = 1/(8LK): the ratio is "
                           "u, 1 at the boundary"),
        _theorem1_step_evaluate, (10, 40)),
    "theorem1_events": (EVENTS_FAMILY, functools.partial(_events_evaluate, statement=B.theorem1), (4, 12)),
    "theorem1_corrected_events": (EVENTS_FAMILY, functools.partial(_events_evaluate, statement=B.theorem1_corrected),
                                  (4, 12)),
    "theorem1_rate": (
        Family([Integer("n", 1, 10**4, log=True), Integer("K", 1, 10**4, log=True), Integer("T", 1, 10**8, log=True),
                Real("L", 1e-3, 1e3, log=True), Real("sigma2", 1e-3, 1e3, log=True), Real("Phi0", 1e-3, 1e3, log=True),
                Real("G2", 1e-3, 1e3, log=True), Real("nu2", 0.0, 1e3)],
               description="(12) as a function of its constants (any n, K, T, L, sigma^2, Phi0, G^2 > 0, nu^2 >= 0): "
                           "the ratio is 1 at K = 1, nu = 0"),
        _theorem1_rate_evaluate, (10, 40)),
}
if isinstance(getattr(C, "SEARCH", None), dict):    # one table of search budgets per paper (checks.SEARCH)
    C.SEARCH.update(SEARCH)


# ============================================================================= registry
_reg("fedavg_update", None, _fedavg_printed_samples, relation="==", rtol=1e-9, expected="violated",
     falsifies="algorithm line",
     still_stands="(3) with the sign of (8), w^{t+1} = w^t - (eta/n) sum (w^t - w_i^{t,K}): vanilla FedAvg at eta = 1 "
                  "(fedavg_update_corrected), which is what (8), the simulators and every other check use",
     description="(3) as printed, w^{t+1} = w^t - (eta/n) sum_{I_t} (w_i^{t,K} - w^t), at eta = 1 is NOT vanilla FedAvg: "
                 "it steps away from the local models (one client, F = w^2/2, K = 1, eta_bar = 0.5: w <- 1.5 w, "
                 "divergent); ||w^T|| against vanilla FedAvg's on noise-free quadratics")
_reg("fedavg_update_corrected", None, _fedavg_fixed_samples, relation="==", rtol=0.0, atol=1e-9,
     description="(3) with the sign of (8), typed line by line: vanilla FedAvg at eta = 1 and the package's "
                 "fedavg_loop at any eta (largest model difference, noise-free quadratics)")
_reg("aggregate_weights", None, functools.partial(_aggregate_samples, as_set=False), relation="==", rtol=0.0,
     description="(7) with I_t the multiset of the n draws (|I_t| = n) and (8): client i gets m_i/n; the weights of the "
                 "oracle and event-driven Algorithm 1 schedules are these (largest difference)")
_reg("aggregate_7_as_set", None, functools.partial(_aggregate_samples, as_set=True), relation="==", rtol=0.0,
     expected="violated", falsifies="algorithm line",
     still_stands="(7) with I_t the multiset of Lemma 2 (|I_t| = n, multiplicity counted), which is (8) and what the "
                   "schedules apply (aggregate_weights)",
     description="(7) read with I_t the set that Algorithm 1's line 4 forms (each drawn client once, |I_t| distinct "
                 "clients) is NOT (8) when a client is drawn twice and another once (L1 distance of the weights)")
_reg("lemma2_as_printed", B.lemma2_as_printed, functools.partial(_lemma2_any_n_samples, statement=B.lemma2_as_printed),
     expected="violated", falsifies="lemma",
     still_stands="the lemma for n <= N + 1 (lemma2_corrected, tight at n = N + 1), hence under Theorem 1's n <= N; "
                  "(24)-(26)'s equality n(N+n-1)/N K sigma^2 (lemma2_exact)",
     description="Lemma 2 (19) with its printed hypotheses (no condition on n): all N^n draws enumerated, N, n <= 4; "
                 "N = 1, n = 3 gives 9 K sigma^2 > 6 K sigma^2")
_reg("lemma2_corrected", B.lemma2_corrected, functools.partial(_lemma2_any_n_samples, statement=B.lemma2_corrected),
     description="Lemma 2 (19) under n <= N + 1 (what (26)(b) uses): all N^n draws enumerated, tight at n = N + 1")
_reg("lemma2_rounds", B.lemma2_rounds, _lemma2_rounds_samples, rtol=1e-9,
     description="Lemma 2 (20): the noise over l <= lam stale rounds of DeFedAvg-nIID, exact over the draws, the "
                 "delays and the noise (noise-only clients)")
_reg("lemma7", B.lemma7, functools.partial(_lemma7_samples, rounds=False), rtol=1e-9,
     description="Lemma 7 (43) on DeFedAvg-IID schedules (event-driven first n arrivals and delay oracles), exact over "
                 "the noise: equality")
_reg("lemma7_rounds", B.lemma7_rounds, functools.partial(_lemma7_samples, rounds=True), rtol=1e-9,
     description="Lemma 7 (44) for every applied update of DeFedAvg-IID schedules (event-driven and oracles), lam the "
                 "largest staleness: equality at the stalest update")
_reg("lemma5_step36", B.lemma5_step36, functools.partial(_step36_samples, statement=B.lemma5_step36),
     expected="violated", falsifies="proof step",
     still_stands="(36)(a) and the display after it, hence Lemma 5 itself (lemma5); (36)(b) without the 1/n^2 "
                  "(lemma5_step36_corrected)",
     description="(36)(b) as printed, 2 lam eta^2 eta_bar^2/n^2 sum_s E||(1/n) sum_{I_s} sum_k G||^2: n^2 times too "
                 "small; N = n = 2 identical (nearly) noise-free clients, every update one round stale: ratio n^2/2 = 2")
_reg("lemma5_step36_corrected", B.lemma5_step36_corrected,
     functools.partial(_step36_samples, statement=B.lemma5_step36_corrected),
     description="(36)(b) without the extra 1/n^2, at every round of exact constant-delay instances")
_reg("descent_lemma_37", None, _descent37_samples, relation="==", rtol=1e-8, atol=1e-12,
     description="(37): the descent lemma with g_nIID, an equality on isotropic quadratics (L = a), every term exact "
                 "over the draws, the delays and the noise (largest relative error over the rounds)")
_reg("fact2", None, _fact2_samples, relation="<=", rtol=1e-12,
     description="Fact 2: ||sum_{i<m} x_i||^2 <= m sum ||x_i||^2 (equality for m equal vectors)")
_reg("theorem1_step", B.theorem1_step,
     functools.partial(_theorem1_step_samples, statement=B.theorem1_step, root=2), expected="violated",
     falsifies="proof step",
     still_stands="the step under eta eta_bar <= 1/(4LK) (theorem1_step_corrected), which (11) imposes "
                  "(eta eta_bar <= 1/(4LK lam)): Theorem 1 is unaffected",
     description="the proof of Theorem 1 after (38): 'eta eta_bar <= 1/(2LK) <=> eta eta_bar/(2K) - L eta^2 eta_bar^2 "
                 ">= eta eta_bar/(4K)' is false: at eta eta_bar = 1/(2LK), L (eta eta_bar)^2 is twice eta eta_bar/(4K)")
_reg("theorem1_step_corrected", B.theorem1_step_corrected,
     functools.partial(_theorem1_step_samples, statement=B.theorem1_step_corrected, root=4),
     description="the same step under eta eta_bar <= 1/(4LK): tight at the boundary")
_reg("theorem1_events", B.theorem1, functools.partial(_theorem1_events_samples, statement=B.theorem1),
     description="Theorem 1 (12) on the event-driven Algorithm 1 (send buffers, draws with replacement, both "
                 "policies, speeds U[1,5]): exact over the noise, averaged over 12 timing seeds; lam, nu^2, G^2 of "
                 "the run")
_reg("theorem1_corrected_events", B.theorem1_corrected,
     functools.partial(_theorem1_events_samples, statement=B.theorem1_corrected),
     description="Theorem 1 with the exact constant 5 on the event-driven Algorithm 1 (as theorem1_events)")
_reg("linear_speedup_niid", None, _speedup_niid_samples, relation="==", rtol=0.0, atol=0.1,
     description="measured: the fitted slope of exact rounds to epsilon of DeFedAvg-nIID against n (n = 2, 4, 8 of "
                 "N = 8) at Theorem 1's rates is -1 within 0.1")
_reg("rate_lambda1", B.rate_lambda1, _rate_lambda1_samples,
     description="the text after Theorem 2, lambda = 1 => O(1/sqrt(nKT) + n/T), with the corrected Theorem 2's "
                 "constants: IID quadratics with delays of at most one round, prescribed rates")
_reg("theorem1_rate", B.theorem1_rate, _theorem1_rate_samples,
     description="Theorem 1's rate O(1/sqrt(nT) + 1/(KT)) as an explicit inequality on (12), random constants "
                 "(tight at K = 1, nu = 0)")
