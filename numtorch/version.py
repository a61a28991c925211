"""torch.version: the PyTorch release numtorch mirrors, and the build facts libraries read."""

from __future__ import annotations

__all__ = ["__version__", "debug", "cuda", "git_version", "hip", "rocm", "xpu"]

# PyTorch 2.13's API; the local label says which build this is, as PyTorch's "+cpu" does.
__version__ = "2.13.0+numtorch"
debug = False
cuda: str | None = None
git_version = "Unknown"
hip: str | None = None
rocm: str | None = None
xpu: str | None = None
