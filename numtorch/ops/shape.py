"""Shape and view ops: reshape, permute, expand, cat, split, flips, diagonals."""

from __future__ import annotations

import warnings

from ._families import LINEAR, inplace, method, promote
from .._core.op import ErrorInput, defop
from ..testing.samples import S


def wrap_dim(d: int, ndim: int) -> int:
    """A dim in [-ndim, ndim) as a non-negative axis (0-d tensors accept -1 and 0)."""
    n = max(ndim, 1)
    if not -n <= d < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})"
        )
    return d % n


def _bad_dim(make, fn_args=lambda x: (x, 2)):
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


def _reshape(xp, x, shape):
    return x.reshape(infer_size(shape, x.size))


reshape = defop(
    "reshape", _reshape, nin=1, vjp=lambda g, x: g.reshape(x.shape), jvp=LINEAR, view=True,
    samples=lambda make: [S((make((2, 3)), (3, 2))), S((make((2, 3)), (-1,))), S((make(()), (1, 1))),
                          S((make((0, 3)), (3, 0))), S((make((2, 3, 4)), (4, -1)))],
    error_samples=lambda make: [ErrorInput(S((make((2, 3)), (4,))), RuntimeError, r"shape '\[4\]' is invalid for input of size 6"),
                                ErrorInput(S((make((2, 3)), (-1, -1))), RuntimeError, "only one dimension can be inferred")],
)  # fmt: skip
method(reshape, sizes=True)


def _view(xp, x, size):
    size = infer_size(size, x.size)
    try:
        return xp.reshape(x, size, copy=False)
    except ValueError:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
        ) from None


view = defop(
    "view", _view, nin=1, vjp=lambda g, x: g.reshape(x.shape), jvp=LINEAR, view=True, api="Tensor.view",
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


def _expand(xp, x, size):
    size = tuple(size)
    lead = len(size) - x.ndim
    if lead < 0:
        raise RuntimeError(
            f"expand(torch.FloatTensor{{{list(x.shape)}}}, size={list(size)}): the number of "
            "sizes provided (%d) must be greater or equal to the number of dimensions in the "
            "tensor (%d)" % (len(size), x.ndim)
        )
    full = tuple(x.shape[i - lead] if s == -1 and i >= lead else s for i, s in enumerate(size))
    return xp.broadcast_to(x, full)


expand = defop(
    "expand", _expand, nin=1, vjp=lambda g: g, jvp=LINEAR, view=True, api="Tensor.expand",
    samples=lambda make: [S((make((3, 1)), (2, 3, 4))), S((make(()), (2,))), S((make((1, 3)), (-1, 3)))],
)  # fmt: skip
method(expand, sizes=True)


# ------------------------------------------------------------------ dims in and out
def _unsqueeze(xp, x, dim):
    return xp.expand_dims(x, wrap_dim(dim, x.ndim + 1))


unsqueeze = method(
    defop(
        "unsqueeze",
        _unsqueeze,
        nin=1,
        vjp=lambda g, dim: g.squeeze(dim),
        jvp=LINEAR,
        view=True,
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


def _squeeze(xp, x, dim=None):
    if dim is None:
        axes = tuple(i for i, s in enumerate(x.shape) if s == 1)
    else:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        axes = tuple(
            sorted({a for a in (wrap_dim(d, x.ndim) for d in dims) if x.ndim and x.shape[a] == 1})
        )
    return xp.squeeze(x, axes) if axes else x[...]


squeeze = method(
    defop(
        "squeeze",
        _squeeze,
        nin=1,
        vjp=lambda g, x: g.reshape(x.shape),
        jvp=LINEAR,
        view=True,
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
inplace(unsqueeze)
inplace(squeeze)


def _transpose(xp, x, dim0, dim1):
    return xp.swapaxes(x, wrap_dim(dim0, x.ndim), wrap_dim(dim1, x.ndim)) if x.ndim else x[...]


transpose = method(
    defop(
        "transpose",
        _transpose,
        nin=1,
        vjp=lambda g, dim0, dim1: g.transpose(dim0, dim1),
        jvp=LINEAR,
        view=True,
        samples=lambda make: [
            S((make((2, 3)), 0, 1)),
            S((make((2, 3, 4)), -1, 0)),
            S((make(()), 0, -1)),
            S((make((0, 3)), 1, 0)),
            S((make((2, 3)), 1, 1)),
        ],
        error_samples=lambda make: [_bad_dim(make, lambda x: (x, 0, 2))],
    )  # fmt: skip
)
inplace(transpose)


def swapaxes(input, axis0: int, axis1: int):
    """Alias of transpose."""
    return transpose.fn(input, axis0, axis1)


def swapdims(input, dim0: int, dim1: int):
    """Alias of transpose."""
    return transpose.fn(input, dim0, dim1)


def _permute(xp, x, dims):
    dims = tuple(dims)
    if len(dims) != x.ndim:
        raise RuntimeError(
            "permute(sparse_coo): number of dimensions in the tensor input does not match the length of "
            f"the desired ordering of dimensions i.e. input.dim() = {x.ndim} is not equal to len(dims) = {len(dims)}"
        )
    axes = tuple(wrap_dim(d, x.ndim) for d in dims)
    if len(set(axes)) != len(axes):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return xp.transpose(x, axes) if x.ndim else x[...]


def _inverse_perm(dims) -> tuple:
    n = len(dims)
    inv = [0] * n
    for i, d in enumerate(dims):
        inv[d % n] = i
    return tuple(inv)


permute = defop(
    "permute", _permute, nin=1, vjp=lambda g, dims: g.permute(_inverse_perm(dims)), jvp=LINEAR, view=True,
    samples=lambda make: [S((make((2, 3, 4)), (2, 0, 1))), S((make((2, 3)), (-1, 0))), S((make(()), ())),
                          S((make((0, 3)), (1, 0)))],
    error_samples=lambda make: [ErrorInput(S((make((2, 3)), (0,))), RuntimeError, "is not equal to len"),
                                ErrorInput(S((make((2, 3)), (0, 0))), RuntimeError, "duplicate dims")],
)  # fmt: skip
method(permute, sizes=True)


def _t(xp, x):
    if x.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {x.ndim}D")
    return x.T if x.ndim == 2 else x[...]


t = method(
    defop(
        "t",
        _t,
        vjp=lambda g: g.t(),
        jvp=LINEAR,
        view=True,
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
inplace(t)


def _T(self):
    if self.dim() != 2 and self.dim() != 0:
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
    jvp=LINEAR, api="Tensor._slice_backward",
)  # fmt: skip


def _select_backward(xp, grad, shape, dim, index):
    out = xp.zeros(tuple(shape), dtype=grad.dtype)
    out[(slice(None),) * dim + (index,)] = grad
    return out


select_backward = defop(
    "select_backward", _select_backward, nin=1, vjp=lambda g, dim, index: g.select(dim, index),
    jvp=LINEAR, api="Tensor._select_backward",
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


def _narrow(xp, x, dim, start, length):
    dim, start = _narrow_args(x.shape, dim, start, length)
    return x[(slice(None),) * dim + (slice(start, start + length),)]


def _narrow_vjp(g, x, dim, start, length):
    d, s = _narrow_args(tuple(x.shape), dim, start, length)
    return slice_backward.fn(g, tuple(x.shape), d, s, length)


narrow = method(
    defop(
        "narrow",
        _narrow,
        nin=1,
        vjp=_narrow_vjp,
        jvp=LINEAR,
        view=True,
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


def _select(xp, x, dim, index):
    dim, index = _select_args(x.shape, dim, index)
    return x[(slice(None),) * dim + (index,)][...]


def _select_vjp(g, x, dim, index):
    d, i = _select_args(tuple(x.shape), dim, index)
    return select_backward.fn(g, tuple(x.shape), d, i)


select = method(
    defop(
        "select",
        _select,
        nin=1,
        vjp=_select_vjp,
        jvp=LINEAR,
        view=True,
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


# ------------------------------------------------------------------ public names
API = {
    "swapaxes": swapaxes,
    "swapdims": swapdims,
    "adjoint": adjoint,
    "unbind": unbind,
    "split": split,
    "chunk": chunk,
}

TENSOR_METHODS = {
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
}
