"""GPU tensors through pickle, copy.deepcopy and numtorch.save/load: a tensor keeps its GPU
(cuda:0, cuda:1), and load's ``map_location`` (a string, a device, a dict, a callable) moves
storages as PyTorch's does. Runs under the ``cuda`` fixture (a real GPU, else the CuPy
stand-in in strict mode)."""

from __future__ import annotations

import copy
import io
import pickle

import numpy as np
import pytest
import torch

import numtorch as nt


def _host(t) -> np.ndarray:
    return t.detach().cpu().numpy()


def _need_two_gpus() -> None:
    """A real machine with one GPU has no cuda:1 (the stand-in has two)."""
    if nt.cuda.device_count() < 2:
        pytest.skip("needs two GPUs")


def _on(t, where: str) -> None:
    """t lives on ``where`` ('cpu' or 'cuda:N'), its data on that device."""
    assert str(t.device) == where
    if where == "cpu":
        assert isinstance(t._data, np.ndarray)
    else:
        assert not isinstance(t._data, np.ndarray)
        assert t._data.device.id == int(where.split(":")[1])


def _gpu_tensor(index: int, *shape, dtype=nt.float32):
    """A tensor made on the GPU ``index`` (a draw: placed there by the GPU generator)."""
    return nt.rand(*shape, device=f"cuda:{index}", dtype=dtype)


def _saved(obj) -> io.BytesIO:
    buf = io.BytesIO()
    nt.save(obj, buf)
    buf.seek(0)
    return buf


@pytest.mark.parametrize("index", [0, 1])
def test_pickle_keeps_the_gpu(cuda, index):
    if index:
        _need_two_gpus()
    x = _gpu_tensor(index, 3, 2, dtype=nt.float64).requires_grad_()
    y = pickle.loads(pickle.dumps(x))
    _on(y, f"cuda:{index}")
    assert y.requires_grad and y.dtype == nt.float64
    np.testing.assert_array_equal(_host(y), _host(x))
    p = nt.nn.Parameter(_gpu_tensor(index, 4))
    q = pickle.loads(pickle.dumps(p))
    assert type(q) is nt.nn.Parameter and q.requires_grad
    _on(q, f"cuda:{index}")
    np.testing.assert_array_equal(_host(q), _host(p))


@pytest.mark.parametrize("index", [0, 1])
def test_deepcopy_keeps_the_gpu(cuda, index):
    if index:
        _need_two_gpus()
    x = _gpu_tensor(index, 5)
    x.grad = _gpu_tensor(index, 5)
    y = copy.deepcopy(x)
    _on(y, f"cuda:{index}"), _on(y.grad, f"cuda:{index}")
    np.testing.assert_array_equal(_host(y), _host(x))
    assert y._data.data.ptr != x._data.data.ptr  # its own memory
    m = nt.nn.Linear(3, 2)
    m.weight = nt.nn.Parameter(_gpu_tensor(index, 2, 3))
    m.bias = nt.nn.Parameter(_gpu_tensor(index, 2))
    for clone in (copy.deepcopy(m), pickle.loads(pickle.dumps(m))):
        for name, p in clone.named_parameters():
            assert type(p) is nt.nn.Parameter
            _on(p, f"cuda:{index}")
            np.testing.assert_array_equal(_host(p), _host(getattr(m, name)))


def test_save_and_load_keep_each_tensors_device(cuda):
    _need_two_gpus()
    x0 = _gpu_tensor(0, 2, 3)
    saved = {"x0": x0, "x1": _gpu_tensor(1, 4, dtype=nt.float64), "c": nt.arange(3), "t": x0.t()}
    loaded = nt.load(_saved(saved))
    for k, where in {"x0": "cuda:0", "x1": "cuda:1", "c": "cpu", "t": "cuda:0"}.items():
        _on(loaded[k], where)
        assert loaded[k].dtype == saved[k].dtype and loaded[k].shape == saved[k].shape
        np.testing.assert_array_equal(_host(loaded[k]), _host(saved[k]))


MAPS = {
    "str_cpu": ("cpu", {"cuda:0": "cpu", "cuda:1": "cpu", "cpu": "cpu"}),
    "str_cuda1": ("cuda:1", {"cuda:0": "cuda:1", "cuda:1": "cuda:1", "cpu": "cuda:1"}),
    "str_cuda": ("cuda", {"cuda:0": "cuda:0", "cuda:1": "cuda:0", "cpu": "cuda:0"}),
    "device": (nt.device("cuda", 1), {"cuda:0": "cuda:1", "cuda:1": "cuda:1", "cpu": "cuda:1"}),
    "dict": (
        {"cuda:1": "cuda:0", "cpu": "cuda:1"},
        {"cuda:0": "cuda:0", "cuda:1": "cuda:0", "cpu": "cuda:1"},
    ),
    "callable": (
        lambda storage, loc: storage.to("cuda:0") if loc == "cpu" else None,
        {"cuda:0": "cuda:0", "cuda:1": "cuda:1", "cpu": "cuda:0"},
    ),
    "callable_cpu": (
        lambda storage, loc: storage,  # the storage as read: on the CPU
        {"cuda:0": "cpu", "cuda:1": "cpu", "cpu": "cpu"},
    ),
}


@pytest.mark.parametrize("name", MAPS)
def test_map_location(cuda, name):
    _need_two_gpus()
    map_location, where = MAPS[name]
    saved = {"cuda:0": _gpu_tensor(0, 3), "cuda:1": _gpu_tensor(1, 2, 2), "cpu": nt.ones(2)}
    loaded = nt.load(_saved(saved), map_location=map_location)
    for k, t in saved.items():
        _on(loaded[k], where[k])
        np.testing.assert_array_equal(_host(loaded[k]), _host(t))


def test_load_refuses_a_gpu_that_does_not_exist(cuda):
    count = nt.cuda.device_count()
    with pytest.raises(RuntimeError) as info:
        nt.load(_saved({"x": nt.ones(2)}), map_location=f"cuda:{count}")
    assert str(info.value) == (
        f"Attempting to deserialize object on CUDA device {count} but "
        f"torch.cuda.device_count() is {count}. Please use torch.load with map_location to "
        "map your storages to an existing device."
    )


def test_gpu_checkpoints_are_pytorchs_format(cuda, tmp_path):
    """PyTorch reads numtorch's GPU checkpoint (mapped to its CPU), storage locations
    included; a module's state dict goes back onto the GPU."""
    _need_two_gpus()
    x1 = _gpu_tensor(1, 3, dtype=nt.float64)
    path = tmp_path / "gpu.pt"
    nt.save({"x1": x1}, path)
    seen = []
    got = torch.load(path, map_location=lambda s, loc: seen.append(loc) or s)
    assert seen == ["cuda:1"]
    np.testing.assert_array_equal(got["x1"].numpy(), _host(x1))
    m = nt.nn.Linear(2, 2)
    state = {k: v.to("cuda:0") for k, v in m.state_dict().items()}
    nt.save(state, path)
    back = nt.load(path)
    for v in back.values():
        _on(v, "cuda:0")
    m.load_state_dict(nt.load(path, map_location="cpu"))
