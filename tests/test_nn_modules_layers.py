"""The shape layers against torch's on the same weights and data: Identity, Linear,
Bilinear, the lazy layers, Flatten/Unflatten, Fold/Unfold, PixelShuffle/Unshuffle,
ChannelShuffle, Upsample, the convolutions, every pool and unpool, every padding layer.
Outputs, input and parameter gradients, repr and state-dict keys (check_module), default
initialization statistics, and error texts."""

from __future__ import annotations

import copy
import math
import pickle
import re

import numpy as np
import pytest
import torch
from twolibs import arr, assert_close, assert_same_error, error_of
from twomods import check_module, copy_weights, pair

import numtorch as nt


def pos(*shape, seed=0):
    """Positive data (the power-average pools with a fractional p)."""
    return np.abs(arr(*shape, seed=seed)) + 0.5


# (layer, constructor args, constructor kwargs, inputs[, forward kwargs])
CASES = [
    ("Identity", (3,), {"unused": 1}, (arr(2, 3),)),
    ("Linear", (3, 4), {}, (arr(2, 3),)),
    ("Linear", (3, 2), {"bias": False}, (arr(2, 1, 3),)),
    ("Linear", (3, 2), {}, (arr(3),)),
    ("Bilinear", (3, 2, 4), {}, (arr(2, 3), arr(2, 2, seed=1))),
    ("Bilinear", (2, 2, 1), {"bias": False}, (arr(3, 2), arr(3, 2, seed=1))),
    ("Flatten", (), {}, (arr(2, 3, 2),)),
    ("Flatten", (0, -2), {}, (arr(2, 3, 2),)),
    ("Unflatten", (1, (2, 3)), {}, (arr(2, 6),)),
    ("Unflatten", (-1, [2, -1]), {}, (arr(2, 4),)),
    ("Fold", ((3, 4), (2, 2)), {}, (arr(2, 8, 6),)),
    ("Fold", (5, 2), {"stride": 2, "padding": 1, "dilation": 1}, (arr(1, 4, 9),)),
    ("Unfold", ((2, 3),), {"padding": 1, "stride": 2, "dilation": (1, 2)}, (arr(2, 2, 4, 5),)),
    ("PixelShuffle", (2,), {}, (arr(1, 8, 2, 3),)),
    ("PixelUnshuffle", (2,), {}, (arr(2, 4, 6),)),
    ("ChannelShuffle", (2,), {}, (arr(1, 4, 2, 2),)),
    ("Upsample", (), {"scale_factor": 2}, (arr(1, 2, 3),)),
    ("Upsample", ((4, 5),), {"mode": "bilinear"}, (arr(1, 2, 3, 3),)),
    (
        "Upsample",
        (),
        {"scale_factor": (2, 1.5), "mode": "bicubic", "align_corners": True},
        (arr(1, 1, 3, 4),),
    ),
    (
        "Upsample",
        (),
        {"scale_factor": 1.5, "mode": "trilinear", "recompute_scale_factor": True},
        (arr(1, 1, 2, 3, 2),),
    ),
    ("Upsample", (3,), {"mode": "nearest-exact"}, (arr(1, 1, 5),)),
    ("Upsample", ((2, 3),), {"mode": "area"}, (arr(1, 2, 4, 5),)),
    ("UpsamplingNearest2d", (), {"scale_factor": 2}, (arr(1, 2, 2, 3),)),
    ("UpsamplingBilinear2d", ((5, 4),), {}, (arr(1, 1, 3, 2),)),
    # convolutions
    ("Conv1d", (2, 4, 3), {"stride": 2, "padding": 1}, (arr(2, 2, 7),)),
    (
        "Conv1d",
        (4, 4, 3),
        {"padding": "same", "dilation": 2, "groups": 2, "bias": False, "padding_mode": "circular"},
        (arr(1, 4, 6),),
    ),
    ("Conv2d", (2, 3, (2, 3)), {"padding": "valid"}, (arr(2, 2, 4, 5),)),
    ("Conv2d", (2, 4, 3), {"padding": 1, "padding_mode": "reflect"}, (arr(2, 4, 4),)),
    (
        "Conv2d",
        (2, 2, 3),
        {"padding": (1, 2), "stride": (1, 2), "padding_mode": "replicate"},
        (arr(1, 2, 4, 5),),
    ),
    ("Conv2d", (2, 2, (2, 3)), {"padding": "same", "padding_mode": "reflect"}, (arr(1, 2, 4, 5),)),
    ("Conv2d", (2, 2, (2, 4)), {"padding": "same", "dilation": (2, 1)}, (arr(1, 2, 4, 5),)),
    ("Conv3d", (2, 2, 2), {"padding": 1}, (arr(1, 2, 3, 3, 2),)),
    (
        "Conv3d",
        (2, 4, (1, 2, 2)),
        {"groups": 2, "padding": "same", "padding_mode": "circular"},
        (arr(1, 2, 2, 3, 3),),
    ),
    ("ConvTranspose1d", (2, 4, 3), {"stride": 2, "output_padding": 1}, (arr(2, 2, 4),)),
    (
        "ConvTranspose2d",
        (4, 2, 3),
        {"stride": 2, "padding": 1, "groups": 2, "dilation": 2},
        (arr(1, 4, 3, 3),),
    ),
    (
        "ConvTranspose2d",
        (2, 3, 3),
        {"stride": 2, "padding": 1, "bias": False},
        (arr(2, 3, 3),),
        {"output_size": [6, 6]},
    ),
    (
        "ConvTranspose2d",
        (2, 3, 2),
        {"stride": 3},
        (arr(1, 2, 2, 2),),
        {"output_size": [1, 3, 6, 5]},
    ),
    ("ConvTranspose3d", (2, 2, 2), {"stride": (2, 1, 1)}, (arr(1, 2, 2, 2, 2),)),
    # pools
    ("MaxPool1d", (2,), {}, (arr(2, 2, 5),)),
    ("MaxPool2d", (3,), {"stride": 2, "padding": 1, "ceil_mode": True}, (arr(1, 2, 5, 5),)),
    ("MaxPool2d", ((2, 1),), {"return_indices": True, "dilation": (1, 2)}, (arr(2, 4, 5),)),
    ("MaxPool3d", (2,), {"stride": 1}, (arr(1, 1, 3, 3, 3),)),
    ("AvgPool1d", (3,), {"stride": 2, "padding": 1, "count_include_pad": False}, (arr(2, 2, 6),)),
    ("AvgPool2d", (2,), {"ceil_mode": True, "divisor_override": 3}, (arr(1, 2, 5, 5),)),
    ("AvgPool2d", ((2, 3),), {"stride": 1, "padding": 1}, (arr(2, 3, 4),)),
    ("AvgPool3d", (2,), {"stride": (1, 2, 2)}, (arr(1, 1, 3, 4, 4),)),
    ("LPPool1d", (2, 3), {"stride": 1}, (arr(2, 2, 5),)),
    ("LPPool2d", (1.5, 2), {"ceil_mode": True}, (pos(1, 2, 5, 4),)),
    ("LPPool3d", (3, 2), {}, (pos(1, 1, 4, 4, 2),)),
    ("AdaptiveMaxPool1d", (3,), {}, (arr(2, 2, 7),)),
    ("AdaptiveMaxPool2d", ((2, None),), {"return_indices": True}, (arr(1, 2, 5, 3),)),
    ("AdaptiveMaxPool3d", (2,), {}, (arr(1, 1, 3, 4, 3),)),
    ("AdaptiveAvgPool1d", (2,), {}, (arr(2, 2, 5),)),
    ("AdaptiveAvgPool2d", ((None, 3),), {}, (arr(2, 4, 5),)),
    ("AdaptiveAvgPool3d", ((1, 2, 2),), {}, (arr(1, 2, 3, 3, 5),)),
    # padding
    ("ZeroPad1d", (2,), {}, (arr(1, 2, 3),)),
    ("ZeroPad2d", ((1, 0, 2, 1),), {}, (arr(2, 3, 3),)),
    ("ZeroPad3d", (1,), {}, (arr(1, 1, 2, 2, 2),)),
    ("ConstantPad1d", ((2, 1), 1.5), {}, (arr(2, 3),)),
    ("ConstantPad2d", (1, -2.0), {}, (arr(1, 2, 2, 3),)),
    ("ConstantPad3d", ((1, 0, 0, 1, 2, 0), 0.5), {}, (arr(1, 2, 2, 2),)),
    ("ReflectionPad1d", ((2, 1),), {}, (arr(1, 2, 4),)),
    ("ReflectionPad2d", (1,), {}, (arr(2, 3, 3),)),
    ("ReflectionPad3d", ((1, 0, 1, 1, 0, 1),), {}, (arr(1, 1, 2, 3, 3),)),
    ("ReplicationPad1d", (2,), {}, (arr(2, 3),)),
    ("ReplicationPad2d", ((0, 2, 1, 0),), {}, (arr(1, 2, 2, 3),)),
    ("ReplicationPad3d", (1,), {}, (arr(1, 2, 2, 2),)),
    ("CircularPad1d", (2,), {}, (arr(1, 2, 3),)),
    ("CircularPad2d", ((1, 0, 2, 1),), {}, (arr(2, 3, 3),)),
    ("CircularPad3d", (1,), {}, (arr(1, 1, 2, 2, 2),)),
]


def _case_id(case) -> str:
    return case[0] + "-" + "-".join(map(str, case[1])) + "".join(f"-{k}" for k in case[2])


@pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel")  # both warn
@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_layer_against_torch(case, dev):
    name, args, kwargs, inputs, *rest = case
    fkw = rest[0] if rest else None
    check_module(name, args, kwargs, inputs, forward_kwargs=fkw, device=dev)


def test_public_names_and_signatures():
    """Every layer here is nn.<Name> with torch's constructor signature."""
    import inspect

    for name in {c[0] for c in CASES} | {
        "LazyLinear",
        "LazyConv1d",
        "LazyConv2d",
        "LazyConv3d",
        "LazyConvTranspose1d",
        "LazyConvTranspose2d",
        "LazyConvTranspose3d",
        "MaxUnpool1d",
        "MaxUnpool2d",
        "MaxUnpool3d",
        "FractionalMaxPool2d",
        "FractionalMaxPool3d",
    }:
        ours, theirs = getattr(nt.nn, name), getattr(torch.nn, name)
        assert ours.__name__ == name
        assert str(inspect.signature(ours.__init__).parameters.keys()) == str(
            inspect.signature(theirs.__init__).parameters.keys()
        )
        assert [p.default for p in inspect.signature(ours).parameters.values()] == [
            p.default for p in inspect.signature(theirs).parameters.values()
        ]
    assert issubclass(nt.nn.ZeroPad2d, nt.nn.ConstantPad2d)
    assert issubclass(nt.nn.LazyLinear, nt.nn.Linear)
    assert issubclass(nt.nn.UpsamplingBilinear2d, nt.nn.Upsample)


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_max_unpool(nd):
    """MaxUnpool puts MaxPool's values back at its indices (output_size too)."""
    pool = getattr(torch.nn, f"MaxPool{nd}d")(2, return_indices=True)
    even, odd = (1, 2, *(4, 6, 2)[:nd]), (2, *(5, 5, 3)[:nd])
    values, idx = (t.numpy() for t in pool(torch.tensor(arr(*even))))
    check_module(f"MaxUnpool{nd}d", (2,), {}, (values, idx))
    values, idx = (t.numpy() for t in pool(torch.tensor(arr(*odd))))
    check_module(
        f"MaxUnpool{nd}d",
        (2,),
        {"stride": 2, "padding": 0},
        (values, idx),
        forward_kwargs={"output_size": list(odd[1:])},
    )


@pytest.mark.parametrize("nd", [2, 3])
def test_fractional_max_pool(nd):
    """With _random_samples given, FractionalMaxPool is deterministic: the same windows,
    values, indices and gradients as torch's; the samples are a buffer."""
    name = f"FractionalMaxPool{nd}d"
    x = arr(2, 2, *(6, 5, 5)[:nd])
    samples = np.random.default_rng(0).uniform(size=(2, 2, nd))
    kw = {"output_size": 3} if nd == 2 else {"output_ratio": 0.5}
    t = getattr(torch.nn, name)(2, return_indices=True, _random_samples=torch.tensor(samples), **kw)
    n = getattr(nt.nn, name)(2, return_indices=True, _random_samples=nt.tensor(samples), **kw)
    assert repr(n) == repr(t) and list(n.state_dict()) == list(t.state_dict())
    tx, nx = torch.tensor(x, requires_grad=True), nt.tensor(x, requires_grad=True)
    tout, nout = t(tx), n(nx)
    assert_close(nout, tout)
    g = arr(*tout[0].shape, seed=3)
    tout[0].backward(torch.tensor(g))
    nout[0].backward(nt.tensor(g))
    assert_close(nx.grad, tx.grad)
    # without samples: random windows, but the shape and the values drawn from the input
    out = getattr(nt.nn, name)(2, output_ratio=0.5)(nt.tensor(x))
    assert tuple(out.shape) == tuple(t(tx)[0].shape if nd == 3 else (2, 2, 3, 2))
    assert np.isin(out.numpy(), x).all()


# ------------------------------------------------------------------ default initialization
@pytest.mark.parametrize(
    "name, args, fan_in",
    [
        ("Linear", (300, 200), 300),
        ("Conv1d", (12, 40, 5), 60),
        ("Conv2d", (8, 64, 3, 1, 0, 1, 2), 36),
        ("Conv3d", (4, 16, (2, 3, 3)), 72),
        ("ConvTranspose2d", (8, 32, 3), 288),  # torch's fan_in of (in, out/groups, *k)
        ("ConvTranspose1d", (6, 10, 4, 1, 0, 0, 2), 20),
    ],
)
def test_default_init_fan_in_layers(name, args, fan_in):
    """weight ~ kaiming_uniform(a=sqrt(5)) = U(-1/sqrt(fan_in), 1/sqrt(fan_in)), bias ~ the
    same bound: the extremes near the bound, the std near bound / sqrt(3), the mean near 0."""
    nt.manual_seed(0)
    m = getattr(nt.nn, name)(*args)
    bound = 1 / math.sqrt(fan_in)
    assert m.weight.dtype == nt.float32 and m.weight.requires_grad
    w = m.weight.detach().numpy().astype(np.float64)
    assert np.abs(w).max() <= bound
    assert np.abs(w).max() > 0.98 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.05 * bound
    assert abs(w.mean()) < 0.05 * bound
    b = m.bias.detach().numpy()
    assert np.abs(b).max() <= bound and np.abs(b).max() > 0.5 * bound


def test_default_init_bilinear():
    nt.manual_seed(0)
    m = nt.nn.Bilinear(20, 30, 40)
    bound = 1 / math.sqrt(20)
    for p in (m.weight, m.bias):
        v = p.detach().numpy()
        assert np.abs(v).max() <= bound and np.abs(v).max() > 0.9 * bound
    w = m.weight.detach().numpy()
    assert abs(w.std() - bound / math.sqrt(3)) < 0.03 * bound


def test_factory_kwargs_and_reset_parameters():
    m = nt.nn.Conv2d(2, 3, 2, dtype=nt.float64, device="cpu")
    assert m.weight.dtype == nt.float64 and m.bias.dtype == nt.float64
    nt.manual_seed(1)
    m.reset_parameters()
    w1 = m.weight.detach().numpy().copy()
    nt.manual_seed(1)
    m.reset_parameters()
    np.testing.assert_array_equal(m.weight.detach().numpy(), w1)
    assert nt.nn.Linear(2, 3, bias=False).bias is None
    assert list(nt.nn.Linear(2, 3, bias=False).state_dict()) == ["weight"]


# ------------------------------------------------------------------ lazy layers
@pytest.mark.parametrize(
    "name, args, kwargs, x",
    [
        ("LazyLinear", (3,), {}, arr(2, 5)),
        ("LazyLinear", (2,), {"bias": False}, arr(4)),
        ("LazyConv1d", (4, 3), {"padding": 1}, arr(2, 2, 5)),
        ("LazyConv2d", (4, 3), {"groups": 2, "bias": False}, arr(2, 4, 4)),
        ("LazyConv3d", (2, 2), {}, arr(1, 3, 2, 3, 3)),
        ("LazyConvTranspose1d", (2, 3), {"stride": 2}, arr(1, 3, 4)),
        (
            "LazyConvTranspose2d",
            (4, 3),
            {"groups": 2, "output_padding": 1, "stride": 2},
            arr(1, 2, 3, 3),
        ),
        ("LazyConvTranspose3d", (2, 2), {}, arr(1, 1, 2, 2, 2)),
    ],
)
def test_lazy_layer(name, args, kwargs, x):
    """Before the first call: repr, uninitialized parameters in the state dict; the first
    call infers the shapes, initializes as the eager layer does and becomes it; loading
    torch's weights then gives torch's outputs and gradients."""
    torch.manual_seed(0)
    t = getattr(torch.nn, name)(*args, **kwargs).double()
    n = getattr(nt.nn, name)(*args, **kwargs).double()
    assert repr(n) == repr(t)
    assert n.has_uninitialized_params()
    tsd, nsd = t.state_dict(), n.state_dict()
    assert list(nsd) == list(tsd)
    assert all(isinstance(v, nt.nn.UninitializedParameter) for v in nsd.values())
    assert all(type(v).__name__ == "UninitializedParameter" for v in n.parameters())
    tx, nx = torch.tensor(x, requires_grad=True), nt.tensor(x, requires_grad=True)
    tout, nout = t(tx), n(nx)
    assert tuple(nout.shape) == tuple(tout.shape) and nout.dtype == nt.float64
    assert type(n).__name__ == type(t).__name__ == name.replace("Lazy", "")
    assert repr(n) == repr(t)
    assert not hasattr(n, "_initialize_hook") and not n._forward_pre_hooks
    assert [(k, tuple(v.shape)) for k, v in n.state_dict().items()] == [
        (k, tuple(v.shape)) for k, v in t.state_dict().items()
    ]
    assert all(type(p) is nt.nn.Parameter and p.dtype == nt.float64 for p in n.parameters())
    bound = 1 / math.sqrt(nt.nn.init._calculate_fan_in_and_fan_out(n.weight)[0])
    assert float(n.weight.abs().max()) <= bound
    copy_weights(t, n)
    assert_close(n(nx), tout)
    g = arr(*tout.shape, seed=2)
    tgrads = torch.autograd.grad(tout, [tx, *t.parameters()], torch.tensor(g))
    ngrads = nt.autograd.grad(n(nx), [nx, *n.parameters()], nt.tensor(g))
    assert_close(list(ngrads), list(tgrads))


def test_lazy_load_state_dict_materializes():
    """A lazy layer loads an initialized state dict (its shapes become the parameters'),
    stays lazy until called, then checks the input against the loaded in_features."""
    t = torch.nn.Linear(4, 3).double()
    n = nt.nn.LazyLinear(3).double()
    n.load_state_dict({k: nt.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    assert type(n) is nt.nn.LazyLinear and not n.has_uninitialized_params()
    assert tuple(n.weight.shape) == (3, 4) and n.in_features == 0
    x = arr(2, 4)
    assert_close(n(nt.tensor(x)), t(torch.tensor(x)))
    assert type(n) is nt.nn.Linear and n.in_features == 4

    def prog(lib):
        m = lib.nn.LazyLinear(3).double()
        m.load_state_dict(
            {"weight": lib.zeros(3, 4, dtype=lib.float64), "bias": lib.zeros(3, dtype=lib.float64)}
        )
        return m(lib.zeros(2, 5, dtype=lib.float64))

    assert_same_error(prog)


def test_lazy_copies_are_independent():
    """A deep copy or pickle of a lazy layer initializes on its own; the original stays lazy
    (its hooks are its own), and keeps the dtype it was given."""
    for lib in (nt, torch):
        m = lib.nn.LazyLinear(3).double()
        c = copy.deepcopy(m)
        c(lib.zeros(2, 4, dtype=lib.float64))
        assert type(c) is lib.nn.Linear and type(m) is lib.nn.LazyLinear
        assert c.weight.dtype == lib.float64 and len(m._forward_pre_hooks) == 1
        p = pickle.loads(pickle.dumps(m))
        p(lib.zeros(2, 5))
        assert type(p) is lib.nn.Linear and p.in_features == 5
        m(lib.zeros(2, 6, dtype=lib.float64))
        assert m.in_features == 6 and not m._forward_pre_hooks


def test_generated_classes_pickle():
    for m in (
        nt.nn.MaxPool2d(2),
        nt.nn.ZeroPad3d(1),
        nt.nn.ReflectionPad1d(2),
        nt.nn.ConvTranspose2d(1, 2, 3),
        nt.nn.AdaptiveAvgPool3d(2),
    ):
        c = pickle.loads(pickle.dumps(m))
        assert type(c) is type(m) and repr(c) == repr(m)
        assert type(m).__module__ + "." + type(m).__qualname__ == (
            f"numtorch.nn.modules.{type(m).__module__.rsplit('.', 1)[1]}.{type(m).__name__}"
        )


def test_lazy_partial_state_dict_and_errors():
    def bad_dims(lib):
        return lib.nn.LazyConv2d(4, 3)(lib.zeros(2, 3))

    def bad_groups(lib):
        return lib.nn.LazyConv2d(4, 3, groups=2)(lib.zeros(1, 3, 4, 4))

    def not_implemented(lib):
        class M(lib.nn.modules.lazy.LazyModuleMixin, lib.nn.Module):
            def forward(self, x):
                return x

        return M()(lib.zeros(1))

    for prog in (bad_dims, bad_groups, not_implemented):
        assert_same_error(prog)


# ------------------------------------------------------------------ errors
def _ctor(name, *args, **kwargs):
    def prog(lib):
        return getattr(lib.nn, name)(*args, **kwargs)

    prog.__name__ = name
    return prog


def _call(name, args, kwargs, shape, **fkw):
    def prog(lib):
        return getattr(lib.nn, name)(*args, **kwargs)(lib.zeros(*shape), **fkw)

    return prog


ERRORS = [
    _ctor("Conv2d", 3, 4, 3, groups=2),
    _ctor("Conv2d", 4, 3, 3, groups=2),
    _ctor("Conv1d", 4, 4, 3, groups=0),
    _ctor("Conv2d", 2, 2, 3, padding="full"),
    _ctor("Conv3d", 2, 2, 3, stride=2, padding="same"),
    _ctor("ConvTranspose2d", 2, 2, 3, padding_mode="reflect"),
    _ctor("ConvTranspose1d", 2, 2, 3, groups=-1),
    _ctor("Bilinear", 0, 2, 3),
    _ctor("Unflatten", 1, (2, 2.0)),
    _ctor("Unflatten", 1, 4),
    _ctor("FractionalMaxPool2d", 2),
    _ctor("FractionalMaxPool2d", 2, output_size=2, output_ratio=0.5),
    _ctor("FractionalMaxPool2d", 2, output_ratio=(0.5, 1.5)),
    _ctor("FractionalMaxPool3d", (2, 0, 2), output_size=2),
    _ctor("FractionalMaxPool3d", 0, output_size=2),
    _call("ConvTranspose2d", (2, 2, 3), {"stride": 2}, (1, 2, 3, 3), output_size=[9, 9]),
    _call("ConvTranspose2d", (2, 2, 3), {"stride": 2}, (1, 2, 3, 3), output_size=[1, 2, 7]),
    _call("ConvTranspose1d", (2, 2, 3), {}, (2, 3), output_size=[2, 2, 5]),
    _call("CircularPad2d", (1,), {}, (2, 3)),
    _call("CircularPad1d", (1,), {}, (1, 1, 1, 3)),
    _call("Conv2d", (2, 2, 3), {}, (1, 3, 4, 4)),
    _call("Linear", (3, 2), {}, (2, 4)),
    _call("MaxPool2d", (3,), {}, (1, 1, 2, 2)),
    _call("ReflectionPad1d", (3,), {}, (1, 1, 3)),
    _call("Upsample", (), {"mode": "linear", "scale_factor": 2}, (1, 1, 2, 2)),
]


@pytest.mark.parametrize("prog", ERRORS, ids=[f"{i}-{p.__name__}" for i, p in enumerate(ERRORS)])
def test_errors_as_torch(prog):
    assert_same_error(prog)


def _sorted_sets(text: str) -> str:
    return re.sub(r"\{([^}]*)\}", lambda m: "{" + ", ".join(sorted(m[1].split(", "))) + "}", text)


def test_conv_padding_mode_error():
    """PyTorch prints the set of valid modes, in an order that varies with the string hash
    seed (its 4-element set literal is a frozenset constant of its .pyc): the same text up to
    the order inside the braces."""
    prog = _ctor("Conv2d", 2, 2, 3, padding_mode="wrap")
    got, want = error_of(prog, nt), error_of(prog, torch)
    assert got.type is want.type is ValueError
    assert _sorted_sets(got.text) == _sorted_sets(want.text)
    assert want.text.startswith("padding_mode must be one of {")


def test_conv_transpose_padding_mode_checked_at_forward():
    def prog(lib):
        m = lib.nn.ConvTranspose2d(1, 1, 2)
        m.padding_mode = "circular"
        return m(lib.zeros(1, 1, 2, 2))

    assert_same_error(prog)


def test_conv_state_dict_round_trip_and_half_precision():
    t, n = pair("Conv2d", 2, 4, 3, padding=1, groups=2)
    sd = n.state_dict()
    m = nt.nn.Conv2d(2, 4, 3, padding=1, groups=2).double()
    m.load_state_dict(sd)
    x = arr(1, 2, 4, 4)
    assert_close(m(nt.tensor(x)), t(torch.tensor(x)))
    assert n.float().weight.dtype == nt.float32


def test_vmap_over_a_model_of_these_layers():
    """A small CNN of these layers under vmap over unbatched samples: torch.func's values."""

    def model(lib):
        nn = lib.nn
        return nn.Sequential(
            nn.Conv2d(1, 4, 3, padding=1, padding_mode="reflect"),
            nn.MaxPool2d(2),
            nn.ZeroPad2d((1, 0, 0, 1)),
            nn.AvgPool2d(2, stride=1),
            nn.Flatten(0),
            nn.Linear(16, 3),
        ).double()

    torch.manual_seed(0)
    t, n = model(torch), model(nt)
    copy_weights(t, n)
    x = arr(5, 1, 4, 4)
    assert_close(nt.func.vmap(n)(nt.tensor(x)), torch.func.vmap(t)(torch.tensor(x)))
