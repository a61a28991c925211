"""Operators, one module per family. Importing this package registers them all."""

from . import conversion, linalg, pointwise, reduction, shape, views  # noqa: F401

MODULES = [conversion, linalg, pointwise, reduction, shape, views]
