"""Writes an upload's parsed bundle into the database: every run of it or none.

The caller opens the transaction (ingest.services.upload_ingest). The upload's row is locked
first (a re-ingest's earlier runs replaced); the bundle's keys are then found or created at
once (ingest/keys.py, ``bundle_keys``), each new run's rows gathered and bulk-written (big
row sets, results, samples, profile entries, through PostgreSQL COPY), and the reference
builds and claims the manifest states are stored with them.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import psycopg
from django.db import IntegrityError, connection, transaction
from django.utils import timezone
from psycopg.types.json import Jsonb

from ingest.copy_rows import SAMPLE_COLUMNS, copy_rows, copy_rows_binary, sample_row
from ingest.keys import BundleDataError, BundleKeys, MetricCache, bundle_keys, run_label
from ingest.manifest import BuildSpec, ClaimSpec, Manifest, RunSpec
from ingest.parsers.base import Record
from ingest.plan import FilePart, PlannedRun
from perfdb.cache import runs_added_on_commit, scope_key
from perfdb.features.claim_checks import LABEL_PREFIX, claim_check, claims_recheck
from perfdb.kernels import parse_kernel
from perfdb.models import (
    Claim,
    Curve,
    Hardware,
    Histogram,
    Metric,
    RawFile,
    ReferenceBuild,
    ResultSummary,
    Run,
    Setup,
    Trial,
    Upload,
    params_digest,
)
from perfdb.timeseries import Column, columns_from_samples

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
    # False: the upload was no longer processing (finished meanwhile), nothing was written
    # and ``existing`` holds the runs it has.
    written: bool = True

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
    upload: Upload,
) -> WriteOutcome:
    """Write every run of the upload's bundle. Must run inside one transaction (the caller's).

    The upload's row is locked first (``_upload_take``): an upload no longer processing is
    left as it is, and the runs an earlier ingest of it stored are replaced. Then each
    attempt runs in a savepoint. Two uploads of the same new run (or kernel, hardware,
    setup, patch set, metric) at once: the second's INSERT waits for the first's commit,
    then meets the unique key; the savepoint is rolled back (nothing of the attempt stays)
    and the bundle written again, and under READ COMMITTED its reads now see what the
    other upload stored, so its runs are recognised as already stored, as if it had come
    a moment later, never a failed upload."""
    if not connection.in_atomic_block:
        raise RuntimeError("bundle_write must run inside transaction.atomic()")
    status, run_ids = _upload_take(upload.pk)
    if status != Upload.Status.PROCESSING:
        return WriteOutcome(existing=run_ids, written=False)
    for attempt in range(1, KEY_RACE_ATTEMPTS + 1):
        try:
            with transaction.atomic():
                return _bundle_write(manifest=manifest, plan=plan, files=files, upload=upload)
        except (IntegrityError, psycopg.errors.UniqueViolation) as exc:
            if attempt == KEY_RACE_ATTEMPTS or not _unique_violation(exc):
                raise
            log.info(
                "upload %s: a key was stored by another upload meanwhile (%s); writing again",
                upload.pk,
                str(exc).splitlines()[0] if str(exc) else type(exc).__name__,
            )
    raise AssertionError("unreachable")  # the loop returns or raises


def _upload_take(upload_id: int) -> tuple[str, list[int]]:
    """Inside the writing transaction: lock the upload's row and return its status and run
    ids, with one plain statement that also reads whether an earlier ingest stored runs. An
    upload still processing whose earlier ingest stored runs is being ingested again
    (re-ingest): those runs are deleted here, so a fixed parser's reading reaches them (the
    same raw files give the same fingerprints, so they would otherwise count as already
    stored). No other ingest of it writes meanwhile: the caller holds its session lock."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT u.status, u.run_ids, EXISTS (SELECT FROM perfdb_run r WHERE "
            f"r.upload_id = u.id) FROM {Upload._meta.db_table} u WHERE u.id = %s FOR UPDATE OF u",
            (upload_id,),
        )
        row = cursor.fetchone()
    if row is None:
        raise Upload.DoesNotExist(f"upload {upload_id} is gone")
    status, run_ids, earlier_runs = str(row[0]), list(row[1]), bool(row[2])
    if earlier_runs and status == Upload.Status.PROCESSING:
        _runs_delete(upload_id)
    return status, run_ids


def _runs_delete(upload_id: int) -> None:
    """Delete the runs an earlier ingest of this upload created (the rare re-ingest: through
    the ORM, which also unlinks the runs that named them as their baseline)."""
    runs = list(Run.objects.filter(upload_id=upload_id).values_list("pk", flat=True))
    Run.objects.filter(baseline_id__in=runs).update(baseline=None)
    Run.objects.filter(pk__in=runs).delete()
    log.info("upload %s: replacing %d runs of an earlier ingest", upload_id, len(runs))


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
    upload: Upload,
) -> WriteOutcome:
    specs = [p.spec for p in plan]
    digests = FileDigests(files)
    fingerprints = [run_fingerprint(spec, digests) for spec in specs]
    keys = bundle_keys(manifest, plan, fingerprints)
    outcome, run_ids, setup_ids = _runs_write(plan, files, upload, keys, digests, fingerprints)
    outcome.warnings.extend(keys.metrics.warnings)
    _link_baselines(specs, run_ids)
    evidence_write(manifest, specs, keys, run_ids, upload, setup_ids)
    return outcome


@dataclass
class _NewRun:
    """A run of the bundle to store: its row (unsaved until ``runs_insert``) and its rows."""

    planned: PlannedRun
    rows: RunRows
    run: Run


def _runs_write(
    plan: list[PlannedRun],
    files: Mapping[str, bytes],
    upload: Upload,
    keys: BundleKeys,
    digests: FileDigests,
    fingerprints: list[str],
) -> tuple[WriteOutcome, dict[int, int], set[int]]:
    """Each planned run stored, unless an identical one is (stored before: fingerprint ->
    run id, or earlier in this bundle); the outcome, run id by manifest index, and the
    setups written to."""
    stored = keys.stored.fingerprints
    outcome = WriteOutcome()
    new: dict[str, _NewRun] = {}
    repeated: list[tuple[PlannedRun, str]] = []
    for planned, fingerprint in zip(plan, fingerprints, strict=True):
        if fingerprint in stored or fingerprint in new:
            repeated.append((planned, fingerprint))
            continue
        spec = planned.spec
        run = Run(
            setup=keys.setups[spec.index],
            kernel=keys.kernels[spec.kernel],
            patch_set=keys.patch_sets[tuple(spec.patches)],
            upload=upload,
            label=spec.label,
            notes=spec.notes,
            discard_first_trial=spec.discard_first_trial,
            fingerprint=fingerprint,
        )
        new[fingerprint] = _NewRun(planned, run_rows(planned, keys.metrics), run)
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
    outcome.touched_series = series_of(new.values())
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
        {scope_key(s.workload_id, s.hardware_id, s.mode) for s in setups},
        {s.pk for s in setups},
        series_of(new),
    )


def series_of(new: Iterable[_NewRun]) -> set[tuple[int, int]]:
    """The (setup id, metric id) series the new runs have results in."""
    return {(n.run.setup_id, m.pk) for n in new for m, _ in n.rows.results.values()}


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


def _link_baselines(specs: list[RunSpec], run_ids: dict[int, int]) -> None:
    """Point runs at the run whose label their ``baseline`` names (labels are per bundle)."""
    by_label = {
        spec.label: run_ids[spec.index] for spec in specs if spec.label and spec.index in run_ids
    }
    for spec in specs:
        if spec.baseline and spec.index in run_ids and spec.baseline in by_label:
            Run.objects.filter(pk=run_ids[spec.index]).update(baseline_id=by_label[spec.baseline])


# --- one run's rows -------------------------------------------------------------------------
#
# Gathered before anything is written: results by metric and trial (a value two sources
# disagree on is refused, never averaged), time-series columns, profile entries, histograms
# and curves, and the trial numbers.


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
    """The rows of one run to store; its metrics are resolved already (``bundle_keys``)."""
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
        metric = metrics.named[name]
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
        metric = metrics.rows[(m.metric, m.unit)]
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


# --- reference builds and claims, stored with the runs (ingest/manifest/evidence.py) ---------


def _claim_setup(claim: ClaimSpec) -> Setup | None:
    return Setup.objects.filter(
        workload__name=claim.workload,
        workload__version=claim.workload_version,
        hardware__name=claim.hardware,
        mode=claim.mode,
        params_digest=params_digest(dict(claim.params)),
    ).first()


def _claim_side(value: BuildSpec | str, labels: Mapping[str, int]) -> tuple[str, list[int]]:
    if isinstance(value, BuildSpec):
        return value.text, []
    run_id = labels.get(value)
    return f"{LABEL_PREFIX}{value!r}", [run_id] if run_id else []


def _claim_fingerprint(claim: ClaimSpec) -> str:
    doc = {k: (v.text if isinstance(v, BuildSpec) else v) for k, v in vars(claim).items()}
    doc.pop("index")
    canonical = json.dumps(doc, sort_keys=True, default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _claim_setup_text(claim: ClaimSpec) -> str:
    params = ", ".join(f"{k}={v}" for k, v in sorted(claim.params.items()))
    workload = f"{claim.workload} {claim.workload_version}".strip()
    return f"{workload} on {claim.hardware} {claim.mode}" + (f" ({params})" if params else "")


def claims_write(manifest: Manifest, labels: Mapping[str, int], upload: Upload) -> None:
    for spec in manifest.claims:
        setup = _claim_setup(spec)
        declared = manifest.metrics.get(spec.metric)
        metrics = Metric.objects.filter(name=spec.metric)
        if declared is not None:
            metrics = metrics.filter(unit=declared.unit)
        baseline, base_ids = _claim_side(spec.baseline, labels)
        candidate, new_ids = _claim_side(spec.candidate, labels)
        claim, _ = Claim.objects.update_or_create(
            fingerprint=_claim_fingerprint(spec),
            defaults={
                "upload": upload,
                "setup": setup,
                "metric": metrics.order_by("id").first(),
                "setup_text": _claim_setup_text(spec),
                "metric_name": spec.metric,
                "baseline": baseline,
                "candidate": candidate,
                "stated_change_pct": spec.change_pct,
                "tolerance_pct": spec.tolerance_pct if spec.tolerance_pct is not None else 0.0,
                "source": spec.source,
                "document": spec.document,
                "baseline_run_ids": base_ids,
                "candidate_run_ids": new_ids,
            },
        )
        # No tolerance in the bundle: check_claim derives it from the stated figure.
        claim_check(claim, derive_tolerance=spec.tolerance_pct is None)


def evidence_write(
    manifest: Manifest,
    specs: list[RunSpec],
    keys: BundleKeys,
    run_ids: Mapping[int, int],
    upload: Upload,
    setup_ids: set[int],
) -> None:
    """References (hardware-wide, then per setup), then claims; the claims already stored on
    the setups this bundle wrote runs to are checked again with its runs."""
    for name, hw in manifest.hardware.items():
        if hw.reference is not None:
            _reference(hw.reference, keys, hardware=keys.hardware[name], setup=None)
    for spec in specs:
        if spec.reference is not None:
            _reference(spec.reference, keys, setup=keys.setups[spec.index], hardware=None)
    if setup_ids and keys.stored.claims:  # any claim stored on the bundle's stored setups
        claims_recheck(setup_ids=list(setup_ids))
    labels = {s.label: run_ids[s.index] for s in specs if s.label and s.index in run_ids}
    claims_write(manifest, labels, upload)


def _reference(
    build: BuildSpec, keys: BundleKeys, hardware: Hardware | None, setup: Setup | None
) -> None:
    ReferenceBuild.objects.update_or_create(
        hardware=hardware,
        setup=setup,
        defaults={
            "kernel": keys.kernels[build.kernel],
            "patch_set": keys.patch_sets[build.patches],
        },
    )
