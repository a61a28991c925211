"""nonzero and argwhere (the positions of nonzero elements: a data-dependent shape, an
error under vmap by the ``dynamic_shape`` rule) and one_hot (class indices as one-hot
rows)."""

from __future__ import annotations

import numpy as np

from ..._core import dtype as dt
from ..._core.dispatch import dispatch
from ..._core.layout import column_major
from ..._core.methods import tensor_methods
from ..._core.op import ErrorInput, defop
from ..._core.tensor import Tensor
from ...testing.samples import S
from .._batching import front, rule_generator
from .._families import FLOATS_INT_BOOL
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


nonzero_p = defop(
    "nonzero",
    _argwhere,
    samples=_nonzero_samples,
    batch_rule=dynamic_shape(),
    test={"dtypes": FLOATS_INT_BOOL, "vmap": "dynamic"},
    layout=column_major,
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
    test={"dtypes": FLOATS_INT_BOOL, "vmap": "dynamic"},
    methods=True,
    layout=column_major,
)


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
)
one_hot = one_hot_p.fn


tensor_methods(
    {
        "nonzero": _method(nonzero),
    }
)
