"""autograd.gradcheck and gradgradcheck against PyTorch's: the same functions pass or fail
the same way (return value, exception type, message start), with the same argument checks
and warnings."""

from __future__ import annotations

import importlib
import inspect
import warnings

import numpy as np
import pytest
import torch
from twolibs import arr, assert_same, assert_same_error, run_both

import numtorch as nt


def _module(lib):
    return importlib.import_module(f"{lib.__name__}.autograd.gradcheck")


def _leaf(lib, x, dtype="float64"):
    return lib.tensor(x, dtype=getattr(lib, dtype)).requires_grad_()


def _outcome(lib, check, func, inputs, **kw):
    """True/False, or (error type name, RuntimeError subclass?, the message's first line)."""
    try:
        return check(func, inputs, **kw)
    except Exception as e:  # noqa: BLE001 - the type and text are what is compared
        return type(e).__name__, isinstance(e, RuntimeError), str(e).split("\n")[0]


A, B, C = arr(2, 3, seed=1), arr(3, 2, seed=2), arr(2, seed=3)

GOOD = {
    "sin_matmul": (lambda a, b: (a @ b).sin(), (A, B)),
    "two_outputs": (lambda a, b: ((a @ b).tanh(), a.exp().sum(0)), (A, B)),
    "reductions": (lambda c: (c.softmax(0), c.logsumexp(0), c.norm()), (C,)),
    "broadcast": (lambda a, c: a * c[:, None] + c.sigmoid()[:, None], (A, C)),
    "views": (lambda a: a.t()[1:3].reshape(-1) ** 2, (A,)),
}


@pytest.mark.parametrize("name", GOOD)
@pytest.mark.parametrize("fast_mode", [False, True])
def test_correct_gradients_pass(name, fast_mode):
    func, arrays = GOOD[name]

    def prog(lib):
        inputs = tuple(_leaf(lib, x) for x in arrays)
        kw = {"fast_mode": fast_mode, "check_batched_grad": True}
        return lib.autograd.gradcheck(func, inputs, **kw), lib.autograd.gradgradcheck(
            func, inputs, fast_mode=fast_mode
        )

    assert run_both(prog) == (
        (True, True),
        (True, True),
    )


def test_non_tensor_and_constant_inputs():
    """Only the tensors that require grad are checked; ints and constant tensors pass
    through; integer outputs and outputs that do not require grad are skipped."""

    def prog(lib):
        a, c = _leaf(lib, A), lib.tensor(C)

        def f(a, k, c):
            return (a * k).sum(1) * c, a.argmax(), c * 2

        return lib.autograd.gradcheck(f, (a, 3, c)), lib.autograd.gradcheck(f, [a, 3, c])

    assert run_both(prog) == ((True, True), (True, True))


def _scaled_grad(x, k=2.0):
    """x itself, but its gradient comes back scaled by k (a wrong backward). torch passes
    None for the undefined gradients of its undefined-grad check (numtorch zeros)."""
    y = x * 1.0
    y.register_hook(lambda g: None if g is None else g * k)
    return y


WRONG = {
    "input0": (lambda a, b: (_scaled_grad(a) @ b).sin(), (A, B)),
    "input1": (lambda a, b: (a @ _scaled_grad(b)).sin(), (A, B)),
    "output1": (lambda a, b: ((a @ b).sin(), _scaled_grad(a.exp(), 0.5)), (A, B)),
}


@pytest.mark.parametrize("name", WRONG)
@pytest.mark.parametrize("fast_mode", [False, True])
def test_a_wrong_gradient_fails_like_torch(name, fast_mode):
    func, arrays = WRONG[name]

    def prog(lib):
        inputs = tuple(_leaf(lib, x) for x in arrays)
        raised = _outcome(lib, lib.autograd.gradcheck, func, inputs, fast_mode=fast_mode)
        quiet = lib.autograd.gradcheck(func, inputs, fast_mode=fast_mode, raise_exception=False)
        return raised, quiet

    ours, theirs = run_both(prog)
    assert ours == theirs
    assert ours[0][:2] == ("GradcheckError", True) and ours[1] is False
    assert ours[0][2].startswith("Jacobian mismatch for output ")


def test_edge_cases_like_torch():
    """A bare tensor as inputs, a list of outputs, an empty output, tolerances."""

    def prog(lib):
        x = _leaf(lib, C)
        check = lib.autograd.gradcheck
        return (
            check(lambda a: a.exp(), x),
            check(lambda a: [a.exp(), a * 2], (x,)),
            check(lambda a: a[:0] * 2, (x,)),
            check(lambda a: a.exp(), x, check_forward_ad=True, fast_mode=True),
            _outcome(lib, check, lambda a: _scaled_grad(a, 1 + 1e-4).exp(), (x,)),
            _outcome(lib, check, lambda a: _scaled_grad(a, 1.01).exp(), (x,)),
            _outcome(lib, check, lambda a: _scaled_grad(a, 1.01).exp(), (x,), rtol=0.1),
        )

    ours = assert_same(prog)
    assert ours[:5] == (True,) * 5 and ours[5][0] == "GradcheckError" and ours[6] is True


def test_gradcheck_error_is_a_runtime_error_in_the_submodule():
    err = _module(nt).GradcheckError
    assert issubclass(err, RuntimeError) and err.__name__ == "GradcheckError"
    assert nt.autograd.gradcheck is _module(nt).gradcheck
    assert nt.autograd.gradgradcheck is _module(nt).gradgradcheck
    with pytest.raises(err, match="^Jacobian mismatch for output 0 with respect to input 0,"):
        nt.autograd.gradcheck(lambda a: _scaled_grad(a).sin(), (_leaf(nt, C),))


def test_mismatch_message_shows_both_jacobians():
    x = _leaf(nt, np.array([0.5, -1.0]))
    with pytest.raises(RuntimeError) as info:
        nt.autograd.gradcheck(lambda a: _scaled_grad(a, 3.0) * 2, (x,))
    text = str(info.value)
    assert text.startswith("Jacobian mismatch for output 0 with respect to input 0,\nnumerical:")
    numerical, analytical = text.split("\nnumerical:")[1].split("\nanalytical:")
    assert "2." in numerical and "6." in analytical


@pytest.mark.parametrize("name", ["sin_matmul", "two_outputs"])
def test_gradgradcheck_on_second_order_functions(name):
    func, arrays = GOOD[name]

    def prog(lib):
        inputs = tuple(_leaf(lib, x) for x in arrays)
        outs = func(*inputs)
        outs = outs if isinstance(outs, tuple) else (outs,)
        gos = tuple(lib.tensor(arr(*o.shape, seed=9)) for o in outs)
        given = lib.autograd.gradgradcheck(func, inputs, gos)
        noncontig = lib.autograd.gradgradcheck(func, inputs, gen_non_contig_grad_outputs=True)
        batched = lib.autograd.gradgradcheck(func, inputs, check_batched_grad=True)
        return given, noncontig, batched

    assert run_both(prog) == ((True, True, True), (True, True, True))


def _detached_grad_hook(x):
    """x itself; its gradient is right, but the gradient of that gradient with respect to
    the output cotangent is zero (a wrong double backward)."""
    y = x * 1.0
    y.register_hook(lambda g: None if g is None else g + (g.detach() - g))
    return y


def test_gradgradcheck_catches_a_wrong_double_backward():
    def prog(lib):
        inputs = (_leaf(lib, C),)

        def f(c):
            return _detached_grad_hook(c).sin()

        first = lib.autograd.gradcheck(f, inputs)
        raised = _outcome(lib, lib.autograd.gradgradcheck, f, inputs)
        quiet = lib.autograd.gradgradcheck(f, inputs, raise_exception=False)
        return first, raised, quiet

    ours, theirs = run_both(prog)
    assert ours == theirs
    assert ours[0] is True and ours[1][:2] == ("GradcheckError", True) and ours[2] is False


def test_no_differentiable_outputs():
    def prog(lib):
        a = _leaf(lib, C)
        zero = lib.autograd.gradcheck(lambda a: (a > 0).double(), (a,))
        nonzero = _outcome(lib, lib.autograd.gradcheck, lambda a: a.detach() * 2, (a,))
        nonzero_fast = _outcome(
            lib, lib.autograd.gradcheck, lambda a: a.detach() * 2, (a,), fast_mode=True
        )
        return zero, nonzero, nonzero_fast

    ours = assert_same(prog)
    assert ours[1] == (
        "GradcheckError",
        True,
        "Numerical gradient for function expected to be zero",
    )


def _nondeterministic(x):
    """A backward whose result drifts by a relative 1e-9 per call."""
    y = x * 1.0
    calls = []

    def hook(g):
        calls.append(1)
        return None if g is None else g * (1 + 1e-9 * len(calls))

    y.register_hook(hook)
    return y


@pytest.mark.parametrize("nondet_tol", [0.0, 1e-5])
def test_nondeterministic_backward(nondet_tol):
    def prog(lib):
        inputs = (_leaf(lib, C),)
        return _outcome(
            lib,
            lib.autograd.gradcheck,
            lambda c: _nondeterministic(c).exp(),
            inputs,
            nondet_tol=nondet_tol,
        )

    ours = assert_same(prog)
    assert ours is True if nondet_tol else ours[2].startswith("Backward is not reentrant")


def test_float32_input_warns_like_torch():
    def prog(lib):
        a = _leaf(lib, C, "float32")
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            ok = lib.autograd.gradcheck(lambda a: a * 2, (a,), eps=1e-3, atol=1e-3)
        return ok, [(x.category, str(x.message)) for x in w]

    ours = assert_same(prog)
    assert ours[1][0][1].startswith("Input #0 requires gradient and is not a double precision")


@pytest.mark.parametrize(
    "prog",
    [
        lambda lib: lib.autograd.gradcheck(lambda a: a * 2, (lib.tensor(C),)),
        lambda lib: lib.autograd.gradcheck(lambda a: a * 2, 3.0),
        lambda lib: lib.autograd.gradcheck(
            lambda a: a * 2, (lib.tensor([1.0], dtype=lib.float64).expand(3).requires_grad_(),)
        ),
        lambda lib: lib.autograd.gradcheck(
            lambda a: a, (lib.zeros(2, requires_grad=True),), check_backward_ad=False
        ),
        lambda lib: lib.autograd.gradcheck(
            lambda a: a, (lib.zeros(2, requires_grad=True),), check_batched_forward_grad=True
        ),
        lambda lib: lib.autograd.gradcheck(
            lambda a: a,
            (lib.zeros(2, requires_grad=True),),
            check_batched_grad=True,
            check_backward_ad=False,
            check_forward_ad=True,
        ),
        lambda lib: lib.autograd.gradgradcheck(
            lambda a: a, (lib.zeros(2, requires_grad=True),), check_rev_over_rev=False
        ),
        lambda lib: lib.autograd.gradgradcheck(
            lambda a: a,
            (lib.zeros(2, requires_grad=True),),
            check_rev_over_rev=False,
            check_fwd_over_rev=True,
        ),
    ],
)
def test_argument_errors(prog):
    assert_same_error(prog)


@pytest.mark.parametrize("name", ["gradcheck", "gradgradcheck"])
def test_signature(name):
    def sig(f):
        return [(p.name, p.kind, p.default) for p in inspect.signature(f).parameters.values()]

    assert sig(getattr(nt.autograd, name)) == sig(getattr(torch.autograd, name))


@pytest.mark.parametrize("name", ["two_outputs", "reductions", "views"])
@pytest.mark.parametrize("fast_mode", [False, True])
def test_forward_mode_passes_on_correct_functions(name, fast_mode):
    func, arrays = GOOD[name]

    def prog(lib):
        inputs = tuple(_leaf(lib, x) for x in arrays)
        check = lib.autograd.gradcheck
        both = check(func, inputs, check_forward_ad=True, fast_mode=fast_mode)
        batched = check(func, inputs, check_forward_ad=True, check_batched_forward_grad=True)
        forward_only = check(func, inputs, check_forward_ad=True, check_backward_ad=False)
        return both, batched, forward_only

    assert run_both(prog) == ((True, True, True), (True, True, True))


@pytest.mark.parametrize("fast_mode", [False, True])
def test_a_wrong_forward_derivative_fails_like_torch(fast_mode):
    """c.detach() * c: both modes see only the second factor's derivative (c, not 2c)."""

    def prog(lib):
        inputs = (_leaf(lib, C), _leaf(lib, A))
        kw = {"check_forward_ad": True, "check_backward_ad": False, "fast_mode": fast_mode}

        def f(c, a):
            return a.exp(), c.detach() * c

        quiet = lib.autograd.gradcheck(f, inputs, raise_exception=False, **kw)
        return _outcome(lib, lib.autograd.gradcheck, f, inputs, **kw), quiet

    ours = assert_same(prog)
    assert ours[0][2] == (
        "Jacobian computed with forward mode mismatch for output 1 with respect to input 0,"
    )


def test_gradgradcheck_forward_over_reverse():
    func, arrays = GOOD["sin_matmul"]
    inputs = tuple(_leaf(nt, x) for x in arrays)
    assert nt.autograd.gradgradcheck(func, inputs, check_fwd_over_rev=True)
