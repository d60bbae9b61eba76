"""Theorem 2's closed form is accurate to its conditioning, not less.

* ``I - K_i = I - (I - eta P_i H_i)^tau`` is computed without cancellation, so the fixed point keeps
  its digits as ``eta -> 0``; checked against 40-digit arithmetic (mpmath) on hypothesis instances,
  with a tolerance tied to the condition numbers of the system and of ``P_i``;
* ``P_i^{-1}`` enters through solves, never as ``(P_i^{-1/2})^2``;
* a singular or nearly singular system raises the package's error; below the threshold the
  condition number is in the result;
* the sweep path (one federation, many ``eta``) and the general path agree; the spectral radius,
  computed on first access, is that of the round map.
"""
import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fltheory as flt
from fltheory.backend import namespace, to_numpy
from fltheory.validation import per_client
from fltheory.linear import one_minus_power, spectral_radius
from fltheory.papers.local_adaptivity import exact as E
from fltheory.problems import ProblemError
from conftest import on_backend

U = np.finfo(float).eps / 2


def _mp_fixed_point(fed, eta, tau, P, correction, dps=40):
    """Theorem 2's x~ (or the corrected x^) in ``dps``-digit arithmetic, straight from the definitions."""
    with mp.workdps(dps):
        d = fed.d
        C, c = mp.zeros(d, d), mp.zeros(d, 1)
        for i in range(fed.M):
            Pi = mp.eye(d) if P is None else mp.matrix(P[i].tolist())
            A = mp.eye(d) - mp.mpf(float(eta)) * Pi * mp.matrix(fed.H[i].tolist())
            T = mp.eye(d) - A**tau
            if correction == "local":
                T = Pi**-1 * T / (mp.mpf(float(eta)) * tau)
            C += mp.mpf(float(fed.weights[i])) * T
            c += mp.mpf(float(fed.weights[i])) * T * mp.matrix(fed.x_opt[i].tolist())
        return np.array([float(v) for v in mp.lu_solve(C, c)])


@st.composite
def small_eta_instances(draw):
    seed = draw(st.integers(0, 10**6))
    M, d = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    fed = flt.random_quadratic_federation(M=M, d=d, kappa=draw(st.sampled_from([2.0, 100.0, 1e4])), seed=seed)
    rng = np.random.default_rng(seed)
    if draw(st.booleans()):
        P = None
    else:
        Q = rng.standard_normal((M, d, d))
        P = Q @ Q.transpose(0, 2, 1) + draw(st.sampled_from([1e-3, 0.1, 1.0])) * np.eye(d)
    lmax = max(np.linalg.eigvals(fed.H[i] if P is None else P[i] @ fed.H[i]).real.max() for i in range(M))
    eta = draw(st.sampled_from([1e-10, 1e-8, 5e-6, 1e-3, 0.3, 1.5])) / lmax
    tau = draw(st.integers(1, 40))
    return fed, eta, tau, P, draw(st.sampled_from(["none", "local"]))


@settings(max_examples=30, deadline=None)
@given(small_eta_instances())
def test_fixed_point_matches_40_digit_arithmetic_to_its_conditioning(inst):
    fed, eta, tau, P, correction = inst
    fp = E.fixed_point(fed, eta=per_client(eta), tau=per_client(tau), precond=P, correction=correction)
    ref = _mp_fixed_point(fed, eta, tau, P, correction)
    cond_P = 1.0 if P is None else max(np.linalg.cond(p) for p in P)
    tol = 64 * tau * U * float(fp.condition) * (cond_P if correction == "local" else 1.0)
    err = np.abs(fp.x - ref).max() / max(np.abs(ref).max(), 1e-300)
    assert err <= tol, f"relative error {err:.2e} > {tol:.2e} (cond {float(fp.condition):.2e}, cond P {cond_P:.2e})"


def test_small_eta_keeps_its_digits_where_subtraction_loses_them():
    """At eta lambda = 5e-6 forming I - K by subtraction keeps about 11 digits; the closed form keeps 15."""
    fed = flt.random_quadratic_federation(M=3, d=3, kappa=10.0, seed=7)
    eta = 5e-6 / np.linalg.eigvalsh(fed.H)[..., -1].max()
    ref = _mp_fixed_point(fed, eta, 5, None, "none")
    ours = E.fixed_point(fed, eta=per_client(eta), tau=5).x
    K = np.linalg.matrix_power(np.eye(3) - eta * fed.H, 5)
    C = np.einsum("m,mij->ij", fed.weights, np.eye(3) - K)
    naive = np.linalg.solve(C, np.einsum("m,mij,mj->i", fed.weights, np.eye(3) - K, fed.x_opt))
    rel = lambda x: np.abs(x - ref).max() / np.abs(ref).max()  # noqa: E731
    assert rel(ours) < 1e-14
    assert rel(naive) > 100 * rel(ours)   # the point of the closed form's construction


def test_ill_conditioned_preconditioner_goes_through_solves():
    """cond(P) = 1e4: the corrected x^ keeps ~13 digits (forming P^{-1} from P^{-1/2} kept ~10)."""
    rng = np.random.default_rng(3)
    fed = flt.random_quadratic_federation(M=3, d=4, kappa=10.0, seed=3)
    Q = np.linalg.qr(rng.standard_normal((3, 4, 4)))[0]
    P = Q @ (np.logspace(0, -4, 4)[:, None] * Q.transpose(0, 2, 1))
    fp = E.fixed_point(fed, eta=0.1, tau=5, precond=P, correction="local")
    ref = _mp_fixed_point(fed, 0.1, 5, P, "local")
    assert np.abs(fp.x - ref).max() / np.abs(ref).max() < 5e-13


@pytest.mark.parametrize("tau", [1, 2, 3, 5, 8, 13, 64, 1000])
def test_one_minus_power_equals_the_definition(tau):
    rng = np.random.default_rng(tau)
    A = rng.standard_normal((5, 3, 3)) * 0.2
    direct = np.eye(3) - np.linalg.matrix_power(np.eye(3) - A, tau)
    np.testing.assert_allclose(one_minus_power(A, tau), direct, atol=1e-12 * max(1.0, np.abs(direct).max()))
    per = np.array([tau, 1, 2, tau + 1, 0])        # per-matrix powers through masks
    for b, t in enumerate(per):
        np.testing.assert_allclose(one_minus_power(A, per)[b],
                                   np.eye(3) - np.linalg.matrix_power(np.eye(3) - A[b], int(t)),
                                   atol=1e-12 * max(1.0, np.abs(direct).max()))


def test_singular_system_raises_the_package_error():
    """H = diag(1, 2), eta = 1, tau = 2: (1 - 2)^2 = 1, so I - K has a zero eigenvalue."""
    fed = flt.QuadraticFederation(np.array([[[1.0, 0], [0, 2.0]]]), [[1.0, 1.0]], [1.0])
    with pytest.raises(ProblemError, match="singular"):
        E.fixed_point(fed, eta=1.0, tau=2)
    with pytest.raises(ProblemError, match="COND_LIMIT"):     # one part in 1e14 away: nearly singular
        E.fixed_point(fed, eta=1.0 - 1e-14, tau=2)
    with pytest.raises(ProblemError, match=r"configuration \(1,\)"):   # a batch names the configuration
        E.fixed_point(fed, eta=np.array([[0.5], [1.0 - 1e-14], [0.25]]), tau=2)
    fp = E.fixed_point(fed, eta=1.0 - 1e-6, tau=2)            # ill-conditioned but determined: reported
    assert 1e5 < float(fp.condition) < 1e7
    np.testing.assert_allclose(fp.x, [1.0, 1.0], rtol=1e-9)


def test_condition_number_is_the_one_norm_condition_number():
    fed = flt.random_quadratic_federation(M=4, d=3, kappa=50.0, seed=2, batch=3)
    fp = E.fixed_point(fed, eta=0.05, tau=6)
    C = E.round_map(fed, eta=0.05, tau=6).A
    C = np.eye(3) - C                                   # round map with alpha = 1 is I - C
    np.testing.assert_allclose(fp.condition, np.linalg.cond(C, p=1), rtol=1e-10)


@pytest.mark.parametrize("correction", ["none", "local"])
def test_eta_sweep_over_one_federation_equals_the_general_path(correction, xp):
    fed = on_backend(flt.random_quadratic_federation(M=5, d=4, kappa=20.0, weights="dirichlet", seed=4), xp)
    eta = xp.reshape(xp.linspace(0.01, 0.2, 40), (40, 1))
    tau = per_client(xp.asarray([3, 5, 5, 7, 2]))
    sweep = E.fixed_point(fed, eta=per_client(eta), tau=tau, correction=correction)
    batched = flt.QuadraticFederation(xp.broadcast_to(fed.H, (40,) + fed.H.shape), fed.x_opt, fed.weights)
    general = E.fixed_point(batched, eta=per_client(eta), tau=tau, correction=correction)
    assert namespace(sweep.x) is xp and namespace(general.x) is xp
    for name, rtol in (("x", 1e-12), ("condition", 1e-9), ("spectral_radius", 1e-10)):
        np.testing.assert_allclose(to_numpy(getattr(sweep, name)), to_numpy(getattr(general, name)), rtol=rtol,
                                   atol=1e-13 if name == "x" else 0)


def test_spectral_radius_on_first_access_is_the_round_maps():
    """The fixed point of the README instance at eta = 1, tau = 4 is not a limit: converges is False."""
    H = np.array([[[2, .5], [.5, 1]], [[1, 0], [0, 4]], [[3, -1], [-1, 2]]], float)
    fed = flt.QuadraticFederation(H, [[1, 0], [0, 2], [-1, -1]], [.5, .3, .2])
    for eta, expected in [(0.1, True), (1.0, False)]:
        fp = E.fixed_point(fed, eta=per_client(eta), tau=4)
        rho = spectral_radius(E.round_map(fed, eta=per_client(eta), tau=4, alpha=1.0).A)
        assert float(fp.spectral_radius) == pytest.approx(float(rho), rel=1e-12)
        assert bool(fp.converges) is expected
        assert "spectral_radius=" in repr(fp) and "Deferred" not in repr(fp)
