"""The ways an op is declared: defop's method keywords and derived jvp, composites in the
op database, strict test flags, the one public listing, and the upward-call registry."""

from __future__ import annotations

import numpy as np
import pytest
from opdb import resolve

import numtorch as nt
from numtorch._core import upcalls
from numtorch._core.op import ELEMENTWISE, REGISTRY, composite, defop
from numtorch.func import jvp


def _kernel(xp, input, other):
    return xp.sin(input) * other


def _sin_mul(jvp_rule):
    return defop(
        "sin_mul_test",
        _kernel,
        vjp=(lambda g, input, other: g * input.cos() * other, lambda g, input: g * input.sin()),
        jvp=jvp_rule,
        register=False,
    )


def test_elementwise_jvp_is_the_sum_of_the_vjp_formulas():
    derived = _sin_mul(ELEMENTWISE)
    written = _sin_mul(
        lambda tinput, tother, input, other: tinput * input.cos() * other + tother * input.sin()
    )
    assert derived.jvp_args[:2] == ("tinput", "tother")
    x, y = nt.tensor([0.3, -1.2, 2.0]), nt.tensor([1.5, 0.5, -2.0])
    tx, ty = nt.tensor([1.0, 2.0, -1.0]), nt.tensor([0.5, -0.5, 3.0])
    got = jvp(derived.fn, (x, y), (tx, ty))[1]
    want = jvp(written.fn, (x, y), (tx, ty))[1]
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    expected = tx.numpy() * np.cos(x.numpy()) * y.numpy() + ty.numpy() * np.sin(x.numpy())
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-6)
    # A Python number operand has no tangent.
    np.testing.assert_allclose(
        jvp(lambda a: derived.fn(a, 2.0), (x,), (tx,))[1].numpy(),
        tx.numpy() * np.cos(x.numpy()) * 2.0,
        rtol=1e-6,
    )


def test_a_misspelt_test_flag_is_an_error():
    with pytest.raises(TypeError, match="sin_mul_test: test flags: .*'no_oracel'"):
        defop("sin_mul_test", _kernel, test={"no_oracel": True}, register=False)


def test_a_tensor_method_is_declared_once():
    with pytest.raises(ValueError, match=r"Tensor.exp declared twice"):
        defop("exp_again", lambda xp, input: xp.exp(input), methods=("exp",), register=False)


def test_methods_are_declared_with_the_op():
    x = nt.tensor([0.5, 1.0])
    # (the method runs the op's function's code, judged as PyTorch's parser of Tensor.exp)
    assert nt.Tensor.exp.__code__ is REGISTRY["exp"].fn.__code__
    assert nt.Tensor.exp_.inplace_of is REGISTRY["exp"]
    np.testing.assert_allclose(x.clone().exp_().numpy(), np.exp(x.numpy()), rtol=1e-6)


def test_composite_enters_the_op_database():
    def swap_last(input, scale=1.0):
        return input.transpose(-1, -2) * scale

    try:
        fn = composite(swap_last, samples=lambda make: [], oracle="transpose")
        assert fn is swap_last
        op = REGISTRY["swap_last"]
        assert op.composite and op.kernel is None and op.batch_rule is None
        assert op.inputs == ("input",) and [a[0] for a in op.attrs] == ["scale"]
        assert op.ndiff == 1 and op.jvp is not None  # selected by the differentiable tests
        with pytest.raises(ValueError, match="op swap_last defined twice"):
            composite(swap_last, samples=lambda make: [])
    finally:
        REGISTRY.pop("swap_last", None)


def test_every_op_is_public_where_its_api_says():
    """The namespaces list their names in source; each registered op is found there (as
    its own function, or a public wrapper that binds an overload)."""
    missing = []
    for op in REGISTRY.values():
        if op.api.startswith("Tensor.") or op.samples is None:
            continue
        try:
            resolve(nt, op.api)
        except AttributeError:
            missing.append(op.api)
    assert missing == []
    assert nt.exp is REGISTRY["exp"].fn and nt.linalg.det is REGISTRY["linalg_det"].fn


def test_an_upward_call_nobody_provided_says_who_should():
    assert upcalls.record is not None and upcalls.backward is not None
    with pytest.raises(KeyError, match="no upward call named 'recrod'"):
        upcalls.provide(recrod=print)
    missing = upcalls._missing("record", "numtorch.autograd.graph")
    with pytest.raises(RuntimeError, match="provided by numtorch.autograd.graph"):
        missing()
