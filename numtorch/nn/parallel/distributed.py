"""DistributedDataParallel: one model replica per rank, gradients averaged during backward.

At wrap time rank 0's parameters and buffers are broadcast. Parameters are split into
buckets in reverse order (the order backward produces their gradients), per dtype: the
first bucket closes at 1 MiB (at ``bucket_cap_mb`` when given), later ones at
``bucket_cap_mb``. Each parameter's
post-accumulate-grad hook copies its gradient into its bucket; a full bucket (and every full
bucket after it, in order) is handed to the communication hook, whose asynchronous
all-reduce runs while backward goes on. The first hook of a pass queues an end-of-backward
callback on the engine that waits for every bucket and writes the averaged gradients back.
At the second forward the buckets are laid out again, once, in the order the first backward
made the gradients ready (rank 0's order), as PyTorch's reducer rebuilds them.
"""

from __future__ import annotations

import contextlib

import numpy as np

from ... import distributed as dist
from ... import from_numpy as _from_numpy
from ..._core.state import is_grad_enabled
from ..._core.state import state as _transforms
from ...autograd import engine as _engine
from ...autograd.grad_mode import no_grad
from ...distributed._buffers import array as _array
from ...distributed._grad_bucket import GradBucket
from ...distributed.algorithms.join import Join, Joinable, JoinHook
from ..modules.module import Module

__all__ = ["DistributedDataParallel"]

_FIRST_BUCKET_BYTES = 1024 * 1024
_DEFAULT_BUCKET_CAP_MB = 25

_UNFINISHED = (
    "Expected to have finished reduction in the prior iteration before starting a new one. "
    "This error indicates that your module has parameters that were not used in producing "
    "loss. You can enable unused parameter detection by passing the keyword argument "
    "`find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`, and by \n"
    "making sure all `forward` function outputs participate in calculating loss. \n"
    "If you already have done the above, then the distributed data parallel module wasn't "
    "able to locate the output tensors in the return value of your module's `forward` "
    "function. Please include the loss function and the structure of the return value of "
    "`forward` of your module when reporting this issue (e.g. list, dict, iterable).\n"
    "Parameter indices which did not receive grad for rank {rank}: {indices}\n"
    " In addition, you can set the environment variable TORCH_DISTRIBUTED_DEBUG to either "
    "INFO or DETAIL to print out information about which particular parameters did not "
    "receive gradient on this rank as part of this error"
)


def bucket_assignment(params, limits, order=None) -> list[list[int]]:
    """Parameter indices per bucket: in ``order`` (by default reverse parameter order), one
    open bucket per dtype that closes once its bytes reach the current limit (``limits[k]``
    for its k-th bucket, the last limit repeating); the buckets still open at the end
    follow, in dtype order."""
    open_: dict = {}
    closed = []
    for i in reversed(range(len(params))) if order is None else order:
        p = params[i]
        indices, size, k = open_.get(p.dtype, ([], 0, 0))
        indices.append(i)
        size += p.numel() * p.element_size()
        if size >= limits[min(k, len(limits) - 1)]:
            closed.append(indices)
            open_[p.dtype] = ([], 0, k + 1)
        else:
            open_[p.dtype] = (indices, size, k)
    return closed + [indices for indices, _, _ in open_.values() if indices]


def _coalesced_broadcast(tensors, src: int, group) -> None:
    """Broadcast tensors from ``src``, one flat message per dtype."""
    by_dtype: dict = {}
    for t in tensors:
        by_dtype.setdefault(t.dtype, []).append(_array(t, "broadcast_"))
    for arrays in by_dtype.values():
        flat = _from_numpy(np.concatenate([a.reshape(-1) for a in arrays]))
        dist.broadcast(flat, src, group=group)
        values, start = flat.numpy(), 0
        for a in arrays:
            a[...] = values[start : start + a.size].reshape(a.shape)
            start += a.size


class _Bucket:
    """A flat gradient buffer and where each of its parameters sits in it."""

    def __init__(self, index: int, params, indices) -> None:
        from ... import zeros

        self.index = index
        self.indices = list(indices)
        self.params = [params[i] for i in indices]
        sizes = [p.numel() for p in self.params]
        self.offsets = [int(o) for o in np.concatenate([[0], np.cumsum(sizes)[:-1]])]
        self.sizes = sizes
        self.shapes = [tuple(p.shape) for p in self.params]
        self.buffer = zeros(sum(sizes), dtype=self.params[0].dtype)
        self.array = self.buffer.numpy()

    def view(self, j: int):
        off = self.offsets[j]
        return self.buffer[off : off + self.sizes[j]].view(self.shapes[j])


class _Reducer:
    """The bucketed, overlapped gradient all-reduce of one DDP module."""

    def __init__(self, ddp, params, limits) -> None:
        self.ddp = ddp
        self.params = params
        self.limits = limits
        self.place(bucket_assignment(params, limits))
        self.ready_order: list[int] = []
        self.rebuilt = False
        self.expect = False
        self.queued = False
        self.unfinished: list[int] | None = None
        self.divisor = None
        self.reset()
        self.handles = [
            p.register_post_accumulate_grad_hook(_ReadyHook(self, i))
            for i, p in enumerate(params)
            if p.requires_grad
        ]

    def place(self, assignment) -> None:
        """Lay the buckets out (parameter indices per bucket)."""
        self.buckets = [_Bucket(b, self.params, idx) for b, idx in enumerate(assignment)]
        self.where = {}
        for bucket in self.buckets:
            for j, i in enumerate(bucket.indices):
                self.where[i] = (bucket, j)

    def should_rebuild(self) -> bool:
        """PyTorch rebuilds the buckets once, in the order the first synced backward made
        the gradients ready, unless unused parameters are searched for each iteration."""
        detecting = self.ddp.find_unused_parameters and not self.ddp.static_graph
        return not self.rebuilt and bool(self.ready_order) and not detecting

    def rebuild(self) -> None:
        """Buckets in rank 0's gradient-ready order (every rank must agree on the layout);
        gradients that are views of the old buckets move into the new ones."""
        self.rebuilt = True
        seen = set(self.ready_order)
        rest = [i for i in reversed(range(len(self.params))) if i not in seen]
        order = _from_numpy(np.array(self.ready_order + rest, np.int64))
        dist.broadcast(order, 0, group=self.ddp.process_group)
        assignment = bucket_assignment(self.params, self.limits, order.numpy().tolist())
        if assignment == [b.indices for b in self.buckets]:
            return
        old = self.where
        self.place(assignment)
        if self.ddp.gradient_as_bucket_view:
            for i, p in enumerate(self.params):
                bucket, j = old[i]
                if p.grad is not None and p.grad.data_ptr() == bucket.view(j).data_ptr():
                    new, k = self.where[i]
                    view = new.view(k)
                    view.copy_(p.grad)
                    p.grad = view
        self.reset()

    def reset(self) -> None:
        self.ready = np.zeros(len(self.params), bool)
        self.used = np.zeros(len(self.params), np.int64)
        self.pending = [len(b.indices) for b in self.buckets]
        self.next = 0
        self.futures = [None] * len(self.buckets)
        self.grad_buckets = [None] * len(self.buckets)

    def prepare(self, expect: bool) -> None:
        self.expect = expect
        if expect:
            self.reset()

    # -- during backward
    def grad_ready(self, i: int) -> None:
        if not self.expect or self.ready[i]:
            return
        if not self.queued:
            _engine.queue_callback(self.finalize)
            self.queued = True
        if not self.rebuilt:
            self.ready_order.append(i)
        p = self.params[i]
        bucket, j = self.where[i]
        off = bucket.offsets[j]
        bucket.array[off : off + bucket.sizes[j]] = _array(p.grad, "copy_").reshape(-1)
        if self.ddp.gradient_as_bucket_view:
            p.grad = bucket.view(j)
        self.used[i] = 1
        self.mark(i)

    def mark(self, i: int) -> None:
        self.ready[i] = True
        bucket, _ = self.where[i]
        self.pending[bucket.index] -= 1
        while self.next < len(self.buckets) and self.pending[self.next] == 0:
            self.launch(self.buckets[self.next])
            self.next += 1

    def launch(self, bucket: _Bucket) -> None:
        gb = GradBucket(
            bucket.index, len(self.buckets), bucket.buffer, bucket.offsets, bucket.shapes,
            bucket.params,
        )  # fmt: skip
        self.grad_buckets[bucket.index] = gb
        hook = self.ddp._comm_hook
        if hook is None:
            self.futures[bucket.index] = self.default_hook(bucket.buffer)
        else:
            self.futures[bucket.index] = hook[1](hook[0], gb)

    def default_hook(self, buffer):
        """The mean over the ranks (the active ones when a join asks so)."""
        group = self.ddp.process_group
        buffer.div_(self.divisor or group.size())
        return dist.all_reduce(buffer, group=group, async_op=True).get_future()

    # -- after backward
    def finalize(self) -> None:
        self.queued = False
        missing = np.flatnonzero(~self.ready)
        if missing.size:
            if not (self.ddp.find_unused_parameters or self.ddp.static_graph):
                self.unfinished = [int(i) for i in missing]
                self.expect = False
                return
            for i in missing:
                bucket, j = self.where[int(i)]
                off = bucket.offsets[j]
                bucket.array[off : off + bucket.sizes[j]] = 0
                self.mark(int(i))
        self.expect = False
        global_used = self.used_anywhere() if self.detects_unused() else None
        with no_grad():
            for bucket, fut in zip(self.buckets, self.futures):
                self.write(bucket, fut.wait(), global_used)

    def detects_unused(self) -> bool:
        return self.ddp.find_unused_parameters or self.ddp.static_graph

    def used_anywhere(self, used=None):
        counts = _from_numpy(self.used.copy() if used is None else used)
        dist.all_reduce(counts, group=self.ddp.process_group)
        return counts.numpy() > 0

    def write(self, bucket: _Bucket, value, global_used) -> None:
        if isinstance(value, (list, tuple)):
            value = value[0]
        if value is not bucket.buffer:
            bucket.buffer.copy_(value)
        for j, i in enumerate(bucket.indices):
            p = self.params[i]
            if global_used is not None and not global_used[i]:
                continue
            if self.ddp.gradient_as_bucket_view:
                if p.grad is None or p.grad.data_ptr() != bucket.view(j).data_ptr():
                    p.grad = bucket.view(j)
            elif p.grad is None:
                p.grad = bucket.view(j).clone()
            else:
                p.grad.copy_(bucket.view(j))

    def shadow(self) -> None:
        """A joined rank's part of one backward's all-reduces: zeros for every bucket."""
        self.reset()
        for bucket in self.buckets:
            bucket.array[...] = 0
            self.launch(bucket)
        for fut in self.futures:
            fut.wait()
        if self.detects_unused():
            self.used_anywhere(np.zeros(len(self.params), np.int64))


class _ReadyHook:
    """A parameter's post-accumulate-grad hook: its gradient is ready for its bucket."""

    def __init__(self, reducer: _Reducer, i: int) -> None:
        self.reducer, self.i = reducer, i

    def __call__(self, param) -> None:
        self.reducer.grad_ready(self.i)


class _DDPJoinHook(JoinHook):
    def __init__(self, ddp, divide_by_initial_world_size: bool) -> None:
        self.ddp = ddp
        ddp._divide_by_initial_world_size = divide_by_initial_world_size

    def main_hook(self) -> None:
        ddp = self.ddp
        ddp.reducer.rebuilt = True
        syncing = ddp._count_syncing(False)
        if ddp._will_sync_buffers():
            ddp._sync_buffers()
        if syncing:
            ddp.reducer.shadow()

    def post_hook(self, is_last_joiner: bool) -> None:
        self.ddp._sync_final_model(is_last_joiner)


class DistributedDataParallel(Module, Joinable):
    """Data parallelism across processes: wrap the model on every rank, train as usual."""

    def __init__(
        self,
        module,
        device_ids=None,
        output_device=None,
        dim=0,
        broadcast_buffers=None,
        init_sync=True,
        process_group=None,
        bucket_cap_mb=None,
        find_unused_parameters=False,
        check_reduction=False,
        gradient_as_bucket_view=False,
        static_graph=False,
        delay_all_reduce_named_params=None,
        param_to_hook_all_reduce=None,
        mixed_precision=None,
        device_mesh=None,
        skip_all_reduce_unused_params=False,
        bucket_cap_mb_list=None,
        batched_grad_copy=False,
        forward_sync_buffers=None,
    ) -> None:
        Module.__init__(self)
        Joinable.__init__(self)
        if process_group is not None and device_mesh is not None:
            raise RuntimeError("Cannot specify both process_group and device_mesh arguments.")
        unsupported = {
            "delay_all_reduce_named_params": delay_all_reduce_named_params,
            "param_to_hook_all_reduce": param_to_hook_all_reduce,
            "mixed_precision": mixed_precision,
            "device_mesh": device_mesh,
        }
        for name, value in unsupported.items():
            if value is not None:
                raise NotImplementedError(f"DistributedDataParallel: {name} is not supported")
        self.process_group = dist._groups.default_group() if process_group is None else (
            process_group
        )  # fmt: skip
        ignored = set(getattr(module, "_ddp_params_and_buffers_to_ignore", ()))
        self.parameters_to_ignore = ignored
        self._module_parameters = [p for n, p in module.named_parameters() if n not in ignored]
        if not any(p.requires_grad for p in self._module_parameters):
            raise RuntimeError(
                "DistributedDataParallel is not needed when a module doesn't have any "
                "parameter that requires a gradient."
            )
        if device_ids is not None and len(device_ids) > 1:
            raise ValueError("device_ids can only be None or contain a single element.")
        if device_ids or output_device:
            devices = {p.device for p in self._module_parameters}
            raise ValueError(
                "DistributedDataParallel device_ids and output_device arguments only work "
                "with single-device/multiple-device GPU modules or CPU modules, but got "
                f"device_ids {device_ids}, output_device {output_device}, and module "
                f"parameters {devices}."
            )
        self.module = module
        self.device_ids = None
        self.output_device = None
        self.device = self._module_parameters[0].device
        self.dim = dim
        self.broadcast_buffers = True if broadcast_buffers is None else broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        cap = _DEFAULT_BUCKET_CAP_MB if bucket_cap_mb is None else bucket_cap_mb
        self.bucket_bytes_cap = int(cap * 1024 * 1024)
        self._comm_hook = None
        self._divide_by_initial_world_size = True
        self._module_buffers = [b for n, b in module.named_buffers() if n not in ignored]
        if init_sync and self.process_group.size() > 1:
            self._sync_params_and_buffers(0)
        params = [p for p in self._module_parameters if p.requires_grad]
        first = _FIRST_BUCKET_BYTES if bucket_cap_mb is None else self.bucket_bytes_cap
        self.reducer = _Reducer(self, params, [first, self.bucket_bytes_cap])

    # -- state sync
    def _sync_params_and_buffers(self, src: int) -> None:
        with no_grad():
            tensors = [*self._module_parameters, *self._module_buffers]
            _coalesced_broadcast(tensors, src, self.process_group)

    def _will_sync_buffers(self) -> bool:
        return (
            self.require_forward_param_sync
            and self.broadcast_buffers
            and len(self._module_buffers) > 0
        )

    def _sync_buffers(self) -> None:
        with no_grad():
            _coalesced_broadcast(self._module_buffers, 0, self.process_group)

    def _count_syncing(self, mine: bool) -> int:
        """How many ranks sync gradients this iteration (under a join)."""
        t = _from_numpy(np.array([int(mine)], np.int64))
        dist.all_reduce(t, group=self.process_group)
        return int(t.numpy()[0])

    def _sync_final_model(self, is_last_joiner: bool) -> None:
        me = dist.get_rank(self.process_group)
        t = _from_numpy(np.array([me if is_last_joiner else -1], np.int64))
        dist.all_reduce(t, op=dist.ReduceOp.MAX, group=self.process_group)
        self._sync_params_and_buffers(int(t.numpy()[0]))

    # -- forward
    def forward(self, *inputs, **kwargs):
        if _transforms.stack:  # under vmap, grad or a tracer: just the module
            return self.module(*inputs, **kwargs)
        reducer = self.reducer
        if reducer.unfinished is not None and self.require_backward_grad_sync:
            missing = reducer.unfinished
            reducer.unfinished = None
            rank = dist.get_rank(self.process_group)
            raise RuntimeError(_UNFINISHED.format(rank=rank, indices=" ".join(map(str, missing))))
        sync = is_grad_enabled() and self.require_backward_grad_sync
        reducer.divisor = None
        if self._join_config.enable:
            reducer.rebuilt = True  # a joined rank could not take part in a rebuild
            work = Join.notify_join_context(self)
            if work is not None:
                work.wait()
                if not self._divide_by_initial_world_size:
                    reducer.divisor = int(work.result()[0].numpy()[0])
            self._count_syncing(sync)
        if self._will_sync_buffers():
            self._sync_buffers()
        if sync and reducer.should_rebuild():
            with no_grad():
                reducer.rebuild()
        reducer.prepare(sync)
        return self.module(*inputs, **kwargs)

    # -- the public API
    @contextlib.contextmanager
    def no_sync(self):
        """Accumulate gradients locally; the first backward after the block all-reduces."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def register_comm_hook(self, state, hook) -> None:
        """Reduce each bucket with ``hook(state, bucket) -> Future`` instead of the mean."""
        if not callable(hook):
            raise TypeError("Communication hook must be callable.")
        if self._comm_hook is not None:
            raise RuntimeError(
                "register_comm_hook or register_builtin_comm_hook can only be called once."
            )
        self._comm_hook = (state, hook)

    def _set_static_graph(self) -> None:
        self.static_graph = True

    def join(
        self,
        divide_by_initial_world_size: bool = True,
        enable: bool = True,
        throw_on_early_termination: bool = False,
    ):
        """A ``Join`` context for uneven inputs across ranks."""
        return Join(
            [self],
            enable,
            throw_on_early_termination,
            divide_by_initial_world_size=divide_by_initial_world_size,
        )

    def join_hook(self, **kwargs):
        return _DDPJoinHook(self, kwargs.get("divide_by_initial_world_size", True))

    @property
    def join_device(self):
        return self.device

    @property
    def join_process_group(self):
        return self.process_group
