"""Every shipped statement on a grid of 10^6 points, with and without its conditions, against sympy.subs.

Work: for each statement of ``fltheory.statements()``, every parameter a 1-D float array of ``--n``
entries drawn uniformly from [0.1, 1] (seed 0; the same grid as the speed target of the issue
tracker: the points need not meet the conditions, the value is computed everywhere).  Timed, after
one warm-up call that compiles the statement:

* ``value``      -- ``st(check=False, **arrays)``: the vectorised value (NumPy);
* ``conditions`` -- ``st(mask=True, **arrays)``: the value and, elementwise, whether every condition
                    holds (relative slack ``rtol`` on inequalities), nothing raised;
* ``sympy.subs`` -- ``float(st.expr.subs(point))`` on ``--subs-points`` of the grid's points, the
                    per-point time extrapolated to the whole grid (it is linear in the points).

The sympy.subs points are taken where the statement's conditions hold, if the grid has such points
(statements on integers, tau = 1, 2, ..., have none on this grid: they are timed on any points and
not compared); the script compares the vectorised value with the sympy.subs value there (largest
relative difference where both are finite) and exits with an error above ``--tol``.

Large grids are evaluated in blocks shared among ``fltheory.parallel.num_threads()`` threads
(``--threads 1`` for one).

Run:  python benchmarks/bench_statements.py [--n 1000000] [--repeats 3] [--subs-points 3] [--paper feddelavg] [--threads N]
"""
import argparse
import sys
import time

import numpy as np
import sympy as sp

from _timing import best

import fltheory as flt
from fltheory import parallel


def subs_value(st, point):
    """The statement's value at one point through SymPy substitution (the slow reference)."""
    v = st.expr.subs({s: sp.Float(point[s.name]) for s in st.symbols})
    try:
        return complex(v.evalf()).real if v.is_real is not False else float("nan")
    except (TypeError, ValueError):
        return float("nan")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10**6, help="points of the grid")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--subs-points", type=int, default=3, help="points evaluated with sympy.subs")
    ap.add_argument("--paper", default=None, help="only this paper's statements")
    ap.add_argument("--target-ms", type=float, default=50.0)
    ap.add_argument("--tol", type=float, default=1e-9, help="largest relative difference allowed against sympy.subs")
    ap.add_argument("--threads", type=int, default=None, help="threads of the blocked evaluation (default: the package's)")
    a = ap.parse_args(argv)
    if a.threads is not None:
        parallel.set_num_threads(a.threads)
    rng = np.random.default_rng(0)
    rows = []
    for name, st in flt.statements().items():
        if a.paper and st.paper != a.paper:
            continue
        vals = {p: rng.uniform(0.1, 1.0, a.n) for p in st.parameters}
        t_val, value = best(lambda: st(check=False, **vals), a.repeats)   # the warm-up call compiles
        t_cond, ev = best(lambda: st(mask=True, **vals), a.repeats)
        inside = np.flatnonzero(np.asarray(ev.holds))  # compare where the conditions hold (integers, ranges)
        pool = inside if inside.size >= a.subs_points else np.arange(a.n)
        idx = rng.choice(pool, size=a.subs_points, replace=False)
        t0 = time.perf_counter()
        ref = np.array([subs_value(st, {p: float(v[i]) for p, v in vals.items()}) for i in idx])
        t_subs = (time.perf_counter() - t0) / a.subs_points * a.n
        got = np.asarray(value)[idx]
        ok = np.isfinite(ref) & np.isfinite(got) & np.asarray(ev.holds)[idx]
        diff = float(np.max(np.abs(got[ok] - ref[ok]) / np.maximum(np.abs(ref[ok]), 1e-300))) if ok.any() else np.nan
        rows.append((name, t_val, t_cond, t_subs, diff))
    print(f"{len(rows)} statements; grid of {a.n:,} points per parameter, uniform in [0.1, 1]; NumPy "
          f"{np.__version__}; {parallel.num_threads()} threads; best of {a.repeats} after a warm-up; sympy.subs on "
          f"{a.subs_points} points, extrapolated")
    print(f"{'statement':44s} {'value ms':>9s} {'+conds ms':>9s} {'subs s (extrap.)':>17s} {'x subs':>9s} {'rel diff':>9s}")
    for name, t_val, t_cond, t_subs, diff in sorted(rows, key=lambda r: -r[1]):
        print(f"{name:44s} {t_val * 1e3:9.1f} {t_cond * 1e3:9.1f} {t_subs:17.0f} {t_subs / t_val:9.0f} {diff:9.1e}")
    within = sum(r[1] * 1e3 <= a.target_ms for r in rows)
    within_c = sum(r[2] * 1e3 <= a.target_ms for r in rows)
    speed = [r[3] / r[1] for r in rows]
    compared = [r[4] for r in rows if not np.isnan(r[4])]
    worst = max(compared, default=0.0)
    print(f"value within {a.target_ms:g} ms: {within}/{len(rows)} (slowest {max(r[1] for r in rows) * 1e3:.1f} ms, "
          f"median {np.median([r[1] for r in rows]) * 1e3:.1f} ms); with conditions: {within_c}/{len(rows)} "
          f"(slowest {max(r[2] for r in rows) * 1e3:.1f} ms)")
    print(f"speed-up over sympy.subs: smallest {min(speed):,.0f}x, median {np.median(speed):,.0f}x; "
          f"largest relative difference {worst:.1e} on the {len(compared)} statements whose conditions hold at "
          f"some grid points (the others need integers or relations the uniform grid does not meet: nan)")
    if worst > a.tol:
        sys.exit(f"the vectorised values differ from sympy.subs by {worst:.1e} > {a.tol:g}")


if __name__ == "__main__":
    main()
