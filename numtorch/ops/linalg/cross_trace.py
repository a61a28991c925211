"""The cross product (linalg.cross and torch.cross) and the trace of a matrix."""

from __future__ import annotations

from ..._core.dispatch import dispatch
from ..._core.meta import by_kernel
from ..._core.op import LINEAR, NoKernel, defop
from ..._opdb.samples import ErrorInput as E
from ..._opdb.samples import S
from .._batching import front, lrank, lshape, pdim
from ..creation import eye
from ..views import broadcast_shapes
from ._common import _INT, _align, _same_dtype, _scalar_type


def _cross_check(sa: tuple, sb: tuple, dim: int) -> None:
    if len(sa) != len(sb):
        raise RuntimeError(
            f"linalg.cross: inputs must have the same number of dimensions. Got {len(sa)} and {len(sb)}"
        )
    n = len(sa)
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})"
        )
    if sa[dim] != 3 or sb[dim] != 3:
        raise RuntimeError(
            f"linalg.cross: inputs dimension {dim} must have length 3. Got {sa[dim]} and {sb[dim]}"
        )


def _cross(xp, input, other, *, dim=-1):
    _cross_check(input.shape, other.shape, dim)
    return xp.cross(input, other, axis=dim)


def _cross_rule(vmap, args, bdims, attrs):
    """Both operands batch-first with the same number of dims (the kernel broadcasts)."""
    (a, b), (ba, bb) = args, bdims
    sa, dim = lshape(a, ba), attrs["dim"]
    _cross_check(sa, lshape(b, bb), dim)
    r = len(sa)
    return dispatch(linalg_cross_p, (_align(a, ba, r), _align(b, bb, r)), {"dim": pdim(dim, r)}), 0


def _linalg_cross_jvp(tinput, tother, input, other, dim):
    return linalg_cross(tinput, other, dim=dim) + linalg_cross(input, tother, dim=dim)


def _linalg_cross_samples(make):
    return [
        S((make((3,)), make((3,)))),
        S((make((2, 3)), make((2, 3)))),
        S((make((3, 2)), make((3, 2))), {"dim": 0}),
        S((make((1, 3)), make((4, 3)))),
    ]


def _linalg_cross_error_samples(make):
    return [
        E(
            S((make((2,)), make((2,)))),
            RuntimeError,
            "linalg.cross: inputs dimension -1 must have length 3. Got 2 and 2",
        ),
    ]


linalg_cross_p = defop(
    "linalg_cross",
    _cross,
    vjp=(
        lambda g, other, dim: linalg_cross(other.conj(), g, dim=dim),
        lambda g, input, dim: linalg_cross(g, input.conj(), dim=dim),
    ),
    jvp=_linalg_cross_jvp,
    prepare=_same_dtype(_scalar_type),
    batch_rule=_cross_rule,
    api="linalg.cross",
    out=True,
    no_kernel=NoKernel(
        "b",
        "cross",
        inputs=(0,),  # self's dtype picks the kernel
        first=lambda arrays, attrs: _cross_check(arrays[0].shape, arrays[1].shape, attrs["dim"]),
    ),
    test=_INT,
    samples=_linalg_cross_samples,
    error_samples=_linalg_cross_error_samples,
    complex32="cross",  # (PyTorch's kernel that refuses ComplexHalf)
    meta=by_kernel,
)
linalg_cross = linalg_cross_p.fn


def cross(input, other, dim=None, *, out=None):
    """torch.cross: ``dim=None`` means the first dim of size 3."""
    if dim is None:
        import warnings

        warnings.warn(
            "Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass "
            "the dim explicitly or simply use torch.linalg.cross.\nThe default value of dim will "
            "change to agree with that of linalg.cross in a future release.",
            UserWarning,
            stacklevel=2,
        )
        shape = (
            broadcast_shapes(input.shape, other.shape)
            if input.shape != other.shape
            else input.shape
        )
        dim = next((i for i, s in enumerate(shape) if s == 3), -1)
    return linalg_cross(input, other, dim=dim, out=out)


def _trace(xp, input):
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    out = xp.trace(input)
    return out.astype(xp.int64) if input.dtype.kind in "biu" else out


def _trace_rule(vmap, args, bdims, attrs):
    """The sum of the diagonals of the batch of matrices."""
    x, bd = args[0], bdims[0]
    if lrank(x, bd) != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {lrank(x, bd)}")
    return front(x, bd).diagonal(0, -2, -1).sum(-1), 0


def _trace_vjp(g, input_shape):  # sizes only: the node keeps no tensor (PyTorch's too)
    n, m = input_shape
    return g * eye(n, m, dtype=g.dtype, device=g.device)


trace_p = defop(
    "trace",
    _trace,
    vjp=_trace_vjp,
    jvp=LINEAR,
    batch_rule=_trace_rule,
    no_kernel=NoKernel("b", "trace"),
    test=_INT,
    samples=lambda make: [S((make((3, 3)),)), S((make((2, 4)),)), S((make((0, 0)),))],
    error_samples=lambda make: [
        E(S((make((3,)),)), RuntimeError, "trace: expected a matrix, but got tensor with dim 1")
    ],
    methods=True,
    complex32="trace",  # (PyTorch's kernel that refuses ComplexHalf)
    autocast="fp32",
    meta=by_kernel,
)
