"""Forward mode's level: DualTensor (primal, tangent) and the interpreter that pushes
tangents through every op's jvp rule. Used by ``func.jvp`` and ``autograd.forward_ad``."""

from __future__ import annotations

from .._core import upcalls
from .._core.dispatch import dispatch
from .._core.inplace import commit
from .._core.interpreter import Interpreter, Kind, WrapperTensor
from .._core.lift import born_inside, captured_write, catch_up, lift
from .._core.op import LINEAR, Op, formula_env
from .._core.pytree import tree_flatten, tree_map, tree_unflatten
from .._core.state import state
from .._core.tensor import Tensor
from ..ops.creation import zeros_like
from ..ops.view_chains import apply_chain
from ._args import check_tensor_outputs, split_aux
from ._batched import BatchedTensor


class DualTensor(WrapperTensor):
    """A primal (``_inner``) with a tangent at its forward-mode level."""

    __slots__ = ()  # (_tangent: a slot of Tensor)

    def detach(self) -> Tensor:  # detach drops the tangent too, as in PyTorch
        return self._inner.detach()

    def __repr__(self) -> str:
        body = repr(self._inner)
        return f"{body[:-1]},\n       tangent={self._tangent!r})" if body.endswith(")") else body

    __str__ = __repr__


class JvpInterpreter(Interpreter):
    """One forward-mode level: the op on the primals, its jvp rule on the tangents."""

    kind = Kind.JVP

    def wrap(self, primal: Tensor, tangent: Tensor) -> DualTensor:
        t = DualTensor._new(primal, self)
        t._tangent = tangent
        return t

    def unwrap(self, a):
        """(primal, tangent or None) of an argument at this level."""
        if isinstance(a, DualTensor) and a._interp is self:
            return a._inner, a._tangent
        return a, None

    def process(self, op, args: tuple, attrs: dict):
        primals, tangents, any_tangent = [], [], False
        for i, a in enumerate(args):
            if i in op.list_inputs and isinstance(a, (list, tuple)):
                pairs = [self.unwrap(x) for x in a]
                primals.append([p for p, _ in pairs])
                ts = [t for _, t in pairs]
                any_tangent = any_tangent or any(t is not None for t in ts)
                tangents.append(ts if any(t is not None for t in ts) else None)
            else:
                p, t = self.unwrap(a)
                primals.append(p)
                tangents.append(t)
                any_tangent = any_tangent or t is not None
        primals = tuple(primals)
        out = dispatch(op, primals, attrs)
        if not any_tangent or not op.ndiff or op.jvp is None:
            return out
        tan = apply_jvp(op, primals, attrs, out, tuple(tangents))
        if op.nout == 1:
            res = self.wrap(out, _like(tan, out)) if _differentiable(out) else out
        else:
            tan = tan if isinstance(tan, (tuple, list)) else (tan,)
            res = list(out)
            for k, t in enumerate(tan[: op.ndiff]):
                if t is not None and _differentiable(out[k]):
                    res[k] = self.wrap(out[k], _like(t, out[k]))
            res = tuple(res)
        if state.grad_enabled and _requires_grad(op, args):
            # Reverse mode over dual tensors (forward_ad with requires_grad): the tape
            # records the call on the dual tensors themselves, so that the backward
            # formulas run at this level and their results carry tangents too.
            upcalls.record(op, args, attrs, res)
        return res

    def adopt(self, t: Tensor, value) -> None:
        t.__class__ = DualTensor
        view = t._view
        if view is not None and view[0]._level == self.level:  # the root's tangent's view
            t._tangent = apply_chain(view[0]._tangent, view[1])
        else:
            t._tangent = _zero_tangent(t._inner, value)

    def commit(self, target: Tensor, result: Tensor, op=None) -> None:
        """An in-place write: the primal in place, and the tangent follows the result."""
        tp, tt = self.unwrap(target)
        rp, rt = self.unwrap(result)
        if target is tp:
            if not _differentiable(target):  # (an integer tensor has no tangent)
                commit(tp, rp, op)
                return
            # A tensor made inside jvp is lifted into this level with a zero tangent (one
            # captured from outside is refused); forward_ad's level lifts any tensor.
            if self.kind is not Kind.DUAL and not born_inside(target, self):
                raise RuntimeError(captured_write(op))
            lift(target, self, rt)
            tp, tt = target._inner, target._tangent
        commit(tp, rp, op)
        if rt is None:
            rt = zeros_like(tp)
        rt = _like(rt, tp)  # the write casts to the target's dtype: so does its tangent
        if tt is not None and tuple(tt.shape) == tuple(rt.shape) and tt.dtype == rt.dtype:
            try:
                commit(tt, rt)  # views sharing the tangent see the write
                return
            except RuntimeError:  # a broadcast (read-only) tangent: replace it instead
                pass
        target._tangent = rt


def _zero_tangent(primal: Tensor, value) -> Tensor:
    """A zero tangent for ``primal`` that carries the lower levels of ``value``'s tangent
    too (under jacfwd's vmap, a batched tangent can then be written into it)."""
    zero = zeros_like(primal)
    if isinstance(value, Tensor) and value._level:
        zero = zero + zeros_like(value.sum(), dtype=primal.dtype)
    return zero


def apply_jvp(op: Op, args: tuple, attrs: dict, result, tangents: tuple):
    """The output tangent of one op call from its input tangents (None: zero)."""

    def zero_for(a):
        if not isinstance(a, Tensor):
            return 0.0
        if _differentiable(a) or op.jvp == LINEAR:
            return zeros_like(a)
        # an integer or bool operand has no tangent; its zero is a float so that a formula's
        # arithmetic on it (negation, subtraction) is defined
        return zeros_like(a, dtype=_float_like(result))

    def fill(i, a, t):
        if i in op.list_inputs:
            t = t if t is not None else [None] * len(a)
            return [zero_for(x) if ti is None else ti for ti, x in zip(t, a)]
        return zero_for(a) if t is None else t

    if op.jvp == LINEAR:
        targs = tuple(
            fill(i, a, t) if op.vjps[i] is not None else a
            for i, (a, t) in enumerate(zip(args, tangents))
        )
        out = dispatch(op, targs, attrs)
        return out if op.nout == 1 else out[: op.ndiff]
    env = formula_env(op, args, attrs, result, op.jvp_args)
    if "tangents" in op.jvp_args:  # the tangents as given (None: no tangent)
        env["tangents"] = tangents
    if op.nin == 1:
        env["t"] = fill(0, args[0], tangents[0])
    else:
        for i, (n, a, t) in enumerate(zip(op.inputs, args, tangents)):
            if "t" + n in op.jvp_args:
                env["t" + n] = fill(i, a, t)
    return op.jvp(**{k: env[k] for k in op.jvp_args})


def _like(t, primal):
    """A tangent in its primal's dtype (an op's formula may compute it wider, e.g. the
    input's dtype under ``dtype=``) and layout; a complex tangent of a real primal is its
    real part, as a real input's gradient is in reverse mode."""
    if type(primal) is Tensor:  # (a plain primal, a plain or batch-first tangent: arrays tell)
        pd = primal._data
        if type(t) is Tensor:
            td, shape = t._data, t._data.shape
        elif type(t) is BatchedTensor and not t._bdim and type(t._inner) is Tensor:
            td = t._inner._data
            shape = td.shape[1:]
        else:
            td = shape = None
        if shape == pd.shape and td.dtype == pd.dtype and pd.flags.c_contiguous:
            if td.flags.c_contiguous:
                return t
            if type(t) is Tensor:
                return t.contiguous()
    if isinstance(t, Tensor) and t.dtype != primal.dtype:
        if t.dtype.is_complex and not primal.dtype.is_complex:
            t = t.real
        t = t.to(primal.dtype)
    return laid_out_as(t, primal)


def laid_out_as(t, primal):
    """A tangent with its primal's strides where the primal is dense, as PyTorch copies a
    forward gradient whose layout differs from its primal's (so that ``.view()`` works on
    both or on neither)."""
    if not isinstance(t, Tensor) or t.shape != primal.shape:
        return t
    if primal.is_contiguous():
        return t if t.is_contiguous() else t.contiguous()
    ps, ts, shape = primal.stride(), t.stride(), primal.shape
    if all(a == b or n == 1 for a, b, n in zip(ps, ts, shape)):
        return t
    order = sorted(range(len(shape)), key=lambda d: -ps[d])  # outermost first
    step = 1
    for d in reversed(order):
        if shape[d] != 1 and ps[d] != step:
            return t  # not dense (a view of a larger tensor): the tangent keeps its own
        step *= shape[d]
    inverse = sorted(range(len(order)), key=order.__getitem__)
    return t.permute(*order).contiguous().permute(*inverse)


def _requires_grad(op, args) -> bool:
    for i, a in enumerate(args):
        if isinstance(a, Tensor):
            if a._rg:
                return True
        elif i in op.list_inputs and isinstance(a, (list, tuple)):
            if any(isinstance(x, Tensor) and x._rg for x in a):
                return True
    return False


def _float_like(result):
    """The dtype of a float zero tangent: the result's, or the default float dtype."""
    r = result[0] if isinstance(result, (tuple, list)) else result
    if isinstance(r, Tensor) and _differentiable(r):
        return r.dtype
    return state.default_dtype


def _differentiable(t) -> bool:
    d = t.dtype
    return d.is_floating_point or d.is_complex


_JVP = "jvp(f, primals, tangents)"


def check_dual(tensor: Tensor, tangent: Tensor) -> None:
    """PyTorch's checks of a primal and its tangent (make_dual, torch.func.jvp)."""
    if not (tensor.dtype.is_floating_point or tensor.dtype.is_complex):
        raise ValueError(
            f"Expected primal to be floating point or complex, but got: {tensor.dtype}"
        )
    if not (tangent.dtype.is_floating_point or tangent.dtype.is_complex):
        raise ValueError(
            f"Expected tangent to be floating point or complex, but got: {tangent.dtype}"
        )
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the "
            f"original Tensor, this is not supported. Tensor is of size {list(tensor.shape)} "
            f"while the given forward gradient is of size {list(tangent.shape)}."
        )


def jvp(func, primals, tangents, *, strict: bool = False, has_aux: bool = False):
    """(func(*primals), the directional derivative along ``tangents``) in one forward pass
    (torch.func.jvp)."""
    if not isinstance(primals, tuple):
        raise RuntimeError(
            f"{_JVP}: Expected primals to be a tuple. E.g. it should be valid to call f(*primals)."
        )
    flat_p, spec = tree_flatten(primals)
    flat_t, tspec = tree_flatten(tangents)
    if spec != tspec:
        raise RuntimeError(
            f"{_JVP}: Expected primals and tangents to have the same python structure. For "
            "example, if primals is a tuple of 3 tensors, tangents also must be. Got primals "
            f"with structure {spec} and tangents with structure {tspec}"
        )
    for what, flat in (("primals", flat_p), ("tangents", flat_t)):
        if not flat:
            raise RuntimeError(f"{_JVP}: Expected {what} to contain at least one Tensor.")
        for x in flat:
            if not isinstance(x, Tensor):
                raise RuntimeError(
                    f"{_JVP}: Expected {what} to only contain Tensors, got {type(x)}"
                )
    for p, t in zip(flat_p, flat_t):
        check_dual(p, t)
    with JvpInterpreter() as interp:
        duals = [interp.wrap(p, laid_out_as(t, p)) for p, t in zip(flat_p, flat_t)]
        out = func(*tree_unflatten(duals, spec))
        out, aux = split_aux(out, has_aux, _JVP)
        if has_aux:
            aux = tree_map(lambda x: interp.unwrap(x)[0], aux)
        flat_o, ospec = tree_flatten(out)
        check_tensor_outputs(flat_o, _JVP)
        ps, ts = [], []
        for o in flat_o:
            catch_up(o)  # (a view made before its root took a tangent)
            p, t = interp.unwrap(o)
            if t is None:
                if strict:
                    raise RuntimeError(
                        "jvp(f, primals, tangents, strict=True): The output of f is independent "
                        "of the inputs. This is not allowed with strict=True."
                    )
                t = zeros_like(p)
            ps.append(p)
            ts.append(t)
    res = (tree_unflatten(ps, ospec), tree_unflatten(ts, ospec))
    return (*res, aux) if has_aux else res
