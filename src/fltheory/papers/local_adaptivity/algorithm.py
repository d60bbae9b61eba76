"""Batched FedOpt with (adaptive) restarted clients and local / global correction.

Problem class
-------------
Any federation object with ``grad_clients(x)`` (``x`` is ``(..., M, d)``, one point per client,
returning ``(..., M, d)``), ``weights`` ``(..., M)`` summing to one, ``M``, ``d`` and optionally
``noise_cov`` ``(..., M, d, d)``: stochastic gradients are ``grad F_i(y) + Sigma_i^{1/2} z`` with
``z ~ N(0, I)``.  ``QuadraticFederation`` and ``SeparableCosineFederation`` qualify.

Method (Wang et al. 2021, eqs. (4)-(5), Algorithm 1)
-----------------------------------------------------------------------
Every round each client restarts its optimizer (``m = 0``, ``v = v0``) at the global model ``x``
and runs ``tau_i`` steps of the common form

    m^(k) = beta1 m^(k-1) + (1 - beta1) g_k,     y^(k+1) = y^(k) - eta_i P^(k) m^(k),

with ``P^(k) = I`` (sgd, momentum), a fixed SPD ``P_i`` (precond) or
``diag(1 / (sqrt(v^(k)) + eps))`` (adagrad ``v += g^2`` from ``v0``, the accumulator before the step; adam / yogi as
Alg. 1, optional Keras bias correction).  It returns ``Delta_i = x - y^(tau_i)`` (the sign of a
gradient) and the correction matrix

* ``n_mode="exact"`` (the exact B/N identity): ``N_i = eta_i sum_k (1 - beta1^(k+1)) P^(k)``,
  so that ``x - A_i(x) = eta_i sum_j B^(j) g_j`` with ``sum_j B^(j) = N_i / eta_i``;
* ``n_mode="alg1"`` (Algorithm 1 lines 9-10, as printed, which drops ``eta`` and the momentum weights):
  ``N_i = sum_k M^(k)``, ``M^(k) = beta1 M^(k-1) + (1 - beta1) P^(k)`` (no ``eta``).

``N_i`` is diagonal (returned as ``(..., M, d)``) except for ``"precond"`` (``N_i = c_i P_i``,
returned ``(..., M, d, d)``).  Corrections: ``"local"`` sends ``N_i^{-1} Delta_i``; ``"joint"``
additionally rescales the aggregate by ``N_s^{-1}``, ``N_s = sum_i omega_i N_i^{-1}``.  The server
then applies ``x <- x - alpha Delta`` (sgd) or a momentum / AdaGrad / Adam / Yogi step (the server optimizers of the paper's experiments).

Statement.  With deterministic gradients, full participation, ``omega = w`` and a GD server this
is exactly iteration (5) (local correction: (98)); on quadratic clients with fixed ``P_i`` one
round is the affine map ``x - alpha sum_i w_i (I - K_i)(x - x_i*)``, ``K_i = (I - eta_i P_i H_i)^tau_i``
(``exact``), which the tests check to 1e-12.  Exact, not a bound.

Randomness is keyed (``fltheory.backend.KeyedStream``): the noise of configuration ``c``, round
``t``, client ``i`` and local step ``k`` is ``KeyedStream(seed, "local_adaptivity.noise",
version=noise_version).normal(config=c, round=t * 2**32 + k, client=i, size=(d,))`` (version 1 by default;
2 and 3 give the same bits on NumPy and in the CuPy kernels, 3 the fastest there), so a configuration gives the same
run whatever else is in the batch, provided it gets the same ``config`` index.  ``client_ids``
(default ``0..M-1``) key noise and uniform sampling by client identity: a permuted federation
with permuted ``client_ids`` reproduces the run exactly; with the default ids the noise follows
the client *position*, so a permutation changes the noisy run (not its distribution).

Example
-------
>>> import numpy as np, fltheory as flt
>>> from fltheory.papers.local_adaptivity.algorithm import fedopt
>>> H = np.array([[[2, .5], [.5, 1]], [[1, 0], [0, 4]], [[3, -1], [-1, 2]]], float)
>>> fed = flt.QuadraticFederation(H, [[1, 0], [0, 2], [-1, -1]], [.5, .3, .2])
>>> P = 1 / np.einsum("mii->mi", H)[..., None] * np.eye(2)          # Jacobi P_i = diag(H_i)^-1
>>> r = fedopt(fed, x0=np.zeros(2), rounds=300, eta=0.1, tau=5, client_opt="precond", precond=P)
>>> np.round(r.x, 10).tolist()                                      # x~ of the worked example
[0.3230642062, 0.6596152707]
>>> r = fedopt(fed, x0=np.zeros(2), rounds=300, eta=0.1, tau=5, client_opt="precond", precond=P,
...            correction="local", alpha=0.5)
>>> np.round(r.x, 10).tolist()                                      # x^ of the worked example
[0.2746960047, 1.1375391711]
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from math import prod
from typing import Any

import numpy as np

from ... import validation as V
from ...backend import KeyedStream, asarray, copy_of, is_cupy, mT, matvec, namespace, to_numpy, weighted_sum
from ...problems import QuadraticFederation, check_spd, noise_root_diagonal, validate_weights

__all__ = [
    "CLIENT_OPTS",
    "SERVER_OPTS",
    "ClientUpdate",
    "FedOptResult",
    "client_update",
    "fedopt",
    "fedopt_loop",
]

CLIENT_OPTS = ("sgd", "momentum", "precond", "adagrad", "adam", "yogi")
SERVER_OPTS = ("sgd", "momentum", "adagrad", "adam", "yogi")
_ADAPTIVE = ("adagrad", "adam", "yogi")
_BETA1_DEFAULT = {"sgd": 0.0, "precond": 0.0, "adagrad": 0.0, "momentum": 0.9, "adam": 0.9, "yogi": 0.9}
_V0_DEFAULT = {"adagrad": 0.1, "adam": 0.0, "yogi": 1e-6}
_NOISE = "local_adaptivity.noise"
_SAMPLING = "local_adaptivity.sampling"
_STEP_KEY = 2**32  # round key of local step k in round t: t * 2**32 + k


# --------------------------------------------------------------------------------------
# results
# --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ClientUpdate:
    """One round of restarted local runs for every client.

    delta : (..., M, d) ``x - y^(tau_i)`` (uncorrected local change, sign of a gradient).

    N : correction matrices, (..., M, d) diagonals, or (..., M, d, d) for ``"precond"``.

    y : (tau_max + 1, ..., M, d) local iterates (only with ``record=True``, else None).

    g : (tau_max, ..., M, d) gradients used at each local step, noise included (record only).

    P : (tau_max, ..., M, d) diagonal preconditioners P^(k) (record only; None for "precond",
        whose P_i is fixed, and ones for sgd / momentum).

    active : (tau_max, ..., M) bool, ``k < tau_i`` (record only).
    """

    delta: Any
    N: Any
    y: Any = None
    g: Any = None
    P: Any = None
    active: Any = None


@dataclass(frozen=True)
class FedOptResult:
    """What ``fedopt`` returns.

    x : (..., d) final global model.

    trajectory : (R, ..., d) global models at rounds ``rounds_recorded`` (R entries).

    rounds_recorded : (R,) int, the recorded round indices (0, record_every, ..., and ``rounds``).

    N : last round's correction matrices (as ``ClientUpdate.N``).

    Delta : (..., d) last round's aggregate pseudo-gradient, after corrections.

    omega : (..., M) last round's aggregation weights (zero for clients not sampled).

    seed : the seed of the keyed streams.

    diverged : (...) True for the configurations whose model left the floating-point range (their
        numbers are meaningless; the others are unaffected, and a warning names the likely cause).
    """

    x: Any
    trajectory: Any
    rounds_recorded: Any
    N: Any
    Delta: Any
    omega: Any
    seed: int
    diverged: Any = None


# --------------------------------------------------------------------------------------
# validation
# --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Setup:
    xp: Any
    batch: tuple
    M: int
    d: int
    eta: Any  # (..., M)
    tau: Any  # (..., M) int
    tau_max: int
    client_opt: str
    precond: Any
    beta1: float
    beta2: float
    v0: float
    eps: float
    bias_correction: bool
    n_mode: str
    noise_cov: Any    # the clients' Sigma_i when the run draws noise, else None
    noise_diag: Any   # the noise factor's diagonal when it is diagonal (the kernels' cheap case), else None
    config: Any  # (...,) int
    client_ids: Any  # (..., M) int
    seed: int
    noise_version: int = 1

    @cached_property
    def precond_inv(self):
        """P_i^{-1} for the corrections of fixed preconditioners (None for other clients); computed on first use (a
        run without correction never needs it)."""
        return None if self.precond is None else self.xp.linalg.inv(self.precond)

    @cached_property
    def noise_factor(self):
        """F with F F^T = Sigma_i for the array code's draws ``F z`` (None without noise); built on first use."""
        return None if self.noise_cov is None else _factor(self.noise_cov, self.xp, self.noise_diag)


def _choice(name, value, options):
    return V.choice(value, name, options)


def _beta(name, value):
    return V.real(value, name, low=0.0, high=1.0, open_high=True)


def _positive(name, value, xp):
    return xp.astype(V.array(value, name, xp=xp, low=0.0, open_low=True), xp.float64)


def _noise_root_diag(problem, cov, xp):
    """The noise factor's diagonal when every Sigma_i is diagonal with a positive diagonal, else None: a
    QuadraticFederation's, computed once per federation (``noise_root_diag``); another problem's, per call."""
    if isinstance(problem, QuadraticFederation):
        return problem.noise_root_diag
    return noise_root_diagonal(cov, xp)


def _factor(cov, xp, diag=None):
    """A factor F with F F^T = cov: with ``diag`` (the case :func:`_noise_root_diag` finds) the diagonal matrix of
    it, the Cholesky factor bit for bit; else Cholesky when every Sigma_i is PD, else the symmetric root.  Built
    only where the array code draws noise (``_Setup.noise_factor``): the CuPy kernels take the diagonal alone."""
    if diag is not None:
        return diag[..., None] * xp.eye(cov.shape[-1], dtype=diag.dtype)
    try:
        Lc = xp.linalg.cholesky(cov)
        if bool(xp.all(xp.isfinite(Lc))):
            return Lc
    except np.linalg.LinAlgError:
        pass
    lam, V = xp.linalg.eigh(0.5 * (cov + mT(cov)))
    return V * xp.sqrt(xp.clip(lam, 0.0, None))[..., None, :]


def _check_problem(problem):
    for attr in ("grad_clients", "weights", "M", "d"):
        if not hasattr(problem, attr):
            raise V.InputTypeError(f"problem must provide {attr!r} (see the module docstring); got {V.shown(problem)}")


def _keys(value, name, shape, xp):
    """An integer key array (``config``, ``client_ids``) of the noise streams, broadcast to ``shape``."""
    arr = V.array(value, name, xp=xp, kind="integer", low=0)
    try:
        return xp.broadcast_to(arr, shape)
    except ValueError:
        raise V.InputError(f"{name} must broadcast to shape {shape}; got shape {tuple(arr.shape)}") from None


def _setup(problem, x0, *, eta, tau, client_opt, precond, beta1, beta2, v0, eps, bias_correction,
           n_mode, noise, seed, config, client_ids, extra_batch=(), x_name="x0", noise_version=1):
    _check_problem(problem)
    M, d = int(problem.M), int(problem.d)
    xp = namespace(problem.weights)
    validate_weights(problem.weights, xp)
    client_opt = _choice("client_opt", client_opt, CLIENT_OPTS)
    n_mode = _choice("n_mode", n_mode, ("exact", "alg1"))
    x0 = V.array(x0, x_name, xp=xp, min_ndim=1)
    if x0.shape[-1] != d:
        raise V.InputError(f"{x_name} must have shape (..., d={d}); got {tuple(x0.shape)}")
    eta = xp.astype(V.client_parameter(eta, "eta", M=M, xp=xp, low=0.0, open_low=True), xp.float64,
                    copy=False)   # a broadcast sweep stays a view
    if eta.ndim == 0:
        eta = xp.full((M,), float(eta))
    tau_arr = V.client_parameter(tau, "tau", M=M, xp=xp, kind="integer", low=1, high=10**6)
    if tau_arr.ndim == 0:
        tau_arr = xp.full((M,), int(tau_arr), dtype=xp.int64)
    P = None
    if client_opt == "precond":
        if precond is None:
            raise V.InputError('precond (..., M, d, d) SPD matrices P_i are required for client_opt="precond"')
        P = V.array(precond, "precond", xp=xp, min_ndim=3)
        if P.shape[-3:] != (M, d, d):
            raise V.InputError(f"precond must have shape (..., M={M}, d={d}, d={d}); got {tuple(P.shape)}")
        check_spd(P, xp, "precond", symmetric_rtol=1e-12)
    elif precond is not None:
        raise V.InputError(f'precond is only used with client_opt="precond"; got client_opt={client_opt!r}')
    beta1 = _beta("beta1", _BETA1_DEFAULT[client_opt] if beta1 is None else beta1)
    beta2 = _beta("beta2", 0.999 if beta2 is None else beta2)
    v0 = V.real(_V0_DEFAULT.get(client_opt, 0.0) if v0 is None else v0, "v0", low=0.0)
    eps = V.real(1e-7 if eps is None else eps, "eps", low=0.0)
    bias_correction = V.flag(bias_correction, "bias_correction")
    noise = V.flag(noise, "noise")
    seed = V.integer(seed, "seed", low=0, high=2**63 - 1)
    noise_version = V.integer(noise_version, "noise_version", low=1, high=3)
    if v0 < 0 or eps < 0:
        raise V.InputError(f"v0 and eps must be >= 0; got v0={v0}, eps={eps}")
    if client_opt in _ADAPTIVE and v0 == 0 and eps == 0:
        raise V.InputError("v0 and eps must not both be 0 for an adaptive client_opt (P = 1/(sqrt(v)+eps) would be 1/0)")
    parts = {"problem": tuple(getattr(problem, "batch_shape", problem.weights.shape[:-1])), x_name: x0.shape[:-1],
             "eta": eta.shape[:-1], "tau": tau_arr.shape[:-1], "precond": () if P is None else P.shape[:-3],
             "alpha": tuple(extra_batch)}
    batch = V.batch_shape(parts)
    if int(seed) < 0:
        raise V.InputError(f"seed must be a non-negative integer; got {seed}")
    if config is None:
        config = xp.reshape(xp.arange(prod(batch), dtype=xp.int64), batch)
    config = _keys(config, "config", batch, xp)
    if client_ids is None:
        client_ids = xp.arange(M, dtype=xp.int64)
    client_ids = _keys(client_ids, "client_ids", batch + (M,), xp)
    cov = getattr(problem, "noise_cov", None)
    cov = asarray(cov, xp) if (noise and cov is not None) else None
    factor_diag = None if cov is None else _noise_root_diag(problem, cov, xp)
    return _Setup(xp=xp, batch=batch, M=M, d=d, eta=eta, tau=tau_arr, tau_max=int(xp.max(tau_arr)),
                  client_opt=client_opt, precond=P, beta1=beta1, beta2=beta2, v0=v0,
                  eps=eps, bias_correction=bool(bias_correction), n_mode=n_mode, noise_cov=cov,
                  noise_diag=factor_diag, config=config, client_ids=client_ids, seed=int(seed),
                  noise_version=int(noise_version)), x0


# --------------------------------------------------------------------------------------
# the local runs (all clients and configurations at once)
# --------------------------------------------------------------------------------------
FUSED_CUDA = True   # on CuPy, run the local runs that _cuda.local_runs covers as one kernel (False: the array code)
FUSED_ROUNDS_CUDA = True   # and whole rounds with the GD server as one kernel (False: one kernel per round)


def _kernel_factor(s: _Setup):
    """The dense noise factor for the CuPy kernels: None where they take the diagonal (or draw no noise)."""
    return None if s.noise_diag is not None else s.noise_factor


def _fused_cuda(problem, s: _Setup, record: bool) -> bool:
    """Whether this round's local runs go to the fused CuPy kernel: quadratic clients, client SGD, fixed
    preconditioners or AdaGrad without momentum or bias correction, d <= 32, nothing recorded."""
    return (FUSED_CUDA and not record and "cupy" in s.xp.__name__ and isinstance(problem, QuadraticFederation)
            and s.client_opt in ("sgd", "precond", "adagrad") and not s.beta1 and not s.bias_correction
            and s.d <= 32)


def _kernel_N(s: _Setup, N):
    """The kernels' ``N`` (per client and coordinate for AdaGrad, one number per client otherwise) as ``N_i``:
    diagonals ``batch + (M, d)``, or ``c_i P_i`` for fixed preconditioners."""
    if s.client_opt == "precond":
        return N[..., None] * s.precond
    return s.xp.broadcast_to(N, s.batch + (s.M, s.d))


def _fused_rounds_cuda(problem, s: _Setup, server_opt: str, sampling, correction: str) -> bool:
    """Whether FedOpt's rounds go to the CuPy kernel of whole rounds (:class:`fltheory._cuda.RoundsKernel`): what
    :func:`_fused_cuda` covers, with the GD server, full participation, no or local correction, and a configuration's
    clients in one block of threads."""
    if not (FUSED_ROUNDS_CUDA and _fused_cuda(problem, s, False) and server_opt == "sgd" and sampling is None
            and correction in ("none", "local")):
        return False
    from ..._cuda import rounds_fit  # noqa: PLC0415

    return rounds_fit(s.M, s.d)


def _local_runs(problem, x, s: _Setup, t: int, record: bool = False) -> ClientUpdate:
    if _fused_cuda(problem, s, record):   # pragma: no cover - GPU machines
        from ..._cuda import local_runs  # noqa: PLC0415

        delta, N = local_runs(xp=s.xp, x=x, H=problem.H, x_opt=problem.x_opt, factor=_kernel_factor(s),
                              factor_diag=s.noise_diag, eta=s.eta,
                              tau=s.tau, tau_max=s.tau_max, config=s.config, client_ids=s.client_ids, batch=s.batch,
                              M=s.M, d=s.d, base=int(KeyedStream(s.seed, _NOISE)._base), round0=t * _STEP_KEY,
                              adagrad=s.client_opt == "adagrad", v0=s.v0, eps=s.eps, exact_n=s.n_mode == "exact",
                              version=s.noise_version, precond=s.precond)
        return ClientUpdate(delta=delta, N=_kernel_N(s, N))
    xp, b1, b2, opt = s.xp, s.beta1, s.beta2, s.client_opt
    shape = s.batch + (s.M, s.d)
    y = copy_of(xp.broadcast_to(x[..., None, :], shape))
    eta = s.eta[..., None]
    m = xp.zeros(shape)
    v = xp.full(shape, s.v0)
    diag = opt != "precond"
    acc = xp.zeros(shape if opt in _ADAPTIVE else s.batch + (s.M, 1))
    Mk = xp.zeros_like(acc)
    stream = KeyedStream(s.seed, _NOISE, version=s.noise_version) if s.noise_cov is not None else None
    rec_y, rec_g, rec_P, rec_a = [y], [], [], []
    if type(problem) is QuadraticFederation:   # its gradient without the door's shape check (y is ours)
        H, x_opt = problem.H, problem.x_opt

        def grad(Y):
            return matvec(H, Y - x_opt)
    else:
        grad = problem.grad_clients
    ones = None if opt in _ADAPTIVE else xp.ones(acc.shape)
    for k in range(s.tau_max):
        active = (k < s.tau)[..., None]
        g = grad(y)
        if stream is not None:
            z = stream.normal(config=s.config[..., None], round=t * _STEP_KEY + k, client=s.client_ids,
                              size=(s.d,))
            g = g + matvec(s.noise_factor, z)
        m = b1 * m + (1.0 - b1) * g if b1 else g
        if opt == "adagrad":
            v = v + g * g
        elif opt == "adam":
            v = b2 * v + (1.0 - b2) * g * g
        elif opt == "yogi":
            g2 = g * g
            v = v - (1.0 - b2) * g2 * xp.sign(v - g2)
        if opt in _ADAPTIVE:
            Pk = 1.0 / (xp.sqrt(v) + s.eps)
            if s.bias_correction:
                Pk = Pk * (math.sqrt(1.0 - b2 ** (k + 1)) / (1.0 - b1 ** (k + 1)))
            u = Pk * m
        else:
            Pk = ones
            u = m if diag else matvec(s.precond, m)
        y = xp.where(active, y - eta * u, y)
        if s.n_mode == "alg1":
            Mk = b1 * Mk + (1.0 - b1) * Pk
            inc = Mk
        else:
            inc = (1.0 - b1 ** (k + 1)) * Pk
        acc = acc + xp.where(active, inc, 0.0)
        if record:
            rec_y.append(y)
            rec_g.append(g)
            rec_P.append(xp.broadcast_to(Pk, shape) if diag else None)
            rec_a.append(active[..., 0])
    if s.n_mode == "exact":
        acc = eta * acc
    if diag:
        N = xp.broadcast_to(acc, shape)
    else:
        N = acc[..., None] * s.precond
    delta = x[..., None, :] - y
    if not record:
        return ClientUpdate(delta=delta, N=N)
    return ClientUpdate(delta=delta, N=N, y=xp.stack(rec_y), g=xp.stack(rec_g) if rec_g else None,
                        P=xp.stack(rec_P) if (diag and rec_P) else None, active=xp.stack(rec_a))


def _apply_Ninv(s: _Setup, N, vec):
    """N_i^{-1} vec_i for every client (diagonal N, or N_i = c_i P_i with P_i^{-1} precomputed)."""
    if s.client_opt != "precond":
        return vec / N
    c = N[..., 0, 0] / s.precond[..., 0, 0]  # N_i = c_i P_i
    return matvec(s.precond_inv, vec) / c[..., None]


def client_update(problem, *, x, eta, tau, client_opt="sgd", precond=None, beta1=None, beta2=None, v0=None,
                  eps=None, bias_correction=False, n_mode="exact", round=0, seed=0, noise=True, config=None,
                  client_ids=None, record=False, noise_version=1) -> ClientUpdate:
    """ClientUpdate (restarted local optimizer) for every client of every configuration, from the model ``x``.

    Restart semantics: no state survives between calls, so two calls with the same ``x`` and the
    same noise keys give identical local trajectories.  ``eta`` and ``tau`` are client parameters
    as in :func:`fedopt` (``per_client`` / ``per_configuration``; a plain 1-D array is refused).  ``record=True`` also returns the local
    iterates, the gradients and the preconditioners of every step (for the exact-N identity).

    >>> import numpy as np, fltheory as flt
    >>> fed = flt.QuadraticFederation(np.eye(2)[None].repeat(2, 0), [[1., 0], [0, 1]])
    >>> cu = client_update(fed, x=np.zeros(2), eta=0.5, tau=2)
    >>> cu.delta.tolist()                              # x - A_i(x) = (1 - 0.5^2) (x - x_i*)
    [[-0.75, 0.0], [0.0, -0.75]]
    >>> cu.N[0]                                        # eta * tau
    array([1., 1.])
    """
    round = V.integer(round, "round", low=0, high=10**8)   # as fedopt's rounds
    run = _client_update_runner(problem, x=x, record=record, eta=eta, tau=tau, client_opt=client_opt,
                                precond=precond, beta1=beta1, beta2=beta2, v0=v0, eps=eps,
                                bias_correction=bias_correction, n_mode=n_mode, noise=noise, seed=seed,
                                config=config, client_ids=client_ids, noise_version=noise_version)
    return run(round=round)


def _client_update_runner(problem, *, x, record=False, **options):
    """:func:`client_update` from many models of the shape of ``x``, its options validated once (a loop of a
    check that calls it every round): ``run(y, round)`` is ``client_update(problem, x=y, round=round,
    record=record, **options)`` for a ``y`` of that shape (not checked again); ``run()`` starts from ``x``."""
    record = V.flag(record, "record")
    s, x = _setup(problem, x, x_name="x", **{**_CLIENT_UPDATE_DEFAULTS, **options})

    def run(y=x, round=0):
        return _local_runs(problem, s.xp.broadcast_to(y, s.batch + (s.d,)), s, round, record=record)

    return run


_CLIENT_UPDATE_DEFAULTS = dict(client_opt="sgd", precond=None, beta1=None, beta2=None, v0=None, eps=None,
                               bias_correction=False, n_mode="exact", seed=0, noise=True, config=None, client_ids=None,
                               noise_version=1)


# --------------------------------------------------------------------------------------
# participation and aggregation weights
# --------------------------------------------------------------------------------------
def _omega(s: _Setup, w, t, sampling, sampling_scheme, aggregation):
    xp = s.xp
    w = xp.broadcast_to(w, s.batch + (s.M,))
    if sampling is None:
        return w if aggregation == "weights" else xp.full(s.batch + (s.M,), 1.0 / s.M)
    stream = KeyedStream(s.seed, _SAMPLING)
    if sampling_scheme == "uniform":  # |S| distinct clients, uniformly without replacement
        u = stream.uniform(config=s.config[..., None], round=t, client=s.client_ids)
        rank = xp.argsort(xp.argsort(u, axis=-1), axis=-1)
        counts = xp.astype(rank < sampling, xp.float64)
    else:  # |S| i.i.d. draws proportional to w_i (with replacement; multiplicities count)
        u = stream.uniform(config=s.config[..., None], round=t, client=xp.arange(sampling))  # (..., S)
        cum = np.cumsum(w, axis=-1) if xp is np else xp.cumulative_sum(w, axis=-1)
        idx = xp.clip(xp.sum(xp.astype(cum[..., None, :] < u[..., :, None], xp.int64), axis=-1), 0, s.M - 1)
        counts = xp.astype(xp.sum(xp.astype(idx[..., :, None] == xp.arange(s.M), xp.int64), axis=-2), xp.float64)
    if aggregation == "uniform":
        return counts / sampling
    cw = counts * w
    tot = xp.sum(cw, axis=-1, keepdims=True)
    return xp.where(tot > 0, cw / xp.where(tot > 0, tot, 1.0), 0.0)


# --------------------------------------------------------------------------------------
# FedOpt
# --------------------------------------------------------------------------------------
def fedopt(problem, *, x0, rounds, eta, tau, client_opt="sgd", precond=None, beta1=None, beta2=None, v0=None,
           eps=None, bias_correction=False, correction="none", n_mode="exact", server_opt="sgd", alpha=1.0,
           server_beta1=0.9, server_beta2=0.99, server_eps=1e-3, server_v0=None, sampling=None,
           sampling_scheme="uniform", aggregation="weights", seed=0, noise=True, record_every=1, config=None,
           client_ids=None, noise_version=1) -> FedOptResult:
    """Run FedOpt (eqs. (4)-(5), Algorithm 1) on a batch of configurations.

    Parameters
    ----------
    problem : federation (module docstring); leading batch axes are configurations x seeds.
    x0 : (..., d) initial model.  rounds : number of rounds T >= 0.
    eta : client learning rate eta_i > 0.  tau : local steps tau_i >= 1; clients with tau_i < max tau
        idle (masked no-op steps) at the end of a round.  Both are client parameters: a scalar is
        common to every client; ``fltheory.per_client(v)`` gives one value per client (last axis
        M), ``fltheory.per_configuration(v)`` one run per value; a plain array needs a last axis
        of M or 1 (leading axes = configurations), and a plain 1-D array of several values is
        refused as ambiguous (:func:`fltheory.validation.client_parameter`).
    client_opt : "sgd" | "momentum" | "precond" | "adagrad" | "adam" | "yogi".
    precond : (..., M, d, d) SPD P_i, required for "precond" and only allowed there.
    beta1, beta2, v0, eps : client optimizer constants; ``None`` gives the usual defaults
        (beta1: 0 for sgd/precond/adagrad, 0.9 for momentum/adam/yogi; beta2 0.999;
        v0: adagrad 0.1, adam 0, yogi 1e-6; eps 1e-7).  beta1 > 0 adds momentum to any optimizer.
    bias_correction : Keras-style Adam/Yogi bias correction (Alg. 1 has none).
    correction : "none" | "local" (N_i^{-1} Delta_i) | "joint" (local, then N_s^{-1}).
    n_mode : "exact" (N_i = eta_i sum_k (1 - beta1^(k+1)) P^(k)) or "alg1" (Alg. 1's sum_k M^(k), no eta).
    server_opt : "sgd" (x -= alpha Delta) | "momentum" (m = server_beta1 m + Delta; x -= alpha m) |
        "adagrad" (v += Delta^2) | "adam" | "yogi" (m, v EMAs, no bias correction), all with
        x -= alpha m / (sqrt(v) + server_eps); v starts at ``server_v0`` (default server_eps^2, as [6]).
    alpha : server learning rate > 0, scalar or an array of configuration axes (never per client).
    sampling : None (full participation) or ``|S|`` in [1, M] clients per round, drawn by
        ``sampling_scheme``: "uniform" (distinct clients, uniformly without replacement) or
        "weighted" (i.i.d. proportional to w_i, with replacement; repeats count).
    aggregation : "weights" (omega_i = w_i renormalised over the sampled clients; eq. (5)) or
        "uniform" (``omega_i = multiplicity / |S|``; Alg. 1).  Uniform aggregation
        is unbiased for (5) under "weighted" sampling, "weights" is the analysis choice.
    seed, noise, config, client_ids : keyed randomness (module docstring); ``noise=False``
        gives deterministic gradients even when the problem has ``noise_cov``.
    noise_version : the keyed stream's version of normal noise (``KeyedStream(version=...)``): 1 (the default,
        the platform's ``log`` and ``cos``), 2 (portable functions: the same bits on NumPy and in the CuPy
        kernels) or 3 (as 2, both outputs of each Box-Muller pair: half the work per number in the kernels).
    record_every : record the global model every this many rounds (and at the last round).

    Returns
    -------
    FedOptResult with ``x``, ``trajectory``, ``rounds_recorded``, the last round's ``N``,
    ``Delta`` and ``omega``.

    >>> import numpy as np, fltheory as flt
    >>> H = np.array([[[2, .5], [.5, 1]], [[1, 0], [0, 4]], [[3, -1], [-1, 2]]], float)
    >>> fed = flt.QuadraticFederation(H, [[1, 0], [0, 2], [-1, -1]], [.5, .3, .2])
    >>> r = fedopt(fed, x0=np.zeros(2), rounds=400, eta=0.01, tau=5, client_opt="adagrad", v0=0.1, eps=0.0,
    ...            correction="local", alpha=0.05, record_every=100)
    >>> np.round(r.x, 8)                           # worked example: local correction removes the bias
    array([0.28476344, 1.1553339 ])
    >>> r.rounds_recorded
    array([  0, 100, 200, 300, 400])
    """
    correction = _choice("correction", correction, ("none", "local", "joint"))
    server_opt = _choice("server_opt", server_opt, SERVER_OPTS)
    sampling_scheme = _choice("sampling_scheme", sampling_scheme, ("uniform", "weighted"))
    aggregation = _choice("aggregation", aggregation, ("weights", "uniform"))
    rounds = V.integer(rounds, "rounds", low=0, high=10**8)
    record_every = V.integer(record_every, "record_every", low=1, high=10**8)
    _check_problem(problem)
    xp0 = namespace(problem.weights)
    alpha = xp0.astype(V.configuration_parameter(alpha, "alpha", xp=xp0, low=0.0, open_low=True), xp0.float64)
    s, x = _setup(problem, x0, eta=eta, tau=tau, client_opt=client_opt, precond=precond, beta1=beta1, beta2=beta2,
                  v0=v0, eps=eps, bias_correction=bias_correction, n_mode=n_mode, noise=noise, seed=seed,
                  config=config, client_ids=client_ids, extra_batch=alpha.shape, noise_version=noise_version)
    M = s.M
    if sampling is not None:
        sampling = V.integer(sampling, "sampling", low=1, high=M)
    sb1 = _beta("server_beta1", server_beta1)
    sb2 = _beta("server_beta2", server_beta2)
    server_eps = V.real(server_eps, "server_eps", low=0.0)
    server_v0 = server_eps**2 if server_v0 is None else V.real(server_v0, "server_v0", low=0.0)
    if server_opt in ("adagrad", "adam", "yogi") and server_eps + server_v0 == 0:
        raise V.InputError(f"server_eps and server_v0 must not both be 0 for server_opt={server_opt!r}")
    xp = s.xp
    a = alpha[..., None]
    x = copy_of(xp.astype(xp.broadcast_to(x, s.batch + (s.d,)), xp.float64, copy=False))
    sm = xp.zeros_like(x)
    sv = xp.full(x.shape, server_v0)
    traj, recorded = [x], [0]
    N = Delta = omega = None
    done = 0   # rounds already run (all of them by the kernel of whole rounds, where it applies)
    if rounds and _fused_rounds_cuda(problem, s, server_opt, sampling, correction):   # pragma: no cover - GPUs
        from ..._cuda import RoundsKernel  # noqa: PLC0415

        omega = _omega(s, problem.weights, 0, None, sampling_scheme, aggregation)
        run = RoundsKernel(xp=xp, H=problem.H, x_opt=problem.x_opt, factor=_kernel_factor(s),
                           factor_diag=s.noise_diag, eta=s.eta, tau=s.tau,
                           tau_max=s.tau_max, omega=omega, alpha=alpha, config=s.config, client_ids=s.client_ids,
                           batch=s.batch, M=M, d=s.d, base=int(KeyedStream(s.seed, _NOISE)._base),
                           step_key=_STEP_KEY, adagrad=s.client_opt == "adagrad", v0=s.v0, eps=s.eps,
                           exact_n=s.n_mode == "exact", local_correction=correction == "local",
                           version=s.noise_version, precond=s.precond,
                           precond_inv=s.precond_inv if correction == "local" else None)
        t = 0
        while t < rounds:
            t1 = min(int(rounds), (t // record_every + 1) * record_every)
            x = run(x, t, t1)
            traj.append(x)
            recorded.append(t1)
            t = t1
        Delta, N = run.last_round()
        N = _kernel_N(s, N)
        done = int(rounds)
    for t in range(done, int(rounds)):
        cu = _local_runs(problem, x, s, t)
        N, Di = cu.N, cu.delta
        omega = _omega(s, problem.weights, t, sampling, sampling_scheme, aggregation)
        if correction != "none":
            Di = _apply_Ninv(s, N, Di)
        Delta = weighted_sum(omega, Di)
        if correction == "joint":
            if s.client_opt != "precond":
                Delta = Delta / weighted_sum(omega, 1.0 / N)
            else:
                c = N[..., 0, 0] / s.precond[..., 0, 0]
                Ns = weighted_sum(omega / c, s.precond_inv, 2)
                Delta = xp.linalg.solve(Ns, Delta[..., None])[..., 0]
        if server_opt == "sgd":
            x = x - a * Delta
        elif server_opt == "momentum":
            sm = sb1 * sm + Delta
            x = x - a * sm
        else:
            if server_opt == "adagrad":
                sm, sv = Delta, sv + Delta * Delta
            else:
                sm = sb1 * sm + (1.0 - sb1) * Delta
                D2 = Delta * Delta
                sv = sb2 * sv + (1.0 - sb2) * D2 if server_opt == "adam" else sv - (1.0 - sb2) * D2 * xp.sign(sv - D2)
            x = x - a * sm / (xp.sqrt(sv) + server_eps)
        if (t + 1) % record_every == 0 or t + 1 == rounds:
            traj.append(x)
            recorded.append(t + 1)
    diverged = ~xp.all(xp.isfinite(x), axis=-1)
    if bool(xp.any(diverged)):
        bad = np.argwhere(to_numpy(diverged))
        text = ", ".join(str(tuple(int(j) for j in i)) for i in bad[:5])
        if bool(xp.all(diverged)):
            raise V.InputError("fedopt diverged in every configuration (non-finite model): the client step eta or "
                               "the server rate alpha is too large for this federation")
        import warnings  # noqa: PLC0415

        warnings.warn(f"fedopt: {len(bad)} configuration(s) diverged ({text}) and are marked in result.diverged: "
                      "eta or alpha is too large for them; the others are unaffected", RuntimeWarning, stacklevel=2)
    return FedOptResult(x=x, trajectory=xp.stack(traj), rounds_recorded=np.asarray(recorded), N=N, Delta=Delta,
                        omega=omega, seed=s.seed, diverged=diverged)


# --------------------------------------------------------------------------------------
# the slow reference: one configuration, one client, one step at a time (tests / benchmarks)
# --------------------------------------------------------------------------------------
def fedopt_loop(problem, *, x0, rounds, eta, tau, client_opt="sgd", precond=None, v0=None, eps=None,
                correction="none", alpha=1.0, seed=0, noise=True, config=None, noise_version=1) -> FedOptResult:
    """Plain-loop FedOpt on a ``QuadraticFederation`` (NumPy only): the baseline for tests and benchmarks.

    Supports sgd / precond / adagrad clients (beta1 = 0), the GD server, full participation
    with omega = w, and the three corrections.  Python loops over configurations, rounds,
    clients and local steps; the noise is drawn one (configuration, round, client, step) at a
    time from the same keyed stream as ``fedopt``, so both give the same run (to rounding).
    ``eta``, ``tau`` and ``alpha`` follow :func:`fedopt`'s batch convention.

    >>> import numpy as np, fltheory as flt
    >>> fed = flt.random_quadratic_federation(M=3, d=2, seed=1)
    >>> a = fedopt_loop(fed, x0=np.zeros(2), rounds=3, eta=0.1, tau=2).x
    >>> b = fedopt(fed, x0=np.zeros(2), rounds=3, eta=0.1, tau=2).x
    >>> bool(np.allclose(a, b, rtol=0, atol=1e-13))
    True
    """
    if not (hasattr(problem, "H") and hasattr(problem, "x_opt")):
        raise V.InputTypeError(f"problem must be a QuadraticFederation (fedopt_loop needs H, x_opt); got {V.shown(problem)}")
    _choice("client_opt", client_opt, ("sgd", "precond", "adagrad"))
    _choice("correction", correction, ("none", "local", "joint"))
    M, d = problem.M, problem.d
    H, xo, w = (to_numpy(v) for v in (problem.H, problem.x_opt, problem.weights))
    rounds = V.integer(rounds, "rounds", low=0, high=10**6)
    x0 = V.array(to_numpy(x0) if is_cupy(x0) else x0, "x0", xp=np, shape=(d,))
    eta_a = V.client_parameter(eta, "eta", M=M, xp=np, low=0.0, open_low=True)
    tau_a = V.client_parameter(tau, "tau", M=M, xp=np, kind="integer", low=1, high=10**5)
    alpha = V.configuration_parameter(alpha, "alpha", xp=np, low=0.0, open_low=True)
    seed = V.integer(seed, "seed", low=0, high=2**63 - 1)
    noise = V.flag(noise, "noise")
    if int(np.prod(np.broadcast_shapes(np.shape(eta_a)[:-1], H.shape[:-3]))) * rounds * int(tau_a.max()) * M > 10**7:
        raise V.InputError("rounds * tau * M * configurations is over the reference loop's limit of 10**7 client steps; "
                           "use fedopt (vectorised)")
    P = None if precond is None else V.array(to_numpy(precond) if is_cupy(precond) else precond, "precond", xp=np,
                                             min_ndim=3)
    batch = V.batch_shape({"problem": np.broadcast_shapes(H.shape[:-3], xo.shape[:-2], w.shape[:-1]), "x0": x0.shape[:-1],
                       "eta": eta_a.shape[:-1], "tau": tau_a.shape[:-1],
                       "precond": () if P is None else P.shape[:-3], "alpha": np.shape(alpha)})
    H = np.broadcast_to(H, batch + (M, d, d))
    xo = np.broadcast_to(xo, batch + (M, d))
    w = np.broadcast_to(w, batch + (M,))
    x0 = np.broadcast_to(x0, batch + (d,))
    eta_a = np.broadcast_to(eta_a, batch + (M,))
    tau_a = np.broadcast_to(tau_a, batch + (M,))
    if P is not None:
        P = np.broadcast_to(P, batch + (M, d, d))
    cfg = np.arange(int(np.prod(batch))).reshape(batch) if config is None else _keys(config, "config", batch, np)
    v0 = V.real(_V0_DEFAULT["adagrad"] if v0 is None else v0, "v0", low=0.0)
    eps = V.real(1e-7 if eps is None else eps, "eps", low=0.0)
    cov = getattr(problem, "noise_cov", None)
    cov = None if (cov is None or not noise) else np.broadcast_to(to_numpy(cov), batch + (M, d, d))
    stream = KeyedStream(seed, _NOISE, version=V.integer(noise_version, "noise_version", low=1, high=3))
    xs = np.empty(batch + (d,))
    trajs = np.empty((rounds + 1,) + batch + (d,))
    for b in np.ndindex(*batch):
        x = x0[b].copy()
        trajs[(0,) + b] = x
        for t in range(rounds):
            deltas, Ninvs = [], []
            for i in range(M):
                y = x.copy()
                vv = np.full(d, float(v0))
                nacc = np.zeros(d)
                for k in range(int(tau_a[b][i])):
                    g = H[b][i] @ (y - xo[b][i])
                    if cov is not None:
                        z = stream.normal(config=int(cfg[b]), round=t * _STEP_KEY + k, client=i, size=(d,))
                        g = g + _factor(cov[b][i], np, noise_root_diagonal(cov[b][i], np)) @ z
                    if client_opt == "sgd":
                        y = y - eta_a[b][i] * g
                        nacc += 1.0
                    elif client_opt == "precond":
                        y = y - eta_a[b][i] * (P[b][i] @ g)
                        nacc += 1.0
                    else:
                        vv = vv + g * g
                        p = 1.0 / (np.sqrt(vv) + eps)
                        y = y - eta_a[b][i] * p * g
                        nacc += p
                Nd = eta_a[b][i] * nacc
                Ninv = np.linalg.inv(Nd[0] * P[b][i]) if client_opt == "precond" else np.diag(1.0 / Nd)
                deltas.append(x - y)
                Ninvs.append(Ninv)
            if correction == "none":
                Delta = sum(w[b][i] * deltas[i] for i in range(M))
            else:
                Delta = sum(w[b][i] * (Ninvs[i] @ deltas[i]) for i in range(M))
                if correction == "joint":
                    Delta = np.linalg.solve(sum(w[b][i] * Ninvs[i] for i in range(M)), Delta)
            x = x - float(np.broadcast_to(alpha, batch)[b]) * Delta
            trajs[(t + 1,) + b] = x
        xs[b] = x
    return FedOptResult(x=xs, trajectory=trajs, rounds_recorded=np.arange(rounds + 1), N=None, Delta=None, omega=None,
                        seed=int(seed))
