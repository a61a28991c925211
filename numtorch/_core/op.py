"""The op registry: one definition per operator.

An ``Op`` holds everything the system needs about an operator: the kernel (a
function of backend arrays), one vjp formula per differentiable input, a jvp
formula, a batch-rule slot, and sample inputs for the test database. Formulas
name what they need by parameter name: ``g`` (the output gradient), ``result``
(the output), the op's inputs and attributes, and ``<input>_shape`` (an input's
shape, saved without keeping the tensor); tangents are ``t`` (single input) or
``t<input>``.

Two optional fields serve ops that are not array kernels (``autograd.Function``): ``impl``
is a tensor-level implementation that ``dispatch`` runs at level 0 instead of the kernel
(it records its own node), and ``recorder`` builds the op's node itself wherever ``record``
is asked to (a node that needs more than formulas, e.g. a ctx per node). ``nout=VARIADIC``
means the op returns a tuple of any length.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from .autocast_state import POLICIES, Policy, casting_fn
from .layout import contiguous
from .methods import inplace_method, method_names, sizes_method, tensor_method
from .no_kernel import NoKernel, complex32_refusing_fn, refusing_fn, refusing_prepare
from .policy import COMMON, InplacePolicy, Overlap
from .pyargs import with_parser
from .signature import api_key, make_fn, method_of
from .tensor import Tensor

REGISTRY: dict[str, Op] = {}

LINEAR = "linear"
# jvp=ELEMENTWISE: the tangent is each input's vjp formula applied to that input's tangent,
# summed (PyTorch's auto_element_wise); declared once instead of written twice.
ELEMENTWISE = "auto_element_wise"
# nout/ndiff of an op whose number of outputs is known per call only: a tuple of any length.
VARIADIC = 1 << 30


def _names(fn) -> tuple[str, ...]:
    return tuple(inspect.signature(fn).parameters)


def on_arrays(formula: Callable, arrays: Callable) -> Callable:
    """``formula`` (a vjp written with numtorch ops), carrying the same gradient computed on
    NumPy arrays: ``arrays`` takes the formula's parameters, each plain CPU float32/float64
    tensor as its array, and returns the array the formula's tensor would hold (the same
    values, dtype and strides, a fresh array), or NotImplemented where it does not cover
    the call. The engine runs it where nothing could observe the formula's own op calls
    (``autograd/node.py``)."""
    formula.on_arrays = arrays
    return formula


def named(fn: Callable, names: Sequence[str]) -> Callable:
    """Give a ``**env`` formula the parameter names the registry reads (formulas bind by
    name: ``g``, ``t``, ``result``, inputs, attributes)."""
    kw = inspect.Parameter.KEYWORD_ONLY
    fn.__signature__ = inspect.Signature([inspect.Parameter(n, kw) for n in names])
    return fn


@dataclass
class SampleInput:
    """Arguments for one call of an op's public function (arrays stand for tensors)."""

    args: tuple
    kwargs: dict = field(default_factory=dict)
    name: str = ""

    def __repr__(self) -> str:
        def show(a):
            if hasattr(a, "shape") and hasattr(a, "dtype"):
                return f"array{tuple(a.shape)}:{a.dtype}"
            if isinstance(a, (list, tuple)):
                return type(a)(show(x) for x in a)
            return repr(a)

        return f"SampleInput({self.name} args={[show(a) for a in self.args]}, kwargs={self.kwargs})"


@dataclass(frozen=True)
class OpTestFlags:
    """How the generic op tests treat an op: ``defop(test={...})``. A key that is not a
    field here is an error, so a misspelt flag cannot be silently ignored."""

    dtypes: tuple[str, ...] = ("float32", "float64")  # the dtypes samples are made in
    no_oracle: bool = False  # PyTorch has no same-named function: finite differences decide
    no_grad_test: bool = False  # the op's gradient is tested elsewhere (say why at the op)
    no_gradgrad: bool = False  # torch's second derivative can't be compared (say why)
    torch_complex_vjp_wrong: str = ""  # why torch's complex vjp isn't compared (FD decides)
    vmap: str = "rule"  # "dynamic": a data-dependent output shape, which vmap refuses
    vmap_unbatched: tuple[int, ...] = ()  # argument positions vmap can't batch
    vmap_last: bool = True  # False: a last batch dim is refused, as by PyTorch's rule
    no_complex32: str = ""  # why the complex32 sweep can't compare the op with torch
    complex32_tol: float = 2e-3  # the sweep's tolerance (wider: say why at the op)


@dataclass
class ErrorInput:
    sample: SampleInput
    error: type
    match: str


@dataclass(slots=True, eq=False, repr=False)
class Op:
    """One operator: every fact the system needs about it. ``defop`` (primitives),
    ``composite`` and ``autograd.Function`` build it with this constructor; a field left
    out has the default an ordinary op has."""

    name: str
    kernel: Callable | None = None  # kernel(xp, *inputs, **attrs) on backend arrays
    fn: Callable | None = None  # the public function, which dispatches the op
    inputs: tuple[str, ...] = ()  # the kernel's input parameter names
    attrs: tuple = ()  # (name, default, kind) of the kernel's attribute parameters
    nin: int = 0
    list_inputs: frozenset = frozenset()  # input positions that take sequences of tensors
    nout: int = 1  # VARIADIC: a tuple of any length
    # PyTorch's names of the outputs (its schema's returns; unnamed: result0, result1, ...)
    out_names: tuple[str, ...] = ()
    # the outputs PyTorch's node saves (its backward formulas read result0, indices, ...):
    # a node that no gradient reaches still unpacks, so version-checks, them
    saved_outputs: tuple[int, ...] = ()
    ndiff: int = 0  # the outputs autograd sees (the first ``ndiff``)
    vjps: tuple = ()  # one formula per input (None: not differentiable)
    vjp_args: tuple = ()  # each formula's parameter names
    saves: tuple = ()  # what a node saves when input i needs a gradient
    undefined_grads: bool = False  # formulas take None for an output without a gradient
    jvp: Callable | str | None = None  # a formula, LINEAR, COMPOSITE or None
    jvp_args: tuple[str, ...] = ()
    dense: bool = False  # every input differentiable and none a list: the fast linker
    number_edges: bool = False  # a number operand stands for a 0-d tensor with an edge
    view: bool = False
    pieces: Callable | None = None  # a multi-output view's single-output views
    overlapping_view: bool = False  # a view whose elements may share memory (expand)
    complex_grad: bool = True  # False: PyTorch refuses autograd of a complex result
    autocast: Policy | None = None  # how autocast casts its inputs (_core/autocast_state.py)
    prepare: Callable | None = None  # type promotion (after the no_kernel checks)
    no_kernel: tuple = ()  # the dtypes PyTorch has no kernel for (NoKernel)
    layout: Callable | None = None  # the result's strides as PyTorch's kernel lays them out
    batch_rule: Callable | None = None
    random: bool = False  # draws from a generator (vmap's randomness applies)
    composite: bool = False  # written with public ops: no kernel, no node of its own
    impl: Callable | None = None  # a tensor-level implementation run instead of the kernel
    recorder: Callable | None = None  # builds the op's node itself (a Function's ctx)
    node_name: str | Callable | None = None  # PyTorch's name of the backward node
    node_cls: type | None = None  # made by autograd on first record
    # record at level 0 for this op, one generated function: made by autograd on first use
    level0_recorder: Callable | None = None
    inplace_policy: InplacePolicy = COMMON  # how its in-place form writes
    # the inputs/attributes whose Python int PyTorch converts with its overflow check
    # (fill's value, clamp's bounds, alpha); other Python int inputs wrap (_core/scalars.py)
    checked_scalars: tuple[str, ...] = ()
    # its checked_scalars go into complex32 unchecked (fill's value: inf where beyond range)
    complex32_unchecked: bool = False
    out_overlap_check: bool = False  # ``out=`` partly overlapping an input is refused
    # PyTorch's overlap checks of the tensor it writes (in place or out=), before the kernel
    overlap: Overlap | None = None
    broadcasts: bool = False  # elementwise: its tensor operands broadcast together
    conversion: bool = False  # a non-float result just leaves autograd (no error)
    float8: bool | str = False  # PyTorch's CPU kernel takes float8 (or: its name, refusing)
    complex32: bool | str | Callable = False  # ... takes complex32 (or: its name, refusing)
    no_bfloat16: str = ""  # PyTorch's CPU kernel, which has no BFloat16 version
    number_opmath: bool = False  # a number operand enters a bfloat16 kernel unrounded
    size_attrs: tuple[str, ...] = ()  # attributes that are sizes (compiled autograd's keys)
    aten_dim_list: bool = False  # aten's ``dim`` is an int[]: an int dim shows as a list
    value_shaped: bool | Callable = False  # result shape depends on input values (args, attrs)
    meta: Callable | None = None  # the meta device's rule: outputs' metadata (_core/meta.py)
    samples: Callable | None = None  # the op database's sample inputs
    error_samples: Callable | None = None
    api: str = ""  # the public path (``linalg.solve``)
    oracle: str | None = None  # PyTorch's function, where not the same path
    grad_args: Sequence[int] | None = None
    test: OpTestFlags = OpTestFlags()

    def __repr__(self) -> str:
        return f"<op {self.name}>"


def defop(
    name: str,
    kernel: Callable,
    *,
    vjp: Sequence[Callable | None] | Callable | None = None,
    jvp: Callable | str | None = None,
    nin: int | None = None,
    list_inputs: Sequence[int] = (),
    nout: int = 1,
    ndiff: int | None = None,
    view: bool = False,
    pieces: Callable | None = None,
    prepare: Callable | None = None,
    no_kernel: NoKernel | Sequence[NoKernel] = (),
    samples: Callable | None = None,
    error_samples: Callable | None = None,
    api: str | None = None,
    oracle: str | None = None,
    node_name: str | Callable | None = None,
    number_edges: bool = False,
    random: bool = False,
    batch_rule: Callable | None = None,
    grad_args: Sequence[int] | None = None,
    test: dict | None = None,
    out: bool = False,
    methods: Sequence[str] | bool = (),
    inplace: Sequence[str] | bool = (),
    sizes: bool = False,
    register: bool = True,
    layout: Callable | None = contiguous,
    inplace_policy: InplacePolicy = COMMON,
    out_overlap_check: bool = False,
    overlap: Overlap | None = None,
    broadcasts: bool = False,
    conversion: bool = False,
    float8: bool | str = False,
    complex32: bool | str | Callable = False,
    no_bfloat16: str = "",
    number_opmath: bool = False,
    size_attrs: Sequence[str] = (),
    aten_dim_list: bool = False,
    value_shaped: bool | Callable = False,
    overlapping_view: bool = False,
    complex_grad: bool = True,
    checked_scalars: Sequence[str] = (),
    complex32_unchecked: bool = False,
    autocast: Policy | None = None,
    meta: Callable | None = None,
    out_names: Sequence[str] = (),
    saved_outputs: Sequence[int] = (),
) -> Op:
    """Declare an operator.

    ``kernel(xp, *inputs, **attrs)`` computes on arrays; its first ``nin``
    parameters after ``xp`` are the inputs (tensors, scalars or, for
    ``list_inputs``, sequences of tensors), the rest are attributes.
    ``vjp`` has one formula per input (None: not differentiable); ``jvp`` is a
    formula, ``LINEAR`` (the op applied to the tangents), ``ELEMENTWISE`` (derived
    from the vjp formulas), or None.
    ``prepare(arrays, attrs) -> (arrays, out_dtype)`` applies type promotion.
    ``no_kernel``: the dtypes PyTorch has no kernel for (``NoKernel``), checked before
    ``prepare``.
    ``out`` adds PyTorch's ``out=`` keyword to the public function.
    ``methods`` and ``inplace`` name the Tensor methods (True: ``name`` and ``name_``);
    ``sizes`` methods take ``*size`` as well as a sequence.
    ``node_name`` is PyTorch's name of the op's backward node (default: the op's name
    title-cased by parts + ``Backward0``), or a function of the call giving it, run when the
    name is first asked for: its parameters name attributes (their values) and inputs (a
    tensor's shape, a list of shapes, None for a number), e.g.
    ``node_name=lambda dim: "SumBackward0" if dim is None else "SumBackward1"``.
    ``pieces(input_shape, attrs)``: for a view op with several outputs (``view=True``,
    ``nout=VARIADIC``: as many as the kernel returns), the single-output view ``(op, attrs)``
    that gives each output, so that each is a view of the input (version counter,
    in-place writes through it).
    ``number_edges``: a number operand stands for a 0-d tensor, which has an edge (None, 0)
    in the node (PyTorch's add, sub, mul, div); otherwise numbers have no edge.
    ``layout(out, inputs, attrs) -> out``: the result's strides as PyTorch's kernel gives them
    (``numtorch._core.layout``: contiguous unless said otherwise, as PyTorch's kernels
    allocate theirs; a view's are the view's; None: the kernel's own).
    ``inplace_policy``: how the in-place form writes, where PyTorch's checks differ from the
    common elementwise write (``numtorch._core.policy``).
    ``out_overlap_check``: an ``out=`` tensor partly overlapping an input is refused.
    ``overlap``: PyTorch's checks of the tensor the op writes (self of its in-place form, an
    ``out=`` tensor) against its inputs, made before the kernel (``Overlap``: the inputs
    that may share no memory with it, those that may not partly overlap it, and the op's
    checks that come first).
    ``broadcasts``: an elementwise op, whose tensor operands broadcast together (vmap's
    fallback checks each sample's shapes before an in-place form runs).
    ``conversion``: a non-float result leaves autograd instead of raising (``to``).
    ``float8``: PyTorch's CPU kernel takes float8 operands (a cast or a copy); other ops
    refuse them (``_core/dispatch.py``'s ``_run_reduced``), naming ``<name>_cpu`` or the
    kernel ``float8`` names (``"add_stub"``).
    ``complex32``: the same for complex32 (computed in complex64 and rounded): True where
    PyTorch's CPU kernel takes ComplexHalf, else the name of the kernel that refuses it
    (default ``<name>_cpu``; a ``no_kernel`` refusal of complex dtypes comes first), or a
    function of the arrays and attributes that gives either for the call (matmul's kernel
    depends on the ranks) or raises PyTorch's own error (linalg's, fft's).
    ``no_bfloat16``: the name of PyTorch's CPU kernel, which has no BFloat16 version: a
    bfloat16 result dtype is refused naming it.
    ``number_opmath``: PyTorch's reduced-float kernel takes a Python number operand as it is
    (in float32, mul's and div's); other elementwise ops round it to bfloat16 first (their
    common dtype).
    ``size_attrs``: attributes that are sizes for compiled autograd, besides those named
    ``shape``, ``size``, ``sizes`` and ``output_size`` (conv's ``groups``, into which its
    batch rule folds a vmapped batch).
    ``aten_dim_list``: aten's ``dim`` is an int[], so dispatch modes see an int dim as a list.
    ``value_shaped``: the result's shape depends on input values (True, or a function of the
    call's ``(args, attrs)``); implied by ``test={"vmap": "dynamic"}``.
    ``overlapping_view``: a view whose elements may share memory (expand).
    ``complex_grad=False``: a complex result may not require grad (PyTorch's error for
    ops it has no complex derivative for).
    ``checked_scalars``: the inputs and attributes whose Python int PyTorch converts into
    the integer dtype with its overflow check (``_core/scalars.py``); others wrap. Into
    complex32 they are checked against float16's range too, unless ``complex32_unchecked``
    (fill's value, which becomes inf).
    ``autocast``: how autocast casts its floating inputs (PyTorch's CPU lists): ``"lower"``
    to the region's dtype, ``"fp32"`` to float32, ``"promote"`` to the widest among them.
    ``meta(op, arrays, attrs)``: the outputs' metadata on the meta device (``_core/meta.py``:
    ``by_kernel`` where the kernel reads only shapes and dtypes; None: no Meta kernel).
    ``out_names``: PyTorch's names of a multi-output op's outputs, where its schema names
    them (``("values", "indices")``): a node's saved outputs are ``_saved_<name>``.
    ``saved_outputs``: the positions of the outputs PyTorch's node saves (those its
    derivatives.yaml formulas read: ``result0``, ``indices``), which a node reached by no
    gradient still version-checks, as PyTorch's unpacks them.
    """
    _check_policy(name, autocast)
    params = list(inspect.signature(kernel).parameters.values())[1:]
    if nin is None:
        nin = sum(
            1
            for p in params
            if p.default is inspect.Parameter.empty and p.kind == p.POSITIONAL_OR_KEYWORD
        )
    if vjp is not None and not isinstance(vjp, (tuple, list)):
        vjp = (vjp,)
    vjps = tuple(vjp) if vjp is not None else (None,) * nin
    if len(vjps) != nin:
        raise ValueError(f"{name}: {len(vjps)} vjp formulas for {nin} inputs")
    vjp_args = tuple(_names(f) if f is not None else () for f in vjps)
    attr_names = {p.name for p in params[nin:]}
    refusals = (no_kernel,) if isinstance(no_kernel, NoKernel) else tuple(no_kernel)
    test_flags = _test_flags(name, test)
    op = Op(
        name=name,
        kernel=kernel,
        inputs=tuple(p.name for p in params[:nin]),
        attrs=tuple((p.name, p.default, p.kind) for p in params[nin:]),
        nin=nin,
        list_inputs=frozenset(list_inputs),
        nout=nout,
        out_names=tuple(out_names),
        saved_outputs=tuple(saved_outputs),
        ndiff=(nout if any(vjps) else 0) if ndiff is None else ndiff,
        vjps=vjps,
        vjp_args=vjp_args,
        # What a node must save when input i needs a gradient: tensors and the result.
        saves=tuple(tuple(n for n in a if n != "g" and n not in attr_names) for a in vjp_args),
        # formulas that take None for an output without a gradient (else they get zeros)
        undefined_grads=any(getattr(f, "undefined_grads", False) for f in vjps),
        dense=all(f is not None for f in vjps) and not list_inputs,
        number_edges=number_edges,
        view=view,
        pieces=pieces,
        overlapping_view=overlapping_view,
        complex_grad=complex_grad,
        checked_scalars=tuple(checked_scalars),
        complex32_unchecked=complex32_unchecked,
        autocast=autocast,
        meta=meta,
        prepare=refusing_prepare(prepare, refusals, nin) if refusals else prepare,
        no_kernel=refusals,
        layout=None if view else layout,
        batch_rule=batch_rule,
        random=random,
        node_name=node_name or default_node_name(name),
        inplace_policy=inplace_policy,
        out_overlap_check=out_overlap_check,
        overlap=overlap,
        broadcasts=broadcasts,
        conversion=conversion,
        float8=float8,
        complex32=complex32,
        no_bfloat16=no_bfloat16,
        number_opmath=number_opmath,
        size_attrs=tuple(p.name for p in params[nin:] if p.name in _SIZE_ATTRS) + tuple(size_attrs),
        aten_dim_list=aten_dim_list,
        value_shaped=value_shaped or test_flags.vmap == "dynamic",
        samples=samples,
        error_samples=error_samples,
        api=api or name,
        oracle=oracle,
        grad_args=grad_args,
        test=test_flags,
    )
    if jvp == ELEMENTWISE:
        jvp = _elementwise_jvp(op)
    op.jvp = jvp
    op.jvp_args = _names(jvp) if callable(jvp) else ()
    _check_formula_names(op)
    if hasattr(batch_rule, "bind"):  # a rule generator from numtorch.ops._batching
        op.batch_rule = batch_rule.bind(op)
    op.fn = make_fn(op, out)
    if methods:
        for m in method_names(methods, name):
            tensor_method(sizes_method(op) if sizes else method_of(op.fn, m), m)
    if inplace:
        tensor_method(inplace_method(op), *method_names(inplace, name + "_"))
    if register:
        _register(op)
    return op


# Attributes that are sizes by their name (a view's shape, an expand's size): with dynamic
# sizes a new value is a new specialization of the same captured graph, as PyTorch's SymInt.
_SIZE_ATTRS = frozenset(("shape", "size", "sizes", "output_size"))


def _check_policy(name: str, autocast) -> None:
    if autocast is not None and not callable(autocast) and autocast not in POLICIES:
        raise ValueError(f"{name}: autocast must be one of {POLICIES}, not {autocast!r}")


def _test_flags(name: str, test: dict | None) -> OpTestFlags:
    try:
        return OpTestFlags(**(test or {}))
    except TypeError as e:
        raise TypeError(f"{name}: test flags: {e}") from None


def default_node_name(op_name: str) -> str:
    """PyTorch's codegen rule: each ``_``-separated part title-cased, then ``Backward0``
    (``log1p`` gives ``Log1PBackward0``)."""
    return "".join(w.title() for w in op_name.split("_")) + "Backward0"


def _register(op: Op) -> None:
    if op.name in REGISTRY:
        raise ValueError(f"op {op.name} defined twice")
    REGISTRY[op.name] = op


# The jvp of a composite: forward mode runs through the public ops it is written with.
COMPOSITE = "composite"


def composite(
    fn: Callable | None = None,
    *,
    samples: Callable,
    error_samples: Callable | None = None,
    name: str | None = None,
    api: str | None = None,
    oracle: str | None = None,
    differentiable: bool = True,
    nout: int = 1,
    grad_args: Sequence[int] | None = None,
    test: dict | None = None,
    methods: Sequence[str] | bool = (),
    no_kernel: NoKernel | Sequence[NoKernel] = (),
    layout: Callable | None = None,
    complex_grad: bool | str = True,
    complex32: bool | str | Callable = False,
    autocast: Policy | None = None,
) -> Callable:
    """Declare a public function written with public ops (no kernel of its own) in the op
    database, with samples and its PyTorch oracle, so the generic tests (forward, vjp,
    jvp, second order, vmap with the fallback off) cover it. Returns the function itself;
    usable as a decorator: ``@composite(samples=...)``. ``name`` (default: the function's)
    is its name in the registry, ``api`` its public path (default: the name).
    ``no_kernel``: the dtypes PyTorch's own kernel for the function refuses (``NoKernel``,
    over the required positional arguments); the function returned then checks them first.
    ``layout=contiguous`` (``numtorch._core.layout``): PyTorch's kernel for the function
    allocates a contiguous result, so a result laid out otherwise is made contiguous.
    ``complex_grad``: False, or the name of the PyTorch function that refuses (default: the
    composite's): a complex result that requires grad raises PyTorch's error for functions
    it has no complex derivative for.
    ``complex32``: PyTorch's own kernel for the function refuses complex32 arguments: the
    name of that kernel, or a function of the tensor arguments and every argument by name
    that names it, raises PyTorch's own error, or gives True where the call runs (checked
    after ``no_kernel``). True: PyTorch runs it (as the ops it is written with do); False:
    no fact, the ops it is written with decide.
    ``autocast``: how autocast casts its tensor arguments (as ``defop``'s), where the ops it
    is written with would not give PyTorch's dtype; it then runs with autocast off."""

    def declare(fn: Callable) -> Callable:
        op_name = name or fn.__name__
        _check_policy(op_name, autocast)
        params = list(inspect.signature(fn).parameters.values())
        positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        required = [p for p in params if p.kind in positional and p.default is p.empty]
        refusals = (no_kernel,) if isinstance(no_kernel, NoKernel) else tuple(no_kernel)
        if complex32 is not True and complex32 is not False:
            fn = complex32_refusing_fn(fn, complex32, tuple(p.name for p in required))
        if refusals:
            fn = refusing_fn(fn, refusals, tuple(p.name for p in required))
        if layout is not None:
            if layout is not contiguous:
                raise ValueError(f"{op_name}: a composite's layout can only be contiguous")
            fn = _contiguous_fn(fn)
        if complex_grad is not True:
            fn = _complex_grad_refusing_fn(fn, complex_grad or op_name)
        if autocast is not None:
            fn = casting_fn(fn, autocast)
        nin = len(required)
        public = with_parser(fn, api_key(api or op_name))
        op = Op(
            name=op_name,
            fn=public,
            composite=True,
            inputs=tuple(p.name for p in required),
            attrs=tuple((p.name, p.default, p.kind) for p in params[nin:]),
            nin=nin,
            nout=nout,
            ndiff=nout if differentiable else 0,
            vjps=(None,) * nin,
            vjp_args=((),) * nin,
            saves=((),) * nin,
            jvp=COMPOSITE if differentiable else None,
            no_kernel=refusals,
            samples=samples,
            error_samples=error_samples,
            api=api or op_name,
            oracle=oracle,
            grad_args=grad_args,
            test=_test_flags(op_name, test),
            complex_grad=complex_grad is True,
            complex32=complex32,
            autocast=autocast,
        )
        _register(op)
        if methods:
            tensor_method(fn, *method_names(methods, op_name))
        return public

    return declare if fn is None else declare(fn)


def _contiguous_fn(fn: Callable) -> Callable:
    """``fn`` with its tensor results made contiguous (differentiably), and new: a result
    that is a view of an argument (a reshape that a trivial permutation left a view) is
    cloned, as PyTorch's kernel writes a new tensor."""

    @functools.wraps(fn)
    def laid_out(*args, **kwargs):
        out = fn(*args, **kwargs)
        if isinstance(out, Tensor):
            return _new_contiguous(out, args, kwargs)
        if isinstance(out, tuple) and not hasattr(out, "_fields"):
            return tuple(
                _new_contiguous(o, args, kwargs) if isinstance(o, Tensor) else o for o in out
            )
        return out

    return laid_out


def _complex_grad_refusing_fn(fn: Callable, refuser: str) -> Callable:
    """``fn`` raising PyTorch's error where a complex result of it requires grad."""

    @functools.wraps(fn)
    def refusing(*args, **kwargs):
        out = fn(*args, **kwargs)
        for o in out if isinstance(out, tuple) else (out,):
            if isinstance(o, Tensor) and o.dtype.is_complex and o.requires_grad:
                raise RuntimeError(
                    f"{refuser} does not support automatic differentiation for outputs with "
                    "complex dtype."
                )
        return out

    return refusing


def _new_contiguous(out: Tensor, args: tuple, kwargs: dict) -> Tensor:
    if not out.is_contiguous():
        return out.contiguous()
    root = out._base
    if root is not None and any(
        isinstance(a, Tensor) and (a is root or a._base is root) for a in (*args, *kwargs.values())
    ):
        return out.clone()
    return out


def _conj(t):
    return t.conj() if isinstance(t, Tensor) and t.is_complex() else t


def _elementwise_jvp(op: Op) -> Callable:
    """jvp = sum over inputs of conj(vjp_i(conj(t_i))): the vjps are conjugate Wirtinger
    formulas ``g * conj(f'(x))``, so this is ``t_i * f'(x)`` (real tensors: vjp_i(t_i))."""
    tangent = ("t",) if op.nin == 1 else tuple("t" + n for n in op.inputs)
    names = [*tangent]
    for args in op.vjp_args:
        names += [n for n in args if n != "g" and n not in names]
    terms = [(t, f, a) for t, f, a in zip(tangent, op.vjps, op.vjp_args) if f]

    absent = [i for i, f in enumerate(op.vjps) if f]

    def jvp(**env):
        out = None
        for k, (t, f, args) in zip(absent, terms):
            if op.nin > 1 and not hasattr(env[t], "shape"):
                continue  # a Python number operand: its tangent is the number 0
            term = _conj(f(**{n: _conj(env[t]) if n == "g" else env[n] for n in args}))
            if op.nin > 1 and env["tangents"][k] is None:
                term = zero_term(term)
            out = term if out is None else out + term
        if out is not None and out.is_complex() and not env["result"].is_complex():
            out = out.real  # a real function of complex inputs (abs): Re of the term
        return out

    if "result" not in names:
        names.append("result")
    return named(jvp, [*names, "tangents"] if op.nin > 1 else names)


def bilinear_jvp(product: Callable, first: str, second: str) -> Callable:
    """The jvp of an op linear in each of its two inputs: ``product(t1, x2) + product(x1,
    t2)`` without the term of an input that has no tangent (PyTorch's undefined tangent,
    so an infinite operand meets no zero tangent: no NaN)."""

    def jvp(tangents, **env):
        t1, t2 = tangents[0], tangents[1]
        x1, x2 = env[first], env[second]
        if t1 is None and t2 is None:  # (tangents of other inputs only)
            t1 = x1.new_zeros(x1.shape)
        out = None if t1 is None else product(t1, x2)
        if t2 is not None:
            term = product(x1, t2)
            out = term if out is None else out + term
        return out

    return named(jvp, ("tangents", first, second))


def undefined_grads(formula: Callable) -> Callable:
    """Mark a multi-output op's vjp formula as taking None for an output with no gradient
    (PyTorch's undefined gradient), whose terms it skips; unmarked formulas get zeros."""
    formula.undefined_grads = True
    return formula


def zero_term(term):
    """The term of an operand without a tangent: zero, as PyTorch's zero tensor gives (a
    zero tangent times an inf partial is no NaN), still on the primals' graph."""
    return term.nan_to_num(0.0, 0.0, 0.0)


def _check_formula_names(op: Op) -> None:
    known = {
        "g",
        "result",
        *op.inputs,
        *(n + "_shape" for n in op.inputs),
        *(a[0] for a in op.attrs),
    }
    for names in op.vjp_args:
        bad = set(names) - known
        if bad:
            raise ValueError(f"{op.name}: vjp names unknown values {sorted(bad)}")
    if callable(op.jvp):
        tangents = {"t"} if op.nin == 1 else {"t" + n for n in op.inputs}
        bad = set(op.jvp_args) - known - tangents - {"g", "tangents"}
        if bad:
            raise ValueError(f"{op.name}: jvp names unknown values {sorted(bad)}")


def formula_env(op: Op, args: tuple, attrs: dict, result, names=()) -> dict:
    """The values a formula may name: attributes, inputs, ``result``, and the
    ``<input>_shape`` among ``names``."""
    env = dict(attrs)
    env.update(zip(op.inputs, args))
    for n, a in zip(op.inputs, args):
        if n + "_shape" not in names:
            continue
        if isinstance(a, (list, tuple)):
            env[n + "_shape"] = [getattr(x, "shape", None) for x in a]
        elif hasattr(a, "shape"):
            env[n + "_shape"] = a.shape
    env["result"] = result
    return env
