"""Regression tests for the view ops and tensor functions added in issue 14 (missing2)."""

from twolibs import assert_same_error


def test_shift_errors_name_torch_kernels():
    for fn in ("bitwise_left_shift", "bitwise_right_shift"):
        assert_same_error(lambda T, fn=fn: getattr(T, fn)(T.ones(2), T.ones(2)))
        assert_same_error(lambda T, fn=fn: getattr(T, fn)(T.ones(2, dtype=T.int64), 1.5))
        assert_same_error(
            lambda T, fn=fn: getattr(T, fn)(T.ones(2, dtype=T.bool), T.ones(2, dtype=T.bool))
        )
