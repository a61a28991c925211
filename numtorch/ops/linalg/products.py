"""The matrix-product family: matmul, mm, bmm, mv, dot, vdot and outer, with the batch
rule they share (one broadcasting matmul over the batch)."""

from __future__ import annotations

import math

import numpy as np

from ..._core.messages import broadcast_mismatch
from ..._core.meta import by_kernel, mixed_devices
from ..._core.op import NoKernel, bilinear_jvp, defop, on_arrays
from ..._opdb.samples import ErrorInput as E
from ..._opdb.samples import S
from .._batching import front, lrank, lshape, pad_to, rule_generator
from .._families import cj, promote
from .._outer import outer_product
from ._common import _INT, _check_dtypes, _m1m2, _same_dtype, _scalar_type, _tname


def _matmul_message(arr):
    a, b = arr
    if a.ndim == 1 and b.ndim == 1:
        return (
            f"dot : expected both vectors to have same dtype, but found {_tname(a)} and {_tname(b)}"
        )
    if a.ndim == 2 and b.ndim == 1:
        return f"addmv input tensors must have the same dtype, but got {_tname(b)}, {_tname(a)}, and {_tname(b)}"
    if b.ndim >= 3:
        return _scalar_type(arr)
    return _m1m2(arr)


def _one_gemm(a, a_batched: bool, b):
    """A batch of matrices times one matrix (either side) as a single 2-D product, instead
    of one small product per batch element (a batch of vectors times a matrix would
    otherwise read the matrix once per element)."""
    if a_batched:  # (B, m, k) @ (k, n)
        n, (bs, m, k) = b.shape[-1], a.shape
        return matmul(a.reshape(bs * m, k), b).reshape(bs, m, n)
    bs, k, n = b.shape  # (m, k) @ (B, k, n)
    m = a.shape[0]
    return matmul(a, b.movedim(0, 1).reshape(k, bs * n)).reshape(m, bs, n).movedim(1, 0)


def _matmul_batched(a, ba, b, bb, legacy: bool = False, ranks: tuple | None = None):
    """matmul of two inner values (either may be unbatched): (result, its batch dim).

    A matrix times a batch of vectors is one product with the vectors as columns (the
    batch stays the result's last dim, as torch.func's rule lays it out), or, under
    PyTorch's first vmap (``legacy``: autograd.functional, is_grads_batched), one product
    with them as rows, batch first as that vmap's rule computes it; a batch of vectors
    times a matrix is one product with them as rows. Otherwise a vector becomes a one-row (one-column) matrix so the batch dim
    never reads as a matrix dim, and an unbatched operand broadcasts against the batch
    without being expanded. ``ranks``: the operands' logical ranks, where known.
    """
    ra, rb = ranks or (lrank(a, ba), lrank(b, bb))
    if ra == 2 and rb == 1 and ba is None:
        if legacy:
            return matmul(front(b, bb), a.mT), 0
        return matmul(a, b if bb == 1 else front(b, bb).mT), 1
    if ra == 1 and rb == 2 and bb is None:
        return matmul(front(a, ba), b), 0
    a, b = front(a, ba), front(b, bb)
    if ra == 1:
        a = a.unsqueeze(-2)
    if rb == 1:
        b = b.unsqueeze(-1)
    rank = max(ra, rb, 2)
    if rank == 2 and (ba is None) != (bb is None):
        out = _one_gemm(a, ba is not None, b)
    else:
        if ba is not None:
            a = pad_to(a, rank)
        if bb is not None:
            b = pad_to(b, rank)
        out = matmul(a, b)
    if ra == 1:
        out = out.squeeze(-2)
    if rb == 1:
        out = out.squeeze(-1)
    return out, 0


def _product(op, check, conj_first: bool = False):
    """matmul, mm, bmm, mv, dot: check logical shapes, then one broadcasting matmul (vdot:
    of the first operand's conjugate)."""

    def rule(vmap, args, bdims, attrs):
        _check_dtypes(op, args, bdims, attrs)
        (a, b), (ba, bb) = args, bdims
        sa, sb = lshape(a, ba), lshape(b, bb)
        check(sa, sb)
        ranks = (len(sa), len(sb))
        return _matmul_batched(a.conj() if conj_first else a, ba, b, bb, vmap.legacy, ranks)

    return rule


product = rule_generator(_product)


# ------------------------------------------------------------------ matmul family
def _column_major(m) -> bool:
    """A transposed matrix (a weight seen through ``.mT``): as PyTorch's mm backward, its
    gradient is computed transposed, so that it comes out in the factor's own layout."""
    return m.dim() == 2 and m.stride(0) == 1 and m.stride(1) != 1


def _matmul_vjp_a(g, input, other):
    na, nb = input.dim(), other.dim()
    if na == 1 and nb == 1:
        return g * cj(other)
    if nb == 1:
        return g.unsqueeze(-1) * cj(other)
    if na == 1:  # (PyTorch's mv backward, as in _matmul_vjp_b)
        return cj(other) @ g if nb == 2 else (cj(other) @ g.unsqueeze(-1)).squeeze(-1)
    if _column_major(input):
        return (cj(other) @ g.mT).mT
    return g @ other.mH


def _matmul_vjp_b(g, input, other):
    na, nb = input.dim(), other.dim()
    if na == 1 and nb == 1:
        return g * cj(input)
    if na == 1:
        return cj(input).unsqueeze(-1) * g.unsqueeze(-2)
    if nb == 1:  # (PyTorch's mv backward, the matrix's adjoint times g, as g^T A)
        return g @ cj(input) if na == 2 else (input.mH @ g.unsqueeze(-1)).squeeze(-1)
    if _column_major(other):
        return (g.mT @ cj(input)).mT
    return input.mH @ g


def _column_major_array(m) -> bool:
    """``_column_major`` of a non-empty matrix's array."""
    return m.ndim == 2 and m.strides[0] == m.itemsize != m.strides[1]


def _mm_arrays(a, b):
    """``kernel_call(matmul_p, a, b)`` for two non-empty matrices of one float dtype whose
    shapes agree: matmul's kernel (an outer product where the inner dim is 1) and its
    layout rule (contiguous), without the checks such operands pass."""
    out = outer_product(np, a, b) if a.shape[1] == 1 else np.matmul(a, b)
    return out if out.flags.c_contiguous else out.copy(order="C")


def _matmul_vjp_a_arrays(g, input, other):
    """``_matmul_vjp_a`` on arrays, for two matrices of one dtype not laid out by column."""
    if g.ndim != 2 or input.ndim != 2 or other.ndim != 2 or other.dtype != g.dtype:
        return NotImplemented
    if _column_major_array(input) or not input.size:
        return NotImplemented
    return _mm_arrays(g, other.T)


def _matmul_vjp_b_arrays(g, input, other):
    """``_matmul_vjp_b`` on arrays, for two matrices of one dtype not laid out by column."""
    if g.ndim != 2 or input.ndim != 2 or other.ndim != 2 or input.dtype != g.dtype:
        return NotImplemented
    if _column_major_array(other) or not other.size:
        return NotImplemented
    return _mm_arrays(input.T, g)


on_arrays(_matmul_vjp_a, _matmul_vjp_a_arrays)
on_arrays(_matmul_vjp_b, _matmul_vjp_b_arrays)


def _matmul_samples(make):
    for sa, sb in [
        ((3,), (3,)),
        ((2, 3), (3,)),
        ((3,), (3, 4)),
        ((2, 3), (3, 4)),
        ((1, 3), (3, 4)),  # (a batch of one: its weight gradient is an outer product)
        ((5, 2, 3), (3, 4)),
        ((2, 3), (5, 3, 4)),
        ((5, 2, 3), (5, 3, 4)),
        ((2, 1, 2, 3), (5, 3, 2)),
        ((3,), (5, 3, 4)),
        ((5, 2, 3), (3,)),
        ((0, 3), (3, 2)),
    ]:
        yield S((make(sa), make(sb)))


def _mixed(make, sa, sb):
    return S((make(sa, dtype=np.float32), make(sb, dtype=np.float64)))


def _matmul_check(sa: tuple, sb: tuple) -> None:
    na, nb = len(sa), len(sb)
    if na == 0 or nb == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {na}D and {nb}D"
        )
    ka, kb = sa[-1], sb[0] if nb == 1 else sb[-2]
    if ka != kb:
        if na == 1 and nb == 1:
            raise RuntimeError(
                f"inconsistent tensor size, expected tensor [{ka}] and src [{kb}] to have the same "
                f"number of elements, but got {ka} and {kb} elements respectively"
            )
        if na <= 2 and nb <= 2:
            m1 = "x".join(map(str, sa if na == 2 else (1, ka)))
            raise RuntimeError(
                f"mat1 and mat2 shapes cannot be multiplied ({m1} and {sb[0]}x{sb[-1]})"
            )
        if nb <= 2:  # PyTorch folds input's batch into its rows
            rows = math.prod(sa[:-1])
            if nb == 1:
                raise RuntimeError(
                    f"size mismatch, got input ({rows}), mat ({rows}x{ka}), vec ({kb})"
                )
            raise RuntimeError(
                f"mat1 and mat2 shapes cannot be multiplied ({rows}x{ka} and {sb[0]}x{sb[1]})"
            )
    if nb >= 3:  # a batched product: the batch dims broadcast
        batch = (sa[:-2], sb[:-2])
        text = broadcast_mismatch(batch)
        if text is not None:
            raise RuntimeError(text)
        if ka != kb:
            n = math.prod(np.broadcast_shapes(*batch))
            raise RuntimeError(
                f"Expected size for first two dimensions of batch2 tensor to be: [{n}, {ka}] "
                f"but got: [{n}, {kb}]."
            )


def _matmul(xp, input, other):
    _matmul_check(input.shape, other.shape)
    if input.ndim >= 2 and other.ndim >= 2 and input.shape[-1] == 1:
        # Outer products (per-sample weight gradients): BLAS is slow at a contraction of 1.
        return outer_product(xp, input, other)
    return xp.matmul(input, other)


def matmul_arrays(a, b):
    """matmul's kernel on two CPU arrays (``binary_method``'s short path for ``@``): two
    matrices whose shapes agree go straight to NumPy's matmul, anything else to the
    kernel (the same values and errors)."""
    if a.ndim == 2 and b.ndim == 2 and a.shape[1] == b.shape[0] and a.shape[1] != 1:
        return np.matmul(a, b)
    return _matmul(np, a, b)


_MATMUL_NODES = {(1, 1): "DotBackward0", (2, 1): "MvBackward0", (2, 2): "MmBackward0"}


def _product_kernel(arrays, attrs) -> str:
    """The kernel PyTorch's matmul runs for these ranks (bool has none of them)."""
    na, nb = arrays[0].ndim, arrays[1].ndim
    if nb == 1:
        return "dot" if na == 1 else "addmv_impl_cpu"
    return "addmm_impl_cpu_" if nb == 2 else "bmm"


def _nonempty_factors(arrays, attrs) -> bool:
    """An empty product (no rows, columns, batch or inner dim) runs no kernel."""
    return arrays[0].size > 0 and arrays[1].size > 0


def _no_bool_product(kernel, check, inputs=None) -> NoKernel:
    """No bool kernel, after the shape ``check`` of the two factors (for the promoted dtype,
    or that of the factors at ``inputs``)."""
    return NoKernel(
        "b",
        kernel,
        inputs=inputs,
        when=_nonempty_factors,
        first=lambda arrays, attrs: check(arrays[0].shape, arrays[1].shape),
    )


def _matmul_kernel_for(arrays, attrs):
    """The kernel PyTorch's matmul runs (refusing complex32); True for an empty product."""
    _matmul_check(arrays[0].shape, arrays[1].shape)
    if arrays[0].ndim == arrays[1].ndim == 1 or _nonempty_factors(arrays, attrs):
        return _product_kernel(arrays, attrs)
    return True


matmul_p = defop(
    "matmul",
    _matmul,
    vjp=(_matmul_vjp_a, _matmul_vjp_b),
    jvp=bilinear_jvp(lambda a, b: a @ b, "input", "other"),
    prepare=_same_dtype(_matmul_message),
    no_kernel=NoKernel(
        "b",
        _product_kernel,
        when=lambda arrays, attrs: (
            arrays[0].ndim == arrays[1].ndim == 1 or _nonempty_factors(arrays, attrs)
        ),
        first=lambda arrays, attrs: _matmul_check(arrays[0].shape, arrays[1].shape),
    ),
    batch_rule=product(_matmul_check),
    complex32=_matmul_kernel_for,
    samples=_matmul_samples,
    out=True,
    test=_INT,
    # PyTorch's matmul is mm, mv or dot by rank (other ranks: a graph of views around them)
    node_name=lambda input, other: _MATMUL_NODES.get((len(input), len(other)), "MatmulBackward0"),
    error_samples=lambda make: [
        E(
            _mixed(make, (2, 3), (3, 4)),
            RuntimeError,
            r"expected m1 and m2 to have the same dtype, but got: float != double",
        ),
        E(
            _mixed(make, (3,), (3,)),
            RuntimeError,
            "dot : expected both vectors to have same dtype",
        ),
        E(
            _mixed(make, (2, 2, 3), (2, 3, 4)),
            RuntimeError,
            "expected scalar type Float but found Double",
        ),
        E(
            S((make((2, 3)), make((4, 4)))),
            RuntimeError,
            r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x4\)",
        ),
        E(
            S((make(()), make((4,)))),
            RuntimeError,
            "both arguments to matmul need to be at least 1D",
        ),
    ],
    methods=True,
    autocast="lower",
    meta=mixed_devices(by_kernel),
)
matmul = matmul_p.fn


def _mm_check(sa: tuple, sb: tuple) -> None:
    if len(sa) != 2:
        raise RuntimeError("self must be a matrix")
    if len(sb) != 2:
        raise RuntimeError("mat2 must be a matrix")
    if sa[1] != sb[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({sa[0]}x{sa[1]} and {sb[0]}x{sb[1]})"
        )


def _mm(xp, input, mat2):
    _mm_check(input.shape, mat2.shape)
    return xp.matmul(input, mat2)


def _bmm_check(sa: tuple, sb: tuple) -> None:
    if len(sa) != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if len(sb) != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if tuple(sb[:2]) != (sa[0], sa[2]):
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: "
            f"[{sa[0]}, {sa[2]}] but got: [{sb[0]}, {sb[1]}]."
        )


def _bmm(xp, input, mat2):
    _bmm_check(input.shape, mat2.shape)
    return xp.matmul(input, mat2)


mm_p = defop(
    "mm",
    _mm,
    vjp=(lambda g, mat2: mm(g, mat2.mH), lambda g, input: mm(input.mH, g)),
    jvp=bilinear_jvp(lambda a, b: mm(a, b), "input", "mat2"),
    prepare=_same_dtype(_m1m2),
    no_kernel=_no_bool_product("addmm_impl_cpu_", _mm_check),
    batch_rule=product(_mm_check),
    out=True,
    test=_INT,
    samples=lambda make: [
        S((make((2, 3)), make((3, 4)))),
        S((make((0, 3)), make((3, 2)))),
        S((make((1, 1)), make((1, 3)))),
    ],
    error_samples=lambda make: [
        E(
            S((make((2, 3)), make((4, 4)))),
            RuntimeError,
            r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x4\)",
        ),
        E(S((make((3,)), make((3, 3)))), RuntimeError, "self must be a matrix"),
        E(
            _mixed(make, (2, 3), (3, 4)),
            RuntimeError,
            "expected m1 and m2 to have the same dtype",
        ),
    ],
    methods=True,
    complex32=_no_bool_product("addmm_impl_cpu_", _mm_check).kernel_for,
    autocast="lower",
    meta=mixed_devices(by_kernel),
)
mm = mm_p.fn
bmm_p = defop(
    "bmm",
    _bmm,
    vjp=(lambda g, mat2: bmm(g, mat2.mH), lambda g, input: bmm(input.mH, g)),
    jvp=bilinear_jvp(lambda a, b: bmm(a, b), "input", "mat2"),
    prepare=_same_dtype(_scalar_type),
    no_kernel=_no_bool_product("bmm", _bmm_check, inputs=(0,)),  # bmm looks at self's dtype
    batch_rule=product(_bmm_check),
    out=True,
    test=_INT,
    samples=lambda make: [
        S((make((2, 2, 3)), make((2, 3, 4)))),
        S((make((0, 2, 3)), make((0, 3, 1)))),
    ],
    error_samples=lambda make: [
        E(S((make((2, 3)), make((3, 4)))), RuntimeError, "batch1 must be a 3D tensor"),
        E(
            S((make((2, 2, 3)), make((2, 4, 4)))),
            RuntimeError,
            r"Expected size for first two dimensions of batch2 tensor to be: \[2, 3\] but got: \[2, 4\].",
        ),
    ],
    methods=True,
    complex32=_no_bool_product("bmm", _bmm_check).kernel_for,
    autocast="lower",
    meta=mixed_devices(by_kernel, on=1),
)
bmm = bmm_p.fn


def _mv_check(sa: tuple, sb: tuple) -> None:
    if len(sa) != 2 or len(sb) != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {len(sa)}, {len(sb)}")
    if sa[1] != sb[0]:
        raise RuntimeError(
            f"size mismatch, got input ({sa[0]}), mat ({sa[0]}x{sa[1]}), vec ({sb[0]})"
        )


def _mv_kernel(xp, input, vec):
    _mv_check(input.shape, vec.shape)
    return xp.matmul(input, vec)


def _addmv_message(arr):
    """addmv's (self, mat, vec) in order; mv runs as addmv into a result of vec's dtype."""
    a, b, c = arr if len(arr) == 3 else (arr[1], arr[0], arr[1])
    return f"addmv input tensors must have the same dtype, but got {_tname(a)}, {_tname(b)}, and {_tname(c)}"


mv_p = defop(
    "mv",
    _mv_kernel,
    vjp=(lambda g, vec: g.unsqueeze(-1) * vec.conj(), lambda g, input: mv(input.mH, g)),
    jvp=bilinear_jvp(lambda a, b: mv(a, b), "input", "vec"),
    prepare=_same_dtype(_addmv_message),
    no_kernel=_no_bool_product("addmv_impl_cpu", _mv_check),
    complex32=_no_bool_product("addmv_impl_cpu", _mv_check).kernel_for,
    batch_rule=product(_mv_check),
    out=True,
    test=_INT,
    samples=lambda make: [S((make((2, 3)), make((3,)))), S((make((0, 3)), make((3,))))],
    error_samples=lambda make: [
        E(
            S((make((2, 3)), make((4,)))),
            RuntimeError,
            r"size mismatch, got input \(2\), mat \(2x3\), vec \(4\)",
        ),
    ],
    methods=True,
    meta=by_kernel,
)
mv = mv_p.fn


def _dot_check(sa: tuple, sb: tuple) -> None:
    if len(sa) != 1 or len(sb) != 1:
        raise RuntimeError(f"1D tensors expected, but got {len(sa)}D and {len(sb)}D tensors")
    if sa[0] != sb[0]:
        n, m = sa[0], sb[0]
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{n}] and src [{m}] to have the same "
            f"number of elements, but got {n} and {m} elements respectively"
        )


def _vec_dot(name, conjugates: bool):
    """dot, or vdot (its first operand conjugated)."""

    def kernel(xp, input, other):
        _dot_check(input.shape, other.shape)
        return xp.vdot(input, other) if conjugates else xp.dot(input, other)

    if conjugates:
        vjp = (lambda g, other: g.conj() * other, lambda g, input: g * input)
        pairs = lambda a, b: (a.conj() * b).sum()  # noqa: E731
    else:
        vjp = (lambda g, other: g * other.conj(), lambda g, input: g * input.conj())
        pairs = lambda a, b: (a * b).sum()  # noqa: E731

    def message(arr):
        # vdot's check is dot's, text included
        return f"dot : expected both vectors to have same dtype, but found {_tname(arr[0])} and {_tname(arr[1])}"

    def samples(make):
        return [
            S((make((3,)), make((3,)))),
            S((make((0,)), make((0,)))),
        ]

    def error_samples(make):
        return [
            E(
                S((make((2, 2)), make((3,)))),
                RuntimeError,
                "1D tensors expected, but got 2D and 1D tensors",
            ),
            E(S((make((2,)), make((3,)))), RuntimeError, "inconsistent tensor size"),
            E(
                _mixed(make, (3,), (3,)),
                RuntimeError,
                "dot : expected both vectors to have same dtype",
            ),
        ]

    return defop(
        name,
        kernel,
        vjp=vjp,
        jvp=bilinear_jvp(pairs, "input", "other"),
        prepare=_same_dtype(message),
        batch_rule=product(_dot_check, conj_first=conjugates),
        out=True,
        test=_INT,
        no_kernel=NoKernel(
            "b",
            "dot",
            first=lambda arrays, attrs: _dot_check(arrays[0].shape, arrays[1].shape),
        ),
        samples=samples,
        error_samples=error_samples,
        methods=True,
        complex32=name,  # (PyTorch's kernel that refuses ComplexHalf)
        meta=by_kernel,
    )


dot_p = _vec_dot("dot", conjugates=False)
vdot_p = _vec_dot("vdot", conjugates=True)


def _outer(xp, input, vec2):
    return xp.multiply.outer(input, vec2)


def _check_vectors(ranks) -> None:
    """PyTorch's outer (and ger) take 1-D operands only."""
    for name, r in zip(("self", "vec2"), ranks):
        if r != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {r}-D")


def _outer_prepare(arrays, attrs=None):
    _check_vectors([a.ndim for a in arrays])
    return promote(arrays, attrs)


def _outer_rule(vmap, args, bdims, attrs):
    """A product that broadcasts a over b's dims and b over a's (no operand is expanded)."""
    (a, b), (ba, bb) = args, bdims
    ra, rb = lrank(a, ba), lrank(b, bb)
    _check_vectors((ra, rb))
    a = front(a, ba)
    a = a.reshape(*a.shape, *((1,) * rb))
    if bb is not None:
        b = front(b, bb)
        b = b.reshape(b.shape[0], *((1,) * ra), *b.shape[1:])
    return a * b, 0


outer_p = defop(
    "outer",
    _outer,
    # the operands may differ in dtype (the result is promoted): the GEMV runs in g's
    vjp=(
        lambda g, vec2: mv(g, vec2.to(g.dtype).conj()),
        lambda g, input: mv(g.mT, input.to(g.dtype).conj()),
    ),
    jvp=bilinear_jvp(lambda a, b: outer(a, b), "input", "vec2"),
    prepare=_outer_prepare,
    batch_rule=_outer_rule,
    out=True,
    test=_INT,
    samples=lambda make: [
        S((make((3,)), make((4,)))),
        S((make((0,)), make((2,)))),
        S((make((1,)), make((3,)))),
    ],
    error_samples=lambda make: [
        E(S((make((2, 3)), make((4,)))), RuntimeError, "Expected 1-D argument self"),
        E(S((make((3,)), make(()))), RuntimeError, "Expected 1-D argument vec2, but got 0"),
    ],
    methods=("outer", "ger"),
    node_name="MulBackward0",  # PyTorch's outer is a broadcast product
    complex32=True,
    meta=by_kernel,
)
outer = outer_p.fn
