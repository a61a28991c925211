"""Strided views: Tensor.unfold (sliding windows), as_strided, and the in-place view
methods (unsqueeze_, squeeze_, t_, transpose_, swapdims_/swapaxes_)."""

from __future__ import annotations

import numpy as np

from .._core.op import LINEAR, ErrorInput, composite, defop, tensor_methods
from .._core.tensor import wrap_dim
from ..testing.samples import S
from ._batching import elementwise, front, pdim
from ._families import view_op


# ------------------------------------------------------------------ unfold
def _unfold_geometry(shape, dimension: int, size: int, step: int) -> tuple[int, int]:
    """The wrapped dim and the number of windows (PyTorch's checks, in its order); a 0-d
    tensor counts as one element along dim 0."""
    d = wrap_dim(dimension, len(shape))
    n = shape[d] if shape else 1
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    return d, (n - size) // step + 1


def _unfold(xp, input, dimension, size, step):
    d, count = _unfold_geometry(input.shape, dimension, size, step)
    if input.ndim == 0:
        return input.reshape(1)[:size]
    st = input.strides
    shape = (*input.shape[:d], count, *input.shape[d + 1 :], size)
    strides = (*st[:d], st[d] * step, *st[d + 1 :], st[d])
    return xp.lib.stride_tricks.as_strided(input, shape, strides)


def _unfold_backward(xp, grad, shape, dim, size, step):
    """The sum of each window's gradient into the elements it covers: one strided add per
    position in the window."""
    out = xp.zeros(tuple(shape), dtype=grad.dtype)
    flat = out.reshape(1) if out.ndim == 0 else out
    count = grad.shape[dim] if out.ndim else 1
    lead = (slice(None),) * dim
    for k in range(size):
        flat[(*lead, slice(k, k + step * (count - 1) + 1, step))] += grad[..., k]
    return out


def _unfold_backward_rule(vmap, args, bdims, attrs):
    g = front(args[0], bdims[0])
    shape = tuple(attrs["shape"])
    if not shape:  # a 0-d input: its one element is in every window
        return g.sum(-1), 0
    new = dict(attrs, shape=(vmap.size, *shape), dim=pdim(attrs["dim"], len(shape)))
    return unfold_backward.fn(g, **new), 0


unfold_backward = defop(
    "unfold_backward", _unfold_backward, nin=1,
    vjp=lambda g, dim, size, step: tensor_unfold.fn(g, dim, size, step), jvp=LINEAR,
    api="ops.strided.unfold_backward.fn", test={"no_oracle": True}, batch_rule=_unfold_backward_rule,
    samples=lambda make: [S((make((3, 2, 2)), (4, 2), 0, 2, 1)), S((make((2, 2, 3)), (2, 5), 1, 3, 2)),
                          S((make((1,)), (), 0, 1, 1))],
)  # fmt: skip


def _unfold_vjp(g, input_shape, dimension, size, step):
    d, _ = _unfold_geometry(tuple(input_shape), dimension, size, step)
    return unfold_backward.fn(g, tuple(input_shape), d, size, step)


def _unfold_rule(vmap, args, bdims, attrs):
    x = front(args[0], bdims[0])
    rank = x.dim() - 1
    _unfold_geometry(tuple(x.shape[1:]), **attrs)
    if rank == 0:
        return x.unsqueeze(1).narrow(1, 0, attrs["size"]), 0
    return tensor_unfold.fn(x, pdim(attrs["dimension"], rank), attrs["size"], attrs["step"]), 0


def _unfold_samples(make):
    yield S((make((6,)), 0, 2, 1))
    yield S((make((2, 5)), 1, 2, 2), name="step > 1")
    yield S((make((2, 5)), -1, 2, 3), name="step > size")
    yield S((make((4, 3)).T, 0, 3, 1), name="non-contiguous")
    yield S((make((3, 2)), 0, 0, 1), name="size 0")
    yield S((make(()), 0, 1, 1), name="0-d")
    yield S((make((0, 3)), 1, 2, 1), name="empty")


tensor_unfold = view_op(
    "tensor_unfold", _unfold, _unfold_vjp, methods=("unfold",), api="Tensor.unfold",
    node_name="UnfoldBackward0", batch_rule=_unfold_rule, samples=_unfold_samples,
    error_samples=lambda make: [
        ErrorInput(S((make((2, 3)), 1, 4, 1)), RuntimeError, "maximum size for tensor at dimension 1 is 3 but size is 4"),
        ErrorInput(S((make((2, 3)), 1, -1, 1)), RuntimeError, "size is -1 but must be >= 0"),
        ErrorInput(S((make((2, 3)), 0, 1, 0)), RuntimeError, "step is 0 but must be > 0"),
        ErrorInput(S((make((2, 3)), 2, 1, 1)), IndexError, r"\[-2, 1\], but got 2"),
        ErrorInput(S((make(()), 0, 2, 1)), RuntimeError, "maximum size for tensor at dimension 0 is 1 but size is 2"),
    ],
)  # fmt: skip


# ------------------------------------------------------------------ real and imaginary parts
# Views of a complex tensor's parts (NumPy's real/imag are views). Complex tensors do not
# require grad in numtorch, so the views have no vjp.
view_real, view_imag = (
    view_op(
        f"view_{part}",
        lambda xp, input, part=part: getattr(xp, part)(input),
        None,
        methods=False,
        node_name=f"{part.title()}Backward0",
        batch_rule=elementwise(),
        samples=None,
    )  # fmt: skip
    for part in ("real", "imag")
)


def _part_samples(make):
    yield S((make((2, 3), dtype=np.complex64),))
    yield S((make((3,), dtype=np.complex128).reshape(3, 1).T,), name="non-contiguous")


@composite(samples=lambda make: [S((make((2, 3)),)), *_part_samples(make)])
def real(input):
    """The real part: a view of a complex tensor's real parts; a real tensor is its own."""
    return view_real.fn(input) if input.is_complex() else input


@composite(
    samples=_part_samples,
    error_samples=lambda make: [
        ErrorInput(S((make((2,)),)), RuntimeError, _NOT_COMPLEX),
    ],
)  # fmt: skip
def imag(input):
    """The imaginary part of a complex tensor, as a view of it."""
    if not input.is_complex():
        raise RuntimeError(_NOT_COMPLEX)
    return view_imag.fn(input)


_NOT_COMPLEX = "imag is not implemented for tensors with non-complex dtypes."


def _part_property(fn):
    def set_part(self, value) -> None:
        fn(self).copy_(value)

    return property(fn, set_part)


tensor_methods({"real": _part_property(real), "imag": _part_property(imag)})
