"""Operators, one module per family. Importing this package registers them all."""

from . import comparison, conversion, indexing, linalg, pointwise, reduction, shape, views

MODULES = [comparison, conversion, indexing, linalg, pointwise, reduction, shape, views]
