"""The register file of the exact engine: exact means and second moments under affine assignments.

:class:`RegisterMoments` holds the exact means and second moments ``E[y_a y_b^T]`` of a set of
``d``-dimensional registers (server models of the last ``lambda + 1`` steps, and client states
or stored gradients where a paper keeps them).  One affine assignment
``y_dst <- sum_j A_j y_{src_j} + b + nu`` with fresh independent noise ``nu`` touches one block row
and column: it costs ``O(k * n * d^3)`` for ``k`` sources among ``n`` registers, not
``O((n d)^3)``.  Random aggregation coefficients drawn i.i.d. each step, independently of the
state (:class:`RandomParticipation`: ``E[c] = u``, ``E[c c^T] = kappa u u^T + diag(v)``), with
i.i.d. delays, are exact too (:meth:`RegisterMoments.assign_random`, the closed form of
``E[A Sigma A^T]``).

Nothing here knows about schedules or clients' local runs: the drivers that write these registers
step by step -- :func:`fltheory.delayed.schedule_moments`,
:func:`fltheory.delayed.random_participation_moments` -- and the papers' exact dynamics that keep
client states as registers live elsewhere.  :mod:`fltheory.delayed` re-exports both names
(``fltheory.delayed.RegisterMoments`` is this module's :class:`RegisterMoments`).

Example
-------
The second moments of DeFedAvg-nIID's coefficients (``n = 2`` draws with replacement from
``N = 3`` clients, each update weighted by its multiplicity over ``n``), against all nine equally
likely draws:

>>> import itertools, numpy as np
>>> rp = RandomParticipation.with_replacement(N=3, n=2)
>>> cs = [np.bincount(draw, minlength=3) / 2 for draw in itertools.product(range(3), repeat=2)]
>>> second = np.mean([np.outer(c, c) for c in cs], axis=0)                 # E[c c^T]
>>> bool(np.allclose(second, rp.kappa * np.outer(rp.u, rp.u) + np.diag(rp.v)))
True
>>> rm = RegisterMoments(2, 1, mean=np.array([1.0, 0.0]))                   # y0 = 1, y1 = 0
>>> rm.assign([1], [[0]], np.array([[[[-1.0]]]]), noise=np.array([[[0.25]]]))   # y1 <- -y0 + nu
>>> rm.register_mean(1).tolist(), rm.block(1, 1).tolist()                # E y1, E y1^2 = 1 + 0.25
([-1.0], [[1.25]])
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .backend import asarray, copy_of, mT, matvec, namespace, weighted_sum
from . import validation as V
from .schedules import ScheduleError

__all__ = ["RegisterMoments", "RandomParticipation"]


class RegisterMoments:
    """Exact means and second moments of ``n`` registers ``y_0 .. y_{n-1}`` in ``R^d``.

    ``mean`` is ``(*batch, n*d)`` (``(*batch, n, d)`` is accepted) and ``second`` is ``(*batch, n*d, n*d)`` with
    ``second[a*d:(a+1)*d, b*d:(b+1)*d] = E[y_a y_b^T]`` (raw moments: choose the coordinates so
    that the quantities you need are small, e.g. ``y = x - x*``).

    :meth:`assign` performs simultaneous affine assignments with fresh independent noise; only
    the block rows and columns of the written registers change.

    Example
    -------
    >>> import numpy as np
    >>> rm = RegisterMoments(2, 1, mean=np.array([1.0, 0.0]))      # y0 = 1, y1 = 0
    >>> rm.assign([1], [[0]], np.array([[[[2.0]]]]), noise=np.array([[[0.5]]]))   # y1 <- 2 y0 + nu
    >>> rm.mean.tolist(), rm.block(1, 1).tolist(), rm.block(0, 1).tolist()
    ([1.0, 2.0], [[4.5]], [[2.0]])
    """

    def __init__(self, n: int, d: int, *, batch_shape: tuple = (), mean=None, second=None, xp=None):
        xp = xp or namespace(mean, second)
        self.n, self.d, self.xp = int(n), int(d), xp
        nd = self.n * self.d
        m = xp.zeros(tuple(batch_shape) + (nd,)) if mean is None else asarray(mean, xp)
        if m.ndim >= 2 and m.shape[-1] != nd and m.shape[-2:] == (self.n, self.d):
            m = xp.reshape(m, m.shape[:-2] + (nd,))       # (..., n, d) -> (..., n*d)
        if m.shape[-1] != nd:
            raise ScheduleError(f"mean must have n*d = {nd} entries on its last axis, got {m.shape}")
        if second is None:
            second = m[..., :, None] * m[..., None, :]
        S = asarray(second, xp)
        batch = np.broadcast_shapes(m.shape[:-1], S.shape[:-2])
        self.mean = copy_of(xp.broadcast_to(m, batch + (nd,)))
        self.second = copy_of(xp.broadcast_to(S, batch + (nd, nd)))

    @property
    def batch_shape(self) -> tuple:
        return self.mean.shape[:-1]

    def _rows(self, regs):
        regs = np.asarray(regs, dtype=np.int64)
        return (regs[..., None] * self.d + np.arange(self.d)).reshape(regs.shape[:-1] + (-1,))

    def block(self, a: int, b: int):
        """``E[y_a y_b^T]`` ``(*batch, d, d)``."""
        d = self.d
        return self.second[..., a * d:(a + 1) * d, b * d:(b + 1) * d]

    def register_mean(self, a: int):
        return self.mean[..., a * self.d:(a + 1) * self.d]

    def assign(self, dst: Sequence[int], src, mats, offset=None, noise=None, extra_second=None):
        """Simultaneously ``y_{dst[w]} <- sum_j mats[..., w, j] y_{src[w][j]} + offset[..., w] + nu_w``.

        ``src`` is (W, k) register indices (repeat a source with a zero matrix to pad), ``mats`` is
        ``(*batch, W, k, d, d)``, ``offset`` ``(*batch, W, d)``, ``noise`` ``(*batch, W, d, d)`` the
        covariances of independent zero-mean noises.  Sources are read before any write.
        ``extra_second`` ``(*batch, W*d, W*d)`` is added to the new registers' second-moment block
        (a zero-mean term uncorrelated with every old register, see :meth:`assign_random`).
        """
        xp, d = self.xp, self.d
        dst = np.asarray(dst, dtype=np.int64).reshape(-1)
        src = np.asarray(src, dtype=np.int64).reshape(dst.size, -1)
        W, k = src.shape
        A = asarray(mats, xp)
        n4 = A.ndim
        A2 = xp.reshape(xp.permute_dims(A, tuple(range(n4 - 4)) + (n4 - 4, n4 - 2, n4 - 3, n4 - 1)),
                        A.shape[:-4] + (W, d, k * d))                    # (.., W, i, (k j))
        rows = self._rows(src)                                           # (W, k*d)

        def pick(X, axis):   # X's rows (axis -2) or columns (axis -1) of the source registers, (.., W, k*d) there
            if xp is np:     # NumPy's own indexing (its layout, hence its einsum's summation order)
                return X[..., rows, :] if axis == -2 else X[..., rows]
            got = xp.take(X, xp.asarray(rows.reshape(-1)), axis=axis)
            return xp.reshape(got, X.shape[:-2] + (W, k * d, X.shape[-1])) if axis == -2 else \
                xp.reshape(got, X.shape[:-1] + (W, k * d))

        Sg = pick(self.second, -2)                                       # (.., W, k*d, n*d)
        Row = A2 @ Sg                                                    # E[y'_w y_a^T] without offset
        mnew = (A2 @ pick(self.mean, -1)[..., None])[..., 0]             # (.., W, d)
        if offset is not None:
            b = asarray(offset, xp)
            Row = Row + b[..., :, :, None] * self.mean[..., None, None, :]
            mnew = mnew + b
        # corner: E[y'_w y'_v^T] = sum_j Row[w, src_v j] A_vj^T + mnew_w b_v^T + delta Q_w
        Rg = pick(Row, -1)                                               # (.., W, d, W, k*d)
        if xp is np:
            corner = np.einsum("...wivc,...vec->...wive", Rg, A2)
        else:
            corner = xp.sum(Rg[..., None, :] * A2[..., None, None, :, :, :], axis=-1)
        if offset is not None:
            corner = corner + mnew[..., :, :, None, None] * b[..., None, None, :, :]
        corner = xp.reshape(corner, corner.shape[:-4] + (W * d, W * d))
        if noise is not None:
            Q = asarray(noise, xp)
            for w in range(W):
                corner[..., w * d:(w + 1) * d, w * d:(w + 1) * d] += Q[..., w, :, :]
        if extra_second is not None:
            corner = corner + extra_second
        Row = xp.reshape(Row, Row.shape[:-3] + (W * d, self.n * d))
        batch = np.broadcast_shapes(Row.shape[:-2], self.second.shape[:-2])
        if batch != self.second.shape[:-2]:
            self.second = copy_of(xp.broadcast_to(self.second, batch + self.second.shape[-2:]))
            self.mean = copy_of(xp.broadcast_to(self.mean, batch + self.mean.shape[-1:]))
        corner = 0.5 * (corner + mT(corner))
        # the written registers are blocks of d rows and columns: slices (the standard has no scatter)
        blocks = [(slice(w * d, (w + 1) * d), slice(int(r) * d, (int(r) + 1) * d)) for w, r in enumerate(dst)]
        for mine, theirs in blocks:
            self.second[..., theirs, :] = Row[..., mine, :]
            self.second[..., :, theirs] = mT(Row[..., mine, :])
            self.mean[..., theirs] = mnew[..., mine.start // d, :]
        for mine, theirs in blocks:
            for mine2, theirs2 in blocks:
                self.second[..., theirs, theirs2] = corner[..., mine, mine2]

    def _many_states(self, P, batch) -> bool:
        """Whether the state batch holds more states per client configuration than ``d^2`` (then sums over the
        clients are cheaper as ``d^4``-sized operators built once than per state)."""
        states = int(np.prod(batch)) if batch else 1
        configs = int(np.prod(P.shape[:-3])) if P.ndim > 3 else 1
        return states > configs * self.d * self.d

    def assign_random(self, dst: int, base: int, lag_regs: Sequence[int], participation: "RandomParticipation",
                      delay_probs, runs_P, runs_r, runs_Q, eta):
        """``y_dst <- y_base - eta * sum_i c_i (P_i y_{lag_regs[D_i]} + r_i + nu_i)``, exact in expectation
        over the random coefficients ``c`` (:class:`RandomParticipation`), the delays ``D_i`` (drawn
        i.i.d. per client with ``delay_probs`` (L,) or (N, L)) and the noise (``Cov nu_i = Q_i``).

        ``runs_P`` ``(*batch, N, d, d)``, ``runs_r`` ``(*batch, N, d)``, ``runs_Q`` ``(*batch, N, d, d)``.

        With ``E[c] = u``, ``E[c c^T] = kappa u u^T + diag(v)`` and ``ybar_i = P_i E_D[y_D] + r_i``:
        the new register's mean and its cross moments with every old register are those of the
        deterministic assignment with coefficients ``-eta u_i p_ik P_i``; its own second moment adds
        ``eta^2 E[eps eps^T]`` with ``eps = sum_i c_i Y_i - sum_i u_i ybar_i``::

            E[eps eps^T] = (kappa - 1) E[ybar ybar^T] + sum_i P_i (beta_i S~_i - alpha_i S^_i) P_i^T
                           + v_i (P_i m_i r_i^T + r_i m_i^T P_i^T + r_i r_i^T) + beta_i Q_i,

        ``alpha_i = kappa u_i^2``, ``beta_i = alpha_i + v_i``, ``S~_i = sum_k p_ik E[y_k y_k^T]``,
        ``S^_i = sum_kl p_ik p_il E[y_k y_l^T]``, ``m_i = sum_k p_ik E y_k``.
        """
        xp, d = self.xp, self.d
        P, r, Q = asarray(runs_P, xp), asarray(runs_r, xp), asarray(runs_Q, xp)
        N = P.shape[-3]
        L = len(lag_regs)
        p = asarray(delay_probs, xp)
        p = xp.broadcast_to(p, (N, L)) if p.ndim == 1 else p
        u, kappa, v = (asarray(a, xp) for a in (participation.u, participation.kappa, participation.v))
        alpha = kappa * u * u
        beta = alpha + v
        rows = xp.asarray(self._rows(np.asarray(lag_regs)[:, None]).reshape(-1))   # (L d,)
        batch = self.second.shape[:-2]
        S_LL = xp.reshape(xp.take(xp.take(self.second, rows, axis=-2), rows, axis=-1), batch + (L, d, L, d))
        m_L = xp.reshape(xp.take(self.mean, rows, axis=-1), batch + (L, d))   # (.., L, d)
        many = xp is np and self._many_states(P, batch)
        if xp is np:
            if not many:
                S_diag = np.einsum("...kakb->...kab", S_LL)
                S_hat = np.einsum("ik,il,...kalb->...iab", p, p, S_LL)       # (.., N, d, d)
                S_til = np.einsum("ik,...kab->...iab", p, S_diag)
                m_hat = np.einsum("ik,...ka->...ia", p, m_L)                 # (.., N, d)
            G = np.einsum("i,ik,...iab->...kab", u, p, P)                    # (.., L, d, d) mean coefficients
            rbar = np.einsum("i,...ia->...a", u, r)
            # E[ybar ybar^T] of the aggregate
            GS = np.einsum("...kab,...kblc->...alc", G, S_LL)                 # (.., d, L, d)
            agg = np.einsum("...alc,...ldc->...ad", GS, G)
            Gm = np.einsum("...kab,...kb->...a", G, m_L)
        else:   # the same sums as matrix products of the standard
            nb = len(batch)
            ax = tuple(range(nb))
            S_ab = xp.permute_dims(S_LL, ax + (nb + 1, nb + 3, nb, nb + 2))  # (.., a, b, k, l)
            S_diag = xp.permute_dims(xp.linalg.diagonal(S_ab), ax + (nb + 2, nb, nb + 1))       # (.., k, a, b)
            S_hat = xp.sum(mT(p) * (S_ab @ mT(p)), axis=-2)                  # (.., a, b, i)
            S_hat = xp.permute_dims(S_hat, ax + (nb + 2, nb, nb + 1))       # (.., N, d, d)
            S_til = xp.reshape(p @ xp.reshape(S_diag, batch + (L, d * d)), batch + (N, d, d))
            m_hat = p @ m_L                                                  # (.., N, d)
            G = xp.reshape(mT(u[:, None] * p) @ xp.reshape(P, P.shape[:-2] + (d * d,)), P.shape[:-3] + (L, d, d))
            rbar = weighted_sum(u, r)
            nG = G.ndim - 3
            Gf = xp.reshape(xp.permute_dims(G, tuple(range(nG)) + (nG + 1, nG, nG + 2)), G.shape[:-3] + (d, L * d))
            GS = Gf @ xp.reshape(S_LL, batch + (L * d, L * d))               # (.., d, (l c))
            agg = GS @ mT(Gf)                                                # sum_{l, c} GS[a, l c] G[l, d', c]
            Gm = xp.sum(matvec(G, m_L), axis=-2)
        agg = agg + Gm[..., :, None] * rbar[..., None, :] + rbar[..., :, None] * Gm[..., None, :] \
            + rbar[..., :, None] * rbar[..., None, :]
        if many:
            # many states at once (the one-map driver's unit states): the client sums as d^4 L^2 numbers built
            # once, sum_i c_ikl P_i (.) P_i^T with c_ikl = beta_i p_ik [k = l] - alpha_i p_ik p_il, not per state
            c = beta[:, None, None] * p[:, :, None] * np.eye(L) - alpha[:, None, None] * p[:, :, None] * p[:, None, :]
            K = np.einsum("ikl,...iab,...iec->...aekblc", c, P, P)
            J = np.einsum("i,ik,...iab,...ie->...aekb", v, p, P, r)
            cross = np.einsum("...aekb,...kb->...ae", J, m_L)
            clients = np.einsum("...aekblc,...kblc->...ae", K, S_LL) + cross + mT(cross) \
                + np.einsum("i,...ia,...ie->...ae", v, r, r) + np.einsum("i,...iae->...ae", beta, Q)
        else:
            mid = beta[:, None, None] * S_til - alpha[:, None, None] * S_hat
            per = P @ mid @ mT(P)
            Pm = (P @ m_hat[..., None])[..., 0]
            cross = Pm[..., :, None] * r[..., None, :]
            per = per + v[:, None, None] * (cross + mT(cross) + r[..., :, None] * r[..., None, :])
            per = per + beta[:, None, None] * Q
            clients = xp.sum(per, axis=-3)
        extra = (kappa - 1.0) * agg + clients
        mats = xp.concat([xp.broadcast_to(xp.eye(d), G.shape[:-3] + (1, d, d)), -eta * G], axis=-3)
        self.assign([dst], [[base] + list(lag_regs)], mats[..., None, :, :, :], (-eta * rbar)[..., None, :],
                    None, eta**2 * extra)


@dataclass(frozen=True)
class RandomParticipation:
    """Random aggregation coefficients ``c`` drawn i.i.d. each step, independently of the state:
    ``E[c] = u``, ``E[c c^T] = kappa u u^T + diag(v)``.

    * :meth:`with_replacement` -- ``n`` uniform draws from ``N`` clients with replacement, each
      update counted with its multiplicity and the sum divided by ``n`` (DeFedAvg-nIID, FedAvg with
      client sampling): ``u = 1/N``, ``kappa = (n-1)/n``, ``v = 1/(nN)``;
    * :meth:`bernoulli` -- client ``i`` takes part with probability ``p_i`` and is weighted
      ``w_i / p_i`` (unbiased): ``u = w``, ``kappa = 1``, ``v = w^2 (1 - p)/p``;
    * :meth:`full` -- every client every step with weight ``w_i`` (deterministic).
    """

    u: Any
    kappa: float
    v: Any

    @classmethod
    def with_replacement(cls, *, N: int, n: int) -> "RandomParticipation":
        N = V.integer(N, "N", low=1, high=10**7)
        n = V.integer(n, "n", low=1, high=10**9)
        return cls(np.full(N, 1.0 / N), (n - 1) / n, np.full(N, 1.0 / (n * N)))

    @classmethod
    def bernoulli(cls, *, p, weights) -> "RandomParticipation":
        from .problems import validate_weights  # noqa: PLC0415

        w = validate_weights(weights)
        p = np.broadcast_to(V.array(p, "p", xp=np), w.shape)
        if np.any((p <= 0) | (p > 1)):
            raise ScheduleError("participation probabilities p must lie in (0, 1]")
        return cls(w, 1.0, w * w * (1 - p) / p)

    @classmethod
    def full(cls, *, weights) -> "RandomParticipation":
        from .problems import validate_weights  # noqa: PLC0415

        w = validate_weights(weights)
        return cls(w, 1.0, np.zeros_like(w))
