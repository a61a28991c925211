"""torch.nn: modules, layers, parameters; ``functional``, ``init`` and ``utils``.

Public names are listed here, one block per family module.
"""

# ruff: noqa: F401
from . import functional, init, utils
from .modules.attention import MultiheadAttention
from .modules.container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .modules.module import Module
from .modules.transformer import (
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter
