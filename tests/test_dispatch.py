"""The dispatcher's level machinery, exercised with a trivial tracing transform."""

from __future__ import annotations

import operator as op

import numpy as np
import pytest

import numtorch as nt
from numtorch._core.state import state
from numtorch._opdb.trace import TraceInterpreter, TraceTensor


def test_ops_on_wrappers_reach_their_interpreter_with_inner_values():
    x = nt.tensor([1.0, 2.0])
    with TraceInterpreter() as T:
        w = T.wrap(x)
        y = (w * 3 + x).exp()
        assert isinstance(y, TraceTensor) and y.shape == (2,) and y.dtype == nt.float32
        assert T.level == 1 and len(state.stack) == 1
    assert [c[0].name for c in T.calls] == ["mul", "add", "exp"]
    assert all(not isinstance(a, TraceTensor) for c in T.calls for a in c[1])
    np.testing.assert_allclose(T.unwrap(y).numpy(), np.exp(np.array([1.0, 2.0]) * 4), rtol=1e-6)
    assert state.stack == []


def test_nested_levels_dispatch_from_the_highest_down():
    x = nt.tensor([1.0, 2.0])
    with TraceInterpreter() as outer:
        a = outer.wrap(x)
        with TraceInterpreter() as inner:
            b = inner.wrap(x)
            assert (outer.level, inner.level) == (1, 2)
            c = a * b  # level 2 handles it first, then level 1 sees a * (plain b)
            d = b + 1  # only level 2
    assert [k[0].name for k in inner.calls] == ["mul", "add"]
    assert [k[0].name for k in outer.calls] == ["mul"]
    assert isinstance(c, TraceTensor) and c._interp is inner
    assert isinstance(c._inner, TraceTensor) and c._inner._interp is outer
    np.testing.assert_allclose(c._inner._inner.numpy(), [1.0, 4.0])
    np.testing.assert_allclose(d._inner.numpy(), [2.0, 3.0])


def test_plain_tensors_take_the_fast_path():
    x = nt.tensor([1.0])
    y = x + x
    assert type(y) is nt.Tensor and y.grad_fn is None


def test_escaped_wrapper_is_an_error_not_a_wrong_value():
    with TraceInterpreter() as T:
        w = T.wrap(nt.tensor([1.0]))
    with pytest.raises(RuntimeError, match="escaped the transform"):
        w + 1
    with pytest.raises(RuntimeError, match="escaped the transform"):
        with TraceInterpreter():
            w * 2


def test_grad_recording_happens_at_level_zero_under_a_transform():
    x = nt.tensor([1.0, 2.0], requires_grad=True)
    with TraceInterpreter() as T:
        y = (T.wrap(x) * x).sum()
    inner = T.unwrap(y)
    inner.backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])


def test_detach_under_the_trace_is_a_traced_value_without_grad():
    x = nt.tensor([1.0, 2.0], requires_grad=True)
    with TraceInterpreter() as T:
        d = T.wrap(x * 2).detach()
        y = d + 1
    assert isinstance(d, TraceTensor) and not d.requires_grad
    assert [c[0].name for c in T.calls] == ["add"]
    np.testing.assert_allclose(T.unwrap(y).numpy(), [3.0, 5.0])
    assert T.unwrap(y).grad_fn is None


def test_inplace_ops_under_the_trace_write_the_inner_values():
    base, plain = nt.zeros(2, 3), nt.zeros(2, 3)
    with TraceInterpreter() as T:
        x = T.wrap(nt.arange(6.0).reshape(2, 3))
        y = T.wrap(base)
        assert y.add_(x) is y
        y[0] = 5.0
        y[1].mul_(2)  # through a view
        plain.add_(x)
        with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
            T.wrap(nt.zeros(3)).add_(x)
    np.testing.assert_allclose(base.numpy(), [[5, 5, 5], [6, 8, 10]])
    np.testing.assert_allclose(plain.numpy(), np.arange(6.0).reshape(2, 3))
    assert [c[0].name for c in T.calls][:1] == ["add"]


_OPERANDS = {
    "f32": lambda: nt.tensor([[1.5, -2.0], [3.0, 0.25]]),
    "f16": lambda: nt.tensor([1.5, 65504.0], dtype=nt.float16),
    "i8": lambda: nt.tensor([100, -100], dtype=nt.int8),
    "u8": lambda: nt.tensor([3, 250], dtype=nt.uint8),
    "0-d": lambda: nt.tensor(2.5),
    "transposed": lambda: nt.arange(6.0).reshape(2, 3).t(),
    "bf16": lambda: nt.tensor([1.5, 2.0], dtype=nt.bfloat16),
    "leaf": lambda: nt.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True),
}


@pytest.mark.parametrize("other", [*_OPERANDS, 2, -3, 1e30, 2**70, True, 0.5j])
@pytest.mark.parametrize("first", list(_OPERANDS))
@pytest.mark.parametrize("sym", ["+", "-", "*"])
def test_operators_short_path_gives_dispatchs_result(first, other, sym):
    """``+ - *`` take a short path for plain CPU operands: the same values, dtype, layout,
    node and errors as the op's function (which always goes through dispatch)."""
    fn, dunder = {"+": (nt.add, op.add), "-": (nt.sub, op.sub), "*": (nt.mul, op.mul)}[sym]
    a = _OPERANDS[first]()
    b = _OPERANDS[other]() if isinstance(other, str) else other

    def outcome(call):
        try:
            r = call()
        except Exception as e:  # noqa: BLE001 (the error is the outcome compared)
            return type(e), str(e)
        return (
            r.detach().float().numpy().tolist() if r.dtype != nt.bool else r.tolist(),
            r.dtype,
            r.stride(),
            r.requires_grad,
            type(r.grad_fn).__name__,
        )

    want = outcome(lambda: fn(a, b))
    assert outcome(lambda: dunder(a, b)) == want


_FACTORS = {
    "2x3": lambda: nt.arange(6.0).reshape(2, 3),
    "1x3": lambda: nt.arange(3.0).reshape(1, 3) - 1,
    "3x1": lambda: nt.arange(3.0).reshape(3, 1) + 0.5,
    "1x4": lambda: nt.arange(4.0).reshape(1, 4) * 0.25,
    "3x4": lambda: nt.arange(12.0).reshape(3, 4) / 7,
    "3x4.T": lambda: (nt.arange(12.0).reshape(4, 3) / 7).t(),
    "3x4 leaf": lambda: (nt.arange(12.0).reshape(3, 4) / 7).requires_grad_(),
    "3x4 f64": lambda: nt.arange(12.0, dtype=nt.float64).reshape(3, 4),
    "3x4 i64": lambda: nt.arange(12).reshape(3, 4),
    "3": lambda: nt.arange(3.0),
    "2x3x4": lambda: nt.arange(24.0).reshape(2, 3, 4),
    "0x3": lambda: nt.zeros(0, 3),
    "0-d": lambda: nt.tensor(2.0),
}


@pytest.mark.parametrize("second", list(_FACTORS))
@pytest.mark.parametrize("first", ["2x3", "1x3", "3x1", "3", "2x3x4", "0x3", "0-d"])
def test_matmul_operator_short_path_gives_matmuls_result(first, second):
    """``@`` takes a short path for plain CPU factors: the same values (to the bit), dtype,
    strides, node and errors as ``matmul`` (which always goes through dispatch)."""
    a, b = _FACTORS[first](), _FACTORS[second]()

    def outcome(call):
        try:
            r = call()
        except Exception as e:  # noqa: BLE001 (the error is the outcome compared)
            return type(e), str(e)
        return (
            r.detach().numpy().tobytes(),
            r.dtype,
            r.shape,
            r.stride(),
            r.requires_grad,
            type(r.grad_fn).__name__,
        )

    assert outcome(lambda: a @ b) == outcome(lambda: nt.matmul(a, b))


@pytest.mark.parametrize("level", ["vmap", "grad"])
@pytest.mark.parametrize("other", ["f32", "transposed", "leaf", "i8", 2, 0.5, 2**70])
@pytest.mark.parametrize("first", ["f32", "0-d", "transposed", "leaf", "bf16"])
@pytest.mark.parametrize("sym", ["+", "-", "*"])
def test_operators_short_path_under_levels_gives_dispatchs_result(level, first, other, sym):
    """Under transform levels, ``+ - *`` of plain tensors no level holds take the short path:
    the same outcome as the op's function (level-0 recording included)."""
    from numtorch.func._batched import VmapInterpreter
    from numtorch.func._grad import GradInterpreter

    fn, dunder = {"+": (nt.add, op.add), "-": (nt.sub, op.sub), "*": (nt.mul, op.mul)}[sym]
    a = _OPERANDS[first]()
    b = _OPERANDS[other]() if isinstance(other, str) else other

    def outcome(call):
        with VmapInterpreter(2, "error") if level == "vmap" else GradInterpreter():
            try:
                r = call()
            except Exception as e:  # noqa: BLE001 (the error is the outcome compared)
                return type(e), str(e)
            return (
                type(r),
                r.detach().float().numpy().tolist(),
                r.dtype,
                r.stride(),
                r.requires_grad,
                type(r.grad_fn).__name__,
            )

    want = outcome(lambda: fn(a, b))
    assert want[0] is nt.Tensor or want[0] in (TypeError, RuntimeError)
    assert outcome(lambda: dunder(a, b)) == want


class _SeesAll(TraceInterpreter):
    """A tracer that sees every call, plain operands' too (as compile's does)."""

    sees_all = True

    def process(self, op, args, attrs):
        self.sees_all = False
        try:
            return super().process(op, args, attrs)
        finally:
            self.sees_all = True


def test_operators_of_plain_tensors_reach_a_tracer_that_sees_all():
    x, y = nt.tensor([1.0, 2.0]), nt.tensor([3.0, 4.0])
    with _SeesAll() as T:
        z = x * y + x - 1
    assert isinstance(z, TraceTensor)
    assert [c[0].name for c in T.calls] == ["mul", "add", "sub"]
    np.testing.assert_allclose(T.unwrap(z).numpy(), [3.0, 9.0])


def test_operators_of_a_view_behind_its_roots_level_take_its_history():
    """A plain view made before its root was lifted into a grad level (by a write of the
    level's value) is no plain operand: ``+`` and ``*`` reach the level, as PyTorch's do."""
    import torch

    def f(L):
        def g(w):
            buf = L.zeros(3)
            v = buf[:2]
            buf.copy_(w)
            return (v * 2 + v * v).sum()

        return L.func.grad(g)(L.tensor([1.0, 2.0, 3.0]))

    np.testing.assert_allclose(f(nt).numpy(), f(torch).numpy())
