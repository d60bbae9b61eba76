"""Affine maps, their fixed points, spectra, exact trajectories and noise moments.

On quadratic clients with deterministic gradients every algorithm of the five papers is an
affine map ``x -> A x + b`` (per round, or per period when the schedule is periodic); delays
make it a map with memory, which ``companion`` turns into an affine map on an augmented state
``(x_t, x_{t-1}, ..., x_{t-D})``.  With additive noise the mean follows the same map and the
covariance follows ``Sigma -> A Sigma A^T + Q``, so ``E||x_t - x_bar||^2`` is an exact number.

Every array may carry leading batch axes: ``A`` is ``(..., n, n)`` and ``b`` is ``(..., n)``.

Example
-------
>>> import numpy as np
>>> from fltheory.linear import AffineMap
>>> m = AffineMap(np.array([[0.5, 0.0], [0.0, 0.25]]), np.array([1.0, 3.0]))
>>> m.fixed_point().x
array([2., 4.])
>>> float(m.spectral_radius())
0.5
>>> np.allclose(m.power(3)(np.zeros(2)), m(m(m(np.zeros(2)))))
True
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .backend import asarray, copy_of, eigvals, mT, namespace, trace
from . import validation as V
from .validation import InputError

__all__ = ["AffineMap", "FixedPoint", "Deferred", "Moments", "companion", "spectral_radius", "matrix_power",
           "one_minus_power"]


class LinearMapError(InputError):
    """An affine map without the property asked of it (e.g. no unique fixed point)."""


@dataclass(frozen=True)
class FixedPoint:
    """A fixed point ``x`` of a map with its residual ``||T(x) - x||`` (per configuration).

    ``iterations`` is ``None`` for a closed form, else the number of map applications used.
    ``spectral_radius`` is that of the map's linear part and ``converges`` says, per
    configuration, whether the iteration reaches ``x`` (radius < 1): a fixed point of a divergent
    map exists but is not the limit of anything, and this field says so.  ``condition`` is the
    condition number of the linear system solved for ``x`` (where one was solved): the relative
    error of ``x`` is at most about ``condition`` times the unit round-off.

    A producer may hand ``spectral_radius`` over as a :class:`Deferred` computation (a general
    eigenvalue problem per configuration can cost more than the fixed point itself); it is then
    computed on first access of ``spectral_radius`` or ``converges`` and kept.
    """

    x: Any
    residual: Any
    iterations: int | None = None
    method: str = "closed form"
    spectral_radius: Any = None
    converges: Any = None
    condition: Any = None

    def __getattribute__(self, name):
        value = object.__getattribute__(self, name)
        if name in ("spectral_radius", "converges") and isinstance(object.__getattribute__(self, "spectral_radius"),
                                                                   Deferred):
            rho = object.__getattribute__(self, "spectral_radius")()
            object.__setattr__(self, "spectral_radius", rho)
            if object.__getattribute__(self, "converges") is None:
                object.__setattr__(self, "converges", rho < 1)
            value = object.__getattribute__(self, name)
        return value


class Deferred:
    """A zero-argument computation whose value is wanted only if asked for (see :class:`FixedPoint`)."""

    __slots__ = ("_fn",)

    def __init__(self, fn):
        self._fn = fn

    def __call__(self):
        return self._fn()

    def __repr__(self) -> str:
        return "Deferred(...)"


@dataclass(frozen=True)
class Moments:
    """Means ``(T+1, ..., n)`` and covariances ``(T+1, ..., n, n)`` of a noisy affine iteration.

    ``diverged`` (per configuration, the batch axes) is True where a mean or covariance left the floating-point
    range: the step is too large for the map to contract, and those numbers are meaningless."""

    mean: Any
    cov: Any
    diverged: Any = None

    def mse(self, target):
        """E||x_t - target||^2 = ||mean_t - target||^2 + tr cov_t, for every t."""
        xp = namespace(self.mean)
        target = V.array(target, "target", xp=xp, shape=(self.mean.shape[-1],))
        try:
            e = self.mean - target
        except ValueError:
            raise V.InputError(f"target of shape {tuple(target.shape)} does not broadcast against the means "
                               f"{tuple(self.mean.shape)}") from None
        return xp.sum(e * e, axis=-1) + trace(self.cov)


def spectral_radius(A):
    """``max |lambda(A)|`` for a batch of square matrices ``(..., n, n)`` (eigenvalues by :func:`fltheory.backend.eigvals`)."""
    A = V.array(A, "A", min_ndim=2)
    if A.shape[-1] != A.shape[-2]:
        raise V.InputError(f"A must be a square matrix or a batch of them, shape (..., n, n); got {tuple(A.shape)}")
    xp = namespace(A)
    return xp.max(xp.abs(eigvals(A)), axis=-1)


def one_minus_power(E, tau):
    """``I - (I - E)^tau`` for a batch of square matrices, without the cancellation of forming
    ``(I - E)^tau`` and subtracting it from ``I``.

    With ``D_n = I - (I - E)^n`` (``D_1 = E``), binary powering runs on ``D`` itself:
    ``D_{2n} = 2 D_n - D_n^2`` and ``D_{a+b} = D_a + D_b - D_a D_b``.  When ``E`` is small
    (``eta lambda << 1``) every term is of the size of the result, so the relative accuracy is
    that of the products (about ``tau`` unit round-offs times the conditioning) where the
    subtraction ``I - K`` would lose ``log10(1 / (tau eta lambda))`` digits.  It costs the
    same number of batched products as powering ``I - E``.  ``tau``: an int, or an integer array
    broadcasting against the batch axes ``E.shape[:-2]`` (per-matrix powers, by masks).

    Example
    -------
    >>> import numpy as np
    >>> E = np.array([[1e-9, 0.0], [0.0, 2e-9]])
    >>> f"{one_minus_power(E, 5)[1, 1]:.12e}"       # 1 - (1 - 2e-9)^5 = 1e-8 - 4e-17 + 8e-26 - ...
    '9.999999960000e-09'
    >>> f"{1 - (1 - 2e-9) ** 5:.12e}"               # the subtraction keeps 7 or 8 digits
    '1.000000027229e-08'
    """
    E = V.array(E, "E", min_ndim=2)
    xp = namespace(E)
    n = E.shape[-1]
    if E.shape[-2] != n:
        raise V.InputError(f"E must have shape (..., n, n); got {tuple(E.shape)}")
    if not isinstance(tau, (int, np.integer)) or isinstance(tau, (bool, np.bool_)):
        tau = V.array(tau, "tau", xp=xp, kind="integer", low=0)
        if tau.ndim == 0:
            tau = int(tau)
    if isinstance(tau, (int, np.integer)):
        t = V.integer(tau, "tau", low=0, high=2**62)
        if t == 0:
            return xp.zeros(E.shape, dtype=E.dtype)
        result, base = None, E
        while t:
            if t & 1:
                result = base if result is None else _compose(result, base, xp)
            t >>= 1
            if t:
                base = _compose(base, base, xp)
        return result if result is not E else copy_of(E)
    t = xp.astype(asarray(tau, xp), xp.int64)
    result = xp.zeros(np.broadcast_shapes(E.shape, t.shape + (n, n)), dtype=E.dtype)
    base = E
    while bool(xp.any(t > 0)):
        bit = ((t & 1) == 1)[..., None, None]
        result = xp.where(bit, _compose(result, base, xp), result)
        t = t >> 1
        if bool(xp.any(t > 0)):
            base = _compose(base, base, xp)
    return result


def _compose(Da, Db, xp):
    """``I - (I - Da)(I - Db) = Da + Db - Da Db`` (in place on the product: one new array)."""
    out = Da @ Db
    if xp is not np:
        return Da - out + Db
    np.subtract(Da, out, out=out)
    out += Db
    return out


def matrix_power(A, t: int):
    """``A**t`` for a batch of matrices by binary powering (t >= 0)."""
    xp = namespace(A)
    t = V.integer(t, "t", low=0, high=2**62)
    n = A.shape[-1]
    result = copy_of(xp.broadcast_to(xp.eye(n), A.shape))
    base = A
    while t:
        if t & 1:
            result = result @ base
        t >>= 1
        if t:
            base = base @ base
    return result


class AffineMap:
    """The map ``x -> A x + b`` on a batch of configurations."""

    def __init__(self, A, b=None):
        try:
            xp = namespace(A)
        except TypeError:
            xp = np
        A = V.array(A, "A", xp=xp, min_ndim=2)
        if A.shape[-1] != A.shape[-2]:
            raise LinearMapError(f"A must have shape (..., n, n); got {tuple(A.shape)}")
        b = xp.zeros(A.shape[:-1]) if b is None else V.array(b, "b", xp=xp, min_ndim=1)
        if b.shape[-1] != A.shape[-1]:
            raise LinearMapError(f"b must have shape (..., n={A.shape[-1]}) to match A of shape {tuple(A.shape)}; "
                                 f"got {tuple(b.shape)}")
        self.A, self.b = A, b

    # -------------------------------------------------------------- basics
    @property
    def xp(self):
        return namespace(self.A)

    @property
    def n(self) -> int:
        return self.A.shape[-1]

    def __call__(self, x):
        x = V.array(x, "x", xp=self.xp, shape=(self.n,))
        try:
            np.broadcast_shapes(tuple(self.A.shape[:-2]), tuple(x.shape[:-1]))
        except ValueError:
            raise V.InputError(f"x of shape {tuple(x.shape)} does not broadcast against the map's batch axes "
                               f"{tuple(self.A.shape[:-2])}") from None
        return (self.A @ x[..., None])[..., 0] + self.b

    def __repr__(self) -> str:
        return f"AffineMap(n={self.n}, batch={tuple(self.A.shape[:-2])})"

    def compose(self, first: "AffineMap") -> "AffineMap":
        """``self ∘ first``: apply ``first``, then ``self``."""
        return AffineMap(self.A @ first.A, (self.A @ first.b[..., None])[..., 0] + self.b)

    @staticmethod
    def periodic(maps: Sequence["AffineMap"]) -> "AffineMap":
        """One period ``maps[-1] ∘ ... ∘ maps[0]`` (``maps[0]`` acts first)."""
        if not maps:
            raise LinearMapError("periodic() needs at least one map")
        out = maps[0]
        for m in maps[1:]:
            out = m.compose(out)
        return out

    def power(self, t: int) -> "AffineMap":
        """The map applied ``t`` times, by binary powering (O(log t) products)."""
        t = V.integer(t, "t", low=0, high=2**62)
        xp = self.xp
        result = AffineMap(copy_of(xp.broadcast_to(xp.eye(self.n), self.A.shape)), xp.zeros(self.b.shape))
        base = self
        while t:
            if t & 1:
                result = base.compose(result)
            t >>= 1
            if t:
                base = base.compose(base)
        return result

    # -------------------------------------------------------------- analysis
    def spectral_radius(self):
        """rho(A): the exact asymptotic contraction factor per application."""
        return spectral_radius(self.A)

    def fixed_point(self) -> FixedPoint:
        """The unique fixed point ``(I - A)^{-1} b`` (requires ``I - A`` invertible).

        The result carries ``spectral_radius`` and ``converges``: where the radius is >= 1 the
        point is a fixed point of a divergent map, not a limit.
        """
        xp = self.xp
        I = xp.eye(self.n)
        try:
            x = xp.linalg.solve(I - self.A, self.b[..., None])[..., 0]
        except np.linalg.LinAlgError as exc:
            raise LinearMapError("I - A is singular: the map has no unique fixed point (1 is an eigenvalue of A)") from exc
        if not bool(xp.all(xp.isfinite(x))):
            raise LinearMapError("I - A is singular: the map has no unique fixed point (1 is an eigenvalue of A)")
        r = self(x) - x
        rho = self.spectral_radius()
        return FixedPoint(x, xp.sqrt(xp.sum(r * r, axis=-1)), spectral_radius=rho, converges=rho < 1)

    def iterate_to_fixed_point(self, x0=None, *, tol: float = 1e-10, max_iter: int = 100_000) -> FixedPoint:
        """Iterate from ``x0`` until every configuration's step ``||x_{t+1} - x_t||`` <= tol."""
        xp = self.xp
        tol = V.tolerance(tol, "tol")
        max_iter = V.integer(max_iter, "max_iter", low=1, high=10**8)
        x = xp.zeros(self.b.shape) if x0 is None else xp.broadcast_to(asarray(x0, xp), self.b.shape)
        for k in range(1, max_iter + 1):
            y = self(x)
            step = xp.sqrt(xp.sum((y - x) ** 2, axis=-1))
            x = y
            if bool(xp.all(step <= tol)):
                return FixedPoint(x, step, k, "iteration", converges=xp.ones(step.shape, dtype=xp.bool))
            if not bool(xp.all(xp.isfinite(x))):
                raise LinearMapError(f"the iteration diverged (non-finite iterate after {k} steps): the spectral "
                                     "radius is >= 1 for some configuration")
        raise LinearMapError(f"no convergence to tol={tol} in {max_iter} iterations (spectral radius may be >= 1)")

    def trajectory(self, x0, T: int):
        """``(x_0, x_1, ..., x_T)`` stacked on a new leading axis (exact iteration)."""
        xp = self.xp
        T = V.integer(T, "T", low=0, high=10**9)
        V.check_size((T + 1) * int(np.prod(self.b.shape)), "the trajectory", xp=xp, hint="use after(x0, t) for one step")
        x = xp.broadcast_to(asarray(x0, xp), np.broadcast_shapes(asarray(x0, xp).shape, self.b.shape))
        out = [x]
        for _ in range(T):
            x = self(x)
            out.append(x)
        return xp.stack(out)

    def after(self, x0, t: int):
        """``x_t`` in O(log t) matrix products."""
        return self.power(t)(V.array(x0, "x0", xp=self.xp))

    # -------------------------------------------------------------- noise moments
    def moments(self, mean0, cov0=None, Q=None, T: int = 1) -> Moments:
        """Exact mean and covariance of ``x_{t+1} = A x_t + b + nu_t``, ``Cov nu_t = Q``.

        ``Q`` is ``(..., n, n)`` (zero when omitted); ``cov0`` is the initial covariance.
        """
        xp = self.xp
        T = V.integer(T, "T", low=0, high=10**9)
        V.check_size((T + 1) * int(np.prod(self.A.shape)), "the moment trajectory", xp=xp)
        mean0 = V.array(mean0, "mean0", xp=xp)
        m = xp.broadcast_to(asarray(mean0, xp), np.broadcast_shapes(asarray(mean0, xp).shape, self.b.shape))
        S = xp.zeros(m.shape + (self.n,)) if cov0 is None else asarray(cov0, xp)
        Q = xp.zeros(self.A.shape) if Q is None else asarray(Q, xp)
        means, covs = [m], [S]
        At = mT(self.A)
        with np.errstate(over="ignore", invalid="ignore"):   # a divergent map is flagged below, not warned about
            for _ in range(T):
                m = (self.A @ m[..., None])[..., 0] + self.b   # mean0 is checked; the steps may leave the range
                S = self.A @ S @ At + Q
                means.append(m)
                covs.append(S)
        mean, cov = xp.stack(means), xp.stack(covs)
        finite = xp.all(xp.isfinite(mean), axis=(0, -1)) & xp.all(xp.isfinite(cov), axis=(0, -2, -1))
        return Moments(mean, cov, diverged=~finite)

    def stationary_covariance(self, Q, *, tol: float = 1e-15, max_doublings: int = 64):
        """The solution of ``S = A S A^T + Q`` (requires rho(A) < 1), by Smith's doubling."""
        xp = self.xp
        tol = V.tolerance(tol, "tol")
        max_doublings = V.integer(max_doublings, "max_doublings", low=1, high=200)
        n, batch = self.n, int(np.prod(self.A.shape[:-2], dtype=np.int64))
        # measured: n = 1024 takes ~2.5 s on one core (the eigenvalues and ~7 doublings), ~2.4e-9 s per n^3
        V.check_time(2.4e-9 * batch * float(n) ** 3, f"the stationary covariance of a map of dimension n={n}"
                     + (f" (x {batch} configurations)" if batch > 1 else ""),
                     hint="use moments(...) over a finite horizon, or a smaller map")
        Q = V.array(Q, "Q", xp=xp)
        if bool(xp.any(self.spectral_radius() >= 1)):
            raise LinearMapError("stationary covariance needs spectral radius < 1")
        S = asarray(Q, xp) + xp.zeros(self.A.shape)
        Ak = self.A
        for _ in range(max_doublings):
            inc = Ak @ S @ mT(Ak)
            S = S + inc
            Ak = Ak @ Ak
            if float(xp.max(xp.abs(inc))) <= tol * max(float(xp.max(xp.abs(S))), 1e-300):
                break
        return S


def companion(blocks: Sequence[Any], b=None) -> AffineMap:
    """The augmented map of a recursion with memory.

    ``x_{t+1} = sum_{j=0}^{D} blocks[j] x_{t-j} + b`` becomes an ``AffineMap`` on the stacked
    state ``(x_t, x_{t-1}, ..., x_{t-D})`` of size ``(D+1) n``.  A fixed point ``x`` of the
    recursion is the augmented fixed point ``(x, x, ..., x)``.
    """
    if isinstance(blocks, (str, bytes)) or not hasattr(blocks, "__len__"):
        raise V.InputTypeError(f"blocks must be a sequence of (..., n, n) arrays; got {V.shown(blocks)}")
    if not len(blocks):
        raise LinearMapError("companion() needs at least one block")
    blocks = [V.array(B_, f"blocks[{j}]", min_ndim=2) for j, B_ in enumerate(blocks)]
    if b is not None:
        b = V.array(b, "b", min_ndim=1)
    xp = namespace(*blocks)
    blocks = [asarray(B_, xp) for B_ in blocks]
    n = blocks[0].shape[-1]
    D = len(blocks) - 1
    batch = np.broadcast_shapes(*(B_.shape[:-2] for B_ in blocks))
    big = xp.zeros(batch + ((D + 1) * n, (D + 1) * n))
    for j, B_ in enumerate(blocks):
        big[..., :n, j * n : (j + 1) * n] = B_
    for j in range(D):
        big[..., (j + 1) * n : (j + 2) * n, j * n : (j + 1) * n] = xp.eye(n)
    bb = xp.zeros(batch + ((D + 1) * n,))
    if b is not None:
        bb[..., :n] = asarray(b, xp)
    return AffineMap(big, bb)
