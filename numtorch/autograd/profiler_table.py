"""The profiler's summary table, in PyTorch's layout: a Name column, the CPU time columns,
the memory columns when memory was profiled, the call count, input shapes and source
locations when recorded, and the "Self CPU time total" footer."""

from __future__ import annotations


def _format_time(time_us: float) -> str:
    """PyTorch's time text: seconds, milliseconds or microseconds with three decimals."""
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def _format_time_share(time_us: float, total_us: float) -> str:
    if total_us == 0:
        return "NaN"
    return f"{time_us * 100.0 / total_us:.2f}%"


def _format_memory(nbytes: int) -> str:
    """PyTorch's memory text: B, KB, MB or GB (powers of 1024)."""
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{nbytes} B"


_COLUMN = 12  # the width of every numeric column
_SPACING = 2
_UNITS = {"s": 1e6, "ms": 1e3, "us": 1.0}


def _time(us: float, default: str, unit: str | None) -> str:
    """A time in the asked unit, else in the event's own text."""
    if unit in _UNITS:
        return f"{us / _UNITS[unit]:.3f}{unit}"
    return default


def _trim(text: str, width: int) -> str:
    """A source location cut to ``width`` from the left, marked with ``...``."""
    if len(text) > width:
        text = text[len(text) - width :]
        if len(text) > 3:
            text = "..." + text[3:]
    return text


def _clip(name: str, width: int | None) -> str:
    if width is not None and len(name) >= width - 3:
        return name[: width - 3] + "..."
    return name


class _Layout:
    """The columns' headers, widths and alignment."""

    def __init__(self) -> None:
        self.headers: list[str] = []
        self.fmt = ""
        self.sep = ""
        self.width = -_SPACING

    def add(self, header: str, width: int, align: str = ">") -> None:
        self.headers.append(header)
        self.fmt += "{: " + align + str(width) + "}" + " " * _SPACING
        self.sep += "-" * width + " " * _SPACING
        self.width += width + _SPACING


def build_table(
    events,
    sort_by: str | None = None,
    header: str | None = None,
    row_limit: int = 100,
    max_src_column_width: int | None = 75,
    max_name_column_width: int | None = 55,
    max_shapes_column_width: int | None = 80,
    profile_memory: bool = False,
    top_level_events_only: bool = False,
    time_unit: str | None = None,
) -> str:
    """The table of ``events`` (FunctionEvents or their averages), sorted by the attribute
    ``sort_by`` (largest first), at most ``row_limit`` rows."""
    if len(events) == 0:
        return ""
    if sort_by is not None:
        attr = sort_by.replace("cuda", "device").replace("xpu", "device")
        events = sorted(events, key=lambda e: getattr(e, attr), reverse=True)
    has_shapes = any(e.input_shapes for e in events)
    has_overload = any(e.overload_name for e in events)
    stacks = [e.stack for e in events if e.stack]
    name_width = max(len(e.key) for e in events) + 4
    if max_name_column_width is not None:
        name_width = min(name_width, max_name_column_width)
    shapes_width = max(len(str(e.input_shapes)) for e in events) + 4
    if max_shapes_column_width is not None:
        shapes_width = min(shapes_width, max_shapes_column_width)

    cols = _Layout()
    cols.add("Name", name_width)
    if has_overload:
        cols.add("Overload Name", name_width)
    for h in ("Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"):
        cols.add(h, _COLUMN)
    if profile_memory:
        cols.add("CPU Mem", _COLUMN)
        cols.add("Self CPU Mem", _COLUMN)
    cols.add("# of Calls", _COLUMN)
    if has_shapes:
        cols.add("Input Shapes", shapes_width)
    src_width = 0
    if stacks:
        src_width = max(len(s) for st in stacks for s in st) + 4
        if max_src_column_width is not None:
            src_width = min(src_width, max_src_column_width)
        cols.add("Source Location", src_width, "<")

    total = sum(e.self_cpu_time_total for e in events)
    lines = []
    if header is not None:
        lines += ["=" * cols.width, header]
    if top_level_events_only:
        lines += ["=" * cols.width, "This report only display top-level ops statistics"]
    lines += [cols.sep, cols.fmt.format(*cols.headers), cols.sep]
    rows = 0
    for e in events:
        if rows == row_limit:
            break
        if top_level_events_only and e.cpu_parent is not None:
            continue
        rows += 1
        row = [_clip(e.key, max_name_column_width)]
        if has_overload:
            row.append(_clip(e.overload_name, max_name_column_width))
        e.self_cpu_percent = _format_time_share(e.self_cpu_time_total, total)
        e.total_cpu_percent = 0 if e.is_async else _format_time_share(e.cpu_time_total, total)
        row += [
            e.self_cpu_percent,
            _time(e.self_cpu_time_total, e.self_cpu_time_total_str, time_unit),
            e.total_cpu_percent,
            _time(e.cpu_time_total, e.cpu_time_total_str, time_unit),
            _time(e.cpu_time, e.cpu_time_str, time_unit),
        ]
        if profile_memory:
            row += [_format_memory(e.cpu_memory_usage), _format_memory(e.self_cpu_memory_usage)]
        row.append(e.count)
        if has_shapes:
            row.append(str(e.input_shapes)[:shapes_width])
        if stacks:
            row.append(_trim(e.stack[0], src_width) if e.stack else "")
        lines.append(cols.fmt.format(*row))
        if stacks:
            blank = [""] * (len(cols.headers) - 1)
            lines += [cols.fmt.format(*blank, _trim(s, src_width)) for s in e.stack[1:]]
            lines.append(cols.fmt.format(*blank, ""))
    lines.append(cols.sep)
    lines.append(f"Self CPU time total: {_time(total, _format_time(total), time_unit)}")
    return "".join(line + "\n" for line in lines)
