"""DDP communication hooks (``default_hooks``) and their registry (``DDPCommHookType``)."""

# ruff: noqa: F401
from . import default_hooks
