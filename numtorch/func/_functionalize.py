"""functionalize and debug_unwrap.

functionalize runs a function at a transform level of its own. Its tensors are
``FunctionalTensor``s; an in-place write into one is done in place on the value underneath
when the lower levels allow it (so views and autograd see it as usual), and otherwise (a
batched value written into an unbatched tensor under vmap) the tensor is rebound to the
out-of-place result, as PyTorch's functionalization does for every write. Tensors created
inside the function by factories (``torch.zeros(3)``) belong to the level too. Inputs that
were rebound are copied back when the function returns.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .._core.inplace import commit
from .._core.interpreter import Interpreter, Kind, WrapperTensor, owners, raise_escaped
from .._core.pytree import tree_flatten, tree_map
from .._core.tensor import Tensor, bump_version

_REMOVE_ERROR = (
    "functionalize(f, remove='mutations'): received invalid argument for remove={}. Valid "
    "options are:\n     remove='mutations': all inplace and out= operators will be removed "
    "from the program, and replaced with their out-of-place equivalents.\n     "
    "remove='mutations_and_views': In addition to the above, all aliasing operators {{view}} "
    "will be replaced with their non-aliasing counterparts, {{view}}_copy.\n"
)


class FunctionalTensor(WrapperTensor, internal=True):
    """A tensor of a functionalize level."""

    __slots__ = ()


class FunctionalizeInterpreter(Interpreter):
    """The level of one functionalize call."""

    kind = Kind.FUNCTIONALIZE

    def __enter__(self):
        super().__enter__()
        owners.append(self)
        return self

    def __exit__(self, *exc):
        owners.pop()
        return super().__exit__(*exc)

    def factory(self, fn, args: tuple, kwargs: dict):
        """A tensor created inside the function belongs to this level (a write may rebind
        it)."""
        return self.wrap(fn(*args, **kwargs))

    def wrap(self, x):
        return FunctionalTensor._new(x, self) if isinstance(x, Tensor) else x

    def unwrap(self, a):
        if isinstance(a, FunctionalTensor) and a._interp is self:
            return a._inner
        if isinstance(a, (list, tuple)) and not isinstance(a, Tensor):
            return type(a)(self.unwrap(x) for x in a)
        return a

    def process(self, op, args: tuple, attrs: dict):
        from .._core.dispatch import dispatch

        out = dispatch(op, tuple(self.unwrap(a) for a in args), attrs)
        outs = tuple(self.wrap(o) for o in out) if isinstance(out, tuple) else (self.wrap(out),)
        if op.view:  # memory shared at the level below: neither side may be rebound
            for t in (args[0], *outs):
                if isinstance(t, FunctionalTensor):
                    t._has_views = True
        return outs if isinstance(out, tuple) else outs[0]

    def commit(self, target: Tensor, result: Tensor, op=None) -> None:
        value = self.unwrap(result)
        mine = isinstance(target, FunctionalTensor) and target._interp is self
        inner = target._inner if mine else target
        try:
            commit(inner, value, op)
            return
        except RuntimeError:
            # Rebinding is sound only for a tensor that no view shares memory with.
            if not _rebindable(target, mine) or value.shape != inner.shape:
                raise
        target._inner = value.to(inner.dtype)
        target._rebound = True
        bump_version(target)


def _rebindable(t: Tensor, mine: bool) -> bool:
    return mine and not t.__dict__.get("_has_views")


def functionalize(func: Callable, *, remove: str = "mutations") -> Callable:
    """func with its in-place writes replaced, where needed, by out-of-place ops: writes that
    a transform forbids in place (a batched value into an unbatched tensor under vmap) work,
    and mutated inputs are written back when func returns."""
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(_REMOVE_ERROR.format(remove))

    @functools.wraps(func)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        with FunctionalizeInterpreter() as interp:
            fargs = tree_map(interp.wrap, args)
            fkwargs = tree_map(interp.wrap, kwargs)
            out = func(*fargs, **fkwargs)
            out = tree_map(lambda o: _unwrap_output(o, interp), out)
        for orig, new in zip(_tensors(args), _tensors(fargs)):
            if new.__dict__.get("_rebound"):
                commit(orig, new._inner)
        return out

    return wrapped


def _unwrap_output(o, interp: FunctionalizeInterpreter):
    if isinstance(o, FunctionalTensor):
        if o._interp is not interp:
            raise_escaped(o)
        return o._inner
    return o


def _tensors(tree) -> list:
    return [t for t in tree_flatten(tree)[0] if isinstance(t, Tensor)]


def debug_unwrap(tensor: Tensor, *, recurse: bool = True) -> Tensor:
    """The value a transform's wrapper holds (all the way down with recurse); tensor itself
    if it is not a wrapper. For debugging only."""
    while isinstance(tensor, WrapperTensor):
        tensor = tensor._inner
        if not recurse:
            break
    return tensor
