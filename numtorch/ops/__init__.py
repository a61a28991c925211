"""Operators, one module per family. Importing this package registers them all."""

from . import (
    binary,
    comparison,
    conversion,
    creation,
    indexing,
    linalg,
    operators,
    pointwise,
    random,
    reduction,
    shape,
    views,
)

MODULES = [
    binary, comparison, conversion, creation, indexing, linalg, operators, pointwise, random, reduction,
    shape, views,
]  # fmt: skip
