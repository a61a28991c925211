"""softmax and log_softmax along a dim, their backward ops (torch's
``_softmax_backward_data``) and nn.functional's forms."""

from __future__ import annotations

import warnings
from functools import partial

import numpy as np

from .._core import dtype as dt
from .._core import parallel
from .._core.dispatch import kernel_call
from .._core.meta import by_kernel
from .._core.methods import tensor_methods
from .._core.op import Op, on_arrays
from .._opdb.samples import ErrorInput, S
from ._batching import materialize, pdim, rule_generator
from ._families import silent
from ._reduce_common import _DIMS, _sum_dims, defop, dim1


def softmax_dim(ndim: int, name: str, stacklevel: int) -> int:
    """The dim nn.functional.<name> picks when none is given, with PyTorch's deprecation
    warning (``stacklevel`` as the public function received it)."""
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to include "
        "dim=X as an argument.",
        stacklevel=stacklevel,
    )
    return 0 if ndim in (0, 1, 3) else 1


_SHORT_ROW = 256  # (NumPy's sum along a short contiguous last axis is 4x slower than einsum)


def _row_sums(xp, s, d: int):
    """The sums of s along axis d, kept as a size-1 dim."""
    if xp is np and d == s.ndim - 1 and s.shape[d] <= _SHORT_ROW:
        return np.einsum("...i->...", s)[..., None]
    return s.sum(axis=d, keepdims=True)


# NumPy reduces a short last axis row by row at a fixed cost per row; for many short rows
# a loop over the columns (one vectorized maximum each) is 1.5-20x faster.
_COLUMN_MAX_WIDTH = 32
_COLUMN_MAX_ROWS_PER_COLUMN = 128


def _row_maxima(xp, x, d: int):
    """The maxima of x along axis d, kept as a size-1 dim (the same values as ``x.max``:
    a maximum is exact in any order, NaN propagates either way)."""
    n = x.shape[d]
    if xp is np and d == x.ndim - 1 and 1 < n <= _COLUMN_MAX_WIDTH:
        if x.size >= n * n * _COLUMN_MAX_ROWS_PER_COLUMN:
            m = x[..., 0].copy()
            for k in range(1, n):
                np.maximum(m, x[..., k], out=m)
            return m[..., None]
    return x.max(axis=d, keepdims=True) if xp is np else xp.amax(x, axis=d, keepdims=True)


def _softmax_kernel(log: bool):
    """softmax or log_softmax along one dim, shifted by the maximum for stability."""

    name = "log_softmax" if log else "softmax"

    def kernel(xp, x, dim, *, dtype=None):
        if dtype is not None:
            x = x.astype(dtype.np)
        d = dim1(dim, x.ndim)
        if x.size == 0:
            return x.copy()
        if x.dtype.kind not in "f":
            impl = "_lastdim" if d == max(x.ndim - 1, 0) else ""
            raise dt.not_implemented(f"{name}{impl}_kernel_impl", x)
        if x.ndim == 0:  # (as one element along a dim: NaN for a NaN or an infinity)
            return kernel(xp, x.reshape(1), 0).reshape(())
        if xp is not np or x.size * 8 < parallel.WORK:  # (parallel.rows's one slab)
            return along(xp, d, x, xp.empty_like(x))
        return parallel.rows(partial(along, np, d), x, np.empty_like(x), d, passes=8)

    def along(xp, d, x, s):
        """The kernel along axis d of x, into s (of x's shape and layout)."""
        m = _row_maxima(xp, x, d)
        xp.subtract(x, m, out=s)  # (then in place)
        if log:
            s -= xp.log(_row_sums(xp, xp.exp(s), d))
            return s
        xp.exp(s, out=s)
        s /= _row_sums(xp, s, d)
        return s

    return silent(kernel)  # a row of all -inf gives nan, as in PyTorch


def _sm_samples(make):
    yield S((make((2, 3)), 1))
    yield S((make((2, 3, 4)), -1))
    yield S((make((2, 3, 4)), 0))
    yield S((make(()), 0))
    yield S((make((0, 3)), 1))
    yield S((make((3, 4)), 1), {"dtype": dt.float64})


def _sm_errors(make):
    yield ErrorInput(S((make((2, 3)), 2)), IndexError, "Dimension out of range")
    ints = make((2, 3), dtype=np.int64)
    yield ErrorInput(
        S((ints, 1)), NotImplementedError, "_lastdim_kernel_impl\" not implemented for 'Long'"
    )
    yield ErrorInput(
        S((ints, 0)), NotImplementedError, "softmax_kernel_impl\" not implemented for 'Long'"
    )


def _sm_complex32(name: str, at: int = 0):
    """PyTorch's softmax kernel refusing complex32 (``<name>[_lastdim]_kernel_impl``, as
    for integers); an empty input reaches none."""

    def fact(arrays, attrs):
        x = arrays[at]
        if x.size == 0:
            return True
        impl = "_lastdim" if dim1(attrs["dim"], x.ndim) == max(x.ndim - 1, 0) else ""
        return f"{name}{impl}_kernel_impl"

    return fact


def _sm_op(name, kernel, vjp, jvp):
    return defop(
        name,
        kernel,
        nin=1,
        vjp=vjp,
        jvp=jvp,
        samples=_sm_samples,
        error_samples=_sm_errors,
        batch_rule=_DIMS,
        complex32=_sm_complex32(name),
        meta=by_kernel,
    )


# ------------------------------------------------------------------ softmax backward
def _sm_backward_kernel(log: bool):
    """softmax's gradient y * (g - sum(g * y)), log_softmax's g - exp(y) * sum(g), along
    ``dim``, in one buffer."""

    name = "log_softmax_backward" if log else "softmax_backward"

    def kernel(xp, grad_output, output, dim, input_dtype):
        if not log and grad_output.shape != output.shape:  # (PyTorch's log form checks none)
            raise RuntimeError(
                "Expected tensor for argument #1 'grad' to have same size as tensor for "
                f"argument #2 'output'; but {list(grad_output.shape)} does not equal "
                f"{list(output.shape)} (while checking arguments for softmax_backward)"
            )
        d = dim1(dim, output.ndim)
        if grad_output.size == 0 and grad_output.dtype == output.dtype:  # (no kernel runs)
            return grad_output.copy()
        if grad_output.dtype.kind != "f":
            impl = "_lastdim" if d == max(output.ndim - 1, 0) else ""
            raise dt.not_implemented(f"{name}{impl}_kernel_impl", grad_output)
        if grad_output.dtype != output.dtype:
            raise RuntimeError(
                f"expected scalar type {dt.from_np(grad_output.dtype).scalar_name} but found "
                f"{dt.from_np(output.dtype).scalar_name}"
            )
        if not output.ndim:  # one element: the sum is the element itself
            return grad_output * (1 - xp.exp(output) if log else output * (1 - output))
        if log:
            out = xp.exp(output)
            out *= grad_output.sum(axis=d, keepdims=True)
            xp.subtract(grad_output, out, out=out)
        else:
            out = grad_output * output
            xp.subtract(grad_output, out.sum(axis=d, keepdims=True), out=out)
            out *= output
        return out  # (grad_output's dtype: PyTorch's CPU kernels leave input_dtype aside)

    return kernel


def _sm_backward_rule(op):
    def rule(vmap, args, bdims, attrs):
        g, y = (materialize(vmap, a, b) for a, b in zip(args, bdims))
        if g.dim() == 1:  # a logical 0-d pair
            return op.fn(g.unsqueeze(1), y.unsqueeze(1), 1, attrs["input_dtype"]).squeeze(1), 0
        return op.fn(g, y, pdim(attrs["dim"], g.dim() - 1), attrs["input_dtype"]), 0

    return rule


def _sm_backward_samples(make):
    for shape, dim in (((2, 3), 1), ((2, 3, 4), 0), ((3, 4), -1), ((), 0), ((0, 3), 1)):
        g = make(shape)
        yield S((g, make(shape), dim, dt.from_np(g.dtype)))


def _sm_backward_op(name: str, log: bool, vjp: tuple, jvp) -> Op:
    return defop(
        name,
        _sm_backward_kernel(log),
        nin=2,
        vjp=vjp,
        jvp=jvp,
        samples=_sm_backward_samples,
        batch_rule=rule_generator(_sm_backward_rule)(),
        methods=False,
        complex32=_sm_complex32(name.strip("_").removesuffix("_data"), at=1),
        meta=by_kernel,
    )


def _sm_sum(x, dim):
    return _sum_dims(x, dim, True)


def _softmax_backward_output_vjp(g, grad_output, output, dim):
    through_grad_output = g * (grad_output - _sm_sum(grad_output * output, dim))
    return through_grad_output - grad_output * _sm_sum(g * output, dim)


def _softmax_backward_jvp(tgrad_output, toutput, grad_output, output, dim, input_dtype):
    of_output = toutput * (grad_output - _sm_sum(grad_output * output, dim))
    of_grad = output * (tgrad_output - _sm_sum(tgrad_output * output + grad_output * toutput, dim))
    return of_output + of_grad


_softmax_backward_data_p = _sm_backward_op(
    "_softmax_backward_data",
    False,
    (
        lambda g, output, dim, input_dtype: _softmax_backward_data(g, output, dim, input_dtype),
        _softmax_backward_output_vjp,
    ),
    _softmax_backward_jvp,
)
_softmax_backward_data = _softmax_backward_data_p.fn


def _log_softmax_backward_jvp(tgrad_output, toutput, grad_output, output, dim, input_dtype):
    return tgrad_output - output.exp() * (
        _sm_sum(tgrad_output, dim) + toutput * _sm_sum(grad_output, dim)
    )


_log_softmax_backward_data_p = _sm_backward_op(
    "_log_softmax_backward_data",
    True,
    (
        lambda g, output, dim: g - _sm_sum(g * output.exp(), dim),
        lambda g, grad_output, output, dim: -g * output.exp() * _sm_sum(grad_output, dim),
    ),
    _log_softmax_backward_jvp,
)
_log_softmax_backward_data = _log_softmax_backward_data_p.fn


def _sm_vjp(backward: Op):
    """softmax's (or log_softmax's) vjp: its backward op, also run on arrays (one kernel
    call, where nothing observes the backward pass)."""
    fn = backward.fn

    def arrays(g, result, dim):
        return kernel_call(backward, g, result, dim=dim, input_dtype=dt.from_np(result.dtype))

    return on_arrays(lambda g, result, dim: fn(g, result, dim, result.dtype), arrays)


softmax_p = _sm_op(
    "softmax",
    _softmax_kernel(log=False),
    _sm_vjp(_softmax_backward_data_p),
    lambda t, result, dim: result * (t - (t * result).sum(dim, True)),
)
_softmax = softmax_p.fn
log_softmax_p = _sm_op(
    "log_softmax",
    _softmax_kernel(log=True),
    _sm_vjp(_log_softmax_backward_data_p),
    lambda t, result, dim: t - (result.exp() * t).sum(dim, True),
)


def _sm_api(op: Op, functional: bool):
    if functional:

        def fn(input, dim=None, _stacklevel: int = 3, dtype=None):
            if dim is None:
                dim = softmax_dim(input.dim(), op.name, _stacklevel)
            return op.fn(input, dim, dtype=dtype)

    else:

        def fn(input, dim, dtype=None):
            return op.fn(input, dim, dtype=dtype)

    fn.__name__ = fn.__qualname__ = op.name
    fn.__doc__ = f"``{op.name}(input, dim, dtype=None)`` along ``dim``."
    return fn


softmax = _sm_api(softmax_p, False)
log_softmax = _sm_api(log_softmax_p, False)


# nn.functional's forms pick a dim (with PyTorch's warning) when none is given.
nn_softmax = _sm_api(softmax_p, True)
nn_log_softmax = _sm_api(log_softmax_p, True)

tensor_methods({"softmax": softmax, "log_softmax": log_softmax})
