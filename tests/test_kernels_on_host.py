"""FedOpt's CUDA kernels (``fltheory._cuda``: the local runs of one round, whole rounds with the GD server) run on
the host by ``host_cuda`` (each CUDA thread a host thread, shuffles and ``__syncthreads`` as barriers), through
``_cuda``'s own Python wrappers: their C text, their launch arguments and the lane arithmetic of the keyed noise
(the noise of several steps drawn at once; version 3's pairs spread over the lanes of several steps) are
checked on any machine with a C++20 compiler.  A GPU run adds NVRTC and the hardware (``test_backends``'s CuPy
tests, the same checks).

* The noise drawn inside the kernels is the stream's, bit for bit (versions 2 and 3: basic operations only; version
  1 with the host's ``log`` and ``cos`` within 4 ulp of NumPy's): with ``H_i = 0``, ``x = x_i* = 0``, ``eta = 1``
  and a unit diagonal noise factor a local step is ``y <- y - z_k`` exactly.
* Both kernels equal the array code on NumPy (``client_update``, ``fedopt``) to 1e-12 on random federations with
  per-client ``tau``, padding lanes (``d < W``) and padding clients, AdaGrad, fixed preconditioners and local
  correction.
"""
import numpy as np
import pytest

import fltheory as flt
from fltheory.backend import KeyedStream
from fltheory.papers.local_adaptivity import algorithm as la

import host_cuda

pytestmark = pytest.mark.skipif(host_cuda.COMPILER is None, reason="no C++ compiler")


def zero_federation_runs(_cuda, xp, *, version, d, tau, B=5, M=3, t=2):
    """``(local_runs delta, its reference, RoundsKernel Delta, its reference)`` as NumPy arrays, on the zero
    federation (H_i = 0, x = x_i* = 0, eta = 1, a unit diagonal noise factor: a local step is y <- y - z_k exactly,
    a client's delta 0 - y, the whole-round kernel's Delta the clients' sum in client order), run by ``_cuda`` on
    the namespace ``xp`` (NumPy with the host stand-in, or CuPy).  The reference repeats those operations on the
    stream's numbers: drawn on NumPy for versions 2 and 3, on ``xp`` for version 1 (the device's log and cos).
    Also used by ``test_backends`` on a GPU."""
    from fltheory.backend import to_numpy  # noqa: PLC0415

    stream = KeyedStream(9, "local_adaptivity.noise", version=version)
    configs, ids = np.arange(B) + 10, np.array([4, 0, 7])[:M]
    common = dict(xp=xp, H=xp.zeros((M, d, d)), x_opt=xp.zeros((M, d)), factor=xp.stack([xp.eye(d)] * M),
                  eta=xp.ones(M), tau=xp.full(M, tau), tau_max=tau, config=xp.asarray(configs),
                  client_ids=xp.asarray(ids), batch=(B,), M=M, d=d, base=int(stream._base), adagrad=False, v0=0.0,
                  eps=0.0, exact_n=True, version=version)
    draw_on = np if version > 1 else xp
    y = np.zeros((B, M, d))
    for k in range(tau):
        y = y - to_numpy(stream.normal(config=draw_on.asarray(configs[:, None]), round=t * 2**32 + k,
                                       client=draw_on.asarray(ids[None, :]), size=(d,)))
    delta = 0.0 - y
    got, _ = _cuda.local_runs(x=xp.zeros((B, d)), round0=t * 2**32, **common)
    rounds = _cuda.RoundsKernel(omega=xp.ones(M), alpha=xp.ones(()), step_key=2**32, local_correction=False, **common)
    rounds(xp.zeros((B, d)), t, t + 1)
    Delta = 0.0
    for m in range(M):
        Delta = Delta + delta[:, m]
    return to_numpy(got), delta, to_numpy(rounds.last_round()[0]), Delta


NOISE_CASES = [   # (version, d, tau, NOISE_CHUNK): chunks of tau steps (5 for tau = 9), W < or >= the chunk
    (1, 3, 9, 8), (1, 16, 5, 8), (1, 3, 9, 1), (2, 1, 3, 8), (2, 3, 9, 3), (2, 17, 7, 8), (2, 16, 5, 1),
    (3, 1, 3, 8), (3, 2, 5, 8), (3, 3, 9, 8), (3, 5, 4, 8), (3, 16, 5, 8), (3, 17, 7, 8), (3, 16, 9, 3),
    (3, 16, 5, 1)]


@pytest.mark.parametrize("version,d,tau,chunk", NOISE_CASES)
def test_noise_inside_the_kernels_is_the_streams(monkeypatch, version, d, tau, chunk):
    """Bit for bit for versions 2 and 3 (the kernels compiled without fused multiply-adds), within 4 ulp for
    version 1 (the host's log and cos against NumPy's).  d = 1, 2, 3, 5, 16, 17 cover one lane per client, version
    3's pairs of one step on 1, 2, 3, 8 and 9 lanes over 1-3 steps per draw, odd d (the last pair's sine unused);
    the noise of 1, 3, 4, 5 or 7 steps drawn at once, with the chunk's step keys hashed by the group's lanes
    (W >= chunk) or by every lane."""
    _cuda = host_cuda.install(monkeypatch)
    monkeypatch.setattr(_cuda, "NOISE_CHUNK", chunk)
    got, delta, Got, Delta = zero_federation_runs(_cuda, np, version=version, d=d, tau=tau)
    if version == 1:
        assert np.abs(got.view(np.int64) - delta.view(np.int64)).max() <= 4
        assert np.abs(Got.view(np.int64) - Delta.view(np.int64)).max() <= 4
    else:
        assert np.array_equal(got.view(np.uint64), delta.view(np.uint64))
        assert np.array_equal(Got.view(np.uint64), Delta.view(np.uint64))


def test_version_3_pairs_are_version_2_at_half_the_counter():
    """Version 3's number of counter 2j is version 2's number of counter j (the same uniforms, r cos), and the odd
    counters are the pairs' r sin (against ``np.sin`` of the same uniform, sign included): the stream the kernels'
    lane arithmetic must reproduce."""
    v2, v3 = (KeyedStream(5, "noise", version=v) for v in (2, 3))
    z2 = v2.normal(config=np.arange(50)[:, None], round=3, client=np.arange(4)[None, :], size=(8,))
    z3 = v3.normal(config=np.arange(50)[:, None], round=3, client=np.arange(4)[None, :], size=(16,))
    assert np.array_equal(z3[..., 0::2], z2)
    from fltheory import backend as bk  # noqa: PLC0415

    keys = (np.arange(50)[:, None], 3, np.arange(4)[None, :], (8,), None)
    u1 = bk._unit(v2._bits(*keys, offset=0)[0], np)
    u2 = bk._unit(v2._bits(*keys, offset=1 << 40)[0], np)
    r = np.sqrt(-2.0 * bk._portable_log(u1))
    np.testing.assert_allclose(z3[..., 1::2], r * np.sin(2 * np.pi * u2), rtol=0, atol=1e-14)   # the sign too


FEDERATIONS = [   # (d, M, client_opt, correction, noise, version, exchange)
    (1, 4, "sgd", "none", "diag", 1, False), (5, 3, "sgd", "none", "dense", 3, True),
    (5, 3, "sgd", "local", "diag", 2, False), (16, 3, "sgd", "none", "diag", 3, True),
    (17, 4, "sgd", "none", "dense", 1, False), (5, 4, "adagrad", "local", "none", 1, True),
    (16, 2, "adagrad", "local", "dense", 3, False), (10, 3, "adagrad", "local", "diag", 2, True),
    (3, 3, "sgd", "none", "diag", 3, False), (1, 3, "sgd", "local", "diag", 3, True),
    (7, 5, "sgd", "none", "diag", 1, True),
    # fixed preconditioners P_i: the step's gradient exchanged again for P_i g, local correction by P_i^{-1}
    (5, 3, "precond", "none", "diag", 3, True), (5, 3, "precond", "local", "dense", 1, False),
    (16, 2, "precond", "local", "diag", 2, True), (3, 4, "precond", "none", "none", 1, False),
    (1, 3, "precond", "local", "diag", 3, True),
]


@pytest.mark.parametrize("d,M,client_opt,correction,noise,version,exchange", FEDERATIONS)
def test_kernels_are_the_array_code(monkeypatch, d, M, client_opt, correction, noise, version, exchange):
    """Both kernels against the array code on NumPy: one round's local runs against ``client_update`` (delta and N),
    the noise factor's diagonal handed over as the simulator does (sigma^2 I: no factorisation, no check),
    whole rounds with the GD server against ``fedopt``, per-client tau, a batch of two step-size rows; coordinates
    exchanged by shuffles or through shared memory (odd d: the last coordinate outside the two-double loads)."""
    _compare_kernels(monkeypatch, d, M, client_opt, correction, noise, version, exchange)


@pytest.mark.parametrize("d,M,client_opt,correction,noise,version", [
    (5, 3, "sgd", "none", "diag", 3), (4, 2, "precond", "local", "dense", 1), (3, 4, "adagrad", "local", "none", 2)])
def test_kernels_read_a_federation_under_a_sweep_by_its_index(monkeypatch, d, M, client_opt, correction, noise,
                                                             version):
    """A federation of two configurations under three rows of step sizes (batch (3, 2)): the kernels read its
    ``H_i``, ``x_i*``, noise factor and ``P_i`` as row ``b % 2`` of configuration ``b`` (not copied three times) and
    still equal the array code."""
    _compare_kernels(monkeypatch, d, M, client_opt, correction, noise, version, True, sweep=3)


def test_operands_are_rows_read_by_the_configurations_index(monkeypatch):
    """``_flat``: an operand's rows and ``n`` (configuration ``b`` reads row ``b % n``), for a batch ``(3, 2)``: one
    row for a shared value, the batch's trailing axis without copies, the whole batch otherwise, tails of ones
    broadcast."""
    _cuda = host_cuda.install(monkeypatch)
    batch, rng = (3, 2), np.random.default_rng(0)
    for shape in [(4,), (1,), (1, 1, 4), (2, 4), (2, 1), (1, 2, 4), (3, 1, 4), (3, 2, 4), (3, 2, 1), (3, 1, 1)]:
        a = rng.normal(size=shape)
        rows, n = _cuda._flat(np, a, batch, (4,))
        full = np.broadcast_to(a, batch + (4,)).reshape(6, 4)
        for b in range(6):
            assert np.array_equal(rows[b % n], full[b]), shape
        assert n == {(4,): 1, (1,): 1, (1, 1, 4): 1, (2, 4): 2, (2, 1): 2, (1, 2, 4): 2}.get(shape, 6), shape
        assert rows.shape == (n, 4) and rows.flags.c_contiguous
    # broadcast views (the set-up's client ids, a sweep over one federation) are read as their distinct rows
    for base, want in [((4,), 1), ((2, 4), 2), ((3, 1, 4), 6), ((1, 2, 1), 2)]:
        a = rng.normal(size=base)
        view = np.broadcast_to(a, batch + (4,))
        rows, n = _cuda._flat(np, view, batch, (4,))
        full = view.reshape(6, 4)
        assert n == want and all(np.array_equal(rows[b % n], full[b]) for b in range(6)), base


def test_an_operand_with_fewer_axes_than_its_tail_is_one_row(monkeypatch):
    """An operand with fewer axes than the tail (one ``P`` of shape ``(d, d)`` for every client, tail ``(M, d, d)``)
    has no batch axes: one row, broadcast like NumPy (its leading ``d`` is not a batch axis), for batches that end
    in ``d`` or not."""
    _cuda = host_cuda.install(monkeypatch)
    M, d = 3, 2
    P = np.array([[2.0, 0.5], [0.5, 1.0]])
    for batch in [(4,), (2,), (3, 2), ()]:
        rows, n = _cuda._flat(np, P, batch, (M, d, d))
        assert n == 1 and rows.shape == (1, M, d, d), batch
        assert np.array_equal(rows[0], np.broadcast_to(P, (M, d, d)))


def _compare_kernels(monkeypatch, d, M, client_opt, correction, noise, version, exchange, sweep=0):
    _cuda = host_cuda.install(monkeypatch)
    monkeypatch.setattr(_cuda, "EXCHANGE", exchange)
    fed = flt.random_quadratic_federation(M=M, d=d, batch=2, kappa=5.0, weights="dirichlet", seed=2,
                                          sigma2=0.1 if noise == "diag" else None)
    if noise == "dense":
        A = 0.3 * np.random.default_rng(5).normal(size=(2, M, d, d))
        fed = flt.QuadraticFederation(fed.H, fed.x_opt, fed.weights, noise_cov=A @ np.swapaxes(A, -1, -2))
    eta = np.array([[0.02], [0.05]]) * np.array([1.0, 0.5, 1.0, 0.8, 0.6])[:M]
    if sweep:   # batch (sweep, 2): the federation's operands are the batch's trailing axis
        eta = np.array([1.0, 0.7, 0.4][:sweep])[:, None, None] * eta
        rows = {}
        real_flat = _cuda._flat

        def flat(xp, a, batch, tail):
            out = real_flat(xp, a, batch, tail)
            rows.setdefault(tuple(tail), []).append(out[1])
            return out

        monkeypatch.setattr(_cuda, "_flat", flat)
    tau = flt.per_client([1, 2, 3, 3, 4][:M])
    precond = None
    if client_opt == "precond":   # SPD, one per configuration and client
        A = np.random.default_rng(6).normal(size=(2, M, d, d))
        precond = A @ np.swapaxes(A, -1, -2) / d + 0.5 * np.eye(d)
    kw = dict(eta=eta, tau=tau, client_opt=client_opt, seed=11, noise_version=version, precond=precond)
    x = np.random.default_rng(0).normal(size=eta.shape[:-1] + (d,))
    s, _ = la._setup(fed, x, eta=eta, tau=tau, client_opt=client_opt, precond=precond, beta1=None, beta2=None, v0=None,
                     eps=None, bias_correction=False, n_mode="exact", noise=True, seed=11, config=None,
                     client_ids=None, noise_version=version)
    operands = dict(xp=np, H=fed.H, x_opt=fed.x_opt, factor=la._kernel_factor(s), factor_diag=s.noise_diag, eta=s.eta,
                    tau=s.tau, tau_max=s.tau_max,
                    config=s.config, client_ids=s.client_ids, batch=s.batch, M=M, d=d,
                    base=int(KeyedStream(11, la._NOISE)._base), adagrad=client_opt == "adagrad", v0=s.v0, eps=s.eps,
                    exact_n=True, version=version)
    delta, N = _cuda.local_runs(x=x, round0=3 * la._STEP_KEY, precond=s.precond, **operands)
    ref = la.client_update(fed, x=x, round=3, **kw)
    np.testing.assert_allclose(delta, ref.delta, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(la._kernel_N(s, N), ref.N, rtol=1e-12, atol=1e-13)
    if sweep:
        assert rows[(M, d, d)][0] == 2 and rows[(M, d)][-1] == 2 and rows[(M,)][0] == 2 * sweep   # H_i, x_i*; eta
    omega = np.broadcast_to(fed.weights, eta.shape)
    rounds = _cuda.RoundsKernel(omega=omega, alpha=np.full(eta.shape[:-1], 0.7), step_key=la._STEP_KEY,
                                local_correction=correction == "local", precond=s.precond,
                                precond_inv=s.precond_inv, **operands)
    got = rounds(x, 0, 4)
    want = la.fedopt(fed, x0=x, rounds=4, alpha=0.7, correction=correction, **kw).x
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_diagonal_noise_factor_is_the_cholesky_factor():
    """A diagonal PD noise covariance is factored by the elementwise square root, NumPy's Cholesky factor bit for bit
    (d from 1 to 40, entries from 1e-302 to 4e300; so the noise, and every seeded run, is what it was); a covariance
    with a zero on its diagonal or an off-diagonal entry still goes through the factorisations."""
    from fltheory.problems import noise_root_diagonal

    rng = np.random.default_rng(3)
    for d in (1, 2, 6, 17, 40):
        for scale in (1e-300, 1.0, 1e300):
            cov = np.einsum("...i,ij->...ij", scale * rng.uniform(0.01, 4.0, (5, 3, d)), np.eye(d))
            diag = noise_root_diagonal(cov, np)
            F = la._factor(cov, np, diag)
            assert np.array_equal(F.view(np.uint64), np.linalg.cholesky(cov).view(np.uint64)), (d, scale)
            assert np.array_equal(diag, np.sqrt(np.diagonal(cov, axis1=-2, axis2=-1)))
    singular = cov.copy()
    singular[0, 0, 2, 2] = 0.0
    dense = cov.copy()
    dense[..., 0, 1] = dense[..., 1, 0] = 0.001
    for other in (singular, dense):
        assert noise_root_diagonal(other, np) is None
        F = la._factor(other, np)
        assert np.allclose(F @ np.swapaxes(F, -1, -2), other, atol=1e-12)


def test_the_noise_set_up_is_done_once_per_federation_and_the_dense_factor_only_where_drawn(monkeypatch):
    """The diagonal test scans every Sigma_i: a federation does it once, however many runs it serves; the dense
    factor (B M d^2 numbers) is built only when the array code draws noise, never for the kernels' operands."""
    import fltheory.problems as problems

    calls = []
    real = problems.noise_root_diagonal
    monkeypatch.setattr(problems, "noise_root_diagonal", lambda cov, xp: calls.append(1) or real(cov, xp))
    fed = flt.random_quadratic_federation(M=3, d=4, batch=2, kappa=5.0, seed=2, sigma2=0.1)
    x = np.zeros((2, 4))
    kw = dict(eta=0.05, tau=2, client_opt="sgd", precond=None, beta1=None, beta2=None, v0=None, eps=None,
              bias_correction=False, n_mode="exact", noise=True, seed=1, config=None, client_ids=None)
    setups = [la._setup(fed, x, **kw)[0] for _ in range(3)]
    assert len(calls) == 1
    for s in setups:
        assert np.array_equal(s.noise_diag, np.sqrt(0.1) * np.ones((2, 3, 4)))
        assert la._kernel_factor(s) is None and "noise_factor" not in vars(s)       # the kernels need no matrix
    s = setups[0]
    assert np.array_equal(s.noise_factor, np.sqrt(0.1) * np.broadcast_to(np.eye(4), (2, 3, 4, 4)))
    assert "noise_factor" in vars(s)                                                 # built on first use, kept
    a = la.fedopt(fed, x0=x, rounds=2, eta=0.05, tau=2, seed=1).x
    b = la.fedopt(fed, x0=x, rounds=2, eta=0.05, tau=2, seed=1).x
    assert len(calls) == 1 and np.array_equal(a, b)
    dense = flt.QuadraticFederation(fed.H, fed.x_opt, fed.weights, noise_cov=fed.noise_cov + 0.01)
    s = la._setup(dense, x, **kw)[0]
    assert s.noise_diag is None and la._kernel_factor(s) is s.noise_factor
    assert np.allclose(s.noise_factor @ np.swapaxes(s.noise_factor, -1, -2), dense.noise_cov, atol=1e-14)



S, F = 3, 2
FEDOPT_CASES = [   # d, M, client_opt, correction, server, whole rounds, noise, version, exchange, and the batch axes
    # (batch (S, F)) of the federation, eta (None: one per configuration, (S, 1)), alpha, P and x0
    (5, 3, "precond", "local", "sgd", True, "diag", 2, True, (F,), (1, F), (S, 1), (S, 1), ()),
    (3, 2, "precond", "joint", "momentum", False, "dense", 3, False, (S, F), None, (), (F,), (S, 1)),
    (4, 3, "sgd", "local", "sgd", True, "shared", 1, True, (1, F), None, (F,), None, ()),
    (2, 4, "adagrad", "none", "sgd", False, "none", 1, False, (), None, (S, F), None, (S, 1)),
]


@pytest.mark.parametrize("d,M,client_opt,correction,server,whole,noise,version,exchange,fb,eb,ab,pb,xb", FEDOPT_CASES)
def test_fedopt_through_the_kernels_is_fedopt_through_the_array_code(monkeypatch, d, M, client_opt, correction,
                                                                     server, whole, noise, version, exchange, fb, eb,
                                                                     ab, pb, xb):
    """``fedopt``'s kernel branches (whole rounds, or one kernel of local runs per round) on the host stand-in against
    its array code, the operands batched along different axes of a batch (S, F) = (3, 2) (the federation ``fb``,
    eta ``eb``, alpha ``ab``, P ``pb``, x0 ``xb``): the same x, trajectory, last Delta and N (``c_i P_i`` for fixed
    preconditioners, whose local correction reads P_i^{-1})."""
    _cuda = host_cuda.install(monkeypatch)
    monkeypatch.setattr(_cuda, "EXCHANGE", exchange)
    rng = np.random.default_rng(d * 10 + M)

    def spd(shape):
        A = rng.normal(size=shape + (M, d, d))
        return A @ np.swapaxes(A, -1, -2) / d + 0.5 * np.eye(d)

    cov = {"diag": np.einsum("...i,ij->...ij", rng.uniform(0.01, 0.2, fb + (M, d)), np.eye(d)),
           "shared": 0.05 * np.broadcast_to(np.eye(d), (M, d, d)), "dense": 0.1 * spd(fb), "none": None}[noise]
    fed = flt.QuadraticFederation(spd(fb), rng.normal(size=fb + (M, d)),
                                  np.broadcast_to(rng.dirichlet(np.ones(M)), fb + (M,)).copy(), noise_cov=cov)
    eta = (flt.per_configuration(0.02 * rng.uniform(0.5, 1.0, (S, 1))) if eb is None
           else 0.02 * rng.uniform(0.5, 1.0, eb + (1,)))
    kw = dict(x0=rng.normal(size=xb + (d,)), rounds=3, eta=eta, tau=flt.per_client([1, 3, 2, 2][:M]),
              client_opt=client_opt, precond=None if pb is None else spd(pb), correction=correction,
              server_opt=server, alpha=rng.uniform(0.3, 1.0, ab), seed=5, noise=noise != "none",
              noise_version=version, record_every=2)
    ref = la.fedopt(fed, **kw)
    ran = []
    monkeypatch.setattr(la, "_fused_cuda", lambda problem, s, record: ran.append(record) or not record)
    monkeypatch.setattr(la, "FUSED_ROUNDS_CUDA", whole)
    got = la.fedopt(fed, **kw)
    assert ran and not any(ran)
    for name in ("x", "trajectory", "Delta", "N"):
        a, b = getattr(got, name), getattr(ref, name)
        assert a.shape == b.shape, name
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, err_msg=name)


@pytest.mark.parametrize("d,M,fb,eb,pb", [(3, 2, (F,), (S, 1), (S, 1)), (2, 3, (S, F), (1, F), None),
                                          (5, 2, (), (S, F), (F,)), (1, 3, (1, F), (S, 1), (1, F))])
def test_closed_form_fixed_points_kernel_reads_operands_by_the_configurations_index(monkeypatch, d, M, fb, eb, pb):
    """Theorem 2's closed-form fixed points' kernel (``_cuda_closed.fixed_points``) on the host stand-in against the
    array code, its operands batched along different axes of a (S, F) = (3, 2) batch (the federation ``fb``, eta
    ``eb``, a diagonal P ``pb``) and read as row ``b % n``: the same C, c, x, condition number and residual.  (Per-client
    tau, equal in every configuration: the stand-in's barriers are the whole block's.)"""
    host_cuda.install(monkeypatch)
    from fltheory._cuda_closed import fixed_points
    from fltheory.papers.local_adaptivity import exact

    rng = np.random.default_rng(d + 10 * M)
    A = rng.normal(size=fb + (M, d, d))
    fed = flt.QuadraticFederation(A @ np.swapaxes(A, -1, -2) / d + 0.5 * np.eye(d), rng.normal(size=fb + (M, d)),
                                  rng.dirichlet(np.ones(M), size=fb))
    eta, tau = 0.05 * rng.uniform(0.5, 1.0, eb + (M,)), flt.per_client(rng.integers(1, 5, M))
    P = None if pb is None else np.einsum("...i,ij->...ij", rng.uniform(0.5, 2.0, pb + (M, d)), np.eye(d))
    want = exact._fixed_point_fused(fed, eta, tau, P, "none")
    e, t = exact._as_eta_tau(fed, eta, tau)
    diagP = None if P is None else exact._check_spd(P, np)
    got = fixed_points(xp=np, H=fed.H, x_opt=fed.x_opt, weights=fed.weights, diagP=diagP, eta=e, tau=t,
                       batch=(S, F), M=M, d=d)
    for name, a, b in zip(("C", "c", "x", "cond", "res"), got, want):
        assert a.shape == b.shape, name
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12 if name == "res" else 0, err_msg=name)
