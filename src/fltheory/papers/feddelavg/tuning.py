r"""The exactly best mixing weight (and step size) of FedDelAvg at a horizon, beside the paper's ``alpha*``.

Problem class: quadratic clients, GD, no noise (an unbatched :class:`fltheory.QuadraticFederation`).
Method: FedDelAvg with period ``tau``, delay ``Delta``, weight ``alpha``, step ``eta``.  The quantity
Theorem 1 bounds (as its proof establishes it, the corrected output set
:math:`\{w(k\tau-\Delta)\}_{k=1}^K`), :math:`\min_{1\le k\le K}F(w(k\tau-\Delta))-F(w^*)`, is computed exactly
by :func:`.exact.exact_trajectory` and minimised over ``alpha`` (and ``eta``) with
:func:`fltheory.tuning.compare`.
"""
from __future__ import annotations

import numpy as np

from ... import validation as V
from ...problems import QuadraticFederation
from ...tuning import LogRange, StepSizeComparison, compare, tuned_names
from .algorithm import check_parameters
from .bounds import alpha_star
from .exact import exact_trajectory, quadratic_constants

__all__ = ["best_step_size"]

_TUNABLE = ("alpha", "eta")


def best_step_size(*, fed, eta: float, tau: int, Delta: int, K: int, w_init=None, tune=("alpha",),
                   budget: int = 24, seed: int = 0) -> StepSizeComparison:
    r"""The ``alpha`` (and ``eta``) minimising the exact :math:`\min_{1\le k\le K}F(w(k\tau-\Delta))-F(w^*)`
    after ``K`` periods, beside the paper's :math:`\alpha^*` (:func:`.bounds.alpha_star`, the minimiser of the
    bound :math:`\psi(\alpha,\infty)`, at the given ``eta`` with the constants of
    :func:`.exact.quadratic_constants`) and the given ``eta``.

    Claim checked: none of the paper's; this answers the practitioner's question exactly on the instance
    (``alpha*`` minimises an asymptotic bound; here the exact error at the horizon decides).  ``tune`` names the
    parameters searched (``"alpha"``, ``"eta"`` or both; the first is the curve's axis): ``alpha`` in
    ``[1e-3, 1]`` and ``eta`` in ``[1e-3 min(eta, 1/beta), 2/beta]``, both on a log scale (``beta = fed.L``).

    >>> import fltheory as flt
    >>> fed = flt.random_quadratic_federation(M=3, d=2, kappa=4, seed=2)
    >>> r = best_step_size(fed=fed, eta=0.1, tau=4, Delta=3, K=3, budget=4)
    >>> r.names, r.ratio >= 1, 0 < r.best["alpha"] <= 1
    (('alpha',), True, True)
    """
    V.instance(fed, "fed", QuadraticFederation)
    if fed.batch_shape:
        raise V.InputError(f"fed must be one federation (no batch axes); got batch {fed.batch_shape}")
    eta = V.real(eta, "eta", low=0.0, open_low=True)
    tau, _, _, _ = check_parameters(tau=tau, Delta=Delta, alpha=1.0, eta=eta)
    Delta = V.integer(Delta, "Delta", low=0, high=tau)
    K = V.integer(K, "K", low=1, high=10**5)
    if w_init is not None:
        w_init = V.array(w_init, "w_init", xp=np, ndim=1, shape=(fed.d,))
    tune = tuned_names(tune, _TUNABLE)
    beta, L, delta = (float(v) for v in quadratic_constants(fed))
    a_star = float(alpha_star(eta=eta, beta=beta, L=L, delta=delta, tau=tau, Delta=Delta))
    pres = {"alpha": a_star, "eta": eta}
    F_star = float(fed.loss(fed.x_star))

    def error(p):
        q = {**pres, **p}
        tr = exact_trajectory(fed, eta=q["eta"], tau=tau, Delta=Delta, alpha=q["alpha"], K=K, w_init=w_init)
        return float(np.min(np.asarray(tr.losses)[1:])) - F_star

    boxes = {"alpha": LogRange("alpha", 1e-3, 1.0), "eta": LogRange("eta", 1e-3 * min(eta, 1 / beta), 2 / beta)}
    return compare(error, [boxes[t] for t in tune], prescribed={t: pres[t] for t in tune}, horizon=K,
                   engine="fltheory.papers.feddelavg.exact.exact_trajectory",
                   error_name="min_{1<=k<=K} F(w(k tau - Delta)) - F(w*)",
                   prescription="alpha = alpha*(eta, beta, L, delta, tau, Delta) (Sec. III-A), eta as given",
                   budget=budget, seed=seed, extra={"beta": beta, "L": L, "delta": delta, "alpha_star": a_star},
                   fixed={k: v for k, v in pres.items() if k not in tune})
