"""Door table of the TDMA paper (Song & Hong): every public entry point of fltheory.papers.tdma."""
import numpy as np
from doorkit import Door

from fltheory.papers.tdma import algorithm as td_alg
from fltheory.papers.tdma import bounds as td_bounds
from fltheory.papers.tdma import exact as td_exact
from fltheory.papers.tdma import timing as td_timing

TD_FED = td_exact.tdma_quadratic(A=[1.0, 0.5], c=[[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]], sigma=0.5, B=2)
TD_TM = td_timing.tdma_schedule(N=4, S=2, tau_comp=3, r=1, K=8)
CH = dict(N=6, S=2, tau_comp=3, r=1)
CH_KINDS = {"N": "count", "S": "count", "tau_comp": "count", "r": "count"}

CHOICES = {"async", "sync"}

DOORS = [
    Door("tdma.tdma_schedule", lambda **k: td_timing.tdma_schedule(**k), dict(CH, K=5, alpha=0, scheme="async"),
         {**CH_KINDS, "K": "count0", "alpha": "count0", "scheme": "choice"}),
    Door("tdma.groups", lambda **k: td_timing.groups(**k), dict(N=6, S=2), {"N": "count", "S": "count"}),
    Door("tdma.staleness", lambda **k: td_timing.staleness(**k), dict(N=6, S=2, k=3, slot=0, alpha=0),
         {"N": "count", "S": "count", "k": "count0_vector", "slot": "count0", "alpha": "count0"}),
    Door("tdma.khat", lambda **k: td_timing.khat(**k), dict(N=6, S=2, k=3, alpha=1),
         {"N": "count", "S": "count", "k": "count0_vector", "alpha": "count0"}),
    Door("tdma.end_time", lambda **k: td_timing.end_time(**k), dict(CH, k=3, alpha=0, scheme="async"),
         {**CH_KINDS, "k": "count0_vector", "alpha": "count0", "scheme": "choice"}),
    Door("tdma.rounds_done", lambda **k: td_timing.rounds_done(**k), dict(CH, T=100, alpha=0),
         {**CH_KINDS, "T": "count0", "alpha": "count0"}),
    Door("tdma.tau_async", lambda **k: td_timing.tau_async(**k), dict(CH), CH_KINDS),
    Door("tdma.tau_sync", lambda **k: td_timing.tau_sync(**k), dict(S=2, tau_comp=3, r=1),
         {"S": "count", "tau_comp": "count", "r": "count"}),
    Door("tdma.d_star", lambda **k: td_timing.d_star(**k), dict(CH), CH_KINDS),
    Door("tdma.alpha_star", lambda **k: td_timing.alpha_star(**k), dict(CH), CH_KINDS),
    Door("tdma.lag", lambda **k: td_timing.lag(**k), dict(N=6, S=2, alpha=1, scheme="async"),
         {"N": "count", "S": "count", "alpha": "count0", "scheme": "choice"}),
    Door("tdma.TDMATiming.rounds_done", lambda T: TD_TM.rounds_done(T), dict(T=20), {"T": "count0"}),
    Door("tdma.tdma_quadratic", lambda **k: td_exact.tdma_quadratic(**k),
         dict(A=np.array([1.0, 0.5]), c=np.ones((3, 2)), sigma=0.5, B=2),
         {"A": ("array", (2,), "strict"), "c": ("array", (3, 2)), "sigma": "nonneg_real", "B": "count"}),
    Door("tdma.quadratic_constants", lambda x0: td_exact.quadratic_constants(TD_FED, x0), dict(x0=np.zeros(2)),
         {"x0": ("array", (2,), "strict")}),
    Door("tdma.exact_moments", lambda **k: td_exact.exact_moments(TD_FED, TD_TM, **k), dict(eta=0.2, x0=np.zeros(2), H=1),
         {"eta": "pos_real", "x0": ("array", (2,), "strict"), "H": "count"}),
    Door("tdma.lemma_terms", lambda **k: td_exact.lemma_terms(TD_FED, TD_TM, **k), dict(eta=0.2, x0=np.zeros(2)),
         {"eta": "pos_real", "x0": ("array", (2,), "strict")}),
    Door("tdma.rate_per_slot", lambda **k: td_exact.rate_per_slot(TD_FED, **k),
         dict(N=4, S=2, tau_comp=3, r=1, eta=0.2, alpha=0, H=1),
         {"N": "count", "S": "count", "tau_comp": "count", "r": "count", "eta": "pos_real", "alpha": "count0",
          "H": "count"}),
    Door("tdma.loss_at_deadline", lambda **k: td_exact.loss_at_deadline(TD_FED, **k),
         dict(T=30, tau_comp=3, r=1, S=2, eta=0.2, x0=np.zeros(2)),
         {"T": "count0", "tau_comp": "count", "r": "count", "S": "count", "eta": "pos_real",
          "x0": ("array", (2,), "strict")}),
    Door("tdma.afl_tdma", lambda **k: td_alg.afl_tdma(TD_FED, TD_TM, **k),
         dict(eta=0.2, x0=np.zeros(2), H=1, replicates=2, seed=0, record_every=2),
         {"eta": "pos_real", "x0": ("array", (2,), "strict"), "H": "count", "replicates": "count", "seed": "count0",
          "record_every": "count"}),
    Door("tdma.beta_value", lambda **k: td_bounds.beta_value(**k), dict(S=2, B=1, L=1.0, N=6, M=1.0),
         {"S": "count", "B": "count", "L": "pos_real", "N": "count", "M": "pos_real"}),
    Door("tdma.beta_root", lambda **k: td_bounds.beta_root(**k), dict(S=2, B=1, L=1.0, N=6, M=1.0),
         {"S": "count", "B": "count", "L": "pos_real", "N": "count", "M": "pos_real"}),
    Door("tdma.x_max", lambda **k: td_bounds.x_max(**k), dict(dbar=2, M=1.0, S=2, B=1, lam=1.0),
         {"dbar": "count0", "M": "pos_real", "S": "count", "B": "count", "lam": "pos_real"}),
    Door("tdma.staleness_average", lambda **k: td_bounds.staleness_average(**k), dict(dbar=2, K=9),
         {"dbar": "count0", "K": "count0"}),
    Door("tdma.theorem1_bound", lambda **k: td_bounds.theorem1_bound(**k),
         dict(eta=0.01, L=1.0, M=1.0, B=1, S=2, N=6, K=10, sigma=0.5, Gamma=0.5, Delta=1.0, g0=1.0),
         {"eta": "pos_real", "L": "pos_real", "sigma": "nonneg_real", "Delta": "nonneg_real"}),
    Door("tdma.theorem1_corrected_bound", lambda **k: td_bounds.theorem1_corrected_bound(**k),
         dict(eta=0.05, L=1.0, sigma=0.5, S=2, B=1, M=1.0, Delta=1.0, K=10, dbar=2, Gamma=0.5, lam=1.0),
         {"eta": "pos_real", "L": "pos_real", "sigma": "nonneg_real", "Gamma": "nonneg_real"}),
]
