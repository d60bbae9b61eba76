"""Door table of the AFL-DGA paper (Li & Gong): every public entry point of fltheory.papers.afl_dga and the core
pieces it added (the pseudo-Huber and linear federations, the participation generators)."""
import numpy as np
from doorkit import FED, H2, W3, XO, Door

import fltheory as flt
from fltheory import schedules as S
from fltheory.papers.afl_dga import algorithm as ad_alg
from fltheory.papers.afl_dga import bounds as ad_bounds
from fltheory.papers.afl_dga import exact as ad_exact

AD_PART = S.Participation(np.array([[1, 0, 1, 1], [1, 1, 0, 1], [1, 1, 1, 1]]), K=2, D=1, weights=W3)
AD_NOISY = flt.QuadraticFederation(H2, XO, W3, sigma2=0.1)
AD_RES = ad_alg.afl_dga(FED, AD_PART, eta=0.1, w0=np.zeros(2), record=True)
W0 = np.zeros(2)
CORO = dict(L=1.0, N=10, Delta=1.0, sigma2=1.0, G2=2.0, K_m=10, D_m=20, t_d=2)
THM = dict(L=1.0, N=10, T=10**4, eta=0.01, Delta=1.0, sigma2=1.0, G2=2.0, K_m=10, D_m=20)

CHOICES = {"analysis", "paper_text", "alg1_literal", "theory", "experiments"}

DOORS = [
    Door("afl_dga.afl_dga", lambda **k: ad_alg.afl_dga(AD_NOISY, AD_PART, **k),
         dict(eta=0.1, w0=W0, mode="analysis", runs=2, seed=0, record=False),
         {"eta": "pos_real", "w0": ("array", (2,)), "mode": "choice", "runs": "count_or_none", "seed": "count0",
          "record": "flag"}),
    Door("afl_dga.afl_dga_loop", lambda **k: ad_alg.afl_dga_loop(FED, AD_PART, **k),
         dict(eta=0.1, w0=W0, mode="paper_text", check_identity=False, runs=2),
         {"eta": "pos_real", "w0": ("array", (2,)), "mode": "choice", "check_identity": "flag",
          "runs": "count_or_none"}),
    Door("afl_dga.diagnostics", lambda: ad_alg.diagnostics(FED, AD_RES), dict(), {}),
    Door("afl_dga.correction_coefficients", lambda mode: ad_alg.correction_coefficients(AD_PART, mode),
         dict(mode="alg1_literal"), {"mode": "choice"}),
    Door("afl_dga.fedavg", lambda **k: ad_alg.fedavg(AD_NOISY, **k), dict(eta=0.1, K=2, T=3, w0=W0, runs=2, seed=1),
         {"eta": "pos_real", "K": "count", "T": "count", "w0": ("array", (2,)), "runs": "count_or_none", "seed": "count0"}),
    Door("afl_dga.dga", lambda **k: ad_alg.dga(FED, **k), dict(eta=0.1, K=2, D=3, T=3, w0=W0),
         {"eta": "pos_real", "K": "count", "D": "count0", "T": "count"}),
    Door("afl_dga.minibatch_sgd", lambda **k: ad_alg.minibatch_sgd(FED, **k), dict(eta=0.1, T=3, w0=W0),
         {"eta": "pos_real", "T": "count"}),
    Door("afl_dga.normalized_averaging", lambda **k: ad_alg.normalized_averaging(FED, **k), dict(eta=0.1, K=2, T=3, w0=W0),
         {"eta": "pos_real", "K": "count", "T": "count"}),
    Door("afl_dga.stale_sgd", lambda **k: ad_alg.stale_sgd(FED, AD_PART, **k), dict(eta=0.1, w0=W0, seed=0),
         {"eta": "pos_real", "w0": ("array", (2,)), "seed": "count0"}),
    Door("afl_dga.round_durations", lambda **k: ad_alg.round_durations(AD_PART, **k), dict(d=0.5, tail=True),
         {"d": "pos_real", "tail": "flag"}),
    Door("afl_dga.afl_dga_exact", lambda **k: ad_exact.afl_dga_exact(AD_NOISY, AD_PART, **k),
         dict(eta=0.1, w0=W0, mode="analysis"), {"eta": "pos_real", "w0": ("array", (2,)), "mode": "choice"}),
    Door("afl_dga.rho_hat_max", lambda **k: ad_bounds.rho_hat_max(**k), dict(t_d=2, D_m=20, K_min=10),
         {"t_d": "count", "D_m": "count0", "K_min": "count"}),
    Door("afl_dga.rho_hat_extra", lambda **k: ad_bounds.rho_hat_extra(**k), dict(t_d=2, D_m=20, K_min=10),
         {"t_d": "count", "D_m": "count0", "K_min": "count"}),
    Door("afl_dga.corollary_thresholds", lambda **k: ad_bounds.corollary_thresholds(**k), dict(CORO),
         {"L": "pos_real", "N": "count", "Delta": "nonneg_real", "sigma2": "nonneg_real", "G2": "pos_real",
          "K_m": "count", "D_m": "count0", "t_d": "count"}),
    Door("afl_dga.theorem1_parts", lambda **k: ad_bounds.theorem1_parts(S_bar=30, **k), dict(THM),
         {"eta": "pos_real", "L": "pos_real", "G2": "pos_real"}),
    Door("afl_dga.theorem1_corrected_parts", lambda **k: ad_bounds.theorem1_corrected_parts(K_min=10, t_d=2, **k),
         dict(THM), {"eta": "pos_real", "L": "pos_real", "G2": "pos_real"}),
    Door("afl_dga.theorem1", lambda **k: ad_bounds.theorem1(S_bar=30, **k), dict(THM),
         {"eta": "pos_real", "Delta": "nonneg_real"}, names={"Delta": "Delta"}),
    # core pieces added for this paper
    Door("PseudoHuberFederation", lambda **k: flt.problems.PseudoHuberFederation(**k),
         dict(b=np.ones((3, 2)), delta=1.0, scale=2.0, weights=W3),
         {"b": ("array", (3, 2), "free"), "delta": "pos_real", "scale": "pos_real", "weights": ("array", (3,))}),
    Door("LinearFederation", lambda **k: flt.problems.LinearFederation(**k), dict(c=np.ones((3, 2)), weights=W3),
         {"c": ("array", (3, 2), "free"), "weights": ("array", (3,))}),
    Door("synchronous_participation", lambda **k: S.synchronous_participation(**k), dict(N=3, T=4, K=2, D=1),
         {"N": "count", "T": "count", "K": "count", "D": "count0"}),
    Door("anarchic_participation", lambda **k: S.anarchic_participation(**k),
         dict(N=3, T=6, t_d=2, p=0.5, K=1, D=0, seed=0, td_convention="theory"),
         {"N": "count", "T": "count", "t_d": "count", "K": "count", "D": "count0", "seed": "count0",
          "td_convention": "choice"}),
    Door("fast_k_participation", lambda **k: S.fast_k_participation(**k),
         dict(N=3, T=6, k=1, t_d=2, K=1, D=0, spread=0.5, seed=0, td_convention="theory"),
         {"N": "count", "T": "count", "t_d": "count", "K": "count", "D": "count0", "spread": "nonneg_real",
          "seed": "count0", "td_convention": "choice"}),
    Door("participation_from_tau", lambda tau: S.participation_from_tau(tau), dict(tau=np.array([[1, 2, 1], [1, 1, 1]])),
         {"tau": ("array", (2, 3), "free")}),
]
