"""Dtypes an op has no kernel for, as in PyTorch: the ``NoKernel`` declaration
(``defop(no_kernel=...)``, on the op), and the screen that runs its checks only where an
operand could be refused.

NumPy computes many ops in dtypes PyTorch refuses (a complex ``maximum``, a bool
``argmax``), or fails with its own TypeError. A refusal names the dtype kinds ("b" bool,
"i" integer, "f" float, "c" complex) and PyTorch's exception and text (``{}`` is the dtype's name,
``'ComplexDouble'``); ``defop`` checks it in front of the op's type promotion, so it runs
before anything is computed or written, and only where an operand could be refused.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from . import dtype as dt


@dataclass(frozen=True)
class NoKernel:
    """Dtypes an op has no kernel for, as in PyTorch (``defop(no_kernel=...)``): when the
    promoted dtype of the operands (those at ``inputs``, default all) is of a kind in
    ``kinds`` ("b" bool, "i" integer, "f" float, "c" complex), the call raises
    ``NotImplementedError: "<kernel>" not implemented for '<Dtype>'``, or ``error`` (an
    exception type and its text) instead. ``kernel`` may be a function of the arrays and
    attributes giving the name of the kernel PyTorch runs for that call (matmul's depends on
    the ranks); ``when(arrays, attrs)``, if given, says whether PyTorch runs a kernel at
    all (an empty product runs none); ``first(arrays, attrs)`` runs the checks PyTorch makes
    before it picks the kernel by dtype (broadcast shapes, matrix sizes), which raise first.
    ``out``: the position of the operand whose dtype the kernel's result has (PyTorch's
    kernel writes into a tensor like it): a promoted dtype of a higher kind raises the cast
    error first (``result type Double can't be cast to the desired output type Long``)."""

    kinds: str
    kernel: str | Callable = ""
    error: tuple[type, str] | None = None
    inputs: tuple[int, ...] | None = None
    when: Callable | None = None
    first: Callable | None = None
    out: int | None = None

    def check(self, arrays: list, attrs: dict) -> None:
        ops = arrays if self.inputs is None else [arrays[i] for i in self.inputs]
        operands = [(dt.of(a), a.ndim) if hasattr(a, "dtype") else a for a in _operands(ops)]
        d = dt.result_type(*operands)
        if d is None:
            return
        if self.out is not None and not dt.can_cast(d, o := dt.of(arrays[self.out])):
            raise RuntimeError(
                f"result type {d.scalar_name} can't be cast to the desired output type "
                f"{o.scalar_name}"
            )
        if "bifc"[d._kind] not in self.kinds:
            return
        if self.first is not None:
            self.first(arrays, attrs)
        if self.when is not None and not self.when(arrays, attrs):
            return
        if self.error is not None:
            raise self.error[0](self.error[1].replace("{}", d.scalar_name))
        name = self.kernel(arrays, attrs) if callable(self.kernel) else self.kernel
        raise dt.not_implemented(name, d)

    def kernel_for(self, arrays: list, attrs: dict) -> str | bool:
        """The kernel PyTorch runs for this call, after the checks it makes first; True where
        it runs none. As an op's ``complex32`` fact: complex32 refused as these kinds are."""
        if self.first is not None:
            self.first(arrays, attrs)
        if self.when is not None and not self.when(arrays, attrs):
            return True
        return self.kernel(arrays, attrs) if callable(self.kernel) else self.kernel


def unless_empty(kernel, at: int = 0, scalar: bool = False, empty: bool | str = True):
    """An op's ``complex32`` fact: PyTorch's ``kernel`` refuses complex32 but is not run
    where the operand at ``at`` is empty (or, with ``scalar``, 0-dim): there the call runs
    (``empty`` True) or reaches another kernel (its name: an empty mean's division).
    ``kernel`` may itself be a fact (a function of the call), asked only where nonempty.
    The operands are arrays (an op's) or tensors (a composite's)."""

    def fact(arrays, attrs):
        shape = arrays[at].shape
        if 0 in shape or (scalar and not shape):
            return empty
        return kernel(arrays, attrs) if callable(kernel) else kernel

    return fact


def nonempty(arrays, attrs) -> bool:
    """A ``NoKernel.when``: PyTorch reaches the kernel only where the first operand (an
    array or a tensor) has elements (an empty reduction, pool or unpool runs none)."""
    return 0 not in arrays[0].shape


def dimensioned(arrays, attrs) -> bool:
    """A ``NoKernel.when``: PyTorch reaches the kernel only where the first operand has
    dims (a 0-dim one is copied)."""
    return len(arrays[0].shape) > 0


def dimensioned_nonempty(arrays, attrs) -> bool:
    """A ``NoKernel.when``: PyTorch reaches the kernel only where the first operand has
    dims and elements (a 0-dim one is copied, an empty one gives an empty result)."""
    shape = arrays[0].shape
    return len(shape) > 0 and 0 not in shape


NO_ACCUMULATE_TYPE = (
    'false INTERNAL ASSERT FAILED at "/__w/pytorch/pytorch/aten/src/ATen/AccumulateType.cpp":23, '
    "please report a bug to PyTorch. Unrecognized ScalarType: ComplexHalf"
)


def low_precision(name: str) -> Callable:
    """An op's ``complex32`` fact: linalg's check ``name: Low precision dtypes not
    supported`` refuses it before any kernel."""

    def fact(arrays, attrs):
        raise RuntimeError(f"{name}: Low precision dtypes not supported. Got ComplexHalf")

    return fact


def raises(error: type, text: str) -> Callable:
    """An op's ``complex32`` fact: PyTorch refuses complex32 with its own error and text
    (no kernel name)."""

    def fact(arrays, attrs):
        raise error(text)

    return fact


def _has_complex32(args) -> bool:
    for a in args:
        if type(a) is list or type(a) is tuple:
            if _has_complex32(a):
                return True
        elif getattr(a, "dtype", None) is dt.complex32:
            return True
    return False


def complex32_refusing_fn(fn: Callable, fact, names: tuple[str, ...]) -> Callable:
    """A composite's public function ``fn`` refusing complex32 arguments as PyTorch's own
    kernel for it does: ``fact`` is that kernel's name, or a function of the tensor
    arguments ``names`` and every argument by name (see ``Op.complex32``)."""
    n, sig = len(names), inspect.signature(fn)

    @functools.wraps(fn)
    def checked(*args, **kwargs):
        if _has_complex32(args) or _has_complex32(kwargs.values()):
            name = fact
            if callable(fact):
                bound = sig.bind(*args, **kwargs)
                bound.apply_defaults()
                inputs = [bound.arguments[k] for k in names[:n]]
                name = fact(inputs, bound.arguments)
            if name is not True:
                raise dt.not_implemented(name, dt.complex32)
        return fn(*args, **kwargs)

    return checked


def _operands(inputs) -> list:
    """The tensors (arrays) and numbers among inputs, with lists of tensors spliced in."""
    out = []
    for a in inputs:
        if isinstance(a, (list, tuple)):
            out.extend(x for x in a if hasattr(x, "dtype"))
        elif isinstance(a, (bool, int, float, complex)) or hasattr(a, "dtype"):
            out.append(a)
    return out


def refusal_check(refusals: tuple[NoKernel, ...]) -> Callable:
    """``check(inputs, attrs)``: raise as the first applicable declaration says."""

    def check(inputs, attrs):
        for k in refusals:
            k.check(inputs, attrs)

    return check


def _screen(refusals: tuple[NoKernel, ...], n: int) -> Callable:
    """``may_refuse(inputs)``: whether an operand's dtype lets a refusal apply, so that the
    checks run only then. A refused bool or integer promoted dtype needs every operand of
    that category or below, so each declaration's first operand decides; a refused complex
    one needs one complex operand anywhere. A float array costs one look at its dtype."""
    firsts = sorted({(k.inputs or (0,))[0] for k in refusals})
    kinds = "".join(k.kinds for k in refusals).replace("i", "iu")  # NumPy's kind letters
    cplx = {i for k in refusals if "c" in k.kinds for i in (k.inputs or range(n))}
    cplx = sorted(cplx - set(firsts))

    if len(firsts) == 1 and not cplx:  # the common case, one look at one operand
        (first,) = firsts

        def may_refuse_one(inputs) -> bool:
            a = inputs[first]
            if type(a) is np.ndarray:
                return a.dtype.kind in kinds
            return _may_be(a, kinds)

        return may_refuse_one

    def may_refuse(inputs) -> bool:
        for i in firsts:
            if _may_be(inputs[i], kinds):
                return True
        for i in cplx:
            if _may_be(inputs[i], "c"):
                return True
        return False

    return may_refuse


def _may_be(a, kinds: str) -> bool:
    """Whether operand ``a`` (an array, a tensor, a number, or a list of tensors: its
    first) may have a dtype of ``kinds`` (NumPy's letters)."""
    if type(a) is np.ndarray:
        return a.dtype.kind in kinds
    if isinstance(a, (list, tuple)):
        a = a[0] if a else None
    if isinstance(a, (bool, int)):  # (a number promotes as a category: bool or integer)
        return "b" in kinds or "i" in kinds
    if isinstance(a, complex):
        return "c" in kinds
    d = getattr(a, "dtype", None)
    if d is None:
        return False
    d = d if isinstance(d, np.dtype) else d.np
    return ("c" if d == dt.C32 else d.kind) in kinds  # (complex32's NumPy kind is not "c")


def refusing_prepare(prepare: Callable | None, refusals: tuple[NoKernel, ...], nin: int):
    """A kernel's ``prepare`` after the ``no_kernel`` checks of its arrays."""
    may_refuse, check = _screen(refusals, nin), refusal_check(refusals)

    def checked(arrays, attrs=None):
        if may_refuse(arrays):
            check(arrays[:nin], attrs)
        return (arrays, None) if prepare is None else prepare(arrays, attrs)

    return checked


def refusing_fn(fn: Callable, refusals: tuple[NoKernel, ...], names: tuple[str, ...]):
    """A public function ``fn`` after the ``no_kernel`` checks of its arguments ``names``."""
    may_refuse, check = _screen(refusals, len(names)), refusal_check(refusals)
    n, sig = len(names), inspect.signature(fn)

    @functools.wraps(fn)
    def checked(*args, **kwargs):
        inputs = list(args[:n]) + [kwargs.get(k) for k in names[len(args) :]]
        if may_refuse(inputs):
            bound = sig.bind(*args, **kwargs)
            bound.apply_defaults()
            check(inputs, bound.arguments)  # every argument by name, as attributes
        return fn(*args, **kwargs)

    return checked


CLAMP_COMPLEX = (NotImplementedError, "clamp is not supported for complex types")


def _as_real(x):
    """``x`` (a tensor, or tensors in lists, tuples and dicts) with complex tensors as their
    real parts."""
    if isinstance(x, (list, tuple)):
        return type(x)(_as_real(v) for v in x)
    if isinstance(x, dict):
        return {k: _as_real(v) for k, v in x.items()}
    return x.real if getattr(x, "is_complex", lambda: False)() else x


def empty_complex_runs(fn: Callable) -> Callable:
    """A composite's function run on an empty complex first argument as PyTorch runs it,
    reaching no kernel (its ops' complex refusals don't apply to no elements): computed on
    the real parts, the result given the input's dtype."""

    @functools.wraps(fn)
    def run(*args, **kwargs):
        x = args[0] if args else None
        if getattr(x, "is_complex", lambda: False)() and 0 in x.shape:
            out = fn(*_as_real(args), **_as_real(kwargs))
            return out.to(x.dtype)
        return fn(*args, **kwargs)

    return run
