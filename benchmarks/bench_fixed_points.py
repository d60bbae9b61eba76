"""Closed-form fixed points per second against iterating FedOpt's rounds to 1e-10.

Work: B = 10,000 configurations of a quadratic federation (M = 10 clients, d = 10, condition
number 10, Dirichlet weights), preconditioned local GD with a diagonal P_i, tau = 5,
eta_i = 0.25 / lambda_max(H_i), server rate alpha = 1.  Three ways to get Theorem 2's x~:

1. closed form ``exact.fixed_point``: K_i by batched binary powering, one batched solve;
2. assembled round map ``exact.round_map(...).iterate_to_fixed_point(tol=1e-10)``: the same
   K_i, then ``x <- R x + b`` until every configuration's step is below 1e-10;
3. the batched simulator ``algorithm.fedopt`` running the actual local steps for the number
   of rounds that (2) needed (what one does without the closed form).

Every path is warmed up once, then timed ``--repeats`` times; the best time is reported.

The closed form shares its chunks among ``fltheory.parallel.num_threads()`` threads on NumPy; it is
timed with one thread too.  The naive version is NumPy's own (one thread for these small matrices).

Run:  python benchmarks/bench_fixed_points.py [--backend cupy|array_api_strict] [--B 10000] [--repeats 3] [--threads N]
"""
import argparse

import numpy as np

from _timing import best

import fltheory as flt
from fltheory import parallel
from fltheory.backend import get_backend, matvec, weighted_sum
from fltheory.papers.local_adaptivity import exact
from fltheory.papers.local_adaptivity.algorithm import fedopt


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="numpy", choices=("numpy", "cupy", "array_api_strict"))
    ap.add_argument("--B", type=int, default=10_000)
    ap.add_argument("--M", type=int, default=10)
    ap.add_argument("--d", type=int, default=10)
    ap.add_argument("--tau", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=None, help="threads of the closed form (default: the package's)")
    ap.add_argument("--profile", action="store_true", help="where the closed form's time goes (cProfile, by own time)")
    a = ap.parse_args(argv)
    if a.threads is not None:
        parallel.set_num_threads(a.threads)
    xp = get_backend(a.backend)
    fed = flt.random_quadratic_federation(M=a.M, d=a.d, batch=a.B, kappa=10.0, weights="dirichlet", seed=0,
                                          backend=a.backend)
    P = xp.asarray(np.broadcast_to(np.diag(np.linspace(0.5, 2.0, a.d)), (a.B, a.M, a.d, a.d)).copy())
    eta = 0.25 / xp.linalg.eigvalsh(fed.H)[..., -1]
    kw = dict(eta=eta, tau=a.tau, precond=P)

    t_cf, x_cf = best(lambda: exact.fixed_point(fed, **kw).x, a.repeats, xp=xp)
    with parallel.threads(1):
        t_cf1, _ = best(lambda: exact.fixed_point(fed, **kw).x, a.repeats, xp=xp)
    t_rho, _ = best(lambda: exact.fixed_point(fed, **kw).spectral_radius, a.repeats, xp=xp)
    t_arr = None
    if a.backend == "cupy":   # the array code beside the kernel
        exact.FUSED_CUDA = False
        try:
            t_arr, x_arr = best(lambda: exact.fixed_point(fed, **kw).x, a.repeats, xp=xp)
        finally:
            exact.FUSED_CUDA = True
        import cupy  # noqa: PLC0415

        from fltheory import _cuda_closed as _cuda  # noqa: PLC0415

        e, tt = exact._as_eta_tau(fed, eta, a.tau)
        diagP = cupy.ascontiguousarray(cupy.diagonal(P, axis1=-2, axis2=-1))
        t_kern, _ = best(lambda: _cuda.fixed_points(xp=xp, H=fed.H, x_opt=fed.x_opt, weights=fed.weights, diagP=diagP,
                                                    eta=e, tau=tt, batch=(a.B,), M=a.M, d=a.d)[2], a.repeats, xp=xp)
        attrs = _cuda._fixed_points_kernel(a.d)[0].attributes
        print(f"fixed-point kernel alone: {t_kern:.4f} s ({attrs.get('num_regs')} registers, "
              f"{attrs.get('local_size_bytes')} local bytes per thread); the rest of fixed_point (doors, checks, "
              f"flattening) takes the difference")
    if a.profile:
        import cProfile  # noqa: PLC0415
        import io  # noqa: PLC0415
        import pstats  # noqa: PLC0415

        from fltheory.backend import synchronize  # noqa: PLC0415

        prof = cProfile.Profile()
        prof.enable()
        for _ in range(3):
            exact.fixed_point(fed, **kw).x
            synchronize(xp)
        prof.disable()
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(14)
        print("profile of 3 calls of the closed form, by own time (a device wait shows in the call that waits):")
        print("\n".join(line for line in buf.getvalue().splitlines() if line.strip())[-2400:])
    t_nv, x_nv = best(lambda: naive_fixed_point(fed.H, fed.x_opt, fed.weights, P, eta, a.tau, xp), a.repeats, xp=xp)
    t_it, it = best(lambda: exact.round_map(fed, alpha=1.0, **kw).iterate_to_fixed_point(tol=1e-10), a.repeats, xp=xp)
    rounds = it.iterations
    x0 = xp.zeros((a.B, a.d))
    t_sim, x_sim = best(lambda: fedopt(fed, x0=x0, rounds=rounds, client_opt="precond", alpha=1.0,
                                        record_every=rounds, **kw).x, a.repeats, xp=xp)
    err_it = float(xp.max(xp.abs(it.x - x_cf)))
    err_sim = float(xp.max(xp.abs(x_sim - x_cf)))
    print(f"backend={a.backend} B={a.B} M={a.M} d={a.d} tau={a.tau}; best of {a.repeats} after a warm-up; "
          f"{parallel.num_threads()} threads")
    err_nv = float(xp.max(xp.abs(x_nv - x_cf)))
    print(f"closed form        : {t_cf:7.3f} s -> {a.B / t_cf:12,.0f} fixed points/s "
          f"(with the condition number; {t_rho:.3f} s when the spectral radius is asked for too)")
    print(f"  on one thread    : {t_cf1:7.3f} s -> {a.B / t_cf1:12,.0f} fixed points/s")
    if t_arr is not None:
        print(f"  array code       : {t_arr:7.3f} s -> {a.B / t_arr:12,.0f} fixed points/s (CuPy without the kernel; "
              f"max |diff| {float(xp.max(xp.abs(x_arr - x_cf))):.1e}; {t_arr / t_cf:.1f}x the kernel's time)")
    print(f"naive numpy        : {t_nv:7.3f} s -> {a.B / t_nv:12,.0f} fixed points/s "
          f"(matrix_power + one solve; max |diff| {err_nv:.1e}; {t_nv / t_cf:.1f}x the closed form's time, "
          f"{t_nv / t_cf1:.1f}x on one thread)")
    print(f"round-map iteration: {t_it:7.3f} s -> {a.B / t_it:12,.0f} fixed points/s "
          f"({rounds} rounds to 1e-10; max |diff| {err_it:.1e}; {t_it / t_cf:.1f}x slower)")
    print(f"simulated rounds   : {t_sim:7.3f} s -> {a.B / t_sim:12,.0f} fixed points/s "
          f"({rounds} rounds x {a.tau} local steps; max |diff| {err_sim:.1e}; {t_sim / t_cf:.1f}x slower)")

    # a sweep of eta over ONE federation of local-GD clients (the common grid): eigh once per client
    fed1 = flt.random_quadratic_federation(M=a.M, d=a.d, kappa=10.0, weights="dirichlet", seed=0, backend=a.backend)
    etas = xp.linspace(0.01, 0.2, a.B)[:, None] / float(xp.max(xp.linalg.eigvalsh(fed1.H)[..., -1]))
    t_sw, x_sw = best(lambda: exact.fixed_point(fed1, eta=etas, tau=a.tau).x, a.repeats, xp=xp)
    with parallel.threads(1):
        t_sw1, _ = best(lambda: exact.fixed_point(fed1, eta=etas, tau=a.tau).x, a.repeats, xp=xp)
    Hb = xp.broadcast_to(fed1.H, (a.B,) + fed1.H.shape)
    t_sn, x_sn = best(lambda: naive_fixed_point(Hb, fed1.x_opt, fed1.weights, None, etas, a.tau, xp), a.repeats, xp=xp)
    print(f"eta sweep, one federation, B={a.B}: closed form {t_sw:.3f} s ({t_sw1:.3f} s on one thread), naive numpy "
          f"{t_sn:.3f} s ({t_sn / t_sw:.1f}x, {t_sn / t_sw1:.1f}x on one thread; "
          f"max |diff| {float(xp.max(xp.abs(x_sw - x_sn))):.1e})")


def naive_fixed_point(H, x_opt, w, P, eta, tau, xp):
    """What a competent researcher writes in numpy: K_i by batched matrix_power, then one batched solve."""
    d = H.shape[-1]
    eta = eta[..., None, None]          # (..., M) or (..., 1): per client or per configuration
    PH = H if P is None else P @ H
    K = xp.linalg.matrix_power(xp.eye(d) - eta * PH, tau)
    ImK = xp.eye(d) - K
    if xp is not np:   # the same sums in the array API standard
        return xp.linalg.solve(weighted_sum(w, ImK, 2), weighted_sum(w, matvec(ImK, x_opt))[..., None])[..., 0]
    C = xp.einsum("...m,...mij->...ij", w, ImK)
    c = xp.einsum("...m,...mij,...mj->...i", w, ImK, x_opt)
    return xp.linalg.solve(C, c[..., None])[..., 0]


if __name__ == "__main__":
    main()
