"""GradBucket: what DDP hands a communication hook, one bucket of flattened gradients."""

from __future__ import annotations


class GradBucket:
    """A bucket of gradients: ``buffer()`` is the flat tensor the hook reduces,
    ``gradients()`` its per-parameter views, ``parameters()`` the parameters they belong to."""

    def __init__(self, index: int, count: int, buffer, offsets, shapes, parameters) -> None:
        self._index, self._count = index, count
        self._buffer = buffer
        self._offsets, self._shapes = list(offsets), list(shapes)
        self._parameters = list(parameters)

    def index(self) -> int:
        return self._index

    def buffer(self):
        return self._buffer

    def gradients(self) -> list:
        out = []
        for off, shape in zip(self._offsets, self._shapes):
            n = 1
            for s in shape:
                n *= s
            out.append(self._buffer[off : off + n].view(shape))
        return out

    def parameters(self) -> list:
        return self._parameters

    def is_last(self) -> bool:
        return self._index == self._count - 1

    def set_buffer(self, buffer) -> None:
        self._buffer = buffer
