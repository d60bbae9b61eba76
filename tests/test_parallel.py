"""Threads for the blocked NumPy paths (fltheory.parallel): any number of threads, the same bits."""
import numpy as np
import pytest
from hypothesis import example, given, settings, strategies as st

import fltheory as flt
from fltheory import parallel
from fltheory.backend import KeyedStream
from fltheory.papers.local_adaptivity import exact as la_exact


@pytest.mark.parametrize("bad", [0, -1, 2.5, "2", True, None, 2**63, np.nan])
def test_set_num_threads_refuses_bad_counts(bad):
    with pytest.raises(flt.FLTheoryError, match=r"\bn\b"):
        parallel.set_num_threads(bad)


@pytest.mark.parametrize("raw", ["zero", "-2", "0", "1.5", "\u00b2", "\u0661", "+2", "2000", "9" * 5000])
def test_the_environment_variable_is_checked(monkeypatch, raw):
    monkeypatch.setenv("FLTHEORY_NUM_THREADS", raw)
    monkeypatch.setitem(parallel._state, "n", None)
    with pytest.raises(flt.InputError, match="FLTHEORY_NUM_THREADS"):
        parallel.num_threads()


def test_the_environment_variable_sets_the_default(monkeypatch):
    monkeypatch.setenv("FLTHEORY_NUM_THREADS", "3")
    monkeypatch.setitem(parallel._state, "n", None)
    assert parallel.num_threads() == 3


def test_threads_restores_the_previous_number():
    before = parallel.num_threads()
    with parallel.threads(5) as n:
        assert n == parallel.num_threads() == 5
    assert parallel.num_threads() == before


@settings(max_examples=40)
@given(total=st.integers(0, 300), align=st.integers(1, 40), min_part=st.integers(1, 90), n=st.integers(1, 6))
def test_parts_cover_the_range_once_on_block_boundaries(total, align, min_part, n):
    seen = np.zeros(total, dtype=int)
    parts = []

    def fn(lo, hi):
        parts.append((lo, hi))
        seen[lo:hi] += 1

    with parallel.threads(n):
        parallel.run_parts(fn, total, align=align, min_part=min_part)
    assert np.all(seen == 1)
    assert all(lo % align == 0 for lo, _ in parts)
    assert len(parts) <= n


def test_errors_of_a_part_are_raised_and_nested_calls_run_inline():
    def fn(lo, hi):
        if lo > 0:
            raise ZeroDivisionError(f"part {lo}")

    with parallel.threads(2), pytest.raises(ZeroDivisionError, match="part"):
        parallel.run_parts(fn, 10)

    inner = []

    def outer(lo, hi):   # a part that itself splits its range: inside a pool thread it runs serially
        parallel.run_parts(lambda a, b: inner.append((lo + a, lo + b)), hi - lo)

    with parallel.threads(2):
        parallel.run_parts(outer, 100)
    assert sorted(inner) == [(0, 50), (50, 100)]


def test_parts_run_in_the_callers_numpy_error_state():
    def fn(lo, hi):
        np.ones(hi - lo) / np.zeros(hi - lo)

    with parallel.threads(2), np.errstate(divide="raise"), pytest.raises(FloatingPointError):
        parallel.run_parts(fn, 10)


@settings(max_examples=10)
@given(B=st.integers(1, 9000), M=st.integers(1, 5), d=st.integers(1, 20), n=st.integers(2, 4))
@example(B=9000, M=5, d=16, n=2)   # 45,000 keys of 16 numbers: five blocks of 4,096 keys, two threads
def test_keyed_normal_has_the_same_bits_for_any_number_of_threads(B, M, d, n):
    s = KeyedStream(seed=11, purpose="noise")
    kw = dict(config=np.arange(B)[:, None], round=4, client=np.arange(M)[None, :], size=(d,))
    with parallel.threads(1):
        one = s.normal(**kw)
    with parallel.threads(n):
        many = s.normal(**kw)
    assert np.array_equal(one, many)
    assert np.array_equal(one, s._normal_plain(kw["config"], 4, kw["client"], (d,)))


def test_fixed_points_have_the_same_bits_for_any_number_of_threads():
    fed = flt.random_quadratic_federation(M=4, d=5, batch=3000, kappa=10.0, weights="dirichlet", seed=2)
    P = np.broadcast_to(np.diag(np.linspace(0.5, 2.0, 5)), (3000, 4, 5, 5)).copy()
    eta = 0.25 / np.linalg.eigvalsh(fed.H)[..., -1]
    with parallel.threads(1):
        one = la_exact.fixed_point(fed, eta=eta, tau=5, precond=P)
    with parallel.threads(3):
        many = la_exact.fixed_point(fed, eta=eta, tau=5, precond=P)
    for name in ("x", "residual", "condition"):
        assert np.array_equal(getattr(one, name), getattr(many, name)), name


def test_statement_grids_have_the_same_bits_for_any_number_of_threads():
    st_ = flt.statement("tdma.theorem1_corrected")
    rng = np.random.default_rng(0)
    grid = {p: rng.uniform(0.1, 1.0, 600_000) for p in st_.parameters}   # the value is computed everywhere
    slow = flt.statement("feddelavg.theorem1")   # the longest chain of operations
    slow_grid = {p: grid.get(p, rng.uniform(0.1, 1.0, 600_000)) for p in slow.parameters}
    with parallel.threads(1):
        one, one_masked = slow(check=False, **slow_grid), st_(mask=True, **grid)
    with parallel.threads(2):
        many, many_masked = slow(check=False, **slow_grid), st_(mask=True, **grid)
    assert np.array_equal(one, many, equal_nan=True)
    assert np.array_equal(one_masked.value, many_masked.value, equal_nan=True)
    assert np.array_equal(one_masked.holds, many_masked.holds) and one_masked.holds.any() and not one_masked.holds.all()


def _noise_in_child(queue):
    s = KeyedStream(seed=3, purpose="noise")
    with parallel.threads(2):
        queue.put(s.normal(config=np.arange(9000)[:, None], round=0, client=np.arange(5)[None, :], size=(16,)).sum())


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs fork")
def test_a_forked_child_gets_a_working_pool():
    import multiprocessing as mp

    s = KeyedStream(seed=3, purpose="noise")
    with parallel.threads(2):   # the parent's pool exists before the fork
        expected = s.normal(config=np.arange(9000)[:, None], round=0, client=np.arange(5)[None, :], size=(16,)).sum()
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_noise_in_child, args=(queue,))
    child.start()
    got = queue.get(timeout=60)   # a pool inherited without its threads would hang here
    child.join(timeout=60)
    assert got == expected and child.exitcode == 0


def test_calls_from_several_threads_with_growing_counts_all_finish():
    from concurrent.futures import ThreadPoolExecutor

    s = KeyedStream(seed=5, purpose="noise")
    kw = dict(config=np.arange(3000)[:, None], round=1, client=np.arange(4)[None, :], size=(12,))
    expected = s.normal(**kw)
    before = parallel.num_threads()

    def call(n):
        parallel.set_num_threads(n)   # the pool grows while other calls use it
        return s.normal(**kw)

    try:
        with ThreadPoolExecutor(4) as outer:
            results = list(outer.map(call, [2, 3, 4, 5, 6, 7, 8, 2]))
    finally:
        parallel.set_num_threads(before)
    assert all(np.array_equal(r, expected) for r in results)


@pytest.mark.parametrize("correction", ["none", "local"])
def test_the_eta_tau_sweep_over_one_federation_has_the_same_bits_for_any_number_of_threads(correction):
    fed = flt.random_quadratic_federation(M=10, d=10, kappa=10.0, weights="dirichlet", seed=4)
    eta = np.linspace(0.01, 0.2, 50)[:, None, None] / float(np.max(fed.L))   # (50, 1, 1): a grid with tau
    tau = np.arange(1, 61)[None, :, None]                                     # (1, 60, 1)
    with parallel.threads(1):
        one = la_exact.fixed_point(fed, eta=eta, tau=tau, correction=correction)
    with parallel.threads(2):
        many = la_exact.fixed_point(fed, eta=eta, tau=tau, correction=correction)
    assert one.x.shape == (50, 60, 10)
    for name in ("x", "residual", "condition"):
        assert np.array_equal(getattr(one, name), getattr(many, name)), name
    # and each configuration alone gives the same bits as in the grid
    alone = la_exact.fixed_point(fed, eta=eta[7], tau=tau[:, 41], correction=correction)
    assert np.array_equal(alone.x[0], one.x[7, 41])
