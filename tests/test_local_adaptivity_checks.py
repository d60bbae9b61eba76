"""Every registered check of paper 004 gives its expected verdict (quick mode), and the checks can fail."""
import numpy as np
import pytest

from fltheory import verify
from fltheory.papers.local_adaptivity import bounds as B
from fltheory.papers.local_adaptivity import checks as C

CHECKS = verify.registry(["local_adaptivity"])


@pytest.mark.parametrize("check", CHECKS, ids=[c.name.split(".", 1)[1] for c in CHECKS])
def test_check_gives_expected_verdict(check):
    v = check.run(quick=True, seed=0)
    assert v.instances > 0
    assert v.ok, (v.status, v.expected, v.worst_ratio, v.counterexample)
    if v.status == "violated":
        assert v.counterexample is not None and v.counterexample["ratio"] > 1


def test_printed_counterexamples_are_the_documented_ones():
    ex = verify._REGISTRY["local_adaptivity.sgd_decaying_printed"].run(quick=True).counterexample
    assert ex["params"]["alpha_0"] == pytest.approx(859.75, rel=1e-6)      # spec §7.3 item 20
    assert ex["value"] == pytest.approx(26425.2, rel=1e-5)
    assert ex["bound"] == pytest.approx(0.0033594, rel=1e-4)
    t3 = verify._REGISTRY["local_adaptivity.theorem3_printed"].run(quick=True).counterexample
    assert t3["params"]["instance"] == "E17" and 1.0 < t3["ratio"] < 1.1


def test_a_wrong_closed_form_would_be_caught(monkeypatch):
    """Mutation: shift the fixed point slightly; the identity check must report 'violated'."""
    real = C.exact.fixed_point

    class Shifted:
        def __init__(self, fp):
            self.x, self.residual = fp.x + 1e-6, fp.residual

    monkeypatch.setattr(C.exact, "fixed_point", lambda *a, **k: Shifted(real(*a, **k)))
    assert verify._REGISTRY["local_adaptivity.closed_form_vs_simulation"].run(quick=True).status == "violated"


def test_a_weaker_recursion_would_be_caught(monkeypatch):
    """Mutation: (61) without its noise term alpha^2 Cq must fail on noisy instances."""
    sym = {s.name: s for s in B.theorem1_recursion.symbols}
    mutant = B.theorem1_recursion.with_changes(
        name="mutant", expr=(1 - sym["alpha"] * (1 - sym["hbar"])) * sym["r_t"] + 0 * sym["Cq"])
    monkeypatch.setattr(B, "theorem1_recursion", mutant)
    assert verify._REGISTRY["local_adaptivity.theorem1_recursion"].run(quick=True).status == "violated"


def test_instances_are_reproducible_from_their_seed():
    a = C.instance(123)
    b = C.instance(123)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(getattr(x, "H", x), getattr(y, "H", y))
