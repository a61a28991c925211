"""nonzero and argwhere (the positions of nonzero elements: a data-dependent shape, an
error under vmap by the ``dynamic_shape`` rule) and one_hot (class indices as one-hot
rows)."""

from __future__ import annotations

import numpy as np

from ..._core import dtype as dt
from ..._core import meta_rules
from ..._core.dispatch import dispatch
from ..._core.layout import column_major
from ..._core.meta import nonzero_sized
from ..._core.meta_array import MetaArray
from ..._core.methods import tensor_methods
from ..._core.op import ErrorInput, defop
from ..._core.tensor import Tensor
from ..._opdb.samples import S
from .._batching import front, rule_generator
from .._families import COMPLEX, FLOATS_INT_BOOL
from ..creation import zeros
from ._common import _method


def _dynamic_shape(op):
    """Ops whose output shape depends on the data: an error under vmap, as in PyTorch."""

    def rule(vmap, args, bdims, attrs):
        raise RuntimeError(
            "vmap: We do not support batching operators that can output dynamic shape. "
            f"Attempted to vmap over aten::{op.name}. Please file an issue at "
            "https://github.com/pytorch/pytorch/issues if you need this feature."
        )

    return rule


dynamic_shape = rule_generator(_dynamic_shape)


_ANY_DTYPE = (*FLOATS_INT_BOOL, *COMPLEX)  # (a complex element is nonzero by either part)


def _imaginary_only(make):
    """A complex sample whose nonzero elements include purely imaginary ones."""
    return np.array([[0, 1j, 2, 0], [-3j, 0, 1 + 1j, 0]], dtype=make.dtype)


def _argwhere(xp, input):
    return xp.argwhere(input).astype(xp.int64)


def _nonzero_samples(make):
    for shape in ((5,), (3, 4), (), (0, 3), (2, 3, 2)):
        x = np.asarray(make(shape))
        if x.ndim:
            x.reshape(-1)[::2] = 0
        yield S((x,))
    yield S((make((3, 4)),), {"as_tuple": True})
    yield S((np.asarray(make(())),), {"as_tuple": True})
    yield S((np.zeros((), dtype=make.dtype),), {"as_tuple": True})
    if make.dtype.kind == "c":
        yield S((_imaginary_only(make),))


nonzero_p = defop(
    "nonzero",
    _argwhere,
    samples=_nonzero_samples,
    batch_rule=dynamic_shape(),
    test={"dtypes": _ANY_DTYPE, "vmap": "dynamic"},
    layout=column_major,
    complex32=True,
    meta=nonzero_sized,
)


def nonzero(input: Tensor, *, out=None, as_tuple: bool = False):
    """Indices of the nonzero elements: an (n, ndim) tensor, or one tensor per dim."""
    r = dispatch(nonzero_p, (input,), {})
    if as_tuple:
        if input.dim() == 0:
            return (zeros(r.shape[0], dtype=dt.int64, device=r.device),)
        return tuple(r[:, i] for i in range(input.dim()))
    if out is not None:
        from ..._core.out import write_out

        return write_out(out, r)
    return r


argwhere_p = defop(
    "argwhere",
    _argwhere,
    samples=lambda make: [s for s in _nonzero_samples(make) if not s.kwargs],
    batch_rule=dynamic_shape(),
    test={"dtypes": _ANY_DTYPE, "vmap": "dynamic"},
    methods=True,
    layout=column_major,
    complex32=True,
    meta=nonzero_sized,
)


def _nonzero_rows(xp, mask, shape: tuple, size: int, fill_value: int):
    """nonzero_static of each row of ``mask`` (a batch of flattened inputs of ``shape``):
    the first ``size`` positions of each row's nonzero elements, rows of ``fill_value``
    after them."""
    rows = mask.shape[0]
    out = xp.full((rows, size, len(shape)), fill_value, dtype=np.int64)
    b, flat = xp.nonzero(mask)  # row by row, each in order
    counts = mask.sum(axis=1)
    rank = xp.arange(b.shape[0]) - (xp.cumsum(counts) - counts)[b]
    keep = rank < size
    if shape and b.size:
        coords = xp.stack(xp.unravel_index(flat[keep], shape), axis=-1)
        out[b[keep], rank[keep]] = coords
    return out


def _check_size(size) -> int:
    if size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    return int(size)


def _nonzero_static(xp, input, *, size, fill_value=-1):
    mask = (input != 0).reshape(1, -1)
    return _nonzero_rows(xp, mask, input.shape, _check_size(size), fill_value)[0]


def _nonzero_static_batched(xp, input, *, size, fill_value=-1):
    mask = (input != 0).reshape(input.shape[0], -1)
    return _nonzero_rows(xp, mask, input.shape[1:], _check_size(size), fill_value)


def _nonzero_static_rule(vmap, args, bdims, attrs):
    return nonzero_static_batched(front(args[0], bdims[0]), **attrs), 0


def _nonzero_static_batched_rule(vmap, args, bdims, attrs):
    x = front(args[0], bdims[0])  # two batch dims in front: one
    n, m = x.shape[0], x.shape[1]
    out = nonzero_static_batched(x.reshape((n * m, *x.shape[2:])), **attrs)
    return out.reshape((n, m, *out.shape[1:])), 0


def _nonzero_static_samples(make):
    for shape in ((5,), (3, 4), (), (0, 3), (2, 3, 2)):
        x = np.asarray(make(shape))
        if x.ndim:
            x.reshape(-1)[::2] = 0
        for size in (0, 2, 8):
            yield S((x,), {"size": size})
    yield S((np.asarray(make((3, 4))),), {"size": 3, "fill_value": 7})
    yield S((np.zeros((2, 2), dtype=make.dtype),), {"size": 2, "fill_value": -5})
    if make.dtype.kind == "c":
        yield S((_imaginary_only(make),), {"size": 3})


def _nonzero_static_errors(make):
    yield ErrorInput(
        S((make((3,)),), {"size": -1}),
        RuntimeError,
        "nonzero_static: 'size' must be an non-negative integer",
    )


nonzero_static_p = defop(
    "nonzero_static",
    _nonzero_static,
    batch_rule=_nonzero_static_rule,
    samples=_nonzero_static_samples,
    error_samples=_nonzero_static_errors,
    test={"dtypes": _ANY_DTYPE},
    out=True,
    methods=True,
    complex32=True,
    meta=meta_rules.nonzero_static,
)
nonzero_static = nonzero_static_p.fn


def _nonzero_static_batched_samples(make):
    x = np.asarray(make((3, 4)))
    x.reshape(-1)[::3] = 0
    yield S((x,), {"size": 2})
    yield S((x,), {"size": 5, "fill_value": 9})


nonzero_static_batched_p = defop(
    "nonzero_static_batched",
    _nonzero_static_batched,
    api="ops.indexing.positions.nonzero_static_batched",
    batch_rule=_nonzero_static_batched_rule,
    samples=_nonzero_static_batched_samples,
    test={"dtypes": FLOATS_INT_BOOL, "no_oracle": True},
)
nonzero_static_batched = nonzero_static_batched_p.fn


def _one_hot(xp, tensor, num_classes=-1):
    if tensor.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        if tensor.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(tensor.max()) + 1
    if tensor.size:
        if int(tensor.min()) < 0:
            raise RuntimeError("Class values must be non-negative.")
        if int(tensor.max()) >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    return (tensor[..., None] == xp.arange(num_classes)).astype(xp.int64)


def _one_hot_meta(op, arrays, attrs):
    """The index's shape and a dim of ``num_classes``; inferring the count reads values."""
    tensor, n = arrays[0], attrs["num_classes"]
    if tensor.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if n == -1:
        raise RuntimeError("Tensor.item() cannot be called on meta tensors")
    return MetaArray((*tensor.shape, n), np.int64)


def _one_hot_rule(vmap, args, bdims, attrs):
    """Elementwise on the index; the class count must be given (as in PyTorch: inferring it
    would need the maximum over the batch)."""
    n = attrs["num_classes"]
    if n is None or n < 1:
        raise RuntimeError(
            "When vmap-ing torch.nn.functional.one_hot, please provide an explicit positive "
            "num_classes argument."
        )
    return one_hot(front(args[0], bdims[0]), n), 0


# Inferred class counts (an error under vmap) are tested in test_vmap_indexing.py.
def _one_hot_samples(make):
    yield S((make.index((5,), 4), 4))
    yield S((make.index((2, 3), 3), 5))
    yield S((np.array(2), 3))
    yield S((np.zeros(0, dtype=np.int64), 3))


def _one_hot_errors(make):
    yield ErrorInput(S((np.array([-1]),)), RuntimeError, "Class values must be non-negative.")
    yield ErrorInput(
        S((np.array([3]), 2)),
        RuntimeError,
        "Class values must be smaller than num_classes.",
    )
    yield ErrorInput(
        S((np.zeros(0, dtype=np.int64),)),
        RuntimeError,
        "Can not infer total number of classes from empty tensor.",
    )
    yield ErrorInput(
        S((np.array([1.0]),)),
        RuntimeError,
        "one_hot is only applicable to index tensor of type LongTensor.",
    )


one_hot_p = defop(
    "one_hot",
    _one_hot,
    nin=1,
    api="nn.functional.one_hot",
    oracle="nn.functional.one_hot",
    batch_rule=_one_hot_rule,
    samples=_one_hot_samples,
    error_samples=_one_hot_errors,
    test={"dtypes": ("int64",)},
    # an inferred class count is the input's largest value
    value_shaped=lambda args, attrs: attrs.get("num_classes", -1) == -1,
    meta=_one_hot_meta,
)
one_hot = one_hot_p.fn


tensor_methods(
    {
        "nonzero": _method(nonzero),
    }
)
