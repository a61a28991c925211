"""Test helpers for both libraries: one program run on ``numtorch`` and ``torch`` and compared,
the conversions between NumPy data and either library's tensors, the walk over nested results,
and the named tolerances every comparison uses.

A program is ``prog(lib, *args)``. Each argument that is a NumPy array arrives as
``lib.tensor(array)`` (lib_arg); anything else (a float, a shape, a flag) arrives unchanged.

    run(prog, lib, *args)                      prog's result on one library
    run_both(prog, *args)                      (numtorch's result, torch's result)
    assert_same(prog, *args, rtol=, atol=)     both results agree leaf by leaf (assert_close)
    assert_same_error(prog, *args)             both raise: the same exception type and text
    assert_same_outcome(prog, *args, ...)      either of the two, whichever torch does
    outcome(prog, lib, *args)                  the result, or Raised(type, text)
    error_of(prog, lib, *args)                 Raised(type, text), or None when prog returns
    lib_of(t)                                  the library (numtorch or torch) of a tensor

Programs derived from a program ``f(L, x, ...)`` (its derivatives, as programs again):

    grad_prog(f)                               x's gradient of the scalar f (backward())
    jvp_prog(f)                                func.jvp of f at x along ones
    tangent_prog(f)                            forward_ad's tangent of f at x along ones

Data and conversions:

    arr(*shape, seed=)                         fixed standard-normal float64 data
    ints(*shape)                               1, 2, 3, ... as int64 data of a shape
    to_nt(x, requires_grad=) / to_torch(x, requires_grad=)
                                               NumPy arrays (nested in lists, tuples and dicts)
                                               as tensors of one library; float arrays require
                                               grad when asked; to_torch also maps a numtorch
                                               dtype to torch's
    as_numpy(t)                                a tensor of either library (or anything) as an array

The comparison itself, also for results computed by hand (numtorch against torch, or
numtorch against a numtorch reference such as a Python loop):

    assert_close(got, ref, rtol=, atol=)       same nesting, then assert_leaf_close per leaf
    leaf_pairs(got, ref)                       the walk: same nesting, (where, got, ref) leaves
    assert_leaf_close(got, ref, rtol=, atol=)  one leaf: None, tensor, array, number or other
    leaves(x)                                  the leaves of one nested result, in order
    tensor_leaves(x, kind=)                    its leaves that are tensors (of ``kind``)

Finite differences, where the oracle is the function itself (random ops with their noise
fixed by the seed):

    fd_grad(f, x, eps=)                        the central-difference gradient of a scalar f

Tolerances (each caller names the one it uses; no default is shared by two kinds of check):

    RTOL, ATOL = 1e-10, 0                      float64 programs (the default of every function)
    LAYER_RTOL, LAYER_ATOL = 1e-7, 1e-9        a whole nn layer, forward and backward (twomods)
    op_tol(dtype)                              the op database's tolerance for a dtype
                                               ({"rtol":, "atol":}: OP_TOL's pair, times 10)
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import ml_dtypes
import numpy as np
import torch

import numtorch as nt

RTOL, ATOL = 1e-10, 0.0
LAYER_RTOL, LAYER_ATOL = 1e-7, 1e-9
OP_TOL = {
    "bfloat16": (1e-2, 1e-2),  # (times 10: 1e-1, about 13 ulps; most results are bit-equal)
    "float16": (1e-2, 1e-2),
    "float32": (1e-4, 1e-5),
    "float64": (1e-7, 1e-9),
}
TENSORS = (nt.Tensor, torch.Tensor)


def op_tol(dtype_name: str) -> dict:
    """The op database's tolerance for results of a dtype: OP_TOL's pair (1e-6, 1e-8 for a
    dtype it lacks), each times 10, as keywords of assert_close."""
    rtol, atol = OP_TOL.get(dtype_name, (1e-6, 1e-8))
    return {"rtol": rtol * 10, "atol": atol * 10}


def arr(*shape, seed=0):
    """Fixed standard-normal float64 data of a shape (the same in every run and worker)."""
    return np.random.default_rng(seed).standard_normal(shape)


def inexact(t) -> bool:
    """Whether a tensor of either library is floating or complex (differentiable)."""
    return t.dtype.is_floating_point or t.dtype.is_complex


def normal(rng, shape, dtype=None) -> np.ndarray:
    """Standard normal values of ``shape``: complex ones (independent real and imaginary
    parts) when ``dtype`` (either library's, or NumPy's) is complex."""
    z = rng.standard_normal(shape)
    if dtype is None:
        return z
    cplx = dtype.is_complex if hasattr(dtype, "is_complex") else np.dtype(dtype).kind == "c"
    if cplx:
        z = z + 1j * rng.standard_normal(shape)
    return z


def ints(*shape) -> np.ndarray:
    """1, 2, 3, ... as int64 data of a shape."""
    return np.arange(1, 1 + int(np.prod(shape)), dtype=np.int64).reshape(shape)


# ------------------------------------------------------------------ converting
# ml_dtypes' reduced floats by their torch dtype and the unsigned type of their bits: torch
# takes (torch.from_numpy) and gives (Tensor.numpy) no such array, so they travel as bits.
_BITS = {
    np.dtype(getattr(ml_dtypes, name)): (getattr(torch, name), np.uint16 if size == 2 else np.uint8)
    for name, size in (
        ("bfloat16", 2),
        ("float8_e4m3fn", 1),
        ("float8_e5m2", 1),
        ("float8_e4m3fnuz", 1),
        ("float8_e5m2fnuz", 1),
        ("float8_e8m0fnu", 1),
    )
}
_FROM_TORCH = {t: (np_dtype, bits) for np_dtype, (t, bits) in _BITS.items()}
_TORCH_BITS = {np.uint16: torch.uint16, np.uint8: torch.uint8}


def torch_tensor(x: np.ndarray) -> torch.Tensor:
    """``torch.tensor(x)``, also for an ml_dtypes array (bfloat16, float8): its bits."""
    if x.dtype in _BITS:
        dtype, bits = _BITS[x.dtype]
        return torch.tensor(x.copy(order="C").view(bits)).view(dtype)
    return torch.tensor(x)


def _is_float(x: np.ndarray) -> bool:
    return x.dtype.kind == "f" or x.dtype in _BITS


def to_lib(lib, x, requires_grad: bool = False):
    """NumPy arrays in ``x`` (itself one, or nested in lists, tuples and dicts) as tensors of
    ``lib``; float ones require grad when ``requires_grad``. For torch, a numtorch dtype
    becomes torch's. Anything else is kept."""
    if isinstance(x, np.ndarray):
        t = torch_tensor(x) if lib is torch else lib.tensor(x)
        if requires_grad and _is_float(x):
            t.requires_grad_(True)
        return t
    if isinstance(x, list):
        return [to_lib(lib, v, requires_grad) for v in x]
    if isinstance(x, tuple):
        return tuple(to_lib(lib, v, requires_grad) for v in x)
    if isinstance(x, dict):
        return {k: to_lib(lib, v, requires_grad) for k, v in x.items()}
    if lib is torch and isinstance(x, nt.dtype):
        return getattr(torch, x.name)
    return x


def to_nt(x, requires_grad: bool = False):
    """``x``'s NumPy arrays as numtorch tensors (to_lib)."""
    return to_lib(nt, x, requires_grad)


def to_torch(x, requires_grad: bool = False):
    """``x``'s NumPy arrays as torch tensors and numtorch dtypes as torch's (to_lib)."""
    return to_lib(torch, x, requires_grad)


def as_numpy(t) -> np.ndarray:
    """A tensor of either library (detached, conjugation and negation resolved) or anything
    else as a NumPy array."""
    if isinstance(t, torch.Tensor):
        t = t.detach().resolve_conj().resolve_neg().cpu()
        if t.dtype in _FROM_TORCH:
            np_dtype, bits = _FROM_TORCH[t.dtype]
            return t.contiguous().view(_TORCH_BITS[bits]).numpy().view(np_dtype)
        return t.numpy()
    if isinstance(t, nt.Tensor):
        return np.asarray(t.detach().cpu().numpy())
    return np.asarray(t)


# ------------------------------------------------------------------ running
def lib_arg(lib, x):
    """``lib.tensor(x)`` for a NumPy array, ``x`` itself for anything else."""
    if not isinstance(x, np.ndarray):
        return x
    return torch_tensor(x) if lib is torch else lib.tensor(x)


def run(prog, lib, *args):
    """``prog(lib, *args)`` with every NumPy array argument made a tensor of ``lib``."""
    return prog(lib, *(lib_arg(lib, a) for a in args))


def run_both(prog, *args):
    """(numtorch's result, torch's result) of ``prog`` (numtorch runs first)."""
    return run(prog, nt, *args), run(prog, torch, *args)


@dataclass(frozen=True)
class Raised:
    """An exception as compared across the libraries: its exact type and its text."""

    type: type
    text: str


def outcome(prog, lib, *args):
    """What ``prog`` does on ``lib``: its result, or ``Raised`` for the Exception it raises."""
    try:
        return run(prog, lib, *args)
    except Exception as e:  # noqa: BLE001 - the type and text are what is compared
        return Raised(_OWN_TYPES.get(type(e), type(e)), str(e))


# Each library's own exception classes, compared as the public name both export.
_OWN_TYPES = {
    torch.linalg.LinAlgError: "linalg.LinAlgError",
    nt.linalg.LinAlgError: "linalg.LinAlgError",
}


def error_of(prog, lib, *args):
    """``Raised(type, text)`` of the exception ``prog`` raises on ``lib``; None if it returns."""
    res = outcome(prog, lib, *args)
    return res if isinstance(res, Raised) else None


def lib_of(t):
    """The library of a tensor: torch for a torch tensor, numtorch for anything else."""
    return torch if isinstance(t, torch.Tensor) else nt


# ------------------------------------------------------------------ derived programs
def grad_prog(f):
    """The program giving x's gradient of the scalar ``f(L, x, *rest)`` (backward())."""

    def prog(L, x, *rest):
        x.requires_grad_(True)
        f(L, x, *rest).backward()
        return x.grad

    return prog


def jvp_prog(f):
    """The program giving ``func.jvp`` of ``f(L, x)`` at x along ones: (output, tangent)."""

    def prog(L, x):
        return L.func.jvp(lambda x: f(L, x), (x,), (L.ones_like(x),))

    return prog


def tangent_prog(f):
    """The program giving forward_ad's tangent of ``f(L, x)`` at x along ones."""

    def prog(L, x):
        with L.autograd.forward_ad.dual_level():
            d = L.autograd.forward_ad.make_dual(x, L.ones_like(x))
            return L.autograd.forward_ad.unpack_dual(f(L, d)).tangent

    return prog


def fd_grad(f, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """The central-difference gradient of a scalar function of one float64 array."""
    g = np.zeros(x.shape)
    for idx in np.ndindex(x.shape):
        hi, lo = x.copy(), x.copy()
        hi[idx] += eps
        lo[idx] -= eps
        g[idx] = (f(hi) - f(lo)) / (2 * eps)
    return g


# ------------------------------------------------------------------ comparing
def leaves(x) -> list:
    """The leaves of a nested result (dict values, tuple and list items), in order."""
    if isinstance(x, dict):
        return [v for k in x for v in leaves(x[k])]
    if isinstance(x, (tuple, list)):
        return [v for e in x for v in leaves(e)]
    return [x]


def tensor_leaves(x, kind=TENSORS) -> list:
    """The leaves of a nested result that are tensors (instances of ``kind``), in order."""
    return [v for v in leaves(x) if isinstance(v, kind)]


def _same_container(got, ref) -> bool:
    """A plain tuple, list or dict must meet the same type; a subclass (torch.Size, a
    torch.return_types tuple) any tuple or list of the same kind."""
    if type(ref) in (tuple, list, dict):
        return type(got) is type(ref)
    kind = tuple if isinstance(ref, tuple) else list if isinstance(ref, list) else dict
    return isinstance(got, kind)


def leaf_pairs(got, ref, where: str = "result"):
    """Walk two nested results together, asserting they nest alike (container types, lengths,
    dict keys); yield (where, got leaf, ref leaf) for every leaf of ``ref``."""
    if isinstance(ref, (tuple, list, dict)):
        assert _same_container(got, ref), f"{where}: {type(got).__name__} vs {type(ref).__name__}"
        if isinstance(ref, dict):
            assert got.keys() == ref.keys(), f"{where}: keys {list(got)} vs {list(ref)}"
            for k in ref:
                yield from leaf_pairs(got[k], ref[k], f"{where}[{k!r}]")
        else:
            assert len(got) == len(ref), f"{where}: {len(got)} items vs {len(ref)}"
            for i, (g, r) in enumerate(zip(got, ref)):
                yield from leaf_pairs(g, r, f"{where}[{i}]")
    else:
        yield where, got, ref


def _dtype(t) -> str:
    return str(t.dtype).replace("torch.", "")


def _assert_values(g: np.ndarray, r: np.ndarray, rtol, atol, where) -> None:
    """Bool and integer values exactly; floating and complex ones within rtol/atol (compared
    in float64 / complex128 whatever their dtype)."""
    if g.dtype.kind in "biu" and r.dtype.kind in "biu":
        np.testing.assert_array_equal(g, r, err_msg=where)
        return
    wide = np.complex128 if "c" in (g.dtype.kind, r.dtype.kind) else np.float64
    np.testing.assert_allclose(g.astype(wide), r.astype(wide), rtol=rtol, atol=atol, err_msg=where)


def assert_leaf_close(got, ref, rtol: float = RTOL, atol: float = ATOL, where: str = "result"):
    """One leaf of a result against the reference's:

    - None: got is None too;
    - a tensor (numtorch's or torch's): got is a numtorch Tensor of the same shape and dtype,
      with the same values (exact for bool and integer dtypes, else within rtol/atol);
    - a NumPy array: got is an array of the same shape and dtype, values as for tensors;
    - a float or complex number: got is a number within rtol/atol;
    - anything else (bool, int, str, ...): got == ref.
    """
    if ref is None:
        assert got is None, f"{where}: expected None, got {got!r}"
    elif isinstance(ref, TENSORS):
        assert isinstance(got, nt.Tensor), f"{where}: expected a numtorch Tensor, got {got!r}"
        assert tuple(got.shape) == tuple(ref.shape), f"{where}: shape {got.shape} vs {ref.shape}"
        assert _dtype(got) == _dtype(ref), f"{where}: dtype {got.dtype} vs {ref.dtype}"
        _assert_values(as_numpy(got), as_numpy(ref), rtol, atol, where)
    elif isinstance(ref, np.ndarray):
        assert isinstance(got, np.ndarray), f"{where}: expected an array, got {got!r}"
        assert got.shape == ref.shape, f"{where}: shape {got.shape} vs {ref.shape}"
        assert got.dtype == ref.dtype, f"{where}: dtype {got.dtype} vs {ref.dtype}"
        _assert_values(got, ref, rtol, atol, where)
    elif isinstance(ref, (float, complex, np.floating, np.complexfloating)):
        assert isinstance(got, numbers.Number), f"{where}: expected a number, got {got!r}"
        np.testing.assert_allclose(got, ref, rtol=rtol, atol=atol, err_msg=where)
    else:
        assert got == ref, f"{where}: {got!r} vs {ref!r}"


def assert_close(got, ref, rtol: float = RTOL, atol: float = ATOL, where: str = "result"):
    """``got`` (numtorch's) nests like ``ref`` and every leaf matches (assert_leaf_close)."""
    for at, g, r in leaf_pairs(got, ref, where):
        assert_leaf_close(g, r, rtol=rtol, atol=atol, where=at)


# ------------------------------------------------------------------ both at once
def assert_same(prog, *args, rtol: float = RTOL, atol: float = ATOL):
    """Run ``prog`` on numtorch and torch; the results agree (assert_close). Returns
    numtorch's result."""
    ours, theirs = run_both(prog, *args)
    assert_close(ours, theirs, rtol=rtol, atol=atol)
    return ours


def assert_same_error(prog, *args) -> Raised:
    """``prog`` raises on torch, and on numtorch an exception of exactly the same type with
    exactly the same text. Returns it."""
    got, want = outcome(prog, nt, *args), outcome(prog, torch, *args)
    assert isinstance(want, Raised), f"torch raised nothing (returned {want!r})"
    assert isinstance(got, Raised), f"numtorch raised nothing; torch raised {want}"
    assert got.type is want.type, f"numtorch raised {got}\ntorch raised {want}"
    assert got.text == want.text, f"numtorch raised {got}\ntorch raised {want}"
    return got


def assert_same_outcome(prog, *args, rtol: float = RTOL, atol: float = ATOL):
    """Where torch raises, numtorch raises the same (assert_same_error); where torch returns,
    numtorch returns the same (assert_same). Returns numtorch's result or Raised."""
    got, want = outcome(prog, nt, *args), outcome(prog, torch, *args)
    if isinstance(want, Raised) or isinstance(got, Raised):
        assert isinstance(got, Raised) and got == want, f"numtorch: {got!r}\ntorch: {want!r}"
    else:
        assert_close(got, want, rtol=rtol, atol=atol)
    return got
