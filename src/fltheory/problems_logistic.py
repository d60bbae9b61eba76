"""Multinomial logistic regression on per-client data: the experiments' federations.

:class:`LogisticFederation` holds ``M`` clients with their own samples (softmax cross-entropy,
optional L2), stored padded; the constants of FedDelAvg's assumptions (Lipschitz ``L``,
smoothness ``beta``), the dissimilarity over points and a reference minimiser ``x_star`` are
computed from the data.  It shares the conventions of :class:`~fltheory.problems.QuadraticFederation`
(one point per client in ``grad_clients`` / ``loss_clients``, one common point in ``grad`` / ``loss``);
:mod:`fltheory.problems` re-exports it (``fltheory.problems.LogisticFederation`` is this module's
class), and :mod:`fltheory.datasets` builds it from scikit-learn's bundled digits.

Example
-------
>>> import numpy as np
>>> from fltheory.problems_logistic import LogisticFederation
>>> fed = LogisticFederation.from_client_data([np.eye(2), -np.eye(2)], [np.array([0, 1]), np.array([1, 0])],
...                                           reg=0.5)
>>> fed.M, fed.n_classes, fed.d, fed.sizes.tolist()
(2, 2, 4, [2, 2])
>>> float(fed.L)                                # sqrt(2) max ||x||
1.4142135623730951
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from .backend import asarray, dtype_kind, gather, is_array, mT, namespace, weighted_sum
from . import validation as V
from . import validation as _validation   # for methods with a parameter named V
from .problems import ProblemError, _Federation, validate_weights

__all__ = ["LogisticFederation"]

# --------------------------------------------------------------------------------------
# multinomial logistic regression clients (the FedDelAvg experiments)
# --------------------------------------------------------------------------------------
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

    # ------------------------------------------------------------------ the full-data path, client-major
    # Every configuration of a batch sees the same client data, so the logits of all of them are one
    # product per client, (P s, m) @ (m, D_i), with the samples along the last axis: the softmax's
    # reductions over the s classes then run over whole rows of samples, and the gradient is a plain
    # (P s, D_i) @ (D_i, m) product. Against one small product per (configuration, client) with the classes
    # last: 1.6-2.1x at 9 and 64 configurations of 10 digit clients, no gain at one (benchmarks/bench_logistic.py).
    @cached_property
    def _client_major_data(self):
        xp = self.xp
        XT = mT(self.X)
        YT = mT(self._onehot)[:, None, :, :]                        # (M, 1, s, n)
        if xp is np:
            XT, YT = np.ascontiguousarray(XT), np.ascontiguousarray(YT)
        inv = (1.0 / xp.astype(self.sizes, xp.float64))[:, None, None, None]
        maskf = xp.astype(self.mask, xp.float64)[:, None, :]         # (M, 1, n)
        return XT, YT, inv, maskf

    def _logits_client_major(self, W):
        """``W`` (..., M, d) -> the logits ``(M, P, s, n_max)`` of every client's own samples, P = prod(...)."""
        xp = self.xp
        batch = tuple(W.shape[:-2])
        P, M, s, m = math.prod(batch), self.M, self.n_classes, self.m
        Wt = xp.reshape(xp.permute_dims(xp.reshape(W, (P, M, s, m)), (1, 0, 2, 3)), (M, P * s, m))
        Z = Wt @ self._client_major_data[0]                         # (M, P s, n_max)
        return xp.reshape(Z, (M, P, s, Z.shape[-1])), batch

    def _from_client_major(self, A, batch):
        """``(M, P, ...)`` -> ``batch + (M, ...)``."""
        xp = self.xp
        A = xp.permute_dims(A, (1, 0) + tuple(range(2, A.ndim)))
        return xp.reshape(A, batch + (self.M,) + tuple(A.shape[2:]))

    def _full_grad(self, W):
        xp = self.xp
        _, YT, inv, _ = self._client_major_data
        Z, batch = self._logits_client_major(W)
        M, P, s, n = Z.shape
        if xp is np:   # in place: the logits become the residuals
            Z -= Z.max(axis=2, keepdims=True)
            np.exp(Z, out=Z)
            Z /= Z.sum(axis=2, keepdims=True)
            Z -= YT
            Z *= inv
            R = Z
        else:
            E = xp.exp(Z - xp.max(Z, axis=2, keepdims=True))
            R = (E / xp.sum(E, axis=2, keepdims=True) - YT) * inv      # padded samples have x = 0: no contribution
        G = xp.reshape(xp.reshape(R, (M, P * s, n)) @ self.X, (M, P, s * self.m))
        G = self._from_client_major(G, batch)
        return G + self.reg * W if self.reg else G

    def grad_clients(self, W, idx=None):
        """grad F_i(W_i) for one parameter vector per client, ``W`` (..., M, d) -> (..., M, d).

        With ``idx`` (integer array ``(..., M, b)`` of sample positions, each ``< D_i``) the
        minibatch gradient ``1/b sum_{n in idx_i} grad f(x_n, y_n; W_i)`` (+ reg W_i) instead.
        """
        xp = self.xp
        W = self._check_per_client(W)
        if idx is None:
            return self._full_grad(W)
        rows = np.arange(self.M)[:, None] if xp is np else xp.arange(self.M)[:, None]
        return self._ce_grad(W, gather(self.X, rows, idx), gather(self._onehot, rows, idx), 1.0 / idx.shape[-1])

    def grad_selected(self, x, clients):
        """grad F_c(x) of one chosen client per point, ``x`` (..., d) and ``clients`` (...) -> (..., d): each
        point against its own client's samples only (the default computes every client's gradient and picks)."""
        from .problems import selected_points  # noqa: PLC0415

        xp = self.xp
        x, c = selected_points(self, x, clients)
        shape = tuple(x.shape[:-1])
        P = math.prod(shape)
        V.check_size(P * self.X.shape[1] * (self.m + 2 * self.n_classes),
                     "the chosen clients' samples and logits (points x n_max x (m + 2 n_classes))", xp=xp,
                     hint="use fewer points at a time")
        flat = xp.reshape(c, (-1,))
        scale = (1.0 / xp.astype(xp.take(self.sizes, flat, axis=0), xp.float64))[:, None, None]
        G = self._ce_grad(xp.reshape(xp.broadcast_to(x, shape + (self.d,)), (P, self.d)),
                          xp.take(self.X, flat, axis=0), xp.take(self._onehot, flat, axis=0), scale)
        return xp.reshape(G, shape + (self.d,))

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
        _, YT, inv, maskf = self._client_major_data
        Z, batch = self._logits_client_major(W)                        # (M, P, s, n)
        zmax = xp.max(Z, axis=2, keepdims=True)
        lse = zmax[:, :, 0, :] + xp.log(xp.sum(xp.exp(Z - zmax), axis=2))
        zy = xp.sum(Z * YT, axis=2)                                     # (M, P, n)
        val = xp.sum((lse - zy) * maskf, axis=-1) * inv[:, :, 0, 0]     # (M, P)
        val = self._from_client_major(val, batch)                       # batch + (M,)
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
