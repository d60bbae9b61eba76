"""Closed-form fixed points per second against iterating the round map to 1e-10.

Work: B = 10,000 configurations of a quadratic federation (M = 10 clients, d = 10, condition
number 10), preconditioned local GD with tau = 5 and eta = 0.5 / L.  The closed form
(Theorem 2, ``exact.fixed_point``) is one batched eigen-decomposition per client plus one
batched solve; the baseline builds the same round maps and iterates ``x <- R x + b`` (batched,
all configurations at once) until every step is below 1e-10.

Run:  python benchmarks/bench_fixed_points.py [--backend cupy] [--B 10000]
"""
import argparse
import time

import numpy as np

import fltheory as flt
from fltheory.backend import get_backend, to_numpy
from fltheory.papers.local_adaptivity import exact


def _sync(xp):
    if xp.__name__ == "cupy":
        xp.cuda.Stream.null.synchronize()


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--backend", default="numpy")
    ap.add_argument("--B", type=int, default=10_000)
    ap.add_argument("--M", type=int, default=10)
    ap.add_argument("--d", type=int, default=10)
    ap.add_argument("--tau", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args(argv)
    xp = get_backend(a.backend)
    fed = flt.random_quadratic_federation(M=a.M, d=a.d, batch=a.B, kappa=10.0, weights="dirichlet", seed=0, backend=a.backend)
    P = xp.asarray(np.broadcast_to(np.diag(np.linspace(0.5, 2.0, a.d)), (a.B, a.M, a.d, a.d)).copy())
    lam = xp.linalg.eigvalsh(fed.H)[..., -1] * 2.0  # lambda_max(P H) <= 2 lambda_max(H)
    eta = 0.5 / lam
    best_cf, best_it, iters = np.inf, np.inf, 0
    for _ in range(a.repeats):
        t0 = time.perf_counter()
        x_cf = exact.fixed_point(fed, eta=eta, tau=a.tau, precond=P).x
        _sync(xp)
        best_cf = min(best_cf, time.perf_counter() - t0)
        t0 = time.perf_counter()
        rmap = exact.round_map(fed, eta=eta, tau=a.tau, alpha=1.0, precond=P)
        it = rmap.iterate_to_fixed_point(tol=1e-10)
        _sync(xp)
        best_it = min(best_it, time.perf_counter() - t0)
        iters = it.iterations
    err = float(to_numpy(xp.abs(it.x - x_cf).max()))
    print(f"backend={a.backend} B={a.B} M={a.M} d={a.d} tau={a.tau}")
    print(f"closed form : {best_cf:.3f} s  -> {a.B / best_cf:,.0f} fixed points/s")
    print(f"iteration   : {best_it:.3f} s  -> {a.B / best_it:,.0f} fixed points/s ({iters} rounds to 1e-10)")
    print(f"speed-up {best_it / best_cf:.1f}x; max |x_iter - x_closed| = {err:.2e}")


if __name__ == "__main__":
    main()
