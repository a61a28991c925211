"""PyTorch's tutorial "Hooks for autograd saved tensors", followed step by step: each step
runs as one program on numtorch and on torch, and what it prints, returns or raises is
compared.

The steps read the saved tensors of a node (``grad_fn._saved_self``, ``_saved_other``,
``_saved_result``), hook one saved tensor (``grad_fn._raw_saved_self.register_hooks``),
hook every tensor saved in a region (``autograd.graph.saved_tensors_hooks``), keep saved
tensors on the CPU (``save_on_cpu``), on disk (``save``/``load`` into a temporary
directory), only the big ones on disk, and apply the hooks to selected modules only.
"""

from __future__ import annotations

import contextlib
import os
import uuid

import numpy as np
import pytest
from twolibs import arr, assert_close, assert_same, assert_same_error, run_both


# ------------------------------------------------------------------ 1. saved tensors
def test_step1_mul_saves_both_operands():
    """``a * b`` needs ``b`` for a's gradient and ``a`` for b's: it saves them as they
    are (the very objects, no copies)."""

    def prog(T):
        a = T.tensor(arr(5), requires_grad=True)
        b = T.ones(5, dtype=T.float64, requires_grad=True)
        y = a * b
        fn = y.grad_fn
        return fn._saved_self, fn._saved_other, fn._saved_self is a, fn._saved_other is b

    assert_same(prog)


def test_step1_pow_saves_its_input_and_exponent():
    def prog(T):
        x = T.tensor(arr(5), requires_grad=True)
        y = x.pow(2)
        return y.grad_fn._saved_self is x, y.grad_fn._saved_exponent

    assert_same(prog)


def test_step1_a_saved_output_is_packed_and_unpacked():
    """exp saves its result; the graph cannot hold the output itself (a reference cycle),
    so what comes back equals y but is another object."""

    def prog(T):
        x = T.tensor(arr(5), requires_grad=True)
        y = x.exp()
        saved = y.grad_fn._saved_result
        return saved.equal(y), saved is y, saved.grad_fn is y.grad_fn

    assert_same(prog)


def test_step1_saved_tensors_are_freed_by_backward():
    def prog(T):
        x = T.tensor(arr(5), requires_grad=True)
        y = x.pow(2)
        y.sum().backward()
        return y.grad_fn._saved_self

    assert_same_error(prog)


# ------------------------------------------------------------------ 2. hooks for one saved tensor
def _logging_hooks(log):
    def pack_hook(x):
        log.append(("pack", x.detach().clone()))
        return x

    def unpack_hook(x):
        log.append(("unpack", x.detach().clone()))
        return x

    return pack_hook, unpack_hook


def test_step2_register_hooks_on_one_saved_tensor():
    """The pack hook runs as soon as the hooks are registered; the unpack hook each time
    the saved tensor is used (by backward or by reading ``_saved_self``)."""

    def prog(T):
        log = []
        pack, unpack = _logging_hooks(log)
        a = T.ones(5, dtype=T.float64, requires_grad=True)
        b = T.ones(5, dtype=T.float64, requires_grad=True) * 2
        y = a * b
        y.grad_fn._raw_saved_self.register_hooks(pack, unpack)
        log.append("registered")
        log.append(("read", y.grad_fn._saved_self.detach().clone()))

        y.sum().backward()
        return log, a.grad

    assert_same(prog)


def test_step2_pack_to_an_index_into_storage():
    """The packed value can be anything: here an index into a list that holds the tensors."""

    def prog(T):
        storage = []

        def pack(x):
            storage.append(x)
            return len(storage) - 1

        def unpack(i):
            return storage[i]

        x = T.tensor(arr(5), requires_grad=True)
        y = x * x
        y.grad_fn._raw_saved_self.register_hooks(pack, unpack)
        y.grad_fn._raw_saved_other.register_hooks(pack, unpack)
        y.sum().backward()
        return x.grad.equal(2 * x), len(storage)

    assert_same(prog)


def test_step2_hooks_can_be_registered_once():
    def prog(T):
        x = T.tensor(arr(5), requires_grad=True)
        y = x.pow(2)
        y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)
        y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)

    assert_same_error(prog)


def test_step2_unpack_must_return_a_tensor():
    def prog(T):
        x = T.tensor(arr(5), requires_grad=True)
        y = x.pow(2)
        y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: 1.0)
        y.sum().backward()

    assert_same_error(prog)


def test_step2_pack_must_not_modify_its_input_in_place():
    def prog(T):
        x = T.tensor(arr(5), requires_grad=True)
        y = x.pow(2)

        def pack(t):
            t.add_(1)
            return t

        with T.no_grad():
            y.grad_fn._raw_saved_self.register_hooks(pack, lambda t: t)

    assert_same_error(prog)


def test_step2_register_hooks_after_backward_freed_it():
    def prog(T):
        x = T.tensor(arr(5), requires_grad=True)
        y = x.pow(2)
        raw = y.grad_fn._raw_saved_self
        y.sum().backward()
        raw.register_hooks(lambda t: t, lambda t: t)

    assert_same_error(prog)


# ------------------------------------------------------------------ 3. default hooks
def test_step3_saved_tensors_hooks_apply_to_every_saved_tensor():
    def prog(T):
        log = []
        pack, unpack = _logging_hooks(log)
        a = T.ones(5, dtype=T.float64, requires_grad=True)
        b = T.ones(5, dtype=T.float64, requires_grad=True) * 2
        with T.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = a * b
        log.append("forward done")
        y.sum().backward()
        return log, a.grad

    assert_same(prog)


def test_step3_hooks_see_tensors_when_they_are_saved_not_later():
    """The hooks in force when an op runs are the ones its saved tensors get; leaving the
    context does not change them, and ops outside it save as usual."""

    def prog(T):
        log = []
        x = T.tensor(arr(5), requires_grad=True)
        with T.autograd.graph.saved_tensors_hooks(
            lambda t: (log.append("pack1"), t)[1], lambda t: (log.append("unpack1"), t)[1]
        ):
            y = x.sin()
            with T.autograd.graph.saved_tensors_hooks(
                lambda t: (log.append("pack2"), t)[1], lambda t: (log.append("unpack2"), t)[1]
            ):
                z = y.cos()
        w = z * 3
        w.sum().backward()
        return log, x.grad

    assert_same(prog)


def test_step3_no_register_hooks_on_an_already_hooked_tensor():
    def prog(T):
        x = T.tensor(arr(5), requires_grad=True)
        with T.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            y = x.pow(2)
        y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)

    assert_same_error(prog)


def test_step3_unpack_result_with_a_different_identity():
    """Returning a copy from unpack is fine: the gradient is the same."""

    def prog(T):
        x = T.tensor(arr(5), requires_grad=True)
        with T.autograd.graph.saved_tensors_hooks(lambda t: t * 1, lambda t: t.clone()):
            y = (x * x).exp()
        y.sum().backward()
        return x.grad

    assert_same(prog)


# ------------------------------------------------------------------ 4. saving on the CPU
def test_step4_pack_to_cpu_and_back():
    def prog(T):
        def pack_hook(x):
            return (x.device, x.cpu())

        def unpack_hook(packed):
            device, tensor = packed
            return tensor.to(device)

        x = T.tensor(arr(5), requires_grad=True)
        with T.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
            y = x * x
        y.sum().backward()
        return x.grad.equal(2 * x), x.grad

    assert_same(prog)


def test_step4_save_on_cpu():
    def prog(T):
        x = T.tensor(arr(5), requires_grad=True)
        w = T.tensor(arr(5, seed=1), requires_grad=True)
        with T.autograd.graph.save_on_cpu(pin_memory=False):
            y = (x * w).sin().exp()
        y.sum().backward()
        return x.grad, w.grad

    assert_same(prog)


# ------------------------------------------------------------------ 5. saving to disk
class SelfDeletingTempFile:
    """A file name in a directory; the file is removed when the object goes away."""

    def __init__(self, directory):
        self.name = os.path.join(directory, str(uuid.uuid4()))

    def __del__(self):
        if os.path.exists(self.name):
            os.remove(self.name)


def _disk_hooks(T, directory, threshold=0, log=None):
    def pack_hook(tensor):
        if tensor.numel() < threshold:
            return tensor
        f = SelfDeletingTempFile(directory)
        T.save(tensor, f.name)
        if log is not None:
            log.append(tuple(tensor.shape))
        return f

    def unpack_hook(packed):
        if isinstance(packed, T.Tensor):
            return packed
        return T.load(packed.name, weights_only=True)

    return pack_hook, unpack_hook


def test_step5_save_to_disk(tmp_path):
    def prog(T):
        d = os.path.join(str(tmp_path), T.__name__)
        os.makedirs(d)
        x = T.tensor(arr(5), requires_grad=True)
        w = T.tensor(arr(5, seed=1), requires_grad=True)
        with T.autograd.graph.saved_tensors_hooks(*_disk_hooks(T, d)):
            y = (x * w).sin()
        on_disk = len(os.listdir(d))
        y.sum().backward()
        del y
        return on_disk, x.grad, w.grad, len(os.listdir(d))

    nt_res, th_res = run_both(prog)
    assert_close(nt_res, th_res)
    assert nt_res[0] == 3 and nt_res[-1] == 0  # x, w and x*w; removed once freed


def test_step5_only_big_tensors_go_to_disk(tmp_path):
    def prog(T):
        d = os.path.join(str(tmp_path), T.__name__)
        os.makedirs(d)
        log = []
        x = T.tensor(arr(10), requires_grad=True)
        small = T.tensor(arr(1, seed=2), requires_grad=True)
        with T.autograd.graph.saved_tensors_hooks(*_disk_hooks(T, d, threshold=5, log=log)):
            y = (x * small).exp()
        y.sum().backward()
        return log, x.grad, small.grad

    assert_same(prog)


def test_step5_hooks_as_a_subclass_of_saved_tensors_hooks(tmp_path):
    def prog(T):
        d = os.path.join(str(tmp_path), T.__name__)
        os.makedirs(d)

        class SaveToDisk(T.autograd.graph.saved_tensors_hooks):
            def __init__(self):
                super().__init__(*_disk_hooks(T, d))

        T.manual_seed(0)
        model = T.nn.Sequential(T.nn.Linear(4, 3), T.nn.Tanh(), T.nn.Linear(3, 2))
        with T.no_grad():
            for i, p in enumerate(model.parameters()):
                p.copy_(T.tensor(arr(*p.shape, seed=i)))
        x = T.tensor(arr(2, 4, seed=5).astype(np.float32))
        with SaveToDisk():
            loss = model(x).pow(2).sum()
        loss.backward()
        return loss, [p.grad for p in model.parameters()]

    assert_same(prog, rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------------ 6. selected modules only
def test_step6_offload_selected_modules_only():
    """Wrap the forward of chosen submodules in the hooks: only what they save is packed."""

    def prog(T):
        packed = []

        def pack(t):
            packed.append(tuple(t.shape))
            return (t.device, t.cpu())

        def unpack(p):
            return p[1].to(p[0])

        class Offloaded(T.nn.Module):
            def __init__(self, inner):
                super().__init__()
                self.inner = inner

            def forward(self, x):
                with T.autograd.graph.saved_tensors_hooks(pack, unpack):
                    return self.inner(x)

        T.manual_seed(0)
        model = T.nn.Sequential(
            T.nn.Linear(4, 3),
            Offloaded(T.nn.Sequential(T.nn.Tanh(), T.nn.Linear(3, 5))),
            T.nn.Sigmoid(),
        )
        with T.no_grad():
            for i, p in enumerate(model.parameters()):
                p.copy_(T.tensor(arr(*p.shape, seed=i)))
        x = T.tensor(arr(2, 4, seed=5).astype(np.float32), requires_grad=True)
        y = model(x)
        n = len(packed)
        (y * y).mean().backward()
        return n, x.grad, [p.grad for p in model.parameters()]

    assert_same(prog, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("hooked", [False, True])
def test_step6_gradients_unchanged_by_hooks(hooked):
    def prog(T):
        x = T.tensor(arr(3, 4), requires_grad=True)
        w = T.tensor(arr(4, 2, seed=1), requires_grad=True)
        ctx = (
            T.autograd.graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t)
            if hooked
            else contextlib.nullcontext()
        )
        with ctx:
            y = (x @ w).relu().exp()
        y.sum().backward()
        return x.grad, w.grad

    assert_same(prog)
