"""FedDelAvg: federated averaging with a delayed, weighted global model (Lin, Brinton, Michelusi).

Problem class
-------------
Any federation exposing ``grad_clients(W)`` (``W`` of shape ``(..., M, d)``), ``loss(w)``,
``weights`` (rho_i, summing to one) and ``x_star``: ``QuadraticFederation`` (optionally with
additive gradient noise) and ``LogisticFederation`` (full-batch or minibatch gradients).

Method (the paper's eqs. (9)-(13), followed literally)
----------------------------------------------------
Time ``t`` runs over ``-Delta, ..., T - Delta`` with ``T = K tau``; all clients start at
``w_i(-Delta) = w_init``.  For ``t = -Delta+1, ..., T-Delta`` every client takes a local step
``u_i = w_i(t-1) - eta grad F_i(w_i(t-1))`` and, at the sync times ``t = k tau`` (k in 0..K-1,
inside the update range; eq. (11)), mixes it with the delayed global model (eq. (10)):

    w_i(k tau) = alpha w(k tau - Delta) + (1 - alpha) u_i,     w(t) = sum_i rho_i w_i(t)   (8)

* ``Delta = 0`` makes (10) circular (the global model at a sync time would depend on the sync
  itself); the global model used is the pre-sync average ``sum_j rho_j u_j``.  With ``alpha = 1`` this is exactly FedAvg.  With
  ``Delta = 0`` the syncs are at ``t = tau, ..., (K-1) tau`` (K-1 of them: the sync at ``t = 0`` would mix ``w_init`` with itself); with
  ``Delta >= 1`` at ``t = 0, ..., (K-1) tau`` (the first mixes with ``w_init``).
* When ``Delta = tau`` a sync time is also a send time: the sync comes first and the post-sync
  average is sent.
* Output (13): ``w^K = argmin_{w in W} F(w)``, ties to the smallest k, over the candidates
  ``w(k tau - Delta)``.  The printed candidate set is ``k = 0..K-1`` (``output_set="paper"``,
  the default); the proof of Theorem 1 bounds ``k = 1..K`` (``"proof"``); ``"all"`` is
  ``k = 0..K``.  The printed set and the one the proof uses differ by one period, and the
  printed one makes Theorem 1 false (``checks``).  ``F`` is evaluated by oracle at the average.

Internally the loop runs over the step counter ``s = t + Delta = 1..T`` (local steps taken),
so configurations with different ``Delta`` share one loop: period ``k`` of the paper,
``T_k = {k tau - Delta + 1, ..., (k+1) tau - Delta}``, is ``s in (k tau, (k+1) tau]`` for every
``Delta``, the candidates ``w(k tau - Delta)`` sit at ``s = k tau`` and the sync of period k at
``s = k tau + Delta``.

Recorded quantities (``record=True``) -- what the lemmas bound:

* Lemma 3: ``divergence[..., k, i] = ||w_i(k tau - Delta) - w(k tau - Delta)||``, k = 0..K.
* Lemma 4: ``local_gap[..., k, j, i] = ||w_i(t) - c_k(t)||`` at ``t = k tau - Delta + j``,
  j = 0..tau, where ``c_k`` is centralized GD (eq. (14)) started at ``c_k(k tau - Delta) = w(k tau - Delta)``;
  the sequences themselves are ``c[..., k, j, :]``.
* Lemma 5: ``lemma5[..., k] = ||w(k tau) - c_k(k tau)||`` (zero when ``Delta = 0``).
* Proposition 1: ``prop1[..., k] = ||w((k+1) tau - Delta) - c_k((k+1) tau - Delta)||`` and
  ``prop1_loss[..., k] = |F(w(.)) - F(c_k(.))|`` at that time.
* Theorem 1: ``gap = F(w^K) - F(w*)`` of the result (and ``gap_for(output_set)``).
* Effective constants of the assumptions, measured on the run: ``L_eff`` (largest gradient norm at the points the proofs
  use: ``||grad F_i(w_i(t))||`` over all clients and times, ``||grad F(c_k(t))||`` and
  ``||grad F(w(T - Delta))||``), ``delta_eff[..., i] = max_{k,t} ||grad F_i(c_k(t)) - grad F(c_k(t))||``
  and its average ``delta``, ``omega = 1 / max_{k<K} ||w(k tau - Delta) - w*||^2`` and
  ``phi = omega (1 - beta eta / 2)`` (App. A-G, eq. (82)), with ``beta`` the federation's smoothness.

Batching: ``eta``, ``alpha`` and ``Delta`` may be arrays; they broadcast with the federation's
batch shape into the configuration shape.  Stochastic runs with ``n_seeds`` replicates put the
replicate axis first: results are ``(n_seeds, *config_shape, ...)``.  Randomness is keyed by
(seed, replicate, step s, client), so all configurations of a replicate see common random
numbers and a configuration's result does not depend on what else is in the batch.

Example
-------
>>> import numpy as np, fltheory as flt
>>> from fltheory.papers.feddelavg import feddelavg
>>> fed = flt.random_quadratic_federation(M=4, d=3, kappa=5, seed=1)
>>> res = feddelavg(fed, eta=0.1, tau=5, Delta=np.array([0, 4]), alpha=np.array([[1.0], [0.3]]), K=40)
>>> res.gap.shape
(2, 2)
>>> bool(np.all(res.gap >= 0))
True
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ...backend import KeyedStream, asarray, copy_of, matvec, namespace, to_numpy, weighted_sum
from ... import validation as V
from ...problems import ProblemError, QuadraticFederation, noise_sqrt

__all__ = [
    "feddelavg",
    "feddelavg_loop",
    "FedDelAvgResult",
    "FedDelAvgRecord",
    "LoopResult",
    "check_parameters",
    "sync_times",
    "smoothness",
    "OUTPUT_SETS",
]

OUTPUT_SETS = ("paper", "proof", "all")
TAU_MAX = 10**7  # iterations per period (and periods K): a FedDelAvg run is K * tau iterations


# --------------------------------------------------------------------------------------
# parameters
# --------------------------------------------------------------------------------------
def check_parameters(*, tau, Delta, alpha, eta, K=None, xp=np):
    """Validate FedDelAvg parameters; return ``(tau, Delta, alpha, eta)`` as int / arrays.

    ``tau`` integer >= 1; ``Delta`` integer(s) with ``0 <= Delta <= tau`` (the paper's range);
    ``alpha`` in (0, 1]; ``eta > 0``; ``K`` integer >= 1.  Errors name the parameter and the
    violated condition.

    Batch axes: ``eta``, ``alpha`` and ``Delta`` are common to every client, so an array of them
    is a batch of configurations (every axis a configuration axis, broadcast against the
    federation's batch axes); ``fltheory.per_configuration(v)`` says so explicitly and
    ``fltheory.per_client(v)`` is refused (:func:`fltheory.validation.configuration_parameter`).
    """
    tau = V.integer(tau, "tau", low=1, high=TAU_MAX)
    if K is not None:
        V.integer(K, "K", low=1, high=TAU_MAX)
    D = V.configuration_parameter(Delta, "Delta", xp=np, kind="integer")
    if np.any(D < 0):
        raise ProblemError(f"Delta must satisfy Delta >= 0; got Delta={D.min()}")
    if np.any(D > tau):
        raise ProblemError(f"Delta must satisfy Delta <= tau (the delay cannot exceed the period); got Delta={D.max()} > tau={tau}")
    a = V.configuration_parameter(alpha, "alpha", xp=xp)
    if bool(xp.any(a <= 0)) or bool(xp.any(a > 1)):
        raise ProblemError(f"alpha must satisfy 0 < alpha <= 1; got alpha in [{float(xp.min(a))}, {float(xp.max(a))}]")
    e = V.configuration_parameter(eta, "eta", xp=xp)
    if bool(xp.any(e <= 0)):
        raise ProblemError(f"eta must satisfy eta > 0; got eta in [{float(xp.min(e))}, {float(xp.max(e))}]")
    return tau, xp.asarray(D.astype(np.int64)), a, e


def sync_times(*, tau: int, Delta: int, K: int) -> list[int]:
    """The sync times ``t = k tau`` of eq. (11) inside the update range ``-Delta+1..T-Delta``.

    >>> sync_times(tau=4, Delta=0, K=3), sync_times(tau=4, Delta=2, K=3)
    ([4, 8], [0, 4, 8])
    """
    tau = V.integer(tau, "tau", low=1, high=TAU_MAX)
    K = V.integer(K, "K", low=1, high=10**7)
    Delta = V.integer(Delta, "Delta", low=0, high=tau)
    return [k * tau for k in range(K) if -Delta + 1 <= k * tau <= K * tau - Delta]


def _check_fed(fed):
    from ...problems import LogisticFederation, PseudoHuberFederation  # noqa: PLC0415

    return V.instance(fed, "fed", (QuadraticFederation, LogisticFederation, PseudoHuberFederation))


def smoothness(fed):
    """The smoothness constant beta of the paper (``QuadraticFederation.L``, ``LogisticFederation.beta``,
    ``PseudoHuberFederation.L``)."""
    _check_fed(fed)
    beta = getattr(fed, "beta", None)
    return fed.L if beta is None else beta


def _noise_sqrt(fed, xp):
    cov = getattr(fed, "noise_cov", None)
    if cov is None:
        return None
    return noise_sqrt(cov, xp)


def _gradient_mode(fed, gradient, batch_size):
    if not isinstance(gradient, str) or gradient not in ("full", "sgd"):
        raise ProblemError(f"gradient must be 'full' or 'sgd'; got {gradient!r}")
    if gradient == "full":
        return "full"
    if isinstance(fed, QuadraticFederation):
        if fed.noise_cov is None:
            raise ProblemError("gradient='sgd' on a QuadraticFederation needs noise_cov or sigma2 (additive noise)")
        return "noise"
    if batch_size is None or int(batch_size) < 1:
        raise ProblemError(f"gradient='sgd' needs batch_size >= 1; got batch_size={batch_size}")
    return "minibatch"


# --------------------------------------------------------------------------------------
# results
# --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class FedDelAvgRecord:
    """What the lemmas bound, from one batched run (see the module docstring).

    Shapes: ``B`` is the batch shape; ``K`` periods; ``tau + 1`` points per period
    (``t = k tau - Delta + j``, j = 0..tau); ``M`` clients; ``d`` parameters.
    """

    divergence: Any  # (B, K+1, M)   Lemma 3
    local_gap: Any  # (B, K, tau+1, M)   Lemma 4
    global_gap: Any  # (B, K, tau+1)   ||w(t) - c_k(t)||
    lemma5: Any  # (B, K)
    prop1: Any  # (B, K)
    prop1_loss: Any  # (B, K)
    c: Any  # (B, K, tau+1, d)  the auxiliary centralized GD sequences c_k
    c_loss: Any  # (B, K, tau+1)  F(c_k(t))
    c_dist: Any  # (B, K, tau+1)  ||c_k(t) - w*||
    c_grad_norm: Any  # (B, K, tau+1)  ||grad F(c_k(t))||
    L_eff: Any  # (B,)
    delta_eff: Any  # (B, M)
    delta: Any  # (B,)  sum_i rho_i delta_eff_i
    beta: Any  # (B,) or scalar
    omega: Any  # (B,)
    phi: Any  # (B,)
    F_star: Any


@dataclass(frozen=True)
class Trajectory:
    """Every iterate: ``w_clients[..., s, i, :] = w_i(s - Delta)`` and ``w_bar[..., s, :]``, s = 0..T."""

    w_clients: Any
    w_bar: Any


@dataclass(frozen=True)
class FedDelAvgResult:
    """The output of ``feddelavg``.

    ``w_periods[..., k, :] = w(k tau - Delta)`` and ``losses[..., k] = F(w(k tau - Delta))`` for
    k = 0..K (the candidates of eq. (13), at step count ``s = k tau``); ``w_out``, ``k_out`` and
    ``gap = F(w_out) - F(w*)`` follow ``params["output_set"]``; ``clients_final`` are the
    ``w_i(T - Delta)``.  ``trajectory`` and ``record`` are ``None`` unless asked for.
    ``diverged`` marks the configurations whose iterates left the floating-point range (their
    numbers are meaningless; the others are unaffected, and a warning names the cause).
    """

    w_out: Any
    k_out: Any
    gap: Any
    losses: Any
    w_periods: Any
    clients_final: Any
    F_star: Any
    weights: Any
    params: dict
    trajectory: Trajectory | None = None
    record: FedDelAvgRecord | None = None
    diverged: Any = None

    @property
    def iterations(self):
        """Local steps taken by each candidate: ``k tau`` for k = 0..K."""
        return np.arange(self.losses.shape[-1]) * self.params["tau"]

    def gap_for(self, output_set: str = "paper"):
        """``min_{k in set} F(w(k tau - Delta)) - F(w*)`` for another output set (see the module docstring)."""
        lo, hi = _output_range(output_set, self.losses.shape[-1] - 1)
        xp = namespace(self.losses)
        return xp.min(self.losses[..., lo:hi], axis=-1) - self.F_star

    @property
    def G(self):
        """G_k(t) = sum_i rho_i ||w_i(t) - c_k(t)||, (B, K, tau+1) (needs ``record=True``)."""
        if self.record is None:
            raise ProblemError("G needs a run with record=True")
        xp = namespace(self.record.local_gap)
        return xp.sum(self.record.local_gap * self.weights[..., None, None, :], axis=-1)


def _output_range(output_set, K):
    V.choice(output_set, "output_set", OUTPUT_SETS)
    if output_set == "paper":
        return 0, K
    if output_set == "proof":
        return 1, K + 1
    if output_set == "all":
        return 0, K + 1
    raise ProblemError(f"output_set must be one of {OUTPUT_SETS}; got {output_set!r}")


def _norm(x, xp):
    return xp.sqrt(xp.sum(x * x, axis=-1))


# --------------------------------------------------------------------------------------
# the batched simulator
# --------------------------------------------------------------------------------------
def feddelavg(
    fed,
    *,
    eta,
    tau: int,
    Delta,
    alpha,
    K: int,
    w_init=None,
    output_set: str = "paper",
    gradient: str = "full",
    batch_size: int | None = None,
    n_seeds: int | None = None,
    seed: int = 0,
    record: bool = False,
    trajectory: bool = False,
) -> FedDelAvgResult:
    """Run FedDelAvg (eqs. (9)-(13)) on a batch of configurations; see the module docstring.

    Parameters
    ----------
    fed : QuadraticFederation, LogisticFederation or PseudoHuberFederation (convex, beta-smooth and globally
        Lipschitz: Assumption 1 literally).
    eta : learning rate(s) > 0.        tau : period (integer >= 1), common to the batch.
    Delta : delay(s), integers 0 <= Delta <= tau.        alpha : weight(s) in (0, 1].
        ``eta``, ``Delta`` and ``alpha`` are common to every client: arrays of them are batches of
        configurations (every axis a configuration axis, broadcast against the federation's
        batch); ``fltheory.per_client(...)`` is refused (see :func:`check_parameters`).
    K : number of periods (T = K tau local steps).     w_init : (..., d) common start (default 0).
    output_set : ``"paper"`` (eq. (13), k = 0..K-1), ``"proof"`` (k = 1..K) or ``"all"``.
    gradient : ``"full"`` (GD) or ``"sgd"`` (minibatches of ``batch_size`` drawn with replacement
        for a LogisticFederation; additive N(0, Sigma_i) noise for a QuadraticFederation).
    n_seeds, seed : replicates (a leading axis) and the key of the random streams.
    record : also return a ``FedDelAvgRecord`` (the lemma quantities and effective constants).
    trajectory : also return every iterate (memory ``T M d`` per configuration).
    """
    from ...problems import LogisticFederation, PseudoHuberFederation  # noqa: PLC0415

    V.instance(fed, "fed", (QuadraticFederation, LogisticFederation, PseudoHuberFederation))
    xp = fed.xp
    K = V.integer(K, "K", low=1, high=TAU_MAX)
    tau, Delta, alpha, eta = check_parameters(tau=tau, Delta=Delta, alpha=alpha, eta=eta, K=K, xp=xp)
    if K * tau > 10**9:
        raise ProblemError(f"K * tau = {K * tau:,} iterations is over the limit of 10**9 for one run; use fewer "
                           "periods (the exact period map gives long horizons in O(log K) products)")
    V.choice(output_set, "output_set", OUTPUT_SETS)
    record, trajectory = V.flag(record, "record"), V.flag(trajectory, "trajectory")
    seed = V.integer(seed, "seed", low=0, high=2**63 - 1)
    if n_seeds is not None:
        n_seeds = V.integer(n_seeds, "n_seeds", low=1, high=10**9)
    if batch_size is not None:
        batch_size = V.integer(batch_size, "batch_size", low=1, high=10**9)
    _output_range(output_set, K)
    mode = _gradient_mode(fed, gradient, batch_size)
    M, d = fed.M, fed.d
    rho = fed.weights
    cfg = V.batch_shape({"fed": fed.batch_shape, "eta": eta.shape, "alpha": alpha.shape, "Delta": Delta.shape})
    lead = () if n_seeds is None else (int(n_seeds),)
    V.check_size(2 * int(np.prod(lead + cfg, dtype=np.int64)) * M * d * (1 + (K * tau * trajectory)),
                 f"FedDelAvg's state of {int(np.prod(lead + cfg, dtype=np.int64)):,} runs (n_seeds x configurations)"
                 + (" and its trajectory" if trajectory else ""), xp=fed.xp, hint="use fewer n_seeds or configurations at a time")
    if n_seeds is not None and int(n_seeds) < 1:
        raise ProblemError(f"n_seeds must be >= 1; got {n_seeds}")
    shape = lead + cfg
    eta_b = xp.broadcast_to(eta, shape)
    alpha_b = xp.broadcast_to(alpha, shape)
    Delta_b = xp.broadcast_to(Delta, shape)
    x0 = xp.zeros(d) if w_init is None else V.array(w_init, "w_init", xp=xp, shape=(d,))
    W = copy_of(xp.broadcast_to(x0[..., None, :], shape + (M, d)))
    wbar = weighted_sum(rho, W)
    stream = KeyedStream(seed, "feddelavg")
    rep = xp.reshape(xp.arange(lead[0] if lead else 1), (lead[0] if lead else 1,) + (1,) * (len(cfg) + 1))
    if not lead:
        rep = rep[0, ...]
    clients = xp.arange(M)
    Sroot = _noise_sqrt(fed, xp) if mode == "noise" else None
    sizes = getattr(fed, "sizes", None)

    def client_grads(Wc, s):
        if mode == "minibatch":
            u = stream.uniform(config=rep, round=s, client=clients, size=(int(batch_size),))
            idx = xp.astype(xp.floor(u * xp.astype(sizes[:, None], xp.float64)), xp.int64)
            return fed.grad_clients(Wc, idx=idx)
        g = fed.grad_clients(Wc)
        if mode == "noise":
            z = stream.normal(config=rep, round=s, client=clients, size=(d,))
            g = g + matvec(Sroot, z)
        return g

    e, a = eta_b[..., None, None], alpha_b[..., None, None]
    w_periods, losses = [wbar], [fed.loss(wbar)]
    traj_w, traj_b = ([W], [wbar]) if trajectory else (None, None)
    if record:
        w_star = fed.x_star
        rec = {k: [] for k in ("div", "loc", "glob", "c", "closs", "cdist", "cgn")}
        L_eff = xp.zeros(shape)
        delta_eff = xp.zeros(shape + (M,))
        rec["div"].append(_norm(W - wbar[..., None, :], xp))

    def c_point(c):
        gc = fed.grad_clients_at(c)
        gF = weighted_sum(rho, gc)
        return gc, gF

    held = wbar
    with np.errstate(over="ignore", invalid="ignore"):  # divergence is reported below, not warned
        for s in range(1, K * tau + 1):
            j = (s - 1) % tau + 1  # local step j = 1..tau of the current period
            if j == 1:
                held = wbar  # w(k tau - Delta): the global model sent in period k
                if record:
                    c = wbar
                    gc, gF = c_point(c)
                    per = {"loc": [_norm(W - c[..., None, :], xp)], "glob": [xp.zeros(shape)], "c": [c],
                           "closs": [fed.loss(c)], "cdist": [_norm(c - w_star, xp)], "cgn": [_norm(gF, xp)]}
                    delta_eff = xp.maximum(delta_eff, _norm(gc - gF[..., None, :], xp))
            G = client_grads(W, s)
            if record:
                L_eff = xp.maximum(L_eff, xp.max(_norm(G, xp), axis=-1))
            U = W - e * G
            t = s - Delta_b  # the paper's time of this step, per configuration
            sync = (t % tau == 0) & (t >= 0) & (t <= (K - 1) * tau)
            if bool(xp.any(sync)):
                ubar = weighted_sum(rho, U)
                g = xp.where((Delta_b == 0)[..., None], ubar, held)  # pre-sync average when Delta = 0
                a_t = xp.where(sync[..., None, None], a, 0.0)
                W = a_t * g[..., None, :] + (1.0 - a_t) * U
            else:
                W = U
            wbar = weighted_sum(rho, W)
            if trajectory:
                traj_w.append(W)
                traj_b.append(wbar)
            if record:
                c = c - eta_b[..., None] * gF
                gc, gF = c_point(c)
                delta_eff = xp.maximum(delta_eff, _norm(gc - gF[..., None, :], xp))
                per["loc"].append(_norm(W - c[..., None, :], xp))
                per["glob"].append(_norm(wbar - c, xp))
                per["c"].append(c)
                per["closs"].append(fed.loss(c))
                per["cdist"].append(_norm(c - w_star, xp))
                per["cgn"].append(_norm(gF, xp))
            if j == tau:
                w_periods.append(wbar)
                losses.append(fed.loss(wbar))
                if record:
                    rec["div"].append(_norm(W - wbar[..., None, :], xp))
                    ax = len(shape)
                    for key in ("loc", "glob", "c", "closs", "cdist", "cgn"):
                        rec[key].append(xp.stack(per[key], axis=ax))
    with np.errstate(invalid="ignore"):   # a loss past the float range diverged too, even with finite iterates
        finite = xp.all(xp.isfinite(W), axis=(-1, -2)) & xp.all(xp.isfinite(xp.stack(losses, axis=len(shape))), axis=-1)
    diverged = ~finite
    if bool(xp.any(diverged)):
        beta_b = xp.broadcast_to(smoothness(fed), shape)
        local = to_numpy(xp.broadcast_to(eta_b, shape) * beta_b >= 2.0)
        bad = np.argwhere(to_numpy(diverged))
        causes = [("eta >= 2/beta: local gradient steps diverge" if local[tuple(i)] else
                   "the delayed averaging with this (tau, Delta, alpha) is unstable") for i in bad[:3]]
        text = "; ".join(f"configuration {tuple(int(j) for j in i)}: {c}" for i, c in zip(bad[:3], causes))
        if bool(xp.all(diverged)):
            raise ProblemError(f"iterates (or their losses) are not finite in every configuration ({text})")
        import warnings  # noqa: PLC0415

        warnings.warn(f"feddelavg: {len(bad)} configuration(s) diverged and are marked in result.diverged ({text}); "
                      "the others are unaffected", RuntimeWarning, stacklevel=2)
    nb = len(shape)
    w_periods = xp.stack(w_periods, axis=nb)
    losses = xp.stack(losses, axis=nb)
    F_star = fed.loss(fed.x_star)
    lo, hi = _output_range(output_set, K)
    k_out = lo + xp.argmin(losses[..., lo:hi], axis=-1)
    w_out = xp.take_along_axis(w_periods, k_out[..., None, None], axis=nb)[..., 0, :]
    gap = xp.take_along_axis(losses, k_out[..., None], axis=nb)[..., 0] - F_star
    params = dict(eta=eta, tau=tau, Delta=Delta, alpha=alpha, K=K, output_set=output_set, gradient=gradient,
                  batch_size=batch_size, n_seeds=n_seeds, seed=seed, backend=xp.__name__)
    traj = None
    if trajectory:
        traj = Trajectory(xp.stack(traj_w, axis=nb), xp.stack(traj_b, axis=nb))
    if not bool(xp.any(diverged)):
        diverged = xp.zeros(shape, dtype=xp.bool)
    record_out = None
    if record:
        G_end = fed.grad_clients(W)
        gF_end = weighted_sum(rho, G_end)
        L_eff = xp.maximum(L_eff, xp.max(_norm(G_end, xp), axis=-1))
        st = {key: xp.stack(rec[key], axis=nb) for key in rec}
        L_eff = xp.maximum(L_eff, xp.max(st["cgn"], axis=(-1, -2)))
        L_eff = xp.maximum(L_eff, _norm(gF_end, xp))
        glob = st["glob"]
        D_idx = xp.broadcast_to(Delta_b[..., None, None], shape + (K, 1))
        lemma5 = xp.take_along_axis(glob, D_idx, axis=-1)[..., 0]
        beta = smoothness(fed)
        omega = 1.0 / xp.max(xp.sum((w_periods[..., :K, :] - fed.x_star[..., None, :]) ** 2, axis=-1), axis=-1)
        record_out = FedDelAvgRecord(
            divergence=st["div"],
            local_gap=st["loc"],
            global_gap=glob,
            lemma5=lemma5,
            prop1=glob[..., -1],
            prop1_loss=xp.abs(losses[..., 1:] - st["closs"][..., -1]),
            c=st["c"],
            c_loss=st["closs"],
            c_dist=st["cdist"],
            c_grad_norm=st["cgn"],
            L_eff=L_eff,
            delta_eff=delta_eff,
            delta=xp.sum(rho * delta_eff, axis=-1),
            beta=beta,
            omega=omega,
            phi=omega * (1.0 - beta * eta_b / 2.0),
            F_star=F_star,
        )
    return FedDelAvgResult(w_out, k_out, gap, losses, w_periods, W, F_star, rho, params, traj, record_out, diverged)


# --------------------------------------------------------------------------------------
# the plain reference (one configuration, Python loops over time and clients)
# --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LoopResult:
    """``w_clients[s, i] = w_i(s - Delta)``, ``w_bar[s] = w(s - Delta)`` for s = 0..T; output of eq. (13)."""

    w_clients: Any
    w_bar: Any
    w_out: Any
    k_out: int
    losses: Any

    @property
    def diverged(self) -> bool:
        """Whether the models left the floating-point range (the loop runs one configuration)."""
        with np.errstate(invalid="ignore"):
            return not bool(np.all(np.isfinite(np.asarray(self.w_bar))))


def _client_grad(fed, i, w, idx=None):
    if isinstance(fed, QuadraticFederation):
        return fed.H[i] @ (w - fed.x_opt[i])
    return fed.grad_client(i, w, idx)


def feddelavg_loop(
    fed,
    *,
    eta: float,
    tau: int,
    Delta: int,
    alpha: float,
    K: int,
    w_init=None,
    output_set: str = "paper",
    gradient: str = "full",
    batch_size: int | None = None,
    seed: int = 0,
    replicate: int = 0,
) -> LoopResult:
    """Eqs. (9)-(13) line by line, one configuration, a loop over clients.

    Time is the paper's ``t = -Delta .. T - Delta`` (dictionaries keyed by t).  Random draws use
    the same keys as ``feddelavg`` (replicate ``replicate`` of ``seed``), so both agree exactly.
    For tests and benchmarks only.

    >>> import fltheory as flt
    >>> fed = flt.random_quadratic_federation(M=3, d=2, seed=0)
    >>> r = feddelavg_loop(fed, eta=0.1, tau=3, Delta=2, alpha=0.5, K=4)
    >>> r.w_clients.shape
    (13, 3, 2)
    """
    _check_fed(fed)
    if fed.batch_shape:
        raise ProblemError("feddelavg_loop takes one configuration: fed must not be batched")
    K = V.integer(K, "K", low=1, high=10**6)
    eta, alpha, Delta = V.real(eta, "eta"), V.real(alpha, "alpha"), V.integer(Delta, "Delta", low=0)
    tau, _, _, _ = check_parameters(tau=tau, Delta=Delta, alpha=alpha, eta=eta, K=K)
    if K * tau > 10**7:
        raise ProblemError(f"K * tau = {K * tau:,} loop iterations is over the reference loop's limit of 10**7; "
                           "use feddelavg (vectorised) instead")
    Delta, K, alpha, eta = int(Delta), int(K), float(alpha), float(eta)
    if batch_size is not None:
        batch_size = V.integer(batch_size, "batch_size", low=1, high=10**9)
    replicate = V.integer(replicate, "replicate", low=0)
    mode = _gradient_mode(fed, gradient, batch_size)
    M, d = fed.M, fed.d
    rho = [float(r) for r in to_numpy(fed.weights)]
    stream = KeyedStream(seed, "feddelavg")
    Sroot = to_numpy(_noise_sqrt(fed, np)) if mode == "noise" else None
    T = K * tau
    w0 = np.zeros(d) if w_init is None else to_numpy(V.array(w_init, "w_init", xp=None, shape=(d,), ndim=1)).astype(float)
    w = {-Delta: [w0.copy() for _ in range(M)]}
    wbar = {-Delta: w0.copy()}
    sync = set(sync_times(tau=tau, Delta=Delta, K=K))
    for t in range(-Delta + 1, T - Delta + 1):
        s = t + Delta
        u = []
        for i in range(M):
            idx = None
            if mode == "minibatch":
                uu = stream.uniform(config=replicate, round=s, client=i, size=(int(batch_size),))
                idx = np.floor(uu * int(fed.sizes[i])).astype(np.int64)
            g = _client_grad(fed, i, w[t - 1][i], idx)
            if mode == "noise":
                g = g + Sroot[i] @ stream.normal(config=replicate, round=s, client=i, size=(d,))
            u.append(w[t - 1][i] - eta * g)
        if t in sync:
            gl = wbar[t - Delta] if Delta >= 1 else sum(rho[j] * u[j] for j in range(M))
            w[t] = [alpha * gl + (1 - alpha) * u[i] for i in range(M)]
        else:
            w[t] = u
        wbar[t] = sum(rho[i] * w[t][i] for i in range(M))
    lo, hi = _output_range(output_set, K)
    losses = [float(fed.loss(wbar[k * tau - Delta])) for k in range(K + 1)]
    k_out = lo + int(np.argmin(losses[lo:hi]))
    ts = range(-Delta, T - Delta + 1)
    return LoopResult(
        np.array([np.stack(w[t]) for t in ts]), np.array([wbar[t] for t in ts]),
        wbar[k_out * tau - Delta], k_out, np.array(losses),
    )
