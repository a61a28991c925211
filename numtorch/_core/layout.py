"""Result layouts (strides) as PyTorch gives them.

A result's values do not depend on its strides, but ``.view()``, ``.is_contiguous()``,
``.stride()`` and in-place writes through later views do, so every op's result takes the
layout PyTorch's kernel gives it. Three rules cover most ops (``Op.layout``; the default
is ``contiguous``, a view op's layout is the view's):

- ``follow_inputs`` (elementwise ops, PyTorch's TensorIterator): the result's dims are
  ordered in memory as the inputs' are, the first input that tells deciding (broadcast
  dims tell nothing, equal strides are broken by size); contiguous when the inputs are.
- ``preserve`` (``*_like``, clone, ops that write into a copy of their input: PyTorch's
  ``memory_format=torch.preserve_format``): the same rule over the first input alone.
- ``contiguous`` (kernels that allocate their result themselves, e.g. cat, gather,
  reductions).

and two special ones: ``column_major`` (linalg results, as LAPACK leaves them) and
``number_first_contiguous`` (pow with a Python number base).

NumPy's own ``order="K"`` is close to the first rule, but puts a broadcast (stride-0) dim
innermost and is lost by casts and composite kernels. Each rule costs one contiguity flag
per array when the inputs are contiguous; the rest runs for non-contiguous inputs only.
"""

from __future__ import annotations

import numpy as np

_nd = np.ndarray


def dense_order(shape: tuple, operands) -> list:
    """PyTorch's TensorIterator dim order (innermost first) for a result of ``shape``:
    ``operands`` are (shape, strides) pairs, aligned to the right of ``shape``."""
    n = len(shape)
    strides = []
    for osh, ost in operands:
        off = n - len(osh)
        st = [0] * off
        for i, (m, s) in enumerate(zip(osh, ost)):
            st.append(0 if m == 1 and shape[off + i] != 1 else s)
        strides.append(st)

    def swap(d0: int, d1: int) -> int:
        for st in strides:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:  # broadcast: tells nothing
                continue
            if s0 < s1:
                return -1
            if s0 > s1:
                return 1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    perm = list(range(n - 1, -1, -1))
    for i in range(1, n):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    return perm


def relayout(out, operands):
    """``out`` (a NumPy array) with PyTorch's dense layout for ``operands`` (itself when it
    has it). GPU results keep their kernel's layout."""
    shape = out.shape
    perm = dense_order(shape, operands)
    want = [0] * len(shape)
    step = out.itemsize
    for d in perm:
        want[d] = step
        step *= shape[d]
    if all(w == s or n == 1 for w, s, n in zip(want, out.strides, shape)):
        if tuple(want) == out.strides or out.size == 0:
            return out
        # a size-1 dim's stride moves nothing, but PyTorch's later layouts read it (an
        # advanced index's, a view's): give it PyTorch's, without a copy
        return np.lib.stride_tricks.as_strided(out, shape, want)
    res = _empty_in_order(shape, out.dtype, perm)
    res[...] = out
    return res


def _empty_in_order(shape: tuple, dtype, perm: list):
    """An empty array of ``shape`` whose dims are ordered in memory as ``perm`` (innermost
    first) says."""
    outer = perm[::-1]
    return np.empty([shape[d] for d in outer], dtype).transpose(np.argsort(outer))


def _reordered(inputs) -> bool:
    """Whether follow_inputs lays a result out for ``inputs`` by relayout (an input's dims
    that tell are not in C order)."""
    for a in inputs:
        if type(a) is _nd and a.ndim > 1 and not a.flags.c_contiguous and not _c_like(a):
            return True
    return False


def follow_inputs_empty(shape: tuple, dtype, inputs):
    """An empty array of ``shape`` laid out as ``follow_inputs`` lays out a result for
    ``inputs`` where that is not C order (else None): a large kernel writes into it
    instead of its result being copied there."""
    if not _reordered(inputs):
        return None
    perm = dense_order(shape, [(a.shape, a.strides) for a in inputs if type(a) is _nd and a.ndim])
    if perm == list(range(len(shape) - 1, -1, -1)):
        return None
    return _empty_in_order(shape, dtype, perm)


def follow_inputs(out, inputs, attrs=None):
    """An elementwise result laid out as PyTorch's TensorIterator lays it out for
    ``inputs`` (arrays and Python numbers). Contiguous inputs give NumPy's ufuncs a
    contiguous result, as PyTorch's: one flag per input."""
    for a in inputs:
        if type(a) is _nd and not a.flags.c_contiguous:
            break
    else:
        if type(out) is _nd and 1 in out.shape and out.size > 1 and _unit_ties(out, inputs):
            return relayout(
                out, [(a.shape, a.strides) for a in inputs if type(a) is _nd and a.ndim]
            )
        return out
    if type(out) is not _nd or out.size <= 1:
        return out
    if _reordered(inputs):
        return relayout(out, [(a.shape, a.strides) for a in inputs if type(a) is _nd and a.ndim])
    # every input's dims that tell are in C order (e.g. an expanded gradient): contiguous
    return out if out.flags.c_contiguous else out.copy(order="C")


def _unit_ties(out, inputs) -> bool:
    """Whether contiguous operands still order a size-1 dim of the result apart from C's:
    where they differ in shape (a number, a broadcast), TensorIterator orders the dims by
    their strides, a size-1 dim's included, and an operand has a size-1 dim whose stride
    is not C's (where all have the result's shape, it allocates the result contiguous)."""
    shape = out.shape
    same, odd = True, False
    for a in inputs:
        if type(a) is not _nd:
            same = False
            continue
        s = a.shape
        if s != shape:
            same = False
            if 1 in s:
                odd = True
        elif not odd and 1 in s and (a.itemsize != out.itemsize or a.strides != out.strides):
            odd = True
    return odd and not same


def _c_like(a) -> bool:
    """Whether an array's dims that tell (stride not 0; a size-1 dim's stride tells too,
    equal strides are ordered by size) are in C order."""
    last = last_n = None
    for n, s in zip(a.shape, a.strides):
        if s == 0:
            continue
        if last is not None and (s > last or (s == last and n > last_n)):
            return False
        last, last_n = s, n
    return True


def preserve(out, inputs, attrs=None):
    """A result laid out as ``torch.empty_like(inputs[0])``: ``preserve_format``."""
    a = inputs[0]
    if type(out) is not _nd or out.size <= 1:
        return out
    if out.flags.c_contiguous and (type(a) is not _nd or a.flags.c_contiguous):
        return _unit_strides_of(out, a) if type(a) is _nd and 1 in a.shape else out
    if type(a) is not _nd or a.shape != out.shape:
        return contiguous(out)
    return _unit_strides_of(relayout(out, [(a.shape, a.strides)]), a)


def _unit_strides_of(out, a):
    """``out`` (laid out densely as ``a``'s dims that tell are, when ``a`` is dense) with
    ``a``'s strides of its size-1 dims too: PyTorch's empty_like copies a dense tensor's
    strides, those included, and later layouts and overlap checks read them."""
    if a.shape != out.shape:
        return out
    want = tuple(s // a.itemsize * out.itemsize for s in a.strides)
    if want == out.strides or not all(
        w == s or n == 1 for w, s, n in zip(want, out.strides, out.shape)
    ):
        return out
    return np.lib.stride_tricks.as_strided(out, out.shape, want)


def contiguous(out, inputs=None, attrs=None):
    """A result PyTorch allocates contiguous (its size-1 dims' strides too, which later
    layouts and overlap checks read)."""
    if not out.flags.c_contiguous:
        return out.copy(order="C")
    if type(out) is not _nd or out.size <= 1 or 1 not in out.shape:
        return out
    want = tuple(s * out.itemsize for s in empty_strides(out.shape))
    if want == out.strides:
        return out
    return np.lib.stride_tricks.as_strided(out, out.shape, want)


def empty_strides(shape: tuple) -> tuple:
    """PyTorch's strides of a contiguous tensor of ``shape`` (in elements; a size-0 dim
    counts as 1)."""
    st = []
    step = 1
    for n in reversed(shape):
        st.append(step)
        step *= max(n, 1)
    return tuple(reversed(st))


def number_first_contiguous(out, inputs, attrs=None):
    """``follow_inputs``, but contiguous when the first operand is a Python number
    (PyTorch's ``pow(Scalar, Tensor)`` allocates its result)."""
    if isinstance(inputs[0], (int, float, complex)):
        return contiguous(out)
    return follow_inputs(out, inputs)


def column_major(out, inputs=None, attrs=None):
    """A batch of matrices each stored column by column (LAPACK's layout, which PyTorch's
    linalg results keep); a result of fewer than 2 dims contiguous."""
    if type(out) is not _nd:
        return out
    if out.ndim < 2:
        return contiguous(out)
    t = out.swapaxes(-1, -2)
    if t.flags.c_contiguous:
        return out
    return t.copy(order="C").swapaxes(-1, -2)


# ------------------------------------------------------------------ torch.layout
class layout:  # noqa: N801 - PyTorch's name
    """A tensor's layout kind (``torch.layout``); numtorch's tensors are all strided."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return f"torch.{self._name}"

    def __reduce__(self):
        return self._name


strided = layout("strided")
