"""FedDelAvg on quadratic clients, exactly: one period is an affine map.

Problem class
-------------
``QuadraticFederation`` (F_i(w) = 1/2 (w - x_i*)^T H_i (w - x_i*)), GD clients, no noise.

Method
------
Take as state the stacked client models at the send times, ``z_k = (w_1, ..., w_M)(k tau - Delta)``
(step count ``s = k tau``, as in ``algorithm``).  The delayed global model used at the sync of period
``k`` is ``w(k tau - Delta) = sum_i rho_i z_{k,i}``, a linear function of that same state, so no
extra memory is needed: one period is the affine map ``z_{k+1} = P z_k + p`` with, writing
``A = blockdiag(I - eta H_i)`` and ``A^j z + b_j`` for ``j`` local GD steps and ``J`` the
"average and broadcast" matrix (``(J z)_i = sum_j rho_j z_j``),

    Delta >= 1:  P = alpha A^{tau-Delta} J + (1-alpha) A^tau,   p = b_tau - alpha A^{tau-Delta} b_Delta
    Delta  = 0:  P = (alpha J + (1-alpha) I) A^tau,              p = (alpha J + (1-alpha) I) b_tau

(for Delta = 0 the sync uses the pre-sync average: the paper's (10) is circular there).  Both are
``P(alpha) = A^tau + alpha P_1`` and ``p(alpha) = b_tau + alpha p_1``: affine in alpha, so a whole
alpha grid costs one set of matrix powers.  With Delta = 0 the last period has no sync (the
syncs are at t = tau..(K-1) tau): it is the alpha = 0 map.

Exact results: the fixed point of ``P`` (the limit of the candidates ``w(k tau - Delta)`` of eq.
(13) is its weighted average ``w_inf``), the spectral radius (the exact asymptotic rate per
period), the whole trajectory ``z_0..z_K``, the asymptotic gap ``F(w_inf) - F(w*) =
1/2 (w_inf - w*)^T Hbar (w_inf - w*)`` (exact, no bound), and the alpha minimising the gap or the
rate.  These are exact statements about the algorithm; they are not the paper's bounds and
nothing here is "tight" -- compare with ``bounds.alpha_star`` (the paper's alpha*) via ``alpha_comparison``.

Batch axes: ``eta``, ``Delta`` and ``alpha`` are common to every client, so every axis of an array
of them is a configuration axis, broadcast against the federation's batch axes
(``fltheory.per_configuration(v)`` says so explicitly; ``fltheory.per_client(v)`` is refused).

Symbols: ``beta`` is the smoothness constant of the paper (the core's ``QuadraticFederation.L``,
see ``algorithm.smoothness``) and ``L`` the paper's Lipschitz constant of the F_i
(:func:`quadratic_constants` returns it as ``L_lipschitz``); ``M`` always counts clients here.

Example
-------
>>> import numpy as np, fltheory as flt
>>> from fltheory.papers.feddelavg import exact
>>> fed = flt.random_quadratic_federation(M=3, d=2, kappa=4, seed=2)
>>> P = exact.period_map(fed, eta=0.1, tau=4, Delta=0, alpha=1.0)   # FedAvg
>>> float(P.spectral_radius()) < 1
True
>>> opt = exact.exact_optimal_alpha(fed, eta=0.1, tau=4, Delta=3, objective="gap")
>>> bool(0 < opt.alpha <= 1)
True
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from ... import validation as V
from ...backend import asarray, copy_of, matvec, namespace, to_numpy, weighted_sum
from ...linear import AffineMap
from ...problems import ProblemError, QuadraticFederation
from .algorithm import check_parameters

__all__ = [
    "period_map",
    "PeriodPencil",
    "period_pencil",
    "PeriodFixedPoint",
    "fixed_point",
    "spectral_radius",
    "ExactTrajectory",
    "exact_trajectory",
    "asymptotic_gap",
    "OptimalAlpha",
    "exact_optimal_alpha",
    "AlphaComparison",
    "alpha_comparison",
    "StructuredPeriod",
]


def _require_quadratic(fed):
    V.instance(fed, "fed", QuadraticFederation, "QuadraticFederation (the exact period map is GD on quadratic clients)")


@dataclass(frozen=True)
class PeriodPencil:
    """The period map as a function of alpha: ``P(alpha) = A0 + alpha A1``, ``p(alpha) = b0 + alpha b1``.

    Arrays are ``(..., n, n)`` / ``(..., n)`` with ``n = M d`` (client-major state).
    """

    A0: Any
    A1: Any
    b0: Any
    b1: Any
    M: int
    d: int

    def at(self, alpha) -> AffineMap:
        """The period map for ``alpha`` (broadcast against the batch; extra leading axes allowed)."""
        xp = namespace(self.A0)
        a = asarray(alpha, xp)
        return AffineMap(self.A0 + a[..., None, None] * self.A1, self.b0 + a[..., None] * self.b1)


def _blockdiag(P, xp):
    M, d = P.shape[-3], P.shape[-1]
    eye = xp.eye(M)[:, None, :, None]                         # (i, 1, j, 1)
    return xp.reshape(eye * P[..., :, :, None, :], P.shape[:-3] + (M * d, M * d))


def _affine_power(S, s, j, xp):
    """``(S, s)`` applied ``j`` times (``z -> S z + s``), with a per-configuration exponent ``j``, by
    binary powering: O(log max j) batched products, never the list of all powers."""
    shape = j.shape
    S = xp.broadcast_to(S, shape + S.shape[len(shape):])
    s = xp.broadcast_to(s, shape + s.shape[len(shape):])
    extra = S.ndim - len(shape) - 2                      # the client axis
    P = copy_of(xp.broadcast_to(xp.eye(S.shape[-1]), S.shape))
    b = xp.zeros(s.shape)
    e = copy_of(xp.asarray(j, dtype=xp.int64))
    BS, Bs = S, s
    while bool(xp.any(e > 0)):
        odd = xp.reshape((e & 1) == 1, shape + (1,) * (extra + 2))
        P = xp.where(odd, BS @ P, P)
        b = xp.where(odd[..., 0], (BS @ b[..., None])[..., 0] + Bs, b)
        e = e >> 1
        if bool(xp.any(e > 0)):
            BS, Bs = BS @ BS, (BS @ Bs[..., None])[..., 0] + Bs
    return P, b


def _local_powers(fed, eta, tau, D, cfg):
    """``P_j``, ``b_j`` of ``j`` local GD steps ``z -> (I - eta H_i) z + eta H_i x_i*`` for
    ``j = tau`` and per configuration ``j = tau - Delta`` (matrices) and ``j = Delta`` (offsets)."""
    xp = fed.xp
    M, d = fed.M, fed.d
    step = xp.broadcast_to(xp.eye(d) - eta[..., None, None, None] * fed.H, cfg + (M, d, d))
    shift = xp.broadcast_to(eta[..., None, None] * matvec(fed.H, fed.x_opt), cfg + (M, d))
    P_tau, b_tau = _affine_power(step, shift, xp.full(cfg, tau, dtype=xp.int64), xp)
    P_rest, _ = _affine_power(step, shift, tau - D, xp)
    _, b_D = _affine_power(step, shift, D, xp)
    return P_tau, b_tau, P_rest, b_D


def period_pencil(fed, *, eta, tau, Delta) -> PeriodPencil:
    """The alpha-pencil of one FedDelAvg period (module docstring); batched over fed, eta, Delta."""
    _require_quadratic(fed)
    xp = fed.xp
    tau, Delta, _, eta = check_parameters(tau=tau, Delta=Delta, alpha=1.0, eta=eta, xp=xp)
    M, d = fed.M, fed.d
    cfg = np.broadcast_shapes(fed.batch_shape, eta.shape, Delta.shape)
    D = xp.broadcast_to(Delta, cfg)
    V.check_size(int(np.prod(cfg)) * (M * d) ** 2 * 4, "the dense period map on the stacked client state", xp=xp,
                 hint="fixed_point, asymptotic_gap and spectral_radius use the structured form for large M d")
    P_tau, b_tau, P_rest, b_D = _local_powers(fed, eta, tau, D, cfg)
    rho = xp.broadcast_to(fed.weights, cfg + (M,))
    # Delta >= 1: A^{tau-Delta} J  (row block i, column block j: rho_j P_{tau-Delta, i})
    X1 = rho[..., None, None, :, None] * P_rest[..., :, :, None, :]
    # Delta = 0:  J A^tau          (row block i, column block j: rho_j P_{tau, j})
    RP = rho[..., :, None, None] * P_tau                                   # (..., j, a, b)
    n = RP.ndim
    X0 = xp.permute_dims(RP, tuple(range(n - 3)) + (n - 2, n - 3, n - 1))[..., None, :, :, :]   # (..., 1, a, j, b)
    zero = (D == 0)[..., None, None, None, None]
    X = xp.reshape(xp.where(zero, X0, X1), cfg + (M * d, M * d))
    A0 = _blockdiag(P_tau, xp)
    Jb = xp.broadcast_to(weighted_sum(rho, b_tau)[..., None, :], cfg + (M, d))
    b1_pos = -matvec(P_rest, b_D)
    b1 = xp.reshape(xp.where((D == 0)[..., None, None], Jb - b_tau, b1_pos), cfg + (M * d,))
    return PeriodPencil(A0, X - A0, xp.reshape(b_tau, cfg + (M * d,)), b1, M, d)


DENSE_LIMIT = 4 * 10**6   # elements of the dense (M d)^2 period map above which the structured form is used


def _chunks(M, d, budget=2 * 10**6):
    """Client chunks whose (chunk, d, d) work arrays hold about ``budget`` numbers each."""
    step = max(1, budget // max(d * d, 1))
    return [slice(a, min(a + step, M)) for a in range(0, M, step)]


class StructuredPeriod:
    """The FedDelAvg period map of one configuration without forming the (M d)^2 matrix.

    With ``u_i = P_{tau,i} z_i + b_{tau,i}``, ``wbar = sum_j rho_j z_j`` and ``R_i = (I - (1 - alpha) P_{tau,i})^{-1}``:

    * ``Delta >= 1``: ``z'_i = (1 - alpha) P_{tau,i} z_i + b_{tau,i} + alpha P_{tau-Delta,i} (wbar - b_{Delta,i})``;
      the fixed point has ``(I - alpha sum rho_i R_i P_{tau-Delta,i}) wbar = sum rho_i R_i (b_{tau,i} - alpha P_{tau-Delta,i} b_{Delta,i})``;
    * ``Delta = 0``: ``z'_i = (1 - alpha) u_i + alpha sum_j rho_j u_j``; with ``v = sum rho_j u_j`` the fixed
      point has ``(I - alpha sum rho_j P_{tau,j} R_j) v = sum rho_j (I + (1 - alpha) P_{tau,j} R_j) b_{tau,j}``.

    Both are one d x d solve after sums over clients, computed in client chunks (memory
    O(chunk d^2)); the spectral radius comes from ARPACK on the structured matrix-vector product.
    """

    def __init__(self, fed, *, eta: float, tau: int, Delta: int, alpha: float):
        self.fed, self.eta, self.tau, self.Delta, self.alpha = fed, float(eta), int(tau), int(Delta), float(alpha)
        self.M, self.d = fed.M, fed.d

    def _powers(self, sl):
        fed = self.fed
        sub = QuadraticFederation(fed.H[sl], fed.x_opt[sl], None)
        cfg = ()
        eta = fed.xp.asarray(self.eta)
        return _local_powers(sub, eta, self.tau, fed.xp.asarray(self.Delta), cfg)

    def _solve_I_minus(self, P, X):
        xp = self.fed.xp
        return xp.linalg.solve(xp.eye(self.d) - (1.0 - self.alpha) * P, X)

    def fixed_point(self):
        """(clients (M, d), wbar (d,)) of the period map."""
        fed, xp, a, d = self.fed, self.fed.xp, self.alpha, self.d
        rho = fed.weights
        lhs, rhs = xp.eye(d), xp.zeros(d)
        for sl in _chunks(self.M, d):
            P_tau, b_tau, P_rest, b_D = self._powers(sl)
            r = rho[sl]
            if self.Delta >= 1:
                RP = self._solve_I_minus(P_tau, P_rest)
                Rb = self._solve_I_minus(P_tau, (b_tau - a * (P_rest @ b_D[..., None])[..., 0])[..., None])[..., 0]
                lhs = lhs - a * weighted_sum(r, RP, 2)
                rhs = rhs + r @ Rb
            else:
                PR = P_tau @ self._solve_I_minus(P_tau, xp.broadcast_to(xp.eye(d), P_tau.shape))
                lhs = lhs - a * weighted_sum(r, PR, 2)
                rhs = rhs + r @ (b_tau + (1.0 - a) * (PR @ b_tau[..., None])[..., 0])
        key = xp.linalg.solve(lhs, rhs)            # wbar (Delta >= 1) or v (Delta = 0)
        clients = xp.empty((self.M, d))
        for sl in _chunks(self.M, d):
            P_tau, b_tau, P_rest, b_D = self._powers(sl)
            if self.Delta >= 1:
                rhs_i = b_tau + a * (P_rest @ (key - b_D)[..., None])[..., 0]
            else:
                rhs_i = (1.0 - a) * b_tau + a * key
            clients[sl] = self._solve_I_minus(P_tau, rhs_i[..., None])[..., 0]
        return clients, rho @ clients

    def spectral_radius(self, tol: float = 1e-10) -> float:
        """The exact asymptotic contraction per period (largest ``|eigenvalue|``, ARPACK to ``tol``).

        The per-client matrices are kept in float64 while both fit in about 400 MB, else in
        float32 (products are still computed in float64): M = 1000, d = 200 then needs 320 MB and
        the radius is accurate to about 1e-7.
        """
        from scipy.sparse.linalg import LinearOperator, eigs  # noqa: PLC0415

        fed, a, M, d = self.fed, self.alpha, self.M, self.d
        rho = np.asarray(fed.weights)
        store = np.float64 if 2 * M * d * d <= 5 * 10**7 else np.float32
        P_tau = np.empty((M, d, d), dtype=store)
        P_rest = np.empty((M, d, d), dtype=store)
        for sl in _chunks(M, d):
            pt, _, pr, _ = self._powers(sl)
            P_tau[sl], P_rest[sl] = np.asarray(pt), np.asarray(pr)

        def matvec(z):
            z = np.asarray(z).reshape(M, d)
            out = np.empty((M, d), dtype=z.dtype)
            wbar = rho @ z
            u_all = np.empty((M, d), dtype=z.dtype)
            for sl in _chunks(M, d):
                u_all[sl] = np.einsum("mij,mj->mi", P_tau[sl].astype(np.float64), z[sl])
            if self.Delta >= 1:
                for sl in _chunks(M, d):
                    out[sl] = (1 - a) * u_all[sl] + a * np.einsum("mij,j->mi", P_rest[sl].astype(np.float64), wbar)
            else:
                out[:] = (1 - a) * u_all + a * (rho @ u_all)
            return out.reshape(-1)

        n = M * d
        if n <= 400:
            A = np.stack([matvec(e) for e in np.eye(n)], axis=1)
            return float(np.abs(np.linalg.eigvals(A)).max())
        op = LinearOperator((n, n), matvec=matvec, dtype=np.float64)
        vals = eigs(op, k=1, which="LM", tol=tol, return_eigenvectors=False, maxiter=20 * n)
        return float(np.abs(vals).max())


def _use_structured(fed, eta, Delta, alpha) -> bool:
    cfg = np.broadcast_shapes(fed.batch_shape, np.shape(eta), np.shape(Delta), np.shape(alpha))
    return int(np.prod(cfg)) * (fed.M * fed.d) ** 2 > DENSE_LIMIT


def period_map(fed, *, eta, tau, Delta, alpha) -> AffineMap:
    """One FedDelAvg period on the stacked client models ``z_k = w_i(k tau - Delta)`` (module docstring).

    Exact (not a bound).  ``z_{k+1} = P z_k + p`` for every period that contains a sync, i.e. all
    periods when ``Delta >= 1`` and all but the last when ``Delta = 0``.

    >>> import fltheory as flt
    >>> fed = flt.random_quadratic_federation(M=2, d=2, seed=0)
    >>> period_map(fed, eta=0.1, tau=3, Delta=1, alpha=0.5).A.shape
    (4, 4)
    """
    _require_quadratic(fed)
    _, _, alpha, _ = check_parameters(tau=tau, Delta=Delta, alpha=alpha, eta=eta, xp=fed.xp)
    return period_pencil(fed, eta=eta, tau=tau, Delta=Delta).at(alpha)


@dataclass(frozen=True)
class PeriodFixedPoint:
    """Fixed point of the period map: clients ``(..., M, d)`` at the send time, their average
    ``w_bar`` (the limit of the candidates ``w(k tau - Delta)``), the residual and the spectral radius.
    ``converges`` is False where the radius is >= 1: there the point is a fixed point of a divergent
    map, not a limit of FedDelAvg."""

    clients: Any
    w_bar: Any
    residual: Any
    spectral_radius: Any
    converges: Any = None


def spectral_radius(fed, *, eta, tau, Delta, alpha):
    """The spectral radius of the period map: the exact asymptotic contraction per period.

    Large problems (the dense map over ``DENSE_LIMIT`` numbers) use :class:`StructuredPeriod`, one
    configuration at a time, without forming the (M d)^2 matrix."""
    _require_quadratic(fed)
    if _use_structured(fed, eta, Delta, alpha):
        return _structured_each(fed, eta, tau, Delta, alpha, lambda sp: sp.spectral_radius())
    return period_map(fed, eta=eta, tau=tau, Delta=Delta, alpha=alpha).spectral_radius()


def _structured_each(fed, eta, tau, Delta, alpha, fn):
    """Apply ``fn`` to the StructuredPeriod of every configuration (a Python loop over configurations)."""
    xp = fed.xp
    tau, D, a, e = check_parameters(tau=tau, Delta=Delta, alpha=alpha, eta=eta, xp=xp)
    cfg = np.broadcast_shapes(fed.batch_shape, e.shape, D.shape, a.shape)
    if fed.batch_shape:
        raise ProblemError("the structured period map takes one federation (no batch axis) for large M d")
    out = np.empty(cfg, dtype=object)
    eb, Db, ab = (np.broadcast_to(to_numpy(v), cfg) for v in (e, D, a))
    for idx in np.ndindex(cfg):
        out[idx] = fn(StructuredPeriod(fed, eta=float(eb[idx]), tau=tau, Delta=int(Db[idx]), alpha=float(ab[idx])))
    return out if cfg else out[()]


def _check_stable(rho, eta, what="the period map"):
    r = to_numpy(rho)
    if np.any(r >= 1):
        raise ProblemError(
            f"{what} has spectral radius {r.max():.6g} >= 1: FedDelAvg does not converge "
            f"(eta={to_numpy(eta).max():.3g} too large for this (tau, Delta, alpha))"
        )


def fixed_point(fed, *, eta, tau, Delta, alpha) -> PeriodFixedPoint:
    """The fixed point of the period map, flagged per configuration: ``converges`` is False where the
    spectral radius is >= 1 (raises only when no configuration converges)."""
    _require_quadratic(fed)
    if _use_structured(fed, eta, Delta, alpha):
        res = _structured_each(fed, eta, tau, Delta, alpha, lambda sp: (sp.fixed_point(), sp.spectral_radius()))
        items = [res] if not isinstance(res, np.ndarray) else list(res.reshape(-1))
        shape = () if not isinstance(res, np.ndarray) else res.shape
        xp = fed.xp
        clients = xp.stack([c for (c, _), _ in items]).reshape(shape + (fed.M, fed.d))
        w_bar = xp.stack([w for (_, w), _ in items]).reshape(shape + (fed.d,))
        r = xp.asarray(np.array([rr for _, rr in items]).reshape(shape))
        if bool(np.all(to_numpy(r) >= 1)):
            _check_stable(r, eta)
        return PeriodFixedPoint(clients, w_bar, None, r, r < 1)
    m = period_map(fed, eta=eta, tau=tau, Delta=Delta, alpha=alpha)
    r = m.spectral_radius()
    if bool(np.all(to_numpy(r) >= 1)):
        _check_stable(r, eta)
    fp = m.fixed_point()
    clients = fed.xp.reshape(fp.x, fp.x.shape[:-1] + (fed.M, fed.d))
    w_bar = weighted_sum(fed.weights, clients)
    return PeriodFixedPoint(clients, w_bar, fp.residual, r, r < 1)


def _gap(fed, w):
    e = w - fed.x_star
    if fed.xp is np:
        return 0.5 * np.einsum("...i,...ij,...j->...", e, fed.Hbar, e)
    return 0.5 * fed.xp.sum(e * matvec(fed.Hbar, e), axis=-1)


def asymptotic_gap(fed, *, eta, tau, Delta, alpha):
    """``F(w_inf) - F(w*)`` with ``w_inf`` the limit of the candidates ``w(k tau - Delta)`` (exact);
    ``+inf`` for configurations where FedDelAvg diverges (period map spectral radius >= 1).

    >>> import fltheory as flt
    >>> fed = flt.random_quadratic_federation(M=3, d=2, seed=0)
    >>> float(asymptotic_gap(fed, eta=0.1, tau=1, Delta=0, alpha=1.0)) < 1e-20   # tau=1 FedAvg = GD
    True
    """
    fp = fixed_point(fed, eta=eta, tau=tau, Delta=Delta, alpha=alpha)
    return fed.xp.where(fp.converges, _gap(fed, fp.w_bar), fed.xp.inf)   # no finite limit: +inf


@dataclass(frozen=True)
class ExactTrajectory:
    """``clients[..., k, i, :] = w_i(k tau - Delta)`` and ``w_bar[..., k, :]`` for k = 0..K, exactly."""

    clients: Any
    w_bar: Any
    losses: Any


def exact_trajectory(fed, *, eta, tau, Delta, alpha, K: int, w_init=None) -> ExactTrajectory:
    """The states at the send times, by iterating the period map (the last period without a sync
    when Delta = 0).  Batched over fed, eta, Delta, alpha; equals ``feddelavg`` to rounding."""
    _require_quadratic(fed)
    xp = fed.xp
    K = V.integer(K, "K", low=1, high=10**7)
    _, D, alpha, _ = check_parameters(tau=tau, Delta=Delta, alpha=alpha, eta=eta, K=K, xp=xp)
    V.check_size((K + 1) * fed.M * fed.d * max(1, int(np.prod(np.broadcast_shapes(fed.batch_shape, D.shape,
                                                                                   alpha.shape)))),
                 "the exact trajectory", hint="use the period map's power for one late period")
    n_cfg = max(1, int(np.prod(np.broadcast_shapes(fed.batch_shape, D.shape, alpha.shape))))
    # measured: ~6e-5 s per period for M d = 6 (a Python loop of small products and a loss per period)
    V.check_time(K * (5e-5 + 2e-9 * n_cfg * (fed.M * fed.d) ** 2), f"the exact trajectory over K={K:,} periods",
                 hint="use period_map(...).power(K) for one late period, or fixed_point for the limit")
    pen = period_pencil(fed, eta=eta, tau=tau, Delta=Delta)
    sync = pen.at(alpha)
    M, d = fed.M, fed.d
    x0 = xp.zeros(d) if w_init is None else V.array(w_init, "w_init", xp=xp, shape=(d,))
    z = xp.reshape(xp.broadcast_to(x0[..., None, :], x0.shape[:-1] + (M, d)), x0.shape[:-1] + (M * d,))
    z = xp.broadcast_to(z, np.broadcast_shapes(z.shape, sync.b.shape))
    zs = [z]
    for k in range(int(K)):
        nxt = sync(zs[-1])
        if k == int(K) - 1:  # Delta = 0: no sync at t = T
            nxt = xp.where((D == 0)[..., None], pen.at(0.0)(zs[-1]), nxt)
        zs.append(nxt)
    nb = len(z.shape) - 1
    Z = xp.reshape(xp.stack(zs, axis=nb), z.shape[:-1] + (int(K) + 1, M, d))
    w_bar = np.einsum("...m,...kmi->...ki", fed.weights, Z) if xp is np else weighted_sum(fed.weights[..., None, :], Z)
    losses = xp.stack([fed.loss(w_bar[..., k, :]) for k in range(int(K) + 1)], axis=nb)
    return ExactTrajectory(Z, w_bar, losses)


# --------------------------------------------------------------------------------------
# the exactly optimal alpha
# --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class OptimalAlpha:
    """``alpha`` minimising ``objective`` over (0, 1] per configuration, with the minimum ``value``,
    the value at ``alpha = 1`` and the coarse grid used (``grid``, ``grid_values``: (G, ...)).

    ``attained`` is False where the point found is not a minimiser: the objective is lower still at
    ``alpha / 2`` (it keeps falling as alpha -> 0, past the search's floor), or ``alpha`` ends within 1e-6 of 1
    and the objective jumps up at alpha = 1 (the infimum is the limit alpha -> 1, not attained).  There
    ``alpha`` and ``value`` are the best point found, not a minimiser."""

    alpha: Any
    value: Any
    value_at_1: Any
    objective: str
    grid: Any
    grid_values: Any
    attained: Any = None


def _objective(pen: PeriodPencil, fed, alpha, objective, xp):
    m = pen.at(alpha)
    if objective == "rate":
        return m.spectral_radius()
    rho = m.spectral_radius()
    stable = rho < 1
    A = xp.where(stable[..., None, None], m.A, 0.0)  # unstable ones (I - A may be singular) -> +inf below
    z = xp.linalg.solve(xp.eye(m.n) - A, m.b[..., None])[..., 0]
    w = weighted_sum(fed.weights, xp.reshape(z, z.shape[:-1] + (pen.M, pen.d)))
    return xp.where(stable, _gap(fed, w), xp.inf)


DEFAULT_GRID = np.unique(np.concatenate([np.geomspace(1e-3, 1.0, 40), np.linspace(0.02, 1.0, 50)]))


def exact_optimal_alpha(fed, *, eta, tau, Delta, objective: str = "gap", grid=None, tol: float = 1e-10,
                        chunk_budget: int = 2 * 10**7) -> OptimalAlpha:
    """The alpha in (0, 1] minimising the exact asymptotic gap (``objective="gap"``) or the spectral
    radius of the period map (``"rate"``), batched over fed, eta and Delta (see :func:`_optimal_alpha`).

    Large batches run in chunks of configurations whose grid evaluation holds about
    ``chunk_budget`` numbers, so memory stays bounded whatever the batch size.  The result's ``attained`` says
    where the minimum is attained inside (0, 1]; where it is False the search ran into an edge (the rate can
    keep falling as alpha -> 0; with Delta = tau the gap's infimum is approached as alpha -> 1).
    """
    _require_quadratic(fed)
    V.choice(objective, "objective", ("gap", "rate"))
    xp = fed.xp
    tau_i, D, _, e = check_parameters(tau=tau, Delta=Delta, alpha=1.0, eta=eta, xp=xp)
    chunk_budget = V.integer(chunk_budget, "chunk_budget", low=1)
    cfg = np.broadcast_shapes(fed.batch_shape, e.shape, D.shape)
    if grid is not None:
        grid = V.array(grid, "grid", xp=np, ndim=1, low=0.0, high=1.0)
    G = len(DEFAULT_GRID) if grid is None else int(np.size(grid))
    per = max(1, chunk_budget // (G * (fed.M * fed.d) ** 2 * 4))
    B = int(np.prod(cfg))
    if B <= per or len(fed.batch_shape) > 1:
        return _optimal_alpha(fed, eta=eta, tau=tau, Delta=Delta, objective=objective, grid=grid, tol=tol)
    eb = xp.reshape(xp.broadcast_to(e, cfg), (-1,))
    Db = np.broadcast_to(to_numpy(D), cfg).reshape(-1)
    fb = fed
    if fed.batch_shape:
        fb = QuadraticFederation(xp.reshape(xp.broadcast_to(fed.H, cfg + fed.H.shape[-3:]), (B,) + fed.H.shape[-3:]),
                                 xp.reshape(xp.broadcast_to(fed.x_opt, cfg + fed.x_opt.shape[-2:]), (B,) + fed.x_opt.shape[-2:]),
                                 xp.reshape(xp.broadcast_to(fed.weights, cfg + (fed.M,)), (B, fed.M)))
    parts = []
    for a in range(0, B, per):
        sl = slice(a, min(a + per, B))
        sub = fb.take(sl) if fb.batch_shape else fb
        parts.append(_optimal_alpha(sub, eta=eb[sl], tau=tau_i, Delta=Db[sl], objective=objective, grid=grid, tol=tol))
    cat = lambda k, shape, axis=0: xp.reshape(xp.concat([getattr(p_, k) for p_ in parts], axis=axis), shape)  # noqa: E731
    return OptimalAlpha(cat("alpha", cfg), cat("value", cfg), cat("value_at_1", cfg),
                        objective, parts[0].grid, cat("grid_values", (-1,) + cfg, 1), cat("attained", cfg))


def _optimal_alpha(fed, *, eta, tau, Delta, objective: str = "gap", grid=None, tol: float = 1e-10) -> OptimalAlpha:
    """The alpha in (0, 1] minimising the exact asymptotic gap (``objective="gap"``) or the spectral
    radius of the period map (``"rate"``), batched over fed, eta and Delta.

    Method: the objective on a coarse grid (``DEFAULT_GRID``, 0.001..1, alpha at which the period
    map is unstable count as +inf), then golden-section search on the two grid cells around the
    best grid point, vectorised over configurations, to ``tol`` in alpha; ``alpha = 1`` is kept when
    it is at least as good.  Exact up to that 1-D search (a global minimum if the objective is
    unimodal between grid points).
    """
    V.choice(objective, "objective", ("gap", "rate"))
    tol = max(V.tolerance(tol, "tol"), 1e-15)   # golden-section search cannot resolve alpha past round-off
    xp = fed.xp
    pen = period_pencil(fed, eta=eta, tau=tau, Delta=Delta)
    cfg = pen.b0.shape[:-1]
    g = xp.asarray(DEFAULT_GRID if grid is None else np.unique(V.array(grid, "grid", xp=np, ndim=1)))
    if bool(xp.any(g <= 0)) or bool(xp.any(g > 1)):
        raise ProblemError("grid values must satisfy 0 < alpha <= 1")
    vals = _objective(pen, fed, xp.reshape(g, (-1,) + (1,) * len(cfg)), objective, xp)  # (G, ...)
    vals = xp.broadcast_to(vals, (g.shape[0],) + cfg)
    j = xp.argmin(vals, axis=0)
    G = g.shape[0]

    def grid_at(i):   # g[i] for an index array i (the standard's take)
        return xp.reshape(xp.take(g, xp.reshape(i, (-1,)), axis=0), i.shape)

    lo = grid_at(xp.clip(j - 1, 0, G - 1))
    hi = grid_at(xp.clip(j + 1, 0, G - 1))
    lo = xp.where(j == 0, g[0] * 0.5, lo)
    invphi = (math.sqrt(5.0) - 1.0) / 2.0
    c = hi - invphi * (hi - lo)
    dd = lo + invphi * (hi - lo)
    fc = _objective(pen, fed, c, objective, xp)
    fd = _objective(pen, fed, dd, objective, xp)
    for _ in range(200):                     # each step shrinks the bracket by 0.618: 200 reach 1e-42
        if float(xp.max(hi - lo)) <= tol:
            break
        left = fc < fd  # minimum in [lo, dd]
        hi = xp.where(left, dd, hi)
        lo = xp.where(left, lo, c)
        new = xp.where(left, hi - invphi * (hi - lo), lo + invphi * (hi - lo))
        fnew = _objective(pen, fed, new, objective, xp)
        c, dd, fc, fd = (xp.where(left, new, dd), xp.where(left, c, new),
                         xp.where(left, fnew, fd), xp.where(left, fc, fnew))
    a = 0.5 * (lo + hi)
    fa = _objective(pen, fed, a, objective, xp)
    best_grid = xp.min(vals, axis=0)
    a = xp.where(best_grid < fa, grid_at(j), a)
    fa = xp.minimum(fa, best_grid)
    f1 = _objective(pen, fed, xp.ones(cfg), objective, xp)
    a = xp.where(f1 <= fa, 1.0, a)
    fa = xp.minimum(fa, f1)
    if bool(xp.any(~xp.isfinite(fa))):
        raise ProblemError(f"the period map is unstable for every alpha on the grid (eta={eta} too large)")
    # is the point found a minimiser?  Not where the objective is lower still at alpha / 2 (it keeps falling as
    # alpha -> 0), nor where alpha ends within 1e-6 of 1 with a jump up at alpha = 1 (the infimum is the limit
    # alpha -> 1, which alpha = 1 does not attain: a continuous objective would not jump there)
    below = _objective(pen, fed, 0.5 * a, objective, xp)
    to_one = (a < 1.0) & (1.0 - a <= 1e-6) & (f1 > fa * (1.0 + 1e-3))
    attained = ~((below < fa - 1e-13 * xp.abs(fa)) | to_one)
    return OptimalAlpha(a, fa, f1, objective, g, vals, attained)


@dataclass(frozen=True)
class AlphaComparison:
    """Exactly optimal alpha against the paper's bound-optimal alpha*, per delay ``Delta``.

    ``alpha_gap`` minimises the exact asymptotic gap, ``alpha_rate`` the spectral radius,
    ``alpha_bound`` is the paper's alpha* (``None`` when unavailable); ``gap_*`` and ``rate_*``
    are the exact gap and spectral radius at those alphas and at alpha = 1.  ``L_lipschitz``
    (the paper's Lipschitz constant ``L``), ``delta`` and ``beta`` (smoothness, the core's
    ``fed.L``) are the constants alpha* was evaluated with; ``L`` is an alias of ``L_lipschitz``.
    ``gap_attained`` and ``rate_attained`` are False where that optimum is not attained in (0, 1]
    (:class:`OptimalAlpha`): the alpha given is then the best point found near the edge.
    """

    Delta: Any
    alpha_gap: Any
    alpha_rate: Any
    alpha_bound: Any
    gap_at_alpha_gap: Any
    gap_at_alpha_bound: Any
    gap_at_1: Any
    rate_at_alpha_rate: Any
    rate_at_alpha_bound: Any
    rate_at_1: Any
    L_lipschitz: Any
    delta: Any
    beta: Any
    gap_attained: Any = None
    rate_attained: Any = None

    @property
    def L(self):
        """Alias of ``L_lipschitz`` (the paper's name)."""
        return self.L_lipschitz


class QuadraticConstants(NamedTuple):
    """FedDelAvg's constants of a quadratic federation: ``beta`` (smoothness), ``L_lipschitz``
    (the paper's ``L``, a bound on every ``||grad F_i||``) and ``delta`` (gradient dissimilarity)."""

    beta_smoothness: Any
    L_lipschitz: Any
    delta: Any


def quadratic_constants(fed, *, radius=None) -> QuadraticConstants:
    """``(beta_smoothness, L_lipschitz, delta)`` of the paper's assumptions for a quadratic federation over the ball ``||w - x*|| <= radius``.

    ``beta = max_i lambda_max(H_i)``; ``L = max_i lambda_max(H_i) (radius + ||x_i* - x*||)`` bounds
    ``||grad F_i||`` on the ball; ``delta = sum_i rho_i delta_i`` with ``delta_i`` from
    ``fed.delta_ball(radius)``.  Quadratics are not globally Lipschitz (as Assumption 1 asks), so the ball
    is a modelling choice; the default radius ``max(||x*||, max_i ||x_i* - x*||)`` covers a start at
    0 and the client optima.  alpha* depends only on ``delta / L``.
    """
    _require_quadratic(fed)
    xp = fed.xp
    xs = fed.x_star
    spread = xp.sqrt(xp.sum((fed.x_opt - xs[..., None, :]) ** 2, axis=-1))  # (..., M)
    if radius is None:
        radius = xp.maximum(xp.sqrt(xp.sum(xs * xs, axis=-1)), xp.max(spread, axis=-1))
    r = asarray(radius, xp)
    L = xp.max(fed.L_i * (r[..., None] + spread), axis=-1)
    delta = xp.sum(fed.weights * fed.delta_ball(r[..., None]), axis=-1)
    return QuadraticConstants(fed.L, L, delta)


def alpha_comparison(fed, *, eta, tau, Deltas, alpha_bound=None, L=None, delta=None, radius=None) -> AlphaComparison:
    """Exact gap-optimal and rate-optimal alpha for each ``Delta`` in ``Deltas``, beside alpha*.

    ``alpha_bound`` may be given (one value per Delta); otherwise ``bounds.alpha_star`` is used,
    with ``beta = fed.L`` and ``(L, delta)`` from ``quadratic_constants`` unless given.
    Batched over ``Deltas`` (a leading axis) and the federation's batch.

    >>> import fltheory as flt, numpy as np
    >>> fed = flt.random_quadratic_federation(M=3, d=2, kappa=4, seed=2)
    >>> cmp = alpha_comparison(fed, eta=0.1, tau=4, Deltas=[0, 2, 4], alpha_bound=[1.0, 0.8, 0.6])
    >>> float(cmp.alpha_gap[0]) == 1.0 or float(cmp.gap_at_alpha_gap[0]) <= float(cmp.gap_at_1[0])
    True
    """
    _require_quadratic(fed)
    xp = fed.xp
    Deltas = V.array(Deltas, "Deltas", xp=np, kind="integer", low=0)
    if Deltas.ndim > 1:
        raise V.InputError(f"Deltas must be a scalar or a 1-D array of delays; got shape {tuple(Deltas.shape)}")
    if radius is not None:
        radius = V.real(radius, "radius", low=0.0, open_low=True)
    L = None if L is None else V.array(L, "L", xp=xp, low=0.0, open_low=True)
    delta = None if delta is None else V.array(delta, "delta", xp=xp, low=0.0)
    if alpha_bound is not None:
        alpha_bound = V.array(alpha_bound, "alpha_bound", xp=xp, low=0.0, high=1.0, open_low=True)
    D = xp.reshape(xp.asarray(Deltas), (-1,) + (1,) * len(fed.batch_shape))
    og = exact_optimal_alpha(fed, eta=eta, tau=tau, Delta=D, objective="gap")
    orate = exact_optimal_alpha(fed, eta=eta, tau=tau, Delta=D, objective="rate")
    beta, L0, d0 = quadratic_constants(fed, radius=radius)
    L = L0 if L is None else asarray(L, xp)
    delta = d0 if delta is None else asarray(delta, xp)
    if alpha_bound is None:
        from .bounds import alpha_star  # noqa: PLC0415 - bounds imports this module's package

        alpha_bound = alpha_star(eta=eta, beta=beta, L=L, delta=delta, tau=tau, Delta=D)
    pen = period_pencil(fed, eta=eta, tau=tau, Delta=D)
    gap_b = rate_b = None
    if alpha_bound is not None:
        ab = asarray(alpha_bound, xp)
        try:
            alpha_bound = xp.broadcast_to(xp.reshape(ab, D.shape) if ab.ndim == 1 else ab, og.alpha.shape)
        except (ValueError, TypeError):
            raise V.InputError(f"alpha_bound must give one value per Delta of Deltas (Deltas has {D.shape[0]}; alpha_bound "
                               f"must broadcast to {tuple(og.alpha.shape)}); got shape {tuple(ab.shape)}") from None
        gap_b = _objective(pen, fed, alpha_bound, "gap", xp)
        rate_b = _objective(pen, fed, alpha_bound, "rate", xp)
    return AlphaComparison(
        Delta=xp.reshape(D, (-1,)), alpha_gap=og.alpha, alpha_rate=orate.alpha, alpha_bound=alpha_bound,
        gap_at_alpha_gap=og.value, gap_at_alpha_bound=gap_b, gap_at_1=og.value_at_1,
        rate_at_alpha_rate=orate.value, rate_at_alpha_bound=rate_b, rate_at_1=orate.value_at_1,
        L_lipschitz=L, delta=delta, beta=beta, gap_attained=og.attained, rate_attained=orate.attained,
    )
