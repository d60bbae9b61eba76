"""CuPy kernels of closed forms, compiled on first use (imported only where CuPy arrays are seen); the shared
machinery (the kernel cache, operand flattening, lanes per client) is :mod:`fltheory._cuda`'s.

* :func:`fixed_points`: Theorem 2's closed-form fixed point of FedOpt (no correction, ``P_i`` diagonal or none,
  ``d <= 16``) for every configuration at once: a configuration per group of ``W`` threads, thread ``i`` holding
  row ``i``; ``I - K_i`` by binary powering on ``D_n = I - (I - E)^n`` (no cancellation, as the array code), the
  client sums, and Gauss-Jordan elimination with partial pivoting on ``[C | c | I]`` for ``x``, ``C^{-1}`` (the
  condition number) and the residual, with the operand of each product in shared memory.
* :func:`statement_kernel`: a :class:`~fltheory.symbolic.Statement`'s expression as one elementwise kernel, its C
  source printed by SymPy (:func:`statement_source`; common subexpressions once), a paper's named quantity as a call
  of its C function (FedDelAvg's: :mod:`fltheory.papers.feddelavg.bounds_kernels`); a statement whose expression C
  cannot print has none.
"""
from __future__ import annotations

import numpy as np

from ._cuda import _KERNELS, _flat, _width

_FIXED_POINTS = r"""
// compose: row i of A + B - A B, with B in shared memory S (d x d, row-major), A's row in a
__device__ __forceinline__ void fl_compose_row(double* a, const double* S, const double* brow) {
    double out[D];
#pragma unroll
    for (int j = 0; j < D; ++j) {
        double p = 0.0;
#pragma unroll
        for (int k = 0; k < D; ++k) p += a[k] * S[k * D + j];
        out[j] = a[j] - p + brow[j];
    }
#pragma unroll
    for (int j = 0; j < D; ++j) a[j] = out[j];
}

extern "C" __global__ void fl_fixed_points(
    const double* H, long long sH, const double* xo, long long sX, const double* w, long long sW,
    const double* P, long long sP, int has_p, const double* eta, long long sE, const long long* tau, long long sT,
    double* C, double* c, double* x, double* cond, double* res, long long B, int M)
{
    extern __shared__ double smem[];
    const int groups = blockDim.x / W;
    const int g = threadIdx.x / W, i = threadIdx.x % W;
    long long b = (long long)blockIdx.x * groups + g;
    const bool live = b < B;
    if (!live) b = B - 1;                       // the group still runs (its lanes shuffle), writes nothing
    const bool row = i < D;
    const int ir = row ? i : 0;
    const unsigned mask = (W == 32) ? 0xffffffffu : (((1u << W) - 1u) << ((threadIdx.x % 32) / W * W));
    double* S = smem + (long long)g * (D * D + D);   // a d x d operand, then d numbers
    double crow[D], ci = 0.0;
#pragma unroll
    for (int j = 0; j < D; ++j) crow[j] = 0.0;
    for (int m = 0; m < M; ++m) {
        const long long cm = (long long)m;
        double e = eta[(b % sE) * M + cm];
        if (has_p) e *= P[((b % sP) * M + cm) * D + ir];
        const double* Hr = H + ((b % sH) * M + cm) * D * D + ir * D;
        double base[D], r[D];
#pragma unroll
        for (int j = 0; j < D; ++j) { base[j] = e * Hr[j]; r[j] = 0.0; }
        long long t = tau[(b % sT) * M + cm];
        bool have = false;
        while (t) {
            __syncwarp(mask);
#pragma unroll
            for (int j = 0; j < D; ++j) if (row) S[ir * D + j] = base[j];
            __syncwarp(mask);
            if (t & 1) {
                if (!have) {
#pragma unroll
                    for (int j = 0; j < D; ++j) r[j] = base[j];
                    have = true;
                } else {
                    fl_compose_row(r, S, base);
                }
            }
            t >>= 1;
            if (t) {
                double b2[D];
#pragma unroll
                for (int j = 0; j < D; ++j) b2[j] = base[j];
                fl_compose_row(base, S, b2);
            }
        }
        const double wm = w[(b % sW) * M + cm];
        const double* xr = xo + ((b % sX) * M + cm) * D;
        double rx = 0.0;
#pragma unroll
        for (int j = 0; j < D; ++j) { crow[j] += wm * r[j]; rx += r[j] * xr[j]; }
        ci += wm * rx;
    }
    // C and c out, and into shared memory for the residual
    __syncwarp(mask);
    if (row) {
#pragma unroll
        for (int j = 0; j < D; ++j) S[ir * D + j] = crow[j];
        S[D * D + ir] = ci;
        if (live) {
#pragma unroll
            for (int j = 0; j < D; ++j) C[(b * D + ir) * D + j] = crow[j];
            c[b * D + ir] = ci;
        }
    }
    // ||C||_1: the largest column sum of |C|
    double norm1 = 0.0;
#pragma unroll
    for (int j = 0; j < D; ++j) {
        double v = row ? fabs(crow[j]) : 0.0;
        for (int o = W / 2; o > 0; o >>= 1) v += __shfl_xor_sync(mask, v, o, W);
        norm1 = fmax(norm1, v);
    }
    // Gauss-Jordan on [C | c | I] with partial pivoting; row i of the system lives in lane i
    double a[D], inv[D], rhs = ci;
#pragma unroll
    for (int j = 0; j < D; ++j) { a[j] = crow[j]; inv[j] = (row && j == i) ? 1.0 : 0.0; }
    for (int p = 0; p < D; ++p) {
        double mag = (row && i >= p) ? fabs(a[p]) : -1.0;
        int who = i;
        for (int o = W / 2; o > 0; o >>= 1) {
            double om = __shfl_xor_sync(mask, mag, o, W);
            int ow = __shfl_xor_sync(mask, who, o, W);
            if (om > mag || (om == mag && ow < who)) { mag = om; who = ow; }
        }
        const int src = (i == p) ? who : ((i == who) ? p : i);
#pragma unroll
        for (int j = 0; j < D; ++j) {
            a[j] = __shfl_sync(mask, a[j], src, W);
            inv[j] = __shfl_sync(mask, inv[j], src, W);
        }
        rhs = __shfl_sync(mask, rhs, src, W);
        const double piv = __shfl_sync(mask, a[p], p, W);
        const double f = (row && i != p) ? a[p] / piv : 0.0;
#pragma unroll
        for (int j = 0; j < D; ++j) {
            const double aj = __shfl_sync(mask, a[j], p, W);
            const double ij = __shfl_sync(mask, inv[j], p, W);
            a[j] -= f * aj;
            inv[j] -= f * ij;
        }
        const double rp = __shfl_sync(mask, rhs, p, W);
        rhs -= f * rp;
    }
    const double diag = a[ir];
    const double xi = rhs / diag;
    double invn = 0.0;
#pragma unroll
    for (int j = 0; j < D; ++j) {
        double v = row ? fabs(inv[j] / diag) : 0.0;
        for (int o = W / 2; o > 0; o >>= 1) v += __shfl_xor_sync(mask, v, o, W);
        invn = fmax(invn, v);
    }
    // the residual ||C x - c||
    __syncwarp(mask);
    double ri = 0.0;
#pragma unroll
    for (int j = 0; j < D; ++j) ri += S[ir * D + j] * __shfl_sync(mask, xi, j, W);
    ri = row ? ri - S[D * D + ir] : 0.0;
    double r2 = ri * ri;
    for (int o = W / 2; o > 0; o >>= 1) r2 += __shfl_xor_sync(mask, r2, o, W);
    if (live && row) x[b * D + ir] = xi;
    if (live && i == 0) { cond[b] = norm1 * invn; res[b] = sqrt(r2); }
}
"""

_STATEMENT_HELPERS = r"""
// Max and Min as NumPy evaluates them: NaN in, NaN out (C's fmax and fmin drop a NaN)
FL_FN double fl_max(double a, double b) { return (a != a || b != b) ? a + b : fmax(a, b); }
FL_FN double fl_min(double a, double b) { return (a != a || b != b) ? a + b : fmin(a, b); }
"""


def named_functions(*exprs) -> list:
    """The named quantities (SymPy functions with a ``c_name`` and ``c_source``, such as FedDelAvg's) in ``exprs``,
    in a fixed order."""
    found = {}
    for e in exprs:
        for f in e.find(lambda a: getattr(type(a), "c_name", None) is not None):
            found.setdefault(type(f).c_name, f)
    return [found[k] for k in sorted(found)]


def statement_preamble(host: bool = False, *exprs) -> str:
    """The definitions a statement's C source uses (``FL_INF``, ``FL_NAN``, ``fl_max``, ``fl_min``, and the C
    functions of the named quantities in ``exprs``): for CUDA, or with ``host=True`` for a C++ compiler on the host
    (the tests' harness), the same functions."""
    if host:
        head = "#include <cmath>\nusing namespace std;\n#define FL_FN inline\n#define FL_INF INFINITY\n#define FL_NAN NAN\n"
    else:
        head = ("#define FL_FN __device__ __forceinline__\n#define FL_INF __longlong_as_double(0x7ff0000000000000LL)\n"
                "#define FL_NAN __longlong_as_double(0x7ff8000000000000LL)\n")
    sources = dict.fromkeys(type(f).c_source for f in named_functions(*exprs))   # each library once, in order
    return head + _STATEMENT_HELPERS + "".join(sources)


def _printer():
    """SymPy's C99 printer with integers as doubles (no integer division, no ``pow(int, double)`` overload to
    choose), the constants spelled out (no ``M_SQRT2``: CUDA has no such macros), Max and Min propagating NaN as
    NumPy does, and anything it cannot print refused (``strict``)."""
    import sympy as sp  # noqa: PLC0415
    from sympy.printing.c import C99CodePrinter  # noqa: PLC0415

    class _StatementPrinter(C99CodePrinter):
        def _print_Integer(self, e):
            return f"{int(e)}.0"

        def _print_Infinity(self, e):
            return "FL_INF"

        def _print_NegativeInfinity(self, e):
            return "(-FL_INF)"

        def _print_NaN(self, e):
            return "FL_NAN"

        def _print_Exp1(self, e):
            return repr(float(sp.E))

        def _print_Pi(self, e):
            return repr(float(sp.pi))

        def _nested(self, fn, args):
            out = self._print(args[-1])
            for a in reversed(args[:-1]):
                out = f"{fn}({self._print(a)}, {out})"
            return out

        def _print_Max(self, e):
            return self._nested("fl_max", e.args)

        def _print_Min(self, e):
            return self._nested("fl_min", e.args)

        def _print_Function(self, e):
            # a named quantity of a paper: a call of its C function (the preamble defines it)
            name = getattr(type(e), "c_name", None)
            if name is not None:
                return f"{name}({', '.join(self._print(a) for a in e.args)})"
            return super()._print_Function(e)

    return _StatementPrinter({"strict": True, "math_macros": {}})


def statement_source(symbols, expr) -> str | None:
    """The C statements computing ``expr`` into ``out`` from the parameters ``p0, p1, ...`` (the ``symbols`` in
    order), common subexpressions as ``const double c0, c1, ...``; None where the printer cannot print ``expr``."""
    import sympy as sp  # noqa: PLC0415
    from sympy.printing.codeprinter import PrintMethodNotImplementedError  # noqa: PLC0415

    if not symbols:
        return None
    rename = {s: sp.Symbol(f"p{k}", real=True) for k, s in enumerate(symbols)}
    reps, (reduced,) = sp.cse(expr.xreplace(rename), symbols=sp.numbered_symbols("c"))
    printer = _printer()
    try:
        lines = [f"const double {c} = {printer.doprint(v)};" for c, v in reps]
        lines.append(f"out = {printer.doprint(reduced)};")
    except (PrintMethodNotImplementedError, ValueError):   # a function C lacks; a Piecewise without a default
        return None
    return "\n".join(lines)


def statement_kernel(symbols, expr, name: str):
    """``expr`` of ``symbols`` as a CuPy elementwise kernel of float64 arrays (broadcasting), or None where
    :func:`statement_source` has no C source for it."""
    body = statement_source(symbols, expr)
    if body is None:
        return None
    import cupy  # noqa: PLC0415

    ident = "fl_" + "".join(ch if ch.isalnum() else "_" for ch in name)
    params = ", ".join(f"float64 p{k}" for k in range(len(symbols)))
    # named quantities' stable forms are compiled without fused multiply-adds, as the host (and NumPy) computes them
    options = ("--fmad=false",) if named_functions(expr) else ()
    return cupy.ElementwiseKernel(params, "float64 out", body, ident, preamble=statement_preamble(False, expr),
                                  options=options)


def _fixed_points_kernel(d: int):
    key = ("fixed", d)
    if key not in _KERNELS:
        import cupy  # noqa: PLC0415

        W = _width(d)
        _KERNELS[key] = (cupy.RawKernel(f"#define D {d}\n#define W {W}\n" + _FIXED_POINTS, "fl_fixed_points"), W)
    return _KERNELS[key]


def fixed_points(*, xp, H, x_opt, weights, diagP, eta, tau, batch, M, d):
    """``(C, c, x, cond, res)`` of Theorem 2's fixed point, no correction (see the module docstring), for every
    configuration of ``batch``: ``C`` ``batch + (d, d)``, ``c`` and ``x`` ``batch + (d,)``, ``cond`` and ``res``
    ``batch``.  A singular system gives non-finite ``x`` (the caller refuses it)."""
    import cupy  # noqa: PLC0415

    kernel, W = _fixed_points_kernel(d)
    B = int(np.prod(batch)) if batch else 1
    Hf, sH = _flat(xp, H, batch, (M, d, d))
    xof, sX = _flat(xp, x_opt, batch, (M, d))
    wf, sW = _flat(xp, weights, batch, (M,))
    Pf, sP = (Hf, 1) if diagP is None else _flat(xp, diagP, batch, (M, d))
    ef, sE = _flat(xp, eta, batch, (M,))
    tf, sT = _flat(xp, xp.astype(tau, xp.int64), batch, (M,))
    C, c, x = cupy.empty((B, d, d)), cupy.empty((B, d)), cupy.empty((B, d))
    cond, res = cupy.empty((B,)), cupy.empty((B,))
    block = 128
    groups = block // W
    kernel(((B + groups - 1) // groups,), (block,),
           (Hf, np.int64(sH), xof, np.int64(sX), wf, np.int64(sW), Pf, np.int64(sP), np.int32(diagP is not None),
            ef, np.int64(sE), tf, np.int64(sT), C, c, x, cond, res, np.int64(B), np.int32(M)),
           shared_mem=groups * (d * d + d) * 8)
    tail = tuple(batch)
    return (xp.reshape(C, tail + (d, d)), xp.reshape(c, tail + (d,)), xp.reshape(x, tail + (d,)),
            xp.reshape(cond, tail), xp.reshape(res, tail))
