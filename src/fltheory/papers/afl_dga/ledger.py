"""What the checks of AFL-DGA find (``FINDINGS``) and which check covers each numbered result
(``RESULTS``): data for :mod:`fltheory.claims`; every number is a placeholder that a fresh report
fills in."""
from ...claims import Finding, Result

P = "afl_dga"
C = "afl_dga."
SIM = (C + "exact_vs_simulation",)   # exact register moments (written from the equations) against the simulator
FINDINGS = (
    Finding(P, "Section 3.1: “If Γ = 0, then the local data are i.i.d.”",
            "quadratic clients with one common minimiser and different Hessians have Γ = 0 and still disagree: "
            "Σᵢ pᵢ‖∇Fᵢ(w) − ∇F(w)‖² = {{value:afl_dga.gamma_iid}} (M = {{param:afl_dga.gamma_iid:M}} clients)",
            "Σᵢ pᵢ‖∇Fᵢ(w*)‖² ≤ 2LΓ, {{verdict:afl_dga.gamma_corrected}}: Γ = 0 means a common minimiser"),
    Finding(P, "App. A eq. (2), E‖ḡ‖² ≤ (σ²+G²)/N",
            "a proof step: N = {{param:afl_dga.eq2:N}} identical clients give G² (ratio {{ratio:afl_dga.eq2}})",
            "≤ G², {{verdict:afl_dga.eq2_corrected}}"),
    Finding(P, "Lemma 1, and the lag count in its proof",
            "the lemma: linear clients with η = {{param:afl_dga.lemma1:eta}} ≤ 1/T (ratio {{ratio:afl_dga.lemma1}}); "
            "the count τ + τ′ − 1 fails once D_m > K_min (ratio {{ratio:afl_dga.lag_count_printed}}); the range "
            "t − τ − τ′, …, t − 1 summed in the proof has τ + τ′ terms, not τ + τ′ − 1 (ratio "
            "{{ratio:afl_dga.lag_range_terms}})",
            "Lemma 1′ pathwise, {{verdict:afl_dga.lemma1_corrected}}; in expectation, "
            "{{verdict:afl_dga.lemma1_corrected_expectation}}; Lemma 2′, {{verdict:afl_dga.lemma2_rho}}"),
    Finding(P, "App. B (3), (4) and (6), the descent step of Theorem 1’s proof",
            "(3)’s 1/N²: N = {{param:afl_dga.eq3:N}} identical clients (ratio {{ratio:afl_dga.eq3}}); (4) drops the "
            "noise cross-term E⟨∇f(wᵗ), ḡᵗ − mᵗ⟩, which a reused stale gradient makes non-zero (|·| ≥ "
            "{{value:afl_dga.eq4}}, the lower end of a 4-standard-error interval, t_d = {{param:afl_dga.eq4:t_d}}); "
            "(6) inherits Lemma 1 (ratio {{ratio:afl_dga.eq6}}, t_d = {{param:afl_dga.eq6:t_d}})",
            "(5), {{verdict:afl_dga.eq5}}; the cross-term is 0 when t_d = 1, {{verdict:afl_dga.eq4_fresh_noise}}, "
            "and Theorem 1′ bounds it otherwise"),
    Finding(P, "Theorem 1, under either reading of the step size (η ≤ 1/L or η ≤ 1/T)",
            "the theorem: a stale gradient reused for t_d steps, ratio {{ratio:afl_dga.theorem1}} at Corollary 1's η "
            "(N = {{param:afl_dga.theorem1:N}}, T = {{param:afl_dga.theorem1:T}}, t_d = {{param:afl_dga.theorem1:t_d}}), "
            "unchanged when rescaled to η = 1/T ({{ratio:afl_dga.theorem1_literal_step}})",
            "Theorem 1′ (equal client weights): deterministic, {{verdict:afl_dga.theorem1_corrected_det}}; with noise, "
            "{{verdict:afl_dga.theorem1_corrected}} (its supremum is 1/2, approached as ηL → 0 without noise)"),
    Finding(P, "Corollary 1",
            "with Theorem 1’s constants, at its own step size (ratio {{ratio:afl_dga.corollary1}}); as printed, its "
            "O-terms with the constant C_O = {{param:afl_dga.corollary1_printed:C_O}} that Theorem 1 gives, on one "
            "client with t_d = 10√T and η = 1/(L√T): ratio {{ratio:afl_dga.corollary1_printed}} at T = "
            "{{param:afl_dga.corollary1_printed:T}}, growing like √T, so no constant works",
            "Corollary 1′, {{verdict:afl_dga.corollary1_corrected}}; linear speedup proved for t_d = 1 or σ = 0, open "
            "in the anarchic stochastic case"),
)

RESULTS = (
    # ---------------------------------------------------------------- Section 3.1: setting
    Result(P, "Sec. 3.1, the problem", "definition", "min_w F(w) = sum_k p_k F_k(w), sum_k p_k = 1",
           why="a definition; every federation's loss is this weighted sum (the server weights of every run); the "
               "statements' checks use equal weights p_k = 1/N, as the paper's gbar = (1/N) sum_i"),
    Result(P, "Sec. 3.1, local SGD step", "algorithm line", "w_{i,j+1}^t = w_{i,j}^t - eta grad F_i(w_{i,j}^t, xi)",
           checks=SIM + (C + "fig1_trajectory",)),
    Result(P, "Sec. 3.1, tau_i^t", "definition", "delay of client i's latest participation; tau = 1: synchronous",
           why="a definition; Participation.tau computes it (Algorithm 1's rule), and lag_count_printed, lemma2_rho "
               "and lag_range_terms use it"),
    Result(P, "Sec. 3.1, Gamma", "definition", "non-i.i.d. degree Gamma = sum_k p_k (F* - F_k*)",
           checks=(C + "gamma_corrected",)),
    Result(P, "Sec. 3.1, Gamma = 0 means i.i.d.", "claim in the text", "Gamma = 0 iff the local data are i.i.d.",
           checks=(C + "gamma_iid", C + "gamma_corrected")),
    # ---------------------------------------------------------------- Section 3.2: the algorithm
    Result(P, "Sec. 3.2, step 1 (correction)", "algorithm line",
           "w_{i,k} <- w_{i,k} - eta K_i^{t'} gbar^{t'} + eta sum_j g_{i,j}^{t'} on receiving gbar^{t'}",
           checks=SIM + (C + "fig1_trajectory",)),
    Result(P, "Sec. 3.2, steps 2-3", "algorithm line",
           "gbar_i^t = sum_j g_{i,j}^t / K_i^t; gbar^t = (1/N) sum_i gbar_i (an idle client's latest)", checks=SIM),
    Result(P, "Sec. 3.2, dynamics", "equation",
           "K_i^t local steps, D_i^t steps of round t+1 before gbar^t arrives, then the corrected model",
           checks=SIM + (C + "fig1_trajectory",)),
    Result(P, "Fig. 1, client 3's trajectory", "equation",
           "w0 - eta(gbar^1 + 2 gbar^2 + gbar^3) - eta sum_j g^4_j - eta(g^5_1 + g^5_2)",
           checks=(C + "fig1_trajectory",)),
    Result(P, "Algorithm 1", "algorithm line",
           "server: gbar^t = (1/N) sum_i gbar_i^{t - tau}, w^{t+1} = w^t - eta gbar^t; client: correction, local SGD",
           checks=SIM),
    # ---------------------------------------------------------------- Section 4.1: assumptions and results
    Result(P, "Assumption 1", "assumption", "each f_i L-smooth",
           why="an assumption, no claim; every family meets it with its L (checks.py says how); eq5 uses it alone"),
    Result(P, "Assumption 2", "assumption", "unbiased stochastic gradients, variance <= sigma^2",
           why="an assumption, no claim; the noisy families add independent zero-mean noise (theorem1_corrected, "
               "corollary1_corrected, eq4, eq4_fresh_noise)"),
    Result(P, "Assumption 3", "assumption", "E||g_i(w)||^2 <= G^2",
           why="an assumption, no claim; pseudo-Huber and linear clients meet it with G = s max delta and G = max "
               "||c_i|| (eq2_corrected is its consequence for gbar, tight)"),
    Result(P, "Assumption 4", "assumption", "tau_i^t <= t_d",
           why="an assumption, no claim; every schedule is validated against it (Participation.check), and lemma2_rho "
               "uses t_d"),
    Result(P, "Theorem 1", "theorem", "average squared gradient <= 2 Delta/(eta T) + four error terms",
           checks=(C + "theorem1", C + "theorem1_literal_step", C + "theorem1_corrected_det",
                   C + "theorem1_corrected")),
    Result(P, "Remark after Theorem 1, the non-vanishing terms", "remark",
           "eta L (sigma^2 + G^2)/N shrinks like 1/N; L^2 eta^2 (K_m + D_m)^2 G^2 grows with K",
           checks=(C + "eq2", C + "eq2_corrected", C + "theorem1_corrected")),
    Result(P, "Remark, DGA's training time", "remark", "round time max(K+D)d -> max K d: a (K+D)/K fold",
           checks=(C + "timing_fold",)),
    Result(P, "Corollary 1", "corollary", "eta = sqrt(N)/(L sqrt(T)): O(1/sqrt(NT)) + O(N/T) + O(N/T) terms",
           checks=(C + "corollary1_printed", C + "corollary1", C + "corollary1_substitution",
                   C + "corollary1_corrected", C + "corollary1_corrected_substitution")),
    Result(P, "Remark after Corollary 1, linear speedup threshold", "remark",
           "beyond a threshold in (K_m + D_m) the O(1/sqrt(NT)) term dominates: linear speedup",
           checks=(C + "speedup_threshold", C + "corollary1_corrected")),
    Result(P, "Remark after Corollary 1, convergence to the optimum", "claim in the text",
           "the error vanishes as T grows (no neighbourhood)",
           checks=(C + "corollary1_corrected",)),
    # ---------------------------------------------------------------- Appendix A: Lemma 1
    Result(P, "Lemma 1", "lemma", "E||w^t - w_{i,j}^{t-tau}||^2 <= sum E||eta gbar^j||^2 + eta^2 (K_m + D_m)^2 G^2",
           checks=(C + "lemma1", C + "lemma1_used", C + "lemma1_corrected", C + "lemma1_corrected_expectation")),
    Result(P, "Proof of Lemma 1, the lag counts", "claim in the text",
           "j <= D_m + K_m local gradients; rounds t - tau - tau' .. t - 1 since the anchor",
           checks=(C + "lemma2_n", C + "lag_count_printed", C + "lemma2_rho")),
    Result(P, "App. A (1)", "equation", "the expansion of w^t - w_{i,j} and its bound",
           checks=(C + "lemma1", C + "lemma1_corrected")),
    Result(P, "App. A (2)", "equation", "E||gbar^t||^2 <= (sigma^2 + G^2)/N",
           checks=(C + "eq2", C + "eq2_corrected")),
    Result(P, "App. A, the sum after (2)", "equation",
           "sum_{j=t-tau-tau'}^{t-1} E||eta gbar^j||^2 <= eta^2/N (tau + tau' - 1)(sigma^2 + G^2)",
           checks=(C + "lag_range_terms", C + "eq2", C + "lemma1_used")),
    # ---------------------------------------------------------------- Appendix B: proof of Theorem 1
    Result(P, "App. B (3)", "equation", "(L/2) E||w^{t+1} - w^t||^2 <= eta^2 L/2 (sigma^2/N + (1/N^2) sum ||grad||^2)",
           checks=(C + "eq3", C + "eq2_corrected")),
    Result(P, "App. B (4)", "equation", "E<grad f, -eta gbar> = -eta E<grad f, m> and its polarisation",
           checks=(C + "eq4", C + "eq4_fresh_noise", C + "theorem1_corrected")),
    Result(P, "App. B (5)", "equation", "||grad f(w^t) - m^t||^2 <= L^2 sum_i p_i (1/K_i) sum_j ||w^t - w_ij||^2",
           checks=(C + "eq5",)),
    Result(P, "App. B (6)", "equation", "(5) with Lemma 1 substituted",
           checks=(C + "eq6", C + "eq5", C + "lemma1_corrected_expectation")),
)

# registered checks that check no numbered result of the paper, and why (none)
EXTRAS: dict = {}
