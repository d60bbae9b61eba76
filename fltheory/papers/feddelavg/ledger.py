"""What the checks of FedDelAvg find (``FINDINGS``) and which check covers each numbered result
(``RESULTS``): data for :mod:`fltheory.claims`; every number is a placeholder that a fresh report
fills in."""
from ...claims import Finding

P = "feddelavg"
FINDINGS = (
    Finding(P, "Theorem 1 with the printed output set k = 0..K−1",
            "the theorem (ratio {{ratio:feddelavg.theorem1}}, at K = {{param:feddelavg.theorem1:K}})",
            "the bound over k = 1..K, {{verdict:feddelavg.theorem1_corrected}}"),
    Finding(P, "Lemma 4 over the main-text range T_k∖{kτ}",
            "the lemma when Δ = 0: the sync time (k+1)τ then lies in the range (ratio {{ratio:feddelavg.lemma4}})",
            "at non-sync times, {{verdict:feddelavg.lemma4_corrected}}"),
    Finding(P, "(25), Lemma 4's no-delay form",
            "the lemma for α < 1 (α = {{param:feddelavg.lemma4_no_delay:alpha}})",
            "α = 1, Δ = 0, before the next sync: {{verdict:feddelavg.lemma4_no_delay_corrected}}"),
)
RESULTS = ()
