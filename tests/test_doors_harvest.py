"""Harvest-and-mutate fuzzing of the doors (issue 19, item 6), beside the hand-written table of test_doors.py.

Real valid calls are harvested from the package's own examples (tests/harvest.py says how) and
replayed with one parameter at a time replaced by a bad value, and with valid but unusual forms of
each numeric argument.  Every outcome is classified (a: a package error naming the parameter;
b: a package error not naming it; c: another exception; d: NaN/inf/complex returned unflagged;
e: a never-valid value accepted; f: past the time limit; g: MemoryError; and for the unusual forms
refused / crash / wrong).  Classes b-g and the unusual-form failures must be empty except for the
known defects of :data:`ALLOWED` -- and each of those must still occur, so the list only shrinks.

CI replays a bounded, deterministic subset (the doctests' calls, one call per entry point, a stable
sample of the mutations).  ``FLTHEORY_HARVEST=full`` harvests the doctests, README.md and the
notebooks and replays everything (over 6 * 10^4 calls)::

    FLTHEORY_HARVEST=full python -m pytest -s tests/test_doors_harvest.py
"""
from __future__ import annotations

import collections
import fnmatch
import json
import os
import time
import zlib
from pathlib import Path

import pytest

import harvest as H

PROFILE = os.environ.get("FLTHEORY_HARVEST", "ci")
FULL = PROFILE == "full"
SOURCES = ("doctest", "readme", "notebooks") if FULL else ("doctest",)
SAMPLE = 1 if FULL else 5          # CI keeps one mutation in SAMPLE (a stable hash of its key)
PER_ENTRY = 25 if FULL else 1      # recorded calls replayed per entry point (a notebook's loops record hundreds)
LIMIT = 2.0                        # seconds per call
FAILING = ("b", "c", "d", "e", "f", "g", "refused", "crash", "wrong")
BASELINE = ("baseline-crash", "baseline-refused", "baseline-slow")   # recorded calls that fail when replayed

# Known remaining defects: a pattern of "entry:param=value" (fnmatch) -> the reason it is not fixed yet.
# The test fails if one of these no longer occurs: remove it then.
ALLOWED: dict = {}

# Outcomes the classes flag that are the documented behaviour, not defects (any profile may or may not meet them,
# so they are not held to "must still occur"): each with the reason.
BY_DESIGN: dict = {
    "fltheory.papers.feddelavg.bounds.delta_threshold:Delta=0": "by design: -inf at Delta=0 (FedAvg always "
                                                               "optimal), documented",
    "fltheory.papers.feddelavg.bounds.alpha_star_details:Delta=0": "by design: the same -inf threshold, reported "
                                                                   "in the details",
    "fltheory.papers.defedavg.exact.first_crossing:*": "by design: inf means the average never crosses epsilon "
                                                       "(documented)",
    "fltheory.testing.check_case:*": "by design: check_case raises BoundViolated (an AssertionError, for pytest) "
                                     "when the value breaks the bound",
    "fltheory.papers.tdma.timing.staleness:k=[]": "by design: elementwise over k, so no rounds give no staleness "
                                                  "(as a NumPy ufunc on an empty array)",
    "fltheory.verify.run:names=None": "by design: names=None runs every check, which takes minutes",
}


def _keep(key: str) -> bool:
    return SAMPLE == 1 or zlib.crc32(key.encode()) % SAMPLE == 0


@pytest.fixture(scope="module")
def outcome():
    t0 = time.perf_counter()
    records, n_examples = H.harvest(SOURCES)
    tasks = H.tasks_for(records, per_entry=PER_ENTRY)
    tasks = [t for t in tasks if t.mode == "baseline" or _keep(t.key(records))]
    for example, error in H.FAILED_EXAMPLES:
        print(f"[harvest] example {example} raised {error}")
    if FULL:
        print(f"\n[harvest:full] {len(records)} calls recorded in {time.perf_counter() - t0:.0f} s; {len(tasks):,} replays",
              flush=True)
    results = H.replay(records, tasks, limit=LIMIT, progress=FULL)
    summary = H.summarize(records, tasks, results)
    counts = collections.Counter(cls for cls, _ in results)
    entries = {records[t.rec].entry.name for t in tasks}
    print(f"\n[harvest:{PROFILE}] {n_examples} examples, {len(records)} calls recorded of {len(entries)} entry points; "
          f"{len(tasks)} replays in {time.perf_counter() - t0:.0f} s; classes {dict(sorted(counts.items()))}")
    report = os.environ.get("FLTHEORY_HARVEST_REPORT")
    if report:   # e.g. /tmp/harvest.json: every finding, for reading
        with open(report, "w") as f:
            json.dump({"counts": counts, "findings": {c: summary.get(c, []) for c in FAILING + BASELINE}}, f, indent=1)
    return summary


def _allowed(key: str):
    return next((p for p in (*ALLOWED, *BY_DESIGN) if fnmatch.fnmatchcase(key, p)), None)


def test_the_harvest_finds_nothing_outside_the_lists(outcome):
    """The examples yield calls, and most bad values are refused by name (the full profile makes >= 6 * 10^4); no
    outcome of classes b-g or unusual-input failure is outside ALLOWED and BY_DESIGN; every ALLOWED defect still occurs
    (one test on the one replay: xdist would replay once per worker otherwise)."""
    replays = sum(len(v) for v in outcome.values())
    assert replays > (6 * 10**4 if FULL else 3000), replays
    assert len(outcome.get("a", [])) > replays // 2
    new = {cls: [f"{key}  ->  {detail}" for key, detail in outcome.get(cls, []) if _allowed(key) is None]
           for cls in FAILING}
    report = "\n".join(f"{len(v)} new findings of class {cls}:\n" + "\n".join(v[:40]) for cls, v in new.items() if v)
    assert not report, report
    found = [key for cls in FAILING for key, _ in outcome.get(cls, [])]
    stale = [p for p in ALLOWED if not any(fnmatch.fnmatchcase(k, p) for k in found)]
    assert not stale, f"these known defects no longer occur; remove them from ALLOWED: {stale}"


def test_the_readme_says_what_the_lists_hold():
    """README's sentence on the harvest's lists is true: no known defect is allowed, and the by-design outcomes it
    names are in BY_DESIGN."""
    text = " ".join((Path(__file__).resolve().parents[1] / "README.md").read_text().split())
    assert ("its `ALLOWED` list of known defects is empty" in text) == (not ALLOWED)
    for entry in ("delta_threshold:Delta=0", "first_crossing:*", "check_case:*", "staleness:k=[]", "run:names=None"):
        assert any(k.endswith(entry) for k in BY_DESIGN), entry
