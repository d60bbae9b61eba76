"""fltheory: executable theory of federated learning with delays, asynchrony and local adaptivity.

The public surface: problems (``QuadraticFederation``), affine maps (``AffineMap``),
schedules of stale updates (``schedules``) and their exact and simulated dynamics (``delayed``),
statements (``Statement``; every paper's found by name with :func:`statement` and listed by
:func:`statements`), checks (``verify``), hypothesis strategies and a bound checker for a user's
own statements (``fltheory.testing``, needs hypothesis) and one subpackage per paper under
``fltheory.papers``.  The blocked NumPy paths use a few threads (``fltheory.parallel``; the same
bits for any number).
"""
__version__ = "0.1.0"

from . import backend, delayed, linear, papers, parallel, problems, schedules, symbolic, validation, verify  # noqa: E402
from .linear import AffineMap, FixedPoint, Moments, companion  # noqa: E402
from .problems import QuadraticFederation, random_quadratic_federation  # noqa: E402
from .schedules import Schedule  # noqa: E402
from .validation import FLTheoryError, InputError, InputTypeError, per_client, per_configuration  # noqa: E402
from .symbolic import (Condition, ConditionError, Evaluation, GridSizeError, Statement, StatementError, statement,  # noqa: E402
                       statements)

__all__ = [
    "AffineMap", "Condition", "ConditionError", "Evaluation", "FLTheoryError", "FixedPoint", "GridSizeError", "InputError", "InputTypeError", "Moments", "QuadraticFederation", "Schedule",
    "Statement", "StatementError", "backend", "companion", "delayed", "linear", "papers", "parallel", "per_client",
    "per_configuration", "problems", "random_quadratic_federation", "schedules", "statement", "statements", "symbolic",
    "validation", "verify",
]


def __getattr__(name):
    """``fltheory.testing`` is imported on first use (it needs hypothesis, an optional extra)."""
    if name == "testing":
        import importlib  # noqa: PLC0415

        return importlib.import_module(".testing", __name__)
    raise AttributeError(f"module 'fltheory' has no attribute {name!r}")
