"""Array backends and keyed random streams.

The array namespace of every computation is taken from its inputs: NumPy arrays in, NumPy
arrays out; CuPy arrays in, CuPy arrays out; arrays of another array API namespace (such as
``array_api_strict``) in, arrays of that namespace out.  Detection goes through
``array-api-compat``: NumPy inputs get ``numpy`` itself (NumPy >= 2 has the standard's names
in its main namespace, and the NumPy paths keep their own fast forms: ``einsum``, ``out=``,
in-place blocks), CuPy inputs get ``array_api_compat.cupy`` (CuPy plus the standard's names it
lacks), other inputs their own namespace.  CuPy is imported only when a CuPy array is seen or
the backend is asked for by name.

What runs on every namespace (only the array API standard is used; the test suite runs these
paths on ``array_api_strict``, which has the standard's names and nothing else): keyed streams;
the federations of :mod:`fltheory.problems` (quadratic, logistic, pseudo-Huber, separable cosine,
linear: gradients, losses, constants); the doors of :mod:`fltheory.validation`; affine maps
(:mod:`fltheory.linear`); the register file of :mod:`fltheory.delayed_registers` (``RegisterMoments``),
the schedule engine of :mod:`fltheory.delayed` (``schedule_moments``,
``random_participation_moments``, step and period maps) and its simulators
in :mod:`fltheory.delayed_simulation` (``simulate_schedule``, ``simulate_schedule_general``); the vectorised evaluation of every
statement; the papers' batched simulators (FedOpt, FedDelAvg, AFL-DGA and its baselines: FedAvg, normalised
averaging, mini-batch and stale SGD, DGA; DeFedAvg's runs and TDMA's quadratic runs through the core) and their exact maps on quadratics (FedOpt's closed forms and
moments, FedDelAvg's period map, fixed point, exact trajectory, alpha* and exactly optimal alpha,
DeFedAvg's and TDMA's
exact moments through the core).  What the
standard lacks goes through one helper each here: batched products without ``einsum``
(:func:`mT`, :func:`matvec`, :func:`weighted_sum`, :func:`trace`, :func:`trace_product`),
gathers by integer arrays (:func:`gather`), and a general eigen-solver (:func:`eigvals`, solved on
the host by NumPy and sent back: neither CuPy nor the standard before 2025 has one).

NumPy (and CuPy through NumPy-compatible calls) only: the logistic federation's Hessian and its
reference minimiser (SciPy, on the host); FedDelAvg's structured period map for large ``M d``
(ARPACK); AFL-DGA's exact register program and diagnostics, TDMA's
lemma terms and DeFedAvg's assumption constants (host computations on one configuration);
plotting and the checks.

Devices.  Arrays are made on the device of the inputs: :func:`namespace` returns, for arrays on a device other
than their library's default (``array_api_strict.Device("device1")``, the GPU stand-in of the tests; a second
GPU), the namespace bound to that device (:func:`on_device`), whose ``asarray``, ``zeros``, ``arange`` ...
create there, so the batched paths never write a device.  Data leaves a device in one named way,
:func:`to_numpy`, and only for host work: the doors read host-side parameters (loop counts, delays, the step
size of a loop bound) through it; :func:`eigvals` solves on the host and sends the eigenvalues back through
the bound namespace; the logistic reference minimiser (SciPy), FedDelAvg's ARPACK period map and the checks
work on host copies.  Nothing calls ``np.asarray`` on a device array: ``array_api_strict`` on ``device1``
refuses it as CuPy does, and the test suite runs every batched path there.

On CuPy four paths run as kernels of their own (:mod:`fltheory._cuda`, compiled on first use): keyed normal
noise (one elementwise kernel), FedOpt on quadratic clients with client SGD, fixed preconditioners or AdaGrad (all
rounds in one kernel with the GD server and full participation, else one kernel per round), Theorem 2's closed-form
fixed points without correction (a configuration per group of threads), and statements (one elementwise kernel
each, a paper's named quantities as C functions of their stable forms, :mod:`fltheory._cuda_closed`); the other batched closed forms work through the batch in chunks sized by the GPU's
free memory.

Randomness is *keyed*: every draw is a pure function of ``(seed, purpose, configuration,
round, client, counter)`` computed with a SplitMix64-style hash on unsigned 64-bit integers.
Any round of any configuration and client regenerates without replaying history, a batch
gives the same numbers for a configuration whatever else is in the batch, and the same code
runs on the GPU.

Example
-------
>>> import numpy as np
>>> from fltheory.backend import KeyedStream
>>> s = KeyedStream(seed=7, purpose="noise")
>>> a = s.normal(config=np.arange(3)[:, None], round=0, client=np.arange(4)[None, :], size=(2,))
>>> a.shape
(3, 4, 2)
>>> b = s.normal(config=np.array([[2]]), round=0, client=np.array([[1]]), size=(2,))
>>> bool(np.all(a[2, 1] == b[0, 0]))
True
"""
from __future__ import annotations

import math
import zlib
from types import ModuleType
from typing import Any

import numpy as np

from .parallel import run_parts
from .validation import InputError, InputTypeError, shown

__all__ = [
    "namespace",
    "get_backend",
    "synchronize",
    "is_cupy",
    "is_array",
    "to_numpy",
    "on_device",
    "available_memory",
    "device_chunk",
    "device_of",
    "asarray",
    "copy_of",
    "dtype_kind",
    "mT",
    "matvec",
    "weighted_sum",
    "trace",
    "gather",
    "trace_product",
    "eigvals",
    "KeyedStream",
]


def is_cupy(x: Any) -> bool:
    """True when ``x`` is a CuPy array (without importing CuPy otherwise)."""
    mod = type(x).__module__
    return mod.startswith("cupy")


def is_array(x: Any) -> bool:
    """True for an array of any library the package takes (NumPy, CuPy, any namespace of the array API
    standard); False for numbers, NumPy scalars, text, lists and other objects."""
    return isinstance(x, np.ndarray) or is_cupy(x) or (hasattr(x, "__array_namespace__") and not isinstance(x, np.generic))


def get_backend(name: str) -> ModuleType:
    """The array namespace called ``name``: ``"numpy"``, ``"cupy"`` (``array_api_compat.cupy``, CuPy with the
    standard's names) or ``"array_api_strict"`` (the standard and nothing else, for tests); imported lazily.

    >>> get_backend("numpy").__name__
    'numpy'
    """
    if not isinstance(name, str):   # an array here would make the comparisons below ambiguous
        raise InputTypeError(f"name (the backend) must be 'numpy', 'cupy' or 'array_api_strict'; got {shown(name)} "
                             f"({type(name).__name__})")
    if name in ("numpy", "np"):
        return np
    if name in ("cupy", "cp"):
        try:
            import cupy  # noqa: F401, PLC0415 - lazy by design
        except ImportError as exc:  # pragma: no cover - depends on the machine
            raise ImportError(
                "backend 'cupy' was requested but CuPy is not installed; "
                "install the extra: pip install 'fltheory[gpu]'"
            ) from exc
        import array_api_compat.cupy as cupy_compat  # noqa: PLC0415  # pragma: no cover - GPU machines

        return cupy_compat  # pragma: no cover - GPU machines
    if name == "array_api_strict":
        try:
            import array_api_strict  # noqa: PLC0415
        except ImportError as exc:  # pragma: no cover - depends on the machine
            raise ImportError("backend 'array_api_strict' was requested but it is not installed; "
                              "pip install array-api-strict") from exc
        return array_api_strict
    raise InputError(f"name (the backend) must be 'numpy', 'cupy' or 'array_api_strict', got {name!r}")


def namespace(*arrays: Any, backend: str | None = None) -> ModuleType:
    """The array namespace for ``arrays``, bound to their device.

    Python scalars and ``None`` are ignored.  With ``backend`` given, that namespace is returned.
    NumPy arrays give ``numpy``, CuPy arrays ``array_api_compat.cupy``, other arrays of the array
    API standard their own namespace.  Arrays on a device other than their library's default device
    (``array_api_strict.Device("device1")``, a second GPU) give that namespace bound to the device
    (:func:`on_device`): every array it creates lands beside the inputs.  Mixing array libraries, or
    devices, is an error (no silent device transfer).
    """
    if backend is not None:
        return get_backend(backend)
    # only arrays choose the namespace; numbers, text, lists and other objects are left to the
    # validation layer, which names the parameter when they are not allowed
    arrays = tuple(a for a in arrays if is_array(a))
    if not arrays or all(isinstance(a, np.ndarray) for a in arrays):   # the common case, without the lookup
        return np
    from array_api_compat import array_namespace, is_cupy_namespace, is_numpy_namespace  # noqa: PLC0415
    from array_api_compat import device as _device  # noqa: PLC0415

    try:
        compat = array_namespace(*arrays)
    except TypeError as exc:
        raise InputTypeError(f"inputs mix array libraries: {sorted({type(a).__module__ for a in arrays})}") from exc
    if is_numpy_namespace(compat):
        return np
    xp = get_backend("cupy") if is_cupy_namespace(compat) else compat
    devices = []
    for a in arrays:
        d = _device(a)
        if d not in devices:
            devices.append(d)
    if len(devices) > 1:
        raise InputError(f"inputs lie on different devices ({', '.join(map(str, devices))}); move them to one "
                         "device first (no silent transfer)")
    return on_device(xp, devices[0])


# creation functions of the standard that take ``device=``; the ``*_like`` forms follow their argument
_CREATION = ("arange", "asarray", "empty", "eye", "full", "linspace", "ones", "zeros")
_BOUND: dict = {}


class _OnDevice(ModuleType):
    """An array namespace whose creation functions make arrays on one device (see :func:`on_device`)."""

    def __init__(self, xp: ModuleType, device: Any):
        super().__init__(xp.__name__, getattr(xp, "__doc__", None))
        self._xp, self._device = xp, device
        for name in _CREATION:
            if hasattr(xp, name):
                setattr(self, name, self._creator(getattr(xp, name), device))

    @staticmethod
    def _creator(f, device):
        def create(*args, **kwargs):
            kwargs.setdefault("device", device)
            return f(*args, **kwargs)

        create.__name__ = f.__name__
        create.__doc__ = f.__doc__
        return create

    def __getattr__(self, name: str) -> Any:
        return getattr(self._xp, name)

    def __dir__(self) -> list:
        return sorted(set(dir(self._xp)) | set(_CREATION))

    def __repr__(self) -> str:
        return f"<array namespace {self._xp.__name__} on {self._device}>"


def on_device(xp: ModuleType, device: Any) -> ModuleType:
    """Namespace ``xp`` with its arrays made on ``device``: ``xp`` itself when ``device`` is its default
    device, else one (cached) bound namespace per ``(xp, device)`` whose ``asarray``, ``zeros``, ``arange``
    ... default to ``device``.  :func:`namespace` returns it for arrays on that device, so code written
    against "the namespace of the inputs" creates its arrays beside them.

    >>> import array_api_strict as strict
    >>> xp = on_device(strict, strict.Device("device1"))
    >>> xp.zeros(2).device == strict.Device("device1"), namespace(xp.zeros(2)) is xp
    (True, True)
    """
    if xp is np or isinstance(xp, _OnDevice):
        return xp
    try:
        default = xp.__array_namespace_info__().default_device()
    except AttributeError:   # pragma: no cover - a namespace without the inspection API
        default = None
    if device is None or device == default:
        return xp
    key = (xp.__name__, str(device))
    if key not in _BOUND:
        _BOUND[key] = _OnDevice(xp, device)
    return _BOUND[key]


def device_of(xp: ModuleType) -> Any:
    """The device that namespace ``xp`` (from :func:`namespace` or :func:`on_device`) makes arrays on;
    ``None`` for a namespace's default device (NumPy: the CPU)."""
    return getattr(xp, "_device", None)


def _host_available() -> int:
    """Bytes of host memory available to new allocations (Linux ``MemAvailable``; elsewhere free pages)."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:   # pragma: no cover - not Linux
        pass
    try:   # pragma: no cover - not Linux
        import os  # noqa: PLC0415

        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):   # pragma: no cover - no way to ask
        return 8 * 2**30


def available_memory(xp: ModuleType | None = None) -> tuple[int, str]:
    """``(bytes, where)``: the memory free for new arrays of namespace ``xp`` and the device's name.

    CuPy: the GPU's free memory plus what CuPy's memory pool holds unused (``"GPU 0 (NVIDIA H200)"``);
    every other namespace (NumPy, ``array_api_strict`` on any of its devices): the host's available memory.

    >>> free, where = available_memory()
    >>> free > 0, where
    (True, 'host memory')
    """
    if xp is not None and "cupy" in xp.__name__:   # pragma: no cover - GPU machines
        import cupy  # noqa: PLC0415

        dev = cupy.cuda.Device()
        free = int(dev.mem_info[0]) + int(cupy.get_default_memory_pool().free_bytes())
        name = cupy.cuda.runtime.getDeviceProperties(dev.id)["name"]
        name = name.decode() if isinstance(name, bytes) else str(name)
        return free, f"GPU {dev.id} ({name})"
    return _host_available(), "host memory"


def device_chunk(xp: ModuleType, numbers_per_item: int, temporaries: int = 16) -> int:
    """How many items of ``numbers_per_item`` float64 numbers one chunk of a batched computation on namespace
    ``xp``'s device may hold, when it makes about ``temporaries`` arrays of the chunk's size: a device runs each
    operation on a chunk as one kernel, so chunks there are as large as its free memory allows (at least 1)."""
    free, _ = available_memory(xp)
    return max(1, int(free * 0.5) // (8 * temporaries * max(1, int(numbers_per_item))))


def synchronize(xp: ModuleType) -> None:
    """Wait until the device of namespace ``xp`` has finished its queued work (CuPy; nothing elsewhere), for timings."""
    if "cupy" in xp.__name__:   # pragma: no cover - GPU machines
        import cupy  # noqa: PLC0415

        cupy.cuda.Stream.null.synchronize()


def dtype_kind(x: Any, xp: ModuleType | None = None) -> str:
    """NumPy's one-letter kind (``b i u f c``; ``O`` for anything else) of the dtype of array ``x``, for any
    namespace (the standard's dtypes have no ``.kind``)."""
    kind = getattr(x.dtype, "kind", None)
    if kind is not None:
        return kind
    xp = namespace(x) if xp is None else xp
    for name, code in (("bool", "b"), ("signed integer", "i"), ("unsigned integer", "u"),
                       ("real floating", "f"), ("complex floating", "c")):
        if xp.isdtype(x.dtype, name):
            return code
    return "O"


def asarray(x: Any, xp: ModuleType = np, dtype: Any = None) -> Any:
    """``x`` as an array of namespace ``xp`` (float64 by default for non-integer input)."""
    if dtype is None:
        arr = xp.asarray(x)
        if xp is np:   # the hot case (every door): NumPy's own kind and method, no namespace lookup
            return arr.astype(np.float64, copy=False) if arr.dtype.kind == "f" else arr
        return xp.astype(arr, xp.float64, copy=False) if dtype_kind(arr, xp) == "f" else arr
    return xp.asarray(x, dtype=dtype)


def to_numpy(x: Any) -> np.ndarray:
    """A NumPy copy of ``x`` on the host: the one named way data leaves a device (CuPy: ``x.get()``; an array
    of the standard on another device: ``to_device`` to the CPU first; NumPy and host data: ``np.asarray``).

    >>> to_numpy([1.0, 2.0]).tolist()
    [1.0, 2.0]
    """
    if is_cupy(x):
        return x.get()
    if isinstance(x, np.ndarray) or not hasattr(x, "__array_namespace__") or isinstance(x, np.generic):
        return np.asarray(x)
    try:
        return np.asarray(x)
    except (RuntimeError, TypeError, ValueError, BufferError):   # not on the CPU: an explicit move
        from array_api_compat import array_namespace  # noqa: PLC0415

        info = array_namespace(x).__array_namespace_info__()
        cpu = [d for d in info.devices() if "cpu" in str(d).lower()]
        return np.asarray(x.to_device(cpu[0] if cpu else info.default_device()))


def copy_of(x: Any) -> Any:
    """A fresh, writable copy of array ``x``: NumPy's ``x.copy()`` (C order, whatever the strides of ``x``;
    ``asarray(x, copy=True)`` keeps their order, which a broadcast view makes odd), ``asarray(x, copy=True)``
    elsewhere."""
    if isinstance(x, np.ndarray):
        return x.copy()
    return namespace(x).asarray(x, copy=True)


# --------------------------------------------------------------------------------------
# what the batched paths need beyond the standard, in one place
# --------------------------------------------------------------------------------------
# On NumPy these keep ``einsum`` (fast, and the numbers the NumPy paths always gave); on every
# other namespace they are matrix products and broadcast-and-sum of the array API standard.
def mT(A: Any) -> Any:
    """The transpose of the last two axes (a batch of matrices)."""
    if isinstance(A, np.ndarray):
        return A.swapaxes(-1, -2)
    return namespace(A).matrix_transpose(A)


def matvec(A: Any, x: Any) -> Any:
    """``A x`` for batches: ``A`` ``(..., n, k)``, ``x`` ``(..., k)`` -> ``(..., n)`` (batch axes broadcast)."""
    if isinstance(A, np.ndarray) and isinstance(x, np.ndarray):
        return np.einsum("...ij,...j->...i", A, x)
    return (A @ x[..., None])[..., 0]


def weighted_sum(w: Any, T: Any, ndim: int = 1) -> Any:
    """``sum_m w[..., m] T[..., m, *rest]``: the axis of ``T`` before its last ``ndim`` axes is weighted by the
    last axis of ``w`` and summed (client averages: ``ndim=1`` for vectors, ``2`` for matrices).

    >>> import numpy as np
    >>> weighted_sum(np.array([0.25, 0.75]), np.array([[4.0, 0.0], [0.0, 4.0]])).tolist()
    [1.0, 3.0]
    """
    if isinstance(w, np.ndarray) and isinstance(T, np.ndarray):
        tail = "ijkl"[:ndim]
        return np.einsum(f"...m,...m{tail}->...{tail}", w, T)
    return namespace(w, T).sum(w[(...,) + (None,) * ndim] * T, axis=-(ndim + 1))


def trace(A: Any) -> Any:
    """The trace of a batch of square matrices ``(..., n, n)`` -> ``(...)``."""
    if isinstance(A, np.ndarray):
        return np.einsum("...ii->...", A)
    return namespace(A).linalg.trace(A)


def gather(A: Any, *index: Any) -> Any:
    """``A[i0, i1, ...]`` for integer index arrays (NumPy's or ``A``'s namespace) that broadcast against each
    other, one per leading axis of ``A`` (a gather over those axes).  Off NumPy it is the standard's ``take``
    on those axes flattened: the standard indexes by integer arrays only when every axis gets one.

    >>> import numpy as np
    >>> gather(np.arange(12.0).reshape(2, 3, 2), np.array([[0], [1]]), np.array([[2, 0], [1, 1]]))[..., 0].tolist()
    [[4.0, 0.0], [8.0, 8.0]]
    """
    if isinstance(A, np.ndarray):
        return A[index]
    xp = namespace(A)
    lead, rest = tuple(A.shape[:len(index)]), tuple(A.shape[len(index):])
    pos = None
    for size, i in zip(lead, index):
        i = xp.astype(xp.asarray(i), xp.int64)
        pos = i if pos is None else pos * size + i
    flat = xp.reshape(A, (math.prod(lead),) + rest)
    return xp.reshape(xp.take(flat, xp.reshape(pos, (-1,)), axis=0), tuple(pos.shape) + rest)


def trace_product(A: Any, B: Any) -> Any:
    """``tr(A B)`` for batches of square matrices (batch axes broadcast)."""
    if isinstance(A, np.ndarray) and isinstance(B, np.ndarray):
        return np.einsum("...ij,...ji->...", A, B)
    return namespace(A, B).sum(A * mT(B), axis=(-2, -1))


def eigvals(A: Any) -> Any:
    """Eigenvalues of a batch of general square matrices, in the namespace of ``A``.

    Neither the array API standard (before its 2025 revision) nor CuPy has a general eigen-solver: off NumPy
    the batch goes to the host, NumPy solves it, and the eigenvalues come back (the one host round trip of
    the batched paths).  Off NumPy the eigenvalues are always complex (NumPy returns real ones when every imaginary
    part is zero; the standard's ``real`` and ``imag`` take complex arrays only)."""
    if isinstance(A, np.ndarray):
        return np.linalg.eigvals(A)
    return namespace(A).asarray(np.asarray(np.linalg.eigvals(to_numpy(A)), dtype=np.complex128))


# --------------------------------------------------------------------------------------
# keyed random streams
# --------------------------------------------------------------------------------------
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def _constants(xp):
    """The hash's constants (golden, M1, M2) and shifts (11, 27, 30, 31) as uint64 scalars of namespace ``xp``
    (NumPy scalars on NumPy; 0-d arrays elsewhere: the standard mixes arrays with arrays or Python scalars)."""
    if xp is np:
        return _GOLDEN, _M1, _M2, np.uint64(11), np.uint64(27), np.uint64(30), np.uint64(31)
    return tuple(xp.asarray(int(c), dtype=xp.uint64) for c in (_GOLDEN, _M1, _M2, 11, 27, 30, 31))


def _mix(z, xp=np):
    """SplitMix64 finaliser (a bijection of uint64; wraps modulo 2**64)."""
    _, m1, m2, _, s27, s30, s31 = _constants(xp)
    z = (z ^ (z >> s30)) * m1
    z = (z ^ (z >> s27)) * m2
    return z ^ (z >> s31)


_NORMAL_BLOCK = 2**16  # numbers per block of the NumPy normal path (a few arrays of it fit in L2)


def _unit(bits, xp):
    """The top 53 bits ``k`` of uint64 hashes as uniforms ``fl(k + 1/2) 2^-53`` in [2^-54, 1]: for ``k >= 2^52``
    the sum rounds to even, and for ``k = 2^53 - 1`` to ``2^53``, so that uniform is 1."""
    return (xp.astype(bits >> _constants(xp)[3], xp.float64) + 0.5) * (2.0**-53)


def _mix_inplace(z, tmp):
    """:func:`_mix` in place on ``z`` (``tmp``: a scratch array of the same shape)."""
    np.right_shift(z, np.uint64(30), out=tmp)
    z ^= tmp
    z *= _M1
    np.right_shift(z, np.uint64(27), out=tmp)
    z ^= tmp
    z *= _M2
    np.right_shift(z, np.uint64(31), out=tmp)
    z ^= tmp


# --------------------------------------------------------------------------------------
# portable log and cos(2 pi u): version 2 of the keyed stream
# --------------------------------------------------------------------------------------
# Only IEEE-754 basic operations (+, -, *, /, sqrt: correctly rounded everywhere), comparisons, selections and exact
# bit manipulation, one operation at a time in the order written, so that every IEEE-754 machine that keeps that
# order and fuses nothing gives the same bits: NumPy (each elementwise operation rounds once; NumPy fuses no
# multiply-add), C compiled with -ffp-contract=off, CUDA compiled with --fmad=false.  The C text of the same
# functions is ``fltheory._cuda._PORTABLE_CODE``, printed from the constants below (shortest round-trip decimals,
# which a correctly rounding compiler reads back to these doubles).
#
# log (the scheme and coefficients of fdlibm's e_log.c, Sun Microsystems): x = m 2^k exactly, m in [sqrt(1/2),
# sqrt(2)); f = m - 1 (exact: Sterbenz); s = f / (2 + f); log(1 + f) = f - hfsq + s (hfsq + R), hfsq = f^2 / 2,
# R an even polynomial in s; log x = k ln2_hi - ((hfsq - (s (hfsq + R) + k ln2_lo)) - f), where ln2_hi ends in 32
# zero bits (k ln2_hi exact for |k| < 2^20).
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_LG = (6.666666666666735130e-01, 3.999999999940941908e-01, 2.857142874366239149e-01, 2.222219843214978396e-01,
       1.818357216161805012e-01, 1.531383769920937332e-01, 1.479819860511658591e-01)
_SQRT2 = 1.4142135623730951                  # the double nearest sqrt(2), where the mantissa is split
_SQRT2_BITS = 0x3FF6A09E667F3BCD             # its bits
_MANTISSA = 0x000FFFFFFFFFFFFF
_ONE_BITS = 0x3FF0000000000000
# cos(2 pi u) (the kernels and coefficients of fdlibm's k_sin.c and FreeBSD's k_cos.c, for |x| <= pi/4): t = 4 u
# (exact), n = the whole number of quarter turns nearest t, by comparisons; r = t - n (exact: Sterbenz), |r| <= 1/2,
# so 2 pi u = n pi/2 + theta with theta = (pi/2) r (u reduced by a multiple of 1/4 to within 1/8 of a turn);
# theta as a double-double x + y, the product r (pi/2) exact by Dekker's two-product on Veltkamp's halves (no
# fused multiply-add); cos(2 pi u) = cos theta, -sin theta, -cos theta, sin theta for n mod 4 = 0, 1, 2, 3.
_S = (-1.66666666666666324348e-01, 8.33333333332248946124e-03, -1.98412698298579493134e-04,
      2.75573137070700676789e-06, -2.50507602534068634195e-08, 1.58969099521155010221e-10)
_C = (4.16666666666666019037e-02, -1.38888888888741095749e-03, 2.48015872894767294178e-05,
      -2.75573143513906633035e-07, 2.08757232129817482790e-09, -1.13596475577881948265e-11)
_PIO2_HI = 1.5707963267948966                # pi/2 rounded to a double
_PIO2_LO = 6.123233995736766e-17             # pi/2 - _PIO2_HI rounded to a double
_SPLITTER = 134217729.0                      # 2^27 + 1: Veltkamp's split into halves of 26 bits


def _veltkamp(a):
    """``(hi, lo)`` with ``a = hi + lo`` exactly, each of at most 26 significant bits (for |a| < 2^996)."""
    c = _SPLITTER * a
    hi = c - (c - a)
    return hi, a - hi


_PIO2_HH, _PIO2_HL = _veltkamp(_PIO2_HI)     # Python floats are IEEE doubles: the same halves as the C code's


def _log_split(x, xp):
    """``(m, k)`` with ``x = m 2^k`` exactly, ``m`` in ``[sqrt(1/2), sqrt(2))``, ``k`` a whole float64, for positive
    normal ``x``.  NumPy: integer operations on the bits (the C code's way).  The array API standard has no bit cast:
    there the exponent is found by halving intervals, scaling by exact powers of two (for x in [2^-62, 2); the
    stream's uniforms lie in [2^-54, 1]); both ways are exact, so they give the same (m, k)."""
    if xp is np:
        b = x.view(np.uint64)
        k = (b >> np.uint64(52)).astype(np.int64) - 1023
        mb = (b & np.uint64(_MANTISSA)) | np.uint64(_ONE_BITS)          # x's mantissa as a double in [1, 2)
        big = mb >= np.uint64(_SQRT2_BITS)
        mb = np.where(big, mb - np.uint64(1 << 52), mb)                  # halve m: exponent field one down
        return mb.view(np.float64), (k + big).astype(np.float64)
    m, k = x, xp.zeros_like(x)
    for s in (32, 16, 8, 4, 2, 1):
        low = m < 2.0 ** (1 - s)
        m = xp.where(low, m * 2.0**s, m)
        k = xp.where(low, k - float(s), k)
    big = m >= _SQRT2
    return xp.where(big, m * 0.5, m), xp.where(big, k + 1.0, k)


def _portable_log(x, xp=np):
    """``log x`` for float64 ``x`` in ``(0, 1]`` (positive normal numbers), from basic operations only, in the order
    of the C function ``fl_portable_log`` (see the comment above).  Within 2 ulp of ``np.log`` over 10^6 of the
    stream's uniforms and the extremes 2^-54 and 1 (``tests/test_portable_noise.py``)."""
    m, dk = _log_split(x, xp)
    f = m - 1.0
    s = f / (2.0 + f)
    z = s * s
    w = z * z
    t1 = w * (_LG[1] + w * (_LG[3] + w * _LG[5]))
    t2 = z * (_LG[0] + w * (_LG[2] + w * (_LG[4] + w * _LG[6])))
    R = t2 + t1
    hfsq = 0.5 * f * f
    return dk * _LN2_HI - ((hfsq - (s * (hfsq + R) + dk * _LN2_LO)) - f)


def _portable_cos_2pi(u, xp=np):
    """``cos(2 pi u)`` for float64 ``u`` in ``[0, 1]``, from basic operations only, in the order of the C function
    ``fl_portable_cos_2pi`` (see the comment above).  It is the cosine of the turn ``u`` itself, not of the rounded
    angle ``2 pi u`` that ``np.cos(2 * np.pi * u)`` takes: within 2 ulp of ``cos`` of the double-double ``2 pi u``,
    and within 2^-50 of ``np.cos(2 * np.pi * u)`` (whose argument's rounding moves it by up to about 1.5 * 2^-51;
    near a zero of cos that is many ulp), over 10^6 of the stream's uniforms and the extremes
    (``tests/test_portable_noise.py``)."""
    return _portable_sincos_2pi(u, xp)[1]


def _portable_sincos_2pi(u, xp=np):
    """``(sin(2 pi u), cos(2 pi u))`` for float64 ``u`` in ``[0, 1]``: one reduction, both kernels, the quadrant's
    signs (``sin(2 pi u)`` = sin theta, cos theta, -sin theta, -cos theta for n mod 4 = 0, 1, 2, 3), in the order of
    the C function ``fl_portable_sincos_2pi``; the cosine is :func:`_portable_cos_2pi`'s."""
    t = 4.0 * u
    n = (xp.astype(t > 0.5, xp.float64) + xp.astype(t > 1.5, xp.float64) + xp.astype(t > 2.5, xp.float64)
         + xp.astype(t > 3.5, xp.float64))
    r = t - n
    p = r * _PIO2_HI
    rh, rl = _veltkamp(r)
    e = ((rh * _PIO2_HH - p) + rh * _PIO2_HL + rl * _PIO2_HH) + rl * _PIO2_HL    # p + e = r * _PIO2_HI exactly
    lo = e + r * _PIO2_LO
    x = p + lo
    y = lo - (x - p)                                                             # theta = x + y
    z = x * x
    v = z * x
    rs = _S[1] + z * (_S[2] + z * (_S[3] + z * (_S[4] + z * _S[5])))
    sin = x - ((z * (0.5 * y - v * rs) - y) - v * _S[0])
    w = z * z
    rc = z * (_C[0] + z * (_C[1] + z * _C[2])) + w * w * (_C[3] + z * (_C[4] + z * _C[5]))
    hz = 0.5 * z
    w = 1.0 - hz
    cos = w + (((1.0 - w) - hz) + (z * rc - x * y))
    first = (n == 0.0) | (n == 4.0)
    return (xp.where(first, sin, xp.where(n == 1.0, cos, xp.where(n == 2.0, -sin, -cos))),
            xp.where(first, cos, xp.where(n == 1.0, -sin, xp.where(n == 2.0, -cos, sin))))


def _purpose_id(purpose: str | int) -> int:
    if isinstance(purpose, int):
        return purpose
    return zlib.crc32(purpose.encode())


def _key(value, name):
    """One key of :class:`KeyedStream` checked (see ``KeyedStream._keys``): the value itself when it is
    already an array of integers >= 0 (so the hash sees the same bits), else its int64 equivalent."""
    from .validation import InputError, array, integer  # noqa: PLC0415

    if isinstance(value, (int, np.integer, float, np.floating)) or value is None or isinstance(value, (str, bytes)):
        return integer(value, name, low=0, high=2**64 - 1)
    kind = dtype_kind(value) if hasattr(value, "dtype") else ""
    if kind == "u":
        return value
    if kind == "i":
        xp = namespace(value)
        if value.size and bool(xp.any(value < 0)):
            raise InputError(f"{name} must hold integers >= 0 (a key of the random stream); smallest is "
                             f"{int(xp.min(value))}")
        return value
    return array(value, name, xp=None if hasattr(value, "__array_namespace__") or hasattr(value, "dtype") else np,
                 kind="integer", low=0, empty=True)


class KeyedStream:
    """Counter-based random numbers keyed by (seed, purpose, configuration, round, client).

    ``config``, ``round`` and ``client`` are integers or integer arrays that broadcast
    against each other; ``size`` is appended to the broadcast shape and indexes the counter.
    The module of the output is that of the index arrays (or ``backend``).

    ``version`` chooses how :meth:`normal` turns the two keyed uniforms into a normal number (Box-Muller,
    ``sqrt(-2 log u1) cos(2 pi u2)``); :meth:`uniform` and :meth:`generator` are the same for all three.

    * ``version=1`` (the default, the stream every result so far was drawn from): the platform's ``log`` and
      ``cos`` (NumPy's on the host, CUDA's in the CuPy kernel), which may round differently in the last place,
      so the bits are those of the library that computes them.
    * ``version=2``: ``log`` and ``cos(2 pi u)`` computed from IEEE-754 basic operations and exact bit
      manipulation only, in one fixed order (:func:`_portable_log`, :func:`_portable_cos_2pi`; within 2 ulp of
      ``np.log`` and of a reference for ``cos(2 pi u)``, tested), so every IEEE-754 machine whose compiler keeps
      that order and fuses no multiply-add gives the same bits.  Its draws differ from version 1's in the last
      places (the same uniforms).  The tests compare the NumPy path, the ``array_api_strict`` path and the
      C text of the same functions (``fltheory._cuda._PORTABLE_CODE``, compiled by the host's C++ compiler with
      ``-ffp-contract=off``) bit for bit; on CuPy the same text is the kernel, compiled with ``--fmad=false``,
      and its tests compare it with the NumPy path bit for bit where a GPU is (alone and inside the simulator's
      kernels; all 1.6e7 numbers of a benchmark equal on an NVIDIA H200).
    * ``version=3``: version 2's functions on both outputs of each Box-Muller pair: the number of counter ``2j``
      is ``r cos(2 pi u2)`` and that of ``2j + 1`` is ``r sin(2 pi u2)``, with ``r = sqrt(-2 log u1)`` and the
      uniforms of counter ``j`` (so counter ``2j`` is version 2's number ``j``): half the transcendental work per
      number on NumPy, ``array_api_strict`` and inside FedOpt's CuPy kernels (CuPy's ``normal`` kernel computes a
      whole pair for each number, the same bits), the same portability and tests.
    """

    def __init__(self, seed: int, purpose: str | int = 0, *, version: int = 1):
        from .validation import integer  # noqa: PLC0415

        self.seed = integer(seed, "seed", low=0, high=2**63 - 1)
        self.version = integer(version, "version", low=1, high=3)
        if not isinstance(purpose, (str, int)) or isinstance(purpose, bool):
            raise InputTypeError(f"purpose must be a string or an integer; got {purpose!r}")
        self.purpose = purpose
        with np.errstate(over="ignore"):
            self._base = _mix(np.uint64(self.seed) * _GOLDEN + np.uint64(_purpose_id(purpose)))

    def _key_hashes(self, config, round, client, backend):
        """The hash of every broadcast ``(config, round, client)`` key (before the counter), and the namespace."""
        xp = namespace(config, round, client, backend=backend)
        keys = [xp.astype(xp.asarray(v), xp.uint64) for v in (config, round, client)]
        shape = np.broadcast_shapes(*(k.shape for k in keys))
        golden, _, m2 = _constants(xp)[:3]
        with np.errstate(over="ignore"):
            h = xp.broadcast_to(xp.asarray(int(self._base), dtype=xp.uint64), shape)   # a uint64 past int64's range
            for k in keys:
                h = _mix(h ^ (k * golden + m2), xp)
        return h, xp

    def _bits(self, config, round, client, size, backend, offset=0):
        h, xp = self._key_hashes(config, round, client, backend)
        size = tuple(size) if size is not None else ()
        n = int(np.prod(size)) if size else 1
        golden, m1 = _constants(xp)[:2]
        counter = xp.reshape(xp.arange(offset, offset + n, dtype=xp.uint64), size if size else ())
        with np.errstate(over="ignore"):
            h = xp.reshape(h, tuple(h.shape) + (1,) * len(size))
            return _mix(h ^ (counter * m1 + golden), xp), xp

    @staticmethod
    def _keys(config, round, client):
        """The keys, checked: integers >= 0 (Python or NumPy of any width, integral floats, or arrays of them);
        bool, text, NaN, inf, fractional and negative keys are refused by name (they would wrap or truncate
        silently into some other key)."""
        return tuple(v if type(v) is int and 0 <= v < 2**64 else _key(v, name)
                     for v, name in ((config, "config"), (round, "round"), (client, "client")))

    def uniform(self, *, config=0, round=0, client=0, size=None, backend=None):
        """Uniform numbers in (0, 1], float64: 1 only for the top 53 bits all ones (probability 2^-53; see
        :func:`_unit`)."""
        config, round, client = self._keys(config, round, client)
        bits, xp = self._bits(config, round, client, size, backend)
        return _unit(bits, xp)

    def normal(self, *, config=0, round=0, client=0, size=None, backend=None):
        """Standard normal numbers (Box-Muller on two independent keyed uniforms)."""
        size = tuple(size) if size is not None else ()
        config, round, client = self._keys(config, round, client)
        xp = namespace(config, round, client, backend=backend)
        if xp is np:
            return self._normal_numpy(config, round, client, size)
        if "cupy" in xp.__name__:   # pragma: no cover - GPU machines
            return self._normal_cupy(config, round, client, size, backend)
        return self._normal_plain(config, round, client, size, backend)

    def _normal_cupy(self, config, round, client, size, backend=None):   # pragma: no cover - GPU machines
        """:meth:`normal` on CuPy as one fused kernel: the operations of :meth:`_normal_plain` (the hash, the
        uniforms, Box-Muller) per output number, written once; version 1 with the device's ``log`` and ``cos``,
        versions 2 and 3 with the portable functions compiled with ``--fmad=false`` (version 3: the whole pair of
        each number, the output of its parity)."""
        h, xp = self._key_hashes(config, round, client, backend)
        n = int(np.prod(size)) if size else 1
        out = xp.empty(tuple(h.shape) + size)
        from ._cuda import keyed_normal  # noqa: PLC0415

        keyed_normal(self.version)(xp.reshape(xp.asarray(h), (-1,)), n, out)
        return out

    def _normal_plain(self, config, round, client, size, backend=None):
        """:meth:`normal` as one vectorised formula (namespaces other than NumPy and CuPy).  Version 1: on a
        namespace that computes with NumPy's functions, such as ``array_api_strict``, the NumPy path's bits (the
        device functions of a GPU may round ``log`` and ``cos`` differently in the last place).  Versions 2 and 3:
        the portable functions, the NumPy path's bits on any namespace whose basic operations are IEEE-754's
        (version 3 on one pair of uniforms per two numbers)."""
        if self.version == 3:   # a pair of uniforms per two numbers: counters 2j (r cos) and 2j + 1 (r sin)
            n = int(np.prod(size)) if size else 1
            half = (n + 1) // 2
            b1, xp = self._bits(config, round, client, (half,), backend, offset=0)
            b2, _ = self._bits(config, round, client, (half,), backend, offset=1 << 40)
            r = xp.sqrt(-2.0 * _portable_log(_unit(b1, xp), xp))
            sin, cos = _portable_sincos_2pi(_unit(b2, xp), xp)
            lead = tuple(r.shape[:-1])
            z = xp.reshape(xp.stack([r * cos, r * sin], axis=-1), lead + (2 * half,))[..., :n]
            return xp.reshape(z, lead + tuple(size))
        b1, xp = self._bits(config, round, client, size, backend, offset=0)
        b2, _ = self._bits(config, round, client, size, backend, offset=1 << 40)
        u1, u2 = _unit(b1, xp), _unit(b2, xp)
        if self.version == 2:
            return xp.sqrt(-2.0 * _portable_log(u1, xp)) * _portable_cos_2pi(u2, xp)
        return xp.sqrt(-2.0 * xp.log(u1)) * xp.cos(2.0 * np.pi * u2)

    def _key_hash(self, config, round, client):
        keys = [np.asarray(v).astype(np.uint64) for v in (config, round, client)]
        shape = np.broadcast_shapes(*(k.shape for k in keys))
        with np.errstate(over="ignore"):
            h = np.full(shape, self._base, dtype=np.uint64)
            for k in keys:
                h = _mix(h ^ (k * _GOLDEN + _M2))
        return h

    def _normal_numpy(self, config, round, client, size):
        """:meth:`normal` on NumPy, bit for bit: the same operations, in place, on blocks that stay in
        cache (the straightforward form makes ~30 passes over the whole output through memory)."""
        h = self._key_hash(config, round, client)
        n = int(np.prod(size)) if size else 1
        pairs = self.version == 3
        draws = (n + 1) // 2 if pairs else n   # version 3: one pair of uniforms gives two numbers
        with np.errstate(over="ignore"):
            base = np.arange(draws, dtype=np.uint64)
            c1 = base * _M1 + _GOLDEN                                   # counter offset 0
            c2 = (base + np.uint64(1 << 40)) * _M1 + _GOLDEN            # counter offset 2**40
        keys = h.reshape(-1)
        out = np.empty((keys.size, n))
        rows = max(1, _NORMAL_BLOCK // draws)
        portable = self.version >= 2

        def part(lo, hi):   # rows [lo, hi) of the output, block by block, with scratch of its own
            z = np.empty((rows, draws), dtype=np.uint64)
            t = np.empty_like(z)
            u1, u2 = np.empty((rows, draws)), np.empty((rows, draws))
            for a in range(lo, hi, rows):
                k = keys[a:min(a + rows, hi), None]
                m = k.shape[0]
                zz, tt, v1, v2 = z[:m], t[:m], u1[:m], u2[:m]
                for c, v in ((c1, v1), (c2, v2)):
                    np.bitwise_xor(k, c, out=zz)
                    _mix_inplace(zz, tt)
                    np.right_shift(zz, np.uint64(11), out=tt)
                    np.copyto(v, tt.view(np.int64), casting="unsafe")   # < 2**53: exact, and int64 converts faster
                    v += 0.5
                    v *= 2.0**-53
                if pairs:   # version 3: r cos to the even counters, r sin to the odd ones
                    r = np.sqrt(-2.0 * _portable_log(v1))
                    sin, cos = _portable_sincos_2pi(v2)
                    np.multiply(r, cos, out=out[a:a + m, 0::2])
                    np.multiply(r[:, :n // 2], sin[:, :n // 2], out=out[a:a + m, 1::2])
                    continue
                if portable:   # version 2: the portable functions, on the block (their temporaries stay small)
                    v1[...] = _portable_log(v1)
                    v2[...] = _portable_cos_2pi(v2)
                else:
                    np.log(v1, out=v1)
                    v2 *= 2.0 * np.pi
                    np.cos(v2, out=v2)
                v1 *= -2.0
                np.sqrt(v1, out=v1)
                np.multiply(v1, v2, out=out[a:a + m])

        # threads: the numbers are elementwise, so the same bits for any split; a part of at least 2^14 numbers
        # outweighs handing it to a thread (a simulator draws one local step of noise at a time)
        run_parts(part, keys.size, min_part=max(1, 2**14 // n))
        return out.reshape(h.shape + size)

    def generator(self, *, config: int = 0, round: int = 0, client: int = 0) -> np.random.Generator:
        """A NumPy ``Generator`` for one (configuration, round, client) key (off the hot path)."""
        from .validation import integer  # noqa: PLC0415

        key = [self.seed, _purpose_id(self.purpose)] + [integer(v, n, low=0, high=2**64 - 1) for v, n in
                                                        ((config, "config"), (round, "round"), (client, "client"))]
        return np.random.default_rng(np.random.SeedSequence(key))
