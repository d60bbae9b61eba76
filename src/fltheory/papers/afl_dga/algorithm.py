r"""AFL-DGA: anarchic federated learning with delayed gradient averaging (Li, Gong), batched.

Problem class
-------------
Any federation exposing ``grad_clients(W)`` (``W`` of shape ``(..., N, d)``), ``loss(w)``,
``grad(w)``, ``weights`` and optionally ``noise_cov`` (additive gradient noise, Assumption 2):
``QuadraticFederation``, ``PseudoHuberFederation`` (bounded gradients, Assumption 3),
``LinearFederation``, ``SeparableCosineFederation`` (non-convex), ``LogisticFederation``.

Method (timing as data: :class:`fltheory.schedules.Participation`)
------------------------------------------------------------------
Rounds ``r = 0..T-1``; client ``i`` computes in round ``r`` when ``P[i, r] = 1`` and then runs
``K[i, r]`` local SGD steps ``w_i <- w_i - eta g_i(w_i)``; their sum is ``S_i^r`` and it sends the
average ``S_i^r / K[i, r]``.  The server holds every client's newest average (round
``lambda_i(t)``), forms :math:`\bar g^t=\sum_i p_i S_i^{\lambda_i(t)}/K_i^{\lambda_i(t)}` and steps
:math:`w^{t+1}=w^t-\eta\bar g^t`.  The global gradient :math:`\bar g^h` reaches client ``i``
``D[i, h]`` local iterations after its round ``h`` ended (arrival counts ``A = Participation.A``,
in order): it is applied right before the client's local iteration whose running count reaches
``A[i, h]``.  The paper gives three corrections; ``mode`` picks one:

* ``"analysis"`` -- :math:`w_i\leftarrow w_i-\eta\bar g^h+\eta S_i^h` (``S = 0`` for an idle round):
  what the proofs of Lemma 1 and Theorem 1 assume.  Key identity: the client's model is the server
  model at step ``a + 1`` (``a`` = last applied global gradient) minus ``eta`` times its not yet
  corrected local gradients;
* ``"paper_text"`` -- :math:`-\eta K_i^h\bar g^h+\eta S_i^h` for a round it computed in and
  :math:`-\eta\bar g^h` for an idle one (Section 3.2 and Fig. 1): DGA-faithful, reduces to FedAvg
  (``D = 0``) and to DGA (Zhu et al.);
* ``"alg1_literal"`` -- :math:`+\eta S_i^h/K_i^h-\eta\bar g^h` (Algorithm 1's correction line).

Batching: ``eta`` and ``w0`` broadcast with the federation's batch shape into the configuration
shape; ``runs`` puts a leading axis of noise realisations.  Noise is keyed by
``(seed, flat configuration index, round, client)`` and the local iteration, so the baselines of
this module draw the *same* samples.  Hot path: one vectorised update per (round, local
iteration), over clients and configurations at once.

Baselines (each an exact special case, see the tests): :func:`fedavg`, :func:`dga`,
:func:`minibatch_sgd`, :func:`normalized_averaging` (FedNova-type) and :func:`stale_sgd`
(IAG-type stale memory).  :func:`afl_dga_loop` is a literal per-client reference loop.
:func:`round_durations` is the paper's timing model (Section 4.1's remark).

Example
-------
>>> import numpy as np, fltheory as flt
>>> from fltheory.schedules import anarchic_participation
>>> from fltheory.papers.afl_dga import afl_dga
>>> fed = flt.random_quadratic_federation(M=3, d=2, kappa=4, seed=0)
>>> part = anarchic_participation(N=3, T=30, t_d=2, p=0.5, K=2, D=1, seed=0)
>>> res = afl_dga(fed, part, eta=0.05, w0=np.ones(2))
>>> res.w.shape
(31, 2)
>>> bool(np.linalg.norm(res.w[-1] - fed.x_star) < np.linalg.norm(res.w[0] - fed.x_star))
True
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ... import validation as V
from ...backend import KeyedStream, asarray, copy_of, gather, matvec, namespace, to_numpy
from ...problems import LinearFederation, LogisticFederation, PseudoHuberFederation, QuadraticFederation, \
    SeparableCosineFederation, noise_sqrt
from ...schedules import Participation

__all__ = [
    "MODES", "AFLDGAResult", "AFLDGARecord", "AFLDGADiagnostics", "afl_dga", "afl_dga_loop", "diagnostics",
    "fedavg", "dga", "minibatch_sgd", "normalized_averaging", "stale_sgd", "RoundDurations", "round_durations",
    "correction_coefficients",
]

MODES = ("analysis", "paper_text", "alg1_literal")
FEDERATIONS = (QuadraticFederation, PseudoHuberFederation, LinearFederation, SeparableCosineFederation,
               LogisticFederation)
_NOISE_PURPOSE = "afl-dga gradient noise"


# ============================================================================= doors
def _check_fed(fed):
    return V.instance(fed, "fed", FEDERATIONS, "a federation (QuadraticFederation, PseudoHuberFederation, ...)")


def _check_part(part, fed=None):
    part = V.instance(part, "part", Participation)
    if fed is not None:
        if part.N != fed.M:
            raise V.InputError(f"part has N={part.N} clients but fed has M={fed.M}")
        w = to_numpy(fed.weights)
        if not np.allclose(w, np.broadcast_to(part.weights, w.shape), rtol=0, atol=1e-12):
            raise V.InputError("fed.weights and part.weights differ: the server weights p_i must be the federation's")
    return part


def _setup(fed, part, eta, w0, runs, record=False):
    """Validated (fed, part, eta ``(*batch)``, w0 ``(*batch, d)``, batch shape)."""
    fed = _check_fed(fed)
    part = _check_part(part, fed)
    xp = fed.xp
    eta = V.array(eta, "eta", xp=xp, low=0.0, open_low=True)
    w0 = V.array(w0, "w0", xp=xp, min_ndim=1)
    if w0.shape[-1] != fed.d:
        raise V.InputError(f"w0 must have shape (..., d={fed.d}); got {tuple(w0.shape)}")
    cfg = V.batch_shape({"fed": fed.batch_shape, "eta": eta.shape, "w0": w0.shape[:-1]})
    R = None if runs is None else V.integer(runs, "runs", low=1, high=10**6)
    batch = cfg if R is None else (R,) + cfg
    Kmax = int(part.K[part.P].max()) if part.P.any() else 1
    per = 4 + (2 * Kmax if record is True else 0)           # prefix sums, round starts (+ recorded iterates, gradients)
    V.check_size(int(np.prod(batch, dtype=np.int64)) * fed.M * fed.d * (part.T + 1) * per, "the AFL-DGA run", xp=fed.xp,
                 hint="use fewer configurations, runs or rounds" + (", or record=False" if record is True else ""))
    return fed, part, xp, eta, w0, batch


def _unbatched(fed, part, eta, w0, mode, who: str):
    """The doors of the one-configuration quadratic paths (reference loop, exact moments)."""
    fed = V.instance(fed, "fed", QuadraticFederation)
    if fed.batch_shape:
        raise V.InputError(f"{who} takes an unbatched federation (one configuration)")
    part = _check_part(part, fed)
    eta = V.real(eta, "eta", low=0.0, open_low=True)
    w0 = V.array(w0, "w0", xp=np, shape=(fed.d,))
    return fed, part, eta, w0, V.choice(mode, "mode", MODES)


def correction_coefficients(part: Participation, mode: str):
    """``(alpha, beta)`` (N, T) of the correction ``w_i <- w_i - eta alpha gbar^h + eta beta S_i^h``.

    ``analysis``: (1, 1); ``paper_text``: (K, 1) where the client computed, (1, 0) where idle;
    ``alg1_literal``: (1, 1/K) where it computed, (1, 0) where idle (``S_i^h = 0`` when idle).

    >>> from fltheory.schedules import Participation
    >>> a, b = correction_coefficients(Participation([[1, 0]], K=[[3, 3]]), "paper_text")
    >>> a.tolist(), b.tolist()
    ([[3.0, 1.0]], [[1.0, 1.0]])
    """
    part = V.instance(part, "part", Participation)
    mode = V.choice(mode, "mode", MODES)
    P, K = part.P, part.K.astype(float)
    if mode == "analysis":
        return np.ones(P.shape), np.ones(P.shape)
    if mode == "paper_text":
        return np.where(P, K, 1.0), np.ones(P.shape)
    return np.ones(P.shape), np.where(P, 1.0 / np.maximum(K, 1.0), 0.0)


def _noise_root(fed, xp):
    cov = getattr(fed, "noise_cov", None)
    if cov is None:
        return None
    return noise_sqrt(asarray(cov, xp), xp)


def _noise(root, stream, cfg_index, r, N, d, k, xp):
    """Noise of round ``r``, local iteration ``k`` of every client: ``(*batch, N, d)``."""
    z = stream.normal(config=cfg_index[..., None], round=r, client=np.arange(N), size=(k + 1, d))[..., k, :]
    z = xp.asarray(z)
    return matvec(root, z)



# ============================================================================= results
@dataclass(frozen=True)
class AFLDGARecord:
    """Every local iterate of a run (``record=True``); schedule axes (T, N, Kmax) are shared.

    ``iterates[..., r, i, j, :]`` is :math:`w^r_{i,j}` (the model before local step ``j``, NaN where
    there is none), ``grads`` the stochastic gradient taken there, ``count[r, i, j]`` its running
    iteration count, ``a[r, i, j]`` the last applied global gradient (-1 if none) and ``n[r, i, j]``
    the number of local gradients not yet replaced by global ones; ``mask`` marks real entries.
    """

    iterates: Any
    grads: Any
    count: np.ndarray
    a: np.ndarray
    n: np.ndarray
    mask: np.ndarray


@dataclass(frozen=True)
class AFLDGAResult:
    """``w`` ``(*batch, T+1, d)`` server models; ``gbar`` ``(*batch, T, d)`` global gradients; ``clients``
    ``(*batch, N, d)`` the client models at the end (pending corrections not yet applied);
    ``client_start`` ``(*batch, T, N, d)`` each client's model right before its first local iteration
    of round ``r`` (NaN where it is idle); ``record`` (or None); ``mode``, ``eta``."""

    w: Any
    gbar: Any
    clients: Any
    client_start: Any
    record: AFLDGARecord | None
    mode: str
    eta: Any
    part: Participation

    @property
    def T(self) -> int:
        return self.gbar.shape[-2]

    @property
    def diverged(self):
        """``(*batch)`` True for the configurations whose server models left the floating-point range (a step size
        eta too large for them; :func:`afl_dga` refuses a run where every configuration did)."""
        xp = namespace(self.w)
        with np.errstate(invalid="ignore"):
            return ~xp.all(xp.isfinite(self.w), axis=(-1, -2))


# ============================================================================= the simulator
def afl_dga(fed, part: Participation, *, eta, w0, mode: str = "analysis", runs: int | None = None, seed: int = 0,
            record: bool = False) -> AFLDGAResult:
    """Run AFL-DGA on ``fed`` with the schedule ``part`` (see the module docstring).

    Parameters
    ----------
    fed : a federation (its ``weights`` are the server weights and must equal ``part.weights``).
    part : the participation, local iterations ``K`` and global-gradient delays ``D``.
    eta : step size (local, correction and server), scalar or per configuration.
    w0 : initial model (d,) or ``(*batch, d)``.
    mode : ``"analysis"`` (default; the proofs), ``"paper_text"`` or ``"alg1_literal"``.
    runs : number of independent noise realisations (a leading axis); noise is added when the
        federation has ``noise_cov``.
    seed : key of the noise.
    record : keep every local iterate, gradient and the lag counts (:class:`AFLDGARecord`).

    Returns
    -------
    :class:`AFLDGAResult`.
    """
    fed, part, xp, eta, w0, batch = _setup(fed, part, eta, w0, runs, record)
    mode = V.choice(mode, "mode", MODES)
    seed = V.integer(seed, "seed", low=0, high=2**63 - 1)
    record = V.flag(record, "record")
    N, T, d = part.N, part.T, fed.d
    P, K, A, C = part.P, part.K, part.A, part.C
    alpha, beta = correction_coefficients(part, mode)
    alpha, beta = xp.asarray(alpha), xp.asarray(beta)
    p = asarray(fed.weights, xp)
    eta_b = xp.broadcast_to(eta, batch)[..., None]                 # ``(*batch, 1)``
    root = _noise_root(fed, xp)
    stream = KeyedStream(seed, _NOISE_PURPOSE)
    cfg_index = np.arange(int(np.prod(batch, dtype=np.int64))).reshape(batch)

    Cmax = int(C[:, -1].max()) if T else 0
    # applied_after[i, c]: the last global gradient applied before the local iteration with count c
    applied_after = np.stack([np.searchsorted(A[i], np.arange(Cmax + 1), side="right") - 1 for i in range(N)]) \
        if N else np.zeros((0, 1), int)
    Cprev = np.concatenate([np.zeros((N, 1), np.int64), C[:, :-1]], axis=1)

    w = copy_of(xp.broadcast_to(w0, batch + (d,)))
    clients = copy_of(xp.broadcast_to(w[..., None, :], batch + (N, d)))
    Gc = xp.zeros((N, T + 1) + batch + (d,))          # sum_{h' < h} alpha_{i,h'} gbar^{h'}
    Sc = xp.zeros((N, T + 1) + batch + (d,))          # sum_{h' < h} beta_{i,h'} S_i^{h'}
    stored = xp.zeros(batch + (N, d))
    applied = np.full(N, -1)
    count = np.zeros(N, np.int64)
    ws, gbars = [w], []
    start = xp.full(batch + (T, N, d), xp.nan)
    Kmax = int(K[P].max()) if P.any() else 1
    if record:
        its = xp.full(batch + (T, N, Kmax, d), xp.nan)
        grs = xp.full(batch + (T, N, Kmax, d), xp.nan)
        rec_a = np.full((T, N, Kmax), -2)
        rec_n = np.full((T, N, Kmax), -1)
        rec_c = np.full((T, N, Kmax), -1)
    idx = np.arange(N)
    for r in range(T):
        Kr = np.where(P[:, r], K[:, r], 0)
        S = xp.zeros(batch + (N, d))
        for j in range(int(Kr.max(initial=0))):
            act = j < Kr
            new = np.where(act, applied_after[idx, np.minimum(count, Cmax)], applied)
            ch = new > applied
            if ch.any():
                # the standard has no scatter: off NumPy every client moves, by exactly 0 where nothing changed
                ii = idx[ch] if xp is np else idx
                dG = gather(Gc, ii, new[ii] + 1) - gather(Gc, ii, applied[ii] + 1)   # (n_ch, *batch, d)
                dS = gather(Sc, ii, new[ii] + 1) - gather(Sc, ii, applied[ii] + 1)
                delta = xp.moveaxis(-dG + dS, 0, -2)                        # ``(*batch, n_ch, d)``
                if xp is np:
                    clients[..., ii, :] = clients[..., ii, :] + eta_b[..., None] * delta
                else:
                    clients = clients + eta_b[..., None] * delta
                applied = new
            if j == 0:
                start[..., r, :, :] = xp.where(xp.asarray(act)[:, None], clients, xp.nan)
            g = fed.grad_clients(clients)
            if root is not None:
                g = g + _noise(root, stream, cfg_index, r, N, d, j, xp)
            m = xp.asarray(act, dtype=g.dtype)[:, None]
            if record:
                its[..., r, :, j, :] = xp.where(xp.asarray(act)[:, None], clients, xp.nan)
                grs[..., r, :, j, :] = xp.where(xp.asarray(act)[:, None], g, xp.nan)
                rec_a[r, act, j] = applied[act]
                Ca = np.where(applied >= 0, C[idx, np.maximum(applied, 0)], 0)
                rec_n[r, act, j] = (count - Ca)[act]
                rec_c[r, act, j] = count[act]
            clients = clients - eta_b[..., None] * g * m
            S = S + g * m
            count = count + act
        part_r = xp.asarray(P[:, r])[:, None]
        stored = xp.where(part_r, S / xp.asarray(np.maximum(K[:, r], 1), dtype=S.dtype)[:, None], stored)
        gb = xp.sum(p[..., :, None] * stored, axis=-2)
        w = w - eta_b * gb
        ws.append(w)
        gbars.append(gb)
        Gc[:, r + 1, ...] = Gc[:, r, ...] + xp.reshape(alpha[:, r], (N,) + (1,) * (len(batch) + 1)) * gb[None, ...]
        Sc[:, r + 1, ...] = Sc[:, r, ...] + xp.reshape(beta[:, r], (N,) + (1,) * (len(batch) + 1)) * xp.moveaxis(S, -2, 0)
    assert np.array_equal(count, C[:, -1] if T else count)
    rec = None
    if record:
        rec = AFLDGARecord(its, grs, rec_c, rec_a, rec_n, rec_a > -2)
    W = xp.stack(ws, axis=len(batch))
    Gb = xp.stack(gbars, axis=len(batch)) if gbars else xp.zeros(batch + (0, d))
    return AFLDGAResult(_diverging(W, eta, "afl_dga", xp), Gb, clients, start, rec, mode, eta, part)


# ============================================================================= diagnostics
@dataclass(frozen=True)
class AFLDGADiagnostics:
    r"""What the proofs bound, at every server step ``t`` (``analysis`` mode; Sections 4 and App. A-B).

    Per step ``(*batch, T)``: ``f`` (:math:`f(w^t)`, T+1), ``grad2`` (:math:`\|\nabla f(w^t)\|^2`, T+1),
    ``gbar2`` (:math:`\|\bar g^t\|^2`), ``m`` (the mean part :math:`m^t`), ``e2`` (:math:`\|e^t\|^2`,
    ``e = gbar - m``), ``bias2`` (:math:`\|\nabla f(w^t)-m^t\|^2`), ``Xi``
    (:math:`\sum_ip_i\frac1{K_i}\sum_j\|w^t-w^{\lambda}_{i,j}\|^2`).
    Per (t, i, j) with ``lam = lambda_i(t)`` ``(*batch, T, N, Kmax)``: ``dist2``
    (:math:`\|w^t-w^{\lambda}_{i,j}\|^2`), ``since_anchor`` (:math:`\sum_{h=a+1}^{t-1}\|\bar g^h\|^2`),
    ``local2`` (:math:`\sum_{u\in U}\|g_u\|^2` over the ``n`` uncorrected local gradients),
    ``printed_sum`` (:math:`\sum_{h=t-2\tau}^{t-\tau}\|\bar g^h\|^2`, the printed Lemma 1's range);
    and the integer arrays (T, N, Kmax) ``rho = t - 1 - a``, ``n``, ``tau``, ``S`` (the delay sum
    ``tau + tau' - 1``), ``K_lam`` and ``mask``.
    """

    f: Any
    grad2: Any
    gbar2: Any
    m: Any
    e2: Any
    bias2: Any
    Xi: Any
    dist2: Any
    since_anchor: Any
    local2: Any
    printed_sum: Any
    rho: np.ndarray
    n: np.ndarray
    tau: np.ndarray
    S: np.ndarray
    K_lam: np.ndarray
    mask: np.ndarray

    def average_grad2(self):
        """The left-hand side of Theorem 1: :math:`\\frac1T\\sum_{t<T}\\|\\nabla f(w^t)\\|^2` ``(*batch)``."""
        return self.grad2[..., :-1].mean(axis=-1)


def diagnostics(fed, res: AFLDGAResult) -> AFLDGADiagnostics:
    """The quantities of the proofs (:class:`AFLDGADiagnostics`) from a recorded run.

    >>> import numpy as np, fltheory as flt
    >>> from fltheory.schedules import synchronous_participation
    >>> from fltheory.papers.afl_dga import afl_dga, diagnostics
    >>> fed = flt.problems.LinearFederation(c=[[1.0], [-1.0]])
    >>> res = afl_dga(fed, synchronous_participation(N=2, T=4, K=1, D=2), eta=0.1, w0=np.zeros(1), record=True)
    >>> dg = diagnostics(fed, res)
    >>> int(dg.rho[3, 0, 0]), int(dg.n[3, 0, 0])        # at step 3 client 0 has applied gbar^0 only: lags 2 and 2
    (2, 2)
    """
    fed = _check_fed(fed)
    res = V.instance(res, "res", AFLDGAResult)
    if res.record is None:
        raise V.InputError("res must come from afl_dga(..., record=True)")
    part = _check_part(res.part, fed)
    if part.T == 0:
        raise V.InputError("res has no rounds (T = 0): nothing to diagnose")
    xp = fed.xp
    rec = res.record
    N, T = part.N, part.T
    Kmax = rec.mask.shape[-1]
    lam, tau, S = part.lam, part.tau, part.delay_sum           # (N, T)
    t_ax = np.arange(T)
    # stored iterates of round lam_i(t): ``(*batch, T, N, Kmax, d)``
    its = rec.iterates[..., lam.T, np.arange(N)[None, :], :, :]
    grs = rec.grads[..., lam.T, np.arange(N)[None, :], :, :]
    mask = rec.mask[lam.T, np.arange(N)[None, :], :]            # (T, N, Kmax)
    a = rec.a[lam.T, np.arange(N)[None, :], :]
    n = rec.n[lam.T, np.arange(N)[None, :], :]
    cnt = rec.count[lam.T, np.arange(N)[None, :], :]
    rho = np.where(mask, t_ax[:, None, None] - 1 - a, 0)
    wt = res.w[..., :T, :]                                       # ``(*batch, T, d)``
    diff = wt[..., :, None, None, :] - its
    dist2 = xp.where(xp.asarray(mask)[..., None], diff, 0.0)
    dist2 = (dist2 * dist2).sum(axis=-1)
    K_lam = np.take_along_axis(part.K, lam, axis=1).T            # (T, N)
    p = asarray(fed.weights, xp)
    pK = p[..., None, :] / xp.asarray(K_lam, dtype=dist2.dtype)  # ``(*batch?, T, N)``
    Xi = (pK * dist2.sum(axis=-1)).sum(axis=-1)
    # true gradients at the stored iterates: m^t
    safe = xp.where(xp.asarray(mask)[..., None], its, 0.0)
    tg = fed.grad_clients(xp.swapaxes(safe, -2, -3))            # ``(*batch, T, Kmax, N, d)``
    tg = xp.swapaxes(tg, -2, -3) * xp.asarray(mask, dtype=dist2.dtype)[..., None]
    m = (pK[..., None] * tg.sum(axis=-2)).sum(axis=-2)           # ``(*batch, T, d)``
    gbar = res.gbar
    e = gbar - m
    g_true = fed.grad(res.w)                                     # ``(*batch, T+1, d)``
    grad2 = (g_true * g_true).sum(-1)
    f = fed.loss(res.w)
    bias = g_true[..., :T, :] - m
    gbar2 = (gbar * gbar).sum(-1)
    # prefix sums of ||gbar^h||^2: PG[h] = sum_{h' < h}
    PG = xp.concatenate([xp.zeros(gbar2.shape[:-1] + (1,)), xp.cumsum(gbar2, axis=-1)], axis=-1)
    lo = np.where(mask, a + 1, 0)
    hi = np.broadcast_to(t_ax[:, None, None], mask.shape)
    since = xp.where(xp.asarray(mask & (hi > lo)), PG[..., hi] - PG[..., lo], 0.0)
    plo = np.clip(t_ax[:, None] - 2 * tau.T, 0, None)            # printed range [t - 2 tau, t - tau], h >= 0
    phi = np.clip(t_ax[:, None] - tau.T + 1, 0, None)
    printed = PG[..., phi] - PG[..., plo]                          # ``(*batch, T, N)``
    printed = xp.broadcast_to(printed[..., None], dist2.shape)
    # local gradient norms by running count: LG[i, c] = sum_{c' < c} ||g_{i, c'}||^2
    g2 = xp.where(xp.asarray(rec.mask)[..., None], rec.grads, 0.0)
    g2 = (g2 * g2).sum(-1)                                       # ``(*batch, T, N, Kmax)``
    Cmax = int(part.C[:, -1].max())
    flat = xp.zeros(g2.shape[:-3] + (N, Cmax + 1))
    rr, ii, jj = np.nonzero(rec.mask)
    flat[..., ii, rec.count[rr, ii, jj] + 1] = g2[..., rr, ii, jj]
    LG = xp.cumsum(flat, axis=-1)                                # LG[..., i, c] = sum of the first c gradients
    ci = np.broadcast_to(np.arange(N)[None, :, None], mask.shape)
    cc = np.where(mask, cnt, 0)
    local2 = xp.where(xp.asarray(mask), LG[..., ci, cc] - LG[..., ci, np.maximum(cc - np.where(mask, n, 0), 0)], 0.0)
    tau3 = np.broadcast_to(tau.T[..., None], mask.shape)
    S3 = np.broadcast_to(S.T[..., None], mask.shape)
    K3 = np.broadcast_to(K_lam[..., None], mask.shape)
    return AFLDGADiagnostics(f, grad2, gbar2, m, (e * e).sum(-1), (bias * bias).sum(-1), Xi, dist2, since, local2,
                             printed, rho, np.where(mask, n, 0), tau3, S3, K3, mask)


# ============================================================================= reference loop
def afl_dga_loop(fed: QuadraticFederation, part: Participation, *, eta: float, w0, mode: str = "analysis",
                 rng=None, runs: int | None = None, log: list | None = None, check_identity: bool = False):
    """AFL-DGA written literally: per client, per local step, with the ``while`` loop over pending
    corrections and a copy of each stored gradient (quadratic clients; a reference for tests).

    ``rng`` (a ``numpy.random.Generator``) adds noise with covariance ``fed.noise_cov``; ``runs``
    vectorises over that many realisations.  ``log`` receives one ``(client, h, round, j)`` per
    applied correction; ``check_identity`` (``analysis`` mode) asserts the key identity
    :math:`w_i=w^{a+1}-\\eta\\sum_{u\\in U}g_u` before and after every local step and raises
    ``AssertionError`` where it fails.  Returns the server trajectory (T+1, d) or (runs, T+1, d).

    >>> import numpy as np, fltheory as flt
    >>> from fltheory.schedules import Participation
    >>> fed = flt.random_quadratic_federation(M=2, d=2, seed=1)
    >>> part = Participation([[1, 0, 1], [1, 1, 1]], K=2, D=1, weights=fed.weights)
    >>> afl_dga_loop(fed, part, eta=0.1, w0=np.zeros(2)).shape
    (4, 2)
    """
    fed, part, eta, w0, mode = _unbatched(fed, part, eta, w0, mode, "afl_dga_loop")
    check_identity = V.flag(check_identity, "check_identity")
    if log is not None:
        V.instance(log, "log", list)
    if rng is not None:
        V.instance(rng, "rng", np.random.Generator)
    R = 1 if runs is None else V.integer(runs, "runs", low=1, high=10**6)
    alpha, beta = correction_coefficients(part, mode)
    H, xo = np.asarray(fed.H, float), np.asarray(fed.x_opt, float)
    p = np.asarray(fed.weights, float)
    P, K, A, C = part.P, part.K, part.A, part.C
    N, T = P.shape
    d = fed.d
    root = _noise_root(fed, np) if (rng is not None and fed.noise_cov is not None) else None
    server = [np.broadcast_to(w0, (R, d)).copy()]
    gbar: list = []
    w = [server[0].copy() for _ in range(N)]
    count, applied = [0] * N, [-1] * N
    stored: list = [None] * N
    S: list = [[None] * T for _ in range(N)]

    def identity(i, r, partial):
        grads = partial.copy()
        for rr in range(applied[i] + 1, r):
            if S[i][rr] is not None:
                grads += S[i][rr]
        err = np.abs(w[i] - (server[applied[i] + 1] - eta * grads)).max()
        if err > 1e-12 * (1 + np.abs(w[i]).max()):
            raise AssertionError(f"identity fails: client {i}, round {r}, error {err:.3g}")

    for r in range(T):
        for i in range(N):
            if not P[i, r]:
                continue
            s = np.zeros((R, d))
            for j in range(int(K[i, r])):
                while applied[i] + 1 <= r - 1 and A[i, applied[i] + 1] <= count[i]:
                    h = applied[i] + 1
                    w[i] = w[i] - eta * alpha[i, h] * gbar[h]
                    if S[i][h] is not None:
                        w[i] = w[i] + eta * beta[i, h] * S[i][h]
                    applied[i] = h
                    if log is not None:
                        log.append((i, h, r, j))
                if check_identity and mode == "analysis":
                    identity(i, r, s)
                g = (w[i] - xo[i]) @ H[i].T
                if root is not None:
                    g = g + rng.standard_normal((R, d)) @ root[i].T
                w[i] = w[i] - eta * g
                count[i] += 1
                s = s + g
                if check_identity and mode == "analysis":
                    identity(i, r, s)
            S[i][r] = s
            stored[i] = s / K[i, r]
            assert count[i] == C[i, r]
        gbar.append(sum(p[i] * stored[i] for i in range(N)))
        server.append(server[-1] - eta * gbar[-1])
    traj = _diverging(np.stack(server, axis=1), eta, "afl_dga_loop", np)
    return traj[0] if runs is None else traj


# ============================================================================= baselines
def _diverging(traj, eta, what, xp):
    """A baseline's trajectory ``(*batch, T+1, d)``, refused when it left the floating-point range in every run (a bare
    array has no ``diverged`` field to say so; an error naming eta, as the exact moments do), with a warning when
    only some runs did."""
    with np.errstate(invalid="ignore"):
        bad = ~xp.all(xp.isfinite(traj), axis=(-1, -2))
    if bool(xp.any(bad)):
        shown = f"{float(eta):g}" if getattr(eta, "ndim", 0) == 0 else V.shown(eta)
        text = f"{what}: the iterates left the floating-point range: the step size eta={shown} makes it diverge"
        if bool(xp.all(bad)):
            raise V.InputError(text + "; use a smaller eta")
        import warnings  # noqa: PLC0415

        warnings.warn(f"{text} in {int(xp.sum(xp.astype(bad, xp.int64)))} run(s)", RuntimeWarning, stacklevel=3)
    return traj


def _baseline_setup(fed, eta, w0, runs, T):
    fed = _check_fed(fed)
    T = V.integer(T, "T", low=1, high=10**6)
    xp = fed.xp
    eta = V.array(eta, "eta", xp=xp, low=0.0, open_low=True)
    w0 = V.array(w0, "w0", xp=xp, min_ndim=1)
    if w0.shape[-1] != fed.d:
        raise V.InputError(f"w0 must have shape (..., d={fed.d}); got {tuple(w0.shape)}")
    cfg = np.broadcast_shapes(tuple(fed.batch_shape), eta.shape, w0.shape[:-1])
    R = None if runs is None else V.integer(runs, "runs", low=1, high=10**6)
    batch = cfg if R is None else (R,) + cfg
    V.check_size(int(np.prod(batch, dtype=np.int64)) * fed.M * fed.d * T, "the baseline run", xp=fed.xp)
    return fed, xp, T, xp.broadcast_to(eta, batch)[..., None], copy_of(xp.broadcast_to(w0, batch + (fed.d,))), batch


def _grad(fed, X, root, stream, cfg_index, r, j, xp):
    g = fed.grad_clients(X)
    if root is not None:
        g = g + _noise(root, stream, cfg_index, r, fed.M, fed.d, j, xp)
    return g


def fedavg(fed, *, eta, K: int, T: int, w0, runs: int | None = None, seed: int = 0):
    """FedAvg (McMahan et al.): every round each client runs ``K`` local SGD steps from the server
    model ``x^r`` and the server averages, :math:`x^{r+1}=\\sum_ip_ix^r_{i,K}`.  Returns
    ``x^0..x^T`` ``(*batch, T+1, d)``.  Noise: the same keyed samples as :func:`afl_dga`.

    >>> import numpy as np, fltheory as flt
    >>> fed = flt.random_quadratic_federation(M=3, d=2, seed=0)
    >>> fedavg(fed, eta=0.05, K=3, T=5, w0=np.zeros(2)).shape
    (6, 2)
    """
    return _local_average(fed, eta=eta, K=K, T=T, w0=w0, runs=runs, seed=seed, normalized=False)[0]


def normalized_averaging(fed, *, eta, K, T: int, w0, runs: int | None = None, seed: int = 0):
    """Normalised local averaging (FedNova-type, server and local learning rate ``eta``):
    :math:`w^{t+1}=w^t-\\eta\\sum_ip_i\\frac1{K_i^t}\\sum_jg_{i,j}` with local SGD from ``w^t``.
    ``K`` is an int or (N, T).  Returns ``(*batch, T+1, d)``.

    >>> import numpy as np, fltheory as flt
    >>> fed = flt.random_quadratic_federation(M=2, d=2, seed=0)
    >>> normalized_averaging(fed, eta=0.05, K=[[1, 2, 3], [3, 2, 1]], T=3, w0=np.zeros(2)).shape
    (4, 2)
    """
    return _local_average(fed, eta=eta, K=K, T=T, w0=w0, runs=runs, seed=seed, normalized=True)[0]


def _local_average(fed, *, eta, K, T, w0, runs, seed, normalized):
    fed, xp, T, eta_b, x, batch = _baseline_setup(fed, eta, w0, runs, T)
    N, d = fed.M, fed.d
    if np.ndim(K) == 0:
        Kr = np.full((N, T), V.integer(K, "K", low=1, high=10**6))
    else:
        Kr = V.array(K, "K", xp=np, kind="integer", shape=(N, T), low=1).astype(np.int64)
    seed = V.integer(seed, "seed", low=0, high=2**63 - 1)
    root, stream = _noise_root(fed, xp), KeyedStream(seed, _NOISE_PURPOSE)
    cfg_index = np.arange(int(np.prod(batch, dtype=np.int64))).reshape(batch)
    p = asarray(fed.weights, xp)
    xs = [x]
    for r in range(T):
        loc = copy_of(xp.broadcast_to(x[..., None, :], batch + (N, d)))
        S = xp.zeros(batch + (N, d))
        for j in range(int(Kr[:, r].max())):
            act = xp.asarray(j < Kr[:, r], dtype=loc.dtype)[:, None]
            g = _grad(fed, loc, root, stream, cfg_index, r, j, xp)
            loc = loc - eta_b[..., None] * g * act
            S = S + g * act
        if normalized:
            x = x - eta_b * xp.sum(p[..., None] * S / xp.asarray(Kr[:, r], dtype=S.dtype)[:, None], axis=-2)
        else:
            x = xp.sum(p[..., None] * loc, axis=-2)
        xs.append(x)
    return _diverging(xp.stack(xs, axis=len(batch)), eta, "the baseline", xp), batch


def minibatch_sgd(fed, *, eta, T: int, w0, runs: int | None = None, seed: int = 0):
    """Parallel mini-batch SGD :math:`w^{t+1}=w^t-\\eta\\sum_ip_ig_i(w^t)` ``(*batch, T+1, d)``.

    >>> import numpy as np, fltheory as flt
    >>> fed = flt.random_quadratic_federation(M=3, d=2, seed=0)
    >>> minibatch_sgd(fed, eta=0.05, T=4, w0=np.zeros(2)).shape
    (5, 2)
    """
    return _local_average(fed, eta=eta, K=1, T=T, w0=w0, runs=runs, seed=seed, normalized=True)[0]


def stale_sgd(fed, part: Participation, *, eta, w0, runs: int | None = None, seed: int = 0):
    """IAG-type stale-memory SGD: :math:`w^{t+1}=w^t-\\eta\\sum_ip_ig_i(w^{\\lambda_i(t)})` -- the
    server keeps each client's newest gradient, computed at the server model of its round.

    >>> import numpy as np, fltheory as flt
    >>> from fltheory.schedules import Participation
    >>> fed = flt.random_quadratic_federation(M=2, d=2, seed=0)
    >>> stale_sgd(fed, Participation([[1, 0, 0, 1], [1, 1, 1, 1]]), eta=0.1, w0=np.zeros(2)).shape
    (5, 2)
    """
    fed = _check_fed(fed)
    part = _check_part(part, fed)
    fed, xp, T, eta_b, x, batch = _baseline_setup(fed, eta, w0, runs, part.T)
    seed = V.integer(seed, "seed", low=0, high=2**63 - 1)
    root, stream = _noise_root(fed, xp), KeyedStream(seed, _NOISE_PURPOSE)
    cfg_index = np.arange(int(np.prod(batch, dtype=np.int64))).reshape(batch)
    p = asarray(fed.weights, xp)
    N, d = fed.M, fed.d
    stored = xp.zeros(batch + (N, d))
    xs = [x]
    for t in range(T):
        g = _grad(fed, xp.broadcast_to(x[..., None, :], batch + (N, d)), root, stream, cfg_index, t, 0, xp)
        stored = xp.where(xp.asarray(part.P[:, t])[:, None], g, stored)
        x = x - eta_b * xp.sum(p[..., None] * stored, axis=-2)
        xs.append(x)
    return _diverging(xp.stack(xs, axis=len(batch)), eta, "stale_sgd", xp)


def dga(fed, *, eta, K: int, D: int, T: int, w0, runs: int | None = None, seed: int = 0):
    """Delayed gradient averaging (Zhu et al.), synchronous and homogeneous, written on its own.

    Every client runs local SGD without pause; its local iterations are grouped in rounds of ``K``.
    The average :math:`\\bar g^h=\\sum_ip_iS_i^h/K` of round ``h`` arrives ``D`` iterations after the
    round ended, i.e. right before the client's iteration number ``(h+1)K + D`` (0-based), and then
    replaces the round's local sum: :math:`w_i\\leftarrow w_i-\\eta K\\bar g^h+\\eta S_i^h`.
    Returns the client models at the start of each round ``(*batch, T, N, d)`` (after the corrections
    due there) and the final client models ``(*batch, N, d)``.

    >>> import numpy as np, fltheory as flt
    >>> fed = flt.random_quadratic_federation(M=2, d=2, seed=0)
    >>> starts, final = dga(fed, eta=0.05, K=2, D=3, T=4, w0=np.zeros(2))
    >>> starts.shape, final.shape
    ((4, 2, 2), (2, 2))
    """
    fed, xp, T, eta_b, x, batch = _baseline_setup(fed, eta, w0, runs, T)
    K = V.integer(K, "K", low=1, high=10**6)
    D = V.integer(D, "D", low=0, high=10**9)
    seed = V.integer(seed, "seed", low=0, high=2**63 - 1)
    root, stream = _noise_root(fed, xp), KeyedStream(seed, _NOISE_PURPOSE)
    cfg_index = np.arange(int(np.prod(batch, dtype=np.int64))).reshape(batch)
    p = asarray(fed.weights, xp)
    N, d = fed.M, fed.d
    loc = copy_of(xp.broadcast_to(x[..., None, :], batch + (N, d)))
    sums, gbars, starts = [], [], []
    for r in range(T):
        S = xp.zeros(batch + (N, d))
        for j in range(K):
            c = r * K + j
            if c - D >= K and (c - D) % K == 0:
                h = (c - D) // K - 1
                loc = loc - eta_b[..., None] * (K * gbars[h][..., None, :] - sums[h])
            if j == 0:
                starts.append(loc)
            g = _grad(fed, loc, root, stream, cfg_index, r, j, xp)
            loc = loc - eta_b[..., None] * g
            S = S + g
        sums.append(S)
        gbars.append(xp.sum(p[..., None] * S / K, axis=-2))
    return xp.stack(starts, axis=len(batch)), loc


# ============================================================================= timing model
@dataclass(frozen=True)
class RoundDurations:
    """Wall-clock of a schedule (Section 4.1's remark; ``d`` = time of one local iteration).

    ``sync[r] = d max_i (K + D)`` over the participants of round ``r`` (communication does not
    overlap computation), ``dga[r] = d max_i K`` (it does); ``wall_sync``, ``wall_dga`` (T+1) the
    cumulative times (``wall_dga`` adds the last round's ``d max_i D`` when ``tail``);
    ``speedup = wall_sync[-1] / wall_dga[-1]``; ``per_client_fold`` (N, T) the paper's
    ``(K + D) / K`` (NaN where idle) -- the speedup equals it only for homogeneous ``K`` and ``D``.
    """

    sync: np.ndarray
    dga: np.ndarray
    wall_sync: np.ndarray
    wall_dga: np.ndarray
    speedup: float
    per_client_fold: np.ndarray


def round_durations(part: Participation, *, d: float = 1.0, tail: bool = False) -> RoundDurations:
    """The timing model of AFL-DGA: round durations with and without overlapped communication.

    >>> from fltheory.schedules import synchronous_participation
    >>> round_durations(synchronous_participation(N=5, T=10, K=10, D=20)).speedup      # Table 1: K=10, D=20
    3.0
    """
    part = V.instance(part, "part", Participation)
    d = V.real(d, "d", low=0.0, open_low=True)
    tail = V.flag(tail, "tail")
    P, K, D = part.P, part.K, part.D
    sync = d * np.where(P, K + D, 0).max(axis=0, initial=0).astype(float)
    dg = d * np.where(P, K, 0).max(axis=0, initial=0).astype(float)
    ws = np.concatenate([[0.0], np.cumsum(sync)])
    wd = np.concatenate([[0.0], np.cumsum(dg)])
    if tail and part.T:
        wd[-1] += d * float(np.where(P[:, -1], D[:, -1], 0).max(initial=0))
    speed = float(ws[-1] / wd[-1]) if wd[-1] > 0 else float("nan")
    fold = np.where(P, (K + D) / np.maximum(K, 1), np.nan)
    return RoundDurations(sync, dg, ws, wd, speed, fold)
