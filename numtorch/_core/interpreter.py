"""Transform levels: the ``Interpreter`` a transform pushes on the stack, its kind, the
``WrapperTensor`` its values travel in, and the hooks by which a tracer at the bottom of the
stack sees calls that carry no traced value (``untraced``, ``side_effect``, ``factory``)."""

from __future__ import annotations

import enum
import functools
import itertools

from . import upcalls
from .lift import unlift
from .pyargs import compile_check, has, judge
from .pytree import tree_flatten
from .state import state
from .tensor import Tensor, _new, births_recorded


class Kind(enum.Enum):
    """What a transform level does, which decides how the rest of the system treats it."""

    VMAP = "vmap"  # a batch level (vmap)
    GRAD = "grad"  # reverse mode (grad, vjp, jacrev)
    JVP = "jvp"  # forward mode (jvp, jacfwd)
    DUAL = "dual"  # forward_ad's dual level: forward mode, but not a torch.func transform
    TRACE = "trace"  # a tracer (compile): its tensors' autograd state is their inner ones'
    FUNCTIONALIZE = "functionalize"  # in-place writes a transform refuses become rebinds


FORWARD = frozenset((Kind.JVP, Kind.DUAL))  # levels of dual tensors
FUNCTORCH = frozenset((Kind.VMAP, Kind.GRAD, Kind.JVP))  # torch.func transforms


class Interpreter:
    """A transform on the stack. Subclasses implement ``process``."""

    kind = Kind.GRAD
    level = 0
    alive = False
    sees_all = False  # it gets op calls with no transform's tensor too (a tracer, at level 1)
    serial = 0  # its place in the order levels were entered (tensors' births compare to it)
    lifts = None  # weak references to the tensors lifted into this level (_core/lift.py)
    legacy = False  # a level of PyTorch's first vmap (torch._vmap_internals): not torch.func
    held = None  # id -> VersionCounter of the storages of the arguments it holds (``hold``)

    def process(self, op, args: tuple, attrs: dict):
        raise NotImplementedError

    def side_effect(self, what: str) -> None:
        """A change of state outside tensors (a generator reseeded) while this interpreter
        sees all calls: a tracer's program cannot replay it."""

    def factory(self, fn, args: tuple, kwargs: dict):
        """A factory function's call (zeros, arange, ...) while this interpreter sees all
        calls (a tracer); others never get one."""
        return fn(*args, **kwargs)

    def commit(self, target, result, op=None) -> None:
        """An in-place write where target or result belongs to this level."""
        raise NotImplementedError(f"in-place ops under {type(self).__name__}")

    def tracks(self, t) -> bool:
        """Whether t, a tensor of this level, carries this level's derivative."""
        return True

    def hold(self, tree) -> None:
        """Take the tensors of ``tree``, arguments the transform got but does not
        differentiate, as its own: PyTorch wraps them at its level too, so a write into one
        (or a view of it) is not a write into a captured tensor (_core/lift.py)."""
        vers = {id(t._ver): t._ver for t in tree_flatten(tree)[0] if isinstance(t, Tensor)}
        if vers:
            self.held = vers if self.held is None else self.held | vers

    def adopt(self, t, value) -> None:
        """Make t, whose old state ``lift`` moved into ``t._inner``, this level's wrapper
        (its class and the level's own fields); ``value``: the value about to be written."""
        raise NotImplementedError(f"lifting into {type(self).__name__}")

    def __enter__(self):
        state.stack.append(self)
        self.level = len(state.stack)
        self.alive = True
        self.serial = next(_serials)
        births_recorded(self.serial)
        return self

    def __exit__(self, *exc):
        top = state.stack.pop()
        assert top is self, "transform levels must exit in order"
        self.alive = False
        births_recorded(None)
        if self.lifts is not None:
            unlift(self)
        return False


_serials = itertools.count(1)


_VMAP_READ = (
    "vmap: It looks like you're either (1) calling .item() on a Tensor or (2) attempting to "
    "use a Tensor in some data-dependent control flow or (3) encountering this error in "
    "PyTorch internals. For (1): we don't support vmap over calling .item() on a Tensor, "
    "please try to rewrite what you're doing with other operations. For (2): we don't "
    "support data-dependent control flow in vmap yet, please file an issue at "
    "https://github.com/pytorch/pytorch/issues . For (3): please file an issue."
)


class WrapperTensor(Tensor, internal=True):
    """A tensor belonging to a transform level; shows the logical tensor."""

    __slots__ = ()  # its fields are slots of Tensor (WRAPPER_SLOTS)

    @classmethod
    def _new(cls, inner: Tensor, interp: Interpreter):
        """A wrapper around ``inner`` at ``interp``'s level (no autograd state of its own)."""
        w = _new(cls)
        w._inner = inner
        w._interp = interp
        w._rg_bit = False
        w._grad_fn = None
        w._base = None
        w._ver = inner._ver
        return w

    @property
    def _level(self) -> int:
        return self._interp.level

    @property
    def _data(self):
        # Reached at level 0 only by a wrapper whose transform has returned.
        if not self._interp.alive:
            raise_escaped(self)
        raise RuntimeError(
            f"{type(self).__name__} has no storage of its own; it belongs to a transform"
        )

    @property
    def shape(self):
        return self._inner.shape

    def dim(self) -> int:
        return self._inner.dim()

    ndimension = dim

    @property
    def ndim(self) -> int:
        return self._inner.dim()

    def numel(self) -> int:
        return self._inner.numel()

    nelement = numel

    @property
    def dtype(self):
        return self._inner.dtype

    @property
    def device(self):
        return self._inner.device

    def size(self, dim=None):
        return self._inner.size(dim)

    def stride(self, dim=None):
        return self._inner.stride(dim)

    def is_contiguous(self, memory_format=None) -> bool:
        return self._inner.is_contiguous()

    def __len__(self) -> int:
        if self.dim() == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    # Values read out of a wrapper are its inner tensor's (vmap forbids them: read through
    # another transform's wrapper, PyTorch's error does not know whether it was a read or
    # control flow).
    def _readable(self) -> Tensor:
        t = self._inner
        while isinstance(t, WrapperTensor):
            if t._interp.kind is Kind.VMAP:
                raise RuntimeError(_VMAP_READ)
            t = t._inner
        return self._inner

    def item(self):
        return self._readable().item()

    def __float__(self) -> float:
        return float(self._readable())

    def __int__(self) -> int:
        return int(self._readable())

    def __complex__(self) -> complex:
        return complex(self._readable())

    def __index__(self) -> int:
        if self.dtype.is_floating_point or self.numel() != 1:  # (PyTorch's check comes first)
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return self._readable().__index__()

    def __bool__(self) -> bool:
        return bool(self._readable())

    def tolist(self):
        return self._inner.tolist()

    def numpy(self, *, force: bool = False):
        if self._rg and not force:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                "instead."
            )
        return self._inner.numpy(force=True)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(lvl={self._level}, value={self._inner!r})"

    __str__ = __repr__


class untraced:  # noqa: N801 - a context manager used as a function
    """Op calls inside are not a tracer's to record: autograd's own bookkeeping (a view's
    grad_fn regenerated from its base), not the traced function's computation."""

    __slots__ = ("tracer",)

    def __enter__(self) -> None:
        st = state.stack
        self.tracer = st[0] if st and st[0].sees_all else None
        if self.tracer is not None:
            self.tracer.sees_all = False

    def __exit__(self, *exc) -> None:
        if self.tracer is not None:
            self.tracer.sees_all = True


def side_effect(what: str) -> None:
    """Tell a tracer at work of a change of state outside tensors (see Interpreter)."""
    st = state.stack
    if st and st[0].sees_all:
        st[0].side_effect(what)


# Interpreters that own the tensors factories create (functionalize's), innermost last.
owners: list[Interpreter] = []


def factory(fn=None, *, key: str | None = None):
    """A factory function a tracer records as one call (its arguments are Python values).
    Its arguments are checked as PyTorch's parser checks those of ``key`` (default:
    ``torch.<its name>``)."""
    if fn is None:
        return functools.partial(factory, key=key)
    key = key or f"torch.{fn.__name__}"
    check = None  # (compiled on the first call)

    @functools.wraps(fn)
    def call(*args, **kwargs):
        nonlocal check
        if check is None:
            check = compile_check(key)
        if not check(args, kwargs):
            judge(key, args, kwargs)
        try:
            if state.stack:
                if state.stack[0].sees_all:
                    return state.stack[0].factory(fn, args, kwargs)
                if owners:
                    return owners[-1].factory(fn, args, kwargs)
            if state.modes:
                return upcalls.factory_mode(fn, args, kwargs)
            return fn(*args, **kwargs)
        except Exception:  # (the parser's TypeError, where it refuses the call, first)
            if has(key):
                judge(key, args, kwargs)
            raise

    call._parsed = True
    return call


def torch_level(level: int) -> int:
    """A level's number as PyTorch's errors show it: the tracers below it (compile's, which
    PyTorch's own compiler does not stack as levels) left out of the count."""
    return level - sum(1 for i in state.stack[:level] if i.kind is Kind.TRACE)


def values_hidden(t: Tensor) -> bool:
    """Whether a transform hides t's values from Python control flow. A tracer does not:
    a value read while it traces sends that part back to eager code, which reads it."""
    return t._level > 0 and not t._interp.sees_all


def raise_escaped(a) -> None:
    raise RuntimeError(
        f"a {type(a).__name__} escaped the transform that created it and was used after the "
        "transform returned"
    )
