"""Time series of runs for the activity page: vmstat, sar, iostat, dbench's per-second rows.

Reads the chart previews written at ingest (perfdb/timeseries.py), never the full columns of
a long series, so a million-sample run draws as fast as a short one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dashboards.chart_queries.charts import RUN_EXPRESSIONS, RunValues
from dashboards.pure.chartdata import VmstatRun
from perfdb.models import Sample
from perfdb.timeseries import PREVIEW_POINTS, stride

# What vmstat_runs reads of a sample row: the preview, never the full values.
VMSTAT_FIELDS = (
    "run_id",
    "trial",
    "column",
    "preview",
    "preview_timestamps",
    "preview_stride",
    "indexes",
    "first_is_since_boot",
)


def vmstat_runs(*, run_ids: Sequence[int], source: str = "vmstat") -> list[VmstatRun]:
    """Time series of ``source`` (vmstat, sar, dbench, …) of the runs (their first trial with
    samples), in the order asked.

    One query; served by sample_column_uniq (run, trial, source, column). Reads each
    column's stored preview (every k-th row of a long series, ``VmstatRun.stride`` = k), and
    the full values only for a column whose rows are not simply 0, 1, 2, ….
    """
    rows = (
        Sample.objects.filter(run_id__in=run_ids, source=source)
        .values(*VMSTAT_FIELDS, **RUN_EXPRESSIONS)
        .order_by("run_id", "trial", "column")
    )
    columns: dict[int, dict[str, dict[int, float]]] = {}
    keys: dict[int, Mapping[str, Any]] = {}
    stamps: dict[int, dict[int, str]] = {}
    steps: dict[int, int] = {}
    for row in rows:
        run_id = row["run_id"]
        first = keys.setdefault(run_id, row)
        if row["trial"] != first["trial"]:
            continue
        step = row["preview_stride"]
        steps[run_id] = max(steps.get(run_id, 1), step)
        if row["indexes"]:
            indexes = row["indexes"][::step]
        else:
            indexes = range(0, step * len(row["preview"]), step)
        columns.setdefault(run_id, {})[row["column"]] = dict(
            zip(indexes, row["preview"], strict=True)
        )
        for index, stamp in zip(indexes, row["preview_timestamps"], strict=False):
            stamps.setdefault(run_id, {})[index] = stamp
    out = []
    # Overlaid runs share one chart's budget of points.
    budget = max(100, PREVIEW_POINTS // max(1, len(columns)))
    for run_id in run_ids:
        if run_id not in columns:
            continue
        by_column = columns[run_id]
        names = _vmstat_columns(set(by_column))
        kept = sorted({i for values in by_column.values() for i in values})
        extra = stride(len(kept), budget)
        kept = kept[::extra]
        steps[run_id] *= extra
        run_stamps = stamps.get(run_id, {})
        out.append(
            VmstatRun(
                run=RunValues(keys=keys[run_id], values=[0.0]).info(),
                columns=names,
                rows=tuple(tuple(by_column[c].get(i, float("nan")) for c in names) for i in kept),
                first_is_since_boot=keys[run_id]["first_is_since_boot"],
                timestamps=tuple(run_stamps.get(i, "") for i in kept) if run_stamps else (),
                stride=steps[run_id],
            )
        )
    return out


def _vmstat_columns(present: set[str]) -> tuple[str, ...]:
    """procps' header order for the known columns, then any others by name."""
    from dashboards.figures.vmstat import GROUPS

    known = [c for _, _, columns in GROUPS for c in columns if c in present]
    return tuple(known + sorted(present - set(known)))
