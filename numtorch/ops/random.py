"""Random draws.

Four primitive ops draw with no tensor inputs: ``rand``, ``randn``, ``randint`` and
``randperm``. Under vmap their rule follows the randomness mode ('error' raises, 'same'
draws one unbatched value, 'different' draws the whole batch at once). Every other random
function (``rand_like``, ``normal``, ``bernoulli``, ``dropout``, the in-place ``uniform_``
and friends) is written with the primitives and ordinary ops, so it batches, honours the
modes and differentiates through those.
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

from .._core import dtype as dt
from .._core.device import backend, placement
from .._core.device import device as Device
from .._core.dispatch import dispatch
from .._core.messages import check_alloc
from .._core.methods import tensor_methods
from .._core.op import defop
from .._core.out import write_out
from .._core.pyargs import parsed
from .._core.state import state
from .._core.tensor import Tensor
from ._batching import (
    RANDOM_ERROR,
    check_random_inputs,
    check_random_out,
    random_factory,
    rule_generator,
    vmaps_of,
)
from .comparison import where
from .creation import Generator, _size, given_size, require_grad, zeros_like
from .generator import gpu_rng, rng
from .views import broadcast_tensors

_INPLACE_DIFFERENT = (
    "vmap: Cannot ask for different inplace randomness on an unbatched tensor. This will "
    "appear like same randomness. If this is necessary for your usage, please file an issue "
    "with functorch."
)
_INPLACE_BERNOULLI = (
    "vmap: inplace bernoulli(self, *extra_args) is not possible because there exists a "
    "Tensor `other` in extra_args that has more elements than `self`. This happened due to "
    "`other` being vmapped over but `self` not being vmapped over in a vmap. Please try to "
    "use out-of-place operators instead of inplace bernoulli. If said operator is being "
    "called inside the PyTorch framework, please file a bug report instead."
)
_P_RANGE = (
    "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error message be "
    "improved?  If so, please report an enhancement request to PyTorch.)"
)


def _num(x) -> str:
    """A number as PyTorch's C++ messages print it (``-1``, ``1.5``)."""
    return f"{x:g}" if isinstance(x, float) else str(x)


# ------------------------------------------------------------------ kernels
def _drawn(device, generator, draw, *args):
    """``draw(xp, g, *args)`` with the draw's array module and generator: NumPy's on the CPU
    (and the meta device's stand-in); on a GPU, CuPy and a CuPy generator for this draw from
    the GPU's generator, both used with that GPU current, so the numbers are made there."""
    if device is None or device.type != "cuda":
        return draw(np, rng(generator, device), *args)
    cp = backend(device)
    with cp.cuda.Device(device.index):
        return draw(cp, gpu_rng(generator, device), *args)


def _uniform01(g, shape, npd):
    """Uniform [0, 1) of a real dtype; never rounds up to 1."""
    if npd == np.float64 or npd == np.float32:
        return g.random(shape, dtype=npd)
    mant = np.finfo(npd).nmant + 1
    return (g.integers(0, 2**mant, size=shape) * 2.0**-mant).astype(npd)


def _real(npd):
    return np.empty(0, npd).real.dtype


def _rand(xp, g, size, npd):
    if npd.kind == "c":
        r = _real(npd)
        return (_uniform01(g, size, r) + 1j * _uniform01(g, size, r)).astype(npd)
    return _uniform01(g, size, npd)


def _randn(xp, g, size, npd):
    if npd.kind == "c":
        return ((g.standard_normal(size) + 1j * g.standard_normal(size)) * 0.5**0.5).astype(npd)
    if npd == np.float32:
        return g.standard_normal(size, dtype=np.float32)
    return g.standard_normal(size).astype(npd)


def _randint(xp, g, low, high, size, npd):
    return g.integers(low, high, size=size, dtype=np.int64).astype(npd)


def _randperm(xp, g, n, batch, npd):
    """``batch`` independent permutations of range(n), shuffled along the last dim."""
    if xp is np:
        arr = np.broadcast_to(np.arange(n, dtype=np.int64), (*batch, n)).copy()
        g.permuted(arr, axis=-1, out=arr)
        return arr.astype(npd)
    # CuPy's generators cannot shuffle: the order of random keys, as PyTorch's GPU randperm
    keys = g.integers(0, 2**63 - 1, size=(*batch, n), dtype=np.int64)
    return xp.argsort(keys, axis=-1).astype(npd)


def _rand_kernel(xp, size=(), dtype=None, generator=None, device=None):
    return _drawn(device, generator, _rand, size, dtype.np)


def _randn_kernel(xp, size=(), dtype=None, generator=None, device=None):
    return _drawn(device, generator, _randn, size, dtype.np)


def _randint_kernel(xp, low=0, high=2, size=(), dtype=None, generator=None, device=None):
    return _drawn(device, generator, _randint, low, high, size, dtype.np)


def _randperm_kernel(xp, n=0, batch=(), dtype=None, generator=None, device=None):
    return _drawn(device, generator, _randperm, n, batch, dtype.np)


def _draw_op(name: str, kernel, size: str = "size", complex32: bool = False):
    """A primitive draw (no tensor inputs); under vmap the batch goes in front of ``size``."""
    return defop(
        name,
        kernel,
        nin=0,
        random=True,
        batch_rule=random_factory(size=size),
        samples=None,
        complex32=complex32,
    )


rand_p = _draw_op("rand", _rand_kernel, complex32=True)
randn_p = _draw_op("randn", _randn_kernel, complex32=True)
randint_p = _draw_op("randint", _randint_kernel)
randperm_p = _draw_op("randperm", _randperm_kernel, size="batch")


def _inplace_check(op):
    """In-place randomness writes one draw per batch element only into a batched tensor."""

    def rule(vmap, args, bdims, attrs):
        if vmap.randomness == "error":
            raise RuntimeError(RANDOM_ERROR)
        if vmap.randomness == "different" and bdims[0] is None:
            raise RuntimeError(_INPLACE_DIFFERENT)
        return dispatch(op, (args[0],), attrs), bdims[0]

    return rule


# Only its vmap rule matters: it raises where an in-place draw cannot be batched.
_inplace_random_check_p = defop(
    "_inplace_random_check",
    lambda xp, x: x,
    nin=1,
    random=True,
    batch_rule=rule_generator(_inplace_check)(),
    samples=None,
)


# ------------------------------------------------------------------ argument checks
def _float_dtype(dtype) -> dt.dtype:
    return dt.get_default_dtype() if dtype is None else dt.to_dtype(dtype)


def _check_generator(name: str, g) -> None:
    if g is not None and not isinstance(g, (Generator, np.random.Generator)):
        raise TypeError(
            f"{name}() received an invalid combination of arguments - argument 'generator' "
            f"must be torch.Generator, not {type(g).__name__}"
        )


def _int_arg(name: str, arg: str, pos: int, v) -> int:
    if isinstance(v, Tensor) and not v.is_floating_point():
        v = int(v)
    if not isinstance(v, numbers.Integral) or isinstance(v, bool):
        raise TypeError(
            f"{name}(): argument '{arg}' (position {pos}) must be int, not {type(v).__name__}"
        )
    if not -(2**63) <= v < 2**63:
        raise ValueError("Overflow when unpacking long long")
    return int(v)


def _check_int_range(low: int, high: int, d: dt.dtype) -> None:
    """PyTorch's bounds for a discrete uniform draw [low, high) of dtype d."""
    if low >= high:
        raise RuntimeError(
            f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}"
        )
    if d.is_complex:
        raise RuntimeError(
            "check_random_bounds handles only integral, floating-point and boolean types"
        )
    if d == dt.int64:
        return
    if d == dt.bool_:
        lo, hi = 0, 1
    elif d.is_floating_point:
        info = np.finfo(d.np)
        lo, hi = float(info.min), float(info.max)
    else:
        info = np.iinfo(d.np)
        lo, hi = int(info.min), int(info.max)
    if low < lo:
        raise RuntimeError(f"from is out of bounds for {d.cpp_name}")
    if high - 1 > hi:
        raise RuntimeError(f"to - 1 is out of bounds for {d.cpp_name}")
    if d.is_floating_point:
        digits = np.finfo(d.np).nmant + 1
        for what, v in (("from", low), ("to - 1", high - 1)):
            if abs(v) > 2**digits:
                warnings.warn(
                    f"{what} is out of bounds [-(2^{digits}), 2^{digits}]. Due to precision "
                    f"limitations {d.cpp_name} can support discrete uniform distribution only "
                    "within this range. This warning will become an error in version 1.7 "
                    "release, please fix the code in advance",
                    UserWarning,
                    stacklevel=4,
                )


def _finish(out, result: Tensor, requires_grad: bool) -> Tensor:
    if requires_grad:
        require_grad(result)
    return result if out is None else write_out(out, result)


def _device(device):
    """The device a factory draws on: the given one, or the default device."""
    device = placement(device)
    return None if device is None else Device(device)


# ------------------------------------------------------------------ primitives
def _float_draw(op, kernel: str):
    """A draw of a floating or complex dtype from ``op`` (``kernel``: PyTorch's name in the
    error for other dtypes)."""

    def draw(shape: tuple, d: dt.dtype, generator, device) -> Tensor:
        if not (d.is_floating_point or d.is_complex):
            raise dt.not_implemented(kernel, d)
        check_alloc(shape, d.np.itemsize)  # as the empty tensor PyTorch fills would
        attrs = {"size": shape, "dtype": d, "generator": generator, "device": device}
        return dispatch(op, (), attrs)

    return draw


_uniform_draw = _float_draw(rand_p, "check_uniform_bounds")
_normal_draw = _float_draw(randn_p, "normal_kernel_cpu")


def _int_draw(low: int, high: int, shape: tuple, d: dt.dtype, generator, device) -> Tensor:
    _check_int_range(low, high, d)
    check_alloc(shape, d.np.itemsize)
    attrs = {
        "low": low,
        "high": high,
        "size": shape,
        "dtype": d,
        "generator": generator,
        "device": device,
    }
    return dispatch(randint_p, (), attrs)


def _draw_factory(name: str, draw, doc: str):
    def factory(
        *sizes,
        size=None,
        generator=None,
        out=None,
        dtype=None,
        layout=None,
        device=None,
        requires_grad=False,
        pin_memory=False,
    ) -> Tensor:
        _check_generator(name, generator)
        check_random_out(out)
        r = draw(given_size(sizes, size, name), _float_dtype(dtype), generator, _device(device))
        return _finish(out, r, requires_grad)

    factory.__name__ = factory.__qualname__ = name
    factory.__doc__ = doc
    return parsed(f"torch.{name}")(factory)


rand = _draw_factory("rand", _uniform_draw, "Uniform samples from [0, 1).")
randn = _draw_factory("randn", _normal_draw, "Samples from the standard normal distribution.")


@parsed("torch.randint")
def randint(
    low=None,
    high=None,
    size=None,
    *,
    generator=None,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
) -> Tensor:
    """Integers drawn uniformly from [low, high) (``randint(high, size)`` or
    ``randint(low, high, size)``)."""
    _check_generator("randint", generator)
    if low is None and high is not None and size is not None:  # randint(high=, size=)
        low = 0
    if low is None:
        raise TypeError(
            "randint() received an invalid combination of arguments - got (), but expected "
            "one of:\n * (int high, tuple of ints size, *, torch.Generator generator, ...)\n"
            " * (int low, int high, tuple of ints size, *, torch.Generator generator, ...)"
        )
    if size is None:
        if high is None:
            raise TypeError(
                "randint() received an invalid combination of arguments - got (int), but "
                "expected one of:\n * (int high, tuple of ints size, *, torch.Generator "
                "generator = None, ...)\n * (int low, int high, tuple of ints size, *, "
                "torch.Generator generator = None, ...)"
            )
        low, high, size, pos = 0, low, high, 2
    elif high is None:
        low, high, pos = 0, low, 2
    else:
        pos = 3
    if not isinstance(size, (tuple, list)):
        raise TypeError(
            f"randint(): argument 'size' (position {pos}) must be tuple of ints, not "
            f"{type(size).__name__}"
        )
    high = _int_arg("randint", "high", pos - 1, high)
    low = _int_arg("randint", "low", 1, low)
    d = dt.int64 if dtype is None else dt.to_dtype(dtype)
    check_random_out(out)
    r = _int_draw(low, high, _size((size,), "randint"), d, generator, _device(device))
    return _finish(out, r, requires_grad)


@parsed("torch.randperm")
def randperm(
    n,
    *,
    generator=None,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
) -> Tensor:
    """A random permutation of ``0 .. n-1``."""
    _check_generator("randperm", generator)
    n = _int_arg("randperm", "n", 1, n)
    check_random_out(out)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    d = dt.int64 if dtype is None else dt.to_dtype(dtype)
    if d == dt.bool_:
        raise dt.not_implemented("randperm", d)
    if not (d.is_floating_point or d == dt.int64) and n > np.iinfo(d.np).max + 1:
        raise RuntimeError(f"value cannot be converted to type {d.np.name}_t without overflow")
    attrs = {"n": n, "batch": (), "dtype": d, "generator": generator, "device": _device(device)}
    return _finish(out, dispatch(randperm_p, (), attrs), requires_grad)


# ------------------------------------------------------------------ with tensor arguments
def _like_dtype(input: Tensor, dtype) -> dt.dtype:
    return input.dtype if dtype is None else dt.to_dtype(dtype)


def _like_device(input: Tensor, device):
    return input.device if device is None else Device(device)


def _draw_like(name: str, draw, what: str):
    def like(
        input,
        *,
        generator=None,
        dtype=None,
        layout=None,
        device=None,
        requires_grad=False,
        memory_format=None,
    ) -> Tensor:
        _check_generator(name, generator)
        d, dev = _like_dtype(input, dtype), _like_device(input, device)
        return _finish(None, draw(tuple(input.shape), d, generator, dev), requires_grad)

    like.__name__ = like.__qualname__ = name
    like.__doc__ = f"``{what}`` with the shape (and by default the dtype and device) of ``input``."
    return parsed(f"torch.{name}")(like)


rand_like = _draw_like("rand_like", _uniform_draw, "rand")
randn_like = _draw_like("randn_like", _normal_draw, "randn")


@parsed("torch.randint_like")
def randint_like(
    input,
    low=0,
    high=None,
    *,
    generator=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    memory_format=None,
) -> Tensor:
    """``randint`` with the shape (and by default the dtype and device) of ``input``."""
    _check_generator("randint_like", generator)
    if high is None:
        low, high = 0, low
    low = _int_arg("randint_like", "low", 2, low)
    high = _int_arg("randint_like", "high", 3, high)
    d, dev = _like_dtype(input, dtype), _like_device(input, device)
    r = _int_draw(low, high, tuple(input.shape), d, generator, dev)
    return _finish(None, r, requires_grad)


def _std_check(std) -> None:
    if isinstance(std, Tensor):
        # Checked on plain tensors only: under a transform the check would need .item().
        if std._level == 0 and bool((std < 0).any()):
            raise RuntimeError("normal expects all elements of std >= 0.0")
    elif std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_num(float(std))}")


def _as_number(x):
    if isinstance(x, Tensor) and x.dim() == 0 and not x.requires_grad:
        return x.item()
    return x


def normal(
    mean=0.0,
    std=1.0,
    size=None,
    *,
    generator=None,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    requires_grad=False,
    pin_memory=False,
) -> Tensor:
    """Samples from normal distributions: ``mean + std * randn(...)``, broadcasting tensor
    means and stds. As in PyTorch, the output requires grad when mean or std does, with zero
    gradients (it is a sample, not a reparameterization)."""
    _check_generator("normal", generator)
    if size is not None:
        # the (float mean, float std, size) form takes a 0-dim tensor as a number, as
        # PyTorch's argument parser does when it does not require grad
        mean, std = _as_number(mean), _as_number(std)
    tm, ts = isinstance(mean, Tensor), isinstance(std, Tensor)
    if out is not None and tm and not ts:
        _check_mean_out(mean)
    else:
        check_random_out(out)
    if not tm and not ts:
        if size is None:
            raise TypeError(
                "normal() received an invalid combination of arguments - got (float, float), "
                "but expected one of:\n * (Tensor mean, Tensor std, *, torch.Generator "
                "generator = None, Tensor out = None)\n * (Tensor mean, float std = 1, *, "
                "torch.Generator generator = None, Tensor out = None)\n * (float mean, Tensor "
                "std, *, torch.Generator generator = None, Tensor out = None)\n * (float mean, "
                "float std, tuple of ints size, *, torch.Generator generator = None, ...)"
            )
        _std_check(std)
        shape = _size((size,), "normal")
        # not _device: as in PyTorch, normal's draws ignore the default device
        noise = _normal_draw(
            shape, _float_dtype(dtype), generator, None if device is None else Device(device)
        )
        return _finish(out, noise * std + mean, requires_grad)
    if size is not None:
        got = ", ".join(
            type(a).__name__ if not isinstance(a, Tensor) else "Tensor" for a in (mean, std, size)
        )
        raise TypeError(
            f"normal() received an invalid combination of arguments - got ({got}), but "
            "expected one of:\n * (Tensor mean, Tensor std, *, torch.Generator generator = "
            "None, Tensor out = None)\n * (Tensor mean, float std = 1, *, torch.Generator "
            "generator = None, Tensor out = None)\n * (float mean, Tensor std, *, "
            "torch.Generator generator = None, Tensor out = None)\n * (float mean, float std, "
            "tuple of ints size, *, torch.Generator generator = None, Tensor out = None, "
            "torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, "
            "bool pin_memory = False, bool requires_grad = False)\n"
        )
    check_random_inputs(*(a for a in (mean, std) if isinstance(a, Tensor)))
    _std_check(std)
    d = mean.dtype if tm else std.dtype
    if not (d.is_floating_point or d.is_complex):
        raise dt.not_implemented("normal_kernel_cpu", d)
    if tm and ts:
        mean, std = broadcast_tensors(mean, std)
    ref = mean if tm else std
    noise = _normal_draw(tuple(ref.shape), d, generator, ref.device)
    r = std * noise.detach() + mean
    if r.dtype != d:
        r = r.to(d)
    return _finish(out, _zero_grads(r, mean, std), False)


def _check_mean_out(mean: Tensor) -> None:
    """normal(Tensor, float, out=) has no random batch rule in PyTorch: a batched mean meets
    the fallback's refusal of out= forms."""
    if vmaps_of(mean):
        raise RuntimeError(
            "Batching rule not implemented for aten::normal.Tensor_float_out; the fallback "
            "path doesn't work on out= or view ops."
        )


def _zero_grads(r: Tensor, *params) -> Tensor:
    """r's values, connected to the tensor params with zero gradients (PyTorch's normal)."""
    r = r.detach()
    for p in params:
        if isinstance(p, Tensor) and (p.requires_grad or p._level):
            r = where(zeros_like(r, dtype=dt.bool_), p, r)
    return r


def _draw_dtype(d: dt.dtype) -> dt.dtype:
    """The dtype of the uniform draw behind a 0/1 draw of dtype d."""
    return d if d.is_floating_point else dt.float64


def _check_p(p) -> None:
    if isinstance(p, Tensor):
        if p._level == 0 and bool(((p < 0) | (p > 1)).any()):
            raise RuntimeError(_P_RANGE)
    elif not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_num(float(p))}")


def _bernoulli_draw(shape: tuple, p, d: dt.dtype, generator, device) -> Tensor:
    """0/1 of dtype d, each 1 with probability p (a float or a broadcasting tensor)."""
    u = _uniform_draw(shape, _draw_dtype(d), generator, device)
    return (u < p).to(d)


def bernoulli(input, p=None, *, generator=None, out=None) -> Tensor:
    """0/1 samples: 1 with probability ``input`` (or ``p`` for every element), in input's
    dtype."""
    _check_generator("bernoulli", generator)
    check_random_out(out)
    check_random_inputs(input)
    if p is None:
        if not (input.is_floating_point()):
            raise dt.not_implemented("bernoulli_tensor_cpu_p_", input.dtype)
        _check_p(input)
        p = input
    else:
        _check_p(p)
    r = _bernoulli_draw(tuple(input.shape), p, input.dtype, generator, input.device)
    return _finish(out, r, False)


def _check_dropout_p(p, error, show=str) -> None:
    if p < 0 or p > 1:
        raise error(f"dropout probability has to be between 0 and 1, but got {show(p)}")


def _dropout(input, p: float, train: bool, inplace: bool):
    if not train or p == 0 or input.numel() == 0:
        return input
    if p == 1:
        return input.mul_(0) if inplace else input * 0
    d = input.dtype
    if not (d.is_floating_point or d.is_complex):
        raise RuntimeError(
            f"result type Float can't be cast to the desired output type {d.scalar_name}"
        )
    q = 1 - p
    real = dt.from_np(_real(d.np))
    noise = _bernoulli_draw(tuple(input.shape), q, real, None, input.device) / q
    return input.mul_(noise) if inplace else input * noise


def dropout(input, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability p and scale the rest by 1/(1-p) (training only)."""
    _check_dropout_p(p, ValueError)
    return _dropout(input, p, training, inplace)


def dropout_(input, p: float = 0.5, train: bool = True) -> Tensor:
    _check_dropout_p(p, RuntimeError, _num)
    return _dropout(input, p, train, True)


def _torch_dropout(input, p: float, train: bool) -> Tensor:
    """``torch.dropout(input, p, train)``."""
    _check_dropout_p(p, RuntimeError, _num)
    return _dropout(input, p, train, False)


_torch_dropout.__name__ = _torch_dropout.__qualname__ = "dropout"


# ------------------------------------------------------------------ in-place draws
def _write(self: Tensor, value: Tensor) -> Tensor:
    """self.copy_(value), after vmap's check that the draw can be batched like self."""
    if state.stack:
        dispatch(_inplace_random_check_p, (self,), {})
    return self.copy_(value)


def _uniform_(self, low=0.0, high=1.0, *, generator=None) -> Tensor:
    """Fill self with samples from uniform [low, high)."""
    if low > high:
        raise RuntimeError(
            f"uniform_ expects to return a [from, to) range, but found from={_num(low)} > "
            f"to={_num(high)}"
        )
    u = _uniform_draw(tuple(self.shape), self.dtype, generator, self.device)
    return _write(self, u * (high - low) + low)


def _normal_(self, mean=0.0, std=1.0, *, generator=None) -> Tensor:
    """Fill self with samples from N(mean, std**2)."""
    _std_check(std)
    z = _normal_draw(tuple(self.shape), self.dtype, generator, self.device)
    return _write(self, z * std + mean)


def _bernoulli_(self, p=0.5, *, generator=None) -> Tensor:
    """Fill self with 0/1 samples, 1 with probability p (a float or a tensor)."""
    if isinstance(p, Tensor):
        check_random_inputs(p)
        _check_batched_p(self, p)
    _check_p(p)
    return _write(self, _bernoulli_draw(tuple(self.shape), p, self.dtype, generator, self.device))


def _check_batched_p(self: Tensor, p: Tensor) -> None:
    """vmap's refusal of a tensor p batched where self is not: one p per sample, one self."""
    if state.stack:
        own = vmaps_of(self)
        if any(all(i is not v for i in own) for v in vmaps_of(p)):
            raise RuntimeError(_INPLACE_BERNOULLI)


def _bernoulli(self, p=None, *, generator=None) -> Tensor:
    return bernoulli(self, p, generator=generator)


def _check_fill_generator(name: str, g) -> None:
    if g is not None and not isinstance(g, (Generator, np.random.Generator)):
        raise TypeError(
            f"{name}(): argument 'generator' must be torch.Generator, not {type(g).__name__}"
        )


def _float_param(name: str, arg: str, pos: int, v) -> float:
    """A float parameter as PyTorch's binding takes it (a number or a one-element tensor)."""
    if isinstance(v, Tensor) and v.numel() == 1:
        return float(v.item())
    if not isinstance(v, numbers.Real) or isinstance(v, Tensor):
        raise TypeError(
            f"{name}(): argument '{arg}' (position {pos}) must be float, not {type(v).__name__}"
        )
    return float(v)


def _continuous(name: str, d: dt.dtype) -> None:
    if not d.is_floating_point:
        raise RuntimeError(
            f"{name} distribution is a continuous probability distribution. dtype must be a "
            f"floating point but you specified {d.scalar_name}"
        )


def _exponential_(self, lambd=1.0, *, generator=None) -> Tensor:
    """Fill self with samples from the exponential distribution of rate lambd."""
    _check_fill_generator("exponential_", generator)
    lambd = _float_param("exponential_", "lambd", 1, lambd)
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_num(lambd)}")
    d = self.dtype
    _continuous("Exponential", d)
    u = _uniform_draw(tuple(self.shape), d, generator, self.device)
    return _write(self, (-u).log1p() * (-1.0 / lambd))


def _cauchy_(self, median=0.0, sigma=1.0, *, generator=None) -> Tensor:
    """Fill self with samples from the Cauchy distribution
    ``median + sigma * tan(pi * (u - 1/2))``."""
    _check_fill_generator("cauchy_", generator)
    median = _float_param("cauchy_", "median", 1, median)
    sigma = _float_param("cauchy_", "sigma", 2, sigma)
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={_num(sigma)}")
    d = self.dtype
    if not d.is_floating_point:
        raise RuntimeError(
            "Cauchy distribution is a continuous probability distribution. dtype must be a "
            f"floating point but you specified {d.cpp_name}"
        )
    u = _uniform_draw(tuple(self.shape), dt.float64, generator, self.device)
    return _write(self, (((u - 0.5) * math.pi).tan() * sigma + median).to(d))


def _log_normal_(self, mean=1.0, std=2.0, *, generator=None) -> Tensor:
    """Fill self with ``exp(N(mean, std**2))`` samples."""
    _check_fill_generator("log_normal_", generator)
    mean = _float_param("log_normal_", "mean", 1, mean)
    std = _float_param("log_normal_", "std", 2, std)
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_num(std)}")
    d = self.dtype
    if not d.is_floating_point:
        raise dt.not_implemented("log_normal_cpu", d)
    z = _normal_draw(tuple(self.shape), dt.float64, generator, self.device)
    return _write(self, (z * std + mean).exp().to(d))


def _geometric_(self, p, *, generator=None) -> Tensor:
    """Fill self with the number of Bernoulli(p) trials up to the first success (1, 2, ...)."""
    _check_fill_generator("geometric_", generator)
    p = _float_param("geometric_", "p", 1, p)
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_num(p)}")
    d = self.dtype
    if d == dt.bool_ or d.is_complex:
        raise dt.not_implemented("geometric_cpu", d)
    u = _uniform_draw(tuple(self.shape), dt.float64, generator, self.device)
    # 1 - u lies in (0, 1]: log(1 - u) / log(1 - p) >= 0, and u = 0 gives one trial.
    k = ((-u).log1p() / math.log1p(-p)).floor() + 1
    return _write(self, k.to(d))


_UNSET = object()
_RANDOM_OVERLOADS = (
    "but expected one of:\n * (*, torch.Generator generator = None)\n * (int from, int to, *, "
    "torch.Generator generator = None)\n * (int to, *, torch.Generator generator = None)\n"
)


def _random_top(d: dt.dtype) -> int:
    """One past the largest value ``random_()`` draws for dtype d."""
    if d == dt.bool_:
        return 2
    if d.is_floating_point:
        return 2 ** (np.finfo(d.np).nmant + 1) + 1
    return int(np.iinfo(d.np).max) + 1


def _random_args_error(args, kwargs) -> TypeError:
    pos = [type(a).__name__ for a in args]
    kws = [f"{k}={type(v).__name__}" for k, v in kwargs.items()]
    got = ", ".join(pos + kws) if pos else "".join(k + ", " for k in kws)
    return TypeError(
        f"random_() received an invalid combination of arguments - got ({got}), "
        + _RANDOM_OVERLOADS
    )


def _random_int(v):
    if isinstance(v, Tensor) and not v.is_floating_point() and v.numel() == 1:
        v = int(v.item())
    if v is None or (isinstance(v, numbers.Integral) and not isinstance(v, bool)):
        return v
    return _UNSET


def _random_(self, *args, generator=None, **kwargs) -> Tensor:
    """Fill self with integers: ``random_(to)`` from [0, to), ``random_(from, to)`` from
    [from, to) (to=None: up to the dtype's top), ``random_()`` the non-negative integers the
    dtype holds exactly (``[0, 2**mantissa]`` for floating dtypes)."""
    if len(args) > 2:
        raise TypeError(f"random_() takes 2 positional arguments but {len(args)} were given")
    shown = dict(kwargs)
    if generator is not None:
        shown["generator"] = generator
    if generator is not None and not isinstance(generator, (Generator, np.random.Generator)):
        raise _random_args_error(args, shown)
    if set(kwargs) - {"from", "to"}:
        raise _random_args_error(args, shown)
    bound = dict(zip(("from", "to") if len(args) == 2 or "to" in kwargs else ("to",), args))
    if set(bound) & set(kwargs):
        raise _random_args_error(args, shown)
    bound.update(kwargs)
    if "from" in bound and "to" not in bound:
        raise _random_args_error(args, shown)
    low, high = _random_int(bound.get("from", 0)), _random_int(bound.get("to"))
    only_to = "to" in bound and "from" not in bound
    if low is _UNSET or low is None or high is _UNSET or (high is None and only_to):
        raise _random_args_error(args, shown)
    for v in (low, high):
        if v is not None and not -(2**63) <= v < 2**63:
            raise ValueError("Overflow when unpacking long long")
    d = self.dtype
    if not bound and d.is_complex:
        raise dt.not_implemented("random_kernel_cpu", d)
    if high is None:
        high = _random_top(d)
    r = _int_draw(low, high, tuple(self.shape), d, generator, self.device)
    return _write(self, r)


tensor_methods(
    {
        "uniform_": _uniform_,
        "normal_": _normal_,
        "bernoulli": _bernoulli,
        "bernoulli_": _bernoulli_,
        "cauchy_": _cauchy_,
        "exponential_": _exponential_,
        "geometric_": _geometric_,
        "log_normal_": _log_normal_,
        "random_": _random_,
    }
)

__all__ = [
    "bernoulli",
    "dropout",
    "normal",
    "rand",
    "rand_like",
    "randint",
    "randint_like",
    "randn",
    "randn_like",
    "randperm",
]
