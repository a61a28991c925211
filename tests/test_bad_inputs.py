"""The bad-input sweep (issue 14, item 2): bad calls derived from every op's valid samples,
run on numtorch and on PyTorch. Where PyTorch raises, numtorch raises the same exception
type and text, before any input is modified (values, ``.grad`` and version counter are
compared before and after); where PyTorch returns, both return the same.

The calls are generated, not written case by case: each kind of bad input (``KINDS``) is a
function of an op and one of its samples that yields the derived cases; a kind applies to
every op whose sample has what it mutates (a dim argument, a second tensor, an in-place
method, a float input that needs a gradient, ...). Cases are deterministic: the op's first
samples in float64 (or its first dtype), derived values from a fixed seed.
"""

from __future__ import annotations

import fnmatch
import inspect
import itertools
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import pytest
import torch
from opdb import ops_with_samples, resolve
from twolibs import (
    Raised,
    assert_close,
    assert_same,
    assert_same_error,
    assert_same_outcome,
)

import numtorch as nt
from numtorch._opdb.samples import Maker

DIM_NAMES = ("dim", "dim0", "dim1", "dims", "start_dim", "end_dim", "source", "destination")
DIM_NAMES += ("axis", "axis0", "axis1", "dimension")
SIZE_NAMES = ("size", "shape", "sizes")
SAMPLES_PER_OP = 4  # how far into an op's samples a kind looks for one it applies to


# ------------------------------------------------------------------ a case
@dataclass
class Case:
    """One bad call. ``build(lib)`` makes the inputs in ``lib`` and returns (the tensors
    to watch, a thunk that makes the call); run it on both libraries and compare."""

    id: str
    build: Callable
    rtol: float = 1e-7
    atol: float = 1e-9


def _tensor(lib, a, requires_grad=False):
    t = lib.tensor(a.copy())
    if requires_grad:
        t.requires_grad_(True)
    return t


def _conv(lib, x, grad_at=None, path=()):
    """A sample argument in ``lib``: arrays become tensors (requiring grad where their path
    is in ``grad_at``), dtypes become lib's, containers are walked."""
    if isinstance(x, np.ndarray):
        return _tensor(lib, x, grad_at is not None and path in grad_at)
    if isinstance(x, (list, tuple)):
        return type(x)(_conv(lib, v, grad_at, (*path, i)) for i, v in enumerate(x))
    if isinstance(x, dict):
        return {k: _conv(lib, v, grad_at, (*path, k)) for k, v in x.items()}
    if isinstance(x, nt.dtype):
        return getattr(lib, x.name)
    return x


def _watched(x) -> list:
    if isinstance(x, (nt.Tensor, torch.Tensor)):
        return [x]
    if isinstance(x, (list, tuple)):
        return [t for v in x for t in _watched(v)]
    if isinstance(x, dict):
        return _watched(list(x.values()))
    return []


def _snap(t):
    """What a failed call must leave alone: a tensor's values, its .grad, its version."""
    grad = t.grad
    return (
        np.array(t.detach().numpy(), copy=True),
        None if grad is None else np.array(grad.detach().numpy(), copy=True),
        t._version,
    )


def _same_snap(a, b) -> bool:
    (va, ga, na), (vb, gb, nb) = a, b
    return (
        na == nb
        and np.array_equal(va, vb, equal_nan=va.dtype.kind in "fc")
        and (ga is None) == (gb is None)
        and (ga is None or np.array_equal(ga, gb, equal_nan=True))
    )


def _outcome(case: Case, lib):
    """(result or Raised, the watched tensors' snapshots before, and after the call)."""
    watched, thunk = case.build(lib)
    before = [_snap(t) for t in watched]
    try:
        res = thunk()
    except Exception as e:  # noqa: BLE001 - the type and text are what is compared
        res = Raised(type(e), str(e))
    return res, before, [_snap(t) for t in watched]


def _type_name(t: type) -> str:
    return t.__name__.lstrip("_")  # torch's _LinAlgError is numtorch's LinAlgError


# PyTorch's own gaps (numtorch does more): such a case says nothing about bad input
TORCH_GAPS = (
    "Batching rule not implemented",
    "vmap: we do not yet support",
    "We could not generate a fallback",
    "Cannot access data pointer of Tensor that doesn't have storage",
)


def check(case: Case) -> None:
    try:
        want, _, _ = _outcome(case, torch)
    except Exception as e:  # noqa: BLE001 - a derived call PyTorch cannot even set up
        pytest.skip(f"the setup fails in torch: {e!r}")
    if isinstance(want, Raised) and any(gap in want.text for gap in TORCH_GAPS):
        pytest.skip(f"a gap of PyTorch's: {want.text}")
    got, before, after = _outcome(case, nt)
    if isinstance(want, Raised):
        assert isinstance(got, Raised), f"numtorch raised nothing; torch raised {want}"
        assert _type_name(got.type) == _type_name(want.type) and got.text == want.text, (
            f"\nnumtorch raised {got}\n   torch raised {want}"
        )
        for i, (b, a) in enumerate(zip(before, after)):
            assert _same_snap(b, a), f"input {i} was modified by the failed call"
    else:
        assert not isinstance(got, Raised), f"torch returned; numtorch raised {got}"
        assert_close(got, want, rtol=case.rtol, atol=case.atol)


# ------------------------------------------------------------------ samples, bound
def _dtype(op) -> str:
    return "float64" if "float64" in op.test.dtypes else op.test.dtypes[0]


def _bound(op, fn, s):
    try:
        return inspect.signature(fn).bind(*s.args, **s.kwargs)
    except (TypeError, ValueError):
        return None


def _fn(lib, op):
    """The op's public function in ``lib``: torch's of the same name where it has one (an
    op's oracle may stand in for a torch function whose gradient the op tests cannot read,
    as torch.sign for sgn), else the oracle."""
    if lib is not torch:
        return resolve(lib, op.api)
    try:
        return resolve(torch, op.api)
    except AttributeError:
        return resolve(torch, op.oracle or op.api)


def _call(lib, op, args, kwargs, grad_at=None):
    """Build (watched tensors, thunk) for ``op`` called with sample-level args/kwargs."""
    fn = _fn(lib, op)
    a = _conv(lib, tuple(args), grad_at)
    k = _conv(lib, dict(kwargs))
    return _watched((a, k)), lambda: fn(*a, **k)


def _arrays(args) -> list[tuple[int, np.ndarray]]:
    return [(i, a) for i, a in enumerate(args) if isinstance(a, np.ndarray)]


def _floats(args) -> list[tuple[int, np.ndarray]]:
    return [(i, a) for i, a in _arrays(args) if a.dtype.kind == "f"]


def _replace(args, i, value) -> tuple:
    return (*args[:i], value, *args[i + 1 :])


def _ndim(args) -> int | None:
    """The ndim a dim argument of the call refers to (the first tensor's, or the first
    tensor in a list of tensors)."""
    for a in args:
        if isinstance(a, np.ndarray):
            return a.ndim
        if isinstance(a, (list, tuple)) and a and isinstance(a[0], np.ndarray):
            return a[0].ndim
    return None


def _like(a: np.ndarray, shape) -> np.ndarray:
    """An array of a's dtype and the given shape with valid values (indices: zeros)."""
    if a.dtype.kind in "iub":
        return np.zeros(shape, a.dtype)
    return Maker(a.dtype, seed=1)(shape).astype(a.dtype)


# ------------------------------------------------------------------ the kinds
def _mutate(b, name, value):
    b = b.signature.bind(*b.args, **b.kwargs)
    b.arguments[name] = value
    return b.args, b.kwargs


def derive(op, every: bool = True) -> Iterator[Case]:
    """Every bad call derived from op's samples, each kind at most once per op (its first
    sample it applies to). ``every``: also the kinds whose check does not depend on the op
    (autograd misuse but backward twice, vmap's in_dims/out_dims), else only backward twice
    of those."""
    fn = resolve(nt, op.api)
    dtype = _dtype(op)
    ss = list(op.samples(Maker(dtype, 0)))[:SAMPLES_PER_OP]
    done: set[str] = set()

    def once(tag) -> bool:
        if tag in done:
            return False
        done.add(tag)
        return True

    for s in ss:
        b = _bound(op, fn, s)
        args, kwargs = tuple(s.args), dict(s.kwargs)
        # out-of-range dims
        if b is not None:
            for tag, bad in _dim_mutations(b):
                if once(tag):
                    a, k = _mutate(b, tag.split("=")[0].split("[")[0], bad)
                    yield _plain(op, tag, a, k)
        # sizes that do not fit: a shape argument with one more element than it can hold,
        # a negative size
        if b is not None:
            for name in SIZE_NAMES:
                v = b.arguments.get(name)
                if isinstance(v, (tuple, list)) and v and all(isinstance(d, int) for d in v):
                    n = int(np.prod([d for d in v if d > 0] or [1]))
                    for tag, bad in ((f"{name}+1", (n + 1,)), (f"{name}-neg", (-2, *v[1:]))):
                        if once(tag):
                            a, k = _mutate(b, name, type(v)(bad))
                            yield _plain(op, tag, a, k)
        # floats where ints are expected (a dim, a size), a dtype given by its name (issue
        # 35): PyTorch's parser refuses them, in the function and in the method
        if b is not None:
            for tag, name, bad in _type_mutations(b):
                if once(tag):
                    a, k = _mutate(b, name, bad)
                    yield _plain(op, tag, a, k)
                    if _has_method(op, a):
                        yield _method(op, tag, a, k)
        arrs = _arrays(args)
        # a second tensor whose shape does not broadcast against the first
        if len(arrs) >= 2 and once("broadcast"):
            (_, x), (j, y) = arrs[0], arrs[1]
            shape = list(y.shape) or [1]
            shape[-1] = (x.shape[-1] if x.ndim else shape[-1]) + 2
            yield _plain(op, "broadcast", _replace(args, j, _like(y, tuple(shape))), kwargs)
        # wrong dtypes: the first float tensor as bool, int64, complex; an index as float
        fl = _floats(args)
        if fl and once("dtype"):
            i, x = fl[0]
            for name, conv in (
                ("bool", lambda x: x > 0),
                ("int64", lambda x: np.round(x * 3).astype(np.int64)),
                ("complex128", lambda x: x.astype(np.complex128) * (1 + 0.5j)),
            ):
                bad = np.asarray(conv(x))
                # results in float32 (bool and int inputs compute in the default dtype)
                yield _plain(op, f"dtype-{name}", _replace(args, i, bad), kwargs, 1e-5, 1e-6)
        ints = [(i, a) for i, a in arrs if a.dtype.kind in "iu"]
        if ints and once("index"):
            i, x = ints[0]
            yield _plain(op, "index-float", _replace(args, i, x.astype(np.float64)), kwargs)
            yield _plain(op, "index-int32", _replace(args, i, x.astype(np.int32)), kwargs)
            for v in (1000, -1000) if x.size else ():
                big = x.copy()  # one array per case: a case builds its inputs when it runs
                big.flat[0] = v
                yield _plain(op, f"index-{v}", _replace(args, i, big), kwargs)
        # NaN and inf in the first float input
        if fl and fl[0][1].size >= 2 and once("nonfinite"):
            i, x = fl[0]
            y = x.copy()
            y.flat[0], y.flat[-1] = np.nan, np.inf
            yield _plain(op, "nan-inf", _replace(args, i, y), kwargs, rtol=1e-5, atol=1e-7)
        # in-place: on a leaf that requires grad (or a view of one), changing self's dtype
        # or its shape
        for m in INPLACE.get(op.name, ()):
            if not arrs or arrs[0][0] != 0 or not hasattr(torch.Tensor, m):
                continue
            x = args[0]
            if x.dtype.kind == "f" and once(f"{m}-leaf"):
                yield _inplace(op, m, "leaf", args, kwargs, lambda t: t)
                yield _inplace(op, m, "leaf-view", args, kwargs, lambda t: t[...])
            if x.dtype.kind == "f" and once(f"{m}-int-self"):
                yield _inplace(op, m, "int-self", _replace(args, 0, x.astype(np.int64)), kwargs)
                yield _inplace(op, m, "bool-self", _replace(args, 0, np.asarray(x > 0)), kwargs)
            if len(arrs) >= 2 and x.ndim and x.shape[-1] > 1 and once(f"{m}-shape"):
                small = np.ascontiguousarray(x[..., :1])
                yield _inplace(op, m, "small-self", _replace(args, 0, small), kwargs)
        # autograd misuse: backward twice, a non-scalar output without a gradient
        if fl and op.ndiff and not op.random and not op.test.no_grad_test and once("autograd"):
            yield from _autograd_cases(op, args, kwargs, fl, every)
        # vmap with bad in_dims / out_dims
        if every and arrs and arrs[0][0] == 0 and once("vmap"):
            yield from _vmap_cases(op, args, kwargs, arrs)


def _dim_mutations(b):
    nd = _ndim(b.args)
    if nd is None:
        return
    rank = max(nd, 1)
    for name in DIM_NAMES:
        v = b.arguments.get(name)
        for bad in (rank, -rank - 1):
            if isinstance(v, int) and not isinstance(v, bool):
                yield f"{name}={bad}", bad
            elif isinstance(v, (tuple, list)) and v and all(isinstance(d, int) for d in v):
                yield f"{name}[0]={bad}", type(v)((bad, *v[1:]))


def _type_mutations(b):
    """(tag, argument, bad value): a dim or a size as a float (a lone one, or the first or
    last item of a list of them), a dtype by its name."""
    for name in DIM_NAMES + SIZE_NAMES:
        v = b.arguments.get(name)
        if isinstance(v, int) and not isinstance(v, bool):
            yield f"{name}-float", name, float(v)
        elif isinstance(v, (tuple, list)) and v and all(type(d) is int for d in v):
            yield f"{name}[0]-float", name, type(v)((float(v[0]), *v[1:]))
            if len(v) > 1:
                yield f"{name}[-1]-float", name, type(v)((*v[:-1], float(v[-1])))
    d = b.arguments.get("dtype")
    if isinstance(d, nt.dtype):
        yield "dtype-str", "dtype", d.name


def _has_method(op, args) -> bool:
    """Whether op's function has a Tensor method of its name (in both libraries) that the
    call's first argument, a tensor, can make."""
    owner, _, name = op.api.rpartition(".")
    return (
        owner in ("", "Tensor")
        and bool(args)
        and isinstance(args[0], np.ndarray)
        and hasattr(torch.Tensor, name)
        and hasattr(nt.Tensor, name)
    )


def _method(op, tag, args, kwargs) -> Case:
    """The call as the Tensor method of op's name, on its first argument."""

    def build(lib):
        name = op.api.rpartition(".")[2]
        a = _conv(lib, tuple(args))
        k = _conv(lib, dict(kwargs))
        return _watched((a, k)), lambda: getattr(a[0], name)(*a[1:], **k)

    return Case(f"{op.name}:{tag}:method", build)


def _plain(op, tag, args, kwargs, rtol=1e-7, atol=1e-9) -> Case:
    return Case(f"{op.name}:{tag}", lambda lib: _call(lib, op, args, kwargs), rtol, atol)


def _inplace(op, m, tag, args, kwargs, view=None) -> Case:
    leaf = view is not None

    def build(lib):
        a = _conv(lib, tuple(args), {(0,)} if leaf else None)
        k = _conv(lib, dict(kwargs))
        self = view(a[0]) if leaf else a[0]
        return _watched((a, k)), lambda: getattr(self, m)(*a[1:], **k)

    return Case(f"{op.name}:{m}:{tag}", build)


def _autograd_cases(op, args, kwargs, fl, every) -> Iterator[Case]:
    grad_at = {(i,) for i, _ in fl}

    def graph(lib):
        fn = _fn(lib, op)
        a = _conv(lib, tuple(args), grad_at)
        k = _conv(lib, dict(kwargs))
        out = fn(*a, **k)
        outs = [o for o in _watched(out) if o.requires_grad]
        return a, outs

    def twice(lib):
        a, outs = graph(lib)
        if not outs:
            return [], lambda: None
        total = sum(o.sum() for o in outs)
        total.backward()
        return _watched(a), lambda: (total.backward(), [t.grad for t in _watched(a)])

    def non_scalar(lib):
        a, outs = graph(lib)
        outs = [o for o in outs if o.numel() != 1]
        return _watched(a), lambda: [o.backward() for o in outs]

    def grad_non_scalar(lib):
        a, outs = graph(lib)
        outs = [o for o in outs if o.numel() != 1]
        leaves = [t for t in _watched(a) if t.requires_grad]
        return _watched(a), lambda: [lib.autograd.grad(o, leaves) for o in outs]

    def unused(lib):
        a, outs = graph(lib)
        extra = lib.ones(2, dtype=lib.float64, requires_grad=True)
        return [*_watched(a), extra], lambda: lib.autograd.grad([o.sum() for o in outs], [extra])

    def func_grad(lib):
        fn = _fn(lib, op)
        a = _conv(lib, tuple(args))
        k = _conv(lib, dict(kwargs))
        i = fl[0][0]

        def f(x):
            return fn(*_replace(a, i, x), **k)

        return _watched(a), lambda: lib.func.grad(f)(a[i])

    def bad_grad(lib):  # a gradient of another shape than the output's
        a, outs = graph(lib)
        return _watched(a), lambda: [o.backward(lib.ones(o.numel() + 1)) for o in outs]

    def func_call(lib):
        fn = _fn(lib, op)
        a = _conv(lib, tuple(args))
        k = _conv(lib, dict(kwargs))
        i = fl[0][0]

        def f(x):
            out = fn(*_replace(a, i, x), **k)
            return out if isinstance(out, lib.Tensor) else out[0]

        return a, i, f

    def vjp_bad(lib):
        a, i, f = func_call(lib)

        def run():
            out, pull = lib.func.vjp(f, a[i])
            return pull(lib.ones(out.numel() + 1, dtype=out.dtype))

        return _watched(a), run

    def jvp_bad(lib):
        a, i, f = func_call(lib)
        return _watched(a), lambda: lib.func.jvp(f, (a[i],), (lib.ones(a[i].numel() + 1),))

    yield Case(f"{op.name}:backward-twice", twice, 1e-7, 1e-9)  # what a node saves
    if not every:
        return
    yield Case(f"{op.name}:backward-bad-grad-shape", bad_grad)
    yield Case(f"{op.name}:func.vjp-bad-cotangent", vjp_bad)
    yield Case(f"{op.name}:func.jvp-bad-tangent", jvp_bad)
    yield Case(f"{op.name}:backward-non-scalar", non_scalar, 1e-7, 1e-9)
    yield Case(f"{op.name}:grad-non-scalar", grad_non_scalar, 1e-7, 1e-9)
    yield Case(f"{op.name}:grad-unused", unused, 1e-7, 1e-9)
    yield Case(f"{op.name}:func.grad-non-scalar", func_grad, 1e-7, 1e-9)


def _vmap_cases(op, args, kwargs, arrs) -> Iterator[Case]:
    x = args[0]
    nd = x.ndim

    def batched(a, n=2):
        return np.stack([a] * n)

    def build_with(in_dims, bargs, out_dims=0):
        def build(lib):
            fn = _fn(lib, op)
            a = _conv(lib, tuple(bargs))
            k = _conv(lib, dict(kwargs))

            def f(*xs):
                return fn(*xs, **k)

            return _watched(a), lambda: lib.func.vmap(f, in_dims=in_dims, out_dims=out_dims)(*a)

        return build

    none = (None,) * (len(args) - 1)
    b0 = _replace(args, 0, batched(x))
    yield Case(f"{op.name}:vmap-in_dims={nd + 1}", build_with((nd + 1, *none), b0))
    yield Case(f"{op.name}:vmap-in_dims={-nd - 2}", build_with((-nd - 2, *none), b0))
    yield Case(f"{op.name}:vmap-in_dims-short", build_with((0,) * (len(args) + 1), b0))
    yield Case(f"{op.name}:vmap-in_dims-list", build_with([0, *none], b0))
    yield Case(f"{op.name}:vmap-out_dims=9", build_with((0, *none), b0, out_dims=9))
    yield Case(f"{op.name}:vmap-all-none", build_with((None, *none), args))
    if len(arrs) >= 2:
        j = arrs[1][0]
        mixed = _replace(b0, j, batched(args[j], 3))
        dims = tuple(0 if i in (0, j) else None for i in range(len(args)))
        yield Case(f"{op.name}:vmap-batch-sizes", build_with(dims, mixed))
    scalars = [i for i, a in enumerate(args) if isinstance(a, (int, float)) and i]
    if scalars:
        dims = tuple(0 if i in (0, scalars[0]) else None for i in range(len(args)))
        yield Case(f"{op.name}:vmap-in_dim-of-number", build_with(dims, b0))


# ------------------------------------------------------------------ factories
FACTORIES: dict[str, Callable] = {
    "zeros": lambda T, s: T.zeros(s),
    "ones": lambda T, s: T.ones(s),
    "empty": lambda T, s: T.empty(s),
    "full": lambda T, s: T.full(s, 1.5),
    "rand": lambda T, s: T.rand(s),
    "randn": lambda T, s: T.randn(s),
    "randint": lambda T, s: T.randint(0, 3, s),
    "new_zeros": lambda T, s: T.ones(1).new_zeros(s),
    "new_ones": lambda T, s: T.ones(1).new_ones(s),
    "new_empty": lambda T, s: T.ones(1).new_empty(s),
    "new_full": lambda T, s: T.ones(1).new_full(s, 2.0),
    "zeros_int": lambda T, s: T.zeros(s, dtype=T.int64),
    "ones_bool": lambda T, s: T.ones(s, dtype=T.bool),
    "reshape": lambda T, s: T.ones(6).reshape(s),
    "view": lambda T, s: T.ones(6).view(s),
    "expand": lambda T, s: T.ones(1).expand(s),
    "repeat": lambda T, s: T.ones(1).repeat(s),
}
BAD_SIZES = {
    "2**62": (2**62,),
    "2**40x2**40": (2**40, 2**40),
    "10**12": (10**12,),
    "neg": (-1,),
    "neg2": (2, -3),
}


def _factory_case(name, size_name) -> Case:
    fn, size = FACTORIES[name], BAD_SIZES[size_name]

    def build(lib):
        return [], lambda: _meta(fn(lib, size))  # an expanded result is too large to compare

    return Case(f"factory:{name}:{size_name}", build)


def _meta(t) -> tuple:
    return tuple(t.shape), str(t.dtype).split(".")[-1]


# ------------------------------------------------------------------ the table
INPLACE: dict[str, list[str]] = {}
for _m, _f in sorted(vars(nt.Tensor).items()):
    if getattr(_f, "inplace_of", None) is not None:
        INPLACE.setdefault(_f.inplace_of.name, []).append(_m)

OPS = [op for op in ops_with_samples() if not op.test.no_oracle]
# The op-independent kinds (the engine's and vmap's own checks) run on one op in EVERY,
# picked by a hash of its name (so adding an op does not move the others).
EVERY = 5


def _all_cases() -> list[Case]:
    cases = [_factory_case(f, s) for f, s in itertools.product(FACTORIES, BAD_SIZES)]
    for op in OPS:
        cases.extend(derive(op, every=zlib.crc32(op.name.encode()) % EVERY == 0))
    seen: set[str] = set()
    out = []
    for c in cases:
        if c.id not in seen:
            seen.add(c.id)
            out.append(c)
    return out


CASES = _all_cases()


def _match(table: dict[str, str], case_id: str) -> str | None:
    return next((why for pat, why in table.items() if fnmatch.fnmatchcase(case_id, pat)), None)


# Cases another change owns (dropped from here when it lands): case-id pattern -> why.
KNOWN: dict[str, str] = {}


# What still differs from PyTorch and is not fixed yet: case id -> why (PyTorch's behaviour
# and numtorch's, as the sweep found them).
def _each(why: str, ids: str) -> dict[str, str]:
    return dict.fromkeys(ids.split(), why)


DIFFERS: dict[str, str] = {
    **_each(
        "PyTorch's CPU linalg.eigvals hands NaN and inf to MKL's geev, whose result is "
        "unspecified (MKL reports a DGEBAL parameter error and returns what balancing left); "
        "numtorch returns NaN for such a matrix",
        "linalg_eigvals:nan-inf",
    ),
    **_each(
        "PyTorch's CPU linalg.lstsq (gelsy in MKL) stops on NaN or inf with an internal "
        "assert (an illegal argument of the LAPACK call); numtorch returns a NaN solution",
        "linalg_lstsq:nan-inf",
    ),
    **_each(
        "PyTorch's LU (MKL's getrf/getrs/getri) spreads a NaN or inf of A over the whole "
        "solution or inverse; numtorch's solve and inverse (NumPy's LAPACK) leave the entries "
        "it does not reach finite, as linalg.solve and linalg.inv themselves do",
        "linalg_tensorinv:nan-inf linalg_tensorsolve:nan-inf",
    ),
    **_each(
        "PyTorch's geqrf (MKL) keeps the entries a NaN or inf has not reached yet; the "
        "geqrf of the LAPACK SciPy ships spreads it over the whole factor",
        "geqrf:nan-inf",
    ),
    **_each(
        "PyTorch's sytrf (MKL) picks its Bunch-Kaufman pivots past a NaN differently from "
        "the sytrf of the LAPACK SciPy ships, so the factor (and the first zero block "
        "ldl_factor reports) differ once the matrix holds NaN or inf",
        "linalg_ldl_factor_ex:nan-inf linalg_ldl_factor:nan-inf",
    ),
    **_each(
        "MKL's zgeev (PyTorch's CPU build) and the LAPACK SciPy ships may return the "
        "eigenvalues of this complex sample in another order; each set is the same",
        "linalg_eigvals:dtype-complex128",
    ),
    **_each(
        "PyTorch's CPU mode sorts each slice by `<`, which leaves NaN's place unspecified "
        "(mode([nan, 1, nan]) is nan at index 0); numtorch sorts NaN last, each NaN a run of "
        "its own (1 at index 1)",
        "mode:nan-inf",
    ),
    **_each(
        "PyTorch's CPU _log_softmax_backward_data checks no sizes (it reads output as if it "
        "had grad's shape); numtorch raises the broadcast error",
        "_log_softmax_backward_data:broadcast",
    ),
    **_each(
        "NumPy cannot make a view spanning more than int64 bytes; PyTorch returns the "
        "stride-0 view",
        "factory:expand:2**62",
    ),
    **_each(
        "PyTorch's logical_*_ has no autograd formula: no leaf check, and gradients pass "
        "through the write as if it were not there (issue 14 lists that as wrong); numtorch "
        "records the write, so the leaf check applies",
        "logical_not:logical_not_:leaf logical_not:logical_not_:leaf-view",
    ),
    **_each(
        "PyTorch's solve_triangular casts B to A's dtype (a complex B into a real A loses its "
        "imaginary part, with a warning); numtorch refuses mixed dtypes, as linalg.solve",
        "linalg_solve_triangular:dtype-complex128",
    ),
    **_each(
        "the values of a matrix that fails are unspecified (PyTorch's docs): LAPACK leaves "
        "a half-finished factorization there, numtorch NaN",
        "linalg_inv_ex:nan-inf linalg_cholesky_ex:nan-inf solve_ex:nan-inf",
    ),
    **_each(
        "PyTorch's text wraps infer_size's error with its C++ source path",
        "unflatten:sizes-neg",
    ),
    **_each(
        "PyTorch's CPU take_along_dim does not bound-check (it reads out of range); numtorch "
        "raises",
        "take_along_dim:index-1000 take_along_dim:index--1000",
    ),
    **_each(
        "PyTorch's vmap runs argwhere through its slow per-sample fallback, which works when "
        "every sample has as many nonzeros (then fails later, here on out_dims); numtorch "
        "refuses the data-dependent shape up front, as PyTorch does for nonzero",
        "argwhere:vmap-out_dims=9",
    ),
    **_each(
        "PyTorch's addbmm_ resizes self to the product's shape where its storage allows "
        "(here it refuses: 'Trying to resize storage that is not resizable'); numtorch "
        "refuses every shape-changing in-place write (the in-place shape text)",
        "addbmm:addbmm_:small-self",
    ),
    **_each(
        "non-finite input to LAPACK: PyTorch's result is NaN throughout, or its eigh's text "
        "names LAPACK's info code (which NumPy does not give); NumPy/SciPy give a partial "
        "result",
        "linalg_solve:nan-inf linalg_inv:nan-inf linalg_slogdet:nan-inf "
        "linalg_qr:nan-inf linalg_eigvalsh:nan-inf inverse:nan-inf",
    ),
    **_each(
        "PyTorch's node saves the input (a second backward raises); numtorch's saves nothing "
        "it does not read",
        "pad:backward-twice avg_pool1d:backward-twice avg_pool2d:backward-twice "
        "avg_pool3d:backward-twice",
    ),
    **_each(
        "NaN rows order differently: PyTorch's row comparison finds a NaN row neither less "
        "nor greater than any, so where it lands depends on its sort (first here); numtorch "
        "orders NaN last",
        "unique_dim:nan-inf",
    ),
    **_each(
        "affine_grid is a product of a constant base grid with theta: its node saves the base "
        "(theta's gradient reads it), where PyTorch's affine_grid_generator saves only sizes, "
        "so a second backward raises here only",
        "affine_grid:backward-twice affine_grid_generator:backward-twice",
    ),
    **_each(
        "composite in numtorch: a node without saved tensors (the bias add) runs and "
        "accumulates .grad before the freed node raises; PyTorch's single node fails first",
        "batch_norm:backward-twice layer_norm:backward-twice group_norm:backward-twice",
    ),
    **_each(
        "composite in numtorch: the first sample's segment sums save no tensor, so a second "
        "backward runs; PyTorch's SegmentReduceBackward0 saves the data and raises",
        "segment_reduce:backward-twice",
    ),
    **_each(
        "PyTorch's affine_grid_generator makes an integer theta's grid from an integer "
        "linspace; numtorch refuses a non-float, non-complex theta as F.affine_grid does",
        "affine_grid_generator:dtype-int64",
    ),
    **_each(
        "PyTorch's CPU native_batch_norm reads weight and bias unchecked (a weight of 5 "
        "elements for 3 channels runs); numtorch checks their sizes as F.batch_norm does",
        "native_batch_norm:broadcast",
    ),
    **_each(
        "PyTorch's group statistics are a running (Welford) mean, which turns a group holding "
        "inf and a later finite value into nan; numtorch's mean is inf there",
        "native_group_norm:nan-inf",
    ),
}


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_bad_input(case: Case) -> None:
    why = _match(KNOWN, case.id) or _match(DIFFERS, case.id)
    if why is None:
        check(case)
        return
    try:
        check(case)
    except AssertionError:
        pytest.xfail(why)
    pytest.fail(f"listed as differing ({why}), but matches PyTorch now: unlist it")


@pytest.mark.parametrize("table", ["KNOWN", "DIFFERS"])
def test_every_listed_pattern_names_a_case(table):
    """A pattern that matches no case (the op renamed, the kind dropped) is stale."""
    ids = [c.id for c in CASES]
    stale = [p for p in globals()[table] if not fnmatch.filter(ids, p)]
    assert not stale, f"{table}: patterns that match no case: {stale}"


# ==================================================================
# Issue 14, "lenient where PyTorch refuses": PyTorch's refusals, before any input is modified.


# ------------------------------------------------------------------ 5. Python numbers where a tensor is needed
_TENSORS_ONLY = [
    "maximum",
    "minimum",
    "fmax",
    "fmin",
    "atan2",
    "hypot",
    "logaddexp",
    "logaddexp2",
    "logical_and",
    "logical_or",
    "logical_xor",
    "isclose",
]
_NUMBER_OTHER = ["fmod", "copysign", "clamp_min", "clamp_max", "eq", "ne", "lt", "le", "gt", "ge"]
_NUMBERS = [2.0, 3, True]


@pytest.mark.parametrize("number", _NUMBERS, ids=repr)
@pytest.mark.parametrize("name", _TENSORS_ONLY)
def test_tensors_only_ops_refuse_numbers(name, number):
    x = lambda lib: lib.tensor([1.5, -2.0])  # noqa: E731
    assert_same_error(lambda lib: getattr(lib, name)(x(lib), number))
    assert_same_error(lambda lib: getattr(lib, name)(number, x(lib)))
    assert_same_error(lambda lib: getattr(x(lib), name)(number))
    assert_same_error(lambda lib: getattr(lib.tensor([1, 2]), name)(number))


@pytest.mark.parametrize(
    "method",
    ["atan2_", "arctan2_", "arctan2", "hypot_", "logical_and_", "logical_or_", "logical_xor_"],
)
def test_tensors_only_methods_refuse_numbers(method):
    def prog(lib):
        x = lib.tensor([1.5, -2.0])
        try:
            getattr(x, method)(2.0)
        finally:
            assert x.tolist() == [1.5, -2.0]

    assert_same_error(prog)
    assert_same_error(lambda lib: getattr(lib.tensor([1.5, -2.0]), method)(other=1))


@pytest.mark.parametrize("number", _NUMBERS, ids=repr)
@pytest.mark.parametrize("name", _NUMBER_OTHER)
def test_number_input_refused_where_only_other_may_be_one(name, number):
    assert_same_error(lambda lib: getattr(lib, name)(number, lib.tensor([1.5, -2.0])))
    assert_same(lambda lib: getattr(lib, name)(lib.tensor([1.5, -2.0]), number))
    assert_same(lambda lib: getattr(lib.tensor([1.5, -2.0]), name)(number))


def test_numbers_refused_under_transforms():
    assert_same_error(
        lambda lib: lib.func.grad(lambda y: lib.fmin(y, 0.5).sum())(lib.tensor([1.0, 2.0]))
    )
    assert_same_error(lambda lib: lib.func.vmap(lambda y: y.maximum(0.5))(lib.ones(2, 3)))


# ==================================================================
# Issue 14, "unclear errors": PyTorch's exception type and text; NumPy's errors never leak.


def _set(x, index, value):
    x[index] = value


def _bool(T):
    return T.ones(3, dtype=T.bool)


ERRORS = {
    # broadcasting, on every path that combines shapes
    "add": lambda T: T.ones(3) + T.ones(4),
    "mul_2d": lambda T: T.ones(2, 3) * T.ones(4, 3),
    "add_": lambda T: T.ones(3).add_(T.ones(4)),
    "add_out_shape": lambda T: T.ones(3).add_(T.ones(2, 3)),
    "where": lambda T: T.where(T.ones(3) > 0, T.ones(4), T.ones(3)),
    "lerp": lambda T: T.lerp(T.ones(3), T.ones(4), 0.5),
    "lerp_weight": lambda T: T.lerp(T.ones(3), T.ones(3), T.ones(4)),
    "lerp_": lambda T: T.ones(3).lerp_(T.ones(4), 0.5),
    "addcmul": lambda T: T.addcmul(T.ones(3), T.ones(4), T.ones(3)),
    "copy_": lambda T: T.ones(3).copy_(T.ones(4)),
    "copy_2d": lambda T: T.ones(2, 3).copy_(T.ones(4, 1)),
    "copy_out_shape": lambda T: T.ones(3).copy_(T.ones(2, 3)),
    "copy_leading_ones": lambda T: T.ones(3).copy_(T.ones(1, 1, 3)),
    "copy_rank_mismatch": lambda T: T.ones(3).copy_(T.ones(2, 4)),
    "setitem": lambda T: _set(T.ones(3, 4), 0, T.ones(3)),
    "setitem_slice": lambda T: _set(T.ones(3, 4), slice(None), T.ones(2, 4)),
    "setitem_rank": lambda T: _set(T.ones(3, 4), 0, T.ones(2, 4)),
    "setitem_index": lambda T: _set(T.ones(3, 4), T.tensor([0, 1]), T.ones(3, 4)),
    "setitem_index_dim1": lambda T: _set(
        T.ones(3, 4), (slice(None), T.tensor([0, 1])), T.ones(4, 2)
    ),
    "setitem_mask": lambda T: _set(T.ones(3, 4), T.ones(3, 4) > 0, T.ones(3)),
    "index_put_": lambda T: T.ones(3, 4).index_put_((T.tensor([0, 1]),), T.ones(3, 4)),
    "index_put_accumulate": lambda T: T.ones(3, 4).index_put_(
        (T.tensor([0, 1]),), T.ones(3), accumulate=True
    ),
    "masked_select": lambda T: T.masked_select(T.ones(3), T.ones(4) > 0),
    "masked_scatter": lambda T: T.ones(3).masked_scatter(T.ones(4) > 0, T.ones(5)),
    **{
        f"{name}_{i}": (
            lambda name, args: (
                lambda T: getattr(T.ones(*args[0]), name)(
                    args[1], T.tensor(args[2]), T.ones(*args[3])
                )
            )
        )(name, args)
        for name in ("index_add_", "index_copy_")
        for i, args in enumerate(
            [
                ((3, 4), 0, [0, 1], (2, 3)),
                ((3, 4), 1, [0, 1], (2, 2)),
                ((3, 4), 0, [0, 1], (2, 4, 1)),
                ((3, 4), 0, [0, 1], (3, 4)),
                ((3, 4), 0, [0, 1], (3, 5)),
                ((3, 4), 0, [0, 1], (8,)),
                ((3, 4, 5), 1, [0, 1], (3, 2, 6)),
                ((3, 4, 5), -2, [0, 1], (2, 2, 5)),
            ]
        )
    },
    # sizes too large to allocate
    "empty_overflow": lambda T: T.empty(2**62),
    "empty_overflow_2d": lambda T: T.zeros(2**40, 2**40),
    "empty_overflow_f64": lambda T: T.empty(2**60, dtype=T.float64),
    "ones_huge": lambda T: T.ones(10**12),
    "zeros_huge": lambda T: T.zeros(10**6, 10**6),
    "full_huge": lambda T: T.full((10**12,), 1.0),
    "arange_huge": lambda T: T.arange(10**13),
    "randn_huge": lambda T: T.randn(10**12),
    "expand_contiguous_huge": lambda T: T.ones(1).expand(10**12).contiguous(),
    "expand_add_huge": lambda T: T.ones(1).expand(10**12) + 1,
    # NumPy cannot hold a view past int64 bytes: numtorch's expand raises what the
    # materializing op raises in PyTorch
    "expand_add_overflow": lambda T: T.ones(1).expand(2**62) + 1,
    "expand_contiguous_overflow": lambda T: T.ones(1).expand(2**62).contiguous(),
    "expand_numel_overflow": lambda T: T.ones(1).expand(2**40, 2**40),
    "expand_numel_overflow_2d": lambda T: T.ones(1, 1).expand(2**40, 2**40),
    # argument checks
    "eye_n": lambda T: T.eye(-1),
    "eye_m": lambda T: T.eye(2, -1),
    "eye_nm": lambda T: T.eye(-1, -2),
    "linspace_steps": lambda T: T.linspace(0, 1, -1),
    "logspace_steps": lambda T: T.logspace(0, 1, -1),
    "repeat_interleave_int": lambda T: T.ones(3).repeat_interleave(-1),
    "repeat_interleave_int_dim": lambda T: T.ones(3).repeat_interleave(-2, dim=0),
    "repeat_interleave_tensor": lambda T: T.ones(3).repeat_interleave(T.tensor([1, -1, 2])),
    "repeat_interleave_one": lambda T: T.ones(3).repeat_interleave(T.tensor([-1])),
    "repeat_interleave_0d": lambda T: T.ones(3).repeat_interleave(T.tensor(-1)),
    "repeat_interleave_counts": lambda T: T.repeat_interleave(T.tensor([1, -1])),
    "repeat_interleave_2d": lambda T: T.ones(3).repeat_interleave(T.tensor([[1, 1, 1]])),
    "repeat_interleave_len": lambda T: T.ones(3).repeat_interleave(T.tensor([1, 2])),
    "repeat_negative": lambda T: T.ones(2, 3).repeat(-1, 2),
    "tile_negative": lambda T: T.ones(3).tile((-1,)),
    "tile_fn_int": lambda T: T.tile(T.ones(3), 2),
    "tile_fn_float": lambda T: T.tile(T.ones(3), 2.0),
    "tile_fn_tensor": lambda T: T.tile(T.ones(3), T.tensor([2])),
    **{
        f"{name}_of_tensor": (lambda name: lambda T: getattr(T, name)(T.ones(2, 3)))(name)
        for name in ("cat", "stack", "hstack", "vstack", "dstack", "concat", "concatenate")
    },
    "cat_of_one_row": lambda T: T.cat(T.ones(1, 3)),
    **{
        f"vmap_{name}_of_tensor": (
            lambda name: lambda T: T.func.vmap(getattr(T, name))(T.ones(2, 3, 4))
        )(name)
        for name in ("cat", "stack", "hstack")
    },
    "vmap_repeat_interleave": lambda T: T.func.vmap(lambda x: x.repeat_interleave(-1))(
        T.ones(2, 3)
    ),
    "stack_of_int": lambda T: T.stack(3),
    "eye_float": lambda T: T.eye(2.5),
    "eye_huge": lambda T: T.eye(10**7),
    "linspace_huge": lambda T: T.linspace(0, 1, 10**12),
    "logspace_huge": lambda T: T.logspace(0, 1, 10**12),
    "rand_overflow": lambda T: T.rand(2**62),
    "randint_huge": lambda T: T.randint(0, 5, (10**12,)),
    "new_zeros_huge": lambda T: T.ones(1).new_zeros(10**12),
    "new_empty_overflow": lambda T: T.ones(1).new_empty(2**62),
    "zeros_like_huge": lambda T: T.zeros_like(T.ones(1).expand(10**12)),
    "repeat_huge": lambda T: T.ones(3).repeat(10**12),
    "repeat_interleave_huge": lambda T: T.ones(3).repeat_interleave(10**12),
    "cat_non_tensor_element": lambda T: T.cat([T.ones(2), 3]),
    "stack_none_element": lambda T: T.stack((T.ones(2), None)),
    "bool_empty": lambda T: bool(T.ones(0)),
    "bool_multi": lambda T: bool(T.ones(3)),
    # same text, PyTorch's type
    "abs_bool": lambda T: T.abs(_bool(T)),
    "abs_bool_": lambda T: _bool(T).abs_(),
    "int_multi": lambda T: int(T.ones(3)),
    "float_multi": lambda T: float(T.ones(3)),
    "complex_multi": lambda T: complex(T.ones(3)),
    "item_multi": lambda T: T.ones(3).item(),
    "put_": lambda T: T.ones(3).put_(T.tensor([0, 1]), T.ones(3)),
    "put": lambda T: T.ones(3).put(T.tensor([0, 1]), T.ones(3)),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_error(name):
    assert_same_error(ERRORS[name])


def test_bad_input_leaves_inputs_unmodified():
    def prog(T):
        x = T.ones(3)
        try:
            x.put_(T.tensor([0, 1]), T.full((3,), 2.0))
        except IndexError:
            pass
        return x

    assert_same(prog)


@pytest.mark.parametrize("name", ["copy_", "setitem", "setitem_index", "index_add_", "index_copy_"])
def test_bad_write_leaves_self_unmodified(name):
    def prog(T):
        x = T.arange(12.0).reshape(3, 4)
        bad = {
            "copy_": lambda: x.copy_(T.ones(4, 1)),
            "setitem": lambda: _set(x, 0, T.ones(3)),
            "setitem_index": lambda: _set(x, T.tensor([0, 1]), T.ones(3, 4)),
            "index_add_": lambda: x.index_add_(0, T.tensor([0, 1]), T.ones(3, 4)),
            "index_copy_": lambda: x.index_copy_(0, T.tensor([0, 1]), T.ones(2, 3)),
        }[name]
        try:
            bad()
        except (RuntimeError, IndexError):
            pass
        return x

    assert_same(prog)


# ==================================================================
# Issue 35, "accepted where PyTorch raises": PyTorch's refusal, word for word, where numtorch
# returned a result. Each call also runs in the forms PyTorch accepts, which must still give
# its result.
def _x(T):
    return T.tensor([3.0, 1.0, 2.0])


def _sort_forms() -> dict:
    """sort/argsort/msort in every form: PyTorch's sort(input, dim, descending) and
    sort(input, *, stable, dim, descending) signatures decide which are taken."""
    forms = {}
    calls = {
        "": ((), {}),
        "0": ((0,), {}),
        "0-True": ((0, True), {}),
        "True": ((True,), {}),
        "0-stable": ((0,), {"stable": True}),
        "0-True-stable": ((0, True), {"stable": True}),
        "stable": ((), {"stable": True}),
        "stable-None": ((), {"stable": None}),
        "stable-dim-descending": ((), {"stable": False, "dim": 0, "descending": True}),
        "dim-descending": ((), {"dim": 0, "descending": True}),
        "descending-int": ((), {"descending": 1}),
        "0-True-True": ((0, True, True), {}),
    }
    for name in ("sort", "argsort"):
        for tag, (a, k) in calls.items():
            forms[f"{name}({tag})"] = lambda T, name=name, a=a, k=k: getattr(T, name)(
                _x(T), *a, **k
            )
            forms[f"x.{name}({tag})"] = lambda T, name=name, a=a, k=k: getattr(_x(T), name)(*a, **k)
    forms["argsort-out-stable"] = lambda T: T.argsort(
        _x(T), stable=True, out=T.empty(3, dtype=T.int64)
    )
    forms["argsort-out-0"] = lambda T: T.argsort(_x(T), 0, out=T.empty(3, dtype=T.int64))
    forms["msort"] = lambda T: T.msort(_x(T))
    forms["msort-0"] = lambda T: T.msort(_x(T), 0)
    forms["msort-dim"] = lambda T: T.msort(_x(T), dim=0)
    forms["x.msort-0"] = lambda T: _x(T).msort(0)
    return forms


def _clamp_forms() -> dict:
    """clamp and clip with a tensor bound and a number bound, in every form (PyTorch's
    signatures take two tensors or two numbers); both kinds alike are taken."""
    forms = {}
    bounds = {
        "tensor-number": lambda T: ((_x(T) * 0, 2.0), {}),
        "number-tensor": lambda T: ((0.0, _x(T)), {}),
        "tensor-int": lambda T: ((_x(T) * 0, 2), {}),
        "kw-tensor-number": lambda T: ((), {"min": _x(T) * 0, "max": 2.0}),
        "kw-number-tensor": lambda T: ((), {"max": _x(T), "min": 0.5}),
        "0d-number": lambda T: ((T.tensor(1.5), 2.0), {}),
        "tensor-None": lambda T: ((_x(T) * 0, None), {}),
        "tensors": lambda T: ((_x(T) * 0, _x(T) - 1), {}),
        "numbers": lambda T: ((1.5, 2.5), {}),
    }
    for name in ("clamp", "clip"):
        for tag, b in bounds.items():
            forms[f"{name}-{tag}"] = lambda T, name=name, b=b: getattr(T, name)(
                _x(T), *b(T)[0], **b(T)[1]
            )
            for m in (name, name + "_"):
                forms[f"x.{m}-{tag}"] = lambda T, m=m, b=b: getattr(_x(T), m)(*b(T)[0], **b(T)[1])
    return forms


def _ints(T):
    return T.ones(3, dtype=T.int64)


ACCEPTED_BEFORE = {
    **_sort_forms(),
    **_clamp_forms(),
    # 1-D operands only
    "outer-2d": lambda T: T.outer(T.ones(2, 2), T.ones(2)),
    "outer-2d-vec2": lambda T: T.outer(T.ones(2), T.ones(2, 2)),
    "outer-0d": lambda T: T.outer(T.tensor(1.0), T.ones(2)),
    "ger-2d": lambda T: T.ger(T.ones(2, 2), T.ones(2)),
    "x.outer-2d": lambda T: T.ones(2, 2).outer(T.ones(2)),
    "x.ger-0d": lambda T: T.tensor(2.0).ger(T.ones(2)),
    "outer-1d": lambda T: T.outer(T.ones(2), T.arange(3.0)),
    "vmap-outer-2d": lambda T: T.func.vmap(T.outer)(T.ones(2, 2, 2), T.ones(2, 3)),
    "multi_dot-3d": lambda T: T.linalg.multi_dot([T.ones(2, 2, 2), T.ones(2, 2)]),
    "multi_dot-last-3d": lambda T: T.linalg.multi_dot([T.ones(2, 2), T.ones(2, 2, 2)]),
    "multi_dot-middle-1d": lambda T: T.linalg.multi_dot([T.ones(2, 2), T.ones(2), T.ones(2, 2)]),
    "multi_dot-shapes": lambda T: T.linalg.multi_dot([T.ones(2, 2), T.ones(2, 3), T.ones(2)]),
    "multi_dot-vectors": lambda T: T.linalg.multi_dot([T.ones(3), T.ones(3, 2), T.ones(2)]),
    "addmm-1d-mat1": lambda T: T.addmm(T.ones(2, 2), T.ones(2), T.ones(2, 2)),
    "addmm-3d-mat2": lambda T: T.addmm(T.ones(2, 2), T.ones(2, 2), T.ones(1, 2, 2)),
    "addmm_-1d-mat1": lambda T: T.ones(2, 2).addmm_(T.ones(2), T.ones(2, 2)),
    # negation of bools
    "neg-bool": lambda T: -T.ones(2, dtype=T.bool),
    "neg-fn-bool": lambda T: T.neg(T.ones(2, dtype=T.bool)),
    "negative-bool": lambda T: T.negative(T.ones(2, dtype=T.bool)),
    "neg_-bool": lambda T: T.ones(2, dtype=T.bool).neg_(),
    "negative_-bool": lambda T: T.ones(2, dtype=T.bool).negative_(),
    "vmap-neg-bool": lambda T: T.func.vmap(lambda x: -x)(T.ones(2, 2, dtype=T.bool)),
    # alpha against the result's dtype
    "add-bool-alpha": lambda T: T.add(T.ones(3), T.ones(3), alpha=True),
    "add-bool-alpha-int": lambda T: T.add(_ints(T), _ints(T), alpha=True),
    "add-bool-alpha-bool": lambda T: T.add(T.ones(3) > 0, T.ones(3) > 0, alpha=True),
    "add-float-alpha-int": lambda T: T.add(_ints(T), _ints(T), alpha=0.5),
    "add-float-alpha-number": lambda T: T.add(_ints(T), 2, alpha=1.5),
    "add-float-alpha-float-other": lambda T: T.add(_ints(T), T.ones(3), alpha=1.5),
    "add-complex-alpha-float": lambda T: T.add(T.ones(3), T.ones(3), alpha=1j),
    "add-complex-alpha-int": lambda T: T.add(_ints(T), _ints(T), alpha=1j),
    "add-complex-alpha-complex": lambda T: T.add(T.ones(3) * 1j, T.ones(3), alpha=1j),
    "add_-float-alpha-int": lambda T: _ints(T).add_(_ints(T), alpha=1.5),
    "add_-bool-alpha": lambda T: T.ones(3).add_(T.ones(3), alpha=True),
    "sub-bool-alpha": lambda T: T.sub(T.ones(3), T.ones(3), alpha=True),
    "sub-float-alpha-int": lambda T: T.sub(_ints(T), _ints(T), alpha=0.5),
    "rsub-bool-alpha": lambda T: T.rsub(T.ones(3), T.ones(3), alpha=True),
    "addr-bool-alpha": lambda T: T.addr(T.ones(2, 2), T.ones(2), T.ones(2), alpha=True),
    "addr-bool-beta": lambda T: T.addr(T.ones(2, 2), T.ones(2), T.ones(2), beta=True),
    # upper: keyword-only and required
    "solve_triangular": lambda T: T.linalg.solve_triangular(T.eye(2), T.ones(2, 2)),
    "solve_triangular-positional": lambda T: T.linalg.solve_triangular(
        T.eye(2), T.ones(2, 2), True
    ),
    "solve_triangular-upper": lambda T: T.linalg.solve_triangular(
        T.eye(2), T.ones(2, 2), upper=True
    ),
    # dtypes by name, and numbers where ints are expected
    "zeros-dtype-str": lambda T: T.zeros(2, dtype="float32"),
    "zeros-dtype-numpy": lambda T: T.zeros(2, dtype=np.float32),
    "zeros-dtype-python": lambda T: T.zeros(2, dtype=float),
    "tensor-dtype-str": lambda T: T.tensor([1.0], dtype="float32"),
    "arange-dtype-str": lambda T: T.arange(3, dtype="float32"),
    "rand-dtype-str": lambda T: T.rand(2, dtype="float32"),
    "zeros_like-dtype-str": lambda T: T.zeros_like(T.ones(2), dtype="float32"),
    "new_zeros-dtype-str": lambda T: T.ones(2).new_zeros(2, dtype="float32"),
    "sum-dtype-str": lambda T: T.ones(2).sum(dtype="float32"),
    "softmax-dtype-str": lambda T: T.softmax(T.ones(2), 0, "float32"),
    "to-dtype-str": lambda T: T.ones(2).to(dtype="float32"),
    "reshape-float": lambda T: T.ones(6).reshape(2.0, 3),
    "reshape-float-tuple": lambda T: T.ones(6).reshape((2.0, 3)),
    "reshape-later-float": lambda T: T.ones(6).reshape(2, 3.0),
    "reshape-bool": lambda T: T.ones(6).reshape(True, 6),
    "reshape-numpy-int": lambda T: T.ones(6).reshape(np.int64(2), 3),
    "reshape-int-tensor": lambda T: T.ones(6).reshape(T.tensor(6)),
    "view-float": lambda T: T.ones(6).view(2.0, 3),
    "zeros-float": lambda T: T.zeros(2.0, 3),
    "zeros-size-float": lambda T: T.zeros(size=(2.0,)),
    "eye-float": lambda T: T.eye(2, 2.0),
    "tril-float": lambda T: T.ones(3, 3).tril(1.0),
    "narrow-float": lambda T: T.ones(4).narrow(0, 1.0, 2),
    "select-float": lambda T: T.ones(4).select(0, 1.0),
    "sum-dim-keyword-float": lambda T: T.ones(2, 3).sum(dim=1.0),
    "sum-dim-float": lambda T: T.ones(2, 3).sum(1.0),
    "histc-bins-keyword": lambda T: T.histc(T.ones(3), bins=2.5),
    "histc-bins-positional": lambda T: T.histc(T.ones(3), 2.5),
    "unsqueeze-numpy-bool": lambda T: T.ones(3).unsqueeze(np.bool_(True)),
    "split-float": lambda T: T.ones(4).split(2.0),
    "sum-too-many": lambda T: T.sum(T.ones(3), 0, True, T.float64, 1),
}


@pytest.mark.parametrize("name", list(ACCEPTED_BEFORE))
def test_accepted_before_refused_as_torch(name):
    """Where PyTorch raises, numtorch raises the same; where it returns, the same result."""
    assert_same_outcome(ACCEPTED_BEFORE[name])
