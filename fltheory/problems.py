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
H_i, the smoothness constant of Assumption 3 in spec_004 and beta in spec_001), ``mu`` (min_i
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

from dataclasses import dataclass
from typing import Any

import numpy as np

from .backend import KeyedStream, asarray, namespace

__all__ = ["QuadraticFederation", "random_quadratic_federation", "validate_weights", "ProblemError"]


class ProblemError(ValueError):
    """An invalid problem description (the message names the parameter and the condition)."""


def validate_weights(weights, xp=np, name: str = "weights", atol: float = 1e-12):
    """Check ``weights >= 0`` and ``sum == 1`` along the last axis; return them as an array."""
    w = asarray(weights, xp)
    if w.ndim < 1:
        raise ProblemError(f"{name} must have a client axis, got a scalar")
    if bool(xp.any(~xp.isfinite(w))):
        raise ProblemError(f"{name} must be finite")
    if bool(xp.any(w < 0)):
        raise ProblemError(f"{name} must be >= 0; smallest is {float(w.min())}")
    s = w.sum(axis=-1)
    err = float(xp.max(xp.abs(s - 1.0)))
    if err > atol:
        raise ProblemError(f"{name} must sum to 1 over clients; off by {err:.3g}")
    return w


def _sym(A):
    return 0.5 * (A + A.swapaxes(-1, -2))


@dataclass(frozen=True, eq=False)
class QuadraticFederation:
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
        xp = namespace(self.H)
        H = asarray(self.H, xp)
        x_opt = asarray(self.x_opt, xp)
        if H.ndim < 3 or H.shape[-1] != H.shape[-2]:
            raise ProblemError(f"H must have shape (..., M, d, d); got {tuple(H.shape)}")
        M, d = H.shape[-3], H.shape[-1]
        if x_opt.shape[-2:] != (M, d):
            raise ProblemError(f"x_opt must have shape (..., M={M}, d={d}); got {tuple(x_opt.shape)}")
        batch = np.broadcast_shapes(H.shape[:-3], x_opt.shape[:-2])
        asym = float(xp.max(xp.abs(H - H.swapaxes(-1, -2)))) if H.size else 0.0
        scale = float(xp.max(xp.abs(H))) if H.size else 1.0
        if asym > 1e-10 * max(scale, 1.0):
            raise ProblemError(f"H must be symmetric: max |H - H^T| = {asym:.3g}")
        H = _sym(H)
        lam = xp.linalg.eigvalsh(H)
        if bool(xp.any(lam[..., 0] <= 0)):
            raise ProblemError(
                f"H must be positive definite: smallest eigenvalue {float(lam[..., 0].min()):.3g} <= 0"
            )
        w = xp.full(batch + (M,), 1.0 / M) if self.weights is None else validate_weights(self.weights, xp)
        if w.shape[-1] != M:
            raise ProblemError(f"weights must have M={M} entries on the last axis; got {tuple(w.shape)}")
        cov = self.noise_cov
        if cov is None and self.sigma2 is not None:
            s2 = asarray(self.sigma2, xp)
            if bool(xp.any(s2 < 0)):
                raise ProblemError("sigma2 must be >= 0")
            if s2.ndim == 0:
                s2 = xp.full(batch + (M,), float(s2))
            cov = s2[..., None, None] * xp.eye(d)
        if cov is not None:
            cov = asarray(cov, xp)
            if cov.shape[-3:] != (M, d, d):
                raise ProblemError(f"noise_cov must have shape (..., M={M}, d={d}, d={d}); got {tuple(cov.shape)}")
            if float(xp.max(xp.abs(cov - cov.swapaxes(-1, -2)))) > 1e-10 * max(float(xp.max(xp.abs(cov))), 1.0):
                raise ProblemError("noise_cov must be symmetric")
            if bool(xp.any(xp.linalg.eigvalsh(_sym(cov))[..., 0] < -1e-12)):
                raise ProblemError("noise_cov must be positive semidefinite")
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
        return self.xp.einsum("...m,...mij->...ij", self.weights, self.H)

    @property
    def x_star(self):
        """The minimiser of F: Hbar^{-1} sum_i w_i H_i x_i*."""
        xp = self.xp
        rhs = xp.einsum("...m,...mij,...mj->...i", self.weights, self.H, self.x_opt)
        return xp.linalg.solve(self.Hbar, rhs[..., None])[..., 0]

    def grad_clients(self, x):
        """grad F_i at ``x``: ``x`` is (..., d) (one point for all) or (..., M, d) (one per client)."""
        xp = self.xp
        x = asarray(x, xp)
        if x.shape[-2:] != (self.M, self.d):
            x = x[..., None, :]
        return xp.einsum("...mij,...mj->...mi", self.H, x - self.x_opt)

    def grad(self, x):
        """grad F at ``x`` (..., d)."""
        return self.xp.einsum("...m,...mi->...i", self.weights, self.grad_clients(x))

    def loss_clients(self, x):
        xp = self.xp
        x = asarray(x, xp)
        if x.shape[-2:] != (self.M, self.d):
            x = x[..., None, :]
        e = x - self.x_opt
        val = 0.5 * xp.einsum("...mi,...mij,...mj->...m", e, self.H, e)
        return val if self.const is None else val + asarray(self.const, xp)

    def loss(self, x):
        """F(x) = sum_i w_i F_i(x)."""
        return (self.weights * self.loss_clients(x)).sum(axis=-1)

    # ------------------------------------------------------------------ constants
    @property
    def mu_i(self):
        return self._lam[..., 0]

    @property
    def L_i(self):
        return self._lam[..., -1]

    @property
    def L(self):
        """max_i lambda_max(H_i): common smoothness constant (spec_004 Assumption 3, spec_001 beta)."""
        return self.L_i.max(axis=-1)

    @property
    def mu(self):
        """min_i lambda_min(H_i): common strong-convexity constant."""
        return self.mu_i.min(axis=-1)

    @property
    def mu_F(self):
        return self.xp.linalg.eigvalsh(self.Hbar)[..., 0]

    @property
    def L_F(self):
        return self.xp.linalg.eigvalsh(self.Hbar)[..., -1]

    @property
    def grad_at_star(self):
        """grad F_i(x*) for every client (..., M, d); their w-average is zero."""
        return self.grad_clients(self.x_star)

    @property
    def zeta2(self):
        """Heterogeneity at the optimum: sum_i w_i ||grad F_i(x*)||^2."""
        g = self.grad_at_star
        return (self.weights * (g * g).sum(axis=-1)).sum(axis=-1)

    @property
    def noise_trace(self):
        """tr Sigma_i per client (..., M); zeros without noise. Assumption-2 sigma^2 is its max."""
        if self.noise_cov is None:
            return self.xp.zeros(self.batch_shape + (self.M,))
        return self.xp.einsum("...ii->...", self.noise_cov)

    def delta_at(self, points):
        """Per-client dissimilarity max_p ||grad F_i(p) - grad F(p)|| over ``points`` (..., P, d).

        The map p -> ||grad F_i(p) - grad F(p)|| is convex, so this is also its maximum over the
        convex hull of the points (the region a proof visits, spec_001 §5.0).
        """
        xp = self.xp
        pts = asarray(points, xp)  # (..., P, d)
        D = self.H - self.Hbar[..., None, :, :]  # (..., M, d, d)
        c = self.grad_at_star  # (..., M, d)
        u = pts - self.x_star[..., None, :]
        diff = xp.einsum("...mij,...pj->...pmi", D, u) + c[..., None, :, :]
        return xp.sqrt((diff * diff).sum(axis=-1)).max(axis=-2)

    def delta_ball(self, radius):
        """Upper bound on sup_{||x - x*|| <= radius} ||grad F_i(x) - grad F(x)||: ||H_i - Hbar|| r + ||grad F_i(x*)||."""
        xp = self.xp
        D = self.H - self.Hbar[..., None, :, :]
        normD = xp.abs(xp.linalg.eigvalsh(D)).max(axis=-1)
        g = self.grad_at_star
        return normD * radius + xp.sqrt((g * g).sum(axis=-1))

    # ------------------------------------------------------------------ transformations
    def permuted(self, perm):
        """The same federation with clients reordered by ``perm``."""
        xp = self.xp
        p = xp.asarray(perm)
        return QuadraticFederation(
            self.H[..., p, :, :],
            self.x_opt[..., p, :],
            self.weights[..., p],
            None if self.noise_cov is None else self.noise_cov[..., p, :, :],
        )

    def take(self, index):
        """One configuration (or a sub-batch) along the leading batch axis."""
        b = self.batch_shape
        if not b:
            raise ProblemError("take() needs a batched federation")
        H = xp_broadcast(self.H, b + (self.M, self.d, self.d))[index]
        xo = xp_broadcast(self.x_opt, b + (self.M, self.d))[index]
        w = xp_broadcast(self.weights, b + (self.M,))[index]
        cov = None if self.noise_cov is None else xp_broadcast(self.noise_cov, b + (self.M, self.d, self.d))[index]
        return QuadraticFederation(H, xo, w, cov)


def xp_broadcast(a, shape):
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
    if M < 1 or d < 1:
        raise ProblemError(f"M and d must be >= 1; got M={M}, d={d}")
    if kappa < 1:
        raise ProblemError(f"kappa must be >= 1; got {kappa}")
    if mu <= 0:
        raise ProblemError(f"mu must be > 0; got {mu}")
    if hessian not in ("random", "common", "diagonal"):
        raise ProblemError(f"hessian must be 'random', 'common' or 'diagonal'; got {hessian!r}")
    B = 1 if batch is None else int(batch)
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
