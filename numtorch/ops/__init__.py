"""Operators, one module per family. Importing this package registers them all and
declares their Tensor methods."""

# ruff: noqa: F401

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
    setops,
    shape,
    unary,
    views,
)
