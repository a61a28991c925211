"""torch.optim: optimizers. Public names are listed here, one line per optimizer module."""

# ruff: noqa: F401
from . import optimizer
from .optimizer import Optimizer
from .sgd import SGD
