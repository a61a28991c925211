"""BatchNorm1d/2d/3d, their lazy forms, SyncBatchNorm, and the base they share with the
instance norms (_NormBase)."""

from __future__ import annotations

from typing import Any

from ..._core import dtype as dt
from ..._core.tensor import Tensor
from ...ops.creation import ones, tensor, zeros
from .. import functional as F
from ..parameter import UninitializedBuffer, UninitializedParameter, is_lazy
from .lazy import LazyModuleMixin
from .module import Module
from .normalization import _affine_parameters, _reset_affine


class _NormBase(Module):
    """Per-channel affine parameters (``weight`` = 1, ``bias`` = 0) and, with
    track_running_stats, the buffers ``running_mean`` (0), ``running_var`` (1) and
    ``num_batches_tracked`` (an int64 scalar); shared by the batch and instance norms."""

    _version = 2  # version 2 added num_batches_tracked
    __constants__ = ["track_running_stats", "momentum", "eps", "num_features", "affine"]
    _input_dims: tuple = ()

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device=None,
        dtype=None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        _affine_parameters(self, (num_features,), affine, bias, device, dtype)
        track = track_running_stats
        like = {"device": device, "dtype": dtype}
        self.register_buffer("running_mean", zeros(num_features, **like) if track else None)
        self.register_buffer("running_var", ones(num_features, **like) if track else None)
        self.register_buffer(
            "num_batches_tracked", tensor(0, dtype=dt.int64, device=device) if track else None
        )
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        """running_mean = 0, running_var = 1, num_batches_tracked = 0."""
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        """The running statistics and the affine parameters back to their initial values."""
        self.reset_running_stats()
        if self.affine:
            _reset_affine(self)

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() not in self._input_dims:
            allowed = " or ".join(f"{d}D" for d in self._input_dims)
            raise ValueError(f"expected {allowed} input (got {input.dim()}D input)")

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, bias={self.bias is not None}, "
            f"track_running_stats={self.track_running_stats}"
        )

    def _load_from_state_dict(
        self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
    ) -> None:
        version = local_metadata.get("version", None)
        key = prefix + "num_batches_tracked"
        # checkpoints before version 2 have no num_batches_tracked: keep ours (or 0)
        if (version is None or version < 2) and self.track_running_stats and key not in state_dict:
            nbt = self.num_batches_tracked
            state_dict[key] = nbt if nbt is not None else tensor(0, dtype=dt.int64)
        super()._load_from_state_dict(
            state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
        )


class _BatchNorm(_NormBase):
    """Batch normalization over all dims but the channels (dim 1): in training the batch
    statistics normalize and (with track_running_stats) update the running ones in place,
    with ``momentum`` or, for momentum=None, the cumulative average over
    ``num_batches_tracked`` batches; in eval the running statistics normalize (the batch
    ones when there are none).

    ``_is_batch_norm = True`` marks the batch norms (not the instance norms) for
    ``numtorch.func.replace_all_batch_norm_modules_``, which cannot import this module.
    """

    _is_batch_norm = True

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:
                factor = 1.0 / float(self.num_batches_tracked)
        use_stats = not self.training or self.track_running_stats
        return F.batch_norm(
            input,
            self.running_mean if use_stats else None,
            self.running_var if use_stats else None,
            self.weight,
            self.bias,
            self.training or (self.running_mean is None and self.running_var is None),
            factor,
            self.eps,
        )


class BatchNorm1d(_BatchNorm):
    """Batch normalization of (N, C) or (N, C, L) input."""

    _input_dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalization of (N, C, H, W) input."""

    _input_dims = (4,)


class BatchNorm3d(_BatchNorm):
    """Batch normalization of (N, C, D, H, W) input."""

    _input_dims = (5,)


class _LazyNormBase(LazyModuleMixin, _NormBase):
    """A norm whose ``num_features`` (and so the shapes of its parameters and running
    statistics) comes from dim 1 of its first input."""

    def __init__(
        self,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device=None,
        dtype=None,
        *,
        bias: bool = True,
    ) -> None:
        # no affine and no running stats yet: they are created uninitialized below
        super().__init__(0, eps, momentum, False, False, device, dtype, bias=False)
        self.affine = affine
        self.track_running_stats = track_running_stats
        like = {"device": device, "dtype": dtype}
        if affine:
            self.weight = UninitializedParameter(**like)
            if bias:
                self.bias = UninitializedParameter(**like)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(**like)
            self.running_var = UninitializedBuffer(**like)
            self.num_batches_tracked = tensor(0, dtype=dt.int64, device=device)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor) -> None:
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            for t in (self.weight, self.bias, self.running_mean, self.running_var):
                if t is not None and is_lazy(t):
                    t.materialize((self.num_features,))
            self.reset_parameters()


def _lazy_norm(cls: type[_NormBase], base: type[_NormBase], module: str) -> type:
    """The class ``Lazy<cls>``: ``cls`` whose num_features is inferred from the first input,
    becoming a ``cls`` then."""
    name = "Lazy" + cls.__name__
    doc = f"{cls.__name__} whose num_features is inferred from the first input."
    ns = {
        "__doc__": doc,
        "__module__": module,
        "__qualname__": name,
        "cls_to_become": cls,
        "_input_dims": cls._input_dims,
    }
    return type(name, (_LazyNormBase, base), ns)


LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d = (
    _lazy_norm(cls, _BatchNorm, __name__) for cls in (BatchNorm1d, BatchNorm2d, BatchNorm3d)
)


class SyncBatchNorm(_BatchNorm):
    """Batch normalization of input with at least 2 dims whose statistics would be
    synchronized across processes; numtorch has no process groups, so it normalizes like
    the other batch norms (as PyTorch's does without an initialized process group)."""

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        process_group: Any | None = None,
        device=None,
        dtype=None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__(
            num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias
        )
        self.process_group = process_group

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")
        return super().forward(input)

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group: Any | None = None) -> Module:
        """module with every batch norm in it replaced by a SyncBatchNorm holding the same
        parameters and buffers."""
        out = module
        if isinstance(module, _BatchNorm):
            out = cls(
                module.num_features,
                module.eps,
                module.momentum,
                module.affine,
                module.track_running_stats,
                process_group,
                bias=module.bias is not None,
            )
            if module.affine:
                out.weight = module.weight
                out.bias = module.bias
            out.running_mean = module.running_mean
            out.running_var = module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
            if hasattr(module, "qconfig"):
                out.qconfig = module.qconfig
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out
