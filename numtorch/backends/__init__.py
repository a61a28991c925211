"""``torch.backends`` as PyTorch's CPU build shows it: no cuDNN, MPS or CUDA, flags that
can be read, set (bools checked as PyTorch checks them) and set for a block with
``flags(...)``, which restores them on exit. numtorch's kernels are NumPy's, so the flags
change no result: they are kept so that programs written for PyTorch run unchanged."""

from __future__ import annotations

from . import cpu, cuda, cudnn, mkl, mkldnn, mps, openmp, opt_einsum

__all__ = ["cpu", "cuda", "cudnn", "mkl", "mkldnn", "mps", "openmp", "opt_einsum"]
