r"""The exactly best step size of AFL-DGA at a horizon, beside Corollary 1's ``eta = sqrt(N)/(L sqrt(T))``.

Problem class: quadratic clients with additive gradient noise (an unbatched
:class:`fltheory.QuadraticFederation`).  Method: AFL-DGA on a participation schedule
(:class:`fltheory.schedules.Participation`: ``P``, ``K``, ``D``).  The quantity Theorem 1 bounds,
:math:`\frac1T\sum_{t<T}\mathbb E\|\nabla F(w^t)\|^2`, is computed exactly by :func:`.exact.afl_dga_exact`
and minimised over ``eta`` with :func:`fltheory.tuning.compare`.
"""
from __future__ import annotations

import numpy as np

from ... import validation as V
from ...problems import QuadraticFederation
from ...schedules import Participation
from ...tuning import LogRange, StepSizeComparison, compare
from .exact import afl_dga_exact

__all__ = ["best_step_size"]


def best_step_size(*, fed, part, w0, mode: str = "analysis", budget: int = 24, seed: int = 0) -> StepSizeComparison:
    r"""The ``eta`` minimising the exact :math:`\frac1T\sum_{t<T}\mathbb E\|\nabla F(w^t)\|^2` of AFL-DGA on
    ``fed`` along ``part`` (``N`` clients, ``T`` rounds), beside Corollary 1's :math:`\eta=\sqrt N/(L\sqrt T)`
    with ``L = fed.L`` (the largest client curvature).

    Claim checked: none of the paper's; this answers the practitioner's question exactly on the instance.
    ``eta`` is searched in ``[1e-3 min(eta_prescribed, 1/L), 4/L]`` (log scale) by
    :func:`fltheory.tuning.minimise`; a step size for which the exact moments diverge counts as ``+inf``.

    >>> import fltheory as flt, numpy as np
    >>> from fltheory.schedules import synchronous_participation
    >>> fed = flt.random_quadratic_federation(M=2, d=2, seed=3, sigma2=0.1)
    >>> part = synchronous_participation(N=2, T=4, K=1, weights=fed.weights)
    >>> r = best_step_size(fed=fed, part=part, w0=np.ones(2), budget=4)
    >>> r.names, r.ratio >= 1, r.horizon
    (('eta',), True, 4)
    """
    V.instance(fed, "fed", QuadraticFederation)
    V.instance(part, "part", Participation)
    w0 = V.array(w0, "w0", xp=np, ndim=1, shape=(fed.d,))
    N, T = np.asarray(part.P).shape
    L = float(fed.L)
    eta = float(np.sqrt(N) / (L * np.sqrt(T)))

    def error(p):
        return afl_dga_exact(fed, part, eta=p["eta"], w0=w0, mode=mode).average_grad2()

    error({"eta": eta})                       # the doors of afl_dga_exact (fed, part, w0, mode) at once
    return compare(error, [LogRange("eta", 1e-3 * min(eta, 1 / L), 4 / L)], prescribed={"eta": eta}, horizon=T,
                   engine="fltheory.papers.afl_dga.exact.afl_dga_exact",
                   error_name="(1/T) sum_{t<T} E||grad F(w^t)||^2", prescription="eta = sqrt(N)/(L sqrt(T))",
                   budget=budget, seed=seed, extra={"N": int(N), "L": L})
