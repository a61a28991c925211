"""Complex numbers from and to their parts: view_as_real, view_as_complex, complex, polar;
the conjugate bit (conj, is_conj, resolve_conj) and the negative bit (is_neg, resolve_neg).

numtorch's ``conj`` is eager (NumPy has no conjugate view): its result holds the conjugated
values and carries PyTorch's conjugate bit, so ``is_conj``, ``resolve_conj`` and
``view_as_real``'s refusal behave as PyTorch's; views of it keep the bit.
"""

from __future__ import annotations

import numpy as np

from .._core import dtype as dt
from .._core.dispatch import dispatch
from .._core.layout import follow_inputs
from .._core.meta import by_kernel
from .._core.methods import tensor_methods
from .._core.op import LINEAR, ErrorInput, composite, defop
from .._core.tensor import Tensor
from .._opdb.samples import S
from ._batching import elementwise, front
from ._families import COMPLEX_TOO, view_op
from .strided import array_offset


def _complex_of(make):
    return np.complex64 if make.dtype == np.float32 else np.complex128


def _real_of(make):
    return np.float32 if make.dtype == np.float32 else np.float64


# ------------------------------------------------------------------ view_as_real
def _view_as_real(xp, input):
    if not dt.is_complex_np(input.dtype):
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return input[..., None].view(dt.part(xp, input).dtype)


def _view_as_real_rule(vmap, args, bdims, attrs):
    (x,), (bd,) = args, bdims
    return dispatch(view_as_real_p, (x,), attrs), bd


def _view_as_real_samples(make):
    c = _complex_of(make)
    yield S((make((2, 3), dtype=c),))
    yield S((np.asarray(make((), dtype=c)),), name="0-d")
    yield S((make((3, 4), dtype=c)[:, ::2],), name="strided")


def _view_as_real_errors(make):
    yield ErrorInput(
        S((make((3,)),)), RuntimeError, "view_as_real is only supported for complex tensors"
    )


view_as_real_p = view_op(
    "view_as_real",
    _view_as_real,
    lambda g: view_as_complex(g.contiguous()),
    methods=False,
    batch_rule=_view_as_real_rule,
    samples=_view_as_real_samples,
    error_samples=_view_as_real_errors,
)


def view_as_real(input: Tensor) -> Tensor:
    """A real view of a complex tensor: a last dimension of size 2 holds (real, imag)."""
    if is_conj(input):
        raise RuntimeError(
            "view_as_real doesn't work on unresolved conjugated tensors.  To resolve the "
            "conjugate tensor so you can view it as real, use self.resolve_conj(); however, be "
            "warned that the resulting tensor will NOT alias the original."
        )
    return view_as_real_p.fn(input)


# ------------------------------------------------------------------ view_as_complex
def _view_as_complex(xp, input):
    if input.dtype not in (np.float32, np.float64, np.float16):
        raise RuntimeError(
            "view_as_complex is only supported for half, float and double tensors, but got a "
            f"tensor of scalar type: {dt.from_np(input.dtype).scalar_name}"
        )
    if input.ndim == 0 or input.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if input.strides[-1] != input.itemsize:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % (2 * input.itemsize) for s, n in zip(input.strides[:-1], input.shape) if n > 1):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if array_offset(input) % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    return input.view(dt.from_np(input.dtype).to_complex().np)[..., 0]


def _view_as_complex_rule(vmap, args, bdims, attrs):
    """The batch dim first; a batch dim that was last leaves the pairs strided, an error
    as in PyTorch."""
    (x,), (bd,) = args, bdims
    return dispatch(view_as_complex_p, (front(x, bd),), attrs), 0


def _view_as_complex_samples(make):
    yield S((make((3, 2), dtype=_real_of(make)),))
    yield S((make((2,), dtype=_real_of(make)),), name="0-d result")
    yield S((make((2, 4, 2), dtype=_real_of(make))[:, ::2],), name="strided")


def _view_as_complex_errors(make):
    f = _real_of(make)
    yield ErrorInput(S((make((3, 3), dtype=f),)), RuntimeError, "last dimension of size 2")
    yield ErrorInput(
        S((make((3, 2), dtype=np.int64),)),
        RuntimeError,
        "view_as_complex is only supported for half, float and double tensors",
    )


view_as_complex_p = view_op(
    "view_as_complex",
    _view_as_complex,
    lambda g: view_as_real(g.contiguous().resolve_conj()),
    methods=False,
    batch_rule=_view_as_complex_rule,
    test={"vmap_last": False},
    samples=_view_as_complex_samples,
    error_samples=_view_as_complex_errors,
    autocast="fp32",
)
view_as_complex = view_as_complex_p.fn


# ------------------------------------------------------------------ complex and polar
def _check_parts(real, imag, floats: str) -> None:
    for a in (real, imag):
        if a.dtype not in (np.float32, np.float64, np.float16):
            names = [dt.from_np(x.dtype).scalar_name for x in (real, imag)]
            raise RuntimeError(
                f"Expected both inputs to be {floats} tensors but got {names[0]} and {names[1]}"
            )
    if real.dtype != imag.dtype:
        raise RuntimeError(
            f"Expected object of scalar type {dt.from_np(real.dtype).scalar_name} but got "
            f"scalar type {dt.from_np(imag.dtype).scalar_name} for second argument"
        )


def _assemble(xp, re, im):
    re, im = xp.broadcast_arrays(re, im)
    half = re.dtype == np.float16  # (complex32: assembled in complex64, then exact)
    wide = np.complex64 if half or re.dtype == np.float32 else np.complex128
    out = xp.empty(re.shape, dtype=wide)
    out.real, out.imag = re, im
    return dt.cast(out, dt.C32) if half else out


def _parts_complex32(arrays, attrs) -> bool:
    """complex and polar take complex32 parts as they take other complex ones: refused by
    their dtype check."""
    _check_parts(*arrays[:2], "Half, Float or Double")
    return True


def _complex(xp, real, imag):
    _check_parts(real, imag, "Half, Float or Double")
    return _assemble(xp, real, imag)


def _parts_samples(make, low=-2.0):
    """(real, imag) or (abs, angle) pairs; polar's abs is positive (``low``), where its
    gradient (PyTorch's, through sgn(result)) is the derivative."""
    f = _real_of(make)
    yield S((make((2, 3), low, dtype=f), make((2, 3), dtype=f)))
    yield S((make((2, 3), low, dtype=f), make((3,), dtype=f)), name="broadcast")
    yield S((np.asarray(make((), low, dtype=f)), np.asarray(make((), dtype=f))), name="0-d")


def _parts_errors(make):
    f = _real_of(make)
    other = np.float64 if f == np.float32 else np.float32
    yield ErrorInput(
        S((make((2,), dtype=np.int64), make((2,), dtype=np.int64))),
        RuntimeError,
        "Expected both inputs to be Half, Float or Double tensors but got Long and Long",
    )
    yield ErrorInput(
        S((make((2,), dtype=f), make((2,), dtype=other))),
        RuntimeError,
        "Expected object of scalar type",
    )


complex_p = defop(
    "complex",
    _complex,
    vjp=(lambda g: g.real, lambda g: g.imag),
    jvp=LINEAR,
    batch_rule=elementwise(),
    layout=follow_inputs,
    out=True,
    samples=_parts_samples,
    error_samples=_parts_errors,
    complex32=_parts_complex32,
    meta=by_kernel,
)


def _polar(xp, abs, angle):
    _check_parts(abs, angle, "Half, Float or Double")
    if abs.dtype == np.float16:
        raise dt.not_implemented("polar_cpu", dt.float16)  # (complex's kernel takes Half)
    return _assemble(xp, abs * xp.cos(angle), abs * xp.sin(angle))


def _polar_jvp(tabs, tangle, abs, angle, result):
    return tabs * polar(abs.new_ones(()), angle) + result * tangle * 1j


# PyTorch's polar_backward: the abs gradient through sgn(result), so 0 where abs is 0
polar_p = defop(
    "polar",
    _polar,
    vjp=(
        lambda g, result: (g.conj() * result.sgn()).real,
        lambda g, result: (g.conj() * result * 1j).real,
    ),
    jvp=_polar_jvp,
    batch_rule=elementwise(),
    layout=follow_inputs,
    out=True,
    samples=lambda make: _parts_samples(make, low=0.1),
    error_samples=_parts_errors,
    complex32=_parts_complex32,
    autocast="fp32",
    meta=by_kernel,
)
polar = polar_p.fn


# ------------------------------------------------------------------ the conjugate and negative bits
def is_conj(input: Tensor) -> bool:
    """Whether input carries the conjugate bit (the result of ``conj`` of a complex tensor,
    and views of it)."""
    return bool(input._conj)


def is_neg(input: Tensor) -> bool:
    """Whether input carries the negative bit: numtorch makes no negative views."""
    return False


def resolve_conj(input: Tensor) -> Tensor:
    """input without the conjugate bit: a copy when it has it, else input itself."""
    return input.clone() if is_conj(input) else input


def resolve_neg(input: Tensor) -> Tensor:
    return input


@composite(
    samples=lambda make: [
        S((make((2, 3), dtype=_complex_of(make)),)),
        S((make((2, 3)),), name="real"),
    ],
    test=COMPLEX_TOO,
)
def conj(input: Tensor) -> Tensor:
    """The complex conjugate, with the conjugate bit set; a real tensor is returned as is."""
    if not input.is_complex():
        return input
    from .unary import conj_physical

    out = conj_physical(input)
    if not is_conj(input):
        out._conj = True
    return out


tensor_methods(
    {
        "conj": conj,
        "is_conj": is_conj,
        "is_neg": is_neg,
        "resolve_conj": resolve_conj,
        "resolve_neg": resolve_neg,
    }
)
