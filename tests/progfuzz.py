"""Random programs against PyTorch: a seeded generator of short programs over the public API,
run on numtorch and on torch in six modes, compared, and shrunk to a runnable repro.

A program is Python text: inputs ``X`` (and ``B``, ``W``, ``T``) as NumPy literals, a body
``f(lib, x, b)`` of 2-6 lines that each rebind ``y`` (or ``b``), and a mode driver ``run(lib)``.
The same text is what runs and what a failure prints, so every repro is exactly the failing
case. The generator draws each line from ``OPS`` and runs the body on torch as it goes to know
the current shape and dtype; a line torch refuses is usually redrawn, sometimes kept (the
program then ends there and the two libraries' errors are compared).

    generate(seed, exclude=(), cls=None)   a Prog (of class cls, or one drawn from MIX)
    check(prog)                    [Failure] over the modes that apply
    shrink(prog, failure)          a smaller Prog failing the same way
    fuzz(seconds | seeds, cls=)    run many, shrink and group the failures (also: python -m)

Besides the base table, a program may belong to a class (tests/progfuzz_classes.py: aliasing
in-place ops, writes into fresh tensors, clamps with ties, non-finite inputs to reductions,
bad argument forms), which draws its lines from the class's own table and may change its
inputs and add modes. ``python tests/progfuzz.py SECONDS [CLASS]`` fuzzes one class (or
"base"); without CLASS each program's class is drawn from the default mix ``MIX``.
"""

from __future__ import annotations

import random
import re
import time
import warnings
from dataclasses import dataclass, field, replace

import numpy as np
import torch
from progfuzz_classes import CLASS_DIVERGENCES, CLASS_OPEN, CLASSES, MIX
from twolibs import Raised, assert_close

import numtorch as nt

FLOATS = ("float32", "float64")
MODES = ("forward", "backward", "grad", "vjp", "jvp", "vmap", "vmap_grad")


# ------------------------------------------------------------------ the op table
def _dim(r, n):
    return r.randrange(-n, n) if n else None


def _u(code, floats_only=False):
    """A line built from a format string of ``{d}`` (a dim of y), ``{k}`` (keepdim), ``{c}``
    (a Python scalar); None when y has no dims and the text needs one."""

    def gen(r, shape, dtype):
        n = len(shape)
        if "{d}" in code and n == 0:
            return None
        if floats_only and dtype not in FLOATS:
            return None
        return code.format(
            d=_dim(r, n),
            d2=_dim(r, n),
            k=r.choice([True, False]),
            c=r.choice([2, -1, 0.5, 1.5, -2.5, 3]),
            i=r.randrange(-max(1, shape[0]), max(1, shape[0])) if n else 0,
        )

    return gen


def _shape_ops():
    def view_all(r, shape, dtype):
        return r.choice(["y = y.reshape(-1)", "y = y.flatten()", "y = y.view(-1)"])

    def unsq(r, shape, dtype):
        return f"y = y.unsqueeze({r.randrange(-len(shape) - 1, len(shape) + 1)})"

    def perm(r, shape, dtype):
        if len(shape) < 2:
            return None
        p = list(range(len(shape)))
        r.shuffle(p)
        return f"y = y.permute({tuple(p)})"

    def expand(r, shape, dtype):
        new = [s if s != 1 else r.choice([1, 2, 3]) for s in shape]
        return f"y = y.expand({r.choice([2, 1])}, *{tuple(new)})"

    def narrow(r, shape, dtype):
        if not shape or shape[0] < 1:
            return None
        start = r.randrange(shape[0])
        return f"y = y.narrow(0, {start}, {r.randrange(shape[0] - start + 1)})"

    def unflat(r, shape, dtype):
        if not shape or shape[-1] not in (2, 4, 6):
            return None
        return f"y = y.unflatten(-1, (2, {shape[-1] // 2}))"

    return {
        "reshape": view_all,
        "unsqueeze": unsq,
        "permute": perm,
        "expand": expand,
        "narrow": narrow,
        "unflatten": unflat,
        "squeeze": _u("y = y.squeeze({d})"),
        "squeeze_all": _u("y = y.squeeze()"),
        "transpose": _u("y = y.transpose({d}, {d2})"),
        "mT": lambda r, s, d: "y = y.mT" if len(s) >= 2 else None,
        "t": lambda r, s, d: "y = y.t()" if len(s) <= 2 else None,
        "movedim": _u("y = y.movedim({d}, {d2})"),
        "contiguous": _u("y = y.contiguous()"),
        "clone": _u("y = y.clone()"),
        "flip": _u("y = y.flip({d})"),
        "roll": _u("y = y.roll(1, {d})"),
        "repeat": lambda r, s, d: f"y = y.repeat({', '.join(['2'] + ['1'] * len(s))})",
        "tril": lambda r, s, d: "y = y.tril()" if len(s) >= 2 else None,
        "triu": lambda r, s, d: "y = y.triu(1)" if len(s) >= 2 else None,
        "diagonal": lambda r, s, d: "y = y.diagonal()" if len(s) >= 2 else None,
        "cat": _u("y = lib.cat([y, y], {d})"),
        "stack": lambda r, s, d: f"y = lib.stack([y, y], {r.randrange(-len(s) - 1, len(s) + 1)})",
        "split": _u("y = y.split(1, {d})[0]"),
        "chunk": _u("y = y.chunk(2, {d})[-1]"),
        "unbind": _u("y = y.unbind({d})[0]"),
        "select": _u("y = y.select(0, {i})"),
        "index_int": _u("y = y[{i}]"),
        "index_slice": _u("y = y[..., 1:]"),
        "index_step": _u("y = y[::2]"),
        "index_none": _u("y = y[:, None]"),
        "index_list": _u("y = y[[0, 0]]"),
        "index_mask": lambda r, s, d: "y = y[y > 0]",
        "index_select": _u("y = y.index_select({d}, lib.tensor([0, 0]))"),
        "masked_fill": _u("y = y.masked_fill(y > 0, {c})"),
        "where": lambda r, s, d: "y = lib.where(y > 0, y, b)",
        "sum_to_size": lambda r, s, d: f"y = y.sum_to_size({tuple(1 for _ in s)})" if s else None,
        "broadcast_to": lambda r, s, d: f"y = lib.broadcast_to(y, (2, *{tuple(s)}))",
    }


UNARY = (
    "sin cos exp tanh sigmoid abs neg sqrt log relu square reciprocal erf expm1 log1p floor "
    "round sign rsqrt trunc frac atan asinh nan_to_num sinh deg2rad exp2 logit"
).split()
INPLACE_UNARY = "sin_ tanh_ neg_ abs_ exp_ zero_ sigmoid_ deg2rad_ floor_ sqrt_".split()
BINOPS = ("+", "-", "*", "/")


def _table():
    t = {f"unary.{n}": _u(f"y = y.{n}()") for n in UNARY}
    t.update({f"inplace.{n}": _u(f"y.{n}()") for n in INPLACE_UNARY})
    t.update(
        {
            "clamp": _u("y = y.clamp(min=-0.5, max={c})"),
            "pow_scalar": _u("y = y ** {c}"),
            "rpow": _u("y = {c} ** y"),
            "softmax": _u("y = y.softmax({d})"),
            "log_softmax": _u("y = y.log_softmax({d})"),
            "cumsum": _u("y = y.cumsum({d})"),
            "cumprod": _u("y = y.cumprod({d})"),
            "logcumsumexp": _u("y = y.logcumsumexp({d})"),
            "cummax": _u("y = y.cummax({d}).values"),
            "cummin_idx": _u("y = y.cummin({d}).indices"),
        }
    )
    for i, op in enumerate(BINOPS):
        t[f"binary.tensor{i}"] = (lambda op: lambda r, s, d: f"y = y {op} b")(op)
        t[f"binary.scalar{i}"] = (lambda op: _u(f"y = y {op} {{c}}"))(op)
        t[f"binary.rscalar{i}"] = (lambda op: _u(f"y = {{c}} {op} y"))(op)
    for n in "maximum minimum atan2 hypot fmod remainder fmin fmax logaddexp".split():
        t[f"binfn.{n}"] = (lambda n: lambda r, s, d: f"y = lib.{n}(y, b)")(n)
    for n in "eq lt ge logical_and logical_xor".split():
        t[f"cmp.{n}"] = (lambda n: lambda r, s, d: f"y = y.{n}(b)")(n)
    t["cmp.scalar"] = _u("y = y > {c}")
    t["lerp"] = lambda r, s, d: "y = lib.lerp(y, b, 0.25)"
    t["addcmul"] = lambda r, s, d: "y = lib.addcmul(y, b, b, value=0.5)"
    t["addcdiv"] = lambda r, s, d: "y = lib.addcdiv(y, b, b, value=0.5)"
    t["to_float64"] = _u("y = y.to(lib.float64)")
    t["to_float32"] = _u("y = y.float()")
    t["to_int"] = _u("y = y.long()")
    for n in "sum mean amax amin prod std var logsumexp nansum norm".split():
        if n == "norm":
            t[f"reduce.{n}"] = _u("y = y.norm(dim={d}, keepdim={k})")
        elif n in ("logsumexp",):
            t[f"reduce.{n}"] = _u(f"y = y.{n}({{d}}, keepdim={{k}})")
        else:
            t[f"reduce.{n}"] = _u(f"y = y.{n}({{d}}, keepdim={{k}})")
    t["reduce.sum_all"] = _u("y = y.sum()")
    t["reduce.mean_dims"] = lambda r, s, d: "y = y.mean((0, -1))" if len(s) >= 2 else None
    t["reduce.max_dim"] = _u("y = y.max({d}, keepdim={k}).values")
    t["reduce.min_dim"] = _u("y = y.min({d}).values")
    t["reduce.max_all"] = _u("y = y.max()")
    t["reduce.argmax"] = _u("y = y.argmax({d})")
    t["reduce.any"] = _u("y = y.any({d})")
    t["reduce.all_empty"] = _u("y = y.all(dim=())")
    t["reduce.var_mean"] = _u("y = lib.var_mean(y, {d})[1]")
    t["reduce.median"] = _u("y = y.median({d}).values")
    t["reduce.mode"] = _u("y = y.mode({d}).values")
    t["sort"] = _u("y = y.sort({d}).values")
    t["topk"] = _u("y = y.topk(1, {d}).values")
    t.update({f"shape.{k}": v for k, v in _shape_ops().items()})
    t.update(
        {
            "inplace.mul_": _u("y.mul_({c})"),
            "inplace.add_b": lambda r, s, d: "y.add_(b)",
            "inplace.mul_b": lambda r, s, d: "y.mul_(b)",
            "inplace.clamp_": _u("y.clamp_(max={c})"),
            "inplace.fill_": _u("y.fill_({c})"),
            "inplace.copy_b": lambda r, s, d: "y.copy_(b)",
            "inplace.masked_fill_": _u("y.masked_fill_(y < 0, {c})"),
            "inplace.lt_": _u("y.lt_({c})"),
            "inplace.pow_": _u("y.pow_(2)"),
            "view_write.setitem": _u("y[{i}] = {c}"),
            "view_write.setitem_b": _u("y[...] = b"),
            "view_write.slice_mul_": _u("y[..., :1].mul_({c})"),
            "view_write.t_add_": lambda r, s, d: "y.t()[0].add_(1.5)" if 1 <= len(s) <= 2 else None,
            "view_write.diag_": lambda r, s, d: "y.diagonal().mul_(2)" if len(s) >= 2 else None,
            "view_write.flat_": _u("y.view(-1)[:1].sin_()"),
            "view_write.expand_": _u("y.expand(y.shape).mul_(2)"),
            "view_write.unbind_": _u("y.unbind({d})[0].mul_(2)"),
            "view_write.index_add_": _u("y.index_add_(0, lib.tensor([0]), y[:1] * {c})"),
        }
    )
    t["matmul.mT"] = lambda r, s, d: "y = y @ y.mT" if len(s) >= 2 else None
    t["matmul.mv"] = lambda r, s, d: "y = y.mT @ y" if len(s) >= 1 else None
    t["outer"] = lambda r, s, d: "y = lib.outer(y.flatten(), b.flatten())"
    t["detach"] = _u("y = y.detach() * y")
    return t


OPS = _table()

# Ops and patterns with a known open bug (issue 14 list, or found by this fuzzer). The fixed-seed
# CI slice draws programs without these keys; the long run draws them and reports their failures
# under the bug's name. Remove a key once its bug is fixed.
KNOWN_OPEN: dict[str, str] = {}

# Failures that mark a known open bug whatever the ops: a regex searched in
# "<mode> <kind>: <detail>" (kind: ours raised / torch raised / error differs / result differs).
KNOWN_OPEN_FAILURES: list[tuple[str, str]] = []

# Cases where torch is wrong and numtorch keeps the finite-difference answer: (a regex searched
# in the body, one in the failure, the evidence). The fixed-seed slice and the long run skip them.
KNOWN_TORCH_DIVERGENCES: list[tuple[str, str, str]] = [
    (
        r"lib\.atan2\(y, b\)",
        r"torch (raised: )?RuntimeError: Negation, the `-` operator, on a bool tensor",
        "torch's backward of atan2(bool, float) raises 'Negation, the `-` operator, on a bool "
        "tensor is not supported' although only the float operand needs a gradient: "
        "atan2(x.lt(b), b) at b = 0.34 (x.lt(b) True), d/db = -1/(1 + b^2) = -0.96809 by central "
        "differences (eps 1e-6); numtorch gives -0.9681",
    ),
    (
        r"lib\.logaddexp\(y, b\)",
        r"torch (raised: )?RuntimeError: Subtraction, the `-` operator, with a bool tensor",
        "torch's backward of logaddexp(bool, float) raises 'Subtraction, the `-` operator, with a"
        " bool tensor is not supported' although only the float operand needs a gradient: d/db "
        "logaddexp(1, b) = sigmoid(b - 1), which numtorch gives (central differences agree)",
    ),
    (
        r"(?s)(expand\(|broadcast_to\().*median\(",
        r".",
        "torch's median(dim) reads an expanded (stride-0) input wrongly: tensor([[1.], "
        "[2.]]).expand(2, 2).median(1).values is [1.0, -5.8e-34] (garbage) in torch 2.13, [1., "
        "2.] after .contiguous() and in numtorch",
    ),
    (
        r"\.(all|any)\(dim=\(\)\)",
        r"^vmap(_grad)? (result differs|torch raised|error differs|ours raised)",
        "torch.func.vmap of all/any(dim=()) reduces each sample over every dim, while eager torch"
        " (and the per-sample loop) reduces over none: x = [[0., 1.], [2., 3.]]: x.all(dim=()) "
        "and stack([r.all(dim=()) for r in x]) are [[False, True], [True, True]], vmap gives "
        "[False, True]; numtorch gives the per-sample answer",
    ),
    (
        r".",
        r"^jvp result differs: result\[1\]: dtype torch\.float32 vs torch\.float64",
        "torch.func.jvp gives a float64 tangent for a float32 primal when a Python float takes "
        "part (jvp(lambda x: -2.5 + x) at float32 x), where torch.autograd.forward_ad gives "
        "float32, as numtorch does; both give float64 for addcmul(x, int, int, value=0.5): a "
        "tangent keeps its primal's dtype everywhere else in torch",
    ),
    (
        r".",
        r"^vmap result differs: result: dtype",
        "torch.func.vmap promotes a batched operand that is 0-d per sample as a dimensioned one: "
        "vmap(lambda x, b: addcdiv(x, b, b, value=0.5)) with x float32 (2, 1, 1, 1) and b float64"
        " (2,) gives float64; eager torch on each sample gives float32, as numtorch does (also "
        "addcmul, where, clamp)",
    ),
    (
        r".",
        r"^vmap ours raised: RuntimeError: Subtraction, the `-` operator, with a bool",
        "torch.func.vmap lets bool - number through (x.any(-1) - -2.5 gives 3.5) while eager "
        "torch refuses it; numtorch refuses in both",
    ),
    (
        r"logcumsumexp\(",
        r"(?s)^jvp (torch raised: |error differs: .*\ntorch )IndexError: max\(\): Expected "
        r"reduction dim",
        "torch's jvp (func.jvp and forward_ad) of logcumsumexp over an empty dim raises max()'s "
        "empty-reduction error while its forward returns the empty result; numtorch returns the "
        "empty tangent (and a later line's own error, e.g. sqrt_ of a bool, is then what numtorch"
        " raises)",
    ),
    (
        r"lib\.fm(in|ax)\(",
        r"(?s)^jvp result differs: .*nan location mismatch",
        "torch's jvp of fmin/fmax multiplies masks into the tangents, so a NaN tangent of the "
        "operand not picked shows through: fmin(x.var(0), b) at x = [-0.4] (var NaN, b picked, "
        "constant) has tangent NaN in torch; fmin(NaN + eps t, b) = b, so finite differences give"
        " 0, as numtorch does",
    ),
    (
        r"y\[[^\]]*\] = b",
        r"(numtorch RuntimeError: element 0 of tensors does not require grad[^\n]*\ntorch |torch raised: )RuntimeError: (Autograd not support dtype|isDifferentiableType|Subtraction, the `-` operator, with a bool tensor)",
        "torch lets a bool or integer tensor that a write of a value requiring grad goes into "
        "(y_bool[...] = b) require grad, then its backward fails on the dtype ('Autograd not "
        "support dtype: Bool', an internal assert isDifferentiableType, or logsumexp's backward "
        "subtracting from the bool input); y.copy_(b) leaves y out of autograd, as numtorch does "
        "for both (remainder(y_long, b) after y_long[...] = b: numtorch's d/db = -floor(y/b) = 0 "
        "at y = -1, b = -1.14, which central differences give)",
    ),
    (
        r"(?s)y = y\.(long|int|bool|ge|gt|le|lt|eq|ne)\(.*y\[[^\]]*\] = b",
        r"^(backward|grad|vmap_grad|vjp)[^\n]*(torch raised: |error differs: [^\n]*\ntorch )"
        r"RuntimeError: one of the variables needed for gradient computation has been modified",
        "a consequence of torch making an integer or bool y require grad after y[...] = b (the "
        "entry above): torch records the later ops on y, so an in-place write after them "
        "fails torch's version check in backward; numtorch's y has no history there",
    ),
    (
        r"lib\.cat\(",
        r"^vmap error differs: numtorch (?:"
        r"(\w+): ([^\n]*?)dim:? -?\d+([^\n]*)\ntorch \1: \2dim:? -?\d+\3$"
        r"|IndexError: (\w+)\(\): Expected reduction dim \d+ [^\n]*\ntorch RuntimeError: \4\(\): "
        r"Expected reduction dim to be specified"
        r"|RuntimeError: index \d+ is out of bounds for dimension \d+ with size 0\ntorch "
        r"IndexError: index out of range in self)",
        "torch.func's cat of empty batched tensors leaves the batch dim where a later op's "
        "error differs from the same op's without the cat: the empty-reduction errors of "
        "min/max/amin/amax/median and index_add_'s size check name another dim (min(-1) of a "
        "cat over in_dims=-1: dim 0, amin(-1): dim -1, both dim 1 without the cat, as numtorch "
        "names the physical dim); max() of everything raises the unbatched 'reduction dim to "
        "be specified' text; index_select takes the unbatched kernel's path (IndexError 'index "
        "out of range in self')",
    ),
    (
        r"\.mode\(",
        r"^\w+ result differs",
        "torch's CPU mode sorts each slice by `<`, which leaves NaN's place unspecified "
        "(mode([nan, 1, nan]) is nan at index 0); numtorch sorts NaN last, each NaN a run of "
        "its own (1 at index 1), so a NaN in the slice changes what follows",
    ),
    (
        r"logcumsumexp\(",
        r"^(backward|grad|vjp|vmap_grad) result differs",
        "torch's logcumsumexp backward computes exp(logcumsumexp(log|g| - r) + x), where log|g| "
        "vanishes against r at large |x|: x = [1e30, 0.5, -1.2] (float32), g = [-1.5, 0, 0]: r_0 "
        "= x_0, so d r_0/d x_0 = 1 and the gradient of x_0 is -1.5; torch gives 0 (and at x = "
        "[1e8, 1e8 + 16, 3.] with g = [1.93, -0.5, 2.] it gives [1, 0, 0] for the float64 "
        "weights' [1.93, 1.5, 0]); numtorch weighs exp(x_j - r_i) from x's running max and agrees"
        " with those by-hand float64 weights. The same formula drops a NaN cotangent (neither g >"
        " 0 nor g < 0): x = [[inf], [2.32]] over a size-1 dim, then logit (NaN, NaN gradient): "
        "torch's gradient of x[1] is 0, numtorch's NaN, as the chain rule and torch's own jvp "
        "(which propagates NaN tangents) give",
    ),
    (
        r"\.max\(\)",
        r"(?s)^(grad|vmap_grad) result differs: .*nan location mismatch",
        "torch.func.grad of max() (full reduction) spreads a NaN incoming gradient over every "
        "element (mask * (g / count)), while eager torch's backward writes it only where the max "
        "is (masked_fill): x = [[1.53, -4.13]], x.max().logit() (logit(1.53) = NaN, its gradient "
        "NaN): eager torch and numtorch give [[nan, 0.]], torch.func.grad [[nan, nan]]; x[0, 1] "
        "does not move the max, so its derivative is 0",
    ),
    (
        r"var_mean\(",
        r"result differs",
        "torch.var_mean's mean is NaN when an element is +-inf (its Welford update computes inf -"
        " inf), while torch.mean gives inf: var_mean(tensor([[inf], [inf]]), 0)[1] is [nan] in "
        "torch 2.13, x.mean(0) is [inf]; numtorch's var_mean returns the mean",
    ),
    (
        r"(?s)\.(sum|mean|prod|norm|std|var|logsumexp|nansum)\(.*lib\.(fmod|remainder)\(y, b\)",
        r"result differs",
        "fmod/remainder jump by |b| at multiples of b, so a float32 sum that rounds to either "
        "neighbour of a tie flips it: (0.5 + x).sum() of 16 float32 values is exactly halfway "
        "between 8.3599997 and 8.3600006 (by exact rational sum), torch rounds one way, NumPy's "
        "pairwise sum the other, and fmod(y, 0.44) is 0.44 vs 0; both sums are within half an ulp",
    ),
    (
        r"y\[y > 0\]",
        r"^(vmap|vmap_grad) error differs: numtorch IndexError: [^\n]*\ntorch IndexError: (Dimension out of range|The shape of the mask|too many indices)",
        "torch.func.vmap over an empty batched boolean mask indexes the mask as its batch rules "
        "happened to lay it out (the batch dim where the comparison left it) into the input with "
        "the batch first, so which check fails depends on torch's internal layout: x (1, 1, 0, 2)"
        " at in_dims=-1, x[x > 0] gives 'Dimension out of range (... got 4)' in torch, while each"
        " sample returns an empty tensor; numtorch raises the same checks on its own layout (the "
        "batch first), here 'The shape of the mask ... does not match'",
    ),
    (
        r"lib\.(addcmul|addcdiv|where|clamp)\(",
        r"^(vmap|vmap_grad) (torch raised: RuntimeError: expected dtype \w+ for `end` but got dtype|error differs: numtorch [^\n]*\[torch\.(\w+)Tensor [^\n]*\ntorch [^\n]*\[torch\.(?!\3)\w+Tensor |error differs: (?s:.*?)\ntorch RuntimeError: expected dtype \w+ for `end` but got dtype)",
        "a consequence of torch.func.vmap promoting a batched operand that is 0-d per sample as a"
        " dimensioned one (the entry above): vmap(lambda x, b: lerp(addcmul(x, b, b, value=0.5), "
        "b, 0.25), in_dims=(0, None)) with x float32 (2,) and b float64 0-d makes addcmul float32"
        " (each sample: float64), then lerp refuses the float64 end; with where the dtype a later"
        " error names differs (where(x > 0, x, b), x float32 (1, 1), b float64 0-d per sample: "
        "each sample Float, vmap Double; x float64 0-d unbatched, b float32 batched: each sample "
        "Double, vmap Float); numtorch follows the per-sample dtypes, where lerp takes the end, "
        "and a later line's own error (a bad argument) is then what it raises",
    ),
    (
        r"\.logit\(",
        r"(?s)^(grad|vmap_grad|jvp) result differs: .*inf values mismatch",
        "torch.func.grad (and its vmap) and forward AD divide by x (1 - x) at x = -0.0, so the "
        "sign of the zero picks -inf, where eager torch's logit backward gives the one-sided "
        "derivative of logit on [0, 1], +inf at either zero (1 / (x (1 - x)) -> +inf as x -> "
        "0+; tests/test_nonfinite_conventions.py): x = [-0.0], g = -1.78: eager torch and "
        "numtorch give -inf in every mode, torch.func.grad +inf; jvp with tangent 1: numtorch "
        "+inf, torch -inf",
    ),
    (
        r"lib\.(fmin|fmax|minimum|maximum)\(y, b\)",
        r"(?s)^(vmap|vmap_grad) result differs: .*nan location mismatch",
        "a consequence of torch.func.vmap promoting a batched operand that is 0-d per sample as"
        " a dimensioned one (the vmap dtype entry above): fmin(x32, b64) with x = [-0.39] "
        "(float32, -0.38999999) and b = -0.39 (float64, 0-d per sample) ties in each sample's "
        "float32, so y = fmin(x, b); y.sqrt_() gives x the NaN gradient (torch.func.grad on the "
        "sample: [nan], as numtorch's vmap); torch.func.vmap compares in float64, picks b, and "
        "gives x 0",
    ),
    (
        r".",
        r"^jvp (torch raised: |error differs: (?s:.*?)\ntorch )RuntimeError: expected (m1 and m2 to have the same dtype|dtype \w+ for `end` but got dtype)",
        "a consequence of torch's forward AD giving a float32 primal a float64 tangent (the jvp "
        "dtype entry above): a later op that needs one dtype then refuses the mix: max() then "
        "addcmul(y, b_int, b_int, value=0.5) then y.mT @ y ('expected m1 and m2 to have the same "
        "dtype', func.jvp and forward_ad alike); 0.5 / y then lerp(y, b, 0.25) ('expected dtype "
        "double for `end`'); numtorch keeps the tangent float32 and returns the result",
    ),
    (
        r".",
        r"(?s)^(vmap|vmap_grad) (error differs|torch raised|ours raised): .*(vmap: [\w ]+\(self, \*extra_args\)|output with shape)",
        "torch.func.vmap lets an in-place write through that each sample refuses (y = "
        "x.mT.narrow(0, 2, 1).squeeze() of shape (), y.add_(b) with b of shape (1,): each sample "
        "raises 'output with shape [] doesn't match the broadcast shape [1]', vmap returns shape "
        "(2,)), and refuses one on an empty tensor that each sample's grad accepts ('vmap: "
        "inplace arithmetic(self, *extra_args) is not possible' for clamp_/sigmoid_ of a size-0 "
        "view where per-sample grad returns zeros or the modified-variable error); numtorch does "
        "what each sample does",
    ),
    (
        r"logcumsumexp\(",
        r"^jvp result differs",
        "torch's jvp of logcumsumexp (func.jvp and forward_ad) normalizes by exp(x - amax(x)) "
        "over the whole dim: a NaN anywhere in the dim makes every tangent NaN, a +inf makes the "
        "ones before it 0, and a spread over ~88 (float32) underflows them to 0. r_0 = x_0, so "
        "the tangent of r_0 is t_0 whatever follows: x = [2.58, nan], t = [13.25, 1.67]: numtorch"
        " 13.25, torch nan; x = [1., inf]: numtorch 1.93 (t_0), torch 0; x = [-100., 50., -80., "
        "120.] (float32), t = [1.93, -0.5, 2., 1.]: numtorch [1.93, -0.5, -0.5, 1.] (the float64 "
        "weights by hand), torch [0, -2e-18, -2e-18, 1]",
    ),
    (
        r"\.(sinh|cosh)\(\)",
        r"(?s)result differs: .*inf location mismatch",
        "torch's vectorized float32 sinh/cosh kernel overflows below the float32 limit (it forms "
        "exp(x) first): torch.sinh(torch.full((3,), 88.94)) is 2.118e38 but "
        "torch.sinh(torch.full((16,), 88.94)) is inf; sinh(88.94) = 2.118e38 < 3.40e38 (float64 "
        "agrees), which numtorch gives at every size",
    ),
    (
        r"\.max\(\)",
        r"(?s)^jvp result differs: .*nan location mismatch",
        "torch's jvp of max() (full reduction) is NaN when the max is NaN although its vjp routes"
        " the gradient to the NaN element (x = [nan, 1.]: autograd.grad(x.max(), x) is [1, 0]); "
        "numtorch's jvp is the NaN element's tangent, the one that vjp implies (x = [[nan]], t = "
        "-2.47: numtorch -2.47, torch nan)",
    ),
    (
        r"logsumexp\(",
        r"(?s)^jvp result differs: .*nan location mismatch",
        "torch's jvp of logsumexp over an empty dim is NaN: logsumexp(x, -1) of x of shape (0,) "
        "is -inf whatever x holds (there is nothing in it), so its tangent is 0, which numtorch "
        "gives",
    ),
    (
        r"(cum)?prod\(",
        r"(?s)^(backward|grad|vjp|vmap_grad) result differs: .*nan location mismatch",
        "torch's prod and cumprod backward divide by x (g * result / x), which is inf / inf = "
        "NaN where x is infinite: cumprod of x = [inf, 2.] with g = [1, 1]: d c_0/d x_0 = 1 and "
        "d c_1/d x_0 = x_1 = 2, so the gradient of x_0 is 3; torch gives NaN, numtorch 3 (it "
        "takes the exact products of the others when x holds a zero or an infinity); over one "
        "element, NaN / NaN likewise: x.log1p().prod(-1) at x = [-1.26] (log1p NaN) has "
        "d/dx = 1/(1 + x) = -3.846 (the product of nothing else is 1), which torch.func.grad "
        "(its zero-safe formula) and numtorch give; eager torch and torch.func.vjp give NaN",
    ),
    (
        r"lib\.atan2\(",
        r"(?s)^jvp result differs: .*nan location mismatch",
        "torch's jvp of atan2 at the origin is NaN (0/0) while its backward gives 0 there (it "
        "masks the 0/0 terms): atan2(y, x) at y = x = 0 with tangent 1: torch.func.jvp gives "
        "NaN, torch's autograd.grad 0; atan2 has no derivative at the origin, and numtorch "
        "gives PyTorch's backward value, 0, in both",
    ),
    (
        r"(?s)\.(logit|sigmoid|exp|expm1|log|log1p|sum|mean|norm)\(.*lib\.(fmod|remainder)\(y, b\)",
        r"(forward|jvp|vmap) result differs: result(\[0\])?: shape",
        "a 1-ulp difference of a float value right at a multiple of b flips fmod/remainder by "
        "|b|, and a later mask then keeps a different number of elements: "
        "logit(sigmoid(1.)) in float32 is 1 ulp below or above 1 (torch's and NumPy's rounding "
        "differ), remainder(., 1) is then ~1 or ~0, and y[y > 0] has one element or none; "
        "neither value is wrong",
    ),
    (
        r"index_select\(",
        r"^vmap ours raised: RuntimeError: index \d+ is out of bounds for dimension \d+ with size 0",
        "torch.func.vmap's index_select batch rule skips the bounds check when the batched "
        "input is empty, where each sample raises: x of shape (2, 1, 1, 0), "
        "vmap(lambda r: r.diagonal().index_select(1, tensor([0, 0]))) returns an empty result "
        "in torch while each sample raises ('self indexing axis dim should be positive'); "
        "numtorch's vmap raises too (its gather's bounds error)",
    ),
    (
        r"(?s)\.(exp|exp2|expm1|pow|var|std|outer)\(.*\.(long|int)\(\)",
        r"(forward|vmap) result differs: (Arrays are not equal|result)",
        "float32 values of ~1e14 converted to integers keep their float32 rounding: a 1-ulp "
        "difference of torch's and NumPy's exp2/expm1 (float32) is ~1e7 there, and the integer "
        "results are compared exactly (exp2, var, outer, expm1 then long(): 730868054099227 "
        "against 730865266064177, 3.8e-6 relative); neither is wrong",
    ),
    (
        r"(?s)\.(tanh|exp|log|sin|cos|logit|sigmoid|expm1|log1p)\(.*\.(sum|mean)\([^\n]*\n"
        r"\s*y = -?[\d.]+ / y",
        r"^\w+ result differs",
        "NumPy's float64 tanh is 1 ulp from torch's (tanh(-0.42802478811797623) is "
        "-0.403669274746594 in NumPy, -0.40366927474659403 in torch), and a mean that cancels "
        "to ~1e-16 turns the ulp into 25% (5.55e-17 against 6.94e-17), which 2 / y shows; "
        "neither is wrong",
    ),
    (
        r"(?s)\.tanh_?\(.*(\.(trunc|floor|ceil|round|fix|long|int)\(|lib\.(remainder|fmod)\()",
        r"^\w+ result differs",
        "NumPy's float32 tanh is 1 ulp from the correctly rounded value near -1, and rounding "
        "toward zero then flips the integer: tanh(float32(-9.0972)) is -0.99999994 in NumPy "
        "and -1.0 in torch (float64: -0.99999997492, so -1.0 is the nearer float32), and "
        "trunc (or long()) gives -0.0 against -1.0 (float64 near 1 likewise: remainder(y, 1) "
        "of tanh(19.0) is 0.0 against 0.9999999999999999); a 1-ulp difference, not a wrong "
        "formula",
    ),
    (
        r"(?s)( @ |\.mm\(|\.matmul\(|\.mv\().*(lib\.where\(y > 0|\.sign\(|\.relu\(|> 0)",
        r"^\w+ result differs",
        "a float32 product whose exact value is 0 comes out as a tiny number of either sign "
        "(the order of the sums differs between NumPy's BLAS and torch's): y = deg2rad of "
        "integers (float32), (y.mT @ y)[0, 2] is 0 in exact arithmetic, +3.7e-11 in NumPy "
        "and negative in torch, and where(y > 0, y, b) then picks differently; neither is "
        "wrong",
    ),
    (
        r"(?s)\.(var|std)\(.*(\.(logical_\w+|eq|ne|sign|all|any)\(|lib\.where\(y [<>])",
        r"^\w+ result differs",
        "torch's var of equal values is not 0: float32 [1.7975843] * 3 gives 2.13e-14 in "
        "torch (its mean rounds; float64 sigmoid(logsumexp) values likewise), 0 in numtorch "
        "(issue 14: the spread of equal values is exactly 0), and a later logical_xor(var, "
        "b), all() or where(y > 0, y, b) then differs",
    ),
    (
        r"(?s)\.(log_softmax|softmax)\(.*\.logsumexp\(.*\.(logical_\w+|eq|ne|sign|all|any|div_)\(",
        r"^\w+ result differs: (Arrays are not equal|(?s:.*)nan location mismatch)",
        "logsumexp of log_softmax is log(1) = 0 up to rounding: for float64 [2.42, -1.05, "
        "1.06, -1.31] numtorch's is exactly 0.0 and torch's 5.6e-17, and a later "
        "logical_xor(y, b) tests it against zero; neither is wrong (for [1.31, -1.69] torch's "
        "is -6.9e-18, numtorch's 0.0, and y.div_(y) is 1 in torch, 0 / 0 = NaN in numtorch)",
    ),
    (
        r"(?s)\.(log_softmax|softmax)\(.*\.logcumsumexp\(.*\.atan2\(",
        r"^\w+ result differs: (?s:.*)Mismatch",
        "logcumsumexp of log_softmax ends in log(1) = 0 up to rounding: for float32 [-0.17, "
        "0.30] torch's last element is below zero, numtorch's +0.0, and atan2(y, -3.1) is -pi "
        "or pi by that sign; neither is wrong",
    ),
    (
        r"(?s)\.(index_select|expand|repeat|tile|broadcast_to|\[\[).*\.prod\(",
        r"^\w+ result differs: (?s:.*)inf location mismatch",
        "torch.func's prod backward takes the zero-safe formula (products of the others, by "
        "exclusive cumprods) where eager torch divides the result by x: an overflowed "
        "float32 product of [1e30, 1e30] has the finite gradients [1e30, 1e30] under "
        "torch.func.grad but inf in eager torch; numtorch gives eager's inf everywhere (the "
        "same in torch.func.jvp)",
    ),
    (
        r"(?s)lib\.\w+\(y, b\).*(broadcast_to|expand)\(.*\[\[.*\.view\(-1\)",
        r"^(vmap|vmap_grad) ours raised: RuntimeError: view size is not compatible",
        "the strides of size-one dims: torch's elementwise result gives one the stride its "
        "inputs' memory order implies (minimum(x.mT, b) of x (1, 4) has strides (1, 4)), "
        "numtorch's keeps NumPy's (1, 1); that is seen only where a later op orders dims by "
        "those strides: under vmap an advanced index of its expansion is laid out otherwise, "
        "and its .view(-1) fails where torch.func's succeeds (the same program runs in eager)",
    ),
    (
        r"(?s)\.log_softmax\(.*\.(abs|neg|sin|tanh|exp|sqrt|zero|sigmoid|floor)_\(",
        r"^vmap_grad torch raised: RuntimeError: one of the variables needed for gradient "
        r"computation has been modified by an inplace operation: \[torch\.\w+ \[\]\], which "
        r"is output 0 of LogSoftmax",
        "torch.func under vmap saves log_softmax's result for a logical 0-d input, where eager "
        "torch and torch.func.grad do not, so an in-place write into it fails torch's version "
        "check only under vmap(grad); numtorch's gradient (0: log_softmax of one element is "
        "constant) matches eager's",
    ),
    (
        r"(?s)(\*\* |pow\(|exp\(|expm1\().*\.(sin|cos|tan)_?\(",
        r"^\w+ result differs: Not equal to tolerance rtol=0\.001",
        "float32 arguments in the thousands: a 1-ulp difference of pow/exp (1.2e-4 at 1267) "
        "moves sin/cos and their derivatives by ~1e-4 absolute, a large relative error "
        "where cos is small: expm1(2.47) ** 3 = 1267 in float32, then sin_, gives gradients "
        "406.97 (numtorch) and 405.97 (torch); neither is wrong",
    ),
    (
        r"(?s)lib\.logaddexp\(.*\.(cummin|cummax)\(",
        r"^\w+ result differs",
        "torch's logaddexp rounds its vectorized body and its scalar tail differently: nine "
        "identical inputs give eight 0x1.0326c525284b3p+1 and one ...b4p+1, so the ties that "
        "cummin's indices resolve differ ([0, 1, 1] in one row, [0, 1, 2] in the others); "
        "numtorch's values are identical and so are its rows",
    ),
    (
        r"(?s)\.(eq|ne|lt|le|gt|ge)\(b\)",
        r"^vmap result differs",
        "torch.func.vmap compares a float32 value with a batched 0-d float64 operand in "
        "float64 (it promotes the batched 0-d tensor as a dimensioned one), where each sample "
        "compares in float32: y = fmin(float32 2.0, float64 -1.2) is float32 -1.2; torch's "
        "y.eq(b) per sample is True, under vmap(in_dims=-1) False; numtorch gives True",
    ),
    (
        r"(?s)lib\.(fmax|fmin|maximum|minimum|clamp)\(.*\.(std|var)\(",
        r"^(backward|grad|vmap_grad) result differs",
        "torch's std of values clipped to one number is rounding noise, not 0, so its "
        "gradient there is O(1) noise: fmax([-1.09, 0.14, 1.75], 2.8).std() has b's gradient "
        "-2.66 in torch; numtorch's std of equal values is exactly 0 and its gradient 0 "
        "(PyTorch's own rule where the std is 0)",
    ),
    (
        r"(?s)lib\.addcmul\(.*@",
        r"^jvp torch raised: RuntimeError: expected scalar type Float but found Double",
        "torch.func.jvp of addcmul(float32 x, bool b, b, value=0.5) gives a float64 tangent, "
        "and a later matmul of the dual tensor then refuses the mixed dtypes ('expected "
        "scalar type Float but found Double'); the tangent of a float32 primal is float32 "
        "(numtorch), and the primal program runs in torch",
    ),
    (
        r"\.cumprod\(",
        r"(?s)^jvp result differs: .*nan location mismatch",
        "torch's cumprod jvp divides the tangent by the input, so at an infinite input it is "
        "NaN: torch.func.jvp(lambda x: x.cumprod(0), (tensor([-inf]),), (tensor([-0.25]),)) "
        "gives NaN while cumprod of one element is the identity (torch's own backward gives "
        "d/dx = 1 there); numtorch gives -0.25",
    ),
    (
        r"\.view\(",
        r"^(vmap|vmap_grad) torch raised: RuntimeError: view size is not compatible",
        "torch.func.vmap keeps the batch dim where an input at in_dims=-1 had it in memory, so "
        "an elementwise result of an expanded input is not contiguous per sample and a later "
        "view(-1) fails: x (1, 4, 2), b (2, 1, 1), vmap(lambda x, b: (x.expand(3, 4) - b)"
        ".view(-1), in_dims=(-1, 0)) raises in torch while each sample's result is (3, 4) "
        "contiguous and views to (12,); numtorch returns the per-sample results (outer, "
        "addcdiv and other elementwise results at in_dims=-1 alike)",
    ),
]


# ------------------------------------------------------------------ programs
@dataclass
class Prog:
    seed: int
    X: np.ndarray
    B: np.ndarray
    lines: list = field(default_factory=list)  # [(op key, code line)]
    in_dims: tuple = (0, None)
    cls: str = "base"  # a name of progfuzz_classes.CLASSES, or "base"

    def keys(self):
        return [k for k, _ in self.lines]


def _lit(a: np.ndarray) -> str:
    body = repr(a.reshape(-1).tolist())
    return f"np.array({body}, dtype=np.{a.dtype}).reshape({a.shape})"


def body_text(p: Prog) -> str:
    lines = [code for _, code in p.lines] or ["pass"]
    return (
        "def f(lib, x, b):\n    y = x\n" + "".join(f"    {c}\n" for c in lines) + "    return y\n"
    )


_W_T = (
    "    def loss(x, b):\n"
    "        y = f(lib, x, b)\n"
    "        return (y * lib.tensor(W).to(y.dtype)).sum()\n"
)
DRIVERS = {
    "forward": "    x, b = lib.tensor(X), lib.tensor(B)\n    return f(lib, x, b), x, b\n",
    "backward": (
        "    x = lib.tensor(X, requires_grad=True)\n"
        "    b = lib.tensor(B, requires_grad=B.dtype.kind == 'f')\n"
        + _W_T
        + "    out = loss(x, b)\n    out.backward()\n    return out, x.grad, b.grad\n"
    ),
    "grad": _W_T + "    return lib.func.grad(loss)(lib.tensor(X), lib.tensor(B))\n",
    "vjp": (
        "    b = lib.tensor(B)\n"
        "    out, fn = lib.func.vjp(lambda x: f(lib, x, b), lib.tensor(X))\n"
        "    return out, fn(lib.tensor(W).to(out.dtype))\n"
    ),
    "jvp": (
        "    b = lib.tensor(B)\n"
        "    return lib.func.jvp(lambda x: f(lib, x, b), (lib.tensor(X),), (lib.tensor(T),))\n"
    ),
    "vmap": (
        "    return lib.func.vmap(lambda x, b: f(lib, x, b), in_dims=IN_DIMS)"
        "(lib.tensor(XB), lib.tensor(BB))\n"
    ),
    "vmap_grad": _W_T
    + "    return lib.func.vmap(lib.func.grad(loss), in_dims=IN_DIMS)(lib.tensor(XB), lib.tensor(BB))\n",
}


def _batched(a: np.ndarray, dim, seed: int) -> np.ndarray:
    if dim is None:
        return a
    other = _values(np.random.default_rng(seed), a.shape, a.dtype)
    return np.stack([a, other], axis=dim if dim == 0 else a.ndim)


def _values(rng, shape, dtype) -> np.ndarray:
    v = np.round(rng.standard_normal(shape) * 2, 2)
    if dtype == "bool":
        return v > 0
    if dtype == "int64":
        return np.round(v).astype(np.int64)
    return v.astype(dtype)


def script(p: Prog, mode: str) -> str:
    """The whole program of one mode as runnable text: inputs, body f, driver run(lib)."""
    rng = np.random.default_rng(p.seed + 1)
    head = [
        "import numpy as np",
        "inf, nan = float('inf'), float('nan')",
        f"X = {_lit(p.X)}",
        f"B = {_lit(p.B)}",
    ]
    if mode in ("backward", "grad", "vjp", "vmap_grad"):
        y = _torch_y(p)
        w = _values(rng, tuple(y.shape), "float64") if y is not None else np.zeros(())
        head.append(f"W = {_lit(w)}")
    if mode == "jvp":
        head.append(f"T = {_lit(_values(rng, p.X.shape, str(p.X.dtype)))}")
    if mode.startswith("vmap"):
        dx, db = p.in_dims
        head += [
            f"XB = {_lit(_batched(p.X, dx, p.seed + 2))}",
            f"BB = {_lit(_batched(p.B, db, p.seed + 3))}",
            f"IN_DIMS = {p.in_dims!r}",
        ]
    return "\n".join(head) + "\n\n" + body_text(p) + "\n\ndef run(lib):\n" + DRIVERS[mode]


def _torch_y(p: Prog):
    try:
        ns = _exec(body_text(p))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ns["f"](torch, torch.tensor(p.X), torch.tensor(p.B))
    except Exception:  # noqa: BLE001
        return None


_CODE: dict = {}


def _exec(text: str) -> dict:
    code = _CODE.get(text)
    if code is None:
        code = _CODE[text] = compile(text, "<prog>", "exec")
        if len(_CODE) > 20000:
            _CODE.clear()
    ns: dict = {"np": np, "inf": float("inf"), "nan": float("nan")}
    exec(code, ns)
    return ns


def _outcome(run, lib):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return run(lib)
    except Exception as e:  # noqa: BLE001 - compared by type and text
        return Raised(type(e), str(e))


# ------------------------------------------------------------------ generating
def _input(r: random.Random, rng) -> tuple[np.ndarray, str]:
    """A random input array and the line that makes it non-contiguous (or '')."""
    dtype = r.choices(["float32", "float64", "int64", "bool"], [4, 5, 1, 0.5])[0]
    ndim = r.choices([0, 1, 2, 3], [1, 3, 4, 2])[0]
    shape = [r.choices([0, 1, 2, 3, 4], [0.5, 2, 3, 2, 1])[0] for _ in range(ndim)]
    layout = r.choice(["", "", "t", "step", "expand"]) if ndim else ""
    if layout == "t" and ndim >= 2:
        X = _values(rng, shape[::-1], dtype)
        line = "y = x.mT" if ndim == 2 else "y = x.transpose(0, 2)"
    elif layout == "step":
        X = _values(rng, [2 * shape[0] + 1, *shape[1:]], dtype)
        line = "y = x[::2]"
    elif layout == "expand":
        X = _values(rng, [1, *shape[1:]], dtype)
        line = f"y = x.expand({shape[0]}, *{tuple(shape[1:])})"
    else:
        X, line = _values(rng, shape, dtype), ""
    if r.random() < 0.05 and X.size and X.dtype.kind == "f":
        X.reshape(-1)[0] = r.choice([np.inf, -np.inf, np.nan, 0.0, 1e30])
    return X, line


def _b_for(r: random.Random, rng, shape) -> np.ndarray:
    """A second operand broadcasting with ``shape`` (a suffix with some 1s), sometimes not."""
    k = r.randrange(len(shape) + 1)
    bs = [1 if r.random() < 0.3 else s for s in shape[len(shape) - k :]]
    if r.random() < 0.05:
        bs = [5] + bs
    dtype = r.choices(["float32", "float64", "int64", "bool"], [3, 5, 1, 0.5])[0]
    return _values(rng, bs, dtype)


def draw_class(seed: int) -> str:
    """The class of a seed's program in the default mix (its own stream, so a base program
    is the same as before classes existed)."""
    names = list(MIX)
    return random.Random(f"class {seed}").choices(names, [MIX[n] for n in names])[0]


def generate(seed: int, exclude=(), cls: str | None = None) -> Prog:
    """A random program of 2-6 lines (torch decides the shapes as it is built), of class
    ``cls`` (drawn from ``MIX`` when None)."""
    cls = draw_class(seed) if cls is None else cls
    klass = CLASSES.get(cls)
    r = random.Random(seed)
    rng = np.random.default_rng(seed)
    X, line = _input(r, rng)
    if klass is not None and klass.inputs is not None:
        X = klass.inputs(r, rng, X)
    p = Prog(seed, X, np.zeros(()), in_dims=(r.choice([0, -1, None]), r.choice([0, -1, None])))
    p.cls = cls
    if p.in_dims == (None, None):
        p.in_dims = (r.choice([0, -1]), None)
    if line:
        p.lines.append(("layout", line))
    y = _torch_y(p)
    if y is None:  # a class's input form the layout line cannot take (an empty dim)
        p.lines, y = [], _torch_y(replace(p, lines=[]))
    p.B = _b_for(r, rng, tuple(y.shape))
    keys = [k for k in OPS if k not in exclude]
    own = [k for k in (klass.ops if klass else ()) if k not in exclude]
    n_lines = r.randint(2, 6)
    if klass is not None and klass.ends:
        n_lines -= r.randint(1, 2)
    for _ in range(n_lines):
        for _attempt in range(20):
            table, key = OPS, None
            if own and not klass.ends and r.random() < klass.share:
                table, key = klass.ops, r.choice(own)
            key = key or r.choice(keys)
            code = table[key](r, tuple(y.shape), str(y.dtype).replace("torch.", ""))
            if code is None:
                continue
            q = replace(p, lines=[*p.lines, (key, code)])
            ny = _torch_y(q)
            if ny is None:
                if r.random() < 0.1:  # keep an error: the program ends there
                    return q
                continue
            if not isinstance(ny, torch.Tensor) or ny.numel() > 5000:
                continue
            p, y = q, ny
            break
    if own and klass.ends:  # the class's line, kept whatever torch does with it
        for _attempt in range(20):
            key = r.choice(own)
            code = klass.ops[key](r, tuple(y.shape), str(y.dtype).replace("torch.", ""))
            if code is not None:
                return replace(p, lines=[*p.lines, (key, code)])
    return p


# ------------------------------------------------------------------ checking
@dataclass
class Failure:
    mode: str
    kind: str  # 'ours raised', 'torch raised', 'error differs', 'result differs'
    detail: str

    def signature(self) -> tuple:
        return (self.mode, self.kind, self.detail.split("\n")[0][:80])


def _tol(p: Prog):
    """float32's tolerances when an input or any value the program computes is float32 (a
    bool input with a float64 one may still compute in float32: bool.asinh() is float32;
    y.float() then a float64 op keeps float32's rounding)."""
    f32 = "float32" in (str(p.X.dtype), str(p.B.dtype))
    if not f32:
        seen = _Float32Seen()
        with seen:
            _torch_y(p)
        f32 = seen.found
    return (1e-3, 1e-4) if f32 else (1e-6, 1e-8)


class _Float32Seen(torch.overrides.TorchFunctionMode):
    """Notes whether a torch call returns a float32 tensor."""

    found = False

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if not self.found:
            outs = out if isinstance(out, (tuple, list)) else (out,)
            self.found = any(isinstance(o, torch.Tensor) and o.dtype == torch.float32 for o in outs)
        return out


def modes_for(p: Prog) -> list[str]:
    y = _torch_y(p)
    x_float = p.X.dtype.kind == "f"
    y_float = isinstance(y, torch.Tensor) and y.dtype.is_floating_point
    grads = x_float and y_float
    klass = CLASSES.get(p.cls)
    extra = klass.modes if klass is not None else ()
    return [
        m
        for m in MODES
        if m in ("forward", "vmap")
        or (m == "jvp" and x_float)
        or (grads and m not in ("jvp", "vjp"))
        or (grads and m == "vjp" and m in extra)
    ]


def check_mode(p: Prog, mode: str) -> Failure | None:
    """Run one mode on both libraries and compare; a Failure or None."""
    ns = _exec(script(p, mode))
    theirs = _outcome(ns["run"], torch)
    ns = _exec(script(p, mode))
    ours = _outcome(ns["run"], nt)
    if isinstance(theirs, Raised) and isinstance(ours, Raised):
        if theirs != ours:
            return Failure(
                mode,
                "error differs",
                f"numtorch {ours.type.__name__}: {ours.text}\n"
                f"torch {theirs.type.__name__}: {theirs.text}",
            )
        return None
    if isinstance(ours, Raised):
        return Failure(mode, "ours raised", f"{ours.type.__name__}: {ours.text}")
    if isinstance(theirs, Raised):
        return Failure(mode, "torch raised", f"{theirs.type.__name__}: {theirs.text}")
    rtol, atol = _tol(p)
    try:
        assert_close(ours, theirs, rtol=rtol, atol=atol)
    except AssertionError as e:
        return Failure(mode, "result differs", str(e).strip())
    except Exception as e:  # noqa: BLE001 - reading numtorch's result failed
        return Failure(mode, "ours raised", f"{type(e).__name__} on reading: {e}")
    return None


def check(p: Prog, modes=None) -> list[Failure]:
    out = []
    for m in modes or modes_for(p):
        f = check_mode(p, m)
        if f is not None:
            out.append(f)
    return out


def _gist(f: Failure) -> str:
    """What makes two failures the same: the first 50 characters of each line, digits and
    bracketed shapes blanked."""
    lines = [re.sub(r"\[[^\]]*\]|\d+", "#", ln)[:50] for ln in f.detail.split("\n")[:2]]
    return f.kind + "|" + "|".join(lines)


def _same(f: Failure | None, g: Failure) -> bool:
    if f is None or f.kind != g.kind:
        return False
    if f.kind == "result differs":
        return f.detail.split(":")[0].split("[")[0] == g.detail.split(":")[0].split("[")[0]
    return _gist(f) == _gist(g)


def shrink(p: Prog, fail: Failure, budget: float = 20.0) -> Prog:
    """Drop lines and shrink inputs while the program still fails the same way."""
    t0 = time.time()
    changed = True
    while changed and time.time() - t0 < budget:
        changed = False
        for i in range(len(p.lines)):
            q = replace(p, lines=p.lines[:i] + p.lines[i + 1 :])
            if _same(check_mode(q, fail.mode), fail):
                p, changed = q, True
                break
        if changed:
            continue
        for name in ("X", "B"):
            a = getattr(p, name)
            for d in range(a.ndim):
                for n in (1, a.shape[d] - 1):
                    if 0 < n < a.shape[d]:
                        q = replace(p, **{name: np.take(a, range(n), axis=d)})
                        if _same(check_mode(q, fail.mode), fail):
                            p, changed = q, True
                            break
                if changed:
                    break
            if changed:
                break
    return p


def _matching(entries, p: Prog, fail: Failure) -> str | None:
    """The reason of the first (body regex, failure regex, reason) entry that matches."""
    text = f"{fail.mode} {fail.kind}: {fail.detail}"
    body = body_text(p)
    for prog_pat, fail_pat, why in entries:
        if re.search(prog_pat, body) and re.search(fail_pat, text):
            return why
    return None


def torch_divergence(p: Prog, fail: Failure) -> str | None:
    """The recorded torch divergence that explains a failure, or None."""
    why = _matching(KNOWN_TORCH_DIVERGENCES + CLASS_DIVERGENCES, p, fail)
    return None if why is None else "torch divergence: " + why


def known_open(p: Prog, fail: Failure) -> str | None:
    """The known open bug (or torch divergence) a failure belongs to, or None."""
    for k in p.keys():
        if k in KNOWN_OPEN:
            return KNOWN_OPEN[k]
    # a recorded torch divergence in the program explains what follows from it first
    why = torch_divergence(p, fail)
    if why is not None:
        return why
    text = f"{fail.mode} {fail.kind}: {fail.detail}"
    for pat, why in KNOWN_OPEN_FAILURES:
        if re.search(pat, text):
            return why
    return _matching(CLASS_OPEN, p, fail)


def repro(p: Prog, fail: Failure) -> str:
    """A runnable script for a failure, with what went wrong as a comment."""
    note = "".join(f"# {ln}\n" for ln in f"{fail.mode}: {fail.kind}\n{fail.detail}".split("\n"))
    tail = (
        "\n\nimport torch\nimport numtorch\n"
        "for lib in (numtorch, torch):\n"
        "    try:\n        print(lib.__name__, run(lib))\n"
        "    except Exception as e:\n        print(lib.__name__, type(e).__name__, e)\n"
    )
    return note + script(p, fail.mode) + tail


def fuzz(seconds: float | None = None, seeds=None, exclude=(), do_shrink=True, log=print, cls=None):
    """Run fresh programs (for ``seconds``, or over ``seeds``) of class ``cls`` (or of the
    default mix); shrink each failure; group them by signature. Returns (programs run,
    {signature: (known-open reason, repro, seed)})."""
    groups: dict = {}
    seen: dict = {}
    n = 0
    t0 = time.time()
    it = iter(seeds) if seeds is not None else iter(lambda: random.randrange(1 << 40), None)
    for seed in it:
        if seconds is not None and time.time() - t0 > seconds:
            break
        p = generate(seed, exclude, cls)
        n += 1
        for f in check(p):
            pre = (f.mode, _gist(f))
            seen[pre] = seen.get(pre, 0) + 1
            if seen[pre] > 1:
                continue
            q = shrink(p, f) if do_shrink else p
            g = check_mode(q, f.mode) or f
            sig = (g.mode, _gist(g), tuple(q.keys()))
            if sig not in groups:
                groups[sig] = (known_open(q, g), repro(q, g), seed)
                log(
                    f"[{n}] seed {seed} {p.cls} {g.mode} {g.kind}: {g.detail.splitlines()[0][:100]}"
                )
    return n, groups


if __name__ == "__main__":
    import sys

    secs = float(sys.argv[1]) if len(sys.argv) > 1 else 60
    only = sys.argv[2] if len(sys.argv) > 2 else None
    n, groups = fuzz(secs, log=lambda m: print(m, flush=True), cls=only)
    print(f"\n{n} programs, {len(groups)} distinct failures\n")
    for _sig, (why, text, seed) in sorted(groups.items(), key=lambda kv: str(kv[0])):
        print("=" * 80)
        print(f"seed {seed}  known: {why}")
        print(text)
