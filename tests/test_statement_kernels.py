"""The C source of every statement's CuPy kernel (:func:`fltheory._cuda_closed.statement_source`), compiled by the host's
C++ compiler and run beside the NumPy evaluation of the same points.

On CuPy a statement is one elementwise kernel of exactly this source (CUDA's math functions in place of the C
library's), so this checks the printed code, the renaming of the parameters and the common subexpressions on any
machine with a C++ compiler; the GPU run of ``tests/test_backends.py`` checks the kernels themselves.
"""
import ctypes
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import fltheory as flt
import re

from fltheory._cuda_closed import statement_preamble, statement_source
from fltheory.papers.feddelavg import bounds_kernels as _kernels

CXX = shutil.which("g++") or shutil.which("clang++") or shutil.which("c++")
N = 64


def _call(lib, sym, arrays, n):
    """The compiled loop ``sym`` over ``n`` points of the float64 ``arrays`` (its parameters, in order)."""
    dptr = ctypes.POINTER(ctypes.c_double)
    ptrs = (dptr * len(arrays))(*[a.ctypes.data_as(dptr) for a in arrays])
    out = np.empty(n)
    getattr(lib, sym)(ctypes.c_long(n), ptrs, out.ctypes.data_as(dptr))
    return out


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    if CXX is None:
        pytest.skip("no C++ compiler")
    funcs, lines, exprs = [], [], []
    for k, (name, st) in enumerate(sorted(flt.statements().items())):
        body = statement_source(st.symbols, st.expr)
        if body is None:
            continue
        unpack = " ".join(f"const double p{j} = p[{j}][i];" for j in range(len(st.symbols)))
        lines.append(f'extern "C" void st{k}(long n, const double* const* p, double* res) {{\n'
                     f"  for (long i = 0; i < n; ++i) {{ {unpack} double out;\n{body}\n  res[i] = out; }}\n}}")
        funcs.append((name, st, f"st{k}"))
        exprs.append(st.expr)
    src = tmp_path_factory.mktemp("kernels") / "statements.cpp"
    src.write_text(statement_preamble(True, *exprs) + "\n".join(lines))
    lib = src.with_suffix(".so")
    subprocess.run([CXX, "-O0", "-shared", "-fPIC", "-o", str(lib), str(src)], check=True, capture_output=True)
    return ctypes.CDLL(str(lib)), funcs


def test_every_statement_has_a_kernel(compiled):
    """Every statement runs as one kernel on CuPy, FedDelAvg's named quantities as calls of their C functions; the
    README says how many."""
    _, funcs = compiled
    names = {n for n, _, _ in funcs}
    assert names == set(flt.statements())
    assert sum("fdl_" in statement_source(st.symbols, st.expr) for _, st, _ in funcs) >= 30
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    assert f"statements (all {len(names)}," in " ".join(readme.split())


# the names a source may use: its parameters and subexpressions, the preamble's, and math functions that CUDA's
# device library and C++'s <cmath> both have (no macro such as M_SQRT2, which the host's <cmath> would hide)
FUNCTIONS = {"pow", "sqrt", "cbrt", "exp", "expm1", "log", "log1p", "fabs", "floor", "ceil", "sin", "cos", "tan",
             "atan", "atan2", "sinh", "cosh", "tanh", "fmax", "fl_max", "fl_min", "FL_INF", "FL_NAN", "out", "const", "double"}


def _names(text):
    text = re.sub(r"//[^\n]*", "", text)                                  # comments
    return set(re.findall(r"[A-Za-z_][A-Za-z_0-9]*", re.sub(r"\d+\.\d*(e[-+]?\d+)?", "", text)))


def test_kernel_sources_name_only_what_cuda_has():
    named = set(_kernels.C_NAMES.values())
    for name, st in flt.statements().items():
        body = statement_source(st.symbols, st.expr)
        if body is None:
            continue
        unknown = {n for n in _names(body) if not re.fullmatch(r"[pc]\d+", n)} - FUNCTIONS - named
        assert not unknown, (name, unknown)
    # the named quantities' C text: its own functions, locals and C's keywords besides
    own = set(re.findall(r"FL_FN \w+ (\w+)\(", _kernels.C_SOURCE))
    assert named <= own
    local = set(re.findall(r"(?:double|double\*) (\w+)", _kernels.C_SOURCE))
    unknown = _names(_kernels.C_SOURCE) - FUNCTIONS - own - local - {"FL_FN", "void", "return", "if", "int"}
    assert not unknown, unknown


def test_kernel_sources_compute_the_numpy_values(compiled):
    lib, funcs = compiled
    rng = np.random.default_rng(0)
    compared = 0
    for name, st, sym in funcs:
        # reals in [0.1, 2] (past 1, some powers of negative bases and Max of NaN: NaN where NumPy gives NaN)
        vals = {s.name: (rng.integers(1, 6, N).astype(float) if s.is_integer else rng.uniform(0.1, 2.0, N))
                for s in st.symbols}
        with np.errstate(all="ignore"):
            ref = np.broadcast_to(np.asarray(st(check=False, **vals), dtype=float), (N,))
        out = _call(lib, sym, [np.ascontiguousarray(vals[s.name]) for s in st.symbols], N)
        assert np.array_equal(np.isfinite(out), np.isfinite(ref)), name
        ok = np.isfinite(ref)
        np.testing.assert_allclose(out[ok], ref[ok], rtol=1e-9, atol=1e-12 * max(1.0, float(np.max(np.abs(ref[ok]),
                                                                                               initial=0))),
                                   err_msg=name)
        compared += int(ok.sum())
    assert compared > 0.5 * N * len(funcs)


# values at which the stable forms take their other branches: tiny and huge eta beta, powers past the float range,
# alpha at 0+ and 1, k and K at 0 and 1, Delta = 0 and Delta = tau, delta = 0
EXTREME = np.array([0.0, 1e-300, 1e-17, 1e-9, 0.05, 0.099, 0.101, 0.3, 0.49, 0.5, 0.51, 0.9999999, 1.0, 2.0, 3.0,
                    7.0, 60.0, 601.0, 1e4, 1e6])


@pytest.fixture(scope="module")
def named_compiled(tmp_path_factory):
    if CXX is None:
        pytest.skip("no C++ compiler")
    from fltheory.papers.feddelavg import bounds

    lines, funcs = [], []
    for key, cname in _kernels.C_NAMES.items():
        cls = getattr(bounds, f"{key}_fn")
        nargs = cls.nargs if isinstance(cls.nargs, int) else max(cls.nargs)
        call = ", ".join(f"p[{j}][i]" for j in range(nargs))
        lines.append(f'extern "C" void w_{cname}(long n, const double* const* p, double* res) {{\n'
                     f"  for (long i = 0; i < n; ++i) res[i] = {cname}({call});\n}}")
        funcs.append((key, cls, nargs, f"w_{cname}"))
    src = tmp_path_factory.mktemp("named") / "named.cpp"
    src.write_text(statement_preamble(True) + _kernels.C_SOURCE + "\n".join(lines))
    lib = src.with_suffix(".so")
    subprocess.run([CXX, "-O0", "-shared", "-fPIC", "-o", str(lib), str(src)], check=True, capture_output=True)
    return ctypes.CDLL(str(lib)), funcs


# outside the statements' conditions, where the functions may still be evaluated (a masked entry): NaN, infinities,
# negative values, K = 1e9, non-integer steps, Delta > tau
OUTSIDE = np.concatenate([EXTREME, [np.nan, np.inf, -np.inf, -1.0, -0.5, -1e-300, 2.5, 1e9, 2e6]])


@pytest.mark.parametrize("values,seed,finite_share", [(EXTREME, 1, 0.1), (OUTSIDE, 2, 0.0)], ids=["extreme", "outside"])
def test_named_quantities_in_c_are_their_numpy_forms(named_compiled, values, seed, finite_share):
    """Each named quantity's C function against its NumPy implementation at 4,000 points whose arguments are drawn
    from values that take the stable forms' other branches (overflow to inf, underflow, the series, alpha = 1,
    K = 0), and from values the conditions exclude as well (NaN, +-inf, negative inputs, huge counts): the same
    NaNs, the same infinities with their signs, and the finite values to 1e-9 relative."""
    lib, funcs = named_compiled
    rng = np.random.default_rng(seed)
    n = 4000
    for key, cls, nargs, sym in funcs:
        args = [np.ascontiguousarray(rng.choice(values, n)) for _ in range(nargs)]
        with np.errstate(all="ignore"):
            ref = np.broadcast_to(np.asarray(cls._imp_(*args), dtype=float), (n,))
        out = _call(lib, sym, args, n)
        np.testing.assert_array_equal(np.isnan(out), np.isnan(ref), err_msg=key)
        np.testing.assert_array_equal(out[np.isinf(ref)], ref[np.isinf(ref)], err_msg=key)
        ok = np.isfinite(ref)
        assert ok.sum() > finite_share * n, key
        np.testing.assert_allclose(out[ok], ref[ok], rtol=1e-9, atol=0, err_msg=key)
