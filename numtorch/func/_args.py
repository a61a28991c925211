"""Argument handling shared by the function transforms: argnums, aux outputs, and
PyTorch's checks on what f returns."""

from __future__ import annotations

from .._core.tensor import Tensor


def _wrap_argnum(argnum, num_args: int) -> int:
    if not isinstance(argnum, int):
        raise RuntimeError(f"argnum must be int, got: {type(argnum)}")
    if -num_args <= argnum < num_args:
        return argnum % num_args
    raise RuntimeError(f"Got argnum={argnum}, but only {num_args} positional inputs")


def check_argnums(argnums, num_args: int):
    """argnums validated and made non-negative (torch's errors)."""
    if isinstance(argnums, tuple):
        if not argnums:
            raise RuntimeError("argnums must be non-empty")
        if len(set(argnums)) != len(argnums):
            raise RuntimeError(f"argnums elements must be unique, got {argnums}")
        return tuple(_wrap_argnum(a, num_args) for a in argnums)
    if isinstance(argnums, int):
        return _wrap_argnum(argnums, num_args)
    raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")


def slice_argnums(args: tuple, argnums):
    """The differentiated arguments: one argument for an int, a tuple for a tuple."""
    if isinstance(argnums, int):
        return args[argnums]
    return tuple(args[i] for i in argnums)


def other_args(args: tuple, argnums) -> tuple:
    """The arguments not differentiated."""
    nums = (argnums,) if isinstance(argnums, int) else argnums
    return tuple(a for i, a in enumerate(args) if i not in nums)


def replace_argnums(args: tuple, argnums, new) -> tuple:
    if isinstance(argnums, int):
        return tuple(new if i == argnums else a for i, a in enumerate(args))
    return tuple(new[argnums.index(i)] if i in argnums else a for i, a in enumerate(args))


def check_tensor_outputs(flat: list, api: str) -> None:
    """torch's checks that f returned a non-empty pytree of tensors."""
    if not flat or (len(flat) == 1 and flat[0] is None):
        raise RuntimeError(
            f"{api}: Expected f to be a function that has non-empty output (got output = {flat})"
        )
    for o in flat:
        if not isinstance(o, Tensor):
            raise RuntimeError(
                f"{api}: expected f(*primals) to return only tensors, got unsupported type "
                f"{type(o)}"
            )


def split_aux(out, has_aux: bool, api: str):
    """(output, aux) of f; torch's error when has_aux is set and f did not return a pair."""
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(
            f"{api}: output of function f should be a tuple: (output, aux) if has_aux is True"
        )
    return out
