"""Issue 14, silently wrong values and derivatives: reductions, linalg and jvp, against
PyTorch (and finite differences where PyTorch is wrong)."""

import numpy as np

import numtorch as nt
from tests.twolibs import assert_same, run

BIG = np.array([-100.0, 50.0, -80.0, 120.0])
COT = np.array([1.0, -2.0, 3.0, 0.5])


def _grad(f):
    def prog(L, x, *rest):
        x.requires_grad_(True)
        f(L, x, *rest).backward()
        return x.grad

    return prog


# ------------------------------------------------------------------ logcumsumexp
def test_logcumsumexp_grad_at_large_magnitudes():
    for dt in ("float32", "float64"):
        assert_same(
            _grad(lambda L, x: L.logcumsumexp(x.to(getattr(L, dt)), 0).sum()), BIG, rtol=1e-6
        )
    assert_same(_grad(lambda L, x, g: (L.logcumsumexp(x, 0) * g).sum()), BIG, COT)


def test_logcumsumexp_jvp_at_large_magnitudes():
    # PyTorch's tangent is wrong here (2.9e-83 for d r_0 / d x_0 = 1): finite differences decide.
    def f(x):
        return run(lambda L, x: L.logcumsumexp(x, 0), nt, x).numpy()

    eps = 1e-6
    fd = (f(BIG + eps * COT) - f(BIG - eps * COT)) / (2 * eps)
    t = nt.func.jvp(lambda x: nt.logcumsumexp(x, 0), (nt.tensor(BIG),), (nt.tensor(COT),))[1]
    np.testing.assert_allclose(t.numpy(), fd, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(t.numpy(), [1.0, -2.0, -2.0, 0.5], rtol=1e-12)
