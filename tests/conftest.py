"""Shared test configuration: hypothesis profiles and the array-backend fixture.

Profiles: ``ci`` (bounded examples, no deadline; the default), ``dev`` (more examples) and ``fuzz``
(the door fuzz suite at 200 draws per parameter).
Choose with ``HYPOTHESIS_PROFILE=dev``.  No profile keeps an example database (``database=None``)
and hypothesis's storage directory is a temporary folder: a test run writes nothing into the
repository (hypothesis would otherwise create ``.hypothesis/``).  The ``xp`` fixture runs a test on
NumPy, on ``array_api_strict`` when it is importable (the array API standard and nothing else), on
``array_api_strict`` bound to its ``device1`` (``strict_device1``: the GPU stand-in -- its arrays refuse
``np.asarray`` and mixing with CPU arrays, so code that would fail on CuPy fails there first, on a CPU) and,
when CuPy is importable and a GPU is present, on CuPy.
"""
import atexit
import importlib.util
import os
import shutil
import tempfile

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

# Hypothesis also keeps caches (constants, unicode tables) and failure patches in its storage directory,
# ./.hypothesis by default: point it at a temporary folder, removed when the run ends.
_HYPOTHESIS_HOME = tempfile.mkdtemp(prefix="fltheory-hypothesis-")
atexit.register(shutil.rmtree, _HYPOTHESIS_HOME, True)
os.environ["HYPOTHESIS_STORAGE_DIRECTORY"] = _HYPOTHESIS_HOME
try:
    from hypothesis.configuration import set_hypothesis_home_dir

    set_hypothesis_home_dir(_HYPOTHESIS_HOME)
except ImportError:  # older hypothesis: the environment variable above is what it reads
    pass

settings.register_profile(
    "ci", max_examples=25, deadline=None, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much], database=None,
)
settings.register_profile("dev", max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow],
                          database=None)
# the door fuzz suite (tests/test_doors.py) draws FUZZ_EXAMPLES bad values per (entry, parameter); this profile
# raises it to 200 (over 10^4 calls) and lets hypothesis explore instead of replaying a fixed sequence
settings.register_profile("fuzz", max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow],
                          database=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def _backends():
    out = [pytest.param("numpy", id="numpy")]
    if importlib.util.find_spec("array_api_strict") is not None:
        out.append(pytest.param("array_api_strict", id="array_api_strict"))
        # the GPU stand-in: arrays on a non-CPU device refuse np.asarray and mixing with CPU arrays, as CuPy's do
        out.append(pytest.param("array_api_strict:device1", id="strict_device1"))
    if importlib.util.find_spec("cupy") is not None:
        try:
            import cupy

            cupy.zeros(1)
            out.append(pytest.param("cupy", id="cupy"))
        except Exception:  # no usable GPU
            pass
    return out


@pytest.fixture(params=_backends())
def xp(request):
    """The array namespace under test (numpy; array_api_strict and cupy where available)."""
    from fltheory.backend import get_backend, on_device

    name, _, device = request.param.partition(":")
    xp = get_backend(name)
    return on_device(xp, xp.Device(device)) if device else xp


def to_np(a):
    """``a`` as a NumPy array, whatever its namespace (for comparisons)."""
    from fltheory.backend import to_numpy

    return to_numpy(a)


def on_backend(fed, xp):
    """The quadratic federation ``fed`` with its arrays in namespace ``xp``."""
    import fltheory as flt

    cov = None if fed.noise_cov is None else xp.asarray(fed.noise_cov)
    return flt.QuadraticFederation(xp.asarray(fed.H), xp.asarray(fed.x_opt), xp.asarray(fed.weights), noise_cov=cov)


@pytest.fixture
def example_fed():
    """the paper: M=3, d=2, w=(0.5, 0.3, 0.2); x* = (91/319, 370/319)."""
    import fltheory as flt

    H = np.array([[[2, 0.5], [0.5, 1]], [[1, 0], [0, 4]], [[3, -1], [-1, 2]]], float)
    return flt.QuadraticFederation(H, np.array([[1.0, 0], [0, 2], [-1, -1]]), np.array([0.5, 0.3, 0.2]))
