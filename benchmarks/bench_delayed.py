"""Exact moments of schedule-driven stale updates: the register engine against dense propagation
and against Monte Carlo.

Work: a quadratic federation (M clients, dimension d, additive gradient noise) and a schedule of
T server steps with delays up to lambda (n of M clients drawn per step with replacement, each
with a delay uniform in 0..lambda), K local SGD steps per update.  Compared, for the exact
E||x_t - x*||^2 at every step:

* ``schedule_moments``   -- this package: each step writes one block row of the second-moment
                            matrix of the ring of the last lambda+1 server models;
* dense propagation      -- the straightforward version: build each step's augmented
                            ((lambda+1) d)-square affine map and do Sigma <- A Sigma A^T + Q
                            (timed on --dense-steps steps, extrapolated);
* Monte Carlo            -- ``simulate_schedule``: the seeds needed for a 1e-3 relative standard
                            error on E||x_T - x*||^2 (exact, because x_T is Gaussian:
                            Var ||e||^2 = 2 tr C^2 + 4 m^T C m) times the measured cost per seed.

Run:  python benchmarks/bench_delayed.py [--T 10000] [--lam 20] [--d 10] [--M 20] [--n 5] [--K 5]
"""
import argparse
import time

import numpy as np

import fltheory as flt
from fltheory import delayed as D


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--T", type=int, default=10_000)
    ap.add_argument("--lam", type=int, default=20)
    ap.add_argument("--d", type=int, default=10)
    ap.add_argument("--M", type=int, default=20)
    ap.add_argument("--n", type=int, default=5)
    ap.add_argument("--K", type=int, default=5)
    ap.add_argument("--dense-steps", type=int, default=300)
    ap.add_argument("--mc-seeds", type=int, default=200)
    ap.add_argument("--mc-steps", type=int, default=300)
    ap.add_argument("--heterogeneity", type=float, default=1.0,
                    help="spread of the client optima (0: identical optima, the noise dominates the error)")
    a = ap.parse_args(argv)
    fed = flt.random_quadratic_federation(M=a.M, d=a.d, seed=1, sigma2=0.01, heterogeneity=a.heterogeneity)
    sched = D.sampled_schedule(N=a.M, n=a.n, T=a.T, seeds=[0], delay_probs=np.full(a.lam + 1, 1 / (a.lam + 1)))
    loc = D.LocalSGD(eta_local=0.01, K=a.K)
    eta, x0 = 0.5, np.zeros(a.d)
    print(f"T={a.T} lambda={int(sched.max_staleness.max())} d={a.d} M={a.M} n={a.n} K={a.K} "
          f"heterogeneity={a.heterogeneity}")
    t0 = time.perf_counter()
    m = D.schedule_moments(fed, sched, loc, eta=eta, x0=x0, record_cov=True)
    t_exact = time.perf_counter() - t0
    print(f"schedule_moments       : {t_exact:8.3f} s for all {a.T} steps  (E||x_T - x*||^2 = {m.mse[-1, 0]:.6g})")

    # dense: per-step augmented maps and Sigma <- A Sigma A^T + Q on ((lam+1) d)^2
    k = min(a.dense_steps, a.T)
    lam = int(sched.max_staleness.max())
    runs = loc.affine(fed)
    maps = D.step_maps(fed, sched, loc, eta=eta, steps=range(k), lam=lam)
    nd = (lam + 1) * a.d
    y = np.tile(x0 - fed.x_star, lam + 1)
    Sig = np.zeros((nd, nd))          # x0 is deterministic
    mean = np.tile(x0, lam + 1)
    t0 = time.perf_counter()
    for t in range(k):
        A, b = maps[t].A[0], maps[t].b[0]
        Q = np.zeros((nd, nd))
        c = sched.client[0, t]
        w = sched.weight[0, t]
        Q[:a.d, :a.d] = eta**2 * np.einsum("u,uij->ij", w[c >= 0] ** 2, runs.Q[0][c[c >= 0]])
        mean = A @ mean + b
        Sig = A @ Sig @ A.T + Q          # centred at the mean: covariance propagation
    t_dense = (time.perf_counter() - t0) / k * a.T
    e = mean[:a.d] - fed.x_star
    dense_mse = e @ e + np.trace(Sig[:a.d, :a.d])
    print(f"dense propagation      : {t_dense:8.3f} s extrapolated from {k} steps ({t_dense / t_exact:.0f}x slower; "
          f"|diff| at step {k}: {abs(dense_mse - m.mse[k, 0]):.1e})")

    # Monte Carlo: seeds for a 1e-3 relative standard error, and their cost
    C = m.cov[-1, 0]
    mu = m.mean[-1, 0] - fed.x_star
    var = 2 * np.trace(C @ C) + 4 * mu @ C @ mu
    seeds_needed = int(np.ceil(var / (1e-3 * m.mse[-1, 0]) ** 2))
    many = sched.steps(a.mc_steps).take([0] * a.mc_seeds)
    t0 = time.perf_counter()
    D.simulate_schedule(fed, many, loc, eta=eta, x0=x0, seed=0)
    per_seed_step = (time.perf_counter() - t0) / (a.mc_seeds * a.mc_steps)
    t_mc = per_seed_step * seeds_needed * a.T
    print(f"Monte Carlo            : {seeds_needed:,} seeds for 1e-3 relative s.e.; {t_mc:,.0f} s at "
          f"{per_seed_step * 1e6:.1f} us per seed-step ({t_mc / t_exact:,.0f}x slower)")


if __name__ == "__main__":
    main()
