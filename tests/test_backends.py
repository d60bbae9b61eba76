"""Array type in = array type out, and the same numbers, on every available backend.

Each test builds its inputs in the backend under test (the ``xp`` fixture: NumPy, and CuPy
where a GPU is present) and compares with the NumPy result.  On a machine without CuPy these
run on NumPy only; on a GPU machine they are the CuPy run of the library's main paths.
"""
import re

import numpy as np
import pytest

import fltheory as flt
from fltheory import validation as V
from fltheory.backend import namespace, to_numpy
from fltheory.papers import feddelavg as fd
from fltheory.papers.local_adaptivity import algorithm as la_alg
from fltheory.papers.local_adaptivity import bounds as la_bounds
from fltheory.papers.local_adaptivity import exact as la_exact
from conftest import on_backend
from test_kernels_on_host import zero_federation_runs


def _fed(xp, **kw):
    f = flt.random_quadratic_federation(M=4, d=3, batch=5, kappa=8.0, weights="dirichlet", seed=3, **kw)
    return f, on_backend(f, xp)


def _same(a, b, tol=1e-10):
    np.testing.assert_allclose(to_numpy(a), to_numpy(b), rtol=tol, atol=tol)


def test_federation_constants(xp):
    ref, fed = _fed(xp)
    assert namespace(fed.x_star) is xp
    for name in ("x_star", "L", "mu", "zeta2", "Hbar"):
        _same(getattr(fed, name), getattr(ref, name))
    pts = xp.asarray(np.random.default_rng(0).normal(size=(5, 7, 3)))
    _same(fed.delta_at(pts), ref.delta_at(to_numpy(pts)))
    _same(fed.delta_ball(2.0), ref.delta_ball(2.0))
    perm = [2, 0, 3, 1]
    moved = fed.permuted(perm)
    _same(moved.H, ref.permuted(perm).H, tol=0)
    _same(moved.x_star, ref.x_star)
    _same(fed.take(3).zeta2, ref.take(3).zeta2)


def test_affine_maps(xp):
    rng = np.random.default_rng(1)
    A = 0.3 * rng.normal(size=(4, 3, 3))
    b = rng.normal(size=(4, 3))
    ref, m = flt.AffineMap(A, b), flt.AffineMap(xp.asarray(A), xp.asarray(b))
    _same(m.fixed_point().x, ref.fixed_point().x)
    _same(m.spectral_radius(), ref.spectral_radius())
    _same(m.after(xp.zeros(3), 9), ref.after(np.zeros(3), 9))
    Q = np.eye(3) * 0.1
    _same(m.moments(xp.zeros(3), None, xp.asarray(Q), T=4).cov, ref.moments(np.zeros(3), None, Q, T=4).cov)


def test_keyed_noise_is_the_numpy_paths_across_backends(xp):
    """The same keyed numbers on every namespace: bit for bit where the namespace computes with NumPy's
    functions (array_api_strict), within a few units in the last place on CuPy, whose device log and cos
    round differently from NumPy's in the last place."""
    s = flt.backend.KeyedStream(5, "noise")
    a = s.normal(config=xp.arange(3)[:, None], round=2, client=xp.arange(4)[None, :], size=(6,))
    b = s.normal(config=np.arange(3)[:, None], round=2, client=np.arange(4)[None, :], size=(6,))
    assert namespace(a) is xp
    if "cupy" in xp.__name__:
        assert np.abs(to_numpy(a).view(np.int64) - b.view(np.int64)).max() <= 8
    else:
        assert np.array_equal(to_numpy(a), b)


def _skip_without_gpu():
    from conftest import _backends

    if "cupy" not in [p.id for p in _backends()]:
        pytest.skip("no usable GPU")


def test_keyed_noise_fused_kernel_is_the_plain_formula_on_cupy():
    """The fused CuPy kernel of KeyedStream.normal gives the bits of the unfused array formula on the device."""
    _skip_without_gpu()
    xp = flt.backend.get_backend("cupy")
    s = flt.backend.KeyedStream(5, "noise")
    cfg, cli = xp.arange(7)[:, None], xp.arange(5)[None, :]
    for size in ((), (3,), (4, 3)):
        fused = s.normal(config=cfg, round=3, client=cli, size=size)
        plain = s._normal_plain(cfg, 3, cli, size)
        assert fused.shape == plain.shape == (7, 5) + size
        assert bool(xp.all(fused == plain)), size


@pytest.mark.parametrize("correction", ["none", "local", "joint"])
def test_local_adaptivity_closed_forms(xp, correction):
    ref, fed = _fed(xp)
    P = np.broadcast_to(np.diag([0.5, 1.0, 2.0]), (5, 4, 3, 3)).copy()
    eta = 0.3 / np.asarray(ref.L)[:, None]
    kw = dict(eta=eta, tau=flt.per_client([1, 3, 5, 7]), correction=correction)
    x = la_exact.fixed_point(fed, precond=xp.asarray(P), **{**kw, "eta": xp.asarray(eta)}).x
    assert namespace(x) is xp
    _same(x, la_exact.fixed_point(ref, precond=P, **kw).x)
    _same(la_exact.alpha_max(fed, precond=xp.asarray(P), **{**kw, "eta": xp.asarray(eta)}),
          la_exact.alpha_max(ref, precond=P, **kw))


@pytest.mark.parametrize("noise_version", [1, 2, 3])
def test_local_adaptivity_simulator_and_noise(xp, noise_version):
    ref, fed = _fed(xp, sigma2=0.05)
    kw = dict(rounds=6, eta=0.05, tau=3, client_opt="adagrad", correction="local", alpha=0.5, seed=4,
              noise_version=noise_version)
    out = la_alg.fedopt(fed, x0=xp.zeros(3), **kw)
    assert namespace(out.x) is xp
    _same(out.x, la_alg.fedopt(ref, x0=np.zeros(3), **kw).x)


@pytest.mark.parametrize("correction", ["none", "local"])
def test_local_adaptivity_fixed_preconditioners(xp, correction):
    """Clients with fixed SPD preconditioners (on CuPy: the kernel of whole rounds with the GD server, one kernel
    per round with server momentum), noisy, with and without local correction."""
    ref, fed = _fed(xp, sigma2=0.05)
    A = np.random.default_rng(7).normal(size=(5, 4, 3, 3))
    P = A @ np.swapaxes(A, -1, -2) / 3 + 0.5 * np.eye(3)
    kw = dict(rounds=5, eta=0.05, tau=flt.per_client([1, 3, 2, 3]), client_opt="precond", correction=correction,
              alpha=0.7, seed=2, noise_version=3)
    for server_opt in ("sgd", "momentum"):
        out = la_alg.fedopt(fed, x0=xp.zeros(3), precond=xp.asarray(P), server_opt=server_opt, **kw)
        assert namespace(out.x) is xp
        want = la_alg.fedopt(ref, x0=np.zeros(3), precond=P, server_opt=server_opt, **kw)
        _same(out.x, want.x)
        _same(out.N, want.N)


def test_fixed_preconditioners_must_be_spd_on_the_backend(xp):
    """One indefinite or one non-symmetric P_i among 5 x 4 is refused by name (the Cholesky test: on CuPy a failed
    batched factorisation leaves NaN, NumPy raises)."""
    _, fed = _fed(xp)
    P = np.broadcast_to(np.eye(3) + 0.3, (5, 4, 3, 3)).copy()
    bad = P.copy()
    bad[3, 2] = np.diag([1.0, -0.5, 2.0])
    with pytest.raises(V.InputError, match="precond must be positive definite"):
        la_alg.fedopt(fed, x0=xp.zeros(3), rounds=1, eta=0.05, tau=2, client_opt="precond", precond=xp.asarray(bad))
    bad = P.copy()
    bad[1, 0, 0, 2] += 1e-6
    with pytest.raises(V.InputError, match="precond must be symmetric"):
        la_alg.fedopt(fed, x0=xp.zeros(3), rounds=1, eta=0.05, tau=2, client_opt="precond", precond=xp.asarray(bad))


def test_statements_evaluate_on_the_backend(xp):
    st = la_bounds.theorem1_recursion
    alpha = xp.linspace(0.1, 1.0, 7)
    out = st.grid(alpha=alpha, hbar=0.5, Cq=0.01, r_t=1.0, outer=True)
    assert namespace(out) is xp
    _same(out, st.grid(alpha=np.linspace(0.1, 1.0, 7), hbar=0.5, Cq=0.01, r_t=1.0, outer=True))


def test_every_statement_evaluates_on_the_backend_as_on_numpy(xp):
    """All statements of all papers, value and conditions (mask=True), named quantities included: the backend's
    numbers are NumPy's (the standard's names stand in for the NumPy printer's)."""
    for name, st in flt.statements().items():
        vals = {sym.name: np.array([0.3, 0.7, 2.0]) + (0.05 + 0.1 * (i % 3)) * i for i, sym in enumerate(st.symbols)}
        want = st(mask=True, **vals)
        got = st(mask=True, **{k: xp.asarray(v) for k, v in vals.items()})
        assert namespace(got.value) is xp, name
        np.testing.assert_array_equal(to_numpy(got.holds), want.holds, err_msg=name)
        np.testing.assert_allclose(to_numpy(got.value), want.value, rtol=1e-12, atol=0, equal_nan=True, err_msg=name)


def test_feddelavg_simulator_and_period_map(xp):
    ref, fed = _fed(xp)
    kw = dict(eta=0.05, tau=4, Delta=2, alpha=0.5)
    res = fd.feddelavg(fed, K=6, **kw)
    _same(res.gap, fd.feddelavg(ref, K=6, **kw).gap)
    _same(fd.exact.fixed_point(fed, **kw).w_bar, fd.exact.fixed_point(ref, **kw).w_bar)
    _same(fd.exact.asymptotic_gap(fed, **kw), fd.exact.asymptotic_gap(ref, **kw))
    a = fd.alpha_star(eta=xp.asarray([0.02, 0.2]), beta=1.0, L=1.0, delta=0.5, tau=10, Delta=9)
    assert namespace(a) is xp
    _same(a[0], 0.58848729671017, tol=1e-12)


@pytest.mark.parametrize("value,checks", [
    ([1.0, np.nan], {}), ([np.inf], {}), ([True, False], {}), ([1 + 2j], {}), (np.zeros(0), {}),
    ([1.0, 2.0], {"ndim": 2}), ([[1.0, 2.0]], {"shape": (3,)}), ([-1.0, 2.0], {"low": 0.0}),
    ([0.0, 2.0], {"low": 0.0, "open_low": True}), ([1.0, 7.0], {"high": 5.0}), ([1.5], {"kind": "integer"}),
])
def test_doors_take_backend_arrays_as_numpy_arrays(xp, value, checks):
    """validation.array refuses a backend array with the error it gives the same NumPy array (naming the parameter),
    and accepts it into its own namespace otherwise."""
    from fltheory import validation as V

    errors = []
    for arr in (np.asarray(value), xp.asarray(np.asarray(value))):
        with pytest.raises((V.InputError, V.InputTypeError)) as info:
            V.array(arr, "eta", **checks)
        errors.append((type(info.value), str(info.value)))
    assert errors[0] == errors[1] and "eta" in errors[1][1]
    ok = V.array(xp.asarray([1.0, 2.0]), "eta", low=0.0, ndim=1)
    assert namespace(ok) is xp
    asym = xp.asarray([[[1.0, 0.5], [0.0, 1.0]]])
    with pytest.raises(flt.InputError, match="H must be symmetric"):
        flt.QuadraticFederation(asym, xp.zeros((1, 2)))


@pytest.mark.parametrize("bad,checks,message", [
    (np.nan, {}, "must be finite"), (-1.0, {"low": 0.0}, "must be >= 0"), (0.0, {"low": 0.0, "open_low": True},
    "must be > 0"), (9e4, {"high": 5e4}, "must be <= 50000"), (2.5, {"kind": "integer"}, "non-integral"),
    (np.inf, {"kind": "integer"}, "finite integer"), (2.0**63, {"kind": "integer"}, "magnitude")])
def test_doors_read_a_broadcast_view_once_and_still_see_every_value(xp, bad, checks, message):
    """A sweep broadcast over clients (a view with stride 0) is checked over its distinct entries, and the one bad
    entry among 10^4 configurations x 50 clients is still found, as in the same values copied."""
    col = np.arange(1.0, 10**4 + 1)
    col[7777] = bad
    for value in (xp.broadcast_to(xp.asarray(col)[:, None], (10**4, 50)),
                  xp.asarray(np.ascontiguousarray(np.broadcast_to(col[:, None], (10**4, 50))))):
        with pytest.raises((V.InputError, V.InputTypeError), match=message):
            V.array(value, "eta", **checks)
    ok = xp.broadcast_to(xp.asarray(np.arange(1.0, 10**4 + 1))[:, None], (10**4, 50))
    out = V.array(ok, "eta", **checks)
    assert out.shape == (10**4, 50) and float(xp.min(out)) == 1.0 and float(xp.max(out)) == 10**4
    assert V.distinct(np.broadcast_to(np.arange(3.0)[:, None], (3, 4))).shape == (3, 1)


def test_keyed_normal_blocked_numpy_path_is_bit_for_bit_the_generic_formula(monkeypatch):
    """The in-place, blocked NumPy path of KeyedStream.normal gives exactly the numbers of the plain
    formula (the one CuPy runs), across block boundaries and for every shape of keys and sizes."""
    import fltheory.backend as bk

    s = bk.KeyedStream(11, "noise")
    plain = s._normal_plain

    monkeypatch.setattr(bk, "_NORMAL_BLOCK", 7)   # many blocks, ragged last block, rows < size
    cases = [(np.arange(13)[:, None], 2, np.arange(3)[None, :], (5,)), (0, 0, 0, ()), (4, np.arange(9), 1, (2, 3)),
             (np.arange(2**33, 2**33 + 4), 2**40, 7, (11,))]
    for config, rnd, client, size in cases:
        got = s.normal(config=config, round=rnd, client=client, size=size)
        want = plain(config, rnd, client, size)
        assert got.shape == want.shape and np.array_equal(got, want)


def test_the_gpu_stand_in_refuses_what_a_gpu_refuses():
    """array_api_strict on device1 is a faithful stand-in: no np.asarray, no mixing with CPU arrays; the
    package's namespace of such arrays is bound to the device, and to_numpy is the named way to the host."""
    strict = pytest.importorskip("array_api_strict")
    from fltheory.backend import device_of, on_device, to_numpy

    dev = strict.Device("device1")
    xp = on_device(strict, dev)
    a = xp.asarray([1.0, 2.0])
    with pytest.raises(RuntimeError):
        np.asarray(a)
    with pytest.raises(ValueError):
        a + strict.asarray([1.0, 2.0])
    assert namespace(a) is xp and device_of(xp) == dev and xp.zeros(3).device == dev
    assert on_device(strict, strict.__array_namespace_info__().default_device()) is strict
    assert namespace(strict.asarray([1.0])) is strict
    assert to_numpy(a).tolist() == [1.0, 2.0]
    with pytest.raises(flt.InputError, match="different devices"):
        namespace(a, strict.asarray([1.0]))


def test_host_side_parameters_come_off_the_device_through_the_doors(xp):
    """0-d device arrays are accepted where an integer or a real belongs (read on the host, explicitly)."""
    assert V.integer(xp.asarray(5), "tau", low=1) == 5
    assert V.real(xp.asarray(0.25), "eta", low=0.0) == 0.25
    host = V.array(xp.asarray([1.0, 2.0]), "Delta", xp=np)
    assert isinstance(host, np.ndarray) and host.tolist() == [1.0, 2.0]
    with pytest.raises(flt.InputError, match="tau"):
        V.integer(xp.asarray(0), "tau", low=1)


def test_size_limits_come_from_the_devices_free_memory(xp):
    """A refusal names the device, its free memory and the estimate; the limit is a quarter of what is free."""
    from fltheory.backend import available_memory

    free, where = available_memory(xp)
    fit = int(free * V.MEMORY_FRACTION) // 8
    V.check_size(fit // 2, "the fitting array", xp=xp)     # within it (halved: free memory moves between reads)
    with pytest.raises(flt.InputError, match=rf"the big array would hold .* where {re.escape(where)} has .* GiB free"):
        V.check_size(2 * fit, "the big array", xp=xp)
    with pytest.raises(flt.InputError, match="over the limit of 10"):   # a stated cap on the work still applies
        V.check_size(11, "the work", xp=xp, limit=10)


# (d, M, client_opt, correction, noise, server_opt): the GD server runs the kernel of whole rounds, momentum the
# kernel of one round's local runs; noise none, diagonal (sigma^2 I: the kernels' diagonal mode) or dense; M = 3
# leaves a padding group of lanes in the last warp of a block
FUSED_CASES = [
    (1, 4, "sgd", "none", "diag", "sgd"), (5, 3, "sgd", "none", "dense", "sgd"), (5, 3, "sgd", "local", "diag", "sgd"),
    (16, 3, "sgd", "none", "diag", "sgd"), (17, 4, "sgd", "none", "dense", "momentum"),
    (5, 4, "adagrad", "local", "none", "sgd"), (16, 4, "adagrad", "local", "dense", "sgd"),
    (17, 3, "adagrad", "local", "diag", "sgd"), (16, 4, "sgd", "none", "none", "momentum"),
    (10, 3, "adagrad", "local", "diag", "momentum"), (16, 3, "sgd", "none", "diag", "momentum"),
]


@pytest.mark.parametrize("version", [1, 2, 3])
@pytest.mark.parametrize("chunk", [8, 1])
@pytest.mark.parametrize("d,tau", [(1, 3), (3, 9), (16, 5)])
def test_noise_inside_the_fused_kernels_is_the_streams_on_cupy(monkeypatch, version, chunk, d, tau):
    """The keyed noise drawn inside FedOpt's kernels is the stream's, bit for bit.  With H_i = 0, x = x_i* = 0,
    eta = 1 and a unit diagonal noise factor, a local step is y <- y - z_k exactly, so a client's delta is
    -(-z_0 - z_1 - ...) and the whole-round kernel's Delta the sum of the clients' in client order: the test
    repeats both from the stream.  Versions 2 and 3 (portable, --fmad=false) against the NumPy path; version 1
    (the device's log and cos) against the CuPy stream.  The noise of up to ``chunk`` steps is drawn at once (tau = 9:
    two chunks of 5), its step keys hashed by the group's lanes (W >= chunk) or by every lane.  The runs and their
    reference: ``test_kernels_on_host.zero_federation_runs`` (there on the host stand-in)."""
    _skip_without_gpu()
    import cupy as cp

    from fltheory import _cuda

    monkeypatch.setattr(_cuda, "NOISE_CHUNK", chunk)
    got, delta, Got, Delta = zero_federation_runs(_cuda, cp, version=version, d=d, tau=tau)
    assert np.array_equal(got.view(np.uint64), delta.view(np.uint64))
    assert np.array_equal(Got.view(np.uint64), Delta.view(np.uint64))


@pytest.mark.parametrize("noise_version", [1, 2, 3])
@pytest.mark.parametrize("d,M,client_opt,correction,noise,server_opt", FUSED_CASES)
def test_fused_local_runs_are_the_array_code_on_cupy(monkeypatch, d, M, client_opt, correction, noise, server_opt,
                                                     noise_version):
    """FedOpt's CuPy kernels (quadratic clients, client SGD/AdaGrad, keyed noise; whole rounds with the GD server,
    one round's local runs otherwise) against the array code on the device and against NumPy: per-client tau
    (inactive steps), a batch of step sizes, padding lanes (d < W) and padding clients, recorded trajectories."""
    _skip_without_gpu()
    xp = flt.backend.get_backend("cupy")
    ref = flt.random_quadratic_federation(M=M, d=d, batch=3, kappa=5.0, weights="dirichlet", seed=2,
                                          sigma2=0.1 if noise == "diag" else None)
    if noise == "dense":
        A = 0.3 * np.random.default_rng(5).normal(size=(3, M, d, d))
        ref = flt.QuadraticFederation(ref.H, ref.x_opt, ref.weights, noise_cov=A @ np.swapaxes(A, -1, -2))
    fed = on_backend(ref, xp)
    eta = np.array([[0.02], [0.05], [0.1]]) * np.array([1.0, 0.5, 1.0, 0.8])[:M]
    kw = dict(rounds=4, tau=flt.per_client([1, 2, 3, 3][:M]), client_opt=client_opt, seed=11, correction=correction,
              noise_version=noise_version,
              alpha=0.7, server_opt=server_opt, record_every=3)
    fused = la_alg.fedopt(fed, x0=xp.zeros(d), eta=xp.asarray(eta), **kw)
    monkeypatch.setattr(la_alg, "FUSED_CUDA", False)
    plain = la_alg.fedopt(fed, x0=xp.zeros(d), eta=xp.asarray(eta), **kw)
    host = la_alg.fedopt(ref, x0=np.zeros(d), eta=eta, **kw)
    for name in ("x", "N", "Delta", "omega", "trajectory"):
        np.testing.assert_allclose(to_numpy(getattr(fused, name)), to_numpy(getattr(plain, name)), rtol=1e-12,
                                   atol=1e-13, err_msg=name)
    assert fused.rounds_recorded.tolist() == plain.rounds_recorded.tolist() == [0, 3, 4]
    np.testing.assert_allclose(to_numpy(fused.x), host.x, rtol=1e-10, atol=1e-12)


def test_fused_kernel_choice_on_cupy():
    """Which runs the kernels take (and so which the test above covers): whole rounds for the GD server with full
    participation and no or local correction when a configuration's clients fit a block; one round's local runs
    for other servers, sampling or joint correction; the array code for recorded local steps or other clients."""
    _skip_without_gpu()
    xp = flt.backend.get_backend("cupy")
    fed = on_backend(flt.random_quadratic_federation(M=4, d=5, batch=2, seed=0), xp)
    s, _ = la_alg._setup(fed, xp.zeros(5), eta=0.1, tau=2, client_opt="sgd", precond=None, beta1=None, beta2=None,
                         v0=None, eps=None, bias_correction=False, n_mode="exact", noise=True, seed=0, config=None,
                         client_ids=None, extra_batch=())
    assert la_alg._fused_rounds_cuda(fed, s, "sgd", None, "local")
    assert not la_alg._fused_rounds_cuda(fed, s, "momentum", None, "none")
    assert not la_alg._fused_rounds_cuda(fed, s, "sgd", 2, "none")
    assert not la_alg._fused_rounds_cuda(fed, s, "sgd", None, "joint")
    assert la_alg._fused_cuda(fed, s, False) and not la_alg._fused_cuda(fed, s, True)
    big = on_backend(flt.random_quadratic_federation(M=65, d=16, seed=0), xp)
    sb, _ = la_alg._setup(big, xp.zeros(16), eta=0.01, tau=2, client_opt="sgd", precond=None, beta1=None, beta2=None,
                          v0=None, eps=None, bias_correction=False, n_mode="exact", noise=True, seed=0, config=None,
                          client_ids=None, extra_batch=())
    assert not la_alg._fused_rounds_cuda(big, sb, "sgd", None, "none")   # 65 x 16 lanes > 1024: one round at a time


@pytest.mark.parametrize("d", [1, 3, 10, 16])
@pytest.mark.parametrize("with_p", [False, True])
@pytest.mark.parametrize("tau_rows", [False, True])
def test_fixed_point_kernel_is_the_array_code_on_cupy(monkeypatch, d, with_p, tau_rows):
    """Theorem 2's closed form by the CuPy kernel (a configuration per group of threads) against the array code
    on the device and NumPy: distinct federations, per-client tau (or tau per client and per configuration of the
    batch's last axis: the kernel reads its row b % 3), a diagonal P, a (2, 3) batch."""
    _skip_without_gpu()
    xp = flt.backend.get_backend("cupy")
    ref = flt.random_quadratic_federation(M=5, d=d, batch=6, kappa=20.0, weights="dirichlet", seed=4)
    ref = flt.QuadraticFederation(ref.H.reshape(2, 3, 5, d, d), ref.x_opt.reshape(2, 3, 5, d), ref.weights.reshape(2, 3, 5))
    fed = on_backend(ref, xp)
    P = np.broadcast_to(np.diag(np.linspace(0.5, 2.0, d)), (2, 3, 5, d, d)).copy() if with_p else None
    eta = 0.3 / np.linalg.eigvalsh(ref.H)[..., -1] / (2.0 if with_p else 1.0)
    tau = np.array([[1, 2, 5, 3, 8], [2, 1, 3, 4, 1], [6, 2, 2, 1, 3]]) if tau_rows else None
    kw = dict(tau=xp.asarray(tau) if tau_rows else flt.per_client([1, 2, 5, 3, 8]),
              precond=None if P is None else xp.asarray(P))
    got = la_exact.fixed_point(fed, eta=xp.asarray(eta), **kw)
    monkeypatch.setattr(la_exact, "FUSED_CUDA", False)
    plain = la_exact.fixed_point(fed, eta=xp.asarray(eta), **kw)
    host = la_exact.fixed_point(ref, eta=eta, **{**kw, "precond": P, "tau": tau if tau_rows else kw["tau"]})
    for name in ("x", "residual", "condition"):
        np.testing.assert_allclose(to_numpy(getattr(got, name)), to_numpy(getattr(plain, name)), rtol=1e-9,
                                   atol=1e-12, err_msg=name)
    np.testing.assert_allclose(to_numpy(got.x), host.x, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(to_numpy(got.spectral_radius), to_numpy(plain.spectral_radius), rtol=1e-10)
