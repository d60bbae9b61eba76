"""Gradients of logistic-regression clients (``LogisticFederation``) for a batch of configurations.

Work: the digits federation (scikit-learn's 8x8 digits, ``M`` label-skewed clients, m = 64 features, s = 10
classes, d = 640 parameters), ``P`` configurations, one point per (configuration, client): the full-data
gradient of every client, what FedDelAvg's simulator asks for at every local step.  Compared:

* ``grad_clients``          -- this package: one product per client over all configurations, ``(P s, m) @ (m, D_i)``,
                               the softmax's sums over the classes along whole rows of samples;
* straightforward numpy     -- what one writes first: the logits ``X_i W^T`` of each (configuration, client) as a
                               batched ``matmul`` with the classes last, softmax, ``R^T X_i`` (this package's own
                               code before it changed, and its minibatch path now);
* the machine's limit       -- the products are 4 P sum_i D_i m s flops; a large ``matmul`` (2048 x 2048) on the
                               same threads gives the floating-point rate this CPU reaches, so the flops divided
                               by it is the time the products alone would take at that rate.

Also ``grad_selected`` (one chosen client per point, DeFedAvg's and AsySG's simulator) against computing every
client's gradient at every point and picking (the default of the federations without a cheaper way).

Run:  python benchmarks/bench_logistic.py [--clients 10] [--P 1 9 64] [--repeats 5] [--threads 1]
"""
import argparse
import time

import numpy as np

from fltheory.datasets import digits_federation
from fltheory.problems import _Federation

from _timing import best


def straightforward(fed, W):
    """The textbook batched gradient: per (configuration, client) logits with the classes last."""
    s, m = fed.n_classes, fed.m
    Wr = W.reshape(W.shape[:-1] + (s, m))
    Z = fed.X @ np.swapaxes(Wr, -1, -2)                            # (P, M, n, s)
    Z = Z - Z.max(axis=-1, keepdims=True)
    E = np.exp(Z)
    R = (E / E.sum(axis=-1, keepdims=True) - fed._onehot) / fed.sizes[:, None, None]
    G = np.swapaxes(R, -1, -2) @ fed.X                             # (P, M, s, m)
    return G.reshape(W.shape) + fed.reg * W


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clients", type=int, default=10)
    ap.add_argument("--P", type=int, nargs="+", default=[1, 9, 64])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", type=int, default=None, help="BLAS threads (default: the library's)")
    a = ap.parse_args(argv)
    if a.threads is not None:
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=a.threads, user_api="blas")
    fed = digits_federation(n_clients=a.clients, partition="label", seed=0).fed
    n_samples = int(fed.sizes.sum())
    big = np.random.default_rng(0).normal(size=(2048, 2048))
    t_mm, _ = best(lambda: big @ big, a.repeats)
    rate = 2 * 2048**3 / t_mm
    print(f"digits federation: M = {fed.M} clients, {n_samples} samples (padded to {fed.X.shape[1]} per client), "
          f"d = {fed.d}; matmul 2048^3 reaches {rate / 1e9:.1f} GFLOP/s here")
    rng = np.random.default_rng(1)
    for P in a.P:
        W = rng.normal(size=(P, fed.M, fed.d)) * 0.1
        t_lib, g_lib = best(lambda: fed.grad_clients(W), a.repeats)
        t_ref, g_ref = best(lambda: straightforward(fed, W), a.repeats)
        flops = 4 * P * n_samples * fed.m * fed.n_classes
        logits = rng.normal(size=P * fed.M * fed.n_classes * fed.X.shape[1])
        out = np.empty_like(logits)
        t_exp, _ = best(lambda: np.exp(logits, out=out), a.repeats)
        print(f"P = {P:4d}: grad_clients {t_lib * 1e3:8.2f} ms   straightforward {t_ref * 1e3:8.2f} ms   "
              f"({t_ref / t_lib:4.2f}x)   products alone at the matmul rate {flops / rate * 1e3:6.2f} ms   "
              f"exp of the {logits.size:,} logits alone {t_exp * 1e3:6.2f} ms   "
              f"max |difference| {np.abs(g_lib - g_ref).max():.1e}")
    # one chosen client per point: U updates of B configurations
    for U, B in ((4, 1), (4, 64)):
        x = rng.normal(size=(U, B, fed.d)) * 0.1
        c = rng.integers(0, fed.M, size=(U, B))
        t_sel, g_sel = best(lambda: fed.grad_selected(x, c), a.repeats)
        t_all, g_all = best(lambda: _Federation.grad_selected(fed, x, c), a.repeats)
        print(f"grad_selected, {U} x {B} points: {t_sel * 1e3:7.2f} ms against every client's gradient then picked "
              f"{t_all * 1e3:7.2f} ms ({t_all / t_sel:4.1f}x); max |difference| {np.abs(g_sel - g_all).max():.1e}")
    print(f"({time.strftime('%Y-%m-%d')}, NumPy {np.__version__})")


if __name__ == "__main__":
    main()
