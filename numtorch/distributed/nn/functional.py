"""Differentiable collectives, with PyTorch's backward for each: the gradient of a
broadcast is a reduce to the source, of a reduce a broadcast, of an all_gather the sum of
each rank's share of the gradients (an all_to_all), of gather a scatter and back, of
all_reduce an all_reduce of the gradients with the same op."""

from __future__ import annotations

import numtorch as torch
import numtorch.distributed as dist
from numtorch.autograd import Function
from numtorch.distributed import ReduceOp, group

__all__ = [
    "broadcast",
    "gather",
    "scatter",
    "reduce",
    "reduce_scatter",
    "all_gather",
    "all_to_all",
    "all_to_all_single",
    "all_reduce",
]


class _Broadcast(Function):
    @staticmethod
    def forward(ctx, src, group, tensor):
        ctx.src, ctx.group, ctx.rank = src, group, dist.get_rank(group=group)
        out = tensor.clone()
        dist.broadcast(out, src, group=group)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        g = _Reduce.apply(ctx.src, ReduceOp.SUM, ctx.group, grad_output)
        return None, None, g if ctx.src == ctx.rank else torch.zeros_like(g)


class _Reduce(Function):
    @staticmethod
    def forward(ctx, dst, op, group, tensor):
        ctx.dst, ctx.group = dst, group
        out = tensor.clone()
        dist.reduce(out, dst, op=op, group=group)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        return None, None, None, _Broadcast.apply(ctx.dst, ctx.group, grad_output)


class _Gather(Function):
    @staticmethod
    def forward(ctx, dst, group, tensor):
        ctx.dst, ctx.group = dst, group
        outs = [torch.zeros_like(tensor) for _ in range(dist.get_world_size(group=group))]
        mine = dist.get_rank(group=group) == dst
        dist.gather(tensor.contiguous(), outs if mine else None, dst, group=group)
        return tuple(outs)

    @staticmethod
    def backward(ctx, *grads):
        return None, None, _Scatter.apply(ctx.dst, ctx.group, *grads)


class _Scatter(Function):
    @staticmethod
    def forward(ctx, src, group, *tensors):
        ctx.src, ctx.group = src, group
        if any(t.size() != tensors[0].size() for t in tensors):
            raise AssertionError
        out = torch.zeros_like(tensors[0])
        mine = dist.get_rank(group=group) == src
        dist.scatter(out, list(tensors) if mine else None, src, group=group)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        return (None, None, *_Gather.apply(ctx.src, ctx.group, grad_output))


class _ReduceScatter(Function):
    @staticmethod
    def forward(ctx, op, group, output, *inputs):
        ctx.group = group
        output = output.contiguous()
        dist.reduce_scatter(output, [t.contiguous() for t in inputs], op=op, group=group)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        return (None, None, None, *_AllGather.apply(ctx.group, grad_output))


class _AllGather(Function):
    @staticmethod
    def forward(ctx, group, tensor):
        ctx.group = group
        tensor = tensor.contiguous()
        outs = [torch.empty_like(tensor) for _ in range(dist.get_world_size(group=group))]
        dist.all_gather(outs, tensor, group=group)
        return tuple(outs)

    @staticmethod
    def backward(ctx, *grads):
        shares = _AllToAll.apply(ctx.group, [torch.empty_like(g) for g in grads], *grads)
        return None, torch.stack(shares).sum(0)


class _AllToAll(Function):
    @staticmethod
    def forward(ctx, group, outputs, *inputs):
        ctx.group = group
        ctx.sizes = [t.size() for t in inputs]
        dist.all_to_all(outputs, [t.contiguous() for t in inputs], group=group)
        return tuple(outputs)

    @staticmethod
    def backward(ctx, *grads):
        outs = [torch.empty(s, dtype=grads[0].dtype) for s in ctx.sizes]
        return (None, None, *_AllToAll.apply(ctx.group, outs, *grads))


class _AllToAllSingle(Function):
    @staticmethod
    def forward(ctx, group, output, output_split_sizes, input_split_sizes, input):
        ctx.group, ctx.size = group, input.size()
        ctx.splits = (input_split_sizes, output_split_sizes)
        dist.all_to_all_single(output, input, output_split_sizes, input_split_sizes, group=group)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        out = torch.empty(ctx.size, dtype=grad_output.dtype)
        back = _AllToAllSingle.apply(ctx.group, out, *ctx.splits, grad_output.contiguous())
        return None, None, None, None, back


class _AllReduce(Function):
    @staticmethod
    def forward(ctx, op, group, tensor):
        ctx.reduce_op, ctx.group = op, group
        out = tensor.clone()
        dist.all_reduce(out, op=op, group=group)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        return None, None, _AllReduce.apply(ctx.reduce_op, ctx.group, grad_output)


def broadcast(tensor, src, group=group.WORLD):
    """``tensor`` from ``src`` on every rank; its gradient is summed back to ``src``."""
    return _Broadcast.apply(src, group, tensor)


def gather(tensor, dst=0, group=group.WORLD):
    """Every rank's ``tensor`` on ``dst`` (a tuple; zeros elsewhere)."""
    return _Gather.apply(dst, group, tensor)


def scatter(tensors, src=0, group=group.WORLD):
    """Rank r gets ``tensors[r]`` of ``src``."""
    return _Scatter.apply(src, group, *tensors)


def reduce(tensor, dst, op=ReduceOp.SUM, group=group.WORLD):
    """The reduction of every rank's ``tensor`` on ``dst``."""
    return _Reduce.apply(dst, op, group, tensor)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=group.WORLD):
    """Rank r gets the reduction of every rank's ``input_list[r]``."""
    return _ReduceScatter.apply(op, group, output, *input_list)


def all_gather(tensor, group=group.WORLD):
    """Every rank's ``tensor``, on every rank (a tuple)."""
    return _AllGather.apply(group, tensor)


def all_to_all(output_tensor_list, input_tensor_list, group=group.WORLD):
    """Rank r's ``input_tensor_list[j]`` becomes rank j's output ``r``."""
    return _AllToAll.apply(group, output_tensor_list, *input_tensor_list)


def all_to_all_single(
    output, input, output_split_sizes=None, input_split_sizes=None, group=group.WORLD
):
    """``all_to_all`` on one tensor split along its first dimension."""
    return _AllToAllSingle.apply(group, output, output_split_sizes, input_split_sizes, input)


def all_reduce(tensor, op=ReduceOp.SUM, group=group.WORLD):
    """The reduction of every rank's ``tensor``, on every rank."""
    return _AllReduce.apply(op, group, tensor)
