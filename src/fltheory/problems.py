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

The other families share its conventions (:class:`ProblemError`, :func:`validate_weights`, one
point per client in ``grad_clients`` / ``loss_clients``, one common point in ``grad`` / ``loss``)
and live in their own modules, re-exported here (``fltheory.problems.<name>`` keeps working):

* :mod:`fltheory.problems_nonquadratic` -- formula-given non-quadratic clients, the test instances
  of the assumptions a quadratic cannot reach: :class:`~fltheory.problems_nonquadratic.SeparableCosineFederation`
  (smooth, non-convex, with a certified lower bound ``F_inf``),
  :class:`~fltheory.problems_nonquadratic.PseudoHuberFederation` (smooth with bounded gradients) and
  :class:`~fltheory.problems_nonquadratic.LinearFederation` (constant gradients);
* :mod:`fltheory.problems_logistic` -- :class:`~fltheory.problems_logistic.LogisticFederation`,
  multinomial logistic regression on per-client data (the experiments' federations).

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
from functools import cached_property
from typing import Any

import numpy as np

from .backend import KeyedStream, asarray, copy_of, dtype_kind, is_array, mT, matvec, namespace, trace, weighted_sum
from . import validation as V
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

    def grad_selected(self, x, clients):
        """grad F_c(x) of one chosen client per point: ``x`` (..., d), ``clients`` integers in 0..M-1 whose shape
        broadcasts to ``x``'s leading axes (...) -> (..., d); the federation's own batch axes broadcast against
        those axes as in ``grad_clients``.  Here every client's gradient at every point, then the chosen one's
        (M times the work: :func:`select_by_picking`); a federation with a cheaper way overrides it
        (``LogisticFederation``: the chosen clients' data only).  ``clients`` given on the host (NumPy, a list)
        is checked against 0..M-1; on a device only its kind and shape (a range check there would wait for the
        device at every call)."""
        x, c = selected_points(self, x, clients)
        return select_by_picking(self, x, c)

    def loss_clients_at(self, x):
        """F_i(x) for every client at one common point ``x`` (..., d) -> (..., M)."""
        return self.loss_clients(self._at(x))

    def grad(self, x):
        """grad F(x) = sum_i w_i grad F_i(x) at points ``x`` (..., d)."""
        return self.xp.sum(self.weights[..., None] * self.grad_clients_at(x), axis=-2)

    def loss(self, x):
        """F(x) = sum_i w_i F_i(x) at points ``x`` (..., d)."""
        return self.xp.sum(self.weights * self.loss_clients_at(x), axis=-1)


def selected_points(fed, x, clients):
    """``(x, clients)`` of :meth:`_Federation.grad_selected` checked at the door, in ``fed``'s namespace:
    ``x`` (..., d) reals, ``clients`` integers broadcast to ``x``'s leading axes, in 0..M-1 where given on the
    host; an error names the parameter otherwise."""
    xp = fed.xp
    x = V.array(x, "x", xp=xp, min_ndim=1, shape=(fed.d,), finite=False)   # a diverging run is reported by its caller
    host = not is_array(clients) or isinstance(clients, np.ndarray)
    c = np.asarray(clients) if host else clients
    if dtype_kind(c, np if host else namespace(c)) not in "iu":
        raise ProblemError(f"clients must be integer client indices in 0..M-1 = 0..{fed.M - 1}; got dtype {c.dtype}")
    lead = tuple(x.shape[:-1])
    try:
        fits = np.broadcast_shapes(tuple(c.shape), lead) == lead
    except ValueError:
        fits = False
    if not fits:
        raise ProblemError(f"clients of shape {tuple(c.shape)} must broadcast to the points' leading axes {lead}")
    if host and c.size and not (int(c.min()) >= 0 and int(c.max()) < fed.M):
        raise ProblemError(f"clients must lie in 0..M-1 = 0..{fed.M - 1}; got {int(c.min())}..{int(c.max())}")
    return x, xp.broadcast_to(xp.asarray(c), lead)


def select_by_picking(fed, x, clients):
    """Every client's gradient at every point of ``x`` (..., d), then the one of ``clients`` (...): the default of
    :meth:`_Federation.grad_selected`, for any federation with ``grad_clients``, ``M``, ``d`` and ``xp``."""
    xp = fed.xp
    V.check_size(math.prod(x.shape[:-1]) * fed.M * fed.d, "every client's gradient at every point (points x M x d)",
                 xp=xp, hint="use fewer points at a time")
    G = fed.grad_clients(xp.broadcast_to(x[..., None, :], tuple(x.shape[:-1]) + (fed.M, fed.d)))   # (..., M, d)
    idx = xp.broadcast_to(clients[..., None, None], tuple(G.shape[:-2]) + (1, fed.d))
    return xp.take_along_axis(G, idx, axis=-2)[..., 0, :]


def is_diagonal(P, diag, xp) -> bool:
    """Whether every off-diagonal entry of the finite ``P`` (..., n, n) is zero (``diag`` its diagonal).  NumPy
    counts the nonzero entries; on a device the largest off-diagonal magnitude is one elementwise pass and a max
    (CuPy's ``count_nonzero`` took 11 ms on the 8e7 numbers of a B = 1e5, M = d = 10 batch on an H100, where the
    fixed points' kernel takes 1.8 ms)."""
    if xp is np:
        return int(xp.count_nonzero(P)) == int(xp.count_nonzero(diag))
    return float(xp.max(xp.abs(P * (1.0 - xp.eye(P.shape[-1]))))) == 0.0


def check_spd(P, xp, name: str, *, why: str = "P_i SPD", symmetric_rtol: float = 1e-10):
    """Refuse a non-symmetric or non-positive-definite ``P`` (..., n, n) by ``name`` (:class:`ProblemError`, ``why``
    in the message); return its diagonal where ``P`` is diagonal, else None.  Positive definiteness is a Cholesky
    factorisation that succeeds (a fraction of the eigenvalues' cost: on 10^6 matrices of 16 x 16 on a GPU the
    eigenvalues took 67 ms); symmetric means within ``symmetric_rtol`` of the largest entry (at least 1).  A NaN or
    infinite entry is refused; entries up to the float range are accepted (the symmetric part is formed without
    overflow)."""
    diag = xp.linalg.diagonal(P)
    if is_diagonal(P, diag, xp):  # diagonal (so symmetric): checks elementwise
        if not bool(xp.all((diag > 0) & (diag < math.inf))):   # NaN and inf too (NumPy counts them as diagonal)
            raise ProblemError(f"{name} must be positive definite ({why}); smallest eigenvalue "
                               f"{float(xp.min(diag)):.3g}")
        return diag
    scale = max(float(xp.max(xp.abs(P))), 1.0)
    if float(xp.max(xp.abs(P - mT(P)))) > symmetric_rtol * scale:
        raise ProblemError(f"{name} must be symmetric ({why})")
    try:
        L = xp.linalg.cholesky(0.5 * P + 0.5 * mT(P))   # P + P^T would overflow past 9e307
    except np.linalg.LinAlgError:
        L = None
    if L is None or not bool(xp.all(xp.isfinite(L))):  # cupy returns NaN where numpy raises
        raise ProblemError(f"{name} must be positive definite ({why})")
    return None


def noise_sqrt(cov, xp):
    """The symmetric square root ``Sigma^{1/2} = V sqrt(Lambda) V^T`` of each covariance of ``cov`` (..., d, d),
    which may be singular (negative round-off eigenvalues count as 0): the factor of the simulators that draw
    noise ``Sigma^{1/2} z`` (AFL-DGA, FedDelAvg, the delayed-schedule simulator).  FedOpt's clients use the
    Cholesky factor instead (:func:`noise_root_diagonal` where it is diagonal).

    >>> import numpy as np
    >>> noise_sqrt(np.array([[4.0, 0.0], [0.0, 9.0]]), np).tolist()
    [[2.0, 0.0], [0.0, 3.0]]
    """
    lam, vec = xp.linalg.eigh(cov)
    return (vec * xp.sqrt(xp.clip(lam, 0.0, None))[..., None, :]) @ mT(vec)


def noise_root_diagonal(cov, xp):
    """``sqrt(diag Sigma_i)`` (..., M, d) when every ``Sigma_i`` of ``cov`` (..., M, d, d) is diagonal with a
    positive diagonal, else None.  Then the Cholesky factor of each ``Sigma_i`` is that diagonal, bit for bit
    (its diagonal entries are ``sqrt(Sigma_jj)`` and the others ``0 / F_jj``), and a noise draw ``F z`` is the
    elementwise product ``sqrt(diag) * z``."""
    diag = xp.linalg.diagonal(cov)
    if is_diagonal(cov, diag, xp) and bool(xp.all(diag > 0)):
        return xp.sqrt(diag)
    return None


def _noise_cov_checked(cov, xp, M: int, d: int, *, owned: bool = False):
    """``noise_cov`` (..., M, d, d) symmetric PSD, or None: the one check of every federation's noise
    (symmetric to 1e-10 of its largest entry, as ``H``; eigenvalues >= -1e-12).  The federation keeps a copy
    (unless ``owned``: an array it built itself), so what it derives from it once (``noise_root_diag``) stays
    true when the caller later writes into the array it passed."""
    if cov is None:
        return None
    cov = V.array(cov, "noise_cov", xp=xp, min_ndim=3)
    if cov.shape[-3:] != (M, d, d):
        raise ProblemError(f"noise_cov must have shape (..., M={M}, d={d}, d={d}); got {tuple(cov.shape)}")
    if cov.size and float(xp.max(xp.abs(cov - mT(cov)))) > 1e-10 * max(float(xp.max(xp.abs(cov))), 1.0):
        raise ProblemError("noise_cov must be symmetric")
    if bool(xp.any(xp.linalg.eigvalsh(_sym(cov))[..., 0] < -1e-12)):
        raise ProblemError("noise_cov must be positive semidefinite")
    return cov if owned else copy_of(cov)


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
        cov = _noise_cov_checked(cov, xp, M, d, owned=self.noise_cov is None)
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

    @cached_property
    def noise_root_diag(self):
        """:func:`noise_root_diagonal` of ``noise_cov`` (None without noise): computed once per federation, so
        the simulators that draw ``F z`` or hand the diagonal to a kernel do not scan every ``Sigma_i`` per call."""
        return None if self.noise_cov is None else noise_root_diagonal(self.noise_cov, self.xp)

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


# the other families, re-exported: ``fltheory.problems.<name>`` and ``from fltheory.problems import <name>`` keep
# working.  At the bottom, since they import the shared pieces above (the package imports this module first).
from .problems_logistic import LogisticFederation  # noqa: E402
from .problems_nonquadratic import LinearFederation, PseudoHuberFederation, SeparableCosineFederation  # noqa: E402
