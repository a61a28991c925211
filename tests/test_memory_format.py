"""torch.memory_format and its constants against torch: identity, reprs, pickling, and
the layouts clone, contiguous and is_contiguous give for each."""

from __future__ import annotations

import copy
import pickle

import pytest
import torch
from twolibs import arr, assert_same, assert_same_error

import numtorch as nt

NAMES = ("contiguous_format", "preserve_format", "channels_last", "channels_last_3d")


@pytest.mark.parametrize("name", NAMES)
def test_constants(name):
    got, ref = getattr(nt, name), getattr(torch, name)
    assert repr(got) == repr(ref) and str(got) == str(ref)
    assert isinstance(got, nt.memory_format)
    assert pickle.loads(pickle.dumps(got)) is got and copy.deepcopy(got) is got
    assert hash(got) == hash(got)


def test_legacy_contiguous_format_is_contiguous_format():
    assert nt.legacy_contiguous_format is nt.contiguous_format
    assert torch.legacy_contiguous_format is torch.contiguous_format


def test_no_new_instances():
    assert_same_error(lambda L: L.memory_format())


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (2, 3, 4, 5, 2)])
def test_clone_and_contiguous_layouts(name, shape):
    def prog(L, x):
        fmt = getattr(L, name)
        if len(shape) != {"channels_last": 4, "channels_last_3d": 5}.get(name, len(shape)):
            return x.is_contiguous(memory_format=fmt)  # the wrong rank: never that layout
        x = x.transpose(1, 2)  # contiguous in no format
        c = x.clone(memory_format=fmt)
        y = x.contiguous() if name == "preserve_format" else x.contiguous(memory_format=fmt)
        again = y.contiguous() if name == "preserve_format" else y.contiguous(memory_format=fmt)
        flags = (y.is_contiguous(), y.is_contiguous(memory_format=fmt), again is y)
        return c, c.stride(), y.stride(), flags

    assert_same(prog, arr(*shape))


@pytest.mark.parametrize("name", ["channels_last", "channels_last_3d"])
def test_rank_error(name):
    assert_same_error(lambda L, x: x.clone(memory_format=getattr(L, name)), arr(2, 3))


# Under vmap, clone (preserve_format) copies the whole batch as it lies, batch dim in place;
# contiguous_format lays each example out in C order, batch first.
@pytest.mark.parametrize("fmt", [None, "preserve_format", "contiguous_format"])
@pytest.mark.parametrize("dims", [(1, 1), (1, 0), (0, 1), (2, 2)])
def test_clone_layout_under_vmap(fmt, dims):
    def prog(T, x):
        kw = {} if fmt is None else {"memory_format": getattr(T, fmt)}
        x = x.transpose(0, 2)
        y = T.func.vmap(lambda x: x.clone(**kw), in_dims=dims[0], out_dims=dims[1])(x)
        return y, y.stride()

    assert_same(prog, arr(3, 2, 4))


def test_contiguous_after_clone_under_vmap_keeps_the_version_count():
    # y.contiguous() of a clone whose examples are contiguous is y itself: one version later
    def prog(T, x, b):
        def loss(x, b):
            y = x.clone()
            y.mul_(y)
            y = y.contiguous()
            y.mul_(b)
            return y.sum()

        return T.func.vmap(T.func.grad(loss), in_dims=(-1, None))(x, b)

    assert_same_error(prog, arr(2, 1, 2), arr(1, 1))
