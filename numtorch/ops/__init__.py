"""Operators, one module per family. Importing this package registers them all."""

from . import binary, comparison, conversion, indexing, linalg, pointwise, reduction, shape, views

MODULES = [binary, comparison, conversion, indexing, linalg, pointwise, reduction, shape, views]
