"""torch.stft and torch.istft. stft is a composite of two primitives: ``stft_frames`` (the
signal padded at both ends by ``pad_mode``, cut into frames, windowed: one pass) and the fft
r2c/c2c transform; istft inverts each frame and overlap-adds them with ``index_add``, divided
by the window's squared envelope (PyTorch's NOLA check).

F.pad is a higher layer, so its texts for the cases stft reaches are written here."""

from __future__ import annotations

import functools
import warnings

import numpy as np

from .._core.dispatch import dispatch
from .._core.meta import by_kernel
from .._core.op import ErrorInput, composite, defop
from .._core.tensor import Tensor
from .._opdb.samples import S
from ._batching import front
from ._families import COMPLEX_TOO, cj
from .complex import view_as_real
from .creation import arange, as_tensor, ones, ones_like, zeros
from .fft import _BY_N, _NONE, _ROOT_N, fft_c2c, fft_c2r, fft_r2c
from .shape import cat

_RETURN_COMPLEX_FALSE = (
    "stft with return_complex=False is deprecated. In a future pytorch release, stft will "
    "return complex tensors for all inputs, and return_complex=False will raise an error.\n"
    "Note: you can still call torch.view_as_real on the complex output to recover the old "
    "return format."
)


def _shape(x) -> str:
    return "[" + ", ".join(str(n) for n in x.shape) + "]"


def _window_str(window) -> str:
    return "None" if window is None else f"{window.type()}{{{_shape(window)}}}"


def _opt(v) -> str:
    return "None" if v is None else str(int(v))


# ------------------------------------------------------------------ framing
_PAD_MODES = ("reflect", "replicate", "circular", "constant")


def _check_pad(x: Tensor, pad: int, mode: str) -> None:
    """F.pad's refusals for x padded by ``pad`` at both ends of its last dim, x seen as
    PyTorch's stft pads it: with leading dims of 1 up to three dims."""
    if mode not in _PAD_MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if mode == "reflect":
        if x.dtype.name == "bool":
            raise NotImplementedError("\"reflection_pad1d\" not implemented for 'Bool'")
        shape = (1,) * (3 - x.dim()) + tuple(x.shape)
        if pad >= shape[-1]:
            raise RuntimeError(
                "Argument #4: Padding size should be less than the corresponding input "
                f"dimension, but got: padding ({pad}, {pad}) at dimension {len(shape) - 1} of "
                f"input [{', '.join(map(str, shape))}]"
            )


def _padded(xp, x, pad: int, mode: str):
    """(B, L) signals padded by ``pad`` at both ends (xp.pad's Python costs more than this)."""
    length = x.shape[1]
    out = xp.empty((x.shape[0], length + 2 * pad), x.dtype)
    out[:, pad : pad + length] = x
    left, right = out[:, :pad], out[:, pad + length :]
    if mode == "reflect":
        left[...] = x[:, 1 : pad + 1][:, ::-1]
        right[...] = x[:, length - 1 - pad : length - 1][:, ::-1]
    elif mode == "replicate":
        left[...] = x[:, :1]
        right[...] = x[:, length - 1 :]
    elif mode == "circular":
        left[...] = x[:, length - pad :]
        right[...] = x[:, :pad]
    else:
        left[...] = 0
        right[...] = 0
    return out


def _stft_frames(xp, input, window, n_fft, hop, pad, pad_mode):
    """(B, L) signals padded by ``pad`` at both ends, cut into frames of n_fft every hop
    samples, times the window: (B, n_frames, n_fft)."""
    if pad:
        input = _padded(xp, input, pad, pad_mode)
    b, length = input.shape
    count = (length - n_fft) // hop + 1
    s0, s1 = input.strides
    frames = xp.lib.stride_tricks.as_strided(input, (b, count, n_fft), (s0, hop * s1, s1))
    return frames * window


@functools.lru_cache(maxsize=64)
def _sources(length: int, n_fft: int, hop: int, pad: int, mode: str) -> np.ndarray:
    """For each frame element, flattened, the signal position it reads (``length`` for
    constant padding)."""
    q = np.arange(-pad, length + pad)
    if mode == "reflect":
        q = np.abs(q)
        q = np.where(q >= length, 2 * (length - 1) - q, q)
    elif mode == "replicate":
        q = np.clip(q, 0, length - 1)
    elif mode == "circular":
        q = q % length
    else:
        q = np.where((q < 0) | (q >= length), length, q)
    count = (length + 2 * pad - n_fft) // hop + 1
    return q[(np.arange(count) * hop)[:, None] + np.arange(n_fft)].reshape(-1)


def _frames_input_vjp(g, input_shape, window, n_fft, hop, pad, pad_mode):
    """Each frame's gradient, times the conjugate window, added back where it was read."""
    b, length = input_shape
    src = as_tensor(_sources(length, n_fft, hop, pad, pad_mode), device=g.device)
    gw = (g * cj(window)).reshape(b, -1)
    out = zeros((b, length + 1), dtype=gw.dtype, device=g.device)  # [length]: constant pad
    return out.index_add(1, src, gw).narrow(1, 0, length)


def _frames_window_vjp(g, input, window, n_fft, hop, pad, pad_mode):
    plain = stft_frames(input, ones_like(window), n_fft, hop, pad, pad_mode)
    return (g * cj(plain)).sum((0, 1))


def _frames_jvp(tinput, twindow, input, window, n_fft, hop, pad, pad_mode):
    return stft_frames(tinput, window, n_fft, hop, pad, pad_mode) + stft_frames(
        input, twindow, n_fft, hop, pad, pad_mode
    )


def _frames_rule(vmap, args, bdims, attrs):
    """Batched signals fold into the signal batch; a batched window multiplies plain frames."""
    (x, w), (xb, wb) = args, bdims
    if xb is not None:
        x = front(x, xb)
        v, b, length = x.shape
        x = x.reshape(v * b, length)
    ones_w = w if wb is None else ones_like(w.select(wb, 0))
    out = dispatch(stft_frames_p, (x, ones_w), attrs)
    if xb is not None:
        out = out.reshape(v, b, *out.shape[1:])
    if wb is None:
        return out, 0 if xb is not None else None
    return out * front(w, wb)[:, None, None, :], 0  # (V, n): over (V, B, T, n) or (B, T, n)


def _frames_samples(make):
    yield S((make((2, 20)), make((8,), 0.5, 1.0), 8, 3, 4, "reflect"))
    yield S((make((1, 12)), make((4,)), 4, 4, 0, "constant"), name="unpadded")
    yield S((make((3, 10)), make((6,)), 6, 2, 3, "constant"))
    yield S((make((2, 9)), make((5,)), 5, 1, 2, "replicate"))
    yield S((make((2, 9)), make((5,)), 5, 2, 4, "circular"))
    yield S((make((2, 16))[:, ::2], make((4,)), 4, 2, 2, "reflect"), name="strided")


stft_frames_p = defop(
    "stft_frames",
    _stft_frames,
    nin=2,
    vjp=(_frames_input_vjp, _frames_window_vjp),
    jvp=_frames_jvp,
    batch_rule=_frames_rule,
    samples=_frames_samples,
    api="ops.spectral.stft_frames",
    test={**COMPLEX_TOO, "no_oracle": True},  # internal to stft, which is checked against PyTorch
    meta=by_kernel,
)
stft_frames = stft_frames_p.fn


def _full_window(window, win_length: int, n_fft: int, like: Tensor):
    """The window padded with zeros on both sides to n_fft points (ones when None)."""
    if window is None:
        window = ones(win_length, dtype=like.dtype.to_real(), device=like.device)
    left = (n_fft - win_length) // 2
    if left == 0 and win_length == n_fft:
        return window
    right = n_fft - win_length - left
    z = window.new_zeros
    return cat((z(left), window, z(right)))


# ------------------------------------------------------------------ stft
def _stft_samples(make):
    w = make((16,), 0.5, 1.0)
    yield S((make((100,)), 16), {"window": w, "return_complex": True})
    yield S(
        (make((2, 64)), 16),
        {"hop_length": 6, "win_length": 12, "window": make((12,), 0.5, 1.0)},
        name="batched",
    )
    yield S((make((2, 64)), 16), {"hop_length": 6, "win_length": 12, "window": None})
    yield S((make((40,)), 8), {"center": False, "normalized": True})
    yield S((make((40,)), 8), {"pad_mode": "constant", "onesided": False})
    yield S((make((40,)), 8), {"pad_mode": "replicate", "return_complex": False})
    yield S((make((40,)), 8), {"pad_mode": "circular", "hop_length": 3})


def _stft_call_samples(make):
    for s in _stft_samples(make):
        kw = dict(s.kwargs)
        kw.setdefault("return_complex", True)
        yield S(s.args, kw)
    c = np.result_type(make.dtype, np.complex64)
    yield S((make((40,), dtype=c), 8), {"window": make((8,), 0.5, 1.0), "return_complex": True})


def _stft_errors(make):
    x = make((100,))
    yield ErrorInput(
        S((x, 16)),
        RuntimeError,
        "stft requires the return_complex parameter be given for real inputs",
    )
    yield ErrorInput(
        S((make((2, 3, 100)), 16), {"return_complex": True}),
        RuntimeError,
        r"expected a 1D or 2D tensor",
    )
    yield ErrorInput(
        S((x, 16), {"hop_length": 0, "return_complex": True}),
        RuntimeError,
        r"expected hop_length > 0, but got hop_length=0",
    )
    yield ErrorInput(
        S((x, 200), {"center": False, "return_complex": True}),
        RuntimeError,
        r"expected 0 < n_fft < 100, but got n_fft=200",
    )
    yield ErrorInput(
        S((x, 16), {"win_length": 20, "return_complex": True}),
        RuntimeError,
        r"expected 0 < win_length <= n_fft, but got win_length=20",
    )
    yield ErrorInput(
        S((x, 16), {"window": make((10,)), "return_complex": True}),
        RuntimeError,
        r"expected a 1D window tensor of size equal to win_length=16, but got window with "
        r"size \[10\]",
    )
    yield ErrorInput(
        S((make((5,)), 16), {"return_complex": True}),
        RuntimeError,
        r"Padding size should be less than the corresponding input dimension, but got: "
        r"padding \(8, 8\) at dimension 2 of input \[1, 1, 5\]",
    )
    yield ErrorInput(
        S((x, 16), {"align_to_window": True, "return_complex": True}),
        RuntimeError,
        "stft align_to_window should only be set when center = false",
    )
    yield ErrorInput(
        S((x.astype(np.complex64), 16), {"onesided": True, "return_complex": True}),
        RuntimeError,
        "Cannot have onesided output if window or input is complex",
    )
    yield ErrorInput(
        S((x, 16), {"pad_mode": "bad", "return_complex": True}),
        NotImplementedError,
        "Unrecognised padding mode bad",
    )


@composite(
    samples=_stft_call_samples,
    error_samples=_stft_errors,
    methods=True,
    # (complex32 refusals differ from PyTorch's: it names reflection_pad1d, its padding's
    # kernel, and its istft checks the window first; not yet mirrored)
    test={**COMPLEX_TOO, "no_complex32": "stft's complex32 refusals are not yet mirrored"},
)
def stft(
    input,
    n_fft: int,
    hop_length: int | None = None,
    win_length: int | None = None,
    window=None,
    center: bool = True,
    pad_mode: str = "reflect",
    normalized: bool = False,
    onesided: bool | None = None,
    return_complex: bool | None = None,
    align_to_window: bool | None = None,
):
    """The short-time Fourier transform: (freq, frames), batched by a leading dim."""
    pad = 0
    if center:
        if align_to_window is not None:
            raise RuntimeError("stft align_to_window should only be set when center = false")
        pad = n_fft // 2
        _check_pad(input, pad, pad_mode)
    complex_fft = input.dtype.is_complex or (window is not None and window.dtype.is_complex)
    if return_complex is None:
        if not complex_fft:
            raise RuntimeError(
                "stft requires the return_complex parameter be given for real inputs, and will "
                "further require that return_complex=True in a future PyTorch release."
            )
        return_complex = True
    hop = n_fft // 4 if hop_length is None else hop_length
    length = (input.shape[-1] if input.dim() else 1) + 2 * pad
    win = n_fft if win_length is None else win_length

    def where() -> str:  # PyTorch's error prefix (of the padded input), made only for an error
        shown = "[" + ", ".join(str(n) for n in (*input.shape[:-1], length)) + "]"
        return (
            f"stft({input.type()}{shown}, n_fft={n_fft}, hop_length={hop}, "
            f"win_length={win}, window={_window_str(window)}, normalized={int(normalized)}, "
            f"onesided={_opt(onesided)}, return_complex={int(return_complex)}, "
            f"align_to_window={_opt(align_to_window)}) : "
        )

    if not return_complex:
        warnings.warn(_RETURN_COMPLEX_FALSE, UserWarning, stacklevel=2)
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(where() + "expected a tensor of floating point or complex values")
    if input.dim() not in (1, 2):
        raise RuntimeError(where() + "expected a 1D or 2D tensor")
    if n_fft <= 0 or n_fft > length:
        raise RuntimeError(where() + f"expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop <= 0:
        raise RuntimeError(where() + f"expected hop_length > 0, but got hop_length={hop}")
    if win <= 0 or win > n_fft:
        raise RuntimeError(where() + f"expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        raise RuntimeError(
            where() + f"expected a 1D window tensor of size equal to win_length={win}, but got "
            f"window with size {_shape(window)}"
        )
    if onesided is None:
        onesided = not complex_fft
    elif onesided and complex_fft:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    batched = input.dim() == 2
    x = input if batched else input.unsqueeze(0)
    if align_to_window and win < n_fft:  # frames start where their window does
        left = (n_fft - win) // 2
        z = x.new_zeros
        x = cat((z((x.shape[0], left)), x, z((x.shape[0], n_fft - win - left))), -1)
    frames = stft_frames(x, _full_window(window, win, n_fft, input), n_fft, hop, pad, pad_mode)
    norm = _ROOT_N if normalized else _NONE
    if frames.dtype.is_complex:
        out = fft_c2c(frames, (2,), norm, True)
    else:
        out = fft_r2c(frames, (2,), norm, onesided)
    if not return_complex:
        out = view_as_real(out)
    out = out.transpose(1, 2)
    return out if batched else out.squeeze(0)


# ------------------------------------------------------------------ istft
def _istft_samples(make):
    x = make((100,))
    w = make((16,), 0.5, 1.0)
    c = np.result_type(make.dtype, np.complex64)
    from numpy.fft import rfft

    def spectrum(sig, n_fft, hop, window, center=True):
        if center:
            sig = np.pad(sig, [(0, 0)] * (sig.ndim - 1) + [(n_fft // 2, n_fft // 2)], "reflect")
        idx = np.arange(0, sig.shape[-1] - n_fft + 1, hop)[:, None] + np.arange(n_fft)
        return np.swapaxes(rfft(sig[..., idx] * window, axis=-1), -1, -2).astype(c)

    yield S((spectrum(x, 16, 4, w), 16), {"window": w})
    yield S((spectrum(x, 16, 4, w), 16), {"window": w, "length": 90, "normalized": True})
    yield S((spectrum(make((2, 60)), 16, 4, w), 16), {"window": w, "length": 70})
    win = make((12,), 0.5, 1.0)
    padded = np.pad(win, (2, 2))
    yield S(
        (spectrum(x, 16, 6, padded), 16),
        {"hop_length": 6, "win_length": 12, "window": win, "center": True},
    )
    yield S((spectrum(x, 16, 4, w, False), 16), {"window": w, "center": False})


def _istft_errors(make):
    spec = make((9, 26), dtype=np.complex64)
    w = make((16,), 0.5, 1.0)
    yield ErrorInput(
        S((make((9, 26, 2)), 16), {"window": w}),
        RuntimeError,
        "istft requires a complex-valued input tensor matching the output from stft with "
        r"return_complex=True\.",
    )
    yield ErrorInput(
        S((spec, 16), {"window": w, "hop_length": 0}),
        RuntimeError,
        r"expected 0 < hop_length <= win_length",
    )
    yield ErrorInput(
        S((spec, 16), {"window": w, "win_length": 20}),
        RuntimeError,
        r"expected 0 < win_length <= n_fft",
    )
    yield ErrorInput(
        S((spec, 16), {"window": make((8,))}),
        RuntimeError,
        "Invalid window shape. window has to be 1D and length of `win_length`",
    )
    yield ErrorInput(
        S((spec, 32), {"window": make((32,))}),
        RuntimeError,
        r"expected the frequency dimension \(3rd to the last\) of the input tensor to match "
        r"n_fft / 2 \+ 1 when onesided=True, but got 9",
    )
    yield ErrorInput(
        S((spec, 16), {"window": w, "onesided": False}),
        RuntimeError,
        r"to match n_fft when onesided=False, but got 9",
    )
    yield ErrorInput(
        S((spec, 16), {"window": np.zeros(16, make.dtype)}),
        RuntimeError,
        r"window overlap add min: 1",
    )
    yield ErrorInput(
        S((spec, 16), {"window": w, "return_complex": True}),
        RuntimeError,
        "Cannot have onesided output if window or input is complex",
    )


def _backend(t: Tensor) -> str:
    """The backend part of a C++ type name (``CPUFloatType``, ``CUDAFloatType``)."""
    return "CUDA" if t.device.type == "cuda" else "CPU"


def _istft_where(input, n_fft, hop, win, window, center, normalized, onesided, length, rc):
    kind = {"complex64": "ComplexFloat", "complex128": "ComplexDouble"}.get(
        input.dtype.name, input.dtype.scalar_name
    )
    return (
        f"istft({_backend(input)}{kind}Type{_shape(input)}, n_fft={n_fft}, hop_length={hop}, "
        f"win_length={win}, window={_window_str(window)}, center={int(center)}, "
        f"normalized={int(normalized)}, onesided={_opt(onesided)}, "
        f"length={_opt(length)}, return_complex={int(rc)}) "
    )


def _overlap_add(frames: Tensor, hop: int, total: int) -> Tensor:
    """Frames (B, n_frames, n_fft) summed into a (B, total) signal, frame i at i * hop."""
    b, count, n_fft = frames.shape
    idx = (arange(count, device=frames.device) * hop).unsqueeze(1) + arange(
        n_fft, device=frames.device
    )
    out = zeros((b, total), dtype=frames.dtype, device=frames.device)
    return out.index_add(1, idx.reshape(-1), frames.reshape(b, count * n_fft))


@composite(
    samples=_istft_samples,
    error_samples=_istft_errors,
    methods=True,
    # (PyTorch refuses a complex32 window first: "Complex windows are incompatible with
    # return_complex=False"; ours runs: not yet mirrored)
    test={"no_complex32": "istft's complex32 window check is not yet mirrored"},
)
def istft(
    input,
    n_fft: int,
    hop_length: int | None = None,
    win_length: int | None = None,
    window=None,
    center: bool = True,
    normalized: bool = False,
    onesided: bool | None = None,
    length: int | None = None,
    return_complex: bool = False,
):
    """The inverse of ``stft``: the frames inverted, windowed and overlap-added."""
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if not input.dtype.is_complex:
        raise RuntimeError(
            "istft requires a complex-valued input tensor matching the output from stft with "
            "return_complex=True."
        )

    where = functools.partial(  # PyTorch's error prefix, made only for an error
        _istft_where,
        input,
        n_fft,
        hop,
        win,
        window,
        center,
        normalized,
        onesided,
        length,
        return_complex,
    )
    dims = input.dim() + 1  # PyTorch counts the dims of the real view
    if dims not in (3, 4):
        if dims < 3:
            raise IndexError(
                f"Dimension out of range (expected to be in range of [-{dims}, {dims - 1}], "
                "but got -3)"
            )
        raise RuntimeError(where() + f": expected a tensor with 3 or 4 dimensions, but got {dims}")
    batched = input.dim() == 3
    x = input if batched else input.unsqueeze(0)
    x = x.transpose(1, 2)  # (B, frames, freq)
    count, freq = x.shape[1], x.shape[2]
    if onesided is None:
        onesided = freq != n_fft
    if onesided:
        if n_fft // 2 + 1 != freq:
            raise RuntimeError(
                where() + ": expected the frequency dimension (3rd to the last) of the input "
                f"tensor to match n_fft / 2 + 1 when onesided=True, but got {freq}"
            )
    elif n_fft != freq:
        raise RuntimeError(
            where() + ": expected the frequency dimension (3rd to the last) of the input tensor "
            f"to match n_fft when onesided=False, but got {freq}"
        )
    if not 0 < hop <= win:
        raise RuntimeError(where() + ": expected 0 < hop_length <= win_length")
    if not 0 < win <= n_fft:
        raise RuntimeError(where() + ": expected 0 < win_length <= n_fft")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        raise RuntimeError(
            where() + ": Invalid window shape. window has to be 1D and length of `win_length`"
        )
    full = _full_window(window, win, n_fft, x)
    norm = _ROOT_N if normalized else _BY_N
    if return_complex:
        if onesided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        frames = fft_c2c(x, (2,), norm, False)
    else:
        if not onesided:
            x = x.narrow(2, 0, n_fft // 2 + 1)
        frames = fft_c2r(x, (2,), norm, n_fft)
    frames = frames * full
    total = n_fft + hop * (count - 1)
    y = _overlap_add(frames, hop, total)
    envelope = _overlap_add((full * full).expand(1, count, n_fft), hop, total)
    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + length
    elif center:
        end = total - n_fft // 2
    else:
        end = total
    stop = min(end, total)
    y = y.narrow(1, start, max(stop - start, 0))
    envelope = envelope.narrow(1, start, max(stop - start, 0))
    if bool((envelope.abs().min() < 1e-11).item()):
        raise RuntimeError(f"{where()}window overlap add min: 1\n[ {_backend(y)}BoolType{{}} ]")
    y = y / envelope
    if not batched:
        y = y.squeeze(0)
    if end > total:
        warnings.warn(
            "The length of signal is shorter than the length parameter. Result is being padded "
            "with zeros in the tail. Please check your center and hop_length settings.",
            UserWarning,
            stacklevel=2,
        )
        y = cat((y, y.new_zeros((*y.shape[:-1], end - total))), -1)
    return y
