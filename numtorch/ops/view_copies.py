"""The ``*_copy`` functions (``permute_copy``, ``narrow_copy``, ``split_copy``, ...): each is
a view op followed by a copy into a new contiguous tensor, as PyTorch's generated
``*_copy`` kernels are. ``copy_of(view_p)`` makes one from its view op: the view's kernel
then a copy, the view's vjp formulas, a linear jvp, the view's batch rule then a copy,
its samples, and ``out=``. Their backward nodes are the view's node name + ``_copy``."""

from __future__ import annotations

import functools
from collections.abc import Callable

from .._core.meta import by_kernel
from .._core.op import LINEAR, ErrorInput, Op, composite, defop
from .._core.out import write_out
from .._core.tensor import Tensor, wrap_dim
from .._opdb.samples import S
from ._batching import front
from ._families import COMPLEX_TOO
from .complex import view_as_complex_p, view_as_real_p
from .conversion import _C_ORDER
from .splits import split_p, split_with_sizes_p, unbind_p
from .strided import as_strided, tensor_unfold_p
from .views import (
    diagonal_p,
    expand_p,
    narrow_p,
    permute_p,
    reshape_p,
    select_p,
    squeeze_p,
    t_p,
    transpose_p,
    unsqueeze_p,
    view_p,
)


def _copy_arrays(out):
    """New C-contiguous arrays with a view's elements (one, or a tuple of pieces)."""
    if isinstance(out, tuple):
        return tuple(o.copy() for o in out)
    return out.copy()


def _copying_kernel(kernel: Callable) -> Callable:
    """The view kernel followed by a copy; the same signature (inputs and attributes)."""

    @functools.wraps(kernel)
    def copied(xp, *args, **kwargs):
        return _copy_arrays(kernel(xp, *args, **kwargs))

    return copied


def _clone_values(out):
    if isinstance(out, (tuple, list)):
        return tuple(o.clone() for o in out)
    return out.clone()


def _copying_rule(rule: Callable) -> Callable:
    """The view's batch rule, its result(s) cloned: a new tensor, never the view."""

    def copied(vmap, args, bdims, attrs):
        out, out_bdims = rule(vmap, args, bdims, attrs)
        return _clone_values(out), out_bdims

    return copied


def _copy_node_name(name: str | Callable) -> str | Callable:
    """The view's backward node name + ``_copy`` (a function of the call stays one)."""
    if not callable(name):
        return name + "_copy"

    @functools.wraps(name)
    def copied(*args, **kwargs):
        return name(*args, **kwargs) + "_copy"

    return copied


def copy_of(
    view: Op,
    name: str | None = None,
    *,
    kernel: Callable | None = None,
    node_name: str | Callable | None = None,
    methods: tuple[str, ...] | bool = False,
    samples: Callable | None = None,
    error_samples: Callable | None = None,
    batch_rule: Callable | None = None,
    complex_grad: bool = True,
    test: dict | None = None,
) -> Op:
    """The ``*_copy`` op of a view op (``name``: the view's name + ``_copy``); ``kernel``:
    the view kernel to copy from, where the copy's signature is not the view's (with its
    ``batch_rule``, where the view's does not fit it). It is tested in the view's dtypes
    (complex too, as PyTorch's copies run on every dtype its views take)."""
    return defop(
        name or f"{view.name}_copy",
        _copying_kernel(kernel or view.kernel),
        nin=view.nin,
        nout=view.nout,
        vjp=view.vjps,
        jvp=LINEAR,
        node_name=node_name or _copy_node_name(view.node_name),
        batch_rule=batch_rule or _copying_rule(view.batch_rule),
        samples=samples or view.samples,
        error_samples=error_samples if error_samples is not None else view.error_samples,
        out=True,
        complex32=True,
        methods=methods,
        complex_grad=complex_grad,
        test={"dtypes": view.test.dtypes, **(test or {})},
        meta=by_kernel,
    )


# ------------------------------------------------------------------ one per view op
diagonal_copy_p = copy_of(diagonal_p)
permute_copy_p = copy_of(permute_p)
select_copy_p = copy_of(select_p, complex_grad=False)  # (no complex derivative in PyTorch)
squeeze_copy_p = copy_of(squeeze_p)
t_copy_p = copy_of(t_p)
transpose_copy_p = copy_of(transpose_p)
unsqueeze_copy_p = copy_of(unsqueeze_p)
unfold_copy_p = copy_of(tensor_unfold_p, "unfold_copy")
split_copy_p = copy_of(split_p)
split_with_sizes_copy_p = copy_of(split_with_sizes_p)
unbind_copy_p = copy_of(unbind_p)
view_as_real_copy_p = copy_of(view_as_real_p)
view_as_complex_copy_p = copy_of(
    view_as_complex_p,
    complex_grad=False,  # (PyTorch's refuses to differentiate its complex result)
    test={"no_grad_test": True, "vmap_last": False},
)


def _narrow_copy(xp, input, dim, start, length):
    """narrow's elements, with narrow_copy's own checks (a dim past the end and a negative
    length are refused in its words)."""
    if input.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if dim >= input.ndim:
        raise RuntimeError(
            "Expected dim < static_cast<int64_t>(self_sizes.size()) to be true, but got false.  "
            "(Could this error message be improved?  If so, please report an enhancement "
            "request to PyTorch.)"
        )
    d = wrap_dim(dim, input.ndim)
    size, start = input.shape[d], int(start)
    if not -size <= start <= size:
        raise IndexError(
            f"start out of range (expected to be in range of [{-size}, {size}], but got {start})"
        )
    start = start + size if start < 0 else start
    if length < 0 or start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return input[(slice(None),) * d + (slice(start, start + length),)]


def _narrow_copy_errors(make):
    yield ErrorInput(
        S((make((2, 3)), 0, 1, 5)),
        RuntimeError,
        r"start \(1\) \+ length \(5\) exceeds dimension size \(2\)\.",
    )
    yield ErrorInput(S((make((2, 3)), 1, 0, -1)), RuntimeError, r"length \(-1\) exceeds")
    yield ErrorInput(S((make((2, 3)), 2, 0, 1)), RuntimeError, r"Expected dim < static_cast")
    yield ErrorInput(S((make((2, 3)), -3, 0, 1)), IndexError, r"but got -3")
    yield ErrorInput(S((make((2, 3)), 0, 3, 0)), IndexError, r"start out of range")
    yield ErrorInput(S((make(()), 0, 0, 1)), RuntimeError, r"cannot be applied to a 0-dim")


narrow_copy_p = copy_of(
    narrow_p,
    kernel=_narrow_copy,
    node_name="NarrowCopyBackward0",
    methods=True,
    error_samples=_narrow_copy_errors,
)


def _view_copy_samples(make):
    yield S((make((2, 3)), (3, 2)))
    yield S((make((2, 3, 4)), (-1, 4)))
    yield S((make(()), (1,)))
    yield S((make((3, 2)).T, (6,)), name="non-contiguous")


def _view_copy(xp, input, size):
    return reshape_p.kernel(xp, input, size)  # PyTorch's kernel copies: any layout works


def _view_copy_rule(vmap, args, bdims, attrs):
    x = front(args[0], bdims[0])
    return view_copy(x, (vmap.size, *attrs["size"])), 0


view_copy_p = copy_of(
    view_p,
    kernel=_view_copy,
    batch_rule=_view_copy_rule,
    samples=_view_copy_samples,
)
view_copy = view_copy_p.fn


def _expand_copy(xp, input, size, *, implicit=False):
    return expand_p.kernel(xp, input, size)


expand_copy_p = copy_of(expand_p, "expand_copy", kernel=_expand_copy)


def _alias_copy(xp, input):
    return input


def _alias_copy_samples(make):
    yield S((make((2, 3)),))
    yield S((make(()),))
    yield S((make((3, 2)).T,), name="non-contiguous")


alias_copy_p = defop(
    "alias_copy",
    _copying_kernel(_alias_copy),
    vjp=lambda g: g,
    jvp=LINEAR,
    node_name="AliasBackward0_copy",
    batch_rule=lambda vmap, args, bdims, attrs: (args[0].clone(), bdims[0]),
    samples=_alias_copy_samples,
    out=True,
    test=COMPLEX_TOO,
    complex32=True,
    meta=by_kernel,
)


def _detach_copy_vjp(g):
    raise RuntimeError("derivative for aten::detach_copy is not implemented")


def _detach_copy_jvp(t):
    raise NotImplementedError(
        "Trying to use forward AD with aten::detach_copy that does not support it."
    )


detach_copy_p = defop(
    "detach_copy",
    _copying_kernel(_alias_copy),
    vjp=_detach_copy_vjp,
    jvp=_detach_copy_jvp,
    node_name="NotImplemented",
    batch_rule=lambda vmap, args, bdims, attrs: (args[0].clone(), bdims[0]),
    samples=_alias_copy_samples,
    out=True,
    # the backward raises, as PyTorch's (tests/test_views.py checks it)
    test={**COMPLEX_TOO, "no_grad_test": True},
    complex32=True,
    meta=by_kernel,
)


# ------------------------------------------------------------------ slice_copy
def _slice_copy(xp, input, dim=0, start=None, end=None, step=1):
    if input.ndim == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, input.ndim)
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    size = input.shape[d]
    lo = 0 if start is None else int(start)
    hi = size if end is None else int(end)
    lo, hi = (lo + size if lo < 0 else lo), (hi + size if hi < 0 else hi)
    lo, hi = min(max(lo, 0), size), min(max(hi, lo, 0), size)
    return input[(slice(None),) * d + (slice(lo, hi, int(step)),)].copy()


def _slice_copy_vjp(g, input_shape, dim, start, end, step):
    return g.new_zeros(tuple(input_shape)).slice_scatter(g, dim, start, end, step)


def _slice_copy_rule(vmap, args, bdims, attrs):
    x = front(args[0], bdims[0])
    if x.dim() == 1:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(attrs["dim"], x.dim() - 1) + 1
    return slice_copy(x, d, attrs["start"], attrs["end"], attrs["step"]), 0


def _slice_copy_samples(make):
    yield S((make((5, 4)),))
    yield S((make((5, 4)), 1, 1, None, 2))
    yield S((make((5, 4)), 0, -3, 100))
    yield S((make((5, 4)), 0, 3, 1))
    yield S((make((2, 5, 3)), -2, None, -1, 3))


def _slice_copy_errors(make):
    yield ErrorInput(S((make((5, 4)), 0, 0, 2, 0)), RuntimeError, "slice step must be positive")
    yield ErrorInput(S((make((5, 4)), 2)), IndexError, r"\[-2, 1\], but got 2")


slice_copy_p = defop(
    "slice_copy",
    _slice_copy,
    vjp=_slice_copy_vjp,
    jvp=LINEAR,
    node_name="SliceBackward0_copy",
    batch_rule=_slice_copy_rule,
    samples=_slice_copy_samples,
    error_samples=_slice_copy_errors,
    out=True,
    complex_grad=False,
    test=COMPLEX_TOO,
    complex32=True,
    meta=by_kernel,
)
slice_copy = slice_copy_p.fn


# ------------------------------------------------------------------ as_strided_copy
def _as_strided_copy_samples(make):
    yield S((make((2, 4)), (3, 3), (1, 1)), name="overlapping")
    yield S((make((2, 4)), (2, 2), (1, 3)))
    yield S((make((4,)), (2,), (2,)))
    yield S((make((3,)), (), ()), name="0-d")


def _as_strided_copy_errors(make):
    yield ErrorInput(
        S((make((8,)), (3, 3), (1, 1), 5)), RuntimeError, "requiring a storage size of"
    )


@composite(
    samples=_as_strided_copy_samples,
    error_samples=_as_strided_copy_errors,
    test=COMPLEX_TOO,
)
def as_strided_copy(
    input: Tensor, size, stride, storage_offset: int | None = None, *, out=None
) -> Tensor:
    """as_strided's window of ``input``'s storage, copied into a new contiguous tensor."""
    result = as_strided(input, size, stride, storage_offset).clone(memory_format=_C_ORDER)
    return result if out is None else write_out(out, result)
