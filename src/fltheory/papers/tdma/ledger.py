"""What the checks of asynchronous FL over TDMA find (``FINDINGS``) and which check covers each
numbered result (``RESULTS``): data for :mod:`fltheory.claims`; every number is a placeholder
that a fresh report fills in."""
from ...claims import Finding, Result

P = "tdma"
C = "tdma."
U = (C + "update_rule",)   # the simulator against the equations typed line by line
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
    Finding(P, "(10) and (15) as printed, with G = ⌈N/S⌉ for any N (S | N is assumed only in Proposition 1 and "
               "Theorem 1)",
            "the equations, when S does not divide N: N = {{param:tdma.tau_async_printed:N}}, S = "
            "{{param:tdma.tau_async_printed:S}}, τ_comp = {{param:tdma.tau_async_printed:tau_comp}} takes "
            "{{value:tdma.tau_async_printed}} slots a round where (10) says {{bound:tdma.tau_async_printed}}, and "
            "the uplinks of one round carry different staleness where (15) gives one",
            "(10) and (15) with S | N added, {{verdict:tdma.tau_async}} and {{verdict:tdma.staleness}}; for any N the "
            "staleness ⌈(N − u)/S⌉ − 1 of the u-th uplink, {{verdict:tdma.staleness_general}}",
            checks=(C + "staleness_printed",)),
    Finding(P, "(31), the model index k̂ under intentional delay ((12) rewritten for Algorithm 2)",
            "the equation: one round off from k = G − α to G, for every α (N = {{param:tdma.khat_idfl:N}}, S = "
            "{{param:tdma.khat_idfl:S}}, α = {{param:tdma.khat_idfl:alpha}}; at α = 0 too, where k = G gets w₀ "
            "instead of w₁)",
            "corrected (31) against the simulator, {{verdict:tdma.khat_idfl_corrected}}; Proposition 1's α* against "
            "brute force, {{verdict:tdma.prop1_alpha}}"),
    Finding(P, "(25) and (26), Lemmas 1-3 combined and summed",
            "proof steps of Theorem 1: on Lemma 1's instance E f(w₁) = {{value:tdma.round_descent}} > "
            "{{bound:tdma.round_descent}} in (25), and at K = {{param:tdma.summed_descent:horizon}} (26)'s left side "
            "{{value:tdma.summed_descent}} > {{bound:tdma.summed_descent}}",
            "Theorem 1′ from Lemma 1′ and Lemma 3′, {{verdict:tdma.theorem1_corrected}}"),
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
RESULTS = (
    # ---------------------------------------------------------------- Section II: system model
    Result(P, "(1)", "definition", "global loss f: the average of l(w, ζ) over all data",
           why="a definition; the quadratic federations' f is the mean of the f_n (every exact check uses it)"),
    Result(P, "(2)", "definition", "local loss f_n: the average of l(w, ζ) over device n's data",
           why="a definition; quadratic clients give f_n directly, the mini-batch check (20) samples it"),
    Result(P, "(3)", "definition", "w* = argmin f",
           why="a definition; f(w*) = f_inf is the Δ = f(w₀) − f_inf of theorem1, theorem1_corrected"),
    Result(P, "(4)", "definition", "τ_comp = ⌈HB/q⌉ slots of local training",
           why="a definition; τ_comp is an input of the channel (end_times, tau_async, prop1_alpha take it)"),
    Result(P, "(5)", "algorithm line", "server update w_{k+1} = w_k − η ḡ_k", checks=U),
    Result(P, "(6)", "definition", "τ_comm = r(S + 1) slots of communication per round",
           why="a definition; the simulator's rounds are S uplinks and one downlink of r slots, whose lengths "
               "end_times and tau_async check"),
    # ---------------------------------------------------------------- Section III: asynchronous FL over TDMA
    Result(P, "(7)", "algorithm line", "synchronous aggregate ḡ_k = (1/S) Σ ∇f_n(w_k; B)", checks=U),
    Result(P, "(8)", "equation", "synchronous round length τ_syn = τ_comp + τ_comm", checks=(C + "end_times",)),
    Result(P, "(9)", "equation", "G rounds take τ_comp + r(S + 1) slots (τ_comp ≥ r(G − 1)(S + 1))",
           checks=(C + "tau_async_printed", C + "tau_async", C + "end_times")),
    Result(P, "(10)", "equation", "average slots per asynchronous round τ_asyn, G = ⌈N/S⌉",
           checks=(C + "tau_async_printed", C + "tau_async", C + "end_times")),
    Result(P, "(11)", "algorithm line", "asynchronous aggregate ḡ_k = (1/S) Σ ∇f_n(w_k̂; B)", checks=U),
    Result(P, "(12)", "definition", "k̂_n = 0 before n's first uplink, else the round after its last",
           checks=U + (C + "staleness", C + "staleness_general")),
    Result(P, "(13)-(14)", "equation", "Fig. 2's example (N = 6, S = 2): w₁, w₂ from updates on w₀", checks=U),
    Result(P, "Algorithm 1", "algorithm line", "asynchronous FL over TDMA: groups, uplinks, update, loop ⌊T/τ_asyn⌋",
           checks=U + (C + "end_times", C + "rounds_loop_bound", C + "rounds_done")),
    Result(P, "(15)", "equation", "staleness d_{n,k} = min(k, G − 1), G = ⌈N/S⌉",
           checks=(C + "staleness_printed", C + "staleness", C + "staleness_general")),
    Result(P, "(16)", "equation", "w_{k+1} from w₀ (k < G), from w_{k−G+1} (k ≥ G)",
           checks=(C + "staleness_printed", C + "staleness")),
    # ---------------------------------------------------------------- Section IV: convergence analysis
    Result(P, "Assumption 1 (17)", "assumption", "f is L-smooth",
           why="an assumption, no claim; every family meets it as checks.py's docstring says (L = max A)"),
    Result(P, "(18)", "equation", "(17) implies f(w') ≤ f(w) + ∇f(w)ᵀ(w' − w) + (L/2)‖w' − w‖²",
           checks=(C + "smoothness_descent",)),
    Result(P, "Assumption 2 (19)", "assumption", "E‖∇f_n(w; ζ)‖² ≤ σ² + M‖∇f_n(w)‖²",
           why="an assumption, no claim; the quadratic families meet it with M = 1 and equality, the mini-batch "
               "family with any M (assumption2_minibatch_corrected)"),
    Result(P, "(20)", "remark", "mini-batch second moment σ²/B + (M/B)‖∇f_n‖²",
           checks=(C + "assumption2_minibatch", C + "assumption2_minibatch_corrected")),
    Result(P, "Assumption 3 (21)", "assumption", "‖∇f − ∇f_n‖² ≤ Γ²",
           why="an assumption, no claim; the quadratic families have the exact Γ = max_n ‖A(c_n − c̄)‖"),
    Result(P, "Lemma 1 (22); App. A (A.1)-(A.12)", "lemma", "one-round descent of E f(w_{k+1})",
           checks=(C + "lemma1", C + "lemma1_corrected")),
    Result(P, "Lemma 2 (23)", "lemma", "Σ‖∇f_n(w_k̂)‖² ≤ Γ²S + Σ‖∇f(w_k̂)‖²", checks=(C + "lemma2", C + "lemma2_corrected")),
    Result(P, "Lemma 3 (24); App. B (B.1)", "lemma", "model drift Σ‖w_k − w_k̂‖² over the staleness window",
           checks=(C + "lemma3", C + "lemma3_corrected")),
    Result(P, "(25)", "equation", "Lemma 1 with Lemmas 2 and 3 substituted, one round", checks=(C + "round_descent",)),
    Result(P, "(26)", "equation", "(25) summed over k = 0..K and divided by K + 1", checks=(C + "summed_descent",)),
    Result(P, "Lemma 4 (27)-(28); App. C (C.1)-(C.16)", "lemma", "re-indexing bounds of the stale gradient sums",
           checks=(C + "lemma4_27", C + "lemma4_28", C + "lemma4_exact")),
    Result(P, "Theorem 1 (29)-(30); App. D (D.2)", "theorem",
           "η ≤ β/√(K+1) gives (1/(K+1)) Σ E‖∇f(w_k)‖² = O(G²/√K)",
           checks=(C + "theorem1", C + "theorem1_order", C + "theorem1_rate", C + "theorem1_corrected")),
    Result(P, "App. D (D.1)", "equation", "(26) with Lemma 4: the explicit bound (Q2 + Q3 + Q4)/Q1 and its staleness sum",
           checks=(C + "theorem1", C + "staleness_sum")),
    # ---------------------------------------------------------------- Section V: intentional delay
    Result(P, "Algorithm 2", "algorithm line", "intentional delay FL: devices of round k get w_{k+α+1}",
           checks=(C + "staleness_idfl", C + "khat_idfl_corrected", C + "end_times")),
    Result(P, "(31)", "equation", "k̂_n under intentional delay ((12) rewritten for Algorithm 2)",
           checks=(C + "khat_idfl", C + "khat_idfl_corrected", C + "staleness_idfl")),
    Result(P, "Proposition 1 (32)-(33)", "proposition", "the largest α adding no slot, α* = G − d* − 1",
           checks=(C + "prop1_alpha",)),
    Result(P, "(34)-(36)", "equation", "Proposition 1's proof: α adds no slot iff r(G − α − 1)(S + 1) ≥ τ_comp",
           checks=(C + "prop1_condition", C + "prop1_alpha")),
    # ---------------------------------------------------------------- Section VI: experiments
    Result(P, "Table I", "claim in the text", "rounds within T = 10⁵ slots (CIFAR-10, N = 20) for S = 1..20",
           checks=(C + "table1", C + "rounds_done")),
)

# registered checks that check no numbered result of the paper, and why (none)
EXTRAS: dict = {}
