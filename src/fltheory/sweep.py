"""Parameter sweeps: a grid of configurations (x seeds) through any batched function, in chunks,
locally or on a Dask cluster, with the same numbers either way.

Problem class
-------------
Every batched function of the package evaluates many configurations at once along a leading
axis (``exact.fixed_point(fed, eta=eta[:, None], tau=5)``, ``fedopt(..., config=...)``,
``Statement(...)`` on arrays).  A researcher's grid -- the Cartesian product of a few parameter
axes, times seeds -- can be larger than one call should hold in memory, or worth spreading over
the machines of a cluster.

Method
------
:func:`sweep` flattens the grid to ``N`` configurations in C order (the last axis varies
fastest), cuts it into chunks of ``chunk`` configurations, calls ``fn`` once per chunk with
each axis as a 1-D array of that chunk's values (plus the fixed keyword arguments), and puts the
pieces back in the grid's shape.  With ``client=`` (a ``dask.distributed.Client``) the chunks run
as tasks on the cluster; otherwise they run here, one after the other.  Each sweep scatters its
grid under keys of its own (never the axis names) and releases them when it returns, so one client
serves any number of sweeps, one after the other or at once from several threads.

Randomness keyed by the configuration (the package's :class:`~fltheory.backend.KeyedStream`
keys noise by ``(seed, configuration, round, client)``) must see the GLOBAL configuration index,
not the index inside a chunk: name the function's keyword for it with ``index=`` (``fedopt``
calls it ``config``) and each chunk receives its slice of ``0..N-1``.  Then, for any function
that treats configurations independently, the result is bit for bit that of one unchunked call,
whatever the chunk size and wherever the chunks run (NumPy; a test checks it on a two-worker
``LocalCluster``).

Example
-------
>>> import numpy as np, fltheory as flt
>>> from fltheory.sweep import sweep
>>> from fltheory.papers.local_adaptivity import exact
>>> fed = flt.random_quadratic_federation(M=3, d=2, seed=0)
>>> res = sweep(lambda eta, tau: exact.fixed_point(fed, eta=eta[:, None], tau=tau[:, None]).x,
...             {"eta": np.linspace(0.01, 0.1, 4), "tau": np.array([1, 5, 10])}, chunk=5)
>>> res.shape, res.values.shape                     # grid (4 eta x 3 tau), one x in R^2 each
((4, 3), (4, 3, 2))
>>> whole = exact.fixed_point(fed, eta=res.params["eta"][:, None], tau=res.params["tau"][:, None]).x
>>> bool(np.array_equal(res.values.reshape(12, 2), whole))     # chunked == one call, bit for bit
True
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

import numpy as np

from . import validation as V
from .backend import to_numpy

__all__ = ["sweep", "SweepResult", "grid_points"]


@dataclass(frozen=True)
class SweepResult:
    """The outputs of a sweep in the grid's shape.

    ``values``: what ``fn`` returned (an array, or a tuple/dict of arrays), each with the grid's
    shape in front of its per-configuration shape; ``params``: every axis flattened to ``(N,)``
    in the order the configurations were evaluated (C order over ``axes``); ``axes``: the names;
    ``shape``: the grid's shape; ``chunks``: how many calls of ``fn`` were made.
    """

    values: Any
    params: dict
    axes: tuple
    shape: tuple
    chunks: int


def grid_points(grid: Mapping[str, Any]) -> tuple[dict, tuple]:
    """The Cartesian product of ``grid`` (name -> 1-D values), flattened in C order.

    Returns ``(params, shape)``: ``params[name]`` has shape ``(N,)`` with ``N = prod(shape)``.

    >>> p, shape = grid_points({"a": [1, 2], "b": [10, 20, 30]})
    >>> shape, p["a"].tolist(), p["b"].tolist()
    ((2, 3), [1, 1, 1, 2, 2, 2], [10, 20, 30, 10, 20, 30])
    """
    if not isinstance(grid, Mapping) or not grid:
        raise V.InputTypeError(f"grid must be a non-empty dict of parameter name -> 1-D values; got {V.shown(grid)}")
    axes = {}
    for name, values in grid.items():
        if not isinstance(name, str) or not name.isidentifier():
            raise V.InputError(f"grid keys must be parameter names; got {name!r}")
        if isinstance(values, (str, bytes)):
            raise V.InputTypeError(f"grid[{name!r}] must be 1-D values, not text; got {V.shown(values)}")
        try:
            arr = np.asarray(values)
        except Exception:  # noqa: BLE001 - ragged lists and odd objects
            raise V.InputTypeError(f"grid[{name!r}] must be 1-D values; got {V.shown(values)}") from None
        if arr.ndim != 1 or arr.size == 0:
            raise V.InputError(f"grid[{name!r}] must be a non-empty 1-D sequence; got shape {arr.shape}")
        if arr.dtype.kind not in "biuf":
            raise V.InputTypeError(f"grid[{name!r}] must hold numbers; got dtype {arr.dtype}")
        if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
            raise V.InputError(f"grid[{name!r}] must be finite; got {V.shown(arr)}")
        axes[name] = arr
    shape = tuple(a.size for a in axes.values())
    V.check_size(int(np.prod(shape, dtype=object)), "the grid", hint="a sweep enumerates every point of the grid")
    mesh = np.meshgrid(*axes.values(), indexing="ij")
    return {name: m.reshape(-1) for name, m in zip(axes, mesh)}, shape


def _run_chunk(fn, params, fixed, index_name, start, stop):
    kw = {name: values[start:stop] for name, values in params.items()}
    if index_name is not None:
        kw[index_name] = np.arange(start, stop, dtype=np.int64)
    return fn(**kw, **fixed)


def _run_remote_chunk(fn, names, arrays, fixed, index_name, start, stop):
    return _run_chunk(fn, dict(zip(names, arrays)), fixed, index_name, start, stop)


def _leaves(out):
    """The arrays of one chunk's output, as a structure tag and a list."""
    if isinstance(out, tuple):
        return "tuple", list(out)
    if isinstance(out, dict):
        return ("dict", tuple(out)), list(out.values())
    return "array", [out]


def sweep(fn: Callable[..., Any], grid: Mapping[str, Any], *, chunk: int | None = None, client=None,
          index: str | None = None, fixed: Mapping[str, Any] | None = None) -> SweepResult:
    """Evaluate ``fn`` over every point of ``grid``, ``chunk`` configurations per call.

    Parameters
    ----------
    fn : a batched function: called as ``fn(**{axis: (n,) values}, **fixed)`` (and
        ``index=(n,) global configuration indices`` when ``index`` is given), it returns an array,
        or a tuple or dict of arrays, each with a leading axis of length ``n``.
    grid : axis name -> 1-D values; the sweep runs their Cartesian product (C order).  Seeds are
        an axis like any other (``{"eta": ..., "seed": np.arange(8)}``) when ``fn`` takes them.
    chunk : configurations per call (default: all of them in one call).
    client : a ``dask.distributed.Client``; the chunks then run as tasks on its cluster
        (``fn`` and ``fixed`` are shipped to the workers with cloudpickle).
    index : the keyword under which ``fn`` takes the global configuration index (e.g.
        ``"config"`` for ``fedopt``), so that keyed randomness does not depend on the chunking.
    fixed : keyword arguments passed unchanged to every call.

    Returns
    -------
    :class:`SweepResult`; on NumPy its values are bit for bit those of one unchunked call when
    ``fn`` treats configurations independently.
    """
    if not callable(fn):
        raise V.InputTypeError(f"fn must be callable; got {V.shown(fn)}")
    params, shape = grid_points(grid)
    n = params[next(iter(params))].size
    chunk = n if chunk is None else V.integer(chunk, "chunk", low=1, high=2**62)
    if fixed is not None and not (isinstance(fixed, Mapping) and all(isinstance(k, str) for k in fixed)):
        raise V.InputTypeError(f"fixed must be a mapping of keyword names to values; got {V.shown(fixed)}")
    fixed = {} if fixed is None else dict(fixed)
    if index is not None and (not isinstance(index, str) or not index.isidentifier()):
        raise V.InputError(f"index must be the name of fn's configuration-index keyword; got {index!r}")
    clash = set(fixed) & (set(params) | ({index} if index else set()))
    if clash:
        raise V.InputError(f"fixed repeats the swept names {sorted(clash)}")
    bounds = [(a, min(a + chunk, n)) for a in range(0, n, chunk)]
    if client is None:
        outs = [_run_chunk(fn, params, fixed, index, a, b) for a, b in bounds]
    else:
        if not (hasattr(client, "scatter") and hasattr(client, "submit") and hasattr(client, "gather")):
            raise V.InputTypeError(f"client must be a dask.distributed.Client; got {V.shown(client)}")
        # Scatter the axes as a list under keys of this sweep's own (hash=False: a fresh uuid per array).
        # A dict would be stored under its keys ('eta'), shared by every sweep on the cluster: a second
        # sweep found its data released, and two sweeps at once read each other's values.
        names = tuple(params)
        shared = client.scatter([params[name] for name in names], broadcast=True, hash=False)
        futures = [client.submit(_run_remote_chunk, fn, names, shared, fixed, index, a, b, pure=False)
                   for a, b in bounds]
        try:
            outs = client.gather(futures)
        finally:
            client.cancel(futures + list(shared))
    kind, first = _leaves(outs[0])
    pieces = [_leaves(o)[1] for o in outs]
    for (k, leaves), (a, b) in zip((_leaves(o) for o in outs), bounds):
        if k != kind or len(leaves) != len(first):
            raise V.InputError("fn must return the same structure (array, tuple or dict of arrays) for every chunk")
        for leaf in leaves:
            if np.ndim(leaf) < 1 or np.shape(leaf)[0] != b - a:
                raise V.InputError(f"fn must return arrays with a leading axis of one entry per configuration "
                                   f"({b - a} in this chunk); got shape {np.shape(leaf)}")
    joined = [np.concatenate([to_numpy(p[j]) for p in pieces], axis=0) for j in range(len(first))]
    joined = [v.reshape(shape + v.shape[1:]) for v in joined]
    if kind == "tuple":
        values = tuple(joined)
    elif kind == "array":
        values = joined[0]
    else:
        values = dict(zip(kind[1], joined))
    return SweepResult(values, params, tuple(params), shape, len(bounds))
