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


# ------------------------------------------------------------------ torch.signal.windows
def _signal_window(name, values, M, sym, dtype, layout, device, requires_grad) -> Tensor:
    """A window of ``M`` points from ``values(n, m)`` (float64 sample indices of a symmetric
    window of ``m`` points); ``sym=False`` takes the first M of M + 1 (periodic)."""
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    kind = dt.to_dtype(dtype) if dtype is not None else dt.get_default_dtype()
    if kind not in (dt.float32, dt.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {kind}")
    if layout is not None and str(layout) != "torch.strided":
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    d = kind.np

    def make():
        if M <= 1:
            return np.ones((M,), dtype=d)
        m = M if sym else M + 1
        return np.asarray(values(np.arange(m, dtype=np.float64), m)[:M], dtype=d)

    return _finish(_allocate(make, (M,), d), requires_grad, device)


def _coefficients(a):
    if not isinstance(a, (list, tuple)):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    return [float(c) for c in a]


@factory
def general_cosine(
    M, *, a, sym=True, dtype=None, layout=None, device=None, requires_grad=False
) -> Tensor:
    """sum_k (-1)^k a_k cos(2 pi k n / (M - 1))."""
    v = _cosine_sum(*_coefficients(a))
    return _signal_window("general_cosine", v, M, sym, dtype, layout, device, requires_grad)


@factory
def general_hamming(
    M, *, alpha=0.54, sym=True, dtype=None, layout=None, device=None, requires_grad=False
) -> Tensor:
    """The generalized Hamming window: general_cosine with (alpha, 1 - alpha)."""
    v = _cosine_sum(alpha, 1.0 - alpha)
    return _signal_window("general_cosine", v, M, sym, dtype, layout, device, requires_grad)


@factory
def hamming(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False) -> Tensor:
    """The Hamming window (general_hamming with alpha = 0.54)."""
    return general_hamming(
        M,
        alpha=0.54,
        sym=sym,
        dtype=dtype,
        layout=layout,
        device=device,
        requires_grad=requires_grad,
    )


@factory
def hann(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False) -> Tensor:
    """The Hann window (general_hamming with alpha = 0.5)."""
    v = _cosine_sum(0.5, 0.5)
    return _signal_window("general_cosine", v, M, sym, dtype, layout, device, requires_grad)


_NUTTALL = [0.3635819, 0.4891775, 0.1365995, 0.0106411]


@factory
def nuttall(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False) -> Tensor:
    """The minimum 4-term Blackman-Harris window of Nuttall."""
    v = _cosine_sum(*_NUTTALL)
    return _signal_window("general_cosine", v, M, sym, dtype, layout, device, requires_grad)


@factory
def blackman(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False) -> Tensor:
    """The Blackman window: 0.42 - 0.5 cos(2 pi n / (M - 1)) + 0.08 cos(4 pi n / (M - 1))."""
    v = _cosine_sum(0.42, 0.5, 0.08)
    return _signal_window("blackman", v, M, sym, dtype, layout, device, requires_grad)


def _bartlett_values(n, m):
    return 1 - np.abs(2 * n / (m - 1) - 1)


@factory
def bartlett(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False) -> Tensor:
    """The triangular window with zeros at both ends."""
    return _signal_window(
        "bartlett", _bartlett_values, M, sym, dtype, layout, device, requires_grad
    )


def _cosine_values(n, m):
    return np.sin(np.pi * (n + 0.5) / m)


@factory
def cosine(M, *, sym=True, dtype=None, layout=None, device=None, requires_grad=False) -> Tensor:
    """The cosine (sine) window: sin(pi (n + 1/2) / M)."""
    return _signal_window("cosine", _cosine_values, M, sym, dtype, layout, device, requires_grad)


@factory
def exponential(
    M,
    *,
    center=None,
    tau=1.0,
    sym=True,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
) -> Tensor:
    """exp(-|n - center| / tau), centred by default."""
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")

    def values(n, m):
        c = (m - 1) / 2 if center is None else center
        return np.exp(-np.abs(n - c) / tau)

    return _signal_window("exponential", values, M, sym, dtype, layout, device, requires_grad)


@factory
def gaussian(
    M, *, std=1.0, sym=True, dtype=None, layout=None, device=None, requires_grad=False
) -> Tensor:
    """exp(-((n - (M - 1) / 2) / std)^2 / 2)."""
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")

    def values(n, m):
        return np.exp(-(((n - (m - 1) / 2) / std) ** 2) / 2)

    return _signal_window("gaussian", values, M, sym, dtype, layout, device, requires_grad)


@factory
def kaiser(
    M, *, beta=12.0, sym=True, dtype=None, layout=None, device=None, requires_grad=False
) -> Tensor:
    """I0(beta sqrt(1 - r^2)) / I0(beta), r running from -1 to 1 across the window."""
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    return _signal_window(
        "kaiser", _kaiser(float(beta)), M, sym, dtype, layout, device, requires_grad
    )


__all__ = [
    "bartlett",
    "blackman",
    "cosine",
    "exponential",
    "gaussian",
    "general_cosine",
    "general_hamming",
    "hamming",
    "hann",
    "kaiser",
    "nuttall",
    "bartlett_window",
    "blackman_window",
    "hamming_window",
    "hann_window",
    "kaiser_window",
]
