"""Lifting a tensor made inside a transform into that transform's level, in place.

PyTorch's functorch wraps every tensor made inside grad or jvp at that level when it is
made, so that a value the level tracks can later be written into it (``out = zeros(3);
out[0] = f(x)``); a tensor captured from outside is refused. numtorch wraps at the first
such write instead, which costs nothing where no transform is active: a tensor's storage
records its birth (``VersionCounter.born``: the serial of the last level entered before it
was made; recorded only while a level is active, see ``tensor.births_recorded``), a write of a level's value into a plain tensor born inside that level lifts it
(the object becomes the level's wrapper around a new object that holds its old state), and
the level's exit turns what it lifted back into what it wraps.

A view made before its root was lifted is behind its root's levels ("stale"); it takes
them when it is next used (``catch_up``, called by the dispatcher and the in-place path),
so that its history follows the root's, as PyTorch's views of a wrapped tensor do.
"""

from __future__ import annotations

import weakref

from . import upcalls
from .tensor import WRAPPER_SLOTS, Tensor, _new, born

# The slots of the Tensor layout (every class a lifted tensor takes has exactly these), as
# descriptors: a wrapper's ``_data`` is a property of its class, not the slot.
_SLOTS = tuple(
    (name, Tensor.__dict__[name])
    for name in ("_data", "_rg_bit", "_grad_fn", "_ver", "_base", *WRAPPER_SLOTS)
)


def born_inside(t: Tensor, interp) -> bool:
    """Whether t's storage was made while ``interp`` (an active level) was active, or is
    that of an argument it holds (``Interpreter.hold``)."""
    if not interp.alive:
        return False
    return born(t._ver) >= interp.serial or (interp.held is not None and id(t._ver) in interp.held)


def captured_write(op, args: tuple | None = None, attrs: dict | None = None) -> str:
    """PyTorch's text refusing an in-place write into a tensor that grad or jvp captured
    (``args``: the call's operands, which choose the overload its name shows)."""
    name = upcalls.inplace_name(op, args, attrs or {})
    return (
        "During a grad (vjp, jvp, grad, etc) transform, the function provided attempted to "
        f"call in-place operation ({name}) that would mutate a captured Tensor. This is not "
        "supported; please rewrite the function being transformed to explicitly accept the "
        "mutated Tensor(s) as inputs."
    )


def lift(t: Tensor, interp, value=None) -> None:
    """Give t (a tensor born inside ``interp``) ``interp``'s level, in place: the object
    at the depth where that level belongs becomes its wrapper. A view lifts its root first.
    ``value``: the value about to be written (a forward level's zero tangent takes its
    batch levels)."""
    level = interp.level
    while True:
        catch_up(t)
        if t._level <= level:
            break
        t = t._inner
    if t._level < level:
        _lift(t, interp, value)


def catch_up(t: Tensor) -> int:
    """A view whose root was lifted after the view was made takes the root's levels (see
    the module doc); t's level."""
    view = t._view
    while view is not None and view[0]._level > t._level and view[0]._interp.alive:
        _lift(t, view[0]._interp, None)
    return t._level


def _lift(obj: Tensor, interp, value) -> None:
    view = obj._view
    root = None
    if view is not None:
        root = view[0]
        if root._level < interp.level:
            _lift(root, interp, value)
    inner = _new(type(obj))
    _move(obj, inner)
    if root is not None:
        inner._view = (root._inner, view[1])
        if inner._base is not None:
            inner._base = root._inner
    obj.__dict__.clear()
    for _, slot in _SLOTS:
        if _has(slot, obj):
            slot.__delete__(obj)
    obj._inner = inner
    obj._interp = interp
    obj._rg_bit = False
    obj._grad_fn = None
    obj._ver = inner._ver
    obj._base = root
    if root is not None:
        obj._view = view
        obj._view_ver = -1  # its history is the root's: regenerated on first use
        if inner._creation is not None:
            obj._creation = inner._creation
        if inner._conj:
            obj._conj = True
    obj._lifted = True
    interp.adopt(obj, value)  # its class and the level's own fields
    _register(obj, interp)


def _register(obj: Tensor, interp) -> None:
    if interp.lifts is None:
        interp.lifts = []
    interp.lifts.append(weakref.ref(obj))


def _has(slot, obj) -> bool:
    try:
        slot.__get__(obj, Tensor)
    except AttributeError:
        return False
    return True


def _move(src: Tensor, dst: Tensor) -> None:
    """dst takes src's class and state (slots and attributes)."""
    for _, slot in _SLOTS:
        try:
            slot.__set__(dst, slot.__get__(src, Tensor))
        except AttributeError:
            if _has(slot, dst):
                slot.__delete__(dst)
    dst.__dict__.clear()
    dst.__dict__.update(src.__dict__)
    if type(dst) is not type(src):
        dst.__class__ = type(src)


def kept(t: Tensor, interp) -> Tensor:
    """t as ``interp``'s backward sees it after the level has exited (vjp's outputs): a
    lifted t turns back into what it wrapped then, so a copy of it as it is now, with its
    history. So is a view at that level: its history, to be regenerated from its root's
    when the root was written since, is taken while the level can still replay it."""
    if not t._lifted and (t._view is None or not _at(t, interp)):
        return t
    t._rg  # (a view takes its root's current history first)  # noqa: B018
    w = _new(type(t))
    _move(t, w)
    w.__dict__.clear()  # (a view no longer: its root turns back too)
    w._base = None
    if t._out_nr:
        w._out_nr = t._out_nr
    return w


def unlift(interp) -> None:
    """At ``interp``'s exit: each tensor it lifted is again what it wrapped (a lower level's
    lifted wrapper stays that level's, to be undone at its exit)."""
    objs = [o for o in (r() for r in interp.lifts) if o is not None and _at(o, interp)]
    interp.lifts = None
    olds = [o._inner for o in objs]  # (kept alive while their ids are keys)
    outer = {id(old): o for old, o in zip(olds, objs)}  # an old state's object -> its tensor
    for obj in reversed(objs):
        if not _at(obj, interp):  # (registered twice)
            continue
        _move(obj._inner, obj)
        view = obj._view
        if view is not None and id(view[0]) in outer:  # its root, lifted here too
            root = outer[id(view[0])]
            obj._view = (root, view[1])
            if obj._base is not None:
                obj._base = root
        if obj._level and obj._lifted:  # lifted at a lower level too
            _register(obj, obj._interp)


def _at(t: Tensor, interp) -> bool:
    return bool(t._level) and t._interp is interp
