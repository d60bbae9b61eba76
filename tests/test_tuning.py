"""The best step size (fltheory.tuning and each paper's best_step_size): closed forms, optimality on a fine
grid and at +-1 %, the prescription never beating the optimum, invariances, determinism, the doors."""
import json
import math

import numpy as np
import pytest

import fltheory as flt
from fltheory import validation as V
from fltheory.tuning import LogRange, StepSizeComparison, minimise
from fltheory.papers import afl_dga, defedavg, feddelavg, local_adaptivity, tdma
from fltheory.papers.tdma import exact as TX, timing as TT
from fltheory.schedules import synchronous_participation


# ----------------------------------------------------------------------------- the core minimiser
def test_minimise_closed_forms():
    # (eta - 3)^2 + 1: least at 3; a ridge in two parameters: least at (e, e^-2)
    r = minimise(lambda p: (p["eta"] - 3.0) ** 2 + 1.0, [LogRange("eta", 1e-3, 100.0)], start={"eta": 0.01},
                 budget=20, seed=0)
    assert r.best["eta"] == pytest.approx(3.0, rel=1e-6) and r.value == pytest.approx(1.0, abs=1e-12)

    def ridge(p):
        u, v = math.log(p["a"]) - 1, math.log(p["b"]) + 2
        return u * u + v * v + u * v

    r = minimise(ridge, [LogRange("a", 1e-3, 100.0), LogRange("b", 1e-3, 100.0)], start={"a": 0.1, "b": 1.0},
                 budget=30, seed=1)
    assert r.best["a"] == pytest.approx(math.e, rel=1e-5) and r.best["b"] == pytest.approx(math.exp(-2), rel=1e-5)


def test_minimise_beats_a_fine_grid_and_its_neighbours():
    # two local minima (at eta = 0.05 and eta = 2, the deeper): the grid, the search and the refinement find it
    def err(p):
        t = math.log(p["eta"])
        return min((t - math.log(0.05)) ** 2 + 0.3, (t - math.log(2.0)) ** 2 + 0.1)

    r = minimise(err, [LogRange("eta", 1e-4, 10.0)], start={"eta": 0.05}, budget=20, seed=0)
    assert r.best["eta"] == pytest.approx(2.0, rel=1e-5)
    fine = np.geomspace(1e-4, 10.0, 5001)
    assert r.value <= min(err({"eta": x}) for x in fine)
    assert r.value <= err({"eta": 0.99 * r.best["eta"]}) and r.value <= err({"eta": 1.01 * r.best["eta"]})


def test_minimise_counts_refusals_and_non_finite_as_infinite():
    def err(p):
        if p["eta"] > 1.0:
            raise V.InputError("eta diverges")
        return math.nan if p["eta"] < 1e-2 else (p["eta"] - 0.5) ** 2

    r = minimise(err, [LogRange("eta", 1e-3, 10.0)], start={"eta": 0.1}, budget=10, seed=0)
    assert r.best["eta"] == pytest.approx(0.5, rel=1e-5)
    assert math.isinf(r.curve[1][0]) and math.isinf(r.curve[1][-1])


# ----------------------------------------------------------------------------- the papers
def _gd_tdma(scale=1.0, K=20):
    return tdma.best_step_size(A=[scale], c=[[0.0]], x0=[2.0], S=1, tau_comp=1, K=K)


def test_tdma_one_device_is_gd_least_at_eta_one_over_L():
    # one device, f = w^2/2, no noise: error (1/(K+1)) sum_k (1 - eta)^(2k) x0^2, least at eta = 1 with value x0^2/(K+1)
    r = _gd_tdma()
    assert r.best["eta"] == pytest.approx(1.0, rel=1e-6)
    assert r.best_error == pytest.approx(4.0 / 21, rel=1e-10)
    eta = r.prescribed["eta"]
    assert eta == pytest.approx(float(tdma.bounds.beta_value(S=1, B=1, L=1.0, N=1, M=1.0)) / math.sqrt(21))
    assert r.prescribed_error == pytest.approx(4.0 * sum((1 - eta) ** (2 * k) for k in range(21)) / 21, rel=1e-10)
    assert r.ratio == pytest.approx(r.prescribed_error / r.best_error) and r.ratio > 1


def test_scaling_the_curvature_by_L_scales_the_best_eta_by_one_over_L():
    a, b = _gd_tdma(K=8), _gd_tdma(scale=4.0, K=8)
    assert b.best["eta"] == pytest.approx(a.best["eta"] / 4.0, rel=1e-5)
    assert b.best_error == pytest.approx(16.0 * a.best_error, rel=1e-8)     # the gradient scales with L
    assert b.ratio == pytest.approx(a.ratio, rel=1e-8)


def test_tdma_optimum_on_a_fine_grid_and_at_one_percent():
    kw = dict(A=[1.0, 0.5], c=[[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]], x0=[1.0, 1.0], S=2, tau_comp=2,
              K=12, sigma=0.5)
    r = tdma.best_step_size(**kw)
    fed = TX.tdma_quadratic(A=kw["A"], c=kw["c"], sigma=0.5)
    tm = TT.tdma_schedule(N=4, S=2, tau_comp=2, K=12)

    def err(eta):
        with np.errstate(all="ignore"):
            v = float(np.asarray(TX.exact_moments(fed, tm, eta=eta, x0=kw["x0"]).grad_sq)[:, 0].mean())
        return v if math.isfinite(v) else math.inf

    assert err(r.best["eta"]) == pytest.approx(r.best_error, rel=1e-12)        # recomputed independently
    assert err(r.prescribed["eta"]) == pytest.approx(r.prescribed_error, rel=1e-12)
    lo, hi = r.curve["values"][0], r.curve["values"][-1]
    grid = np.geomspace(lo, hi, 120)
    assert r.best_error <= min(err(float(x)) for x in grid)
    assert r.best_error <= err(0.99 * r.best["eta"]) and r.best_error <= err(1.01 * r.best["eta"])
    assert r.ratio >= 1


def _afl():
    fed = flt.random_quadratic_federation(M=2, d=2, seed=3, sigma2=0.1)
    return afl_dga.best_step_size(fed=fed, part=synchronous_participation(N=2, T=8, K=2, weights=fed.weights),
                                  w0=np.ones(2), budget=12), fed


def test_afl_dga_prescription_and_optimum():
    r, fed = _afl()
    assert r.prescribed["eta"] == pytest.approx(math.sqrt(2) / (float(fed.L) * math.sqrt(8)))
    part = synchronous_participation(N=2, T=8, K=2, weights=fed.weights)
    err = lambda e: afl_dga.afl_dga_exact(fed, part, eta=e, w0=np.ones(2)).average_grad2()   # noqa: E731
    assert err(r.prescribed["eta"]) == pytest.approx(r.prescribed_error, rel=1e-12)
    assert r.best_error <= err(0.99 * r.best["eta"]) and r.best_error <= err(1.01 * r.best["eta"])
    assert r.ratio >= 1 and r.best_error <= min(r.curve["errors"])


def test_defedavg_prescription_ratio_and_determinism():
    kw = dict(a=[1.0, 0.5], sigma2=1.0, N=4, n=2, K=2, T=12, lam=1, x0=[2.0, 2.0], budget=12)
    r = defedavg.best_step_size(**kw)
    rates = defedavg.prescribed_rates(n=2, K=2, T=12, L=1.0, sigma2=1.0, Phi0=0.5 * (4 + 0.5 * 4))
    assert r.prescribed == {"eta_bar": pytest.approx(rates.eta_bar)} and r.extra["eta_prescribed"] == rates.eta
    assert r.ratio >= 1 and r.best_error <= min(r.curve["errors"])
    assert r.to_dict() == defedavg.best_step_size(**kw).to_dict()          # deterministic for a seed
    json.dumps(r.to_dict())
    both = defedavg.best_step_size(**kw, tune=("eta_bar", "eta"))
    assert both.names == ("eta_bar", "eta") and both.best_error <= r.best_error * (1 + 1e-12)


def test_feddelavg_alpha_and_eta():
    fed = flt.random_quadratic_federation(M=3, d=2, kappa=4, seed=2)
    r = feddelavg.best_step_size(fed=fed, eta=0.1, tau=4, Delta=3, K=6, budget=12)
    beta, L, delta = (float(v) for v in feddelavg.exact.quadratic_constants(fed))
    assert r.prescribed["alpha"] == pytest.approx(float(feddelavg.alpha_star(eta=0.1, beta=beta, L=L, delta=delta,
                                                                                tau=4, Delta=3)))
    tr = feddelavg.exact_trajectory(fed, eta=0.1, tau=4, Delta=3, alpha=r.best["alpha"], K=6)
    assert float(np.min(np.asarray(tr.losses)[1:]) - fed.loss(fed.x_star)) == pytest.approx(r.best_error, rel=1e-10)
    assert r.ratio >= 1 and 0 < r.best["alpha"] <= 1
    joint = feddelavg.best_step_size(fed=fed, eta=0.1, tau=4, Delta=3, K=6, tune=("alpha", "eta"), budget=12)
    assert joint.best_error <= r.best_error


def test_local_adaptivity_server_rate_below_alpha_max():
    fed = flt.random_quadratic_federation(M=3, d=2, seed=1, sigma2=0.01)
    r = local_adaptivity.best_step_size(fed=fed, eta=0.1, tau=5, T=10, x0=np.ones(2), budget=12)
    assert r.prescribed == {"alpha": pytest.approx(0.5)}
    assert 0 < r.best["alpha"] < r.extra["alpha_max"]
    assert r.extra["alpha_max"] == pytest.approx(float(local_adaptivity.alpha_max(fed, eta=0.1, tau=5,
                                                                                   correction="local")))
    assert r.ratio >= 1 and r.best_error <= min(r.curve["errors"])


def test_comparison_is_frozen_and_serialisable():
    r = _gd_tdma(K=4)
    assert isinstance(r, StepSizeComparison)
    with pytest.raises(AttributeError):
        r.ratio = 1.0
    d = json.loads(json.dumps(r.to_dict()))
    assert d["names"] == ["eta"] and len(d["curve"]["values"]) == len(d["curve"]["errors"]) == 21
    assert "ratio" in str(r)


# ----------------------------------------------------------------------------- the doors
@pytest.mark.parametrize("call, name", [
    (lambda: tdma.best_step_size(A=[1.0], c=[[0.0]], x0=[2.0], S=1, tau_comp=1, K=0), "K"),
    (lambda: tdma.best_step_size(A=[1.0], c=[[0.0]], x0=[2.0, 1.0], S=1, tau_comp=1, K=3), "x0"),
    (lambda: defedavg.best_step_size(a=[1.0], sigma2=1.0, N=2, n=1, K=1, T=5, lam=0, x0=[1.0], tune="eta2"), "tune"),
    (lambda: defedavg.best_step_size(a=[1.0], sigma2=1.0, N=2, n=3, K=1, T=5, lam=0, x0=[1.0]), "n"),
    (lambda: feddelavg.best_step_size(fed=flt.random_quadratic_federation(M=2, d=1, seed=0), eta=0.1, tau=2,
                                      Delta=3, K=3), "Delta"),
    (lambda: feddelavg.best_step_size(fed="fed", eta=0.1, tau=2, Delta=1, K=3), "fed"),
    (lambda: afl_dga.best_step_size(fed=flt.random_quadratic_federation(M=2, d=2, seed=0), part=None,
                                    w0=np.ones(2)), "part"),
    (lambda: local_adaptivity.best_step_size(fed=flt.random_quadratic_federation(M=2, d=2, seed=0), eta=0.1, tau=2,
                                             T=0, x0=np.ones(2)), "T"),
    (lambda: local_adaptivity.best_step_size(fed=flt.random_quadratic_federation(M=2, d=2, seed=0), eta=-1.0,
                                             tau=2, T=3, x0=np.ones(2)), "eta"),
    (lambda: minimise(lambda p: 1.0, [LogRange("eta", 1e-3, 1.0)], start={}), "start"),
    (lambda: minimise(lambda p: 1.0, [LogRange("eta", 1e-3, 1.0)], start={"eta": 0.1}, budget=0), "budget"),
    (lambda: minimise("f", [LogRange("eta", 1e-3, 1.0)], start={"eta": 0.1}), "error"),
    (lambda: LogRange("eta", 0.0, 1.0), "eta"),
])
def test_bad_input_is_refused_by_name(call, name):
    with pytest.raises(V.FLTheoryError, match=rf"^{name}\b"):
        call()


def test_step_size_figure(tmp_path):
    from fltheory.plotting import step_size_figure
    r = _gd_tdma(K=4)
    fig = step_size_figure(r, title="GD")
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and len(ax.get_lines()) == 3
    assert ax.get_lines()[1].get_xdata()[0] == r.best["eta"]
    assert step_size_figure(r, path=tmp_path / "f.png") == tmp_path / "f.png" and (tmp_path / "f.png").stat().st_size
    with pytest.raises(V.InputTypeError, match="^comparison"):
        step_size_figure({"ratio": 1.0})


def test_afl_dga_one_client_in_sync_is_gd_least_at_eta_one():
    # one client f = |w|^2/2 (identity Hessian), K = 1, D = 0, no noise: w^t = (1 - eta)^t w0, so the average over
    # t < T of ||grad F||^2 = (1/T) sum_t (1 - eta)^(2t) ||w0||^2 is least at eta = 1, where it is ||w0||^2 / T
    fed = flt.QuadraticFederation(np.eye(2)[None], np.zeros((1, 2)))
    r = afl_dga.best_step_size(fed=fed, part=synchronous_participation(N=1, T=6, K=1, weights=fed.weights),
                               w0=[1.0, 2.0], budget=8)
    assert r.best["eta"] == pytest.approx(1.0, rel=1e-6) and r.best_error == pytest.approx(5.0 / 6, rel=1e-10)
    assert r.prescribed["eta"] == pytest.approx(1 / math.sqrt(6)) and r.ratio > 1


def test_an_error_infinite_everywhere_is_refused():
    from fltheory.tuning import compare
    with pytest.raises(V.InputError, match="diverges"):
        compare(lambda p: math.inf, [LogRange("eta", 1e-3, 1.0)], prescribed={"eta": 0.1}, horizon=3, engine="e",
                error_name="err", prescription="p", budget=3, grid=3)
    fed = flt.random_quadratic_federation(M=3, d=2, kappa=4, seed=2)
    with pytest.raises(V.InputError, match=r"diverges.*smaller eta"):       # the given step that is not tuned is named
        feddelavg.best_step_size(fed=fed, eta=1e30, tau=4, Delta=3, K=3, budget=4)
