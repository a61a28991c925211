"""numtorch.cuda and the default device, against PyTorch's CPU-only build: no GPU is
reported, and every way of asking for one raises PyTorch's error instead of silently using
the CPU."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from twolibs import assert_same, assert_same_error

import numtorch as nt

pytestmark = pytest.mark.skipif(
    torch.cuda.is_available() or nt.cuda.is_available(), reason="the CPU-only behaviour"
)


@pytest.fixture(autouse=True)
def _reset_default_device():
    yield
    nt.set_default_device(None)
    torch.set_default_device(None)


def test_no_gpu_is_reported():
    assert nt.cuda.is_available() is False and nt.is_cuda_available() is False
    assert nt.cuda.device_count() == 0
    assert nt.cuda.is_initialized() is False
    assert nt.cuda.manual_seed(0) is None and nt.cuda.manual_seed_all(1) is None
    assert nt.cuda.empty_cache() is None and nt.cuda.memory_allocated() == 0


@pytest.mark.parametrize(
    "name",
    ["current_device", "synchronize", "get_device_name", "get_device_capability", "initial_seed"],
)
def test_what_needs_a_gpu_raises(name):
    assert_same_error(lambda T: getattr(T.cuda, name)())


DEVICE_USES = {
    "zeros": lambda T, d: T.zeros(2, device=d),
    "ones": lambda T, d: T.ones(2, 3, device=d),
    "empty": lambda T, d: T.empty(2, device=d),
    "full": lambda T, d: T.full((2,), 1.5, device=d),
    "tensor": lambda T, d: T.tensor([1.0, 2.0], device=d),
    "as_tensor": lambda T, d: T.as_tensor([1.0], device=d),
    "as_tensor_of_a_tensor": lambda T, d: T.as_tensor(T.ones(2), device=d),
    "arange": lambda T, d: T.arange(3, device=d),
    "linspace": lambda T, d: T.linspace(0, 1, 3, device=d),
    "eye": lambda T, d: T.eye(2, device=d),
    "rand": lambda T, d: T.rand(2, device=d),
    "randn": lambda T, d: T.randn(2, device=d),
    "randint": lambda T, d: T.randint(3, (2,), device=d),
    "randperm": lambda T, d: T.randperm(3, device=d),
    "zeros_like": lambda T, d: T.zeros_like(T.ones(2), device=d),
    "rand_like": lambda T, d: T.rand_like(T.ones(2), device=d),
    "to": lambda T, d: T.ones(2).to(d),
    "to_with_dtype": lambda T, d: T.ones(2).to(d, T.float64),
    "to_keyword": lambda T, d: T.ones(2).to(device=d),
    "cuda_method": lambda T, d: T.ones(2).cuda(),
}


@pytest.mark.parametrize("use", DEVICE_USES)
@pytest.mark.parametrize("dev", ["cuda", "cuda:1", "device"])
def test_a_cuda_device_raises_pytorchs_error(use, dev):
    def prog(T):
        return DEVICE_USES[use](T, T.device("cuda") if dev == "device" else dev)

    err = assert_same_error(prog)
    assert err.type is AssertionError and err.text == "Torch not compiled with CUDA enabled"


def test_a_failed_move_leaves_the_tensor_alone():
    x = nt.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(AssertionError):
        x.to("cuda")
    assert x.device == nt.device("cpu") and x.grad_fn is None and x._version == 0


def test_default_device_round_trip():
    def prog(T):
        out = [T.get_default_device()]
        T.set_default_device("cpu")
        out += [T.get_default_device(), T.zeros(2).device]
        T.set_default_device(T.device("cpu"))
        out.append(T.get_default_device())
        T.set_default_device(None)
        out.append(T.get_default_device())
        return [str(d) for d in out]

    assert assert_same(prog) == ["cpu"] * 5


DEFAULT_USES = {
    "zeros": lambda T: T.zeros(2),
    "ones": lambda T: T.ones(2),
    "empty": lambda T: T.empty(2),
    "full": lambda T: T.full((2,), 1.0),
    "tensor": lambda T: T.tensor([1.0]),
    "as_tensor": lambda T: T.as_tensor(np.ones(2)),
    "arange": lambda T: T.arange(3),
    "linspace": lambda T: T.linspace(0, 1, 3),
    "logspace": lambda T: T.logspace(0, 1, 3),
    "eye": lambda T: T.eye(2),
    "rand": lambda T: T.rand(2),
    "randn": lambda T: T.randn(2),
    "randint": lambda T: T.randint(3, (2,)),
    "randperm": lambda T: T.randperm(3),
}


@pytest.mark.parametrize("use", DEFAULT_USES)
def test_a_cuda_default_device_raises_on_first_use(use):
    def prog(T):
        T.set_default_device("cuda")  # setting it is fine
        try:
            return DEFAULT_USES[use](T)
        finally:
            T.set_default_device(None)

    err = assert_same_error(prog)
    assert err.type is AssertionError


def test_what_the_default_device_does_not_touch():
    """from_numpy, the *_like functions and ops on existing tensors keep their inputs'
    device; normal with float arguments ignores the default device too (as in PyTorch)."""

    def prog(T):
        x = T.ones(2)
        T.set_default_device("cuda")
        try:
            outs = [
                T.from_numpy(np.ones(2)),
                T.zeros_like(x),
                T.rand_like(x),
                x + 1,
                T.normal(0.0, 1.0, (2,)),
            ]
            return [str(o.device) for o in outs]
        finally:
            T.set_default_device(None)

    assert assert_same(prog) == ["cpu"] * 5


def test_get_default_device_asks_for_the_gpu():
    def prog(T, dev):
        T.set_default_device(dev)
        try:
            return str(T.get_default_device())
        finally:
            T.set_default_device(None)

    assert_same_error(lambda T: prog(T, "cuda"))
    assert assert_same(lambda T: prog(T, "cuda:1")) == "cuda:1"
    assert_same_error(lambda T: prog(T, 1))


@pytest.mark.parametrize("text", ["foo", "float32", "cuda:", "cuda:01", "cpu:-1", ":0", ""])
def test_bad_device_strings(text):
    assert_same_error(lambda T: T.set_default_device(text))
    assert_same_error(lambda T: T.ones(2).to(text))
    assert nt.get_default_device() == nt.device("cpu")
