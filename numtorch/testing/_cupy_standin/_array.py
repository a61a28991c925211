"""The stand-in's device array: a NumPy array behind a wall, refusing NumPy as CuPy does.

Operands are checked and unwrapped by ``unwrap``; results come back through ``wrap``, which
turns NumPy's scalars into 0-d arrays (CuPy never returns a scalar from an array function).
Every array lives on a stand-in GPU; an operand on another GPU than the current one is
refused with CuPy's text (peer access is never available here).
"""

from __future__ import annotations

import numpy as np

from . import _state
from ._names import CLASSES, SIGNATURES

# The dtypes CuPy supports; anything else (bfloat16, float8, object, strings) it refuses.
SUPPORTED = frozenset(np.dtype(c) for c in "?bBhHiIlLqQefdFD")


def unsupported(dtype) -> ValueError:
    return ValueError(f"Unsupported dtype {np.dtype(dtype)}")


def _refuse(x):
    raise TypeError(f"Unsupported type {type(x)}")


def unwrap(x):
    """An operand as NumPy data; a NumPy array (a host array) is refused as CuPy refuses it."""
    t = type(x)
    if t is ndarray:
        if x._dev != _state.current[0]:
            raise ValueError(
                f"The device where the array resides ({x._dev}) is different from the current "
                f"device ({_state.current[0]}). Peer access is unavailable between these devices."
            )
        return x._a
    if t is np.ndarray:
        _refuse(x)
    if t is list or t is tuple:
        return t(unwrap(v) for v in x)
    return x


def wrap(r):
    """A NumPy result as device data: arrays and NumPy scalars become arrays on the current
    device, containers are walked."""
    t = type(r)
    if t is np.ndarray:
        return ndarray(r)
    if isinstance(r, np.generic):
        return ndarray(np.asarray(r))
    if t is list:
        return [wrap(v) for v in r]
    if isinstance(r, tuple):  # NumPy's named results (QRResult, ...) are plain tuples in CuPy
        return tuple(wrap(v) for v in r)
    return r


def host(x):
    """An array or a host value as NumPy data, for the functions that copy to the device."""
    if type(x) is ndarray:
        return x._a
    if type(x) in (list, tuple):
        return type(x)(host(v) for v in x)
    return x


class ndarray:
    """A CuPy array of the stand-in: NumPy data that cannot be read as NumPy data."""

    __slots__ = ("_a", "_dev", "__weakref__")
    __array_priority__ = 100

    def __init__(self, a: np.ndarray, dev: int | None = None):
        if a.dtype not in SUPPORTED:
            raise unsupported(a.dtype)
        self._a = a
        self._dev = _state.allocated(a, dev)

    # ---------------------------------------------------------------- what CuPy reports
    @property
    def shape(self):
        return self._a.shape

    @shape.setter
    def shape(self, value):
        self._a.shape = value

    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    strides = property(lambda self: self._a.strides)
    itemsize = property(lambda self: self._a.itemsize)
    nbytes = property(lambda self: self._a.nbytes)
    flags = property(lambda self: self._a.flags)
    T = property(lambda self: ndarray(self._a.T, self._dev))
    base = property(lambda self: None if self._a.base is None else self)

    @property
    def real(self):
        return ndarray(self._a.real, self._dev)

    @real.setter
    def real(self, value):
        self._a.real = unwrap(value)

    @property
    def imag(self):
        return ndarray(self._a.imag, self._dev)

    @imag.setter
    def imag(self, value):
        self._a.imag = unwrap(value)

    @property
    def device(self):
        from ._cuda import Device

        return Device(self._dev)

    @property
    def data(self):
        from ._cuda import MemoryPointer

        return MemoryPointer(self._a.__array_interface__["data"][0], self._dev)

    @property
    def __cuda_array_interface__(self) -> dict:
        face = dict(self._a.__array_interface__)
        face["version"] = 3
        face["stream"] = 1
        return face

    # ---------------------------------------------------------------- to and from the host
    def get(self, stream=None, order="C", out=None, blocking=True) -> np.ndarray:
        """A NumPy copy of the data."""
        _state.transfer("D2H", "get")
        if out is not None:
            out[...] = self._a
            return out
        return np.array(self._a, order=order)

    def set(self, arr, stream=None) -> None:
        """Copy a NumPy array of the same shape and dtype into this array."""
        if not isinstance(arr, np.ndarray):
            raise TypeError(f"Only numpy.ndarray can be set to cupy.ndarray, got {type(arr)}")
        _state.transfer("H2D", "set")
        if arr.shape != self.shape or arr.dtype != self.dtype:
            raise (
                ValueError("Shape mismatch.")
                if arr.shape != self.shape
                else TypeError(f"{arr.dtype} array cannot be set to {self.dtype} array")
            )
        self._a[...] = arr

    def __array__(self, dtype=None, copy=None):
        _state.record("implicit conversion to NumPy (__array__)")
        raise TypeError(
            "Implicit conversion to a NumPy array is not allowed. "
            "Please use `.get()` to construct a NumPy array explicitly."
        )

    def item(self, *args):
        _state.transfer("D2H", "item")
        return self._a.item(*args)

    def tolist(self):
        _state.transfer("D2H", "tolist")
        return self._a.tolist()

    def tobytes(self, order="C"):
        _state.transfer("D2H", "tobytes")
        return self._a.tobytes(order)

    def __float__(self):
        _state.transfer("D2H", "__float__")
        return float(self._a)

    def __int__(self):
        _state.transfer("D2H", "__int__")
        return int(self._a)

    def __complex__(self):
        _state.transfer("D2H", "__complex__")
        return complex(self._a)

    def __bool__(self):
        _state.transfer("D2H", "__bool__")
        return bool(self._a)

    def __len__(self):
        return len(self._a)

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(len(self._a)))

    def __repr__(self):
        return repr(self._a)

    def __str__(self):
        return str(self._a)

    def __format__(self, spec):
        return format(self._a, spec)

    def __reduce__(self):  # CuPy's: the data alone, unpickled onto the current device
        return (_rebuild, (self.get(),))

    def __copy__(self):  # CuPy's: self.copy(), on the current device
        return ndarray(self._a.copy())

    def __deepcopy__(self, memo):
        return ndarray(self._a.copy(), self._dev)

    __hash__ = None

    # ---------------------------------------------------------------- indexing
    def __getitem__(self, key):
        return wrap(self._a[_index(key)])

    def __setitem__(self, key, value):
        self._a[_index(key)] = unwrap(value)

    # ---------------------------------------------------------------- NumPy's protocols
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        cupy = _state.modules["cupy"]
        _state.record(f"numpy.{ufunc.__name__}{'' if method == '__call__' else '.' + method}")
        func = getattr(cupy, ufunc.__name__, None)
        if func is None:
            return NotImplemented
        if method != "__call__":
            func = getattr(func, method)
        if "out" in kwargs:
            kwargs["out"] = kwargs["out"][0]
        return func(*inputs, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        _state.record(f"{func.__module__}.{func.__name__}")
        mod = _state.modules.get(func.__module__.replace("numpy", "cupy", 1))
        ours = getattr(mod, func.__name__, None)
        if not callable(ours) or not all(issubclass(t, (ndarray, np.ndarray)) for t in types):
            return NotImplemented
        return ours(*args, **kwargs)


def _rebuild(a: np.ndarray) -> ndarray:
    return ndarray(a)


def _index(key):
    """An index as NumPy's: device arrays unwrapped; NumPy arrays are copied to the device by
    CuPy (a host round trip, recorded in strict mode)."""
    t = type(key)
    if t is tuple:
        return tuple(_index(k) for k in key)
    if t is ndarray:
        if key.dtype == np.bool_ and key.ndim:
            _state.transfer("D2H", "a boolean mask's count (CuPy synchronizes)")
        return unwrap(key)
    if t is np.ndarray:
        _state.record("a NumPy array as an index (copied to the device)")
        _state.transfer("H2D", "a NumPy array as an index")
        if key.dtype.kind not in "biu":
            raise IndexError(
                "arrays used as indices must be of integer or boolean type "
                f"(actual: {key.dtype.type})"
            )
    return key


def checker(qualname: str):
    """A function that raises CuPy's TypeError for a call CuPy's signature does not take."""
    params = SIGNATURES.get(qualname)
    if params is None:
        return None
    name = qualname.rpartition(".")[2]
    scope: dict = {}
    exec(f"def {name}({params}): pass", scope)
    return scope[name]


# Methods that work from any current GPU: views launch no kernel, and copy copies from another
# GPU onto the current one.
_ANY_GPU = {"reshape", "transpose", "view", "swapaxes", "squeeze", "diagonal", "ravel", "copy"}


def _method(name):
    check = checker(f"cupy.ndarray.{name}")
    kernel = name not in _ANY_GPU

    def method(self, *args, **kwargs):
        if check is not None:
            check(*args, **kwargs)
        if kernel:
            unwrap(self)  # (CuPy's peer-access error for an array on another GPU)
        r = getattr(self._a, name)(*unwrap(args), **{k: unwrap(v) for k, v in kwargs.items()})
        return None if r is None else wrap(r)

    method.__name__ = name
    return method


def _operator(name, ufunc, reflected=False, inplace=False):
    def op(self, other):
        if isinstance(other, np.ndarray) and not reflected:
            _refuse(other)
        fn = getattr(_state.modules["cupy"], ufunc)
        if inplace:
            return fn(self, other, out=self)
        return fn(other, self) if reflected else fn(self, other)

    op.__name__ = name
    return op


_BINARY = {
    "add": "add",
    "sub": "subtract",
    "mul": "multiply",
    "truediv": "true_divide",
    "floordiv": "floor_divide",
    "mod": "remainder",
    "pow": "power",
    "matmul": "matmul",
    "and": "bitwise_and",
    "or": "bitwise_or",
    "xor": "bitwise_xor",
    "lshift": "left_shift",
    "rshift": "right_shift",
}
for _n, _u in _BINARY.items():
    setattr(ndarray, f"__{_n}__", _operator(f"__{_n}__", _u))
    setattr(ndarray, f"__r{_n}__", _operator(f"__r{_n}__", _u, reflected=True))
    if f"__i{_n}__" in CLASSES["ndarray"]:
        setattr(ndarray, f"__i{_n}__", _operator(f"__i{_n}__", _u, inplace=True))
_COMPARE = {"eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal"}
_COMPARE.update(gt="greater", ge="greater_equal")
for _n, _u in _COMPARE.items():
    setattr(ndarray, f"__{_n}__", _operator(f"__{_n}__", _u))


def _unary(name, ufunc):
    def op(self):
        return getattr(_state.modules["cupy"], ufunc)(self)

    op.__name__ = name
    return op


for _n, _u in {"neg": "negative", "pos": "positive", "abs": "absolute", "invert": "invert"}.items():
    setattr(ndarray, f"__{_n}__", _unary(f"__{_n}__", _u))
ndarray.__divmod__ = _method("__divmod__")


def _syncing(name, fn):
    """A function whose result's size CuPy reads back from the device (a synchronization)."""

    def f(*args, **kwargs):
        _state.transfer("D2H", f"{name} (CuPy synchronizes for the result's size)")
        return fn(*args, **kwargs)

    f.__name__ = name
    return f


ndarray.nonzero = _syncing("nonzero", _method("nonzero"))

# The methods CuPy's ndarray has that NumPy's computes the same way.
_OWN = set(vars(ndarray))
for _n in CLASSES["ndarray"]:
    if _n not in _OWN and not _n.startswith("__") and callable(getattr(np.ndarray, _n, None)):
        setattr(ndarray, _n, _method(_n))
