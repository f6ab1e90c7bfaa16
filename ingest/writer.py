"""Writes a parsed bundle into the database: every run of a bundle or none.

The caller opens the transaction (see ingest.services.upload_ingest); this module resolves
keys through ingest/keys.py and bulk-writes rows.
Big row sets (results, samples, profile entries) go through PostgreSQL COPY.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import psycopg
from django.db import IntegrityError, connection, transaction
from django.utils import timezone
from psycopg.types.json import Jsonb

from ingest.bundle_keys import SetupKey, setup_key, stored_keys
from ingest.copy_rows import SAMPLE_COLUMNS, copy_rows, copy_rows_binary, sample_row
from ingest.evidence import evidence_write
from ingest.keys import (
    MetricCache,
    hardware_resolve,
    kernel_get,
    kernels_get,
    patch_set_get,
    run_label,
    setup_get,
)
from ingest.manifest import Manifest, RunSpec
from ingest.plan import PlannedRun
from ingest.run_rows import RunRows, run_rows
from perfdb.cache import runs_added_on_commit, scope_key
from perfdb.kernels import parse_kernel
from perfdb.models import (
    Curve,
    Hardware,
    Histogram,
    Kernel,
    PatchSet,
    RawFile,
    ResultSummary,
    Run,
    Setup,
    Trial,
    Upload,
)
from perfdb.timeseries import columns_from_samples

log = logging.getLogger(__name__)

# A unique key another upload's transaction wrote at the same moment (PostgreSQL's
# unique_violation): the bundle is written again, and the rows that upload committed are
# then read as stored. Each conflict means another upload committed, so a few attempts
# suffice; a bundle that conflicts with itself fails on the last one as before.
UNIQUE_VIOLATION = "23505"
KEY_RACE_ATTEMPTS = 5


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


class FileDigests(dict[str, str]):
    """Each bundle file's sha256 (hex), computed once: the run's fingerprint and its raw
    file's row both need it (hashed twice, 0.2 ms at 100k samples, 2 ms at 1M)."""

    def __init__(self, files: Mapping[str, bytes]):
        super().__init__()
        self.files = files

    def __missing__(self, path: str) -> str:
        self[path] = digest = hashlib.sha256(self.files[path]).hexdigest()
        return digest


def run_fingerprint(spec: RunSpec, digests: Mapping[str, str]) -> str:
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
            [f.path, f.parser, f.trial or 0, digests[f.path]]
            + ([dict(sorted(f.select.items()))] if f.select else [])
            for f in spec.files
        ),
    }
    canonical = json.dumps(doc, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def bundle_write(
    *,
    manifest: Manifest,
    plan: list[PlannedRun],
    files: Mapping[str, bytes],
    upload: Upload | None,
) -> WriteOutcome:
    """Write every run of the bundle. Must run inside one transaction (the caller's).

    Each attempt runs in a savepoint. Two uploads of the same new run (or kernel, hardware,
    setup, patch set, metric) at once: the second's INSERT waits for the first's commit,
    then meets the unique key; the savepoint is rolled back (nothing of the attempt stays)
    and the bundle written again, and under READ COMMITTED its reads now see what the
    other upload stored, so its runs are recognised as already stored, as if it had come
    a moment later, never a failed upload."""
    if not connection.in_atomic_block:
        raise RuntimeError("bundle_write must run inside transaction.atomic()")
    for attempt in range(1, KEY_RACE_ATTEMPTS + 1):
        try:
            with transaction.atomic():
                return _bundle_write(manifest=manifest, plan=plan, files=files, upload=upload)
        except (IntegrityError, psycopg.errors.UniqueViolation) as exc:
            if attempt == KEY_RACE_ATTEMPTS or not _unique_violation(exc):
                raise
            log.info(
                "upload %s: a key was stored by another upload meanwhile (%s); writing again",
                upload.pk if upload else None,
                str(exc).splitlines()[0] if str(exc) else type(exc).__name__,
            )
    raise AssertionError("unreachable")  # the loop returns or raises


def _unique_violation(exc: BaseException) -> bool:
    """Whether ``exc`` (Django's IntegrityError wraps the driver's error) is a unique-key
    conflict, the one a concurrent upload causes; a foreign-key or check violation is not."""
    cause = exc if isinstance(exc, psycopg.Error) else exc.__cause__
    return getattr(getattr(cause, "diag", None), "sqlstate", None) == UNIQUE_VIOLATION


def _bundle_write(
    *,
    manifest: Manifest,
    plan: list[PlannedRun],
    files: Mapping[str, bytes],
    upload: Upload | None,
) -> WriteOutcome:
    specs = [p.spec for p in plan]
    digests = FileDigests(files)
    fingerprints = [run_fingerprint(spec, digests) for spec in specs]
    wanted = _metric_keys(plan)
    metrics = MetricCache(manifest)
    stored = stored_keys(manifest, specs, fingerprints, metrics.names(wanted))
    metrics.prefetch(wanted, stored.metrics)
    hardware = hardware_resolve(manifest, specs, stored.hardware)
    keys = _BundleKeys(
        hardware,
        kernels_get((spec.kernel for spec in specs), stored.kernels, manifest.kernels),
        patch_sets=dict(stored.patch_sets),
        setups=dict(stored.setups),
    )
    outcome, created_by_index, setup_ids = _runs_write(
        plan, files, upload, keys, metrics, digests, fingerprints, stored.fingerprints
    )
    outcome.warnings.extend(metrics.warnings)
    _link_baselines(specs, created_by_index)
    evidence_write(  # reference builds and [[claim]]s (ingest/evidence.py)
        manifest=manifest,
        specs=specs,
        hardware=hardware,
        kernels=keys.kernels,
        patch_sets=keys.patch_sets,
        run_ids=created_by_index,
        upload=upload,
        setup_ids=setup_ids,
        claims_stored=stored.claims,
    )
    return outcome


@dataclass
class _BundleKeys:
    """The bundle's stored keys, each looked up or created once per bundle (a 1,000-run
    bundle of one setup asked for it 1,000 times)."""

    hardware: Mapping[str, Hardware]
    kernels: dict[str, Kernel]
    patch_sets: dict[tuple[str, ...], PatchSet] = field(default_factory=dict)
    setups: dict[SetupKey, Setup] = field(default_factory=dict)

    def setup(self, spec: RunSpec) -> Setup:
        key = setup_key(spec)
        if key not in self.setups:
            self.setups[key] = setup_get(spec, self.hardware[spec.hardware])
        return self.setups[key]


@dataclass
class _NewRun:
    """A run of the bundle to store: its row (unsaved until ``runs_insert``) and its rows."""

    planned: PlannedRun
    rows: RunRows
    run: Run


def _runs_write(
    plan: list[PlannedRun],
    files: Mapping[str, bytes],
    upload: Upload | None,
    keys: _BundleKeys,
    metrics: MetricCache,
    digests: FileDigests,
    fingerprints: list[str],
    stored: dict[str, int],
) -> tuple[WriteOutcome, dict[int, int], set[int]]:
    """Each planned run stored, unless an identical one is (``stored`` before: fingerprint
    -> run id, or earlier in this bundle); the outcome, run id by manifest index, and the
    setups written to."""
    outcome = WriteOutcome()
    new: dict[str, _NewRun] = {}
    repeated: list[tuple[PlannedRun, str]] = []
    for planned, fingerprint in zip(plan, fingerprints, strict=True):
        if fingerprint in stored or fingerprint in new:
            repeated.append((planned, fingerprint))
            continue
        spec = planned.spec
        run = Run(
            setup=keys.setup(spec),
            kernel=kernel_get(spec.kernel, keys.kernels),
            patch_set=patch_set_get(tuple(spec.patches), keys.patch_sets),
            upload=upload,
            label=spec.label,
            notes=spec.notes,
            discard_first_trial=spec.discard_first_trial,
            fingerprint=fingerprint,
        )
        new[fingerprint] = _NewRun(planned, run_rows(planned, metrics), run)
    runs_insert(list(new.values()), files, digests)
    created_by_index = {n.planned.spec.index: n.run.pk for n in new.values()}
    outcome.created = list(created_by_index.values())
    for planned, fingerprint in repeated:
        existing = stored[fingerprint] if fingerprint in stored else new[fingerprint].run.pk
        outcome.existing.append(existing)
        created_by_index[planned.spec.index] = existing
        outcome.warnings.append(
            f"{run_label(planned.spec)} is identical to run {existing}, already stored; not added"
        )
    outcome.touched_series = {
        (n.run.setup_id, metric.pk) for n in new.values() for metric, _ in n.rows.results.values()
    }
    return outcome, created_by_index, {n.run.setup_id for n in new.values()}


def runs_insert(new: list[_NewRun], files: Mapping[str, bytes], digests: Mapping[str, str]) -> None:
    """The new runs and all their rows, a statement per table for the whole bundle (a
    1,000-run bundle was a few thousand round trips); then their pages' cache moves at commit
    (bulk inserts send no post_save)."""
    if not new:
        return
    runs_rows_insert([n.run for n in new])
    discarded = {id(n): _discarded_trial(n) for n in new}
    Trial.objects.bulk_create(
        Trial(run=n.run, number=k, discarded=(k == discarded[id(n)]))
        for n in new
        for k in sorted(n.rows.trials)
    )
    copy_rows(
        "perfdb_result",
        ["run_id", "setup_id", "metric_id", "trial", "discarded", "value"],
        (
            (n.run.pk, n.run.setup_id, metric.pk, trial, trial == discarded[id(n)], value)
            for n in new
            for (_, trial), (metric, value) in n.rows.results.items()
        ),
    )
    ResultSummary.objects.bulk_create(
        ResultSummary(run=n.run, metric=metric, sd=sd, sd_pct=sd_pct, runs=runs)
        for n in new
        for metric, sd, sd_pct, runs in n.rows.summaries.values()
    )
    copy_rows(
        "perfdb_profileentry",
        ["run_id", "trial", "source", "function", "ticks", "load", "share_pct"],
        ((n.run.pk, *row) for n in new for row in n.rows.profile),
    )
    copy_rows(
        "perfdb_sample",
        SAMPLE_COLUMNS,
        (
            sample_row(n.run.pk, c)
            for n in new
            for c in n.rows.columns + columns_from_samples(n.rows.samples)
        ),
    )
    attached_write(new, files, digests)
    setups = {n.run.setup for n in new}
    runs_added_on_commit(
        {scope_key(s.workload_id, s.hardware_id, s.mode) for s in setups}, {s.pk for s in setups}
    )


# perfdb.Run's columns as the writer fills them (baseline_id is linked after the insert).
RUN_COLUMNS = (
    "setup_id",
    "kernel_id",
    "patch_set_id",
    "upload_id",
    "label",
    "baseline_id",
    "notes",
    "discard_first_trial",
    "fingerprint",
    "synthetic",
    "created_at",
)


def runs_rows_insert(runs: list[Run], batch: int = 1000) -> None:
    """Insert the runs' rows, a statement per ``batch`` of them, and give each its id (read
    back by its fingerprint, unique): what ``bulk_create`` did, without its compile (~0.5 ms
    of every upload's CPU). ``created_at`` is the insert's time, as auto_now_add sets it."""
    now = timezone.now()
    for start in range(0, len(runs), batch):
        part = runs[start : start + batch]
        row = "(" + ", ".join(["%s"] * len(RUN_COLUMNS)) + ")"
        params: list[Any] = []
        for run in part:
            run.created_at = now
            params.extend(getattr(run, column) for column in RUN_COLUMNS)
        with connection.cursor() as cursor:
            cursor.execute(
                f"INSERT INTO {Run._meta.db_table} ({', '.join(RUN_COLUMNS)}) "
                f"VALUES {', '.join([row] * len(part))} RETURNING fingerprint, id",
                params,
            )
            ids = dict(cursor.fetchall())
        for run in part:
            run.pk = ids[run.fingerprint]
            run._state.adding, run._state.db = False, connection.alias


def _discarded_trial(new: _NewRun) -> int | None:
    """The warm-up trial left out of statistics: the first, when asked and there are more."""
    trials = new.rows.trials
    return min(trials) if new.run.discard_first_trial and len(trials) > 1 else None


def attached_write(
    new: list[_NewRun], files: Mapping[str, bytes], digests: Mapping[str, str]
) -> None:
    """Histograms, curves and the raw files the runs were read from (downloadable from a
    run's page)."""
    for n in new:
        for item in n.rows.histograms + n.rows.curves:
            item.run = n.run
    Histogram.objects.bulk_create(h for n in new for h in n.rows.histograms)
    Curve.objects.bulk_create(c for n in new for c in n.rows.curves)
    copy_rows_binary(  # binary: a 10 MB log is not sent as 20 MB of hex (copy_rows.py)
        RawFile._meta.db_table,
        RAW_FILE_COLUMNS,
        (
            (
                n.run.pk,
                part.file.path,
                part.file.parser,
                part.file.trial or 0,
                files[part.file.path],
                digests[part.file.path],
                Jsonb(list(part.warnings)),
            )
            for n in new
            for part in n.planned.parts
        ),
    )


# perfdb.RawFile's columns (but its id), for copy_rows_binary.
RAW_FILE_COLUMNS = (
    ("run_id", "int8"),
    ("path", "varchar"),
    ("parser", "varchar"),
    ("trial", "int2"),
    ("content", "bytea"),
    ("sha256", "varchar"),
    ("warnings", "jsonb"),
)


def _metric_keys(plan: list[PlannedRun]) -> set[tuple[str, str]]:
    """The (name, unit) of every metric the bundle's files measure."""
    return {
        (m.metric, m.unit)
        for planned in plan
        for part in planned.parts
        for _, record in part.trials
        for m in record.measurements
    }


def _link_baselines(specs: list[RunSpec], run_ids: dict[int, int]) -> None:
    """Point runs at the run whose label their ``baseline`` names (labels are per bundle)."""
    by_label = {
        spec.label: run_ids[spec.index] for spec in specs if spec.label and spec.index in run_ids
    }
    for spec in specs:
        if spec.baseline and spec.index in run_ids and spec.baseline in by_label:
            Run.objects.filter(pk=run_ids[spec.index]).update(baseline_id=by_label[spec.baseline])
