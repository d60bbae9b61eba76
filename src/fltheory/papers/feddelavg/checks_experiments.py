r"""The experimental claims of Section IV of FedDelAvg, each checked on small batched simulations over several seeds.

The paper's experiment: N = 10 devices, one writer's MNIST digits each (non-iid), multinomial logistic regression,
full-batch GD, tau = 10 local steps, delay Delta = 9 (and 0 for comparison), K = 100 aggregations; the model judged
is the average w(k tau - Delta), the only one the cloud has.  MNIST cannot be loaded offline and is slow at this
size, so the checks run the same protocol on a synthetic non-iid softmax federation (:func:`mixture_federation`):
10 devices, each holding samples of two of C Gaussian classes (label skew, so delta > 0), L2 1e-3, eta beta = 0.25
(the scale of the digits toy at the paper's eta = 0.02), the weights alpha on a grid and Delta in {0, 3, 6, 9}.
"Convergence speed" is the mean optimality gap of the candidates w(k tau - Delta), k = 0..K (the area under the
training-loss curve), accuracy the test accuracy of w(K tau - Delta) on a held-out set of N_TEST = 2000 samples per class.

The claims, as the paper states them (each a check; the numbers 78 %, 10 % and 3 % are MNIST's):

* ``exp_small_alpha_beats_fedavg`` (Fig. 2): under delay (Delta = 9) some alpha < 1 converges faster than FedAvg
  (alpha = 1) -- the paper: 78 % fewer iterations to 80 % accuracy;
* ``exp_alpha_02_best`` (Fig. 2): alpha = 0.2 is the best weight at Delta = 9;
* ``exp_fedavg_best_without_delay`` (Fig. 3, (22)): without delay FedAvg (alpha = 1) converges fastest;
* ``exp_delay_robust_iterations``: FedDelAvg with its best alpha at Delta = 9 needs only about 10 % more iterations
  than the benchmark (FedAvg, Delta = 0) to reach the benchmark's level (here: the training loss the benchmark
  reaches at t = T/5);
* ``exp_final_accuracy_within_3pct``: after the K aggregations it is within 3 % (points) of the benchmark's accuracy;
* ``exp_fedavg_degraded_under_delay``: "whereas FedAvg has a severely degraded performance": FedAvg at Delta = 9
  ends outside that 3 % band;
* ``exp_alpha_moves_with_delay`` (Sec. III-A's alpha* against Delta, seen in the experiment): the empirically best
  alpha does not increase with the delay.

Instances: ``size`` "small" (C = 3 classes, 4 features, 10 samples per device, K = 40, alpha in {0.1, 0.2, 0.3, 0.5,
1}: the quick level) or "paper" (C = 4, 6 features, 20 samples per device, K = 100 as in the paper, alpha in {0.05,
0.1, 0.2, 0.3, 0.5, 0.7, 1}); ``seed`` draws the class means and the samples, ``sep`` the class separation (final
accuracies from about 60 % to 99 %).  One batched run per instance serves every claim (cached).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ...backend import KeyedStream, to_numpy
from ... import validation as V
from ...problems import LogisticFederation
from ...verify import Sample
from .algorithm import feddelavg

TAU, DELTA, DELTAS, EB = 10, 9, (0, 3, 6, 9), 0.25   # the paper's tau and Delta; eta beta as on the digits toy
SIZES = {"small": dict(C=3, m=4, n=10, K=30, alphas=(0.1, 0.2, 0.3, 0.5, 1.0)),
         "paper": dict(C=4, m=6, n=20, K=100, alphas=(0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0))}
N_DEVICES = 10
# held-out samples per class: the binomial standard error of an accuracy near 0.7 is then about 0.6 points over 3 classes
# (with 100 per class it was 2.6 points, and a 3-point claim turned on one sample of 300)
N_TEST = 2000


def mixture_federation(seed: int, *, sep: float, C: int, m: int, n: int, M: int = N_DEVICES, reg: float = 1e-3):
    """A non-iid softmax federation: C Gaussian classes in R^m with means ``sep * N(0, I)`` and unit noise; device i
    holds ``n`` samples of the two classes i mod C and (i + 1) mod C.  Returns ``(fed, X_test, y_test)`` with N_TEST
    test samples per class (drawn after the training data, so their number does not change the runs)."""
    rng = KeyedStream(int(seed), f"feddelavg-experiment-{sep!r}-{C}-{m}-{n}-{M}").generator()
    mu = sep * rng.normal(size=(C, m))
    Xs, ys = [], []
    for i in range(M):
        y = rng.choice(np.array([i % C, (i + 1) % C]), n)
        Xs.append(mu[y] + rng.normal(size=(n, m)))
        ys.append(y)
    y_test = np.repeat(np.arange(C), N_TEST)
    X_test = mu[y_test] + rng.normal(size=(y_test.size, m))
    return LogisticFederation.from_client_data(Xs, ys, n_classes=C, reg=reg), X_test, y_test


@dataclass(frozen=True)
class Experiment:
    """One instance's runs: ``gap[d, a, k] = F(w(k tau - Delta)) - F*`` and ``acc[d, a, k]`` (test accuracy) for
    Delta = DELTAS[d], alpha = alphas[a], k = 0..K."""

    alphas: np.ndarray
    Deltas: np.ndarray
    gap: np.ndarray
    acc: np.ndarray
    K: int

    def at(self, Delta, alpha):
        return int(np.flatnonzero(self.Deltas == Delta)[0]), int(np.flatnonzero(np.isclose(self.alphas, alpha))[0])

    @property
    def speed(self) -> np.ndarray:
        """The mean optimality gap over the candidates k = 0..K, (nDelta, nalpha): smaller is faster."""
        return self.gap.mean(-1)

    def best_alpha(self, Delta) -> float:
        return float(self.alphas[int(np.argmin(self.speed[self.at(Delta, 1.0)[0]]))])

    def iterations_to(self, Delta, alpha, target) -> float:
        """Local steps k tau until F(w(k tau - Delta)) - F* <= target (inf: not within T = K tau)."""
        hit = np.flatnonzero(self.gap[self.at(Delta, alpha)] <= target)
        return float(hit[0] * TAU) if hit.size else np.inf


@functools.lru_cache(maxsize=32)
def experiment(seed: int, sep: float, size: str) -> Experiment:
    """Every (Delta, alpha) of the grid on one federation, in one batched call."""
    cfg = SIZES[size]
    fed, X_test, y_test = mixture_federation(seed, sep=sep, C=cfg["C"], m=cfg["m"], n=cfg["n"])
    alphas, Deltas = np.array(cfg["alphas"]), np.array(DELTAS)
    run = feddelavg(fed, eta=EB / float(fed.beta), tau=TAU, Delta=Deltas[:, None], alpha=alphas[None, :], K=cfg["K"])
    gap = np.asarray(to_numpy(run.losses), float) - float(fed.F_star)
    acc = np.asarray(to_numpy(fed.accuracy(run.w_periods, X_test, y_test)), float)
    return Experiment(alphas, Deltas, gap, acc, cfg["K"])


def _instance(p: dict) -> tuple[dict, Experiment]:
    q = dict(seed=int(p["seed"]), sep=float(p["sep"]), size=str(p["size"]))
    return q, experiment(q["seed"], q["sep"], q["size"])


def claim(p: dict, *, which: str) -> Sample:
    """The Sample of claim ``which`` on the instance ``p`` (seed, sep, size); its params carry the numbers."""
    V.choice(which, "which", tuple(CLAIMS))
    q, E = _instance(p)
    s = E.speed
    d9, d0 = E.at(DELTA, 1.0)[0], E.at(0, 1.0)[0]
    a1 = E.at(DELTA, 1.0)[1]
    best9 = E.best_alpha(DELTA)
    i_best9 = E.at(DELTA, best9)
    bench = E.at(0, 1.0)
    if which == "small_alpha_beats_fedavg":
        value, bound = float(s[d9, :a1].min()), float(s[d9, a1])
        q.update(best_alpha=best9)
    elif which == "alpha_02_best":
        i = E.at(DELTA, 0.2)[1]
        value, bound = float(s[d9, i]), float(np.delete(s[d9], i).min())
        q.update(best_alpha=best9)
    elif which == "fedavg_best_without_delay":
        value, bound = float(s[d0, a1]), float(s[d0, :a1].min())
        q.update(best_alpha_Delta0=E.best_alpha(0))
    elif which == "delay_robust_iterations":
        target = float(E.gap[bench][E.K // 5])
        it_bench, it_best = E.iterations_to(0, 1.0, target), E.iterations_to(DELTA, best9, target)
        value, bound = it_best, 1.1 * it_bench
        q.update(best_alpha=best9, target=target, iterations_benchmark=it_bench, iterations_best=it_best,
                 iterations_fedavg_delayed=E.iterations_to(DELTA, 1.0, target))
    elif which == "final_accuracy_within_3pct":
        value, bound = float(E.acc[bench][-1] - E.acc[i_best9][-1]), 0.03
        q.update(best_alpha=best9, acc_benchmark=float(E.acc[bench][-1]), acc_best=float(E.acc[i_best9][-1]))
    elif which == "fedavg_degraded_under_delay":   # relation '>=': the bound is the larger side
        value, bound = float(E.acc[bench][-1] - E.acc[d9, a1][-1]), 0.03
        q.update(acc_benchmark=float(E.acc[bench][-1]), acc_fedavg_delayed=float(E.acc[d9, a1][-1]),
                 gap_ratio_fedavg_delayed=float(s[d9, a1] / s[d0, a1]))
    elif which == "alpha_moves_with_delay":
        best = np.array([E.best_alpha(D) for D in DELTAS])
        value, bound = float(np.max(np.diff(best))), 0.0
        q.update(best_alphas=best.tolist())
    else:
        raise ValueError(f"unknown claim {which!r}")
    return Sample(value, bound, q, None, float(E.gap.size))


def family():
    from ...search import Choice, Family, Integer, Real  # noqa: PLC0415

    return Family([Integer("seed", 0, 10**6), Real("sep", 1.0, 3.0), Choice("size", tuple(SIZES))],
                  description="Section IV's protocol on a synthetic non-iid softmax federation (10 devices, two of C "
                              "Gaussian classes each, L2 1e-3, full-batch GD, eta beta = 0.25, tau = 10, Delta in "
                              "{0, 3, 6, 9}, alpha on a grid): seed draws the data, sep in [1, 3] the class separation, "
                              "size 'small' (C = 3, K = 30) or 'paper' (C = 4, K = 100)")


# The quick level's instances (small): one where the best grid alpha at Delta = 9 is not 0.2 (seed 0, sep 1.5) and one
# with weakly separated classes (seed 0, sep 1.0), the lowest accuracies of a scan of the 40 small instances seed 0..7 x
# sep 1..3.  With 100 test samples per class that instance ended 10 samples of 300 (3.3 points) below the benchmark;
# with N_TEST = 2000 a scan of the 40 finds none outside 3 points, and FedAvg under delay more than 3 points below
# the benchmark on 15 of them.
DERIVED = (dict(seed=0, sep=1.5, size="small"), dict(seed=0, sep=1.0, size="small"))


def samples(quick: bool, seed: int, *, which: str) -> list:
    """``quick``: the two derived small instances; else also two paper-size instances (K = 100) of the run seed."""
    inst = list(DERIVED)
    if not quick:
        inst += [dict(seed=1000 * seed + 1, sep=sep, size="paper") for sep in (1.5, 2.5)]
    return [claim(p, which=which) for p in inst]


CLAIMS = {   # name: (relation, the paper's claim, expected verdict, what still stands when it is violated)
    "small_alpha_beats_fedavg": ("<=", "Fig. 2: under delay (Delta = 9) a weight alpha < 1 converges faster than "
                                 "FedAvg (alpha = 1): the grid's best alpha < 1 against alpha = 1 (mean gap)",
                                 "holds", ""),
    "alpha_02_best": ("<=", "Fig. 2: alpha = 0.2 is the best weight at Delta = 9: its mean gap against the best other "
                      "grid weight", "violated",
                      "a weight alpha < 1 beats FedAvg under delay (exp_small_alpha_beats_fedavg); the best grid weight "
                      "moves between 0.1, 0.2 and 0.3 with the data"),
    "fedavg_best_without_delay": ("<=", "Fig. 3 and (22): without delay FedAvg (alpha = 1) converges fastest: its mean "
                                  "gap against the best alpha < 1 at Delta = 0", "holds", ""),
    "delay_robust_iterations": ("<=", "FedDelAvg (best alpha, Delta = 9) reaches the benchmark's level with only 10 % "
                                "more iterations than FedAvg at Delta = 0: its iterations against 1.1 x the "
                                "benchmark's (level: the benchmark's loss at t = T/5)", "violated",
                                "FedDelAvg under delay reaches the level long before FedAvg under delay, which does "
                                "not reach it within T (exp_small_alpha_beats_fedavg)"),
    "final_accuracy_within_3pct": ("<=", "after K aggregations FedDelAvg (best alpha, Delta = 9) is within 3 % "
                                   "(points) of the benchmark's test accuracy: the benchmark's accuracy minus its own, "
                                   "against 0.03", "holds", ""),
    "fedavg_degraded_under_delay": (">=", "FedAvg under delay (alpha = 1, Delta = 9) is severely degraded: its test "
                                    "accuracy ends more than 3 points below the benchmark's", "violated",
                                    "in the training loss FedAvg under delay is degraded (mean gap 2-4 x the "
                                    "benchmark's); in test accuracy it mostly stays within 3 points"),
    "alpha_moves_with_delay": ("<=", "Sec. III-A's alpha* decreasing in Delta, in the experiment: the best grid alpha "
                               "(mean gap) does not increase from Delta = 0 to 3, 6, 9 (largest increase against 0)",
                               "holds", ""),
}
