"""``out=`` under torch.func's transforms and forward AD, against torch: vmap refuses it
(its fallback takes no out=), autograd refuses it where a value requires grad at its level,
forward AD refuses it after the write; elsewhere the values beneath the transforms are
written (a tensor of a grad level that does not require grad, a tensor made or captured
inside vmap)."""

from __future__ import annotations

import pytest
from twolibs import assert_same, assert_same_outcome

X = [0.5, 1.0, 2.0]  # float32, as the out= tensors

# (name, call(T, y, o)): an out= call of y into o, o of y's shape
CALLS = [
    ("sin", lambda T, y, o: T.sin(y, out=o)),
    ("mul", lambda T, y, o: T.mul(y, y, out=o)),
    ("add_number", lambda T, y, o: T.add(y, 1, out=o)),
    ("pow", lambda T, y, o: T.pow(y, 2, out=o)),
    ("div_mode", lambda T, y, o: T.div(y, 2, rounding_mode="floor", out=o)),
    ("clamp", lambda T, y, o: T.clamp(y, 0, 1, out=o)),
    ("clamp_tensor", lambda T, y, o: T.clamp(y, min=y * 0, out=o)),
    ("sum_dim", lambda T, y, o: T.sum(y.view(1, 3), 0, out=o)),
    ("max_dim", lambda T, y, o: T.max(y.view(3, 1), 1, out=(o, T.zeros(3, dtype=T.long)))[0]),
]
CALL_IDS = [n for n, _ in CALLS]
CALL_FNS = [c for _, c in CALLS]


def _transform(T, name: str, f):
    """f(y) under the transform ``name``, on X (batched: two rows)."""
    x = T.tensor(X)
    if name == "grad":
        return T.func.grad(lambda y: (f(y) * y).sum())(x)
    if name == "vjp":
        out, fn = T.func.vjp(f, x)
        return out, fn(T.ones(3))
    if name == "jvp":
        return T.func.jvp(f, (x,), (T.ones(3),))
    if name == "vmap":
        return T.func.vmap(f)(T.stack([x, x * 2]))
    if name == "forward_ad":
        import importlib

        fwad = importlib.import_module(T.__name__ + ".autograd.forward_ad")
        with fwad.dual_level():
            return fwad.unpack_dual(f(fwad.make_dual(x, T.ones(3)))).primal
    raise AssertionError(name)


TRANSFORMS = ["grad", "vjp", "jvp", "vmap", "forward_ad"]


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("transform", TRANSFORMS)
@pytest.mark.parametrize("call", CALL_FNS, ids=CALL_IDS)
def test_out_of_a_transformed_value(call, transform):
    # o made inside: torch refuses under every transform (the value requires grad, is
    # batched or has a tangent)
    def prog(T):
        return _transform(T, transform, lambda y: call(T, y, T.zeros(3)))

    assert_same_outcome(prog)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("transform", TRANSFORMS)
@pytest.mark.parametrize("call", CALL_FNS, ids=CALL_IDS)
def test_out_captured_from_outside(call, transform):
    # o captured: what torch wrote into it before its error (forward AD writes first)
    def prog(T):
        o = T.full((3,), -1.0)
        try:
            _transform(T, transform, lambda y: call(T, y, o) * y)
        except (RuntimeError, NotImplementedError) as e:
            return type(e).__name__, str(e), o
        return "", "", o

    assert_same(prog, rtol=1e-6)  # (float32 sin rounds its last bit either way)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("transform", ["grad", "vjp", "vmap"])
@pytest.mark.parametrize("call", CALL_FNS, ids=CALL_IDS)
def test_out_of_an_untracked_value_is_written(call, transform):
    # a value that does not require grad, or is not batched, is written under grad and vmap
    def prog(T):
        seen = []

        def f(y):
            o = T.zeros(3)
            v = o._version
            r = call(T, y.detach() if transform != "vmap" else T.tensor(X), o)
            seen.append((r is o, o._version - v, o.clone()))
            return y * 2

        res = _transform(T, transform, f)
        return res, seen

    assert_same(prog, rtol=1e-6)  # (float32 sin rounds its last bit either way)


@pytest.mark.parametrize(
    "nest",
    [
        lambda T, f, x: T.func.vmap(T.func.grad(lambda y: f(y).sum()))(T.stack([x, x])),
        lambda T, f, x: T.func.grad(lambda y: T.func.vmap(f)(y.view(1, 3)).sum())(x),
        lambda T, f, x: T.func.jvp(lambda y: T.func.vmap(f)(y.view(1, 3)), (x,), (x,)),
        lambda T, f, x: T.func.vmap(lambda y: T.func.jvp(f, (y,), (y,)))(T.stack([x, x])),
    ],
)
def test_nested_transforms_refuse_in_torchs_order(nest):
    # vmap's refusal wins over forward AD's, which comes after the write
    def prog(T):
        return nest(T, lambda z: T.sin(z, out=T.zeros(3)), T.tensor(X))

    assert_same_outcome(prog)
