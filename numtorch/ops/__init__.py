"""Operators, one module per family. Importing this package registers them all and
declares their Tensor methods."""

# ruff: noqa: F401

from .._core.aten import aten  # torch.ops.aten: the OpOverloads dispatch modes see
from . import (
    bessel,
    binary,
    bins,
    calculus,
    comparison,
    complex,
    conversion,
    creation,
    fft,
    float_parts,
    from_data,
    gamma,
    grids,
    index_reduce,
    indexing,
    integer_math,
    linalg,
    operators,
    polynomials,
    quantile,
    random,
    random_counts,
    reduction,
    setops,
    shape,
    special,
    spectral,
    splits,
    statistics,
    strided,
    tensor_extras,
    unary,
    view_copies,
    view_scatters,
    views,
    windows,
)
