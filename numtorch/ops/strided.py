"""Strided views: Tensor.unfold (sliding windows), as_strided and as_strided_, and the
storage-level resize_ / resize_as_. (The other in-place view methods, t_, transpose_,
squeeze_, ..., are declared with their ops in ``views``, made by ``inplace_view``.)"""

from __future__ import annotations

import numpy as np

from .._core import dtype as dt
from .._core.device import xp_of
from .._core.dispatch import dispatch
from .._core.inplace import inplace_view
from .._core.interpreter import Kind
from .._core.methods import tensor_method, tensor_methods
from .._core.op import LINEAR, ErrorInput, composite, defop
from .._core.tensor import Tensor, _wrap_view_of, bump_version, check_writable, wrap_dim
from .._opdb.samples import S
from ._add_at import add_at
from ._batching import elementwise, front, pdim, rule_generator
from ._families import COMPLEX_TOO, view_op


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
    return dt.as_strided(xp, input, shape, strides)


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
    return unfold_backward(g, **new), 0


def _unfold_backward_samples(make):
    yield S((make((3, 2, 2)), (4, 2), 0, 2, 1))
    yield S((make((2, 2, 3)), (2, 5), 1, 3, 2))
    yield S((make((1,)), (), 0, 1, 1))


unfold_backward_p = defop(
    "unfold_backward",
    _unfold_backward,
    nin=1,
    vjp=lambda g, dim, size, step: tensor_unfold(g, dim, size, step),
    jvp=LINEAR,
    api="ops.strided.unfold_backward",
    test={"no_oracle": True},
    batch_rule=_unfold_backward_rule,
    samples=_unfold_backward_samples,
)
unfold_backward = unfold_backward_p.fn


def _unfold_vjp(g, input_shape, dimension, size, step):
    d, _ = _unfold_geometry(tuple(input_shape), dimension, size, step)
    return unfold_backward(g, tuple(input_shape), d, size, step)


def _unfold_rule(vmap, args, bdims, attrs):
    x = front(args[0], bdims[0])
    rank = x.dim() - 1
    _unfold_geometry(tuple(x.shape[1:]), **attrs)
    if rank == 0:
        return x.unsqueeze(1).narrow(1, 0, attrs["size"]), 0
    return tensor_unfold(x, pdim(attrs["dimension"], rank), attrs["size"], attrs["step"]), 0


def _unfold_samples(make):
    yield S((make((6,)), 0, 2, 1))
    yield S((make((2, 5)), 1, 2, 2), name="step > 1")
    yield S((make((2, 5)), -1, 2, 3), name="step > size")
    yield S((make((4, 3)).T, 0, 3, 1), name="non-contiguous")
    yield S((make((3, 2)), 0, 0, 1), name="size 0")
    yield S((make(()), 0, 1, 1), name="0-d")
    yield S((make((0, 3)), 1, 2, 1), name="empty")


def _unfold_errors(make):
    yield ErrorInput(
        S((make((2, 3)), 1, 4, 1)),
        RuntimeError,
        "maximum size for tensor at dimension 1 is 3 but size is 4",
    )
    yield ErrorInput(S((make((2, 3)), 1, -1, 1)), RuntimeError, "size is -1 but must be >= 0")
    yield ErrorInput(S((make((2, 3)), 0, 1, 0)), RuntimeError, "step is 0 but must be > 0")
    yield ErrorInput(S((make((2, 3)), 2, 1, 1)), IndexError, r"\[-2, 1\], but got 2")
    yield ErrorInput(
        S((make(()), 0, 2, 1)),
        RuntimeError,
        "maximum size for tensor at dimension 0 is 1 but size is 2",
    )


tensor_unfold_p = view_op(
    "tensor_unfold",
    _unfold,
    _unfold_vjp,
    methods=("unfold",),
    api="Tensor.unfold",
    overlapping_view=True,
    node_name="UnfoldBackward0",
    batch_rule=_unfold_rule,
    samples=_unfold_samples,
    error_samples=_unfold_errors,
)
tensor_unfold = tensor_unfold_p.fn


# ------------------------------------------------------------------ real and imaginary parts
# Views of a complex tensor's parts (NumPy's real/imag are views). The gradient of a complex
# input is d/dRe + i d/dIm: g for the real part, g * 1j for the imaginary part.
view_real_p, view_imag_p = (
    view_op(
        f"view_{part}",
        lambda xp, input, part=part: dt.part(xp, input, part == "imag"),
        vjp,
        methods=False,
        node_name=f"{part.title()}Backward0",
        batch_rule=elementwise(),
        samples=None,
    )
    for part, vjp in (("real", lambda g: g), ("imag", lambda g: g * 1j))
)
view_real = view_real_p.fn
view_imag = view_imag_p.fn


def _part_samples(make):
    yield S((make((2, 3), dtype=np.complex64),))
    yield S((make((3,), dtype=np.complex128).reshape(3, 1).T,), name="non-contiguous")


def _real_samples(make):
    yield S((make((2, 3)),))
    if make.dtype.kind == "c":  # (the parts' samples are complex64 and complex128)
        yield S((make((3,)).reshape(3, 1).T,), name="non-contiguous")
    else:
        yield from _part_samples(make)


@composite(samples=_real_samples, test=COMPLEX_TOO)
def real(input):
    """The real part: a view of a complex tensor's real parts; a real tensor is its own."""
    return view_real(input) if input.is_complex() else input


@composite(
    samples=_part_samples,
    error_samples=lambda make: [ErrorInput(S((make((2,)),)), RuntimeError, _NOT_COMPLEX)],
)
def imag(input):
    """The imaginary part of a complex tensor, as a view of it."""
    if not input.is_complex():
        raise RuntimeError(_NOT_COMPLEX)
    return view_imag(input)


_NOT_COMPLEX = "imag is not implemented for tensors with non-complex dtypes."


def _part_property(fn):
    def set_part(self, value) -> None:
        fn(self).copy_(value)

    return property(fn, set_part)


tensor_methods({"real": _part_property(real), "imag": _part_property(imag)})


# ------------------------------------------------------------------ as_strided
# A tensor's storage is the memory of its root base (itself when it is no view), read as a
# vector: its elements in memory order. as_strided is a strided window on that vector
# (``strided_gather``, a view), taken on ``root.reshape(-1)``; only a C-contiguous root
# is such a vector as a view, so other roots are refused. Under vmap, batch element i's
# window starts i batch strides further on (functorch's rule); inside grad/jvp transforms a
# tensor is its own storage.
def _positions(xp, size, stride, offset):
    """The storage position of every element of the window: offset + index . stride."""
    pos = xp.full(tuple(size), offset, dtype=xp.int64)
    for k, (n, s) in enumerate(zip(size, stride)):  # one broadcast add per dim
        pos += (xp.arange(n) * s).reshape((n,) + (1,) * (len(size) - k - 1))
    return pos


def _check_window(size, stride, offset: int, n: int, itemsize: int) -> None:
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in size):
        raise RuntimeError(
            f"Storage size calculation overflowed with sizes={list(size)} and strides={list(stride)}"
        )
    if any(s < 0 for s in stride):
        raise RuntimeError(
            f"as_strided: Negative strides are not supported at the moment, got strides: {list(stride)}"
        )
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    need = 0 if 0 in size else offset + 1 + sum((a - 1) * b for a, b in zip(size, stride))
    if need > n:
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, and "
            f"itemsize {itemsize} requiring a storage size of {need * itemsize} are out of bounds "
            f"for storage of size {n * itemsize}"
        )


def _strided_gather(xp, input, size, stride, offset):
    """The window on the vectors along input's last dim (leading dims: vmap's batch)."""
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    _check_window(size, stride, int(offset), input.shape[-1], input.itemsize)
    step = input.strides[-1]
    base = input[..., int(offset) :] if input.shape[-1] else input
    return dt.as_strided(
        xp, base, (*input.shape[:-1], *size), (*input.strides[:-1], *(s * step for s in stride))
    )


def _strided_scatter(xp, grad, n, size, stride, offset):
    """The adjoint of strided_gather: each window element's value added at its position."""
    size = tuple(size)
    lead = grad.shape[: grad.ndim - len(size)]
    out = xp.zeros((*lead, n), dtype=grad.dtype)
    pos = _positions(xp, size, stride, offset).reshape(1, -1)
    rows = xp.arange(out.size // n if n else 0).reshape(-1, 1) * n
    add_at(xp, out.reshape(-1), (rows + pos).reshape(-1), grad.reshape(-1))
    return out


def _batch_first(op):
    def rule(vmap, args, bdims, attrs):
        return dispatch(op, (front(args[0], bdims[0]),), attrs), 0

    return rule


def _gather_samples(make):
    yield S((make((8,)), (3, 3), (1, 1), 0), name="overlapping")
    yield S((make((8,)), (2, 2), (1, 3), 1))
    yield S((make((4, 2)).T[0], (2,), (2,), 1), name="strided storage")
    yield S((make((3,)), (0, 2), (1, 1), 5), name="empty")
    yield S((make((3,)), (), (), 2), name="0-d")


def _strided_gather_vjp(g, input_shape, size, stride, offset):
    if 0 in tuple(size):  # an empty window's gradient is zeros off the graph, as PyTorch's
        g = g.detach()
    return strided_scatter(g, input_shape[-1], size, stride, offset)


strided_gather_p = view_op(
    "strided_gather",
    _strided_gather,
    _strided_gather_vjp,
    methods=False,
    api="ops.strided.strided_gather",
    node_name="AsStridedBackward0",
    test={"no_oracle": True},
    batch_rule=rule_generator(_batch_first)(),
    samples=_gather_samples,
    overlapping_view=True,
)
strided_gather = strided_gather_p.fn


def _strided_scatter_samples(make):
    yield S((make((3, 3)), 8, (3, 3), (1, 1), 0))
    yield S((make((2, 2)), 6, (2, 2), (1, 3), 1))
    yield S((make(()), 3, (), (), 2))


strided_scatter_p = defop(
    "strided_scatter",
    _strided_scatter,
    nin=1,
    vjp=lambda g, size, stride, offset: strided_gather(g, size, stride, offset),
    jvp=LINEAR,
    api="ops.strided.strided_scatter",
    test={"no_oracle": True},
    batch_rule=rule_generator(_batch_first)(),
    samples=_strided_scatter_samples,
)
strided_scatter = strided_scatter_p.fn


def _address(a) -> int:
    return a.__array_interface__["data"][0] if isinstance(a, np.ndarray) else a.data.ptr


def _storage(input: Tensor) -> tuple[Tensor, int]:
    """input's storage as a vector (a view of its root base) and input's offset in it."""
    if input._level:
        return input.reshape(-1), 0
    root = input._view[0] if input._view is not None else input
    if root._view is not None:  # a root laid out anew in place (t_): its old layout's holder
        root = root._view[0]
    data = root._data
    owner = _owner(data) if data.base is not None and not root._rg else data
    if owner is not data and owner.flags.c_contiguous:
        # memory shared outside the view chain (detach, .data): the storage is its owner's,
        # as PyTorch's detached tensor keeps its source's storage
        start = _address(owner) if owner.size else 0
        here = _address(input._data) if input._data.size else start
        vector = _wrap_view_of(root, owner.reshape(-1))
        return vector, (here - start) // max(data.itemsize, 1)
    if not data.flags.c_contiguous:
        raise NotImplementedError(
            "numtorch: as_strided of a tensor whose base is not contiguous is not supported "
            "(call .contiguous() first)"
        )
    start = _address(data) if data.size else 0
    here = _address(input._data) if input._data.size else start
    return root.reshape(-1), (here - start) // max(data.itemsize, 1)


def _as_strided_samples(make):
    # No explicit storage_offset here: under vmap it is functorch's (the same offset for
    # every batch element, moved on by the batch stride), which a loop over the batch does
    # not give; tests/test_vmap_views.py compares it with torch.func.vmap.
    yield S((make((2, 4)), (3, 3), (1, 1)), name="overlapping")
    yield S((make((2, 4)), (2, 2), (1, 3)))
    yield S((make((4,)), (2,), (2,)))
    yield S((make((3,)), (0, 2), (1, 1)), name="empty")
    yield S((make((3,)), (), ()), name="0-d")


def _as_strided_errors(make):
    yield ErrorInput(
        S((make((8,)), (3, 3), (1, 1), 5)), RuntimeError, "requiring a storage size of"
    )
    yield ErrorInput(
        S((make((8,)), (3, 3), (1, 1), -1)), RuntimeError, "Tensor: invalid storage offset -1"
    )
    yield ErrorInput(
        S((make((8,)), (3, 3), (-1, 1))),
        RuntimeError,
        r"Negative strides are not supported at the moment, got strides: \[-1, 1\]",
    )
    yield ErrorInput(
        S((make((8,)), (3,), (1, 1))), RuntimeError, "mismatch in length of strides and shape"
    )


@composite(
    samples=_as_strided_samples,
    methods=True,
    error_samples=_as_strided_errors,
    test=COMPLEX_TOO,
)
def as_strided(input: Tensor, size, stride, storage_offset: int | None = None) -> Tensor:
    """A view of ``input``'s storage with the given sizes and strides (in elements),
    starting at ``storage_offset`` (default: input's own)."""
    if input._level and input._interp.kind is Kind.VMAP:
        # functorch's rule: batch element i's window starts batch stride * i further on
        vmap, inner, bd = input._interp, input._inner, input._bdim
        size, stride = (vmap.size, *size), (inner.stride(bd), *stride)
        return vmap.wrap(as_strided(inner, size, stride, storage_offset), 0)
    vector, offset = _storage(input)
    if storage_offset is not None:
        offset = int(storage_offset)
    return strided_gather(vector, tuple(size), tuple(stride), offset)


tensor_method(inplace_view(as_strided, "as_strided_"))


# ------------------------------------------------------------------ resize_
def array_offset(a) -> int:
    """Where array a's first element sits in the memory its owner holds, in elements."""
    if not a.size or not isinstance(a, np.ndarray):
        return 0
    owner = _owner(a)
    return (_address(a) - _address(owner)) // max(a.itemsize, 1) if owner.size else 0


def _owner(a):
    """The array that owns a's memory: NumPy's chain of bases (through as_strided's
    holders of the array interface) to its first array."""
    while True:
        b = a.base
        if b is not None and not isinstance(b, type(a)):
            b = getattr(b, "base", None)  # as_strided's DummyArray holds the array it views
        if not isinstance(b, type(a)):
            return a
        a = b


def resize_(self: Tensor, *size, memory_format=None) -> Tensor:
    """Tensor.resize_: self gets contiguous strides for ``size`` over its storage from its
    own first element on; storage too small grows into a new buffer that keeps the old
    elements in memory order (the rest uninitialized, as in PyTorch)."""
    check_writable(self, zero_text=None)  # (a ZeroTensor is resized)
    head = "resize_(): argument 'size' (position 1) must be tuple of ints,"
    if len(size) == 1 and not isinstance(size[0], int):
        if not isinstance(size[0], (list, tuple)):
            raise TypeError(f"{head} not {type(size[0]).__name__}")
        size = tuple(size[0])
    for i, s in enumerate(size):
        if not isinstance(s, int) or isinstance(s, bool):
            what = type(s).__name__
            if i == 0:  # (PyTorch's parser words a bad first element and a later one apart)
                raise TypeError(f"{head} but found element of type {what} at pos 0")
            raise TypeError(
                f"resize_(): argument 'size' failed to unpack the object at pos {i + 1} with "
                f'error "type must be tuple of ints,but got {what}"'
            )
    if self._rg:
        raise RuntimeError("cannot resize variables that require grad")
    if self._level:
        return _resize_wrapper(self, size)
    if any(s < 0 for s in size):
        raise RuntimeError("numel: integer multiplication overflow")
    size = tuple(size)
    data = self._data
    if size == data.shape:
        return self
    n, item = 1, data.itemsize
    for s in size:
        n *= s
    owner = _owner(data)
    start = _address(owner) if owner.size else 0
    here = _address(data) if data.size else start
    held = max((start + owner.nbytes - here) // item, 0) if owner.size else 0
    xp = xp_of(data)
    if n <= held:
        strides = [item] * len(size)
        for k in range(len(size) - 2, -1, -1):
            strides[k] = strides[k + 1] * max(size[k + 1], 1)
        flat = dt.as_strided(xp, data, (held,), (item,))
        self._data = dt.as_strided(xp, flat, size, tuple(strides))
    else:
        new = xp.empty(n, data.dtype)
        if held:
            new[:held] = dt.as_strided(xp, data, (held,), (item,))
        self._data = new.reshape(size)
    bump_version(self)
    return self


def _resize_wrapper(self: Tensor, size) -> Tensor:
    """resize_ of a transform's wrapper: its inner value (under vmap, with the batch dim in
    front, as PyTorch's fallback resizes the physical tensor)."""
    if getattr(self, "_tangent", None) is not None:
        raise RuntimeError("cannot resize variables that has a forward grad")
    inner, interp = self._inner, self._interp
    if interp.kind is Kind.VMAP:
        if self._bdim:
            inner = inner.movedim(self._bdim, 0)
        resize_(inner, (interp.size, *size))
        self._inner, self._bdim = inner, 0
    else:
        resize_(inner, size)
    return self


def resize_as_(self: Tensor, the_template: Tensor, *, memory_format=None) -> Tensor:
    """Tensor.resize_as_: resize_ to the template's shape."""
    if not isinstance(the_template, Tensor):
        raise TypeError(
            "resize_as_(): argument 'the_template' (position 1) must be Tensor, not "
            f"{type(the_template).__name__}"
        )
    return resize_(self, tuple(the_template.shape))


tensor_methods({"resize_": resize_, "resize_as_": resize_as_})
