"""The view family: ops whose result shares its input's memory (reshape, permute, expand,
narrow, select, diagonal, ...) and the functions built on them (T, mT, swapaxes, ...);
split, chunk and unbind are in ``splits``. The ops that replay a chain of views (``view_scatter``, PyTorch's CopySlices, and
``view_replay``) are in ``view_chains``, re-exported here.

Each view op is one ``view_op`` call: a kernel, the vjp, the batch rule and samples.
"""

from __future__ import annotations

import warnings

import numpy as np

from .._core import dtype as dt
from .._core.device import device_of
from .._core.dtype import from_np
from .._core.inplace import inplace_view
from .._core.meta import by_kernel
from .._core.methods import tensor_method, tensor_methods
from .._core.op import LINEAR, ErrorInput, composite, defop
from .._core.pyargs import checked_sizes
from .._core.tensor import Size, Tensor, check_unique_dims, wrap_dim, wrap_dims
from .._opdb.samples import S
from ._batching import (
    along_dims,
    decompose,
    front,
    min_rank,
    pdim,
    rule_generator,
)
from ._families import COMPLEX_TOO, view_op
from ._type_string import type_string


# ------------------------------------------------------------------ shared rules and helpers
def _with_batch_size(op, attr):
    """reshape/view: the batch first, and its size prepended to the requested shape."""

    def rule(vmap, args, bdims, attrs):
        new = dict(attrs)
        new[attr] = (vmap.size, *attrs[attr])
        return op.fn(front(args[0], bdims[0]), **new), 0

    return rule


with_batch_size = rule_generator(_with_batch_size)


def _grad_of_shape(op, dims=("dim",)):
    """*_backward ops (a gradient and the logical ``shape`` of the input it came from):
    the batch size prepended to ``shape`` and the ``dims`` shifted past it."""

    def rule(vmap, args, bdims, attrs):
        shape = tuple(attrs["shape"])
        new = dict(attrs, shape=(vmap.size, *shape))
        for n in dims:
            new[n] = pdim(attrs[n], len(shape))
        return op.fn(front(args[0], bdims[0]), **new), 0

    return rule


grad_of_shape = rule_generator(_grad_of_shape)


def _bad_dim(make, fn_args=lambda input: (input, 2)):
    return ErrorInput(
        S(fn_args(make((2, 3)))),
        IndexError,
        r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)",
    )


def _unview_shape(g, input_shape):
    """The vjp of the views that only regroup elements (reshape, squeeze, flatten, ...)."""
    return g.reshape(input_shape)


# ------------------------------------------------------------------ reshaping
def infer_size(size, numel: int) -> tuple:
    """``size`` with its -1 (at most one) inferred so that it holds ``numel`` elements."""
    size = tuple(int(s) for s in size)
    known, infer = 1, None
    for i, s in enumerate(size):
        if s == -1:
            if infer is not None:
                raise RuntimeError("only one dimension can be inferred")
            infer = i
        elif s < 0:
            raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape {list(size)}")
        else:
            known *= s
    if infer is not None:
        if known == 0:
            if numel == 0:
                raise RuntimeError(
                    f"cannot reshape tensor of 0 elements into shape {list(size)} because the "
                    "unspecified dimension size -1 can be any value and is ambiguous"
                )
        elif numel % known == 0:
            return (*size[:infer], numel // known, *size[infer + 1 :])
    elif known == numel:
        return size
    raise RuntimeError(f"shape '{list(size)}' is invalid for input of size {numel}")


def _alias_name(input_contiguous) -> str:
    """PyTorch's reshape of a viewable input: a view, or an alias with the input's strides."""
    return "ViewBackward0" if input_contiguous else "ReshapeAliasBackward0"


def _reshape(xp, input, shape):
    return input.reshape(infer_size(shape, input.size))


def _reshape_samples(make):
    yield S((make((2, 3)), (3, 2)))
    yield S((make((2, 3)), (-1,)))
    yield S((make(()), (1, 1)))
    yield S((make((0, 3)), (3, 0)))
    yield S((make((2, 3, 4)), (4, -1)))


def _reshape_errors(make):
    yield ErrorInput(
        S((make((2, 3)), (4,))), RuntimeError, r"shape '\[4\]' is invalid for input of size 6"
    )
    yield ErrorInput(
        S((make((2, 3)), (-1, -1))), RuntimeError, "only one dimension can be inferred"
    )


reshape_p = view_op(
    "reshape",
    _reshape,
    _unview_shape,
    sizes=True,
    batch_rule=with_batch_size("shape"),
    node_name=_alias_name,
    samples=_reshape_samples,
    error_samples=_reshape_errors,
)
reshape = reshape_p.fn


def _view(xp, input, size):
    size = infer_size(size, input.size)
    try:
        try:
            return xp.reshape(input, size, copy=False)
        except TypeError:  # backends without reshape(copy=): a shape change in place fails instead
            out = input.view()
            out.shape = size
            return out
    except (ValueError, AttributeError):
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
        ) from None


# Tensor.view is _view_method below (it also names Tensor.view(dtype)).
def _view_samples(make):
    yield S((make((2, 3)), (3, 2)))
    yield S((make((2, 3, 4)), (-1, 4)))
    yield S((make(()), (1,)))


view_p = view_op(
    "view",
    _view,
    _unview_shape,
    methods=False,
    api="Tensor.view",
    batch_rule=with_batch_size("size"),
    samples=_view_samples,
)
view = view_p.fn


def _view_method(self, *args):
    """Tensor.view(*shape): a view with a new shape (Tensor.view(dtype) is not supported)."""
    size = args[0] if len(args) == 1 and type(args[0]) is not int else args
    if isinstance(size, (tuple, list)):
        for s in size:
            if type(s) is not int:
                size = checked_sizes("Tensor.view", args)
                break
    elif isinstance(size, dt.dtype):
        raise NotImplementedError("numtorch: Tensor.view(dtype) is not supported")
    else:
        size = checked_sizes("Tensor.view", args)
    return view(self, tuple(size))


_view_method._parsed = True


def _view_as(self, other):
    """self.view(other.shape)."""
    return view(self, tuple(other.shape))


def _flatten(xp, input, start_dim=0, end_dim=-1):
    if input.ndim == 0:
        wrap_dim(start_dim, 0), wrap_dim(end_dim, 0)
        return input.reshape(1)
    s, e = wrap_dim(start_dim, input.ndim), wrap_dim(end_dim, input.ndim)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    n = 1
    for k in input.shape[s : e + 1]:
        n *= k
    return input.reshape(input.shape[:s] + (n,) + input.shape[e + 1 :])


def _flatten_rule(vmap, args, bdims, attrs):
    x = front(args[0], bdims[0])
    rank = x.dim() - 1
    s, e = attrs["start_dim"], attrs["end_dim"]
    if rank == 0:
        wrap_dim(s, 0), wrap_dim(e, 0)
        return x.unsqueeze(1), 0
    return flatten(x, pdim(s, rank), pdim(e, rank)), 0


def _flatten_samples(make):
    yield S((make((2, 3, 4)),))
    yield S((make((2, 3, 4)), 1))
    yield S((make((2, 3, 4)), 0, -2))
    yield S((make(()),))
    yield S((make((0, 3)),))
    yield S((make((2, 3, 4)),), {"start_dim": -1})


def _flatten_errors(make):
    yield ErrorInput(S((make((2, 3)), 1, 0)), RuntimeError, "start_dim cannot come after end_dim")
    yield ErrorInput(S((make((2, 3)), 2)), IndexError, r"\[-2, 1\], but got 2")


flatten_p = view_op(
    "flatten",
    _flatten,
    _unview_shape,
    batch_rule=_flatten_rule,
    node_name=_alias_name,
    methods=False,
    samples=_flatten_samples,
    error_samples=_flatten_errors,
)
flatten = flatten_p.fn


def flatten_or_self(input, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """torch.flatten: ``input`` itself where start_dim and end_dim are one dim (as PyTorch,
    so an in-place write into it is one into input), else the flatten op's view."""
    n = input.dim()
    if n and wrap_dim(start_dim, n) == wrap_dim(end_dim, n):
        return input
    return flatten(input, start_dim, end_dim)


def _unflatten(xp, input, dim, sizes):
    if input.ndim == 0:  # PyTorch's text goes on with its C++ stack trace
        raise RuntimeError(
            "unflatten got an unexpected error:\nDimension specified as 0 but tensor has no "
            "dimensions"
        )
    d = wrap_dim(dim, input.ndim)
    sizes = tuple(int(s) for s in sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    try:
        new = infer_size(sizes, input.shape[d])
    except RuntimeError:
        if sizes.count(-1) > 1:
            raise
        raise RuntimeError(
            f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {d} "
            f"({input.shape[d]}) in the input tensor"
        ) from None
    return input.reshape(input.shape[:d] + new + input.shape[d + 1 :])


def _unflatten_samples(make):
    yield S((make((2, 6)), 1, (2, 3)))
    yield S((make((6,)), 0, (3, -1)))
    yield S((make((2, 4, 3)), -2, (2, 1, 2)))


def _unflatten_errors(make):
    yield ErrorInput(
        S((make((2, 3)), 1, (2, 2))),
        RuntimeError,
        r"Provided sizes \[2, 2\] don't multiply up to the size of dim 1 \(3\)",
    )


unflatten_p = view_op(
    "unflatten",
    _unflatten,
    _unview_shape,
    batch_rule=along_dims(scalar_trick=False),
    node_name="ViewBackward0",
    samples=_unflatten_samples,
    error_samples=_unflatten_errors,
)


def _ravel(xp, input):
    return xp.ascontiguousarray(input).reshape(-1)  # PyTorch: contiguous().view(-1)


ravel_p = view_op(
    "ravel",
    _ravel,
    _unview_shape,
    batch_rule=decompose(lambda input: reshape(input, (-1,))),
    node_name="ViewBackward0",  # PyTorch's ravel is contiguous().view(-1)
    samples=lambda make: [S((make((2, 3)),)), S((make(()),)), S((make((0, 2)),))],
)


# ------------------------------------------------------------------ dims in and out
def _unsqueeze(xp, input, dim):
    # PyTorch's geometry: the new dim steps over the dim it lands before (one element at
    # the end); every other stride stays, a size-one dim's included (NumPy's expand_dims
    # may change those, and later layouts follow them)
    d = wrap_dim(dim, input.ndim + 1)
    shape, st = input.shape, input.strides
    step = shape[d] * st[d] if d < input.ndim else input.itemsize
    return _strided(xp, input, shape[:d] + (1,) + shape[d:], st[:d] + (step,) + st[d:])


def _unsqueeze_samples(make):
    yield S((make((2, 3)), 0))
    yield S((make((2, 3)), -1))
    yield S((make(()), 0))
    yield S((make((0, 3)), 1))


def _unsqueeze_errors(make):
    yield ErrorInput(S((make((2, 3)), 3)), IndexError, r"range of \[-3, 2\], but got 3")


unsqueeze_p = view_op(
    "unsqueeze",
    _unsqueeze,
    lambda g, dim: g.squeeze(dim),
    batch_rule=along_dims(extra={"dim": 1}, scalar_trick=False),
    samples=_unsqueeze_samples,
    error_samples=_unsqueeze_errors,
)
unsqueeze = unsqueeze_p.fn
tensor_method(inplace_view(unsqueeze, "unsqueeze_"))


def _squeeze(xp, input, dim=None):
    if dim is None:
        axes = tuple(i for i, s in enumerate(input.shape) if s == 1)
    else:
        dims = wrap_dims(dim, input.ndim)
        check_unique_dims(dims)
        axes = tuple(sorted(a for a in dims if input.ndim and input.shape[a] == 1))
    return xp.squeeze(input, axes) if axes else input[...]


def _squeeze_rule(vmap, args, bdims, attrs):
    # The logical size-1 dims only: the batch dim stays even when the batch size is 1.
    x = front(args[0], bdims[0])
    shape = x.shape[1:]
    dim = attrs.get("dim")
    if dim is None:
        dims = [i for i, s in enumerate(shape) if s == 1]
    else:
        dims = (dim,) if isinstance(dim, int) else dim
        dims = [d for d in (wrap_dim(d, len(shape)) for d in dims) if shape and shape[d] == 1]
    return squeeze(x, tuple(sorted({d + 1 for d in dims}))), 0


def _squeeze_node_name(dim):
    return f"SqueezeBackward{0 if dim is None else 1 if isinstance(dim, int) else 2}"


def _squeeze_samples(make):
    yield S((make((2, 1, 3, 1)),))
    yield S((make((2, 1, 3)), 1))
    yield S((make((2, 1, 3)), 0))
    yield S((make((1, 2, 1)), (0, -1)))
    yield S((make(()),))
    yield S((make(()), 0))
    yield S((make((0, 1)), -1))


squeeze_p = view_op(
    "squeeze",
    _squeeze,
    _unview_shape,
    batch_rule=_squeeze_rule,
    node_name=_squeeze_node_name,
    samples=_squeeze_samples,
    error_samples=lambda make: [_bad_dim(make)],
)
squeeze = squeeze_p.fn


def _squeeze_dims(input, *dim, **kwargs):
    """squeeze with its dims also given one by one (``x.squeeze_(0, 2)``), as PyTorch's
    in-place form takes them."""
    return squeeze(input, *(dim if len(dim) < 2 else (dim,)), **kwargs)


tensor_method(inplace_view(_squeeze_dims, "squeeze_", renumber=3))  # SqueezeBackward3, 4, 5


# ------------------------------------------------------------------ reorderings
def _transpose(xp, input, dim0, dim1):
    n = input.ndim
    if not (-n <= dim0 < n and -n <= dim1 < n):  # (the common case without a call)
        dim0, dim1 = wrap_dim(dim0, n), wrap_dim(dim1, n)
    return input.swapaxes(dim0, dim1) if n else input[...]


def _transpose_samples(make):
    yield S((make((2, 3)), 0, 1))
    yield S((make((2, 3, 4)), -1, 0))
    yield S((make(()), 0, -1))
    yield S((make((0, 3)), 1, 0))
    yield S((make((2, 3)), 1, 1))


transpose_p = view_op(
    "transpose",
    _transpose,
    lambda g, dim0, dim1: g.transpose(dim0, dim1),
    batch_rule=along_dims(("dim0", "dim1")),
    samples=_transpose_samples,
    error_samples=lambda make: [_bad_dim(make, lambda input: (input, 0, 2))],
)
transpose = transpose_p.fn
tensor_method(inplace_view(transpose, "transpose_"))


def _swap_samples(make):
    return [S((make((2, 3, 4)), 0, 2)), S((make((2, 3)), -1, 0)), S((make(()), 0, -1))]


@composite(samples=_swap_samples, test=COMPLEX_TOO)
def swapaxes(input, axis0: int, axis1: int):
    """Alias of transpose."""
    return transpose(input, axis0, axis1)


@composite(samples=_swap_samples, test=COMPLEX_TOO)
def swapdims(input, dim0: int, dim1: int):
    """Alias of transpose."""
    return transpose(input, dim0, dim1)


tensor_method(inplace_view(swapaxes, "swapaxes_"))
tensor_method(inplace_view(swapdims, "swapdims_"))


def _permute_axes(dims, ndim: int) -> tuple:
    dims = tuple(dims)
    if len(dims) != ndim:
        raise RuntimeError(
            "permute(sparse_coo): number of dimensions in the tensor input does not match the length of "
            f"the desired ordering of dimensions i.e. input.dim() = {ndim} is not equal to len(dims) = {len(dims)}"
        )
    axes = tuple(wrap_dim(d, ndim) for d in dims)
    if len(set(axes)) != len(axes):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return axes


def _permute(xp, input, dims):
    axes = _permute_axes(dims, input.ndim)
    return xp.transpose(input, axes) if input.ndim else input[...]


def _permute_rule(vmap, args, bdims, attrs):
    x = front(args[0], bdims[0])
    axes = _permute_axes(attrs["dims"], x.dim() - 1)
    return permute(x, (0, *(a + 1 for a in axes))), 0


def _inverse_perm(dims) -> tuple:
    n = len(dims)
    inv = [0] * n
    for i, d in enumerate(dims):
        inv[d % n] = i
    return tuple(inv)


def _permute_samples(make):
    yield S((make((2, 3, 4)), (2, 0, 1)))
    yield S((make((2, 3)), (-1, 0)))
    yield S((make(()), ()))
    yield S((make((0, 3)), (1, 0)))


def _permute_errors(make):
    yield ErrorInput(S((make((2, 3)), (0,))), RuntimeError, "is not equal to len")
    yield ErrorInput(S((make((2, 3)), (0, 0))), RuntimeError, "duplicate dims")


permute_p = view_op(
    "permute",
    _permute,
    lambda g, dims: g.permute(_inverse_perm(dims)),
    sizes=True,
    batch_rule=_permute_rule,
    samples=_permute_samples,
    error_samples=_permute_errors,
)
permute = permute_p.fn


def _movedim(xp, input, source, destination):
    src = wrap_dims(source, input.ndim)
    dst = wrap_dims(destination, input.ndim)
    if len(src) != len(dst):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({list(src)} dims) should contain the "
            f"same number of dims as destination ({list(dst)} dims)"
        )
    if len(set(src)) != len(src):
        raise RuntimeError(f"movedim: repeated dim in `source` ({list(src)})")
    if len(set(dst)) != len(dst):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({list(dst)})")
    if not input.ndim:
        return input[...]
    order = [d for d in range(input.ndim) if d not in src]  # (NumPy's moveaxis, checks done)
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return input.transpose(order)


def _movedim_samples(make):
    yield S((make((2, 3, 4)), 0, -1))
    yield S((make((2, 3, 4)), (0, 1), (2, 0)))
    yield S((make(()), 0, 0))
    yield S((make((2, 0, 3)), -1, 0))


def _movedim_errors(make):
    yield ErrorInput(
        S((make((2, 3)), (0, 1), (0,))), RuntimeError, "should contain the same number of dims"
    )
    yield ErrorInput(
        S((make((2, 3)), (0, 0), (0, 1))), RuntimeError, r"repeated dim in `source` \(\[0, 0\]\)"
    )
    yield ErrorInput(S((make((2, 3)), 2, 0)), IndexError, r"\[-2, 1\], but got 2")


movedim_p = view_op(
    "movedim",
    _movedim,
    lambda g, source, destination: g.movedim(destination, source),
    methods=("movedim", "moveaxis"),
    batch_rule=along_dims(("source", "destination")),
    node_name="PermuteBackward0",
    samples=_movedim_samples,
    error_samples=_movedim_errors,
)
movedim = movedim_p.fn


def _moveaxis_samples(make):
    return [S((make((2, 3, 4)), 0, -1)), S((make((2, 3, 4)), (0, 1), (2, 0)))]


@composite(samples=_moveaxis_samples, test=COMPLEX_TOO)
def moveaxis(input, source, destination):
    """Alias of movedim."""
    return movedim(input, source, destination)


def _t_check(ndim: int, name: str = "t") -> None:
    if ndim > 2:
        raise RuntimeError(f"{name}() expects a tensor with <= 2 dimensions, but self is {ndim}D")


def _t(xp, input):
    _t_check(input.ndim)
    return input.T if input.ndim == 2 else input[...]


def _t_as_transpose(input):
    _t_check(input.dim())
    return transpose(input, 0, -1)  # for at most 2 dims, t is this transpose


def _t_samples(make):
    yield S((make((2, 3)),))
    yield S((make((3,)),))
    yield S((make(()),))
    yield S((make((0, 2)),))


def _t_errors(make):
    yield ErrorInput(
        S((make((2, 3, 4)),)),
        RuntimeError,
        "t\\(\\) expects a tensor with <= 2 dimensions, but self is 3D",
    )


t_p = view_op(
    "t",
    _t,
    lambda g: g.t(),
    batch_rule=decompose(_t_as_transpose),
    samples=_t_samples,
    error_samples=_t_errors,
)
t = t_p.fn


def _t_of(input):
    _t_check(input.dim(), "t_")
    return t(input)


tensor_method(inplace_view(_t_of, "t_"))


def _T(self):
    if self.dim() == 0:
        warnings.warn(
            "Tensor.T is deprecated on 0-D tensors. This function is the identity in these cases.",
            UserWarning,
            stacklevel=2,
        )
    elif self.dim() != 2:
        warnings.warn(
            "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated "
            "and it will throw an error in a future release. Consider `x.mT` to transpose batches of "
            "matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor.",
            UserWarning,
            stacklevel=2,
        )
    return permute(self, tuple(range(self.dim() - 1, -1, -1)))


def _H(self):
    if self.dim() not in (0, 2):
        extra = " For batches of matrices, consider using tensor.mH" if self.dim() > 2 else ""
        raise RuntimeError(
            f"tensor.H is only supported on matrices (2-D tensors). Got {self.dim()}-D tensor.{extra}"
        )
    return permute(self, tuple(range(self.dim() - 1, -1, -1)))


def _matrix_transpose(name: str, what: str, conj: bool = False):
    """Tensor.mT, Tensor.mH and adjoint: the last two dims swapped, conjugated with ``conj``
    (the conjugate of a real tensor is itself; of a complex one, a copy)."""

    def fn(input):
        if input.dim() < 2:
            raise RuntimeError(
                f"tensor.{what} is only supported on matrices or batches of matrices. Got {input.dim()}-D tensor."
            )
        out = transpose(input, -2, -1)
        if conj and input.is_complex():
            from .unary import conj_physical

            return conj_physical(out)
        return out

    fn.__name__ = fn.__qualname__ = name
    return fn


_mT, _mH = _matrix_transpose("_mT", "mT"), _matrix_transpose("_mH", "mH", conj=True)
adjoint = _matrix_transpose("adjoint", "adjoint()", conj=True)
adjoint.__doc__ = "The conjugate transpose of the last two dims (real tensors: transpose)."
composite(
    adjoint,
    name="adjoint",
    samples=lambda make: [S((make((2, 3)),)), S((make((2, 3, 4)),))],
    test=COMPLEX_TOO,
)


# ------------------------------------------------------------------ slicing views
def _slice_backward(xp, grad, shape, dim, start, length):
    out = xp.zeros(tuple(shape), dtype=grad.dtype)
    out[(slice(None),) * dim + (slice(start, start + length),)] = grad
    return out


def _slice_backward_samples(make):
    yield S((make((2, 4)), (3, 4), 0, 1, 2))
    yield S((make((3, 1)), (3, 4), 1, 3, 1))


slice_backward_p = defop(
    "slice_backward",
    _slice_backward,
    nin=1,
    vjp=lambda g, dim, start, length: g.narrow(dim, start, length),
    jvp=LINEAR,
    api="ops.views.slice_backward",
    test={"no_oracle": True},
    batch_rule=grad_of_shape(),
    samples=_slice_backward_samples,
)
slice_backward = slice_backward_p.fn


def _select_backward(xp, grad, shape, dim, index):
    out = xp.zeros(tuple(shape), dtype=grad.dtype)
    out[(slice(None),) * dim + (index,)] = grad
    return out


def _select_backward_samples(make):
    yield S((make((4,)), (3, 4), 0, 1))
    yield S((make((3,)), (3, 4), 1, -1))


select_backward_p = defop(
    "select_backward",
    _select_backward,
    nin=1,
    vjp=lambda g, dim, index: g.select(dim, index),
    jvp=LINEAR,
    api="ops.views.select_backward",
    test={"no_oracle": True},
    batch_rule=grad_of_shape(),
    samples=_select_backward_samples,
)
select_backward = select_backward_p.fn


def _narrow_args(shape, dim, start, length):
    if len(shape) == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    dim = wrap_dim(dim, len(shape))
    size = shape[dim]
    start = int(start)
    if not -size <= start <= size:
        raise IndexError(
            f"start out of range (expected to be in range of [{-size}, {size}], but got {start})"
        )
    if start < 0:
        start += size
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return dim, start


def _narrow(xp, input, dim, start, length):
    dim, start = _narrow_args(input.shape, dim, start, length)
    return input[(slice(None),) * dim + (slice(start, start + length),)]


def _narrow_vjp(g, input_shape, dim, start, length):
    d, s = _narrow_args(tuple(input_shape), dim, start, length)
    return slice_backward(g, tuple(input_shape), d, s, length)


def _narrow_samples(make):
    yield S((make((4, 3)), 0, 1, 2))
    yield S((make((2, 5)), -1, 0, 5))
    yield S((make((2, 5)), 1, -3, 2))
    yield S((make((2, 3, 4)), 2, 1, 0))


def _narrow_errors(make):
    yield ErrorInput(
        S((make((2, 3)), 0, 1, 5)),
        RuntimeError,
        r"start \(1\) \+ length \(5\) exceeds dimension size \(2\)\.",
    )
    yield ErrorInput(S((make((2, 3)), 2, 0, 1)), IndexError, r"but got 2")


narrow_p = view_op(
    "narrow",
    _narrow,
    _narrow_vjp,
    node_name="SliceBackward0",
    batch_rule=min_rank(
        1,
        lambda r, a: RuntimeError("narrow() cannot be applied to a 0-dim tensor."),
        along_dims(scalar_trick=False),
    ),
    samples=_narrow_samples,
    error_samples=_narrow_errors,
)
narrow = narrow_p.fn


def vmap_zero_dim(dim: int) -> IndexError:
    """PyTorch's error from the batch rules of select/unbind/split on a logical 0-d tensor:
    the dim wraps as for one dim, then is shifted past the batch onto a 1-d tensor."""
    wrap_dim(dim, 1)
    return IndexError("Dimension out of range (expected to be in range of [-1, 0], but got 1)")


def _select_args(shape, dim, index):
    if len(shape) == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    dim = wrap_dim(dim, len(shape))
    size = shape[dim]
    index = int(index)
    if not -size <= index < size:
        raise IndexError(
            f"select(): index {index} out of range for tensor of size {list(shape)} at dimension {dim}"
        )
    return dim, index % size


def _select(xp, input, dim, index):
    dim, index = _select_args(input.shape, dim, index)
    return input[(slice(None),) * dim + (index, Ellipsis)]


def _select_vjp(g, input_shape, dim, index):
    d, i = _select_args(tuple(input_shape), dim, index)
    return select_backward(g, tuple(input_shape), d, i)


def _select_samples(make):
    yield S((make((4, 3)), 0, 1))
    yield S((make((2, 5)), -1, -2))
    yield S((make((3,)), 0, 2))
    yield S((make((2, 3, 4)), 1, 0))


def _select_errors(make):
    yield ErrorInput(
        S((make((2, 3)), 1, 5)),
        IndexError,
        r"select\(\): index 5 out of range for tensor of size \[2, 3\] at dimension 1",
    )
    yield ErrorInput(S((make((2, 3)), 2, 0)), IndexError, r"but got 2")


select_p = view_op(
    "select",
    _select,
    _select_vjp,
    batch_rule=min_rank(
        1,
        lambda r, a: vmap_zero_dim(a["dim"]),
        along_dims(scalar_trick=False),
    ),
    samples=_select_samples,
    error_samples=_select_errors,
)


@composite(
    samples=lambda make: [S((make((2, 3)), make((3, 2)))), S((make((2, 3)).T, make((6,))))],
    name="reshape_as",
    api="Tensor.reshape_as",
    methods=True,
    test=COMPLEX_TOO,
)
def reshape_as(self, other):
    """self.reshape(other.shape)."""
    return reshape(self, tuple(other.shape))


# ------------------------------------------------------------------ diagonals
def _diag_geometry(shape, offset, dim1, dim2):
    nd = len(shape)
    d1, d2 = wrap_dim(dim1, nd), wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n1, n2 = shape[d1], shape[d2]
    length = max(min(n1 + min(offset, 0), n2 - max(offset, 0)), 0)
    return d1, d2, length


def diagonal_view(xp, input, offset=0, dim1=0, dim2=1):
    """The diagonal of an array as a strided view of it (the kernel of ``diagonal``)."""
    d1, d2, n = _diag_geometry(input.shape, offset, dim1, dim2)
    if n > 0:
        start = [slice(None)] * input.ndim
        if offset >= 0:
            start[d2] = slice(offset, None)
        else:
            start[d1] = slice(-offset, None)
        input = input[tuple(start)]
    rest = [i for i in range(input.ndim) if i not in (d1, d2)]
    shape = tuple(input.shape[i] for i in rest) + (n,)
    strides = tuple(input.strides[i] for i in rest) + (input.strides[d1] + input.strides[d2],)
    return _strided(xp, input, shape, strides)


def _diagonal_backward(xp, grad, shape, offset, dim1, dim2):
    out = xp.zeros(tuple(shape), dtype=grad.dtype)
    diagonal_view(xp, out, offset, dim1, dim2)[...] = grad
    return out


def _diagonal_backward_samples(make):
    yield S((make((3,)), (3, 3), 0, 0, 1))
    yield S((make((2, 2)), (2, 3, 4), 1, -1, 1))


diagonal_backward_p = defop(
    "diagonal_backward",
    _diagonal_backward,
    nin=1,
    vjp=lambda g, offset, dim1, dim2: g.diagonal(offset, dim1, dim2),
    jvp=LINEAR,
    api="ops.views.diagonal_backward",
    test={"no_oracle": True},
    batch_rule=grad_of_shape(("dim1", "dim2")),
    samples=_diagonal_backward_samples,
)
diagonal_backward = diagonal_backward_p.fn


def _diagonal_samples(make):
    yield S((make((3, 3)),))
    yield S((make((3, 4)), 1))
    yield S((make((3, 4)), -2))
    yield S((make((2, 3, 4)), 0, -1, 0))
    yield S((make((2, 3, 4)),), {"offset": 1, "dim1": 2, "dim2": 1})
    yield S((make((2, 3)), 5))
    yield S((make((0, 3)),))


def _diagonal_vjp(g, input_shape, offset, dim1, dim2):
    return diagonal_backward(g, tuple(input_shape), offset, dim1, dim2)


def _diagonal_errors(make):
    yield ErrorInput(
        S((make((2, 3)), 0, 0, 0)), RuntimeError, "diagonal dimensions cannot be identical 0, 0"
    )
    yield ErrorInput(S((make((2, 3)), 0, 0, 2)), IndexError, r"\[-2, 1\], but got 2")


diagonal_p = view_op(
    "diagonal",
    diagonal_view,
    _diagonal_vjp,
    batch_rule=along_dims(("dim1", "dim2"), scalar_trick=False),
    samples=_diagonal_samples,
    error_samples=_diagonal_errors,
)
diagonal = diagonal_p.fn


# ------------------------------------------------------------------ broadcasting
def _expand_size(shape, size, dtype=None, batched: bool = False, device: str = "cpu") -> tuple:
    """The size ``shape`` expands to (PyTorch's checks and texts, naming the type of a tensor
    of ``dtype`` on ``device``; under vmap its batched text, which names no tensor type)."""
    size = tuple(int(s) for s in size)
    lead = len(size) - len(shape)
    if lead < 0:
        typ = type_string(from_np(dtype) if dtype is not None else dt.float32, device)
        what = "expand" if batched else f"expand({typ}{{{list(shape)}}}, size={list(size)})"
        raise RuntimeError(
            f"{what}: the number of sizes provided ({len(size)}) must be greater or equal to the "
            f"number of dimensions in the tensor ({len(shape)})"
        )
    full = list(size)
    for i in range(len(size) - 1, -1, -1):  # from the last dim, as PyTorch checks them
        s = size[i]
        if i < lead:
            if s == -1:
                raise RuntimeError(
                    f"The expanded size of the tensor ({s}) isn't allowed in a leading, non-existing dimension {i}"
                )
            continue
        have = shape[i - lead]
        if s == -1:
            full[i] = have
        elif have != 1 and have != s:
            raise RuntimeError(
                f"The expanded size of the tensor ({s}) must match the existing size ({have}) at "
                f"non-singleton dimension {i}.  Target sizes: {list(size)}.  Tensor sizes: {list(shape)}"
            )
    if any(s < 0 for s in full):  # other negative sizes fail PyTorch's numel of the result
        raise RuntimeError("numel: integer multiplication overflow")
    return tuple(full)


def _expand(xp, input, size):
    shape = input.shape
    size = tuple(size)
    if size == shape:  # (the common case of broadcasting's equal shapes)
        return input.view()
    lead = len(size) - len(shape)
    new_dims_only = lead > 0 and size[lead:] == shape and min(size) >= 0  # (valid as it is)
    if not new_dims_only:
        size = _expand_size(shape, size, input.dtype, device=device_of(input).type)
    # PyTorch's geometry: a repeated dim gets stride 0, a new size-one dim the stride of the
    # dims after it. A strided view, writable as in PyTorch (NumPy's broadcast_to is
    # read-only): an in-place op refuses the repeated elements itself.
    if new_dims_only:
        strides = list(input.strides)
    else:
        strides = [st if have == s else 0 for have, st, s in zip(shape, input.strides, size[lead:])]
    inner = size[lead] * strides[0] if strides else input.itemsize
    for i in range(lead - 1, -1, -1):  # new dims, innermost first
        st = inner if size[i] == 1 else 0
        strides.insert(0, st)
        inner = size[i] * st
    return _strided(xp, input, size, tuple(strides))


def _strided(xp, input, shape: tuple, strides: tuple):
    """A view of input's memory with these shape and (byte) strides."""
    if xp is np and (input.flags.c_contiguous or input.flags.f_contiguous):
        # the same view over input's buffer, made directly (as_strided is eight times slower)
        return np.ndarray(shape, input.dtype, input, 0, strides)
    return dt.as_strided(xp, input, shape, strides)


def _expand_rule(op):
    def rule(vmap, args, bdims, attrs):
        x = front(args[0], bdims[0])
        size = tuple(attrs["size"])
        n = len(size) - (x.dim() - 1)
        if n < 0:
            _expand_size(x.shape[1:], size, batched=True)
        for _ in range(n):  # new leading dims go after the batch dim (unsqueeze keeps
            x = x.unsqueeze(1)  # the strides of size-one dims, which a reshape may change)
        return op.fn(x, (x.shape[0], *size)), 0

    return rule


expand_rule = rule_generator(_expand_rule)


def _expand_samples(make):
    yield S((make((3, 1)), (2, 3, 4)))
    yield S((make(()), (2,)))
    yield S((make((1, 3)), (-1, 3)))
    yield S((make((1, 3)), (0, 3)))


def _expand_errors(make):
    yield ErrorInput(
        S((make((2, 3)), (3, 3))),
        RuntimeError,
        r"The expanded size of the tensor \(3\) must match the existing size \(2\) at non-singleton dimension 0",
    )
    yield ErrorInput(
        S((make((2, 3)), (3,))),
        RuntimeError,
        r"the number of sizes provided \(1\) must be greater or equal",
    )


expand_p = view_op(
    "expand",
    _expand,
    lambda g: g,
    sizes=True,
    api="Tensor.expand",
    batch_rule=expand_rule(),
    overlapping_view=True,
    samples=_expand_samples,
    error_samples=_expand_errors,
    meta=by_kernel,
)
expand = expand_p.fn


def _broadcast_to_samples(make):
    yield S((make((3, 1)), (2, 3, 4)))
    yield S((make(()), (2,)))
    yield S((make((1, 3)), (-1, 3)))
    yield S((make((3,)), (0, 3)))


def _broadcast_to_errors(make):
    yield ErrorInput(S((make((2, 3)), (3, 3))), RuntimeError, "must match the existing size")


broadcast_to_p = view_op(
    "broadcast_to",
    _expand,
    lambda g: g,
    batch_rule=expand_rule(),
    node_name="ExpandBackward0",
    overlapping_view=True,
    samples=_broadcast_to_samples,
    error_samples=_broadcast_to_errors,
)


def _expand_as(self, other):
    """self.expand(other.size())."""
    return expand(self, tuple(other.shape))


def _broadcast(shapes, mismatch) -> list[int]:
    """The common broadcast shape; ``mismatch(have, got, dim)`` builds the error."""
    out: list[int] = []
    for k, shape in enumerate(shapes):
        if len(shape) > len(out):
            out = [1] * (len(shape) - len(out)) + out
        for i, s in enumerate(shape):
            j = len(out) - len(shape) + i
            if out[j] == 1:
                out[j] = s
            elif s != 1 and s != out[j]:
                raise mismatch(out, s, j, k)
    return out


def broadcast_shapes(*shapes):
    """The shape that all of `shapes` broadcast to."""
    given = tuple((s,) if isinstance(s, int) else s for s in shapes)  # as the error shows it
    shapes = tuple(tuple(s) for s in given)
    return Size(
        _broadcast(
            shapes,
            lambda out, got, j, k: RuntimeError(
                f"Attempting to broadcast a dimension of length {got} at {j - len(out)}! "
                f"Mismatching argument at index {k} had {given[k]}; but expected shape should "
                f"be broadcastable to {out}"
            ),
        )
    )


def _broadcast_tensors_samples(make):
    yield S((make((2, 1)), make((3,))))
    yield S((make(()), make((2, 3)), make((1, 3))))


@composite(samples=_broadcast_tensors_samples, test=COMPLEX_TOO)
def broadcast_tensors(*tensors) -> tuple:
    """Views of the tensors expanded to their common broadcast shape."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    shape = _broadcast(
        [tuple(t.shape) for t in tensors],
        lambda out, got, j, _: RuntimeError(
            f"The size of tensor a ({out[j]}) must match the size of tensor b ({got}) at "
            f"non-singleton dimension {j}"
        ),
    )
    return tuple(expand(t, tuple(shape)) for t in tensors)


# ------------------------------------------------------------------ writes through views
# (imported here, where their code stood: the ops keep their registration order)
from .view_chains import (  # noqa: E402, F401
    apply_chain,
    dim_order,
    like_root,
    view_replay,
    view_scatter,
    view_scatter_p,
)

# ------------------------------------------------------------------ Tensor methods
tensor_methods(
    {
        "T": property(_T),
        "mT": property(_mT),
        "H": property(_H),
        "mH": property(_mH),
        "adjoint": adjoint,
        "view": _view_method,
        "flatten": flatten_or_self,
        "view_as": _view_as,
        "swapaxes": swapaxes,
        "swapdims": swapdims,
        "expand_as": _expand_as,
    }
)
