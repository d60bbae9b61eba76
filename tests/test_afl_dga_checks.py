"""AFL-DGA checks: every verdict as expected (quick mode), and each printed counterexample rebuilt from its params."""
from __future__ import annotations

import numpy as np
import pytest

from fltheory import verify
from fltheory.problems import PseudoHuberFederation
from fltheory.schedules import Participation
from fltheory.papers.afl_dga import afl_dga
from fltheory.papers.afl_dga import bounds as B


@pytest.fixture(scope="module")
def report():
    return verify.run(papers=["afl_dga"], quick=True)


def test_every_verdict_is_as_expected(report):
    names = {v.check for v in report.verdicts}
    assert len(names) == 30
    bad = [(v.check, v.status, v.expected) for v in report.verdicts if not v.ok]
    assert not bad, bad
    printed_false = {v.check for v in report.verdicts if v.status == "violated"}
    assert printed_false == {f"afl_dga.{n}" for n in ("eq2", "lemma1", "lemma1_used", "lag_count_printed", "theorem1",
                                                       "theorem1_literal_step", "corollary1", "corollary1_printed",
                                                       "gamma_iid", "eq3", "eq4", "eq6", "lag_range_terms")}
    for v in report.verdicts:
        if v.status == "violated":
            assert v.counterexample["ratio"] > 1.2, v.check     # not a round-off violation


def test_theorem1_counterexample_rebuilds_from_its_params(report):
    """Rebuild the smallest Theorem 1 counterexample from the reported params alone, independently of checks.py."""
    for name, st in (("afl_dga.theorem1", B.theorem1), ("afl_dga.theorem1_literal_step", B.theorem1_literal_step)):
        c = next(v for v in report.verdicts if v.check == name).counterexample
        p = c["params"]
        N, T, t_d, eta, s = p["N"], p["T"], p["t_d"], p["eta"], p["scale"]
        fed = PseudoHuberFederation(b=np.zeros((N, 1)), delta=p["delta"], scale=s)
        P = np.zeros((N, T), int)
        P[:, ::t_d] = 1
        part = Participation(P)
        w = afl_dga(fed, part, eta=eta, w0=np.array([p["w0"]])).w
        lhs = float((fed.grad(w) ** 2).sum(-1)[:-1].mean())
        bound = float(st(L=s, N=N, T=T, eta=eta, Delta=float(fed.loss(w[0])), sigma2=0.0, G2=s**2,   # f* = 0
                         K_m=1, D_m=0, S_bar=float(part.delay_sum.sum() / T)))
        assert lhs == pytest.approx(c["value"], rel=1e-12) and bound == pytest.approx(c["bound"], rel=1e-12)
        assert lhs > 2.5 * bound
        assert eta * s <= 1 and (name.endswith("theorem1") or eta * T <= 1 + 1e-12)
