"""The batched deep search against the unbatched one, on FedDelAvg's simulated families.

``fltheory verify --search deep`` gives every searched check ``DEEP_FACTOR`` times its full budget.
The 25 FedDelAvg checks whose instances are exact GD runs (``_sfamily``) also have ``evaluate_many``:
one batched run of many instances that share ``clients``, ``M``, ``tau`` and ``K``.  Their deep search
spends ``DEEP_WIDE`` times its budget more in such batches (random groups of ``DEEP_GROUP`` candidates,
then a batched evolution strategy) before the same unbatched local phase.  The baseline is the same
check's deep search one instance at a time (``evaluate_many`` switched off), which is what a deep run
did before.  For each check: the worst ratio each finds, the evaluations spent and the wall time; and
the cost of one evaluation alone and in a batch of 256 sharing their discrete parameters.

The script exits with an error if the batched search ends below the unbatched one by more than 1e-9
on any check (the batched search starts from the same instances and runs the same local phase).

Run:  python benchmarks/bench_deep_search.py [--backend numpy|cupy] [--only NAME]
"""
import argparse
import copy
import sys
import time

import numpy as np

from fltheory import verify


def _per_evaluation(c, xp, rng, n=256):
    base = c.family.draw(rng)
    raws = [{**c.family.draw(rng), **{p.name: base[p.name] for p in c.family.discrete}} for _ in range(n)]
    ps = [q for q in (c.family.apply(r) for r in raws) if q is not None]
    t = time.perf_counter()
    for p in ps[:16]:
        try:
            c.evaluate(p)
        except Exception:   # noqa: BLE001 - outside the family: it still cost the time
            pass
    one = (time.perf_counter() - t) / 16
    t = time.perf_counter()
    c.evaluate_many(ps, xp)
    return one, (time.perf_counter() - t) / len(ps)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--backend", default="numpy")
    ap.add_argument("--only", default=None)
    args = ap.parse_args(argv)
    xp = verify._backend_namespace(args.backend)
    checks = [c for c in verify.registry(["feddelavg"]) if c.evaluate_many is not None
              and (args.only is None or args.only in c.name)]
    print(f"{'check':36s} {'unbatched':>22s} {'batched':>22s} {'1 eval':>8s} {'in 256':>8s}")
    worse, tot = [], [0.0, 0.0, 0, 0]
    rng = np.random.default_rng(0)
    for c in checks:
        plain = copy.copy(c)
        plain.evaluate_many = None
        t = time.perf_counter()
        a = plain.search(level="deep")
        ta = time.perf_counter() - t
        t = time.perf_counter()
        b = c.search(level="deep", backend=xp)
        tb = time.perf_counter() - t
        one, many = _per_evaluation(c, xp, rng)
        tot[0] += ta
        tot[1] += tb
        tot[2] += a.evaluations
        tot[3] += b.evaluations
        print(f"{c.name[10:]:36s} {a.ratio:.10f} {a.evaluations:5d} {ta:5.1f}s {b.ratio:.10f} {b.evaluations:6d} "
              f"{tb:5.1f}s {one * 1e3:6.2f}ms {many * 1e3:6.3f}ms", flush=True)
        if b.ratio < a.ratio - 1e-9:
            worse.append(c.name)
    print(f"total: unbatched {tot[2]} evaluations in {tot[0]:.0f} s, batched {tot[3]} in {tot[1]:.0f} s")
    if worse:
        sys.exit(f"the batched search ended below the unbatched one on {worse}")


if __name__ == "__main__":
    main()
