"""Exact analysis of FedOpt with fixed-preconditioner clients on quadratics (Wang et al., Local Adaptivity in Federated Learning).

Problem class
-------------
Quadratic clients ``F_i(x) = 1/2 (x - x_i*)^T H_i (x - x_i*)`` (a
:class:`~fltheory.problems.QuadraticFederation`), each running ``tau_i`` steps of preconditioned
gradient descent ``y <- y - eta_i P_i grad F_i(y)`` with a fixed SPD ``P_i`` (``P_i = I`` is
local GD), restarted every round; the server takes ``x <- x - alpha * Delta``.

Method
------
One local run is affine (Theorem 2, eq. (90)): ``A_i(x) = K_i (x - x_i*) + x_i*`` with
``K_i = (I - eta_i P_i H_i)^{tau_i}``.  ``P_i H_i`` is similar to the symmetric
``S_i = P_i^{1/2} H_i P_i^{1/2} = U_i diag(lambda_i) U_i^T``, so ``K_i`` is computed once per
client from an eigen-decomposition with elementwise powers ``(1 - eta_i lambda)^{tau_i}``
(heterogeneous ``tau_i`` cost nothing extra).  One round is then ``x+ = (I - alpha C) x + alpha c``
with

==========  ============================================  ==============================================
correction  ``C``                                         fixed point
==========  ============================================  ==============================================
``none``    ``C_0 = sum_i w_i (I - K_i)``                 ``x~ = C_0^{-1} sum w_i (I-K_i) x_i*`` (Thm 2)
``local``   ``C_L = sum_i w_i N_i^{-1} (I - K_i)``        ``x^ = C_L^{-1} sum w_i N_i^{-1}(I-K_i) x_i*``
``joint``   ``N_s^{-1} C_L``, ``N_s = sum w_i N_i^{-1}``  ``x^`` (unchanged by ``N_s``)
==========  ============================================  ==============================================

with the local correction matrix ``N_i = eta_i tau_i P_i``.  With additive gradient noise the mean
follows the same map and the covariance ``Sigma+ = R Sigma R^T + Q`` (:func:`noise_moments`), so
``E||x_t - x~||^2`` is exact.

Statements realised here: Theorem 2 (fixed point, exact), its limit (8) (exact),
eq. (9) (exact identity), the first-order bias (tight to O(eta^2)), and the
exact convergence condition ``0 < alpha < alpha_max`` of the round map (necessary and sufficient).

Batch axes
----------
``eta`` and ``tau`` (and ``gamma``) are *client parameters*
(:func:`fltheory.validation.client_parameter`): a scalar is common to every client; an array's
last axis is the client axis, of length ``M`` (one value per client) or 1 (common to every
client), and the axes before it are configurations, broadcast against the federation's batch
axes.  Mark a 1-D array: ``fltheory.per_client([...])`` (M values, one run) or
``fltheory.per_configuration([...])`` (a sweep, one run per value); a plain 1-D array of several
values is refused, since with ``M`` values it could mean either.  ``alpha`` is per configuration
only.

Example
-------
>>> import numpy as np, fltheory as flt
>>> from fltheory.papers.local_adaptivity import exact
>>> H = np.array([[[2, .5], [.5, 1]], [[1, 0], [0, 4]], [[3, -1], [-1, 2]]], float)
>>> fed = flt.QuadraticFederation(H, [[1, 0], [0, 2], [-1, -1]], [.5, .3, .2])
>>> P = np.array([np.diag(1 / np.diag(h)) for h in H])          # Jacobi preconditioners
>>> np.round(exact.fixed_point(fed, eta=0.1, tau=5, precond=P).x, 10).tolist()
[0.3230642062, 0.6596152707]
>>> np.round(exact.fixed_point(fed, eta=0.1, tau=5, precond=P, correction="local").x, 10).tolist()
[0.2746960047, 1.1375391711]
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ...backend import asarray, device_chunk, mT, matvec, to_numpy, trace, weighted_sum
from ...linear import AffineMap, Deferred, FixedPoint, Moments, one_minus_power, spectral_radius
from ...parallel import run_parts
from ... import validation as V
from ...problems import ProblemError, QuadraticFederation, check_spd

__all__ = [
    "LocalOperators",
    "local_operators",
    "round_operators",
    "client_maps",
    "round_map",
    "fixed_point",
    "small_eta_limit",
    "first_order_bias",
    "alpha_max",
    "pseudo_gradient",
    "client_covariances",
    "noise_moments",
    "assumption_constants",
    "CORRECTIONS",
]

CORRECTIONS = ("none", "local", "joint")


@dataclass(frozen=True)
class LocalOperators:
    """The per-client pieces of one round (arrays with a client axis ``(..., M, ...)``).

    Computed from the eigen-decomposition of ``P_i^{1/2} H_i P_i^{1/2}`` (needed for the noise
    covariances); :func:`round_operators` gets ``K_i`` by powering instead, and the tests check that
    the two agree.  ``K``: ``(I - eta_i P_i H_i)^{tau_i}``; ``Ninv``: ``N_i^{-1}``, ``N_i = eta_i tau_i P_i``;
    ``NinvImK``: ``N_i^{-1}(I - K_i)`` (symmetric); ``lam``: eigenvalues of ``P_i H_i``;
    ``step``: ``I - eta_i P_i H_i`` in factored form ``(Ph, U, dstep, Pmh)`` so that
    ``step^j = Ph U diag(dstep^j) U^T Pmh``; ``eta``, ``tau``: broadcast to ``(..., M)``.
    """

    K: Any
    Ninv: Any
    NinvImK: Any
    lam: Any
    Ph: Any
    Pmh: Any
    U: Any
    dstep: Any
    eta: Any
    tau: Any


TAU_MAX = 2**31 - 1  # local steps per round (the closed forms power in O(log tau))


def _check_fed(fed):
    V.instance(fed, "fed", QuadraticFederation)


def _as_eta_tau(fed: QuadraticFederation, eta, tau, eta_name="eta"):
    """``eta`` and ``tau`` broadcast to ``(..., M)``: the client-parameter convention of
    :func:`fltheory.validation.client_parameter` (last axis clients, ``per_client`` /
    ``per_configuration`` marks, a plain 1-D array of several values refused)."""
    _check_fed(fed)
    xp = fed.xp
    eta = V.client_parameter(eta, eta_name, M=fed.M, xp=xp, low=0.0, open_low=True)
    tau_np = V.client_parameter(tau, "tau", M=fed.M, xp=np, kind="integer", low=1, high=TAU_MAX)
    batch = fed.batch_shape
    try:
        shape = np.broadcast_shapes(batch + (fed.M,), eta.shape, tau_np.shape)
    except ValueError:
        raise ProblemError(f"{eta_name} {tuple(eta.shape)} and tau {tuple(tau_np.shape)} do not broadcast against the "
                           f"federation's (batch, M) = {batch + (fed.M,)}") from None
    return xp.broadcast_to(eta, shape), xp.broadcast_to(xp.asarray(tau_np.astype(np.int64)), shape)


def _real(tau, xp):
    """The integer ``tau`` as float64 (the standard does not mix integer and floating arrays)."""
    return xp.astype(tau, xp.float64)


def _one_minus_pow(x, tau, xp):
    """``1 - (1 - x)^tau`` elementwise (the eigenvalues of ``I - K``), without cancellation as ``x -> 0``:
    ``-expm1(tau log1p(-x))`` for ``0 <= x < 1``, the direct form elsewhere."""
    small = (x >= 0) & (x < 1)
    return xp.where(small, -xp.expm1(tau * xp.log1p(-xp.where(small, x, 0.0))), 1.0 - (1.0 - x) ** tau)


def _sqrt_spd(P, xp, name="precond"):
    """``(P^{1/2}, P^{-1/2})`` of an SPD ``P`` (validated by :func:`_check_spd`); elementwise when diagonal."""
    d = P.shape[-1]
    diag = _check_spd(P, xp, name)
    if diag is not None:
        sq = xp.sqrt(diag)
        return sq[..., None] * xp.eye(d), (1.0 / sq)[..., None] * xp.eye(d)
    lam, V = xp.linalg.eigh(0.5 * (P + mT(P)))
    sq = xp.sqrt(lam)
    Vt = mT(V)
    return (V * sq[..., None, :]) @ Vt, (V * (1.0 / sq)[..., None, :]) @ Vt


def local_operators(fed: QuadraticFederation, *, eta, tau, precond=None) -> LocalOperators:
    """``K_i``, ``N_i^{-1}`` and ``N_i^{-1}(I - K_i)`` for every client, in the eigenbasis.

    ``eta``: scalar or a client parameter (module docstring, *Batch axes*); ``tau``: int or the same; ``precond``:
    ``None`` (``P_i = I``) or SPD ``(..., M, d, d)``.
    """
    _check_fed(fed)
    xp = fed.xp
    eta, tau = _as_eta_tau(fed, eta, tau)
    d = fed.d
    if precond is None:
        Ph = Pmh = xp.broadcast_to(xp.eye(d), fed.H.shape)
        S = fed.H
    else:
        P = _precond(fed, precond)
        Ph, Pmh = _sqrt_spd(P, xp)
        S = Ph @ fed.H @ Ph
    lam, U = xp.linalg.eigh(0.5 * (S + mT(S)))
    x = eta[..., None] * lam
    dstep = 1.0 - x  # eigenvalues of I - eta P H
    ftau = _real(tau, xp)
    powk = dstep ** ftau[..., None]
    one_minus = _one_minus_pow(x, ftau[..., None], xp)
    # N^{-1}(I-K) = (eta tau)^{-1} P^{-1/2} U diag(1 - d^tau) U^T P^{-1/2}, symmetric
    g = one_minus / (eta * ftau)[..., None]
    left, right = Pmh @ U, mT(U) @ Pmh  # matmul chains: a 5-operand einsum is O(d^5)
    NinvImK = (left * g[..., None, :]) @ right
    K = ((Ph @ U) * powk[..., None, :]) @ right
    eye = xp.broadcast_to(xp.eye(d), fed.H.shape)
    Ninv = (eye if precond is None else xp.linalg.solve(P, eye)) / (eta * ftau)[..., None, None]
    return LocalOperators(K, Ninv, NinvImK, lam, Ph, Pmh, U, dstep, eta, tau)


class RoundOperators:
    """What one round needs, per client (client axis -3): ``ImK = I - K_i`` with
    ``K_i = (I - eta_i P_i H_i)^{tau_i}``, computed without cancellation
    (:func:`~fltheory.linear.one_minus_power`); ``K``, ``Ninv = N_i^{-1}`` and
    ``NinvImK = N_i^{-1}(I - K_i)`` (``N_i = eta_i tau_i P_i``) follow on first use, by solves
    with ``P_i`` (elementwise for a diagonal ``P_i``), never through ``P_i^{-1/2}``."""

    def __init__(self, ImK, eta, tau, P=None, diagP=None):
        self.ImK, self.eta, self.tau, self.P, self.diagP = ImK, eta, tau, P, diagP
        self._cache = {}

    def _xp(self):
        from ...backend import namespace  # noqa: PLC0415

        return namespace(self.ImK)

    def _Pinv(self, X):
        """``P_i^{-1} X`` (``X`` with the client axis at -3)."""
        xp = self._xp()
        if self.P is None:
            return X
        if self.diagP is not None:
            return X / self.diagP[..., :, None]
        return xp.linalg.solve(self.P, X)

    def _cached(self, key, fn):
        if key not in self._cache:
            self._cache[key] = fn()
        return self._cache[key]

    @property
    def K(self):
        return self._cached("K", lambda: self._xp().eye(self.ImK.shape[-1]) - self.ImK)

    @property
    def Ninv(self):
        xp = self._xp()
        eye = xp.broadcast_to(xp.eye(self.ImK.shape[-1]), self.ImK.shape)
        return self._cached("Ninv", lambda: self._Pinv(eye) / (self.eta * _real(self.tau, xp))[..., None, None])

    @property
    def NinvImK(self):
        xp = self._xp()
        return self._cached("NinvImK", lambda: self._Pinv(self.ImK) / (self.eta * _real(self.tau, xp))[..., None, None])


def round_operators(fed: QuadraticFederation, *, eta, tau, precond=None) -> RoundOperators:
    """``I - K_i``, ``K_i = (I - eta_i P_i H_i)^{tau_i}``, by batched binary powering on
    ``I - K`` itself (per-client ``tau_i`` through masks): ``popcount + bitlength - 2`` batched
    products, no eigen-decomposition, no cancellation as ``eta -> 0``; this is what makes the
    closed-form fixed point cheap and accurate (see benchmarks/).  Same values as
    :func:`local_operators` to rounding.

    Batch axes: ``eta`` and ``tau`` are client parameters (module docstring, *Batch axes*).
    """
    _check_fed(fed)
    xp = fed.xp
    eta, tau = _as_eta_tau(fed, eta, tau)
    P = _precond(fed, precond)
    return _round_ops(fed.H, eta, tau, P, xp)


def _precond(fed: QuadraticFederation, precond):
    """``precond`` validated as ``(..., M, d, d)`` reals (SPD is checked where it is used), or None."""
    if precond is None:
        return None
    P = V.array(precond, "precond", xp=fed.xp, min_ndim=3)
    if P.shape[-3:] != (fed.M, fed.d, fed.d):
        raise ProblemError(f"precond must have shape (..., M={fed.M}, d={fed.d}, d={fed.d}); got {tuple(P.shape)}")
    return P


def _check_spd(P, xp, name="precond"):
    """Refuse a non-symmetric or non-positive-definite ``P`` (Theorem 2's ``P_i``); its diagonal if it is diagonal."""
    return check_spd(P, xp, name, why="P_i SPD, Theorem 2")


def _round_ops(H, eta, tau, P, xp, *, diagP=None, checked=False, uniform_tau=None) -> RoundOperators:
    """The kernel of :func:`round_operators` on arrays (any subset of clients along axis -3).

    ``checked``: ``P`` was already validated (``diagP`` its diagonal if it is diagonal);
    ``uniform_tau``: the common ``tau`` if known to be common (``None``: find out)."""
    if P is None:
        E = eta[..., None, None] * H
    else:
        if not checked:
            diagP = _check_spd(P, xp)
        E = (eta[..., None] * diagP)[..., :, None] * H if diagP is not None else eta[..., None, None] * (P @ H)
    if uniform_tau is None:
        uniform_tau = _common_tau(tau, xp)
    ImK = one_minus_power(E, tau if uniform_tau is None else uniform_tau)
    return RoundOperators(ImK, eta, tau, P, diagP)


def _common_tau(tau, xp):
    """The common value of ``tau`` (an int) if every entry is the same, else None."""
    first = xp.reshape(tau, (-1,))[:1]
    return int(first[0]) if tau.size and bool(xp.all(tau == first)) else None


CHUNK_LIMIT = 16 * 10**6  # numbers in one (..., M, d, d) array above which fixed_point works in client chunks


def _Cc_chunked(fed: QuadraticFederation, eta, tau, precond, correction: str):
    """``C``, ``c`` of :func:`_Cc` accumulated over client chunks (memory O(chunk d^2), not O(M d^2))."""
    xp = fed.xp
    eta, tau = _as_eta_tau(fed, eta, tau)
    d, M = fed.d, fed.M
    P = _precond(fed, precond)
    batch = eta.shape[:-1]
    per = max(1, 2 * 10**6 // max(d * d * max(int(np.prod(batch)), 1), 1))
    I = xp.eye(d)
    C = xp.zeros(batch + (d, d))
    c = xp.zeros(batch + (d,))
    Ns = xp.zeros(batch + (d, d))
    H = xp.broadcast_to(fed.H, batch + (M, d, d))
    xo = xp.broadcast_to(fed.x_opt, batch + (M, d))
    w = xp.broadcast_to(fed.weights, batch + (M,))
    for a in range(0, M, per):
        sl = slice(a, min(a + per, M))
        ops = _round_ops(H[..., sl, :, :], eta[..., sl], tau[..., sl],
                         None if P is None else xp.broadcast_to(P, batch + (M, d, d))[..., sl, :, :], xp)
        T = ops.ImK if correction == "none" else ops.NinvImK
        C_part, c_part = _weighted_sums(w[..., sl], T, xo[..., sl, :], xp)
        C, c = C + C_part, c + c_part
        if correction == "joint":
            Ns = Ns + weighted_sum(w[..., sl], ops.Ninv, 2)
    if correction == "joint":
        C = xp.linalg.solve(Ns, C)
        c = xp.linalg.solve(Ns, c[..., None])[..., 0]
    return C, c


def _weighted_sums(w, T, xo, xp):
    """``sum_i w_i T_i`` and ``sum_i w_i T_i x_i*`` (matrix-vector products first: O(M d^2) for the second)."""
    return weighted_sum(w, T, 2), weighted_sum(w, (T @ xo[..., None])[..., 0])


def client_maps(fed: QuadraticFederation, *, eta, tau, precond=None) -> AffineMap:
    """Every client's local run ``A_i(x) = K_i x + (I - K_i) x_i*`` (eq. (90)), batched over clients.

    Batch axes: ``eta`` and ``tau`` are client parameters (module docstring, *Batch axes*).
    """
    _check_fed(fed)
    ops = local_operators(fed, eta=eta, tau=tau, precond=precond)
    xp = fed.xp
    b = fed.x_opt - matvec(ops.K, fed.x_opt)
    return AffineMap(ops.K, b)


def _check_correction(correction: str):
    V.choice(correction, "correction", CORRECTIONS)


def _Cc(fed: QuadraticFederation, ops: RoundOperators, correction: str):
    """The round's linear part ``C`` and constant ``c`` (x+ = x - alpha (C x - c))."""
    return _Cc_arrays(fed.weights, fed.x_opt, ops, correction, fed.xp)


def _Cc_arrays(w, xo, ops: RoundOperators, correction: str, xp):
    T = ops.ImK if correction == "none" else ops.NinvImK
    C, c = _weighted_sums(w, T, xo, xp)
    if correction == "joint":
        Ns = weighted_sum(w, ops.Ninv, 2)
        C = xp.linalg.solve(Ns, C)
        c = xp.linalg.solve(Ns, c[..., None])[..., 0]
    return C, c


def round_map(fed: QuadraticFederation, *, eta, tau, alpha=1.0, precond=None, correction: str = "none") -> AffineMap:
    """The exact round map ``x -> (I - alpha C) x + alpha c`` of FedOpt with GD server (eq. (5)).

    With ``correction="none"`` and ``alpha = 1`` this is ``x -> sum_i w_i A_i(x)``; in general it is
    the Mann iteration ``(1 - alpha) I + alpha E[A]`` (eq. (6)).

    Batch axes: ``eta`` and ``tau`` are client parameters (module docstring, *Batch axes*).
    """
    _check_fed(fed)
    _check_correction(correction)
    return _round_map(fed, round_operators(fed, eta=eta, tau=tau, precond=precond), alpha, correction)


def _round_map(fed: QuadraticFederation, ops: RoundOperators, alpha, correction: str) -> AffineMap:
    xp = fed.xp
    C, c = _Cc(fed, ops, correction)
    a = V.array(alpha, "alpha", xp=xp, low=0.0, open_low=True)
    a = a[..., None]
    return AffineMap(xp.eye(fed.d) - a[..., None] * C, a * c)


COND_LIMIT = 1e12  # condition number of the fixed-point system past which fixed_point refuses (x would keep < 4 digits)


def fixed_point(fed: QuadraticFederation, *, eta, tau, precond=None, correction: str = "none") -> FixedPoint:
    """The point FedOpt converges to: Theorem 2's ``x~`` (``none``) or the corrected ``x^``.

    Theorem 2 (eq. (94)); exact.  Independent of the server rate ``alpha`` (and of ``N_s`` for
    joint correction).  ``I - K_i`` is computed without cancellation and ``N_i^{-1}`` by solves
    with ``P_i``, so the accuracy of ``x`` is set by the conditioning of the system, not by the
    formula.  The result carries:

    * ``residual``: ``||C x - c||``, the norm of the pseudo-gradient at ``x`` (Fig. 1(a)'s
      quantity for ``none``);
    * ``condition``: the 1-norm condition number of ``C`` (``C = sum_i w_i (I - K_i)`` or its
      corrected form).  A system with ``condition > COND_LIMIT = 1e12`` (or exactly singular:
      no unique fixed point) raises :class:`~fltheory.problems.ProblemError` naming the
      configurations; below it, ``x`` has about ``16 - log10(condition)`` correct digits;
    * ``spectral_radius`` / ``converges``: of the round map with server rate ``alpha = 1``,
      i.e. whether those rounds reach ``x``.  Where they do not, ``x`` is a fixed point of a
      divergent map, not a limit (``alpha_max`` gives the server rates that converge, if any).
      They are computed on first access (one eigenvalue problem per configuration, which can
      cost more than the fixed point itself).

    Batch axes: ``eta``, ``tau`` are client parameters (module docstring, *Batch axes*): ``per_client``
    values differ between clients, ``per_configuration`` values make a sweep.

    Example
    -------
    >>> import numpy as np, fltheory as flt
    >>> from fltheory.papers.local_adaptivity import exact
    >>> fed = flt.QuadraticFederation(np.array([[[2., 0], [0, 1]], [[1., 0], [0, 3]]]), [[1., 0], [0, 1]], [.5, .5])
    >>> fp = exact.fixed_point(fed, eta=0.1, tau=4)
    >>> np.round(fp.x, 6).tolist(), bool(fp.converges), float(np.round(fp.condition, 3))
    ([0.631917, 0.68844], True, 1.181)
    >>> bool(exact.fixed_point(fed, eta=1.0, tau=4).converges)      # eta too large: not a limit
    False
    """
    _check_correction(correction)
    _check_fed(fed)
    xp = fed.xp
    d, M = fed.d, fed.M
    with np.errstate(over="ignore", invalid="ignore"):   # an overflowing round map is refused by name below
        if M * d * d > CHUNK_LIMIT:   # one configuration does not fit: accumulate over client chunks
            C, c = _Cc_chunked(fed, eta, tau, precond, correction)
            x, cond, res = _solve_fixed_point(C, c, xp)
        else:
            C, c, x, cond, res = _fixed_point_fused(fed, eta, tau, precond, correction)
    if bool(xp.any(cond > COND_LIMIT)):
        bad = np.argwhere(to_numpy(cond > COND_LIMIT).reshape(cond.shape))
        where = f" (configuration {tuple(int(i) for i in bad[0])}{f' and {len(bad) - 1} more' if len(bad) > 1 else ''})" \
            if cond.ndim else ""
        raise ProblemError(f"sum_i w_i (I - K_i) is nearly singular: condition number {float(xp.max(cond)):.3g} > "
                           f"COND_LIMIT = {COND_LIMIT:.0e}{where}; the fixed point is not determined to working "
                           f"precision")
    R = xp.eye(d) - C   # the round map of FedOpt with server rate alpha = 1
    return FixedPoint(x, res, spectral_radius=Deferred(lambda: spectral_radius(R)), condition=cond)


FUSED_CUDA = True   # on CuPy, fixed points without correction and with P_i diagonal (or none), d <= 16, by one kernel
FUSE = 2**16  # numbers of one (chunk, M, d, d) array: fixed_point works through the batch in chunks this size (cache)


def _fixed_point_fused(fed, eta, tau, precond, correction):
    """``C``, ``c``, ``x``, condition and residual, a chunk of configurations at a time along the
    leading batch axis, so that the per-client arrays of a chunk stay in cache (the work is
    memory-bound otherwise: each elementwise pass over ``(B, M, d, d)`` costs as much as a product)."""
    xp = fed.xp
    eta, tau = _as_eta_tau(fed, eta, tau)
    d, M = fed.d, fed.M
    P = _precond(fed, precond)
    bshape = np.broadcast_shapes(eta.shape[:-1], () if P is None else P.shape[:-3])
    if bshape and P is None and not fed.batch_shape and correction != "joint":
        return _fixed_point_sweep(fed, eta, tau, correction, xp)
    if not bshape:
        C, c = _Cc_arrays(fed.weights, fed.x_opt, _round_ops(fed.H, eta, tau, P, xp), correction, xp)
        return (C, c) + _solve_fixed_point(C, c, xp)
    if FUSED_CUDA and correction == "none" and d <= 16 and "cupy" in xp.__name__:   # pragma: no cover - GPUs
        diagP = None if P is None else _check_spd(P, xp)
        if P is None or diagP is not None:
            from ..._cuda_closed import fixed_points  # noqa: PLC0415

            C, c, x, cond, res = fixed_points(xp=xp, H=fed.H, x_opt=fed.x_opt, weights=fed.weights, diagP=diagP,
                                              eta=eta, tau=tau, batch=bshape, M=M, d=d)
            if not bool(xp.all(xp.isfinite(x))):
                raise ProblemError("sum_i w_i (I - K_i) is singular in some configuration: no unique fixed point "
                                   "(Theorem 2 needs it invertible)")
            return C, c, x, cond, res
    H = xp.broadcast_to(fed.H, bshape + (M, d, d))
    xo = xp.broadcast_to(fed.x_opt, bshape + (M, d))
    w = xp.broadcast_to(fed.weights, bshape + (M,))
    eta, tau = xp.broadcast_to(eta, bshape + (M,)), xp.broadcast_to(tau, bshape + (M,))
    P = None if P is None else xp.broadcast_to(P, bshape + (M, d, d))
    C, c, x = xp.empty(bshape + (d, d)), xp.empty(bshape + (d,)), xp.empty(bshape + (d,))
    cond, res = xp.empty(bshape), xp.empty(bshape)
    per_config = int(np.prod(bshape[1:])) * M * d * d
    if xp is np:   # cache-sized chunks, shared among threads
        step = max(1, FUSE // per_config)
    else:   # a device runs a chunk as one kernel per operation: chunks as large as its memory allows
        step = max(1, device_chunk(xp, per_config))
    common = _common_tau(tau, xp)

    def part(lo, hi):
        for a in range(lo, hi, step):
            # the standard: stops in bounds, every axis indexed; P is checked chunk by chunk, while in cache
            sl = (slice(a, min(a + step, hi)), ...)
            ops = _round_ops(H[sl], eta[sl], tau[sl], None if P is None else P[sl], xp, uniform_tau=common)
            C[sl], c[sl] = _Cc_arrays(w[sl], xo[sl], ops, correction, xp)
        part_ = (slice(lo, hi), ...)   # the (d, d) systems of the part: one call
        x[part_], cond[part_], res[part_] = _solve_fixed_point(C[part_], c[part_], xp)

    if xp is np:   # chunks in threads (fltheory.parallel): the same bits for any number of threads
        run_parts(part, bshape[0], align=step, min_part=2 * step)
    else:
        part(0, bshape[0])
    return C, c, x, cond, res


def _fixed_point_sweep(fed, eta, tau, correction, xp):
    """A sweep of ``(eta, tau)`` configurations over ONE federation of local-GD clients.

    ``H_i = U_i diag(lambda_i) U_i^T`` is decomposed once per client; a configuration only
    changes the scalars ``g = 1 - (1 - eta_i lambda)^{tau_i}`` (elementwise, without
    cancellation), and ``C = sum_i w_i U_i diag(g_i) U_i^T`` for every configuration at once is
    one matrix product ``(B, M d) x (M d, d^2)``; ``c`` likewise with ``(M d, d)``.
    """
    M, d = fed.M, fed.d
    lam, U = xp.linalg.eigh(fed.H)                                  # (M, d), (M, d, d): once
    w = fed.weights
    Ut = mT(U)                                                          # (M, k, i): eigenvector k of client m
    outer = Ut[:, :, :, None] * Ut[:, :, None, :]                       # u u^T per (client, eigenvector)
    Wmat = xp.reshape(w[:, None, None, None] * outer, (M * d, d * d))
    proj = np.einsum("mik,mi->mk", U, fed.x_opt) if xp is np else matvec(Ut, fed.x_opt)   # u^T x_i*
    Vmat = xp.reshape(w[:, None, None] * Ut * proj[..., None], (M * d, d))
    if xp is np:
        return _fixed_point_sweep_blocks(eta, tau, correction, lam, Wmat, Vmat, M, d)
    x = eta[..., None] * lam                                         # (..., M, d)
    g = _one_minus_pow(x, _real(tau, xp)[..., None], xp)
    if correction == "local":
        g = g / (eta * _real(tau, xp))[..., None]
    bshape = g.shape[:-2]
    G = xp.reshape(g, (-1, 1, M * d))   # one row-vector product per configuration: the same bits whatever the batch size
    C = xp.reshape(G @ Wmat, bshape + (d, d))
    c = xp.reshape(G @ Vmat, bshape + (d,))
    return (C, c) + _solve_fixed_point(C, c, xp)


def _fixed_point_sweep_blocks(eta, tau, correction, lam, Wmat, Vmat, M, d):
    """:func:`_fixed_point_sweep` on NumPy: the configurations in cache-sized blocks, shared among
    threads (every step works per configuration, so the bits are those of one call)."""
    tau = _real(tau, np)
    bshape = np.broadcast_shapes(eta.shape, tau.shape)[:-1]
    N = int(np.prod(bshape))
    eta2 = np.broadcast_to(eta, bshape + (M,)).reshape(N, M)
    tau2 = np.broadcast_to(tau, bshape + (M,)).reshape(N, M)
    C, c, x = np.empty((N, d, d)), np.empty((N, d)), np.empty((N, d))
    cond, res = np.empty(N), np.empty(N)
    step = max(1, FUSE // (M * d))

    def part(lo, hi):
        for a in range(lo, hi, step):
            b = min(a + step, hi)
            g = _one_minus_pow(eta2[a:b, :, None] * lam, tau2[a:b, :, None], np)
            if correction == "local":
                g = g / (eta2[a:b] * tau2[a:b])[..., None]
            G = g.reshape(-1, 1, M * d)   # one row-vector product per configuration: the same bits whatever the block
            C[a:b] = (G @ Wmat).reshape(-1, d, d)
            c[a:b] = (G @ Vmat).reshape(-1, d)
        x[lo:hi], cond[lo:hi], res[lo:hi] = _solve_fixed_point(C[lo:hi], c[lo:hi], np)

    run_parts(part, N, align=step, min_part=step)
    return tuple(v.reshape(bshape + v.shape[1:]) for v in (C, c, x, cond, res))


def _solve_fixed_point(C, c, xp):
    """``x = C^{-1} c`` with the 1-norm condition number of ``C`` and the residual ``||C x - c||``
    (one LU per configuration for ``x`` and ``C^{-1}`` together)."""
    d = C.shape[-1]
    if not bool(xp.all(xp.isfinite(C))):
        raise ProblemError("the local round maps K_i = prod (I - eta P_i H_i) overflow the float range at these eta and "
                           "tau in some configuration (|1 - eta lambda|^tau is too large): no fixed point can be "
                           "computed; take eta well inside the stable range (eta < 2/L for plain local steps)")
    rhs = xp.concat([c[..., None], xp.broadcast_to(xp.eye(d), C.shape)], axis=-1)
    try:
        sol = xp.linalg.solve(C, rhs)
    except np.linalg.LinAlgError:
        sol = None
    if sol is None or not bool(xp.all(xp.isfinite(sol))):
        raise ProblemError("sum_i w_i (I - K_i) is singular in some configuration (K_i the local round map of "
                           "eta, tau and P_i): no unique fixed point (Theorem 2 needs it invertible)")
    x, Cinv = sol[..., 0], sol[..., 1:]
    cond = xp.max(xp.sum(xp.abs(C), axis=-2), axis=-1) * xp.max(xp.sum(xp.abs(Cinv), axis=-2), axis=-1)
    r = (C @ x[..., None])[..., 0] - c
    return x, cond, xp.sqrt(xp.sum(r * r, axis=-1))


def small_eta_limit(fed: QuadraticFederation, *, tau, gamma=1.0, precond=None, correction: str = "none"):
    """``lim_{eta -> 0} x~`` with ``eta_i = gamma_i eta`` (eq. (8)); ``x*`` for the corrected variants.

    ``(sum_i w_i gamma_i tau_i P_i H_i)^{-1} sum_i w_i gamma_i tau_i P_i H_i x_i*``.

    Batch axes: ``gamma`` and ``tau`` are client parameters (module docstring, *Batch axes*).
    """
    _check_correction(correction)
    _check_fed(fed)
    xp = fed.xp
    gamma, tau_b = _as_eta_tau(fed, gamma, tau, eta_name="gamma")
    P = xp.broadcast_to(xp.eye(fed.d), fed.H.shape) if precond is None else V.array(precond, "precond", xp=xp, min_ndim=3)
    if P.shape[-3] not in (1, fed.M) or tuple(P.shape[-2:]) != (fed.d, fed.d):
        raise V.InputError(f"precond must have shape (..., M={fed.M}, d={fed.d}, d={fed.d}); got {tuple(P.shape)}")
    if correction != "none":
        return fed.x_star
    Wt = (fed.weights * gamma * _real(tau_b, xp))[..., None, None] * (P @ fed.H)
    A = xp.sum(Wt, axis=-3)
    b = (xp.einsum("...mij,...mj->...i", Wt, fed.x_opt) if xp is np
         else xp.sum(matvec(Wt, fed.x_opt), axis=-2))
    try:
        x = xp.linalg.solve(A, b[..., None])[..., 0]
    except np.linalg.LinAlgError:
        x = None
    if x is None or not bool(xp.all(xp.isfinite(x))) or bool(xp.any(_cond1(A, xp) > COND_LIMIT)):
        raise ProblemError("sum_i w_i gamma_i tau_i P_i H_i is singular (or nearly: condition number past "
                           f"{COND_LIMIT:.0e}) in some configuration: (8) needs it invertible; without it the fixed "
                           "point x~ does not converge as eta -> 0 (it runs off like 1/eta)")
    return x


def _cond1(A, xp):
    """The 1-norm condition number of each matrix of a batch (inf for a singular one)."""
    try:
        Ainv = xp.linalg.inv(A)
    except np.linalg.LinAlgError:
        return xp.full(A.shape[:-2], xp.inf)
    return xp.max(xp.sum(xp.abs(A), axis=-2), axis=-1) * xp.max(xp.sum(xp.abs(Ainv), axis=-2), axis=-1)


def first_order_bias(fed: QuadraticFederation, *, eta, tau, precond=None, correction: str = "local"):
    """First-order term of the fixed point's bias (exact up to O(eta^2)).

    ``x^ - x* = Hbar^{-1} sum_i w_i (tau_i - 1) eta_i / 2  H_i P_i H_i (x* - x_i*) + O(eta^2)``,
    from ``N_i^{-1}(I - K_i) = H_i - (tau_i - 1) eta_i / 2 H_i P_i H_i + O(eta_i^2)``.  For
    ``correction="none"`` it applies only when every ``N_i = eta_i tau_i P_i`` is the same matrix
    (then ``x~ = x^``; e.g. plain local GD with common ``eta``, ``tau``: the classical
    ``O(eta (tau - 1))`` bias); otherwise the bias does not vanish (use :func:`small_eta_limit`).

    Batch axes: ``eta`` and ``tau`` are client parameters (module docstring, *Batch axes*).
    """
    _check_fed(fed)
    _check_correction(correction)
    xp = fed.xp
    eta_b, tau_b = _as_eta_tau(fed, eta, tau)
    P = xp.broadcast_to(xp.eye(fed.d), fed.H.shape) if precond is None else V.array(precond, "precond", xp=xp, min_ndim=3)
    if P.shape[-3] not in (1, fed.M) or tuple(P.shape[-2:]) != (fed.d, fed.d):
        raise V.InputError(f"precond must have shape (..., M={fed.M}, d={fed.d}, d={fed.d}); got {tuple(P.shape)}")
    if correction == "none":
        N = (eta_b * _real(tau_b, xp))[..., None, None] * P
        if float(xp.max(xp.abs(N - N[..., :1, :, :]))) > 1e-12 * float(xp.max(xp.abs(N))):
            raise ProblemError("first_order_bias(correction='none') needs a common N_i = eta_i tau_i P_i; "
                               "with heterogeneous eta_i, tau_i or P_i the bias does not vanish (see small_eta_limit)")
    xs = fed.x_star
    E = (fed.weights * (_real(tau_b, xp) - 1) * eta_b / 2.0)[..., None, None] * (fed.H @ P @ fed.H)
    v = (xp.einsum("...mij,...mj->...i", E, xs[..., None, :] - fed.x_opt) if xp is np
         else xp.sum(matvec(E, xs[..., None, :] - fed.x_opt), axis=-2))
    return xp.linalg.solve(fed.Hbar, v[..., None])[..., 0]


def alpha_max(fed: QuadraticFederation, *, eta, tau, precond=None, correction: str = "none"):
    """The supremum of server rates for which FedOpt converges from every start (exact).

    ``rho(I - alpha C) < 1  iff  0 < alpha < min_lambda 2 Re(lambda) / |lambda|^2`` over the
    eigenvalues of ``C``; necessary and sufficient.  Raises when some
    eigenvalue has ``Re(lambda) <= 0`` (no server rate converges).

    Batch axes: ``eta`` and ``tau`` are client parameters (module docstring, *Batch axes*).
    """
    _check_fed(fed)
    _check_correction(correction)
    ops = round_operators(fed, eta=eta, tau=tau, precond=precond)
    xp = fed.xp
    C, _ = _Cc(fed, ops, correction)
    from ...backend import eigvals as _eigvals  # noqa: PLC0415

    lam = _eigvals(C)
    re, im = xp.real(lam), xp.imag(lam)
    if bool(xp.any(re <= 0)):
        raise ProblemError("the round map has an eigenvalue with Re(lambda) <= 0: no server rate alpha > 0 converges "
                           "(check eta_i lambda_max(P_i H_i) < 2)")
    return xp.min(2.0 * re / (re**2 + im**2), axis=-1)


def pseudo_gradient(fed: QuadraticFederation, x, *, eta, tau, precond=None, correction: str = "none"):
    """The round's pseudo-gradient at ``x``: ``x - E[A](x) = sum_i w_i (I - K_i)(x - x_i*)`` for
    ``none`` (eq. (9) at ``x = x*``), and its corrected forms; zero exactly at the fixed point.

    Batch axes: ``eta`` and ``tau`` are client parameters (module docstring, *Batch axes*).
    """
    _check_fed(fed)
    _check_correction(correction)
    ops = round_operators(fed, eta=eta, tau=tau, precond=precond)
    xp = fed.xp
    C, c = _Cc(fed, ops, correction)
    x = V.array(x, "x", xp=xp, shape=(fed.d,))
    try:
        np.broadcast_shapes(tuple(C.shape[:-2]), tuple(x.shape[:-1]))
    except ValueError:
        raise V.InputError(f"the configuration axes of x {tuple(x.shape[:-1])} and of eta, tau (and fed) "
                           f"{tuple(C.shape[:-2])} do not broadcast") from None
    return matvec(C, x) - c


def client_covariances(fed: QuadraticFederation, *, eta, tau, precond=None):
    """``Cov[A_i(x)]`` under additive gradient noise ``Sigma_i`` (independent of ``x``):

    ``eta_i^2 sum_{j < tau_i} S_i^j P_i Sigma_i P_i S_i^{jT}``, ``S_i = I - eta_i P_i H_i``,
    summed in closed form in the eigenbasis (geometric series, no loop over ``j``).

    Batch axes: ``eta`` and ``tau`` are client parameters (module docstring, *Batch axes*).
    """
    _check_fed(fed)
    xp = fed.xp
    if fed.noise_cov is None:
        return xp.zeros(fed.H.shape)
    ops = local_operators(fed, eta=eta, tau=tau, precond=precond)
    # P Sigma P = Ph (Ph Sigma Ph) Ph ; S^j = Ph U D^j U^T Pmh  =>  S^j P Sigma P S^jT = Ph U D^j Z D^j U^T Ph
    Z = mT(ops.U) @ ops.Ph @ fed.noise_cov @ ops.Ph @ ops.U
    r = ops.dstep[..., :, None] * ops.dstep[..., None, :]
    t = xp.astype(ops.tau[..., None, None], r.dtype)
    one = xp.abs(1.0 - r) < 1e-14
    geo = xp.where(one, t, (1.0 - r**t) / xp.where(one, 1.0, 1.0 - r))
    inner = ops.U @ (Z * geo) @ mT(ops.U)
    return (ops.eta**2)[..., None, None] * (ops.Ph @ inner @ ops.Ph)


def noise_moments(fed: QuadraticFederation, *, eta, tau, alpha, x0, T: int, precond=None, correction: str = "none",
                  cov0=None) -> Moments:
    """Exact mean and covariance of ``x^{(t)}``, ``t = 0..T``, under additive gradient noise.

    Full participation with weights ``w_i`` and independent clients (I1):
    ``Sigma+ = R Sigma R^T + alpha^2 sum_i w_i^2 T_i Cov_i T_i^T`` with ``T_i = I``, ``N_i^{-1}``
    or ``N_s^{-1} N_i^{-1}`` for the three variants.  ``Moments.mse(x~)`` is
    ``E||x^{(t)} - x~||^2`` exactly.

    Batch axes: ``eta`` and ``tau`` are client parameters (module docstring, *Batch axes*).
    """
    _check_fed(fed)
    x0 = V.array(x0, "x0", xp=fed.xp, min_ndim=1, shape=(fed.d,))
    _check_correction(correction)
    xp = fed.xp
    ops = round_operators(fed, eta=eta, tau=tau, precond=precond)
    rmap = _round_map(fed, ops, alpha, correction)
    cov = client_covariances(fed, eta=eta, tau=tau, precond=precond)
    if correction != "none":
        Tm = ops.Ninv
        if correction == "joint":
            Ns = weighted_sum(fed.weights, ops.Ninv, 2)
            Tm = xp.linalg.solve(Ns[..., None, :, :], Tm)
        cov = Tm @ cov @ mT(Tm)
    a = V.array(alpha, "alpha", xp=xp, low=0.0, open_low=True)   # checked by _round_map; as a float array here
    if cov0 is not None:
        cov0 = V.array(cov0, "cov0", xp=xp, shape=(fed.d, fed.d))
    Q = (a**2)[..., None, None] * weighted_sum(fed.weights**2, cov, 2)
    return rmap.moments(x0, cov0, Q, T)


@dataclass(frozen=True)
class AssumptionConstants:
    """Exact constants of Assumptions 1–2 on quadratics for one local run.

    ``h``: ``||K_i||_2^2`` (the exact, smallest valid ``h_i(tau_i)`` of Assumption 1 in the
    Euclidean norm; may exceed 1 for preconditioned clients); ``rho``: spectral radius of
    ``K_i``; ``variance``: ``tr Cov[A_i(x)]`` (Assumption 2's ``q_i sigma^2`` at its tightest).
    """

    h: Any
    rho: Any
    variance: Any


def assumption_constants(fed: QuadraticFederation, *, eta, tau, precond=None) -> AssumptionConstants:
    """The exact constants of Assumptions 1-2 (:class:`AssumptionConstants`) for clients running
    ``tau_i`` steps of size ``eta_i``.

    Batch axes: ``eta`` and ``tau`` are client parameters (module docstring, *Batch axes*).
    """
    _check_fed(fed)
    xp = fed.xp
    ops = local_operators(fed, eta=eta, tau=tau, precond=precond)
    sv = xp.linalg.svdvals(ops.K)
    cov = client_covariances(fed, eta=eta, tau=tau, precond=precond)
    return AssumptionConstants(sv[..., 0] ** 2, spectral_radius(ops.K), trace(cov))
