"""The activation, dropout and distance layers against torch's on the same data: outputs,
gradients with respect to inputs and parameters, reprs, state-dict keys, signatures,
in-place forms and error texts; dropout by its statistics and its eval-mode identity."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest
import torch
from twolibs import arr, assert_close, assert_same_error
from twomods import check_module, pair

import numtorch as nt

X = arr(2, 4, 6)

# (layer, constructor args, constructor kwargs)
ACTIVATIONS = [
    ("Threshold", (0.1, 20.0), {}),
    ("Threshold", (-0.2, 3), {}),
    ("ReLU", (), {}),
    ("RReLU", (), {}),
    ("RReLU", (0.1, 0.3), {}),
    ("Hardtanh", (), {}),
    ("Hardtanh", (-0.5, 2.0), {}),
    ("ReLU6", (), {}),
    ("Sigmoid", (), {}),
    ("Hardsigmoid", (), {}),
    ("Tanh", (), {}),
    ("SiLU", (), {}),
    ("Mish", (), {}),
    ("Hardswish", (), {}),
    ("ELU", (), {}),
    ("ELU", (), {"alpha": 0.5}),
    ("CELU", (0.7,), {}),
    ("SELU", (), {}),
    ("GLU", (), {}),
    ("GLU", (1,), {}),
    ("GELU", (), {}),
    ("GELU", (), {"approximate": "tanh"}),
    ("Hardshrink", (), {}),
    ("Hardshrink", (0.3,), {}),
    ("LeakyReLU", (), {}),
    ("LeakyReLU", (0.2,), {}),
    ("LogSigmoid", (), {}),
    ("Softplus", (), {}),
    ("Softplus", (2.0, 1.0), {}),
    ("Softshrink", (), {}),
    ("Softshrink", (), {"lambd": 0.25}),
    ("PReLU", (), {}),
    ("PReLU", (4, 0.1), {}),
    ("Softsign", (), {}),
    ("Tanhshrink", (), {}),
    ("Softmin", (1,), {}),
    ("Softmax", (-1,), {}),
    ("Softmax", (), {"dim": 0}),
    ("Softmax2d", (), {}),
    ("LogSoftmax", (2,), {}),
]


@pytest.mark.parametrize("name,args,kwargs", ACTIVATIONS, ids=lambda v: str(v))
def test_activation(name, args, kwargs, dev):
    # RReLU draws its slopes in training: compared in evaluation mode (the mean slope)
    check_module(name, args, kwargs, (X,), train=name != "RReLU", device=dev)


def test_activation_reprs():
    cases = [
        ("ReLU", (True,)),
        ("Hardtanh", ()),
        ("Hardtanh", (-2, 2, True)),
        ("ReLU6", (True,)),
        ("Threshold", (0.1, 20.0, True)),
        ("GELU", ("tanh",)),
        ("Softmax", (1,)),
        ("Softmin", ()),
        ("Hardshrink", (0.3,)),
        ("RReLU", (0.1, 0.2, True)),
        ("Hardsigmoid", (True,)),
        ("Hardswish", (True,)),
        ("SiLU", (True,)),
        ("SELU", (True,)),
        ("ELU", (1.0, True)),
        ("LeakyReLU", (0.1, True)),
        ("PReLU", (3,)),
        ("Softmax2d", ()),
    ]
    for name, args in cases:
        assert repr(getattr(nt.nn, name)(*args)) == repr(getattr(torch.nn, name)(*args))


def _signature(cls) -> list:
    return [(p.name, p.kind, p.default) for p in inspect.signature(cls).parameters.values()]


ALL = [
    "Threshold",
    "ReLU",
    "RReLU",
    "Hardtanh",
    "ReLU6",
    "Sigmoid",
    "Hardsigmoid",
    "Tanh",
    "SiLU",
    "Mish",
    "Hardswish",
    "ELU",
    "CELU",
    "SELU",
    "GLU",
    "GELU",
    "Hardshrink",
    "LeakyReLU",
    "LogSigmoid",
    "Softplus",
    "Softshrink",
    "PReLU",
    "Softsign",
    "Tanhshrink",
    "Softmin",
    "Softmax",
    "Softmax2d",
    "LogSoftmax",
    "Dropout",
    "Dropout1d",
    "Dropout2d",
    "Dropout3d",
    "AlphaDropout",
    "FeatureAlphaDropout",
    "PairwiseDistance",
    "CosineSimilarity",
]


@pytest.mark.parametrize("name", ALL)
def test_signature(name):
    ref = _signature(getattr(torch.nn, name))
    ours = _signature(getattr(nt.nn, name))
    if any(kind == inspect.Parameter.VAR_POSITIONAL for _, kind, _ in ref):
        assert ours in ([], ref)  # torch's parameterless layers show Module.__init__'s
    else:
        assert ours == ref
    assert _signature(getattr(nt.nn, name).forward) == _signature(getattr(torch.nn, name).forward)


INPLACE = [
    ("Threshold", (0.1, 20.0)),
    ("ReLU", ()),
    ("RReLU", ()),
    ("Hardtanh", (-0.5, 0.5)),
    ("ReLU6", ()),
    ("Hardsigmoid", ()),
    ("SiLU", ()),
    ("Mish", ()),
    ("Hardswish", ()),
    ("ELU", ()),
    ("CELU", (0.5,)),
    ("SELU", ()),
    ("LeakyReLU", (0.2,)),
]


@pytest.mark.parametrize("name,args", INPLACE, ids=lambda v: str(v))
def test_inplace(name, args):
    """inplace=True writes the result into the (non-leaf) input and returns it."""
    results = []
    for lib in (nt, torch):
        m = getattr(lib.nn, name)(*args, inplace=True).eval()
        x = lib.tensor(X, requires_grad=True)
        y = x * 1.5
        out = m(y)
        assert out is y
        (g,) = lib.autograd.grad(out, x, lib.tensor(X[::-1].copy()))
        results.append((out, g))
    # torch's hardsigmoid backward scales by a float32 1/6: check_module's tolerance
    assert_close(results[0], results[1], rtol=1e-7, atol=1e-9)


def test_rrelu_training_slopes():
    """In training each negative element gets its own slope in [lower, upper]; the
    gradient is that slope."""
    m = nt.nn.RReLU(0.1, 0.3)
    x = nt.tensor(-np.ones((200, 50)), requires_grad=True)
    out = m(x)
    slopes = -out.detach().numpy()
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3
    assert abs(slopes.mean() - 0.2) < 0.01 and slopes.std() > 0.05
    (g,) = nt.autograd.grad(out.sum(), x)
    np.testing.assert_allclose(g.numpy(), slopes)
    m.eval()
    np.testing.assert_allclose(m(x).detach().numpy(), -0.2)


def test_prelu_parameter():
    tm, nm = pair("PReLU", 4, 0.1)
    assert [n for n, _ in nm.named_parameters()] == ["weight"]
    np.testing.assert_array_equal(
        nt.nn.PReLU(3, 0.3).weight.detach().numpy(), np.float32([0.3] * 3)
    )
    assert nt.nn.PReLU(2, dtype=nt.float64).weight.dtype == nt.float64
    assert nt.nn.PReLU().weight.requires_grad
    nm.weight.data.fill_(0.5)
    nm.reset_parameters()
    np.testing.assert_array_equal(nm.weight.detach().numpy(), [0.1] * 4)


def test_activation_errors():
    assert_same_error(lambda lib: lib.nn.Hardtanh(1.0, 0.5))
    assert_same_error(lambda lib: lib.nn.Threshold(0.1))
    assert_same_error(lambda lib: lib.nn.Sigmoid(1))
    assert_same_error(lambda lib: lib.nn.ReLU(inplace=True, foo=1))
    assert_same_error(lambda lib: lib.nn.GELU("tanh", 1))
    assert_same_error(lambda lib, x: lib.nn.Softmax2d()(x), arr(4, 6))
    assert_same_error(lambda lib, x: lib.nn.GLU(1)(x), arr(2, 3))
    assert_same_error(lambda lib, x: lib.nn.PReLU(3)(x), arr(2, 4, 2))


def test_hardtanh_deprecated_names():
    msgs = []
    for lib in (nt, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            m = lib.nn.Hardtanh(min_value=-2.0, max_value=3.0)
        msgs.append([(x.category, str(x.message)) for x in w])
        assert (m.min_val, m.max_val) == (-2.0, 3.0)
    assert msgs[0] == msgs[1] and len(msgs[0]) == 2


@pytest.mark.parametrize("name", ["Softmin", "Softmax", "LogSoftmax"])
@pytest.mark.filterwarnings("ignore:Implicit dimension choice")
def test_softmax_implicit_dim(name):
    """dim=None picks PyTorch's legacy dimension (0 for 0-, 1- and 3-d input, else 1)."""
    for x in (arr(5), arr(2, 4), arr(2, 4, 3), arr(2, 1, 2, 3)):
        check_module(name, (), {}, (x,))


def test_softmin_implicit_dim_warns():
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmin"):
        nt.nn.Softmin()(nt.tensor(arr(2, 3)))


# ------------------------------------------------------------------ dropout
DROPOUTS = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"]
_SHAPES = {"Dropout1d": (2, 4, 3), "Dropout3d": (2, 4, 2, 2, 2)}


@pytest.mark.parametrize("name", DROPOUTS)
def test_dropout_eval_is_identity(name, dev):
    x = arr(*_SHAPES.get(name, (2, 4, 3, 2)))
    for kwargs in ({}, {"p": 0.2, "inplace": True}):
        check_module(name, (), kwargs, (x,), train=False, device=dev)


@pytest.mark.parametrize("name", DROPOUTS)
def test_dropout_repr_and_errors(name):
    for args in ((), (0.2,), (0.3, True)):
        assert repr(getattr(nt.nn, name)(*args)) == repr(getattr(torch.nn, name)(*args))
    for p in (-0.1, 1.5):
        assert_same_error(lambda lib: getattr(lib.nn, name)(p))


_MASK_SHAPES = {
    "Dropout": ((400, 50), None),
    "Dropout1d": ((40, 50, 4), (2,)),
    "Dropout2d": ((40, 50, 2, 2), (2, 3)),
    "Dropout3d": ((40, 50, 2, 2, 2), (2, 3, 4)),
}


@pytest.mark.parametrize("name", list(_MASK_SHAPES))
@pytest.mark.parametrize("p", [0.25, 0.6])
def test_dropout_training_statistics(name, p, dev):
    """About a fraction p is zeroed (whole channels for the Nd forms), the rest scaled by
    1/(1-p); the gradient is the same mask. On a GPU the mask is drawn there."""
    shape, feature_dims = _MASK_SHAPES[name]
    nt.manual_seed(0)
    x = nt.ones(shape, dtype=nt.float64, device=dev, requires_grad=True)
    out = getattr(nt.nn, name)(p)(x)
    assert out.device == x.device
    o = out.detach().numpy(force=True)
    kept = o != 0
    np.testing.assert_allclose(o[kept], 1 / (1 - p))
    draws = kept.size // int(np.prod([shape[d] for d in feature_dims or ()]))
    assert abs(1 - kept.mean() - p) < 5 * np.sqrt(p * (1 - p) / draws)  # five binomial sds
    if feature_dims is not None:  # one draw per (sample, channel)
        assert (kept.all(axis=feature_dims) | (~kept).all(axis=feature_dims)).all()
    (g,) = nt.autograd.grad(out.sum(), x)
    assert g.device == x.device
    np.testing.assert_array_equal(g.numpy(force=True), o)


def test_dropout_inplace_and_p_edges():
    x = nt.tensor(arr(8, 6), requires_grad=True)
    y = x * 1
    assert nt.nn.Dropout(0.5, inplace=True)(y) is y
    np.testing.assert_array_equal(nt.nn.Dropout(0.0)(x).detach().numpy(), x.detach().numpy())
    assert (nt.nn.Dropout(1.0)(x).detach().numpy() == 0).all()
    assert nt.nn.AlphaDropout(0.5, inplace=True)(y) is not y  # inplace is ignored, as in torch


@pytest.mark.parametrize("name", ["AlphaDropout", "FeatureAlphaDropout"])
def test_alpha_dropout_training(name):
    """Each element (each channel, for the feature form) is either a*x + b or SELU's
    saturation a*(-alpha) + b; on standard-normal input mean 0 and variance 1 are kept."""
    p, alpha = 0.3, 1.7580993408473766
    a = 1 / np.sqrt((alpha * alpha * p + 1) * (1 - p))
    x = nt.tensor(np.random.default_rng(0).standard_normal((40, 50, 3, 3)))
    nt.manual_seed(0)  # the statistics below hold within 3 sigma; a fixed draw, not a flaky one
    o = getattr(nt.nn, name)(p)(x).numpy()
    xv = x.numpy()
    kept = np.isclose(o, a * xv + alpha * a * p)
    dropped = np.isclose(o, -alpha * a + alpha * a * p)
    assert (kept | dropped).all()
    assert abs(dropped.mean() - p) < 0.03
    assert abs(o.mean()) < 0.03 and abs(o.std() - 1) < 0.03
    if name == "FeatureAlphaDropout":
        assert (kept.all(axis=(2, 3)) | dropped.all(axis=(2, 3))).all()


# ------------------------------------------------------------------ distance
DISTANCES = [
    ("PairwiseDistance", (), {}, (arr(3, 5), arr(3, 5, seed=1))),
    ("PairwiseDistance", (1.0,), {"keepdim": True}, (arr(3, 5), arr(1, 5, seed=1))),
    ("PairwiseDistance", (3.0, 1e-3), {}, (arr(5), arr(5, seed=1))),
    ("CosineSimilarity", (), {}, (arr(3, 5), arr(3, 5, seed=1))),
    ("CosineSimilarity", (0, 1e-6), {}, (arr(3, 5), arr(3, 1, seed=1))),
    ("CosineSimilarity", (), {"dim": -1}, (arr(2, 3, 4), arr(2, 3, 4, seed=1))),
]


@pytest.mark.parametrize("name,args,kwargs,inputs", DISTANCES, ids=lambda v: str(v)[:30])
def test_distance(name, args, kwargs, inputs):
    tm, nm = check_module(name, args, kwargs, inputs)
    assert vars(nm).keys() >= {"eps"} and nm.eps == tm.eps


def test_distance_attributes_and_errors():
    m = nt.nn.PairwiseDistance(p=1.0, eps=0.1, keepdim=True)
    assert (m.norm, m.eps, m.keepdim) == (1.0, 0.1, True)
    assert_same_error(lambda lib, a, b: lib.nn.PairwiseDistance()(a, b), arr(3, 5), arr(2, 5))
    assert_same_error(lambda lib, a, b: lib.nn.CosineSimilarity()(a, b), arr(3, 5), arr(3, 4))


def test_layers_pickle_and_deepcopy():
    import copy
    import pickle

    x = nt.tensor(X)
    layers = [
        nt.nn.ReLU(True),
        nt.nn.GELU("tanh"),
        nt.nn.Softmax(1),
        nt.nn.RReLU(0.1, 0.2),
        nt.nn.Hardtanh(-2, 2),
        nt.nn.PReLU(4),
        nt.nn.Dropout2d(0.3),
        nt.nn.Softmax2d(),
        nt.nn.PairwiseDistance(1.0),
    ]
    for m in layers:
        m.double().eval()
        for clone in (pickle.loads(pickle.dumps(m)), copy.deepcopy(m)):
            assert type(clone) is type(m) and repr(clone) == repr(m)
            args = (x, x * 2) if isinstance(m, nt.nn.PairwiseDistance) else (x * 1,)
            assert_close(clone(*args), m(*(a * 1 for a in args)))
