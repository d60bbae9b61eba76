"""Exact moments by step maps against the step-by-step register engine.

``delayed.random_participation_moments`` repeats one affine map on the moments (the mean and the
second moments of the ring of the last lambda + 1 server models) at every step, and
``delayed.schedule_moments`` on a schedule whose steps repeat (a round robin; identical clients in
any order) a few.  The package builds each map once, from the images of scaled unit states, and
multiplies (``delayed._linear_ring_moments``); the baseline is the same engine step by step (the
driver switched off), which is what the package did before and still does where the steps do not
repeat.  Both give the same numbers to rounding: the script prints the largest relative
difference of E||x_t - x*||^2 over all steps and exits with an error above 1e-10.

Cases (each with gradient noise):

* ``niid``: DeFedAvg-nIID's draws, N = 1000 clients, n = 10 draws per step, d = 2, delays uniform
  on 0..3, T = 40 (the checks' widest instance);
* ``niid-long``: N = 10, n = 3, d = 4, delays on 0..3, T = 400;
* ``round-robin``: ``schedules.round_robin(N=8, S=2)``, d = 4, T = 2000 (one map per phase);
* ``iid``: DeFedAvg-IID's oracle, N = 20 identical clients, n = 5 per step, delays uniform on
  0..2, T = 1000 (the step labels ignore which identical client a slot holds).

Run:  python benchmarks/bench_moment_maps.py [--repeats 3]
"""
import argparse
import sys

import numpy as np

import fltheory as flt
from fltheory import delayed as D
from fltheory import schedules as S
from fltheory.papers.defedavg.events import iid_oracle

from _timing import best


def _identical(N, d, seed):
    fed = flt.random_quadratic_federation(M=1, d=d, seed=seed, sigma2=0.01)
    rep = lambda a: np.repeat(a, N, axis=0)  # noqa: E731
    return flt.QuadraticFederation(rep(fed.H), rep(fed.x_opt), np.full(N, 1.0 / N), noise_cov=rep(fed.noise_cov))


def cases():
    local = D.LocalSGD(eta_local=0.05, K=3)
    uni = np.full(4, 0.25)
    fed = flt.random_quadratic_federation(M=1000, d=2, seed=1, sigma2=0.05)
    yield "niid", lambda: D.random_participation_moments(
        fed, local, eta=0.7, T=40, x0=np.ones(2), participation=D.RandomParticipation.with_replacement(N=1000, n=10),
        delay_probs=uni)
    fed2 = flt.random_quadratic_federation(M=10, d=4, seed=2, sigma2=0.05)
    yield "niid-long", lambda: D.random_participation_moments(
        fed2, local, eta=0.7, T=400, x0=np.ones(4), participation=D.RandomParticipation.with_replacement(N=10, n=3),
        delay_probs=uni)
    fed3 = flt.random_quadratic_federation(M=8, d=4, seed=3, sigma2=0.01)
    rr = S.round_robin(N=8, S=2, T=2000)
    yield "round-robin", lambda: D.schedule_moments(fed3, rr, local, eta=1.0, x0=np.zeros(4))
    fed4 = _identical(20, 3, 4)
    sched = iid_oracle(N=20, n=5, T=1000, seeds=[0], delay="uniform", lam=2)
    yield "iid", lambda: D.schedule_moments(fed4, sched, local, eta=0.8, x0=np.ones(3))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args(argv)
    worst = 0.0
    for name, run in cases():
        D._LINEAR_DRIVER = True
        t_map, fast = best(run, a.repeats)
        D._LINEAR_DRIVER = False
        t_step, slow = best(run, a.repeats)
        D._LINEAR_DRIVER = True
        diff = float(np.max(np.abs(fast.mse - slow.mse) / np.abs(slow.mse)))
        worst = max(worst, diff)
        print(f"{name:12s} step maps {t_map * 1e3:8.2f} ms   step by step {t_step * 1e3:8.2f} ms   "
              f"{t_step / t_map:5.1f}x   max rel. diff of E||x_t - x*||^2 {diff:.1e}")
    if worst > 1e-10:
        sys.exit(f"the two drivers differ by {worst:.2e} (above 1e-10)")


if __name__ == "__main__":
    main()
