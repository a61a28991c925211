"""The public surface the foundation promises, and every Python operator against PyTorch."""

from __future__ import annotations

import importlib.util
import inspect
import operator
import warnings

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


# ------------------------------------------------------------------ every public name of PyTorch
def _each(reason: str, names: str) -> dict[str, str]:
    return dict.fromkeys(names.split(), reason)


_PYTHON = "a module or name PyTorch imports for its own use, not API"
_ISSUE_32 = "torch.distributed: issue 32"
_ISSUE_33 = "the program shell around the math (jit, autocast, profiler, backends, ...): issue 33"
_SPARSE = "sparse tensors and layouts: out of scope (dense NumPy arrays only)"
_QUANTIZED = "quantized tensors and dtypes: out of scope"
_ACCELERATOR = "an accelerator or its vendor library (CUDA, cuDNN, MIOpen, oneDNN, MPS, XPU, MTIA)"
_SUBBYTE = (
    "sub-byte and packed dtypes, and the wide unsigned ones: PyTorch has almost no kernel for them"
)
_JIT = "TorchScript's IR, types and runtime (jit): issue 33"
_SYMBOLIC = "torch.compile's symbolic shapes and control-flow operators: issue 33"

EXCLUDED: dict[str, dict[str, str]] = {
    "torch": {
        **_each(
            _PYTHON,
            "builtins ctypes functools glob importlib inspect math os platform sys textwrap "
            "threading types warnings TYPE_CHECKING USE_GLOBAL_DEPS USE_RTLD_GLOBAL_WITH_LIBTORCH "
            "classproperty torch get_file_path prepare_multiprocessing_environment "
            "profiler_allow_cudagraph_cupti_lazy_reinit_cuda12 PRIVATE_OPS",
        ),
        **_each(
            _JIT,
            "AliasDb AnyType Argument ArgumentSpec AwaitType Block BoolType BufferDict CallStack "
            "Capsule ClassType Code CompilationUnit CompleteArgumentSpec ComplexType "
            "ConcreteModuleType ConcreteModuleTypeBuilder DeepCopyMemoTable "
            "DeserializationStorageContext DeviceObjType DictType EnumType ErrorReport "
            "ExecutionPlan FatalError FileCheck FloatType FunctionSchema Future FutureType "
            "Gradient Graph GraphExecutorState IODescriptor InferredType IntType InterfaceType "
            "JITException ListType LiteScriptModule LockingLogger LoggerBase ModuleDict Node "
            "NoneType NoopLogger NumberType OperatorInfo OptionalType ParameterDict PyObjectType "
            "PyTorchFileReader PyTorchFileWriter RRefType ScriptClass ScriptClassFunction "
            "ScriptDict ScriptDictIterator ScriptDictKeyIterator ScriptFunction ScriptList "
            "ScriptListIterator ScriptMethod ScriptModule ScriptModuleSerializer ScriptObject "
            "ScriptObjectProperty SerializationStorageContext StaticModule StreamObjType "
            "StringType SymBoolType SymIntType TensorType ThroughputBenchmark BenchmarkConfig "
            "BenchmarkExecutionStats TracingState TupleType Type UnionType Use Value "
            "AggregationType AVG SUM Tag DispatchKey DispatchKeySet ExcludeDispatchKeyGuard "
            "DisableTorchFunction DisableTorchFunctionSubclass import_ir_module "
            "import_ir_module_from_buffer merge_type_from_type_comment parse_ir parse_schema "
            "parse_type_comment unify_type_list fork wait classes cpp library overrides",
        ),
        **_each(
            _ISSUE_33,
            "export fx compiler package multiprocessing monitor "
            "futures return_types masked nested jagged onnx "
            "BFloat16Storage BoolStorage "
            "ByteStorage CharStorage ComplexDoubleStorage "
            "ComplexFloatStorage DoubleStorage FloatStorage HalfStorage "
            "IntStorage LongStorage ShortStorage "
            "Storage StorageBase TypedStorage UntypedStorage storage from_file quasirandom "
            "hash_tensor slice_inverse",
        ),
        **_each(
            _SYMBOLIC,
            "SymBool SymFloat SymInt sym_constrain_range sym_constrain_range_for_size sym_float "
            "sym_fresh_size sym_int sym_ite sym_max sym_min sym_not sym_sqrt sym_sum cond "
            "while_loop",
        ),
        "is_distributed": _ISSUE_32,
        **_each(
            _SPARSE,
            "sparse sparse_bsc sparse_bsc_tensor sparse_bsr sparse_bsr_tensor "
            "sparse_compressed_tensor sparse_coo sparse_coo_tensor sparse_csc sparse_csc_tensor "
            "sparse_csr sparse_csr_tensor dsmm hsmm hspmm saddmm smm spmm sspaddmm "
            "resize_as_sparse_ ccol_indices_copy col_indices_copy crow_indices_copy "
            "indices_copy row_indices_copy values_copy",
        ),
        **_each(
            _QUANTIZED,
            "QInt32Storage QInt8Storage QUInt2x4Storage QUInt4x2Storage QUInt8Storage ao "
            "choose_qparams_optimized dequantize empty_quantized fake_quantize_per_channel_affine "
            "fake_quantize_per_tensor_affine fbgemm_linear_fp16_weight "
            "fbgemm_linear_fp16_weight_fp32_activation fbgemm_linear_int8_weight "
            "fbgemm_linear_int8_weight_fp32_activation fbgemm_linear_quantize_weight "
            "fbgemm_pack_gemm_matrix_fp16 fbgemm_pack_quantized_matrix "
            "fused_moving_avg_obs_fake_quant int_repr per_channel_affine "
            "per_channel_affine_float_qparams per_channel_symmetric per_tensor_affine "
            "per_tensor_symmetric q_per_channel_axis q_per_channel_scales "
            "q_per_channel_zero_points q_scale q_zero_point qint32 qint8 qscheme quantization "
            "quantize_per_channel quantize_per_tensor quantize_per_tensor_dynamic "
            "quantized_batch_norm quantized_gru quantized_gru_cell quantized_lstm "
            "quantized_lstm_cell quantized_max_pool1d quantized_max_pool2d quantized_max_pool3d "
            "quantized_rnn_relu_cell quantized_rnn_tanh_cell quint2x4 quint4x2 quint8",
        ),
        **_each(
            _ACCELERATOR,
            "AcceleratorError OutOfMemoryError Stream Event accelerator mps mtia xpu "
            "get_device_module cudnn_affine_grid_generator cudnn_batch_norm cudnn_convolution "
            "cudnn_convolution_add_relu cudnn_convolution_relu cudnn_convolution_transpose "
            "cudnn_grid_sampler cudnn_is_acceptable miopen_batch_norm miopen_convolution "
            "miopen_convolution_add_relu miopen_convolution_relu miopen_convolution_transpose "
            "miopen_ctc_loss miopen_depthwise_convolution miopen_rnn mkldnn_adaptive_avg_pool2d "
            "mkldnn_convolution mkldnn_linear_backward_weights mkldnn_max_pool2d "
            "mkldnn_max_pool3d mkldnn_rnn_layer",
        ),
        **_each(
            _SUBBYTE,
            "bit bits16 bits1x8 bits2x4 bits4x2 bits8 int1 int2 int3 int4 int5 int6 int7 uint1 "
            "uint2 uint3 uint4 uint5 uint6 uint7 uint16 uint32 uint64 float4_e2m1fn_x2",
        ),
    },
    "Tensor": {
        **_each(
            _SPARSE,
            "ccol_indices coalesce col_indices crow_indices dense_dim indices is_coalesced "
            "resize_as_sparse_ row_indices smm sparse_dim sparse_mask sparse_resize_ "
            "sparse_resize_and_clear_ sspaddmm to_sparse to_sparse_bsc to_sparse_bsr "
            "to_sparse_coo to_sparse_csc to_sparse_csr values",
        ),
        **_each(
            _QUANTIZED,
            "dequantize int_repr q_per_channel_axis q_per_channel_scales "
            "q_per_channel_zero_points q_scale q_zero_point qscheme",
        ),
        **_each(_ACCELERATOR, "ipu mtia xpu to_mkldnn"),
        "is_distributed": _ISSUE_32,
        **_each(_ISSUE_33, "storage storage_type untyped_storage slice_inverse hash_tensor"),
        "to_padded_tensor": "nested tensors: issue 33",
        "index": "functorch's first-class dimensions (functorch.dim): not a tensor operation",
    },
    "fft": _each(_PYTHON, "Tensor torch common_args factory_common_args"),
    "linalg": _each(_PYTHON, "common_notes"),
    "special": _each(_PYTHON, "Tensor torch common_args multi_dim_common"),
    "nn": {
        **_each(_PYTHON, "common_types factory_kwargs grad"),
        **_each(_QUANTIZED, "intrinsic qat quantizable quantized"),
        **_each(_ISSUE_33, "attention"),
    },
    "nn.functional": _each(
        _PYTHON,
        "BroadcastingList1 BroadcastingList2 BroadcastingList3 Callable DType Optional "
        "TYPE_CHECKING Tensor assert_int_or_pair boolean_dispatch dataclasses grad "
        "handle_torch_function has_torch_function has_torch_function_unary "
        "has_torch_function_variadic importlib math np reproducibility_notes "
        "sparse_support_notes tf32_notes torch warnings GRID_SAMPLE_INTERPOLATION_MODES "
        "GRID_SAMPLE_PADDING_MODES",
    ),
    "optim": {},
}


def _namespaces():
    import torch.fft
    import torch.nn.functional

    import numtorch.fft
    import numtorch.nn.functional

    return {
        "torch": (torch, nt),
        "Tensor": (torch.Tensor, nt.Tensor),
        "fft": (torch.fft, numtorch.fft),
        "linalg": (torch.linalg, nt.linalg),
        "special": (torch.special, nt.special),
        "nn": (torch.nn, nt.nn),
        "nn.functional": (torch.nn.functional, numtorch.nn.functional),
        "optim": (torch.optim, nt.optim),
    }


def _submodule(path: str) -> bool:
    """Whether path is a submodule PyTorch loads lazily (in dir() only once imported)."""
    try:
        return importlib.util.find_spec(path) is not None
    except (ImportError, ValueError):
        return False


@pytest.mark.parametrize("name", list(EXCLUDED))
def test_every_public_name_of_pytorch_exists_or_is_excluded_with_a_reason(name):
    theirs, ours = _namespaces()[name]
    public = {n for n in dir(theirs) if not n.startswith("_")}
    missing = sorted(n for n in public if not hasattr(ours, n) and n not in EXCLUDED[name])
    assert missing == [], f"torch.{name}: missing names"
    lazy = {n for n in EXCLUDED[name] if n not in public and _submodule(f"torch.{n}")}
    stale = sorted(
        n for n in EXCLUDED[name] if (n not in public and n not in lazy) or hasattr(ours, n)
    )
    assert stale == [], f"torch.{name}: exclusions that exist now or are not PyTorch's"


# torch.distributions: the names each namespace promises (its __all__ and, for the package,
# its submodules), and the ones numtorch leaves out (none).
DISTRIBUTIONS_EXCLUDED: dict[str, dict[str, str]] = {
    "distributions": {},
    "distributions.transforms": {},
    "distributions.constraints": {},
    "distributions.kl": {},
}


def _promised(module) -> set[str]:
    """A namespace's public names: its __all__, and the submodules a package holds."""
    prefix = module.__name__ + "."
    submodules = {
        n
        for n in dir(module)
        if inspect.ismodule(getattr(module, n)) and getattr(module, n).__name__.startswith(prefix)
    }
    return set(module.__all__) | submodules


@pytest.mark.parametrize("name", list(DISTRIBUTIONS_EXCLUDED))
def test_every_public_name_of_torch_distributions_exists_or_is_excluded(name):
    theirs = importlib.import_module(f"torch.{name}")
    ours = importlib.import_module(f"numtorch.{name}")
    public = _promised(theirs)
    excluded = DISTRIBUTIONS_EXCLUDED[name]
    missing = sorted(n for n in public if not hasattr(ours, n) and n not in excluded)
    assert missing == [], f"torch.{name}: missing names"
    stale = sorted(n for n in excluded if n not in public or hasattr(ours, n))
    assert stale == [], f"torch.{name}: exclusions that exist now or are not PyTorch's"


# Operators with foreign operands: NotImplemented, so Python tries the other side (a NumPy
# scalar is a Python number, a sequence may repeat by a one-element integer tensor).
class _Reflects:
    def __radd__(self, other):
        return "radd"

    def __rmul__(self, other):
        return "rmul"

    def __rsub__(self, other):
        return "rsub"

    def __gt__(self, other):
        return "gt"


_FOREIGN = {
    "list": lambda: [1],
    "tuple": lambda: (0,),
    "str": lambda: "a",
    "None": lambda: None,
    "object": object,
    "array": lambda: np.array([1, 2]),
    "float32": lambda: np.float32(3),
    "float64": lambda: np.float64(3),
    "int64": lambda: np.int64(3),
    "npbool": lambda: np.bool_(True),
    "reflects": _Reflects,
}
_BINARY = ["+", "-", "*", "/", "//", "%", "**", "@", "&", "|", "<<", "<", "<=", ">", ">=", "!="]


@pytest.mark.parametrize("dtype", ["float32", "int64"])
@pytest.mark.parametrize("kind", list(_FOREIGN))
@pytest.mark.parametrize("op", _BINARY)
def test_operators_with_foreign_operands(op, kind, dtype):
    def run(left):
        def prog(T):
            t = T.tensor([1, 2], dtype=getattr(T, dtype))
            a, b = (t, _FOREIGN[kind]()) if left else (_FOREIGN[kind](), t)
            return eval(f"a {op} b")

        return prog

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_same_outcome(run(True))
        assert_same_outcome(run(False))


@pytest.mark.parametrize("kind", list(_FOREIGN))
@pytest.mark.parametrize("name", ["__iadd__", "__imul__", "__itruediv__", "__isub__", "__eq__"])
def test_inplace_and_eq_dunders_with_foreign_operands(name, kind):
    if kind == "array" and name == "__eq__":  # (PyTorch's __eq__ alone takes an array)
        return

    def prog(T):
        r = getattr(T.tensor([1, 2]), name)(_FOREIGN[kind]())
        return "NotImplemented" if r is NotImplemented else r

    assert_same_outcome(prog)


def test_sequence_repeats_by_integer_tensor():
    assert_same_outcome(lambda T: ([1] * T.tensor(2), (0,) * T.tensor(2), T.tensor(3) * "ab"))
    assert_same_outcome(lambda T: [1] * T.tensor(2.0))
