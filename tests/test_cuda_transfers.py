"""Copies between host and device in typical programs on device='cuda', counted by the CuPy
stand-in: as many as PyTorch's synchronizations (none, except where the result's size depends
on the data: boolean masks and nonzero). Bounds checks stay on the device and are read at the
next synchronization, as PyTorch's device-side asserts. Each failure lists the numtorch lines
that copied."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from twolibs import error_of

import numtorch as nt
import numtorch.nn.functional as F
from numtorch import nn
from numtorch.func import functional_call, grad, vmap
from numtorch.testing import _cupy_standin as standin


def transfers(fn) -> list:
    """The host <-> device copies ``fn()`` makes, as "file:line direction what" lines."""
    with standin.transfers() as log:
        fn()
    return log.sites()


def _x(dev):
    return nt.randn(8, 3, device=dev, generator=nt.Generator(dev).manual_seed(0))


def _target(dev):
    return nt.tensor([0, 1, 2, 0, 1, 2, 0, 1], device=dev)


# ---------------------------------------------------------------- elementwise operands
def test_python_scalars_are_kernel_arguments(standin_cuda):
    x = _x(standin_cuda)
    assert transfers(lambda: (x * 2 + 1, x / 3, x**2, nt.clamp(x, -1, 1), 2 - x)) == []
    assert transfers(lambda: (x.add(1, alpha=2), x.mul_(1.5), nt.where(x > 0, x, 0.0))) == []


def test_a_cpu_scalar_tensor_is_read_on_the_host(standin_cuda):
    x, s = _x(standin_cuda), nt.tensor(3.0)
    got = transfers(lambda: x + s)
    assert got == []
    nt.testing.assert_close((x + s).cpu(), x.cpu() + 3.0)


def test_a_cpu_scalar_tensor_keeps_the_result_dtype(standin_cuda):
    x = _x(standin_cuda)
    assert (x + nt.tensor(2)).dtype == nt.float32
    assert (x + nt.tensor(2.0, dtype=nt.float64)).dtype == nt.float32
    i = nt.arange(4, device=standin_cuda)
    assert (i * nt.tensor(2.5)).dtype == nt.float32
    assert (i * nt.tensor(2.5)).cpu().tolist() == [0.0, 2.5, 5.0, 7.5]


# ---------------------------------------------------------------- indexing
def test_basic_indexing_does_not_copy(standin_cuda):
    x = _x(standin_cuda)
    assert transfers(lambda: (x[0], x[1:3, ::2], x[..., -1], x[None, 2])) == []


def test_boolean_masks_and_nonzero_synchronize_once_as_in_pytorch(standin_cuda):
    x = _x(standin_cuda)
    mask = x > 0
    for fn in (lambda: x[mask], lambda: nt.nonzero(x), lambda: nt.masked_select(x, mask)):
        assert len(transfers(fn)) == 1


# ---------------------------------------------------------------- training steps
def _step(model, opt, x, y):
    def step():
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        opt.step()

    step()  # (optimizer state made)
    return step


def _mlp():
    return nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 3))


def _cnn():
    return nn.Sequential(
        nn.Conv2d(1, 4, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(36, 3)
    )


def test_max_pool_forward_and_backward_do_not_copy(standin_cuda):
    nt.manual_seed(0)
    pool = nn.MaxPool2d(2, padding=1)
    x = nt.randn(2, 1, 6, 6, requires_grad=True)
    xc = x.detach().to(standin_cuda).requires_grad_()
    assert transfers(lambda: pool(xc).sum().backward()) == []
    pool(x).sum().backward()
    nt.testing.assert_close(xc.grad.cpu(), x.grad)


@pytest.mark.parametrize("model", [_mlp, _cnn])
@pytest.mark.parametrize("optim", ["SGD", "Adam"])
def test_a_training_step_does_not_copy(standin_cuda, model, optim):
    nt.manual_seed(0)
    net = model().to(standin_cuda)
    x = nt.randn(8, 3, device=standin_cuda) if model is _mlp else _images(standin_cuda)
    y = nt.randn(8, 3, device=standin_cuda)
    step = _step(net, getattr(nt.optim, optim)(net.parameters(), lr=0.1), x, y)
    assert transfers(step) == []


def test_per_sample_gradients_with_vmap_grad_do_not_copy(standin_cuda):
    nt.manual_seed(0)
    net = _cnn().to(standin_cuda)
    params = {k: v.detach() for k, v in net.named_parameters()}
    x, y = _images(standin_cuda), nt.randn(8, 3, device=standin_cuda)

    def loss(p, xi, yi):
        return F.mse_loss(functional_call(net, p, (xi[None],)), yi[None])

    got = []
    assert transfers(lambda: got.append(vmap(grad(loss), in_dims=(None, 0, 0))(params, x, y))) == []
    one = grad(loss)(params, x[3], y[3])
    nt.testing.assert_close(got[0]["0.weight"][3].cpu(), one["0.weight"].cpu())


def _images(dev):
    return nt.randn(8, 1, 8, 8, device=dev)


def test_backward_seeds_its_gradient_on_the_device(standin_cuda):
    x = _x(standin_cuda).requires_grad_()
    assert transfers(lambda: (x * x).sum().backward()) == []


def test_clip_grad_norm_with_foreach_does_not_synchronize(standin_cuda):
    nt.manual_seed(0)
    model = _cnn().to(standin_cuda)
    F.cross_entropy(
        model(nt.randn(8, 1, 8, 8, device=standin_cuda)), _target(standin_cuda)
    ).backward()
    assert transfers(lambda: nn.utils.clip_grad_norm_(model.parameters(), 1.0, foreach=True)) == []


def test_the_counter_sees_each_copy_and_where_it_was_made(standin_cuda):
    x = _x(standin_cuda)
    log = transfers(lambda: (x.sum().item(), x.cpu(), nt.tensor([1, 2], device=standin_cuda)))
    assert [entry.split()[1] for entry in log] == ["D2H", "D2H", "H2D"]
    assert all(entry.startswith("numtorch/") for entry in log)


# ---------------------------------------------------------------- bounds checks
# PyTorch's CUDA kernels check indices on the device (an assert seen at the next
# synchronization); numtorch keeps the verdict on the device too and raises the CPU's error
# there. Each program takes the library, x (8, 3) and an int64 index i of 4 entries.
def _setitem(L, x, i):
    y = x.clone()
    y[i] = 1.0
    return y


CHECKED = {
    "index": (lambda L, x, i: x[i], [0, 9, 1, -10]),
    "index, two tensors": (lambda L, x, i: x[i[None, :2], i[2:, None]], [0, 1, 7, 5]),
    "index, first bad of two": (lambda L, x, i: x[i[None, :2], i[2:, None]], [0, 9, 7, 5]),
    "index_put": (lambda L, x, i: x.index_put((i,), L.ones_like(x[0])), [1, 2, 8, 0]),
    "setitem": (_setitem, [1, -9, 0, 0]),
    "gather": (lambda L, x, i: x.gather(0, i[:, None].expand(4, 3)), [1, 2, 3, 8]),
    "scatter": (lambda L, x, i: x.scatter(0, i[:, None].expand(4, 3), 2.0), [8, 1, 2, 3]),
    "scatter_add": (lambda L, x, i: x.scatter_add(0, i[:, None], x[:4, :1]), [0, -1, 2, 3]),
    "index_select": (lambda L, x, i: x.index_select(0, i), [0, 1, 8, 2]),
    "index_add": (lambda L, x, i: x.index_add(0, i, L.ones_like(x[:4])), [0, 1, 2, 8]),
    "take": (lambda L, x, i: x.take(i), [0, 24, 1, -25]),
    "put": (lambda L, x, i: x.put(i, x[0, :1].expand(4), accumulate=True), [0, 1, -25, 3]),
    "embedding": (lambda L, x, i: L.nn.functional.embedding(i, x), [-1, 1, 2, 3]),
    "cross_entropy": (lambda L, x, i: L.nn.functional.cross_entropy(x[:4], i), [0, 1, 3, 2]),
    "nll_loss": (
        lambda L, x, i: L.nn.functional.nll_loss(x[:4], i, reduction="none"),
        [5, 1, 2, 1],
    ),
}
GOOD = [0, 2, 1, 1]
SYNCS = {
    "cpu": lambda r: r.cpu(),
    "to": lambda r: r.to("cpu"),
    "item": lambda r: r.sum().item(),
    "tolist": lambda r: r.tolist(),
    "numpy": lambda r: r.numpy(),
    "float": lambda r: float(r.sum()),
    "bool": lambda r: bool(r.sum() > 0),
    "cuda.synchronize": lambda r: nt.cuda.synchronize(),
}


def _data() -> np.ndarray:
    return np.random.default_rng(0).standard_normal((8, 3))


def _on(dev, x: np.ndarray, i: list):
    return nt.tensor(x, device=dev), nt.tensor(i, device=dev)


@pytest.mark.parametrize("name", CHECKED)
def test_a_valid_index_is_checked_without_a_copy(standin_cuda, name):
    prog = CHECKED[name][0]
    x, i = _on(standin_cuda, _data(), GOOD)
    got = []
    assert transfers(lambda: got.append(prog(nt, x, i))) == []
    nt.testing.assert_close(got[0].cpu(), prog(nt, *_on("cpu", _data(), GOOD)))


@pytest.mark.parametrize("sync", SYNCS)
@pytest.mark.parametrize("name", CHECKED)
def test_a_bad_index_raises_the_cpus_error_at_the_next_synchronization(standin_cuda, name, sync):
    prog, bad = CHECKED[name]
    want = error_of(prog, torch, _data(), np.array(bad))
    assert want is not None and error_of(prog, nt, _data(), np.array(bad)) == want
    x, i = _on(standin_cuda, _data(), bad)
    got = []
    assert transfers(lambda: got.append(prog(nt, x, i))) == []  # (no error yet)
    with pytest.raises(want.type) as e:
        SYNCS[sync](got[0].detach())
    assert str(e.value) == want.text


def test_the_first_failing_check_raises_and_none_stays_pending(standin_cuda):
    x, i = _on(standin_cuda, _data(), [0, 9, 1, 2])
    x.index_select(0, i), x[i + 1], x.gather(0, i[:, None])
    with pytest.raises(IndexError, match="^index out of range in self$"):
        nt.cuda.synchronize()
    nt.cuda.synchronize()  # (the other failing checks went with the first)
    assert transfers(nt.cuda.synchronize) == []  # (nothing left to read)


def test_a_valid_program_after_a_failed_check_runs(standin_cuda):
    x, i = _on(standin_cuda, _data(), [0, 9, 1, 2])
    out = F.embedding(i, x)
    with pytest.raises(IndexError):
        out.cpu()
    good = nt.tensor(GOOD, device=standin_cuda)
    got = F.cross_entropy(x[:4], good) + x.gather(0, good[:, None]).sum()
    xc, gc = _on("cpu", _data(), GOOD)
    assert got.item() == pytest.approx(
        (F.cross_entropy(xc[:4], gc) + xc.gather(0, gc[:, None]).sum()).item()
    )


def test_take_under_vmap_names_take_at_the_synchronization(standin_cuda):
    want = error_of(lambda L, x, i: L.vmap(L.take)(x, i), torch, _data(), np.array([[0], [3]] * 4))
    x, i = _on(standin_cuda, _data(), [[0], [3]] * 4)
    got = nt.vmap(nt.take)(x, i)
    with pytest.raises(want.type) as e:
        got.cpu()
    assert str(e.value) == want.text


def test_masked_scatter_under_vmap_names_the_source_at_the_synchronization(standin_cuda):
    def prog(L, x, m):
        return L.vmap(L.masked_scatter)(x, m > 0, x[:, :1])

    want = error_of(prog, torch, _data(), _data())
    assert want is not None
    got = prog(nt, *_on(standin_cuda, _data(), _data()))
    with pytest.raises(want.type) as e:
        got.cpu()
    assert str(e.value) == want.text


def test_reading_a_cpu_tensor_does_not_synchronize_the_gpu(standin_cuda):
    x, i = _on(standin_cuda, _data(), [0, 9, 1, 2])
    x[i]
    assert nt.tensor(2.0).item() == 2.0  # (PyTorch's CPU item() waits for no GPU)
    with pytest.raises(IndexError, match="^index 9 is out of bounds for dimension 0 with size 8$"):
        nt.cuda.synchronize()


def test_an_empty_result_visits_no_index(standin_cuda):
    for dev in ("cpu", standin_cuda):
        x, i = _on(dev, _data(), [9, 10, 11, 12])
        assert x[i[:, None], i[:0]].shape == (4, 0)
        assert x.gather(0, i[:0, None]).shape == (0, 1)
    nt.cuda.synchronize()


def test_checks_are_read_before_they_pile_up(standin_cuda):
    x, i = _on(standin_cuda, _data(), GOOD)
    assert len(transfers(lambda: [x[i] for _ in range(1500)])) == 1  # (one read of 1024)


# ---------------------------------------------------------------- training steps with indices
def _classifier_step(model, x, y, optim):
    opt = getattr(nt.optim, optim)(model.parameters(), lr=0.1)

    def step():
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()

    step()
    return step


@pytest.mark.parametrize("optim", ["SGD", "Adam"])
def test_a_cross_entropy_training_step_does_not_copy(standin_cuda, optim):
    nt.manual_seed(0)
    net = _cnn().to(standin_cuda)
    step = _classifier_step(net, _images(standin_cuda), _target(standin_cuda), optim)
    assert transfers(step) == []


def test_an_embedding_classifier_step_does_not_copy(standin_cuda):
    nt.manual_seed(0)
    net = nn.Sequential(nn.Embedding(10, 4), nn.Flatten(), nn.Linear(12, 3)).to(standin_cuda)
    words = nt.tensor([[1, 2, 3], [9, 0, 4], [5, 5, 6], [7, 8, 1]], device=standin_cuda)
    step = _classifier_step(net, words, _target(standin_cuda)[:4], "Adam")
    assert transfers(step) == []
    nt.cuda.synchronize()  # (every check passed)
