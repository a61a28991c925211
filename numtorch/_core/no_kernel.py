"""Dtypes an op has no kernel for, as in PyTorch: the ``NoKernel`` declaration
(``defop(no_kernel=...)``), and the table of PyTorch's refusals declared by op name
(``GAPS``, mostly complex inputs) that ``defop`` adds to an op's own declarations.

NumPy computes many ops in dtypes PyTorch refuses (a complex ``maximum``, a bool
``argmax``), or fails with its own TypeError. A refusal names the dtype kinds ("b" bool,
"i" integer, "c" complex) and PyTorch's exception and text (``{}`` is the dtype's name,
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
    ``kinds`` ("b" bool, "i" integer, "c" complex), the call raises
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

    def may_refuse(inputs) -> bool:
        return any(_may_be(inputs[i], kinds) for i in firsts) or any(
            _may_be(inputs[i], "c") for i in cplx
        )

    return may_refuse


def _may_be(a, kinds: str) -> bool:
    """Whether operand ``a`` (an array, a tensor, a number, or a list of tensors: its
    first) may have a dtype of ``kinds`` (NumPy's letters)."""
    if type(a) is np.ndarray:
        return a.dtype.kind in kinds
    if isinstance(a, (list, tuple)):
        a = a[0] if a else None
    if isinstance(a, (bool, int)):
        return True
    if isinstance(a, complex):
        return "c" in kinds
    d = getattr(a, "dtype", None)
    if d is None:
        return False
    return (d if isinstance(d, np.dtype) else d.np).kind in kinds


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


_NI, _RT = NotImplementedError, RuntimeError
_COMPLEX = "c"


def _kernel(name: str) -> tuple:
    return (_NI, f'"{name}" not implemented for ' + "'{}'")


def _rule(text: str, exc=_RT) -> tuple:
    return (exc, text)


_CLAMP = _rule("clamp is not supported for complex types", _NI)

# op name -> {dtype kinds: (exception type, text)}
_TABLE: dict[str, dict[str, tuple]] = {
    # comparisons and orderings: no complex
    **{n: {_COMPLEX: _kernel(f"{n}_cpu")} for n in ("gt", "ge", "lt", "le")},
    **{
        n: {_COMPLEX: _rule(f"{n} not implemented for complex tensors.")}
        for n in ("maximum", "minimum", "fmax", "fmin")
    },
    "clamp": {_COMPLEX: _CLAMP},
    "relu": {_COMPLEX: _CLAMP},
    "hardtanh": {_COMPLEX: _CLAMP},
    "floor_divide": {_COMPLEX: _kernel("div_floor_cpu")},
    **{
        n: {_COMPLEX: _kernel(f"{n}_cpu")}
        for n in ("remainder", "fmod", "atan2", "hypot", "copysign", "xlogy", "logaddexp2")
    },
    # rounding and real-line functions
    **{n: {_COMPLEX: _rule(f"{n} is not supported for complex inputs", _NI)} for n in ("floor", "ceil", "trunc")},
    "round": {_COMPLEX: _kernel("round_vml_cpu")},
    "frac": {_COMPLEX: _kernel("frac_cpu")},
    "sign": {
        _COMPLEX: _rule(
            "Unlike NumPy, torch.sign is not intended to support complex numbers. Please use "
            "torch.sgn instead.",
            _NI,
        )
    },
    "signbit": {_COMPLEX: _rule("signbit is not implemented for complex tensors.", _NI)},
    **{n: {_COMPLEX: _rule(f"{n} does not support complex inputs.")} for n in ("isposinf", "isneginf")},
    **{n: {_COMPLEX: _rule(f"{n} is not supported for complex tensors.")} for n in ("deg2rad", "rad2deg")},
    **{n: {_COMPLEX: _kernel(f"{n}_vml_cpu")} for n in ("erf", "erfc", "erfinv")},
    "logit": {_COMPLEX: _kernel("logit_cpu")},
    # activations
    "elu": {_COMPLEX: _kernel("elu_cpu")},
    "gelu": {_COMPLEX: _kernel("GeluKernelImpl")},
    "softshrink": {_COMPLEX: _kernel("softshrink_check")},
    **{
        n: {_COMPLEX: _kernel(f"{n}_cpu")}
        for n in (
            "mish", "hardswish", "hardshrink", "softplus", "log_sigmoid", "leaky_relu",
            "threshold",
        )
    },  # fmt: skip
    # reductions, scans, selections
    **{n: {_COMPLEX: _rule(f"{n}(): does not support complex input")} for n in ("max", "min")},
    **{n: {_COMPLEX: _rule(f"{n}(): does not support complex input")} for n in ("argmax", "argmin")},
    **{n: {_COMPLEX: _kernel(f"{n}_cpu")} for n in ("cummax", "cummin")},
    **{n: {_COMPLEX: _rule("nansum on CPU does not support complex inputs")} for n in ("nansum", "nanmean")},
    **{n: {_COMPLEX: _rule(" Sort does not support complex dtypes on CPU")} for n in ("sort", "argsort")},
    "topk": {_COMPLEX: _rule(" topk does not support complex dtypes on CPU")},
    **{n: {_COMPLEX: _kernel(f"{n}_cpu")} for n in ("kthvalue", "median")},
    # special functions
    "lgamma": {_COMPLEX: _kernel("lgamma_vml_cpu")},
    "digamma": {_COMPLEX: _kernel("digamma")},
    "i0": {_COMPLEX: _kernel("i0_vml_cpu")},
    **{f"special_{n}": {_COMPLEX: _kernel(f"{n}_cpu")} for n in ("i0e", "i1", "i1e")},
    "mvlgamma": {
        _COMPLEX: _kernel("arange_cpu"),
        "b": _rule("The input tensor may not be a boolean tensor."),
    },
}  # fmt: skip


GAPS: dict[str, tuple[NoKernel, ...]] = {
    name: tuple(NoKernel(kinds.replace("iu", "i"), error=rule) for kinds, rule in rules.items())
    for name, rules in _TABLE.items()
}


def _extremum_kernel(name: str) -> Callable:
    """amax/amin of everything is max()/min(), whose kernel PyTorch names apart."""
    return lambda arrays, attrs: f"{name}_all" if attrs.get("dim") is None else f"{name}_values_cpu"


GAPS.update({f"a{n}": (NoKernel("c", _extremum_kernel(n)),) for n in ("max", "min")})
GAPS["polygamma"] = (
    NoKernel(
        "c",
        lambda arrays, attrs: (
            ("digamma", "trigamma")[attrs["n"]] if attrs["n"] < 2 else "polygamma"
        ),
    ),
)


def _number_bound(arrays, attrs) -> bool:
    return not hasattr(arrays[1], "dtype")


# clamp_min/clamp_max with a Python number bound run clamp's kernel, with a tensor bound
# maximum's/minimum's
GAPS.update(
    {
        n: (NoKernel("c", error=_CLAMP, when=_number_bound), NoKernel("c", f"{k}_cpu"))
        for n, k in (("clamp_min", "maximum"), ("clamp_max", "minimum"))
    }
)
