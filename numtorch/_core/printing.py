"""PyTorch-style repr of tensors: elements right-aligned to one width."""

from __future__ import annotations

import math

import numpy as np

from . import dtype as dt

# PyTorch's print options (``set_printoptions``), and the profiles that set the first four
OPTIONS = {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80, "sci_mode": None}
_PROFILES = {
    "default": {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80},
    "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
    "full": {"precision": 4, "threshold": math.inf, "edgeitems": 3, "linewidth": 80},
}


def set_printoptions(
    precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None
) -> None:
    """How tensors print: digits after the point (``precision``), the element count above
    which only ``edgeitems`` at each end of each dim show (``threshold``), the characters
    per line (``linewidth``), a ``profile`` ("default", "short", "full") setting those four,
    and ``sci_mode`` (True/False forces scientific notation on or off; None decides per
    tensor, and every call without it goes back to None)."""
    if profile is not None:
        OPTIONS.update(_PROFILES.get(profile, {}))
    for name, value in (
        ("precision", precision),
        ("threshold", threshold),
        ("edgeitems", edgeitems),
        ("linewidth", linewidth),
    ):
        if value is not None:
            OPTIONS[name] = value
    OPTIONS["sci_mode"] = sci_mode


def get_printoptions() -> dict:
    """The current print options."""
    return dict(OPTIONS)


def _float_formatter(vals: np.ndarray):
    """One float formatter for the values and its width (PyTorch's rules): whole numbers
    print as ``1.``, otherwise ``precision`` digits after the point; scientific notation
    for a range over 1000, a largest value over 1e8 or (non-whole) a smallest under 1e-4, or
    as ``sci_mode`` forces it once there is a finite nonzero value. The width is that of
    the finite nonzero values (zeros, inf and nan may stick out)."""
    precision, forced = OPTIONS["precision"], OPTIONS["sci_mode"]
    finite = vals[np.isfinite(vals)]
    nonzero = finite[finite != 0]
    magnitude = np.abs(nonzero)
    whole = bool(np.all(nonzero == np.ceil(nonzero)))
    sci = False
    if nonzero.size:
        lo, hi = magnitude.min(), magnitude.max()
        sci = hi / lo > 1000 or hi > 1e8 or (not whole and lo < 1e-4)
        if forced is not None:
            sci = forced
    if sci:
        fmt = _FLOAT_FORMATS["sci"].format(precision)
    else:
        fmt = _FLOAT_FORMATS["whole" if whole else "fixed"].format(precision)

    def f(v):
        if math.isfinite(v):
            return fmt.format(v)
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")

    return f, max((len(f(v)) for v in nonzero.tolist()), default=1)


_FLOAT_FORMATS = {"sci": "{{:.{}e}}", "whole": "{{:.0f}}.", "fixed": "{{:.{}f}}"}


def _element_formatter(a: np.ndarray):
    """(format of one element, the width it is padded to, the width a line counts per
    element)."""
    k = a.dtype.kind
    if k in "biu":
        f = (lambda v: "True" if v else "False") if k == "b" else str
        width = max((len(f(v)) for v in a.ravel().tolist()), default=1)
        return f, width, width
    if k == "c":
        re_f, re_w = _float_formatter(a.real.astype(np.float64).ravel())
        im_f, im_w = _float_formatter(a.imag.astype(np.float64).ravel())

        def complex_fmt(v):
            im = im_f(v.imag).rjust(im_w).lstrip() + "j"
            return re_f(v.real).rjust(re_w) + (im if im[0] in "+-" else "+" + im)

        return complex_fmt, 0, re_w + im_w + 1
    f, width = _float_formatter(a.astype(np.float64).ravel())
    return f, width, width


def _summarized(a: np.ndarray, edge: int) -> np.ndarray:
    """The elements a summarized print shows (the formatter is chosen from them)."""
    if a.ndim == 0:
        return a
    if a.shape[0] > 2 * edge:
        a = np.concatenate([a[:edge], a[a.shape[0] - edge :]]) if edge else a[:0]
    return np.stack([_summarized(x, edge) for x in a]) if a.ndim > 1 and len(a) else a


def _fmt(a: np.ndarray, f, width: int, line_width: int, indent: int, summarize: bool) -> str:
    edge = OPTIONS["edgeitems"]
    if a.ndim == 0:
        return f(a.item()).rjust(width)
    n = a.shape[0]
    if summarize and not edge:
        return "[...]"
    if summarize and n > 2 * edge:
        idx = list(range(edge)) + [None] + list(range(n - edge, n))
    else:
        idx = list(range(n))
    if a.ndim == 1:
        items = [" ..." if i is None else f(a[i].item()).rjust(width) for i in idx]
        per_line = max(1, int((OPTIONS["linewidth"] - indent) // (line_width + 2)))
        lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    sep = "," + "\n" * (a.ndim - 1) + " " * (indent + 1)
    parts = [
        "..." if i is None else _fmt(a[i], f, width, line_width, indent + 1, summarize) for i in idx
    ]
    return "[" + sep.join(parts) + "]"


def format_array(a: np.ndarray, indent: int) -> str:
    if a.dtype == dt.C32:  # (printed as its complex64 values)
        a = a.astype(dt.C64)
    summarize = a.size > OPTIONS["threshold"]
    shown = _summarized(a, OPTIONS["edgeitems"]) if summarize else a
    f, width, line_width = _element_formatter(shown)
    return _fmt(a, f, width, line_width, indent, summarize)


def _with_suffixes(text: str, suffixes: list, indent: int) -> str:
    """``text`` and its suffixes (``dtype=...``), each on a new line where it would pass
    the line width (PyTorch's rule)."""
    parts = [text]
    last = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last + len(suffix) + 2 > OPTIONS["linewidth"]:
            parts.append(",\n" + " " * indent + suffix)
            last = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last += len(suffix) + 2
    return "".join(parts) + ")"


def _meta_repr(t) -> str:
    """A meta tensor's repr: its metadata, as PyTorch prints it."""
    extras = ["device='meta'", f"size={tuple(t.shape)}"]
    if t.dtype is not dt.get_default_dtype():
        extras.append(f"dtype=torch.{t.dtype.name}")
    return _suffixes(extras, t)


def _suffixes(extras: list, t) -> str:
    fn = t._grad_fn
    if fn is not None:
        extras.append(f"grad_fn=<{fn.name()}>")
    elif t._rg:
        extras.append("requires_grad=True")
    return "tensor(..., " + ", ".join(extras) + ")"


def tensor_repr(t) -> str:
    if t.is_meta:
        return _meta_repr(t)
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
        if not OPTIONS["edgeitems"]:
            extras.append(f"size={tuple(a.shape)}")
    # the default float dtype, its complex (complex128 only for a float64 default), int64
    # and bool go unnamed; an empty tensor names every dtype but the default float's
    default = dt.get_default_dtype().name
    implied = (default, "complex128" if default == "float64" else "complex64", "int64", "bool")
    if name not in implied or (a.size == 0 and name != default):
        extras.append(f"dtype=torch.{name}")
    if t.device.type != "cpu":
        extras.insert(0, f"device='{t.device}'")
    fn = t._grad_fn
    if fn is not None:
        extras.append(f"grad_fn=<{fn.name()}>")
    elif t._rg:
        extras.append("requires_grad=True")
    return _with_suffixes(prefix + body, extras, len(prefix))
