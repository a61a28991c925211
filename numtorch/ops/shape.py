"""Shape and view ops: reshape, permute, expand, cat, split, flips, diagonals."""

from __future__ import annotations

import warnings

from .._core.op import ErrorInput, defop, tensor_methods
from .._core.tensor import wrap_dim
from ..testing.samples import S
from ._batching import (
    along_dims,
    batch_first,
    decompose,
    front,
    generator,
    lrank,
    materialize,
    pad_to,
    pdim,
)
from ._families import LINEAR, inplace, method
from .creation import arange, zeros_like


def _with_batch_size(op, attr):
    """reshape/view: the batch first, and its size prepended to the requested shape."""

    def rule(ax, args, bdims, attrs):
        new = dict(attrs)
        new[attr] = (ax.size, *attrs[attr])
        return op.fn(front(args[0], bdims[0]), **new), 0

    return rule


with_batch_size = generator(_with_batch_size)


def _expand_rule(op):
    def rule(ax, args, bdims, attrs):
        x = front(args[0], bdims[0])
        size = tuple(attrs["size"])
        n = len(size) - (x.dim() - 1)
        if n > 0:  # new leading dims go after the batch dim
            x = x.reshape(x.shape[0], *((1,) * n), *x.shape[1:])
        return op.fn(x, (x.shape[0], *size)), 0

    return rule


def _grad_of_shape(op, dims=("dim",)):
    """*_backward ops (a gradient and the logical ``shape`` of the input it came from):
    the batch size prepended to ``shape`` and the ``dims`` shifted past it."""

    def rule(ax, args, bdims, attrs):
        shape = tuple(attrs["shape"])
        new = dict(attrs, shape=(ax.size, *shape))
        for n in dims:
            new[n] = pdim(attrs[n], len(shape))
        return op.fn(front(args[0], bdims[0]), **new), 0

    return rule


grad_of_shape = generator(_grad_of_shape)


def _min_rank(op, n: int, error, inner=None):
    """``inner``'s rule (default: batch first) after checking that the logical input has
    at least ``n`` dims; ``error(rank)`` is the exception otherwise."""
    rule = (inner or batch_first()).bind(op)

    def checked(ax, args, bdims, attrs):
        rank = lrank(args[0], bdims[0])
        if rank < n:
            raise error(rank)
        return rule(ax, args, bdims, attrs)

    return checked


min_rank = generator(_min_rank)


def _shift(dims, rank: int):
    """Logical dim attribute(s) (int, sequence or None) as physical ones, batch first."""
    if dims is None:
        return None
    if isinstance(dims, int):
        return pdim(dims, rank)
    return type(dims)(pdim(d, rank) for d in dims)


def _dims_rule(op, names=("dims",)):
    """One-tensor ops whose dim attributes may be ints or lists (an empty list means no
    dims): shift them past the batch dim; a logical 0-d input runs as shape (1,)."""

    def rule(ax, args, bdims, attrs):
        x = front(args[0], bdims[0])
        rank = x.dim() - 1
        if rank == 0:
            x = x.unsqueeze(1)
        new = dict(attrs)
        for n in names:
            new[n] = _shift(attrs[n], rank)
        out = op.fn(x, **new)
        return (out.squeeze(1) if rank == 0 else out), 0

    return rule


dims_rule = generator(_dims_rule)


def _bad_dim(make, fn_args=lambda input: (input, 2)):
    return ErrorInput(
        S(fn_args(make((2, 3)))),
        IndexError,
        r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)",
    )


def infer_size(size, numel: int) -> tuple:
    size = tuple(int(s) for s in size)
    if -1 in size:
        known = 1
        for s in size:
            if s != -1:
                known *= s
        if size.count(-1) > 1:
            raise RuntimeError("only one dimension can be inferred")
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(size)}' is invalid for input of size {numel}")
        size = tuple(numel // known if s == -1 else s for s in size)
    n = 1
    for s in size:
        n *= s
    if n != numel:
        raise RuntimeError(f"shape '{list(size)}' is invalid for input of size {numel}")
    return size


def _reshape(xp, input, shape):
    return input.reshape(infer_size(shape, input.size))


reshape = defop(
    "reshape", _reshape, nin=1, vjp=lambda g, input_shape: g.reshape(input_shape), jvp=LINEAR, view=True,
    batch_rule=with_batch_size("shape"),
    samples=lambda make: [S((make((2, 3)), (3, 2))), S((make((2, 3)), (-1,))), S((make(()), (1, 1))),
                          S((make((0, 3)), (3, 0))), S((make((2, 3, 4)), (4, -1)))],
    error_samples=lambda make: [ErrorInput(S((make((2, 3)), (4,))), RuntimeError, r"shape '\[4\]' is invalid for input of size 6"),
                                ErrorInput(S((make((2, 3)), (-1, -1))), RuntimeError, "only one dimension can be inferred")],
)  # fmt: skip
method(reshape, sizes=True)


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


view = defop(
    "view", _view, nin=1, vjp=lambda g, input_shape: g.reshape(input_shape), jvp=LINEAR, view=True, api="Tensor.view",
    batch_rule=with_batch_size("size"),
    samples=lambda make: [S((make((2, 3)), (3, 2))), S((make((2, 3, 4)), (-1, 4))), S((make(()), (1,)))],
)  # fmt: skip


def _view_method(self, *size):
    """Tensor.view(*shape): a view with a new shape (Tensor.view(dtype) is not supported)."""
    if len(size) == 1 and not isinstance(size[0], int):
        size = size[0]
    if not isinstance(size, (tuple, list)) and not hasattr(size, "__iter__"):
        raise NotImplementedError("numtorch: Tensor.view(dtype) is not supported")
    return view.fn(self, tuple(size))


def _view_as(self, other):
    """self.view(other.shape)."""
    return view.fn(self, tuple(other.shape))


# ------------------------------------------------------------------ dims in and out
def _unsqueeze(xp, input, dim):
    return xp.expand_dims(input, wrap_dim(dim, input.ndim + 1))


unsqueeze = method(
    defop(
        "unsqueeze",
        _unsqueeze,
        nin=1,
        vjp=lambda g, dim: g.squeeze(dim),
        jvp=LINEAR,
        view=True,
        batch_rule=along_dims(extra={"dim": 1}, scalar_trick=False),
        samples=lambda make: [
            S((make((2, 3)), 0)),
            S((make((2, 3)), -1)),
            S((make(()), 0)),
            S((make((0, 3)), 1)),
        ],
        error_samples=lambda make: [
            ErrorInput(S((make((2, 3)), 3)), IndexError, r"range of \[-3, 2\], but got 3")
        ],
    )  # fmt: skip
)


def _squeeze(xp, input, dim=None):
    if dim is None:
        axes = tuple(i for i, s in enumerate(input.shape) if s == 1)
    else:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        axes = tuple(
            sorted(
                {
                    a
                    for a in (wrap_dim(d, input.ndim) for d in dims)
                    if input.ndim and input.shape[a] == 1
                }
            )
        )
    return xp.squeeze(input, axes) if axes else input[...]


def _squeeze_rule(ax, args, bdims, attrs):
    # The logical size-1 dims only: the batch dim stays even when the batch size is 1.
    x = front(args[0], bdims[0])
    shape = x.shape[1:]
    dim = attrs.get("dim")
    if dim is None:
        dims = [i for i, s in enumerate(shape) if s == 1]
    else:
        dims = (dim,) if isinstance(dim, int) else dim
        dims = [d for d in (wrap_dim(d, len(shape)) for d in dims) if shape and shape[d] == 1]
    return squeeze.fn(x, tuple(sorted({d + 1 for d in dims}))), 0


squeeze = method(
    defop(
        "squeeze",
        _squeeze,
        nin=1,
        vjp=lambda g, input_shape: g.reshape(input_shape),
        jvp=LINEAR,
        view=True,
        batch_rule=_squeeze_rule,
        samples=lambda make: [
            S((make((2, 1, 3, 1)),)),
            S((make((2, 1, 3)), 1)),
            S((make((2, 1, 3)), 0)),
            S((make((1, 2, 1)), (0, -1))),
            S((make(()),)),
            S((make(()), 0)),
            S((make((0, 1)), -1)),
        ],
        error_samples=lambda make: [_bad_dim(make)],
    )  # fmt: skip
)


def _transpose(xp, input, dim0, dim1):
    return (
        xp.swapaxes(input, wrap_dim(dim0, input.ndim), wrap_dim(dim1, input.ndim))
        if input.ndim
        else input[...]
    )


transpose = method(
    defop(
        "transpose",
        _transpose,
        nin=1,
        vjp=lambda g, dim0, dim1: g.transpose(dim0, dim1),
        jvp=LINEAR,
        view=True,
        batch_rule=along_dims(("dim0", "dim1")),
        samples=lambda make: [
            S((make((2, 3)), 0, 1)),
            S((make((2, 3, 4)), -1, 0)),
            S((make(()), 0, -1)),
            S((make((0, 3)), 1, 0)),
            S((make((2, 3)), 1, 1)),
        ],
        error_samples=lambda make: [_bad_dim(make, lambda input: (input, 0, 2))],
    )  # fmt: skip
)


def swapaxes(input, axis0: int, axis1: int):
    """Alias of transpose."""
    return transpose.fn(input, axis0, axis1)


def swapdims(input, dim0: int, dim1: int):
    """Alias of transpose."""
    return transpose.fn(input, dim0, dim1)


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


def _permute_rule(ax, args, bdims, attrs):
    x = front(args[0], bdims[0])
    axes = _permute_axes(attrs["dims"], x.dim() - 1)
    return permute.fn(x, (0, *(a + 1 for a in axes))), 0


def _inverse_perm(dims) -> tuple:
    n = len(dims)
    inv = [0] * n
    for i, d in enumerate(dims):
        inv[d % n] = i
    return tuple(inv)


permute = defop(
    "permute", _permute, nin=1, vjp=lambda g, dims: g.permute(_inverse_perm(dims)), jvp=LINEAR, view=True,
    batch_rule=_permute_rule,
    samples=lambda make: [S((make((2, 3, 4)), (2, 0, 1))), S((make((2, 3)), (-1, 0))), S((make(()), ())),
                          S((make((0, 3)), (1, 0)))],
    error_samples=lambda make: [ErrorInput(S((make((2, 3)), (0,))), RuntimeError, "is not equal to len"),
                                ErrorInput(S((make((2, 3)), (0, 0))), RuntimeError, "duplicate dims")],
)  # fmt: skip
method(permute, sizes=True)


def _t_check(ndim: int) -> None:
    if ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {ndim}D")


def _t(xp, input):
    _t_check(input.ndim)
    return input.T if input.ndim == 2 else input[...]


def _t_as_transpose(input):
    _t_check(input.dim())
    return transpose.fn(input, 0, -1)  # for at most 2 dims, t is this transpose


t = method(
    defop(
        "t",
        _t,
        vjp=lambda g: g.t(),
        jvp=LINEAR,
        view=True,
        batch_rule=decompose(_t_as_transpose),
        samples=lambda make: [
            S((make((2, 3)),)),
            S((make((3,)),)),
            S((make(()),)),
            S((make((0, 2)),)),
        ],
        error_samples=lambda make: [
            ErrorInput(
                S((make((2, 3, 4)),)),
                RuntimeError,
                "t\\(\\) expects a tensor with <= 2 dimensions, but self is 3D",
            )
        ],
    )  # fmt: skip
)


def _T(self):
    if self.dim() == 0:
        warnings.warn(
            "Tensor.T is deprecated on 0-D tensors. This function is the identity in these cases.",
            UserWarning, stacklevel=2,
        )  # fmt: skip
    elif self.dim() != 2:
        warnings.warn(
            "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated "
            "and it will throw an error in a future release. Consider `x.mT` to transpose batches of "
            "matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor.",
            UserWarning, stacklevel=2,
        )  # fmt: skip
    return permute.fn(self, tuple(range(self.dim() - 1, -1, -1)))


def _mT(self):
    if self.dim() < 2:
        raise RuntimeError(
            f"tensor.mT is only supported on matrices or batches of matrices. Got {self.dim()}-D tensor."
        )
    return transpose.fn(self, -2, -1)


def _mH(self):
    if self.dim() < 2:
        raise RuntimeError(
            f"tensor.mH is only supported on matrices or batches of matrices. Got {self.dim()}-D tensor."
        )
    return transpose.fn(self, -2, -1)


def _H(self):
    if self.dim() not in (0, 2):
        extra = " For batches of matrices, consider using tensor.mH" if self.dim() > 2 else ""
        raise RuntimeError(
            f"tensor.H is only supported on matrices (2-D tensors). Got {self.dim()}-D tensor.{extra}"
        )
    return permute.fn(self, tuple(range(self.dim() - 1, -1, -1)))


def adjoint(input):
    """The conjugate transpose of the last two dims (real tensors: transpose)."""
    if input.dim() < 2:
        raise RuntimeError(
            f"tensor.adjoint() is only supported on matrices or batches of matrices. Got {input.dim()}-D tensor."
        )
    return transpose.fn(input, -2, -1)


# ------------------------------------------------------------------ slicing views
def _slice_backward(xp, grad, shape, dim, start, length):
    out = xp.zeros(tuple(shape), dtype=grad.dtype)
    out[(slice(None),) * dim + (slice(start, start + length),)] = grad
    return out


slice_backward = defop(
    "slice_backward", _slice_backward, nin=1, vjp=lambda g, dim, start, length: g.narrow(dim, start, length),
    jvp=LINEAR, api="ops.shape.slice_backward.fn", test={"no_oracle": True}, batch_rule=grad_of_shape(),
    samples=lambda make: [S((make((2, 4)), (3, 4), 0, 1, 2)), S((make((3, 1)), (3, 4), 1, 3, 1))],
)  # fmt: skip


def _select_backward(xp, grad, shape, dim, index):
    out = xp.zeros(tuple(shape), dtype=grad.dtype)
    out[(slice(None),) * dim + (index,)] = grad
    return out


select_backward = defop(
    "select_backward", _select_backward, nin=1, vjp=lambda g, dim, index: g.select(dim, index),
    jvp=LINEAR, api="ops.shape.select_backward.fn", test={"no_oracle": True}, batch_rule=grad_of_shape(),
    samples=lambda make: [S((make((4,)), (3, 4), 0, 1)), S((make((3,)), (3, 4), 1, -1))],
)  # fmt: skip


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
    return slice_backward.fn(g, tuple(input_shape), d, s, length)


narrow = method(
    defop(
        "narrow",
        _narrow,
        nin=1,
        vjp=_narrow_vjp,
        jvp=LINEAR,
        view=True,
        batch_rule=min_rank(
            1,
            lambda r: RuntimeError("narrow() cannot be applied to a 0-dim tensor."),
            along_dims(scalar_trick=False),
        ),
        samples=lambda make: [
            S((make((4, 3)), 0, 1, 2)),
            S((make((2, 5)), -1, 0, 5)),
            S((make((2, 5)), 1, -3, 2)),
            S((make((2, 3, 4)), 2, 1, 0)),
        ],
        error_samples=lambda make: [
            ErrorInput(
                S((make((2, 3)), 0, 1, 5)),
                RuntimeError,
                r"start \(1\) \+ length \(5\) exceeds dimension size \(2\)\.",
            ),
            ErrorInput(S((make((2, 3)), 2, 0, 1)), IndexError, r"but got 2"),
        ],
    )  # fmt: skip
)


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
    return select_backward.fn(g, tuple(input_shape), d, i)


select = method(
    defop(
        "select",
        _select,
        nin=1,
        vjp=_select_vjp,
        jvp=LINEAR,
        view=True,
        batch_rule=min_rank(
            1,
            lambda r: IndexError("select() cannot be applied to a 0-dim tensor."),
            along_dims(scalar_trick=False),
        ),
        samples=lambda make: [
            S((make((4, 3)), 0, 1)),
            S((make((2, 5)), -1, -2)),
            S((make((3,)), 0, 2)),
            S((make((2, 3, 4)), 1, 0)),
        ],
        error_samples=lambda make: [
            ErrorInput(
                S((make((2, 3)), 1, 5)),
                IndexError,
                r"select\(\): index 5 out of range for tensor of size \[2, 3\] at dimension 1",
            ),
            ErrorInput(S((make((2, 3)), 2, 0)), IndexError, r"but got 2"),
        ],
    )  # fmt: skip
)


def unbind(input, dim: int = 0) -> tuple:
    """The slices of `input` along `dim`, each a view."""
    if input.dim() == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = wrap_dim(dim, input.dim())
    return tuple(select.fn(input, d, i) for i in range(input.shape[d]))


def split(tensor, split_size_or_sections, dim: int = 0) -> tuple:
    """Views of `tensor` in pieces of split_size (last may be smaller) or of the given sizes."""
    if tensor.dim() == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = wrap_dim(dim, tensor.dim())
    size = tensor.shape[d]
    if isinstance(split_size_or_sections, int) or hasattr(split_size_or_sections, "__index__"):
        step = int(split_size_or_sections)
        if step < 0:
            raise RuntimeError(
                f"split expects split_size be non-negative, but got split_size={step}"
            )
        if step == 0:
            if size != 0:
                raise RuntimeError(
                    f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}"
                )
            return (narrow.fn(tensor, d, 0, 0),)
        sizes = [min(step, size - s) for s in range(0, size, step)] or [0]
    else:
        sizes = [int(s) for s in split_size_or_sections]
        if sum(sizes) != size or any(s < 0 for s in sizes):
            raise RuntimeError(
                f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's size at "
                f"dimension {d}), but got split_sizes={sizes}"
            )
    out, start = [], 0
    for s in sizes:
        out.append(narrow.fn(tensor, d, start, s))
        start += s
    return tuple(out)


def _split_method(self, split_size, dim: int = 0) -> tuple:
    return split(self, split_size, dim)


def chunk(input, chunks: int, dim: int = 0) -> tuple:
    """Up to `chunks` views of equal size (ceil) along dim."""
    if input.dim() == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = wrap_dim(dim, input.dim())
    size = input.shape[d]
    step = -(-size // chunks)
    if step == 0:
        return tuple(narrow.fn(input, d, 0, 0) for _ in range(chunks))
    return split(input, step, d)


# ------------------------------------------------------------------ flatten, broadcasting
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


def _flatten_rule(ax, args, bdims, attrs):
    x = front(args[0], bdims[0])
    rank = x.dim() - 1
    s, e = attrs["start_dim"], attrs["end_dim"]
    if rank == 0:
        wrap_dim(s, 0), wrap_dim(e, 0)
        return x.unsqueeze(1), 0
    return flatten.fn(x, pdim(s, rank), pdim(e, rank)), 0


flatten = method(
    defop(
        "flatten",
        _flatten,
        nin=1,
        vjp=lambda g, input_shape: g.reshape(input_shape),
        jvp=LINEAR,
        view=True,
        batch_rule=_flatten_rule,
        samples=lambda make: [
            S((make((2, 3, 4)),)),
            S((make((2, 3, 4)), 1)),
            S((make((2, 3, 4)), 0, -2)),
            S((make(()),)),
            S((make((0, 3)),)),
            S((make((2, 3, 4)),), {"start_dim": -1}),
        ],
        error_samples=lambda make: [
            ErrorInput(
                S((make((2, 3)), 1, 0)), RuntimeError, "start_dim cannot come after end_dim"
            ),
            ErrorInput(S((make((2, 3)), 2)), IndexError, r"\[-2, 1\], but got 2"),
        ],
    )  # fmt: skip
)


def _unflatten(xp, input, dim, sizes):
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


unflatten = method(
    defop(
        "unflatten",
        _unflatten,
        nin=1,
        vjp=lambda g, input_shape: g.reshape(input_shape),
        jvp=LINEAR,
        view=True,
        batch_rule=along_dims(scalar_trick=False),
        samples=lambda make: [
            S((make((2, 6)), 1, (2, 3))),
            S((make((6,)), 0, (3, -1))),
            S((make((2, 4, 3)), -2, (2, 1, 2))),
        ],
        error_samples=lambda make: [
            ErrorInput(
                S((make((2, 3)), 1, (2, 2))),
                RuntimeError,
                r"Provided sizes \[2, 2\] don't multiply up to the size of dim 1 \(3\)",
            ),
        ],
    )  # fmt: skip
)


def _expand_size(shape, size) -> tuple:
    size = tuple(int(s) for s in size)
    lead = len(size) - len(shape)
    if lead < 0:
        raise RuntimeError(
            f"expand(torch.FloatTensor{{{list(shape)}}}, size={list(size)}): the number of sizes "
            f"provided ({len(size)}) must be greater or equal to the number of dimensions in the "
            f"tensor ({len(shape)})"
        )
    full = []
    for i, s in enumerate(size):
        if i < lead:
            if s < 0:
                raise RuntimeError(
                    f"The expanded size of the tensor ({s}) isn't allowed in a leading, non-existing dimension {i}"
                )
            full.append(s)
            continue
        have = shape[i - lead]
        if s == -1:
            s = have
        elif have != 1 and have != s:
            raise RuntimeError(
                f"The expanded size of the tensor ({s}) must match the existing size ({have}) at "
                f"non-singleton dimension {i}.  Target sizes: {list(size)}.  Tensor sizes: {list(shape)}"
            )
        full.append(s)
    return tuple(full)


def _expand(xp, input, size):
    return xp.broadcast_to(input, _expand_size(input.shape, size))


expand = defop(
    "expand", _expand, nin=1, vjp=lambda g: g, jvp=LINEAR, view=True, api="Tensor.expand",
    batch_rule=generator(_expand_rule)(),
    samples=lambda make: [S((make((3, 1)), (2, 3, 4))), S((make(()), (2,))), S((make((1, 3)), (-1, 3))),
                          S((make((1, 3)), (0, 3)))],
    error_samples=lambda make: [
        ErrorInput(S((make((2, 3)), (3, 3))), RuntimeError, r"The expanded size of the tensor \(3\) must match the existing size \(2\) at non-singleton dimension 0"),
        ErrorInput(S((make((2, 3)), (3,))), RuntimeError, r"the number of sizes provided \(1\) must be greater or equal"),
    ],
)  # fmt: skip
method(expand, sizes=True)

broadcast_to = method(
    defop(
        "broadcast_to",
        _expand,
        nin=1,
        vjp=lambda g: g,
        jvp=LINEAR,
        view=True,
        batch_rule=generator(_expand_rule)(),
        node_name="ExpandBackward0",
        samples=lambda make: [
            S((make((3, 1)), (2, 3, 4))),
            S((make(()), (2,))),
            S((make((1, 3)), (-1, 3))),
            S((make((3,)), (0, 3))),
        ],
        error_samples=lambda make: [
            ErrorInput(S((make((2, 3)), (3, 3))), RuntimeError, "must match the existing size")
        ],
    )  # fmt: skip
)


def _expand_as(self, other):
    """self.expand(other.size())."""
    return expand.fn(self, tuple(other.shape))


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
    from .._core.tensor import Size

    shapes = tuple((s,) if isinstance(s, int) else tuple(s) for s in shapes)
    return Size(
        _broadcast(
            shapes,
            lambda out, got, j, k: RuntimeError(
                f"Attempting to broadcast a dimension of length {got} at {j - len(out)}! "
                f"Mismatching argument at index {k} had {shapes[k]}; but expected shape should "
                f"be broadcastable to {out}"
            ),
        )
    )


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
    return tuple(expand.fn(t, tuple(shape)) for t in tensors)


def _ravel(xp, input):
    return input.reshape(-1)


ravel = method(
    defop(
        "ravel",
        _ravel,
        vjp=lambda g, input_shape: g.reshape(input_shape),
        jvp=LINEAR,
        view=True,
        batch_rule=decompose(lambda input: reshape.fn(input, (-1,))),
        samples=lambda make: [S((make((2, 3)),)), S((make(()),)), S((make((0, 2)),))],
    )  # fmt: skip
)


# ------------------------------------------------------------------ joining
def _promote_list(arrays, attrs=None):
    """Cast a list of tensors to their common PyTorch result type."""
    from .._core import dtype as dt

    lst = arrays[0]
    if not lst:
        return arrays, None
    first = lst[0].dtype
    if all(a.dtype == first for a in lst):
        return arrays, None
    res = dt.result_type(*((dt.from_np(a.dtype), 1) for a in lst)).np
    return [[a.astype(res) for a in lst], *arrays[1:]], res


def _list_tangents(t, tensors) -> list:
    """Tangents of a list input, zeros where an element has none."""

    return [zeros_like(input) if ti is None else ti for ti, input in zip(t, tensors, strict=True)]


def _legacy_empty(shape) -> bool:
    return tuple(shape) == (0,)


def _cat_check(tensors, dim, what="torch.cat()"):
    if len(tensors) == 0:
        raise ValueError(f"{what}: expected a non-empty list of Tensors")
    ref = next((t for t in tensors if not _legacy_empty(t.shape)), None)
    for i, t in enumerate(tensors):
        if t.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    if ref is None:
        return None
    d = wrap_dim(dim, ref.ndim)
    for i, t in enumerate(tensors):
        if _legacy_empty(t.shape) or t is ref:
            continue
        if t.ndim != ref.ndim:
            raise RuntimeError(
                f"Tensors must have same number of dimensions: got {ref.ndim} and {t.ndim}"
            )
        for k in range(ref.ndim):
            if k != d and t.shape[k] != ref.shape[k]:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {d}. Expected size "
                    f"{ref.shape[k]} but got size {t.shape[k]} for tensor number {i} in the list."
                )
    return d


def _lshape(x, bd) -> tuple:
    """The logical shape of an inner value."""
    s = tuple(x.shape)
    return s if bd is None else s[:bd] + s[bd + 1 :]


class _Shaped:
    """Stands for a tensor of a logical shape in the shape checks."""

    __slots__ = ("shape", "ndim")

    def __init__(self, shape):
        self.shape, self.ndim = shape, len(shape)


def _cat_rule(ax, args, bdims, attrs):
    xs, bds = args[0], bdims[0]
    shapes = [_lshape(x, b) for x, b in zip(xs, bds)]
    d = _cat_check([_Shaped(s) for s in shapes], attrs["dim"])
    parts = [materialize(ax, x, b) for x, b in zip(xs, bds)]
    if d is None:  # only legacy empty (0,) tensors: their cat is (0,)
        return cat.fn(parts, 1), 0
    # Legacy empties are skipped by cat, but still take part in type promotion: give
    # them the reference shape with 0 at dim instead of dropping them.
    ref = next(s for s in shapes if not _legacy_empty(s))
    empty = (ax.size, *ref[:d], 0, *ref[d + 1 :])
    parts = [p.reshape(empty) if _legacy_empty(s) else p for p, s in zip(parts, shapes)]
    return cat.fn(parts, d + 1), 0


def _cat(xp, tensors, dim=0):
    d = _cat_check(tensors, dim)
    if d is None:
        return xp.concatenate([t.reshape(0) for t in tensors])
    return xp.concatenate([t for t in tensors if not _legacy_empty(t.shape)], axis=d)


def _cat_vjp(g, tensors_shape, dim):
    out, off = [], 0
    d = wrap_dim(dim, g.dim())
    for shape in tensors_shape:
        if _legacy_empty(shape) and g.dim() != 1:
            out.append(g.reshape(-1).narrow(0, 0, 0))
            continue
        out.append(g.narrow(d, off, shape[d]))
        off += shape[d]
    return out


def _cat_samples(make):
    yield S(([make((2, 3)), make((1, 3))],))
    yield S(([make((2, 3)), make((2, 1)), make((2, 2))], 1))
    yield S(([make((2, 3, 2)), make((2, 3, 1))],), {"dim": -1})
    yield S(([make((3,))],))
    yield S(([make((2, 3)), make((0,)), make((0, 3))],))
    yield S(([make((2, 3)), make((2, 3), dtype="int64")], 1))


def _cat_errors(make):
    yield ErrorInput(
        S(([make((2, 3)), make((3, 3))], 1)),
        RuntimeError,
        "Sizes of tensors must match except in dimension 1. Expected size 2 but got size 3 for tensor number 1 in the list.",
    )
    yield ErrorInput(
        S(([make(())],)),
        RuntimeError,
        r"zero-dimensional tensor \(at position 0\) cannot be concatenated",
    )
    yield ErrorInput(
        S(([make((2, 3)), make((3,))],)),
        RuntimeError,
        "Tensors must have same number of dimensions: got 2 and 1",
    )
    yield ErrorInput(S(([make((2, 3))], 2)), IndexError, r"\[-2, 1\], but got 2")


cat = defop(
    "cat", _cat, nin=1, list_inputs=(0,), vjp=_cat_vjp, batch_rule=_cat_rule,
    jvp=lambda t, tensors, dim: cat.fn(_list_tangents(t, tensors), dim), prepare=_promote_list, out=True,
    samples=_cat_samples, error_samples=_cat_errors,
)  # fmt: skip


def concatenate(tensors, axis: int = 0, out=None):
    """Alias of cat."""
    return cat.fn(tensors, axis, out=out)


def concat(tensors, dim: int = 0, *, out=None):
    """Alias of cat."""
    return cat.fn(tensors, dim, out=out)


def _stack_check(shapes) -> None:
    if len(shapes) == 0:
        raise RuntimeError("stack expects a non-empty TensorList")
    for i, s in enumerate(shapes[1:], 1):
        if tuple(s) != tuple(shapes[0]):
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(shapes[0])} at entry 0 "
                f"and {list(s)} at entry {i}"
            )


def _stack(xp, tensors, dim=0):
    _stack_check([t.shape for t in tensors])
    return xp.stack(tensors, axis=wrap_dim(dim, tensors[0].ndim + 1))


def _stack_rule(ax, args, bdims, attrs):
    xs, bds = args[0], bdims[0]
    shapes = [_lshape(x, b) for x, b in zip(xs, bds)]
    _stack_check(shapes)
    d = pdim(attrs["dim"], len(shapes[0]) + 1)
    return stack.fn([materialize(ax, x, b) for x, b in zip(xs, bds)], d), 0


stack = defop(
    "stack", _stack, nin=1, list_inputs=(0,), prepare=_promote_list, out=True, batch_rule=_stack_rule,
    jvp=lambda t, tensors, dim: stack.fn(_list_tangents(t, tensors), dim),
    vjp=lambda g, tensors, dim: list(g.unbind(dim)),
    samples=lambda make: [S(([make((2, 3)), make((2, 3))],)), S(([make((2, 3)), make((2, 3)), make((2, 3))], -1)),
                          S(([make(()), make(())],)), S(([make((0, 3))], 1)), S(([make((3,)), make((3,), dtype="int64")],), {"dim": 1})],
    error_samples=lambda make: [
        ErrorInput(S(([make((2, 3)), make((3,))],)), RuntimeError, r"stack expects each tensor to be equal size, but got \[2, 3\] at entry 0 and \[3\] at entry 1"),
        ErrorInput(S(([make((2, 3))], 3)), IndexError, r"\[-3, 2\], but got 3"),
    ],
)  # fmt: skip


def _atleast_shape(shape, nd: int) -> tuple:
    shape = tuple(shape)
    if len(shape) >= nd:
        return shape
    if nd == 1:
        return (1,)
    if nd == 2:
        return (1,) * (2 - len(shape)) + shape
    return {0: (1, 1, 1), 1: (1, *shape, 1), 2: (*shape, 1)}[len(shape)]


def _join_axis(name: str, shapes) -> int:
    if name == "hstack":
        return 0 if all(len(s) <= 1 for s in shapes) else 1
    return {"vstack": 0, "dstack": 2}[name]


_JOIN_ND = {"hstack": 1, "vstack": 2, "dstack": 3}


def _joiner(name: str):
    nd = _JOIN_ND[name]

    def kernel(xp, tensors):
        if len(tensors) == 0:
            raise RuntimeError(f"{name} expects a non-empty TensorList")
        parts = [t.reshape(_atleast_shape(t.shape, nd)) for t in tensors]
        return _cat(xp, parts, _join_axis(name, [t.shape for t in tensors]))

    def as_cat(tensors):
        parts = [reshape.fn(t, _atleast_shape(t.shape, nd)) for t in tensors]
        return cat.fn(parts, _join_axis(name, [tuple(t.shape) for t in tensors]))

    def vjp(g, tensors_shape):
        axis = _join_axis(name, [tuple(s) for s in tensors_shape])
        out, off = [], 0
        for shape in tensors_shape:
            n = _atleast_shape(shape, nd)[axis]
            out.append(g.narrow(axis, off, n).reshape(shape))
            off += n
        return out

    def samples(make):
        other = {"hstack": (2, 1), "vstack": (1, 3), "dstack": (2, 3)}[name]
        yield S(([make((2, 3)), make(other)],))
        yield S(([make((3,)), make((2,))],) if name == "hstack" else ([make((3,)), make((3,))],))
        yield S(([make(()), make(())],))
        yield S(([make((2, 3, 2)), make((2, 3, 2))],))
        yield S(([make((2, 3)), make((2, 3), dtype="int64")],))

    def jvp(t, tensors):
        return op.fn(_list_tangents(t, tensors))

    op = defop(
        name,
        kernel,
        nin=1,
        list_inputs=(0,),
        vjp=vjp,
        jvp=jvp,
        prepare=_promote_list,
        out=True,
        samples=samples,
        batch_rule=decompose(as_cat),
    )
    return op


hstack = _joiner("hstack")
vstack = _joiner("vstack")
dstack = _joiner("dstack")


def row_stack(tensors, *, out=None):
    """Alias of vstack."""
    return vstack.fn(tensors, out=out)


def _atleast(nd: int):
    def fn(*tensors):
        if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
            return tuple(fn(t) for t in tensors[0])
        if len(tensors) != 1:
            return tuple(fn(t) for t in tensors)
        t = tensors[0]
        shape = _atleast_shape(t.shape, nd)
        return t if shape == tuple(t.shape) else reshape.fn(t, shape)

    fn.__name__ = f"atleast_{nd}d"
    fn.__doc__ = f"The tensor(s) viewed with at least {nd} dimensions."
    return fn


atleast_1d, atleast_2d, atleast_3d = _atleast(1), _atleast(2), _atleast(3)


def _section_bounds(size: int, sections: int) -> list:
    q, r = divmod(size, sections)
    bounds, start = [], 0
    for i in range(sections):
        n = q + (1 if i < r else 0)
        bounds.append((start, n))
        start += n
    return bounds


def tensor_split(input, indices_or_sections, dim: int = 0) -> tuple:
    """Views of `input` split into sections (as equal as possible) or at the given indices."""
    if input.dim() == 0:
        raise RuntimeError(
            "tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims"
        )
    d = wrap_dim(dim, input.dim())
    size = input.shape[d]
    ios = indices_or_sections
    if hasattr(ios, "dim") and ios.dim() == 0:
        ios = int(ios.item())
    if isinstance(ios, int):
        if ios <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {ios}")
        bounds = _section_bounds(size, ios)
    else:
        idx = [int(i) for i in (ios.tolist() if hasattr(ios, "tolist") else ios)]
        edges = [0, *idx, None]
        bounds = []
        for a, b in zip(edges[:-1], edges[1:], strict=True):
            start, stop, _ = slice(a, b).indices(size)
            bounds.append((start, max(stop - start, 0)))
    return tuple(narrow.fn(input, d, s, n) for s, n in bounds)


# ------------------------------------------------------------------ reorderings
def _dim_list(dims, ndim: int, what: str) -> tuple:
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    return tuple(wrap_dim(d, ndim) for d in dims)


def _movedim(xp, input, source, destination):
    src = _dim_list(source, input.ndim, "source")
    dst = _dim_list(destination, input.ndim, "destination")
    if len(src) != len(dst):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({list(src)} dims) should contain the "
            f"same number of dims as destination ({list(dst)} dims)"
        )
    if len(set(src)) != len(src):
        raise RuntimeError(f"movedim: repeated dim in `source` ({list(src)})")
    if len(set(dst)) != len(dst):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({list(dst)})")
    return xp.moveaxis(input, src, dst) if input.ndim else input[...]


movedim = method(
    defop(
        "movedim",
        _movedim,
        nin=1,
        vjp=lambda g, source, destination: g.movedim(destination, source),
        jvp=LINEAR,
        view=True,
        batch_rule=along_dims(("source", "destination")),
        samples=lambda make: [
            S((make((2, 3, 4)), 0, -1)),
            S((make((2, 3, 4)), (0, 1), (2, 0))),
            S((make(()), 0, 0)),
            S((make((2, 0, 3)), -1, 0)),
        ],
        error_samples=lambda make: [
            ErrorInput(
                S((make((2, 3)), (0, 1), (0,))),
                RuntimeError,
                "should contain the same number of dims",
            ),
            ErrorInput(
                S((make((2, 3)), (0, 0), (0, 1))),
                RuntimeError,
                r"repeated dim in `source` \(\[0, 0\]\)",
            ),
            ErrorInput(S((make((2, 3)), 2, 0)), IndexError, r"\[-2, 1\], but got 2"),
        ],
    )  # fmt: skip
)
method(movedim, "moveaxis")


def moveaxis(input, source, destination):
    """Alias of movedim."""
    return movedim.fn(input, source, destination)


def _flip(xp, input, dims):
    axes = _dim_list(dims, input.ndim, "dims")
    for a in set(axes):
        if axes.count(a) > 1:
            raise RuntimeError(f"dim {a} appears multiple times in the list of dims")
    return xp.flip(input, axes).copy() if input.ndim and axes else input.copy()


flip = method(
    defop(
        "flip",
        _flip,
        nin=1,
        vjp=lambda g, dims: g.flip(dims),
        jvp=LINEAR,
        batch_rule=dims_rule(),
        samples=lambda make: [
            S((make((2, 3, 4)), (0, 2))),
            S((make((2, 3)), (-1,))),
            S((make(()), (0,))),
            S((make((2, 3)), ())),
            S((make((0, 3)), (1,))),
        ],
        error_samples=lambda make: [
            ErrorInput(
                S((make((2, 3)), (0, 0))),
                RuntimeError,
                "dim 0 appears multiple times in the list of dims",
            ),
            ErrorInput(S((make((2, 3)), (2,))), IndexError, r"\[-2, 1\], but got 2"),
        ],
    )  # fmt: skip
)


def fliplr(input):
    """Flip the columns (dim 1)."""
    if input.dim() < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip.fn(input, (1,))


def flipud(input):
    """Flip the rows (dim 0)."""
    if input.dim() < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip.fn(input, (0,))


def _roll(xp, input, shifts, dims=None):
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    if dims is None or (not isinstance(dims, int) and len(dims) == 0):
        if len(shifts) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:0")
        return xp.roll(input.reshape(-1), shifts[0]).reshape(input.shape)
    axes = _dim_list(dims, input.ndim, "dims")
    if len(shifts) != len(axes):
        raise RuntimeError(
            f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(axes)}"
        )
    return xp.roll(input, shifts, axes)


def _roll_rule(op):
    by_dims = _dims_rule(op)

    def rule(ax, args, bdims, attrs):
        dims = attrs.get("dims")
        if dims is not None and (isinstance(dims, int) or len(dims)):
            return by_dims(ax, args, bdims, attrs)
        # No dims: roll the flattened logical tensor.
        shifts = attrs["shifts"]
        n = 1 if isinstance(shifts, int) else len(shifts)
        if n != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {n}, dims:0")
        x = front(args[0], bdims[0])
        return op.fn(x.reshape(ax.size, -1), shifts, 1).reshape(x.shape), 0

    return rule


def _neg_shifts(shifts):
    return -shifts if isinstance(shifts, int) else tuple(-s for s in shifts)


roll = method(
    defop(
        "roll",
        _roll,
        nin=1,
        vjp=lambda g, shifts, dims: g.roll(_neg_shifts(shifts), dims),
        jvp=LINEAR,
        batch_rule=generator(_roll_rule)(),
        samples=lambda make: [
            S((make((2, 3, 4)), 1)),
            S((make((2, 3, 4)), (1, -2), (0, 2))),
            S((make((2, 3)), 5, -1)),
            S((make(()), 2)),
            S((make((0, 3)), 1, 1)),
            S((make((2, 3)), -1), {"dims": 0}),
        ],
        error_samples=lambda make: [
            ErrorInput(
                S((make((2, 3)), (1, 2), (0,))),
                RuntimeError,
                "shifts and dimensions must align. shifts: 2, dims:1",
            )
        ],
    )  # fmt: skip
)


def _rot90_dims(dims, ndim: int) -> tuple[int, int]:
    dims = tuple(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {ndim}")
    d0, d1 = wrap_dim(dims[0], ndim), wrap_dim(dims[1], ndim)
    if d0 == d1:
        raise RuntimeError(
            f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}"
        )
    return d0, d1


def _rot90(xp, input, k=1, dims=(0, 1)):
    return xp.rot90(input, k, _rot90_dims(dims, input.ndim)).copy()


def _rot90_rule(ax, args, bdims, attrs):
    x = front(args[0], bdims[0])
    d0, d1 = _rot90_dims(attrs["dims"], x.dim() - 1)
    return rot90.fn(x, attrs["k"], (d0 + 1, d1 + 1)), 0


rot90 = method(
    defop(
        "rot90",
        _rot90,
        nin=1,
        vjp=lambda g, k, dims: g.rot90(-k, dims),
        jvp=LINEAR,
        batch_rule=_rot90_rule,
        samples=lambda make: [
            S((make((2, 3)),)),
            S((make((2, 3, 4)), 2, (2, 0))),
            S((make((2, 3)), -1)),
            S((make((2, 3)), 3, (-1, -2))),
            S((make((0, 3)), 1)),
        ],
        error_samples=lambda make: [
            ErrorInput(
                S((make((3,)),)), RuntimeError, "expected total dims >= 2, but got total dims = 1"
            ),
            ErrorInput(
                S((make((2, 3)), 1, (0, 0))),
                RuntimeError,
                "expected rotation dims to be different, but got dim0 = 0 and dim1 = 0",
            ),
        ],
    )  # fmt: skip
)


# ------------------------------------------------------------------ triangles and diagonals
def _tri_error(name: str):
    return lambda rank: RuntimeError(f"{name}: input tensor must have at least 2 dimensions")


def _tri(name: str, fn_name: str):
    def kernel(xp, input, diagonal=0):
        if input.ndim < 2:
            raise _tri_error(name)(input.ndim)
        return getattr(xp, fn_name)(input, diagonal)

    kernel.__name__ = "_" + name
    return kernel


def _tri_samples(make):
    yield S((make((3, 3)),))
    yield S((make((3, 4)), 1))
    yield S((make((2, 3, 4)), -1))
    yield S((make((4, 3)),), {"diagonal": 2})
    yield S((make((0, 3)),))


tril = defop(
    "tril", _tri("tril", "tril"), nin=1, vjp=lambda g, diagonal: g.tril(diagonal), jvp=LINEAR, out=True,
    samples=_tri_samples, test={"dtypes": ("float32", "float64", "int64", "bool")}, batch_rule=min_rank(2, _tri_error("tril")),
    error_samples=lambda make: [ErrorInput(S((make((3,)),)), RuntimeError, "tril: input tensor must have at least 2 dimensions")],
)  # fmt: skip
triu = defop(
    "triu", _tri("triu", "triu"), nin=1, vjp=lambda g, diagonal: g.triu(diagonal), jvp=LINEAR, out=True,
    samples=_tri_samples, test={"dtypes": ("float32", "float64", "int64", "bool")}, batch_rule=min_rank(2, _tri_error("triu")),
    error_samples=lambda make: [ErrorInput(S((make((3,)),)), RuntimeError, "triu: input tensor must have at least 2 dimensions")],
)  # fmt: skip
inplace(method(tril))
inplace(method(triu))


def _diag_geometry(shape, offset, dim1, dim2):
    nd = len(shape)
    d1, d2 = wrap_dim(dim1, nd), wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n1, n2 = shape[d1], shape[d2]
    length = max(min(n1 + min(offset, 0), n2 - max(offset, 0)), 0)
    return d1, d2, length


def _diagonal(xp, input, offset=0, dim1=0, dim2=1):
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
    return xp.lib.stride_tricks.as_strided(input, shape, strides)


def _diagonal_backward(xp, grad, shape, offset, dim1, dim2):
    out = xp.zeros(tuple(shape), dtype=grad.dtype)
    _diagonal(xp, out, offset, dim1, dim2)[...] = grad
    return out


diagonal_backward = defop(
    "diagonal_backward", _diagonal_backward, nin=1,
    vjp=lambda g, offset, dim1, dim2: g.diagonal(offset, dim1, dim2), jvp=LINEAR,
    api="ops.shape.diagonal_backward.fn", test={"no_oracle": True}, batch_rule=grad_of_shape(("dim1", "dim2")),
    samples=lambda make: [S((make((3,)), (3, 3), 0, 0, 1)), S((make((2, 2)), (2, 3, 4), 1, -1, 1))],
)  # fmt: skip


def _diagonal_samples(make):
    yield S((make((3, 3)),))
    yield S((make((3, 4)), 1))
    yield S((make((3, 4)), -2))
    yield S((make((2, 3, 4)), 0, -1, 0))
    yield S((make((2, 3, 4)),), {"offset": 1, "dim1": 2, "dim2": 1})
    yield S((make((2, 3)), 5))
    yield S((make((0, 3)),))


diagonal = method(
    defop(
        "diagonal",
        _diagonal,
        nin=1,
        view=True,
        jvp=LINEAR,
        batch_rule=along_dims(("dim1", "dim2"), scalar_trick=False),
        vjp=lambda g, input_shape, offset, dim1, dim2: diagonal_backward.fn(
            g, tuple(input_shape), offset, dim1, dim2
        ),
        samples=_diagonal_samples,
        error_samples=lambda make: [
            ErrorInput(
                S((make((2, 3)), 0, 0, 0)),
                RuntimeError,
                "diagonal dimensions cannot be identical 0, 0",
            ),
            ErrorInput(S((make((2, 3)), 0, 0, 2)), IndexError, r"\[-2, 1\], but got 2"),
        ],
    )  # fmt: skip
)


def _diag_embed(xp, input, offset=0, dim1=-2, dim2=-1):
    nd = input.ndim + 1
    d1, d2 = wrap_dim(dim1, nd), wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n = (input.shape[-1] if input.ndim else 1) + abs(offset)
    batch = list(input.shape[:-1])
    shape = []
    for i in range(nd):
        shape.append(n if i in (d1, d2) else batch.pop(0))
    out = xp.zeros(tuple(shape), dtype=input.dtype)
    _diagonal(xp, out, offset, d1, d2)[...] = input
    return out


def _diag_embed_rule(ax, args, bdims, attrs):
    x = front(args[0], bdims[0])
    rank = x.dim() - 1
    if rank == 0:  # a 0-d input embeds like its (1,) reshape
        x, rank = x.unsqueeze(1), 1
    d1, d2 = pdim(attrs["dim1"], rank + 1), pdim(attrs["dim2"], rank + 1)
    return diag_embed.fn(x, attrs["offset"], d1, d2), 0


diag_embed = method(
    defop(
        "diag_embed",
        _diag_embed,
        nin=1,
        jvp=LINEAR,
        batch_rule=_diag_embed_rule,
        vjp=lambda g, offset, dim1, dim2: g.diagonal(offset, dim1, dim2),
        samples=lambda make: [
            S((make((3,)),)),
            S((make((2, 3)), 1)),
            S((make((2, 3)), -1, 0, 2)),
            S((make((2, 3)),), {"offset": 0, "dim1": 1, "dim2": 0}),
            S((make((0, 2)),)),
        ],
        error_samples=lambda make: [
            ErrorInput(
                S((make((2, 3)), 0, 0, 0)),
                RuntimeError,
                "diagonal dimensions cannot be identical 0, 0",
            )
        ],
    )  # fmt: skip
)


def _diag_error(ndim: int) -> RuntimeError:
    return RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {ndim}D")


def _diag(xp, input, diagonal=0):
    if input.ndim == 1:
        return _diag_embed(xp, input, diagonal, 0, 1)
    if input.ndim == 2:
        return _diagonal(xp, input, diagonal, 0, 1).copy()
    raise _diag_error(input.ndim)


def _diag_rule(ax, args, bdims, attrs):
    x = front(args[0], bdims[0])
    rank, k = x.dim() - 1, attrs["diagonal"]
    if rank == 1:
        return diag_embed.fn(x, k, 1, 2), 0
    if rank == 2:
        return diagonal.fn(x, k, 1, 2).clone(), 0  # diag returns new memory, not a view
    raise _diag_error(rank)


def _diag_vjp(g, input_shape, diagonal):
    if len(input_shape) == 1:
        return g.diagonal(diagonal)
    return diagonal_backward.fn(g, tuple(input_shape), diagonal, 0, 1)


diag = method(
    defop(
        "diag",
        _diag,
        nin=1,
        vjp=_diag_vjp,
        jvp=LINEAR,
        out=True,
        batch_rule=_diag_rule,
        samples=lambda make: [
            S((make((3,)),)),
            S((make((3,)), 1)),
            S((make((3,)), -2)),
            S((make((3, 4)),)),
            S((make((3, 4)), 2)),
            S((make((4, 3)), -1)),
            S((make((0,)),)),
        ],
        error_samples=lambda make: [
            ErrorInput(
                S((make((2, 2, 2)),)), RuntimeError, r"diag\(\): Supports 1D or 2D tensors. Got 3D"
            )
        ],
    )  # fmt: skip
)


# ------------------------------------------------------------------ repetition
def _repeat_check(shape: tuple, repeats) -> tuple:
    repeats = tuple(int(r) for r in repeats)
    if len(repeats) < len(shape):
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor"
        )
    if any(r < 0 for r in repeats):
        shape = (1,) * (len(repeats) - len(shape)) + tuple(shape)
        out = [r * n for r, n in zip(repeats, shape, strict=True)]
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(out)}: {out}")
    return repeats


def _repeat(xp, input, repeats):
    repeats = _repeat_check(input.shape, repeats)
    input = input.reshape((1,) * (len(repeats) - input.ndim) + input.shape)
    return xp.tile(input, repeats)


def _repeat_rule(ax, args, bdims, attrs):
    x = front(args[0], bdims[0])
    reps = _repeat_check(tuple(x.shape[1:]), attrs["repeats"])
    return repeat.fn(pad_to(x, len(reps)), (1, *reps)), 0


def _repeat_vjp(g, input_shape, repeats):
    repeats = tuple(int(r) for r in repeats)
    shape = (1,) * (len(repeats) - len(input_shape)) + tuple(input_shape)
    split = []
    for r, s in zip(repeats, shape, strict=True):
        split += [r, s]
    return g.reshape(split).sum(tuple(range(0, 2 * len(shape), 2))).reshape(input_shape)


repeat = defop(
    "repeat", _repeat, nin=1, vjp=_repeat_vjp, jvp=LINEAR, api="Tensor.repeat", batch_rule=_repeat_rule,
    samples=lambda make: [S((make((2, 3)), (2, 1))), S((make((2, 3)), (2, 1, 3))), S((make(()), (3,))),
                          S((make((3,)), (2, 0))), S((make((0, 2)), (2, 2)))],
    error_samples=lambda make: [ErrorInput(S((make((2, 3)), (2,))), RuntimeError, "Number of dimensions of repeat dims can not be smaller")],
)  # fmt: skip
method(repeat, sizes=True)


def _tile_reps(ndim: int, dims) -> tuple:
    dims = tuple(int(d) for d in dims)
    return (1,) * (ndim - len(dims)) + dims


def _tile(xp, input, dims):
    return _repeat(xp, input, _tile_reps(input.ndim, dims))


def _tile_vjp(g, input_shape, dims):
    dims = tuple(int(d) for d in dims)
    return _repeat_vjp(g, input_shape, (1,) * (len(input_shape) - len(dims)) + dims)


tile = method(
    defop(
        "tile",
        _tile,
        nin=1,
        vjp=_tile_vjp,
        jvp=LINEAR,
        batch_rule=decompose(lambda input, dims: repeat.fn(input, _tile_reps(input.dim(), dims))),
        samples=lambda make: [
            S((make((2, 3)), (2,))),
            S((make((2, 3)), (2, 1, 3))),
            S((make(()), (3,))),
            S((make((2, 3)), ())),
        ],
    )  # fmt: skip
)


def _repeat_interleave(xp, input, repeats=None, dim=None, *, output_size=None):
    if repeats is None:
        reps = input
        return xp.repeat(xp.arange(reps.shape[0], dtype=xp.int64), reps)
    if dim is None:
        input = input.reshape(-1)
        d = 0
    else:
        d = wrap_dim(dim, input.ndim)
    if not isinstance(repeats, int) and getattr(repeats, "ndim", 0) == 1 and repeats.shape[0] != 1:
        if repeats.shape[0] != input.shape[d]:
            raise RuntimeError(
                f"repeats must have the same size as input along dim, but got repeats.size(0) = "
                f"{repeats.shape[0]} and input.size({dim if dim is not None else 0}) = {input.shape[d]}"
            )
    elif not isinstance(repeats, int):
        repeats = int(repeats.reshape(-1)[0])
    if input.ndim == 0:
        input = input.reshape(1)
    return xp.repeat(input, repeats, axis=d)


def _repeat_interleave_rule(ax, args, bdims, attrs):
    x, r = args
    bx, br = bdims
    dim, size = attrs.get("dim"), attrs.get("output_size")
    if r is None:  # repeat_interleave(repeats): the indices 0..n-1, each repeated
        n = _lshape(x, bx)[0] if lrank(x, bx) else 1
        x, bx, r, br, dim = arange(n, device=x.device), None, x, bx, 0
    x = materialize(ax, x, bx)
    if dim is None:
        x, d = x.reshape(ax.size, -1), 1
    else:
        rank = x.dim() - 1
        if rank == 0:
            x = x.unsqueeze(1)
        d = pdim(dim, rank)
    if br is None:
        return repeat_interleave.fn(x, r, d, output_size=size), 0
    # Batched repeats: one call on the batch folded into dim, which is right only when
    # every batch element gets the same output length; that length is data, so check it.
    n = x.shape[d]
    r = front(r, br)
    if r.dim() == 2 and r.shape[1] != 1:
        if r.shape[1] != n:
            raise RuntimeError(
                f"repeats must have the same size as input along dim, but got repeats.size(0) = "
                f"{r.shape[1]} and input.size({dim if dim is not None else 0}) = {n}"
            )
    else:  # one repeat count per batch element
        r = r.reshape(ax.size, -1).narrow(1, 0, 1).expand(ax.size, n)
    sums = r.sum(1)
    if not bool((sums == sums.max()).all()):
        raise RuntimeError(
            "vmap: repeat_interleave: the repeats give the batch elements outputs of different "
            f"sizes along dim ({sums.tolist()}); vmap needs one output size"
        )
    rest = x.movedim(d, 1).shape[2:]
    flat = x.movedim(d, 1).reshape(-1, *rest)
    out = repeat_interleave.fn(flat, r.reshape(-1), 0)
    return out.reshape(ax.size, -1, *rest).movedim(1, d), 0


def _segment_sum(xp, grad, repeats, dim):
    """Sum consecutive runs of `grad` along dim with lengths `repeats` (repeat_interleave's adjoint)."""
    if isinstance(repeats, int):
        shape = (
            grad.shape[:dim] + (grad.shape[dim] // max(repeats, 1), repeats) + grad.shape[dim + 1 :]
        )
        if repeats == 0:
            return grad.sum(axis=dim, keepdims=True)[(slice(None),) * dim + (slice(0, 0),)]
        return grad.reshape(shape).sum(axis=dim + 1)
    repeats = xp.asarray(repeats)
    ends = xp.cumsum(repeats)
    c = xp.cumsum(grad, axis=dim)
    pad = xp.zeros(grad.shape[:dim] + (1,) + grad.shape[dim + 1 :], dtype=grad.dtype)
    c = xp.concatenate([pad, c], axis=dim)
    starts = ends - repeats
    return xp.take(c, ends, axis=dim) - xp.take(c, starts, axis=dim)


segment_sum = defop(
    "repeat_interleave_backward", _segment_sum, nin=1, jvp=LINEAR,
    vjp=lambda g, repeats, dim: g.repeat_interleave(repeats, dim),
    api="ops.shape.segment_sum.fn", test={"no_oracle": True}, batch_rule=along_dims(scalar_trick=False),
    samples=lambda make: [S((make((6, 2)), 2, 0)), S((make((2, 6)), 3, 1))],
)  # fmt: skip


def _repeat_interleave_vjp(g, input_shape, repeats, dim):
    d = 0 if dim is None else wrap_dim(dim, len(input_shape))
    if not isinstance(repeats, int):
        if repeats._level:
            raise RuntimeError(
                "vmap: repeat_interleave's gradient needs its repeats as data; repeats batched "
                "by a transform (a different output length per element) are not supported"
            )
        repeats = repeats.detach()
        repeats = (
            int(repeats.reshape(-1)[0].item()) if repeats.numel() == 1 else repeats.cpu().numpy()
        )
    return segment_sum.fn(g, repeats, d).reshape(input_shape)


def _repeat_interleave_samples(make):
    import numpy as np

    yield S((make((2, 3)), 2))
    yield S((make((2, 3)), 2), {"dim": 1})
    yield S((make((2, 3)), np.array([1, 0, 2])), {"dim": -1})
    yield S((make((3,)), np.array([2])), {"dim": 0})
    yield S((make(()), 3))
    yield S((make((2, 3)), np.array([1, 2, 0, 3, 1, 1])))


repeat_interleave = (
    defop(
        "repeat_interleave",
        _repeat_interleave,
        nin=2,
        vjp=(_repeat_interleave_vjp, None),
        jvp=LINEAR,
        samples=_repeat_interleave_samples,
        batch_rule=_repeat_interleave_rule,
        test={"dtypes": ("float32", "float64", "int64")},
        error_samples=lambda make: [
            ErrorInput(
                S((make((2, 3)), make((2,), 1, 3, dtype="int64")), {"dim": 1}),
                RuntimeError,
                r"repeats must have the same size as input along dim, but got repeats.size\(0\) = 2 and input.size\(1\) = 3",
            ),
        ],
    )  # fmt: skip
)


def _repeat_interleave_fn(
    input, repeats=None, dim: int | None = None, *, output_size: int | None = None
):
    """Repeat elements (int or per-element tensor repeats); with one tensor argument, the indices
    ``0..n-1`` repeated by its values."""
    return repeat_interleave.fn(input, repeats, dim, output_size=output_size)


# ------------------------------------------------------------------ public names
tensor_methods(
    {
        "T": property(_T),
        "mT": property(_mT),
        "H": property(_H),
        "mH": property(_mH),
        "adjoint": adjoint,
        "view": _view_method,
        "view_as": _view_as,
        "swapaxes": swapaxes,
        "swapdims": swapdims,
        "unbind": unbind,
        "split": _split_method,
        "chunk": chunk,
        "expand_as": _expand_as,
        "tensor_split": tensor_split,
        "fliplr": fliplr,
        "flipud": flipud,
        "repeat_interleave": _repeat_interleave_fn,
    }
)
