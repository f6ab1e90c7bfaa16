"""The rows of one planned run, gathered before anything is written: results by metric and
trial (a value two sources disagree on is refused, never averaged), time-series columns,
profile entries, histograms and curves, and the trial numbers."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ingest.keys import BundleDataError, MetricCache, run_label
from ingest.parsers.base import Record
from ingest.plan import FilePart, PlannedRun
from perfdb.models import Curve, Histogram, Metric
from perfdb.timeseries import Column


@dataclass
class RunRows:
    """The rows of one run, gathered before any is written."""

    results: dict[tuple[int, int], tuple[Metric, float]] = field(default_factory=dict)
    samples: list[tuple] = field(default_factory=list)
    columns: list[Column] = field(default_factory=list)
    profile: list[tuple] = field(default_factory=list)
    histograms: list[Histogram] = field(default_factory=list)
    curves: list[Curve] = field(default_factory=list)
    trials: set[int] = field(default_factory=set)
    # A report's stated spread of a run's mean, by metric id: (metric, sd, sd_pct, runs).
    summaries: dict[int, tuple[Metric, float | None, float | None, int | None]] = field(
        default_factory=dict
    )


def run_rows(planned: PlannedRun, metrics: MetricCache) -> RunRows:
    spec = planned.spec
    rows = RunRows()
    where = run_label(spec)

    def add_result(metric: Metric, trial: int, value: float, origin: str) -> None:
        key = (metric.pk, trial)
        if key in rows.results and rows.results[key][1] != value:
            raise BundleDataError(
                f"{where}: {origin} gives {metric.name} = {value} for trial {trial}, "
                f"but another source gave {rows.results[key][1]}"
            )
        rows.results[key] = (metric, value)
        if trial:
            rows.trials.add(trial)

    for name, values in spec.metrics.items():
        metric = metrics.direct(name, where)
        if len(values) == 1:
            add_result(metric, 0, values[0], "metrics")
        else:
            for trial, value in enumerate(values, start=1):
                add_result(metric, trial, value, "metrics")

    for part in planned.parts:
        for trial, record in part.trials:
            _record_rows(rows, metrics, part, trial, record, add_result)
            if trial:
                rows.trials.add(trial)
    return rows


def _record_rows(
    rows: RunRows,
    metrics: MetricCache,
    part: FilePart,
    trial: int,
    record: Record,
    add_result: Callable[[Metric, int, float, str], None],
) -> None:
    """Gather one record's values as rows of ``trial`` (0 = the run's only value)."""
    path, source = part.file.path, part.file.parser
    for m in record.measurements:
        metric = metrics.get(m.metric, m.unit, m.better, f"file {path!r}", m.resolution)
        add_result(metric, trial, m.value, f"file {path!r}")
        if m.summary is not None:
            if trial:
                # A stated spread describes the run's mean; on one of several trials it
                # would describe neither the trial nor the run.
                raise BundleDataError(
                    f"file {path!r} gives {m.metric} with a stated spread for trial {trial} "
                    f"(line {record.line}); a mean with its spread is the run's only value"
                )
            s = m.summary
            rows.summaries[metric.pk] = (metric, s.sd, s.sd_pct, s.runs)
    for p in record.profile:
        rows.profile.append((trial, source, p.function, p.ticks, p.load, p.share_pct))
    for c in record.columns:
        rows.columns.append(
            Column(
                trial=trial,
                source=c.source,
                column=c.column,
                values=c.values,
                indexes=None,
                first_is_since_boot=c.first_is_since_boot,
                timestamps=list(c.timestamps),
            )
        )
    for sample in record.samples:
        rows.samples.append(
            (
                trial,
                sample.source,
                sample.column,
                sample.index,
                sample.value,
                sample.since_boot,
                sample.timestamp or "",
            )
        )
    for h in record.histograms:
        rows.histograms.append(
            Histogram(trial=trial, name=h.name, x_label=h.x_label, bins=list(h.bins))
        )
    for curve in record.curves:
        rows.curves.append(
            Curve(
                trial=trial,
                name=curve.name,
                x_label=curve.x_label,
                y_label=curve.y_label,
                points=list(curve.points),
            )
        )
