"""Anomaly mode against PyTorch: flags, NaN errors, forward tracebacks, parent_ nodes."""

from __future__ import annotations

import warnings

import pytest
import torch
from twolibs import assert_same, assert_same_error, run_both

import numtorch as nt

NAN = float("nan")
ENABLED = "Anomaly Detection has been enabled. This mode will increase the runtime and should only be enabled for debugging."


@pytest.fixture(autouse=True)
def _quiet_and_restored():
    """Anomaly mode is process-wide: every test leaves it off; its warnings are expected."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield
    for lib in (nt, torch):
        assert not lib.is_anomaly_enabled() and lib.is_anomaly_check_nan_enabled()


def flags(T):
    return (T.is_anomaly_enabled(), T.is_anomaly_check_nan_enabled())


def caught(fn):
    """(result or exception, the texts of the warnings fn issued)."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            res = fn()
        except Exception as e:  # noqa: BLE001 - the outcome is what is compared
            res = e
    return res, [str(x.message) for x in w]


# ------------------------------------------------------------------ flags
def test_public_names():
    for name in ("is_anomaly_enabled", "is_anomaly_check_nan_enabled", "set_anomaly_enabled"):
        assert hasattr(torch, name) and hasattr(nt, name)
    for name in ("detect_anomaly", "set_detect_anomaly"):
        assert name in nt.autograd.__all__
        assert name in nt.autograd.anomaly_mode.__all__


def test_context_managers_nest_and_restore():
    def prog(T):
        seen = [flags(T)]
        with T.autograd.set_detect_anomaly(True, check_nan=False):
            seen.append(flags(T))
            with T.autograd.detect_anomaly():
                seen.append(flags(T))
                with T.autograd.set_detect_anomaly(False):
                    seen.append(flags(T))
                with T.autograd.detect_anomaly(check_nan=False):
                    seen.append(flags(T))
                seen.append(flags(T))
            seen.append(flags(T))
        seen.append(flags(T))
        T.autograd.set_detect_anomaly(True, False)  # as a function: takes effect now
        seen.append(flags(T))
        T.set_anomaly_enabled(False)
        seen.append(flags(T))
        try:
            with T.autograd.detect_anomaly(check_nan=False):
                raise KeyError("inside")
        except KeyError:
            seen.append(flags(T))
        return seen

    ours, theirs = run_both(prog)
    assert ours == theirs
    assert ours[1] == (True, False) and ours[-1] == (False, True)


def test_detect_anomaly_warns_at_the_callers_line():
    for lib in (nt, torch):
        with pytest.warns(UserWarning) as record:
            with lib.autograd.detect_anomaly():
                pass
        assert [str(w.message) for w in record] == [ENABLED]
        assert record[0].filename == __file__


def test_signatures_and_no_decorator_use():
    import inspect

    def params(f):
        return [(p.name, p.kind, p.default) for p in inspect.signature(f).parameters.values()]

    for name in ("detect_anomaly", "set_detect_anomaly"):
        assert params(getattr(nt.autograd, name)) == params(getattr(torch.autograd, name))

    def prog(T):  # like PyTorch's, the classes are context managers only
        @T.autograd.detect_anomaly()
        def f():
            return 1

    assert_same_error(prog)


# ------------------------------------------------------------------ NaN checks
def _sqrt_neg(T):
    x = T.tensor([-1.0, 4.0], requires_grad=True)
    x.sqrt().sum().backward()


def _zero_by_zero(T):  # d/da = 1/0 = inf, d/db = -0/0 = nan: the 1st output
    a = T.tensor([0.0, 1.0], requires_grad=True)
    b = T.tensor([0.0, 2.0], requires_grad=True)
    (a / b).sum().backward()


def _nan_factor_0th(T):  # only the 0th input's gradient (the other factor) is NaN
    a = T.tensor([1.0, 2.0], requires_grad=True)
    b = T.tensor([NAN, 1.0], requires_grad=True)
    (a * b).sum().backward()


def _nan_factor_1st(T):  # the constant takes output 0 (undefined), the leaf output 1
    a = T.tensor([1.0, 2.0], requires_grad=True)
    (T.tensor([NAN, 1.0]) * a).sum().backward()


def _grad_of_log_at_zero(T):  # autograd.grad reports too; 0 * inf in LogBackward0 * 0
    x = T.tensor([0.0, 1.0], requires_grad=True)
    T.autograd.grad((x.log() * 0).sum(), x)


def _double_backward(T):  # the NaN comes from a node the first backward created
    x = T.tensor([2.0, 3.0], requires_grad=True)
    (g,) = T.autograd.grad(x.exp().sum(), x, create_graph=True)
    T.autograd.grad(g, x, T.tensor([NAN, 1.0]))


def _under_vmap_of_grad(T):
    T.vmap(T.func.grad(lambda v: v.sqrt()))(T.tensor([-1.0, 4.0]))


@pytest.mark.parametrize(
    "prog",
    [
        _sqrt_neg,
        _zero_by_zero,
        _nan_factor_0th,
        _nan_factor_1st,
        _grad_of_log_at_zero,
        _double_backward,
        _under_vmap_of_grad,
    ],
    ids=lambda f: f.__name__.strip("_"),
)
def test_nan_in_backward_raises(prog):
    def anomalous(T):
        with T.autograd.detect_anomaly():
            prog(T)

    err = assert_same_error(anomalous)
    assert err.type is RuntimeError and "returned nan values in its" in err.text


def test_nan_error_texts():
    def text(prog):
        with nt.autograd.detect_anomaly():
            try:
                prog(nt)
            except RuntimeError as e:
                return str(e)

    assert text(_sqrt_neg) == "Function 'SqrtBackward0' returned nan values in its 0th output."
    assert text(_zero_by_zero) == "Function 'DivBackward0' returned nan values in its 1th output."
    assert text(_nan_factor_0th).endswith("in its 0th output.")
    assert text(_nan_factor_1st).endswith("in its 1th output.")


@pytest.mark.parametrize("off", ["check_nan", "mode"])
def test_nan_passes_when_not_checked(off):
    def prog(T):
        x = T.tensor([-1.0, 4.0], requires_grad=True)
        a = T.tensor([0.0, 1.0], requires_grad=True)
        b = T.tensor([0.0, 2.0], requires_grad=True)
        mode = T.autograd.set_detect_anomaly(off == "check_nan", check_nan=False)
        with mode:
            x.sqrt().sum().backward()
            (a / b).sum().backward()
        return x.grad, a.grad, b.grad

    ours = assert_same(prog, rtol=1e-6, atol=0)
    assert ours[0].isnan().tolist() == [True, False]


def test_version_error_hint_changes_in_anomaly_mode():
    def prog(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        with T.autograd.set_detect_anomaly(True):
            y = x.exp()
            y.add_(1)
            y.sum().backward()

    assert "Good luck!" in assert_same_error(prog).text


# ------------------------------------------------------------------ tracebacks
def test_traceback_is_stored_only_when_enabled():
    def prog(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        off = x.exp()
        with T.autograd.detect_anomaly():
            on = x.sin()
            z = T.tensor([3.0], requires_grad=True).exp()  # a leaf first seen here
        keys = [
            sorted(n.metadata)
            for n in (off.grad_fn, on.grad_fn, z.grad_fn, z.grad_fn.next_functions[0][0])
        ]
        return keys, on.grad_fn.metadata["traceback_"][-1]

    ours, theirs = run_both(prog)
    assert ours[0] == theirs[0] == [[], ["traceback_"], ["traceback_"], ["traceback_"]]
    # The traceback ends at this file's line that ran the op, exactly as torch's.
    assert ours[1] == theirs[1]
    assert ours[1].startswith(f'  File "{__file__}"') and "on = x.sin()" in ours[1]


def test_traceback_is_torchs_through_helpers_and_modules():
    def helper(T, x):
        return x.sqrt() * 2

    def prog(T):
        x = T.tensor([-1.0, 4.0], requires_grad=True)
        lin = T.nn.Linear(2, 2)
        with T.autograd.detect_anomaly():
            y = helper(T, x)
            out = lin(x)
        return y.grad_fn.next_functions[0][0].metadata["traceback_"], out.grad_fn.metadata

    (ours, ours_lin), (theirs, theirs_lin) = run_both(prog)
    assert ours == theirs
    assert "return x.sqrt() * 2" in ours[-1] and "y = helper(T, x)" in ours[-2]
    # the module's own forward line closes the trace in both
    for meta in (ours_lin, theirs_lin):
        where, _, code = meta["traceback_"][-1].partition("\n")
        assert "nn/modules/linear.py" in where and where.endswith(", in forward")
        assert code.strip() == "return F.linear(input, self.weight, self.bias)"


def test_error_warning_carries_the_forward_traceback():
    def prog(T):
        x = T.tensor([-1.0, 4.0], requires_grad=True)
        with T.autograd.detect_anomaly():
            y = x.sqrt()  # the forward line
            err, msgs = caught(lambda: y.sum().backward())
        return type(err), str(err), msgs, "".join(y.grad_fn.metadata["traceback_"])

    (etype, text, msgs, stack), (ttype, ttext, tmsgs, tstack) = run_both(prog)
    assert (etype, text) == (ttype, ttext)
    assert stack == tstack
    assert len(msgs) == len(tmsgs) == 1
    head = "Error detected in SqrtBackward0. Traceback of forward call that caused the error:\n"
    assert msgs[0] == head + stack
    assert tmsgs[0].startswith(msgs[0])  # torch appends where in C++ it warned
    assert "y = x.sqrt()  # the forward line" in msgs[0]


@pytest.mark.parametrize("where", ["tensor_hook", "post_hook", "leaf_hook", "in_place"])
def test_any_error_in_a_node_warns_with_its_name(where):
    def prog(T):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        with T.autograd.detect_anomaly():
            y = x.exp()
            if where == "tensor_hook":
                y.register_hook(lambda g: 1 / 0)
            elif where == "post_hook":
                y.grad_fn.register_hook(lambda gi, go: 1 / 0)
            elif where == "leaf_hook":
                x.register_hook(lambda g: 1 / 0)
            else:
                y.mul_(2)
            err, msgs = caught(lambda: y.sum().backward())
        return type(err).__name__, [m.partition(".")[0] for m in msgs]

    ours, theirs = run_both(prog)
    assert ours == theirs
    name = "torch::autograd::AccumulateGrad" if where == "leaf_hook" else "ExpBackward0"
    assert ours[1] == [f"Error detected in {name}"]


def test_node_recorded_without_anomaly_mode():
    def prog(T):
        x = T.tensor([-1.0, 4.0], requires_grad=True)
        y = x.sqrt()
        with T.autograd.set_detect_anomaly(True):
            err, msgs = caught(lambda: y.sum().backward())
        return str(err), [m.partition(" (Triggered")[0] for m in msgs]

    ours, theirs = run_both(prog)
    assert ours == theirs
    assert ours[1] == [
        "Error detected in SqrtBackward0. No forward pass information available. Enable "
        "detect anomaly during forward pass for more information."
    ]


# ------------------------------------------------------------------ parent_
def test_parent_of_a_node_created_in_a_create_graph_backward():
    def prog(T):
        x = T.tensor([2.0, 3.0], requires_grad=True)
        with T.autograd.detect_anomaly():
            y = x.exp()
            (g,) = T.autograd.grad(y.sum(), x, create_graph=True)  # the backward line
            node = g.grad_fn
            err, msgs = caught(lambda: T.autograd.grad(g, x, T.tensor([NAN, 1.0])))
        meta = node.metadata
        return (
            node.name(),
            sorted(meta),
            meta["parent_"] is y.grad_fn,
            sorted(y.grad_fn.metadata),
            meta["traceback_"],
            str(err),
            [m.partition(" (Triggered")[0] for m in msgs],
        )

    ours, theirs = run_both(prog)
    name, keys, is_parent, parent_keys, last, err, msgs = ours
    assert (name, keys, is_parent, parent_keys) == theirs[:4]
    assert keys == ["parent_", "traceback_"] and is_parent and parent_keys == ["traceback_"]
    # ours ends at the grad call; torch's goes on into its Python wrappers of the engine
    assert "# the backward line" in last[-1] and any("# the backward line" in f for f in theirs[4])
    assert err == theirs[5]
    # the failing node's trace, then its parent's ("Previous calculation was induced by")
    assert len(msgs) == len(theirs[6]) == 2
    assert msgs[0].startswith(f"Error detected in {name}. Traceback of forward call")
    assert msgs[1] == theirs[6][1] and msgs[1].startswith(
        "\n\nPrevious calculation was induced by ExpBackward0. Traceback of forward call that "
        "induced the previous calculation:\n"
    )
    assert "y = x.exp()" in msgs[1]


def test_no_parent_outside_backward():
    with nt.autograd.detect_anomaly():
        x = nt.tensor([2.0], requires_grad=True)
        (g,) = nt.autograd.grad(x.exp().sum(), x, create_graph=True)
        after = x.sin()
    assert "parent_" in g.grad_fn.metadata and "parent_" not in after.grad_fn.metadata


def test_no_stale_parent_after_a_failed_backward():
    with nt.autograd.detect_anomaly():
        x = nt.tensor([-1.0], requires_grad=True)
        with pytest.raises(RuntimeError, match="returned nan values"):
            x.sqrt().sum().backward()
        assert "parent_" not in x.exp().grad_fn.metadata


def test_flags_are_process_wide_as_in_torch():
    import threading

    def prog(T):
        seen = []
        with T.autograd.set_detect_anomaly(True, check_nan=False):
            t = threading.Thread(target=lambda: seen.append(flags(T)))
            t.start()
            t.join()
        return seen

    ours, theirs = run_both(prog)
    assert ours == theirs == [(True, False)]
