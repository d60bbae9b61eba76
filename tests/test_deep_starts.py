"""The instances the deep search found (``fltheory.papers.deep_starts``): each lies inside its check's family,
rebuilds the ratio the deep search reported, is a search start of its check, and the full run's verdict reaches it."""
import pytest

from fltheory import verify
from fltheory.papers.deep_starts import DEEP_STARTS, record

def _checks():
    return {c.name: c for c in verify.registry()}


@pytest.mark.parametrize("name", sorted(DEEP_STARTS))
def test_each_deep_start_rebuilds_its_ratio_inside_the_family(name):
    c = _checks()[name]
    params, ratio = DEEP_STARTS[name]
    assert set(params) == set(c.family.names)
    q = c.family.apply(params)
    assert q is not None, "outside the family's hypotheses"
    assert c._ratio(c.evaluate(q))[0] == pytest.approx(ratio, rel=1e-9, abs=1e-12)
    assert params in [dict(s) for s in c.search_start]


@pytest.mark.parametrize("name", ["defedavg.lemma5", "tdma.lemma4_28", "feddelavg.h_sum",
                                  "local_adaptivity.theorem3_128_at_130"])
def test_the_full_run_reports_at_least_the_deep_start(name):
    v = _checks()[name].run(search="full")
    assert v.worst_ratio >= DEEP_STARTS[name][1] * (1 - 1e-9)


def test_record_keeps_only_searched_checks_that_the_deep_run_pushed_higher():
    checks = _checks()
    name = "defedavg.lemma5"
    params = DEEP_STARTS[name][0]

    def verdict(check, status, ratio, search=None):
        return {"check": check, "status": status, "worst_ratio": ratio, "search": search}

    full = {"verdicts": [verdict(name, "holds", 0.45), verdict("defedavg.lemma3", "holds", 0.4997),
                         verdict("defedavg.theorem2", "violated", 9.0)]}
    deep = {"verdicts": [verdict(name, "holds", 0.48, {"ratio": 0.48, "params": {**params, "extra": 1}}),
                         verdict("defedavg.lemma3", "holds", 0.49971, {"ratio": 0.49971, "params": {}}),
                         verdict("defedavg.theorem2", "violated", 9.5, {"ratio": 9.5, "params": {}})]}
    assert record(deep, full, checks) == {name: (params, 0.48)}
