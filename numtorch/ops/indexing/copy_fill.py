"""``copy`` (the op of ``Tensor.copy_``), ``fill`` and the in-place ``fill_`` / ``zero_``."""

from __future__ import annotations

from ..._core import dtype as dt
from ..._core.device import _cuda_used
from ..._core.dispatch import dispatch
from ..._core.inplace import run_inplace
from ..._core.layout import preserve
from ..._core.messages import broadcast_mismatch
from ..._core.meta import by_kernel
from ..._core.methods import inplace_method, tensor_method, tensor_methods
from ..._core.op import LINEAR, ErrorInput, defop
from ..._core.policy import BatchedWrite, InplacePolicy
from ..._core.tensor import Tensor
from ..._opdb.samples import S
from .._batching import front, lrank, materialize, pad_to
from .._families import COMPLEX_TOO
from ..creation import zeros_like


def _copy(xp, self, src, non_blocking=False):
    shape = getattr(src, "shape", ())
    if shape != self.shape:
        msg = broadcast_mismatch((self.shape, shape))
        if msg is None:
            full = xp.broadcast_shapes(self.shape, shape)
            if full != self.shape:
                msg = (
                    f"output with shape {list(self.shape)} doesn't match the broadcast shape "
                    f"{list(full)}"
                )
        if msg is not None:
            raise RuntimeError(msg)
    src = dt.real_for(xp.asarray(src), self.dtype)
    return xp.array(xp.broadcast_to(src, self.shape), dtype=self.dtype)


def _copy_rule(vmap, args, bdims, attrs):
    (self, src), (sb, rb) = args, bdims
    out = materialize(vmap, self, sb)
    if not isinstance(src, Tensor):
        return dispatch(copy_p, (out, src), attrs), 0
    rank = max(out.dim() - 1, lrank(src, rb))
    if rb is not None:
        src = pad_to(front(src, rb), rank)
    if rank == out.dim() - 1:
        return dispatch(copy_p, (out, src), attrs), 0
    # a src of more dims: PyTorch pads self to its rank (its error shows the padded shape)
    padded = out.reshape(vmap.size, *((1,) * (rank - out.dim() + 1)), *out.shape[1:])
    return dispatch(copy_p, (padded, src), attrs).reshape(out.shape), 0


# The sweep tests the functional op: under vmap, copy_ of batched values into an unbatched
# tensor is an error (tested in test_vmap_indexing.py).
copy_p = defop(
    "copy",
    _copy,
    nin=2,
    vjp=(lambda g: zeros_like(g), lambda g: g),
    jvp=LINEAR,
    api="ops.indexing.copy",
    oracle="Tensor.copy_",
    node_name="torch::autograd::CopyBackwards",
    grad_args=(1,),
    test={"no_grad_test": True},
    batch_rule=_copy_rule,
    samples=lambda make: [S((make((2, 3)), make((3,)))), S((make(()), make(())))],
    layout=preserve,
    inplace_policy=InplacePolicy(
        batched=BatchedWrite.ARITHMETIC,
        untracked_integer_target=True,
        self_source_noop=True,
        zero_text="ZeroTensors are immutable. Please materialize the tensor using `.clone()`, "
        "if you want a mutable zero tensor.",
    ),
    conversion=True,  # a copy_ into an integer tensor leaves autograd
    float8=True,  # (PyTorch copies float8)
    complex32=True,
    meta=by_kernel,
)
copy = copy_p.fn
_copy_into = inplace_method(copy_p)


def copy_(self: Tensor, src, *args, **kwargs) -> Tensor:
    """Copy ``src``'s values into self; ``src`` may live on another device, as in PyTorch."""
    if _cuda_used[0] and isinstance(src, Tensor) and src.device != self.device:
        src = src.to(self.device)
    return _copy_into(self, src, *args, **kwargs)


copy_.inplace_of = copy_p
tensor_method(copy_, "copy_")


def _fill(xp, input, value):
    if hasattr(value, "ndim") and value.ndim:
        raise RuntimeError(
            f"fill_ only supports 0-dimension value tensor but got tensor with {value.ndim} dimensions."
        )
    return xp.full(input.shape, value, dtype=input.dtype)


def _fill_rule(vmap, args, bdims, attrs):
    """A batched value fills each batch element with its own value: a broadcast copy, as
    PyTorch's rule (which checks no rank: a value of each element's shape is copied)."""
    (x, value), (xb, vb) = args, bdims
    if vb is None:
        return fill(front(x, xb), value), 0
    rank = max(lrank(x, xb), lrank(value, vb))  # (both padded to one rank, as PyTorch's)
    out = pad_to(materialize(vmap, x, xb), rank)
    return copy(out, pad_to(front(value, vb), rank)), 0


def _fill_errors(make):
    yield ErrorInput(S((make(3), make(1))), RuntimeError, "fill_ only supports 0-dimension value")


def _fill_node_name(value, inplace) -> str:
    if inplace == "zero_":
        return "ZeroBackward0"
    return f"FillBackward{2 * bool(inplace) + (value is not None)}"  # (value: a tensor's shape)


fill_p = defop(
    "fill",
    _fill,
    nin=2,
    node_name=_fill_node_name,
    vjp=(lambda g: zeros_like(g), lambda g: g.sum()),
    jvp=LINEAR,
    batch_rule=_fill_rule,
    samples=lambda make: [S((make((2, 3)), 1.5)), S((make((2, 3)), make(()))), S((make(()), 2))],
    error_samples=_fill_errors,
    inplace=True,
    layout=preserve,
    inplace_policy=InplacePolicy(
        shared_ok=True,
        shared_needs_number=True,
        operand_overlap_ok=True,
        batched=BatchedWrite.PLAIN,
    ),
    float8=True,  # (PyTorch copies float8)
    checked_scalars=("value",),
    complex32_unchecked=True,
    test=COMPLEX_TOO,
    complex32=True,
    meta=by_kernel,
)
fill = fill_p.fn


def zero_(self: Tensor) -> Tensor:
    """Fill with zeros in place."""
    return run_inplace(fill_p, self, (0,), {}, "zero_")


def fill_(self: Tensor, value) -> Tensor:
    """Fill with ``value`` in place."""
    return run_inplace(fill_p, self, (value,), {})


tensor_methods(
    {
        "zero_": zero_,
    }
)
