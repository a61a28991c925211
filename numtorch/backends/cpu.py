"""``torch.backends.cpu``: the vector instruction set the CPU offers, as NumPy detected
it."""

__all__ = ["get_cpu_capability"]


def get_cpu_capability() -> str:
    """ "AVX512" (AVX-512 F/CD/BW/DQ/VL), "AVX2", "VSX", "Z VECTOR" or "DEFAULT" (numtorch
    cannot tell SVE's vector length, so never "SVE256")."""
    import numpy as np

    try:
        features = np._core._multiarray_umath.__cpu_features__
    except AttributeError:  # (NumPy 1.x)
        features = np.core._multiarray_umath.__cpu_features__
    for capability, needs in _CAPABILITIES:
        if all(features.get(f, False) for f in needs):
            return capability
    return "DEFAULT"


_CAPABILITIES = (
    ("AVX512", ("AVX512_SKX",)),
    ("AVX2", ("AVX2", "FMA3")),
    ("VSX", ("VSX3",)),
    ("Z VECTOR", ("VXE",)),
)
