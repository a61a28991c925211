"""The op database as tests see it: the registry's ops with samples, their samples, the paths
to their float arguments, and their float outputs. Conversions and comparisons are twolibs's."""

from __future__ import annotations

import numpy as np
from twolibs import tensor_leaves, to_nt

import numtorch as nt
from numtorch._core.op import REGISTRY
from numtorch._opdb.samples import Maker


def ops_with_samples():
    return [op for op in REGISTRY.values() if op.samples is not None]


def resolve(mod, path: str):
    obj = mod
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def samples(op, dtype: str, seed: int = 0):
    return list(op.samples(Maker(dtype, seed)))


def dtypes_of(op):
    return op.test.dtypes


def float_arg_positions(args, kinds: str = "f"):
    """Paths to the ndarray args of dtype kinds ``kinds`` (floating; "fc": complex too):
    (index into args, index into list or None)."""
    paths = []
    for i, a in enumerate(args):
        if isinstance(a, np.ndarray) and a.dtype.kind in kinds:
            paths.append((i, None))
        elif isinstance(a, (list, tuple)):
            for j, v in enumerate(a):
                if isinstance(v, np.ndarray) and v.dtype.kind in kinds:
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


def autograd_outputs(out, op=None):
    """The outputs autograd sees: a primitive's first ``ndiff`` (lstsq's singular values vary
    but have no derivative); the whole result otherwise."""
    if (
        op is not None
        and op.kernel is not None
        and 0 < op.ndiff < op.nout
        and isinstance(out, tuple)
        and len(out) == op.nout
    ):
        return out[: op.ndiff]
    return out


def float_leaves(out, op=None):
    """The float tensors of a result (with ``op``, among the outputs autograd sees)."""
    out = autograd_outputs(out, op)
    return [o for o in tensor_leaves(out, nt.Tensor) if o.dtype.is_floating_point]


def float_outputs(op, s):
    """The float outputs of op on sample s."""
    return float_leaves(resolve(nt, op.api)(*to_nt(s.args), **to_nt(s.kwargs)))
