"""A stand-in for the part of CuPy that :mod:`fltheory._cuda` uses, running the CUDA C text on the host.

Each ``RawKernel`` source is compiled by the host's C++ compiler (C++20, ``-ffp-contract=off``: no multiply-add is
fused, as ``--fmad=false`` asks of NVRTC) with a header that emulates what the kernels use: every thread of a block
is a POSIX thread with its own ``threadIdx``; ``__shfl_sync`` / ``__shfl_xor_sync`` exchange values through a slot
per thread between two barriers of the whole block, and ``__syncthreads`` and ``__syncwarp`` are one barrier.  That is exact for the
kernels of ``_cuda`` because their control flow is the same on every thread of a block at each of those points
(the local-run loop runs ``tau_max`` steps on every lane).  Blocks run one after another.  The device's ``log``
and ``cos`` are the host's (version 1 of the noise differs from NumPy's in the last places; versions 2 and 3 use
basic operations only and give NumPy's bits).

Shared memory is filled with a NaN pattern before each block: a read past the size the launch asks for gives NaN,
a write past it is an error after the block.  A barrier that waits 20 s (threads that diverged at a shuffle or a
barrier) is an error instead of a hang.

So the tests run the kernels' C text, their launch arguments and ``_cuda``'s Python wrappers on a CPU.  What it
cannot see, and a GPU run must: NVRTC's compilation and the device's math functions; shuffle masks (ignored);
the alignment of two-double loads (x86 loads any address); memory ordering and races that a later shuffle hides
(a shuffle is a barrier here, a missing ``__syncwarp`` before a shared-memory write shows only where no shuffle
comes between); races between blocks (they run one after another); and the speed.
"""
from __future__ import annotations

import ctypes
import hashlib
import re
import shutil
import subprocess
import sys
import tempfile
import types
from pathlib import Path

import numpy as np

COMPILER = shutil.which("g++") or shutil.which("c++")

_HEADER = r"""
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
namespace std {}
using namespace std;
#define __device__
#define __forceinline__ inline
#define __global__
#define __fma_rn(a, b, c) fma((a), (b), (c))
struct double2 { double x, y; };
struct fl_dim3 { unsigned x, y, z; };
static __thread fl_dim3 threadIdx, blockIdx;
static fl_dim3 blockDim, gridDim;
// a barrier of the block's threads that gives up after 20 s (divergent shuffles or barriers would hang): fl_error 1
static int fl_error = 0, fl_n = 0, fl_count = 0;
static unsigned long fl_gen = 0;
static pthread_mutex_t fl_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t fl_cond = PTHREAD_COND_INITIALIZER;
static void fl_barrier() {
    pthread_mutex_lock(&fl_mutex);
    if (fl_error) { pthread_mutex_unlock(&fl_mutex); return; }   // after a time-out: run to the end, report it
    unsigned long g = fl_gen;
    if (++fl_count == fl_n) {
        fl_count = 0; ++fl_gen; pthread_cond_broadcast(&fl_cond);
    } else {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 20;
        while (fl_gen == g)
            if (pthread_cond_timedwait(&fl_cond, &fl_mutex, &ts) == ETIMEDOUT && fl_gen == g) {
                fl_error = 1; fl_count = 0; ++fl_gen; pthread_cond_broadcast(&fl_cond);
            }
    }
    pthread_mutex_unlock(&fl_mutex);
}
static unsigned long long fl_slots[1024];
// shared memory: filled with a NaN pattern before each block, so that reading past the size the launch asked for
// gives NaN, and writing past it is found after the block (fl_error 2)
static const unsigned long long FL_GUARD = 0x7ff4deadbeef0000ull;
static double fl_smem[1 << 16];
template <class T> T __shfl_sync(unsigned, T v, int src, int width = 32) {
    unsigned long long b = 0;
    memcpy(&b, &v, sizeof(T));
    int tid = threadIdx.x, start = tid - (tid % 32) % width;
    fl_slots[tid] = b;
    fl_barrier();
    unsigned long long r = fl_slots[start + ((src % width) + width) % width];
    fl_barrier();
    T out;
    memcpy(&out, &r, sizeof(T));
    return out;
}
template <class T> T __shfl_xor_sync(unsigned m, T v, int o, int width = 32) {
    return __shfl_sync(m, v, ((int)(threadIdx.x % 32) % width) ^ o, width);
}
inline void __syncthreads() { fl_barrier(); }
inline void __syncwarp(unsigned = 0) { fl_barrier(); }
inline double __longlong_as_double(long long v) { double d; memcpy(&d, &v, 8); return d; }
"""

_CTYPES = {"double*": ctypes.c_void_p, "const double*": ctypes.c_void_p, "long long*": ctypes.c_void_p,
           "const long long*": ctypes.c_void_p, "long long": ctypes.c_longlong, "int": ctypes.c_int,
           "unsigned long long": ctypes.c_ulonglong, "double": ctypes.c_double}
_CACHE: dict = {}
_DIR = Path(tempfile.mkdtemp(prefix="fl-host-cuda-"))


def _parameters(code: str, name: str):
    """``[(type, name), ...]`` of the ``extern "C" __global__`` function ``name`` in ``code``."""
    m = re.search(r'extern "C" __global__ void ' + re.escape(name) + r"\s*\((.*?)\)\s*\{", code, re.S)
    out = []
    for p in " ".join(m.group(1).split()).split(","):
        p = p.strip()
        typ, arg = p.rsplit(" ", 1)
        if arg.startswith("*"):
            typ, arg = typ + "*", arg[1:]
        out.append((typ.replace(" *", "*"), arg))
    return out


def _library(code: str, name: str, options) -> tuple:
    key = hashlib.sha256((code + name + repr(options)).encode()).hexdigest()[:20]
    if key in _CACHE:
        return _CACHE[key]
    params = _parameters(code, name)
    decl = ", ".join(f"{t} {a}" for t, a in params)
    names = ", ".join(a for _, a in params)
    body = code.replace("extern __shared__ double smem[];", "double* smem = fl_smem;")
    members = "".join(f"    {t} {a};\n" for t, a in params)
    stores = "".join(f"    fl_args.{a} = {a};\n" for _, a in params)
    passed = ", ".join(f"fl_args.{a}" for _, a in params)
    launcher = f"""
struct fl_args_t {{
{members}}};
static fl_args_t fl_args;
struct fl_task {{ int t, b; }};
static fl_task fl_tasks[1024];
static pthread_t fl_pool[1024];
static void* fl_thread(void* p) {{
    const fl_task* k = (const fl_task*)p;
    threadIdx.x = k->t;
    blockIdx.x = k->b;
    {name}({passed});
    return nullptr;
}}
extern "C" int fl_launch(int blocks, int threads, int smem_doubles, {decl}) {{
{stores}    blockDim.x = threads;
    gridDim.x = blocks;
    fl_error = 0;
    for (int b = 0; b < blocks && !fl_error; ++b) {{
        for (int k = 0; k < (1 << 16); ++k) memcpy(&fl_smem[k], &FL_GUARD, 8);
        fl_n = threads;
        fl_count = 0;
        for (int t = 0; t < threads; ++t) {{
            fl_tasks[t].t = t;
            fl_tasks[t].b = b;
            pthread_create(&fl_pool[t], nullptr, fl_thread, &fl_tasks[t]);
        }}
        for (int t = 0; t < threads; ++t) pthread_join(fl_pool[t], nullptr);
        for (int k = smem_doubles; k < (1 << 16); ++k)
            if (memcmp(&fl_smem[k], &FL_GUARD, 8)) fl_error = 2;
    }}
    return fl_error;
}}
"""
    src = _DIR / f"{name}_{key}.cpp"
    src.write_text(_HEADER + body + launcher)
    lib = src.with_suffix(".so")
    flags = ["-std=c++20", "-O0", "-ffp-contract=off", "-fno-fast-math", "-shared", "-fPIC", "-pthread"]
    run = subprocess.run([COMPILER, *flags, "-o", str(lib), str(src)], capture_output=True, text=True)
    if run.returncode:
        raise RuntimeError(f"host compilation of {name} failed:\n{run.stderr[:4000]}")
    fn = ctypes.CDLL(str(lib)).fl_launch
    fn.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int] + [_CTYPES[t] for t, _ in params]
    fn.restype = ctypes.c_int
    _CACHE[key] = (fn, params)
    return _CACHE[key]


class RawKernel:
    """``cupy.RawKernel(code, name, options=...)`` run on the host (see the module docstring)."""

    def __init__(self, code, name, options=()):
        self.code, self.name, self.options = code, name, tuple(options)
        if any(o not in ("--fmad=false",) for o in self.options):
            raise ValueError(f"option the host stand-in does not know: {self.options}")

    @property
    def attributes(self):
        return {}

    def __call__(self, grid, block, args, shared_mem=0):
        fn, params = _library(self.code, self.name, self.options)
        if len(args) != len(params):
            raise TypeError(f"{self.name} takes {len(params)} arguments; got {len(args)}")
        keep, cargs = [], []
        for (typ, arg), value in zip(params, args):
            if typ.endswith("*"):
                want = np.float64 if "double" in typ else np.int64
                if not (isinstance(value, np.ndarray) and value.dtype == want and value.flags.c_contiguous):
                    raise TypeError(f"{self.name}: {arg} must be a C-contiguous {np.dtype(want)} array; got "
                                    f"{type(value).__name__} {getattr(value, 'dtype', '')}")
                keep.append(value)
                cargs.append(value.ctypes.data)
            else:
                cargs.append(value.item() if hasattr(value, "item") else value)
        if shared_mem > 8 * (1 << 16):
            raise ValueError("shared memory over the stand-in's 512 KiB")
        error = fn(int(grid[0]), int(block[0]), int(shared_mem) // 8, *cargs)
        if error == 1:
            raise RuntimeError(f"{self.name}: a barrier or shuffle waited 20 s (threads of a block diverged)")
        if error == 2:
            raise RuntimeError(f"{self.name}: a thread wrote past the {shared_mem} bytes of shared memory asked for")


def module():
    """A module object to put in ``sys.modules["cupy"]`` while ``_cuda``'s array-level functions run on NumPy."""
    m = types.ModuleType("cupy")
    m.RawKernel = RawKernel
    for name in ("ascontiguousarray", "empty", "zeros", "diagonal", "asarray"):
        setattr(m, name, getattr(np, name))
    m.__version__ = "host stand-in"
    return m


def install(monkeypatch):
    """Put the stand-in in place of CuPy for one test (``monkeypatch`` undoes it) and give ``_cuda`` a fresh cache
    of compiled kernels; returns the ``_cuda`` module."""
    from fltheory import _cuda  # noqa: PLC0415

    monkeypatch.setitem(sys.modules, "cupy", module())
    monkeypatch.setattr(_cuda, "_KERNELS", {})
    return _cuda
