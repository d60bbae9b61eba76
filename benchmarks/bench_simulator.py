"""Client steps per second: the batched FedOpt simulator against the plain per-client loop.

Work: B configurations of a quadratic federation (default B = 1000, M = 10 clients, d = 10,
condition number 10), every client running tau = 5 local steps per round for 20 rounds, i.e.
B * M * tau * rounds client steps (one gradient and one local update each).  ``fedopt`` runs all
configurations, clients and steps as array operations (a Python loop over rounds and local steps
only); ``fedopt_loop`` is the reference with Python loops over configurations, rounds, clients and
steps.  The loop is timed on the first ``--loop-configs`` configurations and its throughput
extrapolated (it is linear in B); both runs use the same keyed noise, and the script prints how
far apart their final models are on those configurations.

Run:  python benchmarks/bench_simulator.py [--backend numpy|cupy|array_api_strict] [--B 1000] [--client-opt adagrad]
      [--correction local] [--sigma2 0.1] [--loop-configs 20] [--repeats 3]
"""
import argparse

import numpy as np

from _timing import best

import fltheory as flt
from fltheory.backend import get_backend, to_numpy
from fltheory.papers.local_adaptivity.algorithm import fedopt, fedopt_loop


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="numpy", choices=("numpy", "cupy", "array_api_strict"))
    ap.add_argument("--B", type=int, default=1000, help="configurations")
    ap.add_argument("--M", type=int, default=10, help="clients")
    ap.add_argument("--d", type=int, default=10, help="dimension")
    ap.add_argument("--tau", type=int, default=5, help="local steps per round")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--client-opt", default="adagrad", choices=("sgd", "precond", "adagrad"))
    ap.add_argument("--correction", default="local", choices=("none", "local", "joint"))
    ap.add_argument("--sigma2", type=float, default=0.0, help="additive gradient-noise variance (0: deterministic)")
    ap.add_argument("--loop-configs", type=int, default=20, help="configurations timed with the loop (0: all)")
    ap.add_argument("--repeats", type=int, default=3, help="timing repeats (the best is reported)")
    ap.add_argument("--unfused", action="store_true", help="CuPy: the array code instead of the fused local-run kernel")
    a = ap.parse_args(argv)
    xp = get_backend(a.backend)
    if a.unfused:
        from fltheory.papers.local_adaptivity import algorithm  # noqa: PLC0415

        algorithm.FUSED_CUDA = False

    fed = flt.random_quadratic_federation(M=a.M, d=a.d, batch=a.B, kappa=10.0, weights="dirichlet",
                                          sigma2=a.sigma2 or None, seed=0, backend=a.backend)
    L = fed.L[..., None]                                   # (B, 1): one eta per configuration
    precond = None
    if a.client_opt == "precond":                          # Jacobi P_i = diag(H_i)^-1
        precond = (1.0 / xp.einsum("...ii->...i", fed.H))[..., None] * xp.eye(a.d)
        eta = 0.5 / (L * xp.max(1.0 / xp.einsum("...ii->...i", fed.H), axis=(-2, -1))[..., None])
    elif a.client_opt == "adagrad":
        eta = 0.05 / xp.sqrt(L)
    else:
        eta = 0.5 / L
    alpha = 1.0 if a.correction == "none" else 0.5 / fed.L
    kw = dict(rounds=a.rounds, tau=a.tau, client_opt=a.client_opt, correction=a.correction, seed=0)
    x0 = xp.zeros(a.d)

    t_fast, res = best(lambda: fedopt(fed, x0=x0, eta=eta, alpha=alpha, precond=precond, record_every=a.rounds, **kw),
                       a.repeats, xp=xp, warm_up=False)

    nl = a.B if a.loop_configs <= 0 else min(a.loop_configs, a.B)
    sub = fed.take(slice(0, nl))
    sub_np = flt.QuadraticFederation(*(to_numpy(v) for v in (sub.H, sub.x_opt, sub.weights)),
                                     noise_cov=None if sub.noise_cov is None else to_numpy(sub.noise_cov))
    alpha_np = alpha if np.isscalar(alpha) else to_numpy(alpha)[:nl]
    t_loop, res_loop = best(lambda: fedopt_loop(sub_np, x0=np.zeros(a.d), eta=to_numpy(eta)[:nl], alpha=alpha_np,
                                                precond=None if precond is None else to_numpy(precond)[:nl], **kw),
                            a.repeats, warm_up=False)
    diff = float(np.abs(res_loop.x - to_numpy(res.x)[:nl]).max())
    if not np.isfinite(diff) or diff > 1e-8:
        raise SystemExit(f"fedopt and fedopt_loop disagree: max |diff| = {diff:.3g}")

    steps = a.B * a.M * a.tau * a.rounds
    fast_rate = steps / t_fast
    loop_rate = nl * a.M * a.tau * a.rounds / t_loop
    extrap = "" if nl == a.B else f", timed on {nl} of {a.B} configurations; extrapolated to all: {steps / loop_rate:.1f} s"
    print(f"backend={a.backend}{' (array code, unfused)' if a.unfused else ''} client_opt={a.client_opt} "
          f"correction={a.correction} sigma2={a.sigma2} "
          f"B={a.B} M={a.M} d={a.d} tau={a.tau} rounds={a.rounds}: {steps:,} client steps")
    print(f"fedopt (batched)  : {t_fast:8.3f} s  -> {fast_rate:12,.0f} client-steps/s")
    print(f"fedopt_loop       : {nl * a.M * a.tau * a.rounds / loop_rate:8.3f} s  -> {loop_rate:12,.0f} client-steps/s{extrap}")
    print(f"speed-up {fast_rate / loop_rate:,.0f}x; max |x_loop - x_batched| on {nl} configurations = {diff:.1e} "
          f"(best of {a.repeats})")


if __name__ == "__main__":
    main()
