"""Shape and view ops: reshape, permute, expand, cat, split, flips, diagonals."""

from __future__ import annotations

from ._families import LINEAR, method
from .._core.op import defop
from ..testing.samples import S


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
    samples=lambda make: [S((make((2, 3)), (3, 2))), S((make((2, 3)), (-1,))), S((make(()), (1, 1)))],
)  # fmt: skip
method(reshape, sizes=True)


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
