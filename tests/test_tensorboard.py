"""numtorch.utils.tensorboard.SummaryWriter against torch's: the same calls, read back with
TensorBoard's EventAccumulator, give the same values."""

import os

import numpy as np
import pytest
import torch
import torch.utils.tensorboard as ttb
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

import numtorch as nt
import numtorch.utils.tensorboard as ntb

IMG = np.random.default_rng(0).random((3, 4, 5))
BATCH = np.random.default_rng(1).random((3, 1, 4, 5))


def _write(lib, writer_cls, logdir):
    with writer_cls(logdir) as w:
        for step in range(3):
            w.add_scalar("loss", lib.tensor(1.0 / (step + 1)), step)
        w.add_scalar("plain", 2.5, 0)
        w.add_scalars("run", {"a": 1.0, "b": lib.tensor(2.0)}, 4)
        w.add_histogram("weights", lib.tensor(np.linspace(-3, 5, 101)), 1)
        w.add_histogram("numpy_bins", lib.tensor(np.arange(10.0)), 1, bins=4)
        w.add_image("chw", lib.tensor(IMG), 2)
        w.add_image("hwc", lib.tensor(IMG.transpose(1, 2, 0)), 2, dataformats="HWC")
        w.add_images("batch", lib.tensor(BATCH), 3)
        w.add_text("note", "hello *world*", 5)
        w.add_hparams({"lr": 0.1, "opt": "sgd", "deep": True}, {"acc": 0.9}, run_name="hp")


def _acc(path):
    acc = EventAccumulator(str(path), size_guidance={"tensors": 0, "images": 0})
    acc.Reload()
    return acc


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    root = tmp_path_factory.mktemp("tb")
    _write(nt, ntb.SummaryWriter, root / "nt")
    _write(torch, ttb.SummaryWriter, root / "torch")
    return root / "nt", root / "torch"


def test_scalars(both):
    ours, theirs = (_acc(p) for p in both)
    for tag in ("loss", "plain"):
        got = [(e.step, e.value) for e in ours.Scalars(tag)]
        assert got == [(e.step, e.value) for e in theirs.Scalars(tag)]
    assert [e.value for e in ours.Scalars("loss")] == pytest.approx([1, 0.5, 1 / 3])


def test_add_scalars_writes_one_run_per_tag(both):
    ours, theirs = both

    def runs(d):
        return sorted(n for n in os.listdir(d) if not n.startswith("events."))

    assert runs(ours) == runs(theirs) == ["hp", "run_a", "run_b"]
    for run in ("run_a", "run_b"):
        got = [(e.step, e.value) for e in _acc(ours / run).Scalars("run")]
        assert got == [(e.step, e.value) for e in _acc(theirs / run).Scalars("run")]


@pytest.mark.parametrize("tag", ["weights", "numpy_bins"])
def test_histograms(both, tag):
    ours, theirs = (_acc(p).Histograms(tag)[0] for p in both)
    assert ours.step == theirs.step
    assert ours.histogram_value == theirs.histogram_value


@pytest.mark.parametrize("tag", ["chw", "hwc", "batch"])
def test_images(both, tag):
    ours, theirs = (_acc(p).Images(tag)[0] for p in both)
    assert (ours.step, ours.width, ours.height) == (theirs.step, theirs.width, theirs.height)
    assert ours.encoded_image_string == theirs.encoded_image_string


def test_text(both):
    ours, theirs = (_acc(p).Tensors("note/text_summary")[0] for p in both)
    assert ours.step == theirs.step == 5
    assert ours.tensor_proto.string_val == theirs.tensor_proto.string_val == [b"hello *world*"]


def test_hparams(both):
    ours, theirs = (_acc(p / "hp") for p in both)
    assert ours.Tags()["tensors"] == theirs.Tags()["tensors"]
    assert [e.value for e in ours.Scalars("acc")] == [e.value for e in theirs.Scalars("acc")]
    plugin = "hparams"
    assert ours.PluginTagToContent(plugin) == theirs.PluginTagToContent(plugin)


def test_figure_is_an_image(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(2, 1), dpi=20)
    with ntb.SummaryWriter(tmp_path) as w:
        w.add_figure("fig", fig, 0)
    image = _acc(tmp_path).Images("fig")[0]
    assert (image.width, image.height) == (40, 20)


def test_add_graph_is_not_available(tmp_path):
    with ntb.SummaryWriter(tmp_path) as w, pytest.raises(NotImplementedError, match="jit"):
        w.add_graph(nt.nn.Linear(2, 2), nt.ones(1, 2))


def test_bad_scalar_and_image_texts(tmp_path):
    with ntb.SummaryWriter(tmp_path) as w:
        with pytest.raises(AssertionError, match="one element"):
            w.add_scalar("x", nt.ones(2))
        with pytest.raises(AssertionError, match="size of input tensor and input format"):
            w.add_image("x", nt.ones(2, 2))
