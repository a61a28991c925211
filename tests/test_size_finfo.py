"""torch.Size's constructor and methods, and torch.finfo / torch.iinfo for every dtype
numtorch has, against torch: values, reprs, equality and the errors' texts."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import torch
from twolibs import assert_same, assert_same_error, outcome

import numtorch as nt

FLOATING = [
    n
    for n in ("float16", "bfloat16", "float32", "float64", "complex32", "complex64", "complex128")
    + ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu")
    if hasattr(nt, n)
]
INTEGER = [
    n
    for n in ("uint8", "int8", "int16", "int32", "int64") + ("uint16", "uint32", "uint64")
    if hasattr(nt, n)
]


def _values(info) -> tuple:
    names = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype")
    return tuple(getattr(info, n, None) for n in names) + (repr(info),)


@pytest.mark.parametrize("name", FLOATING)
def test_finfo_matches_torch(name):
    got, ref = nt.finfo(getattr(nt, name)), torch.finfo(getattr(torch, name))
    assert _values(got) == _values(ref)
    assert got == nt.finfo(getattr(nt, name)) and (got != nt.finfo(nt.float64)) == (
        ref != torch.finfo(torch.float64)
    )


@pytest.mark.parametrize("name", INTEGER)
def test_iinfo_matches_torch(name):
    got, ref = nt.iinfo(getattr(nt, name)), torch.iinfo(getattr(torch, name))
    assert _values(got) == _values(ref) and got == nt.iinfo(getattr(nt, name))


def test_finfo_of_the_default_dtype_and_keywords():
    assert repr(nt.finfo()) == repr(torch.finfo())
    nt.set_default_dtype(nt.float64)
    try:
        assert nt.finfo().dtype == "float64"
    finally:
        nt.set_default_dtype(nt.float32)
    assert repr(nt.iinfo(type=nt.int16)) == repr(torch.iinfo(type=torch.int16))


@pytest.mark.parametrize(
    "call",
    [
        lambda L: L.finfo(L.int32),
        lambda L: L.finfo(L.bool),
        lambda L: L.iinfo(L.float32),
        lambda L: L.iinfo(L.complex64),
        lambda L: L.iinfo(L.bool),
        lambda L: L.finfo(3),
        lambda L: L.iinfo(),
        lambda L: L.finfo(dtype=L.float32),
        lambda L: hash(L.finfo(L.float32)) and None,
    ],
)
def test_info_errors_match_torch(call):
    got = outcome(call, nt)
    ref = outcome(call, torch)
    assert type(got).__name__ == type(ref).__name__ == "Raised"
    assert got.type is ref.type
    assert got.text == ref.text.replace("type: 'torch.finfo'", "type: 'finfo'")  # (class name)


@pytest.mark.parametrize(
    "make",
    [
        lambda L: L.Size([2, 3]).numel(),
        lambda L: L.Size([]).numel(),
        lambda L: L.Size([2, 3, 2]).count(2),
        lambda L: L.Size([2, 3]).index(3),
        lambda L: repr(L.Size([2, 3])[1:]),
        lambda L: type(L.Size([2, 3])[1:]).__name__,
        lambda L: repr(L.Size([2, 3]) + (4,)),
        lambda L: repr((4,) + L.Size([2, 3])),
        lambda L: repr(L.Size([2]) * 2),
        lambda L: repr(L.Size([True, np.int64(3), L.tensor(4)])),
        lambda L: repr(L.Size()),
        lambda L: str(L.Size([-1, 0])),
        lambda L: repr(pickle.loads(pickle.dumps(L.Size([2, 3])))),
        lambda L: L.Size([2, 3]).__reduce__()[1],
    ],
)
def test_size_matches_torch(make):
    assert_same(make)


@pytest.mark.parametrize(
    "make",
    [
        lambda L: L.Size([1.5]),
        lambda L: L.Size(["a"]),
        lambda L: L.Size([L.tensor(3.0)]),
        lambda L: L.Size(3),
        lambda L: L.Size([2]).index(5),
    ],
)
def test_size_errors_match_torch(make):
    assert_same_error(make)


def test_shapes_are_sizes():
    x = nt.zeros(2, 3)
    assert type(x.shape) is nt.Size and type(x.size()) is nt.Size and x.shape == (2, 3)


@pytest.mark.parametrize("info", ["finfo", "iinfo"])
@pytest.mark.parametrize("py_type", [float, int, bool, complex])
def test_python_types_read_as_dtypes(info, py_type):
    # PyTorch's parser reads float/int/bool/complex as float64/int64/bool/complex128
    def prog(L):
        return repr(getattr(L, info)(py_type))

    ref = outcome(prog, torch)
    assert outcome(prog, nt) == ref
