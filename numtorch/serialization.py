"""torch.save and torch.load: PyTorch's checkpoint format, read without running code.

The format is PyTorch's own (``torch.save``'s default since PyTorch 1.6), so numtorch and
PyTorch read each other's files. A checkpoint is an uncompressed zip archive whose records
sit under one folder (``archive/``), each record's data aligned to 64 bytes:

- ``archive/data.pkl``: the object, pickled with protocol 2. A tensor is pickled as the call
  ``torch._utils._rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad,
  collections.OrderedDict())``; a Parameter as ``torch._utils._rebuild_parameter(tensor,
  requires_grad, collections.OrderedDict())``; a dtype as the global ``torch.<name>``; a
  device as ``torch.device(type[, index])``. ``storage`` is a persistent id, the tuple
  ``("storage", torch.<Scalar>Storage, key, location, numel)``: the storage's element type
  (``FloatStorage``, ``LongStorage``, ...), its record name, the device it was saved from
  (``"cpu"``, ``"cuda:0"``) and its length in elements. Tensors that share memory share
  one storage.
- ``archive/data/<key>``: a storage's raw elements, in the byte order of ``archive/byteorder``
  (``little`` or ``big``).
- ``archive/version`` (``3``), ``archive/.format_version`` (``1``),
  ``archive/.storage_alignment`` (``64``), ``archive/byteorder``.

``load`` reads that format, and also PyTorch's legacy one (the file written by
``torch.save(..., _use_new_zipfile_serialization=False)``: five pickles and the raw storages
in one stream). By default (``weights_only=True``, as in PyTorch) it unpickles with a
restricted unpickler that resolves only the globals a checkpoint of tensors needs (the
rebuild functions, storage types, dtypes, ``torch.device``, ``torch.Size``, Parameter,
``collections.OrderedDict``/``Counter``, ``set``, ``complex``, ``bytearray``,
``_codecs.encode``) to numtorch's own objects, and refuses any other global before
anything is called, raising ``pickle.UnpicklingError``. ``weights_only=False`` unpickles
with the full pickle machinery, which runs whatever code the file names: only for files
from a trusted source, and only when asked for explicitly. torch is never imported.
"""

from __future__ import annotations

import _compat_pickle
import codecs
import collections
import io
import os
import pickle
import struct
import sys
import warnings
import zipfile
from collections.abc import Callable
from typing import IO, Any

import numpy as np

from ._core import dtype as dt
from ._core.device import (
    cuda_device_count,
    device,
    device_of,
    gpu_index,
    host_to_gpu,
    is_cuda_available,
    xp_of,
)
from ._core.tensor import Size, Tensor, _make
from .nn.parameter import Parameter

__all__ = ["load", "save"]

FileLike = str | os.PathLike | IO[bytes]

_MAGIC_NUMBER = 0x1950A86A20F9469CFC6C  # the legacy format's first pickle
_LEGACY_PROTOCOL = 1001
_ALIGN = 64

UNSAFE_MESSAGE = (
    "Re-running `numtorch.load` with `weights_only` set to `False` will likely succeed, but it "
    "can result in arbitrary code execution. Do it only if you got the file from a trusted "
    "source."
)
_BLOCKED_MODULES = ("sys", "os", "posix", "nt")


# ----------------------------------------------------------------------------- globals
class _Global:
    """A global of the checkpoint format, written by name (torch is never imported)."""

    def __init__(self, path: str):
        self.module, _, self.name = path.rpartition(".")

    def __call__(self, *args):  # pickle wants a callable in a reduce tuple; never called
        raise TypeError(f"{self.module}.{self.name} is a name in a checkpoint, not a function")


_G = {
    p: _Global(p)
    for p in (
        "torch._utils._rebuild_tensor_v2",
        "torch._utils._rebuild_tensor_v3",
        "torch._utils._rebuild_parameter",
        "collections.OrderedDict",
        "torch.device",
        "torch.Size",
    )
}


class _StorageType:
    """A ``torch.<Scalar>Storage`` class as a checkpoint names it: the element dtype."""

    def __init__(self, name: str, dtype: dt.dtype):
        self.name, self.dtype = name, dtype


class _Storage:
    """A loaded storage: a 1-D array of its elements on its final device."""

    def __init__(self, array):
        self.array = array


# (float8 dtypes and complex32 have no typed storage PyTorch's weights-only loader takes: it
# saves them in an UntypedStorage, whose rebuild (_rebuild_tensor_v3) names the dtype)
_UNTYPED = (*dt.FLOAT8, dt.complex32)
_STORAGE_TYPES = {
    f"{d.scalar_name}Storage": _StorageType(f"{d.scalar_name}Storage", d)
    for d in dt.ALL
    if d not in dt.FLOAT8
}
_STORAGE_TYPES["UntypedStorage"] = _StorageType("UntypedStorage", dt.uint8)
# the storage classes a save names, one per dtype with a typed storage
_STORAGE_GLOBALS = {
    d: _Global(f"torch.{d.scalar_name}Storage") for d in dt.ALL if d not in _UNTYPED
}
_UNTYPED_STORAGE = _Global("torch.storage.UntypedStorage")


# ----------------------------------------------------------------------------- rebuilding
def _ints(x, what: str) -> tuple:
    if not isinstance(x, tuple) or not all(type(i) is int for i in x):
        raise pickle.UnpicklingError(f"tensor {what} must be a tuple of ints, got {x!r}")
    return x


def _strided(storage, offset, size, stride, dtype: dt.dtype | None = None):
    """The array over ``storage`` that a tensor with this geometry sees (no copy), after
    checking that every element it addresses lies inside the storage."""
    if not isinstance(storage, _Storage):
        raise pickle.UnpicklingError(f"expected a storage to rebuild a tensor, got {type(storage)}")
    size, stride = _ints(size, "size"), _ints(stride, "stride")
    arr = storage.array
    if dtype is not None and dtype.np != arr.dtype:
        if arr.nbytes % dtype.itemsize:
            raise RuntimeError(f"a storage of {arr.nbytes} bytes cannot hold {dtype} elements")
        arr = arr.view(np.uint8).view(dtype.np)
    if type(offset) is not int or len(size) != len(stride):
        raise pickle.UnpicklingError("tensor offset, size and stride are malformed")
    if offset < 0 or min(size + stride, default=0) < 0:
        raise RuntimeError(f"negative offset, size or stride: {offset}, {size}, {stride}")
    extent = 0 if 0 in size else offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))
    if extent > arr.size or offset > arr.size:
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, "
            f"and itemsize {arr.itemsize} requiring a storage size of {extent * arr.itemsize} "
            f"are out of bounds for storage of size {arr.nbytes}"
        )
    xp = xp_of(arr)
    if xp is not np:
        with arr.device:  # views of a GPU's storage on that GPU
            return _view(xp, arr, offset, size, stride)
    return _view(xp, arr, offset, size, stride)


def _view(xp, arr, offset: int, size: tuple, stride: tuple):
    step = arr.itemsize
    strides = tuple(s * step for s in stride)
    if arr.dtype in dt.FLOAT8_NP:  # (NumPy's as_strided can't name float8_e5m2's type)
        raw = dt.as_strided(xp, arr[offset:].view(np.uint8), size, strides)
        return raw.view(arr.dtype)
    return dt.as_strided(xp, arr[offset:], size, strides)


def _rebuild_tensor_v2(
    storage, storage_offset, size, stride, requires_grad=False, backward_hooks=None, metadata=None
) -> Tensor:
    t = _make(_strided(storage, storage_offset, size, stride))
    if requires_grad:
        t.requires_grad_(bool(requires_grad))
    return t


def _rebuild_tensor(storage, storage_offset, size, stride) -> Tensor:
    return _rebuild_tensor_v2(storage, storage_offset, size, stride)


def _rebuild_tensor_v3(
    storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype, metadata=None
) -> Tensor:
    if not isinstance(dtype, dt.dtype):
        raise pickle.UnpicklingError(f"expected a dtype, got {dtype!r}")
    t = _make(_strided(storage, storage_offset, size, stride, dtype))
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_parameter(data, requires_grad, backward_hooks=None) -> Parameter:
    if not isinstance(data, Tensor):
        raise pickle.UnpicklingError(f"expected a tensor to rebuild a Parameter, got {type(data)}")
    return Parameter(data, bool(requires_grad))


def _set_state(obj, state) -> None:
    if isinstance(state, tuple) and len(state) == 2:  # (dict state, slot state)
        state = state[0]
    if isinstance(state, dict):
        obj.__dict__.update({k: v for k, v in state.items() if isinstance(k, str)})


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state) -> Parameter:
    p = _rebuild_parameter(data, requires_grad)
    _set_state(p, state)
    return p


def _rebuild_from_type_v2(func, new_type, args, state):
    if func not in (_rebuild_tensor_v2, _rebuild_tensor_v3, _rebuild_tensor, _rebuild_parameter):
        raise pickle.UnpicklingError(
            f"Trying to rebuild a tensor with unrecognized function {func}"
        )
    if new_type not in (Tensor, Parameter) or not isinstance(args, tuple):
        raise pickle.UnpicklingError(f"numtorch.load cannot rebuild a tensor of type {new_type}")
    t = func(*args)
    if new_type is Parameter and not isinstance(t, Parameter):
        t = Parameter(t, t.requires_grad)
    _set_state(t, state)
    return t


def _unsupported(path: str, what: str):
    def refuse(*args, **kwargs):
        raise RuntimeError(f"numtorch.load cannot rebuild {path}: numtorch has no {what}")

    return refuse


def _allowed_globals() -> dict[str, Any]:
    """What a weights-only checkpoint may name, resolved to numtorch's objects."""
    rc: dict[str, Any] = {
        "collections.OrderedDict": collections.OrderedDict,
        "collections.Counter": collections.Counter,
        "builtins.set": set,
        "builtins.complex": complex,
        "builtins.bytearray": bytearray,
        "_codecs.encode": _encode,
        "torch.Size": Size,
        "torch.Tensor": Tensor,
        "torch.device": device,
        "torch.nn.parameter.Parameter": Parameter,
        "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
    }
    for f in (
        _rebuild_tensor,
        _rebuild_tensor_v2,
        _rebuild_tensor_v3,
        _rebuild_parameter,
        _rebuild_parameter_with_state,
    ):
        rc[f"torch._utils.{f.__name__}"] = f
    for name, st in _STORAGE_TYPES.items():
        rc[f"torch.{name}"] = st
        rc[f"torch.storage.{name}"] = st
    for d in dt.ALL:
        rc[f"torch.{d.name}"] = d
    return rc


def _encode(obj, encoding="utf-8", errors="strict"):
    """``_codecs.encode``, which protocol 2 uses for bytes."""
    return codecs.encode(obj, encoding, errors)


_ALLOWED = _allowed_globals()
# Globals PyTorch's weights-only loader accepts that numtorch cannot represent.
_UNSUPPORTED = {
    **{
        f"torch._utils.{n}": "sparse, quantized, nested or meta tensors"
        for n in """_rebuild_qtensor _rebuild_sparse_tensor _rebuild_meta_tensor_no_storage
        _rebuild_nested_tensor _rebuild_wrapper_subclass _rebuild_device_tensor_from_numpy
        _rebuild_device_tensor_from_cpu_tensor""".split()
    },
    **{
        f"torch.{n}": f"dtype or storage {n}"
        for n in """uint16 uint32 uint64 QInt8Storage QUInt8Storage
        QInt32Storage""".split()
    },
}


def _torch_name(module: str, name: str) -> Any:
    """numtorch's object for a global of the checkpoint format, or None."""
    if (module, name) in _compat_pickle.NAME_MAPPING:  # Python 2 names, as protocol 2 writes
        module, name = _compat_pickle.NAME_MAPPING[(module, name)]
    module = _compat_pickle.IMPORT_MAPPING.get(module, module)
    path = f"{module}.{name}"
    if path in _ALLOWED:
        return _ALLOWED[path]
    if path in _UNSUPPORTED:
        return _unsupported(path, _UNSUPPORTED[path])
    return None


# ----------------------------------------------------------------------------- devices
def _restore(array, location: str, map_location) -> Any:
    """A storage's array moved where ``map_location`` sends storages saved at ``location``."""
    target = location
    if callable(map_location) and not isinstance(map_location, device):
        out = map_location(_make(array), location)
        if out is None:
            return _to_location(array, location, explicit=False)
        if not isinstance(out, Tensor) or out.dtype.np != array.dtype:
            raise TypeError(
                "map_location must return None or a 1-D tensor of the storage's dtype, got "
                f"{type(out).__name__}"
            )
        return out._data.reshape(-1)
    if isinstance(map_location, dict):
        target = map_location.get(location, location)
    elif map_location is not None:
        target = map_location
    return _to_location(array, str(target), explicit=map_location is not None)


def _to_location(array, location: str, explicit: bool):
    dev = device(location)
    if dev.type == "cuda":
        if not explicit and not is_cuda_available():
            raise RuntimeError(
                "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() "
                "is False. If you are running on a CPU-only machine, please use torch.load with "
                "map_location=torch.device('cpu') to map your storages to the CPU."
            )
        if is_cuda_available():
            return _to_gpu(array, dev)
    if dev == device_of(array):
        return array
    return _make(array).to(dev)._data


def _to_gpu(array, dev: device):
    """A storage's array on the GPU ``dev`` (the current one when it names none), refused as
    PyTorch refuses a GPU index that does not exist."""
    index = gpu_index(dev)
    count = cuda_device_count()
    if index >= count:
        raise RuntimeError(
            f"Attempting to deserialize object on CUDA device {index} but "
            f"torch.cuda.device_count() is {count}. Please use torch.load with map_location "
            "to map your storages to an existing device."
        )
    if device_of(array) == device("cuda", index):
        return array
    host = array if isinstance(array, np.ndarray) else array.get()
    return host_to_gpu(host, device("cuda", index))


# ----------------------------------------------------------------------------- unpicklers
class _WeightsUnpickler(pickle.Unpickler):
    """Unpickles only tensors, numbers, strings and containers: every global is looked up in
    an allowlist of numtorch's own objects, so nothing the file names is ever imported or
    called."""

    def __init__(self, file, storage: Callable, **kwargs):
        super().__init__(file, **kwargs)
        self._storage = storage

    def find_class(self, module: str, name: str) -> Any:
        obj = _torch_name(module, name)
        if obj is not None:
            return obj
        module = _compat_pickle.IMPORT_MAPPING.get(module, module)
        path = f"{module}.{name}"
        if module in _BLOCKED_MODULES:
            raise pickle.UnpicklingError(
                f"Trying to load unsupported GLOBAL {path} whose module {module} is blocked."
            )
        if module == "builtins":
            path = name
        raise pickle.UnpicklingError(
            f"Unsupported global: GLOBAL {path} was not an allowed global by default."
        )

    def persistent_load(self, pid):
        if type(pid) is not tuple or not pid or pid[0] not in ("storage", b"storage"):
            raise pickle.UnpicklingError(
                f"Only persistent_load of storage is allowed, but got {pid!r}"
            )
        return self._storage(pid)


class _FullUnpickler(_WeightsUnpickler):
    """Plain pickle (runs what the file names), with PyTorch's tensor globals mapped to
    numtorch's; other torch objects are refused rather than importing torch."""

    def find_class(self, module: str, name: str) -> Any:
        obj = _torch_name(module, name)
        if obj is not None:
            return obj
        if module == "torch" or module.startswith("torch."):
            raise RuntimeError(
                f"numtorch.load cannot rebuild {module}.{name}: it reads PyTorch's tensors, "
                "parameters, dtypes and devices, not other torch objects"
            )
        return pickle.Unpickler.find_class(self, module, name)


def _storage_pid(pid) -> tuple[_StorageType, str, str, int, Any]:
    if len(pid) not in (5, 6):
        raise pickle.UnpicklingError(f"malformed storage id {pid!r}")
    _, stype, key, location, numel, *view = pid
    if not isinstance(stype, _StorageType) or type(numel) is not int or numel < 0:
        raise pickle.UnpicklingError(f"malformed storage id {pid!r}")
    key, location = _text(key), _text(location)
    return stype, key, location, numel, view[0] if view else None


def _text(x) -> str:
    if isinstance(x, bytes):
        x = x.decode("ascii")
    if not isinstance(x, str):
        raise pickle.UnpicklingError(f"expected a string in a storage id, got {x!r}")
    return x


def _wo_message(message: str) -> str:
    """PyTorch's explanation around a weights-only refusal."""
    if "was not an allowed global by default" in message:
        return (
            "Weights only load failed. This file can still be loaded, \033[1mdo it only if you "
            f"trust the source of the checkpoint\033[0m. \n\t{UNSAFE_MESSAGE}\n\t"
            f"WeightsUnpickler error: {message}"
        )
    head = f"Weights only load failed. {UNSAFE_MESSAGE}\n"
    if "is blocked" not in message:
        head += "WeightsUnpickler error: "
    return head + "\n\n" + message


# ----------------------------------------------------------------------------- load
def _zip_load(zf: zipfile.ZipFile, unpickler: type, map_location, path, mmap, kwargs) -> Any:
    names = zf.namelist()
    pkl = next((n for n in names if n == "data.pkl" or n.endswith("/data.pkl")), None)
    if pkl is None:
        if any(n.endswith("constants.pkl") for n in names):
            raise RuntimeError(
                "numtorch.load cannot read a TorchScript archive (torch.jit.save); save the "
                "model's state_dict() with torch.save instead"
            )
        raise RuntimeError("PytorchStreamReader failed locating file data.pkl: file not found")
    prefix = pkl[: -len("data.pkl")]
    order = prefix + "byteorder"
    swap = order in names and zf.read(order).decode().strip() != sys.byteorder
    loaded: dict[str, _Storage] = {}

    def storage(pid) -> _Storage:
        stype, key, location, numel, _ = _storage_pid(pid)
        if key in loaded:
            return loaded[key]
        name = f"{prefix}data/{key}"
        try:
            info = zf.getinfo(name)
        except KeyError:
            raise RuntimeError(
                f"PytorchStreamReader failed locating file {name}: file not found"
            ) from None
        nbytes = numel * stype.dtype.itemsize
        if info.file_size < nbytes:
            raise RuntimeError(f"record {name} holds {info.file_size} bytes, expected {nbytes}")
        if mmap and info.compress_type == zipfile.ZIP_STORED:
            arr = np.memmap(path, stype.dtype.np, "c", _data_offset(zf, info), (numel,))
        else:
            arr = np.empty(numel, stype.dtype.np)
            with zf.open(info) as src:
                src.readinto(memoryview(arr.view(np.uint8)))
        if swap:
            arr.byteswap(inplace=True)
        loaded[key] = _Storage(_restore(arr, location, map_location))
        return loaded[key]

    with zf.open(pkl) as data:
        return unpickler(io.BytesIO(data.read()), storage, **kwargs).load()


def _data_offset(zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> int:
    """Where a stored record's bytes start in the archive (after its local header)."""
    zf.fp.seek(info.header_offset)
    header = zf.fp.read(30)
    name_len, extra_len = struct.unpack("<HH", header[26:30])
    return info.header_offset + 30 + name_len + extra_len


def _legacy_load(f, unpickler: type, map_location, kwargs) -> Any:
    """PyTorch's pre-1.6 stream: magic number, protocol, system info, the object, the
    storage keys, then each storage as an 8-byte element count and its raw elements."""
    placeholders: dict[str, _Storage] = {}

    def storage(pid) -> _Storage:
        stype, key, location, numel, view = _storage_pid(pid)
        if key not in placeholders:
            if str(_restore_target(location, map_location)) != "cpu":
                raise RuntimeError(
                    "numtorch.load reads PyTorch's legacy format to the CPU only; pass "
                    "map_location='cpu' (or re-save the checkpoint with a recent PyTorch)"
                )
            placeholders[key] = _Storage(np.zeros(numel, stype.dtype.np))
        root = placeholders[key]
        if view is not None:  # (view key, offset, size): a slice of the root storage
            vkey, offset, size = view
            vkey = _text(vkey)
            if vkey not in placeholders:
                placeholders[vkey] = _Storage(root.array[offset : offset + size])
            return placeholders[vkey]
        return root

    def unpickle():
        return unpickler(f, storage, **kwargs).load()

    if unpickle() != _MAGIC_NUMBER:
        raise RuntimeError("Invalid magic number; corrupt file?")
    protocol = unpickle()
    if protocol != _LEGACY_PROTOCOL:
        raise RuntimeError(f"Invalid protocol version: {protocol}")
    info = unpickle()
    little = not isinstance(info, dict) or info.get("little_endian", True)
    result = unpickle()
    keys = unpickle()
    if not isinstance(keys, list):
        raise RuntimeError("corrupt legacy checkpoint: no storage keys")
    for key in keys:
        arr = placeholders[_text(key)].array
        (numel,) = struct.unpack("<q" if little else ">q", f.read(8))
        if numel != arr.size:
            raise RuntimeError(f"storage {key} holds {numel} elements, expected {arr.size}")
        data = f.read(arr.nbytes)
        if len(data) != arr.nbytes:
            raise RuntimeError(f"storage {key} is truncated")
        arr.view(np.uint8)[:] = np.frombuffer(data, np.uint8)
        if little != (sys.byteorder == "little"):
            arr.byteswap(inplace=True)
    return result


def _restore_target(location: str, map_location) -> str:
    if isinstance(map_location, dict):
        return map_location.get(location, location)
    if map_location is None or callable(map_location) and not isinstance(map_location, device):
        return location
    return str(map_location)


def _is_path(f) -> bool:
    return isinstance(f, (str, os.PathLike))


def load(
    f: FileLike,
    map_location: Callable | device | str | dict[str, str] | None = None,
    pickle_module: Any = None,
    *,
    weights_only: bool | None = None,
    mmap: bool | None = None,
    **pickle_load_args: Any,
) -> Any:
    """Load an object saved with ``save`` or PyTorch's ``torch.save``.

    ``weights_only`` (None means True, PyTorch's default) restricts the file to tensors,
    Parameters, dtypes, devices, numbers, strings, bytes and containers; a file that names
    anything else raises ``pickle.UnpicklingError`` and nothing in it runs. ``False`` uses
    full pickle: only for trusted files. ``map_location`` is a device or a string (every
    storage goes there), a dict from saved location to location, or a callable
    ``(storage, location)`` that gets each storage as a 1-D CPU tensor and returns a tensor
    or None (keep the saved location). ``mmap=True`` maps the storages of a path instead of
    reading them."""
    weights_only = True if weights_only is None else weights_only
    if weights_only:
        if pickle_module is not None:
            raise RuntimeError(
                "Can not safely load weights when explicit pickle_module is specified"
            )
        if pickle_load_args:
            warnings.warn("pickle_load_args only works if `weights_only=False`.", stacklevel=2)
        unpickler, kwargs = _WeightsUnpickler, {"encoding": "utf-8"}
    else:
        if pickle_module not in (None, pickle):
            raise NotImplementedError(
                "numtorch.load unpickles with the standard pickle module only"
            )
        unpickler, kwargs = _FullUnpickler, {"encoding": "utf-8", **pickle_load_args}
    if mmap and not _is_path(f):
        raise ValueError("f must be a file path in order to use the mmap argument")
    with open(f, "rb") if _is_path(f) else _nullcontext(f) as opened:
        try:
            start = opened.tell()
            is_zip = opened.read(4) == b"PK\x03\x04"
            opened.seek(start)
            if is_zip:
                with zipfile.ZipFile(opened) as zf:
                    return _zip_load(zf, unpickler, map_location, f, mmap, kwargs)
            if mmap:
                raise RuntimeError(
                    "mmap can only be used with files saved with "
                    "`torch.save(_use_new_zipfile_serialization=True), please torch.save your "
                    "checkpoint with this option in order to use mmap."
                )
            if _is_tar(opened):
                raise RuntimeError(
                    "numtorch.load cannot read PyTorch's legacy tar format; re-save the "
                    "checkpoint with torch.save in a recent PyTorch"
                )
            return _legacy_load(opened, unpickler, map_location, kwargs)
        except pickle.UnpicklingError as e:
            if weights_only:
                raise pickle.UnpicklingError(_wo_message(str(e))) from None
            raise


def _is_tar(f) -> bool:
    start = f.tell()
    try:
        f.seek(start + 257)
        return f.read(5) == b"ustar"
    finally:
        f.seek(start)


class _nullcontext:
    def __init__(self, f):
        self.f = f

    def __enter__(self):
        return self.f

    def __exit__(self, *exc):
        return False


# ----------------------------------------------------------------------------- save
class _PersistentStorage:
    """A storage reference in the pickle, written as its persistent id."""

    __slots__ = ("pid",)

    def __init__(self, pid: tuple):
        self.pid = pid


class _Storages:
    """The storages a save writes: one per memory block that tensors of one dtype share."""

    def __init__(self):
        self.records: dict[str, np.ndarray] = {}
        self.roots: dict[int, tuple] = {}  # id(root array) -> (root, persistent id)

    def tensor(self, t: Tensor) -> tuple:
        """(persistent id, storage offset, stride) of a tensor."""
        arr = t._data
        if not isinstance(arr, np.ndarray):  # CuPy: its own storage, copied to the host
            return self._own(arr.get(), f"cuda:{arr.device.id}")
        root = arr
        while isinstance(root.base, np.ndarray):
            root = root.base
        step = arr.itemsize
        start = arr.__array_interface__["data"][0] - root.__array_interface__["data"][0]
        if (
            root.dtype != arr.dtype
            or not root.flags.c_contiguous
            or start % step
            or any(s < 0 or s % step for s in arr.strides)
        ):
            return self._own(arr, "cpu")
        if id(root) not in self.roots:
            self.roots[id(root)] = (root, self._add(root.reshape(-1), "cpu"))
        return self.roots[id(root)][1], start // step, tuple(s // step for s in arr.strides)

    def _own(self, arr: np.ndarray, location: str) -> tuple:
        flat = np.ascontiguousarray(arr)
        return (
            self._add(flat.reshape(-1), location),
            0,
            tuple(s // flat.itemsize for s in flat.strides),
        )

    def _add(self, flat: np.ndarray, location: str) -> tuple:
        key = str(len(self.records))
        self.records[key] = flat
        d = dt.from_np(flat.dtype)
        if d in _UNTYPED:  # an UntypedStorage counts bytes
            return ("storage", _UNTYPED_STORAGE, key, location, flat.nbytes)
        return ("storage", _STORAGE_GLOBALS[d], key, location, flat.size)


def _prefilled() -> list[tuple[Any, str]]:
    """Every torch global a save may write, with its dotted name; its place in the list is
    its memo index in each pickle."""
    named: list[tuple[Any, str]] = [(g, p) for p, g in _G.items()]
    named += [(g, f"{g.module}.{g.name}") for g in _STORAGE_GLOBALS.values()]
    named.append((_UNTYPED_STORAGE, "torch.storage.UntypedStorage"))
    named += [(d, f"torch.{d.name}") for d in dt.ALL]
    return named


class _Pickler(pickle.Pickler):
    """Pickles tensors, dtypes, devices and sizes as PyTorch does, naming torch's globals
    without importing torch. The C pickler checks that a global it writes is importable by
    its name, so torch's globals never reach it: each pickle starts in a memo that already
    holds them all, and ``header`` writes the prefix that puts those it used into the
    unpickler's memo at the same indices (a None in the place of each unused one)."""

    _PREFILLED = _prefilled()
    _MEMO = {id(obj): (i, obj) for i, (obj, _) in enumerate(_PREFILLED)}
    _PICKLED_GLOBALS = frozenset((_Global, dt.dtype))

    def __init__(self, file, protocol: int, storages: _Storages):
        super().__init__(file, protocol)
        self.memo = self._MEMO
        self._storages = storages
        self._used: set[int] = set()

    def persistent_id(self, obj):
        # called for every object, memoized ones included: where the globals are seen
        kind = type(obj)
        if kind in self._PICKLED_GLOBALS:
            self._used.add(id(obj))
        elif kind is _PersistentStorage:
            return obj.pid
        return None

    def header(self) -> bytes:
        """The opcodes that fill the unpickler's memo with the globals this pickle used."""
        out = []
        for i, (obj, path) in enumerate(self._PREFILLED):
            if id(obj) in self._used:
                module, _, name = path.rpartition(".")
                out.append(pickle.GLOBAL + f"{module}\n{name}\n".encode())
            else:
                out.append(pickle.NONE)
            out.append(
                pickle.BINPUT + bytes((i,))
                if i < 256
                else pickle.LONG_BINPUT + struct.pack("<I", i)
            )
        return b"".join(out)

    def reducer_override(self, obj):
        if isinstance(obj, Tensor):
            return self._tensor(obj)
        if isinstance(obj, device):
            return _G["torch.device"], (obj.type,) if obj.index is None else (obj.type, obj.index)
        if type(obj) is Size:
            return _G["torch.Size"], (tuple(obj),)
        return NotImplemented

    def _tensor(self, t: Tensor):
        if t._level:
            raise RuntimeError(
                "numtorch.save cannot save a tensor wrapped by a transform (vmap, grad, jvp); "
                "save its value outside the transform"
            )
        if isinstance(t, Parameter):  # its data pickled as a plain tensor, as PyTorch does
            hooks = collections.OrderedDict()
            return _G["torch._utils._rebuild_parameter"], (_make(t._data), t.requires_grad, hooks)
        pid, offset, stride = self._storages.tensor(t)
        args = (_PersistentStorage(pid), offset, tuple(t.shape), stride, t.requires_grad)
        if t.dtype in _UNTYPED:
            hooks = collections.OrderedDict()
            return _G["torch._utils._rebuild_tensor_v3"], (*args, hooks, t.dtype)
        return _G["torch._utils._rebuild_tensor_v2"], (*args, collections.OrderedDict())


def save(
    obj: object,
    f: FileLike,
    pickle_module: Any = pickle,
    pickle_protocol: int = 2,
    _use_new_zipfile_serialization: bool = True,
    _disable_byteorder_record: bool = False,
) -> None:
    """Save an object (tensors, state dicts, containers, numbers, strings) to a path or a
    binary file in PyTorch's zip checkpoint format (see the module docstring), which
    ``load`` and PyTorch's ``torch.load(weights_only=True)`` read."""
    if pickle_module not in (None, pickle):
        raise NotImplementedError("numtorch.save pickles with the standard pickle module only")
    if not _use_new_zipfile_serialization:
        raise NotImplementedError(
            "numtorch.save writes PyTorch's zip format only (_use_new_zipfile_serialization=True)"
        )
    storages = _Storages()
    buf = io.BytesIO()
    pickler = _Pickler(buf, pickle_protocol, storages)
    pickler.dump(obj)
    records: list[tuple[str, Any]] = [
        ("data.pkl", pickler.header() + buf.getvalue()),
        (".format_version", b"1"),
        (".storage_alignment", str(_ALIGN).encode()),
    ]
    if not _disable_byteorder_record:
        records.append(("byteorder", sys.byteorder.encode()))
    records += [(f"data/{k}", memoryview(a.view(np.uint8))) for k, a in storages.records.items()]
    records.append(("version", b"3\n"))
    if _is_path(f):
        parent = os.path.dirname(os.path.abspath(os.fspath(f)))
        if not os.path.isdir(parent):
            raise RuntimeError(f"Parent directory {parent} does not exist.")
        with open(f, "wb") as out:
            _write_zip(out, records)
    else:
        _write_zip(f, records)


def _write_zip(f: IO[bytes], records: list[tuple[str, Any]]) -> None:
    """An uncompressed zip of ``archive/<name>`` records, each one's data 64-byte aligned."""
    with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED) as zf:
        for name, data in records:
            info = zipfile.ZipInfo(f"archive/{name}", date_time=(1980, 1, 1, 0, 0, 0))
            # local header: 30 bytes, the name, then a padding extra field (id "FB", length)
            pad = -(zf.fp.tell() + 30 + len(info.filename) + 4) % _ALIGN
            info.extra = b"FB" + struct.pack("<H", pad) + b"Z" * pad
            zf.writestr(info, data)
