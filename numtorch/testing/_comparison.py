"""``torch.testing.assert_close`` (and the deprecated ``assert_allclose``) over numtorch.

Two inputs are walked together: sequences (not strings) item by item, mappings key by key,
and every leaf pair is compared by the first comparer that accepts it (``None``, booleans,
numbers, tensor-likes). The first failing leaf raises, with PyTorch's message and, below
containers, the path to the leaf ("The failure occurred for item [1]['a']").
"""

from __future__ import annotations

import cmath
import collections.abc
import warnings
from typing import Any

import numpy as np

import numtorch

__all__ = ["assert_allclose", "assert_close"]


def _dtype_tolerances() -> dict:
    """PyTorch's default (rtol, atol) per dtype; any other dtype compares exactly."""
    half = (0.001, 1e-5)
    single = (1.3e-6, 1e-5)
    double = (1e-7, 1e-7)
    return {
        numtorch.float16: half,
        numtorch.bfloat16: (0.016, 1e-5),
        numtorch.float32: single,
        numtorch.float64: double,
        numtorch.complex32: half,
        numtorch.complex64: single,
        numtorch.complex128: double,
    }


_PYTHON_NUMBER_DTYPES = {int: "int64", float: "float64", complex: "complex128"}


class _Mismatch(Exception):
    """One failed leaf: the exception type to raise, its text, and the leaf's path."""

    def __init__(self, kind: type[Exception], text: str, path: tuple = ()) -> None:
        super().__init__(text)
        self.kind = kind
        self.text = text
        self.path = path

    def error(self, msg=None) -> Exception:
        if isinstance(msg, str):
            return self.kind(msg)
        text = self.text
        if self.path:
            text += "\n\nThe failure occurred for item " + "".join(str([p]) for p in self.path)
        return self.kind(msg(text) if callable(msg) else text)


class _NotMine(Exception):
    """A comparer declines a leaf pair; the next one is tried."""


def _tolerances(dtypes, rtol, atol, path, table=None) -> tuple[float, float]:
    if (rtol is None) != (atol is None):
        missing = "rtol" if rtol is None else "atol"
        raise _Mismatch(
            ValueError,
            f"Both 'rtol' and 'atol' must be either specified or omitted, but got no {missing}.",
            path,
        )
    if rtol is not None:
        return rtol, atol
    table = table or _dtype_tolerances()
    pairs = [table.get(d, (0.0, 0.0)) for d in dtypes]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def _diff_line(kind: str, diff, where, tol, exact: bool) -> str:
    line = (
        f"{kind.title()} difference: {diff}"
        if where is None
        else f"Greatest {kind} difference: {diff} at index {where}"
    )
    return line if exact else f"{line} (up to {tol} allowed)"


def _report(head: str, extra: str, abs_diff, abs_at, atol, rel_diff, rel_at, rtol) -> str:
    exact = rtol == 0 and atol == 0
    lines = [f"{head} are not {'equal' if exact else 'close'}!", "", extra]
    lines.append(_diff_line("absolute", abs_diff, abs_at, atol, exact))
    lines.append(_diff_line("relative", rel_diff, rel_at, rtol, exact))
    return "\n".join(lines)


def _scalar_report(actual, expected, rtol, atol) -> str:
    diff = abs(actual - expected)
    rel = float("inf") if expected == 0 else diff / abs(expected)
    extra = f"Expected {expected} but got {actual}."
    return _report("Scalars", extra, diff, None, atol, rel, None, rtol)


def _unravel(flat: int, shape) -> tuple:
    where = []
    for size in reversed(shape):
        flat, rem = divmod(flat, size)
        where.append(rem)
    return tuple(reversed(where))


def _tensor_report(actual, expected, close, rtol, atol) -> str:
    total = close.numel()
    bad = total - int(close.sum().item())
    extra = f"Mismatched elements: {bad} / {total} ({bad / total:.1%})"
    a, e, ok = actual.flatten(), expected.flatten(), close.flatten()
    if actual.dtype.is_floating_point and actual.dtype.itemsize == 1:
        first = tuple(numtorch.nonzero(~close)[0].tolist())
        return (
            f"Tensor-likes are not 'equal'!\n\n{extra}\n"
            f"The first mismatched element is at index {first}."
        )
    if not (a.dtype.is_floating_point or a.dtype.is_complex):
        a, e = a.to(numtorch.int64), e.to(numtorch.int64)
    diff = numtorch.abs(a - e)
    diff[ok] = 0
    abs_max, abs_at = numtorch.max(diff, 0)
    rel = diff / numtorch.abs(e)
    rel[ok] = 0
    rel_max, rel_at = numtorch.max(rel, 0)
    shape = tuple(close.shape)
    return _report(
        "Tensor-likes",
        extra,
        abs_max.item(),
        _unravel(int(abs_at), shape),
        atol,
        rel_max.item(),
        _unravel(int(rel_at), shape),
        rtol,
    )


def _type_text(x) -> str:
    """``<class '...'>`` as PyTorch would print it: numtorch's classes under torch's names."""
    cls = type(x)
    if cls is numtorch.Tensor:
        return "<class 'torch.Tensor'>"
    name = f"{cls.__module__}.{cls.__qualname__}"
    if name.startswith("numtorch."):
        name = "torch." + name.removeprefix("numtorch.")
    return f"<class '{name}'>" if cls.__module__ != "builtins" else str(cls)


def _compare_none(actual, expected, path, **_) -> None:
    if actual is not None and expected is not None:
        raise _NotMine
    if not (actual is None and expected is None):
        raise _Mismatch(AssertionError, f"None mismatch: {actual} is not {expected}", path)


def _compare_bools(actual, expected, path, **_) -> None:
    kinds = (bool, np.bool_)
    if not (isinstance(actual, kinds) and isinstance(expected, kinds)):
        raise _NotMine
    actual, expected = bool(actual), bool(expected)
    if actual is not expected:
        raise _Mismatch(AssertionError, f"Booleans mismatch: {actual} is not {expected}", path)


def _as_number(x):
    return x.item() if isinstance(x, np.number) else x


def _compare_numbers(actual, expected, path, *, rtol, atol, equal_nan, check_dtype, **_) -> None:
    kinds = (int, float, complex, np.number)
    if not (isinstance(actual, kinds) and isinstance(expected, kinds)):
        raise _NotMine
    actual, expected = _as_number(actual), _as_number(expected)
    for x in (actual, expected):
        if type(x) not in _PYTHON_NUMBER_DTYPES:
            # PyTorch knows no dtype for a bool compared with a number: its internal error
            raise RuntimeError(
                f"Originating a NumberPair() at item {''.join(str([p]) for p in path)} with\n\n"
                f"{type(actual).__name__}(): {actual}\n\nand\n\n"
                f"{type(expected).__name__}(): {expected}\n\n"
                "resulted in the unexpected exception above. If you are a user and see this "
                "message during normal operation please file an issue at "
                "https://github.com/pytorch/pytorch/issues. If you are a developer and working "
                "on the comparison functions, please except the previous error and raise an "
                "expressive `ErrorMeta` instead."
            ) from KeyError(type(x))
    dtypes = [getattr(numtorch, _PYTHON_NUMBER_DTYPES[type(x)]) for x in (actual, expected)]
    rtol, atol = _tolerances(dtypes, rtol, atol, path)
    if check_dtype and type(actual) is not type(expected):
        raise _Mismatch(
            AssertionError,
            f"The (d)types do not match: {type(actual)} != {type(expected)}.",
            path,
        )
    if actual == expected:
        return
    if equal_nan and cmath.isnan(actual) and cmath.isnan(expected):
        return
    diff = abs(actual - expected)
    if cmath.isfinite(diff) and diff <= atol + rtol * abs(expected):
        return
    raise _Mismatch(AssertionError, _scalar_report(actual, expected, rtol, atol), path)


def _as_tensor(x):
    if isinstance(x, numtorch.Tensor):
        return x
    try:
        return numtorch.as_tensor(x)
    except Exception:
        raise _NotMine from None


def _compare_tensors(actual, expected, path, *, allow_subclasses, rtol, atol, **flags) -> None:
    kind_a, kind_e = type(actual), type(expected)
    if not (issubclass(kind_a, kind_e) or issubclass(kind_e, kind_a)):
        raise _NotMine
    if not allow_subclasses and kind_a is not kind_e:
        raise _NotMine
    actual, expected = _as_tensor(actual), _as_tensor(expected)
    rtol, atol = _tolerances([actual.dtype, expected.dtype], rtol, atol, path)
    with numtorch.no_grad():
        _check_tensors(actual.detach(), expected.detach(), path, rtol, atol, **flags)


def _attribute_mismatch(name, actual, expected, path) -> _Mismatch:
    return _Mismatch(
        AssertionError,
        f"The values for attribute '{name}' do not match: {actual} != {expected}.",
        path,
    )


def _check_tensors(
    actual,
    expected,
    path,
    rtol,
    atol,
    *,
    equal_nan,
    check_device,
    check_dtype,
    check_layout,
    check_stride,
) -> None:
    if actual.shape != expected.shape:
        raise _attribute_mismatch("shape", actual.shape, expected.shape, path)
    if actual.layout != expected.layout:
        if check_layout:
            raise _attribute_mismatch("layout", actual.layout, expected.layout, path)
    elif check_stride and actual.stride() != expected.stride():
        raise _attribute_mismatch("stride()", actual.stride(), expected.stride(), path)
    if check_device and actual.device != expected.device:
        raise _attribute_mismatch("device", actual.device, expected.device, path)
    if check_dtype and actual.dtype != expected.dtype:
        raise _attribute_mismatch("dtype", actual.dtype, expected.dtype, path)
    if actual.device.type == "meta" or expected.device.type == "meta":
        return
    if actual.device != expected.device:
        actual, expected = actual.cpu(), expected.cpu()
    if actual.dtype != expected.dtype:
        common = numtorch.promote_types(actual.dtype, expected.dtype)
        actual, expected = actual.to(common), expected.to(common)
    if actual.layout != expected.layout:
        actual, expected = (
            t if t.layout == numtorch.strided else t.to_dense() for t in (actual, expected)
        )
    _check_values(actual, expected, path, rtol, atol, equal_nan)


def _check_values(actual, expected, path, rtol, atol, equal_nan) -> None:
    if actual.dtype.is_floating_point and actual.dtype.itemsize == 1 and (rtol or atol):
        raise _Mismatch(
            AssertionError,
            f"Rtol={rtol} and atol={atol} are not supported for bitwise comparison of low"
            " dimensional floats. Please use rtol=0.0 and atol=0.0.",
        )
    close = numtorch.isclose(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if bool(close.all()):
        return
    if actual.dim() == 0:
        text = _scalar_report(actual.item(), expected.item(), rtol, atol)
    else:
        text = _tensor_report(actual, expected, close, rtol, atol)
    raise _Mismatch(AssertionError, text, path)


_COMPARERS = (_compare_none, _compare_bools, _compare_numbers, _compare_tensors)


def _is_sequence(x) -> bool:
    return isinstance(x, collections.abc.Sequence) and not isinstance(x, str)


def _leaf_checks(actual, expected, path, options) -> list:
    """The walk: a list of zero-argument checks, one per leaf pair (structure errors raise)."""
    if _is_sequence(actual) and _is_sequence(expected):
        if len(actual) != len(expected):
            raise _Mismatch(
                AssertionError,
                f"The length of the sequences mismatch: {len(actual)} != {len(expected)}",
                path,
            )
        checks = []
        for i in range(len(actual)):
            checks += _leaf_checks(actual[i], expected[i], (*path, i), options)
        return checks
    mappings = collections.abc.Mapping
    if isinstance(actual, mappings) and isinstance(expected, mappings):
        return _mapping_checks(actual, expected, path, options)
    return [_leaf_check(actual, expected, path, options)]


def _mapping_checks(actual, expected, path, options) -> list:
    keys_a, keys_e = set(actual.keys()), set(expected.keys())
    if keys_a != keys_e:
        raise _Mismatch(
            AssertionError,
            "The keys of the mappings do not match:\n"
            f"Missing keys in the actual mapping: {sorted(keys_e - keys_a)}\n"
            f"Additional keys in the actual mapping: {sorted(keys_a - keys_e)}",
            path,
        )
    try:
        keys = sorted(keys_a)
    except Exception:
        keys = list(keys_a)
    checks = []
    for key in keys:
        checks += _leaf_checks(actual[key], expected[key], (*path, key), options)
    return checks


def _leaf_check(actual, expected, path, options):
    """Pick the comparer now (as PyTorch originates its pairs), run it later."""
    for comparer in _COMPARERS:
        try:
            comparer(actual, expected, path, **options)
        except _NotMine:
            continue
        except _Mismatch as mismatch:
            if mismatch.kind is ValueError:
                raise
            return _deferred(mismatch)
        return _passed
    raise _Mismatch(
        TypeError,
        "No comparison pair was able to handle inputs of type "
        f"{_type_text(actual)} and {_type_text(expected)}.",
        path,
    )


def _passed() -> None:
    return None


def _deferred(mismatch: _Mismatch):
    def check() -> None:
        raise mismatch

    return check


def assert_close(
    actual: Any,
    expected: Any,
    *,
    allow_subclasses: bool = True,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = False,
    check_device: bool = True,
    check_dtype: bool = True,
    check_layout: bool = True,
    check_stride: bool = False,
    msg=None,
) -> None:
    """Assert that ``actual`` and ``expected`` are close, as ``torch.testing.assert_close``."""
    __tracebackhide__ = True
    options = {
        "allow_subclasses": allow_subclasses,
        "rtol": rtol,
        "atol": atol,
        "equal_nan": equal_nan,
        "check_device": check_device,
        "check_dtype": check_dtype,
        "check_layout": check_layout,
        "check_stride": check_stride,
    }
    try:
        checks = _leaf_checks(actual, expected, (), options)
    except _Mismatch as mismatch:
        raise mismatch.error() from None
    for check in checks:
        try:
            check()
        except _Mismatch as mismatch:
            raise mismatch.error(msg) from None


_ALLCLOSE_DEPRECATION = (
    "`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a future "
    "release. Please use `torch.testing.assert_close()` instead. You can find detailed upgrade "
    "instructions in https://github.com/pytorch/pytorch/issues/61844."
)


def assert_allclose(
    actual: Any,
    expected: Any,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = True,
    msg: str = "",
) -> None:
    """Deprecated since PyTorch 1.12: ``assert_close`` with the older, looser defaults."""
    warnings.warn(_ALLCLOSE_DEPRECATION, FutureWarning, stacklevel=2)
    if not isinstance(actual, numtorch.Tensor):
        actual = numtorch.tensor(actual)
    if not isinstance(expected, numtorch.Tensor):
        expected = numtorch.tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        table = {
            numtorch.float16: (1e-3, 1e-3),
            numtorch.float32: (1e-4, 1e-5),
            numtorch.float64: (1e-5, 1e-8),
        }
        rtol, atol = _tolerances([actual.dtype, expected.dtype], None, None, (), table)
    assert_close(
        actual,
        expected,
        rtol=rtol,
        atol=atol,
        equal_nan=equal_nan,
        check_device=True,
        check_dtype=False,
        check_stride=False,
        msg=msg or None,
    )
