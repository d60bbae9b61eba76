"""The numbers docs/papers/feddelavg.rst quotes, each rebuilt from a fresh full run of the check it comes from.

FRAGMENTS are the page's sentences with placeholders (``fltheory.claims``) where the page has numbers; each
rendered fragment must appear in the page (whitespace aside).  ``{{huber:tau}}`` is the ratio of Theorem 1's
literal Huber instance at that tau (``checks.literal_huber_runs``)."""
import pytest

from fltheory.papers.feddelavg import checks as C
from fltheory.papers.feddelavg import checks_experiments as X

from docsfrag import assert_on_page, page, render_all, squash, verdicts

PAGE = page("papers/feddelavg.rst")
FRAGMENTS = (
    r"and at the search's :math:`K\le200` it reaches {{ratio:feddelavg.theorem1_corrected}}.",
    r"the search reaches {{ratio:feddelavg.prop2_corrected}}.",
    r"exactly :math:`\tau/4`, {{ratio:feddelavg.theorem1}} at :math:`\tau={{param:feddelavg.theorem1:tau}}` (gap "
    r"{{value:feddelavg.theorem1}} against the bound {{bound:feddelavg.theorem1}}), {{huber:10}} at "
    r":math:`\tau=10` and {{huber:40}} at :math:`\tau=40`.",
    r"In the counterexample (``feddelavg.lemma4``) the distance is {{value:feddelavg.lemma4}} and the bound "
    r"{{bound:feddelavg.lemma4}} (round-off of 0).",
    r"(``feddelavg.lemma4_no_delay``: :math:`\alpha` = {{param:feddelavg.lemma4_no_delay:alpha}} gives a distance of "
    r"{{value:feddelavg.lemma4_no_delay}} where the bound is {{bound:feddelavg.lemma4_no_delay}}).",
    r":math:`\alpha` = {{param:feddelavg.prop1_step:alpha}} the bound is {{bound:feddelavg.prop1_step}} and the mean "
    r"distance {{value:feddelavg.prop1_step}}).",
    # Section IV (checks_experiments.py)
    r"(``feddelavg.exp_small_alpha_beats_fedavg``: mean gap at most {{ratio:feddelavg.exp_small_alpha_beats_fedavg}} of "
    r"FedAvg's)",
    r"(``feddelavg.exp_alpha_02_best``: on data seed {{param:feddelavg.exp_alpha_02_best:seed}}, separation "
    r"{{param:feddelavg.exp_alpha_02_best:sep}} the best is :math:`\alpha` = "
    r"{{param:feddelavg.exp_alpha_02_best:best_alpha}})",
    r"(``feddelavg.exp_delay_robust_iterations``: {{param:feddelavg.exp_delay_robust_iterations:iterations_best}} against "
    r"{{param:feddelavg.exp_delay_robust_iterations:iterations_benchmark}}; FedAvg under delay never reaches it)",
    r"(``feddelavg.exp_final_accuracy_within_3pct``: the largest shortfall is {{worstratio:feddelavg.exp_final_accuracy_within_3pct}} "
    r"of the 3 points, on {{ntest}} held-out samples per class)",
    r"(``feddelavg.exp_fedavg_degraded_under_delay``: {{param:feddelavg.exp_fedavg_degraded_under_delay:acc_fedavg_delayed}} "
    r"against the benchmark's {{param:feddelavg.exp_fedavg_degraded_under_delay:acc_benchmark}}), although its mean "
    r"gap is {{param:feddelavg.exp_fedavg_degraded_under_delay:gap_ratio_fedavg_delayed}} times the benchmark's.",
)
TIGHT_NAMED = ("Proposition 1's one-step recursion (63)-(65)", "window sums (72)-(75)", "Lemmas 1 and 2", "Lemma 3 (printed, corrected and at :math:`\\Delta=0`)", "Lemma 4 and (25) as corrected",
               "Lemma 5 and Proposition 1 (printed and corrected, distance and loss forms)", "(20)",
               "Theorem 1 over :math:`k=1,\\dots,K`")


def _huber(tau):
    (s,) = C._theorem1_of(C.literal_huber_runs(int(tau)), printed=True)
    return s.value / s.bound


@pytest.fixture(scope="module")
def rendered():
    return render_all(FRAGMENTS, verdicts(FRAGMENTS), {"huber": _huber, "ntest": lambda: X.N_TEST})


def test_every_number_of_the_page_is_the_checks(rendered):
    assert_on_page(PAGE, rendered)


def test_theorem1_literal_huber_ratio_is_tau_over_4():
    for tau in (5, 10, 40):
        (s,) = C._theorem1_of(C.literal_huber_runs(tau), printed=True)
        assert s.value / s.bound == tau / 4


def test_the_page_names_the_tight_statements():
    page = squash(PAGE)
    assert "Tight (supremum ratio 1):" in page
    for name in TIGHT_NAMED:
        assert name in page, name
