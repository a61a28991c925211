"""einsum and the contractions written with it: tensordot, inner, kron, linalg.multi_dot
and linalg.vecdot."""

from __future__ import annotations

import math
import string

import numpy as np

from ..._core import dtype as dt
from ..._core.meta import by_kernel
from ..._core.op import NoKernel, composite, defop
from ..._core.tensor import Tensor, wrap_dim
from ..._opdb.samples import ErrorInput as E
from ..._opdb.samples import S
from .._batching import front, lshape
from ..creation import ones, tensor
from ._common import _CX, _INT, _eye, _fresh, _scalar_type, _write


# ------------------------------------------------------------------ einsum
def _einsum_plan(equation: str, shapes: list):
    """Rewrite an einsum equation with explicit letters only (no ellipsis, explicit output).

    Returns (input terms, output term, {letter: size}).
    """
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) > len(shapes):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
    if len(terms) < len(shapes):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    for i, c in enumerate(eq):
        if not (c.isalpha() and c.isascii()) and c not in ".,->":
            raise RuntimeError(
                f"einsum(): invalid subscript given at index {i} in the equation string, "
                "subscripts must be in [a-zA-Z]"
            )
    used = set(eq)
    free = [c for c in string.ascii_letters if c not in used]
    n_ell = 0
    for t, s in zip(terms, shapes, strict=False):
        if "..." in t:
            n_ell = max(n_ell, len(s) - (len(t) - 3))
    ell = "".join(free[:n_ell])
    out_terms = []
    for k, (t, s) in enumerate(zip(terms, shapes, strict=False)):
        if "..." in t:
            m = len(s) - (len(t) - 3)
            if m < 0:
                raise RuntimeError(
                    f"einsum(): the number of subscripts in the equation ({len(t) - 3}) is more than "
                    f"the number of dimensions ({len(s)}) for operand {k}"
                )
            t = t.replace("...", ell[n_ell - m :])
        elif len(t) != len(s):
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({len(t)}) does not match the "
                f"number of dimensions ({len(s)}) for operand {k} and no ellipsis was given"
            )
        if "." in t:
            raise RuntimeError(
                f"einsum(): found '.' for operand {k} that is not part of any ellipsis"
            )
        out_terms.append(t)
    sizes: dict = {}
    for k, (t, s) in enumerate(zip(out_terms, shapes, strict=False)):
        seen: dict = {}
        for c, n in zip(t, s, strict=False):
            if c in seen and seen[c] != n:
                raise RuntimeError(
                    f"einsum(): subscript {c} is repeated for operand {k} but the sizes don't match, {n} != {seen[c]}"
                )
            seen[c] = n
            prev = sizes.get(c)
            if prev is None or prev == 1:
                sizes[c] = n
            elif n != 1 and n != prev:
                raise RuntimeError(
                    f"einsum(): subscript {c} has size {n} for operand {k} which does not broadcast "
                    f"with previously seen size {prev}"
                )
    if arrow:
        out = rhs.replace("...", ell)
        for c in out:
            if out.count(c) > 1:
                raise RuntimeError(
                    f"einsum(): output subscript {c} appears more than once in the output"
                )
            if c not in sizes:
                raise RuntimeError(
                    f"einsum(): output subscript {c} does not appear in the equation for any input operand"
                )
    else:
        letters = "".join(out_terms)
        out = ell + "".join(
            sorted(c for c in set(letters) if letters.count(c) == 1 and c not in ell)
        )
    return out_terms, out, sizes


def _einsum_kernel(xp, operands, equation):
    ops = operands
    if ops[0].dtype.kind in "biu" and ops[0].dtype != np.int64 and _sums_alone(equation):
        ops = [o.astype(np.int64) for o in ops]  # PyTorch sums such a subscript with sum()
    out = xp.einsum(equation, *ops, optimize=len(ops) > 2)
    return _fresh(xp, xp.asarray(out), *operands)


def _sums_alone(equation: str) -> bool:
    """Whether a subscript is summed within one operand (in one term, not in the output)."""
    lhs, _, out = equation.partition("->")
    terms = lhs.split(",")
    return any(c not in out and sum(c in t for t in terms) == 1 for c in set(lhs) - {","})


def _einsum_vjp(g, operands, equation):
    """One einsum per operand: contract g with the other operands back to its subscripts.

    Repeated subscripts (diagonals) are re-expanded with an identity factor, subscripts
    summed over in this operand only with a ones factor.
    """
    lhs, out = equation.split("->")
    terms = lhs.split(",")
    sizes = {
        c: n
        for t, x in zip(terms, operands, strict=False)
        for c, n in zip(t, x.shape, strict=False)
    }
    grads = []
    for i, (t, x) in enumerate(zip(terms, operands, strict=False)):
        used = set(equation)
        free = iter(c for c in string.ascii_letters if c not in used)
        others = [(tt, o) for k, (tt, o) in enumerate(zip(terms, operands, strict=False)) if k != i]
        avail = set(out).union(*(set(tt) for tt, _ in others)) if others else set(out)
        target, extra = [], []
        seen = set()
        for c in t:
            if c in seen:
                d = next(free)
                extra.append((c + d, _eye(sizes[c], g)))
                target.append(d)
                continue
            seen.add(c)
            target.append(c)
            if c not in avail:
                extra.append((c, ones(x.shape[t.index(c)], dtype=g.dtype, device=g.device)))
                avail.add(c)
        parts = [out] + [tt for tt, _ in others] + [e for e, _ in extra]
        ops = [g] + [(o if o.dtype == g.dtype else o.to(g.dtype)).conj() for _, o in others]
        ops += [e for _, e in extra]
        eq = ",".join(parts) + "->" + "".join(target)
        grads.append(_einsum(ops, eq))
    return grads


def _einsum_jvp(t, operands, equation):
    total = None
    for i, ti in enumerate(t):
        ops = list(operands)
        ops[i] = ti
        if any(o.dtype != ti.dtype for o in ops):  # a mixed einsum with no contraction
            d = dt.result_type(*((o.dtype, o.dim()) for o in ops))
            ops = [o.to(d) for o in ops]
        r = _einsum(ops, equation)
        total = r if total is None else total + r
    return total


def _einsum_rule(vmap, args, bdims, attrs):
    """A fresh subscript for the batch dim on every batched operand and on the output."""
    ops, bds = args[0], bdims[0]
    eq = attrs["equation"]
    terms, out, _ = _einsum_plan(eq, [lshape(o, b) for o, b in zip(ops, bds, strict=False)])
    used = set(eq).union(*terms, out)
    z = next((c for c in string.ascii_letters if c not in used), None)
    if z is None:
        raise RuntimeError("vmap: einsum() needs a free subscript letter for the batch dim")
    new_ops, new_terms = [], []
    for o, b, t in zip(ops, bds, terms, strict=False):
        new_ops.append(front(o, b))
        new_terms.append(t if b is None else z + t)
    return _einsum(new_ops, ",".join(new_terms) + "->" + z + out), 0


def _einsum_prepare(arrays, attrs=None):
    ops = arrays[0]
    for a in ops[1:]:
        if a.dtype != ops[0].dtype:
            if attrs is not None and not _einsum_contracts(arrays, attrs):
                # no bmm: PyTorch multiplies and sums, which promote
                d = dt.result_type(*((dt.of(o), o.ndim) for o in ops)).np
                return [[o.astype(d, copy=False) for o in ops], *arrays[1:]], None
            if ops[0].dtype.kind == "b":
                raise dt.not_implemented("bmm", ops[0])  # bmm looks at its first operand's
            raise RuntimeError(_scalar_type([ops[0], a]))
    return arrays, None


def _einsum_contracts(arrays, attrs) -> bool:
    """Whether PyTorch's einsum runs bmm: a subscript summed between two nonempty operands."""
    ops, (lhs, arrow, out) = arrays[0], attrs["equation"].replace(" ", "").partition("->")
    terms = lhs.split(",")
    if not arrow:  # the implicit output: the subscripts that appear once
        out = "".join(c for c in set(lhs) - {",", "."} if lhs.count(c) == 1)
    if len(ops) < 2 or any(o.size == 0 for o in ops):
        return False
    return any(c not in out and sum(c in t for t in terms) > 1 for c in set(lhs) - {","})


def _einsum_runs_bmm(inputs, attrs) -> bool:
    """Whether PyTorch's einsum reaches bmm (in autocast's lower list; its products and sums
    are in none): a subscript summed between two operands that both hold it with size > 1.
    (With three or more operands the last step decides, by opt_einsum's path: taken as bmm.)"""
    ops, (lhs, arrow, out) = inputs[0], attrs["equation"].replace(" ", "").partition("->")
    terms = lhs.split(",")
    if not arrow:  # the implicit output: the subscripts that appear once
        out = "".join(c for c in set(lhs) - {",", "."} if lhs.count(c) == 1)
    if len(ops) < 2:
        return False
    live = [_live_subscripts(t, o) for t, o in zip(terms, ops, strict=False)]
    return any(c not in out and sum(c in t for t in live) > 1 for c in set(lhs) - {",", "."})


def _live_subscripts(term: str, o: Tensor) -> set[str]:
    """The subscripts of an operand that it holds with size > 1 (not broadcast)."""
    head, dots, tail = term.partition("...")
    dims = list(zip(head, range(len(head)), strict=False))
    if dots:
        dims += [(c, o.dim() - len(tail) + i) for i, c in enumerate(tail)]
    return {c for c, d in dims if o.shape[d] > 1 and o.stride(d)}


def _einsum_complex32(arrays, attrs) -> bool | str:
    """PyTorch's einsum kernel refusing complex32: sum's where a subscript is summed within
    one operand (or where another holds it broadcast), else bmm's where one is summed
    between two; a product alone, a permutation or a diagonal runs (so does any empty
    operand)."""
    ops, (lhs, _, out) = arrays[0], attrs["equation"].replace(" ", "").partition("->")
    if any(o.size == 0 for o in ops):
        return True
    live = [
        {c for c, n, st in zip(t, o.shape, o.strides, strict=False) if n > 1 and st}
        for t, o in zip(lhs.split(","), ops, strict=False)
    ]
    summed = set(lhs) - set(out) - {","}
    if any(sum(c in t for t in live) == 1 for c in summed):
        return "sum_cpu"
    return "bmm" if any(sum(c in t for t in live) > 1 for c in summed) else True


def _einsum_samples(make):
    return [
        S(("ij,jk->ik", make((2, 3)), make((3, 4)))),
        S(("ij,jk", make((2, 3)), make((3, 4)))),
        S(("bij,bjk->bik", [make((2, 2, 3)), make((2, 3, 4))])),
        S(("...ij,...jk->...ik", make((2, 2, 3)), make((3, 4)))),
        S(("i,i->", make((3,)), make((3,)))),
        S(("i,j->ij", make((3,)), make((2,)))),
        S(("ii->i", make((3, 3)))),
        S(("ii", make((3, 3)))),
        S(("ij->ji", make((2, 3)))),
        S(("ij->", make((2, 3)))),
        S(("iij,jk->ik", make((2, 2, 3)), make((3, 4)))),
        S(("ij,jk,kl->il", make((2, 3)), make((3, 4)), make((4, 2)))),
        S(("i,j,j->i", make((2,)), make((3,)), make((3,)))),
        S(("bi,i->b", make((2, 1)), make((3,)))),
        S(("...i,...i->...", make((2, 3)), make((1, 3)))),
        S(("ij,kj->ik", make((0, 3)), make((2, 3)))),
    ]


def _einsum_error_samples(make):
    return [
        E(
            S(("ij,jk", make((2, 3)), make((4, 4)))),
            RuntimeError,
            "subscript j has size 4 for operand 1 which does not broadcast with previously seen size 3",
        ),
        E(
            S(("ij,jk->ik", make((2, 3)))),
            RuntimeError,
            "fewer operands were provided than specified in the equation",
        ),
        E(
            S(("ijk,jk->ik", make((2, 3)), make((3, 4)))),
            RuntimeError,
            r"the number of subscripts in the equation \(3\) does not match the number of dimensions \(2\) for operand 0",
        ),
        E(S(("i->ii", make((2,)))), RuntimeError, "output subscript i appears more than once"),
        E(S(("i->j", make((2,)))), RuntimeError, "output subscript j does not appear"),
    ]


einsum_p = defop(
    "einsum",
    _einsum_kernel,
    nin=1,
    list_inputs=(0,),
    vjp=_einsum_vjp,
    jvp=_einsum_jvp,
    prepare=_einsum_prepare,
    batch_rule=_einsum_rule,
    node_name="EinsumBackward0",
    no_kernel=NoKernel("b", "bmm", when=_einsum_contracts),
    complex32=_einsum_complex32,
    test=_INT,
    samples=_einsum_samples,
    error_samples=_einsum_error_samples,
    autocast=lambda inputs, attrs: "lower" if _einsum_runs_bmm(inputs, attrs) else None,
    meta=by_kernel,
)
_einsum = einsum_p.fn


def einsum(equation: str, *operands):
    """Einstein summation over the operands (given as varargs or one list)."""
    if not isinstance(equation, str):
        raise RuntimeError("einsum(): the sublist format of einsum is not supported by numtorch")
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    ops = [o if isinstance(o, Tensor) else tensor(o) for o in operands]
    terms, out, sizes = _einsum_plan(equation, [tuple(o.shape) for o in ops])
    for k, (t, o) in enumerate(zip(terms, ops, strict=False)):
        # a subscript an operand broadcasts (size 1) is not its own: PyTorch counts only
        # the operands that hold a subscript with size > 1; one of size 1 everywhere and
        # not in the output it neither sums nor contracts between operands (no bmm: bools
        # multiply), though it sums a single one's (a bool's sum is int64)
        alone = len(ops) == 1
        dims = [
            d
            for d, c in enumerate(t)
            if o.shape[d] == 1 and (sizes[c] != 1 or (c not in out and not alone))
        ]
        if dims:
            ops[k] = o.squeeze(tuple(dims))
            terms[k] = "".join(c for d, c in enumerate(t) if d not in dims)
        ops[k], terms[k] = _diagonals(ops[k], terms[k])
    if len(ops) == 1:
        if len(terms[0]) == len(out):  # nothing summed: PyTorch's result is a view
            return ops[0].permute(tuple(terms[0].index(c) for c in out))
        return _einsum(ops, terms[0] + "->" + out)
    return _contract_in_order(ops, terms, out)


def _diagonals(x: Tensor, t: str) -> tuple:
    """x with each repeated subscript taken as its diagonal, as PyTorch's einsum does first
    (its gradient is 0 off the diagonal, whatever the cotangent holds)."""
    for d2, c in enumerate(t):
        d1 = t.index(c)
        if d1 < d2:
            x = x.diagonal(0, d1, d2).movedim(-1, d1)
            return _diagonals(x, t[:d2] + t[d2 + 1 :])
    return x, t


def _contract_in_order(ops: list, terms: list, out: str) -> Tensor:
    """PyTorch's order (without opt_einsum), which decides where an inf * 0 makes a NaN:
    the operands are contracted left to right, a pair at a time. Before each product, a
    subscript that one of the pair alone holds and nothing later needs (no later operand,
    not the output) is summed in that operand; one the pair shares is summed in the
    product."""
    a, ta = ops[0], terms[0]
    for k in range(1, len(ops)):
        b, tb = ops[k], terms[k]
        needed = set(out).union(*terms[k + 1 :])
        a, ta2 = _sum_alone(a, ta, tb, needed)
        b, tb = _sum_alone(b, tb, ta, needed)
        ta = ta2
        keep = (
            out if k == len(ops) - 1 else "".join(c for c in dict.fromkeys(ta + tb) if c in needed)
        )
        a, ta = _einsum([a, b], f"{ta},{tb}->{keep}"), keep
    return a


def _sum_alone(x: Tensor, t: str, other: str, needed: set) -> tuple:
    """x with the subscripts that neither ``other`` nor anything later needs summed."""
    kept = "".join(c for c in t if c in other or c in needed)
    return (x, t) if kept == t else (_einsum([x], f"{t}->{kept}"), kept)


# ------------------------------------------------------------------ contractions built on einsum
def _tensordot_is_dot(a: Tensor, b: Tensor, args: dict) -> bool:
    """Whether tensordot leaves one element on each side (PyTorch's is not lowered then; its
    mm is, even for an outer product)."""
    dims = args.get("dims", 2)
    if isinstance(dims, int):
        kept_a, kept_b = a.shape[: a.dim() - dims], b.shape[dims:]
    else:
        da, db = ([d] if isinstance(d, int) else list(d) for d in dims)
        kept_a = [n for i, n in enumerate(a.shape) if i not in {d % a.dim() for d in da}]
        kept_b = [n for i, n in enumerate(b.shape) if i not in {d % b.dim() for d in db}]
    return math.prod(kept_a) <= 1 and math.prod(kept_b) <= 1


@composite(
    samples=lambda make: [
        S((make((2, 3, 4)), make((3, 4, 5)))),
        S((make((2, 3)), make((3, 2))), {"dims": 1}),
        S((make((2, 3, 4)), make((4, 2, 3))), {"dims": ([1, 2], [2, 0])}),
        S((make((2, 3)), make((4,))), {"dims": 0}),
    ],
    test=_CX,
    autocast=lambda inputs, args: "keep" if _tensordot_is_dot(*inputs[:2], args) else "lower",
)
def tensordot(a, b, dims=2, out=None):
    """Contract ``dims`` trailing dims of a with leading dims of b (or two lists of dims)."""
    if not isinstance(dims, (tuple, list, Tensor, int)):
        raise RuntimeError(
            "tensordot expects dims to be int or tuple[list[int], list[int]] or list[list[int]] "
            f"containing two lists, but got dims={dims}"
        )
    if a.dtype != b.dtype:
        raise RuntimeError("both inputs should have same dtype")
    if isinstance(dims, int) or (hasattr(dims, "dim") and dims.dim() == 0):
        n = int(dims)
        if n < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={n}")
        da, db = list(range(-n, 0)), list(range(n))  # PyTorch's, named so in its texts
    else:
        da, db = (
            ([dims[0]] if isinstance(dims[0], int) else list(dims[0])),
            ([dims[1]] if isinstance(dims[1], int) else list(dims[1])),
        )
        if len(da) != len(db):
            raise RuntimeError("both dimension lists should have same length")
    given = list(zip(da, db, strict=False))
    da = [wrap_dim(d, a.dim()) for d in da]
    db = [wrap_dim(d, b.dim()) for d in db]
    letters = iter(string.ascii_letters)
    ta = [next(letters) for _ in range(a.dim())]
    tb = [next(letters) for _ in range(b.dim())]
    for i, j, (gi, gj) in zip(da, db, given, strict=False):
        if a.shape[i] != b.shape[j]:
            raise RuntimeError(
                f"contracted dimensions need to match, but first has size {a.shape[i]} in dim "
                f"{gi} and second has size {b.shape[j]} in dim {gj}"
            )
        tb[j] = ta[i]
    rhs = [c for k, c in enumerate(ta) if k not in da] + [
        c for k, c in enumerate(tb) if k not in db
    ]
    if a.dtype in (dt.bool_, dt.complex32) and a.numel() and b.numel():  # (dot or mm)
        raise dt.not_implemented("addmm_impl_cpu_" if rhs else "dot", a)
    res = einsum("".join(ta) + "," + "".join(tb) + "->" + "".join(rhs), a, b)
    return res if out is None else _write(out, res)


def _one_by_one(a: Tensor, b: Tensor) -> bool:
    """Whether inner's tensordot is a single dot product (PyTorch's is not lowered then)."""
    return a.dim() > 0 and b.dim() > 0 and a[..., 0].numel() <= 1 and b[..., 0].numel() <= 1


@composite(
    samples=lambda make: [
        S((make((2, 3)), make((4, 3)))),
        S((make((3,)), make((3,)))),
        S((make(()), make((2, 3)))),
    ],
    test=_CX,
    autocast=lambda inputs, args: "keep" if _one_by_one(*inputs[:2]) else None,
)
def inner(input, other, *, out=None):
    """Sum product over the last dims (a product when either is a scalar)."""
    if input.dim() == 0 or other.dim() == 0:
        res = input * other
    else:
        if input.shape[-1] != other.shape[-1]:
            raise RuntimeError(
                f"inner() the last dimension must match on both input tensors but got shapes "
                f"{list(input.shape)} and {list(other.shape)}"
            )
        res = tensordot(input, other, ([-1], [-1]))
    return res if out is None else _write(out, res)


@composite(
    samples=lambda make: [
        S((make((2, 3)), make((2, 2)))),
        S((make((2,)), make((3,)))),
        S((make((2, 1, 2)), make((2, 2)))),
    ],
    test=_CX,
)
def kron(input, other, *, out=None):
    """Kronecker product."""
    n = max(input.dim(), other.dim())
    a = input.reshape((1,) * (n - input.dim()) + tuple(input.shape))
    b = other.reshape((1,) * (n - other.dim()) + tuple(other.shape))
    if a.dtype != b.dtype:
        d = dt.promote_types(a.dtype, b.dtype)
        a, b = a.to(d), b.to(d)
    la, lb = string.ascii_lowercase[:n], string.ascii_uppercase[:n]
    res = einsum(f"{la},{lb}->" + "".join(x + y for x, y in zip(la, lb, strict=False)), a, b)
    res = res.reshape(tuple(x * y for x, y in zip(a.shape, b.shape, strict=False)))
    return res if out is None else _write(out, res)


@composite(
    api="linalg.multi_dot",
    samples=lambda make: [
        S(([make((2, 3)), make((3, 4)), make((4, 2))],)),
        S(([make((3,)), make((3, 4)), make((4,))],)),
    ],
    error_samples=lambda make: [
        E(S(([make((2, 2))],)), RuntimeError, "multi_dot\\(\\): expected at least 2 tensors")
    ],
    test=_CX,
)
def multi_dot(tensors, *, out=None):
    """Chained matrix product; the first and last may be vectors."""
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    for i, t in enumerate(tensors):  # the ends may be vectors, the rest are matrices
        end = {0: "the first tensor", n - 1: "the last tensor"}.get(i)
        if end is not None and t.dim() not in (1, 2):
            raise RuntimeError(f"multi_dot(): {end} must be 1D or 2D but got {t.dim()}D")
        if end is None and t.dim() != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.dim()}D")
    for i, t in enumerate(tensors[1:], 1):
        if t.dtype != tensors[0].dtype:
            raise RuntimeError(
                "multi_dot(): all tensors must have be the same dtype but tensor 0 is "
                f"{tensors[0].dtype.cpp_name} and tensor {i} {t.dtype.cpp_name}"
            )
    for i in range(n - 1):
        a, b = tensors[i], tensors[i + 1]
        if a.shape[-1] != b.shape[0]:
            raise RuntimeError(
                f"multi_dot(): tensors {i} and {i + 1} with shapes {list(a.shape)} and "
                f"{list(b.shape)} cannot be multiplied"
            )
    mats = list(tensors)
    first, last = mats[0].dim() == 1, mats[-1].dim() == 1
    if first:
        mats[0] = mats[0].unsqueeze(0)
    if last:
        mats[-1] = mats[-1].unsqueeze(-1)
    res = _chain(mats, _chain_order(mats), 0, len(mats) - 1)
    if first and last:
        res = res.reshape(())
    elif first or last:
        res = res.squeeze(0 if first else -1)
    return res if out is None else _write(out, res)


def _chain_order(mats: list) -> list:
    """PyTorch's parenthesization, which decides where an inf * 0 makes a NaN: split[i][j]
    is where the product of mats[i..j] splits, the first of the cheapest (three matrices:
    (AB)C unless A(BC) is strictly cheaper)."""
    n = len(mats)
    p = [m.shape[0] for m in mats] + [mats[-1].shape[1]]
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    if n == 3:
        a, b, c, d = p
        split[0][2] = 0 if (a * c) * (b + d) > (b * d) * (a + c) else 1
        split[1][2], split[0][1] = 1, 0
        return split
    for span in range(1, n):
        for i in range(n - span):
            j = i + span
            cost[i][j] = math.inf
            for k in range(i, j):
                q = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1]
                if q < cost[i][j]:
                    cost[i][j], split[i][j] = q, k
    return split


def _chain(mats: list, split: list, i: int, j: int) -> Tensor:
    if i == j:
        return mats[i]
    k = split[i][j]
    return _chain(mats, split, i, k) @ _chain(mats, split, k + 1, j)


@composite(
    api="linalg.vecdot",
    samples=lambda make: [
        S((make((2, 3)), make((2, 3)))),
        S((make((2, 3)), make((3,)))),
        S((make((3, 2)), make((3, 2))), {"dim": 0}),
    ],
    test=_CX,
    autocast="lower",
)
def vecdot(x, y, *, dim: int = -1, out=None):
    """Dot product of vectors along ``dim`` (with broadcasting)."""
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        raise RuntimeError(
            "linalg.vecdot: Expected a floating point or complex tensor as input. Got "
            f"{x.dtype.scalar_name}"
        )
    if x.dtype != y.dtype:
        raise RuntimeError(
            "linalg.vecdot: Expected x and y to have the same dtype, but found x of type "
            f"{x.dtype.scalar_name} and y of type {y.dtype.scalar_name} instead"
        )
    res = (x.conj() * y).sum(dim)
    return res if out is None else _write(out, res)
