"""torch.nn: modules, layers, parameters; ``functional``, ``init`` and ``utils``.

Public names are listed here, one block per family module.
"""

# ruff: noqa: F401
from . import functional, init, utils
from .modules.batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d, SyncBatchNorm
from .modules.container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .modules.instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .modules.module import Module
from .modules.normalization import CrossMapLRN2d, GroupNorm, LayerNorm, LocalResponseNorm, RMSNorm
from .modules.sparse import Embedding, EmbeddingBag
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter
