"""numtorch.compile's programs over symbolic sizes: a graph with dynamic dims is traced
with its sizes as expressions, and once two traces at different sizes make the same
program, that program serves the graph's other sizes (guards checked where the program
reaches them; a failed guard traces the new sizes). Every op of the database, batched by
vmap (and differentiated per sample) at several batch sizes, gives eager's bits."""

from __future__ import annotations

import numpy as np
import pytest
from opdb import (
    differentiable_ops,
    float_leaves,
    float_outputs,
    float_paths,
    get_path,
    resolve,
    samples,
    set_path,
)
from twolibs import to_nt

import numtorch as nt
from numtorch._core.symbolic import Recheck
from numtorch._dynamo import _forward, compiled_autograd
from numtorch._dynamo.utils import counters

SIZES = (2, 3, 5, 4)  # two traces, then the program made twice


def _case(op):
    """The op's first float64 sample with float inputs and outputs, as a function of its
    float arguments followed by its other tensors (index tensors, masks: the same for
    every sample of a batch), those float arguments and those other tensors. The outputs
    are copies (a view of an input is no output of a compiled function)."""
    s = next(
        (s for s in samples(op, "float64") if float_paths(op, s.args) and float_outputs(op, s)),
        None,
    )
    if s is None:
        return None, None, None
    paths = float_paths(op, s.args)
    others = [p for p in _tensor_paths(s.args) if p not in paths]
    fn, args, kw = resolve(nt, op.api), to_nt(s.args), to_nt(s.kwargs)

    def f(*xs):
        a = args
        for p, x in zip(paths + others, xs):
            a = set_path(a, p, x)
        return tuple(o.clone() for o in float_leaves(fn(*a, **kw)))

    prims = [np.asarray(get_path(s.args, p)) for p in paths]
    return f, prims, [get_path(args, p) for p in others]


def _tensor_paths(args) -> list:
    paths = []
    for i, a in enumerate(args):
        if isinstance(a, np.ndarray):
            paths.append((i, None))
        elif isinstance(a, (list, tuple)):
            paths += [(i, j) for j, x in enumerate(a) if isinstance(x, np.ndarray)]
    return paths


# the ops with a float sample giving float outputs (complex results are not covered here)
OPS = [op for op in differentiable_ops() if _case(op)[0] is not None]


def _batched(prims, rng, n: int) -> tuple:
    return tuple(
        nt.tensor(np.stack([p] * n) + 0.01 * rng.standard_normal((n, *p.shape))) for p in prims
    )


def _per_sample_grads(f, n: int):
    def loss(*xs):
        return sum(o.sum() for o in f(*xs))

    return nt.func.grad(loss, argnums=tuple(range(n)))


@pytest.mark.parametrize("mode", ["vmap", "per-sample grad"])
@pytest.mark.parametrize("op", OPS, ids=lambda o: o.name)
def test_every_op_batched_at_new_sizes_gives_eagers_bits(op, mode):
    f, prims, others = _case(op)
    fn = f if mode == "vmap" else _per_sample_grads(f, len(prims))
    eager = nt.vmap(fn, in_dims=(0,) * len(prims) + (None,) * len(others))
    compiled = nt.compile(eager, dynamic=True)
    rng = np.random.default_rng(0)
    for n in SIZES:
        xs = _batched(prims, rng, n) + tuple(others)
        want = _flat(eager(*xs))
        before = counters["stats"]["calls_captured"]
        got = _flat(compiled(*xs))
        TRACED.setdefault((op.name, mode), []).append(counters["stats"]["calls_captured"] - before)
        assert len(got) == len(want)
        for a, b in zip(got, want):
            assert a.shape == b.shape and a.dtype == b.dtype, f"{op.name} at batch {n}"
            assert np.array_equal(a, b, equal_nan=True), f"{op.name} at batch {n}"
    traced = TRACED[op.name, mode]
    if traced[0]:  # (a call that reads values, or returns a view, runs eagerly)
        assert traced[1] and not any(traced[2:]), f"traced at batches {SIZES}: {traced}"


TRACED: dict = {}  # (op, mode) -> instructions traced at each batch size


def _flat(out) -> list:
    if isinstance(out, nt.Tensor):
        return [out.detach().numpy()]
    return [a for o in out for a in _flat(o)]


@pytest.mark.parametrize("op", OPS, ids=lambda o: o.name)
def test_every_ops_compiled_backward_at_new_batch_sizes_gives_eagers_bits(op):
    # the backward of a vmapped op (its batch rule's ops, at the batch's sizes): captured
    # at the first size, then symbolically at the next two, whose program serves the rest
    _compiled_backward_at_sizes(op)


@pytest.mark.parametrize("name", ["conv2d", "conv_transpose1d", "conv3d"])
def test_a_vmapped_convs_compiled_backward_serves_every_batch_size(name):
    """conv's batch rule folds the batch into its groups: a size of the one captured graph,
    not part of its key."""
    op = next(o for o in OPS if o.name == name)
    assert _compiled_backward_at_sizes(op) == [(3, 1)]  # three captures, one generic


def _compiled_backward_at_sizes(op) -> list:
    """The op's vmapped backward under compiled autograd at each of SIZES, checked bit for
    bit against eager; each captured graph's (programs, generic programs)."""
    f, prims, others = _case(op)
    vf = nt.vmap(f, in_dims=(0,) * len(prims) + (None,) * len(others))
    compiled_autograd.reset()
    graphs = []

    def compiler(graph):
        graphs.append(graph)
        return graph

    rng = np.random.default_rng(0)
    for n in SIZES:
        xs = [x.requires_grad_() for x in _batched(prims, rng, n)]
        want = nt.autograd.grad(sum(o.sum() for o in vf(*xs, *others)), xs, allow_unused=True)
        with compiled_autograd._enable(compiler):
            loss = sum(o.sum() for o in vf(*xs, *others))
            got = nt.autograd.grad(loss, xs, allow_unused=True)
        for a, b in zip(got, want, strict=True):
            assert (a is None) == (b is None), f"{op.name} at batch {n}"
            if a is not None:
                assert a.shape == b.shape and a.dtype == b.dtype, f"{op.name} at batch {n}"
                assert np.array_equal(a.numpy(), b.numpy(), equal_nan=True), f"at batch {n}"
    return [(len(g.variants), len(g.generic)) for g in graphs]


def _run(fn, sizes, make, dynamic=True) -> list:
    """Instructions traced by ``numtorch.compile(fn)`` at each size, its results checked
    bit for bit against eager's (the same seed for both: random draws included)."""
    compiled = nt.compile(fn, dynamic=dynamic)
    traced = []
    for n in sizes:
        args = make(n)
        nt.manual_seed(n)
        want = _flat(fn(*args))
        nt.manual_seed(n)
        before = counters["stats"]["calls_captured"]
        got = _flat(compiled(*make(n)))
        traced.append(counters["stats"]["calls_captured"] - before)
        for a, b in zip(got, want, strict=True):
            assert a.shape == b.shape and np.array_equal(a, b), f"at size {n}"
    return traced


def _rows(*width):
    return lambda n: (
        nt.tensor(np.random.default_rng(n).standard_normal((n, *width)), dtype=nt.float32),
    )


def test_sizes_computed_from_shapes_serve_every_size():
    w = nt.randn(6, 4)

    def f(x):
        h = (x @ w).tanh()
        return h.view(x.size(0), 2, -1).sum(1) / x.shape[0] + nt.zeros(x.shape[0], 1)

    traced = _run(f, [3, 4, 9, 5, 17], _rows(6))
    assert traced[0] and traced[1] and traced[2:] == [0, 0, 0]


def test_sizes_the_argument_parser_judges_stay_symbolic():
    # a symbolic size is no plain int: the parser's quick check fails over to its judge,
    # which must hand the size on as it is (its value would be a constant of each trace)
    def f(x):
        n = x.shape[0]
        h = x.view((n, -1)).expand(n, 6)
        return nt.sum(h.reshape([n, 3, 2]), dim=(1,)) * x.size(0)

    traced = _run(f, [3, 4, 9, 5], _rows(6))
    assert traced[0] and traced[1] and traced[2:] == [0, 0]


def test_automatic_dynamic_traces_twice_symbolically_then_serves_every_size():
    traced = _run(lambda x: x.cumsum(0)[-1] * x.shape[0], [3, 4, 5, 6, 7], _rows(2), None)
    # the first size is static, the second marks dim 0 dynamic, the third makes the
    # symbolic program a second time
    assert all(traced[:3]) and traced[3:] == [0, 0]


def test_a_branch_on_a_size_is_a_guard_that_traces_the_other_side():
    def f(x):
        if x.shape[0] > 4:
            return x.sum(0)
        return x.prod(0)

    traced = _run(f, [5, 6, 7, 2, 3, 4, 8], _rows(3))
    assert traced[2] == 0  # 7: the program made at 5 and 6
    assert traced[3] and traced[4] and traced[5] == 0  # 2 fails its guard; 4 as 2 and 3
    assert traced[6] == 0  # 8: the program made at 5 and 6 still


def test_a_loop_over_a_size_makes_a_program_per_size():
    # range() takes the size's value where no guard sees it: the two traces differ, so
    # no program serves other sizes
    def f(x):
        out = x[0]
        for i in range(1, x.shape[0]):
            out = out * 0.5 + x[i]
        return out

    assert all(_run(f, [2, 3, 4, 5], _rows(3)))


def test_a_dim_that_kept_its_size_is_not_taken_for_any_size():
    # both traces unroll the loop over dim 1 three times: their programs agree, but only
    # dim 0 took two sizes, so a new size of dim 1 is traced
    def f(x):
        out = x[:, 0]
        for i in range(1, x.shape[1]):
            out = out + x[:, i] * i
        return out

    sizes = [(2, 3), (3, 3), (4, 3), (4, 5), (6, 5)]
    traced = _run(f, range(len(sizes)), lambda k: _rows(sizes[k][1])(sizes[k][0]))
    assert traced[2] == 0 and traced[3] and traced[4]


def test_len_and_true_division_of_a_size_take_its_value():
    assert all(_run(lambda x: x.sum(0) * len(x), [2, 3, 4], _rows(2)))
    assert all(_run(lambda x: x.sum(0) * (x.shape[0] / 2), [2, 3, 4], _rows(2)))


def test_random_draws_follow_guards_or_the_program_is_made_per_size():
    def draws_after_guards(x):  # the guard reads x: it runs before the draw
        noise = nt.randn(x.shape[1:])
        return (x if x.shape[0] > 1 else -x).sum(0) + noise

    traced = _run(draws_after_guards, [3, 4, 5, 6], _rows(2))
    assert traced[2:] == [0, 0]

    def draws_before_a_guard(x):  # the guard reads what the draw made
        y = x + nt.randn(x.shape)
        return y.sum(0) if y.shape[0] > 1 else y[0]

    assert all(_run(draws_before_a_guard, [3, 4, 5, 6], _rows(2)))


def _writes(f, sizes) -> list:
    """Instructions traced by ``numtorch.compile(f)`` at each size, for an f that writes
    into its argument: results, the argument's values and its version as eager's."""
    compiled = nt.compile(f, dynamic=True)
    traced = []
    for n in sizes:
        x, mine = _rows(3)(n)[0], _rows(3)(n)[0]
        want = f(x)
        before = counters["stats"]["calls_captured"]
        out = compiled(mine)
        traced.append(counters["stats"]["calls_captured"] - before)
        assert np.array_equal(out.numpy(), want.numpy())
        assert np.array_equal(mine.numpy(), x.numpy()) and mine._version == x._version
    return traced


def test_arguments_written_in_place_at_every_size():
    def write_last(x):  # the write's own check comes before it
        y = x.sum(0) * x.shape[0]
        x.mul_(2)
        return y

    assert _writes(write_last, [2, 3, 4, 5])[2:] == [0, 0]

    def write_twice(x):  # the second write's check comes after the first write: a guard
        x.mul_(2).add_(x.shape[0])  # that failed there would leave x half written
        return x.sum(0)

    assert all(_writes(write_twice, [2, 3, 4, 5]))


def test_per_sample_gradients_of_a_module_at_every_batch_size():
    nt.manual_seed(0)
    model = nt.nn.Sequential(
        nt.nn.Conv2d(1, 4, 3),
        nt.nn.ReLU(),
        nt.nn.MaxPool2d(2),
        nt.nn.Flatten(),
        nt.nn.Linear(4 * 3 * 3, 5),
    )
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss(p, x, y):
        out = nt.func.functional_call(model, p, (x.unsqueeze(0),))
        return nt.nn.functional.cross_entropy(out, y.unsqueeze(0))

    def grads(x, y):
        g = nt.func.vmap(nt.func.grad(loss), in_dims=(None, 0, 0))(params, x, y)
        return [v.sum(0) / x.shape[0] for v in g.values()]

    def make(n):
        rng = np.random.default_rng(n)
        x = nt.tensor(rng.standard_normal((n, 1, 8, 8)), dtype=nt.float32)
        return x, nt.tensor(rng.integers(0, 5, n))

    traced = _run(grads, [7, 9, 8, 12, 30], make, None)
    assert all(traced[:3]) and traced[3:] == [0, 0]


def test_the_backward_of_a_dynamic_graph_at_every_size():
    # sizes the traced forward left in its graph's attributes (a view's, an expand's) are
    # the backward program's constants: the backward gives eager's gradients at each size
    w = nt.randn(6, 2, requires_grad=True)

    def f(x):
        h = x.view(x.size(0), -1) @ w
        return (h.expand(x.shape[0], 2) * x.shape[0]).sum()

    compiled = nt.compile(f, dynamic=True)
    for n in [2, 3, 4, 5, 3]:
        x = nt.tensor(np.random.default_rng(n).standard_normal((n, 2, 3)), dtype=nt.float32)
        w.grad = None
        f(x).backward()
        want = w.grad.numpy().copy()
        w.grad = None
        before = counters["stats"]["calls_captured"]
        compiled(x).backward()
        assert np.array_equal(w.grad.numpy(), want), f"at size {n}"
        assert n < 4 or counters["stats"]["calls_captured"] == before


def _mlp_step(compiled: bool):
    nt.manual_seed(0)
    nn = nt.nn
    model = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 1))

    def loss_fn(x, y):
        return nn.functional.mse_loss(model(x), y)

    return model, nt.compile(loss_fn, dynamic=True) if compiled else loss_fn


def _batch(n: int) -> tuple:
    rng = np.random.default_rng(n)
    return tuple(nt.tensor(rng.standard_normal(s), dtype=nt.float32) for s in ((n, 5), (n, 1)))


def test_a_training_step_at_every_batch_size_runs_one_program():
    # the forward and its backward made symbolic: the backward reads the sizes the
    # forward program computes
    (model, loss_fn), (mine, compiled) = _mlp_step(False), _mlp_step(True)
    traced = []
    for n in [3, 4, 5, 9, 3, 17, 2]:
        losses = []
        for m, fn in ((model, loss_fn), (mine, compiled)):
            m.zero_grad()
            before = counters["stats"]["calls_captured"]
            loss = fn(*_batch(n))
            loss.backward()
            losses.append(loss.detach().numpy())
        traced.append(counters["stats"]["calls_captured"] - before)
        assert np.array_equal(*losses), f"loss at batch {n}"
        for p, q in zip(model.parameters(), mine.parameters(), strict=True):
            assert np.array_equal(p.grad.numpy(), q.grad.numpy()), f"gradients at batch {n}"
    assert traced[0] and traced[1] and not any(traced[2:])


def _generic_backward(frame) -> list:
    return [g.program.backward for gs in frame.generic.values() for g in gs]


def test_a_backward_whose_guard_fails_runs_the_forward_again():
    (model, loss_fn), (mine, compiled) = _mlp_step(False), _mlp_step(True)
    for n in (3, 4):
        compiled(*_batch(n)).backward()
    (backward,) = _generic_backward(compiled)  # (numtorch.compile's callable: its frame)

    def failing(inputs, nodes, m=None):
        raise Recheck

    backward.fn = failing  # as a guard of the backward program that fails
    for m, fn in ((model, loss_fn), (mine, compiled)):
        m.zero_grad()
        fn(*_batch(6)).backward()
    for p, q in zip(model.parameters(), mine.parameters(), strict=True):
        assert np.array_equal(p.grad.numpy(), q.grad.numpy())
    # an input written in place since: a saved one fails eager's version check; another
    # leaves the forward nothing to run again on
    x, y = _batch(7)
    loss = compiled(x, y)
    x.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()
    loss = compiled(*_batch(7))
    with nt.no_grad():
        mine[4].bias.add_(1)  # (no formula saves a bias)
    with pytest.raises(RuntimeError, match="modified in place since"):
        loss.backward()


def test_a_size_only_the_backward_compares_is_traced_anew_after_one_rerun(monkeypatch):
    """A batch of 4 against features of 4 flips a decision that only the backward takes
    (the unbatched input's gradient summed back over the batch): the first call at that
    size runs the forward again for its backward, later calls get a trace of their own."""
    reruns = []
    again = _forward.CompiledFunctionBackward._again
    monkeypatch.setattr(
        _forward.CompiledFunctionBackward,
        "_again",
        lambda self, *a: reruns.append(1) or again(self, *a),
    )

    def loss(x, b):
        y = nt.vmap(lambda x, b: nt.maximum(x[::2].mean(-2), b).erf(), in_dims=(None, 0))(x, b)
        return (y * y).sum()

    compiled = nt.compile(loss, dynamic=True)
    rng = np.random.default_rng(0)
    x0 = rng.standard_normal((7, 4))
    traced = []
    for n in (2, 3, 5, 4, 4, 4, 6):
        b = nt.tensor(rng.standard_normal((n, 4, 4)))
        grads = []
        for fn in (loss, compiled):
            x = nt.tensor(x0, requires_grad=True)
            before = counters["stats"]["calls_captured"]
            fn(x, b).backward()
            grads.append(x.grad.numpy())
        traced.append(counters["stats"]["calls_captured"] - before)
        assert np.array_equal(*grads), f"at batch {n}"
        if n == 4:
            assert len(reruns) == 1
    assert [bool(t) for t in traced] == [True, True, False, False, True, False, False]
