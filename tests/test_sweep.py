"""Sweeps: chunked, local or on a Dask cluster, the numbers of one unchunked call, bit for bit."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fltheory as flt
from fltheory.papers.local_adaptivity import exact
from fltheory.papers.local_adaptivity.algorithm import fedopt
from fltheory.sweep import grid_points, sweep
from fltheory.validation import InputError, InputTypeError

FED = flt.random_quadratic_federation(M=3, d=2, kappa=5.0, seed=1)
NOISY = flt.QuadraticFederation(FED.H, FED.x_opt, FED.weights, sigma2=0.2)
GRID = {"eta": np.linspace(0.02, 0.2, 5), "tau": np.array([1, 3, 7])}


def fixed_points(eta, tau):
    return exact.fixed_point(FED, eta=eta[:, None], tau=tau[:, None]).x


def noisy_runs(eta, tau, config):
    """Noisy local SGD: the noise is keyed by the GLOBAL configuration index."""
    res = fedopt(NOISY, x0=np.zeros((eta.size, 2)), rounds=4, eta=eta[:, None], tau=tau[:, None], seed=3,
                 config=config, record_every=4)
    return res.x


@settings(max_examples=15, deadline=None)
@given(st.integers(1, 16))
def test_chunked_sweep_is_one_call_bit_for_bit(chunk):
    res = sweep(fixed_points, GRID, chunk=chunk)
    whole = fixed_points(res.params["eta"], res.params["tau"])
    assert res.shape == (5, 3) and res.values.shape == (5, 3, 2)
    assert np.array_equal(res.values.reshape(15, 2), whole)
    assert res.chunks == -(-15 // chunk)


@settings(max_examples=10, deadline=None)
@given(st.integers(1, 9))
def test_keyed_noise_sees_the_global_configuration_index(chunk):
    grid = {"eta": np.linspace(0.02, 0.1, 9), "tau": np.array([3])}
    res = sweep(noisy_runs, grid, chunk=chunk, index="config")
    p = res.params
    whole = noisy_runs(p["eta"], p["tau"], np.arange(9))
    assert np.array_equal(res.values.reshape(9, 2), whole)


def test_dict_and_tuple_outputs_keep_their_structure():
    res = sweep(lambda eta, tau: {"x": fixed_points(eta, tau), "eta2": eta**2}, GRID, chunk=4)
    assert set(res.values) == {"x", "eta2"} and res.values["eta2"].shape == (5, 3)
    np.testing.assert_array_equal(res.values["eta2"][:, 0], GRID["eta"] ** 2)
    res = sweep(lambda eta, tau: (eta, tau), GRID, chunk=7)
    np.testing.assert_array_equal(res.values[1][0], GRID["tau"])


def test_grid_is_c_order():
    p, shape = grid_points({"a": [1.0, 2.0], "seed": np.arange(3)})
    assert shape == (2, 3) and p["seed"].tolist() == [0, 1, 2, 0, 1, 2] and p["a"].tolist() == [1, 1, 1, 2, 2, 2]


@pytest.mark.parametrize("grid, err", [({}, InputTypeError), ({"eta": "0.1"}, InputTypeError),
                                       ({"eta": [[0.1]]}, InputError), ({"eta": [np.nan]}, InputError),
                                       ({"eta": []}, InputError), ({"1x": [1.0]}, InputError),
                                       ({"eta": np.ones(10**5), "tau": np.ones(10**5)}, InputError)])
def test_bad_grids_are_refused_by_name(grid, err):
    with pytest.raises(err, match="grid"):
        sweep(fixed_points, grid)


def test_bad_chunks_and_outputs_are_refused():
    with pytest.raises(InputError, match="chunk"):
        sweep(fixed_points, GRID, chunk=0)
    with pytest.raises(InputTypeError, match="fn"):
        sweep("fixed_points", GRID)
    with pytest.raises(InputError, match="leading axis"):
        sweep(lambda eta, tau: np.zeros(3), GRID, chunk=4)
    with pytest.raises(InputError, match="fixed"):
        sweep(fixed_points, GRID, fixed={"eta": 1.0})
    with pytest.raises(InputTypeError, match="client"):
        sweep(fixed_points, GRID, client=object())


def test_sweep_on_a_two_worker_local_cluster_is_the_local_sweep():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        remote = sweep(noisy_runs, {"eta": np.linspace(0.02, 0.1, 6), "tau": np.array([2, 3])}, chunk=5,
                       index="config", client=client)
        assert len(client.scheduler_info()["workers"]) == 2
    local = sweep(noisy_runs, {"eta": np.linspace(0.02, 0.1, 6), "tau": np.array([2, 3])}, chunk=3, index="config")
    assert np.array_equal(remote.values, local.values)


# --- one cluster, many sweeps (issue 23, item 1) ------------------------------------------------------
# The grid used to be scattered as a dict, which Dask stores under the dict's keys ("eta"): a second
# sweep on the same client found its data cancelled (or hung on a process-based cluster), and two
# sweeps at once on one cluster read each other's values.  Each sweep now scatters under keys of its own.

def _cluster(processes):
    distributed = pytest.importorskip("distributed")
    return distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=processes,
                                    dashboard_address=None, silence_logs=40)


def _scaled(scale, pause=0.0):
    """A function defined here (so cloudpickle ships it by value to worker processes)."""
    def fn(eta):
        import time

        time.sleep(pause)
        return eta * scale
    return fn


def _within(seconds, call, *args, **kw):
    """``call(*args, **kw)`` in a thread; an old-code hang becomes a failure instead of a stuck suite."""
    from concurrent.futures import ThreadPoolExecutor

    pool = ThreadPoolExecutor(1)
    try:
        return pool.submit(call, *args, **kw).result(timeout=seconds)
    finally:
        pool.shutdown(wait=False)


PROCESSES = [pytest.param(False, id="threads"), pytest.param(True, id="processes", marks=pytest.mark.slow)]


@pytest.mark.parametrize("processes", PROCESSES)
def test_a_second_sweep_on_the_same_client_gets_its_own_numbers(processes):
    distributed = pytest.importorskip("distributed")
    with _cluster(processes) as cluster, distributed.Client(cluster) as client:
        for lo in (0.0, 100.0, 0.0, 100.0, 0.0, 100.0):
            eta = lo + np.arange(4.0)
            res = _within(60, sweep, _scaled(2.0), {"eta": eta}, chunk=2, client=client)
            np.testing.assert_array_equal(res.values, 2.0 * eta)


@pytest.mark.parametrize("processes", PROCESSES)
def test_two_sweeps_at_once_on_one_cluster_each_get_their_own_numbers(processes):
    distributed = pytest.importorskip("distributed")
    import threading
    from concurrent.futures import ThreadPoolExecutor

    barrier = threading.Barrier(2)
    with _cluster(processes) as cluster, distributed.Client(cluster) as client:
        def one(lo):
            eta = lo + np.arange(4.0)        # the same axis name, different data
            barrier.wait(timeout=30)
            return eta, sweep(_scaled(2.0, pause=0.05), {"eta": eta}, chunk=1, client=client)

        with ThreadPoolExecutor(2) as pool:
            runs = [pool.submit(one, lo) for lo in (0.0, 100.0)]
            for run in runs:
                eta, res = run.result(timeout=60)
                np.testing.assert_array_equal(res.values, 2.0 * eta)
                np.testing.assert_array_equal(res.params["eta"], eta)
