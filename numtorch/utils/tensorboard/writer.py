"""SummaryWriter: logs scalars, histograms, images, text and hparams to TensorBoard event
files under a log directory."""

from __future__ import annotations

import os
import socket
import time
from datetime import datetime
from typing import Any

from tensorboard.compat.proto.event_pb2 import Event, SessionLog
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from . import _summary


class FileWriter:
    """Writes Summary protobufs as events to one event file in log_dir."""

    def __init__(
        self, log_dir: str, max_queue: int = 10, flush_secs: int = 120, filename_suffix: str = ""
    ) -> None:
        self.event_writer = EventFileWriter(str(log_dir), max_queue, flush_secs, filename_suffix)

    def get_logdir(self) -> str:
        return self.event_writer.get_logdir()

    def add_event(self, event: Event, step: int | None = None, walltime: float | None = None):
        event.wall_time = time.time() if walltime is None else walltime
        if step is not None:
            event.step = int(step)
        self.event_writer.add_event(event)

    def add_summary(self, summary, global_step: int | None = None, walltime=None) -> None:
        self.add_event(Event(summary=summary), global_step, walltime)

    def flush(self) -> None:
        self.event_writer.flush()

    def close(self) -> None:
        self.event_writer.close()

    def reopen(self) -> None:
        self.event_writer.reopen()


class SummaryWriter:
    """Writes entries to event files in log_dir for TensorBoard to read (default:
    ``runs/<date>_<host><comment>``)."""

    def __init__(
        self,
        log_dir: str | None = None,
        comment: str = "",
        purge_step: int | None = None,
        max_queue: int = 10,
        flush_secs: int = 120,
        filename_suffix: str = "",
    ) -> None:
        if not log_dir:
            now = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", now + "_" + socket.gethostname() + comment)
        self.log_dir = str(log_dir)
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer: FileWriter | None = None
        self.all_writers: dict[str, FileWriter] | None = None
        self.default_bins = _summary.default_bins()
        self._get_file_writer()

    def _get_file_writer(self) -> FileWriter:
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(
                self.log_dir, self.max_queue, self.flush_secs, self.filename_suffix
            )
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                start = Event(session_log=SessionLog(status=SessionLog.START))
                self.file_writer.add_event(start, self.purge_step)
                self.purge_step = None
        return self.file_writer

    def get_logdir(self) -> str:
        return self.log_dir

    def _add(self, summary, global_step, walltime) -> None:
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_scalar(
        self,
        tag: str,
        scalar_value: Any,
        global_step: int | None = None,
        walltime: float | None = None,
        new_style: bool = False,
        double_precision: bool = False,
    ) -> None:
        """One scalar value of the series tag."""
        self._add(
            _summary.scalar(tag, scalar_value, new_style, double_precision), global_step, walltime
        )

    def add_scalars(
        self,
        main_tag: str,
        tag_scalar_dict: dict[str, Any],
        global_step: int | None = None,
        walltime: float | None = None,
    ) -> None:
        """Several scalars under main_tag, each in a run of its own (a subdirectory
        ``<main_tag>_<tag>`` of log_dir)."""
        walltime = time.time() if walltime is None else walltime
        logdir = self._get_file_writer().get_logdir()
        for tag, value in tag_scalar_dict.items():
            path = logdir + "/" + main_tag.replace("/", "_") + "_" + tag
            writer = self.all_writers.get(path)
            if writer is None:
                writer = FileWriter(path, self.max_queue, self.flush_secs, self.filename_suffix)
                self.all_writers[path] = writer
            writer.add_summary(_summary.scalar(main_tag, value), global_step, walltime)

    def add_histogram(
        self,
        tag: str,
        values: Any,
        global_step: int | None = None,
        bins: Any = "tensorflow",
        walltime: float | None = None,
        max_bins: int | None = None,
    ) -> None:
        """A histogram of values (bins: NumPy's, or 'tensorflow' for TensorFlow's buckets)."""
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        self._add(_summary.histogram(tag, values, bins, max_bins), global_step, walltime)

    def add_image(
        self,
        tag: str,
        img_tensor: Any,
        global_step: int | None = None,
        walltime: float | None = None,
        dataformats: str = "CHW",
    ) -> None:
        """One image (floats in [0, 1] or uint8) in the layout dataformats names."""
        self._add(_summary.image(tag, img_tensor, dataformats=dataformats), global_step, walltime)

    def add_images(
        self,
        tag: str,
        img_tensor: Any,
        global_step: int | None = None,
        walltime: float | None = None,
        dataformats: str = "NCHW",
    ) -> None:
        """A batch of images, tiled into one."""
        self._add(_summary.image(tag, img_tensor, dataformats=dataformats), global_step, walltime)

    def add_figure(
        self,
        tag: str,
        figure: Any,
        global_step: int | None = None,
        close: bool = True,
        walltime: float | None = None,
    ) -> None:
        """A matplotlib figure (or a list of them) rendered as an image (images)."""
        if isinstance(figure, list):
            import numpy as np

            images = np.stack([_render(f, close) for f in figure])
            self.add_images(tag, images, global_step, walltime, dataformats="NCHW")
        else:
            self.add_image(tag, _render(figure, close), global_step, walltime, dataformats="CHW")

    def add_text(
        self,
        tag: str,
        text_string: str,
        global_step: int | None = None,
        walltime: float | None = None,
    ) -> None:
        """A text entry (markdown) of the series tag."""
        self._add(_summary.text(tag, text_string), global_step, walltime)

    def add_hparams(
        self,
        hparam_dict: dict,
        metric_dict: dict,
        hparam_domain_discrete: dict | None = None,
        run_name: str | None = None,
        global_step: int | None = None,
    ) -> None:
        """Hyperparameters and their metrics, in a run of their own (run_name, default the
        time) under log_dir, for the HPARAMS tab."""
        exp, start, end = _summary.hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        logdir = os.path.join(self._get_file_writer().get_logdir(), run_name or str(time.time()))
        with SummaryWriter(log_dir=logdir) as w:
            for summary in (exp, start, end):
                w.file_writer.add_summary(summary, global_step)
            for k, v in metric_dict.items():
                w.add_scalar(k, v, global_step)

    def add_graph(
        self,
        model: Any,
        input_to_model: Any = None,
        verbose: bool = False,
        use_strict_trace: bool = True,
    ) -> None:
        """Not available: PyTorch draws the graph from a TorchScript trace, which numtorch
        does not have."""
        raise NotImplementedError(
            "SummaryWriter.add_graph needs torch.jit.trace, which numtorch does not provide"
        )

    def flush(self) -> None:
        """Write pending events to disk."""
        for writer in (self.all_writers or {}).values():
            writer.flush()

    def close(self) -> None:
        """Flush and close every event file."""
        for writer in (self.all_writers or {}).values():
            writer.flush()
            writer.close()
        self.file_writer = self.all_writers = None

    def __enter__(self) -> SummaryWriter:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _render(figure, close: bool):
    """A matplotlib figure as a CHW uint8 array."""
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    rgba = np.asarray(canvas.buffer_rgba(), dtype=np.uint8)
    if close:
        import matplotlib.pyplot as plt

        plt.close(figure)
    return rgba[:, :, :3].transpose(2, 0, 1)
