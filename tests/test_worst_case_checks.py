"""Issue 21: the adversarial search of six `holds` checks reaches the independent referees' worst ratios.

Each check's family lies inside its statement's hypotheses; the search (fltheory.search) runs with the
check's full budget.  Referees' worst ratios (random instances + local optimisation):

* tdma.theorem1_corrected: 1 (tight: N = S = 1, f = w^2/2, eta L = 1);
* afl_dga.theorem1_corrected_det: 0.99999925 (tight: T = 1, eta L = 1);
* afl_dga.lemma1_corrected_expectation: 0.998 (sup 1: linear clients, N -> infinity);
* afl_dga.corollary1_corrected: 0.459;
* defedavg.descent_niid: 0.262 in the issue, 0.278 by a later referee (reached: 0.2810, the derived supremum
  9/32 at the family's end n = N = 1000 is 0.2811; the family mixes uniform and constant delays; tested with
  the derivation in tests/test_worst_case_defedavg.py);
* defedavg.lemma3: 0.49998 (sup 1/2 as n -> infinity, about 1/2 - 1/(2n): the family stops at n = 1000, where
  the search reaches 0.4991; the referees' value needs n ~ 5e4, whose exact evaluation takes ~10 s).
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
# below the referees' worst ratios (see the module docstring), but far above the sampler's own
SHORT = {"defedavg.lemma3": (0.499, 0.21)}


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


@pytest.mark.parametrize("name", TIGHT)
def test_a_planted_loosening_of_a_tight_statement_is_refuted_by_the_search(name):
    from fltheory.verify import Check, Sample

    c = _check(name)

    def loosened(p):
        s = c.evaluate(p)
        return Sample(s.value, 0.9 * s.bound, s.params, s.seed, s.size)

    planted = Check(name + "_planted", paper="demo", relation="<=", sampler=c.sampler, family=c.family,
                    evaluate=loosened, search_budget=c.search_budget)
    v = planted.run(quick=True, seed=0)
    assert v.sampled_worst_ratio < 0.75                      # the sampler alone does not refute it
    assert v.status == "violated" and v.counterexample["ratio"] > 1.1
    assert rebuild(planted, v.counterexample["params"], v.counterexample["seed"]).violated


@pytest.mark.parametrize("name", sorted(SHORT))
def test_defedavg_search_goes_far_beyond_the_sampler(name):
    c = _check(name)
    reached, sampled = SHORT[name]
    v = c.run(quick=name == "defedavg.lemma3", seed=0)       # lemma3's quick search already reaches n = 1000
    assert v.status == "holds" and v.worst_ratio >= reached and v.sampled_worst_ratio < 1.1 * sampled
    r = rebuild(c, v.search["params"], None)
    assert r.ratio == pytest.approx(v.worst_ratio, rel=1e-12)
