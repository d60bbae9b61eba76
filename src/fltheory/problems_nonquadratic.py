"""Formula-given non-quadratic federations: the test instances of assumptions a quadratic cannot reach.

Three families of clients given by a formula, batched like :class:`~fltheory.problems.QuadraticFederation`
(arrays ``(..., M, d)`` with leading configuration axes, ``weights`` ``(..., M)``, optional additive
gradient noise ``noise_cov`` ``(..., M, d, d)``) and sharing its conventions (one point per client
in ``grad_clients`` / ``loss_clients``, one common point in ``grad`` / ``loss``):

* :class:`SeparableCosineFederation` -- ``F_i(x) = sum_j [1/2 a_ij (x_j - c_ij)^2 + b_ij cos x_j]``:
  ``L``-smooth and non-convex (local adaptivity's non-convex Theorem 3), with a certified lower
  bound ``F_inf``;
* :class:`PseudoHuberFederation` -- smooth clients with bounded gradients (``L = s``,
  ``G = s max_i delta_i``), the bounded-gradient assumptions of anarchic and delayed FL;
* :class:`LinearFederation` -- constant gradients ``c_i``, the sharpest toy for model-discrepancy lemmas.

:mod:`fltheory.problems` re-exports all three (``fltheory.problems.PseudoHuberFederation`` is this
module's class) and holds what every federation shares (:class:`~fltheory.problems.ProblemError`,
:func:`~fltheory.problems.validate_weights`).

Example
-------
>>> import numpy as np
>>> from fltheory.problems_nonquadratic import PseudoHuberFederation
>>> fed = PseudoHuberFederation(b=[[0.0], [4.0]], delta=1.0, scale=2.0)
>>> float(fed.L), float(fed.G)                 # L = s, G = s max_i delta_i
(2.0, 2.0)
>>> bool(np.all(np.abs(fed.grad_clients_at(np.linspace(-50, 50, 11)[:, None])) < fed.G))
True
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .backend import mT, namespace, weighted_sum
from . import validation as V
from .problems import ProblemError, _Federation, _noise_cov_checked, validate_weights

__all__ = ["SeparableCosineFederation", "PseudoHuberFederation", "LinearFederation"]

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
