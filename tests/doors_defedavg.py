"""Door rows of the DeFedAvg paper (collected by tests/test_doors.py)."""
from __future__ import annotations

import numpy as np

from doorkit import Door
from fltheory import delayed as D
from fltheory import schedules as S
from fltheory.papers.defedavg import algorithm as A
from fltheory.papers.defedavg import bounds as B
from fltheory.papers.defedavg import checks as C
from fltheory.papers.defedavg import events as E
from fltheory.papers.defedavg import exact as X
from fltheory.problems import LogisticFederation, PseudoHuberFederation

CHOICES = {"overwrite", "energy", "zero", "constant", "uniform", "cyclic", "per_client"}

_FED = X.iid_federation(a=[1.0, 0.5], N=3, sigma2=0.1)
_NFED = X.niid_federation(a=[1.0, 0.5], b=[[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0]], sigma2=0.1)
_S = E.iid_oracle(N=3, n=2, T=5, delay="constant", lam=1)
_RNG = np.random.default_rng(0)
_TOY = LogisticFederation.from_client_data([_RNG.normal(size=(4, 3)) for _ in range(3)],
                                           [np.array([0, 1, 2, 0])] * 3, n_classes=3, reg=0.1)
_HUBER = PseudoHuberFederation(b=[[0.0, 1.0], [2.0, 0.0], [1.0, -2.0]], delta=1.0)
_C = np.array([1.0, 2.0, 3.0])
_M = X.niid_moments(_NFED, n=2, T=3, K=2, eta=1.0, eta_bar=0.1, x0=np.zeros(2), lam=1, record_cov=True)
_T = dict(N=3, n=2, T=4, K=2, compute=_C, t_dl=0.1, t_ul=0.1)
_TK = {"N": "count", "n": "count", "T": "count0", "K": "count", "compute": ("array", (3,)), "t_dl": "nonneg_real",
       "t_ul": "nonneg_real"}
_TH = dict(n=2, K=3, L=1.0, sigma2=1.0, Phi0=1.0)
_THK = {"n": "count", "K": "count", "L": "pos_real", "sigma2": "pos_real", "Phi0": "pos_real"}

DOORS = [
    Door("pop_full_steps", lambda **k: S.pop_full_steps([(0, 0), (1, 0)], **k), dict(n=2, t=0, T=3),
         {"n": "count", "t": "count0", "T": "count0"}),
    Door("client_draws", lambda **k: D.client_draws(**k), dict(seeds=[0], T=3, N=4, n=2),
         {"T": "count0", "N": "count", "n": "count"}),
    Door("random_participation_moments(record_cov, record_lags)",
         lambda **k: D.random_participation_moments(
             _NFED, D.LocalSGD(eta_local=0.1, K=1), eta=1.0, T=2, x0=np.zeros(2),
             participation=D.RandomParticipation.with_replacement(N=3, n=2), **k),
         dict(record_cov=True, record_lags=True), {"record_cov": "flag", "record_lags": "flag"}),
    Door("defedavg.checks.theorem2_sample", lambda: C.theorem2_sample(C.counterexample_params(), B.theorem2), {}, {}),
    Door("defedavg.prescribed_rates", lambda **k: B.prescribed_rates(**k), dict(T=100, G2=1.0, **_TH),
         {**_THK, "T": "count", "G2": "nonneg_real_or_none"}),
    Door("defedavg.T_min", lambda **k: B.T_min(**k), dict(lam=2, G2=1.0, **_TH), {**_THK, "lam": "count", "G2": "nonneg_real_or_none"}),
    Door("defedavg.rounds_to_epsilon", lambda **k: B.rounds_to_epsilon(**k), dict(epsilon=0.1, **_TH),
         {**_THK, "epsilon": "pos_real"}),
    Door("defedavg.n_max", lambda **k: B.n_max(**k), dict(K=2, lam=1, sigma2=1.0, epsilon=0.1, G2=1.0),
         {"K": "count", "lam": "count", "sigma2": "pos_real", "epsilon": "pos_real", "G2": "nonneg_real_or_none"}),
    Door("defedavg.niid_events", lambda **k: E.niid_events(**k), dict(policy="energy", seeds=[0], **_T),
         {**_TK, "policy": "choice"}),
    Door("defedavg.fedbuff_events", lambda **k: E.fedbuff_events(**k), dict(_T), dict(_TK)),
    Door("defedavg.fedavg_schedule", lambda **k: E.fedavg_schedule(**k), dict(_T), dict(_TK)),
    Door("defedavg.oracle_delays", lambda **k: E.oracle_delays(**k), dict(delay="uniform", N=3, T=4, lam=2),
         {"delay": "choice", "N": "count", "T": "count0", "lam": "count0"}),
    Door("defedavg.oracle_delays(per_client)", lambda D: E.oracle_delays(delay="per_client", N=3, T=4, lam=2, D=D),
         dict(D=np.array([0, 1, 2])), {"D": ("array", (3,))}),
    Door("defedavg.niid_oracle", lambda **k: E.niid_oracle(**k), dict(N=3, n=2, T=4, delay="cyclic", lam=1),
         {"N": "count", "n": "count", "T": "count0", "delay": "choice", "lam": "count0"}),
    Door("defedavg.iid_oracle", lambda **k: E.iid_oracle(**k), dict(N=3, n=2, T=4, delay="constant", lam=1),
         {"N": "count", "n": "count", "T": "count0", "delay": "choice", "lam": "count0"}),
    Door("defedavg.defedavg", lambda **k: A.defedavg(_FED, _S, **k), dict(K=2, eta=1.0, eta_bar=0.1, x0=np.ones(2), seed=0),
         {"K": "count", "eta": "pos_real", "eta_bar": "pos_real", "x0": ("array", (2,), "strict"), "seed": "count0"}),
    Door("defedavg.defedavg(logistic)", lambda **k: A.defedavg(_TOY, _S, **k),
         dict(K=2, eta=1.0, eta_bar=0.1, x0=np.zeros(_TOY.d), seed=0, sigma2=0.01),
         {"K": "count", "eta": "pos_real", "eta_bar": "pos_real", "x0": ("array", (_TOY.d,), "strict"),
          "seed": "count0", "sigma2": "sigma2"}),
    Door("defedavg.asysg(pseudo-Huber)", lambda **k: A.asysg(_HUBER, _S, **k),
         dict(eta=0.5, x0=np.ones(2), seed=0, sigma2=0.01),
         {"eta": "pos_real", "x0": ("array", (2,), "strict"), "seed": "count0", "sigma2": "sigma2"}),
    Door("defedavg.asysg", lambda **k: A.asysg(_FED, _S, **k), dict(eta=0.5, x0=np.ones(2), seed=0),
         {"eta": "pos_real", "x0": ("array", (2,), "strict"), "seed": "count0"}),
    Door("defedavg.fedavg_loop", lambda **k: A.fedavg_loop(_FED, **k),
         dict(n=2, T=2, K=1, eta=1.0, eta_bar=0.1, x0=np.ones(2), seed=0),
         {"n": "count", "T": "count0", "K": "count", "eta": "pos_real", "eta_bar": "pos_real",
          "x0": ("array", (2,), "strict"), "seed": "count0"}),
    Door("defedavg.iid_federation", lambda **k: X.iid_federation(**k), dict(a=np.ones(2), N=2, sigma2=0.1),
         {"a": ("array", (2,), "free"), "N": "count", "sigma2": "nonneg_real"}),
    Door("defedavg.niid_federation", lambda **k: X.niid_federation(**k), dict(a=np.ones(2), b=np.ones((2, 2)), sigma2=0.1),
         {"a": ("array", (2,)), "b": ("array", (2, 2)), "sigma2": "nonneg_real"}),
    Door("defedavg.moments", lambda **k: X.moments(_FED, _S, **k),
         dict(K=2, eta=1.0, eta_bar=0.1, x0=np.ones(2), record_cov=True, record_lags=True),
         {"K": "count", "eta": "pos_real", "eta_bar": "pos_real", "x0": ("array", (2,), "strict"), "record_cov": "flag",
          "record_lags": "flag"}),
    Door("defedavg.niid_moments", lambda **k: X.niid_moments(_NFED, **k),
         dict(n=2, T=2, K=1, eta=1.0, eta_bar=0.1, x0=np.zeros(2), lam=1, delay="uniform", record_cov=True,
              record_lags=True),
         {"n": "count", "T": "count0", "K": "count", "eta": "pos_real", "eta_bar": "pos_real",
          "x0": ("array", (2,), "strict"), "lam": "count0", "delay": "choice", "record_cov": "flag",
          "record_lags": "flag"}),
    Door("defedavg.assumption_constants", lambda **k: X.assumption_constants(_NFED, _M, **k), dict(K=2, eta_bar=0.1),
         {"K": "count", "eta_bar": "pos_real"}),
    Door("defedavg.running_average", lambda grad_sq: X.running_average(grad_sq), dict(grad_sq=np.ones(3)),
         {"grad_sq": ("array", (3,), "free")}),
    Door("defedavg.first_crossing", lambda **k: X.first_crossing(**k), dict(avg=np.ones(3), epsilon=0.5),
         {"avg": ("array", (3,), "free"), "epsilon": "pos_real"}),
    Door("defedavg.loglog_slope", lambda **k: X.loglog_slope(**k), dict(x=np.array([1.0, 2.0]), y=np.array([2.0, 1.0])),
         {"x": ("array", (2,)), "y": ("array", (2,))}),
    Door("defedavg.linear_speedup", lambda **k: X.linear_speedup(**k),
         dict(a=np.ones(1), sigma2=1.0, ns=[1, 2], K=1, lam=1, epsilon=0.9, x0=np.ones(1), max_T=50),
         {"sigma2": "pos_real", "K": "count", "lam": "count0", "epsilon": "pos_real", "x0": ("array", (1,), "strict"),
          "max_T": "count"}),
]
