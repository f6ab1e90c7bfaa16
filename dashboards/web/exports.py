"""Every chart's data as a table, downloadable as CSV or JSON (``&format=csv|json``).

Tables are built from the same plain data the figures draw, so a download always matches the
chart on screen. Sending one as an HTTP answer is ``web.page_tools``' part.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from rest_framework.renderers import BaseRenderer

from dashboards.figures.vmstat import samples
from dashboards.pure.chartdata import (
    KernelProfile,
    KernelTimeChart,
    RunInfo,
    ScalingChart,
    Series,
    VmstatRun,
    WakeupRow,
)
from dashboards.pure.compare import CompareLine

FORMATS = ("csv", "json")
RUN_COLUMNS = ("run_id", "kernel", "patches", "hardware", "mode", "params")


@dataclass(frozen=True)
class Table:
    name: str  # used in the file name
    columns: tuple[str, ...]
    rows: tuple[tuple[object, ...], ...]


def _run_cells(run: RunInfo) -> tuple[object, ...]:
    params = ", ".join(f"{k}={v}" for k, v in run.params)
    return (run.run_id, run.kernel, run.patch_label, run.hardware, run.mode, params)


def series_table(series: Series) -> Table:
    rows = tuple(
        (*_run_cells(p.run), series.metric.name, series.metric.unit, p.value, p.sd, p.run.n_trials)
        for p in series.points
    )
    return Table("across-kernels", (*RUN_COLUMNS, "metric", "unit", "mean", "sd", "n"), rows)


def scaling_table(chart: ScalingChart) -> Table:
    rows = tuple(
        (*_run_cells(p.run), chart.param, p.x, chart.metric.name, chart.metric.unit, p.value, p.sd)
        for p in chart.points
    )
    columns = (*RUN_COLUMNS, "param", "param_value", "metric", "unit", "mean", "sd")
    return Table("scaling", columns, rows)


def kernel_time_table(chart: KernelTimeChart) -> Table:
    rows = tuple(
        (*_run_cells(p.run), chart.param or "", p.x, p.kernel_pct, p.scheduler_pct)
        for p in chart.points
    )
    columns = (*RUN_COLUMNS, "param", "param_value", "kernel_pct", "scheduler_pct")
    return Table("kernel-time", columns, rows)


def profile_table(profiles: Sequence[KernelProfile]) -> Table:
    rows = tuple(
        (*_run_cells(p.run), function, ticks, ticks / p.total * 100 if p.total else None, p.total)
        for p in profiles
        for function, ticks in p.ticks
    )
    columns = (*RUN_COLUMNS, "function", "ticks", "share_pct", "total_ticks")
    return Table("kernel-functions", columns, rows)


def wakeups_table(rows: Sequence[WakeupRow]) -> Table:
    out = tuple(
        (
            *_run_cells(r.run),
            r.server_nice,
            r.client_nice,
            r.threshold,
            r.throughput,
            r.wakeup_calls,
            r.preempt_pct,
        )
        for r in rows
    )
    columns = (
        *RUN_COLUMNS,
        "server_nice",
        "client_nice",
        "preempt_threshold",
        "throughput_msg_s",
        "wakeup_calls",
        "priority_preemption_pct",
    )
    return Table("wakeups", columns, out)


def vmstat_table(runs: Sequence[VmstatRun]) -> Table:
    """Long form (one row per run, sample and column): runs may have different columns."""
    rows = tuple(
        (*_run_cells(run.run), n, stamp, column, value)
        for run in runs
        for n, row, stamp in samples(run)
        for column, value in zip(run.columns, row, strict=True)
    )
    return Table("vmstat", (*RUN_COLUMNS, "sample", "timestamp", "column", "value"), rows)


def compare_table(lines: Sequence[CompareLine]) -> Table:
    if not lines:
        return Table("compare", ("metric",), ())
    columns = tuple(lines[0].as_json())
    return Table("compare", columns, tuple(tuple(line.as_json().values()) for line in lines))


# --- HTTP -----------------------------------------------------------------------------------

_FORMULA = re.compile(r"^[=+\-@\t\r]")


def csv_cell(value: object) -> object:
    """Text cells that a spreadsheet would run as a formula get a leading quote."""
    if isinstance(value, str) and _FORMULA.match(value):
        return "'" + value
    return "" if value is None else value


def to_csv(table: Table) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(table.columns)
    for row in table.rows:
        writer.writerow([csv_cell(v) for v in row])
    return buffer.getvalue()


class ListCSVRenderer(BaseRenderer):
    """An API answer's list ``key`` as CSV, one row per item in ``columns``; an error answer
    (400/404) as one ``error,param,detail`` row. Subclasses name the list and its columns."""

    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"
    key = ""
    columns: tuple[str, ...] = ()

    def row(self, item: dict[str, Any]) -> list[object]:
        return [item.get(c) for c in self.columns]

    def render(self, data: Any, accepted_media_type=None, renderer_context=None) -> bytes:
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        if isinstance(data, dict) and self.key in data:
            writer.writerow(self.columns)
            writer.writerows([csv_cell(v) for v in self.row(item)] for item in data[self.key])
        else:
            writer.writerow(("error", "param", "detail"))
            data = data if isinstance(data, dict) else {}
            writer.writerow((data.get("error", ""), data.get("param", ""), data.get("detail", "")))
        return out.getvalue().encode()


def to_json(table: Table) -> str:
    rows = [{c: _finite(v) for c, v in zip(table.columns, row, strict=True)} for row in table.rows]
    return json.dumps({"columns": list(table.columns), "rows": rows}, allow_nan=False, default=str)


def _finite(value: object) -> object:
    """JSON has no NaN: a missing vmstat cell or an undefined change becomes null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def table_text(table: Table, fmt: str) -> str:
    """The table as ``fmt`` (``csv`` or ``json``) writes it."""
    return to_csv(table) if fmt == "csv" else to_json(table)


def pick(tables: Iterable[Table], name: str | None) -> Table | None:
    """The table called ``name``, or the first one when no name is given."""
    tables = list(tables)
    if not name:
        return tables[0] if tables else None
    return next((t for t in tables if t.name == name), None)
