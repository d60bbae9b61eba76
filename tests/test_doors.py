"""Fuzzing the doors: every public entry point in the table below, one parameter at a time, with bad
values drawn by hypothesis (wrong kind, NaN/inf, out of range, wrong shape, huge, complex, text).

Each call must raise one of the package's own errors (``fltheory.FLTheoryError``: an
``InputError``/``ValueError`` or an ``InputTypeError``/``TypeError``) whose message names the
parameter, within a time bound; returning anything is an accepted invalid input and fails the
test.  The valid call of every entry is checked to succeed, so a door that refuses everything
fails too.

CI runs ``FUZZ_EXAMPLES`` draws per (entry, parameter) pair (8 by default); the ``fuzz``
hypothesis profile runs 300 per pair, over 10^4 calls in all (small finite domains stop early)::

    HYPOTHESIS_PROFILE=fuzz python -m pytest tests/test_doors.py
"""
from __future__ import annotations

import importlib
import time
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import fltheory as flt
import fltheory.plotting  # noqa: F401 - the module is not imported by the package root
from doorkit import (AMAP, BAD, CHOICES, FED, H2, LOC, N_DRAWS, NOISY, PART, PROFILE, RR, TIME_LIMIT, W3, XO, Door,
                     bad_arrays)
from fltheory import datasets as fl_datasets
from fltheory import delayed as D
from fltheory import schedules as S
from fltheory.linear import AffineMap, matrix_power
from fltheory.papers.feddelavg import algorithm as fd_alg
from fltheory.papers.feddelavg import bounds as fd_bounds
from fltheory.papers.feddelavg import checks as fd_checks
from fltheory.papers.feddelavg import exact as fd_exact
from fltheory.papers.local_adaptivity import algorithm as la_alg
from fltheory.papers.local_adaptivity import bounds as la_bounds
from fltheory.papers.local_adaptivity import exact as la_exact

DOORS = [
    Door("QuadraticFederation", lambda H, x_opt, weights: flt.QuadraticFederation(H, x_opt, weights),
         dict(H=H2, x_opt=XO, weights=W3), {"H": ("array", (3, 2, 2)), "x_opt": ("array", (3, 2)),
                                            "weights": ("array", (3,))}),
    Door("QuadraticFederation(sigma2)", lambda sigma2: flt.QuadraticFederation(H2, XO, W3, sigma2=sigma2),
         dict(sigma2=0.1), {"sigma2": "sigma2"}),
    Door("random_quadratic_federation", lambda **k: flt.random_quadratic_federation(**k),
         dict(M=3, d=2, kappa=10.0, mu=1.0, heterogeneity=1.0, weights="uniform", hessian="random", seed=0),
         {"M": "count", "d": "count", "kappa": "kappa", "mu": "pos_real", "heterogeneity": "nonneg_real",
          "weights": "choice", "hessian": "choice", "seed": "count0"}),
    Door("AffineMap", lambda A, b: AffineMap(A, b), dict(A=np.eye(2) * 0.5, b=np.ones(2)),
         {"A": ("array", (2, 2)), "b": ("array", (2,))}),
    Door("AffineMap.power", lambda t: AMAP.power(t), dict(t=5), {"t": "count0"}),
    Door("AffineMap.iterate_to_fixed_point", lambda tol, max_iter: AMAP.iterate_to_fixed_point(tol=tol, max_iter=max_iter),
         dict(tol=1e-10, max_iter=1000), {"tol": "tol", "max_iter": "count"}),
    Door("AffineMap.trajectory", lambda x0, T: AMAP.trajectory(x0, T), dict(x0=np.zeros(2), T=4), {"T": "count0"}),
    Door("matrix_power", lambda t: matrix_power(np.eye(2) * 0.5, t), dict(t=3), {"t": "count0"}),
    Door("round_robin", lambda **k: S.round_robin(**k), dict(N=4, S=2, T=5), {"N": "count", "S": "count", "T": "count0"}),
    Door("first_n_arrivals", lambda **k: S.first_n_arrivals(**k),
         dict(N=3, n=2, T=4, K=2, compute=np.ones(3), t_dl=0.1, t_ul=0.1, record_virtual=False),
         {"N": "count", "n": "count", "T": "count0", "K": "count", "compute": ("array", (3,)),
          "t_dl": "nonneg_real", "t_ul": "nonneg_real", "record_virtual": "flag"}),
    Door("compute_times", lambda **k: S.compute_times(**k), dict(seeds=[0, 1], N=3, low=1.0, high=5.0),
         {"N": "count", "low": "pos_real", "high": "pos_real"}),
    Door("Schedule.check_delay", lambda lam: RR.check_delay(lam), dict(lam=2), {"lam": "count0"}),
    Door("Participation.check", lambda t_d: PART.check(t_d=t_d), dict(t_d=2), {"t_d": "count"}),
    Door("LocalSGD", lambda **k: D.LocalSGD(**k), dict(eta_local=0.1, K=2, output="displacement"),
         {"eta_local": "pos_real", "K": "count", "output": "choice"}),
    Door("schedule_moments", lambda eta, x0: D.schedule_moments(FED, RR, LOC, eta=eta, x0=x0),
         dict(eta=0.5, x0=np.zeros(2)), {"eta": "pos_real", "x0": ("array", (2,), "strict")}),
    Door("simulate_schedule", lambda eta, x0, seed: D.simulate_schedule(NOISY, RR, LOC, eta=eta, x0=x0, seed=seed),
         dict(eta=0.5, x0=np.zeros(2), seed=0), {"eta": "pos_real", "x0": ("array", (2,), "strict"), "seed": "count0"}),
    Door("random_participation_moments",
         lambda eta, T: D.random_participation_moments(FED, LOC, eta=eta, T=T, x0=np.zeros(2),
                                                       participation=D.RandomParticipation.with_replacement(N=3, n=2)),
         dict(eta=0.5, T=5), {"eta": "pos_real", "T": "count0"}),
    Door("RandomParticipation.with_replacement", lambda N, n: D.RandomParticipation.with_replacement(N=N, n=n),
         dict(N=3, n=2), {"N": "count", "n": "count"}),
    # statements: exact and vectorised modes
    Door("Statement.evaluate", lambda eta: la_bounds.h_sgd.evaluate(eta=eta, mu=1, L=3, k=2), dict(eta=Fraction(1, 10)),
         {"eta": "pos_real"}),
    Door("Statement.__call__", lambda eta: la_bounds.h_sgd(eta=eta, mu=1.0, L=3.0, k=2.0), dict(eta=0.1),
         {"eta": "pos_real"}),
    # local adaptivity
    Door("local_adaptivity.fixed_point", lambda eta, tau, correction: la_exact.fixed_point(FED, eta=eta, tau=tau,
                                                                                          correction=correction),
         dict(eta=0.1, tau=5, correction="none"), {"eta": "pos_real", "tau": "count", "correction": "choice"}),
    Door("local_adaptivity.fixed_point(precond)", lambda precond: la_exact.fixed_point(FED, eta=0.1, tau=5, precond=precond),
         dict(precond=np.tile(np.eye(2), (3, 1, 1))), {"precond": ("array", (3, 2, 2))}),
    Door("local_adaptivity.round_map", lambda alpha: la_exact.round_map(FED, eta=0.1, tau=5, alpha=alpha),
         dict(alpha=1.0), {"alpha": "pos_real"}),
    Door("local_adaptivity.alpha_max", lambda eta, tau: la_exact.alpha_max(FED, eta=eta, tau=tau),
         dict(eta=0.1, tau=5), {"eta": "pos_real", "tau": "count"}),
    # FedDelAvg
    Door("feddelavg.period_map", lambda **k: fd_exact.period_map(FED, **k), dict(eta=0.05, tau=4, Delta=2, alpha=0.5),
         {"eta": "pos_real", "tau": "count", "alpha": "unit_real"}),
    Door("feddelavg.feddelavg", lambda **k: fd_alg.feddelavg(FED, **k), dict(eta=0.05, tau=4, Delta=2, alpha=0.5, K=3),
         {"eta": "pos_real", "tau": "count", "alpha": "unit_real", "K": "count"}),
    Door("feddelavg.fixed_point", lambda **k: fd_exact.fixed_point(FED, **k), dict(eta=0.05, tau=4, Delta=2, alpha=0.5),
         {"eta": "pos_real", "tau": "count", "alpha": "unit_real"}),
    Door("feddelavg.spectral_radius", lambda **k: fd_exact.spectral_radius(FED, **k),
         dict(eta=0.05, tau=4, Delta=2, alpha=0.5), {"eta": "pos_real", "tau": "count", "alpha": "unit_real"}),
    Door("feddelavg.asymptotic_gap", lambda **k: fd_exact.asymptotic_gap(FED, **k),
         dict(eta=0.05, tau=4, Delta=2, alpha=0.5), {"eta": "pos_real", "tau": "count", "alpha": "unit_real"}),
    Door("feddelavg.exact_trajectory", lambda **k: fd_exact.exact_trajectory(FED, **k),
         dict(eta=0.05, tau=4, Delta=2, alpha=0.5, K=3), {"eta": "pos_real", "tau": "count", "alpha": "unit_real",
                                                          "K": "count"}),
    Door("feddelavg.exact_optimal_alpha", lambda **k: fd_exact.exact_optimal_alpha(FED, **k),
         dict(eta=0.05, tau=4, Delta=2, objective="gap", tol=1e-6), {"eta": "pos_real", "tau": "count",
                                                                     "objective": "choice", "tol": "tol"}),
    Door("feddelavg.period_pencil", lambda **k: fd_exact.period_pencil(FED, **k), dict(eta=0.05, tau=4, Delta=2),
         {"eta": "pos_real", "tau": "count"}),
    Door("feddelavg.delta_threshold", lambda **k: fd_bounds.delta_threshold(**k),
         dict(eta=0.02, beta=1.0, L=1.0, tau=10, Delta=9), {"eta": "pos_real", "beta": "pos_real", "L": "pos_real",
                                                            "tau": "pos_real"}),   # float mode: a huge tau is valid
    Door("local_adaptivity.noise_moments", lambda **k: la_exact.noise_moments(NOISY, x0=np.zeros(2), **k),
         dict(eta=0.1, tau=3, alpha=0.5, T=4), {"eta": "pos_real", "tau": "count", "alpha": "pos_real", "T": "count0"}),
    Door("local_adaptivity.small_eta_limit", lambda **k: la_exact.small_eta_limit(FED, **k), dict(tau=3, gamma=1.0),
         {"tau": "count", "gamma": "pos_real"}),
    Door("local_adaptivity.assumption_constants", lambda **k: la_exact.assumption_constants(FED, **k),
         dict(eta=0.1, tau=3), {"eta": "pos_real", "tau": "count"}),
    Door("local_adaptivity.fedopt", lambda **k: la_alg.fedopt(FED, x0=np.zeros(2), **k),
         dict(rounds=3, eta=0.1, tau=2, alpha=1.0, seed=0), {"rounds": "count0", "eta": "pos_real", "tau": "count",
                                                            "alpha": "pos_real", "seed": "count0"}),
    Door("from_delays", lambda **k: S.from_delays(**k), dict(clients=np.zeros((3, 1), int), delays=np.ones((3, 1), int), N=2),
         {"N": "count"}),
    Door("sampled_schedule", lambda **k: D.sampled_schedule(**k), dict(N=3, T=4, seeds=[0, 1], n=2),
         {"N": "count", "T": "count0", "n": "count"}),
    Door("delayed.period_map", lambda **k: D.period_map(FED, RR, LOC, **k), dict(eta=0.5, period=3, offset=2),
         {"eta": "pos_real", "period": "count", "offset": "count0"}),
    # the rest of local adaptivity's public functions
    Door("local_adaptivity.local_operators", lambda **k: la_exact.local_operators(FED, **k), dict(eta=0.1, tau=3),
         {"eta": "pos_real", "tau": "count"}),
    Door("local_adaptivity.client_maps", lambda **k: la_exact.client_maps(FED, **k), dict(eta=0.1, tau=3),
         {"eta": "pos_real", "tau": "count"}),
    Door("local_adaptivity.first_order_bias", lambda **k: la_exact.first_order_bias(FED, **k),
         dict(eta=0.1, tau=3, correction="local"), {"eta": "pos_real", "tau": "count", "correction": "choice"}),
    Door("local_adaptivity.pseudo_gradient", lambda **k: la_exact.pseudo_gradient(FED, **k),
         dict(x=np.zeros(2), eta=0.1, tau=3), {"x": ("array", (2,)), "eta": "pos_real", "tau": "count"}),
    Door("local_adaptivity.client_covariances", lambda **k: la_exact.client_covariances(NOISY, **k), dict(eta=0.1, tau=3),
         {"eta": "pos_real", "tau": "count"}),
    Door("local_adaptivity.client_update", lambda **k: la_alg.client_update(FED, **k),
         dict(x=np.zeros(2), eta=0.1, tau=3, seed=0), {"x": ("array", (2,)), "eta": "pos_real", "tau": "count",
                                                       "seed": "count0"}),
    Door("local_adaptivity.fedopt_loop", lambda **k: la_alg.fedopt_loop(FED, x0=np.zeros(2), **k),
         dict(rounds=2, eta=0.1, tau=2, alpha=1.0), {"rounds": "count0", "eta": "pos_real", "tau": "count",
                                                    "alpha": "pos_real"}),
    Door("local_adaptivity.theorem3_eta", lambda **k: la_bounds.theorem3_eta(**k),
         dict(T=100, L=2.0, D=1.0, Lambda=2.0, G=1.0, tau=3), {"T": "pos_real", "L": "pos_real", "D": "pos_real"}),
    Door("local_adaptivity.tuned_client_eta", lambda **k: la_bounds.tuned_client_eta(**k), dict(mu=1.0, L=3.0, tau=3),
         {"mu": "pos_real", "L": "pos_real", "tau": "pos_real"}),
    Door("local_adaptivity.z_function", lambda **k: la_bounds.z_function(0.5, **k), dict(tau=3), {"tau": "pos_real"}),
    Door("local_adaptivity.sgd_decaying_schedule", lambda **k: la_bounds.sgd_decaying_schedule(3, **k),
         dict(a=1.0, beta=10.0), {"a": "pos_real", "beta": "pos_real"}),
    Door("local_adaptivity.theorem3_aggregates", lambda **k: la_bounds.theorem3_aggregates(W3, **k), dict(eta=0.1, tau=3),
         {"eta": "pos_real", "tau": "count"}),
    Door("local_adaptivity.theorem2_fixed_point_symbolic", lambda **k: la_bounds.theorem2_fixed_point_symbolic(**k),
         dict(M=2, d=1, tau=2), {"M": "count", "d": "count", "tau": "count"}),
    # the rest of FedDelAvg's public functions
    Door("feddelavg.feddelavg_loop", lambda **k: fd_alg.feddelavg_loop(FED, **k),
         dict(eta=0.05, tau=4, Delta=2, alpha=0.5, K=3), {"eta": "pos_real", "tau": "count", "alpha": "unit_real",
                                                          "K": "count"}),
    Door("feddelavg.sync_times", lambda **k: fd_alg.sync_times(**k), dict(tau=4, Delta=2, K=3),
         {"tau": "count", "K": "count"}),
    Door("feddelavg.alpha_comparison", lambda **k: fd_exact.alpha_comparison(FED, **k),
         dict(eta=0.05, tau=4, Deltas=[0, 2]), {"eta": "pos_real", "tau": "count"}),
    Door("feddelavg.h_value", lambda **k: fd_bounds.h_value(2.0, **k), dict(eta=0.1, beta=2.0, delta=1.0),
         {"eta": "pos_real", "beta": "pos_real"}),
    Door("feddelavg.psi_inf", lambda **k: fd_bounds.psi_inf(**k),
         dict(alpha=0.5, eta=0.02, beta=1.0, L=1.0, delta=0.5, tau=10, Delta=9),
         {"alpha": "unit_real_stmt", "eta": "pos_real", "beta": "pos_real", "L": "pos_real"}),
    Door("feddelavg.alpha_star_details", lambda **k: fd_bounds.alpha_star_details(**k),
         dict(eta=0.02, beta=1.0, L=1.0, delta=0.5, tau=10, Delta=9), {"eta": "pos_real", "beta": "pos_real"}),
    Door("feddelavg.numeric_alpha_star", lambda **k: fd_checks.numeric_alpha_star(**k),
         dict(eta=0.02, beta=1.0, L=1.0, delta=0.5, tau=10, Delta=9), {"eta": "pos_real", "beta": "pos_real"}),
    # the rest of the core
    Door("weights_from_sizes", lambda sizes: flt.problems.weights_from_sizes(sizes), dict(sizes=[3, 5, 2]),
         {"sizes": ("array", (3,), "free")}),
    Door("companion", lambda blocks: flt.companion(blocks), dict(blocks=[np.eye(2), 0.5 * np.eye(2)]),
         {"blocks": ("array", (2, 2, 2), "free")}),
    Door("first_n_arrivals_events", lambda **k: S.first_n_arrivals_events(**k),
         dict(N=3, n=2, T=4, K=2, compute=np.ones(3)), {"N": "count", "n": "count", "T": "count0", "K": "count",
                                                         "compute": ("array", (3,))}),
    Door("delayed.step_maps", lambda **k: D.step_maps(FED, RR, LOC, **k), dict(eta=0.5), {"eta": "pos_real"}),
    Door("verify.run", lambda **k: flt.verify.run(**k), dict(papers=["feddelavg"], quick=True, seed=0, only="alpha_star"),
         {"quick": "flag", "seed": "count0"}),
    Door("digits_federation", lambda **k: fl_datasets.digits_federation(**k),
         dict(n_clients=4, partition="label", seed=0, test_fraction=0.2, reg=1e-3),
         {"n_clients": "count", "partition": "choice", "seed": "count0", "test_fraction": "unit_real", "reg": "nonneg_real"}),
    Door("SeparableCosineFederation", lambda **k: flt.problems.SeparableCosineFederation(**k),
         dict(a=np.ones((3, 2)), b=np.full((3, 2), 0.5), c=np.zeros((3, 2))),
         {"a": ("array", (3, 2)), "b": ("array", (3, 2)), "c": ("array", (3, 2))}),
    Door("LogisticFederation.from_client_data", lambda **k: flt.problems.LogisticFederation.from_client_data(**k),
         dict(Xs=[np.ones((4, 3)), np.zeros((5, 3))], ys=[np.array([0, 1, 0, 1]), np.array([1, 0, 1, 0, 1])], reg=0.1),
         {"reg": "nonneg_real"}),
    Door("loglog_slope", lambda **k: flt.plotting.loglog_slope(**k), dict(x=[1.0, 2.0, 4.0], y=[1.0, 4.0, 16.0]),
         {"x": ("array", (3,)), "y": ("array", (3,))}),
    Door("KeyedStream", lambda seed: flt.backend.KeyedStream(seed, "x"), dict(seed=3), {"seed": "count0"}),
    Door("KeyedStream.normal", lambda **k: flt.backend.KeyedStream(3).normal(size=(2,), **k),
         dict(config=0, round=1, client=np.arange(3)), {"config": "key", "round": "key", "client": "key"}),
    Door("KeyedStream.generator", lambda **k: flt.backend.KeyedStream(3).generator(**k), dict(config=0, round=1, client=2),
         {"config": "key", "round": "key", "client": "key"}),
    Door("EventQueue.push", lambda time: S.EventQueue().push(time, "a"), dict(time=1.5), {"time": "time"}),
    Door("SeparableCosineFederation.F_inf_bound", lambda grid: flt.problems.SeparableCosineFederation(
        a=np.ones((3, 2)), b=np.full((3, 2), 0.5), c=np.zeros((3, 2))).F_inf_bound(grid=grid), dict(grid=65),
         {"grid": "count"}),
    Door("spectral_radius", lambda A: flt.linear.spectral_radius(A), dict(A=np.eye(2) * 0.5), {"A": ("array", (2, 2), "free")}),
    Door("local_adaptivity.theorem1_aggregates", lambda **k: la_bounds.theorem1_aggregates(**k),
         dict(weights=W3, h=np.array([0.1, 0.2, 0.3]), q=np.ones(3), sigma2=0.5),
         {"weights": ("array", (3,)), "h": ("array", (3,)), "q": ("array", (3,)), "sigma2": "nonneg_real"}),
    Door("local_adaptivity.lemma4_aggregates", lambda **k: la_bounds.lemma4_aggregates(**k),
         dict(A=np.tile(np.eye(2), (3, 1, 1)), b=np.ones((3, 2))), {"A": ("array", (3, 2, 2)), "b": ("array", (3, 2))}),
    Door("local_adaptivity.theorem2_fixed_point_scalar", lambda M: la_bounds.theorem2_fixed_point_scalar(M), dict(M=3),
         {"M": "count"}),
    Door("feddelavg.epsilon_value", lambda **k: fd_bounds.epsilon_value(2, **k),
         dict(alpha=0.5, eta=0.02, L=1.0, tau=10, Delta=9), {"alpha": "unit_real_stmt", "eta": "pos_real", "L": "pos_real"}),
    Door("feddelavg.Psi_value", lambda **k: fd_bounds.Psi_value(3, **k),
         dict(alpha=0.5, eta=0.02, beta=1.0, L=1.0, delta=0.5, tau=10, Delta=9),
         {"alpha": "unit_real_stmt", "eta": "pos_real", "beta": "pos_real"}),
    Door("feddelavg.theorem1_rhs", lambda **k: fd_bounds.theorem1_rhs(**k),
         dict(K=3, alpha=0.5, eta=0.02, beta=1.0, L=1.0, delta=0.5, tau=10, Delta=9, phi=0.5),
         {"alpha": "unit_real_stmt", "eta": "pos_real", "phi": "pos_real"}),
    Door("feddelavg.alpha_star", lambda **k: fd_bounds.alpha_star(**k),
         dict(eta=0.02, beta=1.0, L=1.0, delta=0.5, tau=10, Delta=9), {"eta": "pos_real", "beta": "pos_real"}),
]

from fltheory.sweep import sweep as _sweep  # noqa: E402

DOORS.append(Door("sweep", lambda chunk: _sweep(lambda eta: eta, {"eta": [0.1, 0.2, 0.3]}, chunk=chunk), dict(chunk=2),
                  {"chunk": "count_or_none"}))

# each paper's own table: tests/doors_<paper>.py (a list DOORS and a set CHOICES)
for _path in sorted(Path(__file__).parent.glob("doors_*.py")):
    _module = importlib.import_module(_path.stem)
    DOORS += list(_module.DOORS)
    CHOICES.update(getattr(_module, "CHOICES", ()))

PAIRS = [pytest.param(door, p, id=f"{door.name}:{p}") for door in DOORS for p in door.params]
CALLS = {"bad": 0, "refused": 0}


@pytest.fixture(scope="module", autouse=True)
def _count_calls():
    """Report how many bad inputs were tried (pytest -s shows it; the fuzz profile must reach 10^4)."""
    yield
    print(f"\n[doors] {CALLS['bad']} bad inputs tried on {len(PAIRS)} parameters of {len(DOORS)} entry points; "
          f"{CALLS['refused']} refused by name")


@pytest.mark.parametrize("door", [pytest.param(d, id=d.name) for d in DOORS])
def test_the_valid_call_is_accepted(door):
    door.call(**door.valid)


def _strategy(kind):
    if isinstance(kind, tuple) and kind[0] == "array":
        return bad_arrays(kind[1], strict=len(kind) > 2 and kind[2] == "strict", free=len(kind) > 2 and kind[2] == "free")
    return BAD[kind]


@pytest.mark.parametrize("door, param", PAIRS)
def test_bad_input_is_refused_by_name(door, param):
    @settings(max_examples=N_DRAWS, deadline=None, derandomize=PROFILE != "fuzz",
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large])
    @given(_strategy(door.params[param]))
    def check(bad):
        args = dict(door.valid)
        args[param] = bad
        CALLS["bad"] += 1
        t0 = time.perf_counter()
        try:
            out = door.call(**args)
        except flt.FLTheoryError as exc:
            elapsed = time.perf_counter() - t0
            assert door.names.get(param, param) in str(exc), f"{door.name}({param}={bad!r}): message {exc!r}"
            assert elapsed < TIME_LIMIT, f"{door.name}({param}={bad!r}) took {elapsed:.2f} s to refuse"
            CALLS["refused"] += 1
            return
        except Exception as exc:  # noqa: BLE001 - the point of the test
            pytest.fail(f"{door.name}({param}={bad!r}) raised {type(exc).__name__}: {exc}")
        pytest.fail(f"{door.name}({param}={bad!r}) accepted an invalid input and returned {type(out).__name__}")

    check()
