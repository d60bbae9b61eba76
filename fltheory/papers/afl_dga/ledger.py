"""What the checks of AFL-DGA find (``FINDINGS``) and which check covers each numbered result
(``RESULTS``): data for :mod:`fltheory.claims`; every number is a placeholder that a fresh report
fills in."""
from ...claims import Finding

P = "afl_dga"
FINDINGS = (
    Finding(P, "App. A eq. (2), E‖ḡ‖² ≤ (σ²+G²)/N",
            "a proof step: N = {{param:afl_dga.eq2:N}} identical clients give G² (ratio {{ratio:afl_dga.eq2}})",
            "≤ G², {{verdict:afl_dga.eq2_corrected}}"),
    Finding(P, "Lemma 1, and the lag count in its proof",
            "the lemma: linear clients with η = {{param:afl_dga.lemma1:eta}} ≤ 1/T (ratio {{ratio:afl_dga.lemma1}}); "
            "the count τ + τ′ − 1 fails once D_m > K_min (ratio {{ratio:afl_dga.lag_count_printed}})",
            "Lemma 1′ pathwise, {{verdict:afl_dga.lemma1_corrected}}; in expectation, "
            "{{verdict:afl_dga.lemma1_corrected_expectation}}; Lemma 2′, {{verdict:afl_dga.lemma2_rho}}"),
    Finding(P, "Theorem 1, under either reading of the step size (η ≤ 1/L or η ≤ 1/T)",
            "the theorem: a stale gradient reused for t_d steps, ratio {{ratio:afl_dga.theorem1}} at Corollary 1's η "
            "(N = {{param:afl_dga.theorem1:N}}, T = {{param:afl_dga.theorem1:T}}, t_d = {{param:afl_dga.theorem1:t_d}}), "
            "unchanged when rescaled to η = 1/T ({{ratio:afl_dga.theorem1_literal_step}})",
            "Theorem 1′: deterministic, {{verdict:afl_dga.theorem1_corrected_det}}; with noise, "
            "{{verdict:afl_dga.theorem1_corrected}} (its supremum is 1/2, approached as ηL → 0 without noise)"),
    Finding(P, "Corollary 1",
            "the corollary at its own step size (ratio {{ratio:afl_dga.corollary1}})",
            "Corollary 1′, {{verdict:afl_dga.corollary1_corrected}}; linear speedup proved for t_d = 1 or σ = 0, open "
            "in the anarchic stochastic case"),
)
RESULTS = ()
