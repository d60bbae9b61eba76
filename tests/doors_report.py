"""Door table of the report's entry points: rebuilding a counterexample (fltheory.verify.rebuild)."""
from doorkit import Door

from fltheory import verify

_CE = verify.registry(["feddelavg"]) and verify._REGISTRY["feddelavg.theorem1"].run(quick=True).counterexample

DOORS = [
    Door("verify.rebuild", lambda **k: verify.rebuild("feddelavg.theorem1", _CE["params"], **k),
         dict(seed=_CE["seed"], quick=True, run_seed=0), {"seed": "count0", "run_seed": "count0_or_none"}),
    # quick=None is valid (search the quick sampler, then the full one): tests/test_report.py checks its door
]
