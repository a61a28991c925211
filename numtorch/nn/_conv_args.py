"""The argument checks of the convolutions, in PyTorch's order and words."""

from __future__ import annotations

from .._core import dtype as dt
from .._core.tensor import Tensor


def _ints(v, d: int) -> tuple[int, ...]:
    """An int or a sequence as PyTorch's int-list arguments read it (one value repeats)."""
    if isinstance(v, int):
        return (v,) * d
    return tuple(int(x) for x in v)


def _shown(v) -> str:
    return " x ".join(str(x) for x in v)


def _expand(name: str, v, d: int, k: int) -> tuple[int, ...]:
    """A parameter of a d-dimensional function for a weight with k spatial dims."""
    v = _ints(v, d)
    if len(v) == 1:
        return v * k
    if len(v) != k:
        raise RuntimeError(
            f"expected {name} to be a single integer value or a list of {k} values to match the "
            f"convolution dimensions, but got {name}={list(v)}"
        )
    return v


def _check_dtypes(input: Tensor, weight: Tensor, bias, d: int, transposed: bool) -> None:
    """PyTorch's dtype checks of a convolution, in its order: the bias (direct form only;
    the transposed one adds it with type promotion), complex input against the weight, the
    weight. A bool input is refused by the primitives' no_kernel, after the shape checks,
    except that a transposed one picks its (missing) kernel before it checks the weight."""
    t, w = input.dtype, weight.dtype
    if not transposed and bias is not None and bias.dtype != t:
        raise RuntimeError(
            f"Input type ({t.cpp_name}) and bias type ({bias.dtype.cpp_name}) should be the same"
        )
    if t.is_complex and w != t:
        raise RuntimeError(
            f"Input type (CPU{t.scalar_name}Type) and weight type (torch.{w.scalar_name}Tensor) "
            "should be the same"
        )
    if transposed and t == dt.bool_ and w != t:
        raise dt.not_implemented(f"slow_conv_transpose{max(d, 2)}d_out_cpu", t)
    if w != t:
        raise RuntimeError(f"expected scalar type {t.scalar_name} but found {w.scalar_name}")


def _check_params(d, k, stride, padding, dilation, groups, output_padding=None):
    """PyTorch's parameter checks, in its order; returns the lists expanded to the weight's
    k spatial dims."""
    stride, padding = _expand("stride", stride, d, k), _expand("padding", padding, d, k)
    dilation = _expand("dilation", dilation, d, k)
    if output_padding is not None:
        output_padding = _expand("output_padding", output_padding, d, k)
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if output_padding is not None and any(p < 0 for p in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(x < 0 for x in dilation):
        raise RuntimeError("dilation should be greater than zero")
    if any(x == 0 for x in dilation):
        shown = [1, *dilation] if k == 1 else list(dilation)  # 1-d runs as 2-d in PyTorch
        raise RuntimeError(f"dilation should be greater than zero, but got {shown}")
    return stride, padding, dilation, output_padding


def _check_shapes(input, weight, bias, groups, transposed: bool) -> None:
    ws, xs = weight.shape, input.shape
    outs = ws[1] * groups if transposed else ws[0]
    if (
        len(ws) == len(xs)
        and groups <= ws[0]
        and not ws[0] % groups
        and xs[1] == (ws[0] if transposed else ws[1] * groups)
        and (bias is None or bias.dim() == 1 and bias.shape[0] == outs)
    ):
        return
    ws, xs = list(ws), list(xs)
    if weight.dim() != input.dim():
        raise RuntimeError(
            f"Expected {weight.dim()}-dimensional input for {weight.dim()}-dimensional weight "
            f"{ws}, but got {input.dim()}-dimensional input of size {xs} instead"
        )
    if ws[0] < groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be at least {groups} at dimension 0, but "
            f"got weight of size {ws} instead"
        )
    if ws[0] % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, "
            f"but got weight of size [{ws}] instead"
        )
    channels = ws[0] if transposed else ws[1] * groups
    if xs[1] != channels:
        head = "Given transposed=1" if transposed else f"Given groups={groups}"
        raise RuntimeError(
            f"{head}, weight of size {ws}, expected input{xs} to have {channels} channels, but "
            f"got {xs[1]} channels instead"
        )
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != outs):
        head = (
            f"Given transposed=1, weight of size {ws}"
            if transposed
            else f"Given weight of size {ws}"
        )
        raise RuntimeError(
            f"{head}, expected bias to be 1-dimensional with {outs} elements, but got bias of size "
            f"{list(bias.shape)} instead"
        )


def _check_rank(fname: str, input: Tensor, weight: Tensor, d: int) -> bool:
    """Whether input has a batch dim (PyTorch accepts one unbatched sample)."""
    if input.dim() not in (d + 1, d + 2):
        raise RuntimeError(
            f"Expected {d + 1}D (unbatched) or {d + 2}D (batched) input to {fname}, but got "
            f"input of size: {list(input.shape)}"
        )
    if weight.dim() < 3:
        raise RuntimeError("weight should have at least three dimensions")
    return input.dim() == d + 2


_params_seen: dict = {}


def _checked_params(d, k, stride, padding, dilation, groups):
    """``_check_params`` with its (stride, padding pairs, dilation) kept per argument
    values: a network calls a layer with the same ones every step. (Values that compare
    equal normalize alike; an unhashable one, a list, is checked every call.)"""
    key = (d, k, stride, padding, dilation, groups)
    try:
        hit = _params_seen.get(key)
    except TypeError:
        key, hit = None, None
    if hit is not None:
        return hit
    stride, padding, dilation, _ = _check_params(d, k, stride, padding, dilation, groups)
    hit = (stride, tuple((p, p) for p in padding), dilation)
    if key is not None:
        if len(_params_seen) > 256:
            _params_seen.clear()
        _params_seen[key] = hit
    return hit
