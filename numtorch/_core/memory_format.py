"""torch.memory_format and its values: the layouts clone, contiguous and the *_like
factories may be asked for."""

from __future__ import annotations


class memory_format:  # noqa: N801 - PyTorch's name
    """A memory layout (torch.memory_format); only the module's constants exist."""

    __slots__ = ("_name",)
    __module__ = "torch"

    def __new__(cls, *args, **kwargs):
        raise TypeError("cannot create 'torch.memory_format' instances")

    @classmethod
    def _make(cls, name: str) -> memory_format:
        self = object.__new__(cls)
        object.__setattr__(self, "_name", name)
        return self

    def __repr__(self) -> str:
        return f"torch.{self._name}"

    def __reduce__(self) -> tuple:
        return _by_name, (self._name,)  # unpickling gives back the same constant

    def __setattr__(self, name, value):
        raise AttributeError(f"'torch.memory_format' object has no attribute '{name}'")


contiguous_format = memory_format._make("contiguous_format")
preserve_format = memory_format._make("preserve_format")
channels_last = memory_format._make("channels_last")
channels_last_3d = memory_format._make("channels_last_3d")
legacy_contiguous_format = contiguous_format  # (the same object in PyTorch)


def _by_name(name: str) -> memory_format:
    return globals()[name]


# The rank each channels-last layout needs, and the order of dims in memory.
CHANNELS_LAST = {channels_last: (4, (0, 2, 3, 1)), channels_last_3d: (5, (0, 2, 3, 4, 1))}
