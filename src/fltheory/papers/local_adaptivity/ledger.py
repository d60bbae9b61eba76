"""What the checks of the local-adaptivity paper find (``FINDINGS``) and which check covers each
numbered result (``RESULTS``): data for :mod:`fltheory.claims`; every number is a placeholder that
a fresh report fills in."""
from ...claims import Finding, Result

P = "local_adaptivity"
FINDINGS = (
    Finding(P, "(68)/(72)/(73), (77) and (85): decaying server LR for client SGD",
            "a constant: with the paper's β, α₀ = {{param:local_adaptivity.sgd_decaying_printed:alpha_0}} and the exact "
            "r₁ = {{value:local_adaptivity.sgd_decaying_printed}} against {{bound:local_adaptivity.sgd_decaying_printed}}; "
            "the τ = 1 form (77) and (85) (ημτ ≤ 1) inherit the error (ratios "
            "{{ratio:local_adaptivity.sgd_tau1_printed}} and {{ratio:local_adaptivity.sgd_decaying_85_printed}})",
            "the O(1/T) rate: β ≥ 2/a, r_t ≤ max{4C/a², βr₀}/(t+β), "
            "{{verdict:local_adaptivity.sgd_decaying_corrected}}; so do (77), max{4σ²/(μ²M), βr₀}/(T+β), "
            "{{verdict:local_adaptivity.sgd_tau1_corrected}}, and (85), max{9σ²/(μ²Mτ), βr₀}/(T+β), "
            "{{verdict:local_adaptivity.sgd_decaying_85_corrected}}"),
    Finding(P, "(129), the last line of Theorem 3's proof (an average over t)",
            "a proof step: local AdaGrad on one 1-D convex quadratic client, τ = T = 1, the η of (130) (α = 1/L), "
            "v₀ = {{param:local_adaptivity.theorem3_printed:v0}}, gives 2DL against DL + (D²L²ΛG²)^{1/3}, a ratio "
            "that tends to 2 as v₀ → ∞ ({{ratio:local_adaptivity.theorem3_printed}} here)",
            "the proof's bound (126) on the runs, {{verdict:local_adaptivity.theorem3_general}}; with "
            "2DL/T + 3(D²L²ΛG²)^{1/3}/T^{2/3} the step is {{verdict:local_adaptivity.theorem3_corrected}}; Theorem 3's "
            "statement (100), an O(·) claim on the minimum over t, with these constants "
            "{{verdict:local_adaptivity.theorem3_min}}"),
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
    Finding(P, "Lemma 3 (63), Stich's lemma as worded: for the given step sizes γ_t ≤ 1/d",
            "a proof step: with s_t = 0 (as Theorem 1 uses it) the constant γ_t = 1/d leaves r_t → c/(ad) > 0 while the "
            "bound tends to 0: a/d = {{param:local_adaptivity.lemma3_printed:a_d}}, d = "
            "{{param:local_adaptivity.lemma3_printed:d}}, c/(d²r₀) = {{param:local_adaptivity.lemma3_printed:c_r0}}, r₀ = "
            "{{param:local_adaptivity.lemma3_printed:r0}}, T = {{param:local_adaptivity.lemma3_printed:T_worst}} "
            "gives a r_(T+1) = {{value:local_adaptivity.lemma3_printed}} against {{bound:local_adaptivity.lemma3_printed}}",
            "the lemma as Stich proves it, with step sizes that exist, {{verdict:local_adaptivity.lemma3}}; (64) built on "
            "it, {{verdict:local_adaptivity.theorem1_proven}}"),
    Finding(P, "Theorem 2 (8), the small-η limit of the fixed point",
            "the theorem, which silently needs Σᵢ wᵢγᵢτᵢPᵢHᵢ invertible: with a singular sum FedOpt converges for every "
            "small η but the limit grows like 1/η (ratio {{ratio:local_adaptivity.limit8_singular}} at η = "
            "{{param:local_adaptivity.limit8_singular:eta}})",
            "(8) when the sum is invertible, {{verdict:local_adaptivity.limit8}}"),
    Finding(P, "Theorem 2 (8): the limit is ≠ x* as soon as a factor (ηᵢ, τᵢ, Pᵢ) differs across clients",
            "the theorem's ≠: two clients whose preconditioners differ by a rank-one term orthogonal to w₁H₁(x* − x₁*) "
            "have the limit x* itself (exactly in rational arithmetic; in float64 gap/‖x*‖ = "
            "{{value:local_adaptivity.limit8_gap}}), and the bias, {{param:local_adaptivity.limit8_gap:bias_eta_0_01}} "
            "at η = 0.01, vanishes with η",
            "for two clients lim − x* = −A₀⁻¹(N₁ − N₂)g with g = w₁H₁(x* − x₁*): the gap is nonzero unless "
            "(N₁ − N₂)g = 0, and the bias tends to it as η → 0, {{verdict:local_adaptivity.nonvanishing_bias}}"),
    Finding(P, "Lemma 2 with random x, y sharing one source, and Prop. B.2 (36) for stochastic client SGD",
            "the lemma and the proposition on a C² non-quadratic F (F″ = 1 + smoothstep: μ = 1, L = 2): x, y = (−3, −5) "
            "or (111, 111.9) with probability ½ each gives ‖E[∇F(x) − ∇F(y)]‖² = "
            "{{value:local_adaptivity.lemma2_14_random}} against μ²‖E[x − y]‖² = "
            "{{bound:local_adaptivity.lemma2_14_random}}, and (16) fails on the same outcomes (ratio "
            "{{ratio:local_adaptivity.lemma2_16_random}}); (−5, −4) or (112, 110) break (15) (ratio "
            "{{ratio:local_adaptivity.lemma2_15_random}}); two SGD steps with unbiased state-dependent noise: ratio "
            "{{ratio:local_adaptivity.h_sgd_stochastic}} at ε = {{param:local_adaptivity.h_sgd_stochastic:eps}}, "
            "growing like 1/ε²",
            "with deterministic x, y or a quadratic F (constant Hessian): (14) {{verdict:local_adaptivity.lemma2_14}}, "
            "(16) {{verdict:local_adaptivity.lemma2_16}}; (36) for GD on quadratics "
            "{{verdict:local_adaptivity.h_sgd}}"),
    Finding(P, "our own claim: with AdaGrad clients the corrected limit is closer to x* than the uncorrected one",
            "our claim, at the exact limits: two clients with w₁ tuned so that the uncorrected limit is x* itself "
            "(ratio {{ratio:local_adaptivity.adaptive_bias_shrinks}})",
            "the corrected bias is O(η), {{verdict:local_adaptivity.corrected_bias_first_order}}; the uncorrected "
            "one does not vanish as η → 0, {{verdict:local_adaptivity.nonvanishing_bias}}; at a fixed η either limit "
            "can be the closer one"),
)

def _r(label, kind, summary, checks=(), why=""):
    return Result(P, label, kind, summary, tuple(f"{P}.{c}" for c in checks), why)


RESULTS = (
    _r("(1)", "definition", "the objective F(x) = Σᵢ wᵢ Fᵢ(x)",
       why="a definition: its minimiser x* enters every bias check (worked_example checks x* of the example to the "
           "printed digits)"),
    _r("Definition 1", "definition", "the client optimizer operator Aᵢ(x; k, Ξᵢ, sᵢ)",
       why="a definition; its preconditioned-GD instance (2) is checked by closed_form_vs_simulation"),
    _r("(2)", "algorithm line", "preconditioned SGD: Aᵢ = x − ηᵢ Σₛ Pᵢ⁽ˢ⁾ gᵢ(x⁽ˢ⁾)",
       ("closed_form_vs_simulation", "eq9_skewed_gradient")),
    _r("(3)", "algorithm line", "AdaGrad's preconditioner Pᵢ⁽ˢ⁾ = ((Pᵢ⁽ˢ⁻¹⁾)⁻² + diag g gᵀ)^(−1/2)",
       why="defines AdaGrad (no claim); the simulator's local AdaGrad runs it in theorem3_general, theorem3_corrected, "
           "theorem3_printed and adaptive_bias_shrinks (tests/test_local_adaptivity_algorithm.py tests the steps)"),
    _r("(4)", "algorithm line", "each client runs τᵢ local steps from the server model x⁽ᵗ⁾",
       ("closed_form_vs_simulation",)),
    _r("(5)", "algorithm line", "server GD on the averaged local changes with server LR α",
       ("closed_form_vs_simulation", "theorem1_recursion")),
    _r("(6)", "equation", "FedOpt as a stochastic fixed-point (Mann) iteration of E[A]",
       ("closed_form_vs_simulation", "theorem1_recursion")),
    _r("Assumption 1", "assumption", "contractive local operator with constant hᵢ(k)",
       why="an assumption (no claim); for client SGD its hᵢ(k) = (1 − ηᵢμᵢ)^(2k) (App. B.2) is checked by h_sgd"),
    _r("Assumption 2", "assumption", "bounded cumulative variance qᵢ(k) σ²",
       why="an assumption (no claim); for client SGD its qᵢ(k) = k ηᵢ² (App. B.3) is checked by q_sgd"),
    _r("Theorem 1 (7)", "theorem", "E[A] is contractive with a unique fixed point x̃, and "
       "E‖x⁽ᵀ⁾ − x̃‖² ≤ c (h̄ᵀ r₀/(1 − h̄) + C_q/(T(1 − h̄)²))",
       ("theorem1_printed", "theorem1_printed_best_schedule", "theorem1_recursion", "theorem1_constant_alpha",
        "theorem1_proven")),
    _r("Section 4 (text)", "claim in the text", "client GD with common η, τ: ‖x̃ − x*‖ = O(η(τ − 1)) [19, 20]",
       ("plain_gd_bias",)),
    _r("Section 4 (toy example)", "claim in the text", "ideal preconditioners Pᵢ = Hᵢ⁻¹ (ηᵢ = 1, α = 1): FedOpt reaches "
       "x̃ in one round", ("one_round_inverse_hessian",)),
    _r("Theorem 2 (94)", "theorem", "preconditioned GD clients on quadratics: x̃ = (Σᵢ wᵢ(I − Kᵢ))⁻¹ Σᵢ wᵢ(I − Kᵢ)xᵢ*, "
       "Kᵢ = (I − ηᵢPᵢHᵢ)^τᵢ, ≠ x*", ("closed_form_vs_simulation", "theorem2_scalar", "worked_example")),
    _r("Theorem 2 (8)", "theorem", "ηᵢ = γᵢη → 0: x̃ → (Σᵢ wᵢγᵢτᵢPᵢHᵢ)⁻¹ Σᵢ wᵢγᵢτᵢPᵢHᵢxᵢ* ≠ x* (a non-vanishing bias)",
       ("limit8", "limit8_singular", "limit8_gap", "nonvanishing_bias", "worked_example")),
    _r("Theorem 2 (α_max)", "claim in the text", "FedOpt on quadratics converges iff the round map's spectral radius is "
       "below 1, i.e. 0 < α < α_max = minλ 2 Re λ/|λ|²", ("alpha_max", "worked_example")),
    _r("(9)", "equation", "x* − A(x*) = Σᵢ wᵢ [I − (I − ηᵢPᵢHᵢ)^τᵢ] Hᵢ⁻¹ ∇Fᵢ(x*)", ("eq9_skewed_gradient", "eq9_identity")),
    _r("(10)", "equation", "[x* − A(x*)]/maxᵢ ηᵢτᵢ = Σᵢ wᵢ ηᵢτᵢPᵢ/maxᵢ ηᵢτᵢ ∇Fᵢ(x*) + O(ηᵢτᵢ)", ("taylor10",)),
    _r("(11)", "equation", "local correction: Σᵢ wᵢ Nᵢ⁻¹(x* − Aᵢ(x*)) = ∇F(x*) + O(ηᵢτᵢ) = O(ηᵢτᵢ), so the corrected "
       "fixed point x̂ is O(η) from x*", ("corrected_bias_first_order", "closed_form_vs_simulation", "worked_example")),
    _r("Section 5 (text)", "claim in the text", "global correction rescales the aggregate by N_s⁻¹ (keeping the "
       "local preconditioning's scale) without moving the fixed point", ("global_correction_fixed_point",)),
    _r("Algorithm 1", "algorithm line", "local adaptive FedOpt: restarted client states, local correction Nᵢ, "
       "global correction N_s", ("closed_form_vs_simulation", "theorem3_general", "theorem3_corrected")),
    _r("Lemma 1 (12)", "lemma", "∇F(x) − ∇F(y) = H(x − y) with H = ∫₀¹ ∇²F(y + s(x − y)) ds", ("lemma1",)),
    _r("Lemma 2 (14)", "lemma", "‖E[∇F(x) − ∇F(y)]‖² ≥ μ² ‖E[x − y]‖²", ("lemma2_14", "lemma2_14_random")),
    _r("Lemma 2 (15)", "lemma", "‖E[∇F(x) − ∇F(y)]‖² ≤ L ⟨E[∇F(x) − ∇F(y)], E[x − y]⟩", ("lemma2_15", "lemma2_15_random")),
    _r("Lemma 2 (16)", "lemma", "(μ + L)⟨E[∇F(x) − ∇F(y)], E[x − y]⟩ ≥ ‖E[∇F(x) − ∇F(y)]‖² + μL‖E[x − y]‖²",
       ("lemma2_16", "lemma2_16_random")),
    _r("App. B.2 (36)", "claim in the text", "client SGD meets Assumption 1 with hᵢ(k) = (1 − ηᵢμᵢ)^(2k) "
       "(ηᵢ(μᵢ + Lᵢ) < 2); tuned per client, ηᵢ = 2/(μᵢ + Lᵢ) gives ((Lᵢ − μᵢ)/(Lᵢ + μᵢ))^(2k)",
       ("h_sgd", "h_sgd_stochastic", "h_sgd_tuned")),
    _r("App. B.3 (37)", "claim in the text", "client SGD meets Assumption 2 with qᵢ(k) = k ηᵢ² (ηᵢLᵢ < 2)",
       ("q_sgd",)),
    _r("(54)", "equation", "E[A] = Σᵢ wᵢ E[Aᵢ] is contractive with squared constant h̄ = Σᵢ wᵢ hᵢ (Jensen)",
       ("theorem1_contraction",)),
    _r("(61)", "equation", "the per-round recursion r_(t+1) ≤ (1 − α(1 − h̄)) r_t + α² σ² Σᵢ wᵢ² qᵢ",
       ("theorem1_recursion", "theorem1_constant_alpha")),
    _r("Lemma 3 (63)", "lemma", "Stich's lemma (s_t = 0 as used): step sizes γ_t ≤ 1/d exist with a r_(T+1) ≤ "
       "32 d r₀ (1 − a/d)^(T/2) + 36c/(aT) ≤ 32 d r₀ exp(−aT/(2d)) + 36c/(aT) (worded: for any step sizes)",
       ("lemma3_printed", "lemma3", "theorem1_proven_exp")),
    _r("(64)", "equation", "Lemma 3 applied: E‖x⁽ᵀ⁺¹⁾ − x̃‖² ≤ 32 r₀ h̄^(T/2)/(1 − h̄) + 36 C_q/(T(1 − h̄)²)",
       ("theorem1_proven",)),
    _r("(65)", "equation", "(64) as c (h̄^(T/2) r₀/(1 − h̄) + C_q/(T(1 − h̄)²)), the form of (7) with h̄^(T/2)",
       ("theorem1_proven",)),
    _r("(66)", "corollary", "client GD, common η, τ, μ, L, α = 1: ‖x⁽ᵀ⁾ − x̃‖² ≤ (1 − ημ)^(2τT) r₀",
       ("gd_special_case", "gd_general_alpha")),
    _r("(67)", "equation", "client SGD in (61): hᵢ = (1 − ημ)^(2τ), qᵢ = τη²σ²",
       ("sgd_recursion", "theorem1_recursion", "sgd_decaying_corrected")),
    _r("(68)/(72)/(73)", "equation", "decaying server LR α_t = 2/((1 − (1 − ημ)^(2τ))(t + β)) with the printed β: "
       "an O(1/T) rate", ("sgd_decaying_printed", "sgd_decaying_corrected")),
    _r("(77)", "equation", "τ = 1: x̃ = x* and the O(σ²/(μ²T)) rate of synchronous SGD, from (73) ((74)–(76) its steps)",
       ("sgd_tau1_printed", "sgd_tau1_corrected")),
    _r("(78)/(85)", "equation", "τ > 1: (73) with z(ημ), and by (84) with the constant 3 (ημτ ≤ 1)",
       ("sgd_decaying_85_printed", "sgd_decaying_85_corrected", "z_uniform")),
    _r("(79)–(83)", "equation", "z′(x) ≥ 2τ[1 − (1 − x²)^(2τ−1)]/[1 − (1 − x)^(2τ)]² > 0: z increases on (0, 1]",
       ("z_derivative",)),
    _r("(84)", "equation", "z(ημ) ≤ z(1/τ) = 2/(1 − (1 − 1/τ)^(2τ)) ≤ 2/(1 − e⁻²) < 3 for ημτ ≤ 1",
       ("z_max", "z_uniform")),
    _r("(96)", "definition", "local changes x − Aᵢ(x) = ηᵢ Σₖ Bᵢ⁽ᵗ'ᵏ⁾ ∇Fᵢ(xᵢ⁽ᵗ'ᵏ⁾) with SPD Bᵢ",
       why="a definition (the form Theorem 3 assumes); local AdaGrad's steps have it, and the theorem3 checks run it"),
    _r("(97)", "algorithm line", "local correction: clients send hᵢ = Σₖ Aᵢ⁽ᵗ'ᵏ⁾ ∇Fᵢ, Aᵢ = Bᵢ/Σₖ Bᵢ",
       ("theorem3_general", "theorem3_corrected", "closed_form_vs_simulation")),
    _r("(98)", "algorithm line", "server update x⁽ᵗ⁺¹⁾ = x⁽ᵗ⁾ − α Σᵢ wᵢ hᵢ⁽ᵗ⁾", ("theorem3_general", "theorem3_corrected")),
    _r("Assumption 3", "assumption", "each Fᵢ is L-smooth",
       why="an assumption (no claim); the theorem3 checks use clients with the exact L (cosine and quadratic)"),
    _r("Assumption 4", "assumption", "‖Aᵢ⁽ᵗ'ᵏ⁾‖ ≤ Λ/τᵢ",
       why="an assumption (no claim); the theorem3 checks take Λ from the run, so it holds there"),
    _r("Assumption 5", "assumption", "‖Bᵢ⁽ᵗ'ᵏ⁾ ∇Fᵢ(xᵢ⁽ᵗ'ᵏ⁾)‖ ≤ G",
       why="an assumption (no claim); the theorem3 checks take G from the run, so it holds there"),
    _r("Theorem 3 (99)/(100)", "theorem", "local correction, non-convex: with η of (99) and α = ητ ≤ 1/L, "
       "min_t ‖∇F(x⁽ᵗ⁾)‖² = O(1/T + Λ^(1/3) G^(2/3)/T^(2/3))",
       ("theorem3_min", "theorem3_corrected", "theorem3_general", "theorem3_printed")),
    _r("Lemma 4 (101)", "lemma", "‖Σₖ Aₖbₖ‖² ≤ ‖A_s‖² ‖A_s⁻¹‖ Σₖ ‖Aₖ‖ ‖bₖ‖² for SPD Aₖ", ("lemma4", "lemma4_strong")),
    _r("(126)–(128)", "equation", "the average over t of ‖∇F‖² ≤ 2(F(x⁽⁰⁾) − F_inf)/(αT) + L²ΛG² Σᵢ wᵢηᵢ²τᵢ² "
       "(α = Σᵢ wᵢηᵢτᵢ; common η, τ: α = ητ)",
       ("theorem3_general", "theorem3_128")),
    _r("(129)/(130)", "equation", "the last line: DL/T + (D²L²ΛG²)^(1/3)/T^(2/3) with the η of (130)",
       ("theorem3_printed", "theorem3_128_at_130", "theorem3_corrected")),
)


# registered checks that check no numbered result of the paper, and why
EXTRAS = {"local_adaptivity.adaptive_bias_shrinks": "a claim of this package (not the paper's), kept as a falsified check"}
