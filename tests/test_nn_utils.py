"""nn.utils against PyTorch on the same gradients: clipping by norm and by value, the total
norm, parameters <-> vector, signatures and error texts."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest
import torch
from twolibs import arr, assert_same, assert_same_error, run_both

import numtorch as nt

NAMES = [
    "clip_grad_norm",
    "clip_grad_norm_",
    "clip_grad_value_",
    "clip_grads_with_norm_",
    "get_total_norm",
    "parameters_to_vector",
    "vector_to_parameters",
]


@pytest.mark.parametrize("name", NAMES)
def test_signature(name):
    ours, theirs = getattr(nt.nn.utils, name), getattr(torch.nn.utils, name)
    sig = lambda f: [(p.name, p.kind, p.default) for p in inspect.signature(f).parameters.values()]  # noqa: E731
    assert sig(ours) == sig(theirs)


def test_names_exist_where_torch_has_them():
    assert set(nt.nn.utils.__all__) <= set(torch.nn.utils.__all__)
    assert set(NAMES) <= set(nt.nn.utils.__all__)


def _params(lib, *shapes_dtypes, seed=0):
    """Leaf tensors that require grad, each with a .grad of fixed data (None for a shape of
    None); a dtype name after a shape sets that tensor's dtype (float64 by default)."""
    out = []
    for i, spec in enumerate(shapes_dtypes):
        shape, dtype = spec if isinstance(spec[-1], str) else (spec, "float64")
        d = getattr(lib, dtype)
        p = lib.tensor(arr(*shape, seed=seed + i), dtype=d).requires_grad_()
        p.grad = lib.tensor(3 * arr(*shape, seed=seed + 10 + i), dtype=d)
        out.append(p)
    return out


SPECS = [[(3, 4), (5,), (2, 1, 3)], [(7,)], [(3, 2), ((4,), "float32")], [((3, 3), "float32")]]


@pytest.mark.parametrize("specs", SPECS, ids=str)
@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, "inf", float("-inf"), 0.0])
@pytest.mark.parametrize("max_norm", [0.5, 1e6])
def test_clip_grad_norm(specs, norm_type, max_norm):
    def prog(lib):
        ps = _params(lib, *specs)
        total = lib.nn.utils.clip_grad_norm_(ps, max_norm, norm_type)
        return total, [p.grad for p in ps], [p.grad_fn for p in ps]

    assert_same(prog, rtol=1e-6, atol=1e-7)


def test_clip_grad_norm_single_tensor_generator_and_missing_grads():
    def prog(lib):
        a, b, c = _params(lib, (4,), (2, 2), (3,))
        b.grad = None
        t1 = lib.nn.utils.clip_grad_norm_(a, 0.1)
        t2 = lib.nn.utils.clip_grad_norm_((p for p in (a, b, c)), 1.0, norm_type=1)
        return t1, t2, a.grad, b.grad, c.grad

    assert_same(prog, rtol=1e-12)


def test_clip_grad_norm_with_no_grads():
    def prog(lib):
        (a,) = _params(lib, (3,))
        a.grad = None
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            t1 = lib.nn.utils.clip_grad_norm_([a], 1.0)
            t2 = lib.nn.utils.clip_grad_norm_(iter([]), 1.0)
            t3 = lib.nn.utils.clip_grad_norm_((x for x in []), 1.0)
        return t1, t2, t3, [(x.category, str(x.message)) for x in w]

    assert_same(prog)


def test_clip_grad_norm_nonfinite():
    def prog(lib, nonfinite):
        a, b = _params(lib, (3,), (2,))
        b.grad[1] = nonfinite
        total = lib.nn.utils.clip_grad_norm_([a, b], 1.0)
        return total, a.grad.isnan().all()

    for v in (float("nan"), float("inf")):
        assert_same(prog, v)

    def raising(lib, norm_type):
        a, b = _params(lib, (3,), (2,))
        b.grad[0] = float("inf")
        lib.nn.utils.clip_grad_norm_([a, b], 1.0, norm_type, error_if_nonfinite=True)

    for norm_type in (2, "inf", 1.5):
        assert_same_error(raising, norm_type)


def test_bad_norm_type_fails_before_clipping():
    def prog(lib):
        (a,) = _params(lib, (3,))
        before = a.grad.clone()
        try:
            lib.nn.utils.clip_grad_norm_([a], 1.0, norm_type="fro")
        except ValueError as e:
            return str(e), lib.equal(a.grad, before)

    assert_same(prog)


def test_get_total_norm_and_clip_with_norm():
    def prog(lib):
        ps = _params(lib, (3, 4), (5,))
        grads = [p.grad for p in ps]
        total = lib.nn.utils.get_total_norm(grads, 3.0)
        lib.nn.utils.clip_grads_with_norm_(ps, 0.5, total)
        empty = lib.nn.utils.get_total_norm([])
        return total, empty, grads

    assert_same(prog, rtol=1e-12)


def test_clip_grad_norm_deprecated_alias():
    def prog(lib):
        ps = _params(lib, (3,))
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            total = lib.nn.utils.clip_grad_norm(ps, 0.5)
        return total, ps[0].grad, [(x.category, str(x.message)) for x in w]

    assert_same(prog)


@pytest.mark.parametrize("clip", [0.5, 2, 100.0])
def test_clip_grad_value(clip):
    def prog(lib):
        ps = _params(lib, (3, 4), (5,), ((4,), "float32"))
        ps[1].grad = None
        r = lib.nn.utils.clip_grad_value_(ps, clip)
        r2 = lib.nn.utils.clip_grad_value_(ps[0], clip / 2)
        return r, r2, [p.grad for p in ps]

    assert_same(prog)


def test_clipping_bumps_the_grads_version_in_place():
    (a,) = _params(nt, (4,))
    g, v = a.grad, a.grad._version
    nt.nn.utils.clip_grad_norm_([a], 0.01)
    nt.nn.utils.clip_grad_value_([a], 0.001)
    assert a.grad is g and g._version == v + 2


# ------------------------------------------------------------------ convert_parameters
def test_parameters_to_vector_and_back():
    def prog(lib):
        ps = _params(lib, (3, 4), (5,), (2, 1, 2))
        vec = lib.nn.utils.parameters_to_vector(ps)
        new = lib.arange(vec.numel(), dtype=lib.float64) * 0.5
        lib.nn.utils.vector_to_parameters(new, ps)
        again = lib.nn.utils.parameters_to_vector(ps)
        return vec, [p for p in ps], again, [p.requires_grad for p in ps], vec.grad_fn is None

    assert_same(prog)


def test_parameters_to_vector_is_differentiable():
    """Like PyTorch, the vector is built from views of the parameters (a graph, not a copy)."""

    def prog(lib):
        ps = _params(lib, (2, 3), (4,))
        vec = lib.nn.utils.parameters_to_vector(ps)
        return lib.autograd.grad((vec * vec).sum(), ps)

    assert_same(prog)


@pytest.mark.parametrize(
    "prog",
    [
        lambda lib: lib.nn.utils.vector_to_parameters([1.0, 2.0], [lib.zeros(2)]),
        lambda lib: lib.nn.utils.vector_to_parameters(np.zeros(2), [lib.zeros(2)]),
        lambda lib: lib.nn.utils.vector_to_parameters(None, [lib.zeros(2)]),
        lambda lib: lib.nn.utils.vector_to_parameters(lib.zeros(2), [lib.zeros(3)]),
        lambda lib: lib.nn.utils.parameters_to_vector([]),
    ],
)
def test_errors(prog):
    assert_same_error(prog)


def test_vector_to_parameters_shares_the_vector():
    def prog(lib):
        (p,) = _params(lib, (3,))
        vec = lib.zeros(3, dtype=lib.float64)
        lib.nn.utils.vector_to_parameters(vec, [p])
        vec[1] = 5.0
        return p

    ours, theirs = run_both(prog)
    np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())
