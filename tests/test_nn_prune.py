"""nn.utils.prune against PyTorch: masks, pruned values, the names a pruned module holds
(``weight_orig``, ``weight_mask``, state-dict keys), iterative pruning through a
PruningContainer, importance scores, global pruning, ``remove``, and error texts. Random
methods are checked by invariants (how many entries or channels go, and only unpruned ones)."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
import torch
from twolibs import arr, as_numpy, assert_same, assert_same_error, run_both

import numtorch as nt

NAMES = [
    "BasePruningMethod",
    "PruningContainer",
    "Identity",
    "RandomUnstructured",
    "L1Unstructured",
    "RandomStructured",
    "LnStructured",
    "CustomFromMask",
    "identity",
    "random_unstructured",
    "l1_unstructured",
    "random_structured",
    "ln_structured",
    "global_unstructured",
    "custom_from_mask",
    "remove",
    "is_pruned",
]


def _prune(lib):
    return importlib.import_module(f"{lib.__name__}.nn.utils.prune")


def _linear(lib, seed=0, shape=(3, 4)):
    """A float64 Linear with fixed, distinct weights and bias."""
    m = lib.nn.Linear(shape[1], shape[0]).double()
    with lib.no_grad():
        m.weight.copy_(lib.tensor(arr(*shape, seed=seed)))
        m.bias.copy_(lib.tensor(arr(shape[0], seed=seed + 1)))
    return m


def _conv(lib):
    m = lib.nn.Conv2d(3, 4, 2).double()
    with lib.no_grad():
        m.weight.copy_(lib.tensor(arr(4, 3, 2, 2, seed=3)))
        m.bias.copy_(lib.tensor(arr(4, seed=4)))
    return m


def _layout(m) -> dict:
    """What a pruned module holds: its parameter, buffer and state-dict names, hooks' kinds."""
    return {
        "params": [n for n, _ in m.named_parameters()],
        "buffers": [n for n, _ in m.named_buffers()],
        "state": list(m.state_dict()),
        "hooks": [type(h).__name__ for h in m._forward_pre_hooks.values()],
        "plain": [k for k in ("weight", "bias") if k in m.__dict__],
    }


def _state(lib, m, x):
    """The pruned module's layout, masks, values, forward and weight_orig's gradient."""
    out = m(x)
    out.sum().backward()
    orig = getattr(m, "weight_orig", m.weight)
    return (
        _layout(m),
        {k: v.detach() for k, v in m.state_dict().items()},
        m.weight.detach(),
        out.detach(),
        orig.grad,
    )


def test_names():
    ours, theirs = _prune(nt), _prune(torch)
    for name in NAMES:
        assert hasattr(ours, name), name
        assert hasattr(theirs, name), name
    assert sorted(ours.__all__) == sorted(n for n in NAMES)


@pytest.mark.parametrize("amount", [0, 1, 5, 12, 0.0, 0.25, 0.5, 1.0])
def test_l1_unstructured(amount):
    def prog(lib, x):
        m = _linear(lib)
        assert _prune(lib).l1_unstructured(m, "weight", amount=amount) is m
        return _state(lib, m, x)

    assert_same(prog, arr(2, 4, seed=9))


@pytest.mark.parametrize(
    ("amount", "n", "dim"),
    [(1, 2, 0), (0.5, 1, 1), (2, float("inf"), -1), (0, 2, 0), (1, "fro", 0)],
)
def test_ln_structured(amount, n, dim):
    def prog(lib, x):
        m = _linear(lib)
        _prune(lib).ln_structured(m, "weight", amount=amount, n=n, dim=dim)
        return _state(lib, m, x)

    assert_same(prog, arr(2, 4, seed=9))


def test_ln_structured_conv_channels():
    def prog(lib, x):
        m = _conv(lib)
        _prune(lib).ln_structured(m, "weight", amount=0.5, n=1, dim=0)
        return m.weight_mask, m(x).detach()

    assert_same(prog, arr(1, 3, 4, 4, seed=2))


def test_importance_scores():
    def prog(lib, x):
        m = _linear(lib)
        scores = lib.tensor(arr(3, 4, seed=5))
        _prune(lib).l1_unstructured(m, "weight", amount=4, importance_scores=scores)
        return _state(lib, m, x)

    assert_same(prog, arr(2, 4, seed=9))


def test_custom_from_mask_and_identity():
    mask = np.array([[1, 0, 1, 0], [0, 0, 1, 1], [1, 1, 1, 0]], dtype=np.float64)

    def prog(lib, x, mask):
        m = _linear(lib)
        _prune(lib).identity(m, "bias")
        _prune(lib).custom_from_mask(m, "weight", mask=mask)
        return _state(lib, m, x), m.bias_mask

    assert_same(prog, arr(2, 4, seed=9), mask)


def test_iterative_pruning_container():
    def prog(lib, x):
        p = _prune(lib)
        m = _linear(lib, shape=(4, 5))
        p.l1_unstructured(m, "weight", amount=3)
        first = m.weight_mask.clone()
        p.ln_structured(m, "weight", amount=1, n=2, dim=0)
        second = m.weight_mask.clone()
        p.l1_unstructured(m, "weight", amount=0.25)
        hook = next(iter(m._forward_pre_hooks.values()))
        kinds = [type(h).__name__ for h in hook]
        return first, second, _state(lib, m, x), kinds, len(hook), hook._tensor_name

    assert_same(prog, arr(2, 5, seed=9))


def test_global_unstructured():
    def prog(lib, x):
        p = _prune(lib)
        a, b = _linear(lib, seed=0), _linear(lib, seed=7)
        p.l1_unstructured(b, "weight", amount=2)
        params = ((a, "weight"), (b, "weight"), (a, "bias"))
        scores = {(a, "bias"): lib.tensor(arr(3, seed=11))}
        p.global_unstructured(
            params, pruning_method=p.L1Unstructured, importance_scores=scores, amount=7
        )
        return _state(lib, a, x), _state(lib, b, x), a.bias_mask

    assert_same(prog, arr(2, 4, seed=9))


def test_remove_makes_pruning_permanent():
    def prog(lib, x):
        p = _prune(lib)
        m = _linear(lib)
        p.l1_unstructured(m, "weight", amount=5)
        p.l1_unstructured(m, "bias", amount=1)
        p.ln_structured(m, "weight", amount=1, n=1, dim=1)
        pruned = p.is_pruned(m)
        p.remove(m, "weight")
        mid = (_layout(m), type(m.weight).__name__, m.weight.requires_grad, p.is_pruned(m))
        p.remove(m, "bias")
        return pruned, mid, _state(lib, m, x), p.is_pruned(m)

    assert_same(prog, arr(2, 4, seed=9))


def test_is_pruned_sees_submodules():
    def prog(lib):
        p = _prune(lib)
        net = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.Sequential(lib.nn.Linear(2, 2)))
        before = p.is_pruned(net)
        p.random_unstructured(net[1][0], "weight", amount=1)
        return before, p.is_pruned(net)

    ours, theirs = run_both(prog)
    assert ours == theirs == (False, True)


def test_hook_recomputes_from_orig():
    def prog(lib, x):
        m = _linear(lib)
        _prune(lib).l1_unstructured(m, "weight", amount=6)
        with lib.no_grad():
            m.weight_orig.mul_(2.0)
        return m(x).detach(), m.weight.detach()

    assert_same(prog, arr(2, 4, seed=9))


def test_method_prune_and_compute_mask():
    def prog(lib, t, scores):
        p = _prune(lib)
        l1 = p.L1Unstructured(amount=0.5)
        ln = p.LnStructured(amount=1, n=2, dim=0)
        return (
            l1.prune(t),
            l1.prune(t, importance_scores=scores),
            ln.prune(t, default_mask=lib.ones_like(t) * (scores > 0)),
            p.CustomFromMask(scores > 0).compute_mask(t, lib.ones_like(t)),
            p.Identity().compute_mask(t, lib.ones_like(t)),
        )

    assert_same(prog, arr(3, 4, seed=1), arr(3, 4, seed=2))


def test_random_unstructured_counts():
    nt.manual_seed(0)
    p = _prune(nt)
    m = _linear(nt, shape=(6, 10))
    p.random_unstructured(m, "weight", amount=0.3)
    mask = as_numpy(m.weight_mask)
    assert mask.sum() == 42
    p.random_unstructured(m, "weight", amount=12)  # prunes among the entries still kept
    mask2 = as_numpy(m.weight_mask)
    assert mask2.sum() == 30
    assert not (mask2 > mask).any()
    np.testing.assert_array_equal(as_numpy(m.weight.detach()), as_numpy(m.weight_orig) * mask2)
    nt.manual_seed(0)
    again = _linear(nt, shape=(6, 10))
    p.random_unstructured(again, "weight", amount=0.3)
    np.testing.assert_array_equal(as_numpy(again.weight_mask), mask)


def test_random_unstructured_is_uniform():
    nt.manual_seed(1)
    hits = np.zeros(8)
    for _ in range(400):
        hits += 1 - as_numpy(
            _prune(nt).RandomUnstructured(amount=2).compute_mask(nt.ones(8), nt.ones(8))
        )
    assert hits.sum() == 800
    assert hits.min() > 60 and hits.max() < 140  # expected 100 each


@pytest.mark.parametrize(("amount", "dim", "gone"), [(2, 0, 2), (0.5, 1, 2), (1, -1, 1)])
def test_random_structured_channels(amount, dim, gone):
    nt.manual_seed(0)
    m = _linear(nt, shape=(5, 4))
    _prune(nt).random_structured(m, "weight", amount=amount, dim=dim)
    mask = as_numpy(m.weight_mask)
    per_channel = mask.sum(axis=1 - (dim % 2))
    full = mask.shape[1 - (dim % 2)]
    assert set(per_channel.tolist()) <= {0.0, float(full)}
    assert (per_channel == 0).sum() == gone


def test_random_structured_then_structured_keeps_pruned_channels():
    nt.manual_seed(3)
    p = _prune(nt)
    m = _linear(nt, shape=(6, 3))
    p.random_structured(m, "weight", amount=2, dim=0)
    first = as_numpy(m.weight_mask).sum(axis=1) == 0
    p.random_structured(m, "weight", amount=1, dim=0)
    second = as_numpy(m.weight_mask).sum(axis=1) == 0
    assert first.sum() == 2 and second.sum() == 3 and (second >= first).all()


def _raise_amount(amount):
    def prog(lib):
        return _prune(lib).l1_unstructured(_linear(lib), "weight", amount=amount)

    return prog


@pytest.mark.parametrize("amount", [-1, 1.5, -0.1, "half", None, 13])
def test_amount_errors(amount):
    assert_same_error(_raise_amount(amount))


def _ok_then_raise(body):
    def prog(lib):
        return body(lib, _prune(lib), _linear(lib))

    return prog


ERRORS = {
    "structured on 1-d": lambda lib, p, m: p.ln_structured(m, "bias", amount=1, n=2, dim=0),
    "random structured on 1-d": lambda lib, p, m: p.random_structured(m, "bias", 1, dim=0),
    "bad dim": lambda lib, p, m: p.ln_structured(m, "weight", amount=1, n=2, dim=2),
    "too many channels": lambda lib, p, m: p.ln_structured(m, "weight", amount=4, n=2, dim=0),
    "remove unpruned": lambda lib, p, m: p.remove(m, "weight"),
    "scores shape": lambda lib, p, m: p.l1_unstructured(
        m, "weight", amount=1, importance_scores=lib.ones(4, 3)
    ),
    "prune scores shape": lambda lib, p, m: p.L1Unstructured(1).prune(
        lib.ones(2, 2), importance_scores=lib.ones(3)
    ),
    "custom mask shape": lambda lib, p, m: p.custom_from_mask(m, "weight", mask=lib.ones(4, 3)),
    "global structured": lambda lib, p, m: p.global_unstructured(
        [(m, "weight")], type("Channels", (p.RandomStructured,), {}), amount=1
    ),
    "global not iterable": lambda lib, p, m: p.global_unstructured(3, p.L1Unstructured, amount=1),
    "global scores type": lambda lib, p, m: p.global_unstructured(
        [(m, "weight")], p.L1Unstructured, importance_scores=[1], amount=1
    ),
    "container non-method": lambda lib, p, m: p.PruningContainer(p.Identity()).add_pruning_method(
        3
    ),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors(case):
    assert_same_error(_ok_then_raise(ERRORS[case]))


def test_container_name_mismatch():
    def prog(lib):
        p = _prune(lib)
        a, b = p.Identity(), p.Identity()
        a._tensor_name, b._tensor_name = "weight", "bias"
        container = p.PruningContainer(a)
        container.add_pruning_method(b)

    with pytest.raises(ValueError) as ours:
        prog(nt)
    with pytest.raises(ValueError) as theirs:
        prog(torch)
    # the text names the container by its repr, which holds its address: compare around it
    head = "Can only add pruning methods acting on the parameter named 'weight' to PruningContainer"
    for e in (ours, theirs):
        assert str(e.value).startswith(head) and str(e.value).endswith(". Found 'bias'")


def test_failed_apply_restores_parameter():
    def prog(lib):
        m = _linear(lib)
        try:
            _prune(lib).l1_unstructured(m, "weight", amount=20)
        except ValueError:
            pass
        return _layout(m)

    assert_same(prog)
