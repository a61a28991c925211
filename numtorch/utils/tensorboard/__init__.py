"""torch.utils.tensorboard: SummaryWriter, writing TensorBoard event files with the tensorboard
package's own protobufs and event file writer."""

try:
    import tensorboard  # noqa: F401
except ImportError:
    raise ImportError("TensorBoard logging requires TensorBoard version 1.15 or above") from None

from .writer import FileWriter, SummaryWriter

__all__ = ["FileWriter", "SummaryWriter"]
