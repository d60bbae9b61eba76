r"""The exactly best step size of asynchronous FL over TDMA at a horizon, beside Theorem 1's ``eta = beta/sqrt(K+1)``.

Problem class: common-curvature quadratic clients with mini-batch noise (:func:`.exact.tdma_quadratic`,
Assumption 2 with ``M = 1``).  Method: the TDMA recursion of Algorithm 1 (Algorithm 2 with ``alpha > 0``)
on the slot-level schedule of :func:`.timing.tdma_schedule`.  The quantity Theorem 1 bounds,
:math:`\frac1{K+1}\sum_{k=0}^K\mathbb E\|\nabla f(\mathbf w_k)\|^2`, is computed exactly by
:func:`.exact.exact_moments` and minimised over ``eta`` with :func:`fltheory.tuning.compare`.
"""
from __future__ import annotations

import numpy as np

from ... import validation as V
from ...tuning import LogRange, StepSizeComparison, compare
from . import bounds as Bd
from .exact import exact_moments, tdma_quadratic
from .timing import tdma_schedule

__all__ = ["best_step_size"]


def best_step_size(*, A, c, x0, S: int, tau_comp: int, K: int, r: int = 1, sigma: float = 0.0, B: int = 1,
                   alpha: int = 0, budget: int = 24, seed: int = 0) -> StepSizeComparison:
    r"""The ``eta`` minimising the exact :math:`\frac1{K+1}\sum_{k=0}^K\mathbb E\|\nabla f(\mathbf w_k)\|^2`
    after ``K`` rounds, beside Theorem 1's :math:`\eta=\beta/\sqrt{K+1}`,
    :math:`\beta=\frac{SB}{2LN}(\sqrt{1+8N/(BM)}-1)` with ``M = 1`` (:func:`.bounds.beta_value`).

    Claim checked: none of the paper's; this answers the practitioner's question exactly on the instance.
    The clients are :func:`.exact.tdma_quadratic` ``(A, c, sigma, B)``, the schedule
    :func:`.timing.tdma_schedule` ``(N, S, tau_comp, r, K, alpha)`` with ``N = len(c)``; ``eta`` is searched
    in ``[1e-3 min(eta_prescribed, 1/L), 4/L]`` (log scale) by :func:`fltheory.tuning.minimise`
    (``budget`` evaluations of the adversarial search, then golden section to 1e-6 relative).

    One device, ``f = w^2/2``, no noise: plain GD, error ``(1/6) sum_{k<=5} (1 - eta)^(2k) 4``, least at
    ``eta = 1`` (``4/6``):

    >>> r = best_step_size(A=[1.0], c=[[0.0]], x0=[2.0], S=1, tau_comp=1, K=5, budget=4)
    >>> r.names, round(r.best["eta"], 6), round(r.best_error * 6, 9), r.ratio > 1
    (('eta',), 1.0, 4.0, True)
    """
    fed = tdma_quadratic(A=A, c=c, sigma=sigma, B=B)
    x0 = V.array(x0, "x0", xp=np, ndim=1, shape=(fed.d,))
    K = V.integer(K, "K", low=1, high=10**5)
    tm = tdma_schedule(N=fed.M, S=S, tau_comp=tau_comp, r=r, K=K, alpha=alpha)
    L = float(fed.L)
    beta = float(Bd.beta_value(S=tm.S, B=B, L=L, N=fed.M, M=1.0))
    eta = beta / np.sqrt(K + 1)

    def error(p):
        return float(np.asarray(exact_moments(fed, tm, eta=p["eta"], x0=x0).grad_sq)[:, 0].mean())

    return compare(error, [LogRange("eta", 1e-3 * min(eta, 1 / L), 4 / L)], prescribed={"eta": eta}, horizon=K,
                   engine="fltheory.papers.tdma.exact.exact_moments",
                   error_name="(1/(K+1)) sum_k E||grad f(w_k)||^2", prescription="eta = beta/sqrt(K+1)",
                   budget=budget, seed=seed, extra={"beta": beta, "L": L})
