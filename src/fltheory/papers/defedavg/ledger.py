"""What the checks of DeFedAvg find (``FINDINGS``) and which check covers each numbered result
(``RESULTS``): data for :mod:`fltheory.claims`; every number is a placeholder that a fresh report
fills in."""
from ...claims import Finding, Result

P = "defedavg"
C = "defedavg."
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
            "nothing: {{verdict:defedavg.theorem1}}; on the event-driven Algorithm 1, "
            "{{verdict:defedavg.theorem1_events}}",
            "the exact constant 5, {{verdict:defedavg.theorem1_corrected}} (event-driven: "
            "{{verdict:defedavg.theorem1_corrected_events}}); linear speedup, fitted slope of the exact rounds to ε "
            "against n: IID at the Theorem 2 rates {{worst:defedavg.linear_speedup}}, non-IID at the Theorem 1 rates "
            "{{worst:defedavg.linear_speedup_niid}}"),
    Finding(P, "(3), FedAvg's server step w ← w − (η/n)Σ(w_i^K − w), said to be vanilla FedAvg at η = 1",
            "the sign: one client, F = w²/2, K = {{param:defedavg.fedavg_update:K}}, "
            "η̄ = {{param:defedavg.fedavg_update:eta_bar}}, η = {{param:defedavg.fedavg_update:eta}} gives w ← 1.5w, "
            "‖w^T‖ = {{value:defedavg.fedavg_update}} after T = {{param:defedavg.fedavg_update:T}} rounds against "
            "{{bound:defedavg.fedavg_update}} for vanilla FedAvg",
            "(3) with the sign of (8), which the package uses: {{verdict:defedavg.fedavg_update_corrected}}"),
    Finding(P, "(7), g = (1/|I_t|) Σ Δ_i with I_t the set of Algorithm 1's line 4",
            "(7) against (8)'s 1/n when a client is drawn twice: draws {{param:defedavg.aggregate_7_as_set:draws}} give "
            "weights {{param:defedavg.aggregate_7_as_set:weights_7_set}} against "
            "{{param:defedavg.aggregate_7_as_set:weights_8}}",
            "(7) with I_t the multiset of Lemma 2 (|I_t| = n), which is (8) and what the schedules apply: "
            "{{verdict:defedavg.aggregate_weights}}"),
    Finding(P, "Lemma 2 (19), no condition on n",
            "the lemma for n > N + 1: N = {{param:defedavg.lemma2_as_printed:N}}, "
            "n = {{param:defedavg.lemma2_as_printed:n}} (ratio {{ratio:defedavg.lemma2_as_printed}}); the proof's "
            "(26)(b) needs n ≤ N + 1",
            "under n ≤ N + 1, {{verdict:defedavg.lemma2_corrected}}; (20), {{verdict:defedavg.lemma2_rounds}}"),
    Finding(P, "(36)(b) in the proof of Lemma 5",
            "a proof step: an extra 1/n² (ratio {{ratio:defedavg.lemma5_step36}} at "
            "n = {{param:defedavg.lemma5_step36:n}})",
            "Lemma 5, {{verdict:defedavg.lemma5}}, which follows (36)(a); (36)(b) without the 1/n², "
            "{{verdict:defedavg.lemma5_step36_corrected}}"),
    Finding(P, "'ηη̄ ≤ 1/(2LK) ⟺ ηη̄/(2K) − Lη²η̄² ≥ ηη̄/(4K)' in the proof of Theorem 1",
            "a proof step: at ηη̄ = 1/(2LK) the ratio is {{ratio:defedavg.theorem1_step}}",
            "the step under ηη̄ ≤ 1/(4LK), {{verdict:defedavg.theorem1_step_corrected}}, which (11) imposes: "
            "Theorem 1 stands"),
)

RESULTS = (
    # ---------------------------------------------------------------- Section 2: the algorithms
    Result(P, "(1)", "definition", "F = (1/N) sum_i F_i, F_i = E f(w; xi_i)",
           why="a definition; every federation of the checks (exact.iid_federation, exact.niid_federation) is such an "
               "average, and Theorem 1's checks evaluate it"),
    Result(P, "(2)", "algorithm line", "FedAvg's local SGD step w_i^{t,k+1} = w_i^{t,k} - eta_bar grad f",
           checks=(C + "fedavg_update_corrected", C + "zero_delay_is_fedavg")),
    Result(P, "(3)", "algorithm line", "FedAvg's server step w - (eta/n) sum (w_i^{t,K} - w): wrong sign",
           checks=(C + "fedavg_update", C + "fedavg_update_corrected")),
    Result(P, "(4)", "algorithm line", "local SGD from the stale model w^{tau_i(t)}",
           checks=(C + "zero_delay_is_fedavg", C + "sync_is_full_fedavg")),
    Result(P, "(5)", "definition", "update Delta_i^t = w_i^{tau,0} - w_i^{tau,K}",
           checks=(C + "zero_delay_is_fedavg", C + "fedavg_update_corrected")),
    Result(P, "Algorithm 1", "algorithm line", "DeFedAvg-nIID: send/receive buffers, n draws with replacement",
           checks=(C + "aggregate_weights", C + "theorem1_events", C + "zero_delay_is_fedavg")),
    Result(P, "(6)", "algorithm line", "w^{t+1} = w^t - eta g_nIID^t",
           checks=(C + "aggregate_weights", C + "zero_delay_is_fedavg")),
    Result(P, "(7)", "algorithm line", "g_nIID = (1/|I_t|) sum_{I_t} Delta_i: (8) only if I_t counts multiplicity",
           checks=(C + "aggregate_weights", C + "aggregate_7_as_set")),
    Result(P, "(8)", "algorithm line", "compact form w - (eta eta_bar/n) sum_{I_t} sum_k grad f(w_i^{tau,k})",
           checks=(C + "aggregate_weights", C + "zero_delay_is_fedavg", C + "fedavg_update_corrected")),
    Result(P, "Algorithm 2", "algorithm line", "DeFedAvg-IID: the first n updates to arrive",
           checks=(C + "sync_is_full_fedavg", C + "lemma7", C + "theorem2_corrected")),
    Result(P, "(9)", "definition", "IID problem min E_{xi ~ D} f(w; xi)",
           why="a definition; the IID family (exact.iid_federation, identical clients) is its instance in every "
               "Theorem 2 check"),
    Result(P, "Sec. 2.2, IID update", "algorithm line", "w^{t+1} = w^t - eta g_IID, g_IID = (1/|I_t|) sum_{I_t} Delta",
           checks=(C + "sync_is_full_fedavg", C + "lemma7_rounds")),
    Result(P, "Sec. 2.3, send-buffer policies", "claim in the text",
           "the overwrite and the energy-saving policy enjoy the same guarantees (Theorems 1-2)",
           checks=(C + "theorem1_events", C + "theorem1_corrected_events")),
    # ---------------------------------------------------------------- Section 3: assumptions and theorems
    Result(P, "Assumption 1", "assumption", "every F_i L-smooth",
           why="an assumption, no claim; the quadratic families take L = max a (checks.py's docstring)"),
    Result(P, "Assumption 2 (10)", "assumption", "unbiased stochastic gradients given the past",
           why="an assumption, no claim; the additive noise is fresh at every local step and independent of the "
               "schedule, which the exact moments use"),
    Result(P, "Assumption 3", "assumption", "variance at most sigma^2",
           why="an assumption, no claim; the noise has trace exactly sigma^2, which lemma7 and lemma2_exact see as "
               "equalities"),
    Result(P, "Assumption 4", "assumption", "staleness t - tau_i(t) <= lambda",
           why="an assumption, no claim; oracles draw delays in 0..lambda, event-driven schedules use their measured "
               "largest staleness"),
    Result(P, "Sec. 3, lambda for Algorithm 1", "claim in the text",
           "lambda <= O((1/p)(1 + log(NT/delta))) with probability 1 - delta ([19, Thm 5.2])",
           why="cited without constants; the event-driven checks (theorem1_events) use the measured largest staleness "
               "instead (docs: what stays open)"),
    Result(P, "Assumption 5", "assumption", "heterogeneity ||grad F_i - grad F||^2 <= nu^2 along the iterates",
           why="an assumption, no claim; nu^2 is exact on the non-IID family"),
    Result(P, "Assumption 6", "assumption", "bounded gradients E||grad F_i||^2 <= G^2 along the iterates",
           why="an assumption, no claim; G^2 is the exact supremum over every global and local iterate"),
    Result(P, "Theorem 1 (11)-(12)", "theorem", "DeFedAvg-nIID: average squared gradient at the prescribed rates",
           checks=(C + "theorem1", C + "theorem1_corrected", C + "theorem1_general", C + "theorem1_events",
                   C + "theorem1_corrected_events")),
    Result(P, "Sec. 3.1, T = Omega(n K lambda^4)", "claim in the text", "(11) at the prescribed rates needs T >= T_min",
           checks=(C + "n_max_theorem1",)),
    Result(P, "Sec. 3.1, rate O(1/sqrt(nT) + 1/(KT))", "claim in the text",
           "(12) decays like 1/sqrt(nT) (not 1/sqrt(nKT)); linear speedup in n",
           checks=(C + "theorem1_rate", C + "linear_speedup_niid")),
    Result(P, "Sec. 3.1, lambda = 1 against FedAvg [8]", "claim in the text",
           "with lambda = 1 Theorem 1 matches FedAvg's O(sqrt(K)/sqrt(nT) + 1/T)",
           why="a comparison with a cited rate, no new claim; Theorem 1's own rate is theorem1_rate, and zero delay "
               "reduces DeFedAvg-nIID to FedAvg (zero_delay_is_fedavg)"),
    Result(P, "Sec. 3.1, K = 1: asynchronous SGD", "claim in the text", "O(1/sqrt(nT) + 1/T) for T = Omega(n lambda^4)",
           checks=(C + "theorem1_rate", C + "n_max_theorem1")),
    Result(P, "Theorem 2 (13)-(14)", "theorem", "DeFedAvg-IID at the prescribed rates: printed bound false",
           checks=(C + "theorem2", C + "theorem2_corrected", C + "theorem2_general")),
    Result(P, "Sec. 3.2, T = Omega(n K lambda^2)", "claim in the text", "(13) at the prescribed rates needs T >= T_min",
           checks=(C + "n_max_theorem2",)),
    Result(P, "Sec. 3.2, rate O(1/sqrt(nKT) + 1/(KT))", "claim in the text",
           "rounds O(1/(nK eps^2) + 1/(K eps)): linear speedup in n",
           checks=(C + "rounds_to_epsilon", C + "speedup_constant", C + "linear_speedup", C + "theorem2_corrected")),
    Result(P, "Sec. 3.2, lambda = 1", "claim in the text", "Theorem 2 gives O(1/sqrt(nKT) + n/T) for T = Omega(nK)",
           checks=(C + "rate_lambda1",)),
    # ---------------------------------------------------------------- Appendix A.1: Theorem 1
    Result(P, "Fact 1", "lemma", "E[UV] = E[U E[V | F]] for F-measurable U",
           why="the tower property of conditional expectation, true by definition; the exact engines apply it (noise "
               "independent of the past) and descent_lemma_37 and lemma1 see its consequences exactly"),
    Result(P, "Fact 2", "lemma", "||sum_{i<m} x_i||^2 <= m sum ||x_i||^2", checks=(C + "fact2",)),
    Result(P, "Lemma 1 (15)-(18)", "lemma", "bias of the nIID aggregate", checks=(C + "lemma1",)),
    Result(P, "Lemma 2 (19)", "lemma", "E||sum_{I_t} sum_k (g - G)||^2 <= 2nK sigma^2: needs n <= N + 1",
           checks=(C + "lemma2", C + "lemma2_as_printed", C + "lemma2_corrected")),
    Result(P, "Lemma 2 (20)", "lemma", "the same over the stale rounds: <= 2nK lambda sigma^2",
           checks=(C + "lemma2_rounds",)),
    Result(P, "Lemma 2, proof (21)-(29)", "equation", "(24)-(26): equality n(N+n-1)/N K sigma^2; (27)-(29) rounds",
           checks=(C + "lemma2_exact", C + "lemma2_rounds")),
    Result(P, "Lemma 3 (30)-(33)", "lemma", "second moment of the nIID aggregate", checks=(C + "lemma3",)),
    Result(P, "Lemma 4 (34)-(35)", "lemma", "client drift of DeFedAvg-nIID", checks=(C + "lemma4", C + "lemma4_step")),
    Result(P, "Lemma 5", "lemma", "staleness gap of DeFedAvg-nIID", checks=(C + "lemma5",)),
    Result(P, "(36)", "equation", "(36)(b): an extra 1/n^2",
           checks=(C + "lemma5_step36", C + "lemma5_step36_corrected")),
    Result(P, "(37)", "equation", "descent lemma with g_nIID", checks=(C + "descent_lemma_37",)),
    Result(P, "(38) and its conditions", "equation",
           "Lemmas 1, 3, 4 substituted; 'eta eta_bar <= 1/(2LK) <=> ...' needs 1/(4LK)",
           checks=(C + "theorem1_step", C + "theorem1_step_corrected", C + "descent_niid")),
    Result(P, "(39)-(40)", "equation", "per-round descent of DeFedAvg-nIID under (11)", checks=(C + "descent_niid",)),
    Result(P, "(41)", "equation", "Theorem 1's bound for any rates, and at the prescribed rates",
           checks=(C + "theorem1_general", C + "theorem1_corrected", C + "theorem1")),
    # ---------------------------------------------------------------- Appendix A.2: Theorem 2
    Result(P, "Lemma 6 (42)", "lemma", "bias of the IID aggregate", checks=(C + "lemma6",)),
    Result(P, "Lemma 7 (43)-(44)", "lemma", "noise of the IID aggregate, one round and over the stale rounds",
           checks=(C + "lemma7", C + "lemma7_rounds")),
    Result(P, "Lemma 8 (45)-(46)", "lemma", "second moment of the IID aggregate", checks=(C + "lemma8",)),
    Result(P, "Lemma 9", "lemma", "client drift of DeFedAvg-IID (its proof's step needs 1/(2 sqrt3 LK))",
           checks=(C + "lemma9", C + "lemma9_corrected", C + "lemma9_step", C + "lemma9_step_corrected")),
    Result(P, "Lemma 10", "lemma", "staleness gap of DeFedAvg-IID", checks=(C + "lemma10",)),
    Result(P, "(47)", "equation", "per-round descent of DeFedAvg-IID under (13)", checks=(C + "descent_iid",)),
    Result(P, "Theorem 2, proof (last display)", "equation",
           "the bound for any rates under (13), and sqrt(128 L Phi0/(nKT)) + 8L/(KT) at the prescribed rates",
           checks=(C + "theorem2_general", C + "theorem2_appendix", C + "theorem2_corrected")),
)

# registered checks that check no numbered result of the paper, and why (none)
EXTRAS: dict = {}
