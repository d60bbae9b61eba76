"""Schedule generation: batched event-driven "first n arrivals" against per-seed implementations.

Work: B timing seeds x T server steps x N clients with random compute speeds (rho_i ~ U[1, 5],
K local steps, upload and download times), the DeFedAvg-IID / FedBuff timing rules.  Compared:

* ``first_n_arrivals``        -- all seeds advance together in arrays (this package);
* per-seed numpy loop          -- what one writes first in numpy: for each seed, a loop over
                                  steps with an argsort over the N clients' next arrival times
                                  (``first_n_arrivals`` called with one seed at a time);
* per-seed event engine        -- ``first_n_arrivals_events``: the heap-based reference with one
                                  event per delivery, completion and arrival.

The per-seed baselines are timed on ``--baseline-seeds`` seeds and extrapolated (they are
linear in B); the script checks that they produce the same schedule on those seeds.

Run:  python benchmarks/bench_schedules.py [--B 1000] [--T 10000] [--N 100] [--n 10] [--repeats 1]
"""
import argparse
import time

import numpy as np

from fltheory import schedules as S


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--B", type=int, default=1000)
    ap.add_argument("--T", type=int, default=10_000)
    ap.add_argument("--N", type=int, default=100)
    ap.add_argument("--n", type=int, default=10)
    ap.add_argument("--K", type=int, default=50)
    ap.add_argument("--baseline-seeds", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=2)
    a = ap.parse_args(argv)
    c = S.compute_times(seeds=np.arange(a.B), N=a.N, unit=0.0017)   # 1.7 ms per local step at rho = 1
    kw = dict(N=a.N, n=a.n, T=a.T, K=a.K, t_dl=0.044, t_ul=0.044)
    times = []
    for _ in range(a.repeats):
        sched = None
        t0 = time.perf_counter()
        sched = S.first_n_arrivals(compute=c, **kw)
        times.append(time.perf_counter() - t0)
    best = min(times)
    print(f"B={a.B} T={a.T} N={a.N} n={a.n} K={a.K}: lambda = {int(sched.max_staleness.max())}, "
          f"mean staleness {sched.staleness.mean():.2f}")
    print(f"batched first_n_arrivals : {best:8.2f} s  ({a.B * a.T / best:,.0f} server steps/s; runs: "
          + ", ".join(f"{t:.2f}" for t in times) + " s, the first includes first-touch of the output memory)")
    k = a.baseline_seeds
    t0 = time.perf_counter()
    loop = [S.first_n_arrivals(compute=c[b:b + 1], **kw) for b in range(k)]
    t_loop = (time.perf_counter() - t0) / k * a.B
    t0 = time.perf_counter()
    ev = S.first_n_arrivals_events(compute=c[:k], **kw)
    t_ev = (time.perf_counter() - t0) / k * a.B
    same = all(np.array_equal(loop[b].client[0], sched.client[b]) and np.array_equal(ev.start[b], sched.start[b])
               for b in range(k))
    print(f"per-seed numpy loop      : {t_loop:8.2f} s  (extrapolated from {k} seeds; {t_loop / best:.1f}x slower)")
    print(f"per-seed event engine    : {t_ev:8.2f} s  (extrapolated from {k} seeds; {t_ev / best:.1f}x slower)")
    print(f"same schedules on the {k} baseline seeds: {same}")
    if not same:
        raise SystemExit("baselines disagree with the batched generator")


if __name__ == "__main__":
    main()
