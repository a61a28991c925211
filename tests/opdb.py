"""Glue between the op database (numtorch's registry) and the oracle."""

from __future__ import annotations

import numpy as np
import torch

import numtorch as nt
from numtorch._core.op import REGISTRY
from numtorch.testing.samples import Maker

TOL = {"float16": (1e-2, 1e-2), "float32": (1e-4, 1e-5), "float64": (1e-7, 1e-9)}


def ops_with_samples():
    return [op for op in REGISTRY.values() if op.samples is not None]


def resolve(mod, path: str):
    obj = mod
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def samples(op, dtype: str, seed: int = 0):
    return list(op.samples(Maker(dtype, seed)))


def to_nt(a, requires_grad: bool = False):
    if isinstance(a, np.ndarray):
        t = nt.tensor(a)
        if requires_grad and a.dtype.kind == "f":
            t.requires_grad_(True)
        return t
    if isinstance(a, list):
        return [to_nt(x, requires_grad) for x in a]
    if isinstance(a, tuple):
        return tuple(to_nt(x, requires_grad) for x in a)
    if isinstance(a, dict):
        return {k: to_nt(v, requires_grad) for k, v in a.items()}
    return a


def to_torch(a, requires_grad: bool = False):
    if isinstance(a, np.ndarray):
        t = torch.from_numpy(a.copy())
        if requires_grad and a.dtype.kind == "f":
            t.requires_grad_(True)
        return t
    if isinstance(a, list):
        return [to_torch(x, requires_grad) for x in a]
    if isinstance(a, tuple):
        return tuple(to_torch(x, requires_grad) for x in a)
    if isinstance(a, dict):
        return {k: to_torch(v, requires_grad) for k, v in a.items()}
    if isinstance(a, nt.dtype):
        return getattr(torch, a.name)
    return a


def leaves(x, kind=None):
    """Tensors in a nested structure, in order."""
    if isinstance(x, (list, tuple)):
        out = []
        for v in x:
            out.extend(leaves(v, kind))
        return out
    if isinstance(x, dict):
        return leaves(list(x.values()), kind)
    if kind is not None and isinstance(x, kind):
        return [x]
    if kind is None and isinstance(x, (nt.Tensor, torch.Tensor)):
        return [x]
    return []


def as_numpy(t):
    if isinstance(t, torch.Tensor):
        return t.detach().resolve_conj().numpy()
    if isinstance(t, nt.Tensor):
        return np.asarray(t.detach().numpy())
    return np.asarray(t)


def assert_close(actual, expected, dtype_name: str, what: str = "", check_dtype: bool = True):
    rtol, atol = TOL.get(dtype_name, (1e-6, 1e-8))
    a, e = leaves(actual) if not isinstance(actual, nt.Tensor) else [actual], None
    e = leaves(expected) if not isinstance(expected, torch.Tensor) else [expected]
    if not isinstance(actual, (nt.Tensor, list, tuple)):
        a, e = [actual], [expected]
    assert len(a) == len(e), f"{what}: {len(a)} outputs, oracle has {len(e)}"
    for x, y in zip(a, e):
        xn, yn = as_numpy(x), as_numpy(y)
        assert xn.shape == yn.shape, f"{what}: shape {xn.shape} != oracle {yn.shape}"
        if check_dtype and isinstance(x, nt.Tensor):
            assert x.dtype.name == str(y.dtype).replace("torch.", ""), (
                f"{what}: dtype {x.dtype} != oracle {y.dtype}"
            )
        if xn.dtype.kind == "b" or yn.dtype.kind == "b":
            np.testing.assert_array_equal(xn, yn, err_msg=what)
        else:
            np.testing.assert_allclose(
                xn, yn, rtol=rtol * 10, atol=atol * 10, err_msg=what, equal_nan=True
            )


def dtypes_of(op):
    return op.test.dtypes


def float_arg_positions(args):
    """Paths to floating ndarray args (index into args, index into list or None)."""
    paths = []
    for i, a in enumerate(args):
        if isinstance(a, np.ndarray) and a.dtype.kind == "f":
            paths.append((i, None))
        elif isinstance(a, (list, tuple)):
            for j, v in enumerate(a):
                if isinstance(v, np.ndarray) and v.dtype.kind == "f":
                    paths.append((i, j))
    return paths


def get_path(args, path):
    i, j = path
    return args[i] if j is None else args[i][j]


def set_path(args, path, value):
    args = list(args)
    i, j = path
    if j is None:
        args[i] = value
    else:
        sub = list(args[i])
        sub[j] = value
        args[i] = type(args[i])(sub) if isinstance(args[i], tuple) else sub
    return tuple(args)


def differentiable_ops():
    """Ops with samples, a gradient and a jvp rule (not random)."""
    return [
        op
        for op in ops_with_samples()
        if op.ndiff and not op.random and not op.test.no_grad_test and op.jvp is not None
    ]


def float_paths(op, args):
    """Positions of the differentiable float tensors among a sample's arguments."""
    return [p for p in float_arg_positions(args) if op.grad_args is None or p[0] in op.grad_args]


def float_leaves(out):
    return [o for o in leaves(out, nt.Tensor) if o.dtype.is_floating_point]


def float_outputs(op, s):
    """The float outputs of op on sample s."""
    return float_leaves(resolve(nt, op.api)(*to_nt(s.args), **to_nt(s.kwargs)))
