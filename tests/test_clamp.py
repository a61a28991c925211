"""clamp, clip, clamp_min and clamp_max at ties (input equal to a bound, min equal to max,
min above max): which operand the gradient and the tangent come from, exactly as PyTorch
chooses, for every form (functional, method, in-place) and for tensor and number bounds."""

import numpy as np
import pytest
from twolibs import assert_same, assert_same_error, assert_same_outcome

# Columns: x == min, x == max == min + 1, x == min == max, x == max, x > max == min,
# x < min == max, min > max (x between, x on each), x below min == max, plus a NaN input.
X = np.array([0.0, 1.0, 1.0, 2.0, 0.0, 1.0, 3.0, 2.0, -1.0, 1.5, 0.5, np.nan])
LO = np.array([0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 2.0, 2.0, 0.0, 2.0, 2.0, 0.0])
HI = np.array([1.0, 1.0, 1.0, 2.0, 0.0, 0.0, 2.0, 2.0, 0.0, 0.5, 0.5, 1.0])
# Distinct weights, so that a result shows which operand a value came from.
G = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0])
TX, TLO, THI = np.ones(12), 10 * np.ones(12), 100 * np.ones(12)

TENSOR_FORMS = {
    "clamp": lambda L, x, lo, hi: L.clamp(x, lo, hi),
    "clamp min=": lambda L, x, lo, hi: L.clamp(x, min=lo),
    "clamp max=": lambda L, x, lo, hi: L.clamp(x, max=hi),
    "Tensor.clamp min=": lambda L, x, lo, hi: x.clamp(min=lo),
    "clip": lambda L, x, lo, hi: L.clip(x, lo, hi),
    "clip min=": lambda L, x, lo, hi: x.clip(min=lo),
    "clip max=": lambda L, x, lo, hi: x.clip(max=hi),
    "clamp_min": lambda L, x, lo, hi: L.clamp_min(x, lo),
    "clamp_max": lambda L, x, lo, hi: L.clamp_max(x, hi),
    "clamp_": lambda L, x, lo, hi: x.clone().clamp_(lo, hi),
    "clamp_ min=": lambda L, x, lo, hi: x.clone().clamp_(min=lo),
    "clamp_ max=": lambda L, x, lo, hi: x.clone().clamp_(max=hi),
    "clip_": lambda L, x, lo, hi: x.clone().clip_(lo, hi),
    "clamp_min_": lambda L, x, lo, hi: x.clone().clamp_min_(lo),
    "clamp_max_": lambda L, x, lo, hi: x.clone().clamp_max_(hi),
    "clamp 0-dim min=": lambda L, x, lo, hi: L.clamp(x, min=lo[2]),
}

NUMBER_FORMS = {
    "clamp": lambda L, x: L.clamp(x, 1.0, 1.0),
    "clamp min > max": lambda L, x: L.clamp(x, 2.0, 1.0),
    "clamp min=": lambda L, x: L.clamp(x, min=1.0),
    "clamp max=": lambda L, x: x.clamp(max=1.0),
    "clip": lambda L, x: L.clip(x, 0.0, 1.0),
    "clamp_min": lambda L, x: L.clamp_min(x, 1.0),
    "clamp_max": lambda L, x: L.clamp_max(x, 1.0),
    "clamp_": lambda L, x: x.clone().clamp_(0.0, 1.0),
    "clamp_min_": lambda L, x: x.clone().clamp_min_(1.0),
    "clamp_max_": lambda L, x: x.clone().clamp_max_(1.0),
}


def _grads(form, wrt):
    """The gradients (G weighted) of the operands in ``wrt`` (a mask over x, min, max)."""

    def prog(L, x, lo, hi, g):
        leaves = [x, lo, hi]
        for t, w in zip(leaves, wrt):
            t.requires_grad_(w)
        form(L, x, lo, hi).backward(g)
        return [t.grad for t, w in zip(leaves, wrt) if w]

    return prog


def _tangent(form, dual):
    """func.jvp's tangent, with tangents (1, 10, 100) on the operands in ``dual``."""

    def prog(L, x, lo, hi, tx, tlo, thi):
        args, tans = (x, lo, hi), (tx, tlo, thi)
        primals = tuple(a for a, d in zip(args, dual) if d)
        tangents = tuple(t for t, d in zip(tans, dual) if d)

        def f(*ps):
            it = iter(ps)
            return form(L, *(next(it) if d else a for a, d in zip(args, dual)))

        return L.func.jvp(f, primals, tangents)[1]

    return prog


# Which operands require grad, or have a tangent: all, the input only, the bounds only.
WHICH = [(True, True, True), (True, False, False), (False, True, True)]


def _ids(which) -> str:
    return "".join(c for c, w in zip("xlh", which) if w)


@pytest.mark.parametrize("which", WHICH, ids=_ids)
@pytest.mark.parametrize("name", TENSOR_FORMS)
def test_tensor_bounds_gradients_match_torch_at_ties(name, which):
    assert_same(_grads(TENSOR_FORMS[name], which), X, LO, HI, G, rtol=0)


def _tangent_cases():
    # An in-place form writes into a clone of x, which has a tangent only when x has one:
    # numtorch refuses a dual written into a tensor without a tangent (an error, not a
    # wrong tangent), so the bounds-only case leaves the in-place forms out.
    for name in TENSOR_FORMS:
        for which in WHICH:
            if which[0] or not name.split()[0].endswith("_"):
                yield pytest.param(name, which, id=f"{name}-{_ids(which)}")


@pytest.mark.parametrize(("name", "which"), _tangent_cases())
def test_tensor_bounds_tangents_match_torch_at_ties(name, which):
    assert_same(_tangent(TENSOR_FORMS[name], which), X, LO, HI, TX, TLO, THI, rtol=0)


@pytest.mark.parametrize("name", NUMBER_FORMS)
def test_number_bounds_gradient_and_tangent_match_torch_at_ties(name):
    form = NUMBER_FORMS[name]

    def prog(L, x, g, t):
        y = L.func.jvp(lambda x: form(L, x), (x,), (t,))[1]
        x.requires_grad_(True)
        form(L, x).backward(g)
        return x.grad, y

    assert_same(prog, X, G, TX, rtol=0)


def test_forward_ad_tangent_of_tensor_bounds_matches_torch_at_ties():
    def prog(L, x, lo, hi, tx, tlo, thi):
        fwd = L.autograd.forward_ad
        with fwd.dual_level():
            d = [fwd.make_dual(a, t) for a, t in ((x, tx), (lo, tlo), (hi, thi))]
            out = [fwd.unpack_dual(f(L, *d)).tangent for f in TENSOR_FORMS.values()]
        return out

    assert_same(prog, X, LO, HI, TX, TLO, THI, rtol=0)


def test_float32_ties_match_torch():
    x, lo, hi, g, tx, tlo, thi = (a.astype(np.float32) for a in (X, LO, HI, G, TX, TLO, THI))
    form = TENSOR_FORMS["clamp"]
    assert_same(_grads(form, (True, True, True)), x, lo, hi, g, rtol=0)
    assert_same(_tangent(form, (True, True, True)), x, lo, hi, tx, tlo, thi, rtol=0)


_BOOL = np.array([True, False, True])
BOOL_FORMS = {
    "clamp tensors": lambda L, x: L.clamp(x, x, x),
    "clip tensors": lambda L, x: x.clip(x, ~x),
    "clamp_ tensors": lambda L, x: x.clone().clamp_(x, x),
    "clamp 0-dim tensors": lambda L, x: L.clamp(x, x[0], x[1]),
    "clamp 0-dim and number": lambda L, x: L.clamp(x, x[0], True),
    "clamp numbers": lambda L, x: L.clamp(x, False, True),
    "clamp_ numbers": lambda L, x: x.clone().clamp_(False, True),
    "clamp min= number": lambda L, x: x.clamp(min=False),
    "clamp max= number": lambda L, x: x.clamp(max=True),
    "clamp_min number": lambda L, x: L.clamp_min(x, False),
    "clamp_max_ number": lambda L, x: x.clone().clamp_max_(True),
    "clamp empty": lambda L, x: L.clamp(x[:0], x[:0], x[:0]),
    "clamp empty broadcast": lambda L, x: L.clamp(x[:1], x[:0], x[:0]),
    "clamp unbroadcastable": lambda L, x: L.clamp(x, x[:2], x),
    # these run: one tensor bound (maximum's or minimum's kernel), or a result promoted
    "clamp min= tensor": lambda L, x: x.clamp(min=x),
    "clamp max= 0-dim": lambda L, x: x.clamp(max=x[0]),
    "clamp_min tensor": lambda L, x: L.clamp_min(x, ~x),
    "clamp_max_ 0-dim": lambda L, x: x.clone().clamp_max_(x[1]),
    "clamp int numbers": lambda L, x: L.clamp(x, 0, 1),
    "clamp int tensors": lambda L, x: L.clamp(x, x.long(), x.long()),
}


@pytest.mark.parametrize("name", BOOL_FORMS)
def test_bool_clamp_kernels_as_torch(name):
    """PyTorch's clamp kernels have no bool version (a bool result), except the maximum and
    minimum that a single tensor bound runs."""
    assert_same_outcome(lambda L, x: BOOL_FORMS[name](L, x), _BOOL)


@pytest.mark.parametrize("x", [np.nan, 0.7, 0.2, -1.0])
@pytest.mark.parametrize("lo", [0.3, np.nan])
def test_a_0_dim_bound_beside_a_number_takes_the_number_bounds_tangent(x, lo):
    """clamp(min=t0d, max=0.5) is PyTorch's Scalar overload: the tangent is the input's
    where it lies within the bounds, else 0 (at a NaN input or bound too)."""

    def prog(L, x, t):
        lo_t = L.tensor(lo, dtype=x.dtype)
        return L.func.jvp(lambda y: y.clamp(min=lo_t, max=0.5), (x,), (t,))

    assert_same(prog, np.array(x), np.array(1.05))


@pytest.mark.parametrize("out", ["int64", "bool", "float32", "int32"])
@pytest.mark.parametrize("x", ["float32", "int64", "bool"])
@pytest.mark.parametrize("bounds", ["numbers", "min number", "tensors"])
def test_out_dtype_of_number_and_tensor_bounds(bounds, x, out):
    """clamp's Scalar overload writes out= only in its result's dtype ('Found dtype Bool but
    expected Long'); its Tensor overload casts as other ops' out= do."""

    def prog(L, a):
        a = a.to(getattr(L, x))
        o = L.empty(2, dtype=getattr(L, out))
        if bounds == "tensors":
            return L.clamp(a, L.zeros(2, dtype=a.dtype), L.ones(2, dtype=a.dtype), out=o)
        return L.clip(a, 0, out=o) if bounds == "min number" else L.clamp(a, 0, 1, out=o)

    assert_same_outcome(prog, np.array([1.5, -0.5]))


# clip_ of batched bounds into an unbatched tensor, at each nesting: vmap's refusal names
# clip_, but under a grad or jvp level innermost PyTorch's clip_ has become clamp_.
CLIP_INTO_UNBATCHED = {
    "vmap": lambda F, f: F.vmap(f, in_dims=(None, 0)),
    "vmap(grad)": lambda F, f: F.vmap(F.grad(f), in_dims=(None, 0)),
    "vmap(grad) of a captured tensor": lambda F, f: F.vmap(
        lambda x, b: F.grad(lambda z: f(x, b) + z.sum())(x), in_dims=(None, 0)
    ),
    "vmap(jvp)": lambda F, f: F.vmap(lambda x, b: F.jvp(lambda x: f(x, b), (x,), (x,)), (None, 0)),
    "jvp(vmap)": lambda F, f: (
        lambda x, b: F.jvp(lambda x: F.vmap(f, in_dims=(None, 0))(x, b), (x,), (x,))
    ),
    "grad(vmap)": lambda F, f: (
        lambda x, b: F.grad(lambda x: F.vmap(f, in_dims=(None, 0))(x, b).sum())(x)
    ),
}


@pytest.mark.filterwarnings("ignore:There is a performance drop")
@pytest.mark.parametrize("nesting", list(CLIP_INTO_UNBATCHED))
@pytest.mark.parametrize("method", ["clip_", "clamp_"])
def test_vmap_refusal_names_the_inplace_method(nesting, method):
    def prog(L, x, b):
        def f(x, b):
            y = x.clone()
            getattr(y, method)(b, b + 1)
            return y.sum()

        return CLIP_INTO_UNBATCHED[nesting](L.func, f)(x, b)

    assert_same_error(prog, X[:3], np.stack([LO[:3], HI[:3]]))
