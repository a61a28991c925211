"""Recurrent functional cores: torch.rnn_tanh, rnn_relu, lstm, gru and their cells.

Every layer runs through one primitive per cell type, ``<cell>_scan(ins)``: the input
projection of the whole sequence comes in precomputed (one GEMM over T*N rows) and the
kernel runs the time loop on arrays, one GEMM with W_hh and a fused cell per step. Its
gradient is a second primitive, ``<cell>_scan_backward``, whose kernel runs the reverse
time loop on arrays (the LSTM's reads back the activations its forward kept beside the
cell-state sequence, see ``_KEPT``). Neither records a node per step, so a long sequence
costs no recursion and few nodes. Higher orders and forward mode go through ``_reference``,
the same cell step written with numtorch ops, differentiated by torch.func's vjp and jvp.

Arrays in the scan primitives carry any leading batch dims (vmap folds its batch there):
xg (..., T, N, G), states (..., N, H), weights (..., G, H), b_hh (..., G).

Packed sequences: the scans take ``batch_sizes`` (one int per step, decreasing), and at
step t only the first ``batch_sizes[t]`` rows advance; the others keep their state, which
is also what the scan emits for them. So every row's final state is the last step's, and
a row's gradient passes a kept step unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import NamedTuple

import numpy as np

from .._core.dispatch import dispatch
from .._core.meta import by_kernel
from .._core.no_kernel import CLAMP_COMPLEX, NoKernel, raises
from .._core.op import ErrorInput, Op, composite, defop
from .._core.tensor import Tensor
from .._opdb.samples import S
from ..func import jvp as _func_jvp
from ..func import vjp as _func_vjp
from ..ops._batching import rule_generator
from ..ops._families import COMPLEX_TOO
from ..ops.creation import as_tensor, zeros_like
from ..ops.linalg import addmm, matmul, mm
from ..ops.random import dropout as _dropout
from ..ops.shape import cat, stack
from ..ops.unary import relu as _relu
from ..ops.unary import sigmoid as _sigmoid
from ..ops.unary import tanh as _tanh


# ------------------------------------------------------------------ the cell steps
class _Arrays:
    """The few functions a cell step needs, on backend arrays."""

    def __init__(self, xp):
        self.xp = xp
        self.kept = ()

    def keep(self, *arrays):
        """The step's activations that the backward kernel can read back (``_KEPT``)."""
        self.kept = arrays

    def sigmoid(self, x):
        e = self.xp.negative(x)  # 1 / (1 + exp(-x)) in one buffer
        self.xp.exp(e, out=e)
        e += 1
        return self.xp.reciprocal(e, out=e)

    def tanh(self, x):
        return self.xp.tanh(x)

    def relu(self, x):
        return self.xp.maximum(x, 0)

    def mm_t(self, a, w):
        return self.xp.matmul(a, self.xp.swapaxes(w, -1, -2))

    def cat_rows(self, a, b):
        return self.xp.concatenate([a, self.xp.broadcast_to(b, a.shape[:-2] + b.shape[-2:])], -2)


class _Ops:
    """The same functions with numtorch ops (differentiable, batchable)."""

    sigmoid = staticmethod(_sigmoid)
    tanh = staticmethod(_tanh)
    relu = staticmethod(_relu)

    @staticmethod
    def keep(*tensors):
        pass

    @staticmethod
    def mm_t(a, w):
        return matmul(a, w.transpose(-1, -2))

    @staticmethod
    def cat_rows(a, b):
        lead = tuple(a.shape[:-2])
        return cat([a, b if tuple(b.shape[:-2]) == lead else b.expand(*lead, *b.shape[-2:])], -2)


def _rnn_step(act: str) -> Callable:
    def step(F, x, state, w):
        (h,) = state
        return (getattr(F, act)(x + F.mm_t(h, w[0])),)

    return step


def _gru_step(F, x, state, w):
    (h,) = state
    H = h.shape[-1]
    hg = F.mm_t(h, w[0]) + w[1][..., None, :]
    r = F.sigmoid(x[..., :H] + hg[..., :H])
    z = F.sigmoid(x[..., H : 2 * H] + hg[..., H : 2 * H])
    n = F.tanh(x[..., 2 * H :] + r * hg[..., 2 * H :])
    return ((1 - z) * n + z * h,)


def _lstm_step(F, x, state, w):
    h, c = state
    H = c.shape[-1]
    gates = x + F.mm_t(h, w[0])
    i_f = F.sigmoid(gates[..., : 2 * H])
    i, f = i_f[..., :H], i_f[..., H:]
    g, o = F.tanh(gates[..., 2 * H : 3 * H]), F.sigmoid(gates[..., 3 * H :])
    c = f * c + i * g
    tc = F.tanh(c)
    F.keep(i, f, g, o, tc)
    m = o * tc
    return (F.mm_t(m, w[1]) if len(w) > 1 else m, c)


# How many activations (each shaped like the last state) a cell's step keeps. The forward
# scan writes them beside its last state's sequence, in one buffer (..., K + 1, T, N, H)
# whose last plane is that sequence; a backward kernel given that very plane reads them
# back instead of recomputing the gates (one GEMM and the transcendentals), as PyTorch
# keeps a workspace. A one-step scan (a cell) keeps none: its state would hold the buffer.
_KEPT = {"lstm": 5, "lstm_proj": 5}


def _address(a) -> int:
    face = getattr(a, "__array_interface__", None) or a.__cuda_array_interface__
    return face["data"][0]


def _kept(seq, k: int):
    """The k activations the forward scan kept beside ``seq`` (its last state's
    sequence, as the forward returned it), or None."""
    b = seq.base
    if b is None or b.shape != seq.shape[:-3] + (k + 1,) + seq.shape[-3:]:
        return None
    if b.strides[:-4] + b.strides[-3:] != seq.strides or seq.shape[-3] < 2:
        return None
    plane = b[..., k, :, :, :]
    return b[..., :k, :, :, :] if _address(plane) == _address(seq) else None


def _advance(F, step: Callable, x, state: tuple, w, b: int | None) -> tuple:
    """One step in which only the first ``b`` rows advance (None: all of them)."""
    if b is None or b == x.shape[-2]:
        return step(F, x, state, w)
    new = step(F, x[..., :b, :], tuple(s[..., :b, :] for s in state), w)
    return tuple(F.cat_rows(n, s[..., b:, :]) for n, s in zip(new, state))


def _sizes(batch_sizes, T: int) -> list:
    return [None] * T if batch_sizes is None else list(batch_sizes)


# ------------------------------------------------------------------ backward kernels
def _mask(xp, batch_sizes, N: int, dtype) -> tuple:
    """(advance, keep): (T, N, 1) arrays of 1 where a row advances at a step (keeps its
    state); None without batch sizes."""
    if batch_sizes is None:
        return None, None
    m = (xp.arange(N)[None, :] < xp.asarray(batch_sizes)[:, None]).astype(dtype)[..., None]
    return m, 1 - m


def _shifted(xp, first, seq):
    """(first, seq[0], ..., seq[T-2]) along the time axis: each step's previous state."""
    first = xp.broadcast_to(first, seq.shape[:-3] + first.shape[-2:])
    return xp.concatenate([first[..., None, :, :], seq[..., :-1, :, :]], axis=-3)


def _wgrad(xp, d, x):
    """sum over time and batch of d^T x, keeping the leading dims."""
    d = d.reshape(d.shape[:-3] + (d.shape[-3] * d.shape[-2], d.shape[-1]))
    x = x.reshape(x.shape[:-3] + (x.shape[-3] * x.shape[-2], x.shape[-1]))
    return xp.matmul(xp.swapaxes(d, -1, -2), x)


def _gates(xp, xg, hprev, w):
    """xg + hprev W^T for every step at once: one GEMM over the (T * N) rows."""
    flat = hprev.reshape(hprev.shape[:-3] + (-1, hprev.shape[-1]))
    gates = xp.matmul(flat, xp.swapaxes(w, -1, -2))
    gates = gates.reshape(gates.shape[:-2] + hprev.shape[-3:-1] + gates.shape[-1:])
    if gates.shape != xp.broadcast_shapes(gates.shape, xg.shape):
        return gates + xg
    gates += xg
    return gates


def _rnn_backward(act: str) -> Callable:
    def backward(xp, ins, outs, gouts, batch_sizes):
        xg, h0, w = ins
        (hs,), (ghs,) = outs, gouts
        adv, keep = _mask(xp, batch_sizes, hs.shape[-2], hs.dtype)
        slope = 1 - hs * hs if act == "tanh" else (hs > 0).astype(hs.dtype)
        slope = slope * adv if batch_sizes is not None else slope
        dz = xp.empty(xp.broadcast_shapes(hs.shape, ghs.shape), hs.dtype)
        carry = 0
        for t in range(hs.shape[-3] - 1, -1, -1):
            d = ghs[..., t, :, :] + carry
            dz[..., t, :, :] = d * slope[..., t, :, :]
            carry = xp.matmul(dz[..., t, :, :], w)
            if batch_sizes is not None:
                carry = carry + d * keep[t]
        return dz, carry, _wgrad(xp, dz, _shifted(xp, h0, hs))

    return backward


def _gru_backward(xp, ins, outs, gouts, batch_sizes):
    xg, h0, w, b = ins
    (hs,), (ghs,) = outs, gouts
    F, H = _Arrays(xp), hs.shape[-1]
    hprev = _shifted(xp, h0, hs)
    hg = F.mm_t(hprev, w[..., None, :, :]) + b[..., None, None, :]
    r = F.sigmoid(xg[..., :H] + hg[..., :H])
    z = F.sigmoid(xg[..., H : 2 * H] + hg[..., H : 2 * H])
    if batch_sizes is not None:  # a kept step is a step with z = 1
        adv, keep = _mask(xp, batch_sizes, hs.shape[-2], hs.dtype)
        z = z * adv + keep
    hn = hg[..., 2 * H :]
    n = F.tanh(xg[..., 2 * H :] + r * hn)
    dn = (1 - z) * (1 - n * n)
    dr, dz = dn * hn * r * (1 - r), (hprev - n) * z * (1 - z)
    cx = xp.concatenate([dr, dz, dn], axis=-1)  # d xg / d h_t
    ch = xp.concatenate([dr, dz, dn * r], axis=-1)  # d (h W_hh^T + b_hh) / d h_t
    dh = xp.empty(xp.broadcast_shapes(hs.shape, ghs.shape, cx.shape[:-1] + (H,)), hs.dtype)
    carry = 0
    for t in range(hs.shape[-3] - 1, -1, -1):
        dh[..., t, :, :] = ghs[..., t, :, :] + carry
        d3 = xp.concatenate([dh[..., t, :, :]] * 3, axis=-1) * ch[..., t, :, :]
        carry = dh[..., t, :, :] * z[..., t, :, :] + xp.matmul(d3, w)
    dh3 = xp.concatenate([dh] * 3, axis=-1)
    dhg = dh3 * ch
    return dh3 * cx, carry, _wgrad(xp, dhg, hprev), dhg.sum(axis=(-3, -2))


def _lstm_backward(xp, ins, outs, gouts, batch_sizes):
    xg, h0, c0, w = ins[:4]
    wr = ins[4] if len(ins) > 4 else None
    hs, cs = outs
    ghs, gcs = gouts
    F, H = _Arrays(xp), cs.shape[-1]
    hprev, cprev = _shifted(xp, h0, hs), _shifted(xp, c0, cs)
    kept = _kept(cs, 5)
    if kept is not None:  # the forward's activations
        i, f, g, o, tc = (kept[..., k, :, :, :] for k in range(5))
    else:
        gates = _gates(xp, xg, hprev, w)
        i_f = F.sigmoid(gates[..., : 2 * H])
        i, f = i_f[..., :H], i_f[..., H:]
        g, o = F.tanh(gates[..., 2 * H : 3 * H]), F.sigmoid(gates[..., 3 * H :])
        tc = F.tanh(cs)
    dc_dm = o * (1 - tc * tc)
    # d c_t / d (i, f, g) pre-activations, written in place into one (..., 3H) buffer
    cc = xp.empty(i.shape[:-1] + (3 * H,), i.dtype)
    for k, (a, b) in enumerate(((i, g), (f, cprev), (g, i))):
        out = cc[..., k * H : (k + 1) * H]
        if k < 2:  # a (1 - a) b: the sigmoid's slope
            xp.subtract(1, a, out=out)
            out *= a
        else:  # (1 - a^2) b: the tanh's slope
            xp.multiply(a, a, out=out)
            xp.subtract(1, out, out=out)
        out *= b
    co = tc * o * (1 - o)
    otc = o * tc if wr is not None else None
    if batch_sizes is not None:  # a kept step: no gate gradient, c and h pass through
        adv, keep = _mask(xp, batch_sizes, cs.shape[-2], cs.dtype)
        dc_dm, cc, co, f = dc_dm * adv, cc * adv, co * adv, f * adv + keep
        otc = otc * adv if wr is not None else None
    lead = xp.broadcast_shapes(i.shape[:-1], ghs.shape[:-1], gcs.shape[:-1])
    dg = xp.empty(lead + (4 * H,), i.dtype)
    dh = xp.empty(lead + ghs.shape[-1:], i.dtype) if wr is not None else None
    ch, cc_ = 0, 0
    for t in range(i.shape[-3] - 1, -1, -1):
        d = ghs[..., t, :, :] + ch
        if dh is None:
            m = d
        else:  # h = m W_hr^T
            dh[..., t, :, :] = d
            m = xp.matmul(d, wr)
        dc = gcs[..., t, :, :] + cc_ + m * dc_dm[..., t, :, :]
        dg[..., t, :, : 3 * H] = xp.concatenate([dc] * 3, axis=-1) * cc[..., t, :, :]
        dg[..., t, :, 3 * H :] = m * co[..., t, :, :]
        ch = xp.matmul(dg[..., t, :, :], w)
        if batch_sizes is not None:
            ch = ch + d * keep[t]
        cc_ = dc * f[..., t, :, :]
    grads = [dg, ch, cc_, _wgrad(xp, dg, hprev)]
    if wr is not None:
        grads.append(_wgrad(xp, dh, otc))
    return grads


# ------------------------------------------------------------------ the scan primitives
def _lead(ins, cores) -> tuple:
    return np.broadcast_shapes(*(a.shape[: a.ndim - k] for a, k in zip(ins, cores)))


def _full(xp, arrays, cores, ins, in_cores) -> tuple:
    """Each result with the leading dims of all inputs (a gradient of an unbatched input
    under vmap is per sample)."""
    lead = _lead(ins, in_cores)
    return tuple(
        xp.ascontiguousarray(xp.broadcast_to(a, lead + a.shape[a.ndim - k :]))
        for a, k in zip(arrays, cores)
    )


def _lead_of(ts: Sequence[Tensor], cores: Sequence[int]) -> tuple:
    return tuple(np.broadcast_shapes(*(tuple(t.shape)[: t.dim() - k] for t, k in zip(ts, cores))))


def _expand(ts: Sequence[Tensor], cores: Sequence[int], lead: tuple) -> tuple:
    """Each tensor broadcast to the leading dims ``lead`` (its core dims kept)."""
    return tuple(
        t if tuple(t.shape)[: t.dim() - k] == lead else t.expand(*lead, *t.shape[t.dim() - k :])
        for t, k in zip(ts, cores)
    )


def _scan_rule_of(op, cores: Sequence[Sequence[int]]) -> Callable:
    """vmap: the batch dim goes in front of each batched operand's leading dims, padded
    so that batch dims line up; unbatched operands broadcast. Results: batch first."""

    def rule(vmap, args, bdims, attrs):
        extra = max(
            a.dim() - (b is not None) - k
            for arg, bd, ks in zip(args, bdims, cores)
            for a, b, k in zip(arg, bd, ks)
        )
        new = []
        for arg, bd, ks in zip(args, bdims, cores):
            sub = []
            for a, b, k in zip(arg, bd, ks):
                if b is not None:
                    a = a.movedim(b, 0)
                    pad = extra - (a.dim() - 1 - k)
                    a = a.reshape(a.shape[0], *((1,) * pad), *a.shape[1:]) if pad else a
                sub.append(a)
            new.append(sub)
        return dispatch(op, tuple(new), attrs), 0

    return rule


_scan_rule = rule_generator(_scan_rule_of)


class _Scan(NamedTuple):
    """One cell type's scan primitives, and the scan's gradient as a function of the
    scan's inputs alone (the backward primitive's test path)."""

    fwd: Op
    bwd: Op
    grad: Callable


def _scan_samples(name: str, n_state: int, n_in: int, backward: bool = False) -> Callable:
    """Scan inputs ``[xg, *states, *weights]`` (and, for the backward, output cotangents)."""
    gates = {"gru": 3, "lstm": 4, "lstm_proj": 4}.get(name, 1)
    proj = n_in == 5

    def ins(make, T, N, H, lead=(), wlead=(), transposed=False):
        P, G = (H - 1 if proj else H), gates * H
        xs = [make((*lead, T, N, G)), *[make((*lead, N, P)), make((*lead, N, H))][:n_state]]
        xs.append(make((*wlead, P, G)).swapaxes(-1, -2) if transposed else make((*wlead, G, P)))
        xs += [make((*wlead, G))] if name == "gru" else [make((*wlead, P, H))] if proj else []
        if not backward:
            return (xs,)
        full = np.broadcast_shapes(lead, wlead) + (T, N)
        return xs, [make((*full, P)), make((*full, H))][:n_state]

    def samples(make):
        yield S(ins(make, 3, 2, 3, transposed=True), name="transposed W_hh")
        yield S(
            ins(make, 3, 2, 2, lead=(2,)), {"batch_sizes": (2, 1, 1)}, name="packed, leading dims"
        )
        yield S(ins(make, 2, 2, 2, lead=(2,), wlead=(2,)), name="leading dims")
        yield S(ins(make, 2, 1, 2, lead=(2,)), name="leading dims, unbatched weights")
        yield S(ins(make, 2, 0, 2), name="empty batch")

    return samples


# The kernel of PyTorch's first activation in a step, which refuses complex32 (reached where
# the input projection ran: on an empty batch).
_ACTIVATION_KERNEL = {
    "rnn_tanh": "tanh_vml_cpu",
    "rnn_relu": raises(*CLAMP_COMPLEX),  # (relu's clamp: its complex refusal)
    "lstm": "sigmoid_cpu",
    "lstm_proj": "sigmoid_cpu",
    "gru": "sigmoid_cpu",
}


def _layers_complex32(cell: str) -> Callable:
    """A stacked RNN's ``complex32`` fact: the input projection is PyTorch's ``linear``,
    an ``addmm`` where the (time, batch) dims fold into one (a contiguous input), else a
    ``bmm`` (a batch_first input of several steps and sequences); on an empty batch it runs
    and the activation's kernel refuses."""

    def fact(inputs, args):
        x = inputs[0]
        if 0 in x.shape:
            act = _ACTIVATION_KERNEL[cell]
            return act(inputs, args) if callable(act) else act
        if args["batch_first"] and x.dim() == 3 and x.shape[0] > 1 and x.shape[1] > 1:
            return "bmm"
        return "addmm_impl_cpu_"

    return fact


def _scan_pair(name: str, step: Callable, backward: Callable, n_state: int, n_in: int) -> _Scan:
    """The forward and backward scan primitives of one cell type.

    Neither has a PyTorch counterpart: finite differences check them. The backward's
    samples go through ``grad`` (``outs`` recomputed as ``scan(ins)``), not through the
    primitive itself: its formulas carry the whole derivative through ``ins`` and give
    ``outs`` none, which is right only where ``outs`` are the scan's results, and finite
    differences in ``outs`` alone would measure a derivative the op never claims."""
    cores_in = (3,) + (2,) * n_state + (2, 1 if name == "gru" else 2)[: n_in - 1 - n_state]
    cores_out = (3,) * n_state
    n_kept = _KEPT.get(name, 0)
    api = f"nn._recurrent._SCANS.{name}"

    def forward_kernel(xp, ins, batch_sizes=None):
        F = _Arrays(xp)
        xg, w = ins[0], ins[1 + n_state :]
        lead = _lead(ins, cores_in)
        state = tuple(xp.broadcast_to(s, lead + s.shape[-2:]) for s in ins[1 : 1 + n_state])
        T = xg.shape[-3]
        seqs = [xp.empty(lead + (T,) + s.shape[-2:], xg.dtype) for s in state]
        kept = None
        if n_kept and T > 1:  # see _KEPT; rows a packed step keeps get zero activations
            new = xp.empty if batch_sizes is None else xp.zeros
            kept = new(lead + (n_kept + 1, T) + state[-1].shape[-2:], xg.dtype)
            seqs[-1] = kept[..., n_kept, :, :, :]
        for t, b in enumerate(_sizes(batch_sizes, T)):
            state = _advance(F, step, xg[..., t, :, :], state, w, b)
            for seq, s in zip(seqs, state):
                seq[..., t, :, :] = s
            if kept is not None:
                for k, a in enumerate(F.kept):
                    kept[..., k, t, : a.shape[-2], :] = a
        return seqs[0] if n_state == 1 else tuple(seqs)

    def backward_kernel(xp, ins, outs, gouts, batch_sizes=None):
        # the cells are holomorphic (tanh, sigmoid, products): a complex scan's conjugate
        # Wirtinger gradient is conj of the real formula applied to conj(gouts)
        cplx = ins[0].dtype.kind == "c"
        if cplx:
            gouts = [xp.conj(g) for g in gouts]
        grads = backward(xp, ins, outs, gouts, batch_sizes)
        if cplx:
            grads = [None if g is None else xp.conj(g) for g in grads]
        return _full(xp, grads, cores_in, [*ins, *outs, *gouts], cores_in + cores_out * 2)

    def scan_vjp(g, ins, result, batch_sizes):
        outs = list(result) if n_state > 1 else [result]
        gs = list(g) if n_state > 1 else [g]
        return list(bwd.fn(list(ins), outs, gs, batch_sizes=batch_sizes))

    def reference(batch_sizes):
        return lambda *ins: _reference(step, n_state, ins, batch_sizes)

    def scan_jvp(t, ins, batch_sizes):
        out = _func_jvp(reference(batch_sizes), tuple(ins), tuple(t))[1]
        return out if n_state > 1 else out[0]

    fwd = defop(
        name + "_scan",
        forward_kernel,
        nin=1,
        list_inputs=(0,),
        nout=n_state,
        vjp=scan_vjp,
        jvp=scan_jvp,
        batch_rule=_scan_rule((cores_in,)),
        api=api + ".fwd.fn",
        samples=_scan_samples(name, n_state, n_in),
        test={"no_oracle": True},
        # relu's clamp has no complex kernel (after the input projection's dtype checks)
        no_kernel=NoKernel("c", error=CLAMP_COMPLEX) if name == "rnn_relu" else (),
        complex32=_ACTIVATION_KERNEL[name],
        meta=by_kernel,
    )

    # The scan's gradient as a function of ``ins`` and ``gouts`` alone: ``outs`` are the
    # scan's results (F(ins) wherever the graph has them), so differentiating through
    # ``ins`` with the reference step gives the whole derivative; ``outs`` get none.
    # Like the kernel, it gives every input's gradient the leading dims of all operands.
    def pullback(ins, gouts, batch_sizes):
        lead = _lead_of([*ins, *gouts], cores_in + cores_out)
        ins, gouts = _expand(ins, cores_in, lead), _expand(gouts, cores_out, lead)
        return _func_vjp(reference(batch_sizes), *ins)[1](gouts)

    def bwd_vjp(g, ins, gouts, batch_sizes):
        return list(_func_vjp(lambda *a: pullback(a, gouts, batch_sizes), *ins)[1](tuple(g)))

    # The pullback is linear in gouts: its transpose is the jvp.
    def bwd_vjp_gouts(g, ins, batch_sizes):
        lead = tuple(g[0].shape[: g[0].dim() - 3])
        return list(_func_jvp(reference(batch_sizes), _expand(ins, cores_in, lead), tuple(g))[1])

    def bwd_jvp(tins, tgouts, ins, gouts, batch_sizes):
        return _func_jvp(
            lambda i, o: pullback(i, o, batch_sizes),
            (tuple(ins), tuple(gouts)),
            (tuple(tins), tuple(tgouts)),
        )[1]

    bwd = defop(
        name + "_scan_backward",
        backward_kernel,
        nin=3,
        list_inputs=(0, 1, 2),
        nout=n_in,
        vjp=(bwd_vjp, None, bwd_vjp_gouts),
        jvp=bwd_jvp,
        batch_rule=_scan_rule((cores_in, cores_out, cores_out)),
        api=api + ".grad",
        samples=_scan_samples(name, n_state, n_in, backward=True),
        test={"no_oracle": True},
    )

    def grad(ins: Sequence[Tensor], gouts: Sequence[Tensor], batch_sizes=None) -> tuple:
        """The scan's vjp at ``ins``: the backward primitive on ``outs = scan(ins)``."""
        outs = fwd.fn(list(ins), batch_sizes=batch_sizes)
        return bwd.fn(
            list(ins), list(outs) if n_state > 1 else [outs], list(gouts), batch_sizes=batch_sizes
        )

    return _Scan(fwd, bwd, grad)


def _reference(step: Callable, n_state: int, ins: Sequence[Tensor], batch_sizes) -> tuple:
    """The scan written with numtorch ops (for derivatives beyond the first)."""
    xg, state, w = ins[0], tuple(ins[1 : 1 + n_state]), ins[1 + n_state :]
    seqs = [[] for _ in range(n_state)]
    for t, b in enumerate(_sizes(batch_sizes, xg.shape[-3])):
        state = _advance(_Ops, step, xg[..., t, :, :], state, w, b)
        for seq, s in zip(seqs, state):
            seq.append(s)
    return tuple(stack(seq, -3) for seq in seqs)


# A namespace, so that the ops' ``api`` paths resolve by attribute.
_SCANS = SimpleNamespace(
    rnn_tanh=_scan_pair("rnn_tanh", _rnn_step("tanh"), _rnn_backward("tanh"), 1, 3),
    rnn_relu=_scan_pair("rnn_relu", _rnn_step("relu"), _rnn_backward("relu"), 1, 3),
    gru=_scan_pair("gru", _gru_step, _gru_backward, 1, 4),
    lstm=_scan_pair("lstm", _lstm_step, _lstm_backward, 2, 4),
    lstm_proj=_scan_pair("lstm_proj", _lstm_step, _lstm_backward, 2, 5),
)


# ------------------------------------------------------------------ the public functions
def _project(x, w_ih, bias):
    """x (M, I) @ w_ih^T (+ bias): one GEMM for every time step."""
    wt = w_ih.transpose(0, 1)
    return mm(x, wt) if bias is None else addmm(bias, x, wt)


def _add(a, b):
    return b if a is None else a if b is None else a + b


class _Plan(NamedTuple):
    """Where a packed sequence's rows sit in the scans' (T, N) time-major grid. Per
    direction (0: forward, 1: reverse, each sequence read from its own end): ``src``, the
    packed row of each grid cell (0 past a sequence's end, where the scan reads nothing);
    ``dst``, the grid cell of each packed row."""

    T: int
    N: int
    batch_sizes: tuple | None  # None: every step has the whole batch
    src: tuple
    dst: tuple


def _packed_error(bs, rows: int, hidden_rows: int) -> str | None:
    """Where PyTorch's packed loop fails on batch sizes that are not a packed sequence's
    (None where it runs on, reading past the data): each step narrows ``bs[t]`` rows of the
    data (a negative size, or one past the data, fails there), and a first step of no rows
    does not broadcast against the hidden state's rows."""
    offset = 0
    for t, b in enumerate(int(b) for b in bs):
        if b < 0:
            return "narrow(): length must be non-negative."
        if offset + b > rows:
            return f"start ({offset}) + length ({b}) exceeds dimension size ({rows})."
        offset += b
        if t == 0 and b == 0 and hidden_rows > 1:
            return (
                f"The size of tensor a ({hidden_rows}) must match the size of tensor b (0) "
                "at non-singleton dimension 0"
            )
    return None


def _plan(data: Tensor, batch_sizes: Tensor, hidden_rows: int) -> _Plan:
    if batch_sizes.dtype.np != np.int64:
        raise RuntimeError(f"expected scalar type Long but found {batch_sizes.dtype.scalar_name}")
    if batch_sizes.dim() != 1:
        raise RuntimeError(f"numtorch: batch_sizes must be 1-D, got {batch_sizes.dim()}-D")
    bs = np.array([int(b) for b in batch_sizes], dtype=np.int64)  # (under vmap: .item()'s error)
    if bs.size == 0 or bs[-1] < 1 or (bs[1:] > bs[:-1]).any():
        if bs.size and data.dim() == 2 and (text := _packed_error(bs, data.shape[0], hidden_rows)):
            raise RuntimeError(text)
        raise RuntimeError(
            "numtorch: batch_sizes must be a non-empty 1-D tensor of positive, "
            f"non-increasing sizes, got {bs.tolist()}"
        )
    if data.dim() != 2 or int(bs.sum()) != data.shape[0]:
        if data.dim() == 2 and (text := _packed_error(bs, data.shape[0], hidden_rows)):
            raise RuntimeError(text)
        raise RuntimeError(
            f"numtorch: packed data of shape {list(data.shape)} does not hold "
            f"sum(batch_sizes) = {int(bs.sum())} rows"
        )
    T, N = bs.shape[0], int(bs[0])
    lengths = (bs[:, None] > np.arange(N)[None, :]).sum(0)
    t, n = np.nonzero(np.arange(T)[:, None] < lengths[None, :])  # packed order
    src, dst = [], []
    for tt in (t, lengths[n] - 1 - t):
        cell = tt * N + n
        grid = np.zeros(T * N, np.int64)
        grid[cell] = np.arange(cell.shape[0])
        src.append(as_tensor(grid, device=data.device))
        dst.append(as_tensor(cell.astype(np.int64), device=data.device))
    full = (bs == N).all()
    return _Plan(T, N, None if full else tuple(int(b) for b in bs), tuple(src), tuple(dst))


def _direction(cell: str, x, state: list, w, has_biases: bool, reverse: bool, plan):
    """One layer in one direction: (output sequence, final states). ``x`` is (T, N, I), or
    with a ``plan`` a packed sequence's data (M, I)."""
    w_ih, w_hh = w[0], w[1]
    b_ih, b_hh = (w[2], w[3]) if has_biases else (None, None)
    flat = x.reshape(-1, x.shape[-1])
    if cell == "gru":
        xg = _project(flat, w_ih, b_ih)
        rest = [w_hh, b_hh if has_biases else zeros_like(w_hh[:, 0])]
    else:
        xg = _project(flat, w_ih, _add(b_ih, b_hh))
        rest = [w_hh, *w[2 + 2 * bool(has_biases) :]]  # (+ W_hr with projections)
    if plan is None:
        xg = xg.reshape(x.shape[0], x.shape[1], w_ih.shape[0])
        xg = xg.flip(0) if reverse else xg
    else:
        xg = xg.index_select(0, plan.src[reverse]).reshape(plan.T, plan.N, w_ih.shape[0])
    scan = getattr(_SCANS, cell + "_proj" * (len(rest) == 2 and cell == "lstm")).fwd
    seqs = scan.fn([xg, *state, *rest], batch_sizes=plan and plan.batch_sizes)
    seqs = seqs if isinstance(seqs, tuple) else (seqs,)
    out = seqs[0]
    if plan is not None:
        out = out.reshape(plan.T * plan.N, out.shape[-1]).index_select(0, plan.dst[reverse])
    elif reverse:
        out = out.flip(0)
    return out, [s[-1] for s in seqs]


def _check_hidden(cell: str, hx, lead: tuple, w_hh) -> None:
    """nn.RNN / nn.LSTM's check of the initial states (torch's function reads out of
    bounds instead); their messages. A hidden size unlike w_hh's fails in PyTorch's
    functional RNN and GRU at the product of the state and w_hh^T."""
    if cell != "lstm" and hx[0].dim() == 3 and hx[0].shape[-1] != w_hh.shape[1]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({hx[0].shape[1]}x{hx[0].shape[2]} and "
            f"{w_hh.shape[1]}x{w_hh.shape[0]})"
        )
    sizes = (w_hh.shape[1], w_hh.shape[0] // 4) if cell == "lstm" else (w_hh.shape[1],)
    for k, (h, size) in enumerate(zip(hx, sizes)):
        want = (*lead, size)
        if tuple(h.shape) != want:
            which = f"hidden[{k}]" if cell == "lstm" else "hidden"
            raise RuntimeError(f"Expected {which} size {want}, got {list(h.shape)}")


def _stacked(cell, x, hx, params, has_biases, num_layers, dropout, train, bidirectional, plan=None):
    """Every layer and direction of a stacked RNN on a time-major ``x`` (or packed data
    laid out by ``plan``); returns (output, *final states)."""
    proj = cell == "lstm" and hx[0].shape[-1] != hx[1].shape[-1]
    stride = 2 + 2 * bool(has_biases) + proj
    if len(params) % stride:
        raise RuntimeError(
            f"MatrixRef: ArrayRef size {len(params)} not divisible by stride {stride}"
            if cell == "lstm"
            else "got an incorrect number of RNN parameters"
        )
    if plan is None and x.shape[0] == 0:
        raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
    dirs = 2 if bidirectional else 1
    need = num_layers * dirs
    if len(params) < stride * need:
        raise RuntimeError(
            f"ArrayRef: invalid slice, N = {stride}; M = {stride}; size = {len(params)}"
            if cell == "lstm"
            else "Expected more weights in stacked_rnn"
        )
    if hx[0].shape[0] < need:
        if cell == "lstm":
            raise IndexError(
                f"select(): index {hx[0].shape[0]} out of range for tensor of size "
                f"{list(hx[0].shape)} at dimension 0"
            )
        raise RuntimeError("Expected more hidden states in stacked_rnn")
    _check_hidden(cell, hx, (need, x.shape[1] if plan is None else plan.N), params[1])
    finals = [[] for _ in hx]
    for layer in range(num_layers):
        outs = []
        for d in range(dirs):
            k = layer * dirs + d
            out, last = _direction(
                cell,
                x,
                [h[k] for h in hx],
                params[k * stride : (k + 1) * stride],
                has_biases,
                d == 1,
                plan,
            )
            outs.append(out)
            for f, s in zip(finals, last):
                f.append(s)
        x = outs[0] if dirs == 1 else cat(outs, -1)
        if dropout > 0 and train and layer < num_layers - 1:
            x = _dropout(x, dropout, True)
    return (x, *(stack(f, 0) for f in finals))


def _tamed(make) -> Callable:
    """``make`` itself, or for complex samples one drawing from a quarter of its range:
    complex tanh and sigmoid have poles on the imaginary axis (i pi/2, i pi), and a stack
    of layers over wide values comes near them, where float rounding and finite
    differences part."""
    if make.dtype.kind != "c":
        return make
    return lambda shape=(), low=-2.0, high=2.0: make(shape, low / 4, high / 4)


def _layer_samples(cell: str, gates: int) -> Callable:
    def samples(make):
        make = _tamed(make)

        def params(layers, dirs, i, h, bias, p=None):
            out = []
            for layer in range(layers):
                for _ in range(dirs):
                    fan = i if layer == 0 else (p or h) * dirs
                    out += [make((gates * h, fan)), make((gates * h, p or h))]
                    out += [make(gates * h), make(gates * h)] if bias else []
                    out += [make((p, h))] if p else []
            return out

        def hx(n, b, h, p=None):
            return (make((n, b, p or h)), make((n, b, h))) if cell == "lstm" else make((n, b, h))

        yield S(
            (
                make((3, 2, 2)),
                hx(1, 2, 3),
                params(1, 1, 2, 3, True),
                True,
                1,
                0.0,
                False,
                False,
                False,
            ),
            name="one layer",
        )
        yield S(
            (
                make((2, 2, 3)),
                hx(4, 2, 2),
                params(2, 2, 3, 2, False),
                False,
                2,
                0.5,
                False,
                True,
                True,
            ),
            name="two layers, bidirectional, batch_first, no bias",
        )
        yield S(
            (
                make((2, 0, 2)),
                hx(2, 0, 2),
                params(2, 1, 2, 2, True),
                True,
                2,
                0.0,
                True,
                False,
                False,
            ),
            name="empty batch, train",
        )
        if cell == "lstm":
            yield S(
                (
                    make((2, 2, 2)),
                    hx(2, 2, 3, 2),
                    params(1, 2, 2, 3, False, 2),
                    False,
                    1,
                    0.0,
                    False,
                    True,
                    False,
                ),
                name="projections, no bias",
            )

    return samples


def _packed_samples(cell: str, gates: int) -> Callable:
    def samples(make):
        make = _tamed(make)

        def hx(n, b, h, p=None):
            return (make((n, b, p or h)), make((n, b, h))) if cell == "lstm" else make((n, b, h))

        def params(i, h, dirs, layers=1, bias=True):
            return [
                w
                for layer in range(layers)
                for _ in range(dirs)
                for w in [make((gates * h, i if layer == 0 else h * dirs)), make((gates * h, h))]
                + ([make(gates * h), make(gates * h)] if bias else [])
            ]

        bs = np.array([3, 2, 1], dtype=np.int64)
        yield S(
            (make((6, 2)), bs, hx(4, 3, 2), params(2, 2, 2, 2, False), False, 2, 0.0, True, True),
            name="two layers, bidirectional, no bias",
        )
        yield S(
            (
                make((4, 2)),
                np.array([2, 2], dtype=np.int64),
                hx(2, 2, 2),
                params(2, 2, 2),
                True,
                1,
                0.0,
                False,
                True,
            ),
            name="equal lengths, bidirectional",
        )

    return samples


def _layer_errors(cell: str, gates: int) -> Callable:
    def errors(make):
        h = make((1, 2, 3))
        hx = (h, make((1, 2, 3))) if cell == "lstm" else h
        p = [make((gates * 3, 2)), make((gates * 3, 3))]
        args = (True, 1, 0.0, False, False, False)
        yield ErrorInput(
            S((make((0, 2, 2)), hx, p, False, *args[1:])),
            RuntimeError,
            "Expected sequence length to be larger than 0 in RNN",
        )
        lstm = cell == "lstm"
        yield ErrorInput(
            S((make((3, 2, 2)), hx, p + p, False, 2, *args[2:])),
            IndexError if lstm else RuntimeError,
            r"select\(\): index 1 out of range"
            if lstm
            else "Expected more hidden states in stacked_rnn",
        )
        yield ErrorInput(
            S((make((3, 2, 2)), hx, p[:1], False, *args[1:])),
            RuntimeError,
            "MatrixRef: ArrayRef size 1 not divisible by stride 2"
            if cell == "lstm"
            else "got an incorrect number of RNN parameters",
        )
        yield from _complex_refusal(cell, (make((3, 2, 2)), hx, p, False, *args[1:]))
        if cell == "lstm":  # (torch runs the other cells on a 2-d input, to no meaning)
            yield ErrorInput(
                S((make((3, 2)), hx, p, False, *args[1:])),
                IndexError,
                r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)",
            )
            yield ErrorInput(
                S((make((3, 2, 2)), (h,), p, False, *args[1:])),
                RuntimeError,
                "lstm expects two hidden states",
            )

    return errors


def _states(cell: str, hx) -> list:
    if cell == "lstm" and len(hx) != 2:
        raise RuntimeError("lstm expects two hidden states")
    return list(hx) if cell == "lstm" else [hx]


def _dtypes(cell: str) -> dict:
    """Test flags: PyTorch runs every cell but relu on complex (clamp has no complex kernel)."""
    return {} if cell == "rnn_relu" else COMPLEX_TOO


def _complex(a):
    """A sample argument with its float arrays (in lists and tuples too) made complex."""
    if isinstance(a, (list, tuple)):
        return type(a)(_complex(v) for v in a)
    return a.astype(np.complex128) if isinstance(a, np.ndarray) and a.dtype.kind == "f" else a


def _complex_refusal(cell: str, args: tuple) -> list:
    """rnn_relu's refusal of the call ``args`` made complex (none for the other cells)."""
    if cell != "rnn_relu":
        return []
    return [ErrorInput(S(_complex(args)), *CLAMP_COMPLEX)]


def _layers(cell: str, gates: int, doc: str) -> Callable:
    def packed(
        data: Tensor,
        batch_sizes: Tensor,
        hx,
        params: Sequence[Tensor],
        has_biases: bool,
        num_layers: int,
        dropout: float,
        train: bool,
        bidirectional: bool,
    ) -> tuple:
        states = _states(cell, hx)
        plan = _plan(data, batch_sizes, states[0].shape[-2] if states[0].dim() > 1 else 0)
        return _stacked(
            cell, data, states, params, has_biases, num_layers, dropout, train, bidirectional, plan
        )

    def fn(
        input: Tensor,
        hx,
        params: Sequence[Tensor],
        has_biases: bool,
        num_layers: int,
        dropout: float,
        train: bool,
        bidirectional: bool,
        batch_first: bool,
    ) -> tuple:
        if isinstance(has_biases, (list, tuple)):  # (data, batch_sizes, hx, params, ...)
            return packed(
                input,
                hx,
                params,
                has_biases,
                num_layers,
                dropout,
                train,
                bidirectional,
                batch_first,
            )
        states = _states(cell, hx)
        if input.dim() != 3:
            r = input.dim()
            raise IndexError(
                f"Dimension out of range (expected to be in range of [-{r}, {r - 1}], but got 2)"
            )
        x = input.transpose(0, 1) if batch_first else input
        out, *last = _stacked(
            cell, x, states, params, has_biases, num_layers, dropout, train, bidirectional
        )
        return (out.transpose(0, 1) if batch_first else out, *last)

    nout = 3 if cell == "lstm" else 2
    fn.__name__ = fn.__qualname__ = cell
    fn.__doc__ = doc + " Also ``(data, batch_sizes, hx, params, ...)`` on a packed sequence."
    packed.__name__ = packed.__qualname__ = cell + "_packed"
    composite(
        packed,
        samples=_packed_samples(cell, gates),
        api=cell,
        nout=nout,
        test={"vmap_unbatched": (1,), **_dtypes(cell)},  # batch_sizes is shape information
        autocast="keep" if cell in ("lstm", "gru") else None,  # (PyTorch's runs uncast)
    )
    return composite(
        fn,
        samples=_layer_samples(cell, gates),
        error_samples=_layer_errors(cell, gates),
        nout=nout,
        test=_dtypes(cell),
        complex32=_layers_complex32(cell),
        autocast=_layers_autocast(cell),
    )


def _layers_autocast(cell: str):
    """The layers' fact: PyTorch's GRU runs uncast; its LSTM lowers through mkldnn_rnn, but
    not on a packed sequence of unequal lengths; its Elman RNNs lower through linear."""
    if cell == "gru":
        return "keep"
    return _lstm_autocast if cell == "lstm" else None


def _lstm_autocast(inputs, args) -> str | None:
    if not isinstance(args.get("has_biases"), list | tuple):  # (not packed)
        return None
    batch_sizes = args["hx"]  # (data, batch_sizes, hx, params, ...)
    return "keep" if len(set(batch_sizes.tolist())) > 1 else None


rnn_tanh = _layers("rnn_tanh", 1, "``torch.rnn_tanh``: a stacked Elman RNN (tanh); (output, h_n).")
rnn_relu = _layers("rnn_relu", 1, "``torch.rnn_relu``: a stacked Elman RNN (relu); (output, h_n).")
lstm = _layers(
    "lstm", 4, "``torch.lstm``: a stacked LSTM (optional projections); (output, h_n, c_n)."
)
gru = _layers("gru", 3, "``torch.gru``: a stacked GRU; (output, h_n).")


# ------------------------------------------------------------------ cells
def _check_cell(name: str, input, states, w_ih, w_hh) -> None:
    if input.dim() != 2:
        r = input.dim()
        raise IndexError(
            f"Dimension out of range (expected to be in range of [-{r}, {r - 1}], but got 1)"
        )
    if input.shape[1] != w_ih.shape[1]:
        raise RuntimeError(
            f"input has inconsistent input_size: got {input.shape[1]} expected {w_ih.shape[1]}"
        )
    for k, h in enumerate(states):
        if h.shape[0] != input.shape[0]:
            raise RuntimeError(
                f"Input batch size {input.shape[0]} doesn't match hidden{k} batch size {h.shape[0]}"
            )
        if h.shape[1] != w_hh.shape[1]:
            raise RuntimeError(
                f"hidden{k} has inconsistent hidden_size: got {h.shape[1]}, "
                f"expected {w_hh.shape[1]}"
            )


def _cell_samples(cell: str, gates: int) -> Callable:
    def samples(make):
        def hx(n):
            return (make((n, 3)), make((n, 3))) if cell == "lstm" else make((n, 3))

        w = [make((gates * 3, 2)), make((gates * 3, 3)), make(gates * 3), make(gates * 3)]
        yield S((make((2, 2)), hx(2), *w), name="biases")
        yield S((make((2, 2)), hx(2), *w[:2]), name="no bias")
        yield S((make((2, 2)), hx(2), w[0], make((3, gates * 3)).T, None, w[3]), name="b_hh only")
        yield S((make((0, 2)), hx(0), *w), name="empty batch")

    return samples


def _cell_errors(cell: str, gates: int) -> Callable:
    def errors(make):
        w = [make((gates * 3, 2)), make((gates * 3, 3))]

        def hx(n, h=3):
            return (make((n, h)), make((n, h))) if cell == "lstm" else make((n, h))

        yield ErrorInput(
            S((make((2,)), hx(2), *w)),
            IndexError,
            r"Dimension out of range \(expected to be in range of \[-1, 0\], but got 1\)",
        )
        yield ErrorInput(
            S((make((2, 4)), hx(2), *w)),
            RuntimeError,
            "input has inconsistent input_size: got 4 expected 2",
        )
        yield ErrorInput(
            S((make((2, 2)), hx(1), *w)),
            RuntimeError,
            "Input batch size 2 doesn't match hidden0 batch size 1",
        )
        yield ErrorInput(
            S((make((2, 2)), hx(2, 2), *w)),
            RuntimeError,
            "hidden0 has inconsistent hidden_size: got 2, expected 3",
        )
        yield from _complex_refusal(cell, (make((2, 2)), hx(2), *w))
        if cell == "lstm":
            yield ErrorInput(
                S((make((2, 2)), hx(2)[:1], *w)),
                RuntimeError,
                "lstm_cell expects two hidden states",
            )

    return errors


def _cell(cell: str, gates: int, doc: str) -> Callable:
    def fn(
        input: Tensor,
        hx,
        w_ih: Tensor,
        w_hh: Tensor,
        b_ih: Tensor | None = None,
        b_hh: Tensor | None = None,
    ):
        if cell == "lstm" and len(hx) != 2:
            raise RuntimeError("lstm_cell expects two hidden states")
        states = list(hx) if cell == "lstm" else [hx]
        _check_cell(cell, input, states, w_ih, w_hh)
        if cell == "gru":
            xg = _project(input, w_ih, b_ih)
            rest = [w_hh, b_hh if b_hh is not None else zeros_like(w_hh[:, 0])]
        else:
            xg = _project(input, w_ih, _add(b_ih, b_hh))
            rest = [w_hh]
        seqs = getattr(_SCANS, cell).fwd.fn([xg.unsqueeze(0), *states, *rest])
        return tuple(s[0] for s in seqs) if isinstance(seqs, tuple) else seqs[0]

    fn.__name__ = fn.__qualname__ = cell + "_cell"
    fn.__doc__ = doc
    return composite(
        fn,
        samples=_cell_samples(cell, gates),
        error_samples=_cell_errors(cell, gates),
        nout=2 if cell == "lstm" else 1,
        test=_dtypes(cell),
        autocast="keep" if cell in ("lstm", "gru") else None,  # (PyTorch's runs uncast)
    )


rnn_tanh_cell = _cell("rnn_tanh", 1, "``torch.rnn_tanh_cell``: one step of an Elman RNN (tanh).")
rnn_relu_cell = _cell("rnn_relu", 1, "``torch.rnn_relu_cell``: one step of an Elman RNN (relu).")
lstm_cell = _cell("lstm", 4, "``torch.lstm_cell``: one LSTM step; (h', c').")
gru_cell = _cell("gru", 3, "``torch.gru_cell``: one GRU step.")
