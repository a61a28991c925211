"""Set operations: unique and unique_consecutive.

Three primitives, as in ATen: ``_unique2`` (the flattened input), ``unique_dim`` (slices
along a dim) and ``unique_consecutive`` (either form, runs only). Each returns
(values, inverse, counts); the public functions pick what was asked for. As in PyTorch,
the values carry a node whose backward raises (there is no derivative), forward mode
raises, and vmap refuses them (the output shape depends on the data).
"""

from __future__ import annotations

import math

import numpy as np

from .._core import dtype as dt
from .._core.dispatch import dispatch
from .._core.meta import value_sized
from .._core.methods import tensor_method
from .._core.op import ErrorInput, defop
from .._core.tensor import Tensor, wrap_dim
from .._opdb.samples import S
from ._families import FLOATS_INT_BOOL
from .indexing.positions import dynamic_shape

_FORWARD_AD = (
    "Trying to use forward AD with {} that does not support it because it has not been "
    "implemented yet.\nPlease file an issue to PyTorch at "
    "https://github.com/pytorch/pytorch/issues/new?template=feature-request.yml so that we "
    "can prioritize its implementation or submit a PR adding the implementation to "
    "derivatives.yaml"
)


def _no_derivative(aten: str) -> dict:
    """vjp and jvp formulas that raise PyTorch's errors for an op with no derivative."""

    def vjp(g):
        raise NotImplementedError(f"the derivative for '{aten}' is not implemented.")

    def jvp(t):
        raise NotImplementedError(_FORWARD_AD.format(aten))

    return {"vjp": vjp, "jvp": jvp}


# ------------------------------------------------------------------ kernels
def _groups(xp, rows, order):
    """(values, inverse, counts) of the runs of equal rows of ``rows[order]``; ``rows`` is
    (n, k). NaN equals nothing, so each NaN starts a run of its own (as in PyTorch)."""
    n = rows.shape[0]
    s = rows if order is None else rows[order]
    new = xp.ones(n, dtype=bool)
    if n > 1:
        new[1:] = (s[1:] != s[:-1]).any(axis=1)
    group = xp.cumsum(new) - 1
    if order is None:
        inverse = group
    else:
        inverse = xp.empty(n, dtype=np.int64)
        inverse[order] = group
    starts = xp.flatnonzero(new)
    counts = xp.diff(xp.concatenate([starts, xp.asarray([n])]))
    return s[new], inverse.astype(np.int64), counts.astype(np.int64)


def _check_dtype(input, name: str) -> None:
    if input.dtype.kind == "c":
        raise dt.not_implemented(name, input)


def _flat(xp, input, sort: bool):
    _check_dtype(input, "unique")
    x = input.reshape(-1, 1)
    order = xp.argsort(x[:, 0], kind="stable") if sort else None
    values, inverse, counts = _groups(xp, x, order)
    return values[:, 0], inverse.reshape(input.shape), counts


def _along(xp, input, dim: int, sort: bool):
    _check_dtype(input, "unique_dim")
    if input.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    dim = wrap_dim(dim, input.ndim)
    if input.size == 0 and any(s == 0 for i, s in enumerate(input.shape) if i != dim):
        raise RuntimeError(
            "There are 0 sized dimensions, and they aren't selected, so unique cannot be applied"
        )
    moved = xp.moveaxis(input, dim, 0)
    rows = moved.reshape(moved.shape[0], math.prod(moved.shape[1:]))
    # lexsort's last key is the primary one: the first column leads.
    order = xp.lexsort(rows.T[::-1]) if sort and rows.shape[0] else None
    values, inverse, counts = _groups(xp, rows, order)
    values = values.reshape(values.shape[0], *moved.shape[1:])
    return xp.moveaxis(values, 0, dim), inverse, counts


def _unique2(xp, input, sorted=True):
    # PyTorch's CPU kernel sorts whether or not ``sorted`` is asked for.
    return _flat(xp, input, True)


def _unique_dim(xp, input, dim, sorted=True):
    return _along(xp, input, dim, True)


def _unique_consecutive(xp, input, dim=None):
    return _flat(xp, input, False) if dim is None else _along(xp, input, dim, False)


# ------------------------------------------------------------------ samples
def _dups(make, shape):
    """An array with repeated values (and, for floats, a NaN when it has room)."""
    a = np.asarray(make(shape, -2, 2))
    if make.is_float:
        a = np.round(a)
        if a.size > 3:
            a.reshape(-1)[2] = np.nan
    return np.ascontiguousarray(a)


def _rows(make, n, k):
    """(n, k) with repeated rows."""
    base = np.asarray(make((2, k), -2, 2))
    return np.ascontiguousarray(base[make.rng.integers(0, 2, size=n)])


_FLAGS = {"return_inverse": True, "return_counts": True}


def _flat_samples(make, consecutive=False):
    yield S((_dups(make, (7,)),))
    yield S((_dups(make, (2, 4)),), _FLAGS)
    yield S((_dups(make, (4, 3)).T,), {"return_inverse": True})
    yield S((_dups(make, ()),), _FLAGS)
    yield S((_dups(make, (0, 3)),), _FLAGS)
    if not consecutive:
        yield S((_dups(make, (6,)),), {"sorted": False, **_FLAGS})


def _dim_samples(make):
    yield S((_rows(make, 5, 3),), {"dim": 0, **_FLAGS})
    yield S((_rows(make, 4, 2).T,), {"dim": 1, **_FLAGS})
    yield S((np.moveaxis(np.stack([_rows(make, 4, 3)] * 2), 1, -1),), {"dim": -1})
    yield S((_dups(make, (0, 3)),), {"dim": 0, **_FLAGS})
    yield S((_rows(make, 3, 2),), {"dim": 0, "sorted": False, "return_counts": True})


def _consecutive_samples(make):
    yield from _flat_samples(make, consecutive=True)
    yield S((_rows(make, 5, 3),), {"dim": 0, **_FLAGS})
    yield S((_rows(make, 4, 2).T,), {"dim": -1, "return_counts": True})


def _dim_errors(make, name, dim_pos):
    x = make((2, 3))
    yield ErrorInput(
        S((x,), {"dim": 2}),
        IndexError,
        r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)",
    )
    yield ErrorInput(
        S((make(()),), {"dim": 0}), IndexError, "Dimension specified as 0 but tensor has no"
    )
    yield ErrorInput(
        S((make((0, 3)),), {"dim": 1}),
        RuntimeError,
        "There are 0 sized dimensions, and they aren't selected, so unique cannot be applied",
    )
    z = np.array([[1 + 2j, 1 + 2j]], np.complex64)
    yield ErrorInput(
        S((z,), {"dim": 0}),
        NotImplementedError,
        "\"unique_dim\" not implemented for 'ComplexFloat'",
    )
    yield ErrorInput(S((z,)), NotImplementedError, "\"unique\" not implemented for 'ComplexFloat'")
    yield ErrorInput(
        S((x,), {"dim": 1.5}),
        TypeError,
        rf"{name}\(\): argument 'dim'{dim_pos} must be int, not float",
    )


# The gradient tests are off: there is no derivative (torch's backward raises, and so does
# ours; test_unique.py checks the errors and when they are raised).
_TEST = {"dtypes": FLOATS_INT_BOOL, "vmap": "dynamic", "no_grad_test": True}

unique2_p = defop(
    "_unique2",
    _unique2,
    api="unique",
    node_name="Unique2Backward0",
    nout=3,
    ndiff=1,
    batch_rule=dynamic_shape(),
    samples=_flat_samples,
    error_samples=lambda make: _dim_errors(make, "unique_dim", r" \(position 2\)"),
    test=_TEST,
    **_no_derivative("_unique2"),
    complex32="unique",  # (PyTorch's kernel that refuses ComplexHalf)
    meta=value_sized,
)
unique_dim_p = defop(
    "unique_dim",
    _unique_dim,
    nin=1,
    api="unique",
    nout=3,
    ndiff=1,
    batch_rule=dynamic_shape(),
    samples=_dim_samples,
    test=_TEST,
    **_no_derivative("unique_dim"),
    complex32="unique_dim",  # (PyTorch's kernel that refuses ComplexHalf)
    meta=value_sized,
)


def _unique_consecutive_complex32(arrays, attrs):
    """PyTorch's kernel refusing complex32: unique's, or unique_dim's along a dim."""
    return "unique" if attrs.get("dim") is None else "unique_dim"


unique_consecutive_p = defop(
    "unique_consecutive",
    _unique_consecutive,
    api="unique_consecutive",
    nout=3,
    ndiff=1,
    batch_rule=dynamic_shape(),
    samples=_consecutive_samples,
    error_samples=lambda make: _dim_errors(make, "unique_consecutive", ""),
    test=_TEST,
    **_no_derivative("unique_consecutive"),
    complex32=_unique_consecutive_complex32,
    meta=value_sized,
)


# ------------------------------------------------------------------ public functions
def _check_args(input, dim, name: str, dim_pos: str) -> int | None:
    """PyTorch's argument parser: TypeErrors for a non-tensor input or a non-int dim."""
    if not isinstance(input, Tensor):
        raise TypeError(
            f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}"
        )
    if isinstance(dim, Tensor) and not dim.dtype.is_floating_point and dim.dim() == 0:
        dim = int(dim)
    if dim is not None and (isinstance(dim, bool) or not isinstance(dim, int)):
        raise TypeError(f"{name}(): argument 'dim'{dim_pos} must be int, not {type(dim).__name__}")
    return dim


def _pick(out: tuple, return_inverse: bool, return_counts: bool):
    values, inverse, counts = out
    if return_inverse and return_counts:
        return values, inverse, counts
    if return_inverse:
        return values, inverse
    if return_counts:
        return values, counts
    return values


def unique(
    input: Tensor,
    sorted: bool = True,
    return_inverse: bool = False,
    return_counts: bool = False,
    dim: int | None = None,
):
    """The unique elements of ``input`` (or its unique slices along ``dim``), sorted; with
    ``return_inverse`` where each element went, with ``return_counts`` how often each
    occurs."""
    dim = _check_args(input, dim, "_unique2" if dim is None else "unique_dim", " (position 2)")
    if dim is None:
        out = dispatch(unique2_p, (input,), {"sorted": sorted})
    else:
        out = dispatch(unique_dim_p, (input,), {"dim": dim, "sorted": sorted})
    return _pick(out, return_inverse, return_counts)


def unique_consecutive(
    input: Tensor,
    return_inverse: bool = False,
    return_counts: bool = False,
    dim: int | None = None,
):
    """``input`` with each run of equal consecutive elements (or slices along ``dim``)
    reduced to one; the inverse and counts as in ``unique``."""
    dim = _check_args(input, dim, "unique_consecutive", "")
    out = dispatch(unique_consecutive_p, (input,), {"dim": dim})
    return _pick(out, return_inverse, return_counts)


tensor_method(unique, "unique")
tensor_method(unique_consecutive, "unique_consecutive")
