"""One subpackage per seed paper, each with the same rooms: algorithm, exact, bounds, checks."""
from importlib import import_module

__all__ = ["local_adaptivity", "feddelavg", "tdma", "afl_dga", "defedavg"]


def __getattr__(name):
    if name in __all__:
        return import_module(f"{__name__}.{name}")
    raise AttributeError(name)
