"""Generic tests driven by the op database: every op with samples, against the oracle
(PyTorch CPU) and central finite differences in float64."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from opdb import (
    autograd_outputs,
    dtypes_of,
    float_arg_positions,
    get_path,
    ops_with_samples,
    resolve,
    samples,
    set_path,
)
from twolibs import as_numpy, assert_close, inexact, normal, op_tol, tensor_leaves, to_nt, to_torch

import numtorch as nt
from numtorch._opdb.trace import TraceInterpreter
from numtorch.func._jvp import apply_jvp

OPS = ops_with_samples()
# Ops with no PyTorch counterpart (internal backward ops; sign-ambiguous decompositions, whose
# forward is checked in test_linalg_decomp.py) are checked by finite differences only.
ORACLE = [op for op in OPS if not op.test.no_oracle]
FWD = [pytest.param(op, d, id=f"{op.name}-{d}") for op in ORACLE for d in dtypes_of(op)]
GRAD = [pytest.param(op, id=op.name) for op in OPS if op.ndiff and not op.test.no_grad_test]


def _nt_fn(op):
    return resolve(nt, op.api)


def _torch_fn(op):
    return resolve(torch, op.oracle or op.api)


def _call(fn, sample, conv, requires_grad=False, clone_first=False):
    args = conv(sample.args, requires_grad)
    kwargs = conv(sample.kwargs, False)
    if clone_first:
        args = (args[0].clone(),) + tuple(args[1:])
    return args, fn(*args, **kwargs)


@pytest.mark.parametrize("op,dtype", FWD)
def test_forward_matches_torch(op, dtype):
    for s in samples(op, dtype):
        _, out = _call(_nt_fn(op), s, to_nt)
        _, ref = _call(_torch_fn(op), s, to_torch)
        assert_close(out, ref, **op_tol(dtype), where=f"{op.name} {s}")


def _float_outputs(out):
    return [o for o in tensor_leaves(out, nt.Tensor) if inexact(o) and o.requires_grad]


def _grad_setup(op, s):
    paths = float_arg_positions(s.args)
    if op.grad_args is not None:
        paths = [p for p in paths if p[0] in op.grad_args]
    return paths


def _nt_grads(op, s, cotangent_seed=1, with_out=False):
    args = to_nt(s.args)
    paths = _grad_setup(op, s)
    ins = [get_path(args, p).requires_grad_(True) for p in paths]
    out = _nt_fn(op)(*args, **to_nt(s.kwargs))
    outs = _float_outputs(out)
    rng = np.random.default_rng(cotangent_seed)
    vs = [nt.tensor(normal(rng, o.shape, o.dtype)) for o in outs]
    return (ins, outs, vs, out) if with_out else (ins, outs, vs)


@pytest.mark.parametrize("op", GRAD)
def test_vjp_matches_torch_and_finite_differences(op):
    for s in samples(op, "float64"):
        if not _grad_setup(op, s):
            continue
        ins, outs, vs, out = _nt_grads(op, s, with_out=True)
        if not outs:
            continue
        # the float outputs autograd sees (a factor such as lu's P may be left out of it)
        seen = [any(o is d for d in outs) for o in tensor_leaves(out, nt.Tensor)]
        grads = nt.autograd.grad(outs, ins, vs, allow_unused=True)
        grads = [np.zeros(i.shape) if g is None else as_numpy(g) for g, i in zip(grads, ins)]
        # Central finite differences of <v, f(x)>.
        paths = _grad_setup(op, s)

        def f(args):
            with nt.no_grad():
                out = _call(_nt_fn(op), type(s)(args, s.kwargs), to_nt)[1]
            fo = [o for o, d in zip(tensor_leaves(out, nt.Tensor), seen) if d]
            return sum(
                float(np.real(np.conj(as_numpy(v)) * as_numpy(o)).sum()) for o, v in zip(fo, vs)
            )

        eps = 1e-6
        for p, g in zip(paths, grads):
            base = get_path(s.args, p)
            fd = np.zeros(base.shape)
            for idx in np.ndindex(base.shape):
                hi, lo = base.copy(), base.copy()
                hi[idx] += eps
                lo[idx] -= eps
                fd[idx] = (f(set_path(s.args, p, hi)) - f(set_path(s.args, p, lo))) / (2 * eps)
            np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-6, err_msg=f"{op.name} {s} vs FD")
        if op.test.no_oracle:
            continue
        targs = to_torch(s.args)
        tins = [get_path(targs, p).requires_grad_(True) for p in paths]
        tout = _torch_fn(op)(*targs, **to_torch(s.kwargs))
        touts = [o for o in tensor_leaves(tout, torch.Tensor) if o.requires_grad]
        tg = torch.autograd.grad(
            touts, tins, [torch.from_numpy(as_numpy(v)) for v in vs], allow_unused=True
        )
        for g, t, i in zip(grads, tg, ins):
            np.testing.assert_allclose(
                g,
                np.zeros(i.shape) if t is None else t.numpy(force=True),
                rtol=1e-7,
                atol=1e-9,
                err_msg=f"{op.name} {s} vs torch",
            )


def _jvp_through_trace(op, s, tangents_np, paths=None):
    """Forward mode by replaying the traced op calls with each op's jvp rule."""
    args = to_nt(s.args)
    paths = _grad_setup(op, s) if paths is None else paths
    with TraceInterpreter() as T:
        wargs = args
        for p in paths:
            wargs = set_path(wargs, p, T.wrap(get_path(args, p)))
        out = _nt_fn(op)(*wargs, **to_nt(s.kwargs))
        out = T.unwrap(out)
    tan = {id(get_path(args, p)): nt.tensor(t) for p, t in zip(paths, tangents_np)}
    for cop, cargs, cattrs, cout in T.calls:
        ts = []
        for a in cargs:
            if isinstance(a, (list, tuple)) and a and isinstance(a[0], nt.Tensor):
                sub = [tan.get(id(x)) for x in a]
                ts.append(None if all(x is None for x in sub) else sub)
            else:
                ts.append(tan.get(id(a)) if isinstance(a, nt.Tensor) else None)
        if cop.ndiff == 0 or all(t is None for t in ts):
            continue
        r = apply_jvp(cop, cargs, cattrs, cout, tuple(ts))
        if cop.nout == 1:
            tan[id(cout)] = r
        else:
            rs = r if isinstance(r, (tuple, list)) else (r,)
            for o, t in zip(cout, rs):
                tan[id(o)] = t
    fo = [o for o in tensor_leaves(autograd_outputs(out, op), nt.Tensor) if inexact(o)]
    return fo, [tan.get(id(o)) for o in fo]


@pytest.mark.parametrize("op", GRAD)
def test_jvp_matches_finite_differences(op):
    rng = np.random.default_rng(2)
    for s in samples(op, "float64"):
        paths = _grad_setup(op, s)
        if not paths:
            continue
        tangents = [rng.standard_normal(get_path(s.args, p).shape) for p in paths]
        outs, tans = _jvp_through_trace(op, s, tangents)
        eps = 1e-6

        def shifted(sign):
            args = s.args
            for p, t in zip(paths, tangents):
                args = set_path(args, p, np.asarray(get_path(s.args, p) + sign * eps * t))
            out = _call(_nt_fn(op), type(s)(args, s.kwargs), to_nt)[1]
            leaves = tensor_leaves(autograd_outputs(out, op), nt.Tensor)
            return [as_numpy(o) for o in leaves if inexact(o)]

        hi, lo = shifted(1), shifted(-1)
        for o, t, up, down in zip(outs, tans, hi, lo):
            fd = (up - down) / (2 * eps)
            got = np.zeros(o.shape) if t is None else as_numpy(t)
            np.testing.assert_allclose(got, fd, rtol=1e-5, atol=1e-6, err_msg=f"{op.name} {s} jvp")


@pytest.mark.parametrize(
    "op", [p for p in GRAD if not (p.values[0].test.no_gradgrad or p.values[0].test.no_oracle)]
)
def test_second_order_matches_torch(op):
    for s in samples(op, "float64")[:2]:
        paths = _grad_setup(op, s)
        if not paths:
            continue
        ins, outs, vs = _nt_grads(op, s)
        if not outs:
            continue
        gs = nt.autograd.grad(outs, ins, vs, create_graph=True, allow_unused=True)
        pairs = [(g, i) for g, i in zip(gs, ins) if g is not None and g.requires_grad]
        if not pairs:
            continue
        rng = np.random.default_rng(3)
        ws = [nt.tensor(rng.standard_normal(g.shape)) for g, _ in pairs]
        total = sum((g * w).sum() for (g, _), w in zip(pairs, ws))
        gg = nt.autograd.grad(total, ins, allow_unused=True)

        targs = to_torch(s.args)
        tins = [get_path(targs, p).requires_grad_(True) for p in paths]
        tout = _torch_fn(op)(*targs, **to_torch(s.kwargs))
        touts = [o for o in tensor_leaves(tout, torch.Tensor) if o.requires_grad]
        tgs = torch.autograd.grad(
            touts,
            tins,
            [torch.from_numpy(as_numpy(v)) for v in vs],
            create_graph=True,
            allow_unused=True,
        )
        tpairs = [tg for tg, (g, i) in zip(tgs, zip(gs, ins)) if g is not None and g.requires_grad]
        ttotal = sum(
            (tg * torch.from_numpy(as_numpy(w))).sum()
            for tg, w in zip(tpairs, ws)
            if tg is not None
        )
        if not isinstance(ttotal, torch.Tensor) or not ttotal.requires_grad:
            for g in gg:
                assert g is None or np.allclose(as_numpy(g), 0)
            continue
        tgg = torch.autograd.grad(ttotal, tins, allow_unused=True)
        for a, b, i in zip(gg, tgg, ins):
            an = np.zeros(i.shape) if a is None else as_numpy(a)
            bn = np.zeros(i.shape) if b is None else b.numpy(force=True)
            np.testing.assert_allclose(
                an, bn, rtol=1e-6, atol=1e-8, err_msg=f"{op.name} {s} gradgrad"
            )


ERR = [pytest.param(op, id=op.name) for op in OPS if op.error_samples is not None]


@pytest.mark.parametrize("op", ERR)
def test_error_inputs_raise(op):
    from numtorch._opdb.samples import Maker

    for e in op.error_samples(Maker("float32")):
        with pytest.raises(e.error, match=e.match) as ours:
            _call(_nt_fn(op), e.sample, to_nt)
        # exactly the declared type: NotImplementedError is a RuntimeError, and pytest.raises
        # alone would let one stand for the other
        assert type(ours.value) is e.error, f"{op.name}: raised {ours.value!r}"
        if not op.test.no_oracle:  # the oracle rejects the same input, with the same type
            with pytest.raises(Exception) as theirs:  # noqa: B017 - the type is checked below
                _call(_torch_fn(op), e.sample, to_torch)
            # by name: a library's own types (LinAlgError, torch's _LinAlgError) differ as classes
            their_type = type(theirs.value).__name__.lstrip("_")
            assert their_type == e.error.__name__, f"{op.name}: torch raised {theirs.value!r}"
