"""autograd.functional (vjp, jvp, vhp, hvp, jacobian, hessian) against torch on the same
float64 data: every function family x tuple/single inputs and outputs x create_graph x strict
x vectorize x strategy x inputs that do or do not require grad. Results match torch's nested
structure, values and requires_grad flags, or raise torch's exception with torch's text; under
create_graph a second derivative of the results matches torch's too."""

from __future__ import annotations

import itertools
from functools import partial

import numpy as np
import pytest
import torch
import torch.autograd.functional as TF
from twolibs import Raised, assert_leaf_close, leaf_pairs, leaves, outcome

import numtorch as nt
import numtorch.autograd.functional as NF

RNG = np.random.default_rng(0)
X, Y, W = RNG.standard_normal((3, 2)), RNG.standard_normal(2), RNG.standard_normal((2, 4))


def _randn(shape) -> np.ndarray:
    """Fixed data of a shape (the same in every run and worker)."""
    return np.random.default_rng(len(shape) + 7).standard_normal(shape)


def _const(m, a):
    return m.tensor(a)


def _leaf(m, a):
    """A tensor outside the inputs that requires grad (captured by the function)."""
    return m.tensor(a).requires_grad_(True)


# ------------------------------------------------------------------ functions of tensors
# name: (input arrays, fn(lib, *inputs)); a single array means a lone (non-tuple) input.
GENERAL = {
    "mixed_ops": (
        X,
        lambda m, x: m.tanh(m.matmul(x, _const(m, W)))[1:].exp().sum(-1),
    ),
    "one_to_two": (X, lambda m, x: (x.exp() * 2, (x[0] * m.tanh(x[2])).sum())),
    "two_to_one": ((X, Y), lambda m, x, y: m.tanh(m.matmul(x, y)).exp()),
    "two_to_two": (
        (X, Y),
        lambda m, x, y: (m.matmul(x, y.exp()).tanh(), (x[:, 0] * y.sum()).sum()),
    ),
    "ignores_y": ((X, Y), lambda m, x, y: (x.exp(), x.sum() * 2)),
    "linear": ((X, Y), lambda m, x, y: (2 * x, x.sum() + 3 * y)),
    "linear_second_output": ((X, Y), lambda m, x, y: (x.exp() * y.sum(), 2 * x)),
    "captures_a_leaf": (X, lambda m, x: (x * x, _leaf(m, Y).exp())),
    "piecewise_constant": (X, lambda m, x: x.sign() + (3 * x).floor()),
    "constant": (X, lambda m, x: m.ones(2, dtype=m.float64)),
    "one_constant_output": (X, lambda m, x: (x.exp(), m.ones(2, dtype=m.float64))),
}

# Functions with one single-element output (vhp, hvp, hessian).
SCALAR = {
    "mixed_ops": (
        X,
        lambda m, x: m.tanh(m.matmul(x, _const(m, W))).exp()[1:].sum(),
    ),
    "two_inputs": ((X, Y), lambda m, x, y: (m.tanh(m.matmul(x, y)).exp() * x[:, 0]).sum()),
    "ignores_y": ((X, Y), lambda m, x, y: x.exp().sum()),
    "separable": ((X, Y), lambda m, x, y: x.exp().sum() + (y * y * y).sum()),
    "linear": (X, lambda m, x: (3 * x).sum()),
    "quadratic": (X, lambda m, x: (x * x).sum()),
    "captures_a_leaf": (
        (X, Y),
        lambda m, x, y: x.exp().sum() + y.sum() * _leaf(m, Y).sum(),
    ),
    "constant": (X, lambda m, x: m.ones((), dtype=m.float64)),
    "one_element": (X, lambda m, x: (x.exp() * x).sum().reshape(1)),
}

# Functions of one single-element input: v may be None for jvp, vhp and hvp.
SCALAR_INPUT = {
    "zero_dim": (np.array(0.7), lambda m, x: (x.exp() * x).tanh()),
    "one_element": (np.array([0.3]), lambda m, x: (x * x.exp()).sum()),
}


def _lib(name):
    return (nt, NF) if name == "nt" else (torch, TF)


def _tensors(m, arrays, requires_grad: bool) -> tuple:
    return tuple(m.tensor(a).requires_grad_(requires_grad) for a in arrays)


def _spec(arrays):
    """(was it a tuple, the arrays as a tuple)."""
    return (True, arrays) if isinstance(arrays, tuple) else (False, (arrays,))


def _pack(items: tuple, as_tuple: bool):
    return items if as_tuple else items[0]


def _output_arrays(fn, arrays):
    """The user function's outputs (as arrays) on the given inputs, and whether a tuple."""
    is_tuple, arrays = _spec(arrays)
    out = fn(torch, *(torch.tensor(a) for a in arrays))
    outs = out if isinstance(out, tuple) else (out,)
    return tuple(_randn(tuple(o.shape)) for o in outs), isinstance(out, tuple)


# ------------------------------------------------------------------ running on both libraries
def _call(lib, api, fn, arrays, v_arrays, v_tuple, requires_grad, kwargs):
    """Run ``api`` on ``lib``; (leaves to differentiate, result or Raised(type, text))."""
    m, mod = _lib(lib)
    is_tuple, arrays = _spec(arrays)
    xs = _tensors(m, arrays, requires_grad)
    args = [partial(fn, m), _pack(xs, is_tuple)]
    vs = ()
    if v_arrays is not None:
        vs = _tensors(m, v_arrays, requires_grad)
        args.append(_pack(vs, v_tuple))
    return xs + vs, outcome(lambda _: getattr(mod, api)(*args, **kwargs), m)


def _assert_same(got, ref, where: str = "result", check_requires_grad: bool = True) -> None:
    """Same nested tuple structure, shapes, dtypes, values (and requires_grad flags)."""
    for at, g, r in leaf_pairs(got, ref, where):
        assert_leaf_close(g, r, rtol=1e-10, atol=1e-12, where=at)
        if check_requires_grad and r is not None:
            assert g.requires_grad == r.requires_grad, f"{at}: requires_grad"


def _weighted_sum(tensors: list):
    """A scalar that mixes every tensor with fixed weights (differentiated under create_graph)."""
    total = 0
    for k, t in enumerate(tensors):
        w = np.cos(np.arange(t.numel()) + k).reshape(tuple(t.shape))
        total = total + (t * (nt.tensor(w) if isinstance(t, nt.Tensor) else torch.tensor(w))).sum()
    return total


def _second_derivative(lib, wrt: list, res):
    """d(weighted sum of the results that carry history)/d(inputs and v)."""
    m, _ = _lib(lib)
    live = [t for t in leaves(res) if t.requires_grad]
    wrt = [t for t in wrt if t.requires_grad]
    if not live or not wrt:
        return None
    with m.enable_grad():
        return m.autograd.grad(_weighted_sum(live), wrt, allow_unused=True)


def compare(api, fn, arrays, v_arrays=None, v_tuple=False, requires_grad=False, **kwargs):
    """Run the same program on numtorch and torch and compare results or errors."""
    run = partial(_call, api=api, fn=fn, arrays=arrays, v_arrays=v_arrays, v_tuple=v_tuple)
    ref_leaves, ref = run("torch", requires_grad=requires_grad, kwargs=kwargs)
    got_leaves, got = run("nt", requires_grad=requires_grad, kwargs=kwargs)
    if isinstance(ref, Raised) or isinstance(got, Raised):
        assert isinstance(got, Raised) and got == ref, f"numtorch: {got!r}\ntorch: {ref!r}"
        return "error"
    # torch's forward-over-reverse hessian leaks history into results without create_graph.
    leak = api == "hessian" and kwargs.get("outer_jacobian_strategy") == "forward-mode"
    _assert_same(got, ref, check_requires_grad=not leak)
    if leak:
        assert all(not t.requires_grad for t in leaves(got)) or requires_grad
    if kwargs.get("create_graph"):
        _assert_same(
            _second_derivative("nt", list(got_leaves), got),
            _second_derivative("torch", list(ref_leaves), ref),
            "second derivative",
        )
    return "ok"


FLAGS = list(itertools.product([False, True], repeat=3))  # create_graph, strict, requires_grad
FLAG_IDS = [f"cg{int(c)}-strict{int(s)}-rg{int(r)}" for c, s, r in FLAGS]


# ------------------------------------------------------------------ vjp and jvp
@pytest.mark.parametrize("name", list(GENERAL))
@pytest.mark.parametrize(("create_graph", "strict", "requires_grad"), FLAGS, ids=FLAG_IDS)
def test_vjp(name, create_graph, strict, requires_grad):
    arrays, fn = GENERAL[name]
    v_arrays, v_tuple = _output_arrays(fn, arrays)
    compare(
        "vjp",
        fn,
        arrays,
        v_arrays,
        v_tuple,
        requires_grad,
        create_graph=create_graph,
        strict=strict,
    )


@pytest.mark.parametrize("name", list(GENERAL))
@pytest.mark.parametrize(("create_graph", "strict", "requires_grad"), FLAGS, ids=FLAG_IDS)
def test_jvp(name, create_graph, strict, requires_grad):
    arrays, fn = GENERAL[name]
    is_tuple, inputs = _spec(arrays)
    v_arrays = tuple(_randn(a.shape) for a in inputs)
    compare(
        "jvp",
        fn,
        arrays,
        v_arrays,
        is_tuple,
        requires_grad,
        create_graph=create_graph,
        strict=strict,
    )


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("name", ["mixed_ops", "one_element"])
def test_vjp_v_none_for_a_single_element_output(name, create_graph):
    arrays, fn = SCALAR[name]
    assert compare("vjp", fn, arrays, requires_grad=True, create_graph=create_graph) == "ok"


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("api", ["jvp", "vhp", "hvp"])
@pytest.mark.parametrize("name", list(SCALAR_INPUT))
def test_v_none_for_a_single_element_input(name, api, create_graph):
    arrays, fn = SCALAR_INPUT[name]
    assert compare(api, fn, arrays, requires_grad=True, create_graph=create_graph) == "ok"


# ------------------------------------------------------------------ vhp and hvp
@pytest.mark.parametrize("api", ["vhp", "hvp"])
@pytest.mark.parametrize("name", list(SCALAR))
@pytest.mark.parametrize(("create_graph", "strict", "requires_grad"), FLAGS, ids=FLAG_IDS)
def test_vhp_hvp(api, name, create_graph, strict, requires_grad):
    arrays, fn = SCALAR[name]
    is_tuple, inputs = _spec(arrays)
    v_arrays = tuple(_randn(a.shape) for a in inputs)
    compare(
        api,
        fn,
        arrays,
        v_arrays,
        is_tuple,
        requires_grad,
        create_graph=create_graph,
        strict=strict,
    )


# ------------------------------------------------------------------ jacobian and hessian
MODES = [
    (False, "reverse-mode"),
    (True, "reverse-mode"),
    (False, "forward-mode"),
    (True, "forward-mode"),
]
MODE_IDS = ["rows", "vectorized", "forward-loop", "forward-vectorized"]


@pytest.mark.parametrize(("vectorize", "strategy"), MODES, ids=MODE_IDS)
@pytest.mark.parametrize("name", list(GENERAL))
@pytest.mark.parametrize(("create_graph", "strict", "requires_grad"), FLAGS, ids=FLAG_IDS)
def test_jacobian(name, create_graph, strict, requires_grad, vectorize, strategy):
    arrays, fn = GENERAL[name]
    compare(
        "jacobian",
        fn,
        arrays,
        requires_grad=requires_grad,
        create_graph=create_graph,
        strict=strict,
        vectorize=vectorize,
        strategy=strategy,
    )


@pytest.mark.parametrize(("vectorize", "strategy"), MODES, ids=MODE_IDS)
@pytest.mark.parametrize("name", list(SCALAR))
@pytest.mark.parametrize(("create_graph", "strict", "requires_grad"), FLAGS, ids=FLAG_IDS)
def test_hessian(name, create_graph, strict, requires_grad, vectorize, strategy):
    arrays, fn = SCALAR[name]
    compare(
        "hessian",
        fn,
        arrays,
        requires_grad=requires_grad,
        create_graph=create_graph,
        strict=strict,
        vectorize=vectorize,
        outer_jacobian_strategy=strategy,
    )


def test_the_sweep_reaches_values_and_errors():
    """The flag sweep above is not vacuous: both outcomes occur for strict mode."""
    arrays, fn = GENERAL["ignores_y"]
    assert compare("jacobian", fn, arrays, strict=True) == "error"
    assert compare("jacobian", fn, arrays, strict=False) == "ok"
    arrays, fn = SCALAR["linear"]
    assert compare("hessian", fn, arrays, strict=True) == "error"
    assert compare("hessian", fn, arrays, vectorize=True) == "ok"


# ------------------------------------------------------------------ argument errors
def _bad_inputs(m):
    return [1.0, 2.0]


ERRORS = {
    "inputs_not_a_tensor": ("vjp", SCALAR["mixed_ops"][1], None, dict(inputs=_bad_inputs)),
    "tuple_entry_not_a_tensor": (
        "jacobian",
        GENERAL["two_to_one"][1],
        None,
        dict(inputs=lambda m: (m.tensor(X), 3)),
    ),
    "output_not_a_tensor": ("vjp", lambda m, x: [x], None, {}),
    "tuple_output_not_a_tensor": ("jacobian", lambda m, x: (x, 2.0), None, {}),
    "v_not_a_tensor": ("jvp", SCALAR["mixed_ops"][1], lambda m: np.ones((3, 2)), {}),
    "v_none_vjp": ("vjp", GENERAL["mixed_ops"][1], None, {}),
    "v_none_jvp": ("jvp", GENERAL["mixed_ops"][1], None, {}),
    "v_none_vhp": ("vhp", SCALAR["mixed_ops"][1], None, {}),
    "v_none_hvp": ("hvp", SCALAR["mixed_ops"][1], None, {}),
    "v_wrong_length_tuple": (
        "vjp",
        GENERAL["one_to_two"][1],
        lambda m: (m.ones(3, 2, dtype=m.float64),),
        {},
    ),
    "v_wrong_length_single": (
        "jvp",
        GENERAL["mixed_ops"][1],
        lambda m: (m.ones(3, 2, dtype=m.float64),) * 2,
        {},
    ),
    "v_wrong_size": ("vhp", SCALAR["mixed_ops"][1], lambda m: m.ones(2, 3, dtype=m.float64), {}),
    "v_wrong_size_entry": (
        "hvp",
        SCALAR["two_inputs"][1],
        lambda m: (m.ones(3, 2, dtype=m.float64), m.ones(3, dtype=m.float64)),
        dict(inputs=lambda m: (m.tensor(X), m.tensor(Y))),
    ),
    "vhp_tuple_output": (
        "vhp",
        GENERAL["one_to_two"][1],
        lambda m: m.ones(3, 2, dtype=m.float64),
        {},
    ),
    "hvp_many_elements": (
        "hvp",
        GENERAL["mixed_ops"][1],
        lambda m: m.ones(3, 2, dtype=m.float64),
        {},
    ),
    "hessian_tuple_output": ("hessian", GENERAL["one_to_two"][1], None, {}),
    "hessian_many_elements": ("hessian", GENERAL["mixed_ops"][1], None, {}),
    "jacobian_bad_strategy": ("jacobian", GENERAL["mixed_ops"][1], None, dict(strategy="fwd")),
    "hessian_bad_strategy": (
        "hessian",
        SCALAR["mixed_ops"][1],
        None,
        dict(outer_jacobian_strategy="fwd"),
    ),
    "forward_create_graph": (
        "jacobian",
        GENERAL["mixed_ops"][1],
        None,
        dict(strategy="forward-mode", vectorize=True, create_graph=True),
    ),
    "forward_not_vectorized": (
        "jacobian",
        GENERAL["mixed_ops"][1],
        None,
        dict(strategy="forward-mode"),
    ),
    "forward_strict": (
        "jacobian",
        GENERAL["mixed_ops"][1],
        None,
        dict(strategy="forward-mode", vectorize=True, strict=True),
    ),
    "vectorize_strict": (
        "jacobian",
        GENERAL["mixed_ops"][1],
        None,
        dict(vectorize=True, strict=True),
    ),
    "hessian_forward_not_vectorized": (
        "hessian",
        SCALAR["mixed_ops"][1],
        None,
        dict(outer_jacobian_strategy="forward-mode"),
    ),
    "integer_input": (
        "jacobian",
        lambda m, x: x * 2,
        None,
        dict(inputs=lambda m: m.tensor([1, 2])),
    ),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_errors(case):
    api, fn, make_v, kw = ERRORS[case]
    kw = dict(kw)
    make_inputs = kw.pop("inputs", lambda m: m.tensor(X))
    outcomes = []
    for m, mod in ((torch, TF), (nt, NF)):
        args = [partial(fn, m), make_inputs(m)]
        if make_v is not None:
            args.append(make_v(m))
        with pytest.raises(Exception) as info:
            getattr(mod, api)(*args, **kw)
        outcomes.append((type(info.value), str(info.value)))
    assert outcomes[1] == outcomes[0]


# ------------------------------------------------------------------ behaviour beyond values
def test_vectorized_jacobian_is_one_batched_backward(monkeypatch):
    """vectorize=True differentiates once, with is_grads_batched; no loop over rows."""
    calls = []
    real = NF._autograd_grad_fn

    def spy(*args, **kwargs):
        calls.append(kwargs.get("is_grads_batched"))
        return real(*args, **kwargs)

    monkeypatch.setattr(NF, "_autograd_grad_fn", spy)
    NF.jacobian(partial(GENERAL["two_to_two"][1], nt), (nt.tensor(X), nt.tensor(Y)), vectorize=True)
    assert calls == [True]


def test_user_inputs_are_left_untouched():
    """Inputs are detached copies inside: the caller's tensors keep their flags and grads."""
    x = nt.tensor(X)
    NF.jacobian(partial(GENERAL["mixed_ops"][1], nt), x)
    NF.hessian(
        partial(SCALAR["mixed_ops"][1], nt),
        x,
        vectorize=True,
        outer_jacobian_strategy="forward-mode",
    )
    assert not x.requires_grad and x.grad is None
    xr = nt.tensor(X).requires_grad_(True)
    NF.vjp(partial(SCALAR["mixed_ops"][1], nt), xr)
    assert xr.grad is None


def test_jacobian_forward_mode_keeps_the_output_dtype():
    x = nt.tensor(X)
    ref = TF.jacobian(lambda t: t.float(), torch.tensor(X), vectorize=True, strategy="forward-mode")
    got = NF.jacobian(lambda t: t.float(), x, vectorize=True, strategy="forward-mode")
    _assert_same(got, ref)


@pytest.mark.parametrize(
    ("api", "kwargs"),
    [
        ("jacobian", dict(vectorize=True)),
        ("jacobian", dict(vectorize=True, strategy="forward-mode")),
        ("hessian", dict(vectorize=True)),
        ("hessian", dict(vectorize=True, outer_jacobian_strategy="forward-mode")),
    ],
)
def test_vectorized_modes_call_the_function_once(api, kwargs):
    """One vectorized pass: the user's function runs once, not once per row."""
    calls = []

    def fn(x, y):
        calls.append(1)
        return SCALAR["two_inputs"][1](nt, x, y)

    getattr(NF, api)(fn, (nt.tensor(X), nt.tensor(Y)), **kwargs)
    assert len(calls) == 1


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("api", ["vjp", "jvp", "vhp", "hvp", "jacobian", "hessian"])
def test_under_no_grad(api, create_graph):
    """Grad mode is switched on inside; results follow torch's flags under no_grad."""
    arrays, fn = SCALAR["two_inputs"]
    v = (X, Y) if api in ("jvp", "vhp", "hvp") else (np.array(1.5),) if api == "vjp" else None
    with torch.no_grad(), nt.no_grad():
        assert compare(api, fn, arrays, v, api != "vjp", True, create_graph=create_graph) == "ok"


# PyTorch's private helpers that libraries import (pytorch-minimize's _jacobian)


@pytest.mark.parametrize("numels", [(1, 2, 1), (3,), (2, 0, 2)])
def test_construct_standard_basis_for(numels):
    def basis(lib, fn):
        dtypes = (lib.float64, lib.float32, lib.int64)
        tensors = tuple(lib.zeros(n, dtype=dtypes[i % 3]) for i, n in enumerate(numels))
        return fn(tensors, numels)

    got = basis(nt, NF._construct_standard_basis_for)
    ref = basis(torch, TF._construct_standard_basis_for)
    assert [g.dtype.__repr__() for g in got] == [r.dtype.__repr__() for r in ref]
    for g, r in zip(got, ref):
        assert_leaf_close(g, r)


@pytest.mark.parametrize("args", [((nt.zeros(1),), (1, 2)), ((), ())])
def test_construct_standard_basis_for_preconditions(args):
    targs = tuple(tuple(torch.zeros(1) for _ in a) if i == 0 else a for i, a in enumerate(args))
    got = outcome(lambda L: NF._construct_standard_basis_for(*args), nt)
    ref = outcome(lambda L: TF._construct_standard_basis_for(*targs), torch)
    assert got == ref and isinstance(ref, Raised)


@pytest.mark.parametrize("value", ["tensor", "tuple", "list", "bad tuple", "bad single"])
@pytest.mark.parametrize("named", [True, False])
def test_as_tuple(value, named):
    def prog(L, fn):
        x = L.ones(2)
        v = {"tensor": x, "tuple": (x, x), "list": [x], "bad tuple": (x, 1), "bad single": 1}
        args = ("inputs", "jacobian") if named else ()
        res = fn(v[value], *args)
        return res if named else (len(res), type(res).__name__)

    got, ref = outcome(prog, nt, NF._as_tuple), outcome(prog, torch, TF._as_tuple)
    if isinstance(ref, Raised) or not named:
        assert got == ref
    else:
        assert got[0] == ref[0]  # whether it was a tuple
        for _, g, r in leaf_pairs(got[1], ref[1]):
            assert_leaf_close(g, r)


@pytest.mark.parametrize("to_unpack", [True, False, (True, True), (False, False), (True, False)])
def test_tuple_postprocess(to_unpack):
    def prog(L, fn):
        a, b = L.ones(1), L.zeros(2)
        res = ((a, b), (b, a)) if isinstance(to_unpack, tuple) else (a, b)
        return fn(res, to_unpack)

    got, ref = prog(nt, NF._tuple_postprocess), prog(torch, TF._tuple_postprocess)
    for _, g, r in leaf_pairs(got, ref):
        assert_leaf_close(g, r)


@pytest.mark.parametrize("create_graph", [True, False])
def test_grad_postprocess(create_graph):
    def prog(L, fn):
        x = L.ones(2, requires_grad=True)
        res = fn(((x * 2,), (x + 1, x * 3)), create_graph)
        return [t.requires_grad for t in leaves(res)]

    assert prog(nt, NF._grad_postprocess) == prog(torch, TF._grad_postprocess)
