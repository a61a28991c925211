"""The CPU stand-in for CuPy behaves as CuPy 13.6 does where numtorch could tell: it refuses
NumPy data with CuPy's errors, returns 0-d arrays from reductions, has exactly CuPy's names,
signatures, ufunc loops and ufunc methods, follows CuPy's linalg error policy, keeps arrays on
their GPU, accounts device memory as CuPy's pool does, and in strict mode records the numtorch
line of every NumPy call on device data."""

from __future__ import annotations

import numpy as np
import pytest

from numtorch.testing import _cupy_standin as standin
from numtorch.testing._cupy_standin import _names, _state

cp, cupyx = standin.cupy, standin.cupyx


@pytest.fixture(autouse=True)
def _fresh():
    _state.current[0] = 0
    _state.linalg[0] = "ignore"
    yield
    _state.current[0] = 0


def test_device_arrays_are_not_numpy_arrays():
    a = cp.arange(4.0)
    assert not isinstance(a, np.ndarray) and isinstance(a, cp.ndarray)
    with pytest.raises(TypeError, match="Implicit conversion to a NumPy array is not allowed"):
        np.asarray(a)
    np.testing.assert_array_equal(a.get(), [0, 1, 2, 3])
    np.testing.assert_array_equal(cp.asnumpy(a * 2), [0, 2, 4, 6])


def test_numpy_operands_are_refused_with_cupys_text():
    a, h = cp.ones(3), np.ones(3)
    for f in (lambda: a + h, lambda: h + a, lambda: cp.add(a, h), lambda: cp.concatenate([a, h])):
        with pytest.raises(TypeError, match=r"Unsupported type <class 'numpy.ndarray'>"):
            f()
    assert float((a + np.float64(2.0))[0]) == 3.0  # NumPy scalars are scalars to CuPy
    np.testing.assert_array_equal(cp.asarray(h).get(), h)  # an explicit copy to the device


def test_reductions_and_indexing_give_0d_arrays():
    a = cp.arange(6.0).reshape(2, 3)
    for r in (a.sum(), cp.max(a), a[1, 2], a.mean()):
        assert type(r) is cp.ndarray and r.ndim == 0
    assert float(a.sum()) == 15.0 and a[1, 2].item() == 5.0


def test_only_cupys_names_exist():
    assert hasattr(cp, "cumsum") and hasattr(cp.linalg, "solve")
    assert not hasattr(cp.linalg, "eig")  # CuPy 13 has eigh only
    assert not hasattr(cupyx.scipy.special, "airy")
    fft = {n for n, kind in _names.MODULES["cupy.fft"].items() if kind != "module"}
    assert fft <= set(dir(cp.fft))
    with pytest.raises(AttributeError):
        cp.ndarray.tofile_nonexistent  # noqa: B018


def test_calls_are_checked_against_cupys_signatures():
    a = cp.ones((2, 3))
    with pytest.raises(TypeError, match="unexpected keyword argument 'copy'"):
        cp.reshape(a, (3, 2), copy=False)  # NumPy 2's keyword, not CuPy 13's
    with pytest.raises(TypeError, match="unexpected keyword argument 'where'"):
        cp.sum(a, where=a > 0)
    assert cp.reshape(a, (3, 2)).shape == (3, 2)


def test_ufunc_methods_and_loops_are_cupys():
    a = cp.arange(4.0)
    np.testing.assert_array_equal(cp.add.accumulate(a).get(), [0, 1, 3, 6])
    with pytest.raises(NotImplementedError, match="`cupy_maximum.accumulate` is not supported yet"):
        cp.maximum.accumulate(a)
    with pytest.raises(NotImplementedError, match="`cupy_maximum.reduce` is not supported yet"):
        cp.maximum.reduce(a)
    with pytest.raises(TypeError, match="Wrong type .* of arguments for cupy_logical_and"):
        cp.logical_and(a.astype(np.complex64), a.astype(np.complex64))
    with pytest.raises(TypeError, match=r"Wrong arguments \{'where'"):
        cp.add(a, a, where=a > 0)
    out = cp.zeros(4)
    assert cp.multiply(a, 2.0, out=out) is out and out.get()[3] == 6.0


def test_unsupported_dtypes_are_refused():
    import ml_dtypes

    with pytest.raises(ValueError, match="Unsupported dtype bfloat16"):
        cp.asarray(np.ones(2, ml_dtypes.bfloat16))


def test_linalg_gives_nan_on_singular_input_unless_errstate_raises():
    s = cp.asarray(np.ones((2, 2)))
    assert np.isnan(cp.linalg.inv(s).get()).all()  # no exception: CuPy's default policy
    with cupyx.errstate(linalg="raise"):
        with pytest.raises(np.linalg.LinAlgError, match="Error reported by inv in cuSOLVER"):
            cp.linalg.inv(s)
    np.testing.assert_allclose(cp.linalg.inv(cp.eye(2) * 2).get(), np.eye(2) / 2)


def test_arrays_stay_on_their_gpu():
    a = cp.ones(2)
    with cp.cuda.Device(1):
        b = cp.ones(2)
        assert b.device.id == 1 and cp.cuda.runtime.getDevice() == 1
        with pytest.raises(ValueError, match=r"resides \(0\) is different from the current device"):
            a + b
    assert cp.cuda.runtime.getDevice() == 0 and a.device.id == 0


def test_the_pool_accounts_blocks_of_512_bytes():
    pool = cp.get_default_memory_pool()
    before = pool.used_bytes()
    a = cp.zeros(100, np.float32)  # 400 bytes: one 512-byte block
    assert pool.used_bytes() - before == 512
    v = a[10:]  # a view allocates nothing
    assert pool.used_bytes() - before == 512
    del a, v
    assert pool.used_bytes() == before and pool.free_bytes() >= 512
    pool.free_all_blocks()
    assert pool.free_bytes() == 0


def test_strict_mode_records_the_numtorch_line():
    import numtorch as nt
    from numtorch._core import dispatch

    standin.enable(strict=True)
    standin.clear_sites()
    try:
        x = nt.ones(3, device="cuda")
        np.sum(x._data)  # from this test file: outside numtorch
        dispatch._may_share(x._data, x._data)  # numtorch's own call goes through cupy
        found = standin.sites()
    finally:
        standin.disable()
    assert found == {"(outside numtorch)": "numpy.sum"}


def test_views_live_on_their_memorys_gpu():
    with cp.cuda.Device(1):
        a = cp.arange(6.0)
    v = a[2:].reshape(2, 2)  # made while GPU 0 is current
    assert v.device.id == 1 and a.T.device.id == 1
    assert cp.asarray(v.get()).device.id == 0  # new memory: the current GPU


def test_report_prints_the_sites(capsys):
    _state.sites.clear()
    _state.sites["numtorch/ops/example.py:12"] = "numpy.add"
    try:
        standin.report()
    finally:
        _state.sites.clear()
    err = capsys.readouterr().err
    assert err == (
        "numtorch called NumPy on device data at 1 sites:\n"
        "  numtorch/ops/example.py:12: numpy.add\n"
    )


def test_scatter_adds_take_only_the_dtypes_cupys_atomics_have():
    # CuPy 13.6's add.at and cupyx.scatter_add: int32, uint32, uint64 and floats; no int64
    i = cp.asarray(np.array([0, 0, 2]))
    for d in ("int32", "uint64", "float16", "float64"):
        a = cp.zeros(3, dtype=d)
        cp.add.at(a, i, 1)
        np.testing.assert_array_equal(a.get(), [2, 0, 1])
    text = (
        "cupy.add.at only supports int32, float16, float32, float64, uint32, uint64, as data type"
    )
    for d in ("int64", "int8", "bool", "complex64"):
        for f in (lambda a: cp.add.at(a, i, 1), lambda a: cupyx.scatter_add(a, i, 1)):
            with pytest.raises(TypeError, match=text):
                f(cp.zeros(3, dtype=d))
    with pytest.raises(TypeError, match="cupy.maximum.at only supports int32, float32, float64"):
        cp.maximum.at(cp.zeros(3, dtype="int64"), i, 1)


def test_methods_launching_kernels_refuse_another_gpus_array():
    with cp.cuda.Device(1):
        a = cp.arange(4.0)
    assert a.reshape(2, 2).device.id == 1  # a view: no kernel
    with pytest.raises(ValueError, match=r"resides \(1\) is different from the current device"):
        a.sum()
    with cp.cuda.Device(1):
        assert float(a.sum()) == 6.0
