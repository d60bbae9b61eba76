"""FedDelAvg -- "Federated Learning with Communication Delay in Edge Networks" (Lin, Brinton, Michelusi).

Rooms:

* ``algorithm`` -- the batched FedDelAvg simulator (period tau, delay Delta, weight alpha), the lemma
  quantities it records, and a plain per-client loop reference;
* ``exact`` -- on quadratic clients one period is an affine map: fixed point, spectral radius,
  exact trajectory, asymptotic gap and the exactly optimal alpha;
* ``tuning`` -- the exactly best alpha (and eta) at a horizon beside alpha* (``best_step_size``);
* ``bounds`` / ``checks`` -- the paper's statements and their checks.
"""
from . import algorithm, bounds, exact, tuning
from .bounds import alpha_star, delta_threshold
from .algorithm import FedDelAvgRecord, FedDelAvgResult, feddelavg, feddelavg_loop
from .tuning import best_step_size
from .exact import alpha_comparison, asymptotic_gap, exact_optimal_alpha, exact_trajectory, period_map

__all__ = [
    "algorithm", "bounds", "exact", "tuning", "best_step_size", "alpha_star", "delta_threshold",
    "FedDelAvgRecord", "FedDelAvgResult", "feddelavg", "feddelavg_loop",
    "alpha_comparison", "asymptotic_gap", "exact_optimal_alpha", "exact_trajectory", "period_map",
]
