"""numtorch.fft, stft/istft against PyTorch: every function and norm mode, n/s/dim handling,
dtypes, gradients (against torch and finite differences), the private transforms, and
errors. The op database covers the generic checks (vmap, jvp, layouts, bad inputs)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from twolibs import arr, assert_same, assert_same_error

import numtorch as nt

NAMES_1D = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
NORMS = [None, "backward", "ortho", "forward"]


def _cplx(*shape, seed=0):
    return arr(*shape, seed=seed) + 1j * arr(*shape, seed=seed + 1)


def _input(name, *shape):
    return arr(*shape) if name in ("rfft", "ihfft") else _cplx(*shape)


@pytest.mark.parametrize("name", NAMES_1D)
@pytest.mark.parametrize("norm", NORMS)
def test_1d_functions_and_norms(name, norm):
    x = _input(name, 4, 6)
    for kw in ({}, {"n": 9, "dim": 0}, {"n": 3}, {"dim": -2}):
        assert_same(lambda L, x: getattr(L.fft, name)(x, norm=norm, **kw).resolve_conj(), x)


@pytest.mark.parametrize("name", NAMES_1D)
@pytest.mark.parametrize("kind", ["2", "n"])
def test_nd_functions(name, kind):
    fn = name + kind
    x = _input(name, 3, 4, 5)
    cases = [{}, {"s": (3, 6)}, {"dim": (0, 2), "norm": "ortho"}, {"s": (-1, 4), "dim": (2, 0)}]
    for kw in cases:
        assert_same(lambda L, x: getattr(L.fft, fn)(x, **kw).resolve_conj(), x)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
def test_dtypes_promote_as_torch(dtype):
    x = (arr(8) * 3).astype(dtype)
    tol = {"rtol": 1e-5, "atol": 1e-5} if dtype != "float64" else {}
    for name in ("fft", "rfft", "ihfft", "irfft", "hfft"):
        assert_same(lambda L, x: getattr(L.fft, name)(x).resolve_conj(), x, **tol)
    x32 = arr(8).astype(np.float32)
    assert nt.fft.fft(nt.tensor(x32)).dtype == nt.complex64
    assert nt.fft.irfft(nt.tensor(x32.astype(np.complex128))).dtype == nt.float64


@pytest.mark.parametrize(
    "prog",
    [
        lambda L, x: L.fft.fft(x, n=0),
        lambda L, x: L.fft.fft(x, dim=2),
        lambda L, x: L.fft.fft(x[0, 0]),
        lambda L, x: L.fft.fftn(x, dim=(0, 0)),
        lambda L, x: L.fft.fftn(x, s=(3,), dim=(0, 1)),
        lambda L, x: L.fft.fftn(x, s=(3, 3, 3)),
        lambda L, x: L.fft.rfftn(x, dim=()),
        lambda L, x: L.fft.irfftn(x, dim=()),
        lambda L, x: L.fft.rfft(x.to(L.complex64)),
        lambda L, x: L.fft.rfft2(x.to(L.complex64)),
        lambda L, x: L.fft.ihfft2(x.to(L.complex64)),
        lambda L, x: L.fft.irfft(x[:, :1]),
        lambda L, x: L.fft.fft(x.half()),
        lambda L, x: L.fft.fft(x, norm="bad"),
        lambda L, x: L.fft.fft(x, out=L.empty(0)),
        lambda L, x: L.fft.fftfreq(5, dtype=L.int64),
    ],
)
def test_errors_match_torch(prog):
    assert_same_error(prog, arr(4, 6).astype(np.float32))


def test_out_and_freqs_and_shifts():
    x = _cplx(4, 6)
    assert_same(lambda L, x: L.fft.fft(x, out=L.empty(0, dtype=L.complex128)), x)
    assert_same(lambda L, x: L.fft.irfft(x, out=L.empty(0, dtype=L.float64)), x)
    for n, d in ((1, 1.0), (5, 0.1), (8, 2.0)):
        assert_same(lambda L: (L.fft.fftfreq(n, d), L.fft.rfftfreq(n, d)))
        assert_same(lambda L: L.fft.fftfreq(n, d, dtype=L.float64))
    y = np.arange(30.0).reshape(5, 6)
    for dim in (None, 0, (0, 1), -1):
        assert_same(lambda L, y: (L.fft.fftshift(y, dim), L.fft.ifftshift(y, dim)), y)


def test_private_transforms_match_torch():
    c, r = _cplx(3, 4, 5), arr(3, 4, 5)
    for dims in ([2], [1, 2], [0, 2]):
        for mode in (0, 1, 2):
            assert_same(lambda L, c: L._fft_c2c(c, dims, mode, True), c)
            assert_same(lambda L, c: L._fft_c2c(c, dims, mode, False), c)
            assert_same(lambda L, r: L._fft_r2c(r, dims, mode, True), r)
            assert_same(lambda L, r: L._fft_r2c(r, dims, mode, False), r)
            assert_same(lambda L, c: L._fft_c2r(c, dims, mode, 9), c)


def _grad_vs_torch(fn, x):
    a = nt.tensor(x, requires_grad=True)
    b = torch.tensor(x, requires_grad=True)
    fn(nt, a).backward()
    fn(torch, b).backward()
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-7, atol=1e-9)
    return a.grad


def _fd(fn, x, eps=1e-6):
    """Central finite differences of a real scalar fn of a real array (complex: dL/dRe +
    i dL/dIm, torch's gradient convention)."""
    g = np.zeros(x.shape, dtype=x.dtype)
    for idx in np.ndindex(x.shape):
        for step in (1.0, 1j) if np.iscomplexobj(x) else (1.0,):
            hi, lo = x.copy(), x.copy()
            hi[idx] += eps * step
            lo[idx] -= eps * step
            with nt.no_grad():
                d = (fn(nt, nt.tensor(hi)).item() - fn(nt, nt.tensor(lo)).item()) / (2 * eps)
            g[idx] += d * step
    return g


LOSSES = {
    "power": lambda L, x: (L.fft.fft(x).abs() ** 2).sum(),
    "rfft-irfft": lambda L, x: (L.fft.irfft(L.fft.rfft(x, n=10), n=9) * L.arange(9.0)).sum(),
    "rfft2-abs": lambda L, x: L.fft.rfft2(x, norm="ortho").abs().sum(),
    "ihfft-real": lambda L, x: L.fft.ihfft(x, n=7).imag.sum() + L.fft.ihfft(x).real.pow(2).sum(),
    "fftn-real": lambda L, x: L.fft.fftn(x, s=(5, 4)).real.pow(2).sum(),
    "ifft-real": lambda L, x: (L.fft.ifft(x, dim=0) * L.arange(6.0)).imag.sum(),
}


@pytest.mark.parametrize("name", list(LOSSES))
def test_real_input_gradients(name):
    fn = LOSSES[name]
    x = arr(4, 6) if name != "ifft-real" else arr(6, 3)
    if name == "ifft-real":
        fn = lambda L, x: (L.fft.ifft(x, dim=0) * L.arange(6.0).unsqueeze(1)).imag.sum()  # noqa: E731
    g = _grad_vs_torch(fn, x)
    np.testing.assert_allclose(g.numpy(), _fd(fn, x), rtol=1e-5, atol=1e-6)


COMPLEX_LOSSES = {
    "fft": lambda L, x: (L.fft.fft(x, n=5).abs() ** 2 * L.arange(5.0)).sum(),
    "irfft": lambda L, x: (L.fft.irfft(x) * L.arange(8.0)).sum(),
    "irfft-odd": lambda L, x: (L.fft.irfft(x, n=9, norm="ortho") ** 2).sum(),
    "hfft": lambda L, x: (L.fft.hfft(x, n=7) * L.arange(7.0)).sum(),
    "irfftn": lambda L, x: (L.fft.irfftn(x.reshape(1, 5), s=(2, 8)) ** 3).sum(),
    "hfft2": lambda L, x: L.fft.hfft2(x.reshape(1, 5), s=(2, 6)).pow(2).sum(),
}


@pytest.mark.parametrize("name", list(COMPLEX_LOSSES))
def test_complex_input_gradients(name):
    """c2r's DC and Nyquist imaginary parts are ignored by the forward and get no gradient."""
    fn = COMPLEX_LOSSES[name]
    x = _cplx(5)
    g = _grad_vs_torch(fn, x)
    np.testing.assert_allclose(g.numpy(), _fd(fn, x), rtol=1e-5, atol=1e-6)


def test_edge_values():
    x = np.array([0.0, -1.0, np.inf, 2.0, np.nan, 1e300, -1e-300, 3.0])
    assert_same(lambda L, x: L.fft.rfft(x), x)
    assert_same(lambda L, x: L.fft.fft(x[:4]), x)
    assert_same(lambda L, x: L.fft.irfft(L.fft.rfft(x[[0, 1, 3, 7]])), x)


# ------------------------------------------------------------------ stft / istft
STFT_CASES = [
    dict(n_fft=16, window="hann"),
    dict(n_fft=16, hop_length=5, win_length=10, window="hann"),
    dict(n_fft=16, center=False, normalized=True),
    dict(n_fft=16, pad_mode="constant", onesided=False),
    dict(n_fft=16, pad_mode="replicate"),
    dict(n_fft=16, pad_mode="circular", window="hann"),
    dict(n_fft=16, hop_length=4, win_length=10, window="hann", center=False, align_to_window=True),
]


def _kw(L, case, dtype=None):
    kw = dict(case)
    if kw.get("window") == "hann":
        kw["window"] = L.hann_window(kw.get("win_length", kw["n_fft"]), dtype=dtype)
    return kw


@pytest.mark.parametrize("case", range(len(STFT_CASES)))
def test_stft_matches_torch_with_gradients(case):
    c = STFT_CASES[case]
    x, tol = arr(2, 80), {"atol": 1e-12}
    assert_same(lambda L, x: L.stft(x, return_complex=True, **_kw(L, c, L.float64)), x, **tol)
    assert_same(lambda L, x: x[0].stft(return_complex=True, **_kw(L, c, L.float64)), x, **tol)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        real = lambda L, x: L.stft(x, return_complex=False, **_kw(L, c, L.float64))  # noqa: E731
        assert_same(real, x, **tol)

    def loss(L, x):
        return L.stft(x, return_complex=True, **_kw(L, c, L.float64)).abs().pow(2).sum()

    _grad_vs_torch(loss, x)


def test_stft_complex_input_and_float32():
    x = _cplx(60)
    assert_same(lambda L, x: L.stft(x, 16, window=L.hann_window(16, dtype=L.float64)), x)
    x32 = arr(60).astype(np.float32)
    out = assert_same(lambda L, x: L.stft(x, 16, return_complex=True), x32, rtol=1e-5, atol=1e-5)
    assert out.dtype == nt.complex64


@pytest.mark.parametrize("length", [None, 70, 100])
@pytest.mark.parametrize("center", [True, False])
def test_istft_round_trip_and_gradients(length, center):
    x = arr(2, 90)

    def prog(L, x):
        w = L.hann_window(16, dtype=L.float64) + 0.1
        spec = L.stft(x, 16, hop_length=4, window=w, center=center, return_complex=True)
        return L.istft(spec, 16, hop_length=4, window=w, center=center, length=length)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = assert_same(prog, x)
        _grad_vs_torch(lambda L, x: (prog(L, x) * prog(L, x)).sum(), x)
    if length is None and center:
        np.testing.assert_allclose(y.numpy(), x[:, : y.shape[-1]], atol=1e-10)


def test_istft_return_complex_and_normalized():
    x = _cplx(64)

    def prog(L, x):
        w = L.hann_window(16, dtype=L.float64) + 0.1
        spec = L.stft(x, 16, window=w, normalized=True, return_complex=True)
        return L.istft(spec, 16, window=w, normalized=True, return_complex=True, onesided=False)

    assert_same(prog, x)


@pytest.mark.parametrize(
    "prog",
    [
        lambda L, x: L.stft(x, 16),
        lambda L, x: L.stft(x, 0, return_complex=True),
        lambda L, x: L.stft(x, 16, hop_length=0, return_complex=True),
        lambda L, x: L.stft(x[:5], 16, return_complex=True),
        lambda L, x: L.stft(x, 16, window=L.ones(3), return_complex=True),
        lambda L, x: L.istft(
            L.stft(x, 16, return_complex=True), 16, window=L.hann_window(16), center=False
        ),
        lambda L, x: L.istft(L.stft(x, 16, return_complex=True), 32),
        lambda L, x: L.istft(x, 16),
    ],
)
def test_stft_errors_match_torch(prog):
    assert_same_error(prog, arr(100).astype(np.float32))
