"""The distributed types code checks against, as PyTorch names them: DTensor (a Tensor
subclass no plain tensor belongs to), FSDPModule, MixedPrecisionPolicy's fields and
defaults, and implicit_replication under its old and new paths.

PyTorch's own modules are not imported here: importing torch.distributed.fsdp loads
torch.numa as a side effect, which would change torch's public names for the API-surface
test running in the same process. Their facts are written out instead."""

from __future__ import annotations

import dataclasses
import importlib

import pytest

import numtorch

# torch.distributed.fsdp.MixedPrecisionPolicy in PyTorch 2.13: a frozen dataclass
TORCH_POLICY_FIELDS = [
    ("param_dtype", None),
    ("reduce_dtype", None),
    ("output_dtype", None),
    ("cast_forward_inputs", True),
]


def _mod(path: str):
    return importlib.import_module(f"numtorch.{path}")


def test_dtensor_is_a_tensor_type_plain_tensors_are_not():
    dtensor = _mod("distributed.tensor").DTensor
    assert issubclass(dtensor, numtorch.Tensor)
    assert not isinstance(numtorch.ones(2), dtensor)
    assert not isinstance(numtorch.nn.Parameter(numtorch.ones(2)), dtensor)
    assert _mod("distributed._tensor").DTensor is dtensor
    with pytest.raises(NotImplementedError):
        dtensor.from_local(numtorch.ones(2))


def test_implicit_replication_is_a_context_manager():
    for path in ("distributed.tensor.experimental", "distributed._tensor.experimental"):
        with _mod(path).implicit_replication():
            assert float((numtorch.ones(2) * 2).sum()) == 4.0


def test_fsdp_types():
    fsdp = _mod("distributed.fsdp")
    assert _mod("distributed._composable.fsdp").FSDPModule is fsdp.FSDPModule
    assert not isinstance(numtorch.nn.Linear(1, 1), fsdp.FSDPModule)
    fields = [(f.name, f.default) for f in dataclasses.fields(fsdp.MixedPrecisionPolicy)]
    assert fields == TORCH_POLICY_FIELDS
    policy = fsdp.MixedPrecisionPolicy(param_dtype=numtorch.bfloat16)
    with pytest.raises(dataclasses.FrozenInstanceError):
        policy.param_dtype = None
    with pytest.raises(NotImplementedError):
        fsdp.fully_shard(numtorch.nn.Linear(1, 1))
