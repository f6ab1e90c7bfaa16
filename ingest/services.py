"""Uploads: accept a bundle, ingest it, fail it with a reason a person can act on.

Flow: ``upload_create`` stores the file and an Upload row (queued) and queues the ingest
task after commit. ``upload_ingest`` (the task's body) reads, validates and parses the
bundle outside any transaction, then writes every run in ONE transaction, and queues the
regression check after that commits. It is safe to run twice: a finished upload is left
alone and identical runs are recognised by their fingerprint.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Mapping
from datetime import timedelta
from pathlib import Path
from typing import BinaryIO

from django.conf import settings
from django.core.files import File
from django.db import IntegrityError, transaction
from django.utils import timezone

from ingest import queue
from ingest.bundle import Bundle, BundleError, read_bundle
from ingest.field_lengths import check_lengths
from ingest.manifest import Manifest, ManifestError, parse_manifest
from ingest.parsers import ParseError, ParseResult, get_parser
from ingest.plan import PlanError, PlannedRun, file_key, plan_runs
from ingest.writer import BundleDataError, bundle_write
from perfdb.alerting import queue as alerting_queue
from perfdb.kernels import KernelVersionError
from perfdb.models import Upload

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 3
# Errors in the data itself: the upload fails with the message and is never retried.
DATA_ERRORS = (
    BundleError,
    ManifestError,
    ParseError,
    PlanError,
    BundleDataError,
    KernelVersionError,
)


class UploadTooLarge(ValueError):
    pass


def _sha256(stream: BinaryIO) -> tuple[str, int]:
    digest = hashlib.sha256()
    size = 0
    stream.seek(0)
    for chunk in iter(lambda: stream.read(1024 * 1024), b""):
        digest.update(chunk)
        size += len(chunk)
    stream.seek(0)
    return digest.hexdigest(), size


def upload_create(
    *, stream: BinaryIO, filename: str, user=None, source: str = "api"
) -> tuple[Upload, bool]:
    """Store a bundle and queue its ingest. Returns (upload, created).

    A byte-identical bundle uploaded again returns the first upload (created=False).
    """
    sha, size = _sha256(stream)
    if size > settings.BUNDLE_MAX_BYTES:
        raise UploadTooLarge(
            f"bundle is {size} bytes; the limit is {settings.BUNDLE_MAX_BYTES} bytes"
        )
    existing = Upload.objects.filter(sha256=sha).first()
    if existing:
        return existing, False
    name = Path(filename or "bundle").name[:200] or "bundle"
    try:
        with transaction.atomic():
            upload = Upload(
                user=user if user and user.is_authenticated else None,
                filename=name,
                sha256=sha,
                size=size,
                source=source,
            )
            upload.file.save(f"{sha[:16]}-{name}", File(stream), save=False)
            upload.save()
            transaction.on_commit(lambda: queue.ingest_upload(upload_id=upload.pk))
    except IntegrityError:  # the same bundle uploaded concurrently
        return Upload.objects.get(sha256=sha), False
    log.info("upload %s created: %s (%d bytes) from %s", upload.pk, name, size, source)
    return upload, True


def upload_fail(*, upload_id: int, reason: str) -> None:
    Upload.objects.filter(pk=upload_id).exclude(status=Upload.Status.DONE).update(
        status=Upload.Status.FAILED, error=reason, finished_at=timezone.now()
    )
    log.warning("upload %s failed: %s", upload_id, reason.replace("\n", "; "))


def _claim(upload_id: int) -> Upload | None:
    """Mark the upload processing; None when it is already finished (a duplicate delivery)."""
    with transaction.atomic():
        upload = Upload.objects.select_for_update().filter(pk=upload_id).first()
        if upload is None or upload.status in (Upload.Status.DONE, Upload.Status.FAILED):
            return None
        upload.status = Upload.Status.PROCESSING
        upload.started_at = timezone.now()
        upload.attempts += 1
        upload.save(update_fields=["status", "started_at", "attempts"])
        return upload


def _decode(data: bytes, path: str, warnings: list[str]) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        warnings.append(f"{path}: not UTF-8; read as Latin-1")
        return data.decode("latin-1")


def _wanted_files(manifest: Manifest) -> dict[str, tuple[str, str, Mapping[str, object], str]]:
    """Each distinct (file, parser, options) of the manifest, with who reads it first."""
    wanted: dict[str, tuple[str, str, Mapping[str, object], str]] = {}
    for run in manifest.runs:
        for file in run.files:
            key = file_key(file.path, file.parser, file.options)
            wanted.setdefault(key, (file.path, file.parser, file.options, f"run {run.index}"))
    for block in manifest.runs_from:
        for path in block.paths:
            key = file_key(path, block.parser, block.options)
            wanted.setdefault(key, (path, block.parser, block.options, block.where))
    return wanted


def bundle_parse(
    bundle: Bundle, progress: Callable[[int, int], None] | None = None
) -> tuple[Manifest, list[PlannedRun], list[str]]:
    """Validate the manifest, run every named parser, plan the runs. Pure: no database.

    Every file is parsed even after one fails, so the uploader learns the fate of all files
    from one upload: the error lists each file's problem on its own line.
    """
    manifest = parse_manifest(
        bundle.manifest_text, filename=bundle.manifest_name, available_files=bundle.files.keys()
    )
    wanted = _wanted_files(manifest)
    parsed: dict[str, ParseResult] = {}
    warnings: list[str] = []
    problems: list[str] = []
    for done, (key, (path, parser, options, who)) in enumerate(wanted.items(), start=1):
        text = _decode(bundle.files[path], path, warnings)
        try:
            result = get_parser(parser)(text, options)
        except ParseError as exc:
            where = f"line {exc.line}: " if exc.line else ""
            problems.append(f"{who}: file {path!r} ({parser}): {where}{exc.message}")
            continue
        parsed[key] = result
        warnings.extend(f"{path}: {w}" for w in result.warnings)
        if progress:
            progress(done, len(wanted))
    if problems:
        raise ParseError("\n".join(problems))
    plan = plan_runs(manifest, parsed)
    check_lengths(manifest, plan)  # before any transaction: a clear error, not a DataError
    return manifest, plan, sorted(set(warnings), key=warnings.index)


def upload_ingest(*, upload_id: int) -> list[int]:
    """Ingest one upload; returns the ids of its runs. Data errors fail the upload."""
    upload = _claim(upload_id)
    if upload is None:
        log.info("upload %s already finished; nothing to do", upload_id)
        return []
    log.info("upload %s: ingest attempt %d", upload_id, upload.attempts)

    def progress(done: int, total: int) -> None:
        Upload.objects.filter(pk=upload_id).update(files_done=done, files_total=total)

    try:
        bundle = read_bundle(Path(upload.file.path))
        manifest, plan, warnings = bundle_parse(bundle, progress)
        with transaction.atomic():
            locked = Upload.objects.select_for_update().get(pk=upload_id)
            if locked.status != Upload.Status.PROCESSING:
                return list(locked.run_ids)
            outcome = bundle_write(manifest=manifest, plan=plan, files=bundle.files, upload=locked)
            locked.status = Upload.Status.DONE
            locked.error = ""
            locked.warnings = warnings + outcome.warnings
            locked.run_ids = outcome.run_ids
            locked.finished_at = timezone.now()
            locked.save(update_fields=["status", "error", "warnings", "run_ids", "finished_at"])
            series = sorted(outcome.touched_series)
            transaction.on_commit(
                lambda: alerting_queue.regressions_check(upload_id=upload_id, series=series)
            )
    except DATA_ERRORS as exc:
        upload_fail(upload_id=upload_id, reason=str(exc))
        return []
    except FileNotFoundError:
        upload_fail(upload_id=upload_id, reason="the stored bundle file is missing")
        return []
    log.info(
        "upload %s done: %d runs created, %d already stored",
        upload_id,
        len(outcome.created),
        len(outcome.existing),
    )
    return outcome.run_ids


def uploads_recover_stuck(*, now=None) -> dict[str, list[int]]:
    """Requeue or fail uploads a dead worker left behind, so none stays processing forever."""
    now = now or timezone.now()
    limit = timedelta(seconds=settings.CELERY_TASK_TIME_LIMIT + 60)
    stuck = Upload.objects.filter(
        status=Upload.Status.PROCESSING, started_at__lt=now - limit
    ) | Upload.objects.filter(status=Upload.Status.QUEUED, created_at__lt=now - limit)
    requeued, failed = [], []
    for upload in stuck:
        if upload.attempts >= MAX_ATTEMPTS:
            upload_fail(
                upload_id=upload.pk,
                reason=f"ingest did not finish after {upload.attempts} attempts "
                "(the worker was killed or timed out); upload the bundle again or ask staff",
            )
            failed.append(upload.pk)
        else:
            queue.ingest_upload(upload_id=upload.pk)
            requeued.append(upload.pk)
    return {"requeued": requeued, "failed": failed}
