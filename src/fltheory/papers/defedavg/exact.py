r"""Exact DeFedAvg on quadratic clients: :math:`\mathbb E\|\nabla F(w^t)\|^2` and what it takes to reach epsilon.

Problem class: quadratic clients with additive gradient noise (:class:`fltheory.QuadraticFederation`).
Method: DeFedAvg, eq. (8) of Wang, Li, Jin, Zhang: ``K`` local SGD steps with rate ``eta_bar`` from
a stale server model, applied by the server with rate ``eta``.  On quadratics every update is affine
in its anchor, so the core computes the first and second moments of every server model exactly:

* :func:`moments` -- for a given schedule (event-driven or a delay oracle), exact over the noise
  (:func:`fltheory.delayed.schedule_moments`);
* :func:`niid_moments` -- DeFedAvg-nIID with i.i.d. draws with replacement and i.i.d. delays, exact
  over the draws, the delays and the noise (:func:`fltheory.delayed.random_participation_moments`);
* :func:`assumption_constants` -- the exact :math:`\nu^2` and the exact
  :math:`\sup\mathbb E\|\nabla F_i(w)\|^2` over every global and local iterate (Assumptions 5 and 6
  are stated along the iterates) for clients that share one Hessian;
* :func:`running_average` and :func:`first_crossing` -- the theorems' metric
  :math:`\frac1T\sum_{t<T}\mathbb E\|\nabla F(w^t)\|^2` and the first ``T`` at which it reaches epsilon;
* :func:`theorem1_delay_limit` -- the limit of Theorem 1's (corrected) ratio at the prescribed rates under a
  delay distribution on ``0..lam``, exactly (rational ``p``) from two discrete Lyapunov sums, and
  :func:`theorem1_delay_certificate`, a proof that it stays below a level on the whole simplex of ``p``;
* :func:`linear_speedup` -- exact rounds (and wall-clock) to epsilon against ``n`` at the
  Theorem 2 rates, with the fitted log-log slope (linear speedup: -1).

Example
-------
>>> import numpy as np
>>> from fltheory.papers.defedavg import exact as X, events as E
>>> fed = iid_federation(a=[1.0, 0.5], N=4, sigma2=1.0)
>>> m = X.moments(fed, E.iid_oracle(N=4, n=2, T=100, delay="constant", lam=1), K=2, eta=1.0, eta_bar=0.05,
...               x0=np.array([2.0, 2.0]))
>>> avg = X.running_average(m.grad_sq)
>>> avg.shape, bool(avg[-1, 0] < avg[0, 0])
((101, 1), True)
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from ... import validation as V
from ...backend import to_numpy
from ...delayed import LocalSGD, RandomParticipation, random_participation_moments, schedule_moments
from ...problems import QuadraticFederation
from ...schedules import Schedule
from . import bounds as Bd
from .events import iid_oracle

__all__ = ["iid_federation", "niid_federation", "moments", "niid_moments", "assumption_constants", "Constants",
           "running_average", "first_crossing", "linear_speedup", "theorem1_delay_limit", "DelayLimit",
           "theorem1_delay_certificate", "Speedup", "loglog_slope"]


def iid_federation(*, a, N: int, sigma2: float) -> QuadraticFederation:
    r"""``N`` identical clients :math:`F_i(w)=\frac12\sum_ja_jw_j^2` (IID data), gradient noise
    :math:`\mathcal N(0,\frac{\sigma^2}{d}I)` so that :math:`\mathbb E\|\zeta\|^2=\sigma^2` exactly;
    :math:`L=\max a`, :math:`F^*=0`.

    >>> iid_federation(a=[1.0, 0.5], N=3, sigma2=2.0).noise_cov[0].tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    a = V.array(a, "a", xp=np, ndim=1, low=0.0, open_low=True)
    N = V.integer(N, "N", low=1, high=10**4)
    sigma2 = V.real(sigma2, "sigma2", low=0.0)
    d = a.size
    return QuadraticFederation(np.tile(np.diag(a), (N, 1, 1)), np.zeros((N, d)), sigma2=sigma2 / d)


def niid_federation(*, a, b, sigma2: float) -> QuadraticFederation:
    r"""Non-IID clients :math:`F_i(w)=\frac12(w-b_i)^\top\mathrm{diag}(a)(w-b_i)` sharing one Hessian,
    gradient noise of trace ``sigma2``; :math:`\nabla F_i-\nabla F=A(\bar b-b_i)` is constant, so
    :math:`\nu^2=\max_i\|A(b_i-\bar b)\|^2` holds everywhere.

    >>> niid_federation(a=[1.0], b=[[1.0], [-1.0]], sigma2=1.0).x_star.tolist()
    [0.0]
    """
    a = V.array(a, "a", xp=np, ndim=1, low=0.0, open_low=True)
    b = V.array(b, "b", xp=np, ndim=2)
    if b.shape[1] != a.size:
        raise V.InputError(f"b must have shape (N, d) with d = a.size = {a.size} (a holds the d eigenvalues); got b of "
                           f"shape {b.shape} and a of shape {a.shape}")
    sigma2 = V.real(sigma2, "sigma2", low=0.0)
    return QuadraticFederation(np.tile(np.diag(a), (b.shape[0], 1, 1)), b, sigma2=sigma2 / a.size)


def _fed(fed):
    V.instance(fed, "fed", QuadraticFederation)
    if fed.batch_shape:
        raise V.InputError(f"fed must be one federation (no batch axes); got batch {fed.batch_shape}")
    return fed


def _blame_eta_bar(fed, eta_bar: float, run):
    """``run()``, with a divergence of the exact moments blamed on ``eta_bar`` when the local steps themselves
    diverge (``eta_bar * L_i > 2`` for some client: ``|1 - eta_bar lambda| > 1`` on an eigenvalue of ``H_i``); the
    moment engine's own message names the server step size ``eta``, the cause otherwise."""
    try:
        return run()
    except V.InputError as exc:
        L = float(np.max(np.linalg.eigvalsh(to_numpy(fed.H))))
        if not str(exc).startswith("the exact moments left the floating-point range") or eta_bar * L <= 2:
            raise
        raise V.InputError(f"the exact moments left the floating-point range: the local step size eta_bar={eta_bar:g} "
                           f"is past 2 / max_i L_i = {2 / L:g}, where the local SGD steps diverge; use a smaller "
                           f"eta_bar") from None


def moments(fed, schedule: Schedule, *, K: int, eta: float, eta_bar: float, x0, record_cov: bool = False,
            record_lags: bool = False):
    """Exact moments of DeFedAvg along ``schedule`` (exact over the gradient noise):
    ``.grad_sq[t, b]`` is :math:`\\mathbb E\\|\\nabla F(w^t)\\|^2` for timing seed ``b``; ``record_lags`` also
    gives ``.lag_msd[t, b, l]`` = :math:`\\mathbb E\\|w^t-w^{t-l}\\|^2` (the staleness gap of Lemmas 5 and 10)."""
    _fed(fed)
    local = LocalSGD(eta_local=V.real(eta_bar, "eta_bar", low=0.0, open_low=True), K=V.integer(K, "K", low=1, high=10**6))
    return _blame_eta_bar(fed, local.eta_local, lambda: schedule_moments(
        fed, schedule, local, eta=eta, x0=x0, record_cov=record_cov, record_lags=record_lags))


def _delay_probs(lam: int, delay: str = "uniform", stale: float = 0.0) -> np.ndarray:
    """The probabilities of the delays ``0..lam`` of :func:`niid_moments`: ``"constant"`` puts all on
    ``lam``; ``"uniform"`` puts ``(1 - stale)/(lam + 1)`` on each delay and ``stale`` more on ``lam``.
    """
    lam = V.integer(lam, "lam", low=0, high=10**4)
    delay = V.choice(delay, "delay", ("uniform", "constant"))
    stale = V.real(stale, "stale", low=0.0, high=1.0)
    if delay == "constant":
        return np.eye(lam + 1)[lam]
    return np.full(lam + 1, (1.0 - stale) / (lam + 1)) + stale * np.eye(lam + 1)[lam]


def niid_moments(fed, *, n: int, T: int, K: int, eta: float, eta_bar: float, x0, lam: int = 0,
                 delay: str = "uniform", record_cov: bool = False, record_lags: bool = False,
                 stale: float = 0.0):
    """Exact moments of DeFedAvg-nIID: each round ``n`` uniform draws with replacement (weight ``m/n``)
    and every client's delay i.i.d. -- ``"uniform"`` on ``{0..lam}`` or ``"constant"`` ``lam`` --
    exact over the draws, the delays and the noise.  ``stale`` in [0, 1] moves that share of the
    uniform delay's probability onto ``lam`` (``"uniform"`` only: ``stale = 1`` is the constant delay).

    >>> import numpy as np
    >>> fed = niid_federation(a=[1.0], b=[[1.0], [-1.0]], sigma2=0.1)
    >>> m = niid_moments(fed, n=2, T=3, K=1, eta=1.0, eta_bar=0.1, x0=np.zeros(1), lam=1)
    >>> m.grad_sq.shape
    (4,)
    """
    _fed(fed)
    n = V.integer(n, "n", low=1, high=10**6)
    lam = V.integer(lam, "lam", low=0, high=10**4)
    delay = V.choice(delay, "delay", ("uniform", "constant"))
    p = _delay_probs(lam, delay, stale)
    local = LocalSGD(eta_local=V.real(eta_bar, "eta_bar", low=0.0, open_low=True), K=V.integer(K, "K", low=1, high=10**6))
    return _blame_eta_bar(fed, local.eta_local, lambda: random_participation_moments(
        fed, local, eta=eta, T=T, x0=x0, participation=RandomParticipation.with_replacement(N=fed.M, n=n),
        delay_probs=p, record_cov=record_cov, record_lags=record_lags))


@dataclass(frozen=True)
class Constants:
    """Exact constants of an instance: ``L``, ``sigma2`` (trace of the noise covariance), ``nu2``,
    ``G2`` (sup of E||grad F_i||^2 over every global and local iterate), ``Phi0``."""

    L: float
    sigma2: float
    nu2: float
    G2: float
    Phi0: float


def assumption_constants(fed, m, *, K: int, eta_bar: float) -> Constants:
    r"""The exact constants of Assumptions 1, 3, 5, 6 along a run with moments ``m`` (recorded with
    ``record_cov=True``), for clients that share one Hessian ``H``: :math:`\nu^2=\max_i\|H(b_i-\bar b)\|^2`
    and :math:`G^2=\max_{t,i,k}\mathbb E\|\nabla F_i(w_i^{t,k})\|^2` over the local iterates of a run
    from every server model :math:`w^t` (``k = 0`` is :math:`w^t` itself), from
    :math:`\mathbb E[y^ky^{k\top}]=A^kSA^k+\bar\eta^2\sum_{j<k}A^j\Sigma A^j`, ``A = I - eta_bar H``.

    >>> import numpy as np
    >>> fed = niid_federation(a=[1.0], b=[[1.0], [-1.0]], sigma2=0.1)
    >>> m = niid_moments(fed, n=1, T=2, K=1, eta=1.0, eta_bar=0.1, x0=np.zeros(1), record_cov=True)
    >>> c = assumption_constants(fed, m, K=1, eta_bar=0.1)
    >>> c.nu2, round(c.G2, 4)                   # ||grad F_i(w0)||^2 = 1, plus the noise of one local step
    (1.0, 1.0199)
    """
    _fed(fed)
    K = V.integer(K, "K", low=1, high=10**4)
    eta_bar = V.real(eta_bar, "eta_bar", low=0.0, open_low=True)
    H = np.asarray(fed.H)
    if not np.allclose(H, H[:1]):
        raise V.InputError("fed: assumption_constants needs clients that share one Hessian (niid_federation)")
    if not (hasattr(m, "mean") and hasattr(m, "cov")):
        raise V.InputTypeError(f"m must be the moments of a run (niid_moments or moments, with record_cov=True); got "
                               f"{V.shown(m)}")
    if m.cov is None:
        raise V.InputError("m: record the covariances (record_cov=True)")
    H0, b, Sig = H[0], np.asarray(fed.x_opt), np.asarray(fed.noise_cov if fed.noise_cov is not None else 0 * H)
    bbar = np.asarray(fed.weights) @ b
    hd = (b - bbar) @ H0.T
    nu2 = float((hd * hd).sum(axis=-1).max())
    mean = np.asarray(m.mean).reshape(m.mean.shape[0], -1, fed.d)            # (T+1, B', d)
    cov = np.asarray(m.cov).reshape(mean.shape[:2] + (fed.d, fed.d))
    A = np.eye(fed.d) - eta_bar * H0
    H2 = H0 @ H0
    G2 = 0.0
    noise = np.zeros((fed.M, fed.d, fed.d))
    Ak = np.eye(fed.d)
    # tr(H^2 E_k) with E_k = A^k (cov + dm dm^T) A^kT + noise_i, all clients at once (dm = mean - b_i)
    for k in range(K):
        AH = Ak.T @ H2 @ Ak                                                   # tr(H2 A S A^T) = tr(A^T H2 A S)
        t_cov = np.einsum("ij,...ji->...", AH, cov)                           # (T+1, B')
        t_noise = np.einsum("ij,mji->m", H2, noise)                           # (M,)
        for i0 in range(0, fed.M, 256):                                       # bounded memory for many clients
            dm = mean[None] - b[i0:i0 + 256, None, None, :]                  # (m, T+1, B', d)
            t_dm = np.einsum("...i,ij,...j->...", dm, AH, dm)
            G2 = max(G2, float((t_cov[None] + t_dm + t_noise[i0:i0 + 256, None, None]).max()))
        noise = noise + eta_bar**2 * np.einsum("ab,ibc,dc->iad", Ak, np.broadcast_to(Sig, (fed.M, fed.d, fed.d)), Ak)
        Ak = A @ Ak
    x0 = mean[0, 0]

    def F(x):
        u = x - b
        return 0.5 * float(np.mean(np.einsum("mi,ij,mj->m", u, H0, u)))
    Phi0 = F(x0) - F(np.asarray(fed.x_star))
    sigma2 = float(np.trace(Sig, axis1=-2, axis2=-1).max()) if fed.noise_cov is not None else 0.0
    return Constants(float(np.linalg.eigvalsh(H0).max()), sigma2, nu2, G2, float(Phi0))


def running_average(grad_sq):
    """``avg[T-1] = (1/T) sum_{t<T} grad_sq[t]`` along the first axis (the theorems' left-hand side).

    >>> running_average(np.array([3.0, 1.0, 2.0])).tolist()
    [3.0, 2.0, 2.0]
    """
    g = V.array(grad_sq, "grad_sq", xp=np, min_ndim=1)
    if g.shape[0] < 1:
        raise V.InputError("grad_sq must hold at least one step")
    return np.cumsum(g, axis=0) / np.arange(1, g.shape[0] + 1).reshape((-1,) + (1,) * (g.ndim - 1))


def first_crossing(avg, epsilon: float):
    """The first ``T`` (>= 1) at which ``avg[T-1] <= epsilon`` (per column), ``inf`` where never.

    >>> first_crossing(np.array([3.0, 2.0, 1.5, 1.0]), 1.6)
    3.0
    """
    a = V.array(avg, "avg", xp=np, min_ndim=1)
    epsilon = V.real(epsilon, "epsilon", low=0.0, open_low=True)
    hit = a <= epsilon
    first = np.where(hit.any(axis=0), np.argmax(hit, axis=0) + 1.0, np.inf)
    return float(first) if np.ndim(first) == 0 else first


def loglog_slope(x, y) -> float:
    """Least-squares slope of ``log y`` against ``log x`` (finite positive pairs only).

    >>> round(loglog_slope([1, 2, 4], [8.0, 4.0, 2.0]), 12)
    -1.0
    """
    x, y = V.array(x, "x", xp=np, ndim=1), V.array(y, "y", xp=np, ndim=1, shape=None)
    if x.shape != y.shape:
        raise V.InputError(f"x and y must have the same shape; got {x.shape} and {y.shape}")
    ok = np.isfinite(y) & (y > 0) & (x > 0)
    if ok.sum() < 2:
        raise V.InputError("need at least two finite positive (x, y) pairs for a slope")
    return float(np.polyfit(np.log(x[ok]), np.log(y[ok]), 1)[0])


@dataclass(frozen=True)
class Speedup:
    """Rounds to epsilon against ``n``: ``measured`` (exact running average, first crossing),
    ``theory`` (corrected Theorem 2), their fitted log-log slopes, and ``horizon`` (the ``T`` the
    prescribed rates were set for)."""

    n: Any
    measured: Any
    theory: Any
    slope_measured: float
    slope_theory: float
    horizon: Any
    epsilon: float


def linear_speedup(*, a, sigma2: float, ns, K: int, lam: int, epsilon: float, x0, N: int | None = None,
                   max_T: int = 20000) -> Speedup:
    r"""Exact rounds to epsilon of DeFedAvg-IID against ``n`` (constant delay ``lam``), at the Theorem 2
    rates set for the corrected theorem's horizon :math:`T_\epsilon(n)`: the measured first ``T`` at
    which :math:`\frac1T\sum_{t<T}\mathbb E\|\nabla F(w^t)\|^2\le\epsilon`, and the fitted slope of
    :math:`\log T` against :math:`\log n` (theory: -1 while :math:`n\le n_{\max}`).

    >>> r = linear_speedup(a=[1.0, 1.0], sigma2=100.0, ns=[2, 4, 8], K=2, lam=1, epsilon=1.0, x0=[1.0, 1.0])
    >>> r.measured.tolist(), round(r.slope_measured, 3), round(r.slope_theory, 3)
    ([329.0, 165.0, 83.0], -0.993, -0.995)
    """
    a = V.array(a, "a", xp=np, ndim=1, low=0.0, open_low=True)
    ns = V.array(ns, "ns", xp=np, kind="integer", ndim=1, low=1)
    K, lam = V.integer(K, "K", low=1, high=10**4), V.integer(lam, "lam", low=0, high=10**3)
    sigma2 = V.real(sigma2, "sigma2", low=0.0, open_low=True)
    epsilon = V.real(epsilon, "epsilon", low=0.0, open_low=True)
    max_T = V.integer(max_T, "max_T", low=1, high=10**6)
    x0 = V.array(x0, "x0", xp=np, ndim=1, shape=(a.size,))
    N = int(ns.max()) if N is None else V.integer(N, "N", low=int(ns.max()), high=10**4)
    L, Phi0 = float(a.max()), float(0.5 * (a * x0 * x0).sum())
    fed = iid_federation(a=a, N=N, sigma2=sigma2)
    theory = np.array([Bd.rounds_to_epsilon(n=int(k), K=K, L=L, sigma2=sigma2, Phi0=Phi0, epsilon=epsilon) for k in ns])
    horizon = np.minimum(np.ceil(theory), max_T).astype(int)
    measured = []
    for k, T in zip(ns, horizon):
        r = Bd.prescribed_rates(n=int(k), K=K, T=int(T), L=L, sigma2=sigma2, Phi0=Phi0)
        m = moments(fed, iid_oracle(N=N, n=int(k), T=int(T), delay="constant", lam=lam), K=K, eta=r.eta,
                    eta_bar=r.eta_bar, x0=x0)
        measured.append(first_crossing(running_average(np.asarray(m.grad_sq)[:-1, 0]), epsilon))
    measured = np.array(measured, float)
    return Speedup(ns, measured, theory, loglog_slope(ns, measured), loglog_slope(ns, theory), horizon, epsilon)


@dataclass(frozen=True)
class DelayLimit:
    """:func:`theorem1_delay_limit`'s answer: ``signal`` (share of B_s), ``noise`` (share of B_n), ``ratio``
    = (signal + 4 noise)/5, and the sums ``S`` = sum_t y_t^2/y_0^2 and ``gamma`` = sum_t g_t^2 they come from
    (SymPy Rationals for rational ``p``, floats otherwise)."""

    signal: Any
    noise: Any
    ratio: Any
    S: Any
    gamma: Any


def _delay_companion(z, p, matrix):
    """The companion matrix of ``y_{t+1} = y_t - z sum_k p_k y_{t-k}`` on ``(y_t, ..., y_{t-lam})``, made by
    ``matrix`` (``sympy.Matrix`` for exact or symbolic ``p``, ``numpy.array`` for floats)."""
    n = len(p)
    return matrix([[(1 if j == 0 else 0) - z * p[j] if i == 0 else (1 if j == i - 1 else 0) for j in range(n)]
                   for i in range(n)])


def theorem1_delay_limit(lam: int, p) -> DelayLimit:
    r"""The limit of ``theorem1_corrected``'s ratio (exact average squared gradient norm over its bound) for
    DeFedAvg-nIID at the prescribed rates when each client's delay is i.i.d. with :math:`P(D=k)=p_k`,
    :math:`k=0..\lambda`.

    **Limit** (derivation: ``_niid_theorem_evaluate`` in ``checks.py``): isotropic Hessian ``L I``, identical
    clients, :math:`\Phi_0` at its cap of (11), so :math:`z=\eta\bar\eta KL=1/(4\lambda)`; ``n = N`` and ``T`` to
    infinity with ``n/T`` and :math:`\sigma^2T/L` growing (:math:`\rho=(N+n-1)/N\to2`,
    :math:`G^2=2L\Phi_0\ll\sigma^2`, :math:`\bar\eta LK\to0`).  Over the ``n`` draws the update averages the
    delays (law of large numbers): :math:`y_{t+1}=y_t-z\sum_kp_ky_{t-k}+e_t`, :math:`e_t` white.  Then, with
    :math:`B_s=4\Phi_0/(KT\eta\bar\eta)` and :math:`B_n=4B_s`,

    * signal (from :math:`w^0`, history :math:`y_{-k}=y_0`): :math:`zS/2` of :math:`B_s`,
      :math:`S=\sum_{t\ge0}y_t^2/y_0^2`;
    * noise (stationary): :math:`\rho z\gamma/16=z\gamma/8` of :math:`B_n`, :math:`\gamma=\sum_{t\ge0}g_t^2`
      for the impulse response (:math:`g_0=1`, :math:`g_{-k}=0`);
    * ratio :math:`r=(zS/2+4\cdot z\gamma/8)/5=z(S+\gamma)/10`.

    Both sums come from one matrix: with the companion matrix ``A`` of the recursion on
    :math:`(y_t,\dots,y_{t-\lambda})`, :math:`W=A^\top WA+e_1e_1^\top` (discrete Lyapunov equation),
    :math:`S=\mathbf 1^\top W\mathbf 1`, :math:`\gamma=W_{11}`.  ``A`` is stable for every ``p`` on
    :math:`0..\lambda` at :math:`z=1/(4\lambda)` (a root :math:`|w|\ge1` of :math:`w-1=-z\sum_kp_kw^{-k}` has
    :math:`|w-1|\le z`, so :math:`\mathrm{Re}(w^{-k})\ge e^{-1/4}\cos(\pi/8)` and
    :math:`\mathrm{Re}(w-1)\le-0.71z<-z^2/2`, i.e. :math:`|w|<1`: a contradiction), so ``W`` is unique and the
    sums converge.
    No delay gives 4/35, every client one round behind 133/1080 (tests/test_worst_case_defedavg.py checks the
    sums against the exact engine :func:`niid_moments` / ``random_participation_moments``).

    Parameters
    ----------
    lam : int
        The largest delay :math:`\lambda\ge1` of Assumption 4 (sets :math:`z=1/(4\lambda)`).
    p : sequence
        ``lam + 1`` probabilities of the delays ``0..lam``; all rational (int, ``Fraction``, SymPy
        Rational) gives exact SymPy Rationals, otherwise floats.

    Returns
    -------
    DelayLimit

    Example
    -------
        >>> from fractions import Fraction
        >>> theorem1_delay_limit(1, [0, 1]).ratio, theorem1_delay_limit(1, [1, 0]).ratio
        (133/1080, 4/35)
        >>> theorem1_delay_limit(1, [0, 1]).signal, theorem1_delay_limit(1, [0, 1]).noise
        (53/216, 5/54)
        >>> theorem1_delay_limit(2, [Fraction(1, 2), Fraction(1, 4), Fraction(1, 4)]).ratio
        66283/615040
        >>> round(theorem1_delay_limit(2, [0.5, 0.25, 0.25]).ratio, 6)
        0.10777
    """
    import sympy as sp  # noqa: PLC0415

    lam = V.integer(lam, "lam", low=1, high=64)
    if isinstance(p, (str, bytes)) or np.ndim(p) != 1 or len(p) != lam + 1:
        raise V.InputError(f"p must be lam + 1 = {lam + 1} probabilities of the delays 0..lam; got {V.shown(p)}")
    exact = all(isinstance(q, (numbers.Rational, sp.Rational)) and not isinstance(q, bool) for q in p)
    n = lam + 1
    if exact:
        q = [sp.Rational(v) for v in p]
        if any(v < 0 for v in q) or sum(q) != 1:
            raise V.InputError(f"p must be nonnegative and sum to 1; got {V.shown(p)}")
        z = sp.Rational(1, 4 * lam)
        A = _delay_companion(z, q, sp.Matrix)
        M = sp.eye(n * n) - sp.Matrix(sp.kronecker_product(A.T, A.T))
        e = sp.zeros(n * n, 1)
        e[0] = 1
        W = M.LUsolve(e).reshape(n, n)
        S, gamma = sum(W), W[0, 0]
    else:
        q = V.array(p, "p", xp=np, low=0.0).astype(float)
        if q.ndim != 1 or not np.isclose(q.sum(), 1.0, rtol=0, atol=1e-12):
            raise V.InputError(f"p must be nonnegative and sum to 1; got {V.shown(p)}")
        z = 1.0 / (4 * lam)
        A = _delay_companion(z, q, np.array)
        W = np.linalg.solve(np.eye(n * n) - np.kron(A.T, A.T), np.eye(n * n)[0]).reshape(n, n)
        S, gamma = float(W.sum()), float(W[0, 0])
    signal, noise = z * S / 2, z * gamma / 8
    return DelayLimit(signal=signal, noise=noise, ratio=(signal + 4 * noise) / 5, S=S, gamma=gamma)


def theorem1_delay_certificate(lam: int, level=Fraction(133, 1080)) -> tuple[int, Any, Any]:
    r"""A certificate that :func:`theorem1_delay_limit`'s ratio stays at most ``level`` for *every* delay
    distribution ``p`` on ``0..lam``.

    **Claim checked.**  :math:`r(\lambda,p)=z(S+\gamma)/10` is a rational function of ``p`` (the Lyapunov
    equation solved symbolically, SymPy); on the simplex, :math:`\text{level}-r=N(p)/D(p)`.  Written in the
    Bernstein basis of the simplex (homogenised with :math:`\sum_kp_k=1`), a polynomial whose Bernstein
    coefficients are all :math:`\ge0` (:math:`>0`) is :math:`\ge0` (:math:`>0`) on the whole simplex.  The
    function returns the degree and the smallest Bernstein coefficient of :math:`N` and of :math:`D`, both
    normalised so that :math:`D>0` at the uniform ``p``: both minima :math:`>0` prove
    :math:`r<\text{level}` on the whole simplex (``D`` never vanishes there, and ``A`` is stable for every
    ``p``, see :func:`theorem1_delay_limit`), a numerator minimum of 0 with ``D``'s :math:`>0` proves
    :math:`r\le\text{level}`.  Exact rational arithmetic throughout.  Cost grows fast: about 1 s at
    ``lam = 2, 3``, 20 s at ``lam = 4``.

    Args:
        lam: the largest delay (``1 <= lam <= 6``).
        level: the level to certify (rational); 133/1080 (every client one round behind, ``lam = 1``).

    Returns:
        ``(degree, min Bernstein coefficient of N, min Bernstein coefficient of D)``.

    Example:
        >>> deg, num, den = theorem1_delay_certificate(1)     # lam = 1: r <= 133/1080, equal at p = (0, 1)
        >>> deg, num, den > 0
        (3, 0, True)
        >>> deg, num, den = theorem1_delay_certificate(2)     # lam = 2: r < 133/1080 for every p
        >>> deg, num > 0, den > 0
        (4, True, True)
    """
    import sympy as sp  # noqa: PLC0415

    lam = V.integer(lam, "lam", low=1, high=6)
    if not isinstance(level, (numbers.Rational, sp.Rational)) or isinstance(level, bool):
        raise V.InputTypeError(f"level must be a rational number (int, Fraction); got {V.shown(level)}")
    level = sp.Rational(level)
    n = lam + 1
    x = sp.symbols(f"p0:{n}", nonnegative=True)
    z = sp.Rational(1, 4 * lam)
    A = _delay_companion(z, x, sp.Matrix)
    pairs = [(i, j) for i in range(n) for j in range(i, n)]
    w = sp.symbols(f"w0:{len(pairs)}")
    index = {pr: k for k, pr in enumerate(pairs)}
    W = sp.Matrix(n, n, lambda i, j: w[index[(min(i, j), max(i, j))]])
    E = sp.zeros(n, n)
    E[0, 0] = 1
    R = A.T * W * A - W + E
    sol = sp.solve([sp.expand(R[i, j]) for i, j in pairs], w, dict=True)[0]
    W = W.subs(sol)
    num, den = sp.fraction(sp.together(level - z * (sum(W) + W[0, 0]) / 10))
    sign = sp.sign(den.subs({v: sp.Rational(1, n) for v in x}))

    def bernstein_min(poly):
        P = sp.Poly(sp.expand(sign * poly), *x)
        d, total = P.total_degree(), sum(x)
        H = sp.Poly(sp.expand(sum(c * sp.prod([v**e for v, e in zip(x, m)]) * total ** (d - sum(m))
                                  for m, c in P.terms())), *x)
        coef = [c * sp.prod([sp.factorial(e) for e in m]) / sp.factorial(d) for m, c in H.terms()]
        full = len(coef) == sp.binomial(d + n - 1, n - 1)
        return d, min(coef) if full else min(min(coef), 0)

    deg, num_min = bernstein_min(num)
    return deg, num_min, bernstein_min(den)[1]
