"""CuPy kernels of the hot paths, compiled on first use (imported only where CuPy arrays are seen); the kernels of
closed forms (FedOpt's fixed points, statements) are in :mod:`fltheory._cuda_closed`.

* :func:`keyed_normal`: ``KeyedStream.normal`` as one elementwise kernel (the integer hash, the two uniforms
  and Box-Muller per output number).
* :func:`local_runs`: the local runs of FedOpt on quadratic clients (client SGD, fixed SPD preconditioners
  ``P_i`` or AdaGrad without momentum, keyed additive noise) for every configuration and client at once, the whole
  round in one kernel: each client is a group of ``W`` threads (the power of two at least ``d``), thread ``i``
  holds row ``i`` of ``H_i``, of the noise factor and of ``P_i`` in registers for the round and its coordinate of
  the local model; a product ``H_i y`` is ``d`` fused multiply-adds per thread (``__fma_rn``, so fused also in the
  kernels of noise versions 2 and 3, which are compiled with ``--fmad=false`` for the noise's sake), with the other
  coordinates read from the group's slots of shared memory (``EXCHANGE``; by warp shuffles when it is off), and
  ``P_i g`` the same way.  The noise of up to ``NOISE_CHUNK`` steps is drawn at once, before those steps.
  :class:`RoundsKernel` runs whole rounds with the GD server the same way, a configuration per block.

``_PORTABLE_CODE`` holds versions 2 and 3 of the keyed noise (``KeyedStream(version=2)``: a portable ``log`` and
``cos(2 pi u)`` from basic IEEE-754 operations, ``fl_normal_v2``; version 3, ``fl_normal_v3_pair``, both outputs
of each Box-Muller pair) as one C text for CUDA and the host, compiled for CUDA with ``--fmad=false``: the tests
compare it with NumPy bit for bit on the host's C compilers and, where a GPU is, as CuPy kernels (an NVIDIA H200:
``benchmarks/README.md``).

The noise of the kernels is the keyed stream's own, of the version asked for: the same hash, uniforms and formula
as the array path on the device, so the same bits as ``KeyedStream.normal`` there (versions 2 and 3: the NumPy
path's bits too).  Sums are in another order than the array path's batched products (a few units in the last
place).  ``tests/host_cuda.py`` runs the kernels' C text on a CPU (a thread per CUDA thread), so their lane
arithmetic is tested where no GPU is.
"""
from __future__ import annotations

import numpy as np

from .validation import distinct

_DEVICE_CODE = r"""
#define FL_GOLDEN 0x9E3779B97F4A7C15ull
#define FL_M1 0xBF58476D1CE4E5B9ull
#define FL_M2 0x94D049BB133111EBull
__device__ __forceinline__ unsigned long long fl_mix(unsigned long long z) {
    z = (z ^ (z >> 30)) * FL_M1;
    z = (z ^ (z >> 27)) * FL_M2;
    return z ^ (z >> 31);
}
__device__ __forceinline__ double fl_normal(unsigned long long h, unsigned long long c) {
    unsigned long long a = fl_mix(h ^ (c * FL_M1 + FL_GOLDEN));
    unsigned long long b = fl_mix(h ^ ((c + (1ull << 40)) * FL_M1 + FL_GOLDEN));
    double u1 = ((double)(a >> 11) + 0.5) * 1.1102230246251565e-16;
    double u2 = ((double)(b >> 11) + 0.5) * 1.1102230246251565e-16;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}
// the key hash of (configuration, round, client), in two parts: the configuration's (once per run) and the rest
__device__ __forceinline__ unsigned long long fl_key_config(unsigned long long base, unsigned long long config) {
    return fl_mix(base ^ (config * FL_GOLDEN + FL_M2));
}
__device__ __forceinline__ unsigned long long fl_key_rest(unsigned long long h, unsigned long long round,
                                                         unsigned long long client) {
    h = fl_mix(h ^ (round * FL_GOLDEN + FL_M2));
    return fl_mix(h ^ (client * FL_GOLDEN + FL_M2));
}
"""

# Versions 2 and 3 of the keyed normal noise (``KeyedStream(version=2 or 3)``): the portable log, sin and cos of
# 2 pi u of :mod:`fltheory.backend` (``_portable_log``, ``_portable_sincos_2pi``: the same operations in the same
# order, the same constants printed as shortest round-trip decimals), ``fl_normal_v2`` (the counterpart of
# ``fl_normal``) and ``fl_normal_v3_pair`` / ``fl_normal_v3`` (both outputs of a pair).
# One text for both compilers: under CUDA (``__CUDACC__``, defined by nvcc and NVRTC) the functions are
# ``__device__ __forceinline__``, on the host ``static inline``.  Bit for bit equal to the NumPy path only when no
# multiply-add is fused: ``-ffp-contract=off`` for a host compiler, ``--fmad=false`` for nvcc or NVRTC (CuPy:
# ``options=("--fmad=false",)``).  The tests compile this text with the host's C compilers and, where a GPU is, as
# CuPy kernels (alone and inside the local-run kernels), and compare it with NumPy bit for bit.
_PORTABLE_TEMPLATE = r"""
#if defined(__CUDACC__)
#define FL_PORTABLE __device__ __forceinline__
#else
#include <math.h>
#define FL_PORTABLE static inline
#endif
FL_PORTABLE unsigned long long fl_v2_mix(unsigned long long z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
FL_PORTABLE unsigned long long fl_v2_bits(double x) { union { double d; unsigned long long u; } v; v.d = x; return v.u; }
FL_PORTABLE double fl_v2_double(unsigned long long b) { union { double d; unsigned long long u; } v; v.u = b; return v.d; }
// log x for x in (0, 1], positive normal: x = m 2^k, m in [sqrt(1/2), sqrt(2)), by the bits
FL_PORTABLE double fl_portable_log(double x) {
    unsigned long long b = fl_v2_bits(x);
    long long k = (long long)(b >> 52) - 1023;
    unsigned long long mb = (b & ${MANTISSA}ull) | ${ONE_BITS}ull;
    if (mb >= ${SQRT2_BITS}ull) { mb -= 1ull << 52; k += 1; }
    double m = fl_v2_double(mb);
    double dk = (double)k;
    double f = m - 1.0;
    double s = f / (2.0 + f);
    double z = s * s;
    double w = z * z;
    double t1 = w * (${LG1} + w * (${LG3} + w * ${LG5}));
    double t2 = z * (${LG0} + w * (${LG2} + w * (${LG4} + w * ${LG6})));
    double R = t2 + t1;
    double hfsq = 0.5 * f * f;
    return dk * ${LN2_HI} - ((hfsq - (s * (hfsq + R) + dk * ${LN2_LO})) - f);
}
// sin and cos of 2 pi u for u in [0, 1]: quarter turns n, theta = (pi/2)(4u - n) as a double-double x + y
FL_PORTABLE void fl_portable_sincos_2pi(double u, double* sin_out, double* cos_out) {
    double t = 4.0 * u;
    double n = (double)((t > 0.5) + (t > 1.5) + (t > 2.5) + (t > 3.5));
    double r = t - n;
    double p = r * ${PIO2_HI};
    double c = ${SPLITTER} * r;
    double rh = c - (c - r);
    double rl = r - rh;
    double e = ((rh * ${PIO2_HH} - p) + rh * ${PIO2_HL} + rl * ${PIO2_HH}) + rl * ${PIO2_HL};
    double lo = e + r * ${PIO2_LO};
    double x = p + lo;
    double y = lo - (x - p);
    double z = x * x;
    double v = z * x;
    double rs = ${S1} + z * (${S2} + z * (${S3} + z * (${S4} + z * ${S5})));
    double sn = x - ((z * (0.5 * y - v * rs) - y) - v * ${S0});
    double w = z * z;
    double rc = z * (${C0} + z * (${C1} + z * ${C2})) + w * w * (${C3} + z * (${C4} + z * ${C5}));
    double hz = 0.5 * z;
    w = 1.0 - hz;
    double cs = w + (((1.0 - w) - hz) + (z * rc - x * y));
    int first = n == 0.0 || n == 4.0;
    *sin_out = first ? sn : (n == 1.0 ? cs : (n == 2.0 ? -sn : -cs));
    *cos_out = first ? cs : (n == 1.0 ? -sn : (n == 2.0 ? -cs : sn));
}
FL_PORTABLE double fl_portable_cos_2pi(double u) {
    double s, c;
    fl_portable_sincos_2pi(u, &s, &c);
    return c;
}
// the normal number of key hash h and counter c: the uniforms of fl_normal, the portable functions
FL_PORTABLE double fl_normal_v2(unsigned long long h, unsigned long long c) {
    unsigned long long a = fl_v2_mix(h ^ (c * 0xBF58476D1CE4E5B9ull + 0x9E3779B97F4A7C15ull));
    unsigned long long b = fl_v2_mix(h ^ ((c + (1ull << 40)) * 0xBF58476D1CE4E5B9ull + 0x9E3779B97F4A7C15ull));
    double u1 = ((double)(a >> 11) + 0.5) * ${TWO_M53};
    double u2 = ((double)(b >> 11) + 0.5) * ${TWO_M53};
    return sqrt(-2.0 * fl_portable_log(u1)) * fl_portable_cos_2pi(u2);
}
// version 3: both Box-Muller outputs of pair j, r cos (counter 2j) and r sin (counter 2j + 1), from the uniforms
// that versions 1 and 2 use for counter j (so counter 2j is version 2's number of counter j)
FL_PORTABLE void fl_normal_v3_pair(unsigned long long h, unsigned long long j, double* zc, double* zs) {
    unsigned long long a = fl_v2_mix(h ^ (j * 0xBF58476D1CE4E5B9ull + 0x9E3779B97F4A7C15ull));
    unsigned long long b = fl_v2_mix(h ^ ((j + (1ull << 40)) * 0xBF58476D1CE4E5B9ull + 0x9E3779B97F4A7C15ull));
    double u1 = ((double)(a >> 11) + 0.5) * ${TWO_M53};
    double u2 = ((double)(b >> 11) + 0.5) * ${TWO_M53};
    double r = sqrt(-2.0 * fl_portable_log(u1));
    double s, c;
    fl_portable_sincos_2pi(u2, &s, &c);
    *zc = r * c;
    *zs = r * s;
}
FL_PORTABLE double fl_normal_v3(unsigned long long h, unsigned long long c) {
    double zc, zs;
    fl_normal_v3_pair(h, c >> 1, &zc, &zs);
    return (c & 1ull) ? zs : zc;
}
"""


def _portable_source() -> str:
    """:data:`_PORTABLE_TEMPLATE` with the constants of :mod:`fltheory.backend` filled in (``repr``: the shortest
    decimal that reads back to the same double)."""
    from string import Template  # noqa: PLC0415

    from . import backend as bk  # noqa: PLC0415

    values = {"LN2_HI": bk._LN2_HI, "LN2_LO": bk._LN2_LO, "SQRT2_BITS": hex(bk._SQRT2_BITS),
              "MANTISSA": hex(bk._MANTISSA), "ONE_BITS": hex(bk._ONE_BITS), "PIO2_HI": bk._PIO2_HI,
              "PIO2_LO": bk._PIO2_LO, "PIO2_HH": bk._PIO2_HH, "PIO2_HL": bk._PIO2_HL, "SPLITTER": bk._SPLITTER,
              "TWO_M53": 2.0**-53}
    values.update({f"LG{i}": c for i, c in enumerate(bk._LG)})
    values.update({f"S{i}": c for i, c in enumerate(bk._S)})
    values.update({f"C{i}": c for i, c in enumerate(bk._C)})
    return Template(_PORTABLE_TEMPLATE).substitute({k: v if isinstance(v, str) else f"({v!r})" for k, v in
                                                    values.items()})


_PORTABLE_CODE = _portable_source()


_LOCAL_RUN = r"""
// NOISE: 0 none, 1 a diagonal factor (F holds its diagonal, (M, D) per configuration), 2 a dense factor (M, D, D)
// One client's local run on the lanes of its group (W lanes, lane i holding coordinate i when i < D): from y = xi,
// tau_max steps of which the first tm are taken; the noise of step k has key (configuration, round0 + k, client).
// On return y is the local model and acc the sum of the step preconditioners (1 per step for SGD and fixed P_i).
// EXCHANGE 1: the group's coordinates of y - x_i* go through its W slots of shared memory (ex, 16-byte aligned),
// one store and D / 2 two-double loads per step, instead of D shuffles of a double.
// The noise of FL_CHUNK steps is drawn at once, before those steps (independent draws in flight together, off the
// steps' chain of dependent operations): FL_SLOTS draws per lane.  Versions 1 and 2: slot t is coordinate i of step
// k0 + t.  Version 3 (both outputs of each Box-Muller pair): a step needs FL_PAIRS pairs, and slot t of lane i is pair
// i % FL_PAIRS of step k0 + t FL_SPAN + i / FL_PAIRS, so each step's numbers lie in one slot of FL_PAIRS lanes.  The
// key hashes of the chunk's steps: lane i hashes step k0 + i % FL_CHUNK and the group reads them (W >= FL_CHUNK),
// else every lane hashes each step itself.
// FL_MAC(a, b, c) = a b + c: one fused multiply-add where FUSED_PRODUCTS (also under --fmad=false, which the noise
// of versions 2 and 3 needs and would otherwise leave the products H_i y unfused too), else a product and a sum
#if FUSED_PRODUCTS
#define FL_MAC(a, b, c) __fma_rn((a), (b), (c))
#else
#define FL_MAC(a, b, c) ((c) + (a) * (b))
#endif
#if NOISE_VERSION == 3
#define FL_PAIRS ((D + 1) / 2)
#define FL_SPAN (W / FL_PAIRS > 0 ? W / FL_PAIRS : 1)
#define FL_SLOTS ((FL_CHUNK + FL_SPAN - 1) / FL_SPAN)
#else
#define FL_SLOTS FL_CHUNK
#endif
// PRECOND 1: client steps y <- y - eta P_i g with a fixed SPD P_i (p: this lane's row), N_i = acc P_i
__device__ __forceinline__ double fl_row_times(const double* a, double v, int i, double* ex) {
    // sum_j a[j] v_j, v_j the value v of lane j of the group
    double out = 0.0;
#if EXCHANGE
    __syncwarp();            // the last reads of the group's slots are done
    ex[i] = v;
    __syncwarp();
#pragma unroll
    for (int j = 0; j + 1 < D; j += 2) {
        const double2 q = reinterpret_cast<const double2*>(ex)[j / 2];
        out = FL_MAC(a[j], q.x, out);
        out = FL_MAC(a[j + 1], q.y, out);
    }
    if (D & 1) out = FL_MAC(a[D - 1], ex[D - 1], out);
#else
#pragma unroll
    for (int j = 0; j < D; ++j) out = FL_MAC(a[j], __shfl_sync(0xffffffffu, v, j, W), out);
#endif
    return out;
}

__device__ __forceinline__ void fl_local_run(double& y, double& acc, const double* h, const double* f, double fd,
        const double* p, double xoi, double e, long long tm, unsigned long long hc, unsigned long long cl,
        unsigned long long round0, int tau_max, bool row, int i, int adagrad, double v0, double eps, double* ex) {
    double v = v0;
    acc = 0.0;
    for (int k0 = 0; k0 < tau_max; k0 += FL_CHUNK) {
#if NOISE
        double za[FL_SLOTS], zb[FL_SLOTS];
#if W >= FL_CHUNK
        const unsigned long long keys = fl_key_rest(hc, round0 + (unsigned long long)(k0 + i % FL_CHUNK), cl);
#endif
#pragma unroll
        for (int t = 0; t < FL_SLOTS; ++t) {
#if NOISE_VERSION == 3
            const int step = t * FL_SPAN + i / FL_PAIRS;   // in the chunk (>= FL_CHUNK on lanes no step reads)
#else
            const int step = t;
#endif
#if W >= FL_CHUNK
            const unsigned long long key = __shfl_sync(0xffffffffu, keys, step % FL_CHUNK, W);
#else
            const unsigned long long key = fl_key_rest(hc, round0 + (unsigned long long)(k0 + step), cl);
#endif
#if NOISE_VERSION == 3
            fl_normal_v3_pair(key, (unsigned long long)(i % FL_PAIRS), &za[t], &zb[t]);
#else
            za[t] = FL_NORMAL(key, (unsigned long long)i);
            zb[t] = 0.0;
#endif
        }
#endif
#pragma unroll
        for (int c = 0; c < FL_CHUNK; ++c) {
            const int k = k0 + c;
            if (k >= tau_max) break;
            double r = row ? y - xoi : 0.0;
            double g = fl_row_times(h, r, i, ex);
#if NOISE
#if NOISE_VERSION == 3
            const int src = (c % FL_SPAN) * FL_PAIRS + (i >> 1);   // coordinate i: pair i / 2, r sin when i is odd
            const double pc = __shfl_sync(0xffffffffu, za[c / FL_SPAN], src, W);
            const double ps = __shfl_sync(0xffffffffu, zb[c / FL_SPAN], src, W);
            double z = row ? ((i & 1) ? ps : pc) : 0.0;
#else
            double z = row ? za[c] : 0.0;
#endif
#if NOISE == 2
            double n = 0.0;
#pragma unroll
            for (int j = 0; j < D; ++j) n = FL_MAC(f[j], __shfl_sync(0xffffffffu, z, j, W), n);
            g += n;
#else
            g = FL_MAC(fd, z, g);
#endif
#endif
#if PRECOND
            const double u = fl_row_times(p, g, i, ex);
            if (k < tm) { y = y - e * u; acc += 1.0; }
#else
            double P = 1.0;
            if (adagrad) { v += g * g; P = 1.0 / (sqrt(v) + eps); }
            if (k < tm) { y = y - e * (P * g); acc += P; }
#endif
        }
    }
}

// this lane's row of H_i, of the noise factor and of P_i, into registers
__device__ __forceinline__ void fl_load_client(double* h, double* f, double& fd, double* p, const double* H,
        long long sH, const double* F, long long sF, const double* Pc, long long sP, long long b, long long m, int M,
        int ir) {
    const double* Hr = H + ((b % sH) * M + m) * D * D + (long long)ir * D;
#pragma unroll
    for (int j = 0; j < D; ++j) h[j] = Hr[j];
#if PRECOND
    const double* Pr = Pc + ((b % sP) * M + m) * D * D + (long long)ir * D;
#pragma unroll
    for (int j = 0; j < D; ++j) p[j] = Pr[j];
#endif
#if NOISE == 2
    const double* Fr = F + ((b % sF) * M + m) * D * D + (long long)ir * D;
#pragma unroll
    for (int j = 0; j < D; ++j) f[j] = Fr[j];
#elif NOISE == 1
    fd = F[((b % sF) * M + m) * D + ir];
#endif
}
"""

_LOCAL_RUNS = r"""
extern "C" __global__ void fl_local_runs(
    const double* x, const double* H, long long sH, const double* xo, long long sX,
    const double* F, long long sF, const double* eta, long long sE, const long long* tau, long long sT,
    const double* Pc, long long sP, const double* Pinv, long long sPi,
    const long long* config, const long long* cid, long long sC,
    unsigned long long base, unsigned long long round0, int tau_max, int adagrad, double v0, double eps,
    int exact_n, double* delta, double* Nout, long long BM, int M)
{
    long long gid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long cm = gid / W;                       // (configuration, client)
    int i = (int)(gid % W);                       // the coordinate (row) of this thread
    bool valid = cm < BM, row = valid && i < D;
    long long c = valid ? cm : BM - 1;            // lanes past the end shuffle with the last client, write nothing
    long long b = c / M;
    int m = (int)(c % M), ir = i < D ? i : 0;
    double h[D], f[NOISE == 2 ? D : 1], fd = 0.0, p[PRECOND ? D : 1];
    fl_load_client(h, f, fd, p, H, sH, F, sF, Pc, sP, b, m, M, ir);
    double xi = x[b * D + ir];
    double xoi = xo[(b % sX) * (long long)M * D + (long long)m * D + ir];
    double e = eta[(b % sE) * M + m];
    long long tm = tau[(b % sT) * M + m];
    unsigned long long hc = fl_key_config(base, (unsigned long long)config[b]);
    unsigned long long cl = (unsigned long long)cid[(b % sC) * M + m];
    double y = xi, acc;
#if EXCHANGE
    extern __shared__ double smem[];
    double* ex = smem + (threadIdx.x / W) * W;
#else
    double* ex = nullptr;
#endif
    fl_local_run(y, acc, h, f, fd, p, xoi, e, tm, hc, cl, round0, tau_max, row, i, adagrad, v0, eps, ex);
    if (row) {
        delta[cm * D + i] = xi - y;
        double nv = exact_n ? e * acc : acc;
        if (adagrad) Nout[cm * D + i] = nv;
        else if (i == 0) Nout[cm] = nv;
    }
}
"""

_ROUNDS = r"""
// Rounds t0 .. t1 - 1 of FedOpt with the GD server (x <- x - alpha sum_i omega_i Delta_i, Delta_i local-corrected
// or not), one configuration per block: client m on lanes m W .. m W + W - 1 (blockDim padded to whole warps; the
// padding lanes run the last client's steps and write nothing), the server's sum in shared memory in client order.
extern "C" __global__ void fl_fedopt_rounds(
    const double* xin, double* xout, const double* H, long long sH, const double* xo, long long sX,
    const double* F, long long sF, const double* eta, long long sE, const long long* tau, long long sT,
    const double* Pc, long long sP, const double* Pinv, long long sPi,
    const double* om, long long sO, const double* alpha, long long sA,
    const long long* config, const long long* cid, long long sC,
    unsigned long long base, unsigned long long step_key, long long t0, long long t1, int tau_max,
    int adagrad, double v0, double eps, int exact_n, int local_correction, double* Delta, double* Nout, int M)
{
    extern __shared__ double smem[];
    double* part = smem;                  // omega_m Delta_m, (M, D)
    double* xs = smem + M * D;            // the global model, (D)
#if EXCHANGE
    double* ex = smem + ((M * D + D + 1) & ~1) + (threadIdx.x / W) * W;   // this group's slots, after part and xs
#else
    double* ex = nullptr;
#endif
    const long long b = blockIdx.x;
    const int m0 = threadIdx.x / W, i = threadIdx.x % W;
    const bool live = m0 < M, row = live && i < D;
    const int m = live ? m0 : M - 1, ir = i < D ? i : 0;
    double h[D], f[NOISE == 2 ? D : 1], fd = 0.0, p[PRECOND ? D : 1];
    fl_load_client(h, f, fd, p, H, sH, F, sF, Pc, sP, b, m, M, ir);
    const double xoi = xo[((b % sX) * M + m) * D + ir];
    const double e = eta[(b % sE) * M + m];
    const long long tm = tau[(b % sT) * M + m];
    const double w = om[(b % sO) * M + m];
    const double a = alpha[b % sA];
    const unsigned long long hc = fl_key_config(base, (unsigned long long)config[b]);
    const unsigned long long cl = (unsigned long long)cid[(b % sC) * M + m];
    if (threadIdx.x < D) xs[threadIdx.x] = xin[b * D + threadIdx.x];
    __syncthreads();
    for (long long t = t0; t < t1; ++t) {
        const double xi = xs[ir];
        double y = xi, acc;
        fl_local_run(y, acc, h, f, fd, p, xoi, e, tm, hc, cl, (unsigned long long)t * step_key, tau_max, row, i,
                     adagrad, v0, eps, ex);
        double dl = xi - y;
        const double nv = exact_n ? e * acc : acc;
#if PRECOND
        if (local_correction) {   // N_i^{-1} Delta_i = P_i^{-1} Delta_i / (N_i / P_i), P_i^{-1}'s row read from memory
            double q[D];
            const double* Qr = Pinv + ((b % sPi) * M + m) * D * D + (long long)ir * D;
#pragma unroll
            for (int j = 0; j < D; ++j) q[j] = Qr[j];
            dl = fl_row_times(q, row ? dl : 0.0, i, ex) / nv;
        }
#else
        if (local_correction) dl = dl / nv;
#endif
        if (row) {
            part[m * D + i] = w * dl;
            if (t == t1 - 1) {
                if (adagrad) Nout[(b * M + m) * D + i] = nv;
                else if (i == 0) Nout[b * M + m] = nv;
            }
        }
        __syncthreads();
        if (threadIdx.x < D) {
            double s = 0.0;
            for (int mm = 0; mm < M; ++mm) s += part[mm * D + threadIdx.x];
            xs[threadIdx.x] -= a * s;
            if (t == t1 - 1) Delta[b * D + threadIdx.x] = s;
        }
        __syncthreads();
    }
    if (threadIdx.x < D) xout[b * D + threadIdx.x] = xs[threadIdx.x];
}
"""

_KERNELS: dict = {}

NOISE_CHUNK = 8     # the local runs draw the noise of up to this many steps at once (1: step by step; benchmarks)
EXCHANGE = True     # the local runs exchange coordinates through shared memory (False: by warp shuffles; benchmarks)
MAX_REGISTERS = None   # NVRTC's --maxrregcount for the local-run kernels (None: the compiler's choice; benchmarks)
FUSED_PRODUCTS = True  # the local runs' products H_i y and F_i z as fused multiply-adds with every noise version
                       # (False: unfused under versions 2 and 3, whose kernels are compiled with --fmad=false; benchmarks)


def noise_chunk(tau_max: int) -> int:
    """Steps whose noise the local runs draw at once: ``tau_max`` in equal chunks of at most ``NOISE_CHUNK``."""
    parts = -(-int(tau_max) // NOISE_CHUNK)
    return -(-int(tau_max) // parts)


def noise_code(version: int) -> tuple[str, str, tuple]:
    """``(source, function, options)`` of keyed normal noise ``version`` for a kernel: version 1 is ``fl_normal`` of
    ``_DEVICE_CODE`` (the device's ``log`` and ``cos``); versions 2 and 3 add ``_PORTABLE_CODE`` and its
    ``fl_normal_v2`` or ``fl_normal_v3``, compiled with ``--fmad=false`` (no multiply-add fused, so the NumPy path's
    bits)."""
    if version in (2, 3):
        return _DEVICE_CODE + _PORTABLE_CODE, f"fl_normal_v{version}", ("--fmad=false",)
    return _DEVICE_CODE, "fl_normal", ()


def keyed_normal(version: int = 1):
    """The elementwise kernel ``(raw uint64 h, uint64 n) -> float64 z`` of keyed normal noise ``version``
    (``KeyedStream(version=...)``): output ``i`` has key hash ``h[i / n]`` and counter ``i % n``."""
    key = ("normal", version)
    if key not in _KERNELS:
        import cupy  # noqa: PLC0415

        code, fn, options = noise_code(version)
        _KERNELS[key] = cupy.ElementwiseKernel(
            "raw uint64 h, uint64 n", "float64 z", f"z = {fn}(h[i / n], i % n);", f"fltheory_keyed_normal_v{version}",
            preamble=code, options=options)
    return _KERNELS[key]


def _width(d: int) -> int:
    """Lanes per client or configuration: the power of two at least ``d``."""
    return 1 << max(0, (d - 1).bit_length())


def _client_kernel(name: str, d: int, noise: int, version: int = 1, tau_max: int = 1, precond: bool = False):
    """The local-run kernel ``name`` (``fl_local_runs`` or ``fl_fedopt_rounds``) for dimension ``d``, noise mode
    ``noise`` (0 none, 1 diagonal factor, 2 dense factor), keyed noise ``version``, ``tau_max`` local steps (which
    set the steps whose noise is drawn at once) and fixed preconditioners or not, compiled on first use."""
    chunk = noise_chunk(tau_max) if noise else 1
    key = (name, d, noise, version if noise else 0, chunk, EXCHANGE, MAX_REGISTERS, FUSED_PRODUCTS, bool(precond))
    if key not in _KERNELS:
        import cupy  # noqa: PLC0415

        body = _LOCAL_RUNS if name == "fl_local_runs" else _ROUNDS
        W = _width(d)
        code, fn, options = noise_code(version if noise else 1)
        head = (f"#define D {d}\n#define W {W}\n#define NOISE {noise}\n#define FL_CHUNK {chunk}\n"
                f"#define EXCHANGE {int(EXCHANGE)}\n#define FUSED_PRODUCTS {int(FUSED_PRODUCTS)}\n"
                f"#define PRECOND {int(bool(precond))}\n"
                f"#define NOISE_VERSION {version if noise else 1}\n#define FL_NORMAL {fn}\n")
        if MAX_REGISTERS:
            options = options + (f"--maxrregcount={int(MAX_REGISTERS)}",)
        _KERNELS[key] = (cupy.RawKernel(head + code + _LOCAL_RUN + body, name, options=options), W)
    return _KERNELS[key]


def kernel_attributes(name: str, d: int, noise: int, version: int = 1, tau_max: int = 1, precond: bool = False) -> dict:
    """Registers per thread, local (spilled) bytes per thread and the like of a compiled local-run kernel, for
    benchmarks: CuPy's ``RawKernel.attributes``."""
    return dict(_client_kernel(name, d, noise, version, tau_max, precond)[0].attributes)


def noise_operand(xp, factor, batch, M, d, diag=None):
    """``(mode, array, rows)`` for the kernels' noise (``rows``: see :func:`_flat`): mode 0 without noise (neither ``factor`` nor ``diag``);
    1 with a diagonal factor (every off-diagonal entry zero), passed as its ``(M, d)`` diagonals (``diag`` when the
    caller knows them: then ``factor`` may be None, the dense matrix never built); 2 with a dense factor
    ``(M, d, d)``."""
    import cupy  # noqa: PLC0415

    if diag is not None:
        return (1,) + _flat(xp, diag, batch, (M, d))
    if factor is None:
        return 0, cupy.zeros((1,)), 1
    if bool(xp.all(factor == factor * xp.eye(d))):   # off-diagonal zero: n_i = f_ii z_i, the same bits as F z
        diag = cupy.ascontiguousarray(cupy.diagonal(factor, axis1=-2, axis2=-1))
        return (1,) + _flat(xp, diag, batch, (M, d))
    return (2,) + _flat(xp, factor, batch, (M, d, d))


def rounds_fit(M: int, d: int) -> bool:
    """Whether one block holds a configuration's clients (``M`` groups of lanes, whole warps, at most 1024)."""
    return RoundsKernel.threads_for(M, _width(d)) <= 1024


def _flat(xp, a, batch, tail):
    """``(rows, n)``: ``a`` (batch axes, then ``tail``) as a C-contiguous array of ``n`` rows of shape ``tail``,
    configuration ``b`` of the batch (flattened in C order) reading row ``b % n``.  ``n`` is 1 where one value
    serves every configuration; where ``a``'s batch axes (leading 1s aside) are the batch's trailing ones (a
    federation under a sweep of step sizes: ``H_i`` of shape ``(F, M, d, d)`` in a batch ``(S, F)``) its rows are
    not copied for the other axes; otherwise ``a`` is broadcast to the whole batch."""
    import cupy  # noqa: PLC0415

    a = distinct(a)    # a broadcast view (client ids for every configuration): its distinct rows once
    lead = tuple(a.shape[:max(a.ndim - len(tail), 0)])   # an operand with fewer axes than the tail has no batch axes
    a = xp.broadcast_to(a, lead + tuple(tail))     # a tail of ones (eta of shape (..., 1)) to its length
    n = int(np.prod(lead))
    if n == 1:
        return cupy.ascontiguousarray(xp.reshape(a, (1,) + tuple(tail))), 1
    core, batch = lead, tuple(batch)
    while core and core[0] == 1:
        core = core[1:]
    if batch[len(batch) - len(core):] == core:
        return cupy.ascontiguousarray(xp.reshape(a, (n,) + tuple(tail))), n
    full = xp.broadcast_to(a, batch + tuple(tail))
    return cupy.ascontiguousarray(xp.reshape(full, (-1,) + tuple(tail))), int(np.prod(batch))


def _client_operands(xp, *, H, x_opt, factor, factor_diag, eta, tau, config, client_ids, batch, M, d, precond=None,
                     precond_inv=None):
    """``(mode, client, keys)``: the noise mode and the flattened operands both local-run kernels take, in their
    order: ``client`` = (H, sH, x_opt, sX, F, sF, eta, sE, tau, sT, P, sP, P^-1, sPi), ``keys`` = (config, client
    ids, sC); ``sX`` and the like are the operands' numbers of rows, configuration ``b`` reading row ``b % sX`` (see
    :func:`_flat`).  Without ``precond`` the kernels read no ``P`` (``H`` stands in)."""
    import cupy  # noqa: PLC0415

    B = int(np.prod(batch)) if batch else 1
    mode, Ff, sF = noise_operand(xp, factor, batch, M, d, factor_diag)
    Hf, sH = _flat(xp, H, batch, (M, d, d))
    xof, sX = _flat(xp, x_opt, batch, (M, d))
    ef, sE = _flat(xp, eta, batch, (M,))
    tf, sT = _flat(xp, xp.astype(tau, xp.int64), batch, (M,))
    cf = cupy.ascontiguousarray(xp.reshape(xp.broadcast_to(xp.astype(config, xp.int64), tuple(batch)), (B,)))
    idf, sC = _flat(xp, xp.astype(client_ids, xp.int64), batch, (M,))
    Pf, sP = (Hf, 1) if precond is None else _flat(xp, precond, batch, (M, d, d))
    Pif, sPi = (Hf, 1) if precond_inv is None else _flat(xp, precond_inv, batch, (M, d, d))
    client = (Hf, np.int64(sH), xof, np.int64(sX), Ff, np.int64(sF), ef, np.int64(sE), tf, np.int64(sT),
              Pf, np.int64(sP), Pif, np.int64(sPi))
    return mode, client, (cf, idf, np.int64(sC))


def local_runs(*, xp, x, H, x_opt, factor, eta, tau, tau_max, config, client_ids, batch, M, d, base, round0,
               adagrad, v0, eps, exact_n, version=1, factor_diag=None, precond=None):
    """``(delta, N)`` of one round's local runs for every configuration and client (see the module docstring):
    ``delta`` ``batch + (M, d)``; ``N`` ``batch + (M, d)`` for AdaGrad, ``batch + (M, 1)`` for SGD and for fixed
    preconditioners ``precond`` (``batch + (M, d, d)``; then ``N_i`` is that number times ``P_i``)."""
    import cupy  # noqa: PLC0415

    B = int(np.prod(batch)) if batch else 1
    mode, client, keys = _client_operands(xp, H=H, x_opt=x_opt, factor=factor, factor_diag=factor_diag, eta=eta,
                                          tau=tau, config=config, client_ids=client_ids, batch=batch, M=M, d=d,
                                          precond=precond)
    kernel, W = _client_kernel("fl_local_runs", d, mode, version, tau_max, precond is not None)
    xf = cupy.ascontiguousarray(xp.reshape(xp.broadcast_to(x, tuple(batch) + (d,)), (B, d)))
    delta = cupy.empty((B, M, d))
    N = cupy.empty((B, M, d) if adagrad else (B, M))
    threads = B * M * W
    block = 256
    kernel(((threads + block - 1) // block,), (block,),
           (xf,) + client + keys + (np.uint64(base), np.uint64(round0), np.int32(tau_max), np.int32(adagrad),
                                    np.float64(v0), np.float64(eps), np.int32(exact_n), delta, N, np.int64(B * M),
                                    np.int32(M)), shared_mem=block * 8 if EXCHANGE else 0)
    delta = xp.reshape(delta, tuple(batch) + (M, d))
    N = xp.reshape(N, tuple(batch) + ((M, d) if adagrad else (M, 1)))
    return delta, N


class RoundsKernel:
    """FedOpt's rounds with the GD server on quadratic clients, ``t0 .. t1 - 1`` per call, as one kernel (see
    ``_ROUNDS``): the operands are flattened once, each call runs a stretch of rounds between two recorded models.

    ``omega`` (batch + (M,)) are the aggregation weights of every round (full participation), ``alpha`` the server
    rate (batch axes), ``local_correction`` divides each ``Delta_i`` by ``N_i`` (with fixed preconditioners
    ``precond``, ``N_i = c_i P_i``: ``P_i^{-1} Delta_i / c_i`` with ``precond_inv``)."""

    def __init__(self, *, xp, H, x_opt, factor, eta, tau, tau_max, omega, alpha, config, client_ids, batch, M, d,
                 base, step_key, adagrad, v0, eps, exact_n, local_correction, version=1, factor_diag=None,
                 precond=None, precond_inv=None):
        import cupy  # noqa: PLC0415

        self.xp, self.batch, self.M, self.d = xp, tuple(batch), M, d
        self.B = int(np.prod(batch)) if batch else 1
        mode, client, keys = _client_operands(xp, H=H, x_opt=x_opt, factor=factor, factor_diag=factor_diag, eta=eta,
                                              tau=tau, config=config, client_ids=client_ids, batch=batch, M=M, d=d,
                                              precond=precond, precond_inv=precond_inv)
        self.kernel, W = _client_kernel("fl_fedopt_rounds", d, mode, version, tau_max, precond is not None)
        self.shared = (M * d + d + (M * d + d) % 2 + (self.threads_for(M, W) if EXCHANGE else 0)) * 8
        self.threads = self.threads_for(M, W)
        of, sO = _flat(xp, omega, batch, (M,))
        af, sA = _flat(xp, alpha, batch, ())
        self.adagrad = bool(adagrad)
        self.Delta = cupy.empty((self.B, d))
        self.N = cupy.empty((self.B, M, d) if adagrad else (self.B, M))
        self.operands = client + (of, np.int64(sO), af, np.int64(sA)) + keys + (np.uint64(base), np.uint64(step_key))
        self.tail = (np.int32(tau_max), np.int32(adagrad), np.float64(v0), np.float64(eps), np.int32(exact_n),
                     np.int32(local_correction), self.Delta, self.N, np.int32(M))

    @staticmethod
    def threads_for(M: int, W: int) -> int:
        """Threads per block: the ``M`` groups of ``W`` lanes, padded to whole warps."""
        return -(-M * W // 32) * 32

    def __call__(self, x, t0: int, t1: int):
        """The global model after rounds ``t0 .. t1 - 1`` from ``x`` (batch + (d,)), a new array."""
        import cupy  # noqa: PLC0415

        xin = cupy.ascontiguousarray(self.xp.reshape(x, (self.B, self.d)))
        xout = cupy.empty((self.B, self.d))
        self.kernel((self.B,), (self.threads,), (xin, xout) + self.operands + (np.int64(t0), np.int64(t1))
                    + self.tail, shared_mem=self.shared)
        return self.xp.reshape(xout, self.batch + (self.d,))

    def last_round(self):
        """``(Delta, N)`` of the last round run: ``Delta`` batch + (d,), ``N`` batch + (M, d) or (M, 1)."""
        N = self.xp.reshape(self.N, self.batch + ((self.M, self.d) if self.adagrad else (self.M, 1)))
        return self.xp.reshape(self.Delta, self.batch + (self.d,)), N
