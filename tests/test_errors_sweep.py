"""Bad input raises PyTorch's exception type and text (issue 14, "Unclear errors"): NumPy's
errors never leak, whatever path an op takes (broadcasting, allocation, argument checks)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from twolibs import assert_same, assert_same_error, error_of

import numtorch as nt


def _set(x, index, value):
    x[index] = value


def _bool(T):
    return T.ones(3, dtype=T.bool)


ERRORS = {
    # broadcasting, on every path that combines shapes
    "add": lambda T: T.ones(3) + T.ones(4),
    "mul_2d": lambda T: T.ones(2, 3) * T.ones(4, 3),
    "add_": lambda T: T.ones(3).add_(T.ones(4)),
    "add_out_shape": lambda T: T.ones(3).add_(T.ones(2, 3)),
    "where": lambda T: T.where(T.ones(3) > 0, T.ones(4), T.ones(3)),
    "lerp": lambda T: T.lerp(T.ones(3), T.ones(4), 0.5),
    "lerp_weight": lambda T: T.lerp(T.ones(3), T.ones(3), T.ones(4)),
    "lerp_": lambda T: T.ones(3).lerp_(T.ones(4), 0.5),
    "addcmul": lambda T: T.addcmul(T.ones(3), T.ones(4), T.ones(3)),
    "copy_": lambda T: T.ones(3).copy_(T.ones(4)),
    "copy_2d": lambda T: T.ones(2, 3).copy_(T.ones(4, 1)),
    "copy_out_shape": lambda T: T.ones(3).copy_(T.ones(2, 3)),
    "copy_leading_ones": lambda T: T.ones(3).copy_(T.ones(1, 1, 3)),
    "copy_rank_mismatch": lambda T: T.ones(3).copy_(T.ones(2, 4)),
    "setitem": lambda T: _set(T.ones(3, 4), 0, T.ones(3)),
    "setitem_slice": lambda T: _set(T.ones(3, 4), slice(None), T.ones(2, 4)),
    "setitem_rank": lambda T: _set(T.ones(3, 4), 0, T.ones(2, 4)),
    "setitem_index": lambda T: _set(T.ones(3, 4), T.tensor([0, 1]), T.ones(3, 4)),
    "setitem_index_dim1": lambda T: _set(
        T.ones(3, 4), (slice(None), T.tensor([0, 1])), T.ones(4, 2)
    ),
    "setitem_mask": lambda T: _set(T.ones(3, 4), T.ones(3, 4) > 0, T.ones(3)),
    "index_put_": lambda T: T.ones(3, 4).index_put_((T.tensor([0, 1]),), T.ones(3, 4)),
    "index_put_accumulate": lambda T: T.ones(3, 4).index_put_(
        (T.tensor([0, 1]),), T.ones(3), accumulate=True
    ),
    "masked_select": lambda T: T.masked_select(T.ones(3), T.ones(4) > 0),
    "masked_scatter": lambda T: T.ones(3).masked_scatter(T.ones(4) > 0, T.ones(5)),
    **{
        f"{name}_{i}": (
            lambda name, args: (
                lambda T: getattr(T.ones(*args[0]), name)(
                    args[1], T.tensor(args[2]), T.ones(*args[3])
                )
            )
        )(name, args)
        for name in ("index_add_", "index_copy_")
        for i, args in enumerate(
            [
                ((3, 4), 0, [0, 1], (2, 3)),
                ((3, 4), 1, [0, 1], (2, 2)),
                ((3, 4), 0, [0, 1], (2, 4, 1)),
                ((3, 4), 0, [0, 1], (3, 4)),
                ((3, 4), 0, [0, 1], (3, 5)),
                ((3, 4), 0, [0, 1], (8,)),
                ((3, 4, 5), 1, [0, 1], (3, 2, 6)),
                ((3, 4, 5), -2, [0, 1], (2, 2, 5)),
            ]
        )
    },
    # sizes too large to allocate
    "empty_overflow": lambda T: T.empty(2**62),
    "empty_overflow_2d": lambda T: T.zeros(2**40, 2**40),
    "empty_overflow_f64": lambda T: T.empty(2**60, dtype=T.float64),
    "ones_huge": lambda T: T.ones(10**12),
    "zeros_huge": lambda T: T.zeros(10**6, 10**6),
    "full_huge": lambda T: T.full((10**12,), 1.0),
    "arange_huge": lambda T: T.arange(10**13),
    "randn_huge": lambda T: T.randn(10**12),
    "expand_contiguous_huge": lambda T: T.ones(1).expand(10**12).contiguous(),
    "expand_add_huge": lambda T: T.ones(1).expand(10**12) + 1,
    # NumPy cannot hold a view past int64 bytes: numtorch's expand raises what the
    # materializing op raises in PyTorch
    "expand_add_overflow": lambda T: T.ones(1).expand(2**62) + 1,
    "expand_contiguous_overflow": lambda T: T.ones(1).expand(2**62).contiguous(),
    "expand_numel_overflow": lambda T: T.ones(1).expand(2**40, 2**40),
    "expand_numel_overflow_2d": lambda T: T.ones(1, 1).expand(2**40, 2**40),
    # argument checks
    "eye_n": lambda T: T.eye(-1),
    "eye_m": lambda T: T.eye(2, -1),
    "eye_nm": lambda T: T.eye(-1, -2),
    "linspace_steps": lambda T: T.linspace(0, 1, -1),
    "logspace_steps": lambda T: T.logspace(0, 1, -1),
    "repeat_interleave_int": lambda T: T.ones(3).repeat_interleave(-1),
    "repeat_interleave_int_dim": lambda T: T.ones(3).repeat_interleave(-2, dim=0),
    "repeat_interleave_tensor": lambda T: T.ones(3).repeat_interleave(T.tensor([1, -1, 2])),
    "repeat_interleave_one": lambda T: T.ones(3).repeat_interleave(T.tensor([-1])),
    "repeat_interleave_0d": lambda T: T.ones(3).repeat_interleave(T.tensor(-1)),
    "repeat_interleave_counts": lambda T: T.repeat_interleave(T.tensor([1, -1])),
    "repeat_interleave_2d": lambda T: T.ones(3).repeat_interleave(T.tensor([[1, 1, 1]])),
    "repeat_interleave_len": lambda T: T.ones(3).repeat_interleave(T.tensor([1, 2])),
    "repeat_negative": lambda T: T.ones(2, 3).repeat(-1, 2),
    "tile_negative": lambda T: T.ones(3).tile((-1,)),
    "tile_fn_int": lambda T: T.tile(T.ones(3), 2),
    "tile_fn_float": lambda T: T.tile(T.ones(3), 2.0),
    "tile_fn_tensor": lambda T: T.tile(T.ones(3), T.tensor([2])),
    **{
        f"{name}_of_tensor": (lambda name: lambda T: getattr(T, name)(T.ones(2, 3)))(name)
        for name in ("cat", "stack", "hstack", "vstack", "dstack", "concat", "concatenate")
    },
    "cat_of_one_row": lambda T: T.cat(T.ones(1, 3)),
    **{
        f"vmap_{name}_of_tensor": (
            lambda name: lambda T: T.func.vmap(getattr(T, name))(T.ones(2, 3, 4))
        )(name)
        for name in ("cat", "stack", "hstack")
    },
    "vmap_repeat_interleave": lambda T: T.func.vmap(lambda x: x.repeat_interleave(-1))(
        T.ones(2, 3)
    ),
    "stack_of_int": lambda T: T.stack(3),
    "eye_float": lambda T: T.eye(2.5),
    "eye_huge": lambda T: T.eye(10**7),
    "linspace_huge": lambda T: T.linspace(0, 1, 10**12),
    "logspace_huge": lambda T: T.logspace(0, 1, 10**12),
    "rand_overflow": lambda T: T.rand(2**62),
    "randint_huge": lambda T: T.randint(0, 5, (10**12,)),
    "new_zeros_huge": lambda T: T.ones(1).new_zeros(10**12),
    "new_empty_overflow": lambda T: T.ones(1).new_empty(2**62),
    "zeros_like_huge": lambda T: T.zeros_like(T.ones(1).expand(10**12)),
    "repeat_huge": lambda T: T.ones(3).repeat(10**12),
    "repeat_interleave_huge": lambda T: T.ones(3).repeat_interleave(10**12),
    "cat_non_tensor_element": lambda T: T.cat([T.ones(2), 3]),
    "stack_none_element": lambda T: T.stack((T.ones(2), None)),
    "bool_empty": lambda T: bool(T.ones(0)),
    "bool_multi": lambda T: bool(T.ones(3)),
    # same text, PyTorch's type
    "abs_bool": lambda T: T.abs(_bool(T)),
    "abs_bool_": lambda T: _bool(T).abs_(),
    "int_multi": lambda T: int(T.ones(3)),
    "float_multi": lambda T: float(T.ones(3)),
    "complex_multi": lambda T: complex(T.ones(3)),
    "item_multi": lambda T: T.ones(3).item(),
    "put_": lambda T: T.ones(3).put_(T.tensor([0, 1]), T.ones(3)),
    "put": lambda T: T.ones(3).put(T.tensor([0, 1]), T.ones(3)),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_error(name):
    assert_same_error(ERRORS[name])


def test_bad_input_leaves_inputs_unmodified():
    def prog(T):
        x = T.ones(3)
        try:
            x.put_(T.tensor([0, 1]), T.full((3,), 2.0))
        except IndexError:
            pass
        return x

    assert_same(prog)


@pytest.mark.parametrize("args", [(2,), (2, 3), ((2,),), ([2, 1],)])
def test_tile_method_sizes(args):
    assert_same(lambda T, x: x.tile(*args), np.arange(6.0).reshape(2, 3))


@pytest.mark.parametrize("name", ["copy_", "setitem", "setitem_index", "index_add_", "index_copy_"])
def test_bad_write_leaves_self_unmodified(name):
    def prog(T):
        x = T.arange(12.0).reshape(3, 4)
        bad = {
            "copy_": lambda: x.copy_(T.ones(4, 1)),
            "setitem": lambda: _set(x, 0, T.ones(3)),
            "setitem_index": lambda: _set(x, T.tensor([0, 1]), T.ones(3, 4)),
            "index_add_": lambda: x.index_add_(0, T.tensor([0, 1]), T.ones(3, 4)),
            "index_copy_": lambda: x.index_copy_(0, T.tensor([0, 1]), T.ones(2, 3)),
        }[name]
        try:
            bad()
        except (RuntimeError, IndexError):
            pass
        return x

    assert_same(prog)


def test_vmap_index_add_source_shape():
    """Under vmap the same check, with PyTorch's text (its batch rule shows the shapes with
    the batch dim first)."""

    def prog(T):
        f = lambda x: x.index_add(0, T.tensor([0, 1]), T.ones(2, 3))  # noqa: E731
        return T.func.vmap(f)(T.ones(2, 3, 4))

    got, want = error_of(prog, nt), error_of(prog, torch)
    assert got == want


def test_rsub_broadcast_error_names_the_operands_of_other_minus_input():
    assert_same_error(lambda T: T.rsub(T.ones(3), T.ones(4)))
    assert_same_error(lambda T: T.rsub(T.ones(2, 3), T.ones(4, 1), alpha=2))


@pytest.mark.parametrize(
    "a",
    [
        [[float("nan"), 0.0], [0.0, 1.0]],
        [[[1.0, 0.0], [0.0, 1.0]], [[4.0, 1.0], [1.0, float("nan")]]],
        [[1.0, 2.0], [2.0, 1.0]],
    ],
)
def test_cholesky_of_a_nan_pivot_fails_as_a_non_positive_one(a):
    assert_same_error(lambda T: T.linalg.cholesky(T.tensor(a)))
