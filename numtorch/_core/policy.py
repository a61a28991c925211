"""How an op's in-place form writes: the facts PyTorch's kernels differ in, declared on the
op (``defop(..., inplace_policy=InplacePolicy(...))``) and read by ``inplace.run_inplace``."""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass


class BatchedWrite(enum.Enum):
    """How PyTorch's vmap runs an in-place op whose operand is batched where self is not,
    which decides the text of its error."""

    ARITHMETIC = "arithmetic"  # a batch rule of its own: "inplace arithmetic"
    PLAIN = "plain"  # a batch rule of its own, named by the method: "fill_"
    FALLBACK = "fallback"  # vmap's fallback, one sample at a time: "aten::<op>_"
    UNCHECKED = "unchecked"  # runs on the batched values unchecked: the broadcast error


@dataclass(frozen=True)
class InplacePolicy:
    """An in-place op's checks where they differ from the common elementwise write."""

    # may write into a tensor whose elements share memory (an expanded one): it writes only
    # the elements it changes
    shared_ok: bool = False
    # ... but not when its value is a 0-d tensor (fill_(Tensor))
    shared_needs_number: bool = False
    # its argument checks come before the shared-memory check (which is then at the write)
    checks_first: bool = False
    # takes operands that partly overlap self (reads them whole first, or no elementwise
    # kernel)
    operand_overlap_ok: bool = False
    # its cast check of number operands comes first and names the C++ type of the output
    # ("long int", where TensorIterator's says "Long")
    cpp_cast: bool = False
    # its own text for a result that can't be cast to self's dtype ({} self's dtype, {}
    # the result's)
    cast_text: str | None = None
    # a product whose result is new (no broadcast of self): its shape error names both sizes
    fresh_result: bool = False
    # writing into an integer tensor has no history (copy_): no autograd checks then
    untracked_integer_target: bool = False
    # self as its own source writes nothing (copy_ returns at once: no overlap check), but
    # autograd and the transforms see a write
    self_source_noop: bool = False
    # how vmap handles a batched operand and an unbatched self
    batched: BatchedWrite = BatchedWrite.FALLBACK
    # ... for the overload whose value (second operand) is a tensor, where it differs
    batched_tensor_value: BatchedWrite | None = None
    # ``text(self, args)`` of its own for a result whose shape is not self's (outside
    # transforms): masked_scatter_ expands its mask to self, with expand's error
    shape_error: Callable | None = None
    # its text refusing a write into a ZeroTensor (copy_ has its own)
    zero_text: str = (
        "ZeroTensors are immutable. Please use the materialized zero tensor obtained using "
        ".clone() if you want a mutable tensor."
    )


COMMON = InplacePolicy()


@dataclass(frozen=True)
class Overlap:
    """PyTorch's checks of the tensor an op writes (self of its in-place form, or its
    ``out=`` tensor) against its inputs, made before its kernel runs (assert_no_overlap:
    any shared memory refused, the same elements included; assert_no_partial_overlap:
    only a partial overlap). Read by ``_core/out.py``'s ``check_written``."""

    # the inputs (positions; 0 is self) that may share no memory with the written tensor
    full: tuple[int, ...]
    # ... that may not partly overlap it
    partial: tuple[int, ...] = ()
    # the op's own checks that PyTorch makes before these, ``first(op, arrays, attrs)`` on
    # meta arrays of the inputs' logical shapes (attributes with their defaults); returns
    # False where PyTorch's kernel checks no overlap for these operands (index_put_'s fill
    # through a mask)
    first: Callable | None = None
