"""Harvest-and-mutate fuzzing of the doors (issue 19, item 6): the kit of tests/test_doors_harvest.py.

**Harvest.**  The package's own examples are run -- every ``>>>`` example of its docstrings, the
``python`` blocks of README.md and (full profile) the code cells of ``notebooks/*.ipynb`` -- under a
profiler hook that records each *top-level* call to a public callable of ``fltheory`` (a function,
a class, a public method: those exported by the package and its modules and papers' rooms), made
by the example code itself (calls that the package makes internally are not recorded): the callable
and its bound arguments, copied at the moment of the call.

**Mutate and replay.**  Each recorded call is replayed with one parameter at a time replaced by a
bad value (:data:`BAD`), and each outcome falls into exactly one class:

* ``a`` -- a package error (``FLTheoryError``) naming the parameter (the right answer);
* ``b`` -- a package error that does not name it;
* ``c`` -- another exception class (AttributeError, LinAlgError, a raw TypeError ...);
* ``d`` -- NaN, inf or complex returned, with no flag (``converges``/``diverged``/``finite``) saying
  so, where the original call returned only finite reals;
* ``e`` -- a never-valid value accepted (:func:`never_valid`: text where a number belongs, NaN, ...);
* ``f`` -- ran past the per-call time limit;
* ``g`` -- MemoryError (the replay process has a memory cap);
* ``ok`` -- a value that may be valid was accepted and the result is finite.

Valid but unusual forms of each numeric argument (:func:`unusual`: float32, lists, NumPy scalars,
0-d arrays, Fraction, integer dtypes, Fortran-ordered, strided, read-only, big-endian arrays) are
replayed and compared with the original float64 answer: ``refused`` (a package error),
``crash`` (anything else, a time-out included) or ``wrong`` (beyond a tolerance of the dtype).

The replays run in a forked child process with a soft time limit (a timer signal) and a memory cap;
the parent kills a child that stops answering (a hang in C code) and goes on in a fresh one.
Nothing is written to the repository.
"""
from __future__ import annotations

import copy
import dataclasses
import doctest
import fnmatch
import functools
import importlib
import inspect
import io
import json
import math
import os
import pkgutil
import re
import resource
import select
import signal
import sys
import tempfile
import time
import traceback
import warnings
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, Callable

import numpy as np

import fltheory as flt

ROOT = Path(__file__).resolve().parents[1]
PKG_DIR = str(Path(flt.__file__).resolve().parent)
SKIP_MODULES = {"fltheory.cli", "fltheory.plotting"}   # argv parsing and matplotlib output: no numeric doors
# process-wide settings: a mutated call would change the state of every later replay in the same child
SKIP_ENTRIES = {"fltheory.parallel.set_num_threads", "fltheory.parallel.threads", "fltheory.backend.set_backend"}
# the layers under the doors: public names, but not entry points of a user's call -- their arguments are set by the
# package's (or a paper author's) code after the doors have checked the user's values.  Pattern (fnmatch) -> why.
INTERNAL = {
    "fltheory.validation.*": "the door helpers themselves: their name/low/high/M/xp/kind arguments are literals of "
                             "the calling code and their value is what they check (test_doors.py tests them); the "
                             "markers per_client / per_configuration, which users call, stay entry points",
    "fltheory.backend.*": "the array-namespace layer (namespaces, devices, einsum helpers, keyed noise streams) that "
                          "the package's code calls with arrays its doors already checked; a user picks a backend "
                          "through each function's backend= (a checked choice) or get_backend, which stays",
    "fltheory.delayed_registers.RegisterMoments*": "the exact engine's register file, written once per step by "
                                                   "schedule_moments / random_participation_moments with register "
                                                   "indices and blocks that code computes (a check per assign would "
                                                   "sit in the inner loop)",
}
PUBLIC = {"fltheory.validation.per_client", "fltheory.validation.per_configuration", "fltheory.backend.get_backend"}


def internal(name: str) -> bool:
    """Whether a public name is one of the layers under the doors (:data:`INTERNAL`), not an entry point."""
    return name not in PUBLIC and any(fnmatch.fnmatchcase(name, p) for p in INTERNAL)


# ---------------------------------------------------------------------------------------------
# the public callables
# ---------------------------------------------------------------------------------------------
@dataclass
class Entry:
    name: str          # module.qualname
    kind: str          # "func" (call target(*a, **k)), "class" (construct), "method" (target(self, ...))
    target: Callable
    func: Callable     # the plain function whose code is recorded

    @property
    def signature(self):
        return inspect.signature(self.func)


def _public_modules():
    names = ["fltheory"] + sorted(m.name for m in pkgutil.walk_packages(flt.__path__, "fltheory."))
    return [importlib.import_module(n) for n in names if n not in SKIP_MODULES]


def public_entries() -> dict:
    """code object -> Entry for every public callable of the package."""
    codes: dict = {}

    def add(name, kind, target, func):
        func = inspect.unwrap(func)
        code = getattr(func, "__code__", None)
        if code is None or code in codes or name in SKIP_ENTRIES or internal(name):
            return
        if code.co_flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR):
            return
        codes[code] = Entry(name, kind, target, func)

    seen = set()
    for mod in _public_modules():
        names = getattr(mod, "__all__", None) or [n for n in vars(mod) if not n.startswith("_")]
        for n in names:
            obj = getattr(mod, n, None)
            if obj is None or id(obj) in seen or not getattr(obj, "__module__", "").startswith("fltheory"):
                continue
            seen.add(id(obj))
            if inspect.isclass(obj):
                cname = f"{obj.__module__}.{obj.__qualname__}"
                init = obj.__dict__.get("__init__")
                if init is not None and not issubclass(obj, BaseException):
                    add(cname, "class", obj, init)
                for mname, m in vars(obj).items():
                    if mname.startswith("_") and mname != "__call__":
                        continue
                    if isinstance(m, staticmethod):
                        add(f"{cname}.{mname}", "func", m.__func__, m.__func__)
                    elif isinstance(m, classmethod):
                        add(f"{cname}.{mname}", "method", m.__func__, m.__func__)
                    elif inspect.isfunction(m):
                        add(f"{cname}.{mname}", "method", m, m)
            elif inspect.isfunction(obj):
                add(f"{obj.__module__}.{obj.__qualname__}", "func", obj, obj)
    return codes


# ---------------------------------------------------------------------------------------------
# harvest
# ---------------------------------------------------------------------------------------------
@dataclass
class Record:
    entry: Entry
    args: dict            # parameter -> value (self/cls included, **kwargs flattened with "**" keys)
    source: str
    layout: list = field(default_factory=list)   # [(name, Parameter.kind)] in order


def _snapshot(v):
    if isinstance(v, np.ndarray):
        return v.copy()
    try:
        return copy.deepcopy(v)
    except Exception:  # noqa: BLE001 - an object that cannot be copied is kept as it is
        return v


def _fingerprint(v, depth=0) -> str:
    if isinstance(v, np.ndarray):
        return f"nd{v.shape}{v.dtype}{hash(v.tobytes()) if v.size < 10**5 else v.size}"
    if isinstance(v, (list, tuple)) and depth < 2:
        return type(v).__name__ + "[" + ",".join(_fingerprint(x, depth + 1) for x in v[:20]) + "]"
    if isinstance(v, (int, float, complex, str, bytes, bool, Fraction, np.generic)) or v is None:
        return repr(v)
    return f"<{type(v).__qualname__}>"


class Recorder:
    """Wraps every public callable (in the modules' namespaces and on the classes) while active: a call
    whose caller is example code is recorded with its bound arguments."""

    def __init__(self, codes: dict):
        self.codes = codes
        self.records: list = []
        self.keys: set = set()
        self.source = ""
        self.active = False
        self._patches: list = []
        self.failures: list = []   # (example, error) of the examples that raised

    @staticmethod
    def _is_example(filename: str) -> bool:
        return filename.startswith(("<doctest", "<readme", "<notebook"))

    def capture(self, entry, a, k):
        sig = entry.signature
        try:
            bound = sig.bind(*a, **k)
        except TypeError:
            return
        bound.apply_defaults()
        layout, args = [], {}
        items = [(n, v) for n, v in bound.arguments.items() if repr(v) != "<factory>"]   # a dataclass default factory
        params = sig.parameters
        if entry.kind == "class":
            items = items[1:]      # self, not yet built
        for name, value in items:
            kind = params[name].kind
            layout.append((name, kind))
            if kind == inspect.Parameter.VAR_KEYWORD:
                for kk, v in value.items():
                    args["**" + kk] = v
            else:
                args[name] = value
        key = (entry.name, tuple((kk, _fingerprint(v)) for kk, v in args.items()))
        if key in self.keys:
            return
        self.keys.add(key)
        self.records.append(Record(entry, {kk: _snapshot(v) for kk, v in args.items()}, self.source, layout))

    def _wrap(self, entry, orig):
        rec = self

        @functools.wraps(orig)
        def wrapper(*a, **k):
            if rec.active and rec._is_example(sys._getframe(1).f_code.co_filename):
                try:
                    rec.capture(entry, a, k)
                except Exception:  # noqa: BLE001 - recording must never break an example
                    pass
            return orig(*a, **k)
        return wrapper

    def install(self):
        by_id = {}
        for entry in self.codes.values():
            by_id[id(entry.func)] = entry
        wrapped = {}

        def wrapper_for(obj):
            f = inspect.unwrap(obj) if inspect.isfunction(obj) else None
            entry = by_id.get(id(f)) if f is not None else None
            if entry is None:
                return None
            if id(obj) not in wrapped:
                wrapped[id(obj)] = self._wrap(entry, obj)
            return wrapped[id(obj)]

        done = set()
        for modname, mod in list(sys.modules.items()):
            if not modname.startswith("fltheory") or mod is None:
                continue
            for n, obj in list(vars(mod).items()):
                if inspect.isfunction(obj):
                    w = wrapper_for(obj)
                    if w is not None:
                        self._patches.append((mod, n, obj))
                        setattr(mod, n, w)
                elif inspect.isclass(obj) and obj.__module__.startswith("fltheory"):
                    for mname, m in list(vars(obj).items()):
                        if isinstance(m, (staticmethod, classmethod)):
                            w = wrapper_for(m.__func__)
                            new = type(m)(w) if w is not None else None
                        else:
                            new = wrapper_for(m) if inspect.isfunction(m) else None
                        if new is not None and (id(obj), mname) not in done:
                            done.add((id(obj), mname))
                            self._patches.append((obj, mname, m))
                            setattr(obj, mname, new)

    def uninstall(self):
        for owner, n, obj in reversed(self._patches):
            setattr(owner, n, obj)
        self._patches.clear()

    def __enter__(self):
        self.active = True
        return self

    def __exit__(self, *exc):
        self.active = False


def _quiet(fn, *a, **k):
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*a, **k)


def harvest_doctests(rec: Recorder) -> int:
    finder = doctest.DocTestFinder()
    n = 0
    for mod in _public_modules():
        for test in finder.find(mod):
            if not test.examples:
                continue
            rec.source = f"doctest:{test.name}"
            runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
            with rec:
                _quiet(runner.run, test, out=lambda s: None, clear_globs=False)   # replays may need them
            n += len(test.examples)
    return n


def _run_blocks(rec: Recorder, blocks, label: str, budget: float | None = None) -> int:
    with tempfile.TemporaryDirectory(prefix="fltheory-harvest-") as tmp:
        old = os.getcwd()
        os.chdir(tmp)
        env = {"FLTHEORY_FIGURES": tmp, "MPLBACKEND": "Agg"}
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        glob = {"__name__": "__harvest__"}
        t0 = time.perf_counter()
        n = 0
        try:
            for i, block in enumerate(blocks):
                if budget is not None and time.perf_counter() - t0 > budget:
                    break
                rec.source = f"{label}[{i}]"
                try:
                    code = compile(block, f"<{label}[{i}]>", "exec")
                    with rec:
                        _quiet(exec, code, glob)
                    n += 1
                except Exception as exc:  # noqa: BLE001 - kept for the report (tests/test_readme runs the README)
                    rec.failures.append((f"{label}[{i}]", f"{type(exc).__name__}: {str(exc)[:200]}"))
        finally:
            os.chdir(old)
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
            try:
                import matplotlib.pyplot as plt  # noqa: PLC0415
                plt.close("all")
            except Exception:  # noqa: BLE001
                pass
    return n


def harvest_readme(rec: Recorder) -> int:
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    blocks = [b for b in blocks if "verify.rebuild" not in b]
    return _run_blocks(rec, blocks, "readme")


def harvest_notebooks(rec: Recorder, budget: float = 120.0) -> int:
    n = 0
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
                 for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]
        cells = [c for c in cells if not c.lstrip().startswith(("%", "!"))]
        n += _run_blocks(rec, cells, f"notebook:{path.stem}", budget=budget)
    return n


FAILED_EXAMPLES: list = []   # README blocks and notebook cells that raised in the last harvest (example, error)


def harvest(sources=("doctest", "readme")) -> tuple:
    """Run the examples of ``sources`` and return (records, number of examples run)."""
    rec = Recorder(public_entries())
    n = 0
    rec.install()
    try:
        if "doctest" in sources:
            n += harvest_doctests(rec)
        if "readme" in sources:
            n += harvest_readme(rec)
        if "notebooks" in sources:
            n += harvest_notebooks(rec)
    finally:
        rec.uninstall()
    FAILED_EXAMPLES[:] = rec.failures
    return rec.records, n


# ---------------------------------------------------------------------------------------------
# bad values, parameter kinds and what is never valid
# ---------------------------------------------------------------------------------------------
def kind_of(value) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "flag"
    if isinstance(value, (int, np.integer)):
        return "int"
    if isinstance(value, (float, np.floating, Fraction)):
        return "real"
    if isinstance(value, str):
        return "text"
    if isinstance(value, np.ndarray):
        return "array" if value.dtype.kind in "fiu" else "other"
    if isinstance(value, (list, tuple)) and value and all(
            isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, (bool, np.bool_)) for x in value):
        return "array"
    if value is None:
        return "unknown"
    if callable(value) and not inspect.isclass(value) and inspect.isroutine(value):
        return "callable"
    if isinstance(value, (list, tuple, dict, set)):
        return "other"
    return "object"


SCALARS = {"int", "real"}
ALL = {"flag", "int", "real", "text", "array", "object", "callable", "other"}
NUMERIC = {"int", "real", "array"}
# bad value -> (value builder(valid value), kinds for which it is never valid)
_NAN_ARRAY_KINDS = NUMERIC | {"flag", "text", "callable"}


def _like(valid, fill):
    a = np.asarray(valid, dtype=float) if kind_of(valid) == "array" else None
    if a is None or a.ndim == 0:
        return np.array([1.0, fill])
    out = a.copy()
    out.flat[-1] = fill
    return out


def _wrong_shape(valid):
    if kind_of(valid) == "array":
        a = np.asarray(valid, dtype=float)
        return np.ones(tuple(s + 1 for s in a.shape) if a.ndim else (2, 3))
    return np.ones((2, 3))


BAD = {
    "nan": (lambda v: float("nan"), ALL),
    "inf": (lambda v: float("inf"), ALL - {"real", "array"}),
    "-inf": (lambda v: -float("inf"), ALL - {"real", "array"}),
    "-1": (lambda v: -1, {"flag", "text", "callable"}),
    "0": (lambda v: 0, {"flag", "text", "callable"}),
    "2.5": (lambda v: 2.5, {"int", "flag", "text", "callable"}),
    "10**30": (lambda v: 10**30, {"int", "flag", "text", "callable"}),
    "'5'": (lambda v: "5", ALL - {"text"}),
    "b'5'": (lambda v: b"5", ALL),
    "True": (lambda v: True, ALL - {"flag"}),
    "None": (lambda v: None, ALL),          # unless the signature says None is valid
    "1j": (lambda v: 1j, ALL),
    "[]": (lambda v: [], {"int", "real", "flag", "text", "callable"}),
    "{}": (lambda v: {}, ALL - {"object", "other"}),
    "object()": (lambda v: object(), ALL),
    "nan-array": (lambda v: _like(v, np.nan), _NAN_ARRAY_KINDS),
    "wrong-shape": (lambda v: _wrong_shape(v), {"flag", "text", "callable"}),
    "empty-array": (lambda v: np.empty((0,)), {"flag", "text", "callable"}),
    "0-d-nan": (lambda v: np.array(np.nan), _NAN_ARRAY_KINDS),
}


def none_is_valid(record: Record, param: str) -> bool:
    if param.startswith("**"):
        return False
    p = inspect.signature(record.entry.func).parameters.get(param)
    if p is None:
        return True
    ann = p.annotation if isinstance(p.annotation, str) else repr(p.annotation)
    return p.default is None or "None" in ann or "Optional" in ann or "Any" in ann


def _annotation(record: Record, param: str) -> str:
    p = inspect.signature(record.entry.func).parameters.get(param)
    if p is None or p.annotation is inspect.Parameter.empty:
        return ""
    return p.annotation if isinstance(p.annotation, str) else repr(p.annotation)


def param_kind(record: Record, param: str) -> str:
    """The kind of a parameter: from its valid value, sharpened by its annotation (an int literal is an
    integer parameter only where the annotation or the statement's symbol says so)."""
    value = record.args[param]
    kind = kind_of(value)
    if param.startswith("**"):
        stmt = next(iter(record.args.values()), None)
        if kind == "int" and isinstance(stmt, flt.Statement):
            sym = next((s for s in stmt.symbols if s.name == param[2:]), None)
            return "int" if sym is not None and sym.is_integer else "real"
        return "real" if kind == "int" else kind
    ann = _annotation(record, param)
    if kind == "int":
        return "int" if re.search(r"\bint\b", ann) and "float" not in ann else "real"
    if kind == "unknown":   # None recorded: a plain "float | None" (or int, bool, str) annotation says the kind
        parts = {p.strip() for p in ann.split("|")} - {"None"}
        simple = {"float": "real", "int": "int", "bool": "flag", "str": "text"}
        if len(parts) == 1 and next(iter(parts)) in simple:
            return simple[next(iter(parts))]
    return kind


def never_valid(record: Record, param: str, bad: str) -> bool:
    kind = param_kind(record, param)
    if bad == "None" and none_is_valid(record, param):
        return False
    return kind in BAD[bad][1]


def named(record: Record, param: str) -> str:
    """The name a refusal of ``param`` must show (the door helpers of fltheory.validation name their ``name``)."""
    if record.entry.name.startswith("fltheory.validation.") and param == "value" and isinstance(
            record.args.get("name"), str):
        return record.args["name"]
    return param[2:] if param.startswith("**") else param


def mutable_params(record: Record) -> list:
    out = []
    first = next(iter(record.args), None)
    for k in record.args:
        if record.entry.kind == "method" and k == first:
            continue      # self / cls
        if any(k == n and kind in (inspect.Parameter.VAR_POSITIONAL,) for n, kind in record.layout):
            continue
        out.append(k)
    return out


def unusual(value) -> list:
    """Valid but unusual forms of a numeric value: (label, value, rtol of the comparison)."""
    out = []
    if isinstance(value, (bool, np.bool_)):
        return out
    if isinstance(value, (int, np.integer)):
        n = int(value)
        out += [("np.int64", np.int64(n), 0), ("np.int32", np.int32(n), 0) if abs(n) < 2**31 else None,
                ("np.int8", np.int8(n), 0) if -128 <= n < 128 else None,
                ("np.uint16", np.uint16(n), 0) if 0 <= n < 2**16 else None,
                ("0-d int", np.array(n), 0), ("integral float", float(n), 0), ("Fraction", Fraction(n), 0)]
    elif isinstance(value, (float, np.floating)) and math.isfinite(value):
        x = float(value)
        out += [("np.float64", np.float64(x), 1e-9), ("np.float32", np.float32(x), 1e-3), ("0-d", np.array(x), 1e-9),
                ("Fraction", Fraction(x), 1e-9)]
        if x == int(x) and abs(x) < 2**31:
            out += [("int", int(x), 1e-9), ("np.int16", np.int16(x), 1e-9) if abs(x) < 2**15 else None]
    elif isinstance(value, np.ndarray) and value.dtype.kind == "f" and value.size and np.all(np.isfinite(value)):
        a = value
        out += [("float32", a.astype(np.float32), 1e-3), ("list", a.tolist(), 1e-9), ("read-only", _readonly(a), 1e-9),
                ("big-endian", a.astype(a.dtype.newbyteorder(">")), 1e-9),
                ("strided", _strided(a), 1e-9)]
        if a.ndim >= 2:
            out.append(("fortran", np.asfortranarray(a), 1e-9))
        if np.all(a == np.round(a)) and np.all(np.abs(a) < 2**15):
            out += [("int64", a.astype(np.int64), 1e-9), ("int16", a.astype(np.int16), 1e-9)]
    elif isinstance(value, np.ndarray) and value.dtype.kind in "iu" and value.size:
        a = value
        out += [("list", a.tolist(), 0), ("read-only", _readonly(a), 0), ("strided", _strided(a), 0),
                ("big-endian", a.astype(a.dtype.newbyteorder(">")), 0)]
        if np.all(np.abs(a) < 2**7):
            out.append(("int8", a.astype(np.int8), 0))
    elif kind_of(value) == "array" and isinstance(value, (list, tuple)):
        out += [("ndarray", np.asarray(value), 1e-9)]
    return [o for o in out if o is not None]


def _readonly(a):
    b = a.copy()
    b.flags.writeable = False
    return b


def _strided(a):
    if a.ndim == 0:
        return a.copy()
    b = np.repeat(a, 2, axis=-1)[..., ::2]
    assert np.array_equal(b, a)
    return b


# ---------------------------------------------------------------------------------------------
# calling and inspecting results
# ---------------------------------------------------------------------------------------------
def call(record: Record, args: dict):
    pos, kw = [], {}
    entry = record.entry
    var_pos = any(k == inspect.Parameter.VAR_POSITIONAL for _, k in record.layout)
    for j, (name, kind) in enumerate(record.layout):
        if kind == inspect.Parameter.VAR_KEYWORD:
            kw.update({k[2:]: v for k, v in args.items() if k.startswith("**")})
        elif kind == inspect.Parameter.VAR_POSITIONAL:
            pos.extend(args[name])
            var_pos = False
        elif kind == inspect.Parameter.POSITIONAL_ONLY or var_pos or (entry.kind == "method" and j == 0):
            pos.append(args[name])
        else:
            kw[name] = args[name]
    return entry.target(*pos, **kw)


FLAGS = ("converges", "diverged", "finite")


def leaves(obj, depth=0, out=None, flags=None, path="", seen=None):
    """Numeric leaves of a result: (path, array) and its flags (a converges/diverged/finite field)."""
    out = [] if out is None else out
    flags = [] if flags is None else flags
    seen = set() if seen is None else seen
    if depth > 4 or len(out) > 400 or id(obj) in seen:
        return out, flags
    if isinstance(obj, (bool, np.bool_, str, bytes)) or obj is None:
        return out, flags
    if isinstance(obj, (int, float, complex, np.number, Fraction)):
        try:
            out.append((path, np.asarray(obj if not isinstance(obj, Fraction) else float(obj))))
        except OverflowError:
            out.append((path, np.asarray(float("inf"))))
        return out, flags
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind in "fciu":
            out.append((path, obj))
        elif obj.dtype.kind == "O" and obj.size < 1000:
            for i, x in enumerate(obj.flat):
                leaves(x, depth + 1, out, flags, f"{path}[{i}]", seen)
        return out, flags
    seen.add(id(obj))
    if isinstance(obj, dict):
        items = list(obj.items())[:50]
    elif isinstance(obj, (list, tuple)):
        items = list(enumerate(obj[:200]))
    elif dataclasses.is_dataclass(obj):
        items = [(f.name, getattr(obj, f.name, None)) for f in dataclasses.fields(obj)]
    elif type(obj).__module__.startswith("fltheory") and hasattr(obj, "__dict__"):
        items = list(vars(obj).items())
    else:
        return out, flags
    if not isinstance(obj, (dict, list, tuple)):      # a flag may be a property
        for k in FLAGS:
            if k not in dict(items):
                try:
                    v = getattr(obj, k, None)
                except Exception:  # noqa: BLE001
                    v = None
                if v is not None and not callable(v):
                    flags.append((k, v))
    for k, v in items:
        if k in FLAGS and v is not None:
            flags.append((k, v))
        leaves(v, depth + 1, out, flags, f"{path}.{k}", seen)
    return out, flags


def nonfinite(obj) -> bool:
    out, _ = leaves(obj)
    for _, a in out:
        if a.dtype.kind == "c" or (a.dtype.kind == "f" and not np.all(np.isfinite(a))):
            return True
    return False


def flagged(obj) -> bool:
    _, flags = leaves(obj)
    for k, v in flags:
        try:
            a = np.asarray(v)
            if (k == "diverged" and a.dtype.kind == "b" and a.any()) or (k in ("converges", "finite")
                                                                          and a.dtype.kind == "b" and not a.all()):
                return True
        except Exception:  # noqa: BLE001
            continue
    return False


# round-off-sized or dtype-dependent fields of a result: not compared between dtypes
NOT_COMPARED = {"residual", "residuals", "cond", "condition", "condition_number", "error", "errors", "iterations",
                "n_iter", "elapsed", "seconds", "time"}


def same(a, b, rtol) -> tuple:
    """Whether two results agree within rtol (relative to each leaf's largest magnitude)."""
    la, _ = leaves(a)
    lb, _ = leaves(b)
    if [p for p, _ in la] != [p for p, _ in lb]:
        return False, "different structure"
    for (p, x), (_, y) in zip(la, lb):
        if p.rsplit(".", 1)[-1] in NOT_COMPARED:
            continue
        if x.shape != y.shape:
            return False, f"{p}: shape {x.shape} != {y.shape}"
        if x.dtype.kind in "iu" and y.dtype.kind in "iu" and rtol <= 1e-9:
            if not np.array_equal(x, y):
                return False, f"{p}: integers differ"
            continue
        if x.dtype.kind in "iu" or y.dtype.kind in "iu":
            continue    # counts (iterations ...) may differ with the dtype's round-off
        x = x.astype(complex if x.dtype.kind == "c" else float)
        y = y.astype(complex if y.dtype.kind == "c" else float)
        fin = np.isfinite(x) & np.isfinite(y)
        if not np.array_equal(np.isfinite(x), np.isfinite(y)):
            return False, f"{p}: finite entries differ"
        if fin.any():
            scale = float(np.max(np.abs(x[fin]))) or 1.0
            err = float(np.max(np.abs(x[fin] - y[fin])))
            # an absolute floor: a value at round-off level (a gap that is 0 in exact arithmetic) has no digits
            if err > rtol * scale + (1e-6 if rtol >= 1e-4 else 1e-12):
                return False, f"{p}: relative difference {err / scale:.2g} > {rtol:g}"
    return True, ""


# ---------------------------------------------------------------------------------------------
# tasks and the replay in a child process
# ---------------------------------------------------------------------------------------------
@dataclass
class Task:
    rec: int          # index of the record
    param: str | None  # None: the baseline (the original call)
    label: str        # bad value name or unusual label
    mode: str         # "bad" | "unusual" | "baseline"
    rtol: float = 0.0

    def key(self, records) -> str:
        return f"{records[self.rec].entry.name}:{self.param}={self.label}"


def tasks_for(records, bad=tuple(BAD), unusual_forms=True, per_entry=None) -> list:
    tasks, count = [], {}
    for i, r in enumerate(records):
        n = count.get(r.entry.name, 0)
        if per_entry is not None and n >= per_entry:
            continue
        params = mutable_params(r)
        if not params:
            continue
        count[r.entry.name] = n + 1
        tasks.append(Task(i, None, "original", "baseline"))
        for p in params:
            for b in bad:
                if b == "None" and r.args[p] is None:
                    continue
                tasks.append(Task(i, p, b, "bad"))
            if unusual_forms:
                for label, _, rtol in unusual(r.args[p]):
                    tasks.append(Task(i, p, label, "unusual", rtol))
    return tasks


class _TimeOut(BaseException):
    pass


def _alarm(signum, frame):
    raise _TimeOut()


def _value(record, task):
    v = record.args[task.param]
    if task.mode == "bad":
        return BAD[task.label][0](v)
    for label, value, _ in unusual(v):
        if label == task.label:
            return value
    raise KeyError(task.label)


def _run_one(records, task, baselines, limit) -> tuple:
    """(class, detail) of one task, in the child."""
    r = records[task.rec]
    if task.mode != "baseline" and baselines.get(task.rec, 0) is None:
        return "skip", "the original call fails or is past the time limit"
    args = {k: _snapshot(v) for k, v in r.args.items()}
    if task.param is not None:
        args[task.param] = _value(r, task)
    signal.setitimer(signal.ITIMER_REAL, limit)
    t0 = time.perf_counter()
    try:
        out = call(r, args)
        signal.setitimer(signal.ITIMER_REAL, 0)
    except _TimeOut:
        signal.setitimer(signal.ITIMER_REAL, 0)
        if task.mode == "baseline":
            baselines[task.rec] = None
            return "baseline-slow", f"past {limit:g} s"
        return ("f" if task.mode == "bad" else "crash"), f"past {limit:g} s"
    except MemoryError:
        signal.setitimer(signal.ITIMER_REAL, 0)
        return ("g" if task.mode == "bad" else "crash"), "MemoryError"
    except flt.FLTheoryError as exc:
        signal.setitimer(signal.ITIMER_REAL, 0)
        if task.mode == "baseline":
            baselines[task.rec] = None
            return "baseline-refused", f"{type(exc).__name__}: {str(exc)[:200]}"
        if task.mode == "unusual":
            if task.label == "np.float32" and isinstance(exc, flt.ConditionError):
                return "ok", "float32 rounds the value across a condition's boundary"
            return "refused", f"{type(exc).__name__}: {str(exc)[:200]}"
        name = named(r, task.param)
        return ("a" if re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", str(exc)) else "b"), \
            f"{type(exc).__name__}: {str(exc)[:200]}"
    except BaseException as exc:  # noqa: BLE001 - the point of the replay
        signal.setitimer(signal.ITIMER_REAL, 0)
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        if task.mode == "baseline":
            baselines[task.rec] = None
        tb = traceback.extract_tb(exc.__traceback__)
        where = next((f"{Path(f.filename).name}:{f.lineno}" for f in reversed(tb) if PKG_DIR in f.filename), "")
        return ("c" if task.mode == "bad" else "crash" if task.mode == "unusual" else "baseline-crash"), \
            f"{type(exc).__name__}: {str(exc)[:160]} [{where}]"
    if task.mode == "baseline":
        if time.perf_counter() - t0 > limit / 4:
            baselines[task.rec] = None
            return "baseline-slow", f"{time.perf_counter() - t0:.2f} s: too slow to replay mutated"
        try:
            again = call(r, {k: _snapshot(v) for k, v in r.args.items()})
            deterministic = same(out, again, 0.0)[0]
        except Exception:  # noqa: BLE001
            deterministic = False
        baselines[task.rec] = (out, nonfinite(out), deterministic)
        return "baseline", ""
    base = baselines.get(task.rec)
    if task.mode == "unusual":
        if base is None or not base[2]:
            return "ok", "no deterministic baseline"
        ok, why = same(base[0], out, task.rtol)
        return ("ok", "") if ok else ("wrong", why)
    if never_valid(r, task.param, task.label):
        return "e", f"returned {type(out).__name__}"
    finite_bad = task.label in ("-1", "0", "2.5", "10**30", "wrong-shape", "empty-array")
    if finite_bad and nonfinite(out) and not flagged(out) and not (base and base[1]):
        return "d", f"returned {type(out).__name__} with NaN/inf/complex and no flag"
    return "ok", ""


def _child(records, tasks, start, wfd, limit, mem_bytes):
    os.environ["FLTHEORY_NUM_THREADS"] = "1"
    try:
        from fltheory import parallel
        parallel.set_num_threads(1)
    except Exception:  # noqa: BLE001
        pass
    from fltheory import validation as V
    V.MEMORY_FRACTION = 0.02       # the memory cap below must not turn the package's own size limit into a crash
    if mem_bytes:
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        resource.setrlimit(resource.RLIMIT_AS, (mem_bytes, hard))
    signal.signal(signal.SIGALRM, _alarm)
    sys.stdout = open(os.devnull, "w")
    sys.stderr = open(os.devnull, "w")
    warnings.simplefilter("ignore")
    np.seterr(all="ignore")
    baselines: dict = {}
    # a bad task whose baseline ran in an earlier child: run the baseline again first
    first = tasks[start]
    if first.mode != "baseline":
        _run_one(records, Task(first.rec, None, "original", "baseline"), baselines, limit)
    with os.fdopen(wfd, "w", buffering=1) as w:
        for i in range(start, len(tasks)):
            try:
                cls, detail = _run_one(records, tasks[i], baselines, limit)
            except BaseException as exc:  # noqa: BLE001
                cls, detail = "c", f"in the replay: {type(exc).__name__}: {exc}"
            w.write(json.dumps([i, cls, detail]) + "\n")
    os._exit(0)


def replay(records, tasks, limit=2.0, hard=20.0, mem_bytes=None, progress=False) -> list:
    """Run every task in forked children; returns [(class, detail)] in task order."""
    if mem_bytes is None:
        mem_bytes = _memory_cap()
    results = [None] * len(tasks)
    start = 0
    while start < len(tasks):
        rfd, wfd = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(rfd)
            try:
                _child(records, tasks, start, wfd, limit, mem_bytes)
            finally:
                os._exit(1)
        os.close(wfd)
        buf = b""
        last = start - 1
        with os.fdopen(rfd, "rb", buffering=0) as r:
            while True:
                ready, _, _ = select.select([r], [], [], hard)
                if not ready:
                    os.kill(pid, signal.SIGKILL)
                    break
                chunk = r.read(65536)
                if not chunk:
                    break
                buf += chunk
                *lines, buf = buf.split(b"\n")
                for line in lines:
                    i, cls, detail = json.loads(line)
                    results[i] = (cls, detail)
                    last = i
                    if progress and i % 5000 == 0:
                        print(f"[harvest] {i:,} of {len(tasks):,} replays", file=sys.stderr, flush=True)
        _, status = os.waitpid(pid, 0)
        nxt = last + 1
        if nxt < len(tasks) and results[nxt] is None:
            why = f"the replay process stopped ({'killed after %g s' % hard if os.WIFSIGNALED(status) else status})"
            cls = "f" if tasks[nxt].mode == "bad" else "crash"
            results[nxt] = (cls, why)
            nxt += 1
        start = nxt
    return results


def _memory_cap() -> int:
    """An address-space cap for the replay process: what it uses now plus 3 GiB."""
    try:
        with open("/proc/self/statm") as f:
            vm_pages = int(f.read().split()[0])
        return vm_pages * os.sysconf("SC_PAGE_SIZE") + 3 * 2**30
    except Exception:  # noqa: BLE001
        return 0


def summarize(records, tasks, results) -> dict:
    """class -> sorted list of 'entry:param=bad  detail'."""
    out: dict = {}
    for t, (cls, detail) in zip(tasks, results):
        out.setdefault(cls, []).append((t.key(records), detail))
    return out
