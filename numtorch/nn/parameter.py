"""nn.Parameter, nn.Buffer and the uninitialized placeholders of the lazy layers."""

from __future__ import annotations

from .._core import dtype as dt
from .._core.device import copy_array
from .._core.tensor import Tensor, _init, _make
from ..autograd.grad_mode import no_grad
from ..ops.creation import empty


def _alias(cls: type, data: Tensor | None) -> Tensor:
    """An instance of cls sharing data's memory and version counter, outside autograd."""
    if data is None:
        data = empty(0)
    elif not isinstance(data, Tensor):
        raise TypeError(
            f"Creating a {cls.__name__} from an instance of type {type(data).__name__} requires "
            "that detach() returns an instance of the same type, but return type "
            f"{type(data).__name__} was found instead."
        )
    t = object.__new__(cls)
    _init(t, data._data)
    t._ver = data._ver
    return t


class Parameter(Tensor):
    """A tensor that is a module parameter: assigned to a Module it is registered in
    ``parameters()``; requires grad by default."""

    _is_param = True

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True):
        p = _alias(cls, data)
        if requires_grad:
            p.requires_grad_(True)
        return p

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True):
        pass

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        new = type(self)(_make(copy_array(self._data)), self.requires_grad)
        if self._grad is not None:
            new._grad = self._grad.__deepcopy__(memo)
        memo[id(self)] = new
        return new

    def __reduce_ex__(self, proto):
        return (_rebuild_parameter, (Tensor.__reduce_ex__(self, proto), self.requires_grad))


def _rebuild_parameter(reduced, requires_grad: bool) -> Parameter:
    fn, args = reduced
    return Parameter(fn(*args).detach(), requires_grad)


class Buffer(Tensor):
    """A tensor that is a module buffer when assigned to a Module (``persistent`` says
    whether it enters the state dict)."""

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True):
        b = _alias(cls, data)
        b.persistent = persistent
        return b

    def __init__(self, data: Tensor | None = None, *, persistent: bool = True):
        pass


class _Uninitialized:
    """Shape-less placeholders of the lazy layers; ``materialize`` gives them a shape and
    turns them into ``cls_to_become``."""

    cls_to_become: type = Tensor

    def materialize(self, shape, device=None, dtype=None) -> None:
        dtype = self._pending_dtype if dtype is None else dtype
        with no_grad():
            self._data = empty(tuple(shape), dtype=dtype, device=device)._data
        rg = self._rg
        self.__class__ = self.cls_to_become
        self._rg = rg

    @property
    def shape(self):
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error "
            "usually happens in `load_state_dict` when trying to load an uninitialized "
            "parameter into an initialized one. Call `forward` to initialize the parameters "
            "before accessing their attributes."
        )

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.requires_grad, self.device, self._pending_dtype)
        return memo[id(self)]

    def __reduce_ex__(self, proto):
        return (self.__class__, (self.requires_grad,))

    __str__ = __repr__


class UninitializedParameter(_Uninitialized, Parameter):
    """A parameter whose shape is not known yet (the lazy layers' weights)."""

    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device=None, dtype=None):
        p = Parameter.__new__(cls, empty(0, device=device, dtype=dtype), requires_grad)
        p._pending_dtype = dt.get_default_dtype() if dtype is None else dtype
        return p

    def __init__(self, requires_grad: bool = True, device=None, dtype=None):
        pass


class UninitializedBuffer(_Uninitialized, Tensor):
    """A buffer whose shape is not known yet."""

    cls_to_become = Tensor

    def __new__(cls, requires_grad: bool = False, device=None, dtype=None, persistent=True):
        b = _alias(cls, empty(0, device=device, dtype=dtype))
        b._pending_dtype = dt.get_default_dtype() if dtype is None else dtype
        b.persistent = persistent
        return b

    def __init__(self, requires_grad=False, device=None, dtype=None, persistent=True):
        pass


def is_lazy(param) -> bool:
    """Whether param is an uninitialized parameter or buffer."""
    return isinstance(param, _Uninitialized)
