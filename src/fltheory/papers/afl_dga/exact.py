r"""Exact AFL-DGA on quadratic clients: the schedule-driven dynamics as affine register assignments.

Problem class
-------------
``QuadraticFederation`` (unbatched) with optional additive gradient noise
(``Cov nu_i = Sigma_i``, drawn afresh at every local iteration, independent of everything else).

Method
------
For a fixed :class:`fltheory.schedules.Participation` every operation of AFL-DGA (see
:mod:`.algorithm`) is an affine assignment with fresh noise on a fixed set of registers (in
``y = x - x*`` coordinates): the server models ``w^0..w^T``, one model per client -- client
states *persist across rounds* and carry their pending corrections --, one gradient sum
:math:`S_i^r` per client and round (so a stored gradient and its noise are *reused*, not redrawn,
while the client is idle), and a scratch register for the current noisy gradient.
:class:`fltheory.delayed_registers.RegisterMoments` propagates their exact means and second moments, so
:math:`\mathbb E\|w^t-x^*\|^2`, :math:`\mathbb E\|\nabla F(w^t)\|^2` and :math:`\mathbb E F(w^t)`
are exact numbers (no Monte Carlo).  It is written independently of the simulator: the
correction of round ``h`` is applied right before the local iteration whose running count equals
``A[i, h]`` (``A`` is non-decreasing with ``A >= C``, which is the simulator's rule), and
:math:`\eta\bar g^h` is read off the server registers as :math:`w^h-w^{h+1}`.

Example
-------
>>> import numpy as np, fltheory as flt
>>> from fltheory.schedules import Participation
>>> from fltheory.papers.afl_dga import afl_dga, afl_dga_exact
>>> fed = flt.random_quadratic_federation(M=2, d=2, seed=3, sigma2=0.1)
>>> part = Participation([[1, 0, 1, 0], [1, 1, 1, 1]], K=2, D=1, weights=fed.weights)
>>> mom = afl_dga_exact(fed, part, eta=0.1, w0=np.ones(2))
>>> noiseless = flt.QuadraticFederation(fed.H, fed.x_opt, fed.weights)
>>> bool(np.allclose(mom.mean, afl_dga(noiseless, part, eta=0.1, w0=np.ones(2)).w, atol=1e-12))
True
>>> bool(np.all(mom.mse >= ((mom.mean - fed.x_star) ** 2).sum(-1) - 1e-12))     # noise adds variance
True
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ... import validation as V
from ...delayed import RegisterMoments
from ...problems import QuadraticFederation
from ...schedules import Participation
from .algorithm import _unbatched, correction_coefficients

__all__ = ["AFLDGAMoments", "afl_dga_exact"]


@dataclass(frozen=True)
class AFLDGAMoments:
    """Exact moments of an AFL-DGA run.

    ``mean`` (T+1, d) of the server models; ``mse`` (T+1,) :math:`\\mathbb E\\|w^t-x^*\\|^2`;
    ``grad2`` (T+1,) :math:`\\mathbb E\\|\\nabla F(w^t)\\|^2`; ``loss`` (T+1,) :math:`\\mathbb E F(w^t)`;
    ``client_mean`` (N, d) and ``client_mse`` (N,) of the client models at the end (with their
    pending corrections); ``cov`` (T+1, d, d) the covariance of every server model.
    """

    mean: np.ndarray
    mse: np.ndarray
    grad2: np.ndarray
    loss: np.ndarray
    client_mean: np.ndarray
    client_mse: np.ndarray
    cov: np.ndarray

    def average_grad2(self) -> float:
        """:math:`\\frac1T\\sum_{t<T}\\mathbb E\\|\\nabla F(w^t)\\|^2` (the left-hand side of Theorem 1)."""
        return float(self.grad2[:-1].mean())


def afl_dga_exact(fed: QuadraticFederation, part: Participation, *, eta: float, w0, mode: str = "analysis") -> AFLDGAMoments:
    """Exact means and second moments of AFL-DGA (module docstring) in any correction mode.

    Parameters
    ----------
    fed : an unbatched ``QuadraticFederation`` (its ``noise_cov`` is the gradient noise); its
        weights are the server weights and must equal ``part.weights``.
    part : the schedule ``P``, ``K``, ``D``.
    eta : the step size.
    w0 : the initial model (d,), shared by the server and every client.
    mode : ``"analysis"``, ``"paper_text"`` or ``"alg1_literal"``.
    """
    fed, part, eta, w0, mode = _unbatched(fed, part, eta, w0, mode, "afl_dga_exact")
    H, xo = np.asarray(fed.H, float), np.asarray(fed.x_opt, float)
    xs = np.asarray(fed.x_star, float)
    Sig = None if fed.noise_cov is None else np.asarray(fed.noise_cov, float)
    p = np.asarray(fed.weights, float)
    P, K, A, lam = part.P, part.K, part.A, part.lam
    N, T = P.shape
    d = fed.d
    alpha, beta = correction_coefficients(part, mode)
    n_reg = T + 1 + N + N * T + 1
    V.check_size((n_reg * d) ** 2, "the exact second moments", limit=5 * 10**7,
                 hint="use fewer rounds or clients, or the Monte Carlo simulator afl_dga")

    def srv(r):
        return r

    def cli(i):
        return T + 1 + i

    def gsum(i, r):
        return T + 1 + N + i * T + r

    scratch = n_reg - 1
    y0 = w0 - xs
    mean = np.zeros((n_reg, d))
    mean[srv(0)] = y0
    mean[T + 1:T + 1 + N] = y0
    rm = RegisterMoments(n_reg, d, mean=mean.reshape(-1))
    I = np.eye(d)
    due = [dict() for _ in range(N)]
    for i in range(N):
        for h in range(T):
            due[i].setdefault(int(A[i, h]), []).append(h)
    count = [0] * N
    for r in range(T):
        for i in range(N):
            if not P[i, r]:
                continue
            for _ in range(int(K[i, r])):
                for h in due[i].get(count[i], []):
                    # w_i <- w_i - alpha (w^h - w^{h+1}) + eta beta S_i^h
                    src, mats = [cli(i), srv(h), srv(h + 1)], [I, -alpha[i, h] * I, alpha[i, h] * I]
                    if P[i, h] and beta[i, h] != 0:
                        src.append(gsum(i, h))
                        mats.append(eta * beta[i, h] * I)
                    rm.assign([cli(i)], [src], np.array([mats]))
                rm.assign([scratch], [[cli(i)]], H[i][None, None], offset=(H[i] @ (xs - xo[i]))[None],
                          noise=None if Sig is None else Sig[i][None])
                rm.assign([cli(i), gsum(i, r)], [[cli(i), scratch], [gsum(i, r), scratch]],
                          np.array([[I, -eta * I], [I, I]]))
                count[i] += 1
        src = [srv(r)] + [gsum(i, int(lam[i, r])) for i in range(N)]
        mats = [I] + [-eta * p[i] / K[i, lam[i, r]] * I for i in range(N)]
        rm.assign([srv(r + 1)], [src], np.array([mats]))

    means = np.stack([rm.register_mean(srv(t)) for t in range(T + 1)])
    second = np.stack([rm.block(srv(t), srv(t)) for t in range(T + 1)])
    Hbar = np.asarray(fed.Hbar, float)
    mse = np.trace(second, axis1=-2, axis2=-1)
    grad2 = np.einsum("ij,tjk,ki->t", Hbar, second, Hbar)
    loss = float(fed.loss(xs)) + 0.5 * np.einsum("ij,tji->t", Hbar, second)
    cm = np.stack([rm.register_mean(cli(i)) for i in range(N)])
    cmse = np.array([np.trace(rm.block(cli(i), cli(i))) for i in range(N)])
    cov = second - means[:, :, None] * means[:, None, :]
    if not np.all(np.isfinite(mse)):   # one configuration: an overflow is an error naming eta (as delayed's moments)
        first = int(np.argmax(~np.isfinite(mse)))
        raise V.InputError(f"the exact moments left the floating-point range (E||w^t - x*||^2 is not finite from step "
                           f"{first}): the step size eta={eta:g} makes AFL-DGA diverge on this federation; use a "
                           f"smaller eta")
    return AFLDGAMoments(means + xs, mse, grad2, loss, cm + xs, cmse, cov)
