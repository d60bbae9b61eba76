r"""Exact analysis of asynchronous FL over TDMA on quadratic clients (Song & Hong).

Problem class: quadratic clients ``f_n(w) = 1/2 (w - c_n)^T H_n (w - c_n)`` with additive gradient
noise; a mini-batch of ``B`` samples with per-sample noise of total variance ``sigma^2`` gives
covariance ``sigma^2/(B m) I`` (``M = 1`` in Assumption 2, (19) with equality).  Method: the TDMA
recursion ``w_{k+1} = w_k - (eta/S) sum_{n in S_k} g_n(w_{khat_n})`` driven by the schedule of
:func:`~fltheory.papers.tdma.timing.tdma_schedule` (``H`` local steps: the pseudo-gradient, the sum of
the local gradients along ``u_{h+1} = u_h - eta g_n(u_h)``).

Everything here is exact, built on the core: :func:`fltheory.delayed.schedule_moments` gives the
mean, covariance and lagged drifts ``E||w_k - w_{k-l}||^2`` of every round, so every quantity that
the paper's lemmas bound is an exact number (:func:`lemma_terms`).  The round robin is periodic
(``G`` rounds once every device has sent once), so :func:`fltheory.delayed.period_map` gives the
exact asymptotic contraction per period and the exact limit (:func:`rate_per_slot`): dividing the
log-rate by the slots of a period (from the exact end times) gives the **rate per slot**, which
answers the paper's design question (which ``S``, which ``alpha``) exactly on a quadratic.

Example
-------
>>> import numpy as np
>>> from fltheory.papers.tdma import exact, timing
>>> fed = exact.tdma_quadratic(A=[1.0], c=[[1.0], [-1.0], [1.0], [-1.0]])
>>> tm = timing.tdma_schedule(N=4, S=1, tau_comp=2, r=1, K=40)
>>> m = exact.exact_moments(fed, tm, eta=0.1, x0=[0.0])
>>> float(m.grad_sq[0, 0]), round(float(m.grad_sq[-1, 0]), 6)   # w_0 = mean of c: grad 0, then the stale bias
(0.0, 0.002263)
>>> rt = exact.rate_per_slot(fed, N=4, S=1, tau_comp=2, r=1, eta=0.1)
>>> round(float(rt.per_round), 4), float(rt.slots_per_round)
(0.8159, 2.0)
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ... import validation as V
from ...backend import to_numpy
from ...delayed import DelayedMoments, LocalSGD, period_map, schedule_moments
from ...problems import QuadraticFederation
from . import timing as tmg
from .timing import TDMATiming

__all__ = ["tdma_quadratic", "quadratic_constants", "QuadraticConstants", "exact_moments", "LemmaTerms",
           "lemma_terms", "Rate", "rate_per_slot", "loss_at_deadline"]


def tdma_quadratic(*, A, c, sigma: float = 0.0, B: int = 1) -> QuadraticFederation:
    """Clients ``f_n(w) = 1/2 (w - c_n)^T diag(A) (w - c_n)`` with a common curvature ``A`` (m,), centres
    ``c`` (N, m), uniform weights (``f = (1/N) sum f_n``), and mini-batch noise of covariance
    ``sigma^2/(B m) I`` (per-sample noise of variance ``sigma^2``: Assumption 2 with ``M = 1``).

    >>> tdma_quadratic(A=[1.0, 0.5], c=[[1, 0], [0, 1]], sigma=1.0, B=4).noise_cov[0].tolist()
    [[0.125, 0.0], [0.0, 0.125]]
    """
    A = V.array(A, "A", ndim=1, low=0.0, open_low=True)
    c = V.array(c, "c", ndim=2)
    if c.shape[1] != A.shape[0]:
        raise V.InputError(f"c must have shape (N, m={A.shape[0]}) to match A; got {c.shape}")
    sigma = V.real(sigma, "sigma", low=0.0)
    B = V.integer(B, "B", low=1, high=10**9)
    N, m = c.shape
    H = np.broadcast_to(np.diag(A), (N, m, m)).copy()
    s2 = None if sigma == 0 else sigma**2 / (B * m)
    return QuadraticFederation(H, c, None, sigma2=s2)


@dataclass(frozen=True)
class QuadraticConstants:
    """The constants of Assumptions 1-3 of a common-curvature quadratic: ``L`` (largest curvature),
    ``Gamma = max_n ||A (c_n - cbar)||`` (exact sup, the difference of gradients is constant) and
    ``Delta = f(w_0) - f*`` (``f_inf = f*``), ``g0 = ||grad f(w_0)||^2``."""

    L: float
    Gamma: float
    Delta: float
    g0: float


def quadratic_constants(fed: QuadraticFederation, x0) -> QuadraticConstants:
    """:class:`QuadraticConstants` of a federation built by :func:`tdma_quadratic` at ``w_0 = x0``."""
    V.instance(fed, "fed", QuadraticFederation)
    x0 = V.array(x0, "x0", ndim=1, shape=(fed.d,))
    H = np.asarray(fed.H)
    if fed.batch_shape or not np.allclose(H, H[:1]):
        raise V.InputError("quadratic_constants needs one federation whose clients share one curvature (then the "
                           "gradient differences are constant and Gamma is their exact supremum)")
    e = np.asarray(fed.grad_clients_at(fed.x_star))                  # grad f_n - grad f at w*, the same at every w
    Gamma = float(np.sqrt((e**2).sum(-1)).max())
    g = fed.grad(x0)
    Delta = float(fed.loss(x0) - fed.loss(fed.x_star))
    return QuadraticConstants(float(fed.L), Gamma, Delta, float(g @ g))


def _check(fed, timing_):
    V.instance(fed, "fed", QuadraticFederation)
    V.instance(timing_, "timing", TDMATiming)


def exact_moments(fed: QuadraticFederation, timing: TDMATiming, *, eta: float, x0, H: int = 1,
                  record_cov: bool = False, record_lags: bool = False) -> DelayedMoments:
    """Exact mean, ``E||w_k - w*||^2``, ``E||grad f(w_k)||^2`` and ``E f(w_k) - f*`` of every round
    ``k = 0..K`` of the TDMA recursion (``H`` local steps of size ``eta``, the pseudo-gradient sent).

    A thin layer over :func:`fltheory.delayed.schedule_moments` with
    ``LocalSGD(eta_local=eta, K=H, output="gradient_sum")`` and the schedule's weights ``1/S``.
    """
    _check(fed, timing)
    eta = V.real(eta, "eta", low=0.0, open_low=True)
    H = V.integer(H, "H", low=1, high=10**4)
    local = LocalSGD(eta_local=eta, K=H, output="gradient_sum")
    return schedule_moments(fed, timing.schedule, local, eta=eta, x0=x0, record_cov=record_cov,
                            record_lags=record_lags)


@dataclass(frozen=True)
class LemmaTerms:
    """Exact per-round quantities of Lemmas 1-4 (rounds ``k = 0..K-1``; ``f`` and ``a`` have ``K+1``).

    ``f[k] = E f(w_k) - f*``, ``a[k] = E||grad f(w_k)||^2``; per round: ``sum_h``, ``sum_gf``,
    ``sum_D``, ``sum_d``, ``sum_window`` (see :mod:`~fltheory.papers.tdma.bounds`); per device
    ``(K, S)``: ``drift = E||w_k - w_khat||^2``, ``d`` (staleness) and ``window_H`` =
    ``sum_{j=k-d}^{k-1} H_j`` with ``H_j = sum_h[j] / S``.
    """

    f: np.ndarray
    a: np.ndarray
    sum_h: np.ndarray
    sum_gf: np.ndarray
    sum_D: np.ndarray
    sum_d: np.ndarray
    sum_window: np.ndarray
    drift: np.ndarray
    d: np.ndarray
    window_H: np.ndarray
    khat: np.ndarray


def lemma_terms(fed: QuadraticFederation, timing: TDMATiming, *, eta: float, x0) -> LemmaTerms:
    """Every quantity the lemmas bound, exactly (one stochastic gradient per update, as in the theory).

    >>> import numpy as np
    >>> from fltheory.papers.tdma import exact, timing
    >>> fed = exact.tdma_quadratic(A=[1.0], c=[[0.0], [0.0]])
    >>> lt = exact.lemma_terms(fed, timing.tdma_schedule(N=2, S=2, tau_comp=1, K=1), eta=0.1, x0=[1.0])
    >>> float(lt.f[1]), float(lt.sum_h[0])                     # f(w_1) = 0.405 (Lemma 1's counterexample)
    (0.405, 2.0)
    """
    _check(fed, timing)
    m = exact_moments(fed, timing, eta=eta, x0=x0, record_cov=True, record_lags=True)
    mean, cov = np.asarray(m.mean[:, 0]), np.asarray(m.cov[:, 0])          # (K+1, m), (K+1, m, m)
    K, S = timing.K, timing.S
    kh, cl, d = timing.khat, timing.clients, timing.staleness
    Hn, cn = np.asarray(fed.H), np.asarray(fed.x_opt)
    H2 = Hn[cl] @ Hn[cl]                                                   # (K, S, m, m)
    mu = mean[kh] - cn[cl]                                                 # (K, S, m)
    gn = np.einsum("ksij,ksji->ks", H2, cov[kh]) + np.einsum("ksi,ksij,ksj->ks", mu, H2, mu)
    a = np.asarray(m.grad_sq[:, 0])
    sum_h = gn.sum(1)
    sum_gf = a[kh].sum(1)
    drift = np.asarray(m.lag_msd[:, 0])[np.arange(K)[:, None], d]
    c_gf = np.concatenate([[0.0], np.cumsum(sum_gf)])
    sum_window = (c_gf[np.arange(K)[:, None]] - c_gf[kh]).sum(1)
    Hj = np.concatenate([[0.0], np.cumsum(sum_h / S)])
    window_H = Hj[np.arange(K)[:, None]] - Hj[np.arange(K)[:, None] - d]
    return LemmaTerms(np.asarray(m.gap[:, 0]), a, sum_h, sum_gf, drift.sum(1), d.sum(1), sum_window, drift, d,
                      window_H, kh)


@dataclass(frozen=True)
class Rate:
    """Exact asymptotic rate of the periodic TDMA recursion.

    ``spectral_radius`` per period of ``period`` rounds, ``per_round`` its ``period``-th root,
    ``slots_per_round`` the exact average ``(E_{k+p} - E_k)/p``, ``per_slot`` = ``per_round ** (1 /
    slots_per_round)`` (the contraction per time slot), ``limit`` the exact limit of the models
    ``w_k`` at the rounds ``k`` that are multiples of ``period`` (the iterates cycle through ``period``
    points) and ``bias`` ``f(limit) - f*`` (a stale round robin with a constant step is biased on heterogeneous clients).
    ``converges`` is False where ``spectral_radius >= 1``: the step size makes the method diverge, there
    is no limit (``limit`` is then the fixed point of the divergent map, ``bias`` is inf, ``per_slot``
    the growth per slot).
    """

    spectral_radius: float
    per_round: float
    per_slot: float
    slots_per_round: float
    period: int
    limit: np.ndarray
    bias: float
    converges: bool = True


def rate_per_slot(fed: QuadraticFederation, *, N: int, S: int, tau_comp: int, r: int = 1, eta: float, alpha: int = 0,
                  H: int = 1, scheme: str = "async") -> Rate:
    """The exact contraction per slot of asynchronous FL over TDMA on a quadratic federation.

    The schedule repeats with some period ``p`` after the first cycles (``p = G`` when ``S`` divides
    ``N``; for other ``N`` the smallest ``p <= 4N`` found on the simulated rotation); the
    composed affine map of one period (:func:`fltheory.delayed.period_map` on the augmented state of
    the last ``G`` models) has spectral radius ``rho_p``; a round takes the exact average slots of
    one period of the round durations ``E_k - E_{k-1}``, which repeat with a period of their own
    (``max(c, (tau_comp + c)/m)`` for ``S | N``, see :mod:`~.timing`).  Exact (the schedule is simulated
    only for its timing); ``per_slot`` compares group sizes and delays at equal wall-clock time.
    """
    V.instance(fed, "fed", QuadraticFederation)
    N = V.integer(N, "N", low=1, high=10**4)         # a Python int: NumPy scalars would wrap in -(-N // S)
    if fed.M != N:
        raise V.InputError(f"the federation has {fed.M} clients but N={N}")
    S = V.integer(S, "S", low=1, high=N)
    G = -(-N // S)
    off = 3 * G                                          # past the start-up cycles
    cap = 4 * N                                          # the rotation of S | N repeats after G rounds
    tm = tmg.tdma_schedule(N=N, S=S, tau_comp=tau_comp, r=r, K=off + 4 * cap + 1, alpha=alpha, scheme=scheme)
    period = _period(tm, (tm.clients, tm.staleness), off, cap, "the rotation of the devices")
    off = period * (-(-off // period))                   # the limit is that of the rounds k = j * period
    dur = np.diff(tm.end)                                # the timing repeats with a period of its own
    q = _period(tm, (dur,), off, cap, "the round durations")
    slots = float(dur[off:off + q].sum()) / q
    eta = V.real(eta, "eta", low=0.0, open_low=True)
    H = V.integer(H, "H", low=1, high=10**4)
    local = LocalSGD(eta_local=eta, K=H, output="gradient_sum")
    pm = period_map(fed, tm.schedule, local, eta=eta, period=int(period), offset=off)
    rho = float(to_numpy(pm.spectral_radius())[0])
    per_round = rho ** (1.0 / period)
    fp = pm.fixed_point()
    lim = to_numpy(fp.x)[0, :fed.d]
    bias = float(fed.loss(lim) - fed.loss(fed.x_star)) if rho < 1 else float("inf")
    return Rate(rho, per_round, per_round ** (1.0 / slots), slots, int(period), lim, bias, bool(rho < 1))


def _period(tm: TDMATiming, arrays, off: int, cap: int, what: str) -> int:
    """The smallest ``p <= cap`` with which every array repeats (three blocks) from round ``off``."""
    for p in range(1, cap + 1):
        blocks = [slice(off + j * p, off + (j + 1) * p) for j in range(3)]
        if all(np.array_equal(a[blocks[0]], a[b]) for a in arrays for b in blocks[1:]):
            return p
    raise V.InputError(f"{what} of N={tm.N} devices in groups of S={tm.S} does not repeat within {cap} rounds; "
                       "no period map here (use exact_moments over the horizon)")


def loss_at_deadline(fed: QuadraticFederation, *, T: int, tau_comp: int, r: int = 1, S: int, eta: float, x0,
                     alpha: int = 0, H: int = 1, scheme: str = "async"):
    """Exact ``E f(w) - f*`` of the last model delivered by the deadline ``T`` (slot budget), i.e. after
    the ``K_done(T)`` rounds that end by ``T``; ``(gap, K_done)``.

    >>> from fltheory.papers.tdma import exact
    >>> fed = exact.tdma_quadratic(A=[1.0], c=[[1.0], [-1.0], [1.0], [-1.0]])
    >>> gap, K = exact.loss_at_deadline(fed, T=100, tau_comp=2, S=2, eta=0.2, x0=[3.0])
    >>> K, round(float(gap), 6)
    (32, 0.0)
    """
    V.instance(fed, "fed", QuadraticFederation)
    tm = tmg.tdma_schedule(N=fed.M, S=S, tau_comp=tau_comp, r=r, T=T, alpha=alpha, scheme=scheme)
    if tm.K == 0:
        g = fed.loss(V.array(x0, "x0", ndim=1, shape=(fed.d,))) - fed.loss(fed.x_star)
        return float(g), 0
    m = exact_moments(fed, tm, eta=eta, x0=x0, H=H)
    return float(to_numpy(m.gap)[-1, 0]), tm.K
