"""Paper 004 — Wang, Xu, Garrett, Charles, Liu, Joshi: "Local Adaptivity in Federated Learning:
Convergence and Consistency".

Rooms: ``algorithm`` (batched FedOpt with adaptive clients, corrections and server optimizers),
``exact`` (closed forms on quadratics: Theorem 2's fixed point, corrected fixed points, round
maps, exact noise moments), ``bounds`` (every numbered result as a Statement, printed and
corrected), ``checks`` (each statement against exact computation or simulation).

The most used functions are re-exported here::

    from fltheory.papers import local_adaptivity as la
    la.fixed_point(fed, eta=0.1, tau=5, precond=P, correction="local").x
"""
from importlib import import_module

from .exact import alpha_max, first_order_bias, fixed_point, round_map, small_eta_limit  # noqa: F401
from .tuning import best_step_size  # noqa: F401

_ROOMS = ("algorithm", "exact", "bounds", "checks", "tuning")


def __getattr__(name):
    if name in _ROOMS:
        return import_module(f"{__name__}.{name}")
    raise AttributeError(name)


__all__ = ["alpha_max", "best_step_size", "first_order_bias", "fixed_point", "round_map", "small_eta_limit", *_ROOMS]
