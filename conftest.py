"""Test-run configuration for the whole repository (tests/, derivations/, notebooks/).

The notebooks save their figures into ``$FLTHEORY_FIGURES`` (``notebooks/figures/`` when it is
unset, which is how the committed figures are drawn).  A test run must write nothing into the
repository, so it points that variable at a temporary folder before any notebook kernel starts.
"""
import os
import shutil
import tempfile

_TMP_FIGURES = None


def pytest_configure(config):
    global _TMP_FIGURES
    if "FLTHEORY_FIGURES" not in os.environ:
        _TMP_FIGURES = tempfile.mkdtemp(prefix="fltheory-figures-")
        os.environ["FLTHEORY_FIGURES"] = _TMP_FIGURES


def pytest_unconfigure(config):
    if _TMP_FIGURES is not None:
        os.environ.pop("FLTHEORY_FIGURES", None)
        shutil.rmtree(_TMP_FIGURES, ignore_errors=True)
