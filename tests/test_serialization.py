"""save/load: round trips, PyTorch's checkpoints both ways, and the refusal to run code."""

from __future__ import annotations

import collections
import io
import os
import pickle
import struct
import warnings
import zipfile

import numpy as np
import pytest
import torch
from twolibs import arr

import numtorch as nt

TENSORS = (nt.Tensor, torch.Tensor)
PARAMS = (nt.nn.Parameter, torch.nn.Parameter)
DTYPES = "bool uint8 int8 int16 int32 int64 float16 float32 float64 complex64 complex128".split()


def _values(name: str) -> np.ndarray:
    a = arr(2, 3, seed=1) * 50
    if name.startswith("complex"):
        a = a + 1j * arr(2, 3, seed=2)
    return a.astype(np.dtype("bool" if name == "bool" else name))


def _buffer(lib, obj) -> io.BytesIO:
    buf = io.BytesIO()
    lib.save(obj, buf)
    buf.seek(0)
    return buf


def assert_close(got, ref, rtol=0.0, atol=0.0) -> None:
    """A numtorch tensor against a tensor or an array of either library: shape and values."""
    assert isinstance(got, nt.Tensor)
    ref = ref.detach().numpy() if isinstance(ref, (nt.Tensor, torch.Tensor)) else np.asarray(ref)
    np.testing.assert_allclose(got.detach().numpy(), ref, rtol=rtol, atol=atol, strict=True)


def _same(got, ref) -> None:
    """Same nesting, container types and values; tensors of the same class, dtype, shape,
    requires_grad and values (got and ref may come from different libraries)."""
    assert type(got).__name__ == type(ref).__name__ or isinstance(ref, TENSORS), (got, ref)
    if isinstance(ref, TENSORS):
        assert isinstance(got, TENSORS)
        assert str(got.dtype) == str(ref.dtype) and tuple(got.shape) == tuple(ref.shape)
        assert got.requires_grad == ref.requires_grad
        assert isinstance(got, PARAMS) == isinstance(ref, PARAMS)
        np.testing.assert_array_equal(got.detach().numpy(), ref.detach().numpy())
    elif isinstance(ref, dict):
        assert list(got) == list(ref)
        for k in ref:
            _same(got[k], ref[k])
    elif isinstance(ref, (list, tuple)):
        assert len(got) == len(ref)
        for g, r in zip(got, ref):
            _same(g, r)
    else:
        assert str(got) == str(ref)


def _sample(lib):
    x = lib.tensor(arr(3, 4))
    return collections.OrderedDict(
        [
            ("dtypes", {name: lib.tensor(_values(name)) for name in DTYPES}),
            ("scalar", lib.tensor(3.5)),
            ("empty", lib.zeros(0, 3)),
            ("x", x),
            ("transposed", x.t()),
            ("every_other", x[:, ::2]),
            ("row", x[1]),
            ("expanded", lib.tensor(arr(3)).expand(2, 3)),
            ("param", lib.nn.Parameter(lib.tensor(arr(2)))),
            ("frozen", lib.nn.Parameter(lib.tensor(arr(2)), requires_grad=False)),
            ("leaf", lib.ones(2, requires_grad=True)),
            ("nested", [1, 2.5, None, "s", True, (3, [4, {"k": x}]), b"raw", 1 + 2j, {5, 6}]),
            ("meta", (lib.float16, lib.device("cpu"), lib.Size([2, 3]))),
        ]
    )


@pytest.mark.parametrize("writer", ["numtorch", "torch"])
def test_round_trip_into_numtorch(writer):
    """Every dtype, views, 0-d and empty tensors, Parameters and containers come back equal,
    whichever library wrote the file."""
    lib = nt if writer == "numtorch" else torch
    obj = _sample(lib)
    got = nt.load(_buffer(lib, obj))
    _same(got, obj)
    assert isinstance(got["param"], nt.nn.Parameter) and got["param"].requires_grad
    assert got["meta"] == (nt.float16, nt.device("cpu"), nt.Size([2, 3]))
    assert got["nested"][5][1][1]["k"] is got["x"]  # one object saved twice is one object
    # views of one tensor share its storage after loading, as in PyTorch
    got["x"].add_(1.0)
    for view in ("transposed", "every_other", "row"):
        assert_close(got[view], obj[view].detach().numpy() + 1.0)


def test_numtorch_file_read_by_torch_weights_only():
    obj = _sample(nt)
    got = torch.load(_buffer(nt, obj), weights_only=True)
    _same(got, obj)
    assert isinstance(got["param"], torch.nn.Parameter) and not got["frozen"].requires_grad
    assert got["meta"] == (torch.float16, torch.device("cpu"), torch.Size([2, 3]))
    assert got["x"].untyped_storage().data_ptr() == got["transposed"].untyped_storage().data_ptr()
    assert got["transposed"].stride() == (1, 4)


def test_paths_and_file_objects(tmp_path):
    x = nt.tensor(arr(2, 2))
    nt.save({"x": x}, tmp_path / "a.pt")  # os.PathLike
    nt.save({"x": x}, str(tmp_path / "b.pt"))
    with open(tmp_path / "c.pt", "wb") as f:
        nt.save({"x": x}, f)
    for name in ("a.pt", "b.pt", "c.pt"):
        assert_close(nt.load(tmp_path / name)["x"], x)
        with open(tmp_path / name, "rb") as f:
            assert_close(nt.load(f)["x"], x)
        np.testing.assert_array_equal(torch.load(str(tmp_path / name))["x"].numpy(), x.numpy())
    assert_close(nt.load(str(tmp_path / "a.pt"), mmap=True)["x"], x)
    np.testing.assert_array_equal(torch.load(tmp_path / "a.pt", mmap=True)["x"].numpy(), x.numpy())
    with open(tmp_path / "a.pt", "rb") as f, zipfile.ZipFile(f) as zf:
        for info in zf.infolist():  # every record's data starts on a 64-byte boundary
            f.seek(info.header_offset + 26)
            name_len, extra_len = struct.unpack("<HH", f.read(4))
            assert (info.header_offset + 30 + name_len + extra_len) % 64 == 0
    with pytest.raises(RuntimeError, match="Parent directory .* does not exist"):
        nt.save(x, tmp_path / "missing" / "x.pt")


def test_module_state_dict_round_trip():
    """A state dict loaded into a fresh module gives the same outputs, from numtorch's file
    and from PyTorch's."""

    def model(lib):
        lib.manual_seed(0)
        return lib.nn.Sequential(
            lib.nn.Linear(4, 5), lib.nn.BatchNorm1d(5), lib.nn.Tanh(), lib.nn.Linear(5, 2)
        )

    x = arr(3, 4)
    src = model(nt)
    src.train()
    src(nt.tensor(x, dtype=nt.float32))  # moves the running stats off their initial values
    fresh = model(nt)
    fresh.load_state_dict(nt.load(_buffer(nt, src.state_dict())))
    src.eval(), fresh.eval()
    assert_close(fresh(nt.tensor(x, dtype=nt.float32)), src(nt.tensor(x, dtype=nt.float32)))

    theirs = model(torch).eval()
    mine = model(nt).eval()
    mine.load_state_dict(nt.load(_buffer(torch, theirs.state_dict())))
    ref = theirs(torch.tensor(x, dtype=torch.float32)).detach().numpy()
    assert_close(mine(nt.tensor(x, dtype=nt.float32)), ref, rtol=1e-6, atol=1e-6)


def test_optimizer_state_dict_layout():
    """An optimizer state dict as torch.optim.Adam writes one (int keys, tensors, tuples),
    built by hand: constructing a torch optimizer costs seconds of imports."""

    def state_dict(lib):
        group = {
            "lr": 0.1,
            "betas": (0.9, 0.999),
            "eps": 1e-08,
            "weight_decay": 0,
            "amsgrad": False,
            "maximize": False,
            "foreach": None,
            "params": [0, 1],
        }
        moments = {
            "step": lib.tensor(1.0),
            "exp_avg": lib.tensor(arr(3)),
            "exp_avg_sq": lib.tensor(arr(3) ** 2),
        }
        return {"state": {0: moments, 1: dict(moments)}, "param_groups": [group]}

    for writer in (nt, torch):
        got = nt.load(_buffer(writer, state_dict(writer)))
        _same(got, state_dict(nt))
        assert got["state"][0]["step"] is got["state"][1]["step"]
    _same(torch.load(_buffer(nt, state_dict(nt))), state_dict(torch))


def test_torch_legacy_format():
    x = torch.tensor(arr(3, 4))
    buf = io.BytesIO()
    torch.save(
        {"x": x, "t": x.t(), "i": torch.arange(3)}, buf, _use_new_zipfile_serialization=False
    )
    buf.seek(0)
    got = nt.load(buf)
    _same(got, {"x": x, "t": x.t(), "i": torch.arange(3)})
    got["x"].mul_(2.0)
    assert_close(got["t"], 2 * x.t().numpy())


def test_map_location():
    buf = _buffer(nt, {"x": nt.tensor(arr(2))})
    for where in ("cpu", nt.device("cpu"), {"cpu": "cpu"}, lambda storage, loc: storage):
        buf.seek(0)
        assert_close(nt.load(buf, map_location=where)["x"], arr(2))
    buf.seek(0)
    got = nt.load(buf, map_location=lambda storage, loc: storage * 2)
    assert_close(got["x"], 2 * arr(2))
    if nt.cuda.is_available():
        return
    with pytest.raises(BaseException) as want:
        nt.ones(1).to("cuda")
    for where in ("cuda", {"cpu": "cuda:0"}):
        buf.seek(0)
        with pytest.raises(type(want.value), match=str(want.value)):
            nt.load(buf, map_location=where)


class _Evil:
    """Pickles as a call of ``fn(*args)``: what a malicious checkpoint holds."""

    def __init__(self, fn, *args):
        self.fn, self.args = fn, args

    def __reduce__(self):
        return self.fn, self.args


def _write_marker(path):
    open(path, "w").close()


def _evil_files(marker):
    payloads = [_Evil(os.system, f"touch {marker}"), _Evil(_write_marker, str(marker))]
    for payload in payloads:
        obj = {"weights": torch.zeros(2), "payload": payload}
        plain = [io.BytesIO(pickle.dumps(payload, protocol=p)) for p in (0, 2, 4)]
        mine = io.BytesIO()
        nt.save({**obj, "weights": nt.zeros(2)}, mine, pickle_protocol=4)  # STACK_GLOBAL
        mine.seek(0)
        yield _buffer(torch, obj), _buffer(nt, {**obj, "weights": nt.zeros(2)}), mine, *plain


def test_code_executing_pickle_is_refused(tmp_path):
    marker = tmp_path / "marker"
    for files in _evil_files(marker):
        for buf in files:
            with pytest.raises(pickle.UnpicklingError, match="Weights only load failed") as e:
                nt.load(buf)
            assert "GLOBAL" in str(e.value)
            assert not marker.exists()
    buf = next(_evil_files(marker))[0]
    with pytest.raises(pickle.UnpicklingError, match="posix.system whose module posix is blocked"):
        nt.load(buf)
    with pytest.raises(pickle.UnpicklingError, match=r"GLOBAL .*_write_marker was not an allowed"):
        nt.load(_buffer(nt, _Evil(_write_marker, str(marker))))
    assert not marker.exists()
    with pytest.raises(
        RuntimeError, match="Can not safely load weights when explicit pickle_module"
    ):
        nt.load(_buffer(nt, 1), pickle_module=pickle)


def test_weights_only_false_is_full_pickle():
    """Only when asked: a trusted file's own objects (a function, a whole module) load."""
    got = nt.load(_buffer(nt, {"f": _write_marker, "x": nt.ones(2)}), weights_only=False)
    assert got["f"] is _write_marker and isinstance(got["x"], nt.Tensor)
    model = nt.nn.Sequential(nt.nn.Linear(3, 2), nt.nn.ReLU())
    copy = nt.load(_buffer(nt, model), weights_only=False)
    x = nt.tensor(arr(2, 3), dtype=nt.float32)
    assert isinstance(copy[0], nt.nn.Linear)
    assert_close(copy(x), model(x))
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL numtorch.nn.modules"):
        nt.load(_buffer(nt, model))


def _rewrite(buf: io.BytesIO, edit) -> io.BytesIO:
    """A copy of a checkpoint with ``edit(name, data) -> data`` applied to every record."""
    with zipfile.ZipFile(buf) as zf:
        records = {n: zf.read(n) for n in zf.namelist()}
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for name, data in records.items():
            zf.writestr(name, edit(name, data))
    out.seek(0)
    return out


def test_storage_out_of_bounds_is_refused():
    """A file whose tensor addresses memory past its storage fails instead of reading it."""
    buf = _buffer(torch, torch.zeros(4))
    short = _rewrite(buf, lambda name, data: data[:8] if name.endswith("data/0") else data)
    with pytest.raises(RuntimeError, match="holds 8 bytes, expected 16"):
        nt.load(short)
    # the size tuple (4,) is BININT1 4 then TUPLE1: ask for 64 elements of a 4-element storage
    buf.seek(0)
    big = _rewrite(buf, lambda name, data: data.replace(b"K\x04\x85", b"K\x40\x85", 1))
    with pytest.raises(RuntimeError, match="out of bounds for storage of size 16"):
        nt.load(big)


def test_saved_location_and_byte_order():
    """A checkpoint saved from a GPU needs map_location on a machine without one; a
    big-endian one is byte-swapped."""
    x = nt.tensor(arr(3))
    cpu = b"X\x03\x00\x00\x00cpu"
    gpu = _rewrite(_buffer(nt, x), lambda n, d: d.replace(cpu, b"X\x06\x00\x00\x00cuda:0"))
    assert_close(nt.load(gpu, map_location="cpu"), x)
    gpu.seek(0)
    assert_close(nt.load(gpu, map_location={"cuda:0": "cpu"}), x)
    if not nt.cuda.is_available():
        gpu.seek(0)
        with pytest.raises(RuntimeError, match="torch.cuda.is_available\\(\\) is False"):
            nt.load(gpu)

    def big_endian(name, data):
        if name.endswith("byteorder"):
            return b"big"
        return np.frombuffer(data, "<f8").astype(">f8").tobytes() if "data/" in name else data

    assert_close(nt.load(_rewrite(_buffer(nt, x), big_endian)), x)


def test_training_checkpoint_round_trip(tmp_path):
    """Model, optimizer and scheduler state saved mid-run and loaded into fresh objects:
    the resumed run continues exactly as the uninterrupted one."""
    import numpy as np

    rng = np.random.default_rng(0)
    data = [
        (nt.tensor(rng.standard_normal((4, 3))), nt.tensor(rng.standard_normal((4, 2))))
        for _ in range(6)
    ]

    def make():
        nt.manual_seed(0)
        model = nt.nn.Linear(3, 2).double()
        opt = nt.optim.Adam(model.parameters(), lr=0.05)
        sched = nt.optim.lr_scheduler.MultiStepLR(opt, [2, 4], gamma=0.5)
        return model, opt, sched

    def train(model, opt, sched, batches):
        for x, y in batches:
            opt.zero_grad()
            nt.nn.functional.mse_loss(model(x), y).backward()
            opt.step()
            sched.step()

    whole = make()
    train(*whole, data)
    first = make()
    train(*first, data[:3])
    path = tmp_path / "ckpt.pt"
    nt.save({k: o.state_dict() for k, o in zip(("model", "opt", "sched"), first)}, path)
    resumed = make()
    state = nt.load(path)
    for k, o in zip(("model", "opt", "sched"), resumed):
        o.load_state_dict(state[k])
    train(*resumed, data[3:])
    for a, b in zip(whole[0].parameters(), resumed[0].parameters()):
        assert nt.equal(a, b)
    assert whole[2].get_last_lr() == resumed[2].get_last_lr()


@pytest.mark.parametrize("protocol", [1, 2, 3, 4, 5])
def test_every_pickle_protocol_cross_loads(protocol):
    """The C pickler's memo starts with torch's globals; each protocol's stream must give
    both loaders the same tensors (shared ones shared), dtypes, devices and sizes."""
    w = nt.tensor(_values("float32"))
    obj = {
        "w": w,
        "again": w,
        "view": w[1],
        "half": nt.tensor(_values("float16")),
        "dtypes": [nt.float64, nt.int8, nt.complex64],
        "device": nt.device("cpu"),
        "size": nt.Size([2, 3]),
        "param": nt.nn.Parameter(nt.tensor(_values("float64"))),
    }
    buf = io.BytesIO()
    nt.save(obj, buf, pickle_protocol=protocol)
    for lib in (nt, torch):
        buf.seek(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch's note on a protocol other than 2
            # torch's weights-only unpickler reads protocols 2 and 3 only (its own files too)
            got = lib.load(buf, weights_only=lib is nt or protocol in (2, 3))
        assert got["again"] is got["w"]
        np.testing.assert_array_equal(got["view"].numpy(), _values("float32")[1])
        got["w"].add_(1)  # the view shares the storage
        np.testing.assert_array_equal(got["view"].numpy(), _values("float32")[1] + 1)
        np.testing.assert_array_equal(got["half"].numpy(), _values("float16"))
        assert [str(d) for d in got["dtypes"]] == ["torch.float64", "torch.int8", "torch.complex64"]
        assert (str(got["device"]), tuple(got["size"])) == ("cpu", (2, 3))
        assert isinstance(got["param"], PARAMS) and got["param"].requires_grad
        np.testing.assert_array_equal(got["param"].detach().numpy(), _values("float64"))
