"""DeFedAvg -- "Achieving Linear Speedup in Asynchronous Federated Learning with Heterogeneous Clients"
(Wang, Li, Jin, Zhang).

Rooms:

* ``events`` -- the event rules of DeFedAvg-nIID (draws with replacement, send/receive buffers, the
  ``overwrite`` and ``energy`` policies), FedBuff and synchronous FedAvg on a virtual clock, and the
  delay oracles (zero, constant, uniform, cyclic, per-client fixed); DeFedAvg-IID and AsySG use the
  core's first-``n``-arrivals schedule;
* ``algorithm`` -- batched simulators of DeFedAvg (both variants) and the baselines FedAvg, FedBuff,
  AsySG on quadratic, logistic and pseudo-Huber clients, driven by schedules, and a round-by-round
  FedAvg reference;
* ``exact`` -- exact E||grad F(w_t)||^2 on quadratics (over the noise, and over i.i.d. draws and
  delays), the exact constants of the assumptions along a run, rounds to epsilon and the fitted
  linear-speedup slope;
* ``tuning`` -- the exactly best learning rates at a horizon beside Theorem 2's (``best_step_size``);
* ``bounds`` / ``checks`` -- the paper's statements (printed and corrected) and their checks.
"""
from . import algorithm, bounds, events, exact, tuning
from .algorithm import DeFedAvgResult, asysg, defedavg, fedavg_loop
from .bounds import Rates, T_min, n_max, prescribed_rates, rounds_to_epsilon
from .events import fedavg_schedule, fedbuff_events, iid_oracle, niid_events, niid_oracle, oracle_delays
from .exact import assumption_constants, linear_speedup, moments, niid_moments
from .tuning import best_step_size

__all__ = [
    "algorithm", "bounds", "events", "exact", "tuning", "best_step_size", "DeFedAvgResult", "asysg", "defedavg", "fedavg_loop", "Rates", "T_min",
    "n_max", "prescribed_rates", "rounds_to_epsilon", "fedavg_schedule", "fedbuff_events", "iid_oracle",
    "niid_events", "niid_oracle", "oracle_delays", "assumption_constants", "linear_speedup", "moments",
    "niid_moments",
]
