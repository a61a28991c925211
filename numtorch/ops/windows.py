"""Window functions (``torch.hann_window`` and its family): factories of one dimension.

Each window is computed in its own floating dtype, as PyTorch computes it, so float32 and
the half types round the way PyTorch's do. A periodic window of length ``L`` is the
symmetric window of length ``L + 1`` without its last point."""

from __future__ import annotations

import operator

import numpy as np
import scipy.special

from .._core import dtype as dt
from .._core.interpreter import factory
from .._core.tensor import Tensor
from .creation import _allocate, _dtype_or_default, _finish


def _length(name: str, window_length) -> int:
    if isinstance(window_length, Tensor):
        window_length = window_length.item()
    if isinstance(window_length, bool) or not isinstance(window_length, (int, np.integer)):
        try:
            window_length = operator.index(window_length)
        except TypeError:
            raise TypeError(
                f"{name}(): argument 'window_length' (position 1) must be int, "
                f"not {type(window_length).__name__}"
            ) from None
    if window_length < 0:
        raise RuntimeError(
            f"{name} requires non-negative window_length, got window_length={window_length}"
        )
    return int(window_length)


def _options(d: dt.dtype) -> str:
    """PyTorch's text for the options it checks (it reports requires_grad as unset)."""
    return (
        f"TensorOptions(dtype={d.cpp_name}, device=cpu, layout=Strided (default), "
        "requires_grad=false (default), pinned_memory=false, memory_format=(nullopt))"
    )


def _window(name, values, window_length, periodic, dtype, device, requires_grad) -> Tensor:
    """A window of ``window_length`` points: ``values(n, m)`` over the sample indices ``n``
    (in the result's dtype) of a symmetric window of ``m`` points."""
    length = _length(name, window_length)
    d = _dtype_or_default(dtype)
    kind = dt.to_dtype(dtype) if dtype is not None else dt.get_default_dtype()
    if kind.is_complex:
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{kind.scalar_name}'")
    if not kind.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: {_options(kind)}")

    def make():
        if length <= 1:
            return np.ones((length,), dtype=d)
        m = length + 1 if periodic else length
        return np.asarray(values(np.arange(m, dtype=d), m), dtype=d)[:length].copy()

    return _finish(_allocate(make, (length,), d), requires_grad, device)


def _cosine_sum(*coefs):
    """sum_k (-1)^k a_k cos(2 pi k n / (m - 1)), in the dtype of n."""

    def values(n, m):
        step = n.dtype.type(2 * np.pi / (m - 1))
        out = np.full(n.shape, coefs[0], dtype=n.dtype)
        for k, a in enumerate(coefs[1:], 1):
            out = out + n.dtype.type((-1) ** k * a) * np.cos(n * (step * k))
        return out

    return values


@factory
def hann_window(
    window_length,
    periodic=True,
    *,
    dtype=None,
    layout=None,
    device=None,
    pin_memory=False,
    requires_grad=False,
) -> Tensor:
    return _window(
        "hann_window",
        _cosine_sum(0.5, 0.5),
        window_length,
        periodic,
        dtype,
        device,
        requires_grad,
    )


@factory
def hamming_window(
    window_length,
    periodic=True,
    alpha=0.54,
    beta=0.46,
    *,
    dtype=None,
    layout=None,
    device=None,
    pin_memory=False,
    requires_grad=False,
) -> Tensor:
    return _window(
        "hamming_window",
        _cosine_sum(alpha, beta),
        window_length,
        periodic,
        dtype,
        device,
        requires_grad,
    )


@factory
def blackman_window(
    window_length,
    periodic=True,
    *,
    dtype=None,
    layout=None,
    device=None,
    pin_memory=False,
    requires_grad=False,
) -> Tensor:
    return _window(
        "blackman_window",
        _cosine_sum(0.42, 0.5, 0.08),
        window_length,
        periodic,
        dtype,
        device,
        requires_grad,
    )


def _bartlett(n, m):
    """The triangle 1 - |2n / (m - 1) - 1|, rising then falling."""
    rise = n * n.dtype.type(2 / (m - 1))
    return np.where(n <= (m - 1) / 2, rise, n.dtype.type(2) - rise)


@factory
def bartlett_window(
    window_length,
    periodic=True,
    *,
    dtype=None,
    layout=None,
    device=None,
    pin_memory=False,
    requires_grad=False,
) -> Tensor:
    return _window(
        "bartlett_window",
        _bartlett,
        window_length,
        periodic,
        dtype,
        device,
        requires_grad,
    )


def _kaiser(beta):
    def values(n, m):
        half = (m - 1) / 2
        r = (n.astype(np.float64) - half) / half
        return scipy.special.i0(beta * np.sqrt(np.maximum(1 - r * r, 0))) / scipy.special.i0(beta)

    return values


@factory
def kaiser_window(
    window_length,
    periodic=True,
    beta=12.0,
    *,
    dtype=None,
    layout=None,
    device=None,
    pin_memory=False,
    requires_grad=False,
) -> Tensor:
    return _window(
        "kaiser_window",
        _kaiser(float(beta)),
        window_length,
        periodic,
        dtype,
        device,
        requires_grad,
    )


__all__ = [
    "bartlett_window",
    "blackman_window",
    "hamming_window",
    "hann_window",
    "kaiser_window",
]
