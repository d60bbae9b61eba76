"""Asynchronous FL over a TDMA channel -- Song & Hong, "Asynchronous Federated Learning Using
Outdated Local Updates Over TDMA Channel".

Rooms:

* ``timing`` -- the slot-level channel as event rules on the core engine (synchronous FL,
  Algorithm 1, Algorithm 2 with intentional delay) and its closed forms: staleness, end times,
  rounds by a deadline, Table I, Proposition 1;
* ``algorithm`` -- the batched simulator driven by the schedule (quadratic clients with noise, and
  the logistic toy);
* ``exact`` -- exact moments along the schedule, the lemma quantities, and the exact rate per slot
  from the period map of the round robin;
* ``tuning`` -- the exactly best step size at a horizon beside Theorem 1's (``best_step_size``);
* ``bounds`` / ``checks`` -- the paper's statements (printed and corrected) and their checks.
"""
from . import algorithm, bounds, exact, timing, tuning
from .algorithm import TDMARun, afl_tdma
from .exact import exact_moments, lemma_terms, loss_at_deadline, rate_per_slot, tdma_quadratic
from .tuning import best_step_size
from .timing import (TDMATiming, alpha_star, d_star, end_time, groups, khat, rounds_done, staleness, table1,
                     tau_async, tau_sync, tdma_schedule)

__all__ = [
    "algorithm", "bounds", "exact", "timing", "tuning", "best_step_size", "TDMARun", "afl_tdma", "exact_moments", "lemma_terms",
    "loss_at_deadline", "rate_per_slot", "tdma_quadratic", "TDMATiming", "tdma_schedule", "groups", "staleness", "khat", "end_time", "rounds_done",
    "tau_async", "tau_sync", "alpha_star", "d_star", "table1",
]
