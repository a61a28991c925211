"""torch.distributions.utils: parameter broadcasting, probs/logits, lazy properties and the
packing of lower triangles."""

from __future__ import annotations

import functools
import numbers

from ..nn import functional as F
from ._api import (
    Tensor,
    arange,
    broadcast_tensors,
    empty,
    enable_grad,
    finfo,
    get_default_dtype,
    log,
    log1p,
    sigmoid,
    tensor,
)

euler_constant = 0.57721566490153286060  # Euler-Mascheroni constant

__all__ = [
    "broadcast_all",
    "logits_to_probs",
    "clamp_probs",
    "probs_to_logits",
    "lazy_property",
    "tril_matrix_to_vec",
    "vec_to_tril_matrix",
]


def _is_number(value):
    """A Python number (PyTorch's ``_Number``): a parameter given as one makes a scalar
    batch shape."""
    return isinstance(value, numbers.Number) and not isinstance(value, Tensor)


def broadcast_all(*values):
    """Broadcast tensors and numbers together. Numbers become tensors of the first tensor's
    dtype and device, or of the default dtype when there is none."""
    if not all(isinstance(v, Tensor) or _is_number(v) for v in values):
        raise ValueError(
            "Input arguments must all be instances of Number, torch.Tensor or objects "
            "implementing __torch_function__."
        )
    like = next((v for v in values if isinstance(v, Tensor)), None)
    options = (
        {"dtype": get_default_dtype()}
        if like is None
        else {"dtype": like.dtype, "device": like.device}
    )
    tensors = [v if isinstance(v, Tensor) else tensor(v, **options) for v in values]
    return broadcast_tensors(*tensors)


def _standard_normal(shape, dtype, device):
    """Standard normal draws from numtorch's generator (``manual_seed`` governs them)."""
    return empty(shape, dtype=dtype, device=device).normal_()


def _sum_rightmost(value, dim):
    """Sum the ``dim`` rightmost dimensions of ``value``."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[:-dim]) + (-1,)).sum(-1)


def logits_to_probs(logits, is_binary=False):
    """Logits to probabilities: the sigmoid when binary, else a softmax over the last dim."""
    if is_binary:
        return sigmoid(logits)
    return F.softmax(logits, dim=-1)


def clamp_probs(probs):
    """Clamp into ``[eps, 1 - eps]`` of the dtype, so that logs stay finite."""
    eps = finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    """Probabilities to logits: ``log p - log1p(-p)`` when binary, else ``log p``."""
    clamped = clamp_probs(probs)
    if is_binary:
        return log(clamped) - log1p(-clamped)
    return log(clamped)


class lazy_property:
    """A property computed once per instance, on first access (under grad mode, so that
    a derived parameter keeps its history), then stored as a plain attribute."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        functools.update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    """What a lazy_property reads as on the class: also a property, for introspection."""

    def __init__(self, wrapped):
        property.__init__(self, wrapped)


def _tril_mask(n, diag, device):
    rows = arange(n, device=device)
    return rows < rows.view(-1, 1) + (diag + 1)


def tril_matrix_to_vec(mat, diag=0):
    """The entries of the lower triangle (below diagonal ``diag``), row by row."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    return mat[..., _tril_mask(n, diag, mat.device)]


def vec_to_tril_matrix(vec, diag=0):
    """The inverse of ``tril_matrix_to_vec``: a square matrix with zeros above ``diag``."""
    b = 1 + 2 * diag
    n = (-b + (b * b + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    if round(n) - n > finfo(vec.dtype).eps:
        raise ValueError(
            f"The size of last dimension is {vec.shape[-1]} which cannot be expressed as "
            "the lower triangular part of a square D x D matrix."
        )
    n = round(n)
    mat = vec.new_zeros(tuple(vec.shape[:-1]) + (n, n))
    mat[..., _tril_mask(n, diag, vec.device)] = vec
    return mat
