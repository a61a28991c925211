"""clamp, clamp_min, clamp_max and clip: elementwise bounds by numbers or tensors, with
PyTorch's choices of gradient and tangent at ties."""

from __future__ import annotations

import functools

import numpy as np

from .._core.interpreter import Kind
from .._core.methods import tensor_methods
from .._core.no_kernel import CLAMP_COMPLEX, NoKernel
from .._core.op import ErrorInput
from .._core.policy import BatchedWrite, InplacePolicy
from .._core.pyargs import judge
from .._core.state import state
from .._core.tensor import Tensor
from .._opdb.samples import S
from ._families import (
    FLOATS_INT,
    binary,
    broadcast_first,
    elementwise_op,
)
from .comparison import where


# ------------------------------------------------------------------ clamp
def _check_clamp(min, max) -> None:
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")


def _clamp(xp, input, min, max):
    _check_clamp(min, max)
    out = input
    if min is not None:
        out = xp.maximum(out, min)
    if max is not None:
        out = xp.minimum(out, max)
    return out


def _clamp_masks(input, min, max):
    """Where each of input, min and max receives the gradient, as PyTorch chooses at ties:
    input wherever it lies within the bounds; min where input is below it and min < max;
    max where input is above it or max < min. Where input < min == max none does."""
    keep = lo = hi = None
    if min is not None:
        keep = input >= min
        lo = input < min
    if max is not None:
        k = input <= max
        keep = k if keep is None else keep & k
        hi = input > max
        if min is not None:
            lo = lo & (min < max)
            hi = hi | (max < min)
    return keep, lo, hi


def _clamp_vjp(k):
    return lambda g, input, min, max: where(_clamp_masks(input, min, max)[k], g, 0)


def _clamp_jvp(tinput, tmin, tmax, input, min, max):
    """PyTorch's choice at ties: with number bounds (its Scalar overload) the input's vjp
    mask applied to its tangent (0 at a NaN); with tensor bounds (its ``clamp_jvp``) a tie
    takes the bound's tangent, and min > max takes max's."""
    number = lambda b: b is not None and not isinstance(b, Tensor)  # noqa: E731
    if number(min) or number(max):  # (a 0-d tensor beside a number is read as one too)
        return where(_clamp_masks(input, min, max)[0], tinput, 0)
    if min is None:
        return where(input < max, tinput, tmax)
    if max is None:
        return where(input > min, tinput, tmin)
    inner = where(input < min, tmin, where(input > max, tmax, tinput))
    return where(min > max, tmax, inner)


def _clamp_samples(make):
    yield S((make((2, 3)), -0.5, 0.5))
    yield S((make((2, 3)),), {"min": -0.5})
    yield S((make((2, 3)),), {"max": 0.5})
    yield S((make(()), -0.5, 0.5))
    yield S((make((0, 3)), -0.5, 0.5))
    yield S((make((2, 3)), make((3,), -1.5, -0.5), make((2, 1), 0.5, 1.5)), name="tensor bounds")
    yield S((make((2, 3)),), {"min": make((2, 3), -1, 1)})
    yield S((make((2, 3)), None, make((3,), -1, 1)))
    yield S((make((2, 3)), make((2, 3), 0.5, 1.0), make((2, 3), -1.0, -0.5)), name="min > max")
    if make.is_float:
        yield S((make((2, 3), -3, 3, dtype=np.int64), -0.5, 1.5), name="int input")


def _clamp_errors(make):
    yield ErrorInput(
        S((make((3,)),)), RuntimeError, "At least one of 'min' or 'max' must not be None"
    )


def _clamp_node_name(min, max):
    return "ClampBackward1" if min is None and max is None else "ClampBackward0"


def _one_bound(arrays) -> str | None:
    """'min' or 'max' where clamp has that bound alone, else None."""
    lo, hi = arrays[1], arrays[2]
    if (lo is None) == (hi is None):
        return None
    return "min" if hi is None else "max"


def _clamp_bool_kernel(arrays, attrs) -> str:
    """The kernel PyTorch's clamp of a bool result picks: two tensor bounds clamp's, number
    bounds (a 0-d tensor with a number too) clamp's scalar one or, alone, clamp_min's or
    clamp_max's."""
    side = _one_bound(arrays)
    if side is not None:
        return f"clamp_{side}_scalar_cpu"
    return "clamp_cpu" if all(hasattr(a, "dtype") for a in arrays[1:]) else "clamp_scalar_cpu"


def _clamp_bool_refused(arrays, attrs) -> bool:
    """A bool clamp is refused unless its one bound is a tensor (that runs maximum's or
    minimum's kernel, which has bools)."""
    side = _one_bound(arrays)
    return side is None or not hasattr(arrays[1 if side == "min" else 2], "dtype")


clamp_p = elementwise_op(
    "clamp",
    _clamp,
    (_clamp_vjp(0), _clamp_vjp(1), _clamp_vjp(2)),
    _clamp_jvp,
    nin=3,
    samples=_clamp_samples,
    error_samples=_clamp_errors,
    dtypes=FLOATS_INT,
    node_name=_clamp_node_name,
    checked_scalars=("min", "max"),
    # ``clamp`` below: min and max default to None
    out=False,
    methods=False,
    inplace=False,
    inplace_policy=InplacePolicy(cpp_cast=True),
    no_kernel=(
        NoKernel("c", error=CLAMP_COMPLEX),
        NoKernel("b", _clamp_bool_kernel, when=_clamp_bool_refused, first=broadcast_first),
    ),
)
_raw_clamp = clamp_p.fn


def clamp(input: Tensor, min=None, max=None, *, out: Tensor | None = None) -> Tensor:
    """Clamp every element of ``input`` into ``[min, max]`` (either bound may be None)."""
    _check_clamp(min, max)
    r = _raw_clamp(input, min, max)
    if out is not None:
        from .._core.out import write_out

        number = any(b is not None and not isinstance(b, Tensor) for b in (min, max))
        if number and out.dtype != r.dtype:  # (the Scalar overload's out= takes no cast)
            raise RuntimeError(
                f"Found dtype {out.dtype.scalar_name} but expected {r.dtype.scalar_name}"
            )
        return write_out(out, r, clamp_p, (input, min, max))
    return r


def _clamp_method(self: Tensor, min=None, max=None) -> Tensor:
    return _clamp_unchecked(self, min, max)


def _bounds_of_one_kind(key: str, fn, method: bool = False):
    """``fn`` (clamp, clip, or their method or in-place forms) refusing, as PyTorch's
    parser does, bounds of which one is a tensor and the other a number: its signatures
    take two tensors or two numbers (a 0-dim tensor passes for a number)."""
    name = key.rpartition(".")[2]

    @functools.wraps(fn)
    def call(*args, **kwargs):
        n = len(args)
        lo = args[1] if n > 1 else kwargs.get("min")
        hi = args[2] if n > 2 else kwargs.get("max")
        if lo is not None and hi is not None and isinstance(lo, Tensor) != isinstance(hi, Tensor):
            judge(key, args[1:] if method else args, kwargs)
        try:
            return fn(*args, **kwargs)
        except Exception:  # (the parser's TypeError, where it refuses the call, first)
            judge(key, args[1:] if method else args, kwargs)
            raise

    call.__name__ = call.__qualname__ = name
    # (numpy_keywords wraps fn for NumPy's names, then this check again, outermost)
    call._rewrap = lambda inner: _bounds_of_one_kind(key, inner, method)
    return call


def _clamp_inplace(self: Tensor, min=None, max=None, form: str = "clamp_") -> Tensor:
    from .._core.inplace import run_inplace

    _check_clamp(min, max)
    return run_inplace(clamp_p, self, (min, max), {}, form)


def _clip_inplace(self: Tensor, min=None, max=None) -> Tensor:
    # vmap's errors name clip_, but a grad or jvp level innermost runs PyTorch's clip_ as
    # the clamp_ it decomposes into
    below = state.stack and state.stack[-1].kind in (Kind.GRAD, Kind.JVP)
    return _clamp_inplace(self, min, max, "clamp_" if below else "clip_")


def _clamp_bound_refusals(kernel: str, name: str) -> tuple[NoKernel, ...]:
    """No complex clamp_min/clamp_max: a Python number bound runs clamp's kernel, a tensor
    bound ``kernel`` (maximum's or minimum's); no bool one with a number bound."""
    number = lambda arrays, attrs: not hasattr(arrays[1], "dtype")
    return (
        NoKernel("c", error=CLAMP_COMPLEX, when=number),
        NoKernel("c", f"{kernel}_cpu"),
        NoKernel("b", f"{name}_scalar_cpu", when=number),
    )


# clamp_min's / clamp_max's tangent, PyTorch's: the bound's where the input is not within it,
# a NaN input included (though the vjp gives neither operand a gradient there).
def _clamp_min_jvp(tinput, tmin, input, min):
    return where(input >= min, tinput, tmin)


def _clamp_max_jvp(tinput, tmax, input, max):
    return where(input <= max, tinput, tmax)


clamp_min_p = binary(
    "clamp_min",
    lambda xp, input, min: xp.maximum(input, min),
    (
        lambda g, input, min: where(input >= min, g, 0),
        lambda g, input, min: where(input < min, g, 0),
    ),
    _clamp_min_jvp,
    scalars=(0.5, -1),
    dtypes=FLOATS_INT,
    numbers="other",
    node_name=lambda min: "ClampMinBackward0" if min is None else "ClampMinBackward1",
    checked_scalars=("min",),
    inplace_policy=InplacePolicy(cpp_cast=True, batched=BatchedWrite.ARITHMETIC),
    no_kernel=_clamp_bound_refusals("maximum", "clamp_min"),
)
clamp_max_p = binary(
    "clamp_max",
    lambda xp, input, max: xp.minimum(input, max),
    (
        lambda g, input, max: where(input <= max, g, 0),
        lambda g, input, max: where(input > max, g, 0),
    ),
    _clamp_max_jvp,
    scalars=(0.5, -1),
    dtypes=FLOATS_INT,
    numbers="other",
    node_name=lambda max: "ClampMaxBackward0" if max is None else "ClampMaxBackward1",
    checked_scalars=("max",),
    inplace_policy=InplacePolicy(cpp_cast=True, batched=BatchedWrite.ARITHMETIC),
    no_kernel=_clamp_bound_refusals("minimum", "clamp_max"),
)


_clamp_unchecked = clamp  # (its callers check the bounds)
clip = _bounds_of_one_kind("torch.clip", clamp)
clamp = _bounds_of_one_kind("torch.clamp", clamp)
tensor_methods(
    {
        name: _bounds_of_one_kind(f"Tensor.{name}", fn, method=True)
        for name, fn in (
            ("clamp", _clamp_method),
            ("clip", _clamp_method),
            ("clamp_", _clamp_inplace),
            ("clip_", _clip_inplace),
        )
    }
)
