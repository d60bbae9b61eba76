"""Every DeFedAvg check gives its expected verdict, and its counterexample rebuilds from its parameters."""
from __future__ import annotations

import pytest

import fltheory.papers.defedavg.checks as C
from fltheory.papers.defedavg import bounds as B
from fltheory.verify import registry

CHECKS = [c for c in registry(["defedavg"])]


def test_every_statement_has_a_check():
    checked = {c.statement.name for c in CHECKS if c.statement is not None}
    assert checked == set(B.BY_NAME)


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.name)
def test_verdict_is_the_expected_one(check):
    v = check.run(quick=False, seed=0)
    assert v.ok, (v.status, v.expected, v.worst_ratio, v.counterexample)
    if v.status == "violated":
        assert v.counterexample is not None


def test_theorem2_counterexample_is_the_documented_instance():
    v = next(c for c in CHECKS if c.name == "defedavg.theorem2").run(quick=True)
    ce = v.counterexample
    assert ce["params"]["N"] == 1 and ce["params"]["n"] == 1 and ce["params"]["sigma2"] == pytest.approx(1e4)
    again = C.theorem2_sample({k: ce["params"][k] for k in C.COUNTEREXAMPLE}, B.theorem2)
    assert again.value == pytest.approx(ce["value"], rel=1e-12) and again.bound == pytest.approx(ce["bound"])


def test_quick_mode_agrees():
    for c in CHECKS:
        assert c.run(quick=True, seed=1).ok, c.name
