"""Time and peak memory of the exact paths at sizes where the dense forms do not fit.

Each case runs in its own Python process and reports its wall time and the growth of the peak
resident set size (RSS) over what the process held once the inputs were built.

* ``theorem2``   -- ``local_adaptivity.fixed_point`` (Theorem 2's x~), M = 1000 clients, d = 200;
* ``structured`` -- ``feddelavg.exact.fixed_point`` (fixed point and spectral radius of the period
                    map), M = 1000, d = 200, tau = 10, Delta = 5: the dense map would have
                    (M d)^2 = 4e10 entries;
* ``pencil``     -- ``feddelavg.exact.period_pencil``, M = 100, d = 10, tau = 10^4;
* ``alpha``      -- ``feddelavg.exact.exact_optimal_alpha`` over a batch of 10^5 configurations
                    (M = 3, d = 2).

Run:  python benchmarks/bench_memory.py [case ...]      (all cases by default; about 2 minutes)
"""
import subprocess
import sys

CASES = {
    "theorem2": """
from fltheory.papers.local_adaptivity import exact as LA
fed = big_fed()
start()
fp = LA.fixed_point(fed, eta=0.01, tau=5)
stop(f"converges={bool(fp.converges)}")
""",
    "structured": """
from fltheory.papers.feddelavg import exact as E
fed = big_fed()
start()
fp = E.fixed_point(fed, eta=0.01, tau=10, Delta=5, alpha=0.5)
stop(f"spectral radius {float(fp.spectral_radius):.6f}")
""",
    "pencil": """
from fltheory.papers.feddelavg import exact as E
fed = flt.random_quadratic_federation(M=100, d=10, seed=1)
start()
E.period_pencil(fed, eta=0.001, tau=10**4, Delta=5)
stop("")
""",
    "alpha": """
from fltheory.papers.feddelavg import exact as E
fed = flt.random_quadratic_federation(M=3, d=2, seed=1, batch=10**5)
start()
r = E.exact_optimal_alpha(fed, eta=0.05, tau=5, Delta=np.arange(10**5) % 6, objective="gap", tol=1e-8)
stop(f"median alpha {float(np.median(r.alpha)):.4f}")
""",
}

PRELUDE = """
import resource, time
import numpy as np
import fltheory as flt

def big_fed(M=1000, d=200):
    rng = np.random.default_rng(0)
    H = np.empty((M, d, d))
    for i in range(M):
        A = rng.normal(size=(d, 8))
        H[i] = np.diag(rng.uniform(1, 10, d)) + 0.05 * A @ A.T
    return flt.QuadraticFederation(H, rng.normal(size=(M, d)), None)

_t = {}
def rss():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
def start():
    _t["rss"], _t["t"] = rss(), time.perf_counter()
def stop(extra):
    print(f"{time.perf_counter() - _t['t']:8.2f} s   +{rss() - _t['rss']:7.0f} MiB over the inputs ({_t['rss']:.0f} MiB)   {extra}")
"""


def main(argv=None):
    names = (argv if argv is not None else sys.argv[1:]) or list(CASES)
    for name in names:
        out = subprocess.run([sys.executable, "-c", PRELUDE + CASES[name]], capture_output=True, text=True)
        print(f"{name:10s} " + (out.stdout.strip() or out.stderr.strip().splitlines()[-1]))


if __name__ == "__main__":
    main()
