"""optim.lr_scheduler against PyTorch: every scheduler's learning-rate (and momentum)
sequence bit for bit over tens of steps, on two param groups with different rates;
state_dict round trips and resumption; composed schedulers; warnings and error texts."""

from __future__ import annotations

import functools
import warnings

import pytest
import torch
from twolibs import assert_close, assert_same_error, run_both

import numtorch as nt
import numtorch.optim.lr_scheduler  # noqa: F401 - makes nt.optim.lr_scheduler

EXACT = {"rtol": 0.0, "atol": 0.0}


def _optimizer_with(lib, **defaults):
    """An optimizer whose step changes nothing, for hyperparameters SGD has not (betas)."""

    class Plain(lib.optim.Optimizer):
        def __init__(self, params, **hyper):
            super().__init__(params, {**defaults, **hyper})

        def step(self, closure=None):
            return None

    return Plain


def make_opt(lib, kind="sgd"):
    """Two param groups, lrs 0.1 and 0.5 (the second with its own momentum/betas)."""
    a, b = lib.nn.Parameter(lib.zeros(2)), lib.nn.Parameter(lib.zeros(3))
    if kind == "sgd":
        return lib.optim.SGD(
            [{"params": [a]}, {"params": [b], "lr": 0.5, "momentum": 0.5}], lr=0.1, momentum=0.9
        )
    if kind == "adam":
        return lib.optim.Adam(
            [{"params": [a]}, {"params": [b], "lr": 0.5, "betas": (0.8, 0.99)}], lr=0.1
        )
    if kind == "betas":
        cls = _optimizer_with(lib, lr=0.1, betas=(0.9, 0.999))
        return cls([{"params": [a]}, {"params": [b], "lr": 0.5, "betas": (0.8, 0.99)}])
    return _optimizer_with(lib, lr=0.1)([{"params": [a]}, {"params": [b], "lr": 0.5}])


def _hyper(opt) -> list:
    """Every group's lr and momentum / betas."""
    keys = ("lr", "momentum", "betas")
    return [{k: g[k] for k in keys if k in g} for g in opt.param_groups]


def with_warnings(prog):
    """``prog`` returning its result and the warnings it raised, as (category, text) pairs."""

    @functools.wraps(prog)
    def recorded(lib, *args, **kwargs):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = prog(lib, *args, **kwargs)
        return out, [(w.category, str(w.message)) for w in caught]

    return recorded


@with_warnings
def trajectory(lib, build, steps, kind="sgd", metrics=None):
    """Build ``build(L, opt)`` and record the groups' hyperparameters, ``get_last_lr`` and
    the state dict after each of ``steps`` optimizer+scheduler steps."""
    L = lib.optim.lr_scheduler
    opt = make_opt(lib, kind)
    sched = build(L, opt)
    out = {"init": (_hyper(opt), sched.get_last_lr()), "steps": []}
    for i in range(steps):
        opt.step()
        sched.step(*([] if metrics is None else [metrics[i]]))
        out["steps"].append((_hyper(opt), list(sched.get_last_lr())))
    out["state"] = sched.state_dict()
    return out


def assert_same_trajectory(build, steps=40, kind="sgd", metrics=None):
    ours, theirs = run_both(lambda lib: trajectory(lib, build, steps, kind, metrics))
    assert_close(ours, theirs, **EXACT)


CASES = {
    "lambda": lambda L, o: L.LambdaLR(o, lambda e: 0.95**e),
    "lambda_list": lambda L, o: L.LambdaLR(o, [lambda e: 0.95**e, lambda e: 1 / (e + 1)]),
    "multiplicative": lambda L, o: L.MultiplicativeLR(o, lambda e: 0.97),
    "multiplicative_list": lambda L, o: L.MultiplicativeLR(o, (lambda e: 0.9, lambda e: 1.01)),
    "step": lambda L, o: L.StepLR(o, 3),
    "step_gamma": lambda L, o: L.StepLR(o, step_size=4, gamma=0.7),
    "multistep": lambda L, o: L.MultiStepLR(o, [3, 7, 7, 12], gamma=0.3),
    "constant": lambda L, o: L.ConstantLR(o),
    "constant_half": lambda L, o: L.ConstantLR(o, factor=0.5, total_iters=4),
    "linear": lambda L, o: L.LinearLR(o),
    "linear_down": lambda L, o: L.LinearLR(o, start_factor=1.0, end_factor=0.1, total_iters=10),
    "exponential": lambda L, o: L.ExponentialLR(o, 0.93),
    "polynomial": lambda L, o: L.PolynomialLR(o),
    "polynomial_power": lambda L, o: L.PolynomialLR(o, total_iters=20, power=2.0),
    "cosine": lambda L, o: L.CosineAnnealingLR(o, T_max=10),
    "cosine_eta": lambda L, o: L.CosineAnnealingLR(o, 7, eta_min=0.01),
    "warm_restarts": lambda L, o: L.CosineAnnealingWarmRestarts(o, 5),
    "warm_restarts_mult": lambda L, o: L.CosineAnnealingWarmRestarts(o, 3, T_mult=2, eta_min=0.001),
    "cyclic": lambda L, o: L.CyclicLR(o, 0.01, 0.1, step_size_up=4),
    "cyclic_tri2": lambda L, o: L.CyclicLR(o, [0.01, 0.02], [0.1, 0.3], 3, 5, mode="triangular2"),
    "cyclic_exp": lambda L, o: L.CyclicLR(
        o,
        0.01,
        0.1,
        4,
        mode="exp_range",
        gamma=0.9,
        base_momentum=0.7,
    ),
    "cyclic_custom": lambda L, o: L.CyclicLR(
        o,
        0.01,
        0.1,
        3,
        scale_fn=lambda x: 0.5**x,
        scale_mode="iterations",
    ),
    "cyclic_nomomentum": lambda L, o: L.CyclicLR(o, 0.01, 0.1, 5, cycle_momentum=False),
    "onecycle": lambda L, o: L.OneCycleLR(o, 1.0, total_steps=40),
    "onecycle_linear": lambda L, o: L.OneCycleLR(
        o,
        [1.0, 2.0],
        epochs=4,
        steps_per_epoch=10,
        anneal_strategy="linear",
    ),
    "onecycle_three": lambda L, o: L.OneCycleLR(
        o,
        0.5,
        40,
        pct_start=0.25,
        three_phase=True,
        div_factor=10.0,
    ),
    "onecycle_momentum": lambda L, o: L.OneCycleLR(
        o,
        0.5,
        40,
        base_momentum=[0.8, 0.7],
        max_momentum=0.99,
        final_div_factor=100.0,
    ),
    "onecycle_nomomentum": lambda L, o: L.OneCycleLR(o, 0.5, 40, cycle_momentum=False),
    "sequential": lambda L, o: L.SequentialLR(
        o, [L.LinearLR(o, 0.1, total_iters=4), L.ExponentialLR(o, 0.9)], [5]
    ),
    "sequential3": lambda L, o: L.SequentialLR(
        o, [L.ConstantLR(o, 0.5, 3), L.CosineAnnealingLR(o, 8), L.StepLR(o, 4)], milestones=[6, 20]
    ),
    "sequential_nested": lambda L, o: L.SequentialLR(
        o,
        [
            L.ChainedScheduler([L.MultiStepLR(o, [2, 9]), L.ExponentialLR(o, 0.95)]),
            L.LambdaLR(o, lambda e: 1 / (e + 2)),
            L.CyclicLR(o, 0.05, 0.2, 3),
        ],
        [12, 20],
    ),
    "chained": lambda L, o: L.ChainedScheduler([L.ConstantLR(o, 0.5, 3), L.ExponentialLR(o, 0.9)]),
    "chained_opt": lambda L, o: L.ChainedScheduler(
        [L.LinearLR(o, 0.2), L.StepLR(o, 5), L.PolynomialLR(o, 30)], optimizer=o
    ),
}
MOMENTUM = (
    "cyclic",
    "cyclic_tri2",
    "cyclic_exp",
    "cyclic_custom",
    "onecycle",
    "onecycle_three",
    "onecycle_momentum",
)


@pytest.mark.parametrize("name", CASES)
def test_sequence(name):
    assert_same_trajectory(CASES[name])


@pytest.mark.parametrize("kind", ["betas", "adam"])
@pytest.mark.parametrize("name", MOMENTUM)
def test_beta1_cycling(name, kind):
    assert_same_trajectory(CASES[name], kind=kind)


def test_cyclic_without_momentum_on_plain_optimizer():
    assert_same_trajectory(CASES["cyclic_nomomentum"], kind="plain")


PLATEAU_METRICS = [5, 4, 4, 4.2, 4, 4, 4, 3.9995, 4, 4, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3] * 3


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"patience": 2},
        {"mode": "max", "patience": 1, "factor": 0.5},
        {"threshold_mode": "abs", "threshold": 0.1, "patience": 1, "cooldown": 2},
        {
            "mode": "max",
            "threshold_mode": "abs",
            "patience": 0,
            "factor": 0.5,
            "min_lr": [0.02, 0.2],
        },
        {"patience": 0, "factor": 0.5, "min_lr": 0.01, "eps": 0.01},
    ],
)
def test_plateau(kwargs):
    build = lambda L, o: L.ReduceLROnPlateau(o, **kwargs)  # noqa: E731
    assert_same_trajectory(build, steps=len(PLATEAU_METRICS), metrics=PLATEAU_METRICS)


# ------------------------------------------------------------------ epoch argument (closed forms)
CLOSED = (
    "step",
    "multistep",
    "constant_half",
    "linear_down",
    "exponential",
    "polynomial_power",
    "cosine_eta",
    "lambda",
)


@with_warnings
def _closed_run(lib, build, epochs):
    opt = make_opt(lib)
    sched = build(lib.optim.lr_scheduler, opt)
    out = []
    for e in epochs:
        opt.step()
        sched.step(e)
        out.append(sched.get_last_lr())
    return out


@pytest.mark.parametrize("name", CLOSED)
def test_epoch_argument(name):
    ours, theirs = run_both(_closed_run, CASES[name], [3, 0, 7, 8, 15, 2, 30, 11])
    assert_close(ours, theirs, **EXACT)
    assert len(theirs[1]) == 8


@pytest.mark.parametrize("epochs", [[0.5, 1.5, 4.9, 5.0, 7.25, 13, 2], [3, 9, 21, 22, 44.5, 1]])
def test_warm_restarts_epoch_argument(epochs):
    build = CASES["warm_restarts_mult" if epochs[0] == 3 else "warm_restarts"]
    ours, theirs = run_both(_closed_run, build, epochs)
    assert_close(ours, theirs, **EXACT)


# ------------------------------------------------------------------ state dicts and resuming
STATEFUL = (
    "step",
    "multistep",
    "linear",
    "cosine",
    "warm_restarts_mult",
    "cyclic_tri2",
    "onecycle",
    "sequential3",
    "sequential_nested",
    "chained",
    "lambda",
    "multiplicative",
)


class Decay:
    """A callable object: its attributes go into the state dict (a lambda's do not)."""

    def __init__(self, rate):
        self.rate = rate

    def __call__(self, epoch):
        return self.rate**epoch


@with_warnings
def _round_trip(lib, build, first, then):
    """Run ``first`` steps, then copy optimizer and scheduler state into fresh ones and run
    both the original and the copy ``then`` more steps."""
    L = lib.optim.lr_scheduler
    opt = make_opt(lib)
    sched = build(L, opt)
    for _ in range(first):
        opt.step()
        sched.step()
    opt2 = make_opt(lib)
    sched2 = build(L, opt2)
    opt2.load_state_dict(opt.state_dict())
    state = sched.state_dict()
    sched2.load_state_dict(state)
    # ours leaves the loaded dict as it was (torch's CyclicLR pops _scale_fn_custom from it)
    assert lib is torch or state == sched.state_dict()
    out = []
    for _ in range(then):
        for o, s in ((opt, sched), (opt2, sched2)):
            o.step()
            s.step()
        out.append((sched.get_last_lr(), sched2.get_last_lr(), _hyper(opt2)))
    return out, sched2.state_dict()


@pytest.mark.parametrize("name", STATEFUL)
def test_state_dict_round_trip(name):
    ours, theirs = run_both(_round_trip, CASES[name], 13, 20)
    assert_close(ours, theirs, **EXACT)
    for before, after, _ in ours[0][0]:
        assert before == after


def test_callable_object_state():
    def prog(lib):
        opt = make_opt(lib)
        L = lib.optim.lr_scheduler
        sched = L.LambdaLR(opt, [Decay(0.9), lambda e: 1.0])
        sched.lr_lambdas[0].rate = 0.8
        state = sched.state_dict()
        fresh = L.LambdaLR(make_opt(lib), [Decay(0.5), lambda e: 1.0])
        fresh.load_state_dict(state)
        cyc = L.CyclicLR(make_opt(lib), 0.01, 0.1, scale_fn=Decay(0.7))
        return state["lr_lambdas"], fresh.lr_lambdas[0].rate, cyc.state_dict()["_scale_fn_custom"]

    ours, theirs = run_both(prog)
    assert_close(ours, theirs)
    assert ours == ([{"rate": 0.8}, None], 0.8, {"rate": 0.7})


def test_plateau_tensor_metric():
    metrics = [3.0, 2.0, 2.5, 2.5, 2.5, 1.0, 1.0, 1.0]
    build = lambda L, o: L.ReduceLROnPlateau(o, patience=1)  # noqa: E731
    prog = lambda lib: trajectory(lib, build, 8, metrics=[lib.tensor(m) for m in metrics])  # noqa: E731
    ours, theirs = run_both(prog)
    assert_close(ours, theirs, **EXACT)


def test_plateau_state_dict():
    def prog(lib):
        opt = make_opt(lib)
        sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="max", patience=1)
        for m in [1, 2, 2, 2, 2]:
            sched.step(m)
        opt2 = make_opt(lib)
        sched2 = lib.optim.lr_scheduler.ReduceLROnPlateau(opt2)
        sched2.load_state_dict(sched.state_dict())
        opt2.load_state_dict(opt.state_dict())
        for m in [2, 2, 2, 3]:
            sched2.step(m)
        return sched2.state_dict(), sched2.get_last_lr(), sched2.in_cooldown

    ours, theirs = run_both(prog)
    assert_close(ours, theirs, **EXACT)


RESUMABLE = (
    "step",
    "multistep",
    "constant_half",
    "linear_down",
    "exponential",
    "polynomial_power",
    "cosine",
    "cosine_eta",
    "warm_restarts",
    "warm_restarts_mult",
    "lambda",
    "multiplicative",
)


RESUME = {
    "step": lambda L, o, e: L.StepLR(o, 3, last_epoch=e),
    "multistep": lambda L, o, e: L.MultiStepLR(o, [3, 7, 7, 12], 0.3, e),
    "constant_half": lambda L, o, e: L.ConstantLR(o, 0.5, 4, last_epoch=e),
    "linear_down": lambda L, o, e: L.LinearLR(o, 1.0, 0.1, 10, last_epoch=e),
    "exponential": lambda L, o, e: L.ExponentialLR(o, 0.93, last_epoch=e),
    "polynomial_power": lambda L, o, e: L.PolynomialLR(o, 20, 2.0, e),
    "cosine": lambda L, o, e: L.CosineAnnealingLR(o, 10, last_epoch=e),
    "cosine_eta": lambda L, o, e: L.CosineAnnealingLR(o, 7, 0.01, e),
    "warm_restarts": lambda L, o, e: L.CosineAnnealingWarmRestarts(o, 5, last_epoch=e),
    "warm_restarts_mult": lambda L, o, e: L.CosineAnnealingWarmRestarts(o, 3, 2, 0.001, e),
    "lambda": lambda L, o, e: L.LambdaLR(o, lambda k: 0.95**k, last_epoch=e),
    "multiplicative": lambda L, o, e: L.MultiplicativeLR(o, lambda k: 0.97, e),
    "cyclic": lambda L, o, e: L.CyclicLR(o, 0.01, 0.1, 4, last_epoch=e),
    "onecycle": lambda L, o, e: L.OneCycleLR(o, 1.0, 40, last_epoch=e),
}


@with_warnings
def _resume_run(lib, name, first, then):
    """An optimizer stepped ``first`` times under a scheduler; a second optimizer loaded
    from its state; the scheduler rebuilt on it with ``last_epoch=first``; ``then`` steps."""
    L = lib.optim.lr_scheduler
    opt = make_opt(lib)
    sched = RESUME[name](L, opt, -1)
    for _ in range(first):
        opt.step()
        sched.step()
    opt2 = make_opt(lib)
    opt2.load_state_dict(opt.state_dict())
    sched2 = RESUME[name](L, opt2, first)
    out = [(sched2.get_last_lr(), _hyper(opt2))]
    for _ in range(then):
        opt2.step()
        sched2.step()
        out.append((sched2.get_last_lr(), _hyper(opt2)))
    return out


@pytest.mark.parametrize("name", RESUME)
def test_resume_with_last_epoch(name):
    ours, theirs = run_both(_resume_run, name, 6, 25)
    assert_close(ours, theirs, **EXACT)


def test_tensor_lr():
    def prog(lib):
        p = lib.nn.Parameter(lib.zeros(2, dtype=lib.float64))
        opt = lib.optim.SGD([p], lr=lib.tensor(0.1, dtype=lib.float64), momentum=0.9)
        sched = lib.optim.lr_scheduler.StepLR(opt, 2, gamma=0.5)
        lrs = []
        for _ in range(5):
            opt.step()
            sched.step()
            lrs.append(sched.get_last_lr()[0])
        return lrs, opt.param_groups[0]["lr"], opt.param_groups[0]["initial_lr"]

    ours, theirs = run_both(prog)
    assert_close(ours, theirs, **EXACT)


# ------------------------------------------------------------------ warnings
def _step_before_optimizer(lib):
    opt = make_opt(lib)
    sched = lib.optim.lr_scheduler.StepLR(opt, 2)
    sched.step()
    opt.step()
    sched.step()


def _optimizer_step_overridden(lib):
    opt = make_opt(lib)
    sched = lib.optim.lr_scheduler.ExponentialLR(opt, 0.9)
    opt.step = lambda closure=None: None
    opt.step()
    sched.step()


def _get_lr_outside_step(lib):
    sched = lib.optim.lr_scheduler.ExponentialLR(make_opt(lib), 0.9)
    sched.get_lr()


def _epoch_argument(lib):
    opt = make_opt(lib)
    sched = lib.optim.lr_scheduler.StepLR(opt, 2)
    opt.step()
    sched.step(3)
    lib.optim.lr_scheduler.ReduceLROnPlateau(opt).step(1.0, 4)


def _in_order(lib):
    opt = make_opt(lib)
    sched = lib.optim.lr_scheduler.StepLR(opt, 2)
    sched2 = lib.optim.lr_scheduler.LambdaLR(opt, lambda e: 1.0)  # wraps step only once
    for _ in range(3):
        opt.step()
        sched.step()
        sched2.step()


@pytest.mark.parametrize(
    "prog, count",
    [
        (_step_before_optimizer, 1),
        (_optimizer_step_overridden, 1),
        (_get_lr_outside_step, 1),
        (_epoch_argument, 2),
        (_in_order, 0),
    ],
)
def test_warnings(prog, count):
    ours, theirs = run_both(with_warnings(prog))
    assert ours[1] == theirs[1]
    assert len(theirs[1]) == count


# ------------------------------------------------------------------ errors
def _build(build, kind="sgd"):
    return lambda lib: build(lib.optim.lr_scheduler, make_opt(lib, kind))


def _step_past_end(L, o):
    sched = L.OneCycleLR(o, 1.0, total_steps=3)
    for _ in range(4):
        o.step()
        sched.step()


def _plateau_new_group(L, o):
    sched = L.ReduceLROnPlateau(o, patience=0, min_lr=[0.0, 0.0])
    o.add_param_group(
        {"params": [type(o.param_groups[0]["params"][0])(o.param_groups[0]["params"][0] * 1)]}
    )
    sched.step(1.0)
    sched.step(2.0)


def _other_optimizer(L, o):
    return L.SequentialLR(
        o, [L.StepLR(o, 2), L.StepLR(type(o)(o.param_groups[0]["params"], lr=0.3), 2)], [3]
    )


def _run(sched, steps):
    for _ in range(steps):
        sched.optimizer.step()
        sched.step()


ERRORS = {
    "not_optimizer": lambda L, o: L.StepLR(object(), 3),
    "not_optimizer_plateau": lambda L, o: L.ReduceLROnPlateau([1]),
    "not_optimizer_cyclic": lambda L, o: L.CyclicLR(None, 0.1, 1.0),
    "not_optimizer_onecycle": lambda L, o: L.OneCycleLR("sgd", 1.0, 10),
    "resume_without_initial_lr": lambda L, o: L.StepLR(o, 3, last_epoch=4),
    "lambda_count": lambda L, o: L.LambdaLR(o, [lambda e: 1.0]),
    "multiplicative_count": lambda L, o: L.MultiplicativeLR(o, [lambda e: 1.0] * 3),
    "multiplicative_not_callable": lambda L, o: L.MultiplicativeLR(o, 0.9),
    "constant_factor": lambda L, o: L.ConstantLR(o, factor=1.5),
    "constant_negative": lambda L, o: L.ConstantLR(o, factor=-0.1),
    "linear_start": lambda L, o: L.LinearLR(o, start_factor=0),
    "linear_end": lambda L, o: L.LinearLR(o, end_factor=1.5),
    "warm_T0": lambda L, o: L.CosineAnnealingWarmRestarts(o, 0),
    "warm_T0_float": lambda L, o: L.CosineAnnealingWarmRestarts(o, 2.0),
    "warm_Tmult": lambda L, o: L.CosineAnnealingWarmRestarts(o, 2, T_mult=0),
    "warm_eta": lambda L, o: L.CosineAnnealingWarmRestarts(o, 2, eta_min="0"),
    "warm_negative_epoch": lambda L, o: L.CosineAnnealingWarmRestarts(o, 2).step(-1),
    "cyclic_mode": lambda L, o: L.CyclicLR(o, 0.01, 0.1, mode="square"),
    "cyclic_lengths": lambda L, o: L.CyclicLR(o, [0.01], 0.1),
    "cyclic_max_lengths": lambda L, o: L.CyclicLR(o, 0.01, [0.1, 0.2, 0.3]),
    "cyclic_momentum_lengths": lambda L, o: L.CyclicLR(o, 0.01, 0.1, base_momentum=[0.8]),
    "onecycle_nothing": lambda L, o: L.OneCycleLR(o, 1.0),
    "onecycle_epochs_only": lambda L, o: L.OneCycleLR(o, 1.0, epochs=3),
    "onecycle_total": lambda L, o: L.OneCycleLR(o, 1.0, total_steps=0),
    "onecycle_total_float": lambda L, o: L.OneCycleLR(o, 1.0, total_steps=10.0),
    "onecycle_epochs": lambda L, o: L.OneCycleLR(o, 1.0, epochs=0, steps_per_epoch=3),
    "onecycle_steps_per_epoch": lambda L, o: L.OneCycleLR(o, 1.0, epochs=2, steps_per_epoch=-3),
    "onecycle_pct": lambda L, o: L.OneCycleLR(o, 1.0, 10, pct_start=1.5),
    "onecycle_pct_int": lambda L, o: L.OneCycleLR(o, 1.0, 10, pct_start=1),
    "onecycle_anneal": lambda L, o: L.OneCycleLR(o, 1.0, 10, anneal_strategy="exp"),
    "onecycle_max_lr": lambda L, o: L.OneCycleLR(o, [1.0], 10),
    "onecycle_past_end": _step_past_end,
    "plateau_factor": lambda L, o: L.ReduceLROnPlateau(o, factor=1.0),
    "plateau_mode": lambda L, o: L.ReduceLROnPlateau(o, mode="mean"),
    "plateau_threshold_mode": lambda L, o: L.ReduceLROnPlateau(o, threshold_mode="ratio"),
    "plateau_min_lrs": lambda L, o: L.ReduceLROnPlateau(o, min_lr=[0.1]),
    "plateau_new_group": _plateau_new_group,
    "sequential_empty": lambda L, o: L.SequentialLR(o, [], []),
    "sequential_milestones": lambda L, o: L.SequentialLR(
        o, [L.StepLR(o, 2), L.StepLR(o, 3)], [1, 2]
    ),
    "sequential_plateau": lambda L, o: L.SequentialLR(
        o, [L.StepLR(o, 2), L.ReduceLROnPlateau(o)], [2]
    ),
    "sequential_not_scheduler": lambda L, o: L.SequentialLR(o, [L.StepLR(o, 2), 3], [2]),
    "sequential_other_optimizer": _other_optimizer,
    "sequential_get_lr": lambda L, o: L.SequentialLR(o, [L.StepLR(o, 2)], []).get_lr(),
    "sequential_chained_at_milestone": lambda L, o: _run(
        L.SequentialLR(o, [L.StepLR(o, 2), L.ChainedScheduler([L.StepLR(o, 3)])], [2]), 3
    ),
    "chained_empty": lambda L, o: L.ChainedScheduler([]),
    "chained_plateau": lambda L, o: L.ChainedScheduler([L.StepLR(o, 2), L.ReduceLROnPlateau(o)]),
    "base_get_lr": lambda L, o: L.LRScheduler(o),
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same_error(_build(ERRORS[name]))


def test_cycle_momentum_needs_momentum():
    for sched in ("CyclicLR", "OneCycleLR"):
        assert_same_error(_build(lambda L, o: getattr(L, sched)(o, 0.1, 1), kind="plain"))  # noqa: B023


def test_public_names_and_signatures():
    import inspect

    ours, theirs = nt.optim.lr_scheduler, torch.optim.lr_scheduler
    assert sorted(ours.__all__) == sorted(theirs.__all__)
    for name in [*theirs.__all__, "_LRScheduler"]:
        mine, ref = getattr(ours, name), getattr(theirs, name)
        assert issubclass(mine, ours.LRScheduler)
        for meth in ("__init__", "step"):
            got = [
                (p.name, p.kind, p.default)
                for p in inspect.signature(getattr(mine, meth)).parameters.values()
            ]
            want = [
                (p.name, p.kind, p.default)
                for p in inspect.signature(getattr(ref, meth)).parameters.values()
            ]
            assert got == want, (name, meth)
    assert ours._LRScheduler.__name__ == "_LRScheduler"


def _user_schedulers(lib):
    """Schedulers a user writes: a subclass with its own get_lr (and closed form), and one
    that reuses a built-in's get_lr."""
    L = lib.optim.lr_scheduler

    class Warmup(L.LRScheduler):
        def __init__(self, optimizer, n, last_epoch=-1):
            self.n = n
            super().__init__(optimizer, last_epoch)

        def get_lr(self):
            return [b * min(1.0, (self.last_epoch + 1) / self.n) for b in self.base_lrs]

        def _get_closed_form_lr(self):
            return [b / 7 for b in self.base_lrs]

    class Floored(L.StepLR):
        def get_lr(self):
            return [max(lr, 0.004) for lr in super().get_lr()]

    class Old(L._LRScheduler):
        def get_lr(self):
            return [b * 0.5**self.last_epoch for b in self.base_lrs]

    opt = make_opt(lib)
    scheds = [Warmup(opt, 6), Floored(opt, 2), Old(opt)]
    out = []
    for i in range(12):
        opt.step()
        for s in scheds:
            s.step(*([i] if i == 8 else []))
            out.append(s.get_last_lr())
    return out, [s.state_dict() for s in scheds]


def test_user_subclasses():
    ours, theirs = run_both(with_warnings(_user_schedulers))
    assert_close(ours, theirs, **EXACT)


# ------------------------------------------------------------------ on a device
def test_schedulers_drive_a_training_loop_on_either_device(dev):
    """OneCycleLR then ReduceLROnPlateau (fed the loss, a tensor on the device) over SGD
    steps of parameters on ``dev``: the learning rates and parameters of torch on the CPU."""

    def prog(lib):
        where = dev if lib is nt else "cpu"
        w = lib.nn.Parameter(lib.linspace(-1.0, 1.0, 6, dtype=lib.float64, device=where))
        opt = lib.optim.SGD([w], lr=0.1, momentum=0.9)
        L = lib.optim.lr_scheduler
        sched = L.SequentialLR(
            opt, [L.OneCycleLR(opt, max_lr=0.5, total_steps=4), L.ConstantLR(opt)], [3]
        )
        plateau = L.ReduceLROnPlateau(opt, patience=0, factor=0.5)
        trail = []
        for _ in range(6):
            opt.zero_grad()
            loss = ((w - 0.3) ** 2).sum()
            loss.backward()
            opt.step()
            sched.step()
            plateau.step(loss.detach() * 0 + 1)  # a flat metric: the lr halves
            assert w.device.type == loss.device.type == lib.device(where).type
            trail.append((opt.param_groups[0]["lr"], w.detach().clone()))
        return trail

    ours, theirs = run_both(prog)
    assert_close(ours, theirs, rtol=1e-14, atol=0)
