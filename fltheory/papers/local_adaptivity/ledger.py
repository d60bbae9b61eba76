"""What the checks of the local-adaptivity paper find (``FINDINGS``) and which check covers each
numbered result (``RESULTS``): data for :mod:`fltheory.claims`; every number is a placeholder that
a fresh report fills in."""
from ...claims import Finding

P = "local_adaptivity"
FINDINGS = (
    Finding(P, "(68)/(72)/(73): decaying server LR for client SGD",
            "a constant: with the paper's β, α₀ = {{param:local_adaptivity.sgd_decaying_printed:alpha_0}} and the exact "
            "r₁ = {{value:local_adaptivity.sgd_decaying_printed}} against {{bound:local_adaptivity.sgd_decaying_printed}}",
            "the O(1/T) rate: β ≥ 2/a, r_t ≤ max{4C/a², βr₀}/(t+β), "
            "{{verdict:local_adaptivity.sgd_decaying_corrected}}"),
    Finding(P, "(129), the last line of Theorem 3's proof (an average over t)",
            "a proof step: a local-AdaGrad run beats it (ratio {{ratio:local_adaptivity.theorem3_printed}})",
            "the proof's bound (126) on the runs, {{verdict:local_adaptivity.theorem3_general}}; with "
            "2DL/T + 3(D²L²ΛG²)^{1/3}/T^{2/3} the step is {{verdict:local_adaptivity.theorem3_corrected}}; Theorem 3's "
            "statement (100), an O(·) claim on the minimum over t, is not refuted"),
    Finding(P, "(7) with c = 36, FedOpt with a constant server LR α < 1",
            "the theorem: the rate is (1−α(1−h̄))^T, not h̄^T (ratio {{ratio:local_adaptivity.theorem1_printed}} at "
            "T = {{param:local_adaptivity.theorem1_printed:T}}); it fails even with the server LRs chosen optimally for "
            "each T, on M = d = τ = 1 with C_q far below r₀: ratio "
            "{{ratio:local_adaptivity.theorem1_printed_best_schedule}} at C_q = "
            "{{param:local_adaptivity.theorem1_printed_best_schedule:Cq}}, r₀ = "
            "{{param:local_adaptivity.theorem1_printed_best_schedule:r0}}, T = "
            "{{param:local_adaptivity.theorem1_printed_best_schedule:T}}",
            "(61), {{verdict:local_adaptivity.theorem1_recursion}}; its constant-α unrolling, "
            "{{verdict:local_adaptivity.theorem1_constant_alpha}}"),
    Finding(P, "Theorem 2 (8), the small-η limit of the fixed point",
            "the theorem, which silently needs Σᵢ wᵢγᵢτᵢPᵢHᵢ invertible: with a singular sum FedOpt converges for every "
            "small η but the limit grows like 1/η (ratio {{ratio:local_adaptivity.limit8_singular}} at η = "
            "{{param:local_adaptivity.limit8_singular:eta}})",
            "(8) when the sum is invertible, {{verdict:local_adaptivity.limit8}}"),
    Finding(P, "our own claim: with AdaGrad clients the corrected limit is closer to x* than the uncorrected one",
            "our claim, at the exact limits: two clients with w₁ tuned so that the uncorrected limit is x* itself "
            "(ratio {{ratio:local_adaptivity.adaptive_bias_shrinks}})",
            "the corrected bias is O(η), {{verdict:local_adaptivity.corrected_bias_first_order}}; the uncorrected "
            "one does not vanish as η → 0, {{verdict:local_adaptivity.nonvanishing_bias}}; at a fixed η either limit "
            "can be the closer one"),
)
RESULTS = ()
