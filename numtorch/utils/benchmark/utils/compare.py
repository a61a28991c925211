"""Compare: many Measurements as one table per label, laid out as PyTorch's."""

from __future__ import annotations

import enum
import math

from .common import Measurement, ordered_unique, select_unit, trim_sigfig, unit_to_english

__all__ = ["Colorize", "Compare"]

BEST = "\033[92m"
GOOD = "\033[34m"
BAD = "\033[2m\033[91m"
VERY_BAD = "\033[31m"
BOLD = "\033[1m"
TERMINATE = "\033[0m"


class Colorize(enum.Enum):
    NONE = "none"
    COLUMNWISE = "columnwise"
    ROWWISE = "rowwise"


def _paint(cell: str, value: float, best: float) -> str:
    """A cell coloured by how far its median is from the best one."""
    if value <= best * 1.01 or value <= best + 100e-9:
        return BEST + BOLD + cell + TERMINATE * 2
    if value <= best * 1.1:
        return GOOD + BOLD + cell + TERMINATE * 2
    if value >= best * 5:
        return VERY_BAD + BOLD + cell + TERMINATE * 2
    if value >= best * 2:
        return BAD + cell + TERMINATE * 2
    return cell


class _Format:
    """How one column prints its numbers: one width and one count of decimals for all."""

    def __init__(self, cells: list[Measurement], scale: float, trim: bool, warn: bool) -> None:
        self.trim = trim
        self.warn = warn and any(m.has_warnings for m in cells)
        digits = [(m, math.ceil(math.log10(m.median / scale))) for m in cells]
        decimals = min(max(m.significant_figures - d, 0) for m, d in digits) if trim else 1
        width = max(d for _, d in digits) + decimals + (1 if decimals else 0)
        self.template = f"{{:>{width}.{decimals}f}}{{:>{7 if self.warn else 0}}}"

    def cell(self, m: Measurement | None, scale: float) -> str:
        if m is None:
            return " " * len(self.template.format(1.0, ""))
        value = m.median / scale
        if self.trim:
            value = trim_sigfig(value, m.significant_figures)
        spread = m.iqr / m.median if m.has_warnings else None
        note = f" (! {spread * 100:.0f}%)" if self.warn and spread is not None else ""
        return self.template.format(value, note)


class _Table:
    """The results of one label: rows (threads, env, sub-label or stmt) by columns
    (descriptions), grouped by thread count."""

    def __init__(self, results: list[Measurement], colorize, trim: bool, warn: bool) -> None:
        if len({r.label for r in results}) != 1:
            raise AssertionError("All results must share the same label")
        self.results, self.colorize, self.warn = results, colorize, warn
        self.label = results[0].label
        self.unit, self.scale = select_unit(min(r.median for r in results))
        rows = ordered_unique((r.num_threads, r.env, r.as_row_name) for r in results)
        rows.sort(key=lambda k: (k[0], k[1] is not None, k[1] or ""))  # stable: stmt order kept
        self.rows = rows
        self.cols = ordered_unique(r.description for r in results)
        at = {(self._row(r), r.description): r for r in results}
        self.grid = [[at.get((k, c)) for c in self.cols] for k in rows]
        self.formats = [
            _Format([g[j] for g in self.grid if g[j] is not None], self.scale, trim, warn)
            for j in range(len(self.cols))
        ]

    @staticmethod
    def _row(r: Measurement) -> tuple:
        return r.num_threads, r.env, r.as_row_name

    def _best(self, i: int) -> list:
        """The median each cell of row i is coloured against."""
        n = len(self.cols)
        if self.colorize == Colorize.ROWWISE:
            return [min(m.median for m in self.grid[i] if m is not None)] * n
        if self.colorize == Colorize.COLUMNWISE:
            group = [k for k in range(len(self.rows)) if self.rows[k][0] == self.rows[i][0]]
            return [
                min(
                    (self.grid[k][j].median for k in group if self.grid[k][j] is not None),
                    default=None,
                )
                for j in range(n)
            ]
        return [None] * n

    def render(self) -> str:
        envs = {r.env for r in self.results}
        show_env = len(envs) > 1
        env_width = max(len(str(e)) for e in envs) if show_env else 0
        text_rows, prior_threads, prior_env = [], None, ""
        for (threads, env, name), cells in zip(self.rows, self.grid):
            if threads != prior_threads:  # a new thread group names its env again
                prior_threads, prior_env = threads, ""
            env_cell = f"({env})" if show_env and env != prior_env else ""
            first = "  " + env_cell.ljust(env_width + 4) + name
            text_rows.append([first] + [f.cell(m, self.scale) for f, m in zip(self.formats, cells)])
            prior_env = env
        header = [""] + ["" if c is None else str(c) for c in self.cols]
        widths = [max(len(r[j]) for r in [header, *text_rows]) for j in range(len(header))]
        lines = ["  |  ".join(c.center(w) for c, w in zip(header, widths))]
        full = len(lines[0])
        prior_threads = None
        for i, (row, cells) in enumerate(zip(text_rows, self.grid)):
            threads = self.rows[i][0]
            if threads != prior_threads:
                lines.append(f"{threads} threads: ".ljust(full, "-"))
                prior_threads = threads
            out = [row[0].ljust(widths[0])]
            for text, w, m, best in zip(row[1:], widths[1:], cells, self._best(i)):
                text = text.center(w)
                if self.colorize != Colorize.NONE and m is not None and best is not None:
                    text = _paint(text, m.median, best)
                out.append(text)
            lines.append("  |  ".join(out))
        title = f" {self.label or ''} ".center(full - 2, "-")
        note = ""
        if self.warn and any(r.has_warnings for r in self.results):
            note = "(! XX%) Measurement has high variance, where XX is the IQR / median * 100.\n"
        body = "\n".join(lines)
        return f"[{title}]\n{body}\n\nTimes are in {unit_to_english(self.unit)}s ({self.unit}).\n{note}"


class Compare:
    """Measurements printed as tables: one per label, a row per sub-label (or statement)
    and thread count, a column per description; replicates of one task are merged."""

    def __init__(self, results: list[Measurement]) -> None:
        self._results: list[Measurement] = []
        self.extend_results(results)
        self._trim_significant_figures = False
        self._colorize = Colorize.NONE
        self._highlight_warnings = False

    def __str__(self) -> str:
        return "\n".join(self._render())

    def extend_results(self, results) -> None:
        """Add more Measurements."""
        for r in results:
            if not isinstance(r, Measurement):
                raise ValueError(f"Expected an instance of `Measurement`, got {type(r)} instead.")
        self._results.extend(results)

    def trim_significant_figures(self) -> None:
        """Print each median to the digits its spread supports."""
        self._trim_significant_figures = True

    def colorize(self, rowwise: bool = False) -> None:
        """Colour each cell against the best of its column (or of its row)."""
        self._colorize = Colorize.ROWWISE if rowwise else Colorize.COLUMNWISE

    def highlight_warnings(self) -> None:
        """Mark cells whose measurements vary a lot."""
        self._highlight_warnings = True

    def print(self) -> None:
        print(str(self))

    def _render(self) -> list[str]:
        by_label: dict = {}
        for r in Measurement.merge(self._results):
            by_label.setdefault(r.label, []).append(r)
        return [
            _Table(
                g, self._colorize, self._trim_significant_figures, self._highlight_warnings
            ).render()
            for g in by_label.values()
        ]
