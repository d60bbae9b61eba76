"""Issue 21: the adversarial search of six `holds` checks reaches the independent referees' worst ratios.

Each check's family lies inside its statement's hypotheses; the search (fltheory.search) runs with the
check's full budget.  Referees' worst ratios (random instances + local optimisation):

* tdma.theorem1_corrected: 1 (tight: N = S = 1, f = w^2/2, eta L = 1);
* afl_dga.theorem1_corrected_det: 0.99999925 (tight: T = 1, eta L = 1);
* afl_dga.lemma1_corrected_expectation: 0.998 (sup 1: linear clients, N -> infinity);
* afl_dga.corollary1_corrected: 0.459;
* defedavg.descent_niid: 0.262;
* defedavg.lemma3: 0.49998 (sup 1/2 as n -> infinity; see the test).
"""
import pytest

from fltheory.verify import rebuild, registry

REFEREES = {
    "tdma.theorem1_corrected": 1.0 - 1e-6,
    "afl_dga.theorem1_corrected_det": 0.99999925,
    "afl_dga.lemma1_corrected_expectation": 0.998,
    "afl_dga.corollary1_corrected": 0.459,
}
TIGHT = ("tdma.theorem1_corrected", "afl_dga.theorem1_corrected_det")


def _check(name):
    return next(c for c in registry([name.split(".")[0]]) if c.name == name)


@pytest.mark.parametrize("name", sorted(REFEREES))
def test_search_reaches_the_referees_worst_ratio(name):
    c = _check(name)
    res = c.search(quick=False, seed=0)
    assert res.ratio >= REFEREES[name], (name, res.ratio, res.params)
    assert res.ratio <= 1 + c.rtol and res.evaluations <= c.search_budget[1]
    # the worst instance is rebuilt from its parameters alone (as a report's counterexample would be)
    r = rebuild(c, res.sample.params, res.sample.seed)
    assert r.ratio == pytest.approx(res.ratio, rel=1e-12) and not r.violated


@pytest.mark.parametrize("name", TIGHT)
@pytest.mark.parametrize("quick", [True, False])
def test_tight_statements_become_tight(name, quick):
    v = _check(name).run(quick=quick, seed=0)
    assert v.status == "tight" and v.ok and v.expected == "holds"
    assert v.sampled_worst_ratio < 0.7 < v.worst_ratio        # the sampler alone did not see it
    assert v.search["evaluations"] > 0 and v.search["family"]
