"""One layer, two libraries: build ``torch.nn.<Name>(...)`` and ``numtorch.nn.<Name>(...)``
with the same arguments and the same weights, then compare what they print, hold and
compute.

    pair(name, *args, **kwargs)           (torch module, numtorch module), torch's weights
                                          copied into ours; float64 unless dtype= is given
    copy_weights(tmod, nmod)              torch's state dict loaded into ours (strict)
    check_module(name, args, kwargs, inputs, ...)
                                          repr, state-dict keys and shapes, parameter names,
                                          forward outputs, and gradients with respect to
                                          the float inputs and every parameter, for one
                                          random cotangent per float output; device= runs
                                          ours there (torch's stays on the CPU)

Inputs are NumPy arrays (float arrays become float64 tensors that require grad) or any
other value passed unchanged. Modules run in training mode unless train=False. The
conversions (to_nt, to_torch), the comparison and the tolerances (LAYER_RTOL, LAYER_ATOL)
are twolibs's.
"""

from __future__ import annotations

import numpy as np
import torch
from twolibs import LAYER_ATOL, LAYER_RTOL, assert_close, leaves, to_nt, to_torch

import numtorch as nt


def copy_weights(tmod: torch.nn.Module, nmod: nt.nn.Module) -> None:
    """Load torch's parameters and persistent buffers into ours, keys matching exactly."""
    state = {k: nt.tensor(v.detach().numpy().copy()) for k, v in tmod.state_dict().items()}
    nmod.load_state_dict(state, strict=True)


def pair(name: str, *args, dtype: str = "float64", seed: int = 0, **kwargs):
    """The same layer in both libraries, torch's (seeded) weights copied into ours."""
    torch.manual_seed(seed)
    tmod = getattr(torch.nn, name)(*args, **kwargs).to(getattr(torch, dtype))
    nmod = getattr(nt.nn, name)(*args, **kwargs).to(getattr(nt, dtype))
    copy_weights(tmod, nmod)
    return tmod, nmod


def _on(x, device: str, grads: bool):
    """``to_nt(x)`` on ``device``; float tensors are leaves there that require grad when
    ``grads``."""
    if isinstance(x, (list, tuple)):
        return type(x)(_on(v, device, grads) for v in x)
    t = to_nt(x)
    if not isinstance(t, nt.Tensor):
        return t
    t = t.to(device)
    return t.requires_grad_(True) if grads and t.dtype.is_floating_point else t


def _assert_on(device: str, tensors) -> None:
    where = {t.device.type for t in tensors if t is not None}
    assert where <= {nt.device(device).type}, f"expected {device}, got {where}"


def _float_tensors(x) -> list:
    return [t for t in leaves(x) if hasattr(t, "dtype") and t.dtype.is_floating_point]


def check_module(
    name: str,
    args: tuple = (),
    kwargs: dict | None = None,
    inputs: tuple = (),
    *,
    forward_kwargs: dict | None = None,
    train: bool = True,
    grads: bool = True,
    rtol: float = LAYER_RTOL,
    atol: float = LAYER_ATOL,
    seed: int = 0,
    device: str = "cpu",
):
    """Compare the layer ``name(*args, **kwargs)`` of both libraries on ``inputs``, ours on
    ``device`` (its outputs and gradients must stay there); returns (torch module, numtorch
    module) for further checks."""
    tmod, nmod = pair(name, *args, seed=seed, **(kwargs or {}))
    nmod.to(device)
    assert repr(nmod) == repr(tmod)
    tsd, nsd = tmod.state_dict(), nmod.state_dict()
    assert list(nsd) == list(tsd)
    assert [tuple(v.shape) for v in nsd.values()] == [tuple(v.shape) for v in tsd.values()]
    assert [n for n, _ in nmod.named_parameters()] == [n for n, _ in tmod.named_parameters()]
    tmod.train(train)
    nmod.train(train)
    fkw = forward_kwargs or {}
    tin = [to_torch(x, grads) for x in inputs]
    nin = [_on(x, device, grads) for x in inputs]
    tout = tmod(*tin, **{k: to_torch(v) for k, v in fkw.items()})
    nout = nmod(*nin, **{k: _on(v, device, False) for k, v in fkw.items()})
    _assert_on(device, [t for t in leaves(nout) if isinstance(t, nt.Tensor)])
    assert_close(nout, tout, rtol=rtol, atol=atol)
    if not grads:
        return tmod, nmod
    touts, nouts = _float_tensors(tout), _float_tensors(nout)
    touts = [o for o in touts if o.requires_grad]
    nouts = [o for o in nouts if o.requires_grad]
    assert len(touts) == len(nouts)
    if not touts:
        return tmod, nmod
    rng = np.random.default_rng(seed + 1)
    cots = [rng.standard_normal(tuple(o.shape)) for o in touts]
    tw = [p for p in (*_float_tensors(tin), *tmod.parameters()) if p.requires_grad]
    nw = [p for p in (*_float_tensors(nin), *nmod.parameters()) if p.requires_grad]
    tg = torch.autograd.grad(
        touts,
        tw,
        [torch.tensor(c, dtype=o.dtype) for c, o in zip(cots, touts)],
        allow_unused=True,
    )
    ng = nt.autograd.grad(
        nouts,
        nw,
        [nt.tensor(c, dtype=o.dtype, device=device) for c, o in zip(cots, nouts)],
        allow_unused=True,
    )
    _assert_on(device, ng)
    assert_close(list(ng), list(tg), rtol=rtol, atol=atol)
    return tmod, nmod
