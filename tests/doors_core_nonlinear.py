"""Door rows of the core's simulator for non-linear clients (collected by tests/test_doors.py)."""
from __future__ import annotations

import numpy as np

from doorkit import Door
from fltheory import delayed as D
from fltheory import problems as P
from fltheory import schedules as S

CHOICES = set(D.GENERAL_RETURNS)

_HUBER = P.PseudoHuberFederation(b=[[0.0, 1.0], [2.0, 0.0], [1.0, -2.0]], delta=1.0)
_ARRIVALS = S.first_n_arrivals(N=3, n=2, T=6, K=2, compute=np.array([1.0, 2.0, 3.0]))
_LOCAL = D.LocalSGD(eta_local=0.1, K=2)

DOORS = [
    Door("simulate_schedule_general", lambda **k: D.simulate_schedule_general(_HUBER, _ARRIVALS, _LOCAL, **k),
         dict(eta=0.5, x0=np.zeros(2), seed=0, T=6, sigma2=0.1, returns="loss"),
         {"eta": "pos_real", "x0": ("array", (2,), "strict"), "seed": "count0", "T": "count0_or_none", "sigma2": "sigma2",
          "returns": "choice"}),
    Door("simulate_schedule_general(fed, schedule, local)",
         lambda **k: D.simulate_schedule_general(k["fed"], k["schedule"], k["local"], eta=0.5, x0=np.zeros(2)),
         dict(fed=_HUBER, schedule=_ARRIVALS, local=_LOCAL),
         {"fed": "count", "schedule": "count", "local": "count"}),
]
