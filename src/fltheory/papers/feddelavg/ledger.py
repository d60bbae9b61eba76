"""What the checks of FedDelAvg find (``FINDINGS``) and which check covers each numbered result
(``RESULTS``): data for :mod:`fltheory.claims`; every number is a placeholder that a fresh report
fills in."""
from ...claims import Finding, Result

P = "feddelavg"
C = "feddelavg."
U = (C + "update_rule",)   # the simulator against the equations typed line by line
FINDINGS = (
    Finding(P, "Theorem 1 with the printed output set k = 0..K−1",
            "the theorem at K = {{param:feddelavg.theorem1:K}}: the output is w_init; on one "
            "{{param:feddelavg.theorem1:family}} client (every assumption met, ηβ = 1) the ratio is τ/4, "
            "{{ratio:feddelavg.theorem1}} at τ = {{param:feddelavg.theorem1:tau}}",
            "the bound over k = 1..K, {{verdict:feddelavg.theorem1_corrected}} at K ≤ 200; its supremum 1 is approached "
            "only as K → ∞, where (20) is {{verdict:feddelavg.asymptotic_gap}}"),
    Finding(P, "Lemma 4 over the main-text range T_k∖{kτ}",
            "the lemma when Δ = 0: the sync time (k+1)τ then lies in the range (ratio {{ratio:feddelavg.lemma4}})",
            "at non-sync times, {{verdict:feddelavg.lemma4_corrected}}"),
    Finding(P, "(25), Lemma 4's no-delay form",
            "the lemma for α < 1 (α = {{param:feddelavg.lemma4_no_delay:alpha}})",
            "α = 1, Δ = 0, before the next sync: {{verdict:feddelavg.lemma4_no_delay_corrected}}"),
    Finding(P, "(63)-(65), Proposition 1's one-step recursion",
            "the step onto the next sync (k+1)τ when Δ = 0: every device takes the average there, so the distance is "
            "{{value:feddelavg.prop1_step}} where the bound is {{bound:feddelavg.prop1_step}}",
            "every other step, {{verdict:feddelavg.prop1_step_corrected}}; Proposition 1 itself (its sums stop before "
            "that step)"),
    Finding(P, "Section IV's experiments (MNIST), rerun on a synthetic 10-device softmax federation",
            "not reproduced there: α = 0.2 is not the best weight at Δ = 9 (best α = "
            "{{param:feddelavg.exp_alpha_02_best:best_alpha}}); FedDelAvg needs "
            "{{param:feddelavg.exp_delay_robust_iterations:iterations_best}} iterations where the benchmark needs "
            "{{param:feddelavg.exp_delay_robust_iterations:iterations_benchmark}} (the claim: 10 % more); FedAvg under "
            "delay ends at {{param:feddelavg.exp_fedavg_degraded_under_delay:acc_fedavg_delayed}} against "
            "{{param:feddelavg.exp_fedavg_degraded_under_delay:acc_benchmark}} (the claim: severely degraded)",
            "on the same data: some α < 1 beats FedAvg under delay, {{verdict:feddelavg.exp_small_alpha_beats_fedavg}}; "
            "FedAvg is fastest without delay, {{verdict:feddelavg.exp_fedavg_best_without_delay}}; the best α does not "
            "grow with Δ, {{verdict:feddelavg.exp_alpha_moves_with_delay}}; FedDelAvg under delay ends within 3 points "
            "of the benchmark's accuracy, {{verdict:feddelavg.exp_final_accuracy_within_3pct}}. MNIST itself is not "
            "rerun"),
)

RESULTS = (
    # ---------------------------------------------------------------- Section II: model and algorithm
    Result(P, "(1)", "definition", "local loss F_i: the average of f_i over D_i",
           why="a definition; the digits clients of the logistic family are such averages (quadratic and pseudo-Huber "
               "clients give F_i directly)"),
    Result(P, "(2)", "definition", "global loss F = sum_i rho_i F_i, rho_i = D_i / sum_j D_j",
           why="a definition; every federation's loss and gradient are this weighted sum, used by every simulated "
               "check"),
    Result(P, "(3)", "definition", "w* = argmin F",
           why="a definition; F(w*) is the F* of theorem1, theorem1_corrected, asymptotic_gap and prop2"),
    Result(P, "Assumption 1 (4)-(5)", "assumption", "F_i convex, L-Lipschitz, beta-smooth",
           why="an assumption, no claim; the checks' families meet it as checks.py's docstring says (pseudo-Huber "
               "clients literally); its consequences Lemmas 1-2 have checks"),
    Result(P, "Assumption 2 (6)", "assumption", "||grad F_i - grad F|| <= delta_i, delta = sum_i rho_i delta_i",
           why="an assumption, no claim; delta_i is global for pseudo-Huber clients and the run's own elsewhere "
               "(lemma4, lemma4_corrected, lemma5, prop1 use it)"),
    Result(P, "(7)", "definition", "centralized GD; O(1/T) for convex F and eta <= 1/beta",
           why="GD is a definition and the O(1/T) rate is cited from [14] without a constant; the GD inequality the "
               "proofs use ((81)-(82), [13, Lemma 6]) is exercised by prop2 and prop2_corrected"),
    Result(P, "(8)", "algorithm line", "global model w(t) = sum_i rho_i w_i(t)", checks=U),
    Result(P, "(9)", "algorithm line", "local GD step at non-sync times", checks=U),
    Result(P, "(10)", "algorithm line", "sync: w_i = alpha w(t - Delta) + (1 - alpha)[local GD step]", checks=U),
    Result(P, "(11)", "algorithm line", "alpha_t = alpha at t = k tau, else 0", checks=U),
    Result(P, "(12)", "algorithm line", "(9)-(10) as one update with alpha_t", checks=U),
    Result(P, "Algorithm 1", "algorithm line", "FedDelAvg: send at (k+1) tau - Delta, aggregate, output (13)",
           checks=U),
    Result(P, "(13)", "algorithm line", "output w^K = argmin over {w(k tau - Delta), k = 0..K-1}",
           checks=U + (C + "theorem1",)),
    # ---------------------------------------------------------------- Section III: Theorem 1 and alpha
    Result(P, "Definition 1 (14)", "definition", "auxiliary GD c_k(t) from c_k(k tau - Delta) = w(k tau - Delta)",
           checks=U),
    Result(P, "Theorem 1 (15); App. (101)-(102)", "theorem", "optimality gap of w^K under delay",
           checks=(C + "theorem1", C + "theorem1_corrected")),
    Result(P, "(16)", "equation", "Psi(alpha) = sum_k psi(alpha, k) = K psi(alpha, inf) - [...] eps^(K)",
           checks=(C + "Psi",)),
    Result(P, "(17)", "definition", "psi(alpha, k)",
           checks=(C + "psi_combination", C + "golden_values", C + "Psi")),
    Result(P, "(18)", "definition", "h(x) = delta/beta[(1 + eta beta)^x - 1] - eta delta x",
           checks=(C + "h_sum", C + "golden_values")),
    Result(P, "(19)", "definition", "eps^(k) = [1 - (1 - alpha)^k] 2 eta L (tau/alpha - Delta)",
           checks=(C + "epsilon_recursion", C + "golden_values")),
    Result(P, "(20)", "equation", "K -> infinity limit of (15), increasing in psi(alpha, inf)",
           checks=(C + "asymptotic_gap", C + "theorem1_limit")),
    Result(P, "(21)", "equation", "psi(alpha, inf), the k -> infinity limit of (17)",
           checks=(C + "psi_inf_limit", C + "psi_inf_as_limit", C + "golden_values")),
    Result(P, "(22)", "equation", "Delta = 0: psi(alpha, inf) = h(tau) + (1/alpha - 1) ... >= psi(1, inf)",
           checks=(C + "psi_inf_delta0", C + "delta0_alpha1_optimal")),
    Result(P, "Sec. III-A, monotonicity condition", "remark",
           "psi(., inf) increasing in alpha iff alpha^2 D >= M",
           checks=(C + "monotonicity_condition", C + "psi_inf_derivative")),
    Result(P, "Sec. III-A, delta threshold", "remark", "delta >= delta_th => alpha* = 1",
           checks=(C + "delta_threshold", C + "delta_threshold_iff", C + "golden_tables")),
    Result(P, "Sec. III-A, optimal alpha", "remark", "alpha* = sqrt(M/D) otherwise",
           checks=(C + "alpha_star_printed", C + "alpha_star", C + "golden_tables")),
    # ---------------------------------------------------------------- Section III-B: lemmas and propositions
    Result(P, "Lemma 3 (23)-(24); App. (38)-(46)", "lemma", "||w_i - w|| <= eps^(k) at the send times k tau - Delta",
           checks=(C + "lemma3", C + "lemma3_corrected", C + "lemma3_delta0")),
    Result(P, "Lemma 4", "lemma", "||w_i(t) - c_k(t)|| <= (1 + eta beta) ||w_i(t-1) - c_k(t-1)|| + eta delta_i",
           checks=(C + "lemma4", C + "lemma4_corrected")),
    Result(P, "(25)", "remark", "Lemma 4 with no delay: ||w_i(t) - c_k(t)|| <= delta_i/beta((beta eta + 1)^(t-k tau) - 1)",
           checks=(C + "lemma4_no_delay", C + "lemma4_no_delay_corrected")),
    Result(P, "Lemma 5 (26)", "lemma", "||w(k tau) - c_k(k tau)|| <= alpha Delta L eta + (1 - alpha)[...]",
           checks=(C + "lemma5", C + "lemma5_corrected")),
    Result(P, "Lemma 5, remark (alpha = 1, Delta = 0)", "remark", "||w(k tau) - c_k(k tau)|| <= 0 with no delay",
           checks=(C + "lemma5", C + "lemma5_corrected")),
    Result(P, "Proposition 1 (27); App. (59)", "proposition",
           "||w((k+1) tau - Delta) - c_k(...)|| <= psi(alpha, k), and |F(w) - F(c_k)| <= L psi(alpha, k)",
           checks=(C + "prop1", C + "prop1_loss", C + "prop1_corrected", C + "prop1_loss_corrected")),
    Result(P, "Proposition 1, remark (Delta = 0, alpha = 1)", "remark",
           "psi(1, k) = delta/beta((beta eta + 1)^tau - 1) - eta delta tau: FedAvg's bound",
           checks=(C + "psi_fedavg", C + "prop1")),
    # ---------------------------------------------------------------- Section IV: the experiment (claims in the text)
    Result(P, "Sec. IV, Fig. 2: alpha < 1 beats FedAvg under delay", "claim in the text",
           "with Delta = 9 the weighting alpha changes the convergence speed; a weight alpha < 1 beats FedAvg (78% fewer "
           "iterations to 80% accuracy on MNIST)", checks=(C + "exp_small_alpha_beats_fedavg",)),
    Result(P, "Sec. IV, Fig. 2: alpha = 0.2 is best", "claim in the text",
           "FedDelAvg gains the best improvement with alpha = 0.2 at Delta = 9", checks=(C + "exp_alpha_02_best",)),
    Result(P, "Sec. IV, Fig. 3: FedAvg is optimal without delay", "claim in the text",
           "with Delta = 0 FedAvg (alpha = 1) converges fastest, as (22) says", checks=(C + "exp_fedavg_best_without_delay",)),
    Result(P, "Sec. IV: 10% extra iterations under delay", "claim in the text",
           "FedDelAvg with alpha optimised at Delta = 9 reaches the benchmark's 80% with only 10% more iterations than "
           "FedAvg at Delta = 0", checks=(C + "exp_delay_robust_iterations",)),
    Result(P, "Sec. IV: within 3% after 100 aggregations", "claim in the text",
           "FedDelAvg under delay ends within 3% of the benchmark's accuracy", checks=(C + "exp_final_accuracy_within_3pct",)),
    Result(P, "Sec. IV: FedAvg severely degraded under delay", "claim in the text",
           "FedAvg (alpha = 1) at Delta = 9 has a severely degraded performance", checks=(C + "exp_fedavg_degraded_under_delay",)),
    Result(P, "Sec. III-A/IV: alpha* moves with Delta", "claim in the text",
           "the optimal weight decreases as the delay grows (the alpha* table against Delta), seen in the experiment",
           checks=(C + "exp_alpha_moves_with_delay", C + "golden_tables")),
    # ---------------------------------------------------------------- Appendix A
    Result(P, "Lemma 1", "lemma", "GD step: ||[w1 - eta grad F(w1)] - [w2 - ...]|| <= sqrt(1 + beta^2 eta^2) ||w1 - w2||",
           checks=(C + "lemma1",)),
    Result(P, "Lemma 2 (34)", "lemma", "||grad F_i(w)|| <= L", checks=(C + "lemma2",)),
    Result(P, "Lemma 5 (47)-(49)", "lemma", "Lemma 5's intermediate form (48), equal to (49) for delta > 0",
           checks=(C + "lemma5_intermediate",)),
    Result(P, "Proposition 2 (77)", "proposition", "F(w((K+1) tau - Delta)) - F* <= 1/(T eta phi - L Psi/xi^2)",
           checks=(C + "prop2", C + "prop2_corrected")),
    Result(P, "(63)-(65)", "equation", "Prop. 1's one-step recursion: G_k(l) <= (1 - alpha_l)(1 + eta beta) G_k(l-1) + "
           "(1 - alpha_l) eta delta + alpha_l eta Delta L", checks=(C + "prop1_step", C + "prop1_step_corrected")),
    Result(P, "(66)-(67)", "equation", "Prop. 1's recursion before the sync: (1 + eta beta)^j eps^(k) + delta((1 + eta "
           "beta)^j - 1)/beta", checks=(C + "prop1_pre_sync",)),
    Result(P, "(68)-(71)", "equation", "Prop. 1's recursion from the sync k tau to the next send time",
           checks=(C + "prop1_post_sync",)),
    Result(P, "(72)-(75)", "equation", "Prop. 1's window sums: sum_{l=k tau}^{(k+1) tau - Delta - 1} G_k(l) (and the sum "
           "from k tau - Delta to k tau - 1 before it)", checks=(C + "prop1_window", C + "prop1_window_pre")),
    Result(P, "(81)", "equation", "one GD step: 1/Gamma(t+1) - 1/Gamma(t) >= eta (1 - beta eta/2)/||c_k(t) - w*||^2",
           checks=(C + "gd_inverse_gap",)),
    Result(P, "(82)", "equation", "||c_k(t) - w*||^2 <= 1/omega, so (81) >= eta phi", checks=(C + "gd_distance_max",)),
    Result(P, "(83)-(85)", "equation", "one period: 1/Gamma((k+1) tau - Delta) - 1/Gamma(k tau - Delta) >= tau eta phi",
           checks=(C + "gd_period_gap",)),
    Result(P, "(103)-(106)", "equation", "min{F(w(final)), min_k F(c_k(end of period k))} - F* <= xi* of (104)",
           checks=(C + "xi_star_bound",)),
    Result(P, "(112)", "equation", "psi(alpha, k) <= psi(alpha, K) (psi increasing in k)",
           checks=(C + "psi_monotone_k",)),
)

# registered checks that check no numbered result of the paper, and why (none)
EXTRAS: dict = {}
