"""nn.utils._named_member_accessor against PyTorch: getting, setting, swapping and deleting
tensors and submodules by dotted name, all-or-nothing swaps, key checks, error texts."""

from __future__ import annotations

import importlib

import pytest
from twolibs import arr, assert_same, assert_same_error


def _accessor(lib):
    """A NamedMemberAccessor over a small fixed net, with the net."""
    mod = importlib.import_module(f"{lib.__name__}.nn.utils._named_member_accessor")
    net = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.Sequential(lib.nn.BatchNorm1d(3)))
    net.double()
    with lib.no_grad():
        for i, p in enumerate(net.parameters()):
            p.copy_(lib.tensor(arr(*p.shape, seed=i)))
    return mod, mod.NamedMemberAccessor(net), net


def _where(net) -> dict:
    """Which dict of which submodule holds each name (parameters, buffers, plain attrs)."""
    out = {}
    for name, sub in net.named_modules():
        out[name] = (sorted(sub._parameters), sorted(sub._buffers))
    return out


def test_get_set_swap_del():
    def prog(lib, w, b):
        mod, acc, net = _accessor(lib)
        got = [acc.get_tensor("0.weight").shape, acc.get_submodule("1.0") is net[1][0]]
        acc.set_tensor("0.weight", w)
        old = acc.swap_tensor("0.bias", b)
        acc.set_tensors(["1.0.running_mean", "1.0.weight"], [b * 2, b * 3])
        olds = acc.swap_tensors(("0.bias", "extra"), (b + 1, b - 1), allow_missing=True)
        gone = olds[1] is mod._MISSING
        acc.del_tensor("1.0.bias")
        acc.del_tensors(["extra"])
        state = [
            acc.get_tensor(n) for n in ("0.weight", "0.bias", "1.0.running_mean", "1.0.weight")
        ]
        return got, old.shape, gone, state, _where(net), type(net[0].weight).__name__

    assert_same(prog, arr(3, 2), arr(3, seed=1))


def test_swap_tensors_dict_all_or_nothing():
    def prog(lib, v):
        mod, acc, net = _accessor(lib)
        before = _where(net)
        try:
            acc.swap_tensors_dict({"0.weight": v, "0.nope": v})
        except RuntimeError as e:
            text = str(e)
        kept = acc.get_tensor("0.weight").shape
        old, missing = acc.swap_tensors_dict({"0.weight": v, "1.0.xs": v}, allow_missing=True)
        restored, _ = acc.swap_tensors_dict(old, allow_missing=True)
        return text, kept, before == _where(net), missing, acc.get_tensor("0.weight").shape

    assert_same(prog, arr(2, 2))


def test_check_keys_and_named():
    def prog(lib):
        _, acc, _ = _accessor(lib)
        return (
            acc.check_keys(["0.weight", "bogus", "1.0.running_var"]),
            [n for n, _ in acc.named_tensors()],
            [n for n, _ in acc.named_parameters()],
            [n for n, _ in acc.named_buffers()],
            [n for n, _ in acc.named_modules()],
        )

    assert_same(prog)


def test_swap_submodule():
    def prog(lib):
        _, acc, net = _accessor(lib)
        new = lib.nn.Identity()
        old = acc.swap_submodule("1.0", new)
        return type(old).__name__, net[1][0] is new

    assert_same(prog)


ERRORS = {
    "no submodule": lambda lib, m, acc: acc.get_submodule("0.nope"),
    "not a module": lambda lib, m, acc: acc.get_submodule("0.weight"),
    "no tensor": lambda lib, m, acc: acc.get_tensor("0.nope"),
    "del missing": lambda lib, m, acc: acc.del_tensor("0.nope"),
    "swap missing": lambda lib, m, acc: acc.swap_tensor("0.nope", lib.ones(1)),
    "set non-tensor": lambda lib, m, acc: acc.set_tensor("0.weight", 3),
    "swap non-tensor": lambda lib, m, acc: acc.swap_tensor("0.weight", "x"),
    "attr not tensor": lambda lib, m, acc: acc.swap_tensor("0.in_features", lib.ones(1)),
    "dotted": lambda lib, m, acc: m.set_tensor(acc.module, "a.b", None),
    "empty": lambda lib, m, acc: m.swap_tensor(acc.module, "", None),
    "swap_submodule missing": lambda lib, m, acc: acc.swap_submodule("5", lib.nn.Identity()),
    "swap_submodule dotted": lambda lib, m, acc: m.swap_submodule(acc.module, "a.b", acc.module),
    "lengths": lambda lib, m, acc: acc.swap_tensors(["0.weight"], []),
    "set lengths": lambda lib, m, acc: acc.set_tensors(iter(["0.weight"]), iter([1, 2])),
    "not module": lambda lib, m, acc: m.set_tensor(3, "w", None),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors(case):
    def prog(lib):
        mod, acc, _ = _accessor(lib)
        return ERRORS[case](lib, mod, acc)

    assert_same_error(prog)


def test_functional_call_through_stateless_warns():
    def prog(lib, x):
        _, acc, net = _accessor(lib)
        net.eval()
        params = {"0.weight": lib.ones(3, 2, dtype=lib.float64)}
        with pytest.warns(FutureWarning, match="torch.nn.utils.stateless.functional_call"):
            out = lib.nn.utils.stateless.functional_call(net, params, (x,))
        return out, acc.get_tensor("0.weight").shape

    assert_same(prog, arr(4, 2))
