"""The shared core: backends, keyed streams, quadratic federations, affine maps, statements, checks."""
import json

import numpy as np
import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

import fltheory as flt
from fltheory.backend import KeyedStream, namespace, to_numpy
from fltheory.linear import AffineMap, companion, matrix_power
from fltheory.problems import ProblemError
from fltheory.symbolic import Condition, ConditionError, Statement, StatementError
from fltheory.verify import Check, Report, Sample
from conftest import on_backend, to_np


# ----------------------------------------------------------------------------- backend
def test_keyed_stream_is_a_function_of_its_key(xp):
    s = KeyedStream(3, "noise")
    big = s.normal(config=xp.arange(4)[:, None], round=7, client=xp.arange(5)[None, :], size=(3,))
    one = s.normal(config=xp.asarray([[2]]), round=7, client=xp.asarray([[4]]), size=(3,))
    assert namespace(big) is xp
    np.testing.assert_array_equal(to_numpy(big[2, 4, ...]), to_numpy(one[0, 0, ...]))
    other_round = s.normal(config=xp.asarray([[2]]), round=8, client=xp.asarray([[4]]), size=(3,))
    assert not np.allclose(to_numpy(one), to_numpy(other_round))
    assert not np.allclose(to_numpy(one), to_numpy(KeyedStream(3, "sampling").normal(config=xp.asarray([[2]]), round=7, client=xp.asarray([[4]]), size=(3,))))


def test_keyed_normals_have_standard_moments(xp):
    z = to_np(KeyedStream(0).normal(config=xp.arange(200)[:, None], client=xp.arange(50)[None, :], size=(20,)))
    assert abs(z.mean()) < 4 / np.sqrt(z.size)
    assert abs(z.var() - 1) < 4 * np.sqrt(2 / z.size)
    u = to_np(KeyedStream(1).uniform(config=xp.asarray(0), size=(100_000,)))
    assert 0 < u.min() and u.max() < 1 and abs(u.mean() - 0.5) < 0.005


def test_negative_seed_is_rejected():
    with pytest.raises(ValueError, match="seed"):
        KeyedStream(-1)


# ----------------------------------------------------------------------------- problems
def test_example_constants(example_fed, xp):
    fed, w = on_backend(example_fed, xp), example_fed.weights
    np.testing.assert_allclose(to_np(fed.x_star), [91 / 319, 370 / 319], rtol=1e-14)
    np.testing.assert_allclose(to_np(fed.grad(fed.x_star)), 0, atol=1e-14)
    np.testing.assert_allclose(to_np(fed.Hbar), [[1.9, 0.05], [0.05, 2.1]], rtol=1e-14)
    assert float(fed.L) == pytest.approx(4.0)
    # w-average of the client gradients at x* vanishes; zeta^2 is their weighted spread
    g = to_np(fed.grad_at_star)
    np.testing.assert_allclose(w @ g, 0, atol=1e-14)
    assert float(fed.zeta2) == pytest.approx(float(w @ (g**2).sum(1)))


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(H=[[[1, 2], [0, 1]]], x_opt=[[0, 0]]), "symmetric"),
        (dict(H=[[[1, 0], [0, -1]]], x_opt=[[0, 0]]), "positive definite"),
        (dict(H=[[[1.0]], [[1.0]]], x_opt=[[0], [1]], weights=[0.6, 0.6]), "sum to 1"),
        (dict(H=[[[1.0]], [[1.0]]], x_opt=[[0], [1]], weights=[1.5, -0.5]), ">= 0"),
        (dict(H=[[[1.0]], [[1.0]]], x_opt=[[0, 1]]), "x_opt"),
        (dict(H=[[1.0]], x_opt=[[0]]), "shape"),
    ],
)
def test_invalid_federations_name_the_problem(kwargs, match):
    with pytest.raises(flt.InputError, match=match):   # ProblemError, or the door layer's InputError
        flt.QuadraticFederation(np.asarray(kwargs.pop("H"), float), **kwargs)


_NOISY_FEDERATIONS = {   # every federation with gradient noise, as (class, its other arguments), M = 2, d = 2
    "quadratic": (flt.QuadraticFederation, dict(H=np.stack([np.eye(2)] * 2), x_opt=np.zeros((2, 2)))),
    "separable_cosine": (flt.problems.SeparableCosineFederation,
                         dict(a=np.ones((2, 2)), b=np.ones((2, 2)), c=np.zeros((2, 2)))),
    "pseudo_huber": (flt.problems.PseudoHuberFederation, dict(b=np.zeros((2, 2)), delta=1.0)),
    "linear": (flt.problems.LinearFederation, dict(c=np.ones((2, 2)))),
}


@pytest.mark.parametrize("kind", sorted(_NOISY_FEDERATIONS))
@pytest.mark.parametrize("cov, match", [
    (np.array([[[1.0, 0.5], [0.0, 1.0]]] * 2), "symmetric"),
    (np.array([[[1.0, 0.0], [0.0, -1.0]]] * 2), "positive semidefinite"),
    (np.array([[[1.0, 0.0], [0.0, 1.0]]] * 3), "shape"),
])
def test_every_federation_checks_its_noise_covariance_the_same_way(kind, cov, match):
    cls, kwargs = _NOISY_FEDERATIONS[kind]
    cls(noise_cov=0.5 * np.stack([np.eye(2)] * 2), **kwargs)   # a valid one is accepted
    with pytest.raises(flt.InputError, match=match):
        cls(noise_cov=cov, **kwargs)


@pytest.mark.parametrize("kind", sorted(_NOISY_FEDERATIONS))
def test_a_federation_owns_its_noise_covariance(kind):
    """Writing into the array passed as noise_cov afterwards changes neither the federation's covariance nor what it
    derived from it once (a QuadraticFederation's cached noise_root_diag, which FedOpt's noise uses)."""
    cls, kwargs = _NOISY_FEDERATIONS[kind]
    cov = 0.5 * np.stack([np.eye(2)] * 2)
    fed = cls(noise_cov=cov, **kwargs)
    root = getattr(fed, "noise_root_diag", None)
    cov[:, 0, 1] = cov[:, 1, 0] = 0.4
    assert np.array_equal(fed.noise_cov, 0.5 * np.stack([np.eye(2)] * 2))
    if kind == "quadratic":
        assert np.array_equal(root, np.sqrt(0.5) * np.ones((2, 2))) and fed.noise_root_diag is root


def test_random_federation_has_the_requested_condition_number_and_is_keyed():
    fed = flt.random_quadratic_federation(M=4, d=3, batch=6, kappa=25.0, mu=0.5, seed=11)
    lam = np.linalg.eigvalsh(fed.H)
    np.testing.assert_allclose(lam[..., 0], 0.5)
    np.testing.assert_allclose(lam[..., -1] / lam[..., 0], 25.0)
    small = flt.random_quadratic_federation(M=4, d=3, batch=2, kappa=25.0, mu=0.5, seed=11)
    np.testing.assert_array_equal(small.H, fed.H[:2])
    one = fed.take(3)
    np.testing.assert_allclose(one.x_star, fed.x_star[3], rtol=1e-13)


def test_permutation_and_batching_leave_x_star_unchanged(xp):
    fed = on_backend(flt.random_quadratic_federation(M=5, d=3, batch=4, weights="dirichlet", seed=2), xp)
    perm = xp.asarray([3, 0, 4, 1, 2])
    x_star = to_np(fed.x_star)
    np.testing.assert_allclose(to_np(fed.permuted(perm).x_star), x_star, rtol=1e-12)
    for b in range(4):
        np.testing.assert_allclose(to_np(fed.take(b).x_star), x_star[b], rtol=1e-12)


def test_delta_at_points_is_attained_and_ball_bound_dominates(xp):
    ref = flt.random_quadratic_federation(M=3, d=2, seed=5)
    fed = on_backend(ref, xp)
    rng = np.random.default_rng(0)
    pts = ref.x_star + rng.normal(size=(50, 2)) * 0.3
    r = np.linalg.norm(pts - ref.x_star, axis=1).max()
    delta = to_np(fed.delta_at(xp.asarray(pts)))
    direct = np.linalg.norm(ref.grad_clients_at(pts) - ref.grad(pts)[:, None, :], axis=-1).max(axis=0)
    np.testing.assert_allclose(delta, direct, rtol=1e-12)
    assert np.all(to_np(fed.delta_ball(float(r))) >= delta - 1e-12)
    assert float(fed.delta_average_at(xp.asarray(pts))) == pytest.approx(float(ref.weights @ delta))


# ----------------------------------------------------------------------------- linear maps
@given(st.integers(1, 4), st.integers(0, 40), st.integers(0, 2**31 - 1))
def test_affine_power_fixed_point_and_iteration_agree(n, t, seed):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(3, n, n))
    A = 0.9 * A / np.abs(np.linalg.eigvals(A)).max(axis=-1)[:, None, None]
    m = AffineMap(A, rng.normal(size=(3, n)))
    x0 = rng.normal(size=(3, n))
    traj = m.trajectory(x0, t)
    np.testing.assert_allclose(m.after(x0, t), traj[-1], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(matrix_power(A, t), np.stack([np.linalg.matrix_power(a, t) for a in A]), atol=1e-10)
    fp = m.fixed_point()
    np.testing.assert_allclose(m(fp.x), fp.x, atol=1e-10)
    it = m.iterate_to_fixed_point(x0, tol=1e-13)
    np.testing.assert_allclose(it.x, fp.x, atol=1e-10)
    np.testing.assert_allclose(m.spectral_radius(), 0.9, rtol=1e-12)


def test_periodic_composition_order(xp):
    a = AffineMap(xp.asarray([[2.0]]), xp.asarray([1.0]))
    b = AffineMap(xp.asarray([[3.0]]), xp.asarray([0.0]))
    per = AffineMap.periodic([a, b])  # a first, then b
    one = xp.asarray([1.0])
    assert float(per(one)[0]) == float(b(a(one))[0]) == 9.0


def test_fixed_point_error_when_one_is_an_eigenvalue(xp):
    with pytest.raises(ValueError, match="no unique fixed point"):
        AffineMap(xp.eye(2, dtype=xp.float64), xp.ones(2, dtype=xp.float64)).fixed_point()


def test_companion_reproduces_a_recursion_with_memory(xp):
    rng = np.random.default_rng(1)
    B0, B1, B2 = (0.3 * rng.normal(size=(2, 2)) for _ in range(3))
    b = rng.normal(size=2)
    xs = [rng.normal(size=2) for _ in range(3)]  # x_{-2}, x_{-1}, x_0
    for _ in range(10):
        xs.append(B0 @ xs[-1] + B1 @ xs[-2] + B2 @ xs[-3] + b)
    aug = companion([xp.asarray(B) for B in (B0, B1, B2)], xp.asarray(b))
    state = xp.asarray(np.concatenate([xs[2], xs[1], xs[0]]))
    out = to_np(aug.after(state, 10))
    np.testing.assert_allclose(out[:2], xs[-1], rtol=1e-10)
    if float(aug.spectral_radius()) < 1:
        fp = to_np(aug.fixed_point().x)
        np.testing.assert_allclose(fp[:2], fp[2:4], atol=1e-10)


@pytest.mark.parametrize("n, t, seed", [(1, 0, 0), (3, 7, 1), (4, 40, 2)])
def test_affine_power_fixed_point_and_iteration_agree_on_fixed_instances(xp, n, t, seed):
    """The hypothesis test above on three fixed instances, on every namespace."""
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(3, n, n))
    A = 0.9 * A / np.abs(np.linalg.eigvals(A)).max(axis=-1)[:, None, None]
    m = AffineMap(xp.asarray(A), xp.asarray(rng.normal(size=(3, n))))
    x0 = xp.asarray(rng.normal(size=(3, n)))
    np.testing.assert_allclose(to_np(m.after(x0, t)), to_np(m.trajectory(x0, t))[-1], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(to_np(matrix_power(xp.asarray(A), t)), np.stack([np.linalg.matrix_power(a, t) for a in A]),
                               atol=1e-10)
    fp = m.fixed_point()
    np.testing.assert_allclose(to_np(m(fp.x)), to_np(fp.x), atol=1e-10)
    np.testing.assert_allclose(to_np(m.iterate_to_fixed_point(x0, tol=1e-13).x), to_np(fp.x), atol=1e-10)
    np.testing.assert_allclose(to_np(m.spectral_radius()), 0.9, rtol=1e-12)


def test_moments_match_monte_carlo_and_stationary_covariance(xp):
    rng = np.random.default_rng(3)
    A = np.array([[0.5, 0.2], [-0.1, 0.7]])
    b = np.array([1.0, -1.0])
    Q = np.array([[0.3, 0.1], [0.1, 0.2]])
    mx = AffineMap(xp.asarray(A), xp.asarray(b))
    mo = mx.moments(xp.zeros(2, dtype=xp.float64), None, xp.asarray(Q), T=6)
    mom = type("Mom", (), {"mean": to_np(mo.mean), "cov": to_np(mo.cov)})
    m = AffineMap(A, b)
    Lq = np.linalg.cholesky(Q)
    X = np.zeros((40000, 2))
    for _ in range(6):
        X = X @ A.T + b + rng.normal(size=X.shape) @ Lq.T
    se = np.sqrt(np.diag(mom.cov[-1]) / len(X))
    assert np.all(np.abs(X.mean(0) - mom.mean[-1]) < 4 * se)
    np.testing.assert_allclose(np.cov(X.T), mom.cov[-1], rtol=0.05)
    S = to_np(mx.stationary_covariance(xp.asarray(Q)))
    np.testing.assert_allclose(A @ S @ A.T + Q, S, atol=1e-13)
    target = m.fixed_point().x
    np.testing.assert_allclose(to_np(mo.mse(xp.asarray(target)))[-1], np.sum((mom.mean[-1] - target) ** 2) + np.trace(mom.cov[-1]))


# ----------------------------------------------------------------------------- statements
eta, L, tau = sp.symbols("eta L tau", positive=True)
ST = Statement(
    "demo_rate", lhs=r"\rho", relation="<=", expr=(1 - eta * L / 2) ** tau, paper="demo", equation="(1)",
    conditions=(Condition(eta * L <= 1, "eta <= 1/L"), Condition(tau >= 1, "tau >= 1")),
)


def test_statement_exact_and_vectorised_agree(xp):
    assert ST.evaluate(eta=sp.Rational(1, 2), L=1, tau=2) == sp.Rational(9, 16)
    g = ST.grid(eta=xp.asarray([0.1, 0.5]), L=1.0, tau=xp.asarray([1.0, 2.0, 3.0]), outer=True)
    assert namespace(g) is xp and g.shape == (2, 3)
    np.testing.assert_allclose(to_numpy(g)[1, 1], 9 / 16)


def test_statement_conditions_raise_naming_the_condition():
    with pytest.raises(ConditionError, match="eta <= 1/L"):
        ST.evaluate(eta=2, L=1, tau=1)
    with pytest.raises(ConditionError, match=r"eta <= 1/L.*eta=1\.5"):
        ST(eta=np.array([0.5, 1.5]), L=1.0, tau=1.0)
    # the boundary itself is inside (round-off slack)
    assert float(ST(eta=np.array(1 / 3), L=3.0, tau=1.0)) == pytest.approx(0.5)
    with pytest.raises(StatementError, match="missing"):
        ST.evaluate(eta=1, L=1)
    with pytest.raises(StatementError, match="unknown"):
        ST.evaluate(eta=1, L=1, tau=1, alpha=2)


def test_statement_latex_and_corrected_variant_need_a_reason():
    assert r"\le" in ST.latex() and r"\eta" in ST.latex()
    with pytest.raises(StatementError, match="reason"):
        ST.with_changes(status="corrected")
    c = ST.with_changes(name="demo_rate_corrected", status="corrected", reason="exponent", corrects="demo_rate")
    assert c.corrects == "demo_rate" and "corrected" in c.describe()


# ----------------------------------------------------------------------------- checks
def _sampler(values, bounds, sizes=None):
    def s(quick, seed):
        return [Sample(v, b, {"i": i}, seed=seed + i, size=(sizes or [0] * len(values))[i])
                for i, (v, b) in enumerate(zip(values, bounds))]
    return s


def test_verdicts_holds_tight_violated_and_smallest_counterexample():
    assert Check("a", paper="x", sampler=_sampler([0.5, 0.9], [1, 1]), relation="<=").run().status == "holds"
    assert Check("b", paper="x", sampler=_sampler([0.5, 1.0], [1, 1]), relation="<=").run().status == "tight"
    v = Check("c", paper="x", sampler=_sampler([2.0, 5.0, 1.5], [1, 1, 1], sizes=[3, 5, 2]), relation="<=",
              expected="violated").run()
    assert v.status == "violated" and v.ok and v.counterexample["params"] == {"i": 2} and v.worst_ratio == 5.0
    lower = Check("d", paper="x", sampler=_sampler([2.0], [1.0]), relation=">=").run()
    assert lower.status == "holds" and lower.worst_ratio == 0.5
    eq = Check("e", paper="x", sampler=_sampler([1.0 + 1e-6], [1.0]), relation="==", rtol=1e-9).run()
    assert eq.status == "violated" and not eq.ok
    nan = Check("f", paper="x", sampler=_sampler([float("nan")], [1.0]), relation="<=").run()
    assert nan.status == "violated"


def test_report_writes_markdown_json_and_figure(tmp_path):
    v = Check("x.demo", paper="x", sampler=_sampler([0.5, 0.2], [1, 1]), relation="<=").run()
    rep = Report([v], quick=True, seed=0, seconds=0.1, environment={"numpy": np.__version__})
    out = rep.write(tmp_path / "rep")
    data = json.loads((out / "report.json").read_text())
    assert data["ok"] and data["verdicts"][0]["status"] == "holds"
    assert "x.demo" in (out / "report.md").read_text()
    assert (out / "figures" / "verdicts.png").stat().st_size > 1000
    assert "1/1 verdicts as expected" in rep.table()
