"""NumPy functions whose results' shapes and dtypes follow from their operands' alone
(flips, tilings, sorts, gathers, triangles, linear algebra, Fourier transforms), answered
on meta arrays so that kernels calling them run on the meta device. Values are never read:
an index is taken to be in range, as PyTorch's meta kernels take it."""

from __future__ import annotations

import numpy as np

from .meta_array import _FUNCS, _UFUNC_METHODS, MetaArray, NoData, _axes, _meta, _probe, _quiet


def _new(shape, dtype) -> MetaArray:
    return MetaArray(tuple(shape), dtype)


def _same_shape(a, *args, **kw) -> MetaArray:
    a = _meta(a)
    return _new(a.shape, a.dtype)


def _elementwise_fn(fn):
    """A NumPy function applied elementwise to broadcast operands: its dtype from probes."""

    def run(*args, **kw):
        kw.pop("out", None)
        probes = [_probe(a) for a in args]
        kprobes = {k: _probe(v) for k, v in kw.items()}
        d = np.asarray(_quiet(fn, *probes, **kprobes)).dtype
        shapes = [a.shape for a in list(args) + list(kw.values()) if hasattr(a, "shape")]
        return _new(np.broadcast_shapes(*shapes), d)

    return run


def _diagonal(a, offset=0, axis1=0, axis2=1) -> MetaArray:
    a = _meta(a)
    x, y = _axes((axis1, axis2), a.ndim)
    n = max(0, min(a.shape[x] - max(-offset, 0), a.shape[y] - max(offset, 0)))
    rest = [i for i in range(a.ndim) if i not in (x, y)]
    step = a.strides[x] + a.strides[y]
    return a._view([a.shape[i] for i in rest] + [n], [a.strides[i] for i in rest] + [step])


def _isin(element, test_elements, assume_unique=False, invert=False, **kw) -> MetaArray:
    return _new(_meta(element).shape, np.bool_)


def _tile(a, reps) -> MetaArray:
    a = _meta(a)
    reps = (reps,) if isinstance(reps, (int, np.integer)) else tuple(reps)
    n = max(len(reps), a.ndim)
    shape = (1,) * (n - a.ndim) + a.shape
    reps = (1,) * (n - len(reps)) + reps
    return _new([s * r for s, r in zip(shape, reps)], a.dtype)


def _repeat(a, repeats, axis=None) -> MetaArray:
    a = _meta(a)
    if hasattr(repeats, "shape") and repeats.ndim:
        raise NoData("numpy.repeat by an array of counts reads values")
    r = int(repeats)
    if axis is None:
        return _new((a.size * r,), a.dtype)
    ax = _axes(axis, a.ndim)[0]
    return _new([n * r if i == ax else n for i, n in enumerate(a.shape)], a.dtype)


def _drop_axes(a, axes, dtype) -> MetaArray:
    return _new([n for i, n in enumerate(a.shape) if i not in axes], dtype)


def _trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None) -> MetaArray:
    a = _meta(a)
    d = np.trace(np.zeros((1, 1), a.dtype), dtype=dtype).dtype
    return _drop_axes(a, _axes((axis1, axis2), a.ndim), d)


def _argsort(a, axis=-1, kind=None, order=None, **kw) -> MetaArray:
    a = _meta(a)
    return _new(a.shape if axis is not None else (a.size,), np.intp)


def _sort(a, axis=-1, kind=None, order=None, **kw) -> MetaArray:
    a = _meta(a)
    return _new(a.shape if axis is not None else (a.size,), a.dtype)


def _take_along_axis(arr, indices, axis=-1) -> MetaArray:
    arr, indices = _meta(arr), _meta(indices)
    if axis is None:
        return _new(indices.shape, arr.dtype)
    ax = _axes(axis, arr.ndim)[0]
    shape = list(arr.shape)
    shape[ax] = indices.shape[ax]
    return _new(np.broadcast_shapes(tuple(shape), indices.shape), arr.dtype)


def _take(a, indices, axis=None, out=None, mode="raise") -> MetaArray:
    a = _meta(a)
    ishape = tuple(np.shape(indices)) if not hasattr(indices, "shape") else indices.shape
    if axis is None:
        return _new(ishape, a.dtype)
    ax = _axes(axis, a.ndim)[0]
    return _new(a.shape[:ax] + ishape + a.shape[ax + 1 :], a.dtype)


def _bincount(x, weights=None, minlength=0) -> MetaArray:
    if not minlength:
        raise NoData("numpy.bincount's length reads values")
    d = np.intp if weights is None else np.result_type(_probe(weights), np.float64)
    return _new((minlength,), d)


def _dot(a, b, out=None) -> MetaArray:
    a, b = _meta(a), _meta(b)
    if not a.ndim or not b.ndim:
        return _elementwise_fn(np.multiply)(a, b)
    if b.ndim == 1:
        shape = a.shape[:-1]
    else:
        shape = a.shape[:-1] + b.shape[:-2] + b.shape[-1:]
    return _new(shape, np.result_type(_probe(a), _probe(b)))


def _vdot(a, b) -> MetaArray:
    return _new((), np.result_type(_probe(a), _probe(b)))


def _cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None) -> MetaArray:
    a, b = _meta(a), _meta(b)
    return _new(np.broadcast_shapes(a.shape, b.shape), np.result_type(_probe(a), _probe(b)))


# ------------------------------------------------------------------ linear algebra
def _lin_dtype(fn, a, **kw):
    """The dtypes a linalg function gives for ``a``'s dtype (on a 2x2 identity)."""
    res = _quiet(fn, np.eye(2, dtype=a.dtype), **kw)
    return [np.asarray(r).dtype for r in (res if isinstance(res, tuple) else (res,))]


def _inv(a) -> MetaArray:
    a = _meta(a)
    return _new(a.shape, _lin_dtype(np.linalg.inv, a)[0])


def _cholesky(a, upper=False) -> MetaArray:
    a = _meta(a)
    return _new(a.shape, _lin_dtype(np.linalg.cholesky, a)[0])


def _det(a) -> MetaArray:
    a = _meta(a)
    return _new(a.shape[:-2], _lin_dtype(np.linalg.det, a)[0])


def _slogdet(a):
    a = _meta(a)
    d = _lin_dtype(np.linalg.slogdet, a)
    return tuple(_new(a.shape[:-2], x) for x in d)


def _eigh(a, UPLO="L"):
    a = _meta(a)
    w, v = _lin_dtype(np.linalg.eigh, a)
    return _new(a.shape[:-1], w), _new(a.shape, v)


def _eigvalsh(a, UPLO="L") -> MetaArray:
    a = _meta(a)
    return _new(a.shape[:-1], _lin_dtype(np.linalg.eigvalsh, a)[0])


def _eig(a):
    a = _meta(a)
    w, v = (np.dtype(np.result_type(d, np.complex64)) for d in _lin_dtype(np.linalg.eig, a))
    return _new(a.shape[:-1], w), _new(a.shape, v)


def _eigvals(a) -> MetaArray:
    a = _meta(a)
    return _new(a.shape[:-1], np.result_type(_lin_dtype(np.linalg.eigvals, a)[0], np.complex64))


def _solve(a, b) -> MetaArray:
    a, b = _meta(a), _meta(b)
    d = np.result_type(_lin_dtype(np.linalg.inv, a)[0], b.dtype)
    if b.ndim == 1:
        return _new(np.broadcast_shapes(a.shape[:-2]) + b.shape, d)
    return _new(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + b.shape[-2:], d)


def _svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    a = _meta(a)
    m, n = a.shape[-2:]
    k = min(m, n)
    dts = _lin_dtype(np.linalg.svd, a)
    batch = a.shape[:-2]
    if not compute_uv:
        return _new(batch + (k,), _lin_dtype(np.linalg.svd, a, compute_uv=False)[0])
    u_cols, v_rows = (m, n) if full_matrices else (k, k)
    return (
        _new(batch + (m, u_cols), dts[0]),
        _new(batch + (k,), dts[1]),
        _new(batch + (v_rows, n), dts[2]),
    )


def _qr(a, mode="reduced"):
    a = _meta(a)
    m, n = a.shape[-2:]
    k = min(m, n)
    d = _lin_dtype(np.linalg.qr, a)[0]
    batch = a.shape[:-2]
    r = _new(batch + ((m if mode == "complete" else k), n), d)
    if mode == "r":
        return r
    return _new(batch + (m, m if mode == "complete" else k), d), r


# ------------------------------------------------------------------ Fourier transforms
def _fft(kind: str, n_d: bool):
    """A NumPy transform's result: ``kind`` c2c, r2c (last axis halved) or c2r (last axis
    from ``n``/``s``, else ``2 * (m - 1)``)."""
    fn = getattr(np.fft, ("i" if kind == "c2r" else "") + "rfft" if kind != "c2c" else "fft")

    def run(a, s=None, axes=None, norm=None, out=None, **kw):
        a = _meta(a)
        if n_d:
            axes = tuple(range(a.ndim))[-len(s) :] if axes is None and s else axes
            axes = _axes(tuple(range(a.ndim)) if axes is None else axes, a.ndim)
            sizes = list(s) if s is not None else [a.shape[x] for x in axes]
        else:
            axes = _axes(kw.get("axis", -1) if axes is None else axes, a.ndim)
            sizes = [s] if s is not None else [a.shape[axes[0]]]
            if s is None and kind == "c2r":
                sizes = [2 * (a.shape[axes[0]] - 1)]
        if n_d and s is None and kind == "c2r":
            sizes[-1] = 2 * (a.shape[axes[-1]] - 1)
        shape = list(a.shape)
        for x, m in zip(axes, sizes):
            shape[x] = m
        if kind == "r2c":
            shape[axes[-1]] = sizes[-1] // 2 + 1
        d = _quiet(fn, np.ones((2,), a.dtype)).dtype
        return _new(shape, d)

    return run


def _fft_1d(kind: str):
    nd = _fft(kind, False)

    def run(a, n=None, axis=-1, norm=None, out=None, **kw):
        return nd(a, n, None, norm, axis=axis)

    return run


def _ufunc_outer(ufunc, a, b, **kw) -> MetaArray:
    shape = tuple(np.shape(a) if not hasattr(a, "shape") else a.shape) + tuple(
        np.shape(b) if not hasattr(b, "shape") else b.shape
    )
    return _new(shape, np.asarray(_quiet(ufunc, _probe(a), _probe(b), **kw)).dtype)


_UFUNC_METHODS.update(
    {"outer": _ufunc_outer, "at": lambda ufunc, *args, **kw: None}  # (at: in place)
)


_FUNCS.update(
    {
        np.flip: lambda m, axis=None: _same_shape(m),
        np.fliplr: _same_shape,
        np.flipud: _same_shape,
        np.roll: lambda a, shift, axis=None: _same_shape(a),
        np.tril: lambda m, k=0: _same_shape(m),
        np.triu: lambda m, k=0: _same_shape(m),
        np.tile: _tile,
        np.diagonal: _diagonal,
        np.isin: _isin,
        np.put: lambda a, ind, v, mode="raise": None,
        np.repeat: _repeat,
        np.trace: _trace,
        np.sort: _sort,
        np.argsort: _argsort,
        np.take_along_axis: _take_along_axis,
        np.take: _take,
        np.bincount: _bincount,
        np.dot: _dot,
        np.vdot: _vdot,
        np.cross: _cross,
        np.clip: _elementwise_fn(np.clip),
        np.nan_to_num: _elementwise_fn(np.nan_to_num),
        np.round: _elementwise_fn(np.round),
        np.around: _elementwise_fn(np.round),
        np.isposinf: _elementwise_fn(np.isposinf),
        np.isneginf: _elementwise_fn(np.isneginf),
        np.sinc: _elementwise_fn(np.sinc),
        np.linalg.inv: _inv,
        np.linalg.cholesky: _cholesky,
        np.linalg.det: _det,
        np.linalg.slogdet: _slogdet,
        np.linalg.eigh: _eigh,
        np.linalg.eigvalsh: _eigvalsh,
        np.linalg.eig: _eig,
        np.linalg.eigvals: _eigvals,
        np.linalg.solve: _solve,
        np.linalg.svd: _svd,
        np.linalg.qr: _qr,
        np.fft.fftn: _fft("c2c", True),
        np.fft.ifftn: _fft("c2c", True),
        np.fft.rfftn: _fft("r2c", True),
        np.fft.irfftn: _fft("c2r", True),
        np.fft.fft: _fft_1d("c2c"),
        np.fft.ifft: _fft_1d("c2c"),
        np.fft.rfft: _fft_1d("r2c"),
        np.fft.irfft: _fft_1d("c2r"),
    }
)


def _method(fn):
    return lambda a, *args, **kw: fn(a, *args, **kw)


def _clip_method(a, min=None, max=None, **kw):
    return _FUNCS[np.clip](a, min, max)


MetaArray.clip = _clip_method
for _name in ("diagonal", "take", "repeat", "argsort", "round", "trace"):
    setattr(MetaArray, _name, _method(getattr(np, _name)))
