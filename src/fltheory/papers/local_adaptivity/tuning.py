r"""The exactly best server rate of FedOpt with local correction at a horizon, beside Theorem 3's ``alpha = eta tau``.

Problem class: quadratic clients with additive gradient noise (an unbatched
:class:`fltheory.QuadraticFederation`), full participation, clients running ``tau`` steps of
preconditioned GD with rate ``eta`` (``precond``; ``None`` is plain GD).  Method: the round map of
:mod:`.exact` with a correction (``"local"``: Theorem 3's iteration (98)).  The quantity (126) bounds,
:math:`\frac1T\sum_{t<T}\mathbb E\|\nabla F(x^{(t)})\|^2`, is computed exactly from
:func:`.exact.noise_moments` and minimised over the server rate ``alpha`` in ``(0, alpha_max)``
(:func:`.exact.alpha_max`: the exact convergence limit of the round map) with
:func:`fltheory.tuning.compare`.
"""
from __future__ import annotations

import numpy as np

from ... import validation as V
from ...problems import QuadraticFederation
from ...tuning import LogRange, StepSizeComparison, compare
from .exact import alpha_max, noise_moments

__all__ = ["best_step_size"]


def best_step_size(*, fed, eta: float, tau: int, T: int, x0, precond=None, correction: str = "local",
                   budget: int = 24, seed: int = 0) -> StepSizeComparison:
    r"""The server rate ``alpha`` minimising the exact :math:`\frac1T\sum_{t<T}\mathbb E\|\nabla F(x^{(t)})\|^2`
    after ``T`` rounds, beside Theorem 3's :math:`\alpha=\eta\tau` ((127) with common ``eta``, ``tau``).

    Claim checked: none of the paper's; this answers the practitioner's question exactly on the instance.
    ``alpha`` is searched on a log scale in ``[1e-3 min(eta tau, alpha_max), alpha_max]``, with
    ``alpha_max`` (reported in ``extra``) the supremum of the server rates for which the round map
    converges.

    >>> import fltheory as flt, numpy as np
    >>> fed = flt.random_quadratic_federation(M=3, d=2, seed=1, sigma2=0.01)
    >>> r = best_step_size(fed=fed, eta=0.1, tau=5, T=5, x0=np.ones(2), budget=4)
    >>> r.names, r.ratio >= 1, r.best["alpha"] < r.extra["alpha_max"]
    (('alpha',), True, True)
    """
    V.instance(fed, "fed", QuadraticFederation)
    if fed.batch_shape:
        raise V.InputError(f"fed must be one federation (no batch axes); got batch {fed.batch_shape}")
    eta = V.real(eta, "eta", low=0.0, open_low=True)
    tau = V.integer(tau, "tau", low=1, high=10**6)
    T = V.integer(T, "T", low=1, high=10**5)
    x0 = V.array(x0, "x0", xp=np, ndim=1, shape=(fed.d,))
    a_max = float(alpha_max(fed, eta=eta, tau=tau, precond=precond, correction=correction))
    a_pres = eta * tau
    Hbar, xs = np.asarray(fed.Hbar), np.asarray(fed.x_star)
    H2 = Hbar @ Hbar

    def error(p):
        m = noise_moments(fed, eta=eta, tau=tau, alpha=p["alpha"], x0=x0, T=T, precond=precond,
                          correction=correction)
        e = np.asarray(m.mean)[:-1] - xs
        g2 = np.einsum("ti,ij,tj->t", e, H2, e) + np.einsum("ij,tji->t", H2, np.asarray(m.cov)[:-1])
        return float(g2.mean())

    return compare(error, [LogRange("alpha", 1e-3 * min(a_pres, a_max), a_max)], prescribed={"alpha": a_pres},
                   horizon=T, engine="fltheory.papers.local_adaptivity.exact.noise_moments",
                   error_name="(1/T) sum_{t<T} E||grad F(x_t)||^2", prescription="alpha = eta tau (Theorem 3, (127))",
                   budget=budget, seed=seed, extra={"alpha_max": a_max}, fixed={"eta": eta})
