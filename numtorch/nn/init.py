"""torch.nn.init: fill a tensor in place with a layer's initial values.

Every function writes its tensor under no_grad and returns it. The random ones draw with
the tensor methods ``uniform_``/``normal_`` (``generator=`` as in PyTorch 2.x), so the
draws follow numtorch's generators and vmap's randomness modes.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable
from typing import Literal

from .._core import dtype as dt
from .._core.tensor import Tensor
from ..autograd.grad_mode import no_grad
from ..ops.comparison import where
from ..ops.creation import Generator, arange, empty_like
from ..ops.creation import eye as _eye
from ..ops.creation import tensor as _tensor
from ..ops.linalg.composites import qr

_LINEAR = (
    "linear",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
)
_Nonlinearity = Literal[
    "linear",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "sigmoid",
    "tanh",
    "relu",
    "leaky_relu",
    "selu",
]
_FanMode = Literal["fan_in", "fan_out"]
_ZERO_ELEMENTS = "Initializing zero-element tensors is a no-op"


def calculate_gain(nonlinearity: _Nonlinearity, param: int | float | None = None) -> float:
    """The recommended gain for a nonlinearity (``param``: leaky_relu's negative slope)."""
    if nonlinearity in _LINEAR or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4  # PyTorch's empirical value
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """(fan_in, fan_out) of a weight shaped (out, in, *kernel)."""
    if tensor.dim() < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions"
        )
    receptive = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _calculate_correct_fan(tensor: Tensor, mode: _FanMode) -> int:
    """fan_in or fan_out, as ``mode`` names it."""
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(
    tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: Generator | None = None
) -> Tensor:
    """Fill ``tensor`` with samples of U(a, b)."""
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(
    tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: Generator | None = None
) -> Tensor:
    """Fill ``tensor`` with samples of N(mean, std**2)."""
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def _norm_cdf(x: float) -> float:
    return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0


def trunc_normal_(
    tensor: Tensor,
    mean: float = 0.0,
    std: float = 1.0,
    a: float = -2.0,
    b: float = 2.0,
    generator: Generator | None = None,
) -> Tensor:
    """Fill ``tensor`` with samples of N(mean, std**2) truncated to [a, b]."""
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn(
            "mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
            "The distribution of values may be incorrect.",
            stacklevel=2,
        )
    with no_grad():
        if _norm_cdf((b - mean) / std) - _norm_cdf((a - mean) / std) > 0.3:
            # Most normal draws land in [a, b]: redraw the others (bounds in the tensor's dtype).
            lo, hi = (_tensor(v, dtype=tensor.dtype).item() for v in (a, b))

            def draw():
                x = empty_like(tensor).normal_(mean, std, generator=generator)
                return x, (x >= lo) & (x <= hi)
        else:
            # A narrow or far window: uniform proposals on [a, b], accepted with probability
            # pdf(x) / max pdf on [a, b].
            log_peak = -0.5 * ((max(a, min(mean, b)) - mean) / std) ** 2

            def draw():
                x = empty_like(tensor).uniform_(a, b, generator=generator)
                u = empty_like(tensor).uniform_(generator=generator)
                return x, u.log() <= ((x - mean) / std).square() * -0.5 - log_peak

        result, ok = draw()
        while not bool(ok.all()):
            x, accepted = draw()
            result, ok = where(ok, result, x), ok | accepted
        return tensor.copy_(result)


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill ``tensor`` with ``val``."""
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor: Tensor) -> Tensor:
    """Fill ``tensor`` with ones."""
    return constant_(tensor, 1.0)


def zeros_(tensor: Tensor) -> Tensor:
    """Fill ``tensor`` with zeros."""
    with no_grad():
        return tensor.zero_()


def eye_(tensor: Tensor) -> Tensor:
    """Fill a 2-D ``tensor`` with the identity matrix."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with no_grad():
        tensor.copy_(_eye(*tensor.shape, dtype=tensor.dtype, device=tensor.device))
    return tensor


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fill a 3/4/5-D convolution weight with the Dirac delta: each group's first
    min(out/groups, in) channels pass their input through unchanged."""
    if tensor.dim() not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    out, cin, *kernel = tensor.shape
    if out % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    per_group = out // groups
    d = arange(min(per_group, cin), device=tensor.device)
    rows = (arange(groups, device=tensor.device)[:, None] * per_group + d).reshape(-1)
    with no_grad():
        tensor.zero_()
        tensor[(rows, d.repeat(groups), *(k // 2 for k in kernel))] = 1
    return tensor


def _fan_draw(tensor: Tensor, uniform: bool, std: float, generator) -> Tensor:
    """U(-sqrt(3) std, sqrt(3) std) or N(0, std**2), the same variance either way."""
    if uniform:
        bound = math.sqrt(3.0) * std
        return uniform_(tensor, -bound, bound, generator)
    return normal_(tensor, 0.0, std, generator)


def _named(fn: Callable, name: str, doc: str) -> Callable:
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


def _xavier(uniform: bool, doc: str) -> Callable[..., Tensor]:
    def init(tensor: Tensor, gain: float = 1.0, generator: Generator | None = None) -> Tensor:
        fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
        std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
        return _fan_draw(tensor, uniform, std, generator)

    return _named(init, f"xavier_{'uniform' if uniform else 'normal'}_", doc)


def _kaiming(uniform: bool, doc: str) -> Callable[..., Tensor]:
    def init(
        tensor: Tensor,
        a: float = 0,
        mode: _FanMode = "fan_in",
        nonlinearity: _Nonlinearity = "leaky_relu",
        generator: Generator | None = None,
    ) -> Tensor:
        if 0 in tensor.shape:
            warnings.warn(_ZERO_ELEMENTS, stacklevel=2)
            return tensor
        fan = _calculate_correct_fan(tensor, mode)
        std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
        return _fan_draw(tensor, uniform, std, generator)

    return _named(init, f"kaiming_{'uniform' if uniform else 'normal'}_", doc)


xavier_uniform_ = _xavier(
    True, "Glorot initialization: U(-a, a), a = gain sqrt(6 / (fan_in + fan_out))."
)
xavier_normal_ = _xavier(
    False, "Glorot initialization: N(0, std**2), std = gain sqrt(2 / (fan_in + fan_out))."
)
kaiming_uniform_ = _kaiming(True, "He initialization: U(-b, b), b = gain sqrt(3 / fan_mode).")
kaiming_normal_ = _kaiming(False, "He initialization: N(0, std**2), std = gain / sqrt(fan_mode).")


def orthogonal_(tensor: Tensor, gain: float = 1, generator: Generator | None = None) -> Tensor:
    """Fill ``tensor`` (trailing dims flattened) with a (semi-)orthogonal matrix times gain,
    uniformly distributed over the orthogonal group."""
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    with no_grad():
        flat = empty_like(tensor).reshape(rows, cols).normal_(0, 1, generator=generator)
        if rows < cols:
            flat = flat.T
        q, r = qr(flat)
        # The signs of R's diagonal moved into Q make Q Haar-distributed (Mezzadri 2007).
        q = q * r.diagonal().sign()
        if rows < cols:
            q = q.T
        tensor.copy_(q.reshape(tensor.shape))
        tensor.mul_(gain)
    return tensor


def sparse_(
    tensor: Tensor, sparsity: float, std: float = 0.01, generator: Generator | None = None
) -> Tensor:
    """Fill a 2-D ``tensor`` with N(0, std**2) samples, then zero ceil(sparsity * rows)
    random entries in each column."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = math.ceil(sparsity * rows)
    with no_grad():
        tensor.normal_(0, std, generator=generator)
        # The first num_zeros rows of an independent random permutation per column.
        keys = empty_like(tensor, dtype=dt.float64).uniform_(generator=generator)
        zero_rows = keys.argsort(dim=0)[:num_zeros]
        tensor.scatter_(0, zero_rows, 0.0)
    return tensor


def _deprecated(new):
    """The pre-0.4 name without the underscore, warning that it is deprecated."""
    old = new.__name__[:-1]

    @functools.wraps(new)
    def init(*args, **kwargs):
        warnings.warn(
            f"`nn.init.{old}` is now deprecated in favor of `nn.init.{new.__name__}`.",
            FutureWarning,
            stacklevel=2,
        )
        return new(*args, **kwargs)

    return _named(init, old, f"Deprecated alias of :func:`{new.__name__}`.")


uniform, normal, constant, eye, dirac = map(
    _deprecated, (uniform_, normal_, constant_, eye_, dirac_)
)
xavier_uniform, xavier_normal = map(_deprecated, (xavier_uniform_, xavier_normal_))
kaiming_uniform, kaiming_normal = map(_deprecated, (kaiming_uniform_, kaiming_normal_))
orthogonal, sparse = map(_deprecated, (orthogonal_, sparse_))

__all__ = [
    "calculate_gain",
    "uniform_",
    "normal_",
    "trunc_normal_",
    "constant_",
    "ones_",
    "zeros_",
    "eye_",
    "dirac_",
    "xavier_uniform_",
    "xavier_normal_",
    "kaiming_uniform_",
    "kaiming_normal_",
    "orthogonal_",
    "sparse_",
    "uniform",
    "normal",
    "constant",
    "eye",
    "dirac",
    "xavier_uniform",
    "xavier_normal",
    "kaiming_uniform",
    "kaiming_normal",
    "orthogonal",
    "sparse",
]
