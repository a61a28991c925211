"""Several GPUs, GPU memory, streams and events (torch.cuda), on the GPU or under the CuPy
stand-in's two GPUs (the ``cuda`` fixture): tensors on cuda:1, the selected GPU, memory counts
from CuPy's pool (exact under the stand-in, which rounds blocks to 512 bytes as CuPy does),
and PyTorch's error texts."""

from __future__ import annotations

import gc

import numpy as np
import pytest
import torch

import numtorch as nt
from numtorch.testing import _cupy_standin as standin


@pytest.fixture
def two(cuda):
    """Two GPUs (the stand-in always has two), the first one selected."""
    if nt.cuda.device_count() < 2:
        pytest.skip("one GPU only")
    nt.cuda.set_device(0)
    yield
    nt.cuda.set_device(0)


# ---------------------------------------------------------------- cuda:N end to end
def test_factories_and_copies_land_on_the_asked_gpu(two):
    a = nt.arange(6.0, device="cuda:1").reshape(2, 3)
    assert a.device == nt.device("cuda", 1) and str(a.device) == "cuda:1"
    assert a.get_device() == 1 and a.is_cuda
    assert nt.ones(2, device=nt.device("cuda", 1)).device.index == 1
    assert nt.zeros(2, device="cuda").device.index == 0  # the selected GPU
    assert nt.full((2,), 3.0, device="cuda:1").device.index == 1
    assert nt.tensor([1, 2], device="cuda:1").device.index == 1
    assert nt.arange(3).cuda(1).device.index == 1 and nt.arange(3).cuda().device.index == 0
    assert nt.arange(3).to(1).device.index == 1
    assert nt.cuda.current_device() == 0  # nothing above changed the selection
    b = a.to("cuda:0")
    assert b.device.index == 0 and np.array_equal(b.cpu().numpy(), a.cpu().numpy())
    assert a.cuda(1) is a and a.to("cuda:1") is a
    c = b.to("cuda:1") * 2
    assert c.device.index == 1 and c.tolist() == [[0, 2, 4], [6, 8, 10]]


def test_ops_run_with_their_operands_gpu_selected(two):
    a = nt.arange(6.0, device="cuda:1").reshape(2, 3)
    r = (a @ a.T).sum(0) + 1 - a.exp().mean()
    assert r.device.index == 1 and nt.cuda.current_device() == 0
    want = torch.arange(6.0).reshape(2, 3)
    want = (want @ want.T).sum(0) + 1 - want.exp().mean()
    np.testing.assert_allclose(r.cpu().numpy(), want.numpy(), rtol=1e-6)
    s = a[a > 2.0]  # a boolean mask: data-dependent shape
    assert s.device.index == 1 and s.tolist() == [3.0, 4.0, 5.0]
    assert (a + nt.tensor(2.0)).device.index == 1  # a CPU scalar tensor joins cuda:1


def test_operands_on_two_gpus_refuse_with_pytorchs_text(two):
    a, b = nt.ones(3, device="cuda:0"), nt.ones(3, device="cuda:1")
    with pytest.raises(RuntimeError) as e:
        a + b
    assert str(e.value) == (
        "Expected all tensors to be on the same device, but found at least two devices, "
        "cuda:0 and cuda:1!"
    )
    with pytest.raises(RuntimeError, match="cuda:1 and cuda:0!$"):
        nt.stack([b, a])
    with pytest.raises(RuntimeError) as e:
        b + nt.ones(3)
    assert str(e.value) == (
        "Expected all tensors to be on the same device, but found at least two devices, "
        "cuda:1 and cpu!"
    )


def test_backward_on_the_second_gpu(two):
    w = nt.tensor([[1.0, -2.0], [0.5, 3.0]], device="cuda:1", requires_grad=True)
    x = nt.tensor([[2.0, 1.0]], device="cuda:1")
    loss = (x @ w).tanh().sum() + (w * w).sum()
    loss.backward()
    loss2 = (x @ w).sum()
    loss2.backward()  # accumulates into .grad in place
    tw = torch.tensor([[1.0, -2.0], [0.5, 3.0]], requires_grad=True)
    tx = torch.tensor([[2.0, 1.0]])
    ((tx @ tw).tanh().sum() + (tw * tw).sum()).backward()
    (tx @ tw).sum().backward()
    assert w.grad.device.index == 1 and nt.cuda.current_device() == 0
    np.testing.assert_allclose(w.grad.cpu().numpy(), tw.grad.numpy(), rtol=1e-6)
    (g,) = nt.autograd.grad((w.to("cuda:0") ** 2).sum(), w)  # back across the copy
    assert g.device.index == 1
    np.testing.assert_allclose(g.cpu().numpy(), 2 * tw.detach().numpy())


def test_in_place_writes_training_and_transforms_on_the_second_gpu(two):
    a = nt.arange(4.0, device="cuda:1")
    a[0] = 5
    a.add_(1)
    a[nt.tensor([1, 2])] = 7.0
    a.index_add_(0, nt.tensor([0], device="cuda:1"), nt.ones(1, device="cuda:1"))
    assert a.tolist() == [7.0, 7.0, 7.0, 4.0] and a.device.index == 1
    m, tm = nt.nn.Linear(3, 2), torch.nn.Linear(3, 2)
    with torch.no_grad():
        tm.weight.copy_(torch.from_numpy(m.weight.detach().numpy()))
        tm.bias.copy_(torch.from_numpy(m.bias.detach().numpy()))
    m = m.to("cuda:1")
    x = nt.arange(15.0, device="cuda:1").reshape(5, 3) / 10
    tx = torch.arange(15.0).reshape(5, 3) / 10
    for lib, mod, inp in ((nt, m, x), (torch, tm, tx)):
        opt = lib.optim.SGD(mod.parameters(), lr=0.1, momentum=0.9)
        for _ in range(2):
            opt.zero_grad()
            lib.nn.functional.mse_loss(mod(inp), lib.zeros_like(mod(inp))).backward()
            opt.step()
    np.testing.assert_allclose(m.weight.detach().cpu().numpy(), tm.weight.detach().numpy(), 1e-5)
    np.testing.assert_allclose(m.bias.detach().cpu().numpy(), tm.bias.detach().numpy(), 1e-5)
    assert m.weight.device.index == 1 and m.weight.grad.device.index == 1
    per_sample = nt.func.vmap(nt.func.grad(lambda w, x: (w * x).sum()), in_dims=(None, 0))
    g = per_sample(nt.ones(3, device="cuda:1"), x)
    assert g.device.index == 1 and np.allclose(g.cpu().numpy(), x.cpu().numpy())
    assert m.cuda(0).weight.device.index == 0 and nt.cuda.current_device() == 0


def test_the_selected_gpu(two):
    nt.cuda.set_device(1)
    assert nt.cuda.current_device() == 1
    assert nt.zeros(1, device="cuda").device.index == 1
    nt.cuda.set_device("cuda:0")
    assert nt.cuda.current_device() == 0
    with nt.cuda.device(1):
        assert nt.cuda.current_device() == 1
        assert nt.ones(1, device="cuda").device.index == 1
        with nt.cuda.device(None), nt.cuda.device(-1):  # nothing to select
            assert nt.cuda.current_device() == 1
    assert nt.cuda.current_device() == 0
    t = nt.ones(1, device="cuda:1")
    with nt.cuda.device_of(t):
        assert nt.cuda.current_device() == 1
    with nt.cuda.device_of(nt.ones(1)):  # a CPU tensor: nothing
        assert nt.cuda.current_device() == 0
    with nt.device("cuda:1"):
        assert nt.empty(2).device.index == 1 and nt.randn(2).device.index == 1
    assert nt.empty(2).device.type == "cpu"


def test_the_selected_gpus_errors(two):
    with pytest.raises(ValueError) as e:
        nt.cuda.set_device("cuda")
    assert str(e.value) == (
        "Expected a torch.device with a specified index or an integer, but got:cuda"
    )
    with pytest.raises(ValueError, match="^Expected a cuda device, but got: cpu$"):
        nt.cuda.device("cpu")
    with pytest.raises(RuntimeError, match="^CUDA error: invalid device ordinal"):
        nt.cuda.set_device(2)
    with pytest.raises(RuntimeError, match="^CUDA error: invalid device ordinal"):
        nt.ones(1, device="cuda:2")
    assert nt.cuda.current_device() == 0


# ---------------------------------------------------------------- memory
def _settled():
    gc.collect()
    nt.cuda.empty_cache()


def test_memory_counts_follow_cupys_pool(cuda):
    nt.ones(1, device="cuda")  # (first use: the allocator is installed)
    _settled()
    base = nt.cuda.memory_allocated()
    nt.cuda.reset_peak_memory_stats()
    assert nt.cuda.max_memory_allocated() == base
    a = nt.empty(1000, device="cuda")  # 4000 bytes -> a block of 4096
    assert nt.cuda.memory_allocated() == base + 4096
    b = nt.empty(10, dtype=nt.float64, device="cuda")  # 80 bytes -> 512
    assert nt.cuda.memory_allocated(0) == base + 4608
    del a
    gc.collect()
    assert nt.cuda.memory_allocated() == base + 512
    assert nt.cuda.max_memory_allocated() == base + 4608
    assert nt.cuda.memory_reserved() == base + 4608  # the pool keeps the freed block
    nt.cuda.empty_cache()
    assert nt.cuda.memory_reserved() == base + 512
    assert nt.cuda.max_memory_reserved() >= base + 4608
    stats = nt.cuda.memory_stats()
    assert stats["allocated_bytes.all.current"] == base + 512
    assert stats["allocated_bytes.all.peak"] == base + 4608
    assert stats["reserved_bytes.all.current"] == base + 512
    assert list(stats) == sorted(stats)
    with pytest.warns(FutureWarning, match="reset_max_memory_allocated now calls"):
        nt.cuda.reset_max_memory_allocated()
    assert nt.cuda.max_memory_allocated() == base + 512
    del b


def test_memory_counts_per_gpu(two):
    nt.ones(1, device="cuda")
    _settled()
    base0, base1 = nt.cuda.memory_allocated(0), nt.cuda.memory_allocated("cuda:1")
    nt.cuda.reset_peak_memory_stats(1)
    x = nt.empty(300, dtype=nt.float64, device="cuda:1")  # 2400 bytes -> 2560
    y = x * 2  # computed on cuda:1: one more block there
    assert nt.cuda.memory_allocated(nt.device("cuda", 1)) == base1 + 5120
    assert nt.cuda.memory_allocated(0) == base0
    assert nt.cuda.max_memory_allocated(1) == base1 + 5120
    with nt.cuda.device(1):
        assert nt.cuda.memory_allocated() == base1 + 5120
    del x, y
    gc.collect()
    assert nt.cuda.memory_allocated(1) == base1
    free, total = nt.cuda.mem_get_info(1)
    assert 0 < free <= total


def test_a_meta_tensor_does_not_initialize_cuda():
    nt.empty(3, device="meta") + 1
    assert nt.cuda.is_initialized() is False
    assert nt.cuda.memory_stats() == {} and nt.cuda.max_memory_allocated() == 0


def test_is_initialized_after_first_gpu_use(cuda):
    if standin.active():
        assert nt.cuda.is_initialized() is False  # (the stand-in was just chosen)
    nt.ones(1, device="cuda")
    assert nt.cuda.is_initialized() is True


# ---------------------------------------------------------------- streams and events
def test_streams(two):
    s = nt.cuda.Stream(priority=-1)
    assert s.device == nt.device("cuda", 0) and s.priority == -1
    assert nt.cuda.current_stream() == nt.cuda.default_stream()
    assert nt.cuda.default_stream().cuda_stream == 0 and s != nt.cuda.default_stream()
    with nt.cuda.stream(s):
        assert nt.cuda.current_stream() == s
        r = nt.ones(3, device="cuda") * 2
    assert nt.cuda.current_stream() == nt.cuda.default_stream()
    assert r.tolist() == [2.0, 2.0, 2.0]
    s1 = nt.cuda.Stream(device=1)
    assert s1.device.index == 1 and nt.cuda.current_device() == 0
    with nt.cuda.stream(s1):  # a stream of another GPU selects that GPU for the block
        assert nt.cuda.current_device() == 1 and nt.cuda.current_stream() == s1
        assert nt.ones(1, device="cuda").device.index == 1
    assert nt.cuda.current_device() == 0 and nt.cuda.current_stream(1) != s1
    nt.cuda.set_stream(s)
    assert nt.cuda.current_stream() == s
    nt.cuda.set_stream(nt.cuda.default_stream())
    with nt.cuda.stream(None):
        pass
    assert s.query() is True and s.synchronize() is None
    s.wait_stream(s1)
    e = s.record_event()
    assert isinstance(e, nt.cuda.Event) and e.query() is True
    s1.wait_event(e)
    nt.cuda.synchronize()
    nt.cuda.synchronize(1)


def test_events(two):
    start, end = nt.cuda.Event(enable_timing=True), nt.cuda.Event(enable_timing=True)
    assert start.query() is True  # not recorded yet
    start.record()
    nt.ones(100, device="cuda").sum()
    end.record()
    end.synchronize()
    assert end.elapsed_time(end) == 0.0 and start.elapsed_time(end) >= 0.0
    plain = nt.cuda.Event()
    plain.record()
    plain.wait()
    plain.wait(nt.cuda.Stream())
    with pytest.raises(ValueError) as e:
        plain.elapsed_time(end)
    assert str(e.value) == "Both events must be created with argument 'enable_timing=True'."
    with pytest.raises(ValueError) as e:
        start.elapsed_time(nt.cuda.Event(enable_timing=True))
    assert str(e.value) == "Both events must be recorded before calculating elapsed time."
    with pytest.raises(RuntimeError) as e:
        start.record(nt.cuda.Stream(device=1))
    assert str(e.value) == "Event device 0 does not match recording stream's device 1."


def test_record_stream(two):
    s = nt.cuda.Stream(device=1)
    t = nt.ones(4, device="cuda:1")
    assert t.record_stream(s) is None
    with pytest.raises(NotImplementedError) as e:
        nt.ones(2).record_stream(s)
    assert str(e.value).startswith(
        "Could not run 'aten::record_stream' with arguments from the 'CPU' backend."
    )


def test_what_needs_cuda_raises_without_it():
    if nt.cuda.is_available():
        pytest.skip("a GPU is present")
    for f in (nt.cuda.Stream, nt.cuda.Event, nt.cuda.current_stream, nt.cuda.mem_get_info):
        with pytest.raises(AssertionError, match="^Torch not compiled with CUDA enabled$"):
            f()
    assert nt.cuda.memory_stats() == {} and nt.cuda.memory_reserved() == 0


def test_copy_between_devices_as_pytorch(cuda):
    """copy_ takes a source on any device (a CPU checkpoint loads into a GPU model), and the
    gradient goes back to the source's device."""
    a = nt.tensor([1.0, 2.0, 3.0], requires_grad=True)
    z = nt.zeros(3, device=cuda)
    z.copy_(a * 2)
    assert z.device.type == "cuda"
    (z * nt.tensor([1.0, 10.0, 100.0], device=cuda)).sum().backward()
    assert a.grad.device.type == "cpu" and a.grad.tolist() == [2.0, 20.0, 200.0]
    back = nt.zeros(3)
    back.copy_(z)
    assert back.tolist() == [2.0, 4.0, 6.0]
    cpu_model = nt.nn.Linear(3, 2)
    gpu_model = nt.nn.Linear(3, 2).to(cuda)
    gpu_model.load_state_dict(cpu_model.state_dict())
    assert gpu_model.weight.device.type == "cuda"
    assert gpu_model.weight.cpu().tolist() == cpu_model.weight.tolist()
    other = nt.zeros(3, device="cuda:1")
    other.copy_(z)
    assert other.device == nt.device("cuda:1") and other.tolist() == [2.0, 4.0, 6.0]
