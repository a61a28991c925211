"""History after in-place writes: rebasing a tensor onto the writing op's node, CopySlices
for writes through views, and regenerating a view's grad_fn from its base."""

from __future__ import annotations

import weakref

from .._core import upcalls
from .._core.inplace import view_write_error
from .._core.interpreter import untraced
from .._core.state import state
from .._core.tensor import Tensor, _new
from ..ops.views import dim_order, view_replay, view_scatter_p
from .node import CopySlices, copy_slices
from .node_classes import node_class
from .record import record
from .saved import Saved


def rehistory(self: Tensor, result: Tensor, result_rg: bool, overlap: bool = False) -> None:
    """After self's values were overwritten by result's: self's (or its base's) history
    (``overlap``: a tracked view whose elements share memory, which backward refuses)."""
    if not (result_rg and state.grad_enabled):
        if self._view is not None and self._creation is None:
            self._view_ver = self._ver.v  # (PyTorch regenerates, and refuses, the others on use)
        return
    s = _keep_result(self, result)
    if result._grad_fn is not None:
        result._grad_fn._inplace = state.inplace_form or True
    if self._view is not None:
        _rebase_view(self, result, overlap)
        if s is not None and self._grad_fn is not None:  # its errors name the view's new
            s.src = weakref.ref(self._grad_fn)  # node while that lives (PyTorch's weak_grad_fn)
    else:
        _rebase(self, result._grad_fn, result._out_nr)


def _keep_result(self: Tensor, result: Tensor) -> Saved | None:
    """An in-place op's saved output is the tensor it wrote, at its new version (as in
    PyTorch): a later write into it is then detected. The saved output, if any."""
    saved = getattr(result._grad_fn, "saved", None)
    s = saved.get("result") if saved else None
    if type(s) is not Saved:
        return None
    if s.is_output:
        if s.t is result._ver:
            s.t = self._ver
            s.version = self._ver.v
    elif s.t is result or (result._level and s.t is result._inner):
        s.t = self if s.t is result else self._inner
        s.version = s.t._ver.v
    return s


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
            fn._hooked = fn._any_hooks = True
            fn._retain_hooks[nr] = hook
            t._retain_nr = nr


def _rebase_view(view: Tensor, result: Tensor, overlap: bool = False) -> None:
    """CopySlices: the base's new history writes `result` into the view's region."""
    root, chain = _resolve(view)
    fn = result._grad_fn
    if _wraps(fn, result):
        _rebase(root, copy_slices(root, fn, chain), 0)
        _refresh(view)
        return
    attrs = {"chain": chain, "order": dim_order(root), "overlap": overlap}
    inner = None
    if root._level:  # a grad level's view: its node saves the inner values
        interp = root._interp
        inner = ((interp.unwrap(root), interp.unwrap(result)), interp.unwrap(root))
    record(view_scatter_p, (root, result), attrs, root, inner)
    root._out_nr = (
        0  # record leaves an existing tensor's output number (it may be k of a multi-output op)
    )
    _refresh(view)


def _wraps(fn, result: Tensor) -> bool:
    """Whether CopySlices can take ``fn`` (result's node) as PyTorch does: an op's node
    with one output whose first edge is its input 0, the written view."""
    return (
        fn is not None
        and type(fn) is not CopySlices
        and getattr(fn, "_op", None) is not None
        and fn._op.nout == 1
        and fn._op.vjps[0] is not None
        and not fn._op.list_inputs
        and fn.in_meta[0] is not None
    )


def _refresh(view: Tensor, strict: bool = False) -> None:
    """Regenerate a view's grad_fn from its base's current history (``strict``: for its
    grad_fn, which PyTorch refuses in no_grad mode too)."""
    root, chain = _resolve(view)
    if view._creation is not None and (root._rg or view._grad_fn is not None):
        if strict or state.grad_enabled:
            raise RuntimeError(view_write_error(view, indirect=True))
        return  # refused on its first use with grad mode on, as in PyTorch
    view._view_ver = view._ver.v
    if not root._rg:
        return
    prev = state.grad_enabled
    state.grad_enabled = True
    try:
        with untraced():
            fresh = view_replay(root, chain, dim_order(root))
    finally:
        state.grad_enabled = prev
    view._rg_bit = True
    view._grad_fn = fresh._grad_fn
    view._out_nr = 0


def _resolve(view: Tensor) -> tuple:
    """A view's root and chain of view ops; a root since laid out anew in place (``t_``)
    hands its views on to the tensor that kept its old layout (see ``relayout``)."""
    root, chain = view._view
    if root._view is not None:
        root = root._view[0]
        view._view = (root, chain)
    return root, chain


def relayout(self: Tensor, view: Tensor, old, renumber: int) -> None:
    """After an in-place view op gave self the layout of ``view`` (a view of self made from
    ``old``, self's array or inner value before): self's history is the view's node, under
    the in-place overload's name, and its view chain gains the op. A root with history
    becomes a view of a hidden tensor that keeps its old layout and history, which its
    older views, whose chains start from that layout, then hang on (``_resolve``)."""
    fn = view._grad_fn if view._rg_bit else None  # (no refresh: view is current)
    if fn is not None:
        name = fn.name()
        stem = name.rstrip("0123456789")
        fn.__class__ = node_class(f"{stem}{int(name[len(stem) :] or 0) + renumber}")
    if view._view is None:  # a transform's wrapper without views (vmap, jvp)
        return
    root, chain = view._view
    if root is self:
        if fn is None:
            return
        keep = _new(type(self))
        if self._level:
            keep._inner, keep._interp = old, self._interp
        else:
            keep._data = old
        keep._rg, keep._grad_fn, keep._ver, keep._base = self._rg, self._grad_fn, self._ver, None
        if self._out_nr:
            keep._out_nr = self._out_nr
        root = keep
    if fn is not None:  # (retain_grad stays with the old node: self.grad has the old layout)
        self._grad_fn, self._rg = fn, True
        if self._out_nr:
            self._out_nr = 0
    self._view = (root, chain)
    self._view_ver = self._ver.v


upcalls.provide(rehistory=rehistory, refresh_view=_refresh, relayout=relayout)
