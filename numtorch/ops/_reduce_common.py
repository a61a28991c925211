"""What the reduction family's modules share: dim arguments, torch.return_types, the
``reduction`` generator (a dim/keepdim op from its kernel and its partial derivative) and
the sample makers of dim-taking ops."""

from __future__ import annotations

import inspect
import math
from collections import namedtuple
from collections.abc import Callable

import numpy as np

from .._core import dtype as dt
from .._core import op as _op
from .._core.interpreter import values_hidden
from .._core.meta import by_kernel
from .._core.op import Op, named
from .._core.tensor import check_unique_dims
from .._opdb.samples import ErrorInput, S
from ._batching import along_dims
from ._families import FLOATS
from .comparison import where
from .creation import as_tensor


# ------------------------------------------------------------------ dims
def dims_of(dim, ndim: int) -> tuple:
    """Normalize a dim argument (None, int, or sequence) to a sorted tuple of axes."""
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return tuple(range(ndim))
    if isinstance(dim, int):
        dim = (dim,)
    n = max(ndim, 1)
    out = []
    for d in dim:
        if not -n <= d < n:
            raise IndexError(
                f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})"
            )
        out.append(d % n)
    check_unique_dims(out)
    return tuple(sorted(out)) if ndim else ()


def dim1(dim: int, ndim: int) -> int:
    """One dim, checked and made non-negative (0-d tensors accept 0 and -1)."""
    d = dims_of(dim, max(ndim, 1))
    return d[0]


def keep(r, ndim: int, dim, keepdim: bool):
    """A reduced tensor reshaped with its reduced dims kept (size 1), for broadcasting."""
    if keepdim or ndim == 0:
        return r
    kept = list(r.shape)
    for d in dims_of(dim, ndim):
        kept.insert(d, 1)
    return r.reshape(kept)


def unreduce(g, shape, dim, keepdim: bool):
    """Broadcast a reduced gradient back to `shape` (re-inserting reduced dims), by the ops
    PyTorch's sum_backward calls: an unsqueeze per reduced dim, then expand."""
    if not keepdim and shape and dim is not None and (isinstance(dim, int) or len(dim)):
        for d in dims_of(dim, len(shape)):
            g = g.unsqueeze(d)
    return g.expand(shape)


def count(shape, dim) -> int:
    """How many elements a reduction over `dim` combines."""
    return math.prod(shape[d] for d in dims_of(dim, len(shape)))


# Reductions, scans and softmax give contiguous results (defop's default layout; NumPy
# keeps a permuted input's axis order, PyTorch does not).
defop = _op.defop


def _nonempty(name: str, x, dims, what: str = "") -> None:
    if x.size == 0:
        if x.ndim == 0 or not dims:
            return
        for d in dims:
            if x.shape[d] == 0:
                raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def _need_float(name: str, x, dtype=None) -> None:
    if dtype is None and x.dtype.kind not in "fc":
        raise RuntimeError(
            f"{name}(): could not infer output dtype. Input dtype must be either a floating "
            f"point or complex dtype. Got: {dt.of(x).scalar_name}"
        )
    if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(
            f"{name}(): could not infer output dtype. Optional dtype must be either a floating "
            f"point or complex dtype. Got: {dtype.scalar_name}"
        )


# NumPy sums over axes before a short kept trailing block in one inner loop per row of that
# block, at a fixed cost each; einsum walks the same elements in the same order 2-8x faster
# where such rows are many and short.
_SHORT_INNER = 128
_MANY_INNER_LOOPS = 1024
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def sum_short_rows(x, axes: tuple, keepdim: bool):
    """``x.sum(axis=axes, keepdims=keepdim)`` for a C-ordered float32/float64 NumPy array
    whose summed axes all come before a kept trailing block of 2 to 128 elements, with many
    such blocks; None for any other. Each result element adds its terms one at a time, in
    the order NumPy's reduction does (the same bits, zeros' signs included)."""
    if (
        not axes
        or axes[-1] == x.ndim - 1
        or type(x) is not np.ndarray
        or x.dtype.type not in (np.float32, np.float64)
        or x.ndim > len(_LETTERS)
        or not x.flags.c_contiguous
    ):
        return None
    inner = math.prod(x.shape[axes[-1] + 1 :])
    if not 2 <= inner <= _SHORT_INNER or x.size < inner * _MANY_INNER_LOOPS:
        return None
    sub = _LETTERS[: x.ndim]
    out = np.einsum(f"{sub}->{''.join(c for i, c in enumerate(sub) if i not in axes)}", x)
    return np.expand_dims(out, axes) if keepdim else out


def _acc(xp, x, dtype):
    """x in the ``dtype=`` asked for, and the dtype a sum or product of it is made in:
    that one (NumPy widens small integers), else int64 for integers and bools."""
    if dtype is not None:
        return x.astype(dtype.np), dtype.np
    return x, (xp.int64 if x.dtype.kind in "biu" else None)


# vmap: move the batch first and shift the dims; dim=None means every dim, or (argmax-like
# ops) the flattened tensor.
_DIMS = along_dims()
_FLAT = along_dims(none="flatten")


# ------------------------------------------------------------------ return types
def _rt(name: str, fields: tuple = ("values", "indices")):
    base = namedtuple(name, fields)

    def __new__(cls, *args, **kwargs):
        if len(args) == 1 and not kwargs:  # like torch's structseq: one sequence of fields
            args = tuple(args[0])
        return base.__new__(cls, *args, **kwargs)

    def __repr__(self):
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self))
        return f"torch.return_types.{name}(\n{body})"

    t = type(name, (base,), {"__new__": __new__, "__repr__": __repr__, "__slots__": ()})
    t.__module__ = "numtorch.return_types"
    return t


def _tensor(x):
    """Public functions take tensors; NumPy scalars (0-d results) are converted."""
    from .._core.tensor import Tensor

    if isinstance(x, Tensor):
        return x
    return as_tensor(np.asarray(x))


RT = {
    n: _rt(n)
    for n in (
        "max",
        "min",
        "sort",
        "topk",
        "kthvalue",
        "median",
        "nanmedian",
        "mode",
        "cummax",
        "cummin",
    )
}
RT["aminmax"] = _rt("aminmax", ("min", "max"))


def _wrap(rt: str, op: Op, *names: str):
    """A public function returning torch.return_types-style (values, indices)."""

    def fn(*args, out=None, **kwargs):  # (op.fn binds input, by its NumPy names too)
        res = rt_type(*op.fn(*args, **kwargs))
        if out is not None:
            from .._core.out import write_out

            write_out(tuple(out), tuple(res), op, args[:1], kwargs)
            return rt_type(*out)
        return res

    rt_type = RT[rt]
    fn.__name__ = fn.__qualname__ = rt
    fn.__doc__ = f"``{rt}`` -> (values, indices)."
    fn.__signature__ = inspect.Signature(
        [inspect.Parameter("input", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        + [p for p in inspect.signature(op.fn).parameters.values()][1:]
    )
    return fn


def _write_rt(rt: str, res: tuple, out):
    """``res`` as return type ``rt``, copied into ``out`` if given."""
    if out is None:
        return RT[rt](res)
    from .._core.out import write_out

    write_out(tuple(out), tuple(res))
    return RT[rt](out)


# ------------------------------------------------------------------ generator
def reduction(
    name: str,
    kernel: Callable,
    partial: Callable | None,
    *,
    extra: tuple = (),
    samples=None,
    dtypes=FLOATS,
    methods=True,
    **kw,
) -> Op:
    """A dim/keepdim reduction ``kernel(xp, x, dim, keepdim, *extra)``.

    ``partial(x, r, dim, **extra)`` is d result / d x (``r`` the result with reduced
    dims kept; for complex x, conjugate Wirtinger: conj(f') of a holomorphic f), so vjp =
    g * partial and jvp = sum(t * conj(partial)) over the reduced dims.
    A partial that names its second parameter ``_r`` does not read the result, and the
    vjp does not save it (an in-place write into the result is then no error).
    """
    names = ("x", "result", "dim", "keepdim", *extra)
    vjp = jvp = None
    if partial is not None:

        def vjp(g, x, result=None, dim=None, keepdim=False, **ex):
            return _partial_vjp(partial, g, x, result, dim, keepdim, ex)

        def jvp(t, x, result, dim, keepdim, **ex):
            return _partial_jvp(partial, t, x, result, dim, keepdim, ex)

        reads = list(inspect.signature(partial).parameters)[1] == "r"
        vjp = named(vjp, ("g", *(n for n in names if reads or n != "result")))
        jvp = named(kw.pop("jvp", jvp), ("t", *names))
    kw.setdefault("batch_rule", _DIMS)
    kw.setdefault("meta", by_kernel)
    return defop(
        name,
        kernel,
        nin=1,
        vjp=vjp,
        jvp=jvp,
        samples=samples,
        test={"dtypes": dtypes, **kw.pop("test", {})},
        methods=methods,
        **kw,
    )


def _partial_vjp(partial, g, x, result, dim, keepdim, extra):
    """g (broadcast back over the reduced dims) times d result / d x. A partial may give
    (p, zero): the product is then 0 where ``zero`` holds, whatever g is (inf included);
    or None: no gradient (PyTorch's undefined one)."""
    r = None if result is None else keep(result, x.dim(), dim, keepdim)
    p = partial(x, r, dim, **extra)
    if p is None:
        return None
    if type(p) is tuple:
        p, zero = p
        return where(zero, 0.0, unreduce(g, x.shape, dim, keepdim) * p)
    return unreduce(g, x.shape, dim, keepdim) * p


def _partial_jvp(partial, t, x, result, dim, keepdim, extra):
    """t times d result / d x, summed over the reduced dims (a (p, zero) partial's terms
    are 0 where ``zero`` holds)."""
    r = keep(result, x.dim(), dim, keepdim)
    p = partial(x, r, dim, **extra)
    if type(p) is tuple:
        p, zero = p
        out = _sum_dims(where(zero, 0.0, t * p.conj()), dim, keepdim)
    elif p.dtype is dt.bool_:  # a selection (nansum's): the others' tangents, NaN or not, drop
        return _sum_dims(where(p, t, 0.0), dim, keepdim)
    else:
        out = _sum_dims(t * p.conj(), dim, keepdim)
    return out.real if out.is_complex() and not result.is_complex() else out


def _sum_dims(p, dim, keepdim):
    if p.dim() == 0:
        return p
    return p.sum(dims_of(dim, p.dim()), keepdim)  # (Tensor.sum is the sum op)


def _shares(mask, x, dim):
    """1/count at the true elements of ``mask`` (count taken over ``dim``), 0 elsewhere,
    in ``x``'s dtype (a bool / int quotient would be the default float32)."""
    m = mask.to(x.dtype)
    return m / _sum_dims(m, dim, True)


def _has_zero(x) -> bool:
    """Whether the cheap formula (dividing by x) is unsafe: a zero, or an infinity (inf /
    inf). Inside a transform the data cannot steer control flow, so the exact formula is
    taken there."""
    return x.dim() > 0 and (
        values_hidden(x) or bool((x == 0).any()) or bool(x.abs().eq(math.inf).any())
    )


# ------------------------------------------------------------------ samples
def distinct(make, shape, scale: float = 0.5):
    """Distinct values (a shuffled grid) in the maker's dtype: no ties for argmax/sort grads."""
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    n = math.prod(shape)
    p = make.perm(n).reshape(shape)
    if make.is_float:
        return np.asarray((p - n / 2) * scale + make(shape, -0.1, 0.1)).astype(make.dtype)
    return np.asarray(p).astype(make.dtype)


def dim_samples(
    shapes=((2, 3, 4),), low=-2.0, high=2.0, maker=None, all_dims=True, tuple_dims=True
):
    """dim/keepdim variants: all dims, one dim (negative too), several dims, 0-d, empty."""

    def samples(make):
        mk = (lambda s: maker(make, s)) if maker else (lambda s: make(s, low, high))
        if all_dims:
            yield S((mk((2, 3)),))
            yield S((mk(()),))
        for s in shapes:
            yield S((mk(s), 1))
            yield S((mk(s), -1), {"keepdim": True})
            if tuple_dims:
                yield S((mk(s), (0, 2)), {"keepdim": True})
                yield S((mk(s), (-1, 0)))
        yield S((mk(()), 0))
        yield S((mk((2, 3)), 0), {"keepdim": False})

    return samples


def _err_dim(fn_args=()):
    def errors(make):
        yield ErrorInput(S((make((2, 3)), 2, *fn_args)), IndexError, "Dimension out of range")

    return errors


def _wider(make):
    """The double dtype of a sample's kind (a complex input's dtype= is complex)."""
    return dt.complex128 if make.dtype.kind == "c" else dt.float64
