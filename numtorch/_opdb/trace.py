"""A trivial transform for tests: records every op call that reaches its level.

It exercises the level machinery (wrap on entry, unwrap in ``process``, call
the op again one level down, re-wrap the outputs) without changing any values.
"""

from __future__ import annotations

from .._core.dispatch import dispatch
from .._core.inplace import commit
from .._core.interpreter import Interpreter, Kind, WrapperTensor
from .._core.tensor import Tensor


class TraceTensor(WrapperTensor):
    __slots__ = ()

    def detach(self) -> Tensor:
        """The inner value detached, traced again (detach is not an op, so it is not recorded)."""
        return self._interp.wrap(self._inner.detach())


class TraceInterpreter(Interpreter):
    """Records (op, inner args, attrs, inner outputs) for every op at its level."""

    kind = Kind.TRACE  # (a tracer: it carries no derivatives)

    def __init__(self):
        self.calls: list = []

    def wrap(self, t: Tensor) -> TraceTensor:
        return TraceTensor._new(t, self)

    def unwrap(self, x):
        if isinstance(x, TraceTensor) and x._interp is self:
            return x._inner
        if isinstance(x, tuple) and hasattr(x, "_fields"):
            return type(x)(*(self.unwrap(v) for v in x))
        if isinstance(x, (list, tuple)):
            return type(x)(self.unwrap(v) for v in x)
        return x

    def commit(self, target: Tensor, result: Tensor, op=None) -> None:
        """An in-place write: the inner values in place (the trace changes no values; the
        write itself is recorded as the functional op call that computed ``result``)."""
        commit(self.unwrap(target), self.unwrap(result), op)

    def process(self, op, args, attrs):
        inner = tuple(self.unwrap(a) for a in args)
        out = dispatch(op, inner, attrs)
        self.calls.append((op, inner, attrs, out))
        if isinstance(out, tuple):
            return tuple(self.wrap(o) for o in out)
        return self.wrap(out)
