"""What the checks of DeFedAvg find (``FINDINGS``) and which check covers each numbered result
(``RESULTS``): data for :mod:`fltheory.claims`; every number is a placeholder that a fresh report
fills in."""
from ...claims import Finding

P = "defedavg"
FINDINGS = (
    Finding(P, "Theorem 2 (14) and its appendix form",
            "the theorem: one client (N = {{param:defedavg.theorem2:N}}), σ² = {{param:defedavg.theorem2:sigma2}}, "
            "inside (13): exact {{value:defedavg.theorem2}} against {{bound:defedavg.theorem2}}",
            "√(128Lσ²Φ₀/(nKT)) + 8L/(KT), {{verdict:defedavg.theorem2_corrected}}; the proof's bound before the rates "
            "are substituted, {{verdict:defedavg.theorem2_general}}"),
    Finding(P, "the step of Lemma 9's proof under η̄ ≤ 1/(2√2LK)",
            "a proof step, for K ≥ 5 (ratio {{ratio:defedavg.lemma9_step}} at K = {{param:defedavg.lemma9_step:K}})",
            "Lemma 9 itself, {{verdict:defedavg.lemma9}}; under η̄ ≤ 1/(2√3LK) the step is "
            "{{verdict:defedavg.lemma9_step_corrected}}"),
    Finding(P, "Theorem 1 (12), constant 16",
            "nothing: {{verdict:defedavg.theorem1}}",
            "the exact constant 5, {{verdict:defedavg.theorem1_corrected}}; linear speedup at the Theorem 2 rates: "
            "fitted slope of the exact rounds to ε against n, {{worst:defedavg.linear_speedup}}"),
)
RESULTS = ()
