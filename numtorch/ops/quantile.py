"""``quantile`` and ``nanquantile``: composites of sort, gather and lerp, as PyTorch's, so
they differentiate (through the sorted values) and batch with those ops."""

from __future__ import annotations

import numbers

import numpy as np

from .._core import dtype as dt
from .._core.interpreter import WrapperTensor
from .._core.op import ErrorInput, composite
from .._core.out import write_out
from .._core.tensor import Tensor, wrap_dim
from .._opdb.samples import S
from .comparison import where
from .creation import tensor
from .sorting import sort

_MODES = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile_samples(make):
    x = make((3, 5))
    yield S((x, 0.3))
    yield S((x, make((3,), 0.0, 1.0)), {"dim": 1})
    yield S((make((2, 3, 4)), make((2,), 0.0, 1.0)), {"dim": 0, "keepdim": True})
    yield S((make((2, 3, 4)), 0.5), {"dim": -1, "interpolation": "midpoint"})
    for mode in _MODES:
        yield S((make((4, 5)), make((4,), 0.0, 1.0)), {"dim": 1, "interpolation": mode})
    yield S((make((5,)), make((), 0.0, 1.0)), {"keepdim": True})
    yield S((make(()), 1.0))


def _nanquantile_samples(make):
    yield from _quantile_samples(make)
    x = make((3, 5))
    x[0, 1] = x[1, :3] = x[2, 4] = np.nan  # (an all-NaN row: tests/test_reductions.py)
    yield S((x, make((3,), 0.0, 1.0)), {"dim": 1}, name="nan")
    yield S((x, 0.25), {"interpolation": "higher"}, name="nan, no dim")


def _quantile_errors(name: str):
    def errors(make):
        x = make((3, 4))
        yield ErrorInput(S((make((0,)), 0.5)), RuntimeError, "input tensor must be non-empty")
        yield ErrorInput(
            S((x, 1.5)), RuntimeError, r"quantile\(\) q must be in the range \[0, 1\] but got 1.5"
        )
        yield ErrorInput(
            S((x, np.array([0.1, 1.5], dtype=x.dtype))),
            RuntimeError,
            r"q values must be in the range \[0, 1\]",
        )
        yield ErrorInput(
            S((x, np.full((1, 1), 0.5, dtype=x.dtype))),
            RuntimeError,
            "q must be a scalar or 1D tensor",
        )
        other = np.float64 if x.dtype == np.float32 else np.float32
        yield ErrorInput(
            S((x, np.array([0.5], dtype=other))),
            RuntimeError,
            "q tensor must be same dtype as the input tensor",
        )
        yield ErrorInput(
            S((x.astype(np.int64), 0.5)),
            RuntimeError,
            "input tensor must be either float or double dtype",
        )
        yield ErrorInput(
            S((x, 0.5), {"interpolation": "foo"}),
            RuntimeError,
            "interpolation must be one of linear, lower, higher, midpoint or nearest, but got foo",
        )
        yield ErrorInput(S((x, 0.5, 2)), IndexError, "Dimension out of range")

    return errors


def _checks(name: str, input, q, interpolation) -> Tensor:
    """PyTorch's checks, in its order; q as a tensor."""
    if not isinstance(q, Tensor):
        if not isinstance(q, numbers.Real):
            raise TypeError(
                f"{name}() received an invalid combination of arguments - got (Tensor, "
                f"{type(q).__name__}), but expected one of:\n"
                f" * (Tensor input, Tensor q, int dim = None, bool keepdim = False, *, str "
                'interpolation = "linear", Tensor out = None)\n'
                f" * (Tensor input, float q, int dim = None, bool keepdim = False, *, str "
                'interpolation = "linear", Tensor out = None)\n'
            )
        if not 0 <= q <= 1:
            raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {q:g}")
        q = tensor(float(q), dtype=input.dtype, device=input.device)
    if input.numel() == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if q.dim() > 1:
        raise RuntimeError("quantile() q must be a scalar or 1D tensor")
    if input.dtype not in (dt.float32, dt.float64):
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if q.dtype != input.dtype:
        raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
    if q.device != input.device:
        raise RuntimeError("quantile() q tensor must be on the same device as the input tensor")
    v = q
    while isinstance(v, WrapperTensor):  # every value under transforms, as a loop checks them
        v = v._inner
    if not v.is_meta and not bool(((v >= 0) & (v <= 1)).all()):  # (meta: no values)
        raise RuntimeError("quantile() q values must be in the range [0, 1]")
    if interpolation not in _MODES:
        raise RuntimeError(
            f"quantile() interpolation must be one of linear, lower, higher, midpoint or "
            f"nearest, but got {interpolation}"
        )
    return q


def _quantile(name, input, q, dim, keepdim, interpolation, ignore_nan, out):
    qt = _checks(name, input, q, interpolation)
    # the values sorted along the last dim, the others shaped as the result (less q's dim)
    if dim is None:
        shape = [1] * input.dim() if keepdim else []
        s = sort(input.reshape(-1)).values.reshape([*shape, input.numel()])
    else:
        d = wrap_dim(dim, input.dim())
        s = sort(input.unsqueeze(-1).transpose(d, -1)).values
        if not keepdim:
            s = s.squeeze(d)
    last = s.shape[-1] - 1
    if ignore_nan:  # ranks among the non-NaN values; all NaN: rank 0, a NaN value
        ranks = qt.reshape(-1) * (s.isnan().logical_not().sum(-1, keepdim=True) - 1)
        ranks = ranks.masked_fill(ranks < 0, 0)
    else:  # any NaN: the last rank, a NaN value
        nan = s.isnan().any(-1, keepdim=True)
        ranks = (qt.reshape(-1) * last).expand([*nan.shape[:-1], qt.numel()])
        ranks = ranks.masked_fill(nan, float(last))
    if interpolation == "lower":
        ranks = ranks.floor()
    elif interpolation == "nearest":
        ranks = ranks.round()
    elif interpolation == "higher":
        ranks = ranks.ceil()
    below = ranks.long()
    res = s.gather(-1, below)
    if interpolation in ("linear", "midpoint"):
        if interpolation == "midpoint":
            weights = where(ranks == below, 0.0, 0.5).to(ranks.dtype)
        else:
            weights = ranks - ranks.floor()  # (= ranks - below: ranks are not negative)
        res = res.lerp(s.gather(-1, ranks.ceil().long()), weights)
    res = res.squeeze(-1) if qt.dim() == 0 else res.movedim(-1, 0)
    return res if out is None else write_out(out, res)


@composite(
    samples=_quantile_samples,
    error_samples=_quantile_errors("quantile"),
    methods=True,
    autocast="fp32",
)
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """The q-th quantiles of ``input`` (all of it, or along ``dim``), interpolated between
    the sorted values as ``interpolation`` says; a NaN among them makes the result NaN.
    A 1-d ``q`` adds a leading dim of its length."""
    return _quantile("quantile", input, q, dim, keepdim, interpolation, False, out)


@composite(
    samples=_nanquantile_samples,
    error_samples=_quantile_errors("nanquantile"),
    methods=True,
    autocast="fp32",
)
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """``quantile`` of the values that are not NaN (NaN where all are)."""
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, True, out)


__all__ = ["nanquantile", "quantile"]
