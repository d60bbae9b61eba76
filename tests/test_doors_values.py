"""Issue 19: values that passed the doors (silently wrong, silently infinite, unnamed, or too big to
start).  One test per item of the issue; each case must give a named package error or the right answer.
"""
from __future__ import annotations

import functools
import time
import warnings
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

import fltheory as flt
import fltheory.plotting as P
from doorkit import FED, LOC, NOISY, RR
from fltheory import datasets as DS
from fltheory import delayed as D
from fltheory import schedules as S
from fltheory.backend import KeyedStream
from fltheory.linear import AffineMap
from fltheory.papers.defedavg import events as DE
from fltheory.papers.defedavg import exact as DX
from fltheory.papers.feddelavg import algorithm as FA
from fltheory.papers.feddelavg import bounds as FB
from fltheory.papers.feddelavg import exact as FX
from fltheory.papers.local_adaptivity import algorithm as LA
from fltheory.papers.local_adaptivity import exact as LX
from fltheory.papers.tdma import algorithm as TA
from fltheory.papers.tdma import exact as TX
from fltheory.papers.tdma import timing as TT

TD_FED = TX.tdma_quadratic(A=[1.0, 0.5], c=[[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]], sigma=0.5, B=2)


def refused(call, *names, kind=flt.FLTheoryError, seconds=20.0):
    """``call()`` raises a package error whose message names every one of ``names``, before doing the work: within
    ``seconds``, a liveness bound (a refusal up front takes milliseconds; the refused work minutes or more), not a
    timing claim, so that a loaded machine does not fail it."""
    t0 = time.perf_counter()
    with pytest.raises(kind) as info:
        call()
    elapsed = time.perf_counter() - t0
    for name in names:
        assert name in str(info.value), f"{name!r} not in {info.value!r}"
    assert elapsed < seconds, f"took {elapsed:.2f} s to refuse"
    return info.value


# 1 ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("N", [np.uint8(4), np.int16(4), np.uint64(4), 4.0, np.float32(4.0), Fraction(4), Decimal(4)],
                         ids=lambda v: f"{type(v).__name__}")
def test_1_integer_parameters_of_any_width_are_python_ints(N):
    ref = TX.rate_per_slot(TD_FED, N=4, S=1, tau_comp=4, eta=0.05)
    got = TX.rate_per_slot(TD_FED, N=N, S=np.uint8(1), tau_comp=np.uint8(4), r=np.uint8(1), eta=0.05)
    assert got.bias == pytest.approx(ref.bias, rel=1e-12) and got.period == ref.period
    assert TT.tau_async(N=N, S=np.uint8(2), tau_comp=np.uint8(3), r=np.uint8(1)) == TT.tau_async(N=4, S=2, tau_comp=3, r=1)
    # the overflow case of the issue: 20 devices, uint8 counts
    fed20 = TX.tdma_quadratic(A=[1.0], c=np.linspace(-1, 1, 20)[:, None])
    a = TX.rate_per_slot(fed20, N=np.uint8(20), S=1, tau_comp=4, eta=0.05)
    b = TX.rate_per_slot(fed20, N=20, S=1, tau_comp=4, eta=0.05)
    assert a.bias == pytest.approx(b.bias, rel=1e-12)
    refused(lambda: TX.rate_per_slot(TD_FED, N=4.5, S=1, tau_comp=4, eta=0.05), "N")


# 2 ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", ["from_delays", "from_lists", "push_str", "push_bytes", "push_bool", "push_none"])
def test_2_text_and_bools_are_not_numbers(case):
    c, d = np.zeros((2, 1), int), np.zeros((2, 1), int)
    calls = {
        "from_delays": (lambda: S.from_delays(clients=c, delays=d, N=1, times=["5", "6"]), "times"),
        "from_lists": (lambda: S.Schedule.from_lists([[(0, 0)], [(0, 0)]], N=1, times=["5", "6"]), "times"),
        "push_str": (lambda: S.EventQueue().push("5", "a"), "time"),
        "push_bytes": (lambda: S.EventQueue().push(b"5", "a"), "time"),
        "push_bool": (lambda: S.EventQueue().push(True, "a"), "time"),
        "push_none": (lambda: S.EventQueue().push(None, "a"), "time"),
    }
    call, name = calls[case]
    refused(call, name, kind=flt.validation.InputTypeError)
    # valid times still work
    assert S.from_delays(clients=c, delays=d, N=1, times=[5, Fraction(6)]).time.tolist() == [[5.0, 6.0]]
    q = S.EventQueue()
    q.push(np.float32(2.0), "b")
    q.push(Fraction(1, 2), "a")
    assert [e.kind for e in q.drain()] == ["a", "b"]


# 3 ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("key, value", [("config", np.array([np.nan])), ("round", 2.5), ("round", -np.inf),
                                        ("client", -1), ("client", np.array([0, -3])), ("config", True),
                                        ("round", "1"), ("client", np.array([0.5])), ("config", None)],
                         ids=lambda v: repr(v)[:20])
def test_3_keyed_streams_refuse_garbage_keys(key, value):
    ks = KeyedStream(1)
    for method in (ks.normal, ks.uniform):
        refused(lambda: method(**{key: value}, size=(2,)), key)
    refused(lambda: ks.generator(**{key: value}), key)
    # integral floats and any integer width are the same key as the Python int
    same = ks.normal(config=np.uint8(3), round=2.0, client=np.array([1, 2], dtype=np.int16), size=(2,))
    assert np.array_equal(same, ks.normal(config=3, round=2, client=np.array([1, 2]), size=(2,)))


# 4 ------------------------------------------------------------------------------------------------
def _objects():
    fig_curves = {"a": [1.0, 2.0]}
    return {
        "schedule_moments(fed)": (lambda: D.schedule_moments(5, RR, LOC, eta=0.1, x0=np.zeros(2)), "fed"),
        "step_maps(fed)": (lambda: D.step_maps(5, RR, LOC, eta=0.1), "fed"),
        "period_map(schedule)": (lambda: D.period_map(FED, 5, LOC, eta=0.1, period=3), "schedule"),
        "simulate_schedule(fed)": (lambda: D.simulate_schedule(5, RR, LOC, eta=0.1, x0=np.zeros(2)), "fed"),
        "LocalSGD.affine(fed)": (lambda: LOC.affine(5), "fed"),
        "feddelavg.smoothness(fed)": (lambda: FA.smoothness(5), "fed"),
        "feddelavg_loop(fed)": (lambda: FA.feddelavg_loop(5, eta=0.1, tau=2, Delta=1, alpha=0.5, K=2), "fed"),
        "feddelavg.quadratic_constants(fed)": (lambda: FX.quadratic_constants(5), "fed"),
        "fedopt(problem)": (lambda: LA.fedopt(5, x0=np.zeros(2), rounds=2, eta=0.1, tau=2), "problem"),
        "local_operators(fed)": (lambda: LX.local_operators(5, eta=0.1, tau=2), "fed"),
        "round_operators(fed)": (lambda: LX.round_operators(5, eta=0.1, tau=2), "fed"),
        "client_maps(fed)": (lambda: LX.client_maps(5, eta=0.1, tau=2), "fed"),
        "round_map(fed)": (lambda: LX.round_map(5, eta=0.1, tau=2), "fed"),
        "first_order_bias(fed)": (lambda: LX.first_order_bias(5, eta=0.1, tau=2), "fed"),
        "alpha_max(fed)": (lambda: LX.alpha_max(5, eta=0.1, tau=2), "fed"),
        "pseudo_gradient(fed)": (lambda: LX.pseudo_gradient(5, np.zeros(2), eta=0.1, tau=2), "fed"),
        "client_covariances(fed)": (lambda: LX.client_covariances(5, eta=0.1, tau=2), "fed"),
        "noise_moments(fed)": (lambda: LX.noise_moments(5, eta=0.1, tau=2, alpha=1.0, x0=np.zeros(2), T=2), "fed"),
        "la.assumption_constants(fed)": (lambda: LX.assumption_constants(5, eta=0.1, tau=2), "fed"),
        "bias_vs_eta_figure(curves)": (lambda: P.bias_vs_eta_figure([0.1, 0.2], 5), "curves"),
        "bias_vs_eta_figure(ax)": (lambda: P.bias_vs_eta_figure([0.1, 0.2], fig_curves, ax=5), "ax"),
        "alpha_vs_delta_figure(comparison)": (lambda: P.alpha_vs_delta_figure(5), "comparison"),
        "spectral_radius(scalar)": (lambda: flt.linear.spectral_radius(0.5), "A"),
        "spectral_radius(non-square)": (lambda: flt.linear.spectral_radius(np.ones((2, 3))), "A"),
        "spectral_radius(text)": (lambda: flt.linear.spectral_radius("[[1]]"), "A"),
    }


@pytest.mark.parametrize("case", list(_objects()))
def test_4_objects_are_checked_by_name(case):
    call, name = _objects()[case]
    refused(call, name)
    assert float(flt.linear.spectral_radius(np.array([[0.5, 1.0], [0.0, -0.7]]))) == pytest.approx(0.7)


# 5 ------------------------------------------------------------------------------------------------
def test_5_overflow_is_reported_not_returned():
    sched = DE.iid_oracle(N=1, n=1, T=200, delay="constant", lam=2)
    fed1 = DX.iid_federation(a=[1.0, 2.0], N=1, sigma2=0.1)
    refused(lambda: DX.moments(fed1, sched, K=1, eta=1e6, eta_bar=1.0, x0=np.ones(2)), "eta")
    ok = DX.moments(fed1, sched, K=1, eta=0.1, eta_bar=1.0, x0=np.ones(2))
    assert np.all(np.isfinite(np.asarray(ok.gap)))
    # TDMA's rate: a divergent step size says so
    rt = TX.rate_per_slot(TD_FED, N=4, S=2, tau_comp=3, eta=2.5)
    assert rt.converges is False and rt.spectral_radius > 1 and rt.bias == float("inf")
    assert TX.rate_per_slot(TD_FED, N=4, S=2, tau_comp=3, eta=0.2).converges is True
    # FedDelAvg's closed forms past the float range name the cause
    kw = dict(alpha=0.5, eta=0.02, beta=1.0, L=1.0, delta=0.5, tau=10, Delta=9)
    for bad in (dict(eta=2.5, tau=1000), dict(tau=10**6)):
        refused(lambda: FB.Psi_value(3, **{**kw, **bad}), "Psi", "overflow")
    refused(lambda: FB.theorem1_rhs(K=3, phi=0.5, **{**kw, "tau": 10**6}), "theorem1", "overflow")
    assert np.isfinite(FB.Psi_value(3, **kw)) and np.isfinite(FB.theorem1_rhs(K=3, phi=0.5, **kw))
    assert float(FB.delta_threshold(eta=0.1, beta=2, L=1.5, tau=5, Delta=0)) == -np.inf   # documented, total
    # a model with NaN has no accuracy
    ds = _digits()
    W = np.zeros(ds.fed.d)
    W[3] = np.nan
    refused(lambda: ds.test_accuracy(W), "W")
    assert 0.0 <= float(ds.test_accuracy(np.zeros(ds.fed.d))) <= 1.0


# 6 ------------------------------------------------------------------------------------------------
def _big():
    cos = flt.problems.SeparableCosineFederation(a=np.ones((3, 2)), b=np.full((3, 2), 0.5), c=np.zeros((3, 2)))
    Xs, ys = [np.ones((4, 3)), np.zeros((5, 3))], [np.array([0, 1, 0, 1]), np.array([1, 0, 1, 0, 1])]
    log = flt.problems.LogisticFederation.from_client_data(Xs + Xs, ys + ys, reg=0.1)
    tm = TT.tdma_schedule(N=4, S=2, tau_comp=3, r=1, K=8)
    digits = _digits()
    return {
        "F_inf_bound(grid)": (lambda: cos.F_inf_bound(grid=10**12), "grid"),
        "LogisticFederation(n_classes)": (lambda: flt.problems.LogisticFederation(
            np.ones((2, 3, 2)), np.zeros((2, 3), int), n_classes=10**12), "n_classes"),
        "feddelavg(n_seeds)": (lambda: FA.feddelavg(FED, eta=0.05, tau=4, Delta=2, alpha=0.5, K=3, n_seeds=10**9),
                               "n_seeds"),
        "afl_tdma(batch_size)": (lambda: TA.afl_tdma(digits.fed, tm, eta=0.1, x0=np.zeros(digits.fed.d),
                                                     batch_size=10**6), "batch_size"),
        "afl_tdma(batch_size, time)": (lambda: TA.afl_tdma(log, TT.tdma_schedule(N=4, S=2, tau_comp=3, r=1, K=20),
                                                           eta=0.1, x0=np.zeros(log.d), batch_size=10**6),
                                       "batch_size"),
        "stationary_covariance(n=4096)": (lambda: _big_map().stationary_covariance(np.eye(4096)),
                                          "stationary covariance"),
        "exact_trajectory(K)": (lambda: FX.exact_trajectory(FED, eta=0.05, tau=4, Delta=2, alpha=0.5, K=5_100_000), "K"),
        "tdma.exact_moments(K=512k)": (lambda: TX.exact_moments(TD_FED, _big_timing(), eta=0.2, x0=np.zeros(2)),
                                       "steps"),
    }


@functools.lru_cache(maxsize=1)
@functools.lru_cache(maxsize=1)
def _big_timing():
    return TT.tdma_schedule(N=4, S=2, tau_comp=3, r=1, K=512_000)   # ~20 s to build; its moments would take minutes


@functools.lru_cache(maxsize=1)
def _big_map():
    return AffineMap(0.5 * np.eye(4096), np.zeros(4096))


@functools.lru_cache(maxsize=1)
def _digits():
    return DS.digits_federation(n_clients=4, partition="label", seed=0)


@pytest.mark.parametrize("case", ["F_inf_bound(grid)", "LogisticFederation(n_classes)", "feddelavg(n_seeds)",
                                  "afl_tdma(batch_size)", "afl_tdma(batch_size, time)", "stationary_covariance(n=4096)",
                                  "exact_trajectory(K)", "tdma.exact_moments(K=512k)"])
def test_6_big_work_is_refused_up_front(case):
    if case.startswith("tdma.exact_moments"):
        _big_timing()                    # built before the clock starts: the refusal itself must be immediate
    if case.startswith("stationary_covariance"):
        _big_map()
    call, name = _big()[case]
    err = refused(call, name)
    assert "about" in str(err)          # the estimate is stated


# 7 ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("value", [Fraction(1, 10), Decimal("0.1"), [Fraction(1, 10)], np.array([Decimal("0.1")])],
                         ids=["Fraction", "Decimal", "list-of-Fraction", "array-of-Decimal"])
def test_7_fractions_and_decimals_are_reals(value):
    arr = flt.validation.array(value, "eta")
    assert arr.dtype == np.float64 and float(arr.reshape(-1)[0]) == pytest.approx(0.1)
    fp = LX.fixed_point(FED, eta=value if np.ndim(value) == 0 else value[0], tau=2)
    assert np.allclose(fp.x, LX.fixed_point(FED, eta=0.1, tau=2).x)
    assert np.isfinite(FX.spectral_radius(FED, eta=Fraction(1, 20), tau=4, Delta=2, alpha=Decimal("0.5")))
    # hessp takes lists like every other method
    ds = _digits()
    v = [0.0] * ds.fed.d
    assert np.allclose(ds.fed.hessp(v, v), ds.fed.hessp(np.zeros(ds.fed.d), np.zeros(ds.fed.d)))
    # text among them is still refused
    refused(lambda: flt.validation.array(np.array(["0.1"], dtype=object), "eta"), "eta")
    refused(lambda: flt.validation.array([Fraction(1, 2), "a"], "eta"), "eta")


# 8 ------------------------------------------------------------------------------------------------
def test_8_the_right_parameter_is_named():
    e = refused(lambda: LX.noise_moments(NOISY, eta=0.1, tau=2, alpha=1.0, x0="5", T=2), "x0")
    assert "mean0" not in str(e)
    e = refused(lambda: S.compute_times(seeds=[0], N=2, low=1e300), "low")
    assert "high must" not in str(e)
