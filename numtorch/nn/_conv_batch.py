"""The vmap batch rules of the convolution primitives: the batch folds into the samples,
the channels or the groups of one convolution (``fold_batch``), and a biased primitive adds a
batched bias where its result's batch and channels are (``bias_rule``)."""

from __future__ import annotations

from .._core.dispatch import dispatch
from ..ops._batching import front, rule_generator

# The two leading axes of (first input, second input, result) of each bilinear primitive:
# "n" the batch, "C"/"O" the input/output channels (all groups), "c" the input channels of
# one group (a weight's second axis).
_CONV_AXES = (("n", "C"), ("O", "c"), ("n", "O"))
_INPUT_GRAD_AXES = (("n", "O"), ("O", "c"), ("n", "C"))
_WEIGHT_GRAD_AXES = (("n", "C"), ("n", "O"), ("O", "c"))
_COLUMN_AXES = (("n", "C"), ("n", "C"))  # im2col, col2im


def _merge(x, p: int):
    """Batch-first x with its batch merged into axis p (batch-major)."""
    s = x.shape
    if any(v != 1 for v in s[1 : p + 1]):  # (past axes of size 1 the order is the same)
        x = x.movedim(0, p)
    return x.reshape(*s[1 : p + 1], s[0] * s[p + 1], *s[p + 2 :])


def _merge_in_groups(x, p: int, groups: int):
    """Batch-first x with its batch merged into the grouped channel axis p, inside each
    group: (G, B, M), so that each group's channels stay together."""
    if groups == 1:
        return _merge(x, p)
    s = x.shape
    x = x.reshape(*s[: p + 1], groups, s[p + 1] // groups, *s[p + 2 :]).movedim(0, p + 1)
    return x.reshape(*s[1 : p + 1], s[0] * s[p + 1], *s[p + 2 :])


def _split(y, p: int, b: int):
    s = y.shape
    return y.reshape(*s[:p], b, s[p] // b, *s[p + 1 :]), p


def _split_in_groups(y, p: int, groups: int, b: int):
    if groups == 1:
        return _split(y, p, b)
    s = y.shape
    y = y.reshape(*s[:p], groups, b, s[p] // (groups * b), *s[p + 1 :]).movedim(p + 1, 0)
    return y.reshape(b, *s[:p], s[p] // b, *s[p + 1 :]), 0


def _one_batched(ins: list, res: tuple, i: int):
    """Where the batch of input i alone folds: None for N, else (input axis, result axis,
    whether the input's axis is one group's, whether the result's is)."""
    if ins[i][0] == "n" and res[0] == "n":
        return None
    others = {a.upper() for k, ax in enumerate(ins) if k != i for a in ax}
    label = next(a for a in ins[i] if a.upper() not in others)
    q = [a.upper() for a in res].index(label.upper())
    return ins[i].index(label), q, label.islower(), res[q].islower()


def _fold_batch(op, axes: tuple):
    """Fold the vmap batch into N when every batched operand and the result have one;
    else into the channels that only the batched operand and the result share (inside
    each group); with both operands batched, into the groups."""
    *ins, res = axes
    ups = [next((k for k, a in enumerate(ax) if a.isupper()), None) for ax in (*ins, res)]
    one = [_one_batched(ins, res, i) for i in range(len(ins))]

    def rule(vmap, args, bdims, attrs):
        b = vmap.size
        args = [front(a, d) for a, d in zip(args, bdims)]
        batched = [i for i, d in enumerate(bdims) if d is not None]
        if len(batched) == 2:
            new = tuple(_merge(a, p) for a, p in zip(args, ups))
            out = dispatch(op, new, {**attrs, "groups": attrs["groups"] * b})
            return _split(out, ups[-1], b)
        (i,) = batched
        new = list(args)
        where = one[i]
        if where is None:
            new[i] = _merge(args[i], 0)
            return _split(dispatch(op, tuple(new), attrs), 0, b)
        p, q, lower, res_lower = where
        g = attrs["groups"]
        new[i] = _merge(args[i], p) if lower else _merge_in_groups(args[i], p, g)
        out = dispatch(op, tuple(new), attrs)
        return _split(out, q, b) if res_lower else _split_in_groups(out, q, g, b)

    return rule


fold_batch = rule_generator(_fold_batch)


def _bias_rule(op, base, axes: tuple):
    """The batch rule of a biased primitive ``op`` whose unbiased form is ``base``."""
    unbiased = _fold_batch(base, axes)

    def rule(vmap, args, bdims, attrs):
        if bdims[1] is None and bdims[2] is None and bdims[0] is not None:
            # the batch folds into N (per-sample gradients): the bias is added in the kernel
            x = _merge(front(args[0], bdims[0]), 0)
            return _split(dispatch(op, (x, *args[1:]), attrs), 0, vmap.size)
        if bdims[0] is None and bdims[1] is None:
            out, od = dispatch(base, args[:2], attrs), None
        else:
            out, od = unbiased(vmap, args[:2], bdims[:2], attrs)
        bias, bd = args[2], bdims[2]
        if bias.dtype != out.dtype:
            bias = bias.to(out.dtype)
        ones = (1,) * len(attrs["stride"])
        if bd is None:  # the result's channels and spatial dims are its trailing ones
            return out + bias.reshape(-1, *ones), od
        bias = front(bias, bd)
        if od == 1:  # (n, B, O, *L)
            return out + bias.reshape(*bias.shape, *ones), 1
        return out + bias.reshape(bias.shape[0], 1, bias.shape[1], *ones), 0

    return rule


bias_rule = rule_generator(_bias_rule)
