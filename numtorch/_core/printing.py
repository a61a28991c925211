"""PyTorch-style repr of tensors: elements right-aligned to one width."""

from __future__ import annotations

import math

import numpy as np

LINEWIDTH = 80
THRESHOLD = 1000
EDGEITEMS = 3


def _element_formatter(a: np.ndarray):
    k = a.dtype.kind
    if k == "b":
        return lambda v: "True" if v else "False"
    if k in "iu":
        return str
    if k == "c":
        re_f, im_f = _element_formatter(a.real.ravel()), _element_formatter(a.imag.ravel())
        return lambda v: f"{re_f(v.real)}{'+' if v.imag >= 0 else '-'}{im_f(abs(v.imag))}j"
    vals = a.astype(np.float64).ravel()
    finite = np.abs(vals[np.isfinite(vals)])
    nonzero = finite[finite != 0]

    def special(v):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")

    if finite.size and np.all(finite == np.round(finite)):
        if finite.max() > 1e8:
            fmt = "{:.4e}"
        else:
            return lambda v: f"{v:.0f}." if math.isfinite(v) else special(v)
    elif nonzero.size and (
        nonzero.max() / nonzero.min() > 1000 or nonzero.max() > 1e8 or nonzero.min() < 1e-4
    ):
        fmt = "{:.4e}"
    else:
        fmt = "{:.4f}"
    return lambda v: fmt.format(v) if math.isfinite(v) else special(v)


def _fmt(a: np.ndarray, f, width: int, indent: int, summarize: bool) -> str:
    if a.ndim == 0:
        return f(a.item()).rjust(width)
    n = a.shape[0]
    if summarize and n > 2 * EDGEITEMS:
        idx = list(range(EDGEITEMS)) + [None] + list(range(n - EDGEITEMS, n))
    else:
        idx = list(range(n))
    if a.ndim == 1:
        items = ["..." if i is None else f(a[i].item()).rjust(width) for i in idx]
        per_line = max(1, (LINEWIDTH - indent) // (width + 2))
        lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    sep = "," + "\n" * (a.ndim - 1) + " " * (indent + 1)
    parts = ["..." if i is None else _fmt(a[i], f, width, indent + 1, summarize) for i in idx]
    return "[" + sep.join(parts) + "]"


def format_array(a: np.ndarray, indent: int) -> str:
    summarize = a.size > THRESHOLD
    f = _element_formatter(a)
    width = max((len(f(v)) for v in a.ravel().tolist()), default=0)
    return _fmt(a, f, width, indent, summarize)


def tensor_repr(t) -> str:
    a = np.asarray(t.numpy(force=True))
    prefix = "tensor("
    extras = []
    name = t.dtype.name
    if a.size == 0:
        body = "[]"
        if a.ndim != 1:
            extras.append(f"size={tuple(a.shape)}")
    else:
        body = format_array(a, len(prefix))
    # an empty tensor names every dtype but the default float's (no values imply it)
    if name not in ("float32", "int64", "bool", "complex64") or (a.size == 0 and name != "float32"):
        extras.append(f"dtype=torch.{name}")
    if t.device.type != "cpu":
        extras.insert(0, f"device='{t.device}'")
    fn = t._grad_fn
    if fn is not None:
        extras.append(f"grad_fn=<{fn.name()}>")
    elif t._rg:
        extras.append("requires_grad=True")
    return prefix + ", ".join([body, *extras]) + ")"
