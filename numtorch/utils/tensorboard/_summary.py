"""Summary protobufs for one value each: scalar, histogram, image, text, hparams."""

from __future__ import annotations

import io

import numpy as np
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData

from ..._core.tensor import Tensor


def make_np(x) -> np.ndarray:
    """x (a tensor, an array or a number) as a NumPy array."""
    if isinstance(x, Tensor):
        return x.detach().numpy(force=True)
    if isinstance(x, np.ndarray):
        return x
    if np.isscalar(x):
        return np.array([x])
    raise NotImplementedError(f"Got {type(x)}, but numpy array or torch tensor are expected.")


def default_bins() -> list[float]:
    """TensorFlow's histogram bucket edges: +-1e-12 growing by 10% up to 1e20, and 0."""
    edges, v = [], 1e-12
    while v < 1e20:
        edges.append(v)
        v *= 1.1
    return [-e for e in reversed(edges)] + [0] + edges


def scalar(tag: str, value, new_style: bool = False, double_precision: bool = False) -> Summary:
    v = make_np(value).squeeze()
    if v.ndim != 0:
        raise AssertionError(
            f"Tensor should contain one element (0 dimensions). Was given size: {v.size} and "
            f"{v.ndim} dimensions."
        )
    v = float(v)
    if not new_style:
        return Summary(value=[Summary.Value(tag=tag, simple_value=v)])
    tensor = TensorProto(
        dtype="DT_DOUBLE" if double_precision else "DT_FLOAT",
        double_val=[v] if double_precision else [],
        float_val=[] if double_precision else [v],
        tensor_shape=TensorShapeProto(),
    )
    meta = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="scalars"))
    return Summary(value=[Summary.Value(tag=tag, tensor=tensor, metadata=meta)])


def histogram(tag: str, values, bins, max_bins: int | None = None) -> Summary:
    values = make_np(values).astype(float).reshape(-1)
    if values.size == 0:
        raise ValueError("The input has no element.")
    counts, limits = np.histogram(values, bins=bins)
    if max_bins is not None and len(counts) > max_bins:
        step = len(counts) // max_bins
        counts = np.pad(counts, (0, -len(counts) % step)).reshape(-1, step).sum(-1)
        limits = np.append(limits[:-1:step], limits[-1])
    nonzero = np.flatnonzero(counts)
    first, last = int(nonzero[0]), int(nonzero[-1])
    # bucket_limit[i] is bucket i's right edge; the first bucket (everything below the first
    # filled one) is empty, as TensorFlow's histograms have it
    hist = HistogramProto(
        min=values.min(),
        max=values.max(),
        num=len(values),
        sum=values.sum(),
        sum_squares=values.dot(values),
        bucket_limit=limits[first : last + 2].tolist(),
        bucket=[0, *counts[first : last + 1].tolist()],
    )
    return Summary(value=[Summary.Value(tag=tag, histo=hist)])


def _grid(images: np.ndarray, ncols: int = 8) -> np.ndarray:
    """NCHW images (1 or 3 channels) tiled row by row into one 3HW image, ncols across."""
    if images.shape[1] == 1:
        images = np.repeat(images, 3, axis=1)
    if images.ndim != 4 or images.shape[1] != 3:
        raise AssertionError("Input should be a 4D numpy array with 3 channels")
    n, _, h, w = images.shape
    ncols = min(n, ncols)
    nrows = -(-n // ncols)
    canvas = np.zeros((3, h * nrows, w * ncols), dtype=images.dtype)
    for i in range(n):
        y, x = divmod(i, ncols)
        canvas[:, y * h : (y + 1) * h, x * w : (x + 1) * w] = images[i]
    return canvas


def to_hwc(array: np.ndarray, dataformats: str) -> np.ndarray:
    """An image (or a batch, tiled) in the layout dataformats names, as HWC with 3 channels
    (1-channel and HW images repeated to 3)."""
    if len(set(dataformats)) != len(dataformats):
        raise AssertionError(
            f"You can not use the same dimension shorthand twice. input_format: {dataformats}"
        )
    if array.ndim != len(dataformats):
        raise AssertionError(
            "size of input tensor and input format are different. tensor shape: "
            f"{array.shape}, input_format: {dataformats}"
        )
    fmt = dataformats.upper()
    if len(fmt) == 4:
        return _grid(array.transpose([fmt.find(c) for c in "NCHW"])).transpose(1, 2, 0)
    if len(fmt) == 3:
        hwc = array.transpose([fmt.find(c) for c in "HWC"])
        return np.repeat(hwc, 3, axis=2) if hwc.shape[2] == 1 else hwc
    return np.stack([array.transpose([fmt.find(c) for c in "HW"])] * 3, axis=2)


def image(tag: str, tensor, rescale: float = 1, dataformats: str = "NCHW") -> Summary:
    """An image summary; float values are taken in [0, 1], uint8 ones in [0, 255]."""
    from PIL import Image

    hwc = to_hwc(make_np(tensor), dataformats)
    scale = 1 if hwc.dtype == np.uint8 else 255
    hwc = (hwc.astype(np.float32) * scale).clip(0, 255).astype(np.uint8)
    height, width, channels = hwc.shape
    picture = Image.fromarray(hwc).resize(
        (int(width * rescale), int(height * rescale)), Image.Resampling.LANCZOS
    )
    out = io.BytesIO()
    picture.save(out, format="PNG")
    proto = Summary.Image(
        height=height, width=width, colorspace=channels, encoded_image_string=out.getvalue()
    )
    return Summary(value=[Summary.Value(tag=tag, image=proto)])


def text(tag: str, text_string: str) -> Summary:
    plugin = SummaryMetadata.PluginData(
        plugin_name="text", content=TextPluginData(version=0).SerializeToString()
    )
    tensor = TensorProto(
        dtype="DT_STRING",
        string_val=[text_string.encode("utf_8")],
        tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]),
    )
    meta = SummaryMetadata(plugin_data=plugin)
    return Summary(value=[Summary.Value(tag=tag + "/text_summary", metadata=meta, tensor=tensor)])


def _plugin_summary(tag: str, **data) -> Summary:
    """A summary of the hparams plugin holding one field of its plugin data."""
    from tensorboard.plugins.hparams.plugin_data_pb2 import HParamsPluginData

    content = HParamsPluginData(version=0, **data).SerializeToString()
    plugin = SummaryMetadata.PluginData(plugin_name="hparams", content=content)
    return Summary(value=[Summary.Value(tag=tag, metadata=SummaryMetadata(plugin_data=plugin))])


def hparams(hparam_dict: dict, metric_dict: dict, domain_discrete: dict | None = None):
    """(experiment, session start, session end) summaries of the hparams plugin. As in
    PyTorch, a bool is an int: a FLOAT64 hparam."""
    from google.protobuf import struct_pb2
    from tensorboard.plugins.hparams import api_pb2, plugin_data_pb2

    if not isinstance(hparam_dict, dict) or not isinstance(metric_dict, dict):
        raise TypeError("parameter: hparam_dict and metric_dict should be dictionary.")
    domain_discrete = domain_discrete or {}
    kinds = (
        (float, "number_value", "DATA_TYPE_FLOAT64"),
        (str, "string_value", "DATA_TYPE_STRING"),
    )
    start = plugin_data_pb2.SessionStartInfo()
    infos = []
    for name, v in hparam_dict.items():
        if v is None:
            continue
        if isinstance(v, Tensor):
            v = float(make_np(v).reshape(-1)[0])
        if isinstance(v, int):
            v = float(v) if not isinstance(v, bool) else v
        kind = next((k for k in kinds if isinstance(v, k[0]) or isinstance(v, bool)), None)
        if kind is None:
            raise ValueError("value should be one of int, float, str, bool, or torch.Tensor")
        _, field, type_name = kind
        setattr(start.hparams[name], field, v)
        domain = None
        if name in domain_discrete:
            domain = struct_pb2.ListValue(
                values=[struct_pb2.Value(**{field: d}) for d in domain_discrete[name]]
            )
        infos.append(
            api_pb2.HParamInfo(
                name=name, type=api_pb2.DataType.Value(type_name), domain_discrete=domain
            )
        )
    metrics = [api_pb2.MetricInfo(name=api_pb2.MetricName(tag=k)) for k in metric_dict]
    experiment = api_pb2.Experiment(hparam_infos=infos, metric_infos=metrics)
    end = plugin_data_pb2.SessionEndInfo(status=api_pb2.Status.Value("STATUS_SUCCESS"))
    return (
        _plugin_summary("_hparams_/experiment", experiment=experiment),
        _plugin_summary("_hparams_/session_start_info", session_start_info=start),
        _plugin_summary("_hparams_/session_end_info", session_end_info=end),
    )
