"""torch.fft: the public functions of this namespace, listed here."""

# ruff: noqa: F401
# NumPy's names (x= for input=, axis= for dim=, ...), as PyTorch's argument parser takes them
from ._core.signature import numpy_keywords_in as _numpy_keywords_in
from .ops.fft import (
    fft,
    fft2,
    fftfreq,
    fftn,
    fftshift,
    hfft,
    hfft2,
    hfftn,
    ifft,
    ifft2,
    ifftn,
    ifftshift,
    ihfft,
    ihfft2,
    ihfftn,
    irfft,
    irfft2,
    irfftn,
    rfft,
    rfft2,
    rfftfreq,
    rfftn,
)

_numpy_keywords_in(globals(), "fft")
