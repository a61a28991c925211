"""``vmap``: in_dims/out_dims over pytrees, chunking, and the randomness modes."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .._core import upcalls
from .._core.pytree import LEAF, broadcast_prefix, tree_flatten, tree_unflatten
from .._core.tensor import Tensor, wrap_dim
from ..ops.generator import all_states, restore_states
from ..ops.shape import cat
from ._batched import BatchedTensor, VmapInterpreter


def _name(func) -> str:
    name = getattr(func, "__name__", None)  # (repr only where there is no name)
    return repr(func) if name is None else name


def vmap(
    func: Callable,
    in_dims: Any = 0,
    out_dims: Any = 0,
    randomness: str = "error",
    *,
    chunk_size: int | None = None,
) -> Callable:
    """Vectorize ``func`` over a dimension of its inputs (torch.func.vmap)."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(
            "Only allowed values for randomness are 'error', 'different', or 'same'. "
            f"Got {randomness}"
        )
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")
    _check_out_dims(out_dims, func)

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        return vmap_call(func, in_dims, out_dims, randomness, chunk_size, args, kwargs)

    return wrapped


def _check_out_dims(out_dims, func) -> None:
    leaves, _ = tree_flatten(out_dims)
    for d in leaves:
        if d is not None and not isinstance(d, int):
            raise ValueError(
                f"vmap({_name(func)}, ..., out_dims={out_dims}): `out_dims` must be an int, "
                "None or a python collection of ints representing where in the outputs the "
                "vmapped dimension should appear."
            )


def vmap_call(
    func, in_dims, out_dims, randomness, chunk_size, args, kwargs, none_ok=False, legacy=False
):
    """One call of a vmapped function; ``none_ok`` lets None outputs pass through;
    ``legacy``: a level of PyTorch's first vmap (torch._vmap_internals), which
    autograd.functional and is_grads_batched use, not a torch.func transform."""
    name = _name(func)
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(
            f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int or "
            f"a (potentially nested) tuple matching the structure of inputs, got: "
            f"{type(in_dims)}."
        )
    if not args:
        raise ValueError(
            f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you "
            "are trying to vmap over a function with no inputs. The latter is unsupported."
        )
    flat, spec = tree_flatten(args)
    dims = broadcast_prefix(in_dims, spec)
    if dims is None:
        raise ValueError(
            f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with "
            f"the structure of `inputs`. in_dims has structure {tree_flatten(in_dims)[1]} but "
            f"inputs has structure {spec}."
        )
    for i, (a, d) in enumerate(zip(flat, dims)):
        if d is None:
            continue
        if not isinstance(d, int) or isinstance(d, bool):
            raise ValueError(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an input "
                "but in_dim must be either an integer dimension or None."
            )
        if not isinstance(a, Tensor):
            raise ValueError(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an input "
                f"but the input is of type {type(a)}. We cannot vmap over non-Tensor "
                "arguments, please use None as the respective in_dim"
            )
        n = a.dim()
        if not -n <= d < n:
            raise ValueError(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for some "
                f"input, but that input is a Tensor of dimensionality {n} so expected in_dim "
                f"to satisfy -{n} <= in_dim < {n}."
            )
        dims[i] = d % n
    sizes = [a.size(d) for a, d in zip(flat, dims) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(
            "vmap: Expected all tensors to have the same size in the mapped dimension, got "
            f"sizes {sizes} for the mapped dimension"
        )
    size = sizes[0]
    run = functools.partial(_flat_vmap, func, spec, out_dims, randomness, kwargs, none_ok, legacy)
    if chunk_size is None or chunk_size >= size:
        return run(flat, dims, size)
    return _chunked(run, flat, dims, size, chunk_size, out_dims, randomness)


def _chunked(run, flat, dims, size, chunk_size, out_dims, randomness):
    states0 = all_states()  # every device's generator: CPU and GPU draws alike
    results = []
    for start in range(0, size, chunk_size):
        n = min(chunk_size, size - start)
        part = [a if d is None else a.narrow(d, start, n) for a, d in zip(flat, dims)]
        if randomness == "same":  # every chunk draws what the first one drew
            restore_states(states0)
        results.append(run(part, dims, n))
    leaves0, ospec = tree_flatten(results[0])
    odims = _flat_out_dims(out_dims, results[0], ospec, None)
    columns = [tree_flatten(r)[0] for r in results]
    merged = []
    for k, (leaf, od) in enumerate(zip(leaves0, odims)):
        if od is None or not isinstance(leaf, Tensor):
            merged.append(leaf)
        else:
            merged.append(cat([c[k] for c in columns], od))
    return tree_unflatten(merged, ospec)


def _flat_vmap(func, spec, out_dims, randomness, kwargs, none_ok, legacy, flat, dims, size):
    with VmapInterpreter(size, randomness, legacy) as interp:
        wrapped = [a if d is None else interp.wrap(a, d) for a, d in zip(flat, dims)]
        out = func(*tree_unflatten(wrapped, spec), **kwargs)
        leaves, ospec = tree_flatten(out)
        odims = _flat_out_dims(out_dims, out, ospec, func)
        res = [_unbatch(interp, x, od, size, func, none_ok) for x, od in zip(leaves, odims)]
    return tree_unflatten(res, ospec)


def _flat_out_dims(out_dims, out, ospec, func) -> list:
    if ospec is LEAF:
        if isinstance(out_dims, int) or out_dims is None:
            return [out_dims]
        if isinstance(out_dims, tuple) and len(out_dims) == 1:
            return list(out_dims)
        dims = None
    else:
        dims = broadcast_prefix(out_dims, ospec)
    if dims is None:
        raise ValueError(
            f"vmap({_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims is not "
            f"compatible with the structure of `outputs`. out_dims has structure "
            f"{tree_flatten(out_dims)[1]} but outputs has structure {ospec}."
        )
    return dims


def _unbatch(interp: VmapInterpreter, x, od, size: int, func, none_ok: bool):
    batched = isinstance(x, BatchedTensor) and x._interp is interp
    name = _name(func)
    if od is None:
        if batched:
            raise ValueError(
                f"vmap({name}, ...): `{name}` can not return a BatchedTensor when out_dim is None"
            )
        return x
    if not isinstance(x, Tensor):
        if x is None and none_ok:
            return None
        raise ValueError(
            f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(x)}. Did "
            "you mean to set out_dims= to None for output?"
        )
    if not batched:  # the same value for every batch element
        od = wrap_dim(od, x.dim() + 1)
        return x.unsqueeze(od).expand(*x.shape[:od], size, *x.shape[od:])
    inner, bd = x._inner, x._bdim
    od = wrap_dim(od, inner.dim())
    return inner if od == bd else inner.movedim(bd, od)


upcalls.provide(vmap_call=vmap_call)
