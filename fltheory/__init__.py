"""fltheory: executable theory of federated learning with delays, asynchrony and local adaptivity.

The public surface: problems (``QuadraticFederation``), affine maps (``AffineMap``),
statements (``Statement``), checks (``verify``) and one subpackage per paper under
``fltheory.papers``.
"""
__version__ = "0.1.0"

from . import backend, linear, papers, problems, symbolic, verify  # noqa: E402
from .linear import AffineMap, FixedPoint, Moments, companion  # noqa: E402
from .problems import QuadraticFederation, random_quadratic_federation  # noqa: E402
from .symbolic import Condition, ConditionError, Statement  # noqa: E402

__all__ = [
    "AffineMap", "Condition", "ConditionError", "FixedPoint", "Moments", "QuadraticFederation",
    "Statement", "backend", "companion", "linear", "papers", "problems", "random_quadratic_federation",
    "symbolic", "verify",
]
