"""torch.nn.parallel: ``DistributedDataParallel`` across processes; ``DataParallel`` on the
CPU (where PyTorch's, with no GPU, runs the module itself)."""

# ruff: noqa: F401
from .data_parallel import DataParallel, data_parallel
from .distributed import DistributedDataParallel

__all__ = ["data_parallel", "DataParallel", "DistributedDataParallel"]
