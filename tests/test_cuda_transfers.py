"""Copies between host and device in typical programs on device='cuda', counted by the CuPy
stand-in: as many as PyTorch's synchronizations (none, except where the result's size depends
on the data: boolean masks and nonzero). Each failure lists the numtorch lines that copied."""

from __future__ import annotations

import pytest

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
