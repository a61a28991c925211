"""PyTorch's Python argument parser as numtorch models it (``numtorch/_core/pyargs.py``): for
calls to PyTorch's parsed functions and methods, the model finds the same signature, or raises
the same TypeError, word for word, as PyTorch's parser does. The calls are built once per
library, so the model judges numtorch's own tensors, dtypes and devices. Public functions
whose call fails ask the model first: bad calls run on both libraries raise alike."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from twolibs import assert_same_outcome

import numtorch as nt
from numtorch._core import pyargs


def _x(T):
    return T.ones(6)


# (key, a function of a library giving (callable, args, kwargs)); the callable is torch's
# function (or bound method) and the key numtorch's table entry for it
def _fn(path):
    def at(T):
        obj = T
        for part in path.split("."):
            obj = getattr(obj, part)
        return obj

    return at


CALLS = {
    # dtype arguments
    "zeros-str-dtype": ("torch.zeros", lambda T: ((2,), {"dtype": "float32"})),
    "zeros-np-dtype": ("torch.zeros", lambda T: ((2,), {"dtype": np.float32})),
    "zeros-np-dtype-object": ("torch.zeros", lambda T: ((2,), {"dtype": np.dtype("float32")})),
    "zeros-int-dtype": ("torch.zeros", lambda T: ((2,), {"dtype": 3})),
    "zeros-python-dtype": ("torch.zeros", lambda T: ((2,), {"dtype": float})),
    "zeros-dtype": ("torch.zeros", lambda T: ((2,), {"dtype": T.float64})),
    "rand-str-dtype": ("torch.rand", lambda T: ((2,), {"dtype": "float32"})),
    "arange-str-dtype": ("torch.arange", lambda T: ((3,), {"dtype": "float32"})),
    "sum-str-dtype": ("Tensor.sum", lambda T: ((), {"dtype": "float32"})),
    "softmax-str-dtype": ("torch.softmax", lambda T: ((_x(T), 0, "float32"), {})),
    "softmax-dtype": ("torch.softmax", lambda T: ((_x(T), 0, T.float64), {})),
    "tensor-str-dtype": ("torch.tensor", lambda T: (([1.0],), {"dtype": "float32"})),
    "to-str-dtype": ("Tensor.to", lambda T: ((), {"dtype": "float32"})),
    "new_zeros-str-dtype": ("Tensor.new_zeros", lambda T: ((2,), {"dtype": "float32"})),
    # ints and int lists
    "reshape-float": ("Tensor.reshape", lambda T: ((2.0, 3), {})),
    "reshape-float-tuple": ("Tensor.reshape", lambda T: (((2.0, 3),), {})),
    "reshape-bool": ("Tensor.reshape", lambda T: ((True, 6), {})),
    "reshape-np-int": ("Tensor.reshape", lambda T: ((np.int64(2), 3), {})),
    "reshape-np-float": ("Tensor.reshape", lambda T: ((np.float64(2), 3), {})),
    "reshape-int-tensor": ("Tensor.reshape", lambda T: ((T.tensor(6),), {})),
    "reshape-int-tensor-2": ("Tensor.reshape", lambda T: ((T.tensor([2, 3]),), {})),
    "reshape-float-tensor": ("Tensor.reshape", lambda T: ((T.tensor(2.0), 3), {})),
    "reshape-fn-float": ("torch.reshape", lambda T: ((_x(T), (2.0, 3)), {})),
    "view-float": ("Tensor.view", lambda T: ((2.0, 3), {})),
    "view-float-tuple": ("Tensor.view", lambda T: (((2.0, 3),), {})),
    "view-dtype": ("Tensor.view", lambda T: ((T.int32,), {})),
    "zeros-float": ("torch.zeros", lambda T: ((2.0, 3), {})),
    "zeros-float-tuple": ("torch.zeros", lambda T: (((2.0, 3),), {})),
    "zeros-size-kw-float": ("torch.zeros", lambda T: ((), {"size": (2.0,)})),
    "zeros-size-kw-int": ("torch.zeros", lambda T: ((), {"size": 2})),
    "zeros-float-tensor": ("torch.zeros", lambda T: ((T.tensor(2.0),), {})),
    "full-int-size": ("torch.full", lambda T: ((2, 1.0), {})),
    "expand-float": ("Tensor.expand", lambda T: ((2.0,), {})),
    "repeat-float": ("Tensor.repeat", lambda T: ((2.0,), {})),
    "permute-float": ("Tensor.permute", lambda T: ((1.0, 0), {})),
    "transpose-float": ("Tensor.transpose", lambda T: ((0, 1.0), {})),
    "unsqueeze-float": ("Tensor.unsqueeze", lambda T: ((1.0,), {})),
    "unsqueeze-kw-float": ("Tensor.unsqueeze", lambda T: ((), {"dim": 1.0})),
    "unsqueeze-bool": ("Tensor.unsqueeze", lambda T: ((True,), {})),
    "unsqueeze-np-bool": ("Tensor.unsqueeze", lambda T: ((np.bool_(True),), {})),
    "unsqueeze-np-int": ("Tensor.unsqueeze", lambda T: ((np.int64(0),), {})),
    "unsqueeze-tensor": ("Tensor.unsqueeze", lambda T: ((T.tensor(0),), {})),
    "unsqueeze-float-tensor": ("Tensor.unsqueeze", lambda T: ((T.tensor(0.0),), {})),
    "unsqueeze-bool-tensor": ("Tensor.unsqueeze", lambda T: ((T.tensor(True),), {})),
    "squeeze-float": ("Tensor.squeeze", lambda T: ((1.0,), {})),
    "sum-float": ("Tensor.sum", lambda T: ((1.0,), {})),
    "sum-float-tuple": ("Tensor.sum", lambda T: (((1.0,),), {})),
    "sum-kw-float": ("Tensor.sum", lambda T: ((), {"dim": 1.0})),
    "sum-kw-three": ("torch.sum", lambda T: ((_x(T),), {"dim": 1.0, "keepdim": 2, "dtype": 3})),
    "sum-int-tensor": ("Tensor.sum", lambda T: ((), {"dim": T.tensor(0)})),
    "sum-axis": ("torch.sum", lambda T: ((_x(T),), {"axis": 0})),
    "sum-axis-dim": ("torch.sum", lambda T: ((_x(T),), {"axis": 0, "dim": 0})),
    "std-float": ("Tensor.std", lambda T: ((0.0,), {})),
    "max-float": ("Tensor.max", lambda T: ((0.0,), {})),
    "cat-dim-float": ("torch.cat", lambda T: (([_x(T)], 0.0), {})),
    "cat-non-tensor": ("torch.cat", lambda T: (([_x(T), 3],), {})),
    "narrow-float": ("Tensor.narrow", lambda T: ((0, 1.0, 2), {})),
    "select-float": ("Tensor.select", lambda T: ((0, 1.0), {})),
    "topk-float": ("Tensor.topk", lambda T: ((2.0,), {})),
    "tril-float": ("Tensor.tril", lambda T: ((1.0,), {})),
    "eye-float": ("torch.eye", lambda T: ((2, 2.0), {})),
    "movedim-float": ("Tensor.movedim", lambda T: ((0.0, 1), {})),
    "split-float": ("Tensor.split_with_sizes", lambda T: ((2.0,), {})),
    "randint-float": ("torch.randint", lambda T: ((0, 3, (2.0,)), {})),
    "randn-generator-int": ("torch.randn", lambda T: ((2,), {"generator": 1})),
    # overloads
    "clamp-tensor-number": ("torch.clamp", lambda T: ((_x(T), _x(T), 2.0), {})),
    "clamp-number-tensor": ("torch.clamp", lambda T: ((_x(T), 0.0, _x(T)), {})),
    "clamp-kw-min-max": ("torch.clamp", lambda T: ((_x(T),), {"min": _x(T), "max": 2.0})),
    "clamp-kw-max-min": ("torch.clamp", lambda T: ((_x(T),), {"max": _x(T), "min": 2.0})),
    "clamp-0d-number": ("torch.clamp", lambda T: ((_x(T), T.tensor(0.0), 2.0), {})),
    "clamp-method": ("Tensor.clamp", lambda T: ((_x(T), 2.0), {})),
    "clamp_-method": ("Tensor.clamp_", lambda T: ((0.0, _x(T)), {})),
    "clip-method": ("Tensor.clip", lambda T: ((0.0, _x(T)), {})),
    "sort-dim-stable": ("torch.sort", lambda T: ((_x(T), 0), {"stable": True})),
    "sort-dim-desc-stable": ("torch.sort", lambda T: ((_x(T), 0, True), {"stable": True})),
    "sort-method-dim-stable": ("Tensor.sort", lambda T: ((0,), {"stable": True})),
    "sort-bool-dim": ("torch.sort", lambda T: ((_x(T), True), {})),
    "sort-int-descending": ("Tensor.sort", lambda T: ((), {"descending": 1})),
    "sort-stable-none": ("torch.sort", lambda T: ((_x(T),), {"stable": None})),
    "sort-stable": ("torch.sort", lambda T: ((_x(T),), {"stable": True, "dim": 0})),
    "sort-bogus": ("torch.sort", lambda T: ((_x(T),), {"dim": 0, "stable": True, "bogus": 1})),
    "argsort-dim-stable": ("torch.argsort", lambda T: ((_x(T), 0), {"stable": True})),
    "argsort-method-3": ("Tensor.argsort", lambda T: ((0, True), {"stable": True})),
    "msort-dim": ("torch.msort", lambda T: ((_x(T), 0), {})),
    "solve_triangular-no-upper": ("linalg.solve_triangular", lambda T: ((_x(T), _x(T)), {})),
    "solve_triangular-positional": (
        "linalg.solve_triangular",
        lambda T: ((_x(T), _x(T), True), {}),
    ),
    "add-six": ("torch.add", lambda T: ((1, 2, 3, 4, 5, 6), {})),
    "add-tensor-alpha": ("torch.add", lambda T: ((_x(T), _x(T)), {"alpha": _x(T)})),
    "add-bogus": ("torch.add", lambda T: ((_x(T), _x(T)), {"bogus": 1})),
    "add-multiple": ("torch.add", lambda T: ((_x(T), _x(T)), {"input": _x(T)})),
    "to-three": ("Tensor.to", lambda T: ((1.0, 2.0, 3.0), {})),
    # numbers for Tensors: taken by add, sub, mul, div and their kin only
    "add-number-input": ("torch.add", lambda T: ((2, _x(T)), {})),
    "add-number-out": ("torch.add", lambda T: ((_x(T), 2), {"out": 3})),
    "mul-method-number": ("Tensor.mul", lambda T: ((2.5,), {})),
    "mul-method-str": ("Tensor.mul", lambda T: (("2",), {})),
    "div-number-rounding": ("torch.div", lambda T: ((_x(T), 2), {"rounding_mode": "floor"})),
    "atan2-number": ("torch.atan2", lambda T: ((_x(T), 2), {})),
    "matmul-number": ("torch.matmul", lambda T: ((_x(T), 2), {})),
    # PyTorch's own classes by their names
    "clone-memory-format": ("Tensor.clone", lambda T: ((), {"memory_format": T.channels_last})),
    "clone-memory-format-int": ("Tensor.clone", lambda T: ((), {"memory_format": 1})),
    "empty-layout": ("torch.empty", lambda T: ((2,), {"layout": T.strided})),
    # keywords, listed in an unordered_map's order
    "sort-keywords": (
        "torch.sort",
        lambda T: ((_x(T),), {"dim": 0.5, "descending": 1, "stable": 2, "out": 3}),
    ),
    "clamp-keywords": (
        "torch.clamp",
        lambda T: ((), {"input": _x(T), "min": 1.0, "max": _x(T), "out": 1}),
    ),
    "randn-keywords": (
        "torch.randn",
        lambda T: (
            (2,),
            {"generator": 1, "dtype": 2, "layout": 3, "device": 4.0, "requires_grad": 5},
        ),
    ),
}


def _torch_call(key, args, kwargs):
    space, _, name = key.partition(".")
    if space == "Tensor":
        return getattr(torch.ones(6), name)(*args, **kwargs)
    mod = {"torch": torch, "linalg": torch.linalg, "special": torch.special, "fft": torch.fft}
    return getattr(mod[space], name)(*args, **kwargs)


@pytest.mark.parametrize("name", list(CALLS))
def test_parser_model_matches_torch(name):
    key, build = CALLS[name]
    t_args, t_kwargs = build(torch)
    try:
        _torch_call(key, t_args, t_kwargs)
        want = None
    except TypeError as e:
        want = str(e)
    except RuntimeError:  # the parser took it; the kernel refused
        want = None
    n_args, n_kwargs = build(nt)
    try:
        pyargs.refuse(key, n_args, n_kwargs)
        got = None
    except TypeError as e:
        got = str(e)
    if want is not None and "failed to unpack" in want:
        assert got is None  # the parser matched; the list fails where it is unpacked
        return
    assert got == want


def _vmap(T, f, *shapes):
    return T.func.vmap(f)(*(T.ones(*s) for s in shapes))


def _jvp(T, f):
    x = T.ones(2, 3)
    return T.func.jvp(f, (x,), (x,))


def _grad(T, f):
    return T.func.grad(lambda r: f(r).sum())(T.tensor(0.5))


# Calls whose function fails (or once accepted them) where PyTorch's argument parser refuses
# them: the failure is judged by the parser's model, whose TypeError comes first.
JUDGED = {
    # a list, a number or a str for a Tensor
    "matmul-int": lambda T: T.matmul(T.ones(2), 2),
    "gather-list": lambda T: T.ones(2, 3).gather(0, [[0]]),
    "index_select-list": lambda T: T.ones(2, 3).index_select(0, [0]),
    "masked_fill-int-mask": lambda T: T.ones(2).masked_fill(1, 0.0),
    "index_fill-int-index": lambda T: T.ones(2, 3).index_fill(0, 0, 1.0),
    "mul-str": lambda T: T.ones(2).mul("2"),
    "mul_-str": lambda T: T.ones(2).mul_("2"),
    "mul-dtype": lambda T: T.mul(T.ones(2), T.float32),
    "sub-list": lambda T: T.sub(T.ones(2), [1]),
    "pow-list": lambda T: T.ones(2).pow([1.0]),
    "clamp-min-list": lambda T: T.ones(2).clamp(min=[0.0]),
    # numbers for Tensors where PyTorch's parser takes them (add, sub, mul, div, ...)
    "add-number-first": lambda T: T.add(2, T.ones(2)),
    "div-number-rounding": lambda T: T.ones(2).div(2, rounding_mode=3),
    # a Tensor for a Number
    "full-tensor": lambda T: T.full((2,), T.ones(2, 3)),
    "full-requires-grad": lambda T: T.full((2,), T.tensor(0.5, requires_grad=True)),
    "add-alpha-tensor": lambda T: T.ones(2).add(T.ones(2), alpha=T.ones(2)),
    # missing arguments
    "cat-none": lambda T: T.cat(),
    "gather-no-index": lambda T: T.ones(2, 3).gather(0),
    "softmax-no-dim": lambda T: T.ones(2).softmax(),
    "full-no-value": lambda T: T.full((2,)),
    "new_full-no-value": lambda T: T.ones(2).new_full((2,)),
    "index_add-no-source": lambda T: T.ones(2).index_add(0, T.tensor([0])),
    "masked_fill-no-value": lambda T: T.ones(2).masked_fill(T.ones(2) > 0),
    "scatter-no-src": lambda T: T.ones(2).scatter(0, T.zeros(2, dtype=T.long)),
    "unflatten-method-no-sizes": lambda T: T.ones(6).unflatten(0),  # (Python's, in PyTorch)
    "where-two": lambda T: T.where(T.ones(2) > 0, T.ones(2)),
    # extra arguments and keywords
    "exp-method-extra": lambda T: T.ones(2).exp(1),
    "abs-method-extra": lambda T: T.ones(2).abs(T.ones(2)),
    "exp-extra": lambda T: T.exp(T.ones(2), T.ones(2)),
    "mul-three": lambda T: T.mul(T.ones(2), T.ones(2), T.ones(2)),
    "ones-tuple-and-more": lambda T: T.ones((3,), 1.0),
    "sum-dims": lambda T: T.ones(2).sum(dims=0),
    "std-unbiased-correction": lambda T: T.ones(3).std(unbiased=True, correction=1),
    # failures of calls the parser takes keep their own errors
    "repeat_interleave-negative": lambda T: T.repeat_interleave(T.tensor([1, -1])),
    "qr-mode-bool": lambda T: T.linalg.qr(T.ones(2, 2, dtype=T.bool), "reduced"),
    "contiguous-huge": lambda T: T.ones(1).expand(2**62).contiguous(),
    # under transforms: a wrapper is a Tensor in PyTorch's texts
    "vmap-add-str": lambda T: _vmap(T, lambda r: r + "1", (2, 3)),
    "vmap-lt-list": lambda T: _vmap(T, lambda r: r < [1], (2, 3)),
    "vmap-pow-str": lambda T: _vmap(T, lambda r: r ** "a", (2, 3)),
    "vmap-mul-str": lambda T: _vmap(T, lambda r: r * "a", (2, 3)),
    "jvp-matmul-str": lambda T: _jvp(T, lambda r: r @ "a"),
    "grad-sub-list": lambda T: _grad(T, lambda r: r - [1]),
    "vmap-split-float-0d": lambda T: _vmap(T, lambda r: r.sum().split(1.0), (2, 3)),
    "vmap-full-tensor": lambda T: _vmap(T, lambda r: T.full((2,), r), (2, 3)),
    "grad-full": lambda T: _grad(T, lambda r: T.full((2,), r)),
    "vmap-gather-list": lambda T: _vmap(T, lambda r: r.gather(0, [[0]]), (2, 3)),
    "jvp-masked_fill-int": lambda T: _jvp(T, lambda r: r.masked_fill(1, 0.0)),
    # a batched value read under another transform: vmap's text that names every kind of read
    "vmap-grad-full": lambda T: T.func.vmap(T.func.grad(lambda x, b: T.full((2,), b).sum() * x))(
        T.ones(2), T.ones(2)
    ),
    "vmap-grad-bool": lambda T: T.func.vmap(T.func.grad(lambda x, b: x * bool(b)))(
        T.ones(2), T.ones(2)
    ),
    "vmap-item": lambda T: _vmap(T, lambda r: r.sum().item(), (2, 3)),
}


@pytest.mark.parametrize("name", list(JUDGED))
def test_failed_call_judged_as_torch(name):
    """Where PyTorch's parser refuses a call, its TypeError; else the same outcome."""
    assert_same_outcome(JUDGED[name])
