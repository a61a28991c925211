"""In-place ops: version bumps, history rebasing, and writes through views."""

from __future__ import annotations

from .._core.dispatch import WrapperTensor, dispatch
from .._core.state import state
from .._core.tensor import Tensor, _refresh_view, _rg_slot


def check_inplace(self: Tensor) -> None:
    """PyTorch's errors for in-place writes into leaves that require grad."""
    if not state.grad_enabled:
        return
    if self._view is not None:
        root = self._view[0]
        if root._rg and root._grad_fn is None:
            raise RuntimeError(
                "a view of a leaf Variable that requires grad is being used in an in-place "
                "operation."
            )
    elif self._rg and self._grad_fn is None:
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation."
        )


def _requires_grad(t) -> bool:
    """Whether t, or a tensor inside a transform's wrapper, requires grad at its level."""
    while isinstance(t, WrapperTensor):
        if t._rg:
            return True
        t = t._inner
    return isinstance(t, Tensor) and t._rg


def run_inplace(op, self: Tensor, args: tuple, attrs: dict) -> Tensor:
    """self.<op>_(*args): the functional op, then its result written into self."""
    check_inplace(self)
    if attrs and "out" in attrs:
        raise TypeError(f"{op.name}_() got an unexpected keyword argument 'out'")
    src = self
    if (
        state.grad_enabled
        and any(op.inputs[0] in names for names in op.saves)
        and (_requires_grad(self) or any(_requires_grad(a) for a in args))
    ):
        # The formula needs self's old value, which the write destroys: save a copy.
        src = self.clone()
    if len(attrs) == len(op.attrs):
        result = dispatch(op, (src, *args), attrs)
    else:  # bind defaults through the op's signature
        result = op.fn(src, *args, **attrs)
    commit(self, result, op)
    return self


def commit(self: Tensor, result: Tensor, op=None) -> None:
    """Write result's values into self, bump the version, and rebase history."""
    sd, rd = self.dtype, result.dtype
    if rd != sd and rd._kind > sd._kind:
        raise RuntimeError(
            f"result type {rd.scalar_name} can't be cast to the desired output type "
            f"{sd.scalar_name}"
        )
    if tuple(result.shape) != tuple(self.shape):
        raise RuntimeError(
            f"output with shape {list(self.shape)} doesn't match the broadcast shape "
            f"{list(result.shape)}"
        )
    if state.stack:
        lvl = max(self._level, result._level)
        if lvl:
            state.stack[lvl - 1].commit(self, result, op)
            return
    data = self._data
    try:
        data[...] = result._data
    except ValueError as e:
        if "read-only" in str(e):
            raise RuntimeError(
                "unsupported operation: more than one element of the written-to tensor refers "
                "to a single memory location. Please clone() the tensor before performing the "
                "operation."
            ) from None
        raise
    self._ver.v += 1
    rehistory(self, result, result._rg)


def rehistory(self: Tensor, result: Tensor, result_rg: bool) -> None:
    """After self's values were overwritten by result's: self's (or its base's) history."""
    if not (result_rg and state.grad_enabled):
        if self._view is not None:
            self._view_ver = self._ver.v
        return
    if self._view is not None:
        _rebase_view(self, result)
    else:
        _rebase(self, result._grad_fn, result._out_nr)


def _rebase(t: Tensor, fn, nr: int) -> None:
    old = t._grad_fn
    t._grad_fn = fn
    t._out_nr = nr
    t._rg = True
    if t._retains_grad and old is not None and old._retain_hooks:
        hook = old._retain_hooks.pop(t.__dict__.get("_retain_nr", 0), None)
        if hook is not None:
            if fn._retain_hooks is None:
                fn._retain_hooks = {}
            fn._hooked = True
            fn._retain_hooks[nr] = hook
            t._retain_nr = nr


def _rebase_view(view: Tensor, result: Tensor) -> None:
    """CopySlices: the base's new history writes `result` into the view's region."""
    from ..ops.views import view_scatter
    from .graph import record

    root, chain = view._view
    attrs = {"chain": chain}
    inner = None
    if root._level:  # a grad level's view: its node saves the inner values
        interp = root._interp
        inner = ((interp.unwrap(root), interp.unwrap(result)), interp.unwrap(root))
    record(view_scatter, (root, result), attrs, root, inner)
    _refresh(view)


def _refresh(view: Tensor) -> None:
    """Regenerate a view's grad_fn from its base's current history."""
    from ..ops.views import apply_chain

    view._view_ver = view._ver.v
    root, chain = view._view
    if not root._rg:
        return
    prev = state.grad_enabled
    state.grad_enabled = True
    try:
        fresh = apply_chain(root, chain)
    finally:
        state.grad_enabled = prev
    _rg_slot.__set__(view, True)
    view._grad_fn = fresh._grad_fn
    view._out_nr = 0


_refresh_view[0] = _refresh
