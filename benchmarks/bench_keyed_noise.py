"""Throughput of the keyed noise stream against NumPy's own generator, on the same shape.

The simulators draw their gradient noise from ``KeyedStream.normal(config=, round=, client=,
size=(d,))`` so that a configuration's noise does not depend on the batch it runs in.  Three
ways to get one round of noise for B configurations x M clients x d coordinates:

1. ``KeyedStream.normal`` (the package's NumPy path: in place, in cache-sized blocks shared among
   ``fltheory.parallel.num_threads()`` threads; timed with one thread too);
2. the plain formula of the same numbers (two SplitMix64 hashes, Box-Muller), which is what
   the CuPy path runs and what the NumPy path ran before -- the outputs are equal bit for bit;
3. ``numpy.random.Generator.standard_normal`` on the same shape (no keying; the yardstick).

Run:  python benchmarks/bench_keyed_noise.py [--B 100000] [--M 10] [--d 16] [--repeats 7] [--threads N]
"""
import argparse

import numpy as np

from _timing import best

from fltheory import parallel
from fltheory.backend import KeyedStream


def plain(stream, config, round, client, size):
    """The straightforward vectorised formula (what CuPy runs; numbers identical to KeyedStream.normal)."""
    return stream._normal_plain(config, round, client, size)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--B", type=int, default=10_000)
    ap.add_argument("--M", type=int, default=10)
    ap.add_argument("--d", type=int, default=16)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--threads", type=int, default=None, help="threads of the keyed stream (default: the package's)")
    a = ap.parse_args(argv)
    if a.threads is not None:
        parallel.set_num_threads(a.threads)
    threads = parallel.num_threads()
    s = KeyedStream(0, "bench")
    cfg, cli = np.arange(a.B)[:, None], np.arange(a.M)[None, :]
    n = a.B * a.M * a.d
    rng = np.random.default_rng(0)
    t_keyed = best(lambda: s.normal(config=cfg, round=7, client=cli, size=(a.d,)), a.repeats)[0]
    with parallel.threads(1):
        t_one = best(lambda: s.normal(config=cfg, round=7, client=cli, size=(a.d,)), a.repeats)[0]
    t_plain = best(lambda: plain(s, cfg, 7, cli, (a.d,)), a.repeats)[0]
    t_numpy = best(lambda: rng.standard_normal((a.B, a.M, a.d)), a.repeats)[0]
    same = np.array_equal(s.normal(config=cfg, round=7, client=cli, size=(a.d,)), plain(s, cfg, 7, cli, (a.d,)))
    t_cos = best(lambda: np.cos(rng.uniform(size=n)), a.repeats)[0] - best(lambda: rng.uniform(size=n), a.repeats)[0]
    print(f"B={a.B} M={a.M} d={a.d}: {n:,} numbers; best of {a.repeats}")
    print(f"KeyedStream.normal : {t_keyed * 1e3:8.1f} ms  {n / t_keyed / 1e6:7.1f} M/s  "
          f"({t_numpy / t_keyed:.2f}x numpy's throughput; {threads} threads)")
    print(f"  on one thread    : {t_one * 1e3:8.1f} ms  {n / t_one / 1e6:7.1f} M/s  "
          f"({t_numpy / t_one:.2f}x numpy's throughput)")
    print(f"plain formula      : {t_plain * 1e3:8.1f} ms  {n / t_plain / 1e6:7.1f} M/s  (bit-identical: {same})")
    print(f"numpy standard_normal: {t_numpy * 1e3:6.1f} ms  {n / t_numpy / 1e6:7.1f} M/s")
    print(f"np.cos alone on n numbers: about {t_cos * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
