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
progfuzz's own table alone). A line generator is ``gen(r, shape, dtype) -> code | None`` as in
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
        "alias.copy_self": _pick("y.copy_(y)", _line(c + "y.copy_(y.flip(0))", ndim=1)),
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


_ORDS = (0.5, 0.3, 0, -1, -0.5, float("inf"), float("-inf"), 1, 2)


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
        "y = y.topk(lib.tensor(1))",
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
