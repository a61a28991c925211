"""Batch rules for vmap, and the generators that make them for families of ops.

A rule is ``rule(vmap, args, bdims, attrs) -> (out, out_bdims)`` (see
``numtorch/func/_batched.py``). Generators here take the op and return its rule;
pass them to ``defop(batch_rule=...)`` unbound, e.g. ``batch_rule=along_dims()``,
and ``defop`` binds them to the op it creates. Rules compute with numtorch ops on
the inner values and never loop over the batch.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._core.dispatch import dispatch
from .._core.interpreter import Kind, WrapperTensor
from .._core.messages import broadcast_mismatch
from .._core.state import state
from .._core.tensor import Tensor, wrap_dim

RANDOM_ERROR = (
    "vmap: called random operation while in randomness error mode. Please either use the "
    "'same' or 'different' randomness flags on vmap or perform the randomness operation out "
    "of vmap"
)
RANDOM_OUT = (
    "vmap: We do not support calling out variants of random operations inside of vmap. "
    "Please use non-out variants as a workaround"
)
SAME_BATCHED = (
    "Vmap does not currently support same randomness with a batched tensor input. Please "
    "file an issue with functorch"
)


class Bind:
    """A rule generator waiting for its op (``defop`` calls ``bind``)."""

    def __init__(self, make: Callable, *a, **kw):
        self.make, self.a, self.kw = make, a, kw

    def bind(self, op):
        return self.make(op, *self.a, **self.kw)


def is_vmapped(x) -> bool:
    """Whether the tensor ``x`` is batched by a vmap (at any level)."""
    while isinstance(x, WrapperTensor):
        if x._interp.kind is Kind.VMAP:
            return True
        x = x._inner
    return False


def vmaps_of(x) -> list:
    """The vmap interpreters that batch the tensor ``x``, innermost first."""
    out = []
    while isinstance(x, WrapperTensor):
        if x._interp.kind is Kind.VMAP:
            out.append(x._interp)
        x = x._inner
    return out


def check_random_inputs(*inputs) -> None:
    """The refusals a random op with tensor ``inputs`` meets under vmap, before any check of
    its own, visiting the vmaps innermost first as the op passes them: 'error' refuses any
    random op, 'same' one with an input batched at that vmap (PyTorch would have to draw
    per sample there). Called by the random functions written with other ops, whose draws
    (``rand``...) take no tensor and so cannot see the batching of their inputs."""
    if not state.stack:
        return
    batched = [interp for x in inputs for interp in vmaps_of(x)]
    for interp in reversed(state.stack):
        if interp.kind is Kind.VMAP:
            if interp.randomness == "error":
                raise RuntimeError(RANDOM_ERROR)
            if interp.randomness == "same" and any(b is interp for b in batched):
                raise RuntimeError(SAME_BATCHED)


def check_random_out(out) -> None:
    """vmap's refusal of a random function's ``out=`` form, in any randomness mode."""
    if out is not None and any(interp.kind is Kind.VMAP for interp in state.stack):
        raise RuntimeError(RANDOM_OUT)


def vmap_sizes(x) -> tuple:
    """The batch sizes of the vmaps that batch the tensor ``x``, outermost first (the batch
    dims PyTorch's physical values have in front)."""
    out = []
    while isinstance(x, WrapperTensor):
        if x._interp.kind is Kind.VMAP:
            out.append(x._interp.size)
        x = x._inner
    return tuple(reversed(out))


def vmap_depth(x) -> int:
    """How many vmaps batch the tensor ``x``."""
    return len(vmap_sizes(x))


def rule_generator(make: Callable) -> Callable:
    """Turn ``make(op, ...) -> rule`` into ``gen(...) -> Bind``."""

    def gen(*a, **kw):
        return Bind(make, *a, **kw)

    gen.__name__ = make.__name__
    gen.__doc__ = make.__doc__
    return gen


# ------------------------------------------------------------------ helpers
def front(x, bd):
    """x with its batch dimension first (unbatched values are returned as they are)."""
    if bd is None or bd == 0:
        return x
    return x.movedim(bd, 0)


def materialize(vmap, x, bd):
    """x with a batch dimension first, expanding an unbatched tensor (a view, no copy)."""
    if bd is None:
        return x.unsqueeze(0).expand(vmap.size, *x.shape)
    return front(x, bd)


def lshape(x, bd) -> tuple:
    """The logical shape of an inner value (its shape without the batch dim)."""
    s = x._data.shape if type(x) is Tensor else tuple(x.shape)  # (a plain value: its array's)
    return s if bd is None else s[:bd] + s[bd + 1 :]


def lrank(x, bd) -> int:
    """The logical rank of an inner value."""
    return (x._data.ndim if type(x) is Tensor else x.dim()) - (bd is not None)


def pdim(d: int, rank: int) -> int:
    """A logical dim of a rank-``rank`` tensor as a physical dim with the batch first."""
    return wrap_dim(d, rank) + 1


def pad_to(x, rank: int):
    """Batch-first x with size-1 dims after the batch dim up to logical ``rank``."""
    n = rank - (x.dim() - 1)
    if n <= 0:
        return x
    return x.reshape(x.shape[0], *((1,) * n), *x.shape[1:])


def any_batched(bdims) -> bool:
    for b in bdims:
        if isinstance(b, list):
            if any(v is not None for v in b):
                return True
        elif b is not None:
            return True
    return False


# ------------------------------------------------------------------ elementwise
def logical_cast(op, args, bdims, attrs, physical):
    """Cast tensor args to the dtypes type promotion picks for the *logical* shapes.

    A batched 0-d tensor is physically 1-d, and PyTorch's promotion treats 0-d tensors
    as weaker than dimensioned ones, so promotion must be decided on logical ranks. A
    dtype the op refuses after a shape check (``NoKernel.first``) refuses the
    ``physical`` operands' shapes first, as eager does.
    """
    dummies = [
        np.zeros((1,) * lrank(a, b), a.dtype.np) if isinstance(a, Tensor) else a
        for a, b in zip(args, bdims)
    ]
    try:
        cast, _ = op.prepare(dummies, attrs)
    except NotImplementedError:
        if any(k.first is not None for k in op.no_kernel):
            text = broadcast_mismatch([a.shape for a in physical if isinstance(a, Tensor)])
            if text is not None:
                raise RuntimeError(text) from None
        raise
    out = list(args)
    for i, (a, c) in enumerate(zip(args, cast)):
        if isinstance(a, Tensor) and hasattr(c, "dtype") and c.dtype != a.dtype.np:
            from .._core.dtype import from_np

            out[i] = a.to(from_np(c.dtype))
    return out


def _elementwise(op):
    def rule(vmap, args, bdims, attrs):
        # (a plain value's rank and dtype read off its array: no property calls per operand)
        rank = 0
        dtype, mixed = None, False
        for a, b in zip(args, bdims):
            if isinstance(a, Tensor):
                if type(a) is Tensor:
                    arr = a._data
                    r, d = arr.ndim, arr.dtype
                else:
                    r, d = a.dim(), a.dtype.np
                if b is not None:
                    r -= 1
                if r > rank:
                    rank = r
                if dtype is None:
                    dtype = d
                elif d != dtype:
                    mixed = True
        new = _batch_first_all(args, bdims, rank)
        if mixed and op.prepare is not None:
            args = logical_cast(op, args, bdims, attrs, new)
            new = _batch_first_all(args, bdims, rank)
        return dispatch(op, tuple(new), attrs), 0

    return rule


def _batch_first_all(args, bdims, rank: int) -> list:
    """The batched args batch first and padded to logical ``rank`` (pad_to(front(...)))."""
    new = []
    for a, b in zip(args, bdims):
        if b is not None:
            if b:
                a = a.movedim(b, 0)
            if (a._data.ndim if type(a) is Tensor else a.dim()) <= rank:
                a = pad_to(a, rank)
        new.append(a)
    return new


elementwise = rule_generator(_elementwise)


# ------------------------------------------------------------------ dims
def _along_dims(op, names=("dim",), none="all", extra=None, scalar_trick=True):
    """Ops of one tensor (the first input) with dimension attributes: move the batch
    first and shift the dims. ``none`` says what dim=None means: "all" (every logical
    dim), "flatten" (reduce the flattened tensor) or "keep" (leave None). ``extra``
    maps an attribute to how many dims it may address beyond the input's rank
    (``unsqueeze``: 1). A logical 0-d input runs as shape (1,) and is squeezed back
    (``scalar_trick``), which suits ops whose output rank is at most the input's."""
    extra = extra or {}

    def rule(vmap, args, bdims, attrs):
        x = materialize(vmap, args[0], bdims[0])
        rank = x.dim() - 1
        scalar = rank == 0 and scalar_trick
        if scalar:
            x = x.unsqueeze(1)
            rank = 1
        new = dict(attrs)
        for n in names:
            d = attrs.get(n)
            if d is None:
                if none == "all":
                    new[n] = tuple(range(1, rank + 1))
                elif none == "flatten":
                    x = x.reshape(x.shape[0], -1)
                    new[n] = 1
                continue
            r = rank + extra.get(n, 0)
            if isinstance(d, (list, tuple)):
                new[n] = type(d)(pdim(v, r) for v in d) if d else tuple(range(1, rank + 1))
            else:
                new[n] = pdim(d, r)
        rest = tuple(a if b is None else front(a, b) for a, b in zip(args[1:], bdims[1:]))
        out = dispatch(op, (x, *rest), new)
        if scalar:
            out = _squeeze_scalar(out)
        elif none == "flatten" and attrs.get(names[0]) is None and attrs.get("keepdim"):
            out = _keepdim_shape(out, rank)
        return out, 0

    return rule


def _squeeze_scalar(out):
    if isinstance(out, tuple):
        return tuple(_squeeze_scalar(o) for o in out)
    return out.squeeze(1) if out.dim() == 2 else out


def _keepdim_shape(out, rank):
    if isinstance(out, tuple):
        return tuple(_keepdim_shape(o, rank) for o in out)
    return out.reshape(out.shape[0], *((1,) * rank))


along_dims = rule_generator(_along_dims)


# ------------------------------------------------------------------ others
def _batch_first(op, inputs=None):
    """Ops that take any number of leading batch dimensions already (linalg, matmul of
    stacks): move the batch first; unbatched operands broadcast without being expanded
    (``inputs`` lists the positions that need the batch dim materialized instead)."""
    need = frozenset(inputs or ())

    def rule(vmap, args, bdims, attrs):
        new = []
        for i, (a, b) in enumerate(zip(args, bdims)):
            if i in need and isinstance(a, Tensor):
                new.append(materialize(vmap, a, b))
            else:
                new.append(front(a, b))
        return dispatch(op, tuple(new), attrs), 0

    return rule


batch_first = rule_generator(_batch_first)


def _min_rank(op, n: int, error, inner=None):
    """``inner``'s rule (default: batch first) after checking that the logical input has
    at least ``n`` dims; ``error(rank, attrs)`` is the exception otherwise."""
    rule = (inner or batch_first()).bind(op)

    def checked(vmap, args, bdims, attrs):
        rank = lrank(args[0], bdims[0])
        if rank < n:
            raise error(rank, attrs)
        return rule(vmap, args, bdims, attrs)

    return checked


min_rank = rule_generator(_min_rank)


def decompose(fn: Callable) -> Callable:
    """A rule that runs ``fn(*args, **attrs)``, written with other ops, at this vmap level."""

    def rule(vmap, args, bdims, attrs):
        return vmap.call(fn, args, bdims, attrs)

    return rule


def _random_factory(op, size="size"):
    """A random draw with no tensor inputs: 'different' draws the whole batch at once,
    'same' draws one unbatched value."""

    def rule(vmap, args, bdims, attrs):
        if vmap.randomness == "error":
            raise RuntimeError(RANDOM_ERROR)
        if vmap.randomness == "same":
            return dispatch(op, tuple(args), attrs), None
        new = dict(attrs)
        new[size] = (vmap.size, *attrs[size])
        return dispatch(op, tuple(args), new), 0

    return rule


random_factory = rule_generator(_random_factory)

__all__ = [
    "RANDOM_ERROR",
    "RANDOM_OUT",
    "SAME_BATCHED",
    "along_dims",
    "any_batched",
    "batch_first",
    "check_random_inputs",
    "check_random_out",
    "decompose",
    "elementwise",
    "front",
    "is_vmapped",
    "lrank",
    "lshape",
    "materialize",
    "min_rank",
    "pad_to",
    "pdim",
    "random_factory",
    "rule_generator",
    "vmap_depth",
    "vmap_sizes",
    "vmaps_of",
]
