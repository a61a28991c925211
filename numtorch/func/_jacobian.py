"""Jacobians and Hessians from the transforms: ``jacrev`` is vmap over a vjp_fn,
``jacfwd`` is vmap over jvp, ``hessian`` is jacfwd of jacrev; and ``linearize``."""

from __future__ import annotations

from collections.abc import Callable

from .._core.pytree import tree_flatten, tree_unflatten
from .._core.state import state
from .._core.tensor import Tensor
from ..ops.creation import eye
from ._args import check_argnums, other_args, replace_argnums, slice_argnums
from ._grad import vjp
from ._jvp import jvp
from ._vmap import vmap


def _bind(func: Callable, args: tuple, kwargs: dict, argnums):
    """(f of the differentiated arguments only, those arguments as a tuple of primals)."""
    nums = check_argnums(argnums, len(args))
    diff = slice_argnums(args, nums)
    primals = (diff,) if isinstance(nums, int) else diff

    def f(*d):  # (called by vjp or jvp inside its level, which holds the other arguments)
        state.stack[-1].hold(other_args(args, nums))
        new = d[0] if isinstance(nums, int) else d
        return func(*replace_argnums(args, nums, new), **kwargs)

    return f, primals


def _basis(flat: list) -> list:
    """One-hot rows over the concatenated elements of ``flat``: for each tensor, a
    (total, *shape) block of the identity."""
    total = sum(t.numel() for t in flat)
    blocks, off = [], 0
    for t in flat:
        n = t.numel()
        block = eye(total, dtype=t.dtype, device=t.device)[:, off : off + n]
        blocks.append(block.reshape(total, *t.shape))
        off += n
    return blocks


def _blocks(rows: Tensor, flat: list):
    """(tensor, its rows) for each tensor of ``flat``, cutting ``rows`` along dim 0 by
    their element counts."""
    off = 0
    for t in flat:
        n = t.numel()
        yield t, rows[off : off + n]
        off += n


def jacrev(
    func: Callable, argnums=0, *, has_aux: bool = False, chunk_size: int | None = None
) -> Callable:
    """A function returning the Jacobian of ``func`` w.r.t. the ``argnums`` arguments,
    computed by reverse mode: one vmapped vjp over the rows of the identity
    (torch.func.jacrev)."""
    if chunk_size is not None and chunk_size <= 0:
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    def wrapper(*args, **kwargs):
        f, primals = _bind(func, args, kwargs, argnums)
        res = vjp(f, *primals, has_aux=has_aux)
        out, vjp_fn = res[0], res[1]
        flat_out, out_spec = tree_flatten(out)
        flat_in, in_spec = tree_flatten(primals)
        rows = vmap(vjp_fn, chunk_size=chunk_size)(tree_unflatten(_basis(flat_out), out_spec))
        flat_rows = tree_flatten(rows)[0]  # per input: (total outputs, *input shape)
        per_out = [[] for _ in flat_out]
        for r, x in zip(flat_rows, flat_in):
            for k, (o, block) in enumerate(_blocks(r, flat_out)):
                per_out[k].append(block.reshape(*o.shape, *x.shape))
        jac = [_as_arg(tree_unflatten(b, in_spec), argnums) for b in per_out]
        jac = tree_unflatten(jac, out_spec)
        return (jac, res[2]) if has_aux else jac

    return wrapper


def _as_arg(per_primal: tuple, argnums):
    """Jacobians per primal as the caller's argnums shape them: one for an int."""
    return per_primal[0] if isinstance(argnums, int) else per_primal


def jacfwd(func: Callable, argnums=0, has_aux: bool = False, *, randomness: str = "error"):
    """A function returning the Jacobian of ``func`` w.r.t. the ``argnums`` arguments,
    computed by forward mode: one vmapped jvp over the columns of the identity
    (torch.func.jacfwd)."""

    def wrapper(*args, **kwargs):
        f, primals = _bind(func, args, kwargs, argnums)
        flat_in, in_spec = tree_flatten(primals)

        def push(*tangents):
            res = jvp(f, primals, tree_unflatten(list(tangents), in_spec), has_aux=has_aux)
            return (res[1], res[2]) if has_aux else res[1]

        cols = vmap(push, randomness=randomness)(*_basis(flat_in))
        aux = None
        if has_aux:
            cols, aux = cols
            aux = _first_of_batch(aux)
        flat_cols, out_spec = tree_flatten(cols)  # per output: (total inputs, *output shape)
        jac = []
        for c in flat_cols:
            shape = tuple(c.shape[1:])
            per_in = [b.movedim(0, -1).reshape(*shape, *x.shape) for x, b in _blocks(c, flat_in)]
            jac.append(_as_arg(tree_unflatten(per_in, in_spec), argnums))
        jac = tree_unflatten(jac, out_spec)
        return (jac, aux) if has_aux else jac

    return wrapper


def _first_of_batch(tree):
    """aux came out of jacfwd's vmap stacked along the basis; every row is the same."""
    flat, spec = tree_flatten(tree)
    return tree_unflatten([x[0] if isinstance(x, Tensor) else x for x in flat], spec)


def hessian(func: Callable, argnums=0) -> Callable:
    """The Hessian of scalar ``func`` w.r.t. the ``argnums`` arguments: forward over
    reverse, jacfwd(jacrev(func)) (torch.func.hessian)."""
    return jacfwd(jacrev(func, argnums), argnums)


def linearize(func: Callable, *primals):
    """(func(*primals), jvp_fn) where jvp_fn(*tangents) is the Jacobian-vector product at
    ``primals`` (torch.func.linearize)."""
    flat_p, p_spec = tree_flatten(primals)
    out = func(*primals)

    def jvp_fn(*tangents):
        flat_t, t_spec = tree_flatten(tangents)
        if t_spec != p_spec:
            raise RuntimeError(
                f"Expected the tangents {t_spec} to have the same argspec as the primals {p_spec}"
            )
        for i, (t, p) in enumerate(zip(flat_t, flat_p)):
            for what in ("shape", "dtype"):
                if getattr(t, what) != getattr(p, what):
                    raise RuntimeError(
                        f"tangent:{i} with {what} {getattr(t, what)} in flattened pytree "
                        f"doesn't match the {what} {getattr(p, what)} of the corresponding "
                        "primal."
                    )
        return jvp(func, primals, tangents)[1]

    return out, jvp_fn
