"""Federated problems: quadratic clients (batched) and their constants.

Problem class
-------------
``QuadraticFederation`` holds ``M`` clients

    F_i(x) = 1/2 (x - x_i*)^T H_i (x - x_i*) + c_i,       F(x) = sum_i w_i F_i(x),

with ``H_i`` symmetric positive definite, weights ``w_i >= 0`` summing to one and, optionally,
additive gradient noise ``g_i(x) = grad F_i(x) + nu`` with ``E nu = 0``, ``Cov nu = Sigma_i``.
Every array may carry leading *configuration* axes: ``H`` is ``(..., M, d, d)``, ``x_opt`` is
``(..., M, d)``, ``weights`` is ``(..., M)``.  The namespace (NumPy or CuPy) is that of ``H``.

Its constants follow the papers' names: ``x_star`` (minimiser of F), ``L`` (max_i lambda_max
H_i, the smoothness constant of the local-adaptivity paper's Assumption 3 and FedDelAvg's beta), ``mu`` (min_i
lambda_min H_i), the per-client ``L_i`` / ``mu_i``, ``zeta2 = sum_i w_i ||grad F_i(x*)||^2``
and gradient dissimilarity ``delta_i`` over a stated region (a set of points, or a ball).

Example
-------
>>> import numpy as np, fltheory as flt
>>> H = np.array([[[2, .5], [.5, 1]], [[1, 0], [0, 4]], [[3, -1], [-1, 2]]], float)
>>> fed = flt.QuadraticFederation(H, [[1, 0], [0, 2], [-1, -1]], [.5, .3, .2])
>>> np.round(fed.x_star * 319, 10)
array([ 91., 370.])
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .backend import KeyedStream, asarray, dtype_kind, gather, is_array, mT, matvec, namespace, trace, weighted_sum
from . import validation as V
from . import validation as _validation   # for methods with a parameter named V
from .validation import InputError

__all__ = ["QuadraticFederation", "random_quadratic_federation", "validate_weights", "weights_from_sizes", "ProblemError",
           "SeparableCosineFederation", "LogisticFederation", "PseudoHuberFederation", "LinearFederation"]


class ProblemError(InputError):
    """An invalid problem description (the message names the parameter and the condition)."""


def validate_weights(weights, xp=np, name: str = "weights", atol: float | None = None):
    """Check ``weights >= 0`` and ``sum == 1`` along the last axis; return them as an array.

    The tolerance on the sum follows the dtype (float32 weights summing to one in float32 pass).
    """
    w = V.array(weights, name, xp=xp, min_ndim=1)
    if bool(xp.any(w < 0)):
        raise ProblemError(f"{name} must be >= 0; smallest is {float(xp.min(w))}")
    s = xp.sum(w, axis=-1)
    err = float(xp.max(xp.abs(s - 1.0))) if s.size else 0.0
    tol = V.tolerance_for(w.dtype, w.shape[-1]) if atol is None else atol
    if err > tol:
        raise ProblemError(f"{name} must sum to 1 over clients; off by {err:.3g} (tolerance {tol:.1g})")
    return w


def weights_from_sizes(sizes, xp=np):
    """Client weights proportional to data sizes, ``w_i = |D_i| / sum_j |D_j|`` (the local adaptivity
    paper's eq. (1), FedDelAvg's rho_i); ``sizes`` ``(..., M)`` must be > 0.  Rescaling the sizes changes nothing.

    >>> weights_from_sizes([10, 30, 60]).tolist()
    [0.1, 0.3, 0.6]
    """
    xp = V.namespace_arg(xp, "xp")
    n = xp.astype(V.array(sizes, "sizes", xp=xp, min_ndim=1, low=0.0, open_low=True), xp.float64)
    return n / xp.sum(n, axis=-1, keepdims=True)


def _sym(A):
    return 0.5 * (A + mT(A))


class _Federation:
    """What every federation shares: one convention for points.

    ``grad_clients(X)`` and ``loss_clients(X)`` take *one point per client*, ``X`` of shape
    ``(..., M, d)``; ``grad_clients_at(x)``, ``loss_clients_at(x)``, ``grad(x)`` and ``loss(x)``
    take *one point for all clients*, ``x`` of shape ``(..., d)``.  (Guessing from the shape
    would read a batch axis of length M as the client axis.)
    """

    def _check_per_client(self, X):
        X = asarray(X, self.xp)
        if X.ndim < 2 or X.shape[-2:] != (self.M, self.d):
            raise ProblemError(
                f"expected one point per client, shape (..., M={self.M}, d={self.d}); got {tuple(X.shape)} "
                "(use grad_clients_at / loss_clients_at for one common point)"
            )
        return X

    def _at(self, x):
        x = asarray(x, self.xp)
        if x.shape[-1:] != (self.d,):
            raise ProblemError(f"expected points of shape (..., d={self.d}); got {tuple(x.shape)}")
        return self.xp.broadcast_to(x[..., None, :], x.shape[:-1] + (self.M, self.d))

    def grad_clients_at(self, x):
        """grad F_i(x) for every client at one common point ``x`` (..., d) -> (..., M, d)."""
        return self.grad_clients(self._at(x))

    def loss_clients_at(self, x):
        """F_i(x) for every client at one common point ``x`` (..., d) -> (..., M)."""
        return self.loss_clients(self._at(x))

    def grad(self, x):
        """grad F(x) = sum_i w_i grad F_i(x) at points ``x`` (..., d)."""
        return self.xp.sum(self.weights[..., None] * self.grad_clients_at(x), axis=-2)

    def loss(self, x):
        """F(x) = sum_i w_i F_i(x) at points ``x`` (..., d)."""
        return self.xp.sum(self.weights * self.loss_clients_at(x), axis=-1)


def _noise_cov_checked(cov, xp, M: int, d: int):
    """``noise_cov`` (..., M, d, d) symmetric PSD, or None: the one check of every federation's noise
    (symmetric to 1e-10 of its largest entry, as ``H``; eigenvalues >= -1e-12)."""
    if cov is None:
        return None
    cov = V.array(cov, "noise_cov", xp=xp, min_ndim=3)
    if cov.shape[-3:] != (M, d, d):
        raise ProblemError(f"noise_cov must have shape (..., M={M}, d={d}, d={d}); got {tuple(cov.shape)}")
    if cov.size and float(xp.max(xp.abs(cov - mT(cov)))) > 1e-10 * max(float(xp.max(xp.abs(cov))), 1.0):
        raise ProblemError("noise_cov must be symmetric")
    if bool(xp.any(xp.linalg.eigvalsh(_sym(cov))[..., 0] < -1e-12)):
        raise ProblemError("noise_cov must be positive semidefinite")
    return cov


@dataclass(frozen=True, eq=False)
class QuadraticFederation(_Federation):
    """Batched quadratic federation (see the module docstring).

    Parameters
    ----------
    H : (..., M, d, d) symmetric positive definite client Hessians.
    x_opt : (..., M, d) client minimisers x_i*.
    weights : (..., M) client weights, >= 0, summing to one (default uniform).
    noise_cov : optional (..., M, d, d) covariance Sigma_i of additive gradient noise.
    sigma2 : optional scalar or (..., M): shorthand for ``noise_cov = sigma2 * I``.
    const : optional (..., M) constants c_i (irrelevant to every algorithm; kept for losses).
    """

    H: Any
    x_opt: Any
    weights: Any = None
    noise_cov: Any = None
    sigma2: Any = None
    const: Any = None

    def __post_init__(self):
        try:
            xp = namespace(self.H)
        except TypeError:
            xp = np
        H = V.array(self.H, "H", xp=xp, min_ndim=3)
        if H.shape[-1] != H.shape[-2]:
            raise ProblemError(f"H must have shape (..., M, d, d); got {tuple(H.shape)}")
        M, d = H.shape[-3], H.shape[-1]
        if M < 1 or d < 1:
            raise ProblemError(f"H must have at least one client and one dimension; got shape {tuple(H.shape)}")
        x_opt = V.array(self.x_opt, "x_opt", xp=xp, min_ndim=2)
        if x_opt.shape[-2:] != (M, d):
            raise ProblemError(f"x_opt must have shape (..., M={M}, d={d}) to match H of shape {tuple(H.shape)}; "
                               f"got {tuple(x_opt.shape)}")
        try:
            np.broadcast_shapes(H.shape[:-3], x_opt.shape[:-2])
        except ValueError:
            raise ProblemError(f"the batch axes of H {tuple(H.shape[:-3])} and x_opt {tuple(x_opt.shape[:-2])} "
                               "do not broadcast") from None
        batch = np.broadcast_shapes(H.shape[:-3], x_opt.shape[:-2])
        asym = float(xp.max(xp.abs(H - mT(H)))) if H.size else 0.0
        scale = float(xp.max(xp.abs(H))) if H.size else 1.0
        if asym > 1e-10 * max(scale, 1.0):
            raise ProblemError(f"H must be symmetric: max |H - H^T| = {asym:.3g}")
        H = _sym(H)
        lam = xp.linalg.eigvalsh(H)
        if bool(xp.any(lam[..., 0] <= 0)):
            raise ProblemError(
                f"H must be positive definite: smallest eigenvalue {float(xp.min(lam[..., 0])):.3g} <= 0"
            )
        w = xp.full(batch + (M,), 1.0 / M) if self.weights is None else validate_weights(self.weights, xp)
        if self.const is not None:
            object.__setattr__(self, "const", V.array(self.const, "const", xp=xp))
        if w.shape[-1] != M:
            raise ProblemError(f"weights must have M={M} entries on the last axis; got {tuple(w.shape)}")
        cov = self.noise_cov
        if cov is not None and self.sigma2 is not None:
            raise ProblemError("give noise_cov or sigma2, not both")
        if cov is None and self.sigma2 is not None:
            s2 = V.array(self.sigma2, "sigma2", xp=xp, low=0.0)
            if s2.ndim and s2.shape[-1] != M:
                raise ProblemError(f"sigma2 must be a scalar or have M={M} entries on its last axis; got {tuple(s2.shape)}")
            if s2.ndim == 0:
                s2 = xp.full(batch + (M,), float(s2))
            cov = s2[..., None, None] * xp.eye(d)
        cov = _noise_cov_checked(cov, xp, M, d)
        object.__setattr__(self, "H", H)
        object.__setattr__(self, "x_opt", x_opt)
        object.__setattr__(self, "weights", w)
        object.__setattr__(self, "noise_cov", cov)
        object.__setattr__(self, "_lam", lam)

    # ------------------------------------------------------------------ shapes
    @property
    def xp(self):
        return namespace(self.H)

    @property
    def M(self) -> int:
        return self.H.shape[-3]

    @property
    def d(self) -> int:
        return self.H.shape[-1]

    @property
    def batch_shape(self) -> tuple:
        return np.broadcast_shapes(self.H.shape[:-3], self.x_opt.shape[:-2], self.weights.shape[:-1])

    # ------------------------------------------------------------------ objective
    @property
    def Hbar(self):
        """sum_i w_i H_i, the Hessian of F."""
        return weighted_sum(self.weights, self.H, 2)

    @property
    def x_star(self):
        """The minimiser of F: Hbar^{-1} sum_i w_i H_i x_i*."""
        xp = self.xp
        rhs = (xp.einsum("...m,...mij,...mj->...i", self.weights, self.H, self.x_opt) if xp is np
               else weighted_sum(self.weights, matvec(self.H, self.x_opt)))
        return xp.linalg.solve(self.Hbar, rhs[..., None])[..., 0]

    def grad_clients(self, X):
        """grad F_i(X_i) = H_i (X_i - x_i*) for one point per client, ``X`` (..., M, d)."""
        X = self._check_per_client(X)
        return matvec(self.H, X - self.x_opt)

    def loss_clients(self, X):
        """F_i(X_i) for one point per client, ``X`` (..., M, d) -> (..., M)."""
        xp = self.xp
        e = self._check_per_client(X) - self.x_opt
        val = (0.5 * xp.einsum("...mi,...mij,...mj->...m", e, self.H, e) if xp is np
               else 0.5 * xp.sum(e * matvec(self.H, e), axis=-1))
        return val if self.const is None else val + asarray(self.const, xp)

    # ------------------------------------------------------------------ constants
    @property
    def mu_i(self):
        return self._lam[..., 0]

    @property
    def L_i(self):
        return self._lam[..., -1]

    @property
    def L(self):
        """max_i lambda_max(H_i): common smoothness constant (local adaptivity's Assumption 3, FedDelAvg's beta)."""
        return self.xp.max(self.L_i, axis=-1)

    @property
    def mu(self):
        """min_i lambda_min(H_i): common strong-convexity constant."""
        return self.xp.min(self.mu_i, axis=-1)

    @property
    def mu_F(self):
        return self.xp.linalg.eigvalsh(self.Hbar)[..., 0]

    @property
    def L_F(self):
        return self.xp.linalg.eigvalsh(self.Hbar)[..., -1]

    @property
    def grad_at_star(self):
        """grad F_i(x*) for every client (..., M, d); their w-average is zero."""
        return self.grad_clients_at(self.x_star)

    @property
    def zeta2(self):
        """Heterogeneity at the optimum: sum_i w_i ||grad F_i(x*)||^2."""
        g = self.grad_at_star
        xp = self.xp
        return xp.sum(self.weights * xp.sum(g * g, axis=-1), axis=-1)

    @property
    def noise_trace(self):
        """tr Sigma_i per client (..., M); zeros without noise. Assumption-2 sigma^2 is its max."""
        if self.noise_cov is None:
            return self.xp.zeros(self.batch_shape + (self.M,))
        return trace(self.noise_cov)

    def delta_at(self, points):
        """Per-client dissimilarity max_p ||grad F_i(p) - grad F(p)|| over ``points`` (..., P, d).

        The map p -> ||grad F_i(p) - grad F(p)|| is convex, so this is also its maximum over the
        convex hull of the points (the region a proof visits).
        """
        xp = self.xp
        pts = V.array(points, "points", xp=xp, min_ndim=2, shape=(self.d,))  # (..., P, d)
        D = self.H - self.Hbar[..., None, :, :]  # (..., M, d, d)
        c = self.grad_at_star  # (..., M, d)
        u = pts - self.x_star[..., None, :]
        if xp is np:
            diff = np.einsum("...mij,...pj->...pmi", D, u) + c[..., None, :, :]
        else:   # (..., P, M, d)
            diff = matvec(D[..., None, :, :, :], u[..., :, None, :]) + c[..., None, :, :]
        return xp.max(xp.sqrt(xp.sum(diff * diff, axis=-1)), axis=-2)

    def delta_average_at(self, points):
        """Average dissimilarity delta = sum_i w_i delta_i over ``points`` (see :meth:`delta_at`)."""
        return self.xp.sum(self.weights * self.delta_at(points), axis=-1)

    def delta_ball(self, radius):
        """Upper bound on sup_{||x - x*|| <= radius} ||grad F_i(x) - grad F(x)||: ||H_i - Hbar|| r + ||grad F_i(x*)||."""
        xp = self.xp
        D = self.H - self.Hbar[..., None, :, :]
        normD = xp.max(xp.abs(xp.linalg.eigvalsh(D)), axis=-1)
        g = self.grad_at_star
        return normD * radius + xp.sqrt(xp.sum(g * g, axis=-1))

    # ------------------------------------------------------------------ transformations
    def permuted(self, perm):
        """The same federation with clients reordered by ``perm``."""
        xp = self.xp
        p = xp.asarray(perm)
        return QuadraticFederation(
            xp.take(self.H, p, axis=-3),
            xp.take(self.x_opt, p, axis=-2),
            xp.take(self.weights, p, axis=-1),
            None if self.noise_cov is None else xp.take(self.noise_cov, p, axis=-3),
            const=None if self.const is None else xp.take(asarray(self.const, xp), p, axis=-1),
        )

    def take(self, index):
        """One configuration (or a sub-batch) along the leading batch axis."""
        b = self.batch_shape
        if not b:
            raise ProblemError("take() needs a batched federation")
        index = (index, ...)   # the standard indexes every axis
        H = _broadcast(self.H, b + (self.M, self.d, self.d))[index]
        xo = _broadcast(self.x_opt, b + (self.M, self.d))[index]
        w = _broadcast(self.weights, b + (self.M,))[index]
        cov = None if self.noise_cov is None else _broadcast(self.noise_cov, b + (self.M, self.d, self.d))[index]
        const = None if self.const is None else _broadcast(asarray(self.const, self.xp), b + (self.M,))[index]
        return QuadraticFederation(H, xo, w, cov, const=const)


def _broadcast(a, shape):
    return namespace(a).broadcast_to(a, shape)


def random_quadratic_federation(
    *,
    M: int,
    d: int,
    batch: int | None = None,
    kappa: float = 10.0,
    mu: float = 1.0,
    heterogeneity: float = 1.0,
    weights: str = "uniform",
    hessian: str = "random",
    sigma2: float | None = None,
    seed: int = 0,
    backend: str = "numpy",
) -> QuadraticFederation:
    """A random federation with a chosen dimension, client count, condition number and spread.

    Each ``H_i = Q_i diag(lambda_i) Q_i^T`` with ``Q_i`` Haar-random (QR of a Gaussian), and
    eigenvalues log-uniform in ``[mu, kappa mu]`` with both ends attained, so every client has
    condition number exactly ``kappa`` (``hessian="common"`` gives all clients the same ``H``,
    ``"diagonal"`` uses ``Q_i = I``).  ``x_i* ~ heterogeneity * N(0, I_d)``.  Weights are
    uniform or Dirichlet(1) floored at 0.05/M and renormalised.  Draws are keyed by
    ``(seed, configuration, client)``: configuration b of a batch equals the same seed's
    configuration b of any other batch size.
    """
    M = V.integer(M, "M", low=1, high=10**6)
    d = V.integer(d, "d", low=1, high=10**5)
    B = 1 if batch is None else V.integer(batch, "batch", low=1, high=10**9)
    V.check_size(B * M * d * d, "the Hessians of this federation", hint="use fewer configurations, clients or dimensions")
    kappa = V.real(kappa, "kappa", low=1.0, high=1e15)
    mu = V.real(mu, "mu", low=0.0, open_low=True, high=1e150)
    heterogeneity = V.real(heterogeneity, "heterogeneity", low=0.0, high=1e150)
    V.choice(weights, "weights", ("uniform", "dirichlet"))
    V.choice(hessian, "hessian", ("random", "common", "diagonal"))
    if sigma2 is not None:
        sigma2 = V.real(sigma2, "sigma2", low=0.0)
    seed = V.integer(seed, "seed", low=0, high=2**63 - 1)
    V.choice(backend, "backend", ("numpy", "cupy", "array_api_strict"))
    if backend != "numpy":   # built on the host, then sent to the device: both must hold it
        V.check_size(B * M * d * d, "the Hessians of this federation", xp=namespace(backend=backend),
                     hint="use fewer configurations, clients or dimensions")
    cfg = np.arange(B)[:, None]
    cli = np.arange(M)[None, :] if hessian != "common" else np.zeros((1, M), dtype=np.int64)
    G = KeyedStream(seed, "hessian-basis").normal(config=cfg, client=cli, size=(d, d))
    Q, R = np.linalg.qr(G)
    Q = Q * np.sign(np.diagonal(R, axis1=-2, axis2=-1))[..., None, :]
    if hessian == "diagonal":
        Q = np.broadcast_to(np.eye(d), Q.shape)
    u = KeyedStream(seed, "hessian-spectrum").uniform(config=cfg, client=cli, size=(d,))
    if d >= 2:
        u[..., 0], u[..., -1] = 0.0, 1.0
    else:
        u[..., 0] = 0.0
    lam = mu * kappa**u
    H = np.einsum("...ij,...j,...kj->...ik", Q, lam, Q)
    H = 0.5 * (H + np.swapaxes(H, -1, -2))
    x_opt = heterogeneity * KeyedStream(seed, "client-optima").normal(config=cfg, client=np.arange(M)[None, :], size=(d,))
    if weights == "uniform":
        w = np.full((B, M), 1.0 / M)
    elif weights == "dirichlet":
        e = -np.log(KeyedStream(seed, "weights").uniform(config=cfg, client=np.arange(M)[None, :]))
        w = e / e.sum(axis=-1, keepdims=True)
        w = np.maximum(w, 0.05 / M)
        w = w / w.sum(axis=-1, keepdims=True)
    else:
        raise ProblemError(f"weights must be 'uniform' or 'dirichlet'; got {weights!r}")
    if batch is None:
        H, x_opt, w = H[0], x_opt[0], w[0]
    xp = namespace(backend=backend)
    return QuadraticFederation(xp.asarray(H), xp.asarray(x_opt), xp.asarray(w), sigma2=sigma2)


# --------------------------------------------------------------------------------------
# a smooth non-convex separable federation (local adaptivity's Theorem 3 tests)
# --------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class SeparableCosineFederation(_Federation):
    """Batched non-convex separable clients (for local adaptivity's non-convex Theorem 3).

    Problem class
    -------------
    ``F_i(x) = sum_j [ 1/2 a_ij (x_j - c_ij)^2 + b_ij cos x_j ]`` with ``a_ij > 0``, ``b_ij >= 0``,
    ``F = sum_i w_i F_i``.  Each ``F_i`` is ``L``-smooth with ``L = max_ij (a_ij + b_ij)``
    (the Hessian is ``diag(a_i - b_i cos x)``, whose entries lie in ``[a - b, a + b]``), and it is
    non-convex wherever ``b_ij cos x_j > a_ij``.  Arrays are ``(..., M, d)`` with leading
    configuration axes; ``weights`` is ``(..., M)``.  ``noise_cov`` as in ``QuadraticFederation``.

    Lower bound ``F_inf``: ``F`` is separable, ``F(x) = sum_j phi_j(x_j)`` with
    ``phi_j(u) = sum_i w_i [1/2 a_ij (u - c_ij)^2 + b_ij cos u]``.  Every stationary point of
    ``phi_j`` satisfies ``A_j (u - C_j) = B_j sin u`` (``A_j = sum_i w_i a_ij``,
    ``C_j = sum_i w_i a_ij c_ij / A_j``, ``B_j = sum_i w_i b_ij``), so the minimiser lies in
    ``[C_j - B_j/A_j, C_j + B_j/A_j]``.  On a grid of spacing ``h`` over that interval the nearest
    grid point ``g`` to the minimiser ``u*`` has ``phi_j(g) <= phi_j(u*) + (A_j + B_j) h^2 / 8``
    (``phi_j'(u*) = 0``, ``phi_j'' <= A_j + B_j``), so ``min_grid phi_j - (A_j + B_j) h^2 / 8`` is a
    certified lower bound, within that same amount of the exact infimum.

    Example
    -------
    >>> import numpy as np
    >>> fed = SeparableCosineFederation(a=[[1.0, 2.0], [0.5, 1.0]], b=[[1.5, 0.0], [1.0, 0.5]],
    ...                                 c=[[0.0, 1.0], [2.0, -1.0]])
    >>> float(fed.L)
    2.5
    >>> x = np.array([0.3, -0.2])
    >>> bool(fed.loss(x) >= fed.F_inf)
    True
    """

    a: Any
    b: Any
    c: Any
    weights: Any = None
    noise_cov: Any = None

    def __post_init__(self):
        xp = namespace(*(v for v in (self.a, self.b, self.c) if hasattr(v, "shape")))
        a, b, c = (V.array(v, n, xp=xp) for v, n in ((self.a, "a"), (self.b, "b"), (self.c, "c")))
        if a.ndim < 2:
            raise ProblemError(f"a must have shape (..., M, d); got {tuple(a.shape)}")
        M, d = a.shape[-2:]
        for name, v in (("b", b), ("c", c)):
            if v.shape[-2:] != (M, d):
                raise ProblemError(f"{name} must have shape (..., M={M}, d={d}); got {tuple(v.shape)}")
        for name, v in (("a", a), ("b", b), ("c", c)):
            if bool(xp.any(~xp.isfinite(v))):
                raise ProblemError(f"{name} must be finite")
        if bool(xp.any(a <= 0)):
            raise ProblemError(f"a must satisfy a > 0; smallest is {float(a.min())}")
        if bool(xp.any(b < 0)):
            raise ProblemError(f"b must satisfy b >= 0; smallest is {float(b.min())}")
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2], c.shape[:-2])
        w = xp.full(batch + (M,), 1.0 / M) if self.weights is None else validate_weights(self.weights, xp)
        if w.shape[-1] != M:
            raise ProblemError(f"weights must have M={M} entries on the last axis; got {tuple(w.shape)}")
        cov = _noise_cov_checked(self.noise_cov, xp, M, d)
        for name, v in (("a", a), ("b", b), ("c", c), ("weights", w), ("noise_cov", cov)):
            object.__setattr__(self, name, v)

    @property
    def xp(self):
        return namespace(self.a)

    @property
    def M(self) -> int:
        return self.a.shape[-2]

    @property
    def d(self) -> int:
        return self.a.shape[-1]

    @property
    def batch_shape(self) -> tuple:
        return np.broadcast_shapes(self.a.shape[:-2], self.b.shape[:-2], self.c.shape[:-2], self.weights.shape[:-1])

    def grad_clients(self, X):
        """grad F_i(X_i) = a_i (X_i - c_i) - b_i sin X_i for one point per client, ``X`` (..., M, d)."""
        X = self._check_per_client(X)
        return self.a * (X - self.c) - self.b * self.xp.sin(X)

    def loss_clients(self, X):
        """F_i(X_i) for one point per client, ``X`` (..., M, d) -> (..., M)."""
        X = self._check_per_client(X)
        return self.xp.sum(0.5 * self.a * (X - self.c) ** 2 + self.b * self.xp.cos(X), axis=-1)

    @property
    def L_i(self):
        """max_j (a_ij + b_ij): smoothness constant of client i."""
        return self.xp.max(self.a + self.b, axis=-1)

    @property
    def L(self):
        """max_ij (a_ij + b_ij): common smoothness constant (local adaptivity's Assumption 3)."""
        return self.xp.max(self.L_i, axis=-1)

    def F_inf_bound(self, grid: int = 4097):
        """Certified lower bound on inf F (class docstring) from a ``grid``-point search per coordinate."""
        grid = V.integer(grid, "grid", low=2)
        V.check_size(int(np.prod(self.batch_shape, dtype=np.int64)) * self.d * self.M * grid,
                     f"F_inf_bound with grid={grid} (batch x d x M x grid values)",
                     hint="use a coarser grid (the bound is within sum_j (A_j + B_j) h_j^2 / 8 of inf F)")
        xp = self.xp
        w = self.weights[..., None]
        A = xp.sum(w * self.a, axis=-2)  # (..., d)
        B = xp.sum(w * self.b, axis=-2)
        C = xp.sum(w * self.a * self.c, axis=-2) / A
        r = B / A
        s = xp.linspace(-1.0, 1.0, grid)
        u = C[..., None] + r[..., None] * s  # (..., d, G)
        a, b, c = (mT(v)[..., None] for v in (self.a, self.b, self.c))  # (..., d, M, 1)
        ww = self.weights[..., None, :, None]
        uu = u[..., None, :]
        phi = xp.sum(ww * (0.5 * a * (uu - c) ** 2 + b * xp.cos(uu)), axis=-2)  # (..., d, G)
        h = 2.0 * r / (grid - 1)
        return xp.sum(xp.min(phi, axis=-1) - (A + B) * h * h / 8.0, axis=-1)

    @property
    def F_inf(self):
        """A certified lower bound on inf_x F(x), within sum_j (A_j + B_j) h_j^2 / 8 of it (class docstring)."""
        return self.F_inf_bound()


@dataclass(frozen=True, eq=False)
class PseudoHuberFederation(_Federation):
    """Batched smooth clients with bounded gradients (Assumptions 1 and 3 of anarchic-FL analyses).

    Problem class
    -------------
    ``F_i(x) = s delta_i^2 (sqrt(1 + ||x - b_i||^2 / delta_i^2) - 1)`` with scale ``s > 0``:
    ``grad F_i(x) = s (x - b_i) / sqrt(1 + ||x - b_i||^2 / delta_i^2)``, so ``||grad F_i|| < s delta_i``
    everywhere (``G = s max_i delta_i`` bounds every gradient) and ``F_i`` is ``L``-smooth with
    ``L = s`` (the Hessian's eigenvalues are ``s/q`` and ``s/q^3`` with ``q >= 1``); ``F_i >= 0``
    with minimum 0 at ``b_i``.  Multiplying by ``s`` scales ``L`` and ``G`` together (the rescaling
    that moves a step size ``eta`` with ``eta L`` fixed).  ``b`` is ``(..., M, d)``, ``delta`` a
    scalar or ``(..., M)``; ``noise_cov`` as in ``QuadraticFederation`` (additive noise; with it,
    ``E||g_i||^2 <= s^2 delta_i^2 + tr Sigma_i``).

    Example
    -------
    >>> import numpy as np
    >>> fed = PseudoHuberFederation(b=[[0.0], [2.0]], delta=1.0)
    >>> float(fed.L), float(fed.G)
    (1.0, 1.0)
    >>> np.round(fed.grad(np.array([1.0])), 12).tolist()   # symmetric clients: x = 1 is stationary
    [0.0]
    """

    b: Any
    delta: Any = 1.0
    scale: Any = 1.0
    weights: Any = None
    noise_cov: Any = None

    def __post_init__(self):
        xp = namespace(*(v for v in (self.b,) if hasattr(v, "shape")))
        b = V.array(self.b, "b", xp=xp, min_ndim=2)
        M, d = b.shape[-2:]
        delta = V.array(self.delta, "delta", xp=xp, low=0.0, open_low=True)
        if delta.ndim and delta.shape[-1] != M:
            raise ProblemError(f"delta must be a scalar or have M={M} entries on its last axis; got {tuple(delta.shape)}")
        scale = V.array(self.scale, "scale", xp=xp, low=0.0, open_low=True)
        if scale.ndim and scale.shape[-1] != 1 and scale.ndim > len(b.shape) - 2:
            raise ProblemError(f"scale must be a scalar or one per configuration; got {tuple(scale.shape)}")
        batch = b.shape[:-2]
        w = xp.full(batch + (M,), 1.0 / M) if self.weights is None else validate_weights(self.weights, xp)
        if w.shape[-1] != M:
            raise ProblemError(f"weights must have M={M} entries on the last axis; got {tuple(w.shape)}")
        cov = _noise_cov_checked(self.noise_cov, xp, M, d)
        for name, v in (("b", b), ("delta", delta), ("scale", scale), ("weights", w), ("noise_cov", cov)):
            object.__setattr__(self, name, v)

    @property
    def xp(self):
        return namespace(self.b)

    @property
    def M(self) -> int:
        return self.b.shape[-2]

    @property
    def d(self) -> int:
        return self.b.shape[-1]

    @property
    def batch_shape(self) -> tuple:
        return np.broadcast_shapes(self.b.shape[:-2], self.weights.shape[:-1], self.scale.shape)

    def _delta_col(self):
        dl = self.delta
        return dl[..., None] if dl.ndim else dl

    def grad_clients(self, X):
        """``s (X_i - b_i) / sqrt(1 + ||X_i - b_i||^2 / delta_i^2)`` for one point per client, ``X`` (..., M, d)."""
        X = self._check_per_client(X)
        u = X - self.b
        dl = self._delta_col()
        q = self.xp.sqrt(1.0 + self.xp.sum(u * u, axis=-1, keepdims=True) / (dl * dl))
        s = self.scale[..., None, None] if self.scale.ndim else self.scale
        return s * u / q

    def loss_clients(self, X):
        """``F_i(X_i)`` for one point per client, ``X`` (..., M, d) -> (..., M)."""
        X = self._check_per_client(X)
        u = X - self.b
        dl = self.delta
        r2 = self.xp.sum(u * u, axis=-1)
        s = self.scale[..., None] if self.scale.ndim else self.scale
        # s delta^2 (q - 1) = s r^2 / (q + 1): the same value without cancellation near b_i (tiny r)
        return s * r2 / (self.xp.sqrt(1.0 + r2 / (dl * dl)) + 1.0)

    @property
    def L(self):
        """The smoothness constant ``s`` of every client (and of F)."""
        return self.scale * 1.0

    @property
    def G(self):
        """``s max_i delta_i``: a bound on every gradient norm (noise-free)."""
        dl = self.delta if self.delta.ndim else self.delta[None]
        return self.scale * self.xp.max(dl, axis=-1)

    def hess_clients_at(self, x):
        """``Hess F_i(x) = s (I / q - u u^T / (delta_i^2 q^3))``, ``u = x - b_i``, ``q = sqrt(1 + |u|^2/delta_i^2)``."""
        xp = self.xp
        u = self._at(x) - self.b
        dl = self._delta_col()
        q = xp.sqrt(1.0 + xp.sum(u * u, axis=-1, keepdims=True) / (dl * dl))         # (..., M, 1)
        s = self.scale[..., None, None, None] if self.scale.ndim else self.scale
        eye = xp.eye(self.d)
        return s * (eye / q[..., None] - u[..., :, None] * u[..., None, :] / ((dl * dl) * q**3)[..., None])

    @property
    def x_star(self):
        """The minimiser of ``F = sum_i w_i F_i`` (unique: ``F`` is strictly convex), by damped Newton from
        the weighted mean of the ``b_i`` to a gradient norm at round-off level (per configuration)."""
        cached = getattr(self, "_x_star", None)
        if cached is not None:
            return cached
        xp = self.xp
        x = weighted_sum(self.weights, xp.broadcast_to(self.b, self.weights.shape + (self.d,)))
        scale = float(xp.max(self.scale * (1.0 + xp.max(xp.abs(self.b)))))
        active = xp.ones(x.shape[:-1], dtype=xp.bool)
        for _ in range(200):
            g = self.grad(x)
            g0 = xp.sum(g * g, axis=-1)
            active = active & (xp.sqrt(g0) > 1e-14 * scale)
            if not bool(xp.any(active)):
                break
            Hs = xp.sum(self.weights[..., None, None] * self.hess_clients_at(x), axis=-3)
            step = xp.linalg.solve(Hs, g[..., None])[..., 0]
            t = xp.ones(x.shape[:-1])
            for _ in range(60):   # halve until |grad F| decreases (the Newton step is a descent direction for it)
                g1 = self.grad(x - t[..., None] * step)
                worse = (xp.sum(g1 * g1, axis=-1) >= g0) & active
                if not bool(xp.any(worse)):
                    break
                t = xp.where(worse, 0.5 * t, t)
            active = active & ~worse                  # no step decreases |grad F| any more: round-off reached
            x = x - xp.where(active, t, 0.0)[..., None] * step
        g = self.grad(x)
        worst = float(xp.max(xp.sqrt(xp.sum(g * g, axis=-1))))
        if worst > 1e-8 * scale:
            raise ProblemError(f"PseudoHuberFederation.x_star: Newton's method stopped at |grad F| = {worst:.3g} "
                               "(delta_i very small against the spread of the b_i makes F nearly non-smooth)")
        object.__setattr__(self, "_x_star", x)
        return x


@dataclass(frozen=True, eq=False)
class LinearFederation(_Federation):
    """Linear clients ``F_i(x) = <c_i, x>``: constant gradients ``c_i`` (``G = max_i ||c_i||``), ``L``-smooth
    for every ``L >= 0``; the sharpest toy for model-discrepancy lemmas (every step moves by a known amount).

    ``c`` is ``(..., M, d)``; ``noise_cov`` as in ``QuadraticFederation``.

    Example
    -------
    >>> fed = LinearFederation(c=[[1.0], [-1.0], [-1.0]])
    >>> float(fed.grad(np.zeros(1))[0]), float(fed.G)
    (-0.3333333333333333, 1.0)
    """

    c: Any
    weights: Any = None
    noise_cov: Any = None

    def __post_init__(self):
        xp = namespace(*(v for v in (self.c,) if hasattr(v, "shape")))
        c = V.array(self.c, "c", xp=xp, min_ndim=2)
        M, d = c.shape[-2:]
        w = xp.full(c.shape[:-2] + (M,), 1.0 / M) if self.weights is None else validate_weights(self.weights, xp)
        if w.shape[-1] != M:
            raise ProblemError(f"weights must have M={M} entries on the last axis; got {tuple(w.shape)}")
        cov = _noise_cov_checked(self.noise_cov, xp, M, d)
        for name, v in (("c", c), ("weights", w), ("noise_cov", cov)):
            object.__setattr__(self, name, v)

    @property
    def xp(self):
        return namespace(self.c)

    @property
    def M(self) -> int:
        return self.c.shape[-2]

    @property
    def d(self) -> int:
        return self.c.shape[-1]

    @property
    def batch_shape(self) -> tuple:
        return np.broadcast_shapes(self.c.shape[:-2], self.weights.shape[:-1])

    def grad_clients(self, X):
        """``c_i`` at every point (``X`` (..., M, d) only fixes the shape)."""
        X = self._check_per_client(X)
        return self.xp.broadcast_to(self.c, np.broadcast_shapes(X.shape, self.c.shape)) + 0.0 * X

    def loss_clients(self, X):
        X = self._check_per_client(X)
        return self.xp.sum(self.c * X, axis=-1)

    @property
    def L(self):
        return 0.0

    @property
    def G(self):
        """``max_i ||c_i||``."""
        return self.xp.max(self.xp.sqrt(self.xp.sum(self.c * self.c, axis=-1)), axis=-1)


# --------------------------------------------------------------------------------------
# multinomial logistic regression clients (the FedDelAvg experiments)
# --------------------------------------------------------------------------------------
from functools import cached_property  # noqa: E402


@dataclass(frozen=True, eq=False)
class LogisticFederation(_Federation):
    """Federated multinomial logistic regression (softmax cross-entropy, optional L2).

    Problem class
    -------------
    Client ``i`` holds ``D_i`` samples ``(x, y)`` with ``x`` in R^m and ``y`` in {0..s-1}; its loss is

        F_i(W) = 1/D_i sum_{(x,y) in D_i} -log softmax(W x)_y + reg/2 ||W||^2,

    with ``W`` an ``s x m`` matrix flattened class-major to a vector of length ``d = s m``
    (index ``c m + f``), and ``F = sum_i rho_i F_i`` with ``rho_i = D_i / sum_j D_j`` by default
    (FedDelAvg's eqs. (1)-(2)).  Client data of different sizes are stored padded: ``X`` is
    ``(M, n_max, m)``, ``y`` is ``(M, n_max)`` and ``mask`` ``(M, n_max)`` marks the valid samples,
    which must come first in each row (``from_client_data`` builds this layout).  Parameters
    may carry leading configuration axes: ``grad_clients(W)`` takes ``W`` of shape ``(..., d)``
    (one point for every client) or ``(..., M, d)`` (one point per client).

    Constants of FedDelAvg's assumptions, named as in that paper, **not** as in ``QuadraticFederation``
    (whose ``L`` is a smoothness constant):

    * ``L`` -- Lipschitz constant of every ``F_i`` without regularisation, ``sqrt(2) max ||x||``
      (each per-sample gradient is ``(p - e_y) x^T`` and ``||p - e_y|| <= sqrt 2``).  With
      ``reg > 0`` no finite global constant exists; ``lipschitz_ball(r)`` bounds it on ``||W|| <= r``.
    * ``beta`` -- smoothness, ``max_i lambda_max(X_i^T X_i) / (2 D_i) + reg`` (the softmax Hessian
      ``diag(p) - p p^T`` has norm ``<= 1/2``).  ``smoothness`` and ``lipschitz`` are aliases.
    * ``delta_at(points)`` -- per-client dissimilarity ``max_p ||grad F_i(p) - grad F(p)||`` over points.
    * ``x_star`` -- a reference minimiser of ``F`` (L-BFGS, then Newton polishing to a gradient
      norm near machine precision); ``F_star = F(x_star)``.  Without regularisation softmax CE
      has no minimiser on separable data and a non-unique one otherwise (softmax is shift-invariant): use
      ``reg > 0``; the solver raises ``ProblemError`` when it cannot reach the tolerance.

    Example
    -------
    >>> import numpy as np, fltheory as flt
    >>> rng = np.random.default_rng(0)
    >>> Xs = [rng.normal(size=(n, 3)) for n in (5, 8)]
    >>> ys = [rng.integers(0, 2, size=n) for n in (5, 8)]
    >>> fed = flt.problems.LogisticFederation.from_client_data(Xs, ys, n_classes=2, reg=0.1)
    >>> fed.M, fed.d, np.round(fed.weights * 13, 12).tolist()
    (2, 6, [5.0, 8.0])
    >>> bool(np.linalg.norm(fed.grad(fed.x_star)) < 1e-12)
    True
    """

    X: Any
    y: Any
    mask: Any = None
    n_classes: int | None = None
    reg: float = 0.0
    weights: Any = None

    def __post_init__(self):
        xp = namespace(self.X)
        X = V.array(self.X, "X", xp=xp)
        if X.ndim != 3:
            raise ProblemError(f"X must have shape (M, n_max, m); got {tuple(X.shape)}")
        M, n, m = X.shape
        y = xp.asarray(self.y)
        if tuple(y.shape) != (M, n) or dtype_kind(y, xp) not in "iu":
            raise ProblemError(f"y must be an integer array of shape (M={M}, n_max={n}); got {tuple(y.shape)} {y.dtype}")
        mask = xp.ones((M, n), dtype=xp.bool) if self.mask is None else xp.astype(xp.asarray(self.mask), xp.bool)
        if tuple(mask.shape) != (M, n):
            raise ProblemError(f"mask must have shape (M={M}, n_max={n}); got {tuple(mask.shape)}")
        sizes = xp.sum(xp.astype(mask, xp.int64), axis=-1)
        if bool(xp.any(sizes < 1)):
            raise ProblemError("every client must hold at least one sample (mask row sums must be >= 1)")
        prefix = xp.arange(n)[None, :] < sizes[:, None]
        if bool(xp.any(prefix != mask)):
            raise ProblemError("mask must mark the valid samples first in each row (pad at the end)")
        s = int(xp.max(y[mask])) + 1 if self.n_classes is None else V.integer(self.n_classes, "n_classes", low=1)
        V.check_size(M * n * s, f"the one-hot labels of n_classes={s} (M x n_max x n_classes)",
                     hint="n_classes is the number of distinct labels (the default: the largest label + 1)")
        if bool(xp.any((y[mask] < 0) | (y[mask] >= s))):
            raise ProblemError(f"labels y must lie in 0..n_classes-1 = 0..{s - 1}")
        if not float(self.reg) >= 0:
            raise ProblemError(f"reg must be >= 0; got {self.reg}")
        if self.weights is None:
            w = xp.astype(sizes, xp.float64) / float(xp.sum(sizes))
        else:
            w = validate_weights(self.weights, xp)
            if tuple(w.shape) != (M,):
                raise ProblemError(f"weights must have shape (M={M},); got {tuple(w.shape)}")
        y = xp.where(mask, y, 0)
        X = xp.where(mask[..., None], X, 0.0)
        object.__setattr__(self, "X", X)
        object.__setattr__(self, "y", y)
        object.__setattr__(self, "mask", mask)
        object.__setattr__(self, "n_classes", s)
        object.__setattr__(self, "reg", float(self.reg))
        object.__setattr__(self, "weights", w)
        object.__setattr__(self, "sizes", sizes)
        object.__setattr__(self, "_onehot", xp.astype(y[..., None] == xp.arange(s), xp.float64)
                           * xp.astype(mask[..., None], xp.float64))

    @classmethod
    def from_client_data(cls, Xs, ys, *, n_classes=None, reg: float = 0.0, weights=None) -> "LogisticFederation":
        """Pad a list of per-client ``(D_i, m)`` feature arrays and ``(D_i,)`` labels."""
        reg = V.real(reg, "reg", low=0.0)
        if n_classes is not None:
            n_classes = V.integer(n_classes, "n_classes", low=2, high=10**6)
        for name, v in (("Xs", Xs), ("ys", ys)):
            if not isinstance(v, (list, tuple)):
                raise V.InputTypeError(f"{name} must be a list of per-client arrays; got {V.shown(v)}")
        if len(Xs) != len(ys) or not Xs:
            raise ProblemError("Xs and ys must be non-empty lists of the same length (one entry per client)")
        xp = namespace(Xs[0]) if is_array(Xs[0]) else np
        Xs = [V.array(x, f"Xs[{i}]", xp=xp, ndim=2) for i, x in enumerate(Xs)]
        ys = [V.array(yv, f"ys[{i}]", xp=xp, ndim=1, kind="integer", low=0) for i, yv in enumerate(ys)]
        m = Xs[0].shape[-1]
        n = max(int(x.shape[0]) for x in Xs)
        X = xp.zeros((len(Xs), n, m))
        y = xp.zeros((len(Xs), n), dtype=xp.int64)
        mask = xp.zeros((len(Xs), n), dtype=xp.bool)
        for i, (xi, yi) in enumerate(zip(Xs, ys)):  # construction only, not a hot path
            if xi.shape[-1] != m or xi.shape[0] != yi.shape[0]:
                raise ProblemError(f"client {i}: Xs[{i}] must be (D_i, m={m}) and ys[{i}] (D_i,); got {xi.shape}, "
                                   f"{yi.shape}")
            X[i, : xi.shape[0], :] = asarray(xi, xp)
            y[i, : xi.shape[0]] = xp.asarray(yi)
            mask[i, : xi.shape[0]] = True
        return cls(X, y, mask, n_classes=n_classes, reg=reg, weights=weights)

    # ------------------------------------------------------------------ shapes
    @property
    def xp(self):
        return namespace(self.X)

    @property
    def M(self) -> int:
        return self.X.shape[0]

    @property
    def m(self) -> int:
        """Number of features."""
        return self.X.shape[-1]

    @property
    def d(self) -> int:
        """Number of parameters ``n_classes * m``."""
        return self.n_classes * self.m

    @property
    def batch_shape(self) -> tuple:
        return ()

    def _logits(self, W, X):
        xp = self.xp
        Wr = xp.reshape(W, W.shape[:-1] + (self.n_classes, self.m))
        # a contiguous transpose: OpenBLAS is far slower on a transposed view here
        return X @ (np.ascontiguousarray(mT(Wr)) if xp is np else mT(Wr))

    # ------------------------------------------------------------------ objective
    def _ce_grad(self, W, X, Y, scale):
        xp = self.xp
        Z = self._logits(W, X)
        P = xp.exp(Z - xp.max(Z, axis=-1, keepdims=True))
        R = (P / xp.sum(P, axis=-1, keepdims=True) - Y) * scale  # padded rows of X are zero: no contribution
        G = xp.reshape((np.ascontiguousarray(mT(R)) if xp is np else mT(R)) @ X, R.shape[:-2] + (self.d,))
        return G + self.reg * W if self.reg else G

    def grad_clients(self, W, idx=None):
        """grad F_i(W_i) for one parameter vector per client, ``W`` (..., M, d) -> (..., M, d).

        With ``idx`` (integer array ``(..., M, b)`` of sample positions, each ``< D_i``) the
        minibatch gradient ``1/b sum_{n in idx_i} grad f(x_n, y_n; W_i)`` (+ reg W_i) instead.
        """
        xp = self.xp
        W = self._check_per_client(W)
        if idx is None:
            return self._ce_grad(W, self.X, self._onehot, (1.0 / xp.astype(self.sizes, xp.float64))[:, None, None])
        rows = np.arange(self.M)[:, None] if xp is np else xp.arange(self.M)[:, None]
        return self._ce_grad(W, gather(self.X, rows, idx), gather(self._onehot, rows, idx), 1.0 / idx.shape[-1])

    def grad_client(self, i: int, W, idx=None):
        """grad F_i at ``W`` (d,) for the single client ``i`` (minibatch positions ``idx`` (b,) optional)."""
        n = int(self.sizes[i]) if idx is None else None
        rows = slice(0, n) if idx is None else self.xp.asarray(idx)
        scale = 1.0 / (n if idx is None else len(idx))
        return self._ce_grad(asarray(W, self.xp), self.X[i, rows], self._onehot[i, rows], scale)

    def loss_clients(self, W):
        """F_i(W_i) for one parameter vector per client, ``W`` (..., M, d) -> (..., M)."""
        xp = self.xp
        W = self._check_per_client(W)
        Z = self._logits(W, self.X)
        zmax = xp.max(Z, axis=-1, keepdims=True)
        lse = (zmax[..., 0] + xp.log(xp.sum(xp.exp(Z - zmax), axis=-1)))
        zy = xp.sum(Z * self._onehot, axis=-1)
        if xp is np:
            val = ((lse - zy) * self.mask).sum(axis=-1) / self.sizes
        else:   # the standard promotes neither booleans nor integers with floats
            val = xp.sum((lse - zy) * xp.astype(self.mask, xp.float64), axis=-1) / xp.astype(self.sizes, xp.float64)
        return val + 0.5 * self.reg * xp.sum(W * W, axis=-1) if self.reg else val

    def predict(self, W, X):
        """Predicted classes for features ``X`` (n, m) under parameters ``W`` (..., d) -> (..., n)."""
        W = V.array(W, "W", xp=self.xp, shape=(self.d,))            # a NaN model has no prediction (not class 0)
        X = V.array(X, "X", xp=self.xp, shape=(self.m,))
        return self.xp.argmax(self._logits(W, X), axis=-1)

    def accuracy(self, W, X=None, y=None):
        """Fraction of correct predictions on ``(X, y)`` (default: the pooled training data), (...)."""
        xp = self.xp
        if X is None:
            X, y = self.X[self.mask], self.y[self.mask]
        return xp.mean(xp.astype(self.predict(W, X) == xp.asarray(y), xp.float64), axis=-1)

    def _pooled(self):
        xp = self.xp
        wn = ((self.weights / self.sizes)[:, None] * xp.ones(self.mask.shape))[self.mask]
        return self.X[self.mask], wn

    def _softmax_pooled(self, W, X):
        Z = self._logits(asarray(W, self.xp), X)
        P = self.xp.exp(Z - Z.max(axis=-1, keepdims=True))
        return P / P.sum(axis=-1, keepdims=True)

    def hessp(self, W, V):
        """Hessian-vector product of F at one point ``W`` (d,) with ``V`` (d,)."""
        W, V = (_validation.array(v, n, xp=self.xp, shape=(self.d,)) for v, n in ((W, "W"), (V, "V")))
        X, wn = self._pooled()
        P = self._softmax_pooled(W, X)
        A = self._logits(asarray(V, self.xp), X)  # (N, s): V x_n
        B = (P * A - P * (P * A).sum(axis=-1, keepdims=True)) * wn[:, None]
        return (self.xp.ascontiguousarray(B.T) @ X).reshape(self.d) + self.reg * V

    def hessian(self, W):
        """The Hessian of F at one point ``W`` (d,) as a (d, d) array (class-major layout)."""
        xp = self.xp
        X, wn = self._pooled()
        P = self._softmax_pooled(W, X)
        s, m = self.n_classes, self.m
        T1 = xp.einsum("n,nc,nf,ng->cfg", wn, P, X, X)
        A = (xp.sqrt(wn)[:, None, None] * P[:, :, None] * X[:, None, :]).reshape(-1, s * m)
        H = -(A.T @ A)
        for c in range(s):  # s diagonal blocks
            H[c * m:(c + 1) * m, c * m:(c + 1) * m] += T1[c]
        return H + self.reg * xp.eye(s * m)

    # ------------------------------------------------------------------ constants
    @property
    def L_i(self):
        """Per-client Lipschitz constants sqrt(2) max_{x in D_i} ||x|| (data term)."""
        xp = self.xp
        return math.sqrt(2.0) * xp.max(xp.sqrt(xp.sum(self.X * self.X, axis=-1)), axis=-1)

    @property
    def L(self):
        """sqrt(2) max ||x||: Lipschitz constant of every F_i (data term; FedDelAvg's Assumption 1)."""
        return self.xp.max(self.L_i)

    lipschitz = L

    def lipschitz_ball(self, radius):
        """Bound on ||grad F_i(W)|| over ||W|| <= radius (includes the L2 term)."""
        return self.L + self.reg * radius

    @property
    def beta_i(self):
        """Per-client smoothness lambda_max(X_i^T X_i) / (2 D_i) + reg."""
        xp = self.xp
        G = mT(self.X) @ self.X
        return xp.linalg.eigvalsh(G)[..., -1] / (2.0 * xp.astype(self.sizes, xp.float64)) + self.reg

    @property
    def beta(self):
        """max_i beta_i: smoothness constant of every F_i (FedDelAvg's beta)."""
        return self.xp.max(self.beta_i)

    smoothness = beta

    def delta_at(self, points):
        """Per-client dissimilarity max_p ||grad F_i(p) - grad F(p)|| over ``points`` (..., P, d) -> (..., M)."""
        xp = self.xp
        g = self.grad_clients_at(V.array(points, "points", xp=xp, min_ndim=2, shape=(self.d,)))  # (..., P, M, d)
        gbar = np.einsum("m,...mi->...i", self.weights, g) if xp is np else weighted_sum(self.weights, g)
        diff = g - gbar[..., None, :]
        return xp.max(xp.sqrt(xp.sum(diff * diff, axis=-1)), axis=-2)

    @cached_property
    def _reference(self):
        from scipy.optimize import minimize  # noqa: PLC0415
        from scipy.sparse.linalg import LinearOperator, cg  # noqa: PLC0415

        xp = self.xp
        host = self if xp is np else None
        if host is None:  # pragma: no cover - GPU path: solve on the host
            from .backend import to_numpy  # noqa: PLC0415

            host = LogisticFederation(to_numpy(self.X), to_numpy(self.y), to_numpy(self.mask),
                                      self.n_classes, self.reg, to_numpy(self.weights))
        fun = lambda w: (float(host.loss(w)), np.asarray(host.grad(w)))  # noqa: E731
        res = minimize(fun, np.zeros(host.d), jac=True, method="L-BFGS-B",
                       options={"maxiter": 20000, "maxcor": 30, "gtol": 1e-8, "ftol": 0.0})
        w = res.x
        scale = max(float(host.L_i.max()), 1.0)
        for _ in range(6):  # Newton polishing, conjugate gradients on Hessian-vector products
            g = np.asarray(host.grad(w))
            if np.linalg.norm(g) <= 1e-13 * scale:
                break
            op = LinearOperator((host.d, host.d), matvec=lambda v: host.hessp(w, v), dtype=float)
            step, _ = cg(op, g, rtol=1e-12, atol=0.0, maxiter=20 * host.d)
            w = w - step
        gnorm = float(np.linalg.norm(host.grad(w)))
        if not gnorm <= 1e-9 * scale:
            raise ProblemError(
                f"no minimiser found (||grad F|| = {gnorm:.3g} after L-BFGS and Newton): the data may be "
                "linearly separable; use reg > 0 (the minimiser then exists and is unique)"
            )
        return xp.asarray(w), gnorm

    @property
    def x_star(self):
        """A reference minimiser of F (d,), to a gradient norm ~1e-13 (see ``x_star_residual``)."""
        return self._reference[0]

    w_star = x_star

    @property
    def x_star_residual(self) -> float:
        """||grad F(x_star)||."""
        return self._reference[1]

    @property
    def F_star(self):
        return self.loss(self.x_star)

    # ------------------------------------------------------------------ transformations
    def permuted(self, perm):
        """The same federation with clients reordered by ``perm``."""
        xp = self.xp
        p = xp.asarray(perm)
        return LogisticFederation(*(xp.take(v, p, axis=0) for v in (self.X, self.y, self.mask)), self.n_classes, self.reg,
                                  xp.take(self.weights, p, axis=0))
