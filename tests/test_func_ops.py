"""Reverse mode under the function transforms, for every op with a differentiable float
sample: func.vjp against torch.func.vjp (or finite differences), vmap over the vjp
function, vjp over vmap, per-sample vjps (vmap over vjp), forward over reverse (jvp of
the vjp) and grad of grad, each against torch.func or a loop over the batch, with the vmap
fallback off. One sample per op (every sample for formulas that branch on the data)."""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass

import numpy as np
import pytest
import torch
from opdb import (
    differentiable_ops,
    float_leaves,
    float_outputs,
    float_paths,
    get_path,
    resolve,
    samples,
    set_path,
)
from twolibs import as_numpy, tensor_leaves, to_nt, to_torch

import numtorch as nt

OPS = differentiable_ops()
B = 2
EPS = 1e-6
FD_TOL = {"rtol": 1e-5, "atol": 1e-6}
TORCH_TOL = {"rtol": 1e-9, "atol": 1e-11}  # float64 formulas: a float32 leak fails
LOOP_TOL = {"rtol": 1e-10, "atol": 1e-12}


@dataclass
class Case:
    """One op sample as a function of its float arguments, in numtorch and in torch."""

    name: str
    f: object  # (*nt tensors) -> tuple of float nt tensors
    tf: object  # the same in torch, or None when torch has no counterpart
    prims: tuple  # float64 numpy arrays


def _sub(args, paths, xs):
    """args with xs at the given paths."""
    for p, x in zip(paths, xs):
        args = set_path(args, p, x)
    return args


@functools.cache
def _case(op, k: int = 0) -> Case | None:
    """The k-th float64 sample with float inputs and outputs (the first, as in
    test_forward_ad, by default)."""
    usable = (s for s in samples(op, "float64") if float_paths(op, s.args) and float_outputs(op, s))
    s = next(itertools.islice(usable, k, None), None)
    if s is None:
        return None
    paths = float_paths(op, s.args)
    fn, kw = resolve(nt, op.api), to_nt(s.kwargs)

    def f(*xs):
        return tuple(float_leaves(fn(*_sub(to_nt(s.args), paths, xs), **kw)))

    tf = None
    if not op.test.no_oracle:
        tfn, tkw = resolve(torch, op.oracle or op.api), to_torch(s.kwargs)

        def tf(*xs):
            out = tfn(*_sub(to_torch(s.args), paths, xs), **tkw)
            return tuple(o for o in tensor_leaves(out, torch.Tensor) if o.is_floating_point())

    prims = tuple(np.asarray(get_path(s.args, p)) for p in paths)
    return Case(op.name, f, tf, prims)


def _rand(rng, shapes, batch=()):
    return tuple(nt.tensor(rng.standard_normal((*batch, *s))) for s in shapes)


def _shapes(ts):
    return [tuple(t.shape) for t in ts]


def _t(x):
    """A torch tensor with the values of an nt tensor or array."""
    return torch.tensor(as_numpy(x))


def _np(x):
    """Values of an nt or torch tensor (torch's ZeroTensor included) as an array."""
    return x.detach().numpy(force=True) if isinstance(x, torch.Tensor) else as_numpy(x)


def _check(got, want, what: str, tol: dict) -> None:
    got, want = list(got), list(want)
    assert len(got) == len(want), f"{what}: {len(got)} results, expected {len(want)}"
    for k, (a, b) in enumerate(zip(got, want)):
        a, b = _np(a), _np(b)
        assert a.shape == b.shape, f"{what}[{k}]: shape {a.shape} != {b.shape}"
        np.testing.assert_allclose(a, b, err_msg=f"{what}[{k}]", equal_nan=True, **tol)


def _torch_or_none(thunk):
    """torch's answer, or None where torch has no formula for this transform of the op
    (or its formula fails on the sample, e.g. an IndexError on an empty input)."""
    try:
        return thunk()
    except (RuntimeError, NotImplementedError, IndexError):
        return None


def _loop(fn, *batched):
    """fn on each batch element, results stacked (fn returns a tuple of tensors)."""
    per = [fn(*(x[b] for x in batched)) for b in range(B)]
    return [nt.stack([r[k] for r in per]) for k in range(len(per[0]))]


def _fd_dot(fn, prims, cts, dirs):
    """Central difference of <cts, fn(prims + s dirs)> at s = 0."""

    def at(sign):
        outs = fn(*(nt.tensor(as_numpy(p) + sign * EPS * as_numpy(d)) for p, d in zip(prims, dirs)))
        return sum(float((as_numpy(o) * as_numpy(c)).sum()) for o, c in zip(outs, cts))

    return (at(1) - at(-1)) / (2 * EPS)


def _fd_jvp(fn, prims, tans):
    """Central difference of fn along tans."""
    hi = fn(*(nt.tensor(as_numpy(p) + EPS * as_numpy(t)) for p, t in zip(prims, tans)))
    lo = fn(*(nt.tensor(as_numpy(p) - EPS * as_numpy(t)) for p, t in zip(prims, tans)))
    return [(as_numpy(a) - as_numpy(b)) / (2 * EPS) for a, b in zip(hi, lo)]


def _vjp_at(f, n: int):
    """(*primals, *cotangents) -> the vjp of f (n primals) at the primals."""
    return lambda *a: nt.func.vjp(f, *a[:n])[1](a[n:])


def _setup(op, k: int, seed: int):
    """The case, a generator, its primals as tensors and random cotangents for its outputs."""
    c = _case(op, k)
    rng = np.random.default_rng(seed)
    prims = tuple(nt.tensor(p) for p in c.prims)
    out = c.f(*prims)
    cts = _rand(rng, _shapes(out))
    return c, rng, prims, cts


pytestmark = pytest.mark.usefixtures("no_fallback")
# Formulas that branch on the data (zeros): every sample, so that slices with two zeros
# are differentiated twice.
EVERY_SAMPLE = ("prod", "cumprod")
OP_PARAMS = [
    pytest.param(op, k, id=op.name if k == 0 else f"{op.name}-{k}")
    for op in OPS
    for k in range(len(samples(op, "float64")) if op.name in EVERY_SAMPLE else 1)
    if _case(op, k) is not None
]


@pytest.mark.parametrize("op,k", OP_PARAMS)
def test_vjp_matches_torch(op, k):
    c, rng, prims, cts = _setup(op, k, 0)
    out, vjp_fn = nt.func.vjp(c.f, *prims)
    grads = vjp_fn(cts)
    assert isinstance(grads, tuple) and len(grads) == len(prims)
    ref = None
    if c.tf is not None:
        ref = _torch_or_none(lambda: torch.func.vjp(c.tf, *map(_t, prims)))
    if ref is not None:
        _check(out, ref[0], f"{c.name} vjp output", TORCH_TOL)
        _check(grads, ref[1](tuple(map(_t, cts))), f"{c.name} vjp", TORCH_TOL)
        return
    _check(out, c.f(*prims), f"{c.name} vjp output", LOOP_TOL)
    for k, p in enumerate(prims):
        d = [nt.zeros_like(q) for q in prims]
        d[k] = nt.tensor(rng.standard_normal(tuple(p.shape)))
        np.testing.assert_allclose(
            float((as_numpy(grads[k]) * as_numpy(d[k])).sum()),
            _fd_dot(c.f, prims, cts, d),
            err_msg=f"{c.name} vjp[{k}] vs finite differences",
            **FD_TOL,
        )


@pytest.mark.parametrize("op,k", OP_PARAMS)
def test_vmap_of_vjp_fn_matches_loop(op, k):
    c, rng, prims, cts = _setup(op, k, 1)
    _, vjp_fn = nt.func.vjp(c.f, *prims)
    ctb = _rand(rng, _shapes(cts), (B,))
    got = nt.vmap(vjp_fn)(ctb)
    _check(got, _loop(lambda *ct: vjp_fn(ct), *ctb), f"{c.name} vmap(vjp_fn)", LOOP_TOL)


def _batched_primals(c: Case, rng):
    """B primals near the sample's. Only float arguments are primals: the others (bool
    masks, index tensors) stay unbatched in f's closure."""
    return tuple(
        nt.tensor(np.stack([p] * B) + 0.01 * rng.standard_normal((B, *p.shape))) for p in c.prims
    )


@pytest.mark.parametrize("op,k", OP_PARAMS)
def test_vjp_of_vmap_matches_loop(op, k):
    c, rng, prims, cts = _setup(op, k, 2)
    pb = _batched_primals(c, rng)
    ctb = _rand(rng, _shapes(cts), (B,))
    out, vjp_fn = nt.func.vjp(nt.vmap(c.f), *pb)
    _check(out, _loop(c.f, *pb), f"{c.name} vjp(vmap(f)) output", LOOP_TOL)
    want = _loop(_vjp_at(c.f, len(pb)), *pb, *ctb)
    _check(vjp_fn(ctb), want, f"{c.name} vjp(vmap(f))", LOOP_TOL)


@pytest.mark.parametrize("op,k", OP_PARAMS)
def test_per_sample_vjp_matches_loop(op, k):
    c, rng, prims, cts = _setup(op, k, 3)
    pb = _batched_primals(c, rng)
    per_sample_ct = _vjp_at(c.f, len(pb))

    def per_sample(*p):
        return per_sample_ct(*p, *cts)

    _check(nt.vmap(per_sample)(*pb), _loop(per_sample, *pb), f"{c.name} vmap(vjp)", LOOP_TOL)
    ctb = _rand(rng, _shapes(cts), (B,))
    got = nt.vmap(per_sample_ct)(*pb, *ctb)
    _check(got, _loop(per_sample_ct, *pb, *ctb), f"{c.name} vmap(vjp), batched cts", LOOP_TOL)


@pytest.mark.parametrize("op,k", OP_PARAMS)
def test_jvp_of_vjp_matches_torch(op, k):
    c, rng, prims, cts = _setup(op, k, 4)
    tans = _rand(rng, _shapes(prims))

    def vjp_of(*p):
        return nt.func.vjp(c.f, *p)[1](cts)

    out, got = nt.func.jvp(vjp_of, prims, tans)
    _check(out, vjp_of(*prims), f"{c.name} jvp(vjp) output", LOOP_TOL)
    ref = None
    if c.tf is not None:
        tcts = tuple(map(_t, cts))
        ref = _torch_or_none(
            lambda: torch.func.jvp(
                lambda *p: torch.func.vjp(c.tf, *p)[1](tcts),
                tuple(map(_t, prims)),
                tuple(map(_t, tans)),
            )
        )
    if ref is not None:
        _check(got, ref[1], f"{c.name} jvp(vjp)", TORCH_TOL)
    else:
        _check(got, _fd_jvp(vjp_of, prims, tans), f"{c.name} jvp(vjp) vs FD", FD_TOL)


@pytest.mark.parametrize("op,k", OP_PARAMS)
def test_grad_of_grad_matches_torch(op, k):
    c, rng, prims, cts = _setup(op, k, 5)
    dirs = _rand(rng, _shapes(prims))

    def line(f, ps, cs, ds):
        """s -> <cs, f(ps + s ds)>: the sample restricted to a line through its inputs."""
        return lambda s: sum(
            (o * ct).sum() for o, ct in zip(f(*(p + s * d for p, d in zip(ps, ds))), cs)
        )

    s0 = nt.tensor(0.0, dtype=nt.float64)
    got = nt.func.grad(nt.func.grad(line(c.f, prims, cts, dirs)))(s0)
    ref = None
    if c.tf is not None:
        tline = line(c.tf, *(tuple(map(_t, v)) for v in (prims, cts, dirs)))
        ref = _torch_or_none(lambda: torch.func.grad(torch.func.grad(tline))(_t(s0)))
    if ref is None:
        g1 = nt.func.grad(line(c.f, prims, cts, dirs))
        ref = (g1(nt.tensor(EPS, dtype=nt.float64)) - g1(nt.tensor(-EPS, dtype=nt.float64))) / (
            2 * EPS
        )
        _check([got], [ref], f"{c.name} grad(grad) vs FD", FD_TOL)
    else:
        _check([got], [ref], f"{c.name} grad(grad)", TORCH_TOL)


_TIES = np.array([[3.0, 1.0, 3.0], [3.0, -2.0, np.nan]])  # three-way ties; a NaN for nanmean


@pytest.mark.parametrize(
    "prog",
    [
        pytest.param(lambda lib, x: lib.nan_to_num(x).amax(), id="amax"),
        pytest.param(lambda lib, x: (-lib.nan_to_num(x)).amin(), id="amin"),
        pytest.param(lambda lib, x: lib.nan_to_num(x).max(), id="max"),
        pytest.param(lambda lib, x: (-lib.nan_to_num(x)).median(), id="median"),
        pytest.param(lambda lib, x: lib.nanmean(x), id="nanmean"),
        pytest.param(
            lambda lib, x: lib.linalg.vector_norm(lib.nan_to_num(x), float("inf")), id="inf-norm"
        ),
    ],
)
def test_vjp_shares_are_exact_in_float64(prog):
    # A gradient split among k tied elements is g / k in the input's dtype.
    x, ct = nt.tensor(_TIES), nt.tensor(1.7, dtype=nt.float64)
    got = nt.func.vjp(lambda a: prog(nt, a), x)[1](ct)
    want = torch.func.vjp(lambda a: prog(torch, a), _t(x))[1](_t(ct))
    _check(got, want, "tie shares", {"rtol": 1e-15, "atol": 0})
