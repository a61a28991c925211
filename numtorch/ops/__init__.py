"""Operators, one module per family. Importing this package registers them all."""

from . import (
    binary,
    comparison,
    conversion,
    creation,
    indexing,
    linalg,
    operators,
    random,
    reduction,
    shape,
    unary,
    views,
)

MODULES = [
    binary, comparison, conversion, creation, indexing, linalg, operators, random, reduction, shape,
    unary, views,
]  # fmt: skip
