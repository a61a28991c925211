"""Classes of random program for tests/progfuzz.py, each a family of lines that past bugs
clustered in, drawn more often than the base table would draw them:

    alias       in-place ops whose operands alias what they write (y.mul_(y), views of one
                base) under jvp and grad
    fresh       in-place writes into tensors made inside the program (zeros, zeros_like,
                index_copy_/index_add_ into new buffers, row-by-row assembly loops)
    clamp_ties  clamps by tensor bounds that equal some of the values (both bounds, clip,
                clamp_min/max, in place)
    nonfinite   NaN, infinities, all-NaN rows and empty dims into reductions and the ops
                whose derivatives have conventions there
    badarg      a call with a bad argument form (a float size, a string dtype, sort's wrong
                positional forms, a missing argument, a tensor for a number and back); the
                program ends there and both libraries must raise alike

``CLASSES`` maps a name to its ``ProgClass``; ``MIX`` is the default mix's weights ("base" is
progfuzz's own table alone). ``CLASS_DIVERGENCES`` (torch wrong) and ``CLASS_OPEN`` (numtorch
bugs, each with a minimal repro) record what fuzzing these classes found, in the form of
progfuzz's ``KNOWN_TORCH_DIVERGENCES``. A line generator is ``gen(r, shape, dtype) -> code | None`` as in
progfuzz's ``OPS``; a code may span lines (a loop) when its later lines carry their indent.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

FLOATS = ("float32", "float64")


@dataclass(frozen=True)
class ProgClass:
    """One class: its line generators, the share of a program's lines drawn from them, and
    how it changes inputs and modes."""

    name: str
    ops: dict
    share: float = 0.5  # of a program's lines drawn from ``ops`` (the rest from the base table)
    ends: bool = False  # the class's line is drawn last and kept whatever torch does
    inputs: Callable | None = None  # (r, rng, X) -> X, the class's input form
    modes: tuple = ()  # modes run beyond progfuzz's own


def _line(code: str, ndim: int = 0, floats: bool = False, square: bool = False):
    """A generator from a format string: ``{d}``/``{d2}`` a dim of y, ``{k}`` a keepdim,
    ``{c}`` a Python number, ``{i}`` an index into dim 0, ``{n}`` y's dim-0 size, ``{s}``
    y's shape; None where y has fewer than ``ndim`` dims (1 when the text names a dim), is
    not floating (``floats``) or not a square matrix (``square``)."""
    need = max(ndim, 1 if ("{d}" in code or "{i}" in code or "{n}" in code) else 0)

    def gen(r: random.Random, shape: tuple, dtype: str):
        n = len(shape)
        if n < need or (floats and dtype not in FLOATS):
            return None
        if square and (n != 2 or shape[0] != shape[1]):
            return None
        return code.format(
            d=r.randrange(-n, n) if n else 0,
            d2=r.randrange(-n, n) if n else 0,
            k=r.choice([True, False]),
            c=r.choice([2, -1, 0.5, 1.5, -2.5, 3]),
            i=r.randrange(-max(1, shape[0]), max(1, shape[0])) if n else 0,
            n=shape[0] if n else 1,
            s=tuple(shape),
        )

    return gen


def _pick(*gens):
    """A generator choosing one of ``gens`` (each a generator or a format string)."""
    gens = [g if callable(g) else _line(g) for g in gens]
    return lambda r, s, d: r.choice(gens)(r, s, d)


# ------------------------------------------------------------------ (a) aliasing in-place
def _alias_ops() -> dict:
    c = "y = y.clone(); "
    # a C-contiguous copy: torch detects a partial overlap of dense views and refuses it; of
    # views that are not dense it computes in its kernels' order (see progfuzz's divergences)
    cc = "y = y.contiguous().clone(); "
    return {
        "alias.mul_self": _pick("y.mul_(y)", c + "y.mul_(y)"),
        "alias.add_self": _pick("y.add_(y)", c + "y.add_(y, alpha={c})"),
        "alias.sub_self": _line(c + "y.sub_(y)"),
        "alias.div_self": _line(c + "y.div_(y)", floats=True),
        "alias.pow_self": _line(c + "y.abs_().pow_(y)", floats=True),
        "alias.addcmul_self": _line(c + "y.addcmul_(y, y, value={c})", floats=True),
        "alias.addcdiv_self": _line(c + "y.addcdiv_(y, b, value={c})", floats=True),
        "alias.lerp_self": _line(c + "y.lerp_(y, 0.25)", floats=True),
        "alias.copy_self": _line("y.copy_(y)"),
        "alias.copy_flip": _line(c + "y.copy_(y.flip(0))", ndim=1),
        "alias.clamp_self": _line(c + "y.clamp_(min=y)", floats=True),
        "alias.out_self": _line(c + "lib.mul(y, y, out=y)", floats=True),
        "alias.first_row": _line(cc + "y.mul_(y[:1])", ndim=1),
        "alias.rows": _pick(c + "y[0].add_(y[-1])", c + "y[{i}].mul_(y[0])"),
        "alias.shifted": _line(cc + "y[1:].add_(y[:-1])", ndim=1),
        "alias.strided": _line(c + "y[::2].mul_(y[::2])", ndim=1),
        "alias.transposed": _line(cc + "y.t().mul_(y)", ndim=2),
        "alias.diag": _line(c + "y.diagonal().mul_(y.diagonal())", ndim=2),
        "alias.unsqueezed": _line(c + "y.unsqueeze(0).mul_(y)"),
        "alias.flat": _line(cc + "v = y.view(-1); v.add_(y.reshape(-1))"),
        "alias.index_add_self": _line(c + "y.index_add_(0, lib.tensor([0]), y[:1])", ndim=1),
        "alias.masked_scatter": _line(c + "y.masked_scatter_(y > 0, y * {c})"),
        "alias.chain": _line(c + "y.abs_().mul_(y).add_(y)"),
        "alias.detached": _line(c + "y.mul_(y.detach())"),
    }


# ------------------------------------------------------------------ (b) fresh buffers
def _fresh_ops() -> dict:
    def assemble(r, shape, dtype):
        if not shape or shape[0] > 6:
            return None
        body = r.choice(["y[i].exp() * (i + 1)", "y[i] * y[-1 - i]", "y[i].sin() + i"])
        return f"o = lib.zeros_like(y)\n    for i in range(y.shape[0]):\n        o[i] = {body}\n    y = o"

    def scan(r, shape, dtype):
        if not shape or shape[0] > 6 or dtype not in FLOATS:
            return None
        return (
            "o = lib.zeros_like(y); o[0] = y[0]\n    for i in range(1, y.shape[0]):\n"
            "        o[i] = o[i - 1] * 0.5 + y[i]\n    y = o"
        )

    def index_copy(r, shape, dtype):
        if not shape:
            return None
        perm = list(range(shape[0]))
        r.shuffle(perm)
        rest = ", ".join(str(s) for s in shape[1:])
        return (
            f"o = lib.zeros({shape[0]}, {rest}{', ' if rest else ''}dtype=y.dtype); "
            f"o.index_copy_(0, lib.tensor({perm}, dtype=lib.long), y); y = o"
        )

    def index_add(r, shape, dtype):
        if not shape:
            return None
        idx = [r.randrange(2) for _ in range(shape[0])]
        rest = ", ".join(str(s) for s in shape[1:])
        return (
            f"o = lib.zeros(2{', ' if rest else ''}{rest}, dtype=y.dtype); "
            f"o.index_add_(0, lib.tensor({idx}, dtype=lib.long), y); y = o"
        )

    return {
        "fresh.zeros_like_add_": _pick(
            "y = lib.zeros_like(y).add_(y)", "o = lib.zeros_like(y); o.add_(y * {c}); y = o"
        ),
        "fresh.zeros_add_": _pick(
            "o = lib.zeros({s}, dtype=y.dtype); o.add_(y); y = o",
            "o = lib.zeros({s}); o.add_(y); y = o",
            "o = lib.zeros({s}, dtype=y.dtype); o += y; y = o",
        ),
        "fresh.zeros_like_mul_b": _line("y = lib.zeros_like(y).mul_(b)"),
        "fresh.ones_like_mul_": _line("y = lib.ones_like(y).mul_(y)"),
        "fresh.setitem_row": _line("o = lib.zeros_like(y); o[{i}] = y[{i}].exp(); y = o"),
        "fresh.setitem_all": _pick(
            "o = lib.zeros({s}, dtype=y.dtype); o[...] = y.sin(); y = o",
            "o = lib.empty_like(y); o[:] = y * {c}; y = o",
        ),
        "fresh.setitem_mask": _line("o = lib.zeros_like(y); o[y > 0] = y[y > 0]; y = o"),
        "fresh.copy_": _pick(
            "o = y.new_zeros(y.shape); o.copy_(y); y = o",
            "o = lib.empty({s}, dtype=y.dtype); o.copy_(y.exp()); y = o",
        ),
        "fresh.new_column": _line(
            "o = lib.zeros({n}, 2, dtype=y.dtype); o[:, 0] = y.reshape({n}, -1).sum(-1); "
            "o[:, 1] = y.reshape({n}, -1)[:, 0]; y = o"
        ),
        "fresh.index_copy_": index_copy,
        "fresh.index_add_": index_add,
        "fresh.scatter_": _line(
            "o = lib.zeros_like(y); o.scatter_(0, lib.zeros_like(y, dtype=lib.long), y); y = o",
            ndim=1,
        ),
        "fresh.masked_fill_": _line("o = y * 1; o.masked_fill_(o > 0, {c}); y = o"),
        "fresh.out": _line("o = lib.empty_like(y); lib.sin(y, out=o); y = o", floats=True),
        "fresh.assemble": assemble,
        "fresh.scan": scan,
        "fresh.stack_rows": _line(
            "o = lib.zeros({s}, dtype=y.dtype); o.unbind(0)[0].add_(y[0]); y = o", ndim=1
        ),
    }


# ------------------------------------------------------------------ (c) clamp with ties
# Tensor bounds that tie with some of y's values, by the fewest dims they need.
_TIES = (
    (0, "y.detach()"),  # every value a tie
    (0, "y"),
    (0, "y * 1"),
    (0, "lib.where(y > 0, y, b)"),  # ties that carry a gradient to the bound too
    (0, "lib.zeros_like(y)"),
    (0, "b"),
    (1, "y.detach().flip(-1)"),
    (1, "y.detach()[..., :1]"),
    (1, "y.detach().amax(-1, keepdim=True)"),
    (1, "y.detach().amin(-1, keepdim=True)"),
    (1, "y.detach().median()"),
)


def _clamp_ops() -> dict:
    def bound(r, shape, inplace=False):
        t = r.choice([t for n, t in _TIES if n <= len(shape)])
        if "median" in t and 0 in shape:
            t = "y.detach()"  # torch.func.vmap refuses median of nothing (eager gives NaN)
        # a bound that is a strict part of y, written in place, overlaps it partially
        return t + ".clone()" if inplace and "[" in t else t

    def one(form):
        return lambda r, s, d: form.format(t=bound(r, s))

    def two(r, s, d):
        lo, hi = bound(r, s), bound(r, s)
        return r.choice(
            [
                f"y = y.clamp({lo}, {hi})",
                f"y = y.clamp(min={lo}, max={hi})",
                f"y = lib.clip(y, {lo}, {hi})",
                f"y = lib.clamp(y, min={lo}, max={lo})",
                f"y = y.clamp(min={lo} + 1, max={hi})",
            ]
        )

    def inplace(r, s, d):
        form = r.choice(["y.clamp_(min={t})", "y.clamp_(max={t})", "y.clamp_min_({t})"])
        form = r.choice([form, "y.clamp_max_({t})", "y.clip_({t}, {t})"])
        return "y = y.clone(); " + form.format(t=bound(r, s, inplace=True))

    return {
        "tie.min": one("y = y.clamp(min={t})"),
        "tie.max": one("y = y.clamp(max={t})"),
        "tie.both": two,
        "tie.clamp_min": one("y = y.clamp_min({t})"),
        "tie.clamp_max": one("y = lib.clamp_max(y, {t})"),
        "tie.inplace": inplace,
        "tie.round": _line("y = y.round()", floats=True),  # makes ties with integer bounds
        "tie.int_bound": _line("y = y.clamp(min=y.detach().round(), max=y.detach() + 1)"),
        "tie.mixed": _line("y = y.clamp(min=y.detach().round(), max={c})", floats=True),
    }


# ------------------------------------------------------------------ (d) non-finite values
def _nonempty(gen):
    """``gen`` where y has no empty dim (index_fill's index 0 must exist)."""
    return lambda r, s, d: gen(r, s, d) if s and 0 not in s else None


def _matrix(gen):
    """``gen`` where y is 2-d."""
    return lambda r, s, d: gen(r, s, d) if len(s) == 2 else None


_ORDS = (0.5, 0.3, -1, -0.5, float("inf"), float("-inf"), 1, 2)


def _nonfinite_ops() -> dict:
    def norm(r, s, d):
        o = r.choice(_ORDS)
        dim = f", dim={r.randrange(-len(s), len(s))}" if s and r.random() < 0.6 else ""
        return f"y = lib.linalg.vector_norm(y, ord={o!r}{dim})"

    def einsum(r, s, d):
        n = len(s)
        if n == 1:
            return r.choice(
                [
                    "y = lib.einsum('i,j->ij', y, y)",
                    "y = lib.einsum('i,i->', y, y)",
                    "y = lib.einsum('i->', y)",
                ]
            )
        if n == 2:
            forms = ["y = lib.einsum('ij,kj->ik', y, y)", "y = lib.einsum('ij->j', y)"]
            forms += [
                "y = lib.einsum('ij,ij->i', y, y * 2)",
                "y = lib.einsum('ij,jk->ik', y, y.mT)",
            ]
            if s[0] == s[1]:
                forms.append("y = lib.einsum('ii->i', y)")
            return r.choice(forms)
        if n >= 3:
            return "y = lib.einsum('...i,...i->...', y, y)"
        return None

    rounding = _pick(
        "y = lib.div(y, b, rounding_mode='floor')",
        "y = y.div(b, rounding_mode='trunc')",
        "y = lib.div(y, {c}, rounding_mode='floor')",
        "y = lib.div(b, y, rounding_mode='trunc')",
    )
    return {
        "nf.nan_fill": _line("y = y.masked_fill(y > 1, nan)", floats=True),
        "nf.inf_fill": _pick(
            _line("y = y.masked_fill(y < -1, -inf)", floats=True),
            _line("y = y.where(y.abs() < 2, inf)", floats=True),
        ),
        "nf.nan_row": _nonempty(_line("y = y.index_fill(-1, lib.tensor([0]), nan)", floats=True)),
        "nf.inf_row": _nonempty(_line("y = y.index_fill(0, lib.tensor([0]), inf)", floats=True)),
        "nf.amax": _pick(
            "y = y.amax({d}, keepdim={k})", "y = y.amax()", "y = y.amin({d}, keepdim={k})"
        ),
        "nf.amax_dims": _line("y = y.amax((0, -1))", ndim=2),
        "nf.var": _pick(
            "y = y.var({d}, correction=1)",
            "y = y.var({d}, correction=0)",
            "y = y.std({d}, keepdim={k})",
            "y = y.var()",
            "y = y.std(correction=2)",
        ),
        "nf.var_mean": _pick(
            "y = lib.var_mean(y, {d})[0]",
            "y = lib.var_mean(y, {d}, correction=0)[1]",
            "y = lib.std_mean(y)[0]",
            "y = sum(lib.var_mean(y, {d}, correction=2))",
        ),
        "nf.vector_norm": norm,
        "nf.vector_norm0": _pick(
            "y = lib.linalg.vector_norm(y, ord=0)", "y = y.norm(p=0, dim={d})"
        ),
        "nf.nanmean": _pick("y = y.nanmean({d})", "y = y.nanmean()", "y = y.nansum({d})"),
        "nf.nanmedian": _pick("y = y.nanmedian({d}).values", "y = y.nanmedian()"),
        "nf.median_max": _pick("y = y.max()", "y = y.median()", "y = y.min({d}).values"),
        "nf.logsumexp": _pick("y = y.logsumexp({d})", "y = y.logsumexp(({d},), keepdim=True)"),
        "nf.fmax": _pick(
            "y = lib.fmax(y, b)", "y = lib.fmin(b, y)", _line("y = lib.fmax(y, y.flip(0))", ndim=1)
        ),
        "nf.div_rounding": rounding,
        "nf.multi_dot": _pick(
            _matrix(_line("y = lib.linalg.multi_dot([y, y.mT, y])", floats=True)),
            _matrix(_line("y = lib.linalg.multi_dot([y.mT, y, y.mT, y])", floats=True)),
            _line("y = lib.linalg.multi_dot([y, y.mT])", ndim=3),  # refused: not 1-d or 2-d
        ),
        "nf.einsum": einsum,
    }


def _nonfinite_inputs(r: random.Random, rng, X: np.ndarray) -> np.ndarray:
    """NaN and infinities in a quarter of a float input, sometimes a whole NaN row, and
    sometimes an empty dim."""
    if X.dtype.kind != "f":
        return X
    if X.ndim and r.random() < 0.15:
        shape = list(X.shape)
        shape[r.randrange(X.ndim)] = 0
        return np.zeros(shape, X.dtype)
    X = X.copy()
    flat = X.reshape(-1)
    for i in range(flat.size):
        if r.random() < 0.25:
            flat[i] = r.choice([np.nan, np.inf, -np.inf])
    if X.ndim >= 2 and X.shape[0] and r.random() < 0.4:
        X[r.randrange(X.shape[0])] = np.nan
    return X


# ------------------------------------------------------------------ (e) bad argument forms
def _badarg_ops() -> dict:
    size = _pick(
        "y = y.reshape(float(y.numel()))",
        "y = y.view(-1.0)",
        "y = y.expand(2.0, *y.shape)",
        "y = lib.zeros(2.5)",
        "y = lib.zeros((2, 2.0))",
        "y = y.new_zeros(1.5)",
        "y = y.repeat(2.0)",
        "y = lib.ones({s}, 1.0)",
        "y = lib.full((2.0,), 1.0)",
        "y = y.reshape(None)",
        "y = y.view(y.shape, -1)",
    )
    dim = _pick(
        "y = y.sum(0.0)",
        "y = y.unsqueeze(0.0)",
        "y = y.flatten(0.0)",
        "y = y.softmax(1.0)",
        "y = y.cumsum(dim=0.0)",
        "y = y.transpose(0, 1.0)",
        "y = y.select(0.0, 0)",
        "y = y.narrow(0, 0.0, 1)",
        "y = y.topk(1.0)",
        "y = y.split(1.0)",
        "y = y.chunk(2.0)",
        "y = y.roll(1.0, 0)",
        "y = y.sum(True)",
        "y = y.movedim(0.0, 1)",
        "y = y.index_select(0.0, lib.tensor([0]))",
    )
    dtype = _pick(
        "y = y.to('float32')",
        "y = y.to(dtype='float64')",
        "y = lib.zeros(2, dtype='float32')",
        "y = y.sum(dtype='float64')",
        "y = lib.ones_like(y, dtype='int64')",
        "y = lib.tensor([1.0], dtype='float32')",
        "y = y.new_zeros(2, dtype='float32')",
        "y = y.softmax(0, dtype='float64')",
        "y = y.cumsum(0, dtype='float64')",
        "y = y.type('float')",
        "y = y.to(lib.float32, 'float64')",
    )
    sort = _pick(
        "y = y.sort(0, True, True)",
        "y = y.sort(True)",
        "y = y.sort(-1, 'descending')",
        "y = lib.sort(y, 0, False, True)",
        "y = y.argsort(0, True, True)",
        "y = y.argsort(True)",
        "y = lib.argsort(y, 0, True, True)",
        "y = y.sort(dim=0, descending=1)",
        "y = y.sort(0, stable=True)",
        "y = y.msort(0)",
        "y = y.topk(1, 0, True, True, True)",
        "y = lib.sort(y, stable=True, dim=0)[0]",
        "y = lib.argsort(y, stable=True, descending=True)",
    )
    missing = _pick(
        "y = lib.full((2,))",
        "y = y.new_full((2,))",
        "y = y.scatter(0, lib.zeros_like(y, dtype=lib.long))",
        "y = y.index_add(0, lib.tensor([0]))",
        "y = y.unflatten(0)",
        "y = lib.split(y)",
        "y = y.clamp()",
        "y = lib.clamp(y, None, None)",
        "y = y.gather(0)",
        "y = lib.where(y > 0, y)",
        "y = y.masked_fill(y > 0)",
        "y = y.softmax()",
        "y = lib.cat()",
        "y = y.sum(dims=0)",
        "y = y.softmax(axis=0)",
        "y = y.std(unbiased=True, correction=1)",
    )
    tensor_number = _pick(
        "y = y.sum(lib.tensor(0))",
        "y = y.unsqueeze(lib.tensor(0.0))",
        "y = lib.zeros(lib.tensor(2))",
        "y = y.topk(lib.tensor(1)).values",
        "y = y.clamp(min=[0.0])",
        "y = y.mul('2')",
        "y = y + '1'",
        "y = y.add(b, alpha=b)",
        "y = y.fill_(b)",
        "y = y.masked_fill(y > 0, b)",
        "y = lib.full((2,), b)",
        "y = y.index_select(0, [0])",
        "y = y.gather(0, [[0]])",
        "y = lib.stack(y)",
        "y = lib.cat(y)",
        "y = lib.maximum(y, 1.0)",
        "y = lib.atan2(y, 2)",
        "y = y.index_fill(0, 0, 1.0)",
        "y = lib.matmul(y, 2)",
        "y = lib.where(True, y, b)",
        "y = y.masked_fill(1, 0.0)",
        "y = y.pow(b.tolist())",
        "y = y.expand(b.shape, 2)",
        "y = y.reshape(lib.tensor([-1]))",
        "y = y.exp(1)",
        "y = y.abs(y)",
    )
    return {
        "bad.size": size,
        "bad.dim": dim,
        "bad.dtype": dtype,
        "bad.sort": sort,
        "bad.missing": missing,
        "bad.tensor_number": tensor_number,
    }


CLASSES: dict[str, ProgClass] = {
    c.name: c
    for c in (
        ProgClass("alias", _alias_ops(), modes=("vjp",)),
        ProgClass("fresh", _fresh_ops(), modes=("vjp",)),
        ProgClass("clamp_ties", _clamp_ops()),
        ProgClass("nonfinite", _nonfinite_ops(), inputs=_nonfinite_inputs),
        ProgClass("badarg", _badarg_ops(), ends=True),
    )
}

# The default mix: the base table for most programs, each class for one in twelve.
MIX: dict[str, float] = {"base": 7.0, **{name: 1.0 for name in CLASSES}}


# ------------------------------------------------------------------ what the classes found
# Each entry is (a regex searched in the program's body, one searched in "<mode> <kind>:
# <detail>", why), as progfuzz's KNOWN_TORCH_DIVERGENCES.
_ERR = r"(torch raised: |error differs: [^\n]*\ntorch )"  # what torch raised, alone or beside ours
_GRADS = r"^(backward|grad|vjp|vmap_grad) "

# Cases where torch is wrong (or refuses what each sample allows) and numtorch keeps the
# finite-difference or per-sample answer.
CLASS_DIVERGENCES: list[tuple[str, str, str]] = [
    (
        r"\.(mul|add|sub|div|pow|addcmul|addcdiv|lerp|clamp)_\([^\n]*\by\b",
        r"^jvp result differs",
        "torch's in-place jvp formulas update self's tangent and then read the aliased "
        "operand's tangent, which is that same updated tensor (tests/test_inplace_aliasing.py): "
        "jvp of y = x.clone(); y.mul_(y) at x = 0.69 along 1 is 1.1661 in torch (t*y*(1 + y)); "
        "numtorch and central differences give 2*x*t = 1.38",
    ),
    (
        r"addcdiv",
        _GRADS + _ERR + r"RuntimeError: result type \w+ can't be cast to the desired output type "
        r"(Long|Int|Bool)",
        "torch's backward of addcdiv with an integer or bool tensor2 computes a gradient for "
        "tensor2 anyway and fails casting it: x (float64, requires grad), b = tensor([3]): "
        "addcdiv(x, x, b, value=2).sum().backward() raises 'result type Float can't be cast to "
        "the desired output type Long' in torch; d/dx = 1 + 2/3 = 1.6667, which numtorch gives",
    ),
    (
        r".",
        r"^jvp " + _ERR + r"RuntimeError: (masked_scatter: expected self and source to have "
        r"same dtypes but got(Float and Double|Double and Float)|index_add_\(\): self \(Float\) "
        r"and source \(Double\)|index_copy_\(\): self and source expected to have the same dtype"
        r"|scatter\(\): Expected self\.dtype to be equal to src\.dtype|Index put requires the "
        r"source and destination dtypes match|expected scalar type Float but found Double)",
        "torch's forward AD gives a float32 primal a float64 tangent (after a Python float, as "
        "in progfuzz's jvp dtype entry, and after an in-place write of a float64 dual into a "
        "float32 tensor: o = torch.zeros(1); o.add_(x64) has a float64 tangent in func.jvp and "
        "forward_ad), and a later op that needs equal dtypes then refuses the tangents "
        "(masked_scatter, index_add_, index_copy_, scatter_, index_put_, matmul); the primal "
        "program runs, and numtorch keeps each tangent in its primal's dtype",
    ),
    (
        r"lib\.zeros\(\([^)]*\)\)|lib\.zeros\(\(\)\)",
        r"^jvp result differs: result\[1\]: dtype",
        "torch's forward AD keeps a float64 tangent on a float32 tensor written in place with a "
        "float64 dual (o = torch.zeros(1); o.add_(x64): tangent float64); numtorch's tangent "
        "has its primal's dtype",
    ),
    (
        r"\.clamp\(|lib\.clip\(|lib\.clamp\(",
        _GRADS + _ERR + r"RuntimeError: output with shape \[[^\]]*\] doesn't match the "
        r"broadcast shape",
        "torch's clamp backward with tensor bounds fails when a bound broadcasts self to a "
        "larger shape: x = tensor([0.5]) requiring grad, b = tensor([[0.58]]): "
        "x.clamp(torch.zeros_like(x), torch.where(x > 0, x, b)).sum().backward() raises 'output "
        "with shape [1] doesn't match the broadcast shape [1, 1]'; the forward is (1, 1), and "
        "numtorch sums the gradient to x's shape (d/dx = 1 at the tie with max = x)",
    ),
    (
        r"\.(nan)?median\(",
        r"^(vmap|vmap_grad) (torch raised|error differs)[^\n]*(\n[^\n]*)?median\(\): Expected "
        r"reduction dim \d+ to have non-zero size",
        "torch.func.vmap of median()/nanmedian() over samples with no elements raises the empty "
        "reduction error, where eager torch on each sample returns NaN (median() of a tensor of "
        "shape (0,) is nan); numtorch returns each sample's NaN (and then a later line's own "
        "error is what it raises)",
    ),
    (
        r"\.(nan)?median\(|vector_norm\(",
        r"^vmap error differs: numtorch (\w+): ([^\n]*?)(dim(ension)? )-?\d+([^\n]*)\ntorch \1: "
        r"\2\3-?\d+\5$",
        "torch.func.vmap names the physical dim (the batch dim counted) in its reduction errors "
        "at in_dims=-1: nanmedian(1) of samples of shape (1, 0) says 'Expected reduction dim 2' "
        "where each sample says dim 1, as numtorch does",
    ),
    (
        r"\.clamp\(min=[^\n]*round\(\), max=",
        r"^(vmap|vmap_grad) (torch raised|error differs)[^\n]*(\n[^\n]*)?vmap: It looks like you're",
        "torch reads a 0-d tensor bound beside a number bound as a Scalar (clamp(min=t0d, max=2) "
        "takes the Scalar overload, t0d.item()), which torch.func.vmap refuses ('.item()'), while "
        "each sample returns the clamped value; numtorch returns the per-sample result",
    ),
    (
        r"(?s)(expand\(|broadcast_to\(|repeat\(|index_select\(|\[\[).*\.(std|var)\(",
        r"^(backward|grad|vjp|jvp|vmap_grad) result differs",
        "torch's std/var of equal values is rounding noise, not 0, so its gradient there is "
        "O(1) noise: x = tensor([1.77]) expanded to 3, x.std() is 2.7e-16 in torch with "
        "gradient [-0.408] * 3; numtorch's std of equal values is 0 and its gradient 0 "
        "(PyTorch's rule where the std is 0)",
    ),
    (
        r"y\.mul_\(y\[:1\]\)|y\[1:\]\.add_\(y\[:-1\]\)|y\.t\(\)\.mul_\(y\)|, y\[:1\]\)",
        r"^(vmap|vmap_grad) (result differs|torch raised|error differs)",
        "each sample refuses an in-place op whose operand partially overlaps the written "
        "tensor ('some elements of the input tensor and the written-to tensor refer to a single "
        "memory location'); under torch.func.vmap the batched layout makes the views non-dense, "
        "torch skips the check and computes in its kernel's order (y = [1.85, -0.45]; "
        "y.mul_(y[:1]) gives [3.42, -1.54] under vmap, reading the updated y[0]); numtorch's "
        "vmap reads the operand first ([3.42, -0.83]) and does not raise either",
    ),
    (
        r"lib\.clamp\(y, min=b, max=b\)",
        r"^(vmap|vmap_grad) ours raised: RuntimeError: expected dtype \w+ for `end`",
        "a consequence of torch.func.vmap promoting a batched operand that is 0-d per sample as "
        "a dimensioned one (progfuzz's vmap dtype entry): clamp(y32, min=b64, max=b64) with b "
        "0-d per sample is float32 in each sample, so a later lerp(y, b, 0.25) refuses the "
        "float64 end, as numtorch does; torch.func.vmap made y float64",
    ),
    (
        r"\.view\(",
        r"^(vmap|vmap_grad) error differs: [^\n]*\ntorch RuntimeError: view size is not compatible",
        "torch.func.vmap's layout makes a later view(-1) fail where each sample's does not "
        "(progfuzz's view entries); numtorch goes on, and a later error of its own (here the "
        "modified-variable error of backward) is what it raises",
    ),
    (
        r"nanmedian\(",
        r"^(backward|grad|vjp|jvp|vmap|vmap_grad) result differs",
        "the index nanmedian(dim) reports for an all-NaN slice is wherever torch's partial sort "
        "leaves it (torch.full((4,), nan).nanmedian(0).indices is 2, for 7 it is 5, for 3 it is "
        "0); numtorch reports the first, as median(dim) does, so the gradient of such a slice "
        "goes to another (equally NaN) element",
    ),
    (
        r"\.topk\(",
        r"^(backward|grad|vjp|vmap_grad) result differs",
        "which of several NaNs topk reports is wherever torch's partial sort leaves them "
        "(torch.full((n,), nan).topk(1).indices is 0 for n = 3, 2 for n = 4, 5 for n = 7; "
        "topk(2) at n = 7 is [5, 4]); numtorch reports the first ones, so the gradient of an "
        "all-NaN slice goes to another (equally NaN) element, as nanmedian's entry",
    ),
    (
        r"\.(nan)?median\(\)",
        r"(?s)^(grad|vjp|vmap_grad) result differs: .*nan location mismatch",
        "torch.func's grad and vjp of median()/nanmedian() (full reduction) spread a NaN "
        "incoming gradient over every element (mask * (g / count)), while eager torch's "
        "backward writes it only where the median is (masked_fill), as numtorch does in every "
        "mode: x = [[1.53, -4.13, 0.2]], (x.median() - 1).sqrt(): [[0, 0, nan]]; the others do "
        "not move the median (tests/test_nonfinite_conventions.py)",
    ),
    (
        r"\] = [^\n]*\.exp\(\)",
        r"^\w+ result differs: Arrays are not equal",
        "a float32 exp written into an integer buffer (o = zeros_like(y) of an int64 y; "
        "o[i] = y[i].exp()) keeps its float32 rounding, and NumPy's float32 exp is 1 ulp from "
        "torch's above ~1e10: exp(25) is 72004894720 in NumPy, 72004902912 in torch (exactly "
        "72004899337.4), and the integers are compared exactly; a 1-ulp difference, as "
        "progfuzz's exp-then-long() entry",
    ),
    (
        r"\.max\(\)",
        r"(?s)^vjp result differs: .*nan location mismatch",
        "torch.func.vjp of max() spreads a NaN cotangent over every element, as torch.func.grad "
        "does (progfuzz's max() entry); eager torch and numtorch write it where the max is",
    ),
]

# Open numtorch bugs these classes found. Each names a minimal repro; the class slices of
# tests/test_random_programs.py skip them, and a seed per bug there fails until it is fixed.
CLASS_OPEN: list[tuple[str, str, str]] = []
