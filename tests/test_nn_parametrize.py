"""nn.utils.parametrize and nn.utils.parametrizations (orthogonal, weight_norm, spectral_norm),
and the legacy hook forms nn.utils.weight_norm and nn.utils.spectral_norm, against torch: names,
state-dict keys, reprs, values, gradients, error texts, and the transforms through
functional_call."""

from __future__ import annotations

import copy
import pickle
import warnings
from collections import OrderedDict

import numpy as np
import pytest
import torch
from twolibs import (
    LAYER_ATOL,
    LAYER_RTOL,
    arr,
    assert_close,
    assert_same_error,
    to_nt,
    to_torch,
)
from twomods import copy_weights

import numtorch as nt

TOL = {"rtol": LAYER_RTOL, "atol": LAYER_ATOL}


def _layer(lib, name, *args, seed=0, **kwargs):
    lib.manual_seed(seed)
    return getattr(lib.nn, name)(*args, **kwargs).double()


def _same_layers(name, *args, **kwargs):
    """(torch layer, numtorch layer) with torch's weights."""
    tmod, nmod = _layer(torch, name, *args, **kwargs), _layer(nt, name, *args, **kwargs)
    copy_weights(tmod, nmod)
    return tmod, nmod


def _check_structure(tmod, nmod):
    assert repr(nmod) == repr(tmod)
    assert type(nmod).__name__ == type(tmod).__name__
    assert list(nmod.state_dict()) == list(tmod.state_dict())
    assert [n for n, _ in nmod.named_parameters()] == [n for n, _ in tmod.named_parameters()]


def _check_forward_and_grads(tmod, nmod, x: np.ndarray, name: str = "weight"):
    """Outputs, the parametrized tensor, and the gradients of every parameter agree."""
    tout, nout = tmod(to_torch(x)), nmod(to_nt(x))
    assert_close(nout, tout, **TOL)
    assert_close(getattr(nmod, name), getattr(tmod, name), **TOL)
    cot = arr(*tout.shape, seed=7)
    tg = torch.autograd.grad(tout, list(tmod.parameters()), to_torch(cot))
    ng = nt.autograd.grad(nout, list(nmod.parameters()), to_nt(cot))
    assert_close(list(ng), list(tg), **TOL)


# ------------------------------------------------------------------ weight_norm
@pytest.mark.parametrize(
    "name,args,dim,x",
    [
        ("Linear", (4, 3), 0, arr(5, 4)),
        ("Linear", (4, 3), 1, arr(5, 4)),
        ("Linear", (4, 3), None, arr(5, 4)),
        ("Conv2d", (2, 3, 3), 0, arr(2, 2, 5, 5)),
        ("Conv2d", (2, 3, 3), 2, arr(2, 2, 5, 5)),
        ("ConvTranspose1d", (2, 3, 3), 1, arr(2, 2, 5)),
    ],
)
def test_weight_norm_parametrization_matches_torch(name, args, dim, x):
    tmod, nmod = _same_layers(name, *args)
    torch.nn.utils.parametrizations.weight_norm(tmod, dim=dim)
    nt.nn.utils.parametrizations.weight_norm(nmod, dim=dim)
    _check_structure(tmod, nmod)
    assert_close(dict(nmod.state_dict()), dict(tmod.state_dict()), **TOL)
    _check_forward_and_grads(tmod, nmod, x)


def test_weight_norm_loads_a_legacy_state_dict():
    tmod, nmod = _same_layers("Linear", 4, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        torch.nn.utils.weight_norm(tmod)
    legacy = {k: nt.tensor(v.detach().numpy() * 1.5) for k, v in tmod.state_dict().items()}
    assert sorted(legacy) == ["bias", "weight_g", "weight_v"]
    nt.nn.utils.parametrizations.weight_norm(nmod)
    nmod.load_state_dict(legacy)
    assert_close(nmod.parametrizations.weight.original0, legacy["weight_g"])
    assert_close(nmod.parametrizations.weight.original1, legacy["weight_v"])


def test_weight_norm_function_matches_torch():
    v, g = arr(3, 4, 2), np.abs(arr(3, 1, 1, seed=1)) + 0.5
    for dim, gshape in ((0, (3, 1, 1)), (2, (1, 1, 2)), (-1, ())):
        gg = g.reshape(-1)[: int(np.prod(gshape))].reshape(gshape)
        got = nt._weight_norm(to_nt(v), to_nt(gg), dim)
        assert_close(got, torch._weight_norm(to_torch(v), to_torch(gg), dim), **TOL)


# ------------------------------------------------------------------ orthogonal
ORTH_CASES = [
    (shape, orth_map, triv)
    for shape in ((3, 5), (5, 3), (4, 4))
    for orth_map in ("matrix_exp", "cayley", "householder")
    for triv in (True, False)
]


@pytest.mark.parametrize("shape,orth_map,triv", ORTH_CASES)
def test_orthogonal_matches_torch(shape, orth_map, triv):
    tmod, nmod = _same_layers("Linear", shape[1], shape[0])
    torch.nn.utils.parametrizations.orthogonal(
        tmod, orthogonal_map=orth_map, use_trivialization=triv
    )
    nt.nn.utils.parametrizations.orthogonal(nmod, orthogonal_map=orth_map, use_trivialization=triv)
    _check_structure(tmod, nmod)
    if shape[0] == shape[1] or not triv:  # no random completion of the basis: right_inverse
        assert_close(dict(nmod.state_dict()), dict(tmod.state_dict()), **TOL)
    copy_weights(tmod, nmod)
    w = nmod.weight.detach().numpy()
    small = min(shape)
    gram = w.T @ w if shape[0] >= shape[1] else w @ w.T
    np.testing.assert_allclose(gram, np.eye(small), atol=1e-12)
    _check_forward_and_grads(tmod, nmod, arr(2, shape[1]))


def test_orthogonal_assignment_and_errors():
    def assign(lib, use_trivialization):
        m = lib.nn.utils.parametrizations.orthogonal(
            lib.nn.Linear(3, 3).double(), use_trivialization=use_trivialization
        )
        q, _ = lib.linalg.qr(lib.tensor(arr(3, 3)))
        m.weight = q
        return m.weight

    assert_close(assign(nt, True), assign(torch, True), **TOL)
    assert_same_error(assign, False)  # matrix_exp cannot be assigned without trivialization

    def bad(lib, kind):
        if kind == "vector":
            return lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(3, 3), "bias")
        if kind == "map":
            return lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(3, 3), None, "qr")
        if kind == "missing":
            return lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(3, 3), "nothing")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # torch's "complex modules are new"
            m = lib.nn.Linear(3, 3).to(lib.complex128)
        return lib.nn.utils.parametrizations.orthogonal(m, orthogonal_map="householder")

    for kind in ("vector", "map", "missing", "complex"):
        assert_same_error(bad, kind)


# ------------------------------------------------------------------ spectral_norm
@pytest.mark.parametrize(
    "name,args,x,kwargs",
    [
        ("Linear", (4, 3), arr(5, 4), {}),
        ("Linear", (4, 3), arr(5, 4), {"n_power_iterations": 3}),
        ("Conv2d", (2, 3, 3), arr(2, 2, 5, 5), {}),
        ("ConvTranspose2d", (2, 3, 3), arr(2, 2, 4, 4), {}),
    ],
)
@pytest.mark.parametrize("train", [True, False])
def test_spectral_norm_parametrization_matches_torch(name, args, x, kwargs, train):
    tmod, nmod = _same_layers(name, *args)
    torch.nn.utils.parametrizations.spectral_norm(tmod, **kwargs)
    nt.nn.utils.parametrizations.spectral_norm(nmod, **kwargs)
    _check_structure(tmod, nmod)
    copy_weights(tmod, nmod)  # the singular-vector estimates start from random draws
    tmod.train(train)
    nmod.train(train)
    for _ in range(2):  # in training mode each access takes a power-iteration step
        _check_forward_and_grads(tmod, nmod, x)
    assert_close(dict(nmod.state_dict()), dict(tmod.state_dict()), **TOL)


def test_spectral_norm_of_a_vector_and_its_errors():
    tmod, nmod = _same_layers("Linear", 4, 3)
    torch.nn.utils.parametrizations.spectral_norm(tmod, "bias")
    nt.nn.utils.parametrizations.spectral_norm(nmod, "bias")
    assert list(nmod.state_dict()) == list(tmod.state_dict())
    assert_close(nmod.bias, tmod.bias, **TOL)

    def bad(lib, kwargs):
        return lib.nn.utils.parametrizations.spectral_norm(lib.nn.Linear(3, 2), **kwargs)

    for kwargs in ({"dim": 2}, {"n_power_iterations": 0}, {"name": "nothing"}):
        assert_same_error(bad, kwargs)


# ------------------------------------------------------------------ parametrize
class _Symmetric:
    """A parametrization class for either library: the upper triangle mirrored."""

    @staticmethod
    def make(lib, with_inverse: bool = True):
        class Symmetric(lib.nn.Module):
            def forward(self, X):
                return X.triu() + X.triu(1).mT

        if with_inverse:
            Symmetric.right_inverse = lambda self, A: A.triu()
        return Symmetric()


def _scaled(lib, factor):
    class Scale(lib.nn.Module):
        def forward(self, X):
            return X * factor

        def right_inverse(self, A):
            return A / factor

    return Scale()


def test_chained_parametrizations_values_grads_and_assignment():
    tmod, nmod = _same_layers("Linear", 3, 3)
    for lib, m in ((torch, tmod), (nt, nmod)):
        weight = m.weight
        P = lib.nn.utils.parametrize
        P.register_parametrization(m, "weight", _Symmetric.make(lib))
        P.register_parametrization(m, "weight", _scaled(lib, 2.0))
        assert m.parametrizations.weight.original is weight  # the same Parameter, kept
        assert P.is_parametrized(m) and P.is_parametrized(m, "weight")
        assert not P.is_parametrized(m, "bias")
        assert P.type_before_parametrizations(m) is lib.nn.Linear
    _check_structure(tmod, nmod)
    _check_forward_and_grads(tmod, nmod, arr(4, 3))
    s = arr(3, 3, seed=3)
    tmod.weight, nmod.weight = to_torch(s + s.T), to_nt(s + s.T)
    assert_close(nmod.parametrizations.weight.original, tmod.parametrizations.weight.original)
    assert_close(nmod.weight, tmod.weight, **TOL)


@pytest.mark.parametrize("leave", [True, False])
def test_remove_parametrizations(leave):
    tmod, nmod = _same_layers("Linear", 3, 3)
    for lib, m in ((torch, tmod), (nt, nmod)):
        original = m.weight
        lib.nn.utils.parametrize.register_parametrization(m, "weight", _Symmetric.make(lib))
        lib.nn.utils.parametrize.remove_parametrizations(m, "weight", leave_parametrized=leave)
        assert m.weight is original and type(m) is lib.nn.Linear
        assert not hasattr(m, "parametrizations")
    assert_close(nmod.weight, tmod.weight)
    assert list(nmod.state_dict()) == list(tmod.state_dict())


def test_remove_weight_norm_parametrization():
    tmod, nmod = _same_layers("Linear", 3, 2)
    for lib, m in ((torch, tmod), (nt, nmod)):
        lib.nn.utils.parametrizations.weight_norm(m)
        lib.nn.utils.parametrize.remove_parametrizations(m, "weight")
        assert isinstance(m.weight, lib.nn.Parameter) and m.weight.requires_grad
    assert_close(nmod.weight, tmod.weight, **TOL)

    def keep_original(lib):
        m = lib.nn.utils.parametrizations.weight_norm(lib.nn.Linear(3, 2))
        lib.nn.utils.parametrize.remove_parametrizations(m, "weight", leave_parametrized=False)

    assert_same_error(keep_original)


def _flatten(lib):
    class Flat(lib.nn.Module):
        def forward(self, X):
            return X.flatten()

    return Flat()


def _to_float(lib):
    class ToFloat(lib.nn.Module):
        def forward(self, X):
            return X.float()

    return ToFloat()


def _not_tensor(lib):
    class Pair(lib.nn.Module):
        def forward(self, X):
            return X

        def right_inverse(self, X):
            return 3

    return Pair()


def _register(lib, make, name="weight", first=None, unsafe=False):
    m = lib.nn.Linear(3, 2).double()
    if first is not None:
        lib.nn.utils.parametrize.register_parametrization(m, name, first(lib))
    return lib.nn.utils.parametrize.register_parametrization(m, name, make(lib), unsafe=unsafe)


def _identity(lib):
    return lib.nn.Identity()


@pytest.mark.parametrize(
    "make,kwargs",
    [
        (_flatten, {}),
        (_to_float, {}),
        (_not_tensor, {}),
        (_identity, {"name": "nothing"}),
        (_flatten, {"first": _identity}),
        (_to_float, {"first": _identity}),
    ],
    ids=["shape", "dtype", "right_inverse", "missing", "appended-shape", "appended-dtype"],
)
def test_register_parametrization_errors(make, kwargs):
    assert_same_error(lambda lib: _register(lib, make, **kwargs))


def test_unsafe_allows_a_shape_change():
    for lib in (torch, nt):
        m = _register(lib, _flatten, unsafe=True)
        assert tuple(m.weight.shape) == (6,)
        assert m.parametrizations.weight.unsafe

    def remove_missing(lib):
        lib.nn.utils.parametrize.remove_parametrizations(lib.nn.Linear(2, 2), "weight")

    assert_same_error(remove_missing)


def test_cached_computes_once():
    calls = []

    class Counting(nt.nn.Module):
        def forward(self, X):
            calls.append(1)
            return X * 2

    m = nt.nn.Linear(3, 3)
    nt.nn.utils.parametrize.register_parametrization(m, "weight", Counting())
    calls.clear()
    with nt.nn.utils.parametrize.cached():
        a, b = m.weight, m.weight
        with nt.nn.utils.parametrize.cached():
            c = m.weight
    assert len(calls) == 1 and a is b is c
    d = m.weight
    assert len(calls) == 2 and d is not a


def test_transfer_parametrizations_and_params():
    for lib in (torch, nt):
        P = lib.nn.utils.parametrize
        src = lib.nn.utils.parametrizations.weight_norm(lib.nn.Linear(3, 2))
        dst = P.transfer_parametrizations_and_params(src, lib.nn.Linear(3, 2))
        assert dst.parametrizations.weight.original0 is src.parametrizations.weight.original0
        assert dst.parametrizations.weight.original1 is src.parametrizations.weight.original1
        assert type(dst).__name__ == "ParametrizedLinear"
        plain = lib.nn.Linear(3, 2)
        assert P.transfer_parametrizations_and_params(plain, lib.nn.Linear(3, 2)) is not plain


def test_deepcopy_works_and_pickling_refuses():
    m = nt.nn.utils.parametrizations.weight_norm(nt.nn.Linear(3, 2))
    twin = copy.deepcopy(m)
    assert type(twin) is type(m)
    assert twin.parametrizations.weight.original1 is not m.parametrizations.weight.original1
    assert_close(twin.weight, m.weight)
    t = torch.nn.utils.parametrizations.weight_norm(torch.nn.Linear(3, 2))
    with pytest.raises(RuntimeError) as theirs:
        pickle.dumps(t)
    with pytest.raises(RuntimeError) as ours:
        pickle.dumps(m)
    assert str(ours.value) == str(theirs.value)


# ------------------------------------------------------------------ transforms
def _per_sample_grads(lib, m, x, y):
    params = {k: v.detach() for k, v in m.named_parameters()}

    def loss(p, xi, yi):
        out = lib.func.functional_call(m, p, (xi.unsqueeze(0),))
        return ((out - yi) ** 2).sum()

    return lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(params, x, y)


def test_per_sample_grads_through_weight_norm_match_torch():
    tmod, nmod = _same_layers("Linear", 4, 3)
    torch.nn.utils.parametrizations.weight_norm(tmod)
    nt.nn.utils.parametrizations.weight_norm(nmod)
    x, y = arr(6, 4), arr(6, 3, seed=1)
    got = _per_sample_grads(nt, nmod, to_nt(x), to_nt(y))
    want = _per_sample_grads(torch, tmod, to_torch(x), to_torch(y))
    assert (
        sorted(got)
        == sorted(want)
        == [
            "bias",
            "parametrizations.weight.original0",
            "parametrizations.weight.original1",
        ]
    )
    assert_close(got, want, **TOL)


def test_functional_call_with_a_new_original():
    tmod, nmod = _same_layers("Linear", 3, 3)
    for lib, m in ((torch, tmod), (nt, nmod)):
        lib.nn.utils.parametrize.register_parametrization(m, "weight", _Symmetric.make(lib))
    w, x = arr(3, 3, seed=5), arr(2, 3)
    key = "parametrizations.weight.original"
    tout = torch.func.functional_call(tmod, {key: to_torch(w, True)}, (to_torch(x),))
    nout = nt.func.functional_call(nmod, {key: to_nt(w, True)}, (to_nt(x),))
    assert_close(nout, tout, **TOL)
    assert_close(nmod.parametrizations.weight.original, tmod.parametrizations.weight.original)

    def jac(lib, m):
        f = lambda w: lib.func.functional_call(m, {key: w}, (lib.tensor(x),))  # noqa: E731
        return lib.func.jacrev(f)(lib.tensor(w))

    assert_close(jac(nt, nmod), jac(torch, tmod), **TOL)


def test_functional_call_by_the_plain_name_bypasses_the_parametrization():
    """PyTorch's documented rule: a value under the parametrized tensor's own name is used
    as it is (the parametrization is off for the call), and the module is left unchanged."""
    tmod, nmod = _same_layers("Linear", 3, 2)
    for lib, m in ((torch, tmod), (nt, nmod)):
        lib.nn.utils.parametrizations.weight_norm(m)
    w, x = arr(2, 3, seed=7), arr(4, 3)
    tout = torch.func.functional_call(tmod, {"weight": to_torch(w)}, (to_torch(x),))
    nout = nt.func.functional_call(nmod, {"weight": to_nt(w)}, (to_nt(x),))
    assert_close(nout, tout, **TOL)
    assert_close(nmod.weight, tmod.weight, **TOL)  # the parametrization is back afterwards
    assert "weight" not in vars(nmod)
    # (torch's backward here fails on a version bump of its own making; finite differences)
    got = nt.func.grad(lambda w: nt.func.functional_call(nmod, {"weight": w}, (to_nt(x),)).sum())(
        to_nt(w)
    )
    np.testing.assert_allclose(got.numpy(), np.broadcast_to(x.sum(0), (2, 3)), rtol=1e-12)


def test_vmap_over_orthogonal_originals():
    tmod, nmod = _same_layers("Linear", 3, 3)
    torch.nn.utils.parametrizations.orthogonal(tmod, orthogonal_map="cayley")
    nt.nn.utils.parametrizations.orthogonal(nmod, orthogonal_map="cayley")
    copy_weights(tmod, nmod)
    ws, x = arr(4, 3, 3, seed=2), arr(2, 3)
    key = "parametrizations.weight.original"

    def batched(lib, m):
        def f(w):
            return lib.func.functional_call(m, {key: w}, (lib.tensor(x),)).sum()

        return lib.func.vmap(lib.func.grad(f))(lib.tensor(ws))

    assert_close(batched(nt, nmod), batched(torch, tmod), **TOL)


# ------------------------------------------------------------------ legacy hook forms
def _legacy(lib, fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return getattr(lib.nn.utils, fn)(*args, **kwargs)


@pytest.mark.parametrize("dim", [0, 1, None])
def test_legacy_weight_norm_matches_torch(dim):
    tmod, nmod = _same_layers("Linear", 4, 3)
    _legacy(torch, "weight_norm", tmod, dim=dim)
    with pytest.warns(FutureWarning, match="torch.nn.utils.parametrizations.weight_norm"):
        nt.nn.utils.weight_norm(nmod, dim=dim)
    _check_structure(tmod, nmod)
    assert list(nmod.state_dict()) == ["bias", "weight_g", "weight_v"]
    assert_close(dict(nmod.state_dict()), dict(tmod.state_dict()), **TOL)
    _check_forward_and_grads(tmod, nmod, arr(5, 4))
    for lib, m in ((torch, tmod), (nt, nmod)):
        lib.nn.utils.remove_weight_norm(m)
    _check_structure(tmod, nmod)
    assert_close(nmod.weight, tmod.weight, **TOL)


def test_legacy_weight_norm_errors():
    def twice(lib):
        m = _legacy(lib, "weight_norm", lib.nn.Linear(2, 2))
        _legacy(lib, "weight_norm", m)

    def remove_missing(lib):
        lib.nn.utils.remove_weight_norm(lib.nn.Linear(2, 2))

    assert_same_error(twice)
    assert_same_error(remove_missing)


@pytest.mark.parametrize(
    "name,args,x", [("Linear", (4, 3), arr(5, 4)), ("ConvTranspose2d", (2, 3, 3), arr(1, 2, 4, 4))]
)
@pytest.mark.parametrize("train", [True, False])
def test_legacy_spectral_norm_matches_torch(name, args, x, train):
    tmod, nmod = _same_layers(name, *args)
    torch.nn.utils.spectral_norm(tmod)
    nt.nn.utils.spectral_norm(nmod)
    _check_structure(tmod, nmod)
    assert list(nmod.state_dict()) == list(tmod.state_dict())
    copy_weights(tmod, nmod)
    assert nmod.state_dict()._metadata[""]["spectral_norm"] == {"weight.version": 1}
    tmod.train(train)
    nmod.train(train)
    for _ in range(2):
        _check_forward_and_grads(tmod, nmod, x)
    assert_close(dict(nmod.state_dict()), dict(tmod.state_dict()), **TOL)
    for lib, m in ((torch, tmod), (nt, nmod)):
        lib.nn.utils.remove_spectral_norm(m)
        assert not m._state_dict_hooks
    _check_structure(tmod, nmod)
    assert_close(nmod.weight, tmod.weight, **TOL)


def test_legacy_spectral_norm_upgrades_a_version_0_state_dict():
    tmod, nmod = _same_layers("Linear", 4, 3)
    torch.nn.utils.spectral_norm(tmod)
    nt.nn.utils.spectral_norm(nmod)
    tmod(torch.tensor(arr(2, 4)))
    old = {k: v.detach().clone() for k, v in tmod.state_dict().items() if k != "weight_v"}
    old["weight"] = tmod.weight.detach().clone()  # version 0 kept the weight, not v
    ours = {k: to_nt(v.numpy()) for k, v in old.items()}
    for m, sd in ((tmod, old), (nmod, ours)):
        state = OrderedDict(sd)
        state._metadata = {"": {"version": 1}}
        m.load_state_dict(state)
    assert_close(nmod.weight_v, tmod.weight_v, **TOL)


def test_legacy_spectral_norm_removal_keeps_the_load_hook():
    def reload(lib):
        m = lib.nn.utils.spectral_norm(lib.nn.Linear(3, 2))
        lib.nn.utils.remove_spectral_norm(m)
        m.load_state_dict(m.state_dict())

    assert_same_error(reload)


def test_legacy_spectral_norm_errors():
    def twice(lib):
        m = lib.nn.utils.spectral_norm(lib.nn.Linear(2, 2))
        lib.nn.utils.spectral_norm(m)

    def no_bias(lib):
        lib.nn.utils.spectral_norm(lib.nn.Linear(2, 2, bias=False), "bias")

    def remove_missing(lib):
        lib.nn.utils.remove_spectral_norm(lib.nn.Linear(2, 2))

    def bad_iterations(lib):
        lib.nn.utils.spectral_norm(lib.nn.Linear(2, 2), n_power_iterations=0)

    for prog in (twice, no_bias, remove_missing, bad_iterations):
        assert_same_error(prog)
