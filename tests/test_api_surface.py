"""The public surface the foundation promises, and every Python operator against PyTorch."""

from __future__ import annotations

import inspect
import operator

import numpy as np
import pytest
import torch
from twolibs import Raised, assert_same, assert_same_outcome

import numtorch as nt

FUNCS = """neg abs sign exp exp2 log log2 log10 log1p expm1 sqrt rsqrt square sin cos tan asin acos
atan sinh cosh tanh asinh acosh atanh sigmoid logit relu erf erfc erfinv reciprocal floor ceil round
trunc frac nan_to_num isnan isinf isfinite add sub mul div true_divide floor_divide pow maximum
minimum fmax fmin atan2 remainder fmod hypot copysign xlogy lerp addcmul addcdiv clamp clip eq ne gt
ge lt le isclose allclose equal logical_and logical_or logical_xor logical_not where sum mean prod
amax amin max min argmax argmin var std var_mean norm logsumexp softmax log_softmax cumsum cumprod
cummax cummin logcumsumexp all any count_nonzero sort argsort topk kthvalue median reshape permute
transpose swapaxes t squeeze unsqueeze broadcast_to flatten unflatten cat concatenate stack hstack
vstack split chunk tensor_split unbind flip fliplr flipud roll rot90 tril triu diag diagonal
diag_embed movedim narrow repeat_interleave tile gather scatter scatter_add scatter_reduce
index_select index_add index_fill index_copy index_put take take_along_dim put masked_fill
masked_scatter masked_select nonzero matmul mm bmm mv dot vdot outer ger inner tensordot einsum addmm
baddbmm kron cross trace matrix_exp tensor as_tensor from_numpy zeros ones empty full zeros_like
ones_like empty_like full_like arange linspace eye rand randn randint normal manual_seed no_grad
enable_grad set_grad_enabled inference_mode is_grad_enabled""".split()
LINALG = (
    "solve inv det slogdet cholesky qr eigh svd matrix_norm solve_triangular vector_norm".split()
)
METHODS = """view view_as expand expand_as repeat reshape permute transpose t squeeze unsqueeze flatten
unflatten narrow diagonal unbind split chunk numpy item tolist size dim numel to type_as float double
long int bool half clone detach detach_ contiguous requires_grad_ backward register_hook retain_grad
add_ sub_ mul_ div_ pow_ clamp_ fill_ zero_ copy_ masked_fill_ index_fill_ scatter_ tril_ triu_ exp_
log_ sin_ sqrt_ neg_ abs_ sigmoid_ tanh_ relu_ shape ndim dtype device T mT is_leaf grad grad_fn
requires_grad data""".split()


def test_every_promised_name_exists():
    missing = [n for n in FUNCS if not hasattr(nt, n)]
    missing += ["linalg." + n for n in LINALG if not hasattr(nt.linalg, n)]
    missing += ["Tensor." + n for n in METHODS if not hasattr(nt.Tensor, n)]
    assert missing == []


BINARY = [
    operator.add,
    operator.sub,
    operator.mul,
    operator.truediv,
    operator.floordiv,
    operator.mod,
    operator.pow,
    operator.lt,
    operator.le,
    operator.gt,
    operator.ge,
    operator.eq,
    operator.ne,
]
INPLACE = [
    operator.iadd,
    operator.isub,
    operator.imul,
    operator.itruediv,
    operator.ipow,
    operator.imod,
    operator.ifloordiv,
]
BITWISE = [operator.and_, operator.or_, operator.xor, operator.lshift, operator.rshift]


# The operators run in float32 or on integers and bools: compared at rtol=1e-6.
@pytest.mark.parametrize("op", BINARY, ids=lambda f: f.__name__)
@pytest.mark.parametrize("other", [2, 2.5, "tensor"], ids=str)
def test_binary_operators_and_reflected(op, other):
    def prog(T):
        a = T.tensor([1.5, 2.0, 3.0])
        o = T.tensor([0.5, 4.0, 1.5]) if other == "tensor" else other
        return op(a, o), op(o, a)

    assert_same(prog, rtol=1e-6, atol=0)


@pytest.mark.parametrize("op", INPLACE, ids=lambda f: f.__name__)
def test_inplace_operators_keep_identity(op):
    def prog(T):
        a = T.tensor([1.5, 2.0, 3.0])
        r = op(a, 2.0)
        return r, r is a, a._version

    r, same_object, version = assert_same(prog, rtol=1e-6, atol=0)
    assert same_object and version == 1


@pytest.mark.parametrize("op", BITWISE, ids=lambda f: f.__name__)
def test_bitwise_operators(op):
    def prog(T):
        a = T.tensor([1, 6, 3])
        return op(a, 2), op(a, a)

    assert_same(prog, rtol=1e-6, atol=0)


def test_unary_and_matmul_operators():
    def prog(T):
        a = T.tensor([[1.5, -2.0], [3.0, 0.5]])
        b = a.clone()
        b @= a
        return -a, abs(a), a @ a, ~T.tensor([True, False]), b

    assert_same(prog, rtol=1e-6, atol=0)


def test_views_share_memory_and_version_counter():
    x = nt.arange(24.0).reshape(2, 3, 4).clone()
    views = [
        x[0],
        x[:, 1:3],
        x[..., ::2],
        x[None],
        x.view(6, 4),
        x.reshape(24),
        x.transpose(0, 2),
        x.permute(2, 0, 1),
        x[:1].expand(5, 3, 4),
        x[:, :1].squeeze(1),
        x.unsqueeze(0),
        x.narrow(2, 1, 2),
        x.diagonal(0, 1, 2),
        x.unbind(0)[1],
        x.split(1, 2)[3],
        x.mT,
    ]
    for v in views:
        assert np.shares_memory(v.numpy(), x.numpy()) and v._base is x
    x.add_(1)
    assert all(v._version == 1 for v in views)
    x[0, 0, 0] = 100.0
    assert views[0][0, 0].item() == 100.0 and views[5][0].item() == 100.0


@pytest.mark.parametrize("shapes", [((2,), (3,)), ((2, 3), (4, 1, 3), (5,)), ((2, 1), (3,), ())])
def test_broadcast_shapes_and_tensors_match_torch(shapes):
    shape = lambda T: list(T.broadcast_shapes(*shapes))
    tensors = lambda T: [list(t.shape) for t in T.broadcast_tensors(*[T.zeros(s) for s in shapes])]
    for prog in (shape, tensors):
        res = assert_same_outcome(prog)
        assert not isinstance(res, Raised) or res.type is RuntimeError, res


def _params(fn):
    return [(p.name, p.default) for p in inspect.signature(fn).parameters.values()]


def _python_signature(fn) -> bool:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return [p.kind for p in params.values()] != [
        inspect.Parameter.VAR_POSITIONAL,
        inspect.Parameter.VAR_KEYWORD,
    ]


NN_FUNCTIONAL = sorted(
    name
    for name in dir(nt.nn.functional)
    if not name.startswith("_")
    and callable(getattr(nt.nn.functional, name))
    and _python_signature(getattr(torch.nn.functional, name, None))
)


@pytest.mark.parametrize("name", NN_FUNCTIONAL)
def test_nn_functional_signatures_match_torch(name):
    """Parameter names, order and defaults as torch.nn.functional's Python functions."""
    assert _params(getattr(nt.nn.functional, name)) == _params(getattr(torch.nn.functional, name))


# ==================================================================
# The functions added for issue 14, beyond the op database's generic tests.


def test_no_tensor_method_that_torch_lacks():
    extra = [n for n in dir(nt.Tensor) if not n.startswith("_") and not hasattr(torch.Tensor, n)]
    assert extra == []
