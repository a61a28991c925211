"""The loss layers against torch's on the same data, for every reduction: outputs,
gradients with respect to every float input, reprs, weight buffers in the state dict,
signatures, the legacy size_average/reduce arguments and error texts."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest
import torch
import twomods
from twolibs import arr, assert_close, assert_same_error, to_nt, to_torch
from twomods import check_module, copy_weights

import numtorch as nt


def _pair_with_tensors(name, *args, dtype="float64", seed=0, **kwargs):
    """twomods.pair, with NumPy-array constructor arguments (class weights) made each
    library's tensors."""
    torch.manual_seed(seed)
    tmod = getattr(torch.nn, name)(*args, **{k: to_torch(v) for k, v in kwargs.items()})
    nmod = getattr(nt.nn, name)(*args, **{k: to_nt(v) for k, v in kwargs.items()})
    tmod, nmod = tmod.to(getattr(torch, dtype)), nmod.to(getattr(nt, dtype))
    copy_weights(tmod, nmod)
    return tmod, nmod


@pytest.fixture(autouse=True)
def _tensor_kwargs(monkeypatch):
    monkeypatch.setattr(twomods, "pair", _pair_with_tensors)


def _log_softmax(x: np.ndarray, axis: int) -> np.ndarray:
    z = x - x.max(axis, keepdims=True)
    return z - np.log(np.exp(z).sum(axis, keepdims=True))


A, B, C = arr(3, 4), arr(3, 4, seed=1), arr(3, 4, seed=2)
SIGN = np.where(arr(3, 4, seed=3) > 0, 1.0, -1.0)
SIGN3 = np.array([1, -1, 1])
PROB = 1 / (1 + np.exp(-A))
LABELS = np.array([0, 3, 1])
LABELS4 = np.array([[0, 2], [1, 1]])[None].repeat(2, 0)  # (2, 2, 2)
W4 = np.array([0.5, 1.0, 2.0, 1.5])
LOGP = _log_softmax(arr(6, 2, 4, seed=4), 2)  # (T, N, C) for CTC
CTC_TARGETS = np.array([[1, 2, 2], [3, 1, 0]])
MLM_TARGET = np.array([[3, 0, -1, 1], [1, 2, 3, -1], [0, -1, 2, 2]])

# (layer, constructor kwargs, forward inputs)
LOSSES = [
    ("L1Loss", {}, (A, B)),
    ("MSELoss", {}, (A, B)),
    ("NLLLoss", {}, (A, LABELS)),
    ("NLLLoss", {"weight": W4, "ignore_index": 1}, (A, LABELS)),
    ("NLLLoss", {"weight": W4[:3]}, (arr(2, 3, 2, 2), LABELS4)),
    ("PoissonNLLLoss", {}, (A, np.abs(B))),
    ("PoissonNLLLoss", {"log_input": False, "full": True, "eps": 1e-3}, (PROB, np.abs(B) * 3)),
    ("GaussianNLLLoss", {}, (A, B, np.abs(C) + 0.1)),
    ("GaussianNLLLoss", {"full": True, "eps": 0.2}, (A, B, np.abs(C[:, :1]))),
    ("KLDivLoss", {}, (_log_softmax(A, 1), np.exp(_log_softmax(B, 1)))),
    ("KLDivLoss", {"log_target": True}, (_log_softmax(A, 1), _log_softmax(B, 1))),
    ("BCELoss", {}, (PROB, np.exp(_log_softmax(B, 1)))),
    ("BCELoss", {"weight": W4}, (PROB, (B > 0) * 1.0)),
    ("BCEWithLogitsLoss", {}, (A, PROB[::-1].copy())),
    ("BCEWithLogitsLoss", {"weight": W4[::-1].copy(), "pos_weight": W4}, (A, (B > 0) * 1.0)),
    ("HingeEmbeddingLoss", {}, (A, SIGN)),
    ("HingeEmbeddingLoss", {"margin": 0.5}, (A, SIGN)),
    ("MultiLabelMarginLoss", {}, (A, MLM_TARGET)),
    ("SmoothL1Loss", {}, (A, B)),
    ("SmoothL1Loss", {"beta": 0.5}, (A, B)),
    ("HuberLoss", {"delta": 0.5}, (A, B)),
    ("SoftMarginLoss", {}, (A, SIGN.astype(np.int64))),  # torch: no gradient wrt target
    ("CrossEntropyLoss", {}, (A, LABELS)),
    ("CrossEntropyLoss", {"weight": W4, "ignore_index": 3, "label_smoothing": 0.2}, (A, LABELS)),
    ("CrossEntropyLoss", {"label_smoothing": 0.1}, (A, np.exp(_log_softmax(B, 1)))),
    ("CrossEntropyLoss", {"weight": W4[:3]}, (arr(2, 3, 2, 2), LABELS4)),
    ("MultiLabelSoftMarginLoss", {}, (A, (B > 0) * 1.0)),
    ("MultiLabelSoftMarginLoss", {"weight": W4}, (A, PROB)),
    ("CosineEmbeddingLoss", {}, (A, B, SIGN3)),
    ("CosineEmbeddingLoss", {"margin": 0.2}, (A, B, SIGN3)),
    ("MarginRankingLoss", {}, (A, B, SIGN)),
    ("MarginRankingLoss", {"margin": 0.3}, (A, B, SIGN)),
    ("MultiMarginLoss", {}, (A, LABELS)),
    ("MultiMarginLoss", {"p": 2, "margin": 0.5, "weight": W4}, (A, LABELS)),
    ("TripletMarginLoss", {}, (A, B, C)),
    ("TripletMarginLoss", {"margin": 0.5, "p": 1.0, "eps": 1e-3, "swap": True}, (A, B, C)),
    ("TripletMarginWithDistanceLoss", {}, (A, B, C)),
    (
        "TripletMarginWithDistanceLoss",
        {"distance_function": lambda a, b: (a - b).abs().sum(-1), "margin": 2.0, "swap": True},
        (A, B, C),
    ),
    ("CTCLoss", {}, (LOGP, CTC_TARGETS, np.array([6, 5]), np.array([3, 2]))),
    (
        "CTCLoss",
        {"blank": 2, "zero_infinity": True},
        (LOGP, np.array([[1, 3, 3], [0, 1, 0]]), np.array([6, 2]), np.array([3, 3])),
    ),
]

_NO_LEGACY = ("GaussianNLLLoss", "HuberLoss", "TripletMarginWithDistanceLoss", "CTCLoss")


@pytest.mark.filterwarnings("ignore:reduction. 'mean' divides the total loss")
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("name,kwargs,inputs", LOSSES, ids=lambda v: str(v)[:40])
def test_loss(name, kwargs, inputs, reduction, dev):
    # torch's ctc_loss gradient is not d/d(log_probs) (test_ctc_gradient_through_log_softmax)
    kw = {**kwargs, "reduction": reduction}
    tm, nm = check_module(name, (), kw, inputs, grads=name != "CTCLoss", device=dev)
    assert nm.reduction == reduction
    for key in ("weight", "pos_weight"):
        assert (key in dict(nm.named_buffers())) == (kwargs.get(key) is not None)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_ctc_gradient_through_log_softmax(reduction):
    """torch's CTC gradient omits the exp(log_probs) term that log_softmax's backward
    cancels: compared with respect to the logits."""
    grads = []
    for lib in (nt, torch):
        x = lib.tensor(LOGP, requires_grad=True)
        m = lib.nn.CTCLoss(blank=1, reduction=reduction)
        out = m(x.log_softmax(-1), lib.tensor(CTC_TARGETS + 1) % 4, [6, 5], (3, 2))
        grads.append(lib.autograd.grad(out, x, lib.ones_like(out))[0])
    assert_close(grads[0], grads[1], rtol=1e-7, atol=1e-9)


def test_loss_batchmean_and_extras():
    check_module("KLDivLoss", (), {"reduction": "batchmean"}, LOSSES[9][2])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        check_module("NLLLoss2d", (), {"weight": W4[:3]}, (arr(2, 3, 2, 2), LABELS4))
    _, nm = check_module("BCEWithLogitsLoss", (), {"pos_weight": W4}, (A, PROB))
    assert list(nm.state_dict()) == ["pos_weight"] and nm.weight is None
    assert "weight" in nm._buffers  # registered (as None), like torch's


_ALL = [
    "L1Loss",
    "NLLLoss",
    "NLLLoss2d",
    "PoissonNLLLoss",
    "GaussianNLLLoss",
    "KLDivLoss",
    "MSELoss",
    "BCELoss",
    "BCEWithLogitsLoss",
    "HingeEmbeddingLoss",
    "MultiLabelMarginLoss",
    "SmoothL1Loss",
    "HuberLoss",
    "SoftMarginLoss",
    "CrossEntropyLoss",
    "MultiLabelSoftMarginLoss",
    "CosineEmbeddingLoss",
    "MarginRankingLoss",
    "MultiMarginLoss",
    "TripletMarginLoss",
    "TripletMarginWithDistanceLoss",
    "CTCLoss",
]


def _signature(fn) -> list:
    return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]


@pytest.mark.parametrize("name", _ALL)
def test_signature_and_repr(name):
    tcls, ncls = getattr(torch.nn, name), getattr(nt.nn, name)
    if name != "NLLLoss2d":  # torch's deprecation wrapper hides NLLLoss2d's signature
        assert _signature(ncls) == _signature(tcls)
    assert _signature(ncls.forward) == _signature(tcls.forward)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        assert repr(ncls()) == repr(tcls())
        assert issubclass(ncls, nt.nn.NLLLoss) == issubclass(tcls, torch.nn.NLLLoss)


@pytest.mark.parametrize("name", [n for n in _ALL if n not in _NO_LEGACY])
@pytest.mark.parametrize(
    "legacy",
    [
        {"size_average": False},
        {"reduce": False},
        {"size_average": True, "reduce": True},
        {"size_average": False, "reduce": True, "reduction": "none"},
    ],
)
def test_legacy_reduction_arguments(name, legacy):
    """size_average/reduce override reduction, with PyTorch's deprecation warning."""
    got = []
    for lib in (nt, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            m = getattr(lib.nn, name)(**legacy)
        got.append(
            (m.reduction, [(x.category, str(x.message)) for x in w if "size_" in str(x.message)])
        )
    assert got[0] == got[1] and len(got[0][1]) == 1


def test_legacy_in_a_subclass():
    class MyLoss(nt.nn.modules.loss._Loss):
        def __init__(self, scale):
            super().__init__(None, False)
            self.scale = scale

    with pytest.warns(UserWarning, match="reduction='none'"):
        m = MyLoss(2.0)
    assert (m.reduction, m.scale) == ("none", 2.0)
    w = nt.nn.modules.loss._WeightedLoss(nt.ones(3), reduction="sum")
    assert w.reduction == "sum" and list(w.state_dict()) == ["weight"]


def test_nll_loss2d_deprecated():
    msgs = []
    for lib in (nt, torch):
        with pytest.warns(FutureWarning) as w:
            lib.nn.NLLLoss2d()
        msgs.append([str(x.message) for x in w])
    assert msgs[0] == msgs[1]


@pytest.mark.filterwarnings("ignore:Using a target size")
def test_loss_errors():
    assert_same_error(lambda lib: lib.nn.MultiMarginLoss(p=3))
    assert_same_error(lambda lib, w: lib.nn.MultiMarginLoss(weight=w), arr(2, 2))
    assert_same_error(lambda lib: lib.nn.TripletMarginLoss(margin=0.0))
    assert_same_error(lambda lib: lib.nn.TripletMarginWithDistanceLoss(margin=-1.0))
    assert_same_error(lambda lib: lib.nn.HuberLoss(delta="1"))
    assert_same_error(lambda lib: lib.nn.GaussianNLLLoss(True))
    assert_same_error(lambda lib: lib.nn.MSELoss(foo=1))
    assert_same_error(lambda lib, a, b: lib.nn.MSELoss(reduction="bad")(a, b), A, B)
    assert_same_error(lambda lib, a, t: lib.nn.CrossEntropyLoss()(a, t), A, LABELS[:2])
    assert_same_error(lambda lib, a, t: lib.nn.NLLLoss()(a, t), A, LABELS + 4)
    assert_same_error(lambda lib, a, b: lib.nn.L1Loss()(a, b), A, arr(2, 4))


def test_weight_buffers_follow_the_module():
    """Class weights are buffers: converted by .double()/.float(), kept by pickling and
    deepcopy, absent from parameters()."""
    import copy
    import pickle

    m = nt.nn.BCEWithLogitsLoss(weight=nt.ones(4), pos_weight=nt.tensor(W4, dtype=nt.float32))
    assert list(m.parameters()) == []
    m.double()
    assert m.weight.dtype == m.pos_weight.dtype == nt.float64
    for clone in (pickle.loads(pickle.dumps(m)), copy.deepcopy(m)):
        assert list(clone.state_dict()) == ["weight", "pos_weight"]
        np.testing.assert_array_equal(clone.pos_weight.numpy(), W4)
    t = nt.tensor(PROB)
    assert_close(
        m(nt.tensor(A), t),
        nt.nn.functional.binary_cross_entropy_with_logits(
            nt.tensor(A), t, nt.ones(4, dtype=nt.float64), pos_weight=nt.tensor(W4)
        ),
    )


def test_per_sample_grads_through_loss_modules():
    """vmap(grad(...)) over functional_call of a PReLU model and a weighted
    CrossEntropyLoss gives torch.func's per-sample gradients; functional_call can swap
    the loss's weight buffer."""
    results = []
    for lib in (nt, torch):
        model = lib.nn.PReLU(4, 0.3).double()
        loss = lib.nn.CrossEntropyLoss(weight=lib.tensor(W4), label_smoothing=0.1)
        params = {k: v.detach() for k, v in model.named_parameters()}
        x, t = lib.tensor(A), lib.tensor(LABELS)

        def sample_loss(p, xi, ti, model=model, loss=loss, lib=lib):
            out = lib.func.functional_call(model, p, (xi[None],))
            return loss(out, ti[None])

        g = lib.func.vmap(lib.func.grad(sample_loss), in_dims=(None, 0, 0))(params, x, t)
        swapped = lib.func.functional_call(loss, {"weight": lib.ones(4, dtype=lib.float64)}, (x, t))
        results.append((g, swapped))
    assert_close(results[0], results[1], rtol=1e-10, atol=1e-12)
