"""AFL-DGA -- "Anarchic Federated Learning with Delayed Gradient Averaging" (Li, Gong).

Rooms:

* ``algorithm`` -- the batched AFL-DGA simulator driven by a participation schedule (three
  correction modes), the proofs' diagnostics, a literal reference loop, the baselines (FedAvg,
  DGA, mini-batch SGD, normalised averaging, stale-memory SGD) and the timing model;
* ``exact`` -- on quadratic clients with additive noise the whole method is a sequence of affine
  register assignments: exact means and second moments, client states included;
* ``tuning`` -- the exactly best step size at a horizon beside Corollary 1's (``best_step_size``);
* ``bounds`` / ``checks`` -- the paper's statements (printed and corrected) and their checks.
"""
from . import algorithm, exact, tuning
from .algorithm import (MODES, AFLDGADiagnostics, AFLDGARecord, AFLDGAResult, RoundDurations, afl_dga, afl_dga_loop,
                        correction_coefficients, dga, diagnostics, fedavg, minibatch_sgd, normalized_averaging,
                        round_durations, stale_sgd)
from .exact import AFLDGAMoments, afl_dga_exact
from .tuning import best_step_size

__all__ = [
    "algorithm", "exact", "tuning", "best_step_size", "MODES", "AFLDGADiagnostics", "AFLDGARecord", "AFLDGAResult", "RoundDurations", "afl_dga",
    "afl_dga_loop", "correction_coefficients", "dga", "diagnostics", "fedavg", "minibatch_sgd", "normalized_averaging",
    "round_durations", "stale_sgd", "AFLDGAMoments", "afl_dga_exact",
]
