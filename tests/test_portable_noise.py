"""Version 2 of the keyed normal noise: ``log`` and ``cos(2 pi u)`` from IEEE-754 basic operations in one order.

* The C text of the same functions (``fltheory._cuda._PORTABLE_CODE``, meant for CUDA with ``--fmad=false``) is
  compiled here by the host's compilers with ``-O2 -ffp-contract=off -fno-fast-math`` and gives the bits of
  ``KeyedStream(..., version=2).normal`` for 200,000 (key, counter) pairs and of the two functions at their
  extremes.  This checks the text on the host only; it has not run on a GPU.
* Both functions are within 2 ulp (measured: 1) of ``np.log`` and of a reference for ``cos(2 pi u)`` that corrects
  ``np.cos`` for the rounding of its argument, over 10^6 uniforms of the stream and the extremes.
* The draws are standard normal by their moments, a tail fraction and the Kolmogorov-Smirnov statistic.
* Version 1 (the default) is the stream as it was: values pinned from before version 2 existed.
"""
import ctypes
import shutil
import subprocess

import numpy as np
import pytest

from fltheory import backend as bk
from fltheory._cuda import _PORTABLE_CODE
from fltheory.backend import KeyedStream
from fltheory.validation import InputError, InputTypeError

FLAGS = ["-O2", "-ffp-contract=off", "-fno-fast-math", "-shared", "-fPIC"]
COMPILERS = [(c, lang) for c, lang in ((shutil.which("g++") or shutil.which("c++"), "c++"), (shutil.which("cc"), "c"))
             if c is not None]

HARNESS = r"""
#ifdef __cplusplus
#define FL_EXPORT extern "C"
#else
#define FL_EXPORT
#endif
FL_EXPORT void normals(long n, const unsigned long long* h, long per, double* out) {
    for (long i = 0; i < n; ++i) out[i] = fl_normal_v2(h[i / per], (unsigned long long)(i % per));
}
FL_EXPORT void normals_v3(long n, const unsigned long long* h, long per, double* out) {
    for (long i = 0; i < n; ++i) out[i] = fl_normal_v3(h[i / per], (unsigned long long)(i % per));
}
FL_EXPORT void sines(long n, const double* x, double* out) {
    for (long i = 0; i < n; ++i) { double c; fl_portable_sincos_2pi(x[i], &out[i], &c); }
}
FL_EXPORT void logs(long n, const double* x, double* out) { for (long i = 0; i < n; ++i) out[i] = fl_portable_log(x[i]); }
FL_EXPORT void coss(long n, const double* x, double* out) {
    for (long i = 0; i < n; ++i) out[i] = fl_portable_cos_2pi(x[i]);
}
"""


def bits(a):
    return np.ascontiguousarray(a, dtype=np.float64).view(np.uint64)


def ulps(a, ref):
    """|a - ref| in units of the last place of ``ref`` (0 where both are 0, inf where only ``ref`` is)."""
    err = np.abs(a - ref) / np.spacing(np.abs(ref))
    return np.where(ref == 0, np.where(a == 0, 0.0, np.inf), err)


def stream_uniforms(n=10**6):
    """``n`` uniforms of the stream's form ((k + 1/2) 2^-53, k < 2^53) with k spread over every exponent, and the
    extremes: the smallest (2^-54), k near 2^53 (u = 1 - 2^-53 ... and u = 1, where k + 1/2 rounds up), and u around
    the quarter turns 1/8, 3/8, 5/8, 7/8 where the reduction of cos changes quadrant."""
    rng = np.random.default_rng(2026)
    k = rng.integers(0, 2**53, n // 2, dtype=np.uint64)
    k2 = rng.integers(0, 2**53, n // 2, dtype=np.uint64) >> rng.integers(0, 53, n // 2).astype(np.uint64)
    edges = [np.arange(0, 500, dtype=np.uint64), np.uint64(2**53 - 1) - np.arange(0, 500, dtype=np.uint64)]
    edges += [(j * 2**50 + np.arange(-300, 300)).astype(np.uint64) for j in range(1, 8)]
    u = (np.concatenate([k, k2] + edges).astype(np.float64) + 0.5) * 2.0**-53
    assert u.min() == 2.0**-54 and u.max() == 1.0
    return u


@pytest.fixture(scope="module", params=COMPILERS, ids=[lang for _, lang in COMPILERS])
def portable_lib(request, tmp_path_factory):
    compiler, lang = request.param
    src = tmp_path_factory.mktemp("portable") / ("noise.cpp" if lang == "c++" else "noise.c")
    src.write_text(_PORTABLE_CODE + HARNESS)
    lib = src.with_suffix(".so")
    subprocess.run([compiler, *FLAGS, "-o", str(lib), str(src)], check=True, capture_output=True)
    return ctypes.CDLL(str(lib))


def c_call(lib, name, x):
    dptr = ctypes.POINTER(ctypes.c_double)
    x = np.ascontiguousarray(x, dtype=np.float64)
    out = np.empty_like(x)
    getattr(lib, name)(ctypes.c_long(x.size), x.ctypes.data_as(dptr), out.ctypes.data_as(dptr))
    return out


@pytest.mark.skipif(not COMPILERS, reason="no C or C++ compiler")
def test_c_text_gives_the_numpy_bits(portable_lib):
    """(a) The compiled C text and the NumPy path agree bit for bit: 200,000 normal numbers (1000 configurations x
    10 clients x 20 counters) and both functions on 10^6 uniforms with the extremes."""
    s = KeyedStream(12345, "noise", version=2)
    config, client = np.arange(1000)[:, None], np.arange(10)[None, :]
    z = s.normal(config=config, round=7, client=client, size=(20,))
    h = np.ascontiguousarray(s._key_hash(config, 7, client).reshape(-1))
    out = np.empty(z.size)
    portable_lib.normals(ctypes.c_long(out.size), h.ctypes.data_as(ctypes.POINTER(ctypes.c_ulonglong)),
                         ctypes.c_long(20), out.ctypes.data_as(ctypes.POINTER(ctypes.c_double)))
    assert out.size == 200_000
    assert np.array_equal(bits(out), bits(z.reshape(-1)))
    s3 = KeyedStream(12345, "noise", version=3)
    for per in (20, 7):   # version 3: both numbers of each pair; an odd size leaves the last pair's sine unused
        z3 = s3.normal(config=config, round=7, client=client, size=(per,))
        out = np.empty(z3.size)
        portable_lib.normals_v3(ctypes.c_long(out.size), h.ctypes.data_as(ctypes.POINTER(ctypes.c_ulonglong)),
                                ctypes.c_long(per), out.ctypes.data_as(ctypes.POINTER(ctypes.c_double)))
        assert np.array_equal(bits(out), bits(z3.reshape(-1)))
    u = stream_uniforms()
    assert np.array_equal(bits(c_call(portable_lib, "logs", u)), bits(bk._portable_log(u)))
    assert np.array_equal(bits(c_call(portable_lib, "coss", u)), bits(bk._portable_cos_2pi(u)))
    assert np.array_equal(bits(c_call(portable_lib, "sines", u)), bits(bk._portable_sincos_2pi(u)[0]))


def test_array_api_path_gives_the_numpy_bits():
    """The ``array_api_strict`` path (``_normal_plain``, which finds the exponent by halving intervals instead of by
    the bits) gives the NumPy path's bits (versions 2 and 3), for the normal numbers and for both functions at the extremes."""
    xs = pytest.importorskip("array_api_strict")
    for version, size in ((2, (10,)), (3, (10,)), (3, (3, 3))):   # version 3 with an odd count of numbers
        s = KeyedStream(3, "noise", version=version)
        z = s.normal(config=np.arange(200)[:, None], round=1, client=np.arange(5)[None, :], size=size)
        zs = s.normal(config=xs.asarray(np.arange(200)[:, None]), round=1, client=xs.asarray(np.arange(5)[None, :]),
                      size=size)
        assert np.array_equal(bits(np.asarray(zs)), bits(z)), (version, size)
    u = stream_uniforms(10**5)
    for f in (bk._portable_log, bk._portable_cos_2pi):
        assert np.array_equal(bits(np.asarray(f(xs.asarray(u), xs))), bits(f(u)))


def test_accuracy_within_two_ulp():
    """(b) Over 10^6 uniforms and the extremes: log within 2 ulp of ``np.log``; cos(2 pi u) within 2 ulp of
    ``np.cos(x) - np.sin(x) dx``, where ``x + dx`` is ``2 pi u`` as a double-double (``np.cos(2 * np.pi * u)`` itself
    is off by the rounding of its argument: near a zero of cos by many ulp), and within 2^-50 of
    ``np.cos(2 * np.pi * u)`` (that rounding moves it by at most about 1.5 * 2^-51)."""
    u = stream_uniforms()
    lg = bk._portable_log(u)
    assert ulps(lg, np.log(u)).max() <= 2
    assert np.all(lg[u == 1.0] == 0.0) and np.all(lg[u == 2.0**-54] == np.log(2.0**-54))
    two_pi_lo = 2.4492935982947064e-16            # 2 pi - 2 * np.pi, rounded
    x = 2.0 * np.pi * u
    uh, ul = bk._veltkamp(u)
    ph, pl = bk._veltkamp(2.0 * np.pi)
    dx = (((uh * ph - x) + uh * pl + ul * ph) + ul * pl) + u * two_pi_lo
    ref = np.cos(x) - np.sin(x) * dx
    c = bk._portable_cos_2pi(u)
    assert ulps(c, ref).max() <= 2
    assert np.abs(c - np.cos(x)).max() <= 2.0**-50
    assert np.all(c[u == 1.0] == 1.0)
    sn = bk._portable_sincos_2pi(u)[0]              # the sine of version 3, against the same reference
    assert ulps(sn, np.sin(x) + np.cos(x) * dx).max() <= 2
    assert np.abs(sn - np.sin(x)).max() <= 2.0**-50
    quarter = bk._portable_cos_2pi(np.array([0.0, 0.125, 0.25, 0.5, 0.75]))
    assert quarter.tolist() == [1.0, float(np.sqrt(0.5)), -0.0, -1.0, 0.0]


def test_draws_are_standard_normal():
    """(c) 10^5 draws: mean within 0.015 (4.7 standard errors), variance within 0.02 of 1 (4.5 standard errors),
    P(|z| > 2) within 0.003 of 0.0455 (4.5 standard errors), Kolmogorov-Smirnov statistic below 1.95 / sqrt(n)
    (p about 0.001); and the same uniforms as version 1: within 1e-13 of its draws."""
    from scipy import stats  # noqa: PLC0415

    z = KeyedStream(99, "noise", version=2).normal(config=np.arange(1000)[:, None], round=2, size=(100,)).reshape(-1)
    n = z.size
    assert abs(z.mean()) < 0.015
    assert abs(z.var() - 1.0) < 0.02
    assert abs(np.mean(np.abs(z) > 2.0) - 2 * stats.norm.sf(2.0)) < 0.003
    assert stats.kstest(z, "norm").statistic < 1.95 / np.sqrt(n)
    z1 = KeyedStream(99, "noise").normal(config=np.arange(1000)[:, None], round=2, size=(100,)).reshape(-1)
    assert np.abs(z - z1).max() < 1e-13 and not np.array_equal(z, z1)
    # version 3 (both numbers of each pair): the same tests, and the two numbers of a pair uncorrelated
    z3 = KeyedStream(99, "noise", version=3).normal(config=np.arange(1000)[:, None], round=2, size=(100,))
    assert abs(z3.mean()) < 0.015 and abs(z3.var() - 1.0) < 0.02
    assert abs(np.mean(np.abs(z3) > 2.0) - 2 * stats.norm.sf(2.0)) < 0.003
    assert stats.kstest(z3.reshape(-1), "norm").statistic < 1.95 / np.sqrt(n)
    assert abs(np.mean(z3[..., 0::2] * z3[..., 1::2])) < 0.02     # 5 * 10^4 products of variance 1: 4.5 errors


def test_version_1_is_unchanged_and_uniform_is_shared():
    """(d) Values of the default stream computed before version 2 existed; ``uniform`` the same for both versions."""
    s = KeyedStream(7, "noise")
    z = s.normal(config=np.array([[0], [3]]), round=5, client=np.array([[0, 2]]), size=(2,))
    assert [float.hex(float(v)) for v in z.reshape(-1)] == [
        "-0x1.2263943989fe1p-4", "-0x1.fda1cc83cf655p-2", "-0x1.dcd05fedb8a08p-1", "0x1.31cd2c35c631ep+0",
        "-0x1.c5476fb216dc2p+0", "-0x1.99421693571cbp-3", "0x1.6d15a511bf89fp-1", "0x1.7e6600b080ef5p-2"]
    assert float.hex(float(KeyedStream(0, 0).normal(size=(1,))[0])) == "-0x1.8744f1b93079ep-2"
    u = s.uniform(config=1, round=2, client=3, size=(3,))
    assert [float.hex(float(v)) for v in u] == ["0x1.5744a6bc44ca0p-7", "0x1.0347cb45b704dp-2", "0x1.2725a0f753202p-3"]
    assert np.array_equal(KeyedStream(7, "noise", version=2).uniform(config=1, round=2, client=3, size=(3,)), u)


@pytest.mark.parametrize("version, error", [(4, InputError), (0, InputError), ("2", InputTypeError),
                                            (True, InputTypeError), (1.5, InputTypeError)])
def test_bad_version_is_refused_by_name(version, error):
    """(e) Only versions 1, 2 and 3 exist; the error names the parameter."""
    with pytest.raises(error, match="version"):
        KeyedStream(1, "noise", version=version)


def _cupy_or_skip():
    from conftest import _backends  # noqa: PLC0415

    if "cupy" not in [p.id for p in _backends()]:
        pytest.skip("no usable GPU")
    import cupy  # noqa: PLC0415

    return cupy


def test_cupy_kernel_gives_the_numpy_bits():
    """(f) On a GPU: the same C text compiled by NVRTC with ``--fmad=false`` gives the NumPy path's bits:
    ``KeyedStream(version=2).normal`` on CuPy for 2 * 10^6 numbers, and both functions on 10^6 uniforms with the
    extremes (the noise inside the simulator's kernels: ``test_backends``)."""
    cp = _cupy_or_skip()
    from fltheory._cuda import noise_code  # noqa: PLC0415

    s = KeyedStream(12345, "noise", version=2)
    z = s.normal(config=cp.arange(1000)[:, None], round=7, client=cp.arange(100)[None, :], size=(20,))
    ref = s.normal(config=np.arange(1000)[:, None], round=7, client=np.arange(100)[None, :], size=(20,))
    assert z.size == 2 * 10**6 and np.array_equal(bits(cp.asnumpy(z)), bits(ref))
    s3 = KeyedStream(12345, "noise", version=3)
    for per in (20, 7):
        keys = dict(round=7, size=(per,))
        z3 = s3.normal(config=cp.arange(1000)[:, None], client=cp.arange(100)[None, :], **keys)
        ref3 = s3.normal(config=np.arange(1000)[:, None], client=np.arange(100)[None, :], **keys)
        assert np.array_equal(bits(cp.asnumpy(z3)), bits(ref3)), per
    code, _, options = noise_code(2)
    assert options == ("--fmad=false",)
    u = stream_uniforms()
    for fn, ref_fn in (("fl_portable_log", bk._portable_log), ("fl_portable_cos_2pi", bk._portable_cos_2pi)):
        kernel = cp.ElementwiseKernel("float64 u", "float64 y", f"y = {fn}(u);", f"test_{fn}", preamble=code,
                                      options=options)
        assert np.array_equal(bits(cp.asnumpy(kernel(cp.asarray(u)))), bits(ref_fn(u))), fn


def test_simulators_draw_the_version_asked_for():
    """FedOpt's ``noise_version`` reaches the draws, bit for bit: with x = x* = 0, H = I, sigma^2 I = I, eta = 1 and
    one local step, a client's delta is its noise z exactly (g = H 0 + I z, y = 0 - z, delta = 0 - y), so
    ``client_update``'s deltas, and -x after one round of ``fedopt`` and of ``fedopt_loop`` with one client, are
    the stream's numbers of that version; the three versions differ somewhere in these numbers.  The vectorised
    simulator equals the plain loop on a random federation, and a version other than 1, 2 or 3 is refused by
    name."""
    import fltheory as flt  # noqa: PLC0415
    from fltheory.papers.local_adaptivity import algorithm as la  # noqa: PLC0415

    M, d, seed, t = 3, 4, 5, 3
    fed = flt.QuadraticFederation(np.stack([np.eye(d)] * M), np.zeros((M, d)), np.full(M, 1 / M), sigma2=1.0)
    one = flt.QuadraticFederation(np.eye(d)[None], np.zeros((1, d)), np.ones(1), sigma2=1.0)
    draws = {}
    for version in (1, 2, 3):
        stream = KeyedStream(seed, la._NOISE, version=version)
        z = stream.normal(config=0, round=t * la._STEP_KEY, client=np.arange(M), size=(d,))
        cu = la.client_update(fed, x=np.zeros(d), eta=1.0, tau=1, seed=seed, round=t, noise_version=version)
        assert np.array_equal(bits(cu.delta), bits(z)), version
        z0 = stream.normal(config=0, round=0, client=0, size=(d,))
        kw = dict(x0=np.zeros(d), rounds=1, eta=1.0, tau=1, seed=seed, noise_version=version)
        assert np.array_equal(bits(-la.fedopt(one, **kw).x), bits(z0)), version
        assert np.array_equal(bits(-la.fedopt_loop(one, **kw).x), bits(z0)), version
        draws[version] = z
    assert not np.array_equal(draws[1], draws[2]) and not np.array_equal(draws[2], draws[3])
    rnd = flt.random_quadratic_federation(M=3, d=4, batch=2, sigma2=0.2, seed=1)
    kw = dict(x0=np.zeros(4), rounds=5, eta=0.1, tau=3, seed=2)
    for version in (2, 3):
        assert np.allclose(la.fedopt(rnd, noise_version=version, **kw).x,
                           la.fedopt_loop(rnd, noise_version=version, **kw).x, rtol=0, atol=1e-13)
    for bad in (4, 0):
        with pytest.raises(InputError, match="noise_version"):
            la.fedopt(rnd, noise_version=bad, **kw)
        with pytest.raises(InputError, match="noise_version"):
            la.fedopt_loop(rnd, noise_version=bad, **kw)
