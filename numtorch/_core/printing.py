"""PyTorch-style repr of tensors."""

from __future__ import annotations

import numpy as np


def _fmt_array(a: np.ndarray) -> str:
    k = a.dtype.kind
    if k == "b":
        return np.array2string(a, separator=", ", formatter={"bool": lambda v: "True" if v else "False"})
    if k in "iu":
        return np.array2string(a, separator=", ", threshold=1000, edgeitems=3)
    if k == "c":
        return np.array2string(a, separator=", ", precision=4, threshold=1000, edgeitems=3)
    finite = a[np.isfinite(a)] if a.size else a
    if finite.size and np.all(finite == np.round(finite)) and np.abs(finite).max() < 1e8:
        fmt = lambda v: (f"{v:.0f}." if np.isfinite(v) else str(v).replace("inf", "inf"))
    else:
        amax = np.abs(finite).max() if finite.size else 0
        amin = np.abs(finite[finite != 0]).min() if np.any(finite != 0) else 0
        sci = amax >= 1e8 or (amin and amin < 1e-4) or (amin and amax / amin > 1000)
        fmt = (lambda v: f"{v:.4e}") if sci else (lambda v: f"{v:.4f}")
    return np.array2string(
        a, separator=", ", formatter={"float_kind": fmt}, threshold=1000, edgeitems=3
    )


def tensor_repr(t) -> str:
    a = np.asarray(t.numpy(force=True))
    body = _fmt_array(a).replace("\n", "\n       ")
    extras = []
    name = t.dtype.name
    if a.size == 0 and a.ndim != 1:
        body = "[]"
        extras.append(f"size={tuple(a.shape)}")
    if name not in ("float32", "int64", "bool") or (a.size == 0 and name != "float32"):
        extras.append(f"dtype=torch.{name}")
    if t.device.type != "cpu":
        extras.insert(0, f"device='{t.device}'")
    if t._grad_fn is not None:
        extras.append(f"grad_fn=<{t._grad_fn.name()}>")
    elif t._rg:
        extras.append("requires_grad=True")
    return "tensor(" + ", ".join([body, *extras]) + ")"
