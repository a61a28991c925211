"""torch.optim against PyTorch: every optimizer's trajectory and state step for step (float64,
the same data and weights in both libraries), parameter groups, state dicts, hooks and
error texts."""

from __future__ import annotations

import copy
import importlib
from functools import wraps

import numpy as np
import pytest
import torch
from twolibs import arr, assert_close, assert_same, assert_same_error, run_both

import numtorch as nt

TOL = {"rtol": 1e-12, "atol": 1e-14}
X = arr(5, 3, seed=1)


def _params(lib, names="Wb", device="cpu"):
    """The model's parameters (W: 3x4, b: 4, c: 2 never used by the loss) as leaves."""
    shapes = {"W": (3, 4), "b": (4,), "c": (2,)}
    return [
        lib.tensor(arr(*shapes[n], seed=i + 2), device=device, requires_grad=True)
        for i, n in enumerate(names)
    ]


def _loss(lib, W, b, *_):
    h = (lib.tensor(X, device=W.device) @ W + b).tanh()
    return (h**2).sum() + 0.1 * (W**2).sum() + 0.3 * (h * W.sum(0)).sum()


def _train(opt, params, lib, steps):
    for _ in range(steps):
        opt.zero_grad()
        _loss(lib, *params).backward()
        opt.step()


def _snapshot(opt, params):
    return [p.detach().clone() for p in params], copy.deepcopy(opt.state_dict())


CASES = [
    ("SGD", {}),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.3, weight_decay=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, maximize=True)),
    ("Adam", {}),
    ("Adam", dict(lr=0.05, amsgrad=True, weight_decay=0.1)),
    ("Adam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("Adam", dict(lr=0.05, betas=(0.5, 0.7), eps=1e-3, foreach=False)),
    ("AdamW", {}),
    ("AdamW", dict(lr=0.05, amsgrad=True, maximize=True, weight_decay=0.2)),
    ("Adamax", {}),
    ("Adamax", dict(lr=0.05, weight_decay=0.1, maximize=True)),
    ("NAdam", {}),
    ("NAdam", dict(lr=0.05, weight_decay=0.1, momentum_decay=0.1)),
    ("NAdam", dict(weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("RAdam", {}),
    ("RAdam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict(weight_decay=0.1, maximize=True, betas=(0.8, 0.9))),
    ("Adagrad", {}),
    ("Adagrad", dict(lr=0.1, lr_decay=0.1, initial_accumulator_value=0.5, weight_decay=0.1)),
    ("Adagrad", dict(maximize=True, eps=1e-3)),
    ("Adadelta", {}),
    ("Adadelta", dict(lr=0.5, rho=0.5, weight_decay=0.1, maximize=True)),
    ("RMSprop", {}),
    ("RMSprop", dict(centered=True, alpha=0.9)),
    ("RMSprop", dict(momentum=0.5)),
    ("RMSprop", dict(momentum=0.9, centered=True, weight_decay=0.1, maximize=True)),
    ("Rprop", {}),
    ("Rprop", dict(lr=0.1, etas=(0.3, 1.5), step_sizes=(1e-3, 0.15), maximize=True)),
    ("ASGD", {}),
    ("ASGD", dict(lr=0.1, lambd=0.01, alpha=0.5, t0=2, weight_decay=0.1, maximize=True)),
    ("ASGD", dict(lr=0.05, t0=0, foreach=False)),
    ("Adafactor", {}),
    ("Adafactor", dict(lr=0.05, beta2_decay=-0.5, eps=(1e-3, 1e-2), d=1.5, weight_decay=0.1)),
    ("Adafactor", dict(maximize=True, eps=(None, 0.5))),
]


def _state_device(name: str, kwargs: dict, t, dev: str) -> str:
    """Where PyTorch keeps a state tensor of a parameter on ``dev``: there, except the 0-d
    counters ('step', NAdam's 'mu_product'), kept on the CPU unless fused (ASGD's are
    always on the parameter's device)."""
    if t.dim() or name == "ASGD" or kwargs.get("fused"):
        return nt.device(dev).type
    return "cpu"


def _run_on(dev: str, name: str, kwargs: dict, steps: int):
    """A program training ``_params`` with the optimizer ``name``: ours on ``dev`` (its
    parameters and state must stay where PyTorch keeps them), torch's on the CPU."""

    def prog(lib):
        params = _params(lib, device=dev if lib is nt else "cpu")
        kw = {**kwargs, "lr": lib.tensor(0.05)} if kwargs.get("lr") == "tensor" else kwargs
        opt = getattr(lib.optim, name)(params, **kw)
        _train(opt, params, lib, steps)
        if lib is nt:
            for p in params:
                assert p.device.type == p.grad.device.type == nt.device(dev).type
                for key, t in opt.state.get(p, {}).items():
                    if isinstance(t, nt.Tensor):
                        assert t.device.type == _state_device(name, kwargs, t, dev), key
        return _snapshot(opt, params)

    return prog


@pytest.mark.parametrize("name,kwargs", CASES, ids=lambda c: str(c))
def test_trajectory_and_state_match_torch(name, kwargs, dev):
    """Six steps: parameters and the whole state dict (state tensors, 'step' counters and
    their dtype, group hyperparameters) as PyTorch's, on either device."""
    assert_same(_run_on(dev, name, kwargs, 6), **TOL)


@pytest.mark.parametrize("name", sorted({c for c, _ in CASES}))
def test_param_groups_add_param_group_and_unused_params(name):
    """Two groups with their own lr, a parameter without a gradient (no state), then a group
    added mid-training; the repr lists the groups as PyTorch's does."""

    def prog(lib):
        W, b, c = _params(lib, "Wbc")
        opt = getattr(lib.optim, name)([{"params": [W]}, {"params": [c], "lr": 0.3}], lr=0.02)
        _train(opt, (W, b), lib, 2)
        opt.add_param_group({"params": b, "lr": 0.05})
        _train(opt, (W, b), lib, 3)
        return _snapshot(opt, (W, b, c)), repr(opt)

    assert_same(prog, **TOL)


@pytest.mark.parametrize("name", ["SGD", "Adam", "NAdam", "Adagrad", "RMSprop", "Rprop"])
def test_state_dict_round_trip(name):
    """A state dict saved from one optimizer, loaded into a fresh one over copies of the
    parameters, continues the trajectory as PyTorch's does, and as the original optimizer
    does (exactly, but for NAdam: loading casts its float32 'mu_product' to the parameter's
    dtype, as PyTorch's does, so the reloaded one continues in float64)."""
    kwargs = {"SGD": dict(momentum=0.9), "RMSprop": dict(momentum=0.5, centered=True)}
    kwargs = kwargs.get(name, {})

    def train_then_reload(lib, state_dict=None):
        params = _params(lib)
        opt = getattr(lib.optim, name)(params, lr=0.05, **kwargs)
        _train(opt, params, lib, 3)
        saved = opt.state_dict() if state_dict is None else state_dict
        fresh = [p.detach().clone().requires_grad_(True) for p in params]
        opt2 = getattr(lib.optim, name)(fresh, lr=0.05, **kwargs)
        opt2.load_state_dict(copy.deepcopy(saved))
        _train(opt2, fresh, lib, 3)
        _train(opt, params, lib, 3)
        return _snapshot(opt2, fresh), _snapshot(opt, params)

    (ours, ours_cont), (theirs, _) = run_both(train_then_reload)
    assert_close(ours, theirs, **TOL)
    if name == "NAdam":
        ours, ours_cont = ours[0], ours_cont[0]
    assert_close(ours, ours_cont, rtol=1e-8 if name == "NAdam" else 0, atol=0)


def test_load_torch_state_dict_continues_torch_trajectory():
    """PyTorch's Adam state dict, its tensors converted, loaded into ours: the next steps
    equal PyTorch's."""

    def start(lib):
        params = _params(lib)
        opt = lib.optim.Adam(params, lr=0.05, amsgrad=True)
        _train(opt, params, lib, 3)
        return params, opt

    tparams, topt = start(torch)
    sd = topt.state_dict()
    conv = {
        "param_groups": copy.deepcopy(sd["param_groups"]),
        "state": {
            k: {n: nt.tensor(v.numpy()) for n, v in s.items()} for k, s in sd["state"].items()
        },
    }
    params = [nt.tensor(p.detach().numpy(), requires_grad=True) for p in tparams]
    opt = nt.optim.Adam(params, lr=0.05, amsgrad=True)
    opt.load_state_dict(conv)
    _train(opt, params, nt, 3)
    _train(topt, tparams, torch, 3)
    assert_close(_snapshot(opt, params), _snapshot(topt, tparams), **TOL)


def test_load_state_dict_keeps_dtype_policy_and_hooks():
    """Loaded state tensors take the parameter's dtype, 'step' keeps its own; load hooks run
    (pre may replace the dict), state-dict hooks run in registration order, prepend first."""

    def prog(lib):
        log = []
        p = lib.tensor(arr(3), requires_grad=True)
        opt = lib.optim.Adam([p], lr=0.1)
        p.grad = lib.ones(3, dtype=lib.float64)
        opt.step()
        opt.register_state_dict_pre_hook(lambda o: log.append("pre1"))
        opt.register_state_dict_pre_hook(lambda o: log.append("pre0"), prepend=True)

        def post(o, sd):
            log.append("post")
            return {**sd, "extra": 1}

        opt.register_state_dict_post_hook(post)
        sd = opt.state_dict()
        sd["state"][0]["exp_avg"] = sd["state"][0]["exp_avg"].float()

        def load_pre(o, sd):
            log.append("load_pre")
            sd = dict(sd)
            sd.pop("extra")
            return sd

        p2 = lib.tensor(arr(3), requires_grad=True)
        opt2 = lib.optim.Adam([p2], lr=0.5)
        opt2.register_load_state_dict_pre_hook(load_pre)
        opt2.register_load_state_dict_post_hook(lambda o: log.append("load_post"))
        opt2.load_state_dict(sd)
        st = opt2.state[p2]
        return (
            log,
            st["exp_avg"].dtype == p2.dtype,
            str(st["step"].dtype),
            opt2.param_groups[0]["lr"],
        )

    assert_same(prog)


def test_zero_grad():
    def prog(lib, set_to_none):
        W, b = _params(lib)
        opt = lib.optim.SGD([W, b], lr=0.1)
        _loss(lib, W, b).backward()
        opt.zero_grad(set_to_none=set_to_none)
        return W.grad, b.grad

    for set_to_none in (True, False):
        assert_same(prog, set_to_none)


def test_step_hooks_order_and_argument_rewrite():
    """Global pre hooks run before the optimizer's own, post hooks after them; a pre hook may
    replace (args, kwargs); removed handles stop running; step returns the closure's loss."""

    def prog(lib):
        mod = importlib.import_module(lib.__name__ + ".optim.optimizer")
        log = []
        W, b = _params(lib)
        opt = lib.optim.SGD([W, b], lr=0.1)

        def closure():
            log.append("closure")
            opt.zero_grad()
            loss = _loss(lib, W, b)
            loss.backward()
            return loss

        opt.register_step_pre_hook(lambda o, a, k: log.append("pre"))
        opt.register_step_post_hook(lambda o, a, k: log.append("post"))
        h1 = mod.register_optimizer_step_pre_hook(lambda o, a, k: log.append("global pre"))
        h2 = mod.register_optimizer_step_post_hook(lambda o, a, k: log.append("global post"))
        h3 = opt.register_step_pre_hook(lambda o, a, k: (a, {"closure": closure}))
        try:
            loss = opt.step()
        finally:
            h1.remove(), h2.remove()
        h3.remove()
        opt.step()
        return log, loss, [W, b]

    assert_same(prog, **TOL)


def test_scheduler_style_step_wrapping():
    """lr_scheduler wraps ``optimizer.step`` on the instance (as PyTorch's does) to set
    ``_opt_called``; the wrapped step still runs the hooks and returns the loss."""

    def prog(lib):
        p = lib.tensor(arr(3), requires_grad=True)
        opt = lib.optim.SGD([p], lr=0.1)
        log = []
        opt.register_step_post_hook(lambda o, a, k: log.append("post"))
        func = opt.step.__func__

        @wraps(func)
        def wrapper(*args, **kwargs):
            opt._opt_called = True
            return func.__get__(opt, opt.__class__)(*args, **kwargs)

        wrapper._wrapped_by_lr_sched = True
        opt.step = wrapper
        before = getattr(opt, "_opt_called", False)
        p.grad = lib.ones(3, dtype=lib.float64)
        loss = opt.step(lambda: 2.0)
        return before, opt._opt_called, loss, log, p

    assert_same(prog, **TOL)


OPTIONS = [
    ("Adam", dict(fused=True)),
    ("AdamW", dict(fused=True, amsgrad=True)),
    ("Adagrad", dict(fused=True, lr_decay=0.1)),
    ("SGD", dict(fused=True, momentum=0.9)),
    ("Adam", dict(foreach=True, amsgrad=True)),
    ("RMSprop", dict(foreach=True, centered=True, momentum=0.5)),
    ("SGD", dict(foreach=True, momentum=0.9, nesterov=True)),
    ("SGD", dict(lr="tensor", momentum=0.9)),
    ("Adam", dict(lr="tensor")),
    ("RMSprop", dict(lr="tensor")),
    ("Rprop", dict(lr="tensor")),
    ("AdamW", dict(lr="tensor", amsgrad=True)),
    ("Adamax", dict(lr="tensor")),
    ("NAdam", dict(lr="tensor", weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict(lr="tensor", weight_decay=0.1, decoupled_weight_decay=True)),
    ("Adagrad", dict(lr="tensor", lr_decay=0.1)),
    ("Adadelta", dict(lr="tensor")),
    # lambd * lr a power of two: float32's pow (eta's update) then rounds no tie, where NumPy
    # and PyTorch may round differently
    ("ASGD", dict(foreach=True, lr=0.0625, lambd=2**-10, t0=2, weight_decay=0.1)),
    ("ASGD", dict(foreach=True, lr=0.0625, lambd=2**-10, maximize=True)),
    ("Adafactor", dict(foreach=True, weight_decay=0.1)),
]


@pytest.mark.parametrize("name,kwargs", OPTIONS, ids=lambda c: str(c))
def test_fused_foreach_and_tensor_lr(name, kwargs, dev):
    """fused / foreach (PyTorch's other kernels) and a tensor lr: the same trajectory."""
    assert_same(_run_on(dev, name, kwargs, 4), **TOL)


ALL = [
    "SGD",
    "Adam",
    "AdamW",
    "Adamax",
    "NAdam",
    "RAdam",
    "Adagrad",
    "Adadelta",
    "RMSprop",
    "Rprop",
]
# two steps: those where PyTorch itself can backpropagate through a second step
TWICE = ["SGD", "Adam", "AdamW", "NAdam", "RAdam", "Adagrad", "Adadelta"]


@pytest.mark.parametrize(
    "name,steps", [(n, 1) for n in ALL] + [(n, 2) for n in TWICE], ids=lambda c: str(c)
)
def test_differentiable_step(name, steps):
    """differentiable=True: the update of a non-leaf parameter is recorded; the gradient
    through the steps and the parameters as PyTorch's."""
    kwargs = {
        "SGD": dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1),
        "RMSprop": dict(centered=True, momentum=0.9),
        "Adam": dict(amsgrad=steps == 1),
    }

    def prog(lib):
        w = lib.tensor(arr(2, 3), requires_grad=True)
        p = w.clone()
        opt = getattr(lib.optim, name)([p], differentiable=True, **kwargs.get(name, {}))
        for i in range(steps):
            p.grad = lib.tensor(np.full((2, 3), 0.3 + i)) * w
            opt.step()
        (p**2).sum().backward()
        return p, w.grad

    assert_same(prog, **TOL)


@pytest.mark.parametrize(
    "name", ["Adam", "AdamW", "Adamax", "NAdam", "RAdam", "Adadelta", "RMSprop", "Rprop"]
)
def test_capturable_needs_an_accelerator(name):
    def prog(lib):
        params = _params(lib)
        opt = getattr(lib.optim, name)(params, capturable=True)
        _train(opt, params, lib, 1)

    assert_same_error(prog)


def _rosenbrock(lib, x):
    return (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_lbfgs_rosenbrock(line_search_fn):
    """LBFGS on the extended Rosenbrock function, a small history (the oldest pairs drop
    out): the iterates, the losses and the whole state (directions, curvature pairs, the
    0-d tensors and numbers PyTorch keeps, counters) as PyTorch's. (Without a line search
    Rosenbrock amplifies rounding differences about tenfold every few iterations: 20
    iterations keep them near 1e-13.)"""

    def prog(lib):
        x = lib.tensor(np.array([-1.2, 1.0, -0.5, 0.8]), requires_grad=True)
        opt = lib.optim.LBFGS([x], lr=1, max_iter=10, history_size=3, line_search_fn=line_search_fn)

        def closure():
            opt.zero_grad()
            loss = _rosenbrock(lib, x)
            loss.backward()
            return loss

        losses = [opt.step(closure).item() for _ in range(2)]
        return x, losses, opt.state_dict()

    # the curvature pairs are differences of gradients of size ~1e2: atol from that scale
    assert_same(prog, rtol=1e-11, atol=1e-11)


# ------------------------------------------------------------------ errors
def _make(name, *args, **kwargs):
    def prog(lib):
        return getattr(lib.optim, name)(_params(lib), *args, **kwargs)

    return prog


ERRORS = [
    (name, dict(lr=-1.0))
    for name in (
        "SGD",
        "Adam",
        "AdamW",
        "Adamax",
        "NAdam",
        "RAdam",
        "Adagrad",
        "Adadelta",
        "RMSprop",
        "Rprop",
        "LBFGS",
        "ASGD",
        "Adafactor",
        "Muon",
        "SparseAdam",
    )
] + [
    ("SGD", dict(momentum=-0.5)),
    ("SGD", dict(weight_decay=-0.1)),
    ("SGD", dict(nesterov=True)),
    ("SGD", dict(momentum=0.9, dampening=0.1, nesterov=True)),
    ("SGD", dict(fused=True, differentiable=True)),
    ("SGD", dict(fused=True, foreach=True)),
    ("Adam", dict(eps=-1e-8)),
    ("Adam", dict(betas=(1.0, 0.9))),
    ("Adam", dict(betas=(0.9, -0.1))),
    ("Adam", dict(weight_decay=-1e-2)),
    ("Adam", dict(betas=(0, 0.9))),
    ("Adam", dict(fused=True, foreach=True)),
    ("AdamW", dict(betas=(0.9, 1.5))),
    ("Adamax", dict(eps=-1.0)),
    ("NAdam", dict(momentum_decay=-1.0)),
    ("RAdam", dict(weight_decay=-1.0)),
    ("Adagrad", dict(lr_decay=-1.0)),
    ("Adagrad", dict(initial_accumulator_value=-1.0)),
    ("Adagrad", dict(eps=-1.0)),
    ("Adadelta", dict(rho=1.5)),
    ("Adadelta", dict(eps=-1.0)),
    ("RMSprop", dict(alpha=-0.5)),
    ("RMSprop", dict(momentum=-0.5)),
    ("Rprop", dict(etas=(1.5, 1.2))),
    ("Rprop", dict(etas=(0.5, 0.9))),
    ("ASGD", dict(weight_decay=-0.1)),
    ("ASGD", dict(lr=Ellipsis)),
    ("Adafactor", dict(beta2_decay=0.5)),
    ("Adafactor", dict(eps=(-1.0, 1e-3))),
    ("Adafactor", dict(eps=(None, -1.0))),
    ("Adafactor", dict(d=0.5)),
    ("Adafactor", dict(weight_decay=-1.0)),
    ("Muon", dict(momentum=-1.0)),
    ("Muon", dict(weight_decay=-1.0)),
    ("Muon", dict(adjust_lr_fn="other")),
    ("SparseAdam", dict(lr=0.0)),
    ("SparseAdam", dict(eps=0.0)),
    ("SparseAdam", dict(betas=(1.0, 0.9))),
    ("SparseAdam", dict(betas=(0.9, -0.5))),
]


@pytest.mark.parametrize("name,kwargs", ERRORS, ids=lambda c: str(c))
def test_constructor_errors(name, kwargs):
    if kwargs.get("lr") is Ellipsis:  # a tensor lr of several elements

        def prog(lib):
            return getattr(lib.optim, name)(_params(lib), lr=lib.ones(2))

        assert_same_error(prog)
        return
    if name == "Muon" and "lr" not in kwargs:  # Muon refuses the 1-D bias first

        def prog(lib):
            return lib.optim.Muon(_params(lib, "W"), **kwargs)

        assert_same_error(prog)
        return
    assert_same_error(_make(name, **kwargs))


def _tensor_lr_foreach(lib):
    return lib.optim.Adam(_params(lib), lr=lib.tensor(0.1), foreach=True)


def _params_tensor(lib):
    return lib.optim.SGD(lib.zeros(3, requires_grad=True), lr=0.1)


def _params_empty(lib):
    return lib.optim.SGD([], lr=0.1)


def _params_twice(lib):
    W, b = _params(lib)
    return lib.optim.SGD([{"params": [W, b]}, {"params": [b]}], lr=0.1)


def _params_non_leaf(lib):
    W, _ = _params(lib)
    return lib.optim.SGD([W * 2], lr=0.1)


def _params_not_tensors(lib):
    return lib.optim.SGD([1.0, 2.0], lr=0.1)


def _params_set(lib):
    return lib.optim.SGD([{"params": set(_params(lib))}], lr=0.1)


def _group_not_dict(lib):
    opt = lib.optim.SGD(_params(lib), lr=0.1)
    opt.add_param_group([lib.zeros(2, requires_grad=True)])


def _names_mixed(lib):
    W, b = _params(lib)
    return lib.optim.SGD([("W", W), b], lr=0.1)


def _names_groups_mixed(lib):
    W, b = _params(lib)
    opt = lib.optim.SGD([("W", W)], lr=0.1)
    opt.add_param_group({"params": [b]})


def _load_group_count(lib):
    W, b = _params(lib)
    sd = lib.optim.SGD([W, b], lr=0.1).state_dict()
    lib.optim.SGD([{"params": [W]}, {"params": [b]}], lr=0.1).load_state_dict(sd)


def _load_group_size(lib):
    W, b = _params(lib)
    sd = lib.optim.SGD([W], lr=0.1).state_dict()
    lib.optim.SGD([W, b], lr=0.1).load_state_dict(sd)


@pytest.mark.parametrize("t0", [1.0, 1e-3, 30.0])
def test_strong_wolfe_as_pytorch_calls_it(t0):
    """optim.lbfgs's line search with PyTorch's signature (pytorch-minimize calls it):
    ``obj_func(x, t, d)`` on the extended Rosenbrock function, from a steepest-descent
    direction; the loss, gradient, step and evaluation count as PyTorch's."""

    def prog(lib):
        x = lib.tensor(np.array([-1.2, 1.0, -0.5, 0.8]))

        def obj_func(x, t, d):
            y = (x + t * d).requires_grad_(True)
            loss = _rosenbrock(lib, y)
            return float(loss.detach()), lib.autograd.grad(loss, y)[0]

        f, g = obj_func(x, 0.0, lib.zeros(4))
        d = -g / g.norm()
        lbfgs = importlib.import_module(f"{lib.__name__}.optim.lbfgs")
        return lbfgs._strong_wolfe(obj_func, x, t0, d, f, g, g.dot(d))

    assert_same(prog, **TOL)


def test_cubic_interpolate():
    def prog(lib):
        lbfgs = importlib.import_module(f"{lib.__name__}.optim.lbfgs")
        f = lbfgs._cubic_interpolate
        t = lib.tensor
        return (
            f(0.0, 1.0, t(-2.0), 1.0, 0.5, t(1.0)),
            f(1.0, 0.5, t(1.0), 0.0, 1.0, t(-2.0), bounds=(0.2, 0.4)),
            f(0.0, 1.0, t(1.0), 1.0, 0.0, t(1.0)),  # no minimum: the middle of the bounds
        )

    assert_same(prog, **TOL)


def _lbfgs_groups(lib):
    W, b = _params(lib)
    return lib.optim.LBFGS([{"params": [W]}, {"params": [b]}])


def _lbfgs_bad_line_search(lib):
    W, b = _params(lib)
    opt = lib.optim.LBFGS([W, b], line_search_fn="armijo")

    def closure():
        opt.zero_grad()
        loss = _loss(lib, W, b)
        loss.backward()
        return loss

    opt.step(closure)


def _missing_required(lib):
    mod = importlib.import_module(lib.__name__ + ".optim.optimizer")

    class Custom(lib.optim.Optimizer):
        def __init__(self, params):
            super().__init__(params, {"lr": mod.required})

    return Custom(_params(lib))


def _bad_pre_hook(lib):
    opt = lib.optim.SGD(_params(lib), lr=0.1)
    opt.register_step_pre_hook(lambda o, a, k: 3)
    try:
        opt.step()
    except RuntimeError as e:  # the text names the step function object: compare its tail
        raise RuntimeError(str(e).split(" must ")[1]) from None


@pytest.mark.parametrize(
    "prog",
    [
        _tensor_lr_foreach,
        _params_tensor,
        _params_empty,
        _params_twice,
        _params_non_leaf,
        _params_not_tensors,
        _params_set,
        _group_not_dict,
        _names_mixed,
        _names_groups_mixed,
        _load_group_count,
        _load_group_size,
        _lbfgs_groups,
        _lbfgs_bad_line_search,
        _missing_required,
        _bad_pre_hook,
    ],
    ids=lambda f: f.__name__,
)
def test_errors(prog):
    assert_same_error(prog)


def test_named_parameters_and_frozen_params():
    """(name, tensor) pairs become the group's param_names (kept in the state dict); a
    tensor that does not require grad is accepted, as PyTorch accepts it."""

    def prog(lib):
        W, b = _params(lib)
        frozen = lib.zeros(2, dtype=lib.float64)
        opt = lib.optim.Adam([("W", W), ("b", b), ("f", frozen)], lr=0.1)
        _train(opt, (W, b), lib, 2)
        return opt.state_dict(), frozen

    assert_same(prog, **TOL)


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"momentum": 0.9},
        {"momentum": 0.9, "nesterov": True},
        {"momentum": 0.5, "dampening": 0.3, "weight_decay": 0.01},
        {"maximize": True, "weight_decay": 0.1, "momentum": 0.9},
    ],
    ids=["plain", "momentum", "nesterov", "dampening", "maximize"],
)
def test_sgd_direct_updates_equal_the_ops_bit_for_bit(kwargs):
    """SGD's direct path on arrays (the default) against its op-by-op path (foreach=False),
    with a view of a parameter that sees each update and a version count to match."""

    def run(foreach):
        nt.manual_seed(0)
        model = nt.nn.Sequential(nt.nn.Linear(5, 7), nt.nn.Tanh(), nt.nn.Linear(7, 2))
        opt = nt.optim.SGD(model.parameters(), lr=0.05, foreach=foreach, **kwargs)
        view = model[0].weight.detach()[0]
        x = nt.randn(4, 5)
        for _ in range(4):
            opt.zero_grad()
            (model(x) ** 2).mean().backward()
            opt.step()
        bufs = [s["momentum_buffer"] for s in opt.state.values() if "momentum_buffer" in s]
        return [t.detach().numpy().copy() for t in (*model.parameters(), *bufs, view)], [
            p._version for p in model.parameters()
        ]

    (ops, ops_versions), (direct, versions) = run(False), run(None)
    assert ops_versions == versions
    for a, b in zip(ops, direct, strict=True):
        assert a.dtype == b.dtype and np.array_equal(a, b)


# ------------------------------------------------------------------ ASGD, Adafactor, Muon,
# SparseAdam, swa_utils
@pytest.mark.parametrize(
    "name,kwargs",
    [
        ("ASGD", dict(t0=1, lambd=0.1)),
        ("Adafactor", dict(weight_decay=0.1)),
        ("Muon", dict(lr=0.05)),
    ],
    ids=lambda c: str(c),
)
def test_newer_optimizers_state_dict_round_trip(name, kwargs):
    """Saved after three steps, loaded into a fresh optimizer over copies: the fresh one
    continues as PyTorch's, and as the original."""
    tol = dict(rtol=1e-9, atol=1e-12) if name == "Muon" else TOL

    def train(opt, params, lib, steps):
        for _ in range(steps):
            opt.zero_grad()
            (_muon_loss if name == "Muon" else _loss)(lib, *params).backward()
            opt.step()

    def prog(lib):
        if name == "Muon":
            params = [lib.tensor(arr(3, 4, seed=3)), lib.tensor(arr(4, 2, seed=4))]
            params = [p.requires_grad_(True) for p in params]
        else:
            params = _params(lib)
        opt = getattr(lib.optim, name)(params, **kwargs)
        train(opt, params, lib, 3)
        fresh = [p.detach().clone().requires_grad_(True) for p in params]
        opt2 = getattr(lib.optim, name)(fresh, **kwargs)
        opt2.load_state_dict(copy.deepcopy(opt.state_dict()))
        train(opt2, fresh, lib, 3)
        train(opt, params, lib, 3)
        return _snapshot(opt2, fresh), _snapshot(opt, params)

    (ours, ours_cont), (theirs, _) = run_both(prog)
    assert_close(ours, theirs, **tol)
    # the parameters only: loading casts ASGD's float32 'eta' and 'mu' to float64
    assert_close(ours[0], ours_cont[0], rtol=0, atol=0)


def _muon_loss(lib, W, V):
    h = (lib.tensor(X) @ W).tanh() @ V
    return (h**2).sum() + 0.1 * (W**2).sum()


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        dict(lr=0.05, nesterov=False, momentum=0.5, weight_decay=0.0),
        dict(lr=0.02, adjust_lr_fn="match_rms_adamw", ns_steps=3, eps=1e-3),
        dict(lr=0.02, adjust_lr_fn="original", ns_coefficients=(2.0, -1.5, 0.5)),
    ],
    ids=str,
)
def test_muon_trajectory(kwargs):
    """Muon on a tall and a wide matrix, five steps. PyTorch orthogonalizes in bfloat16
    (each operation computed in float32, rounded once), as numtorch's bfloat16 does."""

    def prog(lib):
        W = lib.tensor(arr(3, 4, seed=3), requires_grad=True)
        V = lib.tensor(arr(4, 2, seed=4), requires_grad=True)
        opt = lib.optim.Muon([W, V], **kwargs)
        for _ in range(5):
            opt.zero_grad()
            _muon_loss(lib, W, V).backward()
            opt.step()
        return _snapshot(opt, (W, V))

    assert_same(prog, rtol=1e-9, atol=1e-12)


def _muon_vector(lib):
    return lib.optim.Muon([lib.zeros(3, requires_grad=True)])


def _muon_complex(lib):
    p = lib.zeros(2, 2, dtype=lib.complex128, requires_grad=False)
    p.grad = lib.ones(2, 2, dtype=lib.complex128)
    lib.optim.Muon([p]).step()


def _muon_many_steps(lib):
    p = lib.zeros(2, 2, requires_grad=True)
    p.grad = lib.ones(2, 2)
    lib.optim.Muon([p], ns_steps=100).step()


def _sparse_adam_dense_grad(lib):
    p = lib.zeros(3, requires_grad=True)
    opt = lib.optim.SparseAdam([p])
    p.grad = lib.ones(3)
    opt.step()


def _sparse_adam_complex(lib):
    return lib.optim.SparseAdam([lib.zeros(3), lib.zeros(3, dtype=lib.complex64)])


def _asgd_foreach_differentiable(lib):
    p = lib.ones(3, dtype=lib.float64, requires_grad=True).clone()
    p.grad = lib.ones(3, dtype=lib.float64)
    lib.optim.ASGD([p], foreach=True, differentiable=True).step()


def _adafactor_complex(lib):
    p = lib.zeros(3, dtype=lib.complex64)
    p.grad = lib.ones(3, dtype=lib.complex64)
    lib.optim.Adafactor([p]).step()


@pytest.mark.parametrize(
    "prog",
    [
        _muon_vector,
        _muon_complex,
        _muon_many_steps,
        _sparse_adam_dense_grad,
        _sparse_adam_complex,
        _adafactor_complex,
        _asgd_foreach_differentiable,
    ],
    ids=lambda f: f.__name__,
)
def test_newer_optimizer_errors(prog):
    assert_same_error(prog)


def test_sparse_adam_defaults_and_closure():
    """SparseAdam's groups as PyTorch's; a step without gradients runs the closure."""

    def prog(lib):
        p = lib.zeros(3, requires_grad=True)
        opt = lib.optim.SparseAdam([p], lr=0.01, betas=(0.8, 0.9), maximize=True)
        return opt.step(lambda: 3.0), opt.state_dict(), repr(opt)

    assert_same(prog)


@pytest.mark.parametrize("steps", [1, 2])
def test_asgd_differentiable_step(steps):
    def prog(lib):
        w = lib.tensor(arr(2, 3), requires_grad=True)
        p = w.clone()
        opt = lib.optim.ASGD([p], differentiable=True, t0=0, weight_decay=0.1)
        for i in range(steps):
            p.grad = lib.tensor(np.full((2, 3), 0.3 + i)) * w
            opt.step()
        (p**2).sum().backward()
        return p, w.grad

    assert_same(prog, **TOL)


def test_asgd_complex_parameters():
    """ASGD steps a complex parameter as PyTorch's (through its real view)."""

    def prog(lib):
        z = lib.tensor(arr(3, 2, seed=4) + 1j * arr(3, 2, seed=5), requires_grad=True)
        opt = lib.optim.ASGD([z], lr=0.1, t0=1, weight_decay=0.1)
        for _ in range(4):
            opt.zero_grad()
            (z * z.conj() * lib.tensor(arr(3, 2, seed=6))).real.sum().backward()
            opt.step()
        return _snapshot(opt, [z])

    assert_same(prog, **TOL)


@pytest.mark.parametrize("name", ["ASGD", "Adafactor"])
def test_newer_optimizers_tensor_lr_and_capturable(name):
    def prog(lib):
        params = _params(lib)
        # float64: float32's pow rounds a tie differently in NumPy and in PyTorch
        lr = lib.tensor(0.05, dtype=lib.float64 if name == "ASGD" else lib.float32)
        opt = getattr(lib.optim, name)(params, lr=lr)
        _train(opt, params, lib, 4)
        return _snapshot(opt, params)

    assert_same(prog, **TOL)
    if name == "ASGD":

        def capturable(lib):
            params = _params(lib)
            _train(lib.optim.ASGD(params, capturable=True), params, lib, 1)

        assert_same_error(capturable)


class _Net:
    """A small model with BatchNorm, built in either library."""

    @staticmethod
    def make(lib):
        lib.manual_seed(0)
        net = lib.nn.Sequential(
            lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.BatchNorm1d(4), lib.nn.Linear(4, 2)
        ).double()
        for i, p in enumerate(net.parameters()):
            p.data.copy_(lib.tensor(arr(*p.shape, seed=10 + i)))
        return net


@pytest.mark.parametrize(
    "how", ["swa", "swa_multi", "ema", "ema_multi", "buffers", "custom"], ids=str
)
def test_averaged_model(how):
    """AveragedModel over four SGD steps: the averaged parameters, buffers and n_averaged,
    its forward and state dict keys as PyTorch's."""

    def prog(lib):
        su = lib.optim.swa_utils
        net = _Net.make(lib)
        kwargs = {
            "swa_multi": dict(multi_avg_fn=su.get_swa_multi_avg_fn()),
            "ema": dict(avg_fn=su.get_ema_avg_fn(0.9)),
            "ema_multi": dict(multi_avg_fn=su.get_ema_multi_avg_fn(0.8)),
            "buffers": dict(use_buffers=True),
            "custom": dict(avg_fn=lambda a, c, n: a * 0.5 + c * 0.5 + n),
        }.get(how, {})
        avg = su.AveragedModel(net, **kwargs)
        opt = lib.optim.SGD(net.parameters(), lr=0.05)
        x = lib.tensor(arr(6, 3, seed=7))
        for _ in range(4):
            opt.zero_grad()
            net(x).tanh().pow(2).sum().backward()
            opt.step()
            avg.update_parameters(net)
        out = avg(x)
        return list(avg.state_dict().items()), out

    assert_same(prog, **TOL)


def test_update_bn_and_swalr():
    """update_bn recomputes BatchNorm statistics over a loader (tensors and (x, y) pairs);
    SWALR anneals each group's lr (cos and linear), and its state dict round-trips."""

    def prog(lib):
        su = lib.optim.swa_utils
        net = _Net.make(lib)
        net.eval()
        loader = [lib.tensor(arr(5, 3, seed=s)) for s in range(3)]
        loader.append((lib.tensor(arr(4, 3, seed=9)), lib.zeros(4)))
        su.update_bn(loader, net)
        buffers = [b.clone() for b in net.buffers()]
        opt = lib.optim.SGD(
            [{"params": net[0].parameters()}, {"params": net[3].parameters(), "lr": 0.5}], lr=0.2
        )
        lrs = []
        for strategy, swa_lr in (("cos", 0.05), ("linear", [0.01, 0.02])):
            sched = su.SWALR(opt, swa_lr=swa_lr, anneal_epochs=3, anneal_strategy=strategy)
            for _ in range(5):
                opt.step()
                sched.step()
                lrs.append(sched.get_last_lr())
            state = sched.state_dict()
        sched.load_state_dict(state)
        return buffers, net.training, lrs, sorted(state), sched.anneal_func(0.5)

    assert_same(prog, **TOL)


@pytest.mark.parametrize(
    "prog",
    [
        lambda lib: lib.optim.swa_utils.get_ema_avg_fn(1.5),
        lambda lib: lib.optim.swa_utils.get_ema_multi_avg_fn(-0.1),
        lambda lib: lib.optim.swa_utils.AveragedModel(
            lib.nn.Linear(2, 2), avg_fn=lambda *a: 0, multi_avg_fn=lambda *a: 0
        ),
        lambda lib: lib.optim.swa_utils.SWALR(
            lib.optim.SGD([lib.zeros(2, requires_grad=True)]), 0.1, anneal_strategy="exp"
        ),
        lambda lib: lib.optim.swa_utils.SWALR(
            lib.optim.SGD([lib.zeros(2, requires_grad=True)]), 0.1, anneal_epochs=-1
        ),
        lambda lib: lib.optim.swa_utils.SWALR(
            lib.optim.SGD([lib.zeros(2, requires_grad=True)]), [0.1, 0.2]
        ),
    ],
)
def test_swa_errors(prog):
    assert_same_error(prog)


def test_swap_in_optimizer_params_and_state_steps_other_params_then_restores():
    def prog(L):
        L.manual_seed(0)
        w = L.nn.Parameter(L.ones(3))
        b = L.nn.Parameter(L.zeros(2))
        opt = L.optim.Adam([w, b], lr=0.1)
        (w.sum() + b.sum()).backward()
        opt.step()
        sd = opt.state_dict()
        other = {n: L.nn.Parameter(p.detach().clone() * 2) for n, p in (("w", w), ("b", b))}
        for p in other.values():
            p.grad = L.ones_like(p)
        swap_state = {
            "state": {
                k: {n: (v.clone() if isinstance(v, L.Tensor) else v) for n, v in d.items()}
                for k, d in sd["state"].items()
            },
            "param_groups": [dict(g, lr=0.5) for g in sd["param_groups"]],
        }
        with L.optim.swap_in_optimizer_params_and_state(opt, other, swap_state):
            inside = (opt.param_groups[0]["lr"], opt.param_groups[0]["params"][0] is other["w"])
            opt.step()
        after = (opt.param_groups[0]["lr"], opt.param_groups[0]["params"][0] is w)
        return inside, after, other["w"].detach(), w.detach(), swap_state["state"][0]["exp_avg"]

    assert_same(prog)
    for lib in (nt, torch):
        opt = lib.optim.SGD([lib.nn.Parameter(lib.ones(2))], lr=0.1)
        with pytest.raises(RuntimeError, match="requires initialized optimizer state"):
            with lib.optim.swap_in_optimizer_params_and_state(opt, {}, {}):
                pass
