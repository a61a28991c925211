"""Every in-place Tensor method under vmap, against a loop of the same method on slices.

``self`` is batched (in_dim 0 or -1); each other tensor argument is batched or not. A
batched value written into an unbatched ``self`` must raise PyTorch's error instead.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from opdb import samples, to_nt

import numtorch as nt

INPLACE = sorted(
    (name, m.inplace_of)
    for name, m in vars(nt.Tensor).items()
    if hasattr(m, "inplace_of") and not name.startswith("__")
)


def _usable(op, s):
    """Samples whose result has self's shape and a dtype self can hold."""
    a0 = s.args[0]
    if not isinstance(a0, np.ndarray) or a0.ndim == 0:
        return False
    with nt.no_grad():
        out = op.fn(*to_nt(s.args), **to_nt(s.kwargs))
    out = out[0] if isinstance(out, tuple) else out
    return tuple(out.shape) == a0.shape and np.can_cast(out.dtype.np, a0.dtype, "same_kind")


def _cases(op):
    dts = op.test.dtypes
    dtype = "float64" if "float64" in dts else dts[0]
    groups = zip(*(samples(op, dtype, seed=k) for k in range(3)))
    return [g for g in groups if _usable(op, g[0])][:3]


pytestmark = pytest.mark.usefixtures("no_fallback")


@pytest.mark.parametrize("name,op", [pytest.param(n, op, id=n) for n, op in INPLACE])
def test_inplace_method_under_vmap_matches_loop(name, op):
    B = 3
    for group in _cases(op):
        s0 = group[0]
        tensor_pos = [i for i, a in enumerate(s0.args) if isinstance(a, np.ndarray)]
        kw = to_nt(s0.kwargs)
        for self_dim, *rest in itertools.product((0, -1), *[(0, None)] * (len(tensor_pos) - 1)):
            dims = dict(zip(tensor_pos, (self_dim, *rest)))
            args = [
                np.stack([g.args[i] for g in group], dims[i]) if dims.get(i) is not None else a
                for i, a in enumerate(s0.args)
            ]
            in_dims = tuple(dims.get(i) for i in range(len(args)))
            got_self = to_nt(args[0])
            targs = to_nt(tuple(args[1:]))
            out = nt.vmap(lambda x, *r: getattr(x, name)(*r, **kw), in_dims=in_dims)(
                got_self, *targs
            )
            want = []
            for b in range(B):
                sl = [
                    a if d is None else nt.tensor(np.take(args[i], b, axis=d))
                    for i, (a, d) in enumerate(zip(args, in_dims))
                ]
                sl = [to_nt(a) if isinstance(a, np.ndarray) else a for a in sl]
                want.append(getattr(sl[0], name)(*sl[1:], **kw))
            what = f"{name} in_dims={in_dims} {s0}"
            np.testing.assert_allclose(
                got_self.numpy(), nt.stack(want, in_dims[0]).numpy(), err_msg=what, rtol=1e-12
            )
            np.testing.assert_allclose(
                out.numpy(), nt.stack(want).numpy(), err_msg=what, rtol=1e-12
            )


BINARY = [(n, op) for n, op in INPLACE if len([i for i in op.inputs]) >= 2]


@pytest.mark.parametrize("name,op", [pytest.param(n, op, id=n) for n, op in BINARY])
def test_batched_value_into_unbatched_self_raises(name, op):
    for group in _cases(op):
        s0 = group[0]
        pos = [i for i, a in enumerate(s0.args) if isinstance(a, np.ndarray)][1:]
        if not pos:
            continue
        j = pos[0]
        other = np.stack([g.args[j] for g in group], 0)
        in_dims = tuple(0 if i == j else None for i in range(len(s0.args)))
        args = list(to_nt(s0.args))
        args[j] = nt.tensor(other)
        before = args[0].clone()
        # PyTorch's vmap runs add_/atan2_ on the batched values unchecked: its broadcast error
        want = (
            r"^output with shape \[.*\] doesn't match the broadcast shape \[3"
            if op.name in ("add", "atan2")
            else r"^vmap: .*\(self, \*extra_args\) is not possible"
        )
        with pytest.raises(RuntimeError, match=want):
            nt.vmap(lambda x, *r: getattr(x, name)(*r, **to_nt(s0.kwargs)), in_dims=in_dims)(*args)
        np.testing.assert_array_equal(args[0].numpy(), before.numpy())
