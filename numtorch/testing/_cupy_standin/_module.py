"""The stand-in's ``cupy`` and ``cupyx`` modules, built from the names CuPy has (``_names``):
each function or ufunc CuPy has runs NumPy's (SciPy's, for ``cupyx.scipy``) on unwrapped
operands; a name CuPy lacks is missing here too."""

from __future__ import annotations

import contextlib
import importlib
import types

import numpy as np

from . import _random, _state
from ._array import SUPPORTED, _syncing, checker, host, ndarray, unsupported, unwrap, wrap
from ._cuda import cuda, get_default_memory_pool
from ._names import MODULES, UFUNCS


class StandinGap(NotImplementedError):
    """A CuPy function the stand-in has no NumPy counterpart for."""


class ufunc:
    """A CuPy ufunc: NumPy's, limited to CuPy's type signatures, keywords and methods."""

    def __init__(self, name: str, np_ufunc, info: dict):
        self.__name__ = name
        self.name = f"cupy_{name}"
        self._u = np_ufunc
        self.nin, self.nout = info["nin"], info["nout"]
        self.nargs = self.nin + self.nout
        self.types = info["types"]
        self._methods = set(info["methods"])
        self._loops: dict = {}

    def __repr__(self):
        return f"<ufunc '{self.__name__}'>"

    def _check(self, args) -> None:
        key = tuple(a.dtype if type(a) is ndarray else None for a in args)
        ok = self._loops.get(key)
        if ok is None:
            ok = self._loops[key] = any(
                all(d is None or np.can_cast(d, c, "safe") for d, c in zip(key, sig.split("->")[0]))
                for sig in self.types
            )
        if not ok:
            dts = tuple(np.dtype(type(a)) if d is None else d for a, d in zip(args, key))
            raise TypeError(f"Wrong type ({dts}) of arguments for {self.name}")

    def __call__(self, *args, out=None, dtype=None, casting="same_kind", **kwargs):
        if kwargs:
            raise TypeError(f"Wrong arguments {kwargs}")
        if not self.nin <= len(args) <= self.nargs:
            raise TypeError(
                f"Wrong number of arguments for {self.name!r}. It must be either {self.nin} "
                f"or {self.nargs} (with outputs), but given {len(args)}."
            )
        ins, outs = args[: self.nin], args[self.nin :]
        if out is not None:
            outs = out if isinstance(out, tuple) else (out,)
        for o in outs:
            if type(o) is not ndarray:
                raise TypeError(f"Unsupported type {type(o)}")
        if dtype is None:
            self._check(ins)
        a = unwrap(ins)
        kw = {"casting": casting} if isinstance(self._u, np.ufunc) else {}
        if dtype is not None:
            kw["dtype"] = dtype
        if outs:
            self._u(*a, out=tuple(unwrap(o) for o in outs), **kw)
            return outs[0] if self.nout == 1 else tuple(outs)
        return wrap(self._u(*a, **kw))

    def _method(self, name):
        if name not in self._methods:
            raise NotImplementedError(f"`{self.name}.{name}` is not supported yet")

    def reduce(self, array, axis=0, dtype=None, out=None, keepdims=False):
        self._method("reduce")
        fn = array.sum if self.__name__ == "add" else array.prod
        return fn(axis, dtype, out, keepdims)

    def accumulate(self, array, axis=0, dtype=None, out=None):
        self._method("accumulate")
        fn = array.cumsum if self.__name__ == "add" else array.cumprod
        return fn(axis, dtype, out)

    def reduceat(self, array, indices, axis=0, dtype=None, out=None):
        self._method("reduceat")
        return wrap(self._u.reduceat(unwrap(array), unwrap(indices), axis, dtype))

    def at(self, a, indices, b=None):
        self._method("at")
        _scatter_dtype(self.__name__, a)
        args = () if b is None else (unwrap(b),)
        self._u.at(unwrap(a), _index(indices), *args)

    def outer(self, A, B, **kwargs):
        A, B = cupy.asarray(A), cupy.asarray(B)
        a, b = A.reshape(A.shape + (1,) * B.ndim), B.reshape((1,) * A.ndim + B.shape)
        return self(a, b, **kwargs)


def _index(key):
    from ._array import _index as index

    return index(key)


def _function(name: str, fn, qualname: str = ""):
    """A CuPy function computed by NumPy's or SciPy's ``fn`` on unwrapped operands, taking the
    arguments CuPy's function takes."""
    check = checker(qualname) if qualname else None

    def f(*args, **kwargs):
        if check is not None:
            check(*args, **kwargs)
        r = fn(*unwrap(args), **{k: unwrap(v) for k, v in kwargs.items()})
        return wrap(r)

    f.__name__ = name
    f.__qualname__ = name
    return f


def _linalg(name: str, fn, qualname: str, library: str = "cuSOLVER"):
    """A linalg function with CuPy's error policy: a failed factorization gives non-finite
    values (NaN here) unless ``cupyx.errstate(linalg='raise')`` asks for an error."""
    compute = _function(name, fn, qualname)

    def f(*args, **kwargs):
        try:
            with np.errstate(all="ignore"):
                return compute(*args, **kwargs)
        except np.linalg.LinAlgError:
            if _state.linalg[0] == "raise":
                raise np.linalg.LinAlgError(
                    f"Error reported by {name} in {library}. devInfo = [1]. Please refer to "
                    f"the {library} documentation."
                ) from None
        nan = [
            ndarray(np.full(a.shape, np.nan, a.dtype)) if type(a) is ndarray else a for a in args
        ]
        with np.errstate(all="ignore"):
            return compute(*nan, **kwargs)

    f.__name__ = name
    return f


# ---------------------------------------------------------------- copies to and from the host
def _from_host(name):
    np_fn = getattr(np, name)

    def f(obj, dtype=None, *args, **kwargs):
        if _on_host(obj):
            _state.transfer("H2D", f"cupy.{name} of {type(obj).__name__}")
        a = np_fn(host(obj), dtype, *args, **kwargs)
        if a.dtype not in SUPPORTED:
            raise unsupported(a.dtype)
        if type(obj) is ndarray and a is obj._a:
            return obj
        return ndarray(a)

    f.__name__ = name
    return f


def _on_host(obj) -> bool:
    """Whether making a device array of ``obj`` copies from the host (CuPy gathers a list of
    device arrays on the device)."""
    if type(obj) in (list, tuple):
        return not obj or any(_on_host(v) for v in obj)
    return type(obj) is not ndarray


def asnumpy(a, stream=None, order="C", out=None, blocking=True):
    """A NumPy copy of a device array (NumPy data and numbers pass through)."""
    if type(a) is ndarray:
        return a.get(order=order, out=out)
    return np.asarray(a, order=order)


def may_share_memory(a, b, max_work=None):
    """CuPy's bounds check: host-side pointer arithmetic, so arrays on two GPUs are compared
    (never sharing) without the current-device check of its kernels."""
    if max_work is not None:
        raise NotImplementedError("Only supported for `max_work` is `None`")
    if a._dev != b._dev or a.size == 0 or b.size == 0:
        return False
    return bool(np.may_share_memory(a._a, b._a))


def get_array_module(*args):
    return cupy if any(type(a) is ndarray for a in args) else np


# The dtypes CuPy 13.6's scatter kernels (ufunc.at, cupyx.scatter_*) take (its atomics),
# and its refusal of the others (the wheel's text); the value is cast to the target's dtype.
_SCATTER_TYPES = {
    "add": ("int32, float16, float32, float64, uint32, uint64,", "add"),
    "subtract": ("int32, uint32,", "subtract"),
    "maximum": ("int32, float32, float64, uint32, uint64", "maximum"),
    "minimum": ("int32, float32, float64, uint32, uint64", "minimum"),
    "bitwise_and": ("int32, int64, uint32, uint64", "bitwise_and"),
    "bitwise_or": ("int32, int64, uint32, uint64", "bitwise_or"),
    "bitwise_xor": ("int32, int64, uint32, uint64", "bitwise_xor"),
}


def _scatter_dtype(ufunc_name: str, a) -> None:
    """CuPy's TypeError where its scatter kernel has no atomic for ``a``'s dtype."""
    known = _SCATTER_TYPES.get(ufunc_name)
    if known is None or type(a) is not ndarray:
        return
    names, op = known
    if a.dtype.name not in names.replace(",", " ").split():
        raise TypeError(f"cupy.{op}.at only supports {names} as data type")


def _scatter(ufunc_name):
    def scatter(a, slices, value):
        _scatter_dtype(ufunc_name, a)
        getattr(np, ufunc_name).at(unwrap(a), _index(slices), unwrap(value))

    return scatter


@contextlib.contextmanager
def errstate(*, divide=None, over=None, under=None, invalid=None, linalg=None):
    """cupyx.errstate: only ``linalg`` ('ignore' or 'raise') changes what the stand-in does."""
    before = _state.linalg[0]
    if linalg is not None:
        if linalg not in ("ignore", "raise"):
            raise NotImplementedError(f"linalg={linalg!r} is not supported")
        _state.linalg[0] = linalg
    try:
        yield
    finally:
        _state.linalg[0] = before


# ---------------------------------------------------------------- the modules
OWN = {
    "cupy": {
        "ndarray": ndarray,
        "ufunc": ufunc,
        "cuda": cuda,
        "asnumpy": asnumpy,
        "get_array_module": get_array_module,
        "may_share_memory": may_share_memory,
        "get_default_memory_pool": get_default_memory_pool,
        "is_available": lambda: True,
        **{n: _from_host(n) for n in ("array", "asarray", "asanyarray", "ascontiguousarray")},
        "asfortranarray": _from_host("asfortranarray"),
    },
    "cupyx": {
        "errstate": errstate,
        "scatter_add": _scatter("add"),
        "scatter_max": _scatter("maximum"),
        "scatter_min": _scatter("minimum"),
    },
    "cupy.random": _random.OWN,
}
# Where each CuPy module's computations come from.
SOURCES = {
    "cupy": "numpy",
    "cupy.linalg": "numpy.linalg",
    "cupy.fft": "numpy.fft",
    "cupy.random": "numpy.random",
    "cupy.lib": "numpy.lib",
    "cupy.lib.stride_tricks": "numpy.lib.stride_tricks",
    "cupyx.scipy.special": "scipy.special",
    "cupyx.scipy.linalg": "scipy.linalg",
    "cupyx.scipy.fft": "scipy.fft",
    "cupyx.scipy.signal": "scipy.signal",
    "cupyx.scipy.ndimage": "scipy.ndimage",
    "cupyx.scipy.sparse": "scipy.sparse",
    "cupyx.scipy.stats": "scipy.stats",
}
# CuPy's functions that read a count back from the device to size their result.
SYNCING = frozenset({"nonzero", "argwhere", "flatnonzero", "unique", "extract"})
LINALG = {"cupy.linalg": "cuSOLVER", "cupyx.scipy.linalg": "cuSOLVER"}


def _gap(qualname):
    def missing(*args, **kwargs):
        raise StandinGap(f"the CuPy stand-in has no counterpart of {qualname}")

    return missing


def _build(name: str) -> types.ModuleType:
    mod = types.ModuleType(name, f"The CuPy stand-in's {name}.")
    own = OWN.get(name, {})
    source = SOURCES.get(name)
    src = importlib.import_module(source) if source else None
    for attr, kind in MODULES[name].items():
        if attr in own:
            value = own[attr]
        elif kind == "module":
            continue  # submodules are set below
        elif kind == "ufunc" and hasattr(src, attr):
            value = ufunc(attr, getattr(src, attr), UFUNCS[f"{name}.{attr}"])
        elif src is not None and hasattr(src, attr):
            value = getattr(src, attr)
            if kind == "function" and callable(value) and not isinstance(value, type):
                q = f"{name}.{attr}"
                value = (
                    _linalg(attr, value, q, LINALG[name])
                    if name in LINALG
                    else _function(attr, value, q)
                )
        else:
            value = _gap(f"{name}.{attr}")
        if name == "cupy" and attr in SYNCING:
            value = _syncing(attr, value)
        setattr(mod, attr, value)
    return mod


_MODULES = {name: _build(name) for name in MODULES}
for _name, _mod in _MODULES.items():
    _parent, _, _leaf = _name.rpartition(".")
    if _parent:
        setattr(_MODULES[_parent], _leaf, _mod)
cupy = _MODULES["cupy"]
cupyx = _MODULES["cupyx"]
cupy.cuda = cuda
cupy.linalg.LinAlgError = np.linalg.LinAlgError
_state.modules.update(_MODULES)
