"""``Tensor.__getitem__`` / ``__setitem__``: a Python subscript parsed into a basic view
(getitem) and advanced indices (index, index_put_); assignment copies into the view."""

from __future__ import annotations

import numpy as np

from ..._core import dtype as dt
from ..._core.dispatch import dispatch
from ..._core.inplace import check_inplace, check_operands, run_inplace
from ..._core.interpreter import _VMAP_READ, Kind
from ..._core.methods import tensor_methods
from ..._core.state import state
from ..._core.tensor import Tensor, check_writable
from .._batching import is_vmapped, vmap_sizes
from ..creation import tensor
from ..views import _expand_size
from .advanced import index_p, index_put_p
from .basic import _whole, getitem_p
from .copy_fill import copy_p, fill_p


def _as_tuple(idx) -> tuple:
    if isinstance(idx, tuple):
        return idx
    if isinstance(idx, list) and len(idx) < 32:
        for v in idx:
            if v is None or v is Ellipsis or isinstance(v, (slice, Tensor, list, tuple)):
                return tuple(idx)
    return (idx,)


def _to_index_tensor(v) -> Tensor:
    """A sequence used as an index: bool and uint8 data stay masks, anything else is long
    (PyTorch converts ``[1.7]`` and ``[[]]`` to long as well)."""
    t = tensor(v) if not isinstance(v, Tensor) else v
    if t.dtype.name not in ("bool", "uint8", "int64"):
        t = t.to(dt.int64)
    return t


def _int(v) -> int:
    return v if isinstance(v, int) else int(v.__index__())


def _parse(x: Tensor, idx):
    """Split an index into a basic NumPy key (a view) and advanced tensors placed after it."""
    items = []
    for v in _as_tuple(idx):
        if isinstance(v, Tensor) and v.dim() == 0 and v._level == 0:
            if v.dtype.name == "bool":
                v = bool(v.item())
            elif not (v.dtype.is_floating_point or v.dtype.is_complex):
                v = int(v.item())
        elif isinstance(v, Tensor) and v._level and v.dtype.name == "bool" and not v.dim():
            # PyTorch reads a 0-d mask (vmap's error if batched) unless vmap is the
            # innermost transform (then vmap's own error for a mask)
            if v._interp.kind is not Kind.VMAP:
                v = bool(v)
            elif state.stack[-1].kind is not Kind.VMAP:
                raise RuntimeError(_VMAP_READ)
        elif isinstance(v, (list, tuple, np.ndarray)) and not isinstance(v, bool):
            v = _to_index_tensor(v.tolist() if isinstance(v, np.ndarray) else v)
        items.append(v)
    consumed = 0
    for v in items:
        if isinstance(v, Tensor):
            consumed += v.dim() if v.dtype.name == "bool" else 1
        elif v is None or v is Ellipsis or isinstance(v, bool):
            continue
        else:
            consumed += 1
    ndim = x.dim()
    if consumed > ndim:
        if ndim == 0 and not isinstance(idx, (tuple, list)):
            _zero_dim_index(x, idx)
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    shape = x.shape
    basic, adv, dims = [], [], []
    src = 0  # input dim
    out = 0  # dim of the basic view
    for v in items:
        if v is Ellipsis:
            n = ndim - consumed
            basic.extend([slice(None)] * n)
            src += n
            out += n
            consumed = ndim  # a second Ellipsis expands to nothing
        elif v is None:
            basic.append(None)
            out += 1
        elif isinstance(v, bool):
            # a new dim of size one indexed by [0] (True) or [] (False): a copy, as in PyTorch
            basic.append(None)
            adv.append(tensor([0] if v else [], dtype=dt.int64))
            dims.append(out)
            out += 1
        elif isinstance(v, slice):
            start, stop, step = (None if s is None else _int(s) for s in (v.start, v.stop, v.step))
            if step is not None and step <= 0:
                raise ValueError("step must be greater than zero")
            basic.append(slice(start, stop, step))
            src += 1
            out += 1
        elif isinstance(v, Tensor):
            if v.dtype.is_floating_point or v.dtype.is_complex:
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            k = v.dim() if v.dtype.name == "bool" else 1
            basic.extend([slice(None)] * k)
            adv.append(v)
            dims.append(out)
            src += k
            out += k
        else:
            try:
                i = _int(v)
            except (TypeError, AttributeError):
                raise IndexError(
                    "only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                    "Variables are valid indices (got " + type(v).__name__ + ")"
                ) from None
            size = shape[src]
            if not -size <= i < size:
                raise IndexError(f"index {i} is out of bounds for dimension {src} with size {size}")
            basic.append(i)
            src += 1
    return tuple(basic), adv, tuple(dims)


def _zero_dim_index(x: Tensor, idx) -> None:
    """PyTorch's errors for a lone int or slice on a 0-d tensor (``x[0]``, ``x[:]``); under
    vmap the slice's batch rule reports the dim it shifted past the batch."""
    if isinstance(idx, int) and not isinstance(idx, bool):
        raise IndexError(
            "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
            "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number"
        )
    if isinstance(idx, slice):
        if is_vmapped(x):
            raise IndexError(
                "Dimension out of range (expected to be in range of [-1, 0], but got 1)"
            )
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")


def _trivial(basic: tuple, ndim: int) -> bool:
    """Whether the basic part selects everything (missing trailing dims are full slices)."""
    return len(basic) <= ndim and all(isinstance(b, slice) and b == slice(None) for b in basic)


def _skipped(basic: tuple, shape) -> bool:
    """Whether every component of a basic index is a slice PyTorch skips."""
    return len(basic) <= len(shape) and all(
        isinstance(b, slice) and _whole(b, n) for b, n in zip(basic, shape)
    )


def tensor_getitem(self: Tensor, idx) -> Tensor:
    """``self[idx]``: basic indexing gives a view; tensors and masks give a copy."""
    basic, adv, dims = _parse(self, idx)
    if not adv and type(idx) is not slice and _skipped(basic, self.shape):
        basic = ()  # PyTorch skips each slice that keeps its dim: x[...], x[:, :] are aliases
    v = self
    if not (adv and _trivial(basic, self.dim())):
        v = dispatch(getitem_p, (self,), {"index": basic, "shape": tuple(self.shape)})
    if adv:
        v = dispatch(index_p, (v, adv), {"dims": dims, "shape": tuple(v.shape)})
    return v


def _strip_leading_ones(value, ndim: int):
    if isinstance(value, Tensor):
        while value.dim() > ndim and value.shape[0] == 1:
            value = value.reshape(tuple(value.shape[1:]))
    return value


def _mask_fill(adv: list, value: Tensor) -> bool:
    """Whether ``self[mask] = value`` is a masked fill in PyTorch (a 0-d value)."""
    return len(adv) == 1 and adv[0].dtype.name == "bool" and value.dim() == 0


def tensor_setitem(self: Tensor, idx, value) -> None:
    """``self[idx] = value``: an in-place copy into the view, or index_put_ for tensor indices."""
    check_writable(self)
    basic, adv, dims = _parse(self, idx)
    v = self
    if not _trivial(basic, self.dim()):
        v = dispatch(getitem_p, (self,), {"index": basic, "shape": tuple(self.shape)})
    if not isinstance(value, Tensor):
        value = tensor(value, dtype=self.dtype)
    given = value.dtype  # PyTorch expands the value before it casts it
    if given != self.dtype and (not adv or _mask_fill(adv, value)):
        # the view's refusals see the value before the cast drops its history; PyTorch
        # fills with a 0-d value (its checks) and copies anything else (copy_ into an
        # integer tensor checks nothing)
        fills = not value.dim() and v.dim()
        if value._rg and (fills or v.dtype._kind >= 2):
            check_inplace(v, (value,))
        value = value.to(self.dtype)  # (index_put_ refuses a tensor of another dtype)
    if not adv and tuple(value.shape) == tuple(v.shape):  # PyTorch copies it as it is
        run_inplace(copy_p, v, (value,), {})
        return
    if not adv:
        # PyTorch views the value without its leading ones and expands it to the target (a
        # batched value with its batch dims, under the batch rule's text)
        sizes = vmap_sizes(value) if state.stack else ()
        fills = not value.dim() and v.dim() and value.device.type == "cpu"
        value = _strip_leading_ones(value, v.dim() if sizes else 0)
        shape, target = tuple(value.shape), tuple(v.shape)
        if sizes and len(shape) <= len(target):
            pad = (1,) * (len(target) - len(shape))
            shape, target = (*sizes, *pad, *shape), (*sizes, *target)
        _expand_size(shape, target, given.np, bool(sizes), v.device.type)
        if state.stack and not value.dim() and v.dim():
            if value._level <= v._level:  # a grad level above the vmap: its leaf check first
                check_inplace(v, (value,))
            check_operands(v, (value,), fill_p)  # PyTorch fills with a 0-d value
        if fills:  # (a 0-d value given: its node is FillBackward3, as PyTorch's)
            run_inplace(fill_p, v, (value,), {})
        else:
            run_inplace(copy_p, v, (value,), {})
        return
    run_inplace(
        index_put_p, v, (adv, _strip_leading_ones(value, 64)), {"accumulate": False, "dims": dims}
    )


tensor_methods(
    {
        "__getitem__": tensor_getitem,
        "__setitem__": tensor_setitem,
    }
)
