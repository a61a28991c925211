"""functorch's make_functional, make_functional_with_buffers and combine_state_for_ensemble
(numtorch.functorch) against the installed functorch."""

import warnings

import functorch
import numpy as np
import pytest
import torch
from twolibs import arr, assert_close, to_nt, to_torch

import numtorch as nt
import numtorch.functorch as nft


def _pair(seed=0):
    """The same MLP with batch norm in both libraries."""
    mods = []
    for lib in (nt, torch):
        lib.manual_seed(seed)
        m = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.Linear(4, 2))
        mods.append(m)
    mods[0].load_state_dict({k: to_nt(v.detach().numpy()) for k, v in mods[1].state_dict().items()})
    return mods


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_make_functional_with_buffers_and_grad():
    x = arr(5, 3).astype(np.float32)
    out = []
    for mod, ft, to in zip(_pair(), (nft, functorch), (to_nt, to_torch)):
        func, params, buffers = ft.make_functional_with_buffers(mod)
        assert type(func).__name__ == "FunctionalModuleWithBuffers"
        grads = ft.grad(lambda p, b, x: func(p, b, x).square().sum())(params, buffers, to(x))
        out.append(([p.detach().numpy() for p in params], [g.detach().numpy() for g in grads]))
    assert_close(out[0], out[1], rtol=1e-5, atol=1e-6)


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_make_functional_refuses_buffers():
    mod, tmod = _pair()
    for ft, m in ((nft, mod), (functorch, tmod)):
        with pytest.raises(RuntimeError, match="has buffers. Please use make_functional_with"):
            ft.make_functional(m)
    lin = nt.nn.Linear(3, 3)
    func, params = nft.make_functional(lin, disable_autograd_tracking=True)
    assert [p.requires_grad for p in params] == [False, False]
    x = nt.tensor(arr(2, 3).astype(np.float32))
    assert_close(func(params, x).detach().numpy(), lin(x).detach().numpy())


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_combine_state_for_ensemble_with_vmap():
    x = arr(6, 3).astype(np.float32)
    results = []
    for lib, ft in ((nt, nft), (torch, functorch)):
        lib.manual_seed(0)
        models = [lib.nn.Linear(3, 2) for _ in range(4)]
        for i, m in enumerate(models):
            with lib.no_grad():
                m.weight.copy_(lib.tensor(arr(2, 3, seed=i)))
                m.bias.copy_(lib.tensor(arr(2, seed=10 + i)))
        fmodel, params, buffers = ft.combine_state_for_ensemble(models)
        assert [p.shape[0] for p in params] == [4, 4] and not params[0].requires_grad
        results.append(ft.vmap(fmodel, (0, 0, None))(params, buffers, lib.tensor(x)).numpy())
    assert_close(results[0], results[1], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("models", ["none", "modes", "classes"])
@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_combine_state_for_ensemble_errors(models):
    texts = []
    for lib, ft in ((nt, nft), (torch, functorch)):
        ms = {
            "none": [],
            "modes": [lib.nn.Linear(2, 2), lib.nn.Linear(2, 2).eval()],
            "classes": [lib.nn.Linear(2, 2), lib.nn.Tanh()],
        }[models]
        with pytest.raises(RuntimeError) as e:
            ft.combine_state_for_ensemble(ms)
        texts.append(str(e.value))
    assert texts[0] == texts[1]


@pytest.mark.parametrize("name", ["vmap", "grad", "jacrev", "jacfwd", "hessian", "functionalize"])
def test_functorch_names_warn_as_functorch_does(name):
    texts = []
    for ft in (nft, functorch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            getattr(ft, name)(lambda x: x)
        texts.append([(r.category, str(r.message)) for r in w])
    assert texts[0] == texts[1] and texts[0][0][0] is FutureWarning


def test_functorch_exports():
    assert set(nft.__all__) <= set(dir(nft))
    assert np.all([callable(getattr(nft, n)) for n in nft.__all__])
