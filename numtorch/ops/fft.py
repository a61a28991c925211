"""Discrete Fourier transforms: three primitives, as PyTorch's ``_fft_c2c``, ``_fft_r2c`` and
``_fft_c2r``, and ``torch.fft``'s functions written over them.

Each primitive transforms over a tuple of dims with a normalization mode (0: none, 1: by
1/sqrt(n), 2: by 1/n, PyTorch's ``fft_norm_mode``). Kernels call ``scipy.fft`` (``cupy.fft``
on a GPU), which keeps float32 in complex64. The transforms are linear, so their jvps are the
op applied to the tangents; the vjps are PyTorch's: the adjoint transform for c2c,
``fft_r2c_backward`` (zero-fill the other half, inverse c2c, real part) and
``fft_c2r_backward`` (r2c, with the bins whose mirror image the onesided input leaves out
doubled; the imaginary parts of the DC and Nyquist bins, which c2r ignores, get none).

The public functions (``fft``, ``rfft2``, ``ihfftn``, ...) are composites made by one helper
per kind from PyTorch's argument handling (``canonicalize_fft_shape_and_dim_args``):
promotion of integers and bools to the default float dtype, padding or trimming to ``n``/``s``,
and PyTorch's error texts.
"""

from __future__ import annotations

import numpy as np

from .._core import dtype as dt
from .._core.dispatch import dispatch
from .._core.interpreter import factory
from .._core.meta import by_kernel
from .._core.op import LINEAR, ErrorInput, composite, defop
from .._core.out import write_out
from .._core.tensor import Tensor, wrap_dim
from .._opdb.samples import S
from ._batching import front
from ._families import COMPLEX_TOO, FLOATS
from .creation import arange
from .shape import cat

_NONE, _ROOT_N, _BY_N = 0, 1, 2

# scipy's ``norm`` for each (normalization, forward): scipy scales the forward transform
# by its norm and the inverse by the other one.
_SCIPY_NORM = {
    (_NONE, True): "backward",
    (_ROOT_N, True): "ortho",
    (_BY_N, True): "forward",
    (_NONE, False): "forward",
    (_ROOT_N, False): "ortho",
    (_BY_N, False): "backward",
}


def _fftmod(xp):
    if xp is not np:
        return xp.fft
    import scipy.fft  # on first use: its import costs a tenth of numtorch's

    return scipy.fft


_PARALLEL = 1 << 17  # elements from which SciPy's transforms run on every core


def _workers(xp, a) -> dict:
    """SciPy's ``workers=`` for a transform of a: all cores for large batches (PyTorch's
    transforms are threaded too), one for small ones, where threads cost more than they save."""
    return {"workers": -1} if xp is np and a.size >= _PARALLEL else {}


def _complex_of(d) -> np.dtype:
    return np.result_type(d, np.complex64)


# ------------------------------------------------------------------ layout
def _fft_layout(out, inputs, attrs):
    """PyTorch's layout of a transform's result: the dims not transformed outermost, in the
    input's stride order, then the transformed dims in that order too (r2c, c2r: the
    halved dim last)."""
    return _laid_out(out, inputs, attrs, False)


def _c2c_layout(out, inputs, attrs):
    return _laid_out(out, inputs, attrs, True)


def _laid_out(out, inputs, attrs, sort):
    a = inputs[0]
    if type(out) is not np.ndarray or out.ndim < 2:
        return out if type(out) is not np.ndarray else np.ascontiguousarray(out)
    dims = attrs["dim"]
    dims = (dims,) if isinstance(dims, int) else tuple(d % out.ndim for d in dims)
    strides = a.strides if isinstance(a, np.ndarray) else (0,) * out.ndim
    rest = sorted((d for d in range(out.ndim) if d not in dims), key=lambda d: -strides[d])
    if sort:
        dims = tuple(sorted(dims, key=lambda d: -strides[d]))
    else:  # the halved dim innermost, the others in the input's stride order
        dims = (*sorted(dims[:-1], key=lambda d: -strides[d]), dims[-1])
    order = (*rest, *dims)
    if order == tuple(range(out.ndim)):
        return np.ascontiguousarray(out)
    moved = np.ascontiguousarray(out.transpose(order))
    return moved.transpose(np.argsort(order))


# ------------------------------------------------------------------ batching
def _fft_rule(op):
    """Move the vmapped dim first and shift the transformed dims past it."""

    def rule(vmap, args, bdims, attrs):
        x = front(args[0], bdims[0])
        rank = x.dim() - (bdims[0] is not None)
        shift = 1 if bdims[0] is not None else 0
        new = dict(attrs)
        new["dim"] = tuple(wrap_dim(d, rank) + shift for d in attrs["dim"])
        return dispatch(op, (x,), new), 0 if shift else None

    return rule


class _Rule:
    """``defop`` binds a rule generator to its op."""

    def bind(self, op):
        return _fft_rule(op)


# PyTorch's private _fft_* do not check their dims (a bad one trips an internal assert or
# crashes), so the bad-input sweep cannot call them: forward values are compared with torch
# in tests/test_fft.py and through torch.fft's functions, gradients by finite differences.
_PRIVATE = {"no_oracle": True}


def _no_half_fft(arrays, attrs):
    raise RuntimeError("MKL FFT doesn't support tensors of type: Half")


def _transform(name: str, kernel, vjp, layout, samples):
    """One of the three transform primitives: linear (the jvp is the transform of the
    tangent), over a dims attribute the batch rule shifts, private as PyTorch's _fft_*."""
    return defop(
        name,
        kernel,
        nin=1,
        vjp=vjp,
        jvp=LINEAR,
        batch_rule=_Rule(),
        layout=layout,
        samples=samples,
        api="_" + name,
        test=_PRIVATE,
        meta=by_kernel,
        complex32=_no_half_fft,  # (PyTorch's MKL transforms refuse complex32)
    )


def _dims(dim, ndim: int) -> tuple:
    return tuple(wrap_dim(d, ndim) for d in dim)


# ------------------------------------------------------------------ c2c
def _fft_c2c(xp, input, dim, normalization, forward):
    dim = _dims(dim, input.ndim)
    if input.size == 0:
        return xp.zeros(input.shape, _complex_of(input.dtype))
    f = _fftmod(xp).fftn if forward else _fftmod(xp).ifftn
    return f(input, axes=dim, norm=_SCIPY_NORM[normalization, bool(forward)], **_workers(xp, input))


def _c2c_vjp(g, dim, normalization, forward):
    return fft_c2c(g, dim, normalization, not forward)


def _complex_samples(make):
    c = _complex_of(make.dtype)
    yield S((make((5,), dtype=c), (0,), 0, True))
    yield S((make((3, 4), dtype=c), (1,), 2, False))
    yield S((make((3, 4, 2), dtype=c), (0, 2), 1, True))
    yield S((make((4, 3), dtype=c), (1, 0), 0, False))


fft_c2c_p = _transform("fft_c2c", _fft_c2c, _c2c_vjp, _c2c_layout, _complex_samples)
fft_c2c = fft_c2c_p.fn


# ------------------------------------------------------------------ r2c
def _fft_r2c(xp, input, dim, normalization, onesided):
    dim = _dims(dim, input.ndim)
    mod = _fftmod(xp)
    norm = _SCIPY_NORM[normalization, True]
    if input.size == 0:
        shape = list(input.shape)
        if onesided and shape:
            shape[dim[-1]] = shape[dim[-1]] // 2 + 1
        return xp.zeros(shape, _complex_of(input.dtype))
    if len(dim) == 1:  # the 1-D entry points skip scipy's n-D argument handling
        f = mod.rfft if onesided else mod.fft
        return f(input, axis=dim[0], norm=norm, **_workers(xp, input))
    if onesided:
        return mod.rfftn(input, axes=dim, norm=norm, **_workers(xp, input))
    return mod.fftn(input, axes=dim, norm=norm, **_workers(xp, input))


def _r2c_vjp(g, input_shape, dim, normalization, onesided):
    """PyTorch's fft_r2c_backward: the other half of a onesided result's gradient is zero;
    the inverse c2c of the whole and its real part."""
    if onesided:
        last = wrap_dim(dim[-1], len(input_shape))
        missing = input_shape[last] - g.shape[last]
        if missing > 0:
            shape = list(g.shape)
            shape[last] = missing
            g = cat((g, g.new_zeros(shape)), last)
    return fft_c2c(g, dim, normalization, False).real


def _real_samples(make):
    yield S((make((6,)), (0,), 0, True))
    yield S((make((5,)), (0,), 1, False))
    yield S((make((3, 5)), (1,), 2, True))
    yield S((make((4, 3, 2)), (0, 1), 0, True))
    yield S((make((4, 3)), (1, 0), 1, False))


fft_r2c_p = _transform("fft_r2c", _fft_r2c, _r2c_vjp, _fft_layout, _real_samples)
fft_r2c = fft_r2c_p.fn


# ------------------------------------------------------------------ c2r
def _fft_c2r(xp, input, dim, normalization, last_dim_size):
    dim = _dims(dim, input.ndim)
    shape = [input.shape[d] for d in dim]
    shape[-1] = last_dim_size
    real = np.empty(0, input.dtype).real.dtype
    if input.size == 0:
        out = list(input.shape)
        out[dim[-1]] = last_dim_size
        return xp.zeros(out, real)
    mod = _fftmod(xp)
    norm = _SCIPY_NORM[normalization, False]
    if len(dim) == 1:
        return mod.irfft(input, n=last_dim_size, axis=dim[0], norm=norm, **_workers(xp, input))
    return mod.irfftn(input, s=shape, axes=dim, norm=norm, **_workers(xp, input))


def _c2r_vjp(g, dim, normalization, last_dim_size):
    """PyTorch's fft_c2r_backward: r2c of the gradient, the bins counted twice by conjugate
    symmetry doubled."""
    gi = fft_r2c(g, dim, normalization, True)
    last = wrap_dim(dim[-1], g.dim())
    m = gi.shape[last]
    double = g.shape[last] - m
    if double <= 0:
        return gi
    w = arange(m, dtype=g.dtype, device=g.device)
    w = ((w >= 1) & (w <= double)).to(g.dtype) + 1
    return gi * w.reshape((m,) + (1,) * (g.dim() - 1 - last))


def _c2r_samples(make):
    c = _complex_of(make.dtype)
    yield S((make((4,), dtype=c), (0,), 0, 6))
    yield S((make((4,), dtype=c), (0,), 1, 7))
    yield S((make((3, 3), dtype=c), (1,), 2, 4))
    yield S((make((3, 4, 2), dtype=c), (0, 1), 0, 6))
    yield S((make((2, 3), dtype=c), (1, 0), 0, 3))


fft_c2r_p = _transform("fft_c2r", _fft_c2r, _c2r_vjp, _fft_layout, _c2r_samples)
fft_c2r = fft_c2r_p.fn


# ------------------------------------------------------------------ argument handling
def _norm_mode(norm, forward: bool) -> int:
    if norm is None or norm == "backward":
        return _NONE if forward else _BY_N
    if norm == "forward":
        return _BY_N if forward else _NONE
    if norm == "ortho":
        return _ROOT_N
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _promote(x: Tensor, require_complex: bool) -> Tensor:
    """PyTorch's promote_tensor_fft: integers and bools to the default float dtype; half
    types refused on the CPU; complex when asked."""
    d = x.dtype
    if d.is_complex:
        return x
    if not d.is_floating_point:
        d = dt.get_default_dtype()
    if d not in (dt.float32, dt.float64):
        raise RuntimeError(f"Unsupported dtype {d.scalar_name}")
    if require_complex:
        d = d.to_complex()
    return x if d == x.dtype else x.to(d)


def _wrap(dims, ndim: int) -> list:
    out = []
    for d in dims:
        if ndim == 0:
            raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
        out.append(wrap_dim(d, ndim))
    return out


def _check_points(n) -> None:
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def _shape_and_dims(x: Tensor, s, dim):
    """PyTorch's canonicalize_fft_shape_and_dim_args: (shape, dims), both lists."""
    ndim = x.dim()
    dims = None
    if dim is not None:
        dims = _wrap((dim,) if isinstance(dim, int) else dim, ndim)
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        s = list(s)
        if dims is not None and len(dims) != len(s):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(s) > ndim:
            raise RuntimeError(
                f"Got shape with {len(s)} values but input tensor only has {ndim} dimensions."
            )
        if dims is None:
            dims = list(range(ndim - len(s), ndim))
        shape = [x.shape[d] if n == -1 else int(n) for d, n in zip(dims, s)]
    elif dims is None:
        dims = list(range(ndim))
        shape = list(x.shape)
    else:
        shape = [x.shape[d] for d in dims]
    for n in shape:
        _check_points(n)
    return shape, dims


def _resize(x: Tensor, dims, sizes) -> Tensor:
    """x zero-padded or trimmed at the end of each of ``dims`` to ``sizes``."""
    for d, n in zip(dims, sizes):
        have = x.shape[d]
        if n < have:
            x = x.narrow(d, 0, n)
        elif n > have:
            shape = list(x.shape)
            shape[d] = n - have
            x = cat((x, x.new_zeros(shape)), d)
    return x


def _out(fname: str, out, result, want_complex: bool):
    if out is None:
        return result
    if want_complex and not out.dtype.is_complex:
        raise RuntimeError(
            f"{fname} expects a complex output tensor, but got {out.dtype.scalar_name}"
        )
    if not want_complex and not out.dtype.is_floating_point:
        raise RuntimeError(
            f"{fname} expects a floating point output tensor, but got {out.dtype.scalar_name}"
        )
    return write_out(out, result)


def _c2c_or_copy(x: Tensor, dims, norm: int, forward: bool, copied: bool) -> Tensor:
    if dims:
        return fft_c2c(x, tuple(dims), norm, forward)
    return x if copied else x.clone()


# ------------------------------------------------------------------ the six kinds
def _fft_kind(fname, input, s, dim, norm, forward):
    """fft/ifft (one dim, ``s`` is ``(n,)``) and fftn/ifftn; a real input of the 1-D
    functions goes through r2c (conjugated for the inverse), as PyTorch's."""
    if fname in ("fft", "ifft") and not input.dtype.is_complex:
        x = _promote(input, False)
        shape, dims = _shape_and_dims(x, s, dim)
        x = _resize(x, dims, shape)
        r = fft_r2c(x, tuple(dims), _norm_mode(norm, forward), False)
        return r if forward else r.conj()
    x = _promote(input, True)
    shape, dims = _shape_and_dims(x, s, dim)
    r = _resize(x, dims, shape)
    return _c2c_or_copy(r, dims, _norm_mode(norm, forward), forward, r is not input)


def _real_check(fname, input, nd: bool):
    if not input.dtype.is_complex:
        return
    name = input.dtype.scalar_name
    if fname == "ihfftn":
        raise RuntimeError(f"Only supports floating-point dtypes, but found: {name}")
    what = "real-valued" if nd else "real"
    raise RuntimeError(f"{fname} expects a {what} input tensor, but got {name}")


def _rfft_kind(fname, input, s, dim, norm, forward, nd):
    """rfft/rfftn (forward) and ihfft/ihfftn (inverse, conjugated)."""
    _real_check(fname, input, nd)
    x = _promote(input, False)
    shape, dims = _shape_and_dims(x, s, dim)
    if not shape:
        raise RuntimeError(f"{fname} must transform at least one axis")
    x = _resize(x, dims, shape)
    mode = _norm_mode(norm, forward)
    if forward:
        return fft_r2c(x, tuple(dims), mode, True)
    r = fft_r2c(x, (dims[-1],), mode, True)
    if len(dims) == 1:
        return r.conj()
    return fft_c2c(r.conj(), tuple(dims[:-1]), mode, False)


def _irfft_kind(fname, input, s, dim, norm, forward):
    """irfft/irfftn (inverse) and hfft/hfftn (forward of the conjugate)."""
    x = _promote(input, True)
    shape, dims = _shape_and_dims(x, s, dim)
    if not shape:
        raise RuntimeError(f"{fname} must transform at least one axis")
    given = s is not None and s[-1] != -1
    last = shape[-1] if given else 2 * (x.shape[dims[-1]] - 1)
    _check_points(last)
    shape[-1] = last // 2 + 1
    if fname in ("irfft", "hfft") and not given:
        shape[-1] = x.shape[dims[-1]]  # the 1-D functions resize only for a given n
    x = _resize(x, dims, shape)
    mode = _norm_mode(norm, forward)
    if forward:
        if len(dims) > 1:
            x = fft_c2c(x, tuple(dims[:-1]), mode, True)
        return fft_c2r(x.conj(), (dims[-1],), mode, last)
    return fft_c2r(x, tuple(dims), mode, last)


# ------------------------------------------------------------------ samples
def _one_d_samples(kind: str):
    def samples(make):
        c = _complex_of(make.dtype)
        real_only = kind in ("rfft", "ihfft")
        complex_in = kind in ("irfft", "hfft")
        for d in (None if real_only else c, None if complex_in else make.dtype):
            if d is None:
                continue
            yield S((make((6,), dtype=d),))
            yield S((make((3, 5), dtype=d),), {"n": 8, "dim": 0, "norm": "ortho"})
            yield S((make((3, 5), dtype=d), 4), {"norm": "forward"})
            yield S((make((2, 7), dtype=d),), {"dim": -1, "norm": "backward"})

    return samples


def _one_d_errors(kind: str):
    def errors(make):
        yield ErrorInput(
            S((make((4, 6)),), {"n": 0}), RuntimeError, r"Invalid number of data points \(0\)"
        )
        yield ErrorInput(S((make((4, 6)),), {"dim": 2}), IndexError, "Dimension out of range")
        yield ErrorInput(
            S((make(()),)), IndexError, "Dimension specified as -1 but tensor has no dimensions"
        )
        yield ErrorInput(
            S((make((4,)),), {"norm": "bad"}), RuntimeError, 'Invalid normalization mode: "bad"'
        )
        if kind in ("rfft", "ihfft"):
            yield ErrorInput(
                S((make((4,), dtype=np.complex64),)),
                RuntimeError,
                f"{kind} expects a real input tensor, but got ComplexFloat",
            )
        yield ErrorInput(S((make((4,), dtype=np.float16),)), RuntimeError, "Unsupported dtype Half")

    return errors


def _n_d_samples(kind: str, two: bool):
    def samples(make):
        c = _complex_of(make.dtype)
        real_only = kind in ("rfft", "ihfft")
        complex_in = kind in ("irfft", "hfft")
        for d in (None if real_only else c, None if complex_in else make.dtype):
            if d is None:
                continue
            yield S((make((4, 6), dtype=d),))
            yield S((make((3, 4, 5), dtype=d),), {"s": (3, 6), "norm": "ortho"})
            yield S((make((3, 4, 5), dtype=d),), {"dim": (0, 2), "norm": "forward"})
            yield S((make((3, 4, 5), dtype=d), (-1, 4), (2, -3)))
            if not two:
                yield S((make((2, 3, 4), dtype=d),))
                yield S((make((2, 3, 4), dtype=d),), {"s": (5,)})

    return samples


def _n_d_errors(kind: str, two: bool):
    fname = kind + "n"

    def errors(make):
        yield ErrorInput(
            S((make((4, 6)),), {"dim": (0, 0)}), RuntimeError, "FFT dims must be unique"
        )
        yield ErrorInput(
            S((make((4, 6)),), {"s": (3,), "dim": (0, 1)}),
            RuntimeError,
            "When given, dim and shape arguments must have the same length",
        )
        if not two:
            yield ErrorInput(
                S((make((4, 6)),), {"s": (3, 3, 3)}),
                RuntimeError,
                r"Got shape with 3 values but input tensor only has 2 dimensions\.",
            )
        yield ErrorInput(
            S((make((4, 6)),), {"s": (0, 3)}),
            RuntimeError,
            r"Invalid number of data points \(0\) specified",
        )
        if not two and kind in ("rfft", "irfft", "ihfft"):
            yield ErrorInput(
                S((make((4, 6)),), {"dim": ()}),
                RuntimeError,
                f"{fname} must transform at least one axis",
            )
        if kind == "rfft":
            yield ErrorInput(
                S((make((4, 6), dtype=np.complex64),)),
                RuntimeError,
                "rfftn expects a real-valued input tensor, but got ComplexFloat",
            )
        if kind == "ihfft":
            yield ErrorInput(
                S((make((4, 6), dtype=np.complex64),)),
                RuntimeError,
                "Only supports floating-point dtypes, but found: ComplexFloat",
            )

    return errors


# ------------------------------------------------------------------ the public functions
_KINDS = {
    # name: (implementation, forward, complex result)
    "fft": (_fft_kind, True, True),
    "ifft": (_fft_kind, False, True),
    "rfft": (_rfft_kind, True, True),
    "ihfft": (_rfft_kind, False, True),
    "irfft": (_irfft_kind, False, False),
    "hfft": (_irfft_kind, True, False),
}


def _dtypes(kind: str) -> dict:
    """The op database's dtypes: complex too for the transforms that take complex input."""
    takes_complex = kind in ("fft", "ifft", "irfft", "hfft")
    # (complex64 sums lose more digits than the generic tolerance: tests/test_fft.py)
    return {"dtypes": (*FLOATS, "complex128") if takes_complex else FLOATS}


def _run(kind, fname, input, s, dim, norm, out, nd):
    impl, forward, complex_result = _KINDS[kind]
    if impl is _rfft_kind:
        r = impl(fname, input, s, dim, norm, forward, nd)
    else:
        r = impl(fname, input, s, dim, norm, forward)
    return _out(fname, out, r, complex_result)


def _one_d(kind: str):
    def fn(input, n=None, dim=-1, norm=None, *, out=None):
        return _run(kind, kind, input, None if n is None else (n,), (dim,), norm, out, False)

    fn.__name__ = fn.__qualname__ = kind
    fn.__doc__ = f"torch.fft.{kind}: the 1-D transform over ``dim``."
    return composite(
        fn,
        name=f"fft_{kind}",
        api=f"fft.{kind}",
        samples=_one_d_samples(kind),
        error_samples=_one_d_errors(kind),
        test=_dtypes(kind),
        autocast="fp32",
    )


def _two_d(kind: str):
    def fn(input, s=None, dim=(-2, -1), norm=None, *, out=None):
        return _run(kind, kind + "n", input, s, dim, norm, out, True)

    fn.__name__ = fn.__qualname__ = kind + "2"
    fn.__doc__ = f"torch.fft.{kind}2: the 2-D transform over ``dim``."
    return composite(
        fn,
        name=f"fft_{kind}2",
        api=f"fft.{kind}2",
        samples=_n_d_samples(kind, True),
        error_samples=_n_d_errors(kind, True),
        test=_dtypes(kind),
        autocast=None if kind in ("hfft", "ihfft") else "fp32",  # (not in PyTorch's list)
    )


def _n_d(kind: str):
    def fn(input, s=None, dim=None, norm=None, *, out=None):
        return _run(kind, kind + "n", input, s, dim, norm, out, True)

    fn.__name__ = fn.__qualname__ = kind + "n"
    fn.__doc__ = f"torch.fft.{kind}n: the N-D transform over ``dim`` (all dims by default)."
    return composite(
        fn,
        name=f"fft_{kind}n",
        api=f"fft.{kind}n",
        samples=_n_d_samples(kind, False),
        error_samples=_n_d_errors(kind, False),
        test=_dtypes(kind),
        autocast=None if kind in ("hfft", "ihfft") else "fp32",  # (not in PyTorch's list)
    )


fft = _one_d("fft")
ifft = _one_d("ifft")
rfft = _one_d("rfft")
irfft = _one_d("irfft")
hfft = _one_d("hfft")
ihfft = _one_d("ihfft")
fft2 = _two_d("fft")
ifft2 = _two_d("ifft")
rfft2 = _two_d("rfft")
irfft2 = _two_d("irfft")
hfft2 = _two_d("hfft")
ihfft2 = _two_d("ihfft")
fftn = _n_d("fft")
ifftn = _n_d("ifft")
rfftn = _n_d("rfft")
irfftn = _n_d("irfft")
hfftn = _n_d("hfft")
ihfftn = _n_d("ihfft")


# ------------------------------------------------------------------ shifts
def _shift_samples(make):
    yield S((make((5,)),))
    yield S((make((4, 5)),), {"dim": 0})
    yield S((make((4, 5, 3)),), {"dim": (0, -1)})
    yield S((make((4, 5), dtype=_complex_of(make.dtype)),))


def _shift(input, dim, inverse: bool):
    if dim is None:
        dims = list(range(input.dim()))
    else:
        dims = [wrap_dim(d, input.dim()) for d in ((dim,) if isinstance(dim, int) else dim)]
    if not dims:
        raise RuntimeError("`shifts` required")
    shifts = [(input.shape[d] + inverse) // 2 for d in dims]
    return input.roll(shifts, dims)


@composite(
    samples=_shift_samples,
    name="fft_fftshift",
    api="fft.fftshift",
    test=COMPLEX_TOO,
)
def fftshift(input, dim=None):
    """The zero-frequency term moved to the middle of each of ``dim``."""
    return _shift(input, dim, False)


@composite(
    samples=_shift_samples,
    name="fft_ifftshift",
    api="fft.ifftshift",
    test=COMPLEX_TOO,
)
def ifftshift(input, dim=None):
    """The inverse of ``fftshift``."""
    return _shift(input, dim, True)


# ------------------------------------------------------------------ frequencies
def _freq(fname, n, d, out, dtype, device, requires_grad, onesided):
    kind = dt.to_dtype(dtype) if dtype is not None else dt.get_default_dtype()
    if not (kind.is_floating_point or kind.is_complex):
        raise RuntimeError(f"{fname} requires a floating point or complex dtype")
    count = n // 2 + 1 if onesided else n
    r = arange(count, dtype=kind, device=device)
    if not onesided:
        r = cat((r[: (n + 1) // 2], r[(n + 1) // 2 :] - n))
    r = r * (1.0 / (n * d))
    if out is not None:
        return write_out(out, r)
    if requires_grad:
        r._set_requires_grad(True)
    return r


@factory
def fftfreq(
    n,
    d=1.0,
    *,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    pin_memory=False,
    requires_grad=False,
) -> Tensor:
    """The sample frequencies of ``fft`` of a length-``n`` signal with spacing ``d``."""
    return _freq("fftfreq", n, d, out, dtype, device, requires_grad, False)


@factory
def rfftfreq(
    n,
    d=1.0,
    *,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    pin_memory=False,
    requires_grad=False,
) -> Tensor:
    """The sample frequencies of ``rfft`` of a length-``n`` signal with spacing ``d``."""
    return _freq("rfftfreq", n, d, out, dtype, device, requires_grad, True)
