"""The numbers and verdicts docs/papers/afl_dga.rst states, each rebuilt from a fresh run (tests/docsfrag.py).

FRAGMENTS quote the checks' verdicts (a full run of exactly the checks they name, about 40 s of CPU, marked slow) and what the package computes
outside a verdict (the periodic and linear families' instances of the checks' samplers); CLAIMED are the page's
words "holds", "tight", "violated" about the checks it names."""
import pytest

from fltheory.papers.afl_dga import checks as C

from docsfrag import assert_page, ce_param, page, render_all, verdicts

pytestmark = pytest.mark.slow      # the full run of the checks the page quotes: ~40 s of CPU

PAGE = page("papers/afl_dga.rst")
A = "afl_dga."
FRAGMENTS = (
    r"agrees with it to {{worst:afl_dga.exact_vs_simulation}} in all three modes.",
    r"and the search reaches {{ratio:afl_dga.lemma1_corrected_expectation}} at "
    r":math:`N={{param:afl_dga.lemma1_corrected_expectation:N}}`,",
    r"(``theorem1_corrected_det``, tight at :math:`T={{param:afl_dga.theorem1_corrected_det:T}}`, "
    r":math:`\eta L={{param:afl_dga.theorem1_corrected_det:eta_L}}`)",
    r"(``theorem1_corrected``, worst ratio {{ratio:afl_dga.theorem1_corrected}} to four digits: its supremum is 1/2,",
    r"Corollary 1' is not refuted (worst ratio {{ratio:afl_dga.corollary1_corrected}}),",
    r":math:`\|\bar g^t\|^2=1` against :math:`1/N`: {{value:afl_dga.eq2}} against {{bound:afl_dga.eq2}} for "
    r":math:`N={{param:afl_dga.eq2:N}}`, ratio {{worstratio:afl_dga.eq2}} for :math:`N=50`.",
    r":math:`\eta={{param:afl_dga.lemma1:eta}}` (both :math:`\le1/L` and :math:`\le1/T` with "
    r":math:`T={{param:afl_dga.lemma1:T}}`).  The smallest counterexample, :math:`N={{param:afl_dga.lemma1:N}}`, "
    r":math:`D={{param:afl_dga.lemma1:D}}`, has distance {{value:afl_dga.lemma1}} against the bound "
    r"{{bound:afl_dga.lemma1}}; the worst, :math:`N={{lemma1_worst:N}}`, :math:`D={{lemma1_worst:D}}`, "
    r"{{lemma1_worst:value}} against {{lemma1_worst:bound}} (ratio {{worstratio:afl_dga.lemma1}}).",
    r"(``afl_dga.lemma1_used``), the ratio reaches {{worstratio:afl_dga.lemma1_used}}.",
    r":math:`T={{param:afl_dga.lag_count_printed:T}}`, :math:`K={{tuple:afl_dga.lag_count_printed:K}}`, "
    r":math:`D={{tuple:afl_dga.lag_count_printed:D}}`: the first local iteration of round 3 still waits for the "
    r"correction of round 0, so :math:`\rho={{value:afl_dga.lag_count_printed}}` against the count "
    r"{{bound:afl_dga.lag_count_printed}}; on random anarchic schedules the ratio reaches "
    r"{{worstratio:afl_dga.lag_count_printed}}.",
    r":math:`N={{param:afl_dga.theorem1:N}}`, :math:`T={{param:afl_dga.theorem1:T}}`, "
    r":math:`t_d={{param:afl_dga.theorem1:t_d}}`, :math:`\eta L={{param:afl_dga.theorem1:eta}}`: "
    r"{{value:afl_dga.theorem1}} against {{bound:afl_dga.theorem1}} (ratio {{ratio:afl_dga.theorem1}}); at "
    r"Corollary 1's step :math:`\eta L=\sqrt{N/T}` = {{periodic:0:etaL}}: {{periodic:0:value}} against "
    r"{{periodic:0:bound}} (ratio {{periodic:0:ratio}}); the worst, :math:`(N,T,\eta L,t_d)=({{periodic:3:N}},"
    r"{{periodic:3:T}},{{periodic:3:etaL}},{{periodic:3:t_d}})`: {{periodic:3:value}} against {{periodic:3:bound}} "
    r"(ratio {{worstratio:afl_dga.theorem1}}).",
    r"({{ratio:afl_dga.theorem1_literal_step}} at :math:`L={{param:afl_dga.theorem1_literal_step:L}}`, "
    r":math:`\eta={{param:afl_dga.theorem1_literal_step:eta}}`)",
    r"{{value:afl_dga.corollary1}} against {{bound:afl_dga.corollary1}} (ratio {{ratio:afl_dga.corollary1}}, "
    r":math:`N={{param:afl_dga.corollary1:N}}`, :math:`T={{param:afl_dga.corollary1:T}}`, "
    r":math:`t_d={{param:afl_dga.corollary1:t_d}}`), also rescaled to :math:`\eta=1/T`; the worst ratio is "
    r"{{worstratio:afl_dga.corollary1}} (:math:`N={{periodic:2:N}}`, :math:`T={{periodic:2:T}}`, "
    r":math:`t_d={{periodic:2:t_d}}`).",
    r"the corollary's step size is at most :math:`C_O={{param:afl_dga.corollary1_printed:C_O}}` times them,",
    r"(the check's ladder runs :math:`T={{ladder:0}}` to :math:`{{ladder:-1}}`).",
    r"(``afl_dga.eq3``: :math:`N` identical clients, ratio :math:`N`).",
)
CLAIMED = {
    **{A + n: "holds" for n in ("lemma1_corrected_expectation", "theorem1_corrected", "corollary1_corrected",
                                "corollary1_substitution", "corollary1_corrected_substitution", "timing_fold",
                                "exact_vs_simulation", "eq4_fresh_noise")},
    **{A + n: "tight" for n in ("lemma1_corrected", "lemma2_n", "lemma2_rho", "theorem1_corrected_det",
                                "eq2_corrected", "gamma_corrected", "eq5")},
    **{A + n: "violated" for n in ("eq2", "lemma1", "lemma1_used", "lag_count_printed", "theorem1",
                                   "theorem1_literal_step", "corollary1", "corollary1_printed", "gamma_iid", "eq3",
                                   "eq4", "eq6", "lag_range_terms")},
}


def _periodic(arg):
    """An instance of the periodic family (checks.PERIODIC: 0 is Corollary 1's step, 3 the worst for Theorem 1;
    2 is the worst for Corollary 1, which is Theorem 1 at that step size)."""
    i, what = arg.split(":")
    N, T, etaL, t_d = C.PERIODIC[int(i)]
    s = C._periodic_sample(N, T, etaL, t_d, literal=False, statement="corollary1" if i == "2" else "theorem1")
    return dict(N=N, T=T, etaL=etaL, t_d=t_d, value=s.value, bound=s.bound, ratio=s.value / s.bound)[what]


def _lemma1_worst(what):
    s = max(C._lemma1_samples(False, 0, used=False), key=lambda s: s.value / s.bound)
    return {"value": s.value, "bound": s.bound}.get(what, s.params.get(what))


@pytest.fixture(scope="module")
def found():
    return verdicts(FRAGMENTS, extra=[n for n, w in CLAIMED.items() if w == "tight"] + [A + "eq3"])


@pytest.fixture(scope="module")
def rendered(found):
    def tup(arg):
        (row,) = ce_param(found, arg)       # one client: the row of the N x T array
        return "(" + ",".join(str(int(x)) for x in row) + ")"

    computed = {"periodic": _periodic, "lemma1_worst": _lemma1_worst, "tuple": tup,
                "ladder": lambda i: C.COROLLARY_LADDER[int(i)]}
    return render_all(FRAGMENTS, found, computed)


def test_the_page_is_the_checks(rendered, found):
    """The page's numbers and verdict words are a fresh run's (docsfrag.assert_page), and what it says of its
    instances is true."""
    assert_page(PAGE, rendered, CLAIMED, found)
    _eq3_ratio_is_N(found)


def _eq3_ratio_is_N(found):
    """"ratio N" of eq. (3): the counterexample's ratio is its number of identical clients."""
    ce = found[A + "eq3"].counterexample
    assert ce["ratio"] == pytest.approx(ce["params"]["N"], rel=1e-12)
