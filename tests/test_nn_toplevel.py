"""torch's top-level forms of nn functions (``torch.conv2d``, ``torch.batch_norm``,
``torch.kl_div`` ...): values and input gradients against torch, ATen's argument orders
and integer reductions included."""

from __future__ import annotations

import numpy as np
import pytest
from twolibs import arr, assert_same

X = arr(3, 4, 5)
W4 = arr(4, seed=1)
B4 = arr(4, seed=2)
P = np.abs(arr(4, 5, seed=3)) + 0.1
SIGN = np.sign(arr(4, 5, seed=4))
SIGN3 = np.sign(arr(3, seed=5))
TARGETS = np.array([[1, 2, 1], [3, 4, 0]], dtype=np.int64)

# name: (args, kwargs); arrays become tensors of each library
CASES = {
    "selu": ((X,), {}),
    # alpha 0.5: torch's celu backward uses 1/alpha rounded to float32 (exact for 0.5)
    "celu": ((X, 0.5), {}),
    "threshold": ((X, 0.1, -2.0), {}),
    "hardshrink": ((X, 0.3), {}),
    "prelu": ((X, np.array([0.25, 0.1, 0.3, 0.2])), {}),
    "rrelu": ((X, 0.1, 0.3), {}),
    "alpha_dropout": ((X, 0.5, False), {}),
    "feature_alpha_dropout": ((X, 0.5, False), {}),
    "batch_norm": ((X, W4, B4, np.zeros(4), np.ones(4), True, 0.1, 1e-5, False), {}),
    "instance_norm": ((X, W4, B4, None, None, True, 0.1, 1e-5, False), {}),
    "layer_norm": ((X, [5]), {"eps": 1e-3}),
    "group_norm": ((X, 2, W4, B4), {}),
    "rms_norm": ((X, [4, 5]), {}),
    "cdist": ((X, arr(3, 2, 5, seed=7)), {}),
    "pdist": ((X[0],), {}),
    "cosine_similarity": ((X, arr(3, 4, 5, seed=8)), {}),
    "pairwise_distance": ((X, arr(3, 4, 5, seed=8)), {}),
    "bilinear": ((X[0], arr(4, 6, seed=9), arr(2, 5, 6, seed=10)), {}),
    "embedding": ((X[0], np.array([[0, 2], [3, 3]])), {}),
    "constant_pad_nd": ((X, [1, 2, 0, -1]), {"value": 0.5}),
    "pixel_shuffle": ((arr(1, 8, 2, 3), 2), {}),
    "pixel_unshuffle": ((arr(1, 2, 4, 6), 2), {}),
    "conv1d": ((X, arr(2, 4, 3, seed=12)), {"padding": 1}),
    "conv2d": ((X[None], arr(2, 3, 2, 2, seed=12)), {"stride": 2}),
    "conv3d": ((X[None, None], arr(2, 1, 2, 2, 2, seed=12)), {}),
    "conv_transpose1d": ((X, arr(4, 2, 3, seed=12)), {"stride": 2}),
    "conv_transpose2d": ((X[None], arr(3, 2, 2, 2, seed=12)), {"output_padding": 1, "stride": 2}),
    "conv_transpose3d": ((X[None, None], arr(1, 2, 2, 2, 2, seed=12)), {}),
    "max_pool1d": ((X, 2), {}),
    "max_pool1d_with_indices": ((X, 2, 1), {}),
    "max_pool2d": ((X, 2), {"ceil_mode": True}),
    "max_pool3d": ((X[None], 2), {}),
    "avg_pool1d": ((X, 3, 1, 1), {}),
    "adaptive_avg_pool1d": ((X, 3), {}),
    "adaptive_max_pool1d": ((X, 3), {}),
    "kl_div": ((X[0], np.log(P)), {}),
    "binary_cross_entropy_with_logits": ((X[0], P / P.max()), {"reduction": 1}),
    "cosine_embedding_loss": ((X[0, :3], arr(3, 5, seed=11), SIGN3), {"reduction": 2}),
    "hinge_embedding_loss": ((X[0], SIGN), {}),
    "margin_ranking_loss": ((X[0], X[1], SIGN, 0.2), {}),
    "poisson_nll_loss": ((X[0], P, True, False, 1e-8, 1), {}),
    "triplet_margin_loss": ((X[0], X[1], X[2]), {"swap": True, "reduction": 1}),
    "ctc_loss": ((arr(6, 2, 5, seed=6), TARGETS, [6, 5], [3, 2]), {"blank": 0}),
}


# torch's ctc_loss gradient is the derivative only after a log_softmax
BEFORE = {"ctc_loss": lambda x: x.log_softmax(-1)}


@pytest.mark.parametrize("name", sorted(CASES))
def test_top_level_form_matches_torch(name):
    args, kwargs = CASES[name]
    before = BEFORE.get(name, lambda x: x)

    def prog(lib, *a):
        first = a[0].detach().requires_grad_()
        out = getattr(lib, name)(before(first), *a[1:], **kwargs)
        if isinstance(out, tuple):  # (values, indices)
            (grad,) = lib.autograd.grad(out[0].sum(), first)
            return out, grad
        (grad,) = lib.autograd.grad(out.sum(), first, allow_unused=True)
        return out, grad

    assert_same(prog, *args, rtol=1e-9, atol=1e-12)


# ------------------------------------------------------------------ grid_sampler, embedding_bag
@pytest.mark.parametrize(
    "name,mode,padding,align",
    [
        ("grid_sampler", 0, 0, False),
        ("grid_sampler", 1, 1, True),
        ("grid_sampler", 2, 2, False),
        ("grid_sampler_2d", 2, 1, True),
        ("grid_sampler_3d", 1, 2, False),
        ("grid_sampler_3d", 0, 1, True),
    ],
)
def test_grid_samplers(name, mode, padding, align):
    """ATen's grid samplers with integer modes: values and the gradients of input and
    grid (outside the grid's edges too)."""
    three = name.endswith("3d")
    xs, gs = ((1, 2, 3, 3, 3), (1, 2, 2, 2, 3)) if three else ((2, 2, 4, 4), (2, 3, 3, 2))

    def prog(T, x, g):
        x.requires_grad_(True)
        g.requires_grad_(True)
        out = getattr(T, name)(x, g, mode, padding, align)
        return out, T.autograd.grad((out * out).sum(), (x, g))

    assert_same(prog, arr(*xs), 1.2 * np.tanh(arr(*gs, seed=1)), rtol=1e-9, atol=1e-11)


def test_affine_grid_generator():
    def prog(T, theta, theta3):
        theta.requires_grad_(True)
        out = T.affine_grid_generator(theta, [2, 3, 4, 5], False)
        out3 = T.affine_grid_generator(theta3, [1, 1, 2, 3, 2], True)
        z = T.affine_grid_generator(theta.detach() * (1 + 1j), [2, 1, 2, 2], False)
        return out, out3, z, T.autograd.grad(out.sum(), theta)

    assert_same(prog, arr(2, 2, 3), arr(1, 3, 4, seed=1), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize(
    "kwargs",
    [{}, {"include_last_offset": True}, {"padding_idx": 4}, {"per_sample_weights": True}],
    ids=str,
)
@pytest.mark.parametrize("requires_grad", [False, True])
def test_torch_embedding_bag_returns_pytorch_bookkeeping(mode, kwargs, requires_grad):
    """torch.embedding_bag: the output and PyTorch's offset2bag, bag_size and max_indices,
    an empty bag among them; the weight's gradient."""
    if kwargs.get("per_sample_weights") and mode != 0:
        return
    idx = np.array([1, 2, 4, 5, 4, 3, 2, 9])
    offsets = np.array([0, 3, 3, 5, 8] if kwargs.get("include_last_offset") else [0, 3, 3, 5])

    def prog(T, w, psw):
        w.requires_grad_(requires_grad)
        kw = dict(kwargs)
        if kw.pop("per_sample_weights", False):
            kw["per_sample_weights"] = psw
        pad = kw.pop("padding_idx", None)
        last = kw.pop("include_last_offset", False)
        out = T.embedding_bag(
            w,
            T.tensor(idx),
            T.tensor(offsets),
            False,
            mode,
            False,
            kw.get("per_sample_weights"),
            last,
            pad,
        )
        grad = T.autograd.grad(out[0].sum(), w) if requires_grad else None
        return out, grad

    assert_same(prog, arr(10, 3), arr(8, seed=1), rtol=1e-12, atol=1e-14)
    as32 = (arr(10, 3).astype(np.float32), arr(8, seed=1).astype(np.float32))
    assert_same(prog, *as32, rtol=1e-6, atol=1e-6)  # float32: PyTorch's fast sum path


def test_deprecated_container():
    """nn.Container: PyTorch's FutureWarning, and its keyword modules registered in order."""
    import warnings

    def prog(T):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            c = T.nn.Container(a=T.nn.Linear(2, 3), b=T.nn.ReLU())
        return (
            repr(c),
            [n for n, _ in c.named_modules()],
            [(w.category.__name__, str(w.message)) for w in caught],
        )

    assert_same(prog)


# ------------------------------------------------------------------ grouped and scaled mm
@pytest.mark.parametrize(
    "sa,sb,offs",
    [
        ((2, 4, 8), (2, 8, 4), None),
        ((8, 8), (2, 8, 4), [3, 8]),
        ((2, 4, 8), (8, 8), [4, 8]),
        ((4, 12), (12, 4), [4, 8, 12]),
        ((4, 8), (8, 8), [0, 8]),
    ],
    ids=str,
)
def test_grouped_mm_values_and_gradients(sa, sb, offs):
    """F.grouped_mm in float32 (PyTorch's CPU kernel): values and the gradients of both
    operands, an empty group included."""

    def prog(T, a, b):
        a = a.float().requires_grad_(True)
        b = b.float().requires_grad_(True)
        o = None if offs is None else T.tensor(offs, dtype=T.int32)
        out = T.nn.functional.grouped_mm(a, b, offs=o)
        return out, T.autograd.grad((out * out).sum(), (a, b))

    assert_same(prog, arr(*sa), arr(*sb, seed=1), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("rows", [False, True])
@pytest.mark.parametrize("kind", ["float8_e4m3fn", "float8_e5m2"])
def test_scaled_mm_float8(rows, kind):
    """scaled_mm of float8 matrices (PyTorch's CPU kernel): tensor-wise and row-wise
    scales, a bias, the default bfloat16 and a float32 output."""

    def prog(T, a, b, sa, sb):
        S = T.nn.functional.ScalingType
        f8 = getattr(T, kind)
        recipe = S.RowWise if rows else S.TensorWise
        sa, sb = (sa.float(), sb.float()) if rows else (T.tensor(0.5), T.tensor(3.0))
        a8, b8 = a.to(f8), b.to(f8)
        plain = T.nn.functional.scaled_mm(a8, b8, sa, recipe, sb, recipe)
        biased = T.nn.functional.scaled_mm(
            a8, b8, sa, recipe, sb, recipe, bias=T.ones(16), output_dtype=T.float32
        )
        return plain.float(), biased

    args = (arr(16, 32), arr(32, 16, seed=1), np.abs(arr(16, 1, seed=2)), np.abs(arr(1, 16)))
    assert_same(prog, *args, rtol=1e-5, atol=1e-5)


def test_scaled_mm_refusals_and_scaled_grouped_mm():
    """scaled_mm's refusal of non-float8 operands or misshapen scales, PyTorch's text;
    scaled_grouped_mm has no CPU kernel in PyTorch."""
    import torch
    from twolibs import assert_same_error

    def scaled(T, rows):
        S = T.nn.functional.ScalingType
        scale_a = T.ones(4, 1) if rows else T.ones(())
        scale_b = T.ones(1, 3) if rows else T.ones(())
        recipe = S.RowWise if rows else S.TensorWise
        return T.nn.functional.scaled_mm(
            T.ones(4, 8), T.ones(8, 3), scale_a, recipe, scale_b, recipe
        )

    def misshapen(T):
        S = T.nn.functional.ScalingType
        a, b = T.ones(4, 8).to(T.float8_e4m3fn), T.ones(8, 3).to(T.float8_e4m3fn)
        return T.nn.functional.scaled_mm(a, b, T.ones(4, 2), S.RowWise, T.ones(2, 3), S.RowWise)

    assert_same_error(misshapen)
    assert_same_error(lambda T: scaled(T, False))
    assert_same_error(lambda T: scaled(T, True))
    assert_same_error(
        lambda T: T.nn.functional.scaled_mm(
            T.ones(2, 4, 8),
            T.ones(8, 3),
            T.ones(()),
            T.nn.functional.ScalingType.TensorWise,
            T.ones(()),
            T.nn.functional.ScalingType.TensorWise,
        )
    )
    import numtorch as nt

    S = nt.nn.functional.ScalingType
    with pytest.raises(NotImplementedError) as ours:
        nt.nn.functional.scaled_grouped_mm(
            nt.ones(2, 4, 8), nt.ones(2, 8, 4), nt.ones(()), S.TensorWise, nt.ones(()), S.RowWise
        )
    with pytest.raises(NotImplementedError) as theirs:
        torch.nn.functional.scaled_grouped_mm(
            torch.ones(2, 4, 8),
            torch.ones(2, 8, 4),
            torch.ones(()),
            torch.nn.functional.ScalingType.TensorWise,
            torch.ones(()),
            torch.nn.functional.ScalingType.TensorWise,
        )
    assert str(ours.value).startswith(str(theirs.value).split("[")[0])
    assert [(m.name, int(m)) for m in S] == [
        (k, int(v)) for k, v in torch.nn.functional.ScalingType.__members__.items()
    ]


def test_grouped_mm_bfloat16():
    """bfloat16 operands (PyTorch computes in float32 and rounds once)."""

    def prog(T, a, b):
        a, b = a.to(T.bfloat16), b.to(T.bfloat16)
        offs = T.tensor([3, 8], dtype=T.int32)
        return (
            T.nn.functional.grouped_mm(a.reshape(2, 4, 8), b).float(),
            T.nn.functional.grouped_mm(a, b, offs=offs).float(),
        )

    assert_same(prog, arr(8, 8), arr(2, 8, 8, seed=1), rtol=1e-2, atol=1e-2)


# ------------------------------------------------------------------ segment_reduce
SEG = np.array([[1.0, 2.0], [3.0, 2.0], [3.0, 0.0], [0.0, 5.0], [2.0, 2.0], [1.0, 1.0]])


@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "min", "prod", "amax"])
@pytest.mark.parametrize("initial", [None, 1.0, 4.0])
def test_segment_reduce_ties_zeros_and_initial(reduce, initial):
    """An empty segment, ties (the gradient split among tied elements; a tie with
    ``initial`` sends it to the element), a zero in a product: values and gradients as
    PyTorch's."""

    def prog(T, x):
        x.requires_grad_(True)
        out = T.segment_reduce(x, reduce, lengths=T.tensor([2, 0, 4]), initial=initial)
        live = out.nan_to_num(0.0, 0.0, 0.0)
        return out, T.autograd.grad(live.sum(), x)

    assert_same(prog, SEG, rtol=1e-12, atol=1e-14)


def test_segment_reduce_dtype_refusals():
    from twolibs import assert_same_error

    assert_same_error(
        lambda T: T.segment_reduce(T.ones(4, dtype=T.int64), "sum", lengths=T.tensor([4]))
    )
    assert_same_error(
        lambda T: T.segment_reduce(T.ones(4, dtype=T.complex128), "sum", lengths=T.tensor([4]))
    )
    assert_same_error(lambda T: T.segment_reduce(T.ones(4), "sum", lengths=T.tensor([4.0])))
    assert_same_error(lambda T: T.segment_reduce(T.ones(4), "sum", indices=T.tensor([0, 0, 1, 1])))
