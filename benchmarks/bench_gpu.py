"""What only a GPU can measure: keyed noise and statement grids on CuPy beside NumPy on the same machine.

1. Keyed normal noise, ``KeyedStream.normal`` with CuPy index arrays, against ``cupy.random.standard_normal``
   of the same size (the straightforward generator, not reproducible by key) and against the card's memory
   bandwidth (the 8 bytes written per number); and the bits against the NumPy path's: how many of the
   numbers are equal, and the largest difference in units of the last place.
2. Every statement evaluated on a grid of ``--n`` points per parameter (uniform in [0.1, 1]) on CuPy: the
   time per statement (value only, after a warm-up call that compiles), how many are within ``--target-ms``,
   and the largest relative difference from the NumPy evaluation of the same points.

Run (on a machine with CuPy and a GPU):  python benchmarks/bench_gpu.py [--B 100000] [--n 1000000]
"""
import argparse

import numpy as np

from _timing import best

import fltheory as flt
from fltheory.backend import KeyedStream, get_backend, to_numpy


def keyed_noise(xp, cp, B, M, d, repeats):
    """The three versions of the keyed normal noise: 1 (the device's log and cos), 2 (portable functions,
    --fmad=false), 3 (as 2, both outputs of each Box-Muller pair), their speed and their bits against NumPy's."""
    cfg, cli = xp.arange(B)[:, None], xp.arange(M)[None, :]
    n = B * M * d
    t_raw, _ = best(lambda: cp.random.standard_normal((B, M, d)), repeats, xp=xp)
    for version in (1, 2, 3):
        s = KeyedStream(seed=3, purpose="bench", version=version)
        t_lib, z = best(lambda: s.normal(config=cfg, round=7, client=cli, size=(d,)), repeats, xp=xp)
        ref = s.normal(config=np.arange(B)[:, None], round=7, client=np.arange(M)[None, :], size=(d,))
        got = to_numpy(z)
        equal = int(np.count_nonzero(got.view(np.int64) == ref.view(np.int64)))
        ulp = np.abs(got.view(np.int64) - ref.view(np.int64)).max()
        print(f"keyed noise version {version}, {n:,} numbers: {t_lib * 1e3:.2f} ms ({n / t_lib / 1e9:.2f} G numbers/s, "
              f"{8 * n / t_lib / 1e12:.2f} TB/s written); cupy.random.standard_normal {t_raw * 1e3:.2f} ms; bits "
              f"against the NumPy path: {equal:,} of {n:,} equal ({100 * equal / n:.4f} %), largest difference "
              f"{int(ulp)} ulp")


def statement_grids(xp, n, repeats, target_ms):
    rng = np.random.default_rng(0)
    rows, failed = [], []
    for name, st in flt.statements().items():
        vals = {p: rng.uniform(0.1, 1.0, n) for p in st.parameters}
        dev = {p: xp.asarray(v) for p, v in vals.items()}
        try:
            t, value = best(lambda: st(check=False, **dev), repeats, xp=xp)
        except Exception as exc:  # noqa: BLE001 - a benchmark reports, it does not stop
            failed.append(f"{name}: {type(exc).__name__}: {exc}"[:200])
            continue
        ref = np.asarray(st(check=False, **vals))
        got = to_numpy(value)
        ok = np.isfinite(ref) & np.isfinite(got)
        diff = float(np.max(np.abs(got[ok] - ref[ok]) / np.maximum(np.abs(ref[ok]), 1e-300))) if ok.any() else 0.0
        rows.append((name, t, diff))
    ts = np.array([r[1] for r in rows])
    print(f"statement grids on CuPy, {n:,} points: {len(rows)} statements evaluated, {len(failed)} failed; "
          f"within {target_ms:g} ms: {int(np.sum(ts * 1e3 <= target_ms))}/{len(rows)}; median {np.median(ts) * 1e3:.2f} ms, "
          f"slowest {ts.max() * 1e3:.2f} ms ({rows[int(np.argmax(ts))][0]}); largest relative difference from NumPy "
          f"{max(r[2] for r in rows):.1e}")
    for name, t, _ in sorted(rows, key=lambda r: -r[1])[:8]:
        print(f"  {name:44s} {t * 1e3:8.2f} ms")
    for f in failed[:10]:
        print(f"  FAILED {f}")


SECTIONS = ("baseline", "variants", "split", "batches")


def simulator(xp, cp, B, M, d, tau, rounds, repeats, sections=SECTIONS, big=10**7):
    """Noisy local SGD (FedAvg clients, sigma^2 = 0.1) on the same federation: ``baseline`` fedopt (the fused
    local-run kernel), fedopt's array code, and the straightforward CuPy loop a researcher would write; ``variants``
    the kernel's compile-time variants; ``split`` the whole call against its set-up and the kernel alone (also with
    fixed preconditioners); ``batches`` batches up to ``big`` configurations."""
    from fltheory.papers.local_adaptivity import algorithm  # noqa: PLC0415

    fed = flt.random_quadratic_federation(M=M, d=d, batch=B, kappa=10.0, weights="dirichlet", sigma2=0.1, seed=0,
                                          backend="cupy")
    eta = 0.5 / fed.L[..., None]
    kw = dict(rounds=rounds, tau=tau, client_opt="sgd", seed=0, record_every=rounds)
    from fltheory import _cuda  # noqa: PLC0415

    steps = B * M * tau * rounds
    one = flt.random_quadratic_federation(M=M, d=d, kappa=10.0, weights="dirichlet", sigma2=0.1, seed=0,
                                          backend="cupy")

    def sweep(configs):   # `configs` step sizes over the federation `one`
        return xp.broadcast_to(xp.reshape(xp.linspace(0.05, 0.5, configs), (configs, 1)) / one.L, (configs, M))

    if "baseline" in sections:
        t_fused, r_fused = best(lambda: algorithm.fedopt(fed, x0=xp.zeros(d), eta=eta, **kw).x, repeats, xp=xp)
        algorithm.FUSED_ROUNDS_CUDA = False
        try:   # one kernel per round (local runs), the server's step in array code
            t_round, r_round = best(lambda: algorithm.fedopt(fed, x0=xp.zeros(d), eta=eta, **kw).x, repeats, xp=xp)
        finally:
            algorithm.FUSED_ROUNDS_CUDA = True
        kwa = dict(kw, client_opt="adagrad", correction="local", noise=False)
        t_ada, _ = best(lambda: algorithm.fedopt(fed, x0=xp.zeros(d), eta=eta, **kwa).x, repeats, xp=xp)
        algorithm.FUSED_CUDA = False
        try:
            t_array, r_array = best(lambda: algorithm.fedopt(fed, x0=xp.zeros(d), eta=eta, **kw).x, repeats, xp=xp)
        finally:
            algorithm.FUSED_CUDA = True
        H, xo, w, e = fed.H, fed.x_opt, fed.weights, eta[..., None]
        sd = 0.1 ** 0.5

        def plain():
            x = cp.zeros((B, d))
            for _ in range(rounds):
                y = cp.broadcast_to(x[:, None, :], (B, M, d))
                for _ in range(tau):
                    g = cp.matmul(H, (y - xo)[..., None])[..., 0] + sd * cp.random.standard_normal((B, M, d))
                    y = y - e * g
                x = cp.sum(w[..., None] * y, axis=1)
            return x

        t_plain, _ = best(plain, repeats, xp=xp)
        diff = float(xp.max(xp.abs(r_fused - r_array)))
        hbm = 2 * M * d * d * 8 * B * tau * rounds    # H and the noise factor read once per local step
        print(f"noisy local SGD, B={B:,} M={M} d={d} tau={tau}, {rounds} rounds ({steps:,} client steps): kernel of whole "
              f"rounds {steps / t_fused / 1e9:.2f} G client-steps/s ({t_fused * 1e3:.1f} ms); one kernel per round "
              f"{steps / t_round / 1e9:.2f} G/s (max |diff| {float(xp.max(xp.abs(r_round - r_fused))):.1e}); AdaGrad with "
              f"local correction, no noise, whole rounds {steps / t_ada / 1e9:.2f} G/s; fedopt's array code "
              f"{steps / t_array / 1e9:.3f} G/s ({t_fused and t_array / t_fused:.1f}x slower); straightforward CuPy step "
              f"(matmul + cupy.random) {steps / t_plain / 1e9:.3f} G/s ({t_plain / t_fused:.1f}x slower); max |fused - array| "
              f"{diff:.1e}; reading H_i and the noise factor from memory at every step would move "
              f"{hbm / t_fused / 1e12:.1f} TB/s")
    if "variants" in sections:
        # the whole-round kernel's variants: (noise version, 0 for none; steps whose noise is drawn at once; coordinates
        # through shared memory or by shuffles; NVRTC's register cap; the products H_i y as explicit fused multiply-adds)
        # -> (seconds, x, registers, local bytes)
        variants = {}
        for version, chunk, exchange, regs, fused in ((1, 8, True, None, True), (1, 8, True, None, False),
                                                      (3, 8, True, None, True), (3, 8, True, None, False),
                                                      (2, 8, True, None, True), (0, 8, True, None, True),
                                                      (1, 8, True, 96, True), (3, 8, True, 96, True)):
            _cuda.NOISE_CHUNK, _cuda.EXCHANGE, _cuda.MAX_REGISTERS, _cuda.FUSED_PRODUCTS = chunk, exchange, regs, fused
            kwv = dict(kw, noise=version > 0, noise_version=max(version, 1))
            try:
                t, x = best(lambda: algorithm.fedopt(fed, x0=xp.zeros(d), eta=eta, **kwv).x, repeats, xp=xp)
                at = _cuda.kernel_attributes("fl_fedopt_rounds", d, 1 if version else 0, max(version, 1), tau)
                variants[version, chunk, exchange, regs, fused] = (t, x, at.get("num_regs"), at.get("local_size_bytes"))
            except Exception as exc:  # noqa: BLE001 - a benchmark reports, it does not stop
                print(f"  variant {(version, chunk, exchange, regs, fused)} FAILED: {type(exc).__name__}: {exc}"[:300])
            finally:
                _cuda.NOISE_CHUNK, _cuda.EXCHANGE, _cuda.MAX_REGISTERS, _cuda.FUSED_PRODUCTS = 8, True, None, True
        print("  whole-round kernel variants (noise version: 0 none, 1 device log/cos, 2 portable, 3 portable pairs; "
              "steps whose noise is drawn at once; coordinates through shared memory or by shuffles; register cap; "
              "H_i y by fused multiply-adds or not):")
        first = {}
        for (version, chunk, exchange, regs, fused), (t, x, nregs, local) in variants.items():
            ref = first.setdefault(version, x)
            print(f"    version {version}, chunk {chunk}, {'shared memory' if exchange else 'shuffles'}, cap {regs}, "
                  f"{'fused' if fused else 'unfused'}: {steps / t / 1e9:.2f} G client-steps/s ({t * 1e3:.1f} ms; {nregs} "
                  f"registers, {local} local bytes; max |x - this version's first| {float(xp.max(xp.abs(x - ref))):.1e})")

    # the whole fedopt call (doors, set-up, noise factor, operands, the kernel, the divergence check) split: the
    # set-up (_setup), the operands flattened (RoundsKernel's constructor) and the kernel alone
    if "split" in sections:
        def split(label, problem, eta_b, version, client_opt="sgd", precond=None):
            kws = dict(kw, client_opt=client_opt, noise=version > 0, noise_version=max(version, 1))
            try:
                def setup():
                    return algorithm._setup(problem, xp.zeros(d), eta=eta_b, tau=tau, client_opt=client_opt,
                                            precond=precond, beta1=None, beta2=None, v0=None, eps=None,
                                            bias_correction=False, n_mode="exact", noise=version > 0, seed=0, config=None,
                                            client_ids=None, noise_version=max(version, 1))[0]

                t_s, st = best(setup, repeats, xp=xp)
                n_steps = int(np.prod(st.batch)) * M * tau * rounds

                def operands():
                    return _cuda.RoundsKernel(
                        xp=xp, H=problem.H, x_opt=problem.x_opt, factor=algorithm._kernel_factor(st),
                        factor_diag=st.noise_diag, eta=st.eta, tau=st.tau, tau_max=st.tau_max,
                        omega=xp.broadcast_to(problem.weights, st.batch + (M,)), alpha=xp.ones(()), config=st.config,
                        client_ids=st.client_ids, batch=st.batch, M=M, d=d,
                        base=int(KeyedStream(0, algorithm._NOISE)._base), step_key=algorithm._STEP_KEY, adagrad=False,
                        v0=st.v0, eps=st.eps, exact_n=True, local_correction=False, version=max(version, 1),
                        precond=st.precond, precond_inv=None)   # no correction: fedopt passes none

                t_o, run = best(operands, repeats, xp=xp)
                x_in = xp.zeros(st.batch + (d,))
                t_k, x_k = best(lambda: run(x_in, 0, rounds), repeats, xp=xp)
                t_c, x_c = best(lambda: algorithm.fedopt(problem, x0=xp.zeros(d), eta=eta_b, precond=precond,
                                                         **kws).x, repeats, xp=xp)
                print(f"  {label}, noise version {version or 'none'}: the kernel alone {n_steps / t_k / 1e9:.2f} G "
                      f"client-steps/s ({t_k * 1e3:.1f} ms); the whole fedopt call {n_steps / t_c / 1e9:.2f} G/s "
                      f"({t_c * 1e3:.1f} ms; _setup {t_s * 1e3:.1f} ms, operands {t_o * 1e3:.1f} ms; max |kernel - "
                      f"call| {float(xp.max(xp.abs(x_k - x_c))):.1e})")
            except Exception as exc:  # noqa: BLE001
                print(f"  {label}, version {version} FAILED: {type(exc).__name__}: {exc}"[:300])
            cp.get_default_memory_pool().free_all_blocks()

        for version in (1, 3):
            split(f"B = {B:,}", fed, eta, version)
        eta10 = eta[None] * xp.reshape(xp.linspace(0.5, 1.0, 10), (10, 1, 1))
        split(f"B = {10 * B:,} (10 step sizes)", fed, eta10, 3)
        del eta10
        split(f"B = {big:,} step sizes over one federation", one, sweep(big), 3)
        cp.random.seed(1)
        A = cp.random.standard_normal((B, M, d, d))
        P = A @ cp.swapaxes(A, -1, -2) / d + 0.5 * cp.eye(d)
        del A
        for version in (0, 3):
            split(f"fixed preconditioners P_i, B = {B:,}", fed, 0.1 * eta, version, "precond", P)
        del P
        cp.get_default_memory_pool().free_all_blocks()

    if "batches" in sections:
        def whole_call(label, problem, eta_b, configs, version):
            try:
                t, _ = best(lambda: algorithm.fedopt(problem, x0=xp.zeros(d), eta=eta_b, noise_version=version, **kw).x, 2,
                            xp=xp)
                print(f"  B = {configs:,} {label}, noise version {version}: "
                      f"{configs * M * tau * rounds / t / 1e9:.2f} G client-steps/s ({t * 1e3:.0f} ms, the whole call)")
            except Exception as exc:  # noqa: BLE001
                print(f"  B = {configs:,} {label}, version {version} FAILED: {type(exc).__name__}: {exc}"[:300])
            cp.get_default_memory_pool().free_all_blocks()

        # larger batches: the federations under 10 or 30 step sizes (B x 10 or x 30 configurations; the kernels read
        # H_i by the configuration's index, not copied)
        for version, times in ((1, 10), (3, 10), (3, 30)):
            whole_call(f"configurations ({times} step sizes)", fed,
                       eta[None] * xp.reshape(xp.linspace(0.5, 1.0, times), (times, 1, 1)), times * B, version)
        # the largest batch: a sweep of `big` step sizes over one federation (its H_i shared by every configuration)
        for version in (1, 3):
            whole_call("step sizes over one federation", one, sweep(big), big, version)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--B", type=int, default=100_000)
    ap.add_argument("--M", type=int, default=10)
    ap.add_argument("--d", type=int, default=16)
    ap.add_argument("--n", type=int, default=10**6)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--target-ms", type=float, default=5.0)
    ap.add_argument("--parts", default="noise,statements,simulator", help="which of noise, statements, simulator")
    ap.add_argument("--sections", default=",".join(SECTIONS), help="the simulator's sections: " + ", ".join(SECTIONS))
    a = ap.parse_args(argv)
    import cupy as cp  # noqa: PLC0415 - a GPU benchmark

    xp = get_backend("cupy")
    dev = cp.cuda.runtime.getDeviceProperties(0)
    print(f"GPU: {dev['name'].decode() if isinstance(dev['name'], bytes) else dev['name']}; CuPy {cp.__version__}, "
          f"NumPy {np.__version__}")
    if "noise" in a.parts:
        keyed_noise(xp, cp, a.B, a.M, a.d, a.repeats)
    if "statements" in a.parts:
        statement_grids(xp, a.n, a.repeats, a.target_ms)
    if "simulator" in a.parts:
        simulator(xp, cp, a.B, a.M, a.d, 5, 20, 3, tuple(a.sections.split(",")))


if __name__ == "__main__":
    main()
