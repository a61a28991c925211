"""nn.Module, Parameter and the containers against torch: what a module holds, how it
prints, its state dict, its hooks, its conversions, and their errors."""

from __future__ import annotations

import copy
import functools
import warnings
from collections import OrderedDict

import numpy as np
import pytest
import torch
from twolibs import assert_close, assert_same, assert_same_error, error_of, run_both

import numtorch as nt


@functools.cache
def classes(lib):
    """Small models written once against ``lib.nn`` (float64 throughout)."""
    nn = lib.nn

    class Affine(nn.Module):
        def __init__(self, n=3, m=2):
            super().__init__()
            g = np.random.default_rng(n * 10 + m)
            self.weight = nn.Parameter(lib.tensor(g.standard_normal((n, m))))
            self.bias = nn.Parameter(lib.tensor(g.standard_normal(m)))
            self.register_buffer("scale", lib.tensor(1.5, dtype=lib.float64))
            self.register_buffer("cache", lib.zeros(2, dtype=lib.float64), persistent=False)

        def forward(self, x, shift=0.0):
            return (x @ self.weight + self.bias) * self.scale + shift

        def extra_repr(self):
            return f"n={self.weight.shape[0]}, m={self.weight.shape[1]}"

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.first = Affine(3, 4)
            self.body = nn.Sequential(Affine(4, 4), Affine(4, 4))
            self.heads = nn.ModuleDict({"a": Affine(4, 2), "b": Affine(4, 1)})
            self.extra = nn.ParameterList([nn.Parameter(lib.ones(2, dtype=lib.float64))])
            self.tied = self.first  # the same module under two names
            self.gate = None

        def forward(self, x):
            h = self.body(self.first(x).tanh())
            return self.heads["a"](h).sum(-1) + self.heads["b"](h)[..., 0] * self.extra[0][0]

    return Affine, Net


def x_in(lib, requires_grad=True):
    x = lib.tensor(np.random.default_rng(7).standard_normal((5, 3)))
    return x.requires_grad_(requires_grad)


# ------------------------------------------------------------------ what a module holds
def test_walks_and_names():
    def prog(lib):
        _, Net = classes(lib)
        net = Net()
        return (
            [n for n, _ in net.named_parameters()],
            [n for n, _ in net.named_parameters(prefix="m", remove_duplicate=False)],
            [n for n, _ in net.named_parameters(recurse=False)],
            [n for n, _ in net.named_buffers()],
            [n for n, _ in net.named_children()],
            [n for n, _ in net.named_modules()],
            [n for n, _ in net.named_modules(prefix="root", remove_duplicate=False)],
            [type(m).__name__ for m in net.modules()],
            list(net.state_dict()),
            list(net.state_dict(prefix="p.", keep_vars=True)),
            list(net.state_dict()._metadata),
            sum(p.numel() for p in net.parameters()),
        )

    ours, theirs = run_both(prog)
    assert ours == theirs


def test_state_dict_values_and_keep_vars():
    def prog(lib):
        Affine, _ = classes(lib)
        m = Affine()
        sd, kv = m.state_dict(), m.state_dict(keep_vars=True)
        return (
            [sd[k] for k in sd],
            [v.requires_grad for v in sd.values()],
            [v.requires_grad for v in kv.values()],
        )

    assert_same(prog)


def test_lookup_and_set_submodule():
    def prog(lib):
        Affine, Net = classes(lib)
        net = Net()
        new = Affine(4, 4)
        net.set_submodule("body.1", new)
        return (
            net.get_submodule("body.0").weight.shape,
            net.get_parameter("heads.a.bias"),
            net.get_buffer("first.scale"),
            net.get_submodule("body.1") is new,
            net.get_submodule("") is net,
        )

    assert_same(prog)


@pytest.mark.parametrize(
    "call",
    [
        lambda net: net.get_submodule("body.7"),
        lambda net: net.get_submodule("first.weight"),
        lambda net: net.get_parameter("first.nothing"),
        lambda net: net.get_parameter("first.scale"),
        lambda net: net.get_buffer("first.weight"),
        lambda net: net.get_buffer("nope.scale"),
    ],
)
def test_lookup_errors(call):
    assert_same_error(lambda lib: call(classes(lib)[1]()))


def test_attribute_routing():
    def prog(lib):
        nn = lib.nn
        m = nn.Module()
        m.a = nn.Parameter(lib.zeros(2, dtype=lib.float64))
        m.b = lib.ones(2, dtype=lib.float64)  # a plain attribute
        m.register_buffer("c", lib.ones(1, dtype=lib.float64))
        m.c = lib.full((1,), 3.0, dtype=lib.float64)  # stays a buffer
        m.d = nn.Module()
        m.a = None  # a parameter slot may hold None
        m.buf = nn.Buffer(lib.ones(3, dtype=lib.float64), persistent=False)
        out = (
            list(m._parameters),
            list(m._buffers),
            list(m._modules),
            "b" in m.__dict__,
            list(m.state_dict()),
            m.c,
        )
        del m.d
        del m.c
        return out, list(m._modules), list(m._buffers), hasattr(m, "c")

    ours, theirs = run_both(prog)
    assert_close(ours, theirs)


@pytest.mark.parametrize(
    "bad",
    [
        lambda lib, m: setattr(m, "w", lib.zeros(2)),
        lambda lib, m: setattr(m, "sub", 3),
        lambda lib, m: setattr(m, "buf", [1.0]),
        lambda lib, m: m.register_parameter("x", lib.zeros(2)),
        lambda lib, m: m.register_parameter("x.y", None),
        lambda lib, m: m.register_parameter("", None),
        lambda lib, m: m.register_parameter(3, None),
        lambda lib, m: m.register_parameter("training", None),
        lambda lib, m: m.register_buffer("w", lib.zeros(2)),
        lambda lib, m: m.register_buffer("b.c", lib.zeros(2)),
        lambda lib, m: m.register_buffer("q", 1.0),
        lambda lib, m: m.add_module("k", 3),
        lambda lib, m: m.add_module("w", lib.nn.Module()),
        lambda lib, m: m.add_module("a.b", lib.nn.Module()),
        lambda lib, m: m.add_module("", lib.nn.Module()),
        lambda lib, m: m.add_module(1, lib.nn.Module()),
        lambda lib, m: m.nothing,
        lambda lib, m: m.train("yes"),
        lambda lib, m: m(lib.zeros(1)),
        lambda lib, m: m.to(lib.int64),
    ],
)
def test_registration_errors(bad):
    def prog(lib):
        m = lib.nn.Module()
        m.w = lib.nn.Parameter(lib.zeros(2))
        m.sub = lib.nn.Module()
        m.register_buffer("buf", lib.zeros(1))
        bad(lib, m)

    assert_same_error(prog)


def test_assignment_before_init_errors():
    for attr, value in [("p", "param"), ("m", "module")]:

        def prog(lib, attr=attr, value=value):
            class Early(lib.nn.Module):
                def __init__(self):
                    v = lib.nn.Parameter(lib.zeros(1)) if value == "param" else lib.nn.Module()
                    setattr(self, attr, v)

            Early()

        assert_same_error(prog)


# ------------------------------------------------------------------ printing
def test_repr():
    def prog(lib):
        Affine, Net = classes(lib)
        nn = lib.nn
        plist = nn.ParameterList([nn.Parameter(lib.ones(2, 3)), lib.zeros(4), "x"])
        pdict = nn.ParameterDict({"b": lib.ones(1), "a": nn.Parameter(lib.zeros(2, 2))})
        mlist = nn.ModuleList([Affine(), Affine(), Affine(2, 2), nn.Module(), nn.Module()])
        return [
            repr(Net()),
            repr(plist),
            repr(pdict),
            repr(mlist),
            repr(nn.ModuleList()),
            repr(nn.Sequential()),
            repr(nn.Parameter(lib.ones(2))),
            repr(nn.Parameter(lib.ones(2), requires_grad=False)),
        ]

    ours, theirs = run_both(prog)
    assert ours == theirs


# ------------------------------------------------------------------ loading state
def test_load_state_dict_round_trip_and_assign():
    def prog(lib):
        Affine, Net = classes(lib)
        a, b = Net(), Net()
        for p in a.parameters():
            p.data.mul_(-2.0)
        w = b.first.weight
        res = b.load_state_dict(a.state_dict())
        same_object = b.first.weight is w
        c = Affine()
        sd = {k: v.clone() + 1 for k, v in Affine(3, 2).state_dict().items()}
        c.load_state_dict(sd, assign=True)
        return (
            repr(res),
            list(res),
            same_object,
            [p for p in b.parameters()],
            type(c.weight).__name__,
            c.weight.requires_grad,
            c.weight,
            c.scale,
        )

    assert_same(prog)


@pytest.mark.parametrize(
    "edit",
    [
        lambda lib, sd: sd.pop("first.bias"),
        lambda lib, sd: sd.update({"first.nope": lib.zeros(1), "zzz.a": lib.zeros(1)}),
        lambda lib, sd: sd.update({"first.bias": lib.zeros(7, dtype=lib.float64)}),
        lambda lib, sd: sd.update({"first.bias": 3.0}),
        lambda lib, sd: (sd.pop("heads.a.weight"), sd.update({"extra.5": lib.zeros(1)})),
    ],
)
def test_load_state_dict_errors_and_non_strict(edit):
    def strict(lib):
        net = classes(lib)[1]()
        sd = dict(net.state_dict())
        edit(lib, sd)
        net.load_state_dict(sd)

    assert_same_error(strict)

    def loose(lib):
        net = classes(lib)[1]()
        sd = dict(net.state_dict())
        edit(lib, sd)
        try:
            res = net.load_state_dict(sd, strict=False)
        except RuntimeError as e:
            return "raised", str(e)
        return repr(res), res.missing_keys, res.unexpected_keys

    ours, theirs = run_both(loose)
    assert ours == theirs


def test_load_state_dict_type_error():
    assert_same_error(lambda lib: lib.nn.Module().load_state_dict([1, 2]))


def test_state_dict_hooks():
    def prog(lib):
        Affine, _ = classes(lib)
        m = Affine()
        log = []
        m.register_state_dict_pre_hook(lambda mod, prefix, keep: log.append(("pre", prefix)))

        def post(mod, sd, prefix, meta):
            log.append(("post", prefix, sorted(sd), meta))
            sd[prefix + "added"] = lib.ones(1)

        h = m.register_state_dict_post_hook(post)
        keys = list(m.state_dict(prefix="x."))
        h.remove()
        keys2 = list(m.state_dict())
        m.register_load_state_dict_pre_hook(
            lambda mod, sd, prefix, meta, strict, missing, unexpected, errors: log.append(
                ("load-pre", prefix, sorted(sd), strict)
            )
        )
        m.register_load_state_dict_post_hook(
            lambda mod, keys: log.append(("load-post", list(keys.missing_keys)))
        )
        m.load_state_dict(m.state_dict())
        return log, keys, keys2

    ours, theirs = run_both(prog)
    assert ours == theirs


# ------------------------------------------------------------------ modes, grads, dtypes
def test_train_eval_requires_grad_zero_grad():
    def prog(lib):
        _, Net = classes(lib)
        net = Net()
        modes = [net.eval() is net, [m.training for m in net.modules()]]
        net.train()
        modes.append([m.training for m in net.modules()])
        net(x_in(lib)).sum().backward()
        grads = [p.grad.clone() for p in net.parameters()]
        net.zero_grad(set_to_none=False)
        zeroed = [p.grad for p in net.parameters()]
        net.zero_grad()
        nones = [p.grad is None for p in net.parameters()]
        net.requires_grad_(False)
        flags = [p.requires_grad for p in net.parameters()]
        return modes, grads, zeroed, nones, flags

    assert_same(prog)


def test_to_float_double_apply():
    def prog(lib):
        Affine, Net = classes(lib)
        net = Net()
        w = net.first.weight
        net.register_buffer("steps", lib.tensor(3))
        net.float()
        out = [w is net.first.weight, net.first.weight.dtype, net.steps.dtype]
        net.to(lib.float64)
        out += [net.first.weight.dtype, net.first.scale.dtype, net.steps.dtype]
        net.to("cpu", dtype=lib.float32)
        out += [net.first.weight.dtype, type(net.first.weight).__name__]
        net.half().double()
        seen = []
        net.apply(lambda m: seen.append(type(m).__name__))
        return out, seen, net.first.weight.dtype

    ours, theirs = run_both(prog)
    assert str(ours) == str(theirs)


def test_deepcopy():
    def prog(lib):
        _, Net = classes(lib)
        a = Net()
        b = copy.deepcopy(a)
        b.first.weight.data.add_(1.0)
        return (
            type(b.first.weight).__name__,
            b.tied is b.first,
            a.first.weight,
            b.first.weight,
            b.first.weight.requires_grad,
        )

    assert_same(prog)


# ------------------------------------------------------------------ hooks
def test_forward_hooks_order_kwargs_and_removal():
    def prog(lib):
        Affine, _ = classes(lib)
        m = Affine()
        log = []

        def pre(mod, args):
            log.append("pre")
            return (args[0] * 2,)

        def pre_kw(mod, args, kwargs):
            log.append(("pre_kw", sorted(kwargs)))
            return args, {**kwargs, "shift": 1.0}

        def fwd(mod, args, out):
            log.append("fwd")
            return out + 1

        def fwd_kw(mod, args, kwargs, out):
            log.append(("fwd_kw", kwargs["shift"]))

        h1 = m.register_forward_pre_hook(pre)
        m.register_forward_pre_hook(pre_kw, with_kwargs=True)
        m.register_forward_pre_hook(lambda mod, args: log.append("first"), prepend=True)
        m.register_forward_hook(fwd)
        h4 = m.register_forward_hook(fwd_kw, with_kwargs=True, prepend=True)
        y1 = m(x_in(lib, False), shift=0.5)
        h1.remove()
        h4.remove()
        y2 = m(x_in(lib, False))
        return log, y1, y2

    assert_same(prog)


def test_forward_hook_always_call():
    def prog(lib):
        class Bad(lib.nn.Module):
            def forward(self, x):
                raise ValueError("boom")

        m, log = Bad(), []
        m.register_forward_hook(lambda mod, a, out: log.append(("always", out)), always_call=True)
        m.register_forward_hook(lambda mod, a, out: log.append("never"))
        try:
            m(lib.zeros(1))
        except ValueError as e:
            log.append(str(e))
        return log

    ours, theirs = run_both(prog)
    assert ours == theirs


def test_global_module_hooks_run_before_the_modules_own():
    """register_module_* hooks: every module's call runs them, before its own hooks (forward
    pre-hooks, forward hooks with kwargs, full backward pre-hooks and hooks); removed,
    they are gone and the call takes its short path again."""

    def prog(lib):
        M = lib.nn.modules.module
        Affine, _ = classes(lib)
        m, log = Affine(3, 2), []
        m.register_forward_pre_hook(lambda mod, a: log.append("own pre"))
        m.register_forward_hook(lambda mod, a, out: log.append("own fwd"))
        m.register_full_backward_pre_hook(lambda mod, go: log.append("own bpre"))
        m.register_full_backward_hook(lambda mod, gi, go: log.append("own bwd"))
        handles = [
            M.register_module_forward_pre_hook(lambda mod, a: (a[0] * 2,)),
            M.register_module_forward_hook(
                lambda mod, a, k, out: log.append(("fwd", sorted(k))) or out + 1,
                with_kwargs=True,
            ),
            M.register_module_full_backward_pre_hook(lambda mod, go: (go[0] * 3,)),
            M.register_module_full_backward_hook(lambda mod, gi, go: log.append(("bwd", gi))),
        ]
        try:
            x = x_in(lib)
            y = m(x)
            y.pow(2).sum().backward()
            bare = lib.nn.ReLU()(x.detach() - 1)
        finally:
            for h in handles:
                h.remove()
        after = m(x.detach())
        return log, y, x.grad, m.weight.grad, bare, after

    assert_same(prog)


def test_always_called_hooks_run_once_where_any_step_raises():
    """An error in a forward hook (after forward returned) still runs the always-called
    hooks that have not run, with the result so far; one that raises then is a warning."""

    def prog(lib):
        M = lib.nn.modules.module
        m, log = classes(lib)[0](), []

        def boom(mod, a, out):
            raise ValueError("hook failed")

        def bad_always(mod, a, out):
            raise KeyError("always failed")

        m.register_forward_hook(
            lambda mod, a, out: log.append(("first", out is None)), always_call=True
        )
        m.register_forward_hook(boom)
        m.register_forward_hook(
            lambda mod, a, out: log.append(("late", out is None)), always_call=True
        )
        m.register_forward_hook(bad_always, always_call=True)
        h = M.register_module_forward_hook(
            lambda mod, a, out: log.append(("global", out is None)), always_call=True
        )
        try:
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                try:
                    m(x_in(lib, False))
                except ValueError as e:
                    log.append(str(e))
        finally:
            h.remove()
        return log, [str(x.message) for x in w]

    ours, theirs = run_both(prog)
    assert ours == theirs


def test_backward_hooks_are_those_of_the_call():
    """A full backward hook removed after the forward call still runs (the call's hooks)."""

    def prog(lib):
        m, log = classes(lib)[0](), []
        h = m.register_full_backward_hook(lambda mod, gi, go: log.append("bwd"))
        y = m(x_in(lib))
        h.remove()
        y.sum().backward()
        m.register_full_backward_hook(lambda mod, gi, go: log.append("late"))
        y2 = classes(lib)[0]()(x_in(lib))
        y2.sum().backward()
        return log

    ours, theirs = run_both(prog)
    assert ours == theirs


def test_forward_pre_hook_bad_return():
    def prog(lib):
        m = classes(lib)[0]()
        m.register_forward_pre_hook(lambda mod, a, k: 3, with_kwargs=True)
        m(x_in(lib, False))

    assert_same_error(prog)


def test_full_backward_hooks():
    def prog(lib):
        Affine, _ = classes(lib)
        m = Affine(3, 2)
        log = []

        def pre(mod, grad_output):
            log.append(("pre", grad_output))
            return (grad_output[0] * 3,)

        def hook(mod, grad_input, grad_output):
            log.append(("hook", grad_input, grad_output))
            return (grad_input[0] + 1,)

        m.register_full_backward_pre_hook(pre)
        m.register_full_backward_hook(hook)
        x = x_in(lib)
        m(x).pow(2).sum().backward()
        return log, x.grad, m.weight.grad

    assert_same(prog)


def test_full_backward_hooks_several_inputs_and_outputs():
    def prog(lib):
        class Two(lib.nn.Module):
            def forward(self, a, b, k):
                return a * b * k, (a - b).exp(), k

        m, log = Two(), []
        m.register_full_backward_hook(lambda mod, gi, go: log.append((gi, go)))
        a, b = x_in(lib), x_in(lib).detach() * 2
        out = m(a, b, 3.0)
        (out[0].sum() + out[1].pow(2).sum()).backward()
        return log, a.grad

    assert_same(prog)


def test_full_backward_hook_without_input_grads():
    def prog(lib):
        m, log = classes(lib)[0](), []
        m.register_full_backward_hook(lambda mod, gi, go: log.append((gi, go)))
        m(x_in(lib, False)).sum().backward()
        return log, m.bias.grad

    assert_same(prog)

    def bad(lib):
        m = classes(lib)[0]()
        m.register_full_backward_hook(lambda mod, gi, go: (lib.zeros(5, 3),))
        m(x_in(lib, False)).sum().backward()

    assert_same_error(bad)


@pytest.mark.parametrize("pre", [False, True])
def test_backward_hook_wrong_count(pre):
    def prog(lib):
        m = classes(lib)[0]()
        if pre:
            m.register_full_backward_pre_hook(lambda mod, go: (go[0], go[0]))
        else:
            m.register_full_backward_hook(lambda mod, gi, go: (gi[0], gi[0]))
        m(x_in(lib)).sum().backward()

    assert_same_error(prog)


# ------------------------------------------------------------------ containers
def test_sequential_operations():
    def prog(lib):
        Affine, _ = classes(lib)
        nn = lib.nn
        a, b, c = Affine(3, 3), Affine(3, 3), Affine(3, 3)
        s = nn.Sequential(a, b)
        out = [len(s), s[-1] is b, type(s[0:1]).__name__, len(s[::-1])]
        s.append(c)
        s.insert(0, nn.Identity() if hasattr(nn, "Identity") else Affine(3, 3))
        del s[0]
        out += [list(s._modules), s[2] is c]
        s2 = s + nn.Sequential(a)
        out += [len(s2), list(s2._modules), len(s * 2), s.pop(1) is b, list(s._modules)]
        named = nn.Sequential(OrderedDict([("p", a), ("q", b)]))
        out += [list(named._modules), named.q is b, repr(named[1:])]
        s.extend([b])
        out.append(s(x_in(lib, False)))
        return out

    assert_same(prog)


def test_module_list_and_dict():
    def prog(lib):
        Affine, _ = classes(lib)
        nn = lib.nn
        ms = [Affine(2, 2) for _ in range(4)]
        ml = nn.ModuleList(ms[:2])
        ml += ms[2:3]
        ml.insert(1, ms[3])
        out = [list(ml._modules), [ms.index(m) for m in ml], len(ml[1:])]
        del ml[0]
        ml[0] = ms[0]
        out += [[ms.index(m) for m in ml], len(ml + ml), ml.pop(0) is ms[0]]
        md = nn.ModuleDict({"z": ms[0], "a": ms[1]})
        md.update([("m", ms[2])])
        md["b"] = ms[3]
        out += [list(md), list(md.keys()), "a" in md, md.pop("z") is ms[0], len(md)]
        return out

    ours, theirs = run_both(prog)
    assert ours == theirs


@pytest.mark.parametrize(
    "bad",
    [
        lambda nn: nn.ModuleList().extend(3),
        lambda nn: nn.ModuleList([nn.Module()])[3],
        lambda nn: nn.ModuleDict().update(3),
        lambda nn: nn.ModuleDict().update([("a",)]),
        lambda nn: nn.ModuleDict().update([3]),
        lambda nn: nn.Sequential(nn.Module())[1],
        lambda nn: nn.ParameterList()(1),
        lambda nn: nn.ParameterDict()(1),
        lambda nn: nn.ParameterDict()[1],
        lambda nn: nn.ParameterList().extend(1),
        lambda nn: nn.ParameterDict().update(3),
        lambda nn: nn.ParameterDict().update([("a", 1, 2)]),
    ],
)
def test_container_errors(bad):
    assert_same_error(lambda lib: bad(lib.nn))


@pytest.mark.parametrize(
    "bad", [lambda nn: nn.Sequential() + nn.ModuleList(), lambda nn: nn.Sequential() * 0]
)
def test_container_errors_naming_classes(bad):
    """The texts name a class, whose module path differs by the package name."""
    got, want = (error_of(lambda lib: bad(lib.nn), lib) for lib in (nt, torch))
    assert got.type is want.type and got.text.replace("numtorch.", "torch.") == want.text


def test_parameter_list_and_dict():
    def prog(lib):
        nn = lib.nn
        pl = nn.ParameterList([lib.ones(2, dtype=lib.float64)])
        pl.append(nn.Parameter(lib.zeros(3, dtype=lib.float64), requires_grad=False))
        pl.extend([lib.full((1,), 2.0, dtype=lib.float64)])
        pl[0] = lib.full((2,), 5.0, dtype=lib.float64)
        out = [
            len(pl),
            [type(p).__name__ for p in pl],
            [p.requires_grad for p in pl],
            list(pl),
            [n for n, _ in pl.named_parameters()],
            len(pl[1:]),
        ]
        pd = nn.ParameterDict({"b": lib.ones(1, dtype=lib.float64), "a": lib.zeros(1)})
        pd.update(OrderedDict([("d", lib.ones(2)), ("c", lib.ones(2))]))
        pd["e"] = lib.ones(3)
        out += [list(pd), list(pd.keys()), [n for n, _ in pd.named_parameters()], "a" in pd]
        out += [pd.pop("a").shape, pd.get("zz", 7), list(pd.setdefault("f", lib.zeros(1)))]
        out += [pd.popitem()[0], list(pd.copy()), list(pd | nn.ParameterDict({"g": lib.ones(1)}))]
        out += [list(reversed(pd)), list(pd.fromkeys(["x", "y"]))]
        pd.clear()
        out.append(len(pd))
        return out

    assert_same(prog)


# ------------------------------------------------------------------ Parameter
def test_parameter_basics():
    def prog(lib):
        nn = lib.nn
        base = lib.ones(3, dtype=lib.float64)
        p = nn.Parameter(base)
        p.data.mul_(2.0)
        q = nn.Parameter()
        y = p * 3
        return (
            isinstance(p, lib.Tensor),
            p.requires_grad,
            p.is_leaf,
            type(y).__name__,
            base,
            q.shape,
            str(q.dtype),
            p.grad_fn is None,
            type(copy.deepcopy(p)).__name__,
        )

    assert_same(prog)


def test_uninitialized_parameter():
    def prog(lib):
        u = lib.nn.UninitializedParameter()
        out = [repr(u), u.requires_grad]
        u.materialize((2, 3))
        return out + [type(u).__name__, tuple(u.shape), str(u.dtype), u.requires_grad]

    ours, theirs = run_both(prog)
    assert ours[:2] == theirs[:2] and ours[2:] == theirs[2:]
    assert_same_error(lambda lib: lib.nn.UninitializedParameter().shape)


# ------------------------------------------------------------------ functional_call
def test_functional_call_matches_torch_func(dev):
    def prog(lib):
        where = dev if lib is nt else "cpu"  # ours on each device, torch's on the CPU
        _, Net = classes(lib)
        net = Net().to(where)
        params = {k: v.detach() * 0.5 for k, v in net.named_parameters()}
        buffers = {k: v + 1 for k, v in net.named_buffers()}
        x = x_in(lib, False).to(where)
        out = lib.func.functional_call(net, (params, buffers), (x,))
        grads = lib.func.grad(lambda p: lib.func.functional_call(net, (p, buffers), x).sum())(
            params
        )
        devices = {t.device.type for t in (out, *grads.values())}
        return out, grads, [p.requires_grad for p in net.parameters()], devices == {where}

    assert_same(prog)


def test_functional_call_tied_weights_and_strict():
    def prog(lib, tie):
        _, Net = classes(lib)
        net = Net()
        w = {"first.weight": lib.zeros(3, 4, dtype=lib.float64)}
        return lib.func.functional_call(net, w, x_in(lib, False), tie_weights=tie)

    for tie in (True, False):
        assert_same(prog, tie)
    # torch 2.13 restores tied entries in the order it swapped them in, so the second name
    # of a tie keeps the swapped-in value after the call; numtorch restores the module.
    net = classes(nt)[1]()
    before = {k: v.clone() for k, v in net.state_dict().items()}
    nt.func.functional_call(
        net,
        {
            "first.weight": nt.zeros(3, 4, dtype=nt.float64),
            "first.scale": nt.tensor(9.0, dtype=nt.float64),
        },
        x_in(nt, False),
    )
    assert_close(dict(net.state_dict()), before)

    def both(lib):
        net = classes(lib)[1]()
        w = {"first.bias": lib.zeros(4), "tied.bias": lib.ones(4)}
        lib.func.functional_call(net, w, x_in(lib, False))

    assert_same_error(both)

    def strict(lib):
        net = classes(lib)[0]()
        lib.func.functional_call(
            net, {"weight": lib.zeros(3, 2), "x": lib.ones(1)}, lib.ones(3), strict=True
        )

    assert_same_error(strict)
    assert_same_error(
        lambda lib: lib.func.functional_call(classes(lib)[0](), ({"bias": 1}, {"bias": 2}), ())
    )
    assert_same_error(lambda lib: lib.func.functional_call(classes(lib)[0](), 3, ()))
    assert_same_error(lambda lib: lib.func.functional_call(classes(lib)[0](), [{}, 3], ()))


def test_functional_call_restores_state_after_error():
    def prog(lib):
        m = classes(lib)[0]()
        w = m.weight
        try:
            lib.func.functional_call(m, {"weight": lib.zeros(5, 5)}, lib.ones(3))
        except RuntimeError:
            pass
        return m.weight is w

    assert run_both(prog) == (True, True)


def test_stateless_functional_call_warns():
    m = classes(nt)[0]()
    with pytest.warns(FutureWarning, match="torch.func.functional_call"):
        x = nt.ones(1, 3, dtype=nt.float64)
        out = nt.nn.utils.stateless.functional_call(m, {"bias": nt.zeros(2)}, x)
    ref = nt.func.functional_call(m, {"bias": nt.zeros(2)}, x)
    assert_close(out, ref)


def test_stack_module_state_and_ensemble():
    def prog(lib):
        Affine, _ = classes(lib)
        models = [Affine(3, 2) for _ in range(3)]
        for i, m in enumerate(models):
            m.weight.data.add_(i)
        params, buffers = lib.func.stack_module_state(models)
        x = x_in(lib, False)

        def one(p, b):
            return lib.func.functional_call(models[0], (p, b), (x,))

        out = lib.func.vmap(one)(params, buffers)
        loss = out.pow(2).sum()
        loss.backward()
        return out, params["weight"].grad, params["weight"].is_leaf, list(buffers)

    assert_same(prog)


@pytest.mark.parametrize(
    "bad",
    [
        lambda lib: [],
        lambda lib: [classes(lib)[0](), classes(lib)[0]().eval()],
        lambda lib: [classes(lib)[0](), lib.nn.Module()],
        lambda lib: [classes(lib)[0](), classes(lib)[0]().requires_grad_(False)],
    ],
)
def test_stack_module_state_errors(bad):
    assert_same_error(lambda lib: lib.func.stack_module_state(bad(lib)))
