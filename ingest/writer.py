"""Writes a parsed bundle into the database: every run of a bundle or none.

The caller opens the transaction (see ingest.services.upload_ingest); this module resolves
keys through ingest/keys.py and bulk-writes rows.
Big row sets (results, samples, profile entries) go through PostgreSQL COPY.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from django.db import connection

from ingest.evidence import evidence_write
from ingest.keys import (
    BundleDataError,
    MetricCache,
    hardware_resolve,
    kernel_get,
    patch_set_get,
    run_label,
    setup_get,
)
from ingest.manifest import Manifest, RunSpec
from ingest.parsers.base import Record
from ingest.plan import FilePart, PlannedRun
from perfdb.kernels import parse_kernel
from perfdb.models import (
    Curve,
    Histogram,
    Kernel,
    Metric,
    PatchSet,
    RawFile,
    Run,
    Setup,
    Trial,
    Upload,
)
from perfdb.timeseries import PREVIEW_POINTS, Column, columns_from_samples


@dataclass
class WriteOutcome:
    created: list[int] = field(default_factory=list)
    existing: list[int] = field(default_factory=list)
    touched_series: set[tuple[int, int]] = field(default_factory=set)  # (setup_id, metric_id)
    warnings: list[str] = field(default_factory=list)

    @property
    def run_ids(self) -> list[int]:
        return self.created + self.existing


# --- one run ------------------------------------------------------------------------------


def run_fingerprint(spec: RunSpec, files: Mapping[str, bytes]) -> str:
    """Identity of a run's data: same keys, values and raw files give the same fingerprint."""
    doc = {
        "workload": [spec.workload, spec.workload_version],
        "kernel": parse_kernel(spec.kernel).text,
        "patches": list(spec.patches),
        "hardware": spec.hardware,
        "mode": spec.mode,
        "params": dict(spec.params),
        "label": spec.label,
        "baseline": spec.baseline,
        "discard_first_trial": spec.discard_first_trial,
        "metrics": {k: list(v) for k, v in sorted(spec.metrics.items())},
        "files": sorted(
            [f.path, f.parser, f.trial or 0, hashlib.sha256(files[f.path]).hexdigest()]
            + ([dict(sorted(f.select.items()))] if f.select else [])
            for f in spec.files
        ),
    }
    canonical = json.dumps(doc, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


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
    for p in record.profile:
        rows.profile.append((trial, source, p.function, p.ticks, p.load, p.share_pct))
    for c in record.columns:
        rows.columns.append(
            Column(
                trial=trial,
                source=c.source,
                column=c.column,
                values=list(c.values),
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


def copy_rows(table: str, columns: Iterable[str], rows: Iterable[tuple]) -> None:
    """Bulk-load rows with COPY inside the caller's transaction; no rows, no round trip."""
    rows = iter(rows)
    first = next(rows, None)
    if first is None:
        return
    with connection.cursor() as cursor:
        raw = cursor.cursor  # the psycopg 3 cursor under Django's wrapper
        cols = ", ".join(f'"{c}"' for c in columns)
        with raw.copy(f"COPY {table} ({cols}) FROM STDIN") as copy:
            copy.write_row(first)
            for row in rows:
                copy.write_row(row)


SAMPLE_COLUMNS = (
    "run_id",
    "trial",
    "source",
    "column",
    "values",
    "indexes",
    "first_is_since_boot",
    "timestamps",
    "preview",
    "preview_timestamps",
    "preview_stride",
)


def float_array(values: Sequence[float]) -> str:
    """A float8[] as PostgreSQL's array text, for COPY.

    psycopg's list dumper runs a quoting regex over every element's text (0.6 s of CPU per
    million samples, more than the COPY itself); a float's repr is the shortest text that
    reads back as the same double, and needs no quoting (``nan`` and ``inf`` included).
    """
    return "{" + ",".join(map(float.__repr__, map(float, values))) + "}"


def sample_row(run_id: int, c: Column) -> tuple:
    """One perfdb_sample row for COPY, in SAMPLE_COLUMNS order, with its chart preview."""
    preview, preview_stamps, k = c.preview(PREVIEW_POINTS)
    return (
        run_id,
        c.trial,
        c.source,
        c.column,
        float_array(c.values),
        c.indexes,
        c.first_is_since_boot,
        c.timestamps,
        float_array(preview),
        preview_stamps,
        k,
    )


def run_write(
    *,
    planned: PlannedRun,
    rows: RunRows,
    setup: Setup,
    kernel: Kernel,
    patch_set: PatchSet,
    upload: Upload | None,
    files: Mapping[str, bytes],
    fingerprint: str,
) -> Run:
    spec = planned.spec
    run = Run.objects.create(
        setup=setup,
        kernel=kernel,
        patch_set=patch_set,
        upload=upload,
        label=spec.label,
        notes=spec.notes,
        discard_first_trial=spec.discard_first_trial,
        fingerprint=fingerprint,
    )
    first = min(rows.trials) if rows.trials else None
    discarded_trial = first if spec.discard_first_trial and len(rows.trials) > 1 else None
    Trial.objects.bulk_create(
        Trial(run=run, number=n, discarded=(n == discarded_trial)) for n in sorted(rows.trials)
    )
    copy_rows(
        "perfdb_result",
        ["run_id", "setup_id", "metric_id", "trial", "discarded", "value"],
        (
            (run.pk, setup.pk, metric.pk, trial, trial == discarded_trial, value)
            for (_, trial), (metric, value) in rows.results.items()
        ),
    )
    copy_rows(
        "perfdb_profileentry",
        ["run_id", "trial", "source", "function", "ticks", "load", "share_pct"],
        ((run.pk, *row) for row in rows.profile),
    )
    copy_rows(
        "perfdb_sample",
        SAMPLE_COLUMNS,
        (sample_row(run.pk, c) for c in rows.columns + columns_from_samples(rows.samples)),
    )
    for item in rows.histograms + rows.curves:
        item.run = run
    Histogram.objects.bulk_create(rows.histograms)
    Curve.objects.bulk_create(rows.curves)
    _raw_files_write(run, planned, files)
    return run


def _raw_files_write(run: Run, planned: PlannedRun, files: Mapping[str, bytes]) -> None:
    """The raw files the run was read from, downloadable from its page."""
    RawFile.objects.bulk_create(
        RawFile(
            run=run,
            path=part.file.path,
            parser=part.file.parser,
            trial=part.file.trial or 0,
            content=files[part.file.path],
            sha256=hashlib.sha256(files[part.file.path]).hexdigest(),
            warnings=list(part.warnings),
        )
        for part in planned.parts
    )


def bundle_write(
    *,
    manifest: Manifest,
    plan: list[PlannedRun],
    files: Mapping[str, bytes],
    upload: Upload | None,
) -> WriteOutcome:
    """Write every run of the bundle. Must run inside one transaction (the caller's)."""
    if not connection.in_atomic_block:
        raise RuntimeError("bundle_write must run inside transaction.atomic()")
    outcome = WriteOutcome()
    hardware = hardware_resolve(manifest, [p.spec for p in plan])
    metrics = _metric_cache(manifest, plan)
    kernels: dict[str, Kernel] = {}
    patch_sets: dict[tuple[str, ...], PatchSet] = {}
    by_series: dict[int, set[int]] = defaultdict(set)
    created_by_index: dict[int, int] = {}
    for planned in plan:
        spec = planned.spec
        fingerprint = run_fingerprint(spec, files)
        existing = Run.objects.filter(fingerprint=fingerprint).values_list("pk", flat=True).first()
        if existing is not None:
            outcome.existing.append(existing)
            created_by_index[spec.index] = existing
            outcome.warnings.append(
                f"{run_label(spec)} is identical to run {existing}, already stored; not added"
            )
            continue
        rows = run_rows(planned, metrics)
        setup = setup_get(spec, hardware[spec.hardware])
        run = run_write(
            planned=planned,
            rows=rows,
            setup=setup,
            kernel=kernel_get(spec.kernel, kernels),
            patch_set=patch_set_get(tuple(spec.patches), patch_sets),
            upload=upload,
            files=files,
            fingerprint=fingerprint,
        )
        outcome.created.append(run.pk)
        created_by_index[spec.index] = run.pk
        for metric, _ in rows.results.values():
            by_series[setup.pk].add(metric.pk)
    _link_baselines([p.spec for p in plan], created_by_index)
    outcome.touched_series = {(s, m) for s, ms in by_series.items() for m in ms}
    evidence_write(  # reference builds and [[claim]]s (ingest/evidence.py)
        manifest=manifest,
        specs=[p.spec for p in plan],
        hardware=hardware,
        run_ids=created_by_index,
        upload=upload,
        setup_ids=set(by_series),
    )
    # Cached page data: each Run created above bumped its scope's version on commit
    # (perfdb/cache.py), so only the scopes this bundle wrote to are computed again.
    return outcome


def _metric_cache(manifest: Manifest, plan: list[PlannedRun]) -> MetricCache:
    """The bundle's metrics, the stored ones read in one query (not one per metric)."""
    metrics = MetricCache(manifest)
    metrics.prefetch(
        (m.metric, m.unit)
        for planned in plan
        for part in planned.parts
        for _, record in part.trials
        for m in record.measurements
    )
    return metrics


def _link_baselines(specs: list[RunSpec], run_ids: dict[int, int]) -> None:
    """Point runs at the run whose label their ``baseline`` names (labels are per bundle)."""
    by_label = {
        spec.label: run_ids[spec.index] for spec in specs if spec.label and spec.index in run_ids
    }
    for spec in specs:
        if spec.baseline and spec.index in run_ids and spec.baseline in by_label:
            Run.objects.filter(pk=run_ids[spec.index]).update(baseline_id=by_label[spec.baseline])
