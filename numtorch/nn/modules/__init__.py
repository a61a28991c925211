"""torch.nn.modules: the layers, one module per family. The public names are listed in
numtorch/nn/__init__.py; ``nn.modules.<Name>`` resolves to the same objects."""

import sys


def __getattr__(name: str):
    nn = sys.modules[__name__.rpartition(".")[0]]
    if not name.startswith("_") and hasattr(nn, name):
        return getattr(nn, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
