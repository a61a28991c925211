"""vmap over every op in the database, against a Python loop and torch.func.vmap.

Batched inputs are B versions of the same sample (the sample maker with B seeds), stacked
along the in_dim. Every combination of in_dims (0, -1, None per tensor argument, not all
None) runs with batch sizes 2 and 3 with the fallback turned into an error, so every op is
proven to have a rule; a nested vmap runs once per sample; the fallback itself runs for
every op on one sample; and vmap over the backward pass (is_grads_batched) runs every op's
vjp formulas on batched cotangents, with the fallback off.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
import torch
from opdb import ops_with_samples, resolve, samples
from twolibs import (
    as_numpy,
    assert_same_outcome,
    inexact,
    normal,
    tensor_leaves,
    to_nt,
    to_torch,
)

import numtorch as nt

OPS = [op for op in ops_with_samples() if not op.random]
SWEEP = [op for op in OPS if op.test.vmap != "dynamic"]
DYNAMIC = [op for op in OPS if op.test.vmap == "dynamic"]
MAX_COMBOS = 26  # every combination up to three tensor arguments; a fixed subset beyond


def _fixed(op, paths):
    """Path indices that must stay unbatched (batching them is a documented vmap error:
    ``op.test.vmap_unbatched`` lists argument positions)."""
    pos = op.test.vmap_unbatched
    return {k for k, p in enumerate(paths) if p[0] in pos}


def _dtype(op):
    dts = op.test.dtypes
    return "float64" if "float64" in dts else dts[0]


def _paths(args):
    """Positions of array leaves: (arg index, index in a list arg or None)."""
    out = []
    for i, a in enumerate(args):
        if isinstance(a, np.ndarray):
            out.append((i, None))
        elif isinstance(a, (list, tuple)):
            out.extend((i, j) for j, v in enumerate(a) if isinstance(v, np.ndarray))
    return out


def _get(args, p):
    i, j = p
    return args[i] if j is None else args[i][j]


def _variants(op, dtype, n):
    """n versions of each sample, from n seeds; same structure, different values."""
    per_seed = [samples(op, dtype, seed=k) for k in range(n)]
    for group in zip(*per_seed):
        s0 = group[0]
        ps = _paths(s0.args)
        for s in group[1:]:
            assert _paths(s.args) == ps and all(
                _get(s.args, p).shape == _get(s0.args, p).shape for p in ps
            ), f"{op.name}: samples from different seeds differ in structure"
        yield group


def _combos(k, last: bool = True):
    """Every in_dims combination of k tensors (some batched) up to MAX_COMBOS; beyond, the
    all-0, all--1 and one-unbatched ones plus a seeded draw of the rest (drawn, not listed:
    3**k grows fast). ``last``: whether a batch dim may be last (see OpTestFlags)."""
    if not last:
        return [c for c in itertools.product((0, None), repeat=k) if c != (None,) * k]
    if 3**k - 1 <= MAX_COMBOS:
        return [c for c in itertools.product((0, -1, None), repeat=k) if c != (None,) * k]
    keep = [(0,) * k, (-1,) * k] + [
        tuple(None if i == j else 0 for i in range(k)) for j in range(k)
    ]
    rng, seen, rest = np.random.default_rng(k), set(keep), []
    while len(keep) + len(rest) < MAX_COMBOS:
        c = tuple((0, -1, None)[i] for i in rng.integers(0, 3, k))
        if c not in seen and c != (None,) * k:
            seen.add(c)
            rest.append(c)
    return keep + rest


def _build(group, paths, dims, conv):
    """Batched arguments (per path: stacked along its dim or variant 0) and in_dims."""
    args = list(group[0].args)
    in_dims = [None] * len(args)
    for p, d in zip(paths, dims):
        i, j = p
        val = _get(group[0].args, p) if d is None else np.stack([_get(s.args, p) for s in group], d)
        if j is None:
            args[i] = val
            in_dims[i] = d
        else:
            sub = list(args[i])
            sub[j] = val
            args[i] = sub
            dl = in_dims[i] if isinstance(in_dims[i], list) else [None] * len(sub)
            dl[j] = d
            in_dims[i] = dl
    return conv(tuple(args)), tuple(in_dims)


def _slice(args, in_dims, b):
    out = []
    for a, d in zip(args, in_dims):
        if isinstance(d, list):
            out.append([x if e is None else x.select(e, b) for x, e in zip(a, d)])
        else:
            out.append(a if d is None else a.select(d, b))
    return tuple(out)


def _stack(outs):
    if isinstance(outs[0], (tuple, list)):
        return tuple(_stack([o[k] for o in outs]) for k in range(len(outs[0])))
    return nt.stack(outs)


def _check(got, want, what, dtype):
    g, w = tensor_leaves(got, nt.Tensor), tensor_leaves(want, nt.Tensor)
    assert len(g) == len(w), what
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == "float32" else dict(rtol=1e-9, atol=1e-11)
    for x, y in zip(g, w):
        assert x.shape == y.shape, f"{what}: shape {x.shape} != {y.shape}"
        assert x.dtype == y.dtype, f"{what}: dtype {x.dtype} != {y.dtype}"
        np.testing.assert_allclose(as_numpy(x), as_numpy(y), err_msg=what, equal_nan=True, **tol)


def _fn(op, kwargs):
    f = resolve(nt, op.api)
    return lambda *a: f(*a, **kwargs)


@pytest.mark.parametrize("op", [pytest.param(op, id=op.name) for op in SWEEP])
def test_vmap_matches_loop_and_torch(op, no_fallback):
    dtype = _dtype(op)
    fn_t = None if op.test.no_oracle else resolve(torch, op.oracle or op.api)
    for B in (2, 3):
        for group in _variants(op, dtype, B):
            kwargs = to_nt(group[0].kwargs)
            fn = _fn(op, kwargs)
            paths = _paths(group[0].args)
            fixed = _fixed(op, paths)
            for dims in _combos(len(paths), op.test.vmap_last):
                args, in_dims = _build(group, paths, dims, to_nt)
                what = f"{op.name} B={B} in_dims={in_dims} {group[0]}"
                if any(dims[k] is not None for k in fixed):
                    with pytest.raises(RuntimeError, match="vmap: "):
                        nt.vmap(fn, in_dims=in_dims)(*args)
                    continue
                got = nt.vmap(fn, in_dims=in_dims)(*args)
                want = _stack([fn(*_slice(args, in_dims, b)) for b in range(B)])
                _check(got, want, what, dtype)
                if fn_t is None:
                    continue
                targs, _ = _build(group, paths, dims, to_torch)
                tkw = to_torch(group[0].kwargs)
                try:
                    ref = torch.func.vmap(lambda *a: fn_t(*a, **tkw), in_dims=in_dims)(*targs)
                except (RuntimeError, ValueError, NotImplementedError, IndexError):
                    continue  # torch has no batching for this call; the loop is the reference
                if _close(got, ref):
                    continue
                # A mismatch counts only where torch's vmap agrees with torch's own loop
                # (torch.func.vmap(linalg.solve) pairs B's vmap dim with A's batch dims).
                tloop = _stack_torch([fn_t(*_slice(targs, in_dims, b), **tkw) for b in range(B)])
                assert not _close(ref, tloop), what + ": differs from torch.func.vmap"


COMPLEX_SWEEP = [op for op in SWEEP if "complex128" in op.test.dtypes]


@pytest.mark.parametrize("op", [pytest.param(op, id=op.name) for op in COMPLEX_SWEEP])
def test_complex_vmap_matches_loop(op, no_fallback):
    """The batch rules on complex samples: every argument batched at dim 0, then at the
    last dim where allowed, then each one left unbatched, against a Python loop."""
    for group in _variants(op, "complex128", 2):
        kwargs = to_nt(group[0].kwargs)
        fn = _fn(op, kwargs)
        paths = _paths(group[0].args)
        fixed = _fixed(op, paths)
        for dims in _combos(len(paths), op.test.vmap_last)[:4]:
            if any(dims[k] is not None for k in fixed):
                continue
            args, in_dims = _build(group, paths, dims, to_nt)
            got = nt.vmap(fn, in_dims=in_dims)(*args)
            want = _stack([fn(*_slice(args, in_dims, b)) for b in range(2)])
            _check(got, want, f"{op.name} in_dims={in_dims} {group[0]}", "complex128")


def _close(a, b) -> bool:
    xs = tensor_leaves(a, (nt.Tensor, torch.Tensor))
    ys = tensor_leaves(b, (nt.Tensor, torch.Tensor))
    return len(xs) == len(ys) and all(
        as_numpy(x).shape == as_numpy(y).shape
        and np.allclose(as_numpy(x), as_numpy(y), rtol=1e-5, atol=1e-6, equal_nan=True)
        for x, y in zip(xs, ys)
    )


def _stack_torch(outs):
    if isinstance(outs[0], (tuple, list)):
        return tuple(_stack_torch([o[k] for o in outs]) for k in range(len(outs[0])))
    return torch.stack(outs)


@pytest.mark.parametrize("op", [pytest.param(op, id=op.name) for op in SWEEP])
def test_nested_vmap_matches_loop(op, no_fallback):
    dtype = _dtype(op)
    B1, B2 = 2, 3
    for group in _variants(op, dtype, B1 * B2):
        kwargs = to_nt(group[0].kwargs)
        fn = _fn(op, kwargs)
        paths = _paths(group[0].args)
        fixed = _fixed(op, paths)
        inner_dims = tuple((0, None, -1)[k % 3] for k in range(len(paths)))
        args = list(group[0].args)
        in_o, in_i = [None] * len(args), [None] * len(args)
        for k, (p, di) in enumerate(zip(paths, inner_dims)):
            vals = [_get(s.args, p) for s in group]
            if k in fixed:
                continue
            if di is None:  # batched by the outer vmap only
                arr = np.stack(vals[::B2], 0)
            else:
                rows = [np.stack(vals[r * B2 : (r + 1) * B2], di) for r in range(B1)]
                arr = np.stack(rows, 0)
            i, j = p
            if j is None:
                args[i], in_o[i], in_i[i] = arr, 0, di
            else:
                sub = list(args[i])
                sub[j] = arr
                args[i] = sub
                lo = in_o[i] if isinstance(in_o[i], list) else [None] * len(sub)
                li = in_i[i] if isinstance(in_i[i], list) else [None] * len(sub)
                lo[j], li[j] = 0, di
                in_o[i], in_i[i] = lo, li
        args = to_nt(tuple(args))
        got = nt.vmap(nt.vmap(fn, in_dims=tuple(in_i)), in_dims=tuple(in_o))(*args)
        rows = []
        for r in range(B1):
            outer = _slice(args, tuple(in_o), r)
            rows.append(_stack([fn(*_slice(outer, tuple(in_i), c)) for c in range(B2)]))
        _check(got, _stack(rows), f"{op.name} nested {in_o} {in_i} {group[0]}", dtype)


@pytest.mark.parametrize("op", [pytest.param(op, id=op.name) for op in SWEEP if not op.composite])
def test_vmap_fallback_matches_rule(op):
    """The slow path (loop and stack) for every primitive, with the rule bypassed (a
    composite runs the rules of the ops it is written with)."""
    dtype = _dtype(op)
    group = next(iter(_variants(op, dtype, 2)))
    fn = _fn(op, to_nt(group[0].kwargs))
    paths = _paths(group[0].args)
    fixed = _fixed(op, paths)
    dims = tuple(None if k in fixed else 0 for k in range(len(paths)))
    args, in_dims = _build(group, paths, dims, to_nt)
    rule, op.batch_rule = op.batch_rule, None
    try:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            from numtorch.func import _batched

            _batched._warned.discard(op.name)
            slow = nt.vmap(fn, in_dims=in_dims)(*args)
        assert any("performance drop" in str(x.message) and op.name in str(x.message) for x in w)
    finally:
        op.batch_rule = rule
    _check(slow, nt.vmap(fn, in_dims=in_dims)(*args), f"{op.name} fallback", dtype)


GRAD = [op for op in SWEEP if op.ndiff and not op.test.no_grad_test]


@pytest.mark.parametrize("op", [pytest.param(op, id=op.name) for op in GRAD])
def test_vmap_over_backward_matches_loop(op, no_fallback):
    """is_grads_batched: every vjp formula runs once on a batch of cotangents."""
    rng = np.random.default_rng(0)
    for s in samples(op, "float64"):
        args = to_nt(s.args)
        ins = [
            _get(args, p).requires_grad_(True)
            for p in _paths(s.args)
            if _get(s.args, p).dtype.kind in "fc" and (op.grad_args is None or p[0] in op.grad_args)
        ]
        if not ins:
            continue
        out = resolve(nt, op.api)(*args, **to_nt(s.kwargs))
        outs = [o for o in tensor_leaves(out, nt.Tensor) if o.requires_grad]
        if not outs:
            continue
        vs = [nt.tensor(normal(rng, (3, *o.shape), o.dtype)) for o in outs]
        got = nt.autograd.grad(
            outs, ins, vs, retain_graph=True, allow_unused=True, is_grads_batched=True
        )
        for b in range(3):
            want = nt.autograd.grad(
                outs, ins, [v[b] for v in vs], retain_graph=True, allow_unused=True
            )
            for g, w in zip(got, want):
                assert (g is None) == (w is None), op.name
                if g is not None:
                    np.testing.assert_allclose(
                        as_numpy(g[b]), as_numpy(w), rtol=1e-9, atol=1e-11, err_msg=f"{op.name} {s}"
                    )


@pytest.mark.parametrize("op", [pytest.param(op, id=op.name) for op in DYNAMIC])
def test_dynamic_shape_ops_raise(op):
    group = next(iter(_variants(op, _dtype(op), 2)))
    paths = _paths(group[0].args)
    args, in_dims = _build(group, paths, (0,) * len(paths), to_nt)
    with pytest.raises(RuntimeError, match="vmap: "):
        nt.vmap(_fn(op, to_nt(group[0].kwargs)), in_dims=in_dims)(*args)


def test_every_registered_op_has_a_batch_rule():
    from numtorch._core.op import REGISTRY

    missing = [op.name for op in REGISTRY.values() if op.batch_rule is None and not op.composite]
    assert missing == []


def test_to_device_under_vmap_keeps_the_batch(no_fallback):
    x = nt.tensor(np.arange(6.0).reshape(2, 3))
    from numtorch._core.op import REGISTRY

    op = REGISTRY["to_device"]
    out = nt.vmap(lambda v: op.fn(v, nt.device("cpu")) * 2, in_dims=1)(x)
    np.testing.assert_array_equal(out.numpy(), np.arange(6.0).reshape(2, 3).T * 2)


def _differentiable(a) -> bool:
    if isinstance(a, (list, tuple)):
        return any(_differentiable(x) for x in a)
    return isinstance(a, nt.Tensor) and inexact(a)


def _run_vjps(op, args, attrs, result, g):
    """The vjp formula of every floating tensor input (None for the others)."""
    from numtorch._core.op import formula_env

    env = formula_env(op, args, attrs, result, {n for names in op.vjp_args for n in names})
    env["g"] = g  # the cotangent, even where an input is called g
    return [
        f(**{k: env[k] for k in names}) if f is not None and _differentiable(a) else None
        for f, names, a in zip(op.vjps, op.vjp_args, args)
    ]


def _wrap_all(T, x):
    if isinstance(x, nt.Tensor):
        return T.wrap(x)
    if isinstance(x, (list, tuple)):
        return type(x)(_wrap_all(T, v) for v in x)
    return x


@pytest.mark.parametrize(
    "op", [pytest.param(op, id=op.name) for op in GRAD if not op.test.vmap_unbatched]
)
def test_vjp_formulas_run_on_batched_primals(op, no_fallback):
    """Every vjp formula with batched inputs, results and cotangents (what vmap over a
    gradient transform runs): no data-dependent control flow, no fallback, loop's values."""
    from numtorch._opdb.trace import TraceInterpreter

    B = 2
    for group in _variants(op, "float64", B):
        calls = []
        for s in group:  # the op's own call (attrs bound) on each variant
            with TraceInterpreter() as T:  # every tensor wrapped, so the op reaches the trace
                args = _wrap_all(T, to_nt(s.args))
                resolve(nt, op.api)(*args, **to_nt(s.kwargs))
            own = [c for c in T.calls if c[0] is op]
            if not own:
                break
            calls.append(own[0])
        if len(calls) < B:
            continue
        if any(t.dtype == nt.bool for t in tensor_leaves(calls[0][1], nt.Tensor)):
            continue  # a batched boolean mask selects a data-dependent count (a vmap error)
        if op.name == "repeat_interleave" and isinstance(calls[0][1][1], nt.Tensor):
            continue  # batched repeats: see test_repeat_interleave_vjp_with_batched_repeats
        outs = [c[3] for c in calls]
        shapes = {tuple(tuple(o.shape) for o in tensor_leaves(out, nt.Tensor)) for out in outs}
        diff = tensor_leaves(outs[0], nt.Tensor)[: op.ndiff or 1]
        if len(shapes) > 1 or not diff or not all(inexact(o) for o in diff):
            continue  # data-dependent output shapes are not stackable
        rng = np.random.default_rng(3)
        gs = [
            tuple(
                nt.tensor(normal(rng, o.shape, o.dtype))
                for o in tensor_leaves(out, nt.Tensor)[: op.ndiff]
            )
            for out in outs
        ]
        g_arg = [g[0] if op.ndiff == 1 else g for g in gs]
        want = [_run_vjps(op, c[1], c[2], c[3], g) for c, g in zip(calls, g_arg)]
        live = [k for k, w in enumerate(want[0]) if w is not None]
        ins = [c[1] for c in calls]
        in_dims = tuple(_dims_of(x) for x in ins[0])

        def formulas(a, r, g):
            res = _run_vjps(op, a, calls[0][2], r, g)
            return tuple(res[k] for k in live)

        got = nt.vmap(formulas, in_dims=(in_dims, 0, 0))(
            tuple(_stack_tree([x[i] for x in ins]) for i in range(len(ins[0]))),
            _stack_tree(outs),
            _stack_tree(g_arg),
        )
        for k, gk in zip(live, got):
            _check(
                gk, _stack_tree([w[k] for w in want]), f"{op.name} vjp[{k}] {group[0]}", "float64"
            )


def _dims_of(x):
    if isinstance(x, nt.Tensor):
        return 0
    if isinstance(x, (list, tuple)):
        return type(x)(_dims_of(v) for v in x)
    return None


def _stack_tree(xs):
    if isinstance(xs[0], nt.Tensor):
        return nt.stack(xs)
    if isinstance(xs[0], (list, tuple)):
        return type(xs[0])(_stack_tree([x[k] for x in xs]) for k in range(len(xs[0])))
    return xs[0]


def test_repeat_interleave_vjp_with_batched_repeats_raises(no_fallback):
    from numtorch._core.op import REGISTRY

    vjp = REGISTRY["repeat_interleave"].vjps[0]
    reps = nt.tensor([[1, 2], [2, 1]])
    with pytest.raises(RuntimeError, match="^vmap: repeat_interleave's gradient needs"):
        nt.vmap(lambda r: vjp(g=nt.ones(3), input_shape=(2,), repeats=r, dim=0))(reps)


# bincount under vmap: PyTorch's loop stacks each sample's bincount, so it gives a result
# where every sample's length is the same (minlength, or equal maxima) and its stack error
# where not; numtorch's rule is one bincount over offset values.
BINCOUNT_VMAP = {
    "equal_maxima": lambda T, x, w: T.vmap(T.bincount)(x[:, :2] * 0 + x[:, :1]),
    "minlength": lambda T, x, w: T.vmap(lambda a: T.bincount(a, minlength=6))(x),
    "weights": lambda T, x, w: T.vmap(lambda a, b: T.bincount(a, b, minlength=6))(x, w),
    "weights_float32": lambda T, x, w: T.vmap(lambda a, b: T.bincount(a, b, minlength=6))(
        x, w.float()
    ),
    "weights_unbatched": lambda T, x, w: T.vmap(
        lambda a, b: T.bincount(a, b, minlength=6), in_dims=(0, None)
    )(x, w[0]),
    "input_unbatched": lambda T, x, w: T.vmap(T.bincount, in_dims=(None, 0))(x[0], w),
    "last_dim": lambda T, x, w: T.vmap(lambda a: T.bincount(a, minlength=6), in_dims=1)(x.T),
    "nested": lambda T, x, w: T.vmap(T.vmap(lambda a: T.bincount(a, minlength=6)))(
        x[None].expand(2, 3, 4)
    ),
    "empty": lambda T, x, w: T.vmap(lambda a: T.bincount(a, minlength=2))(x[:, :0]),
    "lengths_differ": lambda T, x, w: T.vmap(T.bincount)(x),
    "lengths_differ_nested": lambda T, x, w: T.vmap(T.vmap(T.bincount))(x[None]),
    "negative": lambda T, x, w: T.vmap(lambda a: T.bincount(a, minlength=9))(x - 3),
    "two_dims": lambda T, x, w: T.vmap(T.bincount)(x[:, None]),
    "bad_minlength": lambda T, x, w: T.vmap(lambda a: T.bincount(a, minlength=-1))(x),
    "bad_weights": lambda T, x, w: T.vmap(T.bincount)(x, w[:, :2]),
    "float_input": lambda T, x, w: T.vmap(T.bincount)(x.double()),
}


@pytest.mark.parametrize("prog", list(BINCOUNT_VMAP.values()), ids=list(BINCOUNT_VMAP))
def test_bincount_under_vmap(prog, no_fallback):
    x = np.array([[1, 3, 3, 0], [0, 5, 2, 2], [4, 1, 1, 1]])
    w = np.arange(12.0).reshape(3, 4) - 4
    assert_same_outcome(prog, x, w)
