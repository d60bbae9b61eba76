"""What the checks of asynchronous FL over TDMA find (``FINDINGS``) and which check covers each
numbered result (``RESULTS``): data for :mod:`fltheory.claims`; every number is a placeholder
that a fresh report fills in."""
from ...claims import Finding

P = "tdma"
FINDINGS = (
    Finding(P, "Theorem 1's explicit bound (Q2+Q3+Q4)/Q1 (App. D)",
            "the theorem: synchronous N = S = {{param:tdma.theorem1:N}}, K = {{param:tdma.theorem1:K}} gives "
            "{{value:tdma.theorem1}} while the bound is {{bound:tdma.theorem1}}",
            "Theorem 1′ (it keeps a (1 + 1/λ)Γ² floor), {{verdict:tdma.theorem1_corrected}}"),
    Finding(P, "(30), Theorem 1's rate O(G²/√K) for every step η ≤ β/√(K+1) of (29)",
            "the theorem: (29) allows η = β/(K+1); with N = S = 1, f = w²/2, w₀ = 1 (β = 1) the average squared "
            "gradient tends to (1 − e⁻²)/2 = 0.4323, and √K times it is 43 at K = 10⁴, 432 at K = 10⁶ (against the "
            "constant of the paper's own derivation: ratio {{ratio:tdma.theorem1_rate}} already at K = "
            "{{param:tdma.theorem1_rate:K}})",
            "Theorem 1′, {{verdict:tdma.theorem1_corrected}}; the rate needs η of order 1/√K, which (29) does not ask"),
    Finding(P, "Lemma 1 (22)",
            "the lemma: f = w²/2, N = S = {{param:tdma.lemma1:N}}, η = {{param:tdma.lemma1:eta}} gives "
            "{{value:tdma.lemma1}} > {{bound:tdma.lemma1}}",
            "Lemma 1′, {{verdict:tdma.lemma1_corrected}}"),
    Finding(P, "Lemma 2 (23)",
            "the lemma: it drops a cross term; a round robin of N = {{param:tdma.lemma2:N}} devices gives "
            "{{value:tdma.lemma2}} > {{bound:tdma.lemma2}}",
            "Lemma 2′ (Young's inequality), {{verdict:tdma.lemma2_corrected}}"),
    Finding(P, "Lemma 3 (24)",
            "the lemma: (B.1) loses the Cauchy-Schwarz factor; {{value:tdma.lemma3}} > {{bound:tdma.lemma3}}",
            "Lemma 3′, {{verdict:tdma.lemma3_corrected}} (its supremum is 1/2)"),
    Finding(P, "(31), the model index k̂ under intentional delay",
            "a remark: one round off (N = {{param:tdma.khat_idfl:N}}, S = {{param:tdma.khat_idfl:S}}, α = "
            "{{param:tdma.khat_idfl:alpha}})",
            "corrected (31) against the simulator, {{verdict:tdma.khat_idfl_corrected}}; Proposition 1's α* against "
            "brute force, {{verdict:tdma.prop1_alpha}}"),
    Finding(P, "Algorithm 1's loop bound ⌊T/τ_asyn⌋ as the rounds in T",
            "the algorithm line: {{bound:tdma.rounds_loop_bound}} rounds by the loop bound where "
            "{{value:tdma.rounds_loop_bound}} end (N = {{param:tdma.rounds_loop_bound:N}}, T = "
            "{{param:tdma.rounds_loop_bound:T}})",
            "the exact rounds by a deadline reproduce Table I as completed rounds + 1, {{verdict:tdma.table1}}"),
    Finding(P, "(20), the mini-batch second moment",
            "a remark, for B > 1: a noiseless per-sample gradient gives {{value:tdma.assumption2_minibatch}} against "
            "{{bound:tdma.assumption2_minibatch}} (B = {{param:tdma.assumption2_minibatch:B}})",
            "σ²/B + (1 + (M−1)/B)‖∇f_n‖², {{verdict:tdma.assumption2_minibatch_corrected}}"),
)
RESULTS = ()
