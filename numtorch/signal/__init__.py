"""torch.signal: its subpackage ``windows``."""

# ruff: noqa: F401
from . import windows
