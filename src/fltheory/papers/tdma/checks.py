r"""Checks of every statement of Song & Hong (asynchronous FL over TDMA) against the slot-level event
simulator and against exact expectations on quadratic clients.

Instance families (each inside the assumptions of the statements it is used for):

* **channels** -- random ``(G, S, tau_comp, r, alpha)`` with ``N = G S`` (and ``N`` not divisible by
  ``S`` for the general staleness law and the printed (10), (15)), run through
  :func:`~.timing.tdma_schedule`.  The timing statements assume equal computation times.  (9), (10),
  (15) and (16) are printed with ``G = ceil(N/S)`` for any ``N`` (the paper assumes ``S | N`` only in
  Proposition 1 and Theorem 1): ``tau_async_printed`` and ``staleness_printed`` check them as printed
  (violated: ``N = 5``, ``S = 2``, ``tau_comp = 30`` takes 16 slots a round, (10) says 11), ``tau_async``
  and ``staleness`` with ``S | N`` added.
* **the algorithm's equations** -- noiseless quadratic clients run by the batched simulator against
  (5), (7), (11), (12) typed line by line (``update_rule``), and Fig. 2's example (13)-(14).
* **smooth functions** -- (18) on separable ``sum_i A_i h(w_i - c_i)`` with ``h`` quadratic or log cosh
  (``SMOOTH_FAMILY``, searched; equality on a quadratic along its top curvature).
* **quadratic** -- ``f_n = 1/2 (w - c_n)^T diag(A) (w - c_n)`` with ``A`` in ``[0.1, 1]^m`` times
  ``{0.5, 1, 2}``, ``||c_n|| <= 3``, additive per-sample noise of variance ``sigma^2`` in
  ``[0, 2]`` and mini-batches ``B`` in ``1..8``.  Assumption 1 holds with ``L = max A`` (``f`` is
  quadratic), Assumption 2 with ``M = 1`` and this ``sigma`` (with equality), Assumption 3 with
  ``Gamma = max_n ||A(c_n - cbar)||`` (exact: the gradient differences are constant), ``f_inf = f*``;
  ``N = G S``, staleness ``min(k, G - 1 - alpha)``.  Every expectation is exact
  (:func:`~.exact.lemma_terms`), not a Monte Carlo mean.
* **lemma counterexamples** -- ``f_n = f = w^2/2`` with ``N = S = 2``, ``eta = 0.1``, ``w_0 = 1``
  (Lemma 1: 0.405 > 0.4025); the round robin of ``N = 3`` devices on ``f_n = 1/2 (w - c_n)^2``
  with small ``eta`` (Lemmas 2, 3); all deterministic, inside Assumptions 1-3.
* **Theorem 1 counterexamples** -- (i) synchronous (``N = S = 50``), ``f_n = f = w^2/2``, ``w_0 = 1``,
  ``M = B = 1``, ``sigma = Gamma = 0``: with ``eta = beta/sqrt(K+1)`` gradient descent diverges for
  ``K <= 21`` while the bound is negative; (ii) the round robin ``S = 1``, ``N`` in {50, 60, 100},
  ``f_n = 1/2 (w - c_n)^2`` with ``c_n = +1`` for the first half and ``-1`` for the rest,
  ``w_0 = 0 = cbar`` (``Delta = 0``, ``Gamma = 1``).  Both satisfy (29), ``K >= 2G`` and ``S | N``.

* **searched** (issue 21) -- ``theorem1_corrected`` is also searched over ``QUADRATIC_FAMILY`` (the
  quadratic family with every size, curvature, noise, delay and ``eta L`` up to ``x_max`` as search
  parameters): tight at ``N = S = 1``, ``sigma = Gamma = 0``, :math:`\eta L=1`.  The corrected lemmas
  are searched over ``GENERAL_FAMILY`` (``N`` not divisible by ``S``, intentional delay, mini-batches,
  ``L != 1``, two curvatures, centres in two opposite groups or random, any step): Lemma 1' is tight on
  one curvature (``f = L w^2/2``, the first round), Lemma 2' at ``N = 2``, ``S = 1``, ``c = (-1, +1)``,
  ``w_0 = 1``, ``lambda = 1`` (:math:`\nabla f_0(w_0)=2\nabla f(w_0)`: Young's inequality is an
  equality; the 'pm' centres give it for every even ``N`` with ``S <= N/2``), Lemma 3' reaches its
  supremum 1/2 (the factor 2 of the mean/noise split).  Lemma 4 is searched over ``LEMMA4_FAMILY``
  (``S | N``, ``K >= 2G``): (27) is tight at ``G = 1``; (28) is at most :math:`(G-1)/(2G)` for any
  non-negative sequence (1/2 only as ``G`` grows).  The corrected (20) is searched over
  ``MINIBATCH_FAMILY`` (additive and multiplicative per-sample noise, exact by enumerating the
  mini-batches): tight whenever (19) holds with equality.  Multiplicative noise is not in the exact
  quadratic engine, so the lemmas use ``M = 1``.

Printed statements that are false carry ``expected="violated"``: ``tau_async_printed`` ((9)-(10) with
``S`` not dividing ``N``), ``staleness_printed`` ((15)-(16) likewise), ``khat_idfl`` (31) (off by one at
``k = G - alpha`` for every ``alpha``, 0 included), ``round_descent`` (25) and ``summed_descent`` (26)
(both on Lemma 1's instance: 0.405 > 0.4025, and 0.195 > 0.19 at ``K = 0``; searched over
``GENERAL_FAMILY`` like the corrected lemmas),
``rounds_loop_bound`` (Algorithm 1's loop bound as the rounds in ``T``), ``assumption2_minibatch``
(20), ``lemma1`` (22), ``lemma2`` (23), ``lemma3`` (24), ``theorem1`` (the explicit bound of
Appendix D) and ``theorem1_rate`` ((30) for every step of (29): ``N = S = 1``, ``f = w^2/2``,
``eta = beta/(K+1)``, exact runs and their closed form).  Everything else holds.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from ...backend import KeyedStream, to_numpy
from ...search import Choice, Family, Integer, Real
from ...verify import Check, Sample, register
from . import algorithm as ALG
from . import bounds as B
from . import exact as X
from . import timing as tm

PAPER = "tdma"


def _rng(seed: int, tag: str) -> np.random.Generator:
    return KeyedStream(seed, f"tdma-checks-{tag}").generator()


# ============================================================================= channels
def _channels(quick: bool, seed: int, *, divisible: bool = True, alpha: bool = True, n: int | None = None):
    """Random channel configurations (dicts) with their simulated timing."""
    rng = _rng(seed, f"channels-{divisible}-{alpha}")
    out = []
    for _ in range(n or (12 if quick else 60)):
        if divisible:
            G, S = int(rng.integers(1, 9)), int(rng.integers(1, 6))
            N = G * S
        else:
            S = int(rng.integers(2, 7))
            N = int(rng.integers(S + 1, 31))
            if N % S == 0:
                N += 1
            G = -(-N // S)
        tau, r = int(rng.integers(1, 81)), int(rng.integers(1, 4))
        a = int(rng.integers(0, G)) if (alpha and divisible) else 0
        K = 4 * G + 3
        p = dict(N=N, S=S, tau_comp=tau, r=r, alpha=a)
        out.append((p, tm.tdma_schedule(K=K, **p)))
    return out


def _mismatch(a, b) -> float:
    return float(np.abs(np.asarray(a, float) - np.asarray(b, float)).sum())


def _identity_samples(rows):
    return [Sample(v, 0.0, p, None, s) for p, v, s in rows]


def _staleness_samples(quick, seed):
    """Staleness under intentional delay (every alpha): the closed form against the simulator."""
    rows = []
    for p, t in _channels(quick, seed):
        k = np.arange(t.K)[:, None] + 0 * t.staleness
        rows.append((p, _mismatch(t.staleness, tm.staleness(N=p["N"], S=p["S"], k=k, alpha=p["alpha"])), p["N"] + t.K))
    return _identity_samples(rows)


# the referees' instance of (10) and (15) as printed: N = 5 devices, S = 2 uplinks a round (G = ceil(5/2) = 3)
PRINTED_TIMING_INSTANCE = dict(N=5, S=2, tau_comp=30, r=1, alpha=0)


def _staleness15_samples(quick, seed, *, printed=False):
    """(15)-(16) (alpha = 0) against the simulator: with ``S | N`` added (``staleness``) or as printed, ``G =
    ceil(N/S)`` for any ``N`` (``staleness_printed``: random N divisible by S or not, and the referees' N = 5, S = 2
    first, at size 0 so that it is the counterexample quoted)."""
    chans = _channels(quick, seed, alpha=False)
    if printed:
        q = PRINTED_TIMING_INSTANCE
        chans = [(q, tm.tdma_schedule(K=15, **q))] + chans + _channels(quick, seed, divisible=False)
    st = B.staleness_printed if printed else B.staleness
    rows = []
    for i, (p, t) in enumerate(chans):
        k = np.arange(t.K)[:, None] + 0 * t.staleness
        rows.append((p, _mismatch(t.staleness, st(N=p["N"], S=p["S"], k=k)), 0 if printed and i == 0 else p["N"] + t.K))
    return _identity_samples(rows)


def _staleness_general_samples(quick, seed):
    rows = []
    for p, t in _channels(quick, seed, divisible=False):
        k = np.arange(t.K)[:, None] + 0 * t.staleness
        u = np.arange(p["S"])[None, :] + 0 * k
        steady = k * p["S"] + u >= p["N"]
        law = B.staleness_general(N=p["N"], S=p["S"], u=u)
        rows.append((p, _mismatch(t.staleness[steady], law[steady]) + _mismatch(t.staleness[~steady], k[~steady]),
                     p["N"] + t.K))
    return _identity_samples(rows)


def _end_time_samples(quick, seed):
    rows = []
    for p, t in _channels(quick, seed):
        E = tm.end_time(k=np.arange(t.K), **{k_: p[k_] for k_ in ("N", "S", "tau_comp", "r", "alpha")})
        rows.append((p, _mismatch(t.end, E), p["N"] + t.K))
    for p, t in _channels(quick, seed + 1, alpha=False, n=6 if quick else 20):
        s = tm.tdma_schedule(N=p["N"], S=p["S"], tau_comp=p["tau_comp"], r=p["r"], K=t.K, scheme="sync")
        E = tm.end_time(N=p["N"], S=p["S"], tau_comp=p["tau_comp"], r=p["r"], k=np.arange(t.K), scheme="sync")
        rows.append(({**p, "scheme": "sync"}, _mismatch(s.end, E), p["N"] + t.K))
    return _identity_samples(rows)


def _tau_async_samples(quick, seed):
    out = []
    for p, t in _channels(quick, seed, alpha=False):
        G = p["N"] // p["S"]
        avg = (t.end[G:] - t.end[:-G]) / G
        v = float(B.tau_async(N=p["N"], S=p["S"], tau_comp=p["tau_comp"], r=p["r"]))
        out.append(Sample(float(np.abs(avg - v).max()) + v, v, p, None, p["N"]))
    return out


@functools.lru_cache(maxsize=256)
def slots_per_round(N, S, tau_comp, r):
    """The exact long-run average slots per round of asynchronous FL over TDMA, for any ``N``: after the start-up
    (``3G`` rounds) the round durations ``E_k - E_{k-1}`` repeat with the smallest period ``p <= 4N`` under which the
    whole simulated tail (``12 N`` rounds) is periodic, and one period is averaged (the average of (10))."""
    G = -(-N // S)
    off, cap = 3 * G, 4 * N
    t = tm.tdma_schedule(N=N, S=S, tau_comp=tau_comp, r=r, K=off + 3 * cap + 1)
    tail = np.diff(t.end)[off:]
    q = next((p for p in range(1, cap + 1) if np.array_equal(tail[p:], tail[:-p])), None)
    if q is None:     # pragma: no cover - the rotation repeats within N rounds
        raise RuntimeError(f"the round durations of N={N}, S={S} do not repeat within {cap} rounds")
    return float(tail[:q].sum()) / q


def _tau_async_printed_samples(quick, seed):
    """(10) as printed (G = ceil(N/S), no divisibility) against the exact long-run average of the simulator: the
    referees' N = 5, S = 2, tau_comp = 30 first (size 0), then random channels with S | N and without."""
    q = PRINTED_TIMING_INSTANCE
    chans = [q] + [p for p, _ in _channels(quick, seed, alpha=False, n=6 if quick else 20)
                   + _channels(quick, seed, divisible=False, n=6 if quick else 20)]
    out = []
    for i, p in enumerate(chans):
        ch = (p["N"], p["S"], p["tau_comp"], p["r"])
        out.append(Sample(slots_per_round(*ch), float(B.tau_async_printed(N=ch[0], S=ch[1], tau_comp=ch[2], r=ch[3])),
                          dict(p), None, 0.0 if i == 0 else float(p["N"] + p["tau_comp"])))
    return out


def _khat_samples(quick, seed, *, corrected):
    st = B.khat_idfl_corrected if corrected else B.khat_idfl
    rows = []
    for p, t in _channels(quick, seed):          # every alpha, 0 included: (31) is off at k = G - alpha for each
        G = p["N"] // p["S"]
        k = np.arange(min(t.K, G + 1))
        want = st(G=G, alpha=p["alpha"], k=k)
        rows.append((p, _mismatch(t.khat[k, 0], np.rint(want)), p["N"] + p["alpha"]))
    if not corrected:   # the smallest instance: N = 6, S = 2, alpha = 1 at k = 2 (true khat 1, printed 0)
        t = tm.tdma_schedule(N=6, S=2, tau_comp=2, r=1, K=3, alpha=1)
        want = st(G=3, alpha=1, k=np.arange(3))
        rows.append((dict(N=6, S=2, tau_comp=2, r=1, alpha=1, k=[0, 1, 2]), _mismatch(t.khat[:, 0], np.rint(want)), 0))
        # alpha = 0 (Algorithm 1): at k = G (31)'s first branch gives 0 where (12) gives 1 (N = 4, S = 2, G = 2)
        t = tm.tdma_schedule(N=4, S=2, tau_comp=2, r=1, K=3, alpha=0)
        want = st(G=2, alpha=0, k=np.arange(3))
        rows.append((dict(N=4, S=2, tau_comp=2, r=1, alpha=0, k=[0, 1, 2]), _mismatch(t.khat[:, 0], np.rint(want)),
                     0.5))
    return _identity_samples(rows)


def _brute_alpha_star(p):
    base = tm.tdma_schedule(N=p["N"], S=p["S"], tau_comp=p["tau_comp"], r=p["r"], K=3 * (p["N"] // p["S"]) + 2).end
    best = 0
    for a in range(1, p["N"] // p["S"]):
        e = tm.tdma_schedule(N=p["N"], S=p["S"], tau_comp=p["tau_comp"], r=p["r"], K=len(base), alpha=a).end
        if np.array_equal(e, base):
            best = a
        else:
            break
    return best


def _prop1_samples(quick, seed):
    out = []
    for p, _ in _channels(quick, seed, alpha=False, n=10 if quick else 40):
        v = float(B.prop1_alpha(N=p["N"], S=p["S"], tau_comp=p["tau_comp"], r=p["r"]))
        out.append(Sample(float(_brute_alpha_star(p)), v, p, None, p["N"]))
    # the paper's configurations: MNIST (N = 100, tau_comp = 50, r = 1) and Fig. 6/7 (S = 1, tau_comp/r = 50, 10, 2)
    golden = [(100, S, 50, 1) for S in (1, 5, 10, 25, 50, 100)] + [(100, 1, 10, 1), (100, 1, 2, 1)]
    for N, S, tau, r in golden[: 3 if quick else None]:
        p = dict(N=N, S=S, tau_comp=tau, r=r)
        out.append(Sample(float(_brute_alpha_star(p)), float(B.prop1_alpha(**p)), p, None, N))
    return out


def _prop1_condition_samples(quick, seed):
    """(34)-(36): for tau_comp < r (G-1)(S+1), an intentional delay alpha keeps every E_k of asynchronous FL (the
    simulator, K = 3G + 2 rounds) iff r (G - alpha - 1)(S + 1) >= tau_comp -- every alpha in 0..G-1."""
    out = []
    chans = [p for p, _ in _channels(quick, seed, alpha=False, n=20 if quick else 60)]
    chans += [] if quick else [dict(N=100, S=1, tau_comp=50, r=1), dict(N=100, S=5, tau_comp=10, r=1)]
    for p in chans:
        N, S, tau, r = p["N"], p["S"], p["tau_comp"], p["r"]
        G = N // S
        if tau >= r * (G - 1) * (S + 1):
            continue
        base = tm.tdma_schedule(N=N, S=S, tau_comp=tau, r=r, K=3 * G + 2).end
        for a in range(G):
            e = tm.tdma_schedule(N=N, S=S, tau_comp=tau, r=r, K=len(base), alpha=a).end
            q = dict(N=N, S=S, tau_comp=tau, r=r, alpha=a)
            out.append(Sample(float(np.array_equal(e, base)), float(B.prop1_condition(**q)), q, None, float(N + a)))
    return out


@functools.lru_cache(maxsize=None)
def _simulated_rounds(N, S, tau_comp, r, T):
    """Rounds of the simulator that end by T (the long Table I runs are shared by three checks)."""
    return tm.tdma_schedule(N=N, S=S, tau_comp=tau_comp, r=r, T=T).K


def _rounds_samples(quick, seed, *, printed):
    st = B.rounds_loop_bound if printed else B.rounds_done
    out = []
    rng = _rng(seed, "rounds")
    for p, t in _channels(quick, seed, alpha=False):
        for T in {int(t.end[-1]), int(rng.integers(0, t.end[-1] + 1))}:
            out.append(Sample(float(t.rounds_done(T)), float(st(T=T, **{k: p[k] for k in ("N", "S", "tau_comp", "r")})),
                              {**p, "T": T}, None, p["N"] + T))
    for S in () if quick else (1, 2, 5, 10, 20):   # Table I (long runs: full mode)
        p = dict(N=20, S=S, tau_comp=4, r=1, T=10**5)
        sim = _simulated_rounds(20, S, 4, 1, 10**5)
        out.append(Sample(float(sim), float(st(**p)), p, None, 10**5))
    return out


def _table1_rows(quick):
    """Table I and the MNIST rounds by the deadline: closed form always, the event simulator in full mode."""
    want = {1: 49999, 2: 33333, 5: 16667, 10: 9091, 20: 4001}
    rows = [(dict(table="I", S=S), float(v), float(want[S])) for S, v in tm.table1().items()]
    mnist = dict(zip((1, 5, 10, 25, 50, 100), (24975, 8325, 4540, 1921, 979, 331)))
    got = tm.rounds_done(N=100, S=list(mnist), tau_comp=50, r=1, T=50000)
    rows += [(dict(config="MNIST", S=S, T=50000), float(g), float(v)) for (S, v), g in zip(mnist.items(), got)]
    if not quick:
        rows += [(dict(table="I (simulated)", S=S), float(_simulated_rounds(20, S, 4, 1, 10**5) + 1), float(want[S]))
                 for S in want]
        rows += [(dict(config="MNIST (simulated)", S=S, T=50000), float(_simulated_rounds(100, S, 50, 1, 50000)),
                  float(v)) for S, v in mnist.items()]
    return [Sample(v, w, p, None, 0.0) for p, v, w in rows]


def _staleness_sum_samples(quick, seed):
    out = []
    for p, t in _channels(quick, seed, alpha=False):
        G = p["N"] // p["S"]
        for K in (G - 1, t.K - 1):
            if K < 0 or K < G - 1:
                continue
            out.append(Sample(float(t.staleness[: K + 1].sum()), float(B.staleness_sum(N=p["N"], S=p["S"], K=K)),
                              {**p, "K": K}, None, p["N"] + K))
    return out


# ============================================================================= assumption 2
def _minibatch_samples(quick, seed, *, corrected):
    rng = _rng(seed, "minibatch")
    out = [Sample(1.0, float((B.assumption2_minibatch_corrected if corrected else B.assumption2_minibatch)(
        sigma=0.0, B=2, M=1.0, grad_n=1.0)), dict(sigma=0.0, B=2, grad_norm2=1.0, m=1), None, 0.0)]
    for _ in range(8 if quick else 40):
        m, Bb, sig = int(rng.integers(1, 5)), int(rng.integers(1, 9)), float(rng.uniform(0, 2))
        fed = X.tdma_quadratic(A=rng.uniform(0.1, 1, m), c=rng.normal(size=(1, m)), sigma=sig, B=Bb)
        w = rng.normal(size=m)
        g = np.asarray(fed.grad_clients_at(w))[0]
        gn = float(g @ g)
        exact = gn + (float(np.trace(np.asarray(fed.noise_cov)[0])) if fed.noise_cov is not None else 0.0)
        st = B.assumption2_minibatch_corrected if corrected else B.assumption2_minibatch
        out.append(Sample(exact, float(st(sigma=sig, B=Bb, M=1.0, grad_n=gn)), dict(m=m, B=Bb, sigma=sig), seed, m + Bb))
    return out


# ============================================================================= assumption 1, (18)
def _smooth_constrain(p):
    if p["m"] == 1:
        p["A_spread"] = 1.0
    return p


SMOOTH_FAMILY = Family(
    [Integer("m", 1, 4), Integer("seed", 0, 10**6), Choice("h", ("quadratic", "logcosh")),
     Real("L", 0.1, 10.0, log=True), Real("A_spread", 0.05, 1.0), Real("dist", 0.05, 5.0, log=True),
     Real("align", 0.0, 1.0), Real("w_scale", 0.0, 3.0)],
    constrain=_smooth_constrain, fixed={"family": "separable smooth (searched)"},
    description="f(w) = sum_i A_i h(w_i - c_i) with h(x) = x^2/2 or log cosh x (h'' <= 1, so f is L-smooth with "
                "L = max A, Assumption 1), A = L (1, u...) with u in [A_spread, 1]; w = c + w_scale times a seeded "
                "unit vector, w' = w + dist times the unit vector of align e_1 + (1 - align) times a seeded unit "
                "vector (e_1 is the direction of curvature L); f, grad f in closed form")


def _smooth_evaluate(p):
    rng = _rng(p["seed"], "search-smooth")
    m = p["m"]
    A = p["L"] * np.concatenate([[1.0], rng.uniform(p["A_spread"], 1.0, m - 1)])
    c = rng.normal(size=m)
    u, v = rng.normal(size=m), rng.normal(size=m)
    w = c + p["w_scale"] * u / max(float(np.linalg.norm(u)), 1e-300)
    direction = p["align"] * np.eye(m)[0] + (1 - p["align"]) * v / max(float(np.linalg.norm(v)), 1e-300)
    if float(np.linalg.norm(direction)) < 1e-12:
        direction = np.eye(m)[0]
    w2 = w + p["dist"] * direction / float(np.linalg.norm(direction))
    if p["h"] == "quadratic":
        h, dh = (lambda x: 0.5 * x * x), (lambda x: x)
    else:
        h, dh = (lambda x: np.logaddexp(x, -x) - np.log(2.0)), np.tanh
    f = lambda x: float(A @ h(x - c))                                   # noqa: E731
    value = f(w2) - f(w) - float((A * dh(w - c)) @ (w2 - w))
    bound = float(B.smoothness_descent(L=p["L"], sq_dist=float((w2 - w) @ (w2 - w))))
    return Sample(value, bound, dict(p), None, float(m))


def _smoothness_samples(quick, seed):
    """(18) on random separable smooth functions (quadratic and log cosh); the quadratic along e_1 is equality."""
    rng = _rng(seed, "smoothness")
    out = [_smooth_evaluate(dict(m=1, seed=0, h="quadratic", L=1.0, A_spread=1.0, dist=1.0, align=1.0, w_scale=1.0))]
    for _ in range(10 if quick else 40):
        p = dict(m=int(rng.integers(1, 5)), seed=int(rng.integers(0, 10**6)), h=str(rng.choice(["quadratic", "logcosh"])),
                 L=float(np.exp(rng.uniform(np.log(0.1), np.log(10)))), A_spread=float(rng.uniform(0.05, 1)),
                 dist=float(np.exp(rng.uniform(np.log(0.05), np.log(5)))), align=float(rng.uniform()),
                 w_scale=float(rng.uniform(0, 3)))
        out.append(_smooth_evaluate(_smooth_constrain(p)))
    return out


# ============================================================================= quadratic instances
@functools.lru_cache(maxsize=16)
def quadratic_instances(seed: int, quick: bool, *, small_eta: bool = False):
    """Random round-robin quadratic instances with their exact lemma terms (see the module docstring).

    ``small_eta``: ``eta L <= x_max`` of Theorem 1' (its step condition); otherwise ``eta L`` up to 1.5.
    """
    rng = _rng(seed, f"quadratic-{small_eta}")
    out = []
    for i in range(6 if quick else 24):
        m, G, S = int(rng.integers(1, 5)), int(rng.integers(1, 6)), int(rng.integers(1, 4))
        N = G * S
        Bb, sig = int(rng.integers(1, 9)), float(rng.uniform(0, 2)) * (rng.uniform() < 0.8)
        A = rng.uniform(0.1, 1, m) * float(rng.choice([0.5, 1.0, 2.0]))
        c = rng.normal(size=(N, m))
        c *= np.minimum(1.0, 3.0 / np.maximum(np.linalg.norm(c, axis=1, keepdims=True), 1e-12))
        if rng.uniform() < 0.2:
            c[:] = c[0]                                     # homogeneous: Gamma = 0
        alpha = int(rng.integers(0, G))
        dbar = G - 1 - alpha
        K = int(rng.integers(max(2 * G, 1), 40))
        fed = X.tdma_quadratic(A=A, c=c, sigma=sig, B=Bb)
        L = float(A.max())
        xm = float(B.x_max(dbar=dbar, M=1.0, S=S, B=Bb))
        eta = (xm * rng.uniform(0.05, 1.0) if small_eta else rng.uniform(0.01, 1.5)) / L
        x0 = rng.normal(size=m) * 2
        t = tm.tdma_schedule(N=N, S=S, tau_comp=int(rng.integers(1, 30)), r=int(rng.integers(1, 3)), K=K, alpha=alpha)
        terms = X.lemma_terms(fed, t, eta=eta, x0=x0)
        cs = X.quadratic_constants(fed, x0)
        p = dict(family="quadratic", seed=seed, index=i, m=m, N=N, S=S, G=G, B=Bb, sigma=sig, alpha=alpha, K=K,
                 eta=eta, L=L, Gamma=cs.Gamma)
        out.append((p, t, terms, cs))
    return tuple(out)


@functools.lru_cache(maxsize=4)
def lemma_counterexamples():
    """Deterministic instances: Lemma 1's (f = w^2/2, N = S = 2) and a 3-device round robin (S = 1)."""
    out = []
    fed = X.tdma_quadratic(A=[1.0], c=[[0.0], [0.0]])
    t = tm.tdma_schedule(N=2, S=2, tau_comp=1, r=1, K=1)
    out.append((dict(family="f = w^2/2", N=2, S=2, G=1, B=1, sigma=0.0, alpha=0, K=1, eta=0.1, L=1.0, Gamma=0.0, m=1),
                t, X.lemma_terms(fed, t, eta=0.1, x0=[1.0]), X.quadratic_constants(fed, [1.0])))
    fed = X.tdma_quadratic(A=[1.0], c=[[1.0], [-1.0], [0.0]])
    t = tm.tdma_schedule(N=3, S=1, tau_comp=1, r=1, K=8)
    out.append((dict(family="round robin N = 3", N=3, S=1, G=3, B=1, sigma=0.0, alpha=0, K=8, eta=0.05, L=1.0,
                     Gamma=1.0, m=1), t, X.lemma_terms(fed, t, eta=0.05, x0=[2.0]), X.quadratic_constants(fed, [2.0])))
    return tuple(out)


def _all_instances(quick, seed, small_eta=False):
    return lemma_counterexamples() + quadratic_instances(seed, quick, small_eta=small_eta)


def _size(p):
    return float(p["N"] * p["m"] + p["K"])


def _pick(v, rhs):
    """The index of the worst instance of an upper bound: the largest excess if any, else the largest ratio."""
    v, rhs = np.asarray(v, float), np.asarray(rhs, float)
    excess = v - rhs
    if np.any(excess > 1e-9 * np.abs(rhs) + 1e-12):
        return np.unravel_index(int(np.argmax(excess)), v.shape)
    ratio = np.where(rhs > 0, v / np.where(rhs > 0, rhs, 1.0), 0.0)
    return np.unravel_index(int(np.argmax(ratio)), v.shape)


def _lemma1_samples(quick, seed, *, corrected):
    out = []
    for p, t, z, cs in _all_instances(quick, seed):
        kw = dict(eta=p["eta"], M=1.0, L=p["L"], S=p["S"], B=p["B"], Gamma=cs.Gamma, sigma=p["sigma"])
        if corrected:
            kw["lam"] = 1.0
        st = B.lemma1_corrected if corrected else B.lemma1
        rhs = st(f_k=z.f[:-1], a_k=z.a[:-1], sum_h=z.sum_h, sum_D=z.sum_D, **kw)
        j = int(_pick(z.f[1:], rhs)[0])
        out.append(Sample(float(z.f[1 + j]), float(rhs[j]), {**p, "k": j}, None, _size(p)))
    return out


def _lemma2_samples(quick, seed, *, corrected):
    out = []
    for p, t, z, cs in _all_instances(quick, seed):
        rhs = (B.lemma2_corrected(Gamma=cs.Gamma, S=p["S"], sum_gf=z.sum_gf, lam=1.0) if corrected
               else B.lemma2(Gamma=cs.Gamma, S=p["S"], sum_gf=z.sum_gf))
        j = int(_pick(z.sum_h, rhs)[0])
        out.append(Sample(float(z.sum_h[j]), float(rhs[j]), {**p, "k": j}, None, _size(p)))
    return out


def _lemma3_samples(quick, seed, *, corrected):
    out = []
    for p, t, z, cs in _all_instances(quick, seed):
        if corrected:
            rhs = B.lemma3_corrected(eta=p["eta"], d=z.d.astype(float), window_H=z.window_H, M=1.0, S=p["S"], B=p["B"],
                                     sigma=p["sigma"])
            v = z.drift
        else:
            rhs = B.lemma3(eta=p["eta"], sigma=p["sigma"], M=1.0, Gamma=cs.Gamma, S=p["S"], B=p["B"],
                           sum_d=z.sum_d.astype(float), sum_window=z.sum_window)
            v = z.sum_D
        j = _pick(v, rhs)
        out.append(Sample(float(v[j]), float(rhs[j]), {**p, "k": int(j[0])}, None, _size(p)))
    return out


def _round_descent_rhs(p, z, Gamma):
    """(25)'s right-hand side for every round of an instance (exact terms ``z``)."""
    return B.round_descent(f_k=z.f[:-1], a_k=z.a[:-1], sum_gf=z.sum_gf, sum_window=z.sum_window,
                           sum_d=z.sum_d.astype(float), eta=p["eta"], L=p["L"], Gamma=Gamma, M=1.0, sigma=p["sigma"],
                           S=p["S"], B=p["B"])


def _summed_descent_terms(p, z, Gamma):
    """(26) for every K = 0..(rounds - 1) of an instance: its printed left side (the average squared gradient times
    eta, less the two sums (25) carries over) and its right side, ``f(w_{K+1})`` for the printed ``f(w_{k+1})``."""
    eta, L, S, Bb = p["eta"], p["L"], p["S"], p["B"]
    n = len(z.sum_gf)
    K1 = np.arange(1, n + 1)
    c1 = (eta**2 * L - eta * S * Bb) / (S**2 * Bb)            # M = 1
    c2 = eta**3 * L**2 / (S**3 * Bb)
    lhs = (eta * np.cumsum(z.a[:n]) - c1 * np.cumsum(z.sum_gf) - c2 * np.cumsum(z.sum_window)) / K1
    rhs = B.summed_descent(K=K1 - 1, f_drop=z.f[0] - z.f[1:], sum_d_all=np.cumsum(z.sum_d).astype(float), eta=eta, L=L,
                           Gamma=Gamma, M=1.0, sigma=p["sigma"], S=S, B=Bb)
    return lhs, rhs


def _descent_samples(quick, seed, *, summed):
    """(25) per round or (26) per horizon K on the lemma counterexamples (Lemma 1's f = w^2/2, N = S = 2 first) and
    random quadratic federations; the worst round or horizon of each instance."""
    out = []
    for p, t, z, cs in _all_instances(quick, seed):
        v, rhs = _summed_descent_terms(p, z, cs.Gamma) if summed else (z.f[1:], _round_descent_rhs(p, z, cs.Gamma))
        j = int(_pick(v, rhs)[0])
        out.append(Sample(float(v[j]), float(rhs[j]), {**p, ("horizon" if summed else "k"): j}, None, _size(p)))
    return out


def _lemma4_samples(quick, seed, *, which):
    out = []
    for p, t, z, cs in quadratic_instances(seed, quick):
        if p["alpha"] or p["K"] < 2 * p["G"]:
            continue
        K, N, S = p["K"] - 1, p["N"], p["S"]               # rounds 0..K of the schedule's K rounds
        if K < 2 * p["G"]:
            continue
        a = z.a
        stale = float(a[t.khat[: K + 1]].sum())
        if which == "27":
            v, b = stale, float(B.lemma4_27(N=N, S=S, K=K, g0=a[0], sum_a=a[: K + 1].sum()))
        elif which == "28":
            v, b = float(z.sum_window[: K + 1].sum()), float(B.lemma4_28(N=N, S=S, K=K, g0=a[0], sum_a=a[: K + 1].sum()))
        else:
            v, b = stale, float(B.lemma4_exact(N=N, S=S, K=K, g0=a[0], sum_a_head=a[1: K - p["G"] + 2].sum()))
        out.append(Sample(v, b, {**p, "K": K}, None, _size(p)))
    return out


# ============================================================================= Theorem 1
def _sync_instance(K):
    fed = X.tdma_quadratic(A=[1.0], c=np.zeros((50, 1)))
    return dict(family="synchronous f = w^2/2", N=50, S=50, K=K, x0=1.0), fed


def _rr_instance(N, K):
    c = np.where(np.arange(N) < N // 2, 1.0, -1.0)[:, None]
    return dict(family="round robin c_n = +-1", N=N, S=1, K=K, x0=0.0), X.tdma_quadratic(A=[1.0], c=c)


def _theorem1_printed_samples(quick, seed):
    cases = [_sync_instance(2), _rr_instance(50, 200)]
    if not quick:
        cases += [_sync_instance(K) for K in (10, 30, 100)] + [_rr_instance(60, 200), _rr_instance(100, 400)]
    out = []
    for p, fed in cases:
        N, S, K = p["N"], p["S"], p["K"]
        eta = float(B.beta_value(S=S, B=1, L=1.0, N=N, M=1.0)) / math.sqrt(K + 1)
        t = tm.tdma_schedule(N=N, S=S, tau_comp=1, r=1, K=K)
        m = X.exact_moments(fed, t, eta=eta, x0=[p["x0"]])
        cs = X.quadratic_constants(fed, [p["x0"]])
        bound = float(B.theorem1_bound(eta=eta, L=1.0, M=1.0, B=1, S=S, N=N, K=K, sigma=0.0, Gamma=cs.Gamma,
                                       Delta=cs.Delta, g0=cs.g0))
        out.append(Sample(float(np.mean(m.grad_sq[: K + 1, 0])), bound,
                          {**p, "eta": eta, "L": 1, "M": 1, "B": 1, "sigma": 0, "Gamma": cs.Gamma, "Delta": cs.Delta},
                          None, float(N + K)))
    return out


def _theorem1_corrected_samples(quick, seed):
    out = []
    for p, t, z, cs in quadratic_instances(seed, quick, small_eta=True):
        K = p["K"]
        dbar = p["G"] - 1 - p["alpha"]
        v = float(np.mean(z.a[: K + 1]))
        b = float(B.theorem1_corrected(eta=p["eta"], L=p["L"], sigma=p["sigma"], S=p["S"], B=p["B"], M=1.0,
                                       Delta=cs.Delta, K=K, dbar=dbar, Gamma=cs.Gamma, lam=1.0))
        out.append(Sample(v, b, {**p, "dbar": dbar, "Delta": cs.Delta}, None, _size(p)))
    return out


def _quadratic_constrain(p):
    """Map raw searched parameters into Theorem 1''s hypotheses: alpha <= G - 1 (Algorithm 2), eta L = eta_frac x_max."""
    p["alpha"] = min(p["alpha"], p["G"] - 1)
    p["N"] = p["G"] * p["S"]
    if p["m"] == 1:
        p["A_spread"] = 1.0
    xm = float(B.x_max(dbar=p["G"] - 1 - p["alpha"], M=1.0, S=p["S"], B=p["B"]))
    p["eta"] = p["eta_frac"] * xm / p["L"]
    return p


QUADRATIC_FAMILY = Family(
    [Integer("G", 1, 6), Integer("S", 1, 4), Integer("alpha", 0, 5), Integer("m", 1, 3), Integer("B", 1, 8),
     Integer("K", 0, 40), Integer("tau_comp", 1, 30), Integer("r", 1, 2), Integer("seed", 0, 10**6),
     Real("L", 0.1, 2.0, log=True), Real("A_spread", 0.05, 1.0), Real("sigma", 0.0, 2.0), Real("c_scale", 0.0, 3.0),
     Real("x0_scale", 0.01, 5.0, log=True), Real("eta_frac", 0.01, 1.0)],
    constrain=_quadratic_constrain, fixed={"family": "quadratic (searched)"},
    description="quadratic clients f_n = 1/2 (w - c_n)^T diag(A) (w - c_n), A = L (1, u...) with u in [A_spread, 1], "
                "||c_n|| <= c_scale (Assumption 1 with L = max A, Assumption 3 with the exact Gamma = "
                "max_n ||A (c_n - cbar)||), per-sample additive noise of variance sigma^2 and mini-batch B "
                "(Assumption 2 with M = 1), N = G S devices, intentional delay alpha <= G - 1 (dbar = G - 1 - alpha), "
                "w_0 = x0_scale times a random unit vector, eta L = eta_frac x_max (the step condition of Theorem 1' "
                "with lambda = 1); the directions are drawn from the instance's seed; expectations exact")


@functools.lru_cache(maxsize=512)
def _quadratic_terms(key):
    p = dict(key)
    rng = _rng(p["seed"], "search-quadratic")
    m, N = p["m"], p["N"]
    A = p["L"] * np.concatenate([[1.0], rng.uniform(p["A_spread"], 1.0, m - 1)])
    c = rng.normal(size=(N, m))
    c *= p["c_scale"] / max(float(np.linalg.norm(c, axis=1).max()), 1e-300)
    x0 = rng.normal(size=m)
    x0 *= p["x0_scale"] / max(float(np.linalg.norm(x0)), 1e-300)
    fed = X.tdma_quadratic(A=A, c=c, sigma=p["sigma"], B=p["B"])
    t = tm.tdma_schedule(N=N, S=p["S"], tau_comp=p["tau_comp"], r=p["r"], K=max(p["K"], 1), alpha=p["alpha"])
    return t, X.lemma_terms(fed, t, eta=p["eta"], x0=x0), X.quadratic_constants(fed, x0)


def _theorem1_corrected_evaluate(p):
    t, z, cs = _quadratic_terms(tuple(sorted(p.items())))
    K, dbar = p["K"], p["G"] - 1 - p["alpha"]
    v = float(np.mean(z.a[: K + 1]))
    b = float(B.theorem1_corrected(eta=p["eta"], L=p["L"], sigma=p["sigma"], S=p["S"], B=p["B"], M=1.0,
                                   Delta=cs.Delta, K=K, dbar=dbar, Gamma=cs.Gamma, lam=1.0))
    return Sample(v, b, dict(p), None, float(p["N"] * p["m"] + K))


# ============================================================================= searched lemma families (issue 21)
def _general_constrain(p, *, lemma4=False):
    """Raw searched parameters into the lemmas' hypotheses (see ``GENERAL_FAMILY``/``LEMMA4_FAMILY``)."""
    if lemma4:                      # Lemma 4: S | N, no intentional delay, K >= 2G (K counts rounds 0..K)
        p["N"] = p["G"] * p["S"]
        p["alpha"] = 0
        p["K"] = 2 * p["G"] + 1 + p["K_extra"]   # schedule rounds: the lemma's K = 2G + K_extra
    else:
        p["S"] = min(p["S"], p["N"])
        G = -(-p["N"] // p["S"])
        p["alpha"] = min(p["alpha"], G - 1) if p["N"] % p["S"] == 0 else 0   # Algorithm 2 needs S | N
    if p["m"] == 1:
        p["A_spread"] = 1.0
    # the centres' size relative to ||w_0 - cbar||: c_scale = x0_scale c_rel ("below") or x0_scale / c_rel ("above")
    p["c_scale"] = p["x0_scale"] * (p["c_rel"] if p["c_side"] == "below" else 1.0 / p["c_rel"])
    p["eta"] = p["eta_L"] / p["L"]
    return p


def _general_params(lemma4=False):
    size = ([Integer("G", 1, 6), Integer("S", 1, 3), Integer("K_extra", 0, 10)] if lemma4 else
            [Integer("N", 1, 8), Integer("S", 1, 4), Integer("alpha", 0, 4), Integer("K", 1, 14)])
    return size + [
        Integer("m", 1, 2), Integer("B", 1, 8), Integer("tau_comp", 1, 20), Integer("r", 1, 2),
        Integer("seed", 0, 10**6), Choice("c_pattern", ("random", "pm")), Choice("x0_dir", ("random", "e1")),
        Choice("c_side", ("above", "below")), Real("c_rel", 0.05, 1.0), Real("L", 0.1, 3.0, log=True),
        Real("A_spread", 0.05, 1.0), Real("sigma", 0.0, 2.0), Real("x0_scale", 0.01, 5.0, log=True),
        Real("eta_L", 0.01, 2.5 if lemma4 else 2.0, log=True)]


_GENERAL_WORDS = (
    "quadratic clients f_n = 1/2 (w - c_n)^T diag(A) (w - c_n) with a common curvature A = L (1, u) (u in "
    "[A_spread, 1]; L != 1; a common curvature because Assumption 3 fails on quadratics whose Hessians differ: "
    "their gradient differences grow linearly in w), centres c_n either -c_scale e_1 (n < N/2) and +c_scale e_1 ('pm': two opposite "
    "groups) or random with max_n ||c_n|| = c_scale ('random'), w_0 = cbar + x0_scale times e_1 or a random unit "
    "vector, c_scale = x0_scale c_rel or x0_scale / c_rel (every ratio in [0, 20]); Assumption 1 with L = max A, "
    "Assumption 3 with the exact Gamma = max_n ||A (c_n - cbar)|| (the gradient differences are constant), "
    "Assumption 2 with M = 1 and per-sample additive noise of variance sigma^2, mini-batches of B samples (the "
    "exact engine has no multiplicative noise, so M = 1 and rho = 0); eta = eta_L / L with any eta_L > 0 (the lemmas "
    "have no step condition); every expectation exact (exact.lemma_terms); ")
GENERAL_FAMILY = Family(
    _general_params(), constrain=_general_constrain, fixed={"family": "quadratic (searched lemmas)"},
    description=_GENERAL_WORDS + "N devices in groups of S with N not necessarily divisible by S (staleness "
    "ceil((N - u)/S) - 1), intentional delay alpha <= G - 1 where S | N, rounds K >= 1 (the worst round is kept)")
LEMMA4_FAMILY = Family(
    _general_params(lemma4=True), constrain=functools.partial(_general_constrain, lemma4=True),
    fixed={"family": "quadratic (searched Lemma 4)"},
    description=_GENERAL_WORDS + "N = G S devices (Lemma 4 assumes S | N), alpha = 0, rounds 0..K with K = 2G + "
    "K_extra (Lemma 4 needs K >= 2G), eta_L up to 2.5 (Lemma 4 re-indexes any non-negative sequence, diverging runs included)")


@functools.lru_cache(maxsize=1024)
def _general_terms(key):
    p = dict(key)
    rng = _rng(p["seed"], "search-general")
    m, N = p["m"], p["N"]
    A = p["L"] * np.concatenate([[1.0], rng.uniform(p["A_spread"], 1.0, m - 1)])
    if p["c_pattern"] == "pm":
        c = np.zeros((N, m))
        c[:, 0] = np.where(np.arange(N) < N / 2, -1.0, 1.0)
    else:
        c = rng.normal(size=(N, m))
        c /= max(float(np.linalg.norm(c, axis=1).max()), 1e-300)
    c *= p["c_scale"]
    if p["x0_dir"] == "e1":
        x0 = np.eye(m)[0]
    else:
        x0 = rng.normal(size=m)
        x0 /= max(float(np.linalg.norm(x0)), 1e-300)
    x0 = c.mean(axis=0) + p["x0_scale"] * x0
    fed = X.tdma_quadratic(A=A, c=c, sigma=p["sigma"], B=p["B"])
    t = tm.tdma_schedule(N=N, S=p["S"], tau_comp=p["tau_comp"], r=p["r"], K=p["K"], alpha=p["alpha"])
    if "K_extra" in p:        # Lemma 4 needs a_k = E||grad f(w_k)||^2 only (no covariances, no lags: cheaper)
        return t, np.asarray(X.exact_moments(fed, t, eta=p["eta"], x0=x0).grad_sq[:, 0]), None
    return t, X.lemma_terms(fed, t, eta=p["eta"], x0=x0), X.quadratic_constants(fed, x0)


def _general(p):
    return _general_terms(tuple(sorted((k, v) for k, v in p.items() if k not in ("k", "horizon"))))


def _round_sample(p, v, rhs):
    j = _pick(v, rhs)
    q = {k_: v_ for k_, v_ in p.items() if k_ != "k"}
    return Sample(float(v[j]), float(rhs[j]), {**q, "k": [int(x) for x in j]}, None,
                  float(p["N"] * p["m"] + p["K"]))


def _lemma1_corrected_evaluate(p):
    t, z, cs = _general(p)
    rhs = B.lemma1_corrected(f_k=z.f[:-1], a_k=z.a[:-1], sum_h=z.sum_h, sum_D=z.sum_D, eta=p["eta"], M=1.0, L=p["L"],
                             S=p["S"], B=p["B"], Gamma=cs.Gamma, sigma=p["sigma"], lam=1.0)
    return _round_sample(p, z.f[1:], rhs)


def _lemma2_corrected_evaluate(p):
    t, z, cs = _general(p)
    return _round_sample(p, z.sum_h, B.lemma2_corrected(Gamma=cs.Gamma, S=p["S"], sum_gf=z.sum_gf, lam=1.0))


def _lemma3_corrected_evaluate(p):
    t, z, cs = _general(p)
    rhs = B.lemma3_corrected(eta=p["eta"], d=z.d.astype(float), window_H=z.window_H, M=1.0, S=p["S"], B=p["B"],
                             sigma=p["sigma"])
    return _round_sample(p, z.drift, rhs)


def _descent_evaluate(p, *, summed):
    t, z, cs = _general(p)
    if summed:
        v, rhs = _summed_descent_terms(p, z, cs.Gamma)
        j = int(_pick(v, rhs)[0])
        q = {k_: v_ for k_, v_ in p.items() if k_ != "horizon"}
        return Sample(float(v[j]), float(rhs[j]), {**q, "horizon": j}, None, float(p["N"] * p["m"] + p["K"]))
    return _round_sample(p, z.f[1:], _round_descent_rhs(p, z, cs.Gamma))


def _lemma4_evaluate(p, *, which):
    t, a, _ = _general(p)
    K = p["K"] - 1                             # the rounds 0..K of the schedule's K + 1 models
    if which == "27":
        v = float(a[t.khat[: K + 1]].sum())
        b = float(B.lemma4_27(N=p["N"], S=p["S"], K=K, g0=a[0], sum_a=a[: K + 1].sum()))
    else:                                      # sum_k sum_{n in S_k} sum_{j=khat_n}^{k-1} sum_{n' in S_j} a_{jhat_n'}
        c_gf = np.concatenate([[0.0], np.cumsum(a[t.khat].sum(1))])
        v = float((c_gf[np.arange(K + 1)[:, None]] - c_gf[t.khat[: K + 1]]).sum())
        b = float(B.lemma4_28(N=p["N"], S=p["S"], K=K, g0=a[0], sum_a=a[: K + 1].sum()))
    return Sample(v, b, dict(p), None, float(p["N"] * p["m"] + p["K"]))


def _minibatch_constrain(p):
    if p["m"] == 1:
        p["A_spread"] = 1.0
    return p


MINIBATCH_FAMILY = Family(
    [Integer("m", 1, 3), Integer("B", 1, 4), Integer("seed", 0, 10**6), Real("a", 0.0, 1.5), Real("z0", 0.0, 2.0),
     Real("grad_scale", 0.01, 5.0, log=True), Real("sigma_slack", 0.0, 1.0), Real("M_slack", 0.0, 1.0)],
    constrain=_minibatch_constrain, fixed={"family": "per-sample population (searched)"},
    description="a per-sample gradient g(w, zeta) = s (grad f_n(w) - v) over the population zeta = (s, v) in "
                "{1 - a, 1 + a} x {+z0 u, -z0 u} (uniform; u a seeded unit vector, grad f_n(w) a seeded vector of "
                "norm grad_scale in R^m): unbiased, multiplicative (s) and additive (v) noise together, "
                "E||g||^2 = (1 + a^2)(||grad f_n||^2 + z0^2), so (19) holds with sigma^2 = (1 + a^2) z0^2 (1 + "
                "sigma_slack) and M = (1 + a^2)(1 + M_slack) (equality at zero slack); E||g_B||^2 exact by "
                "enumerating all 4^B mini-batches of B independent samples")


def _minibatch_evaluate(p):
    rng = _rng(p["seed"], "search-minibatch")
    m, Bb, a = p["m"], p["B"], p["a"]
    grad = rng.normal(size=m)
    grad *= p["grad_scale"] / max(float(np.linalg.norm(grad)), 1e-300)
    u = rng.normal(size=m)
    u /= max(float(np.linalg.norm(u)), 1e-300)
    pop = np.array([s * (grad - v * p["z0"] * u) for s in (1 - a, 1 + a) for v in (1.0, -1.0)])   # (4, m)
    idx = np.stack(np.meshgrid(*[np.arange(4)] * Bb, indexing="ij"), -1).reshape(-1, Bb)         # every batch
    gB = pop[idx].mean(axis=1)
    value = float((gB * gB).sum(-1).mean())
    sigma2 = (1 + a * a) * p["z0"] ** 2 * (1 + p["sigma_slack"])
    M = (1 + a * a) * (1 + p["M_slack"])
    bound = float(B.assumption2_minibatch_corrected(sigma=float(np.sqrt(sigma2)), B=Bb, M=M, grad_n=float(grad @ grad)))
    return Sample(value, bound, dict(p), None, float(m + Bb))


def _theorem1_order_samples(quick, seed):
    rng = _rng(seed, "order")
    out = []
    for _ in range(5 if quick else 20):
        S, G, Bb = int(rng.integers(1, 20)), int(rng.integers(1, 20)), int(rng.integers(1, 64))
        N = S * G
        kw = dict(L=float(rng.uniform(0.1, 10)), M=float(rng.uniform(0.1, 10)), B=Bb, S=S, N=N,
                  sigma=float(rng.uniform(0, 5)), Gamma=float(rng.uniform(0, 5)), Delta=float(rng.uniform(0.01, 5)))
        g0 = float(rng.uniform(0, 2 * kw["L"] * kw["Delta"]))
        K = 10**14
        eta = float(B.beta_value(S=S, B=Bb, L=kw["L"], N=N, M=kw["M"])) / math.sqrt(K + 1)
        v = math.sqrt(K + 1) * float(B.theorem1(eta=eta, K=K, g0=g0, **kw))
        out.append(Sample(v, float(B.theorem1_order(**kw)), {**kw, "g0": g0, "K": K}, None, 0.0))
    return out


def rate_run(K: int, *, exact: bool):
    """(30)'s counterexample: N = S = 1, f = w^2/2, w_0 = 1 (beta = 1, Delta = 1/2, sigma = Gamma = 0) at the step
    eta = beta/(K+1), which (29) allows.  ``(1/(K+1)) sum_k ||grad f(w_k)||^2`` with ``w_k = (1 - eta)^k``: from the
    exact engine (``exact``) or in closed form (a geometric sum; for the long horizons)."""
    beta = float(B.beta_value(S=1, B=1, L=1.0, N=1, M=1.0))
    eta = beta / (K + 1)
    if exact:
        fed = X.tdma_quadratic(A=[1.0], c=[[0.0]])
        m = X.exact_moments(fed, tm.tdma_schedule(N=1, S=1, tau_comp=1, r=1, K=K), eta=eta, x0=[1.0])
        return eta, float(np.mean(np.asarray(m.grad_sq)[: K + 1, 0]))
    q = (1.0 - eta) ** 2
    return eta, float(-np.expm1((K + 1) * np.log(q)) / (1.0 - q) / (K + 1))


RATE_HORIZONS = (2, 100, 10**4, 10**6)


def _theorem1_rate_samples(quick, seed):
    """(30) against exact runs at eta = beta/(K+1): the average tends to (1 - e^{-2})/2 = 0.4323, not O(1/sqrt K)."""
    out = []
    for K in RATE_HORIZONS[: 3 if quick else None]:
        eta, v = rate_run(K, exact=K <= 100)
        b = float(B.theorem1_rate(eta=eta, K=K, Delta=0.5, L=1.0, M=1.0, B=1, S=1, N=1, sigma=0.0, Gamma=0.0))
        out.append(Sample(v, b, dict(family="f = w^2/2, N = S = 1, w_0 = 1", K=K, eta=eta, beta=1.0, Delta=0.5,
                                     exact_engine=K <= 100), None, float(K)))
    return out


# ============================================================================= the algorithm's equations
def _by_the_lines(fed, t, eta, x0):
    """Algorithm 1 typed line by line on the simulator's groups S_k: the model index (12) (0 before a device's
    first uplink, else the round after it; synchronous FL (7): the newest model), the aggregate (11) and (5)."""
    grads = lambda w: np.asarray(fed.grad_clients_at(w))                # noqa: E731  (N, m): grad f_n(w)
    w, last = [np.asarray(x0, float)], {}
    for k in range(t.K):
        g = np.zeros_like(w[0])
        for n in t.clients[k]:
            kh = k if t.scheme == "sync" else (0 if n not in last else last[n] + 1)
            g += grads(w[kh])[n]
        w.append(w[k] - eta / t.S * g)
        last.update({int(n): k for n in t.clients[k]})
    return np.stack(w)


# Fig. 2's example (13)-(14): N = 6, S = 2, tau_comp = 2, r = 1 -- S_0 = {1, 2}, S_1 = {3, 4}, S_2 = {5, 6} (0-based
# here), both rounds 0 and 1 on w_0, staleness 2 in round 2, and w_1, w_2 of (13)-(14)
FIG2 = dict(N=6, S=2, tau_comp=2, r=1)


def _update_rule_samples(quick, seed):
    """The batched simulator (:func:`~.algorithm.afl_tdma`, noiseless quadratic clients) against the update typed
    from (5), (7), (11), (12) and Algorithm 1 line 12, asynchronous and synchronous; and Fig. 2's example."""
    rng = _rng(seed, "update-rule")
    out = []
    fed = X.tdma_quadratic(A=[1.0, 0.5], c=rng.normal(size=(6, 2)))
    t = tm.tdma_schedule(K=3, **FIG2)
    x0, eta = np.array([1.0, -1.0]), 0.3
    w = to_numpy(ALG.afl_tdma(fed, t, eta=eta, x0=x0).w)[:, 0]
    g = np.asarray(fed.grad_clients_at(x0))
    text = [x0 - eta / 2 * (g[0] + g[1]), x0 - eta / 2 * (g[0] + g[1]) - eta / 2 * (g[2] + g[3])]      # (13), (14)
    err = _mismatch(t.clients, [[0, 1], [2, 3], [4, 5]]) + _mismatch(t.khat[:2], 0) + _mismatch(t.staleness[2], 2)
    out.append(Sample(err + _mismatch(w[1:3], text), 0.0, dict(example="Fig. 2, (13)-(14)", **FIG2), None, 0.0))
    for i in range(4 if quick else 16):
        G, S = int(rng.integers(1, 5)), int(rng.integers(1, 4))
        N = G * S + (int(rng.integers(0, S)) if i % 2 else 0)          # S | N, and not
        m, K = int(rng.integers(1, 4)), int(rng.integers(1, 4 * G + 4))
        scheme = "sync" if i % 4 == 3 else "async"
        fed = X.tdma_quadratic(A=rng.uniform(0.1, 1, m), c=rng.normal(size=(N, m)))
        t = tm.tdma_schedule(N=N, S=S, tau_comp=int(rng.integers(1, 20)), r=int(rng.integers(1, 3)), K=K, scheme=scheme)
        x0, eta = rng.normal(size=m), float(rng.uniform(0.05, 1.0))
        w = to_numpy(ALG.afl_tdma(fed, t, eta=eta, x0=x0).w)[:, 0]
        out.append(Sample(float(np.abs(w - _by_the_lines(fed, t, eta, x0)).max()), 0.0,
                          dict(N=N, S=S, m=m, K=K, scheme=scheme, eta=eta), None, float(N + K)))
    return out


# ============================================================================= registry
def _reg(name, statement, sampler, **kw):
    return register(Check(f"{PAPER}.{name}", paper=PAPER, statement=statement, sampler=sampler, **kw))


_ID = dict(relation="==", rtol=0.0, atol=0.5)      # integer identities: any mismatch is a whole slot or round
_EX = dict(rtol=1e-9, atol=1e-12)                  # exact expectations: round-off only

_reg("update_rule", None, _update_rule_samples, relation="==", rtol=0.0, atol=1e-9,
     description="the batched simulator against (5), (7), (11), (12) and Algorithm 1 line 12 typed line by line "
                 "(asynchronous and synchronous, S | N and not), and Fig. 2's example (13)-(14)")
_reg("staleness_printed", B.staleness_printed, lambda q, s: _staleness15_samples(q, s, printed=True), **_ID,
     expected="violated",
     description="(15) as printed, min(k, G-1) with G = ceil(N/S) for any N, against the simulator: at N = 5, S = 2 "
                 "the second uplink of every round from k = 3 on carries staleness 1, (15) says 2",
     falsifies="equation", still_stands="(15)-(16) with S | N added (staleness, exact) and, for any N, the per-uplink "
                                         "law ceil((N - u)/S) - 1 (staleness_general, exact)")
_reg("staleness", B.staleness, _staleness15_samples, **_ID,
     description="(15)-(16) with S | N added: d = min(k, G-1) against the slot-level simulator (random tau_comp, r)")
_reg("staleness_idfl", None, _staleness_samples, **_ID,
     description="staleness under intentional delay, min(k, G-1-alpha), against the simulator (every alpha)")
_reg("staleness_general", B.staleness_general, _staleness_general_samples, **_ID,
     description="any N (S not dividing N): k, then ceil((N-u)/S) - 1 for the u-th uplink, against the simulator")
_reg("end_times", None, _end_time_samples, **_ID,
     description="exact end slots E_k in both regimes (asynchronous, intentional delay, synchronous) against the simulator")
_reg("tau_async_printed", B.tau_async_printed, _tau_async_printed_samples, relation="==", rtol=1e-12, atol=0.0,
     expected="violated",
     description="(9)-(10) as printed, G = ceil(N/S) for any N, against the exact long-run average slots per round of "
                 "the simulator: N = 5, S = 2, tau_comp = 30, r = 1 takes 16 slots a round, (10) says 11",
     falsifies="equation", still_stands="(9)-(10) with S | N added, exact over every window of G rounds (tau_async)")
_reg("tau_async", B.tau_async, _tau_async_samples, relation="==", rtol=1e-12, atol=0.0,
     description="(9)-(10) with S | N added, as the exact average (E_{k+G} - E_k)/G of every window of G rounds")
_reg("khat_idfl", B.khat_idfl, lambda q, s: _khat_samples(q, s, corrected=False), **_ID, expected="violated",
     description="(31) is one round off at k = G - alpha .. G for every alpha: at N = 6, S = 2, alpha = 1, k = 2 the "
                 "devices use w_1, (31) says w_0; at alpha = 0, k = G (N = 4, S = 2) w_1 against w_0 "
                 "(Proposition 1 and the staleness G - 1 - alpha still stand)",
     falsifies="equation", still_stands="Algorithm 2, the staleness min(k, G - 1 - alpha), Proposition 1 (32)-(33) and the "
                                      "corrected (31) (khat_idfl_corrected) all hold against the simulator")
_reg("khat_idfl_corrected", B.khat_idfl_corrected, lambda q, s: _khat_samples(q, s, corrected=True), **_ID,
     description="corrected (31) against the simulator for every alpha in 0..G-1")
_reg("prop1_alpha", B.prop1_alpha, _prop1_samples, **_ID,
     description="Proposition 1 (32)-(33) against a brute-force search of the largest alpha keeping every E_k "
                 "(random channels; MNIST S = 1..100 and Fig. 6/7 alpha = 74, 94, 98)")
_reg("prop1_condition", B.prop1_condition, _prop1_condition_samples, **_ID,
     description="(34)-(36): for tau_comp < r (G-1)(S+1), alpha keeps every E_k of asynchronous FL iff "
                 "r (G - alpha - 1)(S + 1) >= tau_comp, every alpha in 0..G-1 against the simulator")
_reg("rounds_loop_bound", B.rounds_loop_bound, lambda q, s: _rounds_samples(q, s, printed=True), **_ID,
     expected="violated",
     description="Algorithm 1's loop bound floor(T/tau_async) is not the number of rounds that end by T (Table I: "
                 "50000 vs 49998 at S = 1); (10) itself stands as an average",
     falsifies="algorithm line", still_stands="(10) as the exact average slots per round over any G rounds, and Table I "
                                              "as the rounds that end by T plus one (rounds_done, table1)")
_reg("rounds_done", B.rounds_done, lambda q, s: _rounds_samples(q, s, printed=False), **_ID,
     description="K_done(T) in closed form against the simulator, random deadlines and Table I")
_reg("table1", B.rounds_done, lambda q, s: _table1_rows(q), **_ID,
     description="Table I (CIFAR-10) as K_done + 1 = 49999/33333/16667/9091/4001 and the MNIST rounds by T = 50000")
_reg("staleness_sum", B.staleness_sum, _staleness_sum_samples, relation="==", rtol=1e-12, atol=1e-9,
     description="sum_k sum_n d_{n,k} = S (G-1)(K - G/2 + 1) for K >= G-1 (the sum inside Q4)")
_reg("smoothness_descent", B.smoothness_descent, _smoothness_samples, rtol=1e-8, atol=1e-12, family=SMOOTH_FAMILY,
     evaluate=_smooth_evaluate, search_budget=(30, 120),
     description="(18) on separable L-smooth functions (quadratic, log cosh); equality on a quadratic along the "
                 "direction of curvature L")
_reg("assumption2_minibatch", B.assumption2_minibatch, lambda q, s: _minibatch_samples(q, s, corrected=False),
     expected="violated", **_EX,
     description="(20) is false for B > 1: a noiseless per-sample gradient (sigma = 0, M = 1) has E||g_B||^2 = "
                 "||grad f_n||^2, not ||grad f_n||^2 / B",
     falsifies="remark", still_stands="(19) per sample, and (20) with sigma^2/B + (1 + (M-1)/B)||grad f_n||^2 "
                                      "(assumption2_minibatch_corrected, tight)")
_reg("assumption2_minibatch_corrected", B.assumption2_minibatch_corrected,
     lambda q, s: _minibatch_samples(q, s, corrected=True), **_EX, family=MINIBATCH_FAMILY,
     evaluate=_minibatch_evaluate, search_budget=(40, 150),
     description="sigma^2/B + (1 + (M-1)/B)||grad f_n||^2, tight on additive noise")
_reg("lemma1", B.lemma1, lambda q, s: _lemma1_samples(q, s, corrected=False), expected="violated", **_EX,
     description="Lemma 1 (22) is false: f = w^2/2, N = S = 2, eta = 0.1, w_0 = 1 gives f(w_1) = 0.405 > 0.4025 "
                 "(proof steps (A.5)-(A.6) and (A.9)); Lemma 1' stands",
     falsifies="lemma", still_stands="Lemma 1' (lemma1_corrected): tight on this very instance")
_reg("lemma1_corrected", B.lemma1_corrected, lambda q, s: _lemma1_samples(q, s, corrected=True), **_EX,
     family=GENERAL_FAMILY, evaluate=_lemma1_corrected_evaluate, search_budget=(16, 80),
     description="Lemma 1' (lambda = 1) against exact expectations; equality on the Lemma 1 counterexample")
_reg("lemma2", B.lemma2, lambda q, s: _lemma2_samples(q, s, corrected=False), expected="violated", **_EX,
     description="Lemma 2 (23) is false: it drops the cross term, so a group whose drift is aligned with grad f "
                 "breaks it (round robin of 3 devices)",
     falsifies="lemma", still_stands="Lemma 2 with Young's inequality, (1 + 1/lambda) Gamma^2 S + (1 + lambda) sum "
                                     "||grad f||^2 (lemma2_corrected)")
_reg("lemma2_corrected", B.lemma2_corrected, lambda q, s: _lemma2_samples(q, s, corrected=True), **_EX,
     family=GENERAL_FAMILY, evaluate=_lemma2_corrected_evaluate, search_budget=(16, 80),
     description="Lemma 2 with Young's inequality (lambda = 1) against exact expectations")
_reg("lemma3", B.lemma3, lambda q, s: _lemma3_samples(q, s, corrected=False), expected="violated", **_EX,
     description="Lemma 3 (24) is false: (B.1) loses the Cauchy-Schwarz factor d S, so a drift of d >= 2 nearly "
                 "equal steps exceeds it",
     falsifies="lemma", still_stands="Lemma 3' per device, 2 eta^2 (d + rho) sum H_j + 2 eta^2 d sigma^2/(SB) "
                                     "(lemma3_corrected)")
_reg("lemma3_corrected", B.lemma3_corrected, lambda q, s: _lemma3_samples(q, s, corrected=True), **_EX,
     family=GENERAL_FAMILY, evaluate=_lemma3_corrected_evaluate, search_budget=(16, 80),
     description="Lemma 3' per device against exact drifts E||w_k - w_khat||^2")
_reg("round_descent", B.round_descent, lambda q, s: _descent_samples(q, s, summed=False), expected="violated", **_EX,
     family=GENERAL_FAMILY, evaluate=functools.partial(_descent_evaluate, summed=False), search_budget=(8, 40),
     description="(25), Lemma 1 with Lemmas 2 and 3 substituted, is false: on Lemma 1's instance (f = w^2/2, N = S = "
                 "2, eta = 0.1, w_0 = 1) E f(w_1) = 0.405 > 0.4025 (it inherits Lemma 1's error, and substitutes Lemma 2 "
                 "into a coefficient eta^2 ML - eta SB that is negative for eta < SB/(ML))",
     falsifies="proof step", still_stands="Lemma 1' and Lemma 3' (lemma1_corrected, lemma3_corrected), summed into "
                                           "Theorem 1' (theorem1_corrected)")
_reg("summed_descent", B.summed_descent, lambda q, s: _descent_samples(q, s, summed=True), expected="violated", **_EX,
     family=GENERAL_FAMILY, evaluate=functools.partial(_descent_evaluate, summed=True), search_budget=(8, 40),
     description="(26), (25) summed over k = 0..K, is false: on Lemma 1's instance at K = 0 its left side is 0.195 "
                 "and its right side 0.19",
     falsifies="proof step", still_stands="Theorem 1' (theorem1_corrected), which sums Lemma 1' and Lemma 3' instead")
_reg("lemma4_27", B.lemma4_27, lambda q, s: _lemma4_samples(q, s, which="27"), **_EX, family=LEMMA4_FAMILY,
     evaluate=functools.partial(_lemma4_evaluate, which="27"), search_budget=(16, 100),
     description="Lemma 4 (27) on exact a_k (K >= 2G)")
_reg("lemma4_28", B.lemma4_28, lambda q, s: _lemma4_samples(q, s, which="28"), **_EX, family=LEMMA4_FAMILY,
     evaluate=functools.partial(_lemma4_evaluate, which="28"), search_budget=(24, 150),
     description="Lemma 4 (28) on exact a_k (K >= 2G)")
_reg("lemma4_exact", B.lemma4_exact, lambda q, s: _lemma4_samples(q, s, which="exact"), relation="==", rtol=1e-10,
     atol=1e-12, description="(C.1) exactly: sum_k sum_n a_khat = N a_0 + S sum_{k=1}^{K-G+1} a_k")
_reg("theorem1", B.theorem1, _theorem1_printed_samples, expected="violated", **_EX,
     description="Theorem 1's explicit bound (Q2+Q3+Q4)/Q1 is false: synchronous N = S = 50, K = 2 diverges "
                 "(142.8) while the bound is -0.804; round robin S = 1, N = 50, K = 200: 0.01996 > 0.01069. "
                 "(A.9), (A.5) and the sign steps (25)/(D.1) fail; Theorem 1' stands",
     falsifies="theorem", still_stands="Theorem 1' with its (1 + 1/lambda) Gamma^2 floor and step condition "
                                       "(theorem1_corrected), Lemma 4 (27)-(28), and the O(1/sqrt K) order of the printed "
                                       "expression itself at eta = beta/sqrt(K+1) (theorem1_order)")
_reg("theorem1_order", B.theorem1_order, _theorem1_order_samples, relation="==", rtol=1e-4, atol=0.0,
     description="(30): sqrt(K+1) times the explicit bound tends to Delta/beta + beta L (sigma^2 + M Gamma^2)/(2SB) "
                 "(K = 1e14): the bound's O(1/sqrt K) order at the largest step stands (its constant grows like G), but the "
                 "bound is false, and (30) for every step of (29) is false too (theorem1_rate)")
_reg("theorem1_rate", B.theorem1_rate, _theorem1_rate_samples, expected="violated", **_EX,
     description="(30) is false as printed: (29) only asks eta <= beta/sqrt(K+1), and at eta = beta/(K+1) (N = S = 1, "
                 "f = w^2/2, w_0 = 1, beta = 1) the average squared gradient tends to (1 - e^-2)/2 = 0.4323, so "
                 "sqrt(K) times it grows without bound (43 at K = 1e4, 432 at K = 1e6) against any constant; the "
                 "verdict uses the constant of the paper's own derivation, Delta/beta + beta L (sigma^2 + M Gamma^2)/"
                 "(2SB) (theorem1_order)",
     falsifies="theorem", still_stands="Theorem 1' (theorem1_corrected, tight), and the O(1/sqrt K) order of the "
                                       "explicit expression at the largest step eta = beta/sqrt(K+1) (theorem1_order): "
                                       "the rate needs eta of order 1/sqrt(K), which (29) does not ask")
_reg("theorem1_corrected", B.theorem1_corrected, _theorem1_corrected_samples, **_EX, family=QUADRATIC_FAMILY,
     evaluate=_theorem1_corrected_evaluate, search_budget=(50, 200),
     description="Theorem 1' (lambda = 1, eta L <= x_max) against exact E||grad f(w_k)||^2, AFL and intentional delay")
