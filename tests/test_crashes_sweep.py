"""Issue 14, crashes where PyTorch succeeds: each program runs on numtorch and on torch and
must give the same values (or the same error)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.twolibs import arr, assert_same, assert_same_error


@pytest.mark.parametrize("kw", ["dim", "axis"])
@pytest.mark.parametrize("name", ["concatenate", "concat"])
def test_join_takes_dim_and_axis(name, kw):
    assert_same(lambda L, a, b: getattr(L, name)([a, b], **{kw: 1}), arr(2, 3), arr(2, 1))


def test_concatenate_dim_and_axis_together():
    assert_same_error(lambda L, a: L.concatenate([a], 0, dim=0), arr(2))
