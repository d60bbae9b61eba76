"""fltheory: executable theory of federated learning with delays, asynchrony and local adaptivity.

The public surface: problems (``QuadraticFederation``), affine maps (``AffineMap``),
schedules of stale updates (``schedules``) and their exact and simulated dynamics (``delayed``),
statements (``Statement``), checks (``verify``) and one subpackage per paper under
``fltheory.papers``.
"""
__version__ = "0.1.0"

from . import backend, delayed, linear, papers, problems, schedules, symbolic, validation, verify  # noqa: E402
from .linear import AffineMap, FixedPoint, Moments, companion  # noqa: E402
from .problems import QuadraticFederation, random_quadratic_federation  # noqa: E402
from .schedules import Schedule  # noqa: E402
from .validation import FLTheoryError, InputError, InputTypeError  # noqa: E402
from .symbolic import Condition, ConditionError, Statement  # noqa: E402

__all__ = [
    "AffineMap", "Condition", "ConditionError", "FLTheoryError", "FixedPoint", "InputError", "InputTypeError", "Moments", "QuadraticFederation", "Schedule",
    "Statement", "backend", "companion", "delayed", "linear", "papers", "problems", "random_quadratic_federation",
    "schedules", "symbolic", "validation", "verify",
]
