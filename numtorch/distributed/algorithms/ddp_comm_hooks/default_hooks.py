"""DDP's default communication hooks: ``hook(state, bucket) -> Future`` whose value is the
bucket's averaged flat gradient. ``state`` is the process group (None: the world)."""

from __future__ import annotations

import numtorch as torch
import numtorch.distributed as dist

__all__ = [
    "allreduce_hook",
    "fp16_compress_hook",
    "bf16_compress_hook",
    "fp16_compress_wrapper",
    "bf16_compress_wrapper",
]


def _group(process_group):
    return process_group if process_group is not None else dist.group.WORLD


def _first(fut):
    return fut.value()[0]


def _average(process_group, tensor):
    """Divide by the group's size first (no overflow in half precision), then sum."""
    pg = _group(process_group)
    tensor.div_(pg.size())
    return dist.all_reduce(tensor, group=pg, async_op=True).get_future().then(_first)


def allreduce_hook(process_group, bucket):
    """The mean of the bucket over the group: what DDP does with no hook registered."""
    return _average(process_group, bucket.buffer())


def _compressed(dtype, process_group, bucket):
    """All-reduce the bucket cast to ``dtype``, then write it back in the bucket's dtype."""
    buffer = bucket.buffer()
    pg = _group(process_group)
    low = buffer.to(dtype).div_(pg.size())

    def decompress(fut):
        buffer.copy_(fut.value()[0])
        return buffer

    return dist.all_reduce(low, group=pg, async_op=True).get_future().then(decompress)


def fp16_compress_hook(process_group, bucket):
    """The mean all-reduced in float16 (half the bytes), written back in the bucket's dtype."""
    return _compressed(torch.float16, process_group, bucket)


def bf16_compress_hook(process_group, bucket):
    """The mean all-reduced in bfloat16, written back in the bucket's dtype."""
    return _compressed(torch.bfloat16, process_group, bucket)


def _compress_wrapper(dtype, hook):
    def wrapped(hook_state, bucket):
        bucket.set_buffer(bucket.buffer().to(dtype))
        fut = hook(hook_state, bucket)

        def decompress(fut):
            buffer = bucket.buffer()
            buffer.copy_(fut.value())
            return buffer

        return fut.then(decompress)

    return wrapped


def fp16_compress_wrapper(hook):
    """``hook`` run on the bucket cast to float16, its result cast back."""
    return _compress_wrapper(torch.float16, hook)


def bf16_compress_wrapper(hook):
    """``hook`` run on the bucket cast to bfloat16, its result cast back."""
    return _compress_wrapper(torch.bfloat16, hook)
