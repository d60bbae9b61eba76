"""LogisticFederation (softmax cross-entropy clients) and the digits federation."""
import numpy as np

from fltheory.validation import InputError
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fltheory.datasets import digits_federation
from fltheory.problems import LogisticFederation, ProblemError


def make(seed=0, M=3, m=3, s=3, reg=0.05):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(3, 15, size=M)
    Xs = [rng.normal(size=(n, m)) * 2 for n in sizes]
    ys = [rng.integers(0, s, size=n) for n in sizes]
    return LogisticFederation.from_client_data(Xs, ys, n_classes=s, reg=reg), Xs, ys


def per_sample_loss(W, x, y, s, reg):
    z = W.reshape(s, -1) @ x
    return np.log(np.exp(z - z.max()).sum()) + z.max() - z[y]


def test_loss_and_gradients_match_a_direct_computation():
    fed, Xs, ys = make()
    W = np.random.default_rng(1).normal(size=fed.d)
    for i in range(fed.M):
        direct = np.mean([per_sample_loss(W, x, y, 3, 0) for x, y in zip(Xs[i], ys[i])]) + 0.025 * W @ W
        assert np.isclose(fed.loss_clients_at(W)[i], direct, rtol=1e-13)
    np.testing.assert_allclose(fed.weights, [len(y) / sum(map(len, ys)) for y in ys])
    v = np.random.default_rng(2).normal(size=fed.d)
    e = 1e-6
    fd = (fed.loss(W + e * v) - fed.loss(W - e * v)) / (2 * e)
    assert np.isclose(fd, fed.grad(W) @ v, rtol=1e-7)
    hv = (fed.grad(W + e * v) - fed.grad(W - e * v)) / (2 * e)
    np.testing.assert_allclose(fed.hessian(W) @ v, hv, atol=1e-7)
    np.testing.assert_allclose(fed.hessp(W, v), fed.hessian(W) @ v, atol=1e-12)


def test_batched_and_per_client_points():
    fed, _, _ = make()
    W = np.random.default_rng(3).normal(size=(2, fed.M, fed.d))
    G = fed.grad_clients(W)
    for b in range(2):
        for i in range(fed.M):
            np.testing.assert_allclose(G[b, i], fed.grad_client(i, W[b, i]), atol=1e-14)
            np.testing.assert_allclose(G[b, i], fed.grad_clients_at(W[b, i])[i], atol=1e-14)
    n = int(fed.sizes.min())
    idx = np.broadcast_to(np.arange(n), (fed.M, n))
    full_small = LogisticFederation(fed.X[:, :n], fed.y[:, :n], fed.mask[:, :n], 3, fed.reg)
    np.testing.assert_allclose(fed.grad_clients(W[0], idx=idx), full_small.grad_clients(W[0]), atol=1e-14)


@pytest.mark.parametrize("reg", [0.0, 0.05])
def test_full_data_path_on_every_backend_with_two_batch_axes(xp, reg):
    """grad_clients / loss_clients with configuration axes (2, 3) (the client-major path: every configuration's
    logits in one product per client) equal the per-sample formulas, on every backend and on its device."""
    from conftest import to_np

    fed, Xs, ys = make(seed=4, M=4, m=3, s=3, reg=reg)
    dev = xp.asarray(0.0).device if hasattr(xp.asarray(0.0), "device") else None
    on = LogisticFederation(*(xp.asarray(a, device=dev) for a in (fed.X, fed.y, fed.mask)), 3, reg)
    W = np.random.default_rng(5).normal(size=(2, 3, fed.M, fed.d)) * 2
    G, F = on.grad_clients(xp.asarray(W, device=dev)), on.loss_clients(xp.asarray(W, device=dev))
    assert G.device == dev and F.device == dev and G.shape == W.shape and F.shape == (2, 3, fed.M)
    e = 1e-6
    for b in np.ndindex(2, 3):
        for i in range(fed.M):
            w = W[b + (i,)]
            direct = np.mean([per_sample_loss(w, x, y, 3, 0) for x, y in zip(Xs[i], ys[i])]) + reg / 2 * w @ w
            assert np.isclose(to_np(F)[b + (i,)], direct, rtol=1e-13)
            fd = [(np.mean([per_sample_loss(w + e * u, x, y, 3, 0) - per_sample_loss(w - e * u, x, y, 3, 0)
                            for x, y in zip(Xs[i], ys[i])]) / (2 * e)) for u in np.eye(fed.d)]
            np.testing.assert_allclose(to_np(G)[b + (i,)], np.array(fd) + reg * w, atol=1e-7)
            np.testing.assert_allclose(to_np(G)[b + (i,)], fed.grad_client(i, w), atol=1e-13)


@given(seed=st.integers(0, 1000), scale=st.floats(0.1, 30))
def test_analytic_constants(seed, scale):
    """||grad F_i|| <= L (reg = 0) everywhere; lambda_max(Hessian of F_i) <= beta_i."""
    fed, Xs, ys = make(seed=seed, reg=0.0)
    W = np.random.default_rng(seed).normal(size=fed.d) * scale
    assert np.all(np.linalg.norm(fed.grad_clients_at(W), axis=-1) <= fed.L_i * (1 + 1e-12))
    for i in range(fed.M):
        one = LogisticFederation.from_client_data([Xs[i]], [ys[i]], n_classes=3)
        lam = np.linalg.eigvalsh(one.hessian(W))[-1]
        assert lam <= fed.beta_i[i] * (1 + 1e-12)


def test_reference_minimiser():
    fed, _, _ = make(reg=0.1)
    assert fed.x_star_residual < 1e-12
    W = fed.x_star + 0.01 * np.random.default_rng(0).normal(size=fed.d)
    assert fed.loss(W) > fed.F_star


def test_errors():
    with pytest.raises(ProblemError, match="at least one sample"):
        LogisticFederation(np.zeros((2, 3, 2)), np.zeros((2, 3), int), np.array([[1, 1, 0], [0, 0, 0]]))
    with pytest.raises(InputError, match="reg must be >= 0"):
        make(reg=-1.0)
    with pytest.raises(ProblemError, match="labels y"):
        LogisticFederation(np.zeros((1, 2, 2)), np.array([[0, 5]]), n_classes=3)


@pytest.mark.parametrize("partition", ["label", "dirichlet"])
def test_digits_federation(partition):
    data = digits_federation(n_clients=10, partition=partition, seed=1)
    fed = data.fed
    assert fed.M == 10 and fed.d == 640 and int(fed.sizes.sum()) + len(data.y_test) == 1797
    assert abs(float(fed.weights.sum()) - 1) < 1e-12
    Xtr = fed.X[fed.mask]
    np.testing.assert_allclose(Xtr.mean(axis=0), 0, atol=1e-10)
    if partition == "label":  # each client is dominated by at most two labels
        for i in range(10):
            counts = np.bincount(fed.y[i, : fed.sizes[i]], minlength=10)
            assert np.sort(counts)[-2:].sum() >= 0.9 * fed.sizes[i]
    assert digits_federation(n_clients=10, partition=partition, seed=1).fed.y.tolist() == fed.y.tolist()
    with pytest.raises(InputError, match="partition"):
        digits_federation(partition="iid")


def test_digits_are_read_without_importing_scikit_learn_and_equal_load_digits():
    # fltheory.datasets reads the file load_digits reads (saving the scikit-learn import in a quick verify run)
    import subprocess
    import sys

    code = ("import sys; from fltheory.datasets import _digits_data; X, y = _digits_data(); "
            "print(X.shape, int(y.sum()), 'sklearn' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    from sklearn.datasets import load_digits

    from fltheory.datasets import _digits_data

    X, y = _digits_data()
    X2, y2 = load_digits(return_X_y=True)
    assert X.dtype == X2.dtype and y.dtype == y2.dtype
    assert np.array_equal(X, X2) and np.array_equal(y, y2)
    assert out == ["(1797,", "64)", str(int(y2.sum())), "False"]


def test_grad_selected_is_the_chosen_clients_gradient_on_every_backend(xp):
    """grad_selected(x, clients): the logistic override (the chosen clients' samples only) equals every client's
    gradient then picked, and per-client grad_client, with unequal client sizes; the default on a batched quadratic
    federation is H_c (x - x_c*) with the federation's batch axis last among the leading ones."""
    import fltheory as flt
    from conftest import on_backend, to_np
    from fltheory.problems import _Federation

    fed, _, _ = make(seed=6, M=4, m=3, s=3, reg=0.05)
    dev = xp.asarray(0.0).device if hasattr(xp.asarray(0.0), "device") else None
    on = LogisticFederation(*(xp.asarray(a, device=dev) for a in (fed.X, fed.y, fed.mask)), 3, 0.05)
    rng = np.random.default_rng(7)
    x, c = rng.normal(size=(5, 2, fed.d)) * 3, rng.integers(0, fed.M, size=(5, 2))
    got = on.grad_selected(xp.asarray(x, device=dev), xp.asarray(c, device=dev))
    assert got.device == dev and got.shape == x.shape
    np.testing.assert_allclose(to_np(got), to_np(_Federation.grad_selected(on, xp.asarray(x, device=dev),
                                                                           xp.asarray(c, device=dev))), atol=1e-14)
    for i, j in np.ndindex(5, 2):
        np.testing.assert_allclose(to_np(got)[i, j], fed.grad_client(int(c[i, j]), x[i, j]), atol=1e-14)
    q = flt.random_quadratic_federation(M=5, d=3, batch=2, seed=1)
    xq, cq = rng.normal(size=(4, 2, 3)), rng.integers(0, 5, size=(4, 2))
    g = to_np(on_backend(q, xp).grad_selected(xp.asarray(xq), xp.asarray(cq)))
    want = [[q.H[j, cq[i, j]] @ (xq[i, j] - q.x_opt[j, cq[i, j]]) for j in range(2)] for i in range(4)]
    np.testing.assert_allclose(g, want, atol=1e-14)


@pytest.mark.parametrize("kind", ["logistic", "quadratic"])
@pytest.mark.parametrize("clients, match", [
    ([4, 0], r"0\.\.M-1 = 0\.\.3; got 0\.\.4"), ([-1, 0], r"got -1\.\.0"), ([0.5, 1.0], "integer client indices"),
    ([True, False], "integer client indices"), ("01", "integer client indices"),
    ([[0, 1]] * 3, r"shape \(3, 2\) must broadcast to the points' leading axes \(2,\)"),
])
def test_grad_selected_refuses_bad_clients_by_name(kind, clients, match):
    import fltheory as flt

    fed = make(seed=6, M=4)[0] if kind == "logistic" else flt.random_quadratic_federation(M=4, d=3, seed=1)
    with pytest.raises(ProblemError, match=match):
        fed.grad_selected(np.zeros((2, fed.d)), clients)


def test_the_schedule_simulator_takes_any_object_with_grad_clients():
    """simulate_schedule_general on an object that is no federation of this package (no grad_selected): every
    client's gradient at each point, then the update's own, the same numbers as the federation it wraps."""
    from fltheory import problems, schedule_generators
    from fltheory.delayed_simulation import LocalSGD, simulate_schedule_general

    inner = problems.PseudoHuberFederation(b=[[0.0], [2.0]], delta=1.0)

    class Duck:
        grad_clients, loss = staticmethod(inner.grad_clients), staticmethod(inner.loss)
        weights, M, d, xp, batch_shape = inner.weights, inner.M, inner.d, np, ()

    run = dict(schedule=schedule_generators.round_robin(N=2, S=1, T=5), local=LocalSGD(eta_local=0.3, K=2), eta=1.0,
               x0=np.array([6.0]))
    assert np.array_equal(simulate_schedule_general(Duck(), **run), simulate_schedule_general(inner, **run))


def test_grad_selected_refuses_more_points_than_memory_holds_up_front():
    fed = make(seed=6, M=4)[0]
    x = np.broadcast_to(np.zeros(fed.d), (10**6, 10**3, fed.d))       # a view: nothing allocated
    with pytest.raises(InputError, match="chosen clients' samples and logits .* would hold"):
        fed.grad_selected(x, np.zeros((10**3,), dtype=int))               # its flat copy would be 8 GB
