"""The meta device's array type: a shape, a dtype and strides, without data.

``MetaArray`` answers the parts of NumPy's array interface that only read metadata
(shape, dtype, strides, views, reshapes, broadcasting, reductions' shapes, type
promotion), and ``META_XP`` is the meta device's array module, the way ``numpy`` is the
CPU's: kernels that only read shapes and dtypes run on it unchanged. Anything that needs
values (``bool()``, ``item()``, ``np.asarray``, a data-dependent NumPy function) raises
``NoData``. Dtypes are resolved on one-element probes, so nothing of a result's size is
ever allocated.
"""

from __future__ import annotations

import math
import operator
import types

import numpy as np

from .layout import dense_order


class NoData(NotImplementedError):
    """A meta array's values were asked for (or a NumPy function meta arrays lack)."""


def has_values(a) -> bool:
    """Whether ``a`` holds values to check (a meta array's indices are taken as valid, as
    PyTorch's meta kernels take them)."""
    return type(a) is not MetaArray


def c_strides(shape: tuple, itemsize: int) -> tuple:
    st = []
    step = itemsize
    for n in reversed(shape):
        st.append(step)
        step *= max(n, 1)
    return tuple(reversed(st))


def _norm_shape(shape) -> tuple:
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(operator.index(n) for n in shape)


def _axes(axis, ndim: int) -> tuple:
    if axis is None:
        return tuple(range(ndim))
    return np.lib.array_utils.normalize_axis_tuple(axis, ndim)


def _probe(a):
    """A one-element stand-in of an operand for dtype resolution."""
    if type(a) is MetaArray:
        return np.zeros((), a.dtype)
    if isinstance(a, np.ndarray) and a.size > 1:
        return np.zeros((), a.dtype)
    return a


def _quiet(fn, *args, **kw):
    with np.errstate(all="ignore"):
        return fn(*args, **kw)


class _Flags:
    __slots__ = ("c_contiguous", "f_contiguous", "writeable")

    def __init__(self, a: MetaArray):
        self.c_contiguous = _dense(a.shape, a.strides, a.itemsize, False)
        self.f_contiguous = _dense(a.shape, a.strides, a.itemsize, True)
        self.writeable = True

    def __getitem__(self, key: str) -> bool:
        return getattr(self, {"C_CONTIGUOUS": "c_contiguous"}.get(key, key.lower()))


def _dense(shape, strides, itemsize, fortran: bool) -> bool:
    step = itemsize
    pairs = list(zip(shape, strides))
    for n, s in pairs if fortran else reversed(pairs):
        if n != 1 and s != step:
            return False
        step *= n
    return True


class MetaArray:
    """An array of ``shape`` and ``dtype`` laid out by ``strides`` (bytes), with no buffer.
    ``base`` is the array a view was taken of (NumPy's meaning)."""

    __slots__ = ("shape", "dtype", "strides", "base")
    __array_priority__ = 1000

    def __init__(self, shape, dtype, strides=None, base=None):
        self.shape = _norm_shape(shape)
        self.dtype = np.dtype(dtype)
        self.strides = c_strides(self.shape, self.dtype.itemsize) if strides is None else strides
        self.base = base

    # ------------------------------------------------------------------ metadata
    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(self.shape))
    itemsize = property(lambda self: self.dtype.itemsize)
    nbytes = property(lambda self: self.size * self.dtype.itemsize)
    flags = property(lambda self: _Flags(self))
    T = property(lambda self: self.transpose())
    mT = property(lambda self: self.swapaxes(-1, -2))
    real = property(lambda self: self._part(), lambda self, v: self._part().__setitem__(..., v))
    imag = property(lambda self: self._part(), lambda self, v: self._part().__setitem__(..., v))

    def __repr__(self) -> str:
        return f"MetaArray(shape={self.shape}, dtype={self.dtype})"

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    # ------------------------------------------------------------------ no values
    def _no_data(self, *args, **kw):
        raise NoData("Tensor.item() cannot be called on meta tensors")

    __bool__ = __float__ = __int__ = __index__ = __complex__ = _no_data
    item = tolist = tobytes = _no_data

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def __array__(self, dtype=None, copy=None):
        raise NoData("Cannot copy out of meta tensor; no data!")

    @property
    def data(self):
        raise NoData("Cannot copy out of meta tensor; no data!")

    # ------------------------------------------------------------------ views
    def _view(self, shape, strides) -> MetaArray:
        return MetaArray(
            shape, self.dtype, tuple(strides), self if self.base is None else self.base
        )

    def _part(self) -> MetaArray:
        if self.dtype.kind != "c":
            return self
        d = np.zeros((), self.dtype).real.dtype
        return MetaArray(self.shape, d, self.strides, self if self.base is None else self.base)

    def transpose(self, *axes) -> MetaArray:
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0]
        axes = tuple(reversed(range(self.ndim))) if not axes else _axes(tuple(axes), self.ndim)
        if sorted(axes) != list(range(self.ndim)):
            raise ValueError("axes don't match array")
        return self._view([self.shape[a] for a in axes], [self.strides[a] for a in axes])

    def swapaxes(self, a: int, b: int) -> MetaArray:
        p = list(range(self.ndim))
        a, b = _axes(a, self.ndim)[0], _axes(b, self.ndim)[0]
        p[a], p[b] = p[b], p[a]
        return self.transpose(p)

    def reshape(self, *shape, order="C") -> MetaArray:
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
            shape = shape[0]
        shape = list(_norm_shape(shape))
        if shape.count(-1) > 1:
            raise ValueError("can only specify one unknown dimension")
        if -1 in shape:
            known = math.prod(n for n in shape if n != -1)
            if known == 0 or self.size % known:
                raise ValueError(
                    f"cannot reshape array of size {self.size} into shape {tuple(shape)}"
                )
            shape[shape.index(-1)] = self.size // known
        if math.prod(shape) != self.size:
            raise ValueError(f"cannot reshape array of size {self.size} into shape {tuple(shape)}")
        st = _view_strides(self.shape, self.strides, shape, self.itemsize)
        if st is None:
            return MetaArray(shape, self.dtype)
        return self._view(shape, st)

    def ravel(self, order="C") -> MetaArray:
        return self.reshape(-1)

    def flatten(self, order="C") -> MetaArray:
        return MetaArray((self.size,), self.dtype)

    def squeeze(self, axis=None) -> MetaArray:
        axes = (
            [i for i, n in enumerate(self.shape) if n == 1]
            if axis is None
            else _axes(axis, self.ndim)
        )
        for a in axes:
            if self.shape[a] != 1:
                raise ValueError(
                    "cannot select an axis to squeeze out which has size not equal to one"
                )
        keep = [i for i in range(self.ndim) if i not in axes]
        return self._view([self.shape[i] for i in keep], [self.strides[i] for i in keep])

    def __getitem__(self, index) -> MetaArray:
        return _index(self, index)

    def __setitem__(self, index, value) -> None:
        target = _index(self, index)
        if hasattr(value, "shape"):
            np.broadcast_shapes(value.shape, target.shape)

    def fill(self, value) -> None:
        pass

    def view(self, dtype=None, type=None) -> MetaArray:
        if dtype is None:
            return self._view(self.shape, self.strides)
        d = np.dtype(dtype)
        if d.itemsize == self.itemsize:
            return MetaArray(self.shape, d, self.strides, self if self.base is None else self.base)
        shape = self.shape[:-1] + (self.shape[-1] * self.itemsize // d.itemsize,)
        return MetaArray(shape, d)

    # ------------------------------------------------------------------ new arrays
    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True) -> MetaArray:
        d = np.dtype(dtype)
        if d == self.dtype and not copy:
            return self
        return MetaArray(self.shape, d, _like_strides(self, d))

    def copy(self, order="C") -> MetaArray:
        if order == "K":
            return MetaArray(self.shape, self.dtype, _like_strides(self, self.dtype))
        return MetaArray(self.shape, self.dtype)

    def conj(self) -> MetaArray:
        return MetaArray(self.shape, self.dtype, _like_strides(self, self.dtype))

    conjugate = conj

    def get(self) -> MetaArray:  # (CuPy's name, which Tensor.numpy calls)
        raise NoData("Cannot copy out of meta tensor; no data!")

    # ------------------------------------------------------------------ NumPy protocols
    def __array_ufunc__(self, ufunc, method, *inputs, **kw):
        out = kw.pop("out", None)
        if method == "__call__":
            res = _elementwise(ufunc, inputs, kw)
        elif method in ("reduce", "accumulate"):
            res = _reduce_like(getattr(ufunc, method), inputs[0], kw, keep_axis=method != "reduce")
        elif method in _UFUNC_METHODS:
            res = _UFUNC_METHODS[method](ufunc, *inputs, **kw)
        else:
            raise NoData(f"numpy.{ufunc.__name__}.{method} on meta arrays")
        if out is not None:
            return out[0] if len(out) == 1 else out
        return res

    def __array_function__(self, func, types_, args, kwargs):
        impl = _FUNCS.get(func)
        if impl is None:
            raise NoData(f"numpy.{func.__name__} on meta arrays")
        return impl(*args, **kwargs)


def _install_operators() -> None:
    """Arithmetic and comparison operators as NumPy's ufuncs on meta arrays."""
    names = {
        "add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.true_divide,
        "floordiv": np.floor_divide, "mod": np.remainder, "pow": np.power, "matmul": np.matmul,
        "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
        "lshift": np.left_shift, "rshift": np.right_shift,
    }  # fmt: skip
    for name, uf in names.items():
        setattr(MetaArray, f"__{name}__", lambda a, b, uf=uf: uf(a, b))
        setattr(MetaArray, f"__r{name}__", lambda a, b, uf=uf: uf(b, a))
        setattr(MetaArray, f"__i{name}__", lambda a, b, uf=uf: uf(a, b, out=(a,)))
    cmp = {"lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
           "eq": np.equal, "ne": np.not_equal}  # fmt: skip
    for name, uf in cmp.items():
        setattr(MetaArray, f"__{name}__", lambda a, b, uf=uf: uf(a, b))
    MetaArray.__hash__ = object.__hash__
    for name, uf in {"neg": np.negative, "pos": np.positive, "abs": np.absolute,
                     "invert": np.invert}.items():  # fmt: skip
        setattr(MetaArray, f"__{name}__", lambda a, uf=uf: uf(a))
    for name in ("sum", "prod", "mean", "max", "min", "any", "all", "std", "var", "argmax",
                 "argmin", "cumsum", "cumprod", "nansum"):  # fmt: skip
        fn = getattr(np, name)
        setattr(MetaArray, name, lambda a, *args, fn=fn, **kw: fn(a, *args, **kw))


def _like_strides(a: MetaArray, dtype) -> tuple:
    """Strides of a new array laid out as ``a`` (NumPy's ``order='K'``)."""
    if a.flags.c_contiguous or a.ndim < 2:
        return c_strides(a.shape, np.dtype(dtype).itemsize)
    return dense_strides(a.shape, [(a.shape, a.strides)], np.dtype(dtype).itemsize)


def dense_strides(shape, operands, itemsize: int) -> tuple:
    """PyTorch's TensorIterator strides for a result of ``shape`` (``layout.dense_order``)."""
    want = [0] * len(shape)
    step = itemsize
    for d in dense_order(shape, operands):
        want[d] = step
        step *= max(shape[d], 1)
    return tuple(want)


def _view_strides(old_shape, old_strides, new_shape, itemsize: int):
    """The strides of ``new_shape`` viewing the same memory as PyTorch's ``view`` computes
    them, or None where the dims to merge are not contiguous with one another."""
    new_shape = tuple(new_shape)
    if not old_shape or math.prod(old_shape) == 0:
        return c_strides(new_shape, itemsize)
    new_st = [0] * len(new_shape)
    vd = len(new_shape) - 1
    base = old_strides[-1]
    t_numel = v_numel = 1
    for td in range(len(old_shape) - 1, -1, -1):
        t_numel *= old_shape[td]
        if td == 0 or (old_shape[td - 1] != 1 and old_strides[td - 1] != t_numel * base):
            while vd >= 0 and (v_numel < t_numel or new_shape[vd] == 1):
                new_st[vd] = v_numel * base
                v_numel *= new_shape[vd]
                vd -= 1
            if v_numel != t_numel:
                return None
            if td > 0:
                base = old_strides[td - 1]
                t_numel = v_numel = 1
    return None if vd != -1 else tuple(new_st)


def _index(a: MetaArray, index) -> MetaArray:
    """Basic indexing (ints, slices, None, Ellipsis) as a view; integer-array indices give
    a new array of NumPy's advanced-indexing shape; a boolean mask needs values."""
    if not isinstance(index, tuple):
        index = (index,)
    n_real = sum(1 for i in index if i is not None and i is not Ellipsis)
    for i in index:
        if getattr(i, "dtype", None) == np.bool_ or isinstance(i, bool):
            raise NoData("a boolean mask selects by values")
    if Ellipsis in [i for i in index if not hasattr(i, "shape")]:
        k = next(j for j, i in enumerate(index) if i is Ellipsis and not hasattr(i, "shape"))
        index = index[:k] + (slice(None),) * (a.ndim - n_real) + index[k + 1 :]
    else:
        index = index + (slice(None),) * (a.ndim - n_real)
    if n_real > a.ndim:
        raise IndexError(
            f"too many indices for array: array is {a.ndim}-dimensional, but {n_real} were indexed"
        )
    shape, strides, adv, adv_at = [], [], [], None
    d = 0
    for i in index:
        if i is None:
            shape.append(1)
            strides.append(0)
        elif isinstance(i, slice):
            start, stop, step = i.indices(a.shape[d])
            shape.append(len(range(start, stop, step)))
            strides.append(a.strides[d] * step)
            d += 1
        elif hasattr(i, "shape") or isinstance(i, (list, np.ndarray)):
            adv.append(np.shape(i) if not hasattr(i, "shape") else i.shape)
            if adv_at is None:
                adv_at = len(shape)
            d += 1
        else:
            i = operator.index(i)
            if not -a.shape[d] <= i < a.shape[d]:
                raise IndexError(f"index {i} is out of bounds for axis {d} with size {a.shape[d]}")
            d += 1
    if not adv:
        return a._view(shape, strides)
    bshape = list(np.broadcast_shapes(*adv))
    shape[adv_at:adv_at] = bshape
    return MetaArray(shape, a.dtype)


# ------------------------------------------------------------------ ufuncs and reductions
def _matmul(a, b, kw):
    """matmul's result: its dtype from one-element probes, its shape from NumPy's rule."""
    sa, sb = tuple(np.shape(a) if not hasattr(a, "shape") else a.shape), tuple(b.shape)
    if not sa or not sb:
        raise ValueError("matmul: Input operand does not have enough dimensions")
    ma = sa if len(sa) > 1 else (1, sa[0])
    mb = sb if len(sb) > 1 else (sb[0], 1)
    if ma[-1] != mb[-2]:
        raise ValueError(
            f"matmul: Input operand 1 has a mismatch in its core dimension 0 ({ma[-1]} is different from {mb[-2]})"
        )
    batch = np.broadcast_shapes(ma[:-2], mb[:-2])
    shape = batch + ma[-2:-1] * (len(sa) > 1) + mb[-1:] * (len(sb) > 1)
    probe = [np.zeros((1, 1), x.dtype) for x in (a, b)]
    return MetaArray(shape, _quiet(np.matmul, *probe, **kw).dtype)


def _elementwise(ufunc, inputs, kw):
    if ufunc is np.matmul:
        return _matmul(*inputs, kw)
    if ufunc.signature is not None:
        raise NoData(f"numpy.{ufunc.__name__} on meta arrays")
    probes = [_probe(a) for a in inputs]
    res = _quiet(ufunc, *probes, **kw)
    arrays = [a for a in inputs if hasattr(a, "shape")]
    shapes = [a.shape for a in arrays]
    try:
        shape = np.broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError(
            "operands could not be broadcast together with shapes "
            + " ".join(str(s).replace(" ", "") for s in shapes)
        ) from None
    operands = [(a.shape, a.strides) for a in arrays if getattr(a, "ndim", 0)]
    if isinstance(res, tuple):
        return tuple(_result(shape, r.dtype, operands) for r in res)
    return _result(shape, np.asarray(res).dtype, operands)


def _result(shape, dtype, operands) -> MetaArray:
    if all(_dense(s, st, 1, False) for s, st in operands) or len(shape) < 2:
        return MetaArray(shape, dtype)
    return MetaArray(shape, dtype, dense_strides(shape, operands, np.dtype(dtype).itemsize))


def _reduce_like(fn, a, kw, keep_axis: bool = False, *args):
    """A reduction's (``keep_axis``: a scan's) result: its dtype from a probe of ``a``'s
    rank, its shape from ``axis`` and ``keepdims``."""
    a = _meta(a)
    kw = dict(kw)
    axis = kw.get("axis")
    probe = np.zeros((1,) * a.ndim, a.dtype)
    r = np.asarray(_quiet(fn, probe, *args, **kw))
    if keep_axis:
        shape = a.shape if axis is not None else (a.size,)
        return MetaArray(shape, r.dtype)
    axes = _axes(axis, a.ndim)
    if kw.get("keepdims"):
        shape = tuple(1 if i in axes else n for i, n in enumerate(a.shape))
    else:
        shape = tuple(n for i, n in enumerate(a.shape) if i not in axes)
    for i in axes:
        if a.shape[i] == 0 and fn in _NEEDS_ELEMENTS:
            raise ValueError("zero-size array to reduction operation which has no identity")
    return MetaArray(shape, r.dtype)


def _meta(a) -> MetaArray:
    if type(a) is MetaArray:
        return a
    a = np.asarray(a)
    return MetaArray(a.shape, a.dtype)


_NEEDS_ELEMENTS = {np.max, np.min, np.amax, np.amin, np.argmax, np.argmin, np.maximum.reduce,
                   np.minimum.reduce}  # fmt: skip


def _reducer(fn, scan: bool = False):
    def reduce(a, axis=None, dtype=None, out=None, keepdims=False, **kw):
        if dtype is not None:
            kw["dtype"] = dtype
        if fn in (np.argmax, np.argmin) and keepdims is False:
            pass
        elif keepdims and not scan:
            kw["keepdims"] = keepdims
        res = _reduce_like(fn, a, {"axis": axis, **kw}, scan)
        if keepdims and fn in (np.argmax, np.argmin):
            res = _reduce_like(np.sum, a, {"axis": axis, "keepdims": True}).astype(np.intp)
        return res

    return reduce


# ------------------------------------------------------------------ array functions
def _broadcast_to(a, shape, subok=False):
    a = _meta(a)
    shape = _norm_shape(shape)
    if np.broadcast_shapes(a.shape, shape) != shape:
        raise ValueError(
            f"operands could not be broadcast together with remapped shapes [original->remapped]: "
            f"{a.shape} and requested shape {shape}"
        )
    off = len(shape) - a.ndim
    st = [0] * off + [
        0 if n == 1 and m != 1 else s for n, m, s in zip(a.shape, shape[off:], a.strides)
    ]
    return a._view(shape, st)


def _concatenate(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    arrays = [_meta(x) for x in arrays]
    if axis is None:
        arrays, axis = [x.reshape(-1) for x in arrays], 0
    first = arrays[0]
    ax = _axes(axis, first.ndim)[0]
    for x in arrays[1:]:
        if x.ndim != first.ndim or any(
            m != n for i, (m, n) in enumerate(zip(x.shape, first.shape)) if i != ax
        ):
            raise ValueError(
                "all the input array dimensions except for the concatenation axis must match exactly"
            )
    shape = list(first.shape)
    shape[ax] = sum(x.shape[ax] for x in arrays)
    d = np.dtype(dtype) if dtype is not None else np.result_type(*(x.dtype for x in arrays))
    return MetaArray(shape, d)


def _stack(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    arrays = [_meta(x) for x in arrays]
    shapes = {x.shape for x in arrays}
    if len(shapes) != 1:
        raise ValueError("all input arrays must have the same shape")
    ax = _axes(axis, arrays[0].ndim + 1)[0]
    return _concatenate(
        [x.reshape(x.shape[:ax] + (1,) + x.shape[ax:]) for x in arrays], ax, dtype=dtype
    )


def _moveaxis(a, source, destination):
    a = _meta(a)
    src, dst = _axes(source, a.ndim), _axes(destination, a.ndim)
    order = [n for n in range(a.ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return a.transpose(order)


def _expand_dims(a, axis):
    a = _meta(a)
    axes = _axes(axis, a.ndim + (1 if isinstance(axis, int) else len(axis)))
    shape, it = [], iter(a.shape)
    for i in range(a.ndim + len(axes)):
        shape.append(1 if i in axes else next(it))
    return a.reshape(shape)


def _where(cond, x=None, y=None):
    if x is None:
        raise NoData("numpy.where with one argument selects by values")
    probes = [_probe(v) for v in (x, y)]
    d = np.where(True, *probes).dtype
    arrays = [v for v in (cond, x, y) if hasattr(v, "shape")]
    shape = np.broadcast_shapes(*(v.shape for v in arrays))
    return _result(shape, d, [(v.shape, v.strides) for v in arrays if getattr(v, "ndim", 0)])


def _like(a, dtype=None, order="K", subok=True, shape=None, **kw):
    a = _meta(a)
    d = a.dtype if dtype is None else np.dtype(dtype)
    if shape is not None:
        return MetaArray(shape, d)
    return MetaArray(a.shape, d, _like_strides(a, d))


def _full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None):
    return _like(a, dtype, order, subok, shape)


def _einsum(subscripts, *operands, **kw):
    """einsum's result shape and dtype (explicit ``->`` form)."""
    if "->" not in subscripts or "." in subscripts:
        raise NoData("numpy.einsum without an explicit output on meta arrays")
    ins, out = subscripts.replace(" ", "").split("->")
    sizes: dict = {}
    for spec, x in zip(ins.split(","), operands):
        for c, n in zip(spec, x.shape):
            if sizes.get(c, 1) != 1 and n != 1 and sizes[c] != n:
                raise ValueError(f"operands could not be broadcast together for subscript {c}")
            sizes[c] = n if sizes.get(c, 1) == 1 else sizes[c]
    d = np.result_type(*(x.dtype for x in operands))
    return MetaArray([sizes[c] for c in out], d)


def _copyto(dst, src, casting="same_kind", where=True):
    np.broadcast_shapes(np.shape(src) if not hasattr(src, "shape") else src.shape, dst.shape)


def _reshape(a, shape=None, order="C", *, newshape=None, copy=None):
    return _meta(a).reshape(shape if shape is not None else newshape)


def _shape(a):
    return a.shape


# (the ufunc methods and the further functions ``meta_funcs`` answers)
_UFUNC_METHODS: dict = {}
_FUNCS = {
    np.sum: _reducer(np.sum),
    np.nansum: _reducer(np.nansum),
    np.prod: _reducer(np.prod),
    np.mean: _reducer(np.mean),
    np.max: _reducer(np.max),
    np.min: _reducer(np.min),
    np.amax: _reducer(np.max),
    np.amin: _reducer(np.min),
    np.any: _reducer(np.any),
    np.all: _reducer(np.all),
    np.std: _reducer(np.std),
    np.var: _reducer(np.var),
    np.argmax: _reducer(np.argmax),
    np.argmin: _reducer(np.argmin),
    np.cumsum: _reducer(np.cumsum, scan=True),
    np.cumprod: _reducer(np.cumprod, scan=True),
    np.reshape: _reshape,
    np.transpose: lambda a, axes=None: _meta(a).transpose(axes),
    np.swapaxes: lambda a, x, y: _meta(a).swapaxes(x, y),
    np.moveaxis: _moveaxis,
    np.expand_dims: _expand_dims,
    np.squeeze: lambda a, axis=None: _meta(a).squeeze(axis),
    np.ravel: lambda a, order="C": _meta(a).ravel(),
    np.broadcast_to: _broadcast_to,
    np.broadcast_arrays: lambda *args, subok=False: tuple(
        _broadcast_to(a, np.broadcast_shapes(*(x.shape for x in args))) for a in args
    ),
    np.concatenate: _concatenate,
    np.stack: _stack,
    np.where: _where,
    np.zeros_like: _like,
    np.ones_like: _like,
    np.empty_like: _like,
    np.full_like: _full_like,
    np.copyto: _copyto,
    np.einsum: _einsum,
    np.shape: _shape,
    np.ndim: lambda a: a.ndim,
    np.size: lambda a, axis=None: a.size if axis is None else a.shape[axis],
    np.result_type: lambda *args: np.result_type(*(_probe(a) for a in args)),
    np.asarray: lambda a, dtype=None, order=None, **kw: (
        a if dtype is None else a.astype(dtype, copy=False)
    ),
    np.ascontiguousarray: lambda a, dtype=None, **kw: (
        _meta(a).copy() if not _meta(a).flags.c_contiguous or dtype else a
    ),
    np.conj: lambda a, *args, **kw: a.conj(),
    np.may_share_memory: lambda a, b, max_work=None: True,
    np.shares_memory: lambda a, b, max_work=None: True,
    np.iscomplexobj: lambda a: a.dtype.kind == "c",
    np.isrealobj: lambda a: a.dtype.kind != "c",
    np.real: lambda a: _meta(a).real,
    np.imag: lambda a: _meta(a).imag,
}


# ------------------------------------------------------------------ the array module
def _dtype_of(dtype, default="float64"):
    return np.dtype(default if dtype is None else dtype)


def _factory(shape, dtype=None, order="C", *, like=None, **kw):
    return MetaArray(_norm_shape(shape), _dtype_of(dtype))


def _full(shape, fill_value, dtype=None, order="C", **kw):
    d = np.asarray(fill_value).dtype if dtype is None else dtype
    return MetaArray(_norm_shape(shape), np.dtype(d))


def _asarray(a, dtype=None, order=None, copy=None, **kw):
    if type(a) is MetaArray:
        return a if dtype is None else a.astype(dtype, copy=False)
    if hasattr(a, "shape") and hasattr(a, "dtype") and not isinstance(a, np.ndarray):
        a = np.asarray(a)  # (a CuPy array's metadata)
    arr = a if isinstance(a, np.ndarray) else np.asarray(a, dtype=dtype)
    d = arr.dtype if dtype is None else np.dtype(dtype)
    strides = c_strides(arr.shape, d.itemsize)
    if arr.ndim > 1 and not arr.flags.c_contiguous and d == arr.dtype:
        strides = _like_strides(MetaArray(arr.shape, d, arr.strides), d)
    return MetaArray(arr.shape, d, strides)


def _arange(start, stop=None, step=1, dtype=None, **kw):
    if stop is None:
        start, stop = 0, start
    n = max(0, math.ceil((stop - start) / step))
    d = np.result_type(start, stop, step) if dtype is None else dtype
    return MetaArray((n,), np.dtype(d))


def _eye(n, m=None, k=0, dtype=float, order="C", **kw):
    return MetaArray((n, n if m is None else m), np.dtype(dtype))


def _linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    return MetaArray((num,), _dtype_of(dtype))


def _as_strided(x, shape=None, strides=None, subok=False, writeable=True):
    x = _meta(x)
    return x._view(x.shape if shape is None else shape, x.strides if strides is None else strides)


def _sliding_window_view(x, window_shape, axis=None, *, subok=False, writeable=False):
    x = _meta(x)
    window_shape = _norm_shape(window_shape)
    axes = tuple(range(x.ndim)) if axis is None else _norm_shape(axis)
    shape, strides = list(x.shape), list(x.strides)
    for a, w in zip(axes, window_shape):
        shape[a] -= w - 1
        if shape[a] < 0:
            raise ValueError("window shape cannot be larger than input array shape")
        strides.append(x.strides[a])
    return x._view(shape + list(window_shape), strides)


_NAMESPACE = {
    "lib": types.SimpleNamespace(
        stride_tricks=types.SimpleNamespace(
            as_strided=_as_strided, sliding_window_view=_sliding_window_view
        )
    ),
    "zeros": _factory,
    "ones": _factory,
    "empty": _factory,
    "full": _full,
    "asarray": _asarray,
    "array": _asarray,
    "ascontiguousarray": _FUNCS[np.ascontiguousarray],
    "arange": _arange,
    "eye": _eye,
    "identity": lambda n, dtype=None, **kw: _eye(n, dtype=_dtype_of(dtype)),
    "linspace": _linspace,
    "ndarray": MetaArray,
}
_REFUSED = {"fromfunction", "frombuffer", "fromiter", "tri", "indices", "logspace",
            "geomspace", "random", "nonzero", "unique", "argwhere", "flatnonzero"}  # fmt: skip


class _MetaModule(types.ModuleType):
    """The meta device's array module: NumPy's names, its factories making meta arrays."""

    def __getattr__(self, name: str):
        if name in _REFUSED:
            raise NoData(f"numpy.{name} on the meta device")
        return getattr(np, name)


META_XP = _MetaModule("numtorch.meta_xp")
META_XP.__dict__.update(_NAMESPACE)


class MetaRng:
    """The meta device's random generator: a draw is its shape and dtype."""

    def random(self, size=None, dtype=np.float64, out=None):
        return MetaArray(_norm_shape(() if size is None else size), dtype)

    def standard_normal(self, size=None, dtype=np.float64, out=None):
        return self.random(size, dtype)

    def integers(self, low, high=None, size=None, dtype=np.int64, endpoint=False):
        return self.random(size, dtype)

    def uniform(self, low=0.0, high=1.0, size=None):
        return self.random(size)

    normal = uniform

    def permuted(self, x, axis=None, out=None):
        return x

    def __getattr__(self, name: str):
        raise NoData(f"numpy.random.Generator.{name} on the meta device")


META_RNG = MetaRng()
_install_operators()
