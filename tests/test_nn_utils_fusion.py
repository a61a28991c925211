"""nn.utils.fusion (conv/linear with batch norm), skip_init, the conv weight memory-format
converters, and the names of torch.nn.utils, against torch."""

from __future__ import annotations

import pytest
import torch
from twolibs import LAYER_ATOL, LAYER_RTOL, arr, assert_close, assert_same_error, to_nt, to_torch
from twomods import copy_weights

import numtorch as nt

TOL = {"rtol": LAYER_RTOL, "atol": LAYER_ATOL}


def _trained_bn(lib, cls, n, affine=True):
    """A batch norm in eval mode with non-trivial running statistics and affine weights."""
    lib.manual_seed(0)
    bn = getattr(lib.nn, cls)(n, affine=affine).double()
    with lib.no_grad():
        bn.running_mean.copy_(lib.tensor(arr(n, seed=1)))
        bn.running_var.copy_(lib.tensor(arr(n, seed=2) ** 2 + 0.5))
        if affine:
            bn.weight.copy_(lib.tensor(arr(n, seed=3)))
            bn.bias.copy_(lib.tensor(arr(n, seed=4)))
    return bn.eval()


def _pair(name, *args, **kwargs):
    torch.manual_seed(0)
    tmod = getattr(torch.nn, name)(*args, **kwargs).double().eval()
    nmod = getattr(nt.nn, name)(*args, **kwargs).double().eval()
    copy_weights(tmod, nmod)
    return tmod, nmod


@pytest.mark.parametrize(
    "name,args,kwargs,bn,x,transpose",
    [
        ("Conv2d", (2, 3, 3), {}, "BatchNorm2d", arr(2, 2, 5, 5), False),
        ("Conv2d", (2, 3, 3), {"bias": False}, "BatchNorm2d", arr(2, 2, 5, 5), False),
        ("Conv1d", (2, 4, 2), {}, "BatchNorm1d", arr(2, 2, 6), False),
        ("ConvTranspose2d", (2, 3, 3), {}, "BatchNorm2d", arr(1, 2, 4, 4), True),
    ],
)
@pytest.mark.parametrize("affine", [True, False])
def test_fuse_conv_bn_eval_matches_torch(name, args, kwargs, bn, x, transpose, affine):
    tconv, nconv = _pair(name, *args, **kwargs)
    out_channels = args[1]
    tbn, nbn = (
        _trained_bn(torch, bn, out_channels, affine),
        _trained_bn(nt, bn, out_channels, affine),
    )
    tf = torch.nn.utils.fuse_conv_bn_eval(tconv, tbn, transpose)
    nf = nt.nn.utils.fuse_conv_bn_eval(nconv, nbn, transpose)
    assert type(nf) is type(nconv) and nf is not nconv
    assert isinstance(nf.weight, nt.nn.Parameter) and isinstance(nf.bias, nt.nn.Parameter)
    assert_close(dict(nf.state_dict()), dict(tf.state_dict()), **TOL)
    assert_close(nf(to_nt(x)), nbn(nconv(to_nt(x))), **TOL)
    assert_close(nconv.weight, tconv.weight)  # the original is left alone


def test_fuse_linear_bn_eval_matches_torch():
    tlin, nlin = _pair("Linear", 4, 3)
    tbn, nbn = _trained_bn(torch, "BatchNorm1d", 3), _trained_bn(nt, "BatchNorm1d", 3)
    tf = torch.nn.utils.fuse_linear_bn_eval(tlin, tbn)
    nf = nt.nn.utils.fuse_linear_bn_eval(nlin, nbn)
    assert_close(dict(nf.state_dict()), dict(tf.state_dict()), **TOL)
    x = arr(5, 4)
    assert_close(nf(to_nt(x)), nbn(nlin(to_nt(x))), **TOL)


def test_fuse_weights_keep_requires_grad_and_dtype():
    def fuse(lib):
        w = lib.tensor(arr(3, 2, 2), dtype=lib.float32, requires_grad=True)
        rm, rv = lib.tensor(arr(3, seed=1)), lib.tensor(arr(3, seed=2) ** 2 + 1)
        fw, fb = lib.nn.utils.fuse_conv_bn_weights(w, None, rm, rv, 1e-5, None, None)
        lw, lb = lib.nn.utils.fuse_linear_bn_weights(
            w[:, :, 0], None, rm, rv, 1e-5, lib.ones(3, dtype=lib.float64), rm
        )
        return [fw, fb, lw, lb], [(t.dtype, t.requires_grad) for t in (fw, fb, lw, lb)]

    (ours, meta), (theirs, tmeta) = fuse(nt), fuse(torch)
    assert [(str(d).split(".")[-1], r) for d, r in meta] == [
        (str(d).split(".")[-1], r) for d, r in tmeta
    ]
    assert_close([t.detach() for t in ours], [t.detach() for t in theirs], rtol=1e-6, atol=1e-6)


def test_fusion_errors():
    def training(lib):
        lib.nn.utils.fuse_conv_bn_eval(lib.nn.Conv2d(2, 3, 1), lib.nn.BatchNorm2d(3))

    def no_stats(lib):
        bn = lib.nn.BatchNorm2d(3, track_running_stats=False).eval()
        lib.nn.utils.fuse_conv_bn_eval(lib.nn.Conv2d(2, 3, 1).eval(), bn)

    def features(lib):
        lib.nn.utils.fuse_linear_bn_eval(lib.nn.Linear(2, 3).eval(), lib.nn.BatchNorm1d(4).eval())

    for prog in (training, no_stats, features):
        assert_same_error(prog)


def test_skip_init():
    m = nt.nn.utils.skip_init(nt.nn.Linear, 4, 3, bias=False, dtype=nt.float64)
    assert type(m) is nt.nn.Linear and tuple(m.weight.shape) == (3, 4) and m.bias is None
    assert m.weight.dtype == nt.float64

    def built_on(lib):
        class Recorder(lib.nn.Module):
            def __init__(self, n, device=None):
                super().__init__()
                self.w = lib.nn.Parameter(lib.ones(n, device=device))
                self.seen = self.w.device.type  # where the initializer ran

        r = lib.nn.utils.skip_init(Recorder, 5)
        return r.seen, r.w.device.type, tuple(r.w.shape), r.w.requires_grad

    assert built_on(nt) == built_on(torch) == ("meta", "cpu", (5,), True)

    class NoDevice:
        pass

    def not_a_module(lib):
        lib.nn.utils.skip_init(NoDevice)

    def no_device_arg(lib):
        lib.nn.utils.skip_init(lib.nn.ReLU)

    assert_same_error(no_device_arg)
    assert_same_error(not_a_module)


@pytest.mark.parametrize("which", ["2d", "3d"])
def test_convert_conv_weight_memory_format_keeps_values(which):
    shape = (1, 2, 3, 3) if which == "2d" else (1, 2, 3, 3, 3)
    name = "Conv2d" if which == "2d" else "Conv3d"
    model = nt.nn.Sequential(getattr(nt.nn, name)(2, 3, 2), nt.nn.ReLU())
    weight = model[0].weight
    before = weight.detach().clone()
    convert = getattr(nt.nn.utils, f"convert_conv{which}_weight_memory_format")
    assert convert(model, None) is model
    assert model[0].weight is weight and isinstance(weight, nt.nn.Parameter)
    assert_close(weight.detach(), before)
    assert tuple(model(nt.tensor(arr(*shape), dtype=nt.float32)).shape)[:2] == (1, 3)


def test_nn_utils_names_match_torch():
    public = {n for n in dir(torch.nn.utils) if not n.startswith("_")}
    assert sorted(public - set(dir(nt.nn.utils))) == []
    assert sorted(nt.nn.utils.__all__) == sorted(torch.nn.utils.__all__)
    for module in ("parametrize", "parametrizations", "fusion", "spectral_norm", "weight_norm"):
        ours = __import__(f"numtorch.nn.utils.{module}", fromlist=["__all__"])
        theirs = __import__(f"torch.nn.utils.{module}", fromlist=["__all__"])
        assert sorted(ours.__all__) == sorted(theirs.__all__)


def test_weight_norm_conv_output_matches_torch_in_float32():
    tconv, nconv = _pair("Conv2d", 2, 3, 3)
    tconv.float()
    nconv.float()
    torch.nn.utils.parametrizations.weight_norm(tconv)
    nt.nn.utils.parametrizations.weight_norm(nconv)
    x = arr(1, 2, 4, 4)
    got = nconv(to_nt(x).float())
    assert_close(got, tconv(to_torch(x).float()), rtol=1e-5, atol=1e-6)
