"""What a node saved, as PyTorch's ``grad_fn._saved_<name>`` shows it, swept over the op
database: every op whose sample's first output has a node of PyTorch's name is run in both
libraries, and each ``_saved_*`` attribute PyTorch's node has must be on numtorch's with the
same type and value (tensors compared by value). PyTorch's binding shows an int64 or SymInt
(alone or in an int[]) as an unsigned 64-bit number (-1 is 2**64 - 1), int[] and SymInt[]
as tuples, an absent optional as None, a Scalar as the Python number it was given, and a
Python number an op wraps as a 0-d float64 or int64 tensor.

numtorch may save more than PyTorch (its formulas read tensors where PyTorch's read sizes):
such extra names are not compared. The ops whose node still lacks names PyTorch's has, or
shows a different value, are listed below with the reason, and the sweep asserts that each
listed difference is still there, so the lists stay true."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from opdb import float_arg_positions, get_path, ops_with_samples, resolve, samples
from twolibs import tensor_leaves, to_nt, to_torch

import numtorch as nt

_LU = "PyTorch computes det and slogdet through an LU factorization it saves"
_EX = "PyTorch's inverse is linalg_inv_ex's output, numtorch's a single-output op"
_MEAN = "PyTorch's mean saves the element count, numtorch's formula reads the sizes"
_STRIDES = "numtorch keeps no strides of the inputs"
_SIZES = "PyTorch's node saves sizes numtorch's formula does not need (the engine sums)"
_COMPOSITE = "a composite whose PyTorch decomposition saves other values"
_CONV = "numtorch's convolution node keeps (before, after) padding pairs and its own names"
_POOL = "numtorch's pooling node keeps its own attributes"
_ARGSIZE = "PyTorch saves single sizes (sym_argsize) numtorch does not name"
_OWN_ATTRS = "numtorch's op takes other attributes than the aten op PyTorch records"
_SAVES_INPUT = "PyTorch saves an input numtorch's formula does not need"

# {op: (PyTorch saved names numtorch's node lacks, why)}
MISSING = {
    "adaptive_max_pool2d": ({"self"}, _SAVES_INPUT),
    "adaptive_max_pool3d": ({"self"}, _SAVES_INPUT),
    "addbmm": ({"batch1_sym_argsize_0", "batch1_sym_argsize_1", "batch2_sym_argsize_2"}, _ARGSIZE),
    "addmm": ({"mat1_sym_strides", "mat2_sym_strides"}, _STRIDES),
    "as_strided": ({"storage_offset"}, _OWN_ATTRS),
    "avg_pool2d": ({"self"}, _POOL),
    "avg_pool3d": ({"self"}, _POOL),
    "broadcast_tensors": ({"self_sym_sizes"}, _SIZES),
    "broadcast_to": ({"self_sym_sizes"}, _SIZES),
    "column_stack": ({"dim"}, _COMPOSITE),
    "complex": ({"imag", "real"}, _SAVES_INPUT),
    **{
        name: ({"bias_sym_sizes_opt", "dim", "input", "output_padding", "transposed"}, _CONV)
        for name in (
            "conv1d",
            "conv2d",
            "conv3d",
            "conv_transpose1d",
            "conv_transpose2d",
            "conv_transpose3d",
        )
    },
    "torch_convolution": ({"bias_sym_sizes_opt", "input", "output_padding", "transposed"}, _CONV),
    "cummax": ({"self"}, _SAVES_INPUT),
    "cummin": ({"self"}, _SAVES_INPUT),
    "diag": ({"dim1", "dim2", "offset"}, _COMPOSITE),
    "diagflat": ({"dim1", "dim2", "offset"}, _COMPOSITE),
    "dsplit": ({"end", "step"}, _OWN_ATTRS),
    "dstack": ({"dim"}, _COMPOSITE),
    "embedding": ({"sparse", "weight_sym_argsize_0"}, _ARGSIZE),
    "expand": ({"self_sym_sizes"}, _SIZES),
    "expand_copy": ({"self_sym_sizes"}, _SIZES),
    "fft_fft": ({"self"}, _SAVES_INPUT),
    "fft_rfft": ({"self"}, _SAVES_INPUT),
    "fft_rfft2": ({"self"}, _SAVES_INPUT),
    "fft_rfftn": ({"self"}, _SAVES_INPUT),
    "fractional_max_pool2d": ({"output_size", "self"}, _POOL),
    "fractional_max_pool3d": ({"output_size", "self"}, _POOL),
    "gather": ({"sparse_grad"}, _OWN_ATTRS),
    "getitem": ({"dim", "end", "start", "step"}, "numtorch's getitem is one op, PyTorch's a chain"),
    "hsplit": ({"end", "step"}, _OWN_ATTRS),
    "hstack": ({"dim"}, _COMPOSITE),
    "index": ({"self_sym_sizes"}, _OWN_ATTRS),
    "index_add": ({"source_dim"}, _SIZES),  # (source itself is saved, as in PyTorch)
    "index_copy": ({"source", "source_dim"}, _SAVES_INPUT),
    "inverse": ({"inverse"}, _EX),
    "ldexp": ({"result"}, _COMPOSITE),
    "linalg_cond": ({"dim"}, _COMPOSITE),
    "linalg_det": ({"LU", "pivots"}, _LU),
    "linalg_eigvals": ({"eigenvalues", "eigenvectors"}, _COMPOSITE),
    "linalg_inv": ({"inverse"}, _EX),
    "linalg_lstsq": ({"b", "self"}, _SAVES_INPUT),
    "linalg_lu": ({"pivot"}, _OWN_ATTRS),
    "linalg_lu_factor": ({"pivot"}, _OWN_ATTRS),
    "linalg_lu_factor_ex": ({"pivot"}, _OWN_ATTRS),
    "linalg_matrix_exp": ({"self"}, _SAVES_INPUT),
    "linalg_slogdet": ({"LU", "pivots"}, _LU),
    "linalg_solve_triangular": ({"self"}, _SAVES_INPUT),
    "linalg_svdvals": ({"S", "S_sym_argsize_minus_1", "U", "Vh", "full_matrices"}, _COMPOSITE),
    "linear": ({"mat1_sym_strides", "mat2_sym_strides", "self_sym_strides", "vec"}, _STRIDES),
    "log_sigmoid": (
        {"buffer"},
        "PyTorch's log_sigmoid saves a buffer output numtorch's op has not",
    ),
    "lp_pool2d": ({"ceil_mode", "self"}, _POOL),
    "lp_pool3d": ({"ceil_mode", "self"}, _POOL),
    "lu_unpack": ({"LU_data_sym_argsize_minus_1", "LU_data_sym_argsize_minus_2"}, _ARGSIZE),
    "matmul": ({"mat2_sym_strides", "self_sym_strides", "tensor", "vec"}, _STRIDES),
    "max_pool2d": ({"ceil_mode", "self"}, _POOL),
    "max_pool3d": ({"ceil_mode", "self"}, _POOL),
    "meshgrid": ({"self_sym_sizes"}, _SIZES),
    "mm": ({"mat2_sym_strides", "self_sym_strides"}, _STRIDES),
    "moveaxis": ({"dims"}, _OWN_ATTRS),
    "movedim": ({"dims"}, _OWN_ATTRS),
    "multi_head_attention_forward": ({"dim"}, _COMPOSITE),
    "narrow": ({"end", "step"}, _OWN_ATTRS),
    "outer": ({"other"}, _COMPOSITE),
    "scaled_dot_product_attention": ({"mat2_sym_strides", "self_sym_strides"}, _STRIDES),
    "square": ({"exponent"}, "numtorch's square is its own op, PyTorch's pow(x, 2)"),
    "squeeze": ({"dim"}, _SIZES),
    "squeeze_copy": ({"dim"}, _SIZES),
    "tensor_split": ({"end", "step"}, _OWN_ATTRS),
    "unfold": ({"self_sym_argsize_minus_1", "self_sym_argsize_minus_2"}, _ARGSIZE),
    "vsplit": ({"end", "step"}, _OWN_ATTRS),
    "vstack": ({"dim"}, _COMPOSITE),
    **{
        name: ({"self_sym_numel"}, _MEAN)
        for name in (
            "mean",
            "cosine_embedding_loss",
            "gaussian_nll_loss",
            "hinge_embedding_loss",
            "huber_loss",
            "l1_loss",
            "margin_ranking_loss",
            "multilabel_soft_margin_loss",
            "poisson_nll_loss",
            "triplet_margin_loss",
            "triplet_margin_with_distance_loss",
        )
    },
}

_CORRECTION = "PyTorch saves None for a correction not given; numtorch's default is 1"
# {op: (names whose value differs, why)}
DIFFERENT = {
    "avg_pool2d": ({"stride"}, "numtorch saves the stride a None stride stands for"),
    "avg_pool3d": ({"stride"}, "numtorch saves the stride a None stride stands for"),
    "lp_pool2d": ({"stride"}, "numtorch saves the stride a None stride stands for"),
    "lp_pool3d": ({"stride"}, "numtorch saves the stride a None stride stands for"),
    "max_pool2d": ({"stride"}, "numtorch saves the stride a None stride stands for"),
    "max_pool3d": ({"stride"}, "numtorch saves the stride a None stride stands for"),
    **{
        name: ({"padding"}, _CONV)
        for name in (
            "conv1d",
            "conv2d",
            "conv3d",
            "conv_transpose1d",
            "conv_transpose2d",
            "conv_transpose3d",
            "torch_convolution",
        )
    },
    "cumulative_trapezoid": ({"dim"}, _COMPOSITE),
    "embedding": ({"padding_idx"}, "numtorch keeps None where PyTorch's aten op takes -1"),
    "getitem": ({"index", "self_sym_sizes"}, "numtorch's getitem is one op, PyTorch's a chain"),
    "index": ({"indices"}, "numtorch drops the None entries of an index"),
    "linalg_norm": ({"ord"}, "PyTorch's linalg.norm passes ord on as a float"),
    "lstm": ({"dim"}, _COMPOSITE),
    "narrow": ({"start"}, "PyTorch's narrow records the start made non-negative"),
    "normalize": ({"other"}, _COMPOSITE),
    "outer": ({"self"}, _COMPOSITE),
    "roll": ({"dims", "shifts"}, "numtorch keeps roll's int and None, PyTorch's int[]"),
    "std": ({"correction"}, _CORRECTION),
    "std_mean": ({"correction"}, _CORRECTION),
    "var": ({"correction"}, _CORRECTION),
    "var_mean": ({"correction"}, _CORRECTION),
}


def _plain(v):
    """A saved value in a form both libraries' values compare in: the type's name and the
    value (a tensor as its shape, dtype and values; NaN equal to NaN)."""
    if isinstance(v, (torch.Tensor, nt.Tensor)):
        a = np.asarray(v.detach().numpy())
        vals = a.round(8) if a.dtype.kind in "fc" else a
        return ("Tensor", tuple(a.shape), str(v.dtype).split(".")[-1], repr(vals.tolist()))
    if isinstance(v, (list, tuple)):
        return (type(v).__name__, tuple(_plain(x) for x in v))
    if isinstance(v, (torch.dtype, nt.dtype, torch.device, nt.device)):
        return (type(v).__name__, str(v))
    if isinstance(v, float) and math.isnan(v):
        return ("float", "nan")
    return (type(v).__name__, v)


def _saved(fn) -> dict:
    out = {}
    for name in dir(fn):
        if name.startswith("_saved_"):
            out[name[7:]] = _plain(getattr(fn, name))
    return out


def _node(lib, op, s, paths):
    args, kwargs = (
        (to_nt if lib is nt else to_torch)(s.args),
        (to_nt if lib is nt else to_torch)(s.kwargs),
    )
    for p in paths:
        get_path(args, p).requires_grad_(True)
    fn = resolve(nt, op.api) if lib is nt else resolve(torch, op.oracle or op.api)
    out = fn(*args, **kwargs)
    kind = nt.Tensor if lib is nt else torch.Tensor
    nodes = [o.grad_fn for o in tensor_leaves(out, kind) if o.grad_fn is not None]
    return nodes[0] if nodes else None


def _comparable(op):
    return not op.test.no_oracle and op.ndiff and not op.test.no_grad_test and not op.random


SWEPT = [op for op in ops_with_samples() if _comparable(op)]


def _differences(op) -> tuple[set, set, int]:
    """(PyTorch's names numtorch lacks, names whose values differ, samples compared)."""
    missing, different, compared = set(), set(), 0
    for s in samples(op, "float64"):
        paths = float_arg_positions(s.args)
        if op.grad_args is not None:
            paths = [p for p in paths if p[0] in op.grad_args]
        if not paths:
            continue
        theirs = _node(torch, op, s, paths)
        ours = _node(nt, op, s, paths)
        if theirs is None or ours is None or ours.name() != theirs.name():
            continue  # (the node names are test_graph_structure's)
        compared += 1
        got, want = _saved(ours), _saved(theirs)
        missing |= set(want) - set(got)
        different |= {k for k in set(want) & set(got) if got[k] != want[k]}
    return missing, different, compared


@pytest.mark.parametrize("op", SWEPT, ids=[op.name for op in SWEPT])
def test_saved_attributes_match_torch(op):
    missing, different, _ = _differences(op)
    known_missing = MISSING.get(op.name, (set(), ""))[0]
    known_different = DIFFERENT.get(op.name, (set(), ""))[0]
    assert missing == known_missing, f"{op.name}: PyTorch's saved names numtorch's node lacks"
    assert different == known_different, f"{op.name}: saved values that differ from PyTorch's"


def test_the_known_differences_are_swept_ops():
    names = {op.name for op in SWEPT}
    assert set(MISSING) <= names
    assert set(DIFFERENT) <= names


def _node_of(lib, f):
    x = lib.tensor([[1.0, -2.0, 0.5], [0.5, 3.0, 2.0]], dtype=lib.float64, requires_grad=True)
    return f(lib, x).grad_fn


# (label, call, the names to compare: all of PyTorch's where None): the PyTorch binding's
# conversions, each on a call the sweep's samples may not make
CONVERSIONS = [
    ("negative dim is unsigned", lambda L, x: x.transpose(-1, 0), None),
    ("negative dims in an int[]", lambda L, x: x.permute(-1, -2), None),
    ("an int dim of an int[] dim", lambda L, x: x.sum(-1), None),
    ("amax's dims", lambda L, x: x.amax((0, -1)), None),
    ("vector_norm's int dim", lambda L, x: L.linalg.vector_norm(x, 2, -1), None),
    ("a wrapped float", lambda L, x: x * 2.5, None),
    ("a wrapped int", lambda L, x: x / 3, None),
    ("a reflected wrapped number", lambda L, x: 2.5 * x, None),
    ("an int Scalar stays signed", lambda L, x: x.clamp(-1, 1), None),
    ("a float Scalar", lambda L, x: x.clamp(min=-0.5), None),
    ("an int for a float Scalar", lambda L, x: L.nn.functional.hardtanh(x, -2, 1), None),
    ("add's alpha", lambda L, x: x.add(x, alpha=-2), None),
    ("a Scalar's default", lambda L, x: L.nn.functional.elu(x), None),
    ("relu6's bounds", lambda L, x: L.nn.functional.relu6(x), None),
    ("softplus's defaults", lambda L, x: L.nn.functional.softplus(x), None),
    ("split sizes as a tuple", lambda L, x: x.split([1, 2], -1)[0], None),
    ("index's tensors as a tuple", lambda L, x: x[L.tensor([1, 0])], {"indices"}),
    ("a negative diagonal", lambda L, x: x.tril(-1), None),
    ("a select's negative index", lambda L, x: x.select(-1, -2), None),
]


@pytest.mark.parametrize("label, f, names", CONVERSIONS, ids=[c[0] for c in CONVERSIONS])
def test_saved_attribute_conversions(label, f, names):
    ours, theirs = _node_of(nt, f), _node_of(torch, f)
    assert ours.name() == theirs.name()
    want = _saved(theirs)
    if names is not None:
        want = {k: v for k, v in want.items() if k in names}
    assert want
    got = _saved(ours)
    assert {k: got.get(k) for k in want} == want


# (label, call, PyTorch's names of the saved outputs): multi-output ops, whose saved outputs
# PyTorch names by its schema's returns (result0, result1, ... where they are unnamed), never
# ``_saved_result``
MULTI_OUTPUT = [
    ("max", lambda L, x: x.max(1)[0], {"indices"}),
    ("sort", lambda L, x: x.sort(-1)[0], {"indices"}),
    ("topk", lambda L, x: x.topk(2)[0], {"indices"}),
    ("cummax", lambda L, x: x.cummax(0)[0], {"indices"}),
    ("std_mean", lambda L, x: L.std_mean(x, 1)[0], {"result0"}),
    ("qr", lambda L, x: L.linalg.qr(x.t())[0], {"Q", "R"}),
    ("frexp", lambda L, x: L.frexp(x)[0], {"exponent"}),
    ("max_pool2d", lambda L, x: L.nn.functional.max_pool2d(x[None], 2), {"result1"}),
    ("lu_factor", lambda L, x: L.linalg.lu_factor(x[:, :2])[0], {"LU", "pivots"}),
]


@pytest.mark.parametrize("label, f, names", MULTI_OUTPUT, ids=[c[0] for c in MULTI_OUTPUT])
def test_multi_output_ops_save_each_output_by_torch_name(label, f, names):
    ours, theirs = _node_of(nt, f), _node_of(torch, f)
    want, got = _saved(theirs), _saved(ours)
    assert names <= set(want) and "result" not in got
    assert {k: got.get(k) for k in names} == {k: want[k] for k in names}


def test_a_raw_saved_integer_output_unpacks_without_history():
    def unpacked(lib):
        x = lib.tensor([[1.0, -2.0, 0.5], [0.5, 3.0, 2.0]], requires_grad=True)
        fn = x.max(1)[0].grad_fn
        t = fn._raw_saved_indices.unpack()
        return t.tolist(), t.grad_fn, t.requires_grad

    assert unpacked(nt) == unpacked(torch)
