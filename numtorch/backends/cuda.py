"""``torch.backends.cuda`` of a CPU build: ``is_built()`` False, and the cuBLAS settings
under ``matmul``, whose ``allow_tf32`` is ``torch.get_float32_matmul_precision() !=
"highest"`` as in PyTorch."""

from __future__ import annotations


def is_built() -> bool:
    """Whether numtorch is built with CUDA: it is not."""
    return False


def _reduction_setting(value, attr_name: str) -> tuple[bool, bool]:
    """(allow reduced precision, allow split-K) from a bool or a tuple/list of one or two."""
    if isinstance(value, bool):
        return value, True
    if not isinstance(value, (list, tuple)):
        raise TypeError(
            f"{attr_name} expects a bool or a tuple/list of bools, but got {type(value)!r}"
        )
    if not value:
        raise TypeError(f"{attr_name} expects at least one boolean argument")
    if len(value) > 2:
        raise TypeError(f"{attr_name} expects at most two boolean arguments")
    for item, which in zip(value, ("allow_reduced_precision", "allow_splitk")):
        if not isinstance(item, bool):
            raise TypeError(f"{attr_name} expects a bool for {which}, but got {type(item)!r}")
    reduced, split_k = value[0], value[1] if len(value) == 2 else True
    if reduced and not split_k:
        raise RuntimeError(
            "allow_splitk=False is not supported when reduced precision reductions are enabled"
        )
    return reduced, split_k


_REDUCTIONS = ("allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction")


class cuBLASModule:  # noqa: N801 - PyTorch's name
    """``torch.backends.cuda.matmul``: ``allow_tf32``, and the fp16/bf16 reduced-precision
    reductions (each with its ``_split_k`` companion); other names are refused."""

    _state = {name: (True, True) for name in _REDUCTIONS}

    def __getattr__(self, name):
        from .._settings import get_float32_matmul_precision

        if name == "allow_tf32":
            return get_float32_matmul_precision() != "highest"
        for reduction in _REDUCTIONS:
            if name == reduction:
                return self._state[reduction][0]
            if name == reduction + "_split_k":
                return self._state[reduction][1]
        raise AttributeError("Unknown attribute " + name)

    def __setattr__(self, name, value):
        from .._settings import set_float32_matmul_precision

        if name == "allow_tf32":
            if not isinstance(value, bool):
                raise RuntimeError(
                    f"set_allow_tf32_cublas expects a bool, but got {type(value).__name__}"
                )
            set_float32_matmul_precision("high" if value else "highest")
        elif name in _REDUCTIONS:
            self._state[name] = _reduction_setting(value, name)
        else:
            raise AttributeError("Unknown attribute " + name)


matmul = cuBLASModule()
