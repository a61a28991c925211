"""Argument normalizers shared by the layers (torch.nn.modules.utils), and the pieces the
layer families share: per-dim class generation, parameter creation, default init, repr."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from itertools import repeat
from typing import TYPE_CHECKING, Any, TypeAlias

from ..._core.tensor import Tensor
from ...ops.creation import empty
from .. import init
from ..parameter import Parameter

if TYPE_CHECKING:
    from ..._core.device import device
    from ..._core.dtype import dtype

# the argument types of the layers (torch.nn.common_types): an int (float) for every dim
# or one per dim
_size_any_t: TypeAlias = "int | tuple[int, ...]"
_ratio_any_t: TypeAlias = "float | tuple[float, ...]"
_DeviceLike: TypeAlias = "device | str | int | None"
_DTypeLike: TypeAlias = "dtype | None"


def _ntuple(n: int, name: str = "parse") -> Callable:
    """A parser that turns an int into an n-tuple and any iterable into a tuple."""

    def parse(x: Any) -> tuple:
        if isinstance(x, Iterable):
            return tuple(x)
        return tuple(repeat(x, n))

    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")

_SPATIAL = {1: "L", 2: "H, W", 3: "D, H, W"}


def _reverse_repeat_tuple(t: Sequence, n: int) -> tuple:
    """(a, b) -> (b, b, a, a) for n=2: a padding tuple in F.pad's last-dim-first order."""
    return tuple(x for x in reversed(t) for _ in range(n))


def _per_dim(
    base: type | Callable[[int], tuple[type, ...]],
    name: str,
    doc: str,
    module: str,
    nds: Iterable[int] = (1, 2, 3),
    **attrs: Any,
) -> list[type]:
    """The classes ``{name}{nd}d`` of a family, with ``_nd`` set: subclasses of ``base``
    (or of the bases ``base(nd)`` gives), ``doc`` formatted with ``nd`` and ``dims`` (the
    spatial dims' names, e.g. ``H, W``), each attr as given or, if callable, called with
    nd."""
    out = []
    for nd in nds:
        bases = (base,) if isinstance(base, type) else base(nd)
        ns = {"__doc__": doc.format(nd=nd, dims=_SPATIAL[nd]), "__module__": module, "_nd": nd}
        ns.update({k: v(nd) if callable(v) else v for k, v in attrs.items()})
        out.append(type(f"{name}{nd}d", bases, ns))
    return out


def _fields_repr(module: object, *names: str) -> str:
    """``name=value, ...`` for the named attributes of ``module``: an ``extra_repr``."""
    return ", ".join(f"{name}={getattr(module, name)}" for name in names)


def _weight_and_bias(
    module: Any,
    shape: tuple[int, ...],
    out_features: int,
    bias: bool,
    device: _DeviceLike,
    dtype: _DTypeLike,
) -> None:
    """Registers ``weight`` of ``shape`` and ``bias`` of ``out_features`` entries (None
    when not ``bias``), both uninitialized memory."""
    module.weight = Parameter(empty(shape, device=device, dtype=dtype))
    if bias:
        module.bias = Parameter(empty(out_features, device=device, dtype=dtype))
    else:
        module.register_parameter("bias", None)


def _fan_in_uniform_(weight: Tensor, bias: Tensor | None) -> None:
    """PyTorch's default init of the fan-in layers (Linear, Conv): weight ~
    kaiming_uniform(a=sqrt(5)), i.e. U(-1/sqrt(fan_in), 1/sqrt(fan_in)); bias ~ the same
    U, fan_in = weight.size(1) * prod(kernel)."""
    init.kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        fan_in, _ = init._calculate_fan_in_and_fan_out(weight)
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
        init.uniform_(bias, -bound, bound)
