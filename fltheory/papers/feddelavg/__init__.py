"""FedDelAvg -- "Federated Learning with Communication Delay in Edge Networks" (Lin, Brinton, Michelusi).

Rooms:

* ``algorithm`` -- the batched FedDelAvg simulator (period tau, delay Delta, weight alpha), the lemma
  quantities it records, and a plain per-client loop reference;
* ``exact`` -- on quadratic clients one period is an affine map: fixed point, spectral radius,
  exact trajectory, asymptotic gap and the exactly optimal alpha;
* ``bounds`` / ``checks`` -- the paper's statements and their checks.
"""
from . import algorithm, bounds, exact
from .bounds import alpha_star, delta_threshold
from .algorithm import FedDelAvgRecord, FedDelAvgResult, feddelavg, feddelavg_loop
from .exact import alpha_comparison, asymptotic_gap, exact_optimal_alpha, exact_trajectory, period_map

__all__ = [
    "algorithm", "bounds", "exact", "alpha_star", "delta_threshold",
    "FedDelAvgRecord", "FedDelAvgResult", "feddelavg", "feddelavg_loop",
    "alpha_comparison", "asymptotic_gap", "exact_optimal_alpha", "exact_trajectory", "period_map",
]
