"""Finite differences and the trapezoidal rule: ``diff``, ``gradient``, ``trapezoid``/``trapz``
and ``cumulative_trapezoid``, composites of public ops (their gradients, jvp and vmap come from
the ops they use)."""

from __future__ import annotations

import numbers

import numpy as np

from .._core.dtype import bool_, uint8
from .._core.op import VARIADIC, ErrorInput, composite
from .._core.tensor import Tensor, wrap_dim
from .._opdb.samples import S
from ._families import COMPLEX, COMPLEX_TOO, FLOATS_INT
from .shape import cat
from .views import narrow


# ------------------------------------------------------------------ diff
def _diff_check(input: Tensor, n: int, dim: int, others) -> int:
    if input.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = wrap_dim(dim, input.dim())
    for t in others:
        if t is None:
            continue
        if not isinstance(t, Tensor):
            raise TypeError(f"diff(): argument 'prepend' must be Tensor, not {type(t).__name__}")
        if t.dim() != input.dim():
            raise RuntimeError("diff expects prepend or append to be the same dimension as input")
        for i in range(input.dim()):
            if i != d and t.shape[i] != input.shape[i]:
                raise RuntimeError(
                    "diff expects the shape of tensor to prepend or append to match that of "
                    f"input except along the differencing dimension; input.size({i}) = "
                    f"{input.shape[i]}, but got tensor.size({i}) = {t.shape[i]}"
                )
    return d


def _diff_samples(make):
    yield S((make((5,)),))
    yield S((make((3, 4)),), {"n": 2})
    yield S((make((3, 4)),), {"dim": 0})
    yield S((make((2, 3, 4)), 1, 1))
    yield S((make((3, 4)), 5))  # more differences than points: empty
    yield S((make((3, 4)), 0))
    yield S((make((3, 4)),), {"prepend": make((3, 2)), "append": make((3, 1))})
    yield S((make((3, 4)), 2, 0), {"append": make((2, 4))})
    yield S((make((0, 3)),), {"dim": 0})


def _diff_errors(make):
    yield ErrorInput(S((make(()),)), RuntimeError, "diff expects input to be at least one-dim")
    yield ErrorInput(S((make((3,)), -1)), RuntimeError, "order must be non-negative but got -1")
    yield ErrorInput(S((make((2, 3)), 1, 2)), IndexError, r"\[-2, 1\], but got 2")
    yield ErrorInput(
        S((make((2, 3)),), {"prepend": make((3,))}),
        RuntimeError,
        "diff expects prepend or append to be the same dimension as input",
    )
    yield ErrorInput(
        S((make((2, 3)),), {"append": make((3, 1))}),
        RuntimeError,
        r"input.size\(0\) = 2, but got tensor.size\(0\) = 3",
    )


@composite(
    samples=_diff_samples,
    error_samples=_diff_errors,
    methods=True,
    test=COMPLEX_TOO,
)
def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The n-th forward difference along ``dim``, after joining ``prepend`` and ``append``."""
    d = _diff_check(input, n, dim, (prepend, append))
    x = input
    if prepend is not None or append is not None:
        x = cat([t for t in (prepend, x, append) if t is not None], d)
    if n == 0:
        return x.clone()
    for _ in range(n):
        m = x.shape[d] - 1
        if m <= 0:
            return narrow(x, d, 0, 0).clone()
        hi, lo = narrow(x, d, 1, m), narrow(x, d, 0, m)
        x = hi.logical_xor(lo) if x.dtype == bool_ else hi - lo
    return x


# ------------------------------------------------------------------ trapezoid
def _type_name(v) -> str:
    return "Tensor" if isinstance(v, Tensor) else type(v).__name__


def _bad_combination(name: str, dx_type: str, y, x, dx) -> TypeError:
    got = [_type_name(y)]
    if x is not None:
        got.append(_type_name(x))
    if dx is not None:
        got.append(f"dx={_type_name(dx)}")
    forms = [
        " * (Tensor y, Tensor x, *, int dim = -1)",
        f" * (Tensor y, *, {dx_type} dx = 1, int dim = -1)",
    ]
    if name == "trapz":
        forms.reverse()
    return TypeError(
        f"{name}() received an invalid combination of arguments - got ({', '.join(got)}), "
        "but expected one of:\n" + "\n".join(forms) + "\n"
    )


def _trapezoid_check(name: str, y, x, dx, dim, dx_type: str = "Number") -> None:
    if (x is not None and not isinstance(x, Tensor)) or (x is not None and dx is not None):
        raise _bad_combination(name, dx_type, y, x, dx)
    if y.dtype == bool_:
        raise RuntimeError(f"{name}: received a bool input for `y`, but bool is not supported")


def _spacing(name: str, y: Tensor, x: Tensor, d: int) -> Tensor:
    """The widths between sample points, shaped to multiply the pairs of y along ``d``."""
    if x.dim() == 1:
        if x.shape[0] != y.shape[d]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        shape = [1] * y.dim()
        shape[d] = -1
        return diff(x).reshape(shape)
    return diff(x, dim=d)


def _pairs(y: Tensor, d: int) -> Tensor:
    """y[i + 1] + y[i] along ``d``."""
    m = max(y.shape[d] - 1, 0)
    return narrow(y, d, min(1, y.shape[d]), m) + narrow(y, d, 0, m)


def _trapezoid(name: str, y, x, dx, dim, dx_type: str):
    if isinstance(y, Tensor):
        _trapezoid_check(name, y, x, dx, dim, dx_type)
    if y.dim() == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = wrap_dim(dim, y.dim())
    if y.shape[d] == 0:
        return y.sum(d)
    if x is not None:
        return (_pairs(y, d) * _spacing(name, y, x, d)).sum(d) / 2
    dx = 1 if dx is None else dx
    ends = narrow(y, d, 0, 1) + narrow(y, d, y.shape[d] - 1, 1)
    return (y.sum(d) - ends.squeeze(d) / 2) * dx


def _trapezoid_samples(make):
    yield S((make((5,)),))
    yield S((make((3, 4)),), {"dim": 0})
    yield S((make((3, 4)),), {"dx": 0.5})
    yield S((make((2, 3, 4)),), {"dx": 2, "dim": 1})
    yield S((make((3, 4)), np.array([0.0, 0.5, 1.5, 3.0], dtype=make.dtype)))
    yield S((make((3, 4)), np.array([0.0, 1.0, 1.5], dtype=make.dtype)), {"dim": 0})
    yield S((make((3, 4)), make((3, 4))))
    yield S((make((3, 4)), make((1, 4))))
    yield S((make((3, 1)),))
    yield S((make((3, 0)),))


def _trapezoid_errors(name: str):
    def errors(make):
        yield ErrorInput(
            S((make((3, 4)), np.array([0.0, 1.0], dtype=make.dtype))),
            RuntimeError,
            f"{name}: There must be one `x` value for each sample point",
        )
        yield ErrorInput(
            S((make(()),)), IndexError, "Dimension specified as -1 but tensor has no dimensions"
        )
        yield ErrorInput(S((make((3, 4)),), {"dim": 2}), IndexError, r"\[-2, 1\], but got 2")

    return errors


@composite(
    samples=_trapezoid_samples,
    error_samples=_trapezoid_errors("trapezoid"),
    test=COMPLEX_TOO,
)
def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The trapezoidal rule along ``dim``: over the points ``x``, or spaced ``dx`` apart."""
    return _trapezoid("trapezoid", y, x, dx, dim, "Number")


def _trapz_samples(make):
    yield S((make((5,)),))
    yield S((make((3, 4)),), {"dx": 0.5, "dim": 0})
    yield S((make((3, 4)), np.array([0.0, 0.5, 1.5, 3.0], dtype=make.dtype)))


@composite(
    samples=_trapz_samples,
    error_samples=_trapezoid_errors("trapezoid"),
    test=COMPLEX_TOO,
)
def trapz(y, x=None, *, dx=None, dim=-1):
    """Alias of trapezoid."""
    if x is not None and not isinstance(x, Tensor):
        raise _bad_combination("trapz", "float", y, x, dx)
    return _trapezoid("trapezoid", y, x, dx, dim, "float")


def _cumulative_samples(make):
    yield S((make((5,)),))
    yield S((make((3, 4)),), {"dim": 0})
    yield S((make((3, 4)),), {"dx": 0.5})
    yield S((make((3, 4)), np.array([0.0, 0.5, 1.5, 3.0], dtype=make.dtype)))
    yield S((make((3, 4)), make((3, 4))), {"dim": 0})
    yield S((make((3, 1)),))
    yield S((make((3, 0)),))


def _cumulative_errors(make):
    yield ErrorInput(
        S((make((3, 4)), np.array([0.0, 1.0], dtype=make.dtype))),
        RuntimeError,
        "cumulative_trapezoid: There must be one `x` value for each sample point",
    )
    yield ErrorInput(S((make(()),)), IndexError, r"slice\(\) cannot be applied to a 0-dim tensor")


@composite(
    samples=_cumulative_samples,
    error_samples=_cumulative_errors,
    test=COMPLEX_TOO,
)
def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoidal rule along ``dim`` (one value fewer than points)."""
    name = "cumulative_trapezoid"
    _trapezoid_check(name, y, x, dx, dim)
    if y.dim() == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, y.dim())
    pairs = _pairs(y, d)
    if x is not None:
        return (pairs * _spacing(name, y, x, d)).cumsum(d) / 2
    return (pairs * ((1 if dx is None else dx) / 2)).cumsum(d)  # (PyTorch's dx / 2 first)


# ------------------------------------------------------------------ gradient
_GRAD = "torch.gradient "


def _gradient_dims(input: Tensor, dim) -> list:
    if dim is None:
        return list(range(input.dim()))
    dims = [dim] if isinstance(dim, numbers.Integral) else list(dim)
    wrapped = [wrap_dim(d, input.dim()) for d in dims]
    for i, d in enumerate(wrapped):
        if d in wrapped[:i]:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return wrapped


def _gradient_checks(input: Tensor, spacing, dim, dims: list, edge_order: int) -> None:
    """PyTorch's pre-checks, in its order."""
    if input.dtype == uint8:
        raise RuntimeError(_GRAD + "does not support uint8 input.")
    size = len(spacing) if isinstance(spacing, (list, tuple)) else None
    if size is not None and dim is None and size != input.dim():
        raise RuntimeError(
            _GRAD + "expected spacing to be unspecified, a scalar, or a list of length equal to "
            f"'self.dim() = {input.dim()}', since dim argument was not given, but got a list of "
            f"length {size}"
        )
    if size is not None and dim is not None and size != len(dims):
        raise RuntimeError(
            _GRAD + "expected spacing to be unspecified, a scalar or it's spacing and dim "
            f"arguments to have the same length, but got a spacing argument of length {size} "
            f"and a dim argument of length {len(dims)}."
        )
    if edge_order not in (1, 2):
        raise RuntimeError(_GRAD + "only supports edge_order=1 and edge_order=2.")
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError(_GRAD + "expected each dimension size to be at least edge_order+1")


def _sl(x: Tensor, d: int, start: int, stop: int | None = None) -> Tensor:
    """x[start:stop] along d (negative bounds from the end)."""
    n = x.shape[d]
    a = start + n if start < 0 else start
    b = n if stop is None else (stop + n if stop < 0 else stop)
    return narrow(x, d, a, b - a)


def _gradient_uniform(x: Tensor, d: int, h, edge_order: int) -> Tensor:
    center = (_sl(x, d, 2) - _sl(x, d, 0, -2)) / h
    if edge_order == 1:
        first = (_sl(x, d, 1, 2) - _sl(x, d, 0, 1)) / h
        last = (_sl(x, d, -1) - _sl(x, d, -2, -1)) / h
    else:
        first = (_sl(x, d, 0, 1) * -1.5 + _sl(x, d, 1, 2) * 2 - _sl(x, d, 2, 3) * 0.5) / h
        last = (_sl(x, d, -3, -2) * 0.5 + _sl(x, d, -2, -1) * -2 + _sl(x, d, -1) * 1.5) / h
    return cat([first, center / 2, last], d)


def _gradient_coordinates(x: Tensor, d: int, coords: Tensor, edge_order: int) -> Tensor:
    if coords.dim() != 1:
        raise RuntimeError(
            _GRAD + "expected each element of spacing to have one dimension, but got an "
            f"element with {coords.dim()} dimensions!"
        )
    shape = [1] * x.dim()
    shape[d] = -1
    h = coords.diff(1, 0)
    h1, h2 = h[:-1], h[1:]
    a = (-h2 / (h1 * (h1 + h2))).reshape(shape)
    b = ((h2 - h1) / (h1 * h2)).reshape(shape)
    c = (h1 / (h2 * (h1 + h2))).reshape(shape)
    center = a * _sl(x, d, 0, -2) + b * _sl(x, d, 1, -1) + c * _sl(x, d, 2)
    if edge_order == 1:
        first = (_sl(x, d, 1, 2) - _sl(x, d, 0, 1)) / h[0]
        last = (_sl(x, d, -1) - _sl(x, d, -2, -1)) / h[-1]
    else:
        a = -(2.0 * h[0] + h[1]) / (h[0] * (h[0] + h[1]))
        b = (h[0] + h[1]) / (h[0] * h[1])
        c = (-h[0]) / (h[1] * (h[0] + h[1]))
        first = a * _sl(x, d, 0, 1) + b * _sl(x, d, 1, 2) + c * _sl(x, d, 2, 3)
        a = (h[-1]) / (h[-2] * (h[-1] + h[-2]))
        b = -(h[-1] + h[-2]) / (h[-1] * h[-2])
        c = (2 * h[-1] + h[-2]) / (h[-1] * (h[-1] + h[-2]))
        last = a * _sl(x, d, -3, -2) + b * _sl(x, d, -2, -1) + c * _sl(x, d, -1)
    return cat([first, center, last], d)


def _gradient_samples(make):
    x = make((4, 5))
    yield S((x,))
    yield S((x,), {"spacing": 2.0, "dim": 1, "edge_order": 2})
    yield S((x,), {"spacing": [0.5, 3.0]})
    yield S((make((3, 4, 5)),), {"dim": (0, 2), "edge_order": 2})
    coords = (np.array([0.0, 0.5, 1.5, 3.0], dtype=make.dtype),)
    yield S((x,), {"spacing": coords, "dim": 0})
    yield S((x,), {"spacing": coords, "dim": 0, "edge_order": 2})
    yield S((make((6,)),), {"spacing": (np.array([0.0, 1, 1.5, 2.5, 4, 4.2]),), "edge_order": 2})
    yield S((make((3,)),), {"spacing": -1, "edge_order": 2})


def _gradient_errors(make):
    x = make((3, 4))
    yield ErrorInput(S((x,), {"edge_order": 3}), RuntimeError, "only supports edge_order=1 and")
    yield ErrorInput(
        S((x,), {"spacing": [1.0, 2.0, 3.0]}),
        RuntimeError,
        "expected spacing to be unspecified, a scalar, or a list of length equal to",
    )
    yield ErrorInput(
        S((x,), {"spacing": [1.0, 2.0], "dim": 1}),
        RuntimeError,
        "spacing argument of length 2 and a dim argument of length 1",
    )
    yield ErrorInput(
        S(
            (x[:1],),
        ),
        RuntimeError,
        r"expected each dimension size to be at least edge_order\+1",
    )
    yield ErrorInput(S((x,), {"dim": (0, 0)}), RuntimeError, "dim 0 appears multiple times")


@composite(
    samples=_gradient_samples,
    error_samples=_gradient_errors,
    test={"dtypes": (*FLOATS_INT, *COMPLEX)},
    nout=VARIADIC,
)
def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """The derivative of ``input`` estimated along each of ``dim`` (default: all) by
    second-order central differences (one-sided at the edges, of ``edge_order``), with
    unit sizes ``spacing`` (a number, one per dim) or sample coordinates (a 1-d tensor per
    dim). A tuple, one tensor per dim."""
    dims = _gradient_dims(input, dim)
    _gradient_checks(input, spacing, dim, dims, edge_order)
    if isinstance(spacing, (list, tuple)):
        spacing = list(spacing)
        if any(isinstance(s, Tensor) for s in spacing):
            for i, s in enumerate(spacing):
                if not isinstance(s, Tensor):
                    raise TypeError(
                        f"expected Tensor as element {i} in argument 1, but got {type(s).__name__}"
                    )
            return tuple(
                _gradient_coordinates(input, d, s, edge_order) for d, s in zip(dims, spacing)
            )
    else:
        spacing = [spacing] * len(dims)
    return tuple(_gradient_uniform(input, d, h, edge_order) for d, h in zip(dims, spacing))


__all__ = ["cumulative_trapezoid", "diff", "gradient", "trapezoid", "trapz"]
