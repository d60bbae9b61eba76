"""Every docstring example in the package runs and prints what it says (PEPit-style runnable examples)."""
import doctest
import importlib
import pkgutil

import pytest

import fltheory

MODULES = sorted(m.name for m in pkgutil.walk_packages(fltheory.__path__, "fltheory."))


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
