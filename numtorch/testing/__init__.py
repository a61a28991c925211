"""torch.testing: comparing tensors and making test inputs."""

from numtorch.testing._comparison import assert_allclose, assert_close
from numtorch.testing._creation import make_tensor

__all__ = ["assert_allclose", "assert_close", "make_tensor"]
