"""Writes a parsed bundle into the database: every run of a bundle or none.

The caller opens the transaction (see ingest.services.upload_ingest); this module resolves
keys through ingest/keys.py and bulk-writes rows.
Big row sets (results, samples, profile entries) go through PostgreSQL COPY.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from django.db import connection

from ingest.copy_rows import SAMPLE_COLUMNS, copy_rows, sample_row
from ingest.evidence import evidence_write
from ingest.keys import (
    BundleDataError,
    MetricCache,
    hardware_resolve,
    kernel_get,
    kernels_stored,
    patch_set_get,
    run_label,
    setup_get,
)
from ingest.manifest import Manifest, RunSpec
from ingest.parsers.base import Record
from ingest.plan import FilePart, PlannedRun
from perfdb.cache import runs_added_batch
from perfdb.kernels import parse_kernel
from perfdb.models import (
    Curve,
    Hardware,
    Histogram,
    Kernel,
    Metric,
    PatchSet,
    RawFile,
    Run,
    Setup,
    Trial,
    Upload,
    params_digest,
)
from perfdb.timeseries import Column, columns_from_samples


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
    hardware = hardware_resolve(manifest, [p.spec for p in plan])
    keys = _BundleKeys(hardware, kernels_stored(p.spec.kernel for p in plan))
    # Cached page data: the runs move their scopes' and setups' versions once, at commit
    # (perfdb/cache.py), so only what this bundle wrote to is computed again.
    with runs_added_batch():
        outcome, created_by_index, setup_ids = _runs_write(
            plan, files, upload, keys, _metric_cache(manifest, plan)
        )
    _link_baselines([p.spec for p in plan], created_by_index)
    evidence_write(  # reference builds and [[claim]]s (ingest/evidence.py)
        manifest=manifest,
        specs=[p.spec for p in plan],
        hardware=hardware,
        run_ids=created_by_index,
        upload=upload,
        setup_ids=setup_ids,
    )
    return outcome


@dataclass
class _BundleKeys:
    """The bundle's stored keys, each looked up or created once per bundle (a 1,000-run
    bundle of one setup asked for it 1,000 times)."""

    hardware: Mapping[str, Hardware]
    kernels: dict[str, Kernel]
    patch_sets: dict[tuple[str, ...], PatchSet] = field(default_factory=dict)
    setups: dict[tuple[object, ...], Setup] = field(default_factory=dict)

    def setup(self, spec: RunSpec) -> Setup:
        digest = params_digest(dict(spec.params))
        key = (spec.workload, spec.workload_version, spec.hardware, spec.mode, digest)
        if key not in self.setups:
            self.setups[key] = setup_get(spec, self.hardware[spec.hardware])
        return self.setups[key]


def _runs_write(
    plan: list[PlannedRun],
    files: Mapping[str, bytes],
    upload: Upload | None,
    keys: _BundleKeys,
    metrics: MetricCache,
) -> tuple[WriteOutcome, dict[int, int], set[int]]:
    """Each planned run stored, unless an identical one is (stored before, or earlier in
    this bundle); the outcome, run id by manifest index, and the setups written to."""
    outcome = WriteOutcome()
    by_series: dict[int, set[int]] = defaultdict(set)
    created_by_index: dict[int, int] = {}
    fingerprints = [run_fingerprint(p.spec, files) for p in plan]
    known = dict(Run.objects.filter(fingerprint__in=fingerprints).values_list("fingerprint", "pk"))
    for planned, fingerprint in zip(plan, fingerprints, strict=True):
        spec = planned.spec
        existing = known.get(fingerprint)
        if existing is not None:
            outcome.existing.append(existing)
            created_by_index[spec.index] = existing
            outcome.warnings.append(
                f"{run_label(spec)} is identical to run {existing}, already stored; not added"
            )
            continue
        rows = run_rows(planned, metrics)
        setup = keys.setup(spec)
        run = run_write(
            planned=planned,
            rows=rows,
            setup=setup,
            kernel=kernel_get(spec.kernel, keys.kernels),
            patch_set=patch_set_get(tuple(spec.patches), keys.patch_sets),
            upload=upload,
            files=files,
            fingerprint=fingerprint,
        )
        known[fingerprint] = run.pk
        outcome.created.append(run.pk)
        created_by_index[spec.index] = run.pk
        for metric, _ in rows.results.values():
            by_series[setup.pk].add(metric.pk)
    outcome.touched_series = {(s, m) for s, ms in by_series.items() for m in ms}
    return outcome, created_by_index, set(by_series)


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
