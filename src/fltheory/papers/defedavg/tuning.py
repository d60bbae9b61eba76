r"""The exactly best learning rates of DeFedAvg-IID at a horizon, beside Theorem 2's prescription.

Problem class: ``N`` identical quadratic clients :math:`F_i(w)=\frac12\sum_ja_jw_j^2` with gradient noise of
trace ``sigma2`` (:func:`.exact.iid_federation`).  Method: DeFedAvg-IID, ``K`` local steps of rate
``eta_bar``, the first ``n`` arrivals applied with server rate ``eta``, every model ``lam`` rounds stale
(:func:`.events.iid_oracle` with ``delay="constant"``).  The quantity Theorems 1-2 bound,
:math:`\frac1T\sum_{t<T}\mathbb E\|\nabla F(w^t)\|^2`, is computed exactly by :func:`.exact.moments`
and minimised over ``eta_bar`` (and ``eta``) with :func:`fltheory.tuning.compare`.
"""
from __future__ import annotations

import numpy as np

from ... import validation as V
from ...tuning import LogRange, StepSizeComparison, compare, tuned_names
from . import bounds as Bd
from .events import iid_oracle
from .exact import iid_federation, moments, running_average

__all__ = ["best_step_size"]

_TUNABLE = ("eta_bar", "eta")


def best_step_size(*, a, sigma2: float, N: int, n: int, K: int, T: int, lam: int, x0, tune=("eta_bar",),
                   budget: int = 24, seed: int = 0) -> StepSizeComparison:
    r"""The rates minimising the exact :math:`\frac1T\sum_{t<T}\mathbb E\|\nabla F(w^t)\|^2` of DeFedAvg-IID
    after ``T`` rounds, beside Theorem 2's :math:`\eta=\sqrt{nK\Phi_0/2}`,
    :math:`\bar\eta=1/(K\sqrt{\sigma^2LT})` (:func:`.bounds.prescribed_rates`, ``L = max a``,
    :math:`\Phi_0=F(x_0)-F^*`).

    Claim checked: none of the paper's; this answers the practitioner's question exactly on the instance.
    ``tune`` names the rates searched (``"eta_bar"``, ``"eta"`` or both; the first is the curve's axis);
    the others stay at their prescribed values.  Each rate ``r`` is searched on a log scale in
    ``[1e-3 min(r_prescribed, s), 4 s]`` with ``s = 1/(K L eta)`` for ``eta_bar`` (``1/(K L eta_bar)`` for
    ``eta``) at the prescribed other rate.

    >>> r = best_step_size(a=[1.0, 0.5], sigma2=1.0, N=2, n=1, K=1, T=5, lam=1, x0=[2.0, 2.0], budget=4)
    >>> r.names, r.ratio >= 1, r.horizon
    (('eta_bar',), True, 5)
    """
    a = V.array(a, "a", xp=np, ndim=1, low=0.0, open_low=True)
    N = V.integer(N, "N", low=1, high=10**4)
    n = V.integer(n, "n", low=1, high=N)
    K = V.integer(K, "K", low=1, high=10**4)
    T = V.integer(T, "T", low=1, high=10**5)
    lam = V.integer(lam, "lam", low=0, high=10**4)
    x0 = V.array(x0, "x0", xp=np, ndim=1)
    if x0.shape != a.shape:
        raise V.InputError(f"x0 must have one entry per eigenvalue in a: shape {a.shape} like a; got x0 of shape "
                           f"{x0.shape}")
    tune = tuned_names(tune, _TUNABLE)
    fed = iid_federation(a=a, N=N, sigma2=sigma2)
    L, Phi0 = float(a.max()), float(0.5 * (a * x0 * x0).sum())
    rates = Bd.prescribed_rates(n=n, K=K, T=T, L=L, sigma2=sigma2, Phi0=Phi0)
    pres = {"eta_bar": rates.eta_bar, "eta": rates.eta}
    sched = iid_oracle(N=N, n=n, T=T, delay="constant", lam=lam)

    def error(p):
        q = {**pres, **p}
        g = np.asarray(moments(fed, sched, K=K, eta=q["eta"], eta_bar=q["eta_bar"], x0=x0).grad_sq)[:-1, 0]
        return float(running_average(g)[-1])

    def box(name):
        s = 1.0 / (K * L * pres["eta" if name == "eta_bar" else "eta_bar"])
        return LogRange(name, 1e-3 * min(pres[name], s), 4 * s)

    return compare(error, [box(t) for t in tune], prescribed={t: pres[t] for t in tune}, horizon=T,
                   engine="fltheory.papers.defedavg.exact.moments", error_name="(1/T) sum_{t<T} E||grad F(w^t)||^2",
                   prescription="eta = sqrt(n K Phi0/2), eta_bar = 1/(K sqrt(sigma^2 L T)) (Theorem 2)",
                   budget=budget, seed=seed, extra={"L": L, "Phi0": Phi0, "eta_prescribed": rates.eta,
                                                    "eta_bar_prescribed": rates.eta_bar})
