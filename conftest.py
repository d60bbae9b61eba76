"""Test-run configuration for the whole repository (tests/, derivations/, notebooks/).

The notebooks save their figures into ``$FLTHEORY_FIGURES`` (``notebooks/figures/`` when it is
unset, which is how the committed figures are drawn).  A test run must write nothing into the
repository, so it points that variable at a temporary folder before any notebook kernel starts.
Every process of the run (this one, xdist's workers, the notebook kernels) uses one BLAS thread.
"""
import os
import shutil
import tempfile

_TMP_FIGURES = None
_BLAS_LIMIT = None
_RUN_CACHE = None


def pytest_configure(config):
    global _TMP_FIGURES
    # with -n auto, hand out tests one at a time as workers free up (xdist's default gives each worker a quarter of
    # its share up front, consecutive tests, so one worker got every long test below and ran them in a row)
    if getattr(config.option, "maxschedchunk", "absent") is None:
        config.option.maxschedchunk = 1
    # one BLAS thread per process: xdist runs a worker per core and each notebook test a kernel, and BLAS threads on
    # top of those spin against each other (a Hessian-vector product of the digits federation took 0.18 s with the
    # default threads on a busy 2-core machine, 0.003 s with one).  Kernels inherit the variables; this process and
    # the workers, which may have loaded NumPy already, are limited through threadpoolctl.
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    global _BLAS_LIMIT
    try:
        from threadpoolctl import threadpool_limits

        _BLAS_LIMIT = threadpool_limits(limits=int(os.environ["OPENBLAS_NUM_THREADS"]), user_api="blas")
    except (ImportError, ValueError):   # threadpoolctl comes with scikit-learn, a dependency
        pass
    global _RUN_CACHE
    if "FLTHEORY_RUN_CACHE" not in os.environ:   # tests/runcache.py: each quoted check's fresh run once per session
        _RUN_CACHE = tempfile.mkdtemp(prefix="fltheory-runs-")
        os.environ["FLTHEORY_RUN_CACHE"] = _RUN_CACHE
    if "FLTHEORY_FIGURES" not in os.environ:
        _TMP_FIGURES = tempfile.mkdtemp(prefix="fltheory-figures-")
        os.environ["FLTHEORY_FIGURES"] = _TMP_FIGURES


def pytest_unconfigure(config):
    if _RUN_CACHE is not None:
        os.environ.pop("FLTHEORY_RUN_CACHE", None)
        shutil.rmtree(_RUN_CACHE, ignore_errors=True)
    if _TMP_FIGURES is not None:
        os.environ.pop("FLTHEORY_FIGURES", None)
        shutil.rmtree(_TMP_FIGURES, ignore_errors=True)


# The longest tests, started first: with `-n auto` the run ends when its last test does, so a long test
# collected late (a notebook, a README table rebuilt from a full run, the wheel's round trip) would run alone at
# the end.  Longest first shortens the run; the order changes nothing else (every test stands alone).
_LONG_FIRST = ("tests/test_notebooks.py", "tests/test_claims.py", "tests/test_packaging.py", "tests/test_docs.py", "tests/test_doors_harvest.py",
               "tests/test_feddelavg_docs.py", "tests/test_tdma_docs.py", "tests/test_local_adaptivity_docs.py",
               "tests/test_report.py", "tests/test_verify_levels.py", "tests/test_worst_case_")


def pytest_collection_modifyitems(config, items):
    def rank(item):
        path = item.nodeid.split("::")[0]
        hits = [i for i, prefix in enumerate(_LONG_FIRST) if path.startswith(prefix)]
        return (hits[0] if hits else len(_LONG_FIRST)) - (len(_LONG_FIRST) + 1) * bool(item.get_closest_marker("slow"))

    items.sort(key=rank)   # stable: the collection order within each rank
