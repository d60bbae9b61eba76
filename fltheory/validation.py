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

import numbers
from decimal import Decimal
from fractions import Fraction
from typing import Any, Sequence

import numpy as np

__all__ = [
    "FLTheoryError", "InputError", "InputTypeError", "MAX_INT", "MAX_ELEMENTS", "integer", "real", "flag",
    "choice", "array", "tolerance", "tolerance_for", "check_size", "shown", "instance",
]

MAX_INT = 2**53          # largest integer parameter accepted unless a function states a tighter bound
MAX_ELEMENTS = 2 * 10**8  # largest array (in elements) a function may allocate before refusing


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


def check_size(n_elements: int, what: str, *, limit: int = MAX_ELEMENTS, hint: str = "") -> None:
    """Refuse at once an allocation of more than ``limit`` elements, with the estimate."""
    if n_elements > limit:
        gb = n_elements * 8 / 2**30
        raise InputError(f"{what} would hold {n_elements:,} numbers (about {gb:,.1f} GiB), over the limit of "
                         f"{limit:,}" + (f"; {hint}" if hint else ""))


def array(value: Any, name: str, *, xp=None, ndim: int | None = None, min_ndim: int | None = None,
          shape: tuple | None = None, kind: str = "real", finite: bool = True, low: float | None = None,
          high: float | None = None, open_low: bool = False, empty: bool = False) -> Any:
    """``value`` as an array of namespace ``xp`` (NumPy by default), checked.

    ``kind`` is ``"real"`` (float32 kept, other real dtypes become float64) or ``"integer"``
    (integral values only).  ``shape`` may contain ``None`` for a free axis; it matches the
    trailing axes.  Text, objects, complex and bool arrays are refused, and so is NaN/inf when
    ``finite``, and an empty array unless ``empty``.
    """
    from .backend import namespace  # noqa: PLC0415 - avoid an import cycle

    if _is_text(value):
        raise InputTypeError(f"{name} must be an array of numbers; got {shown(value)}")
    if isinstance(value, (complex, np.complexfloating)):
        raise InputTypeError(f"{name} must be real; got {shown(value)}")
    if xp is None:
        try:
            xp = np if isinstance(value, (list, tuple)) else namespace(value)
        except TypeError:
            xp = np
    try:
        arr = xp.asarray(value)
    except (ValueError, TypeError) as exc:
        raise InputTypeError(f"{name} must be an array of numbers; got {shown(value)} ({exc})") from None
    k = arr.dtype.kind
    if k in "USOV":
        raise InputTypeError(f"{name} must be an array of numbers; got dtype {arr.dtype}")
    if k == "c":
        raise InputTypeError(f"{name} must be real; got complex dtype {arr.dtype}")
    if k == "b":
        raise InputTypeError(f"{name} must be an array of numbers; got booleans")
    if arr.size == 0 and not empty:
        raise InputError(f"{name} must not be empty; got shape {tuple(arr.shape)}")
    if kind == "integer":
        if k == "f":
            if bool(xp.any(~xp.isfinite(arr))):
                raise InputError(f"{name} must be a finite integer (or an array of them); it holds NaN or inf")
            if bool(xp.any(arr != xp.round(arr))):
                raise InputTypeError(f"{name} must be an integer or an array of integers; got non-integral values")
        if k in "fu" and arr.size and float(xp.abs(arr).max()) > 2.0**62:
            raise InputError(f"{name} must hold integers of magnitude <= 2**62; largest is {float(xp.abs(arr).max()):g}")
        arr = arr.astype(xp.int64)
    elif k in "iu":
        arr = arr.astype(xp.float64)
    elif arr.dtype not in (xp.float32, xp.float64):
        arr = arr.astype(xp.float64)
    if ndim is not None and arr.ndim != ndim:
        raise InputError(f"{name} must have {ndim} axes; got shape {tuple(arr.shape)}")
    if min_ndim is not None and arr.ndim < min_ndim:
        raise InputError(f"{name} must have at least {min_ndim} axes; got shape {tuple(arr.shape)}")
    if shape is not None:
        tail = tuple(arr.shape[arr.ndim - len(shape):]) if arr.ndim >= len(shape) else None
        if tail is None or any(s is not None and s != a for s, a in zip(shape, tail)):
            want = "(..., " + ", ".join("*" if s is None else str(s) for s in shape) + ")"
            raise InputError(f"{name} must have shape {want}; got {tuple(arr.shape)}")
    if finite and kind == "real" and arr.size and not bool(xp.all(xp.isfinite(arr))):
        raise InputError(f"{name} must be finite; it holds NaN or inf")
    if low is not None and arr.size:
        m = float(arr.min())
        if m < low or (open_low and m <= low):
            raise InputError(f"{name} must be {'>' if open_low else '>='} {low:g}; smallest entry is {m:g}")
    if high is not None and arr.size and float(arr.max()) > high:
        raise InputError(f"{name} must be <= {high:g}; largest entry is {float(arr.max()):g}")
    return arr


def tolerance_for(dtype, n: int = 1) -> float:
    """A round-off tolerance for a sum of ``n`` numbers of this dtype (float32 gets float32's)."""
    eps = float(np.finfo(dtype).eps) if np.dtype(dtype).kind == "f" else float(np.finfo(np.float64).eps)
    return max(64.0 * eps * max(n, 1), 1e-12)


def tolerance(value: Any, name: str) -> float:
    """A positive finite tolerance."""
    return real(value, name, low=0.0, open_low=True)
