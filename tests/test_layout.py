"""Result layouts against PyTorch: every op of the op database on its samples made
non-contiguous (transposed, permuted, stepped, expanded), comparing each result's strides
and ``is_contiguous()`` with PyTorch's; which inputs each result shares memory with; and
one test per layout cause (kernels, preserve_format, clones, linalg's column-major results,
gradients and tangents that keep their primal's layout).

Strides are compared on the dims of size > 1 (a size-1 dim never steps through memory,
and NumPy's relaxed strides give it another number than PyTorch's formula); an empty
result is compared on its shape and contiguity only. Ops whose layout still differs are
listed in DIFFERS with the reason: a listed case that matches PyTorch fails until it is
unlisted."""

from __future__ import annotations

import fnmatch

import numpy as np
import pytest
import torch
from opdb import ops_with_samples, resolve, samples
from twolibs import (
    arr,
    assert_close,
    assert_same,
    assert_same_error,
    tensor_leaves,
)

import numtorch as nt

# ==================================================================
# Found by issue 14's third fuzz round (fresh seeds, 68,000 programs).


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("in_dims", [0, 1])
def test_a_clone_of_an_expanded_sample_is_contiguous_under_vmap(in_dims):
    def prog(L, x):
        f = lambda r: L.broadcast_to(r, (2, 4, 2)).clone()  # noqa: E731
        y = L.func.vmap(f, in_dims=in_dims)(x)
        return y, y.stride(), L.func.vmap(lambda r: f(r).view(-1), in_dims=in_dims)(x)

    assert_same(prog, np.arange(4.0).reshape((2, 1, 2) if in_dims == 0 else (1, 2, 2)))


@pytest.mark.parametrize("in_dims", [0, 1, 2])
@pytest.mark.parametrize(
    "fmt", ["preserve", "contiguous", "sliced", "expanded", "transposed input"]
)
def test_a_clone_under_vmap_keeps_the_batch_where_it_is(in_dims, fmt):
    """PyTorch's clone batch rule clones the batched tensor whole (the batch dim where it
    is), so a sample of a batch not at the front is not contiguous and contiguous() copies
    it; contiguous_format makes each sample contiguous."""

    def prog(L, a):
        def f(x):
            if fmt == "transposed input":
                x = x.t()
            y = {
                "contiguous": lambda: x.clone(memory_format=L.contiguous_format),
                "sliced": lambda: x[:, ::2].clone(),
                "expanded": lambda: x[:, None].expand(x.shape[0], 5, x.shape[1]).clone(),
            }.get(fmt, lambda: x.clone())()
            seen.append((y.stride(), y.is_contiguous(), y.contiguous().stride()))
            seen.append(y.contiguous() is y)
            return y

        seen = []
        out = L.func.vmap(f, in_dims=in_dims)(a)
        return out, out.stride(), seen

    assert_same(prog, np.arange(24.0).reshape(2, 3, 4))


def test_an_inplace_write_after_contiguous_of_a_clone_under_vmap_grad():
    # x's batch at the back: y.contiguous() is a copy, so the second write leaves the value
    # y.mul_(y) saved at version 1 (the modified-variable error says so)
    def prog(L, xb):
        def loss(x):
            y = x.clone()
            y.mul_(y)
            y = y.contiguous()
            y.mul_(2.0)
            return y.sum()

        return L.func.vmap(L.func.grad(loss), in_dims=-1)(xb)

    assert_same_error(prog, np.array([-0.45, -1.03, 0.51, -0.67]).reshape(2, 1, 2))


@pytest.mark.filterwarnings("ignore")
def test_a_dtype_conversion_keeps_the_layout():
    # _to_copy allocates empty_like (preserve_format): a transposed tensor stays transposed
    def prog(L, x):
        y = x.mT.long()
        return y, y.stride(), y.log().stride(), x.permute(1, 0).float().stride()

    assert_same(prog, np.array([[3.09, 3.16], [-0.84, 0.28]]))
    assert_same_error(lambda L: L.tensor([[3.0, 3.1], [-0.8, 0.2]]).mT.long().log().view(-1))


# ==================================================================
# Result layouts of every op of the op database, and the layout causes the fuzzer found.


VARIANTS = ("contiguous", "transposed", "permuted", "stepped", "expanded")


def _applies(a: np.ndarray, kind: str) -> bool:
    """Whether ``kind`` lays ``a`` out otherwise than ``tensor(a)`` does."""
    if kind == "transposed":
        return a.ndim >= 2
    if kind == "permuted":
        return a.ndim >= 3
    if kind == "stepped":
        return a.ndim >= 1 and a.shape[-1] > 0
    if kind == "expanded":  # floats only: repeated indices or lengths mean something else
        return a.ndim >= 1 and a.shape[0] > 1 and a.dtype.kind == "f"
    return False


def _arrays(x) -> list:
    if isinstance(x, np.ndarray):
        return [x]
    if isinstance(x, (list, tuple)):
        return [a for v in x for a in _arrays(v)]
    if isinstance(x, dict):
        return _arrays(list(x.values()))
    return []


def _variant(lib, a: np.ndarray, kind: str):
    """``a`` as a tensor of ``lib`` laid out as ``kind`` says (the same values, except
    "expanded", whose dim 0 repeats the first row of a float array)."""
    if kind == "transposed" and a.ndim >= 2:
        rev = tuple(range(a.ndim))[::-1]
        return lib.tensor(np.ascontiguousarray(a.transpose(rev))).permute(rev)
    if kind == "permuted" and a.ndim >= 3:
        perm = (*range(1, a.ndim), 0)  # dim 0 innermost in memory
        inv = tuple(int(i) for i in np.argsort(perm))
        return lib.tensor(np.ascontiguousarray(a.transpose(perm))).permute(inv)
    if kind == "stepped" and a.ndim >= 1 and a.shape[-1]:
        return lib.tensor(np.repeat(a, 2, axis=-1))[..., ::2]
    if kind == "expanded" and _applies(a, kind):
        return lib.tensor(np.ascontiguousarray(a[:1])).expand(*a.shape)
    return lib.tensor(a)


def _convert(lib, x, kind):
    if isinstance(x, np.ndarray):
        return _variant(lib, x, kind)
    if isinstance(x, (list, tuple)):
        return type(x)(_convert(lib, v, kind) for v in x)
    if isinstance(x, dict):
        return {k: _convert(lib, v, kind) for k, v in x.items()}
    if isinstance(x, nt.dtype) and lib is torch:
        return getattr(torch, x.name)
    return x


def layout(t) -> tuple:
    """What a result's layout is compared on: shape, strides of its dims of size > 1,
    contiguity."""
    strides = None
    if t.numel():
        strides = tuple(s if n > 1 else None for s, n in zip(t.stride(), t.shape))
    return tuple(t.shape), strides, t.is_contiguous()


def _layouts(out, kind) -> list:
    return [layout(o) for o in tensor_leaves(out, kind)]


def _differences(op, kind: str) -> list:
    """(sample, numtorch's layouts, PyTorch's) of each sample of op whose results are laid
    out differently in the two libraries (samples PyTorch refuses are skipped)."""
    dtype = "float64" if "float64" in op.test.dtypes else op.test.dtypes[0]
    found = []
    for s in samples(op, dtype):
        if kind != "contiguous" and not any(_applies(a, kind) for a in _arrays((s.args, s.kwargs))):
            continue  # the same layouts as the contiguous variant
        try:
            torch.manual_seed(0)
            ref = resolve(torch, op.oracle or op.api)(
                *_convert(torch, s.args, kind), **_convert(torch, s.kwargs, kind)
            )
        except Exception:  # noqa: BLE001 - a variant PyTorch refuses is no layout case
            continue
        try:
            got = resolve(nt, op.api)(*_convert(nt, s.args, kind), **_convert(nt, s.kwargs, kind))
        except Exception as e:  # noqa: BLE001 - reported as the difference
            found.append((s, f"raised {type(e).__name__}: {e}", None))
            continue
        mine, theirs = _layouts(got, nt.Tensor), _layouts(ref, torch.Tensor)
        if mine != theirs:
            found.append((s, mine, theirs))
    return found


def _each(reason: str, ids: str) -> dict:
    return dict.fromkeys(ids.split(), reason)


# "op:variant" patterns (fnmatch) whose layouts still differ from PyTorch's, with the reason.
DIFFERS: dict[str, str] = {
    **_each(
        "numtorch's as_strided_scatter refuses a non-contiguous input (PyTorch's window is on "
        "its memory order, which numtorch does not reproduce)",
        "as_strided_scatter:transposed as_strided_scatter:stepped as_strided_scatter:expanded",
    ),
    "conj:stepped": "PyTorch's conj is a view keeping a stepped input's strides; numtorch's "
    "is a new tensor (NumPy has no conjugate view)",
    **_each(
        "the oracle is Tensor.copy_, which returns self itself (a stepped view's strides); "
        "numtorch's functional copy returns a new tensor laid out as empty_like(self)",
        "copy:stepped",
    ),
    **_each(
        "PyTorch's kron reshapes an elementwise product laid out as its (transposed) inputs; "
        "numtorch's is contiguous",
        "kron:transposed",
    ),
    **_each(
        "PyTorch's conj_physical of a real tensor returns an alias with the input's strides; "
        "numtorch's returns a contiguous copy",
        "conj_physical:stepped conj_physical:expanded",
    ),
    **_each(
        "PyTorch's unique(dim=) / unique_consecutive(dim=) return the unique slices "
        "transposed back from their sort (dim innermost); numtorch's are contiguous",
        "unique_dim:* unique_consecutive:contiguous unique_consecutive:transposed "
        "unique_consecutive:stepped unique_consecutive:expanded",
    ),
    **_each(
        "PyTorch's CPU convolution backend picks a channels-last result for this float64 "
        "input; numtorch's is contiguous",
        "conv2d:contiguous",
    ),
    **_each(
        "PyTorch's max_pool3d keeps a channels-last-3d input's layout (the permuted variant "
        "is one); numtorch's result is contiguous",
        "max_pool3d:permuted",
    ),
    **_each(
        "PyTorch's fused GRU cell lays its result out as the transposed hidden state "
        "(a TensorIterator); numtorch's composite gives it contiguous",
        "gru_cell:transposed",
    ),
}

OPS = [op for op in ops_with_samples() if not op.test.no_oracle]
CASES = [pytest.param(op, kind, id=f"{op.name}:{kind}") for op in OPS for kind in VARIANTS]


def _listed(case_id: str) -> str | None:
    for pat, why in DIFFERS.items():
        if fnmatch.fnmatchcase(case_id, pat):
            return why
    return None


@pytest.mark.parametrize("op,kind", CASES)
def test_result_layout_matches_torch(op, kind):
    found = _differences(op, kind)
    why = _listed(f"{op.name}:{kind}")
    if why is None:
        assert not found, "\n".join(f"{s}: numtorch {m} torch {t}" for s, m, t in found)
        return
    if found:
        pytest.xfail(why)
    pytest.fail(f"listed as differing ({why}), but matches PyTorch now: unlist it")


def test_every_listed_pattern_names_a_case():
    ids = [f"{op.name}:{kind}" for op in OPS for kind in VARIANTS]
    stale = [p for p in DIFFERS if not fnmatch.filter(ids, p)]
    assert not stale, f"DIFFERS: patterns that match no case: {stale}"


# ------------------------------------------------------------------ the causes, one test each
def _laid(t) -> tuple:
    """A result, its layout and whether ``.view(-1)`` works on it."""
    try:
        t.view(-1)
        views = True
    except RuntimeError:
        views = False
    return t, layout(t), views


def test_elementwise_result_follows_inputs_not_a_broadcast_cast():
    """An expanded (stride-0) operand that a cast or a composite kernel lays out again:
    the result still takes PyTorch's TensorIterator layout (fuzz: fmax, clamp, fmod of an
    expanded input, then .view(-1))."""

    def prog(lib, x, xi, b, m):
        y = x.float().expand(2, 2)
        yi = xi.long().expand(2, 2)
        t = m.T
        return [
            _laid(lib.fmax(y, b)),
            _laid(yi.clamp(min=-0.5, max=3)),
            _laid(lib.fmod(yi, b[0])),
            _laid(t.sin()),
            _laid(t + b[0]),
            _laid(lib.where(t > 0, t, b[0])),
        ]

    assert_same(prog, arr(1, 2), np.array([[-2, 1]]), arr(1), arr(3, 2))


def test_kernel_results_are_contiguous():
    """Kernels that allocate their result (cat, gather, reductions, norms, shuffles) give it
    contiguous whatever the inputs' layout (fuzz: cat of expanded inputs, then .view(-1))."""

    def prog(lib, x, w):
        y = x.expand(2, 4, 2)
        p = x.expand(3, 4, 2).permute(2, 0, 1)
        return [
            _laid(lib.cat([y, y], -3)),
            _laid(lib.stack([y, y], 1)),
            _laid(p.sum(1)),
            _laid(p.cumsum(1)),
            _laid(lib.nn.functional.layer_norm(p, (4,))),
            _laid(lib.nn.functional.pixel_shuffle(x.expand(2, 4, 2).permute(1, 2, 0)[None], 2)),
            _laid(p.roll(1, 1)),
            _laid(p.tril()),
        ]

    assert_same(prog, arr(1, 4, 2), arr(2))


def test_preserve_format_keeps_a_dense_layout():
    """clone, *_like, flip, sort, rot90 and tensor(ndarray) keep a dense input's layout
    (PyTorch's preserve_format); an expanded or stepped input gives a contiguous copy."""

    def prog(lib, x):
        t = x.T
        e = x[:1].expand(3, 4)
        return [
            _laid(t.clone()),
            _laid(e.clone()),
            _laid(lib.zeros_like(t)),
            _laid(lib.full_like(t, 2.0)),
            _laid(t.flip(0)),
            _laid(t.sort(0).values),
            _laid(t.rot90()),
            _laid(x.rot90()),
            _laid(lib.fill(t, 1.0)),
            _laid(lib.tensor(np.ascontiguousarray(np.ones((4, 3))).T)),
        ]

    assert_same(prog, arr(3, 4))


def test_pow_of_a_number_base_is_contiguous():
    """pow(Scalar, Tensor) allocates its result in PyTorch; pow(Tensor, x) follows the input."""

    def prog(lib, x):
        t = x.T
        return [_laid(2**t), _laid(lib.float_power(2, t)), _laid(t**2)]

    assert_same(prog, arr(2, 3))


def test_linalg_results_are_column_major():
    """LAPACK leaves each matrix column by column and PyTorch's linalg results keep that
    layout (XA = B's solution is the transpose of one)."""

    def prog(lib, a, b):
        a = a @ a.mT + 3 * lib.eye(3, dtype=a.dtype)
        return [
            _laid(lib.linalg.inv(a)),
            _laid(lib.linalg.cholesky(a)),
            _laid(lib.linalg.qr(a)[0]),
            _laid(lib.linalg.solve(a, b)),
            _laid(lib.linalg.solve(a, b.mT, left=False)),
            _laid(lib.nonzero(a > 0)),
        ]

    assert_same(prog, arr(3, 3), arr(3, 2))


def test_empty_results_have_pytorch_strides():
    """NumPy gives a new empty array all-zero strides; PyTorch's are contiguous ones."""

    def prog(lib, x):
        return [x.sin().stride(), x.T.sum(0).stride(), lib.empty(0, 3).stride(), x.is_contiguous()]

    assert_same(prog, np.zeros((0, 3)))


def test_ravel_copies_a_non_contiguous_input():
    """ravel is contiguous().view(-1): a stepped 1-d input gives a contiguous copy."""

    def prog(lib, x):
        s = x[::2]
        r = s.ravel()
        r.mul_(0)  # must not write into x
        return [_laid(r), x]

    assert_same(prog, arr(6))


def test_reshape_of_an_expanded_tensor_under_grad_is_a_copy():
    """reshape/flatten that cannot view copy, also under func.grad: an in-place write into
    the copy is no write into a view of the input."""

    def prog(lib, x):
        def f(x):
            y = x.expand(2, 3).reshape(6)
            y.mul_(2)
            z = x.expand(2, 3).flatten()
            z.add_(1)
            return (y * z).sum()

        return lib.func.grad(f)(x)

    assert_same(prog, arr(1, 3))


def test_jvp_tangents_keep_the_primal_layout():
    """A tangent laid out otherwise than its primal is copied into the primal's layout, so
    that a view of the primal is a view of the tangent too."""

    def prog(lib, x, t):
        def f(x):
            return (x.view(-1) * 2, (x.mT * 2).mT.view(-1))

        xt = x.reshape(3, 2).T
        out, tan = lib.func.jvp(f, (x,), (t.reshape(3, 2).T,))
        p2, t2 = lib.func.jvp(lambda y: y.sin(), (xt,), (t,))
        return [out, tan, _laid(p2), _laid(t2)]

    assert_same(prog, arr(2, 3), arr(2, 3))


def test_index_result_follows_the_input_layout():
    """Advanced indexing lays its result out as the (restrided) input, so under vmap with
    in_dims=-1 (the batch dim innermost in memory) a gathered example is not contiguous."""

    def prog(lib, x):
        t = x.T
        return [_laid(t[[0, 0]]), _laid(t[:, [1, 0]]), _laid(x[[1, 0]])]

    assert_same(prog, arr(3, 2))
    assert_same_error(
        lambda lib, xb: lib.func.vmap(lambda y: y[[0, 0]].view(-1), in_dims=-1)(xb),
        arr(1, 2, 1, 2),
    )


def test_size_one_dims_of_an_elementwise_result_take_pytorchs_strides():
    """TensorIterator gives a size-1 dim of a permuted result the stride of its place in
    the order; an advanced index then reads it, which decides under vmap with in_dims=-1
    whether a gathered example views."""

    def prog(lib, x):
        r = x.unsqueeze(1).movedim(-1, 0) * 1
        return [r.stride(), r[:, [0, 0]].stride(), _laid(r[:, [0, 0]])]

    assert_same(prog, arr(1, 2, 2))
    assert_same(
        lambda lib, x: lib.func.vmap(lambda y: (y[:, None] * 1)[[0, 0]].view(-1), in_dims=-1)(x),
        arr(1, 2, 2),
    )


def test_a_dense_input_with_odd_size_one_strides_keeps_them():
    """x.mT of a (2, 1) column has strides (1, 1): empty_like (clone, zeros_like) copies a
    dense tensor's strides, TensorIterator orders dims by them where its operands differ in
    shape (a number), and allocates contiguous where they do not. The overlap check of a
    later in-place write reads them: y.t() of such a clone is y's memory at y's strides (no
    partial overlap), so mul_ fails on the broadcast shape instead."""

    def prog(lib, x):
        y = x.mT
        outs = [y.clone(), lib.zeros_like(y), y * 1, y + lib.tensor(1.0), y.exp(), y + y]
        return [t.stride() for t in outs] + [_laid(t) for t in outs]

    def write(lib, x):
        y = x.mT.contiguous().clone()
        y.t().mul_(y)

    assert_same(prog, arr(2, 1))
    assert_same_error(write, arr(2, 1))


def test_a_size_one_dims_stride_orders_an_elementwise_result_past_an_expanded_dim():
    """TensorIterator compares a size-1 dim's stride with the others (an expanded dim tells
    nothing, so the comparison goes past it): strides (1, 0, 2) give a (1, 2, 4) result.
    Under vmap with in_dims=-1 an expanded example is laid out so, and a later view of a
    where() of it views as in torch.func.vmap."""

    def prog(lib, x):
        t = x.reshape(-1).as_strided((2, 2, 1), (1, 0, 2))
        return [r.stride() for r in (t.exp(), t > 0, t * 1, lib.where(t > 0, t, 0.0))]

    def vmapped(lib, x, b):
        def f(y, b):
            y = lib.where(y.expand(2, 1) > 0, y.expand(2, 1), b)
            y.view(-1)[:1].sin_()
            return y

        return lib.func.vmap(f, in_dims=-1)(x, b)

    assert_same(prog, arr(4))
    assert_same(vmapped, arr(1, 1, 2), arr(2, 1, 1, 2))


def _stride_of_grads(lib, x_shape, w_shape):
    """The strides of dL/dW and dL/dx for L = sum(linear(x, W) * t) (W seen through .mT)."""
    rng = np.random.default_rng(0)
    x = lib.tensor(rng.standard_normal(x_shape)).requires_grad_()
    w = lib.tensor(rng.standard_normal(w_shape)).requires_grad_()
    t = lib.tensor(rng.standard_normal((*x_shape[:-1], w_shape[0])))
    (lib.nn.functional.linear(x, w) * t).sum().backward()
    return x.grad.stride(), w.grad.stride(), x.grad, w.grad


@pytest.mark.parametrize("x_shape", [(5, 3), (1, 3), (2, 4, 3)])
def test_matmul_gradient_of_a_transposed_factor_keeps_its_layout(x_shape):
    # PyTorch's mm backward computes the gradient of a column-major factor transposed, so
    # that a weight used as W.mT gets a row-major gradient
    ours = _stride_of_grads(nt, x_shape, (4, 3))
    theirs = _stride_of_grads(torch, x_shape, (4, 3))
    assert ours[:2] == theirs[:2]
    assert_close(ours[2:], theirs[2:])


def test_per_sample_linear_weight_gradients_are_contiguous():
    rng = np.random.default_rng(1)
    w0, x0 = rng.standard_normal((6, 5)), rng.standard_normal((7, 5))

    def run(lib):
        w, x = lib.tensor(w0), lib.tensor(x0)
        f = lambda w, x: lib.nn.functional.linear(x.unsqueeze(0), w).tanh().sum()  # noqa: E731
        return lib.func.vmap(lib.func.grad(f), in_dims=(None, 0))(w, x)

    ours, theirs = run(nt), run(torch)
    assert ours.stride() == theirs.stride() == (30, 5, 1)
    assert_close(ours, theirs)


def test_first_vmap_multiplies_a_matrix_by_a_batch_of_vectors_batch_first():
    """PyTorch's first vmap (autograd.functional's vectorized jacobian and hessian,
    is_grads_batched) computes a matrix times a batch of vectors with the batch as rows,
    where torch.func's vmap keeps the batch as the product's last dim: results' strides
    (and values) as PyTorch's."""
    rng = np.random.default_rng(3)
    w0, x0 = rng.standard_normal((5, 3)), rng.standard_normal((4, 3))

    def run(lib):
        w, x = lib.tensor(w0), lib.tensor(x0)
        f = lambda v: (w @ v).tanh()  # noqa: E731
        first = lib._vmap_internals._vmap(lambda v: w @ v)(x)
        func = lib.func.vmap(lambda v: w @ v)(x)
        jac = lib.autograd.functional.jacobian(f, x[0], vectorize=True)
        hess = lib.autograd.functional.hessian(lambda v: f(v).sum(), x[0], vectorize=True)
        return first, func, jac, hess

    ours, theirs = run(nt), run(torch)
    assert [t.stride() for t in ours] == [t.stride() for t in theirs]
    assert_close(ours, theirs)


def test_a_large_product_of_reordered_operands_is_written_in_pytorchs_layout():
    """A product too large to copy cheaply (mul writes it straight into the layout its
    operands give it): per-sample weight gradients of a matrix-vector layer, whose
    batched gradient has the batch as its innermost dim, and a product of a transposed
    factor; strides and values as PyTorch's."""
    rng = np.random.default_rng(2)
    w0, x0 = rng.standard_normal((40, 300)) / 300**0.5, rng.standard_normal((16, 300))
    a0, b0 = rng.standard_normal((300, 256)), rng.standard_normal((256, 1))

    def run(lib):
        w, x = lib.tensor(w0), lib.tensor(x0)
        f = lambda w, x: (w @ x).tanh().sum()  # noqa: E731
        grads = lib.func.vmap(lib.func.grad(f), in_dims=(None, 0))(w, x)
        prod = lib.tensor(a0).T * lib.tensor(b0)
        return grads, prod

    (g, p), (tg, tp) = run(nt), run(torch)
    assert g.stride() == tg.stride() and p.stride() == tp.stride()
    assert_close(g, tg)
    assert_close(p, tp)


# Ops whose result PyTorch returns as (a view of) an input where numtorch's is a new tensor.
ALIASES_DIFFER = {
    "copy": "the oracle is Tensor.copy_, which returns self",
    "conj_physical": "PyTorch's conj_physical of a real tensor returns the input itself",
    "conj": "PyTorch's conj is a lazy view (the conjugate bit); numtorch's is a new tensor",
}


def _shared(lib, out, args) -> list:
    """For each result tensor, which argument tensors it shares memory with."""
    ins = tensor_leaves((args,), lib.Tensor)
    rows = []
    for o in tensor_leaves((out,), lib.Tensor):
        if lib is nt:
            rows.append(tuple(bool(np.shares_memory(o._data, i._data)) for i in ins))
        else:
            ptr = o.untyped_storage().data_ptr()
            rows.append(tuple(o.numel() > 0 and i.untyped_storage().data_ptr() == ptr for i in ins))
    return rows


@pytest.mark.parametrize(
    "op", [o for o in OPS if o.name not in ALIASES_DIFFER], ids=lambda o: o.name
)
def test_results_share_memory_with_inputs_as_torchs_do(op):
    # a result that views an input where PyTorch's is new would carry writes into the input
    for kind in VARIANTS:
        for s in samples(op, "float32"):
            if not any(_applies(a, kind) for a in _arrays(s.args)) and kind != "contiguous":
                continue
            try:
                targs = (_convert(torch, s.args, kind), _convert(torch, s.kwargs, kind))
                torch.manual_seed(0)
                ref = resolve(torch, op.oracle or op.api)(*targs[0], **targs[1])
                nargs = (_convert(nt, s.args, kind), _convert(nt, s.kwargs, kind))
                got = resolve(nt, op.api)(*nargs[0], **nargs[1])
            except Exception:  # noqa: BLE001 - errors are the other sweeps' business
                continue
            assert _shared(nt, got, nargs) == _shared(torch, ref, targs), f"{kind}: {s}"


def test_unsqueeze_keeps_every_stride_and_steps_the_new_dim_as_pytorch():
    # size-one dims included: later layouts (an index's result order) follow them
    def prog(L):
        t = L.arange(8.0).reshape(2, 4)
        cases = [t[:1].mT, t[:, ::2], L.tensor(3.0), t.mT[:, :1]]
        return [c.unsqueeze(d).stride() for c in cases for d in range(-c.dim() - 1, c.dim() + 1)]

    assert prog(nt) == prog(torch)


def test_a_view_of_an_index_of_an_expansion_under_vmap():
    # expand's new dims under vmap kept a size-one dim's stride (a reshape had changed it),
    # so the index's result came out in another order and view(-1) refused it
    xb = np.arange(8.0).reshape(1, 4, 2)

    def prog(L):
        def f(x):
            y = L.broadcast_to(x.mT, (2, 4, 1))[[0, 0]]
            y.view(-1)[:1].sin_()
            return y, x.mT.expand(2, 4, 1).stride()

        return L.func.vmap(f, in_dims=-1, out_dims=(0, None))(L.tensor(xb))

    assert_same(prog)


# ==================================================================
# Issue 14's sweep of aliasing and saved values.


def test_clone_keeps_dense_strides():
    def prog(lib, x):
        return [
            list(x.t().clone().stride()),
            list(x.permute(1, 0).contiguous().stride()),
            list(x[:, ::2].t().clone().stride()),
            list(x.clone().stride()),
        ]

    assert_same(prog, arr(3, 4))


# ------------------------------------------------------------------ contiguous results
@pytest.mark.parametrize(
    "op",
    [
        pytest.param(lambda x: x.sum(1), id="sum"),
        pytest.param(lambda x: x.sum(1, keepdim=True), id="sum-keepdim"),
        pytest.param(lambda x: x.mean(1), id="mean"),
        pytest.param(lambda x: x.amax(0), id="amax"),
        pytest.param(lambda x: x.max(1)[0], id="max-dim"),
        pytest.param(lambda x: x.var(1), id="var"),
        pytest.param(lambda x: x.logsumexp(1), id="logsumexp"),
        pytest.param(lambda x: x.norm(dim=1), id="norm"),
        pytest.param(lambda x: x.softmax(1), id="softmax"),
        pytest.param(lambda x: x.cumsum(1), id="cumsum"),
        pytest.param(lambda x: x.cummax(1)[0], id="cummax"),
        pytest.param(lambda x: (x > 0).any(1), id="any"),
    ],
)
def test_reduction_of_a_permuted_input_is_contiguous(op):
    def prog(lib, x):
        y = op(x.permute(2, 0, 1))
        return y.is_contiguous(), list(y.stride()), y.reshape(-1).view(-1)

    assert_same(prog, arr(2, 3, 4))


# ------------------------------------------------------------------ reductions' size-1 strides
@pytest.mark.parametrize(
    "reduce",
    [
        lambda x: x.amax(1, keepdim=True),
        lambda x: x.sum(1, keepdim=True),
        lambda x: x.amin(0, keepdim=True),
        lambda x: x.prod(-1, keepdim=True),
        lambda x: x.cumsum(1),
    ],
)
@pytest.mark.parametrize("make", [lambda x: x.t(), lambda x: x.reshape(2, 2, 3).permute(2, 1, 0)])
def test_reductions_are_contiguous_in_their_size_1_dims_too(reduce, make):
    # PyTorch allocates them contiguous: a size-1 dim's stride is the product of the later
    # sizes, whatever NumPy's kernel left there (later layouts and overlap checks read it)
    assert_same(lambda L, x: reduce(make(x)).stride(), np.arange(12.0).reshape(4, 3))


def test_a_write_through_a_transposed_reduction_under_vmap():
    # y.t() and y (1 x 1 per sample) are the same memory in the same layout: no overlap
    def prog(L, x):
        def f(x):
            y = x.amax(-2, keepdim=True).contiguous().clone()
            y.t().mul_(y)
            return y

        return L.func.vmap(f, in_dims=-1)(x)

    assert_same(prog, np.array([1.31, -1.66, -1.56, 2.17]).reshape(2, 1, 2))
