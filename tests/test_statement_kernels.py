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

CXX = shutil.which("g++") or shutil.which("clang++") or shutil.which("c++")
N = 64


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    if CXX is None:
        pytest.skip("no C++ compiler")
    funcs, lines = [], []
    for k, (name, st) in enumerate(sorted(flt.statements().items())):
        body = statement_source(st.symbols, st.expr)
        if body is None:
            continue
        unpack = " ".join(f"const double p{j} = p[{j}][i];" for j in range(len(st.symbols)))
        lines.append(f'extern "C" void st{k}(long n, const double* const* p, double* res) {{\n'
                     f"  for (long i = 0; i < n; ++i) {{ {unpack} double out;\n{body}\n  res[i] = out; }}\n}}")
        funcs.append((name, st, f"st{k}"))
    src = tmp_path_factory.mktemp("kernels") / "statements.cpp"
    src.write_text(statement_preamble(host=True) + "\n".join(lines))
    lib = src.with_suffix(".so")
    subprocess.run([CXX, "-O0", "-shared", "-fPIC", "-o", str(lib), str(src)], check=True, capture_output=True)
    return ctypes.CDLL(str(lib)), funcs


def test_most_statements_have_a_kernel(compiled):
    """Which statements run as one kernel on CuPy: all but those C cannot print (FedDelAvg's named quantities,
    whose stable implementations are array code)."""
    _, funcs = compiled
    names = {n for n, _, _ in funcs}
    missing = sorted(set(flt.statements()) - names)
    assert len(names) >= 0.75 * len(flt.statements())   # FedDelAvg's window sums (72)-(75) use h and eps too
    assert all(n.startswith("feddelavg.") for n in missing), missing
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    assert f"statements ({len(names)} of {len(flt.statements())}, those" in " ".join(readme.split())


# the names a source may use: its parameters and subexpressions, the preamble's, and math functions that CUDA's
# device library and C++'s <cmath> both have (no macro such as M_SQRT2, which the host's <cmath> would hide)
FUNCTIONS = {"pow", "sqrt", "cbrt", "exp", "expm1", "log", "log1p", "fabs", "floor", "ceil", "sin", "cos", "tan",
             "atan", "atan2", "sinh", "cosh", "tanh", "fl_max", "fl_min", "FL_INF", "FL_NAN", "out", "const", "double"}


def test_kernel_sources_name_only_what_cuda_has():
    for name, st in flt.statements().items():
        body = statement_source(st.symbols, st.expr)
        if body is None:
            continue
        names = set(re.findall(r"[A-Za-z_][A-Za-z_0-9]*", re.sub(r"\d+\.\d*(e[-+]?\d+)?", "", body)))
        unknown = {n for n in names if not re.fullmatch(r"[pc]\d+", n)} - FUNCTIONS
        assert not unknown, (name, unknown)


def test_kernel_sources_compute_the_numpy_values(compiled):
    lib, funcs = compiled
    rng = np.random.default_rng(0)
    dptr = ctypes.POINTER(ctypes.c_double)
    compared = 0
    for name, st, sym in funcs:
        # reals in [0.1, 2] (past 1, some powers of negative bases and Max of NaN: NaN where NumPy gives NaN)
        vals = {s.name: (rng.integers(1, 6, N).astype(float) if s.is_integer else rng.uniform(0.1, 2.0, N))
                for s in st.symbols}
        with np.errstate(all="ignore"):
            ref = np.broadcast_to(np.asarray(st(check=False, **vals), dtype=float), (N,))
        arrs = [np.ascontiguousarray(vals[s.name]) for s in st.symbols]
        ptrs = (dptr * len(arrs))(*[a.ctypes.data_as(dptr) for a in arrs])
        out = np.empty(N)
        getattr(lib, sym)(ctypes.c_long(N), ptrs, out.ctypes.data_as(dptr))
        assert np.array_equal(np.isfinite(out), np.isfinite(ref)), name
        ok = np.isfinite(ref)
        np.testing.assert_allclose(out[ok], ref[ok], rtol=1e-9, atol=1e-12 * max(1.0, float(np.max(np.abs(ref[ok]),
                                                                                               initial=0))),
                                   err_msg=name)
        compared += int(ok.sum())
    assert compared > 0.5 * N * len(funcs)
