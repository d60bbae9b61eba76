"""Door table of the researcher's surface: batch-axis helpers and fltheory.testing (statement lookup by
name is tested in tests/test_surface.py: random text can spell a real statement name)."""
import numpy as np
from doorkit import Door
from hypothesis import strategies as st

from fltheory import parallel
from fltheory import testing as T
from fltheory import validation as V
from fltheory.papers.local_adaptivity import bounds as LB

CHOICES = {"delays", "round_robin"}

_CLAIM = LB.h_sgd


def _threads(n):
    with parallel.threads(n):   # restores the previous number
        return parallel.num_threads()


def _quantity(case):
    return 0.0, dict(eta=0.1, mu=1.0, L=3.0, k=2)


DOORS = [
    Door("parallel.threads", lambda **k: _threads(k["n"]), dict(n=2), {"n": "count"}),
    Door("parallel.set_num_threads", lambda **k: parallel.set_num_threads(parallel.set_num_threads(k["n"])),
         dict(n=2), {"n": "count"}),
    Door("client_parameter", lambda **k: V.client_parameter(k["value"], "eta", M=3),
         dict(value=np.array([[0.1, 0.2, 0.3]])), {"value": ("array", (1, 3))}, {"value": "eta"}),
    Door("configuration_parameter", lambda **k: V.configuration_parameter(k["value"], "alpha"),
         dict(value=np.array([0.5, 0.25])), {"value": ("array", (2,), "free")}, {"value": "alpha"}),
    Door("testing.delays", lambda **k: T.delays(**k), dict(lam=2, T=4, U=1),
         {"lam": "count0", "T": "count", "U": "count"}),
    Door("testing.schedules", lambda **k: T.schedules(**k), dict(lam=2, N=4, T=5, U=1),
         {"lam": "count0", "N": "count", "T": "count", "U": "count"}),
    Door("testing.step_sizes", lambda **k: T.step_sizes(_CLAIM, mu=1.0, L=3.0, k=2, **k), dict(high=10.0),
         {"high": "pos_real"}),
    Door("testing.assert_statement", lambda **k: T.assert_statement(_CLAIM, _quantity, st.just(0), **k),
         dict(max_examples=2, rtol=1e-9, atol=0.0), {"max_examples": "count", "rtol": "nonneg_real",
                                                      "atol": "nonneg_real"}),
]
