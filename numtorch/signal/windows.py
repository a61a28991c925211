"""torch.signal.windows: the public functions of this namespace, listed here."""

# ruff: noqa: F401
from ..ops.windows import (
    bartlett,
    blackman,
    cosine,
    exponential,
    gaussian,
    general_cosine,
    general_hamming,
    hamming,
    hann,
    kaiser,
    nuttall,
)
