"""Uploads: accept a bundle, ingest it, fail it with a reason a person can act on.

Flow: ``upload_create`` stores the file and an Upload row (queued) and queues the ingest
task after commit (a broker that is down costs nothing: ``task_sent_at`` stays empty and the
recovery sweep queues it). ``upload_ingest`` (the task's body) reads, validates and parses
the bundle outside any transaction, then writes every run in ONE transaction that also
records the regression check it owes (``detection_due_at``), and queues that check after the
commit; the sweep re-queues a check still owed past its due time, so a worker killed between
the commit and the queueing delays detection, never loses it. It is safe to run twice: a
finished upload is left alone and identical runs are recognised by their fingerprint.

While it ingests, the worker's database session holds an advisory lock on the upload: an
upload ``processing`` whose lock nobody holds belongs to a dead worker, and the sweep
re-queues it at once instead of waiting for a time limit. Any exception ends the upload
``failed`` with a message naming the file and parser; only the transient errors of
``perfdb.operations.transient`` are left to the task to retry. The row's states are written
as plain SQL statements (the last section).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from datetime import datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any, BinaryIO

import sentry_sdk
from django.conf import settings
from django.core.files import File
from django.db import DatabaseError, IntegrityError, connection, transaction
from django.utils import timezone
from psycopg.types.json import Jsonb

from ingest import queue
from ingest.bundle import BundleError, IngestInternalError, bundle_parse, read_stored_bundle
from ingest.keys import BundleDataError
from ingest.manifest import ManifestError
from ingest.parsers import ParseError
from ingest.plan import PlanError
from ingest.writer import bundle_write
from perfdb.alerting import queue as alerting_queue
from perfdb.kernels import KernelVersionError
from perfdb.models import Upload
from perfdb.operations import log_context
from perfdb.operations.faults import pause_point
from perfdb.operations.transient import TRANSIENT_ERRORS

log = logging.getLogger(__name__)

# The namespace of the session advisory lock a worker holds on an upload while ingesting it.
INGEST_LOCK = 17
_TABLE = Upload._meta.db_table
_DONE, _FAILED = Upload.Status.DONE.value, Upload.Status.FAILED.value
_PROCESSING = Upload.Status.PROCESSING.value

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


def detection_deadline() -> timedelta:
    return timedelta(seconds=settings.FOLLOWUP_DEADLINE_SECONDS)


def ingest_queue(*, upload_id: int) -> bool:
    """Hand the ingest task to the broker; False (and logged) when the broker is unreachable:
    the recovery sweep sends it later, so the uploader still gets the upload's id."""
    try:
        queue.ingest_upload(upload_id=upload_id)
    except Exception as exc:  # kombu/redis connection errors, and anything else: never a 500
        log.warning("upload %s: could not queue ingest (%s); the sweep will", upload_id, exc)
        return False
    Upload.objects.filter(pk=upload_id).update(task_sent_at=timezone.now())
    return True


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
    if existing and existing.status == Upload.Status.FAILED:
        # Sent again after a failure: a new attempt (the parser may have been fixed).
        return upload_retry(upload_id=existing.pk), True
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
            transaction.on_commit(lambda: ingest_queue(upload_id=upload.pk))
    except IntegrityError:  # the same bundle uploaded concurrently
        return Upload.objects.get(sha256=sha), False
    log.info("upload %s created: %s (%d bytes) from %s", upload.pk, name, size, source)
    return upload, True


def upload_fail(*, upload_id: int, reason: str) -> None:
    Upload.objects.filter(pk=upload_id).exclude(status=Upload.Status.DONE).update(
        status=Upload.Status.FAILED, error=reason, finished_at=timezone.now()
    )
    log.warning("upload %s failed: %s", upload_id, reason.replace("\n", "; "))


def upload_fail_internal(*, upload_id: int, exc: BaseException, where: str = "") -> str:
    """Fail an upload on an unexpected error with a reference staff can look up: the request
    id, which every log line of the upload's request and tasks carries (the traceback's line
    too), and the Sentry event when Sentry is on. Returns the request id."""
    ref = log_context.request_id()
    if ref is None:  # called outside a request or a task (a shell): an id for this line
        ref = log_context.new_request_id()
    before = sentry_sdk.last_event_id()
    with log_context.bound(request_id=ref, upload_id=upload_id):
        # With Sentry on, its logging integration makes this line an event (a new last event
        # id; an unchanged one means it was not sent, and is not named).
        log.error("upload %s: internal error, reference %s %s", upload_id, ref, where, exc_info=exc)
    event = sentry_sdk.last_event_id()
    event = event if event != before else None
    where = where or "while ingesting"
    in_sentry = f"in Sentry as event {event} and " if event else ""
    upload_fail(
        upload_id=upload_id,
        reason=f"internal error {where}: {type(exc).__name__}; this is a bug on the server, "
        f"not in your bundle: staff can find it {in_sentry}in the log as reference {ref}",
    )
    return ref


def upload_retry(*, upload_id: int) -> Upload:
    """Send a failed upload through ingest again (the same stored bundle, a new attempt)."""
    with transaction.atomic():
        upload = Upload.objects.select_for_update().get(pk=upload_id)
        if upload.status == Upload.Status.FAILED:
            upload.status = Upload.Status.QUEUED
            upload.error = ""
            upload.attempts = 0
            upload.files_done = upload.files_total = 0
            upload.started_at = upload.finished_at = upload.task_sent_at = None
            upload.save()
            transaction.on_commit(lambda: ingest_queue(upload_id=upload_id))
            log.info("upload %s: sent again after a failure", upload_id)
    return upload


def upload_orphaned(upload_id: int) -> bool:
    """True when no live session holds the upload's ingest lock (its worker died)."""
    if not try_lock(upload_id):
        return False
    unlock(upload_id)
    return True


def upload_ingest(*, upload_id: int) -> list[int]:
    """Ingest one upload; returns the ids of its runs. Data errors fail the upload, other
    errors fail it with a reference, transient ones (``TRANSIENT_ERRORS``) are raised for the
    task to retry."""
    upload = claim(upload_id)
    if upload is None:
        log.info("upload %s already finished or taken; nothing to do", upload_id)
        return []
    log.info("upload %s: ingest attempt %d", upload_id, upload.attempts)
    try:
        return _ingest(upload)
    finally:
        unlock(upload_id)


def _ingest(upload: Upload) -> list[int]:
    """Read and parse the bundle outside any transaction, then write its runs and the
    upload's outcome in one."""
    upload_id = upload.pk
    try:
        bundle = read_stored_bundle(upload.file)  # local disk, or a copy from shared storage
        manifest, plan, warnings = bundle_parse(bundle, partial(progress, upload_id))
        with transaction.atomic():
            pause_point("ingest-writing")
            outcome = bundle_write(manifest=manifest, plan=plan, files=bundle.files, upload=upload)
            if not outcome.written:  # finished meanwhile: left as it is
                return outcome.run_ids
            series = sorted(outcome.touched_series)
            mark_done(
                upload_id,
                warnings=warnings + outcome.warnings,
                run_ids=outcome.run_ids,
                series=series,
                due_at=timezone.now() + detection_deadline() if series else None,
            )
    except DATA_ERRORS as exc:
        upload_fail(upload_id=upload_id, reason=str(exc))
        return []
    except FileNotFoundError:
        upload_fail(upload_id=upload_id, reason="the stored bundle file is missing")
        return []
    except TRANSIENT_ERRORS:
        raise  # the task retries these with backoff, then fails the upload
    except IngestInternalError as exc:
        upload_fail_internal(upload_id=upload_id, exc=exc.__cause__ or exc, where=str(exc))
        return []
    except DatabaseError as exc:  # DataError, IntegrityError…: the data broke a rule
        upload_fail(
            upload_id=upload_id,
            reason=f"the database refused this bundle's data while storing its runs: "
            f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}",
        )
        return []
    except Exception as exc:
        upload_fail_internal(upload_id=upload_id, exc=exc, where="while storing the runs")
        return []
    pause_point("ingest-committed")
    if series:
        try:
            alerting_queue.regressions_check(upload_id=upload_id, series=series)
        except Exception as exc:  # the mark is committed: the sweep queues it
            log.warning("upload %s: could not queue the regression check (%s)", upload_id, exc)
    log.info(
        "upload %s done: %d runs created, %d already stored",
        upload_id,
        len(outcome.created),
        len(outcome.existing),
    )
    return outcome.run_ids


# --- the upload's row, in SQL -----------------------------------------------------------------
# Its states (claimed, its progress, done with its outcome) and the session lock its worker
# holds meanwhile. The statements are the same on every upload, whatever its size. Through
# the ORM each cost 0.4-0.8 ms of CPU to compile (a 100k-sample upload's whole ingest is
# about 45 ms, its raw COPY 22 ms); here each is one short statement: the claim takes the
# lock and moves the row in one. The row lock the writing transaction takes first is the
# writer's (ingest/writer.py), with the earlier runs a re-ingest replaces. The values stored
# are those the ORM stored: the same columns, timestamps from ``timezone.now()``, JSON
# through ``Jsonb``.


def try_lock(upload_id: int) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", (INGEST_LOCK, upload_id))
        return bool(cursor.fetchone()[0])


def unlock(upload_id: int) -> None:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s, %s)", (INGEST_LOCK, upload_id))
    except DatabaseError:  # the session is gone, and its lock with it
        pass


def claim(upload_id: int) -> Upload | None:
    """Lock the upload for this session and mark it processing, counting its attempt; None
    when another live worker holds it or it is finished already (a duplicate delivery),
    and then no lock is kept. The caller releases the lock of an upload returned
    (``unlock``)."""
    try:
        locked, upload = _claim(upload_id)
    except BaseException:  # the lock may have been taken: a session lock outlives an error
        unlock(upload_id)
        raise
    if not locked:
        log.info("upload %s: another worker is ingesting it", upload_id)
    elif upload is None:  # finished already: the lock is not kept
        unlock(upload_id)
    return upload


def _claim(upload_id: int) -> tuple[bool, Upload | None]:
    """Take the upload's session lock and, only if it was free, mark the upload processing
    and count its attempt unless it is finished: one statement in autocommit (the lock is
    a materialized CTE the UPDATE's condition reads, so it is taken once, before any row
    is moved, and two deliveries never both count an attempt). Returns whether the lock was
    taken, and the upload moved (its id, file and attempts, the other fields deferred) or
    None when it is finished already or gone."""
    with connection.cursor() as cursor:
        cursor.execute(
            "WITH locked AS MATERIALIZED (SELECT pg_try_advisory_lock(%s, %s) AS got), "
            f"moved AS (UPDATE {_TABLE} SET status = %s, started_at = %s, "
            "attempts = attempts + 1 WHERE id = %s AND status NOT IN (%s, %s) "
            "AND (SELECT got FROM locked) RETURNING id, file, attempts) "
            "SELECT locked.got, moved.id, moved.file, moved.attempts "
            "FROM locked LEFT JOIN moved ON true",
            (INGEST_LOCK, upload_id, _PROCESSING, timezone.now(), upload_id, _DONE, _FAILED),
        )
        got, *row = cursor.fetchone()
    if not got or row[0] is None:
        return bool(got), None
    return True, Upload.from_db(connection.alias, ["id", "file", "attempts"], row)


def progress(upload_id: int, done: int, total: int) -> None:
    """How many of the bundle's files are parsed, shown while it ingests."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {_TABLE} SET files_done = %s, files_total = %s WHERE id = %s",
            (done, total, upload_id),
        )


def mark_done(
    upload_id: int,
    *,
    warnings: Sequence[str],
    run_ids: Sequence[int],
    series: Sequence[tuple[int, int]],
    due_at: datetime | None,
) -> None:
    """The ingest's outcome on the row the writer locked, with the regression check its
    commit owes (cleared by the check, swept if it is lost)."""
    params: list[Any] = [
        _DONE,
        Jsonb(list(warnings)),
        list(run_ids),
        timezone.now(),
        Jsonb([list(s) for s in series]),
        due_at,
        upload_id,
    ]
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {_TABLE} SET status = %s, error = '', warnings = %s, "
            "run_ids = %s::bigint[], finished_at = %s, detection_series = %s, "
            "detection_due_at = %s WHERE id = %s",
            params,
        )
