"""The add-and-multiply family, ``beta * input + alpha * product``: addmm, addmv,
baddbmm, addbmm and addr (with its in-place form)."""

from __future__ import annotations

import numpy as np

from ..._core import dtype as dt
from ..._core.dispatch import kernel_call
from ..._core.inplace import run_inplace
from ..._core.layout import contiguous, preserve
from ..._core.meta import by_kernel
from ..._core.methods import tensor_methods
from ..._core.op import NoKernel, defop, named, on_arrays
from ..._core.policy import COMMON, InplacePolicy
from ..._opdb.samples import S
from .._batching import rule_generator
from .._families import cj, promote
from ._common import _CX, _check_dtypes, _same_dtype, _tname
from .products import (
    _addmv_message,
    _bmm,
    _bmm_check,
    _mm,
    _mm_check,
    _mv_check,
    _mv_kernel,
    bmm,
    mm,
    mm_p,
    mv,
    outer,
)


def _baddbmm_message(arr):
    i, b1, b2 = (dt.of(a).cpp_name for a in arr)
    return f"Input dtypes must be the same, got: input {i}, batch1: {b1}, batch2: {b2}"


def _addmm_message(arr):
    """addmm's and addbmm's check: self against mat2 first, then mat1 against mat2."""
    i, b1, b2 = arr
    if i.dtype != b2.dtype:
        return f"self and mat2 must have the same dtype, but got {_tname(i)} and {_tname(b2)}"
    return f"mat1 and mat2 must have the same dtype, but got {_tname(b1)} and {_tname(b2)}"


def _named(fn, names):
    """``fn`` called positionally, advertised under the parameter ``names`` (formulas bind by name)."""
    return named(lambda **kw: fn(*(kw[n] for n in names)), names)


def _int_scalars(floating: bool, *scalars):
    """The scalars as an integral result's kernel reads them: truncated to integers (PyTorch
    casts alpha/beta to the result's type; a float scalar must not promote the result)."""
    if floating:
        return scalars
    return tuple(s if isinstance(s, int) else int(s) for s in scalars)


def _scaled(grad, alpha):
    """A factor's gradient times conj(alpha) (no op for the default alpha of 1)."""
    return grad if type(alpha) is int and alpha == 1 else grad * cj(alpha)


def _addprod_rule(op, prod_fn):
    """beta * input + alpha * product, re-expressed with the product op and elementwise ops
    at this vmap level (the input broadcasts against the batched product)."""

    def compose(input, m1, m2, beta=1, alpha=1):
        p = prod_fn(m1, m2)
        beta, alpha = _int_scalars(p.dtype.is_floating_point or p.dtype.is_complex, beta, alpha)
        if alpha != 1:
            p = p * alpha
        if beta == 0:
            return p
        return p + (input if beta == 1 else input * beta)

    def rule(vmap, args, bdims, attrs):
        _check_dtypes(op, args, bdims, attrs)
        return vmap.call(compose, args, bdims, attrs)

    return rule


def _addprod(
    name,
    names,
    prod,
    prod_fn,
    prod_vjp_a,
    prod_vjp_b,
    prod_jvp,
    samples,
    message,
    no_bool=None,
    check=None,
    prepare=None,
    inplace=True,
    layout=contiguous,
    inplace_policy=COMMON,
    autocast=None,
    array_vjps=(None, None),
):
    """``beta * input + alpha * prod(m1, m2)``; beta == 0 ignores input (no nan propagation).

    ``names`` are PyTorch's names of the two factors (mat1/mat2, mat/vec, batch1/batch2);
    ``prod_fn`` is the product written with numtorch ops (for the batch rule); ``no_bool`` is
    the name of PyTorch's kernel, which has no bool version; ``check`` the factors' shapes;
    ``layout`` the result's (``numtorch._core.layout``); ``autocast`` the op's policy;
    ``array_vjps`` the factors' vjps on arrays (``op.on_arrays``), or None.
    """
    m1n, m2n = names

    def kernel(xp, input, m1, m2, beta=1, alpha=1):
        p = prod(xp, m1, m2)
        if type(beta) is int and type(alpha) is int and beta == alpha == 1:  # (the common call)
            return p + input
        beta, alpha = _int_scalars(p.dtype.kind in "fc", beta, alpha)
        if alpha != 1:
            p = p * alpha
        if beta == 0:
            return xp.broadcast_to(p, np.broadcast_shapes(p.shape, input.shape)).copy()
        return p + (input if beta == 1 else input * beta)

    import inspect

    P = inspect.Parameter
    kernel.__signature__ = inspect.Signature(
        [
            P("xp", P.POSITIONAL_OR_KEYWORD),
            P("input", P.POSITIONAL_OR_KEYWORD),
            P(m1n, P.POSITIONAL_OR_KEYWORD),
            P(m2n, P.POSITIONAL_OR_KEYWORD),
            P("beta", P.KEYWORD_ONLY, default=1),
            P("alpha", P.KEYWORD_ONLY, default=1),
        ]
    )

    def jvp(ti, t1, t2, m1, m2, beta, alpha):
        return ti * beta + prod_jvp(m1, m2, t1, t2) * alpha

    no_kernel = ()
    if no_bool is not None:
        no_kernel = NoKernel(
            "b",
            no_bool,
            when=lambda arrays, attrs: arrays[1].size and arrays[2].size,
            first=lambda arrays, attrs: check(arrays[1].shape, arrays[2].shape),
        )

    vjp_a = _named(lambda g, m2, alpha: _scaled(prod_vjp_a(g, m2), alpha), ("g", m2n, "alpha"))
    vjp_b = _named(lambda g, m1, alpha: _scaled(prod_vjp_b(g, m1), alpha), ("g", m1n, "alpha"))
    for formula, arrays in zip((vjp_a, vjp_b), array_vjps):
        if arrays is not None:
            on_arrays(formula, arrays)
    return defop(
        name,
        kernel,
        vjp=(lambda g, beta: g * cj(beta) if beta != 1 else g, vjp_a, vjp_b),
        jvp=_named(jvp, ("tinput", "t" + m1n, "t" + m2n, m1n, m2n, "beta", "alpha")),
        prepare=prepare or _same_dtype(message),
        batch_rule=rule_generator(_addprod_rule)(prod_fn),
        test=_CX,
        no_kernel=no_kernel,
        samples=samples,
        out=True,
        methods=True,
        inplace=inplace,
        layout=layout,
        inplace_policy=inplace_policy,
        complex32=no_kernel.kernel_for if no_kernel else False,  # (addr: its own name)
        autocast=autocast,
        meta=by_kernel,
    )


# PyTorch's in-place products compute the product apart from self (an operand may overlap
# it) into a new result, whose shape error names both sizes
_FRESH = InplacePolicy(operand_overlap_ok=True, fresh_result=True)


def _addmm_samples(make):
    return [
        S((make((2, 4)), make((2, 3)), make((3, 4)))),
        S((make((4,)), make((2, 3)), make((3, 4))), {"beta": 0.5, "alpha": 2.0}),
        S((make(()), make((2, 3)), make((3, 4))), {"beta": 0}),
    ]


_addmm_dtypes = _same_dtype(_addmm_message)


def _addmm_prepare(arrays, attrs=None):
    """addmm's factors are matrices (checked before their dtypes, as PyTorch's)."""
    i, m1, m2 = arrays
    if m1.ndim == 2 and m2.ndim == 2:
        d = m2.dtype
        if m1.dtype == d and getattr(i, "dtype", None) == d:  # (the common call)
            return arrays, None
    for name, a in zip(("mat1", "mat2"), arrays[1:]):
        if a.ndim != 2:
            raise RuntimeError(f"{name} must be a matrix, got {a.ndim}-D tensor")
    return _addmm_dtypes(arrays, attrs)


def _addmm_vjp_mat1_arrays(g, mat2, alpha):
    """The gradient of mat1, g mat2^T, on arrays (real, alpha 1: no scaling)."""
    if type(alpha) is not int or alpha != 1 or g.ndim != 2 or g.dtype != mat2.dtype:
        return NotImplemented
    return kernel_call(mm_p, g, mat2.T)


def _addmm_vjp_mat2_arrays(g, mat1, alpha):
    """The gradient of mat2, mat1^T g, on arrays (real, alpha 1: no scaling)."""
    if type(alpha) is not int or alpha != 1 or g.ndim != 2 or g.dtype != mat1.dtype:
        return NotImplemented
    return kernel_call(mm_p, mat1.T, g)


addmm_p = _addprod(
    "addmm",
    ("mat1", "mat2"),
    _mm,
    mm,
    lambda g, m2: mm(g, m2.mH),
    lambda g, m1: mm(m1.mH, g),
    lambda m1, m2, t1, t2: mm(t1, m2) + mm(m1, t2),
    _addmm_samples,
    _addmm_message,
    "addmm_impl_cpu_",
    _mm_check,
    prepare=_addmm_prepare,
    inplace_policy=_FRESH,
    autocast="lower",
    array_vjps=(_addmm_vjp_mat1_arrays, _addmm_vjp_mat2_arrays),
)
addmm = addmm_p.fn


def _addmv_samples(make):
    return [
        S((make((2,)), make((2, 3)), make((3,)))),
        S((make(()), make((2, 3)), make((3,))), {"beta": 2.0, "alpha": 0.5}),
    ]


addmv_p = _addprod(
    "addmv",
    ("mat", "vec"),
    _mv_kernel,
    mv,
    lambda g, m2: g.unsqueeze(-1) * m2.conj(),
    lambda g, m1: mv(m1.mH, g),
    lambda m1, m2, t1, t2: mv(t1, m2) + mv(m1, t2),
    _addmv_samples,
    _addmv_message,
    "addmv_impl_cpu",
    _mv_check,
    inplace_policy=_FRESH,
)


def _baddbmm_samples(make):
    return [
        S((make((2, 2, 4)), make((2, 2, 3)), make((2, 3, 4)))),
        S((make((2, 4)), make((2, 2, 3)), make((2, 3, 4))), {"beta": 0.5, "alpha": 2.0}),
    ]


baddbmm_p = _addprod(
    "baddbmm",
    ("batch1", "batch2"),
    _bmm,
    bmm,
    lambda g, m2: bmm(g, m2.mH),
    lambda g, m1: bmm(m1.mH, g),
    lambda m1, m2, t1, t2: bmm(t1, m2) + bmm(m1, t2),
    _baddbmm_samples,
    _baddbmm_message,
    "baddbmm",
    _bmm_check,
    inplace_policy=_FRESH,
    autocast="lower",
)


def _sum_bmm(xp, a, b):
    # PyTorch's addbmm has its own checks of the batches (not bmm's)
    if a.ndim == 3 and b.ndim == 3:
        if a.shape[0] != b.shape[0]:
            raise RuntimeError(
                f"batch1 and batch2 must have same number of batches, got {a.shape[0]} and "
                f"{b.shape[0]}"
            )
        if a.shape[2] != b.shape[1]:
            raise RuntimeError(
                f"Incompatible matrix sizes for bmm ({a.shape[1]}x{a.shape[2]} and "
                f"{b.shape[1]}x{b.shape[2]})"
            )
    return _bmm(xp, a, b).sum(0)


def _addbmm_samples(make):
    return [
        S((make((2, 4)), make((3, 2, 3)), make((3, 3, 4)))),
        S((make((4,)), make((3, 2, 3)), make((3, 3, 4))), {"beta": 0.5, "alpha": 2.0}),
    ]


addbmm_p = _addprod(
    "addbmm",
    ("batch1", "batch2"),
    _sum_bmm,
    lambda m1, m2: bmm(m1, m2).sum(0),
    lambda g, m2: g @ m2.mH,
    lambda g, m1: m1.mH @ g,
    lambda m1, m2, t1, t2: (bmm(t1, m2) + bmm(m1, t2)).sum(0),
    _addbmm_samples,
    _addmm_message,
    "addmm_impl_cpu_",
    _bmm_check,
    inplace_policy=InplacePolicy(operand_overlap_ok=True),
    autocast="lower",
)


def _addr_outer(xp, vec1, vec2):
    for n, v in (("vec1", vec1), ("vec2", vec2)):
        if v.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {n}, but got {v.ndim}-D")
    return xp.multiply.outer(vec1, vec2)


def _addr_prepare(arrays, attrs=None):
    """PyTorch's type promotion over the three operands; the input must broadcast to the
    outer product's shape without growing it (expand's rule)."""
    input, vec1, vec2 = arrays
    shape = (vec1.shape[0] if vec1.ndim else 1, vec2.shape[0] if vec2.ndim else 1)
    if vec1.ndim == 1 and vec2.ndim == 1:
        _check_expand(tuple(input.shape), shape, dt.from_np(input.dtype).scalar_name)
    arrays, out_dtype = promote(arrays, attrs)
    kind = arrays[0].dtype.kind
    for n in ("beta", "alpha"):
        v = (attrs or {}).get(n)
        if isinstance(v, bool) and kind != "b":
            raise RuntimeError(f"Boolean {n} only supported for Boolean results.")
        if kind in "biu" and isinstance(v, float):
            raise RuntimeError(
                f"For integral input tensors, argument {n} must not be a floating point number."
            )
    return arrays, out_dtype


def _check_expand(have: tuple, want: tuple, name: str) -> None:
    if len(have) > len(want):
        raise RuntimeError(
            f"expand(torch.{name}Tensor{{{list(have)}}}, size={list(want)}): the number of sizes "
            f"provided ({len(want)}) must be greater or equal to the number of dimensions in the "
            f"tensor ({len(have)})"
        )
    for i, (h, w) in enumerate(zip(have[::-1], want[::-1])):
        if h != 1 and h != w:
            d = len(want) - 1 - i
            raise RuntimeError(
                f"The expanded size of the tensor ({w}) must match the existing size ({h}) at "
                f"non-singleton dimension {d}.  Target sizes: {list(want)}.  Tensor sizes: "
                f"{list(have)}"
            )


def _addr_samples(make):
    return [
        S((make((2, 3)), make((2,)), make((3,)))),
        S((make((3,)), make((2,)), make((3,))), {"beta": 0.5, "alpha": 2.0}),
        S((make(()), make((2,)), make((3,))), {"beta": 0}),
        S((make((2, 1)), make((2,)), make((0,)))),
    ]


addr_p = _addprod(
    "addr",
    ("vec1", "vec2"),
    _addr_outer,
    outer,
    lambda g, v2: mv(g, v2.conj()),
    lambda g, v1: mv(g.mT, v1.conj()),
    lambda v1, v2, t1, t2: outer(t1, v2) + outer(v1, t2),
    _addr_samples,
    None,
    prepare=_addr_prepare,
    inplace=False,
    layout=preserve,  # a TensorIterator over input and the outer product in PyTorch
)


def _addr_(self, vec1, vec2, *, beta=1, alpha=1):
    """In-place addr: self must have the outer product's shape (it does not broadcast)."""
    if vec1.dim() == 1 and vec2.dim() == 1 and tuple(self.shape) != (len(vec1), len(vec2)):
        raise RuntimeError(
            f"size mismatch, input: {list(self.shape)}, v1: {list(vec1.shape)}, "
            f"v2: {list(vec2.shape)}"
        )
    return run_inplace(addr_p, self, (vec1, vec2), {"beta": beta, "alpha": alpha})


_addr_.inplace_of = addr_p
tensor_methods({"addr_": _addr_})
