"""One fresh run of a check per test session, shared by the tests that quote it (the docs pages, the README table).

The docs-page tests and the README-table tests rebuild their numbers from a fresh run of the checks they quote, and
many checks are quoted by both.  :func:`fresh_run` runs each check at most once per session: its verdict is pickled
into ``$FLTHEORY_RUN_CACHE`` (a temporary folder the root conftest makes for the run and removes after it, so xdist's
workers share it; a check another worker is still running is simply run again).  Without that variable (a test module
run on its own, outside this repository's conftest) every call runs its checks.  Verdicts depend only on the check,
its level and the seed (they are the same in any process: ``tests/test_verify_levels.py``), so a cached one is the
one a fresh run gives.
"""
from __future__ import annotations

import os
import pickle
import time
from pathlib import Path

from fltheory import verify


def _path(name: str, quick: bool, search: str | None) -> Path | None:
    root = os.environ.get("FLTHEORY_RUN_CACHE")
    if not root:
        return None
    return Path(root) / f"{name}.{'quick' if quick else 'full'}.{search or 'default'}.pickle"


def fresh_run(names, *, quick: bool = False, search: str | None = None) -> verify.Report:
    """The Report of a fresh run of ``names`` (seed 0), each verdict computed once per session."""
    names = list(dict.fromkeys(names))
    t0 = time.perf_counter()
    found, missing = {}, []
    for name in names:
        path = _path(name, quick, search)
        if path is not None and path.is_file():
            found[name] = pickle.loads(path.read_bytes())
        else:
            missing.append(name)
    if missing:
        report = verify.run(names=missing, quick=quick, search=search)
        for v in report.verdicts:
            found[v.check] = v
            path = _path(v.check, quick, search)
            if path is not None:   # written whole, then renamed: another worker never reads half a file
                tmp = path.with_suffix(f".{os.getpid()}.tmp")
                tmp.write_bytes(pickle.dumps(v))
                tmp.replace(path)
        env, search_level = report.environment, report.search
    else:
        env, search_level = {}, search or ("quick" if quick else "full")
    return verify.Report([found[n] for n in names], quick, 0, time.perf_counter() - t0, env, search=search_level)
