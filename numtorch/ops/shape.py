"""Shape ops that copy: cat, stack, flips, rolls, triangles, diag, repeats.

The views (reshape, permute, expand, narrow, diagonal, ...) are in ``views.py``.
"""

from __future__ import annotations

import math

import numpy as np

from .._core.dtype import not_implemented
from .._core.layout import preserve
from .._core.messages import check_alloc
from .._core.meta import by_kernel
from .._core.methods import tensor_methods
from .._core.op import LINEAR, ErrorInput, composite, defop
from .._core.policy import InplacePolicy
from .._core.tensor import check_unique_dims, wrap_dim, wrap_dims
from .._opdb.samples import S
from ._batching import (
    along_dims,
    decompose,
    front,
    lrank,
    lshape,
    materialize,
    min_rank,
    pad_to,
    pdim,
    rule_generator,
)
from ._families import COMPLEX, COMPLEX_TOO, FLOATS_INT, FLOATS_INT_BOOL
from .creation import arange, tensor, zeros_like
from .views import diagonal, diagonal_backward, diagonal_view, reshape


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

    def rule(vmap, args, bdims, attrs):
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


dims_rule = rule_generator(_dims_rule)


# ------------------------------------------------------------------ joining
def _check_tensor_list(tensors, name: str) -> None:
    """A tensor-list argument is a sequence (a tensor is refused, not iterated)."""
    if not isinstance(tensors, (list, tuple)):
        kind = "Tensor" if hasattr(tensors, "shape") else type(tensors).__name__
        raise TypeError(
            f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, not {kind}"
        )
    for i, t in enumerate(tensors):
        if not hasattr(t, "shape"):
            raise TypeError(
                f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}"
            )


def _tensor_list(name: str):
    """The ``prepare`` of a tensor-list op: the argument checked, then promoted."""

    def prepare(arrays, attrs=None):
        _check_tensor_list(arrays[0], name)
        return _promote_list(arrays, attrs)

    return prepare


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


class _Shaped:
    """Stands for a tensor of a logical shape in the shape checks."""

    __slots__ = ("shape", "ndim")

    def __init__(self, shape):
        self.shape, self.ndim = shape, len(shape)


def _cat_rule(vmap, args, bdims, attrs):
    xs, bds = args[0], bdims[0]
    _check_tensor_list(xs, "cat")
    shapes = [lshape(x, b) for x, b in zip(xs, bds)]
    d = _cat_check([_Shaped(s) for s in shapes], attrs["dim"])
    if d is None:
        # only legacy empty (0,) tensors: PyTorch's rule finds no batch size and cats each
        # one's (0,) (a batched one's first sample), so the result is not batched
        parts = [x if b is None else x.select(b, 0) for x, b in zip(xs, bds)]
        return cat(parts, attrs["dim"]), None
    parts = [materialize(vmap, x, b) for x, b in zip(xs, bds)]
    # Legacy empties are skipped by cat, but still take part in type promotion: give
    # them the reference shape with 0 at dim instead of dropping them.
    ref = next(s for s in shapes if not _legacy_empty(s))
    empty = (vmap.size, *ref[:d], 0, *ref[d + 1 :])
    parts = [p.reshape(empty) if _legacy_empty(s) else p for p, s in zip(parts, shapes)]
    return cat(parts, d + 1), 0


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


cat_p = defop(
    "cat",
    _cat,
    nin=1,
    list_inputs=(0,),
    vjp=_cat_vjp,
    batch_rule=_cat_rule,
    jvp=lambda t, tensors, dim: cat(_list_tangents(t, tensors), dim),
    prepare=_tensor_list("cat"),
    out=True,
    samples=_cat_samples,
    error_samples=_cat_errors,
    out_overlap_check=True,
    float8=True,  # (PyTorch copies float8)
    test=COMPLEX_TOO,
    complex32=True,
    autocast="promote",
    meta=by_kernel,
)
cat = cat_p.fn


def _join_samples(axis: str):
    return lambda make: [
        S(([make((2, 3)), make((1, 3))],)),
        S(([make((2, 3)), make((2, 2))],), {axis: 1}),
        S(([make((2, 3)), make((2, 3)), make((2, 1))], -1)),
    ]


def _join_dim(name: str, first: str, dim, alias) -> int:
    # PyTorch's argument parser takes NumPy's `axis` and PyTorch's `dim` for the same parameter.
    if alias is None:
        return 0 if dim is None else dim
    if dim is not None:
        raise TypeError(f"{name}() got multiple values for argument '{first}'")
    return alias


@composite(samples=_join_samples("axis"), test=COMPLEX_TOO)
def concatenate(tensors, axis: int | None = None, out=None, *, dim: int | None = None):
    """Alias of cat."""
    _check_tensor_list(tensors, "concatenate")
    return cat(tensors, _join_dim("concatenate", "dim", axis, dim), out=out)


@composite(samples=_join_samples("dim"), test=COMPLEX_TOO)
def concat(tensors, dim: int | None = None, *, out=None, axis: int | None = None):
    """Alias of cat."""
    _check_tensor_list(tensors, "concat")
    return cat(tensors, _join_dim("concat", "axis", dim, axis), out=out)


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


def _stack_rule(vmap, args, bdims, attrs):
    xs, bds = args[0], bdims[0]
    _check_tensor_list(xs, "stack")
    shapes = [lshape(x, b) for x, b in zip(xs, bds)]
    _stack_check(shapes)
    d = pdim(attrs["dim"], len(shapes[0]) + 1)
    return stack([materialize(vmap, x, b) for x, b in zip(xs, bds)], d), 0


def _stack_samples(make):
    yield S(([make((2, 3)), make((2, 3))],))
    yield S(([make((2, 3)), make((2, 3)), make((2, 3))], -1))
    yield S(([make(()), make(())],))
    yield S(([make((0, 3))], 1))
    yield S(([make((3,)), make((3,), dtype="int64")],), {"dim": 1})


def _stack_errors(make):
    yield ErrorInput(
        S(([make((2, 3)), make((3,))],)),
        RuntimeError,
        r"stack expects each tensor to be equal size, but got \[2, 3\] at entry 0 and \[3\] at entry 1",
    )
    yield ErrorInput(S(([make((2, 3))], 3)), IndexError, r"\[-3, 2\], but got 3")


stack_p = defop(
    "stack",
    _stack,
    nin=1,
    list_inputs=(0,),
    prepare=_tensor_list("stack"),
    out=True,
    batch_rule=_stack_rule,
    jvp=lambda t, tensors, dim: stack(_list_tangents(t, tensors), dim),
    vjp=lambda g, dim: list(g.unbind(dim)),  # (saves no tensor, as PyTorch's)
    samples=_stack_samples,
    error_samples=_stack_errors,
    float8=True,  # (PyTorch copies float8)
    test=COMPLEX_TOO,
    complex32=True,
    autocast="promote",
    meta=by_kernel,
)
stack = stack_p.fn


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
        _check_tensor_list(tensors, name)
        parts = [reshape(t, _atleast_shape(t.shape, nd)) for t in tensors]
        return cat(parts, _join_axis(name, [tuple(t.shape) for t in tensors]))

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
        prepare=_tensor_list(name),
        out=True,
        samples=samples,
        batch_rule=decompose(as_cat),
        node_name="CatBackward0",
        test=COMPLEX_TOO,
        complex32=True,
        meta=by_kernel,
    )
    return op


hstack_p = _joiner("hstack")
vstack_p = _joiner("vstack")
vstack = vstack_p.fn
dstack_p = _joiner("dstack")


def row_stack(tensors, *, out=None):
    """Alias of vstack."""
    return vstack(tensors, out=out)


def _atleast(nd: int):
    def fn(*tensors):
        if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
            return tuple(fn(t) for t in tensors[0])
        if len(tensors) != 1:
            return tuple(fn(t) for t in tensors)
        t = tensors[0]
        shape = _atleast_shape(t.shape, nd)
        if shape == tuple(t.shape):
            return t
        if t.dim() == 0:
            return reshape(t, shape)
        # PyTorch's unsqueezes: (n,) -> (1, n) -> (1, n, 1), (m, n) -> (m, n, 1)
        if t.dim() == 1:
            t = t.unsqueeze(0)
        return t if t.dim() == nd else t.unsqueeze(-1)

    fn.__name__ = f"atleast_{nd}d"
    fn.__doc__ = f"The tensor(s) viewed with at least {nd} dimensions."
    return fn


def _atleast_samples(make):
    yield S((make(()),))
    yield S((make((3,)),))
    yield S((make((2, 3)),))
    yield S((make((2, 1, 3)),))
    yield S((make((3,)), make((2, 3))), name="several")


atleast_1d, atleast_2d, atleast_3d = _atleast(1), _atleast(2), _atleast(3)
for _fn in (atleast_1d, atleast_2d, atleast_3d):
    composite(_fn, samples=_atleast_samples, test=COMPLEX_TOO)


# ------------------------------------------------------------------ reorderings
def _flip(xp, input, dims):
    axes = wrap_dims(dims, input.ndim)
    check_unique_dims(axes)
    return xp.flip(input, axes).copy() if input.ndim and axes else input.copy()


def _flip_complex32(x, axes) -> bool | str:
    """PyTorch flips complex32 by whole rows; its kernel that reverses the innermost (unit
    stride) dim refuses it."""
    inner = x.ndim and any(x.shape[d] > 1 and x.strides[d] == x.itemsize for d in axes)
    return x.size == 0 or not inner or "flip_cpu"


def _flip_c32(arrays, attrs):
    return _flip_complex32(arrays[0], wrap_dims(attrs["dims"], arrays[0].ndim))


flip_p = defop(
    "flip",
    _flip,
    nin=1,
    complex32=_flip_c32,
    layout=preserve,
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
    methods=True,
    float8=True,  # (PyTorch copies float8)
    test=COMPLEX_TOO,
    meta=by_kernel,
)
flip = flip_p.fn


def _flip_samples(make):
    return [S((make((2, 3)),)), S((make((2, 3, 4)),)), S((make((0, 3)),))]


def _flip_errors(ndim: int):
    return lambda make: [
        ErrorInput(S((make((3,) * (ndim - 1)),)), RuntimeError, f"Input must be >= {ndim}-d.")
    ]


@composite(samples=_flip_samples, error_samples=_flip_errors(2), test=COMPLEX_TOO)
def fliplr(input):
    """Flip the columns (dim 1)."""
    if input.dim() < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, (1,))


@composite(samples=_flip_samples, error_samples=_flip_errors(1), test=COMPLEX_TOO)
def flipud(input):
    """Flip the rows (dim 0)."""
    if input.dim() < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, (0,))


def _roll(xp, input, shifts, dims=None):
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    if dims is None or (not isinstance(dims, int) and len(dims) == 0):
        if len(shifts) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:0")
        return xp.roll(input.reshape(-1), shifts[0]).reshape(input.shape)
    if input.ndim == 0:
        d = dims if isinstance(dims, int) else dims[0]
        raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
    axes = wrap_dims(dims, input.ndim)
    if len(shifts) != len(axes):
        raise RuntimeError(
            f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(axes)}"
        )
    return xp.roll(input, shifts, axes)


def _roll_rule(op):
    by_dims = _dims_rule(op)

    def rule(vmap, args, bdims, attrs):
        dims = attrs.get("dims")
        if dims is not None and (isinstance(dims, int) or len(dims)):
            return by_dims(vmap, args, bdims, attrs)
        # No dims: roll the flattened logical tensor.
        shifts = attrs["shifts"]
        n = 1 if isinstance(shifts, int) else len(shifts)
        if n != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {n}, dims:0")
        x = front(args[0], bdims[0])
        return op.fn(x.reshape(vmap.size, -1), shifts, 1).reshape(x.shape), 0

    return rule


def _neg_shifts(shifts):
    return -shifts if isinstance(shifts, int) else tuple(-s for s in shifts)


roll_p = defop(
    "roll",
    _roll,
    nin=1,
    vjp=lambda g, shifts, dims: g.roll(_neg_shifts(shifts), dims),
    jvp=LINEAR,
    batch_rule=rule_generator(_roll_rule)(),
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
    methods=True,
    test=COMPLEX_TOO,
    complex32=True,
    meta=by_kernel,
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
    # PyTorch's layout: a flip (laid out as the input) seen transposed for an odd k; a
    # contiguous copy for k = 0
    d0, d1 = _rot90_dims(dims, input.ndim)
    k %= 4
    if k == 0:
        return input.copy(order="C")
    flipped = xp.flip(input, (d0, d1) if k == 2 else d1 if k == 1 else d0)
    out = preserve(flipped.copy(order="K"), (input,))
    return out if k == 2 else out.swapaxes(d0, d1)


def _rot90_rule(vmap, args, bdims, attrs):
    x = front(args[0], bdims[0])
    d0, d1 = _rot90_dims(attrs["dims"], x.dim() - 1)
    return rot90(x, attrs["k"], (d0 + 1, d1 + 1)), 0


def _rot90_c32(arrays, attrs):
    """rot90 flips one dim (k = 1, 3) or both (k = 2) of ``dims``."""
    d0, d1 = _rot90_dims(attrs["dims"], arrays[0].ndim)
    k = attrs["k"] % 4
    return k == 0 or _flip_complex32(arrays[0], {1: (d1,), 2: (d0, d1), 3: (d0,)}[k])


rot90_p = defop(
    "rot90",
    _rot90,
    nin=1,
    vjp=lambda g, k, dims: g.rot90(-k, dims),
    jvp=LINEAR,
    batch_rule=_rot90_rule,
    complex32=_rot90_c32,
    layout=None,
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
    methods=True,
    test=COMPLEX_TOO,
    meta=by_kernel,
)
rot90 = rot90_p.fn


# ------------------------------------------------------------------ triangles and diagonals
def _tri_samples(make):
    yield S((make((3, 3)),))
    yield S((make((3, 4)), 1))
    yield S((make((2, 3, 4)), -1))
    yield S((make((4, 3)),), {"diagonal": 2})
    yield S((make((0, 3)),))


def _tri(name: str):
    """tril or triu: the lower or upper triangle of the last two dims, the rest zeros."""
    message = f"{name}: input tensor must have at least 2 dimensions"

    def kernel(xp, input, diagonal=0):
        if input.ndim < 2:
            raise RuntimeError(message)
        return getattr(xp, name)(input, diagonal)

    kernel.__name__ = "_" + name

    def batch_too_few_dims(r, a):
        return RuntimeError(
            f"{name}: The input tensor must have at least 2 dimensions." if r == 0 else message
        )

    return defop(
        name,
        kernel,
        nin=1,
        vjp=lambda g, diagonal: getattr(g, name)(diagonal),
        jvp=LINEAR,
        out=True,
        methods=True,
        inplace=True,
        samples=_tri_samples,
        test={"dtypes": (*FLOATS_INT_BOOL, *COMPLEX)},
        # PyTorch's batch rule has its own text for a logical 0-d (and passes a logical 1-d:
        # torch.func diverges from eager there)
        batch_rule=min_rank(2, batch_too_few_dims),
        error_samples=lambda make: [ErrorInput(S((make((3,)),)), RuntimeError, message)],
        inplace_policy=InplacePolicy(shared_ok=True),
        meta=by_kernel,
        complex32=True,
    )


tril_p, triu_p = _tri("tril"), _tri("triu")


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
    diagonal_view(xp, out, offset, d1, d2)[...] = input
    return out


def _diag_embed_rule(vmap, args, bdims, attrs):
    x = front(args[0], bdims[0])
    rank = x.dim() - 1
    if rank == 0:  # a 0-d input embeds like its (1,) reshape
        x, rank = x.unsqueeze(1), 1
    d1, d2 = pdim(attrs["dim1"], rank + 1), pdim(attrs["dim2"], rank + 1)
    return diag_embed(x, attrs["offset"], d1, d2), 0


diag_embed_p = defop(
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
    methods=True,
    test=COMPLEX_TOO,
    complex32=True,
    meta=by_kernel,
)
diag_embed = diag_embed_p.fn


def _diag_error(ndim: int) -> RuntimeError:
    return RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {ndim}D")


def _diag(xp, input, diagonal=0):
    if input.ndim == 1:
        return _diag_embed(xp, input, diagonal, 0, 1)
    if input.ndim == 2:
        return diagonal_view(xp, input, diagonal, 0, 1).copy()
    raise _diag_error(input.ndim)


def _diag_rule(vmap, args, bdims, attrs):
    x = front(args[0], bdims[0])
    rank, k = x.dim() - 1, attrs["diagonal"]
    if rank == 1:
        return diag_embed(x, k, 1, 2), 0
    if rank == 2:
        return diagonal(x, k, 1, 2).clone(), 0  # diag returns new memory, not a view
    raise _diag_error(rank)


def _diag_vjp(g, input_shape, diagonal):
    if len(input_shape) == 1:
        return g.diagonal(diagonal)
    return diagonal_backward(g, tuple(input_shape), diagonal, 0, 1)


diag_p = defop(
    "diag",
    _diag,
    nin=1,
    vjp=_diag_vjp,
    jvp=LINEAR,
    out=True,
    batch_rule=_diag_rule,
    # PyTorch's diag is diag_embed of a vector and a copy of the diagonal of a matrix
    node_name=lambda input: "DiagEmbedBackward0" if len(input) == 1 else "DiagonalBackward0_copy",
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
    methods=True,
    test=COMPLEX_TOO,
    complex32=True,
    meta=by_kernel,
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
    check_alloc(tuple(r * n for r, n in zip(repeats, input.shape)), input.itemsize)
    return xp.tile(input, repeats)


def _repeat_rule(vmap, args, bdims, attrs):
    x = front(args[0], bdims[0])
    reps = _repeat_check(tuple(x.shape[1:]), attrs["repeats"])
    return repeat(pad_to(x, len(reps)), (1, *reps)), 0


def _repeat_vjp(g, input_shape, repeats):
    repeats = tuple(int(r) for r in repeats)
    shape = (1,) * (len(repeats) - len(input_shape)) + tuple(input_shape)
    split = []
    for r, s in zip(repeats, shape, strict=True):
        split += [r, s]
    return g.reshape(split).sum(tuple(range(0, 2 * len(shape), 2))).reshape(input_shape)


def _repeat_samples(make):
    yield S((make((2, 3)), (2, 1)))
    yield S((make((2, 3)), (2, 1, 3)))
    yield S((make(()), (3,)))
    yield S((make((3,)), (2, 0)))
    yield S((make((0, 2)), (2, 2)))


def _repeat_errors(make):
    yield ErrorInput(
        S((make((2, 3)), (2,))),
        RuntimeError,
        "Number of dimensions of repeat dims can not be smaller",
    )


repeat_p = defop(
    "repeat",
    _repeat,
    nin=1,
    vjp=_repeat_vjp,
    jvp=LINEAR,
    api="Tensor.repeat",
    batch_rule=_repeat_rule,
    methods=True,
    sizes=True,
    samples=_repeat_samples,
    error_samples=_repeat_errors,
    test=COMPLEX_TOO,
    complex32=True,
    meta=by_kernel,
)
repeat = repeat_p.fn


def _tile_reps(ndim: int, dims) -> tuple:
    if not isinstance(dims, (tuple, list)):
        raise TypeError(
            f"tile(): argument 'dims' (position 2) must be tuple of ints, not {type(dims).__name__}"
        )
    dims = tuple(int(d) for d in dims)
    return (1,) * (ndim - len(dims)) + dims


def _tile(xp, input, dims):
    return _repeat(xp, input, _tile_reps(input.ndim, dims))


def _tile_vjp(g, input_shape, dims):
    dims = tuple(int(d) for d in dims)
    return _repeat_vjp(g, input_shape, (1,) * (len(input_shape) - len(dims)) + dims)


tile_p = defop(
    "tile",
    _tile,
    nin=1,
    vjp=_tile_vjp,
    jvp=LINEAR,
    batch_rule=decompose(lambda input, dims: repeat(input, _tile_reps(input.dim(), dims))),
    samples=lambda make: [
        S((make((2, 3)), (2,))),
        S((make((2, 3)), (2, 1, 3))),
        S((make(()), (3,))),
        S((make((2, 3)), ())),
    ],
    methods=True,
    sizes=True,
    test=COMPLEX_TOO,
    complex32=True,
    meta=by_kernel,
)


def _check_repeats(xp, repeats) -> None:
    """PyTorch's checks of a repeats tensor's dtype, rank and signs."""
    if repeats.dtype.kind not in "iu":
        raise not_implemented("repeat_interleave_cpu", repeats)
    if repeats.ndim > 1:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    if repeats.size and bool(xp.any(repeats < 0)):
        raise RuntimeError("repeats can not be negative")


def _repeat_interleave(xp, input, repeats=None, dim=None, *, output_size=None):
    if repeats is None:
        reps = input
        _check_repeats(xp, reps)
        return xp.repeat(xp.arange(reps.shape[0], dtype=xp.int64), reps)
    if dim is None:
        input = input.reshape(-1)
        d = 0
    else:
        d = wrap_dim(dim, input.ndim)
    if isinstance(repeats, int):
        if repeats < 0:
            raise RuntimeError("Repeats must be non-negative")
    elif repeats.ndim == 1 and repeats.shape[0] != 1:
        if repeats.shape[0] != input.shape[d]:
            raise RuntimeError(
                f"repeats must have the same size as input along dim, but got repeats.size(0) = "
                f"{repeats.shape[0]} and input.size({dim if dim is not None else 0}) = {input.shape[d]}"
            )
        _check_repeats(xp, repeats)
    else:
        _check_repeats(xp, repeats)
        repeats = int(repeats.reshape(-1)[0])
    if input.ndim == 0:
        input = input.reshape(1)
    return xp.repeat(input, repeats, axis=d)


def _repeat_interleave_rule(vmap, args, bdims, attrs):
    x, r = args
    bx, br = bdims
    dim, size = attrs.get("dim"), attrs.get("output_size")
    if r is None:  # repeat_interleave(repeats): the indices 0..n-1, each repeated
        n = lshape(x, bx)[0] if lrank(x, bx) else 1
        x, bx, r, br, dim = arange(n, device=x.device), None, x, bx, 0
    x = materialize(vmap, x, bx)
    if dim is None:
        x, d = x.reshape(vmap.size, -1), 1
    else:
        rank = x.dim() - 1
        if rank == 0:
            x = x.unsqueeze(1)
        d = pdim(dim, rank)
    if br is None:
        return repeat_interleave(x, r, d, output_size=size), 0
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
        r = r.reshape(vmap.size, -1).narrow(1, 0, 1).expand(vmap.size, n)
    sums = r.sum(1)
    if not bool((sums == sums.max()).all()):
        raise RuntimeError(
            "vmap: repeat_interleave: the repeats give the batch elements outputs of different "
            f"sizes along dim ({sums.tolist()}); vmap needs one output size"
        )
    rest = x.movedim(d, 1).shape[2:]
    flat = x.movedim(d, 1).reshape(-1, *rest)
    out = repeat_interleave(flat, r.reshape(-1), 0)
    return out.reshape(vmap.size, -1, *rest).movedim(1, d), 0


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


def _repeats_of(repeats, like):
    """segment_sum's repeats (an int, or the counts as an array) as repeat_interleave's."""
    return repeats if isinstance(repeats, int) else tensor(repeats, device=like.device)


segment_sum_p = defop(
    "repeat_interleave_backward",
    _segment_sum,
    nin=1,
    jvp=LINEAR,
    vjp=lambda g, repeats, dim: g.repeat_interleave(_repeats_of(repeats, g), dim),
    api="ops.shape.segment_sum",
    test={"no_oracle": True},
    batch_rule=along_dims(scalar_trick=False),
    samples=lambda make: [S((make((6, 2)), 2, 0)), S((make((2, 6)), 3, 1))],
)
segment_sum = segment_sum_p.fn


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
    if isinstance(repeats, int) and repeats == 0:
        # g is empty along d and does not say how many elements each got: spell out the zeros
        n = math.prod(input_shape) if dim is None or not input_shape else input_shape[d]
        repeats = np.zeros(n, dtype=np.int64)
    return segment_sum(g, repeats, d).reshape(input_shape)


def _repeat_interleave_samples(make):
    import numpy as np

    yield S((make((2, 3)), 2))
    yield S((make((2, 3)), 2), {"dim": 1})
    yield S((make((2, 3)), np.array([1, 0, 2])), {"dim": -1})
    yield S((make((3,)), np.array([2])), {"dim": 0})
    yield S((make(()), 3))
    yield S((make((2, 3)), np.array([1, 2, 0, 3, 1, 1])))


def _repeat_interleave_errors(make):
    yield ErrorInput(
        S((make((2, 3)), make((2,), 1, 3, dtype="int64")), {"dim": 1}),
        RuntimeError,
        r"repeats must have the same size as input along dim, but got repeats.size\(0\) = 2 and input.size\(1\) = 3",
    )


repeat_interleave_p = defop(
    "repeat_interleave",
    _repeat_interleave,
    nin=2,
    vjp=(_repeat_interleave_vjp, None),
    jvp=LINEAR,
    samples=_repeat_interleave_samples,
    batch_rule=_repeat_interleave_rule,
    test={"dtypes": (*FLOATS_INT, *COMPLEX)},
    error_samples=_repeat_interleave_errors,
    complex32=True,
    meta=by_kernel,
)
repeat_interleave = repeat_interleave_p.fn


def _repeat_interleave_fn(
    input, repeats=None, dim: int | None = None, *, output_size: int | None = None
):
    """Repeat elements (int or per-element tensor repeats); with one tensor argument, the indices
    ``0..n-1`` repeated by its values."""
    return repeat_interleave(input, repeats, dim, output_size=output_size)


# ------------------------------------------------------------------ public names
tensor_methods({"fliplr": fliplr, "flipud": flipud, "repeat_interleave": _repeat_interleave_fn})
