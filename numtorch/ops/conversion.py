"""Dtype conversion and copies."""

from __future__ import annotations

from .._core import dtype as dt
from .._core.op import defop
from ..testing.samples import S
from ._batching import elementwise
from ._families import LINEAR, method

to_dtype = defop(
    "to_dtype", lambda xp, x, dtype: x.astype(dtype.np), nin=1, vjp=lambda g: g, jvp=LINEAR,
    api="Tensor.to", node_name="ToCopyBackward0",
    samples=lambda make: [S((make((2,)), dt.int64)), S((make((2, 3)), dt.float64)), S((make(()), dt.float64))],
    test={"dtypes": ("float32", "float64", "int64")}, batch_rule=elementwise(),
)  # fmt: skip

clone = method(
    defop(
        "clone",
        lambda xp, x, *, memory_format=None: x.copy(),
        vjp=lambda g: g,
        jvp=LINEAR,
        samples=lambda make: [S((make((2, 3)),)), S((make(()),))],
        batch_rule=elementwise(),
    )  # fmt: skip
)


def _to_device(xp, x, device):
    from .._core.device import backend

    target = backend(device)
    if target is xp:
        return x
    return x.get() if hasattr(x, "get") else target.asarray(x)


to_device = defop(
    "to_device", _to_device, nin=1, vjp=lambda g, x: g.to(x.device), jvp=LINEAR,
    samples=None, api="Tensor.to", node_name="ToCopyBackward0", batch_rule=elementwise(),
)  # fmt: skip


def _contiguous(self, memory_format=None):
    """self when already C-contiguous, else a contiguous copy (differentiable)."""
    return self if self.is_contiguous() else clone.fn(self)


TENSOR_METHODS = {"contiguous": _contiguous}
