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

from collections.abc import Callable
from dataclasses import dataclass

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
