"""The doors: one place that checks every parameter before any work.

Every public function of the package checks its inputs here: their kind (a real number, an
integer, a flag, one of a few names, an array), finiteness, range, shape and dtype.  A bad input
raises a package error that names the parameter, shows the value and says what is allowed:

* :class:`InputError` (a ``ValueError``): the kind is right but the value is not allowed
  (``eta=-1``, ``NaN`` in ``H``, weights that do not sum to one, ``tau=2**63`` past its bound);
* :class:`InputTypeError` (a ``TypeError``): the kind is wrong (a string, a complex number, a
  bool where a number belongs, a float with a fractional part where an integer belongs).

Both derive from :class:`FLTheoryError`, the base of every error fltheory raises on purpose, so
``except fltheory.FLTheoryError`` catches exactly the package's own refusals.  Text is never
evaluated: a string is refused wherever a number is expected.

Integers accept Python and NumPy integers and integral finite floats (``5.0``), and refuse bool,
NaN, inf, complex numbers, strings and values past the stated bound.  Reals accept Python and
NumPy reals, ``Fraction`` and ``Decimal``.  Arrays keep float32 when given float32 (tolerances
follow the dtype, :func:`tolerance_for`) and otherwise become float64.

Batched parameters
------------------
A batched parameter has *configuration* axes (a sweep: one run per entry) and, for a parameter
that may differ between clients, a trailing *client* axis.  Which is which is never guessed:

* :func:`client_parameter` (e.g. the client step size ``eta_i`` of local adaptivity) returns an
  array whose last axis is the client axis, of length ``M`` (one value per client) or 1 (common
  to every client); the axes before it are configurations.  A scalar is common to every client
  and every configuration.  Mark the meaning of an array with :func:`per_client` (last axis =
  clients) or :func:`per_configuration` (every axis = configurations); a plain array needs at
  least two axes, ``(..., M)`` or ``(..., 1)``.  A plain 1-D array of several values is refused:
  ``eta=[0.1, 0.2, 0.3]`` with three clients could mean either.
* :func:`configuration_parameter` (e.g. FedDelAvg's ``eta``, common to all clients) takes a
  scalar or an array of configuration axes only; ``per_client`` values are refused.

Example
-------
>>> from fltheory import validation as v
>>> v.integer(5.0, "tau", low=1)
5
>>> v.integer(True, "tau", low=1)
Traceback (most recent call last):
...
fltheory.validation.InputTypeError: tau must be an integer; got True (bool)
>>> v.real(float("nan"), "eta", low=0, open_low=True)
Traceback (most recent call last):
...
fltheory.validation.InputError: eta must be a finite real number; got nan
>>> v.real(3, "alpha", low=0, high=1, open_low=True)
Traceback (most recent call last):
...
fltheory.validation.InputError: alpha must be in (0, 1]; got 3
"""
from __future__ import annotations

import math
import numbers
from decimal import Decimal
from fractions import Fraction
from typing import Any, Sequence

import numpy as np

__all__ = [
    "FLTheoryError", "InputError", "InputTypeError", "MAX_INT", "MEMORY_FRACTION", "integer", "real", "flag",
    "choice", "array", "namespace_arg", "tolerance", "tolerance_for", "check_size", "check_time", "MAX_SECONDS", "shown", "instance",
    "PerClient", "PerConfiguration",
    "per_client", "per_configuration", "client_parameter", "configuration_parameter",
]

MAX_INT = 2**53          # largest integer parameter accepted unless a function states a tighter bound
MEMORY_FRACTION = 0.25   # the largest array a function may allocate, as a fraction of its device's free memory
MIN_REFUSED_BYTES = 2**26  # arrays up to 64 MiB are never refused (the device is not asked)
MAX_SECONDS = 60.0        # longest estimated run (on one core of a current CPU) a function starts before refusing


class FLTheoryError(Exception):
    """Base class of every error that fltheory raises on purpose."""


class InputError(FLTheoryError, ValueError):
    """A parameter whose value is outside what is allowed (the message names it)."""


class InputTypeError(FLTheoryError, TypeError):
    """A parameter of the wrong kind (the message names it)."""


def shown(value: Any, limit: int = 60) -> str:
    """A short text for a value in an error message (arrays by shape and dtype)."""
    if isinstance(value, np.ndarray) or type(value).__module__.startswith("cupy"):
        return f"an array of shape {tuple(value.shape)} and dtype {value.dtype}"
    if hasattr(value, "__array_namespace__") and hasattr(value, "dtype") and not isinstance(value, np.generic):
        # another standard array: its dtype by the name NumPy gives it ("float64", not "array_api_strict.float64")
        return f"an array of shape {tuple(value.shape)} and dtype {str(value.dtype).rsplit('.', 1)[-1]}"
    try:
        text = repr(value)
    except Exception:  # pragma: no cover - exotic objects
        text = f"<{type(value).__name__}>"
    if len(text) > limit:
        text = text[:limit - 3] + "..."
    return text


def _is_text(value) -> bool:
    return isinstance(value, (str, bytes, bytearray)) or (
        isinstance(value, np.ndarray) and value.dtype.kind in "USO" and value.dtype.kind != "O"
    )


def _bounds_text(low, high, open_low, open_high) -> str:
    if low is not None and high is not None:
        return f"in {'(' if open_low else '['}{low:g}, {high:g}{')' if open_high else ']'}"
    if low is not None:
        return f"{'>' if open_low else '>='} {low:g}"
    return f"{'<' if open_high else '<='} {high:g}"


def integer(value: Any, name: str, *, low: int | None = None, high: int | None = MAX_INT) -> int:
    """``value`` as a Python int, refusing bool, text, complex, non-integral, non-finite and out-of-range values."""
    if isinstance(value, (bool, np.bool_)) or _is_text(value) or isinstance(value, (complex, np.complexfloating)):
        raise InputTypeError(f"{name} must be an integer; got {shown(value)} ({type(value).__name__})")
    if _foreign_array(value) and getattr(value, "ndim", None) == 0:
        value = _host_or(value, np)
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return integer(value.item(), name, low=low, high=high)
    if isinstance(value, (int, np.integer)):
        v = int(value)
    elif isinstance(value, (float, np.floating, Fraction, Decimal)):
        f = float(value) if not isinstance(value, Fraction) else value
        if isinstance(f, float) and not np.isfinite(f):
            raise InputError(f"{name} must be a finite integer; got {shown(value)}")
        if f != int(f):
            raise InputTypeError(f"{name} must be an integer; got {shown(value)}, which has a fractional part")
        v = int(f)
    else:
        raise InputTypeError(f"{name} must be an integer; got {shown(value)} ({type(value).__name__})")
    if (low is not None and v < low) or (high is not None and v > high):
        if low is not None and high is not None:
            rng = f"in [{low}, {high}]"
        else:
            rng = f">= {low}" if low is not None else f"<= {high}"
        raise InputError(f"{name} must be an integer {rng}; got {v}")
    return v


def real(value: Any, name: str, *, low: float | None = None, high: float | None = None, open_low: bool = False,
         open_high: bool = False, finite: bool = True) -> float:
    """``value`` as a Python float, refusing bool, text, complex, NaN (and inf unless ``finite=False``)."""
    if isinstance(value, (bool, np.bool_)) or _is_text(value) or isinstance(value, (complex, np.complexfloating)):
        raise InputTypeError(f"{name} must be a real number; got {shown(value)} ({type(value).__name__})")
    if _foreign_array(value) and getattr(value, "ndim", None) == 0:
        value = _host_or(value, np)
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value.item()
        if isinstance(value, (bool, complex)):
            return real(value, name, low=low, high=high, open_low=open_low, open_high=open_high, finite=finite)
    if not isinstance(value, (numbers.Real, np.floating, np.integer, Decimal)):
        if type(value).__module__.startswith("sympy") and getattr(value, "is_real", False) and value.is_number:
            value = float(value)
        else:
            raise InputTypeError(f"{name} must be a real number; got {shown(value)} ({type(value).__name__})")
    try:
        v = float(value)
    except OverflowError:
        raise InputError(f"{name} must be a finite real number; got {shown(value)}, too large for a float") from None
    if np.isnan(v) or (finite and not np.isfinite(v)):
        raise InputError(f"{name} must be a finite real number; got {shown(value)}")
    bad_low = low is not None and (v <= low if open_low else v < low)
    bad_high = high is not None and (v >= high if open_high else v > high)
    if bad_low or bad_high:
        raise InputError(f"{name} must be {_bounds_text(low, high, open_low, open_high)}; got {shown(value)}")
    return v


def flag(value: Any, name: str) -> bool:
    """``value`` as a bool; only ``True``/``False`` (and NumPy bools) are flags (the string "False" is not)."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise InputTypeError(f"{name} must be True or False; got {shown(value)} ({type(value).__name__})")


def instance(value: Any, name: str, cls, what: str | None = None) -> Any:
    """``value`` if it is an instance of ``cls`` (a class or a tuple of classes), else a named error."""
    if not isinstance(value, cls):
        names = what or " or ".join(c.__name__ for c in (cls if isinstance(cls, tuple) else (cls,)))
        raise InputTypeError(f"{name} must be a {names}; got {shown(value)}")
    return value


def choice(value: Any, name: str, options: Sequence[str]) -> str:
    """``value`` if it is one of the ``options`` (strings)."""
    if not isinstance(value, str):
        raise InputTypeError(f"{name} must be one of {list(options)}; got {shown(value)} ({type(value).__name__})")
    if value not in options:
        raise InputError(f"{name} must be one of {list(options)}; got {value!r}")
    return value


def namespace_arg(value: Any, name: str = "xp") -> Any:
    """``value`` if it is an array namespace (``numpy``, ``cupy``, a namespace of the array API standard), else a
    named error (a number or a string where a namespace belongs would fail later as an AttributeError)."""
    if isinstance(value, (str, bytes, numbers.Number, np.ndarray, np.generic)) or value is None or not (
            hasattr(value, "asarray") and hasattr(value, "float64")):
        raise InputTypeError(f"{name} must be an array namespace such as numpy; got {shown(value)} "
                             f"({type(value).__name__})")
    return value


def check_size(n_elements: int, what: str, *, xp=None, limit: int | None = None, hint: str = "",
               itemsize: int = 8) -> None:
    """Refuse at once an allocation of more than the device can hold, with the estimate.

    The limit is a quarter of the memory free on the device of namespace ``xp`` (CuPy: the GPU's free
    memory; otherwise the host's available memory; :func:`fltheory.backend.available_memory`), in numbers of
    ``itemsize`` bytes: a computation holds a few arrays of its largest size at once.  ``limit`` (a count of
    numbers) caps it further where the work, not the memory, is what must be bounded.  The message names
    the device, its free memory and the estimate.
    """
    from .backend import available_memory  # noqa: PLC0415 - avoid an import cycle

    n_elements = int(n_elements)
    if limit is not None and n_elements > limit:
        raise InputError(f"{what} would hold {n_elements:,} numbers (about {n_elements * itemsize / 2**30:,.1f} GiB), "
                         f"over the limit of {limit:,}" + (f"; {hint}" if hint else ""))
    if n_elements * itemsize <= MIN_REFUSED_BYTES:   # small: no need to ask the device
        return
    free, where = available_memory(xp)
    fit = int(free * MEMORY_FRACTION) // itemsize
    if n_elements > fit:
        raise InputError(f"{what} would hold {n_elements:,} numbers (about {n_elements * itemsize / 2**30:,.2f} GiB) "
                         f"where {where} has {free / 2**30:,.2f} GiB free (a quarter of it, {fit:,} numbers, is the "
                         f"most one array may take)" + (f"; {hint}" if hint else ""))


def check_time(seconds: float, what: str, *, limit: float = MAX_SECONDS, hint: str = "") -> None:
    """Refuse at once a computation estimated to take more than ``limit`` seconds, with the estimate.

    The estimates are operation counts times constants measured on small cases (a current CPU core;
    a factor of a few either way), so the refusal is for work far past the budget, not a timer."""
    if seconds > limit:
        raise InputError(f"{what} would take about {seconds:,.0f} s (estimated), over the budget of {limit:,.0f} s"
                         + (f"; {hint}" if hint else ""))


def distinct(arr):
    """``arr`` without the repeats of a broadcast: each axis of stride 0 (a ``broadcast_to`` view, NumPy's or
    CuPy's) cut to length 1, so that a check reads every distinct entry once (a sweep of 10^7 step sizes broadcast
    over 10 clients: 10^7 numbers, not 10^8).  Arrays that do not show their strides are returned as they are."""
    strides = getattr(arr, "strides", None)
    if not strides or 0 not in strides:
        return arr
    return arr[tuple(slice(0, 1) if st == 0 and n > 1 else slice(None) for st, n in zip(strides, arr.shape))]


def _all_finite(arr, xp) -> bool:
    """Whether every entry is finite: one pass through a sum (a NaN or inf makes it non-finite) and no
    boolean temporary; the exact elementwise test only when the sum itself overflowed."""
    with np.errstate(over="ignore", invalid="ignore"):
        total = float(xp.sum(arr))
    return math.isfinite(total) or bool(xp.all(xp.isfinite(arr)))


def _is_real_scalar(v) -> bool:
    """A real number that NumPy keeps as an object: Fraction, Decimal, a Python int past int64 (not bool, not text)."""
    return isinstance(v, (numbers.Real, Decimal)) and not isinstance(v, (bool, np.bool_))


def _exact_reals(arr: np.ndarray, name: str) -> np.ndarray:
    """An object array of exact reals (``Fraction``, ``Decimal``, big ints) as float64; anything else refused."""
    flat = arr.reshape(-1)
    if not all(_is_real_scalar(v) for v in flat):
        bad = next(v for v in flat if not _is_real_scalar(v))
        raise InputTypeError(f"{name} must be an array of numbers; got an entry {shown(bad)} ({type(bad).__name__})")
    try:
        return np.array([float(v) for v in flat], dtype=np.float64).reshape(arr.shape)
    except OverflowError:
        raise InputError(f"{name} must hold finite real numbers; an entry is too large for a float") from None


def array(value: Any, name: str, *, xp=None, ndim: int | None = None, min_ndim: int | None = None,
          shape: tuple | None = None, kind: str = "real", finite: bool = True, low: float | None = None,
          high: float | None = None, open_low: bool = False, empty: bool = False) -> Any:
    """``value`` as an array of namespace ``xp`` (NumPy by default), checked.

    ``kind`` is ``"real"`` (float32 kept, other real dtypes become float64) or ``"integer"``
    (integral values only).  ``shape`` may contain ``None`` for a free axis; it matches the
    trailing axes.  Text, objects, complex and bool arrays are refused, and so is NaN/inf when
    ``finite``, and an empty array unless ``empty``.
    """
    from .backend import dtype_kind, namespace  # noqa: PLC0415 - avoid an import cycle

    if _is_text(value):
        raise InputTypeError(f"{name} must be an array of numbers; got {shown(value)}")
    if isinstance(value, (complex, np.complexfloating)):
        raise InputTypeError(f"{name} must be real; got {shown(value)}")
    if xp is None:
        try:
            xp = np if isinstance(value, (list, tuple)) else namespace(value)
        except TypeError:
            xp = np
    value = _host_or(value, xp)
    try:
        if xp is not np and not hasattr(value, "__array_namespace__") and not type(value).__module__.startswith("cupy"):
            value = np.asarray(value)   # host data: NumPy reads its dtype (text, objects) as it does on the NumPy path
            k = value.dtype.kind
            arr = value if k in "USOV" else xp.asarray(value)
        else:
            arr = xp.asarray(value)
    except (ValueError, TypeError) as exc:
        raise InputTypeError(f"{name} must be an array of numbers; got {shown(value)} ({exc})") from None
    if xp is np and arr.dtype.kind == "O":
        arr = _exact_reals(arr, name)
    k = dtype_kind(arr, xp)
    if k in "USOV":
        raise InputTypeError(f"{name} must be an array of numbers; got dtype {arr.dtype}")
    if k == "c":
        raise InputTypeError(f"{name} must be real; got complex dtype {str(arr.dtype).rsplit('.', 1)[-1]}")
    if k == "b":
        raise InputTypeError(f"{name} must be an array of numbers; got booleans")
    if arr.size == 0 and not empty:
        raise InputError(f"{name} must not be empty; got shape {tuple(arr.shape)}")
    seen = distinct(arr)   # the checks read each distinct entry once
    if kind == "integer":
        if k == "f":
            if bool(xp.any(~xp.isfinite(seen))):
                raise InputError(f"{name} must be a finite integer (or an array of them); it holds NaN or inf")
            if bool(xp.any(seen != xp.round(seen))):
                raise InputTypeError(f"{name} must be an integer or an array of integers; got non-integral values")
        if k in "fu" and arr.size and float(xp.max(xp.abs(seen))) > 2.0**62:
            raise InputError(f"{name} must hold integers of magnitude <= 2**62; largest is {float(xp.max(xp.abs(seen))):g}")
        arr = xp.astype(arr, xp.int64)
        seen = distinct(arr)
    elif k in "iu":
        arr = xp.astype(arr, xp.float64)
        seen = distinct(arr)
    elif arr.dtype not in (xp.float32, xp.float64):
        arr = xp.astype(arr, xp.float64)
        seen = distinct(arr)
    if ndim is not None and arr.ndim != ndim:
        raise InputError(f"{name} must have {ndim} axes; got shape {tuple(arr.shape)}")
    if min_ndim is not None and arr.ndim < min_ndim:
        raise InputError(f"{name} must have at least {min_ndim} axes; got shape {tuple(arr.shape)}")
    if shape is not None:
        tail = tuple(arr.shape[arr.ndim - len(shape):]) if arr.ndim >= len(shape) else None
        if tail is None or any(s is not None and s != a for s, a in zip(shape, tail)):
            want = "(..., " + ", ".join("*" if s is None else str(s) for s in shape) + ")"
            raise InputError(f"{name} must have shape {want}; got {tuple(arr.shape)}")
    if finite and kind == "real" and arr.size and not _all_finite(seen, xp):
        raise InputError(f"{name} must be finite; it holds NaN or inf")
    if low is not None and arr.size:
        m = float(xp.min(seen))
        if m < low or (open_low and m <= low):
            raise InputError(f"{name} must be {'>' if open_low else '>='} {low:g}; smallest entry is {m:g}")
    if high is not None and arr.size and float(xp.max(seen)) > high:
        raise InputError(f"{name} must be <= {high:g}; largest entry is {float(xp.max(seen)):g}")
    return arr


class _Marked:
    """Values with a stated meaning of their axes (base of :class:`PerClient`, :class:`PerConfiguration`)."""

    __slots__ = ("values",)
    word = ""

    def __init__(self, values):
        if isinstance(values, _Marked):
            raise InputTypeError(f"{self.word} takes the values themselves; got {type(values).__name__}")
        # what is never valid (text, complex, NaN/inf, no values) is refused here, where the values are marked; the
        # parameter that consumes them checks its own range (and keeps the values as given: float32, a device array)
        array(values, f"{self.word}(values)")
        self.values = values

    def __repr__(self) -> str:
        return f"{self.word}({shown(self.values)})"


class PerClient(_Marked):
    """Values given one per client: the last axis is the client axis (see :func:`per_client`)."""

    __slots__ = ()
    word = "per_client"


class PerConfiguration(_Marked):
    """Values given one per configuration: every axis is a configuration axis (see :func:`per_configuration`)."""

    __slots__ = ()
    word = "per_configuration"


def per_client(values) -> PerClient:
    """Mark ``values`` as one per client: their last axis is the client axis, of length M (or 1,
    common to every client; a scalar is common to every client too), the axes before it are
    configurations.

    >>> import numpy as np, fltheory as flt
    >>> fed = flt.random_quadratic_federation(M=3, d=2, seed=0)
    >>> from fltheory.papers.local_adaptivity import exact
    >>> exact.fixed_point(fed, eta=flt.per_client([0.1, 0.2, 0.05]), tau=2).x.shape   # one run, 3 client step sizes
    (2,)
    >>> exact.fixed_point(fed, eta=flt.per_configuration([0.1, 0.2, 0.05]), tau=2).x.shape   # 3 runs
    (3, 2)
    """
    return PerClient(values)


def per_configuration(values) -> PerConfiguration:
    """Mark ``values`` as one per configuration (a sweep; common to every client); see :func:`per_client`."""
    return PerConfiguration(values)


def _foreign_array(value) -> bool:
    """Whether ``value`` is an array of a library other than NumPy (CuPy, another namespace of the standard)."""
    return not isinstance(value, (np.ndarray, np.generic)) and (
        type(value).__module__.startswith("cupy") or hasattr(value, "__array_namespace__"))


def _host_or(value, xp):
    """Move a device array (CuPy, or any array of the standard) to the host, explicitly, when the check runs on
    NumPy (a host-side parameter: a loop count, a delay); anything else unchanged."""
    if xp is np and _foreign_array(value):
        from .backend import to_numpy  # noqa: PLC0415 - avoid an import cycle

        return to_numpy(value)
    return value


def batch_shape(parts: dict) -> tuple:
    """The common shape of the configuration (batch) axes of ``parts`` (``{name: shape}``); shapes that do not
    broadcast are refused naming every part that has axes.

    >>> batch_shape({"fed": (4,), "eta": (1,), "alpha": ()})
    (4,)
    """
    try:
        return tuple(np.broadcast_shapes(*(tuple(v) for v in parts.values())))
    except ValueError:
        shown = ", ".join(f"{k} {tuple(v)}" for k, v in parts.items() if tuple(v))
        raise InputError(f"the configuration (batch) axes do not broadcast: {shown}") from None


def client_parameter(value: Any, name: str, *, M: int, xp=None, **checks) -> Any:
    """A parameter that may differ between clients, as an array ``(..., M)`` or ``(..., 1)``, or a scalar.

    The last axis is the client axis (length ``M``, or 1 for a value common to every client) and
    the axes before it are configurations.  ``per_client(v)`` needs ``v.shape[-1]`` in ``(M, 1)``;
    ``per_configuration(v)`` gains a trailing axis of 1; a plain array needs at least two axes;
    a plain 1-D array of several values is refused as ambiguous (the message says how to mark
    it).  ``checks`` are those of :func:`array` (``kind``, ``low``, ``high``, ``open_low``).

    >>> client_parameter(0.1, "eta", M=3).shape
    ()
    >>> client_parameter(per_client([0.1, 0.2, 0.3]), "eta", M=3).shape
    (3,)
    >>> client_parameter(per_configuration([0.1, 0.2]), "eta", M=3).shape
    (2, 1)
    >>> client_parameter([0.1, 0.2, 0.3], "eta", M=3)
    Traceback (most recent call last):
    ...
    fltheory.validation.InputError: eta is a 1-D array of 3 values: per client or one per configuration? Write per_client(eta) for one value per client (M=3), or per_configuration(eta) for 3 configurations (same as an array of shape (3, 1))
    """
    xp = np if xp is None else namespace_arg(xp, "xp")
    if isinstance(value, PerClient):
        arr = array(_host_or(value.values, xp), name, xp=xp, **checks)
        if arr.ndim and arr.shape[-1] not in (1, M):
            raise InputError(f"{name} given per client must have a last axis of M={M} clients (or 1, common to "
                             f"every client); got shape {tuple(arr.shape)}")
        return arr
    if isinstance(value, PerConfiguration):
        arr = array(_host_or(value.values, xp), name, xp=xp, **checks)
        return arr[..., None]
    arr = array(_host_or(value, xp), name, xp=xp, **checks)
    if arr.ndim == 0:
        return arr
    if arr.ndim == 1 and arr.shape[0] > 1 and M > 1:
        n = arr.shape[0]
        raise InputError(f"{name} is a 1-D array of {n} values: per client or one per configuration? Write "
                         f"per_client({name}) for one value per client (M={M}), or per_configuration({name}) for "
                         f"{n} configurations (same as an array of shape ({n}, 1))")
    if arr.shape[-1] not in (1, M):
        raise InputError(f"{name} must have a last (client) axis of M={M} or 1; got shape {tuple(arr.shape)} (mark "
                         f"a sweep with per_configuration({name}))")
    return arr


def configuration_parameter(value: Any, name: str, *, xp=None, **checks) -> Any:
    """A parameter common to every client: a scalar or an array of configuration axes.

    ``per_configuration(v)`` is accepted (it says the same), ``per_client(v)`` is refused.

    >>> configuration_parameter(per_configuration([0.1, 0.2]), "eta").shape
    (2,)
    """
    if isinstance(value, PerClient):
        raise InputError(f"{name} is common to every client here (one value per configuration); it cannot be "
                         f"given per_client")
    if isinstance(value, PerConfiguration):
        value = value.values
    if xp is not None:
        xp = namespace_arg(xp, "xp")
    return array(_host_or(value, np if xp is None else xp), name, xp=xp, **checks)


def tolerance_for(dtype, n: int = 1) -> float:
    """A round-off tolerance for a sum of ``n`` numbers of this dtype (float32 gets float32's)."""
    try:
        dtype = np.dtype(dtype)
    except TypeError:   # a dtype of another namespace of the standard: NumPy knows it by its name
        dtype = np.dtype(str(dtype).rsplit(".", 1)[-1])
    eps = float(np.finfo(dtype).eps) if dtype.kind == "f" else float(np.finfo(np.float64).eps)
    return max(64.0 * eps * max(n, 1), 1e-12)


def tolerance(value: Any, name: str) -> float:
    """A positive finite tolerance."""
    return real(value, name, low=0.0, open_low=True)
